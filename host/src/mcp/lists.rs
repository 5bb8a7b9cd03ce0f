//! The list methods that read only the catalog, and which lists differ between two catalogs.

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;
use super::version::ProtocolVersion;
use super::{Server, wire};
use crate::catalog::{Catalog, InvalidCursor, page};
use crate::runtime::bindings::host::ListKind;

impl Server {
    pub(super) fn list_tools(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let (items, next) =
            page(catalog.tools(), cursor(params)?, self.page_size).map_err(bad_cursor)?;
        Ok(with_cursor(
            json!({ "tools": items.iter().map(|t| wire::tool(t, v)).collect::<Vec<_>>() }),
            next,
        ))
    }

    pub(super) fn list_prompts(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let (items, next) =
            page(catalog.prompts(), cursor(params)?, self.page_size).map_err(bad_cursor)?;
        Ok(with_cursor(
            json!({ "prompts": items.iter().map(|p| wire::prompt(p, v)).collect::<Vec<_>>() }),
            next,
        ))
    }

    pub(super) fn list_resource_templates(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let templates = catalog.resources.templates();
        let (items, next) = page(templates, cursor(params)?, self.page_size).map_err(bad_cursor)?;
        let items: Vec<Value> = items
            .iter()
            .map(|t| wire::resource_template(&t.template, v))
            .collect();
        Ok(with_cursor(json!({ "resourceTemplates": items }), next))
    }
}

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

pub(super) fn with_cursor(mut result: Value, next: Option<String>) -> Value {
    if let Some(next) = next {
        result["nextCursor"] = next.into();
    }
    result
}

/// The lists a client would see differently in `new` than in `old`.
pub(super) fn changed_lists(old: &Catalog, new: &Catalog) -> Vec<ListKind> {
    let tools = |c: &Catalog| -> Vec<Value> {
        c.tools()
            .iter()
            .map(|t| wire::tool(t, ProtocolVersion::LATEST))
            .collect()
    };
    let prompts = |c: &Catalog| -> Vec<Value> {
        c.prompts()
            .iter()
            .map(|p| wire::prompt(p, ProtocolVersion::LATEST))
            .collect()
    };
    // Fixed resources are listed live; what the catalog decides is the templates and which
    // plugins serve resources at all.
    let resources = |c: &Catalog| -> (Vec<Value>, Vec<Value>) {
        let templates = c
            .resources
            .templates()
            .iter()
            .map(|t| wire::resource_template(&t.template, ProtocolVersion::LATEST))
            .collect();
        let fixed = c
            .resource_plugins()
            .flat_map(|p| {
                p.resources
                    .iter()
                    .map(|r| wire::resource(r, ProtocolVersion::LATEST))
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
