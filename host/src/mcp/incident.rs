//! Failures of the server's own, as the client sees them: an internal error with a short id to
//! quote, while the operator's log holds the cause under the same id. Host paths and internals
//! never reach the client.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};

use super::jsonrpc::{INTERNAL_ERROR, RpcError};

/// A failure of the host's while serving `what`: logged with its cause, answered with an id.
pub fn host_failure(what: &str, cause: &dyn std::fmt::Display) -> RpcError {
    let incident = incident_id();
    tracing::error!(what, incident, "host failure: {cause:#}");
    answer(&incident)
}

/// A panic while serving `what`, caught before it could cost the request its answer.
pub fn panicked(what: &str, payload: &(dyn Any + Send)) -> RpcError {
    let incident = incident_id();
    tracing::error!(
        what,
        incident,
        "host failure: a task serving a request panicked: {}",
        panic_message(payload)
    );
    answer(&incident)
}

/// The text a panic was raised with.
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn answer(incident: &str) -> RpcError {
    RpcError::new(
        INTERNAL_ERROR,
        format!(
            "the server failed to run this (incident {incident}; the operator finds the cause in \
             the server's log)"
        ),
    )
}

/// A short random id tying an error the client sees to the log line that explains it.
fn incident_id() -> String {
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        return format!("n{}", NEXT.fetch_add(1, Ordering::Relaxed));
    }
    hex::encode(bytes)
}
