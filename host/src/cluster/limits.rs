//! The limits replicas count together in Redis: calls per minute (each client's and
//! everyone's), the fuel budget, and running calls. One script checks and counts them
//! atomically, so admitting a call costs one round trip (`EVALSHA`); giving the slot back and
//! charging the fuel a call burned is a second script, sent after the call without making it
//! wait, for every call that ended meanwhile at once (one round trip for many calls under load).
//!
//! The buckets refill by Redis's clock (`TIME`), never a replica's, so replicas whose clocks
//! disagree still count alike. Every key expires once it would be full again or its calls
//! would have timed out, so Redis holds only what is in use. A replica that dies mid-call
//! keeps its slot until the lease runs out: the call's time limit, and a margin.
//!
//! Keys, for plugin `P` (the `{P}` hash tag keeps one plugin's keys on one Redis Cluster node):
//! `PREFIX:limits:{P}:running` (sorted set of call slots by lease end), `…:fuel`, `…:calls`
//! and `…:client:HASH` (hashes `level`, `at`); `HASH` is a digest of the client's name, so
//! a name of any length or byte makes a key of one size.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::Script;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::Cluster;
use crate::config::FailPolicy;
use crate::runtime::{
    LimitExceeded, Limits, SharedFuture, SharedLimits, SharedSlot, SharedVerdict,
};

/// How long past its time limit a call's slot is kept when its replica never gives it back.
const LEASE_MARGIN: Duration = Duration::from_secs(10);

/// Checks and counts one call. KEYS: running, fuel, client bucket, plugin bucket. ARGV:
/// concurrent calls, slot id, lease ms, fuel burst, fuel per second, calls a minute per
/// client, calls a minute. Answers `{0, 0}` (let in) or `{limit, retry_after_ms}` with limit
/// 1 concurrency, 2 fuel budget, 3 client rate, 4 rate: the order a lone process checks them.
const ADMIT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function level(key, capacity, per_ms)
  local v = redis.call('HMGET', key, 'level', 'at')
  if not v[1] then return capacity end
  return math.min(capacity, tonumber(v[1]) + math.max(0, now - tonumber(v[2])) * per_ms)
end
local function wait_ms(missing, per_ms)
  if per_ms <= 0 then return 2147483647 end
  return math.max(1, math.ceil(missing / per_ms))
end
local function store(key, lvl, capacity, per_ms)
  redis.call('HSET', key, 'level', string.format('%.17g', lvl), 'at', now)
  redis.call('PEXPIRE', key, wait_ms(capacity - lvl, per_ms) + 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return {1, 0} end
local fuel_per_ms = tonumber(ARGV[5]) / 1000
local fuel = level(KEYS[2], tonumber(ARGV[4]), fuel_per_ms)
if fuel <= 0 then return {2, wait_ms(-fuel, fuel_per_ms)} end
local per_client = tonumber(ARGV[6])
local client_per_ms = per_client / 60000
local client = level(KEYS[3], per_client, client_per_ms)
if client < 1 then return {3, wait_ms(1 - client, client_per_ms)} end
local per_plugin = tonumber(ARGV[7])
local plugin_per_ms = per_plugin / 60000
local plugin = level(KEYS[4], per_plugin, plugin_per_ms)
if plugin < 1 then return {4, wait_ms(1 - plugin, plugin_per_ms)} end
store(KEYS[3], client - 1, per_client, client_per_ms)
store(KEYS[4], plugin - 1, per_plugin, plugin_per_ms)
local lease = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
redis.call('PEXPIRE', KEYS[1], lease)
return {0, 0}
"#;

/// Calls ended. For each call i: KEYS running, fuel; ARGV slot id, fuel burned, fuel burst,
/// fuel per second.
const FINISH: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local calls = #ARGV / 4
for i = 0, calls - 1 do
  local running, fuel = KEYS[2 * i + 1], KEYS[2 * i + 2]
  redis.call('ZREM', running, ARGV[4 * i + 1])
  local burned = tonumber(ARGV[4 * i + 2])
  if burned > 0 then
    local capacity = tonumber(ARGV[4 * i + 3])
    local per_ms = tonumber(ARGV[4 * i + 4]) / 1000
    local v = redis.call('HMGET', fuel, 'level', 'at')
    local lvl = capacity
    if v[1] then
      lvl = math.min(capacity, tonumber(v[1]) + math.max(0, now - tonumber(v[2])) * per_ms)
    end
    lvl = lvl - burned
    redis.call('HSET', fuel, 'level', string.format('%.17g', lvl), 'at', now)
    if per_ms > 0 then
      redis.call('PEXPIRE', fuel, math.ceil((capacity - lvl) / per_ms) + 1000)
    end
  end
end
return calls
"#;

/// Calls ended and not yet told to Redis, at most; past it a call's slot comes back only when
/// its lease ends (Redis is away, or far behind).
const MAX_UNTOLD: usize = 10_000;
/// Ended calls told to Redis in one round trip, at most.
const TOLD_AT_ONCE: usize = 256;

/// A call that ended, to be told to Redis.
struct Ended {
    running: String,
    fuel_key: String,
    slot: String,
    fuel: u64,
    burst: u64,
    per_second: u64,
}

static ADMIT_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(ADMIT));
static FINISH_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(FINISH));

