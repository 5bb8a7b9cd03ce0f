//! Tool calls as tasks: whether a call becomes one (the tool's task support and what the
//! request allows), starting it detached from its request, and the `tasks/*` methods of both
//! wire forms.
//!
//! The rule for a tool that may run as a task (`optional`): it becomes one whenever the request
//! allows it (2026-07-28: the request declares the extension; 2025-11-25: the request carries
//! `params.task`). A `required` tool of a 2026-07-28 request first runs in its request for up
//! to [`ASKS_FIRST_WINDOW`]: questions it asks meanwhile go back as `input_required` (its
//! input round trips happen before the task exists), and once the window passes without one,
//! the task is created and the call goes on in it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::tools::{AuditEntry, run};
use super::{Request, StatelessCall};
use crate::catalog::{Catalog, CatalogTool};
use crate::config::TaskSupport;
use crate::mcp::jsonrpc::{INTERNAL_ERROR, RpcError};
use crate::mcp::stateless::meta::MISSING_CLIENT_CAPABILITY;
use crate::mcp::tasks::record::{Form, Status, TaskRecord};
use crate::mcp::tasks::{Live, TaskChannel, wire};
use crate::mcp::version::ProtocolVersion;
use crate::mcp::{Server, Session};
use crate::runtime::PluginEvent;

/// How long a 2025-11-25 `tasks/cancel` waits for another replica to cancel the task it runs.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

/// How long a task-required call may run in its request, asking the client, before its task
/// is created.
pub(super) const ASKS_FIRST_WINDOW: Duration = Duration::from_millis(250);

/// How a tool call runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Mode {
    /// On its request, as ever.
    Call,
    /// As a task at once; `ttl` is what the client asked to keep it (2025-11-25).
    Task { ttl: Option<Duration> },
    /// In its request until it has asked what it needs, then as a task (2026-07-28, required).
    AsksFirst,
}

/// Whether the call of `tool` that `req` makes runs as a task.
pub(super) fn mode(req: &Request<'_>, tool: &CatalogTool) -> Result<Mode, RpcError> {
    match req.version {
        ProtocolVersion::V2026_07_28 => {
            let declared = req
                .stateless
                .is_some_and(|s| declares_extension(&s.meta.capabilities));
            match (tool.task, declared) {
                (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(Mode::Call),
                (TaskSupport::Optional, true) => Ok(Mode::Task { ttl: None }),
                (TaskSupport::Required, true) => Ok(Mode::AsksFirst),
                (TaskSupport::Required, false) => Err(extension_required(&format!(
                    "tool `{}` runs only as a task",
                    crate::catalog::shown(&tool.public_name)
                ))),
            }
        }
        ProtocolVersion::V2025_11_25 => {
            let asked = match req.params.get("task") {
                None | Some(Value::Null) => None,
                Some(Value::Object(task)) => Some(task),
                Some(_) => return Err(RpcError::invalid_params("params.task must be an object")),
            };
            let ttl = asked
                .and_then(|task| task.get("ttl"))
                .and_then(Value::as_u64)
                .map(Duration::from_millis);
            match (tool.task, asked) {
                (TaskSupport::Forbidden, Some(_)) => Err(RpcError::new(
                    crate::mcp::jsonrpc::METHOD_NOT_FOUND,
                    format!(
                        "tool `{}` does not run as a task (execution.taskSupport is forbidden): \
                         call it without params.task",
                        crate::catalog::shown(&tool.public_name)
                    ),
                )),
                (TaskSupport::Required, None) => Err(RpcError::new(
                    crate::mcp::jsonrpc::METHOD_NOT_FOUND,
                    format!(
                        "tool `{}` runs only as a task (execution.taskSupport is required): call \
                         it with params.task",
                        crate::catalog::shown(&tool.public_name)
                    ),
                )),
                (_, Some(_)) => Ok(Mode::Task { ttl }),
                (_, None) => Ok(Mode::Call),
            }
        }
        // Revisions before tasks run every call on its request.
        _ => Ok(Mode::Call),
    }
}

/// Whether a 2026-07-28 request's capabilities declare the tasks extension.
pub(in crate::mcp) fn declares_extension(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(wire::EXTENSION))
        .is_some_and(Value::is_object)
}

