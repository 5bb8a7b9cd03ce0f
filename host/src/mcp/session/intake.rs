//! Taking the client's messages: what each one is (a request, a notification, a response to a
//! request of ours, a batch, or nothing valid), where it goes (the session's own lifecycle, the
//! handlers, or the stateless revision), and the reply the transport frames.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::asks::Waiter;
use super::{Session, in_flight};
use crate::mcp::handlers::{self, SESSION_METHODS};
use crate::mcp::incident;
use crate::mcp::jsonrpc::{self, INVALID_REQUEST, Incoming, RpcError};
use crate::mcp::stateless::{
    self,
    meta::{self, RequestMeta},
};
use crate::mcp::version::ProtocolVersion;

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
    /// Responses known at once: refusals, and errors for elements that were not messages.
    pub answered: Vec<Value>,
    /// How many of `answered` are about elements that were not JSON-RPC messages.
    pub invalid: usize,
    /// The requests being served: each one's id and the work that answers it.
    pub replies: Vec<(Value, Reply)>,
}

impl Accepted {
    fn now(id: &Value, result: Result<Value, RpcError>) -> Accepted {
        Accepted::Now(jsonrpc::reply(id, result))
    }
}

/// The work of one request before it is framed as a response.
type Work = std::pin::Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send>>;

