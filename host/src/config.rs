//! `palisade.toml`: the operator's configuration, validated before anything is loaded.
//!
//! Every field is documented in the README. Unknown fields are rejected so that a typo never silently
//! turns a grant or a limit into its default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Default number of items per page of `tools/list`.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// The whole configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginSection>,
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
    #[serde(default)]
    pub http: HttpSection,
}

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
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            listen: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            session_idle_timeout: std::time::Duration::from_secs(1800),
            max_body_bytes: 16 << 20,
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
    pub timeout_ms: Option<u64>,
    pub memory_mib: Option<u64>,
}

/// The limits a plugin runs under, every one always on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wasm fuel (roughly, instructions) one call may burn.
    pub fuel_per_call: u64,
    /// Wall-clock time one call may take, in milliseconds.
    pub timeout_ms: u64,
    /// Linear memory one instance may hold, in bytes.
    pub memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // About a second of busy CPU on this class of machine.
            fuel_per_call: 2_000_000_000,
            timeout_ms: 30_000,
            memory_bytes: 128 << 20,
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
                "{}: {}\nhow to fix: correct or remove the field; every field is listed under \
                 \"Configuration\" in the README",
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
            session_idle_timeout: http_section
                .session_idle_timeout_s
                .map(std::time::Duration::from_secs)
                .unwrap_or(defaults.session_idle_timeout),
            max_body_bytes: http_section
                .max_body_mib
                .map(|m| (m as usize).saturating_mul(1 << 20))
                .unwrap_or(defaults.max_body_bytes),
        };
        if http.session_idle_timeout.is_zero() || http.max_body_bytes == 0 {
            return Err(ConfigError(format!(
                "{}: [server.http] session_idle_timeout_s and max_body_mib must be positive",
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
            let defaults = Limits::default();
            let l = section.limits;
            let limits = Limits {
                fuel_per_call: l.fuel_per_call.unwrap_or(defaults.fuel_per_call),
                timeout_ms: l.timeout_ms.unwrap_or(defaults.timeout_ms),
                memory_bytes: l
                    .memory_mib
                    .map(|m| m.saturating_mul(1 << 20))
                    .unwrap_or(defaults.memory_bytes),
            };
            for (field, value) in [
                ("limits.fuel_per_call", limits.fuel_per_call),
                ("limits.timeout_ms", limits.timeout_ms),
                ("limits.memory_mib", limits.memory_bytes),
            ] {
                if value == 0 {
                    return Err(ConfigError(format!(
                        "{} = 0 would refuse every call\nhow to fix: give a positive number, or leave it out for the default",
                        at(&name, field)
                    )));
                }
            }
            if limits.memory_bytes > 4 << 30 {
                return Err(ConfigError(format!(
                    "{} is above 4096 MiB, the most a 32-bit wasm memory can use\nhow to fix: use at most 4096",
                    at(&name, "limits.memory_mib")
                )));
            }
            plugins.push(PluginConfig {
                path: base.join(&section.path),
                name,
                prefix,
                roots: section.roots,
                dirs,
                limits,
            });
        }
        Ok(Config {
            page_size,
            cache_dir,
            roots,
            watch: file.server.watch.unwrap_or(true),
            http,
            plugins,
        })
    }
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
