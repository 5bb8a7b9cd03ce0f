//! Sessions that replicas share (`[cluster]`) over Streamable HTTP. Any replica serves any
//! request of a session: one that has not seen it reads its record from Redis and serves it as
//! its own (`resume_session`), and each request reads the record again so that what another
//! replica changed holds (`refresh`). What a replica cannot do alone goes through Redis:
//!
//! - a message for the client's GET stream made where the client does not listen waits in the
//!   session's mailbox for the replica it listens on (`SharedOutbox`);
//! - a client message this replica has no use for (an answer to another replica's question,
//!   a cancellation of a request running elsewhere) is told to the others;
//! - every request stream is mirrored, so that `Last-Event-ID` resumes it anywhere
//!   (`resume_elsewhere`), even after its replica stopped: a replica that stops ends its
//!   streams at once and finishes their requests, whose events the client reads elsewhere.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::Response;
use axum::response::sse::Event;
use serde_json::{Value, json};

use super::error::HttpError;
use super::error::http_error;
use super::http_session::HttpSession;
use super::sse::sse_response;
use super::state::AppState;
use super::streams::{STANDALONE, StreamId, Streams, parse_event_id};
use crate::cluster::sessions::{MirroredEvent, SessionEvent, SharedSessions};
use crate::config::Identity;
use crate::mcp::jsonrpc::{INTERNAL_ERROR, INVALID_REQUEST};
use crate::mcp::session::{SessionRecord, SessionSync, Telling};
use crate::mcp::{Outbox, Outgoing, Session};

/// How often a stream resumed on another replica looks for its next events.
const POLL: Duration = Duration::from_millis(100);
/// Looks for a stream not mirrored yet this many times, [`POLL`] apart, before it is unknown:
/// 3 s, for a loaded replica whose background writes lag.
const MIRROR_LAG_TRIES: u32 = 30;
/// A resumed stream with no new event for this long checks that its replica is still there.
const QUIET: Duration = Duration::from_secs(15);
/// The longest a resumed stream is followed.
const LONGEST: Duration = Duration::from_secs(3600);

/// Where a shared session's messages go: a request's own stream when it is here; the GET
/// stream when the client listens here; else the session's mailbox in Redis.
pub(super) struct SharedOutbox {
    streams: Arc<Streams>,
    id: String,
    shared: Arc<SharedSessions>,
}

impl Outbox for SharedOutbox {
    fn send(&self, outgoing: Outgoing) {
        match &outgoing.related {
            Some(request) if self.streams.has_request(request) => {
                self.streams.push(Some(request), outgoing.message)
            }
            _ if self.streams.listens_standalone() => self.streams.push(None, outgoing.message),
            _ => self.shared.mail(&self.id, &outgoing.message),
        }
    }

    // The replica the client listens on tells it of changes, so it hears each once.
    fn hears_changes(&self) -> bool {
        self.streams.listens_standalone()
    }
}

/// Tells the other replicas what changed in a session here.
struct ReplicaSync {
    id: String,
    shared: Arc<SharedSessions>,
}

impl SessionSync for ReplicaSync {
    fn changed(&self, session: &Session) -> Telling {
        let record = session.record();
        let (id, shared) = (self.id.clone(), self.shared.clone());
        Box::pin(async move {
            let Some(record) = record else {
                return;
            };
            match shared.save(&id, &record).await {
                Ok(()) => shared.tell(SessionEvent::Changed { session: id }),
                Err(why) => tracing::warn!(session = id, "session state not shared: {why}"),
            }
        })
    }

    fn unclaimed(&self, _session: &Session, message: Value) {
        self.shared.tell(SessionEvent::Message {
            session: self.id.clone(),
            message,
        });
    }
}

