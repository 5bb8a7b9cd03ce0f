//! Tasks: tool calls that run on after their request, as MCP defines them in two wire forms
//! (the 2026-07-28 extension `io.modelcontextprotocol/tasks`, and the core tasks of
//! 2025-11-25). A task is the same sandboxed call, run detached under the plugin's task limits;
//! its questions to the client wait in its record until answered; its id is a capability
//! bound to whoever created it.
//!
//! Here: [`Tasks`], the server's tasks (admission, the store, the tasks running in this
//! process, answers and cancellation). `record.rs` is what is kept of a task, `store.rs` where,
//! `wire.rs` how each form reads it, `channel.rs` how a task's call asks the client.

mod channel;
pub mod record;
mod store;
pub mod wire;

use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::config::TaskSettings;
use crate::mcp::jsonrpc::{INVALID_PARAMS, RpcError};
use crate::mcp::requests_to_client::input_response;
pub(crate) use channel::TaskChannel;
use record::{Form, Outcome, Status, TaskRecord, new_task_id, now_ms};
use store::MemoryStore;

/// A finished task is kept at least this long after it ended, whatever its TTL: a result is
/// never gone the moment it is ready.
const KEPT_AFTER_END: Duration = Duration::from_secs(60);

/// Questions one task may have waiting at once.
const MAX_WAITING_QUESTIONS: usize = 16;

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

/// The server's tasks.
#[derive(Default)]
pub struct Tasks {
    settings: RwLock<TaskSettings>,
    store: MemoryStore,
    /// The tasks whose calls run in this process.
    live: Mutex<HashMap<String, Arc<Live>>>,
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
    /// Keys of questions sent to the client as requests (2025-11-25): each is sent once,
    /// whichever `tasks/result` stream is open.
    sent: Mutex<Vec<String>>,
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

    /// Admits a task of `owner` on `plugin`, which may run `plugin_limit` tasks at once: its
    /// id, and its place among the running tasks. Nothing is visible until
    /// [`publish`](Tasks::publish).
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
            sent: Mutex::default(),
        });
        live.insert(task.id.clone(), task.clone());
        Ok(task)
    }

    /// Makes the admitted task `live` visible (`working`): from now on `tasks/get` finds it.
    /// `ttl` is what the client asked for, within the server's.
    pub(crate) fn publish(
        &self,
        live: &Live,
        form: Form,
        tool: &str,
        ttl: Option<Duration>,
    ) -> TaskRecord {
        let settings = self.settings();
        self.store.sweep(settings.kept_bytes);
        let now = now_ms();
        let ttl = ttl.map_or(settings.ttl, |asked| asked.min(settings.ttl));
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
        };
        self.store.insert(record.clone());
        record
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
        let ended = self.store.update(&live.id, |task| {
            if task.status.is_terminal() {
                return (false, None);
            }
            task.status = match (&outcome, task.form) {
                (Outcome::Error(_), _) => Status::Failed,
                (Outcome::Result(_), Form::Core) if tool_error => Status::Failed,
                (Outcome::Result(_), _) => Status::Completed,
            };
            task.status_message = Some(message);
            task.input_requests.clear();
            task.outcome = Some(outcome);
            keep_after_end(task);
            (true, Some(task.status))
        });
        if let Some(Some(status)) = ended {
            tracing::info!(
                task = live.id,
                plugin = live.plugin,
                status = status.as_str(),
                "task ended"
            );
        }
        self.store.sweep(self.settings().kept_bytes);
    }

    /// The task `id`, if `owner` created it and it has not expired.
    pub(crate) fn get(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        self.store
            .get(id)
            .filter(|task| task.owner == owner && !expired(task))
            .ok_or_else(|| unknown_task(id))
    }

    /// The task `id`, whoever created it: for the server's own records (the audit log).
    pub(crate) fn peek(&self, id: &str) -> Option<TaskRecord> {
        self.store.get(id)
    }

    /// [`get`](Tasks::get), answered no sooner than the poll interval after the last read
    /// of the task: a client that polls faster is slowed down, not served faster.
    pub(crate) async fn poll(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        self.get(id, owner)?;
        if let Some(at) = self.store.next_read(id, self.settings().poll_interval) {
            tokio::time::sleep_until(at.into()).await;
        }
        self.get(id, owner)
    }

    /// A receiver that sees every change of the task `id` of `owner`.
    pub(crate) fn watch(&self, id: &str, owner: &str) -> Result<watch::Receiver<u64>, RpcError> {
        self.get(id, owner)?;
        self.store.watch(id).ok_or_else(|| unknown_task(id))
    }

    /// The tasks of `owner`, oldest first.
    pub(crate) fn of_owner(&self, owner: &str) -> Vec<TaskRecord> {
        let mut tasks = self.store.of_owner(owner);
        tasks.retain(|task| !expired(task));
        tasks
    }

    /// Every task running, oldest first.
    pub fn running(&self) -> Vec<TaskRecord> {
        self.store.running()
    }

    /// Tasks running, by plugin and status, for the metrics.
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

    /// Cancels the task `id` of `owner`: it ends `cancelled` at once and its call stops.
    /// The task as it was before; a task already ended is left as it was.
    pub(crate) fn cancel(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        let before = self.get(id, owner)?;
        self.store.update(id, |task| {
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
        if !before.status.is_terminal() {
            tracing::info!(task = id, plugin = before.plugin, "task cancelled");
        }
        Ok(before)
    }

    /// Takes the client's answers to questions of the task `id` of `owner`, by key. Keys
    /// that are not waiting are ignored; an answer that does not fit its question is
    /// `-32602` and nothing is taken. Once no question waits, the task is `working` again.
    pub(crate) fn answer(
        &self,
        id: &str,
        owner: &str,
        answers: &Map<String, Value>,
    ) -> Result<usize, RpcError> {
        self.get(id, owner)?;
        let taken = self.store.update(id, |task| {
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
                    return (
                        false,
                        Err(RpcError::invalid_params(format!(
                            "inputResponses[\"{}\"] does not answer {method}: {why}",
                            crate::catalog::shown(key)
                        ))),
                    );
                }
                taken.push((key.clone(), answer.clone()));
            }
            for (key, _) in &taken {
                task.input_requests.remove(key);
            }
            if task.input_requests.is_empty() && task.status == Status::InputRequired {
                task.status = Status::Working;
                task.status_message = Some("The call is running.".into());
            }
            (!taken.is_empty(), Ok(taken))
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

    /// Whether the question `key` of the task `id` is still to be sent to the client as a
    /// request (2025-11-25); it counts as sent from now on.
    pub(crate) fn claim_question(&self, id: &str, key: &str) -> bool {
        let Some(live) = self.live.lock().get(id).cloned() else {
            return false;
        };
        let mut sent = live.sent.lock();
        if sent.iter().any(|k| k == key) {
            return false;
        }
        sent.push(key.to_string());
        true
    }

    /// The client could not answer the question `key` of the task `id` (it failed, or gave
    /// no answer in time): the call learns why.
    pub(crate) fn unanswered(&self, id: &str, key: &str, why: String) {
        self.store.update(id, |task| {
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
        self.store.update(&live.id, |task| {
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
        self.store.update(id, |task| {
            if task.status != Status::Working {
                return (false, ());
            }
            task.status_message = Some(message);
            (true, ())
        });
    }
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

#[cfg(test)]
mod tests;
