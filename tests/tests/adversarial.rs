//! The adversarial suite: a plugin (misbehave) and clients that try every escape and abuse the
//! security model names, each contained with its documented error while the server goes on
//! serving other calls. Grants are given explicitly here, so each test also shows what a plugin
//! *with* the grant can do next to what it cannot do without it.

use std::path::PathBuf;
use std::time::Instant;

use palisade_tests::*;
use serde_json::{Value, json};
use tempfile::TempDir;

const SECRET: &str = "the-secret-outside-every-grant";

/// A host layout: `granted/` (read-write at /data), `readonly/` (read-only at /ro) and
/// `outside/secret.txt`, which no grant covers.
struct Layout {
    dir: TempDir,
}

impl Layout {
    fn new() -> Layout {
        let dir = tempdir();
        write_file(dir.path().join("granted/inside.txt"), "inside");
        write_file(dir.path().join("readonly/kept.txt"), "kept");
        write_file(dir.path().join("outside/secret.txt"), SECRET);
        Layout { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A configuration with misbehave granted the two directories, `extra` lines in its
    /// section, `limits` in its limits, and hello beside it.
    fn config(&self, extra: &str, limits: &str, tail: &str) -> PathBuf {
        config_file(
            self.dir.path(),
            &format!(
                r#"[plugins.misbehave]
path = {misbehave}
{extra}

[[plugins.misbehave.dirs]]
host = "granted"
guest = "/data"
mode = "read-write"

[[plugins.misbehave.dirs]]
host = "readonly"
guest = "/ro"

[plugins.misbehave.limits]
{limits}

[plugins.hello]
path = {hello}

{tail}
"#,
                misbehave = toml_str(&plugin_arg("misbehave")),
                hello = toml_str(&plugin_arg("hello")),
            ),
        )
    }

    fn server(&self, extra: &str, limits: &str) -> Server {
        let config = self.config(extra, limits, "");
        let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
        s.initialize(LATEST_VERSION);
        // A short `timeout_ms` bounds the wait for a loading plugin too: load first.
        s.wait_ready();
        s
    }
}

/// The call failed as a tool error (never a protocol error), and leaked nothing outside.
#[track_caller]
fn refused(result: &Value) -> String {
    let text = tool_text(result);
    assert!(is_tool_error(result), "expected a refusal, got: {text}");
    assert!(!text.contains(SECRET), "the secret leaked: {text}");
    text
}

/// Other plugins and the abused one still answer, promptly.
#[track_caller]
fn still_serving(s: &mut Server) {
    let started = Instant::now();
    assert_eq!(
        ok_text(&s.call_tool("hello_greet", json!({"name": "neighbour"}))),
        "Hello, neighbour!"
    );
    assert_eq!(
        ok_text(&s.call_tool("misbehave_ok", json!({}))),
        "still fine"
    );
    // Liveness, not a benchmark: two trivial calls must not queue behind the abuse.
    assert!(
        started.elapsed() < secs(10),
        "the server was slow to answer after the abuse: {:?}",
        started.elapsed()
    );
}

#[test]
fn an_import_the_host_does_not_provide_fails_only_when_used() {
    // `unprovided` imports an interface nobody provides, which `use`s wasi:io's pollable.
    let mut s = Server::start(&["--no-watch", "--plugin", &plugin_arg("unprovided")]);
    s.initialize(LATEST_VERSION);
    assert_eq!(
        ok_text(&s.call_tool("unprovided_ok", json!({}))),
        "loaded fine"
    );
    let text = refused(&s.call_tool("unprovided_use_it", json!({})));
    assert!(
        text.contains("palisade-test:extra/waiter") && text.contains("not available"),
        "{text}"
    );
    assert_eq!(
        ok_text(&s.call_tool("unprovided_ok", json!({}))),
        "loaded fine"
    );
    let out = run_palisade(&["inspect", &plugin_arg("unprovided")], false, secs(120));
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("palisade-test:extra/waiter"))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("NOT provided"), "{out}");
}

