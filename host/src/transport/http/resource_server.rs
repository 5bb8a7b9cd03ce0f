//! `[auth.oauth]` over HTTP: the resource identifier this server answers to, the issuer's keys
//! kept fresh, and the protected resource metadata (RFC 9728) clients read to find the issuer.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Result, bail};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::http_error;
use super::state::AppState;
use crate::mcp::jsonrpc::INVALID_REQUEST;
use crate::oauth::{KEYS_MAX_AGE, OAuth, OAuthSettings};

/// The verifier for a server listening on `address`: tokens must name the configured resource,
/// or `http://ADDRESS/mcp` on loopback. The issuer's keys are fetched now, in the background,
/// and every hour.
pub fn start(settings: &OAuthSettings, address: SocketAddr) -> Result<Arc<OAuth>> {
    let resource = match &settings.resource {
        Some(resource) => resource.clone(),
        None if address.ip().is_loopback() => url::Url::parse(&format!("http://{address}/mcp"))?,
        None => bail!(
            "[auth.oauth] resource is required when listening on {address}: set it to the URL \
             clients reach this server's MCP endpoint at (https://mcp.example.com/mcp), which \
             their tokens' audience must name"
        ),
    };
    let oauth = Arc::new(OAuth::new(settings.clone(), resource)?);
    tracing::info!(
        issuer = settings.issuer,
        resource = oauth.resource(),
        "accepting OAuth access tokens"
    );
    let weak = Arc::downgrade(&oauth);
    tokio::spawn(async move {
        loop {
            let Some(oauth) = weak.upgrade() else { return };
            if let Err(e) = oauth.refresh_keys(true).await {
                tracing::error!(
                    "cannot fetch the OAuth issuer's signing keys (access tokens are refused \
                     until they are fetched; tried again when a token arrives): {e:#}"
                );
            }
            drop(oauth);
            tokio::time::sleep(KEYS_MAX_AGE).await;
        }
    });
    Ok(oauth)
}

/// `GET /.well-known/oauth-protected-resource[/PATH]`: the metadata document, to anyone on an
/// allowed host; 404 without `[auth.oauth]`.
pub(super) async fn metadata(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Err(refused) = state.options.allow.check_host(&headers) {
        return http_error(StatusCode::FORBIDDEN, INVALID_REQUEST, refused.0).into_response();
    }
    match &state.oauth {
        Some(oauth) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "max-age=3600"),
            ],
            oauth.challenge().document().to_string(),
        )
            .into_response(),
        None => http_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "this server does not accept OAuth access tokens ([auth.oauth] is not set)",
        )
        .into_response(),
    }
}
