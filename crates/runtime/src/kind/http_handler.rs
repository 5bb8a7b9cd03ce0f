//! `http_handler = true`: a component exporting `wasi:http/incoming-handler` served as one tool,
//! `request`, that hands the handler a request in the sandbox and returns its response. Many
//! components are HTTP-shaped; this runs them without a listening socket.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use serde_json::{Value as Json, json};
use wasmtime::Store;
use wasmtime::component::Instance;
use wasmtime_wasi_http::WasiHttpView as _;
use wasmtime_wasi_http::p2::bindings::ProxyIndices;
use wasmtime_wasi_http::p2::bindings::http::types::{ErrorCode, Scheme};

use crate::bindings::{tools, types};
use crate::error::LimitExceeded;
use crate::store::StoreState;

/// The tool's name.
pub const TOOL: &str = "request";

/// Methods the tool takes.
const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The `request` tool as listed.
pub fn tool() -> tools::Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "method": {"type": "string", "enum": METHODS, "default": "GET"},
            "path": {"type": "string", "pattern": "^/", "description": "The path and query, from `/`."},
            "headers": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Request headers, by name."
            },
            "body": {"type": "string", "description": "The request body, as text."}
        },
        "required": ["path"],
        "additionalProperties": false,
    });
    let output = json!({
        "type": "object",
        "properties": {
            "status": {"type": "integer", "minimum": 100, "maximum": 999},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "body": {"type": "string"},
            "bodyEncoding": {"enum": ["utf-8", "base64"]}
        },
        "required": ["status", "headers", "body", "bodyEncoding"],
        "additionalProperties": false,
    });
    tools::Tool {
        name: TOOL.into(),
        title: None,
        description: Some(
            "Sends an HTTP request to the component's wasi:http handler (in its sandbox, no \
             network) and returns the response: status, headers and body."
                .into(),
        ),
        input_schema: schema.to_string(),
        output_schema: Some(output.to_string()),
        annotations: None,
        // Nothing in the component says; the configuration may (`task = ...`).
        task_support: tools::TaskSupport::Forbidden,
        icons: Vec::new(),
        meta: Some(json!({"palisade/export": "wasi:http/incoming-handler#handle"}).to_string()),
    }
}

/// A request from the tool's arguments (already checked against its schema).
pub(crate) fn request(arguments: &Json) -> Result<hyper::Request<Full<Bytes>>, String> {
    let method = arguments["method"].as_str().unwrap_or("GET");
    let path = arguments["path"].as_str().unwrap_or("/");
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(format!("http://localhost{path}"));
    if let Some(headers) = arguments["headers"].as_object() {
        for (name, value) in headers {
            builder = builder.header(name, value.as_str().unwrap_or_default());
        }
    }
    let body = arguments["body"].as_str().unwrap_or_default().to_string();
    builder
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("invalid request: {e}"))
}

/// Runs the handler of `instance` on `request`; its response, with at most `limit` bytes of
/// body.
pub async fn handle(
    store: &mut Store<StoreState>,
    instance: &Instance,
    indices: &ProxyIndices,
    request: hyper::Request<Full<Bytes>>,
    limit: u64,
) -> wasmtime::Result<tools::CallResult> {
    let proxy = indices.load(&mut *store, instance)?;
    let request =
        request.map(|body| body.map_err(|never: Infallible| -> ErrorCode { match never {} }));
    let incoming = store
        .data_mut()
        .http()
        .new_incoming_request(Scheme::Http, request)?;
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let out = store.data_mut().http().new_response_outparam(sender)?;
    // The response is read while the handler runs: a body larger than the stream's buffer
    // is only written as it is read.
    let call = proxy
        .wasi_http_incoming_handler()
        .call_handle(&mut *store, incoming, out);
    let read = read_response(receiver, limit);
    tokio::pin!(call, read);
    let response = tokio::select! {
        done = &mut call => {
            done?;
            read.await?
        }
        response = &mut read => {
            let response = response?;
            call.await?;
            response
        }
    };
    let (parts, body) = match response {
        Ok(response) => response,
        Err(why) => return Ok(error_result(why)),
    };
    let (text, encoding) = match std::str::from_utf8(&body) {
        Ok(text) => (text.to_string(), "utf-8"),
        Err(_) => {
            use base64::Engine as _;
            (
                base64::engine::general_purpose::STANDARD.encode(&body),
                "base64",
            )
        }
    };
    let headers: serde_json::Map<String, Json> = parts
        .headers
        .iter()
        .map(|(name, value)| {
            (
                name.to_string(),
                Json::String(String::from_utf8_lossy(value.as_bytes()).into_owned()),
            )
        })
        .collect();
    let status = parts.status.as_u16();
    let structured = json!({
        "status": status,
        "headers": headers,
        "body": text,
        "bodyEncoding": encoding,
    });
    Ok(tools::CallResult {
        content: vec![text_block(format!("HTTP {status}\n\n{text}"))],
        structured_content: Some(structured.to_string()),
        // A server error is the tool failing; anything else is an answer for the model.
        is_error: status >= 500,
        meta: None,
    })
}

/// The handler's response, with at most `limit` bytes of body: `Err` with a message for a
/// handler that failed or set none.
async fn read_response(
    receiver: tokio::sync::oneshot::Receiver<
        Result<hyper::Response<wasmtime_wasi_http::p2::body::HyperOutgoingBody>, ErrorCode>,
    >,
    limit: u64,
) -> wasmtime::Result<Result<(http::response::Parts, Bytes), String>> {
    let response = match receiver.await {
        Ok(Ok(response)) => response,
        Ok(Err(code)) => return Ok(Err(format!("the handler failed: {code:?}"))),
        Err(_) => return Ok(Err("the handler set no response".into())),
    };
    let (parts, body) = response.into_parts();
    let limit_bytes = usize::try_from(limit).unwrap_or(usize::MAX);
    let body = Limited::new(body, limit_bytes)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                wasmtime::Error::new(LimitExceeded::Output {
                    bytes: limit.saturating_add(1),
                    limit_bytes: limit,
                })
            } else {
                wasmtime::format_err!("reading the response body: {e}")
            }
        })?;
    Ok(Ok((parts, body.to_bytes())))
}

fn text_block(text: String) -> types::ContentBlock {
    types::ContentBlock::Text(types::TextContent {
        text,
        annotations: None,
        meta: None,
    })
}

fn error_result(text: String) -> tools::CallResult {
    tools::CallResult {
        content: vec![text_block(text)],
        structured_content: None,
        is_error: true,
        meta: None,
    }
}
