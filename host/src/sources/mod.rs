//! Plugins from OCI registries and URLs: fetched into a private store by digest, reviewed and
//! accepted into `palisade.lock` by `palisade add` and `update`, and served only as accepted.
//!
//! - `source.rs`: what `source = "..."` may say.
//! - `fetch.rs` (with `credentials.rs` and `unpack.rs`): getting the component, bounded.
//! - `store.rs`: where fetched components are kept.
//! - `lock.rs`: what was accepted, and how two acceptances differ.
//! - `settings.rs`: `[sources]`, resolved.
//!
//! What `serve` does with all of it is `remote_plugins.rs`, above this module (it needs the configuration);
//! the commands that change the lock (`palisade add`, `update`, `remove`, `publish`) are in
//! `plugin_commands.rs`, above this module: they load plugins (`plugin_load.rs`) to review them.

mod credentials;
pub mod fetch;
pub mod lock;
pub mod settings;
pub mod source;
pub mod store;
mod unpack;
pub mod verify;

pub use lock::{Lock, Locked};
pub use settings::{RegistryLogin, SourcesConfig};
pub use source::{InvalidSource, Source};
pub use store::Store;

/// 64 hex digits, either case.
pub fn parse_sha256(text: &str) -> Option<[u8; 32]> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut bytes).ok()?;
    Some(bytes)
}
