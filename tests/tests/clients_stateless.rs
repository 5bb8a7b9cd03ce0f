//! Real clients of MCP 2026-07-28 (the stateless revision) against the real binary serving the
//! conformance fixtures: the official Python SDK's `mcp.Client` (tests/clients/python_stateless.py,
//! which asserts each step and prints a summary) and the MCP Inspector's CLI with
//! `--protocol-era modern`, each over stdio and over Streamable HTTP.

use palisade_tests::*;
use serde_json::{Value, json};

fn conformance_toml() -> String {
    path_str(&repo_root().join("plugins/fixtures/conformance/palisade.toml"))
}

/// Proves: the official Python SDK, left to choose (`mode="auto"`), negotiates 2026-07-28 over
/// stdio and uses everything statelessly: input round trips answered by its callbacks (one
/// question, two rounds, three kinds at once, a prompt's), a mirrored header, a resource, progress,
/// and a `subscriptions/listen` stream that sees a tool list change.
#[test]
fn official_python_sdk_speaks_2026_07_28_over_stdio() {
    let cache = shared_cache_dir();
    let palisade = path_str(&palisade_bin());
    let config = conformance_toml();
    let cache_dir = path_str(cache.as_path());
    let summary = run_python_stateless(&["stdio", &palisade, &config, &cache_dir], &|| {
        "(the server ran as the client's subprocess)".to_string()
    });
    check_python_stateless_summary(&summary, true);
}

/// Proves: the same over Streamable HTTP, where `Mcp-Param-Region` mirrors the argument (in Base64
/// for `Zürich`) and the listen stream is a held-open SSE response.
#[test]
fn official_python_sdk_speaks_2026_07_28_over_http() {
    // Live reload on: the tool list change of the listen check is relisted.
    let server = HttpServer::start(&["--config", &conformance_toml()]);
    let summary = run_python_stateless(&["http", &server.url], &|| server.stderr());
    check_python_stateless_summary(&summary, true);
}

/// Runs the Inspector's CLI in its stateless era (`--protocol-era modern`) with `target` (a URL,
/// or nothing for stdio) and `method_args`, and for stdio the server command after `--`; returns
/// its JSON output.
fn inspector_stateless(
    target: Option<&str>,
    method_args: &[&str],
    stdio_server: &[String],
) -> Value {
    let mut cmd = inspector_command();
    cmd.arg("--cli");
    // The target first: --tool-arg takes every value after it.
    if let Some(url) = target {
        cmd.arg(url);
    }
    cmd.args(["--protocol-era", "modern"]).args(method_args);
    if !stdio_server.is_empty() {
        cmd.arg("--").args(stdio_server);
    }
    let out = run_command(&mut cmd, secs(240));
    assert!(
        out.success(),
        "the Inspector failed (exit code 5 means an isError result):\n{out}"
    );
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("the Inspector did not print JSON ({e}):\n{out}"))
}

/// The Inspector's checks, against one way of reaching the server.
fn inspector_lists_and_calls(target: Option<&str>, stdio_server: &[String]) {
    let listed = inspector_stateless(target, &["--method", "tools/list"], stdio_server);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tools array: {listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for fixture in ["test_simple_text", "test_custom_header"] {
        assert!(names.contains(&fixture), "{fixture} in {names:?}");
    }
    let called = inspector_stateless(
        target,
        &["--method", "tools/call", "--tool-name", "test_simple_text"],
        stdio_server,
    );
    assert_eq!(
        called["content"][0]["text"], "This is a simple text response for testing.",
        "{called}"
    );
    assert_ne!(called["isError"], json!(true), "{called}");
    let called = inspector_stateless(
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "test_custom_header",
            "--tool-arg",
            "region=eu-west1",
        ],
        stdio_server,
    );
    assert_eq!(called["content"][0]["text"], "Region: eu-west1", "{called}");
}

/// Proves: the MCP Inspector's CLI in its stateless era (`--protocol-era modern`, which discovers,
/// opens `subscriptions/listen` and waits for its acknowledgment before anything else, then lists
/// before calling and mirrors `x-mcp-header` parameters) lists and calls tools over Streamable
/// HTTP.
#[test]
fn mcp_inspector_cli_stateless_over_http() {
    let server = HttpServer::start(&["--config", &conformance_toml()]);
    inspector_lists_and_calls(Some(&server.url), &[]);
}

/// Proves: the same over stdio, the Inspector starting the server itself.
#[test]
fn mcp_inspector_cli_stateless_over_stdio() {
    let cache = shared_cache_dir();
    let server = vec![
        path_str(&palisade_bin()),
        "serve".to_string(),
        "--config".to_string(),
        conformance_toml(),
        "--cache-dir".to_string(),
        path_str(cache.as_path()),
    ];
    inspector_lists_and_calls(None, &server);
}
