//! The client's roots as a session knows them: whether the client has any, the last answer to
//! `roots/list`, and whether an answer is awaited (calls starting then wait for it).

use parking_lot::RwLock;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use super::Session;
use super::asks::{ROOTS_TIMEOUT, Waiter};
use crate::mcp::roots;
use crate::runtime::Root;

/// How long a call for a plugin granted roots waits for the client's `roots/list` answer.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

/// The roots a session's calls get, and where the client's answers stand.
pub(super) struct ClientRoots {
    /// Whether the client declared the `roots` capability.
    declared: AtomicBool,
    /// The roots calls get: the client's, or the server's when the client gives none.
    current: RwLock<Arc<Vec<Root>>>,
    /// Whether the roots are settled: calls wait while a `roots/list` is unanswered.
    state: watch::Sender<RootsState>,
    /// The client's last answer to `roots/list`, as it came (for a shared session's record).
    answer: RwLock<Option<Value>>,
}

impl ClientRoots {
    /// Until the client says otherwise, calls get `server_roots`.
    pub(super) fn new(server_roots: Arc<Vec<Root>>) -> ClientRoots {
        ClientRoots {
            declared: AtomicBool::new(false),
            current: RwLock::new(server_roots),
            state: watch::channel(RootsState::default()).0,
            answer: RwLock::new(None),
        }
    }

    /// What `initialize` said: a client without roots has them settled at once.
    pub(super) fn declare(&self, has_roots: bool) {
        self.declared.store(has_roots, Ordering::Relaxed);
        if !has_roots {
            self.state.send_modify(|state| state.known = true);
        }
    }

    /// Whether the client declared the `roots` capability.
    pub(super) fn declared(&self) -> bool {
        self.declared.load(Ordering::Relaxed)
    }

    /// The client's last answer to `roots/list`.
    pub(super) fn last_answer(&self) -> Option<Value> {
        self.answer.read().clone()
    }

    /// Keeps `answer` as the client's last answer to `roots/list`.
    pub(super) fn remember_answer(&self, answer: Value) {
        *self.answer.write() = Some(answer);
    }
}

/// Where the roots stand.
#[derive(Debug, Clone, Copy, Default)]
struct RootsState {
    /// Known: the client gave them, failed to, or does not have any.
    known: bool,
    /// `roots/list` requests not answered yet.
    outstanding: usize,
}

impl Session {
    /// Asks the client for its roots. Calls that start from now on wait for the answer (a root
    /// change applies to the next call); calls already running keep the roots they had.
    pub(super) fn refresh_roots(self: &Arc<Self>) {
        self.roots.state.send_modify(|state| state.outstanding += 1);
        let key = self.send_request("roots/list", json!({}), Waiter::Roots, None);
        let session = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(ROOTS_TIMEOUT).await;
            let Some(session) = session.upgrade() else {
                return;
            };
            let unanswered = session.asks.forget(&key).is_some();
            if unanswered {
                session.take_roots(Err(format!(
                    "no answer within {} s",
                    ROOTS_TIMEOUT.as_secs()
                )));
            }
        });
    }

    /// Takes the client's answer to a `roots/list`: the last answer is the one in force.
    pub(in crate::mcp) fn take_roots(&self, answer: Result<Value, String>) {
        let roots = match answer {
            Ok(result) => {
                let roots = roots::from_client(&result, self.server.roots_at);
                self.roots.remember_answer(result);
                Some(roots)
            }
            Err(why) => {
                tracing::warn!("cannot get the client's roots, keeping the previous ones: {why}");
                None
            }
        };
        self.roots.state.send_modify(|state| {
            if let Some(roots) = roots {
                *self.roots.current.write() = Arc::new(roots);
            }
            state.outstanding = state.outstanding.saturating_sub(1);
            state.known = true;
        });
    }

    /// The roots a call starting now gets: once the client's pending answers are in (waiting at
    /// most [`ROOTS_WAIT`]).
    pub(in crate::mcp) async fn current_roots(&self) -> Arc<Vec<Root>> {
        let mut state = self.roots.state.subscribe();
        let settled = state.wait_for(|s| s.known && s.outstanding == 0);
        if tokio::time::timeout(ROOTS_WAIT, settled).await.is_err() {
            tracing::warn!("the client has not answered roots/list; using the roots known so far");
        }
        self.roots.current.read().clone()
    }
}
