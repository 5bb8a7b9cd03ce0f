//! Protocol errors: parse errors, invalid requests, unknown methods, bad
//! tools/call params; and that none of them disturbs the session.

use palisade_tests::*;
use serde_json::{Value, json};

fn ready_server() -> Server {
    let mut s = Server::start(&["--plugin", &plugin_arg("hello")]);
    s.initialize(LATEST_VERSION);
    s
}

/// The session still works: a ping and a tool call are answered.
fn assert_still_serving(s: &mut Server) {
    let pong = s.result("ping", Value::Null);
    assert!(pong.is_object(), "{pong}");
    let r = s.call_tool("hello_greet", json!({"name": "still here"}));
    assert_eq!(ok_text(&r), "Hello, still here!");
}

/// The next message, which must be an error response with `code`.
fn next_error(s: &mut Server, code: i64, sent: &str) -> Value {
    let Some(resp) = s.recv_timeout(default_timeout()) else {
        s.fail(format!("no response to {sent}"));
    };
    if error_code(&resp) != Some(code) {
        s.fail(format!("expected error {code} for {sent}, got {resp}"));
    }
    resp
}

#[test]
fn malformed_json_is_a_parse_error_with_null_id() {
    let mut s = ready_server();
    for line in [
        r#"{"jsonrpc": "2.0", "id": 1000001, "method": "ping""#,
        "this is not json",
        r#"{"jsonrpc": "2.0", "id": 1000002, "method": "ping",}"#,
    ] {
        s.send_raw(line);
        let resp = next_error(&mut s, PARSE_ERROR, line);
        // The contract says `"id": null` (JSON-RPC 2.0 section 5); the 2025-11-25
        // schema would rather have no id at all. Either way, no guessed id.
        assert!(
            resp.get("id").is_none_or(Value::is_null),
            "a parse error cannot know the request id: {resp}"
        );
        assert!(
            resp["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{resp}"
        );
    }
    assert_still_serving(&mut s);
}

#[test]
fn valid_json_that_is_not_a_message_is_an_invalid_request() {
    let mut s = ready_server();
    // (line, the id the response may carry besides null)
    let cases: [(&str, Option<Value>); 6] = [
        (r#"{"jsonrpc":"2.0","id":1000001}"#, Some(json!(1000001))),
        (r#"{"id":1000002,"method":"ping"}"#, Some(json!(1000002))),
        (
            r#"{"jsonrpc":"1.0","id":1000003,"method":"ping"}"#,
            Some(json!(1000003)),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1000004,"method":42}"#,
            Some(json!(1000004)),
        ),
        ("42", None),
        (r#""ping""#, None),
    ];
    for (line, id) in cases {
        s.send_raw(line);
        let resp = next_error(&mut s, INVALID_REQUEST, line);
        let got = resp.get("id").cloned().unwrap_or(Value::Null);
        assert!(
            got.is_null() || Some(&got) == id.as_ref(),
            "the error for {line} carries id {got}, expected null{}",
            id.map(|i| format!(" or {i}")).unwrap_or_default()
        );
    }
    assert_still_serving(&mut s);
}

#[test]
fn unknown_methods_are_method_not_found() {
    let mut s = ready_server();
    // Methods of the client's side, and misspellings, are not the server's.
    for method in [
        "no/such/method",
        "roots/list",
        "sampling/createMessage",
        "resources/lisst",
        "tools/lisst",
    ] {
        let resp = s.request(method, json!({}));
        assert_eq!(
            error_code(&resp),
            Some(METHOD_NOT_FOUND),
            "{method}: {resp}"
        );
    }
    assert_still_serving(&mut s);
}

#[test]
fn unknown_notifications_are_ignored() {
    let mut s = ready_server();
    s.notify("notifications/no_such_thing", json!({"x": 1}));
    s.notify("tools/list", Value::Null); // a request method sent as a notification
    if let Some(m) = s.recv_timeout(secs(2)) {
        s.fail(format!("notifications must not be answered, got {m}"));
    }
    assert_still_serving(&mut s);
}

#[test]
fn unknown_tool_is_invalid_params() {
    let mut s = ready_server();
    for name in ["no_such_tool", "hello_nope", "greet", "hello-greet", ""] {
        let resp = s.call_tool_response(name, json!({"name": "x"}));
        assert_eq!(
            error_code(&resp),
            Some(INVALID_PARAMS),
            "tool {name:?}: {resp}"
        );
    }
    assert_still_serving(&mut s);
}

#[test]
fn malformed_tools_call_params_are_invalid_params() {
    let mut s = ready_server();
    let cases = [
        ("no params at all", Value::Null),
        ("params without name", json!({"arguments": {"name": "x"}})),
        ("name not a string", json!({"name": 5, "arguments": {}})),
        (
            "arguments an array",
            json!({"name": "hello_greet", "arguments": ["x"]}),
        ),
        (
            "arguments a string",
            json!({"name": "hello_greet", "arguments": "name=x"}),
        ),
        (
            "arguments a number",
            json!({"name": "hello_greet", "arguments": 1}),
        ),
    ];
    for (what, params) in cases {
        let resp = s.request("tools/call", params);
        assert_eq!(error_code(&resp), Some(INVALID_PARAMS), "{what}: {resp}");
    }
    assert_still_serving(&mut s);
}

#[test]
fn a_burst_of_garbage_does_not_stop_the_server() {
    let mut s = ready_server();
    let garbage = [
        "",
        "{",
        "}",
        "[",
        "null",
        "true",
        "{}",
        r#"{"jsonrpc":"2.0"}"#,
        "\u{7f}\u{1}",
    ];
    for g in garbage {
        s.send_raw(g);
    }
    // Whatever the server answers to these must be well-formed (checked by the
    // harness) and must not be a result.
    let id = s.send_request("ping", Value::Null);
    let pong = s.wait_response(&id, default_timeout());
    assert!(pong.get("result").is_some(), "{pong}");
    while let Some(m) = s.recv_timeout(std::time::Duration::ZERO) {
        assert!(
            m.get("error").is_some(),
            "garbage was answered with something else than an error: {m}"
        );
    }
    assert_still_serving(&mut s);
    let status = s.close_stdin_and_wait(secs(60));
    assert_eq!(status.code(), Some(0), "{status}");
}

#[test]
fn batches_are_answered_in_a_2025_03_26_session_only() {
    let mut s = Server::start(&["--plugin", &plugin_arg("hello")]);
    s.initialize("2025-03-26");
    s.send_raw(
        r#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"hello_greet","arguments":{"name":"batch"}}},{"jsonrpc":"2.0","id":"b3","method":"nope"}]"#,
    );
    let reply = s.recv_timeout(default_timeout()).expect("a batch response");
    let replies = reply
        .as_array()
        .unwrap_or_else(|| panic!("not a batch: {reply}"));
    assert_eq!(
        replies.len(),
        3,
        "one response per request, none for the notification: {reply}"
    );
    let by_id = |id: &str| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {reply}"))
    };
    assert_eq!(by_id("b1")["result"], serde_json::json!({}));
    assert_eq!(tool_text(&by_id("b2")["result"]), "Hello, batch!");
    assert_eq!(error_code(by_id("b3")), Some(-32601));

    let mut s = Server::start(&["--plugin", &plugin_arg("hello")]);
    s.initialize(LATEST_VERSION);
    s.send_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    let reply = s.recv_timeout(default_timeout()).expect("an error");
    assert_eq!(
        error_code(&reply),
        Some(-32600),
        "batches are not part of 2025-11-25: {reply}"
    );
}

/// Proves: a plugin that loads but serves nothing (built for a world without the interface its
/// definitions need, say) is pointed out at load, not left to look like a missing tool.
#[test]
fn a_plugin_that_serves_nothing_is_pointed_out_at_load() {
    let mut s = Server::start(&["--no-watch", "--plugin", &plugin_arg("nothing")]);
    s.initialize(LATEST_VERSION);
    assert!(
        s.wait_for_stderr("the plugin serves nothing yet", default_timeout()),
        "{}",
        s.stderr()
    );
    assert!(
        s.stderr()
            .contains("(it exports tools, resources, prompts)"),
        "{}",
        s.stderr()
    );
}