/// `-32021`: the request needs the tasks extension, which it did not declare.
pub(in crate::mcp) fn extension_required(why: &str) -> RpcError {
    RpcError::new(
        MISSING_CLIENT_CAPABILITY,
        format!(
            "{why}: declare the extension `{}` in the request's clientCapabilities",
            wire::EXTENSION
        ),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { wire::EXTENSION: {} } } }))
}

/// Starts the call of the tool `name` with `arguments` as a task (`mode`), and answers with
/// the task (or, when it asked the client first, with its questions).
pub(super) async fn start(
    req: &Request<'_>,
    mode: Mode,
    catalog: Arc<Catalog>,
    name: &str,
    arguments: Value,
) -> Result<Value, RpcError> {
    let server = req.session.server();
    let Some(tool) = catalog.tool(name) else {
        return Err(RpcError::invalid_params(format!("unknown tool: {name}")));
    };
    let plugin = tool.backend.owner().to_string();
    let limit = match &tool.backend {
        crate::catalog::Backend::Plugin(p) => p.spec.limits.running_tasks,
        crate::catalog::Backend::InHost { .. } => u64::MAX,
    };
    let owner = req.session.task_owner();
    let live = server
        .tasks
        .admit(&owner, req.session.caller(), &plugin, limit)?;
    let (form, capabilities, round) = match req.stateless {
        Some(call) => (
            Form::Extension,
            call.meta.capabilities.clone(),
            call.round.clone(),
        ),
        None => (Form::Core, req.session.client_capabilities(), None),
    };
    let in_request = match mode {
        Mode::AsksFirst => round.clone(),
        _ => None,
    };
    let channel = Arc::new(TaskChannel::new(
        server.clone(),
        live.clone(),
        req.version,
        capabilities,
        in_request,
    ));
    let span = task_span(req, &live, name);
    let detached = Detached {
        session: req.session.clone(),
        id: req.id.clone(),
        params: req.params.clone(),
        version: req.version,
        stateless: req.stateless.map(|call| StatelessCall {
            meta: call.meta.clone(),
            round: None,
        }),
        catalog,
        name: name.to_string(),
        arguments,
        channel: channel.clone(),
        trace: span.clone(),
    };
    let ttl = match mode {
        Mode::Task { ttl } => ttl,
        _ => None,
    };
    let publish = async || {
        let task = server.tasks.publish(&live, form, name, ttl).await?;
        if let Some(log) = &server.audit {
            log.record_task(&task_line(
                req.session.caller(),
                &task,
                "task-created",
                None,
            ));
        }
        if form == Form::Core {
            tokio::spawn(tell_status(Arc::downgrade(req.session), task.clone()));
        }
        Ok::<_, RpcError>(task)
    };
    if mode != Mode::AsksFirst {
        let task = publish().await?;
        tokio::spawn(detached.run_to_end(live));
        return Ok(created(&task));
    }
    // Until the task is published, the call is this request's: if the request goes away,
    // so does the call, and the task gives its place back.
    let unpublished = Unpublished {
        server,
        live: live.clone(),
        armed: true,
    };
    let mut call = tokio::spawn(detached.run());
    let ended = tokio::select! {
        ended = &mut call => Some(ended),
        () = tokio::time::sleep(ASKS_FIRST_WINDOW) => None,
        () = req.cancelled.cancelled() => {
            return Err(RpcError::new(INTERNAL_ERROR, "the request was cancelled"));
        }
    };
    let ended = match ended {
        None if channel.detach() => {
            let task = publish().await?;
            unpublished.disarm();
            let (server, live, span) = (server.clone(), live.clone(), span.clone());
            tokio::spawn(async move {
                end(&server, &live, joined(call.await), span.as_ref()).await;
            });
            return Ok(created(&task));
        }
        // A question went to the request: the call ends on its own, failing to get an answer.
        None => call.await,
        Some(ended) => ended,
    };
    let answer = joined(ended);
    let failed = match &answer {
        Ok(result) => result.get("isError") == Some(&Value::Bool(true)),
        Err(_) => true,
    };
    if let Some(asked) = round.as_ref().and_then(|round| round.outcome(failed)) {
        return asked;
    }
    // It ended within the window, asking nothing more: a task that is done already.
    let task = publish().await?;
    unpublished.disarm();
    end(server, &live, answer, span.as_ref()).await;
    Ok(created(
        &server
            .tasks
            .get(&task.id, &task.owner)
            .await
            .unwrap_or(task),
    ))
}

