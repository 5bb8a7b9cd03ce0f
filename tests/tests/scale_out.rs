//! Palisade scaled out: two `palisade serve --http` processes behind nginx, which spreads requests
//! round robin with no affinity. MCP 2026-07-28 needs none: every request carries what it needs,
//! and an input round trip's `requestState` is signed with a key the processes share through
//! `[server] request_state_key_file`. Without a shared key a state is good only at the process
//! that issued it. nginx is Debian's (`./dev test` installs it); each test runs its own, with a
//! generated configuration in a temporary directory, and stops it when done.

use std::collections::BTreeSet;
use std::path::Path;

use palisade_tests::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Two Palisades
// ---------------------------------------------------------------------------

const SHARED_SECRET: &str = "scale-out-secret-0123456789abcdef-0123456789";

/// `<dir>/palisade.toml` serving the conformance fixtures, with the state key file `state.key`
/// (written beside it) when `shared_key`.
fn config(dir: &Path, shared_key: bool) -> String {
    let server = if shared_key {
        write_file(dir.join("state.key"), format!("{SHARED_SECRET}\n"));
        "request_state_key_file = \"state.key\"\n"
    } else {
        ""
    };
    let path = config_file(
        dir,
        &format!(
            "[server]\nwatch = false\n{server}\n[plugins.conformance]\npath = {}\nprefix = \"\"\n",
            toml_str(&plugin_arg("conformance"))
        ),
    );
    path_str(&path)
}

/// Two servers of `config` and a balancer in front of them.
fn scaled_out(config: &str) -> (HttpServer, HttpServer, Nginx) {
    let a = HttpServer::start(&["--no-watch", "--config", config]);
    let b = HttpServer::start(&["--no-watch", "--config", config]);
    let nginx = Nginx::start(&[&a.addr, &b.addr]);
    (a, b, nginx)
}

fn caps() -> Value {
    json!({"elicitation": {}})
}

/// One elicitation round trip through the balancer: where each half went, and how the second
/// ended (its text, or its error code).
#[derive(Debug)]
struct Trip {
    first: String,
    second: String,
    outcome: Result<String, i64>,
}

const TOOL: &str = "test_input_required_result_elicitation";

