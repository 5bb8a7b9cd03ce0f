//! Tasks: tool calls that run on after their request, as MCP defines them in two wire forms
//! (the 2026-07-28 extension `io.modelcontextprotocol/tasks`, and the core tasks of
//! 2025-11-25). A task is the same sandboxed call, run detached under the plugin's task limits;
//! its questions to the client wait in its record until answered; its id is a capability
//! bound to whoever created it.
//!
//! Here: [`Tasks`], the server's tasks (admission, the tasks running in this process, answers
//! and cancellation, who waits for a change). `record.rs` is what is kept of a task, `store.rs`
//! this process's tasks, `shared.rs` the tasks replicas share (`[cluster]`), `wire.rs` how each
//! form reads a task, `channel.rs` how a task's call asks the client.
//!
//! With `[cluster]`, the replica that runs a task is the only one that changes its record, and
//! writes every version through to the shared store (under a lease it renews). Any replica
//! reads it there; answers and cancels from another replica are left in the shared store for
//! the runner, which hears of them at once (and at its next lease renewal in any case). A task
//! whose runner's lease ran out is taken for failed.

mod channel;
pub mod record;
mod shared;
mod store;
pub mod wire;

use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::config::TaskSettings;
use crate::mcp::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, RpcError};
use crate::mcp::requests_to_client::input_response;
pub(crate) use channel::TaskChannel;
use record::{Form, Outcome, Status, TaskRecord, error_object, new_task_id, now_ms};
pub use shared::{Shared, SharedTasks};
use store::MemoryStore;

/// A finished task is kept at least this long after it ended, whatever its TTL: a result is
/// never gone the moment it is ready.
const KEPT_AFTER_END: Duration = Duration::from_secs(60);

/// Questions one task may have waiting at once.
const MAX_WAITING_QUESTIONS: usize = 16;

/// Tasks whose next read time, or whose questions sent, are remembered; past it, the oldest
/// are forgotten (a forgotten read is answered at once, a forgotten question sent again).
const MAX_REMEMBERED: usize = 10_000;

/// An unknown task, a task of someone else and an expired one read the same.
fn unknown_task(id: &str) -> RpcError {
    RpcError::new(
        INVALID_PARAMS,
        format!(
            "no task {}: it does not exist, is not yours, or has expired",
            crate::catalog::shown(id)
        ),
    )
}

/// The shared store did not answer.
fn unshared(why: String) -> RpcError {
    RpcError::new(
        INTERNAL_ERROR,
        format!("the tasks this server shares with its cluster cannot be reached: {why}"),
    )
}

/// The server's tasks.
#[derive(Default)]
pub struct Tasks {
    settings: RwLock<TaskSettings>,
    store: MemoryStore,
    /// The tasks whose calls run in this process.
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// Who waits for a task's next change, by id.
    watchers: Mutex<HashMap<String, watch::Sender<u64>>>,
    /// When the next read of a task may be answered, by id.
    next_reads: Mutex<HashMap<String, Instant>>,
    /// Questions sent to the client as requests (2025-11-25), by task and key: each once.
    sent: Mutex<HashSet<(String, String)>>,
    /// The tasks replicas share, with `[cluster]`.
    shared: OnceLock<Arc<dyn SharedTasks>>,
}

/// A task whose call runs in this process.
pub(crate) struct Live {
    /// Its id.
    pub id: String,
    owner: String,
    /// Who created it, as the audit log names clients.
    pub caller: String,
    plugin: String,
    /// Cancelled by `tasks/cancel`: the call is dropped, and the guest stops at its next epoch
    /// tick.
    pub cancel: CancellationToken,
    /// Questions waiting for the client's answer, by key: who waits for each.
    waiting: Mutex<HashMap<String, oneshot::Sender<Result<Value, String>>>>,
    /// Keys of questions asked so far: a key names one question for the task's whole life.
    keys_used: Mutex<Vec<String>>,
}

impl Live {
    /// The plugin that runs it.
    pub(crate) fn plugin(&self) -> &str {
        &self.plugin
    }
}

/// A task's question as the client sees it: its method and parameters.
pub(crate) struct Question {
    pub key: String,
    pub method: &'static str,
    pub params: Value,
}

impl Tasks {
    /// Uses `settings` from now on.
    pub fn configure(&self, settings: TaskSettings) {
        *self.settings.write() = settings;
    }

    fn settings(&self) -> TaskSettings {
        *self.settings.read()
    }

