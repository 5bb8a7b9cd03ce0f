//! `palisade-bench`: what the sandbox costs.
//!
//! - `palisade-bench` (no subcommand): the whole suite, every sandboxed measurement next to its
//!   native baseline from the same run (a tool compiled into the host, `--native-baseline`):
//!   `tools/call` over stdio and Streamable HTTP, sequential and concurrent; large payloads;
//!   fuel metering on and off; start-up with 1 to 50 plugins; resident memory; a trivial call
//!   while other clients attack another plugin. Prints tables and the targets, and writes
//!   everything as JSON.
//! - `palisade-bench languages`: the same `greet` tool written in Rust, Python and JavaScript:
//!   start-up with an empty and a warm compile cache, and the per-call cost of each.

mod attack;
mod fuel;
mod http;
mod languages;
mod measure;
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
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Benchmark::Languages(args)) => languages::run(args),
        None => suite::run(cli.suite),
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
fn bench_config(plugins: &[(impl AsRef<str>, PathBuf)]) -> Result<String> {
    let mut config = String::new();
    for (name, wasm) in plugins {
        let name = name.as_ref();
        let path = std::fs::canonicalize(wasm)
            .with_context(|| format!("cannot find {}", wasm.display()))?;
        config.push_str(&format!(
            "[plugins.{name}]\npath = {:?}\n\n[plugins.{name}.limits]\ncalls_per_minute = 100000000\ncalls_per_minute_per_client = 100000000\n\n",
            path.display().to_string()
        ));
    }
    Ok(config)
}
