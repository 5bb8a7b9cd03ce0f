//! Replicas sharing one Redis (`[cluster]`): a client's allowance, a plugin's running calls and
//! its fuel budget are counted once across every replica; while Redis cannot answer, calls meet
//! the failure policy within `timeout_ms` (never a hang) and are served again once it is back;
//! the password, TLS and `palisade status`. Redis is Debian's `redis-server` (`./dev test`
//! installs it), started by each test on 127.0.0.1; the balancer is nginx, round robin.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use palisade_tests::*;
use serde_json::{Value, json};

const TOKEN: &str = "cluster-test-token-7f3a9c2e51d84b06";

/// `<dir>/palisade.toml`: `[cluster]` with `cluster` (the `redis = ...` line and more), the
/// token `alice`, and misbehave under `limits`.
fn config(dir: &Path, cluster: &str, limits: &str) -> String {
    let path = config_file(
        dir,
        &format!(
            "[server]\nwatch = false\n\n[cluster]\n{cluster}\n\n[[auth.tokens]]\nname = \"alice\"\n\
             sha256 = \"{}\"\nscope = \"all\"\n\n[plugins.misbehave]\npath = {}\n\n\
             [plugins.misbehave.limits]\n{limits}\n",
            sha256_hex(TOKEN),
            toml_str(&plugin_arg("misbehave"))
        ),
    );
    path_str(&path)
}

fn replica(config: &str) -> HttpServer {
    HttpServer::start(&["--no-watch", "--config", config])
}

/// A 2026-07-28 client of `url` with alice's token: each call a request of its own, so any
/// replica can serve it.
fn client(url: &str) -> HttpClient {
    let mut c = HttpClient::new(url);
    c.version = STATELESS_VERSION.to_string();
    c.headers
        .push(("Authorization".into(), format!("Bearer {TOKEN}")));
    c
}

/// Calls `tool`: the result, and the replica that answered (nginx's `X-Upstream`, if any).
fn call(c: &mut HttpClient, tool: &str, arguments: Value) -> (Value, Option<String>) {
    let message = c.stateless_message(
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        &json!({}),
    );
    let answer = c.stateless_exchange(&message, &[]);
    (answer.result(), answer.header("x-upstream"))
}

fn ok(c: &mut HttpClient) -> Value {
    call(c, "misbehave_ok", json!({})).0
}

