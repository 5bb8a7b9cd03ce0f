//! The same `greet` tool written in Rust, Python, JavaScript, Go, C, C++ and Zig: start-up with
//! an empty and a warm compile cache, and the per-call cost of each against the native baseline.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use serde_json::{Value, json};

use crate::measure::{RssMakeUp, Scratch, Stats, cpu_ns, median};
use crate::startup::{AllReady, distinct_copies, time_to_all_called};
use crate::stdio::{Call, StdioServer};
use crate::{bench_config, bench_config_with, server_binary};

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
    /// Where the example plugins are (hello.wasm, textkit-py.wasm, textkit-js.wasm, hello-go.wasm,
    /// hello-c.wasm, hello-cpp.wasm, hello-zig.wasm).
    #[arg(long, default_value = "target/plugins")]
    plugin_dir: PathBuf,
    /// Also write the results here, as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Plugins in the many-plugins start (distinct copies of the Rust example).
    #[arg(long, default_value_t = 20)]
    many: usize,
    /// Measure only these languages (repeat for each; default: all of them). The many-plugins
    /// start is measured only with Rust.
    #[arg(long = "language", value_name = "LANGUAGE", value_parser = parse_language)]
    languages: Vec<String>,
    /// Another MCP server to measure in the same run: a command (run by `sh -c`) that serves
    /// MCP over stdio. Its tools are called like Palisade's, interleaved with them.
    #[arg(long, value_name = "CMD")]
    peer: Option<String>,
    /// The peer's `greet` for a language, as `LANGUAGE=TOOL` (Rust, Python or JavaScript),
    /// called with `{"name": "bench"}`; repeat for each. Default: `Rust=greet`.
    #[arg(long = "peer-tool", value_name = "LANGUAGE=TOOL", value_parser = parse_peer_tool)]
    peer_tools: Vec<(String, String)>,
}

/// `Python=py_greet` as a language and a tool.
fn parse_peer_tool(value: &str) -> std::result::Result<(String, String), String> {
    let (language, tool) = value
        .split_once('=')
        .filter(|(l, t)| !l.is_empty() && !t.is_empty())
        .ok_or("expected LANGUAGE=TOOL, such as Python=greet")?;
    let known = LANGUAGES.iter().map(|(l, _, _)| *l);
    match known.clone().find(|l| l.eq_ignore_ascii_case(language)) {
        Some(language) => Ok((language.to_string(), tool.to_string())),
        None => Err(format!(
            "unknown language `{language}`: one of {}",
            known.collect::<Vec<_>>().join(", ")
        )),
    }
}

/// One of [`LANGUAGES`], by name.
fn parse_language(value: &str) -> std::result::Result<String, String> {
    match LANGUAGES
        .iter()
        .find(|(l, _, _)| l.eq_ignore_ascii_case(value))
    {
        Some((language, _, _)) => Ok(language.to_string()),
        None => Err(format!(
            "unknown language `{value}`: one of {}",
            LANGUAGES.map(|(l, _, _)| l).join(", ")
        )),
    }
}

/// `greet` written against the WIT contract without the SDK (plugins/fixtures/greet-*), doing
/// what the SDK example's `greet` does: what the SDK costs per call is the difference.
const WITHOUT_SDK: [(&str, &str, &str); 2] = [
    ("Python", "greet-py", "greet-py.wasm"),
    ("JavaScript", "greet-js", "greet-js.wasm"),
];

/// The components of [`WITHOUT_SDK`] whose language is among `languages`.
fn twins_of(languages: &[(&str, &str, &str)]) -> Vec<(&'static str, &'static str, &'static str)> {
    WITHOUT_SDK
        .into_iter()
        .filter(|(l, _, _)| languages.iter().any(|(ours, _, _)| ours == l))
        .collect()
}

