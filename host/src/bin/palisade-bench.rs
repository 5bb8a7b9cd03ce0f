//! `palisade-bench`: what the sandbox costs.
//!
//! - `palisade-bench` (no subcommand): sequential `tools/call` over stdio against a sandboxed
//!   plugin tool (`hello_greet`: fresh instance per call, every limit on) and against the same
//!   tool compiled into the host (`native_greet`), in one server process, interleaved in rounds
//!   so both see the same machine noise. Prints calls/s, p50 and p99 of each and their ratio.
//! - `palisade-bench languages`: the same `greet` tool written in Rust, Python and JavaScript:
//!   how long a server takes to answer its first call with an empty compile cache and with a
//!   warm one, and the per-call cost of each against the native baseline.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use clap::Parser;
use serde_json::{Value, json};

#[derive(Parser)]
#[command(
    about = "Measure sandboxed tools/call over stdio against a native baseline",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Benchmark>,
    #[command(flatten)]
    stdio: Args,
}

#[derive(clap::Subcommand)]
enum Benchmark {
    /// Start-up and per-call cost of plugins written in Rust, Python and JavaScript.
    Languages(LanguageArgs),
}

#[derive(clap::Args)]
struct LanguageArgs {
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
    /// The palisade binary (default: next to this one).
    #[arg(long)]
    palisade: Option<PathBuf>,
    /// Also write the results here, as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(clap::Args)]
struct Args {
    /// Calls per tool, after warm-up.
    #[arg(long, default_value_t = 4000)]
    calls: usize,
    /// Warm-up calls per tool, not measured.
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    /// Rounds the calls are split into, alternating the two tools.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// The hello plugin.
    #[arg(long, default_value = "target/plugins/hello.wasm")]
    plugin: PathBuf,
    /// The palisade binary (default: next to this one).
    #[arg(long)]
    palisade: Option<PathBuf>,
    /// Also write the results here, as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Send every call as a stateless MCP 2026-07-28 request (no initialize) instead of in a
    /// 2025-11-25 session.
    #[arg(long)]
    stateless: bool,
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// `_meta` of stateless requests; `None` in a session.
    meta: Option<Value>,
}

impl Client {
    /// Closes stdin and waits for the server to exit.
    fn stop(self) {
        let Client {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = child.wait();
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        let mut buf = String::new();
        loop {
            buf.clear();
            if self.stdout.read_line(&mut buf)? == 0 {
                bail!("the server closed stdout");
            }
            let message: Value = serde_json::from_str(&buf)?;
            if message["id"] == json!(id) {
                if let Some(error) = message.get("error") {
                    bail!("{method} failed: {error}");
                }
                return Ok(message["result"].clone());
            }
        }
    }

    fn call(&mut self, tool: &str) -> Result<Duration> {
        let started = Instant::now();
        let mut params = json!({"name": tool, "arguments": {"name": "bench"}});
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        let result = self.request("tools/call", params)?;
        let elapsed = started.elapsed();
        if result["content"][0]["text"] != "Hello, bench!" {
            bail!("{tool} answered {result}");
        }
        Ok(elapsed)
    }
}

struct Stats {
    calls: usize,
    calls_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let total: Duration = samples.iter().sum();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e6
    };
    Stats {
        calls: samples.len(),
        calls_per_sec: samples.len() as f64 / total.as_secs_f64(),
        p50_us: at(0.50),
        p99_us: at(0.99),
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Benchmark::Languages(args)) => languages(args),
        None => stdio(cli.stdio),
    }
}

/// The palisade binary: `flag`, else the one next to this benchmark.
fn palisade_path(flag: Option<PathBuf>) -> Result<PathBuf> {
    match flag {
        Some(p) => Ok(p),
        None => Ok(std::env::current_exe()?
            .parent()
            .context("no directory for this binary")?
            .join("palisade")),
    }
}

/// A configuration serving `plugins` (name, wasm) with every limit on but the call rates, which
/// are raised above what the benchmark sends (the defaults allow 3000 calls a minute from one
/// client).
fn bench_config(plugins: &[(&str, PathBuf)]) -> Result<String> {
    let mut config = String::new();
    for (name, wasm) in plugins {
        let path = std::fs::canonicalize(wasm)
            .with_context(|| format!("cannot find {}", wasm.display()))?;
        config.push_str(&format!(
            "[plugins.{name}]\npath = {:?}\n\n[plugins.{name}.limits]\ncalls_per_minute = 100000000\ncalls_per_minute_per_client = 100000000\n\n",
            path.display().to_string()
        ));
    }
    Ok(config)
}

/// Starts `palisade serve --native-baseline` with `config` and `cache` over stdio.
fn spawn_server(palisade: &Path, config: &Path, cache: &Path, stateless: bool) -> Result<Client> {
    let mut child = Command::new(palisade)
        .args(["serve", "--native-baseline", "--no-watch", "--config"])
        .arg(config)
        .arg("--cache-dir")
        .arg(cache)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", palisade.display()))?;
    let mut client = Client {
        stdin: child.stdin.take().context("stdin")?,
        stdout: BufReader::new(child.stdout.take().context("stdout")?),
        child,
        next_id: 0,
        meta: stateless.then(|| {
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {}})
        }),
    };
    if !stateless {
        client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "palisade-bench", "version": "0"}}),
        )?;
    }
    Ok(client)
}

/// A scratch directory for one benchmark run, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
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

