//! A plugin's page: where it came from, what it was granted beside what it imports and what it
//! used, its tools, its limits, its figures, its recent calls and its log.

use axum::extract::{Path, Query};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::{Ctx, Paging, ago, bytes, calls_table, frame, time};
use crate::console::charts;
use crate::runtime::{AccessMode, Plugin, RootsAccess};
use crate::telemetry::log_tail::{self, Speaker};
use crate::transport::health::plugin_states;

pub(in crate::console) async fn page(
    ctx: Ctx,
    Path(name): Path<String>,
    Query(paging): Query<Paging>,
) -> Response {
    let server = &ctx.console.server;
    let Some((name, state)) = plugin_states(server)
        .into_iter()
        .find(|(n, _)| **n == *name)
    else {
        return (
            axum::http::StatusCode::NOT_FOUND,
            frame(&ctx, "No such plugin", "", html! {
                h1 { "No such plugin" }
                p { "The configuration names no plugin " code { (name) } ". " a href="/console" { "Back to the overview" } }
            }),
        )
            .into_response();
    };
    let catalog = server.catalog();
    let state = super::overview::state_of(server, &name, state);
    let plugin = catalog.plugin(&name);
    let recent = server.activity.recent(Some(&name));
    let (calls, paging_links) = paging.of(&recent, &format!("/console/plugins/{name}"));
    let remembered: Vec<_> = (server.grant_questions.remembered().into_iter())
        .filter(|g| *g.plugin == *name)
        .collect();
    let body = html! {
        h1 { "Plugin " code { (name) } " " span class={"state " (state.label)} { (state.label) } }
        @if let Some(note) = &state.note { p.detail { (note) } }
        @match plugin {
            None => p.empty { "It is not served, so there is nothing more to show than the above." },
            Some(plugin) => {
                section {
                    h2 { "Where it came from" }
                    (provenance(catalog.provenance(&name)))
                }
                section.side-by-side {
                    div { h2 { "Granted" } (grants(plugin)) }
                    div { h2 { "Imports" } (imports(plugin)) }
                    div { h2 { "Used" } (used(plugin)) }
                    div {
                        h2 { "Granted while running" }
                        @if remembered.is_empty() {
                            p.empty { "Nothing: no question was answered \"always\"." }
                        } @else {
                            ul { @for g in &remembered {
                                li { (g.kind) " " code { (g.grant) } " by " (g.by) " at " (g.at) }
                            } }
                            p { a href="/console/grants" { "Revoke on the grants page" } }
                        }
                    }
                }
                section {
                    h2 { "Limits" }
                    (limits(plugin))
                }
                section {
                    h2 { "Tools" }
                    (tools(&catalog, &name))
                }
            }
        }
        section {
            h2 { "Last hour" }
            (charts::charts(&server.activity.figures(Some(&name))))
        }
        section {
            h2 { "Recent calls" }
            (calls_table(calls, false))
            (paging_links)
        }
        section {
            h2 { "Log" }
            (log(&name))
        }
    };
    frame(&ctx, &format!("Plugin {name}"), "plugins calls tick", body)
}

fn provenance(provenance: Option<&crate::catalog::Provenance>) -> Markup {
    let Some(p) = provenance else {
        return html! { p.empty { "Not known." } };
    };
    html! {
        dl.facts {
            dt { "file" } dd { code { (p.path.display()) } }
            dt { "source" } dd { @match &p.source { Some(s) => code { (s) }, None => "a local file" } }
            dt { "sha256" } dd { code { (p.sha256) } }
            @if let Some(digest) = &p.digest { dt { "manifest digest" } dd { code { (digest) } } }
            dt { "signed by" } dd { @match &p.signed_by { Some(s) => (s), None => "no signature recorded" } }
            @if let Some(required) = &p.signer_required { dt { "signature required" } dd { (required) } }
            dt { "lock" } dd { @if p.source.is_some() { "pinned in palisade.lock" } @else { "not locked (a local file)" } }
            dt { "public names" } dd { @if p.prefix.is_empty() { "as the plugin names them" } @else { code { (p.prefix) "_…" } } }
        }
    }
}

/// What the configuration grants, by name only: values of variables, configuration and
/// secrets are never shown.
fn grants(plugin: &Plugin) -> Markup {
    let spec = &plugin.spec;
    let mode = |m: &AccessMode| match m {
        AccessMode::ReadOnly => "read-only",
        AccessMode::ReadWrite => "read-write",
    };
    html! {
        ul.grants {
            li { "roots: " (match spec.roots {
                RootsAccess::None => "none",
                RootsAccess::ReadOnly => "the client's roots, read-only",
                RootsAccess::ReadWrite => "the client's roots, read-write",
            }) }
            @for dir in &spec.dirs {
                li { "directory " code { (dir.host.display()) } " at " code { (dir.guest) } ", " (mode(&dir.mode)) }
            }
            @for host in &spec.network { li { "network " code { (host.text) } } }
            @for (name, _) in &spec.env { li { "environment variable " code { (name) } } }
            @for (key, _) in &spec.config { li { "configuration key " code { (key) } } }
            @for secret in &spec.secrets { li { "secret " code { (secret.name) } " (value hidden)" } }
            @if let Some(kv) = &spec.keyvalue { li { "key-value store, at most " (bytes(kv.max_bytes)) } }
            @if spec.http_handler { li { "served as an HTTP handler (the tool " code { "request" } ")" } }
            li { @if spec.ask { "asks for what it was not granted (ask = true)" } @else { "never asks: what is not granted is refused" } }
        }
    }
}