#[test]
fn files_outside_the_grants_cannot_be_read() {
    let layout = Layout::new();
    let mut s = layout.server("", "");
    assert_eq!(
        ok_text(&s.call_tool("misbehave_read_file", json!({"path": "/data/inside.txt"}))),
        "inside"
    );
    let secret = path_str(&layout.path("outside/secret.txt"));
    for path in [
        secret.as_str(),
        "/data/../outside/secret.txt",
        "../outside/secret.txt",
        "/data/../../../../../../etc/passwd",
        "/etc/passwd",
        "/outside/secret.txt",
    ] {
        let r = s.call_tool("misbehave_read_file", json!({"path": path}));
        refused(&r);
    }
    still_serving(&mut s);
}

#[test]
fn a_symlink_planted_in_a_grant_does_not_lead_outside() {
    let layout = Layout::new();
    let secret = layout.path("outside/secret.txt");
    std::os::unix::fs::symlink(&secret, layout.path("granted/absolute-link")).unwrap();
    std::os::unix::fs::symlink(
        "../outside/secret.txt",
        layout.path("granted/relative-link"),
    )
    .unwrap();
    std::os::unix::fs::symlink(layout.path("outside"), layout.path("granted/dir-link")).unwrap();
    let mut s = layout.server("", "");
    for path in [
        "/data/absolute-link",
        "/data/relative-link",
        "/data/dir-link/secret.txt",
    ] {
        refused(&s.call_tool("misbehave_read_file", json!({"path": path})));
    }
    still_serving(&mut s);
}

#[test]
fn a_plugin_cannot_link_its_way_out() {
    let layout = Layout::new();
    let mut s = layout.server("", "");
    // Links the plugin makes itself: to an absolute path, up and out, and hard links to files
    // outside. Whatever is created, reading through it must not reach the file.
    let attempts = [
        (
            "misbehave_symlink",
            json!({"target": "/etc/passwd", "link": "/data/l1"}),
        ),
        (
            "misbehave_symlink",
            json!({"target": "../outside/secret.txt", "link": "/data/l2"}),
        ),
        (
            "misbehave_hard_link",
            json!({"source": "/data/../outside/secret.txt", "link": "/data/h1"}),
        ),
        (
            "misbehave_hard_link",
            json!({"source": path_str(&layout.path("outside/secret.txt")), "link": "/data/h2"}),
        ),
    ];
    for (tool, args) in attempts {
        let r = s.call_tool(tool, args.clone());
        let text = tool_text(&r);
        assert!(!text.contains(SECRET), "{tool} {args}: leaked: {text}");
        assert!(!text.contains("root:"), "{tool} {args}: leaked: {text}");
    }
    // Nothing in the granted directory now reaches the secret from the host's side either.
    for name in ["h1", "h2"] {
        let linked = std::fs::read_to_string(layout.path("granted").join(name)).unwrap_or_default();
        assert!(
            !linked.contains(SECRET),
            "{name} is a hard link to the secret"
        );
    }
    still_serving(&mut s);
}

#[test]
fn a_read_only_grant_refuses_every_write() {
    let layout = Layout::new();
    let mut s = layout.server("", "");
    let ok = s.call_tool(
        "misbehave_write_file",
        json!({"path": "/data/new.txt", "text": "written"}),
    );
    assert!(!is_tool_error(&ok), "{}", tool_text(&ok));
    assert_eq!(
        std::fs::read_to_string(layout.path("granted/new.txt")).unwrap(),
        "written"
    );
    for path in ["/ro/kept.txt", "/ro/new.txt"] {
        refused(&s.call_tool(
            "misbehave_write_file",
            json!({"path": path, "text": "overwritten"}),
        ));
    }
    assert_eq!(
        std::fs::read_to_string(layout.path("readonly/kept.txt")).unwrap(),
        "kept"
    );
    assert!(!layout.path("readonly/new.txt").exists());
    still_serving(&mut s);
}

#[test]
fn only_granted_environment_variables_are_visible() {
    let layout = Layout::new();
    let config = layout.config(
        "[plugins.misbehave.env]\nGIVEN = \"by the config\"\nPASSED = { from_host = \"PALISADE_TEST_PASSED\" }",
        "",
        "",
    );
    let mut s = Server::builder()
        .args(["--no-watch", "--config", &path_str(&config)])
        .env("PALISADE_TEST_PASSED", "from the host")
        .env("PALISADE_TEST_NOT_PASSED", SECRET)
        .start();
    s.initialize(LATEST_VERSION);
    assert_eq!(
        ok_text(&s.call_tool("misbehave_env_var", json!({"name": "GIVEN"}))),
        "GIVEN=by the config"
    );
    assert_eq!(
        ok_text(&s.call_tool("misbehave_env_var", json!({"name": "PASSED"}))),
        "PASSED=from the host"
    );
    for name in [
        "PALISADE_TEST_NOT_PASSED",
        "PALISADE_TEST_PASSED",
        "HOME",
        "PATH",
    ] {
        refused(&s.call_tool("misbehave_env_var", json!({"name": name})));
    }
    let all = ok_text(&s.call_tool("misbehave_env", json!({})));
    assert!(!all.contains(SECRET), "{all}");
    // hello was granted nothing.
    still_serving(&mut s);
}

