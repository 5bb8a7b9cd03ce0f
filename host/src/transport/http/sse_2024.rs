//! The HTTP+SSE transport of protocol 2024-11-05, for old clients: `GET /sse` opens the stream
//! and names, in an `endpoint` event, where to POST messages; every answer comes on the stream.
//! The session lives as long as the stream.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use serde::Deserialize;

use super::caller::Caller;
use super::error::{HttpError, http_error};
use super::http_session::Sse2024Session;
use super::messages::{check_stream_request, json_response, posted_message};
use super::sessions::room_for_session;
use super::state::AppState;
use crate::mcp::jsonrpc::INVALID_REQUEST;
use crate::mcp::{Accepted, Outbox, Outgoing, Session};
use crate::transport::queue;

/// `GET /sse`
pub(super) async fn open(
    State(state): State<Arc<AppState>>,
    Caller(identity): Caller,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    check_stream_request(&headers)?;
    room_for_session(&state, &identity.client, &serde_json::Value::Null)?;
    let id = super::sessions::new_session_id()?;
    let (sender, receiver) = queue::channel::<String>(queue::MAX_QUEUED_BYTES);
    let overflowed = sender.overflowed();
    let session = Session::new(
        state.server.clone(),
        Arc::new(Sse2024Outbox(sender)),
        identity,
    );
    session.set_transport_id(&id);
    state
        .sse_2024
        .lock()
        .insert(id.clone(), Arc::new(Sse2024Session { session }));
    tracing::info!(session = id, "HTTP+SSE session started");
    let endpoint = Event::default()
        .event("endpoint")
        .data(format!("/messages?sessionId={id}"));
    let closer = Closer {
        state: state.clone(),
        id,
    };
    let messages =
        futures_util::stream::unfold((receiver, closer), |(mut rx, closer)| async move {
            let message = rx.recv().await?;
            let event = Event::default().event("message").data(message);
            Some((event, (rx, closer)))
        });
    // A client that stops reading past the queue's cap is dropped: the stream ends. So does
    // every stream of this transport when the server stops: its client opens a new session.
    let events = futures_util::stream::once(async { endpoint })
        .chain(messages)
        .take_until(overflowed);
    Ok(super::sse::sse_response(
        events,
        &state.server,
        Some(state.server.shutdown.clone()),
    ))
}

#[derive(Deserialize)]
pub(super) struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// `POST /messages?sessionId=...`: takes one message (or a batch); answers come on the stream.
pub(super) async fn message(
    State(state): State<Arc<AppState>>,
    Caller(identity): Caller,
    Query(query): Query<SessionQuery>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, HttpError> {
    let mut value = posted_message(&headers, &body)?;
    // Answered at once (202), its requests on the stream: no span of its own, the header's
    // trace context handed on.
    super::trace::hand_over_header(&headers, &mut value);
    super::auth::check_step_up(&state.server, state.oauth.as_deref(), &identity, &value)?;
    let found = state
        .sse_2024
        .lock()
        .get(&query.session_id)
        .filter(|l| l.session.client() == &*identity.client)
        .cloned();
    let Some(sse) = found else {
        return Err(http_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "unknown or closed session",
        ));
    };
    sse.session.refresh_scope(&identity);
    // Same path as a stdio line: answers go out on the stream. A message that is not JSON-RPC
    // is refused here instead, so the client learns which POST was wrong.
    if value.is_array() {
        sse.session.receive_value(value);
    } else {
        match sse.session.accept(value) {
            Accepted::Invalid(error) => return Ok(json_response(StatusCode::BAD_REQUEST, &error)),
            accepted => sse.session.deliver(accepted),
        }
    }
    Ok(StatusCode::ACCEPTED.into_response())
}

/// Ends the session when its stream goes away.
struct Closer {
    state: Arc<AppState>,
    id: String,
}

impl Drop for Closer {
    fn drop(&mut self) {
        if let Some(sse) = self.state.sse_2024.lock().remove(&self.id) {
            tracing::info!(
                session = self.id,
                "HTTP+SSE session ended: its stream closed"
            );
            sse.session.close();
        }
    }
}

/// An HTTP+SSE session's messages as JSON text, in a queue bounded in bytes.
struct Sse2024Outbox(queue::QueueSender<String>);

impl Outbox for Sse2024Outbox {
    fn send(&self, outgoing: Outgoing) {
        let text = outgoing.message.to_string();
        let len = text.len();
        self.0.send(text, len);
    }
}
