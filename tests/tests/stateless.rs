//! MCP 2026-07-28, the stateless revision, beside the initialize-based ones in one process: every
//! request carries its version and the client's capabilities in `params._meta` (checked first),
//! HTTP headers mirror the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`), results say what they are (`resultType`), who answered (`serverInfo`) and how
//! long they keep (`ttlMs`, `cacheScope`), plugins' questions travel in `input_required` results
//! whose signed `requestState` the client echoes, and `subscriptions/listen` replaces sessions'
//! notifications. Most tests run the same checks over stdio and over HTTP (see [`Wire`]); every
//! message is validated against the 2026-07-28 schema (see the harness's stateless section).

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use palisade_tests::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Client capabilities declaring everything a plugin may ask for.
fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}})
}

fn no_caps() -> Value {
    json!({})
}

/// The example configuration of the conformance plugin (fixtures under their own names).
fn conformance_toml() -> String {
    path_str(&repo_root().join("plugins/fixtures/conformance/palisade.toml"))
}

/// `<dir>/palisade.toml` serving the conformance fixtures under their own names, with `server`
/// as the body of `[server]` and `extra` after the plugin's section.
fn conformance_config(dir: &Path, server: &str, extra: &str) -> PathBuf {
    config_file(
        dir,
        &format!(
            "[server]\n{server}\n\n[plugins.conformance]\npath = {}\nprefix = \"\"\n\n{extra}\n",
            toml_str(&plugin_arg("conformance"))
        ),
    )
}

/// An answer, over either transport.
#[derive(Debug)]
struct Reply {
    /// The HTTP status (`None` over stdio).
    status: Option<u16>,
    /// The JSON-RPC response.
    response: Value,
    /// Notifications on the SSE stream before the response (HTTP only).
    before: Vec<Value>,
    /// Whether the HTTP answer was an SSE stream.
    sse: bool,
    /// The `Mcp-Session-Id` response header, if any.
    session_header: Option<String>,
}

impl Reply {
    /// The result; over HTTP the status must be 200.
    #[track_caller]
    fn result(&self) -> Value {
        if let Some(status) = self.status {
            assert_eq!(status, 200, "{self:?}");
        }
        self.response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("expected a result, got {}", self.response))
    }

    /// The error, which must have `code`; over HTTP the status must be `http` (when given).
    #[track_caller]
    fn error(&self, code: i64, http: Option<u16>) -> Value {
        let error = expect_error_code(&self.response, code);
        if let (Some(status), Some(expected)) = (self.status, http) {
            assert_eq!(status, expected, "HTTP status of {}", self.response);
        }
        error
    }
}

/// One server and a client of the stateless revision, over stdio or HTTP.
enum Wire {
    Stdio(Server),
    Http {
        /// Kept for the process's lifetime (dropping it stops the server).
        _server: HttpServer,
        client: HttpClient,
    },
}

impl Wire {
    fn stdio(args: &[&str]) -> Wire {
        Wire::Stdio(Server::start(args))
    }

    fn http(args: &[&str]) -> Wire {
        let server = HttpServer::start(args);
        let client = server.stateless_client();
        Wire::Http {
            _server: server,
            client,
        }
    }

    /// The same server (`palisade serve <args>`) over stdio, then over HTTP.
    fn both(args: &[&str]) -> Vec<Wire> {
        vec![Wire::stdio(args), Wire::http(args)]
    }

    fn name(&self) -> &'static str {
        match self {
            Wire::Stdio(_) => "stdio",
            Wire::Http { .. } => "HTTP",
        }
    }

    fn is_http(&self) -> bool {
        matches!(self, Wire::Http { .. })
    }

    /// A stateless request (over HTTP with its standard headers); the response is validated.
    fn send(&mut self, method: &str, params: Value, caps: &Value) -> Reply {
        self.send_with(method, params, caps, &[])
    }

    /// [`send`](Self::send) with extra HTTP headers (ignored over stdio).
    fn send_with(
        &mut self,
        method: &str,
        params: Value,
        caps: &Value,
        headers: &[(&str, &str)],
    ) -> Reply {
        match self {
            Wire::Stdio(s) => Reply {
                status: None,
                response: s.stateless(method, params, caps),
                before: Vec::new(),
                sse: false,
                session_header: None,
            },
            Wire::Http { client, .. } => {
                let message = client.stateless_message(method, params, caps);
                let answer = client.stateless_exchange(&message, headers);
                let session_header = answer.header("mcp-session-id");
                Reply {
                    status: Some(answer.status),
                    response: answer.response,
                    before: answer.before,
                    sse: answer.sse,
                    session_header,
                }
            }
        }
    }

    /// `tools/call` of `name` with `arguments`.
    fn call(&mut self, name: &str, arguments: Value, caps: &Value) -> Reply {
        self.send(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            caps,
        )
    }

    /// `tools/call` again with `inputResponses` and, when given, the `requestState`.
    fn retry(
        &mut self,
        name: &str,
        arguments: Value,
        responses: Value,
        state: Option<&Value>,
        caps: &Value,
    ) -> Reply {
        let mut params = json!({"name": name, "arguments": arguments, "inputResponses": responses});
        if let Some(state) = state {
            params["requestState"] = state.clone();
        }
        self.send("tools/call", params, caps)
    }
}

