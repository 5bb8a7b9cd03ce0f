//! Who is calling: the checks every HTTP request passes before any handler runs, as a tower
//! layer, and the identity they establish, as an extractor.
//!
//! The checks are synchronous, so the layer is written by hand rather than with
//! `axum::middleware::from_fn`: a request that passes goes on to the route's own future, with no
//! boxed future or cloned `Next` per request.

use super::client_address::ClientAddress;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse as _, Response};
use futures_util::future::{BoxFuture, Either, Ready, ready};
use tower::{Layer, Service};

use super::auth;
use super::auth::Checked;
use super::error::HttpError;
use super::error::http_error;
use super::guard::Refused;
use super::state::AppState;
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
fn check(state: &AppState, request: &Request, keys_fetched: bool) -> Checked {
    let headers = request.headers();
    let allow = &state.options.allow;
    let forbidden = |Refused(why)| {
        tracing::warn!("HTTP request refused: {why}");
        state.server.refused(crate::telemetry::Refusal::Origin);
        Checked::Refuse(http_error(StatusCode::FORBIDDEN, INVALID_REQUEST, why))
    };
    if let Err(refused) = allow
        .check_host(headers)
        .and_then(|()| allow.check_origin(headers))
    {
        return forbidden(refused);
    }
    let mut identity =
        match auth::authenticate(&state.server, state.oauth.as_deref(), headers, keys_fetched) {
            Checked::Pass(identity) => identity,
            other => return other,
        };
    if !identity.authenticated {
        // The accept loop (conn.rs) gives every request its client's address: its peer's, or
        // the one a trusted proxy names.
        let address = request
            .extensions()
            .get::<ClientAddress>()
            .map(|c| c.0)
            .or_else(|| {
                let ConnectInfo(peer) = request.extensions().get::<ConnectInfo<SocketAddr>>()?;
                Some(peer.ip())
            });
        identity.client = match address {
            Some(ip) => format!("{}@{ip}", identity.client),
            None => format!("{}@unknown", identity.client),
        }
        .into();
    }
    Checked::Pass(identity)
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

/// The answer of a request that waits for the issuer's keys (rare: after the provider rotated
/// them), boxed; every other request answers synchronously or goes straight to its route.
type AfterKeys<E> = BoxFuture<'static, Result<Response, E>>;

impl<S> Service<Request> for CheckCaller<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, Either<S::Future, AfterKeys<S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match check(&self.state, &request, false) {
            Checked::Pass(identity) => {
                request.extensions_mut().insert(Caller(identity));
                Either::Right(Either::Left(self.inner.call(request)))
            }
            Checked::Refuse(refused) => Either::Left(ready(Ok(refused.into_response()))),
            Checked::FetchKeys => {
                // The service that was made ready goes with the request (tower's rule); a clone
                // stays for the next one.
                let fresh = self.inner.clone();
                let mut inner = std::mem::replace(&mut self.inner, fresh);
                let state = self.state.clone();
                Either::Right(Either::Right(Box::pin(async move {
                    if let Some(oauth) = &state.oauth
                        && let Err(e) = oauth.refresh_keys(false).await
                    {
                        tracing::warn!("cannot fetch the OAuth issuer's keys: {e:#}");
                    }
                    match check(&state, &request, true) {
                        Checked::Pass(identity) => {
                            request.extensions_mut().insert(Caller(identity));
                            inner.call(request).await
                        }
                        Checked::Refuse(refused) => Ok(refused.into_response()),
                        Checked::FetchKeys => Ok(http_error(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            INTERNAL_ERROR,
                            "the token's key could not be looked up",
                        )
                        .into_response()),
                    }
                })))
            }
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
