//! The resource URIs a client subscribed to (`resources/subscribe`).

use parking_lot::Mutex;
use std::collections::HashSet;

/// A session's subscriptions.
#[derive(Default)]
pub(in crate::mcp) struct Subscriptions {
    uris: Mutex<HashSet<String>>,
}

impl Subscriptions {
    /// Subscribes to `uri`.
    pub(in crate::mcp) fn insert(&self, uri: &str) {
        self.uris.lock().insert(uri.to_string());
    }

    /// Ends the subscription to `uri`, if there is one.
    pub(in crate::mcp) fn remove(&self, uri: &str) {
        self.uris.lock().remove(uri);
    }

    /// Whether the client subscribed to `uri`.
    pub(in crate::mcp) fn contains(&self, uri: &str) -> bool {
        self.uris.lock().contains(uri)
    }

    /// Every URI, sorted (for the record replicas share).
    pub(super) fn sorted(&self) -> Vec<String> {
        let mut uris: Vec<String> = self.uris.lock().iter().cloned().collect();
        uris.sort();
        uris
    }

    /// Replaces them all (with what another replica stored).
    pub(super) fn replace(&self, uris: &[String]) {
        *self.uris.lock() = uris.iter().cloned().collect();
    }
}
