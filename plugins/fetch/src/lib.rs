//! `fetch`: a web page from a host the plugin is granted, as Markdown, read in windows.
//!
//! Long pages come in pieces: each answer says where the next one starts (`start_index`), so a
//! model reads on only when it needs to.

use palisade_sdk::http;
use palisade_sdk::{Tool, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;

/// The most of a page downloaded, whatever part of it is asked for.
const MAX_DOWNLOAD: usize = 5 << 20;
/// The most characters one answer returns unless asked for fewer.
const DEFAULT_MAX_LENGTH: usize = 5000;
/// The most characters one answer may return.
const MAX_LENGTH: usize = 100_000;

/// Arguments of `fetch`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Fetch {
    /// The URL to fetch (http:// or https://). Its host must be granted to the plugin.
    url: String,
    /// The most characters to return (default 5000, at most 100000).
    #[serde(default = "default_max_length")]
    #[schemars(range(min = 1, max = 100_000))]
    max_length: usize,
    /// Where to start, in characters: to read on from an answer that was cut short.
    #[serde(default)]
    start_index: usize,
    /// Return the page as the server sent it, without turning HTML into Markdown.
    #[serde(default)]
    raw: bool,
}

fn default_max_length() -> usize {
    DEFAULT_MAX_LENGTH
}

fn fetch(args: Fetch) -> Result<ToolResult, String> {
    if args.max_length == 0 || args.max_length > MAX_LENGTH {
        return Err(format!("max_length must be from 1 to {MAX_LENGTH}"));
    }
    let response = http::get(&args.url)
        .header("user-agent", "palisade-fetch/0.1 (an MCP tool)")
        .header(
            "accept",
            "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5",
        )
        .max_body(MAX_DOWNLOAD)
        .send()?
        .error_for_status()?;
    let content_type = response
        .header("content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    if !is_text(&content_type) {
        return Err(format!(
            "{} is {content_type}, not text: fetch returns pages and text documents",
            args.url
        ));
    }
    let final_url = response.url().to_string();
    let body = response.text()?;
    let page = if !args.raw && is_html(&content_type, &body) {
        to_markdown(&body)?
    } else {
        body
    };
    window(&final_url, &page, args.start_index, args.max_length)
}

fn is_text(content_type: &str) -> bool {
    content_type.is_empty()
        || content_type.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml"]
            .iter()
            .any(|kind| content_type.contains(kind))
}

fn is_html(content_type: &str, body: &str) -> bool {
    if content_type.contains("html") {
        return true;
    }
    let start = body
        .trim_start()
        .get(..15)
        .unwrap_or("")
        .to_ascii_lowercase();
    content_type.is_empty() && (start.starts_with("<!doctype html") || start.starts_with("<html"))
}

fn to_markdown(html: &str) -> Result<String, String> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["script", "style", "noscript", "iframe", "svg", "head"])
        .build();
    converter
        .convert(html)
        .map_err(|e| format!("cannot read the page as HTML: {e}"))
}

/// `max_length` characters of `page` from `start`, and where to read on when there is more.
fn window(url: &str, page: &str, start: usize, max_length: usize) -> Result<ToolResult, String> {
    let total = page.chars().count();
    if start > 0 && start >= total {
        return Err(format!(
            "start_index {start} is past the end of {url} ({total} characters)"
        ));
    }
    let piece: String = page.chars().skip(start).take(max_length).collect();
    let end = start + piece.chars().count();
    let mut text = format!("Contents of {url}:\n\n{piece}");
    if end < total {
        text.push_str(&format!(
            "\n\n[Cut short: {} of {total} characters remain. Call fetch with start_index = {end} \
             to read on.]",
            total - end
        ));
    }
    Ok(
        ToolResult::text(text).structured_content(serde_json::json!({
            "url": url,
            "start_index": start,
            "next_index": (end < total).then_some(end),
            "total_length": total,
        })),
    )
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("fetch", fetch)
            .description(
                "Fetch a web page or text document and return it as Markdown. Long pages come in \
                 pieces: call again with start_index to read on.",
            )
            .read_only(true)
            .open_world(true),
    ],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_recognised_by_type_or_by_its_start() {
        assert!(is_html("text/html; charset=utf-8", ""));
        assert!(is_html("", "  <!DOCTYPE html><p>x"));
        assert!(!is_html("text/plain", "<html>"));
        assert!(is_text("application/json"));
        assert!(!is_text("image/png"));
    }
}
