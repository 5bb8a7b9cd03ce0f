//! Streamable HTTP: a server on a free loopback port, and a blocking client that reads SSE.

use serde_json::{Value, json};
use std::time::{Duration, Instant};

use std::io::{BufRead, BufReader, Read, Write};

use crate::*;

// -- HTTP --
//
// For the Streamable HTTP transport (`palisade serve --http`): a server on a free loopback port,
// and a small blocking client (ureq) that reads SSE responses event by event. Every JSON-RPC
// message the client receives is validated against the MCP schema of the session's protocol
// version (an HTTP error's JSON-RPC body with `id: null` is checked member by member, as on
// stdio).

/// A running `palisade serve --http 127.0.0.1:0 ...` and the address it printed.
pub struct HttpServer {
    /// The process (its stderr, diagnostics on failure, killed when dropped).
    pub process: Server,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    /// `127.0.0.1:PORT`
    pub addr: String,
}

/// The line the server prints on stderr once it listens.
pub(crate) const LISTENING: &str = "palisade: listening on http://";

impl HttpServer {
    /// `palisade serve <args> --http 127.0.0.1:0` (the shared `--cache-dir` unless `args` has one).
    pub fn start(args: &[&str]) -> HttpServer {
        HttpServer::start_with(Server::builder().args(args))
    }

    /// Starts `builder` with `--http 127.0.0.1:0` added, and waits for the address it listens on.
    pub fn start_with(builder: ServerBuilder) -> HttpServer {
        let process = builder.args(["--http", "127.0.0.1:0"]).start();
        if !process.wait_for_stderr(LISTENING, startup_timeout()) {
            process.fail(format!(
                "the server did not print {LISTENING:?} within {:?}",
                startup_timeout()
            ));
        }
        let stderr = process.stderr();
        let rest = &stderr[stderr.find(LISTENING).unwrap() + LISTENING.len()..];
        let url_rest: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        let Some(addr) = url_rest.strip_suffix("/mcp") else {
            process.fail(format!("cannot read the address in {LISTENING}{url_rest}"));
        };
        HttpServer {
            url: format!("http://{url_rest}"),
            addr: addr.to_string(),
            process,
        }
    }

    /// A client of this server, with no session yet.
    pub fn client(&self) -> HttpClient {
        HttpClient::new(&self.url)
    }

    /// A client sending `Authorization: Bearer <token>` with every request.
    pub fn client_with_token(&self, token: &str) -> HttpClient {
        let mut client = self.client();
        client
            .headers
            .push(("Authorization".into(), format!("Bearer {token}")));
        client
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.process.stderr()
    }

    /// Waits (bounded) until stderr contains `needle`; returns whether it did.
    pub fn wait_for_stderr(&self, needle: &str, timeout: Duration) -> bool {
        self.process.wait_for_stderr(needle, timeout)
    }

    /// Fails the test with `msg` and the server's stderr.
    #[track_caller]
    pub fn fail(&self, msg: impl std::fmt::Display) -> ! {
        self.process.fail(msg)
    }
}

/// A plain HTTP client for services besides MCP (an OpenID provider, Prometheus, health
/// checks): statuses are answers, not errors, and every request ends within 30 s.
pub fn plain_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(secs(30)))
        .build()
        .into()
}

/// GETs `url` with [`plain_agent`], with `query` pairs (encoded here): the status and the body.
pub fn http_get(url: &str, query: &[(&str, &str)]) -> (u16, String) {
    let mut response = plain_agent()
        .get(url)
        .query_pairs(query.iter().copied())
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    (
        status,
        response.body_mut().read_to_string().unwrap_or_default(),
    )
}

