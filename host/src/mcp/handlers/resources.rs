//! `resources/list`, `resources/read`, `resources/subscribe` and `unsubscribe`.

use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::catalog::check_cursor;
use crate::mcp::jsonrpc::{INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError};
use crate::mcp::{lists, wire};
use crate::runtime::bindings::types::ErrorCode;
use crate::runtime::{CallError, Plugin, log_safe};

use super::*;

pub(super) async fn list(req: &Request<'_>) -> Result<Value, RpcError> {
    // Listing calls every resource plugin: a request that cannot be answered costs none.
    check_cursor(lists::cursor(req.params)?).map_err(lists::bad_cursor)?;
    let catalog = req.session.server().catalog();
    let plugins: Vec<Arc<Plugin>> = catalog
        .resource_plugins()
        .filter(|p| req.session.scope().allows_plugin(&p.name))
        .cloned()
        .collect();
    // Listed live, every plugin at once: their lists follow the files behind them.
    let listings = join_all(plugins.iter().map(|plugin| async move {
        let roots = req.call_roots(plugin).await;
        let listing = req
            .with_plugin(plugin, async |ctx| plugin.list_resources(ctx).await)
            .await;
        (plugin, listing, roots)
    }))
    .await;
    let mut resources = Vec::new();
    for (plugin, listing, roots) in listings {
        let listing = match listing {
            Ok(listing) => listing,
            Err(e) => {
                tracing::warn!(
                    plugin = &*plugin.name,
                    "listing resources failed: {}",
                    log_safe(&e.to_string())
                );
                continue;
            }
        };
        let accepted = catalog.resources.record_listing(plugin, listing);
        record_files(req, plugin, &accepted, &roots);
        resources.extend(accepted);
    }
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));
    req.session
        .server()
        .paged(req.params, "resources", &resources, |r| {
            wire::resource(r, req.version)
        })
}

/// Notes the host files behind `resources`, so a change to one reaches its subscribers.
fn record_files(
    req: &Request<'_>,
    plugin: &Plugin,
    resources: &[crate::runtime::bindings::resources::Resource],
    roots: &[Root],
) {
    req.session
        .server()
        .record_resource_files(resources.iter().filter_map(|r| {
            let file = plugin.host_path(r.file.as_deref()?, roots)?;
            Some((file, r.uri.clone()))
        }));
}

/// Lists `plugin`'s resources to learn the files behind them, for a subscription made before
/// any `resources/list`: without it, a change to the file would reach no one.
pub(in crate::mcp) async fn learn_files(req: &Request<'_>, plugin: &Arc<Plugin>) {
    let roots = req.call_roots(plugin).await;
    let listing = req
        .with_plugin(plugin, async |ctx| plugin.list_resources(ctx).await)
        .await;
    match listing {
        Ok(listing) => record_files(req, plugin, &listing, &roots),
        Err(e) => tracing::warn!(
            plugin = &*plugin.name,
            "listing resources failed: {}",
            log_safe(&e.to_string())
        ),
    }
}

pub(super) async fn read(req: &Request<'_>) -> Result<Value, RpcError> {
    let uri = string_param(req.params, "uri")?;
    // 2026-07-28 made it invalid params, as JSON-RPC has it.
    let code = if req.version.is_stateless() {
        INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND
    };
    let not_found = || {
        RpcError::new(code, format!("resource not found: {uri}")).with_data(json!({ "uri": uri }))
    };
    let catalog = req
        .session
        .server()
        .catalog_with(None, |c| c.resources.route(uri).is_some())
        .await;
    let plugin = catalog
        .resources
        .route(uri)
        .filter(|p| req.session.scope().allows_plugin(&p.name))
        .ok_or_else(not_found)?;
    let contents = req
        .with_plugin(&plugin, async |ctx| {
            plugin.read_resource(uri.to_string(), ctx).await
        })
        .await;
    match contents {
        Ok(contents) => {
            let contents: Vec<Value> = contents
                .iter()
                .map(|c| wire::resource_contents(c, req.version))
                .collect();
            Ok(json!({ "contents": contents }))
        }
        Err(CallError::Plugin(e)) if e.code == ErrorCode::NotFound => Err(not_found()),
        Err(e) => Err(rpc_error(e, uri)),
    }
}

pub(super) async fn subscribe(req: &Request<'_>, on: bool) -> Result<Value, RpcError> {
    let uri = string_param(req.params, "uri")?;
    if !on {
        req.session.subscriptions().remove(uri);
        req.session.synced().await;
        return Ok(json!({}));
    }
    let routed = req
        .session
        .server()
        .catalog_with(None, |c| c.resources.route(uri).is_some())
        .await
        .resources
        .route(uri)
        .filter(|p| req.session.scope().allows_plugin(&p.name));
    let Some(plugin) = routed else {
        return Err(
            RpcError::new(RESOURCE_NOT_FOUND, format!("resource not found: {uri}"))
                .with_data(json!({ "uri": uri })),
        );
    };
    if !req.session.server().knows_resource_file(uri) {
        learn_files(req, &plugin).await;
    }
    req.session.subscriptions().insert(uri);
    req.session.synced().await;
    Ok(json!({}))
}
