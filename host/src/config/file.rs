//! The configuration file as written: each section as TOML has it, before any check. Unknown fields
//! are rejected here, so that a typo never silently turns a grant or a limit into its default.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use super::model::{AccessMode, AnnotationOverrides, AuditArguments, RootsAccess, RootsAt};

/// The whole configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConfigFile {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default)]
    /// In the file's order: on a collision, the plugin further down is not served.
    pub plugins: indexmap::IndexMap<String, Spanned<PluginSection>>,
    /// `[auth]`.
    #[serde(default)]
    pub auth: Option<Spanned<AuthSection>>,
    /// `[audit]`; none: no audit log.
    pub audit: Option<Spanned<AuditSection>>,
    /// `[sources]`.
    #[serde(default)]
    pub sources: Option<Spanned<SourcesSection>>,
    /// `[telemetry]`.
    #[serde(default)]
    pub telemetry: Option<Spanned<TelemetrySection>>,
    /// `[cluster]`.
    #[serde(default)]
    pub cluster: Option<Spanned<super::cluster::ClusterSection>>,
    /// `[tasks]`.
    #[serde(default)]
    pub tasks: TasksSection,
    /// `[console]`.
    #[serde(default)]
    pub console: Option<Spanned<ConsoleSection>>,
}

/// `[console]`: the operator's web console.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConsoleSection {
    /// Who may use it: names of `[[auth.tokens]]`, or `oauth:SUBJECT`.
    #[serde(default)]
    pub operators: Vec<Spanned<String>>,
    /// `ADDRESS:PORT` (or `PORT`, on 127.0.0.1) of a listener of its own, with a one-time
    /// login link printed on stderr (default: none).
    pub listen: Option<Spanned<String>>,
    /// How long a grant question a client cannot show waits for an operator, in seconds.
    pub question_wait_s: Option<Spanned<u64>>,
}

/// `[tasks]`: tool calls that run on after their request, as MCP tasks.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TasksSection {
    /// How long a task and its result are kept after it is created, in seconds.
    pub ttl_s: Option<Spanned<u64>>,
    /// How often clients are told to poll, in milliseconds; faster polls are answered no sooner.
    pub poll_interval_ms: Option<Spanned<u64>>,
    /// Tasks one client may have running at once.
    pub running_per_client: Option<Spanned<u64>>,
    /// Bytes of finished tasks' results kept, all clients together, in MiB.
    pub kept_mib: Option<Spanned<u64>>,
}

/// `[telemetry]`: what operators watch the server with.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TelemetrySection {
    /// `ADDRESS:PORT` (or `PORT`, on 127.0.0.1) serving `/metrics` (Prometheus), `/healthz`
    /// and `/readyz`; apart from MCP, so it is never public by accident (default: none).
    pub metrics_listen: Option<String>,
    /// Where traces go over OTLP/HTTP (protobuf): the collector's base URL, such as
    /// `http://127.0.0.1:4318` (default: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`; without either, no traces).
    pub otlp_endpoint: Option<String>,
    /// `service.name` of the traces (default: `OTEL_SERVICE_NAME`, else `palisade`).
    pub service_name: Option<String>,
    /// Share of the traces no client started that are kept, 0 to 1 (default 1); a client's
    /// sampling decision is followed.
    pub sample_ratio: Option<f64>,
}

/// `[sources]`: how plugins from registries and URLs are fetched and kept.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SourcesSection {
    /// Where fetched components are kept (default ~/.local/share/palisade/store).
    pub store_dir: Option<PathBuf>,
    /// Largest component fetched, in MiB (default 256).
    pub max_mib: Option<u64>,
    /// Registries (`HOST:PORT`) reached over plain HTTP; loopback registries always are.
    #[serde(default)]
    pub insecure_registries: Vec<String>,
    /// Seconds `serve` waits for a registry to say what a tag names now (default 5).
    pub tag_check_timeout_s: Option<u64>,
    /// Credentials, by registry (`HOST[:PORT]`).
    #[serde(default)]
    pub registries: BTreeMap<String, RegistrySection>,
    /// Who must have signed every plugin from a registry or a URL (a plugin's own `verify`
    /// replaces it).
    pub verify: Option<VerifySection>,
    /// A Sigstore trusted root (JSON) for keyless verification, relative to this file.
    pub trusted_root: Option<PathBuf>,
    /// Refuse a plugin from a registry or a URL that no `verify` covers (default false).
    pub require_signatures: Option<bool>,
}

