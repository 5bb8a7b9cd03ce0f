//! The memory limit, enforced as the instance grows (the other limits are enforced by fuel, the
//! epoch deadline and the gate).

use wasmtime::ResourceLimiter;

use crate::error::LimitExceeded;
use crate::spec::Limits;

/// What one run may spend in time and fuel: a call's limits, or a task's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Wall-clock time, in milliseconds.
    pub timeout_ms: u64,
    /// Fuel.
    pub fuel: u64,
    /// A task's budget, not a call's: what running out of it is called.
    task: bool,
}

impl Budget {
    /// The budget of a call under `limits`, or of a task when `task`.
    pub(crate) fn of(limits: &Limits, task: bool) -> Budget {
        match task {
            false => Budget {
                timeout_ms: limits.timeout_ms,
                fuel: limits.fuel_per_call,
                task,
            },
            true => Budget {
                timeout_ms: limits.task_timeout_ms,
                fuel: limits.task_fuel,
                task,
            },
        }
    }

    /// The limit hit when the run burned all its fuel.
    pub(crate) fn out_of_fuel(&self) -> LimitExceeded {
        match self.task {
            false => LimitExceeded::Fuel {
                per_call: self.fuel,
            },
            true => LimitExceeded::TaskFuel { limit: self.fuel },
        }
    }

    /// The limit hit when the run passed its deadline.
    pub(crate) fn out_of_time(&self) -> LimitExceeded {
        match self.task {
            false => LimitExceeded::Time {
                limit_ms: self.timeout_ms,
            },
            true => LimitExceeded::TaskTime {
                limit_ms: self.timeout_ms,
            },
        }
    }
}

/// Table elements one instance may hold; generous for real code, small enough to be harmless.
const MAX_TABLE_ELEMENTS: usize = 100_000;

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

#[cfg(test)]
mod tests {
    use super::*;

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
