//! Where replicas keep the tasks they share (`[cluster]`): every task's record, the answers and
//! cancels left for the replica that runs a task, and news of a change. Implemented over Redis
//! by `crate::cluster::tasks`; a lone server has none.

use std::pin::Pin;

use serde_json::{Map, Value};

use super::record::TaskRecord;

/// What a shared store's operations give: the value, or why Redis gave none (for the log and
/// the client, without addresses).
pub type Shared<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send + 'a>>;

/// The tasks replicas share.
pub trait SharedTasks: Send + Sync {
    /// This replica's name: whose lease a task it runs carries.
    fn replica(&self) -> &str;

    /// How long a replica's hold on a task lasts unless renewed.
    fn lease(&self) -> std::time::Duration;

    /// Keeps `record`, unless a newer version of it is kept already (`Ok(false)` then).
    fn put(&self, record: TaskRecord) -> Shared<'_, bool>;

    /// The task `id`, if kept.
    fn get<'a>(&'a self, id: &'a str) -> Shared<'a, Option<TaskRecord>>;

    /// Every task of `owner` kept, oldest first.
    fn of_owner<'a>(&'a self, owner: &'a str) -> Shared<'a, Vec<TaskRecord>>;

    /// Leaves the client's `answers` for the replica that runs the task `id`.
    fn leave_answers<'a>(&'a self, id: &'a str, answers: Map<String, Value>) -> Shared<'a, ()>;

    /// Takes the answers left for the task `id`.
    fn take_answers<'a>(&'a self, id: &'a str) -> Shared<'a, Map<String, Value>>;

    /// Leaves a cancel for the replica that runs the task `id`.
    fn leave_cancel<'a>(&'a self, id: &'a str) -> Shared<'a, ()>;

    /// Takes the cancel left for the task `id`: whether there was one.
    fn take_cancel<'a>(&'a self, id: &'a str) -> Shared<'a, bool>;

    /// Tells the other replicas that the task `id` changed, or has answers or a cancel waiting.
    fn announce(&self, id: &str);
}
