//! The whole benchmark: every measurement of issue #8 in one run, printed as tables and written
//! as JSON, each sandboxed number next to its native baseline from the same run.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

use crate::http::{self, HttpClient, HttpServer, Mode};
use crate::measure::{RssMakeUp, RssPeak, Scratch, Stats, cpu_ns, median, ms, rss_bytes};

/// How long a server is left alone before its idle memory is read: past the allocator's trim,
/// which looks every 2 s.
const IDLE_SETTLE: Duration = Duration::from_millis(2500);
use crate::stdio::{Call, Expect, StdioServer};
use crate::{attack, bench_config, fuel, server_binary, startup};

#[derive(clap::Args)]
pub struct SuiteArgs {
    /// Measured calls per tool in each loop (sandboxed and native each), after warm-up.
    #[arg(long, default_value_t = 4000)]
    calls: usize,
    /// Rounds each concurrent loop is split into, alternating sandboxed and native (one-at-a-time
    /// loops alternate every 20 calls).
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Plugin counts for the start-up measurements.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 10, 50])]
    plugins: Vec<usize>,
    /// Starts with a warm cache per plugin count; the median is reported.
    #[arg(long, default_value_t = 5)]
    starts: usize,
    /// Calls of each large-payload request.
    #[arg(long, default_value_t = 50)]
    payload_calls: usize,
    /// `bench_primes` counts the primes below this (the CPU-bound call for fuel metering).
    #[arg(long, default_value_t = 200_000)]
    primes_below: u32,
    /// A fast run with few samples, to check that everything works (numbers are rough).
    #[arg(long)]
    quick: bool,
    /// A TOML line added to every sandboxed plugin's table, such as `ready_instances = 0`
    /// (repeatable): to compare a setting with the default, run against run.
    #[arg(long = "plugin-setting", value_name = "LINE")]
    plugin_settings: Vec<String>,
    /// A TOML line added to every sandboxed plugin's limits, such as `cores = 2` (repeatable).
    #[arg(long = "plugin-limit", value_name = "LINE")]
    plugin_limits: Vec<String>,
    /// Where the plugins are (hello.wasm, bench.wasm), as built by plugins/build.sh.
    #[arg(long, default_value = "target/plugins")]
    plugin_dir: PathBuf,
    /// Where to write the results as JSON.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "target/bench/palisade-bench.json"
    )]
    json: PathBuf,
}

const CONCURRENCY: usize = 16;
/// Calls per batch of a one-at-a-time loop, before it switches to the other tool.
const SEQUENTIAL_BATCH: usize = 20;
const PAYLOAD_BYTES: usize = 1 << 20;

/// One loop's two results.
struct Pair {
    label: String,
    clients: usize,
    sandboxed: Stats,
    native: Stats,
}

impl Pair {
    fn p50_ratio(&self) -> f64 {
        self.sandboxed.p50_us / self.native.p50_us
    }
    fn throughput_ratio(&self) -> f64 {
        self.sandboxed.calls_per_sec / self.native.calls_per_sec
    }
    fn cpu_ratio(&self) -> f64 {
        match (self.sandboxed.cpu_us_per_call, self.native.cpu_us_per_call) {
            (Some(s), Some(n)) => s / n,
            _ => f64::NAN,
        }
    }
    fn json(&self) -> Value {
        json!({"loop": self.label, "clients": self.clients,
               "sandboxed": self.sandboxed.json(), "native": self.native.json(),
               "p50_ratio": self.p50_ratio(), "throughput_ratio": self.throughput_ratio(),
               "server_cpu_ratio": self.cpu_ratio()})
    }
}

/// Latencies and wall time of one batch of calls.
type Batch = (Vec<Duration>, Duration);

/// `count` calls, each sent when the previous one is answered.
fn one_at_a_time(server: &mut StdioServer, call: &Call, count: usize) -> Result<Batch> {
    let latencies = (0..count)
        .map(|_| server.call(call))
        .collect::<Result<Vec<_>>>()?;
    let wall = latencies.iter().sum();
    Ok((latencies, wall))
}

