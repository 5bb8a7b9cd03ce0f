//! The list methods that read only the catalog, and which lists differ between two catalogs.

use serde_json::{Map, Value};

use super::jsonrpc::RpcError;
use super::version::ProtocolVersion;
use super::wire;
use crate::catalog::{Catalog, InvalidCursor};
use crate::runtime::bindings::host::ListKind;

/// `params.cursor`, if given.
pub(super) fn cursor(params: &Map<String, Value>) -> Result<Option<&str>, RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(c)) => Ok(Some(c.as_str())),
        Some(_) => Err(RpcError::invalid_params("params.cursor must be a string")),
    }
}

pub(super) fn bad_cursor(_: InvalidCursor) -> RpcError {
    RpcError::invalid_params("invalid cursor: pass a nextCursor this server returned, or none")
}

/// The lists a client would see differently in `new` than in `old`.
pub(super) fn changed_lists(old: &Catalog, new: &Catalog) -> Vec<ListKind> {
    let tools = |c: &Catalog| -> Vec<Value> {
        c.tools()
            .iter()
            .map(|t| wire::tool(t, ProtocolVersion::LATEST_WITH_SESSIONS))
            .collect()
    };
    let prompts = |c: &Catalog| -> Vec<Value> {
        c.prompts()
            .iter()
            .map(|p| wire::prompt(p, ProtocolVersion::LATEST_WITH_SESSIONS))
            .collect()
    };
    // Fixed resources are listed live; what the catalog decides is the templates and which
    // plugins serve resources at all.
    let resources = |c: &Catalog| -> (Vec<Value>, Vec<Value>) {
        let templates = c
            .resources
            .templates()
            .iter()
            .map(|t| wire::resource_template(&t.template, ProtocolVersion::LATEST_WITH_SESSIONS))
            .collect();
        let fixed = c
            .resource_plugins()
            .flat_map(|p| {
                p.resources
                    .iter()
                    .map(|r| wire::resource(r, ProtocolVersion::LATEST_WITH_SESSIONS))
            })
            .collect();
        (templates, fixed)
    };
    let mut changed = Vec::new();
    if tools(old) != tools(new) {
        changed.push(ListKind::Tools);
    }
    if resources(old) != resources(new) {
        changed.push(ListKind::Resources);
    }
    if prompts(old) != prompts(new) {
        changed.push(ListKind::Prompts);
    }
    changed
}