/// Checks an `input_required` result asking exactly `keys`; returns its `requestState`.
#[track_caller]
fn input_required(result: &Value, keys: &[&str]) -> Value {
    assert_eq!(result["resultType"], "input_required", "{result}");
    let mut asked: Vec<&str> = result["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("no inputRequests object: {result}"))
        .keys()
        .map(String::as_str)
        .collect();
    asked.sort();
    let mut expected = keys.to_vec();
    expected.sort();
    assert_eq!(asked, expected, "the keys asked: {result}");
    assert!(
        result.get("ttlMs").is_none() && result.get("cacheScope").is_none(),
        "an interim result carries no cache hints: {result}"
    );
    assert_eq!(
        result["_meta"][META_SERVER_INFO]["name"], "palisade",
        "{result}"
    );
    let state = result["requestState"].clone();
    assert!(
        state.as_str().is_some_and(|s| !s.is_empty()),
        "a requestState string: {result}"
    );
    state
}

/// Checks a complete, successful tool result; returns its text.
#[track_caller]
fn complete_text(result: &Value) -> String {
    assert_eq!(result["resultType"], "complete", "{result}");
    ok_text(result)
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// `state` with one character of its middle changed (to another of the base64url alphabet).
fn flip_a_char(state: &str) -> String {
    let mut bytes = state.as_bytes().to_vec();
    let at = bytes.len() / 3;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

// ---------------------------------------------------------------------------
// Discovery, result fields, removed methods
// ---------------------------------------------------------------------------

/// Proves: `server/discover` needs no `initialize` and describes the server: the one version it
/// serves statelessly, its capabilities (tool list changes announced), instructions, its identity
/// in `_meta`, and cache hints; over HTTP as plain JSON without a session.
#[test]
fn discover_describes_the_server_on_both_transports() {
    let config = conformance_toml();
    for mut wire in Wire::both(&["--no-watch", "--config", &config]) {
        let reply = wire.send("server/discover", Value::Null, &no_caps());
        let r = reply.result();
        let on = wire.name();
        assert_eq!(r["resultType"], "complete", "{on}: {r}");
        assert_eq!(
            r["supportedVersions"],
            json!([STATELESS_VERSION]),
            "{on}: {r}"
        );
        assert_eq!(r["capabilities"]["tools"]["listChanged"], true, "{on}: {r}");
        for served in ["prompts", "resources"] {
            assert!(r["capabilities"][served].is_object(), "{on}: {served}: {r}");
        }
        assert!(
            r["instructions"].as_str().is_some_and(|s| !s.is_empty()),
            "{on}: {r}"
        );
        let info = &r["_meta"][META_SERVER_INFO];
        assert_eq!(info["name"], "palisade", "{on}: {r}");
        assert!(info["version"].as_str().is_some(), "{on}: {r}");
        assert!(r["ttlMs"].as_u64().is_some(), "{on}: {r}");
        assert_eq!(r["cacheScope"], "public", "{on}: {r}");
        if wire.is_http() {
            assert!(!reply.sse, "a lone response is plain JSON");
            assert_eq!(reply.session_header, None, "no session is minted");
        }
    }
}

/// Proves: every result of the stateless revision says `resultType: complete` and names the
/// server in `_meta`; lists keep 60 s and may be shared (`public`), except `resources/list`
/// (fresh only at once); read content is `private` and fresh only at once; calls, prompts and
/// completions carry no cache hints. `tools/list` lists the fixtures, in the same order each time.
#[test]
fn every_result_says_its_type_server_and_cache_hints() {
    let config = conformance_toml();
    for mut wire in Wire::both(&["--no-watch", "--config", &config]) {
        let on = wire.name();
        // Method, params, and the expected `ttlMs` and `cacheScope` (none for uncacheable results).
        type Case<'a> = (&'a str, Value, Option<(u64, &'a str)>);
        let cases: [Case; 8] = [
            ("tools/list", Value::Null, Some((60_000, "public"))),
            ("prompts/list", Value::Null, Some((60_000, "public"))),
            (
                "resources/templates/list",
                Value::Null,
                Some((60_000, "public")),
            ),
            ("resources/list", Value::Null, Some((0, "public"))),
            (
                "resources/read",
                json!({"uri": "test://static-text"}),
                Some((0, "private")),
            ),
            (
                "tools/call",
                json!({"name": "test_simple_text", "arguments": {}}),
                None,
            ),
            ("prompts/get", json!({"name": "test_simple_prompt"}), None),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                       "argument": {"name": "arg1", "value": "pa"}}),
                None,
            ),
        ];
        for (method, params, hints) in cases {
            let r = wire.send(method, params, &no_caps()).result();
            assert_eq!(r["resultType"], "complete", "{on} {method}: {r}");
            assert_eq!(
                r["_meta"][META_SERVER_INFO]["name"], "palisade",
                "{on} {method}: {r}"
            );
            match hints {
                Some((ttl, scope)) => {
                    assert_eq!(r["ttlMs"], ttl, "{on} {method}: {r}");
                    assert_eq!(r["cacheScope"], scope, "{on} {method}: {r}");
                }
                None => assert!(
                    r.get("ttlMs").is_none() && r.get("cacheScope").is_none(),
                    "{on} {method}: no cache hints: {r}"
                ),
            }
            match method {
                "resources/read" => assert_eq!(
                    r["contents"][0]["text"], "This is the content of the static text resource.",
                    "{on}: {r}"
                ),
                "tools/call" => assert_eq!(
                    ok_text(&r),
                    "This is a simple text response for testing.",
                    "{on}"
                ),
                "completion/complete" => assert!(
                    r["completion"]["values"]
                        .as_array()
                        .is_some_and(|v| v.contains(&json!("paris"))),
                    "{on}: {r}"
                ),
                _ => {}
            }
        }
        let names = |r: &Value| tool_names(r["tools"].as_array().unwrap());
        let first = names(&wire.send("tools/list", Value::Null, &no_caps()).result());
        for fixture in [
            "test_simple_text",
            "test_custom_header",
            "test_input_required_result_elicitation",
            "test_missing_capability",
        ] {
            assert!(
                first.iter().any(|n| n == fixture),
                "{on}: {fixture} in {first:?}"
            );
        }
        let again = names(&wire.send("tools/list", Value::Null, &no_caps()).result());
        assert_eq!(first, again, "{on}: tools/list keeps its order");
    }
}

/// Proves: the methods 2026-07-28 removed (`initialize` with a stateless `_meta`, `ping`,
/// `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`) and unknown ones are
/// -32601, HTTP 404, with the request's id.
#[test]
fn removed_and_unknown_methods_are_not_found() {
    let config = conformance_toml();
    for mut wire in Wire::both(&["--no-watch", "--config", &config]) {
        let on = wire.name();
        let cases = [
            (
                "initialize",
                json!({"protocolVersion": LATEST_VERSION, "capabilities": {},
                       "clientInfo": {"name": "x", "version": "1"}}),
            ),
            ("ping", Value::Null),
            ("logging/setLevel", json!({"level": "info"})),
            ("resources/subscribe", json!({"uri": "test://static-text"})),
            (
                "resources/unsubscribe",
                json!({"uri": "test://static-text"}),
            ),
            ("unknown/method", Value::Null),
        ];
        for (method, params) in cases {
            let reply = wire.send(method, params, &no_caps());
            reply.error(METHOD_NOT_FOUND, Some(404));
            assert!(reply.response["id"].is_i64(), "{on} {method}: {reply:?}");
        }
        // Still serving.
        wire.send("tools/list", Value::Null, &no_caps()).result();
    }
}

// ---------------------------------------------------------------------------
// Request checks: _meta, headers, version
// ---------------------------------------------------------------------------

/// Proves: over stdio, `_meta` must name a version (a string) and the client's capabilities (an
/// object), else -32602; a version other than 2026-07-28 is -32022 with what is supported and what
/// was asked; each error answers the request's id.
#[test]
fn stdio_checks_meta_then_version() {
    let mut s = Server::start(&["--no-watch", "--config", &conformance_toml()]);
    let meta_cases = [
        ("no-meta", json!({})),
        (
            "no-version",
            json!({"_meta": {META_CLIENT_CAPABILITIES: {}}}),
        ),
        (
            "version-not-a-string",
            json!({"_meta": {META_PROTOCOL_VERSION: 20260728, META_CLIENT_CAPABILITIES: {}}}),
        ),
        (
            "no-capabilities",
            json!({"_meta": {META_PROTOCOL_VERSION: STATELESS_VERSION}}),
        ),
        (
            "capabilities-not-an-object",
            json!({"_meta": {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: []}}),
        ),
    ];
    for (id, params) in meta_cases {
        // Sent as is: the method alone makes these stateless requests.
        let msg =
            json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": params});
        s.send_raw(&msg.to_string());
        let response = s.wait_stateless_response(&json!(id));
        expect_error_code(&response, INVALID_PARAMS);
    }
    for requested in ["v999", "2025-11-25"] {
        let id = format!("version-{requested}");
        s.send_stateless_with_id(
            json!(id.clone()),
            "tools/list",
            json!({"_meta": {META_PROTOCOL_VERSION: requested}}),
            &no_caps(),
        );
        let response = s.wait_stateless_response(&json!(id));
        let error = expect_error_code(&response, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error["data"],
            json!({"supported": [STATELESS_VERSION], "requested": requested}),
            "{response}"
        );
    }
    s.stateless_result("tools/list", Value::Null, &no_caps());
}

/// Proves, over HTTP, the order of the checks and each one's answer (all HTTP 400, each with the
/// request's id): `_meta` first (-32602, even with a mismatched header), then the
/// `MCP-Protocol-Version` header against `_meta` (-32020, before the version is judged), then the
/// version (-32022 with `supported` and `requested`), then `Mcp-Method` (required, exactly the
/// body's method: values are case-sensitive) and `Mcp-Name` for `tools/call`, `prompts/get`
/// (the name) and `resources/read` (the URI), which may be Base64 in `=?base64?...?=` (strict
/// Base64; a value merely starting so is literal).
#[test]
fn http_checks_meta_then_headers_then_version() {
    let server = HttpServer::start(&["--no-watch", "--config", &conformance_toml()]);
    let c = server.stateless_client();
    let post = |msg: &Value, headers: &[(&str, &str)]| c.stateless_exchange(msg, headers);
    let raw = |id: Value, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});

    // _meta.
    for (id, params) in [
        (json!(101), json!({})),
        (
            json!("102"),
            json!({"_meta": {META_CLIENT_CAPABILITIES: {}}}),
        ),
        (
            json!(103),
            json!({"_meta": {META_PROTOCOL_VERSION: 20260728, META_CLIENT_CAPABILITIES: {}}}),
        ),
        (
            json!(104),
            json!({"_meta": {META_PROTOCOL_VERSION: STATELESS_VERSION}}),
        ),
        (
            json!("105"),
            json!({"_meta": {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: "all"}}),
        ),
    ] {
        let msg = raw(id, "server/discover", params);
        post(&msg, &[("MCP-Protocol-Version", STATELESS_VERSION)]).error(400, INVALID_PARAMS);
    }
    // _meta is judged before the header: a bad _meta under a mismatched header is still -32602.
    let msg = raw(json!(106), "server/discover", json!({}));
    post(&msg, &[("MCP-Protocol-Version", "v999")]).error(400, INVALID_PARAMS);
    // clientInfo is optional.
    let msg = raw(
        json!(107),
        "server/discover",
        json!({"_meta": {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: {}}}),
    );
    post(&msg, &[]).result();

    // The version header.
    let msg = stateless_message(json!(201), "tools/list", Value::Null, &no_caps());
    post(&msg, &[("MCP-Protocol-Version", "")]).error(400, HEADER_MISMATCH);
    let v999 = stateless_message(
        json!("202"),
        "tools/list",
        json!({"_meta": {META_PROTOCOL_VERSION: "v999"}}),
        &no_caps(),
    );
    post(&v999, &[("MCP-Protocol-Version", STATELESS_VERSION)]).error(400, HEADER_MISMATCH);
    let msg = stateless_message(json!(203), "tools/list", Value::Null, &no_caps());
    post(&msg, &[("MCP-Protocol-Version", "2025-11-25")]).error(400, HEADER_MISMATCH);

    // The version.
    let error = post(&v999, &[]).error(400, UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(
        error["data"],
        json!({"supported": [STATELESS_VERSION], "requested": "v999"})
    );
    let with_sessions = stateless_message(
        json!(302),
        "tools/list",
        json!({"_meta": {META_PROTOCOL_VERSION: "2025-11-25"}}),
        &no_caps(),
    );
    let error = post(&with_sessions, &[]).error(400, UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(error["data"]["requested"], "2025-11-25");

    // Mcp-Method.
    let list = stateless_message(json!(401), "tools/list", Value::Null, &no_caps());
    post(&list, &[("Mcp-Method", "")]).error(400, HEADER_MISMATCH);
    post(&list, &[("Mcp-Method", "prompts/list")]).error(400, HEADER_MISMATCH);
    post(&list, &[("Mcp-Method", "TOOLS/LIST")]).error(400, HEADER_MISMATCH);
    post(&list, &[]).result();

    // Mcp-Name.
    let b64 = |s: &str| format!("=?base64?{}?=", BASE64.encode(s));
    let call = stateless_message(
        json!(501),
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
        &no_caps(),
    );
    post(&call, &[("Mcp-Name", "")]).error(400, HEADER_MISMATCH);
    post(&call, &[("Mcp-Name", "test_error_handling")]).error(400, HEADER_MISMATCH);
    post(&call, &[("Mcp-Name", "=?base64?dGVzdF9zaW1wbGVfdGV4dA?=")]).error(400, HEADER_MISMATCH);
    post(
        &call,
        &[("Mcp-Name", "=?base64?dGVzdF9zaW!!1wbGVfdGV4dA==?=")],
    )
    .error(400, HEADER_MISMATCH);
    let encoded = b64("test_simple_text");
    let ok = post(&call, &[("Mcp-Name", encoded.as_str())]).result();
    assert_eq!(ok_text(&ok), "This is a simple text response for testing.");
    post(&call, &[]).result();

    let prompt = stateless_message(
        json!(502),
        "prompts/get",
        json!({"name": "test_simple_prompt"}),
        &no_caps(),
    );
    post(&prompt, &[("Mcp-Name", "test_prompt_with_image")]).error(400, HEADER_MISMATCH);
    post(&prompt, &[("Mcp-Name", "")]).error(400, HEADER_MISMATCH);
    post(&prompt, &[]).result();
    // A name that only starts like the sentinel is literal: the header check passes, and the
    // prompt is unknown.
    let literal = stateless_message(
        json!(503),
        "prompts/get",
        json!({"name": "=?base64?SGVsbG8="}),
        &no_caps(),
    );
    let reply = post(&literal, &[]);
    assert_eq!(
        error_code(&reply.response),
        Some(INVALID_PARAMS),
        "{reply:?}"
    );

    let read = stateless_message(
        json!(504),
        "resources/read",
        json!({"uri": "test://static-text"}),
        &no_caps(),
    );
    post(&read, &[("Mcp-Name", "")]).error(400, HEADER_MISMATCH);
    post(&read, &[("Mcp-Name", "test://static-binary")]).error(400, HEADER_MISMATCH);
    let encoded = b64("test://static-text");
    post(&read, &[("Mcp-Name", encoded.as_str())]).result();
    post(&read, &[]).result();
}

/// Sends `body` over a plain socket with `headers` (lines) and returns the status and the JSON
/// body, validated as a response to `body`'s method.
fn raw_post(addr: &str, headers: &[&str], body: &Value) -> (u16, Value) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{}",
        headers.join("\r\n")
    );
    let (status, text) = raw_http(addr, &head, body.to_string().as_bytes());
    let json_body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.trim())
        .unwrap_or_default();
    let msg: Value = serde_json::from_str(json_body)
        .unwrap_or_else(|e| panic!("HTTP {status}: the body is not JSON ({e}): {text:?}"));
    let method = body["method"].as_str().unwrap_or_default();
    if let Err(e) = validate_stateless_response(method, &msg) {
        panic!("{e}\n{msg}");
    }
    (status, msg)
}

