//! The JSON-RPC surface under fuzzing: generated and mutated messages over stdio and Streamable
//! HTTP (a 2025-03-26 session, with batches, and stateless 2026-07-28 requests), each answered
//! exactly as JSON-RPC 2.0 and MCP say: the right code, the id echoed, one array per batch,
//! nothing for notifications, and the server alive and answering after every phase. Then clients
//! that go away: dropped streams leave no memory behind, stdin's end stops the calls in flight,
//! and an oversized line is skipped.
//!
//! Bounded and seeded. `PALISADE_FUZZ_MESSAGES` (default 1500 per phase) and
//! `PALISADE_FUZZ_SEED` (default fixed) change a run; `./dev fuzz` runs long with a fresh seed
//! and prints it, so a failure can be replayed.
//!
//! The expected answer of each message comes from [`oracle`], written from the specifications
//! (JSON-RPC 2.0, MCP's schema and transports), not from the server's code.

use std::collections::HashMap;
use std::thread;
use std::time::{Duration, Instant};

use palisade_tests::*;
use serde_json::{Value, json};

mod oracle {
    use super::*;

    /// Methods an initialize-based session serves (2025-03-26 and later).
    pub const SESSION_METHODS: [&str; 17] = [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
    ];

    /// Methods of the stateless revision (2026-07-28).
    pub const STATELESS_METHODS: [&str; 13] = [
        "server/discover",
        "subscriptions/listen",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
    ];

    pub const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

    /// What one JSON value is, as JSON-RPC 2.0 and MCP's `JSONRPCMessage` define it.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Kind {
        /// Not a valid message: the error echoes this id (null when it has no usable one).
        Invalid(Value),
        Request {
            id: Value,
            method: String,
            stateless: bool,
        },
        Notification,
        Response,
    }

    /// A string or an integer: MCP forbids null ids, JSON-RPC discourages fractions.
    pub fn usable_id(id: &Value) -> bool {
        id.is_string() || id.is_i64() || id.is_u64()
    }

    pub fn kind(message: &Value) -> Kind {
        let Some(object) = message.as_object() else {
            return Kind::Invalid(Value::Null);
        };
        let id = object.get("id");
        let echoed = id
            .filter(|id| usable_id(id))
            .cloned()
            .unwrap_or(Value::Null);
        if object.get("jsonrpc") != Some(&json!("2.0")) {
            return Kind::Invalid(echoed);
        }
        if id.is_some_and(|id| !usable_id(id)) {
            return Kind::Invalid(Value::Null);
        }
        // MCP's params are named: an object when present.
        if object.get("params").is_some_and(|p| !p.is_object()) {
            return Kind::Invalid(echoed);
        }
        match object.get("method") {
            Some(Value::String(method)) => match id {
                Some(id) => Kind::Request {
                    id: id.clone(),
                    method: method.clone(),
                    stateless: is_stateless(method, object.get("params")),
                },
                None => Kind::Notification,
            },
            Some(_) => Kind::Invalid(echoed),
            None if id.is_some()
                && (object.contains_key("result") || object.contains_key("error")) =>
            {
                Kind::Response
            }
            None => Kind::Invalid(echoed),
        }
    }

    /// A request of the stateless revision: it names its version in `_meta`, or calls a method
    /// only that revision has.
    fn is_stateless(method: &str, params: Option<&Value>) -> bool {
        matches!(method, "server/discover" | "subscriptions/listen")
            || params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(PROTOCOL_VERSION_META))
                .is_some()
    }

    /// The answer one message must get.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Expect {
        Nothing,
        /// Exactly this error.
        Error {
            code: i64,
            id: Value,
        },
        /// A response to `id`: a result, or an error with one of `codes`.
        Answer {
            id: Value,
            codes: &'static [i64],
        },
        /// One array holding the answers of the batch's elements (none when all are nothing).
        Batch(Vec<Expect>),
    }

    /// Codes a known session method may answer besides a result: invalid params, resource not
    /// found, and (for a second `initialize`) invalid request.
    pub const SESSION_CODES: &[i64] = &[INVALID_PARAMS, -32002, INVALID_REQUEST];
    /// Codes a session's `tasks/*` request may get.
    pub const SESSION_TASK_CODES: &[i64] = &[INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND];
    /// The same for the stateless revision: invalid params, header mismatch, missing client
    /// capability, unsupported version.
    pub const STATELESS_CODES: &[i64] = &[INVALID_PARAMS, -32020, -32021, -32022];

    /// What an initialized 2025-03-26 session answers `message` (stdio, and HTTP's session).
    pub fn in_session(message: &Value) -> Expect {
        if let Value::Array(batch) = message {
            if batch.is_empty() {
                return Expect::Error {
                    code: INVALID_REQUEST,
                    id: Value::Null,
                };
            }
            let answers: Vec<Expect> = batch
                .iter()
                .map(single_in_session)
                .filter(|e| *e != Expect::Nothing)
                .collect();
            return if answers.is_empty() {
                Expect::Nothing
            } else {
                Expect::Batch(answers)
            };
        }
        single_in_session(message)
    }

    fn single_in_session(message: &Value) -> Expect {
        match kind(message) {
            Kind::Invalid(id) => Expect::Error {
                code: INVALID_REQUEST,
                id,
            },
            Kind::Notification | Kind::Response => Expect::Nothing,
            Kind::Request {
                id,
                method,
                stateless,
            } => answer(id, &method, stateless, meta_version(message)),
        }
    }

    /// Codes of a stateless request for an unknown method under a version that is not (or not
    /// clearly) 2026-07-28: what is wrong with the version may be said first.
    pub const UNKNOWN_UNDER_OTHER_VERSION: &[i64] =
        &[METHOD_NOT_FOUND, INVALID_PARAMS, -32020, -32021, -32022];

    /// The answer to a request for `method`. A stateless request (`stateless`) names its version
    /// in `_meta`, or over HTTP in the header (`requested`).
    pub fn answer(id: Value, method: &str, stateless: bool, requested: Option<&str>) -> Expect {
        let (methods, codes): (&[&str], _) = if stateless {
            (&STATELESS_METHODS, STATELESS_CODES)
        } else {
            (&SESSION_METHODS, SESSION_CODES)
        };
        if methods.contains(&method) && !stateless && method.starts_with("tasks/") {
            // Tasks exist in 2025-11-25 sessions only: in older ones they are unknown.
            Expect::Answer {
                id,
                codes: SESSION_TASK_CODES,
            }
        } else if methods.contains(&method) {
            Expect::Answer { id, codes }
        } else if !stateless || requested == Some("2026-07-28") {
            Expect::Error {
                code: METHOD_NOT_FOUND,
                id,
            }
        } else {
            Expect::Answer {
                id,
                codes: UNKNOWN_UNDER_OTHER_VERSION,
            }
        }
    }

    /// The version `message` names in `_meta`, when a string.
    pub fn meta_version(message: &Value) -> Option<&str> {
        message
            .get("params")?
            .get("_meta")?
            .get(PROTOCOL_VERSION_META)?
            .as_str()
    }

    /// What a text line or body must get: a parse error when it is not JSON.
    pub fn for_text(text: &[u8], of_value: impl Fn(&Value) -> Expect) -> Expect {
        match serde_json::from_slice::<Value>(text) {
            Ok(value) => of_value(&value),
            Err(_) => Expect::Error {
                code: PARSE_ERROR,
                id: Value::Null,
            },
        }
    }
}

