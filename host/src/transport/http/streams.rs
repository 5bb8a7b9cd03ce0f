//! The SSE streams of one HTTP session: a stream per POST that carries requests, and the
//! standalone stream (GET). Every event has an id (`<stream>-<n>`) and is kept, so a client that
//! reconnects with `Last-Event-ID` gets what it missed, including a finished request's result.
//!
//! What is kept is bounded three ways: per session ([`HISTORY_BYTES`]), across the server's
//! sessions ([`SERVER_HISTORY_BYTES`]), and in time: a finished stream is forgotten
//! [`RESUME_WINDOW`] after it finished, so a client that went away leaves nothing behind for long.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use crate::mcp::{Outbox, Outgoing};

/// The session's messages go straight onto their streams, in order.
impl Outbox for Streams {
    fn send(&self, outgoing: Outgoing) {
        self.push(outgoing.related.as_ref(), outgoing.message);
    }
}

/// A stream's number within its session.
pub type StreamId = u64;

/// The standalone stream: messages not about a request (list changes, roots/list...).
pub const STANDALONE: StreamId = 0;

/// Events kept per stream for replay.
const HISTORY: usize = 1024;
/// Bytes of events kept for replay per session: past it, finished streams' events go first,
/// then the oldest of the stream written to.
const HISTORY_BYTES: usize = 16 << 20;
/// Events queued for a listener that is not reading: past it, the listener is dropped (its SSE
/// response ends) and the client resumes with `Last-Event-ID` from the history.
const LIVE_QUEUE: usize = 256;
/// Finished request streams kept for replay, per session.
const FINISHED_KEPT: usize = 64;
/// Bytes of replay history kept across every session of the server: past it, a session drops
/// its own finished streams, then its oldest events (never a stream's newest).
pub const SERVER_HISTORY_BYTES: usize = 256 << 20;
/// How long a client that dropped a stream has to reconnect: its unfinished requests are
/// cancelled after this, and a finished stream's events are forgotten.
pub const RESUME_WINDOW: Duration = Duration::from_secs(10);

/// Bytes of history every session of a server holds, together.
pub type ServerHistory = Arc<AtomicUsize>;

/// One SSE event.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEvent {
    pub id: String,
    pub message: Value,
    /// The last event of its stream: the response to the POST's requests.
    pub last: bool,
    /// The size of `message` as JSON, for the history's byte budget.
    bytes: usize,
}

/// What a listener gets: missed events, then live ones (none when the stream is finished).
pub struct Attached {
    pub replay: Vec<StreamEvent>,
    pub live: Option<mpsc::Receiver<StreamEvent>>,
    /// Which listener this is, for [`Streams::detach`].
    pub listener: u64,
}

#[derive(Default)]
pub struct Streams {
    inner: Mutex<Inner>,
    /// For a session replicas share: every request stream's events go to Redis too, so the
    /// client can resume them on another replica.
    mirror: Option<crate::cluster::sessions::StreamMirror>,
}

#[derive(Default)]
struct Inner {
    streams: HashMap<StreamId, Stream>,
    /// Request id (as JSON text) → the stream its messages go on.
    by_request: HashMap<String, StreamId>,
    next: StreamId,
    /// Finished streams, oldest first, with when they finished.
    finished: VecDeque<(StreamId, Instant)>,
    /// Bytes of every stream's history.
    history_bytes: usize,
    /// The same, summed over the server's sessions.
    server_bytes: ServerHistory,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.server_bytes
            .fetch_sub(self.history_bytes, Ordering::Relaxed);
    }
}

#[derive(Default)]
struct Stream {
    history: VecDeque<StreamEvent>,
    next_seq: u64,
    /// Events up to here reached a listener.
    delivered: u64,
    listener: Option<mpsc::Sender<StreamEvent>>,
    /// Counts listeners: a reconnecting client takes the stream over from the one before.
    listener_number: u64,
    requests: Vec<Value>,
    finished: bool,
    /// Sent to the mirror (a shared session's stream that is more than its response).
    mirrored: bool,
}

