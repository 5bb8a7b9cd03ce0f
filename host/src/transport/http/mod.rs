//! MCP over HTTP: Streamable HTTP (revisions 2025-03-26 to 2025-11-25) at `/mcp`.
//!
//! A POST carries client messages; its requests are answered with `application/json` when the
//! response is all there is to send, or with an SSE stream when progress, logs or requests to the
//! client come first. A GET opens the session's standalone stream. Every SSE event has an id, and
//! a client that reconnects with `Last-Event-ID` gets what it missed. Sessions are named by
//! `Mcp-Session-Id`, expire when idle, and end with DELETE.

mod auth;
mod caller;
pub mod client_address;
pub mod conn;
mod error;
pub mod guard;
mod http_session;
mod messages;
mod resource_server;
mod sessions;
mod shared;
mod sse;
mod sse_2024;
mod state;
mod stateless;
mod streams;
mod trace;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
use tower_http::timeout::RequestBodyTimeoutLayer;

use crate::config::Identity;
use crate::mcp::jsonrpc::Incoming;
use crate::mcp::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST};
use crate::mcp::{Accepted, Server, Session, batch_responses};
pub(crate) use auth::bearer_token;
use caller::Caller;
use error::{HttpError, http_error};
use http_session::HttpSession;
use messages::{
    check_session_version, check_stream_request, json_response, posted_message, sessionless,
};
use sessions::{expire_idle_sessions, new_session_id, room_for_session, session_for, session_id};
use sse::{DisconnectGuard, sse};
use state::AppState;
pub use state::HttpOptions;
use streams::{STANDALONE, ServerHistory, Streams};

/// Routes served beside MCP on its listener, made once the listener's OAuth checks exist (the
/// operator's console): they check their own callers.
pub type Mount = Box<dyn FnOnce(Option<Arc<crate::oauth::OAuth>>) -> axum::Router + Send>;

/// Serves MCP over HTTP until the process ends; sessions are shared with the other replicas
/// through `shared`, when given; `mount`'s routes are served beside it.
pub async fn serve(
    server: Arc<Server>,
    options: HttpOptions,
    shared: Option<Arc<crate::cluster::sessions::SharedSessions>>,
    mount: Option<Mount>,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let address = listener.local_addr()?;
    let _ = server.listening.set(address);
    let state_server_requires_tokens = server.access.tokens_required();
    let oauth = match &server.access.oauth {
        Some(settings) => Some(resource_server::start(settings, address)?),
        None => None,
    };
    let state = Arc::new(AppState {
        server,
        sessions: Mutex::new(HashMap::new()),
        sse_2024: Mutex::new(HashMap::new()),
        history: ServerHistory::default(),
        options: options.clone(),
        oauth,
        shared: shared.clone(),
    });
    tokio::spawn(expire_idle_sessions(Arc::downgrade(&state)));
    if let Some(shared) = shared {
        tokio::spawn(shared::hear(Arc::downgrade(&state), shared));
    }
    if let Some(metrics) = &state.server.metrics {
        let weak = Arc::downgrade(&state);
        metrics.count_sessions(Box::new(move || match weak.upgrade() {
            Some(state) => vec![
                ("streamable_http", state.sessions.lock().len() as u64),
                ("http_sse", state.sse_2024.lock().len() as u64),
            ],
            None => Vec::new(),
        }));
    }
    let shutdown = state.server.shutdown.clone();
    let mut app = router(state.clone());
    if let Some(mount) = mount {
        app = app.merge(mount(state.oauth.clone()));
    }
    if !address.ip().is_loopback() && !state_server_requires_tokens {
        tracing::warn!(%address, "listening beyond loopback without [[auth.tokens]]: anyone who can reach this address can use the plugins");
    }
    tracing::info!("serving MCP over HTTP at http://{address}/mcp");
    // The address on stdout's sibling, stderr, for scripts that pass port 0.
    eprintln!("palisade: listening on http://{address}/mcp");
    conn::serve(
        listener,
        app,
        options.header_timeout,
        options.connections.clone(),
        shutdown,
    )
    .await?;
    // Streams ended at once; their requests finish here and their clients read the rest on
    // another replica.
    if let Some(shared) = &state.shared {
        shared::drain(&state, shared).await;
    }
    Ok(())
}

