//! Streamable HTTP for the stateless revision (2026-07-28): one POST per request, no session.
//!
//! Headers mirror the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and
//! `Mcp-Param-{name}` for tool parameters marked `x-mcp-header`) so load balancers can route on
//! them; they are checked against the body before anything runs, so a router and this server
//! never act on different values. The response is JSON, or an SSE stream when notifications come
//! before it; closing that stream cancels the request.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures_util::StreamExt as _;
use serde_json::{Map, Value};

use super::error::http_error;
use super::messages::{json_response, json_text_response};
use super::sse::sse_response;
use crate::config::Identity;
use crate::mcp::jsonrpc::{self, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, RpcError};
use crate::mcp::stateless::meta::{
    HEADER_MISMATCH, META_PROTOCOL_VERSION, MISSING_CLIENT_CAPABILITY, RequestMeta,
    UNSUPPORTED_PROTOCOL_VERSION, is_stateless_request, requested_version, unknown_method,
};
use crate::mcp::version::ProtocolVersion;
use crate::mcp::{Accepted, Outbox, Outgoing, Server, Session};
use crate::transport::queue;

/// Whether a POST is a stateless request: its version header names no initialize-based revision,
/// or its body says it is one.
pub fn is_stateless(headers: &HeaderMap, body: &Value) -> bool {
    if let Some(version) = headers.get("mcp-protocol-version") {
        let version = version.to_str().unwrap_or("").trim();
        if ProtocolVersion::parse_with_sessions(version).is_none() {
            return true;
        }
    }
    let method = body.get("method").and_then(Value::as_str).unwrap_or("");
    match body.get("params").and_then(Value::as_object) {
        Some(params) => is_stateless_request(method, params),
        None => is_stateless_request(method, &Map::new()),
    }
}

/// Serves one stateless POST.
pub async fn post(
    server: &Arc<Server>,
    headers: &HeaderMap,
    identity: Identity,
    body: Value,
) -> Response {
    if body.is_array() {
        return http_error(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "one JSON-RPC message per POST: 2026-07-28 has no batches",
        )
        .into_response();
    }
    let (id, method, params) = match jsonrpc::parse_message(body) {
        Ok(Incoming::Request { id, method, params }) => (id, method, params),
        // No client notification exists in this revision over HTTP: taken, and nothing to do.
        Ok(Incoming::Notification { .. }) => return StatusCode::ACCEPTED.into_response(),
        Ok(Incoming::Response { .. }) => {
            return http_error(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                "a POST carries a JSON-RPC request: clients send no responses in 2026-07-28",
            )
            .into_response();
        }
        Err(error) => return json_response(StatusCode::BAD_REQUEST, &error),
    };
    // The version asked for: `_meta`'s, else the header's (a mismatch is reported below).
    let requested = requested_version(&params).map(str::to_string).or_else(|| {
        headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
    });
    if unknown_method(&method, requested.as_deref()) {
        let error = RpcError::method_not_found(&method, "the stateless revision");
        return rpc_error(StatusCode::NOT_FOUND, &id, error);
    }
    // The order the specification implies: `_meta` first, then the headers against it, then
    // whether the version is served, then the other headers.
    let checked = RequestMeta::parse(&params)
        .and_then(|meta| check_version_header(headers, &meta).map(|()| meta))
        .and_then(|meta| meta.version())
        .and_then(|_| check_standard_headers(headers, &method, &params));
    let checked = match checked {
        Ok(()) => check_param_headers(server, headers, &method, &params).await,
        Err(error) => Err(error),
    };
    if let Err(error) = checked {
        return rpc_error(StatusCode::BAD_REQUEST, &id, error);
    }
    respond(server, identity, Incoming::Request { id, method, params }).await
}

/// Runs the request; answers with its response as JSON, or with an SSE stream when
/// notifications come first.
async fn respond(server: &Arc<Server>, identity: Identity, request: Incoming) -> Response {
    let (frames, mut received) = queue::channel(queue::MAX_QUEUED_BYTES);
    let stream = Arc::new(RequestStream(frames.clone()));
    let overflowed = frames.overflowed();
    let session = Session::stateless(server.clone(), stream, identity);
    let reply = match session.accept_incoming(request) {
        Accepted::Later(_, reply) => reply,
        Accepted::Now(response) => return json_response(status_of(&response), &response),
        Accepted::Invalid(error) => return json_response(StatusCode::BAD_REQUEST, &error),
        Accepted::Nothing => return StatusCode::ACCEPTED.into_response(),
    };
    tokio::spawn(async move {
        if let Some(response) = reply.await {
            // Serialized once: its length is what the queue counts, its text what is sent.
            let status = status_of(&response);
            let body = response.to_string();
            let len = body.len();
            frames.send(Frame::Last { status, body }, len);
        }
    });
    // Dropped with the response (or the handler, when the client leaves first): the request is
    // cancelled unless its response went out.
    let guard = CancelOnDrop(Some(session));
    match received.recv().await {
        Some(Frame::Last { status, body }) => {
            guard.disarm();
            json_text_response(status, body)
        }
        Some(Frame::Note(first)) => sse(first, received, guard, overflowed, server),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// What the request's session sends on its stream, as JSON text.
enum Frame {
    /// A notification about the request (progress, logs, subscription events).
    Note(String),
    /// The response, which ends the stream, and the HTTP status it gets when sent alone.
    Last { status: StatusCode, body: String },
}

/// A request's messages, in a queue bounded in bytes: a client that stops reading a long
/// stream (a subscription) is dropped rather than buffered for.
struct RequestStream(queue::QueueSender<Frame>);

impl Outbox for RequestStream {
    fn send(&self, outgoing: Outgoing) {
        // A closed stream means the client left; the request is being cancelled.
        let text = outgoing.message.to_string();
        let len = text.len();
        self.0.send(Frame::Note(text), len);
    }
}

/// Cancels the request when the client goes away before its response.
struct CancelOnDrop(Option<Arc<Session>>);

impl CancelOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(session) = self.0.take() {
            tracing::info!("HTTP client closed a request's stream: cancelling the request");
            session.close();
        }
    }
}