/// Proves: header names are compared without case (`MCP-METHOD`, `mcp-method`,
/// `MCP-PARAM-REGION`), values with it, after trimming the spaces and tabs around them.
#[test]
fn header_names_ignore_case_and_values_are_trimmed() {
    let server = HttpServer::start(&["--no-watch", "--config", &conformance_toml()]);
    let addr = &server.addr;
    let list = stateless_message(json!(1), "tools/list", Value::Null, &no_caps());
    for headers in [
        ["MCP-PROTOCOL-VERSION: 2026-07-28", "MCP-METHOD: tools/list"],
        ["mcp-protocol-version: 2026-07-28", "mcp-method: tools/list"],
        [
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: \t tools/list \t ",
        ],
    ] {
        let (status, msg) = raw_post(addr, &headers, &list);
        assert_eq!(status, 200, "{headers:?}: {msg}");
        assert!(msg["result"]["tools"].is_array(), "{headers:?}: {msg}");
    }
    let (status, msg) = raw_post(
        addr,
        &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: Tools/List"],
        &list,
    );
    assert_eq!(
        (status, error_code(&msg)),
        (400, Some(HEADER_MISMATCH)),
        "{msg}"
    );

    let call = stateless_message(
        json!(2),
        "tools/call",
        json!({"name": "test_custom_header", "arguments": {"region": "eu-west1"}}),
        &no_caps(),
    );
    let (status, msg) = raw_post(
        addr,
        &[
            "MCP-Protocol-Version: 2026-07-28",
            "MCP-METHOD: tools/call",
            "MCP-NAME:   test_custom_header  ",
            "MCP-PARAM-REGION: eu-west1",
        ],
        &call,
    );
    assert_eq!(status, 200, "{msg}");
    assert_eq!(tool_text(&msg["result"]), "Region: eu-west1", "{msg}");
}

// ---------------------------------------------------------------------------
// HTTP without sessions, beside the sessions of the initialize-based revisions
// ---------------------------------------------------------------------------

/// Proves: GET and DELETE on /mcp without a session, or with a 2026-07-28 version header, are 405
/// with `Allow: POST` (and do not end the session they name); a session's own GET still opens
/// its stream.
#[test]
fn get_and_delete_without_a_session_are_not_allowed() {
    let server = HttpServer::start(&["--no-watch", "--config", &conformance_toml()]);
    let stateless = server.stateless_client();
    let not_allowed = |reply: HttpReply, what: &str| {
        assert_eq!(reply.status, 405, "{what}: {reply:?}");
        assert_eq!(
            reply.header("allow").as_deref(),
            Some("POST"),
            "{what}: {reply:?}"
        );
        reply.expect_error_status(405);
    };
    not_allowed(stateless.get(&[]), "GET");
    not_allowed(stateless.delete(&[]), "DELETE");
    not_allowed(
        stateless.get(&[("MCP-Protocol-Version", STATELESS_VERSION)]),
        "GET with a stateless version",
    );

    let mut with_sessions = server.client();
    with_sessions.initialize(LATEST_VERSION);
    let stateless_header = [("MCP-Protocol-Version", STATELESS_VERSION)];
    not_allowed(
        with_sessions.get(&stateless_header),
        "GET of a session, stateless header",
    );
    not_allowed(
        with_sessions.delete(&stateless_header),
        "DELETE of a session, stateless header",
    );
    // The session lives on, its stream opens.
    drop(with_sessions.open_stream());
    let r = with_sessions.call_tool("test_simple_text", json!({}));
    assert_eq!(ok_text(&r), "This is a simple text response for testing.");
}

/// Proves: a stateless POST carrying `Mcp-Session-Id` (of a live session or of none) is served
/// as if it did not, no `Mcp-Session-Id` is returned, and the session it named goes on.
#[test]
fn a_stateless_post_ignores_session_ids_and_mints_none() {
    let server = HttpServer::start(&["--no-watch", "--config", &conformance_toml()]);
    let mut with_sessions = server.client();
    with_sessions.initialize(LATEST_VERSION);
    let session = with_sessions.session_id.clone().unwrap();
    let mut stateless = server.stateless_client();
    let unknown = "0".repeat(32);
    for id in [session.as_str(), unknown.as_str()] {
        let msg = stateless.stateless_message("tools/list", Value::Null, &no_caps());
        let answer = stateless.stateless_exchange(&msg, &[("Mcp-Session-Id", id)]);
        assert!(answer.result()["tools"].is_array());
        assert_eq!(answer.header("mcp-session-id"), None, "{answer:?}");
    }
    // A body that says it is stateless, sent with the session's id.
    let msg = stateless_message(json!(77), "tools/list", Value::Null, &no_caps());
    let reply = with_sessions.post_stateless(&msg, &[]);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("mcp-session-id"), None, "{reply:?}");
    let text = reply.text();
    let response: Value = serde_json::from_str(&text).unwrap();
    validate_stateless_response("tools/list", &response).unwrap();
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    // The session is untouched.
    let r = with_sessions.call_tool("test_simple_text", json!({}));
    assert_eq!(ok_text(&r), "This is a simple text response for testing.");
}

