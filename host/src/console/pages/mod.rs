//! The console's pages, rendered on the server: one file per page, and here what they share
//! (the frame, the login page, how times, durations and pages of a list are shown). Every
//! value is spliced in with maud, which escapes it; nothing a plugin or a client wrote is ever
//! put in a page unescaped, and a plugin's words are always marked as the plugin's.

pub(super) mod calls;
pub(super) mod grants;
pub(super) mod overview;
pub(super) mod plugin;
pub(super) mod sessions;

use std::time::{Duration, SystemTime};

use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;

use super::Ctx;
use crate::telemetry::activity::CallRecord;

/// Items per page of a list.
pub(super) const PER_PAGE: usize = 50;

/// Which page of a list: `?page=N`, from 1.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Paging {
    page: Option<usize>,
}

impl Paging {
    /// The items of `all` on this page, and the links to the others.
    pub(super) fn of<'a, T>(&self, all: &'a [T], path: &str) -> (&'a [T], Markup) {
        let pages = all.len().div_ceil(PER_PAGE).max(1);
        let page = self.page.unwrap_or(1).clamp(1, pages);
        let start = (page - 1) * PER_PAGE;
        let items = &all[start.min(all.len())..(start + PER_PAGE).min(all.len())];
        let links = html! {
            @if pages > 1 {
                nav.paging {
                    @if page > 1 { a href={(path) "?page=" (page - 1)} { "← newer" } " " }
                    span { "page " (page) " of " (pages) " (" (all.len()) ")" }
                    @if page < pages { " " a href={(path) "?page=" (page + 1)} { "older →" } }
                }
            }
        };
        (items, links)
    }
}

/// A page: the whole document, or only its `<main>` for a live refresh. `topics`: what changing
/// makes it refresh (`calls`, `plugins`, `grants`, `sessions`, `tasks`, `tick`).
pub(super) fn frame(ctx: &Ctx, title: &str, topics: &str, body: Markup) -> Response {
    let said = if ctx.part { None } else { ctx.take_said() };
    let main = html! {
        @if let Some(said) = said { p.said role="status" { (said) } }
        (body)
    };
    if ctx.part {
        return Html(main.into_string()).into_response();
    }
    let waiting = ctx.console.server.grant_questions.waiting().len();
    let csrf = ctx.operator.csrf.as_deref().unwrap_or("");
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                (head(title, true))
                body {
                    header {
                        a.brand href="/console" { "Palisade" }
                        nav {
                            a href="/console" { "Overview" }
                            a href="/console/grants" {
                                "Grants"
                                @if waiting > 0 { " " span.badge title="questions waiting" { (waiting) } }
                            }
                            a href="/console/calls" { "Calls & tasks" }
                            a href="/console/sessions" { "Sessions" }
                        }
                        span.live id="live" { "live" }
                        span.who { "operator " b { (ctx.operator.name) } }
                        @if ctx.operator.login.is_some() {
                            form.inline method="post" action="/console/logout" {
                                input type="hidden" name="csrf" value=(csrf);
                                button { "Log out" }
                            }
                        }
                    }
                    main data-topics=(topics) { (main) }
                }
            }
        }
        .into_string(),
    )
    .into_response()
}

/// Every page's `<head>`: its title, the console's stylesheet and icon, and its script where the
/// page updates live.
fn head(title: &str, live: bool) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · Palisade console" }
            link rel="icon" href="/console/assets/favicon.svg";
            link rel="stylesheet" href="/console/assets/console.css";
            @if live { script src="/console/assets/console.js" defer {} }
        }
    }
}

