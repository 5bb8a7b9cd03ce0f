//! What an MCP request over HTTP must carry (its headers, a JSON body), and how answers are
//! written.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::error::{HttpError, http_error};
use super::guard::{self, Refused};
use super::sessions::session_id;
use crate::mcp::jsonrpc::{INVALID_REQUEST, PARSE_ERROR};
use crate::mcp::version::ProtocolVersion;

/// GET and DELETE act on an initialize-based session; without one (the stateless revision has
/// none, and no GET stream) they are not allowed.
pub(super) fn sessionless(headers: &HeaderMap) -> Result<(), HttpError> {
    let stateless = headers.get("mcp-protocol-version").is_some_and(|v| {
        ProtocolVersion::parse_with_sessions(v.to_str().unwrap_or("").trim()).is_none()
    });
    if session_id(headers).is_some() && !stateless {
        return Ok(());
    }
    Err(http_error(
        StatusCode::METHOD_NOT_ALLOWED,
        INVALID_REQUEST,
        "only POST without a session: GET and DELETE act on sessions of the initialize-based \
         revisions (up to 2025-11-25)",
    )
    .with_header(header::ALLOW, HeaderValue::from_static("POST")))
}

/// The JSON-RPC message (or batch) a POST carries.
pub(super) fn posted_message(headers: &HeaderMap, body: &[u8]) -> Result<Value, HttpError> {
    if !content_type_is_json(headers) {
        return Err(http_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            INVALID_REQUEST,
            "Content-Type must be application/json",
        ));
    }
    let value = serde_json::from_slice(body).map_err(|e| {
        http_error(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            format!("parse error: {e}"),
        )
    })?;
    Ok(value)
}

/// An initialize-based request's protocol version header names a revision we serve.
pub(super) fn check_session_version(headers: &HeaderMap, id: &Value) -> Result<(), HttpError> {
    guard::check_protocol_version(headers)
        .map_err(|Refused(why)| http_error(StatusCode::BAD_REQUEST, INVALID_REQUEST, why).about(id))
}

/// A GET that opens an SSE stream: the client must accept one (406).
pub(super) fn check_stream_request(headers: &HeaderMap) -> Result<(), HttpError> {
    check_session_version(headers, &Value::Null)?;
    if !accepts(headers, "text/event-stream") {
        return Err(http_error(
            StatusCode::NOT_ACCEPTABLE,
            INVALID_REQUEST,
            "GET opens an SSE stream: Accept must include text/event-stream",
        ));
    }
    Ok(())
}

pub(super) fn json_response(status: StatusCode, body: &Value) -> Response {
    json_text_response(status, body.to_string())
}

/// A response of JSON already serialized.
pub(super) fn json_text_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub(super) fn content_type_is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

pub(super) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.split(';').next().unwrap_or("").trim())
        .any(|v| v.eq_ignore_ascii_case(media) || v == "*/*")
}
