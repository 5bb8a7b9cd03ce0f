//! SSE responses: a stream's replay and live events, keep-alives, and what happens to its
//! requests when the client drops it.

use std::convert::Infallible;
use std::sync::Arc;

use axum::http::HeaderValue;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse as _, Response};
use futures_util::StreamExt as _;
use tokio::sync::mpsc;

use super::http_session::HttpSession;
use super::streams::{RESUME_WINDOW, StreamEvent, StreamId};
use crate::mcp::Server;
use crate::shutdown::Shutdown;

/// When the client drops a stream before its response, its requests are cancelled unless it
/// reconnects within [`RESUME_WINDOW`].
pub(super) struct DisconnectGuard {
    http_session: Arc<HttpSession>,
    stream: StreamId,
    listener: u64,
    armed: bool,
}

impl DisconnectGuard {
    pub(super) fn new(
        http_session: Arc<HttpSession>,
        stream: StreamId,
        listener: u64,
    ) -> DisconnectGuard {
        DisconnectGuard {
            http_session,
            stream,
            listener,
            armed: true,
        }
    }

    pub(super) fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for DisconnectGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let requests = self.http_session.streams.detach(self.stream, self.listener);
        // A shared session's client may resume the stream on another replica: its requests
        // run to their end (within their limits) and their events wait in Redis.
        if requests.is_empty() || self.http_session.session.is_shared() {
            return;
        }
        let (http_session, stream) = (self.http_session.clone(), self.stream);
        tokio::spawn(async move {
            tokio::time::sleep(RESUME_WINDOW).await;
            if http_session.streams.abandoned(stream) {
                for request in requests {
                    http_session.session.cancel(&request, "its client is gone");
                }
            }
        });
    }
}

/// An SSE response: `replay`, then `live` events until the last one, or until `ends_when`
/// says the server is stopping.
pub(super) fn sse(
    replay: Vec<StreamEvent>,
    live: Option<mpsc::Receiver<StreamEvent>>,
    guard: DisconnectGuard,
    server: &Server,
    ends_when: Option<Shutdown>,
) -> Response {
    let ends_in_replay = replay.iter().any(|e| e.last);
    let live = if ends_in_replay { None } else { live };
    let replayed = futures_util::stream::iter(replay);
    let live = futures_util::stream::unfold((live, Some(guard)), |(live, guard)| async move {
        let mut live = live?;
        match live.recv().await {
            Some(event) if event.last => {
                // The stream is complete: nothing to cancel when it closes.
                if let Some(guard) = guard {
                    guard.disarm();
                }
                Some((event, (None, None)))
            }
            Some(event) => Some((event, (Some(live), guard))),
            None => None,
        }
    });
    let events = replayed
        .chain(live)
        .map(|e| Event::default().id(e.id).data(e.message.to_string()));
    sse_response(events, server, ends_when)
}

/// An SSE response of `events`, with keep-alive comments, that proxies pass on unbuffered;
/// counted in `palisade_streams_open` while open; ended early once `ends_when` is stopping.
pub(super) fn sse_response(
    events: impl futures_util::Stream<Item = Event> + Send + 'static,
    server: &Server,
    ends_when: Option<Shutdown>,
) -> Response {
    let open = server.metrics.as_ref().map(|m| m.stream_opened());
    let stopping = async move {
        match ends_when {
            Some(shutdown) => shutdown.stopping().await,
            None => std::future::pending().await,
        }
    };
    let events = events.take_until(stopping).map(move |event| {
        // Moved in, so the stream counts as open until it is dropped.
        let _open = &open;
        event
    });
    let mut response = Sse::new(events.map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::default())
        .into_response();
    // Proxies such as nginx would otherwise hold events back.
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