/// Proves: one HTTP server serves initialize-based sessions and stateless requests side by side:
/// the session initializes, lists and calls between stateless requests, and each keeps its own
/// rules (an unknown resource is -32002 in the session, -32602 with `data.uri` statelessly).
#[test]
fn with_sessions_and_stateless_requests_share_an_http_server() {
    let server = HttpServer::start(&["--no-watch", "--config", &conformance_toml()]);
    let mut stateless = server.stateless_client();
    stateless.stateless_result("tools/list", Value::Null, &no_caps());
    let mut with_sessions = server.client();
    let init = with_sessions.initialize(LATEST_VERSION);
    assert_eq!(init["protocolVersion"], LATEST_VERSION);
    let listed = with_sessions.result("tools/list", Value::Null);
    assert!(tool_names(listed["tools"].as_array().unwrap()).contains(&"test_simple_text".into()));
    let r = stateless.stateless_result(
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
        &no_caps(),
    );
    assert_eq!(
        complete_text(&r),
        "This is a simple text response for testing."
    );
    let r = with_sessions.call_tool("test_simple_text", json!({}));
    assert_eq!(ok_text(&r), "This is a simple text response for testing.");
    with_sessions.result("ping", Value::Null);

    let missing = "test://no-such-resource";
    let ex = with_sessions.exchange("resources/read", json!({"uri": missing}));
    assert_eq!(
        error_code(&ex.response),
        Some(RESOURCE_NOT_FOUND),
        "{:?}",
        ex.response
    );
    let msg = stateless.stateless_message("resources/read", json!({"uri": missing}), &no_caps());
    let answer = stateless.stateless_exchange(&msg, &[]);
    let error = expect_error_code(&answer.response, INVALID_PARAMS);
    assert_eq!(error["data"]["uri"], missing, "{error}");
}

/// Proves: over stdio, stateless requests need no `initialize`, and after one (which still opens
/// an initialize-based session) both kinds are served on the same stdin, each by its own rules:
/// `ping` in the session, -32601 statelessly; -32002 against -32602 for an unknown resource.
#[test]
fn stdio_serves_with_sessions_and_stateless_requests_on_one_stdin() {
    let mut s = Server::start(&["--no-watch", "--config", &conformance_toml()]);
    let r = s.stateless_result("tools/list", Value::Null, &no_caps());
    assert_eq!(r["ttlMs"], 60_000, "{r}");
    let init = s.initialize(LATEST_VERSION);
    assert_eq!(init["protocolVersion"], LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    assert!(tool_names(&tools).contains(&"test_simple_text".into()));
    let r = s.stateless_result(
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
        &no_caps(),
    );
    assert_eq!(
        complete_text(&r),
        "This is a simple text response for testing."
    );
    let r = s.call_tool("test_simple_text", json!({}));
    assert_eq!(ok_text(&r), "This is a simple text response for testing.");
    s.result("ping", Value::Null);
    let response = s.stateless("ping", Value::Null, &no_caps());
    expect_error_code(&response, METHOD_NOT_FOUND);

    let missing = "test://no-such-resource";
    let response = s.request("resources/read", json!({"uri": missing}));
    expect_error_code(&response, RESOURCE_NOT_FOUND);
    let response = s.stateless("resources/read", json!({"uri": missing}), &no_caps());
    let error = expect_error_code(&response, INVALID_PARAMS);
    assert_eq!(error["data"]["uri"], missing, "{response}");
}

// ---------------------------------------------------------------------------
// Multi round-trip requests (input_required)
// ---------------------------------------------------------------------------

/// Proves: a tool whose plugin asks the user answers `input_required` with the question under its
/// key (`elicitation/create`, the form's schema) and a `requestState`; the retry (a new id) with
/// the answer and the state runs it with the answer: `Hello, Alice!`. The answer alone, without a
/// state, is enough; answers under unknown keys are ignored; without the awaited key the question
/// comes again.
#[test]
fn an_elicitation_round_trip_completes_on_both_transports() {
    let config = conformance_toml();
    let tool = "test_input_required_result_elicitation";
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        let first = w.call(tool, json!({}), &all_caps()).result();
        let state = input_required(&first, &["user_name"]);
        let asked = &first["inputRequests"]["user_name"];
        assert_eq!(asked["method"], "elicitation/create", "{on}: {first}");
        assert_eq!(
            asked["params"]["requestedSchema"]["properties"]["name"]["type"], "string",
            "{on}: {first}"
        );
        let alice = json!({"user_name": accept(json!({"name": "Alice"}))});
        let done = w
            .retry(tool, json!({}), alice.clone(), Some(&state), &all_caps())
            .result();
        assert_eq!(complete_text(&done), "Hello, Alice!", "{on}");

        let without_state = w.retry(tool, json!({}), alice, None, &all_caps()).result();
        assert_eq!(complete_text(&without_state), "Hello, Alice!", "{on}");

        let extra = json!({
            "user_name": accept(json!({"name": "Bob"})),
            "unknown_extra_key": accept(json!({"foo": "bar"})),
        });
        let done = w.retry(tool, json!({}), extra, None, &all_caps()).result();
        assert_eq!(complete_text(&done), "Hello, Bob!", "{on}");

        let wrong_key = json!({"wrong_key": accept(json!({"name": "Eve"}))});
        let again = w
            .retry(tool, json!({}), wrong_key, None, &all_caps())
            .result();
        input_required(&again, &["user_name"]);
    }
}

/// Proves: a prompt and every kind of question round-trip: a prompt's context (`prompts/get`), a
/// sampling, a roots/list, and all three at once in one round.
#[test]
fn prompts_sampling_roots_and_several_questions_round_trip() {
    let config = conformance_toml();
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        let prompt = "test_input_required_result_prompt";
        let first = w
            .send("prompts/get", json!({"name": prompt}), &all_caps())
            .result();
        let state = input_required(&first, &["user_context"]);
        let done = w
            .send(
                "prompts/get",
                json!({"name": prompt, "requestState": state,
                       "inputResponses": {"user_context": accept(json!({"context": "test context"}))}}),
                &all_caps(),
            )
            .result();
        assert_eq!(done["resultType"], "complete", "{on}: {done}");
        assert!(
            done["messages"]
                .to_string()
                .contains("Prompt with context: test context"),
            "{on}: {done}"
        );

        let tool = "test_input_required_result_sampling";
        let first = w.call(tool, json!({}), &all_caps()).result();
        let state = input_required(&first, &["capital_question"]);
        assert_eq!(
            first["inputRequests"]["capital_question"]["method"], "sampling/createMessage",
            "{on}: {first}"
        );
        let sampled = json!({"capital_question": {"role": "assistant",
            "content": {"type": "text", "text": "Paris"}, "model": "test-model",
            "stopReason": "endTurn"}});
        let done = w
            .retry(tool, json!({}), sampled, Some(&state), &all_caps())
            .result();
        assert!(complete_text(&done).contains("Paris"), "{on}: {done}");

        let tool = "test_input_required_result_list_roots";
        let first = w.call(tool, json!({}), &all_caps()).result();
        let state = input_required(&first, &["client_roots"]);
        assert_eq!(
            first["inputRequests"]["client_roots"]["method"],
            "roots/list"
        );
        let roots =
            json!({"client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}});
        let done = w
            .retry(tool, json!({}), roots, Some(&state), &all_caps())
            .result();
        assert!(
            complete_text(&done).contains("file:///test/root"),
            "{on}: {done}"
        );

        let tool = "test_input_required_result_multiple_inputs";
        let first = w.call(tool, json!({}), &all_caps()).result();
        let state = input_required(&first, &["user_name", "greeting", "client_roots"]);
        let all = json!({
            "user_name": accept(json!({"name": "Alice"})),
            "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hello there!"},
                         "model": "test-model", "stopReason": "endTurn"},
            "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]},
        });
        let done = w
            .retry(tool, json!({}), all, Some(&state), &all_caps())
            .result();
        let text = complete_text(&done);
        for part in ["Hello, Alice!", "Hello there!", "file:///test/root"] {
            assert!(text.contains(part), "{on}: {part} in {text:?}");
        }

        let tool = "test_input_required_result_request_state";
        let first = w.call(tool, json!({}), &all_caps()).result();
        let state = input_required(&first, &["confirm"]);
        let done = w
            .retry(
                tool,
                json!({}),
                json!({"confirm": accept(json!({"ok": true}))}),
                Some(&state),
                &all_caps(),
            )
            .result();
        assert!(complete_text(&done).contains("state-ok"), "{on}: {done}");
    }
}

