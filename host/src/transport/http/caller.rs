//! Who is calling: the checks every HTTP request passes before any handler runs, as middleware,
//! and the identity they establish, as an extractor.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;

use super::error::HttpError;
use super::guard::Refused;
use super::{AppState, auth, http_error};
use crate::config::Identity;
use crate::mcp::jsonrpc::{INTERNAL_ERROR, INVALID_REQUEST};

/// The client a request comes from, established by [`check_caller`].
#[derive(Debug, Clone)]
pub(super) struct Caller(pub Identity);

/// Runs on every routed request, in order: `Host` and `Origin` against the allow-list (DNS
/// rebinding and foreign pages), then the bearer token. A request that fails is answered here
/// (403 or 401) before its body is read; one that passes carries its [`Caller`].
///
/// A client without a token is named by its address (`anonymous@127.0.0.1`): its rate limits
/// and session count follow the address, so opening new sessions does not reset them.
pub(super) async fn check_caller(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut request: Request,
    next: Next,
) -> Result<Response, HttpError> {
    let headers = request.headers();
    let allow = &state.options.allow;
    let forbidden = |Refused(why)| {
        tracing::warn!("HTTP request refused: {why}");
        http_error(StatusCode::FORBIDDEN, INVALID_REQUEST, why)
    };
    allow.check_host(headers).map_err(forbidden)?;
    allow.check_origin(headers).map_err(forbidden)?;
    let mut identity = auth::authenticate(&state.server, headers)?;
    if !identity.authenticated {
        identity.client = format!("{}@{}", identity.client, peer.ip()).into();
    }
    request.extensions_mut().insert(Caller(identity));
    Ok(next.run(request).await)
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Caller, HttpError> {
        // Only a route added without the middleware could get here: a bug, not a client error.
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| {
            http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
                "the request reached a handler without its caller checked",
            )
        })
    }
}