mod generate {
    use super::oracle::{PROTOCOL_VERSION_META, SESSION_METHODS, STATELESS_METHODS};
    use super::*;

    /// SplitMix64: small, seedable, and the same on every machine.
    pub struct Rng(u64);

    impl Rng {
        pub fn new(seed: u64) -> Rng {
            Rng(seed)
        }

        pub fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        pub fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        pub fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }

        pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[self.below(items.len())]
        }
    }

    const UNKNOWN_METHODS: &[&str] = &[
        "",
        "foo",
        "tools/lists",
        "Ping",
        "ping ",
        "notifications/cancelled",
        "rpc.discover",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "tasks/frob",
        "resources",
        "/",
    ];

    const KEYS: &[&str] = &[
        "name",
        "arguments",
        "uri",
        "cursor",
        "ref",
        "argument",
        "level",
        "protocolVersion",
        "capabilities",
        "clientInfo",
        "_meta",
        "progressToken",
        "x",
    ];

    const STRINGS: &[&str] = &[
        "",
        "hello_greet",
        "hello_echo",
        "notes_add_note",
        "prompts_review",
        "note:///welcome.md",
        "file:///etc/passwd",
        "debug",
        "emergency",
        "2025-03-26",
        "2026-07-28",
        "v999",
        "cGFsaXNhZGU6MQ",
        "ünïcödé ✓",
        "{\"a\":1}",
    ];

    /// Unique usable ids, then the unusable kinds.
    pub struct Ids(u64);

    impl Ids {
        pub fn new() -> Ids {
            Ids(0)
        }

        pub fn usable(&mut self, rng: &mut Rng) -> Value {
            self.0 += 1;
            if rng.chance(50) {
                json!(1_000_000 + self.0)
            } else {
                json!(format!("fz-{}", self.0))
            }
        }

        pub fn any(&mut self, rng: &mut Rng) -> Value {
            if rng.chance(85) {
                return self.usable(rng);
            }
            rng.pick(&[
                json!(null),
                json!(1.5),
                json!(true),
                json!({}),
                json!([1]),
                json!(-0.0),
            ])
            .clone()
        }
    }

    pub fn value(rng: &mut Rng, depth: u32) -> Value {
        let leaf = depth == 0 || rng.chance(55);
        if leaf {
            return match rng.below(7) {
                0 => Value::Null,
                1 => json!(rng.chance(50)),
                2 => json!(rng.next() as i64 % 1000),
                3 => json!((rng.next() % 10_000) as f64 / 7.0),
                _ => json!(*rng.pick(STRINGS)),
            };
        }
        if rng.chance(35) {
            return Value::Array((0..rng.below(4)).map(|_| value(rng, depth - 1)).collect());
        }
        object(rng, depth - 1)
    }

    fn object(rng: &mut Rng, depth: u32) -> Value {
        let mut map = serde_json::Map::new();
        for _ in 0..rng.below(4) {
            map.insert((*rng.pick(KEYS)).to_string(), value(rng, depth));
        }
        Value::Object(map)
    }

    /// `params` for `method`: often plausible, sometimes anything.
    fn params(rng: &mut Rng, method: &str, stateless: bool) -> Option<Value> {
        let mut params = match (method, rng.below(4)) {
            (_, 0) => object(rng, 2),
            ("tools/call", _) => json!({
                "name": *rng.pick(STRINGS),
                "arguments": if rng.chance(80) { json!({ "name": *rng.pick(STRINGS), "text": value(rng, 1) }) } else { value(rng, 1) },
            }),
            ("resources/read" | "resources/subscribe" | "resources/unsubscribe", _) => {
                json!({ "uri": *rng.pick(STRINGS) })
            }
            ("prompts/get", _) => {
                json!({ "name": *rng.pick(STRINGS), "arguments": object(rng, 1) })
            }
            ("logging/setLevel", _) => json!({ "level": *rng.pick(STRINGS) }),
            ("initialize", _) => json!({
                "protocolVersion": *rng.pick(STRINGS),
                "capabilities": value(rng, 1),
                "clientInfo": { "name": "fuzz", "version": "1" },
            }),
            (_, 1) => json!({ "cursor": *rng.pick(STRINGS) }),
            _ => json!({}),
        };
        if stateless && rng.chance(90) {
            let version = if rng.chance(85) {
                json!("2026-07-28")
            } else {
                value(rng, 1)
            };
            let capabilities = if rng.chance(85) {
                json!({})
            } else {
                value(rng, 1)
            };
            params["_meta"] = json!({
                PROTOCOL_VERSION_META: version,
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            });
        }
        if rng.chance(5) {
            return None;
        }
        Some(params)
    }

    /// A request, notification or response, mostly well-formed.
    pub fn message(rng: &mut Rng, ids: &mut Ids, stateless_share: u64) -> Value {
        let stateless = rng.chance(stateless_share);
        // Not `subscriptions/listen`: it is answered only when cancelled.
        let methods: Vec<&str> = if stateless {
            STATELESS_METHODS
                .into_iter()
                .filter(|m| *m != "subscriptions/listen")
                .collect()
        } else {
            SESSION_METHODS.to_vec()
        };
        let method = if rng.chance(12) {
            *rng.pick(UNKNOWN_METHODS)
        } else {
            *rng.pick(&methods)
        };
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        match rng.below(10) {
            // A notification (some of them real ones).
            0 => {
                message["method"] = json!(*rng.pick(&[
                    "notifications/initialized",
                    "notifications/roots/list_changed",
                    "notifications/cancelled",
                    "notifications/progress",
                    method,
                ]));
            }
            // A response to a request the server never made.
            1 => {
                message = json!({ "jsonrpc": "2.0", "id": ids.any(rng) });
                let key = if rng.chance(50) { "result" } else { "error" };
                message[key] = value(rng, 2);
            }
            _ => message["id"] = ids.any(rng),
        }
        if message.get("method").is_some()
            && let Some(params) = params(rng, method, stateless)
        {
            message["params"] = params;
        }
        // Break one member now and then.
        if rng.chance(20) {
            let key = *rng.pick(&["jsonrpc", "method", "params", "id", "result"]);
            match rng.below(3) {
                0 => {
                    message.as_object_mut().unwrap().remove(key);
                }
                1 => message[key] = value(rng, 1),
                _ => message[key] = json!([value(rng, 1)]),
            }
        }
        message
    }

    /// The text of one message to send: a generated message, a batch, a value that is no
    /// message, or a message's text mutated at the byte level. Never contains a newline.
    pub fn text(rng: &mut Rng, ids: &mut Ids, batches: bool, stateless_share: u64) -> Vec<u8> {
        let value = match rng.below(20) {
            0 => value(rng, 3),
            1 | 2 if batches => Value::Array(
                (0..rng.below(6))
                    .map(|_| {
                        if rng.chance(85) {
                            message(rng, ids, stateless_share)
                        } else {
                            value(rng, 1)
                        }
                    })
                    .collect(),
            ),
            _ => message(rng, ids, stateless_share),
        };
        let mut bytes = serde_json::to_vec(&value).unwrap();
        if rng.chance(12) {
            mutate(rng, &mut bytes);
        }
        bytes
    }

    fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
        const NOISE: &[u8] = b"{}[]\",:0123456789-+.eE \\tnulrfas\x7f";
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len() + 1);
            match rng.below(4) {
                0 => bytes.truncate(at),
                1 if at < bytes.len() => {
                    bytes.remove(at);
                }
                2 => bytes.insert(at, *rng.pick(NOISE)),
                _ if at < bytes.len() => bytes[at] = *rng.pick(NOISE),
                _ => bytes.push(b'}'),
            }
        }
    }
}

