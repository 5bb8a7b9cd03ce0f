//! The Model Context Protocol: JSON-RPC framing, revisions, sessions and the wire shapes of results.

pub mod jsonrpc;
pub mod session;
pub mod version;
pub mod wire;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::runtime::sandbox::Root;
use jsonrpc::RpcError;
use version::ProtocolVersion;

pub use session::{Outbox, Session};

/// What every session of this process serves.
pub struct Server {
    pub catalog: Arc<Catalog>,
    pub page_size: usize,
    /// Roots given on the command line (until the client gives its own).
    pub roots: Arc<Vec<Root>>,
}

impl Server {
    fn initialize_result(&self, version: ProtocolVersion) -> Value {
        let mut capabilities = Map::new();
        if self.catalog.plugins.iter().any(|p| p.exports.tools) || !self.catalog.tools().is_empty()
        {
            // No `listChanged`: the tool list does not change while the server runs.
            capabilities.insert("tools".into(), json!({}));
        }
        let mut server_info = json!({ "name": "palisade", "version": env!("CARGO_PKG_VERSION") });
        if version >= ProtocolVersion::V2025_06_18 {
            server_info["title"] = "Palisade".into();
        }
        json!({
            "protocolVersion": version.as_str(),
            "capabilities": capabilities,
            "serverInfo": server_info,
            "instructions": "Tools from sandboxed WebAssembly plugins. Tool names start with the \
                             plugin's name; a tool that hits a limit reports which one.",
        })
    }

    fn list_tools(
        &self,
        params: &Map<String, Value>,
        version: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(_) => return Err(RpcError::invalid_params("params.cursor must be a string")),
        };
        let (page, next) = self
            .catalog
            .tools_page(cursor, self.page_size)
            .map_err(|_| {
                RpcError::invalid_params(
                    "invalid cursor: pass a nextCursor this server returned, or none",
                )
            })?;
        let tools: Vec<Value> = page.iter().map(|t| wire::tool(t, version)).collect();
        let mut result = json!({ "tools": tools });
        if let Some(next) = next {
            result["nextCursor"] = next.into();
        }
        Ok(result)
    }
}
