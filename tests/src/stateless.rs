//! The stateless revision (2026-07-28): requests, headers and the validation of answers.

use serde_json::{Value, json};

use crate::*;

// -- The stateless revision (2026-07-28) --
//
// Requests carry their protocol version and the client's capabilities in `params._meta`; there is
// no `initialize`, no session, and over HTTP each POST carries headers mirroring the body
// (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). The server answers questions
// of its plugins with `input_required` results instead of requests. Everything the server sends in
// answer to such a request is validated against the 2026-07-28 schema, the response against the
// definition of its method (`CallToolResult`, or `InputRequiredResult` while input is awaited).

/// The stateless revision.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// The HTTP headers do not match the body, or a required one is missing or malformed.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a capability the client did not declare in `_meta`.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// The protocol version in `_meta` is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether a client message is a request of the stateless revision, as the server tells them
/// apart: its `params._meta` names a protocol version, or its method exists only there.
pub fn is_stateless_message(msg: &Value) -> bool {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    matches!(method, "server/discover" | "subscriptions/listen")
        || msg
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .is_some()
}

/// The `_meta` of a stateless request: version 2026-07-28, this client, and `capabilities`.
pub fn stateless_meta(capabilities: &Value) -> Value {
    json!({
        META_PROTOCOL_VERSION: STATELESS_VERSION,
        META_CLIENT_INFO: {"name": "palisade-tests", "version": env!("CARGO_PKG_VERSION")},
        META_CLIENT_CAPABILITIES: capabilities,
    })
}

/// `params` (an object, or `Value::Null` for none) with the `_meta` of [`stateless_meta`] added; the
/// entries `params` already has in its `_meta` (a progress token, a log level, or a deliberately
/// wrong version) are kept and win.
pub fn stateless_params(params: Value, capabilities: &Value) -> Value {
    let mut params = match params {
        Value::Null => json!({}),
        p => p,
    };
    let mut meta = stateless_meta(capabilities);
    if let Some(own) = params.get("_meta").and_then(Value::as_object) {
        for (k, v) in own {
            meta[k] = v.clone();
        }
    }
    params["_meta"] = meta;
    params
}

/// A stateless request message with `id`; see [`stateless_params`].
pub fn stateless_message(id: Value, method: &str, params: Value, capabilities: &Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": stateless_params(params, capabilities),
    })
}

/// The headers a 2026-07-28 client sends with `message`: `MCP-Protocol-Version` (the version its
/// `_meta` names, else 2026-07-28), `Mcp-Method`, and `Mcp-Name` for `tools/call` and
/// `prompts/get` (the name), `resources/read` (the URI) and `tasks/*` (the task id), as they
/// are (no Base64). The `Mcp-Param-*` headers of a tool's marked parameters are the caller's
/// to add.
pub fn stateless_headers(message: &Value) -> Vec<(String, String)> {
    let version = message["params"]["_meta"][META_PROTOCOL_VERSION]
        .as_str()
        .unwrap_or(STATELESS_VERSION);
    let method = message["method"].as_str().unwrap_or_default();
    let mut headers = vec![
        ("MCP-Protocol-Version".to_string(), version.to_string()),
        ("Mcp-Method".to_string(), method.to_string()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
        "resources/read" => message["params"]["uri"].as_str(),
        "tasks/get" | "tasks/update" | "tasks/cancel" => message["params"]["taskId"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        headers.push(("Mcp-Name".to_string(), name.to_string()));
    }
    headers
}

/// The definition a complete result of `method` must satisfy in 2026-07-28.
pub(crate) fn stateless_result_definition(method: &str) -> &'static str {
    match method {
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => "Result",
    }
}

/// The typed error definition (2026-07-28) of an error response's code, if it has one.
pub(crate) fn stateless_error_definition(msg: &Value) -> Option<&'static str> {
    match msg["error"]["code"].as_i64()? {
        HEADER_MISMATCH => Some("HeaderMismatchError"),
        MISSING_CLIENT_CAPABILITY => Some("MissingRequiredClientCapabilityError"),
        UNSUPPORTED_PROTOCOL_VERSION => Some("UnsupportedProtocolVersionError"),
        _ => None,
    }
}

/// `resultType` is one of the two kinds 2026-07-28 defines.
pub(crate) fn check_result_type(result: &Value) -> Result<(), String> {
    match result.get("resultType").and_then(Value::as_str) {
        Some("complete" | "input_required" | "task") => Ok(()),
        other => Err(format!(
            "resultType must be \"complete\" or \"input_required\", got {other:?}"
        )),
    }
}

