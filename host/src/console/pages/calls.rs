//! Calls and tasks: those running now (each may be stopped), and the last calls that ended.

use axum::extract::Query;
use axum::response::Response;
use maud::html;
use sha2::{Digest, Sha256};

use super::{Ctx, Paging, ago, calls_table, csrf, frame, span, time};

/// How the console names a task: a task's id is its owner's capability, so the page shows
/// and posts only a digest of it.
pub(in crate::console) fn task_handle(id: &str) -> String {
    hex::encode(&Sha256::digest(id.as_bytes())[..12])
}

pub(in crate::console) async fn page(ctx: Ctx, Query(paging): Query<Paging>) -> Response {
    let server = &ctx.console.server;
    let running = server.calls.list();
    let tasks = server.tasks.running();
    let recent = server.activity.recent(None);
    let (shown, links) = paging.of(&recent, "/console/calls");
    let body = html! {
        h1 { "Calls and tasks" }
        section {
            h2 { "Calls running" }
            @if running.is_empty() {
                p.empty { "No call is running." }
            } @else {
                table.running {
                    thead { tr { th { "started" } th { "client" } th { "plugin" } th { "tool" } th { "running for" } th {} } }
                    tbody { @for call in &running {
                        tr {
                            td title=(time(call.started)) { (ago(call.started)) }
                            td { (call.client) }
                            td { a href={"/console/plugins/" (call.plugin)} { (call.plugin) } }
                            td { (call.tool) }
                            td.num { (span(call.running_for)) }
                            td {
                                @if call.stopping {
                                    "stopping…"
                                } @else {
                                    form.inline method="post" action="/console/calls/cancel" {
                                        (csrf(&ctx))
                                        input type="hidden" name="id" value=(call.id);
                                        button.danger { "Cancel" }
                                    }
                                }
                            }
                        }
                    } }
                }
            }
        }
        section {
            h2 { "Tasks running" }
            @if tasks.is_empty() {
                p.empty { "No task is running on this server." }
            } @else {
                table.tasks {
                    thead { tr { th { "created" } th { "owner" } th { "plugin" } th { "tool" } th { "status" } th {} } }
                    tbody { @for task in &tasks {
                        @let created = std::time::UNIX_EPOCH + std::time::Duration::from_millis(task.created_ms);
                        tr {
                            td title=(time(created)) { (ago(created)) }
                            td { (task.owner) }
                            td { a href={"/console/plugins/" (task.plugin)} { (task.plugin) } }
                            td { (task.tool) }
                            td { (task.status.as_str()) @if let Some(m) = &task.status_message { div.detail { (m) } } }
                            td {
                                form.inline method="post" action="/console/tasks/cancel" {
                                    (csrf(&ctx))
                                    input type="hidden" name="task" value=(task_handle(&task.id));
                                    button.danger { "Cancel" }
                                }
                            }
                        }
                    } }
                }
            }
        }
        section {
            h2 { "Recent calls" }
            (calls_table(shown, true))
            (links)
        }
    };
    frame(&ctx, "Calls and tasks", "calls tasks tick", body)
}
