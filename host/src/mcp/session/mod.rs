//! One client's session: the handshake, its state, cancellation, and the order rules of the
//! lifecycle. Transports feed it messages (`intake.rs`) and write out what it sends.
//!
//! Each concern is a type of its own with private fields: requests in flight (`in_flight.rs`),
//! the client's roots (`client_roots.rs`), requests of ours waiting for the client's answer
//! (`asks.rs`), its logging (`logging.rs`), its subscriptions (`subscriptions.rs`), the lists
//! it was sent (`listed.rs`), what replicas share (`shared.rs`). `impl Session` is only here;
//! handlers reach the concerns through its accessors.
//!
//! A stateless request (2026-07-28) is a `Session` too ([`Session::stateless`]), not a caller
//! of another kind: it needs everything a session gives a request (the server, the caller's
//! identity and scope, an outbox, requests in flight and their cancellation, plugin events
//! forwarded) and differs only in what a handshake would have negotiated, which its `_meta`
//! carries instead. One type keeps one dispatch path for both revisions.

pub(super) mod asks;
mod client_roots;
pub(super) mod in_flight;
pub mod intake;
mod listed;
pub(super) mod logging;
mod shared;
mod subscriptions;

use parking_lot::Mutex;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{self, INVALID_REQUEST, RpcError};
use super::version::ProtocolVersion;
use super::{Change, Server, wire};
use crate::config::Identity;
use crate::runtime::bindings::host::ListKind;
use asks::PendingAsks;
use client_roots::ClientRoots;
use in_flight::InFlight;
pub use in_flight::{MAX_IN_FLIGHT, SERVER_BUSY};
use listed::Listed;
use logging::ClientLogging;
pub use shared::{SessionRecord, SessionSync, Telling};
use subscriptions::Subscriptions;

/// A message the server sends on its own (not a response the transport is waiting for).
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The JSON-RPC message.
    pub message: Value,
    /// The id of the client's request it belongs to (its progress, its logs, a request to the
    /// client made while serving it): HTTP sends it on that request's stream.
    pub related: Option<Value>,
}

/// Where a session's outgoing messages go. Sending is synchronous, so a request's notifications
/// are in the transport before its response is.
pub trait Outbox: Send + Sync {
    /// Queues `outgoing` for the client.
    fn send(&self, outgoing: Outgoing);

    /// Whether list changes and resource updates are told to the client through this outbox.
    /// A session that replicas share is told them by the replica its client listens on.
    fn hears_changes(&self) -> bool {
        true
    }
}

impl Outbox for mpsc::UnboundedSender<Outgoing> {
    fn send(&self, outgoing: Outgoing) {
        // A closed channel means the transport is gone; there is no one left to tell.
        let _ = mpsc::UnboundedSender::send(self, outgoing);
    }
}

/// One client's conversation with the server: over stdio the process's whole life, over HTTP one `Mcp-Session-Id` (or one stateless request).
pub struct Session {
    server: Arc<Server>,
    outbox: Arc<dyn Outbox>,
    version: Mutex<Option<ProtocolVersion>>,
    /// Requests being served, and the tasks answering them.
    requests: InFlight,
    /// Ends the session's background tasks.
    closed: CancellationToken,
    /// The client's capabilities, from `initialize`.
    client_capabilities: std::sync::OnceLock<Value>,
    /// The roots calls get, and whether the client's answer is awaited.
    roots: ClientRoots,
    /// Requests of ours waiting for the client's answer.
    asks: PendingAsks,
    /// The client's `logging/setLevel`, and the rate of plugins' log messages to it.
    logging: ClientLogging,
    /// Resource URIs the client subscribed to.
    subscriptions: Subscriptions,
    /// Who the client is, as it proved at the session's start.
    identity: Identity,
    /// What it may see and call: the scope of its latest request's token (an OAuth client's
    /// token can change within a session: a step-up adds scopes, a new token may carry fewer).
    scope: parking_lot::RwLock<Arc<crate::config::Scope>>,
    /// The client as rate limits and the audit log count it: the identity's name, made unique
    /// per session for clients nobody vouched for (so anonymous HTTP clients do not share one
    /// allowance).
    caller: Arc<str>,
    /// The client as `reuse = "per-client"` plugins tell clients apart: the token that proved
    /// who it is, else this session; `None` for an anonymous stateless request, which reuses
    /// nothing.
    reuse_key: Option<Arc<str>>,
    /// Serves every request statelessly (2026-07-28), whatever it carries: one HTTP request.
    stateless: bool,
    /// Fired when the session is drained: long-lived requests (`subscriptions/listen`) end.
    shutting_down: CancellationToken,
    /// The lists the client was sent, by catalog generation.
    listed: Listed,
    /// The session's id on its transport (`Mcp-Session-Id`, HTTP+SSE's `sessionId`), for
    /// traces; none over stdio.
    transport_id: std::sync::OnceLock<Arc<str>>,
    /// The other replicas, when the session is shared with them (`shared.rs`).
    shared: std::sync::OnceLock<Arc<dyn SessionSync>>,
    /// Its number in the server's list of sessions (not for stateless requests).
    listed_as: std::sync::OnceLock<u64>,
    /// When it started.
    started: std::time::SystemTime,
    /// The name and version of the client's `initialize`.
    client_info: std::sync::OnceLock<(String, String)>,
}

