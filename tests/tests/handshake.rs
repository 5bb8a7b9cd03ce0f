//! The MCP lifecycle: version negotiation, capabilities, what may happen before
//! `initialize`, request ids, and shutdown by closing stdin.
//!
//! Every message the server sends is validated by the harness against the
//! schema of the version in force, so running a session under each version
//! also checks the shapes of its tools/list and tools/call results.

use palisade_tests::*;
use serde_json::{Value, json};
use std::time::Duration;

fn hello_server() -> Server {
    Server::start(&["--plugin", &plugin_arg("hello")])
}

/// A whole session under `version`: initialize, list, call, shut down.
fn session_under(version: &str) {
    let mut s = hello_server();
    // While plugins load, every capability they might bring is declared: wait them out.
    s.wait_ready();
    let init = s.initialize(version);
    assert_eq!(
        init["protocolVersion"], version,
        "a supported version must be echoed: {init}"
    );
    assert_eq!(s.negotiated_version(), Some(version));

    let caps = init["capabilities"]
        .as_object()
        .expect("capabilities is an object");
    assert!(
        caps.get("tools").is_some_and(Value::is_object),
        "tools capability missing: {init}"
    );
    // hello lists no resources or prompts and completes nothing: only what works is declared.
    for absent in ["resources", "prompts", "completions"] {
        assert!(
            caps.get(absent).is_none(),
            "capability {absent} must not be declared for hello alone: {init}"
        );
    }
    assert!(
        caps.get("logging").is_some_and(Value::is_object),
        "logging capability missing: {init}"
    );
    let info = &init["serverInfo"];
    assert!(
        info["name"].as_str().is_some_and(|n| !n.is_empty()),
        "serverInfo.name: {init}"
    );
    assert!(
        info["version"].as_str().is_some_and(|n| !n.is_empty()),
        "serverInfo.version: {init}"
    );

    // Validated against `version`'s schema by the harness.
    let (tools, _) = s.list_all_tools();
    let names = tool_names(&tools);
    assert!(names.contains(&"hello_greet".to_string()), "{names:?}");
    let r = s.call_tool("hello_greet", json!({"name": version}));
    assert_eq!(ok_text(&r), format!("Hello, {version}!"));
    assert!(
        s.result("ping", Value::Null)
            .as_object()
            .is_some_and(|o| o.keys().all(|k| k == "_meta"))
    );

    let status = s.close_stdin_and_wait(secs(60));
    assert!(status.success(), "exit status after stdin closed: {status}");
}

#[test]
fn session_under_2024_11_05() {
    session_under("2024-11-05");
}

#[test]
fn session_under_2025_03_26() {
    session_under("2025-03-26");
}

#[test]
fn session_under_2025_06_18() {
    session_under("2025-06-18");
}

#[test]
fn session_under_2025_11_25() {
    session_under("2025-11-25");
}

#[test]
fn unknown_future_version_gets_the_latest() {
    let mut s = hello_server();
    let init = s.initialize("2099-12-31");
    assert_eq!(init["protocolVersion"], LATEST_VERSION, "{init}");
    // The session goes on under the latest version (validated as such).
    let r = s.call_tool("hello_greet", json!({"name": "future"}));
    assert_eq!(ok_text(&r), "Hello, future!");
}

#[test]
fn version_that_is_not_a_date_gets_the_latest() {
    let mut s = hello_server();
    let init = s.initialize("1.0.0");
    assert_eq!(init["protocolVersion"], LATEST_VERSION, "{init}");
}

#[test]
fn ping_is_answered_before_initialize() {
    let mut s = hello_server();
    let resp = s.request_timeout("ping", Value::Null, startup_timeout());
    let result = s.expect_result(resp);
    assert!(result.is_object(), "ping result: {result}");
    let init = s.initialize(LATEST_VERSION);
    assert_eq!(init["protocolVersion"], LATEST_VERSION);
}

