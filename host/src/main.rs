//! The `palisade` command line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};

use palisade::catalog::Catalog;
use palisade::config::{self, Config, Limits, PluginConfig, RootsAccess};
use palisade::mcp::Server;
use palisade::runtime::sandbox::Root;
use palisade::runtime::{CompileCache, Plugin, Runtime, inspect};

/// Palisade: an MCP server that runs every tool as a sandboxed WebAssembly component.
///
/// Logs go to stderr; set RUST_LOG (for example RUST_LOG=debug) to see more.
#[derive(Parser)]
#[command(version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (one JSON-RPC message per line) until stdin closes.
    Serve(ServeArgs),
    /// Describe a plugin: the interfaces it exports, its tools, and the imports it needs.
    Inspect {
        /// The component (.wasm) to describe.
        plugin: PathBuf,
        #[command(flatten)]
        cache: CacheArgs,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Configuration file (palisade.toml): plugins, their grants and limits.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Load this component as a plugin named after its file stem, with default limits and
    /// read-only access to the --root directories. Repeatable.
    #[arg(long = "plugin", value_name = "FILE.wasm")]
    plugins: Vec<PathBuf>,
    /// Expose this directory as a root, at /roots/<directory name> inside plugins granted roots.
    /// Repeatable.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Also serve `native_greet`, a tool compiled into the host: the baseline `palisade-bench`
    /// compares sandboxed calls against.
    #[arg(long)]
    native_baseline: bool,
    /// Items per page of tools/list (overrides [server] page_size; default 50).
    #[arg(long, value_name = "N")]
    page_size: Option<usize>,
    #[command(flatten)]
    cache: CacheArgs,
}

#[derive(clap::Args)]
struct CacheArgs {
    /// Where compiled components are cached (default: $XDG_CACHE_HOME/palisade/components or
    /// ~/.cache/palisade/components). Must be writable only by you.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("palisade: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::Inspect { plugin, cache } => {
                let name = name_from_file(&plugin);
                let runtime = Runtime::new(cache_for(cache.cache_dir, None))?;
                let config = PluginConfig {
                    name,
                    path: plugin,
                    prefix: String::new(),
                    roots: RootsAccess::None,
                    dirs: Vec::new(),
                    limits: Limits::default(),
                };
                print!("{}", inspect(&runtime, config).await?);
                Ok(())
            }
        }
    });
    // Plugin calls that outlive stdin are bounded by their deadlines; don't wait on stragglers.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("palisade: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> Result<()> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config {
            page_size: config::DEFAULT_PAGE_SIZE,
            cache_dir: None,
            plugins: Vec::new(),
        },
    };
    if let Some(page_size) = args.page_size {
        anyhow::ensure!(page_size > 0, "--page-size must be at least 1");
        config.page_size = page_size;
    }
    let mut cli_plugins = Vec::new();
    for path in &args.plugins {
        let name = name_from_file(path);
        config::check_plugin_name(&name).map_err(|why| {
            anyhow::anyhow!("--plugin {}: {why}; rename the file", path.display())
        })?;
        anyhow::ensure!(
            !config.plugins.iter().any(|p| p.name == name),
            "--plugin {}: a plugin named `{name}` is already loaded; rename the file",
            path.display()
        );
        cli_plugins.push(name.clone());
        config.plugins.push(PluginConfig {
            prefix: name.clone(),
            name,
            path: path.clone(),
            roots: RootsAccess::ReadOnly,
            dirs: Vec::new(),
            limits: Limits::default(),
        });
    }
    if config.plugins.is_empty() {
        tracing::warn!(
            "no plugins: give --plugin FILE.wasm or a --config with [plugins.NAME] sections"
        );
    }
    let roots = Root::from_dirs(&args.roots)?;
    let runtime = Runtime::new(cache_for(args.cache.cache_dir, config.cache_dir.clone()))?;
    let mut plugins = Vec::new();
    for plugin in config.plugins {
        // Say where the plugin was asked for, so the operator knows what to fix.
        let origin = match (&args.config, cli_plugins.contains(&plugin.name)) {
            (Some(file), false) => format!("{}: [plugins.{}]", file.display(), plugin.name),
            _ => format!("--plugin {}", plugin.path.display()),
        };
        let plugin = Plugin::load(&runtime, plugin)
            .await
            .with_context(|| origin)?;
        tracing::info!(
            plugin = &*plugin.name,
            tools = plugin.tools.len(),
            "plugin loaded"
        );
        plugins.push(Arc::new(plugin));
    }
    let native = if args.native_baseline {
        palisade::native::baseline_tools()
    } else {
        Vec::new()
    };
    let catalog = Catalog::new(plugins, native).context("cannot serve these plugins together")?;
    let server = Arc::new(Server {
        catalog: Arc::new(catalog),
        page_size: config.page_size,
        roots: Arc::new(roots),
    });
    tracing::info!(tools = server.catalog.tools().len(), "serving MCP on stdio");
    palisade::transport::stdio::serve(server).await
}

/// A plugin given as a file is named after the file's stem (`hello.wasm` → `hello`).
fn name_from_file(path: &std::path::Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn cache_for(flag: Option<PathBuf>, configured: Option<PathBuf>) -> CompileCache {
    let dir = flag
        .or(configured)
        .or_else(CompileCache::default_dir)
        .unwrap_or_else(|| std::env::temp_dir().join("palisade-components"));
    CompileCache::new(dir)
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}
