//! MCP over Streamable HTTP (`palisade serve --http`): sessions, the choice between a JSON answer
//! and an SSE stream, event ids and resumption, disconnects, the Host/Origin/version guards, body
//! limits, batches, requests to the client, the standalone stream and idle expiry. Every
//! JSON-RPC message received is validated against the MCP schema of the session's version (see
//! the harness's `// -- HTTP --` section).

use std::time::Duration;

use palisade_tests::*;
use serde_json::{Value, json};

fn hello_and_misbehave() -> HttpServer {
    HttpServer::start(&[
        "--no-watch",
        "--plugin",
        &plugin_arg("hello"),
        "--plugin",
        &plugin_arg("misbehave"),
    ])
}

/// The conformance plugin (`test_sampling`, `test_elicitation`, `test://watched-resource`...).
fn conformance() -> HttpServer {
    let config = repo_root().join("plugins/fixtures/conformance/palisade.toml");
    HttpServer::start(&["--no-watch", "--config", &path_str(&config)])
}

/// hello and misbehave, with `http` as the body of `[server.http]`. The directory holds the
/// configuration: keep it while the server runs.
fn with_http_config(http: &str) -> (tempfile::TempDir, HttpServer) {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[server]\nwatch = false\n\n[server.http]\n{http}\n\n\
             [plugins.hello]\npath = {hello}\n\n[plugins.misbehave]\npath = {misbehave}\n",
            hello = toml_str(&plugin_arg("hello")),
            misbehave = toml_str(&plugin_arg("misbehave")),
        ),
    );
    let server = HttpServer::start(&["--config", &path_str(&config)]);
    (dir, server)
}

fn ping(c: &mut HttpClient) -> Value {
    json!({"jsonrpc": "2.0", "id": c.next_id(), "method": "ping"})
}

fn call(c: &mut HttpClient, name: &str, arguments: Value) -> Value {
    c.request_message("tools/call", json!({"name": name, "arguments": arguments}))
}

/// A `tools/call` asking for progress with `token`.
fn call_with_progress(c: &mut HttpClient, name: &str, arguments: Value, token: &str) -> Value {
    c.request_message(
        "tools/call",
        json!({"name": name, "arguments": arguments, "_meta": {"progressToken": token}}),
    )
}

#[track_caller]
fn result_of(response: &Value) -> Value {
    response
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("expected a result, got {response}"))
}

/// The progress values of `notifications/progress` messages for `token`, in order.
fn progress_values(messages: &[Value], token: &str) -> Vec<f64> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            assert_eq!(m["params"]["progressToken"], token, "{m}");
            m["params"]["progress"].as_f64().unwrap()
        })
        .collect()
}

#[track_caller]
fn assert_increasing(values: &[f64]) {
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress must only increase: {values:?}"
    );
}

/// Asserts that `events` carry ids `<stream>-<first>`, `<stream>-<first+1>`...; returns `stream`.
#[track_caller]
fn assert_consecutive_ids(events: &[SseEvent], first: u64) -> u64 {
    let (stream, _) = events[0].stream_and_seq();
    for (i, e) in events.iter().enumerate() {
        assert_eq!(
            e.stream_and_seq(),
            (stream, first + i as u64),
            "event ids must be consecutive on one stream: {:?}",
            events.iter().map(|e| e.id.clone()).collect::<Vec<_>>()
        );
    }
    stream
}