#[test]
fn a_missing_host_variable_refuses_to_start() {
    let layout = Layout::new();
    let config = layout.config(
        "[plugins.misbehave.env]\nKEY = { from_host = \"PALISADE_TEST_SURELY_UNSET\" }",
        "",
        "",
    );
    assert_serve_refused(
        &["--config", &path_str(&config)],
        "PALISADE_TEST_SURELY_UNSET is not set",
    );
}

#[test]
fn network_reaches_only_granted_hosts() {
    let granted = local_http_server("hello from the granted host");
    let other = local_http_server(SECRET);
    let layout = Layout::new();
    let mut s = layout.server(
        &format!("network = [\"http://127.0.0.1:{granted}\", \"api.example.com\"]"),
        "",
    );
    let r = s.call_tool(
        "misbehave_http_get",
        json!({"url": format!("http://127.0.0.1:{granted}/")}),
    );
    let text = ok_text(&r);
    assert!(text.contains("hello from the granted host"), "{text}");
    for url in [
        // Loopback, another port: not granted.
        format!("http://127.0.0.1:{other}/"),
        // The granted port by another name.
        format!("http://localhost:{granted}/"),
        // Granted for HTTPS only.
        "http://api.example.com/".to_string(),
        // Never listed.
        "https://example.org/".to_string(),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ] {
        let text = refused(&s.call_tool("misbehave_http_get", json!({"url": url})));
        assert!(text.contains("HttpRequestDenied"), "{url}: {text}");
    }
    assert!(
        s.wait_for_stderr("network request denied", secs(5)),
        "the server log names denied requests"
    );
    still_serving(&mut s);
}

#[test]
fn a_granted_name_that_resolves_to_a_local_address_is_refused() {
    // The machine's own host name: granted by name, it resolves to loopback or a private
    // address, which only an IP literal or `localhost` in the grant may reach.
    let name = std::process::Command::new("hostname")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let port = local_http_server(SECRET);
    let local = |ip: std::net::IpAddr| match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
        std::net::IpAddr::V6(v6) => v6.is_loopback(),
    };
    let resolved: Vec<std::net::IpAddr> =
        std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), port))
            .map(|a| a.map(|a| a.ip()).collect())
            .unwrap_or_default();
    if name.is_empty()
        || name == "localhost"
        || resolved.is_empty()
        || !resolved.iter().all(|ip| local(*ip))
    {
        eprintln!(
            "skipped: this machine's host name {name:?} does not resolve to local addresses only ({resolved:?})"
        );
        return;
    }
    let layout = Layout::new();
    let mut s = layout.server(&format!("network = [\"http://{name}:{port}\"]"), "");
    let text = refused(&s.call_tool(
        "misbehave_http_get",
        json!({"url": format!("http://{name}:{port}/")}),
    ));
    assert!(text.contains("DestinationIpProhibited"), "{text}");
    assert!(s.wait_for_stderr("a local address", secs(5)));
    still_serving(&mut s);
}

#[test]
fn without_a_network_grant_nothing_gets_out() {
    let port = local_http_server(SECRET);
    let layout = Layout::new();
    let mut s = layout.server("", "");
    let text = refused(&s.call_tool(
        "misbehave_http_get",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
    ));
    assert!(text.contains("HttpRequestDenied"), "{text}");
    still_serving(&mut s);
}

#[test]
fn fuel_exhaustion_is_contained() {
    let layout = Layout::new();
    let mut s = layout.server("", "fuel_per_call = 100000000\ntimeout_ms = 60000");
    error_text(&s.call_tool("misbehave_spin", json!({})), "out of fuel");
    still_serving(&mut s);
}

