//! Instances kept between calls for plugins with `reuse = "per-client"`.
//!
//! A kept instance belongs to one plugin (one loaded version of it), one client and one set of
//! roots; only a later call with all three the same takes it. It holds one of the engine's pool
//! slots while kept, so the number kept is capped, instances idle too long are dropped, and a
//! call that finds no free slot drops the least recently used one first.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;
use wasmtime::Store;
use wasmtime::component::Instance;

use super::sandbox::{OutputCapture, Root};
use super::store::StoreState;

/// Instances kept at once, across all plugins and clients: a quarter of the pool, so kept
/// instances never stand in the way of fresh ones for long.
pub const MAX_KEPT: usize = crate::INSTANCE_SLOTS as usize / 4;

/// How long an instance is kept without a call.
pub const IDLE: Duration = Duration::from_secs(60);

/// An instance with its store, between calls or during one.
pub(crate) struct LiveInstance {
    // Dropped in this order: the store (which returns the instance's memory to its pool slot)
    // before the permit that lets another call take the slot.
    pub(crate) store: Store<StoreState>,
    /// `None` until the first call instantiates the component.
    pub(crate) instance: Option<Instance>,
    pub(crate) stdout: OutputCapture,
    pub(crate) stderr: OutputCapture,
    /// The roots its preopens were made from.
    pub(crate) roots: Arc<Vec<Root>>,
    /// Calls it has served.
    pub(crate) calls: u32,
    pub(crate) _slot: OwnedSemaphorePermit,
}

/// Linear memory past which an ended instance is dropped on the reaper thread rather than where
/// its call ended: resetting its pool slot returns what it touched to the kernel, milliseconds
/// for a call that built a 100 MiB answer, which an async worker would take from every other
/// request. Below it, the reset is cheaper than the hand-over.
const RETIRE_INLINE_BYTES: u64 = 8 << 20;

impl LiveInstance {
    /// Ends this instance: dropped here when small, else on the reaper thread (one, so slot
    /// resets take at most one core; its slot comes free once reset, which holds new calls back
    /// while it falls behind).
    pub(crate) fn retire(self) {
        if self.store.data().memory_bytes() <= RETIRE_INLINE_BYTES {
            return;
        }
        static REAPER: std::sync::OnceLock<Option<std::sync::mpsc::Sender<LiveInstance>>> =
            std::sync::OnceLock::new();
        let reaper = REAPER.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<LiveInstance>();
            std::thread::Builder::new()
                .name("palisade-reaper".into())
                .spawn(move || rx.into_iter().for_each(drop))
                .ok()
                .map(|_| tx)
        });
        // Without the thread (it could not start), dropped here as before.
        if let Some(reaper) = reaper
            && let Err(returned) = reaper.send(self)
        {
            drop(returned.0);
        }
    }
}

struct Kept {
    plugin: u64,
    client: Arc<str>,
    live: LiveInstance,
    since: Instant,
}

/// Every kept instance, least recently used first.
#[derive(Default)]
pub(crate) struct KeptInstances {
    kept: Mutex<Vec<Kept>>,
}

impl KeptInstances {
    /// The instance kept for `plugin`'s calls by `client` with `roots`, if there is one.
    pub(crate) fn take(&self, plugin: u64, client: &str, roots: &[Root]) -> Option<LiveInstance> {
        let (found, idle) = {
            let mut kept = self.kept.lock();
            let idle = take_idle(&mut kept);
            let found = kept
                .iter()
                .rposition(|k| {
                    k.plugin == plugin && &*k.client == client && k.live.roots[..] == *roots
                })
                .map(|at| kept.remove(at).live);
            (found, idle)
        };
        // Dropping a store resets its pool slot: not under the lock.
        drop(idle);
        found
    }

    /// Keeps `live` for `plugin`'s next call by `client`.
    pub(crate) fn keep(&self, plugin: u64, client: Arc<str>, live: LiveInstance) {
        let dropped = {
            let mut kept = self.kept.lock();
            let mut dropped = take_idle(&mut kept);
            // One instance per plugin and client: a second, from concurrent calls, replaces
            // the older one.
            if let Some(at) = kept
                .iter()
                .position(|k| k.plugin == plugin && k.client == client)
            {
                dropped.push(kept.remove(at));
            }
            if kept.len() >= MAX_KEPT {
                dropped.push(kept.remove(0));
            }
            kept.push(Kept {
                plugin,
                client,
                live,
                since: Instant::now(),
            });
            dropped
        };
        drop(dropped);
    }

    /// Drops the least recently used instance, freeing its pool slot; false if none is kept.
    pub(crate) fn drop_oldest(&self) -> bool {
        let oldest = {
            let mut kept = self.kept.lock();
            (!kept.is_empty()).then(|| kept.remove(0))
        };
        oldest.is_some()
    }

    /// Drops every instance kept for `plugin` (it was unloaded or replaced).
    pub(crate) fn forget(&self, plugin: u64) {
        let dropped: Vec<Kept> = {
            let mut kept = self.kept.lock();
            let (gone, stay) = std::mem::take(&mut *kept)
                .into_iter()
                .partition(|k| k.plugin == plugin);
            *kept = stay;
            gone
        };
        drop(dropped);
    }

    /// Drops the instances idle for longer than [`IDLE`].
    fn drop_idle(&self) {
        let idle = take_idle(&mut self.kept.lock());
        drop(idle);
    }

    /// Starts a thread that drops idle instances every few seconds, so a server left alone
    /// gives their memory back; it ends with `kept`.
    pub(crate) fn sweep_idle(kept: &Arc<KeptInstances>) -> std::io::Result<()> {
        let kept = Arc::downgrade(kept);
        std::thread::Builder::new()
            .name("palisade-reuse-sweep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(IDLE / 6);
                    match kept.upgrade() {
                        Some(kept) => kept.drop_idle(),
                        None => break,
                    }
                }
            })?;
        Ok(())
    }
}

/// Removes the instances idle for longer than [`IDLE`], for the caller to drop.
fn take_idle(kept: &mut Vec<Kept>) -> Vec<Kept> {
    // Least recently used first: the idle ones are a prefix.
    let idle = kept.iter().take_while(|k| k.since.elapsed() > IDLE).count();
    kept.drain(..idle).collect()
}
