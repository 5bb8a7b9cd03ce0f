//! Instances between calls. Fresh ones are built ahead of the calls that take them
//! (`ready_instances`) and are still fresh; with `reuse = "per-client"` an instance serves later
//! calls of the same client, and only while nothing says it should not. misbehave's `leftovers`
//! tells: "clean" from a fresh instance, "dirty" from one an earlier call marked.

use palisade_tests::*;
use serde_json::{Value, json};
use tempfile::TempDir;

/// misbehave with `settings` in its section.
fn config(dir: &TempDir, settings: &str, tail: &str) -> std::path::PathBuf {
    config_file(
        dir.path(),
        &format!(
            "[plugins.misbehave]\npath = {}\n{settings}\n\n{tail}",
            toml_str(&plugin_arg("misbehave"))
        ),
    )
}

fn stdio_server(dir: &TempDir, settings: &str) -> Server {
    server_with(dir, settings, "")
}

/// misbehave with `settings`, and `tail` (other sections) in the file, over stdio.
fn server_with(dir: &TempDir, settings: &str, tail: &str) -> Server {
    let config = config(dir, settings, tail);
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    s
}

fn leftovers(s: &mut Server) -> String {
    ok_text(&s.call_tool("misbehave_leftovers", json!({})))
}

#[test]
fn without_reuse_every_call_starts_clean() {
    let dir = tempdir();
    let mut s = stdio_server(&dir, "");
    for _ in 0..3 {
        assert_eq!(leftovers(&mut s), "clean");
    }
}

/// Where each audited call's instance came from, in order, once `calls` calls are written.
fn instance_sources(dir: &TempDir, calls: usize) -> Vec<String> {
    let audit = dir.path().join("audit.jsonl");
    poll_until(
        secs(10),
        || {
            std::fs::read_to_string(&audit)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|l| l["instance"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        },
        |sources| sources.len() >= calls,
    )
}

fn audited_server(dir: &TempDir, settings: &str) -> Server {
    server_with(dir, settings, "[audit]\npath = \"audit.jsonl\"\n")
}

#[test]
fn fresh_instances_are_built_ahead_and_each_starts_clean() {
    let dir = tempdir();
    let mut s = audited_server(&dir, "");
    // The first call finds none ready; the next ones take those built since, each clean
    // although the call before marked its own.
    for _ in 0..12 {
        assert_eq!(leftovers(&mut s), "clean");
    }
    let sources = instance_sources(&dir, 12);
    assert_eq!(sources[0], "new", "{sources:?}");
    assert!(
        sources.iter().any(|s| s == "built-ahead"),
        "no call took an instance built ahead: {sources:?}"
    );
    assert!(sources.iter().all(|s| s == "new" || s == "built-ahead"));
    // A call that fails is followed by a clean one too.
    error_text(&s.call_tool("misbehave_panic", json!({})), "panicked");
    assert_eq!(leftovers(&mut s), "clean");
}

#[test]
fn with_ready_instances_0_every_instance_is_made_by_its_call() {
    let dir = tempdir();
    let mut s = audited_server(&dir, "ready_instances = 0");
    for _ in 0..6 {
        assert_eq!(leftovers(&mut s), "clean");
    }
    assert_eq!(instance_sources(&dir, 6), vec!["new"; 6]);
}

#[test]
fn a_client_gets_its_own_instance_back() {
    let dir = tempdir();
    let mut s = stdio_server(&dir, "reuse = \"per-client\"");
    assert_eq!(leftovers(&mut s), "clean");
    for _ in 0..3 {
        assert!(leftovers(&mut s).starts_with("dirty"));
    }
    // Memory the plugin keeps stays from call to call.
    assert_eq!(
        ok_text(&s.call_tool("misbehave_hold", json!({"mib": 1}))),
        "holding 1 MiB"
    );
    assert_eq!(
        ok_text(&s.call_tool("misbehave_hold", json!({"mib": 1}))),
        "holding 2 MiB"
    );
}

#[test]
fn an_instance_serves_reuse_calls_then_is_replaced() {
    let dir = tempdir();
    let mut s = stdio_server(&dir, "reuse = \"per-client\"\nreuse_calls = 3");
    let seen: Vec<bool> = (0..7)
        .map(|_| leftovers(&mut s).starts_with("dirty"))
        .collect();
    assert_eq!(
        seen,
        [false, true, true, false, true, true, false],
        "3 calls per instance"
    );
}

#[test]
fn an_instance_grown_past_its_memory_bound_is_replaced() {
    let dir = tempdir();
    let mut s = stdio_server(&dir, "reuse = \"per-client\"\nreuse_memory_mib = 16");
    assert_eq!(leftovers(&mut s), "clean");
    assert!(leftovers(&mut s).starts_with("dirty"));
    // Within the plugin's memory limit (128 MiB), past the bound for keeping it.
    ok_text(&s.call_tool("misbehave_hold", json!({"mib": 24})));
    assert_eq!(leftovers(&mut s), "clean");
    assert_eq!(
        ok_text(&s.call_tool("misbehave_hold", json!({"mib": 1}))),
        "holding 1 MiB",
        "the 24 MiB went with the instance"
    );
}

#[test]
fn a_call_that_fails_leaves_its_instance_behind() {
    let dir = tempdir();
    let mut s = stdio_server(
        &dir,
        "reuse = \"per-client\"\n[plugins.misbehave.limits]\nfuel_per_call = 100000000",
    );
    assert_eq!(leftovers(&mut s), "clean");
    assert!(leftovers(&mut s).starts_with("dirty"));
    // A panic traps: the instance may be stopped anywhere, so it is not used again.
    error_text(&s.call_tool("misbehave_panic", json!({})), "panicked");
    assert_eq!(leftovers(&mut s), "clean");
    // So does a limit.
    error_text(&s.call_tool("misbehave_spin", json!({})), "fuel");
    assert_eq!(leftovers(&mut s), "clean");
    assert!(leftovers(&mut s).starts_with("dirty"));
}

#[test]
fn the_call_ends_for_the_client_although_its_instance_is_kept() {
    // The call's events (progress reports) stop with it: a kept instance must not keep the
    // request open.
    let dir = tempdir();
    let mut s = stdio_server(&dir, "reuse = \"per-client\"");
    assert_eq!(leftovers(&mut s), "clean");
    for token in 0..3 {
        let id = s.send_request(
            "tools/call",
            json!({"name": "misbehave_progress", "arguments": {"steps": 20},
                   "_meta": {"progressToken": token}}),
        );
        let response = s.wait_response(&id, std::time::Duration::from_secs(60));
        assert!(!is_tool_error(&response["result"]), "{response}");
    }
    assert!(leftovers(&mut s).starts_with("dirty"));
}

/// Three HTTP sessions: two anonymous (each its own client), and two with the same token (one
/// client).
#[test]
fn instances_are_never_shared_across_clients() {
    let dir = tempdir();
    let token = "reuse-test-token-0123456789abcdef";
    let auth =
        "[[auth.tokens]]\nname = \"team\"\nenv = \"PALISADE_TEST_REUSE_TOKEN\"\nscope = \"all\"\n";
    let open = config(&dir, "reuse = \"per-client\"", "");
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&open)]);
    let call = |client: &mut HttpClient| -> String {
        ok_text(&client.call_tool("misbehave_leftovers", json!({})))
    };
    let mut a = server.client();
    a.initialize(LATEST_VERSION);
    let mut b = server.client();
    b.initialize(LATEST_VERSION);
    assert_eq!(call(&mut a), "clean");
    assert!(call(&mut a).starts_with("dirty"));
    assert_eq!(
        call(&mut b),
        "clean",
        "another anonymous session: not a's instance"
    );
    assert!(call(&mut a).starts_with("dirty"), "a keeps its own");
    drop(server);

    let tokens_dir = tempdir();
    let with_tokens = config(&tokens_dir, "reuse = \"per-client\"", auth);
    let server = HttpServer::start_with(
        Server::builder()
            .args(["--no-watch", "--config", &path_str(&with_tokens)])
            .env("PALISADE_TEST_REUSE_TOKEN", token),
    );
    let session = || {
        let mut client = server.client();
        client
            .headers
            .push(("Authorization".into(), format!("Bearer {token}")));
        client.initialize(LATEST_VERSION);
        client
    };
    let (mut first, mut second) = (session(), session());
    assert_eq!(call(&mut first), "clean");
    assert!(
        call(&mut second).starts_with("dirty"),
        "the same token is the same client"
    );
}