/// `verify = { key = "cosign.pub" }` or `verify = { identity = "...", issuer = "https://..." }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VerifySection {
    /// A public key file (PEM), relative to the configuration file.
    pub key: Option<PathBuf>,
    /// The signer's identity in its certificate: an email, or a CI workflow's URI.
    pub identity: Option<String>,
    /// The OIDC issuer that vouched for the identity.
    pub issuer: Option<String>,
}

/// `[sources.registries."HOST"]`: a user name and a password, or a token, from environment
/// variables (never in the file).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RegistrySection {
    /// The user name, with `password_env`.
    pub username: Option<String>,
    /// The variable holding the password.
    pub password_env: Option<String>,
    /// The variable holding a bearer token.
    pub token_env: Option<String>,
}

/// `[auth]`: bearer tokens for HTTP clients and the scopes they carry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AuthSection {
    /// The scope a client over stdio gets (default `all`).
    pub stdio_scope: Option<String>,
    /// Named scopes: lists of `PLUGIN` or `PLUGIN/TOOL` globs.
    #[serde(default)]
    pub scopes: BTreeMap<String, Vec<String>>,
    /// `[[auth.tokens]]`.
    #[serde(default)]
    pub tokens: Vec<TokenSection>,
    /// `[auth.oauth]`: access tokens from an OAuth 2.1 / OpenID provider.
    pub oauth: Option<OAuthSection>,
}

/// `[auth.oauth]`: this server as an OAuth 2.1 resource server (the MCP authorization
/// specification): the issuer it trusts, the resource it is, and what token scopes grant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OAuthSection {
    /// The authorization server's issuer URL, exactly as its tokens' `iss` claim has it.
    pub issuer: String,
    /// This server's canonical URL (RFC 8707), every token's audience must name it (default
    /// `http://LISTEN/mcp` when listening on loopback).
    pub resource: Option<String>,
    /// Signature algorithms accepted (default RS256, RS384, RS512, PS256, PS384, PS512, ES256,
    /// ES384, EdDSA).
    pub algorithms: Option<Vec<String>>,
    /// Seconds a token's `exp` and `nbf` may be off by (default 60).
    pub clock_skew_s: Option<u64>,
    /// The claim holding the token's scopes (default `scope`, else `scp`).
    pub scope_claim: Option<String>,
    /// Which Palisade scope each OAuth scope grants: `"OAUTH-SCOPE" = "PALISADE-SCOPE"`.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
    /// The OAuth scopes clients are told to ask for (metadata `scopes_supported`, and a token
    /// that covers nothing); default: every scope of `[auth.oauth.scopes]`.
    pub advertised_scopes: Option<Vec<String>>,
    /// Scopes granted by other claims (a group, a role).
    #[serde(default)]
    pub rules: Vec<ClaimRuleSection>,
}

/// `[[auth.oauth.rules]]`: a token whose `claim` is, or contains, `equals` gets `scope`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClaimRuleSection {
    /// The claim's name; `a.b` reaches into an object when no claim is named `a.b` itself.
    pub claim: String,
    /// The value it must be, or contain when it is a list.
    pub equals: String,
    /// The Palisade scope granted.
    pub scope: String,
}

/// `[[auth.tokens]]`: one token, given as exactly one of `sha256`, `file` or `env`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TokenSection {
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
pub(super) struct AuditSection {
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

/// `[server]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ServerSection {
    /// Items per page in list results.
    pub page_size: Option<Spanned<usize>>,
    /// Where compiled components are cached.
    pub cache_dir: Option<PathBuf>,
    /// Directories served as roots to clients that give none, relative to the file.
    #[serde(default)]
    pub roots: Vec<Spanned<PathBuf>>,
    /// Where plugins see the roots: `"host-paths"` (default) or `"/roots"`.
    pub roots_at: Option<RootsAt>,
    /// Reload plugins and this file when they change (default true).
    pub watch: Option<bool>,
    /// A file holding the secret `requestState` is signed with (2026-07-28 multi round-trip
    /// requests), relative to this file; every process behind one load balancer needs the same.
    pub request_state_key_file: Option<PathBuf>,
    /// How long a client may take to answer input requests, in seconds (default 1800).
    pub request_state_ttl_s: Option<Spanned<u64>>,
    /// The default of every plugin's `ask` (default false).
    pub ask: Option<bool>,
    /// The largest component file compiled, in MiB (default 64).
    pub max_component_mib: Option<Spanned<u64>>,
    /// The most functions a component's core modules may define (default 50000).
    pub max_component_functions: Option<Spanned<u64>>,
    /// A PEM file of certificate authorities every plugin's HTTPS trusts besides the bundled
    /// (Mozilla) set, relative to this file: a private API's, or a proxy's that re-signs traffic.
    pub ca_file: Option<Spanned<PathBuf>>,
    /// Seconds calls in flight may take to finish after SIGTERM before the server exits
    /// (default 30).
    pub shutdown_grace_s: Option<u64>,
    /// `[server.http]`.
    #[serde(default)]
    pub http: Option<Spanned<HttpSection>>,
}