impl Streams {
    /// The streams of a new session, counting their history in `server_bytes` too.
    pub fn new(server_bytes: ServerHistory) -> Streams {
        Streams::with(server_bytes, None, 0)
    }

    /// The streams of a session replicas share: request streams are mirrored to `mirror`, and
    /// numbered from `first_id` (random, so that replicas do not reuse each other's numbers).
    pub fn shared(
        server_bytes: ServerHistory,
        mirror: crate::cluster::sessions::StreamMirror,
        first_id: StreamId,
    ) -> Streams {
        Streams::with(server_bytes, Some(mirror), first_id)
    }

    fn with(
        server_bytes: ServerHistory,
        mirror: Option<crate::cluster::sessions::StreamMirror>,
        first_id: StreamId,
    ) -> Streams {
        let mut inner = Inner::default();
        inner.server_bytes = server_bytes;
        inner.next = first_id;
        Streams {
            inner: Mutex::new(inner),
            mirror,
        }
    }

    /// Whether a client listens on the standalone stream here now.
    pub fn listens_standalone(&self) -> bool {
        self.inner
            .lock()
            .streams
            .get(&STANDALONE)
            .is_some_and(|s| s.listener.as_ref().is_some_and(|l| !l.is_closed()))
    }

    /// Whether request `request`'s stream is here and unfinished.
    pub fn has_request(&self, request: &Value) -> bool {
        self.inner
            .lock()
            .by_request
            .contains_key(&request.to_string())
    }

    /// Whether `stream` is known here.
    pub fn has_stream(&self, stream: StreamId) -> bool {
        self.inner.lock().streams.contains_key(&stream)
    }

    /// Forgets the streams that finished longer than [`RESUME_WINDOW`] ago.
    pub fn expire(&self, now: Instant) {
        let mut inner = self.inner.lock();
        while let Some(&(stream, at)) = inner.finished.front() {
            if now.duration_since(at) < RESUME_WINDOW {
                break;
            }
            inner.finished.pop_front();
            inner.forget(stream);
        }
    }

    /// Opens a stream for a POST carrying `requests`.
    pub fn open(&self, requests: &[Value]) -> StreamId {
        let mut inner = self.inner.lock();
        inner.next += 1;
        let id = inner.next;
        for request in requests {
            inner.by_request.insert(request.to_string(), id);
        }
        inner.streams.insert(
            id,
            Stream {
                requests: requests.to_vec(),
                ..Stream::default()
            },
        );
        id
    }

    /// Sends a message on the stream of the request it relates to, or on the standalone stream.
    pub fn push(&self, related: Option<&Value>, message: Value) {
        let mut inner = self.inner.lock();
        let stream = related
            .and_then(|r| inner.by_request.get(&r.to_string()).copied())
            .unwrap_or(STANDALONE);
        let event = inner.append(stream, message, false);
        self.mirrored(&mut inner, stream, &event);
    }

    /// Sends `event` of `stream` to the mirror, when there is one: request streams only, and
    /// only those that are more than their response (a plain JSON answer is not resumed). The
    /// first event of a stream that is more brings the stream's history with it.
    fn mirrored(&self, inner: &mut Inner, stream: StreamId, event: &StreamEvent) {
        let Some(mirror) = &self.mirror else {
            return;
        };
        let Some(s) = inner.streams.get_mut(&stream) else {
            return;
        };
        if stream == STANDALONE {
            return;
        }
        if s.mirrored {
            mirror.event(stream, &event.id, &event.message, event.last, event.bytes);
            return;
        }
        if event.last && s.history.len() <= 1 {
            return;
        }
        s.mirrored = true;
        mirror.opened(stream, &s.requests);
        for e in &s.history {
            mirror.event(stream, &e.id, &e.message, e.last, e.bytes);
        }
    }

