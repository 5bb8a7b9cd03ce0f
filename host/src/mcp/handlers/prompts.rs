//! `prompts/get`.

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::wire;

use super::*;

pub(super) async fn get(req: &Request<'_>) -> Result<Value, RpcError> {
    let name = string_param(req.params, "name")?;
    let arguments = match req.params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "params.arguments must be an object",
            ));
        }
    };
    let catalog = req
        .session
        .server()
        .catalog_with(Some(name), |c| c.prompt(name).is_some())
        .await;
    let prompt = catalog
        .prompt(name)
        .filter(|p| Catalog::prompt_in_scope(p, &req.session.scope()))
        .ok_or_else(|| RpcError::invalid_params(format!("unknown prompt: {name}")))?;
    let arguments = prompt
        .check_arguments(&arguments)
        .map_err(RpcError::invalid_params)?;
    let plugin = &prompt.plugin;
    let own_name = prompt.prompt.name.clone();
    let result = req
        .with_plugin(plugin, async |ctx| {
            plugin.get_prompt(own_name, arguments, ctx).await
        })
        .await
        .map_err(|e| rpc_error(e, name))?;
    Ok(wire::prompt_result(&result, req.version))
}
