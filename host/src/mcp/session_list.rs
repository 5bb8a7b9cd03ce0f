//! Every initialize-based session of this process, for the operator's console: who the client
//! is, what it may see, what it runs. Stateless requests (2026-07-28) are one request each and
//! are not listed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::SystemTime;

use parking_lot::Mutex;

use super::Session;
use crate::telemetry::{Activity, Topic};

/// One session, as the console lists it.
#[derive(Debug, Clone)]
pub struct SessionView {
    /// Its number in this process (never its `Mcp-Session-Id`, which is a credential).
    pub number: u64,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Who the client is: a token's name, `oauth:SUBJECT`, `stdio`, an address.
    pub client: Arc<str>,
    /// The scope it was given.
    pub scope: String,
    /// The name and version its `initialize` gave, when it was sent.
    pub client_info: Option<(String, String)>,
    /// The protocol revision negotiated.
    pub version: Option<&'static str>,
    /// Its requests in flight.
    pub in_flight: usize,
    /// When it started.
    pub started: SystemTime,
}

/// Every listed session.
pub struct SessionList {
    next: AtomicU64,
    sessions: Mutex<BTreeMap<u64, Weak<Session>>>,
    activity: Arc<Activity>,
}

impl SessionList {
    /// An empty list, telling `activity` when it changes.
    pub fn new(activity: Arc<Activity>) -> SessionList {
        SessionList {
            next: AtomicU64::new(1),
            sessions: Mutex::new(BTreeMap::new()),
            activity,
        }
    }

    /// Lists `session`; its number, to take it off with [`SessionList::remove`].
    pub(super) fn add(&self, session: &Arc<Session>) -> u64 {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        self.sessions.lock().insert(number, Arc::downgrade(session));
        self.activity.changed(Topic::Sessions);
        number
    }

    pub(super) fn remove(&self, number: u64) {
        self.sessions.lock().remove(&number);
        self.activity.changed(Topic::Sessions);
    }

    /// Sessions listed now, oldest first.
    pub fn list(&self) -> Vec<SessionView> {
        let live: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        live.iter().filter_map(|s| s.view()).collect()
    }

    /// How many sessions are listed.
    pub fn len(&self) -> usize {
        self.sessions.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