/// Proves: `initialize` (and only it) creates a session, named by a 32-hex-digit
/// `Mcp-Session-Id` that differs between sessions; a POST without the header gets 400 (a GET or
/// DELETE 405: without a session only stateless POSTs exist), with an unknown id 404; notifications and responses get 202 with an empty body; a body that is not
/// `application/json` gets 415; DELETE ends the session (204), after which its id gets 404, while
/// another session goes on.
#[test]
fn a_session_starts_with_initialize_and_ends_with_delete() {
    let server = hello_and_misbehave();
    let mut a = server.client();
    let init = a.initialize(LATEST_VERSION);
    assert_eq!(init["protocolVersion"], LATEST_VERSION);
    let id_a = a.session_id.clone().unwrap();
    assert!(
        id_a.len() == 32 && id_a.chars().all(|c| c.is_ascii_hexdigit()),
        "Mcp-Session-Id must be 32 hex digits: {id_a:?}"
    );
    let mut b = server.client();
    b.initialize("2025-06-18");
    let id_b = b.session_id.clone().unwrap();
    assert_ne!(id_a, id_b, "two sessions share an id");

    let msg = ping(&mut a);
    let reply = a.post(&msg);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type(), "application/json");
    let response = reply.json();
    assert_eq!(response["id"], msg["id"]);
    check_definition(&a.version, "EmptyResult", &result_of(&response));

    // No session header, an unknown one.
    let msg = ping(&mut a);
    let without = a.post_with(&msg, &[("Mcp-Session-Id", "")]);
    let why = without.expect_error_status(400);
    assert!(why.contains("Mcp-Session-Id"), "{why}");
    let unknown = a.post_with(&msg, &[("Mcp-Session-Id", &"0".repeat(32))]);
    unknown.expect_error_status(404);
    a.get(&[("Mcp-Session-Id", "")]).expect_error_status(405);
    a.get(&[("Mcp-Session-Id", &"0".repeat(32))])
        .expect_error_status(404);
    a.delete(&[("Mcp-Session-Id", "")]).expect_error_status(405);

    // Only notifications or responses: 202, nothing in the body.
    let reply = a.post(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    assert_eq!(reply.status, 202, "{reply:?}");
    assert_eq!(reply.text(), "");
    let reply = a.post(&json!({"jsonrpc": "2.0", "id": "not-asked", "result": {}}));
    assert_eq!(reply.status, 202, "{reply:?}");
    assert_eq!(reply.text(), "");

    // A body that is not JSON by its Content-Type.
    let msg = ping(&mut a);
    let reply = a.post_raw(msg.to_string(), &[("Content-Type", "text/plain")]);
    reply.expect_error_status(415);

    // DELETE ends the session; its id is then unknown.
    let reply = a.delete(&[]);
    assert_eq!(reply.status, 204, "{reply:?}");
    let msg = ping(&mut a);
    a.post(&msg).expect_error_status(404);
    a.get(&[]).expect_error_status(404);
    a.delete(&[]).expect_error_status(404);
    assert!(
        server.wait_for_stderr("HTTP session ended by the client", secs(5)),
        "the server should log the end of the session"
    );

    // The other session is untouched.
    let r = b.call_tool("hello_greet", json!({"name": "B"}));
    assert_eq!(ok_text(&r), "Hello, B!");
}

/// Proves: a request whose only output is its response is answered `200 application/json`; one
/// that sends notifications first (plugin logs) gets `text/event-stream`, every event with an id
/// `<stream>-<n>` (consecutive from 0 on one stream) and one JSON-RPC message, the response last,
/// then the stream ends. The choice follows what is really sent: with the log level raised above
/// the plugin's messages, or progress without a progress token, the answer is plain JSON again.
#[test]
fn a_lone_response_is_json_and_notifications_first_make_a_stream() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);

    let ex = c.exchange(
        "tools/call",
        json!({"name": "hello_greet", "arguments": {"name": "Ada"}}),
    );
    assert!(!ex.sse, "a lone response must be plain JSON");
    assert_eq!(ok_text(&result_of(&ex.response)), "Hello, Ada!");

    let msg = call(
        &mut c,
        "misbehave_log",
        json!({"level": "info", "count": 3}),
    );
    let ex = c.exchange_message(&msg);
    assert!(ex.sse, "logs before the response make a stream");
    let logs: Vec<&Value> = ex.before.iter().collect();
    assert_eq!(logs.len(), 3, "{logs:?}");
    for (i, m) in logs.iter().enumerate() {
        assert_eq!(m["method"], "notifications/message", "{m}");
        assert_eq!(m["params"]["data"], format!("message {}", i + 1), "{m}");
        assert_eq!(m["params"]["logger"], "misbehave", "{m}");
    }
    assert_eq!(ex.response["id"], msg["id"]);
    assert_eq!(ok_text(&result_of(&ex.response)), "logged 3 messages");
    assert_eq!(ex.events.len(), 4);
    assert_consecutive_ids(&ex.events, 0);
    assert!(
        ex.events.last().unwrap().is_response(),
        "the response comes last"
    );

    c.result("logging/setLevel", json!({"level": "error"}));
    let ex = c.exchange(
        "tools/call",
        json!({"name": "misbehave_log", "arguments": {"level": "info", "count": 3}}),
    );
    assert!(!ex.sse, "no log passes the level: the answer is plain JSON");
    assert_eq!(ok_text(&result_of(&ex.response)), "logged 3 messages");

    let ex = c.exchange(
        "tools/call",
        json!({"name": "misbehave_progress", "arguments": {"steps": 1000}}),
    );
    assert!(!ex.sse, "no progress token, no progress: plain JSON");
    assert_eq!(ok_text(&result_of(&ex.response)), "reported 1000 steps");
}

