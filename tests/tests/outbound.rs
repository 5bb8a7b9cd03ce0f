//! Plugins that talk to the world: HTTP from each SDK (Rust `palisade_sdk::http`, Python
//! `palisade_sdk.http` and `urllib`, JavaScript `fetch()`), only to granted hosts; secrets from
//! `[plugins.NAME.secrets]`, kept out of everything the host writes; and the example plugins
//! built on them (fetch, github, weather), each against an API the test starts on loopback.
//!
//! `http-client` (plugins/fixtures/http-client), `http-py` and `http-js` drive their SDK's
//! client from a tool's arguments.

use std::path::Path;
use std::time::{Duration, Instant};

use palisade_tests::*;
use serde_json::{Value, json};

const TOKEN: &str = "tok-abcdef123456";
const TOKEN_VAR: &str = "PALISADE_TEST_OUTBOUND_TOKEN";

/// A server with plugin `plugin` as `net`, `section` appended to its section, and the secret
/// variable set.
fn serve(dir: &Path, plugin: &str, section: &str) -> Server {
    let config = config_file(
        dir,
        &format!(
            "[plugins.net]\npath = {}\n{section}\n",
            toml_str(&plugin_arg(plugin))
        ),
    );
    let mut s = Server::builder()
        .args(["--no-watch", "--config", &path_str(&config)])
        .env(TOKEN_VAR, TOKEN)
        .start();
    s.initialize(LATEST_VERSION);
    s
}

fn network(apis: &[&FakeApi]) -> String {
    let grants: Vec<String> = apis.iter().map(|a| format!("{:?}", a.grant())).collect();
    format!("network = [{}]", grants.join(", "))
}

/// `section` with the secret `API_TOKEN` (= [`TOKEN`]) granted.
fn with_token(section: &str) -> String {
    format!("{section}\n[plugins.net.secrets]\nAPI_TOKEN = {{ env = \"{TOKEN_VAR}\" }}\n")
}

/// The structured answer of http-client's `request`.
fn structured(result: &Value) -> &Value {
    assert!(!is_tool_error(result), "{result}");
    &result["structuredContent"]
}

