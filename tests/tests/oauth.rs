//! Palisade as an OAuth 2.1 resource server (the MCP authorization specification), against a
//! real OpenID provider (`oidc-provider` from npm, tests/clients/oidc_provider.mjs) issuing
//! client-credentials JWT access tokens with resource indicators. Every check a token must
//! pass has a token here that fails it, with the exact challenge the client gets; the official
//! Python and TypeScript SDKs connect with their own OAuth support.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use palisade_tests::serde_json::{Value, json};
use palisade_tests::*;

/// The provider's clients: `reader` may ask for both tool scopes; `admin` only for
/// `tools:hello`, but its tokens carry `groups: ["admins"]`, which a rule maps to everything.
fn clients() -> Value {
    json!([
        {"client_id": "reader", "client_secret": "reader-secret",
         "scope": ["tools:hello", "tools:misbehave"]},
        {"client_id": "admin", "client_secret": "admin-secret",
         "scope": ["tools:hello", "tools:misbehave"], "extra_claims": {"groups": ["admins"]}},
    ])
}

/// A configuration trusting `issuer`, serving hello and misbehave, with an audit log; `extra`
/// goes at the end of `[auth.oauth]`'s neighbours (more sections).
fn config(dir: &Path, issuer: &str, oauth_extra: &str, extra: &str) -> PathBuf {
    let path = dir.join("palisade.toml");
    write_file(
        &path,
        format!(
            r#"[auth.scopes]
hello-only = ["hello"]
misbehave-only = ["misbehave"]
everything = ["*"]

[auth.oauth]
issuer = {issuer}
{oauth_extra}

[auth.oauth.scopes]
"tools:hello" = "hello-only"
"tools:misbehave" = "misbehave-only"

[[auth.oauth.rules]]
claim = "groups"
equals = "admins"
scope = "everything"

[audit]
path = "audit.log"

{plugins}
{extra}
"#,
            issuer = toml_str(issuer),
            plugins = plugin_sections(&["hello", "misbehave"]),
        ),
    );
    path
}

const KEYS_FETCHED: &str = "fetched the OAuth issuer's signing keys";

/// Palisade serving `config`, once it has the issuer's keys and its plugins.
fn start(config: &Path) -> HttpServer {
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(config)]);
    for wanted in [KEYS_FETCHED, "plugins ready"] {
        if !server.wait_for_stderr(wanted, startup_timeout()) {
            server.fail(format!("never logged {wanted:?}"));
        }
    }
    server
}

fn bearer(server: &HttpServer, token: &str) -> HttpClient {
    server.client_with_token(token)
}

fn tool_names(client: &mut HttpClient) -> Vec<String> {
    let tools = client.result("tools/list", json!({}));
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// `http://127.0.0.1:PORT`
fn origin(server: &HttpServer) -> String {
    server.url.trim_end_matches("/mcp").to_string()
}

fn metadata_url(server: &HttpServer) -> String {
    format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        origin(server)
    )
}

/// POSTs an `initialize` with `token` (none: no header); the status and `WWW-Authenticate`.
fn try_token(server: &HttpServer, token: Option<&str>) -> (u16, Option<String>) {
    let client = match token {
        Some(token) => bearer(server, token),
        None => server.client(),
    };
    let reply = client.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LATEST_VERSION, "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
    );
    (reply.status, reply.header("www-authenticate"))
}

fn invalid_token(server: &HttpServer, why: &str) -> String {
    format!(
        r#"Bearer error="invalid_token", error_description="{why}", resource_metadata="{}""#,
        metadata_url(server)
    )
}

/// The token's header and payload, decoded.
fn parts(token: &str) -> (Value, Value) {
    let mut it = token.split('.');
    let mut part = || -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(it.next().unwrap()).unwrap()).unwrap()
    };
    (part(), part())
}

