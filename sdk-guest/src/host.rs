//! What the host offers a plugin while it serves a request.
//!
//! Every function acts on the request the current call belongs to. They are only usable inside
//! the component: on a native target they panic.

use crate::bindings::palisade::plugin::host as raw;

/// Less common host functions, re-exported as generated: asking the user (`elicit`), asking the
/// client's model (`sample`) and change notifications.
pub use raw::{
    ElicitationAction, ElicitationRequest, ElicitationResponse, FormElicitation, ListKind,
    SamplingMessage, SamplingRequest, SamplingResponse, UrlElicitation, elicit,
    notify_list_changed, notify_resource_updated, sample,
};
pub use raw::{LogLevel, Root};

/// Writes a log message: to the host's log, tagged with the plugin's name, and to the MCP client
/// when it asked for this level.
pub fn log(level: LogLevel, message: &str) {
    raw::log(level, message);
}

/// Reports progress on the current request. `progress` should grow with every report; `total`
/// is the value it reaches at the end, if known.
pub fn report_progress(progress: f64, total: Option<f64>, message: Option<&str>) {
    raw::report_progress(progress, total, message);
}

/// True once the client has cancelled the current request. A long-running tool should check now
/// and then and stop; the host stops it anyway at its next chance.
pub fn is_cancelled() -> bool {
    raw::is_cancelled()
}

/// The client's directories this plugin may use for the current request, each with the path the
/// plugin sees it at (such as `/roots/project`).
pub fn list_roots() -> Vec<Root> {
    raw::list_roots()
}
