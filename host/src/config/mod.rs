//! `palisade.toml`: the operator's configuration, validated before anything is loaded.
//!
//! Every field is documented in docs/configuration.md. Unknown fields are rejected so that a typo never silently
//! turns a grant or a limit into its default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub mod access;
pub mod network;

pub use access::{AccessConfig, Identity, Scope};
pub use network::HostPattern;

/// Default number of items per page of `tools/list`.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// The whole configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default)]
    /// In the file's order: on a collision, the plugin further down is not served.
    pub plugins: indexmap::IndexMap<String, PluginSection>,
    #[serde(default)]
    pub auth: AuthSection,
    pub audit: Option<AuditSection>,
}

/// `[auth]`: bearer tokens for HTTP clients and the scopes they carry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSection {
    /// The scope a client over stdio gets (default `all`).
    pub stdio_scope: Option<String>,
    /// Named scopes: lists of `PLUGIN` or `PLUGIN/TOOL` globs.
    #[serde(default)]
    pub scopes: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub tokens: Vec<TokenSection>,
}

/// `[[auth.tokens]]`: one token, given as exactly one of `sha256`, `file` or `env`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSection {
    /// Names the client in logs, the audit log and rate limits.
    pub name: String,
    /// The SHA-256 of the token, in hex (`palisade token` prints one).
    pub sha256: Option<String>,
    /// A file holding the token, relative to the configuration file.
    pub file: Option<PathBuf>,
    /// An environment variable of the server's holding the token.
    pub env: Option<String>,
    /// The scope the token grants.
    pub scope: String,
}

/// `[audit]`: one JSON line per call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSection {
    /// The log file, relative to the configuration file.
    pub path: PathBuf,
    /// Size at which the file is rotated, in MiB (default 10).
    pub max_mib: Option<u64>,
    /// Rotated files kept: `PATH.1` (newest) to `PATH.N` (default 5).
    pub keep: Option<u32>,
    /// `"hash"` (default: the SHA-256 of the arguments) or `"full"`.
    #[serde(default)]
    pub arguments: AuditArguments,
    /// Serve calls even when the log cannot be written (default false: refuse them).
    #[serde(default)]
    pub fail_open: bool,
}

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

/// `[server]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Items per page in list results.
    pub page_size: Option<usize>,
    /// Where compiled components are cached.
    pub cache_dir: Option<PathBuf>,
    /// Directories served as roots to clients that give none, relative to the file.
    #[serde(default)]
    pub roots: Vec<PathBuf>,
    /// Reload plugins and this file when they change (default true).
    pub watch: Option<bool>,
    /// A file holding the secret `requestState` is signed with (2026-07-28 multi round-trip
    /// requests), relative to this file; every process behind one load balancer needs the same.
    pub request_state_key_file: Option<PathBuf>,
    /// How long a client may take to answer input requests, in seconds (default 1800).
    pub request_state_ttl_s: Option<u64>,
    #[serde(default)]
    pub http: HttpSection,
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
const DEFAULT_REQUEST_STATE_TTL_S: u64 = 1800;

/// `[server.http]`: MCP over HTTP instead of stdio.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSection {
    /// `ADDRESS:PORT` or `PORT` (on 127.0.0.1); serving HTTP when set.
    pub listen: Option<String>,
    /// Host names the `Host` header may carry, besides loopback.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call, besides loopback pages.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Seconds before an idle session is forgotten (default 1800).
    pub session_idle_timeout_s: Option<u64>,
    /// Largest request body in MiB (default 16).
    pub max_body_mib: Option<u64>,
    /// Seconds a client may take to send a request's headers, and a kept-alive connection may
    /// sit idle (default 30).
    pub header_timeout_s: Option<u64>,
    /// Seconds a client may take to send a request's body (default 60).
    pub body_timeout_s: Option<u64>,
    /// Initialize-based sessions open at once, from all clients (default 1024).
    pub max_sessions: Option<usize>,
    /// Initialize-based sessions open at once from one client: a token, or an anonymous
    /// client's address (default 64).
    pub max_sessions_per_client: Option<usize>,
}

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