fn encode(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

#[test]
fn scopes_and_group_claims_decide_what_a_token_sees_and_the_audit_log_names_who() {
    let dir = tempdir();
    let key = oidc_key(dir.path(), "k1", "RS256");
    let idp = OidcProvider::start(dir.path(), 0, &[&key], &clients(), &[]);
    let server = start(&config(dir.path(), &idp.issuer, "", ""));

    // The token's scope `tools:hello` maps to the Palisade scope `hello-only`.
    let token = idp.must_token("reader", "reader-secret", &server.url, "tools:hello");
    let (header, claims) = parts(&token);
    assert_eq!(header["typ"], "at+jwt", "{header}");
    assert_eq!(claims["aud"], server.url.as_str(), "{claims}");
    let mut reader = bearer(&server, &token);
    reader.initialize(LATEST_VERSION);
    let names = tool_names(&mut reader);
    assert!(
        !names.is_empty() && names.iter().all(|n| n.starts_with("hello_")),
        "{names:?}"
    );
    let greeting = reader.call_tool("hello_greet", json!({"name": "reader"}));
    assert!(ok_text(&greeting).contains("reader"), "{greeting}");

    // A tool its scopes do not cover: 403, naming the scope that would (step-up).
    let reply = reader.post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "misbehave_ok", "arguments": {}}}));
    assert_eq!(reply.status, 403);
    assert_eq!(
        reply.header("www-authenticate").unwrap(),
        format!(
            r#"Bearer error="insufficient_scope", scope="tools:misbehave", resource_metadata="{}", error_description="`misbehave_ok` needs one of these scopes: tools:misbehave""#,
            metadata_url(&server)
        )
    );
    assert_eq!(reply.json()["id"], 9, "the refusal answers the request");

    // Step-up within the session: a new token with the scope asked for serves the call; a
    // later token with fewer scopes narrows the session again.
    let wider = idp.must_token(
        "reader",
        "reader-secret",
        &server.url,
        "tools:hello tools:misbehave",
    );
    let session = reader.session_id.clone();
    let mut stepped = bearer(&server, &wider);
    stepped.session_id = session.clone();
    let ok = stepped.call_tool("misbehave_ok", json!({}));
    assert!(!is_tool_error(&ok), "{ok}");
    assert!(
        tool_names(&mut stepped)
            .iter()
            .any(|n| n.starts_with("misbehave_"))
    );
    let narrower = idp.must_token("reader", "reader-secret", &server.url, "tools:hello");
    let mut narrowed = bearer(&server, &narrower);
    narrowed.session_id = session;
    let reply = narrowed.post(&json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "misbehave_ok", "arguments": {}}}));
    assert_eq!(reply.status, 403);
    assert!(
        tool_names(&mut narrowed)
            .iter()
            .all(|n| n.starts_with("hello_"))
    );

    // A token with no scope Palisade maps: 403 on any request, naming every scope it maps.
    let bare = idp.must_token("reader", "reader-secret", &server.url, "");
    assert_eq!(
        try_token(&server, Some(&bare)),
        (
            403,
            Some(format!(
                r#"Bearer error="insufficient_scope", scope="tools:hello tools:misbehave", resource_metadata="{}", error_description="the token's scopes cover none of the tools, prompts or resources served here""#,
                metadata_url(&server)
            ))
        )
    );

    // The group claim grants everything, whatever the token's scopes.
    let admin_token = idp.must_token("admin", "admin-secret", &server.url, "tools:hello");
    let mut admin = bearer(&server, &admin_token);
    admin.initialize(LATEST_VERSION);
    let names = tool_names(&mut admin);
    assert!(
        names.iter().any(|n| n.starts_with("misbehave_")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("hello_")), "{names:?}");
    let ok = admin.call_tool("misbehave_ok", json!({}));
    assert!(!is_tool_error(&ok), "{ok}");

    // The audit log names the subject and the client the token was issued to.
    let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let greet = lines
        .iter()
        .find(|l| l["tool"] == "hello_greet")
        .unwrap_or_else(|| panic!("{audit}"));
    assert_eq!(greet["client"], "oauth:reader", "{greet}");
    assert_eq!(greet["subject"], "reader", "{greet}");
    assert_eq!(greet["client_id"], "reader", "{greet}");
    assert!(
        lines
            .iter()
            .any(|l| l["tool"] == "misbehave_ok" && l["subject"] == "admin"),
        "{audit}"
    );
    // Tokens go to no plugin and no log.
    assert!(!audit.contains(&token) && !server.stderr().contains(&token));
}

