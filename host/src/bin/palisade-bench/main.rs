//! `palisade-bench`: what the sandbox costs.
//!
//! - `palisade-bench` (no subcommand): the whole suite, every sandboxed measurement next to its
//!   native baseline from the same run (a tool compiled into the host, `native.rs`):
//!   `tools/call` over stdio and Streamable HTTP, sequential and concurrent; large payloads;
//!   fuel metering on and off; start-up with 1 to 50 plugins; resident memory; a trivial call
//!   while other clients attack another plugin. Prints tables and the targets, and writes
//!   everything as JSON.
//! - `palisade-bench languages`: the same `greet` tool written in Rust, Python, JavaScript, Go,
//!   C, C++ and Zig:
//!   start-up with an empty and a warm compile cache, and the per-call cost of each.
//! - `palisade-bench serve`: the server every measurement talks to. It is `palisade serve`
//!   (the library's composition root, `palisade::serve`) with the baseline tools added, so the
//!   sandboxed and the native tools share one process and one request path.

mod attack;
mod fuel;
mod http;
mod languages;
mod measure;
mod native;
mod startup;
mod stdio;
mod suite;

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Parser;

#[derive(Parser)]
#[command(
    about = "Measure what Palisade's sandbox costs against tools compiled into the host",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Benchmark>,
    #[command(flatten)]
    suite: suite::SuiteArgs,
}

#[derive(clap::Subcommand)]
enum Benchmark {
    /// Start-up and per-call cost of plugins written in Rust, Python and JavaScript.
    Languages(languages::LanguageArgs),
    /// Serve like `palisade serve --no-watch`, plus the baseline tools `native_greet` and
    /// `native_blob`: the server the measurements start.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Configuration file (palisade.toml).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The compile cache to use.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Serve over HTTP at this address instead of stdio.
    #[arg(long, value_name = "ADDR", value_parser = palisade::config::parse_listen)]
    http: Option<std::net::SocketAddr>,
}

fn main() -> Result<()> {
    palisade::install_crypto_provider();
    let cli = Cli::parse();
    match cli.command {
        Some(Benchmark::Languages(args)) => languages::run(args),
        Some(Benchmark::Serve(args)) => serve(args),
        None => suite::run(cli.suite),
    }
}

/// `palisade-bench serve`: the library's composition root, run as `palisade serve` runs it.
fn serve(args: ServeArgs) -> Result<()> {
    palisade::serve::init_logging("info");
    let runtime = palisade::serve::async_runtime()?;
    let options = palisade::plugin_set::ServeOptions {
        config: Some(args.config),
        cache_dir: args.cache_dir,
        http: args.http,
        no_watch: true,
        ..Default::default()
    };
    let result = runtime.block_on(palisade::serve::serve(options, native::baseline_tools));
    runtime.shutdown_background();
    result
}

/// The program the measurements start: this benchmark, as `palisade-bench serve`.
fn server_binary() -> Result<PathBuf> {
    std::env::current_exe().context("cannot find this benchmark's own binary")
}

/// A configuration serving `plugins` (name, wasm) with every limit on but the call rates, which
/// are raised above what the benchmark sends (the defaults allow 3000 calls a minute from one
/// client).
fn bench_config(plugins: &[(impl AsRef<str>, PathBuf)]) -> Result<String> {
    bench_config_with(plugins, "")
}

/// What `--plugin-setting` and `--plugin-limit` add to every plugin of every configuration the
/// benchmark writes (TOML lines): for comparing settings run against run.
static EXTRA_SETTINGS: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();

/// Adds `settings` to every plugin's table and `limits` to its limits, in every configuration
/// written after this call.
fn add_to_every_plugin(settings: &[String], limits: &[String]) {
    let lines = |l: &[String]| l.iter().map(|l| format!("{l}\n")).collect::<String>();
    let _ = EXTRA_SETTINGS.set((lines(settings), lines(limits)));
}

/// [`bench_config`], with `settings` (TOML lines) added to every plugin's table.
fn bench_config_with(plugins: &[(impl AsRef<str>, PathBuf)], settings: &str) -> Result<String> {
    let (extra, limits) = EXTRA_SETTINGS.get().cloned().unwrap_or_default();
    let mut config = String::new();
    for (name, wasm) in plugins {
        let name = name.as_ref();
        let path = std::fs::canonicalize(wasm)
            .with_context(|| format!("cannot find {}", wasm.display()))?;
        config.push_str(&format!(
            "[plugins.{name}]\npath = {:?}\n{settings}{extra}\n[plugins.{name}.limits]\ncalls_per_minute = 100000000\ncalls_per_minute_per_client = 100000000\n{limits}\n",
            path.display().to_string()
        ));
    }
    Ok(config)
}