/// Calls `misbehave_ok` until `done` says yes of a result, for at most `within`; the last.
fn ok_until(c: &mut HttpClient, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let r = ok(c);
        if done(&r) || Instant::now() > deadline {
            return r;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

const CLIENT_RATE: &str =
    "was called more than 60 times a minute by this client (limits.calls_per_minute_per_client)";
const UNAVAILABLE: &str = "the limits this server shares with its cluster cannot be checked";

/// Proves: behind nginx's plain round robin, three replicas sharing Redis give a client 60
/// calls a minute in all, not 60 each: of 120 calls in a burst, 60 and the few the bucket
/// regains while they run are served, the rest refused with the message a lone server gives;
/// and every replica served some.
#[test]
fn three_replicas_behind_nginx_give_a_client_one_allowance() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let config = config(
        dir.path(),
        &format!("redis = \"{}\"", redis.url()),
        "calls_per_minute_per_client = 60\ncalls_per_minute = 100000",
    );
    let replicas: Vec<HttpServer> = (0..3).map(|_| replica(&config)).collect();
    for r in &replicas {
        r.process.wait_ready();
    }
    let nginx = Nginx::start(&replicas.iter().map(|r| r.addr.as_str()).collect::<Vec<_>>());
    let mut c = client(&nginx.url);

    let started = Instant::now();
    let (mut served, mut refused) = (0u32, 0u32);
    let mut upstreams = BTreeSet::new();
    for _ in 0..120 {
        let (r, upstream) = call(&mut c, "misbehave_ok", json!({}));
        upstreams.extend(upstream);
        if is_tool_error(&r) {
            let text = tool_text(&r);
            assert!(text.contains(CLIENT_RATE), "{r}");
            assert!(text.contains("retry in"), "{r}");
            refused += 1;
        } else {
            served += 1;
        }
    }
    // One more call a second comes back while the burst runs.
    let regained = started.elapsed().as_secs() as u32 + 1;
    assert!(
        (60..=60 + regained).contains(&served),
        "served {served} of 120 calls in {:?} (refused {refused}); 60 + at most {regained} expected\n{}",
        started.elapsed(),
        nginx.logs()
    );
    assert_eq!(upstreams.len(), 3, "nginx used {upstreams:?}");
}

/// Proves: a plugin's running calls are capped across replicas (one call at once: a call on B
/// while A runs one is refused with the usual message, and served once A's call is done), and
/// so is its fuel budget (a call that drains it on A makes B refuse the next). A's slot goes
/// back to Redis just after its answer, not before (the call's path has one round trip), so B
/// may be refused for that moment: it retries, as the message asks.
#[test]
fn running_calls_and_the_fuel_budget_are_counted_across_replicas() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let config = config(
        dir.path(),
        &format!("redis = \"{}\"", redis.url()),
        "concurrent_calls = 1\nfuel_burst = 300000000\nfuel_per_second = 10000000\n\
         fuel_per_call = 1000000000\ntimeout_ms = 20000",
    );
    let (a, b) = (replica(&config), replica(&config));
    a.process.wait_ready();
    b.process.wait_ready();
    let (mut on_a, mut on_b) = (client(&a.url), client(&b.url));

    // B's calls hold the one slot for a moment each: A retries until its sleep got it.
    let sleeping = std::thread::spawn(move || {
        let deadline = Instant::now() + secs(10);
        loop {
            let r = call(&mut on_a, "misbehave_sleep", json!({"ms": 3000})).0;
            if !is_tool_error(&r) || Instant::now() > deadline {
                return (r, on_a);
            }
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    let r = ok_until(&mut on_b, secs(10), is_tool_error);
    let text = error_text(&r, "is already running 1 calls");
    assert!(text.contains("limits.concurrent_calls"), "{text}");
    let (slept, mut on_a) = sleeping.join().unwrap();
    assert_eq!(tool_text(&slept), "slept 3000 ms", "{slept}");
    let r = ok_until(&mut on_b, secs(2), |r| !is_tool_error(r));
    assert!(!is_tool_error(&r), "the slot came back: {r}");

    // One spin burns its whole 1e9 allowance: the 3e8 budget is 7e8 in debt.
    let spun = call(&mut on_a, "misbehave_spin", json!({})).0;
    error_text(&spun, "out of fuel");
    // B may first meet the spin's slot, on its way back (see above).
    let r = ok_until(&mut on_b, secs(10), |r| {
        is_tool_error(r) && tool_text(r).contains("fuel budget")
    });
    let text = error_text(&r, "has used up its fuel budget");
    assert!(text.contains("limits.fuel_per_second"), "{text}");
}

/// Proves: with Redis stopped, a call is refused (`fail = "closed"`, the default) with a
/// message saying why, not held; with Redis frozen (it takes connections and never answers)
/// too, within the timeout; once Redis is back (restarted, empty), calls are served again
/// without restarting the replica.
#[test]
fn while_redis_is_down_calls_are_refused_and_served_again_once_it_is_back() {
    let mut redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let config = config(
        dir.path(),
        &format!("redis = \"{}\"\ntimeout_ms = 300", redis.url()),
        "",
    );
    let server = replica(&config);
    let mut c = client(&server.url);
    assert!(!is_tool_error(&ok(&mut c)));

    redis.stop();
    let r = ok(&mut c);
    let text = error_text(&r, UNAVAILABLE);
    assert!(text.contains("fail = \"closed\""), "{text}");
    assert!(!text.contains(&redis.service.addr), "no address: {text}");

    redis.restart();
    let r = ok_until(&mut c, secs(15), |r| !is_tool_error(r));
    assert!(
        !is_tool_error(&r),
        "still refused after Redis came back: {r}"
    );

    redis.service.signal("STOP");
    let r = ok(&mut c);
    redis.service.signal("CONT");
    error_text(&r, UNAVAILABLE);
    let r = ok_until(&mut c, secs(15), |r| !is_tool_error(r));
    assert!(!is_tool_error(&r), "still refused after Redis thawed: {r}");
    assert!(
        server.stderr().contains("shared limits not checked"),
        "the replica logs why it refused:\n{}",
        server.stderr()
    );
}

/// Proves: with `fail = "open"`, a replica serves while Redis is down, under its own limits
/// (here 3 calls a minute for the client, then the usual refusal).
#[test]
fn fail_open_serves_under_each_replicas_own_limits() {
    let mut redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let config = config(
        dir.path(),
        &format!(
            "redis = \"{}\"\nfail = \"open\"\ntimeout_ms = 300",
            redis.url()
        ),
        "calls_per_minute_per_client = 3",
    );
    let server = replica(&config);
    let mut c = client(&server.url);
    redis.stop();
    for _ in 0..3 {
        let r = ok(&mut c);
        assert!(!is_tool_error(&r), "{r}");
    }
    error_text(
        &ok(&mut c),
        "was called more than 3 times a minute by this client",
    );
}

/// Proves: a Redis with a password: the right one from `password_env` is used (calls are
/// counted in Redis); a wrong one stops the start with a message that says so and never shows
/// the password.
#[test]
fn a_password_protected_redis_takes_the_right_password_and_refuses_a_wrong_one() {
    let redis = Redis::start(RedisOptions {
        password: Some("correct-horse-battery".into()),
        tls: None,
    });
    let dir = tempdir();
    let config = config(
        dir.path(),
        &format!(
            "redis = \"{}\"\npassword_env = \"PALISADE_TEST_REDIS_PASSWORD\"",
            redis.url()
        ),
        "",
    );
    let server = HttpServer::start_with(
        Server::builder()
            .args(["--no-watch", "--config", &config])
            .env("PALISADE_TEST_REDIS_PASSWORD", "correct-horse-battery"),
    );
    let mut c = client(&server.url);
    assert!(!is_tool_error(&ok(&mut c)));
    let keys = redis.cli(&["--scan", "--pattern", "palisade:limits:*"]);
    assert!(keys.contains("palisade:limits:{misbehave}:calls"), "{keys}");

    // The wrong password in the URL this time.
    let wrong_url = redis.url().replace("redis://", "redis://:wrong-staple@");
    let wrong_dir = tempdir();
    let wrong = self::config(wrong_dir.path(), &format!("redis = \"{wrong_url}\""), "");
    let out = assert_serve_refused(&["--config", &wrong], "refused this server");
    assert!(!out.stderr.contains("wrong-staple"), "{out}");
}

/// Proves: `rediss://` with `ca_file` naming a private authority: the TLS connection works
/// and `palisade status` says it is TLS.
#[test]
fn redis_over_tls_with_a_private_authority() {
    let certs = tempdir();
    let (ca, cert, key) = loopback_tls_certificate(certs.path());
    let redis = Redis::start(RedisOptions {
        password: None,
        tls: Some((cert, key)),
    });
    let dir = tempdir();
    let config = config(
        dir.path(),
        &format!(
            "redis = \"{}\"\nca_file = {}",
            redis.url(),
            toml_str(&path_str(&ca))
        ),
        "",
    );
    let server = replica(&config);
    let mut c = client(&server.url);
    let r = ok(&mut c);
    assert!(!is_tool_error(&r), "{r}\n{}", server.stderr());
    let status = run_palisade(&["status", "--config", &config], false, secs(60));
    assert!(status.success(), "{status}");
    assert!(status.stdout.contains("(TLS)"), "{status}");
}

/// Proves: `palisade status` lists each replica serving (its URL) with Redis's round trip,
/// and exits 1 saying Redis does not answer once it is stopped.
#[test]
fn status_shows_the_replicas_and_redis() {
    let mut redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let config = config(dir.path(), &format!("redis = \"{}\"", redis.url()), "");
    let (a, b) = (replica(&config), replica(&config));
    let deadline = Instant::now() + secs(20);
    let status = loop {
        let status = run_palisade(&["status", "--config", &config], false, secs(60));
        let both = status.stdout.contains(&a.url) && status.stdout.contains(&b.url);
        if both || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(status.success(), "{status}");
    for needle in [
        "redis     answers: round trip",
        "2 seen in the last 15 s",
        &a.url,
        &b.url,
    ] {
        assert!(status.stdout.contains(needle), "{needle:?}:\n{status}");
    }

    redis.stop();
    let status = run_palisade(&["status", "--config", &config], false, secs(60));
    assert!(!status.success(), "{status}");
    assert!(
        status.stdout.contains("redis     does not answer"),
        "{status}"
    );
}

/// misbehave's `sleep`, `spin` and `ask_twice` may run as tasks, one call at a time (after
/// `[plugins.misbehave.limits]`).
const TASK_TOOLS: &str = "concurrent_calls = 1\n\n[plugins.misbehave.tools.sleep]\ntask = \"optional\"\n\n\
                          [plugins.misbehave.tools.spin]\ntask = \"optional\"\n\n\
                          [plugins.misbehave.tools.ask_twice]\ntask = \"optional\"\n\n\
                          [tasks]\npoll_interval_ms = 20\n";

/// Polls `tasks/get` for `id` through `c` until `done` says yes of the task; the task.
fn task_until(c: &mut HttpClient, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let caps = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    poll_until(
        secs(20),
        || c.stateless_result("tasks/get", json!({ "taskId": id }), &caps),
        done,
    )
}

/// A task is one for every replica: created on one, it is read, answered and cancelled on
/// another (which the runner hears at once); `palisade status` lists it; and when the replica
/// that runs it dies, the task fails once that replica's lease runs out.
#[test]
fn tasks_are_shared_by_the_replicas_and_outlive_a_dead_one_as_failed() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let cluster = format!("redis = \"{}\"\ntask_lease_s = 2", redis.url());
    let config = config(dir.path(), &cluster, TASK_TOOLS);
    let (a, b) = (replica(&config), replica(&config));
    let (mut on_a, mut on_b) = (client(&a.url), client(&b.url));
    let caps = json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let start = |c: &mut HttpClient, tool: &str, arguments: Value| -> String {
        let created = c.stateless_result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
            &caps,
        );
        assert_eq!(created["resultType"], "task", "{created}");
        created["taskId"].as_str().unwrap().to_string()
    };

    // Asked on A, answered on B, twice; the result read on B.
    let id = start(&mut on_a, "misbehave_ask_twice", json!({ "key": "cats" }));
    let waiting = |key: &'static str| {
        move |t: &Value| t["status"] == "input_required" && t["inputRequests"].get(key).is_some()
    };
    task_until(&mut on_b, &id, waiting("cats"));
    for (key, decision) in [("cats", "yes"), ("cats~2", "very")] {
        if key != "cats" {
            task_until(&mut on_b, &id, waiting("cats~2"));
        }
        let answer = json!({ key: { "action": "accept", "content": { "decision": decision } } });
        on_b.stateless_result(
            "tasks/update",
            json!({ "taskId": id, "inputResponses": answer }),
            &caps,
        );
    }
    let done = task_until(&mut on_b, &id, |t| t["status"] == "completed");
    assert_eq!(
        tool_text(&done["result"]),
        r#"answered: Some(String("yes")), Some(String("very"))"#
    );

    // Spinning on A, cancelled on B: A stops it, and its one call slot is free again.
    let id = start(&mut on_a, "misbehave_spin", json!({}));
    on_b.stateless_result("tasks/cancel", json!({ "taskId": id }), &caps);
    task_until(&mut on_b, &id, |t| t["status"] == "cancelled");
    let freed = ok_until(&mut on_a, secs(10), |r| !is_tool_error(r));
    assert_eq!(tool_text(&freed), "still fine");

    // A task running on A: listed by `palisade status`, failed once A is gone.
    let id = start(&mut on_a, "misbehave_sleep", json!({ "ms": 600_000 }));
    let status = run_palisade(&["status", "--config", &config], false, secs(60));
    assert!(status.stdout.contains("tasks     1 running"), "{status}");
    assert!(status.stdout.contains(&id), "{status}");
    let mut a = a;
    a.process.kill();
    let failed = task_until(&mut on_b, &id, |t| t["status"] == "failed");
    let why = failed["error"]["message"].as_str().unwrap();
    assert!(why.contains("stopped"), "{failed}");
}

const WATCHED_URI: &str = "test://watched-resource";

/// `<dir>/palisade.toml` serving the conformance fixtures (reloading on: a plugin's list
/// change relists it) in the cluster at `redis_url`.
fn conformance_config(dir: &Path, redis_url: &str) -> String {
    let path = config_file(
        dir,
        &format!(
            "[cluster]\nredis = \"{redis_url}\"\n\n[plugins.conformance]\npath = {}\nprefix = \"\"\n",
            toml_str(&plugin_arg("conformance"))
        ),
    );
    path_str(&path)
}

/// The next message on `stream` within `within`, if any.
fn next_message(stream: &mut SseStream, within: Duration) -> Option<Value> {
    stream.next_event_within(within).map(|e| e.message)
}

/// Proves: a change a plugin reports during a call on replica A reaches clients listening on
/// replica B, once: a 2026-07-28 `subscriptions/listen` stream hears the resource update and
/// the tool list change (B relists the plugin itself), and an initialize-based session's GET
/// stream on B hears the update of the resource it subscribed to. Nothing comes twice.
#[test]
fn a_change_on_one_replica_reaches_listeners_on_another_once() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let config = conformance_config(dir.path(), &redis.url());
    let (a, b) = (
        HttpServer::start(&["--config", &config]),
        HttpServer::start(&["--config", &config]),
    );
    a.process.wait_ready();
    b.process.wait_ready();

    // Listening on B, without a session.
    let listener = b.stateless_client();
    let listen = stateless_message(
        json!("listen-on-b"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": [WATCHED_URI]}}),
        &json!({}),
    );
    let mut listening = listener
        .post_stateless(&listen, &[])
        .expect_sse("subscriptions/listen");
    let ack = next_message(&mut listening, startup_timeout()).expect("an acknowledgment");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );

    // A session on B, subscribed to the resource, with its GET stream open.
    let mut session = b.client();
    session.initialize(LATEST_VERSION);
    session.result("resources/subscribe", json!({"uri": WATCHED_URI}));
    let mut standalone = session.open_stream();

    // The calls run on A.
    let mut on_a = a.stateless_client();
    let trigger = |c: &mut HttpClient, tool: &str| {
        let r = c.stateless_result(
            "tools/call",
            json!({"name": tool, "arguments": {}}),
            &json!({}),
        );
        assert!(!is_tool_error(&r), "{r}");
    };
    // Each stream hears each change once: what comes next is always the next change.
    let expect = |stream: &mut SseStream, method: &str, what: &str| {
        let heard = next_message(stream, secs(30))
            .unwrap_or_else(|| panic!("{what} ended before {method}"));
        assert_eq!(heard["method"], method, "{what}: {heard}");
    };
    for _ in 0..2 {
        trigger(&mut on_a, "test_trigger_resource_update");
        expect(
            &mut listening,
            "notifications/resources/updated",
            "the listener on B",
        );
        expect(
            &mut standalone,
            "notifications/resources/updated",
            "the session on B",
        );
        trigger(&mut on_a, "test_trigger_tool_change");
        expect(
            &mut listening,
            "notifications/tools/list_changed",
            "the listener on B",
        );
        expect(
            &mut standalone,
            "notifications/tools/list_changed",
            "the session on B",
        );
    }
}