    /// Sends the response that ends `stream` (none if its requests were cancelled).
    pub fn finish(&self, stream: StreamId, response: Option<Value>) {
        let mut inner = self.inner.lock();
        match response {
            Some(message) => {
                let event = inner.append(stream, message, true);
                self.mirrored(&mut inner, stream, &event);
            }
            None => {
                if let Some(s) = inner.streams.get_mut(&stream) {
                    s.listener = None;
                }
            }
        }
        let requests = match inner.streams.get_mut(&stream) {
            Some(s) => {
                s.finished = true;
                s.listener = None;
                std::mem::take(&mut s.requests)
            }
            None => return,
        };
        for request in requests {
            inner.by_request.remove(&request.to_string());
        }
        inner.finished.push_back((stream, Instant::now()));
        while inner.finished.len() > FINISHED_KEPT {
            if let Some((old, _)) = inner.finished.pop_front() {
                inner.forget(old);
            }
        }
    }

    /// Becomes the listener of `stream`: the events after `after` (or those never delivered),
    /// then live events. `None` if the stream is unknown (or long gone).
    pub fn attach(&self, stream: StreamId, after: Option<u64>) -> Option<Attached> {
        let mut inner = self.inner.lock();
        if stream == STANDALONE {
            inner.streams.entry(STANDALONE).or_default();
        }
        let s = inner.streams.get_mut(&stream)?;
        let from = after.map(|n| n + 1).unwrap_or(s.delivered);
        let replay: Vec<StreamEvent> = s
            .history
            .iter()
            .filter(|e| seq_of(&e.id).is_some_and(|n| n >= from))
            .cloned()
            .collect();
        s.delivered = s.next_seq;
        s.listener_number += 1;
        let live = if s.finished {
            None
        } else {
            let (tx, rx) = mpsc::channel(LIVE_QUEUE);
            s.listener = Some(tx);
            Some(rx)
        };
        Some(Attached {
            replay,
            live,
            listener: s.listener_number,
        })
    }

    /// Listener number `listener` of `stream` is gone. Returns the requests of the stream if it
    /// is unfinished and nobody took it over (the caller decides whether to cancel them).
    pub fn detach(&self, stream: StreamId, listener: u64) -> Vec<Value> {
        let mut inner = self.inner.lock();
        match inner.streams.get_mut(&stream) {
            Some(s) if !s.finished && s.listener_number == listener => {
                s.listener = None;
                s.requests.clone()
            }
            _ => Vec::new(),
        }
    }

    /// Whether `stream` is unfinished and nobody listens to it.
    pub fn abandoned(&self, stream: StreamId) -> bool {
        let inner = self.inner.lock();
        inner
            .streams
            .get(&stream)
            .is_some_and(|s| !s.finished && s.listener.as_ref().is_none_or(|l| l.is_closed()))
    }

    /// Ends every stream's connection and forgets them: the session is over.
    pub fn close(&self) {
        let mut inner = self.inner.lock();
        let streams: Vec<StreamId> = inner.streams.keys().copied().collect();
        for stream in streams {
            inner.forget(stream);
        }
        inner.finished.clear();
        inner.by_request.clear();
    }

    /// Whether any stream has a listener (the session is in use).
    pub fn any_listener(&self) -> bool {
        let inner = self.inner.lock();
        inner
            .streams
            .values()
            .any(|s| s.listener.as_ref().is_some_and(|l| !l.is_closed()))
    }
}

