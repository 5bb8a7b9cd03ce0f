//! One loaded plugin: its compiled component, what it exports, and calls into fresh instances.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use futures_util::FutureExt as _;
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, ComponentType, Instance, InstancePre,
    Lift, Lower, Val,
};
use wasmtime::{Store, UpdateDeadline};

use super::Runtime;
use super::bindings::{completion, prompts, resources, tools, types};
use super::call::CallContext;
use super::gate::Gate;
use super::generic::types::Signature;
use super::generic::{GenericFunc, GenericTools, NameCollision, val, value};
use super::grant_ask::CallClock;
use super::http_handler;
use super::limits::{LimitExceeded, MemoryLimiter, describe_failure, limit_hit};
use super::link::{Prepared, prepare};
use super::output::{OutputSize, within_limit};
use super::reuse::{KeptInstances, Live};
use super::sandbox::{Grants, OutputCapture, wasi_context};
use super::secrets::Redactor;
use super::store::{Sandbox, StoreState};
use super::tls::TlsTrust;
use super::wasmcp::{self, Wasmcp};
use crate::{LoadError, PluginSpec, Reuse, RootsAccess};
use tokio::sync::{OwnedSemaphorePermit, TryAcquireError};
use wasmtime_wasi_http::p2::bindings::ProxyIndices;

/// The next [`Plugin::id`].
static NEXT_PLUGIN_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Which `palisade:plugin` interfaces a component exports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exports {
    /// `palisade:plugin/tools`.
    pub tools: bool,
    /// `palisade:plugin/resources`.
    pub resources: bool,
    /// `palisade:plugin/prompts`.
    pub prompts: bool,
    /// `palisade:plugin/completion`.
    pub completion: bool,
}

/// Why a call into a plugin gave no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The plugin answered with an error of its own.
    #[error("{}", .0.message)]
    Plugin(types::PluginError),
    /// The plugin was stopped: a limit, a trap, a panic. The message says which, for the caller.
    #[error("{0}")]
    Stopped(String),
    /// A limit refused the call or stopped it; the message says which and when to retry.
    #[error("plugin `{0}` {1}")]
    Limit(Arc<str>, LimitExceeded),
    /// The host could not run the call (for example a granted directory is gone).
    #[error("{0:#}")]
    Host(anyhow::Error),
}

/// A plugin ready to serve: instantiation is pre-linked, so each call only creates an instance.
pub struct Plugin {
    /// The plugin's name, in logs, errors and limits.
    pub name: Arc<str>,
    /// What it was loaded with: the component, its grants and limits.
    pub spec: PluginSpec,
    /// Which interfaces the component exports.
    pub exports: Exports,
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
    /// Bytes of those templates: what matching one of its resource updates costs per URI byte.
    template_bytes: u64,
    /// The prompts it listed at load.
    pub prompts: Vec<prompts::Prompt>,
    /// The prompts and templates whose arguments it completes.
    pub completable: Vec<completion::CompletionRef>,
    /// For a component without `palisade:plugin` exports: the functions served as tools.
    pub generic: Option<Arc<GenericTools>>,
    keyvalue: Option<Arc<super::keyvalue::KeyValueStore>>,
    /// `http_handler = true`: where its `wasi:http/incoming-handler` is.
    http_handler: Option<Arc<ProxyIndices>>,
    /// For a wasmcp tools component: its `list-tools` and `call-tool`.
    pub wasmcp: Option<Arc<Wasmcp>>,
    grants: Arc<Grants>,
    /// The granted directories, resolved once: the `file://` URIs this plugin may serve.
    file_dirs: Vec<std::path::PathBuf>,
    gate: Arc<Gate>,
    instance_slots: Arc<tokio::sync::Semaphore>,
    metering: super::Metering,
    /// Instances kept between calls, shared by every plugin.
    kept: Arc<KeptInstances>,
    /// Tells this loaded plugin's kept instances from those of an earlier version.
    id: u64,
    pre: InstancePre<StoreState>,
    funcs: Funcs,
}

