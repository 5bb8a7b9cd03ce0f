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
