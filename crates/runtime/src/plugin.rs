//! One loaded plugin: its compiled component, what kind it is, what it lists, and its calls
//! (run by [`Runner`](crate::run::Runner), dispatched by [`Kind`]).

use std::sync::Arc;

use crate::bindings::{completion, prompts, resources, tools, types};
use crate::call::CallContext;
use crate::error::{CallError, LoadError};
use crate::generic::GenericTools;
use crate::kind::{Contract, Exports, Kind, Wasmcp};
use crate::link::{Prepared, prepare};
use crate::run::Runner;
use crate::runtime::Runtime;
use crate::sandbox::{Grants, Root};
use crate::secrets::Redactor;
use crate::spec::{PluginSpec, RootsAccess};
use crate::tls::TlsTrust;

/// A plugin ready to serve: instantiation is pre-linked, so each call only creates an instance.
pub struct Plugin {
    /// The plugin's name, in logs, errors and limits.
    pub name: Arc<str>,
    /// What it was loaded with: the component, its grants and limits.
    pub spec: PluginSpec,
    /// SHA-256 of the component file, to tell whether a changed file is a new version (of the
    /// composed component, for a plugin with links).
    pub wasm_sha256: [u8; 32],
    /// What it listed when loaded. Resources with fixed URIs are listed again on every
    /// `resources/list`; the rest only changes with a new version of the plugin.
    pub tools: Vec<tools::Tool>,
    /// The resources it listed at load.
    pub resources: Vec<resources::Resource>,
    /// The resource templates it listed at load.
    pub templates: Vec<resources::ResourceTemplate>,
    /// The prompts it listed at load.
    pub prompts: Vec<prompts::Prompt>,
    /// The prompts and templates whose arguments it completes.
    pub completable: Vec<completion::CompletionRef>,
    kind: Kind,
    /// The granted directories, resolved once: the `file://` URIs this plugin may serve.
    file_dirs: Vec<std::path::PathBuf>,
    runner: Runner,
}

impl Plugin {
    /// What the component imports, each with what the sandbox gives it for that import (what
    /// `palisade inspect` says), in the component's order.
    pub fn imports(&self) -> Vec<(String, String)> {
        let component = self.runner.factory.pre.component();
        let engine = component.engine();
        component
            .component_type()
            .imports(engine)
            .map(|(name, item)| {
                let status = crate::link::import_status(engine, name, &item.ty, &self.spec);
                (name.to_string(), status)
            })
            .collect()
    }

    /// What its limits hold now: calls and fuel left, calls running.
    pub fn budget(&self) -> crate::gate::Budget {
        self.runner.budget()
    }

    /// What it used of what it may reach, across its calls.
    pub fn usage(&self) -> &crate::usage::GrantUsage {
        &self.runner.factory.grants.usage
    }

    /// What kind of component it is.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Which `palisade:plugin` interfaces it exports.
    pub fn exports(&self) -> Exports {
        self.kind.exports()
    }

    /// For a component without `palisade:plugin` exports: the functions served as tools.
    pub fn generic(&self) -> Option<&GenericTools> {
        match &self.kind {
            Kind::Generic(generic) => Some(&generic.tools),
            _ => None,
        }
    }

    /// For a wasmcp tools component: the adapter's view of it.
    pub fn wasmcp(&self) -> Option<&Wasmcp> {
        match &self.kind {
            Kind::Wasmcp(adapter) => Some(adapter),
            _ => None,
        }
    }

    /// Bytes of its resource templates: matching a URI against them costs about this many
    /// steps per URI byte.
    pub fn template_bytes(&self) -> u64 {
        self.runner.template_bytes()
    }

    /// Refuses a directory grant that holds the compile cache or lies inside it: the plugin
    /// could write native code the server runs. Checked at every load, and by the server
    /// before it starts.
    pub fn check_grants_miss_cache(runtime: &Runtime, spec: &PluginSpec) -> Result<(), LoadError> {
        match spec.dirs.iter().find(|d| runtime.cache.overlaps(&d.host)) {
            Some(dir) => Err(LoadError::GrantReachesCache {
                plugin: spec.name.clone(),
                host: dir.host.clone(),
                guest: dir.guest.clone(),
                cache: runtime.cache.dir().to_path_buf(),
            }),
            None => Ok(()),
        }
    }