/// The request's stream: `first`, then what the request sends until its response. A client
/// that stops reading past the queue's cap is dropped (`overflowed`), which cancels the request.
fn sse(
    first: String,
    received: queue::QueueReceiver<Frame>,
    guard: CancelOnDrop,
    overflowed: tokio_util::sync::WaitForCancellationFutureOwned,
    server: &Server,
) -> Response {
    let rest = futures_util::stream::unfold(
        (Some(received), Some(guard)),
        |(received, guard)| async move {
            let mut received = received?;
            match received.recv().await? {
                Frame::Note(note) => Some((note, (Some(received), guard))),
                Frame::Last { body, .. } => {
                    if let Some(guard) = guard {
                        guard.disarm();
                    }
                    Some((body, (None, None)))
                }
            }
        },
    );
    let events = futures_util::stream::once(async { first })
        .chain(rest)
        .take_until(overflowed)
        .map(|message| Event::default().data(message));
    sse_response(events, server, None)
}

/// The HTTP status of a response sent as plain JSON.
fn status_of(response: &Value) -> StatusCode {
    match response
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
    {
        Some(METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(HEADER_MISMATCH | MISSING_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION) => {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

fn rpc_error(status: StatusCode, id: &Value, error: RpcError) -> Response {
    json_response(status, &jsonrpc::error_response(id, &error))
}

fn mismatch(message: String) -> RpcError {
    RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

/// One header's value, trimmed of surrounding spaces and tabs; `None` when absent. More than one,
/// or characters outside visible ASCII, space and tab, are a mismatch.
fn header(headers: &HeaderMap, name: &str) -> Result<Option<String>, RpcError> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(mismatch(format!("{name} is sent more than once")));
    }
    let value = value
        .to_str()
        .ok()
        .filter(|v| v.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b)))
        .ok_or_else(|| mismatch(format!("{name} has characters a header value cannot carry")))?;
    Ok(Some(value.trim_matches([' ', '\t']).to_string()))
}

/// A header value in the `=?base64?...?=` form decoded; any other value as it is.
fn decode(name: &str, value: &str) -> Result<String, RpcError> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Ok(value.to_string());
    };
    BASE64
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| mismatch(format!("{name} is not valid Base64 of UTF-8 text")))
}

fn check_version_header(headers: &HeaderMap, meta: &RequestMeta) -> Result<(), RpcError> {
    match header(headers, "mcp-protocol-version")? {
        None => Err(mismatch("MCP-Protocol-Version is required".into())),
        Some(version) if version != meta.requested => Err(mismatch(format!(
            "MCP-Protocol-Version header value '{version}' does not match body value '{}' \
             (params._meta[\"{META_PROTOCOL_VERSION}\"])",
            meta.requested
        ))),
        Some(_) => Ok(()),
    }
}