/// Runs `run(call)` for sandboxed and native in alternating rounds and pairs up the results,
/// with the CPU time the server (process `pid`) spent on each.
fn interleave(
    label: &str,
    clients: usize,
    rounds: usize,
    pid: u32,
    calls: [&Call; 2],
    mut run: impl FnMut(&Call) -> Result<Batch>,
) -> Result<Pair> {
    let mut all: [(Batch, u64); 2] = Default::default();
    for _ in 0..rounds {
        for (i, call) in calls.iter().enumerate() {
            let cpu_before = cpu_ns(pid);
            let (latencies, wall) = run(call)?;
            all[i].1 += cpu_ns(pid).saturating_sub(cpu_before);
            all[i].0.0.extend(latencies);
            all[i].0.1 += wall;
        }
    }
    let [((s, s_wall), s_cpu), ((n, n_wall), n_cpu)] = all;
    Ok(Pair {
        label: label.into(),
        clients,
        sandboxed: Stats::new(s, s_wall).with_cpu(s_cpu),
        native: Stats::new(n, n_wall).with_cpu(n_cpu),
    })
}

pub fn run(mut args: SuiteArgs) -> Result<()> {
    if args.quick {
        args.calls = args.calls.min(400);
        args.rounds = args.rounds.min(2);
        args.starts = args.starts.min(1);
        args.payload_calls = args.payload_calls.min(5);
    }
    let rounds = args.rounds.max(1);
    crate::add_to_every_plugin(&args.plugin_settings, &args.plugin_limits);
    let palisade = server_binary()?;
    let hello = args.plugin_dir.join("hello.wasm");
    let bench = args.plugin_dir.join("bench.wasm");
    for wasm in [
        &hello,
        &bench,
        &args.plugin_dir.join("hostile.wasm"),
        &args.plugin_dir.join("misbehave.wasm"),
    ] {
        if !wasm.is_file() {
            bail!(
                "{} is missing: build the plugins first (plugins/build.sh, or ./dev bench)",
                wasm.display()
            );
        }
    }
    let scratch = Scratch::new()?;
    let greet = Call::greet("hello_greet");
    let native_greet = Call::greet("native_greet");
    let warmup = (args.calls / 10).clamp(10, 200);

    // stdio: one server with hello and bench.
    eprintln!("stdio: sequential and {CONCURRENCY} in flight ...");
    let config = scratch.0.join("stdio.toml");
    std::fs::write(
        &config,
        bench_config(&[("hello", hello.clone()), ("bench", bench.clone())])?,
    )?;
    let cache = scratch.0.join("cache");
    let mut server = StdioServer::start(&palisade, &config, &cache)?;
    let stdio_pid = server.pid();
    for call in [&greet, &native_greet] {
        for _ in 0..warmup {
            server.call(call)?;
        }
    }
    let per_round = (args.calls / rounds).max(1);
    // One call at a time alternates in small batches, so both tools see the same machine noise.
    let per_batch = SEQUENTIAL_BATCH.min(args.calls).max(1);
    let mut loops = vec![
        interleave(
            "stdio",
            1,
            (args.calls / per_batch).max(1),
            stdio_pid,
            [&greet, &native_greet],
            |call| one_at_a_time(&mut server, call, per_batch),
        )?,
        interleave(
            "stdio",
            CONCURRENCY,
            rounds,
            stdio_pid,
            [&greet, &native_greet],
            |call| server.pipelined(call, CONCURRENCY, per_round),
        )?,
    ];

    eprintln!("large payloads ...");
    let payloads = payloads(&mut server, args.payload_calls, rounds)?;
    server.stop();

    eprintln!("fuel metering ...");
    let fuel = fuel::measure(&bench, &cache, args.primes_below, rounds.max(5))?;

    // Start-up with N distinct plugins, then HTTP against the largest set.
    let mut starts = Vec::new();
    let mut idle_rss = None;
    let most = args.plugins.iter().copied().max().unwrap_or(1);
    for &count in &args.plugins {
        eprintln!("start-up with {count} plugins ...");
        let copies = startup::distinct_copies(&hello, &scratch.0.join(format!("n{count}")), count)?;
        let config = scratch.0.join(format!("n{count}.toml"));
        std::fs::write(&config, bench_config(&copies)?)?;
        let cache = scratch.0.join(format!("cache-n{count}"));
        let tools = (count * 2 + 2).min(50);
        // With an empty cache the server answers at once and compiles in the background: what
        // takes time is every plugin becoming ready.
        let names: Vec<String> = copies.iter().map(|(name, _)| name.clone()).collect();
        let empty = startup::time_to_all_called(&palisade, &config, &cache, &names)?;
        let mut warm = Vec::new();
        for i in 0..args.starts.max(1) {
            let (elapsed, server) = startup::time_to_first_list(&palisade, &config, &cache, tools)?;
            warm.push(elapsed);
            if count == most && i == 0 {
                // Idle: loaded, listed, nothing running, and past the allocator's trim (every
                // 2 s) of what loading freed.
                std::thread::sleep(IDLE_SETTLE);
                idle_rss = RssMakeUp::of(server.pid(), &cache, &palisade);
            }
            server.stop();
        }
        starts.push((count, empty, median(warm)));
    }

    eprintln!("Streamable HTTP with {most} plugins loaded ...");
    let copies = startup::distinct_copies(&hello, &scratch.0.join(format!("n{most}")), most)?;
    let config = scratch.0.join("http.toml");
    std::fs::write(&config, bench_config(&copies)?)?;
    let http = HttpServer::start(
        &palisade,
        &config,
        &scratch.0.join(format!("cache-n{most}")),
    )?;
    let first = Call::greet(&format!("{}_greet", copies[0].0));
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut load_rss = 0;
    for mode in [Mode::Session, Mode::Stateless] {
        for clients in [1, CONCURRENCY] {
            let label = match mode {
                Mode::Session => "HTTP session",
                Mode::Stateless => "HTTP stateless",
            };
            let mut connected = tokio.block_on(async {
                let mut all = Vec::new();
                for _ in 0..clients {
                    all.push(HttpClient::connect(http.addr, mode).await?);
                }
                anyhow::Ok(all)
            })?;
            let per_client = (args.calls / rounds / clients).max(1);
            tokio.block_on(http::concurrent(
                &mut connected,
                &first,
                warmup / clients + 1,
            ))?;
            tokio.block_on(http::concurrent(
                &mut connected,
                &native_greet,
                warmup / clients + 1,
            ))?;
            let peak = (clients == CONCURRENCY).then(|| RssPeak::start(http.pid()));
            loops.push(interleave(
                label,
                clients,
                rounds,
                http.pid(),
                [&first, &native_greet],
                |call| tokio.block_on(http::concurrent(&mut connected, call, per_client)),
            )?);
            if let Some(peak) = peak {
                load_rss = load_rss.max(peak.finish());
            }
        }
    }
    // Idle again once the clients are gone (the server gives freed memory back).
    std::thread::sleep(IDLE_SETTLE);
    let http_idle_rss = rss_bytes(http.pid());
    drop(http);

    eprintln!("under attack ...");
    let dir_entries = if args.quick { 10_000 } else { 100_000 };
    let attack = attack::measure(
        &palisade,
        &args.plugin_dir,
        &scratch.0,
        args.calls.min(2000),
        dir_entries,
    )?;

    let report = Report {
        loops,
        payloads,
        fuel,
        primes_below: args.primes_below,
        starts,
        most,
        idle_rss,
        http_idle_rss,
        load_rss,
        attack,
    };
    report.print();
    let json = report.json();
    if let Some(dir) = args.json.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.json, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("writing {}", args.json.display()))?;
    println!("\nwritten to {}", args.json.display());
    Ok(())
}

