//! Admission of calls into a plugin: calls per minute (all clients, and each client), calls at
//! once, and the fuel budget that refills over time. A call refused here never starts an instance.
//! With a [`SharedLimits`] (several replicas), the rates, the budget and the running calls are
//! counted there, across replicas; this process's own cap on running calls still holds.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::Limits;
use crate::error::LimitExceeded;
use crate::shared_limits::{SharedLimits, SharedSlot, SharedVerdict};

/// Clients remembered per plugin for their own rate; the idlest are forgotten past this (a
/// forgotten client starts again with a full bucket, which only ever favours it by one burst).
const MAX_TRACKED_CLIENTS: usize = 10_000;

/// A token bucket: holds up to `capacity`, regains `per_second`. The level may go below zero when
/// a cost is only known afterwards (fuel); the debt is paid back by waiting.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    capacity: f64,
    per_second: f64,
    level: f64,
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket of `capacity` tokens that regains `per_second` tokens a second.
    pub fn new(capacity: u64, per_second: f64, now: Instant) -> TokenBucket {
        TokenBucket {
            capacity: capacity as f64,
            per_second,
            level: capacity as f64,
            updated: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.level = (self.level + elapsed * self.per_second).min(self.capacity);
        self.updated = now;
    }

    /// Takes `cost` if the bucket holds it; else how long until it will.
    pub fn take(&mut self, cost: f64, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        if self.level >= cost {
            self.level -= cost;
            Ok(())
        } else {
            Err(self.wait_for(cost))
        }
    }

    /// Whether anything is left; else how long until there is.
    pub fn check_positive(&mut self, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        if self.level > 0.0 {
            Ok(())
        } else {
            Err(self.wait_for(f64::MIN_POSITIVE))
        }
    }

    /// Takes `cost` after the fact, going into debt if need be.
    pub fn charge(&mut self, cost: f64, now: Instant) {
        self.refill(now);
        self.level -= cost;
    }

    fn wait_for(&self, wanted: f64) -> Duration {
        let missing = wanted - self.level;
        Duration::from_secs_f64((missing / self.per_second).max(0.001))
    }
}

/// The shared admission state of one plugin, kept across reloads that leave its limits alone.
pub struct Gate {
    plugin: Arc<str>,
    limits: Limits,
    shared: Option<Arc<dyn SharedLimits>>,
    calls: Mutex<TokenBucket>,
    per_client: Mutex<HashMap<Arc<str>, TokenBucket>>,
    fuel: Mutex<TokenBucket>,
    running: Arc<Semaphore>,
}

/// A call let in: holds its slot among the plugin's running calls until dropped.
pub struct Admission {
    _slot: OwnedSemaphorePermit,
    shared: Option<SharedHold>,
}

/// A call's slot in the shared store; a call that never finishes (cancelled, dropped) gives it
/// back when dropped, with no fuel charged, as a lone process does.
struct SharedHold {
    store: Arc<dyn SharedLimits>,
    plugin: Arc<str>,
    limits: Limits,
    slot: Option<SharedSlot>,
}

impl SharedHold {
    fn finish(&mut self, fuel: u64) {
        if let Some(slot) = self.slot.take() {
            self.store.finish(&self.plugin, slot, fuel, &self.limits);
        }
    }
}

impl Drop for SharedHold {
    fn drop(&mut self) {
        self.finish(0);
    }
}

/// What a plugin's gate holds now, for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// Calls it may start now before its per-minute rate holds them back.
    pub calls_left: f64,
    /// Fuel its budget holds now (below zero: in debt, paid back by waiting).
    pub fuel_left: f64,
    /// Its calls running now.
    pub running: u64,
    /// Whether a cluster counts its limits (these local figures then are not what decides).
    pub shared: bool,
}

impl Gate {
    /// What the gate holds now.
    pub fn budget(&self) -> Budget {
        let now = Instant::now();
        let level = |bucket: &Mutex<TokenBucket>| {
            let mut bucket = bucket.lock();
            bucket.refill(now);
            bucket.level
        };
        let free = self.running.available_permits() as u64;
        Budget {
            calls_left: level(&self.calls),
            fuel_left: level(&self.fuel),
            running: self.limits.concurrent_calls.saturating_sub(free),
            shared: self.shared.is_some(),
        }
    }