/// Proves: a call may take several rounds: the second question comes only once the first is
/// answered, with a new `requestState` that carries the first answer, so the last round needs
/// only the last answer: `Alice likes blue`.
#[test]
fn a_multi_round_call_carries_earlier_answers_in_its_state() {
    let config = conformance_toml();
    let tool = "test_input_required_result_multi_round";
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        let r1 = w.call(tool, json!({}), &all_caps()).result();
        let s1 = input_required(&r1, &["step1"]);
        let r2 = w
            .retry(
                tool,
                json!({}),
                json!({"step1": accept(json!({"name": "Alice"}))}),
                Some(&s1),
                &all_caps(),
            )
            .result();
        let s2 = input_required(&r2, &["step2"]);
        assert_ne!(s1, s2, "{on}: each round has its own state");
        assert!(
            r2["inputRequests"]["step2"]["params"]["requestedSchema"]["properties"]["color"]
                .is_object(),
            "{on}: {r2}"
        );
        let r3 = w
            .retry(
                tool,
                json!({}),
                json!({"step2": accept(json!({"color": "blue"}))}),
                Some(&s2),
                &all_caps(),
            )
            .result();
        assert_eq!(complete_text(&r3), "Alice likes blue", "{on}");
    }
}

/// Proves: a `requestState` the server did not issue as it is (one character changed,
/// `-TAMPERED` appended, empty, not a string) is -32602, and so is a genuine one presented on
/// another request: another tool, or the same tool with other arguments. The older host functions
/// `elicit` and `sample` ask under keys `elicit-N` / `sample-N` (in call order).
#[test]
fn a_forged_or_misused_request_state_is_refused() {
    let config = conformance_toml();
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        let tool = "test_input_required_result_tampered_state";
        let first = w.call(tool, json!({}), &all_caps()).result();
        let state = input_required(&first, &["confirm"]);
        let text = state.as_str().unwrap();
        let ok = json!({"confirm": accept(json!({"ok": true}))});
        for bad in [
            json!(flip_a_char(text)),
            json!(format!("{text}-TAMPERED")),
            json!(""),
            json!(5),
        ] {
            let reply = w.retry(tool, json!({}), ok.clone(), Some(&bad), &all_caps());
            reply.error(INVALID_PARAMS, None);
            assert!(reply.response.get("result").is_none(), "{on}: {bad}");
        }
        // Another tool asking the same question.
        w.retry(
            "test_input_required_result_request_state",
            json!({}),
            ok.clone(),
            Some(&state),
            &all_caps(),
        )
        .error(INVALID_PARAMS, None);
        // The genuine state on its own request.
        let done = w
            .retry(tool, json!({}), ok, Some(&state), &all_caps())
            .result();
        assert_eq!(complete_text(&done), "tamper-check passed", "{on}");

        // Other arguments: `test_elicitation` asks through `elicit`, key `elicit-1`.
        let first = w
            .call("test_elicitation", json!({"message": "first"}), &all_caps())
            .result();
        let state = input_required(&first, &["elicit-1"]);
        let answer =
            json!({"elicit-1": accept(json!({"username": "alice", "email": "a@example.com"}))});
        w.retry(
            "test_elicitation",
            json!({"message": "second"}),
            answer.clone(),
            Some(&state),
            &all_caps(),
        )
        .error(INVALID_PARAMS, None);
        let done = w
            .retry(
                "test_elicitation",
                json!({"message": "first"}),
                answer,
                Some(&state),
                &all_caps(),
            )
            .result();
        assert!(
            complete_text(&done).starts_with("User response: action=accept"),
            "{on}: {done}"
        );

        // `sample`: key `sample-1`.
        let first = w
            .call("test_sampling", json!({"prompt": "2+2"}), &all_caps())
            .result();
        let state = input_required(&first, &["sample-1"]);
        let four = json!({"sample-1": {"role": "assistant", "content": {"type": "text", "text": "4"},
                                       "model": "test-model", "stopReason": "endTurn"}});
        let done = w
            .retry(
                "test_sampling",
                json!({"prompt": "2+2"}),
                four,
                Some(&state),
                &all_caps(),
            )
            .result();
        assert_eq!(complete_text(&done), "LLM response: 4", "{on}");
    }
}

/// Proves: `inputResponses` must be an object of objects, each parsing as the result of what was
/// asked (an elicitation answer needs a valid `action`), else -32602; `null` is as if absent.
#[test]
fn malformed_input_responses_are_refused() {
    let config = conformance_toml();
    let tool = "test_input_required_result_elicitation";
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        for bad in [
            json!(12345),
            json!(["user_name"]),
            json!("user_name"),
            json!({"user_name": 12345}),
            json!({"user_name": "Alice"}),
            json!({"user_name": {"content": {"name": "Alice"}}}),
            json!({"user_name": {"action": "maybe", "content": {"name": "Alice"}}}),
        ] {
            let reply = w.retry(tool, json!({}), bad.clone(), None, &all_caps());
            assert_eq!(
                error_code(&reply.response),
                Some(INVALID_PARAMS),
                "{on}: {bad} -> {:?}",
                reply.response
            );
        }
        let again = w
            .retry(tool, json!({}), Value::Null, None, &all_caps())
            .result();
        input_required(&again, &["user_name"]);
    }
}

/// Proves: a `requestState` expires after `[server] request_state_ttl_s`.
#[test]
fn a_request_state_expires() {
    let dir = tempdir();
    let config = conformance_config(dir.path(), "request_state_ttl_s = 1", "");
    let mut w = Wire::stdio(&["--no-watch", "--config", &path_str(&config)]);
    let tool = "test_input_required_result_elicitation";
    let first = w.call(tool, json!({}), &all_caps()).result();
    let state = input_required(&first, &["user_name"]);
    // Not a timeout: the state must be older than its lifetime of one second.
    std::thread::sleep(Duration::from_secs(3));
    let alice = json!({"user_name": accept(json!({"name": "Alice"}))});
    w.retry(tool, json!({}), alice.clone(), Some(&state), &all_caps())
        .error(INVALID_PARAMS, None);
    // A fresh round works.
    let first = w.call(tool, json!({}), &all_caps()).result();
    let state = input_required(&first, &["user_name"]);
    let done = w
        .retry(tool, json!({}), alice, Some(&state), &all_caps())
        .result();
    assert_eq!(complete_text(&done), "Hello, Alice!");
}

const ALICE_TOKEN: &str = "alice-token-0123456789abcdef";
const BOB_TOKEN: &str = "bob-token-0123456789abcdef0123";

/// Proves: with `[[auth.tokens]]` a stateless request needs a token (401 without), lists and
/// reads are `private` to it, and a `requestState` is bound to the token it was issued to:
/// another token's retry is -32602, the issuer's completes.
#[test]
fn request_state_is_bound_to_its_token_and_lists_are_private() {
    let dir = tempdir();
    let tokens = format!(
        "[[auth.tokens]]\nname = \"alice\"\nscope = \"all\"\nsha256 = \"{}\"\n\n\
         [[auth.tokens]]\nname = \"bob\"\nscope = \"all\"\nsha256 = \"{}\"\n",
        sha256_hex(ALICE_TOKEN),
        sha256_hex(BOB_TOKEN)
    );
    let config = conformance_config(dir.path(), "", &tokens);
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let with_token = |token: &str| {
        let mut c = server.stateless_client();
        c.headers
            .push(("Authorization".into(), format!("Bearer {token}")));
        c
    };
    let anonymous = server.stateless_client();
    let msg = stateless_message(json!(1), "tools/list", Value::Null, &no_caps());
    let reply = anonymous.post_stateless(&msg, &[]);
    assert_eq!(reply.status, 401, "{reply:?}");

    let mut alice = with_token(ALICE_TOKEN);
    let mut bob = with_token(BOB_TOKEN);
    for method in ["tools/list", "prompts/list", "resources/list"] {
        let r = alice.stateless_result(method, Value::Null, &no_caps());
        assert_eq!(r["cacheScope"], "private", "{method}: {r}");
    }
    let r = alice.stateless_result(
        "resources/read",
        json!({"uri": "test://static-text"}),
        &no_caps(),
    );
    assert_eq!(r["cacheScope"], "private", "{r}");

    let tool = "test_input_required_result_elicitation";
    let call = json!({"name": tool, "arguments": {}});
    let first = alice.stateless_result("tools/call", call, &all_caps());
    let state = input_required(&first, &["user_name"]);
    let retry = json!({"name": tool, "arguments": {}, "requestState": state,
                       "inputResponses": {"user_name": accept(json!({"name": "Alice"}))}});
    let msg = bob.stateless_message("tools/call", retry.clone(), &all_caps());
    let error = bob.stateless_exchange(&msg, &[]);
    expect_error_code(&error.response, INVALID_PARAMS);
    let done = alice.stateless_result("tools/call", retry, &all_caps());
    assert_eq!(complete_text(&done), "Hello, Alice!");
}

