//! OpenTelemetry traces, exported over OTLP/HTTP: a span for each HTTP request, one for each MCP
//! request (named and attributed as the OpenTelemetry semantic conventions for MCP say), and
//! one for each plugin call inside it with what only the sandbox knows (fuel, memory, the limit
//! hit, the wait for an instance). A client's trace continues here: W3C trace context is read
//! from the request's `params._meta` (`traceparent`, `tracestate`, as MCP 2026-07-28 reserves
//! them), else from the HTTP `traceparent` header.
//!
//! Off unless configured (`[telemetry] otlp_endpoint` or the `OTEL_EXPORTER_OTLP_*` variables):
//! then no tracer exists and nothing here runs.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider};
use serde_json::{Map, Value};

use crate::config::TraceConfig;

/// The tracer, while traces are exported.
pub struct Tracing {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl std::fmt::Debug for Tracing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracing").finish_non_exhaustive()
    }
}

/// The value of the environment variable `var`, when it has one.
fn env_says(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

impl Tracing {
    /// Starts exporting when `config` or the environment names a collector; `None` otherwise.
    pub fn start(config: &TraceConfig) -> Result<Option<Arc<Tracing>>> {
        if env_says("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || env_says("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"))
        {
            return Ok(None);
        }
        let from_env = env_says("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| env_says("OTEL_EXPORTER_OTLP_ENDPOINT"));
        if config.otlp_endpoint.is_none() && from_env.is_none() {
            return Ok(None);
        }
        let mut exporter = opentelemetry_otlp::SpanExporter::builder().with_http();
        if let Some(endpoint) = &config.otlp_endpoint {
            use opentelemetry_otlp::WithExportConfig as _;
            exporter = exporter.with_endpoint(endpoint.clone());
        }
        let exporter = exporter
            .build()
            .context("[telemetry] cannot set up the OTLP trace exporter")?;
        let service = config
            .service_name
            .clone()
            .or_else(|| env_says("OTEL_SERVICE_NAME"))
            .unwrap_or_else(|| "palisade".to_string());
        let resource = Resource::builder()
            .with_service_name(service.clone())
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            // A client's decision is followed; traces that start here are kept at the ratio.
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
                config.sample_ratio,
            ))))
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("palisade");
        tracing::info!(
            service,
            endpoint = config.otlp_endpoint.as_deref().or(from_env.as_deref()),
            "exporting traces over OTLP/HTTP"
        );
        Ok(Some(Arc::new(Tracing { provider, tracer })))
    }

    /// Sends what is still buffered; called once, as the server exits.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!("traces not all exported at exit: {e}");
        }
    }

    /// A span named `name` of `kind` under `parent`, with `attributes`; the context holding it
    /// is the parent of what happens within.
    pub fn span(
        &self,
        parent: &Context,
        name: String,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
    ) -> Context {
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, parent);
        parent.with_span(span)
    }
}

/// Ends the span of `cx` with `attributes`, as an error when `error` says what went wrong
/// (`error.type`, and a message).
pub fn end_span(cx: &Context, attributes: Vec<KeyValue>, error: Option<(String, String)>) {
    let span = cx.span();
    span.set_attributes(attributes);
    if let Some((kind, message)) = error {
        span.set_attribute(KeyValue::new("error.type", kind));
        span.set_status(Status::error(message));
    }
    span.end();
}

/// The trace context a request's `_meta` carries (`traceparent`, `tracestate`); an empty
/// context when it has none, or a malformed one.
pub fn meta_context(params: &Map<String, Value>) -> Context {
    match params.get("_meta").and_then(Value::as_object) {
        Some(meta) => TraceContextPropagator::new().extract(&MetaCarrier(meta)),
        None => Context::new(),
    }
}

/// The trace context of HTTP headers (`traceparent`, `tracestate`).
pub fn header_context(headers: &axum::http::HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&HeaderCarrier(headers))
}

/// Writes `cx` into `params._meta` (`traceparent`, `tracestate`), unless `_meta` has a
/// `traceparent` already: what the client put there is the request's own context.
pub fn inject_into_meta(cx: &Context, params: &mut Map<String, Value>) {
    if !cx.span().span_context().is_valid() {
        return;
    }
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    if meta.contains_key("traceparent") {
        return;
    }
    let mut fields = HashMap::new();
    TraceContextPropagator::new().inject_context(cx, &mut fields);
    for (key, value) in fields {
        meta.insert(key, Value::String(value));
    }
}

/// The trace id (32 hex digits) of `cx`, when it holds a valid span context.
pub fn trace_id(cx: &Context) -> Option<String> {
    let span = cx.span();
    let context = span.span_context();
    context.is_valid().then(|| context.trace_id().to_string())
}

struct MetaCarrier<'a>(&'a Map<String, Value>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct HeaderCarrier<'a>(&'a axum::http::HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn trace_context_goes_from_headers_into_meta_and_back() {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
                .parse()
                .unwrap(),
        );
        let cx = header_context(&headers);
        assert_eq!(
            trace_id(&cx).as_deref(),
            Some("0af7651916cd43dd8448eb211c80319c")
        );
        let mut params = json!({"name": "t"}).as_object().unwrap().clone();
        inject_into_meta(&cx, &mut params);
        assert_eq!(
            params["_meta"]["traceparent"],
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
        );
        assert_eq!(trace_id(&meta_context(&params)), trace_id(&cx));
        // The client's own context in `_meta` wins.
        let mut own = json!({"_meta": {"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}})
            .as_object()
            .unwrap()
            .clone();
        inject_into_meta(&cx, &mut own);
        assert_eq!(
            trace_id(&meta_context(&own)).as_deref(),
            Some("11111111111111111111111111111111")
        );
        // Malformed context: none.
        for bad in [
            json!("junk"),
            json!(7),
            json!("00-00000000000000000000000000000000-2222222222222222-01"),
        ] {
            let params = json!({"_meta": {"traceparent": bad}})
                .as_object()
                .unwrap()
                .clone();
            assert_eq!(trace_id(&meta_context(&params)), None);
        }
    }
}