/// The streams and the outbox of shared session `id` served here.
pub(super) fn parts(
    state: &AppState,
    shared: &Arc<SharedSessions>,
    id: &str,
) -> (Arc<Streams>, Arc<dyn Outbox>) {
    let mut random = [0u8; 4];
    // A failed generator leaves 0: numbers then start low, and may repeat another replica's.
    let _ = getrandom::fill(&mut random);
    let first = u64::from(u32::from_le_bytes(random)) << 16;
    let streams = Arc::new(Streams::shared(
        state.history.clone(),
        shared.mirror(id),
        first,
    ));
    let outbox = Arc::new(SharedOutbox {
        streams: streams.clone(),
        id: id.to_string(),
        shared: shared.clone(),
    });
    (streams, outbox)
}

/// Shares `session` (id `id`) with the other replicas.
pub(super) fn share(session: &Session, shared: &Arc<SharedSessions>, id: &str) {
    session.share(
        Arc::new(ReplicaSync {
            id: id.to_string(),
            shared: shared.clone(),
        }),
        &shared.ask_prefix(),
    );
}

/// Whether `id` looks like one of our session ids (32 hex digits): anything else is not looked
/// up in Redis.
fn plausible(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Session `id`, started on another replica (or forgotten here), served here from its record.
pub(super) async fn resume_session(
    state: &AppState,
    shared: &Arc<SharedSessions>,
    id: &str,
    identity: &Identity,
    request: &Value,
) -> Result<Arc<HttpSession>, HttpError> {
    let record = find_record(shared, id, identity, request).await?;
    let (streams, outbox) = parts(state, shared, id);
    let session = Session::resume(state.server.clone(), outbox, identity.clone(), &record)
        .map_err(|why| {
            http_error(
                StatusCode::NOT_FOUND,
                INVALID_REQUEST,
                format!("the session cannot be served here ({why}): initialize a new one"),
            )
            .about(request)
        })?;
    share(&session, shared, id);
    session.set_transport_id(id);
    let http_session = Arc::new(HttpSession {
        session,
        streams,
        last_active: parking_lot::Mutex::new(Instant::now()),
    });
    // Another request may have resumed it meanwhile: keep the first.
    let kept = state
        .sessions
        .lock()
        .entry(id.to_string())
        .or_insert_with(|| http_session.clone())
        .clone();
    if !Arc::ptr_eq(&kept, &http_session) {
        http_session.session.close();
    } else {
        tracing::info!(session = id, "HTTP session resumed from the cluster");
    }
    Ok(kept)
}

/// The record of session `id`, if `identity` started it; a refusal echoes `request`.
pub(super) async fn find_record(
    shared: &SharedSessions,
    id: &str,
    identity: &Identity,
    request: &Value,
) -> Result<SessionRecord, HttpError> {
    let unknown = || {
        http_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "unknown or expired session: initialize a new one",
        )
        .about(request)
    };
    if !plausible(id) {
        return Err(unknown());
    }
    match shared.load(id).await {
        Ok(Some(record)) if record.client == *identity.client => Ok(record),
        Ok(_) => Err(unknown()),
        Err(why) => Err(http_error(
            StatusCode::SERVICE_UNAVAILABLE,
            INTERNAL_ERROR,
            format!("the session cannot be found now: {why}; retry shortly"),
        )
        .about(request)),
    }
}

/// At each request of a shared session: its record again (what another replica changed), kept
/// another idle time; stored again if Redis lost it (it restarted). Redis being away does not
/// stop a session this replica knows: it is served as it stands.
pub(super) async fn refresh(shared: &SharedSessions, id: &str, http_session: &HttpSession) {
    let session = &http_session.session;
    match shared.load(id).await {
        Ok(Some(record)) if record.client == session.client() => session.apply(&record),
        Ok(Some(_)) => {}
        Ok(None) => {
            if let Some(record) = session.record() {
                let _ = shared.save(id, &record).await;
            }
        }
        Err(why) => tracing::debug!(session = id, "session state not read: {why}"),
    }
}