/// Proves: without `request_state_key_file` each process signs with a key of its own, so a state
/// from one is refused (-32602) by another; with the same key file (relative to the
/// configuration) the other completes the call. A key shorter than 32 characters refuses to
/// start.
#[test]
fn request_state_crosses_processes_only_with_a_shared_key() {
    let tool = "test_input_required_result_elicitation";
    let call = json!({"name": tool, "arguments": {}});
    let retry = |state: &Value| {
        json!({"name": tool, "arguments": {}, "requestState": state,
               "inputResponses": {"user_name": accept(json!({"name": "Alice"}))}})
    };

    let config = conformance_toml();
    let a = HttpServer::start(&["--no-watch", "--config", &config]);
    let b = HttpServer::start(&["--no-watch", "--config", &config]);
    let (mut ca, mut cb) = (a.stateless_client(), b.stateless_client());
    let state = input_required(
        &ca.stateless_result("tools/call", call.clone(), &all_caps()),
        &["user_name"],
    );
    let msg = cb.stateless_message("tools/call", retry(&state), &all_caps());
    expect_error_code(&cb.stateless_exchange(&msg, &[]).response, INVALID_PARAMS);
    let done = ca.stateless_result("tools/call", retry(&state), &all_caps());
    assert_eq!(complete_text(&done), "Hello, Alice!");
    drop((a, b));

    let dir = tempdir();
    write_file(
        dir.path().join("state.key"),
        "a-shared-secret-of-more-than-32-characters\n",
    );
    let config = conformance_config(dir.path(), "request_state_key_file = \"state.key\"", "");
    let config = path_str(&config);
    let a = HttpServer::start(&["--no-watch", "--config", &config]);
    let b = HttpServer::start(&["--no-watch", "--config", &config]);
    let (mut ca, mut cb) = (a.stateless_client(), b.stateless_client());
    let state = input_required(
        &ca.stateless_result("tools/call", call, &all_caps()),
        &["user_name"],
    );
    let done = cb.stateless_result("tools/call", retry(&state), &all_caps());
    assert_eq!(complete_text(&done), "Hello, Alice!");

    let short = tempdir();
    write_file(short.path().join("state.key"), "too-short\n");
    let config = conformance_config(short.path(), "request_state_key_file = \"state.key\"", "");
    assert_serve_refused(
        &["--no-watch", "--config", &path_str(&config)],
        "at least 32",
    );
}

/// Proves: asking the client for something it did not declare fails inside the plugin; when the
/// call then fails, the answer is -32021 (HTTP 400) naming the missing capabilities. Declared,
/// the same question is an input request. A tool asking two things asks only what is declared.
#[test]
fn a_missing_client_capability_is_named() {
    let config = conformance_toml();
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        let reply = w.call("test_missing_capability", json!({}), &no_caps());
        let error = reply.error(MISSING_CLIENT_CAPABILITY, Some(400));
        assert_eq!(
            error["data"]["requiredCapabilities"],
            json!({"sampling": {}}),
            "{on}: {error}"
        );
        let reply = w.call(
            "test_input_required_result_elicitation",
            json!({}),
            &json!({"sampling": {}}),
        );
        let error = reply.error(MISSING_CLIENT_CAPABILITY, Some(400));
        assert_eq!(
            error["data"]["requiredCapabilities"],
            json!({"elicitation": {}}),
            "{on}: {error}"
        );

        let sampling = json!({"sampling": {}});
        let first = w
            .call("test_missing_capability", json!({}), &sampling)
            .result();
        let state = input_required(&first, &["sample_input"]);
        let answer = json!({"sample_input": {"role": "assistant",
            "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}});
        let done = w
            .retry(
                "test_missing_capability",
                json!({}),
                answer,
                Some(&state),
                &sampling,
            )
            .result();
        assert_eq!(complete_text(&done), "Success", "{on}");

        let first = w
            .call(
                "test_input_required_result_capabilities",
                json!({}),
                &sampling,
            )
            .result();
        input_required(&first, &["sample_input"]);
        assert_eq!(
            first["inputRequests"]["sample_input"]["method"], "sampling/createMessage",
            "{on}: {first}"
        );
    }
}

/// Proves: a tool configured with `confirm = true` asks the user first, under the key
/// `palisade/confirm` (an elicitation naming the tool): accepted, the tool runs; declined, it does
/// not (a tool error); a client that cannot be asked gets -32021 for elicitation. Other tools are
/// not asked about.
#[test]
fn a_confirmed_tool_asks_through_input_required() {
    let dir = tempdir();
    let config = conformance_config(
        dir.path(),
        "",
        "[plugins.conformance.tools.test_simple_text]\nconfirm = true\n",
    );
    let config = path_str(&config);
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        let tool = "test_simple_text";
        let first = w.call(tool, json!({}), &all_caps()).result();
        let state = input_required(&first, &["palisade/confirm"]);
        let asked = &first["inputRequests"]["palisade/confirm"];
        assert_eq!(asked["method"], "elicitation/create", "{on}: {first}");
        assert!(
            asked["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(tool)),
            "{on}: {first}"
        );
        let yes = json!({"palisade/confirm": {"action": "accept", "content": {}}});
        let done = w
            .retry(tool, json!({}), yes, Some(&state), &all_caps())
            .result();
        assert_eq!(
            complete_text(&done),
            "This is a simple text response for testing.",
            "{on}"
        );
        let no = json!({"palisade/confirm": {"action": "decline"}});
        let declined = w
            .retry(tool, json!({}), no, Some(&state), &all_caps())
            .result();
        assert_eq!(declined["resultType"], "complete", "{on}: {declined}");
        error_text(&declined, "declined");

        let reply = w.call(tool, json!({}), &no_caps());
        let error = reply.error(MISSING_CLIENT_CAPABILITY, Some(400));
        assert_eq!(
            error["data"]["requiredCapabilities"],
            json!({"elicitation": {}}),
            "{on}: {error}"
        );
        let other = w
            .call("test_error_handling", json!({}), &all_caps())
            .result();
        assert_eq!(other["resultType"], "complete", "{on}: {other}");
    }
}

// ---------------------------------------------------------------------------
// x-mcp-header
// ---------------------------------------------------------------------------

/// Proves: a plugin with `ask = true` reaching for a host it was not granted makes the call
/// answer `input_required` with the host's question under its own `palisade/` key; the retry
/// with "Allow once" gets through, with "Deny" is refused.
#[test]
fn a_grant_is_asked_through_input_required() {
    let port = local_http_server("hello from the asked host");
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.misbehave]\npath = {}\nask = true\n",
            toml_str(&plugin_arg("misbehave"))
        ),
    );
    let key = format!("palisade/grant/network/http://127.0.0.1:{port}");
    let args = json!({"url": format!("http://127.0.0.1:{port}/")});
    let tool = "misbehave_http_get";
    for mut w in Wire::both(&["--no-watch", "--config", &path_str(&config)]) {
        let on = w.name();
        let first = w.call(tool, args.clone(), &all_caps()).result();
        let state = input_required(&first, &[&key]);
        let message = &first["inputRequests"][&key]["params"]["message"];
        assert!(
            message
                .as_str()
                .is_some_and(|m| m.contains("wants to reach")),
            "{on}: {first}"
        );
        let answer =
            |decision: &str| json!({ key.as_str(): accept(json!({"decision": decision})) });
        let done = w
            .retry(
                tool,
                args.clone(),
                answer("Allow once"),
                Some(&state),
                &all_caps(),
            )
            .result();
        assert!(
            complete_text(&done).contains("hello from the asked host"),
            "{on}: {done}"
        );
        let refused = w
            .retry(
                tool,
                args.clone(),
                answer("Deny"),
                Some(&state),
                &all_caps(),
            )
            .result();
        assert_eq!(refused["resultType"], "complete", "{on}: {refused}");
        error_text(&refused, "HttpRequestDenied");
    }
}

