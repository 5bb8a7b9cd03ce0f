//! Each replica says it is there: a key per replica, refreshed every few seconds and expiring
//! soon after a replica stops refreshing it (a crash), deleted when it stops on purpose.
//! `palisade status` reads them.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::Cluster;
use crate::shutdown::Shutdown;

/// How often a replica refreshes its key.
const REFRESH: Duration = Duration::from_secs(5);
/// How long a key outlives its last refresh: three refreshes missed and the replica is gone.
pub const SEEN_WITHIN: Duration = Duration::from_secs(15);

/// What a replica says of itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplicaInfo {
    /// Its name (host name and process id).
    pub replica: String,
    /// Palisade's version.
    pub version: String,
    /// Where it serves MCP (`http://ADDR/mcp`, or `stdio`).
    pub serving: String,
    /// When it started, in seconds since the Unix epoch.
    pub started_unix: u64,
    /// Its last `PING` round trip to Redis, in microseconds.
    pub redis_round_trip_us: u64,
}

/// This replica's presence, kept fresh until it leaves.
pub struct Presence {
    leaving: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Presence {
    /// Deletes this replica's key now (the server is done), so it is not listed any longer.
    pub async fn leave(self) {
        self.leaving.cancel();
        let _ = self.task.await;
    }
}

/// Keeps this replica's key fresh until `shutdown` (SIGTERM) or [`Presence::leave`], then
/// deletes it.
pub fn start(
    cluster: Arc<Cluster>,
    serving: Box<dyn Fn() -> String + Send>,
    shutdown: Shutdown,
) -> Presence {
    let started_unix = unix_now().as_secs();
    let leaving = CancellationToken::new();
    let left = leaving.clone();
    let task = tokio::spawn(async move {
        let key = cluster.key(&format!("replica:{}", cluster.replica));
        let mut ticks = tokio::time::interval(REFRESH);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = shutdown.stopping() => break,
                _ = left.cancelled() => break,
            }
            // A replica that cannot reach Redis simply is not seen; calls report why.
            let Ok(round_trip) = cluster.ping().await else {
                continue;
            };
            let info = ReplicaInfo {
                replica: cluster.replica.to_string(),
                version: env!("CARGO_PKG_VERSION").into(),
                serving: serving(),
                started_unix,
                redis_round_trip_us: round_trip.as_micros() as u64,
            };
            let Ok(text) = serde_json::to_string(&info) else {
                continue;
            };
            let ttl = SEEN_WITHIN.as_millis() as u64;
            let _ = cluster
                .run(async |c| c.pset_ex::<_, _, ()>(&key, &text, ttl).await)
                .await;
        }
        let _ = cluster.run(async |c| c.del::<_, ()>(&key).await).await;
    });
    Presence { leaving, task }
}

/// Every replica seen within [`SEEN_WITHIN`], by name.
pub async fn replicas(cluster: &Cluster) -> Result<Vec<ReplicaInfo>, super::Unavailable> {
    let pattern = cluster.key("replica:*");
    let keys: Vec<String> = cluster
        .run(async |c| {
            let mut keys = Vec::new();
            let mut cursor = 0u64;
            // Bounded: a deployment has tens of replicas, not thousands.
            for _ in 0..1000 {
                let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(500)
                    .query_async(c)
                    .await?;
                keys.extend(batch);
                cursor = next;
                if cursor == 0 || keys.len() >= 10_000 {
                    break;
                }
            }
            Ok(keys)
        })
        .await?;
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let values: Vec<Option<String>> = cluster.run(async |c| c.mget(&keys).await).await?;
    let mut replicas: Vec<ReplicaInfo> = values
        .into_iter()
        .flatten()
        .filter_map(|text| serde_json::from_str(&text).ok())
        .collect();
    replicas.sort_by(|a, b| a.replica.cmp(&b.replica));
    Ok(replicas)
}

fn unix_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Seconds since the Unix epoch, now.
pub fn unix_seconds() -> u64 {
    unix_now().as_secs()
}
