//! `logging/setLevel`.

use serde_json::{Map, Value, json};

use crate::mcp::Session;
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::plugin_events::{self, LEVEL_NAMES};

use super::*;

impl Session {
    pub(super) fn set_level(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let level = string_param(params, "level")?;
        let level = plugin_events::parse_level(level).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "unknown log level `{level}`: use one of {LEVEL_NAMES}"
            ))
        })?;
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) = level;
        Ok(json!({}))
    }
}