/// Proves: a tool parameter marked `x-mcp-header` is listed with its marking, and over HTTP its
/// `Mcp-Param-{Name}` header must carry the argument exactly when the arguments have it (after
/// Base64 decoding of the `=?base64?...?=` form, strict; other values literal): a mismatch, a
/// missing header, a header without the argument, or bad Base64 is -32020 (400). Over stdio no
/// header is needed.
#[test]
fn marked_parameters_must_be_mirrored_in_headers() {
    let server = HttpServer::start(&["--no-watch", "--config", &conformance_toml()]);
    let mut c = server.stateless_client();
    let listed = c.stateless_result("tools/list", Value::Null, &no_caps());
    let tool = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "test_custom_header")
        .cloned()
        .unwrap_or_else(|| panic!("test_custom_header is not listed: {listed}"));
    assert_eq!(
        tool["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region",
        "{tool}"
    );

    let mut call = |region: Option<&str>, header: Option<&str>| {
        let arguments = match region {
            Some(r) => json!({"region": r}),
            None => json!({}),
        };
        let msg = c.stateless_message(
            "tools/call",
            json!({"name": "test_custom_header", "arguments": arguments}),
            &no_caps(),
        );
        let headers: Vec<(&str, &str)> = header
            .map(|h| ("Mcp-Param-Region", h))
            .into_iter()
            .collect();
        c.stateless_exchange(&msg, &headers)
    };
    let b64 = |s: &str| format!("=?base64?{}?=", BASE64.encode(s));

    for (region, header) in [
        ("eu-west1", "eu-west1".to_string()),
        ("Hello", "=?base64?SGVsbG8=?=".to_string()),
        ("SGVsbG8=", "SGVsbG8=".to_string()),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8=".to_string()),
        ("Zürich", b64("Zürich")),
        (" padded ", b64(" padded ")),
    ] {
        let answer = call(Some(region), Some(header.as_str()));
        let r = answer.result();
        assert_eq!(complete_text(&r), format!("Region: {region}"), "{header}");
    }
    for (region, header) in [
        (Some("eu-west1"), Some("us-east1")),
        (Some("eu-west1"), Some("EU-WEST1")),
        (Some("eu-west1"), None),
        (None, Some("eu-west1")),
        (Some("Hello"), Some("=?base64?SGVsbG8?=")),
        (Some("Hello"), Some("=?base64?SGVs!!!bG8=?=")),
        (Some("Hello"), Some("=?base64?SGVsbG9=?=")),
    ] {
        call(region, header).error(400, HEADER_MISMATCH);
    }
    // Neither argument nor header: no header is expected; the arguments are the tool's business.
    let answer = call(None, None);
    let r = answer.result();
    assert!(is_tool_error(&r), "a missing required argument: {r}");

    let mut s = Server::start(&["--no-watch", "--config", &conformance_toml()]);
    let r = s.stateless_result(
        "tools/call",
        json!({"name": "test_custom_header", "arguments": {"region": "eu-west1"}}),
        &no_caps(),
    );
    assert_eq!(complete_text(&r), "Region: eu-west1");
}

/// Proves: a tool whose schema marks a parameter `x-mcp-header` against MCP's rules (here a
/// `number`) is left out of the catalog, in both eras, with a warning naming it; the plugin's
/// other tools are served.
#[test]
fn a_tool_with_an_invalid_header_marking_is_left_out() {
    let mut s = Server::start(&["--no-watch", "--plugin", &plugin_arg("misbehave")]);
    // Lists wait only 2 s for plugins still loading: load first.
    s.wait_ready();
    let listed = s.stateless_result("tools/list", Value::Null, &no_caps());
    let names = tool_names(listed["tools"].as_array().unwrap());
    assert!(names.contains(&"misbehave_ok".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("bad_header")),
        "the badly marked tool must be left out: {names:?}"
    );
    s.initialize(LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    let names = tool_names(&tools);
    assert!(names.contains(&"misbehave_ok".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("bad_header")), "{names:?}");
    let warned = s
        .stderr()
        .lines()
        .any(|l| l.contains("WARN") && l.contains("bad_header"));
    assert!(
        warned,
        "a warning naming bad_header is expected:\n{}",
        s.stderr()
    );
}

// ---------------------------------------------------------------------------
// Notifications about a request: progress, logs; cancellation; roots
// ---------------------------------------------------------------------------

/// Proves: progress (0, 50, 100) reaches a request that asked for it with `_meta.progressToken`:
/// over HTTP as an SSE stream (no event ids, one `data:` line each, `X-Accel-Buffering: no`,
/// the response last), over stdio before the response. Without a token the answer is plain JSON.
#[test]
fn progress_comes_before_the_response_on_both_transports() {
    let config = conformance_toml();
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        let params = json!({"name": "test_tool_with_progress", "arguments": {},
                            "_meta": {"progressToken": "progress-1"}});
        let reply = w.send("tools/call", params, &no_caps());
        let done = reply.result();
        assert_eq!(
            complete_text(&done),
            "Tool with progress executed successfully",
            "{on}"
        );
        let notes = match &mut w {
            Wire::Stdio(s) => s.take_notifications("notifications/progress"),
            Wire::Http { .. } => {
                assert!(reply.sse, "progress makes an SSE answer");
                reply.before.clone()
            }
        };
        let values: Vec<f64> = notes
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| {
                assert_eq!(m["params"]["progressToken"], "progress-1", "{on}: {m}");
                m["params"]["progress"].as_f64().unwrap()
            })
            .collect();
        assert_eq!(values, [0.0, 50.0, 100.0], "{on}");

        let reply = w.call("test_tool_with_progress", json!({}), &no_caps());
        reply.result();
        assert!(!reply.sse, "{on}: without a token, no stream");
        if let Wire::Stdio(s) = &mut w {
            assert!(s.take_notifications("notifications/progress").is_empty());
        }
    }
}

/// Proves: a stateless request gets the plugin's log messages only if its `_meta` names a
/// `logLevel`, and only at or above it.
#[test]
fn logs_reach_only_requests_that_ask_for_a_level() {
    let config = conformance_toml();
    for mut w in Wire::both(&["--no-watch", "--config", &config]) {
        let on = w.name();
        for (level, expected) in [
            (None, 0),
            (Some("info"), 3),
            (Some("debug"), 3),
            (Some("error"), 0),
        ] {
            let mut params = json!({"name": "test_logging_tool", "arguments": {}});
            if let Some(level) = level {
                params["_meta"] = json!({META_LOG_LEVEL: level});
            }
            let reply = w.send("tools/call", params, &no_caps());
            assert_eq!(
                complete_text(&reply.result()),
                "Logging test completed",
                "{on}"
            );
            let logs: Vec<Value> = match &mut w {
                Wire::Stdio(s) => s.take_notifications("notifications/message"),
                Wire::Http { .. } => reply
                    .before
                    .iter()
                    .filter(|m| m["method"] == "notifications/message")
                    .cloned()
                    .collect(),
            };
            assert_eq!(logs.len(), expected, "{on} {level:?}: {logs:?}");
            for m in &logs {
                assert_eq!(m["params"]["level"], "info", "{on}: {m}");
            }
            if w.is_http() {
                assert_eq!(
                    reply.sse,
                    expected > 0,
                    "{on} {level:?}: a stream only for logs"
                );
            }
        }
    }
}

/// Proves: over HTTP, closing a request's SSE stream after events have arrived cancels the
/// request: the plugin sees the cancellation and stops.
#[test]
fn closing_the_sse_stream_cancels_the_request() {
    use std::io::{BufRead, BufReader, Write};
    let server = HttpServer::start(&["--no-watch", "--plugin", &plugin_arg("misbehave")]);
    let mut params = json!({"name": "misbehave_until_cancelled", "arguments": {}});
    params["_meta"] = json!({"progressToken": "p1"});
    let msg = stateless_message(json!(5), "tools/call", params, &no_caps());
    let body = msg.to_string();
    let mut tcp = std::net::TcpStream::connect(&server.addr).expect("connect");
    write!(
        tcp,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: misbehave_until_cancelled\r\n\
         Content-Length: {}\r\n\r\n{body}",
        server.addr,
        body.len()
    )
    .expect("send");
    tcp.set_read_timeout(Some(secs(30))).expect("timeout");
    let mut reader = BufReader::new(tcp);
    let (mut head, mut line) = (String::new(), String::new());
    // Headers, then the first event: the progress report.
    while !line.starts_with("data:") {
        line.clear();
        assert!(
            reader.read_line(&mut line).expect("read") > 0,
            "closed early: {head}"
        );
        head.push_str(&line);
    }
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    assert!(line.contains("notifications/progress"), "{line}");
    drop(reader);
    assert!(
        server.wait_for_stderr(
            "misbehave saw the cancellation and stopped cleanly",
            secs(60)
        ),
        "the plugin did not see the cancellation:\n{}",
        server.stderr()
    );
}

/// Proves: over HTTP, a client that closes the connection before the answer cancels its request:
/// the plugin sees it and stops, and the server goes on serving.
#[test]
fn closing_the_connection_cancels_the_request() {
    let server = HttpServer::start(&["--no-watch", "--plugin", &plugin_arg("misbehave")]);
    // Loaded, so the call runs well before the client gives up on it.
    server.process.wait_ready();
    let mut c = server.stateless_client();
    let msg = c.stateless_message(
        "tools/call",
        json!({"name": "misbehave_until_cancelled", "arguments": {}}),
        &no_caps(),
    );
    let headers = stateless_headers(&msg);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        c.post_with_and_give_up(&msg, &headers, Duration::from_secs(2)),
        None,
        "the call should still be running"
    );
    assert!(
        server.wait_for_stderr(
            "misbehave saw the cancellation and stopped cleanly",
            secs(60)
        ),
        "the plugin did not see the cancellation:\n{}",
        server.stderr()
    );
    let r = c.stateless_result(
        "tools/call",
        json!({"name": "misbehave_ok", "arguments": {}}),
        &no_caps(),
    );
    assert_eq!(complete_text(&r), "still fine");
}

