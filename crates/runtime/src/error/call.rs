//! Why a call gave no result, and the limits that stop calls.

use std::sync::Arc;
use std::time::Duration;

use crate::bindings::types;

/// Why a call into a plugin gave no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The plugin answered with an error of its own.
    #[error("{}", .0.message)]
    Plugin(types::PluginError),
    /// The plugin was stopped: a limit, a trap, a panic. The message says which, for the caller.
    #[error("{0}")]
    Stopped(String),
    /// A limit refused the call or stopped it; the message says which and when to retry.
    #[error("plugin `{0}` {1}")]
    Limit(Arc<str>, LimitExceeded),
    /// The host could not run the call (for example a granted directory is gone).
    #[error("{0:#}")]
    Host(anyhow::Error),
}

/// A limit that stopped a call. Raised as the trap's error so it can be told apart from a bug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitExceeded {
    #[error("ran out of fuel: it may burn {per_call} units per call (limits.fuel_per_call)")]
    /// The call burned all the fuel one call may (`per_call`).
    Fuel {
        /// Fuel one call may burn.
        per_call: u64,
    },
    #[error("ran out of fuel: a task may burn {limit} units (limits.task_fuel)")]
    /// The task burned all the fuel one task may (`limit`).
    TaskFuel {
        /// Fuel one task may burn.
        limit: u64,
    },
    #[error("exceeded its memory limit of {} MiB (limits.memory_mib)", limit_bytes >> 20)]
    /// The instance asked for more linear memory than `limit_bytes`.
    Memory {
        /// Linear memory one instance may hold.
        limit_bytes: u64,
    },
    #[error("exceeded its time limit of {limit_ms} ms (limits.timeout_ms)")]
    /// The call ran longer than `limit_ms` milliseconds.
    Time {
        /// Wall-clock time one call may take.
        limit_ms: u64,
    },
    #[error("exceeded a task's time limit of {} s (limits.task_timeout_s)", limit_ms / 1000)]
    /// The task ran longer than `limit_ms` milliseconds.
    TaskTime {
        /// Wall-clock time one task may take.
        limit_ms: u64,
    },
    #[error(
        "returned {bytes} bytes, more than its output limit of {} KiB (limits.output_kib)",
        limit_bytes >> 10
    )]
    /// The call returned `bytes`, more than `limit_bytes`.
    Output {
        /// What the call returned (at least).
        bytes: u64,
        /// What one call may return.
        limit_bytes: u64,
    },
    #[error(
        "is already running {limit} calls, its limit (limits.concurrent_calls); retry when one \
         finishes"
    )]
    /// The plugin already runs `limit` calls at once.
    Concurrency {
        /// Calls the plugin may run at once.
        limit: u64,
    },
    #[error(
        "has used up its fuel budget ({per_second} fuel per second, limits.fuel_per_second); \
         retry in {}",
        seconds(*retry_after)
    )]
    /// The plugin's fuel budget (`per_second`) is spent; it refills in `retry_after`.
    FuelBudget {
        /// Fuel the budget regains a second.
        per_second: u64,
        /// When the budget holds enough again.
        retry_after: Duration,
    },
    #[error(
        "was called more than {limit} times a minute by this client \
         (limits.calls_per_minute_per_client); retry in {}",
        seconds(*retry_after)
    )]
    /// This client called the plugin more than `limit` times in a minute.
    ClientRate {
        /// Calls a minute from one client.
        limit: u64,
        /// When the next call is allowed.
        retry_after: Duration,
    },
    #[error(
        "was called more than {limit} times a minute (limits.calls_per_minute); retry in {}",
        seconds(*retry_after)
    )]
    /// All clients together called the plugin more than `limit` times in a minute.
    Rate {
        /// Calls a minute from all clients.
        limit: u64,
        /// When the next call is allowed.
        retry_after: Duration,
    },
    #[error("asked the client more than {limit} questions in one call (limits.questions_per_call)")]
    /// The call put more than `limit` questions to the client.
    Questions {
        /// Questions one call may ask.
        limit: u64,
    },
    #[error(
        "cannot be called now: the limits this server shares with its cluster cannot be \
         checked ({why}), and [cluster] fail = \"closed\" refuses calls until they can; retry \
         shortly"
    )]
    /// The shared limits (`[cluster]`) could not be checked and the policy is to refuse.
    SharedLimitsUnavailable {
        /// Why not: the store's error, without addresses or credentials.
        why: String,
    },
}

impl LimitExceeded {
    /// The limit's name in metrics: `fuel`, `memory`, `time`, `output`, `concurrency`,
    /// `fuel_budget`, `client_rate`, `rate`, `shared_limits_unavailable`, `questions`.
    pub fn kind(&self) -> &'static str {
        match self {
            LimitExceeded::Fuel { .. } | LimitExceeded::TaskFuel { .. } => "fuel",
            LimitExceeded::Memory { .. } => "memory",
            LimitExceeded::Time { .. } | LimitExceeded::TaskTime { .. } => "time",
            LimitExceeded::Output { .. } => "output",
            LimitExceeded::Concurrency { .. } => "concurrency",
            LimitExceeded::FuelBudget { .. } => "fuel_budget",
            LimitExceeded::ClientRate { .. } => "client_rate",
            LimitExceeded::Rate { .. } => "rate",
            LimitExceeded::SharedLimitsUnavailable { .. } => "shared_limits_unavailable",
            LimitExceeded::Questions { .. } => "questions",
        }
    }

    /// When a retry can succeed, for limits that lift with time.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LimitExceeded::FuelBudget { retry_after, .. }
            | LimitExceeded::ClientRate { retry_after, .. }
            | LimitExceeded::Rate { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }
}

/// `0.25 s`, `3 s`: rounded up, so retrying when told works.
fn seconds(d: Duration) -> String {
    let ms = d.as_millis().max(1);
    if ms < 10_000 {
        format!("{:.2} s", (ms as f64 / 1000.0 * 100.0).ceil() / 100.0)
    } else {
        format!("{} s", d.as_secs() + 1)
    }
}
