//! What plugins report during a call, forwarded to the client: progress for the request, log
//! messages at the client's level, resource updates and list changes.

use std::sync::Arc;
use std::time::Duration;

/// Matching work (URI bytes times template bytes) done on the async worker itself; more runs on
/// a blocking thread, so a plugin's long URIs and templates never stall other requests.
const MATCH_INLINE_STEPS: u64 = 64 * 1024;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::jsonrpc;
use super::version::ProtocolVersion;
use super::{Change, Session};
use crate::runtime::bindings::host::{ListKind, LogLevel};
use crate::runtime::{Plugin, PluginEvent};

/// Smallest gap between two progress notifications for one request.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// Forwards the events of one call until the call ends (its sender is dropped).
pub(super) async fn forward(
    session: Arc<Session>,
    plugin: Arc<Plugin>,
    progress_token: Option<Value>,
    request: Value,
    mut events: mpsc::UnboundedReceiver<PluginEvent>,
    version: ProtocolVersion,
    log_level: Option<LogLevel>,
) {
    let mut progress = ProgressFilter::default();
    while let Some(event) = events.recv().await {
        match event {
            PluginEvent::Progress {
                progress: value,
                total,
                message,
            } => {
                if let Some(token) = &progress_token
                    && let Some(report) = progress.take(value, total, message)
                {
                    session.send_related(
                        Some(&request),
                        progress_notification(token, report, version),
                    );
                }
            }
            PluginEvent::Log { level, message } => {
                // No level asked for (a stateless request without one): no log messages.
                if let Some(threshold) = log_level {
                    for message in
                        session
                            .logging()
                            .plugin_message(&plugin.name, level, threshold, message)
                    {
                        session.send_related(Some(&request), message);
                    }
                }
            }
            PluginEvent::ResourceUpdated(uri) => {
                // A plugin speaks only for the resources it serves; matching its templates is
                // bounded per call by the runtime, and a costly match runs off the workers.
                let catalog = session.server().catalog();
                let cost = (uri.len() as u64).saturating_mul(plugin.template_bytes());
                let serves = if cost < MATCH_INLINE_STEPS {
                    catalog.resources.serves(&plugin.name, &uri)
                } else {
                    let (name, checked) = (plugin.name.clone(), uri.clone());
                    tokio::task::spawn_blocking(move || catalog.resources.serves(&name, &checked))
                        .await
                        .unwrap_or(false)
                };
                if serves {
                    session
                        .server()
                        .announce_from(&plugin.name, Change::ResourceUpdated(uri));
                } else {
                    tracing::warn!(
                        plugin = &*plugin.name,
                        uri = crate::catalog::shown(&uri),
                        "update of a resource it does not serve ignored"
                    );
                }
            }
            PluginEvent::ListChanged(ListKind::Resources) => session
                .server()
                .announce_from(&plugin.name, Change::ListChanged(ListKind::Resources)),
            // Tool and prompt lists are read when a plugin loads: list it again.
            PluginEvent::ListChanged(kind) => {
                session.server().tell_cluster(Some(
                    super::cluster_events::ClusterEvent::ListChanged {
                        plugin: plugin.name.to_string(),
                        list: super::cluster_events::list_name(kind).into(),
                    },
                ));
                session.server().request_relist(plugin.name.clone(), kind)
            }
        }
    }
    if let (Some(token), Some(report)) = (&progress_token, progress.pending.take()) {
        session.send_related(
            Some(&request),
            progress_notification(token, report, version),
        );
    }
}

type ProgressReport = (f64, Option<f64>, Option<String>);

/// Keeps progress increasing and at most one report per [`PROGRESS_INTERVAL`]; the last report
/// held back is sent when the call ends.
#[derive(Default)]
struct ProgressFilter {
    last_value: Option<f64>,
    last_sent: Option<Instant>,
    pending: Option<ProgressReport>,
}

impl ProgressFilter {
    fn take(
        &mut self,
        value: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Option<ProgressReport> {
        if !value.is_finite() || self.last_value.is_some_and(|last| value <= last) {
            return None;
        }
        self.last_value = Some(value);
        let now = Instant::now();
        if self.last_sent.is_some_and(|t| now - t < PROGRESS_INTERVAL) {
            self.pending = Some((value, total, message));
            return None;
        }
        self.last_sent = Some(now);
        self.pending = None;
        Some((value, total, message))
    }
}

fn progress_notification(
    token: &Value,
    (progress, total, message): ProgressReport,
    v: ProtocolVersion,
) -> Value {
    let mut params = json!({ "progressToken": token, "progress": progress });
    if let Some(total) = total {
        params["total"] = total.into();
    }
    if let (Some(message), true) = (message, v >= ProtocolVersion::V2025_03_26) {
        params["message"] = message.into();
    }
    jsonrpc::notification("notifications/progress", params)
}
