//! Reloader changes: when a plugin file or the configuration changes, the changed plugins are loaded
//! again and clients are told which lists changed; when a file behind a resource changes, its
//! subscribers are told. A new version that fails to load leaves the old one serving. The first
//! load, at start, happens here too (`at_start.rs`): in the background, while the server answers.

mod at_start;

pub use at_start::pending;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher as _};
use sha2::Digest as _;
use tokio::sync::mpsc;

use crate::catalog::{Catalog, InHostTools, Loaded, definition_changes};
use crate::config::RootsAccess;
use crate::mcp::{Change, ReloadHooks, Server};
use crate::plugin_load::{load_plugin, log_loaded};
use crate::plugin_set::{ServeOptions, Wanted};
use crate::runtime::bindings::host::ListKind;
use crate::runtime::{Runtime, log_safe};
use crate::telemetry::Topic;

/// How long to wait for more changes after one, so an editor's or a compiler's burst of writes
/// is handled once.
const SETTLE: Duration = Duration::from_millis(200);
/// Least time from the end of one reload to the start of the next, whatever asks for it (a
/// plugin's `notify-list-changed`, a changed file): a plugin that asks on every call, or that
/// rewrites a watched file, gets one reload per interval, the last request always honoured.
const RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// The reloader: owns the file watcher and the plugins currently loaded.
pub struct Reloader {
    server: Arc<Server>,
    runtime: Arc<Runtime>,
    options: ServeOptions,
    /// Tools compiled into the host, served beside the plugins' after every reload too.
    in_host: InHostTools,
    plugins: Vec<Loaded>,
    /// The files of every plugin the configuration wants, loaded or not: fixing one that failed
    /// loads it.
    wanted_files: Vec<PathBuf>,
    /// None with `--no-watch`: plugins' own list changes are still honoured, files are not
    /// watched.
    watcher: Option<notify::RecommendedWatcher>,
    watched: HashSet<PathBuf>,
    /// Files whose change means a reload: the configuration and the plugins.
    sources: HashSet<PathBuf>,
    /// Directories granted to plugins that serve resources.
    resource_dirs: Vec<PathBuf>,
}

/// Loads the `wanted` plugins in the background (see `at_start.rs`), then reloads when plugins
/// say their lists changed, and, with `watch_files`, when the configuration, a plugin file or a
/// resource file changes; the returned task runs until the process ends.
pub fn start(
    server: Arc<Server>,
    runtime: Arc<Runtime>,
    options: ServeOptions,
    wanted: Vec<Wanted>,
    in_host: InHostTools,
    watch_files: bool,
) -> tokio::task::JoinHandle<()> {
    let (events_tx, events) = mpsc::unbounded_channel::<notify::Event>();
    let watcher = watch_files
        .then(|| {
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
                // Changes only: opening and reading a file (the reload's own reads among them)
                // is no change, and must not wake the reloader.
                Ok(event)
                    if matches!(
                        event.kind,
                        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
                    ) =>
                {
                    let _ = events_tx.send(event);
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("file watcher: {e}"),
            })
        })
        .transpose()
        // Serving matters more than reloading: without a watcher, say so and go on. Plugins
        // that say their lists changed are still listed again.
        .unwrap_or_else(|e| {
            tracing::warn!("live reload is off: cannot watch files: {e:#}");
            None
        });
    let (relist_tx, relist) = mpsc::unbounded_channel();
    let (watch_tx, watch_requests) = mpsc::unbounded_channel();
    server.set_reload_hooks(ReloadHooks {
        relist: relist_tx,
        watch: watch_tx,
    });
    let live = Reloader {
        server,
        runtime,
        options,
        in_host,
        plugins: Vec::new(),
        wanted_files: wanted.iter().map(|w| w.config.spec.path.clone()).collect(),
        watcher,
        watched: HashSet::new(),
        sources: HashSet::new(),
        resource_dirs: Vec::new(),
    };
    tokio::spawn(async move {
        let mut live = live;
        live.update_watches();
        live.load_at_start(wanted).await;
        live.run(events, relist, watch_requests).await;
    })
}

/// Plugins that said one of their lists changed, and which lists.
#[derive(Default)]
struct Relisted {
    plugins: HashSet<Arc<str>>,
    kinds: Vec<ListKind>,
}

impl Relisted {
    fn add(&mut self, (plugin, kind): (Arc<str>, ListKind)) {
        self.plugins.insert(plugin);
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
    }
}

