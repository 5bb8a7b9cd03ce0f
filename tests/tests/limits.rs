//! The sandbox and its limits, with the misbehave plugin: fuel, wall-clock
//! time, memory, stack, panics, escape attempts, environment, stdout floods.
//! Each misbehaviour must give a tool error (`isError: true`), never a
//! protocol error or a dead server, and the plugin must keep working after it.

use palisade_tests::*;
use serde_json::{Value, json};
use tempfile::TempDir;

/// A server with misbehave (and hello) under `limits` (TOML lines for
/// `[plugins.misbehave.limits]`, empty for the defaults).
fn server_with_limits(limits: &str) -> (Server, TempDir) {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.misbehave]\npath = {}\n\n[plugins.misbehave.limits]\n{limits}\n\n[plugins.hello]\npath = {}\n",
            toml_str(&plugin_arg("misbehave")),
            toml_str(&plugin_arg("hello")),
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config)]);
    // Generous: a limit that is not enforced shows up as a wrong answer, not a timeout here.
    s.timeout = secs(150);
    s.initialize(LATEST_VERSION);
    // A short `timeout_ms` bounds the wait for a loading plugin too: load first.
    s.wait_ready();
    (s, dir)
}

/// The same server still serves: misbehave_ok and another plugin answer.
fn assert_recovered(s: &mut Server) {
    let r = s.call_tool("misbehave_ok", json!({}));
    assert_eq!(
        ok_text(&r),
        "still fine",
        "misbehave must work again after a failed call"
    );
    let r = s.call_tool("hello_greet", json!({"name": "neighbour"}));
    assert_eq!(ok_text(&r), "Hello, neighbour!");
}

#[test]
fn spinning_runs_out_of_fuel() {
    let (mut s, _dir) = server_with_limits("fuel_per_call = 200000000\ntimeout_ms = 60000");
    let r = s.call_tool("misbehave_spin", json!({}));
    error_text(&r, "out of fuel");
    assert_recovered(&mut s);
    // Fuel is per call: a second spin is stopped the same way, not earlier by leftovers.
    let r = s.call_tool("misbehave_spin", json!({}));
    error_text(&r, "out of fuel");
    assert_recovered(&mut s);
}

#[test]
fn spinning_hits_the_time_limit() {
    let (mut s, _dir) = server_with_limits("fuel_per_call = 1000000000000000\ntimeout_ms = 1000");
    let r = s.call_tool("misbehave_spin", json!({}));
    error_text(&r, "time limit");
    assert_recovered(&mut s);
}

#[test]
fn sleeping_past_the_time_limit_is_stopped() {
    let (mut s, _dir) = server_with_limits("timeout_ms = 1000");
    let r = s.call_tool("misbehave_sleep", json!({"ms": 20000}));
    error_text(&r, "time limit");
    assert_recovered(&mut s);
}

#[test]
fn growing_memory_hits_the_memory_limit() {
    let (mut s, _dir) = server_with_limits("memory_mib = 32");
    let r = s.call_tool("misbehave_grow_memory", json!({}));
    error_text(&r, "memory limit");
    assert_recovered(&mut s);
}

#[test]
fn unbounded_recursion_is_a_stack_overflow() {
    let (mut s, _dir) = server_with_limits("");
    let r = s.call_tool("misbehave_recurse", json!({}));
    error_text(&r, "stack overflow");
    assert_recovered(&mut s);
}

#[test]
fn a_panic_is_reported_with_its_message() {
    let (mut s, _dir) = server_with_limits("");
    let r = s.call_tool("misbehave_panic", json!({}));
    error_text(&r, "panicked");
    error_text(&r, "misbehave panicked on purpose");
    assert_recovered(&mut s);
    // And again: a trapped instance is not reused in a broken state.
    let r = s.call_tool("misbehave_panic", json!({}));
    error_text(&r, "misbehave panicked on purpose");
    assert_recovered(&mut s);
}

#[test]
fn escape_attempts_are_all_denied() {
    let mut s = Server::start(&["--plugin", &plugin_arg("misbehave")]);
    s.initialize(LATEST_VERSION);
    let r = s.call_tool("misbehave_escape", json!({}));
    let text = tool_text(&r);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines.iter().any(|l| l.starts_with("denied")),
        "escape must report its attempts (denied: ...): {r}"
    );
    let allowed: Vec<&&str> = lines.iter().filter(|l| l.starts_with("ALLOWED")).collect();
    assert!(
        allowed.is_empty(),
        "the sandbox let these through: {allowed:#?}"
    );
    let r = s.call_tool("misbehave_ok", json!({}));
    assert_eq!(ok_text(&r), "still fine");
}

#[test]
fn plugins_see_no_environment_and_no_arguments() {
    let canary = format!("canary-{}", std::process::id());
    let mut s = Server::builder()
        .arg("--plugin")
        .arg(plugin_path("misbehave"))
        .env("PALISADE_TEST_SECRET", &canary)
        .start();
    s.initialize(LATEST_VERSION);
    let r = s.call_tool("misbehave_env", json!({}));
    assert!(!is_tool_error(&r), "{r}");
    // Anything the plugin reports, in text or structured form.
    let everything = r.to_string();
    for leaked in [
        canary.as_str(),
        "PALISADE_TEST_SECRET",
        "RUST_LOG",
        "PATH=",
        "HOME=",
        "--plugin",
        "--cache-dir",
        "misbehave.wasm",
    ] {
        assert!(
            !everything.contains(leaked),
            "the plugin can see {leaked:?}: {r}"
        );
    }
    // The plugin reports counts as `args (N):` and `env (N):`.
    let text = tool_text(&r);
    for what in ["args", "env"] {
        if text.contains(&format!("{what} (")) {
            assert!(
                text.contains(&format!("{what} (0)")),
                "the plugin must see no {what}: {text}"
            );
        }
    }
    if let Ok(path) = std::env::var("PATH") {
        assert!(
            path.is_empty() || !everything.contains(&path),
            "the plugin can see the host's PATH: {r}"
        );
    }
}

#[test]
fn stdout_flood_goes_to_the_log_not_the_protocol() {
    let mut s = Server::start(&[
        "--plugin",
        &plugin_arg("misbehave"),
        "--plugin",
        &plugin_arg("hello"),
    ]);
    s.initialize(LATEST_VERSION);
    let tagged = |s: &Server| {
        s.stderr()
            .lines()
            .filter(|l| l.contains("misbehave"))
            .count()
    };
    let before = tagged(&s);
    let r = s.call_tool("misbehave_flood_stdout", json!({}));
    assert_eq!(ok_text(&r), "flooded");
    // The plugin's output shows up on stderr, tagged with the plugin's name.
    let deadline = std::time::Instant::now() + secs(30);
    while tagged(&s) <= before && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        tagged(&s) > before,
        "no stderr line tagged misbehave after the flood"
    );
    // The protocol stream is intact: every stdout line so far and up to the
    // exit validates (checked by the harness), and requests still match up.
    let pong = s.result("ping", Value::Null);
    assert!(pong.is_object());
    let r = s.call_tool("hello_greet", json!({"name": "after the flood"}));
    assert_eq!(ok_text(&r), "Hello, after the flood!");
    let status = s.close_stdin_and_wait(secs(60));
    assert_eq!(status.code(), Some(0), "{status}");
    while let Some(m) = s.recv_timeout(std::time::Duration::ZERO) {
        if m.get("method").is_none() {
            s.fail(format!(
                "an unexpected response after the last request: {m}"
            ));
        }
    }
}