/// Stores a new session's record, so any replica can serve its next request.
pub(super) async fn store_new(shared: &SharedSessions, id: &str, session: &Session) {
    if let Some(record) = session.record()
        && let Err(why) = shared.save(id, &record).await
    {
        tracing::warn!(
            session = id,
            "session not shared: {why}; its next requests must reach this replica"
        );
    }
}

/// What the other replicas tell of sessions, applied to the copies served here, until the
/// transport is gone.
pub(super) async fn hear(state: Weak<AppState>, shared: Arc<SharedSessions>) {
    let mut events = shared.events();
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "session events missed: too many at once");
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let Some(state) = state.upgrade() else {
            return;
        };
        let (SessionEvent::Changed { session: id }
        | SessionEvent::Message { session: id, .. }
        | SessionEvent::Mail { session: id }
        | SessionEvent::Ended { session: id }) = &event;
        let Some(http_session) = state.sessions.lock().get(id).cloned() else {
            continue;
        };
        match event {
            SessionEvent::Changed { session: id } => {
                let shared = shared.clone();
                tokio::spawn(async move { refresh(&shared, &id, &http_session).await });
            }
            SessionEvent::Message { message, .. } => http_session.session.offer(message),
            SessionEvent::Mail { session: id } => {
                if http_session.streams.listens_standalone() {
                    let shared = shared.clone();
                    tokio::spawn(async move { deliver_mail(&shared, &id, &http_session).await });
                }
            }
            SessionEvent::Ended { session: id } => {
                state.sessions.lock().remove(&id);
                http_session.session.close();
                http_session.streams.close();
                tracing::info!(session = id, "HTTP session ended by the client (elsewhere)");
            }
        }
    }
}

/// Puts the messages waiting in the mailbox of session `id` on its GET stream here.
pub(super) async fn deliver_mail(shared: &SharedSessions, id: &str, http_session: &HttpSession) {
    for message in shared.take_mail(id).await {
        http_session.streams.push(None, message);
    }
}

/// A GET resuming stream `stream` of session `id` that this replica does not have: its
/// events after `after` from the mirror, then those still to come, until its last; when the
/// replica serving it is gone before that, an error response for each of its requests.
pub(super) async fn resume_elsewhere(
    state: &AppState,
    shared: &Arc<SharedSessions>,
    id: &str,
    stream: StreamId,
    after: Option<u64>,
) -> Result<Response, HttpError> {
    // The replica serving the stream writes it in the background: a client that resumes at
    // once may be a moment ahead of it.
    let mut tries = 0;
    let (head, events) = loop {
        let (head, events, _) = shared.mirrored(id, stream, 0).await.map_err(|why| {
            http_error(
                StatusCode::SERVICE_UNAVAILABLE,
                INTERNAL_ERROR,
                format!("the stream cannot be resumed now: {why}; retry shortly"),
            )
        })?;
        tries += 1;
        if head.is_some() || tries == MIRROR_LAG_TRIES {
            break (head, events);
        }
        tokio::time::sleep(POLL).await;
    };
    let Some(head) = head else {
        return Err(http_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "no such stream: it ended long ago, or the event id is not from this session",
        ));
    };
    tracing::info!(
        session = id,
        stream,
        replica = head.replica,
        "stream resumed from the cluster"
    );
    let mut follow = Follow {
        shared: shared.clone(),
        id: id.to_string(),
        stream,
        sent: after,
        read: 0,
        ready: std::collections::VecDeque::new(),
        done: false,
        last_new: Instant::now(),
        started: Instant::now(),
        replica: head.replica,
        requests: head.requests,
        highest: 0,
    };
    follow.take(events);
    let events = futures_util::stream::unfold(follow, |mut follow| async move {
        let event = follow.next().await?;
        let sent = Event::default()
            .id(event.id)
            .data(event.message.to_string());
        Some((sent, follow))
    });
    Ok(sse_response(
        events,
        &state.server,
        Some(state.server.shutdown.clone()),
    ))
}