#[test]
fn rust_sdk_sends_json_headers_and_a_bearer_secret_and_reads_json() {
    let api = FakeApi::start(|seen| match seen.route() {
        "/v1/items" => Reply::json(201, json!({ "created": seen.body_json() })),
        _ => Reply::not_found(),
    });
    let dir = tempdir();
    let section = with_token(&network(&[&api]));
    let mut s = serve(dir.path(), "http-client", &section);
    let result = s.call_tool(
        "net_request",
        json!({
            "url": api.url("/v1/items?x=1"),
            "method": "POST",
            "json": { "a": 1 },
            "headers": { "x-trace": "t1" },
            "bearer_secret": "API_TOKEN",
        }),
    );
    let answer = structured(&result);
    assert_eq!(answer["status"], 201);
    assert_eq!(answer["content_type"], "application/json");
    let body: Value = serde_json::from_str(answer["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({ "created": { "a": 1 } }));
    let seen = api.last();
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("POST", "/v1/items?x=1")
    );
    assert_eq!(
        seen.header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.header("content-length"), Some("7"));
    assert_eq!(seen.header("x-trace"), Some("t1"));
    assert_eq!(seen.body_json(), json!({ "a": 1 }));
}

/// An HTTPS API on loopback answering `/hello`, and the PEM file of the authority that issued
/// its certificate (made in `dir`).
fn tls_api(dir: &Path) -> (FakeApi, std::path::PathBuf) {
    let (ca, cert, key) = loopback_tls_certificate(dir);
    let api = FakeApi::start_tls(&cert, &key, |seen| match seen.route() {
        "/hello" => Reply::text("hi over TLS"),
        _ => Reply::not_found(),
    });
    (api, ca)
}

/// `[plugins.NAME]` of component `plugin`, granted `api` and trusting `ca` when given.
fn plugin_section(name: &str, plugin: &str, api: &FakeApi, ca: Option<&Path>) -> String {
    let ca = ca.map_or(String::new(), |ca| {
        format!("ca_file = {}\n", toml_str(&path_str(ca)))
    });
    format!(
        "[plugins.{name}]\npath = {}\nnetwork = [{:?}]\n{ca}\n",
        toml_str(&plugin_arg(plugin)),
        api.grant()
    )
}

/// Plugins' HTTPS: a Rust SDK plugin, the `fetch` example and a generic component reach an API
/// whose certificate a test authority issued once the operator trusts that authority (per
/// plugin, or for all with `[server] ca_file`); without it the call fails at once with the
/// host and the reason. (The Python and JavaScript SDKs are in their own tests below.)
#[test]
fn https_trusts_the_operators_authority_and_says_why_it_does_not_trust_others() {
    let dir = tempdir();
    let (ca, cert, key) = loopback_tls_certificate(dir.path());
    let api = FakeApi::start_tls(&cert, &key, |seen| match seen.route() {
        "/hello" => Reply::text("hi over TLS"),
        "/page" => Reply::html("<html><body><h1>Secure</h1><p>over <b>TLS</b></p></body></html>"),
        _ => Reply::not_found(),
    });
    let mut sections = plugin_section("rs", "http-client", &api, Some(&ca));
    sections += &plugin_section("fetch", "fetch", &api, Some(&ca));
    sections += &plugin_section("svc", "generic-service", &api, Some(&ca));
    sections += &format!("[plugins.svc.config]\napi-url = {:?}\n\n", api.url(""));
    sections += &plugin_section("untrusting", "http-client", &api, None);
    let config = config_file(dir.path(), &sections);
    let mut s = Server::builder()
        .args(["--no-watch", "--config", &path_str(&config)])
        .start();
    s.initialize(LATEST_VERSION);
    s.wait_ready();

    let result = s.call_tool("rs_request", json!({ "url": api.url("/hello") }));
    let answer = structured(&result);
    assert_eq!(
        (answer["status"].as_u64(), answer["body"].as_str()),
        (Some(200), Some("hi over TLS"))
    );
    let text = ok_text(&s.call_tool("fetch_fetch", json!({ "url": api.url("/page") })));
    assert!(
        text.contains("# Secure") && text.contains("**TLS**"),
        "{text}"
    );
    let text = ok_text(&s.call_tool("svc_fetch", json!({ "path": "/hello" })));
    assert_eq!(text, "200 hi over TLS");

    let started = Instant::now();
    let result = s.call_tool("untrusting_request", json!({ "url": api.url("/hello") }));
    let text = error_text(&result, "its certificate is not trusted");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(text.contains(&api.grant()), "names the host: {text}");
    assert!(
        text.contains("not trust") && text.contains("ca_file"),
        "{text}"
    );
    assert!(
        !api.handshake_failures().is_empty(),
        "the handshake was refused"
    );
    let requests = api.seen().len();
    assert_eq!(
        requests,
        3,
        "the untrusting plugin sent nothing: {:?}",
        api.seen()
    );
    assert!(!s.stderr().contains("panicked"), "{}", s.stderr());
    drop(s);

    // `[server] ca_file` is every plugin's.
    let server_ca = |ca: &Path| {
        config_file(
            dir.path(),
            &format!(
                "[server]\nca_file = {}\n\n{}",
                toml_str(&path_str(ca)),
                plugin_section("untrusting", "http-client", &api, None)
            ),
        )
    };
    let config = server_ca(&ca);
    let mut s = Server::builder()
        .args(["--no-watch", "--config", &path_str(&config)])
        .start();
    s.initialize(LATEST_VERSION);
    let result = s.call_tool("untrusting_request", json!({ "url": api.url("/hello") }));
    assert_eq!(structured(&result)["body"], "hi over TLS");

    // A file that holds no certificate is refused before serving, naming the field.
    let bogus = dir.path().join("bogus.pem");
    std::fs::write(&bogus, "not a certificate\n").unwrap();
    let config = server_ca(&bogus);
    let out = assert_serve_refused(
        &["--no-watch", "--config", &path_str(&config)],
        "[server] ca_file",
    );
    assert!(out.stderr.contains("bogus.pem"), "{out}");
}

#[test]
fn redirects_are_followed_checked_at_every_hop_and_drop_credentials_across_hosts() {
    let other = FakeApi::start(|seen| match seen.route() {
        "/end" => Reply::text("arrived"),
        _ => Reply::not_found(),
    });
    let ungranted = FakeApi::start(|_| Reply::text("must not be reached"));
    let (end, stray) = (other.url("/end"), ungranted.url("/x"));
    let api = FakeApi::start(move |seen| match seen.route() {
        "/start" => Reply::redirect(302, &end),
        "/elsewhere" => Reply::redirect(307, &stray),
        "/form" => Reply::redirect(303, "/done"),
        "/done" => Reply::text(&format!("{} {}", seen.method, seen.body.len())),
        "/loop" => Reply::redirect(302, "/loop"),
        _ => Reply::not_found(),
    });
    let dir = tempdir();
    let section = with_token(&network(&[&api, &other]));
    let mut s = serve(dir.path(), "http-client", &section);

    let result = s.call_tool(
        "net_request",
        json!({ "url": api.url("/start"), "bearer_secret": "API_TOKEN" }),
    );
    let answer = structured(&result);
    assert_eq!(answer["body"], "arrived");
    assert_eq!(answer["url"], other.url("/end"));
    assert!(api.last().header("authorization").is_some());
    assert_eq!(
        other.last().header("authorization"),
        None,
        "the token followed a redirect to another host"
    );

    // A hop to a host without a grant is refused by the host, naming that host's grant.
    let result = s.call_tool("net_request", json!({ "url": api.url("/elsewhere") }));
    let text = error_text(&result, "[NotGranted]");
    assert!(
        text.contains(&format!("network = [\"{}\"]", ungranted.grant())),
        "{text}"
    );
    assert!(
        ungranted.seen().is_empty(),
        "the ungranted host was reached"
    );

    // 303 turns a POST into a GET without its body.
    let result = s.call_tool(
        "net_request",
        json!({ "url": api.url("/form"), "method": "POST", "body": "field=1" }),
    );
    assert_eq!(structured(&result)["body"], "GET 0");

    let result = s.call_tool("net_request", json!({ "url": api.url("/loop") }));
    error_text(&result, "more than 5 redirects");
    let loops = api.seen().iter().filter(|r| r.route() == "/loop").count();
    assert_eq!(loops, 6, "one request and 5 redirects");

    // Told not to follow, the redirect itself is the answer.
    let result = s.call_tool(
        "net_request",
        json!({ "url": api.url("/start"), "max_redirects": 0 }),
    );
    assert_eq!(structured(&result)["status"], 302);
}

#[test]
fn timeouts_and_body_limits_hold_and_a_slow_api_stalls_no_other_call() {
    let big = "x".repeat(100_000);
    let api = FakeApi::start(move |seen| match seen.route() {
        "/slow" => Reply::text("late").after(Duration::from_secs(4)),
        "/big" => Reply::text(&big),
        _ => Reply::not_found(),
    });
    let dir = tempdir();
    let mut s = serve(dir.path(), "http-client", &network(&[&api]));

    let started = Instant::now();
    let result = s.call_tool(
        "net_request",
        json!({ "url": api.url("/slow"), "timeout_ms": 300 }),
    );
    error_text(&result, "[Timeout]");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timeout took {:?}",
        started.elapsed()
    );

    // While one call waits on the slow API, another is answered at once.
    let slow = s.send_request(
        "tools/call",
        json!({ "name": "net_request", "arguments": { "url": api.url("/slow") } }),
    );
    let started = Instant::now();
    let env = s.call_tool("net_environment", json!({}));
    assert!(!is_tool_error(&env), "{env}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "a call waited {:?} behind a slow request",
        started.elapsed()
    );
    let late = s.wait_response(&slow, default_timeout());
    assert_eq!(
        late["result"]["structuredContent"]["body"], "late",
        "{late}"
    );

    let result = s.call_tool(
        "net_request",
        json!({ "url": api.url("/big"), "max_body": 1000 }),
    );
    error_text(&result, "[TooLarge]");
    let result = s.call_tool(
        "net_request",
        json!({ "url": api.url("/big"), "stream": true }),
    );
    let answer = structured(&result);
    assert_eq!(answer["body"].as_str().unwrap().len(), 100_000);
    assert!(answer["pieces"].as_u64().unwrap() > 1, "{answer}");
}