/// Validates the server's response to a stateless request of `method` against the 2026-07-28
/// schema: an error against `JSONRPCErrorResponse` and the typed error of its code (-32020,
/// -32021, -32022); a result against `JSONRPCResultResponse` and, by its `resultType`, the
/// method's result definition or `InputRequiredResult` (with `inputRequests` or `requestState`,
/// and only for `tools/call`, `prompts/get` and `resources/read`).
pub fn validate_stateless_response(method: &str, msg: &Value) -> Result<(), String> {
    let Some(obj) = msg.as_object() else {
        return Err("not a JSON object".into());
    };
    if obj.contains_key("error") {
        if obj.get("id") == Some(&Value::Null) {
            return validate_null_id_error(STATELESS_VERSION, msg);
        }
        validate_against(STATELESS_VERSION, "JSONRPCErrorResponse", msg)?;
        if let Some(def) = stateless_error_definition(msg) {
            validate_against(STATELESS_VERSION, def, msg)?;
        }
        return Ok(());
    }
    validate_against(STATELESS_VERSION, "JSONRPCResultResponse", msg)?;
    let result = &msg["result"];
    check_result_type(result)?;
    if result["resultType"] == "task" {
        if method != "tools/call" {
            return Err(format!(
                "a task made of {method}: only tools/call may become one"
            ));
        }
        return validate_against(TASKS_EXTENSION_SCHEMA, "CreateTaskResult", result);
    }
    if let Some(def) = match method {
        "tasks/get" => Some("GetTaskResult"),
        "tasks/update" => Some("UpdateTaskResult"),
        "tasks/cancel" => Some("CancelTaskResult"),
        _ => None,
    } {
        return validate_against(TASKS_EXTENSION_SCHEMA, def, result);
    }
    if result["resultType"] == "input_required" {
        if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
            return Err(format!("an input_required result for {method}"));
        }
        validate_against(STATELESS_VERSION, "InputRequiredResult", result)?;
        if result.get("inputRequests").is_none() && result.get("requestState").is_none() {
            return Err("an input_required result without inputRequests or requestState".into());
        }
        Ok(())
    } else {
        validate_against(
            STATELESS_VERSION,
            stateless_result_definition(method),
            result,
        )
    }
}

impl Server {
    /// Sends a stateless request with `id` (params get `_meta` declaring `capabilities`, see
    /// [`stateless_params`]); returns the message sent.
    pub fn send_stateless_with_id(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        capabilities: &Value,
    ) -> Value {
        let msg = stateless_message(id, method, params, capabilities);
        self.send_raw(&msg.to_string());
        msg
    }

    /// Sends a stateless request with a fresh numeric id; returns the id.
    pub fn send_stateless(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send_stateless_with_id(id.clone(), method, params, capabilities);
        id
    }

    /// Waits for the response to a stateless request: the first one waits as long as an
    /// `initialize` would (the server may compile every plugin first).
    pub fn wait_stateless_response(&mut self, id: &Value) -> Value {
        let timeout = if self.negotiated.is_none() && !self.stateless_answered {
            startup_timeout()
        } else {
            self.timeout
        };
        self.wait_response(id, timeout)
    }

    /// Sends a stateless request and waits for its response (validated, see
    /// [`validate_stateless_response`]); returns the whole response.
    pub fn stateless(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let id = self.send_stateless(method, params, capabilities);
        let response = self.wait_stateless_response(&id);
        if response["id"] != id {
            self.fail(format!("the response does not echo id {id}: {response}"));
        }
        response
    }

    /// [`stateless`](Self::stateless), expecting a result; returns it.
    #[track_caller]
    pub fn stateless_result(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let response = self.stateless(method, params, capabilities);
        self.expect_result(response)
    }
}

impl HttpServer {
    /// A client of the stateless revision: no session, everything it receives validated against
    /// the 2026-07-28 schema.
    pub fn stateless_client(&self) -> HttpClient {
        let mut client = self.client();
        client.version = STATELESS_VERSION.to_string();
        client
    }
}

/// The answer to one stateless POST, read to its end.
#[derive(Debug)]
pub struct StatelessAnswer {
    pub status: u16,
    pub headers: ureq::http::HeaderMap,
    /// The media type of `Content-Type`, lower case, without parameters.
    pub content_type: String,
    /// The JSON-RPC response (`Value::Null` for a 202 without a body).
    pub response: Value,
    /// The messages of an SSE answer before the response (notifications).
    pub before: Vec<Value>,
    /// Whether the answer was an SSE stream.
    pub sse: bool,
}

impl StatelessAnswer {
    /// A header's value, if present (as text).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    }

