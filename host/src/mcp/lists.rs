//! The list methods that read only the catalog, and which lists differ between two catalogs.

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;
use super::version::ProtocolVersion;
use super::{Server, wire};
use crate::catalog::{Catalog, InvalidCursor, page};
use crate::config::Scope;
use crate::runtime::bindings::host::ListKind;

impl Server {
    /// The tools `scope` lets the client see.
    pub(super) fn list_tools(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
        scope: &Scope,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let visible: Vec<_> = catalog
            .tools()
            .iter()
            .filter(|t| Catalog::tool_in_scope(t, scope))
            .collect();
        self.paged(params, "tools", &visible, |t| wire::tool(t, v))
    }

    pub(super) fn list_prompts(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
        scope: &Scope,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let visible: Vec<_> = catalog
            .prompts()
            .iter()
            .filter(|p| Catalog::prompt_in_scope(p, scope))
            .collect();
        self.paged(params, "prompts", &visible, |p| wire::prompt(p, v))
    }

    pub(super) fn list_resource_templates(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
        scope: &Scope,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let visible: Vec<_> = catalog
            .resources
            .templates()
            .iter()
            .filter(|t| scope.allows_plugin(&t.plugin.name))
            .collect();
        self.paged(params, "resourceTemplates", &visible, |t| {
            wire::resource_template(&t.template, v)
        })
    }

    /// The page of `items` that `params.cursor` asks for, as `{ key: [...], nextCursor }`.
    pub(super) fn paged<T>(
        &self,
        params: &Map<String, Value>,
        key: &str,
        items: &[T],
        shape: impl Fn(&T) -> Value,
    ) -> Result<Value, RpcError> {
        let (items, next) = page(items, cursor(params)?, self.page_size).map_err(bad_cursor)?;
        let mut result = json!({ key: items.iter().map(shape).collect::<Vec<_>>() });
        if let Some(next) = next {
            result["nextCursor"] = next.into();
        }
        Ok(result)
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
