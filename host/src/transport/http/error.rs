//! Refusals over HTTP: a status and a JSON-RPC error body, as MCP clients expect, echoing the id
//! of the request refused when it has a usable one.

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::mcp::jsonrpc::{self, RpcError};

/// A request refused before (or instead of) being served. Boxed: it travels in the `Err` of
/// every check, and most requests pass them.
#[derive(Debug)]
pub struct HttpError(Box<Refusal>);

#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    /// The request it is about; null when none, or when its id is unreadable.
    id: Value,
    error: RpcError,
    /// Headers the refusal needs (`WWW-Authenticate`, `Allow`).
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl HttpError {
    pub fn new(status: StatusCode, code: i64, message: impl Into<String>) -> HttpError {
        HttpError(Box::new(Refusal {
            status,
            id: Value::Null,
            error: RpcError::new(code, message),
            headers: Vec::new(),
        }))
    }

    /// The refusal of request `id`.
    /// Its HTTP status.
    pub fn status(&self) -> StatusCode {
        self.0.status
    }

    pub fn about(mut self, id: &Value) -> HttpError {
        self.0.id = id.clone();
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> HttpError {
        self.0.headers.push((name, value));
        self
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let refusal = *self.0;
        let body = jsonrpc::error_response(&refusal.id, &refusal.error).to_string();
        let mut response = (
            refusal.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        for (name, value) in refusal.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// An HTTP refusal with a JSON-RPC error body (`id: null` until [`HttpError::about`] names the
/// request), as MCP clients expect.
pub(super) fn http_error(status: StatusCode, code: i64, message: impl Into<String>) -> HttpError {
    HttpError::new(status, code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refusal_is_its_status_and_a_json_rpc_error_with_the_id() {
        let response = HttpError::new(StatusCode::NOT_FOUND, -32600, "unknown session")
            .about(&Value::from("r-1"))
            .with_header(header::ALLOW, HeaderValue::from_static("POST"))
            .into_response();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(response.headers()[header::ALLOW], "POST");
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["id"], "r-1");
        assert_eq!(body["error"]["code"], -32600);
        assert_eq!(body["error"]["message"], "unknown session");
    }
}