/// `[server.http]`: MCP over HTTP instead of stdio.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HttpSection {
    /// `ADDRESS:PORT` or `PORT` (on 127.0.0.1); serving HTTP when set.
    pub listen: Option<Spanned<String>>,
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
    /// Addresses or CIDRs of proxies whose `Forwarded` / `X-Forwarded-For` name the client
    /// (default none: every client is its TCP peer).
    #[serde(default)]
    pub trusted_proxies: Vec<Spanned<String>>,
    /// Connections open at once from all clients (default 1024).
    pub max_connections: Option<usize>,
    /// Connections open at once from one address; trusted proxies count toward
    /// `max_connections` only (default 128).
    pub max_connections_per_address: Option<usize>,
}

/// `[plugins.NAME]`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PluginSection {
    /// The component file, relative to the configuration file.
    pub path: Option<Spanned<PathBuf>>,
    /// Where the component comes from instead of `path`: `oci://...`, `https://...` or a file.
    pub source: Option<Spanned<String>>,
    /// The prefix of the plugin's public tool names; the plugin's name by default, `""` for none.
    pub prefix: Option<Spanned<String>>,
    /// Access to the client's roots (and `--root` directories).
    #[serde(default)]
    pub roots: RootsAccess,
    /// Host directories the plugin may use.
    #[serde(default)]
    pub dirs: Vec<DirSection>,
    /// `[plugins.NAME.limits]`.
    #[serde(default)]
    pub limits: LimitsSection,
    /// Environment variables the plugin sees: a value, or `{ from_host = "VAR" }`.
    #[serde(default)]
    pub env: BTreeMap<String, Spanned<EnvValue>>,
    /// Serve the component's `wasi:http/incoming-handler` as the tool `request`.
    #[serde(default)]
    pub http_handler: bool,
    /// `[plugins.NAME.keyvalue]`: the plugin's own `wasi:keyvalue` store (none without it).
    pub keyvalue: Option<Spanned<KeyValueSection>>,
    /// Plugins whose components are composed into this one: their exports satisfy its imports.
    #[serde(default)]
    pub link: Vec<Spanned<String>>,
    /// Values the plugin reads through `wasi:config/store`: a value, or `{ from_host = "VAR" }`.
    #[serde(default)]
    pub config: BTreeMap<String, Spanned<EnvValue>>,
    /// Secrets the plugin reads through `wasi:config/store`: `NAME = { env = "VAR" }` or
    /// `NAME = { file = "PATH" }`, kept out of logs and errors.
    #[serde(default)]
    pub secrets: BTreeMap<String, Spanned<SecretSection>>,
    /// Hosts the plugin may reach over `wasi:http` (see [`HostPattern`](crate::runtime::HostPattern)).
    #[serde(default)]
    pub network: Vec<Spanned<String>>,
    /// A PEM file of certificate authorities this plugin's HTTPS trusts besides the bundled set
    /// and `[server] ca_file`, relative to this file.
    pub ca_file: Option<Spanned<PathBuf>>,
    /// Per-tool settings, by the plugin's own tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolSection>,
    /// The SHA-256 the component file must have (hex); a different file is refused.
    pub sha256: Option<Spanned<String>>,
    /// Who must have signed it (for a `source` from a registry or a URL).
    pub verify: Option<Spanned<VerifySection>>,
    /// A Sigstore trusted root for this plugin's keyless verification.
    pub trusted_root: Option<PathBuf>,
    /// Ask the user, during a call, for a host or environment variable the plugin reaches for
    /// without a grant (default: `[server] ask`, else false).
    pub ask: Option<bool>,
    /// `"per-client"`: an instance serves later calls of the same client; `"never"` (the
    /// default): a fresh instance for every call.
    pub reuse: Option<Spanned<ReuseSetting>>,
    /// Calls one reused instance serves before it is replaced (default 1000).
    pub reuse_calls: Option<Spanned<u32>>,
    /// Linear memory in MiB past which a reused instance is replaced (default: half of
    /// `limits.memory_mib`).
    pub reuse_memory_mib: Option<Spanned<u64>>,
    /// The most never-used instances kept ready for this plugin's calls (default 4; 0: each is
    /// made when its call comes).
    pub ready_instances: Option<Spanned<u64>>,
}