    /// Shares tasks with the other replicas through `shared` from now on.
    pub fn share(&self, shared: Arc<dyn SharedTasks>) {
        let _ = self.shared.set(shared);
    }

    fn shared(&self) -> Option<&Arc<dyn SharedTasks>> {
        self.shared.get()
    }

    /// Admits a task of `owner` (the audit log's `caller`) on `plugin`, which may run
    /// `plugin_limit` tasks at once: its id, and its place among the running tasks. Nothing is
    /// visible until [`publish`](Tasks::publish).
    pub(crate) fn admit(
        &self,
        owner: &str,
        caller: &str,
        plugin: &str,
        plugin_limit: u64,
    ) -> Result<Arc<Live>, RpcError> {
        let per_client = self.settings().running_per_client;
        let mut live = self.live.lock();
        let (mine, theirs) = live.values().fold((0, 0), |(mine, theirs), task| {
            (
                mine + u64::from(task.owner == owner),
                theirs + u64::from(task.plugin == plugin),
            )
        });
        if mine >= per_client {
            return Err(RpcError::new(
                crate::mcp::session::SERVER_BUSY,
                format!(
                    "you already have {mine} tasks running, the most one client may ([tasks] \
                     running_per_client); cancel one or wait for one to end"
                ),
            ));
        }
        if theirs >= plugin_limit {
            return Err(RpcError::new(
                crate::mcp::session::SERVER_BUSY,
                format!(
                    "plugin `{plugin}` already runs {theirs} tasks, its limit \
                     (limits.running_tasks); retry when one ends"
                ),
            ));
        }
        let task = Arc::new(Live {
            id: new_task_id()?,
            owner: owner.into(),
            caller: caller.into(),
            plugin: plugin.into(),
            cancel: CancellationToken::new(),
            waiting: Mutex::default(),
            keys_used: Mutex::default(),
        });
        live.insert(task.id.clone(), task.clone());
        Ok(task)
    }

    /// Makes the admitted task `live` visible (`working`): from now on `tasks/get` finds it,
    /// on every replica. `ttl` is what the client asked for, within the server's.
    pub(crate) async fn publish(
        &self,
        live: &Live,
        form: Form,
        tool: &str,
        ttl: Option<Duration>,
    ) -> Result<TaskRecord, RpcError> {
        let settings = self.settings();
        self.store.sweep(settings.kept_bytes);
        let now = now_ms();
        let ttl = ttl.map_or(settings.ttl, |asked| asked.min(settings.ttl));
        let shared = self.shared();
        let record = TaskRecord {
            id: live.id.clone(),
            owner: live.owner.clone(),
            plugin: live.plugin.clone(),
            tool: tool.into(),
            form,
            status: Status::Working,
            status_message: Some("The call is running.".into()),
            created_ms: now,
            updated_ms: now,
            ttl_ms: ttl.as_millis() as u64,
            poll_interval_ms: settings.poll_interval.as_millis() as u64,
            input_requests: Map::new(),
            outcome: None,
            runner: shared.map(|s| s.replica().to_string()),
            lease_until_ms: shared.map_or(0, |s| now + s.lease().as_millis() as u64),
            version: 0,
        };
        self.store.insert(record.clone());
        // Readable on every replica before the client learns of it.
        if let Some(shared) = shared
            && let Err(why) = shared.put(record.clone()).await
        {
            self.store.remove(&live.id);
            self.abandon(live);
            return Err(unshared(why));
        }
        Ok(record)
    }

    /// Forgets the admitted task `live` that never became one (its call asked the client
    /// first, in the request).
    pub(crate) fn abandon(&self, live: &Live) {
        self.live.lock().remove(&live.id);
    }

    /// Records how the task `live`'s call ended (unless it was cancelled first) and lets go of
    /// it. A tool error ends the task `completed` in the extension and `failed` in 2025-11-25.
    pub(crate) fn finish(&self, live: &Live, answer: Result<Value, RpcError>) {
        self.live.lock().remove(&live.id);
        live.waiting.lock().clear();
        let tool_error = matches!(&answer, Ok(r) if r.get("isError") == Some(&Value::Bool(true)));
        let message = match &answer {
            Ok(_) if tool_error => "The tool answered with an error.".to_string(),
            Ok(_) => "The call completed.".to_string(),
            Err(e) => format!("The call failed: {}", e.message),
        };
        let outcome = Outcome::of(answer);
        self.change(&live.id, |task| {
            if task.status.is_terminal() {
                return (false, ());
            }
            task.status = match (&outcome, task.form) {
                (Outcome::Error(_), _) => Status::Failed,
                (Outcome::Result(_), Form::Core) if tool_error => Status::Failed,
                (Outcome::Result(_), _) => Status::Completed,
            };
            tracing::info!(
                task = live.id,
                plugin = live.plugin,
                status = task.status.as_str(),
                "task ended"
            );
            task.status_message = Some(message);
            task.input_requests.clear();
            task.outcome = Some(outcome);
            keep_after_end(task);
            (true, ())
        });
        self.sent.lock().retain(|(id, _)| *id != live.id);
        self.store.sweep(self.settings().kept_bytes);
    }

