//! The composition root of a server: configuration, then the runtime, then the server, then one
//! transport, answering at once while the plugins load in the background (`reload::start`, which
//! serves each as it is ready, then reloads on changes). `palisade serve` runs it; so does the
//! benchmark, with its in-host baseline tools. Every catalog is built from the same pieces:
//! `plugin_load::load_plugin` and `Catalog::new` with the same in-host tools.

use std::sync::{Arc, OnceLock, Weak};

use anyhow::{Context as _, Result};

use crate::audit::AuditLog;
use crate::catalog::{Catalog, HostTool, InHostTools};
use crate::cluster::bus::RedisBus;
use crate::cluster::limits::RedisLimits;
use crate::cluster::sessions::SharedSessions;
use crate::cluster::tasks::{RedisTasks, keep_leases};
use crate::cluster::{Cluster, presence};
use crate::console::Console;
use crate::grants::UserGrants;
use crate::mcp::roots::ServedRoots;
use crate::mcp::stateless::request_state::StateKey;
use crate::mcp::{Reports, Server, StateSettings};
use crate::plugin_load;
use crate::plugin_set::{self, ServeOptions};
use crate::reload;
use crate::runtime::Root;
use crate::runtime::compile_progress::{CompileProgress, ProgressSink, log_progress};
use crate::runtime::{Plugin, Runtime};
use crate::telemetry::{Metrics, Tracing};
use crate::transport::http::HttpOptions;
use crate::transport::http::guard::AllowList;
use crate::{shutdown, transport};

/// No tools compiled into the host: what `palisade serve` serves.
pub fn no_host_tools() -> Vec<HostTool> {
    Vec::new()
}

/// Task polls between two looks at I/O readiness (tokio's default is 61).
const EVENT_INTERVAL: u32 = 1;

/// The async runtime a server runs on.
pub fn async_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Look for I/O (a client's next request) at every scheduling round rather than every
        // 61: a plugin spinning until its deadline yields at each epoch tick, and without this
        // other clients' sockets would wait up to 61 of its slices to be noticed.
        .event_interval(EVENT_INTERVAL)
        .build()
}

/// Logs to stderr, filtered by `RUST_LOG` (default: info).
pub fn init_logging(default_level: &str) {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::{Layer as _, fmt};
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    // The filter is the stderr log's only: the console keeps plugins' lines whatever it says.
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    tracing_subscriber::registry()
        .with(stderr)
        .with(crate::telemetry::log_tail::layer())
        .init();
}

