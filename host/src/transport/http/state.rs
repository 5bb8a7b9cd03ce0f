//! What the HTTP server's handlers share: its settings, the sessions open on it, and how to
//! reach the server and the cluster.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::conn;
use super::guard::AllowList;
use super::http_session::{HttpSession, Sse2024Session};
use super::streams::ServerHistory;
use crate::mcp::Server;
use crate::oauth::OAuth;

/// The HTTP server's settings.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// Hosts and origins requests may come with.
    pub allow: AllowList,
    /// A session without requests or open streams for this long is forgotten.
    pub idle_timeout: Duration,
    /// Largest request body; a larger one gets 413.
    pub max_body_bytes: usize,
    /// Time to send a request's headers (and the longest a connection sits idle between
    /// requests), and to send its body.
    pub header_timeout: Duration,
    /// Time to send a request's body.
    pub body_timeout: Duration,
    /// Initialize-based sessions (Streamable HTTP and HTTP+SSE) open at once, from every
    /// client, and from one client (a token, or an anonymous client's address).
    pub max_sessions: usize,
    /// Initialize-based sessions open at once from one client.
    pub max_sessions_per_client: usize,
    /// Connections open at once, and the proxies whose forwarding headers name the client.
    pub connections: conn::ConnectionLimits,
}

pub(super) struct AppState {
    pub(super) server: Arc<Server>,
    pub(super) options: HttpOptions,
    pub(super) sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    /// Sessions of the 2024-11-05 HTTP+SSE transport.
    pub(super) sse_2024: Mutex<HashMap<String, Arc<Sse2024Session>>>,
    /// Bytes of replay history all sessions keep.
    pub(super) history: ServerHistory,
    /// OAuth access tokens, with `[auth.oauth]`.
    pub(super) oauth: Option<Arc<OAuth>>,
    /// Sessions shared with the other replicas, with `[cluster]`.
    pub(super) shared: Option<Arc<crate::cluster::sessions::SharedSessions>>,
}