use generate::{Ids, Rng};
use oracle::Expect;

fn fuzz_messages() -> usize {
    std::env::var("PALISADE_FUZZ_MESSAGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1500)
}

fn fuzz_seed(phase: u64) -> u64 {
    let seed = std::env::var("PALISADE_FUZZ_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0x5EED_2026);
    seed ^ phase.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// hello, notes (the example notes, read-only) and prompts: fast plugins with tools,
/// resources, prompts and completions.
fn fuzz_config(dir: &std::path::Path) -> std::path::PathBuf {
    let prompts = toml_str(&plugin_arg("prompts"));
    config_file(
        dir,
        &format!(
            "{}
[plugins.prompts]
path = {prompts}
",
            hello_and_notes_sections()
        ),
    )
}

/// Checks `got` (every response that came for one sent message) against `expect`.
fn check(expect: &Expect, got: &[Value], sent: &str) -> Result<(), String> {
    let fail = |why: String| Err(format!("{why}\nsent: {sent}\ngot: {got:?}"));
    match expect {
        Expect::Nothing if got.is_empty() => Ok(()),
        Expect::Nothing => fail("expected no answer".into()),
        Expect::Batch(answers) => {
            let [Value::Array(responses)] = got else {
                return fail(format!("expected one array of {} responses", answers.len()));
            };
            if responses.len() != answers.len() {
                return fail(format!("expected {} responses in the array", answers.len()));
            }
            // Order within a batch's answer is free: match each expectation once.
            let mut left: Vec<&Value> = responses.iter().collect();
            for answer in answers {
                let Some(at) = left.iter().position(|r| check_one(answer, r).is_ok()) else {
                    return fail(format!("nothing in the array answers as {answer:?}"));
                };
                left.remove(at);
            }
            Ok(())
        }
        single => match got {
            [one] => check_one(single, one).or_else(&fail),
            _ => fail(format!("expected exactly one answer, {single:?}")),
        },
    }
}

fn check_one(expect: &Expect, response: &Value) -> Result<(), String> {
    if response["jsonrpc"] != "2.0" {
        return Err(format!("not JSON-RPC 2.0: {response}"));
    }
    let code = response["error"]["code"].as_i64();
    match expect {
        Expect::Error { code: want, id } => {
            if code != Some(*want)
                || response["id"] != *id
                || !response["error"]["message"].is_string()
            {
                return Err(format!("expected error {want} for id {id}: {response}"));
            }
        }
        Expect::Answer { id, codes } => {
            if response["id"] != *id {
                return Err(format!("expected the answer to id {id}: {response}"));
            }
            match code {
                None if response.get("result").is_some_and(Value::is_object) => {}
                Some(code) if codes.contains(&code) => {}
                _ => return Err(format!("expected a result or one of {codes:?}: {response}")),
            }
        }
        other => return Err(format!("{other:?} is not one response")),
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------

/// Every response the server sends for the last message, up to the answer of the `ping` sent
/// after it (a fence: answers known at once come before it) and until every request it
/// carried is answered. Notifications are left aside.
fn collect_stdio(server: &mut Server, fence: &Value, expect: &Expect) -> Vec<Value> {
    let mut waiting: Vec<Value> = match expect {
        Expect::Answer { id, .. } => vec![id.clone()],
        _ => Vec::new(),
    };
    let mut batch_pending = matches!(expect, Expect::Batch(_));
    let mut fenced = false;
    let mut got = Vec::new();
    let deadline = Instant::now() + default_timeout();
    while !fenced || !waiting.is_empty() || batch_pending {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(message) = server.recv_timeout(left) else {
            server.fail(format!(
                "no complete answer within {:?} (fence answered: {fenced}, waiting for {waiting:?}, batch: {batch_pending}); got {got:?}",
                default_timeout()
            ));
        };
        if message.get("method").is_some() {
            continue;
        }
        if message.get("id") == Some(fence) {
            fenced = true;
            continue;
        }
        if message.is_array() {
            batch_pending = false;
        }
        if let Some(at) = waiting.iter().position(|id| message.get("id") == Some(id)) {
            waiting.remove(at);
        }
        got.push(message);
    }
    got
}

#[test]
fn stdio_answers_every_message_as_json_rpc_says() {
    let dir = tempdir();
    let config = fuzz_config(dir.path());
    let mut server = Server::start(&["--config", &path_str(&config)]);
    server.initialize("2025-03-26");
    let mut rng = Rng::new(fuzz_seed(1));
    let mut ids = Ids::new();
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    for n in 0..fuzz_messages() {
        let bytes = generate::text(&mut rng, &mut ids, true, 15);
        // The server ignores blank lines, as stdio framing allows.
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let expect = oracle::for_text(&bytes, oracle::in_session);
        server.send_bytes(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let fence = json!(format!("fence-{n}"));
        server.send_raw(&json!({ "jsonrpc": "2.0", "id": fence, "method": "ping" }).to_string());
        let got = collect_stdio(&mut server, &fence, &expect);
        if let Err(why) = check(&expect, &got, &text) {
            server.fail(format!("message {n}: {why}"));
        }
        *counts.entry(label(&expect)).or_default() += 1;
    }
    eprintln!("stdio: {counts:?}");
    // Every kind of answer was exercised.
    for kind in [
        "nothing",
        "parse error",
        "invalid request",
        "method not found",
        "answer",
        "batch",
    ] {
        assert!(
            counts.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} among {counts:?}"
        );
    }
    server.result("ping", json!({}));
}

fn label(expect: &Expect) -> &'static str {
    match expect {
        Expect::Nothing => "nothing",
        Expect::Error {
            code: PARSE_ERROR, ..
        } => "parse error",
        Expect::Error {
            code: INVALID_REQUEST,
            ..
        } => "invalid request",
        Expect::Error {
            code: METHOD_NOT_FOUND,
            ..
        } => "method not found",
        Expect::Error { .. } => "other error",
        Expect::Answer { .. } => "answer",
        Expect::Batch(_) => "batch",
    }
}

#[test]
fn an_oversized_stdio_line_is_answered_and_skipped() {
    let dir = tempdir();
    let config = fuzz_config(dir.path());
    let mut server = Server::start(&["--config", &path_str(&config)]);
    server.initialize("2025-11-25");
    // 17 MiB: over the 16 MiB cap, as a request that would otherwise be valid.
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{{"name":"hello_echo","arguments":{{"text":"{}"}}}}}}"#,
        "x".repeat(17 << 20)
    );
    server.send_raw(&line);
    let error = server
        .recv_timeout(default_timeout())
        .expect("an answer to the long line");
    assert_eq!(error_code(&error), Some(PARSE_ERROR), "{error}");
    assert_eq!(error["id"], Value::Null);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 MiB"),
        "{error}"
    );
    // The next line is read as usual.
    server.result("ping", json!({}));
    let greeting = server.call_tool("hello_greet", json!({ "name": "after" }));
    assert!(tool_text(&greeting).contains("after"), "{greeting}");
}

