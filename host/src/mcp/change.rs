//! What every session may have to tell its client when plugins or the catalog change.

use crate::runtime::bindings::host::ListKind;

/// Something every session may have to tell its client.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A list of tools, resources or prompts changed.
    ListChanged(ListKind),
    /// A list grew with a plugin loaded at start, in the catalog of this generation: news only
    /// to clients that listed it from an older one.
    ListGrew(ListKind, u64),
    /// The resource at this URI changed.
    ResourceUpdated(String),
}
