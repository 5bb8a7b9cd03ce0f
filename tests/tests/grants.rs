//! Ask, don't guess: a plugin with `ask = true` that reaches for a host or an environment
//! variable it was not granted makes the server ask the user through elicitation (allow once,
//! always, deny). "Always" lands in palisade.grants beside the configuration, shown by
//! `palisade grants` and removed by `palisade grants revoke`; a client that cannot elicit gets
//! a deny that says how to grant it; every decision is audited.

use std::path::{Path, PathBuf};

use palisade_tests::*;
use serde_json::{Value, json};

const BODY: &str = "hello from the asked host";
const SECRET_VAR: &str = "PALISADE_TEST_ASKED_SECRET";

/// `dir/palisade.toml`: misbehave with `ask` as given and no grants, hello beside it, and an
/// audit log at `dir/audit.jsonl`.
fn config(dir: &Path, ask: &str) -> PathBuf {
    config_file(
        dir,
        &format!(
            "[audit]\npath = \"audit.jsonl\"\n\n[plugins.misbehave]\npath = {}\n{ask}\n\n\
             [plugins.hello]\npath = {}\n",
            toml_str(&plugin_arg("misbehave")),
            toml_str(&plugin_arg("hello")),
        ),
    )
}

fn start(config: &Path, capabilities: Value) -> Server {
    let mut s = Server::builder()
        .args(["--no-watch", "--config", &path_str(config)])
        .env(SECRET_VAR, "s3cret")
        .start();
    s.initialize_with_capabilities(LATEST_VERSION, capabilities);
    // A short `timeout_ms` bounds the wait for a loading plugin too: load first.
    s.wait_ready();
    s
}

/// Calls `tool`, waits for the server's question, checks it names `wanted`, answers `decision`
/// (or declines when `None`), and returns the call's result.
#[track_caller]
fn call_and_answer(
    s: &mut Server,
    tool: &str,
    arguments: Value,
    wanted: &str,
    decision: Option<&str>,
) -> Value {
    let id = s.send_request("tools/call", json!({"name": tool, "arguments": arguments}));
    let ask = s.wait_server_request("elicitation/create", default_timeout());
    let message = ask["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`misbehave` wants to"), "{ask}");
    assert!(message.contains(wanted), "{ask}");
    let choices = &ask["params"]["requestedSchema"]["properties"]["decision"]["enum"];
    assert_eq!(
        choices,
        &json!(["Allow once", "Always allow", "Deny"]),
        "{ask}"
    );
    let answer = match decision {
        Some(d) => json!({"action": "accept", "content": {"decision": d}}),
        None => json!({"action": "decline"}),
    };
    s.respond(&ask["id"], answer);
    let response = s.wait_response(&id, default_timeout());
    s.expect_result(response)
}

