//! tools/list and tools/call: names, order, schemas, pagination, the hello
//! plugin's results, argument validation, concurrency, cancellation and
//! shutdown with calls in flight.

use palisade_tests::*;
use serde_json::{Value, json};
use std::time::Duration;

fn start(plugins: &[&str]) -> Server {
    let mut b = Server::builder();
    for p in plugins {
        b = b.arg("--plugin").arg(plugin_path(p));
    }
    let mut s = b.start();
    s.initialize(LATEST_VERSION);
    // Plugins load in the background; a test timing a call must not time the load too.
    s.wait_ready();
    s
}

fn find_tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", tool_names(tools)))
}

fn assert_sorted_unique(names: &[String]) {
    let mut sorted = names.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        names,
        sorted.as_slice(),
        "tools must be listed sorted by name, without duplicates"
    );
}

#[test]
fn hello_tools_are_listed_with_usable_schemas() {
    let mut s = start(&["hello"]);
    let (tools, pages) = s.list_all_tools();
    assert_eq!(
        pages.len(),
        1,
        "two tools fit in one default page: {pages:?}"
    );
    let names = tool_names(&tools);
    assert_eq!(names, ["hello_echo", "hello_greet"], "tools of hello");

    for t in &tools {
        let name = t["name"].as_str().unwrap();
        assert!(
            t["description"]
                .as_str()
                .is_some_and(|d| !d.trim().is_empty()),
            "{name} needs a description: {t}"
        );
        let schema = &t["inputSchema"];
        assert_eq!(
            schema["type"], "object",
            "{name}: inputSchema must be an object schema: {t}"
        );
        jsonschema::validator_for(schema).unwrap_or_else(|e| {
            panic!("{name}: inputSchema is not a valid JSON Schema ({e}): {schema}")
        });
        if let Some(out) = t.get("outputSchema") {
            jsonschema::validator_for(out).unwrap_or_else(|e| {
                panic!("{name}: outputSchema is not a valid JSON Schema ({e}): {out}")
            });
        }
    }

    let greet =
        jsonschema::validator_for(&find_tool(&tools, "hello_greet")["inputSchema"]).unwrap();
    assert!(greet.is_valid(&json!({"name": "Ada"})));
    assert!(
        !greet.is_valid(&json!({})),
        "greet's schema must require name"
    );
    assert!(
        !greet.is_valid(&json!({"name": 3})),
        "greet's name must be a string"
    );
    let echo = jsonschema::validator_for(&find_tool(&tools, "hello_echo")["inputSchema"]).unwrap();
    assert!(echo.is_valid(&json!({"text": "x"})));
    assert!(
        !echo.is_valid(&json!({})),
        "echo's schema must require text"
    );
}

#[test]
fn greet_and_echo() {
    let mut s = start(&["hello"]);
    let r = s.call_tool("hello_greet", json!({"name": "World"}));
    assert_eq!(ok_text(&r), "Hello, World!");
    assert_eq!(r["content"].as_array().map(Vec::len), Some(1), "{r}");

    let text = "héllo\n\t\"wörld\" 🌍 \\ </script> \u{0}";
    let r = s.call_tool("hello_echo", json!({"text": text}));
    assert_eq!(
        ok_text(&r),
        text,
        "echo must return the text unchanged: {r}"
    );
    assert_eq!(r["structuredContent"], json!({"text": text}), "{r}");

    // When a tool declares an output schema, its structured results must conform
    // (server/tools.mdx, "Output Schema": servers MUST).
    let (tools, _) = s.list_all_tools();
    if let Some(out) = find_tool(&tools, "hello_echo").get("outputSchema") {
        let v = jsonschema::validator_for(out).unwrap();
        assert!(
            v.is_valid(&r["structuredContent"]),
            "structuredContent {} vs outputSchema {out}",
            r["structuredContent"]
        );
    }

    let empty = s.call_tool("hello_echo", json!({"text": ""}));
    assert_eq!(ok_text(&empty), "");
    assert_eq!(empty["structuredContent"], json!({"text": ""}));
}

#[test]
fn arguments_not_matching_the_schema_are_a_tool_error() {
    let mut s = start(&["hello"]);
    for args in [
        json!({}),
        json!({"name": 42}),
        json!({"name": null}),
        json!({"nom": "x"}),
    ] {
        let r = s.call_tool("hello_greet", args.clone());
        error_text(&r, "invalid arguments");
    }
    let r = s.call_tool("hello_echo", json!({"text": ["not", "a", "string"]}));
    error_text(&r, "invalid arguments");
    // The plugin is fine afterwards.
    let r = s.call_tool("hello_greet", json!({"name": "again"}));
    assert_eq!(ok_text(&r), "Hello, again!");
}