/// Proves: the roots of a stateless request are the server's `--root` directories, and the client
/// is never asked for them (even when it declares `roots`).
#[test]
fn roots_of_stateless_requests_come_from_the_server() {
    let tmp = tempdir();
    let project = tmp.path().join("project");
    write_file(project.join("a.txt"), "server root\n");
    let project = path_str(&project);
    for mut w in Wire::both(&[
        "--no-watch",
        "--plugin",
        &plugin_arg("files"),
        "--root",
        &project,
    ]) {
        let on = w.name();
        let r = w
            .call(
                "files_read_file",
                json!({"path": format!("{project}/a.txt")}),
                &all_caps(),
            )
            .result();
        assert!(complete_text(&r).contains("server root"), "{on}: {r}");
    }
}

// ---------------------------------------------------------------------------
// subscriptions/listen
// ---------------------------------------------------------------------------

fn subscription_id(notification: &Value) -> &Value {
    &notification["params"]["_meta"][META_SUBSCRIPTION_ID]
}

/// Proves, over stdio: `subscriptions/listen` is acknowledged first with the honored part of its
/// filter (true flags only, resources the client can read) and its id as `subscriptionId`; a
/// plugin's tool list change then reaches the subscriptions that asked for it (tagged with their
/// ids) and no other; `notifications/cancelled` ends a subscription without a response; when
/// stdin closes, each open one gets a graceful result carrying its id.
#[test]
fn subscriptions_over_stdio() {
    // Live reload on: the plugin's list changes are relisted.
    let mut s = Server::start(&["--config", &conformance_toml()]);
    let listen = |s: &mut Server, id: Value, notifications: Value| {
        s.send_stateless_with_id(
            id,
            "subscriptions/listen",
            json!({"notifications": notifications}),
            &no_caps(),
        );
    };
    let ack_of = |s: &mut Server, id: &Value| {
        let want = id.clone();
        s.wait_notification_where(
            "notifications/subscriptions/acknowledged",
            move |p| p["_meta"][META_SUBSCRIPTION_ID] == want,
            startup_timeout(),
        )
        .unwrap_or_else(|| panic!("no acknowledgment for subscription {id}"))
    };
    let tools_id = json!("sub-tools");
    listen(
        &mut s,
        tools_id.clone(),
        json!({"toolsListChanged": true, "promptsListChanged": false,
               "resourceSubscriptions": ["test://static-text", "test://no-such-resource"]}),
    );
    let ack = ack_of(&mut s, &tools_id);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://static-text"]}),
        "{ack}"
    );
    let prompts_id = json!(77);
    listen(
        &mut s,
        prompts_id.clone(),
        json!({"promptsListChanged": true}),
    );
    let ack = ack_of(&mut s, &prompts_id);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true})
    );
    assert!(
        subscription_id(&ack).is_i64(),
        "the id keeps its JSON type: {ack}"
    );
    let gone_id = json!("sub-cancelled");
    listen(&mut s, gone_id.clone(), json!({"toolsListChanged": true}));
    ack_of(&mut s, &gone_id);
    s.notify(
        "notifications/cancelled",
        json!({"requestId": gone_id.clone(), "reason": "done"}),
    );

    let trigger = |s: &mut Server, tool: &str| {
        let r = s.stateless_result(
            "tools/call",
            json!({"name": tool, "arguments": {}}),
            &no_caps(),
        );
        complete_text(&r);
    };
    let wait_for = |s: &mut Server, method: &str, id: &Value| {
        let want = id.clone();
        let got = s.wait_notification_where(
            method,
            move |p| p["_meta"][META_SUBSCRIPTION_ID] == want,
            secs(60),
        );
        got.unwrap_or_else(|| panic!("no {method} for subscription {id}:\n{}", s.stderr()))
    };
    trigger(&mut s, "test_trigger_tool_change");
    wait_for(&mut s, "notifications/tools/list_changed", &tools_id);
    trigger(&mut s, "test_trigger_prompt_change");
    wait_for(&mut s, "notifications/prompts/list_changed", &prompts_id);
    // Each subscription gets its changes in order: had the tools subscription been sent the
    // prompt change, it would come before this second tool change.
    trigger(&mut s, "test_trigger_tool_change");
    wait_for(&mut s, "notifications/tools/list_changed", &tools_id);
    trigger(&mut s, "test_trigger_prompt_change");
    wait_for(&mut s, "notifications/prompts/list_changed", &prompts_id);

    let status = s.close_stdin_and_wait(secs(60));
    assert!(status.success(), "{status}");
    for id in [&tools_id, &prompts_id] {
        let end = s.wait_response(id, secs(5));
        let result = s.expect_result(end);
        assert_eq!(result["resultType"], "complete", "{result}");
        assert_eq!(result["_meta"][META_SUBSCRIPTION_ID], *id, "{result}");
    }
    s.expect_no_response(&gone_id, Duration::ZERO);
    // Nothing went where it was not asked for.
    let mut stray = Vec::new();
    while let Some(m) = s.recv_timeout(Duration::ZERO) {
        stray.push(m);
    }
    stray.append(&mut s.notifications);
    for m in &stray {
        let method = m["method"].as_str().unwrap_or_default();
        let sub = subscription_id(m);
        let fine = match method {
            "notifications/tools/list_changed" => *sub == tools_id,
            "notifications/prompts/list_changed" => *sub == prompts_id,
            _ => true,
        };
        assert!(fine, "a notification the subscription did not ask for: {m}");
        if method.ends_with("list_changed") || method == "notifications/resources/updated" {
            assert!(
                !sub.is_null(),
                "a change notification outside a subscription: {m}"
            );
        }
    }
}

/// Proves, over HTTP: `subscriptions/listen` answers with an SSE stream that stays open (no
/// session, `X-Accel-Buffering: no`), acknowledged first; a change triggered by another POST
/// reaches the streams that asked for it, tagged with their listen ids; closing a stream ends its
/// subscription.
#[test]
fn subscriptions_over_http() {
    // Live reload on: the plugin's list changes are relisted.
    let server = HttpServer::start(&["--config", &conformance_toml()]);
    let mut c = server.stateless_client();
    let open = |c: &HttpClient, id: Value, notifications: Value| {
        let msg = stateless_message(
            id.clone(),
            "subscriptions/listen",
            json!({"notifications": notifications}),
            &no_caps(),
        );
        let reply = c.post_stateless(&msg, &[]);
        assert_eq!(
            reply.header("x-accel-buffering").as_deref(),
            Some("no"),
            "{reply:?}"
        );
        assert_eq!(reply.header("mcp-session-id"), None, "{reply:?}");
        let mut stream = reply.expect_sse("subscriptions/listen");
        let ack = stream
            .next_event_within(startup_timeout())
            .expect("the listen stream ended before its acknowledgment");
        assert!(ack.id.is_none(), "no event ids: {ack:?}");
        assert_eq!(
            ack.message["method"], "notifications/subscriptions/acknowledged",
            "the first message is the acknowledgment: {ack:?}"
        );
        assert_eq!(*subscription_id(&ack.message), id, "{ack:?}");
        (stream, ack.message)
    };
    let tools_id = json!(9001);
    let (mut tools, ack) = open(&c, tools_id.clone(), json!({"toolsListChanged": true}));
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    let prompts_id = json!("listen-prompts");
    let (mut prompts, ack) = open(&c, prompts_id.clone(), json!({"promptsListChanged": true}));
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true})
    );

    let mut trigger = |tool: &str| {
        let r = c.stateless_result(
            "tools/call",
            json!({"name": tool, "arguments": {}}),
            &no_caps(),
        );
        complete_text(&r);
    };
    let next = |stream: &mut SseStream| {
        stream
            .next_event_within(secs(60))
            .expect("the listen stream ended")
            .message
    };
    trigger("test_trigger_tool_change");
    let change = next(&mut tools);
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(*subscription_id(&change), tools_id, "{change}");
    trigger("test_trigger_prompt_change");
    let change = next(&mut prompts);
    assert_eq!(
        change["method"], "notifications/prompts/list_changed",
        "the prompts stream did not ask for tool changes: {change}"
    );
    assert_eq!(*subscription_id(&change), prompts_id, "{change}");

    // Closing the tools stream ends its subscription; the other goes on.
    drop(tools);
    trigger("test_trigger_tool_change");
    trigger("test_trigger_prompt_change");
    let change = next(&mut prompts);
    assert_eq!(
        change["method"], "notifications/prompts/list_changed",
        "{change}"
    );
    assert!(
        server.wait_for_stderr("closed a request's stream", secs(90)),
        "the server should notice the closed stream and end the subscription:\n{}",
        server.stderr()
    );
}