/// Sends `notifications/tasks/status` (2025-11-25) to the session that created `task` each time
/// its status changes, until it ends or the session is gone.
async fn tell_status(session: std::sync::Weak<Session>, task: TaskRecord) {
    let Some(server) = session.upgrade().map(|s| s.server().clone()) else {
        return;
    };
    let Ok(mut changes) = server.tasks.watch(&task.id, &task.owner).await else {
        return;
    };
    let mut told = task.status;
    while changes.changed().await.is_ok() {
        let Some(session) = session.upgrade() else {
            return;
        };
        let Ok(now) = server.tasks.get(&task.id, &task.owner).await else {
            return;
        };
        if now.status != told {
            told = now.status;
            session.send(crate::mcp::jsonrpc::notification(
                "notifications/tasks/status",
                wire::core_task(&now),
            ));
        }
        if now.status.is_terminal() {
            return;
        }
    }
}

/// A task admitted but not published: when dropped (its request went away, or its call asked
/// the client in the request instead), its call stops and it gives its place back. Published,
/// it is forgotten instead.
struct Unpublished<'a> {
    server: &'a Server,
    live: Arc<Live>,
    armed: bool,
}

impl Unpublished<'_> {
    /// The task was published: it lives on.
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Unpublished<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.live.cancel.cancel();
            self.server.tasks.abandon(&self.live);
        }
    }
}

/// The `CreateTaskResult` of `task` in its form.
fn created(task: &TaskRecord) -> Value {
    match task.form {
        Form::Extension => wire::created(task),
        Form::Core => wire::core_created(task),
    }
}

/// A call's answer from its spawned run; a run that panicked is an internal error.
fn joined(
    ended: Result<Result<Value, RpcError>, tokio::task::JoinError>,
) -> Result<Value, RpcError> {
    ended.unwrap_or_else(|e| {
        Err(match e.try_into_panic() {
            Ok(payload) => crate::mcp::incident::panicked("a task", &*payload),
            Err(_) => RpcError::new(INTERNAL_ERROR, "the task's call was stopped"),
        })
    })
}

/// Records how the task `live`'s call ended (`answer`), and says so: the audit line, the
/// metrics, the end of its span.
async fn end(
    server: &Server,
    live: &Live,
    answer: Result<Value, RpcError>,
    span: Option<&opentelemetry::Context>,
) {
    // A task cancelled first stays cancelled: its end is counted as that.
    server.tasks.finish(live, answer);
    let Some(task) = server.tasks.peek(&live.id).await else {
        return;
    };
    if let Some(log) = &server.audit {
        let detail = task.status_message.as_deref();
        log.record_task(&task_line(&live.caller, &task, "task-ended", detail));
    }
    if let Some(metrics) = &server.metrics {
        metrics.record_task_end(&task.plugin, task.status.as_str());
    }
    if let Some(span) = span {
        let attributes = vec![opentelemetry::KeyValue::new(
            "palisade.task.status",
            task.status.as_str(),
        )];
        let error = (task.status == Status::Failed).then(|| {
            let why = task.status_message.clone().unwrap_or_default();
            ("task_failed".to_string(), why)
        });
        crate::telemetry::traces::end_span(span, attributes, error);
    }
}