#[test]
fn a_host_without_a_grant_is_refused_with_the_entry_to_add() {
    let api = FakeApi::start(|_| Reply::text("must not be reached"));
    let dir = tempdir();
    let mut s = serve(dir.path(), "http-client", "");
    let result = s.call_tool("net_request", json!({ "url": api.url("/v1") }));
    let text = error_text(&result, "host not granted: add `network = [");
    assert!(text.contains(&format!("\"{}\"", api.grant())), "{text}");
    assert!(api.seen().is_empty());
}

#[test]
fn secrets_reach_the_plugin_and_never_the_logs_errors_or_results() {
    let dir = tempdir();
    let file = dir.path().join("token.txt");
    write_file(&file, "file-secret-7788\n");
    set_mode(&file, 0o600);
    let section = format!(
        "[plugins.net.secrets]\nAPI_TOKEN = {{ env = \"{TOKEN_VAR}\" }}\n\
         FILE_TOKEN = {{ file = \"token.txt\", as_env = true }}\n\n\
         [audit]\npath = \"audit.jsonl\"\narguments = \"full\"\n"
    );
    let mut s = serve(dir.path(), "http-client", &section);
    s.result("logging/setLevel", json!({ "level": "debug" }));

    let text = ok_text(&s.call_tool("net_reveal", json!({ "name": "API_TOKEN" })));
    assert_eq!(text, "the secret is [secret API_TOKEN]");
    let text = ok_text(&s.call_tool("net_reveal", json!({ "name": "FILE_TOKEN" })));
    assert_eq!(text, "the secret is [secret FILE_TOKEN]");
    let result = s.call_tool("net_fail_with", json!({ "name": "API_TOKEN" }));
    error_text(&result, "failed while holding [secret API_TOKEN]");

    // Given as a variable only where asked, and hidden there too.
    let env = s.call_tool("net_environment", json!({}));
    let vars = &env["structuredContent"];
    assert_eq!(vars["FILE_TOKEN"], "[secret FILE_TOKEN]", "{env}");
    assert!(vars.get("API_TOKEN").is_none(), "{env}");

    let result = s.call_tool("net_reveal", json!({ "name": "MISSING" }));
    error_text(
        &result,
        "the secret MISSING is not given to this plugin: add `MISSING = { env",
    );

    let notes = s.notifications.clone();
    assert!(
        notes
            .iter()
            .any(|n| n.to_string().contains("revealing [secret API_TOKEN]")),
        "{notes:?}"
    );
    let stderr = s.stderr();
    assert!(
        stderr.contains("stderr has [secret API_TOKEN] too"),
        "{stderr}"
    );
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    assert!(audit.contains("\"tool\":\"net_fail_with\""), "{audit}");
    for leak in [TOKEN, "file-secret-7788"] {
        for (what, text) in [
            ("notifications", format!("{notes:?}")),
            ("the server's log", stderr.clone()),
            ("the audit log", audit.clone()),
        ] {
            assert!(!text.contains(leak), "a secret is in {what}: {text}");
        }
    }

    let out = run_palisade_with(
        &["inspect", "net", "--config", "palisade.toml"],
        dir.path(),
        &[(TOKEN_VAR, TOKEN)],
        "",
        default_timeout(),
    );
    assert!(
        out.stdout.contains("API_TOKEN (secret)") && out.stdout.contains("FILE_TOKEN (secret)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains(TOKEN) && !out.stdout.contains("file-secret"));
}

#[test]
fn secret_sources_are_checked_before_serving() {
    let dir = tempdir();
    let open = dir.path().join("open.txt");
    write_file(&open, "readable-by-all");
    set_mode(&open, 0o644);
    let plugin = toml_str(&plugin_arg("http-client"));
    for (secrets, needle) in [
        ("T = { file = \"open.txt\" }", "chmod 600"),
        // Optional covers a secret that is not there, not one that is there but exposed.
        ("T = { file = \"open.txt\", optional = true }", "chmod 600"),
        ("T = { file = \"absent.txt\" }", "cannot read"),
        (
            "T = { env = \"PALISADE_TEST_SURELY_UNSET\" }",
            "PALISADE_TEST_SURELY_UNSET is not set",
        ),
        (
            "T = { env = \"HOME\", file = \"open.txt\" }",
            "give exactly one of env",
        ),
        (
            "T = { env = \"HOME\", keyring = \"a/b\" }",
            "give exactly one of env",
        ),
        // A mistake in the entry is not a missing entry: optional does not cover it.
        (
            "T = { keyring = \"no-user\", optional = true }",
            "is not \"SERVICE/USER\"",
        ),
    ] {
        let config = config_file(
            dir.path(),
            &format!("[plugins.net]\npath = {plugin}\n\n[plugins.net.secrets]\n{secrets}\n"),
        );
        let out = assert_serve_refused(&["--no-watch", "--config", &path_str(&config)], needle);
        assert!(
            out.stderr.contains("[plugins.net] secrets"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("readable-by-all"), "{}", out.stderr);
    }
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.net]\npath = {plugin}\n\n[plugins.net.secrets]\nT = {{ keychain = \"x\" }}\n"
        ),
    );
    assert_serve_refused(
        &["--no-watch", "--config", &path_str(&config)],
        "unknown field `keychain`, expected one of `env`, `file`, `keyring`, `as_env`, `optional`",
    );
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.net]\npath = {plugin}\n\n[plugins.net.config]\nT = \"x\"\n\n\
             [plugins.net.secrets]\nT = {{ env = \"HOME\" }}\n"
        ),
    );
    assert_serve_refused(
        &["--no-watch", "--config", &path_str(&config)],
        "also given under config or env",
    );
}

