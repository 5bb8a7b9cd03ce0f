//! Tool calls as tasks, end to end: a task outlives its plugin's per-call `timeout_ms` and
//! completes while the client polls; a spinning task is cancelled and its plugin is free again;
//! a task asks twice and each answer resumes it; another client gets what an unknown id gets;
//! the running cap holds. Over stdio in both wire forms (2025-11-25 sessions, and the
//! 2026-07-28 extension with `subscriptions/listen`), over Streamable HTTP sessions and over
//! stateless HTTP with two tokens. Every message is validated against its schema (the
//! extension's for task results).

use std::time::Duration;

use palisade_tests::*;
use serde_json::{Value, json};

/// The extension's identifier.
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A token and another, for the stateless HTTP test.
const ALICE: &str = "alice-token-0123456789abcdef";
const MALLORY: &str = "mallory-token-0123456789abcdef";

/// `misbehave` with a per-call time limit far below what its tasks take (and a task limit of
/// 2 s), `sleep`, `spin` and `ask_twice` allowed to run as tasks, and fast polling; `extra` goes
/// at the end.
fn config(dir: &std::path::Path, extra: &str) -> std::path::PathBuf {
    config_file(
        dir,
        &format!(
            r#"{}
[plugins.misbehave.limits]
timeout_ms = 400
concurrent_calls = 2
running_tasks = 2
task_timeout_s = 2

[plugins.misbehave.tools.sleep]
task = "optional"

[plugins.misbehave.tools.spin]
task = "optional"

[plugins.misbehave.tools.ask_twice]
task = "optional"

[tasks]
poll_interval_ms = 20
running_per_client = 2
{extra}
"#,
            plugin_sections(&["misbehave"])
        ),
    )
}

/// The capabilities of a 2026-07-28 request that declares the extension and elicitation.
fn extension_caps() -> Value {
    json!({ "elicitation": {}, "extensions": { TASKS: {} } })
}

fn status_is(status: &'static str) -> impl Fn(&Value) -> bool {
    move |task| task["status"] == status
}

/// Calls `misbehave_ok` until the plugin takes a call again (its concurrency was held by the
/// cancelled task): the cancelled guest stopped.
#[track_caller]
fn plugin_is_free_again(call_ok: impl FnMut() -> Value) {
    let result = poll_until(secs(10), call_ok, |r| !is_tool_error(r));
    assert_eq!(tool_text(&result), "still fine");
}