/// The span of a task's life, from its creation to its end, under the request that created it.
fn task_span(req: &Request<'_>, live: &Live, name: &str) -> Option<opentelemetry::Context> {
    let tracing = req.session.server().tracing.as_ref()?;
    let parent = req.trace.clone().unwrap_or_default();
    Some(tracing.span(
        &parent,
        format!("task {name}"),
        opentelemetry::trace::SpanKind::Internal,
        vec![
            opentelemetry::KeyValue::new("palisade.task.id", live.id.clone()),
            opentelemetry::KeyValue::new("gen_ai.tool.name", name.to_string()),
        ],
    ))
}

/// What a task's call needs once its request is gone: the request's parts, owned.
struct Detached {
    session: Arc<Session>,
    id: Value,
    params: Map<String, Value>,
    version: ProtocolVersion,
    stateless: Option<StatelessCall>,
    catalog: Arc<Catalog>,
    name: String,
    arguments: Value,
    channel: Arc<TaskChannel>,
    /// The task's span, the parent of its plugin call's.
    trace: Option<opentelemetry::Context>,
}

impl Detached {
    /// Runs the call under the task's limits until it ends or the task is cancelled.
    async fn run(self) -> Result<Value, RpcError> {
        let live = self.channel.live().clone();
        let req = Request {
            session: &self.session,
            id: &self.id,
            params: &self.params,
            version: self.version,
            cancelled: live.cancel.clone(),
            stateless: self.stateless.as_ref(),
            stats: Arc::default(),
            trace: self.trace.clone(),
            task: Some(self.channel.clone()),
        };
        let Some(tool) = self.catalog.tool(&self.name) else {
            return Err(RpcError::invalid_params(format!(
                "unknown tool: {}",
                self.name
            )));
        };
        let mut audit = AuditEntry::new(&req, &self.name, &self.arguments);
        audit.for_task(tool.backend.owner(), &live.id);
        tokio::select! {
            // Dropping the call drops its instance: the guest stops wherever it is.
            () = live.cancel.cancelled() => Err(RpcError::new(
                INTERNAL_ERROR,
                format!("task {} was cancelled", live.id),
            )),
            answer = run(&req, tool, &self.arguments, &mut audit) => answer,
        }
    }

    /// [`run`](Detached::run), then the task's outcome recorded.
    async fn run_to_end(self, live: Arc<Live>) {
        let (server, span) = (self.session.server().clone(), self.trace.clone());
        let answer = tokio::spawn(self.run()).await;
        end(&server, &live, joined(answer), span.as_ref()).await;
    }
}

/// Forwards a task's plugin events from `rx`, noting its progress reports in the task's status
/// message as they pass (clients that poll see how far along it is).
pub(super) fn note_progress(
    server: &Arc<Server>,
    live: &Arc<Live>,
    mut rx: mpsc::UnboundedReceiver<PluginEvent>,
) -> mpsc::UnboundedReceiver<PluginEvent> {
    let (tx, out) = mpsc::unbounded_channel();
    let (server, id, plugin) = (server.clone(), live.id.clone(), live.plugin().to_string());
    tokio::spawn(async move {
        let mut noted: Option<tokio::time::Instant> = None;
        while let Some(event) = rx.recv().await {
            if let PluginEvent::Progress {
                progress,
                total,
                message,
            } = &event
                // Each note is a change of the task (and with [cluster], a write to Redis): a
                // plugin reporting in a tight loop is noted at most every PROGRESS_EVERY.
                && noted.is_none_or(|at| at.elapsed() >= PROGRESS_EVERY)
            {
                noted = Some(tokio::time::Instant::now());
                let text = progress_text(&plugin, *progress, *total, message.as_deref());
                server.tasks.note_progress(&id, text);
            }
            if tx.send(event).is_err() {
                break;
            }
        }
    });
    out
}

/// How often a task's progress may change its status message.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// A progress report in words, said to be the plugin's: `` plugin `crawl`: 3 of 10: fetching
/// pages ``. The plugin's text is cut short.
fn progress_text(plugin: &str, progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let mut text = match total {
        Some(total) => format!("plugin `{plugin}`: {progress} of {total}"),
        None => format!("plugin `{plugin}`: {progress}"),
    };
    if let Some(message) = message {
        text.push_str(": ");
        text.push_str(&crate::catalog::shown(message));
    }
    text
}