// ---------------------------------------------------------------------------
// Sessions of the initialize-based revisions, shared by the replicas
// ---------------------------------------------------------------------------

/// Two replicas of the conformance fixtures (no reloading) in the cluster at `redis`.
fn two_replicas(dir: &Path, redis: &Redis) -> (HttpServer, HttpServer) {
    let config = conformance_config(dir, &redis.url());
    (
        HttpServer::start(&["--no-watch", "--config", &config]),
        HttpServer::start(&["--no-watch", "--config", &config]),
    )
}

/// A session on `server` whose call of `test_elicitation` waits for the client's answer to
/// `question`: the client, the call, the call's stream and the question's event.
fn waiting_for_an_answer(
    server: &HttpServer,
    question: &str,
) -> (HttpClient, Value, SseStream, SseEvent) {
    let mut client = server.client();
    client.initialize_with_capabilities(LATEST_VERSION, json!({"elicitation": {}}));
    let call = client.request_message(
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": question}}),
    );
    let mut stream = client.post(&call).expect_sse("POST test_elicitation");
    let asked = stream.next_event().expect("an elicitation request");
    assert_eq!(asked.message["method"], "elicitation/create", "{:?}", asked);
    (client, call, stream, asked)
}

/// A client of `url` on the session `of` started (through whatever replica).
fn same_session(url: &str, of: &HttpClient) -> HttpClient {
    let mut c = HttpClient::new(url);
    c.session_id = of.session_id.clone();
    c.version = of.version.clone();
    c
}