    /// The admission state of `plugin` running under `limits`, counted in `shared` if given.
    pub fn new(plugin: &str, limits: &Limits, shared: Option<Arc<dyn SharedLimits>>) -> Gate {
        let now = Instant::now();
        let per_minute = |n: u64| TokenBucket::new(n, n as f64 / 60.0, now);
        Gate {
            plugin: plugin.into(),
            limits: *limits,
            shared,
            calls: Mutex::new(per_minute(limits.calls_per_minute)),
            per_client: Mutex::new(HashMap::new()),
            fuel: Mutex::new(TokenBucket::new(
                limits.fuel_burst,
                limits.fuel_per_second as f64,
                now,
            )),
            running: Arc::new(Semaphore::new(limits.concurrent_calls as usize)),
        }
    }

    /// Lets a call from `client` in (a task's, when `task`: its shared slot lasts as long as a
    /// task may), or says which limit refuses it and when to retry. With shared limits this is
    /// one round trip to the store; without, it never waits.
    pub async fn admit(&self, client: &Arc<str>, task: bool) -> Result<Admission, LimitExceeded> {
        // This process's own cap holds whatever the cluster says.
        let slot =
            self.running
                .clone()
                .try_acquire_owned()
                .map_err(|_| LimitExceeded::Concurrency {
                    limit: self.limits.concurrent_calls,
                })?;
        if let Some(store) = &self.shared {
            // The store holds the slot for the call's time limit (and a margin): a task's.
            let mut limits = self.limits;
            if task {
                limits.timeout_ms = limits.task_timeout_ms;
            }
            match store.admit(&self.plugin, client, &limits).await {
                SharedVerdict::Admitted(shared_slot) => {
                    return Ok(Admission {
                        _slot: slot,
                        shared: Some(SharedHold {
                            store: store.clone(),
                            plugin: self.plugin.clone(),
                            limits: self.limits,
                            slot: Some(shared_slot),
                        }),
                    });
                }
                SharedVerdict::Refused(limit) => return Err(limit),
                SharedVerdict::Unavailable(why) if !store.fail_open() => {
                    return Err(LimitExceeded::SharedLimitsUnavailable { why });
                }
                // `fail = "open"`: this process's own limits, as if alone.
                SharedVerdict::Unavailable(_) => {}
            }
        }
        self.admit_here(client)?;
        Ok(Admission {
            _slot: slot,
            shared: None,
        })
    }

    /// The rates and the budget as this process alone counts them.
    fn admit_here(&self, client: &Arc<str>) -> Result<(), LimitExceeded> {
        let now = Instant::now();
        self.fuel
            .lock()
            .check_positive(now)
            .map_err(|retry_after| LimitExceeded::FuelBudget {
                per_second: self.limits.fuel_per_second,
                retry_after,
            })?;
        {
            let mut clients = self.per_client.lock();
            if clients.len() >= MAX_TRACKED_CLIENTS && !clients.contains_key(client) {
                forget_idlest(&mut clients);
            }
            let n = self.limits.calls_per_minute_per_client;
            let bucket = clients
                .entry(client.clone())
                .or_insert_with(|| TokenBucket::new(n, n as f64 / 60.0, now));
            // Checked before the plugin-wide rate so a client over its own rate does not use
            // up everyone's.
            bucket
                .take(1.0, now)
                .map_err(|retry_after| LimitExceeded::ClientRate {
                    limit: n,
                    retry_after,
                })?;
        }
        self.calls
            .lock()
            .take(1.0, now)
            .map_err(|retry_after| LimitExceeded::Rate {
                limit: self.limits.calls_per_minute,
                retry_after,
            })?;
        Ok(())
    }

    /// A call ended having burned `fuel`: charged to the budget that let it in (the shared one,
    /// in the background, for a call the store admitted), and its slots given back. The host's
    /// own calls (`admission` none) charge this process's budget.
    pub fn finish(&self, admission: Option<Admission>, fuel: u64) {
        match admission.and_then(|mut a| a.shared.take()) {
            Some(mut hold) => hold.finish(fuel),
            None => self.fuel.lock().charge(fuel as f64, Instant::now()),
        }
    }
}

fn forget_idlest(clients: &mut HashMap<Arc<str>, TokenBucket>) {
    if let Some(idlest) = clients
        .iter()
        .min_by_key(|(_, b)| b.updated)
        .map(|(k, _)| k.clone())
    {
        clients.remove(&idlest);
    }
}

