//! Who may use the console, and how they stay logged in.
//!
//! An operator proves who they are with a bearer token the server knows (a static token named
//! in `[console] operators`, or an OAuth access token of a listed `oauth:SUBJECT`), sent as
//! `Authorization: Bearer` or pasted into the login form; or with the one-time link
//! `--console` prints. A browser then holds a login: a random 256-bit cookie (HTTP-only,
//! `SameSite=Strict`, path `/console`), kept here as its SHA-256 only, with a CSRF token that
//! every form carries. Logins end after an hour idle or twelve hours in all; at most
//! [`MAX_LOGINS`] are kept, the oldest going first.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Query, State as AxumState};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use base64::Engine as _;
use parking_lot::Mutex;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::guard::{ClientAddr, State};
use super::pages;
use crate::oauth::Rejected;
use crate::transport::http::bearer_token;

/// The login cookie's name.
pub(super) const COOKIE: &str = "palisade_console";
/// Logins kept at once: a few operators, a few browsers each.
pub(super) const MAX_LOGINS: usize = 64;
/// A login unused this long ends.
const IDLE: Duration = Duration::from_secs(3600);
/// A login ends this long after it started, used or not.
const LONGEST: Duration = Duration::from_secs(12 * 3600);
/// The name the holder of the one-time link acts under in the audit log.
pub(super) const LINK_HOLDER: &str = "console-link";

/// An operator, as a request proved them.
#[derive(Debug, Clone)]
pub(crate) struct Operator {
    /// Their identity: a token's name, `oauth:SUBJECT`, or [`LINK_HOLDER`].
    pub name: Arc<str>,
    /// The CSRF token of their login, when the request came with the login cookie (forms
    /// must then carry it); `None` for a bearer token, which a browser never sends by itself.
    pub csrf: Option<Arc<str>>,
    /// The login's key, to end it or leave it a message.
    pub login: Option<[u8; 32]>,
}