#[test]
fn stdin_closing_answers_what_finishes_soon_and_cancels_the_rest() {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.misbehave]\npath = {}\n\n[plugins.misbehave.limits]\ntimeout_ms = 60000\n",
            toml_str(&plugin_arg("misbehave"))
        ),
    );
    let mut server = Server::start(&["--config", &path_str(&config)]);
    server.initialize("2025-11-25");
    // Loaded, so the quick call runs well inside the 2 s grace.
    server.wait_ready();
    let quick = server.send_request(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 300 } }),
    );
    let slow = server.send_request(
        "tools/call",
        json!({ "name": "misbehave_sleep", "arguments": { "ms": 50000 } }),
    );
    let closed = Instant::now();
    // The grace (2 s) and the cancellation's own (well under a second), with room for a slow
    // machine; the slow call alone would take 50 s.
    server.close_stdin_and_wait(secs(15));
    let took = closed.elapsed();
    assert!(took < Duration::from_secs(15), "{took:?}");
    let answered = server.wait_response(&quick, secs(1));
    assert!(tool_text(&server.expect_result(answered)).contains("slept 300 ms"));
    server.expect_no_response(&slow, Duration::from_millis(100));
    assert!(
        server.wait_for_stderr("cancelling the requests still in flight", secs(5)),
        "{}",
        server.stderr()
    );
}