/// `palisade serve` of `config` with `DBUS_SESSION_BUS_ADDRESS` at `bus`, stdin closed at once.
fn serve_on_bus(dir: &Path, config: &Path, bus: &str) -> RunOutput {
    let cache = path_str(&shared_cache_dir());
    run_palisade_with(
        &[
            "serve",
            "--no-watch",
            "--config",
            &path_str(config),
            "--cache-dir",
            &cache,
        ],
        dir,
        &[("DBUS_SESSION_BUS_ADDRESS", bus)],
        "",
        secs(120),
    )
}

/// Proves: `{ keyring = "SERVICE/USER" }` reads the entry `secret-tool store` left in the user's
/// keyring (GNOME Keyring on a private bus), without its final line break; it reaches the plugin
/// and an API, and is hidden like any secret; an optional entry that is missing is left out with
/// a log line, a required one stops the start naming the command that stores it.
#[test]
fn keyring_secrets_come_from_the_users_keyring() {
    let keyring = Keyring::start();
    keyring.store("palisade-test", "api", &format!("{TOKEN}\n"));
    let api = FakeApi::start(|_| Reply::text("ok"));
    let dir = tempdir();
    let plugin = toml_str(&plugin_arg("http-client"));
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.net]\npath = {plugin}\n{}\n\n[plugins.net.secrets]\n\
             API_TOKEN = {{ keyring = \"palisade-test/api\" }}\n\
             GONE = {{ keyring = \"palisade-test/absent\", optional = true }}\n",
            network(&[&api]),
        ),
    );
    let mut s = Server::builder()
        .args(["--no-watch", "--config", &path_str(&config)])
        .env("DBUS_SESSION_BUS_ADDRESS", &keyring.address)
        .start();
    s.initialize(LATEST_VERSION);
    let result = s.call_tool(
        "net_request",
        json!({ "url": api.url("/me"), "bearer_secret": "API_TOKEN" }),
    );
    structured(&result);
    assert_eq!(
        api.last().header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
    let text = ok_text(&s.call_tool("net_reveal", json!({ "name": "API_TOKEN" })));
    assert_eq!(text, "the secret is [secret API_TOKEN]");
    let result = s.call_tool("net_reveal", json!({ "name": "GONE" }));
    error_text(&result, "the secret GONE is not given to this plugin");
    assert!(
        s.wait_for_stderr(
            "secret GONE: the keyring has no entry palisade-test/absent",
            default_timeout()
        ),
        "{}",
        s.stderr()
    );
    assert!(!s.stderr().contains(TOKEN), "{}", s.stderr());

    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.net]\npath = {plugin}\n\n[plugins.net.secrets]\n\
             T = {{ keyring = \"palisade-test/absent\" }}\n"
        ),
    );
    let out = serve_on_bus(dir.path(), &config, &keyring.address);
    assert!(!out.success(), "{out}");
    assert!(
        out.stderr
            .contains("the keyring has no entry palisade-test/absent")
            && out.stderr.contains(
                "secret-tool store --label=palisade service \"palisade-test\" username \"absent\""
            ),
        "{out}"
    );
}

