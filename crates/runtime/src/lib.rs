//! Palisade's plugin runtime: runs one call into a sandboxed WebAssembly component under its
//! limits.
//!
//! # What
//!
//! A plugin is a component built against the `palisade:plugin` WIT package (`wit/` at the
//! repository's root). This crate compiles it (through a [`CompileCache`]), gives it exactly
//! the grants of its [`PluginSpec`] (preopened directories, the client's roots, hosts it may
//! reach over `wasi:http`, environment variables) and runs each call under its [`Limits`]: fuel
//! per call and per second, wall-clock time, memory, output size, call rate and concurrency.
//! It knows nothing of MCP or JSON-RPC: WIT values go in and come back out, and what a call
//! asks of the client on its way (sampling, input, logs, progress) arrives as [`PluginEvent`]s.
//!
//! # Where
//!
//! - [`Runtime`]: the engine, its epoch clock, the compile cache and the admission gates every
//!   plugin shares (`runtime.rs`, `engine.rs`, `cache.rs`, `gate.rs`).
//! - [`PluginSpec`], [`Limits`], [`DirGrant`], [`HostPattern`]: the sandbox's input (`spec.rs`,
//!   `host_pattern.rs`); `sandbox/wasi.rs` turns grants into WASI preopens, `network.rs`
//!   checks each outgoing request.
//! - [`Plugin`]: a loaded component and what it offers; `link.rs` reads, checks, compiles and
//!   links the file ([`LoadError`] says why it could not), [`Kind`] says what the component is
//!   (`kind/`), `run.rs` runs a call under every limit, `store.rs` is the per-call store,
//!   `copy_bound.rs` bounds what a plugin can make the host copy, `host_api.rs` has the host
//!   functions plugins import.
//! - [`CallContext`]: one call's cancellation, client channel and the answers it awaits
//!   (`call.rs`).
//!
//! # Example
//!
//! ```no_run
//! use palisade_runtime::{CompileCache, Plugin, PluginSpec, Runtime};
//!
//! # async fn run() -> anyhow::Result<()> {
//! let runtime = Runtime::new(CompileCache::open("/var/cache/palisade".as_ref())?)?;
//! let plugin = Plugin::load(&runtime, PluginSpec::new("hello", "hello.wasm".into())).await?;
//! for tool in &plugin.tools {
//!     println!("{} offers {}", plugin.name, tool.name);
//! }
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod bindings;
mod cache;
mod call;
pub mod compile_progress;
mod compose;
mod copy_bound;
mod cores;
mod engine;
mod error;
mod gate;
pub mod generic;
mod grant_ask;
mod host_api;
mod host_pattern;
mod keyvalue;
pub mod kind;
mod limits;
mod link;
mod live;
mod log_text;
mod network;
mod outbound;
mod output;
mod plugin;
pub mod private_dir;
mod ready;
mod run;
mod runtime;
mod sandbox;
mod secrets;
mod shared_limits;
mod shelf;
mod spec;
mod store;
mod tls;
mod usage;
mod wasi_config;
mod wasi_guard;

pub use cache::{CacheCounts, CacheError, CompileCache};
pub use call::{
    Answers, CallContext, CallStats, ClientChannel, InstanceSource, PendingAnswers, PluginEvent,
};
pub use cores::default_cores;
pub use engine::{EpochTicker, INSTANCE_SLOTS, Metering, engine_with, new_engine};
pub use error::{CallError, Cause, LimitExceeded, LoadError};
pub use gate::Budget;
pub use grant_ask::{
    Capability, Decision, GrantDecider, HOST_KEY_PREFIX, MAX_GRANT_QUESTIONS, PendingDecision,
    Unasked, is_env_name,
};
pub use host_api::MAX_URI_BYTES;
pub use host_pattern::{HostPattern, InvalidHostPattern, is_local_address};
pub use keyvalue::MAX_STORE_BYTES;
pub use kind::{Exports, Kind};
pub use link::import_status;
pub use log_text::log_safe;
pub use plugin::Plugin;
pub use runtime::Runtime;
pub use sandbox::{Root, RootDir};
pub use secrets::{MIN_REDACTED_LEN, Redactor};
pub use shared_limits::{SharedFuture, SharedLimits, SharedSlot, SharedVerdict};
pub use spec::{
    AccessMode, CompileBounds, DEFAULT_READY_INSTANCES, DirGrant, KeyValueGrant, Limits,
    LinkedComponent, MOST_READY_INSTANCES, PluginSpec, Reuse, RootsAccess, RootsAt, SecretGrant,
    SecretValue,
};
pub use tls::{MAX_CA_FILE_BYTES, TlsTrust, TrustError};
pub use usage::{GrantUsage, Use};
