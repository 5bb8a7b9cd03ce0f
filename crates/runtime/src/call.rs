//! A call as the protocol layer makes it: what the host knows about the request it serves, what
//! it cost, and the events and questions a plugin sends back while it runs.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::bindings::host::{AskError, InputRequest, InputResponse, ListKind, LogLevel};
use super::sandbox::Root;

/// What the host knows about the request a call serves.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Cancelled when the client cancels the request.
    pub cancelled: CancellationToken,
    /// The roots of the client (or `--root`), visible when the plugin's grant allows.
    pub roots: Arc<Vec<Root>>,
    /// Where the plugin's progress reports, logs and notifications go, when a client session
    /// made the call (not at load).
    pub events: Option<mpsc::UnboundedSender<PluginEvent>>,
    /// The client, for the plugin's requests to it (elicitation, sampling).
    pub client: Option<Arc<dyn ClientChannel>>,
    /// Who made the call, for the plugin's rate limits; `None` for the host's own calls (listing
    /// a plugin at load), which are not rate-limited.
    pub caller: Option<Arc<str>>,
    /// Filled in by the call, for the audit log.
    pub stats: Arc<CallStats>,
}

/// What a call cost.
#[derive(Debug, Default)]
pub struct CallStats {
    pub fuel_used: std::sync::atomic::AtomicU64,
}

/// Answers to `ask`, by key, in the order asked.
pub type Answers = Vec<(String, Result<InputResponse, AskError>)>;

/// The answers to an `ask`, once the client gave them (or could not).
pub type PendingAnswers = std::pin::Pin<Box<dyn Future<Output = Answers> + Send>>;

/// Requests a plugin may make of the client that made the call. The protocol layer decides
/// whether the client can answer them and shapes them for its revision.
pub trait ClientChannel: Send + Sync {
    /// Asks the client for every request, each under the plugin's key.
    fn ask(&self, requests: Vec<(String, InputRequest)>) -> PendingAnswers;
}

/// Something a plugin reported while running, for the protocol layer to forward.
#[derive(Debug, Clone, PartialEq)]
pub enum PluginEvent {
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: LogLevel,
        message: String,
    },
    ResourceUpdated(String),
    ListChanged(ListKind),
}