    /// The `result`, after checking the answer is `200` with a result.
    #[track_caller]
    pub fn result(&self) -> Value {
        assert_eq!(
            self.status, 200,
            "expected HTTP 200 with a result: {self:?}"
        );
        match self.response.get("result") {
            Some(r) => r.clone(),
            None => panic!("expected a result: {self:?}"),
        }
    }

    /// The `error` object, after checking the HTTP status, a JSON body and the error `code`.
    #[track_caller]
    pub fn error(&self, status: u16, code: i64) -> Value {
        assert_eq!(
            (self.status, error_code(&self.response)),
            (status, Some(code)),
            "expected HTTP {status} with error {code}: {self:?}"
        );
        assert_eq!(
            self.content_type, "application/json",
            "an error answer is plain JSON: {self:?}"
        );
        self.response["error"].clone()
    }
}

impl HttpClient {
    /// A stateless request message with a fresh id; see [`stateless_params`].
    pub fn stateless_message(
        &mut self,
        method: &str,
        params: Value,
        capabilities: &Value,
    ) -> Value {
        let id = self.next_id();
        stateless_message(id, method, params, capabilities)
    }

    /// POSTs a stateless request with the headers [`stateless_headers`] derives from it, then
    /// `headers` (they override those; an empty value leaves a header out).
    pub fn post_stateless(&self, message: &Value, headers: &[(&str, &str)]) -> HttpReply {
        let derived = stateless_headers(message);
        let mut all: Vec<(&str, &str)> = derived
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        all.extend_from_slice(headers);
        self.post_raw(message.to_string(), &all)
    }

    /// [`post_stateless`](Self::post_stateless), then reads the whole answer: a single-line JSON body,
    /// or an SSE stream (with `X-Accel-Buffering: no`, events without `id:`, one `data:` line
    /// each) whose last message is the response. The response must echo the request's id and is
    /// validated against the definition of its method (see [`validate_stateless_response`]).
    #[track_caller]
    pub fn stateless_exchange(&self, message: &Value, headers: &[(&str, &str)]) -> StatelessAnswer {
        let method = message["method"].as_str().unwrap_or_default().to_string();
        let reply = self.post_stateless(message, headers);
        let (status, response_headers) = (reply.status, reply.headers.clone());
        let content_type = reply.content_type();
        let (response, before, sse) = if status == 202 {
            let body = reply.text();
            assert!(body.is_empty(), "a 202 has no body: {body:?}");
            (Value::Null, Vec::new(), false)
        } else if reply.is_sse() {
            assert_eq!(
                reply.header("x-accel-buffering").as_deref(),
                Some("no"),
                "an SSE answer tells proxies not to buffer it: {reply:?}"
            );
            let mut stream = reply.sse();
            let events = stream.read_to_end();
            for e in &events {
                assert!(
                    e.id.is_none(),
                    "2026-07-28 streams are not resumable: no id: lines ({e:?})"
                );
                assert!(!e.data.contains('\n'), "one data: line per message: {e:?}");
            }
            let mut messages: Vec<Value> = events.into_iter().map(|e| e.message).collect();
            let response = messages
                .pop()
                .unwrap_or_else(|| panic!("POST {message}: an SSE stream without any event"));
            for m in &messages {
                assert!(
                    m.get("method").is_some() && m.get("id").is_none(),
                    "only notifications may come before the response: {m}"
                );
            }
            (response, messages, true)
        } else {
            assert_eq!(
                content_type, "application/json",
                "POST {message}: HTTP {status} with neither JSON nor SSE"
            );
            let text = reply.text();
            assert!(
                !text.trim_end().contains('\n'),
                "a JSON answer is one line: {text:?}"
            );
            let msg: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("HTTP {status}: the body is not JSON ({e}): {text:?}"));
            check_http_message(&self.version, &msg, &format!("HTTP {status} body"));
            (msg, Vec::new(), false)
        };
        if !response.is_null() {
            if let Err(e) = validate_stateless_response(&method, &response) {
                panic!(
                    "the response to {method} fails the 2026-07-28 schema: {e}\nresponse: {response}"
                );
            }
            assert_eq!(
                response.get("id"),
                message.get("id"),
                "the response must echo the request's id: {response}"
            );
        }
        StatelessAnswer {
            status,
            headers: response_headers,
            content_type,
            response,
            before,
            sse,
        }
    }

    /// Sends a stateless request with the standard headers; expects `200` and a result (JSON or
    /// SSE); returns the result.
    #[track_caller]
    pub fn stateless_result(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let message = self.stateless_message(method, params, capabilities);
        self.stateless_exchange(&message, &[]).result()
    }
}

// -- Other programs the tests run --