/// Runs `rounds` rounds of `per_round` sequential calls of each tool, interleaved.
fn interleaved(
    client: &mut Client,
    tools: &[&str],
    rounds: usize,
    per_round: usize,
) -> Result<Vec<Vec<Duration>>> {
    let mut samples = vec![Vec::new(); tools.len()];
    for _ in 0..rounds {
        for (i, tool) in tools.iter().enumerate() {
            for _ in 0..per_round {
                samples[i].push(client.call(tool)?);
            }
        }
    }
    Ok(samples)
}

fn stats_json(s: &Stats) -> Value {
    json!({"calls": s.calls, "calls_per_sec": s.calls_per_sec, "p50_us": s.p50_us, "p99_us": s.p99_us})
}

fn stdio(args: Args) -> Result<()> {
    let palisade = palisade_path(args.palisade)?;
    let scratch = Scratch::new()?;
    let config = scratch.0.join("palisade.toml");
    std::fs::write(&config, bench_config(&[("hello", args.plugin.clone())])?)?;
    let mut client = spawn_server(&palisade, &config, &scratch.0.join("cache"), args.stateless)?;
    let tools = [("sandboxed", "hello_greet"), ("native", "native_greet")];
    for (_, tool) in tools {
        for _ in 0..args.warmup {
            client.call(tool)?;
        }
    }
    let rounds = args.rounds.max(1);
    let per_round = (args.calls / rounds).max(1);
    let names = tools.map(|(_, tool)| tool);
    let samples = interleaved(&mut client, &names, rounds, per_round)?;
    client.stop();

    let mut samples = samples.into_iter().map(stats);
    let (Some(sandboxed), Some(native)) = (samples.next(), samples.next()) else {
        bail!("no samples");
    };
    let protocol = if args.stateless {
        "stateless 2026-07-28 requests"
    } else {
        "a 2025-11-25 session"
    };
    println!(
        "sequential tools/call over stdio ({protocol}), one server, {rounds} interleaved rounds"
    );
    println!(
        "{:<10} {:>7} {:>10} {:>10} {:>10}",
        "tool", "calls", "calls/s", "p50 µs", "p99 µs"
    );
    for ((label, _), s) in tools.iter().zip([&sandboxed, &native]) {
        println!(
            "{:<10} {:>7} {:>10.0} {:>10.1} {:>10.1}",
            label, s.calls, s.calls_per_sec, s.p50_us, s.p99_us
        );
    }
    let p50_ratio = sandboxed.p50_us / native.p50_us;
    let throughput_ratio = sandboxed.calls_per_sec / native.calls_per_sec;
    println!("sandboxed/native: p50 {p50_ratio:.2}x, throughput {throughput_ratio:.2}x");
    if let Some(path) = args.json {
        let report = json!({
            "benchmark": "stdio sequential tools/call",
            "protocol": if args.stateless { "2026-07-28" } else { "2025-11-25" },
            "sandboxed": stats_json(&sandboxed),
            "native": stats_json(&native),
            "p50_ratio": p50_ratio,
            "throughput_ratio": throughput_ratio,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The example plugins with the same `greet` tool: language, plugin name, wasm file name.
const LANGUAGES: [(&str, &str, &str); 3] = [
    ("Rust", "hello", "hello.wasm"),
    ("Python", "textkit-py", "textkit-py.wasm"),
    ("JavaScript", "textkit-js", "textkit-js.wasm"),
];

/// How long from starting the server to the answer of its first `tools/call`.
fn time_to_first_call(
    palisade: &Path,
    config: &Path,
    cache: &Path,
    tool: &str,
) -> Result<Duration> {
    let started = Instant::now();
    let mut client = spawn_server(palisade, config, cache, false)?;
    client.call(tool)?;
    let elapsed = started.elapsed();
    client.stop();
    Ok(elapsed)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn languages(args: LanguageArgs) -> Result<()> {
    let palisade = palisade_path(args.palisade)?;
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
            .map(|_| time_to_first_call(&palisade, &config, &cache, &tool))
            .collect::<Result<Vec<_>>>()?;
        starts.push((*language, size, first, median(warm)));
    }

    // Per call: one server with all three plugins and the native baseline, interleaved.
    let config = scratch.0.join("all.toml");
    std::fs::write(&config, bench_config(&plugins)?)?;
    let mut client = spawn_server(&palisade, &config, &scratch.0.join("cache-all"), false)?;
    let mut tools: Vec<String> = LANGUAGES
        .iter()
        .map(|(_, name, _)| format!("{name}_greet"))
        .collect();
    tools.push("native_greet".to_string());
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    for tool in &tools {
        for _ in 0..args.warmup {
            client.call(tool)?;
        }
    }
    let rounds = 10;
    let per_round = (args.calls / rounds).max(1);
    let samples = interleaved(&mut client, &tools, rounds, per_round)?;
    client.stop();
    let per_call: Vec<Stats> = samples.into_iter().map(stats).collect();
    let Some(native) = per_call.last() else {
        bail!("no samples");
    };

    println!("start-up: server start to the answer of its first tools/call, one plugin");
    println!(
        "{:<11} {:>10} {:>16} {:>16}",
        "language", "wasm MB", "empty cache ms", "warm cache ms"
    );
    for (language, size, first, warm) in &starts {
        println!(
            "{:<11} {:>10.1} {:>16.0} {:>16.0}",
            language,
            *size as f64 / 1e6,
            first.as_secs_f64() * 1e3,
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
                    "first_start_ms": first.as_secs_f64() * 1e3,
                    "second_start_ms": warm.as_secs_f64() * 1e3,
                    "per_call": stats_json(call),
                    "p50_ratio_to_native": call.p50_us / native.p50_us,
                })
            })
            .collect();
        let report = json!({
            "benchmark": "languages",
            "languages": rows,
            "native": stats_json(native),
        });
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
