//! Who is calling: the checks every HTTP request passes before any handler runs, as a tower
//! layer, and the identity they establish, as an extractor.
//!
//! The checks are synchronous, so the layer is written by hand rather than with
//! `axum::middleware::from_fn`: a request that passes goes on to the route's own future, with no
//! boxed future or cloned `Next` per request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse as _, Response};
use futures_util::future::{Either, Ready, ready};
use tower::{Layer, Service};

use super::error::HttpError;
use super::guard::Refused;
use super::{AppState, auth, http_error};
use crate::config::Identity;
use crate::mcp::jsonrpc::{INTERNAL_ERROR, INVALID_REQUEST};

/// The client a request comes from, established by [`CheckCaller`].
#[derive(Debug, Clone)]
pub(super) struct Caller(pub Identity);

/// Runs, in order, on every routed request: `Host` and `Origin` against the allow-list (DNS
/// rebinding and foreign pages), then the bearer token. A request that fails is answered here
/// (403 or 401) before its body is read; one that passes carries its [`Caller`].
///
/// A client without a token is named by its address (`anonymous@127.0.0.1`): its rate limits
/// and session count follow the address, so opening new sessions does not reset them.
fn check(state: &AppState, request: &Request) -> Result<Identity, HttpError> {
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
        // The accept loop (conn.rs) gives every request its peer's address.
        identity.client = match request.extensions().get::<ConnectInfo<SocketAddr>>() {
            Some(ConnectInfo(peer)) => format!("{}@{}", identity.client, peer.ip()),
            None => format!("{}@unknown", identity.client),
        }
        .into();
    }
    Ok(identity)
}

/// The layer that puts [`CheckCaller`] around each route.
#[derive(Clone)]
pub(super) struct CheckCallerLayer(pub Arc<AppState>);

impl<S> Layer<S> for CheckCallerLayer {
    type Service = CheckCaller<S>;

    fn layer(&self, inner: S) -> CheckCaller<S> {
        CheckCaller {
            inner,
            state: self.0.clone(),
        }
    }
}

/// A route, behind the caller checks.
#[derive(Clone)]
pub(super) struct CheckCaller<S> {
    inner: S,
    state: Arc<AppState>,
}

impl<S> Service<Request> for CheckCaller<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match check(&self.state, &request) {
            Ok(identity) => {
                request.extensions_mut().insert(Caller(identity));
                Either::Right(self.inner.call(request))
            }
            Err(refused) => Either::Left(ready(Ok(refused.into_response()))),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Caller, HttpError> {
        // Only a route added without the layer could get here: a bug, not a client error.
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| {
            http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
                "the request reached a handler without its caller checked",
            )
        })
    }
}
