//! The `palisade` command line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use sha2::{Digest as _, Sha256};

use palisade::catalog::Catalog;
use palisade::inspect::inspect;
use palisade::mcp::stateless::request_state::StateKey;
use palisade::mcp::{Server, StateSettings};
use palisade::reload;
use palisade::runtime::sandbox::Root;
use palisade::runtime::{CompileCache, Runtime};
use palisade::setup::{self, ServeOptions};
use palisade::transport::http::HttpOptions;
use palisade::transport::http::guard::AllowList;

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
    /// Describe a plugin: its SHA-256, the interfaces it exports, its tools, and each import it
    /// needs next to what the sandbox (and the configuration, with --config) grants for it.
    Inspect {
        /// The component (.wasm) to describe, or with --config the name of a configured plugin.
        plugin: PathBuf,
        /// Show the grants this configuration gives the plugin (matched by name or by path).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Compile plugins into the cache now, so that the next `serve` starts at once. A large
    /// component (one built from Python or JavaScript) takes seconds to compile the first time,
    /// longer than some clients wait for a server to start.
    Compile {
        /// Components to compile, besides the plugins of --config.
        #[arg(value_name = "FILE.wasm")]
        plugins: Vec<PathBuf>,
        /// Compile every plugin of this configuration.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Make a new random bearer token for [[auth.tokens]]: prints the token (give it to the
    /// client) and its SHA-256 (put that in the configuration).
    Token {
        /// Print only the token: a secret for a file, such as `request_state_key_file`.
        #[arg(long)]
        bare: bool,
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
    /// Expose this directory as a root, at /roots/<directory name> inside plugins granted roots,
    /// for clients that give no roots of their own. Repeatable.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Also serve `native_greet` and `native_blob`, tools compiled into the host: the baseline
    /// `palisade-bench` compares sandboxed calls against.
    #[arg(long)]
    native_baseline: bool,
    /// Items per page of every list (overrides [server] page_size; default 50).
    #[arg(long, value_name = "N")]
    page_size: Option<usize>,
    /// Do not reload plugins and the configuration when their files change (overrides
    /// [server] watch).
    #[arg(long)]
    no_watch: bool,
    /// Serve MCP over HTTP at http://ADDR/mcp instead of stdio: PORT (on 127.0.0.1),
    /// localhost:PORT or IP:PORT (overrides [server.http] listen).
    #[arg(long, value_name = "ADDR", value_parser = palisade::config::parse_listen)]
    http: Option<std::net::SocketAddr>,
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

/// Task polls between two looks at I/O readiness (tokio's default is 61).
const EVENT_INTERVAL: u32 = 1;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Look for I/O (a client's next request) at every scheduling round rather than every
        // 61: a plugin spinning until its deadline yields at each epoch tick, and without this
        // other clients' sockets would wait up to 61 of its slices to be noticed.
        .event_interval(EVENT_INTERVAL)
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
            Command::Inspect {
                plugin,
                config,
                cache,
            } => {
                let runtime = Runtime::new(cache_for(cache.cache_dir, None)?)?;
                let config = setup::plugin_to_inspect(&plugin, config.as_deref())?;
                print!("{}", inspect(&runtime, config).await?);
                Ok(())
            }
            Command::Compile {
                plugins,
                config,
                cache,
            } => compile(plugins, config, cache.cache_dir),
            Command::Token { bare } => {
                let token = setup::new_token()?;
                if bare {
                    println!("{token}");
                    return Ok(());
                }
                println!("token:  {token}");
                println!(
                    "sha256: {}",
                    hex::encode(palisade::config::access::sha256(&token))
                );
                println!(
                    "\nGive the token to the client (Authorization: Bearer <token>); put the hash in\n[[auth.tokens]] sha256 = \"...\" with a name and a scope."
                );
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
    let options = ServeOptions {
        config: args.config,
        plugins: args.plugins,
        roots: args.roots,
        page_size: args.page_size,
        cache_dir: args.cache.cache_dir,
        native_baseline: args.native_baseline,
        no_watch: args.no_watch,
        http: args.http,
    };
    let (config, wanted) = options.resolve()?;
    if wanted.is_empty() {
        tracing::warn!(
            "no plugins: give --plugin FILE.wasm or a --config with [plugins.NAME] sections"
        );
    }
    let roots = Root::from_dirs(&config.roots)?;
    let runtime = Arc::new(Runtime::new(cache_for(
        options.cache_dir.clone(),
        config.cache_dir.clone(),
    )?)?);
    if let Some(root) = roots.iter().find(|r| runtime.cache.overlaps(&r.host_path)) {
        anyhow::bail!(
            "the root {} contains the compile cache {} (or lies inside it): a plugin granted \
             roots could write native code the server runs; serve another directory, or move \
             the cache (--cache-dir)",
            root.host_path.display(),
            runtime.cache.dir().display()
        );
    }
    let plugins = setup::load_all(&runtime, wanted).await?;
    let native = if options.native_baseline {
        palisade::native::baseline_tools()
    } else {
        Vec::new()
    };
    let catalog =
        Catalog::new(plugins.clone(), native).context("cannot serve these plugins together")?;
    let audit = config
        .audit
        .clone()
        .map(palisade::audit::AuditLog::open)
        .transpose()?;
    let request_state = StateSettings {
        key: match &config.request_state.key_file {
            Some(file) => {
                let secret = std::fs::read_to_string(file).with_context(|| {
                    format!("cannot read the request state key file {}", file.display())
                })?;
                StateKey::from_secret(&secret)
                    .with_context(|| format!("request state key file {}", file.display()))?
            }
            None => StateKey::random()?,
        },
        ttl: config.request_state.ttl,
    };
    let server = Server::new(
        catalog,
        config.page_size,
        roots,
        config.access.clone(),
        audit,
        request_state,
    );
    if config.watch {
        // Serving matters more than reloading: without a watcher, say so and go on.
        if let Err(e) = reload::start(server.clone(), runtime, options, plugins) {
            tracing::warn!("live reload is off: cannot watch files: {e:#}");
        }
    }
    // A burst of clients leaves freed memory behind; give it back once they are gone.
    palisade::memory::start_trimming();
    let tools = server.catalog().tools().len();
    match config.http.listen {
        Some(listen) => {
            let options = HttpOptions {
                listen,
                allow: AllowList {
                    hosts: config.http.allowed_hosts.clone(),
                    origins: config.http.allowed_origins.clone(),
                },
                idle_timeout: config.http.session_idle_timeout,
                max_body_bytes: config.http.max_body_bytes,
                header_timeout: config.http.header_timeout,
                body_timeout: config.http.body_timeout,
                max_sessions: config.http.max_sessions,
                max_sessions_per_client: config.http.max_sessions_per_client,
            };
            tracing::info!(tools, "serving MCP over HTTP");
            palisade::transport::http::serve(server, options).await
        }
        None => {
            tracing::info!(tools, "serving MCP on stdio");
            palisade::transport::stdio::serve(server).await
        }
    }
}

/// `palisade compile`: fills the compile cache the way `serve` would use it.
fn compile(files: Vec<PathBuf>, config: Option<PathBuf>, cache_dir: Option<PathBuf>) -> Result<()> {
    anyhow::ensure!(
        config.is_some() || !files.is_empty(),
        "nothing to compile: give FILE.wasm or --config palisade.toml"
    );
    let options = ServeOptions {
        config,
        plugins: files,
        ..ServeOptions::default()
    };
    let (config, wanted) = options.resolve()?;
    let runtime = Runtime::new(cache_for(cache_dir, config.cache_dir.clone())?)?;
    for plugin in wanted.iter().map(|w| &w.config) {
        let wasm = std::fs::read(&plugin.spec.path).with_context(|| {
            format!(
                "{}: cannot read {}",
                plugin.spec.name,
                plugin.spec.path.display()
            )
        })?;
        let sha256: [u8; 32] = Sha256::digest(&wasm).into();
        if runtime.cache.contains(&runtime.engine, &sha256) {
            println!("{}: already compiled", plugin.spec.name);
            continue;
        }
        let started = std::time::Instant::now();
        runtime
            .cache
            .load(&runtime.engine, &wasm, &sha256, &plugin.spec.name)
            .with_context(|| {
                format!(
                    "{}: {} is not a valid component",
                    plugin.spec.name,
                    plugin.spec.path.display()
                )
            })?;
        println!(
            "{}: compiled in {:.1} s",
            plugin.spec.name,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// The compile cache: `--cache-dir`, else the configuration's, else the user's cache directory.
fn cache_for(flag: Option<PathBuf>, configured: Option<PathBuf>) -> Result<CompileCache> {
    let dir = match flag.or(configured) {
        Some(dir) => dir,
        None => CompileCache::default_dir()?,
    };
    CompileCache::open(&dir)
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