/// 1 MiB through a tool (sandboxed and native) and through a resource read.
struct Payloads {
    tool: Pair,
    resource: Stats,
}

fn payloads(server: &mut StdioServer, calls: usize, rounds: usize) -> Result<Payloads> {
    let blob = |tool: &str| Call {
        tool: tool.into(),
        arguments: json!({"bytes": PAYLOAD_BYTES}),
        expect: Expect::Length(PAYLOAD_BYTES),
    };
    let (sandboxed, native) = (blob("bench_blob"), blob("native_blob"));
    let per_round = (calls / rounds).max(1);
    let tool = interleave(
        "1 MiB tool result",
        1,
        rounds,
        server.pid(),
        [&sandboxed, &native],
        |call| one_at_a_time(server, call, per_round),
    )?;
    let mut reads = Vec::new();
    for _ in 0..calls {
        let started = std::time::Instant::now();
        let result = server.request("resources/read", json!({"uri": "bench://blob"}))?;
        reads.push(started.elapsed());
        let len = result["contents"][0]["text"].as_str().map_or(0, str::len);
        if len != PAYLOAD_BYTES {
            bail!("resources/read bench://blob gave {len} bytes");
        }
    }
    Ok(Payloads {
        tool,
        resource: Stats::sequential(reads),
    })
}

