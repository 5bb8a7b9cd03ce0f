//! Plugins still loading after the server started answering. The server answers `initialize`
//! at once and loads (compiles) its plugins in the background; meanwhile a list waits a moment
//! for them (a warm cache loads everything within it), and a request for a name one of them may
//! serve waits until it is ready, at most that plugin's `timeout_ms`. Everything else goes on.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// A plugin being loaded.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The plugin's name.
    pub name: Arc<str>,
    /// Its public names are `prefix_name`; empty: any name may be one of its.
    pub prefix: String,
    /// The longest a request for it waits: its `timeout_ms`, what a call to it may take anyway.
    pub wait: Duration,
}

impl Pending {
    /// Whether `name` (a tool's or prompt's public name; `None`: a URI, which has no prefix)
    /// may be served by this plugin once loaded.
    fn may_serve(&self, name: Option<&str>) -> bool {
        match name {
            Some(name) if !self.prefix.is_empty() => name
                .strip_prefix(self.prefix.as_str())
                .is_some_and(|rest| rest.starts_with('_')),
            _ => true,
        }
    }
}

/// The plugins still loading: empty once every plugin wanted at start is ready or refused.
pub struct Loading {
    pending: watch::Sender<Vec<Pending>>,
    /// Every plugin the configuration names (at start, and as of the last reload), for
    /// readiness: one configured but not served failed to load.
    configured: parking_lot::RwLock<Vec<Arc<str>>>,
    /// What the operator's console says of each plugin besides served or not.
    notes: parking_lot::RwLock<HashMap<Arc<str>, LoadNote>>,
}

/// What is known of a plugin's load besides whether it is served.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadNote {
    /// Why its last load failed (the version served, if any, is the one before).
    pub failed: Option<String>,
    /// A new version of it is loading.
    pub reloading: bool,
    /// How far its compile is, from 0 to 1, while it compiles.
    pub compiled: Option<f64>,
}

impl Default for Loading {
    fn default() -> Self {
        Loading {
            pending: watch::channel(Vec::new()).0,
            configured: parking_lot::RwLock::new(Vec::new()),
            notes: parking_lot::RwLock::new(HashMap::new()),
        }
    }
}

impl Loading {
    /// These plugins load from now on: every plugin configured.
    pub fn begin(&self, plugins: Vec<Pending>) {
        self.set_configured(plugins.iter().map(|p| p.name.clone()).collect());
        self.pending.send_replace(plugins);
    }

    /// The configuration (reloaded) names these plugins.
    pub fn set_configured(&self, names: Vec<Arc<str>>) {
        *self.configured.write() = names;
    }

    /// Every plugin the configuration names, in its order.
    pub fn configured(&self) -> Vec<Arc<str>> {
        self.configured.read().clone()
    }

    /// What is known of `plugin`'s load.
    pub fn note(&self, plugin: &str) -> LoadNote {
        self.notes.read().get(plugin).cloned().unwrap_or_default()
    }

    /// `plugin` is being loaded again (a new version, or its configuration changed).
    pub fn reloading(&self, plugin: &str) {
        self.notes
            .write()
            .entry(plugin.into())
            .or_default()
            .reloading = true;
    }

    /// `plugin` loaded, or failed to (`why`).
    pub fn loaded(&self, plugin: &str, failed: Option<String>) {
        let mut notes = self.notes.write();
        let note = notes.entry(plugin.into()).or_default();
        *note = LoadNote {
            failed,
            ..LoadNote::default()
        };
    }

    /// `plugin`'s compile is this far along (0 to 1).
    pub fn compiling(&self, plugin: &str, fraction: f64) {
        // Bounded by the configuration: only configured plugins compile.
        self.notes
            .write()
            .entry(plugin.into())
            .or_default()
            .compiled = Some(fraction.clamp(0.0, 1.0));
    }

