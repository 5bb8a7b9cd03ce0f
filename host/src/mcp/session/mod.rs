//! One client's session: the handshake, dispatch of requests (concurrently), cancellation, and the
//! order rules of the lifecycle. Transports feed it messages and write out what it sends.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::handlers::SESSION_METHODS;
use super::jsonrpc::{self, INVALID_REQUEST, Incoming, RpcError};
use super::plugin_events::LogGate;
use super::stateless::list_changed_method;
use super::stateless::meta::{self, RequestMeta};
use super::version::ProtocolVersion;
use super::{Change, Server, roots};
use crate::config::Identity;
use crate::runtime::bindings::host::{ListKind, LogLevel};
use crate::runtime::sandbox::Root;

/// A message the server sends on its own (not a response the transport is waiting for).
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub message: Value,
    /// The id of the client's request it belongs to (its progress, its logs, a request to the
    /// client made while serving it): HTTP sends it on that request's stream.
    pub related: Option<Value>,
}

/// Where a session's outgoing messages go. Sending is synchronous, so a request's notifications
/// are in the transport before its response is.
pub trait Outbox: Send + Sync {
    fn send(&self, outgoing: Outgoing);
}

impl Outbox for mpsc::UnboundedSender<Outgoing> {
    fn send(&self, outgoing: Outgoing) {
        // A closed channel means the transport is gone; there is no one left to tell.
        let _ = mpsc::UnboundedSender::send(self, outgoing);
    }
}

/// Requests one session may have in flight at once; more are refused with [`SERVER_BUSY`].
pub const MAX_IN_FLIGHT: usize = 128;
/// JSON-RPC's range for server errors: too many requests in flight.
pub const SERVER_BUSY: i64 = -32000;

/// The work of one request: its response, or `None` when it gets none (cancelled).
pub type Reply = std::pin::Pin<Box<dyn Future<Output = Option<Value>> + Send>>;

/// What taking one message gives the transport.
pub enum Accepted {
    /// Nothing to answer: a notification, or a response to a request of ours.
    Nothing,
    /// Not a JSON-RPC message at all: the error response to send (HTTP answers it with 400).
    Invalid(Value),
    /// A request answered at once (refused, or needing no work): its response.
    Now(Value),
    /// A request being served: its id, and the work that yields its response.
    Later(Value, Reply),
}

/// What taking a batch gives: its responses known at once, and its requests being served.
#[derive(Default)]
pub struct BatchAccepted {
    pub answered: Vec<Value>,
    /// How many of `answered` are about elements that were not JSON-RPC messages.
    pub invalid: usize,
    pub replies: Vec<(Value, Reply)>,
}

impl Accepted {
    fn now(id: &Value, result: Result<Value, RpcError>) -> Accepted {
        Accepted::Now(jsonrpc::reply(id, result))
    }
}

/// The work of one request before it is framed as a response.
type Work = std::pin::Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send>>;

/// How long the server waits for the client's roots.
pub(super) const ROOTS_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a call for a plugin granted roots waits for the client's `roots/list` answer.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

pub struct Session {
    pub(super) server: Arc<Server>,
    outbox: Arc<dyn Outbox>,
    version: Mutex<Option<ProtocolVersion>>,
    /// Requests being served, by id, so `notifications/cancelled` can stop them.
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    tasks: TaskTracker,
    /// Ends the session's background tasks.
    closed: CancellationToken,
    /// Whether the client declared the `roots` capability.
    client_has_roots: std::sync::atomic::AtomicBool,
    /// The client's capabilities, from `initialize`.
    pub(super) client_capabilities: std::sync::OnceLock<Value>,
    /// The roots calls get: the client's, or the server's when the client gives none.
    roots: RwLock<Arc<Vec<Root>>>,
    /// Whether the roots are settled: calls wait while a `roots/list` is unanswered.
    roots_state: watch::Sender<RootsState>,
    /// Requests of ours waiting for the client's answer, by id.
    pending: Mutex<HashMap<String, Waiter>>,
    next_request_id: AtomicU64,
    /// The client's `logging/setLevel`.
    pub(super) log_level: Mutex<LogLevel>,
    pub(super) log_gate: LogGate,
    /// Resource URIs the client subscribed to.
    pub(super) subscriptions: Mutex<HashSet<String>>,
    /// Who the client is and what it may see and call.
    pub(super) identity: Identity,
    /// The client as rate limits and the audit log count it: the identity's name, made unique
    /// per session for clients nobody vouched for (so anonymous HTTP clients do not share one
    /// allowance).
    pub(super) caller: Arc<str>,
    /// Serves every request statelessly (2026-07-28), whatever it carries: one HTTP request.
    stateless: bool,
    /// Fired when the session is drained: long-lived requests (`subscriptions/listen`) end.
    pub(super) shutting_down: CancellationToken,
}