#[test]
fn tasks_in_a_2025_11_25_session_over_stdio() {
    let dir = tempdir();
    let config = config(dir.path(), "");
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    let init = s.initialize_with_capabilities("2025-11-25", json!({ "elicitation": {} }));
    assert_eq!(
        init["capabilities"]["tasks"]["requests"]["tools"]["call"],
        json!({})
    );
    let (tools, _) = s.list_all_tools();
    let sleep = tools
        .iter()
        .find(|t| t["name"] == "misbehave_sleep")
        .unwrap();
    assert_eq!(sleep["execution"]["taskSupport"], "optional");
    let ok = tools.iter().find(|t| t["name"] == "misbehave_ok").unwrap();
    assert!(ok.get("execution").is_none(), "{ok}");

    // The call takes far longer than the per-call limit: refused as a call, done as a task.
    error_text(
        &s.call_tool("misbehave_sleep", json!({ "ms": 1500 })),
        "time limit",
    );
    let created = s.result(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 1500 }, "task": { "ttl": 120000 } }),
    );
    let task = &created["task"];
    let id = task["taskId"].as_str().unwrap().to_string();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 120_000);
    assert_eq!(task["pollInterval"], 20);
    let listed = s.result("tasks/list", json!({}));
    assert!(
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == id)
    );
    // tasks/result waits for the end, and says which task it is about.
    let result = s.result("tasks/result", json!({ "taskId": id }));
    assert_eq!(tool_text(&result), "slept 1500 ms");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    assert_eq!(
        s.result("tasks/get", json!({ "taskId": id }))["status"],
        "completed"
    );
    let again = s.request("tasks/cancel", json!({ "taskId": id }));
    assert_eq!(error_code(&again), Some(-32602), "an ended task: {again}");

    // A task that asks twice: each question comes on the tasks/result stream, tied to the task.
    let created = s.result(
        "tools/call",
        json!({ "name": "misbehave_ask_twice", "arguments": { "key": "cats" }, "task": {} }),
    );
    let id = created["task"]["taskId"].as_str().unwrap().to_string();
    let waiting = s.send_request("tasks/result", json!({ "taskId": id }));
    for decision in ["yes", "very"] {
        let question = s.wait_server_request("elicitation/create", default_timeout());
        assert_eq!(
            question["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            id
        );
        s.respond(
            &question["id"],
            json!({ "action": "accept", "content": { "decision": decision } }),
        );
    }
    let response = s.wait_response(&waiting, default_timeout());
    let result = s.expect_result(response);
    assert_eq!(
        tool_text(&result),
        r#"answered: Some(String("yes")), Some(String("very"))"#
    );

    // Cancelling a spinning task stops its guest: the plugin's one other call slot is free.
    let spin = s.result(
        "tools/call",
        json!({ "name": "misbehave_spin", "arguments": {}, "task": {} }),
    );
    let id = spin["task"]["taskId"].as_str().unwrap().to_string();
    let busy = s.result(
        "tools/call",
        json!({ "name": "misbehave_spin", "arguments": {}, "task": {} }),
    );
    let cancelled = s.result("tasks/cancel", json!({ "taskId": id }));
    assert_eq!(cancelled["status"], "cancelled");
    let busy_id = busy["task"]["taskId"].as_str().unwrap().to_string();
    s.result("tasks/cancel", json!({ "taskId": busy_id }));
    plugin_is_free_again(|| s.call_tool("misbehave_ok", json!({})));
    let result = s.request("tasks/result", json!({ "taskId": id }));
    assert!(
        error_code(&result).is_some(),
        "a cancelled task has no result: {result}"
    );

    // A required tool cannot be called without a task; a forbidden one not with one.
    let refused = s.request(
        "tools/call",
        json!({ "name": "misbehave_ok", "arguments": {}, "task": {} }),
    );
    assert_eq!(error_code(&refused), Some(-32601), "{refused}");
    let unknown = s.request("tasks/get", json!({ "taskId": "0".repeat(32) }));
    assert_eq!(error_code(&unknown), Some(-32602), "{unknown}");
}