/// Proves: progress for a request with `_meta.progressToken` travels on that POST's SSE stream:
/// `notifications/progress` with the token, increasing, each event with the next id of one
/// stream, then the `CallToolResult` as the last event, and the stream ends.
#[test]
fn progress_travels_on_the_post_stream_with_event_ids() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    let msg = call_with_progress(
        &mut c,
        "misbehave_progress",
        json!({"steps": 200000}),
        "tok-1",
    );
    let reply = c.post(&msg);
    assert_eq!(reply.status, 200);
    let mut stream = reply.sse();
    let events = stream.read_to_end();
    assert!(stream.ended());
    assert!(events.len() >= 2, "progress, then the result: {events:?}");
    assert_consecutive_ids(&events, 0);
    let messages: Vec<Value> = events.iter().map(|e| e.message.clone()).collect();
    let (last, before) = messages.split_last().unwrap();
    assert!(!before.is_empty());
    assert!(
        before
            .iter()
            .all(|m| m["method"] == "notifications/progress"),
        "{before:?}"
    );
    let values = progress_values(before, "tok-1");
    assert_increasing(&values);
    assert!(before.iter().all(|m| m["params"]["total"] == 200000.0));
    assert_eq!(last["id"], msg["id"]);
    let result = result_of(last);
    check_definition(&c.version, "CallToolResult", &result);
    assert_eq!(ok_text(&result), "reported 200000 steps");
}

/// Proves: a client that drops a call's SSE stream mid-call and reconnects (GET with
/// `Last-Event-ID`) gets every event it missed, from the next id on, and the result: nothing is
/// lost, and the call is not cancelled while the client comes back within the grace period. The
/// finished stream can be replayed again from the same id; an unknown stream gets 404, a
/// malformed id 400.
#[test]
fn a_dropped_stream_resumes_with_last_event_id_and_no_result_is_lost() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    let steps = 1_000_000;
    let msg = call_with_progress(
        &mut c,
        "misbehave_progress",
        json!({"steps": steps}),
        "resume",
    );
    let mut first = c.post(&msg).expect_sse("POST tools/call");
    let seen = vec![first.next_event().unwrap(), first.next_event().unwrap()];
    assert!(
        !seen[1].is_response(),
        "the call ended too soon to test resumption: {seen:?}"
    );
    let last_id = seen[1].id.clone().expect("events have ids");
    let (stream_no, seq) = seen[1].stream_and_seq();
    drop(first);
    std::thread::sleep(secs(1));

    let mut again = c.resume(&last_id);
    let rest = again.read_to_end();
    assert!(!rest.is_empty(), "nothing replayed after {last_id}");
    assert_eq!(
        rest[0].stream_and_seq(),
        (stream_no, seq + 1),
        "the replay starts right after Last-Event-ID"
    );
    assert_consecutive_ids(&rest, seq + 1);
    let all: Vec<Value> = seen
        .iter()
        .chain(&rest)
        .map(|e| e.message.clone())
        .collect();
    let (last, before) = all.split_last().unwrap();
    assert_increasing(&progress_values(before, "resume"));
    assert_eq!(
        last["id"], msg["id"],
        "the stream ends with the call's response"
    );
    assert_eq!(
        ok_text(&result_of(last)),
        format!("reported {steps} steps"),
        "the call ran to its end: it was not cancelled"
    );
    assert!(
        !server.stderr().contains("its client is gone"),
        "{}",
        server.stderr()
    );

    // The finished stream is kept: the same Last-Event-ID replays the same tail.
    let replayed = c.resume(&last_id).read_to_end();
    let ids = |events: &[SseEvent]| events.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&replayed), ids(&rest));
    assert_eq!(replayed.last().unwrap().message, *last);

    // An id of no stream of this session, and one that is not `<stream>-<n>`.
    c.get(&[("Last-Event-ID", "999-0")])
        .expect_error_status(404);
    c.get(&[("Last-Event-ID", "nonsense")])
        .expect_error_status(400);
}

