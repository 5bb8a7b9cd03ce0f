//! Changes plugins report on one replica, heard on every other, over Redis pub/sub (channel
//! `PREFIX:events`): a replica publishes each [`ClusterEvent`] with its own name and skips its
//! own when they come back. Pub/sub delivers to the replicas connected at the time: a replica
//! cut off from Redis misses what was said meanwhile, as a client that was not listening does.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::Cluster;
use super::sessions::SessionEvent;
use crate::mcp::Server;
use crate::mcp::cluster_events::{ClusterBus, ClusterEvent};
use tokio::sync::broadcast;

/// Largest event heard; anything longer is not one of ours.
const MAX_EVENT_BYTES: usize = 64 << 10;
/// The longest wait before reconnecting the subscription.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// An event as it travels: who said it, and what: a change, or news of a shared session.
#[derive(Serialize, Deserialize)]
struct Envelope {
    from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    change: Option<ClusterEvent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<SessionEvent>,
    /// A task that changed, or has answers or a cancel waiting, by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task: Option<String>,
}

/// This replica's side of the channel.
pub struct RedisBus {
    cluster: Arc<Cluster>,
    /// Session events heard, for the HTTP transport.
    sessions: broadcast::Sender<SessionEvent>,
}

impl RedisBus {
    /// Publishes to, and (with [`RedisBus::listen`]) hears from, `cluster`'s channel.
    pub fn new(cluster: Arc<Cluster>) -> RedisBus {
        RedisBus {
            cluster,
            sessions: broadcast::channel(1024).0,
        }
    }

    /// Session events the other replicas tell, from now on.
    pub fn session_events(&self) -> broadcast::Receiver<SessionEvent> {
        self.sessions.subscribe()
    }

    /// Tells the other replicas news of a shared session, in the background.
    pub fn publish_session(&self, event: SessionEvent) {
        self.send(Envelope {
            from: self.cluster.replica.to_string(),
            change: None,
            session: Some(event),
            task: None,
        });
    }

    /// Tells the other replicas that the task `id` changed, or has answers or a cancel
    /// waiting, in the background.
    pub fn publish_task(&self, id: &str) {
        self.send(Envelope {
            from: self.cluster.replica.to_string(),
            change: None,
            session: None,
            task: Some(id.to_string()),
        });
    }

    fn channel(&self) -> String {
        self.cluster.key("events")
    }

    /// Hears the other replicas' events and hands them to `server`, until it is gone;
    /// reconnects (backing off) whenever the subscription drops.
    pub fn listen(self: &Arc<Self>, server: Weak<Server>) {
        let bus = self.clone();
        tokio::spawn(async move {
            let mut backoff = Duration::from_millis(250);
            loop {
                match bus.hear(&server).await {
                    Heard::ServerGone => return,
                    Heard::Dropped(why) => {
                        tracing::warn!(
                            "not hearing the other replicas ({why}); retrying in {backoff:?}"
                        );
                    }
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        });
    }

    /// One subscription, until it drops.
    async fn hear(&self, server: &Weak<Server>) -> Heard {
        let timeout = self.cluster.settings().timeout;
        let subscribed = tokio::time::timeout(timeout, async {
            let mut pubsub = self.cluster.client.get_async_pubsub().await?;
            pubsub.subscribe(self.channel()).await?;
            Ok::<_, redis::RedisError>(pubsub)
        })
        .await;
        let mut pubsub = match subscribed {
            Ok(Ok(pubsub)) => pubsub,
            Ok(Err(e)) => return Heard::Dropped(super::describe(&e)),
            Err(_) => return Heard::Dropped("Redis did not answer in time".into()),
        };
        tracing::debug!("hearing the other replicas");
        let mut messages = pubsub.on_message();
        while let Some(message) = messages.next().await {
            let Some(server) = server.upgrade() else {
                return Heard::ServerGone;
            };
            let payload = message.get_payload_bytes();
            if payload.len() > MAX_EVENT_BYTES {
                continue;
            }
            match serde_json::from_slice::<Envelope>(payload) {
                Ok(envelope) if *envelope.from == *self.cluster.replica => {}
                Ok(envelope) => {
                    if let Some(change) = envelope.change {
                        server.heard_from_cluster(change);
                    }
                    if let Some(session) = envelope.session {
                        // No receiver: this replica serves no HTTP sessions.
                        let _ = self.sessions.send(session);
                    }
                    if let Some(task) = envelope.task {
                        // Off the subscription's loop: taking answers reads Redis.
                        tokio::spawn(async move { server.tasks.heard(&task).await });
                    }
                }
                Err(e) => tracing::debug!("an event not understood, ignored: {e}"),
            }
        }
        match server.upgrade() {
            None => Heard::ServerGone,
            Some(_) => Heard::Dropped("the connection to Redis closed".into()),
        }
    }
}

enum Heard {
    ServerGone,
    Dropped(String),
}

impl ClusterBus for RedisBus {
    fn publish(&self, event: ClusterEvent) {
        self.send(Envelope {
            from: self.cluster.replica.to_string(),
            change: Some(event),
            session: None,
            task: None,
        });
    }
}

impl RedisBus {
    fn send(&self, envelope: Envelope) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(text) = serde_json::to_string(&envelope) else {
            return;
        };
        let cluster = self.cluster.clone();
        let channel = self.channel();
        runtime.spawn(async move {
            let sent = cluster
                .run(async |c| {
                    redis::cmd("PUBLISH")
                        .arg(&channel)
                        .arg(&text)
                        .query_async::<i64>(c)
                        .await
                })
                .await;
            if let Err(why) = sent {
                tracing::warn!("the other replicas were not told of a change: {why}");
            }
        });
    }
}
