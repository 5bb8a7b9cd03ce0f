//! The configuration, resolved: what the server and the runtime are given, every value checked
//! and every default filled in.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::access::AccessConfig;
use super::network::HostPattern;

/// Default number of items per page of `tools/list`.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// How a call's arguments appear in the audit log.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditArguments {
    #[default]
    Hash,
    Full,
}

/// The audit log's settings, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    pub path: PathBuf,
    pub max_bytes: u64,
    pub keep: u32,
    pub arguments: AuditArguments,
    /// Serve calls unlogged when the log cannot be written.
    pub fail_open: bool,
}

/// How `requestState` is signed and how long it lasts, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestStateConfig {
    /// The shared secret's file; `None`: a random key of this process.
    pub key_file: Option<PathBuf>,
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
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub session_idle_timeout: std::time::Duration,
    pub max_body_bytes: usize,
    pub header_timeout: std::time::Duration,
    pub body_timeout: std::time::Duration,
    pub max_sessions: usize,
    pub max_sessions_per_client: usize,
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
        }
    }
}

/// Tool annotations the operator sets, in MCP's names; what is left out stays as the plugin says.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnnotationOverrides {
    pub title: Option<String>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// The operator's settings for one tool.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ToolPolicy {
    pub confirm: bool,
    pub annotations: AnnotationOverrides,
}

/// Whether a plugin sees the roots, and how.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootsAccess {
    #[default]
    None,
    ReadOnly,
    ReadWrite,
}

/// Read-only or read-write.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessMode {
    #[default]
    ReadOnly,
    ReadWrite,
}

/// `[[plugins.NAME.dirs]]`: a host directory preopened for the plugin.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirGrant {
    /// The directory on the host, relative to the configuration file.
    pub host: PathBuf,
    /// Where the plugin sees it: an absolute path such as `/data`.
    pub guest: String,
    #[serde(default)]
    pub mode: AccessMode,
}

/// The limits a plugin runs under, every one always on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wasm fuel (roughly, instructions) one call may burn.
    pub fuel_per_call: u64,
    /// Fuel the plugin's budget regains per second, across all its calls and clients.
    pub fuel_per_second: u64,
    /// The most fuel the budget holds.
    pub fuel_burst: u64,
    /// Wall-clock time one call may take, in milliseconds.
    pub timeout_ms: u64,
    /// Linear memory one instance may hold, in bytes.
    pub memory_bytes: u64,
    /// Bytes of content one call may return.
    pub output_bytes: u64,
    /// Calls a minute, all clients together.
    pub calls_per_minute: u64,
    /// Calls a minute from any one client.
    pub calls_per_minute_per_client: u64,
    /// Calls running at once.
    pub concurrent_calls: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // About a second of one busy core: a tight loop burns ~1.1e10 fuel a second on this
            // 2-core machine (misbehave `burn`, fuel_used / duration_ms in the audit log).
            fuel_per_call: 10_000_000_000,
            // About one core, sustained, with room for a few full calls at once.
            fuel_per_second: 10_000_000_000,
            fuel_burst: 40_000_000_000,
            timeout_ms: 30_000,
            memory_bytes: 128 << 20,
            output_bytes: 4 << 20,
            calls_per_minute: 6_000,
            calls_per_minute_per_client: 3_000,
            concurrent_calls: 16,
        }
    }
}

/// One plugin, as the server will load it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    pub name: String,
    pub path: PathBuf,
    /// Prefix for public names; empty for none.
    pub prefix: String,
    pub roots: RootsAccess,
    pub dirs: Vec<DirGrant>,
    pub limits: Limits,
    /// Environment variables, resolved.
    pub env: Vec<(String, String)>,
    pub network: Vec<HostPattern>,
    /// By the plugin's own tool name.
    pub tools: BTreeMap<String, ToolPolicy>,
    /// The SHA-256 the component must have, when the operator pinned it.
    pub sha256: Option<[u8; 32]>,
}

impl PluginConfig {
    /// A plugin with no grants and the default limits.
    pub fn new(name: impl Into<String>, path: PathBuf) -> PluginConfig {
        let name = name.into();
        PluginConfig {
            prefix: name.clone(),
            name,
            path,
            roots: RootsAccess::None,
            dirs: Vec::new(),
            limits: Limits::default(),
            env: Vec::new(),
            network: Vec::new(),
            tools: BTreeMap::new(),
            sha256: None,
        }
    }
}

/// The server's resolved configuration: file and command line together.
#[derive(Debug, Clone)]
pub struct Config {
    pub page_size: usize,
    pub cache_dir: Option<PathBuf>,
    /// Roots for clients that give none.
    pub roots: Vec<PathBuf>,
    /// Whether plugins and the configuration are reloaded when they change.
    pub watch: bool,
    pub http: HttpConfig,
    pub plugins: Vec<PluginConfig>,
    pub access: AccessConfig,
    pub audit: Option<AuditConfig>,
    pub request_state: RequestStateConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            page_size: DEFAULT_PAGE_SIZE,
            cache_dir: None,
            roots: Vec::new(),
            watch: true,
            http: HttpConfig::default(),
            plugins: Vec::new(),
            access: AccessConfig::default(),
            audit: None,
            request_state: RequestStateConfig::default(),
        }
    }
}

/// Most calls one plugin may run at once: half the instance pool (`runtime::INSTANCE_SLOTS`), so
/// no plugin can hold every instance slot while others wait.
pub const MAX_CONCURRENT_CALLS: u64 = 64;