// ---------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------

/// The status and JSON-RPC messages of one POST's answer, each valid under the schema of
/// `version` (an SSE stream's last event is the response; notifications before it are left
/// aside).
fn http_answer(reply: HttpReply, version: &str) -> (u16, Vec<Value>) {
    let status = reply.status;
    if reply.is_sse() {
        let mut stream = reply.sse();
        let mut responses = Vec::new();
        while let Some(event) = stream.next_event() {
            if event.is_response() {
                responses.push(event.message);
            }
        }
        return (status, responses);
    }
    let text = reply.text();
    if text.is_empty() {
        return (status, Vec::new());
    }
    let message: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("HTTP {status}: the body is not JSON ({e}): {text}"));
    if let Err(e) = validate_http_message(version, &message) {
        panic!("HTTP {status}: the body fails the MCP schema ({e}): {text}");
    }
    (status, vec![message])
}

/// The statuses a POST to a session may get, by what it must be answered (`value`: the body
/// as JSON, if it is). Streamable HTTP: a POST without requests gets 202, or 400 when it is
/// refused; one with requests gets 200. A stateless request sent beside a session is that
/// revision's: 400 for wrong headers or `_meta`, 404 for an unknown method.
fn session_statuses(expect: &Expect, value: Option<&Value>) -> &'static [u16] {
    let Some(value) = value else {
        return &[400];
    };
    let invalid = |e: &Expect| {
        matches!(
            e,
            Expect::Error {
                code: INVALID_REQUEST,
                ..
            }
        )
    };
    let stateless = matches!(
        oracle::kind(value),
        oracle::Kind::Request {
            stateless: true,
            ..
        }
    );
    match expect {
        Expect::Nothing => &[202],
        // One message that is none, or an empty batch.
        e if invalid(e) => &[400],
        Expect::Batch(answers) if answers.iter().all(invalid) => &[400],
        Expect::Error {
            code: METHOD_NOT_FOUND,
            ..
        } if stateless => &[404],
        Expect::Answer { .. } if stateless => &[200, 400, 404],
        _ => &[200],
    }
}