#[test]
fn every_check_has_a_token_that_fails_it_with_the_exact_challenge() {
    let dir = tempdir();
    let key = oidc_key(dir.path(), "k1", "ES256");
    // The trusted provider's tokens live 2 s; another provider signs with the same key but is
    // another issuer.
    let idp = OidcProvider::start(
        dir.path(),
        0,
        &[&key],
        &clients(),
        &["--alg", "ES256", "--ttl", "2"],
    );
    let other = OidcProvider::start(dir.path(), 0, &[&key], &clients(), &["--alg", "ES256"]);
    let static_token = "a-static-token-for-the-ops-team";
    let server = HttpServer::start_with(
        Server::builder()
            .args([
                "--no-watch",
                "--config",
                &path_str(&config(
                    dir.path(),
                    &idp.issuer,
                    "clock_skew_s = 0",
                    "[[auth.tokens]]\nname = \"ops\"\nenv = \"OPS_TOKEN\"\nscope = \"hello-only\"\n",
                )),
            ])
            .env("OPS_TOKEN", static_token),
    );
    assert!(server.wait_for_stderr(KEYS_FETCHED, startup_timeout()));
    assert!(server.wait_for_stderr("plugins ready", startup_timeout()));

    // The metadata, at the path-inserted and the root well-known address, to anyone.
    let expected = json!({
        "resource": server.url,
        "authorization_servers": [idp.issuer],
        "scopes_supported": ["tools:hello", "tools:misbehave"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Palisade MCP server",
    });
    for url in [
        metadata_url(&server),
        format!("{}/.well-known/oauth-protected-resource", origin(&server)),
    ] {
        let (status, body) = http_get(&url, &[]);
        assert_eq!(status, 200, "{url}: {body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            expected,
            "{url}"
        );
    }

    // No token: where to learn how to get one.
    assert_eq!(
        try_token(&server, None),
        (
            401,
            Some(format!(
                r#"Bearer resource_metadata="{}""#,
                metadata_url(&server)
            ))
        )
    );
    let refused = |token: &str, why: &str| {
        assert_eq!(
            try_token(&server, Some(token)),
            (401, Some(invalid_token(&server, why))),
            "{why}"
        );
    };
    refused("not-a-jwt", "the token is not a signed JWT");

    let good = idp.must_token("reader", "reader-secret", &server.url, "tools:hello");
    assert_eq!(try_token(&server, Some(&good)).0, 200);

    // Another resource's token (RFC 8707 audience).
    let elsewhere = idp.must_token(
        "reader",
        "reader-secret",
        "http://127.0.0.1:1/mcp",
        "tools:hello",
    );
    refused(&elsewhere, "the token was not issued for this server (aud)");
    // The same key, another issuer.
    let foreign = other.must_token("reader", "reader-secret", &server.url, "tools:hello");
    refused(&foreign, "the token is from another issuer (iss)");
    // Unsigned (`alg: none`), and a payload changed after signing.
    let (header, mut claims) = parts(&good);
    let none = json!({"alg": "none", "typ": header["typ"]});
    refused(
        &format!("{}.{}.", encode(&none), encode(&claims)),
        "the token is not a signed JWT",
    );
    claims["sub"] = json!("admin");
    claims["groups"] = json!(["admins"]);
    let signature = good.rsplit('.').next().unwrap();
    refused(
        &format!("{}.{}.{signature}", encode(&header), encode(&claims)),
        "the token's signature does not verify",
    );
    // Expired: its 2 s are over (no clock skew allowed here).
    std::thread::sleep(Duration::from_millis(3100));
    refused(&good, "the token has expired");

    // Static tokens keep working beside OAuth, with their own scope.
    let mut ops = bearer(&server, static_token);
    ops.initialize(LATEST_VERSION);
    let names = tool_names(&mut ops);
    assert!(
        !names.is_empty() && names.iter().all(|n| n.starts_with("hello_")),
        "{names:?}"
    );
}

#[test]
fn a_rotated_key_is_fetched_once_and_made_up_key_ids_cannot_flood_the_provider() {
    let dir = tempdir();
    let old = oidc_key(dir.path(), "old", "RS256");
    let new = oidc_key(dir.path(), "new", "RS256");
    let mut idp = OidcProvider::start(dir.path(), 0, &[&old], &clients(), &[]);
    let server = start(&config(dir.path(), &idp.issuer, "", ""));
    let before = idp.must_token("reader", "reader-secret", &server.url, "tools:hello");
    assert_eq!(try_token(&server, Some(&before)).0, 200);

    // The provider comes back at the same address signing with a new key.
    idp.stop();
    let port = idp.port;
    let idp = OidcProvider::start(dir.path(), port, &[&new, &old], &clients(), &[]);
    let after = idp.must_token("reader", "reader-secret", &server.url, "tools:hello");
    assert_eq!(parts(&after).0["kid"], "new");
    assert_eq!(
        try_token(&server, Some(&after)).0,
        200,
        "{}",
        server.stderr()
    );
    // Logged while that request was served: read it before counting.
    let deadline = Instant::now() + secs(5);
    while server.stderr().matches(KEYS_FETCHED).count() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(server.stderr().matches(KEYS_FETCHED).count(), 2);
    // Tokens signed by the old key still pass while the provider publishes it.
    assert_eq!(try_token(&server, Some(&before)).0, 200);

    // Made-up key ids: each is refused, and together they fetch the keys at most once more.
    let (header, claims) = parts(&after);
    let signature = after.rsplit('.').next().unwrap();
    for i in 0..20 {
        let mut header = header.clone();
        header["kid"] = json!(format!("made-up-{i}"));
        let forged = format!("{}.{}.{signature}", encode(&header), encode(&claims));
        assert_eq!(
            try_token(&server, Some(&forged)),
            (
                401,
                Some(invalid_token(
                    &server,
                    "the token is signed by a key the issuer does not publish"
                ))
            )
        );
    }
    assert!(
        server.stderr().matches(KEYS_FETCHED).count() <= 3,
        "{}",
        server.stderr()
    );
    // Meanwhile a good token is answered.
    let mut reader = bearer(&server, &after);
    reader.initialize(LATEST_VERSION);
    assert!(ok_text(&reader.call_tool("hello_greet", json!({"name": "x"}))).contains('x'));
}

/// Runs a test client script and returns the JSON summary it prints last.
fn run_client(mut command: std::process::Command, context: &dyn Fn() -> String) -> Value {
    let out = run_command(&mut command, secs(120));
    assert!(
        out.success(),
        "{:?} failed: {:?}\nstdout:\n{}\nstderr:\n{}\n{}",
        command.get_args().collect::<Vec<_>>(),
        out.status,
        out.stdout,
        out.stderr,
        context()
    );
    let last = out.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

#[test]
fn the_python_and_typescript_sdks_sign_in_with_client_credentials() {
    let dir = tempdir();
    let key = oidc_key(dir.path(), "k1", "RS256");
    let idp = OidcProvider::start(dir.path(), 0, &[&key], &clients(), &[]);
    let server = start(&config(dir.path(), &idp.issuer, "", ""));
    let context = || format!("server:\n{}\nprovider:\n{}", server.stderr(), idp.logs());
    let greet = json!({"name": "sdk"}).to_string();

    // Python: discovery from the 401, a token for every scope the metadata lists.
    let python = |args: &[&str]| {
        let mut command = std::process::Command::new(pyclient_python());
        command
            .arg(repo_root().join("tests/clients/python_oauth.py"))
            .arg(&server.url)
            .args(args);
        run_client(command, &context)
    };
    let typescript = |args: &[&str]| {
        let mut command = std::process::Command::new(node22());
        command
            .current_dir(repo_root().join("tests/clients"))
            .arg("ts_oauth.mjs")
            .arg(&server.url)
            .args(args);
        run_client(command, &context)
    };
    let names = |summary: &Value| -> Vec<String> {
        summary["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let summary = python(&[&idp.issuer, "admin", "admin-secret", "hello_greet", &greet]);
    let tools = names(&summary);
    assert!(
        tools.iter().any(|t| t == "misbehave_ok") && tools.iter().any(|t| t == "hello_greet"),
        "{summary}"
    );
    assert_eq!(summary["call"]["isError"], false, "{summary}");
    assert!(
        summary["call"]["text"].as_str().unwrap().contains("sdk"),
        "{summary}"
    );

    // TypeScript: the scope it is told; the lists follow it.
    let summary = typescript(&[
        &idp.issuer,
        "reader",
        "reader-secret",
        "tools:hello",
        "hello_greet",
        &greet,
    ]);
    let tools = names(&summary);
    assert!(
        !tools.is_empty() && tools.iter().all(|t| t.starts_with("hello_")),
        "{summary}"
    );
    assert_eq!(summary["call"]["isError"], false, "{summary}");

    // A token obtained beforehand, through each SDK's plain header support.
    let token = idp.must_token("reader", "reader-secret", &server.url, "tools:hello");
    for summary in [
        python(&["--token", &token, "hello_greet", &greet]),
        typescript(&["--token", &token, "hello_greet", &greet]),
    ] {
        assert!(
            summary["call"]["text"].as_str().unwrap().contains("sdk"),
            "{summary}"
        );
        assert_eq!(summary["call"]["isError"], false, "{summary}");
    }
}