impl Session {
    /// A connection that may open an initialize-based session (stdio, or one Streamable HTTP
    /// session), and also takes stateless requests.
    pub fn new(server: Arc<Server>, outbox: Arc<dyn Outbox>, identity: Identity) -> Arc<Session> {
        let changes = server.subscribe_changes();
        // An anonymous HTTP client is named by its address (see the HTTP transport), so its
        // rates are shared by all its sessions.
        let caller = identity.client.clone();
        let session = Session::build(server, outbox, identity, caller, false);
        tokio::spawn(forward_changes(
            Arc::downgrade(&session),
            changes,
            session.closed.clone(),
        ));
        session
    }

    /// A context for one stateless request (2026-07-28 over HTTP): no handshake, no changes
    /// forwarded outside `subscriptions/listen`, and clients nobody vouched for count as one.
    pub fn stateless(
        server: Arc<Server>,
        outbox: Arc<dyn Outbox>,
        identity: Identity,
    ) -> Arc<Session> {
        let caller = identity.client.clone();
        Session::build(server, outbox, identity, caller, true)
    }

    fn build(
        server: Arc<Server>,
        outbox: Arc<dyn Outbox>,
        identity: Identity,
        caller: Arc<str>,
        stateless: bool,
    ) -> Arc<Session> {
        Arc::new(Session {
            stateless,
            shutting_down: CancellationToken::new(),
            caller,
            identity,
            roots: RwLock::new(server.roots.clone()),
            server,
            outbox,
            version: Mutex::new(None),
            in_flight: Mutex::new(HashMap::new()),
            tasks: TaskTracker::new(),
            closed: CancellationToken::new(),
            client_has_roots: Default::default(),
            client_capabilities: Default::default(),
            roots_state: watch::channel(RootsState::default()).0,
            pending: Mutex::new(HashMap::new()),
            next_request_id: AtomicU64::new(1),
            // No level set: info and above, as most servers do.
            log_level: Mutex::new(LogLevel::Info),
            log_gate: LogGate::default(),
            subscriptions: Mutex::new(HashSet::new()),
        })
    }

    /// The client's name (a token's name, `stdio` or `anonymous`).
    pub fn client(&self) -> &str {
        &self.identity.client
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
        match serde_json::from_slice(line) {
            Ok(value) => self.receive_value(value),
            Err(e) => self.send(jsonrpc::parse_error(&e)),
        }
    }

    /// Handles one parsed message (or batch); every answer goes to the outbox.
    pub fn receive_value(self: &Arc<Self>, value: Value) {
        match value {
            Value::Array(batch) => self.receive_batch(batch),
            value => {
                let accepted = self.accept(value);
                self.deliver(accepted);
            }
        }
    }

    /// Sends what taking a message gave to the outbox: an answer known at once now (before
    /// the next message is taken, so a client waiting for each answer sees them in the order
    /// it sent), a request's response when its work is done.
    pub fn deliver(self: &Arc<Self>, accepted: Accepted) {
        match accepted {
            Accepted::Nothing => {}
            Accepted::Invalid(response) | Accepted::Now(response) => self.send(response),
            Accepted::Later(_, reply) => {
                let session = self.clone();
                self.tasks.spawn(async move {
                    if let Some(response) = reply.await {
                        session.send(response);
                    }
                });
            }
        }
    }

    /// Cancels the request `id` if it is in flight, as `notifications/cancelled` would.
    pub fn cancel(&self, id: &Value) {
        if let Some(token) = self.in_flight_token(id) {
            tracing::info!(%id, "request cancelled: its client is gone");
            token.cancel();
        }
    }