impl Reloader {
    async fn run(
        mut self,
        mut events: mpsc::UnboundedReceiver<notify::Event>,
        mut relist: mpsc::UnboundedReceiver<(Arc<str>, ListKind)>,
        mut watch_requests: mpsc::UnboundedReceiver<PathBuf>,
    ) {
        let mut last_reload: Option<tokio::time::Instant> = None;
        loop {
            let mut batch = Vec::new();
            let mut relisted = Relisted::default();
            tokio::select! {
                Some(event) = events.recv() => batch.push(event),
                Some(asked) = relist.recv() => relisted.add(asked),
                Some(dir) = watch_requests.recv() => { self.watch(&dir, RecursiveMode::NonRecursive); continue; }
                else => return,
            }
            // Let the burst settle, then take everything that came meanwhile.
            tokio::time::sleep(SETTLE).await;
            while let Ok(event) = events.try_recv() {
                batch.push(event);
            }
            while let Ok(asked) = relist.try_recv() {
                relisted.add(asked);
            }
            let source_changed = self.file_events(&batch);
            if !source_changed && relisted.plugins.is_empty() {
                continue;
            }
            if let Some(last) = last_reload {
                tokio::time::sleep_until(last + RELOAD_INTERVAL).await;
                while let Ok(asked) = relist.try_recv() {
                    relisted.add(asked);
                }
            }
            self.reload(&relisted).await;
            // From the end: a reload that takes long (a large file read and hashed) is followed
            // by a whole interval without one.
            last_reload = Some(tokio::time::Instant::now());
        }
    }

    /// Announces what changed files mean to clients (a resource, a resource list); true when a
    /// source of the configuration changed (the file itself, a plugin's component).
    fn file_events(&mut self, batch: &[notify::Event]) -> bool {
        let mut reload = false;
        let mut resources_listed_changed = false;
        let mut changed_files = HashSet::new();
        for event in batch {
            if matches!(event.kind, EventKind::Access(_)) {
                continue;
            }
            for path in &event.paths {
                if self.sources.contains(path) {
                    reload = true;
                } else {
                    changed_files.insert(path.clone());
                    let in_resource_dir = self.resource_dirs.iter().any(|d| path.starts_with(d));
                    // A file created, removed or renamed may change a resource list; a write
                    // changes only that resource.
                    let adds_or_removes = matches!(
                        event.kind,
                        EventKind::Create(_)
                            | EventKind::Remove(_)
                            | EventKind::Modify(notify::event::ModifyKind::Name(_))
                    );
                    if in_resource_dir && adds_or_removes {
                        resources_listed_changed = true;
                    }
                }
            }
        }
        for path in &changed_files {
            self.server.file_changed(path);
        }
        if resources_listed_changed {
            self.server
                .announce(Change::ListChanged(ListKind::Resources));
        }
        reload
    }

    /// Access rules and the audit log are set up at start; say so when the file changes them, so
    /// a revoked token is not believed revoked.
    fn warn_about_start_only_settings(&self, config: &crate::config::Config) {
        if !config.access.same_as(&self.server.access) {
            tracing::warn!(
                "[auth] changed in the configuration: tokens and scopes apply only after a \
                 restart; the previous ones stay in force until then"
            );
        }
        if config.audit.as_ref() != self.server.audit.as_ref().map(|a| a.config()) {
            tracing::warn!("[audit] changed in the configuration: it applies only after a restart");
        }
    }