#[test]
fn reuse_settings_are_checked() {
    let dir = tempdir();
    for (settings, expected) in [
        ("reuse = \"sometimes\"", "reuse"),
        (
            "reuse_calls = 10",
            "reuse_calls applies only with reuse = \"per-client\"",
        ),
        (
            "reuse_memory_mib = 10",
            "reuse_memory_mib applies only with reuse = \"per-client\"",
        ),
        ("reuse = \"per-client\"\nreuse_calls = 0", "reuse_calls = 0"),
        (
            "reuse = \"per-client\"\nreuse_memory_mib = 512",
            "reuse_memory_mib is above limits.memory_mib (128 MiB)",
        ),
        (
            "reuse = \"per-client\"\nready_instances = 2",
            "ready_instances applies only to fresh instances",
        ),
        ("ready_instances = 9", "ready_instances is above 8"),
        ("[plugins.misbehave.limits]\ncores = 0", "limits.cores = 0"),
    ] {
        let config = config(&dir, settings, "");
        let out = assert_serve_refused(&["--config", &path_str(&config)], "palisade.toml");
        assert!(out.stderr.contains(expected), "{settings}: {out}");
    }
}

#[test]
fn kept_instances_are_capped() {
    // Kept instances hold pool slots: no more than a quarter of the pool (32) is kept, the
    // least recently used going first, and a plugin without reuse is served beside them.
    let dir = tempdir();
    let tail = format!(
        "[plugins.hello]\npath = {}\n",
        toml_str(&plugin_arg("hello"))
    );
    let config = config(&dir, "reuse = \"per-client\"", &tail);
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let mut clients: Vec<HttpClient> = Vec::new();
    for _ in 0..40 {
        let mut client = server.client();
        client.initialize(LATEST_VERSION);
        assert_eq!(
            ok_text(&client.call_tool("misbehave_leftovers", json!({}))),
            "clean"
        );
        clients.push(client);
    }
    let mut call = |i: usize| ok_text(&clients[i].call_tool("misbehave_leftovers", json!({})));
    assert!(call(39).starts_with("dirty"), "the latest client's is kept");
    assert_eq!(call(0), "clean", "the oldest was dropped past the cap");
    let mut other = server.client();
    other.initialize(LATEST_VERSION);
    let answer: Value = other.call_tool("hello_greet", json!({"name": "x"}));
    assert_eq!(ok_text(&answer), "Hello, x!");
}