/// The gates of every plugin, by name, so a reload keeps a plugin's budget and rates (a new
/// version does not get a fresh allowance) unless its limits change.
#[derive(Default)]
pub struct Gates {
    by_plugin: Mutex<HashMap<String, Arc<Gate>>>,
    /// Where every gate counts, once the host shares its limits with a cluster.
    shared: OnceLock<Arc<dyn SharedLimits>>,
}

impl Gates {
    /// Counts every plugin's calls in `shared` from now on; false if limits are shared already.
    /// Set before plugins load: gates made earlier keep counting alone.
    pub fn share(&self, shared: Arc<dyn SharedLimits>) -> bool {
        self.shared.set(shared).is_ok()
    }

    /// The gate of plugin `name`: kept across reloads while its limits stay the same, so a reload does not refill a drained budget.
    pub fn for_plugin(&self, name: &str, limits: &Limits) -> Arc<Gate> {
        let mut gates = self.by_plugin.lock();
        match gates.get(name) {
            Some(gate) if gate.limits == *limits => gate.clone(),
            _ => {
                let gate = Arc::new(Gate::new(name, limits, self.shared.get().cloned()));
                gates.insert(name.to_string(), gate.clone());
                gate
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_refills_and_says_when() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(2, 1.0, t0);
        assert!(b.take(1.0, t0).is_ok());
        assert!(b.take(1.0, t0).is_ok());
        let wait = b.take(1.0, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 1.0).abs() < 0.01, "{wait:?}");
        assert!(b.take(1.0, t0 + Duration::from_millis(1001)).is_ok());
        // Never above capacity, however long it waits.
        let later = t0 + Duration::from_secs(100);
        assert!(b.take(2.0, later).is_ok());
        assert!(b.take(1.0, later).is_err());
    }

    #[test]
    fn fuel_debt_is_paid_back_by_waiting() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(100, 50.0, t0);
        b.charge(300.0, t0);
        let wait = b.check_positive(t0).unwrap_err();
        assert!((wait.as_secs_f64() - 4.0).abs() < 0.01, "{wait:?}");
        assert!(b.check_positive(t0 + Duration::from_millis(4100)).is_ok());
    }

    /// Admits without shared limits, which never wait.
    fn admit(gate: &Gate, client: &Arc<str>) -> Result<Admission, LimitExceeded> {
        use futures_util::FutureExt;
        gate.admit(client, false)
            .now_or_never()
            .expect("a lone gate never waits")
    }

    fn limits(per_client: u64, total: u64, running: u64) -> Limits {
        Limits {
            calls_per_minute_per_client: per_client,
            calls_per_minute: total,
            concurrent_calls: running,
            ..Limits::default()
        }
    }

    #[test]
    fn each_client_has_its_own_rate_inside_the_plugins() {
        let gate = Gate::new("p", &limits(2, 3, 10), None);
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        assert!(admit(&gate, &a).is_ok());
        assert!(admit(&gate, &a).is_ok());
        assert!(matches!(
            admit(&gate, &a),
            Err(LimitExceeded::ClientRate { limit: 2, .. })
        ));
        assert!(admit(&gate, &b).is_ok());
        assert!(matches!(
            admit(&gate, &b),
            Err(LimitExceeded::Rate { limit: 3, .. })
        ));
    }

    #[test]
    fn running_calls_are_capped_and_slots_come_back() {
        let gate = Gate::new("p", &limits(100, 100, 1), None);
        let c: Arc<str> = "c".into();
        let first = admit(&gate, &c).unwrap();
        assert!(matches!(
            admit(&gate, &c),
            Err(LimitExceeded::Concurrency { limit: 1 })
        ));
        drop(first);
        assert!(admit(&gate, &c).is_ok());
    }

    #[test]
    fn an_exhausted_fuel_budget_refuses_calls() {
        let gate = Gate::new(
            "p",
            &Limits {
                fuel_burst: 1000,
                fuel_per_second: 10,
                ..Limits::default()
            },
            None,
        );
        let c: Arc<str> = "c".into();
        let admitted = admit(&gate, &c).unwrap();
        gate.finish(Some(admitted), 5000);
        match admit(&gate, &c) {
            Err(LimitExceeded::FuelBudget { retry_after, .. }) => {
                assert!(retry_after > Duration::from_secs(300))
            }
            other => panic!("{:?}", other.err()),
        }
    }
}