/// Proves: a client may reconnect to a call's stream (GET with `Last-Event-ID`) while the server
/// still has the old connection (the client has not closed it, or the server has not noticed
/// yet): the new listener gets the rest of the stream and the result.
#[test]
fn a_reconnecting_listener_takes_over_a_stream_still_open() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    let steps = 1_000_000;
    let msg = call_with_progress(&mut c, "misbehave_progress", json!({"steps": steps}), "p");
    let mut first = c.post(&msg).expect_sse("POST tools/call");
    let e0 = first.next_event().unwrap();
    assert!(!e0.is_response(), "the call ended too soon: {e0:?}");
    let last_id = e0.id.clone().unwrap();

    let mut second = c.resume(&last_id);
    let rest = second.read_to_end();
    drop(first);
    let last = rest
        .last()
        .unwrap_or_else(|| panic!("the resumed stream ended without any event"));
    assert!(
        last.is_response(),
        "the resumed stream ended without the result; events: {:?}",
        rest.iter().map(|e| e.message.clone()).collect::<Vec<_>>()
    );
    assert_eq!(
        ok_text(&result_of(&last.message)),
        format!("reported {steps} steps")
    );
}

/// Proves: a client that goes away mid-call has the call cancelled once nobody reconnects within
/// the grace period (10 s): the server logs the cancellation of that request id and the plugin,
/// which checks `is-cancelled`, stops cleanly. Both when the client gave up before any byte of the
/// answer and when it drops an SSE stream already under way (a 2025-03-26 batch whose first call
/// logs). The session stays usable.
#[test]
fn a_client_that_disconnects_has_its_call_cancelled() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    let msg = call(&mut c, "misbehave_until_cancelled", json!({}));
    let id = msg["id"].clone();
    assert_eq!(
        c.post_and_give_up(&msg, Duration::from_secs(2)),
        None,
        "the call should still be running"
    );
    let needle = format!("request cancelled: its client is gone id={id}");
    assert!(
        server.wait_for_stderr(&needle, secs(60)),
        "no {needle:?} in the log after the client left"
    );
    assert!(
        server.wait_for_stderr(
            "misbehave saw the cancellation and stopped cleanly",
            secs(30)
        ),
        "the plugin did not see the cancellation"
    );
    let r = c.call_tool("misbehave_ok", json!({}));
    assert_eq!(ok_text(&r), "still fine");

    // A stream under way, then dropped.
    let mut old = server.client();
    old.initialize("2025-03-26");
    let log = call(
        &mut old,
        "misbehave_log",
        json!({"level": "info", "count": 1}),
    );
    let until = call(&mut old, "misbehave_until_cancelled", json!({}));
    let mut stream = old.post(&json!([log, until])).expect_sse("POST batch");
    let first = stream.next_event().unwrap();
    assert_eq!(
        first.message["method"], "notifications/message",
        "{first:?}"
    );
    drop(stream);
    let needle = format!("request cancelled: its client is gone id={}", until["id"]);
    assert!(
        server.wait_for_stderr(&needle, secs(60)),
        "no {needle:?} in the log after the stream was dropped"
    );
}

