//! Plugins from OCI registries and URLs: fetched into a private store by digest, reviewed and
//! accepted into `palisade.lock` by `palisade add` and `update`, and served only as accepted.
//!
//! - `source.rs`: what `source = "..."` may say.
//! - `fetch.rs` (with `credentials.rs` and `unpack.rs`): getting the component, bounded.
//! - `store.rs`: where fetched components are kept.
//! - `lock.rs`: what was accepted, and how two acceptances differ.
//! - `pin.rs`: what `serve` does with all of it.
//! - `commands.rs`: `palisade add`, `update`, `remove` and `publish`.

pub mod commands;
mod credentials;
pub mod fetch;
pub mod lock;
pub mod pin;
pub mod source;
pub mod store;
mod unpack;
pub mod verify;

pub use lock::{Lock, Locked};
pub use pin::pin;
pub use source::{InvalidSource, Source};
pub use store::Store;