#[test]
fn request_before_initialize_is_an_error_not_a_crash() {
    let mut s = hello_server();
    let resp = s.request_timeout("tools/list", Value::Null, startup_timeout());
    assert_eq!(
        error_code(&resp),
        Some(INVALID_REQUEST),
        "tools/list before initialize: {resp}"
    );
    let resp = s.request(
        "tools/call",
        json!({"name": "hello_greet", "arguments": {"name": "x"}}),
    );
    assert_eq!(
        error_code(&resp),
        Some(INVALID_REQUEST),
        "tools/call before initialize: {resp}"
    );

    // The server is still there and the session can start properly.
    s.initialize(LATEST_VERSION);
    let r = s.call_tool("hello_greet", json!({"name": "after"}));
    assert_eq!(ok_text(&r), "Hello, after!");
}

#[test]
fn notification_before_initialize_is_ignored() {
    let mut s = hello_server();
    s.notify("notifications/initialized", Value::Null);
    s.notify(
        "notifications/cancelled",
        json!({"requestId": 77, "reason": "nothing to cancel"}),
    );
    s.notify("notifications/roots/list_changed", Value::Null);
    if let Some(m) = s.recv_timeout(secs(2)) {
        s.fail(format!("a notification must never be answered, got {m}"));
    }
    assert!(
        !s.stdout_closed(),
        "the server closed stdout after notifications before initialize"
    );
    let init = s.initialize(LATEST_VERSION);
    assert_eq!(init["protocolVersion"], LATEST_VERSION);
}

#[test]
fn string_and_integer_ids_are_echoed() {
    let mut s = hello_server();
    s.initialize(LATEST_VERSION);
    s.send_raw(r#"{"jsonrpc":"2.0","id":"req-α","method":"ping"}"#);
    let resp = s.wait_response(&json!("req-α"), default_timeout());
    assert!(resp.get("result").is_some(), "{resp}");
    s.send_raw(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#);
    let resp = s.wait_response(&json!(0), default_timeout());
    assert!(resp.get("result").is_some(), "{resp}");
    s.send_raw(r#"{"jsonrpc":"2.0","id":9007199254740991,"method":"tools/call","params":{"name":"hello_greet","arguments":{"name":"big"}}}"#);
    let resp = s.wait_response(&json!(9007199254740991i64), default_timeout());
    assert_eq!(tool_text(&resp["result"]), "Hello, big!", "{resp}");
}

#[test]
fn closing_stdin_exits_with_status_zero() {
    let mut s = hello_server();
    s.initialize(LATEST_VERSION);
    let status = s.close_stdin_and_wait(secs(60));
    assert_eq!(status.code(), Some(0), "exit status: {status}");
    assert!(s.stdout_closed());
}

/// Proves: a client that goes away mid-call does not leave the call running to its time limit:
/// what finishes within the grace period is answered, the rest is cancelled, and the server
/// exits.
#[test]
fn closing_stdin_answers_quick_calls_and_cancels_slow_ones() {
    let mut s = Server::start(&["--no-watch", "--plugin", &plugin_arg("misbehave")]);
    s.initialize(LATEST_VERSION);
    // Loaded, so the quick call runs well inside the 2 s grace.
    s.wait_ready();
    let quick = s.send_request(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 300 } }),
    );
    let slow = s.send_request(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 25000 } }),
    );
    let started = std::time::Instant::now();
    let status = s.close_stdin_and_wait(secs(20));
    assert_eq!(status.code(), Some(0), "exit status: {status}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the server waited {:?} for a call whose client was gone",
        started.elapsed()
    );
    let answered = s.wait_response(&quick, Duration::ZERO);
    assert!(answered.get("result").is_some(), "{answered}");
    assert!(
        s.recv_timeout(Duration::ZERO)
            .is_none_or(|m| m.get("id") != Some(&slow)),
        "the slow call was answered"
    );
    assert!(
        s.wait_for_stderr("cancelling the requests still in flight", secs(5)),
        "{}",
        s.stderr()
    );
}

#[test]
fn closing_stdin_before_initialize_exits_with_status_zero() {
    let mut s = hello_server();
    let status = s.close_stdin_and_wait(startup_timeout());
    assert_eq!(status.code(), Some(0), "exit status: {status}");
    assert!(
        s.recv_timeout(Duration::ZERO).is_none(),
        "nothing was asked, nothing may be answered"
    );
}
