//! Bearer tokens over HTTP: who the client is, or the 401/403 that says why not. A token is a
//! configured static token, or (with `[auth.oauth]`) an access token from the trusted issuer.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use serde_json::Value;

use super::error::HttpError;
use super::error::http_error;
use crate::catalog::Catalog;
use crate::config::{AccessConfig, Identity};
use crate::mcp::Server;
use crate::mcp::jsonrpc::INVALID_REQUEST;
use crate::oauth::{OAuth, Rejected};
use crate::telemetry::Refusal as Refused;

/// What the token check decided.
pub enum Checked {
    /// The client, proven (or anonymous on a server that asks for nothing).
    Pass(Identity),
    /// Refused, with the response that says why.
    Refuse(HttpError),
    /// An access token signed by a key the server does not hold: fetch the issuer's keys, then
    /// check again.
    FetchKeys,
}

/// The token of an `Authorization` header's value, when it is `Bearer <token>`.
pub(crate) fn bearer_token(value: &HeaderValue) -> Option<&str> {
    value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// The identity behind the request's `Authorization: Bearer` token. Without configured tokens
/// every client is `anonymous` and sees everything (the server then listens on loopback unless
/// told otherwise, and warns). `keys_fetched`: the issuer's keys were just fetched for this
/// request, so a key still unknown is the token's fault.
pub fn authenticate(
    server: &Server,
    oauth: Option<&OAuth>,
    headers: &HeaderMap,
    keys_fetched: bool,
) -> Checked {
    let access: &AccessConfig = &server.access;
    if !access.tokens_required() {
        return Checked::Pass(Identity::anonymous());
    }
    let refusal = Refusal { oauth, server };
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Checked::Refuse(refusal.missing());
    };
    let Some(token) = bearer_token(value) else {
        return Checked::Refuse(
            refusal.invalid("the Authorization header is not `Bearer <token>`"),
        );
    };
    let identity = match access.authenticate(token) {
        Some(identity) => identity,
        None => match oauth.map(|o| o.verify(token)) {
            None => return Checked::Refuse(refusal.invalid("the bearer token is not valid")),
            Some(Ok(verified)) => Identity {
                client: format!("oauth:{}", verified.subject.subject).into(),
                scope: verified.scope,
                authenticated: true,
                oauth: Some(Arc::new(verified.subject)),
            },
            Some(Err(Rejected::UnknownKey)) if !keys_fetched => return Checked::FetchKeys,
            Some(Err(Rejected::UnknownKey)) => {
                return Checked::Refuse(
                    refusal.invalid("the token is signed by a key the issuer does not publish"),
                );
            }
            Some(Err(Rejected::Invalid(why))) => return Checked::Refuse(refusal.invalid(&why)),
        },
    };
    // While plugins load, what the scope will cover is not known yet: refused calls then say
    // so themselves.
    if !server.loading.is_loading() && !server.catalog().visible_to(&identity.scope) {
        tracing::warn!(
            client = &*identity.client,
            scope = identity.scope.name,
            "HTTP request refused: the scope covers nothing served"
        );
        let why = match &identity.oauth {
            Some(_) => {
                "the token's scopes cover none of the tools, prompts or resources served here"
                    .to_string()
            }
            None => format!(
                "the token's scope `{}` covers none of the tools, prompts or resources served here",
                identity.scope.name
            ),
        };
        let wanted: Vec<&str> = oauth
            .map(|o| o.settings().advertised.iter().map(String::as_str).collect())
            .unwrap_or_default();
        return Checked::Refuse(refusal.insufficient_scope(&wanted, &why));
    }
    Checked::Pass(identity)
}

/// A call to a tool or prompt that exists but that the OAuth token's scopes do not cover: 403
/// `insufficient_scope` naming the OAuth scopes that would, so that the client can ask for them
/// (the MCP specification's step-up authorization). Static tokens, and names no OAuth scope
/// grants, go on to the usual "unknown tool" answer.
pub fn check_step_up(
    server: &Server,
    oauth: Option<&OAuth>,
    identity: &Identity,
    message: &Value,
) -> Result<(), HttpError> {
    let (Some(oauth), Some(_)) = (oauth, &identity.oauth) else {
        return Ok(());
    };
    let name = message
        .get("params")
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str);
    let (Some(method), Some(name)) = (message.get("method").and_then(Value::as_str), name) else {
        return Ok(());
    };
    let catalog = server.catalog();
    let (plugin, item) = match method {
        "tools/call" => match catalog.tool(name) {
            Some(tool) if !Catalog::tool_in_scope(tool, &identity.scope) => {
                (tool.backend.owner(), tool.tool.name.as_str())
            }
            _ => return Ok(()),
        },
        "prompts/get" => match catalog.prompt(name) {
            Some(prompt) if !Catalog::prompt_in_scope(prompt, &identity.scope) => {
                (&*prompt.plugin.name, prompt.prompt.name.as_str())
            }
            _ => return Ok(()),
        },
        _ => return Ok(()),
    };
    let wanted = oauth.scopes_granting(plugin, item);
    if wanted.is_empty() {
        return Ok(());
    }
    tracing::warn!(
        client = &*identity.client,
        method,
        name,
        "HTTP request refused: the token's scopes do not cover it"
    );
    Err(Refusal {
        oauth: Some(oauth),
        server,
    }
    .insufficient_scope(
        &wanted,
        &format!("`{name}` needs one of these scopes: {}", wanted.join(", ")),
    )
    .about(&crate::mcp::jsonrpc::reply_id(message)))
}

/// The refusals, with the challenge OAuth clients read (RFC 6750 and RFC 9728) when
/// `[auth.oauth]` is set, else the plain one of static tokens.
struct Refusal<'a> {
    oauth: Option<&'a OAuth>,
    server: &'a Server,
}

impl Refusal<'_> {
    fn missing(&self) -> HttpError {
        self.server.refused(Refused::Unauthenticated);
        let message = "this server requires a bearer token (Authorization: Bearer <token>)";
        let challenge = match self.oauth {
            Some(oauth) => oauth.challenge().missing_token(),
            None => r#"Bearer realm="palisade""#.to_string(),
        };
        with_challenge(
            http_error(StatusCode::UNAUTHORIZED, INVALID_REQUEST, message),
            &challenge,
        )
    }

    fn invalid(&self, why: &str) -> HttpError {
        tracing::warn!("HTTP request refused: {why}");
        self.server.refused(Refused::Unauthenticated);
        let challenge = match self.oauth {
            Some(oauth) => oauth.challenge().invalid_token(why),
            None => r#"Bearer realm="palisade", error="invalid_token""#.to_string(),
        };
        with_challenge(
            http_error(StatusCode::UNAUTHORIZED, INVALID_REQUEST, why),
            &challenge,
        )
    }

    fn insufficient_scope(&self, wanted: &[&str], why: &str) -> HttpError {
        self.server.refused(Refused::Scope);
        let challenge = match self.oauth {
            Some(oauth) => oauth.challenge().insufficient_scope(wanted, why),
            None => r#"Bearer realm="palisade", error="insufficient_scope""#.to_string(),
        };
        with_challenge(
            http_error(StatusCode::FORBIDDEN, INVALID_REQUEST, why),
            &challenge,
        )
    }
}

fn with_challenge(refused: HttpError, challenge: &str) -> HttpError {
    match HeaderValue::from_str(challenge) {
        Ok(value) => refused.with_header(header::WWW_AUTHENTICATE, value),
        Err(_) => refused,
    }
}
