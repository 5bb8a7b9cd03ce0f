//! What the console's forms post: answer a grant question, revoke a remembered grant, stop a
//! call or a task. Each checks the login's CSRF token, acts, writes an audit line with the
//! operator's identity, and sends the browser back with what happened. With an audit log that
//! cannot be written (and `fail_open` off), nothing is done: an unrecorded action would be a
//! gap in the record.

use axum::Form;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::json;

use super::Ctx;
use super::pages::calls::task_handle;
use crate::runtime::Decision;

/// A form with only its CSRF token.
#[derive(Deserialize)]
pub(super) struct Csrf {
    #[serde(default)]
    pub(super) csrf: String,
}

#[derive(Deserialize)]
pub(super) struct Answer {
    #[serde(default)]
    csrf: String,
    id: String,
    decision: String,
}

#[derive(Deserialize)]
pub(super) struct Revoke {
    #[serde(default)]
    csrf: String,
    plugin: String,
    grant: String,
}

#[derive(Deserialize)]
pub(super) struct CancelCall {
    #[serde(default)]
    csrf: String,
    id: u64,
}

#[derive(Deserialize)]
pub(super) struct CancelTask {
    #[serde(default)]
    csrf: String,
    task: String,
}

impl Ctx {
    /// An action: its form checked (CSRF token, origin); nothing done while the audit log takes
    /// no lines; else `act`, whose message the browser is sent back to `back` with (a
    /// bearer-token client gets it as the body).
    async fn act(&self, csrf: &str, back: &str, act: impl AsyncFnOnce() -> String) -> Response {
        if let Err(refused) = self.check_csrf(csrf) {
            return refused.into_response();
        }
        let message = match &self.console.server.audit {
            Some(log) if let Err(e) = log.admit_call() => format!("nothing was done: {e}"),
            _ => act().await,
        };
        tracing::info!(operator = &*self.operator.name, "console: {message}");
        if self.operator.login.is_none() {
            return message.into_response();
        }
        self.say(message);
        Redirect::to(back).into_response()
    }

    /// Writes the action's audit line.
    fn audit(&self, action: &str, target: serde_json::Value, detail: Option<&str>) {
        if let Some(log) = &self.console.server.audit {
            log.record_operator(&self.operator.name, action, target, detail);
        }
    }
}

/// `POST /console/grants/answer`.
pub(super) async fn answer(ctx: Ctx, Form(form): Form<Answer>) -> Response {
    ctx.act(&form.csrf, "/console/grants", async || {
        let decision = match form.decision.as_str() {
            "once" => Decision::Once,
            "always" => Decision::Always,
            "deny" => Decision::Deny,
            other => {
                return format!("`{other}` is not an answer: allow once, always allow, or deny");
            }
        };
        let questions = &ctx.console.server.grant_questions;
        match questions.answer(&form.id, decision, &ctx.operator.name) {
            Ok(q) => {
                ctx.audit(
                    "operator-answered",
                    json!({"plugin": &*q.plugin, "grant": {"kind": q.kind, "name": q.grant}, "client": &*q.client}),
                    Some(form.decision.as_str()),
                );
                format!(
                    "answered: {} for `{}` to reach {} {}",
                    form.decision, q.plugin, q.kind, q.grant
                )
            }
            Err(e) => e.to_string(),
        }
    })
    .await
}

/// `POST /console/grants/revoke`.
pub(super) async fn revoke(ctx: Ctx, Form(form): Form<Revoke>) -> Response {
    ctx.act(&form.csrf, "/console/grants", async || {
        let questions = &ctx.console.server.grant_questions;
        match questions.revoke(&form.plugin, &form.grant) {
            Ok(()) => {
                let target = json!({"plugin": form.plugin, "grant": form.grant});
                ctx.audit("operator-revoked", target, None);
                format!(
                    "revoked: `{}` may no longer reach {}",
                    form.plugin, form.grant
                )
            }
            Err(e) => e.to_string(),
        }
    })
    .await
}

/// `POST /console/calls/cancel`.
pub(super) async fn cancel_call(ctx: Ctx, Form(form): Form<CancelCall>) -> Response {
    ctx.act(&form.csrf, "/console/calls", async || {
        match ctx.console.server.calls.cancel(form.id, &ctx.operator.name) {
            Some(call) => {
                ctx.audit(
                    "operator-cancelled",
                    json!({"plugin": &*call.plugin, "tool": call.tool, "client": &*call.client}),
                    None,
                );
                format!("cancelled: {}'s call of `{}`", call.client, call.tool)
            }
            None => "that call is no longer running".to_string(),
        }
    })
    .await
}

/// `POST /console/tasks/cancel`.
pub(super) async fn cancel_task(ctx: Ctx, Form(form): Form<CancelTask>) -> Response {
    ctx.act(&form.csrf, "/console/calls", async || {
        let tasks = &ctx.console.server.tasks;
        let found = (tasks.running().into_iter()).find(|t| task_handle(&t.id) == form.task);
        let Some(task) = found else {
            return "that task is no longer running".to_string();
        };
        match tasks.cancel(&task.id, &task.owner).await {
            Ok(_) => {
                ctx.audit(
                    "operator-cancelled",
                    json!({"plugin": task.plugin, "tool": task.tool, "task": task_handle(&task.id), "owner": task.owner}),
                    None,
                );
                format!("cancelled: {}'s task of `{}`", task.owner, task.tool)
            }
            Err(e) => format!("the task could not be cancelled: {}", e.message),
        }
    })
    .await
}
