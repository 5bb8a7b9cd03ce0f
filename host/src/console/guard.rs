//! What every console request passes before a page or an action sees it: the `Host` check
//! (a page elsewhere cannot reach the console by rebinding its DNS), the rate limits, and the
//! security headers of every answer; and [`Ctx`], the operator a page or an action acts for.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;

use super::Console;
use super::auth::{self, Operator};
use crate::oauth::OAuth;
use crate::transport::http::client_address::ClientAddress;

/// The largest form the console takes.
pub(super) const MAX_FORM_BYTES: usize = 16 * 1024;

/// Requests one address may make per second, on average, and in a burst: a page, its two
/// assets and the refreshes its live updates ask for are a few.
const REQUESTS_PER_SECOND: f64 = 20.0;
const REQUEST_BURST: f64 = 200.0;
/// Failed logins one address may make per minute (a token or link guessed at).
const FAILED_LOGINS_PER_MINUTE: f64 = 10.0;
/// Addresses tracked; past it the oldest are forgotten (a flood from many addresses then gets
/// fresh buckets, and the connection caps still hold).
const MAX_ADDRESSES: usize = 4096;

/// The console's routes' state.
#[derive(Clone)]
pub(super) struct State {
    pub(super) console: Arc<Console>,
    /// The MCP listener's access token checks, when the console is served there with OAuth.
    pub(super) oauth: Option<Arc<OAuth>>,
}

/// The address a request came from (a trusted proxy's client, else the peer).
#[derive(Debug, Clone, Copy)]
pub(super) struct ClientAddr(pub IpAddr);

/// Token buckets per address.
#[derive(Default)]
pub(super) struct RateLimits {
    requests: Mutex<HashMap<IpAddr, Bucket>>,
    failed_logins: Mutex<HashMap<IpAddr, Bucket>>,
}

struct Bucket {
    level: f64,
    at: Instant,
}

/// `f` on `address`'s bucket, refilled at `per_second` up to `burst`.
fn with_bucket<R>(
    buckets: &Mutex<HashMap<IpAddr, Bucket>>,
    address: IpAddr,
    (per_second, burst): (f64, f64),
    f: impl FnOnce(&mut f64) -> R,
) -> R {
    let now = Instant::now();
    let mut buckets = buckets.lock();
    if buckets.len() >= MAX_ADDRESSES
        && !buckets.contains_key(&address)
        && let Some(oldest) = buckets.iter().min_by_key(|(_, b)| b.at).map(|(a, _)| *a)
    {
        buckets.remove(&oldest);
    }
    let bucket = buckets.entry(address).or_insert(Bucket {
        level: burst,
        at: now,
    });
    let refill = now.duration_since(bucket.at).as_secs_f64() * per_second;
    bucket.level = (bucket.level + refill).min(burst);
    bucket.at = now;
    f(&mut bucket.level)
}

const REQUESTS: (f64, f64) = (REQUESTS_PER_SECOND, REQUEST_BURST);
const LOGINS: (f64, f64) = (FAILED_LOGINS_PER_MINUTE / 60.0, FAILED_LOGINS_PER_MINUTE);

impl RateLimits {
    fn may_request(&self, address: IpAddr) -> bool {
        with_bucket(&self.requests, address, REQUESTS, |level| {
            let may = *level >= 1.0;
            if may {
                *level -= 1.0;
            }
            may
        })
    }

    /// Whether `address` may try to log in now: it has not failed too often lately.
    pub(super) fn may_try_login(&self, address: IpAddr) -> bool {
        with_bucket(&self.failed_logins, address, LOGINS, |level| *level >= 1.0)
    }

    /// `address` failed to log in.
    pub(super) fn failed_login(&self, address: IpAddr) {
        with_bucket(&self.failed_logins, address, LOGINS, |level| {
            *level = (*level - 1.0).max(0.0)
        });
    }
}

