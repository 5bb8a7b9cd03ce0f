//! What every session of this process serves: the catalog (replaced whole when plugins or the
//! configuration change), the changes sessions tell their clients, and the server's reports.

use parking_lot::RwLock;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

use super::grant_questions::GrantQuestions;
use super::version::ProtocolVersion;
use crate::audit::AuditLog;
use crate::catalog::Catalog;
use crate::config::AccessConfig;
use crate::grants::UserGrants;
use crate::runtime::bindings::host::ListKind;
use crate::runtime::{Root, RootsAt};

use super::change::Change;
use super::cluster_events::{ClusterBus, ClusterEvent, list_kind};
use super::jsonrpc::RpcError;
use super::lists::{bad_cursor, cursor};
use super::loading::Loading;
use super::stateless::input_round::StateSettings;
use super::stateless::meta::{self as stateless_meta, CacheScope};
use super::{coalesce, lists, roots, wire};
use crate::catalog::page;
use crate::config::Scope;

/// How the server reaches the live reloader.
pub struct ReloadHooks {
    /// Plugins that asked to be listed again, and the list they said changed.
    pub relist: mpsc::UnboundedSender<(Arc<str>, ListKind)>,
    /// Directories with files behind resources, to watch.
    pub watch: mpsc::UnboundedSender<PathBuf>,
}

/// What every session of this process serves. The catalog is replaced as a whole when plugins
/// or the configuration change; a request keeps the catalog it started with.
pub struct Server {
    catalog: RwLock<Arc<Catalog>>,
    /// Items per page of every list.
    pub page_size: usize,
    /// Roots from `--root` and the configuration, for sessions whose client gives none.
    pub roots: Arc<Vec<Root>>,
    /// Where plugins see the client's roots.
    pub roots_at: RootsAt,
    changes: broadcast::Sender<Change>,
    /// Host files behind resources (as the plugins listed them), to the URIs they back.
    resource_files: RwLock<HashMap<PathBuf, BTreeSet<String>>>,
    /// The live reloader, when it runs.
    reload: RwLock<Option<ReloadHooks>>,
    /// Tokens and scopes.
    pub access: AccessConfig,
    /// Where every tool call is recorded, when configured.
    pub audit: Option<Arc<AuditLog>>,
    /// Decides on hosts and variables plugins with `ask = true` reach for without a grant.
    pub grant_questions: Arc<GrantQuestions>,
    /// How `requestState` is signed (2026-07-28 multi round-trip requests).
    pub request_state: StateSettings,
    /// Changes plugins report, coalesced and rate-limited per plugin.
    coalescer: coalesce::Coalescer,
    /// Plugins still loading in the background (at start).
    pub loading: Loading,
    /// Counts the catalogs served, the first being 1: raised once a new one is in place.
    generation: std::sync::atomic::AtomicU64,
    /// Prometheus metrics, with `[telemetry] metrics_listen`.
    pub metrics: Option<Arc<crate::telemetry::Metrics>>,
    /// OpenTelemetry traces, when a collector is configured.
    pub tracing: Option<Arc<crate::telemetry::Tracing>>,
    /// Set once the server is stopping (SIGTERM).
    pub shutdown: crate::shutdown::Shutdown,
    /// Where MCP over HTTP is served, once its listener is bound.
    pub listening: std::sync::OnceLock<std::net::SocketAddr>,
    /// The other replicas, with `[cluster]`.
    pub(super) cluster: std::sync::OnceLock<Arc<dyn ClusterBus>>,
    /// Tool calls running on after their request, and those that ended.
    pub tasks: super::tasks::Tasks,
    /// Recent calls and an hour of figures, for the operator's console.
    pub activity: Arc<crate::telemetry::Activity>,
    /// Tool calls running now.
    pub calls: super::calls::CallsInFlight,
    /// Initialize-based sessions open now.
    pub sessions: super::session_list::SessionList,
}

/// Where the server reports what it does, each when configured: the audit log, metrics and
/// traces.
#[derive(Default)]
pub struct Reports {
    /// One line per tool call.
    pub audit: Option<AuditLog>,
    /// Prometheus metrics.
    pub metrics: Option<Arc<crate::telemetry::Metrics>>,
    /// OpenTelemetry traces.
    pub tracing: Option<Arc<crate::telemetry::Tracing>>,
}

