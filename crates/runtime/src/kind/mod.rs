//! The kinds of component Palisade serves, one file each: a [`Contract`] (exports
//! `palisade:plugin`), [`Generic`] functions (and an HTTP handler), or a [`Wasmcp`] tools
//! component. `Kind::of` tells which a component is; each kind lists what it offers and calls
//! its tools through the `Runner` (`run.rs`).

mod answers;
mod contract;
mod generic;
pub mod http_handler;
pub mod wasmcp;

use std::sync::Arc;

use wasmtime::component::InstancePre;
use wasmtime_wasi_http::p2::bindings::ProxyIndices;

pub(crate) use answers::Listing;
pub use contract::{Contract, Exports};
pub use generic::Generic;
pub use wasmcp::Wasmcp;

use crate::bindings::tools;
use crate::call::CallContext;
use crate::error::{CallError, LoadError};
use crate::generic::docs::PackageDocs;
use crate::generic::{GenericTools, NameCollision};
use crate::run::Runner;
use crate::spec::PluginSpec;
use crate::store::StoreState;

/// What kind of component a plugin is.
#[derive(Debug, Clone)]
pub enum Kind {
    /// It exports `palisade:plugin` interfaces.
    Contract(Contract),
    /// Its exported functions are the tools (and its HTTP handler, with `http_handler = true`).
    Generic(Generic),
    /// A wasmcp tools component, served through the adapter.
    Wasmcp(Arc<Wasmcp>),
}

impl Kind {
    /// The kind of the component of `spec`, linked as `pre`; `docs` are its WIT's doc comments.
    pub(crate) fn of(
        spec: &PluginSpec,
        pre: &InstancePre<StoreState>,
        docs: Option<&PackageDocs>,
    ) -> Result<Kind, LoadError> {
        let plugin = || spec.name.clone();
        let exports = Exports::of(pre);
        let http_handler = if spec.http_handler {
            let indices = ProxyIndices::new(pre)
                .map_err(|_| LoadError::NoHttpHandler { plugin: plugin() })?;
            if !exports.none() {
                return Err(LoadError::NoHttpHandler { plugin: plugin() });
            }
            Some(Arc::new(indices))
        } else {
            None
        };
        let engine = pre.engine();
        match Wasmcp::find(engine, pre.component()) {
            Some(Ok(adapter)) if exports.none() && !spec.http_handler => {
                return Ok(Kind::Wasmcp(Arc::new(adapter)));
            }
            Some(Err(why)) => {
                return Err(LoadError::Wasmcp {
                    plugin: plugin(),
                    why,
                });
            }
            _ => {}
        }
        if !exports.none() {
            return Ok(Kind::Contract(Contract::new(pre, exports)));
        }
        let component_type = pre.component().component_type();
        if let Some((found, _)) = component_type
            .exports(engine)
            .find(|(name, _)| name.starts_with("palisade:plugin/"))
        {
            return Err(LoadError::ContractVersion {
                plugin: plugin(),
                found: found.to_string(),
                expected: contract::contract_version(),
            });
        }
        let found = GenericTools::discover(engine, pre.component(), docs).map_err(|collision| {
            LoadError::ToolNameCollision {
                plugin: plugin(),
                collision,
            }
        })?;
        for skipped in &found.skipped {
            tracing::info!(
                plugin = spec.name.as_str(),
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
                plugin: plugin(),
                collision: NameCollision {
                    name: http_handler::TOOL.into(),
                    first: clash.path(),
                    second: "wasi:http/incoming-handler (http_handler = true)".into(),
                },
            });
        }
        if found.funcs.is_empty() && http_handler.is_none() {
            return Err(LoadError::NoExports {
                plugin: plugin(),
                path: spec.path.clone(),
                skipped: found.skipped,
            });
        }
        Ok(Kind::Generic(Generic {
            tools: Arc::new(found),
            http_handler,
        }))
    }

    /// Which `palisade:plugin` interfaces it exports (none but for a [`Contract`]).
    pub fn exports(&self) -> Exports {
        match self {
            Kind::Contract(contract) => contract.exports,
            Kind::Generic(_) | Kind::Wasmcp(_) => Exports::default(),
        }
    }

    /// Everything it offers, as listed at load.
    pub(crate) async fn list(&self, runner: &Runner) -> Result<Listing, CallError> {
        match self {
            Kind::Contract(contract) => contract.list(runner).await,
            Kind::Generic(generic) => generic.list(runner).await,
            Kind::Wasmcp(adapter) => adapter.list(runner).await,
        }
    }

    /// Calls its tool `name` (its own name) with `arguments` (JSON text).
    pub(crate) async fn call_tool(
        &self,
        runner: &Runner,
        name: String,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        match self {
            Kind::Contract(contract) => contract.call_tool(runner, name, arguments, call).await,
            Kind::Generic(generic) => generic.call_tool(runner, &name, &arguments, call).await,
            Kind::Wasmcp(adapter) => adapter.call_tool(runner, &name, arguments, call).await,
        }
    }
}