    /// The plugins still loading.
    pub fn pending_names(&self) -> Vec<Arc<str>> {
        self.pending
            .borrow()
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// `plugin` is served, or failed: requests stop waiting for it. Call it after the catalog
    /// that serves it is in place, so that a request woken by it finds what it waited for.
    pub fn finished(&self, plugin: &str) {
        self.pending.send_if_modified(|pending| {
            let before = pending.len();
            pending.retain(|p| &*p.name != plugin);
            pending.len() != before
        });
    }

    /// Nothing is loading any more (also what ends the wait for a load that never reported).
    pub fn finish_all(&self) {
        self.pending.send_if_modified(|pending| {
            let had = !pending.is_empty();
            pending.clear();
            had
        });
    }

    /// Whether some plugin is still loading.
    pub fn is_loading(&self) -> bool {
        !self.pending.borrow().is_empty()
    }

    /// A plugin still loading that may serve `name`, if any: why a name is not there yet.
    pub fn loading_for(&self, name: Option<&str>) -> Option<Arc<str>> {
        self.pending
            .borrow()
            .iter()
            .find(|p| p.may_serve(name))
            .map(|p| p.name.clone())
    }

    /// Waits until nothing is loading, at most `bound`.
    pub async fn settled(&self, bound: Duration) {
        let mut pending = self.pending.subscribe();
        let _ = tokio::time::timeout(bound, pending.wait_for(|p| p.is_empty())).await;
    }

    /// Waits until `ready` holds, while a plugin that may serve `name` is loading, at most the
    /// longest `wait` of those plugins; returns whether `ready` holds.
    pub async fn until(&self, name: Option<&str>, ready: impl Fn() -> bool) -> bool {
        let mut pending = self.pending.subscribe();
        let bound = pending
            .borrow_and_update()
            .iter()
            .filter(|p| p.may_serve(name))
            .map(|p| p.wait)
            .max();
        let Some(bound) = bound else {
            return ready();
        };
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            if ready() {
                return true;
            }
            if !pending
                .borrow_and_update()
                .iter()
                .any(|p| p.may_serve(name))
            {
                // The last that could serve it finished after the catalog changed: look again.
                return ready();
            }
            match tokio::time::timeout_at(deadline, pending.changed()).await {
                Ok(Ok(())) => continue,
                _ => return ready(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn pending(name: &str, prefix: &str, wait_ms: u64) -> Pending {
        Pending {
            name: name.into(),
            prefix: prefix.into(),
            wait: Duration::from_millis(wait_ms),
        }
    }

    #[test]
    fn only_a_plugin_whose_prefix_fits_may_serve_a_name() {
        let textkit = pending("textkit", "textkit", 1);
        assert!(textkit.may_serve(Some("textkit_count")));
        assert!(!textkit.may_serve(Some("textkitx_count")));
        assert!(!textkit.may_serve(Some("hello_greet")));
        assert!(textkit.may_serve(None), "a URI may be any plugin's");
        assert!(pending("bare", "", 1).may_serve(Some("anything")));
    }

    #[tokio::test]
    async fn a_request_waits_for_the_plugin_that_may_serve_it() {
        let loading = Arc::new(Loading::default());
        loading.begin(vec![pending("slow", "slow", 10_000)]);
        let ready = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (loading, ready) = (loading.clone(), ready.clone());
            tokio::spawn(async move {
                loading
                    .until(Some("slow_tool"), || ready.load(Ordering::SeqCst))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "it waits while the plugin loads");
        ready.store(true, Ordering::SeqCst);
        loading.finished("slow");
        assert!(waiter.await.unwrap());
        assert!(!loading.is_loading());
    }

    #[tokio::test]
    async fn a_name_no_loading_plugin_may_serve_does_not_wait() {
        let loading = Loading::default();
        loading.begin(vec![pending("slow", "slow", 60_000)]);
        let found = tokio::time::timeout(
            Duration::from_secs(5),
            loading.until(Some("hello_greet"), || false),
        )
        .await;
        assert_eq!(found, Ok(false));
    }

    #[tokio::test]
    async fn the_wait_ends_at_the_plugins_timeout() {
        let loading = Loading::default();
        loading.begin(vec![pending("slow", "slow", 50)]);
        let found = tokio::time::timeout(
            Duration::from_secs(5),
            loading.until(Some("slow_tool"), || false),
        )
        .await;
        assert_eq!(found, Ok(false), "bounded by the plugin's own wait");
        assert!(loading.is_loading(), "the plugin is still loading");
        assert_eq!(
            loading.loading_for(Some("slow_tool")).as_deref(),
            Some("slow")
        );
        assert_eq!(loading.loading_for(Some("other_tool")), None);
    }

    #[tokio::test]
    async fn a_failed_load_ends_the_wait_without_the_name() {
        let loading = Arc::new(Loading::default());
        loading.begin(vec![pending("broken", "broken", 60_000)]);
        let waiter = {
            let loading = loading.clone();
            tokio::spawn(async move { loading.until(Some("broken_x"), || false).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        loading.finished("broken");
        let found = tokio::time::timeout(Duration::from_secs(5), waiter).await;
        assert!(matches!(found, Ok(Ok(false))));
    }

    #[tokio::test]
    async fn settled_is_bounded() {
        let loading = Loading::default();
        loading.begin(vec![pending("slow", "", 60_000)]);
        tokio::time::timeout(
            Duration::from_secs(5),
            loading.settled(Duration::from_millis(20)),
        )
        .await
        .unwrap();
        loading.finish_all();
        assert!(!loading.is_loading());
    }
}
