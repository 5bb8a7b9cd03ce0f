//! The configuration, resolved: what the server and the runtime are given, every value checked
//! and every default filled in.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use super::access::AccessConfig;
pub use crate::runtime::{
    AccessMode, DirGrant, HostPattern, Limits, PluginSpec, RootsAccess, RootsAt,
};
pub use crate::sources::verify::Policy;
pub use crate::sources::{Locked, RegistryLogin, Source, SourcesConfig};

/// Default number of items per page of `tools/list`.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// How a call's arguments appear in the audit log.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditArguments {
    /// A SHA-256 of the arguments' JSON: calls can be matched without keeping what was sent.
    #[default]
    Hash,
    /// The arguments themselves.
    Full,
}

/// The audit log's settings, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// The log file.
    pub path: PathBuf,
    /// Size at which the file is rotated.
    pub max_bytes: u64,
    /// Rotated files kept.
    pub keep: u32,
    /// How arguments are written.
    pub arguments: AuditArguments,
    /// Serve calls unlogged when the log cannot be written.
    pub fail_open: bool,
}

/// How `requestState` is signed and how long it lasts, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestStateConfig {
    /// The shared secret's file; `None`: a random key of this process.
    pub key_file: Option<PathBuf>,
    /// How long a `requestState` stays valid.
    pub ttl: std::time::Duration,
}

impl Default for RequestStateConfig {
    fn default() -> Self {
        RequestStateConfig {
            key_file: None,
            ttl: std::time::Duration::from_secs(DEFAULT_REQUEST_STATE_TTL_S),
        }
    }
}

/// How long a client may take to answer input requests by default: people answer them.
pub(super) const DEFAULT_REQUEST_STATE_TTL_S: u64 = 1800;

/// The HTTP settings, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Where to listen; `None` serves stdio.
    pub listen: Option<std::net::SocketAddr>,
    /// Host names the `Host` header may name besides loopback.
    pub allowed_hosts: Vec<String>,
    /// Origins browser pages may call from besides loopback pages.
    pub allowed_origins: Vec<String>,
    /// A session idle this long is forgotten.
    pub session_idle_timeout: std::time::Duration,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Time to send a request's headers, and the longest a connection may idle.
    pub header_timeout: std::time::Duration,
    /// Time to send a request's body.
    pub body_timeout: std::time::Duration,
    /// Initialize-based sessions open at once, from all clients.
    pub max_sessions: usize,
    /// Initialize-based sessions open at once, from one client.
    pub max_sessions_per_client: usize,
    /// Proxies whose `Forwarded` / `X-Forwarded-For` name the client.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Connections open at once, from all clients.
    pub max_connections: usize,
    /// Connections open at once from one address (a trusted proxy's are not counted here).
    pub max_connections_per_address: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            listen: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            session_idle_timeout: std::time::Duration::from_secs(1800),
            max_body_bytes: 16 << 20,
            header_timeout: std::time::Duration::from_secs(30),
            body_timeout: std::time::Duration::from_secs(60),
            // About 2 KiB each while idle; a client that never ends its sessions fills its own
            // share, not the server.
            max_sessions: 1024,
            max_sessions_per_client: 64,
            trusted_proxies: Vec::new(),
            max_connections: 1024,
            max_connections_per_address: 128,
        }
    }
}

/// Tool annotations the operator sets, in MCP's names; what is left out stays as the plugin says.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnnotationOverrides {
    /// A human-readable title for the tool.
    pub title: Option<String>,
    /// The tool does not change anything.
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite data.
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments changes nothing more.
    pub idempotent_hint: Option<bool>,
    /// The tool reaches beyond the server (the internet, other systems).
    pub open_world_hint: Option<bool>,
}

/// The operator's settings for one tool.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ToolPolicy {
    /// Ask the client's user before each call (elicitation).
    pub confirm: bool,
    /// Annotations that replace the plugin's own.
    pub annotations: AnnotationOverrides,
    /// A description that replaces the plugin's own.
    pub description: Option<String>,
    /// Whether a call may run as a task; `None`: as the plugin says.
    pub task: Option<TaskSupport>,
}

/// Whether a tool's calls may run as tasks (MCP's `execution.taskSupport`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never: every call answers on its request.
    #[default]
    Forbidden,
    /// A task when the client allows one, else an ordinary call.
    Optional,
    /// Only as a task: a client that cannot run tasks cannot call it.
    Required,
}

impl TaskSupport {
    /// What a plugin declared for one of its tools.
    pub fn declared(wit: crate::runtime::bindings::tools::TaskSupport) -> TaskSupport {
        use crate::runtime::bindings::tools::TaskSupport as Wit;
        match wit {
            Wit::Forbidden => TaskSupport::Forbidden,
            Wit::Optional => TaskSupport::Optional,
            Wit::Required => TaskSupport::Required,
        }
    }

    /// The value of `execution.taskSupport`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// `[tasks]`: how tasks are kept and paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSettings {
    /// How long a task is kept after it is created (and at least a minute after it ends).
    pub ttl: std::time::Duration,
    /// How often clients are told to poll; faster polls are answered no sooner.
    pub poll_interval: std::time::Duration,
    /// Tasks one client may have running at once.
    pub running_per_client: u64,
    /// Bytes of finished tasks' results kept, all clients together.
    pub kept_bytes: u64,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            ttl: std::time::Duration::from_secs(3600),
            poll_interval: std::time::Duration::from_millis(1000),
            running_per_client: 16,
            kept_bytes: 256 << 20,
        }
    }
}

