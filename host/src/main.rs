//! The `palisade` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use palisade::inspect::inspect;
use palisade::plugin_commands as commands;
use palisade::plugin_set::{self, ServeOptions};
use palisade::runtime::Runtime;

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
    /// Add a plugin from a registry, a URL or a file: fetch it, show what it exports and every
    /// capability it imports next to what it is granted (nothing), and after you agree write
    /// its section to the configuration and lock its digest and tool definitions in
    /// palisade.lock beside it.
    Add {
        /// oci://REGISTRY/REPOSITORY:TAG, oci://REGISTRY/REPOSITORY@sha256:..., https://HOST/x.wasm
        /// or a file.
        reference: String,
        /// The plugin's name (default: the repository's or the file's last part).
        #[arg(long)]
        name: Option<String>,
        /// Require a cosign signature by this public key (PEM), now and at every load.
        #[arg(long, value_name = "FILE", conflicts_with = "identity")]
        key: Option<PathBuf>,
        /// Require a keyless Sigstore signature by this identity (an email, or a CI workflow
        /// URI), with --issuer; the trusted root is [sources] trusted_root.
        #[arg(long, requires = "issuer")]
        identity: Option<String>,
        /// The OIDC issuer of --identity, such as https://token.actions.githubusercontent.com.
        #[arg(long, requires = "identity")]
        issuer: Option<String>,
        #[command(flatten)]
        edit: EditArgs,
    },
    /// Fetch what each plugin's source names now (or one plugin's), show how it differs from
    /// palisade.lock (digest, tool definitions, imports), and accept it when you agree.
    Update {
        /// The plugin to update; every plugin from a registry or a URL by default.
        name: Option<String>,
        #[command(flatten)]
        edit: EditArgs,
    },
    /// Remove a plugin's section from the configuration and its entry from palisade.lock.
    Remove {
        /// The plugin.
        name: String,
        /// The configuration file.
        #[arg(long, value_name = "FILE", default_value = "palisade.toml")]
        config: PathBuf,
    },
    /// Show the grants users gave by answering "always" when a plugin with `ask = true` reached
    /// for a host or an environment variable (kept in palisade.grants beside the configuration).
    Grants {
        #[command(subcommand)]
        action: Option<GrantsAction>,
        /// The configuration file; palisade.grants is beside it.
        #[arg(
            long,
            value_name = "FILE",
            default_value = "palisade.toml",
            global = true
        )]
        config: PathBuf,
    },
    /// Push a component to an OCI registry as a CNCF Wasm artifact (config
    /// application/vnd.wasm.config.v0+json, one application/wasm layer), for `palisade add`.
    Publish {
        /// The component.
        file: PathBuf,
        /// oci://REGISTRY/REPOSITORY:TAG
        target: String,
        /// Registry settings and credentials from this configuration's [sources].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Sign it with this private key (PEM: PKCS#8, or cosign's encrypted key with the
        /// password in COSIGN_PASSWORD), pushing cosign's signature tag beside it.
        #[arg(long, value_name = "KEY")]
        sign_key: Option<PathBuf>,
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
    /// Make a component of a WASI preview-1 core module, as Go, C, C++ and Zig compilers write
    /// for wasm32-wasip1: the world's types are embedded and the module's WASI imports adapted.
    /// The world is the Go and C SDKs' (`palisade:sdk/plugin`, bundled) unless --wit names another.
    Componentize {
        /// The core module (a reactor: Go -buildmode=c-shared, clang -mexec-model=reactor).
        module: PathBuf,
        /// Where to write the component.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// The WIT its bindings were generated from: a directory (with deps/) or a file.
        #[arg(long, value_name = "PATH")]
        wit: Option<PathBuf>,
        /// The world in that WIT (by name, or as package/world).
        #[arg(long)]
        world: Option<String>,
    },
    /// Write a plugin skeleton in a folder NAME: one tool, a Makefile (`make` builds NAME.wasm,
    /// `make serve` serves it) and a README. The SDKs come from the Palisade checkout this
    /// binary was built in (or --sdk) until they are published.
    New {
        /// The plugin's name: a-z, 0-9 and -, starting with a letter.
        name: String,
        /// Its language.
        #[arg(long, value_enum)]
        lang: palisade::authoring::new::Language,
        /// A Palisade checkout to take the SDKs from.
        #[arg(long, value_name = "DIR")]
        sdk: Option<PathBuf>,
    },
    /// Show the cluster of a configuration with [cluster]: whether its Redis answers and how
    /// fast, and the replicas seen in the last 15 seconds. Exits 1 when Redis does not answer
    /// or no replica is there.
    Status {
        /// The configuration whose [cluster] to look at.
        #[arg(long, value_name = "FILE", default_value = "palisade.toml")]
        config: PathBuf,
    },
}