#[test]
fn http_session_answers_every_post_as_json_rpc_says() {
    let dir = tempdir();
    let config = fuzz_config(dir.path());
    let http = HttpServer::start(&["--config", &path_str(&config)]);
    let mut client = http.client();
    client.initialize("2025-03-26");
    let mut rng = Rng::new(fuzz_seed(2));
    let mut ids = Ids::new();
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    for n in 0..fuzz_messages() {
        let mut bytes = generate::text(&mut rng, &mut ids, true, 10);
        if rng.chance(2) {
            // Not UTF-8 at all.
            bytes.insert(bytes.len() / 2, 0xFF);
        }
        let value: Option<Value> = serde_json::from_slice(&bytes).ok();
        // A new session per `initialize` would soon reach the cap: those go elsewhere.
        if value.as_ref().and_then(|v| v.get("method")) == Some(&json!("initialize")) {
            continue;
        }
        let expect = oracle::for_text(&bytes, oracle::in_session);
        let (status, got) = http_answer(client.post_raw(&bytes, &[]), "2025-03-26");
        let sent = String::from_utf8_lossy(&bytes);
        if let Err(why) = check(&expect, &got, &sent) {
            http.fail(format!("POST {n} (HTTP {status}): {why}"));
        }
        let allowed = session_statuses(&expect, value.as_ref());
        let stateless = value.as_ref().is_some_and(|v| {
            matches!(
                oracle::kind(v),
                oracle::Kind::Request {
                    stateless: true,
                    ..
                }
            )
        });
        if !allowed.contains(&status) || (stateless && !stateless_status_fits(status, &got)) {
            http.fail(format!(
                "POST {n}: HTTP {status}, expected one of {allowed:?}\nsent: {sent}\ngot: {got:?}"
            ));
        }
        *counts.entry(label(&expect)).or_default() += 1;
    }
    eprintln!("HTTP session: {counts:?}");
    assert!(counts.get("batch").copied().unwrap_or(0) > 0, "{counts:?}");
    client.result("ping", json!({}));
}