impl Server {
    /// The server around `catalog`, with its settings.
    pub fn new(
        catalog: Catalog,
        page_size: usize,
        roots: roots::ServedRoots,
        access: AccessConfig,
        request_state: StateSettings,
        user_grants: UserGrants,
        reports: Reports,
    ) -> Arc<Server> {
        let Reports {
            audit,
            metrics,
            tracing,
        } = reports;
        let activity = Arc::new(crate::telemetry::Activity::new(
            audit.as_ref().map(|log| log.arguments()),
        ));
        let audit = audit.map(Arc::new);
        Arc::new(Server {
            calls: super::calls::CallsInFlight::new(activity.clone()),
            sessions: super::session_list::SessionList::new(activity.clone()),
            grant_questions: Arc::new(GrantQuestions::new(
                user_grants,
                audit.clone(),
                activity.clone(),
            )),
            activity,
            coalescer: coalesce::Coalescer::default(),
            access,
            audit,
            request_state,
            catalog: RwLock::new(Arc::new(catalog)),
            page_size,
            roots: Arc::new(roots.own),
            roots_at: roots.at,
            changes: broadcast::channel(256).0,
            resource_files: RwLock::new(HashMap::new()),
            reload: RwLock::new(None),
            loading: Loading::default(),
            generation: std::sync::atomic::AtomicU64::new(1),
            metrics,
            tracing,
            shutdown: crate::shutdown::Shutdown::default(),
            listening: std::sync::OnceLock::new(),
            cluster: std::sync::OnceLock::new(),
            tasks: Default::default(),
        })
    }

    /// The generation of the catalog served now: a catalog read after this holds every change
    /// of this generation and before.
    pub fn catalog_generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Counts a refusal, when metrics are kept.
    pub fn refused(&self, why: crate::telemetry::Refusal) {
        if let Some(metrics) = &self.metrics {
            metrics.record_refusal(why);
        }
    }

    /// The catalog as it is now.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// The catalog once `found` holds in it, or once no plugin still loading may make it hold
    /// (`name`: the public name looked for, which narrows that to the plugins its prefix fits).
    pub async fn catalog_with(
        &self,
        name: Option<&str>,
        found: impl Fn(&Catalog) -> bool,
    ) -> Arc<Catalog> {
        let catalog = self.catalog();
        if found(&catalog) || !self.loading.is_loading() {
            return catalog;
        }
        self.loading.until(name, || found(&self.catalog())).await;
        self.catalog()
    }

    /// Serves `catalog` from now on, and tells clients which lists changed: those that differ,
    /// and those plugins said changed (`announced`; their clients may know more than we see).
    pub fn replace_catalog(&self, catalog: Catalog, announced: &[ListKind]) {
        self.install(catalog, announced, |kind, _| Change::ListChanged(kind));
    }

    /// Serves `catalog`, which adds plugins loaded at start, from now on, and tells the clients
    /// that listed what grew.
    pub fn grow_catalog(&self, catalog: Catalog) {
        self.install(catalog, &[], |kind, generation| {
            Change::ListGrew(kind, generation)
        });
    }

    fn install(
        &self,
        catalog: Catalog,
        announced: &[ListKind],
        change: impl Fn(ListKind, u64) -> Change,
    ) {
        let old = std::mem::replace(&mut *self.catalog.write(), Arc::new(catalog));
        // After the catalog is in place: whoever reads this generation reads that catalog.
        let generation = self
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            + 1;
        let new = self.catalog();
        let mut changed = lists::changed_lists(&old, &new);
        for kind in announced {
            if !changed.contains(kind) {
                changed.push(*kind);
            }
        }
        for kind in changed {
            self.announce(change(kind, generation));
        }
    }