/// A server of `config` (written to `path`) once each of `plugins` has answered a call.
fn serve_ready(
    palisade: &Path,
    path: &Path,
    config: &str,
    cache: &Path,
    plugins: &[(&str, &str, &str)],
) -> Result<StdioServer> {
    std::fs::write(path, config)?;
    let mut server = StdioServer::start(palisade, path, cache)?;
    for (_, name, _) in plugins {
        server.call_when_ready(&Call::greet(&format!("{name}_greet")))?;
    }
    Ok(server)
}

/// The example plugins with the same `greet` tool: language, plugin name, wasm file name.
const LANGUAGES: [(&str, &str, &str); 7] = [
    ("Rust", "hello", "hello.wasm"),
    ("Python", "textkit-py", "textkit-py.wasm"),
    ("JavaScript", "textkit-js", "textkit-js.wasm"),
    ("Go", "hello-go", "hello-go.wasm"),
    ("C", "hello-c", "hello-c.wasm"),
    ("C++", "hello-cpp", "hello-cpp.wasm"),
    ("Zig", "hello-zig", "hello-zig.wasm"),
];

/// How long from starting the server to its answer to `initialize`, and to the answer of its
/// first `tools/call` (which waits for the plugin to load or compile).
fn time_to_first_call(palisade: &Path, config: &Path, cache: &Path, tool: &str) -> Result<Start> {
    let started = Instant::now();
    let mut server = StdioServer::start(palisade, config, cache)?;
    let initialized = started.elapsed();
    server.call_when_ready(&Call::greet(tool))?;
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

/// Where the calls of one row go: which server (an index into the servers started), and
/// whether its answer must be the example's greeting (the peer's may word it otherwise).
struct Target {
    server: usize,
    call: Call,
    exact: bool,
    /// Time the client waits before each call: a client that does something between calls, as
    /// a model does, rather than one calling back to back.
    pause: Duration,
}

/// The pause of the paced rows.
const PACED: Duration = Duration::from_millis(2);

/// One row of the per-call table.
struct Row {
    label: String,
    stats: Stats,
}

pub fn run(args: LanguageArgs) -> Result<()> {
    let palisade = server_binary()?;
    let scratch = Scratch::new()?;
    let languages: Vec<(&str, &str, &str)> = LANGUAGES
        .into_iter()
        .filter(|(l, _, _)| args.languages.is_empty() || args.languages.iter().any(|a| a == l))
        .collect();
    let plugins: Vec<(&str, PathBuf)> = languages
        .iter()
        .map(|(_, name, file)| (*name, args.plugin_dir.join(file)))
        .collect();

    // Start-up, one plugin per server: the first start compiles into the cache, where no
    // compiled copy of this component is yet (it is keyed by the component's digest), the next
    // ones load from it; the per-call servers then find every plugin compiled.
    let cache = scratch.0.join("cache");
    let mut starts = Vec::new();
    for ((language, name, _), plugin) in languages.iter().zip(&plugins) {
        let config = scratch.0.join(format!("{name}.toml"));
        std::fs::write(&config, bench_config(std::slice::from_ref(plugin))?)?;
        let tool = format!("{name}_greet");
        let size = std::fs::metadata(&plugin.1)?.len();
        let first = time_to_first_call(&palisade, &config, &cache, &tool)?;
        let warm = (0..args.starts.max(1))
            .map(|_| time_to_first_call(&palisade, &config, &cache, &tool).map(|s| s.called))
            .collect::<Result<Vec<_>>>()?;
        starts.push((*language, size, first, median(warm)));
    }
    let many = match languages[0].0 {
        "Rust" => Some(many_plugins(&palisade, &scratch, &plugins[0].1, &args)?),
        _ => None,
    };
    let (rows, native, memory) = per_call(&palisade, &scratch, &languages, &args)?;

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
    if let Some(many) = many {
        println!(
            "\nstart-up, {} plugins (copies of the Rust one): to the answer of `initialize`, and to \
             every plugin's first tools/call answered",
            args.many
        );
        println!(
            "{:<12} {:>16} {:>16}",
            "cache", "initialize ms", "all called ms"
        );
        for (cache, start) in [("empty", many.0), ("warm", many.1)] {
            println!(
                "{:<12} {:>16.1} {:>16.0}",
                cache,
                start.initialized.as_secs_f64() * 1e3,
                start.called.as_secs_f64() * 1e3
            );
        }
    }
    println!(
        "\nper call: sequential tools/call `greet` over stdio, {ROUNDS} interleaved rounds; \
         \"{} ms apart\": the client waits between calls; \"made on call\": ready_instances = 0 \
         (no instance built ahead); \"reused\": reuse = \"per-client\"; \"no SDK\": the same \
         `greet` written against the WIT contract without the SDK",
        PACED.as_millis()
    );
    println!(
        "{:<28} {:>7} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "language", "calls", "calls/s", "p50 µs", "p99 µs", "cpu µs", "p50/native"
    );
    for row in rows.iter().chain(std::iter::once(&native)) {
        let s = &row.stats;
        println!(
            "{:<28} {:>7} {:>10.0} {:>10.1} {:>10.1} {:>10} {:>11.2}x",
            row.label,
            s.calls,
            s.calls_per_sec,
            s.p50_us,
            s.p99_us,
            // A peer runs under `sh -c`: its server's CPU time is not the shell's.
            (s.cpu_us_per_call
                .filter(|_| !row.label.starts_with("peer ")))
            .map_or("-".to_string(), |cpu| format!("{cpu:.1}")),
            s.p50_us / native.stats.p50_us
        );
    }
    let twins = twins_of(&languages).len();
    println!(
        "\nresident memory, idle, the {} plugins loaded and called (with fresh instances, also the {twins} written without the SDK)",
        languages.len()
    );
    for (label, rss) in ["fresh instances", "reuse = \"per-client\""]
        .iter()
        .zip(&memory)
    {
        if let Some(rss) = rss {
            println!("{label:<28} {}", rss.describe());
        }
    }
    let peer_ratios = peer_ratios(&rows);
    if !peer_ratios.is_empty() {
        println!("\nagainst the peer (same run): p50 of the peer / p50 of Palisade");
        println!(
            "{:<11} {:>14} {:>10} {:>14}",
            "language", "Palisade µs", "peer µs", "peer/Palisade"
        );
        for (language, ours, theirs) in &peer_ratios {
            println!(
                "{:<11} {:>14.1} {:>10.1} {:>13.2}x",
                language,
                ours,
                theirs,
                theirs / ours
            );
        }
    }
    if let Some(path) = &args.json {
        let languages: Vec<Value> = starts
            .iter()
            .map(|(language, size, first, warm)| {
                json!({
                    "language": language,
                    "wasm_bytes": size,
                    "first_start_initialize_ms": first.initialized.as_secs_f64() * 1e3,
                    "first_start_ms": first.called.as_secs_f64() * 1e3,
                    "second_start_ms": warm.as_secs_f64() * 1e3,
                })
            })
            .collect();
        let per_call: Vec<Value> = rows
            .iter()
            .map(|row| {
                json!({
                    "label": row.label,
                    "per_call": row.stats.json(),
                    "p50_ratio_to_native": row.stats.p50_us / native.stats.p50_us,
                })
            })
            .collect();
        let report = json!({
            "benchmark": "languages",
            "languages": languages,
            "many_plugins": many.map(|many| json!({
                "plugins": args.many,
                "empty_initialize_ms": many.0.initialized.as_secs_f64() * 1e3,
                "empty_all_called_ms": many.0.called.as_secs_f64() * 1e3,
                "warm_initialize_ms": many.1.initialized.as_secs_f64() * 1e3,
                "warm_all_called_ms": many.1.called.as_secs_f64() * 1e3,
            })),
            "per_call": per_call,
            "native": native.stats.json(),
            "rss_idle_fresh": memory[0].map(|m| m.json()),
            "rss_idle_reused": memory[1].map(|m| m.json()),
            "peer": args.peer,
            "peer_ratios": peer_ratios.iter().map(|(language, ours, theirs)| json!({
                "language": language, "palisade_p50_us": ours, "peer_p50_us": theirs,
            })).collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Rounds the per-call samples are taken in, each calling every tool in turn, so that a slow
/// patch of the machine is shared by every row.
const ROUNDS: usize = 10;

/// `args.many` distinct copies of `wasm`: a start with an empty cache, then the median of
/// `args.starts` with a warm one.
fn many_plugins(
    palisade: &Path,
    scratch: &Scratch,
    wasm: &Path,
    args: &LanguageArgs,
) -> Result<(AllReady, AllReady)> {
    let copies = distinct_copies(wasm, &scratch.0.join("many"), args.many.max(1))?;
    let names: Vec<String> = copies.iter().map(|(name, _)| name.clone()).collect();
    let config = scratch.0.join("many.toml");
    std::fs::write(&config, bench_config(&copies)?)?;
    let cache = scratch.0.join("cache-many");
    let empty = time_to_all_called(palisade, &config, &cache, &names)?;
    let mut warm = (0..args.starts.max(1))
        .map(|_| time_to_all_called(palisade, &config, &cache, &names))
        .collect::<Result<Vec<_>>>()?;
    warm.sort_by_key(|start| start.called);
    Ok((empty, warm[warm.len() / 2]))
}

/// Per call: one server with every language's plugin, the `greet` components written without
/// the SDK (beside the SDK's examples they are set against) and the native baseline (called back
/// to back, and paced), one with the languages' plugins under `reuse = "per-client"` (their
/// resource schemes would collide in one), one that makes every instance when its call comes
/// (`ready_instances = 0`: the baseline of building them ahead), and the peer's tools when asked,
/// all interleaved. The rows, and the native one.
fn per_call(
    palisade: &Path,
    scratch: &Scratch,
    languages: &[(&str, &str, &str)],
    args: &LanguageArgs,
) -> Result<(Vec<Row>, Row, [Option<RssMakeUp>; 2])> {
    let without_sdk = twins_of(languages);
    let with_twins: Vec<_> = languages.iter().chain(&without_sdk).copied().collect();
    let plugin_list = |list: &[(&str, &str, &str)]| -> Vec<(String, PathBuf)> {
        list.iter()
            .map(|(_, name, file)| (name.to_string(), args.plugin_dir.join(file)))
            .collect()
    };
    let plugins = plugin_list(languages);
    let configs = [
        (
            "all.toml",
            bench_config(&plugin_list(&with_twins))?,
            &with_twins[..],
        ),
        (
            "reused.toml",
            bench_config_with(&plugins, "reuse = \"per-client\"\n")?,
            languages,
        ),
        (
            "on-call.toml",
            bench_config_with(&plugins, "ready_instances = 0\n")?,
            languages,
        ),
    ];
    let cache = scratch.0.join("cache");
    // Each server starts once the one before has its plugins ready (the first finds the
    // languages' compiled by the start-up runs; two compiling at once would share the cores and
    // wait past a call's timeout).
    // The twins were not in the start-up runs: compiled into the cache first by a server of
    // their own, so the measured one loads them (a server that compiles keeps the compiler's
    // memory, which would count in its resident memory).
    if !without_sdk.is_empty() {
        let config = bench_config(&plugin_list(&without_sdk))?;
        let path = scratch.0.join("without-sdk.toml");
        serve_ready(palisade, &path, &config, &cache, &without_sdk)?.stop();
    }
    let mut servers = Vec::new();
    for (file, config, list) in &configs {
        let path = scratch.0.join(file);
        servers.push(serve_ready(palisade, &path, config, &cache, list)?);
    }
    let greet = |server: usize, tool: &str| Target {
        server,
        call: Call::greet(tool),
        exact: true,
        pause: Duration::ZERO,
    };
    let mut targets: Vec<(String, Target)> = Vec::new();
    for (language, name, _) in languages {
        targets.push((language.to_string(), greet(0, &format!("{name}_greet"))));
    }
    for (language, name, _) in &without_sdk {
        targets.push((
            format!("{language}, no SDK"),
            greet(0, &format!("{name}_greet")),
        ));
    }
    for (language, name, _) in languages {
        let paced = Target {
            pause: PACED,
            ..greet(0, &format!("{name}_greet"))
        };
        targets.push((format!("{language}, {} ms apart", PACED.as_millis()), paced));
    }
    for (language, name, _) in languages {
        targets.push((
            format!("{language}, made on call"),
            greet(2, &format!("{name}_greet")),
        ));
    }
    for (language, name, _) in languages {
        targets.push((
            format!("{language}, reused"),
            greet(1, &format!("{name}_greet")),
        ));
    }
    if let Some(command) = &args.peer {
        let peer = servers.len();
        servers.push(StdioServer::start_peer(command)?);
        let tools = match args.peer_tools.is_empty() {
            true => vec![("Rust".to_string(), "greet".to_string())],
            false => args.peer_tools.clone(),
        };
        for (language, tool) in tools {
            let target = Target {
                exact: false,
                ..greet(peer, &tool)
            };
            targets.push((format!("peer {language}"), target));
        }
    }
    let native_paced = Target {
        pause: PACED,
        ..greet(0, "native_greet")
    };
    targets.push((
        format!("native, {} ms apart", PACED.as_millis()),
        native_paced,
    ));
    targets.push(("native".to_string(), greet(0, "native_greet")));
    let pids: Vec<u32> = servers.iter().map(StdioServer::pid).collect();
    let mut call = |target: &Target| -> Result<Duration> {
        std::thread::sleep(target.pause);
        let server = &mut servers[target.server];
        match target.exact {
            true => server.call(&target.call),
            false => server.call_unchecked(&target.call),
        }
    };
    for (_, target) in &targets {
        for _ in 0..args.warmup {
            call(target)?;
        }
    }
    let per_round = (args.calls / ROUNDS).max(1);
    let mut samples = vec![Vec::new(); targets.len()];
    // The server's CPU time during each row's calls.
    let mut cpu = vec![0u64; targets.len()];
    for _ in 0..ROUNDS {
        for (i, (_, target)) in targets.iter().enumerate() {
            // Paced calls take longer for the same samples: fewer of them.
            let calls = match target.pause.is_zero() {
                true => per_round,
                false => (per_round / 4).max(1),
            };
            let before = cpu_ns(pids[target.server]);
            for _ in 0..calls {
                samples[i].push(call(target)?);
            }
            cpu[i] += cpu_ns(pids[target.server]).saturating_sub(before);
        }
    }
    // Memory with the interpreted examples loaded and used, once idle (past the allocator's
    // trim): fresh instances, and with reuse (one instance of each kept for the client).
    std::thread::sleep(Duration::from_millis(2500));
    let memory = [
        RssMakeUp::of(servers[0].pid(), &cache, palisade),
        RssMakeUp::of(servers[1].pid(), &cache, palisade),
    ];
    for server in servers {
        server.stop();
    }
    let mut rows: Vec<Row> = targets
        .into_iter()
        .zip(samples.into_iter().zip(cpu))
        .map(|((label, _), (samples, cpu))| Row {
            label,
            stats: Stats::sequential(samples).with_cpu(cpu),
        })
        .collect();
    let native = rows.pop().context("no samples")?;
    Ok((rows, native, memory))
}

/// For each language the peer was measured in: Palisade's p50 (fresh instances) and the peer's.
fn peer_ratios(rows: &[Row]) -> Vec<(String, f64, f64)> {
    rows.iter()
        .filter_map(|peer| {
            let language = peer.label.strip_prefix("peer ")?;
            let ours = rows.iter().find(|row| row.label == language)?;
            Some((language.to_string(), ours.stats.p50_us, peer.stats.p50_us))
        })
        .collect()
}