/// Numbers sessions, so each anonymous one reuses only its own plugin instances.
impl Drop for Session {
    fn drop(&mut self) {
        if let Some(number) = self.listed_as.get() {
            self.server.sessions.remove(*number);
        }
    }
}

static NEXT_SESSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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
        let reuse_key = if identity.authenticated {
            Some(format!("token {}", identity.client).into())
        } else if stateless {
            None
        } else {
            let session = NEXT_SESSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Some(format!("session {session}").into())
        };
        let session = Arc::new(Session {
            listed_as: std::sync::OnceLock::new(),
            started: std::time::SystemTime::now(),
            client_info: std::sync::OnceLock::new(),
            scope: parking_lot::RwLock::new(identity.scope.clone()),
            reuse_key,
            stateless,
            shutting_down: CancellationToken::new(),
            caller,
            identity,
            roots: ClientRoots::new(server.roots.clone()),
            server,
            outbox,
            version: Mutex::new(None),
            requests: InFlight::default(),
            closed: CancellationToken::new(),
            client_capabilities: Default::default(),
            asks: PendingAsks::default(),
            logging: ClientLogging::default(),
            subscriptions: Subscriptions::default(),
            listed: Listed::default(),
            transport_id: std::sync::OnceLock::new(),
            shared: std::sync::OnceLock::new(),
        });
        if !stateless {
            let _ = session.listed_as.set(session.server.sessions.add(&session));
        }
        session
    }

    /// The session as the operator's console lists it.
    pub(super) fn view(&self) -> Option<super::session_list::SessionView> {
        Some(super::session_list::SessionView {
            number: *self.listed_as.get()?,
            transport: match self.network_transport() {
                "pipe" => "stdio",
                _ => "http",
            },
            client: self.identity.client.clone(),
            scope: self.scope().name.clone(),
            client_info: self.client_info.get().cloned(),
            version: self.version().map(|v| v.as_str()),
            in_flight: self.in_flight(),
            started: self.started,
        })
    }

    /// The server this session is served by.
    pub(super) fn server(&self) -> &Arc<Server> {
        &self.server
    }

    /// Who the client is, as it proved at the session's start.
    pub(super) fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The client as rate limits and the audit log count it.
    pub(super) fn caller(&self) -> &Arc<str> {
        &self.caller
    }

    /// Who a task this session creates belongs to, and who alone may see it: the OAuth
    /// subject, else the token, else the session itself (a digest of its `Mcp-Session-Id`
    /// over HTTP); a
    /// stateless request without a token is `anonymous`, and its task id is the only key.
    pub(super) fn task_owner(&self) -> String {
        let identity = &self.identity;
        if let Some(oauth) = &identity.oauth {
            format!("oauth {}", oauth.subject)
        } else if identity.authenticated {
            format!("token {}", identity.client)
        } else if let Some(id) = self.transport_id() {
            // The session id is an anonymous client's only credential: it is not written down
            // (the audit log has owners), only a digest of it.
            use sha2::Digest as _;
            let digest = sha2::Sha256::digest(id.as_bytes());
            format!("session {}", hex::encode(&digest[..12]))
        } else if let Some(key) = &self.reuse_key {
            key.to_string()
        } else {
            "anonymous".into()
        }
    }

    /// The capabilities the client declared in `initialize` (an empty object before).
    pub(super) fn client_capabilities(&self) -> Value {
        self.client_capabilities
            .get()
            .cloned()
            .unwrap_or_else(|| json!({}))
    }

    /// The client as `reuse = "per-client"` plugins tell clients apart.
    pub(super) fn reuse_key(&self) -> Option<Arc<str>> {
        self.reuse_key.clone()
    }

    /// The client's logging level and the rate of plugins' log messages to it.
    pub(super) fn logging(&self) -> &ClientLogging {
        &self.logging
    }

    /// The resource URIs the client subscribed to.
    pub(super) fn subscriptions(&self) -> &Subscriptions {
        &self.subscriptions
    }

    /// The lists the client was sent.
    pub(super) fn listed(&self) -> &Listed {
        &self.listed
    }

    /// Fired when the session is drained: long-lived requests end.
    pub(super) fn shutting_down(&self) -> &CancellationToken {
        &self.shutting_down
    }

    /// What the client may see and call now.
    pub fn scope(&self) -> Arc<crate::config::Scope> {
        self.scope.read().clone()
    }

    /// A request of this session's client came with `identity` (the same client, checked by the
    /// transport): its token's scope is the session's from now on.
    pub fn refresh_scope(&self, identity: &Identity) {
        if !Arc::ptr_eq(&self.scope(), &identity.scope) {
            *self.scope.write() = identity.scope.clone();
        }
    }

    /// Names the session as its transport does (HTTP's `Mcp-Session-Id`).
    pub fn set_transport_id(&self, id: &str) {
        let _ = self.transport_id.set(id.into());
    }

    /// The session's id on its transport, if it has one.
    pub fn transport_id(&self) -> Option<&str> {
        self.transport_id.get().map(|id| &**id)
    }

    /// `network.transport` of the OpenTelemetry conventions: `tcp` (HTTP), `pipe` (stdio).
    pub fn network_transport(&self) -> &'static str {
        if self.stateless || self.transport_id.get().is_some() {
            "tcp"
        } else {
            "pipe"
        }
    }

    /// The client's name (a token's name, `stdio` or `anonymous`).
    pub fn client(&self) -> &str {
        &self.identity.client
    }

    /// The negotiated revision, once `initialize` was answered.
    pub fn version(&self) -> Option<ProtocolVersion> {
        *self.version.lock()
    }

    /// Cancels the request `id` if it is in flight here, as `notifications/cancelled` would;
    /// `why` goes to the log. Whether it was.
    pub fn cancel(&self, id: &Value, why: &str) -> bool {
        match self.requests.token(id) {
            Some(token) => {
                tracing::info!(%id, "request cancelled: {why}");
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Requests of the client being served now.
    pub fn in_flight(&self) -> usize {
        self.requests.len()
    }

    /// Ends the session: every request in flight is cancelled and background work stops.
    pub fn close(&self) {
        self.requests.cancel_all();
        self.closed.cancel();
    }

    /// Ends the session as its client goes away: requests in flight have `grace` to finish and
    /// be answered (subscriptions end at once, with a graceful result), then the rest are
    /// cancelled. Returns when every request is done, or gave up.
    pub async fn finish(&self, grace: Duration) {
        self.shutting_down.cancel();
        self.requests.tasks.close();
        if tokio::time::timeout(grace, self.requests.tasks.wait())
            .await
            .is_err()
        {
            let left = self.requests.len();
            tracing::info!(
                left,
                "cancelling the requests still in flight: the client is gone"
            );
            self.close();
            // A cancelled request is dropped after its own grace (`CANCEL_GRACE`).
            let stopped =
                tokio::time::timeout(in_flight::CANCEL_GRACE * 4, self.requests.tasks.wait()).await;
            if stopped.is_err() {
                tracing::warn!("requests did not stop after cancellation; leaving them");
            }
        }
        self.closed.cancel();
    }

    pub(super) fn notification(self: &Arc<Self>, method: &str, params: &Map<String, Value>) {
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
                let reason = params.get("reason").and_then(Value::as_str).unwrap_or("");
                if self.cancel(id, &format!("by the client ({reason})")) {
                    return;
                }
                // Running on another replica, perhaps.
                let notification =
                    jsonrpc::notification("notifications/cancelled", Value::Object(params.clone()));
                if !self.pass_on(notification) {
                    // Already answered, or never seen: the spec says to ignore it.
                    tracing::debug!(%id, "cancellation for no request in flight");
                }
            }
            "notifications/initialized" => {
                tracing::debug!("client initialized");
                if self.roots.declared() {
                    self.refresh_roots();
                }
            }
            "notifications/roots/list_changed" => {
                if self.roots.declared() {
                    self.refresh_roots();
                } else {
                    tracing::debug!("roots/list_changed from a client that declared no roots");
                }
            }
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    pub(super) fn initialize(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let mut version = self.version.lock();
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
        let info = |key: &str| {
            let text = params
                .get("clientInfo")
                .and_then(|c| c.get(key))
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            // Shown to operators: a name, not a document.
            text.chars().take(128).collect::<String>()
        };
        let (client, client_version) = (info("name"), info("version"));
        tracing::info!(client, requested, negotiated = %negotiated, "initialize");
        let _ = self.client_info.set((client, client_version));
        let _ = self
            .client_capabilities
            .set(params.get("capabilities").cloned().unwrap_or_default());
        let has_roots = params
            .get("capabilities")
            .and_then(|c| c.get("roots"))
            .is_some_and(Value::is_object);
        self.roots.declare(has_roots);
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
        if session.version().is_none() || !session.outbox.hears_changes() {
            continue;
        }
        let list_changed = |kind: ListKind| {
            session.send(jsonrpc::notification(
                wire::list_changed_method(kind),
                json!({}),
            ));
        };
        match change {
            Ok(Change::ListChanged(kind)) => list_changed(kind),
            // A client that has not listed it since will see it whole when it does.
            Ok(Change::ListGrew(kind, generation))
                if session.listed.older_than(kind, generation) =>
            {
                list_changed(kind)
            }
            Ok(Change::ListGrew(..)) => {}
            Ok(Change::ResourceUpdated(uri)) => {
                if session.subscriptions.contains(&uri) {
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
