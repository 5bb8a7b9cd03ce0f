//! Gives memory the server freed back to the operating system.
//!
//! glibc's allocator keeps freed memory in its arenas for reuse and returns it only from the top
//! of each heap. After a burst (a thousand clients whose calls flooded notifications, then went
//! away) everything is freed but the process stays at its peak size: measured, 147 MiB an idle
//! server no longer used, and 54 MiB after one `malloc_trim`. A thread looks every
//! [`CHECK_EVERY`] at how much the arenas hold free and trims them past [`FREE_BYTES_KEPT`]: at
//! most one trim per interval, and none while the server is steady.

use std::time::Duration;

/// How often the arenas are looked at.
pub const CHECK_EVERY: Duration = Duration::from_secs(2);

/// Free memory the allocator may keep for reuse before it is given back.
pub const FREE_BYTES_KEPT: usize = 16 << 20;

/// This process's resident memory, where the system tells it.
pub fn resident_bytes() -> Option<u64> {
    resident_bytes_of("self")
}

/// The resident memory of process `pid` (`self`, or a number), in bytes: `VmRSS` of
/// /proc/PID/status on Linux, `None` elsewhere.
pub fn resident_bytes_of(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Starts the trimming thread (on glibc; elsewhere the allocator returns memory itself, or there
/// is nothing portable to ask it).
pub fn start_trimming() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let started = std::thread::Builder::new()
            .name("palisade-trim".into())
            .spawn(|| {
                let mut trimmer = Trimmer::default();
                loop {
                    std::thread::sleep(CHECK_EVERY);
                    trimmer.trim_if_worth_it();
                }
            });
        if let Err(e) = started {
            tracing::warn!("freed memory will not be given back: cannot start a thread: {e}");
        }
    }
}

/// Decides when a trim is worth it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[derive(Default)]
pub struct Trimmer {
    /// Free bytes at the last look. A trim gives pages back but leaves the free blocks counted,
    /// so the same count again means nothing was allocated or freed since: no new trim.
    last_free: usize,
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
impl Trimmer {
    /// Trims the arenas when they hold more than [`FREE_BYTES_KEPT`] free and something changed
    /// since the last look; returns whether it did.
    #[allow(unsafe_code)]
    pub fn trim_if_worth_it(&mut self) -> bool {
        // SAFETY: both are thread-safe glibc calls that take no pointers; they take the
        // arenas' own locks.
        let free = unsafe { libc::mallinfo2() }.fordblks;
        let last = std::mem::replace(&mut self.last_free, free);
        if !worth_trimming(last, free) {
            return false;
        }
        // SAFETY: as above.
        let trimmed = unsafe { libc::malloc_trim(0) };
        tracing::debug!(free, trimmed, "gave freed memory back");
        true
    }
}

/// Whether to trim, with `free` bytes free now and `last` at the last look.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn worth_trimming(last: usize, free: usize) -> bool {
    free > FREE_BYTES_KEPT && free != last
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    #[allow(unsafe_code)]
    fn freed_memory_over_the_threshold_is_trimmed() {
        // Many small blocks, every 64th one kept: the freed ones cannot be returned from the top
        // of the heap, only by a trim.
        let mut blocks: Vec<Vec<u8>> = (0..200_000).map(|_| vec![1u8; 256]).collect();
        let kept: Vec<Vec<u8>> = blocks.iter().step_by(64).cloned().collect();
        blocks.clear();
        blocks.shrink_to_fit();
        // SAFETY: a thread-safe glibc call that takes no pointers.
        let free = unsafe { libc::mallinfo2() }.fordblks;
        assert!(free > FREE_BYTES_KEPT, "{free} bytes free");
        assert!(Trimmer::default().trim_if_worth_it());
        drop(kept);
    }

    #[test]
    fn only_a_changed_count_over_the_threshold_is_worth_a_trim() {
        let over = FREE_BYTES_KEPT + 1;
        assert!(worth_trimming(0, over));
        assert!(worth_trimming(over + 4096, over));
        assert!(
            !worth_trimming(over, over),
            "nothing changed since the last trim"
        );
        assert!(!worth_trimming(0, FREE_BYTES_KEPT));
    }
}