/// `reuse = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum ReuseSetting {
    /// A fresh instance for every call.
    Never,
    /// An instance serves later calls of the same client.
    PerClient,
}

/// `[plugins.NAME.keyvalue]`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KeyValueSection {
    /// The store's file, relative to the configuration file (default
    /// `palisade-keyvalue/NAME.json`).
    pub path: Option<PathBuf>,
    /// The most the store may hold, in KiB: bucket names, keys and values (default 1024).
    pub max_kib: Option<u64>,
}

/// `[plugins.NAME.secrets]` `NAME = { ... }`: where a secret's value is read from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SecretSection {
    /// The server's own environment variable that holds it.
    pub env: Option<String>,
    /// A file that holds it (relative to the configuration file), readable by no one else.
    pub file: Option<PathBuf>,
    /// The user's keyring entry that holds it: `"SERVICE/USER"`.
    pub keyring: Option<String>,
    /// Also give it to the plugin as the environment variable NAME.
    #[serde(default)]
    pub as_env: bool,
    /// Serve the plugin without it when its variable is unset, its file or keyring entry is
    /// missing, or no keyring answers (the server's log says so), instead of refusing to start.
    #[serde(default)]
    pub optional: bool,
}

/// An environment variable's value: given, or passed from the server's own environment.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum EnvValue {
    /// `NAME = "value"`: the value itself.
    Value(String),
    /// `NAME = { from_host = "VAR" }`: the server's own variable, passed on.
    FromHost {
        /// The server's own variable whose value is passed.
        from_host: String,
    },
}

/// `[plugins.NAME.tools.TOOL]`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolSection {
    /// Ask the user (through elicitation) before every call.
    #[serde(default)]
    pub confirm: bool,
    /// Replaces the plugin's own annotations, field by field.
    #[serde(default)]
    pub annotations: AnnotationOverrides,
    /// Replaces the plugin's own description of the tool.
    pub description: Option<String>,
    /// Whether a call may run as a task: `"forbidden"`, `"optional"` or `"required"`.
    pub task: Option<super::TaskSupport>,
}

/// `[plugins.NAME.limits]`; anything left out takes the default of [`Limits`](crate::runtime::Limits).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitsSection {
    /// Fuel one call may burn.
    pub fuel_per_call: Option<Spanned<u64>>,
    /// Fuel the plugin's budget regains a second.
    pub fuel_per_second: Option<Spanned<u64>>,
    /// The most fuel the budget holds.
    pub fuel_burst: Option<Spanned<u64>>,
    /// Time one call may take, in milliseconds.
    pub timeout_ms: Option<Spanned<u64>>,
    /// Memory one instance may hold, in MiB.
    pub memory_mib: Option<Spanned<u64>>,
    /// Bytes one call may return, in KiB.
    pub output_kib: Option<Spanned<u64>>,
    /// Calls a minute, all clients together.
    pub calls_per_minute: Option<Spanned<u64>>,
    /// Calls a minute from one client.
    pub calls_per_minute_per_client: Option<Spanned<u64>>,
    /// Calls running at once.
    pub concurrent_calls: Option<Spanned<u64>>,
    /// Questions one call may put to the client (0: none).
    pub questions_per_call: Option<Spanned<u64>>,
    /// Time one task may take, in seconds.
    pub task_timeout_s: Option<Spanned<u64>>,
    /// Fuel one task may burn.
    pub task_fuel: Option<Spanned<u64>>,
    /// Tasks of this plugin running at once, all clients together.
    pub running_tasks: Option<Spanned<u64>>,
    /// Cores this plugin's calls may run on at once.
    pub cores: Option<Spanned<u64>>,
}

/// One `[[plugins.NAME.dirs]]` entry, each field with where it is.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DirSection {
    /// The directory on the host (relative to the configuration file).
    pub host: Spanned<PathBuf>,
    /// Where the plugin sees it.
    pub guest: Spanned<String>,
    /// Read-only unless `read-write`.
    #[serde(default)]
    pub mode: AccessMode,
}
