//! Turning samples into numbers, and reading a process's memory.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

/// Latency percentiles and throughput of one set of calls.
pub struct Stats {
    pub calls: usize,
    pub calls_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    /// The server's CPU time per call, when measured.
    pub cpu_us_per_call: Option<f64>,
}

impl Stats {
    /// `samples` are the calls' latencies; `busy` the wall time they took together (their sum
    /// when they ran one at a time).
    pub fn new(mut samples: Vec<Duration>, busy: Duration) -> Stats {
        samples.sort();
        let at = |q: f64| {
            if samples.is_empty() {
                return f64::NAN;
            }
            let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
            samples[i].as_secs_f64() * 1e6
        };
        Stats {
            calls: samples.len(),
            calls_per_sec: samples.len() as f64 / busy.as_secs_f64(),
            p50_us: at(0.50),
            p99_us: at(0.99),
            cpu_us_per_call: None,
        }
    }

    /// With the server's CPU time spent on these calls.
    pub fn with_cpu(mut self, cpu_ns: u64) -> Stats {
        self.cpu_us_per_call = Some(cpu_ns as f64 / 1e3 / self.calls as f64);
        self
    }

    /// Calls made one after another: the throughput is what their latencies add up to.
    pub fn sequential(samples: Vec<Duration>) -> Stats {
        let busy = samples.iter().sum();
        Stats::new(samples, busy)
    }

    pub fn json(&self) -> Value {
        json!({"calls": self.calls, "calls_per_sec": self.calls_per_sec,
               "p50_us": self.p50_us, "p99_us": self.p99_us,
               "server_cpu_us_per_call": self.cpu_us_per_call})
    }
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A scratch directory for one benchmark run, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new() -> anyhow::Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("palisade-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The resident set size of process `pid`, in bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    palisade::memory::resident_bytes_of(&pid.to_string())
}

/// Samples a process's RSS every 20 ms on a thread of its own, keeping the largest.
pub struct RssPeak {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssPeak {
    pub fn start(pid: u32) -> RssPeak {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(rss_bytes(pid).unwrap_or(0)));
        let thread = {
            let (stop, peak) = (stop.clone(), peak.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(rss) = rss_bytes(pid) {
                        peak.fetch_max(rss, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        RssPeak {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    /// The largest RSS seen, in bytes.
    pub fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

/// CPU time process `pid`'s threads have run so far (Linux: the sum of
/// /proc/PID/task/*/schedstat), in nanoseconds: machine noise stretches wall time, not this.
pub fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
            stat.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum()
}

/// What a process's resident memory is made of (Linux: /proc/PID/smaps), in bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct RssMakeUp {
    /// Everything resident.
    pub total: u64,
    /// Compiled plugins: mappings of files in the compile cache. Clean pages of the page
    /// cache: the kernel takes them back under memory pressure and reads them again on use.
    pub plugin_code: u64,
    /// The server's own executable.
    pub server_binary: u64,
    /// Anonymous memory: the heap, stacks, instances' memories.
    pub anonymous: u64,
    /// Everything else (shared libraries, memory images).
    pub other: u64,
}

impl RssMakeUp {
    /// Reads the make-up of process `pid`, whose compile cache is `cache` and executable `binary`.
    pub fn of(pid: u32, cache: &std::path::Path, binary: &std::path::Path) -> Option<RssMakeUp> {
        let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).ok()?;
        let cache = cache.to_string_lossy();
        let binary = binary.to_string_lossy();
        let mut makeup = RssMakeUp::default();
        let mut path = String::new();
        for line in smaps.lines() {
            let mut fields = line.split_whitespace();
            let Some(first) = fields.next() else {
                continue;
            };
            if let Some(kib) = first.strip_prefix("Rss:").map(|_| fields.next()) {
                let bytes = kib.and_then(|k| k.parse::<u64>().ok()).unwrap_or(0) * 1024;
                makeup.total += bytes;
                let kind = if path.starts_with(&*cache) {
                    &mut makeup.plugin_code
                } else if path == *binary {
                    &mut makeup.server_binary
                } else if path.is_empty() || path.starts_with('[') {
                    &mut makeup.anonymous
                } else {
                    &mut makeup.other
                };
                *kind += bytes;
            } else if first.contains('-')
                && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
            {
                // A mapping's header: address perms offset dev inode [path].
                path = fields.nth(4).unwrap_or("").to_string();
            }
        }
        Some(makeup)
    }

    pub fn describe(&self) -> String {
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        format!(
            "{:.1} MiB: compiled plugins {:.1}, server binary {:.1}, anonymous (heap, stacks, instances) {:.1}, other {:.1}",
            mib(self.total),
            mib(self.plugin_code),
            mib(self.server_binary),
            mib(self.anonymous),
            mib(self.other)
        )
    }

    pub fn json(&self) -> Value {
        json!({"total": self.total, "plugin_code": self.plugin_code,
               "server_binary": self.server_binary, "anonymous": self.anonymous,
               "other": self.other})
    }
}