#[test]
fn all_plugins_list_sorted_on_one_default_page() {
    let mut s = start(&["misbehave", "hello", "files"]);
    let result = s.result("tools/list", Value::Null);
    assert!(
        result.get("nextCursor").is_none_or(Value::is_null),
        "fewer than 50 tools need no second page: {result}"
    );
    let names = tool_names(result["tools"].as_array().unwrap());
    assert_sorted_unique(&names);
    for expected in [
        "files_list_dir",
        "files_list_roots",
        "files_read_file",
        "files_search",
        "hello_echo",
        "hello_greet",
        "misbehave_env",
        "misbehave_escape",
        "misbehave_flood_stdout",
        "misbehave_grow_memory",
        "misbehave_ok",
        "misbehave_panic",
        "misbehave_recurse",
        "misbehave_sleep",
        "misbehave_spin",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }
    // Deterministic: the same list again.
    let again = s.result("tools/list", Value::Null);
    assert_eq!(tool_names(again["tools"].as_array().unwrap()), names);
}

#[test]
fn pagination_with_a_small_page_size() {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[server]\npage_size = 2\n\n[plugins.hello]\npath = {}\n\n[plugins.files]\npath = {}\n\n[plugins.misbehave]\npath = {}\n",
            toml_str(&plugin_arg("hello")),
            toml_str(&plugin_arg("files")),
            toml_str(&plugin_arg("misbehave")),
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);

    let (tools, pages) = s.list_all_tools();
    let names = tool_names(&tools);
    assert!(names.len() >= 15, "{names:?}");
    assert_eq!(
        pages.len(),
        names.len().div_ceil(2),
        "pages of 2: {pages:?}"
    );
    assert!(
        pages.iter().all(|&n| n == 2 || n == 1) && pages[..pages.len() - 1].iter().all(|&n| n == 2),
        "{pages:?}"
    );
    assert_sorted_unique(&names);

    // Cursors are stable: asking again with the first cursor gives the same second page.
    let first = s.result("tools/list", Value::Null);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a first page of 2 has a nextCursor")
        .to_string();
    let second = s.result("tools/list", json!({"cursor": cursor}));
    let second_again = s.result("tools/list", json!({"cursor": cursor}));
    assert_eq!(
        tool_names(second["tools"].as_array().unwrap()),
        names[2..4].to_vec()
    );
    assert_eq!(second["tools"], second_again["tools"]);
    assert_eq!(second.get("nextCursor"), second_again.get("nextCursor"));

    // Invalid cursors are invalid params (server/utilities/pagination.mdx, Error Handling).
    for bad in ["not-a-cursor", "", "🙃"] {
        let resp = s.request("tools/list", json!({"cursor": bad}));
        assert_eq!(
            error_code(&resp),
            Some(INVALID_PARAMS),
            "cursor {bad:?}: {resp}"
        );
    }
    let resp = s.request("tools/list", json!({"cursor": 2}));
    assert_eq!(
        error_code(&resp),
        Some(INVALID_PARAMS),
        "a cursor that is not a string: {resp}"
    );
}

#[test]
fn pipelined_requests_get_their_own_answers() {
    let mut s = start(&["hello"]);
    // Fewer than the plugin's 16 concurrent calls (limits.concurrent_calls): on a loaded
    // machine all of them may be in flight at once, and a 17th would be refused by design.
    let ids: Vec<(Value, usize)> = (0..15)
        .map(|i| {
            (
                s.send_request(
                    "tools/call",
                    json!({"name": "hello_greet", "arguments": {"name": format!("n{i}")}}),
                ),
                i,
            )
        })
        .collect();
    for (id, i) in ids {
        let resp = s.wait_response(&id, default_timeout());
        let result = s.expect_result(resp);
        assert_eq!(
            ok_text(&result),
            format!("Hello, n{i}!"),
            "answer to request {id}"
        );
    }
}

#[test]
fn calls_run_concurrently() {
    let mut s = start(&["hello", "misbehave"]);
    s.timeout = secs(90);
    let slow = s.send_request(
        "tools/call",
        json!({"name": "misbehave_sleep", "arguments": {"ms": 8000}}),
    );
    let ping = s.send_request("ping", Value::Null);
    let greet = s.send_request(
        "tools/call",
        json!({"name": "hello_greet", "arguments": {"name": "meanwhile"}}),
    );

    // Collect the three answers in arrival order.
    let mut order = Vec::new();
    let mut slow_result = None;
    let deadline = std::time::Instant::now() + secs(90);
    while order.len() < 3 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let Some(m) = s.recv_timeout(left) else {
            s.fail(format!("only got answers to {order:?}"))
        };
        let Some(id) = m.get("id").cloned() else {
            continue;
        };
        if id == greet {
            assert_eq!(tool_text(&m["result"]), "Hello, meanwhile!", "{m}");
        }
        if id == slow {
            slow_result = Some(m["result"].clone());
        }
        order.push(id);
    }
    assert_eq!(
        order.last(),
        Some(&slow),
        "ping and hello_greet must not wait for misbehave_sleep: {order:?}"
    );
    assert!(order.contains(&ping) && order.contains(&greet), "{order:?}");
    let slow_result = slow_result.unwrap();
    assert!(
        !is_tool_error(&slow_result),
        "sleep within the limits is not an error: {slow_result}"
    );
    assert!(tool_text(&slow_result).contains("slept"), "{slow_result}");
}

