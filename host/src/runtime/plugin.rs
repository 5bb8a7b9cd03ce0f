//! One loaded plugin: its compiled component, what it exports, and calls into fresh instances.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use wasmtime::component::{
    Component, HasSelf, Instance, InstancePre, Linker, ResourceTable, ResourceType,
    types::ComponentItem,
};
use wasmtime::{Engine, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::Runtime;
use super::bindings::{self, completion, prompts, resources, tools, types};
use super::host_api::CallContext;
use super::limits::{LimitExceeded, MemoryLimiter, describe_failure};
use super::sandbox::{Grants, OutputCapture, wasi_context};
use crate::config::PluginConfig;

/// The data of one call's store.
pub struct StoreState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
    pub(super) plugin: Arc<str>,
    pub(super) grants: Arc<Grants>,
    pub(super) call: CallContext,
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Which `palisade:plugin` interfaces a component exports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exports {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
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
    /// The host could not run the call (for example a granted directory is gone).
    #[error("{0:#}")]
    Host(anyhow::Error),
}

/// A plugin ready to serve: instantiation is pre-linked, so each call only creates an instance.
pub struct Plugin {
    pub name: Arc<str>,
    pub config: PluginConfig,
    pub exports: Exports,
    /// The tools it listed when loaded.
    pub tools: Vec<tools::Tool>,
    grants: Arc<Grants>,
    pre: InstancePre<StoreState>,
    tools_exports: Option<tools::GuestIndices>,
}

impl Plugin {
    /// Compiles (or loads from the cache), links and introspects the plugin of `config`.
    pub async fn load(runtime: &Runtime, config: PluginConfig) -> Result<Plugin> {
        let name: Arc<str> = config.name.as_str().into();
        let wasm = std::fs::read(&config.path)
            .with_context(|| format!("plugin `{name}`: cannot read {}", config.path.display()))?;
        let component = runtime
            .cache
            .load(&runtime.engine, &wasm, &name)
            .with_context(|| {
                format!(
                    "plugin `{name}`: {} is not a valid WebAssembly component (build it with --target wasm32-wasip2)",
                    config.path.display()
                )
            })?;
        let pre = link(&runtime.engine, &component)
            .with_context(|| format!("plugin `{name}`: cannot link its imports"))?;
        let tools_exports = tools::GuestIndices::new(&pre).ok();
        let exports = Exports {
            tools: tools_exports.is_some(),
            resources: resources::GuestIndices::new(&pre).is_ok(),
            prompts: prompts::GuestIndices::new(&pre).is_ok(),
            completion: completion::GuestIndices::new(&pre).is_ok(),
        };
        anyhow::ensure!(
            exports != Exports::default(),
            "plugin `{name}`: {} exports none of the interfaces palisade:plugin/tools, resources, \
             prompts or completion @0.1.0; build it against the WIT in wit/",
            config.path.display()
        );
        let grants = Arc::new(Grants {
            dirs: config.dirs.clone(),
            roots: config.roots,
        });
        let mut plugin = Plugin {
            name,
            config,
            exports,
            tools: Vec::new(),
            grants,
            pre,
            tools_exports,
        };
        if let Some(indices) = plugin.tools_exports.clone() {
            plugin.tools = plugin
                .run(CallContext::default(), async move |store, instance| {
                    let guest = indices.load(&mut *store, instance)?;
                    guest.call_list_tools(store).await
                })
                .await
                .map_err(|e| {
                    anyhow::anyhow!("plugin `{}`: listing its tools failed: {}", plugin.name, e)
                })?;
        }
        Ok(plugin)
    }

    /// Calls the tool `name` (the plugin's own name) with `arguments` (JSON text) in a fresh
    /// instance.
    pub async fn call_tool(
        &self,
        name: String,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        let indices = self
            .tools_exports
            .clone()
            .ok_or_else(|| CallError::Host(anyhow::anyhow!("plugin exports no tools")))?;
        let result = self
            .run(call, async move |store, instance| {
                let guest = indices.load(&mut *store, instance)?;
                guest.call_call_tool(store, &name, &arguments).await
            })
            .await?;
        result.map_err(CallError::Plugin)
    }

    /// Runs `f` against a fresh instance under every limit of the plugin.
    async fn run<R>(
        &self,
        call: CallContext,
        f: impl AsyncFnOnce(&mut Store<StoreState>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        let limits = self.config.limits;
        let stdout = OutputCapture::new(self.name.clone(), "stdout");
        let stderr = OutputCapture::new(self.name.clone(), "stderr");
        let wasi = wasi_context(&self.grants, &call.roots, stdout.clone(), stderr.clone())
            .map_err(CallError::Host)?;
        let mut store = Store::new(
            self.pre.engine(),
            StoreState {
                wasi,
                table: ResourceTable::new(),
                limiter: MemoryLimiter::new(&limits),
                plugin: self.name.clone(),
                grants: self.grants.clone(),
                call,
            },
        );
        store.limiter(|state| &mut state.limiter);
        store
            .set_fuel(limits.fuel_per_call)
            .map_err(|e| CallError::Host(e.into()))?;
        let deadline = Instant::now() + Duration::from_millis(limits.timeout_ms);
        // Every epoch tick: stop if past the deadline, else yield so other calls (and a
        // cancellation, which drops this future) get their turn.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline {
                Err(wasmtime::Error::new(LimitExceeded::Time {
                    limit_ms: limits.timeout_ms,
                }))
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });

        let started = Instant::now();
        let run = async {
            let instance = self.pre.instantiate_async(&mut store).await?;
            f(&mut store, &instance).await
        };
        // The epoch check only fires while wasm runs; this bounds time spent in host calls too.
        let outcome = tokio::time::timeout_at(deadline.into(), run).await;
        stdout.finish();
        let stderr_tail = stderr.finish();
        let fuel_used = limits
            .fuel_per_call
            .saturating_sub(store.get_fuel().unwrap_or(0));
        tracing::debug!(plugin = &*self.name, fuel_used, elapsed = ?started.elapsed(), "call finished");
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => {
                let why = describe_failure(&err, &limits, &stderr_tail);
                tracing::warn!(plugin = &*self.name, "plugin stopped: {why}");
                Err(CallError::Stopped(format!("plugin `{}` {why}", self.name)))
            }
            Err(_elapsed) => Err(CallError::Stopped(format!(
                "plugin `{}` {}",
                self.name,
                LimitExceeded::Time {
                    limit_ms: limits.timeout_ms
                }
            ))),
        }
    }
}