#[test]
fn http_stateless_answers_every_post_as_json_rpc_says() {
    let dir = tempdir();
    let config = fuzz_config(dir.path());
    let http = HttpServer::start(&["--config", &path_str(&config)]);
    let client = http.client();
    let mut rng = Rng::new(fuzz_seed(3));
    let mut ids = Ids::new();
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    for n in 0..fuzz_messages() {
        let bytes = generate::text(&mut rng, &mut ids, false, 100);
        let value: Option<Value> = serde_json::from_slice(&bytes).ok();
        // The headers a stateless request carries, mirrored from the body, now and then wrong.
        let mut headers: Vec<(String, String)> = match &value {
            Some(message) if message.is_object() => stateless_headers(message),
            _ => Vec::new(),
        };
        // A value no HTTP header can carry would not leave the client.
        headers.retain(|(name, value)| {
            !name.eq_ignore_ascii_case("mcp-protocol-version")
                && value
                    .bytes()
                    .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f))
        });
        headers.push(("MCP-Protocol-Version".into(), "2026-07-28".into()));
        if rng.chance(10)
            && let Some(header) = headers.first_mut()
        {
            header.1 = "wrong".into();
        }
        let header_version = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("mcp-protocol-version"))
            .map(|(_, v)| v.clone());
        let borrowed = as_pairs(&headers);
        let expect = oracle::for_text(&bytes, |value| match value {
            Value::Array(_) => Expect::Error {
                code: INVALID_REQUEST,
                id: Value::Null,
            },
            value => match oracle::kind(value) {
                oracle::Kind::Invalid(id) => Expect::Error {
                    code: INVALID_REQUEST,
                    id,
                },
                oracle::Kind::Notification => Expect::Nothing,
                // A client sends no responses in this revision.
                oracle::Kind::Response => Expect::Error {
                    code: INVALID_REQUEST,
                    id: Value::Null,
                },
                oracle::Kind::Request { id, method, .. } => {
                    let requested = oracle::meta_version(value).or(header_version.as_deref());
                    oracle::answer(id, &method, true, requested)
                }
            },
        });
        let (status, got) = http_answer(client.post_raw(&bytes, &borrowed), "2026-07-28");
        let sent = String::from_utf8_lossy(&bytes);
        if let Err(why) = check(&expect, &got, &sent) {
            http.fail(format!("POST {n} (HTTP {status}): {why}"));
        }
        let allowed: &[u16] = match &expect {
            Expect::Nothing => &[202],
            Expect::Error {
                code: METHOD_NOT_FOUND,
                ..
            } => &[404],
            Expect::Error { .. } => &[400],
            _ => &[200, 400, 404],
        };
        if !allowed.contains(&status) || !stateless_status_fits(status, &got) {
            http.fail(format!(
                "POST {n}: HTTP {status}, expected one of {allowed:?}\nsent: {sent}\ngot: {got:?}"
            ));
        }
        *counts.entry(label(&expect)).or_default() += 1;
    }
    eprintln!("HTTP stateless: {counts:?}");
    let discover = stateless_message(json!("after"), "server/discover", json!({}), &json!({}));
    let (status, got) = http_answer(post_stateless(&client, &discover), "2026-07-28");
    assert_eq!(status, 200, "{got:?}");
    assert!(got[0]["result"].is_object(), "{got:?}");
}

/// Header pairs as the client takes them.
fn as_pairs(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

/// POSTs a stateless request with the headers its body calls for.
fn post_stateless(client: &HttpClient, message: &Value) -> HttpReply {
    let headers = stateless_headers(message);
    client.post_with(message, &as_pairs(&headers))
}

/// The stateless revision's statuses follow the error: 404 for an unknown method, 400 for a
/// header mismatch, a missing capability or an unsupported version.
fn stateless_status_fits(status: u16, got: &[Value]) -> bool {
    match got.first().and_then(|r| r["error"]["code"].as_i64()) {
        Some(METHOD_NOT_FOUND) => status == 404,
        Some(-32022..=-32020) => status == 400,
        _ => true,
    }
}

// ---------------------------------------------------------------------------
// Clients that go away
// ---------------------------------------------------------------------------

fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status");
    kib >> 10
}