#[test]
fn the_fuel_budget_refuses_calls_until_it_refills() {
    let layout = Layout::new();
    // A budget of 300M fuel refilling at 10M a second; each burn takes about 100M+.
    let mut s = layout.server(
        "",
        "fuel_burst = 300000000\nfuel_per_second = 10000000\nfuel_per_call = 1000000000",
    );
    let mut refused_with = None;
    for _ in 0..20 {
        let r = s.call_tool("misbehave_burn", json!({"iterations": 5_000_000u64}));
        if is_tool_error(&r) {
            refused_with = Some(r);
            break;
        }
    }
    let r = refused_with.expect("the fuel budget never refused a call");
    let text = error_text(&r, "fuel budget");
    assert!(text.contains("limits.fuel_per_second"), "{text}");
    assert!(text.contains("retry in"), "{text}");
    assert!(
        r["_meta"]["palisade/retryAfterMs"]
            .as_u64()
            .is_some_and(|ms| ms > 0),
        "{r}"
    );
    // Other plugins have their own budgets.
    assert_eq!(
        ok_text(&s.call_tool("hello_greet", json!({"name": "x"}))),
        "Hello, x!"
    );
}

#[test]
fn memory_growth_is_contained() {
    let layout = Layout::new();
    let mut s = layout.server("", "memory_mib = 32");
    error_text(
        &s.call_tool("misbehave_grow_memory", json!({})),
        "memory limit",
    );
    still_serving(&mut s);
}

#[test]
fn stack_overflow_is_contained() {
    let layout = Layout::new();
    let mut s = layout.server("", "");
    let r = s.call_tool("misbehave_recurse", json!({}));
    let text = refused(&r);
    assert!(text.contains("stack"), "{text}");
    still_serving(&mut s);
}

#[test]
fn an_output_flood_is_cut_off() {
    let layout = Layout::new();
    let mut s = layout.server("", "output_kib = 64");
    let ok = s.call_tool("misbehave_output", json!({"bytes": 60_000}));
    assert_eq!(tool_text(&ok).len(), 60_000);
    let text = error_text(
        &s.call_tool("misbehave_output", json!({"bytes": 1_000_000})),
        "output limit",
    );
    assert!(text.contains("limits.output_kib"), "{text}");
    // Floods of stdout and stderr go to the capped log, not to the client.
    let r = s.call_tool("misbehave_flood_stdout", json!({}));
    assert!(tool_text(&r).len() < 10_000);
    still_serving(&mut s);
}

#[test]
fn a_log_flood_does_not_fill_the_servers_log() {
    let layout = Layout::new();
    let mut s = layout.server("", "");
    let r = s.call_tool("misbehave_log", json!({"level": "error", "count": 50_000}));
    assert!(!is_tool_error(&r), "{}", tool_text(&r));
    assert!(
        s.wait_for_stderr("of log messages in one call", secs(10)),
        "the cap is announced"
    );
    let logged = s.stderr().matches("message ").count();
    // 64 KiB of "message N" lines is about 5000 of them; the other 45000 were not logged.
    assert!(
        logged < 10_000,
        "{logged} plugin log lines reached the server's log"
    );
    still_serving(&mut s);
}

#[test]
fn a_call_past_its_deadline_is_stopped() {
    let layout = Layout::new();
    let mut s = layout.server("", "timeout_ms = 300\nfuel_per_call = 1000000000000000");
    let started = Instant::now();
    error_text(
        &s.call_tool("misbehave_sleep", json!({"ms": 20_000})),
        "time limit",
    );
    assert!(started.elapsed() < secs(15), "{:?}", started.elapsed());
    error_text(&s.call_tool("misbehave_spin", json!({})), "time limit");
    still_serving(&mut s);
}

#[test]
fn a_hundred_concurrent_calls_are_bounded() {
    let layout = Layout::new();
    let mut s = layout.server("", "concurrent_calls = 8");
    let ids: Vec<Value> = (0..100)
        .map(|_| {
            s.send_request(
                "tools/call",
                json!({"name": "misbehave_sleep", "arguments": {"ms": 1500}}),
            )
        })
        .collect();
    // Another plugin answers while the sleepers hold their slots.
    let hello = s.send_request(
        "tools/call",
        json!({"name": "hello_greet", "arguments": {"name": "meanwhile"}}),
    );
    let response = s.wait_response(&hello, default_timeout());
    assert_eq!(ok_text(&s.expect_result(response)), "Hello, meanwhile!");
    let (mut ran, mut turned_away) = (0, 0);
    for id in &ids {
        let response = s.wait_response(id, default_timeout());
        let result = s.expect_result(response);
        if is_tool_error(&result) {
            let text = tool_text(&result);
            assert!(text.contains("limits.concurrent_calls"), "{text}");
            turned_away += 1;
        } else {
            ran += 1;
        }
    }
    assert!(ran >= 8, "{ran} ran");
    assert!(turned_away > 0, "all 100 ran at once");
    assert_eq!(ran + turned_away, 100);
    still_serving(&mut s);
}

