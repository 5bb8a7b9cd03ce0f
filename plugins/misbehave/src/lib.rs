//! A plugin that misbehaves on request, for tests that show the host contains it. Never load it
//! in a real deployment.

use std::hint::black_box;
use std::io::{self, Write};
use std::time::Duration;
use std::{env, fs, thread};

use palisade_sdk::{NoArgs, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

const MIB: usize = 1024 * 1024;

/// Loops forever. `black_box` keeps the optimizer from proving the loop useless.
fn spin(_: NoArgs) -> String {
    let mut n: u64 = 0;
    loop {
        n = black_box(n.wrapping_add(1));
    }
}

/// Allocates 1 MiB chunks and keeps them, writing every page so the memory is really used.
fn grow_memory(_: NoArgs) -> String {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = vec![0u8; MIB];
        for page in chunk.chunks_mut(4096) {
            page[0] = 1;
        }
        kept.push(black_box(chunk));
    }
}

fn panic_on_purpose(_: NoArgs) -> String {
    panic!("misbehave panicked on purpose")
}

/// Recurses without end. The opaque condition and the work after the call keep it from being
/// turned into a loop or removed; the array makes each frame big.
#[inline(never)]
fn deeper(depth: u64) -> u64 {
    let frame = black_box([depth; 32]);
    if black_box(depth) == u64::MAX {
        return depth;
    }
    let below = deeper(depth + 1);
    black_box(below.wrapping_add(frame[(depth % 32) as usize]))
}

fn recurse(_: NoArgs) -> String {
    format!("recursion ended at {}", deeper(0))
}

/// Tries to reach files outside the sandbox; a test asserts no line says `ALLOWED`.
fn escape(_: NoArgs) -> String {
    let mut lines: Vec<String> = [
        "/etc/passwd",
        "../../../../etc/passwd",
        "/roots/../../etc/passwd",
        "/",
    ]
    .into_iter()
    .map(|path| match try_read(path) {
        Ok(what) => format!("ALLOWED: {path}: {what}"),
        Err(e) => format!("denied: {path}: {e}"),
    })
    .collect();
    lines.push(match fs::read_dir("/") {
        Ok(entries) => format!("ALLOWED: / (list): {} entries", entries.count()),
        Err(e) => format!("denied: / (list): {e}"),
    });
    lines.join("\n")
}

/// Seeing a path at all counts as reaching it, even where reading it then fails (a directory).
fn try_read(path: &str) -> io::Result<String> {
    let meta = fs::metadata(path)?;
    Ok(match fs::read(path) {
        Ok(bytes) => format!("read {} bytes", bytes.len()),
        Err(e) => format!(
            "exists ({} bytes, dir: {}), but read failed: {e}",
            meta.len(),
            meta.is_dir()
        ),
    })
}

/// Writes 64 MiB to stdout and to stderr. Write errors are ignored: the host may close or cap the
/// streams, and the point is the pressure, not the delivery.
fn flood_stdout(_: NoArgs) -> String {
    let mut chunk = vec![b'x'; 64 * 1024];
    chunk[64 * 1024 - 1] = b'\n';
    for _ in 0..(64 * MIB / chunk.len()) {
        let _ = io::stdout().write_all(&chunk);
        let _ = io::stderr().write_all(&chunk);
    }
    let _ = io::stdout().flush();
    "flooded".to_string()
}

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

fn sleep(args: Sleep) -> String {
    thread::sleep(Duration::from_millis(args.ms));
    format!("slept {} ms", args.ms)
}

/// What the process sees of its environment and arguments (the host should give none).
#[derive(Deserialize, JsonSchema)]
struct Progress {
    /// How many progress reports to send, as fast as possible.
    steps: u32,
}

/// Floods the host with progress reports, some going backwards: the host must forward only
/// increasing values, rate-limited, and none after the response.
fn progress(args: Progress) -> String {
    for step in 1..=args.steps {
        palisade_sdk::host::report_progress(f64::from(step), Some(f64::from(args.steps)), None);
        palisade_sdk::host::report_progress(0.5, None, Some("backwards"));
    }
    format!("reported {} steps", args.steps)
}

/// Works until the client cancels, checking now and then, as a well-behaved long task does.
fn until_cancelled(_: NoArgs) -> String {
    for _ in 0..6000 {
        if palisade_sdk::host::is_cancelled() {
            eprintln!("misbehave saw the cancellation and stopped cleanly");
            return "stopped cleanly".into();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    "never cancelled".into()
}

fn environment(_: NoArgs) -> String {
    let args: Vec<String> = env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let vars: Vec<String> = env::vars_os()
        .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    let mut text = format!("args ({}):", args.len());
    for arg in &args {
        text.push_str(&format!("\n  {arg}"));
    }
    text.push_str(&format!("\nenv ({}):", vars.len()));
    for var in &vars {
        text.push_str(&format!("\n  {var}"));
    }
    text
}

#[derive(Deserialize, JsonSchema)]
struct Log {
    /// One of debug, info, notice, warning, error, critical, alert, emergency.
    level: String,
    /// How many messages to log, numbered from 1.
    count: u32,
}

/// Logs `count` messages at `level` through the host, as fast as it can.
fn log(args: Log) -> Result<String, String> {
    use palisade_sdk::host::LogLevel;
    let level = match args.level.as_str() {
        "debug" => LogLevel::Debug,
        "info" => LogLevel::Info,
        "notice" => LogLevel::Notice,
        "warning" => LogLevel::Warning,
        "error" => LogLevel::Error,
        "critical" => LogLevel::Critical,
        "alert" => LogLevel::Alert,
        "emergency" => LogLevel::Emergency,
        other => return Err(format!("unknown level `{other}`")),
    };
    for n in 1..=args.count {
        palisade_sdk::host::log(level, &format!("message {n}"));
    }
    Ok(format!("logged {} messages", args.count))
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("spin", spin).description("Loop forever"),
        Tool::new("grow_memory", grow_memory).description("Allocate memory until stopped"),
        Tool::new("panic", panic_on_purpose).description("Panic"),
        Tool::new("recurse", recurse).description("Recurse until the stack runs out"),
        Tool::new("escape", escape).description("Try to read files outside the sandbox"),
        Tool::new("flood_stdout", flood_stdout).description("Write 64 MiB to stdout and to stderr"),
        Tool::new("sleep", sleep).description("Sleep for ms milliseconds"),
        Tool::new("env", environment).description("Show the environment variables and arguments the plugin sees"),
        Tool::new("progress", progress).description("Report progress many times, some of it backwards"),
        Tool::new("until_cancelled", until_cancelled).description("Work until cancelled, checking is-cancelled"),
        Tool::new("ok", |_: NoArgs| "still fine").description("Answer `still fine`"),
        Tool::new("log", log).description("Log count messages at level through the host"),
    ],
}
