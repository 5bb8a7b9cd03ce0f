//! Sessions of the initialize-based revisions shared by replicas, in Redis:
//!
//! - `PREFIX:session:ID`: the session's record (JSON), expiring when the session is idle;
//!   any replica reads it to serve a request of a session it has not seen, and again at each
//!   request so that what another replica changed (log level, subscriptions, roots) holds.
//! - `PREFIX:session:ID:mail`: messages for the client's GET stream made on a replica the
//!   client does not listen on; the replica it listens on takes them (a `mail` event says when).
//! - `PREFIX:session:ID:stream:N` and `…:head`: every event of a request's SSE stream, with the
//!   replica serving it and its requests, so that a client resumes the stream
//!   (`Last-Event-ID`) on any replica, even after that replica stopped.
//!
//! Events between replicas ([`SessionEvent`]) travel on the cluster's channel (`bus.rs`).

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use super::bus::RedisBus;
use super::{Cluster, Unavailable};
use crate::mcp::session::SessionRecord;

/// Messages kept for a GET stream nobody listens to, per session.
const MAIL_KEPT: isize = 256;
/// Events kept per mirrored stream.
const STREAM_EVENTS_KEPT: isize = 1024;
/// How long a mirrored stream outlives its last event: the time a client has to resume it on
/// another replica.
pub const MIRROR_TTL: Duration = Duration::from_secs(300);
/// Bytes of events one replica mirrors per session before it mirrors only the responses.
const MIRROR_BYTES_PER_SESSION: usize = 16 << 20;
/// Mirrored events waiting to be written, at most; past it they are dropped (Redis is away).
const MIRROR_QUEUE: usize = 10_000;

/// What one replica tells the others of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum SessionEvent {
    /// Its record changed: read it again.
    Changed {
        /// The session's id.
        session: String,
    },
    /// A client message the replica that got it had no use for.
    Message {
        /// The session's id.
        session: String,
        /// The JSON-RPC message.
        message: Value,
    },
    /// Its mailbox has messages for the GET stream.
    Mail {
        /// The session's id.
        session: String,
    },
    /// The client ended it (DELETE).
    Ended {
        /// The session's id.
        session: String,
    },
}

/// One event of a request's stream, as mirrored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MirroredEvent {
    /// Its SSE id (`STREAM-SEQ`).
    pub id: String,
    /// The JSON-RPC message.
    pub message: Value,
    /// Whether it is the stream's last (its response).
    pub last: bool,
}

/// Who serves a mirrored stream, and for which requests.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamHead {
    /// The replica serving the requests.
    pub replica: String,
    /// The requests' ids.
    pub requests: Vec<Value>,
}

enum Mirrored {
    Head {
        session: Arc<str>,
        stream: u64,
        head: StreamHead,
    },
    Event {
        session: Arc<str>,
        stream: u64,
        event: MirroredEvent,
    },
}

/// This replica's access to the shared sessions.
pub struct SharedSessions {
    cluster: Arc<Cluster>,
    bus: Arc<RedisBus>,
    idle: Duration,
    mirror: mpsc::Sender<Mirrored>,
    /// Events mirrored and not written yet.
    backlog: Arc<std::sync::atomic::AtomicUsize>,
}

impl SharedSessions {
    /// Sessions in `cluster`'s Redis, forgotten after `idle` without a request.
    pub fn new(cluster: Arc<Cluster>, bus: Arc<RedisBus>, idle: Duration) -> Arc<SharedSessions> {
        let (mirror, queued) = mpsc::channel(MIRROR_QUEUE);
        let backlog = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        tokio::spawn(write_mirrors(cluster.clone(), queued, backlog.clone()));
        Arc::new(SharedSessions {
            cluster,
            bus,
            idle,
            mirror,
            backlog,
        })
    }

    /// This replica's name.
    pub fn replica(&self) -> &str {
        &self.cluster.replica
    }

    /// What ids of this replica's requests to clients start with.
    pub fn ask_prefix(&self) -> String {
        format!("palisade-{}", self.cluster.replica)
    }

    fn key(&self, session: &str, rest: &str) -> String {
        self.cluster.key(&format!("session:{session}{rest}"))
    }

