//! Bearer tokens over HTTP: who the client is, or the 401/403 that says why not.

use super::error::HttpError;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

use super::http_error;
use crate::config::{AccessConfig, Identity};
use crate::mcp::Server;
use crate::mcp::jsonrpc::INVALID_REQUEST;

/// The identity behind the request's `Authorization: Bearer` token. Without configured tokens
/// every client is `anonymous` and sees everything (the server then listens on loopback unless
/// told otherwise, and warns).
pub fn authenticate(server: &Server, headers: &HeaderMap) -> Result<Identity, HttpError> {
    let access: &AccessConfig = &server.access;
    if !access.tokens_required() {
        return Ok(Identity::anonymous());
    }
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(unauthorized(
            None,
            "this server requires a bearer token (Authorization: Bearer <token>)",
        ));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let Some(identity) = token.and_then(|t| access.authenticate(t)) else {
        tracing::warn!("HTTP request refused: invalid bearer token");
        return Err(unauthorized(
            Some("invalid_token"),
            "the bearer token is not valid",
        ));
    };
    // While plugins load, what the scope will cover is not known yet: refused calls then say
    // so themselves.
    if !server.loading.is_loading() && !server.catalog().visible_to(&identity.scope) {
        tracing::warn!(
            client = &*identity.client,
            scope = identity.scope.name,
            "HTTP request refused: the scope covers nothing served"
        );
        return Err(http_error(
            StatusCode::FORBIDDEN,
            INVALID_REQUEST,
            format!(
                "the token's scope `{}` covers none of the tools, prompts or resources served here",
                identity.scope.name
            ),
        )
        .with_header(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Bearer realm="palisade", error="insufficient_scope""#),
        ));
    }
    Ok(identity)
}

fn unauthorized(error: Option<&'static str>, message: &str) -> HttpError {
    let refused = http_error(StatusCode::UNAUTHORIZED, INVALID_REQUEST, message);
    let challenge = match error {
        Some(error) => format!(r#"Bearer realm="palisade", error="{error}""#),
        None => r#"Bearer realm="palisade""#.to_string(),
    };
    match HeaderValue::from_str(&challenge) {
        Ok(value) => refused.with_header(header::WWW_AUTHENTICATE, value),
        Err(_) => refused,
    }
}