/// `PORT` (on 127.0.0.1), `localhost:PORT` or `IP:PORT`.
pub fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok((std::net::Ipv4Addr::LOCALHOST, port).into());
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("`{text}`: bad port"))?;
        return Ok((std::net::Ipv4Addr::LOCALHOST, port).into());
    }
    text.parse().map_err(|_| {
        format!("`{text}` is not PORT, localhost:PORT or IP:PORT (such as 127.0.0.1:8080)")
    })
}

/// `[plugins.NAME]`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSection {
    /// The component file, relative to the configuration file.
    pub path: PathBuf,
    /// The prefix of the plugin's public tool names; the plugin's name by default, `""` for none.
    pub prefix: Option<String>,
    /// Access to the client's roots (and `--root` directories).
    #[serde(default)]
    pub roots: RootsAccess,
    /// Host directories the plugin may use.
    #[serde(default)]
    pub dirs: Vec<DirGrant>,
    #[serde(default)]
    pub limits: LimitsSection,
    /// Environment variables the plugin sees: a value, or `{ from_host = "VAR" }`.
    #[serde(default)]
    pub env: BTreeMap<String, EnvValue>,
    /// Hosts the plugin may reach over `wasi:http` (see [`HostPattern`]).
    #[serde(default)]
    pub network: Vec<String>,
    /// Per-tool settings, by the plugin's own tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolSection>,
    /// The SHA-256 the component file must have (hex); a different file is refused.
    pub sha256: Option<String>,
}

/// An environment variable's value: given, or passed from the server's own environment.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum EnvValue {
    Value(String),
    FromHost { from_host: String },
}

/// `[plugins.NAME.tools.TOOL]`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSection {
    /// Ask the user (through elicitation) before every call.
    #[serde(default)]
    pub confirm: bool,
    /// Replaces the plugin's own annotations, field by field.
    #[serde(default)]
    pub annotations: AnnotationOverrides,
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