/// The routes, and the layers around them: CORS outermost (a preflight is answered before any
/// check), then the body's size and time limits, then [`caller::CheckCaller`] on every route.
fn router(state: Arc<AppState>) -> axum::Router {
    let options = &state.options;
    let allow = options.allow.clone();
    // Browser clients on an allowed origin need CORS: the preflight, and the session header
    // exposed to their script.
    let cors = CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ORIGIN, origin.clone());
            allow.check_origin(&headers).is_ok()
        }))
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        // Whatever the page asks to send: `Mcp-Param-{name}` headers are named by the tools.
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([HeaderName::from_static("mcp-session-id")]);
    let checked = axum::Router::new()
        .route("/mcp", post(post_mcp).get(get_mcp).delete(delete_mcp))
        .route("/sse", get(sse_2024::open))
        .route("/messages", post(sse_2024::message))
        .route_layer(caller::CheckCallerLayer(state.clone()));
    // Read before a client has a token: how to get one (RFC 9728), at the root and under the
    // MCP endpoint's path.
    let public = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(resource_server::metadata),
        )
        .route(
            "/.well-known/oauth-protected-resource/{*path}",
            get(resource_server::metadata),
        )
        // For load balancers' probes; the plugins' names only on the metrics address.
        .route("/healthz", get(super::health::healthz))
        .route("/readyz", get(readyz));
    checked
        .merge(public)
        .layer(DefaultBodyLimit::max(options.max_body_bytes))
        // A client sending its body a byte at a time is cut off.
        .layer(RequestBodyTimeoutLayer::new(options.body_timeout))
        .layer(cors)
        // A panic in a handler is answered, not a dropped connection.
        .layer(CatchPanicLayer::custom(handler_panicked))
        .with_state(state)
}

/// The answer to a request whose handler panicked: an internal error with an incident id.
fn handler_panicked(payload: Box<dyn std::any::Any + Send>) -> Response {
    let error = crate::mcp::incident::panicked("an HTTP request", &*payload);
    json_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        &jsonrpc::error_response(&Value::Null, &error),
    )
}

async fn post_mcp(
    State(state): State<Arc<AppState>>,
    Caller(identity): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut value = match posted_message(&headers, &body) {
        Ok(value) => value,
        Err(refused) => return refused.into_response(),
    };
    let span = trace::begin(&state.server, &headers, "/mcp", &mut value);
    let response = serve_post(&state, identity, &headers, value)
        .await
        .into_response();
    trace::end(span, response.status());
    response
}