#[test]
fn a_client_over_its_rate_is_told_when_to_retry() {
    let layout = Layout::new();
    let mut s = layout.server("", "calls_per_minute_per_client = 5");
    for _ in 0..5 {
        assert_eq!(
            ok_text(&s.call_tool("misbehave_ok", json!({}))),
            "still fine"
        );
    }
    let r = s.call_tool("misbehave_ok", json!({}));
    let text = error_text(&r, "times a minute by this client");
    assert!(text.contains("retry in"), "{text}");
    let ms = r["_meta"]["palisade/retryAfterMs"].as_u64().unwrap_or(0);
    assert!(
        (1..=13_000).contains(&ms),
        "a token comes back every 12 s: {r}"
    );
    // The plugin's other callers and other plugins are not held back.
    assert_eq!(
        ok_text(&s.call_tool("hello_greet", json!({"name": "x"}))),
        "Hello, x!"
    );
}

#[test]
fn the_plugin_wide_rate_covers_every_client() {
    let layout = Layout::new();
    let config = layout.config("", "calls_per_minute = 3", "");
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let mut a = server.client();
    let mut b = server.client();
    a.initialize(LATEST_VERSION);
    b.initialize(LATEST_VERSION);
    let mut texts = Vec::new();
    for round in 0..4 {
        let client = if round % 2 == 0 { &mut a } else { &mut b };
        texts.push(tool_text(&client.call_tool("misbehave_ok", json!({}))));
    }
    assert_eq!(&texts[..3], ["still fine", "still fine", "still fine"]);
    assert!(texts[3].contains("limits.calls_per_minute"), "{texts:?}");
}

// -- access control over HTTP --

const READER_TOKEN: &str = "reader-token-0123456789abcdef";
const OPS_TOKEN: &str = "ops-token-0123456789abcdef0123";
const NOWHERE_TOKEN: &str = "nowhere-token-0123456789abcdef";

/// A server with three tokens: `reader` sees hello, `ops` only misbehave_ok, `nowhere` a scope
/// that matches nothing served. The ops token comes from a file, the reader's as a hash.
fn http_server_with_tokens(layout: &Layout) -> HttpServer {
    write_file(layout.path("ops.token"), format!("{OPS_TOKEN}\n"));
    let auth = format!(
        r#"[auth.scopes]
readers = ["hello"]
ops = ["misbehave/ok"]
nowhere = ["not-loaded"]

[[auth.tokens]]
name = "reader"
sha256 = "{}"
scope = "readers"

[[auth.tokens]]
name = "ops"
file = "ops.token"
scope = "ops"

[[auth.tokens]]
name = "nowhere"
env = "PALISADE_TEST_NOWHERE_TOKEN"
scope = "nowhere"
"#,
        sha256_hex(READER_TOKEN)
    );
    let config = layout.config("", "", &auth);
    HttpServer::start_with(
        Server::builder()
            .args(["--no-watch", "--config", &path_str(&config)])
            .env("PALISADE_TEST_NOWHERE_TOKEN", NOWHERE_TOKEN),
    )
}

fn with_token(server: &HttpServer, token: &str) -> HttpClient {
    let mut client = server.client();
    client
        .headers
        .push(("Authorization".into(), format!("Bearer {token}")));
    client
}

fn initialize_message() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LATEST_VERSION, "capabilities": {},
        "clientInfo": {"name": "adversary", "version": "1"}}})
}