#[test]
fn cancelled_call_is_stopped_and_never_answered() {
    let mut s = start(&["misbehave"]);
    let id = s.send_request(
        "tools/call",
        json!({"name": "misbehave_sleep", "arguments": {"ms": 20000}}),
    );
    // Give the call time to start running in the plugin.
    std::thread::sleep(Duration::from_millis(500));
    s.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test cancels it"}),
    );
    s.expect_no_response(&id, secs(1));

    // The server goes on.
    let r = s.call_tool("misbehave_ok", json!({}));
    assert_eq!(ok_text(&r), "still fine");

    // And it never answers the cancelled call: closing stdin waits only for
    // in-flight calls, and everything it wrote up to its exit is read.
    let status = s.close_stdin_and_wait(secs(60));
    assert_eq!(status.code(), Some(0), "{status}");
    s.expect_no_response(&id, Duration::ZERO);
}

#[test]
fn a_cancelled_plugin_can_see_it_and_stop_cleanly() {
    let mut s = start(&["misbehave"]);
    let id = s.send_request(
        "tools/call",
        json!({"name": "misbehave_until_cancelled", "arguments": {},
               "_meta": {"progressToken": "running"}}),
    );
    // Cancelled once it runs (its first progress report), not while it waits to start.
    s.wait_notification("notifications/progress", secs(30));
    s.notify("notifications/cancelled", json!({"requestId": id}));
    assert!(
        s.wait_for_stderr(
            "misbehave saw the cancellation and stopped cleanly",
            secs(10)
        ),
        "the plugin must be able to observe is-cancelled:\n{}",
        s.stderr()
    );
    s.expect_no_response(&id, secs(1));
    let r = s.call_tool("misbehave_ok", json!({}));
    assert_eq!(ok_text(&r), "still fine");
}

#[test]
fn cancelling_unknown_or_finished_requests_is_harmless() {
    let mut s = start(&["hello"]);
    let done = s.send_request(
        "tools/call",
        json!({"name": "hello_greet", "arguments": {"name": "done"}}),
    );
    let resp = s.wait_response(&done, default_timeout());
    assert_eq!(tool_text(&resp["result"]), "Hello, done!", "{resp}");
    s.notify(
        "notifications/cancelled",
        json!({"requestId": done, "reason": "too late"}),
    );
    s.notify(
        "notifications/cancelled",
        json!({"requestId": "never-sent"}),
    );
    s.notify("notifications/cancelled", json!({"no": "requestId"}));
    if let Some(m) = s.recv_timeout(secs(1)) {
        s.fail(format!(
            "cancellation notifications must not be answered, got {m}"
        ));
    }
    let r = s.call_tool("hello_greet", json!({"name": "after"}));
    assert_eq!(ok_text(&r), "Hello, after!");
}

#[test]
fn closing_stdin_lets_calls_in_flight_finish() {
    let mut s = start(&["misbehave"]);
    // Well inside the 2 s given to calls in flight once stdin closes, with room for a slow
    // machine to start it.
    let id = s.send_request(
        "tools/call",
        json!({"name": "misbehave_sleep", "arguments": {"ms": 800}}),
    );
    std::thread::sleep(Duration::from_millis(200));
    let status = s.close_stdin_and_wait(secs(90));
    assert_eq!(status.code(), Some(0), "{status}");
    let resp = s.wait_response(&id, Duration::ZERO);
    let result = s.expect_result(resp);
    assert!(!is_tool_error(&result), "{result}");
}

#[test]
fn progress_is_forwarded_increasing_rate_limited_and_before_the_response() {
    let mut s = start(&["misbehave"]);
    let resp = s.request(
        "tools/call",
        json!({"name": "misbehave_progress", "arguments": {"steps": 2000},
               "_meta": {"progressToken": "tok-1"}}),
    );
    let result = s.expect_result(resp);
    assert_eq!(ok_text(&result), "reported 2000 steps");
    let progress: Vec<&Value> = s
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(
        !progress.is_empty(),
        "progress reports must reach the client"
    );
    // 4000 reports (half of them backwards) must not become 4000 notifications.
    assert!(
        progress.len() < 400,
        "{} notifications: not rate-limited",
        progress.len()
    );
    let values: Vec<f64> = progress
        .iter()
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "tok-1", "{n}");
            n["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress must increase: {values:?}"
    );
    assert_eq!(
        values.last(),
        Some(&2000.0),
        "the last report is never dropped: {values:?}"
    );
    assert_eq!(progress.last().unwrap()["params"]["total"], 2000.0);
    // Nothing may follow the response.
    assert!(
        s.recv_timeout(Duration::from_millis(500)).is_none(),
        "no notification after the response"
    );
}

#[test]
fn no_progress_without_a_progress_token() {
    let mut s = start(&["misbehave"]);
    let result = s.call_tool("misbehave_progress", json!({"steps": 50}));
    assert_eq!(ok_text(&result), "reported 50 steps");
    assert!(
        s.notifications
            .iter()
            .all(|n| n["method"] != "notifications/progress"),
        "progress only goes to requests that asked for it: {:?}",
        s.notifications
    );
}
