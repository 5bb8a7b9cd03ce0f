//! `completion/complete`.

use serde_json::{Value, json};

use crate::catalog::{Catalog, CompletionTarget};
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::{Session, wire};

use super::*;

pub(super) async fn complete(req: &Request<'_>) -> Result<Value, RpcError> {
    let reference = req
        .params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("params.ref must be an object"))?;
    let target = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            CompletionTarget::Prompt(string_param(reference, "name")?.to_string())
        }
        Some("ref/resource") => {
            CompletionTarget::Resource(string_param(reference, "uri")?.to_string())
        }
        _ => {
            return Err(RpcError::invalid_params(
                "params.ref.type must be \"ref/prompt\" or \"ref/resource\"",
            ));
        }
    };
    let argument = req
        .params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("params.argument must be an object"))?;
    let argument = (
        string_param(argument, "name")?.to_string(),
        string_param(argument, "value")?.to_string(),
    );
    let context: Vec<(String, String)> = req
        .params
        .get("context")
        .and_then(|c| c.get("arguments"))
        .and_then(Value::as_object)
        .map(|args| {
            args.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    // What a plugin still loading may serve is waited for.
    let server = req.session.server();
    let catalog = match &target {
        CompletionTarget::Prompt(name) => {
            (server.catalog_with(Some(name), |c| c.prompt(name).is_some())).await
        }
        CompletionTarget::Resource(uri) => {
            let known = |c: &Catalog| {
                c.resources.template(uri).is_some() || c.resources.route(uri).is_some()
            };
            server.catalog_with(None, known).await
        }
    };
    // Scope first: a routing error ("has no argument") would reveal what is out of scope.
    if !completion_in_scope(req.session, &catalog, &target) {
        return Err(RpcError::invalid_params(match &target {
            CompletionTarget::Prompt(name) => format!("unknown prompt: {name}"),
            CompletionTarget::Resource(uri) => format!("unknown resource template: {uri}"),
        }));
    }
    let route = catalog
        .completion_route(&target, &argument.0)
        .map_err(RpcError::invalid_params)?;
    let Some((plugin, own_target)) = route else {
        // Nothing completes this argument: no suggestions.
        return Ok(json!({ "completion": { "values": [], "total": 0, "hasMore": false } }));
    };
    let result = req
        .with_plugin(&plugin, async |ctx| {
            plugin.complete(own_target, argument, context, ctx).await
        })
        .await
        .map_err(|e| rpc_error(e, "completion"))?;
    Ok(wire::completion_result(&result))
}

/// Whether the prompt or template a completion is about is in the client's scope.
fn completion_in_scope(session: &Session, catalog: &Catalog, target: &CompletionTarget) -> bool {
    let scope = &session.scope();
    match target {
        CompletionTarget::Prompt(name) => catalog
            .prompt(name)
            .is_some_and(|p| Catalog::prompt_in_scope(p, scope)),
        CompletionTarget::Resource(uri) => {
            let owner = match catalog.resources.template(uri) {
                Some(t) => Some(t.plugin.clone()),
                None => catalog.resources.route(uri),
            };
            owner.is_some_and(|p| scope.allows_plugin(&p.name))
        }
    }
}
