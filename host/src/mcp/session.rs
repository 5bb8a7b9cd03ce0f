//! One client's session: the handshake, dispatch of requests (concurrently), cancellation, and the
//! order rules of the lifecycle. Transports feed it messages and write out what it sends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, RpcError};
use super::version::ProtocolVersion;
use super::{Server, wire};
use crate::catalog::Backend;
use crate::runtime::{CallContext, CallError, PluginEvent};

/// Where a session's outgoing messages go; the transport drains it.
pub type Outbox = mpsc::UnboundedSender<Value>;

/// The work of one request: its response, or `None` when it gets none (cancelled).
type Reply = std::pin::Pin<Box<dyn Future<Output = Option<Value>> + Send>>;

pub struct Session {
    server: Arc<Server>,
    outbox: Outbox,
    version: Mutex<Option<ProtocolVersion>>,
    /// Requests being served, by id, so `notifications/cancelled` can stop them.
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    tasks: TaskTracker,
}

impl Session {
    pub fn new(server: Arc<Server>, outbox: Outbox) -> Arc<Session> {
        Arc::new(Session {
            server,
            outbox,
            version: Mutex::new(None),
            in_flight: Mutex::new(HashMap::new()),
            tasks: TaskTracker::new(),
        })
    }

    /// The negotiated revision, once `initialize` was answered.
    pub fn version(&self) -> Option<ProtocolVersion> {
        *self.version.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Handles one line of the client's: a message, or a batch where the revision allows it.
    pub fn receive(self: &Arc<Self>, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(e) => return self.send(jsonrpc::parse_error(&e)),
        };
        match value {
            Value::Array(batch) => self.receive_batch(batch),
            value => {
                if let Some(reply) = self.accept(value) {
                    let session = self.clone();
                    self.tasks.spawn(async move {
                        if let Some(response) = reply.await {
                            session.send(response);
                        }
                    });
                }
            }
        }
    }

    /// Waits for every request in flight to be answered (or cancelled).
    pub async fn drain(&self) {
        self.tasks.close();
        self.tasks.wait().await;
    }

    /// JSON-RPC batches exist only in 2025-03-26; elsewhere an array is an invalid request.
    fn receive_batch(self: &Arc<Self>, batch: Vec<Value>) {
        if self.version() != Some(ProtocolVersion::V2025_03_26) || batch.is_empty() {
            let why = if batch.is_empty() {
                "an empty batch is not a request"
            } else {
                "JSON-RPC batches are only allowed with protocol 2025-03-26"
            };
            return self.send(jsonrpc::error_response(
                &Value::Null,
                &RpcError::new(INVALID_REQUEST, why),
            ));
        }
        let replies: Vec<_> = batch.into_iter().filter_map(|m| self.accept(m)).collect();
        let session = self.clone();
        self.tasks.spawn(async move {
            let mut responses = Vec::new();
            for reply in replies {
                if let Some(response) = reply.await {
                    responses.push(response);
                }
            }
            if !responses.is_empty() {
                session.send(Value::Array(responses));
            }
        });
    }