#[test]
fn tasks_of_the_extension_over_stdio_with_a_subscription() {
    let dir = tempdir();
    let config = config(dir.path(), "");
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    let caps = extension_caps();
    let discovered = s.stateless_result("server/discover", json!({}), &caps);
    assert_eq!(discovered["capabilities"]["extensions"][TASKS], json!({}));

    // Without the extension the optional tool runs as a call, and the tasks methods refuse.
    let plain = s.stateless_result(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 10 } }),
        &json!({}),
    );
    assert_eq!(tool_text(&plain), "slept 10 ms");
    let gated = s.stateless("tasks/get", json!({ "taskId": "x" }), &json!({}));
    assert_eq!(error_code(&gated), Some(-32021), "{gated}");

    let created = s.stateless_result(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 1000 } }),
        &caps,
    );
    assert_eq!(created["resultType"], "task");
    let id = created["taskId"].as_str().unwrap().to_string();
    // The subscription gets the task at once and again when it completes.
    let listen = s.send_stateless(
        "subscriptions/listen",
        json!({ "notifications": { "taskIds": [id, "someone-elses"] } }),
        &caps,
    );
    let ack = s.wait_notification(
        "notifications/subscriptions/acknowledged",
        default_timeout(),
    );
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    let done = loop {
        let note = s.wait_notification("notifications/tasks", default_timeout());
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            listen
        );
        if note["params"]["status"] == "completed" {
            break note;
        }
    };
    assert_eq!(tool_text(&done["params"]["result"]), "slept 1000 ms");
    s.notify("notifications/cancelled", json!({ "requestId": listen }));

    // A task that asks twice: each question waits in the task under a key of its own.
    let created = s.stateless_result(
        "tools/call",
        json!({ "name": "misbehave_ask_twice", "arguments": { "key": "cats" } }),
        &caps,
    );
    let id = created["taskId"].as_str().unwrap().to_string();
    let mut get = || s.stateless_result("tasks/get", json!({ "taskId": id }), &caps);
    let first = poll_until(default_timeout(), &mut get, status_is("input_required"));
    assert_eq!(
        first["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["cats"]
    );
    // The user takes longer to answer than the task may run (task_timeout_s = 2): waiting for
    // the client is not the task's time.
    std::thread::sleep(Duration::from_millis(2500));
    let answer = json!({ "cats": { "action": "accept", "content": { "decision": "yes" } } });
    let ack = s.stateless_result(
        "tasks/update",
        json!({ "taskId": id, "inputResponses": answer }),
        &caps,
    );
    assert_eq!(
        ack,
        json!({ "resultType": "complete", "_meta": ack["_meta"] })
    );
    let mut get = || s.stateless_result("tasks/get", json!({ "taskId": id }), &caps);
    let second = poll_until(default_timeout(), &mut get, |t| {
        t["status"] == "input_required" && t["inputRequests"].get("cats~2").is_some()
    });
    assert!(second["inputRequests"].get("cats").is_none(), "{second}");
    let answer = json!({ "cats~2": { "action": "decline" } });
    s.stateless_result(
        "tasks/update",
        json!({ "taskId": id, "inputResponses": answer }),
        &caps,
    );
    let mut get = || s.stateless_result("tasks/get", json!({ "taskId": id }), &caps);
    let done = poll_until(default_timeout(), &mut get, status_is("completed"));
    assert_eq!(
        tool_text(&done["result"]),
        r#"answered: Some(String("yes")), None"#,
        "a declined question has no decision: {done}"
    );
}

/// The official TypeScript SDK's tasks API drives tasks in a 2025-11-25 session
/// (tests/clients/ts_tasks.mjs asserts each step).
#[test]
fn the_typescript_sdk_runs_tasks() {
    let dir = tempdir();
    let config = config(dir.path(), "");
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    run_node_client("ts_tasks.mjs", &[&server.url], &|| server.stderr());
}

#[test]
fn tasks_in_a_streamable_http_session() {
    let dir = tempdir();
    let config = config(dir.path(), "");
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let mut client = server.client();
    client.initialize("2025-11-25");
    let created = client.result(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 1200 }, "task": {} }),
    );
    let id = created["task"]["taskId"].as_str().unwrap().to_string();
    let result = client.result("tasks/result", json!({ "taskId": id }));
    assert_eq!(tool_text(&result), "slept 1200 ms");

    // Another session is another owner: the task is not its to see.
    let mut other = server.client();
    other.initialize("2025-11-25");
    let theirs = other
        .exchange("tasks/get", json!({ "taskId": id }))
        .response;
    assert_eq!(error_code(&theirs), Some(-32602), "{theirs}");
    assert_eq!(other.result("tasks/list", json!({}))["tasks"], json!([]));
}