/// Proves: a request whose `Origin` is neither a loopback page nor allowed gets 403 on POST, GET
/// and DELETE (DNS rebinding protection), as does `Origin: null`; loopback pages
/// (`http://localhost:3000`, `http://127.0.0.1:5173`, `http://[::1]:8080`) and requests without
/// an Origin pass.
#[test]
fn origins_that_are_not_loopback_pages_are_refused() {
    let server = hello_and_misbehave();
    for good in [
        "http://localhost:3000",
        "http://127.0.0.1:5173",
        "http://[::1]:8080",
        "https://localhost",
    ] {
        let mut c = server.client();
        c.headers = vec![("Origin".into(), good.into())];
        c.initialize(LATEST_VERSION);
        let r = c.call_tool("hello_greet", json!({"name": "page"}));
        assert_eq!(ok_text(&r), "Hello, page!", "{good}");
    }
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    for bad in [
        "https://evil.example",
        "null",
        "http://localhost.evil.example",
        "http://127.0.0.1.evil.example:8080",
    ] {
        let msg = ping(&mut c);
        let why = c
            .post_with(&msg, &[("Origin", bad)])
            .expect_error_status(403);
        assert!(why.contains("Origin"), "{why}");
        c.get(&[("Origin", bad)]).expect_error_status(403);
        c.delete(&[("Origin", bad)]).expect_error_status(403);
        let mut fresh = server.client();
        fresh.headers = vec![("Origin".into(), bad.into())];
        let init = fresh.request_message(
            "initialize",
            json!({"protocolVersion": LATEST_VERSION, "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}),
        );
        fresh.post(&init).expect_error_status(403);
    }
    // The refused DELETEs left the session alive.
    let msg = ping(&mut c);
    assert_eq!(c.post(&msg).status, 200);
}

/// Proves: a `Host` header that names neither loopback nor an allowed host gets 403 (a page whose
/// DNS name was rebound to 127.0.0.1 sends its own name), while `localhost:PORT` and
/// `127.0.0.1:PORT` pass.
#[test]
fn hosts_that_are_not_loopback_are_refused() {
    let server = hello_and_misbehave();
    let port = server.addr.rsplit(':').next().unwrap().to_string();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    for bad in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("127.0.0.1.evil.example:{port}"),
    ] {
        let msg = ping(&mut c);
        let why = c
            .post_with(&msg, &[("Host", &bad)])
            .expect_error_status(403);
        assert!(why.contains("Host"), "{why}");
        c.get(&[("Host", &bad)]).expect_error_status(403);
    }
    for good in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let msg = ping(&mut c);
        let reply = c.post_with(&msg, &[("Host", &good)]);
        assert_eq!(reply.status, 200, "{good}: {reply:?}");
        reply.json();
    }
}

/// Proves: `[server.http] allowed_hosts` and `allowed_origins` let those names through besides
/// loopback, and nothing else.
#[test]
fn allowed_hosts_and_origins_come_from_the_configuration() {
    let (_dir, server) = with_http_config(
        "allowed_hosts = [\"mcp.internal\"]\nallowed_origins = [\"https://app.example.com\"]",
    );
    let port = server.addr.rsplit(':').next().unwrap().to_string();
    let mut c = server.client();
    c.headers = vec![
        ("Host".into(), format!("mcp.internal:{port}")),
        ("Origin".into(), "https://app.example.com".into()),
    ];
    c.initialize(LATEST_VERSION);
    let r = c.call_tool("hello_greet", json!({"name": "app"}));
    assert_eq!(ok_text(&r), "Hello, app!");
    let msg = ping(&mut c);
    c.post_with(&msg, &[("Origin", "https://app.example.com.evil")])
        .expect_error_status(403);
    c.post_with(&msg, &[("Origin", "https://other.example.com")])
        .expect_error_status(403);
    c.post_with(&msg, &[("Host", &format!("other.internal:{port}"))])
        .expect_error_status(403);
    // Loopback still passes.
    let reply = c.post_with(
        &msg,
        &[
            ("Host", &format!("localhost:{port}")),
            ("Origin", "http://localhost:8080"),
        ],
    );
    assert_eq!(reply.status, 200, "{reply:?}");
}

