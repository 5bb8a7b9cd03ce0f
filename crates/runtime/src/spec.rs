//! What a plugin may touch and how much it may spend: the sandbox's input, written by the
//! server's configuration and read by [`Plugin::load`](crate::Plugin::load).

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

use crate::host_pattern::HostPattern;

/// Whether a plugin sees the roots, and how.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootsAccess {
    /// The plugin sees no roots.
    #[default]
    None,
    /// Each root is preopened read-only.
    ReadOnly,
    /// Each root is preopened read-write.
    ReadWrite,
}

/// Where plugins see the roots.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum RootsAt {
    /// At the path the client named: `file:///home/me/notes` is `/home/me/notes`, so a path the
    /// user or the model says can be opened as it is.
    #[default]
    #[serde(rename = "host-paths")]
    HostPaths,
    /// At `/roots/<directory name>`, which tells plugins nothing about the host's layout.
    #[serde(rename = "/roots")]
    UnderRoots,
}

/// Read-only or read-write.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessMode {
    /// The plugin may read files and list directories.
    #[default]
    ReadOnly,
    /// The plugin may also create, write and remove them.
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
    /// What the plugin may do there.
    #[serde(default)]
    pub mode: AccessMode,
}

/// The most never-used instances a plugin keeps ready unless configured (`ready_instances`).
pub const DEFAULT_READY_INSTANCES: usize = 4;

/// The most `ready_instances` may be.
pub const MOST_READY_INSTANCES: usize = 8;

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
    /// Questions (elicitations and sampling requests) one call may put to the client.
    pub questions_per_call: u64,
    /// Wall-clock time one task (a call run detached from its request) may take, in
    /// milliseconds. Time it waits for the client's answers is not counted.
    pub task_timeout_ms: u64,
    /// Fuel one task may burn.
    pub task_fuel: u64,
    /// Tasks of the plugin running at once, all clients together (the protocol layer counts
    /// them; each also takes one of `concurrent_calls`).
    pub running_tasks: u64,
    /// Cores the plugin's calls may run on at once (`cores.rs`).
    pub cores: u64,
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
            // A form or two per call is what real tools ask; a few more for multi-step ones. A
            // call past it floods the user with prompts.
            questions_per_call: 16,
            // An hour for work that waits on others (a crawl, a build, an external job); about
            // a minute and a half of one busy core, since a task is charged to the plugin's
            // fuel budget like any call.
            task_timeout_ms: 3_600_000,
            task_fuel: 1_000_000_000_000,
            running_tasks: 4,
            // All the machine's cores but one, at least one: a plugin that spins or floods its
            // output leaves a core to the others.
            cores: crate::cores::default_cores(),
        }
    }
}

/// What a component may be before it is compiled: compiling costs host memory in proportion to
/// its code (a 34 MiB component of 100,000 functions peaked at 681 MiB), so larger ones are
/// refused with the plugin's name instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompileBounds {
    /// Bytes of the component file (and of it composed with its links).
    pub max_bytes: u64,
    /// Functions in all its core modules.
    pub max_functions: u64,
}

impl Default for CompileBounds {
    fn default() -> Self {
        CompileBounds {
            // The Python and JavaScript examples are 12 to 20 MiB with about 13,500 functions.
            max_bytes: 64 << 20,
            max_functions: 50_000,
        }
    }
}

/// `[plugins.NAME.keyvalue]`: where the plugin's store lives and how large it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValueGrant {
    /// The store's file.
    pub path: PathBuf,
    /// Most bytes of bucket names, keys and values together.
    pub max_bytes: u64,
}

/// A secret's value. Its `Debug` form hides it, so printing a spec cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// Wraps a value read from where the configuration says.
    pub fn new(value: String) -> SecretValue {
        SecretValue(value)
    }

    /// The value itself, for the plugin that was granted it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretValue(hidden)")
    }
}

