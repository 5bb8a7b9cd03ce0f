//! JSON-RPC 2.0 framing as MCP uses it: parsing what a client sends and shaping what we answer.

use serde_json::{Map, Value, json};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist, or is not available here.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// An internal error of the server.
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP: the resource asked for does not exist.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What went wrong, for a person.
    pub message: String,
    /// More about the error, for a program.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message` and no data.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602` with `message`.
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    /// `-32601` for `method`, which `place` (this session, a revision) does not have. The name
    /// is the client's and may be long: it is cut for the message.
    pub fn method_not_found(method: &str, place: &str) -> RpcError {
        let shown = crate::catalog::shown(method);
        RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found in {place}: {shown}"),
        )
    }

    /// The error with `data` attached.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }
}

/// A message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: it gets exactly one response (none if cancelled).
    Request {
        /// The client's id for it, echoed in the response.
        id: Value,
        /// What is asked.
        method: String,
        /// Its parameters (an empty object when the message had none).
        params: Map<String, Value>,
    },
    /// A notification: no response.
    Notification {
        /// What happened.
        method: String,
        /// Its parameters (an empty object when the message had none).
        params: Map<String, Value>,
    },
    /// An answer to a request of ours: its result, or its error object.
    Response {
        /// The id of our request.
        id: Value,
        /// Its result, or its error object.
        outcome: Result<Value, Value>,
    },
}

/// Parses one JSON value the client sent (not a batch). On failure, the error response to send.
pub fn parse_message(value: Value) -> Result<Incoming, Value> {
    let reply_id = reply_id(&value);
    let Value::Object(mut object) = value else {
        return Err(error_response(
            &Value::Null,
            &RpcError::new(INVALID_REQUEST, "a JSON-RPC message must be a JSON object"),
        ));
    };
    let id = object.remove("id");
    // A usable id is never null.
    let id_ok = !reply_id.is_null();
    let invalid = |message: &str| {
        Err(error_response(
            &reply_id,
            &RpcError::new(INVALID_REQUEST, message),
        ))
    };

    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    if id.is_some() && !id_ok {
        return invalid("\"id\" must be a string or an integer (MCP forbids null)");
    }
    // JSON-RPC allows positional parameters, MCP does not: a message whose `params` is not an
    // object is not a valid MCP request, so it is an invalid request rather than invalid params.
    let params = match object.remove("params") {
        None => Map::new(),
        Some(Value::Object(params)) => params,
        Some(Value::Array(_)) => {
            return invalid("MCP takes named parameters: \"params\" must be an object");
        }
        Some(_) => return invalid("\"params\" must be an object when present"),
    };
    match object.remove("method") {
        Some(Value::String(method)) => Ok(match id {
            Some(id) => Incoming::Request { id, method, params },
            None => Incoming::Notification { method, params },
        }),
        Some(_) => invalid("\"method\" must be a string"),
        None if id_ok && object.contains_key("result") => Ok(Incoming::Response {
            id: reply_id,
            outcome: Ok(object.remove("result").unwrap_or(Value::Null)),
        }),
        None if id_ok && object.contains_key("error") => Ok(Incoming::Response {
            id: reply_id,
            outcome: Err(object.remove("error").unwrap_or(Value::Null)),
        }),
        None => invalid("not a request, a notification or a response: \"method\" is missing"),
    }
}

/// Whether `id` can name a request: a string or an integer (MCP forbids null).
fn is_usable_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// The id an error about `message` echoes: its own when usable, else null.
pub fn reply_id(message: &Value) -> Value {
    message
        .get("id")
        .filter(|id| is_usable_id(id))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The error response for a line that is not JSON.
pub fn parse_error(detail: &serde_json::Error) -> Value {
    error_response(
        &Value::Null,
        &RpcError::new(PARSE_ERROR, format!("parse error: {detail}")),
    )
}

/// The response to request `id`: its result, or its error.
pub fn reply(id: &Value, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(result) => response(id, result),
        Err(error) => error_response(id, &error),
    }
}

