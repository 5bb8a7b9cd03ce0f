//! Components without `palisade:plugin` exports: each exported function is a tool (see
//! [`generic`](crate::generic)), and with `http_handler = true` its `wasi:http/incoming-handler`
//! is the tool `request`. Calls go through wasmtime's dynamic values.

use std::sync::Arc;

use wasmtime::component::{ComponentExportIndex, Val};
use wasmtime_wasi_http::p2::bindings::ProxyIndices;

use super::answers::{Listing, json_arguments, plugin_error};
use super::http_handler;
use crate::bindings::{tools, types};
use crate::call::CallContext;
use crate::error::CallError;
use crate::generic::types::Signature;
use crate::generic::{GenericFunc, GenericTools, val, value};
use crate::output::within_limit;
use crate::run::Runner;

/// A component's functions served as tools, and its HTTP handler when served.
#[derive(Clone)]
pub struct Generic {
    /// The functions served as tools.
    pub tools: Arc<GenericTools>,
    /// `http_handler = true`: where its `wasi:http/incoming-handler` is.
    pub(super) http_handler: Option<Arc<ProxyIndices>>,
}

impl std::fmt::Debug for Generic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generic")
            .field("tools", &self.tools)
            .field("http_handler", &self.http_handler.is_some())
            .finish()
    }
}

impl Generic {
    /// The tools it offers; the component is instantiated once, as every plugin is at load.
    pub(super) async fn list(&self, runner: &Runner) -> Result<Listing, CallError> {
        runner
            .run(CallContext::default(), async |_, _| Ok(()))
            .await?;
        let mut tools: Vec<tools::Tool> = self.tools.funcs.iter().map(GenericFunc::tool).collect();
        if self.http_handler.is_some() {
            tools.push(http_handler::tool());
        }
        Ok(Listing {
            tools,
            ..Listing::default()
        })
    }

    /// Calls the tool `name` with `arguments` (JSON text).
    pub(super) async fn call_tool(
        &self,
        runner: &Runner,
        name: &str,
        arguments: &str,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        if let Some(indices) = self
            .http_handler
            .clone()
            .filter(|_| name == http_handler::TOOL)
        {
            return call_http_handler(runner, indices, arguments, call).await;
        }
        let func = self
            .tools
            .get(name)
            .ok_or_else(|| plugin_error(types::ErrorCode::NotFound, format!("no tool `{name}`")))?;
        let arguments = json_arguments(arguments)?;
        let args = value::arguments(&func.signature.params, &arguments).map_err(|e| {
            plugin_error(
                types::ErrorCode::InvalidParams,
                format!("invalid arguments: {e}"),
            )
        })?;
        let result = call_dynamic(runner, call, func.export(), &func.signature, args).await?;
        Ok(func.render(result))
    }
}

/// Hands the request the `request` tool's arguments describe to the component's
/// `wasi:http/incoming-handler`.
async fn call_http_handler(
    runner: &Runner,
    indices: Arc<ProxyIndices>,
    arguments: &str,
    call: CallContext,
) -> Result<tools::CallResult, CallError> {
    let invalid = |message| plugin_error(types::ErrorCode::InvalidParams, message);
    let arguments = json_arguments(arguments)?;
    let request = http_handler::request(&arguments).map_err(invalid)?;
    runner
        .run(call, async move |store, instance| {
            let limit = store.data().output_limit;
            http_handler::handle(store, instance, &indices, request, limit).await
        })
        .await
}

/// Calls the export at `export`, of type `signature`, with `args` (values of its parameters'
/// types) in a fresh instance, through wasmtime's dynamic values: its result, if within the
/// output limit.
pub(super) async fn call_dynamic(
    runner: &Runner,
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
    runner
        .run(call, async move |store, instance| {
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