/// `[plugins.NAME.limits]`; anything left out takes the default of [`Limits`].
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSection {
    pub fuel_per_call: Option<u64>,
    pub fuel_per_second: Option<u64>,
    pub fuel_burst: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub memory_mib: Option<u64>,
    pub output_kib: Option<u64>,
    pub calls_per_minute: Option<u64>,
    pub calls_per_minute_per_client: Option<u64>,
    pub concurrent_calls: Option<u64>,
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

/// A configuration error, with where it is and how to fix it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

impl Config {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError(format!(
                "cannot read configuration file {}: {e}",
                path.display()
            ))
        })?;
        Self::parse(&text, path)
    }

    /// Validates the text of a configuration file; `path` names it in errors and anchors relative
    /// paths.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| {
            ConfigError(format!(
                "{}: {}\nhow to fix: correct or remove the field; every field is listed in \
                 docs/configuration.md",
                path.display(),
                e.to_string().trim_end()
            ))
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let at = |name: &str, field: &str| {
            let line = line_of(text, name, field);
            format!("{}{}: [plugins.{name}] {field}", path.display(), line)
        };

        let page_size = file.server.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        if page_size == 0 || page_size > 10_000 {
            return Err(ConfigError(format!(
                "{}: [server] page_size = {page_size} is out of range\nhow to fix: use a number from 1 to 10000",
                path.display()
            )));
        }
        let cache_dir = file.server.cache_dir.map(|d| base.join(d));
        let ttl = file
            .server
            .request_state_ttl_s
            .unwrap_or(DEFAULT_REQUEST_STATE_TTL_S);
        if !(1..=86_400).contains(&ttl) {
            return Err(ConfigError(format!(
                "{}: [server] request_state_ttl_s = {ttl} is out of range\nhow to fix: use a number of seconds from 1 to 86400",
                path.display()
            )));
        }
        let request_state = RequestStateConfig {
            key_file: file.server.request_state_key_file.map(|f| base.join(f)),
            ttl: std::time::Duration::from_secs(ttl),
        };
        let roots: Vec<PathBuf> = file.server.roots.iter().map(|r| base.join(r)).collect();
        let http_section = &file.server.http;
        let defaults = HttpConfig::default();
        let http = HttpConfig {
            listen: http_section
                .listen
                .as_deref()
                .map(parse_listen)
                .transpose()
                .map_err(|why| {
                    ConfigError(format!(
                        "{}: [server.http] listen = {why}\nhow to fix: use a form such as \"127.0.0.1:8080\"",
                        path.display()
                    ))
                })?,
            allowed_hosts: http_section.allowed_hosts.clone(),
            allowed_origins: http_section.allowed_origins.clone(),
            session_idle_timeout: secs_or(http_section.session_idle_timeout_s, defaults.session_idle_timeout),
            max_body_bytes: http_section
                .max_body_mib
                .map(|m| (m as usize).saturating_mul(1 << 20))
                .unwrap_or(defaults.max_body_bytes),
            header_timeout: secs_or(http_section.header_timeout_s, defaults.header_timeout),
            body_timeout: secs_or(http_section.body_timeout_s, defaults.body_timeout),
            max_sessions: http_section.max_sessions.unwrap_or(defaults.max_sessions),
            max_sessions_per_client: http_section
                .max_sessions_per_client
                .unwrap_or(defaults.max_sessions_per_client),
        };
        if http.session_idle_timeout.is_zero()
            || http.max_body_bytes == 0
            || http.header_timeout.is_zero()
            || http.body_timeout.is_zero()
            || http.max_sessions == 0
            || http.max_sessions_per_client == 0
        {
            return Err(ConfigError(format!(
                "{}: [server.http] session_idle_timeout_s, max_body_mib, header_timeout_s, \
                 body_timeout_s, max_sessions and max_sessions_per_client must be positive",
                path.display()
            )));
        }
        if let Some(bad) = roots.iter().find(|r| !r.is_dir()) {
            return Err(ConfigError(format!(
                "{}: [server] roots: {} is not a directory\nhow to fix: create it or correct the path (relative paths start at the configuration file)",
                path.display(),
                bad.display()
            )));
        }

        let mut plugins = Vec::new();
        for (name, section) in file.plugins {
            check_plugin_name(&name).map_err(|why| {
                ConfigError(format!("{}: [plugins.{name}]: {why}", path.display()))
            })?;
            let prefix = section.prefix.unwrap_or_else(|| name.clone());
            if !prefix.is_empty() && !is_public_name(&prefix) {
                return Err(ConfigError(format!(
                    "{} = {prefix:?} is not a valid prefix\nhow to fix: use 1 to 32 of A-Z a-z 0-9 _ -, or \"\" for none",
                    at(&name, "prefix")
                )));
            }
            let mut dirs = Vec::new();
            for dir in section.dirs {
                if !dir.guest.starts_with('/') || dir.guest.split('/').any(|c| c == "..") {
                    return Err(ConfigError(format!(
                        "{} guest = {:?} must be an absolute path without `..`\nhow to fix: use a path such as \"/data\"",
                        at(&name, "dirs"),
                        dir.guest
                    )));
                }
                let guest = match dir.guest.trim_end_matches('/') {
                    "" => "/",
                    trimmed => trimmed,
                };
                if guest == "/roots" || guest.starts_with("/roots/") {
                    return Err(ConfigError(format!(
                        "{} guest = {:?}: /roots is reserved for the roots\nhow to fix: use another path, such as \"/data\"",
                        at(&name, "dirs"),
                        dir.guest
                    )));
                }
                if dirs.iter().any(|d: &DirGrant| d.guest == guest) {
                    return Err(ConfigError(format!(
                        "{} guest = {:?} is granted twice\nhow to fix: give each directory its own guest path",
                        at(&name, "dirs"),
                        dir.guest
                    )));
                }
                let host = base.join(&dir.host);
                if !host.is_dir() {
                    return Err(ConfigError(format!(
                        "{} host = {:?}: {} is not a directory\nhow to fix: create it or correct the path (relative paths start at the configuration file)",
                        at(&name, "dirs"),
                        dir.host.display(),
                        host.display()
                    )));
                }
                dirs.push(DirGrant {
                    host,
                    guest: guest.to_string(),
                    mode: dir.mode,
                });
            }
            let limits = resolve_limits(section.limits).map_err(|(field, why)| {
                ConfigError(format!("{} {why}", at(&name, &format!("limits.{field}"))))
            })?;
            let env = resolve_env(section.env)
                .map_err(|(var, why)| ConfigError(format!("{} {var}: {why}", at(&name, "env"))))?;
            let network = section
                .network
                .iter()
                .map(|entry| HostPattern::parse(entry))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| {
                    ConfigError(format!(
                        "{}: {why}\nhow to fix: list entries such as \"api.example.com\", \"*.example.org:8443\" or \"http://127.0.0.1:8080\"",
                        at(&name, "network")
                    ))
                })?;
            let tools = section
                .tools
                .into_iter()
                .map(|(tool, t)| {
                    (
                        tool,
                        ToolPolicy {
                            confirm: t.confirm,
                            annotations: t.annotations,
                        },
                    )
                })
                .collect();
            let sha256 = match section.sha256.as_deref() {
                None => None,
                Some(text) => Some(parse_sha256(text).ok_or_else(|| {
                    ConfigError(format!(
                        "{} = {text:?} is not a SHA-256\nhow to fix: give the 64 hex digits `sha256sum FILE` or `palisade inspect FILE` prints",
                        at(&name, "sha256")
                    ))
                })?),
            };
            plugins.push(PluginConfig {
                path: base.join(&section.path),
                name,
                prefix,
                roots: section.roots,
                dirs,
                limits,
                env,
                network,
                tools,
                sha256,
            });
        }
        Ok(Config {
            page_size,
            cache_dir,
            roots,
            watch: file.server.watch.unwrap_or(true),
            http,
            plugins,
            access: resolve_access(file.auth, base)
                .map_err(|why| ConfigError(format!("{}: [auth] {why}", path.display())))?,
            audit: file
                .audit
                .map(|a| resolve_audit(a, base))
                .transpose()
                .map_err(|why| ConfigError(format!("{}: [audit] {why}", path.display())))?,
            request_state,
        })
    }
}