    /// Stores `record`, expiring after the idle time.
    pub async fn save(&self, session: &str, record: &SessionRecord) -> Result<(), Unavailable> {
        let text = serde_json::to_string(record).unwrap_or_default();
        let key = self.key(session, "");
        let ttl = self.idle.as_millis() as u64;
        self.cluster
            .run(async |c| c.pset_ex::<_, _, ()>(&key, &text, ttl).await)
            .await
    }

    /// The record of `session`, keeping it another idle time; none when unknown or expired.
    pub async fn load(&self, session: &str) -> Result<Option<SessionRecord>, Unavailable> {
        let key = self.key(session, "");
        let ttl = self.idle.as_millis() as u64;
        let text: Option<String> = self
            .cluster
            .run(async |c| {
                redis::cmd("GETEX")
                    .arg(&key)
                    .arg("PX")
                    .arg(ttl)
                    .query_async(c)
                    .await
            })
            .await?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Forgets `session` and tells the other replicas.
    pub async fn end(&self, session: &str) {
        let keys = [self.key(session, ""), self.key(session, ":mail")];
        let _ = self
            .cluster
            .run(async |c| c.del::<_, ()>(&keys).await)
            .await;
        self.tell(SessionEvent::Ended {
            session: session.into(),
        });
    }

    /// Tells the other replicas, in the background.
    pub fn tell(&self, event: SessionEvent) {
        self.bus.publish_session(event);
    }

    /// Every replica's session events from now on.
    pub fn events(&self) -> broadcast::Receiver<SessionEvent> {
        self.bus.session_events()
    }

    /// Leaves `message` for the GET stream of `session`, wherever the client opens it, and
    /// says so.
    pub fn mail(self: &Arc<Self>, session: &str, message: &Value) {
        let shared = self.clone();
        let session = session.to_string();
        let key = self.key(&session, ":mail");
        let text = message.to_string();
        tokio::spawn(async move {
            let ttl = shared.idle.as_millis() as u64;
            let stored = shared
                .cluster
                .run(async |c| {
                    redis::pipe()
                        .rpush(&key, &text)
                        .ignore()
                        .ltrim(&key, -MAIL_KEPT, -1)
                        .ignore()
                        .pexpire(&key, ttl as i64)
                        .ignore()
                        .query_async::<()>(c)
                        .await
                })
                .await;
            match stored {
                Ok(()) => shared.tell(SessionEvent::Mail { session }),
                Err(why) => tracing::warn!("a message for a client's GET stream was lost: {why}"),
            }
        });
    }

    /// Takes the messages left for the GET stream of `session`.
    pub async fn take_mail(&self, session: &str) -> Vec<Value> {
        let key = self.key(session, ":mail");
        let taken: Result<Option<Vec<String>>, _> = self
            .cluster
            .run(async |c| {
                redis::cmd("LPOP")
                    .arg(&key)
                    .arg(MAIL_KEPT)
                    .query_async(c)
                    .await
            })
            .await;
        taken
            .ok()
            .flatten()
            .unwrap_or_default()
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect()
    }

    /// A mirror of `session`'s request streams, for resuming them elsewhere.
    pub fn mirror(self: &Arc<Self>, session: &str) -> StreamMirror {
        StreamMirror {
            shared: self.clone(),
            session: session.into(),
            budget: parking_lot::Mutex::new((std::time::Instant::now(), 0)),
        }
    }

    /// Events mirrored and not yet written to Redis.
    pub fn backlog(&self) -> usize {
        self.backlog.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Who serves `stream` of `session` (none: unknown, or expired), its mirrored events from
    /// index `from`, and how many the mirror holds (fewer than `from`: the oldest were dropped).
    pub async fn mirrored(
        &self,
        session: &str,
        stream: u64,
        from: isize,
    ) -> Result<(Option<StreamHead>, Vec<MirroredEvent>, usize), Unavailable> {
        let head_key = self.key(session, &format!(":stream:{stream}:head"));
        let events_key = self.key(session, &format!(":stream:{stream}"));
        let (head, events, held): (Option<String>, Vec<String>, usize) = self
            .cluster
            .run(async |c| {
                redis::pipe()
                    .get(&head_key)
                    .lrange(&events_key, from, -1)
                    .llen(&events_key)
                    .query_async(c)
                    .await
            })
            .await?;
        Ok((
            head.and_then(|h| serde_json::from_str(&h).ok()),
            events
                .iter()
                .filter_map(|e| serde_json::from_str(e).ok())
                .collect(),
            held,
        ))
    }

    /// Whether `replica` said it was there lately.
    pub async fn replica_is_there(&self, replica: &str) -> bool {
        let key = self.cluster.key(&format!("replica:{replica}"));
        self.cluster
            .run(async |c| c.exists::<_, bool>(&key).await)
            .await
            .unwrap_or(true)
    }
}

/// Mirrors one session's request streams to Redis, in order, within a byte budget per
/// [`MIRROR_TTL`] (what was mirrored before has expired by then).
pub struct StreamMirror {
    shared: Arc<SharedSessions>,
    session: Arc<str>,
    budget: parking_lot::Mutex<(std::time::Instant, usize)>,
}

impl StreamMirror {
    /// A stream for `requests` opened here.
    pub fn opened(&self, stream: u64, requests: &[Value]) {
        self.queue(Mirrored::Head {
            session: self.session.clone(),
            stream,
            head: StreamHead {
                replica: self.shared.replica().into(),
                requests: requests.to_vec(),
            },
        });
    }

    /// An event of `stream`; past the byte budget only a stream's last is mirrored.
    pub fn event(&self, stream: u64, id: &str, message: &Value, last: bool, bytes: usize) {
        let over = {
            let mut budget = self.budget.lock();
            if budget.0.elapsed() > MIRROR_TTL {
                *budget = (std::time::Instant::now(), 0);
            }
            budget.1 += bytes;
            budget.1 > MIRROR_BYTES_PER_SESSION
        };
        if over && !last {
            return;
        }
        self.queue(Mirrored::Event {
            session: self.session.clone(),
            stream,
            event: MirroredEvent {
                id: id.into(),
                message: message.clone(),
                last,
            },
        });
    }

    fn queue(&self, mirrored: Mirrored) {
        use std::sync::atomic::Ordering;
        self.shared.backlog.fetch_add(1, Ordering::Relaxed);
        if self.shared.mirror.try_send(mirrored).is_err() {
            self.shared.backlog.fetch_sub(1, Ordering::Relaxed);
            tracing::warn!("a stream event was not mirrored: too many are waiting");
        }
    }
}

/// Writes mirrored stream events to Redis in the order they came, many in one round trip.
async fn write_mirrors(
    cluster: Arc<Cluster>,
    mut queued: mpsc::Receiver<Mirrored>,
    backlog: Arc<std::sync::atomic::AtomicUsize>,
) {
    let ttl = MIRROR_TTL.as_millis() as i64;
    let mut batch = Vec::with_capacity(256);
    while queued.recv_many(&mut batch, 256).await > 0 {
        let mut pipe = redis::pipe();
        for mirrored in &batch {
            match mirrored {
                Mirrored::Head {
                    session,
                    stream,
                    head,
                } => {
                    let key = cluster.key(&format!("session:{session}:stream:{stream}:head"));
                    let text = serde_json::to_string(head).unwrap_or_default();
                    pipe.pset_ex(&key, text, ttl as u64).ignore();
                }
                Mirrored::Event {
                    session,
                    stream,
                    event,
                } => {
                    let key = cluster.key(&format!("session:{session}:stream:{stream}"));
                    let head = format!("{key}:head");
                    let text = serde_json::to_string(event).unwrap_or_default();
                    pipe.rpush(&key, text)
                        .ignore()
                        .ltrim(&key, -STREAM_EVENTS_KEPT, -1)
                        .ignore()
                        .pexpire(&key, ttl)
                        .ignore()
                        .pexpire(&head, ttl)
                        .ignore();
                }
            }
        }
        let written = cluster.run(async |c| pipe.query_async::<()>(c).await).await;
        if let Err(why) = written {
            tracing::warn!(events = batch.len(), "stream events not mirrored: {why}");
        }
        backlog.fetch_sub(batch.len(), std::sync::atomic::Ordering::Relaxed);
        batch.clear();
    }
}
