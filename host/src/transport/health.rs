//! Whether the server is alive and ready: `/healthz` answers while the process serves;
//! `/readyz` says whether every configured plugin is loaded (`ready`), some are still loading
//! (`loading`, 503: send traffic elsewhere for now), some failed (`degraded`, 200 with their
//! names: the others serve, and every replica of the same configuration fails the same way), or
//! the server is shutting down (`stopping`, 503).

use std::sync::Arc;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use serde_json::{Value, json};

use crate::mcp::Server;

/// A configured plugin's load state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginState {
    /// Served.
    Ready,
    /// Still loading (compiling) at start.
    Loading,
    /// Configured but not served: it failed to load (the server's log says why).
    Failed,
}

impl PluginState {
    /// The state's name in metrics and in `/readyz`.
    pub fn label(self) -> &'static str {
        match self {
            PluginState::Ready => "ready",
            PluginState::Loading => "loading",
            PluginState::Failed => "failed",
        }
    }
}

/// Every configured plugin and its state, in the configuration's order.
pub fn plugin_states(server: &Server) -> Vec<(Arc<str>, PluginState)> {
    let pending = server.loading.pending_names();
    let catalog = server.catalog();
    server
        .loading
        .configured()
        .into_iter()
        .map(|name| {
            let state = if pending.contains(&name) {
                PluginState::Loading
            } else if catalog.plugins.iter().any(|p| p.name == name) {
                PluginState::Ready
            } else {
                PluginState::Failed
            };
            (name, state)
        })
        .collect()
}

/// `/healthz`: the process answers.
pub async fn healthz() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"status":"alive"}"#,
    )
        .into_response()
}

/// Each configured plugin's state as the metrics label it.
pub fn plugin_state_labels(server: &Server) -> Vec<(Arc<str>, &'static str)> {
    plugin_states(server)
        .into_iter()
        .map(|(name, state)| (name, state.label()))
        .collect()
}

/// `/readyz`: the status code and the body. `detail` lists plugins by name (on the metrics
/// address; the MCP address answers without names).
pub fn readiness(server: &Server, detail: bool) -> (StatusCode, Value) {
    let states = plugin_states(server);
    let named = |wanted: PluginState| -> Vec<&str> {
        states
            .iter()
            .filter(|(_, s)| *s == wanted)
            .map(|(name, _)| &**name)
            .collect()
    };
    let (loading, failed) = (named(PluginState::Loading), named(PluginState::Failed));
    let (status, word) = if server.shutdown.is_stopping() {
        (StatusCode::SERVICE_UNAVAILABLE, "stopping")
    } else if !loading.is_empty() {
        (StatusCode::SERVICE_UNAVAILABLE, "loading")
    } else if !failed.is_empty() {
        (StatusCode::OK, "degraded")
    } else {
        (StatusCode::OK, "ready")
    };
    let mut body = json!({"status": word});
    if detail {
        body["plugins"] = json!(states.len());
        body["loading"] = json!(loading);
        body["failed"] = json!(failed);
    }
    (status, body)
}
