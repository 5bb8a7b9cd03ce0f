//! Short constructors for [`PluginError`], the failure a resource read, a prompt or a completion
//! reports to the host.

use serde_json::Value;

use crate::types::{ErrorCode, PluginError};

impl PluginError {
    /// A failure of the given kind, with a message for people.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        PluginError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The named tool, prompt, resource or template does not exist. For a resource, the client
    /// gets the MCP "resource not found" error (-32002).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// The arguments are wrong (JSON-RPC -32602).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParams, message)
    }

    /// The plugin failed for a reason of its own (JSON-RPC -32603).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// Sets extra detail for programs, a JSON value.
    pub fn data(mut self, data: Value) -> Self {
        self.data = Some(data.to_string());
        self
    }
}

/// A plain message is an [`ErrorCode::Internal`] failure, so read and prompt functions may
/// return `Result<_, String>`.
impl From<String> for PluginError {
    fn from(message: String) -> Self {
        Self::internal(message)
    }
}

/// A plain message is an [`ErrorCode::Internal`] failure.
impl From<&str> for PluginError {
    fn from(message: &str) -> Self {
        Self::internal(message)
    }
}
