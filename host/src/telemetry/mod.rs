//! What operators watch the server with: Prometheus metrics and health on an address of their
//! own (`[telemetry] metrics_listen`), apart from MCP so that they are never public by accident,
//! and OpenTelemetry traces exported over OTLP.
//!
//! `metrics.rs` keeps the metrics, `traces.rs` makes and exports the spans. What serves them
//! (the metrics address, health) is a transport: `transport::metrics_endpoint` and
//! `transport::health`. This module knows nothing of the server above it.

pub mod metrics;
pub mod traces;

pub use metrics::{Metrics, Refusal, StreamOpen};
pub use traces::Tracing;