/// A POST to `/mcp`: stateless, `initialize`, or a message of a session.
async fn serve_post(
    state: &Arc<AppState>,
    identity: Identity,
    headers: &HeaderMap,
    value: Value,
) -> Result<Response, HttpError> {
    auth::check_step_up(&state.server, state.oauth.as_deref(), &identity, &value)?;
    if stateless::is_stateless(headers, &value) {
        return Ok(stateless::post(&state.server, headers, identity, value).await);
    }
    // Errors about the POST echo its request's id, when it has a usable one.
    let id = jsonrpc::reply_id(&value);
    check_session_version(headers, &id)?;
    if value.get("method").and_then(Value::as_str) == Some("initialize") {
        return initialize(state, value, identity).await;
    }
    let http_session = session_for(state, headers, &identity, &id).await?;
    let session = &http_session.session;
    let (answered, replies, batch) = match value {
        Value::Array(messages) => {
            let accepted = match session.accept_batch(messages) {
                Ok(accepted) => accepted,
                Err(refused) => return Ok(json_response(StatusCode::BAD_REQUEST, &refused)),
            };
            if accepted.replies.is_empty() {
                return Ok(match accepted.answered.len() {
                    0 => StatusCode::ACCEPTED.into_response(),
                    // Nothing in it was a request: the batch is refused as a whole.
                    n if n == accepted.invalid => {
                        json_response(StatusCode::BAD_REQUEST, &Value::Array(accepted.answered))
                    }
                    _ => json_response(StatusCode::OK, &Value::Array(accepted.answered)),
                });
            }
            (accepted.answered, accepted.replies, true)
        }
        value => match session.accept(value) {
            // Notifications and responses: taken in, nothing to answer.
            Accepted::Nothing => return Ok(StatusCode::ACCEPTED.into_response()),
            Accepted::Invalid(error) => return Ok(json_response(StatusCode::BAD_REQUEST, &error)),
            Accepted::Now(response) => return Ok(json_response(StatusCode::OK, &response)),
            Accepted::Later(id, reply) => (Vec::new(), vec![(id, reply)], false),
        },
    };
    let requests: Vec<Value> = replies.iter().map(|(id, _)| id.clone()).collect();
    let streams = http_session.streams.clone();
    // Opened before the requests' work first runs (when the task below polls it), so all they
    // send goes on this stream.
    let stream = streams.open(&requests);
    // The stream was opened just above, and only finished streams are ever forgotten; should
    // that change, the client gets an error rather than a panicking handler.
    let Some(attached) = streams.attach(stream, None) else {
        return Err(http_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            INTERNAL_ERROR,
            "the request's stream could not be opened",
        ));
    };
    let finishing = streams.clone();
    tokio::spawn(async move {
        let mut responses = batch_responses(answered, replies).await;
        let response = match (batch, responses.len()) {
            (_, 0) => None,
            (true, _) => Some(Value::Array(responses)),
            (false, _) => responses.pop(),
        };
        finishing.finish(stream, response);
    });
    let guard = DisconnectGuard::new(http_session.clone(), stream, attached.listener);
    let Some(mut live) = attached.live else {
        return Ok(StatusCode::ACCEPTED.into_response());
    };
    // The first event decides: the response alone is plain JSON; anything before it means a stream.
    let Some(first) = live.recv().await else {
        guard.disarm();
        return Ok(StatusCode::ACCEPTED.into_response());
    };
    if first.last {
        guard.disarm();
        return Ok(json_response(StatusCode::OK, &first.message));
    }
    // A shared session's stream ends when this replica stops: the client resumes it elsewhere.
    let ends = state
        .shared
        .is_some()
        .then(|| state.server.shutdown.clone());
    Ok(sse(vec![first], Some(live), guard, &state.server, ends))
}

async fn initialize(
    state: &Arc<AppState>,
    value: Value,
    identity: Identity,
) -> Result<Response, HttpError> {
    let (id, method, params) = match jsonrpc::parse_message(value) {
        Ok(Incoming::Request { id, method, params }) => (id, method, params),
        Ok(_) => {
            return Err(http_error(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                "initialize must be a request: it needs an id",
            ));
        }
        Err(error) => return Ok(json_response(StatusCode::BAD_REQUEST, &error)),
    };
    room_for_session(state, &identity.client, &id)?;
    let new_id = new_session_id()?;
    let (streams, session) = match &state.shared {
        Some(shared) => {
            let (streams, outbox) = shared::parts(state, shared, &new_id);
            let session = Session::new(state.server.clone(), outbox, identity);
            shared::share(&session, shared, &new_id);
            (streams, session)
        }
        None => {
            let streams = Arc::new(Streams::new(state.history.clone()));
            (
                streams.clone(),
                Session::new(state.server.clone(), streams, identity),
            )
        }
    };
    let response = match session.accept_incoming(Incoming::Request { id, method, params }) {
        Accepted::Now(response) => response,
        // `initialize` is answered at once; anything else is a bug, not the client's doing.
        _ => {
            session.close();
            return Err(http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
                "initialize was not answered",
            ));
        }
    };
    if response.get("result").is_none() {
        session.close();
        return Ok(json_response(StatusCode::OK, &response));
    }
    let id = new_id;
    if let Some(shared) = &state.shared {
        shared::store_new(shared, &id, &session).await;
    }
    let http_session = Arc::new(HttpSession {
        session,
        streams,
        last_active: Mutex::new(Instant::now()),
    });
    http_session.session.set_transport_id(&id);
    state.sessions.lock().insert(id.clone(), http_session);
    tracing::info!(session = id, "HTTP session started");
    let mut response = json_response(StatusCode::OK, &response);
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("mcp-session-id", value);
    }
    Ok(response)
}

