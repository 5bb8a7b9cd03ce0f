//! The client's logging: the level it asked for (`logging/setLevel`), and per plugin a rate on
//! the log messages sent to it. Also the MCP level names, for every place that reads them.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::mcp::jsonrpc;
use crate::runtime::bindings::host::LogLevel;

/// Log messages a plugin may send a client in a burst, and per second after it.
const LOG_BURST: f64 = 20.0;
const LOG_PER_SECOND: f64 = 10.0;

/// A session's logging state.
pub(in crate::mcp) struct ClientLogging {
    level: Mutex<LogLevel>,
    gate: LogGate,
}

impl Default for ClientLogging {
    fn default() -> Self {
        ClientLogging {
            // No level set: info and above, as most servers do.
            level: Mutex::new(LogLevel::Info),
            gate: LogGate::default(),
        }
    }
}

impl ClientLogging {
    /// The level the client asked for.
    pub(in crate::mcp) fn level(&self) -> LogLevel {
        *self.level.lock()
    }

    /// The client's `logging/setLevel`.
    pub(in crate::mcp) fn set_level(&self, level: LogLevel) {
        *self.level.lock() = level;
    }

    /// The `notifications/message` to send for a plugin's log message, if `threshold` lets it
    /// through and the plugin is within its rate: first a warning of how many were dropped,
    /// when some were.
    pub(in crate::mcp) fn plugin_message(
        &self,
        plugin: &Arc<str>,
        level: LogLevel,
        threshold: LogLevel,
        message: String,
    ) -> Vec<Value> {
        if severity(level) < severity(threshold) {
            return Vec::new();
        }
        let Some(dropped) = self.gate.admit(plugin) else {
            return Vec::new();
        };
        let mut messages = Vec::new();
        if dropped > 0 {
            messages.push(jsonrpc::notification(
                "notifications/message",
                json!({
                    "level": "warning",
                    "logger": &**plugin,
                    "data": format!("{dropped} log messages of this plugin were dropped: more than {LOG_PER_SECOND} per second"),
                }),
            ));
        }
        messages.push(jsonrpc::notification(
            "notifications/message",
            json!({ "level": level_name(level), "logger": &**plugin, "data": message }),
        ));
        messages
    }
}

/// Per plugin, a token bucket over the log messages sent to one client.
#[derive(Default)]
struct LogGate {
    buckets: Mutex<HashMap<Arc<str>, Bucket>>,
}

struct Bucket {
    tokens: f64,
    refilled: Instant,
    dropped: u64,
}

impl LogGate {
    /// Whether a message of `plugin` may go out now, and how many were dropped before it.
    fn admit(&self, plugin: &Arc<str>) -> Option<u64> {
        let mut buckets = self.buckets.lock();
        let now = Instant::now();
        let bucket = buckets.entry(plugin.clone()).or_insert(Bucket {
            tokens: LOG_BURST,
            refilled: now,
            dropped: 0,
        });
        let elapsed = (now - bucket.refilled).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * LOG_PER_SECOND).min(LOG_BURST);
        bucket.refilled = now;
        if bucket.tokens < 1.0 {
            bucket.dropped += 1;
            return None;
        }
        bucket.tokens -= 1.0;
        Some(std::mem::take(&mut bucket.dropped))
    }
}

/// Severity order of the MCP (syslog) levels.
fn severity(level: LogLevel) -> u8 {
    match level {
        LogLevel::Debug => 0,
        LogLevel::Info => 1,
        LogLevel::Notice => 2,
        LogLevel::Warning => 3,
        LogLevel::Error => 4,
        LogLevel::Critical => 5,
        LogLevel::Alert => 6,
        LogLevel::Emergency => 7,
    }
}

const LEVELS: [(&str, LogLevel); 8] = [
    ("debug", LogLevel::Debug),
    ("info", LogLevel::Info),
    ("notice", LogLevel::Notice),
    ("warning", LogLevel::Warning),
    ("error", LogLevel::Error),
    ("critical", LogLevel::Critical),
    ("alert", LogLevel::Alert),
    ("emergency", LogLevel::Emergency),
];

/// The level an MCP level name (`debug` ... `emergency`) names.
pub(crate) fn parse_level(name: &str) -> Option<LogLevel> {
    LEVELS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, level)| *level)
}

/// The level names, for error messages.
pub(crate) const LEVEL_NAMES: &str =
    "debug, info, notice, warning, error, critical, alert, emergency";

pub(crate) fn level_name(level: LogLevel) -> &'static str {
    LEVELS[severity(level) as usize].0
}