/// Proves: an `MCP-Protocol-Version` header naming no initialize-based revision makes a POST a
/// request of the stateless revision, which a session's message (no `_meta`) is not: 400; a GET
/// with it is 405 (the stateless revision has no GET stream); a header the session speaks passes.
#[test]
fn an_unsupported_protocol_version_header_gets_400() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize("2025-06-18");
    let msg = ping(&mut c);
    c.post_with(&msg, &[("MCP-Protocol-Version", "1999-01-01")])
        .expect_error_status(400);
    c.get(&[("MCP-Protocol-Version", "2099-12-31")])
        .expect_error_status(405);
    let reply = c.post_with(&msg, &[("MCP-Protocol-Version", "2025-06-18")]);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.json();
}

/// Proves: a body larger than `[server.http] max_body_mib` gets 413, a smaller one is served, and
/// the session is still usable after the refusal. (The 2 MiB POST goes over a plain socket: the
/// server answers 413 and closes without reading the body, and ureq reports the broken pipe of
/// its unfinished upload instead of reading that answer.)
#[test]
fn a_body_over_max_body_mib_gets_413() {
    let (_dir, server) = with_http_config("max_body_mib = 1");
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    let big = call(&mut c, "hello_greet", json!({"name": "x".repeat(2 << 20)}));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {}",
        server.addr,
        c.session_id.as_deref().unwrap()
    );
    let (status, answer) = raw_http(&server.addr, &head, big.to_string().as_bytes());
    assert_eq!(status, 413, "{answer}");
    let name = "y".repeat(512 << 10);
    let r = c.call_tool("hello_greet", json!({"name": name}));
    assert_eq!(ok_text(&r), format!("Hello, {name}!"));
}

/// Proves: JSON-RPC batches are served in a 2025-03-26 session: the responses come back together
/// as one array (plain JSON, or as the last event of a stream when a call logs first); a batch of
/// notifications gets 202; an empty batch, and any batch in a 2025-06-18 or 2025-11-25 session,
/// get 400.
#[test]
fn batches_only_in_a_2025_03_26_session() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize("2025-03-26");
    let p = ping(&mut c);
    let greet = call(&mut c, "hello_greet", json!({"name": "batch"}));
    let batch = json!([p, greet, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]);
    let reply = c.post(&batch);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.content_type(), "application/json");
    let responses = reply.json();
    check_definition("2025-03-26", "JSONRPCBatchResponse", &responses);
    let by_id = |id: &Value| {
        responses
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == *id)
            .cloned()
            .unwrap_or_else(|| panic!("no response to {id} in {responses}"))
    };
    assert_eq!(responses.as_array().unwrap().len(), 2, "{responses}");
    assert_eq!(by_id(&p["id"])["result"], json!({}));
    assert_eq!(ok_text(&result_of(&by_id(&greet["id"]))), "Hello, batch!");

    let log = call(
        &mut c,
        "misbehave_log",
        json!({"level": "info", "count": 2}),
    );
    let ok = call(&mut c, "misbehave_ok", json!({}));
    let mut stream = c.post(&json!([log, ok])).expect_sse("POST batch with logs");
    let events = stream.read_to_end();
    assert_consecutive_ids(&events, 0);
    let last = &events.last().unwrap().message;
    assert!(last.is_array(), "the batch response comes last: {last}");
    assert_eq!(last.as_array().unwrap().len(), 2, "{last}");
    let logs = events[..events.len() - 1]
        .iter()
        .filter(|e| e.message["method"] == "notifications/message")
        .count();
    assert_eq!(logs, 2, "{events:?}");

    let notes = json!([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]);
    let reply = c.post(&notes);
    assert_eq!(reply.status, 202, "{reply:?}");
    assert_eq!(reply.text(), "");
    c.post(&json!([])).expect_error_status(400);

    for version in ["2025-06-18", LATEST_VERSION] {
        let mut newer = server.client();
        newer.initialize(version);
        let p = ping(&mut newer);
        newer.post(&json!([p])).expect_error_status(400);
    }
}

