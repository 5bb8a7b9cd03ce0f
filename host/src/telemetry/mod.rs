//! What operators watch the server with: Prometheus metrics and health on an address of their
//! own (`[telemetry] metrics_listen`), apart from MCP so that they are never public by accident,
//! and OpenTelemetry traces exported over OTLP.
//!
//! `metrics.rs` keeps the metrics, `traces.rs` makes and exports the spans; `activity.rs` (recent
//! calls, an hour of figures) and `log_tail.rs` (plugins' last log lines) are what the
//! operator's console shows. What serves them
//! (the metrics address, health) is a transport: `transport::metrics_endpoint` and
//! `transport::health`. This module knows nothing of the server above it.

pub mod activity;
pub mod log_tail;
pub mod metrics;
pub mod traces;

pub use activity::{Activity, Topic};
pub use metrics::{Metrics, Refusal, StreamOpen};
pub use traces::Tracing;