    /// Loads again what changed; anything that fails keeps what was serving.
    async fn reload(&mut self, relisted: &Relisted) {
        let wanted = match self.options.resolve_pinned().await {
            Ok((config, wanted)) => {
                self.warn_about_start_only_settings(&config);
                // Tasks already running keep the TTL and poll interval they were given.
                self.server.tasks.configure(config.tasks);
                self.wanted_files = wanted.iter().map(|w| w.config.spec.path.clone()).collect();
                (self.server.loading).set_configured(
                    wanted
                        .iter()
                        .map(|w| w.config.spec.name.as_str().into())
                        .collect(),
                );
                wanted
            }
            Err(e) => {
                tracing::error!(
                    "configuration not reloaded, the previous one keeps serving: {e:#}"
                );
                return;
            }
        };
        let mut plugins: Vec<Loaded> = Vec::new();
        for Wanted { config, origin } in wanted {
            let current = self
                .plugins
                .iter()
                .find(|p| *p.plugin.name == *config.spec.name);
            // Only the plugin's word that its lists changed: same file, same configuration.
            let mut relisting_only = false;
            if let Some(current) = current {
                let same_file =
                    file_sha256(&config.spec.path).is_some_and(|h| h == current.plugin.wasm_sha256);
                if current.config == config && same_file {
                    if !relisted.plugins.contains(&current.plugin.name) {
                        plugins.push(current.clone());
                        continue;
                    }
                    relisting_only = true;
                }
            }
            self.server.loading.reloading(&config.spec.name);
            self.server.activity.changed(Topic::Plugins);
            let loaded = load_plugin(&self.runtime, &config).await;
            let failed = loaded.as_ref().err().map(|e| format!("{e:#}"));
            self.server.loading.loaded(&config.spec.name, failed);
            match loaded {
                Ok(plugin) => {
                    let candidate = Loaded {
                        plugin: Arc::new(plugin),
                        config,
                    };
                    if let Some(current) = current {
                        let changes =
                            definition_changes(&current.plugin.tools, &candidate.plugin.tools);
                        // Tool definitions are pinned to the file: a plugin cannot change what
                        // a tool claims to do once a client has seen it.
                        if !changes.is_empty() && relisting_only {
                            tracing::warn!(
                                plugin = &*current.plugin.name,
                                "new tool definitions refused: they change without a new file, \
                                 the loaded ones keep serving ({})",
                                changes.join("; ")
                            );
                            plugins.push(current.clone());
                            continue;
                        }
                        // A plugin's own relist never changes what other plugins serve.
                        if relisting_only
                            && let Some(why) = self.server.catalog().refuses_relist(&candidate)
                        {
                            tracing::warn!(
                                plugin = &*current.plugin.name,
                                "new listing refused, the previous one keeps serving: {}",
                                log_safe(&why)
                            );
                            plugins.push(current.clone());
                            continue;
                        }
                        if !changes.is_empty() {
                            tracing::info!(
                                plugin = &*current.plugin.name,
                                "tool definitions changed with the new version: {}",
                                changes.join("; ")
                            );
                        }
                    }
                    log_loaded(&candidate.plugin);
                    plugins.push(candidate);
                }
                Err(e) => match current {
                    Some(current) => {
                        tracing::error!(
                            "{origin}: new version not loaded, the previous one keeps serving: {e:#}"
                        );
                        plugins.push(current.clone());
                    }
                    None => tracing::error!("{origin}: not loaded: {e:#}"),
                },
            }
        }
        match Catalog::new(plugins.clone(), (self.in_host)()) {
            Ok(catalog) => {
                tracing::info!(
                    plugins = plugins.len(),
                    tools = catalog.tools().len(),
                    prompts = catalog.prompts().len(),
                    "reloaded"
                );
                self.server.replace_catalog(catalog, &relisted.kinds);
                self.server.activity.changed(Topic::Plugins);
                self.plugins = plugins;
                self.update_watches();
            }
            Err(e) => tracing::error!("reload refused, the previous plugins keep serving: {e:#}"),
        }
    }

    /// Watches the configuration, every plugin file, and the directories of resource plugins.
    fn update_watches(&mut self) {
        let mut sources = HashSet::new();
        let files: Vec<PathBuf> = self
            .options
            .config
            .iter()
            .cloned()
            .chain(self.wanted_files.iter().cloned())
            .collect();
        for file in files {
            // Watch the directory: editors and compilers replace files rather than write them.
            let Some(path) = canonical_file(&file) else {
                continue;
            };
            if let Some(dir) = path.parent() {
                self.watch(&dir.to_path_buf(), RecursiveMode::NonRecursive);
            }
            sources.insert(path);
        }
        self.sources = sources;
        let mut resource_dirs = Vec::new();
        for Loaded { plugin, config } in &self.plugins {
            if !plugin.exports().resources {
                continue;
            }
            for dir in &config.spec.dirs {
                if let Ok(dir) = std::fs::canonicalize(&dir.host) {
                    resource_dirs.push(dir);
                }
            }
            if config.spec.roots != RootsAccess::None {
                resource_dirs.extend(self.server.roots.iter().map(|r| r.host_path.clone()));
            }
        }
        for dir in resource_dirs.clone() {
            self.watch(&dir, RecursiveMode::Recursive);
        }
        self.resource_dirs = resource_dirs;
    }

    fn watch(&mut self, dir: &PathBuf, mode: RecursiveMode) {
        let Some(watcher) = &mut self.watcher else {
            return;
        };
        if self.watched.contains(dir) {
            return;
        }
        match watcher.watch(dir, mode) {
            Ok(()) => {
                tracing::debug!(dir = %dir.display(), "watching");
                self.watched.insert(dir.clone());
            }
            Err(e) => tracing::warn!(dir = %dir.display(), "cannot watch: {e}"),
        }
    }
}

/// The canonical path of a file that may be replaced: its directory resolved, its name kept.
fn canonical_file(file: &Path) -> Option<PathBuf> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(file.file_name()?))
}

fn file_sha256(path: &Path) -> Option<[u8; 32]> {
    std::fs::read(path)
        .ok()
        .map(|bytes| sha2::Sha256::digest(&bytes).into())
}
