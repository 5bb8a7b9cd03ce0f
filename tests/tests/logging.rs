//! Logging: the capability is always declared, and `logging/setLevel` takes exactly the eight
//! MCP (syslog) levels.
//!
//! Plugin log messages (`misbehave_log` logs through the `host` import) reach the client as
//! `notifications/message` with the plugin's name as logger, filtered by the client's level and
//! rate-limited per plugin. A call's messages are sent before its response, so once the response is
//! in, every message of the call has arrived.

use palisade_tests::*;
use serde_json::{Value, json};

const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

#[test]
fn logging_is_declared_whatever_the_plugins_serve() {
    for version in SUPPORTED_VERSIONS {
        let mut s = Server::start(&["--plugin", &plugin_arg("hello")]);
        // While plugins load, every capability they might bring is declared: wait them out.
        s.wait_ready();
        let init = s.initialize(version);
        let caps = &init["capabilities"];
        assert_eq!(caps["logging"], json!({}), "{version}: {init}");
        // hello serves only tools: nothing else is declared.
        assert_eq!(
            caps["tools"],
            json!({"listChanged": true}),
            "{version}: {init}"
        );
        for absent in ["resources", "prompts", "completions"] {
            assert!(
                caps.get(absent).is_none(),
                "{version}: {absent} must not be declared for hello alone: {init}"
            );
        }
    }
}

#[test]
fn set_level_accepts_every_level() {
    for version in ["2024-11-05", LATEST_VERSION] {
        let mut s = Server::start(&["--plugin", &plugin_arg("hello")]);
        s.initialize(version);
        for level in LEVELS {
            let r = s.typed_result("logging/setLevel", json!({"level": level}), "EmptyResult");
            assert!(
                r.as_object()
                    .is_some_and(|o| o.keys().all(|k| k == "_meta")),
                "{version}: setLevel {level} answers an empty result: {r}"
            );
        }
        // The server goes on serving at any level.
        let r = s.call_tool("hello_greet", json!({"name": "after setLevel"}));
        assert_eq!(ok_text(&r), "Hello, after setLevel!");
    }
}

#[test]
fn set_level_refuses_unknown_levels() {
    let mut s = Server::start(&["--plugin", &plugin_arg("hello")]);
    s.initialize(LATEST_VERSION);
    for level in ["verbose", "DEBUG", "warn", "", " info"] {
        let resp = s.request("logging/setLevel", json!({"level": level}));
        let error = expect_error_code(&resp, INVALID_PARAMS);
        if !level.trim().is_empty() {
            assert!(
                error["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(level.trim())),
                "the error names the level {level:?}: {resp}"
            );
        }
    }
    for params in [
        json!({}),
        json!({"level": 3}),
        json!({"level": null}),
        Value::Null,
    ] {
        let resp = s.request("logging/setLevel", params.clone());
        expect_error_code(&resp, INVALID_PARAMS);
    }
    // A refused level changes nothing: a valid one is still accepted.
    s.typed_result("logging/setLevel", json!({"level": "error"}), "EmptyResult");
}

fn misbehave_server() -> Server {
    let mut s = Server::start(&["--plugin", &plugin_arg("misbehave")]);
    s.initialize("2025-11-25");
    s
}

/// Runs `misbehave_log` and returns the plugin's log notifications it caused.
fn log_and_collect(s: &mut Server, level: &str, count: u32) -> Vec<Value> {
    let result = s.call_tool("misbehave_log", json!({"level": level, "count": count}));
    assert_ne!(result["isError"], true, "{result}");
    s.take_notifications("notifications/message")
}

#[test]
fn plugin_logs_reach_the_client_at_info_and_above_by_default() {
    let mut s = misbehave_server();
    assert!(log_and_collect(&mut s, "debug", 3).is_empty());
    let messages = log_and_collect(&mut s, "warning", 2);
    assert_eq!(messages.len(), 2, "{messages:?}");
    for (n, m) in messages.iter().enumerate() {
        assert_eq!(m["params"]["logger"], "misbehave", "{m}");
        assert_eq!(m["params"]["level"], "warning", "{m}");
        assert_eq!(m["params"]["data"], format!("message {}", n + 1), "{m}");
    }
}

#[test]
fn set_level_filters_plugin_logs() {
    let mut s = misbehave_server();
    s.result("logging/setLevel", json!({"level": "error"}));
    assert!(log_and_collect(&mut s, "warning", 3).is_empty());
    assert_eq!(log_and_collect(&mut s, "critical", 1).len(), 1);
    s.result("logging/setLevel", json!({"level": "debug"}));
    let debug = log_and_collect(&mut s, "debug", 1);
    assert_eq!(debug.len(), 1);
    assert_eq!(debug[0]["params"]["level"], "debug");
}

#[test]
fn a_plugin_cannot_flood_the_client_with_logs() {
    let mut s = misbehave_server();
    let burst = log_and_collect(&mut s, "info", 500);
    // 20 at once, then 10 a second: a 500-message burst is cut to about 20.
    assert!(
        (20..=40).contains(&burst.len()),
        "{} of 500 messages went out",
        burst.len()
    );
    // Once the plugin may log again, the first message says how many were dropped.
    let mut next = Vec::new();
    for _ in 0..200 {
        next = log_and_collect(&mut s, "info", 1);
        if !next.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let warning = next
        .first()
        .expect("the plugin may log again after a while");
    assert_eq!(warning["params"]["level"], "warning", "{warning}");
    assert!(
        warning["params"]["data"]
            .as_str()
            .is_some_and(|d| d.contains("dropped")),
        "{warning}"
    );
    assert_eq!(next.len(), 2, "the warning, then the message: {next:?}");
}