    fn in_flight_token(&self, id: &Value) -> Option<CancellationToken> {
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id.to_string())
            .cloned()
    }

    /// Ends the session: every request in flight is cancelled and background work stops.
    pub fn close(&self) {
        for token in self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            token.cancel();
        }
        self.closed.cancel();
    }

    /// Ends the session as its client goes away: requests in flight have `grace` to finish and
    /// be answered (subscriptions end at once, with a graceful result), then the rest are
    /// cancelled. Returns when every request is done, or gave up.
    pub async fn finish(&self, grace: Duration) {
        self.shutting_down.cancel();
        self.tasks.close();
        if tokio::time::timeout(grace, self.tasks.wait())
            .await
            .is_err()
        {
            let left = self
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .len();
            tracing::info!(
                left,
                "cancelling the requests still in flight: the client is gone"
            );
            self.close();
            // A cancelled request is dropped after its own grace (`CANCEL_GRACE`).
            let stopped = tokio::time::timeout(CANCEL_GRACE * 4, self.tasks.wait()).await;
            if stopped.is_err() {
                tracing::warn!("requests did not stop after cancellation; leaving them");
            }
        }
        self.closed.cancel();
    }

    fn receive_batch(self: &Arc<Self>, batch: Vec<Value>) {
        let BatchAccepted {
            answered, replies, ..
        } = match self.accept_batch(batch) {
            Ok(accepted) => accepted,
            Err(refused) => return self.send(refused),
        };
        if replies.is_empty() {
            if !answered.is_empty() {
                self.send(Value::Array(answered));
            }
            return;
        }
        let session = self.clone();
        self.tasks.spawn(async move {
            let responses = batch_responses(answered, replies).await;
            // Every request was cancelled: JSON-RPC sends no empty array.
            if !responses.is_empty() {
                session.send(Value::Array(responses));
            }
        });
    }

    /// Takes every message of a batch: the responses known at once (errors for invalid
    /// elements among them), and the requests being served. JSON-RPC batches exist only in
    /// 2025-03-26, and an empty one is no request: those are refused whole, with the error
    /// response to send.
    pub fn accept_batch(self: &Arc<Self>, batch: Vec<Value>) -> Result<BatchAccepted, Value> {
        let refused = if batch.is_empty() {
            Some("an empty batch is not a request")
        } else if self.version() != Some(ProtocolVersion::V2025_03_26) {
            Some("JSON-RPC batches are only allowed with protocol 2025-03-26")
        } else {
            None
        };
        if let Some(why) = refused {
            return Err(jsonrpc::error_response(
                &Value::Null,
                &RpcError::new(INVALID_REQUEST, why),
            ));
        }
        let mut accepted = BatchAccepted::default();
        for message in batch {
            match self.accept(message) {
                Accepted::Nothing => {}
                Accepted::Invalid(response) => {
                    accepted.invalid += 1;
                    accepted.answered.push(response);
                }
                Accepted::Now(response) => accepted.answered.push(response),
                Accepted::Later(id, reply) => accepted.replies.push((id, reply)),
            }
        }
        Ok(accepted)
    }

    /// Takes one message. Lifecycle checks and cancellation bookkeeping happen here, in arrival
    /// order; the work itself is returned as a future that yields the response, if any.
    pub fn accept(self: &Arc<Self>, value: Value) -> Accepted {
        match jsonrpc::parse_message(value) {
            Ok(incoming) => self.accept_incoming(incoming),
            Err(error) => Accepted::Invalid(error),
        }
    }

    /// [`Session::accept`] for a message already parsed.
    pub fn accept_incoming(self: &Arc<Self>, incoming: Incoming) -> Accepted {
        let (id, method, params) = match incoming {
            Incoming::Request { id, method, params } => (id, method, params),
            Incoming::Notification { method, params } => {
                self.notification(&method, &params);
                return Accepted::Nothing;
            }
            Incoming::Response { id, outcome } => {
                let waiting = self
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id.to_string());
                match waiting {
                    Some(Waiter::Reply(waiting)) => {
                        let _ = waiting.send(outcome);
                    }
                    // Taken in here, in the order the client answers, before the next message.
                    Some(Waiter::Roots) => self.take_roots(outcome.map_err(|e| e.to_string())),
                    None => tracing::debug!(%id, "ignoring a response to no request of ours"),
                }
                return Accepted::Nothing;
            }
        };
        let immediate = |result: Result<Value, RpcError>| Accepted::now(&id, result);
        if self.stateless || meta::is_stateless_request(&method, &params) {
            if meta::unknown_method(&method, meta::requested_version(&params)) {
                return immediate(Err(RpcError::method_not_found(
                    &method,
                    "the stateless revision",
                )));
            }
            let meta = match RequestMeta::parse(&params) {
                Ok(meta) => meta,
                Err(e) => return immediate(Err(e)),
            };
            let version = match meta.version() {
                Ok(version) => version,
                Err(e) => return immediate(Err(e)),
            };
            let session = self.clone();
            return self.in_flight_reply(id, move |id, cancelled| {
                Box::pin(async move {
                    session
                        .stateless_request(meta, version, &id, &method, params, cancelled)
                        .await
                })
            });
        }
        if !SESSION_METHODS.contains(&method.as_str()) {
            return immediate(Err(RpcError::method_not_found(&method, "this session")));
        }
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
        let session = self.clone();
        self.in_flight_reply(id, move |id, cancelled| {
            Box::pin(async move {
                session
                    .request(version, &id, &method, params, cancelled, None)
                    .await
            })
        })
    }

    /// Runs the work of request `id` as a request in flight: cancellable by id, answered unless
    /// cancelled.
    fn in_flight_reply(
        self: &Arc<Self>,
        id: Value,
        work: impl FnOnce(Value, CancellationToken) -> Work + Send + 'static,
    ) -> Accepted {
        let key = id.to_string();
        let cancelled = CancellationToken::new();
        {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if in_flight.len() >= MAX_IN_FLIGHT {
                let error = RpcError::new(
                    SERVER_BUSY,
                    format!(
                        "{MAX_IN_FLIGHT} requests of this session are in flight, as many as it \
                         may have; send more when some are answered"
                    ),
                );
                return Accepted::now(&id, Err(error));
            }
            if in_flight.contains_key(&key) {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    format!("request id {id} is already in use by a request in flight"),
                );
                return Accepted::now(&id, Err(error));
            }
            in_flight.insert(key.clone(), cancelled.clone());
        }
        let session = self.clone();
        let reply_id = id.clone();
        Accepted::Later(
            reply_id,
            Box::pin(async move {
                let work = work(id.clone(), cancelled.clone());
                tokio::pin!(work);
                let outcome = tokio::select! {
                    // Cancellation first: work that ends because it was cancelled (a subscription)
                    // must not be answered either.
                    biased;
                    _ = cancelled.cancelled() => {
                        // A cancelled request gets no response. Its plugin may see the cancellation
                        // (`is-cancelled`) and stop cleanly within the grace period; then it is
                        // dropped wherever it is.
                        let _ = tokio::time::timeout(CANCEL_GRACE, &mut work).await;
                        None
                    }
                    result = &mut work => Some(result),
                };
                session
                    .in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                outcome.map(|result| jsonrpc::reply(&id, result))
            }),
        )
    }

    fn notification(self: &Arc<Self>, method: &str, params: &Map<String, Value>) {
        // Stateless requests are cancelled without any handshake.
        if self.version().is_none() && method != "notifications/cancelled" {
            tracing::debug!(method, "ignoring a notification before initialize");
            return;
        }
        match method {
            "notifications/cancelled" => {
                let Some(id) = params.get("requestId") else {
                    return tracing::debug!("cancellation without requestId");
                };
                match self.in_flight_token(id) {
                    Some(token) => {
                        let reason = params.get("reason").and_then(Value::as_str).unwrap_or("");
                        tracing::info!(%id, reason, "request cancelled by the client");
                        token.cancel();
                    }
                    // Already answered, or never seen: the spec says to ignore it.
                    None => tracing::debug!(%id, "cancellation for no request in flight"),
                }
            }
            "notifications/initialized" => {
                tracing::debug!("client initialized");
                if self.client_has_roots.load(Ordering::Relaxed) {
                    self.refresh_roots();
                }
            }
            "notifications/roots/list_changed" => {
                if self.client_has_roots.load(Ordering::Relaxed) {
                    self.refresh_roots();
                } else {
                    tracing::debug!("roots/list_changed from a client that declared no roots");
                }
            }
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
        let _ = self
            .client_capabilities
            .set(params.get("capabilities").cloned().unwrap_or_default());
        let has_roots = params
            .get("capabilities")
            .and_then(|c| c.get("roots"))
            .is_some_and(Value::is_object);
        self.client_has_roots.store(has_roots, Ordering::Relaxed);
        if !has_roots {
            self.roots_state.send_modify(|state| state.known = true);
        }
        *version = Some(negotiated);
        Ok(self.server.initialize_result(negotiated))
    }

    pub(super) fn send(&self, message: Value) {
        self.send_related(None, message);
    }

    /// Sends a message that belongs to the client's request `related`.
    pub(super) fn send_related(&self, related: Option<&Value>, message: Value) {
        self.outbox.send(Outgoing {
            message,
            related: related.cloned(),
        });
    }

    /// Sends a request to the client; its answer goes to `waiter`. Returns the key of the
    /// pending entry.
    fn send_request(
        &self,
        method: &str,
        params: Value,
        waiter: Waiter,
        related: Option<&Value>,
    ) -> String {
        let id = format!(
            "palisade-{}",
            self.next_request_id.fetch_add(1, Ordering::Relaxed)
        );
        let key = Value::String(id.clone()).to_string();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), waiter);
        self.send_related(
            related,
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        );
        key
    }

    /// Sends a request to the client and waits for its answer: the result, or why there is none.
    pub(super) async fn ask_client(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        related: Option<&Value>,
    ) -> Result<Value, String> {
        let (tx, rx) = oneshot::channel();
        let key = self.send_request(method, params, Waiter::Reply(tx), related);
        let outcome = tokio::select! {
            answer = rx => match answer {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(error)) => Err(format!("the client answered {method} with an error: {error}")),
                Err(_) => Err(format!("{method}: the session ended")),
            },
            _ = tokio::time::sleep(timeout) => {
                Err(format!("the client did not answer {method} within {} s", timeout.as_secs()))
            }
            _ = self.closed.cancelled() => Err(format!("{method}: the session ended")),
        };
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        outcome
    }

    /// Asks the client for its roots. Calls that start from now on wait for the answer (a root
    /// change applies to the next call); calls already running keep the roots they had.
    fn refresh_roots(self: &Arc<Self>) {
        self.roots_state.send_modify(|state| state.outstanding += 1);
        let key = self.send_request("roots/list", json!({}), Waiter::Roots, None);
        let session = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(ROOTS_TIMEOUT).await;
            let Some(session) = session.upgrade() else {
                return;
            };
            let unanswered = session
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key)
                .is_some();
            if unanswered {
                session.take_roots(Err(format!(
                    "no answer within {} s",
                    ROOTS_TIMEOUT.as_secs()
                )));
            }
        });
    }

    /// Takes the client's answer to a `roots/list`: the last answer is the one in force.
    fn take_roots(&self, answer: Result<Value, String>) {
        let roots = match answer {
            Ok(result) => Some(roots::from_client(&result)),
            Err(why) => {
                tracing::warn!("cannot get the client's roots, keeping the previous ones: {why}");
                None
            }
        };
        self.roots_state.send_modify(|state| {
            if let Some(roots) = roots {
                *self.roots.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(roots);
            }
            state.outstanding = state.outstanding.saturating_sub(1);
            state.known = true;
        });
    }

    /// The roots a call starting now gets: once the client's pending answers are in (waiting at
    /// most [`ROOTS_WAIT`]).
    pub(super) async fn current_roots(&self) -> Arc<Vec<Root>> {
        let mut state = self.roots_state.subscribe();
        let settled = state.wait_for(|s| s.known && s.outstanding == 0);
        if tokio::time::timeout(ROOTS_WAIT, settled).await.is_err() {
            tracing::warn!("the client has not answered roots/list; using the roots known so far");
        }
        self.roots.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A batch's responses: those known at once, then those of its requests, as they finish.
pub async fn batch_responses(mut answered: Vec<Value>, replies: Vec<(Value, Reply)>) -> Vec<Value> {
    let replies = replies.into_iter().map(|(_, reply)| reply);
    answered.extend(
        futures_util::future::join_all(replies)
            .await
            .into_iter()
            .flatten(),
    );
    answered
}

/// Who waits for the answer to a request of ours.
enum Waiter {
    /// A task, through this channel.
    Reply(oneshot::Sender<Result<Value, Value>>),
    /// The session's roots.
    Roots,
}

/// Where the roots stand.
#[derive(Debug, Clone, Copy, Default)]
struct RootsState {
    /// Known: the client gave them, failed to, or does not have any.
    known: bool,
    /// `roots/list` requests not answered yet.
    outstanding: usize,
}

/// Tells the client about list changes and updates of resources it subscribed to, from the
/// moment it is initialized until the session ends.
async fn forward_changes(
    session: Weak<Session>,
    mut changes: broadcast::Receiver<Change>,
    closed: CancellationToken,
) {
    loop {
        let change = tokio::select! {
            change = changes.recv() => change,
            _ = closed.cancelled() => return,
        };
        let Some(session) = session.upgrade() else {
            return;
        };
        if session.version().is_none() {
            continue;
        }
        let list_changed = |kind: ListKind| {
            session.send(jsonrpc::notification(list_changed_method(kind), json!({})));
        };
        match change {
            Ok(Change::ListChanged(kind)) => list_changed(kind),
            Ok(Change::ResourceUpdated(uri)) => {
                let subscribed = session
                    .subscriptions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(&uri);
                if subscribed {
                    session.send(jsonrpc::notification(
                        "notifications/resources/updated",
                        json!({ "uri": uri }),
                    ));
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                // Too many changes at once: say everything may have changed.
                tracing::warn!(
                    missed,
                    "session fell behind on changes; sending every list_changed"
                );
                for kind in [ListKind::Tools, ListKind::Resources, ListKind::Prompts] {
                    list_changed(kind);
                }
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// How long a cancelled request may go on to stop cleanly before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_millis(250);
