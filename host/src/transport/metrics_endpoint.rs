//! The metrics address: `GET /metrics` (OpenMetrics text, what Prometheus scrapes), `/healthz`
//! and `/readyz` (with the plugins' names: this address is the operator's).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::health::readiness;
use crate::mcp::Server;
use crate::telemetry::Metrics;

struct Endpoint {
    server: Arc<Server>,
    metrics: Arc<Metrics>,
}

/// Binds `listen` now (so that a taken port stops the start), then serves in the background.
pub async fn serve_metrics(
    listen: SocketAddr,
    server: Arc<Server>,
    metrics: Arc<Metrics>,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("[telemetry] metrics_listen: cannot listen on {listen}"))?;
    let address = listener.local_addr()?;
    if !address.ip().is_loopback() {
        tracing::warn!(%address, "serving metrics beyond loopback: anyone who can reach this address sees plugin and tool names and call counts");
    }
    tracing::info!("serving metrics at http://{address}/metrics");
    eprintln!("palisade: metrics on http://{address}/metrics");
    let app = axum::Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(super::health::healthz))
        .route("/readyz", get(readyz))
        .with_state(Arc::new(Endpoint { server, metrics }));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("the metrics address stopped serving: {e}");
        }
    });
    Ok(())
}

async fn metrics_text(State(endpoint): State<Arc<Endpoint>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        endpoint.metrics.encode(),
    )
        .into_response()
}

async fn readyz(State(endpoint): State<Arc<Endpoint>>) -> Response {
    let (status, body) = readiness(&endpoint.server, true);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