/// Following a mirrored stream.
struct Follow {
    shared: Arc<SharedSessions>,
    id: String,
    stream: StreamId,
    /// The sequence number of the last event sent (or that the client had).
    sent: Option<u64>,
    /// Events of the mirror read so far.
    read: usize,
    ready: std::collections::VecDeque<MirroredEvent>,
    done: bool,
    last_new: Instant,
    started: Instant,
    replica: String,
    requests: Vec<Value>,
    /// The highest sequence number seen.
    highest: u64,
}

impl Follow {
    /// Takes events read from the mirror: those after the last sent are to be sent.
    fn take(&mut self, events: Vec<MirroredEvent>) {
        self.read += events.len();
        if !events.is_empty() {
            self.last_new = Instant::now();
        }
        for event in events {
            let seq = parse_event_id(&event.id).map(|(_, n)| n);
            if let Some(n) = seq {
                self.highest = self.highest.max(n);
            }
            if let Some(n) = seq
                && self.sent.is_none_or(|sent| n > sent)
            {
                self.sent = Some(n);
                self.ready.push_back(event);
            }
        }
    }

    async fn next(&mut self) -> Option<MirroredEvent> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                self.done |= event.last;
                return Some(event);
            }
            if self.done || self.started.elapsed() > LONGEST {
                return None;
            }
            tokio::time::sleep(POLL).await;
            match self
                .shared
                .mirrored(&self.id, self.stream, self.read as isize)
                .await
            {
                // The mirror dropped its oldest (a stream of over a thousand events): read
                // it whole again; what was sent is skipped by its number.
                Ok((_, events, held)) if events.is_empty() && held < self.read => {
                    self.read = 0;
                    if let Ok((_, all, _)) = self.shared.mirrored(&self.id, self.stream, 0).await {
                        self.take(all);
                    }
                }
                Ok((_, events, _)) => self.take(events),
                Err(why) => tracing::debug!("stream not read: {why}"),
            }
            if self.ready.is_empty()
                && self.last_new.elapsed() > QUIET
                && !self.shared.replica_is_there(&self.replica).await
            {
                self.gone();
            }
        }
    }

    /// The replica serving the stream is gone: each of its requests gets an error response.
    fn gone(&mut self) {
        tracing::warn!(
            replica = self.replica,
            "a resumed stream's replica is gone before answering"
        );
        let count = self.requests.len();
        for (n, request) in self.requests.iter().enumerate() {
            self.highest += 1;
            self.ready.push_back(MirroredEvent {
                id: format!("{}-{}", self.stream, self.highest),
                message: json!({
                    "jsonrpc": "2.0",
                    "id": request,
                    "error": {
                        "code": INTERNAL_ERROR,
                        "message": "the server replica serving this request stopped before \
                                    answering; send the request again",
                    },
                }),
                last: n + 1 == count,
            });
        }
        if count == 0 {
            self.done = true;
        }
    }
}

/// After SIGTERM: waits (within the grace period) for the requests of every session served here
/// to finish and their events to reach Redis, so clients that resume elsewhere get them.
pub(super) async fn drain(state: &AppState, shared: &SharedSessions) {
    let in_flight = || {
        let sessions: usize = state
            .sessions
            .lock()
            .values()
            .map(|s| s.session.in_flight())
            .sum();
        sessions + shared.backlog()
    };
    // One grace period in all: the connections' drain has used some of it.
    if !crate::shutdown::drain(state.server.shutdown.grace_left(), in_flight).await {
        tracing::warn!("the grace period is over: requests still in flight are dropped");
    }
    // The last events written need their round trip.
    let written = || shared.backlog();
    let _ = crate::shutdown::drain(Duration::from_secs(2), written).await;
}

/// Whether a GET's `stream` is one this replica cannot serve from what it has.
pub(super) fn elsewhere(http_session: &HttpSession, stream: StreamId) -> bool {
    stream != STANDALONE && !http_session.streams.has_stream(stream)
}
