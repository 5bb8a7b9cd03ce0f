//! Tool calls running now, across every session, for the operator's console: who called what
//! since when, and a way to stop one. A call is listed while its `Running` guard lives.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::telemetry::{Activity, Topic};

/// One call running, as the console lists it.
#[derive(Debug, Clone)]
pub struct CallView {
    /// Its number in this process (the console's handle on it).
    pub id: u64,
    /// Who called.
    pub client: Arc<str>,
    /// The plugin running it.
    pub plugin: Arc<str>,
    /// The tool's public name.
    pub tool: String,
    /// When it started.
    pub started: SystemTime,
    /// How long it has run.
    pub running_for: std::time::Duration,
    /// Whether an operator asked it to stop.
    pub stopping: bool,
}

struct Entry {
    view: CallView,
    since: Instant,
    stop: CancellationToken,
    stopped_by: Arc<OnceLock<Arc<str>>>,
}

/// Every tool call running in this process.
pub struct CallsInFlight {
    next: AtomicU64,
    calls: Mutex<BTreeMap<u64, Entry>>,
    activity: Arc<Activity>,
}

impl CallsInFlight {
    /// An empty list, telling `activity` when it changes.
    pub fn new(activity: Arc<Activity>) -> CallsInFlight {
        CallsInFlight {
            next: AtomicU64::new(1),
            calls: Mutex::new(BTreeMap::new()),
            activity,
        }
    }

    /// Lists a call until the returned guard is dropped; `stop` is what stopping it cancels.
    pub(super) fn begin(
        &self,
        client: Arc<str>,
        plugin: Arc<str>,
        tool: &str,
        stop: CancellationToken,
    ) -> Running<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let stopped_by = Arc::new(OnceLock::new());
        self.calls.lock().insert(
            id,
            Entry {
                view: CallView {
                    id,
                    client,
                    plugin,
                    tool: tool.to_string(),
                    started: SystemTime::now(),
                    running_for: Default::default(),
                    stopping: false,
                },
                since: Instant::now(),
                stop,
                stopped_by: stopped_by.clone(),
            },
        );
        self.activity.changed(Topic::Calls);
        Running {
            calls: self,
            id,
            stopped_by,
        }
    }

    /// The calls running now, oldest first.
    pub fn list(&self) -> Vec<CallView> {
        self.calls
            .lock()
            .values()
            .map(|entry| CallView {
                running_for: entry.since.elapsed(),
                stopping: entry.stopped_by.get().is_some(),
                ..entry.view.clone()
            })
            .collect()
    }

    /// Stops call `id` for `operator`: the plugin sees the cancellation, and the client gets an
    /// answer saying who stopped it. False when no such call runs.
    pub fn cancel(&self, id: u64, operator: &str) -> Option<CallView> {
        let calls = self.calls.lock();
        let entry = calls.get(&id)?;
        let _ = entry.stopped_by.set(operator.into());
        entry.stop.cancel();
        Some(entry.view.clone())
    }
}

/// A call's place in the list; dropping it takes the call off.
pub(super) struct Running<'a> {
    calls: &'a CallsInFlight,
    id: u64,
    stopped_by: Arc<OnceLock<Arc<str>>>,
}

impl Running<'_> {
    /// The operator who stopped the call, if one did.
    pub(super) fn stopped_by(&self) -> Option<&str> {
        self.stopped_by.get().map(|s| &**s)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.calls.calls.lock().remove(&self.id);
        self.calls.activity.changed(Topic::Calls);
    }
}
