//! OpenTelemetry traces, exported over OTLP/HTTP to a receiver built on the official protocol
//! definitions (tests/clients/otlp_receiver.py, `opentelemetry-proto` from PyPI): a trace a
//! client starts (the `traceparent` header, or `_meta`) continues through the HTTP span and the
//! MCP span to the plugin span, which carries what the sandbox measured; the audit log names
//! the trace.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use palisade_tests::serde_json::{Value, json};
use palisade_tests::*;

/// The receiver, writing every span it gets to `out` as a JSON line; killed when dropped.
struct Receiver {
    child: Child,
    url: String,
}

impl Receiver {
    fn start(out: &Path) -> Receiver {
        let mut child = Command::new(pyclient_python())
            .arg(repo_root().join("tests/clients/otlp_receiver.py"))
            .args(["0", "--out"])
            .arg(out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the OTLP receiver");
        let mut first = String::new();
        let _ = BufReader::new(child.stdout.take().unwrap()).read_line(&mut first);
        let url = first
            .trim()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("the OTLP receiver did not start: {first:?}"))
            .to_string();
        Receiver { child, url }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The spans received so far.
fn spans(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Waits (bounded) until the spans of `trace_id` include every name in `names`.
fn wait_for_trace(out: &Path, trace_id: &str, names: &[&str]) -> Vec<Value> {
    let deadline = Instant::now() + secs(30);
    loop {
        let trace: Vec<Value> = spans(out)
            .into_iter()
            .filter(|s| s["trace_id"] == trace_id)
            .collect();
        if names.iter().all(|n| trace.iter().any(|s| s["name"] == *n)) {
            return trace;
        }
        assert!(
            Instant::now() < deadline,
            "trace {trace_id} never had all of {names:?}: {trace:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn named<'a>(trace: &'a [Value], name: &str) -> &'a Value {
    trace.iter().find(|s| s["name"] == name).unwrap()
}

const SERVER_KIND: i64 = 2;
const ERROR_STATUS: i64 = 2;

#[test]
fn a_clients_trace_continues_through_palisade_to_the_plugin_call() {
    let dir = tempdir();
    let out = dir.path().join("spans.jsonl");
    let receiver = Receiver::start(&out);
    let config = dir.path().join("palisade.toml");
    write_file(
        &config,
        format!(
            r#"[telemetry]
otlp_endpoint = {endpoint}
service_name = "palisade-under-test"

[audit]
path = "audit.log"

{plugins}
[plugins.misbehave.limits]
fuel_per_call = 5000000
"#,
            endpoint = toml_str(&receiver.url),
            plugins = plugin_sections(&["hello", "misbehave"]),
        ),
    );
    let server = HttpServer::start_with(
        Server::builder()
            .args(["--no-watch", "--config", &path_str(&config)])
            // Export every 100 ms rather than every 5 s.
            .env("OTEL_BSP_SCHEDULE_DELAY", "100"),
    );
    assert!(server.wait_for_stderr("plugins ready", startup_timeout()));

    // A trace started by the client, in the HTTP header.
    let (header_trace, header_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let mut c = server.client();
    c.initialize(LATEST_VERSION);
    let session = c.session_id.clone().unwrap();
    let reply = c.post_with(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "hello_greet", "arguments": {"name": "trace"}}}),
        &[(
            "traceparent",
            &format!("00-{header_trace}-{header_parent}-01"),
        )],
    );
    assert_eq!(reply.status, 200);

    // Another, in `_meta` (where MCP 2026-07-28 reserves it), on a call that runs out of fuel.
    let (meta_trace, meta_parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let spun = c.result(
        "tools/call",
        json!({"name": "misbehave_spin", "arguments": {},
               "_meta": {"traceparent": format!("00-{meta_trace}-{meta_parent}-01")}}),
    );
    assert!(is_tool_error(&spun), "{spun}");

    // Header trace: HTTP span (child of the client's) -> MCP span -> plugin span.
    let trace = wait_for_trace(
        &out,
        header_trace,
        &["POST /mcp", "tools/call hello_greet", "plugin hello"],
    );
    let http = named(&trace, "POST /mcp");
    assert_eq!(http["parent_span_id"], header_parent, "{http}");
    assert_eq!(http["kind"], SERVER_KIND);
    assert_eq!(
        http["attributes"]["http.response.status_code"], 200,
        "{http}"
    );
    assert_eq!(http["service"], "palisade-under-test");
    let mcp = named(&trace, "tools/call hello_greet");
    assert_eq!(mcp["parent_span_id"], http["span_id"], "{mcp}");
    assert_eq!(mcp["kind"], SERVER_KIND);
    let attributes = &mcp["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call", "{mcp}");
    assert_eq!(attributes["gen_ai.tool.name"], "hello_greet");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["mcp.session.id"], session.as_str());
    assert_eq!(attributes["mcp.protocol.version"], LATEST_VERSION);
    assert_eq!(attributes["jsonrpc.request.id"], "7");
    assert_eq!(attributes["network.transport"], "tcp");
    let plugin = named(&trace, "plugin hello");
    assert_eq!(plugin["parent_span_id"], mcp["span_id"], "{plugin}");
    let sandbox = &plugin["attributes"];
    assert!(
        sandbox["palisade.fuel.used"].as_i64().unwrap() > 0,
        "{plugin}"
    );
    assert!(
        sandbox["palisade.memory.peak_bytes"].as_i64().unwrap() > 0,
        "{plugin}"
    );
    assert!(
        sandbox["palisade.instance.wait_ms"].as_f64().unwrap() >= 0.0,
        "{plugin}"
    );
    assert_eq!(sandbox["palisade.instance.reused"], false);
    assert!(sandbox.get("palisade.limit.hit").is_none(), "{plugin}");

    // `_meta` trace: the MCP span continues the client's span directly; the limit is named.
    let trace = wait_for_trace(
        &out,
        meta_trace,
        &["tools/call misbehave_spin", "plugin misbehave"],
    );
    let mcp = named(&trace, "tools/call misbehave_spin");
    assert_eq!(mcp["parent_span_id"], meta_parent, "{mcp}");
    assert_eq!(mcp["attributes"]["error.type"], "tool_error", "{mcp}");
    assert_eq!(mcp["status"]["code"], ERROR_STATUS);
    let plugin = named(&trace, "plugin misbehave");
    assert_eq!(
        plugin["attributes"]["palisade.limit.hit"], "fuel",
        "{plugin}"
    );
    assert_eq!(plugin["attributes"]["error.type"], "limit", "{plugin}");
    assert_eq!(plugin["status"]["code"], ERROR_STATUS);
    assert!(
        plugin["attributes"]["palisade.fuel.used"].as_i64().unwrap() >= 4_500_000,
        "{plugin}"
    );

    // The audit log names each call's trace.
    let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let trace_of = |tool: &str| {
        lines
            .iter()
            .find(|l| l["tool"] == tool)
            .map(|l| l["trace_id"].clone())
            .unwrap_or_else(|| panic!("{audit}"))
    };
    assert_eq!(trace_of("hello_greet"), header_trace);
    assert_eq!(trace_of("misbehave_spin"), meta_trace);

    // A request no client traced starts a trace of its own here.
    c.call_tool("hello_greet", json!({"name": "untraced"}));
    let deadline = Instant::now() + secs(30);
    while !spans(&out).iter().any(|s| {
        s["name"] == "tools/call hello_greet"
            && s["trace_id"] != header_trace
            && s["parent_span_id"] != ""
    }) {
        assert!(Instant::now() < deadline, "{:#?}", spans(&out));
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn without_a_collector_the_audit_log_still_names_the_clients_trace() {
    let dir = tempdir();
    let config = dir.path().join("palisade.toml");
    write_file(
        &config,
        format!(
            "[audit]\npath = \"audit.log\"\n\n{}",
            plugin_sections(&["hello"])
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    let trace = "5b8efff798038103d269b633813fc60c";
    s.result(
        "tools/call",
        json!({"name": "hello_greet", "arguments": {"name": "x"},
               "_meta": {"traceparent": format!("00-{trace}-eee19b7ec3c1b174-01")}}),
    );
    let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
    let line: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(line["trace_id"], trace, "{line}");
    assert!(!s.stderr().contains("exporting traces"), "{}", s.stderr());
}