/// Interface packages the linker provides. WASI's are matched by semver (a plugin built against
/// wasi 0.2.6 links to the host's 0.2.x); what each may do is decided by the call's WASI context.
const PROVIDED_PACKAGES: [&str; 7] = [
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
    "palisade:plugin/",
];

/// A linker with WASI (denied by default through the context), the `host` import, and traps for
/// any other import: a plugin that imports something it was not granted still loads, and fails
/// only if it uses it.
fn link(engine: &Engine, component: &Component) -> Result<InstancePre<StoreState>> {
    let mut linker = Linker::<StoreState>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    bindings::palisade::plugin::host::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    stub_unprovided_imports(&mut linker, engine, component)?;
    Ok(linker.instantiate_pre(component)?)
}

/// A resource type standing in for the resources of an interface the host does not provide.
struct Unprovided;

/// Defines every import outside [`PROVIDED_PACKAGES`] as functions that trap with a message naming
/// them. (wasmtime's `define_unknown_imports_as_traps` looks names up exactly, so it would also
/// shadow WASI imports that only differ from ours in the patch version.)
fn stub_unprovided_imports(
    linker: &mut Linker<StoreState>,
    engine: &Engine,
    component: &Component,
) -> Result<()> {
    let ty = component.component_type();
    for (name, item) in ty.imports(engine) {
        if PROVIDED_PACKAGES.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        match item.ty {
            ComponentItem::ComponentInstance(instance) => {
                let mut stub = linker.instance(name)?;
                for (export, export_item) in instance.exports(engine) {
                    let qualified = format!("{name}#{export}");
                    match export_item.ty {
                        ComponentItem::ComponentFunc(_) => stub.func_new(export, move |_, _, _, _| {
                            wasmtime::bail!("`{qualified}` is not available to this plugin: the host does not grant it")
                        })?,
                        ComponentItem::Resource(_) => stub.resource(
                            export,
                            ResourceType::host::<Unprovided>(),
                            |_, _| Ok(()),
                        )?,
                        _ => {}
                    }
                }
            }
            ComponentItem::ComponentFunc(_) => {
                let qualified = name.to_string();
                linker.root().func_new(name, move |_, _, _, _| {
                    wasmtime::bail!(
                        "`{qualified}` is not available to this plugin: the host does not grant it"
                    )
                })?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// What the sandbox gives a plugin for the import `name`.
fn import_status(name: &str) -> &'static str {
    let package = name.split('/').next().unwrap_or(name);
    match package {
        "wasi:filesystem" => "provided; only the directories and roots the configuration grants",
        "wasi:sockets" => "provided, every address denied (no network)",
        "wasi:cli" if name.starts_with("wasi:cli/environment") => {
            "provided, empty (no environment variables, no arguments)"
        }
        "wasi:cli" if name.starts_with("wasi:cli/stdin") => "provided, empty",
        "wasi:cli" if name.contains("/stdout") || name.contains("/stderr") => {
            "provided; written to the host log, tagged with the plugin's name"
        }
        _ if PROVIDED_PACKAGES.iter().any(|p| name.starts_with(p)) => "provided",
        _ => "NOT provided: the plugin loads, and a call that uses it fails",
    }
}

/// A description of a component for `palisade inspect`: its exports, its tools and its imports.
pub async fn inspect(runtime: &Runtime, config: PluginConfig) -> Result<String> {
    let wasm = std::fs::read(&config.path)
        .with_context(|| format!("cannot read {}", config.path.display()))?;
    let component = runtime
        .cache
        .load(&runtime.engine, &wasm, &config.name)
        .with_context(|| format!("{} is not a valid component", config.path.display()))?;
    let ty = component.component_type();
    let mut out = String::new();
    writeln!(out, "component: {}", config.path.display())?;
    writeln!(out, "size: {} bytes", wasm.len())?;
    writeln!(out, "\nexports:")?;
    for (name, _) in ty.exports(&runtime.engine) {
        writeln!(out, "  {name}")?;
    }
    writeln!(out, "\nimports (and what the sandbox gives for each):")?;
    for (name, _) in ty.imports(&runtime.engine) {
        writeln!(out, "  {name}: {}", import_status(name))?;
    }
    match Plugin::load(runtime, config).await {
        Ok(plugin) => {
            let e = plugin.exports;
            writeln!(
                out,
                "\nprovides: tools={} resources={} prompts={} completion={}",
                e.tools, e.resources, e.prompts, e.completion
            )?;
            writeln!(out, "\ntools ({}):", plugin.tools.len())?;
            for tool in &plugin.tools {
                writeln!(
                    out,
                    "  {}: {}",
                    tool.name,
                    tool.description.as_deref().unwrap_or("(no description)")
                )?;
                writeln!(out, "    input schema: {}", tool.input_schema)?;
            }
        }
        Err(e) => writeln!(out, "\ncannot serve it: {e:#}")?,
    }
    Ok(out)
}
