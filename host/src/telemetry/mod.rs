//! What operators watch the server with: Prometheus metrics and health on an address of their
//! own (`[telemetry] metrics_listen`), apart from MCP so that they are never public by accident.
//!
//! `metrics.rs` keeps the metrics, `health.rs` decides liveness and readiness, `endpoint.rs`
//! serves them.

mod endpoint;
pub mod health;
pub mod metrics;

pub use endpoint::{healthz, serve_metrics};
pub use metrics::{CallRecord, Metrics, Refusal, StreamOpen};
