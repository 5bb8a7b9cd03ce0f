//! What a plugin used of what it may reach: each host grant it sent a request under, each
//! variable it read through `get-env`, each configuration key or secret it read, its key-value
//! store. The operator sees it beside what was granted (a grant never used may be one too
//! many). Directories are preopened, so what a plugin reads in them is not counted here.

use std::collections::BTreeMap;
use std::time::SystemTime;

use parking_lot::Mutex;

/// Different things kept per plugin: its grants are fewer, and what it was allowed by asking
/// is bounded by the questions its calls may ask.
pub const MAX_USES: usize = 256;

/// One thing used: how often, and when last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    /// Times it was used.
    pub count: u64,
    /// When it was used last.
    pub last: SystemTime,
}

/// A plugin's uses, by what was used (`network api.example.com`, `env HOME`, `config key`,
/// `secret NAME`, `keyvalue`).
#[derive(Debug, Default)]
pub struct GrantUsage {
    uses: Mutex<BTreeMap<String, Use>>,
}

impl GrantUsage {
    /// `what` was used now.
    pub(crate) fn note(&self, kind: &str, name: &str) {
        let mut uses = self.uses.lock();
        let key = if name.is_empty() {
            kind.to_string()
        } else {
            format!("{kind} {name}")
        };
        let now = SystemTime::now();
        let room = uses.len() < MAX_USES;
        match uses.get_mut(&key) {
            Some(used) => {
                used.count += 1;
                used.last = now;
            }
            None if room => {
                uses.insert(
                    key,
                    Use {
                        count: 1,
                        last: now,
                    },
                );
            }
            None => {}
        }
    }

    /// Everything used, by name.
    pub fn list(&self) -> Vec<(String, Use)> {
        self.uses
            .lock()
            .iter()
            .map(|(k, u)| (k.clone(), u.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_are_counted_and_bounded() {
        let usage = GrantUsage::default();
        usage.note("network", "api.example.com");
        usage.note("network", "api.example.com");
        usage.note("keyvalue", "");
        for i in 0..MAX_USES + 10 {
            usage.note("env", &format!("V{i}"));
        }
        let list = usage.list();
        assert_eq!(list.len(), MAX_USES);
        let api = list
            .iter()
            .find(|(k, _)| k == "network api.example.com")
            .unwrap();
        assert_eq!(api.1.count, 2);
        assert!(list.iter().any(|(k, _)| k == "keyvalue"));
    }
}