/// The login page, with why the last attempt failed.
pub(super) fn login(problem: Option<&str>) -> Html<String> {
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                (head("Log in", false))
                body.login {
                    main {
                        h1 { "Palisade console" }
                        @if let Some(problem) = problem { p.problem role="alert" { (problem) } }
                        p { "Paste an operator's token: a token of " code { "[[auth.tokens]]" }
                            " or an OAuth access token, named in " code { "[console] operators" } "." }
                        form method="post" action="/console/login" {
                            label for="token" { "Token" }
                            input id="token" name="token" type="password" autocomplete="off" required;
                            button { "Log in" }
                        }
                        p.hint { "With " code { "palisade serve --console ADDR" } ", open the one-time link the server printed on its standard error." }
                    }
                }
            }
        }
        .into_string(),
    )
}

/// A hidden CSRF field for a form of `ctx`'s login.
pub(super) fn csrf(ctx: &Ctx) -> Markup {
    html! { input type="hidden" name="csrf" value=(ctx.operator.csrf.as_deref().unwrap_or("")); }
}

/// A time, as UTC to the second.
pub(super) fn time(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string()
}

/// How long ago `at` was.
pub(super) fn ago(at: SystemTime) -> String {
    span(SystemTime::now().duration_since(at).unwrap_or_default()) + " ago"
}

/// A duration, in the unit that reads best.
pub(super) fn span(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// A number of bytes, in the unit that reads best.
pub(super) fn bytes(n: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (MIB * 1024.0)),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / MIB),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// The table of `calls` (newest first), with their client, tool, duration, fuel and outcome.
pub(super) fn calls_table(calls: &[std::sync::Arc<CallRecord>], with_plugin: bool) -> Markup {
    html! {
        @if calls.is_empty() {
            p.empty { "No calls yet." }
        } @else {
            table.calls {
                thead { tr {
                    th { "ended" } th { "client" }
                    @if with_plugin { th { "plugin" } }
                    th { "tool" } th { "duration" } th { "fuel" } th { "outcome" } th { "arguments" }
                } }
                tbody {
                    @for call in calls {
                        tr class=(if call.failed() { "failed" } else { "ok" }) {
                            td title=(time(call.at)) { (ago(call.at)) }
                            td { (call.client) }
                            @if with_plugin {
                                td { @match &call.plugin {
                                    Some(p) => a href={"/console/plugins/" (p)} { (p) },
                                    None => "—",
                                } }
                            }
                            td { (call.tool) }
                            td.num { (span(call.duration)) }
                            td.num { (call.fuel) }
                            td {
                                span.outcome { (call.outcome) }
                                @if let Some(limit) = call.limit { " (" (limit) ")" }
                                @if let Some(detail) = &call.detail {
                                    // A tool error is the plugin's own message: said as its.
                                    @if call.outcome == "tool-error" {
                                        div.detail { "the plugin said: " span.plugin-text { (detail) } }
                                    } @else {
                                        div.detail { (detail) }
                                    }
                                }
                            }
                            td.args { @match &call.arguments {
                                Some(a) => code { (a) },
                                None => span.hint title="arguments are shown as [audit] arguments writes them; no audit log is configured" { "not kept" },
                            } }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spliced_text_is_escaped() {
        let hostile = "<script>alert(1)</script>\"'&";
        let out = html! { td title=(hostile) { (hostile) } }.into_string();
        assert!(!out.contains("<script>"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(!out.contains("\"'&\""), "{out}");
    }

    #[test]
    fn pages_of_a_list() {
        let all: Vec<usize> = (0..120).collect();
        let (items, links) = Paging { page: Some(3) }.of(&all, "/x");
        assert_eq!(items, &all[100..]);
        assert!(links.into_string().contains("page 3 of 3"));
        let (items, _) = Paging { page: Some(99) }.of(&all, "/x");
        assert_eq!(items.len(), 20, "past the end: the last page");
        let (items, links) = Paging::default().of(&all[..3], "/x");
        assert_eq!(items.len(), 3);
        assert!(links.into_string().is_empty());
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(span(Duration::from_micros(176)), "176 µs");
        assert_eq!(span(Duration::from_millis(12)), "12.0 ms");
        assert_eq!(span(Duration::from_secs(3)), "3.0 s");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
    }
}