#[test]
fn a_missing_or_wrong_token_gets_401() {
    let layout = Layout::new();
    let server = http_server_with_tokens(&layout);
    let reply = server.client().post(&initialize_message());
    let challenge = reply.header("www-authenticate").unwrap_or_default();
    assert!(challenge.starts_with("Bearer"), "{challenge:?}");
    assert!(!challenge.contains("error="), "{challenge:?}");
    reply.expect_error_status(401);
    for bad in [
        "wrong-token-0123456789abcdef",
        "",
        READER_TOKEN.trim_end_matches('f'),
    ] {
        let reply = with_token(&server, bad).post(&initialize_message());
        let challenge = reply.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{bad:?}: {challenge:?}"
        );
        reply.expect_error_status(401);
    }
    // Not a bearer token at all.
    let reply = server.client().post_with(
        &initialize_message(),
        &[("Authorization", "Basic dXNlcjpwYXNz")],
    );
    reply.expect_error_status(401);
}

#[test]
fn a_scope_that_covers_nothing_gets_403() {
    let layout = Layout::new();
    let server = http_server_with_tokens(&layout);
    let reply = with_token(&server, NOWHERE_TOKEN).post(&initialize_message());
    let challenge = reply.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge:?}"
    );
    reply.expect_error_status(403);
}

