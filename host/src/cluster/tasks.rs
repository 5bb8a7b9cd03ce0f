//! Tasks every replica reads (`[cluster]`), in Redis: each task's record (`PREFIX:task:ID`, a
//! hash of its JSON and its version, so that a late write of an older version never wins), the
//! answers and the cancel other replicas leave for the one that runs it
//! (`PREFIX:task:ID:answers`, `PREFIX:task:ID:cancel`), each owner's tasks
//! (`PREFIX:tasks:owner:DIGEST`, a sorted set by creation) and the tasks not ended
//! (`PREFIX:tasks:running`, for `palisade status`). Everything expires: a record with its TTL
//! once ended, a day past it while running.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Map, Value};
use sha2::Digest as _;

use super::Cluster;
use super::bus::RedisBus;
use crate::mcp::Server;
use crate::mcp::tasks::record::TaskRecord;
use crate::mcp::tasks::{Shared, SharedTasks};

/// Keeps a record unless a newer version is kept; indexes it by owner and, while it runs, among
/// the running. KEYS: record, owner index, running index. ARGV: JSON, version, expiry (ms), id,
/// created (ms), ended (1 or 0).
const PUT: &str = r"
local kept = tonumber(redis.call('HGET', KEYS[1], 'ver') or '-1')
if kept >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'rec', ARGV[1], 'ver', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
if ARGV[6] == '1' then redis.call('ZREM', KEYS[3], ARGV[4]) else redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4]) end
return 1
";

/// Takes every answer left (a hash) at once.
const TAKE_ANSWERS: &str = r"
local answers = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return answers
";

/// How long answers and cancels wait for the replica that runs a task.
const LEFT_FOR: Duration = Duration::from_secs(3600);

/// A running task's record outlives its TTL by this much: its runner fails or ends it first.
const RUNNING_MARGIN: Duration = Duration::from_secs(24 * 3600);

/// Tasks `palisade status` shows at most.
const MAX_LISTED: isize = 200;

/// The tasks of this replica's cluster.
pub struct RedisTasks {
    cluster: Arc<Cluster>,
    bus: Arc<RedisBus>,
}

impl RedisTasks {
    /// Tasks in `cluster`'s Redis, announced on `bus`.
    pub fn new(cluster: Arc<Cluster>, bus: Arc<RedisBus>) -> RedisTasks {
        RedisTasks { cluster, bus }
    }
}

fn task_key(cluster: &Cluster, id: &str) -> String {
    cluster.key(&format!("task:{id}"))
}

fn owner_key(cluster: &Cluster, owner: &str) -> String {
    // An owner may be any OAuth subject: the key holds a digest of it.
    let digest = sha2::Sha256::digest(owner.as_bytes());
    cluster.key(&format!("tasks:owner:{}", hex::encode(&digest[..16])))
}

fn running_key(cluster: &Cluster) -> String {
    cluster.key("tasks:running")
}

