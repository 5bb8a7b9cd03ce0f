//! `prompts/get`.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::{Session, wire};

use super::*;

impl Session {
    pub(super) async fn get_prompt(self: &Arc<Self>, call: Call<'_>) -> Result<Value, RpcError> {
        let name = string_param(call.params, "name")?;
        let arguments = match call.params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.arguments must be an object",
                ));
            }
        };
        let catalog = self.server.catalog();
        let prompt = catalog
            .prompt(name)
            .filter(|p| Catalog::prompt_in_scope(p, &self.identity.scope))
            .ok_or_else(|| RpcError::invalid_params(format!("unknown prompt: {name}")))?;
        let arguments = prompt
            .check_arguments(&arguments)
            .map_err(RpcError::invalid_params)?;
        let plugin = &prompt.plugin;
        let own_name = prompt.prompt.name.clone();
        let result = self
            .with_plugin(plugin, &call, async |ctx| {
                plugin.get_prompt(own_name, arguments, ctx).await
            })
            .await
            .map_err(|e| rpc_error(e, name))?;
        Ok(wire::prompt_result(&result, call.version))
    }
}
