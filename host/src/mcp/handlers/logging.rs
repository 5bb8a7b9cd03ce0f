//! `logging/setLevel`.

use serde_json::{Value, json};

use crate::mcp::jsonrpc::RpcError;
use crate::mcp::session::logging::{LEVEL_NAMES, parse_level};

use super::*;

pub(super) async fn set_level(req: &Request<'_>) -> Result<Value, RpcError> {
    let level = string_param(req.params, "level")?;
    let level = parse_level(level).ok_or_else(|| {
        RpcError::invalid_params(format!(
            "unknown log level `{level}`: use one of {LEVEL_NAMES}"
        ))
    })?;
    req.session.logging().set_level(level);
    req.session.synced().await;
    Ok(json!({}))
}