/// The limits of `[plugins.NAME.limits]` with defaults filled in; the error names the field.
fn resolve_limits(l: LimitsSection) -> Result<Limits, (&'static str, String)> {
    let d = Limits::default();
    let fields = [
        ("fuel_per_call", l.fuel_per_call),
        ("fuel_per_second", l.fuel_per_second),
        ("fuel_burst", l.fuel_burst),
        ("timeout_ms", l.timeout_ms),
        ("memory_mib", l.memory_mib),
        ("output_kib", l.output_kib),
        ("calls_per_minute", l.calls_per_minute),
        ("calls_per_minute_per_client", l.calls_per_minute_per_client),
        ("concurrent_calls", l.concurrent_calls),
    ];
    if let Some((field, _)) = fields.iter().find(|(_, v)| *v == Some(0)) {
        return Err((
            field,
            "= 0 would refuse every call\nhow to fix: give a positive number, or leave it out for the default".into(),
        ));
    }
    let limits = Limits {
        fuel_per_call: l.fuel_per_call.unwrap_or(d.fuel_per_call),
        fuel_per_second: l.fuel_per_second.unwrap_or(d.fuel_per_second),
        fuel_burst: l.fuel_burst.unwrap_or(d.fuel_burst),
        timeout_ms: l.timeout_ms.unwrap_or(d.timeout_ms),
        memory_bytes: l
            .memory_mib
            .map(|m| m.saturating_mul(1 << 20))
            .unwrap_or(d.memory_bytes),
        output_bytes: l
            .output_kib
            .map(|k| k.saturating_mul(1 << 10))
            .unwrap_or(d.output_bytes),
        calls_per_minute: l.calls_per_minute.unwrap_or(d.calls_per_minute),
        calls_per_minute_per_client: l
            .calls_per_minute_per_client
            .unwrap_or(d.calls_per_minute_per_client),
        concurrent_calls: l.concurrent_calls.unwrap_or(d.concurrent_calls),
    };
    if limits.memory_bytes > 4 << 30 {
        return Err((
            "memory_mib",
            "is above 4096 MiB, the most a 32-bit wasm memory can use\nhow to fix: use at most 4096".into(),
        ));
    }
    if limits.concurrent_calls > MAX_CONCURRENT_CALLS {
        return Err((
            "concurrent_calls",
            format!(
                "is above {MAX_CONCURRENT_CALLS}, half the server's instance pool: one plugin \
                 could take every instance from the others\nhow to fix: use at most \
                 {MAX_CONCURRENT_CALLS}"
            ),
        ));
    }
    Ok(limits)
}

