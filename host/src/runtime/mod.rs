//! Running plugins: the engine, loading components, the sandbox, limits, and calls into them.
//!
//! This layer knows nothing of JSON-RPC or MCP: it takes WIT values in and gives WIT values back.

pub mod bindings;
mod cache;
mod call;
mod engine;
pub mod gate;
mod host_api;
mod lift;
pub mod limits;
mod network;
mod output;
mod plugin;
pub mod sandbox;
mod store;
mod wasi_guard;

pub use cache::CompileCache;
pub use call::{Answers, CallContext, CallStats, ClientChannel, PendingAnswers, PluginEvent};
pub use engine::{EpochTicker, INSTANCE_SLOTS, Metering, engine_with, new_engine};
pub use limits::LimitExceeded;
pub use plugin::{CallError, Exports, Plugin, import_status};

use std::sync::Arc;

use tokio::sync::Semaphore;
use wasmtime::Engine;

/// The engine, its epoch clock and the compiled cache: what every plugin shares.
pub struct Runtime {
    pub engine: Engine,
    pub cache: CompileCache,
    /// Every plugin's admission state, kept across reloads.
    pub gates: gate::Gates,
    /// Free slots of the engine's instance pool: a call holds one while its instance lives, so
    /// a burst of calls across many plugins waits for a slot instead of failing.
    pub instance_slots: Arc<Semaphore>,
    pub metering: Metering,
    _ticker: EpochTicker,
}

impl Runtime {
    pub fn new(cache: CompileCache) -> anyhow::Result<Runtime> {
        Runtime::with_metering(cache, Metering::Fuel)
    }

    /// A runtime whose engine counts fuel or not. Serving always counts it; `palisade-bench`
    /// uses an unmetered one as the baseline of what metering costs.
    pub fn with_metering(cache: CompileCache, metering: Metering) -> anyhow::Result<Runtime> {
        let engine = engine_with(metering)?;
        let ticker = EpochTicker::start(&engine)?;
        Ok(Runtime {
            engine,
            cache,
            gates: gate::Gates::default(),
            instance_slots: Arc::new(Semaphore::new(INSTANCE_SLOTS as usize)),
            metering,
            _ticker: ticker,
        })
    }
}