/// Validates one JSON-RPC message (or 2025-03-26 batch) received over HTTP against the schema of
/// `version`: any message must be a `JSONRPCMessage`, requests the server sends `ServerRequest`s,
/// its notifications `ServerNotification`s, responses the version's result or error response.
pub fn validate_http_message(version: &str, msg: &Value) -> Result<(), String> {
    if let Some(batch) = msg.as_array() {
        if version != "2025-03-26" {
            return Err(format!("a batch under protocol {version}"));
        }
        validate_batch_response(version, msg)?;
        return batch
            .iter()
            .try_for_each(|m| validate_http_message(version, m));
    }
    let Some(obj) = msg.as_object() else {
        return Err("neither a JSON object nor a batch".into());
    };
    if obj.contains_key("error") && obj.get("id") == Some(&Value::Null) {
        return validate_null_id_error(version, msg);
    }
    validate_against(version, "JSONRPCMessage", msg)?;
    let (result_def, error_def) = response_definitions(version);
    // The stateless revision has no requests from the server (they travel in results), typed
    // errors for its own codes, and a `resultType` on every result.
    let stateless = !schema_has_definition(version, "ServerRequest");
    match (obj.contains_key("method"), obj.contains_key("id")) {
        (true, true) if stateless => Err(format!(
            "a request from the server, which protocol {version} has none of (input requests \
             travel in input_required results)"
        )),
        (true, true) => validate_against(version, "ServerRequest", msg),
        (true, false) => validate_against(version, "ServerNotification", msg),
        _ if obj.contains_key("error") => {
            validate_against(version, error_def, msg)?;
            match stateless_error_definition(msg) {
                Some(def) if stateless => validate_against(version, def, msg),
                _ => Ok(()),
            }
        }
        _ => {
            validate_against(version, result_def, msg)?;
            if stateless {
                check_result_type(&msg["result"])
            } else {
                Ok(())
            }
        }
    }
}

#[track_caller]
pub(crate) fn check_http_message(version: &str, msg: &Value, context: &str) {
    if let Err(e) = validate_http_message(version, msg) {
        panic!("{context}: the message fails the MCP schema: {e}\nmessage: {msg}");
    }
}

/// A blocking MCP client over HTTP: one session at most, named by `session_id`.
pub struct HttpClient {
    /// The endpoint, `http://ADDR/mcp`.
    pub url: String,
    pub(crate) agent: ureq::Agent,
    /// The `Mcp-Session-Id` sent with every request (set by [`initialize`](Self::initialize)).
    pub session_id: Option<String>,
    /// The protocol version whose schema validates what the server sends.
    pub version: String,
    /// Headers sent with every request (such as `Origin`); the headers of a call override them.
    pub headers: Vec<(String, String)>,
    pub(crate) next_id: i64,
}

/// Reads (SSE waits) end after this long without data even if the server keeps the connection
/// alive; a single socket read gives up after it too.
pub(crate) fn http_read_timeout() -> Duration {
    secs(60)
}