/// One plugin, as the server will serve it: what the runtime loads, and how the catalog names
/// and guards its tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    /// The component, its grants and its limits. For a plugin from a registry or a URL, `path`
    /// is empty until [`pin`](crate::remote_plugins::pin) points it into the store.
    pub spec: PluginSpec,
    /// Where a plugin from a registry or a URL comes from; `None` for a local file.
    pub source: Option<Source>,
    /// What `palisade.lock` accepted for it (set with the store path).
    pub locked: Option<Locked>,
    /// Who must have signed it: its own `verify`, else `[sources] verify`.
    pub verify: Option<Policy>,
    /// Prefix for public names; empty for none.
    pub prefix: String,
    /// By the plugin's own tool name.
    pub tools: BTreeMap<String, ToolPolicy>,
    /// The plugins whose components are composed into this one (`link`); their files go into
    /// `spec.links` once every plugin's path is known.
    pub links: Vec<String>,
}

impl PluginConfig {
    /// A plugin with no grants, the default limits, and its name as its prefix.
    pub fn new(name: impl Into<String>, path: PathBuf) -> PluginConfig {
        let spec = PluginSpec::new(name, path);
        PluginConfig {
            prefix: spec.name.clone(),
            spec,
            source: None,
            locked: None,
            verify: None,
            tools: BTreeMap::new(),
            links: Vec::new(),
        }
    }
}

/// The server's resolved configuration: file and command line together.
#[derive(Debug, Clone)]
pub struct Config {
    /// Items per page of every list.
    pub page_size: usize,
    /// Where compiled plugins are cached; `None`: the default directory.
    pub cache_dir: Option<PathBuf>,
    /// Roots for clients that give none.
    pub roots: Vec<PathBuf>,
    /// Where plugins see the roots.
    pub roots_at: RootsAt,
    /// Whether plugins and the configuration are reloaded when they change.
    pub watch: bool,
    /// `[server.http]`.
    pub http: HttpConfig,
    /// Every plugin to serve, in the file's order.
    pub plugins: Vec<PluginConfig>,
    /// Tokens and scopes.
    pub access: AccessConfig,
    /// The audit log, when configured.
    pub audit: Option<AuditConfig>,
    /// How `requestState` is signed.
    pub request_state: RequestStateConfig,
    /// `[sources]`.
    pub sources: SourcesConfig,
    /// Where `/metrics`, `/healthz` and `/readyz` are served, when set.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Traces, as `[telemetry]` says (the `OTEL_*` variables are read when the server starts).
    pub traces: TraceConfig,
    /// How long calls in flight may take to finish after SIGTERM.
    pub shutdown_grace: std::time::Duration,
    /// `[cluster]`: the Redis replicas share, when configured.
    pub cluster: Option<super::ClusterSettings>,
    /// `[tasks]`.
    pub tasks: TaskSettings,
    /// `[console]`.
    pub console: ConsoleConfig,
}

/// `[console]`: the operator's web console.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsoleConfig {
    /// Who may use it, by their identity's name: a static token's `name`, or `oauth:SUBJECT`.
    pub operators: Vec<Arc<str>>,
    /// A listener of its own (`--console`), whose one-time link logs its holder in.
    pub listen: Option<std::net::SocketAddr>,
    /// How long a grant question no client can show waits for an operator's answer.
    pub question_wait: std::time::Duration,
}

/// A grant question waits this long for an operator, unless `[console] question_wait_s` says:
/// long enough to notice it, short of the minutes a client waits for a tool.
pub const DEFAULT_QUESTION_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

impl Default for ConsoleConfig {
    fn default() -> Self {
        ConsoleConfig {
            operators: Vec::new(),
            listen: None,
            question_wait: DEFAULT_QUESTION_WAIT,
        }
    }
}

impl ConsoleConfig {
    /// Whether the console is served at all: someone may log in to it.
    pub fn enabled(&self) -> bool {
        !self.operators.is_empty() || self.listen.is_some()
    }
}

/// `[telemetry]`'s trace settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceConfig {
    /// The OTLP/HTTP traces URL (`.../v1/traces`), when configured.
    pub otlp_endpoint: Option<String>,
    /// `service.name`, when configured.
    pub service_name: Option<String>,
    /// Share of root traces kept.
    pub sample_ratio: f64,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            otlp_endpoint: None,
            service_name: None,
            sample_ratio: 1.0,
        }
    }
}

/// Calls in flight finish within this after SIGTERM, unless `[server] shutdown_grace_s` says.
pub const DEFAULT_SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

impl Default for Config {
    fn default() -> Self {
        Config {
            page_size: DEFAULT_PAGE_SIZE,
            cache_dir: None,
            roots: Vec::new(),
            roots_at: RootsAt::default(),
            watch: true,
            http: HttpConfig::default(),
            plugins: Vec::new(),
            access: AccessConfig::default(),
            audit: None,
            request_state: RequestStateConfig::default(),
            sources: SourcesConfig::default(),
            metrics_listen: None,
            traces: TraceConfig::default(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            cluster: None,
            tasks: TaskSettings::default(),
            console: ConsoleConfig::default(),
        }
    }
}

/// Most calls one plugin may run at once: half the instance pool (`runtime::INSTANCE_SLOTS`), so
/// no plugin can hold every instance slot while others wait.
pub const MAX_CONCURRENT_CALLS: u64 = 64;