fn upstream(reply: &HttpReply) -> String {
    reply
        .header("x-upstream")
        .unwrap_or_else(|| panic!("no X-Upstream from nginx: {reply:?}"))
}

/// Proves: a session started through nginx (plain round robin over three replicas) works
/// whatever replica each request reaches: lists and calls; progress on a call's stream; the
/// log level set through one replica filtering a call's logs on another; an elicitation whose
/// answer reaches another replica than the call; a resource update reaching the GET stream
/// wherever it is open. Every replica served some of it.
#[test]
fn a_session_works_whatever_replica_each_request_reaches() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let config = conformance_config(dir.path(), &redis.url());
    let replicas: Vec<HttpServer> = (0..3)
        .map(|_| HttpServer::start(&["--no-watch", "--config", &config]))
        .collect();
    for r in &replicas {
        r.process.wait_ready();
    }
    let nginx = Nginx::start(&replicas.iter().map(|r| r.addr.as_str()).collect::<Vec<_>>());
    let logs = || {
        replicas
            .iter()
            .map(|r| r.stderr())
            .collect::<Vec<_>>()
            .join("\n---\n")
    };
    let mut c = HttpClient::new(&nginx.url);
    c.initialize_with_capabilities(LATEST_VERSION, json!({"elicitation": {}}));
    for _ in 0..3 {
        let tools = c.result("tools/list", json!({}));
        assert!(
            tools["tools"].as_array().is_some_and(|t| !t.is_empty()),
            "{tools}"
        );
    }

    // Progress, on the call's own stream.
    let msg = c.request_message(
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}),
    );
    let exchange = c.exchange_message(&msg);
    let progress = exchange
        .before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 3, "{:?}\n{}", exchange.before, logs());
    assert!(
        exchange.response.get("result").is_some(),
        "{}",
        exchange.response
    );

    // The level set through one replica holds on the others.
    c.result("logging/setLevel", json!({"level": "error"}));
    for _ in 0..3 {
        let exchange = c.exchange(
            "tools/call",
            json!({"name": "test_tool_with_logging", "arguments": {}}),
        );
        let logged: Vec<&Value> = exchange
            .before
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .collect();
        assert!(
            logged.is_empty(),
            "info logs at level error: {logged:?}\n{}",
            logs()
        );
    }

    // Elicitation: the answer goes wherever nginx sends it.
    let mut crossed = false;
    for _ in 0..3 {
        let msg = c.request_message(
            "tools/call",
            json!({"name": "test_elicitation", "arguments": {"message": "Who are you?"}}),
        );
        let reply = c.post(&msg);
        let asked_at = upstream(&reply);
        let mut stream = reply.expect_sse("POST test_elicitation");
        let request = stream.next_event().expect("an elicitation request").message;
        assert_eq!(request["method"], "elicitation/create", "{request}");
        let answer = json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"action": "accept", "content": {"username": "testuser", "email": "t@example.com"}}});
        let answered = c.post(&answer);
        assert_eq!(answered.status, 202, "{answered:?}");
        crossed |= upstream(&answered) != asked_at;
        let rest = stream.read_to_end();
        let result = &rest.last().expect("the result").message["result"];
        assert!(
            tool_text(result).contains("testuser"),
            "{result}\n{}",
            logs()
        );
    }
    assert!(
        crossed,
        "no answer reached another replica than its call (round robin?)"
    );

    // A resource update reaches the GET stream, wherever each request lands.
    c.result("resources/subscribe", json!({"uri": WATCHED_URI}));
    let mut standalone = c.open_stream();
    for _ in 0..3 {
        c.call_tool("test_trigger_resource_update", json!({}));
        let heard = next_message(&mut standalone, secs(30)).expect("the GET stream ended");
        assert_eq!(
            heard["method"],
            "notifications/resources/updated",
            "{heard}\n{}",
            logs()
        );
    }
    let served: BTreeSet<String> = nginx
        .access_log_upstreams()
        .into_iter()
        .filter(|u| u != "-")
        .collect();
    assert_eq!(served.len(), 3, "{served:?}");
}

