//! What every plugin of a server shares: the engine, its epoch clock, the compile cache, the
//! admission gates, the key-value stores, the instance pool and the builder of instances.

use std::sync::Arc;

use tokio::sync::Semaphore;
use wasmtime::Engine;

use crate::cache::CompileCache;
use crate::engine::{EpochTicker, INSTANCE_SLOTS, Metering, engine_with};
use crate::ready::Builder;
use crate::shared_limits::SharedLimits;
use crate::shelf::Shelf;
use crate::{gate, keyvalue};

/// The engine, its epoch clock and the compiled cache: what every plugin shares.
pub struct Runtime {
    /// The wasmtime engine every plugin is compiled for.
    pub engine: Engine,
    /// Compiled components on disk, checked before they are loaded.
    pub cache: CompileCache,
    /// Every plugin's admission state, kept across reloads.
    pub(crate) gates: gate::Gates,
    /// Plugins' key-value stores, kept across reloads.
    pub(crate) keyvalue_stores: keyvalue::Stores,
    /// Free slots of the engine's instance pool: a call holds one while its instance lives, so
    /// a burst of calls across many plugins waits for a slot instead of failing.
    pub(crate) instance_slots: Arc<Semaphore>,
    /// Instances between calls, each holding a pool slot: kept for a client's next call
    /// (`reuse = "per-client"`), or built ahead for any call (`ready.rs`).
    pub(crate) shelf: Arc<Shelf>,
    /// The thread that builds instances ahead.
    pub(crate) builder: Builder,
    /// Whether calls count fuel.
    pub metering: Metering,
    _ticker: EpochTicker,
}

impl Runtime {
    /// Counts every plugin's rates, fuel budget and running calls in `shared` (a store the
    /// replicas of a cluster share) instead of in this process alone. Call it before plugins
    /// load; false if limits are shared already.
    pub fn share_limits(&self, shared: Arc<dyn SharedLimits>) -> bool {
        self.gates.share(shared)
    }

    /// A runtime that counts fuel, as serving always does; starts the epoch clock.
    pub fn new(cache: CompileCache) -> anyhow::Result<Runtime> {
        Runtime::with_metering(cache, Metering::Fuel)
    }

    /// A runtime whose engine counts fuel or not. Serving always counts it; `palisade-bench`
    /// uses an unmetered one as the baseline of what metering costs.
    pub fn with_metering(cache: CompileCache, metering: Metering) -> anyhow::Result<Runtime> {
        let engine = engine_with(metering)?;
        let ticker = EpochTicker::start(&engine)?;
        let shelf = Arc::default();
        Shelf::sweep_idle(&shelf)?;
        Ok(Runtime {
            engine,
            cache,
            gates: gate::Gates::default(),
            keyvalue_stores: keyvalue::Stores::default(),
            instance_slots: Arc::new(Semaphore::new(INSTANCE_SLOTS as usize)),
            shelf,
            builder: Builder::start()?,
            metering,
            _ticker: ticker,
        })
    }
}