/// Where each function of the contract is in the component, for the interfaces it exports.
#[derive(Clone, Copy, Default)]
struct Funcs {
    list_tools: Option<ComponentExportIndex>,
    call_tool: Option<ComponentExportIndex>,
    list_resources: Option<ComponentExportIndex>,
    list_resource_templates: Option<ComponentExportIndex>,
    read_resource: Option<ComponentExportIndex>,
    list_prompts: Option<ComponentExportIndex>,
    get_prompt: Option<ComponentExportIndex>,
    completable: Option<ComponentExportIndex>,
    complete: Option<ComponentExportIndex>,
}

impl Funcs {
    fn of(component: &Component, exports: Exports) -> Funcs {
        let func = |exported: bool, interface: &str, name: &str| {
            if !exported {
                return None;
            }
            let interface = component.get_export_index(None, interface)?;
            component.get_export_index(Some(&interface), name)
        };
        const TOOLS: &str = "palisade:plugin/tools@0.1.0";
        const RESOURCES: &str = "palisade:plugin/resources@0.1.0";
        const PROMPTS: &str = "palisade:plugin/prompts@0.1.0";
        const COMPLETION: &str = "palisade:plugin/completion@0.1.0";
        Funcs {
            list_tools: func(exports.tools, TOOLS, "list-tools"),
            call_tool: func(exports.tools, TOOLS, "call-tool"),
            list_resources: func(exports.resources, RESOURCES, "list-resources"),
            list_resource_templates: func(exports.resources, RESOURCES, "list-resource-templates"),
            read_resource: func(exports.resources, RESOURCES, "read-resource"),
            list_prompts: func(exports.prompts, PROMPTS, "list-prompts"),
            get_prompt: func(exports.prompts, PROMPTS, "get-prompt"),
            completable: func(exports.completion, COMPLETION, "completable"),
            complete: func(exports.completion, COMPLETION, "complete"),
        }
    }
}

/// Calls the export `func` with `params` in `instance`: its answer, if within the output limit.
/// (What lifting it may copy is bounded by the store's hostcall fuel, `copy_bound.rs`.)
async fn call_export<P, V>(
    store: &mut Store<StoreState>,
    instance: &Instance,
    func: &Option<ComponentExportIndex>,
    params: P,
) -> wasmtime::Result<V>
where
    P: ComponentNamedList + Lower + Send + Sync + 'static,
    V: ComponentType + Lift + OutputSize + Send + Sync + 'static,
{
    let func = func
        .as_ref()
        .ok_or_else(|| wasmtime::format_err!("the plugin does not export this function"))?;
    let typed = instance.get_typed_func::<P, (V,)>(&mut *store, func)?;
    let (answer,) = typed.call_async(&mut *store, params).await?;
    Ok(within_limit(answer, store.data().output_limit)?)
}

/// Everything a plugin lists, read at load in a single instance.
#[derive(Default)]
struct Listing {
    tools: Vec<tools::Tool>,
    resources: Vec<resources::Resource>,
    templates: Vec<resources::ResourceTemplate>,
    prompts: Vec<prompts::Prompt>,
    completable: Vec<completion::CompletionRef>,
}

