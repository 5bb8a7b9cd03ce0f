//! Palisade: an MCP server whose tools, resources and prompts are sandboxed WebAssembly components.
//!
//! # What
//!
//! The `palisade` binary serves plugins to MCP clients over stdio or HTTP. This library is that
//! server: it reads the configuration, loads each plugin through the runtime crate
//! ([`runtime`], `palisade-runtime`), merges what they offer into one [`catalog`], and speaks
//! MCP ([`mcp`]) over a [`transport`].
//!
//! # Where
//!
//! Layers, each using only the ones below it:
//!
//! - [`transport`]: stdio lines, Streamable HTTP, the 2026-07-28 POST path, HTTP+SSE.
//! - [`mcp`]: JSON-RPC, protocol revisions, sessions, one handler file per MCP area.
//! - [`catalog`]: public names to plugins, schemas checked and costed, resource routing.
//! - [`runtime`]: wasmtime, the sandbox, limits (a crate of its own).
//!
//! Beside them: [`serve`] (the composition root: configuration, runtime, catalog, server,
//! transport), [`config`] (the TOML file, resolved), [`plugin_set`] (which plugins to load, at
//! start, on reload and for `palisade inspect`), [`plugin_load`] (loading one),
//! [`remote_plugins`] (plugins from registries, served from the store as locked), [`reload`]
//! (which also loads the plugins at start, in the background), [`compile_command`], [`audit`],
//! [`memory`]. ARCHITECTURE.md at the
//! repository's root follows a request through them.
//!
//! # Example
//!
//! A configuration is checked whole before anything is loaded; errors say where and how to fix:
//!
//! ```
//! use std::path::Path;
//! use palisade::config::{Config, SystemIo};
//!
//! let text = r#"
//! [plugins.hello]
//! path = "hello.wasm"
//! [plugins.hello.limits]
//! timeout_ms = 2000
//! "#;
//! let config = Config::parse(text, Path::new("/etc/palisade/palisade.toml"), &SystemIo).unwrap();
//! let hello = &config.plugins[0];
//! assert_eq!(hello.spec.path, Path::new("/etc/palisade/hello.wasm"));
//! assert_eq!(hello.spec.limits.timeout_ms, 2000);
//!
//! let wrong = Config::parse("[plugins.hello]\npath = 3\n", Path::new("palisade.toml"), &SystemIo);
//! assert!(wrong.unwrap_err().to_string().contains("line 2"));
//! ```

#![warn(missing_docs)]

pub mod audit;
pub mod authoring;
pub mod catalog;
pub mod cluster;
pub mod compile_command;
pub mod config;
pub mod console;
pub mod grants;
pub mod inspect;
pub mod mcp;
pub mod memory;
pub mod oauth;
pub mod plugin_commands;
pub mod reload;
pub mod remote_plugins;
pub mod serve;
/// The plugin runtime, a crate of its own (`crates/runtime`): the server depends on it, never the
/// other way.
pub use palisade_runtime as runtime;
pub mod plugin_load;
pub mod plugin_set;
pub mod shutdown;
pub mod sources;
pub mod telemetry;
pub mod transport;

/// Installs rustls's process-wide crypto provider (ring, already in the tree through
/// wasmtime-wasi-http). Call it once, first thing: `main` and `palisade-bench` do, for every
/// subcommand. Without one, the first TLS client that relies on the default (registries, the
/// identity provider, OTLP, Redis) panics as it is built. Plugins' HTTPS passes its provider
/// explicitly and needs none. It does nothing once a provider is in place.
pub fn install_crypto_provider() {
    // Err only when one is installed already, which is what we want.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