/// Proves: without a keyring (a session bus where nothing keeps secrets), a required keyring
/// secret stops the start saying so and an optional one is left out; a bus that never answers
/// is given up after 10 s rather than holding the start for good.
#[test]
fn a_missing_or_silent_keyring_is_reported_not_waited_for() {
    let bus = Keyring::bus_only();
    let dir = tempdir();
    let plugin = toml_str(&plugin_arg("http-client"));
    let secret = |optional: bool| {
        config_file(
            dir.path(),
            &format!(
                "[plugins.net]\npath = {plugin}\n\n[plugins.net.secrets]\n\
                 T = {{ keyring = \"palisade-test/api\", optional = {optional} }}\n"
            ),
        )
    };
    let out = serve_on_bus(dir.path(), &secret(false), &bus.address);
    assert!(!out.success(), "{out}");
    assert!(
        out.stderr.contains("[plugins.net] secrets") && out.stderr.contains("no keyring to ask"),
        "{out}"
    );
    let out = serve_on_bus(dir.path(), &secret(true), &bus.address);
    assert!(out.success(), "{out}");
    assert!(
        out.stderr.contains("secret T: no keyring to ask") && out.stderr.contains("optional"),
        "{out}"
    );

    // A peer that takes the connection and never says a word.
    let socket = dir.path().join("silent-bus");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let held = std::thread::spawn(move || {
        let (connection, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(60));
        drop(connection);
    });
    let started = Instant::now();
    let out = serve_on_bus(
        dir.path(),
        &secret(false),
        &format!("unix:path={}", path_str(&socket)),
    );
    assert!(!out.success(), "{out}");
    assert!(
        out.stderr
            .contains("the keyring did not answer within 10 s"),
        "{out}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(45),
        "gave up after {:?}",
        started.elapsed()
    );
    drop(held);
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn python_requests_style_and_urllib_go_through_the_grant() {
    let api = FakeApi::start(|seen| match seen.route() {
        "/hello" => Reply::text("hi from the api"),
        "/items" => Reply::json(201, json!({ "got": seen.body_json() })),
        "/fail" => Reply::json(422, json!({ "message": "title is missing" })),
        "/slow" => Reply::text("late").after(Duration::from_secs(4)),
        _ => Reply::not_found(),
    });
    let ungranted = FakeApi::start(|_| Reply::text("must not be reached"));
    let dir = tempdir();
    let (tls_api, ca) = tls_api(dir.path());
    let section = with_token(&format!(
        "{}\nca_file = {}",
        network(&[&api, &tls_api]),
        toml_str(&path_str(&ca))
    ));
    let mut s = serve(dir.path(), "http-py", &section);
    let result = s.call_tool("net_get", json!({ "url": tls_api.url("/hello") }));
    assert_eq!(
        result["structuredContent"]["text"], "hi over TLS",
        "{result}"
    );
    let text = ok_text(&s.call_tool("net_urlopen", json!({ "url": tls_api.url("/hello") })));
    assert_eq!(text, "200 text/plain; charset=utf-8 hi over TLS");

    let result = s.call_tool("net_get", json!({ "url": api.url("/hello") }));
    assert_eq!(
        result["structuredContent"]["text"], "hi from the api",
        "{result}"
    );
    let result = s.call_tool(
        "net_post_json",
        json!({ "url": api.url("/items"), "value": { "title": "t" } }),
    );
    assert_eq!(
        result["structuredContent"]["json"],
        json!({ "got": { "title": "t" } }),
        "{result}"
    );
    assert_eq!(api.last().header("x-trace"), Some("py"));
    let result = s.call_tool(
        "net_post_json",
        json!({ "url": api.url("/fail"), "value": {} }),
    );
    error_text(
        &result,
        "the server answered 422: {\"message\":\"title is missing\"}",
    );

    let text = ok_text(&s.call_tool("net_urlopen", json!({ "url": api.url("/hello") })));
    assert_eq!(text, "200 text/plain; charset=utf-8 hi from the api");

    for tool in ["net_get", "net_urlopen"] {
        let result = s.call_tool(tool, json!({ "url": ungranted.url("/x") }));
        let text = error_text(&result, "host not granted");
        assert!(text.contains(&ungranted.grant()), "{tool}: {text}");
    }
    assert!(ungranted.seen().is_empty());
    // A key in the query of a refused request shows neither in the answer nor in the log.
    let result = s.call_tool(
        "net_get",
        json!({ "url": ungranted.url(&format!("/x?appid={TOKEN}")) }),
    );
    let text = error_text(&result, "host not granted");
    assert!(!text.contains(TOKEN), "{text}");
    assert!(!s.stderr().contains(TOKEN), "{}", s.stderr());
    assert!(ungranted.seen().is_empty());

    let started = Instant::now();
    let result = s.call_tool(
        "net_get",
        json!({ "url": api.url("/slow"), "timeout": 0.3 }),
    );
    error_text(&result, "no complete answer within 0.3 s");
    assert!(started.elapsed() < Duration::from_secs(3));
    let result = s.call_tool(
        "net_get",
        json!({ "url": api.url("/hello"), "max_body": 4 }),
    );
    error_text(&result, "the body is larger than 4 bytes");

    let text = ok_text(&s.call_tool("net_reveal", json!({ "name": "API_TOKEN" })));
    assert_eq!(text, "the secret is [secret API_TOKEN]");
}

#[test]
fn javascript_fetch_reaches_granted_hosts_with_secrets_and_abort_timeouts() {
    let api = FakeApi::start(|seen| match seen.route() {
        "/hello" => Reply::json(200, json!({ "auth": seen.header("authorization") })),
        "/slow" => Reply::text("late").after(Duration::from_secs(4)),
        _ => Reply::not_found(),
    });
    let ungranted = FakeApi::start(|_| Reply::text("must not be reached"));
    let dir = tempdir();
    let (tls_api, ca) = tls_api(dir.path());
    let section = with_token(&format!(
        "{}\nca_file = {}",
        network(&[&api, &tls_api]),
        toml_str(&path_str(&ca))
    ));
    let mut s = serve(dir.path(), "http-js", &section);
    let text = ok_text(&s.call_tool("net_get", json!({ "url": tls_api.url("/hello") })));
    assert_eq!(text, "200 text/plain; charset=utf-8 hi over TLS");

    let text = ok_text(&s.call_tool(
        "net_get",
        json!({ "url": api.url("/hello"), "bearer_secret": "API_TOKEN" }),
    ));
    // The token reached the API; in the answer the host hides it again.
    assert_eq!(
        text,
        "200 application/json {\"auth\":\"Bearer [secret API_TOKEN]\"}"
    );
    assert_eq!(
        api.last().header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );

    let result = s.call_tool("net_get", json!({ "url": ungranted.url("/x") }));
    let text = error_text(&result, "host not granted");
    assert!(text.contains(&ungranted.grant()), "{text}");
    assert!(ungranted.seen().is_empty());

    let started = Instant::now();
    let result = s.call_tool(
        "net_get",
        json!({ "url": api.url("/slow"), "timeout_ms": 300 }),
    );
    error_text(&result, "TimeoutError");
    assert!(started.elapsed() < Duration::from_secs(3));

    let text = ok_text(&s.call_tool("net_reveal", json!({ "name": "API_TOKEN" })));
    assert_eq!(text, "the secret is [secret API_TOKEN]");
    let result = s.call_tool("net_reveal", json!({ "name": "NOPE" }));
    error_text(&result, "the secret NOPE is not given to this plugin");
}

#[test]
fn fetch_returns_pages_as_markdown_in_windows() {
    let api = FakeApi::start(|seen| match seen.route() {
        "/page" => Reply::html(
            "<!doctype html><html><head><title>T</title><style>p{}</style></head><body>\
             <h1>Palisade</h1><p>Runs <b>untrusted</b> tools. <a href=\"/more\">More</a></p>\
             <script>alert('no')</script></body></html>",
        ),
        "/long" => Reply::text(&"0123456789".repeat(30)),
        "/image" => Reply::new(200, "image/png", vec![0x89, b'P', b'N', b'G']),
        "/moved" => Reply::redirect(301, "/page"),
        _ => Reply::not_found(),
    });
    let dir = tempdir();
    let mut s = serve(dir.path(), "fetch", &network(&[&api]));

    let text = ok_text(&s.call_tool("net_fetch", json!({ "url": api.url("/moved") })));
    assert!(
        text.starts_with(&format!("Contents of {}:", api.url("/page"))),
        "{text}"
    );
    assert!(text.contains("# Palisade"), "{text}");
    assert!(text.contains("**untrusted**"), "{text}");
    assert!(text.contains("[More](/more)"), "{text}");
    assert!(!text.contains("alert") && !text.contains("p{}"), "{text}");

    let raw = ok_text(&s.call_tool("net_fetch", json!({ "url": api.url("/page"), "raw": true })));
    assert!(raw.contains("<h1>Palisade</h1>"), "{raw}");

    let first = s.call_tool(
        "net_fetch",
        json!({ "url": api.url("/long"), "max_length": 120 }),
    );
    let text = ok_text(&first);
    assert!(text.contains("Call fetch with start_index = 120"), "{text}");
    assert_eq!(first["structuredContent"]["next_index"], 120);
    assert_eq!(first["structuredContent"]["total_length"], 300);
    let last = s.call_tool(
        "net_fetch",
        json!({ "url": api.url("/long"), "start_index": 240, "max_length": 120 }),
    );
    assert!(!ok_text(&last).contains("start_index ="), "{last}");
    assert_eq!(last["structuredContent"]["next_index"], Value::Null);
    let past = s.call_tool(
        "net_fetch",
        json!({ "url": api.url("/long"), "start_index": 300 }),
    );
    error_text(&past, "start_index 300 is past the end");

    error_text(
        &s.call_tool("net_fetch", json!({ "url": api.url("/image") })),
        "is image/png, not text",
    );
    error_text(
        &s.call_tool("net_fetch", json!({ "url": api.url("/absent") })),
        "the server answered 404",
    );
    error_text(
        &s.call_tool("net_fetch", json!({ "url": "https://example.com/" })),
        "host not granted: add `network = [\"example.com\"]`",
    );
}

#[test]
fn github_lists_searches_and_creates_issues_with_its_token() {
    let api = FakeApi::start(|seen| match (seen.method.as_str(), seen.route()) {
        ("GET", "/repos/octo/demo/issues") => Reply::json(
            200,
            json!([
                { "number": 7, "title": "Crash on start", "state": "open",
                  "user": { "login": "ann" }, "labels": [{ "name": "bug" }], "comments": 2,
                  "html_url": "https://github.com/octo/demo/issues/7" },
                { "number": 8, "title": "A pull request", "state": "open", "pull_request": {} },
            ]),
        ),
        ("GET", "/search/issues") => Reply::json(
            200,
            json!({ "total_count": 1, "items": [
                { "number": 9, "title": "Slow search", "state": "closed",
                  "user": { "login": "bo" }, "labels": [], "comments": 0,
                  "html_url": "https://github.com/octo/demo/issues/9" }
            ] }),
        ),
        ("POST", "/repos/octo/demo/issues") => {
            let body = seen.body_json();
            Reply::json(
                201,
                json!({ "number": 10, "title": body["title"], "state": "open",
                        "user": { "login": "me" }, "labels": [], "comments": 0,
                        "html_url": "https://github.com/octo/demo/issues/10" }),
            )
        }
        _ => Reply::not_found(),
    });
    let dir = tempdir();
    let section = format!(
        "{}\n[plugins.net.config]\napi_url = {:?}\n\n[plugins.net.secrets]\n\
         GITHUB_TOKEN = {{ env = \"{TOKEN_VAR}\" }}\n",
        network(&[&api]),
        api.url("")
    );
    let mut s = serve(dir.path(), "github", &section);

    let listed = s.call_tool("net_list_issues", json!({ "repo": "octo/demo" }));
    let issues = &listed["structuredContent"]["issues"];
    assert_eq!(issues.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(issues[0]["title"], "Crash on start");
    assert_eq!(issues[0]["labels"], json!(["bug"]));
    let seen = api.last();
    assert_eq!(seen.query("state").as_deref(), Some("open"));
    assert_eq!(
        seen.header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
    assert_eq!(seen.header("accept"), Some("application/vnd.github+json"));
    assert!(seen.header("user-agent").is_some());

    let found = s.call_tool(
        "net_search_issues",
        json!({ "repo": "octo/demo", "query": "slow", "limit": 5 }),
    );
    assert_eq!(found["structuredContent"]["total"], 1, "{found}");
    let seen = api.last();
    assert_eq!(
        seen.query("q").as_deref(),
        Some("slow repo:octo/demo is:issue")
    );
    assert_eq!(seen.query("per_page").as_deref(), Some("5"));

    let created = s.call_tool(
        "net_create_issue",
        json!({ "repo": "octo/demo", "title": "New", "body": "Text" }),
    );
    assert_eq!(created["structuredContent"]["number"], 10, "{created}");
    assert_eq!(
        api.last().body_json(),
        json!({ "title": "New", "body": "Text" })
    );

    error_text(
        &s.call_tool("net_list_issues", json!({ "repo": "octo/absent" })),
        "no repository octo/absent",
    );
    error_text(
        &s.call_tool("net_list_issues", json!({ "repo": "not a repo" })),
        "write it OWNER/NAME",
    );
}

#[test]
fn github_creates_nothing_without_a_token_and_says_how_to_grant_it() {
    let api = FakeApi::start(|_| Reply::json(200, json!([])));
    let dir = tempdir();
    let section = format!(
        "{}\n[plugins.net.config]\napi_url = {:?}\n",
        network(&[&api]),
        api.url("")
    );
    let mut s = serve(dir.path(), "github", &section);
    // Reading needs no token.
    let listed = s.call_tool("net_list_issues", json!({ "repo": "octo/demo" }));
    assert!(!is_tool_error(&listed), "{listed}");
    assert_eq!(api.last().header("authorization"), None);
    let result = s.call_tool(
        "net_create_issue",
        json!({ "repo": "octo/demo", "title": "New" }),
    );
    error_text(&result, "GITHUB_TOKEN is not given to this plugin");
    assert_eq!(api.seen().len(), 1, "a request was sent without the token");
}

#[test]
fn weather_gets_the_current_weather_with_its_key() {
    let api = FakeApi::start(|seen| match seen.query("q").as_deref() {
        Some("Paris") => Reply::json(
            200,
            json!({ "name": "Paris", "sys": { "country": "FR" },
                    "weather": [{ "description": "light rain" }],
                    "main": { "temp": 12.5, "feels_like": 11.0, "humidity": 81 },
                    "wind": { "speed": 3.6 } }),
        ),
        _ => Reply::json(404, json!({ "cod": "404", "message": "city not found" })),
    });
    let dir = tempdir();
    let section = format!(
        "{}\n[plugins.net.config]\napi_url = {:?}\n\n[plugins.net.secrets]\n\
         OPENWEATHER_API_KEY = {{ env = \"{TOKEN_VAR}\" }}\n",
        network(&[&api]),
        api.url("")
    );
    let mut s = serve(dir.path(), "weather", &section);
    let result = s.call_tool("net_current_weather", json!({ "city": "Paris" }));
    assert!(!is_tool_error(&result), "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({ "city": "Paris", "country": "FR", "conditions": "light rain",
                "temperature": 12.5, "feels_like": 11, "humidity": 81, "wind_speed": 3.6 })
    );
    let seen = api.last();
    assert_eq!(seen.route(), "/data/2.5/weather");
    assert_eq!(seen.query("appid").as_deref(), Some(TOKEN));
    assert_eq!(seen.query("units").as_deref(), Some("metric"));
    let result = s.call_tool("net_current_weather", json!({ "city": "Atlantis" }));
    error_text(&result, "no city called \"Atlantis\"");
}

/// Proves: the Go SDK's client (net/http over wasi:http, `httpclient`) reaches granted hosts
/// over HTTP and HTTPS (with the operator's authority), sends JSON with its length and a bearer
/// secret (which the host hides again in the answer), is refused an ungranted host with the
/// entry to add, keeps its deadline and body limit, and follows redirects with every hop
/// checked and credentials kept to their origin; `http.Get` of a library goes the same way.
#[test]
fn go_net_http_reaches_granted_hosts_with_secrets_deadlines_and_limits() {
    let other = FakeApi::start(|seen| match seen.route() {
        "/end" => Reply::json(200, json!({ "auth": seen.header("authorization") })),
        _ => Reply::not_found(),
    });
    let ungranted = FakeApi::start(|_| Reply::text("must not be reached"));
    let (end, stray) = (other.url("/end"), ungranted.url("/x"));
    let api = FakeApi::start(move |seen| match seen.route() {
        "/hello" => Reply::json(200, json!({ "auth": seen.header("authorization") })),
        "/items" => Reply::json(201, json!({ "got": seen.body_json() })),
        "/slow" => Reply::text("late").after(Duration::from_secs(4)),
        "/start" => Reply::redirect(302, &end),
        "/elsewhere" => Reply::redirect(307, &stray),
        "/loop" => Reply::redirect(302, "/loop"),
        _ => Reply::not_found(),
    });
    let dir = tempdir();
    let (tls_api, ca) = tls_api(dir.path());
    let section = with_token(&format!(
        "{}\nca_file = {}",
        network(&[&api, &tls_api, &other]),
        toml_str(&path_str(&ca))
    ));
    let mut s = serve(dir.path(), "http-go", &section);
    let text = ok_text(&s.call_tool("net_get", json!({ "url": tls_api.url("/hello") })));
    assert_eq!(text, "200 text/plain; charset=utf-8 hi over TLS");
    let text = ok_text(&s.call_tool(
        "net_get",
        json!({ "url": tls_api.url("/hello"), "default": true }),
    ));
    assert_eq!(text, "200 text/plain; charset=utf-8 hi over TLS");

    let text = ok_text(&s.call_tool(
        "net_get",
        json!({ "url": api.url("/hello"), "bearer_secret": "API_TOKEN" }),
    ));
    assert_eq!(
        text,
        "200 application/json {\"auth\":\"Bearer [secret API_TOKEN]\"}"
    );
    assert_eq!(
        api.last().header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
    let text = ok_text(&s.call_tool(
        "net_post_json",
        json!({ "url": api.url("/items"), "value": { "title": "t" } }),
    ));
    assert_eq!(text, "201 application/json {\"got\":{\"title\":\"t\"}}");
    assert_eq!(api.last().header("content-length"), Some("13"));

    for default in [false, true] {
        let result = s.call_tool(
            "net_get",
            json!({ "url": ungranted.url("/x"), "default": default }),
        );
        let text = error_text(&result, "host not granted");
        assert!(text.contains(&ungranted.grant()), "{text}");
    }
    assert!(ungranted.seen().is_empty());

    let started = Instant::now();
    let result = s.call_tool(
        "net_get",
        json!({ "url": api.url("/slow"), "timeout_ms": 300 }),
    );
    error_text(&result, "deadline");
    assert!(started.elapsed() < Duration::from_secs(3));
    let result = s.call_tool(
        "net_get",
        json!({ "url": tls_api.url("/hello"), "max_body": 4 }),
    );
    error_text(&result, "the body is larger than 4 bytes");

    let result = s.call_tool("net_reveal", json!({ "name": "NOT_GIVEN" }));
    error_text(&result, "[plugins.PLUGIN.secrets]");

    // Redirects: every hop is checked by the host, and credentials stay with their origin
    // (net/http alone would keep them for the same host name on another port).
    let text = ok_text(&s.call_tool(
        "net_get",
        json!({ "url": api.url("/start"), "bearer_secret": "API_TOKEN" }),
    ));
    assert_eq!(text, "200 application/json {\"auth\":null}");
    assert!(api.last().header("authorization").is_some());
    let result = s.call_tool("net_get", json!({ "url": api.url("/elsewhere") }));
    let text = error_text(&result, "host not granted");
    assert!(text.contains(&ungranted.grant()), "{text}");
    assert!(
        ungranted.seen().is_empty(),
        "the ungranted host was reached"
    );
    let result = s.call_tool("net_get", json!({ "url": api.url("/loop") }));
    error_text(&result, "more than 5 redirects");
}