/// A setting given in seconds, or its default.
fn secs_or(seconds: Option<u64>, default: std::time::Duration) -> std::time::Duration {
    seconds.map_or(default, std::time::Duration::from_secs)
}

/// Most calls one plugin may run at once: half the instance pool (`runtime::INSTANCE_SLOTS`), so
/// no plugin can hold every instance slot while others wait.
pub const MAX_CONCURRENT_CALLS: u64 = 64;

/// Environment variables with values from the configuration or the server's own environment;
/// the error names the variable.
fn resolve_env(env: BTreeMap<String, EnvValue>) -> Result<Vec<(String, String)>, (String, String)> {
    env.into_iter()
        .map(|(var, value)| {
            if var.is_empty() || var.contains(['=', '\0']) {
                return Err((var, "is not a valid variable name".to_string()));
            }
            let value = match value {
                EnvValue::Value(v) => v,
                EnvValue::FromHost { from_host } => std::env::var(&from_host).map_err(|_| {
                    (
                        var.clone(),
                        format!(
                            "the server's environment variable {from_host} is not set (or not UTF-8)\nhow to fix: set it before starting palisade, or give a value"
                        ),
                    )
                })?,
            };
            if value.contains('\0') {
                return Err((var, "its value contains a NUL byte".to_string()));
            }
            Ok((var, value))
        })
        .collect()
}

/// Scopes and tokens: each token's hash, read from where the configuration says.
fn resolve_access(auth: AuthSection, base: &Path) -> Result<AccessConfig, String> {
    let mut scopes: BTreeMap<String, std::sync::Arc<Scope>> = BTreeMap::new();
    scopes.insert(access::ALL.into(), std::sync::Arc::new(Scope::all()));
    for (name, entries) in &auth.scopes {
        if name == access::ALL {
            return Err(format!(
                "scopes.{name}: `{name}` is built in (everything)\nhow to fix: give your scope another name"
            ));
        }
        let scope = Scope::parse(name, entries).map_err(|why| format!("scopes.{name}: {why}"))?;
        scopes.insert(name.clone(), std::sync::Arc::new(scope));
    }
    let find = |scope: &str, field: &str| {
        scopes.get(scope).cloned().ok_or_else(|| {
            let known: Vec<&str> = scopes.keys().map(String::as_str).collect();
            format!(
                "{field} = {scope:?} is not a scope\nhow to fix: use one of {} or define it under [auth.scopes]",
                known.join(", ")
            )
        })
    };
    let stdio_scope = find(
        auth.stdio_scope.as_deref().unwrap_or(access::ALL),
        "stdio_scope",
    )?;
    let mut tokens: Vec<access::Token> = Vec::new();
    for t in auth.tokens {
        let at = format!("tokens {:?}", t.name);
        if t.name.is_empty() || t.name.len() > 64 || t.name.chars().any(char::is_control) {
            return Err(format!(
                "{at}: the name must be 1 to 64 printable characters"
            ));
        }
        if tokens.iter().any(|other| other.name == t.name) {
            return Err(format!(
                "{at}: two tokens have this name\nhow to fix: name each token differently"
            ));
        }
        let sha256 = match (t.sha256, t.file, t.env) {
            (Some(hex), None, None) => parse_sha256(&hex).ok_or_else(|| {
                format!("{at}: sha256 is not 64 hex digits\nhow to fix: `palisade token` prints a token and its hash")
            })?,
            (None, Some(file), None) => {
                let file = base.join(file);
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("{at}: cannot read {}: {e}", file.display()))?;
                token_hash(text.trim()).map_err(|why| format!("{at}: {} {why}", file.display()))?
            }
            (None, None, Some(var)) => {
                let text = std::env::var(&var)
                    .map_err(|_| format!("{at}: environment variable {var} is not set"))?;
                token_hash(text.trim()).map_err(|why| format!("{at}: {var} {why}"))?
            }
            _ => {
                return Err(format!(
                    "{at}: give exactly one of sha256, file or env\nhow to fix: `palisade token` prints a token and its hash"
                ));
            }
        };
        if tokens.iter().any(|other| other.sha256 == sha256) {
            return Err(format!("{at}: the same token is configured twice"));
        }
        tokens.push(access::Token {
            name: t.name,
            sha256,
            scope: find(&t.scope, &format!("{at}: scope"))?,
        });
    }
    Ok(AccessConfig {
        tokens,
        stdio_scope,
    })
}