/// Proves: a client that drops a call's stream on one replica resumes it (`Last-Event-ID`) on
/// another: the events it missed, then the result.
#[test]
fn a_dropped_stream_resumes_on_another_replica() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let (a, b) = two_replicas(dir.path(), &redis);
    let mut on_a = a.client();
    on_a.initialize(LATEST_VERSION);
    let msg = on_a.request_message(
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 7}}),
    );
    let mut stream = on_a.post(&msg).expect_sse("POST test_tool_with_progress");
    let first = stream.next_event().expect("a first progress report");
    assert_eq!(first.message["method"], "notifications/progress");
    let last_id = first.id.clone().expect("an event id");
    drop(stream);

    let on_b = same_session(&b.url, &on_a);
    let rest = on_b.resume(&last_id).read_to_end();
    let methods: Vec<&Value> = rest.iter().map(|e| &e.message["method"]).collect();
    let last = rest.last().expect("events after the first").message.clone();
    assert_eq!(
        tool_text(&last["result"]),
        "Tool with progress executed successfully",
        "{methods:?}\n{}",
        b.stderr()
    );
    assert_eq!(
        rest.iter()
            .filter(|e| e.message["method"] == "notifications/progress")
            .count(),
        2,
        "the two reports after the first: {methods:?}"
    );
}