#[test]
fn a_token_sees_and_calls_only_its_scope() {
    let layout = Layout::new();
    let server = http_server_with_tokens(&layout);
    let mut reader = with_token(&server, READER_TOKEN);
    reader.initialize(LATEST_VERSION);
    let tools = reader.result("tools/list", json!({}));
    let names = tool_names(tools["tools"].as_array().unwrap());
    assert!(!names.is_empty());
    assert!(names.iter().all(|n| n.starts_with("hello_")), "{names:?}");
    assert_eq!(
        ok_text(&reader.call_tool("hello_greet", json!({"name": "r"}))),
        "Hello, r!"
    );
    // Out of scope is answered exactly as an unknown tool.
    let hidden = reader.request_message(
        "tools/call",
        json!({"name": "misbehave_ok", "arguments": {}}),
    );
    let hidden = reader.exchange_message(&hidden).response;
    let unknown = reader.request_message(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    let unknown = reader.exchange_message(&unknown).response;
    assert_eq!(
        hidden["error"]["code"], unknown["error"]["code"],
        "{hidden}"
    );
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    assert_eq!(hidden["error"]["message"], "unknown tool: misbehave_ok");

    let mut ops = with_token(&server, OPS_TOKEN);
    ops.initialize(LATEST_VERSION);
    let tools = ops.result("tools/list", json!({}));
    assert_eq!(
        tool_names(tools["tools"].as_array().unwrap()),
        ["misbehave_ok"]
    );
    assert_eq!(
        ok_text(&ops.call_tool("misbehave_ok", json!({}))),
        "still fine"
    );

    // A session belongs to its token: the reader cannot ride the ops session.
    let mut stolen = with_token(&server, READER_TOKEN);
    stolen.session_id = ops.session_id.clone();
    let message = stolen.request_message("tools/list", json!({}));
    stolen.post(&message).expect_error_status(404);
}

#[test]
fn the_sse_2024_transport_needs_a_token_too() {
    let layout = Layout::new();
    let server = http_server_with_tokens(&layout);
    let (status, text) = raw_http(
        &server.addr,
        &format!(
            "GET /sse HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream",
            server.addr
        ),
        b"",
    );
    assert_eq!(status, 401, "{text}");
    assert!(
        text.to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{text}"
    );
}

#[test]
fn each_token_has_its_own_rate_and_is_named_in_the_audit_log() {
    let layout = Layout::new();
    let tokens = format!(
        r#"[audit]
path = "audit.jsonl"

[[auth.tokens]]
name = "first"
sha256 = "{}"
scope = "all"

[[auth.tokens]]
name = "second"
sha256 = "{}"
scope = "all"
"#,
        sha256_hex(READER_TOKEN),
        sha256_hex(OPS_TOKEN)
    );
    let config = layout.config("", "calls_per_minute_per_client = 2", &tokens);
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let mut first = with_token(&server, READER_TOKEN);
    first.initialize(LATEST_VERSION);
    for _ in 0..2 {
        assert_eq!(
            ok_text(&first.call_tool("misbehave_ok", json!({}))),
            "still fine"
        );
    }
    let over = first.call_tool("misbehave_ok", json!({}));
    error_text(&over, "by this client");
    // A second session of the same token shares its allowance; another token has its own.
    let mut again = with_token(&server, READER_TOKEN);
    again.initialize(LATEST_VERSION);
    error_text(
        &again.call_tool("misbehave_ok", json!({})),
        "by this client",
    );
    let mut second = with_token(&server, OPS_TOKEN);
    second.initialize(LATEST_VERSION);
    assert_eq!(
        ok_text(&second.call_tool("misbehave_ok", json!({}))),
        "still fine"
    );
    let clients: Vec<String> = std::fs::read_to_string(layout.path("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["client"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(clients, ["first", "first", "first", "first", "second"]);
}

#[test]
fn stdio_gets_the_operators_scope() {
    let layout = Layout::new();
    let config = layout.config(
        "",
        "",
        "[auth]\nstdio_scope = \"mine\"\n[auth.scopes]\nmine = [\"misbehave/ok\", \"misbehave/read_*\"]\n",
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    let mut names = tool_names(&tools);
    names.sort();
    assert_eq!(names, ["misbehave_ok", "misbehave_read_file"]);
    let response = s.call_tool_response("hello_greet", json!({"name": "x"}));
    assert_eq!(error_code(&response), Some(-32602), "{response}");
}

// -- human in the loop --

fn confirming_server(layout: &Layout) -> Server {
    let config = layout.config(
        "[plugins.misbehave.tools.write_file]\nconfirm = true\nannotations = { readOnlyHint = false, destructiveHint = true, title = \"Write a file\" }",
        "",
        "",
    );
    Server::start(&["--no-watch", "--config", &path_str(&config)])
}

#[test]
fn a_confirmed_tool_runs_only_when_the_user_accepts() {
    let layout = Layout::new();
    let mut s = confirming_server(&layout);
    s.initialize_with_capabilities(LATEST_VERSION, json!({"elicitation": {}}));
    s.notify("notifications/initialized", Value::Null);
    let call = |s: &mut Server, file: &str| {
        s.send_request(
            "tools/call",
            json!({"name": "misbehave_write_file", "arguments": {"path": format!("/data/{file}"), "text": "yes"}}),
        )
    };
    // Declined: nothing written.
    let id = call(&mut s, "declined.txt");
    let ask = s.wait_server_request("elicitation/create", default_timeout());
    let message = ask["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("misbehave_write_file"), "{ask}");
    assert!(
        message.contains("declined.txt"),
        "the arguments are shown: {ask}"
    );
    s.respond(&ask["id"], json!({"action": "decline"}));
    let response = s.wait_response(&id, default_timeout());
    let result = s.expect_result(response);
    error_text(&result, "declined");
    assert!(!layout.path("granted/declined.txt").exists());
    // Accepted: written.
    let id = call(&mut s, "accepted.txt");
    let ask = s.wait_server_request("elicitation/create", default_timeout());
    s.respond(&ask["id"], json!({"action": "accept", "content": {}}));
    let response = s.wait_response(&id, default_timeout());
    let result = s.expect_result(response);
    assert!(!is_tool_error(&result), "{result}");
    assert!(layout.path("granted/accepted.txt").exists());
    // Tools without confirm are not asked about.
    assert_eq!(
        ok_text(&s.call_tool("misbehave_ok", json!({}))),
        "still fine"
    );
}

#[test]
fn a_client_that_cannot_confirm_is_refused() {
    let layout = Layout::new();
    let mut s = confirming_server(&layout);
    s.initialize(LATEST_VERSION);
    let result = s.call_tool(
        "misbehave_write_file",
        json!({"path": "/data/never.txt", "text": "no"}),
    );
    let text = error_text(&result, "confirm");
    assert!(text.contains("cannot be asked"), "{text}");
    assert!(!layout.path("granted/never.txt").exists());
}

#[test]
fn the_configuration_overrides_tool_annotations() {
    let layout = Layout::new();
    let mut s = confirming_server(&layout);
    s.initialize(LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    let tool = tools
        .iter()
        .find(|t| t["name"] == "misbehave_write_file")
        .unwrap();
    assert_eq!(
        tool["annotations"],
        json!({"title": "Write a file", "readOnlyHint": false, "destructiveHint": true}),
        "{tool}"
    );
}

#[test]
fn settings_for_a_tool_the_plugin_lacks_are_refused() {
    let layout = Layout::new();
    let config = layout.config(
        "[plugins.misbehave.tools.wirte_file]\nconfirm = true",
        "",
        "",
    );
    assert_plugin_refused(&["--config", &path_str(&config)], "wirte_file");
}

// -- audit log and integrity --

#[test]
fn every_call_is_audited() {
    let layout = Layout::new();
    let config = layout.config(
        "",
        "calls_per_minute_per_client = 3",
        "[audit]\npath = \"audit.jsonl\"\n",
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    s.call_tool("misbehave_read_file", json!({"path": "/data/inside.txt"}));
    s.call_tool("misbehave_read_file", json!({"path": "/etc/passwd"}));
    s.call_tool_response("no_such_tool", json!({}));
    s.call_tool("misbehave_ok", json!({}));
    s.call_tool("misbehave_ok", json!({}));
    let lines: Vec<Value> = std::fs::read_to_string(layout.path("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcomes: Vec<&str> = lines
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["ok", "tool-error", "unknown-tool", "ok", "limit"],
        "{lines:?}"
    );
    let first = &lines[0];
    assert_eq!(first["client"], "stdio");
    assert_eq!(first["plugin"], "misbehave");
    assert_eq!(first["tool"], "misbehave_read_file");
    assert!(first["fuel_used"].as_u64().unwrap() > 0, "{first}");
    assert!(first["duration_ms"].as_f64().is_some(), "{first}");
    assert!(first["time"].as_str().unwrap().ends_with('Z'), "{first}");
    assert_eq!(
        first["arguments_sha256"],
        sha256_hex(&json!({"path": "/data/inside.txt"}).to_string())
    );
    assert!(first.get("arguments").is_none());
    assert!(lines[4]["detail"].as_str().unwrap().contains("retry in"));
}

#[test]
fn a_pinned_hash_refuses_a_different_file() {
    let layout = Layout::new();
    let wrong = "0".repeat(64);
    let config = layout.config(&format!("sha256 = \"{wrong}\""), "", "");
    let mut refused = assert_plugin_refused(&["--config", &path_str(&config)], &wrong);
    let (tools, _) = refused.list_all_tools();
    let names = tool_names(&tools);
    assert!(
        !names.iter().any(|n| n.starts_with("misbehave_")),
        "a refused file serves nothing: {names:?}"
    );
    let actual = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(
            std::fs::read(plugin_path("misbehave")).unwrap(),
        ))
    };
    let stderr = refused.stderr();
    assert!(stderr.contains(&actual), "names both hashes:\n{stderr}");
    // The right hash loads.
    let config = layout.config(&format!("sha256 = \"{actual}\""), "", "");
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    still_serving(&mut s);
}

#[test]
fn inspect_shows_imports_next_to_the_grants() {
    let layout = Layout::new();
    let config = layout.config(
        "network = [\"api.example.com\"]\n[plugins.misbehave.env]\nGIVEN = \"x\"",
        "",
        "",
    );
    let out = run_palisade(
        &["inspect", "--config", &path_str(&config), "misbehave"],
        false,
        secs(120),
    );
    assert!(out.success(), "{out}");
    let text = &out.stdout;
    assert!(text.contains("sha256: "), "{text}");
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle} line:\n{text}"))
            .to_string()
    };
    assert!(line("wasi:http/outgoing-handler").contains("api.example.com"));
    assert!(line("wasi:cli/environment").contains("GIVEN"));
    assert!(line("wasi:filesystem/preopens").contains("/data"));
}

/// Instances reuse the slots of wasmtime's pooling allocator: a call must still never see what an
/// earlier call (its own plugin's or, in concurrent calls, a sibling's) left in memory, in data
/// from the module's image or in zero-initialized memory.
#[test]
fn no_call_sees_what_an_earlier_call_left_in_memory() {
    let layout = Layout::new();
    let mut s = layout.server("", "");
    for _ in 0..20 {
        assert_eq!(
            ok_text(&s.call_tool("misbehave_leftovers", json!({}))),
            "clean"
        );
    }
    // Several at once, so several slots are in use, then again one at a time from those slots.
    for _ in 0..3 {
        let ids: Vec<Value> = (0..8)
            .map(|_| {
                s.send_request(
                    "tools/call",
                    json!({"name": "misbehave_leftovers", "arguments": {}}),
                )
            })
            .collect();
        for id in ids {
            let response = s.wait_response(&id, std::time::Duration::from_secs(60));
            assert_eq!(ok_text(&response["result"]), "clean", "{response}");
        }
    }
}