/// Proves: a plugin's `sampling/createMessage` travels to the client on the call's SSE stream (a
/// valid `ServerRequest`), the client's answer is a POST of the JSON-RPC response (202, empty
/// body), and the result using the answer follows on the same stream, which then ends.
#[test]
fn a_plugin_samples_through_the_client_over_http() {
    let server = conformance();
    let mut c = server.client();
    c.initialize_with_capabilities(LATEST_VERSION, json!({"sampling": {}}));
    let msg = call(&mut c, "test_sampling", json!({"prompt": "What is 2+2?"}));
    let mut stream = c.post(&msg).expect_sse("POST test_sampling");
    let asked = stream.next_event().expect("a sampling request");
    let request = asked.message.clone();
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    assert_eq!(
        request["params"]["messages"][0]["content"],
        json!({"type": "text", "text": "What is 2+2?"}),
        "{request}"
    );
    assert_eq!(request["params"]["maxTokens"], 100, "{request}");
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"role": "assistant", "content": {"type": "text", "text": "4"},
                   "model": "test-model", "stopReason": "endTurn"}
    });
    let reply = c.post(&answer);
    assert_eq!(reply.status, 202, "{reply:?}");
    assert_eq!(reply.text(), "");
    let rest = stream.read_to_end();
    let last = &rest.last().expect("the result").message;
    assert_eq!(last["id"], msg["id"]);
    let result = result_of(last);
    check_definition(&c.version, "CallToolResult", &result);
    assert_eq!(ok_text(&result), "LLM response: 4");
    assert_eq!(asked.stream_and_seq().0, rest[0].stream_and_seq().0);
}

/// Proves: the same round trip for `elicitation/create`: the form request on the call's stream,
/// the client's accept by POST, and the answer in the result.
#[test]
fn a_plugin_elicits_through_the_client_over_http() {
    let server = conformance();
    let mut c = server.client();
    c.initialize_with_capabilities(LATEST_VERSION, json!({"elicitation": {}}));
    let msg = call(
        &mut c,
        "test_elicitation",
        json!({"message": "Who are you?"}),
    );
    let mut stream = c.post(&msg).expect_sse("POST test_elicitation");
    let request = stream.next_event().expect("an elicitation request").message;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(
        request["params"]["message"], "[plugin `conformance`] Who are you?",
        "{request}"
    );
    let content = json!({"username": "testuser", "email": "test@example.com"});
    let answer = json!({"jsonrpc": "2.0", "id": request["id"],
                        "result": {"action": "accept", "content": content}});
    assert_eq!(c.post(&answer).status, 202);
    let rest = stream.read_to_end();
    let result = result_of(&rest.last().expect("the result").message);
    let text = ok_text(&result);
    assert!(
        text.contains("action=accept") && text.contains("testuser"),
        "{text}"
    );
}

/// Proves: what belongs to no request goes on the standalone stream (GET): a
/// `notifications/resources/updated` for a subscribed resource, sent while no GET is open, waits
/// and is the first event of the next GET (id `0-0`); one sent while the GET is open arrives
/// there live (`0-1`), not on the POST that caused it; `Last-Event-ID: 0-0` replays what came
/// after. A GET whose Accept lacks `text/event-stream` gets 406.
#[test]
fn the_standalone_stream_carries_what_no_request_owns() {
    let server = conformance();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    c.get(&[("Accept", "application/json")])
        .expect_error_status(406);
    let uri = "test://watched-resource";
    c.result("resources/subscribe", json!({"uri": uri}));

    // Nobody listens yet: the update waits for the first GET.
    c.call_tool("test_trigger_resource_update", json!({}));
    let mut standalone = c.open_stream();
    let waited = standalone
        .next_event()
        .expect("the update sent before the stream was open");
    assert_eq!(waited.message["method"], "notifications/resources/updated");
    assert_eq!(waited.message["params"]["uri"], uri);
    assert_eq!(
        waited.stream_and_seq(),
        (0, 0),
        "the standalone stream is stream 0"
    );

    let ex = c.exchange(
        "tools/call",
        json!({"name": "test_trigger_resource_update", "arguments": {}}),
    );
    assert!(
        ex.before
            .iter()
            .all(|m| m["method"] != "notifications/resources/updated"),
        "the update belongs to no request: {:?}",
        ex.before
    );
    let live = standalone
        .next_event()
        .expect("an update on the standalone stream");
    assert_eq!(live.message["method"], "notifications/resources/updated");
    assert_eq!(live.stream_and_seq(), (0, 1));
    drop(standalone);

    let mut replay = c.resume("0-0");
    let again = replay.next_event().expect("the replayed update");
    assert_eq!(again.id, live.id);
    assert_eq!(again.message, live.message);
}