impl HttpClient {
    pub fn new(url: &str) -> HttpClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(secs(10)))
            .timeout_per_read(Some(http_read_timeout()))
            .timeout_per_write(Some(secs(60)))
            .max_redirects(0)
            .build()
            .into();
        HttpClient {
            url: url.to_string(),
            agent,
            session_id: None,
            version: LATEST_VERSION.to_string(),
            headers: Vec::new(),
            next_id: 1,
        }
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        id
    }

    /// The headers of a request: `defaults`, then [`headers`](Self::headers), then `given`; a
    /// later header replaces an earlier one of the same name, and an empty value leaves the header
    /// out.
    pub(crate) fn header_list(
        &self,
        defaults: &[(&str, &str)],
        given: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let mut list: Vec<(String, String)> = Vec::new();
        let mut put = |name: &str, value: &str| {
            list.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            list.push((name.to_string(), value.to_string()));
        };
        if let Some(id) = &self.session_id {
            put("Mcp-Session-Id", id);
        }
        for (n, v) in defaults {
            put(n, v);
        }
        for (n, v) in &self.headers {
            put(n, v);
        }
        for (n, v) in given {
            put(n, v);
        }
        list.retain(|(_, v)| !v.is_empty());
        list
    }

    pub(crate) fn reply(
        &self,
        what: &str,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> HttpReply {
        match result {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                HttpReply {
                    status: parts.status.as_u16(),
                    headers: parts.headers,
                    body,
                    version: self.version.clone(),
                }
            }
            Err(e) => panic!("{what} {}: {e}", self.url),
        }
    }

    /// POSTs `body` as is. Defaults: `Content-Type: application/json`,
    /// `Accept: application/json, text/event-stream`, the session id; `headers` override them.
    pub fn post_raw(&self, body: impl AsRef<[u8]>, headers: &[(&str, &str)]) -> HttpReply {
        let mut request = self.agent.post(&self.url);
        for (n, v) in self.header_list(
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            headers,
        ) {
            request = request.header(n, v);
        }
        self.reply("POST", request.send(body.as_ref()))
    }

    /// POSTs `message` but gives up, closing the connection, when no response headers arrive
    /// within `after` (a client that goes away mid-call). Returns the status if headers came.
    pub fn post_and_give_up(&self, message: &Value, after: Duration) -> Option<u16> {
        self.post_with_and_give_up(message, &[], after)
    }

    /// [`post_and_give_up`](Self::post_and_give_up) with extra headers (they override the
    /// defaults; an empty value leaves a header out).
    pub fn post_with_and_give_up(
        &self,
        message: &Value,
        headers: &[(&str, &str)],
        after: Duration,
    ) -> Option<u16> {
        let mut request = self.agent.post(&self.url);
        for (n, v) in self.header_list(
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            headers,
        ) {
            request = request.header(n, v);
        }
        let request = request.config().timeout_recv_response(Some(after)).build();
        match request.send(message.to_string()) {
            Ok(response) => Some(response.status().as_u16()),
            Err(ureq::Error::Timeout(_)) => None,
            Err(e) => panic!("POST {}: {e}", self.url),
        }
    }

    /// POSTs one JSON-RPC message (or batch).
    pub fn post(&self, message: &Value) -> HttpReply {
        self.post_raw(message.to_string(), &[])
    }

    /// POSTs a message with extra headers.
    pub fn post_with(&self, message: &Value, headers: &[(&str, &str)]) -> HttpReply {
        self.post_raw(message.to_string(), headers)
    }

    /// GET `/mcp` (`Accept: text/event-stream` unless `headers` say otherwise).
    pub fn get(&self, headers: &[(&str, &str)]) -> HttpReply {
        let mut request = self.agent.get(&self.url);
        for (n, v) in self.header_list(&[("Accept", "text/event-stream")], headers) {
            request = request.header(n, v);
        }
        self.reply("GET", request.call())
    }

    /// Opens the standalone stream (GET); fails unless it is `200 text/event-stream`.
    #[track_caller]
    pub fn open_stream(&self) -> SseStream {
        let reply = self.get(&[]);
        reply.expect_sse("GET (standalone stream)")
    }

    /// Reopens a stream after `last_event_id` (GET with `Last-Event-ID`).
    #[track_caller]
    pub fn resume(&self, last_event_id: &str) -> SseStream {
        let reply = self.get(&[("Last-Event-ID", last_event_id)]);
        reply.expect_sse(&format!("GET with Last-Event-ID {last_event_id}"))
    }

    /// DELETE `/mcp`.
    pub fn delete(&self, headers: &[(&str, &str)]) -> HttpReply {
        let mut request = self.agent.delete(&self.url);
        for (n, v) in self.header_list(&[], headers) {
            request = request.header(n, v);
        }
        self.reply("DELETE", request.call())
    }

    /// A JSON-RPC request message with a fresh id. `params` `Value::Null` means no params.
    pub fn request_message(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id();
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        msg
    }

    /// `initialize` declaring `capabilities`: expects `200 application/json` with an
    /// `Mcp-Session-Id`, keeps the id and the negotiated version, then sends
    /// `notifications/initialized` (expects 202). Returns the `InitializeResult`.
    #[track_caller]
    pub fn initialize_with_capabilities(&mut self, version: &str, capabilities: Value) -> Value {
        let init = self.request_message(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "palisade-tests", "version": env!("CARGO_PKG_VERSION")}
            }),
        );
        self.version = if SUPPORTED_VERSIONS.contains(&version) {
            version.to_string()
        } else {
            LATEST_VERSION.to_string()
        };
        let reply = self.post(&init);
        assert_eq!(reply.status, 200, "initialize: {reply:?}");
        assert_eq!(
            reply.content_type(),
            "application/json",
            "initialize: {reply:?}"
        );
        let session = reply.header("mcp-session-id");
        let response = reply.json();
        let result = response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("initialize failed: {response}"));
        check_definition(&self.version, "InitializeResult", &result);
        let negotiated = result["protocolVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if SUPPORTED_VERSIONS.contains(&negotiated.as_str()) {
            self.version = negotiated;
        }
        self.session_id =
            Some(session.unwrap_or_else(|| panic!("initialize gave no Mcp-Session-Id header")));
        let reply = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(reply.status, 202, "notifications/initialized: {reply:?}");
        result
    }

    /// `initialize` with no client capabilities (see [`initialize_with_capabilities`](Self::initialize_with_capabilities)).
    #[track_caller]
    pub fn initialize(&mut self, version: &str) -> Value {
        self.initialize_with_capabilities(version, json!({}))
    }

    /// Sends a request and reads its answer, whether plain JSON or an SSE stream (read to its
    /// end). Fails on an HTTP status other than 200.
    #[track_caller]
    pub fn exchange(&mut self, method: &str, params: Value) -> Exchange {
        let message = self.request_message(method, params);
        self.exchange_message(&message)
    }

    /// [`exchange`](Self::exchange) for a message of the caller's (such as one with `_meta`).
    #[track_caller]
    pub fn exchange_message(&mut self, message: &Value) -> Exchange {
        let reply = self.post(message);
        assert_eq!(reply.status, 200, "POST {message}: {reply:?}");
        if reply.is_sse() {
            let mut stream = reply.sse();
            let events = stream.read_to_end();
            let mut before: Vec<Value> = events.iter().map(|e| e.message.clone()).collect();
            let response = before
                .pop()
                .unwrap_or_else(|| panic!("POST {message}: an SSE stream without any event"));
            Exchange {
                response,
                before,
                events,
                sse: true,
            }
        } else {
            assert_eq!(
                reply.content_type(),
                "application/json",
                "POST {message}: {reply:?}"
            );
            Exchange {
                response: reply.json(),
                before: Vec::new(),
                events: Vec::new(),
                sse: false,
            }
        }
    }

    /// Sends a request and returns its `result` (fails on an error response).
    #[track_caller]
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let exchange = self.exchange(method, params);
        match exchange.response.get("result") {
            Some(r) => r.clone(),
            None => panic!("{method}: expected a result, got {}", exchange.response),
        }
    }

    /// `tools/call`; returns the `CallToolResult`, validated.
    #[track_caller]
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.result("tools/call", json!({"name": name, "arguments": arguments}));
        check_definition(&self.version, "CallToolResult", &result);
        result
    }
}