impl Session {
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
                self.requests.tasks.spawn(async move {
                    if let Some(response) = reply.await {
                        session.send(response);
                    }
                });
            }
        }
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
        self.requests.tasks.spawn(async move {
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
                self.take_answer(&id, outcome, true);
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
                    stateless::serve(&session, meta, version, &id, &method, params, cancelled).await
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
                handlers::dispatch(&session, version, &id, &method, params, cancelled, None).await
            })
        })
    }

    /// The client's answer to our request `id`: to who waits for it here, else (`pass_on`, a
    /// shared session) to the other replicas.
    pub(super) fn take_answer(&self, id: &Value, outcome: Result<Value, Value>, pass_on: bool) {
        match self.asks.take(id) {
            Some(Waiter::Reply(waiting)) => {
                let _ = waiting.send(outcome);
            }
            // Taken in here, in the order the client answers, before the next message.
            Some(Waiter::Roots) => {
                self.take_roots(outcome.map_err(|e| e.to_string()));
                if let Some(stored) = self.sync_later() {
                    tokio::spawn(stored);
                }
            }
            // Only what may answer another replica's question (our ids all start so) is
            // passed on: anything else the client sends is nobody's.
            None if pass_on
                && self.is_shared()
                && id.as_str().is_some_and(|id| id.starts_with("palisade-")) =>
            {
                let message = match outcome {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                };
                self.pass_on(message);
            }
            None => tracing::debug!(%id, "ignoring a response to no request of ours"),
        }
    }

    /// Runs the work of request `id` as a request in flight: cancellable by id, answered unless
    /// cancelled.
    fn in_flight_reply(
        self: &Arc<Self>,
        id: Value,
        work: impl FnOnce(Value, CancellationToken) -> Work + Send + 'static,
    ) -> Accepted {
        let (key, cancelled) = match self.requests.begin(&id) {
            Ok(begun) => begun,
            Err(error) => return Accepted::now(&id, Err(error)),
        };
        let session = self.clone();
        let reply_id = id.clone();
        Accepted::Later(
            reply_id,
            Box::pin(async move {
                // A panic anywhere in the work (the host's code, a library's) is answered as an
                // internal error, never with silence; what the work held is dropped as it
                // unwinds.
                let work = AssertUnwindSafe(work(id.clone(), cancelled.clone()))
                    .catch_unwind()
                    .map(|outcome| {
                        outcome.unwrap_or_else(|payload| {
                            Err(incident::panicked("a request", &*payload))
                        })
                    });
                tokio::pin!(work);
                let outcome = tokio::select! {
                    // Cancellation first: work that ends because it was cancelled (a subscription)
                    // must not be answered either.
                    biased;
                    _ = cancelled.cancelled() => {
                        // A cancelled request gets no response. Its plugin may see the cancellation
                        // (`is-cancelled`) and stop cleanly within the grace period; then it is
                        // dropped wherever it is.
                        let _ = tokio::time::timeout(in_flight::CANCEL_GRACE, &mut work).await;
                        None
                    }
                    result = &mut work => Some(result),
                };
                session.requests.end(&key);
                outcome.map(|result| jsonrpc::reply(&id, result))
            }),
        )
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use tokio::sync::mpsc;

    use super::*;
    use crate::catalog::Catalog;
    use crate::config::{AccessConfig, Identity};
    use crate::mcp::jsonrpc::METHOD_NOT_FOUND;
    use crate::mcp::session::Outgoing;
    use crate::mcp::stateless::input_round::StateSettings;
    use crate::mcp::stateless::request_state::StateKey;
    use crate::mcp::{Server, wire};

    /// A session on a server with no plugins, and what it sends on its own.
    fn new_session() -> (Arc<Session>, mpsc::UnboundedReceiver<Outgoing>) {
        let settings = StateSettings {
            key: StateKey::from_secret(&"k".repeat(32)).unwrap(),
            ttl: Duration::from_secs(60),
        };
        let catalog = Catalog::new(Vec::new(), Vec::new()).unwrap();
        let server = Server::new(
            catalog,
            50,
            Default::default(),
            AccessConfig::default(),
            settings,
            crate::grants::UserGrants::beside(None),
            Default::default(),
        );
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Session::new(server, Arc::new(tx), Identity::anonymous()),
            rx,
        )
    }

    fn request(id: u64, method: &str, params: Value) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
    }

    fn initialize(session: &Arc<Session>, version: &str) {
        let params = json!({ "protocolVersion": version, "capabilities": {},
                             "clientInfo": { "name": "t", "version": "1" } });
        let Accepted::Now(answer) = session.accept(request(0, "initialize", params)) else {
            panic!("initialize is answered at once");
        };
        assert_eq!(answer["result"]["protocolVersion"], version);
    }

    fn error_code(accepted: Accepted) -> i64 {
        match accepted {
            Accepted::Now(answer) | Accepted::Invalid(answer) => {
                answer["error"]["code"].as_i64().expect("an error response")
            }
            _ => panic!("expected an answer at once"),
        }
    }

    #[tokio::test]
    async fn requests_before_initialize_are_refused_but_ping_is_answered() {
        let (session, _) = new_session();
        assert_eq!(
            error_code(session.accept(request(1, "tools/list", json!({})))),
            INVALID_REQUEST
        );
        let Accepted::Now(pong) = session.accept(request(2, "ping", json!({}))) else {
            panic!("ping is answered at once");
        };
        assert_eq!(pong, json!({ "jsonrpc": "2.0", "id": 2, "result": {} }));
    }

    #[tokio::test]
    async fn an_unknown_method_is_method_not_found_before_and_after_initialize() {
        let (session, _) = new_session();
        assert_eq!(
            error_code(session.accept(request(1, "tools/frob", json!({})))),
            METHOD_NOT_FOUND
        );
        initialize(&session, "2025-06-18");
        assert_eq!(
            error_code(session.accept(request(2, "tools/frob", json!({})))),
            METHOD_NOT_FOUND
        );
    }

    #[tokio::test]
    async fn a_request_is_served_later_and_answered_with_its_id() {
        let (session, _) = new_session();
        initialize(&session, "2025-06-18");
        let Accepted::Later(id, reply) = session.accept(request(7, "tools/list", json!({}))) else {
            panic!("tools/list is work for later");
        };
        assert_eq!(id, json!(7));
        let answer = reply.await.expect("answered");
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["tools"], json!([]));
    }

    #[tokio::test]
    async fn a_panic_while_serving_a_request_is_answered_with_an_incident_id() {
        let (session, _) = new_session();
        let panicking = |_: Value, _: CancellationToken| -> Work {
            Box::pin(async {
                tokio::task::yield_now().await;
                panic!("on purpose, in a test")
            })
        };
        let Accepted::Later(_, reply) = session.in_flight_reply(json!(9), panicking) else {
            panic!("the work is for later");
        };
        let answer = tokio::spawn(reply)
            .await
            .expect("the task itself ends")
            .expect("answered");
        assert_eq!(answer["id"], 9, "{answer}");
        assert_eq!(answer["error"]["code"], jsonrpc::INTERNAL_ERROR, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("(incident "), "{message}");
        assert!(
            !message.contains("on purpose"),
            "the panic's text is the operator's: {message}"
        );
        // The request ended: its id is free again.
        assert!(matches!(
            session.in_flight_reply(json!(9), panicking),
            Accepted::Later(..)
        ));
    }

    #[tokio::test]
    async fn a_response_to_no_request_of_ours_and_a_notification_give_nothing() {
        let (session, _) = new_session();
        let response = json!({ "jsonrpc": "2.0", "id": "palisade-99", "result": {} });
        assert!(matches!(session.accept(response), Accepted::Nothing));
        let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        assert!(matches!(session.accept(note), Accepted::Nothing));
    }

    #[tokio::test]
    async fn batches_are_refused_outside_2025_03_26_and_empty_ones_always() {
        let (session, _) = new_session();
        initialize(&session, "2025-06-18");
        let refused = session
            .accept_batch(vec![request(1, "ping", json!({}))])
            .err()
            .expect("refused");
        assert_eq!(refused["error"]["code"], INVALID_REQUEST);
        assert_eq!(refused["id"], Value::Null);

        let (session, _) = new_session();
        initialize(&session, "2025-03-26");
        assert!(session.accept_batch(Vec::new()).is_err());
        let Ok(accepted) = session.accept_batch(vec![
            request(1, "ping", json!({})),
            json!(3),
            request(2, "tools/list", json!({})),
        ]) else {
            panic!("a 2025-03-26 batch is taken");
        };
        assert_eq!(accepted.invalid, 1);
        assert_eq!(
            accepted.answered.len(),
            1,
            "the invalid element, answered at once"
        );
        assert_eq!(accepted.replies.len(), 2, "the ping and tools/list, served");
        let responses = batch_responses(accepted.answered, accepted.replies).await;
        let ids: Vec<&Value> = responses.iter().map(|r| &r["id"]).collect();
        assert_eq!(ids, [&Value::Null, &json!(1), &json!(2)]);
    }

    #[tokio::test]
    async fn list_changes_reach_an_initialized_client() {
        let (session, mut sent) = new_session();
        initialize(&session, "2025-06-18");
        session.server.replace_catalog(
            Catalog::new(Vec::new(), Vec::new()).unwrap(),
            &[crate::runtime::bindings::host::ListKind::Tools],
        );
        let outgoing = tokio::time::timeout(Duration::from_secs(5), sent.recv())
            .await
            .expect("sent in time")
            .expect("sent");
        assert_eq!(
            outgoing.message["method"],
            wire::list_changed_method(crate::runtime::bindings::host::ListKind::Tools)
        );
    }
}