struct Report {
    loops: Vec<Pair>,
    payloads: Payloads,
    fuel: fuel::FuelCost,
    primes_below: u32,
    /// Plugin count; with an empty cache, times to `initialize` and to every plugin ready; with
    /// a warm one, to the first whole tools/list.
    starts: Vec<(usize, startup::AllReady, Duration)>,
    most: usize,
    idle_rss: Option<RssMakeUp>,
    http_idle_rss: Option<u64>,
    load_rss: u64,
    attack: attack::UnderAttack,
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// A target: what it is, the measured value, whether it is met.
struct Target {
    what: String,
    measured: String,
    met: bool,
}

impl Report {
    fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        if let Some(stdio) = self
            .loops
            .iter()
            .find(|l| l.label == "stdio" && l.clients == 1)
        {
            targets.push(Target {
                what: "stdio tools/call p50 <= 1.25x native".into(),
                measured: format!("{:.2}x", stdio.p50_ratio()),
                met: stdio.p50_ratio() <= 1.25,
            });
        }
        for l in self
            .loops
            .iter()
            .filter(|l| l.label.starts_with("HTTP") && l.clients == CONCURRENCY)
        {
            targets.push(Target {
                what: format!(
                    "{} throughput at {} clients >= 0.8x native",
                    l.label, l.clients
                ),
                measured: format!("{:.2}x", l.throughput_ratio()),
                met: l.throughput_ratio() >= 0.8,
            });
        }
        for (count, limit_ms) in [(10, 30.0), (50, 100.0)] {
            if let Some((_, _, warm)) = self.starts.iter().find(|(n, _, _)| *n == count) {
                targets.push(Target {
                    what: format!("start-up, {count} plugins, warm cache < {limit_ms} ms"),
                    measured: format!("{:.1} ms", ms(*warm)),
                    met: ms(*warm) < limit_ms,
                });
            }
        }
        if let Some(rss) = self.idle_rss.filter(|_| self.most >= 50) {
            targets.push(Target {
                what: format!("RSS idle with {} plugins < 50 MiB", self.most),
                measured: format!("{:.1} MiB", mib(rss.total)),
                met: rss.total < 50 << 20,
            });
        }
        targets.push(Target {
            what: "p50 of a trivial call under the worst attack <= 2x quiet".into(),
            measured: format!("{:.2}x", self.attack.worst_ratio()),
            met: self.attack.worst_ratio() <= 2.0,
        });
        targets.push(Target {
            what: "fuel metering overhead < 15%".into(),
            measured: format!("{:.1}%", self.fuel.overhead() * 100.0),
            met: self.fuel.overhead() < 0.15,
        });
        targets
    }

