//! Running plugins: the engine, loading components, the sandbox, limits, and calls into them.
//!
//! This layer knows nothing of JSON-RPC or MCP: it takes WIT values in and gives WIT values back.

pub mod bindings;
mod engine;
pub mod gate;
mod host_api;
pub mod limits;
mod network;
mod output;
mod plugin;
pub mod sandbox;

pub use engine::{CompileCache, EpochTicker, new_engine};
pub use host_api::{Answers, CallContext, CallStats, ClientChannel, PendingAnswers, PluginEvent};
pub use limits::LimitExceeded;
pub use plugin::{CallError, Exports, Plugin, inspect};

use wasmtime::Engine;

/// The engine, its epoch clock and the compiled cache: what every plugin shares.
pub struct Runtime {
    pub engine: Engine,
    pub cache: CompileCache,
    /// Every plugin's admission state, kept across reloads.
    pub gates: gate::Gates,
    _ticker: EpochTicker,
}

impl Runtime {
    pub fn new(cache: CompileCache) -> anyhow::Result<Runtime> {
        let engine = new_engine()?;
        let ticker = EpochTicker::start(&engine)?;
        Ok(Runtime {
            engine,
            cache,
            gates: gate::Gates::default(),
            _ticker: ticker,
        })
    }
}
