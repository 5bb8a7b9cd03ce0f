//! A session's requests in flight: each one's cancellation, by id, and the tasks serving them.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::mcp::jsonrpc::{INVALID_REQUEST, RpcError};

/// Requests one session may have in flight at once; more are refused with [`SERVER_BUSY`].
pub const MAX_IN_FLIGHT: usize = 128;
/// JSON-RPC's range for server errors: too many requests in flight.
pub const SERVER_BUSY: i64 = -32000;
/// How long a cancelled request may go on to stop cleanly before it is dropped.
pub(in crate::mcp) const CANCEL_GRACE: Duration = Duration::from_millis(250);

/// The requests being served, so `notifications/cancelled` (or the client leaving) can stop them.
#[derive(Default)]
pub(in crate::mcp) struct InFlight {
    /// Each request's cancellation, by its id's JSON text.
    tokens: Mutex<HashMap<String, CancellationToken>>,
    /// The tasks delivering responses: waited for when the session finishes.
    pub(in crate::mcp) tasks: TaskTracker,
}

impl InFlight {
    /// Registers request `id`: its key and cancellation, or the error that refuses it (too
    /// many in flight, or its id already in use).
    pub(in crate::mcp) fn begin(
        &self,
        id: &Value,
    ) -> Result<(String, CancellationToken), RpcError> {
        let key = id.to_string();
        let mut tokens = self.tokens.lock();
        if tokens.len() >= MAX_IN_FLIGHT {
            return Err(RpcError::new(
                SERVER_BUSY,
                format!(
                    "{MAX_IN_FLIGHT} requests of this session are in flight, as many as it \
                     may have; send more when some are answered"
                ),
            ));
        }
        if tokens.contains_key(&key) {
            return Err(RpcError::new(
                INVALID_REQUEST,
                format!("request id {id} is already in use by a request in flight"),
            ));
        }
        let cancelled = CancellationToken::new();
        tokens.insert(key.clone(), cancelled.clone());
        Ok((key, cancelled))
    }

    /// The request of `key` is answered (or dropped).
    pub(in crate::mcp) fn end(&self, key: &str) {
        self.tokens.lock().remove(key);
    }

    /// The cancellation of request `id`, if it is in flight.
    pub(super) fn token(&self, id: &Value) -> Option<CancellationToken> {
        self.tokens.lock().get(&id.to_string()).cloned()
    }

    /// Cancels every request in flight.
    pub(super) fn cancel_all(&self) {
        for token in self.tokens.lock().values() {
            token.cancel();
        }
    }

    pub(super) fn len(&self) -> usize {
        self.tokens.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_id_in_flight_cannot_be_reused_until_it_ends() {
        let requests = InFlight::default();
        let (key, _) = requests.begin(&json!(1)).unwrap();
        assert_eq!(requests.begin(&json!(1)).unwrap_err().code, INVALID_REQUEST);
        // The number 1 and the string "1" are different ids.
        assert!(requests.begin(&json!("1")).is_ok());
        requests.end(&key);
        assert!(requests.begin(&json!(1)).is_ok());
    }

    #[test]
    fn more_than_the_cap_is_refused_as_busy() {
        let requests = InFlight::default();
        for id in 0..MAX_IN_FLIGHT {
            requests.begin(&json!(id)).unwrap();
        }
        assert_eq!(
            requests.begin(&json!("one more")).unwrap_err().code,
            SERVER_BUSY
        );
        assert_eq!(requests.len(), MAX_IN_FLIGHT);
    }

    #[test]
    fn cancel_all_cancels_every_request() {
        let requests = InFlight::default();
        let (_, a) = requests.begin(&json!(1)).unwrap();
        let (_, b) = requests.begin(&json!(2)).unwrap();
        requests.cancel_all();
        assert!(a.is_cancelled() && b.is_cancelled());
        assert!(requests.token(&json!(1)).unwrap().is_cancelled());
        assert!(requests.token(&json!(3)).is_none());
    }
}