/// [`SharedLimits`] in the cluster's Redis.
pub struct RedisLimits {
    cluster: Arc<Cluster>,
    next_slot: AtomicU64,
    ended: mpsc::Sender<Ended>,
}

impl RedisLimits {
    /// Limits counted in `cluster`'s Redis; starts the task that tells it of ended calls.
    pub fn new(cluster: Arc<Cluster>) -> RedisLimits {
        let (ended, untold) = mpsc::channel(MAX_UNTOLD);
        tokio::spawn(tell_ended(cluster.clone(), untold));
        RedisLimits {
            cluster,
            next_slot: AtomicU64::new(0),
            ended,
        }
    }

    fn key(&self, plugin: &str, rest: &str) -> String {
        self.cluster.key(&format!("limits:{{{plugin}}}:{rest}"))
    }

    fn client_key(&self, plugin: &str, client: &str) -> String {
        let digest = Sha256::digest(client.as_bytes());
        self.key(plugin, &format!("client:{}", hex::encode(&digest[..16])))
    }
}

impl SharedLimits for RedisLimits {
    fn admit<'a>(
        &'a self,
        plugin: &'a str,
        client: &'a str,
        limits: &'a Limits,
    ) -> SharedFuture<'a, SharedVerdict> {
        Box::pin(async move {
            let slot = format!(
                "{}:{}",
                self.cluster.replica,
                self.next_slot.fetch_add(1, Ordering::Relaxed)
            );
            let lease = Duration::from_millis(limits.timeout_ms) + LEASE_MARGIN;
            let mut invocation = ADMIT_SCRIPT.prepare_invoke();
            invocation
                .key(self.key(plugin, "running"))
                .key(self.key(plugin, "fuel"))
                .key(self.client_key(plugin, client))
                .key(self.key(plugin, "calls"))
                .arg(limits.concurrent_calls)
                .arg(&slot)
                .arg(lease.as_millis() as u64)
                .arg(limits.fuel_burst)
                .arg(limits.fuel_per_second)
                .arg(limits.calls_per_minute_per_client)
                .arg(limits.calls_per_minute);
            let answer = self
                .cluster
                .run(async |c| invocation.invoke_async::<(u8, u64)>(c).await)
                .await;
            match answer {
                Ok((0, _)) => SharedVerdict::Admitted(SharedSlot(slot)),
                Ok((limit, retry_ms)) => {
                    let retry_after = Duration::from_millis(retry_ms);
                    SharedVerdict::Refused(match limit {
                        1 => LimitExceeded::Concurrency {
                            limit: limits.concurrent_calls,
                        },
                        2 => LimitExceeded::FuelBudget {
                            per_second: limits.fuel_per_second,
                            retry_after,
                        },
                        3 => LimitExceeded::ClientRate {
                            limit: limits.calls_per_minute_per_client,
                            retry_after,
                        },
                        _ => LimitExceeded::Rate {
                            limit: limits.calls_per_minute,
                            retry_after,
                        },
                    })
                }
                Err(why) => {
                    tracing::warn!(plugin, "shared limits not checked: {why}");
                    SharedVerdict::Unavailable(why.to_string())
                }
            }
        })
    }

    fn finish(&self, plugin: &str, slot: SharedSlot, fuel: u64, limits: &Limits) {
        let ended = Ended {
            running: self.key(plugin, "running"),
            fuel_key: self.key(plugin, "fuel"),
            slot: slot.0,
            fuel,
            burst: limits.fuel_burst,
            per_second: limits.fuel_per_second,
        };
        if self.ended.try_send(ended).is_err() {
            tracing::warn!(
                plugin,
                fuel,
                "an ended call was not counted: too many are waiting"
            );
        }
    }

    fn fail_open(&self) -> bool {
        self.cluster.settings().fail == FailPolicy::Open
    }
}

/// Tells Redis of ended calls: each as soon as it comes when calls are few, all that came
/// meanwhile in one round trip when they are many.
async fn tell_ended(cluster: Arc<Cluster>, mut untold: mpsc::Receiver<Ended>) {
    let mut batch = Vec::with_capacity(TOLD_AT_ONCE);
    while untold.recv_many(&mut batch, TOLD_AT_ONCE).await > 0 {
        let mut invocation = FINISH_SCRIPT.prepare_invoke();
        for ended in &batch {
            invocation
                .key(&ended.running)
                .key(&ended.fuel_key)
                .arg(&ended.slot)
                .arg(ended.fuel)
                .arg(ended.burst)
                .arg(ended.per_second);
        }
        let told = cluster
            .run(async |c| invocation.invoke_async::<i64>(c).await)
            .await;
        if let Err(why) = told {
            // Their slots come back when their leases end; their fuel is not charged.
            tracing::warn!(calls = batch.len(), "ended calls were not counted: {why}");
        }
        batch.clear();
    }
}
