//! `resources/list`, `resources/read`, `resources/subscribe` and `unsubscribe`.

use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::{Map, Value, json};

use crate::catalog::check_cursor;
use crate::mcp::jsonrpc::{INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError};
use crate::mcp::{Session, lists, wire};
use crate::runtime::bindings::types::ErrorCode;
use crate::runtime::{CallError, Plugin};

use super::*;

impl Session {
    pub(super) async fn list_resources(
        self: &Arc<Self>,
        call: Call<'_>,
    ) -> Result<Value, RpcError> {
        // Listing calls every resource plugin: a request that cannot be answered costs none.
        check_cursor(lists::cursor(call.params)?).map_err(lists::bad_cursor)?;
        let catalog = self.server.catalog();
        let plugins: Vec<Arc<Plugin>> = catalog
            .resource_plugins()
            .filter(|p| self.identity.scope.allows_plugin(&p.name))
            .cloned()
            .collect();
        // Listed live, every plugin at once: their lists follow the files behind them.
        let call = &call;
        let listings = join_all(plugins.iter().map(|plugin| async move {
            let roots = self.call_roots(plugin, call).await;
            let listing = self
                .with_plugin(plugin, call, async |ctx| plugin.list_resources(ctx).await)
                .await;
            (plugin, listing, roots)
        }))
        .await;
        let mut resources = Vec::new();
        for (plugin, listing, roots) in listings {
            let listing = match listing {
                Ok(listing) => listing,
                Err(e) => {
                    tracing::warn!(plugin = &*plugin.name, "listing resources failed: {e}");
                    continue;
                }
            };
            let accepted = catalog.resources.record_listing(plugin, listing);
            self.server
                .record_resource_files(accepted.iter().filter_map(|r| {
                    let file = plugin.host_path(r.file.as_deref()?, &roots)?;
                    Some((file, r.uri.clone()))
                }));
            resources.extend(accepted);
        }
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        self.server
            .paged(call.params, "resources", &resources, |r| {
                wire::resource(r, call.version)
            })
    }

    pub(super) async fn read_resource(self: &Arc<Self>, call: Call<'_>) -> Result<Value, RpcError> {
        let uri = string_param(call.params, "uri")?;
        // 2026-07-28 made it invalid params, as JSON-RPC has it.
        let code = if call.version.is_stateless() {
            INVALID_PARAMS
        } else {
            RESOURCE_NOT_FOUND
        };
        let not_found = || {
            RpcError::new(code, format!("resource not found: {uri}"))
                .with_data(json!({ "uri": uri }))
        };
        let catalog = self.server.catalog();
        let plugin = catalog
            .resources
            .route(uri)
            .filter(|p| self.identity.scope.allows_plugin(&p.name))
            .ok_or_else(not_found)?;
        let contents = self
            .with_plugin(&plugin, &call, async |ctx| {
                plugin.read_resource(uri.to_string(), ctx).await
            })
            .await;
        match contents {
            Ok(contents) => {
                let contents: Vec<Value> = contents
                    .iter()
                    .map(|c| wire::resource_contents(c, call.version))
                    .collect();
                Ok(json!({ "contents": contents }))
            }
            Err(CallError::Plugin(e)) if e.code == ErrorCode::NotFound => Err(not_found()),
            Err(e) => Err(rpc_error(e, uri)),
        }
    }

    pub(super) fn subscribe(
        &self,
        params: &Map<String, Value>,
        on: bool,
    ) -> Result<Value, RpcError> {
        let uri = string_param(params, "uri")?;
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if on {
            let routed = self.server.catalog().resources.route(uri);
            if !routed.is_some_and(|p| self.identity.scope.allows_plugin(&p.name)) {
                return Err(RpcError::new(
                    RESOURCE_NOT_FOUND,
                    format!("resource not found: {uri}"),
                )
                .with_data(json!({ "uri": uri })));
            }
            subscriptions.insert(uri.to_string());
        } else {
            subscriptions.remove(uri);
        }
        Ok(json!({}))
    }
}