/// Serves `options` (and the tools `in_host` gives) until the transport ends: stdin closes, or
/// the process is stopped.
pub async fn serve(options: ServeOptions, in_host: InHostTools) -> Result<()> {
    let (config, wanted) = options.resolve_pinned().await?;
    plugin_set::check_files(&wanted)?;
    if wanted.is_empty() {
        tracing::warn!(
            "no plugins: give --plugin FILE.wasm or a --config with [plugins.NAME] sections"
        );
    }
    let roots = Root::from_dirs(&config.roots, config.roots_at)?;
    // Compiles report their progress to the log, and to the console once the server exists.
    let compiling: Arc<OnceLock<Weak<Server>>> = Arc::default();
    let progress: ProgressSink = {
        let (log, compiling) = (log_progress(), compiling.clone());
        Arc::new(move |p: &CompileProgress| {
            log(p);
            if let Some(server) = compiling.get().and_then(Weak::upgrade) {
                server.loading.compiling(&p.plugin, p.fraction());
            }
        })
    };
    let runtime = Arc::new(Runtime::new(
        plugin_load::compile_cache(options.cache_dir.clone(), config.cache_dir.clone())?
            .with_progress(progress),
    )?);
    if let Some(root) = roots.iter().find(|r| runtime.cache.overlaps(&r.host_path)) {
        anyhow::bail!(
            "the root {} contains the compile cache {} (or lies inside it): a plugin granted \
             roots could write native code the server runs; serve another directory, or move \
             the cache (--cache-dir)",
            root.host_path.display(),
            runtime.cache.dir().display()
        );
    }
    // Limits are shared before any plugin loads: a plugin's gate counts where it was made.
    let cluster = match &config.cluster {
        Some(settings) => {
            let cluster = Cluster::connect(settings.clone()).await?;
            runtime.share_limits(Arc::new(RedisLimits::new(cluster.clone())));
            Some(cluster)
        }
        None => None,
    };
    // The in-host tools at once; the plugins as they become ready.
    // Checked again when each plugin loads; refused here so that the start stops.
    for w in &wanted {
        Plugin::check_grants_miss_cache(&runtime, &w.config.spec)
            .with_context(|| w.origin.clone())?;
    }
    let catalog = Catalog::new(Vec::new(), in_host()).context("cannot serve the in-host tools")?;
    let audit = config.audit.clone().map(AuditLog::open).transpose()?;
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
        ServedRoots {
            own: roots,
            at: config.roots_at,
        },
        config.access.clone(),
        request_state,
        UserGrants::beside(options.config.as_deref()),
        Reports {
            audit,
            metrics: config.metrics_listen.map(|_| Metrics::new()),
            tracing: Tracing::start(&config.traces)?,
        },
    );
    let _ = compiling.set(Arc::downgrade(&server));
    server.shutdown.set_grace(config.shutdown_grace);
    server.tasks.configure(config.tasks);
    let bus = cluster.as_ref().map(|cluster| {
        let bus = Arc::new(RedisBus::new(cluster.clone()));
        bus.listen(Arc::downgrade(&server));
        server.join_cluster(bus.clone());
        server
            .tasks
            .share(Arc::new(RedisTasks::new(cluster.clone(), bus.clone())));
        keep_leases(Arc::downgrade(&server), cluster.settings().task_lease);
        bus
    });
    if let (Some(listen), Some(metrics)) = (config.metrics_listen, &server.metrics) {
        let weak = Arc::downgrade(&server);
        let plugins = move || {
            weak.upgrade()
                .map(|server| transport::health::plugin_state_labels(&server))
                .unwrap_or_default()
        };
        metrics.watch(Box::new(plugins), runtime.cache.counts());
        let weak = Arc::downgrade(&server);
        metrics.count_tasks(Box::new(move || {
            weak.upgrade()
                .map(|server| server.tasks.running_counts())
                .unwrap_or_default()
        }));
        transport::metrics_endpoint::serve_metrics(listen, server.clone(), metrics.clone()).await?;
    }
    shutdown::stop_on_signal(server.shutdown.clone());
    let console = config.console.enabled().then(|| {
        Console::new(
            server.clone(),
            &config.console,
            config.http.allowed_hosts.clone(),
            cluster.clone(),
        )
    });
    if let (Some(console), Some(listen)) = (&console, config.console.listen) {
        console.serve_alone(listen).await?;
    }
    let presence = cluster.clone().map(|cluster| {
        let weak = Arc::downgrade(&server);
        let serving = move || match weak.upgrade().and_then(|s| s.listening.get().copied()) {
            Some(address) => format!("http://{address}/mcp"),
            None => "stdio".into(),
        };
        presence::start(cluster, Box::new(serving), server.shutdown.clone())
    });
    let plugins = wanted.len();
    server.loading.begin(reload::pending(&wanted));
    reload::start(
        server.clone(),
        runtime,
        options,
        wanted,
        in_host,
        config.watch,
    );
    // A burst of clients leaves freed memory behind; give it back once they are gone.
    crate::memory::start_trimming();
    let tracing = server.tracing.clone();
    let served = match config.http.listen {
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
                connections: transport::http::conn::ConnectionLimits {
                    total: config.http.max_connections,
                    per_address: config.http.max_connections_per_address,
                    trusted_proxies: transport::http::client_address::TrustedProxies::new(
                        config.http.trusted_proxies.clone(),
                    ),
                },
            };
            tracing::info!(
                plugins,
                "serving MCP over HTTP; plugins load in the background"
            );
            let shared = cluster.as_ref().zip(bus).map(|(cluster, bus)| {
                SharedSessions::new(cluster.clone(), bus, config.http.session_idle_timeout)
            });
            // On the MCP listener only for operators with tokens: the one-time link is the
            // console's own listener's.
            let mount = console
                .filter(|_| !config.console.operators.is_empty())
                .map(|console| -> transport::http::Mount {
                    Box::new(move |oauth| console.router(oauth))
                });
            transport::http::serve(server, options, shared, mount).await
        }
        None => {
            tracing::info!(
                plugins,
                "serving MCP on stdio; plugins load in the background"
            );
            transport::stdio::serve(server).await
        }
    };
    if let Some(presence) = presence {
        presence.leave().await;
    }
    // What the exporter still holds goes out before the process ends (a blocking flush, on a
    // thread of its own).
    if let Some(tracing) = tracing {
        let _ = tokio::task::spawn_blocking(move || tracing.shutdown()).await;
    }
    served
}