/// The records kept under `ids`, in that order; those gone are left out.
async fn records(cluster: &Cluster, ids: Vec<String>) -> Result<Vec<TaskRecord>, String> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = ids.iter().map(|id| task_key(cluster, id)).collect();
    let texts: Vec<Option<String>> = cluster
        .run(async |c| {
            let mut pipe = redis::pipe();
            for key in &keys {
                pipe.hget(key, "rec");
            }
            pipe.query_async(c).await
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok(texts
        .into_iter()
        .flatten()
        .filter_map(|text| serde_json::from_str(&text).ok())
        .collect())
}

/// Every task not ended in `cluster`, oldest first (at most [`MAX_LISTED`]).
pub(crate) async fn running(cluster: &Cluster) -> Result<Vec<TaskRecord>, String> {
    let key = running_key(cluster);
    let ids: Vec<String> = cluster
        .run(async |c| {
            redis::cmd("ZRANGE")
                .arg(&key)
                .arg(0)
                .arg(MAX_LISTED - 1)
                .query_async(c)
                .await
        })
        .await
        .map_err(|e| e.to_string())?;
    let mut tasks = records(cluster, ids).await?;
    tasks.retain(|t| !t.status.is_terminal());
    Ok(tasks)
}

impl SharedTasks for RedisTasks {
    fn replica(&self) -> &str {
        &self.cluster.replica
    }

    fn lease(&self) -> Duration {
        self.cluster.settings().task_lease
    }

    fn put(&self, record: TaskRecord) -> Shared<'_, bool> {
        Box::pin(async move {
            let text = serde_json::to_string(&record).map_err(|e| e.to_string())?;
            let ended = record.status.is_terminal();
            let until = record.created_ms.saturating_add(record.ttl_ms);
            let now = crate::mcp::tasks::record::now_ms();
            let mut expiry = until.saturating_sub(now).max(1000);
            if !ended {
                expiry = expiry.saturating_add(RUNNING_MARGIN.as_millis() as u64);
            }
            let keys = [
                task_key(&self.cluster, &record.id),
                owner_key(&self.cluster, &record.owner),
                running_key(&self.cluster),
            ];
            let kept: i64 = self
                .cluster
                .run(async |c| {
                    redis::Script::new(PUT)
                        .key(&keys[0])
                        .key(&keys[1])
                        .key(&keys[2])
                        .arg(&text)
                        .arg(record.version)
                        .arg(expiry)
                        .arg(&record.id)
                        .arg(record.created_ms)
                        .arg(if ended { "1" } else { "0" })
                        .invoke_async(c)
                        .await
                })
                .await
                .map_err(|e| e.to_string())?;
            Ok(kept == 1)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> Shared<'a, Option<TaskRecord>> {
        Box::pin(async move { Ok(records(&self.cluster, vec![id.to_string()]).await?.pop()) })
    }

    fn of_owner<'a>(&'a self, owner: &'a str) -> Shared<'a, Vec<TaskRecord>> {
        Box::pin(async move {
            let key = owner_key(&self.cluster, owner);
            let ids: Vec<String> = self
                .cluster
                .run(async |c| {
                    redis::cmd("ZRANGE")
                        .arg(&key)
                        .arg(0)
                        .arg(-1)
                        .query_async(c)
                        .await
                })
                .await
                .map_err(|e| e.to_string())?;
            let mut tasks = records(&self.cluster, ids).await?;
            // A digest may be shared; the record says whose it is.
            tasks.retain(|t| t.owner == owner);
            Ok(tasks)
        })
    }

    fn leave_answers<'a>(&'a self, id: &'a str, answers: Map<String, Value>) -> Shared<'a, ()> {
        Box::pin(async move {
            let key = self.cluster.key(&format!("task:{id}:answers"));
            let fields: Vec<(String, String)> = answers
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect();
            self.cluster
                .run(async |c| {
                    redis::pipe()
                        .atomic()
                        .hset_multiple(&key, &fields)
                        .ignore()
                        .pexpire(&key, LEFT_FOR.as_millis() as i64)
                        .ignore()
                        .query_async::<()>(c)
                        .await
                })
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn take_answers<'a>(&'a self, id: &'a str) -> Shared<'a, Map<String, Value>> {
        Box::pin(async move {
            let key = self.cluster.key(&format!("task:{id}:answers"));
            let pairs: Vec<(String, String)> = self
                .cluster
                .run(async |c| {
                    redis::Script::new(TAKE_ANSWERS)
                        .key(&key)
                        .invoke_async(c)
                        .await
                })
                .await
                .map_err(|e| e.to_string())?;
            Ok(pairs
                .into_iter()
                .filter_map(|(k, v)| Some((k, serde_json::from_str(&v).ok()?)))
                .collect())
        })
    }

    fn leave_cancel<'a>(&'a self, id: &'a str) -> Shared<'a, ()> {
        Box::pin(async move {
            let key = self.cluster.key(&format!("task:{id}:cancel"));
            self.cluster
                .run(async |c| {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(1)
                        .arg("PX")
                        .arg(LEFT_FOR.as_millis() as u64)
                        .query_async::<()>(c)
                        .await
                })
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn take_cancel<'a>(&'a self, id: &'a str) -> Shared<'a, bool> {
        Box::pin(async move {
            let key = self.cluster.key(&format!("task:{id}:cancel"));
            let left: Option<String> = self
                .cluster
                .run(async |c| redis::cmd("GETDEL").arg(&key).query_async(c).await)
                .await
                .map_err(|e| e.to_string())?;
            Ok(left.is_some())
        })
    }

    fn announce(&self, id: &str) {
        self.bus.publish_task(id);
    }
}

/// Renews `server`'s hold on the tasks it runs every third of the lease, until it is gone.
pub fn keep_leases(server: Weak<Server>, lease: Duration) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(lease / 3);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let Some(server) = server.upgrade() else {
                return;
            };
            server.tasks.renew_leases().await;
        }
    });
}