/// `n` round trips (a call, then its retry with the answer and the state) through `nginx`.
fn round_trips(nginx: &Nginx, n: usize) -> Vec<Trip> {
    let mut c = HttpClient::new(&nginx.url);
    c.version = STATELESS_VERSION.to_string();
    let upstream = |answer: &StatelessAnswer| {
        answer
            .header("x-upstream")
            .unwrap_or_else(|| panic!("no X-Upstream from nginx: {answer:?}"))
    };
    (0..n)
        .map(|_| {
            let call = c.stateless_message(
                "tools/call",
                json!({"name": TOOL, "arguments": {}}),
                &caps(),
            );
            let first = c.stateless_exchange(&call, &[]);
            let asked = first.result();
            assert_eq!(asked["resultType"], "input_required", "{asked}");
            let retry = c.stateless_message(
                "tools/call",
                json!({"name": TOOL, "arguments": {}, "requestState": asked["requestState"],
                       "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}}),
                &caps(),
            );
            let second = c.stateless_exchange(&retry, &[]);
            let outcome = match second.response.get("result") {
                Some(result) => Ok(tool_text(result)),
                None => Err(error_code(&second.response)
                    .unwrap_or_else(|| panic!("neither result nor error: {second:?}"))),
            };
            Trip {
                first: upstream(&first),
                second: upstream(&second),
                outcome,
            }
        })
        .collect()
}

/// Proves: behind a round-robin balancer, two processes sharing `request_state_key_file` complete
/// every input round trip, including those whose retry lands on the other process; both served
/// requests; and the official Python SDK, through the balancer, gets through every step of its
/// 2026-07-28 run (input round trips, mirrored headers, progress over SSE), served by both.
#[test]
fn a_shared_key_lets_any_process_finish_a_round_trip() {
    let dir = tempdir();
    let config = config(dir.path(), true);
    let (a, b, nginx) = scaled_out(&config);
    let servers = || format!("--- server A\n{}\n--- server B\n{}", a.stderr(), b.stderr());

    let trips = round_trips(&nginx, 6);
    for trip in &trips {
        assert_eq!(
            trip.outcome,
            Ok("Hello, Alice!".to_string()),
            "{trip:?}\n{}",
            servers()
        );
    }
    assert!(
        trips.iter().any(|t| t.first != t.second),
        "no round trip crossed the two servers (is the balancer round robin?): {trips:?}"
    );
    let served: BTreeSet<&str> = trips
        .iter()
        .flat_map(|t| [t.first.as_str(), t.second.as_str()])
        .collect();
    assert_eq!(
        served,
        BTreeSet::from([a.addr.as_str(), b.addr.as_str()]),
        "{trips:?}"
    );

    let before = nginx.access_log_upstreams().len();
    let summary = run_python_stateless(&["http", &nginx.url, "--no-listen"], &|| {
        format!("{}\n{}", servers(), nginx.logs())
    });
    check_python_stateless_summary(&summary, false);
    let upstreams = nginx.access_log_upstreams();
    let python: BTreeSet<&str> = upstreams[before..].iter().map(String::as_str).collect();
    for server in [&a.addr, &b.addr] {
        assert!(
            python.contains(server.as_str()),
            "{server} served none of the Python client's requests: {:?}",
            &upstreams[before..]
        );
    }
}

/// Proves: without a shared key each process signs with its own, so through the balancer a round
/// trip whose retry lands on the other process fails (-32602), while one that stays on its process
/// completes; and directly, a state from one process is refused by the other.
#[test]
fn without_a_shared_key_a_round_trip_fails_across_processes() {
    let dir = tempdir();
    let config = config(dir.path(), false);
    let (a, b, nginx) = scaled_out(&config);

    let trips = round_trips(&nginx, 6);
    for trip in &trips {
        let expected = if trip.first == trip.second {
            Ok("Hello, Alice!".to_string())
        } else {
            Err(INVALID_PARAMS)
        };
        assert_eq!(trip.outcome, expected, "{trip:?}");
    }
    assert!(
        trips.iter().any(|t| t.first != t.second),
        "no round trip crossed the two servers (is the balancer round robin?): {trips:?}"
    );

    let (mut ca, mut cb) = (a.stateless_client(), b.stateless_client());
    let asked = ca.stateless_result(
        "tools/call",
        json!({"name": TOOL, "arguments": {}}),
        &caps(),
    );
    let retry = json!({"name": TOOL, "arguments": {}, "requestState": asked["requestState"],
                       "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}});
    let msg = cb.stateless_message("tools/call", retry.clone(), &caps());
    let refused = cb.stateless_exchange(&msg, &[]);
    expect_error_code(&refused.response, INVALID_PARAMS);
    let done = ca.stateless_result("tools/call", retry, &caps());
    assert_eq!(tool_text(&done), "Hello, Alice!");
}

// ---------------------------------------------------------------------------
// Behind a trusted proxy
// ---------------------------------------------------------------------------

/// A TCP connection to `to` from the loopback address `from`.
fn connect_from(from: &str, to: &str) -> std::net::TcpStream {
    let to: std::net::SocketAddr = to.parse().unwrap();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local: std::net::SocketAddr = format!("{from}:0").parse().unwrap();
    socket.bind(&local.into()).unwrap();
    socket.connect(&to.into()).unwrap();
    socket.into()
}

/// `initialize` posted from `from` to `to` (`HOST:PORT`): the HTTP status line and the body.
fn initialize_from(from: &str, to: &str) -> String {
    use std::io::{Read as _, Write as _};
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "crowd", "version": "1"}}})
    .to_string();
    let mut stream = connect_from(from, to);
    stream.set_read_timeout(Some(secs(60))).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {to}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// Whether the server closed `stream` (it reads the end at once).
fn is_closed(stream: &mut std::net::TcpStream) -> bool {
    use std::io::Read as _;
    stream.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    !matches!(stream.read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// Behind nginx, which the server trusts, each client is the address nginx names: 300 clients
/// from 300 addresses, at once, each opening a session, are all served; meanwhile one address
/// holds 1,000 connections straight to the server without sending a request, and keeps only
/// its own share of them.
#[test]
fn behind_a_trusted_proxy_300_clients_are_served_while_one_address_holds_1000_slow_connections() {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[server.http]\ntrusted_proxies = [\"127.0.0.1\"]\n\n\
             [plugins.conformance]\npath = {}\nprefix = \"\"\n",
            toml_str(&plugin_arg("conformance"))
        ),
    );
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let nginx = Nginx::start(&[&server.addr]);
    let balancer = nginx
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();

    let mut slow: Vec<std::net::TcpStream> = (0..1000)
        .map(|_| connect_from("127.0.0.2", &server.addr))
        .collect();

    let start = std::sync::Arc::new(std::sync::Barrier::new(300));
    let clients: Vec<_> = (0..300)
        .map(|i| {
            let (start, balancer) = (start.clone(), balancer.clone());
            std::thread::spawn(move || {
                let from = format!("127.0.{}.{}", 10 + i / 200, 1 + i % 200);
                start.wait();
                (from.clone(), initialize_from(&from, &balancer))
            })
        })
        .collect();
    for client in clients {
        let (from, answer) = client.join().unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.contains("\"protocolVersion\""),
            "client {from} was not served:\n{answer}\n{}",
            server.stderr()
        );
    }
    assert!(
        !nginx.access_log_upstreams().iter().any(|u| u == "-"),
        "nginx reached no server for some request"
    );
    // The slow address kept its own share: the connections past it gave way, oldest first.
    let deadline = std::time::Instant::now() + secs(10);
    let held = loop {
        let mut held = 0;
        for stream in &mut slow {
            held += usize::from(!is_closed(stream));
        }
        if held <= 128 || std::time::Instant::now() > deadline {
            break held;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(held <= 128, "one address holds {held} connections");
}
