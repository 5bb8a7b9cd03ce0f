//! The tasks this process knows, in memory: all of them on a lone server; with `[cluster]`,
//! those it runs or ran (the shared store has every replica's). Finished tasks go when their
//! TTL passes, or, oldest first, when the results kept pass their byte bound; running ones stay
//! until they end.

use parking_lot::Mutex;
use std::collections::HashMap;

use super::record::{TaskRecord, now_ms};

/// Every task this server knows, by id.
#[derive(Default)]
pub(super) struct MemoryStore {
    entries: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    record: TaskRecord,
    /// Bytes of its outcome, measured when it changes: a sweep weighs every kept result and
    /// must not serialize them all again.
    bytes: u64,
}

impl Entry {
    fn new(record: TaskRecord) -> Entry {
        let bytes = outcome_bytes(&record);
        Entry { record, bytes }
    }
}

fn outcome_bytes(record: &TaskRecord) -> u64 {
    record.outcome.as_ref().map_or(0, |o| o.bytes())
}

impl MemoryStore {
    /// Keeps `record`, a new task.
    pub(super) fn insert(&self, record: TaskRecord) {
        let entry = Entry::new(record);
        self.entries.lock().insert(entry.record.id.clone(), entry);
    }

    /// Forgets the task `id`.
    pub(super) fn remove(&self, id: &str) {
        self.entries.lock().remove(id);
    }

    /// The task `id`, as it is now.
    pub(super) fn get(&self, id: &str) -> Option<TaskRecord> {
        self.entries.lock().get(id).map(|e| e.record.clone())
    }

    /// Changes the task `id` with `change` (which says whether it changed anything): what it
    /// returned, and the task as changed (a new version) if it changed. `None` if there is no
    /// such task.
    pub(super) fn update<R>(
        &self,
        id: &str,
        change: impl FnOnce(&mut TaskRecord) -> (bool, R),
    ) -> Option<(R, Option<TaskRecord>)> {
        let mut entries = self.entries.lock();
        let entry = entries.get_mut(id)?;
        let (changed, out) = change(&mut entry.record);
        if !changed {
            return Some((out, None));
        }
        entry.record.updated_ms = now_ms();
        entry.record.version += 1;
        entry.bytes = outcome_bytes(&entry.record);
        Some((out, Some(entry.record.clone())))
    }

    /// The tasks of `owner`, oldest first.
    pub(super) fn of_owner(&self, owner: &str) -> Vec<TaskRecord> {
        let mut tasks: Vec<TaskRecord> = (self.entries.lock().values())
            .filter(|e| e.record.owner == owner)
            .map(|e| e.record.clone())
            .collect();
        tasks.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        tasks
    }

    /// Every task not ended yet.
    pub(super) fn running(&self) -> Vec<TaskRecord> {
        let mut tasks: Vec<TaskRecord> = (self.entries.lock().values())
            .filter(|e| !e.record.status.is_terminal())
            .map(|e| e.record.clone())
            .collect();
        tasks.sort_by_key(|t| t.created_ms);
        tasks
    }

    /// Forgets finished tasks past their TTL, then the oldest finished ones while the results
    /// kept hold more than `kept_bytes`.
    pub(super) fn sweep(&self, kept_bytes: u64) {
        let now = now_ms();
        let mut entries = self.entries.lock();
        entries.retain(|_, e| {
            !(e.record.status.is_terminal()
                && e.record.created_ms.saturating_add(e.record.ttl_ms) <= now)
        });
        let mut finished: Vec<(u64, String, u64)> = (entries.values())
            .filter(|e| e.record.status.is_terminal())
            .map(|e| (e.record.updated_ms, e.record.id.clone(), e.bytes))
            .collect();
        let mut kept: u64 = finished.iter().map(|(_, _, bytes)| bytes).sum();
        if kept <= kept_bytes {
            return;
        }
        finished.sort();
        for (_, id, bytes) in finished {
            if kept <= kept_bytes {
                break;
            }
            tracing::info!(
                task = id,
                bytes,
                "a finished task's result was dropped before its TTL: [tasks] kept_mib is full"
            );
            entries.remove(&id);
            kept -= bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::record::{Form, Outcome, Status};
    use super::*;

    fn record(id: &str, status: Status, created_ms: u64, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: "alice".into(),
            plugin: "p".into(),
            tool: "t".into(),
            form: Form::Extension,
            status,
            status_message: None,
            created_ms,
            updated_ms: created_ms,
            ttl_ms,
            poll_interval_ms: 100,
            input_requests: Default::default(),
            outcome: status
                .is_terminal()
                .then(|| Outcome::Result(json!({ "text": "x".repeat(1000) }))),
            runner: None,
            lease_until_ms: 0,
            version: 0,
        }
    }

    #[test]
    fn finished_tasks_go_after_their_ttl_and_running_ones_stay() {
        let store = MemoryStore::default();
        let old = now_ms() - 10_000;
        store.insert(record("done", Status::Completed, old, 1000));
        store.insert(record("fresh", Status::Completed, now_ms(), 60_000));
        store.insert(record("running", Status::Working, old, 1000));
        store.sweep(u64::MAX);
        assert!(store.get("done").is_none());
        assert!(store.get("fresh").is_some());
        assert!(store.get("running").is_some());
    }

    #[test]
    fn past_the_byte_bound_the_oldest_finished_results_go_first() {
        let store = MemoryStore::default();
        let now = now_ms();
        for (i, id) in ["a", "b", "c"].into_iter().enumerate() {
            store.insert(record(id, Status::Completed, now + i as u64, 60_000));
        }
        store.insert(record("running", Status::Working, now, 60_000));
        let one = store.get("a").unwrap().outcome.unwrap().bytes();
        store.sweep(2 * one);
        assert!(store.get("a").is_none());
        assert!(store.get("b").is_some() && store.get("c").is_some());
        assert!(store.get("running").is_some());
    }

    #[test]
    fn a_change_is_a_new_version() {
        let store = MemoryStore::default();
        store.insert(record("t", Status::Working, now_ms(), 60_000));
        let (_, changed) = store
            .update("t", |r| {
                r.status = Status::Completed;
                (true, ())
            })
            .unwrap();
        assert_eq!(changed.unwrap().version, 1);
        let (_, unchanged) = store.update("t", |_| (false, ())).unwrap();
        assert!(unchanged.is_none());
        assert!(store.update("missing", |_| (true, ())).is_none());
    }
}
