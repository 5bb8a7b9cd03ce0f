//! A call as the protocol layer makes it: what the host knows about the request it serves, what
//! it cost, and the events and questions a plugin sends back while it runs.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::bindings::host::{AskError, InputRequest, InputResponse, ListKind, LogLevel};
use super::grant_ask::GrantDecider;
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
    /// The client as far as instance reuse goes (`reuse = "per-client"`): an instance kept
    /// under this key serves no other. One token, or one session; `None` reuses nothing.
    pub reuse_key: Option<Arc<str>>,
    /// Decides on capabilities a plugin with `ask = true` reaches for without a grant, and
    /// holds what users granted "always"; `None` for the host's own calls, which ask nothing.
    pub grants: Option<Arc<dyn GrantDecider>>,
    /// Filled in by the call, for the audit log.
    pub stats: Arc<CallStats>,
    /// The call runs as a task, detached from its request: the plugin's task limits
    /// (`task_timeout_ms`, `task_fuel`) replace its per-call ones, and time spent waiting for
    /// the client's answers is not counted.
    pub task: bool,
}

/// What a call cost.
#[derive(Debug, Default)]
pub struct CallStats {
    /// Fuel the call burned, for the audit log.
    pub fuel_used: std::sync::atomic::AtomicU64,
    /// Linear memory the instance held when the call ended: its peak, since WebAssembly memory
    /// never shrinks (for traces).
    pub memory_bytes: std::sync::atomic::AtomicU64,
    /// Microseconds the call waited for an instance (a pool slot, a kept instance) before its
    /// code ran (for traces).
    pub instance_wait_us: std::sync::atomic::AtomicU64,
    /// Where the call's instance came from ([`InstanceSource`]), once it has one.
    instance: std::sync::atomic::AtomicU8,
    /// What the plugin reached for and was refused (a host, an environment variable), with why,
    /// so the client learns it even when the plugin's own error does not say.
    pub denied: parking_lot::Mutex<Vec<String>>,
    /// Requests the plugin was allowed to make that failed on the way (a certificate not
    /// trusted, a host that did not answer), with why: the plugin sees only an error code.
    pub unreachable: parking_lot::Mutex<Vec<String>>,
}

/// Where a call's instance came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceSource {
    /// Made for the call, while it waited.
    New = 1,
    /// Made before the call came, and used by no other call (`ready.rs`).
    BuiltAhead = 2,
    /// Kept from the same client's earlier call (`reuse = "per-client"`).
    Kept = 3,
}

impl InstanceSource {
    /// Its name in the audit log, metrics and traces.
    pub fn name(self) -> &'static str {
        match self {
            InstanceSource::New => "new",
            InstanceSource::BuiltAhead => "built-ahead",
            InstanceSource::Kept => "kept",
        }
    }
}

impl CallStats {
    /// Notes where the call's instance came from.
    pub fn set_instance(&self, source: InstanceSource) {
        (self.instance).store(source as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// Where the call's instance came from; `None` if no instance ran it.
    pub fn instance(&self) -> Option<InstanceSource> {
        match self.instance.load(std::sync::atomic::Ordering::Relaxed) {
            1 => Some(InstanceSource::New),
            2 => Some(InstanceSource::BuiltAhead),
            3 => Some(InstanceSource::Kept),
            _ => None,
        }
    }

    /// Notes that the plugin was refused `what`; the first few are kept.
    pub fn note_denied(&self, what: String) {
        note(&self.denied, what);
    }

    /// Notes that a granted request failed on the way, and why; the first few are kept.
    pub fn note_unreachable(&self, why: String) {
        note(&self.unreachable, why);
    }

    /// Granted requests that failed during the call, and why.
    pub fn unreachable(&self) -> Vec<String> {
        noted(&self.unreachable)
    }

    /// What the plugin was refused during the call.
    pub fn denied(&self) -> Vec<String> {
        noted(&self.denied)
    }
}

/// Adds `what` to `list` unless it is there or the list holds its first few already.
fn note(list: &parking_lot::Mutex<Vec<String>>, what: String) {
    let mut list = list.lock();
    if list.len() < 8 && !list.contains(&what) {
        list.push(what);
    }
}

fn noted(list: &parking_lot::Mutex<Vec<String>>) -> Vec<String> {
    list.lock().clone()
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
    /// The plugin reported progress (`report-progress`).
    Progress {
        /// How far along, in the plugin's own unit.
        progress: f64,
        /// Where `progress` ends, when the plugin knows.
        total: Option<f64>,
        /// What it is doing now.
        message: Option<String>,
    },
    /// The plugin logged a message for the client (`log`).
    Log {
        /// How important it is.
        level: LogLevel,
        /// The text.
        message: String,
    },
    /// A resource, by URI, changed (`notify-resource-updated`).
    ResourceUpdated(String),
    /// The plugin's list of tools, resources or prompts changed (`notify-list-changed`).
    ListChanged(ListKind),
}
