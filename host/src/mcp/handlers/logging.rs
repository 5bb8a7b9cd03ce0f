//! `logging/setLevel`.

use serde_json::{Value, json};

use crate::mcp::jsonrpc::RpcError;
use crate::mcp::plugin_events::{self, LEVEL_NAMES};

use super::*;

pub(super) async fn set_level(req: &Request<'_>) -> Result<Value, RpcError> {
    let level = string_param(req.params, "level")?;
    let level = plugin_events::parse_level(level).ok_or_else(|| {
        RpcError::invalid_params(format!(
            "unknown log level `{level}`: use one of {LEVEL_NAMES}"
        ))
    })?;
    *req.session
        .log_level
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = level;
    req.session.synced().await;
    Ok(json!({}))
}