    /// Changes the task `id` of this process with `change` (which says whether it changed
    /// anything): who waits hears of it, and with `[cluster]` the new version is written
    /// through to the shared store. `None`: no such task here.
    fn change<R>(&self, id: &str, change: impl FnOnce(&mut TaskRecord) -> (bool, R)) -> Option<R> {
        let (out, changed) = self.store.update(id, change)?;
        if let Some(record) = changed {
            self.notify(id);
            if let Some(shared) = self.shared().cloned() {
                tokio::spawn(async move {
                    let id = record.id.clone();
                    match shared.put(record).await {
                        Ok(_) => shared.announce(&id),
                        Err(why) => {
                            tracing::warn!(task = id, "a task's change is not shared: {why}")
                        }
                    }
                });
            }
        }
        Some(out)
    }

    /// Wakes who waits for the task `id`'s next change.
    fn notify(&self, id: &str) {
        let mut watchers = self.watchers.lock();
        if let Some(sender) = watchers.get(id) {
            if sender.receiver_count() == 0 {
                watchers.remove(id);
            } else {
                sender.send_modify(|n| *n += 1);
            }
        }
    }

    /// The task `id`, if `owner` created it and it has not expired: this process's, or the
    /// shared store's (a task whose runner's lease ran out is failed then).
    pub(crate) async fn get(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        let task = match self.store.get(id) {
            Some(task) => Some(task),
            None => self.get_shared(id).await?,
        };
        task.filter(|task| task.owner == owner && !expired(task))
            .ok_or_else(|| unknown_task(id))
    }

    /// The task `id` in the shared store, failed first when its runner is gone.
    async fn get_shared(&self, id: &str) -> Result<Option<TaskRecord>, RpcError> {
        let Some(shared) = self.shared() else {
            return Ok(None);
        };
        let Some(mut task) = shared.get(id).await.map_err(unshared)? else {
            return Ok(None);
        };
        if task.status.is_terminal() || task.lease_until_ms >= now_ms() {
            return Ok(Some(task));
        }
        let runner = task.runner.clone().unwrap_or_default();
        let error = RpcError::new(
            INTERNAL_ERROR,
            format!(
                "the replica running this task ({runner}) stopped: it did not renew its hold on \
                 the task in time"
            ),
        );
        task.status = Status::Failed;
        task.status_message = Some(format!("The call failed: {}", error.message));
        task.input_requests.clear();
        task.outcome = Some(Outcome::Error(error_object(&error)));
        task.updated_ms = now_ms();
        task.version += 1;
        keep_after_end(&mut task);
        tracing::warn!(
            task = id,
            runner,
            "a task's replica stopped; the task failed"
        );
        if shared.put(task.clone()).await.map_err(unshared)? {
            shared.announce(id);
        }
        Ok(Some(task))
    }

    /// The task `id`, whoever created it: for the server's own records (the audit log).
    pub(crate) async fn peek(&self, id: &str) -> Option<TaskRecord> {
        match self.store.get(id) {
            Some(task) => Some(task),
            None => self.get_shared(id).await.ok().flatten(),
        }
    }

    /// [`get`](Tasks::get), answered no sooner than the poll interval after the last read
    /// of the task: a client that polls faster is slowed down, not served faster.
    pub(crate) async fn poll(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        self.get(id, owner).await?;
        let at = {
            let mut reads = self.next_reads.lock();
            let now = Instant::now();
            if reads.len() >= MAX_REMEMBERED {
                reads.retain(|_, at| *at > now);
            }
            let at = reads.get(id).copied().unwrap_or(now).max(now);
            reads.insert(id.to_string(), at + self.settings().poll_interval);
            at
        };
        tokio::time::sleep_until(at.into()).await;
        self.get(id, owner).await
    }