impl Inner {
    fn append(&mut self, stream: StreamId, message: Value, last: bool) -> StreamEvent {
        let bytes = crate::transport::queue::json_len(&message);
        let s = self.streams.entry(stream).or_default();
        let event = StreamEvent {
            id: format!("{stream}-{}", s.next_seq),
            message,
            last,
            bytes,
        };
        s.next_seq += 1;
        let dropped = if s.history.len() == HISTORY {
            s.history.pop_front().map_or(0, |old| old.bytes)
        } else {
            0
        };
        s.history.push_back(event.clone());
        // A listener that does not keep up is let go: the client resumes from the history.
        let delivered = s
            .listener
            .as_ref()
            .is_some_and(|l| l.try_send(event.clone()).is_ok());
        if delivered {
            s.delivered = s.next_seq;
        } else {
            s.listener = None;
        }
        self.released(dropped);
        self.kept(bytes);
        self.keep_history_within_budget(stream);
        event
    }

    /// Drops the oldest events until the history fits [`HISTORY_BYTES`]: finished streams'
    /// first, then those of `current` (never its newest, which a listener may still need).
    fn keep_history_within_budget(&mut self, current: StreamId) {
        while self.over_budget() {
            let Some((oldest, _)) = self.finished.pop_front() else {
                break;
            };
            self.forget(oldest);
        }
        while self.over_budget() {
            let Some(s) = self.streams.get_mut(&current) else {
                break;
            };
            if s.history.len() <= 1 {
                break;
            }
            let dropped = s.history.pop_front().map_or(0, |old| old.bytes);
            self.released(dropped);
        }
    }

    fn over_budget(&self) -> bool {
        self.history_bytes > HISTORY_BYTES
            || self.server_bytes.load(Ordering::Relaxed) > SERVER_HISTORY_BYTES
    }