/// 429, with when to come back.
pub(super) fn too_many(retry_after: Duration) -> Response {
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        "too many requests to the console from this address; wait a moment",
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&retry_after.as_secs().max(1).to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The console's Content-Security-Policy: its own script and stylesheet only, no inline script
/// or style, no frames, forms posting only to itself.
pub(super) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
    base-uri 'none'";

/// Every console request: `Host` checked, rate-limited, its address noted for the handlers,
/// and its answer given the security headers.
pub(super) async fn check_request(
    axum::extract::State(state): axum::extract::State<State>,
    mut request: Request,
    next: Next,
) -> Response {
    let address = request
        .extensions()
        .get::<ClientAddress>()
        .map(|c| c.0)
        .or_else(|| {
            (request
                .extensions()
                .get::<ConnectInfo<std::net::SocketAddr>>())
            .map(|c| c.0.ip())
        })
        .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
    let mut response = if let Err(refused) = state.console.allow.check_host(request.headers()) {
        (StatusCode::FORBIDDEN, refused.0).into_response()
    } else if !state.console.limits.may_request(address) {
        too_many(Duration::from_secs(1))
    } else {
        request.extensions_mut().insert(ClientAddr(address));
        next.run(request).await
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        // Not `no-referrer`: with it a browser sends `Origin: null` on the console's own forms.
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// What a page or an action gets: the console and the operator it acts for.
pub(crate) struct Ctx {
    pub(super) console: Arc<Console>,
    pub(super) operator: Operator,
    /// Only the page's `<main>` is wanted (a live refresh).
    pub(super) part: bool,
    /// Where a form posted from may send the browser back to: the request's path, when the
    /// Origin is this console's.
    same_origin: bool,
}

impl FromRequestParts<State> for Ctx {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &State) -> Result<Ctx, Response> {
        let operator = state
            .operator(&parts.headers)
            .await
            .map_err(auth::refused)?;
        Ok(Ctx {
            console: state.console.clone(),
            operator,
            part: parts.headers.contains_key("x-console-part"),
            same_origin: same_origin(&parts.headers),
        })
    }
}

/// Whether a request's `Origin`, when it has one, is the console's own (the `Host` it was
/// sent to): a form posted from another site is refused even with the right cookie.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let (Ok(origin), Some(Ok(host))) = (
        origin.to_str(),
        headers.get(header::HOST).map(|h| h.to_str()),
    ) else {
        return false;
    };
    let authority = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    authority.is_some_and(|a| a.eq_ignore_ascii_case(host))
}

impl Ctx {
    /// An action's check: a login's form must carry its CSRF token and come from the console's
    /// own origin. A bearer token needs neither: no browser sends one by itself.
    pub(super) fn check_csrf(&self, sent: &str) -> Result<(), Forged> {
        let Some(expected) = &self.operator.csrf else {
            return Ok(());
        };
        let matches = sent.len() == expected.len()
            && sent
                .bytes()
                .zip(expected.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if matches && self.same_origin {
            Ok(())
        } else {
            tracing::warn!(
                operator = &*self.operator.name,
                "console: an action without its CSRF token or from another origin was refused"
            );
            Err(Forged)
        }
    }

    /// The message an action left for this page, once.
    pub(super) fn take_said(&self) -> Option<String> {
        (self.operator.login.as_ref()).and_then(|key| self.console.logins.take_said(key))
    }

    /// Leaves `message` for the next page this login loads.
    pub(super) fn say(&self, message: String) {
        if let Some(key) = &self.operator.login {
            self.console.logins.say(key, message);
        }
    }
}

/// A form that did not come from this console: no CSRF token, a wrong one, or another origin.
#[derive(Debug)]
pub(super) struct Forged;

impl IntoResponse for Forged {
    fn into_response(self) -> Response {
        (
            StatusCode::FORBIDDEN,
            "refused: the form did not come from this console (missing or wrong CSRF token, or \
             another origin); reload the page and try again",
        )
            .into_response()
    }
}

/// Anything else under `/console`.
pub(super) async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "no such console page").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_logins_are_limited_per_address() {
        let limits = RateLimits::default();
        let (a, b) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        for _ in 0..FAILED_LOGINS_PER_MINUTE as usize {
            assert!(limits.may_try_login(a));
            limits.failed_login(a);
        }
        assert!(!limits.may_try_login(a));
        assert!(limits.may_try_login(b), "another address is not held back");
    }

    #[test]
    fn only_the_consoles_own_origin_may_post() {
        let headers = |origin: Option<&'static str>| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:7777"));
            if let Some(o) = origin {
                h.insert(header::ORIGIN, HeaderValue::from_static(o));
            }
            h
        };
        assert!(same_origin(&headers(None)));
        assert!(same_origin(&headers(Some("http://127.0.0.1:7777"))));
        assert!(!same_origin(&headers(Some("http://evil.example"))));
        assert!(!same_origin(&headers(Some("http://127.0.0.1:7778"))));
    }
}
