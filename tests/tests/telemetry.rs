//! What operators see: `/metrics` scraped by a real Prometheus (Debian's package) and queried
//! through its HTTP API, `/healthz` and `/readyz` (ready, degraded, stopping), and SIGTERM
//! letting calls in flight finish while streams end and new connections are refused.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use palisade_tests::serde_json::{Value, json};
use palisade_tests::*;

const TOKEN: &str = "a-token-for-the-telemetry-tests";

fn config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("palisade.toml");
    write_file(
        &path,
        format!(
            r#"[server]
shutdown_grace_s = 10

[telemetry]
metrics_listen = "127.0.0.1:0"

[[auth.tokens]]
name = "ops"
env = "TELEMETRY_TOKEN"
scope = "all"

{plugins}
[plugins.misbehave.limits]
fuel_per_call = 5000000
{extra}
"#,
            plugins = plugin_sections(&["hello", "misbehave"]),
        ),
    );
    path
}

const METRICS_AT: &str = "palisade: metrics on http://";

/// The server, once its plugins are loaded, and its metrics address (`127.0.0.1:PORT`).
fn start(config: &Path) -> (HttpServer, String) {
    let server = HttpServer::start_with(
        Server::builder()
            .args(["--no-watch", "--config", &path_str(config)])
            .env("TELEMETRY_TOKEN", TOKEN),
    );
    if !server.wait_for_stderr("plugins ready", startup_timeout()) {
        server.fail("the plugins never finished loading");
    }
    let stderr = server.stderr();
    let Some(at) = stderr.find(METRICS_AT) else {
        server.fail("no metrics address printed");
    };
    let rest = &stderr[at + METRICS_AT.len()..];
    let addr = rest.split('/').next().unwrap().to_string();
    (server, addr)
}

fn client(server: &HttpServer) -> HttpClient {
    server.client_with_token(TOKEN)
}

