//! A session that replicas share (`[cluster]`): what another replica needs to serve it (its
//! record, kept in Redis by the transport), and the hooks through which this replica tells the
//! others what changed here or what it had no use for.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::logging::{level_name, parse_level};
use super::{Outbox, Session};
use crate::config::Identity;
use crate::mcp::Server;
use crate::mcp::version::ProtocolVersion;

/// What any replica needs to serve a session it did not start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The client that started it: only the same client may use it.
    pub client: String,
    /// The negotiated revision.
    pub version: String,
    /// The client's capabilities, from `initialize`.
    pub capabilities: Value,
    /// Its `logging/setLevel`.
    pub log_level: String,
    /// Resource URIs it subscribed to.
    pub subscriptions: Vec<String>,
    /// Its last answer to `roots/list`, if any.
    pub roots: Option<Value>,
}

/// A shared session's record names a revision this replica does not serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown revision {0}")]
pub struct UnknownRevision(pub String);

/// A future the other replicas are told through.
pub type Telling = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// How a shared session tells the other replicas.
pub trait SessionSync: Send + Sync {
    /// Its state changed here (log level, subscriptions, roots): stores the new record and
    /// tells the replicas that serve it too. Awaited before the client is answered, so that its
    /// next request, wherever it goes, sees the change.
    fn changed(&self, session: &Session) -> Telling;
    /// A client message this replica had no use for: an answer to a request another replica
    /// made, or the cancellation of a request running on another replica.
    fn unclaimed(&self, session: &Session, message: Value);
}

impl Session {
    /// Shares this session with the other replicas through `sync`; requests of ours to the
    /// client get ids starting with `ask_prefix`, so that an answer finds its replica.
    pub fn share(&self, sync: Arc<dyn SessionSync>, ask_prefix: &str) {
        self.asks.set_prefix(ask_prefix);
        let _ = self.shared.set(sync);
    }

    /// Whether the session is shared with other replicas.
    pub fn is_shared(&self) -> bool {
        self.shared.get().is_some()
    }

    /// What another replica needs to serve it; none before `initialize`.
    pub fn record(&self) -> Option<SessionRecord> {
        let version = self.version()?;
        Some(SessionRecord {
            client: self.identity.client.to_string(),
            version: version.as_str().into(),
            capabilities: self.client_capabilities.get().cloned().unwrap_or_default(),
            log_level: level_name(self.logging.level()).into(),
            subscriptions: self.subscriptions.sorted(),
            roots: self.roots.last_answer(),
        })
    }

    /// A session another replica started, as `record` says, to serve here.
    pub fn resume(
        server: Arc<Server>,
        outbox: Arc<dyn Outbox>,
        identity: Identity,
        record: &SessionRecord,
    ) -> Result<Arc<Session>, UnknownRevision> {
        let version = ProtocolVersion::parse_with_sessions(&record.version)
            .ok_or_else(|| UnknownRevision(record.version.clone()))?;
        let session = Session::new(server, outbox, identity);
        let _ = session.client_capabilities.set(record.capabilities.clone());
        let has_roots = record
            .capabilities
            .get("roots")
            .is_some_and(Value::is_object);
        session.roots.declare(has_roots);
        *session.version.lock() = Some(version);
        session.apply(record);
        Ok(session)
    }

    /// Takes the state another replica stored: log level, subscriptions, roots.
    pub fn apply(&self, record: &SessionRecord) {
        if let Some(level) = parse_level(&record.log_level) {
            self.logging.set_level(level);
        }
        self.subscriptions.replace(&record.subscriptions);
        if let Some(roots) = &record.roots
            && self.roots.last_answer().as_ref() != Some(roots)
        {
            self.take_roots(Ok(roots.clone()));
        }
    }

    /// A client message another replica had no use for: taken if it answers a request of
    /// ours or cancels a request running here; never passed on again.
    pub fn offer(self: &Arc<Self>, message: Value) {
        match crate::mcp::jsonrpc::parse_message(message) {
            Ok(crate::mcp::jsonrpc::Incoming::Response { id, outcome }) => {
                self.take_answer(&id, outcome, false);
            }
            Ok(crate::mcp::jsonrpc::Incoming::Notification { method, params })
                if method == "notifications/cancelled" =>
            {
                if let Some(id) = params.get("requestId") {
                    self.cancel(id, "by the client, through another replica");
                }
            }
            _ => {}
        }
    }

    /// Tells the other replicas that the state changed here, when shared; returns once the
    /// new state is stored.
    pub(in crate::mcp) async fn synced(&self) {
        if let Some(stored) = self.sync_later() {
            stored.await;
        }
    }

    /// [`Session::synced`], to run later: none when the session is not shared.
    pub(in crate::mcp) fn sync_later(&self) -> Option<Telling> {
        self.shared.get().map(|sync| sync.changed(self))
    }

    /// Hands a client message this replica has no use for to the other replicas, when shared.
    pub(in crate::mcp) fn pass_on(&self, message: Value) -> bool {
        match self.shared.get() {
            Some(sync) => {
                sync.unclaimed(self, message);
                true
            }
            None => false,
        }
    }
}