    /// Takes one message. Lifecycle checks and cancellation bookkeeping happen here, in arrival
    /// order; the work itself is returned as a future that yields the response, if any.
    fn accept(self: &Arc<Self>, value: Value) -> Option<Reply> {
        let (id, method, params) = match jsonrpc::parse_message(value) {
            Ok(Incoming::Request { id, method, params }) => (id, method, params),
            Ok(Incoming::Notification { method, params }) => {
                self.notification(&method, &params);
                return None;
            }
            Ok(Incoming::Response { id }) => {
                tracing::debug!(%id, "ignoring a response to a request this server never sent");
                return None;
            }
            Err(error) => {
                self.send(error);
                return None;
            }
        };
        let immediate = |result: Result<Value, RpcError>| {
            let response = jsonrpc::reply(&id, result);
            Some(Box::pin(std::future::ready(Some(response))) as Reply)
        };
        if method == "initialize" {
            return immediate(self.initialize(&params));
        }
        let Some(version) = self.version() else {
            if method == "ping" {
                return immediate(Ok(json!({})));
            }
            return immediate(Err(RpcError::new(
                INVALID_REQUEST,
                format!("`{method}` before `initialize`: send `initialize` first"),
            )));
        };
        let key = id.to_string();
        let cancelled = CancellationToken::new();
        {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if in_flight.contains_key(&key) {
                return immediate(Err(RpcError::new(
                    INVALID_REQUEST,
                    format!("request id {id} is already in use by a request in flight"),
                )));
            }
            in_flight.insert(key.clone(), cancelled.clone());
        }
        let session = self.clone();
        Some(Box::pin(async move {
            let work = session.request(version, &method, params, cancelled.clone());
            tokio::pin!(work);
            let outcome = tokio::select! {
                result = &mut work => Some(result),
                _ = cancelled.cancelled() => {
                    // A cancelled request gets no response. Its plugin may see the cancellation
                    // (`is-cancelled`) and stop cleanly within the grace period; then it is
                    // dropped wherever it is.
                    let _ = tokio::time::timeout(CANCEL_GRACE, &mut work).await;
                    None
                }
            };
            session
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key);
            outcome.map(|result| jsonrpc::reply(&id, result))
        }))
    }

    fn notification(&self, method: &str, params: &Map<String, Value>) {
        if self.version().is_none() {
            tracing::debug!(method, "ignoring a notification before initialize");
            return;
        }
        match method {
            "notifications/cancelled" => {
                let Some(id) = params.get("requestId") else {
                    return tracing::debug!("cancellation without requestId");
                };
                let token = self
                    .in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&id.to_string())
                    .cloned();
                match token {
                    Some(token) => {
                        let reason = params.get("reason").and_then(Value::as_str).unwrap_or("");
                        tracing::info!(%id, reason, "request cancelled by the client");
                        token.cancel();
                    }
                    // Already answered, or never seen: the spec says to ignore it.
                    None => tracing::debug!(%id, "cancellation for no request in flight"),
                }
            }
            "notifications/initialized" => tracing::debug!("client initialized"),
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    fn initialize(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let mut version = self.version.lock().unwrap_or_else(|e| e.into_inner());
        if version.is_some() {
            return Err(RpcError::new(
                INVALID_REQUEST,
                "`initialize` was already answered in this session",
            ));
        }
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("params.protocolVersion must be a string"))?;
        if !params.get("capabilities").is_some_and(Value::is_object) {
            return Err(RpcError::invalid_params(
                "params.capabilities must be an object",
            ));
        }
        let negotiated = ProtocolVersion::negotiate(requested);
        let client = params
            .get("clientInfo")
            .and_then(|c| c.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        tracing::info!(client, requested, negotiated = %negotiated, "initialize");
        *version = Some(negotiated);
        Ok(self.server.initialize_result(negotiated))
    }

    async fn request(
        &self,
        version: ProtocolVersion,
        method: &str,
        params: Map<String, Value>,
        cancelled: CancellationToken,
    ) -> Result<Value, RpcError> {
        match method {
            "ping" => Ok(json!({})),
            "tools/list" => self.server.list_tools(&params, version),
            "tools/call" => self.call_tool(version, params, cancelled).await,
            _ => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        }
    }

    async fn call_tool(
        &self,
        version: ProtocolVersion,
        params: Map<String, Value>,
        cancelled: CancellationToken,
    ) -> Result<Value, RpcError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("params.name must be a string"))?;
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::Object(a)) => Value::Object(a.clone()),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.arguments must be an object",
                ));
            }
        };
        let tool = self
            .server
            .catalog
            .tool(name)
            .ok_or_else(|| RpcError::invalid_params(format!("unknown tool: {name}")))?;
        if let Err(errors) = tool.validate(&arguments) {
            return Ok(wire::call_error(&format!(
                "invalid arguments for `{name}`:\n{errors}"
            )));
        }
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        let (events, forwarder) = match progress_token {
            Some(token) => {
                let (tx, rx) = mpsc::unbounded_channel();
                let forwarder =
                    tokio::spawn(forward_progress(token, rx, self.outbox.clone(), version));
                (Some(tx), Some(forwarder))
            }
            None => (None, None),
        };
        let call = CallContext {
            cancelled,
            roots: self.server.roots.clone(),
            events,
        };
        let result = match &tool.backend {
            Backend::Plugin(plugin) => {
                plugin
                    .call_tool(tool.tool.name.clone(), arguments.to_string(), call)
                    .await
            }
            Backend::Native(run) => Ok(run(&arguments)),
        };
        // The call's store, and with it the progress sender, is gone: let the forwarder flush so
        // no progress notification follows the response.
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        match result {
            Ok(result) => Ok(wire::call_result(&result, version)),
            Err(CallError::Plugin(e)) => Ok(wire::call_error(&e.message)),
            Err(CallError::Stopped(why)) => Ok(wire::call_error(&format!(
                "{why}. The plugin was stopped; the server is fine and other calls go on."
            ))),
            Err(CallError::Host(e)) => {
                tracing::error!(tool = name, "host failure: {e:#}");
                Err(RpcError::new(
                    INTERNAL_ERROR,
                    format!("host failure: {e:#}"),
                ))
            }
        }
    }

    fn send(&self, message: Value) {
        // A closed outbox means the transport is gone; there is no one left to tell.
        let _ = self.outbox.send(message);
    }
}

/// How long a cancelled request may go on to stop cleanly before it is dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// Smallest gap between two progress notifications for one request.
const PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// Turns a plugin's progress reports into `notifications/progress`: increasing values only, at
/// most one per [`PROGRESS_INTERVAL`] (the last report always goes out).
async fn forward_progress(
    token: Value,
    mut events: mpsc::UnboundedReceiver<PluginEvent>,
    outbox: Outbox,
    version: ProtocolVersion,
) {
    let mut last_value = f64::NEG_INFINITY;
    let mut last_sent = None::<tokio::time::Instant>;
    let mut pending = None;
    let notify = |progress: f64, total: Option<f64>, message: Option<String>| {
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = total.into();
        }
        if let (Some(message), true) = (message, version >= ProtocolVersion::V2025_03_26) {
            params["message"] = message.into();
        }
        let _ = outbox.send(jsonrpc::notification("notifications/progress", params));
    };
    while let Some(PluginEvent::Progress {
        progress,
        total,
        message,
    }) = events.recv().await
    {
        if !progress.is_finite() || progress <= last_value {
            continue;
        }
        last_value = progress;
        let now = tokio::time::Instant::now();
        if last_sent.is_some_and(|t| now - t < PROGRESS_INTERVAL) {
            pending = Some((progress, total, message));
            continue;
        }
        last_sent = Some(now);
        pending = None;
        notify(progress, total, message);
    }
    if let Some((progress, total, message)) = pending {
        notify(progress, total, message);
    }
}