#[derive(Subcommand)]
enum GrantsAction {
    /// Remove remembered grants of a plugin: the named ones (a host as listed, or an
    /// environment variable's name), or all of them. A running server sees it at once.
    Revoke {
        /// The plugin.
        plugin: String,
        /// Grants to remove; all of the plugin's when none is given.
        grants: Vec<String>,
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
    /// Expose this directory as a root to plugins granted roots, for clients that give no roots
    /// of their own. Repeatable.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Where plugins see the roots: host-paths (at the path the client named, the default) or
    /// /roots (at /roots/<directory name>) (overrides [server] roots_at).
    #[arg(long, value_name = "WHERE", value_parser = palisade::config::parse_roots_at)]
    roots_at: Option<palisade::config::RootsAt>,
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
    /// Serve the operator's console at http://ADDR/console and print a one-time login link on
    /// stderr: PORT (on 127.0.0.1), localhost:PORT or IP:PORT (overrides [console] listen).
    #[arg(long, value_name = "ADDR", value_parser = palisade::config::parse_listen)]
    console: Option<std::net::SocketAddr>,
    #[command(flatten)]
    cache: CacheArgs,
}

#[derive(clap::Args)]
struct EditArgs {
    /// The configuration file to change; palisade.lock is beside it.
    #[arg(long, value_name = "FILE", default_value = "palisade.toml")]
    config: PathBuf,
    /// Answer yes instead of asking (for scripts).
    #[arg(long)]
    yes: bool,
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
    palisade::install_crypto_provider();
    let cli = Cli::parse();
    // The commands that talk to a person (add, update, ...) print what matters themselves;
    // their logs would only bury the question they ask.
    let talks_to_a_person = matches!(
        cli.command,
        Command::Add { .. }
            | Command::Update { .. }
            | Command::Remove { .. }
            | Command::Grants { .. }
            | Command::Publish { .. }
            | Command::Token { .. }
            | Command::Status { .. }
            | Command::Componentize { .. }
            | Command::New { .. }
    );
    palisade::serve::init_logging(if talks_to_a_person { "warn" } else { "info" });
    let runtime = match palisade::serve::async_runtime() {
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
                let runtime = Runtime::new(palisade::plugin_load::compile_cache(cache.cache_dir, None)?)?;
                let config = plugin_set::plugin_to_inspect(&plugin, config.as_deref()).await?;
                print!("{}", inspect(&runtime, config).await?);
                Ok(())
            }
            Command::Compile {
                plugins,
                config,
                cache,
            } => palisade::compile_command::compile(plugins, config, cache.cache_dir).await,
            Command::Add {
                reference,
                name,
                key,
                identity,
                issuer,
                edit,
            } => {
                commands::add(commands::AddRequest {
                    reference,
                    name,
                    key,
                    identity: identity.zip(issuer),
                    config: edit.config,
                    yes: edit.yes,
                    cache_dir: edit.cache.cache_dir,
                })
                .await
            }
            Command::Update { name, edit } => {
                commands::update(commands::UpdateRequest {
                    name,
                    config: edit.config,
                    yes: edit.yes,
                    cache_dir: edit.cache.cache_dir,
                })
                .await
            }
            Command::Remove { name, config } => commands::remove(&name, &config),
            Command::Grants { action, config } => match action {
                None => palisade::grants::commands::show(&config).map(|out| print!("{out}")),
                Some(GrantsAction::Revoke { plugin, grants }) => {
                    palisade::grants::commands::revoke(&config, &plugin, &grants)
                        .map(|out| print!("{out}"))
                }
            },
            Command::Publish {
                file,
                target,
                config,
                sign_key,
                cache,
            } => {
                commands::publish(commands::PublishRequest {
                    file,
                    target,
                    config,
                    sign_key,
                    cache_dir: cache.cache_dir,
                })
                .await
            }
            Command::Token { bare } => {
                let token = palisade::config::access::new_token()?;
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
            Command::Componentize {
                module,
                output,
                wit,
                world,
            } => {
                let request = palisade::authoring::componentize::Request {
                    module,
                    output,
                    wit,
                    world,
                };
                let size = palisade::authoring::componentize::componentize(&request)?;
                eprintln!("wrote {} ({size} bytes)", request.output.display());
                Ok(())
            }
            Command::New { name, lang, sdk } => {
                let request = palisade::authoring::new::Request {
                    name,
                    language: lang,
                    sdk,
                    parent: std::env::current_dir()?,
                    palisade: std::env::current_exe()?,
                };
                let written = palisade::authoring::new::write(&request)?;
                println!("wrote {}:", written.dir.display());
                for file in &written.files {
                    println!("  {file}");
                }
                for note in &written.notes {
                    println!("note: {note}");
                }
                println!(
                    "\nnext: cd {} && make && make serve   (the SDK comes from the checkout until it is published)",
                    request.name
                );
                Ok(())
            }
            Command::Status { config } => {
                let (report, healthy) = palisade::cluster::status::report(&config).await?;
                print!("{report}");
                if !healthy {
                    anyhow::bail!("the cluster is not healthy (see above)");
                }
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
        roots_at: args.roots_at,
        page_size: args.page_size,
        cache_dir: args.cache.cache_dir,
        no_watch: args.no_watch,
        http: args.http,
        console: args.console,
    };
    palisade::serve::serve(options, palisade::serve::no_host_tools).await
}
