//! `tools/call`: arguments checked against the schema, the operator's confirmation, the audit line.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::audit::AuditRecord;
use crate::catalog::{Backend, Catalog};
use crate::mcp::jsonrpc::{INTERNAL_ERROR, RpcError};
use crate::mcp::{Session, wire};
use crate::runtime::bindings::host::{
    AskError, ElicitationAction, ElicitationRequest, FormElicitation, InputRequest, InputResponse,
};
use crate::runtime::{CallError, CallStats, InstanceSource, LimitExceeded, log_safe};

use super::*;
use crate::catalog::CatalogTool;

pub(super) async fn call(req: &Request<'_>) -> Result<Value, RpcError> {
    let name = string_param(req.params, "name")?;
    let arguments = match req.params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(a)) => Value::Object(a.clone()),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "params.arguments must be an object",
            ));
        }
    };
    // Written when the call ends, however it ends (a cancelled call is dropped mid-way).
    let mut audit = AuditEntry::new(req, name, &arguments);
    // A tool of a plugin still loading is waited for.
    let catalog = req
        .session
        .server()
        .catalog_with(Some(name), |c| c.tool(name).is_some())
        .await;
    // A tool outside the client's scope does not exist for it.
    let Some(tool) = catalog
        .tool(name)
        .filter(|t| Catalog::tool_in_scope(t, &req.session.scope()))
    else {
        // Waited its plugin's `timeout_ms` (a compile slowed by others): say so, not "unknown".
        if let Some(plugin) = (req.session.server().loading.loading_for(Some(name)))
            .filter(|plugin| req.session.scope().allows_plugin(plugin))
        {
            audit.finish("still-loading", None);
            return Ok(wire::call_error(&format!(
                "`{name}` is not ready: plugin `{plugin}` is still loading (compiling); retry in a few seconds"
            )));
        }
        audit.finish("unknown-tool", None);
        return Err(RpcError::invalid_params(format!("unknown tool: {name}")));
    };
    audit.plugin = Some(tool.backend.owner().into());
    if let Some(log) = &req.session.server().audit
        && let Err(unavailable) = log.admit_call()
    {
        audit.finish("audit-unavailable", None);
        return Err(RpcError::new(INTERNAL_ERROR, unavailable.to_string()));
    }
    if let Err(errors) = tool.validate(&arguments) {
        audit.finish("invalid-arguments", None);
        return Ok(wire::call_error(&format!(
            "invalid arguments for `{name}`:\n{errors}"
        )));
    }
    match tasks::mode(req, tool)? {
        tasks::Mode::Call => run(req, tool, &arguments, &mut audit).await,
        mode => {
            // The task's call writes its own line when it ends.
            audit.skip();
            tasks::start(req, mode, catalog.clone(), name, arguments.clone()).await
        }
    }
}