/// Asks Prometheus for `query` until it has a sample (bounded: it first scrapes ~5 s after it
/// starts); the sample's value.
fn query_until_present(prometheus: &Service, query: &str) -> f64 {
    let deadline = Instant::now() + secs(60);
    loop {
        let url = format!("http://{}/api/v1/query", prometheus.addr);
        let (status, body) = http_get(&url, &[("query", query)]);
        // Prometheus listens before it is ready, and answers 503 until then.
        if status != 503 {
            assert_eq!(status, 200, "{body}");
            let answer: Value = serde_json::from_str(&body).unwrap();
            if let Some(sample) = answer["data"]["result"].as_array().and_then(|r| r.first()) {
                return sample["value"][1].as_str().unwrap().parse().unwrap();
            }
        }
        if Instant::now() > deadline {
            let (_, targets) = http_get(&format!("http://{}/api/v1/targets", prometheus.addr), &[]);
            panic!(
                "Prometheus never had {query}: {body}\ntargets: {targets}\n{}",
                prometheus.logs()
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn prometheus_scrapes_calls_fuel_limits_and_refusals() {
    let dir = tempdir();
    let (server, metrics) = start(&config(dir.path(), ""));
    let mut c = client(&server);
    c.initialize(LATEST_VERSION);
    for name in ["a", "b", "c"] {
        assert!(ok_text(&c.call_tool("hello_greet", json!({"name": name}))).contains(name));
    }
    let spun = c.call_tool("misbehave_spin", json!({}));
    error_text(&spun, "fuel");
    // Unauthenticated: counted as a refusal.
    let anonymous = server.client();
    let refused = anonymous.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert_eq!(refused.status, 401);

    let (status, text) = http_get(&format!("http://{metrics}/metrics"), &[]);
    assert_eq!(status, 200);
    for line in [
        r#"palisade_tool_calls_total{plugin="hello",tool="hello_greet",outcome="ok"} 3"#,
        r#"palisade_tool_calls_total{plugin="misbehave",tool="misbehave_spin",outcome="limit"} 1"#,
        r#"palisade_limit_hits_total{plugin="misbehave",limit="fuel"} 1"#,
        r#"palisade_refusals_total{reason="unauthenticated"} 1"#,
        r#"palisade_tool_call_duration_seconds_count{plugin="hello",tool="hello_greet"} 3"#,
        r#"palisade_sessions_open{transport="streamable_http"} 1"#,
        r#"palisade_plugin_state{plugin="hello",state="ready"} 1"#,
        r#"palisade_plugin_state{plugin="misbehave",state="ready"} 1"#,
        "# EOF",
    ] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
    assert!(
        text.contains("palisade_compile_cache_lookups_total{result=\"hit\"}"),
        "{text}"
    );

    // A real Prometheus scrapes it; its API answers with what the calls did.
    let prometheus = start_prometheus(&metrics);
    assert_eq!(
        query_until_present(
            &prometheus,
            r#"palisade_tool_calls_total{tool="hello_greet",outcome="ok"}"#
        ),
        3.0
    );
    let fuel = query_until_present(
        &prometheus,
        r#"palisade_fuel_consumed_total{tool="hello_greet"}"#,
    );
    assert!(fuel > 0.0, "{fuel}");
    let spin_fuel = query_until_present(
        &prometheus,
        r#"palisade_fuel_consumed_total{tool="misbehave_spin"}"#,
    );
    assert!(spin_fuel >= 5_000_000.0 * 0.9, "{spin_fuel}");
    assert_eq!(
        query_until_present(&prometheus, r#"palisade_limit_hits_total{limit="fuel"}"#),
        1.0
    );
    assert_eq!(
        query_until_present(&prometheus, r#"up{job="palisade"}"#),
        1.0
    );

    // Health: alive, and ready with every plugin, on the metrics address (with names) and on
    // the MCP address (without).
    let (status, body) = http_get(&format!("http://{metrics}/healthz"), &[]);
    assert_eq!((status, body.as_str()), (200, r#"{"status":"alive"}"#));
    let (status, body) = http_get(&format!("http://{metrics}/readyz"), &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "ready", "plugins": 2, "loading": [], "failed": []})
    );
    let (status, body) = http_get(&format!("http://{}/readyz", server.addr), &[]);
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ready"}"#));
}

#[test]
fn readyz_names_plugins_that_failed_to_load() {
    let dir = tempdir();
    let broken = dir.path().join("broken.wasm");
    std::fs::write(&broken, b"\0asm\x0d\0\x01\0 not a component").unwrap();
    let extra = format!(
        "\n[plugins.broken]\npath = {}\n",
        toml_str(&path_str(&broken))
    );
    let (server, metrics) = start(&config(dir.path(), &extra));
    let (status, body) = http_get(&format!("http://{metrics}/readyz"), &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "degraded", "plugins": 3, "loading": [], "failed": ["broken"]}),
        "{}",
        server.stderr()
    );
    let (_, text) = http_get(&format!("http://{metrics}/metrics"), &[]);
    assert!(
        text.lines()
            .any(|l| l == r#"palisade_plugin_state{plugin="broken",state="failed"} 1"#),
        "{text}"
    );
}

#[test]
fn sigterm_finishes_calls_in_flight_ends_streams_and_refuses_new_connections() {
    let dir = tempdir();
    let (mut server, metrics) = start(&config(dir.path(), ""));
    let mut waiting = client(&server);
    waiting.initialize(LATEST_VERSION);
    let mut stream = waiting.open_stream();

    // A call that takes 2 s, under way when the signal comes: its session is set up first,
    // then the call is sent, and the signal follows it by 300 ms.
    let url = server.url.clone();
    let (initialized, calling) = std::sync::mpsc::channel();
    let in_flight = std::thread::spawn(move || {
        let mut c = HttpClient::new(&url);
        c.headers
            .push(("Authorization".into(), format!("Bearer {TOKEN}")));
        c.initialize(LATEST_VERSION);
        initialized.send(()).unwrap();
        c.call_tool("misbehave_sleep", json!({"ms": 2000}))
    });
    calling
        .recv_timeout(secs(30))
        .expect("the session never started");
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Instant::now();
    server.process.signal("TERM");
    assert!(
        server.wait_for_stderr("SIGTERM: stopping", secs(10)),
        "{}",
        server.stderr()
    );

    // The stream that only waits for notifications ends, so its client reconnects elsewhere.
    assert!(stream.next_event_within(secs(10)).is_none());
    // Not ready any more; no new connection is taken.
    let (status, body) = http_get(&format!("http://{metrics}/readyz"), &[]);
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["status"],
        "stopping"
    );
    // The listener closes just after the signal is logged.
    let deadline = Instant::now() + secs(5);
    while std::net::TcpStream::connect(&server.addr).is_ok() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        std::net::TcpStream::connect(&server.addr).is_err(),
        "the MCP address still accepts connections"
    );
    // The call in flight finishes with its answer; then the server exits, well within the grace.
    let answer = in_flight.join().unwrap();
    assert!(!is_tool_error(&answer), "{answer}");
    let status = server.process.wait_exit(secs(15));
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(signalled.elapsed() < secs(10), "{:?}", signalled.elapsed());
    assert!(
        server.wait_for_stderr("every request in flight finished", secs(5)),
        "{}",
        server.stderr()
    );
}

#[test]
fn sigterm_over_stdio_answers_the_call_in_flight_then_exits() {
    let mut s = Server::start(&["--no-watch", "--plugin", &plugin_arg("misbehave")]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    let id = s.send_request(
        "tools/call",
        json!({"name": "misbehave_sleep", "arguments": {"ms": 1000}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    s.signal("TERM");
    let answer = s.wait_response(&id, secs(10));
    assert!(
        answer.get("result").is_some_and(|r| !is_tool_error(r)),
        "{answer}"
    );
    let status = s.wait_exit(secs(10));
    assert!(status.success(), "{status:?}\n{}", s.stderr());
}