/// Tokens shorter than this are refused: they could be guessed.
const MIN_TOKEN_LEN: usize = 16;

fn token_hash(token: &str) -> Result<[u8; 32], String> {
    if token.len() < MIN_TOKEN_LEN {
        return Err(format!(
            "holds a token shorter than {MIN_TOKEN_LEN} characters\nhow to fix: `palisade token` makes a strong one"
        ));
    }
    Ok(access::sha256(token))
}

fn resolve_audit(audit: AuditSection, base: &Path) -> Result<AuditConfig, String> {
    let max_mib = audit.max_mib.unwrap_or(10);
    if max_mib == 0 {
        return Err("max_mib must be at least 1".into());
    }
    Ok(AuditConfig {
        path: base.join(audit.path),
        max_bytes: max_mib.saturating_mul(1 << 20),
        keep: audit.keep.unwrap_or(5),
        arguments: audit.arguments,
        fail_open: audit.fail_open,
    })
}

/// Plugin names become log tags and default prefixes, so they follow the public-name rules.
pub fn check_plugin_name(name: &str) -> Result<(), String> {
    if is_public_name(name) {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a valid plugin name: use 1 to 32 of A-Z a-z 0-9 _ -"
        ))
    }
}

fn is_public_name(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// 64 hex digits, either case.
pub fn parse_sha256(text: &str) -> Option<[u8; 32]> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut bytes).ok()?;
    Some(bytes)
}