    /// Tells every session about `change`, which `plugin` reported: at most once per interval
    /// for the same change, and within the plugin's rate (see `coalesce.rs`).
    /// In a cluster, the other replicas hear it too.
    pub fn announce_from(self: &Arc<Self>, plugin: &Arc<str>, change: Change) {
        match self.coalescer.decide(plugin, &change) {
            coalesce::Decision::Now => {
                self.tell_cluster(ClusterEvent::of_change(plugin, &change));
                self.announce(change)
            }
            coalesce::Decision::Later(after) => {
                let server = Arc::downgrade(self);
                let plugin = plugin.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    if let Some(server) = server.upgrade() {
                        server.coalescer.sent_later(&plugin, &change);
                        server.tell_cluster(ClusterEvent::of_change(&plugin, &change));
                        server.announce(change);
                    }
                });
            }
            coalesce::Decision::Drop => {}
        }
    }

    /// Tells every session about `change`.
    pub fn announce(&self, change: Change) {
        tracing::debug!(?change, "announcing");
        // No receiver means no session is listening; nothing is lost.
        let _ = self.changes.send(change);
    }

    /// Every change from now on: list changes and resource updates, for a session to forward.
    pub fn subscribe_changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// Connects the live reloader.
    pub fn set_reload_hooks(&self, hooks: ReloadHooks) {
        *self.reload.write() = Some(hooks);
    }

    pub(super) fn request_relist(&self, plugin: Arc<str>, kind: ListKind) {
        match &*self.reload.read() {
            Some(live) => {
                let _ = live.relist.send((plugin, kind));
            }
            None => tracing::debug!(%plugin, "list change ignored: live reload is off"),
        }
    }

    /// Remembers which host files back which resource URIs, and has their directories watched.
    pub fn record_resource_files(&self, files: impl IntoIterator<Item = (PathBuf, String)>) {
        let live = self.reload.read();
        let mut map = self.resource_files.write();
        for (file, uri) in files {
            if let (Some(live), Some(dir)) = (&*live, file.parent()) {
                let _ = live.watch.send(dir.to_path_buf());
            }
            map.entry(file).or_default().insert(uri);
        }
    }

    /// Whether a file behind resource `uri` is known (from a listing).
    pub fn knows_resource_file(&self, uri: &str) -> bool {
        self.resource_files
            .read()
            .values()
            .any(|uris| uris.contains(uri))
    }

    /// A host file changed: tell subscribers of the resources it backs.
    pub fn file_changed(&self, path: &Path) {
        let uris = self
            .resource_files
            .read()
            .get(path)
            .cloned()
            .unwrap_or_default();
        for uri in uris {
            self.announce(Change::ResourceUpdated(uri));
        }
    }

    pub(super) fn initialize_result(&self, version: ProtocolVersion) -> Value {
        let mut server_info = stateless_meta::server_info();
        if version < ProtocolVersion::V2025_06_18
            && let Some(info) = server_info.as_object_mut()
        {
            // `title` came with 2025-06-18.
            info.remove("title");
        }
        json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.capabilities(version),
            "serverInfo": server_info,
            "instructions": INSTRUCTIONS,
        })
    }

    /// What this server offers a client of `version`.
    pub(super) fn capabilities(&self, version: ProtocolVersion) -> Map<String, Value> {
        let catalog = self.catalog();
        // What plugins still loading will serve is not known yet: everything they might.
        let loading = self.loading.is_loading();
        let mut capabilities = Map::new();
        // Lists can change while the server runs: plugins and the configuration are reloaded.
        if loading
            || catalog.plugins.iter().any(|p| p.exports().tools)
            || !catalog.tools().is_empty()
        {
            capabilities.insert("tools".into(), json!({ "listChanged": true }));
            // Tool calls may run as tasks: in 2025-11-25 as its core feature, in 2026-07-28 as
            // the extension (which replaces it there).
            match version {
                ProtocolVersion::V2025_11_25 => {
                    capabilities.insert(
                        "tasks".into(),
                        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
                    );
                }
                ProtocolVersion::V2026_07_28 => {
                    capabilities.insert(
                        "extensions".into(),
                        json!({ super::tasks::wire::EXTENSION: {} }),
                    );
                }
                _ => {}
            }
        }
        if loading || catalog.has_resources() {
            capabilities.insert(
                "resources".into(),
                json!({ "subscribe": true, "listChanged": true }),
            );
        }
        if loading || !catalog.prompts().is_empty() {
            capabilities.insert("prompts".into(), json!({ "listChanged": true }));
        }
        if (loading || catalog.has_completions()) && version >= ProtocolVersion::V2025_03_26 {
            capabilities.insert("completions".into(), json!({}));
        }
        capabilities.insert("logging".into(), json!({}));
        capabilities
    }
}

