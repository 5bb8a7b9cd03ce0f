//! How far along a long compile is. Wasmtime reports no progress while it compiles, so the
//! fraction is an estimate: the time this machine took per byte on its last compile (kept in the
//! cache directory), else a rate measured on a 2-core machine. Compiles take time roughly in
//! proportion to the component's size, so the estimate is right to within a factor of two.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Bytes of component compiled per second when this machine has no measure of its own: what a
/// 2-core machine does with the Python example (17.6 MiB in 9 s).
const DEFAULT_BYTES_PER_SECOND: f64 = 2.0 * 1024.0 * 1024.0;
/// Rates outside this range are taken for a damaged file, not a machine.
const PLAUSIBLE_BYTES_PER_SECOND: std::ops::RangeInclusive<f64> = 1024.0..=1.0e10;
/// Compiles shorter than this are not worth a report.
const REPORT_AFTER: Duration = Duration::from_secs(1);
/// How often a sink hears of a compile in progress.
pub const TICK: Duration = Duration::from_millis(200);
/// The file in the cache directory that keeps the last measured rate.
const RATE_FILE: &str = "compile-rate";

/// One report on a compile.
#[derive(Debug, Clone)]
pub struct CompileProgress {
    /// The plugin being compiled.
    pub plugin: String,
    /// The component's size.
    pub bytes: usize,
    /// Time spent so far.
    pub elapsed: Duration,
    /// What the whole compile should take.
    pub expected: Duration,
    /// Reports before this one (one per [`TICK`]).
    pub ticks: u32,
    /// The compile has ended (successfully or not).
    pub done: bool,
}

impl CompileProgress {
    /// The part done, between 0 and 1; an overdue compile stays just short of done.
    pub fn fraction(&self) -> f64 {
        if self.done {
            return 1.0;
        }
        let expected = self.expected.as_secs_f64().max(f64::EPSILON);
        (self.elapsed.as_secs_f64() / expected).min(0.99)
    }

    /// The time still expected; zero once overdue.
    pub fn remaining(&self) -> Duration {
        self.expected.saturating_sub(self.elapsed)
    }
}

/// Hears about compiles: every [`TICK`] while one runs, once more when it ends.
pub type ProgressSink = Arc<dyn Fn(&CompileProgress) + Send + Sync>;

/// The default sink: a log line when a compile is worth waiting for, then one every few seconds
/// with the percentage and the time left.
pub fn log_progress() -> ProgressSink {
    const EVERY: Duration = Duration::from_secs(3);
    Arc::new(|p: &CompileProgress| {
        if p.done {
            if p.elapsed >= REPORT_AFTER {
                tracing::info!(
                    plugin = p.plugin,
                    "compiled in {:.1} s",
                    p.elapsed.as_secs_f64()
                );
            }
            return;
        }
        // One line once REPORT_AFTER has passed, then one per EVERY.
        let (first, every) = (ticks_in(REPORT_AFTER), ticks_in(EVERY));
        if p.ticks < first || !(p.ticks - first).is_multiple_of(every) {
            return;
        }
        tracing::info!(
            plugin = p.plugin,
            "compiling ({:.1} MiB): {:.0}%, about {} s left",
            p.bytes as f64 / (1024.0 * 1024.0),
            p.fraction() * 100.0,
            p.remaining().as_secs_f64().ceil().max(1.0)
        );
    })
}

fn ticks_in(span: Duration) -> u32 {
    (span.as_millis() / TICK.as_millis()).max(1) as u32
}