fn imports(plugin: &Plugin) -> Markup {
    let imports = plugin.imports();
    html! {
        @if imports.is_empty() {
            p.empty { "None: it can reach nothing outside itself." }
        } @else {
            table.imports {
                tbody { @for (name, status) in &imports {
                    tr { td { code { (name) } } td { (status) } }
                } }
            }
        }
    }
}

/// What the plugin used of what it may reach, since it was loaded.
fn used(plugin: &Plugin) -> Markup {
    let uses = plugin.usage().list();
    html! {
        @if uses.is_empty() {
            p.empty { "Nothing yet: no host, variable, configuration key, secret or store used." }
        } @else {
            ul.grants { @for (what, used) in &uses {
                li { code { (what) } " × " (used.count) span.detail { " last " (ago(used.last)) } }
            } }
        }
        p.hint { "Since it was loaded. Files in its directories are not counted: they are opened through WASI." }
    }
}

fn limits(plugin: &Plugin) -> Markup {
    let l = &plugin.spec.limits;
    let budget = plugin.budget();
    let rows: [(&str, String); 12] = [
        ("fuel per call", l.fuel_per_call.to_string()),
        (
            "fuel per second (budget)",
            format!("{} (holds {})", l.fuel_per_second, l.fuel_burst),
        ),
        (
            "time per call",
            super::span(std::time::Duration::from_millis(l.timeout_ms)),
        ),
        ("memory per instance", bytes(l.memory_bytes)),
        ("output per call", bytes(l.output_bytes)),
        (
            "calls per minute",
            format!(
                "{} ({} per client)",
                l.calls_per_minute, l.calls_per_minute_per_client
            ),
        ),
        ("calls at once", l.concurrent_calls.to_string()),
        ("cores", l.cores.to_string()),
        ("questions per call", l.questions_per_call.to_string()),
        (
            "time per task",
            super::span(std::time::Duration::from_millis(l.task_timeout_ms)),
        ),
        ("fuel per task", l.task_fuel.to_string()),
        ("tasks at once", l.running_tasks.to_string()),
    ];
    html! {
        dl.facts { @for (name, value) in &rows { dt { (name) } dd { (value) } } }
        h3 { "Now" }
        dl.facts {
            dt { "calls running" } dd { (budget.running) " of " (l.concurrent_calls) }
            dt { "calls it may start" } dd { (budget.calls_left.floor().max(0.0)) " (refills at " (l.calls_per_minute) " a minute)" }
            dt { "fuel budget" } dd {
                (format!("{:.0}", budget.fuel_left)) " of " (l.fuel_burst)
                @if budget.fuel_left < 0.0 { " (in debt: calls wait until it refills)" }
            }
            @if budget.shared { dt { "cluster" } dd { "these limits are counted in Redis across replicas; the figures here are this replica's" } }
        }
    }
}

fn tools(catalog: &crate::catalog::Catalog, plugin: &str) -> Markup {
    let tools: Vec<_> = catalog
        .tools()
        .iter()
        .filter(|t| t.backend.owner() == plugin)
        .collect();
    html! {
        @if tools.is_empty() {
            p.empty { "No tools." }
        } @else {
            @for tool in tools {
                details.tool {
                    summary {
                        code { (tool.public_name) }
                        @if let Some(d) = &tool.tool.description { " — " span.plugin-text { (d) } }
                    }
                    p.hint { "Described by the plugin:" }
                    pre.schema { (tool.tool.input_schema) }
                    @if let Some(output) = &tool.tool.output_schema {
                        p.hint { "Output schema:" }
                        pre.schema { (output) }
                    }
                }
            }
        }
    }
}

fn log(plugin: &str) -> Markup {
    let lines = log_tail::tail().lines(plugin);
    html! {
        @if lines.is_empty() {
            p.empty { "Nothing logged yet (lines at info and above are kept)." }
        } @else {
            table.log {
                thead { tr { th { "when" } th { "level" } th { "who" } th { "line" } } }
                tbody { @for line in &lines {
                    tr class=(match line.speaker { Speaker::Plugin => "plugin-line", Speaker::Host => "host-line" }) {
                        td title=(time(line.at)) { (ago(line.at)) }
                        td { (line.level.as_str().to_lowercase()) }
                        td { @match line.speaker {
                            Speaker::Plugin => { "the plugin" @if let Some(s) = &line.stream { " (" (s) ")" } },
                            Speaker::Host => "Palisade",
                        } }
                        td { code { (line.text) } }
                    }
                } }
            }
        }
    }
}
