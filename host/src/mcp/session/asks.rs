//! Requests of ours to the client (`roots/list`, `elicitation/create`, `sampling/createMessage`)
//! in an initialize-based session: sent at once, each answer routed back to who waits for it.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::Session;
use crate::mcp::requests_to_client::{ClientView, answer_timeout, input_request, input_response};
use crate::runtime::bindings::host::{AskError, InputRequest};
use crate::runtime::{ClientChannel, PendingAnswers};

pub(crate) use crate::mcp::requests_to_client::ROOTS_TIMEOUT;

/// Our requests waiting for the client's answer, by id.
#[derive(Default)]
pub(in crate::mcp) struct PendingAsks {
    waiting: Mutex<HashMap<String, Waiter>>,
    next_id: AtomicU64,
    /// What ids start with: `palisade`, or this replica's own prefix in a shared session.
    prefix: std::sync::OnceLock<String>,
}

impl PendingAsks {
    /// A new request id, and its key in the table, with `waiter` waiting for its answer.
    fn wait(&self, waiter: Waiter) -> (String, String) {
        let id = format!(
            "{}-{}",
            self.prefix.get().map_or("palisade", String::as_str),
            self.next_id.fetch_add(1, Ordering::Relaxed) + 1
        );
        let key = Value::String(id.clone()).to_string();
        self.waiting.lock().insert(key.clone(), waiter);
        (id, key)
    }

    /// Ids start with `prefix` from now on.
    pub(super) fn set_prefix(&self, prefix: &str) {
        let _ = self.prefix.set(prefix.to_string());
    }

    /// Who waits for the answer to request `id`, taken out of the table.
    pub(in crate::mcp) fn take(&self, id: &Value) -> Option<Waiter> {
        self.waiting.lock().remove(&id.to_string())
    }

    /// Stops waiting for the request of `key` (it timed out, or was answered).
    pub(super) fn forget(&self, key: &str) -> Option<Waiter> {
        self.waiting.lock().remove(key)
    }
}

/// Who waits for the answer to a request of ours.
pub(in crate::mcp) enum Waiter {
    /// A task, through this channel.
    Reply(oneshot::Sender<Result<Value, Value>>),
    /// The session's roots.
    Roots,
}

impl Session {
    /// Sends a request to the client; its answer goes to `waiter`. Returns the key of the
    /// pending entry.
    pub(super) fn send_request(
        &self,
        method: &str,
        params: Value,
        waiter: Waiter,
        related: Option<&Value>,
    ) -> String {
        let (id, key) = self.asks.wait(waiter);
        self.send_related(
            related,
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        );
        key
    }

    /// Sends a request to the client and waits for its answer: the result, or why there is none.
    pub(in crate::mcp) async fn ask_client(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        related: Option<&Value>,
    ) -> Result<Value, String> {
        let (tx, rx) = oneshot::channel();
        let (id, key) = self.asks.wait(Waiter::Reply(tx));
        self.send_related(
            related,
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        );
        // Dropped before the client answered (the call was cancelled, or an operator answered a
        // grant question in the console): the client is told, so it can close the question.
        let mut outstanding = Outstanding {
            session: self,
            id,
            key: key.clone(),
            related: related.cloned(),
            answered: false,
        };
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
        outstanding.answered = true;
        self.asks.forget(&key);
        outcome
    }
}

/// A request of ours to the client still waiting for its answer.
struct Outstanding<'a> {
    session: &'a Session,
    id: String,
    key: String,
    related: Option<Value>,
    answered: bool,
}

impl Drop for Outstanding<'_> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        self.session.asks.forget(&self.key);
        self.session.send_related(
            self.related.as_ref(),
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": { "requestId": self.id, "reason": "no longer needed: answered elsewhere, or its request ended" },
            }),
        );
    }
}

/// The session, as the client a plugin call may ask (the initialize-based revisions): requests go
/// to the client at once, on the call's request stream.
pub(in crate::mcp) struct SessionClient {
    pub(in crate::mcp) session: Arc<Session>,
    /// The client's request the call serves.
    pub(in crate::mcp) related: Value,
}

impl ClientChannel for SessionClient {
    fn ask(&self, requests: Vec<(String, InputRequest)>) -> PendingAnswers {
        let (session, related) = (self.session.clone(), self.related.clone());
        Box::pin(async move {
            let version = session.version();
            let capabilities = session
                .client_capabilities
                .get()
                .cloned()
                .unwrap_or_default();
            let asked = requests.into_iter().map(|(key, request)| {
                let shaped = match version {
                    Some(version) => input_request(
                        &ClientView {
                            version,
                            capabilities: &capabilities,
                        },
                        request,
                    )
                    .map_err(|e| e.to_string()),
                    None => Err("the session is not initialized".to_string()),
                };
                let (session, related) = (session.clone(), related.clone());
                async move {
                    let answer = async {
                        let (method, params) = shaped?;
                        let result = session
                            .ask_client(method, params, answer_timeout(method), Some(&related))
                            .await?;
                        input_response(method, result)
                    };
                    (key, answer.await.map_err(AskError::Failed))
                }
            });
            futures_util::future::join_all(asked).await
        })
    }
}