/// Guidance for the model, in `initialize` and `server/discover` results.
const INSTRUCTIONS: &str = "Tools, resources and prompts from sandboxed WebAssembly plugins. Tool \
                            and prompt names start with the plugin's name; a tool that hits a \
                            limit reports which one.";

impl Server {
    /// Connects this replica to its cluster: plugin-reported changes are sent there too.
    pub fn join_cluster(&self, bus: Arc<dyn ClusterBus>) {
        let _ = self.cluster.set(bus);
    }

    /// Sends `event` to the other replicas, when in a cluster.
    pub(super) fn tell_cluster(&self, event: Option<ClusterEvent>) {
        if let (Some(bus), Some(event)) = (self.cluster.get(), event) {
            bus.publish(event);
        }
    }

    /// Another replica's event, heard: told to this replica's clients as if a plugin here had
    /// reported it. Checked like a plugin's own report: a plugin speaks only for resources it
    /// serves here, and only of plugins served here.
    pub fn heard_from_cluster(&self, event: ClusterEvent) {
        match event {
            ClusterEvent::ResourceUpdated { plugin, uri } => {
                if self.catalog().resources.serves(&plugin, &uri) {
                    self.announce(Change::ResourceUpdated(uri));
                }
            }
            ClusterEvent::ListChanged { plugin, list } => {
                let Some(kind) = list_kind(&list) else {
                    return;
                };
                let Some(name) = self
                    .catalog()
                    .plugins
                    .iter()
                    .find(|p| *p.name == *plugin)
                    .map(|p| p.name.clone())
                else {
                    return;
                };
                match kind {
                    ListKind::Resources => self.announce(Change::ListChanged(kind)),
                    _ => self.request_relist(name, kind),
                }
            }
        }
    }
}

impl Server {
    /// The tools `scope` lets the client see.
    pub(super) fn list_tools(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
        scope: &Scope,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let visible: Vec<_> = catalog
            .tools()
            .iter()
            .filter(|t| Catalog::tool_in_scope(t, scope))
            .collect();
        self.paged(params, "tools", &visible, |t| wire::tool(t, v))
    }

    pub(super) fn list_prompts(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
        scope: &Scope,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let visible: Vec<_> = catalog
            .prompts()
            .iter()
            .filter(|p| Catalog::prompt_in_scope(p, scope))
            .collect();
        self.paged(params, "prompts", &visible, |p| wire::prompt(p, v))
    }

    pub(super) fn list_resource_templates(
        &self,
        params: &Map<String, Value>,
        v: ProtocolVersion,
        scope: &Scope,
    ) -> Result<Value, RpcError> {
        let catalog = self.catalog();
        let visible: Vec<_> = catalog
            .resources
            .templates()
            .iter()
            .filter(|t| scope.allows_plugin(&t.plugin.name))
            .collect();
        self.paged(params, "resourceTemplates", &visible, |t| {
            wire::resource_template(&t.template, v)
        })
    }

    /// The page of `items` that `params.cursor` asks for, as `{ key: [...], nextCursor }`.
    pub(super) fn paged<T>(
        &self,
        params: &Map<String, Value>,
        key: &str,
        items: &[T],
        shape: impl Fn(&T) -> Value,
    ) -> Result<Value, RpcError> {
        let (items, next) = page(items, cursor(params)?, self.page_size).map_err(bad_cursor)?;
        let mut result = json!({ key: items.iter().map(shape).collect::<Vec<_>>() });
        if let Some(next) = next {
            result["nextCursor"] = next.into();
        }
        Ok(result)
    }
}

impl Server {
    pub(super) fn discover_result(&self, version: ProtocolVersion) -> Value {
        json!({
            "supportedVersions": ProtocolVersion::STATELESS.map(|v| v.as_str()),
            "capabilities": self.capabilities(version),
            "instructions": INSTRUCTIONS,
        })
    }

    /// Lists differ per token when tokens with scopes are configured: then no shared cache may
    /// keep them.
    pub(super) fn cache_scope(&self) -> CacheScope {
        if self.access.tokens_required() {
            CacheScope::Private
        } else {
            CacheScope::Public
        }
    }
}
