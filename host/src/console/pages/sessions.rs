//! Sessions: every initialize-based session open now, its client and its scope.

use axum::extract::Query;
use axum::response::Response;
use maud::html;

use super::{Ctx, Paging, ago, frame, time};

pub(in crate::console) async fn page(ctx: Ctx, Query(paging): Query<Paging>) -> Response {
    let sessions = ctx.console.server.sessions.list();
    let (shown, links) = paging.of(&sessions, "/console/sessions");
    let body = html! {
        h1 { "Sessions" }
        p.hint { "Sessions of the initialize-based revisions; a stateless request (2026-07-28) is one request and is not listed." }
        @if sessions.is_empty() {
            p.empty { "No session is open." }
        } @else {
            table.sessions {
                thead { tr { th { "#" } th { "started" } th { "transport" } th { "client" } th { "scope" } th { "says it is" } th { "revision" } th { "requests in flight" } } }
                tbody { @for s in shown {
                    tr {
                        td.num { (s.number) }
                        td title=(time(s.started)) { (ago(s.started)) }
                        td { (s.transport) }
                        td { (s.client) }
                        td { (s.scope) }
                        td { @match &s.client_info {
                            Some((name, version)) => span.plugin-text title="as the client named itself" { (name) " " (version) },
                            None => "—",
                        } }
                        td { (s.version.unwrap_or("not initialized")) }
                        td.num { (s.in_flight) }
                    }
                } }
            }
            (links)
        }
    };
    frame(&ctx, "Sessions", "sessions calls", body)
}