/// Runs the call of `tool` with `arguments` (checked against its schema) and answers with its
/// result; `audit` records how it went.
pub(super) async fn run(
    req: &Request<'_>,
    tool: &CatalogTool,
    arguments: &Value,
    audit: &mut AuditEntry<'_>,
) -> Result<Value, RpcError> {
    let name = tool.public_name.as_str();
    let result = match &tool.backend {
        Backend::Plugin(plugin) => {
            if tool.confirm
                && let Err((outcome, why)) = confirm(req, name, arguments).await
            {
                let outcome = if req.awaiting_input() {
                    "input-required"
                } else {
                    outcome
                };
                audit.finish(outcome, Some(&why));
                return Ok(wire::call_error(&why));
            }
            let own_name = tool.tool.name.clone();
            let call = req.with_plugin(plugin, async |ctx| {
                plugin.call_tool(own_name, arguments.to_string(), ctx).await
            });
            if req.task.is_some() {
                // A task is listed, and stopped, as a task.
                call.await
            } else {
                let listed = req.session.server().calls.begin(
                    req.session.caller().clone(),
                    plugin.name.clone(),
                    name,
                    req.cancelled.clone(),
                );
                let result = stoppable(call, &req.cancelled).await;
                // Stopped by an operator: whatever the plugin made of it, the call did not do
                // its work, and the client is told who stopped it.
                match (result, listed.stopped_by()) {
                    (Some(result), None) => result,
                    (_, stopped_by) => {
                        let why = match stopped_by {
                            Some(operator) => {
                                format!("the server's operator ({operator}) cancelled this call")
                            }
                            None => "the call was cancelled".to_string(),
                        };
                        audit.finish("cancelled", Some(&why));
                        return Ok(wire::call_error(&format!("{why}; it did not finish")));
                    }
                }
            }
        }
        Backend::InHost { run, .. } => Ok(run(arguments)),
    };
    if req.awaiting_input() {
        // An attempt that asked the client: the client's retry is the call that counts.
        audit.finish("input-required", None);
        return Ok(wire::call_error("awaiting the client's input"));
    }
    match result {
        Ok(result) => {
            let nonconforming = result
                .structured_content
                .as_deref()
                .filter(|_| !result.is_error)
                .and_then(|structured| tool.validate_output(structured).err());
            if let Some(why) = nonconforming {
                let why = format!("tool `{name}` answered wrongly: {why}");
                tracing::warn!(tool = name, "{}", log_safe(&why));
                audit.finish("tool-error", Some(&why));
                return Ok(wire::call_error(&why));
            }
            audit.finish(if result.is_error { "tool-error" } else { "ok" }, None);
            let mut answer = wire::call_result(&result, req.version);
            let removed = wire::strip_reserved_meta(&mut answer);
            if !removed.is_empty() {
                tracing::warn!(
                    plugin = tool.backend.owner(),
                    tool = name,
                    keys = ?removed,
                    "dropped _meta keys the plugin may not set (the host's and MCP's own)"
                );
            }
            if result.is_error {
                say_what_was_denied(&mut answer, &audit.stats);
            }
            Ok(answer)
        }
        // Tool errors are results the model can read, not protocol errors.
        Err(CallError::Plugin(e)) => {
            audit.finish("tool-error", Some(&e.message));
            let mut answer = wire::call_error(&e.message);
            say_what_was_denied(&mut answer, &audit.stats);
            Ok(answer)
        }
        // A task whose call was stopped (a trap, a limit) fails with a protocol error; a tool
        // error above completes it.
        Err(CallError::Limit(plugin, limit)) if req.task.is_some() => {
            let why = format!("plugin `{plugin}` {limit}");
            audit.limit = Some(limit.kind());
            audit.finish("limit", Some(&why));
            Err(RpcError::new(INTERNAL_ERROR, why))
        }
        Err(CallError::Stopped(why)) if req.task.is_some() => {
            audit.finish("stopped", Some(&why));
            Err(RpcError::new(INTERNAL_ERROR, why))
        }
        Err(CallError::Limit(plugin, limit)) => {
            let mut why = format!("plugin `{plugin}` {limit}");
            audit.limit = Some(limit.kind());
            audit.finish("limit", Some(&why));
            let passes = matches!(
                limit,
                LimitExceeded::Concurrency { .. } | LimitExceeded::SharedLimitsUnavailable { .. }
            );
            if limit.retry_after().is_none() && !passes {
                why.push_str(
                    ". The call was stopped; retrying it as is will hit the same limit. The \
                     server is fine and other calls go on.",
                );
            }
            Ok(wire::limit_error(&why, limit.retry_after()))
        }
        Err(CallError::Stopped(why)) => {
            audit.finish("stopped", Some(&why));
            Ok(wire::call_error(&format!(
                "{why}. The plugin was stopped; the server is fine and other calls go on."
            )))
        }
        Err(e) => {
            audit.finish("host-error", Some(&e.to_string()));
            Err(rpc_error(e, name))
        }
    }
}

/// Runs `call` until it ends or `stop` is cancelled; then gives it the grace a cancelled request
/// gets to stop cleanly (the plugin sees `is-cancelled`), and `None` if it does not.
async fn stoppable<R>(call: impl Future<Output = R>, stop: &CancellationToken) -> Option<R> {
    tokio::pin!(call);
    tokio::select! {
        result = &mut call => Some(result),
        _ = stop.cancelled() => {
            tokio::time::timeout(crate::mcp::session::in_flight::CANCEL_GRACE, call).await.ok()
        }
    }
}

/// Adds to a failed call's result what the sandbox refused it (a host, an environment
/// variable) and how to grant it, and why a granted request failed on the way (a certificate
/// not trusted): the plugin's own error may not say.
fn say_what_was_denied(answer: &mut Value, stats: &CallStats) {
    let said = [
        ("Palisade refused this call", stats.denied()),
        (
            "Palisade could not complete a request of this call",
            stats.unreachable(),
        ),
    ];
    let Some(content) = answer.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    for (what, notes) in said.into_iter().filter(|(_, notes)| !notes.is_empty()) {
        let text = format!("{what}: {}", notes.join("; "));
        content.push(serde_json::json!({ "type": "text", "text": text }));
    }
}