/// Serves a `tasks/*` method.
pub(super) async fn serve(req: &Request<'_>, method: &str) -> Result<Value, RpcError> {
    match (req.version, req.stateless) {
        (ProtocolVersion::V2026_07_28, Some(call)) => {
            if !declares_extension(&call.meta.capabilities) {
                return Err(extension_required(&format!("`{method}` is part of tasks")));
            }
            let id = task_id(req.params)?;
            let owner = req.session.task_owner();
            let tasks = &req.session.server().tasks;
            match method {
                "tasks/get" => Ok(wire::detailed(&tasks.poll(id, &owner).await?)),
                "tasks/update" => {
                    let answers = match req.params.get("inputResponses") {
                        Some(Value::Object(answers)) => answers,
                        _ => {
                            return Err(RpcError::invalid_params(
                                "params.inputResponses must be an object of answers by key",
                            ));
                        }
                    };
                    if tasks.answer(id, &owner, answers).await? > 0 {
                        audit_task(req, id, "task-input").await;
                    }
                    Ok(json!({}))
                }
                "tasks/cancel" => {
                    let before = tasks.cancel(id, &owner).await?;
                    if !before.status.is_terminal() {
                        audit_task(req, id, "task-cancelled").await;
                    }
                    Ok(json!({}))
                }
                _ => Err(RpcError::method_not_found(method, "protocol 2026-07-28")),
            }
        }
        (ProtocolVersion::V2025_11_25, None) => core(req, method).await,
        _ => Err(RpcError::method_not_found(
            method,
            &format!("protocol {}", req.version),
        )),
    }
}

