//! `palisade-bench`: what the sandbox costs. Sequential `tools/call` over stdio against a
//! sandboxed plugin tool (`hello_greet`: fresh instance per call, every limit on) and against the
//! same tool compiled into the host (`native_greet`), in one server process, interleaved in rounds
//! so both see the same machine noise. Prints calls/s, p50 and p99 of each and their ratio.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use clap::Parser;
use serde_json::{Value, json};

#[derive(Parser)]
#[command(about = "Measure sandboxed tools/call over stdio against a native baseline")]
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
    let args = Args::parse();
    let palisade = match args.palisade {
        Some(p) => p,
        None => std::env::current_exe()?
            .parent()
            .context("no directory for this binary")?
            .join("palisade"),
    };
    let scratch = std::env::temp_dir().join(format!("palisade-bench-{}", std::process::id()));
    let cache = scratch.join("cache");
    std::fs::create_dir_all(&scratch)?;
    // Every limit stays on; only the call rates are raised above what the benchmark sends (the
    // defaults allow 3000 calls a minute from one client).
    let config = scratch.join("palisade.toml");
    let plugin = std::fs::canonicalize(&args.plugin)
        .with_context(|| format!("cannot find {}", args.plugin.display()))?;
    std::fs::write(
        &config,
        format!(
            "[plugins.hello]\npath = {:?}\n\n[plugins.hello.limits]\ncalls_per_minute = 100000000\ncalls_per_minute_per_client = 100000000\n",
            plugin.display().to_string()
        ),
    )?;
    let mut child = Command::new(&palisade)
        .args(["serve", "--native-baseline", "--no-watch", "--config"])
        .arg(&config)
        .arg("--cache-dir")
        .arg(&cache)
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
        meta: args.stateless.then(|| {
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {}})
        }),
    };
    if !args.stateless {
        client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "palisade-bench", "version": "0"}}),
        )?;
    }
    let tools = [("sandboxed", "hello_greet"), ("native", "native_greet")];
    for (_, tool) in tools {
        for _ in 0..args.warmup {
            client.call(tool)?;
        }
    }
    let rounds = args.rounds.max(1);
    let per_round = (args.calls / rounds).max(1);
    let mut samples = [Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for (i, (_, tool)) in tools.iter().enumerate() {
            for _ in 0..per_round {
                samples[i].push(client.call(tool)?);
            }
        }
    }
    drop(client.stdin);
    let _ = client.child.wait();
    let _ = std::fs::remove_dir_all(&scratch);

    let [sandboxed, native] = samples.map(stats);
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
        let row = |s: &Stats| json!({"calls": s.calls, "calls_per_sec": s.calls_per_sec, "p50_us": s.p50_us, "p99_us": s.p99_us});
        let report = json!({
            "benchmark": "stdio sequential tools/call",
            "protocol": if args.stateless { "2026-07-28" } else { "2025-11-25" },
            "sandboxed": row(&sandboxed),
            "native": row(&native),
            "p50_ratio": p50_ratio,
            "throughput_ratio": throughput_ratio,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