/// One secret a plugin is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretGrant {
    /// Its name: the `wasi:config` key, and the variable name when `as_env`.
    pub name: String,
    /// Its value.
    pub value: SecretValue,
    /// Also an environment variable of that name.
    pub as_env: bool,
}

/// One plugin as the runtime loads it: the component and every grant and limit it runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSpec {
    /// The plugin's name, in logs, errors and limits.
    pub name: String,
    /// The component file.
    pub path: PathBuf,
    /// Whether the client's roots are preopened, and how.
    pub roots: RootsAccess,
    /// Host directories preopened for the plugin.
    pub dirs: Vec<DirGrant>,
    /// The limits every call runs under.
    pub limits: Limits,
    /// Environment variables, resolved.
    pub env: Vec<(String, String)>,
    /// Values it may read through `wasi:config/store`, by key.
    pub config: Vec<(String, String)>,
    /// Secrets it may read through `wasi:config/store`, kept out of logs and errors.
    pub secrets: Vec<SecretGrant>,
    /// Components composed into this one: their exports satisfy its imports of the same name,
    /// and they run in its store, with its grants and limits.
    pub links: Vec<LinkedComponent>,
    /// Its own `wasi:keyvalue` store, when granted.
    pub keyvalue: Option<KeyValueGrant>,
    /// Serve its `wasi:http/incoming-handler` export as the tool `request`.
    pub http_handler: bool,
    /// The hosts the plugin may reach over `wasi:http`.
    pub network: Vec<HostPattern>,
    /// PEM files of certificate authorities its HTTPS trusts besides the bundled set (the
    /// server's `ca_file`, then its own).
    pub ca_files: Vec<PathBuf>,
    /// The SHA-256 the component must have, when the operator pinned it.
    pub sha256: Option<[u8; 32]>,
    /// Whether the user is asked, during a call, for a host or environment variable the plugin
    /// reaches for without a grant (`ask = true`).
    pub ask: bool,
    /// Whether an instance serves more than one call (`reuse = "per-client"`).
    pub reuse: Reuse,
    /// The most never-used instances kept ready for its calls (`ready.rs`); 0 makes each
    /// instance when its call comes.
    pub ready_instances: usize,
    /// The largest component it may be, before compiling.
    pub compile_bounds: CompileBounds,
}

impl PluginSpec {
    /// A plugin with no grants and the default limits.
    pub fn new(name: impl Into<String>, path: PathBuf) -> PluginSpec {
        PluginSpec {
            name: name.into(),
            path,
            roots: RootsAccess::None,
            dirs: Vec::new(),
            limits: Limits::default(),
            env: Vec::new(),
            config: Vec::new(),
            secrets: Vec::new(),
            links: Vec::new(),
            keyvalue: None,
            http_handler: false,
            network: Vec::new(),
            ca_files: Vec::new(),
            sha256: None,
            ask: false,
            reuse: Reuse::Never,
            ready_instances: DEFAULT_READY_INSTANCES,
            compile_bounds: CompileBounds::default(),
        }
    }
}

/// A component linked into a plugin (`link = ["NAME"]`): another plugin's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedComponent {
    /// The plugin it comes from.
    pub name: String,
    /// Its component file.
    pub path: PathBuf,
    /// The SHA-256 its file must have, if pinned.
    pub sha256: Option<[u8; 32]>,
}

/// Whether an instance of a plugin serves more than one call.
///
/// Every call gets a fresh instance by default: nothing a call leaves in the plugin's memory
/// reaches the next. A plugin that keeps no secrets between calls may be run faster by reusing
/// an instance for later calls of the same client: never another client's, and never after a
/// call that failed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// A fresh instance for every call.
    #[default]
    Never,
    /// An instance serves the calls of one client (one token, or one session) with the same
    /// roots, until it has served `calls` calls or its linear memory passes `memory_bytes`.
    PerClient {
        /// Calls one instance serves before it is replaced.
        calls: u32,
        /// Linear memory past which an instance is replaced after its call.
        memory_bytes: u64,
    },
}
