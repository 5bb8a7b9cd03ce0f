//! Grants: the questions waiting for an answer (an operator may give it), and the grants
//! remembered, each revocable.

use axum::extract::Query;
use axum::response::Response;
use maud::html;

use super::{Ctx, Paging, ago, csrf, frame, time};

pub(in crate::console) async fn page(ctx: Ctx, Query(paging): Query<Paging>) -> Response {
    let questions = &ctx.console.server.grant_questions;
    let waiting = questions.waiting();
    let remembered = questions.remembered();
    let (shown, links) = paging.of(&remembered, "/console/grants");
    let body = html! {
        h1 { "Grants" }
        section {
            h2 { "Questions waiting" }
            p.hint { "A plugin with " code { "ask = true" } " reached for something it was not granted. \
                Its call waits for an answer: the client's, if it can show the question, or yours." }
            @if waiting.is_empty() {
                p.empty { "No question is waiting." }
            } @else {
                table.questions {
                    thead { tr { th { "asked" } th { "plugin" } th { "wants" } th { "call of" } th { "answer" } } }
                    tbody { @for q in &waiting {
                        tr {
                            td title=(time(q.asked)) { (ago(q.asked)) }
                            td { a href={"/console/plugins/" (q.plugin)} { (q.plugin) } }
                            td { (q.kind) " " code { (q.grant) } }
                            td { (q.client) @if !q.client_asked { div.detail { "its client cannot be asked" } } }
                            td {
                                form.inline method="post" action="/console/grants/answer" {
                                    (csrf(&ctx))
                                    input type="hidden" name="id" value=(q.id);
                                    button name="decision" value="once" { "Allow once" }
                                    button name="decision" value="always" { "Always allow" }
                                    button.danger name="decision" value="deny" { "Deny" }
                                }
                            }
                        }
                    } }
                }
            }
        }
        section {
            h2 { "Remembered grants" }
            p.hint {
                @if questions.remembered_in_file() { "Kept in palisade.grants beside the configuration." }
                @else { "Kept until the server stops: it has no configuration file to keep them in." }
                " A revoked grant is asked for again at the plugin's next reach; a call already allowed keeps it until it ends."
            }
            @if remembered.is_empty() {
                p.empty { "None." }
            } @else {
                table.remembered {
                    thead { tr { th { "plugin" } th { "grant" } th { "by" } th { "when" } th {} } }
                    tbody { @for g in shown {
                        tr {
                            td { a href={"/console/plugins/" (g.plugin)} { (g.plugin) } }
                            td { (g.kind) " " code { (g.grant) } }
                            td { (g.by) }
                            td { (g.at) }
                            td {
                                form.inline method="post" action="/console/grants/revoke" {
                                    (csrf(&ctx))
                                    input type="hidden" name="plugin" value=(g.plugin);
                                    input type="hidden" name="grant" value=(g.grant);
                                    button.danger { "Revoke" }
                                }
                            }
                        }
                    } }
                }
                (links)
            }
        }
    };
    frame(&ctx, "Grants", "grants", body)
}