/// Runs `compile` for `plugin`'s `bytes`, telling `sink` how far along it is, and keeps the
/// rate it reached in `cache_dir` for the next estimate.
pub(crate) fn compile_reporting<T>(
    cache_dir: &Path,
    plugin: &str,
    bytes: usize,
    sink: &ProgressSink,
    compile: impl FnOnce() -> T,
) -> T {
    let expected = Duration::from_secs_f64(bytes as f64 / rate(cache_dir));
    let started = Instant::now();
    let report = |ticks, done| {
        sink(&CompileProgress {
            plugin: plugin.to_string(),
            bytes,
            elapsed: started.elapsed(),
            expected,
            ticks,
            done,
        })
    };
    let (stop, stopped) = mpsc::channel::<()>();
    let (result, ticks) = std::thread::scope(|scope| {
        let report = &report;
        let ticker = scope.spawn(move || {
            let mut ticks = 0;
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                report(ticks, false);
                ticks += 1;
            }
            ticks
        });
        let result = compile();
        drop(stop);
        (result, ticker.join().unwrap_or_default())
    });
    report(ticks, true);
    let seconds = started.elapsed().as_secs_f64();
    if seconds >= REPORT_AFTER.as_secs_f64() {
        remember_rate(cache_dir, bytes as f64 / seconds);
    }
    result
}

/// Bytes per second this machine compiled last time, or the default.
fn rate(cache_dir: &Path) -> f64 {
    std::fs::read_to_string(cache_dir.join(RATE_FILE))
        .ok()
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|rate| PLAUSIBLE_BYTES_PER_SECOND.contains(rate))
        .unwrap_or(DEFAULT_BYTES_PER_SECOND)
}

fn remember_rate(cache_dir: &Path, bytes_per_second: f64) {
    if let Err(e) = crate::private_dir::write(
        &cache_dir.join(RATE_FILE),
        format!("{bytes_per_second:.0}\n").as_bytes(),
    ) {
        tracing::debug!("cannot keep the compile rate: {e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    #[test]
    fn the_fraction_grows_and_an_overdue_compile_is_not_done() {
        let mut p = CompileProgress {
            plugin: "x".into(),
            bytes: 1,
            elapsed: Duration::from_secs(1),
            expected: Duration::from_secs(4),
            ticks: 5,
            done: false,
        };
        assert_eq!(p.fraction(), 0.25);
        assert_eq!(p.remaining(), Duration::from_secs(3));
        p.elapsed = Duration::from_secs(9);
        assert_eq!(p.fraction(), 0.99);
        assert_eq!(p.remaining(), Duration::ZERO);
        p.done = true;
        assert_eq!(p.fraction(), 1.0);
    }

    #[test]
    fn a_slow_compile_is_reported_and_teaches_the_rate() {
        let dir = tempfile::tempdir().unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink: ProgressSink = {
            let heard = heard.clone();
            Arc::new(move |p: &CompileProgress| heard.lock().push(p.clone()))
        };
        let bytes = 8 * 1024 * 1024;
        let answer = compile_reporting(dir.path(), "slow", bytes, &sink, || {
            std::thread::sleep(REPORT_AFTER + 2 * TICK);
            42
        });
        assert_eq!(answer, 42);
        let heard = heard.lock();
        assert!(heard.len() >= 3, "ticks and the end: {heard:?}");
        assert!(heard.iter().rev().skip(1).all(|p| !p.done));
        assert!(heard.last().unwrap().done);
        assert!(heard.windows(2).all(|w| w[0].elapsed <= w[1].elapsed));
        // 8 MiB in at least 1.4 s: the next estimate uses it.
        let learned = rate(dir.path());
        let fastest = bytes as f64 / (REPORT_AFTER + 2 * TICK).as_secs_f64();
        assert!(
            learned <= fastest && learned > fastest / 10.0 && learned != DEFAULT_BYTES_PER_SECOND,
            "{learned}"
        );
    }

    #[test]
    fn a_damaged_rate_file_gives_the_default() {
        let dir = tempfile::tempdir().unwrap();
        for text in ["", "fast", "0", "-5", "1e300", "NaN"] {
            std::fs::write(dir.path().join(RATE_FILE), text).unwrap();
            assert_eq!(rate(dir.path()), DEFAULT_BYTES_PER_SECOND, "{text:?}");
        }
    }
}
