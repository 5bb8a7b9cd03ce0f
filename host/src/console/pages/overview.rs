//! The overview: the server's own figures, its charts over the last hour, and every plugin with
//! its state and figures.

use std::sync::Arc;
use std::time::Duration;

use axum::response::Response;
use maud::{Markup, html};

use super::{Ctx, bytes, frame, span};
use crate::console::charts;
use crate::mcp::Server;
use crate::transport::health::{PluginState, plugin_states};

/// How long the overview waits for the cluster's replicas before it shows without them.
const REPLICAS_WAIT: Duration = Duration::from_millis(500);

/// A plugin's state as the console says it.
pub(super) struct State {
    /// `ready`, `loading`, `failed`, `reloading`.
    pub label: &'static str,
    /// What to say beside it: the failure, the compile's progress.
    pub note: Option<String>,
}

/// What `plugin`'s state is.
pub(super) fn state_of(server: &Server, plugin: &str, state: PluginState) -> State {
    let note = server.loading.note(plugin);
    match state {
        _ if note.reloading => State {
            label: "reloading",
            note: note
                .compiled
                .map(|f| format!("compiling {:.0}%", f * 100.0)),
        },
        PluginState::Loading => State {
            label: "loading",
            note: Some(match note.compiled {
                Some(f) => format!("compiling {:.0}%", f * 100.0),
                None => "starting".into(),
            }),
        },
        PluginState::Ready => State {
            label: "ready",
            note: note
                .failed
                .map(|why| format!("its new version failed: {why}")),
        },
        PluginState::Failed => State {
            label: "failed",
            note: Some(
                note.failed
                    .unwrap_or_else(|| "not loaded (see the server's log)".into()),
            ),
        },
    }
}

pub(in crate::console) async fn page(ctx: Ctx) -> Response {
    let server = &ctx.console.server;
    let catalog = server.catalog();
    let states = plugin_states(server);
    let ready = states
        .iter()
        .filter(|(_, s)| *s == PluginState::Ready)
        .count();
    let replicas = match &ctx.console.cluster {
        Some(cluster) => {
            match tokio::time::timeout(REPLICAS_WAIT, crate::cluster::presence::replicas(cluster))
                .await
            {
                Ok(Ok(list)) => list.len().to_string(),
                _ => "unknown (Redis did not answer)".into(),
            }
        }
        None => "none (no [cluster])".into(),
    };
    let figures: Vec<(String, String)> = vec![
        ("up".into(), span(ctx.console.started.elapsed())),
        (
            "memory".into(),
            crate::memory::resident_bytes()
                .map(bytes)
                .unwrap_or_else(|| "unknown".into()),
        ),
        (
            "plugins".into(),
            format!("{ready} ready of {}", states.len()),
        ),
        ("sessions".into(), server.sessions.len().to_string()),
        (
            "calls running".into(),
            server.calls.list().len().to_string(),
        ),
        (
            "tasks running".into(),
            server.tasks.running().len().to_string(),
        ),
        (
            "grant questions".into(),
            server.grant_questions.waiting().len().to_string(),
        ),
        ("replicas".into(), replicas),
    ];
    let body = html! {
        h1 { "Overview" }
        dl.figures {
            @for (name, value) in &figures { div { dt { (name) } dd { (value) } } }
        }
        h2 { "All plugins, last hour" }
        (charts::charts(&server.activity.figures(None)))
        h2 { "Plugins" }
        (plugins_table(&ctx, &states, &catalog))
    };
    frame(
        &ctx,
        "Overview",
        "plugins calls grants sessions tasks tick",
        body,
    )
}

fn plugins_table(
    ctx: &Ctx,
    states: &[(Arc<str>, PluginState)],
    catalog: &crate::catalog::Catalog,
) -> Markup {
    let server = &ctx.console.server;
    html! {
        @if states.is_empty() {
            p.empty { "No plugins are configured." }
        } @else {
            table.plugins {
                thead { tr {
                    th { "plugin" } th { "state" } th { "tools" } th { "calls (hour)" }
                    th { "errors" } th { "p50" } th { "p99" } th { "limit hits" }
                } }
                tbody {
                    @for (name, state) in states {
                        @let shown = state_of(server, name, *state);
                        @let figures = server.activity.figures(Some(name));
                        @let (calls, errors, limits) = figures.totals();
                        @let last = figures.minutes.iter().rev().find(|m| m.calls > 0);
                        @let tools = catalog.tools().iter().filter(|t| t.backend.owner() == &**name).count();
                        tr {
                            td { a href={"/console/plugins/" (name)} { (name) } }
                            td {
                                span class={"state " (shown.label)} { (shown.label) }
                                @if let Some(note) = &shown.note { div.detail { (note) } }
                            }
                            td.num { (tools) }
                            td.num { (calls) }
                            td.num { (errors) }
                            td.num { (last.and_then(|m| m.p50).map(span).unwrap_or_else(|| "—".into())) }
                            td.num { (last.and_then(|m| m.p99).map(span).unwrap_or_else(|| "—".into())) }
                            td.num { (limits.iter().sum::<u64>()) }
                        }
                    }
                }
            }
        }
    }
}
