//! Initialize-based sessions over HTTP: how many a client may open, finding the one a request
//! names, new ids, and forgetting idle ones.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

use super::error::{HttpError, http_error};
use super::http_session::HttpSession;
use super::state::AppState;
use super::streams::RESUME_WINDOW;
use crate::config::Identity;
use crate::mcp::jsonrpc::{INTERNAL_ERROR, INVALID_REQUEST};

/// Whether `client` may open one more initialize-based session; the refusal echoes `id`.
pub(super) fn room_for_session(
    state: &AppState,
    client: &str,
    id: &Value,
) -> Result<(), HttpError> {
    let sessions = state.sessions.lock();
    let sse_2024 = state.sse_2024.lock();
    let total = sessions.len() + sse_2024.len();
    let own = sessions
        .values()
        .map(|s| s.session.client())
        .chain(sse_2024.values().map(|l| l.session.client()))
        .filter(|c| *c == client)
        .count();
    let (max_total, max_own) = (
        state.options.max_sessions,
        state.options.max_sessions_per_client,
    );
    if total >= max_total || own >= max_own {
        state.server.refused(crate::telemetry::Refusal::Sessions);
    }
    if total >= max_total {
        tracing::warn!(
            client,
            "session refused: {total} sessions are open (max_sessions)"
        );
        return Err(http_error(
            StatusCode::SERVICE_UNAVAILABLE,
            INVALID_REQUEST,
            format!(
                "the server has {total} sessions open, as many as it takes \
                 ([server.http] max_sessions); retry later"
            ),
        )
        .about(id));
    }
    if own >= max_own {
        tracing::warn!(
            client,
            "session refused: the client has {own} sessions open"
        );
        return Err(http_error(
            StatusCode::TOO_MANY_REQUESTS,
            INVALID_REQUEST,
            format!(
                "this client has {own} sessions open, as many as it may \
                 ([server.http] max_sessions_per_client); end one (DELETE) or let it expire"
            ),
        )
        .about(id));
    }
    Ok(())
}

/// The session the request names; a refusal echoes `request` (the id of the request it
/// carries).
pub(super) fn find_session(
    state: &AppState,
    headers: &HeaderMap,
    identity: &Identity,
    request: &Value,
) -> Result<Arc<HttpSession>, HttpError> {
    let Some(id) = session_id(headers) else {
        return Err(http_error(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Mcp-Session-Id header required: send initialize first and echo the id it returns",
        )
        .about(request));
    };
    // A session belongs to the client that started it: another token cannot use it.
    let found = state
        .sessions
        .lock()
        .get(&id)
        .filter(|s| s.session.client() == &*identity.client)
        .cloned();
    if let Some(found) = &found {
        found.session.refresh_scope(identity);
    }
    match found {
        Some(s) => {
            *s.last_active.lock() = Instant::now();
            Ok(s)
        }
        None => Err(http_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "unknown or expired session: initialize a new one",
        )
        .about(request)),
    }
}

/// The session the request names: this replica's, or (sessions shared with other replicas)
/// one it resumes from the cluster; a shared session's state is read again first.
pub(super) async fn session_for(
    state: &AppState,
    headers: &HeaderMap,
    identity: &Identity,
    request: &Value,
) -> Result<Arc<HttpSession>, HttpError> {
    let found = find_session(state, headers, identity, request);
    let (Some(shared), Some(id)) = (&state.shared, session_id(headers)) else {
        return found;
    };
    match found {
        Ok(http_session) => {
            super::shared::refresh(shared, &id, &http_session).await;
            Ok(http_session)
        }
        Err(refused) if refused.status() == StatusCode::NOT_FOUND => {
            let resumed =
                super::shared::resume_session(state, shared, &id, identity, request).await?;
            resumed.session.refresh_scope(identity);
            Ok(resumed)
        }
        Err(refused) => Err(refused),
    }
}

pub(super) fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

/// 128 bits from the operating system's secure generator; without it, no session (a 500).
pub(super) fn new_session_id() -> Result<String, HttpError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        tracing::error!("the operating system's random generator failed: {e}");
        http_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            INTERNAL_ERROR,
            "cannot make a session id: the random generator failed",
        )
    })?;
    Ok(hex::encode(bytes))
}

/// Forgets sessions idle longer than the timeout (no request, no open stream), and streams
/// finished longer than [`RESUME_WINDOW`] ago.
pub(super) async fn expire_idle_sessions(state: std::sync::Weak<AppState>) {
    loop {
        let Some(state) = state.upgrade() else { return };
        let timeout = state.options.idle_timeout;
        let now = Instant::now();
        let live: Vec<Arc<HttpSession>> = state.sessions.lock().values().cloned().collect();
        for s in live {
            s.streams.expire(now);
        }
        let expired: Vec<(String, Arc<HttpSession>)> = {
            let mut sessions = state.sessions.lock();
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| {
                    s.last_active.lock().elapsed() > timeout && !s.streams.any_listener()
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| sessions.remove(&id).map(|s| (id, s)))
                .collect()
        };
        for (id, s) in expired {
            tracing::info!(session = id, "HTTP session expired");
            s.session.close();
            s.streams.close();
        }
        let check_every = (timeout / 4).clamp(Duration::from_millis(100), RESUME_WINDOW / 4);
        drop(state);
        tokio::time::sleep(check_every).await;
    }
}