/// Proves: a replica told to stop (SIGTERM) in the middle of a call ends the call's stream at
/// once and finishes the call; the client resumes the stream on another replica, answers the
/// plugin's question there (it reaches the stopping replica), and gets the result. The stopping
/// replica then exits.
#[test]
fn a_stopping_replica_hands_its_streams_back() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let (mut a, b) = two_replicas(dir.path(), &redis);
    let (on_a, _call, mut stream, asked) = waiting_for_an_answer(&a, "Still there?");

    a.process.signal("TERM");
    // A's stream ends at once, without the result.
    let after_stop = stream.read_to_end();
    assert!(
        after_stop.iter().all(|e| !e.is_response()),
        "{after_stop:?}"
    );

    let mut on_b = same_session(&b.url, &on_a);
    let mut resumed = on_b.resume(asked.id.as_deref().expect("an event id"));
    let answer = json!({"jsonrpc": "2.0", "id": asked.message["id"],
        "result": {"action": "accept", "content": {"username": "handed-back", "email": "h@example.com"}}});
    assert_eq!(on_b.post(&answer).status, 202);
    let rest = resumed.read_to_end();
    let last = &rest.last().expect("the result, resumed on B").message;
    assert!(
        tool_text(&last["result"]).contains("handed-back"),
        "{last}\n--- A\n{}\n--- B\n{}",
        a.stderr(),
        b.stderr()
    );
    let status = a.process.wait_exit(secs(30));
    assert!(
        status.success(),
        "A exits once its call is done: {status:?}"
    );
    // The session goes on at B.
    assert!(on_b.result("tools/list", json!({}))["tools"].is_array());
}