#[test]
fn tasks_over_stateless_http_belong_to_their_token() {
    let dir = tempdir();
    let auth = format!(
        r#"
[telemetry]
metrics_listen = "127.0.0.1:0"

[audit]
path = "audit.jsonl"

[[auth.tokens]]
name = "alice"
sha256 = "{}"
scope = "all"

[[auth.tokens]]
name = "mallory"
sha256 = "{}"
scope = "all"
"#,
        sha256_hex(ALICE),
        sha256_hex(MALLORY)
    );
    let config = config(dir.path(), &auth);
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let client = |token: &str| {
        let mut client = server.stateless_client();
        client
            .headers
            .push(("Authorization".into(), format!("Bearer {token}")));
        client
    };
    let (mut alice, mut mallory) = (client(ALICE), client(MALLORY));
    let caps = extension_caps();
    let created = alice.stateless_result(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 1000 } }),
        &caps,
    );
    let id = created["taskId"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32, "128 random bits: {id}");
    // Mallory gets exactly what an unknown id gets, whatever she asks.
    for method in ["tasks/get", "tasks/cancel"] {
        let theirs = mallory.stateless_message(method, json!({ "taskId": id }), &caps);
        let theirs = mallory.stateless_exchange(&theirs, &[]).response;
        let unknown = mallory.stateless_message(method, json!({ "taskId": "f".repeat(32) }), &caps);
        let unknown = mallory.stateless_exchange(&unknown, &[]).response;
        assert_eq!(error_code(&theirs), Some(-32602), "{theirs}");
        assert_eq!(
            theirs["error"]["message"]
                .as_str()
                .unwrap()
                .replace(&id, "ID"),
            unknown["error"]["message"]
                .as_str()
                .unwrap()
                .replace(&"f".repeat(32), "ID"),
        );
    }
    let mut get = || alice.stateless_result("tasks/get", json!({ "taskId": id }), &caps);
    let done = poll_until(default_timeout(), &mut get, status_is("completed"));
    assert_eq!(tool_text(&done["result"]), "slept 1000 ms");
    assert_eq!(done["result"]["resultType"], "complete");

    // Two tasks running is Alice's cap; a third waits for one to end. The second of the plugin's
    // two call slots is the spinning task's: cancelling it frees the plugin.
    let start = |client: &mut HttpClient, tool: &str, arguments: Value| {
        let message = client.stateless_message(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
            &caps,
        );
        client.stateless_exchange(&message, &[]).response
    };
    let long = start(&mut alice, "misbehave_sleep", json!({ "ms": 60_000 }));
    let spin = start(&mut alice, "misbehave_spin", json!({}));
    let third = start(&mut alice, "misbehave_sleep", json!({ "ms": 10 }));
    assert!(
        third["error"]["message"]
            .as_str()
            .unwrap()
            .contains("running_per_client"),
        "{third}"
    );
    let spin_id = spin["result"]["taskId"].as_str().unwrap().to_string();
    let ack = alice.stateless_result("tasks/cancel", json!({ "taskId": spin_id }), &caps);
    assert_eq!(ack["resultType"], "complete");
    let mut get = || alice.stateless_result("tasks/get", json!({ "taskId": spin_id }), &caps);
    poll_until(default_timeout(), &mut get, status_is("cancelled"));
    plugin_is_free_again(|| {
        alice.stateless_result(
            "tools/call",
            json!({ "name": "misbehave_ok", "arguments": {} }),
            &json!({}),
        )
    });
    let long_id = long["result"]["taskId"].as_str().unwrap().to_string();

    // Operators see them: running and ended tasks in the metrics, each step in the audit log.
    let stderr = server.stderr();
    let at = stderr
        .split("palisade: metrics on http://")
        .nth(1)
        .expect("metrics address");
    let metrics = at.split('/').next().unwrap();
    let (_, text) = http_get(&format!("http://{metrics}/metrics"), &[]);
    for line in [
        r#"palisade_tasks_running{plugin="misbehave",status="working"} 1"#,
        r#"palisade_tasks_ended_total{plugin="misbehave",status="completed"} 1"#,
        r#"palisade_tasks_ended_total{plugin="misbehave",status="cancelled"} 1"#,
    ] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
    alice.stateless_result("tasks/cancel", json!({ "taskId": long_id }), &caps);
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    let of = |task: &str, outcome: &str| {
        audit.lines().any(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            line["task"]["id"] == task
                && line["outcome"] == outcome
                && line["owner"] == "token alice"
        })
    };
    assert!(of(&id, "task-created") && of(&id, "task-ended"), "{audit}");
    assert!(of(&spin_id, "task-cancelled"), "{audit}");
}