fn audit_outcomes(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dir.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l.get("grant").is_some())
        .map(|l| {
            (
                l["outcome"].as_str().unwrap_or_default().to_string(),
                l["grant"]["name"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_user_allows_once_denies_or_always_and_can_revoke() {
    let port = local_http_server(BODY);
    let url = format!("http://127.0.0.1:{port}/");
    let grant = format!("http://127.0.0.1:{port}");
    let dir = tempdir();
    let config = config(dir.path(), "ask = true");
    let mut s = start(&config, json!({"elicitation": {}}));
    let get = json!({"url": url});

    // Once: this call gets through; the next one asks again. The question says the address is
    // on the server's own network.
    let id = s.send_request(
        "tools/call",
        json!({"name": "misbehave_http_get", "arguments": get}),
    );
    let ask = s.wait_server_request("elicitation/create", default_timeout());
    assert!(
        ask["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&grant) && m.contains("private network")),
        "{ask}"
    );
    // A question waiting for the user stalls no one else.
    assert_eq!(
        ok_text(&s.call_tool("hello_greet", json!({"name": "neighbour"}))),
        "Hello, neighbour!"
    );
    s.respond(
        &ask["id"],
        json!({"action": "accept", "content": {"decision": "Allow once"}}),
    );
    let response = s.wait_response(&id, default_timeout());
    let once = s.expect_result(response);
    assert!(ok_text(&once).contains(BODY), "{once}");

    // Deny: refused, and the client reads what was refused and how to grant it.
    let denied = call_and_answer(
        &mut s,
        "misbehave_http_get",
        get.clone(),
        &grant,
        Some("Deny"),
    );
    let text = error_text(&denied, "HttpRequestDenied");
    assert!(text.contains("Palisade refused this call"), "{text}");
    assert!(text.contains("the user denied it"), "{text}");
    assert!(text.contains(&format!("network = [\"{grant}\"]")), "{text}");
    // Declining the form is a deny too.
    let declined = call_and_answer(&mut s, "misbehave_http_get", get.clone(), &grant, None);
    error_text(&declined, "HttpRequestDenied");
    assert!(
        !dir.path().join("palisade.grants").exists(),
        "nothing remembered yet"
    );

    // Always: remembered beside the configuration, private, and asked no more.
    let always = call_and_answer(
        &mut s,
        "misbehave_http_get",
        get.clone(),
        &grant,
        Some("Always allow"),
    );
    assert!(ok_text(&always).contains(BODY), "{always}");
    let grants_file = dir.path().join("palisade.grants");
    let written = std::fs::read_to_string(&grants_file).unwrap();
    assert!(written.contains(&grant), "{written}");
    assert!(
        !std::fs::read_to_string(&config).unwrap().contains(&grant),
        "the hand-written configuration is left alone"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&grants_file)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let again = s.call_tool("misbehave_http_get", get.clone());
    assert!(ok_text(&again).contains(BODY), "{again}");

    // `palisade grants` shows it; revoking it is seen by the running server at once.
    let config_arg = path_str(&config);
    let shown = run_palisade(&["grants", "--config", &config_arg], false, secs(30));
    assert!(shown.success(), "{shown}");
    assert!(
        shown.stdout.contains("[misbehave]") && shown.stdout.contains(&grant),
        "{shown}"
    );
    let wrong = run_palisade(
        &[
            "grants",
            "revoke",
            "misbehave",
            "nope.example",
            "--config",
            &config_arg,
        ],
        false,
        secs(30),
    );
    assert!(!wrong.success(), "{wrong}");
    assert!(
        wrong.stderr.contains(&grant),
        "lists what it holds: {wrong}"
    );
    let revoked = run_palisade(
        &[
            "grants",
            "revoke",
            "misbehave",
            &grant,
            "--config",
            &config_arg,
        ],
        false,
        secs(30),
    );
    assert!(revoked.success(), "{revoked}");
    assert!(revoked.stdout.contains("revoked network"), "{revoked}");
    let after = call_and_answer(&mut s, "misbehave_http_get", get, &grant, Some("Deny"));
    error_text(&after, "HttpRequestDenied");

    // An environment variable: asked for by name, its value given only when allowed.
    let env = json!({"name": SECRET_VAR});
    let refused = call_and_answer(
        &mut s,
        "misbehave_get_env",
        env.clone(),
        SECRET_VAR,
        Some("Deny"),
    );
    let text = error_text(&refused, "is not available");
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("from_host"), "says how to grant it: {text}");
    let given = call_and_answer(
        &mut s,
        "misbehave_get_env",
        env.clone(),
        SECRET_VAR,
        Some("Allow once"),
    );
    assert_eq!(ok_text(&given), format!("{SECRET_VAR}=s3cret"));
    // A variable the server does not have is not worth a question.
    let unset = s.call_tool(
        "misbehave_get_env",
        json!({"name": "PALISADE_TEST_SURELY_UNSET"}),
    );
    error_text(&unset, "is not available");

    // Every decision is in the audit log.
    let outcomes = audit_outcomes(dir.path());
    for expected in [
        ("grant-once", grant.as_str()),
        ("grant-denied", grant.as_str()),
        ("grant-always", grant.as_str()),
        ("grant-denied", SECRET_VAR),
        ("grant-once", SECRET_VAR),
    ] {
        assert!(
            outcomes
                .iter()
                .any(|(o, g)| o == expected.0 && g == expected.1),
            "{expected:?} in {outcomes:?}"
        );
    }
}

#[test]
fn a_client_that_cannot_elicit_gets_a_deny_that_says_how_to_grant() {
    let port = local_http_server(BODY);
    let dir = tempdir();
    let config = config(dir.path(), "ask = true");
    let mut s = start(&config, json!({}));
    let result = s.call_tool(
        "misbehave_http_get",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
    );
    let text = error_text(&result, "HttpRequestDenied");
    assert!(text.contains("could not be asked"), "{text}");
    assert!(
        text.contains("elicitation"),
        "names what is missing: {text}"
    );
    assert!(
        text.contains(&format!("network = [\"http://127.0.0.1:{port}\"]")),
        "{text}"
    );
    let result = s.call_tool("misbehave_get_env", json!({"name": SECRET_VAR}));
    let text = error_text(&result, "is not available");
    assert!(!text.contains("s3cret"), "{text}");
    let outcomes = audit_outcomes(dir.path());
    assert!(
        outcomes.iter().any(|(o, _)| o == "grant-unasked"),
        "{outcomes:?}"
    );
    // `inspect` says the plugin may ask.
    let inspected = run_palisade(
        &["inspect", "--config", &path_str(&config), "misbehave"],
        false,
        secs(60),
    );
    assert!(inspected.success(), "{inspected}");
    assert!(
        inspected
            .stdout
            .contains("any other host: the user is asked (ask = true)"),
        "{inspected}"
    );
}

#[test]
fn without_ask_nothing_is_asked_and_grants_in_the_file_still_count() {
    let port = local_http_server(BODY);
    let grant = format!("http://127.0.0.1:{port}");
    let dir = tempdir();
    let config = config(dir.path(), "");
    let mut s = start(&config, json!({"elicitation": {}}));
    let get = json!({"url": format!("{grant}/")});
    // No question comes: the call is refused straight away.
    let text = error_text(
        &s.call_tool("misbehave_http_get", get.clone()),
        "HttpRequestDenied",
    );
    assert!(text.contains("host not granted"), "{text}");
    // A grant the user gave earlier (when ask was on) still counts; a file others could
    // write does not.
    let grants = dir.path().join("palisade.grants");
    write_file(
        &grants,
        format!(
            "version = 1\n[[plugins.misbehave.network]]\ngrant = \"{grant}\"\nat = \"2026-11-24T00:00:00Z\"\nby = \"stdio\"\n"
        ),
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&grants, std::fs::Permissions::from_mode(0o666)).unwrap();
        error_text(
            &s.call_tool("misbehave_http_get", get.clone()),
            "HttpRequestDenied",
        );
        assert!(s.wait_for_stderr("chmod 600", secs(5)));
        std::fs::set_permissions(&grants, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    assert!(ok_text(&s.call_tool("misbehave_http_get", get)).contains(BODY));
    // `palisade remove` forgets the plugin's grants with it.
    let removed = run_palisade(
        &["remove", "misbehave", "--config", &path_str(&config)],
        false,
        secs(30),
    );
    assert!(removed.success(), "{removed}");
    assert!(removed.stdout.contains("remembered grants"), "{removed}");
    assert!(
        !std::fs::read_to_string(&grants)
            .unwrap()
            .contains("misbehave"),
        "the grants went with the plugin"
    );
}

#[test]
fn a_plugin_cannot_pose_or_answer_the_hosts_questions() {
    let dir = tempdir();
    let config = config(dir.path(), "ask = true");
    let mut s = start(&config, json!({"elicitation": {}}));
    let result = s.call_tool(
        "misbehave_ask_key",
        json!({"key": "palisade/grant/network/evil.example"}),
    );
    let text = error_text(&result, "the host's own");
    assert!(text.contains("palisade/"), "{text}");
    // Nor can it get a wildcard put to the user: `*` is legal in a URI's host, and "always"
    // would grant every subdomain. It is refused without a question.
    let wildcard = s.call_tool(
        "misbehave_http_get",
        json!({"url": "http://*.evil.example/"}),
    );
    error_text(&wildcard, "HttpRequestDenied");
    // Its own keys are fine (the question reaches the client).
    let id = s.send_request(
        "tools/call",
        json!({"name": "misbehave_ask_key", "arguments": {"key": "cats"}}),
    );
    let ask = s.wait_server_request("elicitation/create", default_timeout());
    s.respond(&ask["id"], json!({"action": "decline"}));
    let response = s.wait_response(&id, default_timeout());
    let result = s.expect_result(response);
    assert!(ok_text(&result).contains("Decline"), "{result}");
}

#[test]
fn the_user_may_take_longer_than_the_calls_time_limit_to_answer() {
    let port = local_http_server(BODY);
    let dir = tempdir();
    let config = config(
        dir.path(),
        "ask = true\n[plugins.misbehave.limits]\ntimeout_ms = 1000",
    );
    let mut s = start(&config, json!({"elicitation": {}}));
    let id = s.send_request(
        "tools/call",
        json!({"name": "misbehave_http_get", "arguments": {"url": format!("http://127.0.0.1:{port}/")}}),
    );
    let ask = s.wait_server_request("elicitation/create", default_timeout());
    // Reading the question takes longer than the call may run: the wait does not count.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    s.respond(
        &ask["id"],
        json!({"action": "accept", "content": {"decision": "Allow once"}}),
    );
    let response = s.wait_response(&id, default_timeout());
    let result = s.expect_result(response);
    assert!(ok_text(&result).contains(BODY), "{result}");
    // The limit still holds for the plugin's own time.
    let slow = s.call_tool("misbehave_sleep", json!({"ms": 3000}));
    error_text(&slow, "1000 ms");
}
