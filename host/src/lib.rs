//! Palisade: an MCP server whose tools, resources and prompts are sandboxed WebAssembly components.
//!
//! Layers, each knowing only the one below it: `transport` (stdio lines) → `mcp` (JSON-RPC, versions,
//! dispatch) → `catalog` (public names → plugins) → `runtime` (wasmtime, sandbox, limits).

pub mod audit;
pub mod catalog;
pub mod config;
pub mod inspect;
pub mod mcp;
pub mod memory;
pub mod native;
pub mod reload;
pub mod runtime;
pub mod setup;
pub mod transport;