impl Plugin {
    /// Bytes of its resource templates: matching a URI against them costs about this many
    /// steps per URI byte.
    pub fn template_bytes(&self) -> u64 {
        self.template_bytes
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
        let name: Arc<str> = spec.name.as_str().into();
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
        let exports = Exports {
            tools: tools::GuestIndices::new(&pre).is_ok(),
            resources: resources::GuestIndices::new(&pre).is_ok(),
            prompts: prompts::GuestIndices::new(&pre).is_ok(),
            completion: completion::GuestIndices::new(&pre).is_ok(),
        };
        let funcs = Funcs::of(pre.component(), exports);
        let http_handler = if spec.http_handler {
            let indices = ProxyIndices::new(&pre).map_err(|_| LoadError::NoHttpHandler {
                plugin: spec.name.clone(),
            })?;
            if exports != Exports::default() {
                return Err(LoadError::NoHttpHandler {
                    plugin: spec.name.clone(),
                });
            }
            Some(Arc::new(indices))
        } else {
            None
        };
        // A wasmcp tools component: its own list-tools and call-tool, through the adapter.
        let adapter = match Wasmcp::find(&runtime.engine, pre.component()) {
            Some(Ok(adapter)) if exports == Exports::default() && !spec.http_handler => {
                Some(Arc::new(adapter))
            }
            Some(Err(why)) => {
                return Err(LoadError::Wasmcp {
                    plugin: spec.name.clone(),
                    why,
                });
            }
            _ => None,
        };
        // A component without `palisade:plugin` exports: its functions are the tools.
        let generic = if exports == Exports::default() && adapter.is_none() {
            let found = GenericTools::discover(&runtime.engine, pre.component(), docs.as_ref())
                .map_err(|collision| LoadError::ToolNameCollision {
                    plugin: spec.name.clone(),
                    collision,
                })?;
            for skipped in &found.skipped {
                tracing::info!(
                    plugin = &*name,
                    "`{}` is not served as a tool: {}",
                    skipped.path,
                    skipped.why
                );
            }
            if let Some(clash) = found
                .get(http_handler::TOOL)
                .filter(|_| http_handler.is_some())
            {
                return Err(LoadError::ToolNameCollision {
                    plugin: spec.name.clone(),
                    collision: NameCollision {
                        name: http_handler::TOOL.into(),
                        first: clash.path(),
                        second: "wasi:http/incoming-handler (http_handler = true)".into(),
                    },
                });
            }
            if found.funcs.is_empty() && http_handler.is_none() {
                return Err(LoadError::NoExports {
                    plugin: spec.name.clone(),
                    path: spec.path.clone(),
                    skipped: found.skipped,
                });
            }
            Some(Arc::new(found))
        } else {
            None
        };
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
        });
        let gate = runtime.gates.for_plugin(&name, &spec.limits);
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
        let mut plugin = Plugin {
            name,
            spec,
            exports,
            wasm_sha256,
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            template_bytes: 0,
            prompts: Vec::new(),
            completable: Vec::new(),
            generic,
            http_handler,
            wasmcp: adapter,
            keyvalue,
            grants,
            file_dirs,
            gate,
            instance_slots: runtime.instance_slots.clone(),
            metering: runtime.metering,
            kept: runtime.kept.clone(),
            id: NEXT_PLUGIN_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            pre,
            funcs,
        };
        let listing = plugin
            .list_everything()
            .await
            .map_err(|why| LoadError::Listing {
                plugin: plugin.name.to_string(),
                why,
            })?;
        plugin.tools = match &plugin.generic {
            Some(generic) => generic.funcs.iter().map(GenericFunc::tool).collect(),
            None => listing.tools,
        };
        if plugin.http_handler.is_some() {
            plugin.tools.push(http_handler::tool());
        }
        if let Some(adapter) = plugin.wasmcp.clone() {
            plugin.tools =
                plugin
                    .list_wasmcp_tools(&adapter)
                    .await
                    .map_err(|why| LoadError::Listing {
                        plugin: plugin.name.to_string(),
                        why,
                    })?;
        }
        plugin.resources = listing.resources;
        plugin.templates = listing.templates;
        plugin.template_bytes = (plugin.templates.iter())
            .map(|t| t.uri_template.len() as u64)
            .sum();
        plugin.prompts = listing.prompts;
        plugin.completable = listing.completable;
        Ok(plugin)
    }

    /// The host file behind `guest_path` as this plugin sees it with `roots`, if granted.
    pub fn host_path(
        &self,
        guest_path: &str,
        roots: &[super::sandbox::Root],
    ) -> Option<std::path::PathBuf> {
        self.grants.host_path(guest_path, roots)
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

    /// Every list the plugin's exports offer, from one instance.
    async fn list_everything(&self) -> Result<Listing, CallError> {
        let funcs = self.funcs;
        self.run(CallContext::default(), async move |store, instance| {
            let mut listing = Listing::default();
            if funcs.list_tools.is_some() {
                listing.tools =
                    call_export::<(), Vec<tools::Tool>>(store, instance, &funcs.list_tools, ())
                        .await?;
            }
            if funcs.list_resources.is_some() {
                listing.resources = call_export::<(), Vec<resources::Resource>>(
                    store,
                    instance,
                    &funcs.list_resources,
                    (),
                )
                .await?;
                listing.templates = call_export::<(), Vec<resources::ResourceTemplate>>(
                    store,
                    instance,
                    &funcs.list_resource_templates,
                    (),
                )
                .await?;
            }
            if funcs.list_prompts.is_some() {
                listing.prompts = call_export::<(), Vec<prompts::Prompt>>(
                    store,
                    instance,
                    &funcs.list_prompts,
                    (),
                )
                .await?;
            }
            if funcs.completable.is_some() {
                listing.completable = call_export::<(), Vec<completion::CompletionRef>>(
                    store,
                    instance,
                    &funcs.completable,
                    (),
                )
                .await?;
            }
            Ok(listing)
        })
        .await
    }

    /// Calls the tool `name` (the plugin's own name) with `arguments` (JSON text) in a fresh
    /// instance.
    pub async fn call_tool(
        &self,
        name: String,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        let outcome = self.call_tool_as_answered(name, arguments, call).await;
        let redactor = &self.grants.redactor;
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

    /// [`call_tool`](Plugin::call_tool)'s answer, before the plugin's secrets are hidden in it.
    async fn call_tool_as_answered(
        &self,
        name: String,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        if let Some(indices) = self
            .http_handler
            .clone()
            .filter(|_| name == http_handler::TOOL)
        {
            return self.call_http_handler(indices, &arguments, call).await;
        }
        if let Some(generic) = &self.generic {
            return self.call_generic(generic, &name, &arguments, call).await;
        }
        if let Some(adapter) = &self.wasmcp {
            return self.call_wasmcp(adapter, &name, arguments, call).await;
        }
        self.call_fallible::<_, tools::CallResult>(call, self.funcs.call_tool, (name, arguments))
            .await
    }

    /// Calls the export at `export`, of type `signature`, with `args` (values of its
    /// parameters' types) in a fresh instance, through wasmtime's dynamic values: its result,
    /// if within the output limit.
    async fn call_dynamic(
        &self,
        call: CallContext,
        export: ComponentExportIndex,
        signature: &Signature,
        args: Vec<value::Value>,
    ) -> Result<Option<value::Value>, CallError> {
        if args.len() != signature.params.len() {
            return Err(CallError::Host(anyhow::anyhow!(
                "{} arguments for {} parameters",
                args.len(),
                signature.params.len()
            )));
        }
        let params = (signature.params.iter().zip(&args))
            .map(|((_, ty), value)| val::to_val(ty, value))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CallError::Host(e.into()))?;
        self.run(call, async move |store, instance| {
            let func = instance
                .get_func(&mut *store, export)
                .ok_or_else(|| wasmtime::format_err!("the plugin does not export this function"))?;
            let mut results = vec![Val::Bool(false); usize::from(signature.result.is_some())];
            func.call_async(&mut *store, &params, &mut results).await?;
            let (Some(ty), Some(result)) = (&signature.result, results.pop()) else {
                return Ok(None);
            };
            let value = val::from_val(ty, result)?;
            Ok(Some(within_limit(value, store.data().output_limit)?))
        })
        .await
    }

    /// Every tool a wasmcp component lists, page by page.
    async fn list_wasmcp_tools(&self, adapter: &Wasmcp) -> Result<Vec<tools::Tool>, CallError> {
        let endpoint = &adapter.list_tools;
        let mut listed = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..wasmcp::MAX_PAGES {
            let args = adapter
                .arguments(endpoint, serde_json::json!({ "cursor": cursor }))
                .map_err(CallError::Stopped)?;
            let result = self
                .call_dynamic(
                    CallContext::default(),
                    endpoint.export,
                    &endpoint.signature,
                    args,
                )
                .await?;
            let (page, next) = wasmcp::tools_page(endpoint, result)
                .map_err(|why| CallError::Stopped(format!("list-tools: {why}")))?;
            listed.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(listed),
            }
        }
        Err(CallError::Stopped(format!(
            "list-tools: more than {} pages",
            wasmcp::MAX_PAGES
        )))
    }

    /// Calls the tool `name` of a wasmcp component through its `call-tool`.
    async fn call_wasmcp(
        &self,
        adapter: &Wasmcp,
        name: &str,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        let endpoint = &adapter.call_tool;
        let args = adapter
            .arguments(
                endpoint,
                serde_json::json!({"name": name, "arguments": arguments}),
            )
            .map_err(CallError::Stopped)?;
        let result = self
            .call_dynamic(call, endpoint.export, &endpoint.signature, args)
            .await?;
        wasmcp::call_result(endpoint, name, result)
            .map_err(|message| plugin_error(types::ErrorCode::Internal, message))
    }

    /// Hands the request the `request` tool's arguments describe to the component's
    /// `wasi:http/incoming-handler`.
    async fn call_http_handler(
        &self,
        indices: Arc<ProxyIndices>,
        arguments: &str,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        let invalid = |message| plugin_error(types::ErrorCode::InvalidParams, message);
        let arguments = json_arguments(arguments)?;
        let request = http_handler::request(&arguments).map_err(invalid)?;
        let limit = self.spec.limits.output_bytes;
        self.run(call, async move |store, instance| {
            http_handler::handle(store, instance, &indices, request, limit).await
        })
        .await
    }

    /// Calls the exported function behind the tool `name` of a generic component.
    async fn call_generic(
        &self,
        generic: &GenericTools,
        name: &str,
        arguments: &str,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        let func = generic
            .get(name)
            .ok_or_else(|| plugin_error(types::ErrorCode::NotFound, format!("no tool `{name}`")))?;
        let arguments = json_arguments(arguments)?;
        let args = value::arguments(&func.signature.params, &arguments).map_err(|e| {
            plugin_error(
                types::ErrorCode::InvalidParams,
                format!("invalid arguments: {e}"),
            )
        })?;
        let result = self
            .call_dynamic(call, func.export(), &func.signature, args)
            .await?;
        Ok(func.render(result))
    }

    /// Lists the resources with fixed URIs, as they are now.
    pub async fn list_resources(
        &self,
        call: CallContext,
    ) -> Result<Vec<resources::Resource>, CallError> {
        let func = self.funcs.list_resources;
        self.run(call, async move |store, instance| {
            call_export::<(), Vec<resources::Resource>>(store, instance, &func, ()).await
        })
        .await
    }

    /// Reads the resource at `uri`.
    pub async fn read_resource(
        &self,
        uri: String,
        call: CallContext,
    ) -> Result<Vec<types::ResourceContents>, CallError> {
        self.call_fallible::<_, Vec<types::ResourceContents>>(
            call,
            self.funcs.read_resource,
            (uri,),
        )
        .await
    }

    /// Fills in the prompt `name` (the plugin's own name).
    pub async fn get_prompt(
        &self,
        name: String,
        arguments: Vec<(String, String)>,
        call: CallContext,
    ) -> Result<prompts::PromptResult, CallError> {
        self.call_fallible::<_, prompts::PromptResult>(
            call,
            self.funcs.get_prompt,
            (name, arguments),
        )
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
        let params = (target, argument.0, argument.1, context);
        self.call_fallible::<_, completion::CompletionResult>(call, self.funcs.complete, params)
            .await
    }

    /// Calls an export that answers `result<V, plugin-error>` in a fresh instance; the plugin's
    /// own error becomes [`CallError::Plugin`].
    async fn call_fallible<P, V>(
        &self,
        call: CallContext,
        func: Option<ComponentExportIndex>,
        params: P,
    ) -> Result<V, CallError>
    where
        P: ComponentNamedList + Lower + Send + Sync + 'static,
        V: ComponentType + Lift + OutputSize + Send + Sync + 'static,
    {
        self.run(call, async move |store, instance| {
            call_export::<P, Result<V, types::PluginError>>(store, instance, &func, params).await
        })
        .await?
        .map_err(|mut e| {
            self.grants.redactor.redact_in_place(&mut e.message);
            CallError::Plugin(e)
        })
    }

    /// Runs `f` against an instance under every limit of the plugin: a fresh one, or with
    /// `reuse = "per-client"` the one kept for this client.
    async fn run<R>(
        &self,
        call: CallContext,
        f: impl AsyncFnOnce(&mut Store<StoreState>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        let limits = self.spec.limits;
        let entered = Instant::now();
        // Clients' calls pass the plugin's gate; the host's own (listing at load) do not.
        let admission = match &call.caller {
            Some(client) => Some(
                self.gate
                    .admit(client)
                    .await
                    .map_err(|limit| CallError::Limit(self.name.clone(), limit))?,
            ),
            None => None,
        };
        let deadline = Instant::now() + Duration::from_millis(limits.timeout_ms);
        let time_limit = || {
            CallError::Limit(
                self.name.clone(),
                LimitExceeded::Time {
                    limit_ms: limits.timeout_ms,
                },
            )
        };
        let stats = call.stats.clone();
        let clock = Arc::new(CallClock::new(deadline));
        let reuse_for = match self.spec.reuse {
            Reuse::PerClient { .. } => call.reuse_key.clone(),
            Reuse::Never => None,
        };
        let kept = reuse_for
            .as_deref()
            .and_then(|client| self.kept.take(self.id, client, &call.roots));
        let reused = kept.is_some();
        let mut live = match kept {
            Some(mut live) => {
                live.store
                    .data_mut()
                    .begin_call(call, self.spec.ask, clock.clone());
                live
            }
            None => {
                let slot = self.instance_slot(deadline).await?.ok_or_else(time_limit)?;
                self.new_store(call, clock.clone(), slot)?
            }
        };
        stats.instance_wait_us.store(
            entered.elapsed().as_micros().min(u64::MAX as u128) as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        stats
            .reused_instance
            .store(reused, std::sync::atomic::Ordering::Relaxed);
        let store = &mut live.store;
        if self.metering == super::Metering::Fuel {
            store
                .set_fuel(limits.fuel_per_call)
                .map_err(|e| CallError::Host(e.into()))?;
        }
        // Every epoch tick: stop if past the deadline, else yield so other calls (and a
        // cancellation, which drops this future) get their turn.
        store.set_epoch_deadline(1);

        let started = Instant::now();
        let run = async {
            let instance = match live.instance {
                Some(instance) => instance,
                None => *live
                    .instance
                    .insert(self.pre.instantiate_async(&mut live.store).await?),
            };
            f(&mut live.store, &instance).await
        };
        // The epoch check only fires while wasm runs; the timeout bounds time spent in host calls
        // too. It is armed only for a call that does not finish in its first poll: most finish
        // there, and a new timer that is the runtime's earliest makes tokio wake the thread
        // parked on its timer driver, a context switch on every call.
        let outcome = {
            let mut run = std::pin::pin!(run);
            match (&mut run).now_or_never() {
                Some(done) => Some(done),
                None => until_deadline(run, &clock).await,
            }
        };
        live.stdout.finish();
        let stderr_tail = live.stderr.finish();
        let fuel_used = match self.metering {
            super::Metering::Fuel => limits
                .fuel_per_call
                .saturating_sub(live.store.get_fuel().unwrap_or(0)),
            super::Metering::Off => 0,
        };
        tracing::debug!(plugin = &*self.name, fuel_used, elapsed = ?started.elapsed(), "call finished");
        self.gate.finish(admission, fuel_used);
        stats
            .fuel_used
            .store(fuel_used, std::sync::atomic::Ordering::Relaxed);
        stats.memory_bytes.store(
            live.store.data().memory_bytes(),
            std::sync::atomic::Ordering::Relaxed,
        );
        live.calls += 1;
        match outcome {
            Some(Ok(value)) => {
                match reuse_for {
                    Some(client) => self.keep_for(client, live),
                    None => live.retire(),
                }
                Ok(value)
            }
            // A call that failed leaves its instance behind: a trap can stop it anywhere.
            Some(Err(err)) => {
                live.retire();
                if let Some(limit) = limit_hit(&err, &limits) {
                    tracing::warn!(plugin = &*self.name, "plugin stopped: {limit}");
                    return Err(CallError::Limit(self.name.clone(), limit));
                }
                let why = describe_failure(&err, &stderr_tail);
                let why = self.grants.redactor.redact(&why);
                tracing::warn!(
                    plugin = &*self.name,
                    "plugin stopped: {}",
                    crate::log_safe(&why)
                );
                Err(CallError::Stopped(format!("plugin `{}` {why}", self.name)))
            }
            None => {
                live.retire();
                Err(time_limit())
            }
        }
    }

    /// A slot of the engine's instance pool, waiting until `deadline` for one (`None` if none
    /// came free). Instances kept for reuse give theirs up first.
    async fn instance_slot(
        &self,
        deadline: Instant,
    ) -> Result<Option<OwnedSemaphorePermit>, CallError> {
        loop {
            match self.instance_slots.clone().try_acquire_owned() {
                Ok(slot) => return Ok(Some(slot)),
                Err(TryAcquireError::Closed) => {
                    return Err(CallError::Host(anyhow::anyhow!(
                        "the instance pool is closed"
                    )));
                }
                Err(TryAcquireError::NoPermits) if self.kept.drop_oldest() => continue,
                Err(TryAcquireError::NoPermits) => break,
            }
        }
        match tokio::time::timeout_at(deadline.into(), self.instance_slots.clone().acquire_owned())
            .await
        {
            Ok(slot) => slot
                .map(Some)
                .map_err(|closed| CallError::Host(closed.into())),
            Err(_elapsed) => Ok(None),
        }
    }

    /// A store for `call` in this plugin's sandbox, on the pool slot `slot`; the component is
    /// instantiated in it by the call.
    fn new_store(
        &self,
        call: CallContext,
        clock: Arc<CallClock>,
        slot: OwnedSemaphorePermit,
    ) -> Result<Live, CallError> {
        let limits = self.spec.limits;
        let redactor = &self.grants.redactor;
        let stdout = OutputCapture::new(self.name.clone(), "stdout", redactor.clone());
        let stderr = OutputCapture::new(self.name.clone(), "stderr", redactor.clone());
        let roots = call.roots.clone();
        let wasi = wasi_context(&self.grants, &roots, stdout.clone(), stderr.clone())
            .map_err(CallError::Host)?;
        let sandbox = Sandbox {
            plugin: self.name.clone(),
            grants: self.grants.clone(),
            wasi,
            limiter: MemoryLimiter::new(&limits),
            output_limit: limits.output_bytes,
            questions_limit: limits.questions_per_call,
            template_bytes: self.template_bytes,
            keyvalue: self.keyvalue.clone(),
        };
        let mut store = Store::new(
            self.pre.engine(),
            StoreState::new(sandbox, call, self.spec.ask, clock),
        );
        store.limiter(|state| &mut state.limiter);
        store.set_hostcall_fuel(super::copy_bound::hostcall_fuel(&limits));
        store.epoch_deadline_callback(move |store| {
            if Instant::now() >= store.data().asks.clock().deadline() {
                Err(wasmtime::Error::new(LimitExceeded::Time {
                    limit_ms: limits.timeout_ms,
                }))
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        Ok(Live {
            store,
            instance: None,
            stdout,
            stderr,
            roots,
            calls: 0,
            _slot: slot,
        })
    }

    /// Keeps `live`, whose call succeeded, for `client`'s next call, unless it has served its
    /// calls or grown past its memory bound.
    fn keep_for(&self, client: Arc<str>, mut live: Live) {
        let Reuse::PerClient {
            calls,
            memory_bytes,
        } = self.spec.reuse
        else {
            return;
        };
        live.store.data_mut().end_call();
        let memory = live.store.data().memory_bytes();
        if live.calls >= calls || memory > memory_bytes {
            tracing::debug!(
                plugin = &*self.name,
                calls = live.calls,
                memory,
                "instance not kept: it served its calls or grew past its memory bound"
            );
            live.retire();
            return;
        }
        self.kept.keep(self.id, client, live);
    }
}

impl Drop for Plugin {
    fn drop(&mut self) {
        self.kept.forget(self.id);
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

/// The plugin's own kind of failure, for calls the host answers for it.
fn plugin_error(code: types::ErrorCode, message: String) -> CallError {
    CallError::Plugin(types::PluginError {
        code,
        message,
        data: None,
    })
}

/// A call's arguments (JSON text), parsed.
fn json_arguments(arguments: &str) -> Result<serde_json::Value, CallError> {
    serde_json::from_str(arguments).map_err(|e| {
        plugin_error(
            types::ErrorCode::InvalidParams,
            format!("the arguments are not JSON: {e}"),
        )
    })
}

/// Runs `run` until it ends or `clock`'s deadline passes (`None`); the deadline may move while
/// it runs (see [`CallClock`]).
async fn until_deadline<F: Future>(run: F, clock: &CallClock) -> Option<F::Output> {
    let mut run = std::pin::pin!(run);
    loop {
        let deadline = clock.deadline();
        if let Ok(done) = tokio::time::timeout_at(deadline.into(), &mut run).await {
            return Some(done);
        }
        if clock.deadline() <= deadline {
            return None;
        }
    }
}