/// Why a request has no operator.
#[derive(Debug)]
pub(super) enum Refusal {
    /// No credentials: log in.
    Unauthenticated,
    /// A token or link the server does not know, or a login that ended.
    Invalid(&'static str),
    /// A valid MCP client that is not an operator.
    NotAnOperator(Arc<str>),
}

struct Login {
    operator: Arc<str>,
    csrf: Arc<str>,
    started: Instant,
    seen: Instant,
    /// A message for the next page it loads (what an action did).
    said: Option<String>,
}

/// The logins, and the one-time link.
#[derive(Default)]
pub(super) struct Logins {
    logins: Mutex<HashMap<[u8; 32], Login>>,
    /// The SHA-256 of the link's code, until it is used.
    link: Mutex<Option<[u8; 32]>>,
}

/// 32 random bytes, as URL-safe base64. Without randomness from the system nobody may log in:
/// a guessable login is no login.
fn random_token() -> Result<String, NoRandomness> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| NoRandomness(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The system gave no random bytes.
#[derive(Debug, thiserror::Error)]
#[error("the system gives no random bytes for a console login: {0}")]
pub(super) struct NoRandomness(String);

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl Logins {
    /// A new one-time link code (the previous one, if unused, no longer works).
    pub(super) fn new_link(&self) -> Result<String, NoRandomness> {
        let code = random_token()?;
        *self.link.lock() = Some(digest(&code));
        Ok(code)
    }

    /// Whether `code` is the link's, which then no longer works.
    fn use_link(&self, code: &str) -> bool {
        let mut link = self.link.lock();
        // Compared as digests: equal-length, and the code itself is never held.
        if link.is_some_and(|held| held == digest(code)) {
            *link = None;
            return true;
        }
        false
    }

    /// Logs `operator` in; the cookie's value.
    fn start(&self, operator: Arc<str>) -> Result<String, NoRandomness> {
        let (token, csrf) = (random_token()?, random_token()?);
        let now = Instant::now();
        let mut logins = self.logins.lock();
        logins.retain(|_, l| alive(l, now));
        if logins.len() >= MAX_LOGINS
            && let Some(oldest) = logins.iter().min_by_key(|(_, l)| l.seen).map(|(k, _)| *k)
        {
            logins.remove(&oldest);
        }
        logins.insert(
            digest(&token),
            Login {
                operator,
                csrf: csrf.into(),
                started: now,
                seen: now,
                said: None,
            },
        );
        Ok(token)
    }

    /// The operator whose login `cookie` is, if it is still on.
    fn find(&self, cookie: &str) -> Option<Operator> {
        let key = digest(cookie);
        let now = Instant::now();
        let mut logins = self.logins.lock();
        let login = logins.get_mut(&key)?;
        if !alive(login, now) {
            logins.remove(&key);
            return None;
        }
        login.seen = now;
        Some(Operator {
            name: login.operator.clone(),
            csrf: Some(login.csrf.clone()),
            login: Some(key),
        })
    }

    /// Whether the login `key` is still on.
    pub(super) fn is_on(&self, key: &[u8; 32]) -> bool {
        let now = Instant::now();
        self.logins.lock().get(key).is_some_and(|l| alive(l, now))
    }

    fn end(&self, key: &[u8; 32]) {
        self.logins.lock().remove(key);
    }

    /// Leaves `message` for the login's next page.
    pub(super) fn say(&self, key: &[u8; 32], message: String) {
        if let Some(login) = self.logins.lock().get_mut(key) {
            login.said = Some(message);
        }
    }

    /// The message left for this page, once.
    pub(super) fn take_said(&self, key: &[u8; 32]) -> Option<String> {
        self.logins.lock().get_mut(key).and_then(|l| l.said.take())
    }
}

fn alive(login: &Login, now: Instant) -> bool {
    now.duration_since(login.seen) < IDLE && now.duration_since(login.started) < LONGEST
}

/// The value of cookie `name` in `headers`.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The bearer token of `headers`, if it has one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION).and_then(bearer_token)
}

impl State {
    /// The operator behind a request: its login cookie, else its bearer token.
    pub(super) async fn operator(&self, headers: &HeaderMap) -> Result<Operator, Refusal> {
        if let Some(token) = bearer(headers) {
            return self.operator_for_token(token).await.map(|name| Operator {
                name,
                csrf: None,
                login: None,
            });
        }
        match cookie(headers, COOKIE) {
            Some(value) => (self.console.logins.find(value))
                .ok_or(Refusal::Invalid("your login ended: log in again")),
            None => Err(Refusal::Unauthenticated),
        }
    }

    /// The operator a bearer token names: a static token's name, or an OAuth subject, listed
    /// in `[console] operators`.
    async fn operator_for_token(&self, token: &str) -> Result<Arc<str>, Refusal> {
        let server = &self.console.server;
        let name: Arc<str> = match server.access.authenticate(token) {
            Some(identity) => identity.client,
            None => {
                let Some(oauth) = &self.oauth else {
                    return Err(Refusal::Invalid("that token is not valid here"));
                };
                let mut verified = oauth.verify(token);
                if matches!(verified, Err(Rejected::UnknownKey)) {
                    if let Err(e) = oauth.refresh_keys(false).await {
                        tracing::warn!("console: the issuer's keys could not be fetched: {e:#}");
                    }
                    verified = oauth.verify(token);
                }
                match verified {
                    Ok(verified) => format!("oauth:{}", verified.subject.subject).into(),
                    Err(_) => return Err(Refusal::Invalid("that token is not valid here")),
                }
            }
        };
        if self.console.operators.contains(&name) {
            Ok(name)
        } else {
            Err(Refusal::NotAnOperator(name))
        }
    }
}

/// What a refusal looks like: the login page, with 401 or 403.
pub(super) fn refused(refusal: Refusal) -> Response {
    let (status, message) = match refusal {
        Refusal::Unauthenticated => (StatusCode::UNAUTHORIZED, None),
        Refusal::Invalid(why) => (StatusCode::UNAUTHORIZED, Some(why.to_string())),
        Refusal::NotAnOperator(who) => (
            StatusCode::FORBIDDEN,
            Some(format!(
                "`{who}` may use MCP here but is not an operator: [console] operators does not \
                 name it"
            )),
        ),
    };
    let mut response = (status, pages::login(message.as_deref())).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"palisade console\""),
        );
    }
    response
}