/// Sends one HTTP/1.1 request over a plain TCP connection to `addr` (`head` is the request line
/// and headers, without the blank line that ends them; `Content-Length` and `Connection: close`
/// are added) and returns the status and the response as text. Write errors are ignored: a server
/// may answer before reading the whole body and close the connection (as for 413), and the answer
/// is still read. For what a client library will not do, such as keep sending after that.
pub fn raw_http(addr: &str, head: &str, body: &[u8]) -> (u16, String) {
    use std::net::TcpStream;
    let mut tcp = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    tcp.set_read_timeout(Some(http_read_timeout())).unwrap();
    tcp.set_write_timeout(Some(secs(30))).unwrap();
    let head = format!(
        "{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        head.trim_end(),
        body.len()
    );
    let _ = tcp
        .write_all(head.as_bytes())
        .and_then(|_| tcp.write_all(body));
    let _ = tcp.flush();
    let mut response = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match tcp.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            // A reset after the answer (the server closed with the body unread).
            Err(_) if !response.is_empty() => break,
            Err(e) => panic!("reading the answer from {addr}: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP/1.1 answer: {text:?}"));
    (status, text)
}

/// Fails unless `value` satisfies the definition `def` of `version`'s schema.
#[track_caller]
pub fn check_definition(version: &str, def: &str, value: &Value) {
    if let Err(e) = validate_against(version, def, value) {
        panic!("{e}\nvalue: {value}");
    }
}

/// A request's answer over HTTP.
#[derive(Debug)]
pub struct Exchange {
    /// The JSON-RPC response (or batch response).
    pub response: Value,
    /// The messages sent on the stream before the response (none for a JSON answer).
    pub before: Vec<Value>,
    /// Every SSE event, the response's included (none for a JSON answer).
    pub events: Vec<SseEvent>,
    /// Whether the answer was an SSE stream.
    pub sse: bool,
}

/// An HTTP response whose body has not been read yet.
pub struct HttpReply {
    pub status: u16,
    pub headers: ureq::http::HeaderMap,
    pub(crate) body: ureq::Body,
    pub(crate) version: String,
}

impl std::fmt::Debug for HttpReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {} {:?}", self.status, self.headers)
    }
}

impl HttpReply {
    /// A header's value, if present (as text).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    }

    /// The media type of `Content-Type`, without parameters, lower case ("" when none).
    pub fn content_type(&self) -> String {
        self.header("content-type")
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    pub fn is_sse(&self) -> bool {
        self.content_type() == "text/event-stream"
    }

    /// The whole body as text.
    pub fn text(mut self) -> String {
        self.body
            .read_to_string()
            .unwrap_or_else(|e| panic!("reading the body of HTTP {}: {e}", self.status))
    }

    /// The body as one JSON-RPC message, validated.
    #[track_caller]
    pub fn json(self) -> Value {
        let status = self.status;
        let version = self.version.clone();
        let text = self.text();
        let msg: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("HTTP {status}: the body is not JSON ({e}): {text:?}"));
        check_http_message(&version, &msg, &format!("HTTP {status} body"));
        msg
    }

