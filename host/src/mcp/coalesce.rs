//! Notifications plugins trigger, coalesced and rate-limited per plugin. A plugin that reports
//! the same change on every call, or a storm of them, would otherwise become a storm of messages
//! to every session. The same change from the same plugin goes out at most once per
//! [`INTERVAL`] (the last one of a burst always goes out, at the end of the interval), and one
//! plugin's changes at most [`PER_PLUGIN_PER_SECOND`] times a second; past that they are dropped,
//! said once in the server's log.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Change;

/// Least time between two sends of the same change from the same plugin.
pub const INTERVAL: Duration = Duration::from_millis(250);
/// Changes one plugin may send in a second.
pub const PER_PLUGIN_PER_SECOND: u32 = 50;
/// Changes tracked at once; past it, changes still within their interval are dropped.
const MAX_TRACKED: usize = 4096;

/// What to do with a change a plugin reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Send it now.
    Now,
    /// Send it after this long (then call [`Coalescer::sent_later`]).
    Later(Duration),
    /// Already scheduled, or over the plugin's rate: send nothing.
    Drop,
}

#[derive(Default)]
pub struct Coalescer {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// By plugin and change (its `Debug` text).
    changes: HashMap<(Arc<str>, String), Entry>,
    plugins: HashMap<Arc<str>, Window>,
}

struct Entry {
    last_sent: Instant,
    /// A send at the end of the interval is scheduled.
    trailing: bool,
}

/// A plugin's sends in the current second.
struct Window {
    started: Instant,
    sent: u32,
    warned: bool,
}

impl Coalescer {
    /// Decides about `change`, reported by `plugin` now.
    pub fn decide(&self, plugin: &Arc<str>, change: &Change) -> Decision {
        self.decide_at(plugin, change, Instant::now())
    }

    fn decide_at(&self, plugin: &Arc<str>, change: &Change, now: Instant) -> Decision {
        let mut state = self.state.lock();
        let key = (plugin.clone(), format!("{change:?}"));
        if let Some(entry) = state.changes.get(&key) {
            let due = entry.last_sent + INTERVAL;
            if entry.trailing {
                return Decision::Drop;
            }
            if now < due {
                if !state.take_slot(plugin, now) {
                    return Decision::Drop;
                }
                if let Some(entry) = state.changes.get_mut(&key) {
                    entry.trailing = true;
                }
                return Decision::Later(due - now);
            }
        }
        if state.changes.len() >= MAX_TRACKED {
            state
                .changes
                .retain(|_, e| e.trailing || now.duration_since(e.last_sent) < INTERVAL);
            if state.changes.len() >= MAX_TRACKED {
                return Decision::Drop;
            }
        }
        if !state.take_slot(plugin, now) {
            return Decision::Drop;
        }
        state.changes.insert(
            key,
            Entry {
                last_sent: now,
                trailing: false,
            },
        );
        Decision::Now
    }

    /// The send scheduled for `change` went out.
    pub fn sent_later(&self, plugin: &Arc<str>, change: &Change) {
        let mut state = self.state.lock();
        if let Some(entry) = state
            .changes
            .get_mut(&(plugin.clone(), format!("{change:?}")))
        {
            entry.last_sent = Instant::now();
            entry.trailing = false;
        }
    }
}

impl State {
    /// Counts one send of `plugin`'s; false when its rate is used up.
    fn take_slot(&mut self, plugin: &Arc<str>, now: Instant) -> bool {
        let window = self.plugins.entry(plugin.clone()).or_insert(Window {
            started: now,
            sent: 0,
            warned: false,
        });
        if now.duration_since(window.started) >= Duration::from_secs(1) {
            *window = Window {
                started: now,
                sent: 0,
                warned: false,
            };
        }
        if window.sent >= PER_PLUGIN_PER_SECOND {
            if !window.warned {
                window.warned = true;
                tracing::warn!(
                    plugin = &**plugin,
                    "more than {PER_PLUGIN_PER_SECOND} notifications a second: the rest of this \
                     second's are dropped"
                );
            }
            return false;
        }
        window.sent += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_one_change_goes_out_twice() {
        let c = Coalescer::default();
        let plugin: Arc<str> = "p".into();
        let change = Change::ResourceUpdated("x://a".into());
        let t0 = Instant::now();
        assert_eq!(c.decide_at(&plugin, &change, t0), Decision::Now);
        let at = t0 + Duration::from_millis(10);
        assert_eq!(
            c.decide_at(&plugin, &change, at),
            Decision::Later(INTERVAL - Duration::from_millis(10))
        );
        for n in 0..1000 {
            let at = t0 + Duration::from_millis(11 + n % 200);
            assert_eq!(c.decide_at(&plugin, &change, at), Decision::Drop);
        }
        // Another change is not held back by this one.
        let other = Change::ResourceUpdated("x://b".into());
        assert_eq!(c.decide_at(&plugin, &other, at), Decision::Now);
    }

    #[test]
    fn a_plugin_has_a_rate_per_second() {
        let c = Coalescer::default();
        let plugin: Arc<str> = "p".into();
        let t0 = Instant::now();
        let sent = (0..1000)
            .filter(|n| {
                let change = Change::ResourceUpdated(format!("x://{n}"));
                c.decide_at(&plugin, &change, t0) == Decision::Now
            })
            .count();
        assert_eq!(sent, PER_PLUGIN_PER_SECOND as usize);
        let change = Change::ResourceUpdated("x://later".into());
        let next_second = t0 + Duration::from_secs(1);
        assert_eq!(c.decide_at(&plugin, &change, next_second), Decision::Now);
        // Another plugin has its own rate.
        assert_eq!(c.decide_at(&"q".into(), &change, t0), Decision::Now);
    }
}