/// Proves: a server request not tied to a client request, `roots/list` after
/// `notifications/initialized` from a client that declared roots, goes on the standalone stream;
/// the client answers with a POST (202) and the next call sees the client's root.
#[test]
fn roots_list_travels_on_the_standalone_stream() {
    let tmp = tempdir();
    let project = tmp.path().join("project");
    write_file(project.join("a.txt"), "from the client\n");
    let server = HttpServer::start(&["--no-watch", "--plugin", &plugin_arg("files")]);
    let mut c = server.client();
    c.initialize_with_capabilities(LATEST_VERSION, json!({"roots": {"listChanged": true}}));
    let mut standalone = c.open_stream();
    let request = standalone
        .next_event()
        .expect("a roots/list request")
        .message;
    assert_eq!(request["method"], "roots/list", "{request}");
    let uri = format!("file://{}", path_str(&project));
    let answer = json!({"jsonrpc": "2.0", "id": request["id"],
                        "result": {"roots": [{"uri": uri, "name": "The project"}]}});
    let reply = c.post(&answer);
    assert_eq!(reply.status, 202, "{reply:?}");
    let r = c.call_tool(
        "files_read_file",
        json!({"path": format!("{}/a.txt", path_str(&project))}),
    );
    assert!(ok_text(&r).contains("from the client"), "{r}");
}

/// Proves: a client that opens the standalone stream again while the server still holds the
/// previous one gets the session's messages on the new one.
#[test]
fn a_second_standalone_stream_replaces_the_first() {
    let server = conformance();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    c.result(
        "resources/subscribe",
        json!({"uri": "test://watched-resource"}),
    );
    let first = c.open_stream();
    let mut second = c.open_stream();
    c.call_tool("test_trigger_resource_update", json!({}));
    let update = second.next_event_within(secs(10));
    drop(first);
    let update = update.expect("the second standalone stream ended without the update");
    assert_eq!(update.message["method"], "notifications/resources/updated");
}

/// Proves: DELETE ends what is left of the session: its open standalone stream ends (the client
/// sees the end of the response) instead of staying open, with keep-alives, on a session that no
/// longer exists.
#[test]
fn delete_ends_the_sessions_open_stream() {
    let server = hello_and_misbehave();
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    let mut stream = c.open_stream();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Returns when the stream ends, cleanly (`None`) or not (a read error, caught), or when
        // the server is killed at the end of the test.
        let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            stream.next_event_within(secs(600))
        }));
        let _ = tx.send(next.ok().flatten().map(|e| e.message));
    });
    let reply = c.delete(&[]);
    assert_eq!(reply.status, 204, "{reply:?}");
    match rx.recv_timeout(secs(10)) {
        Ok(None) => {}
        Ok(Some(message)) => panic!("an event after DELETE: {message}"),
        Err(_) => panic!("the standalone stream is still open 10 s after DELETE ended its session"),
    }
}

/// Proves: a session with no request and no open stream for longer than
/// `session_idle_timeout_s` is forgotten (404 afterwards, and the server logs it), while an open
/// standalone stream keeps a session alive however long it is idle.
#[test]
fn idle_sessions_expire() {
    let (_dir, server) = with_http_config("session_idle_timeout_s = 1");
    let mut idle = server.client();
    idle.initialize(LATEST_VERSION);
    let mut kept = server.client();
    kept.initialize(LATEST_VERSION);
    let stream = kept.open_stream();
    std::thread::sleep(secs(3));
    let msg = ping(&mut idle);
    idle.post(&msg).expect_error_status(404);
    assert!(server.wait_for_stderr("HTTP session expired", secs(5)));
    let msg = ping(&mut kept);
    let reply = kept.post(&msg);
    assert_eq!(
        reply.status, 200,
        "an open stream keeps the session: {reply:?}"
    );
    reply.json();
    drop(stream);
    std::thread::sleep(secs(3));
    let msg = ping(&mut kept);
    kept.post(&msg).expect_error_status(404);
}
