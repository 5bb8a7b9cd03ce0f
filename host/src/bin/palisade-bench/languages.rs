//! The same `greet` tool written in Rust, Python and JavaScript: start-up with an empty and a
//! warm compile cache, and the per-call cost of each against the native baseline.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

use crate::measure::{Scratch, Stats, median};
use crate::stdio::{Call, StdioServer};
use crate::{bench_config, server_binary};

#[derive(clap::Args)]
pub struct LanguageArgs {
    /// Calls per plugin, after warm-up.
    #[arg(long, default_value_t = 1000)]
    calls: usize,
    /// Warm-up calls per plugin, not measured.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    /// Starts with a warm cache per plugin; the median is reported.
    #[arg(long, default_value_t = 5)]
    starts: usize,
    /// Where the example plugins are (hello.wasm, textkit-py.wasm, textkit-js.wasm).
    #[arg(long, default_value = "target/plugins")]
    plugin_dir: PathBuf,
    /// Also write the results here, as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// The example plugins with the same `greet` tool: language, plugin name, wasm file name.
const LANGUAGES: [(&str, &str, &str); 3] = [
    ("Rust", "hello", "hello.wasm"),
    ("Python", "textkit-py", "textkit-py.wasm"),
    ("JavaScript", "textkit-js", "textkit-js.wasm"),
];

/// How long from starting the server to its answer to `initialize`, and to the answer of its
/// first `tools/call` (which waits for the plugin to load or compile).
fn time_to_first_call(palisade: &Path, config: &Path, cache: &Path, tool: &str) -> Result<Start> {
    let started = Instant::now();
    let mut server = StdioServer::start(palisade, config, cache)?;
    let initialized = started.elapsed();
    server.call(&Call::greet(tool))?;
    let called = started.elapsed();
    server.stop();
    Ok(Start {
        initialized,
        called,
    })
}

/// One server start.
#[derive(Clone, Copy)]
struct Start {
    /// To the answer of `initialize`.
    initialized: Duration,
    /// To the answer of the first `tools/call`.
    called: Duration,
}

pub fn run(args: LanguageArgs) -> Result<()> {
    let palisade = server_binary()?;
    let scratch = Scratch::new()?;
    let plugins: Vec<(&str, PathBuf)> = LANGUAGES
        .iter()
        .map(|(_, name, file)| (*name, args.plugin_dir.join(file)))
        .collect();

    // Start-up, one plugin per server: the first start compiles into an empty cache, the next
    // ones load from it.
    let mut starts = Vec::new();
    for ((language, name, _), plugin) in LANGUAGES.iter().zip(&plugins) {
        let config = scratch.0.join(format!("{name}.toml"));
        std::fs::write(&config, bench_config(std::slice::from_ref(plugin))?)?;
        let cache = scratch.0.join(format!("cache-{name}"));
        let tool = format!("{name}_greet");
        let size = std::fs::metadata(&plugin.1)?.len();
        let first = time_to_first_call(&palisade, &config, &cache, &tool)?;
        let warm = (0..args.starts.max(1))
            .map(|_| time_to_first_call(&palisade, &config, &cache, &tool).map(|s| s.called))
            .collect::<Result<Vec<_>>>()?;
        starts.push((*language, size, first, median(warm)));
    }

    // Per call: one server with all three plugins and the native baseline, interleaved.
    let config = scratch.0.join("all.toml");
    std::fs::write(&config, bench_config(&plugins)?)?;
    let mut server = StdioServer::start(&palisade, &config, &scratch.0.join("cache-all"))?;
    let mut tools: Vec<String> = LANGUAGES
        .iter()
        .map(|(_, name, _)| format!("{name}_greet"))
        .collect();
    tools.push("native_greet".to_string());
    let calls: Vec<Call> = tools.iter().map(|tool| Call::greet(tool)).collect();
    for call in &calls {
        for _ in 0..args.warmup {
            server.call(call)?;
        }
    }
    let rounds = 10;
    let per_round = (args.calls / rounds).max(1);
    let mut samples = vec![Vec::new(); calls.len()];
    for _ in 0..rounds {
        for (i, call) in calls.iter().enumerate() {
            for _ in 0..per_round {
                samples[i].push(server.call(call)?);
            }
        }
    }
    server.stop();
    let per_call: Vec<Stats> = samples.into_iter().map(Stats::sequential).collect();
    let Some(native) = per_call.last() else {
        bail!("no samples");
    };

    println!(
        "start-up: server start to the answer of `initialize` and of the first tools/call, one plugin"
    );
    println!(
        "{:<11} {:>10} {:>22} {:>21} {:>20}",
        "language",
        "wasm MB",
        "initialize (empty) ms",
        "first call (empty) ms",
        "first call (warm) ms"
    );
    for (language, size, first, warm) in &starts {
        println!(
            "{:<11} {:>10.1} {:>22.1} {:>21.0} {:>20.0}",
            language,
            *size as f64 / 1e6,
            first.initialized.as_secs_f64() * 1e3,
            first.called.as_secs_f64() * 1e3,
            warm.as_secs_f64() * 1e3
        );
    }
    println!(
        "\nper call: sequential tools/call `greet` over stdio, one server, {rounds} interleaved rounds"
    );
    println!(
        "{:<11} {:>7} {:>10} {:>10} {:>10} {:>12}",
        "language", "calls", "calls/s", "p50 µs", "p99 µs", "p50/native"
    );
    let labels = LANGUAGES.iter().map(|(l, _, _)| *l).chain(["native"]);
    for (label, s) in labels.zip(&per_call) {
        println!(
            "{:<11} {:>7} {:>10.0} {:>10.1} {:>10.1} {:>11.2}x",
            label,
            s.calls,
            s.calls_per_sec,
            s.p50_us,
            s.p99_us,
            s.p50_us / native.p50_us
        );
    }
    if let Some(path) = args.json {
        let rows: Vec<Value> = starts
            .iter()
            .zip(&per_call)
            .map(|((language, size, first, warm), call)| {
                json!({
                    "language": language,
                    "wasm_bytes": size,
                    "first_start_initialize_ms": first.initialized.as_secs_f64() * 1e3,
                    "first_start_ms": first.called.as_secs_f64() * 1e3,
                    "second_start_ms": warm.as_secs_f64() * 1e3,
                    "per_call": call.json(),
                    "p50_ratio_to_native": call.p50_us / native.p50_us,
                })
            })
            .collect();
        let report = json!({
            "benchmark": "languages",
            "languages": rows,
            "native": native.json(),
        });
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