async fn get_mcp(
    State(state): State<Arc<AppState>>,
    Caller(identity): Caller,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    sessionless(&headers)?;
    check_stream_request(&headers)?;
    let http_session = session_for(&state, &headers, &identity, &Value::Null).await?;
    let (stream, after) = match headers
        .get("last-event-id")
        .map(|v| v.to_str().unwrap_or(""))
    {
        None => (STANDALONE, None),
        Some(id) => match streams::parse_event_id(id) {
            Some((stream, seq)) => (stream, Some(seq)),
            None => {
                return Err(http_error(
                    StatusCode::BAD_REQUEST,
                    INVALID_REQUEST,
                    "malformed Last-Event-ID",
                ));
            }
        },
    };
    if let Some(shared) = &state.shared
        && shared::elsewhere(&http_session, stream)
        && let Some(id) = session_id(&headers)
    {
        return shared::resume_elsewhere(&state, shared, &id, stream, after).await;
    }
    let Some(attached) = http_session.streams.attach(stream, after) else {
        return Err(http_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "no such stream: it ended long ago, or the event id is not from this session",
        ));
    };
    if stream == STANDALONE
        && let (Some(shared), Some(id)) = (&state.shared, session_id(&headers))
    {
        // What was said while the client listened nowhere, now that it listens here.
        shared::deliver_mail(shared, &id, &http_session).await;
    }
    let guard = DisconnectGuard::new(http_session, stream, attached.listener);
    // A stream that only waits for what comes next ends when the server stops, so that the
    // client reconnects (with Last-Event-ID) to a server that stays; a request's stream ends
    // with its response (or, for a session replicas share, when this one stops).
    let ends =
        (stream == STANDALONE || state.shared.is_some()).then(|| state.server.shutdown.clone());
    Ok(sse(
        attached.replay,
        attached.live,
        guard,
        &state.server,
        ends,
    ))
}

async fn delete_mcp(
    State(state): State<Arc<AppState>>,
    Caller(identity): Caller,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    sessionless(&headers)?;
    let Some(id) = session_id(&headers) else {
        return Err(http_error(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Mcp-Session-Id header required",
        ));
    };
    let removed = {
        let mut sessions = state.sessions.lock();
        match sessions.get(&id) {
            Some(s) if s.session.client() == &*identity.client => sessions.remove(&id),
            _ => None,
        }
    };
    // A shared session this replica has not served is ended from its record alone.
    let known = match (&removed, &state.shared) {
        (Some(_), _) => true,
        (None, Some(shared)) => shared::find_record(shared, &id, &identity, &Value::Null)
            .await
            .is_ok(),
        (None, None) => false,
    };
    if !known {
        return Err(http_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "unknown or expired session",
        ));
    }
    if let Some(shared) = &state.shared {
        shared.end(&id).await;
    }
    if let Some(http_session) = removed {
        http_session.session.close();
        http_session.streams.close();
    }
    tracing::info!(session = id, "HTTP session ended by the client");
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `/readyz` on the MCP address: the status alone (see `telemetry::health`).
async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let (status, body) = super::health::readiness(&state.server, false);
    json_response(status, &body)
}

#[cfg(test)]
mod router_tests;
