//! What the host offers a plugin while it serves a request.
//!
//! Every function acts on the request the current call belongs to. They are only usable inside
//! the component: on a native target they panic.

use crate::bindings::palisade::plugin::host as raw;

/// Less common host functions, re-exported as generated: asking the user (`elicit`) and asking
/// the client's model (`sample`).
pub use raw::{
    ElicitationAction, ElicitationRequest, ElicitationResponse, FormElicitation, SamplingMessage,
    SamplingRequest, SamplingResponse, UrlElicitation, elicit, sample,
};
pub use raw::{ListKind, LogLevel, Root};

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

/// Tells the host that the resource at `uri` changed: clients subscribed to it get
/// `notifications/resources/updated`. A resource listed with a
/// [`file`](crate::ResourceInfo::file) is watched by the host anyway; call this for changes the
/// host cannot see, or right after writing the file yourself.
pub fn notify_resource_updated(uri: &str) {
    raw::notify_resource_updated(uri);
}

/// Tells the host that one of this plugin's lists changed (tools, resources and templates, or
/// prompts); the host asks for it again and tells clients (`notifications/.../list_changed`).
pub fn notify_list_changed(kind: ListKind) {
    raw::notify_list_changed(kind);
}