/// `Mcp-Method` on every request, `Mcp-Name` on those about a named tool, prompt or resource.
fn check_standard_headers(
    headers: &HeaderMap,
    method: &str,
    params: &Map<String, Value>,
) -> Result<(), RpcError> {
    match header(headers, "mcp-method")? {
        None => return Err(mismatch("Mcp-Method is required".into())),
        Some(value) if value != method => {
            return Err(mismatch(format!(
                "Mcp-Method header value '{value}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return Ok(()),
    };
    let body = params
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default();
    match header(headers, "mcp-name")? {
        None => Err(mismatch(format!("Mcp-Name is required for {method}"))),
        Some(value) => {
            let value = decode("Mcp-Name", &value)?;
            if value == body {
                Ok(())
            } else {
                Err(mismatch(format!(
                    "Mcp-Name header value '{}' does not match body value '{}'",
                    value.escape_debug(),
                    body.escape_debug()
                )))
            }
        }
    }
}

/// `Mcp-Param-{name}` for every parameter of the tool marked `x-mcp-header`: present exactly when
/// the arguments have a value there, and equal to it.
async fn check_param_headers(
    server: &Server,
    headers: &HeaderMap,
    method: &str,
    params: &Map<String, Value>,
) -> Result<(), RpcError> {
    if method != "tools/call" {
        return Ok(());
    }
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // A tool of a plugin still loading is checked once it is ready.
    let catalog = server
        .catalog_with(Some(name), |c| c.tool(name).is_some())
        .await;
    // An unknown tool is the call's own error, reported as such.
    let Some(tool) = catalog.tool(name) else {
        return Ok(());
    };
    let arguments = params.get("arguments").unwrap_or(&Value::Null);
    for param in &tool.header_params {
        let header_name = format!("mcp-param-{}", param.name.to_ascii_lowercase());
        let shown = format!("Mcp-Param-{}", param.name);
        let sent = header(headers, &header_name)?
            .map(|v| decode(&shown, &v))
            .transpose()?;
        match (param.expected(arguments), sent) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "{shown} is required: the tool mirrors argument `{}` into it",
                    param.path.join(".")
                )));
            }
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "{shown} is sent but the arguments have no `{}`",
                    param.path.join(".")
                )));
            }
            (Some(value), Some(sent)) if !param.matches(&sent, &value) => {
                return Err(mismatch(format!(
                    "{shown} header value '{}' does not match body value {value}",
                    sent.escape_debug()
                )));
            }
            (Some(_), Some(_)) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn stateless_posts_are_told_apart_from_session_ones() {
        let session = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
        assert!(!is_stateless(&headers(&[]), &session));
        assert!(!is_stateless(
            &headers(&[("mcp-protocol-version", "2025-11-25")]),
            &session
        ));
        assert!(is_stateless(
            &headers(&[("mcp-protocol-version", "2026-07-28")]),
            &session
        ));
        assert!(is_stateless(
            &headers(&[("mcp-protocol-version", "v999")]),
            &session
        ));
        let discover = json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover" });
        assert!(is_stateless(&headers(&[]), &discover));
        let with_meta = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": { "_meta": { META_PROTOCOL_VERSION: "2026-07-28" } } });
        assert!(is_stateless(&headers(&[]), &with_meta));
    }

    #[test]
    fn standard_headers_must_match_the_body() {
        let call = params(json!({ "name": "greet" }));
        let ok = |h: &[(&str, &str)]| check_standard_headers(&headers(h), "tools/call", &call);
        assert!(ok(&[("mcp-method", "tools/call"), ("mcp-name", "greet")]).is_ok());
        assert!(ok(&[("MCP-METHOD", "tools/call"), ("Mcp-Name", "  greet\t")]).is_ok());
        assert!(
            ok(&[
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?Z3JlZXQ=?=")
            ])
            .is_ok()
        );
        for bad in [
            vec![("mcp-name", "greet")],
            vec![("mcp-method", "TOOLS/CALL"), ("mcp-name", "greet")],
            vec![("mcp-method", "tools/call")],
            vec![("mcp-method", "tools/call"), ("mcp-name", "other")],
            vec![
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?Z3JlZXQ?="),
            ],
            vec![
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?Z3J!!lZXQ=?="),
            ],
            vec![
                ("mcp-method", "tools/call"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "greet"),
            ],
        ] {
            assert_eq!(ok(&bad).unwrap_err().code, HEADER_MISMATCH, "{bad:?}");
        }
        // Values that merely look like the sentinel are literal.
        let literal = params(json!({ "name": "=?base64?SGVsbG8=" }));
        assert!(
            check_standard_headers(
                &headers(&[
                    ("mcp-method", "prompts/get"),
                    ("mcp-name", "=?base64?SGVsbG8=")
                ]),
                "prompts/get",
                &literal
            )
            .is_ok()
        );
    }

    #[test]
    fn the_version_header_must_match_meta() {
        let meta = RequestMeta::parse(&params(json!({ "_meta": {
            META_PROTOCOL_VERSION: "v999",
            "io.modelcontextprotocol/clientCapabilities": {},
        }})))
        .unwrap();
        let mismatch =
            check_version_header(&headers(&[("mcp-protocol-version", "2026-07-28")]), &meta);
        assert_eq!(mismatch.unwrap_err().code, HEADER_MISMATCH);
        assert_eq!(
            check_version_header(&headers(&[]), &meta).unwrap_err().code,
            HEADER_MISMATCH
        );
        assert!(check_version_header(&headers(&[("mcp-protocol-version", "v999")]), &meta).is_ok());
    }

    #[test]
    fn statuses_follow_the_error() {
        let error = |code: i64| json!({ "jsonrpc": "2.0", "id": 1, "error": { "code": code, "message": "" } });
        assert_eq!(status_of(&error(-32601)), StatusCode::NOT_FOUND);
        assert_eq!(status_of(&error(-32021)), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(&error(-32602)), StatusCode::OK);
        assert_eq!(
            status_of(&json!({ "jsonrpc": "2.0", "id": 1, "result": {} })),
            StatusCode::OK
        );
    }
}