    /// Compiles (or loads from the cache), links and introspects the plugin of `spec`.
    pub async fn load(runtime: &Runtime, spec: PluginSpec) -> Result<Plugin, LoadError> {
        // Reading, hashing, compiling and linking take milliseconds to seconds of CPU: off the
        // threads that serve requests (a reload happens while they serve).
        let Prepared {
            wasm_sha256,
            pre,
            docs,
        } = {
            let to_prepare = spec.clone();
            let (engine, cache) = (runtime.engine.clone(), runtime.cache.clone());
            tokio::task::spawn_blocking(move || prepare(&engine, &cache, &to_prepare))
                .await
                .map_err(|_| LoadError::Panicked {
                    plugin: spec.name.clone(),
                })??
        };
        let kind = Kind::of(&spec, &pre, docs.as_ref())?;
        Plugin::check_grants_miss_cache(runtime, &spec)?;
        let grants = Arc::new(Grants {
            dirs: spec.dirs.clone(),
            roots: spec.roots,
            env: spec.env.clone(),
            config: spec.config.clone(),
            secrets: spec.secrets.clone(),
            redactor: Redactor::new(&spec.secrets),
            network: spec.network.clone().into(),
            tls: TlsTrust::with_ca_files(&spec.ca_files).map_err(|source| LoadError::Trust {
                plugin: spec.name.clone(),
                source,
            })?,
            hidden: Arc::new([runtime.cache.dir().to_path_buf()]),
            usage: Arc::default(),
        });
        let keyvalue = spec
            .keyvalue
            .as_ref()
            .map(|grant| runtime.keyvalue_stores.open(grant))
            .transpose()
            .map_err(|e| LoadError::KeyValue {
                plugin: spec.name.clone(),
                source: e.into(),
            })?;
        let file_dirs = spec
            .dirs
            .iter()
            .map(|d| std::fs::canonicalize(&d.host).unwrap_or_else(|_| d.host.clone()))
            .collect();
        let mut runner = Runner::new(runtime, &spec, grants, keyvalue, pre);
        let listing = kind.list(&runner).await.map_err(|why| LoadError::Listing {
            plugin: spec.name.clone(),
            why,
        })?;
        runner.set_template_bytes(
            (listing.templates.iter())
                .map(|t| t.uri_template.len() as u64)
                .sum(),
        );
        Ok(Plugin {
            name: runner.name.clone(),
            spec,
            wasm_sha256,
            tools: listing.tools,
            resources: listing.resources,
            templates: listing.templates,
            prompts: listing.prompts,
            completable: listing.completable,
            kind,
            file_dirs,
            runner,
        })
    }

    /// The host file behind `guest_path` as this plugin sees it with `roots`, if granted.
    pub fn host_path(&self, guest_path: &str, roots: &[Root]) -> Option<std::path::PathBuf> {
        self.runner.grants.host_path(guest_path, roots)
    }

    /// Whether this plugin may serve the `file://` URI `uri`: its path lies in a directory the
    /// plugin is granted. A plugin granted the client's roots may serve any: roots can be
    /// anywhere, and differ from client to client.
    pub fn may_serve_file_uri(&self, uri: &str) -> bool {
        if self.spec.roots != RootsAccess::None {
            return true;
        }
        let Some(path) = url::Url::parse(uri)
            .ok()
            .and_then(|u| u.to_file_path().ok())
        else {
            return false;
        };
        self.file_dirs.iter().any(|dir| path.starts_with(dir))
    }

    /// Calls the tool `name` (the plugin's own name) with `arguments` (JSON text) in a fresh
    /// instance.
    pub async fn call_tool(
        &self,
        name: String,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        let outcome = self
            .kind
            .call_tool(&self.runner, name, arguments, call)
            .await;
        let redactor = &self.runner.grants.redactor;
        if redactor.is_empty() {
            return outcome;
        }
        match outcome {
            Ok(mut result) => {
                redact_result(redactor, &mut result);
                Ok(result)
            }
            Err(CallError::Plugin(mut e)) => {
                redactor.redact_in_place(&mut e.message);
                Err(CallError::Plugin(e))
            }
            Err(other) => Err(other),
        }
    }

    /// Lists the resources with fixed URIs, as they are now.
    pub async fn list_resources(
        &self,
        call: CallContext,
    ) -> Result<Vec<resources::Resource>, CallError> {
        self.contract()?.list_resources(&self.runner, call).await
    }

    /// Reads the resource at `uri`.
    pub async fn read_resource(
        &self,
        uri: String,
        call: CallContext,
    ) -> Result<Vec<types::ResourceContents>, CallError> {
        self.contract()?
            .read_resource(&self.runner, uri, call)
            .await
    }

    /// Fills in the prompt `name` (the plugin's own name).
    pub async fn get_prompt(
        &self,
        name: String,
        arguments: Vec<(String, String)>,
        call: CallContext,
    ) -> Result<prompts::PromptResult, CallError> {
        self.contract()?
            .get_prompt(&self.runner, name, arguments, call)
            .await
    }

    /// Suggests values for an argument of a prompt or resource template.
    pub async fn complete(
        &self,
        target: completion::CompletionRef,
        argument: (String, String),
        context: Vec<(String, String)>,
        call: CallContext,
    ) -> Result<completion::CompletionResult, CallError> {
        self.contract()?
            .complete(&self.runner, target, argument, context, call)
            .await
    }

    /// The contract it exports, for the calls only a contract has.
    fn contract(&self) -> Result<&Contract, CallError> {
        match &self.kind {
            Kind::Contract(contract) => Ok(contract),
            _ => Err(CallError::Stopped(format!(
                "plugin `{}` failed: the plugin does not export this function",
                self.name
            ))),
        }
    }
}

/// Hides the plugin's secrets in what its tool answered for the model: text, embedded text
/// and structured content. (Errors and logs are redacted where they are made.)
fn redact_result(redactor: &Redactor, result: &mut tools::CallResult) {
    for block in &mut result.content {
        match block {
            types::ContentBlock::Text(text) => redactor.redact_in_place(&mut text.text),
            types::ContentBlock::EmbeddedResource(embedded) => {
                if let types::ResourceBody::Text(text) = &mut embedded.resource.body {
                    redactor.redact_in_place(text);
                }
            }
            _ => {}
        }
    }
    if let Some(json) = &mut result.structured_content {
        redactor.redact_in_place(json);
    }
}