/// Proves: sessions outlive a Redis restart: the replica serving a session stores it again,
/// and another replica then serves it too; while Redis is down, a replica that does not know a
/// session says so at once (503, retry), without hanging.
#[test]
fn sessions_survive_a_redis_restart() {
    let mut redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let (a, b) = two_replicas(dir.path(), &redis);
    let mut on_a = a.client();
    on_a.initialize(LATEST_VERSION);

    redis.stop();
    let on_b = same_session(&b.url, &on_a);
    let refused = on_b.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(refused.status, 503, "{refused:?}");
    let text = refused.text();
    assert!(text.contains("retry"), "{text}");

    redis.restart();
    // A still serves it, and stores it again.
    let deadline = Instant::now() + secs(15);
    loop {
        let reply = on_a.post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        assert_eq!(reply.status, 200, "{reply:?}");
        let record = format!(
            "palisade:session:{}",
            on_a.session_id.as_deref().unwrap_or("")
        );
        let stored = redis
            .cli(&["--scan", "--pattern", "palisade:session:*"])
            .lines()
            .any(|key| key == record);
        if stored || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let on_b = same_session(&b.url, &on_a);
    let reply = on_b.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    assert_eq!(
        reply.status,
        200,
        "{reply:?}\n{}\n--- A\n{}\n--- B\n{}",
        redis.cli(&["--scan"]),
        a.stderr(),
        b.stderr()
    );
}

/// Proves: when the replica serving a call dies (SIGKILL) before answering, a client that
/// resumes the call's stream on another replica is told so, with an error response for its
/// request, instead of waiting forever.
#[test]
fn a_stream_whose_replica_died_ends_with_an_error_elsewhere() {
    let redis = Redis::start(RedisOptions::default());
    let dir = tempdir();
    let (mut a, b) = two_replicas(dir.path(), &redis);
    let (on_a, msg, stream, asked) = waiting_for_an_answer(&a, "Anyone?");
    // A writes the stream to Redis in the background: kill it once it has (what a killed
    // replica had not written yet is lost with it).
    let deadline = Instant::now() + secs(10);
    while redis
        .cli(&["--scan", "--pattern", "palisade:session:*:stream:*"])
        .lines()
        .filter(|key| !key.ends_with(":head"))
        .count()
        == 0
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    a.process.kill();
    drop(stream);

    let on_b = same_session(&b.url, &on_a);
    let mut resumed = on_b.resume(asked.id.as_deref().expect("an event id"));
    let mut events = Vec::new();
    while let Some(event) = resumed.next_event_within(secs(90)) {
        events.push(event.message);
    }
    let last = events.last().expect("an answer once A is known to be gone");
    assert_eq!(last["id"], msg["id"], "{last}");
    assert_eq!(last["error"]["code"], -32603, "{last}");
    assert!(
        last["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("send the request again")),
        "{last}\n{}",
        b.stderr()
    );
}
