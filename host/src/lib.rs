//! Palisade: an MCP server whose tools, resources and prompts are sandboxed WebAssembly components.
//!
//! Layers: `transport` (stdio, HTTP) → `mcp` (JSON-RPC, revisions, sessions, handlers) →
//! `catalog` (public names → plugins) → `runtime` (wasmtime, sandbox, limits). ARCHITECTURE.md at
//! the repository's root has a request's path through them, their invariants, and where the
//! layering does not hold yet.

pub mod audit;
pub mod catalog;
pub mod config;
pub mod inspect;
pub mod mcp;
pub mod memory;
pub mod native;
pub mod reload;
/// The plugin runtime, a crate of its own (`crates/runtime`): the server depends on it, never the
/// other way.
pub use palisade_runtime as runtime;
pub mod setup;
pub mod transport;
