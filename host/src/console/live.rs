//! Live updates: an SSE stream telling an open page what changed (`change`, with the topics)
//! and that a few seconds passed (`tick`, for the charts). The page fetches its `<main>` again
//! when a topic it shows changes; the stream itself carries no data.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::broadcast::error::RecvError;

use super::{Console, Ctx};
use crate::telemetry::Topic;

/// Live pages open at once, all operators together; a page past it works without updates.
pub(super) const MAX_STREAMS: usize = 32;
/// How often a tick is sent: the charts and "running for" move this often.
const TICK: Duration = Duration::from_secs(5);
/// Changes within this are sent as one event.
const COALESCE: Duration = Duration::from_millis(200);

/// Streams open.
#[derive(Default)]
pub(super) struct Streams {
    open: Arc<AtomicUsize>,
}

/// A stream's place among those open.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Streams {
    fn open(&self) -> Option<Slot> {
        let open = self.open.fetch_add(1, Ordering::Relaxed);
        let slot = Slot(self.open.clone());
        (open < MAX_STREAMS).then_some(slot)
    }
}

struct Live {
    console: Arc<Console>,
    login: Option<[u8; 32]>,
    changes: tokio::sync::broadcast::Receiver<Topic>,
    tick: tokio::time::Interval,
    _slot: Slot,
}

/// `GET /console/events`.
pub(super) async fn events(ctx: Ctx) -> Response {
    let Some(slot) = ctx.console.streams.open() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many live console pages are open; this one works without live updates",
        )
            .into_response();
    };
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.reset();
    let live = Live {
        changes: ctx.console.server.activity.subscribe(),
        console: ctx.console.clone(),
        login: ctx.operator.login,
        tick,
        _slot: slot,
    };
    let stream = futures_util::stream::unfold(live, |mut live| async move {
        let event = next(&mut live).await?;
        Some((Ok::<_, Infallible>(event), live))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// The stream's next event; `None` ends it (the login ended, the server is stopping).
async fn next(live: &mut Live) -> Option<Event> {
    let shutdown = live.console.server.shutdown.clone();
    tokio::select! {
        _ = shutdown.stopping() => None,
        change = live.changes.recv() => {
            let mut topics = BTreeSet::new();
            match change {
                Ok(topic) => { topics.insert(topic.name()); }
                Err(RecvError::Lagged(_)) => topics.extend(ALL.iter().map(|t| t.name())),
                Err(RecvError::Closed) => return None,
            }
            let until = tokio::time::sleep(COALESCE);
            tokio::pin!(until);
            loop {
                tokio::select! {
                    _ = &mut until => break,
                    change = live.changes.recv() => match change {
                        Ok(topic) => { topics.insert(topic.name()); }
                        Err(RecvError::Lagged(_)) => topics.extend(ALL.iter().map(|t| t.name())),
                        Err(RecvError::Closed) => break,
                    },
                }
            }
            Some(Event::default().event("change").data(topics.into_iter().collect::<Vec<_>>().join(" ")))
        }
        _ = live.tick.tick() => {
            let on = live.login.is_none_or(|key| live.console.logins.is_on(&key));
            on.then(|| Event::default().event("tick").data("tick"))
        }
    }
}

const ALL: [Topic; 5] = [
    Topic::Calls,
    Topic::Plugins,
    Topic::Grants,
    Topic::Sessions,
    Topic::Tasks,
];
