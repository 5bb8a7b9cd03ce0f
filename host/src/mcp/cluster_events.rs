//! What a replica tells the others: changes a plugin reported during a call on this replica
//! (a resource updated, the resource list changed) and lists a plugin asked to be read again.
//! Each replica hears them and tells its own clients, so a client hears of a change once,
//! from the replica it listens on, wherever the call ran. Changes every replica sees by itself
//! (its files, its reload) are not sent.

use serde::{Deserialize, Serialize};

use super::change::Change;
use crate::runtime::bindings::host::ListKind;

/// One event between replicas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ClusterEvent {
    /// `plugin` reported that the resource at `uri` changed.
    ResourceUpdated {
        /// The plugin that reported it.
        plugin: String,
        /// The resource.
        uri: String,
    },
    /// `plugin` reported that its `list` changed: resources are re-read at each listing,
    /// tools and prompts by listing the plugin again.
    ListChanged {
        /// The plugin that reported it.
        plugin: String,
        /// `tools`, `resources` or `prompts`.
        list: String,
    },
}

/// Where this replica's events go (the cluster's Redis).
pub trait ClusterBus: Send + Sync {
    /// Sends `event` to the other replicas, in the background.
    fn publish(&self, event: ClusterEvent);
}

/// The name of a list in events.
pub fn list_name(kind: ListKind) -> &'static str {
    match kind {
        ListKind::Tools => "tools",
        ListKind::Resources => "resources",
        ListKind::Prompts => "prompts",
    }
}

pub(super) fn list_kind(name: &str) -> Option<ListKind> {
    match name {
        "tools" => Some(ListKind::Tools),
        "resources" => Some(ListKind::Resources),
        "prompts" => Some(ListKind::Prompts),
        _ => None,
    }
}

impl ClusterEvent {
    /// The event for a change `plugin` reported, if other replicas need it.
    pub fn of_change(plugin: &str, change: &Change) -> Option<ClusterEvent> {
        match change {
            Change::ResourceUpdated(uri) => Some(ClusterEvent::ResourceUpdated {
                plugin: plugin.into(),
                uri: uri.clone(),
            }),
            Change::ListChanged(kind) => Some(ClusterEvent::ListChanged {
                plugin: plugin.into(),
                list: list_name(*kind).into(),
            }),
            Change::ListGrew(..) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_travel_as_tagged_json() {
        let event =
            ClusterEvent::of_change("notes", &Change::ResourceUpdated("notes://a".into())).unwrap();
        let text = serde_json::to_string(&event).unwrap();
        assert_eq!(
            text,
            r#"{"event":"resource_updated","plugin":"notes","uri":"notes://a"}"#
        );
        assert_eq!(serde_json::from_str::<ClusterEvent>(&text).unwrap(), event);
        assert!(ClusterEvent::of_change("p", &Change::ListGrew(ListKind::Tools, 3)).is_none());
    }
}