    fn kept(&mut self, bytes: usize) {
        self.history_bytes += bytes;
        self.server_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    fn released(&mut self, bytes: usize) {
        self.history_bytes -= bytes;
        self.server_bytes.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Removes a stream and its history.
    fn forget(&mut self, stream: StreamId) {
        if let Some(s) = self.streams.remove(&stream) {
            self.released(s.history.iter().map(|e| e.bytes).sum::<usize>());
            for request in &s.requests {
                self.by_request.remove(&request.to_string());
            }
        }
    }
}

/// The stream and sequence number of an event id `<stream>-<n>`.
pub fn parse_event_id(id: &str) -> Option<(StreamId, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

fn seq_of(id: &str) -> Option<u64> {
    parse_event_id(id).map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reconnecting_listener_gets_what_it_missed_and_the_result() {
        let streams = Streams::default();
        let stream = streams.open(&[json!(1)]);
        let first = streams.attach(stream, None).unwrap();
        let mut live = first.live.unwrap();
        streams.push(Some(&json!(1)), json!("progress 1"));
        assert_eq!(live.try_recv().unwrap().message, json!("progress 1"));
        // The client drops the connection; two more messages and the result come meanwhile.
        drop(live);
        assert_eq!(streams.detach(stream, first.listener), vec![json!(1)]);
        streams.push(Some(&json!(1)), json!("progress 2"));
        streams.finish(stream, Some(json!("result")));
        let again = streams.attach(stream, Some(0)).unwrap();
        let replayed: Vec<Value> = again.replay.iter().map(|e| e.message.clone()).collect();
        assert_eq!(replayed, [json!("progress 2"), json!("result")]);
        assert!(again.replay.last().unwrap().last);
        assert!(
            again.live.is_none(),
            "a finished stream ends after the replay"
        );
    }

    #[test]
    fn a_listener_that_does_not_read_is_let_go_and_resumes_from_the_history() {
        let streams = Streams::default();
        let stream = streams.open(&[json!(1)]);
        let first = streams.attach(stream, None).unwrap();
        let mut live = first.live.unwrap();
        for n in 0..LIVE_QUEUE + 10 {
            streams.push(Some(&json!(1)), json!(n));
        }
        // The queue held LIVE_QUEUE events, then the listener was dropped.
        let mut got = 0;
        while live.try_recv().is_ok() {
            got += 1;
        }
        assert_eq!(got, LIVE_QUEUE);
        assert!(matches!(
            live.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        let again = streams.attach(stream, Some(LIVE_QUEUE as u64 - 1)).unwrap();
        assert_eq!(again.replay.len(), 10);
    }

    #[test]
    fn the_history_keeps_within_its_byte_budget() {
        let streams = Streams::default();
        let big = json!("x".repeat(1 << 20));
        for n in 0..40 {
            let stream = streams.open(&[json!(n)]);
            streams.push(Some(&json!(n)), big.clone());
            streams.finish(stream, Some(json!("done")));
        }
        let open = streams.open(&[json!("open")]);
        for _ in 0..40 {
            streams.push(Some(&json!("open")), big.clone());
        }
        let inner = streams.inner.lock();
        assert!(
            inner.history_bytes <= HISTORY_BYTES,
            "{}",
            inner.history_bytes
        );
        let counted: usize = inner
            .streams
            .values()
            .flat_map(|s| s.history.iter())
            .map(|e| e.bytes)
            .sum();
        assert_eq!(counted, inner.history_bytes);
        assert!(!inner.streams[&open].history.is_empty());
    }

    #[test]
    fn finished_streams_are_forgotten_after_the_resume_window() {
        let streams = Streams::default();
        let stream = streams.open(&[json!(1)]);
        streams.push(Some(&json!(1)), json!("progress"));
        streams.finish(stream, Some(json!("result")));
        streams.expire(Instant::now());
        assert!(
            streams.attach(stream, Some(0)).is_some(),
            "kept for a while"
        );
        streams.expire(Instant::now() + RESUME_WINDOW);
        assert!(streams.attach(stream, Some(0)).is_none());
        assert_eq!(streams.inner.lock().history_bytes, 0);
    }

    #[test]
    fn sessions_share_one_history_budget_and_give_it_back() {
        let server = ServerHistory::default();
        let big = json!("x".repeat(1 << 20));
        let sessions: Vec<Streams> = (0..40).map(|_| Streams::new(server.clone())).collect();
        for (n, streams) in sessions.iter().enumerate() {
            for k in 0..12 {
                let stream = streams.open(&[json!([n, k])]);
                streams.push(Some(&json!([n, k])), big.clone());
                streams.finish(stream, Some(json!("done")));
            }
        }
        let total = server.load(Ordering::Relaxed);
        // Each session may keep one event over the shared budget, never more.
        assert!(total <= SERVER_HISTORY_BYTES + 40 * (2 << 20), "{total}");
        let counted: usize = sessions.iter().map(|s| s.inner.lock().history_bytes).sum();
        assert_eq!(counted, total);
        sessions[0].close();
        assert_eq!(sessions[0].inner.lock().history_bytes, 0);
        drop(sessions);
        assert_eq!(server.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_new_listener_takes_over_and_the_old_one_going_leaves_it_alone() {
        let streams = Streams::default();
        let stream = streams.open(&[json!(1)]);
        let old = streams.attach(stream, None).unwrap();
        let new = streams.attach(stream, None).unwrap();
        assert!(streams.detach(stream, old.listener).is_empty());
        streams.push(Some(&json!(1)), json!("still here"));
        let mut live = new.live.unwrap();
        assert_eq!(live.try_recv().unwrap().message, json!("still here"));
    }

    #[test]
    fn unrelated_messages_wait_on_the_standalone_stream() {
        let streams = Streams::default();
        streams.push(None, json!("list changed"));
        streams.push(Some(&json!("no such request")), json!("late"));
        let attached = streams.attach(STANDALONE, None).unwrap();
        assert_eq!(attached.replay.len(), 2);
        assert_eq!(attached.replay[0].id, "0-0");
        // Delivered once: a second listener does not get them again without Last-Event-ID.
        assert!(streams.attach(STANDALONE, None).unwrap().replay.is_empty());
        assert_eq!(parse_event_id("0-1"), Some((0, 1)));
        assert_eq!(parse_event_id("x"), None);
    }
}