    fn print(&self) {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|m| m.trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        println!(
            "\npalisade-bench: {cpu}, {cores} cores; sandboxed and native measured in one run, interleaved"
        );
        println!(
            "\ntools/call of a trivial tool: hello_greet (sandboxed: fresh instance per call, every limit on) vs native_greet (compiled into the host)"
        );
        println!(
            "{:<15} {:>3} | {:>7} {:>7} {:>7} {:>6} | {:>7} {:>7} {:>7} {:>6} | {:>5} {:>7} {:>5}",
            "loop",
            "n",
            "calls/s",
            "p50 µs",
            "p99 µs",
            "cpu µs",
            "calls/s",
            "p50 µs",
            "p99 µs",
            "cpu µs",
            "p50",
            "calls/s",
            "cpu"
        );
        println!(
            "{:<15} {:>3} | {:^30} | {:^30} | {:^19}",
            "", "", "sandboxed", "native", "sandboxed/native"
        );
        for l in &self.loops {
            let (s, n) = (&l.sandboxed, &l.native);
            println!(
                "{:<15} {:>3} | {:>7.0} {:>7.1} {:>7.1} {:>6.1} | {:>7.0} {:>7.1} {:>7.1} {:>6.1} | {:>4.2}x {:>6.2}x {:>4.2}x",
                l.label,
                l.clients,
                s.calls_per_sec,
                s.p50_us,
                s.p99_us,
                s.cpu_us_per_call.unwrap_or(f64::NAN),
                n.calls_per_sec,
                n.p50_us,
                n.p99_us,
                n.cpu_us_per_call.unwrap_or(f64::NAN),
                l.p50_ratio(),
                l.throughput_ratio(),
                l.cpu_ratio()
            );
        }
        println!("n: clients (stdio: requests in flight); cpu µs: the server's CPU time per call");
        println!("\nlarge payloads over stdio, one at a time");
        let t = &self.payloads.tool;
        println!(
            "1 MiB tool result: sandboxed p50 {:.2} ms, native p50 {:.2} ms ({:.2}x)",
            t.sandboxed.p50_us / 1e3,
            t.native.p50_us / 1e3,
            t.p50_ratio()
        );
        println!(
            "1 MiB resource read: p50 {:.2} ms, p99 {:.2} ms",
            self.payloads.resource.p50_us / 1e3,
            self.payloads.resource.p99_us / 1e3
        );
        println!(
            "\nstart-up: server start to the answer of `initialize` and to every plugin called \
             once (empty cache), and to the first whole tools/list (warm cache)"
        );
        println!(
            "{:>8} {:>23} {:>22} {:>20}",
            "plugins", "empty: initialize ms", "empty: all ready ms", "warm: listed ms"
        );
        for (count, empty, warm) in &self.starts {
            println!(
                "{count:>8} {:>23.1} {:>22.0} {:>20.1}",
                ms(empty.initialized),
                ms(empty.called),
                ms(*warm)
            );
        }
        println!("\nresident memory");
        if let Some(rss) = self.idle_rss {
            println!(
                "idle, {} plugins loaded (stdio): {}",
                self.most,
                rss.describe()
            );
        }
        if let Some(rss) = self.http_idle_rss {
            println!(
                "idle after the HTTP load, {} plugins loaded: {:.1} MiB",
                self.most,
                mib(rss)
            );
        }
        println!(
            "peak under {CONCURRENCY} HTTP clients: {:.1} MiB",
            mib(self.load_rss)
        );
        let f = &self.fuel;
        println!(
            "\nfuel metering: bench_primes below {} ({} fuel): metered {:.1} ms, unmetered {:.1} ms, overhead {:.1}%",
            self.primes_below,
            f.fuel_used,
            ms(f.metered),
            ms(f.unmetered),
            f.overhead() * 100.0
        );
        self.attack.print();
        println!("\ntargets");
        for t in self.targets() {
            let verdict = if t.met { "met" } else { "NOT MET" };
            println!("{:<58} {:>10}  {verdict}", t.what, t.measured);
        }
    }

    fn json(&self) -> Value {
        json!({
            "loops": self.loops.iter().map(Pair::json).collect::<Vec<_>>(),
            "payloads": {
                "tool_1mib": self.payloads.tool.json(),
                "resource_read_1mib": self.payloads.resource.json(),
            },
            "fuel": {
                "primes_below": self.primes_below,
                "fuel_used": self.fuel.fuel_used,
                "metered_ms": ms(self.fuel.metered),
                "unmetered_ms": ms(self.fuel.unmetered),
                "overhead": self.fuel.overhead(),
            },
            "startup": self.starts.iter().map(|(count, empty, warm)| json!({
                "plugins": count, "empty_cache_initialize_ms": ms(empty.initialized),
                "empty_cache_all_ready_ms": ms(empty.called), "warm_cache_ms": ms(*warm),
            })).collect::<Vec<_>>(),
            "rss_bytes": {
                "plugins": self.most,
                "idle_stdio": self.idle_rss.map(|r| r.total),
                "idle_stdio_make_up": self.idle_rss.map(|r| r.json()),
                "idle_http": self.http_idle_rss,
                "peak_http_16_clients": self.load_rss,
            },
            "under_attack": self.attack.json(),
            "targets": self.targets().iter().map(|t| json!({
                "target": t.what, "measured": t.measured, "met": t.met,
            })).collect::<Vec<_>>(),
        })
    }
}
