//! Instances between calls: kept for one client's next call (`reuse = "per-client"`), or built
//! ahead and never used, ready for any call of their plugin (`ready.rs`).
//!
//! A kept instance belongs to one plugin (one loaded version of it), one client and one set of
//! roots; only a later call with all three the same takes it. A ready one belongs to a plugin and
//! the roots it was built for. Each holds one of the engine's pool slots while shelved, so the
//! number of each is capped, instances idle too long are dropped, and a call that finds no free
//! slot drops the least recently shelved one first.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::live::LiveInstance;
use super::sandbox::Root;

/// Instances kept for clients at once, across all plugins and clients: a quarter of the pool,
/// so kept instances never stand in the way of fresh ones for long.
pub const MAX_KEPT: usize = crate::INSTANCE_SLOTS as usize / 4;

/// Instances ready at once, across all plugins: another quarter of the pool.
pub const MAX_READY: usize = crate::INSTANCE_SLOTS as usize / 4;

/// How long an instance stays shelved without a call taking it.
pub const IDLE: Duration = Duration::from_secs(60);

/// Whom a shelved instance is for.
#[derive(PartialEq)]
enum Owner {
    /// One client's next call: it has served that client before.
    Client(Arc<str>),
    /// Any call of its plugin: no call has used it.
    Anyone,
}

impl Owner {
    fn is_client(&self) -> bool {
        matches!(self, Owner::Client(_))
    }
}

struct Shelved {
    plugin: u64,
    owner: Owner,
    live: LiveInstance,
    since: Instant,
}

/// Every shelved instance, least recently shelved first.
#[derive(Default)]
pub(crate) struct Shelf {
    shelved: Mutex<Vec<Shelved>>,
}

impl Shelf {
    /// The instance kept for `plugin`'s calls by `client` with `roots`, if there is one.
    pub(crate) fn take_kept(
        &self,
        plugin: u64,
        client: &str,
        roots: &[Root],
    ) -> Option<LiveInstance> {
        self.take(|s| {
            s.plugin == plugin
                && matches!(&s.owner, Owner::Client(c) if &**c == client)
                && s.live.roots[..] == *roots
        })
    }

    /// A ready instance of `plugin`, built for `roots` when they matter (`Some`).
    pub(crate) fn take_ready(&self, plugin: u64, roots: Option<&[Root]>) -> Option<LiveInstance> {
        self.take(|s| {
            s.plugin == plugin
                && s.owner == Owner::Anyone
                && roots.is_none_or(|roots| s.live.roots[..] == *roots)
        })
    }

    /// Takes the most recently shelved instance that `wanted`, dropping the idle ones.
    fn take(&self, wanted: impl Fn(&Shelved) -> bool) -> Option<LiveInstance> {
        let (found, idle) = {
            let mut shelved = self.shelved.lock();
            let idle = take_idle(&mut shelved);
            let found = shelved
                .iter()
                .rposition(wanted)
                .map(|at| shelved.remove(at).live);
            (found, idle)
        };
        // Dropping a store resets its pool slot: not under the lock.
        drop(idle);
        found
    }

    /// Keeps `live` for `plugin`'s next call by `client`.
    pub(crate) fn keep(&self, plugin: u64, client: Arc<str>, live: LiveInstance) {
        let owner = Owner::Client(client);
        let dropped = {
            let mut shelved = self.shelved.lock();
            let mut dropped = take_idle(&mut shelved);
            // One instance per plugin and client: a second, from concurrent calls, replaces
            // the older one.
            if let Some(at) = (shelved.iter()).position(|s| s.plugin == plugin && s.owner == owner)
            {
                dropped.push(shelved.remove(at));
            }
            if count(&shelved, plugin, Owner::is_client).0 >= MAX_KEPT
                && let Some(at) = shelved.iter().position(|s| s.owner.is_client())
            {
                dropped.push(shelved.remove(at));
            }
            shelved.push(Shelved {
                plugin,
                owner,
                live,
                since: Instant::now(),
            });
            dropped
        };
        drop(dropped);
    }

    /// Shelves `live`, built ahead and never used, for any call of `plugin`, unless `plugin`
    /// has `most` ready already or the shelf holds [`MAX_READY`]: then it is given back, for
    /// the caller to drop outside the shelf's lock.
    pub(crate) fn put_ready(
        &self,
        plugin: u64,
        live: LiveInstance,
        most: usize,
    ) -> Option<LiveInstance> {
        let mut shelved = self.shelved.lock();
        let (all, of_plugin) = count(&shelved, plugin, |o| *o == Owner::Anyone);
        if all >= MAX_READY || of_plugin >= most {
            return Some(live);
        }
        shelved.push(Shelved {
            plugin,
            owner: Owner::Anyone,
            live,
            since: Instant::now(),
        });
        None
    }

    /// Instances of `plugin` ready for any call.
    pub(crate) fn ready(&self, plugin: u64) -> usize {
        count(&self.shelved.lock(), plugin, |o| *o == Owner::Anyone).1
    }

    /// Drops the least recently shelved instance, freeing its pool slot; false if none is.
    pub(crate) fn drop_oldest(&self) -> bool {
        let oldest = {
            let mut shelved = self.shelved.lock();
            (!shelved.is_empty()).then(|| shelved.remove(0))
        };
        oldest.is_some()
    }

    /// Drops every instance shelved for `plugin` (it was unloaded or replaced).
    pub(crate) fn forget(&self, plugin: u64) {
        self.drop_where(|s| s.plugin == plugin);
    }

    /// Drops the instances ready for `plugin` (the roots they were built for are not the
    /// clients' any more).
    pub(crate) fn forget_ready(&self, plugin: u64) {
        self.drop_where(|s| s.plugin == plugin && s.owner == Owner::Anyone);
    }

    fn drop_where(&self, gone: impl Fn(&Shelved) -> bool) {
        let dropped: Vec<Shelved> = {
            let mut shelved = self.shelved.lock();
            let (dropped, stay) = std::mem::take(&mut *shelved).into_iter().partition(gone);
            *shelved = stay;
            dropped
        };
        drop(dropped);
    }

    /// Drops the instances idle for longer than [`IDLE`].
    fn drop_idle(&self) {
        let idle = take_idle(&mut self.shelved.lock());
        drop(idle);
    }

    /// Starts a thread that drops idle instances every few seconds, so a server left alone
    /// gives their memory back; it ends with `shelf`.
    pub(crate) fn sweep_idle(shelf: &Arc<Shelf>) -> std::io::Result<()> {
        let shelf = Arc::downgrade(shelf);
        std::thread::Builder::new()
            .name("palisade-shelf-sweep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(IDLE / 6);
                    match shelf.upgrade() {
                        Some(shelf) => shelf.drop_idle(),
                        None => break,
                    }
                }
            })?;
        Ok(())
    }
}

/// Shelved instances whose owner is `of_kind`: all of them, and those of `plugin`.
fn count(shelved: &[Shelved], plugin: u64, of_kind: impl Fn(&Owner) -> bool) -> (usize, usize) {
    shelved
        .iter()
        .filter(|s| of_kind(&s.owner))
        .fold((0, 0), |(all, mine), s| {
            (all + 1, mine + usize::from(s.plugin == plugin))
        })
}

/// Removes the instances idle for longer than [`IDLE`], for the caller to drop.
fn take_idle(shelved: &mut Vec<Shelved>) -> Vec<Shelved> {
    // Least recently shelved first: the idle ones are a prefix.
    let idle = shelved
        .iter()
        .take_while(|s| s.since.elapsed() > IDLE)
        .count();
    shelved.drain(..idle).collect()
}