#[derive(Deserialize)]
pub(super) struct LinkQuery {
    code: Option<String>,
}

/// `GET /console/login`: the login form, or the one-time link's `?code=`.
pub(super) async fn login_page(
    AxumState(state): AxumState<State>,
    Extension(client): Extension<ClientAddr>,
    Query(query): Query<LinkQuery>,
) -> Response {
    let Some(code) = query.code else {
        return pages::login(None).into_response();
    };
    if !state.console.limits.may_try_login(client.0) {
        return guard_too_many();
    }
    if state.console.logins.use_link(&code) {
        tracing::info!(
            operator = LINK_HOLDER,
            "console: logged in with the one-time link"
        );
        return logged_in(&state, LINK_HOLDER.into());
    }
    state.console.limits.failed_login(client.0);
    refused(Refusal::Invalid(
        "that login link is not valid: it works once; restart the server for a new one",
    ))
}

#[derive(Deserialize)]
pub(super) struct LoginForm {
    token: String,
}

/// `POST /console/login`: a token pasted into the form.
pub(super) async fn log_in(
    AxumState(state): AxumState<State>,
    Extension(client): Extension<ClientAddr>,
    Form(form): Form<LoginForm>,
) -> Response {
    if !state.console.limits.may_try_login(client.0) {
        return guard_too_many();
    }
    match state.operator_for_token(form.token.trim()).await {
        Ok(name) => {
            tracing::info!(operator = &*name, "console: logged in");
            logged_in(&state, name)
        }
        Err(refusal) => {
            state.console.limits.failed_login(client.0);
            tracing::warn!(client = %client.0, "console: login refused");
            refused(refusal)
        }
    }
}

fn guard_too_many() -> Response {
    super::guard::too_many(Duration::from_secs(60))
}

/// Starts a login for `operator` and sends the browser to the overview with its cookie.
fn logged_in(state: &State, operator: Arc<str>) -> Response {
    let token = match state.console.logins.start(operator) {
        Ok(token) => token,
        Err(e) => {
            tracing::error!("console: {e}");
            return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response();
        }
    };
    let mut response = Redirect::to("/console").into_response();
    let cookie = format!(
        "{COOKIE}={token}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={}",
        LONGEST.as_secs()
    );
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `POST /console/logout`.
pub(super) async fn log_out(
    AxumState(state): AxumState<State>,
    ctx: super::Ctx,
    Form(form): Form<super::actions::Csrf>,
) -> Response {
    if let Err(refused) = ctx.check_csrf(&form.csrf) {
        return refused.into_response();
    }
    if let Some(key) = &ctx.operator.login {
        state.console.logins.end(key);
    }
    let mut response = Redirect::to("/console/login").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static(
            "palisade_console=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0",
        ),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_works_once_and_logins_end() {
        let logins = Logins::default();
        let code = logins.new_link().unwrap();
        assert!(!logins.use_link("not the code"));
        assert!(logins.use_link(&code));
        assert!(!logins.use_link(&code), "a second use");
        let cookie = logins.start("alice".into()).unwrap();
        let operator = logins.find(&cookie).unwrap();
        assert_eq!(&*operator.name, "alice");
        assert!(operator.csrf.as_deref().is_some_and(|c| c.len() >= 43));
        assert!(logins.find("forged").is_none());
        logins.end(&operator.login.unwrap());
        assert!(logins.find(&cookie).is_none());
    }

    #[test]
    fn logins_are_bounded_oldest_first() {
        let logins = Logins::default();
        let first = logins.start("a".into()).unwrap();
        let rest: Vec<String> = (0..MAX_LOGINS)
            .map(|_| logins.start("b".into()).unwrap())
            .collect();
        assert!(logins.find(&first).is_none());
        assert!(rest.iter().all(|c| logins.find(c).is_some()));
    }

    #[test]
    fn cookies_are_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; palisade_console=xyz; b=2"),
        );
        assert_eq!(cookie(&headers, COOKIE), Some("xyz"));
        assert_eq!(cookie(&headers, "c"), None);
    }
}