    /// A receiver that sees every change of the task `id` of `owner`, wherever it runs.
    pub(crate) async fn watch(
        &self,
        id: &str,
        owner: &str,
    ) -> Result<watch::Receiver<u64>, RpcError> {
        self.get(id, owner).await?;
        let mut watchers = self.watchers.lock();
        let sender = watchers
            .entry(id.to_string())
            .or_insert_with(|| watch::Sender::new(0));
        Ok(sender.subscribe())
    }

    /// The tasks of `owner`, oldest first, on every replica.
    pub(crate) async fn of_owner(&self, owner: &str) -> Result<Vec<TaskRecord>, RpcError> {
        let mut tasks = self.store.of_owner(owner);
        if let Some(shared) = self.shared() {
            let here: HashSet<String> = tasks.iter().map(|t| t.id.clone()).collect();
            let elsewhere = shared.of_owner(owner).await.map_err(unshared)?;
            tasks.extend(elsewhere.into_iter().filter(|t| !here.contains(&t.id)));
            tasks.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        }
        tasks.retain(|task| !expired(task));
        Ok(tasks)
    }

    /// Every task running in this process, oldest first.
    pub fn running(&self) -> Vec<TaskRecord> {
        self.store.running()
    }

    /// Tasks running in this process, by plugin and status, for the metrics.
    pub fn running_counts(&self) -> Vec<(String, &'static str, u64)> {
        let mut counts: Vec<(String, &'static str, u64)> = Vec::new();
        for task in self.running() {
            let status = task.status.as_str();
            match counts
                .iter_mut()
                .find(|(plugin, s, _)| *plugin == task.plugin && *s == status)
            {
                Some((_, _, n)) => *n += 1,
                None => counts.push((task.plugin, status, 1)),
            }
        }
        counts
    }

    /// Cancels the task `id` of `owner`: it ends `cancelled` and its call stops (at once
    /// here; for a task another replica runs, as soon as that replica hears of it). The task
    /// as it was before; a task already ended is left as it was.
    pub(crate) async fn cancel(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        let before = self.get(id, owner).await?;
        if before.status.is_terminal() {
            return Ok(before);
        }
        if self.store.get(id).is_none() {
            let shared = self.shared().ok_or_else(|| unknown_task(id))?;
            shared.leave_cancel(id).await.map_err(unshared)?;
            shared.announce(id);
            tracing::info!(
                task = id,
                plugin = before.plugin,
                "task cancelled (elsewhere)"
            );
            return Ok(before);
        }
        self.cancel_here(id);
        tracing::info!(task = id, plugin = before.plugin, "task cancelled");
        Ok(before)
    }

    /// Cancels the task `id` of this process.
    fn cancel_here(&self, id: &str) {
        self.change(id, |task| {
            if task.status.is_terminal() {
                return (false, ());
            }
            task.status = Status::Cancelled;
            task.status_message = Some("The task was cancelled by request.".into());
            task.input_requests.clear();
            keep_after_end(task);
            (true, ())
        });
        if let Some(live) = self.live.lock().get(id) {
            live.cancel.cancel();
        }
    }

    /// Takes the client's answers to questions of the task `id` of `owner`, by key: how many
    /// were taken. Keys that are not waiting are ignored; an answer that does not fit its
    /// question is `-32602` and nothing is taken. Once no question waits, the task is
    /// `working` again. Answers to a task another replica runs are left for it.
    pub(crate) async fn answer(
        &self,
        id: &str,
        owner: &str,
        answers: &Map<String, Value>,
    ) -> Result<usize, RpcError> {
        let task = self.get(id, owner).await?;
        if self.store.get(id).is_some() {
            return self.answer_here(id, answers);
        }
        let taken = fitting_answers(&task, answers)?;
        if taken.is_empty() {
            return Ok(0);
        }
        let shared = self.shared().ok_or_else(|| unknown_task(id))?;
        let count = taken.len();
        shared
            .leave_answers(id, taken.into_iter().collect())
            .await
            .map_err(unshared)?;
        shared.announce(id);
        Ok(count)
    }

    /// [`answer`](Tasks::answer) for a task of this process.
    fn answer_here(&self, id: &str, answers: &Map<String, Value>) -> Result<usize, RpcError> {
        let taken = self.change(id, |task| match fitting_answers(task, answers) {
            Err(e) => (false, Err(e)),
            Ok(taken) => {
                for (key, _) in &taken {
                    task.input_requests.remove(key);
                }
                if task.input_requests.is_empty() && task.status == Status::InputRequired {
                    task.status = Status::Working;
                    task.status_message = Some("The call is running.".into());
                }
                (!taken.is_empty(), Ok(taken))
            }
        });
        let taken = taken.ok_or_else(|| unknown_task(id))??;
        let count = taken.len();
        if let Some(live) = self.live.lock().get(id).cloned() {
            let mut waiting = live.waiting.lock();
            for (key, answer) in taken {
                if let Some(waiter) = waiting.remove(&key) {
                    let _ = waiter.send(Ok(answer));
                }
            }
        }
        Ok(count)
    }

    /// Another replica said the task `id` changed, or left it answers or a cancel: who waits
    /// hears of it, and a task running here takes what was left for it.
    pub async fn heard(&self, id: &str) {
        self.notify(id);
        if self.live.lock().contains_key(id) {
            self.collect(id).await;
        }
    }

    /// Takes the answers and the cancel other replicas left for the task `id`, running here.
    async fn collect(&self, id: &str) {
        let Some(shared) = self.shared().cloned() else {
            return;
        };
        match shared.take_cancel(id).await {
            Ok(true) => {
                self.cancel_here(id);
                tracing::info!(task = id, "task cancelled from another replica");
                return;
            }
            Ok(false) => {}
            Err(why) => tracing::warn!(task = id, "cannot read a task's cancel: {why}"),
        }
        match shared.take_answers(id).await {
            Ok(answers) if !answers.is_empty() => {
                if let Err(e) = self.answer_here(id, &answers) {
                    tracing::info!(
                        task = id,
                        "answers left for a task do not fit: {}",
                        e.message
                    );
                }
            }
            Ok(_) => {}
            Err(why) => tracing::warn!(task = id, "cannot read a task's answers: {why}"),
        }
    }

    /// Renews this replica's hold on the tasks it runs, and takes what was left for them (in
    /// case news of it was missed). With `[cluster]`, every third of the lease.
    pub async fn renew_leases(&self) {
        let Some(lease) = self.shared().map(|s| s.lease()) else {
            return;
        };
        let ids: Vec<String> = self.live.lock().keys().cloned().collect();
        for id in ids {
            let until = now_ms() + lease.as_millis() as u64;
            self.change(&id, |task| {
                if task.status.is_terminal() {
                    return (false, ());
                }
                task.lease_until_ms = until;
                (true, ())
            });
            self.collect(&id).await;
        }
    }

    /// Whether the question `key` of the task `id` is still to be sent to the client as a
    /// request (2025-11-25); it counts as sent from now on.
    pub(crate) fn claim_question(&self, id: &str, key: &str) -> bool {
        let mut sent = self.sent.lock();
        if sent.len() >= MAX_REMEMBERED {
            sent.clear();
        }
        sent.insert((id.to_string(), key.to_string()))
    }

    /// The client could not answer the question `key` of the task `id` (it failed, or gave
    /// no answer in time): the call learns why.
    pub(crate) fn unanswered(&self, id: &str, key: &str, why: String) {
        self.change(id, |task| {
            let removed = task.input_requests.remove(key).is_some();
            if task.input_requests.is_empty() && task.status == Status::InputRequired {
                task.status = Status::Working;
                task.status_message = Some("The call is running.".into());
            }
            (removed, ())
        });
        if let Some(live) = self.live.lock().get(id).cloned()
            && let Some(waiter) = live.waiting.lock().remove(key)
        {
            let _ = waiter.send(Err(why));
        }
    }

    /// Puts `questions` of the running task `live` to the client: the task waits in
    /// `input_required` with them until answered. Each answer (or why there is none) in the
    /// order asked.
    pub(crate) async fn ask(
        &self,
        live: &Live,
        questions: Vec<Question>,
    ) -> Vec<Result<Value, String>> {
        let mut receivers = Vec::new();
        {
            let mut waiting = live.waiting.lock();
            let mut used = live.keys_used.lock();
            for question in &questions {
                if waiting.len() >= MAX_WAITING_QUESTIONS {
                    receivers.push(Err(format!(
                        "at most {MAX_WAITING_QUESTIONS} questions of a task may wait at once"
                    )));
                    continue;
                }
                let (tx, rx) = oneshot::channel();
                waiting.insert(question.key.clone(), tx);
                used.push(question.key.clone());
                receivers.push(Ok(rx));
            }
        }
        self.change(&live.id, |task| {
            if task.status.is_terminal() {
                return (false, ());
            }
            for (question, receiver) in questions.iter().zip(&receivers) {
                if receiver.is_ok() {
                    task.input_requests.insert(
                        question.key.clone(),
                        json!({ "method": question.method, "params": question.params }),
                    );
                }
            }
            task.status = Status::InputRequired;
            task.status_message = Some("The call waits for the client's answer.".into());
            (true, ())
        });
        // Taken off the task if this is dropped before they are answered (an operator answered
        // a grant question in the console): the task does not wait in `input_required` for
        // nothing.
        let mut outstanding = Outstanding {
            tasks: self,
            id: &live.id,
            keys: questions.iter().map(|q| q.key.clone()).collect(),
        };
        // Nobody is made to answer: a question waits until the task's TTL is up, then fails.
        let expires = self
            .store
            .get(&live.id)
            .map_or(0, |t| t.created_ms.saturating_add(t.ttl_ms));
        let until =
            tokio::time::Instant::now() + Duration::from_millis(expires.saturating_sub(now_ms()));
        let mut answers = Vec::new();
        for (question, receiver) in questions.iter().zip(receivers) {
            answers.push(match receiver {
                Ok(rx) => match tokio::time::timeout_at(until, rx).await {
                    Ok(answer) => answer.unwrap_or_else(|_| {
                        Err("the task ended before the client answered".into())
                    }),
                    Err(_) => {
                        let why = "the client did not answer within the task's TTL".to_string();
                        self.unanswered(&live.id, &question.key, why.clone());
                        Err(why)
                    }
                },
                Err(why) => Err(why),
            });
        }
        outstanding.keys.clear();
        answers
    }

    /// A key for the question the plugin calls `wanted` in the task `live`: its own, unless
    /// the task used it for an earlier question (a key names one question for the task's life).
    pub(crate) fn question_key(&self, live: &Live, wanted: &str) -> String {
        let used = live.keys_used.lock();
        if !used.iter().any(|k| k == wanted) {
            return wanted.into();
        }
        (2..)
            .map(|n| format!("{wanted}~{n}"))
            .find(|k| !used.contains(k))
            .unwrap_or_else(|| wanted.into())
    }

    /// Notes what the task `id` reported doing (its progress), for whoever reads it.
    pub(crate) fn note_progress(&self, id: &str, message: String) {
        self.change(id, |task| {
            if task.status != Status::Working {
                return (false, ());
            }
            task.status_message = Some(message);
            (true, ())
        });
    }
}

/// The answers among `answers` to questions `task` has waiting, each checked against its
/// question: `-32602` for one that does not fit. Keys not waiting are left out.
fn fitting_answers(
    task: &TaskRecord,
    answers: &Map<String, Value>,
) -> Result<Vec<(String, Value)>, RpcError> {
    let mut taken = Vec::new();
    for (key, answer) in answers {
        let Some(method) = task
            .input_requests
            .get(key)
            .and_then(|q| q.get("method"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        if let Err(why) = input_response(method, answer.clone()) {
            return Err(RpcError::invalid_params(format!(
                "inputResponses[\"{}\"] does not answer {method}: {why}",
                crate::catalog::shown(key)
            )));
        }
        taken.push((key.clone(), answer.clone()));
    }
    Ok(taken)
}

/// A finished task's TTL, stretched so that it is kept [`KEPT_AFTER_END`] after now.
fn keep_after_end(task: &mut TaskRecord) {
    let until = now_ms().saturating_add(KEPT_AFTER_END.as_millis() as u64);
    task.ttl_ms = task.ttl_ms.max(until.saturating_sub(task.created_ms));
}

/// Whether a finished task is past its TTL (it may still be in the store until the next sweep).
fn expired(task: &TaskRecord) -> bool {
    task.status.is_terminal() && task.created_ms.saturating_add(task.ttl_ms) <= now_ms()
}

/// A task's questions still out; withdrawn from it when dropped.
struct Outstanding<'a> {
    tasks: &'a Tasks,
    id: &'a str,
    keys: Vec<String>,
}

impl Drop for Outstanding<'_> {
    fn drop(&mut self) {
        for key in &self.keys {
            (self.tasks).unanswered(self.id, key, "answered elsewhere (the console)".into());
        }
    }
}

#[cfg(test)]
mod tests;