    /// Fails unless this is an error status with a JSON-RPC error body (`id: null`); returns the
    /// error's message.
    #[track_caller]
    pub fn expect_error_status(self, status: u16) -> String {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.content_type(), "application/json", "{self:?}");
        let body = self.json();
        assert!(body.get("error").is_some(), "not a JSON-RPC error: {body}");
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The body as an SSE stream; fails unless the reply is `text/event-stream`.
    #[track_caller]
    pub fn sse(self) -> SseStream {
        assert!(self.is_sse(), "expected text/event-stream: {self:?}");
        SseStream {
            reader: BufReader::new(self.body.into_reader()),
            version: self.version,
            last_id: None,
            ended: false,
        }
    }

    /// A `200 text/event-stream` reply as a stream; fails (with the body) otherwise.
    #[track_caller]
    pub fn expect_sse(self, what: &str) -> SseStream {
        if self.status != 200 || !self.is_sse() {
            let head = format!("{self:?}");
            panic!(
                "{what}: expected 200 text/event-stream, got {head}: {}",
                self.text()
            );
        }
        self.sse()
    }
}

/// One SSE event carrying a JSON-RPC message.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// The event's `id:` (the server gives every event one).
    pub id: Option<String>,
    /// The `data:` lines, joined.
    pub data: String,
    /// `data` parsed (and validated).
    pub message: Value,
}

impl SseEvent {
    /// `(stream, n)` of an id `<stream>-<n>`; fails on an event without such an id.
    #[track_caller]
    pub fn stream_and_seq(&self) -> (u64, u64) {
        let id = self
            .id
            .as_deref()
            .unwrap_or_else(|| panic!("an event without id: {self:?}"));
        let parsed = id
            .split_once('-')
            .and_then(|(s, n)| Some((s.parse().ok()?, n.parse().ok()?)));
        parsed.unwrap_or_else(|| panic!("event id {id:?} is not <stream>-<n>"))
    }

    /// Whether the message is a JSON-RPC response (or batch response).
    pub fn is_response(&self) -> bool {
        self.message.is_array()
            || (self.message.get("method").is_none()
                && (self.message.get("result").is_some() || self.message.get("error").is_some()))
    }
}

/// An SSE response body, read event by event. Dropping it closes the connection.
pub struct SseStream {
    pub(crate) reader: BufReader<ureq::BodyReader<'static>>,
    pub(crate) version: String,
    /// The id of the last event read.
    pub last_id: Option<String>,
    pub(crate) ended: bool,
}

impl SseStream {
    /// The next event with data, validated; `None` when the stream has ended. Comments
    /// (keep-alives) are skipped. Fails when nothing arrives within [`default_timeout`].
    #[track_caller]
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.next_event_within(default_timeout())
    }

    /// [`next_event`](Self::next_event) waiting at most about `timeout`.
    #[track_caller]
    pub fn next_event_within(&mut self, timeout: Duration) -> Option<SseEvent> {
        if self.ended {
            return None;
        }
        let deadline = Instant::now() + timeout;
        let mut id: Option<String> = None;
        let mut data: Vec<String> = Vec::new();
        loop {
            if Instant::now() > deadline {
                panic!("no SSE event within {timeout:?}");
            }
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => {
                    self.ended = true;
                    assert!(
                        data.is_empty(),
                        "the SSE stream ended inside an event: {data:?}"
                    );
                    return None;
                }
                Ok(_) => {}
                Err(e) => panic!("reading the SSE stream: {e}"),
            }
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if id.is_some() {
                    self.last_id = id.clone();
                }
                if data.is_empty() {
                    // An event without data (a priming event): nothing to hand over.
                    id = None;
                    continue;
                }
                let data = data.join("\n");
                let message: Value = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data:?}"));
                check_http_message(&self.version, &message, &format!("SSE event {id:?}"));
                return Some(SseEvent { id, data, message });
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "id" => id = Some(value.to_string()),
                "data" => data.push(value.to_string()),
                _ => {}
            }
        }
    }

    /// Reads events until (and with) the first JSON-RPC response; fails if the stream ends first.
    #[track_caller]
    pub fn until_response(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        loop {
            match self.next_event() {
                Some(e) => {
                    let last = e.is_response();
                    events.push(e);
                    if last {
                        return events;
                    }
                }
                None => panic!("the SSE stream ended before a response; events: {events:?}"),
            }
        }
    }

    /// Reads every event to the end of the stream.
    #[track_caller]
    pub fn read_to_end(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while let Some(e) = self.next_event() {
            events.push(e);
        }
        events
    }

    /// Whether the stream has ended (read to its end).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The protocol version validating this stream's messages.
    pub fn version(&self) -> &str {
        &self.version
    }
}
