//! `palisade compile`: fills the compile cache the way `serve` would, every plugin at once up to
//! the cores, with a progress bar per plugin on a terminal (a line per plugin otherwise). `serve`
//! no longer needs it (it compiles in the background); it is for images and slow machines, so
//! that the first start is as quick as the next.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use sha2::{Digest as _, Sha256};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::plugin_load;
use crate::plugin_set::ServeOptions;
use crate::runtime::Runtime;
use crate::runtime::compile_progress::{CompileProgress, ProgressSink};

/// Compiles `files` and the plugins of `config` into the cache.
pub async fn compile(
    files: Vec<PathBuf>,
    config: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
) -> Result<()> {
    anyhow::ensure!(
        config.is_some() || !files.is_empty(),
        "nothing to compile: give FILE.wasm or --config palisade.toml"
    );
    let options = ServeOptions {
        config,
        plugins: files,
        ..ServeOptions::default()
    };
    let (config, wanted) = options.resolve_pinned().await?;
    let mut cache = plugin_load::compile_cache(cache_dir, config.cache_dir.clone())?;
    let bars = std::io::stderr().is_terminal().then(Bars::default);
    if let Some(bars) = &bars {
        cache = cache.with_progress(bars.sink());
    }
    let runtime = Arc::new(Runtime::new(cache)?);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let slots = Arc::new(Semaphore::new(cores));
    let mut compiles = JoinSet::new();
    for plugin in wanted.into_iter().map(|w| w.config.spec) {
        let (runtime, slots) = (runtime.clone(), slots.clone());
        compiles.spawn(async move {
            let _slot = slots.acquire_owned().await;
            let name = plugin.name.clone();
            let compiled = tokio::task::spawn_blocking(move || {
                compile_one(&runtime, &plugin.name, &plugin.path)
            })
            .await
            .context("the compile stopped unexpectedly")
            .and_then(|r| r);
            (name, compiled)
        });
    }
    let (mut failed, mut total) = (0, 0);
    while let Some(joined) = compiles.join_next().await {
        total += 1;
        let (name, compiled) = joined.context("the compile stopped unexpectedly")?;
        let line = match compiled {
            Ok(Compiled::Already) => format!("{name}: already compiled"),
            Ok(Compiled::Now(seconds)) => format!("{name}: compiled in {seconds:.1} s"),
            Err(e) => {
                failed += 1;
                format!("{name}: {e:#}")
            }
        };
        match &bars {
            Some(bars) => bars.finish(&name, line),
            None => println!("{line}"),
        }
    }
    anyhow::ensure!(
        failed == 0,
        "{failed} of {total} plugins could not be compiled"
    );
    Ok(())
}

enum Compiled {
    Already,
    /// Compiled now, in this many seconds.
    Now(f64),
}

fn compile_one(runtime: &Runtime, name: &str, path: &std::path::Path) -> Result<Compiled> {
    let wasm = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let sha256: [u8; 32] = Sha256::digest(&wasm).into();
    if runtime.cache.contains(&runtime.engine, &sha256) {
        return Ok(Compiled::Already);
    }
    let started = Instant::now();
    runtime
        .cache
        .load(&runtime.engine, &wasm, &sha256, name)
        .with_context(|| format!("{} is not a valid component", path.display()))?;
    Ok(Compiled::Now(started.elapsed().as_secs_f64()))
}

/// A progress bar per plugin being compiled, on stderr.
#[derive(Clone)]
struct Bars {
    all: MultiProgress,
    /// By plugin name, from its first report.
    bars: Arc<Mutex<HashMap<String, ProgressBar>>>,
}

impl Default for Bars {
    fn default() -> Self {
        Bars {
            all: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bars: Arc::default(),
        }
    }
}

/// Percent-based bar: the compile's own progress is an estimate (see `compile_progress`).
const BAR_TEMPLATE: &str = "{prefix:>16} [{bar:32}] {percent:>3}% {msg}";
const BAR_STEPS: u64 = 1000;

impl Bars {
    fn sink(&self) -> ProgressSink {
        let this = self.clone();
        Arc::new(move |p: &CompileProgress| this.show(p))
    }

    fn show(&self, p: &CompileProgress) {
        let mut bars = self.bars.lock();
        if p.done && !bars.contains_key(&p.plugin) {
            // Too quick to have shown a bar: its line is enough.
            return;
        }
        let bar = bars.entry(p.plugin.clone()).or_insert_with(|| {
            let bar = self.all.add(ProgressBar::new(BAR_STEPS));
            let style = ProgressStyle::with_template(BAR_TEMPLATE)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(p.plugin.clone());
            bar
        });
        bar.set_position((p.fraction() * BAR_STEPS as f64) as u64);
        if !p.done {
            bar.set_message(format!(
                "about {} s left",
                p.remaining().as_secs_f64().ceil().max(1.0)
            ));
        }
    }

    /// Ends `plugin`'s bar (if it had one) and prints `line` on stdout, above the other bars.
    fn finish(&self, plugin: &str, line: String) {
        let bar = self.bars.lock().remove(plugin);
        if let Some(bar) = bar {
            bar.finish_and_clear();
            self.all.remove(&bar);
        }
        self.all.suspend(|| println!("{line}"));
    }
}
