//! Enforcing a plugin's limits, and telling the caller which one stopped it.

use std::time::Duration;

use wasmtime::{ResourceLimiter, Trap};

use crate::Limits;

/// Table elements one instance may hold; generous for real code, small enough to be harmless.
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// A limit that stopped a call. Raised as the trap's error so it can be told apart from a bug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitExceeded {
    #[error("ran out of fuel: it may burn {per_call} units per call (limits.fuel_per_call)")]
    /// The call burned all the fuel one call may (`per_call`).
    Fuel {
        /// Fuel one call may burn.
        per_call: u64,
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
            LimitExceeded::Fuel { .. } => "fuel",
            LimitExceeded::Memory { .. } => "memory",
            LimitExceeded::Time { .. } => "time",
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

/// Caps the linear memory of everything in one store (one call's instance), across all of its
/// memories, and the size of its tables.
pub struct MemoryLimiter {
    limit_bytes: u64,
    in_use: u64,
}

impl MemoryLimiter {
    /// A limiter for one instance under `limits`.
    pub fn new(limits: &Limits) -> MemoryLimiter {
        MemoryLimiter {
            limit_bytes: limits.memory_bytes,
            in_use: 0,
        }
    }

    /// Linear memory in use, across the store's memories.
    pub fn in_use(&self) -> u64 {
        self.in_use
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let after = self.in_use.saturating_sub(current as u64) + desired as u64;
        if after > self.limit_bytes {
            // Trap rather than let `memory.grow` fail: most guests abort on allocation failure
            // anyway, and the trap carries the reason.
            return Err(wasmtime::Error::new(LimitExceeded::Memory {
                limit_bytes: self.limit_bytes,
            }));
        }
        self.in_use = after;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// The limit that stopped a call, when a limit did.
pub fn limit_hit(err: &wasmtime::Error, limits: &Limits) -> Option<LimitExceeded> {
    if let Some(limit) = super::copy_bound::output_limit_hit(err, limits) {
        return Some(limit);
    }
    if let Some(limit) = err.chain().find_map(|c| c.downcast_ref::<LimitExceeded>()) {
        return Some(limit.clone());
    }
    match err.downcast_ref::<Trap>()? {
        Trap::OutOfFuel => Some(LimitExceeded::Fuel {
            per_call: limits.fuel_per_call,
        }),
        Trap::Interrupt => Some(LimitExceeded::Time {
            limit_ms: limits.timeout_ms,
        }),
        _ => None,
    }
}

/// Why a call into a plugin did not return normally, in words for the tool's caller, when no
/// limit stopped it (that is [`limit_hit`]'s to say).
pub fn describe_failure(err: &wasmtime::Error, stderr_tail: &str) -> String {
    let Some(trap) = err.downcast_ref::<Trap>() else {
        return format!("failed: {err:#}");
    };
    match trap {
        Trap::StackOverflow => "overflowed its stack (stack overflow)".to_string(),
        Trap::UnreachableCodeReached => match panic_message(stderr_tail) {
            Some(message) => format!("panicked: {message}"),
            None => "panicked (it reached an `unreachable` instruction)".to_string(),
        },
        // Rust and C keep their stack in linear memory: overflowing it shows up as an
        // out-of-bounds access rather than a wasm stack overflow.
        Trap::MemoryOutOfBounds => {
            "trapped on an out-of-bounds memory access (most often a stack overflow in the plugin)"
                .to_string()
        }
        other => format!("trapped: {other}"),
    }
}

/// The message of a Rust panic, from what the plugin last wrote to stderr.
fn panic_message(stderr_tail: &str) -> Option<String> {
    let start = stderr_tail.rfind("panicked at ")?;
    let rest = &stderr_tail[start..];
    // "panicked at src/lib.rs:1:2:\nmessage\nnote: ..."
    let message: Vec<&str> = rest
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("note: "))
        .collect();
    let message = message.join("\n").trim().to_string();
    Some(if message.is_empty() {
        rest.lines().next().unwrap_or_default().to_string()
    } else {
        message
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_message_is_read_from_stderr() {
        let tail = "noise\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nmisbehave panicked on purpose\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            panic_message(tail).as_deref(),
            Some("misbehave panicked on purpose")
        );
        assert_eq!(panic_message("no panic here"), None);
    }

    #[test]
    fn memory_limiter_counts_every_memory_of_the_store() {
        let limits = Limits {
            memory_bytes: 4 << 16,
            ..Limits::default()
        };
        let mut limiter = MemoryLimiter::new(&limits);
        assert!(limiter.memory_growing(0, 2 << 16, None).unwrap());
        assert!(limiter.memory_growing(0, 2 << 16, None).unwrap());
        let err = limiter.memory_growing(2 << 16, 3 << 16, None).unwrap_err();
        assert!(err.to_string().contains("memory limit"));
    }
}