/// Asks the user, through elicitation, whether the tool `name` may run with `arguments`.
/// `Err` has the audit outcome and the message for the caller.
async fn confirm(
    req: &Request<'_>,
    name: &str,
    arguments: &Value,
) -> Result<(), (&'static str, String)> {
    let mut shown = serde_json::to_string_pretty(arguments).unwrap_or_default();
    if shown.len() > 2000 {
        shown.truncate(shown.floor_char_boundary(2000));
        shown.push_str("\n...");
    }
    let request = ElicitationRequest::Form(FormElicitation {
        message: format!(
            "Allow the tool `{name}` to run with these arguments?\n{shown}\n(The server's operator asks for confirmation before this tool runs.)"
        ),
        requested_schema: r#"{"type":"object","properties":{}}"#.into(),
    });
    let answer = req
        .client_channel()
        .ask(vec![(CONFIRM_KEY.into(), InputRequest::Elicit(request))])
        .await
        .pop()
        .map(|(_, answer)| answer);
    match answer {
        Some(Ok(InputResponse::Elicit(answer))) if answer.action == ElicitationAction::Accept => {
            Ok(())
        }
        Some(Ok(_)) => Err((
            "declined",
            format!("the user declined to run `{name}`; it did not run"),
        )),
        Some(Err(AskError::AwaitingAnswer)) => Err((
            "input-required",
            "awaiting the user's confirmation".to_string(),
        )),
        Some(Err(AskError::Failed(why))) => Err((
            "not-confirmed",
            format!(
                "`{name}` runs only after the user confirms it (confirm = true in the server's \
                 configuration), and this client cannot be asked: {why}. It did not run."
            ),
        )),
        None => Err((
            "not-confirmed",
            format!("no confirmation for `{name}`; it did not run"),
        )),
    }
}

/// The key of the operator's confirmation (`confirm = true`) among a call's input requests.
const CONFIRM_KEY: &str = "palisade/confirm";

/// The record of one tool call, written when dropped: its audit line and its metrics. A call
/// cancelled mid-way is recorded as `cancelled`.
pub(super) struct AuditEntry<'a> {
    session: &'a Session,
    tool: &'a str,
    arguments: &'a Value,
    plugin: Option<String>,
    started: Instant,
    stats: Arc<CallStats>,
    outcome: Option<(&'static str, Option<String>)>,
    /// The limit that stopped the call, if one did.
    limit: Option<&'static str>,
    /// The trace the call is part of, when it is in one.
    trace_id: Option<String>,
    /// The task the call is the work of, if it is one's.
    task: Option<String>,
    /// Nothing is written (the call became a task).
    skipped: bool,
}

impl<'a> AuditEntry<'a> {
    pub(super) fn new(req: &Request<'a>, tool: &'a str, arguments: &'a Value) -> AuditEntry<'a> {
        AuditEntry {
            session: req.session,
            tool,
            arguments,
            plugin: None,
            started: Instant::now(),
            stats: req.stats.clone(),
            outcome: None,
            limit: None,
            // Only the audit log records it.
            trace_id: req
                .session
                .server()
                .audit
                .as_ref()
                .and_then(|_| req.trace_id()),
            task: None,
            skipped: false,
        }
    }

    fn finish(&mut self, outcome: &'static str, detail: Option<&str>) {
        self.outcome = Some((outcome, detail.map(str::to_string)));
    }

    /// Writes nothing: the call became a task, whose own call is recorded when it ends.
    fn skip(&mut self) {
        self.skipped = true;
    }

    /// The entry is for the call of the task `id`.
    pub(super) fn for_task(&mut self, plugin: &str, id: &str) {
        self.plugin = Some(plugin.into());
        self.task = Some(id.into());
    }
}

impl Drop for AuditEntry<'_> {
    fn drop(&mut self) {
        let server = &self.session.server();
        if self.skipped {
            return;
        }
        let (outcome, mut detail) = self.outcome.take().unwrap_or(("cancelled", None));
        if let Some(task) = &self.task {
            detail = Some(match detail {
                Some(detail) => format!("task {task}: {detail}"),
                None => format!("task {task}"),
            });
        }
        let record = AuditRecord {
            client: self.session.caller(),
            oauth: self.session.identity().oauth.as_deref(),
            trace_id: self.trace_id.as_deref(),
            plugin: self.plugin.as_deref(),
            tool: self.tool,
            arguments: self.arguments,
            outcome,
            detail: detail.as_deref(),
            limit: self.limit,
            fuel_used: self.stats.fuel_used.load(Ordering::Relaxed),
            instance: self.stats.instance().map(InstanceSource::name),
            duration: self.started.elapsed(),
        };
        if let Some(metrics) = &server.metrics {
            metrics.record_call(&record);
        }
        if let Some(log) = &server.audit {
            log.record(&record);
        }
        server.activity.record(&record);
    }
}