/// The success response to request `id`.
pub fn response(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// The error response to request `id`.
pub fn error_response(id: &Value, error: &RpcError) -> Value {
    let mut body = json!({ "code": error.code, "message": error.message });
    if let Some(data) = &error.data {
        body["data"] = data.clone();
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": body })
}

/// A notification: a message that expects no answer.
pub fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Value) -> i64 {
        v["error"]["code"].as_i64().unwrap()
    }

    #[test]
    fn requests_and_notifications_are_told_apart() {
        let r = parse_message(json!({"jsonrpc":"2.0","id":7,"method":"ping"})).unwrap();
        assert_eq!(
            r,
            Incoming::Request {
                id: json!(7),
                method: "ping".into(),
                params: Map::new()
            }
        );
        let n =
            parse_message(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).unwrap();
        assert!(matches!(n, Incoming::Notification { .. }));
    }

    #[test]
    fn invalid_messages_get_invalid_request_with_the_id_when_usable() {
        let e = parse_message(json!({"id":1,"method":"ping"})).unwrap_err();
        assert_eq!((code(&e), &e["id"]), (INVALID_REQUEST, &json!(1)));
        let e = parse_message(json!({"jsonrpc":"2.0","id":null,"method":"ping"})).unwrap_err();
        assert_eq!((code(&e), &e["id"]), (INVALID_REQUEST, &Value::Null));
        let e = parse_message(json!({"jsonrpc":"2.0","id":1})).unwrap_err();
        assert_eq!(code(&e), INVALID_REQUEST);
        let e = parse_message(json!(3)).unwrap_err();
        assert_eq!(code(&e), INVALID_REQUEST);
        for params in [json!([1]), json!(null), json!("x"), json!(3)] {
            let e = parse_message(json!({"jsonrpc":"2.0","id":1,"method":"x","params":params}))
                .unwrap_err();
            assert_eq!((code(&e), &e["id"]), (INVALID_REQUEST, &json!(1)));
        }
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// Any JSON value, with the keys a JSON-RPC message has more likely than chance.
    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z/_.0-9]{0,12}".prop_map(Value::String),
            Just(Value::String("2.0".into())),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            let key = prop_oneof![
                Just("jsonrpc".to_string()),
                Just("id".to_string()),
                Just("method".to_string()),
                Just("params".to_string()),
                Just("result".to_string()),
                Just("error".to_string()),
                "[a-z]{1,6}",
            ];
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(key, inner, 0..7)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever arrives, parsing answers: a message, or one JSON-RPC error response that
        /// echoes a readable id and carries a standard code.
        #[test]
        fn any_value_parses_or_gets_one_error_response(value in json()) {
            let readable_id = value
                .get("id")
                .filter(|id| id.is_string() || id.as_i64().is_some() || id.as_u64().is_some())
                .cloned();
            let versioned = value.get("jsonrpc") == Some(&Value::String("2.0".into()));
            let method = value.get("method").and_then(Value::as_str).map(String::from);
            let answers = value.get("result").is_some() || value.get("error").is_some();
            match parse_message(value) {
                Ok(Incoming::Request { method: parsed, .. }) => {
                    prop_assert!(versioned && readable_id.is_some());
                    prop_assert_eq!(Some(parsed), method);
                }
                Ok(Incoming::Notification { method: parsed, .. }) => {
                    prop_assert!(versioned);
                    prop_assert_eq!(Some(parsed), method);
                }
                Ok(Incoming::Response { id, .. }) => {
                    prop_assert!(versioned && answers && method.is_none());
                    prop_assert_eq!(Some(id), readable_id);
                }
                Err(response) => {
                    prop_assert_eq!(&response["jsonrpc"], "2.0");
                    let code = response["error"]["code"].as_i64().unwrap_or_default();
                    prop_assert_eq!(code, INVALID_REQUEST, "{}", response);
                    prop_assert!(response["error"]["message"].is_string());
                    prop_assert_eq!(&response["id"], &readable_id.unwrap_or(Value::Null));
                }
            }
        }
    }
}
