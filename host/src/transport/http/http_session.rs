//! The initialize-based sessions over HTTP: Streamable HTTP's (the protocol session, its SSE
//! streams, and when it was last used) and HTTP+SSE's (one stream).

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;

use super::streams::Streams;
use crate::mcp::Session;

/// One initialize-based session: the protocol session, its SSE streams, and when it was last used.
pub(super) struct HttpSession {
    pub(super) session: Arc<Session>,
    pub(super) streams: Arc<Streams>,
    pub(super) last_active: Mutex<Instant>,
}

/// A session of the HTTP+SSE transport: everything it sends goes to its one stream.
pub(super) struct Sse2024Session {
    pub(super) session: Arc<Session>,
}