/// The `tasks/*` methods of 2025-11-25.
async fn core(req: &Request<'_>, method: &str) -> Result<Value, RpcError> {
    let owner = req.session.task_owner();
    let tasks = &req.session.server().tasks;
    match method {
        "tasks/list" => {
            let mut all = tasks.of_owner(&owner).await?;
            // The extension's tasks are not this revision's.
            all.retain(|task| task.form == Form::Core);
            let page = req.session.server().page_size;
            let start = match req.params.get("cursor") {
                None | Some(Value::Null) => 0,
                Some(Value::String(cursor)) => all
                    .iter()
                    .position(|t| &t.id == cursor)
                    .ok_or_else(|| RpcError::invalid_params("params.cursor is not one of ours"))?,
                Some(_) => return Err(RpcError::invalid_params("params.cursor must be a string")),
            };
            let shown: Vec<Value> = all
                .iter()
                .skip(start)
                .take(page)
                .map(wire::core_task)
                .collect();
            let mut result = json!({ "tasks": shown });
            if let Some(next) = all.get(start + page) {
                result["nextCursor"] = next.id.clone().into();
            }
            Ok(result)
        }
        "tasks/get" => Ok(wire::core_task(
            &tasks.poll(task_id(req.params)?, &owner).await?,
        )),
        "tasks/cancel" => {
            let id = task_id(req.params)?;
            let before = tasks.get(id, &owner).await?;
            if before.status.is_terminal() {
                return Err(RpcError::invalid_params(format!(
                    "cannot cancel task {id}: it is already {}",
                    before.status.as_str()
                )));
            }
            tasks.cancel(id, &owner).await?;
            audit_task(req, id, "task-cancelled").await;
            // Another replica may run it: the answer waits (a little) until it is cancelled.
            let deadline = tokio::time::Instant::now() + CANCEL_WAIT;
            loop {
                let task = tasks.get(id, &owner).await?;
                if task.status.is_terminal() || tokio::time::Instant::now() >= deadline {
                    return Ok(wire::core_task(&task));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        "tasks/result" => core_result(req, task_id(req.params)?, &owner).await,
        _ => Err(RpcError::method_not_found(method, "protocol 2025-11-25")),
    }
}

/// `tasks/result` (2025-11-25): waits for the task to end, putting its questions to the client
/// on this request's stream meanwhile, then answers with what the call answered.
async fn core_result(req: &Request<'_>, id: &str, owner: &str) -> Result<Value, RpcError> {
    let tasks = &req.session.server().tasks;
    let mut changes = tasks.watch(id, owner).await?;
    loop {
        let task = tasks.get(id, owner).await?;
        if task.status.is_terminal() {
            return wire::core_result(&task);
        }
        if task.status == Status::InputRequired {
            for (key, question) in &task.input_requests {
                if tasks.claim_question(id, key) {
                    put_question(req, id, key, question);
                }
            }
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() {
                return Err(RpcError::invalid_params(format!("task {id} is gone")));
            },
            () = req.cancelled.cancelled() => return Err(RpcError::new(INTERNAL_ERROR, "cancelled")),
        }
    }
}

/// Sends the task's question `key` to the client as a request on the `tasks/result` stream,
/// tagged with the task; its answer goes to the task.
fn put_question(req: &Request<'_>, id: &str, key: &str, question: &Value) {
    let Some(method) = question.get("method").and_then(Value::as_str) else {
        return;
    };
    let method: &'static str = match method {
        "elicitation/create" => "elicitation/create",
        "sampling/createMessage" => "sampling/createMessage",
        _ => "roots/list",
    };
    let mut params = question.get("params").cloned().unwrap_or_else(|| json!({}));
    if let Some(fields) = params.as_object_mut() {
        let meta = fields.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(wire::RELATED_TASK.into(), json!({ "taskId": id }));
        }
    }
    let (session, related) = (req.session.clone(), req.id.clone());
    let (id, key) = (id.to_string(), key.to_string());
    let owner = session.task_owner();
    tokio::spawn(async move {
        let timeout = crate::mcp::requests_to_client::answer_timeout(method);
        let answer = session
            .ask_client(method, params, timeout, Some(&related))
            .await;
        let tasks = &session.server().tasks;
        match answer {
            Ok(answer) => {
                let mut answers = Map::new();
                answers.insert(key.clone(), answer);
                match tasks.answer(&id, &owner, &answers).await {
                    Ok(_) => {
                        if let (Some(log), Some(task)) =
                            (&session.server().audit, tasks.peek(&id).await)
                        {
                            log.record_task(&task_line(
                                session.caller(),
                                &task,
                                "task-input",
                                None,
                            ));
                        }
                    }
                    Err(e) => tasks.unanswered(&id, &key, e.message),
                }
            }
            Err(why) => tasks.unanswered(&id, &key, why),
        }
    });
}

/// `params.taskId`.
fn task_id(params: &Map<String, Value>) -> Result<&str, RpcError> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("params.taskId must be a string"))
}

/// The audit line of `event` about `task`, for a request of `client`.
fn task_line<'a>(
    client: &'a str,
    task: &'a TaskRecord,
    event: &'a str,
    detail: Option<&'a str>,
) -> crate::audit::TaskLine<'a> {
    crate::audit::TaskLine {
        client,
        owner: &task.owner,
        plugin: &task.plugin,
        tool: &task.tool,
        id: &task.id,
        status: task.status.as_str(),
        event,
        detail,
    }
}

/// Writes an audit line about the task `id` (answered, cancelled), when the audit log is on.
async fn audit_task(req: &Request<'_>, id: &str, event: &'static str) {
    let server = req.session.server();
    let Some(log) = &server.audit else {
        return;
    };
    if let Some(task) = server.tasks.peek(id).await {
        log.record_task(&task_line(req.session.caller(), &task, event, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tasks_progress_is_said_to_be_its_plugins() {
        assert_eq!(
            progress_text("crawl", 3.0, Some(10.0), Some("fetching pages")),
            "plugin `crawl`: 3 of 10: fetching pages"
        );
        assert_eq!(
            progress_text("crawl", 0.5, None, None),
            "plugin `crawl`: 0.5"
        );
    }
}