/// Opens a call that floods progress reports, reads its stream's first event, and drops the
/// connection mid-call: in a session (`session` given) or statelessly.
fn drop_mid_call(url: &str, session: Option<&str>, n: usize) {
    let mut client = HttpClient::new(url);
    let arguments = json!({ "steps": 50_000 });
    let reply = match session {
        Some(id) => {
            client.session_id = Some(id.to_string());
            client.version = "2025-11-25".into();
            let call = json!({ "jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                "name": "misbehave_progress", "arguments": arguments,
                "_meta": { "progressToken": n } } });
            client.post(&call)
        }
        None => {
            let call = stateless_message(
                json!(n),
                "tools/call",
                json!({ "name": "misbehave_progress", "arguments": arguments,
                        "_meta": { "progressToken": n } }),
                &json!({}),
            );
            post_stateless(&client, &call)
        }
    };
    if reply.is_sse() {
        let mut stream = reply.sse();
        stream.next_event();
        // Dropped here, mid-stream.
    }
}

#[test]
fn dropped_streams_leave_no_memory_behind() {
    #[cfg(not(target_os = "linux"))]
    return;
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[server.http]\nmax_sessions = 2000\nmax_sessions_per_client = 2000\n\n\
             [plugins.misbehave]\npath = {}\n\n[plugins.misbehave.limits]\nconcurrent_calls = 64\n",
            toml_str(&plugin_arg("misbehave"))
        ),
    );
    let http = HttpServer::start(&["--config", &path_str(&config)]);
    let pid = http.process.pid();
    // Warm: the plugin instantiated and the connections' buffers once grown, as after any use.
    let clients = 200;
    let sessions: Vec<String> = (0..clients)
        .map(|_| {
            let mut client = http.client();
            client.initialize("2025-11-25");
            client.session_id.clone().unwrap()
        })
        .collect();
    for (n, session) in sessions.iter().take(4).enumerate() {
        drop_mid_call(&http.url, Some(session), n);
    }
    thread::sleep(secs(12));
    let baseline = rss_mib(pid);
    // Eight at a time: a session's call, then a stateless one, per client.
    let mut peak = baseline;
    for chunk in (0..clients).collect::<Vec<_>>().chunks(8) {
        let handles: Vec<_> = chunk
            .iter()
            .map(|&n| {
                let (url, session) = (http.url.clone(), sessions[n].clone());
                thread::spawn(move || {
                    drop_mid_call(&url, Some(&session), 10_000 + n);
                    drop_mid_call(&url, None, 20_000 + n);
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        peak = peak.max(rss_mib(pid));
    }
    // Given back within the resume window (10 s) and a few looks of the trimmer (2 s each).
    let deadline = Instant::now() + secs(40);
    let margin = 40;
    let mut now = rss_mib(pid);
    while now > baseline + margin && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(500));
        now = rss_mib(pid);
    }
    eprintln!("RSS: baseline {baseline} MiB, peak {peak} MiB, after {now} MiB");
    if now > baseline + margin {
        http.fail(format!(
            "RSS stayed at {now} MiB after {} dropped streams (baseline {baseline} MiB, peak {peak} MiB)",
            2 * clients
        ));
    }
    // Still serving: the sessions are there, their dropped calls gone.
    let mut client = http.client();
    client.session_id = Some(sessions[0].clone());
    client.version = "2025-11-25".into();
    client.result("ping", json!({}));
}

// ---------------------------------------------------------------------------
// Slow paths
// ---------------------------------------------------------------------------

/// A stateless `resources/list` has no client roots to wait for (its roots are the server's),
/// and one with a bad cursor is refused before any plugin is asked. Before, each waited 5 s for
/// a `roots/list` answer that cannot come without a session.
#[test]
fn stateless_resource_listing_waits_for_nothing() {
    let dir = tempdir();
    let config = fuzz_config(dir.path());
    let http = HttpServer::start(&["--config", &path_str(&config)]);
    // Lists wait only 2 s for plugins still loading: load first.
    http.process.wait_ready();
    let client = http.client();
    let post = |params: Value| {
        let message = stateless_message(json!("list"), "resources/list", params, &json!({}));
        http_answer(post_stateless(&client, &message), "2026-07-28")
    };
    let (status, got) = post(json!({}));
    assert_eq!(status, 200, "{got:?}");
    let listed = got[0]["result"]["resources"].as_array().expect("resources");
    assert!(!listed.is_empty(), "{got:?}");
    let (status, got) = post(json!({ "cursor": "not-ours", "x": [1, 2, 3] }));
    assert_eq!(status, 200, "{got:?}");
    assert_eq!(got[0]["error"]["code"], INVALID_PARAMS, "{got:?}");
    assert!(
        !http.stderr().contains("has not answered roots/list"),
        "a stateless request waited for roots: {}",
        http.stderr()
    );
}