/// Best-effort ", line N" for a semantic error found after parsing: the line of `field` inside the
/// plugin's section, else the section header.
fn line_of(text: &str, plugin: &str, field: &str) -> String {
    let header = format!("[plugins.{plugin}");
    let key = field.rsplit('.').next().unwrap_or(field);
    let mut in_section = false;
    let mut header_line = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('[') {
            in_section = t.starts_with(&header);
            if in_section && header_line.is_none() {
                header_line = Some(i + 1);
            }
            continue;
        }
        if in_section && t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') {
            return format!(", line {}", i + 1);
        }
    }
    header_line
        .map(|l| format!(", line {l}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/tmp/palisade.toml"))
    }

    #[test]
    fn unknown_field_names_file_line_and_field() {
        let err = parse("[plugins.hello]\npath = \"h.wasm\"\nfuel = 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/tmp/palisade.toml"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("unknown field `fuel`"), "{err}");
        assert!(err.contains("how to fix"), "{err}");
    }

    #[test]
    fn defaults_apply_and_paths_are_relative_to_the_file() {
        let config = parse("[plugins.hello]\npath = \"h.wasm\"\n").unwrap();
        assert_eq!(config.page_size, DEFAULT_PAGE_SIZE);
        let p = &config.plugins[0];
        assert_eq!(p.prefix, "hello");
        assert_eq!(p.path, Path::new("/tmp/h.wasm"));
        assert_eq!(p.roots, RootsAccess::None);
        assert_eq!(p.limits, Limits::default());
    }

    #[test]
    fn zero_limit_is_refused_with_its_line() {
        let err = parse("[plugins.a]\npath = \"a.wasm\"\n[plugins.a.limits]\ntimeout_ms = 0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 4"), "{err}");
        assert!(err.contains("limits.timeout_ms"), "{err}");
    }

    #[test]
    fn grants_env_network_and_tools_are_read() {
        let config = parse(
            r#"[plugins.a]
path = "a.wasm"
network = ["api.example.com", "http://127.0.0.1:8080"]
[plugins.a.env]
PLAIN = "v"
KEY = { from_host = "PATH" }
[plugins.a.tools.write]
confirm = true
annotations = { readOnlyHint = false }
[plugins.a.limits]
calls_per_minute = 10
output_kib = 1
"#,
        )
        .unwrap();
        let p = &config.plugins[0];
        assert_eq!(
            p.env,
            [
                ("KEY".into(), std::env::var("PATH").unwrap()),
                ("PLAIN".into(), "v".into())
            ]
        );
        assert_eq!(p.network.len(), 2);
        assert!(p.network[1].allow_http);
        let tool = &p.tools["write"];
        assert!(tool.confirm);
        assert_eq!(tool.annotations.read_only_hint, Some(false));
        assert_eq!(p.limits.calls_per_minute, 10);
        assert_eq!(p.limits.output_bytes, 1024);
        assert_eq!(
            p.limits.concurrent_calls,
            Limits::default().concurrent_calls
        );
    }

    #[test]
    fn bad_grants_are_refused_with_the_field() {
        for (section, needle) in [
            ("network = [\"https://a.com/path\"]", "network"),
            ("network = [\"*\"]", "network"),
            (
                "[plugins.a.env]\nX = { from_host = \"PALISADE_SURELY_UNSET_VAR\" }",
                "PALISADE_SURELY_UNSET_VAR is not set",
            ),
            (
                "[plugins.a.env]\n\"A=B\" = \"x\"",
                "not a valid variable name",
            ),
            (
                "[plugins.a.limits]\nconcurrent_calls = 0",
                "limits.concurrent_calls",
            ),
            (
                "[plugins.a.tools.t]\nannotations = { readonly = true }",
                "unknown field",
            ),
            ("sha256 = \"abc\"", "sha256"),
        ] {
            let err = parse(&format!("[plugins.a]\npath = \"a.wasm\"\n{section}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{section}: {err}");
        }
    }

    #[test]
    fn auth_tokens_and_scopes_are_checked() {
        let hash = hex::encode(access::sha256("a-long-enough-token"));
        let config = parse(&format!(
            "[auth]\nstdio_scope = \"mine\"\n[auth.scopes]\nmine = [\"a/x_*\"]\n[[auth.tokens]]\nname = \"t\"\nsha256 = \"{hash}\"\nscope = \"all\"\n"
        ))
        .unwrap();
        assert!(config.access.tokens_required());
        assert_eq!(
            &*config
                .access
                .authenticate("a-long-enough-token")
                .unwrap()
                .client,
            "t"
        );
        assert!(config.access.stdio_scope.allows_item("a", "x_1"));
        assert!(!config.access.stdio_scope.allows_item("a", "y"));
        for (auth, needle) in [
            ("[auth]\nstdio_scope = \"nope\"", "not a scope"),
            ("[auth.scopes]\nall = [\"a\"]", "built in"),
            (
                "[[auth.tokens]]\nname = \"t\"\nscope = \"all\"",
                "exactly one of sha256, file or env",
            ),
            (
                "[[auth.tokens]]\nname = \"t\"\nscope = \"all\"\nsha256 = \"zz\"",
                "64 hex digits",
            ),
            (
                "[[auth.tokens]]\nname = \"t\"\nscope = \"all\"\nenv = \"PALISADE_SURELY_UNSET_VAR\"",
                "is not set",
            ),
        ] {
            let err = parse(auth).unwrap_err().to_string();
            assert!(err.contains(needle), "{auth}: {err}");
        }
    }

    #[test]
    fn relative_guest_path_is_refused() {
        let err = parse(
            "[plugins.a]\npath = \"a.wasm\"\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"data\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("absolute path"), "{err}");
    }

    #[test]
    fn reserved_or_repeated_guest_paths_are_refused() {
        let dirs = |a: &str, b: &str| {
            format!(
                "[plugins.a]\npath = \"a.wasm\"\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"{a}\"\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"{b}\"\n"
            )
        };
        let err = parse(&dirs("/data", "/data/")).unwrap_err().to_string();
        assert!(err.contains("granted twice"), "{err}");
        let err = parse(&dirs("/data", "/roots/x")).unwrap_err().to_string();
        assert!(err.contains("reserved"), "{err}");
        assert!(parse(&dirs("/data", "/more")).is_ok());
    }

    #[test]
    fn bad_roots_value_is_explained() {
        let err = parse("[plugins.a]\npath = \"a.wasm\"\nroots = \"all\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("read-only"), "{err}");
    }
}
