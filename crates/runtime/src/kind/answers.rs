//! What every kind answers with: the lists read at load, and the errors the host gives in the
//! plugin's name.

use crate::bindings::{completion, prompts, resources, tools, types};
use crate::error::CallError;

/// Everything a plugin lists, read at load.
#[derive(Default)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<tools::Tool>,
    pub(crate) resources: Vec<resources::Resource>,
    pub(crate) templates: Vec<resources::ResourceTemplate>,
    pub(crate) prompts: Vec<prompts::Prompt>,
    pub(crate) completable: Vec<completion::CompletionRef>,
}

/// The plugin's own kind of failure, for calls the host answers for it.
pub(super) fn plugin_error(code: types::ErrorCode, message: String) -> CallError {
    CallError::Plugin(types::PluginError {
        code,
        message,
        data: None,
    })
}

/// A call's arguments (JSON text), parsed.
pub(super) fn json_arguments(arguments: &str) -> Result<serde_json::Value, CallError> {
    serde_json::from_str(arguments).map_err(|e| {
        plugin_error(
            types::ErrorCode::InvalidParams,
            format!("the arguments are not JSON: {e}"),
        )
    })
}
