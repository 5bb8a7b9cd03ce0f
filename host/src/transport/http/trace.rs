//! Trace context over HTTP: the span of each POST (when traces are exported), and the trace
//! context handed to the MCP requests it carries. A request without a `traceparent` of its own
//! in `_meta` gets the HTTP span's, or with traces off the `traceparent` header's, so that a
//! client's trace reaches the MCP span and the audit log either way.

use axum::http::{HeaderMap, StatusCode};
use opentelemetry::trace::SpanKind;
use opentelemetry::{Context, KeyValue};
use serde_json::Value;

use crate::mcp::Server;
use crate::telemetry::traces;

/// Starts the span of a POST to `path` carrying `message` (a request, or a batch), and hands
/// its context to the requests in it; the span, to end with [`end`].
pub(super) fn begin(
    server: &Server,
    headers: &HeaderMap,
    path: &'static str,
    message: &mut Value,
) -> Option<Context> {
    let from_header = headers
        .contains_key("traceparent")
        .then(|| traces::header_context(headers));
    let span = server.tracing.as_ref().map(|tracing| {
        tracing.span(
            from_header.as_ref().unwrap_or(&Context::new()),
            format!("POST {path}"),
            SpanKind::Server,
            vec![
                KeyValue::new("http.request.method", "POST"),
                KeyValue::new("url.path", path),
                KeyValue::new("network.protocol.name", "http"),
            ],
        )
    });
    if let Some(cx) = span.as_ref().or(from_header.as_ref()) {
        hand_over_all(cx, message);
    }
    span
}

/// Hands the `traceparent` header's context (if any) to the requests of `message`.
pub(super) fn hand_over_header(headers: &HeaderMap, message: &mut Value) {
    if headers.contains_key("traceparent") {
        hand_over_all(&traces::header_context(headers), message);
    }
}

fn hand_over_all(cx: &Context, message: &mut Value) {
    match message {
        Value::Array(batch) => batch.iter_mut().for_each(|m| hand_over(cx, m)),
        single => hand_over(cx, single),
    }
}

/// Ends the POST's span with the response's status.
pub(super) fn end(span: Option<Context>, status: StatusCode) {
    let Some(cx) = span else { return };
    let code = KeyValue::new("http.response.status_code", i64::from(status.as_u16()));
    let error = (status.is_client_error() || status.is_server_error())
        .then(|| (status.as_u16().to_string(), status.to_string()));
    traces::end_span(&cx, vec![code], error);
}

/// Gives a request (not a notification or a response) the trace context `cx`.
fn hand_over(cx: &Context, message: &mut Value) {
    let Some(object) = message.as_object_mut() else {
        return;
    };
    if !object.contains_key("method") || !object.contains_key("id") {
        return;
    }
    let params = object
        .entry("params")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(params) = params.as_object_mut() {
        traces::inject_into_meta(cx, params);
    }
}
