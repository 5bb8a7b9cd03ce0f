//! Reading results, and files for tests.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::*;

// ---------------------------------------------------------------------------
// Reading results
// ---------------------------------------------------------------------------

/// The text of every `text` content item of a `CallToolResult`, joined by newlines.
pub fn tool_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|c| c["type"] == "text")
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Whether a `CallToolResult` reports a tool error (`isError: true`).
pub fn is_tool_error(result: &Value) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
}

/// Asserts a successful tool result and returns its text.
#[track_caller]
pub fn ok_text(result: &Value) -> String {
    assert!(
        !is_tool_error(result),
        "expected a successful tool result, got {result}"
    );
    tool_text(result)
}

/// Asserts a tool error (`isError: true`) whose text contains `needle`; returns the text.
#[track_caller]
pub fn error_text(result: &Value, needle: &str) -> String {
    assert!(
        is_tool_error(result),
        "expected isError: true (text containing {needle:?}), got {result}"
    );
    let text = tool_text(result);
    assert!(
        text.to_lowercase().contains(&needle.to_lowercase()),
        "tool error text should contain {needle:?}: {text:?}"
    );
    text
}

/// The error code of an error response, if it is one.
pub fn error_code(resp: &Value) -> Option<i64> {
    resp.get("error")?.get("code")?.as_i64()
}

/// The names of a list of tools, in order.
pub fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

// ---------------------------------------------------------------------------
// Files for tests
// ---------------------------------------------------------------------------

/// Writes `body` to `<dir>/palisade.toml` and returns its path.
pub fn config_file(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("palisade.toml");
    write_file(&path, body);
    path
}

/// The SHA-256 of `text` in hex, as `[[auth.tokens]] sha256` takes a token.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// The configuration sections of `hello` and of `notes` serving the example notes
/// (`plugins/notes/example`, read-only at `/notes`): fast plugins with tools, resources, a
/// template and completion, for tests that need a few of each.
pub fn hello_and_notes_sections() -> String {
    let notes = repo_root().join("plugins/notes/example");
    format!(
        r#"[plugins.hello]
path = {hello}

[plugins.notes]
path = {notes_wasm}

[[plugins.notes.dirs]]
host = {notes}
guest = "/notes"
"#,
        hello = toml_str(&plugin_arg("hello")),
        notes_wasm = toml_str(&plugin_arg("notes")),
        notes = toml_str(&path_str(&notes)),
    )
}

/// Copies the plugin `name` to `dest` (creating directories); returns `dest`.
pub fn copy_plugin(name: &str, dest: impl AsRef<Path>) -> PathBuf {
    let dest = dest.as_ref().to_path_buf();
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::copy(plugin_path(name), &dest).unwrap();
    dest
}
