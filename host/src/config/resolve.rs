//! From the file as written (`file.rs`) to the resolved configuration (`model.rs`): every check,
//! default and path resolution, with errors that say where and how to fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::file::*;
use super::model::*;
use super::{ConfigError, HostPattern, InvalidValue, access, parse_sha256};
use crate::runtime::{
    CompileBounds, KeyValueGrant, MAX_STORE_BYTES, Reuse, SecretGrant, SecretValue, TlsTrust,
};
use access::{AccessConfig, Scope};

/// `host-paths` or `/roots`, as `--roots-at` takes them.
/// The names are the configuration's own (`RootsAt`'s serde names), so the two cannot drift.
pub fn parse_roots_at(text: &str) -> Result<RootsAt, String> {
    use serde::Deserialize as _;
    use serde::de::IntoDeserializer as _;
    let text: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
        text.into_deserializer();
    RootsAt::deserialize(text).map_err(|e| e.to_string())
}

/// `PORT` (on 127.0.0.1), `localhost:PORT` or `IP:PORT`.
pub fn parse_listen(text: &str) -> Result<std::net::SocketAddr, InvalidValue> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok((std::net::Ipv4Addr::LOCALHOST, port).into());
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .map_err(|_| InvalidValue(format!("`{text}`: bad port")))?;
        return Ok((std::net::Ipv4Addr::LOCALHOST, port).into());
    }
    text.parse().map_err(|_| {
        InvalidValue(format!(
            "`{text}` is not PORT, localhost:PORT or IP:PORT (such as 127.0.0.1:8080)"
        ))
    })
}

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
        let file: ConfigFile = toml::from_str(text)
            .map_err(|e| ConfigError(format!("{}: {}", path.display(), toml_error(&e))))?;
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
        let http = resolve_http(&file.server.http, path)?;
        if let Some(bad) = roots.iter().find(|r| !r.is_dir()) {
            return Err(ConfigError(format!(
                "{}: [server] roots: {} is not a directory\nhow to fix: create it or correct the path (relative paths start at the configuration file)",
                path.display(),
                bad.display()
            )));
        }

        let global_verify = resolve_verify(
            file.sources.verify.clone(),
            file.sources.trusted_root.as_deref(),
            base,
        )
        .map_err(|why| ConfigError(format!("{}: [sources] verify: {why}", path.display())))?;
        let server_ca = file.server.ca_file.as_ref().map(|f| base.join(f));
        if let Some(ca) = &server_ca {
            TlsTrust::with_ca_files(std::slice::from_ref(ca)).map_err(|why| {
                ConfigError(format!(
                    "{}: [server] ca_file: {why}\nhow to fix: name a PEM file of the certificate \
                     authority plugins' HTTPS should trust (relative paths start at the \
                     configuration file)",
                    path.display()
                ))
            })?;
        }
        let compile_bounds = resolve_compile_bounds(
            file.server.max_component_mib,
            file.server.max_component_functions,
        )
        .map_err(|why| ConfigError(format!("{}: [server] {why}", path.display())))?;
        let defaults = PluginDefaults {
            trusted_root: file.sources.trusted_root.as_deref(),
            ask: file.server.ask.unwrap_or(false),
            ca_file: server_ca.as_deref(),
            compile_bounds,
        };
        let mut plugins = Vec::new();
        for (name, section) in file.plugins {
            let mut plugin = resolve_plugin(name, section, path, base, &at, &defaults)?;
            if plugin.source.is_some() && plugin.verify.is_none() {
                plugin.verify = global_verify.clone();
            }
            plugins.push(plugin);
        }
        check_links(&plugins, &at)?;
        let metrics_listen = file
            .telemetry
            .metrics_listen
            .as_deref()
            .map(parse_listen)
            .transpose()
            .map_err(|why| {
                ConfigError(format!(
                    "{}: [telemetry] metrics_listen = {why}\nhow to fix: use a form such as \"127.0.0.1:9464\"",
                    path.display()
                ))
            })?;
        if let (Some(metrics), Some(mcp)) = (metrics_listen, http.listen)
            && metrics.port() != 0
            && metrics == mcp
        {
            return Err(ConfigError(format!(
                "{}: [telemetry] metrics_listen is [server.http] listen: metrics go on an address of their own",
                path.display()
            )));
        }
        let traces = resolve_traces(&file.telemetry)
            .map_err(|why| ConfigError(format!("{}: [telemetry] {why}", path.display())))?;
        let cluster = super::cluster::resolve_cluster(file.cluster, base, |path| {
            read_secret_file(path)
                .map_err(|(Unreadable::Missing(why) | Unreadable::Wrong(why))| why)
        })
        .map_err(|why| ConfigError(format!("{}: [cluster] {why}", path.display())))?;
        let shutdown_grace = match file.server.shutdown_grace_s {
            Some(s) => std::time::Duration::from_secs(s),
            None => DEFAULT_SHUTDOWN_GRACE,
        };
        Ok(Config {
            cluster,
            metrics_listen,
            traces,
            shutdown_grace,
            page_size,
            cache_dir,
            roots,
            roots_at: file.server.roots_at.unwrap_or_default(),
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
            sources: SourcesConfig {
                verify: global_verify,
                ..resolve_sources(file.sources, base)
                    .map_err(|why| ConfigError(format!("{}: [sources] {why}", path.display())))?
            },
        })
    }
}

/// `[telemetry]`'s trace settings, checked.
fn resolve_traces(section: &TelemetrySection) -> Result<TraceConfig, String> {
    let otlp_endpoint = match section.otlp_endpoint.as_deref() {
        None => None,
        Some(text) => {
            let url = url::Url::parse(text).map_err(|e| {
                format!("otlp_endpoint {text:?} is not a URL: {e}\nhow to fix: give the collector's OTLP/HTTP address, such as \"http://127.0.0.1:4318\"")
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!(
                    "otlp_endpoint {text:?}: traces are sent over OTLP/HTTP; give an http:// or https:// URL (the collector's port 4318, not gRPC's 4317)"
                ));
            }
            // The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: traces go to its /v1/traces.
            Some(match text.trim_end_matches('/') {
                full if full.ends_with("/v1/traces") => full.to_string(),
                base => format!("{base}/v1/traces"),
            })
        }
    };
    let sample_ratio = section.sample_ratio.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&sample_ratio) {
        return Err(format!(
            "sample_ratio = {sample_ratio} is not between 0 and 1"
        ));
    }
    if section
        .service_name
        .as_deref()
        .is_some_and(|n| n.trim().is_empty())
    {
        return Err("service_name is empty".into());
    }
    Ok(TraceConfig {
        otlp_endpoint,
        service_name: section.service_name.clone(),
        sample_ratio,
    })
}

/// An address (one host) or a CIDR.
fn parse_net(entry: &str) -> Result<ipnet::IpNet, String> {
    entry
        .parse::<ipnet::IpNet>()
        .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("`{entry}` is neither an address nor a CIDR"))
}

/// `[server.http]` with defaults filled in.
fn resolve_http(http_section: &HttpSection, path: &Path) -> Result<HttpConfig, ConfigError> {
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
        trusted_proxies: http_section
            .trusted_proxies
            .iter()
            .map(|entry| parse_net(entry))
            .collect::<Result<_, _>>()
            .map_err(|why| {
                ConfigError(format!(
                    "{}: [server.http] trusted_proxies: {why}\nhow to fix: list addresses or \
                     CIDRs such as \"10.0.0.0/8\" or \"127.0.0.1\"",
                    path.display()
                ))
            })?,
        max_connections: http_section
            .max_connections
            .unwrap_or(defaults.max_connections),
        max_connections_per_address: http_section
            .max_connections_per_address
            .unwrap_or(defaults.max_connections_per_address),
    };
    if http.session_idle_timeout.is_zero()
        || http.max_body_bytes == 0
        || http.header_timeout.is_zero()
        || http.body_timeout.is_zero()
        || http.max_sessions == 0
        || http.max_sessions_per_client == 0
        || http.max_connections == 0
        || http.max_connections_per_address == 0
    {
        return Err(ConfigError(format!(
            "{}: [server.http] session_idle_timeout_s, max_body_mib, header_timeout_s, \
             body_timeout_s, max_sessions, max_sessions_per_client, max_connections and \
             max_connections_per_address must be positive",
            path.display()
        )));
    }
    Ok(http)
}

/// What `[server]` and `[sources]` set for every plugin that does not set its own.
struct PluginDefaults<'a> {
    /// `[sources] trusted_root`.
    trusted_root: Option<&'a Path>,
    /// `[server] ask`.
    ask: bool,
    /// `[server] ca_file`, resolved and checked: trusted by every plugin, besides its own.
    ca_file: Option<&'a Path>,
    /// `[server] max_component_mib` and `max_component_functions`.
    compile_bounds: CompileBounds,
}

/// `[server] max_component_mib` and `max_component_functions`, checked.
fn resolve_compile_bounds(
    max_mib: Option<u64>,
    max_functions: Option<u64>,
) -> Result<CompileBounds, String> {
    let d = CompileBounds::default();
    let bounds = CompileBounds {
        max_bytes: max_mib.map_or(d.max_bytes, |m| m.saturating_mul(1 << 20)),
        max_functions: max_functions.unwrap_or(d.max_functions),
    };
    if bounds.max_bytes == 0 || bounds.max_functions == 0 {
        return Err(
            "max_component_mib and max_component_functions must be positive\nhow to fix: \
                    leave them out for the defaults (64 MiB, 50000 functions)"
                .into(),
        );
    }
    Ok(bounds)
}

/// `[plugins.NAME]` checked, with paths resolved against `base`; `at` names a field in errors.
fn resolve_plugin(
    name: String,
    section: PluginSection,
    path: &Path,
    base: &Path,
    at: &dyn Fn(&str, &str) -> String,
    defaults: &PluginDefaults<'_>,
) -> Result<PluginConfig, ConfigError> {
    check_plugin_name(&name)
        .map_err(|why| ConfigError(format!("{}: [plugins.{name}]: {why}", path.display())))?;
    let prefix = section.prefix.unwrap_or_else(|| name.clone());
    if !prefix.is_empty() && !is_public_name(&prefix) {
        return Err(ConfigError(format!(
            "{} = {prefix:?} is not a valid prefix\nhow to fix: use 1 to 32 of A-Z a-z 0-9 _ -, or \"\" for none",
            at(&name, "prefix")
        )));
    }
    let mut dirs = Vec::new();
    for (n, dir) in section.dirs.into_iter().enumerate() {
        if !dir.guest.starts_with('/') || dir.guest.split('/').any(|c| c == "..") {
            return Err(ConfigError(format!(
                "{} = {:?} must be an absolute path without `..`\nhow to fix: use a path such as \"/data\"",
                at(&name, &format!("dirs[{n}].guest")),
                dir.guest
            )));
        }
        let guest = match dir.guest.trim_end_matches('/') {
            "" => "/",
            trimmed => trimmed,
        };
        if guest == "/roots" || guest.starts_with("/roots/") {
            return Err(ConfigError(format!(
                "{} = {:?}: /roots is reserved for the roots\nhow to fix: use another path, such as \"/data\"",
                at(&name, &format!("dirs[{n}].guest")),
                dir.guest
            )));
        }
        if dirs.iter().any(|d: &DirGrant| d.guest == guest) {
            return Err(ConfigError(format!(
                "{} = {:?} is granted twice\nhow to fix: give each directory its own guest path",
                at(&name, &format!("dirs[{n}].guest")),
                dir.guest
            )));
        }
        let host = base.join(&dir.host);
        if !host.is_dir() {
            return Err(ConfigError(format!(
                "{} = {:?}: {} is not a directory\nhow to fix: create it or correct the path (relative paths start at the configuration file)",
                at(&name, &format!("dirs[{n}].host")),
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
    let reuse = resolve_reuse(
        section.reuse,
        section.reuse_calls,
        section.reuse_memory_mib,
        &limits,
    )
    .map_err(|(field, why)| ConfigError(format!("{} {why}", at(&name, field))))?;
    let env = resolve_values(section.env, is_variable_name, "variable name")
        .map_err(|(var, why)| ConfigError(format!("{} {var}: {why}", at(&name, "env"))))?;
    let keyvalue = section
        .keyvalue
        .map(|kv| resolve_keyvalue(kv, &name, base))
        .transpose()
        .map_err(|why| ConfigError(format!("{} {why}", at(&name, "keyvalue"))))?;
    let config = resolve_values(section.config, |key| !key.is_empty(), "key")
        .map_err(|(key, why)| ConfigError(format!("{} {key:?}: {why}", at(&name, "config"))))?;
    let secrets = resolve_secrets(section.secrets, base)
        .map_err(|(key, why)| ConfigError(format!("{} {key}: {why}", at(&name, "secrets"))))?;
    if let Some(clash) = secrets.iter().find(|s| {
        config.iter().any(|(k, _)| *k == s.name)
            || (s.as_env && env.iter().any(|(k, _)| *k == s.name))
    }) {
        return Err(ConfigError(format!(
            "{} {}: the name is also given under config or env
how to fix: keep one of the two",
            at(&name, "secrets"),
            clash.name
        )));
    }
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
    let mut ca_files: Vec<PathBuf> = defaults
        .ca_file
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    if let Some(own) = &section.ca_file {
        let own = base.join(own);
        TlsTrust::with_ca_files(std::slice::from_ref(&own)).map_err(|why| {
            ConfigError(format!(
                "{} {why}\nhow to fix: name a PEM file of the certificate authority this \
                 plugin's HTTPS should trust (relative paths start at the configuration file)",
                at(&name, "ca_file")
            ))
        })?;
        ca_files.push(own);
    }
    let tools = section
        .tools
        .into_iter()
        .map(|(tool, t)| {
            (
                tool,
                ToolPolicy {
                    confirm: t.confirm,
                    annotations: t.annotations,
                    description: t.description,
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
    let (path, source) = match (section.path, section.source) {
        (Some(file), None) => (base.join(file), None),
        (None, Some(text)) => match Source::parse(&text, base) {
            Ok(Source::File(file)) => (file, None),
            // Pointed into the store, from the lock, by `sources::pin`.
            Ok(remote) => (PathBuf::new(), Some(remote)),
            Err(why) => {
                return Err(ConfigError(format!(
                    "{} {why}\nhow to fix: use oci://REGISTRY/REPOSITORY:TAG, https://HOST/FILE.wasm \
                     or a file path",
                    at(&name, "source")
                )));
            }
        },
        (Some(_), Some(_)) => {
            return Err(ConfigError(format!(
                "{} and path are both given\nhow to fix: keep one: path for a local file, source \
                 for a registry or a URL",
                at(&name, "source")
            )));
        }
        (None, None) => {
            return Err(ConfigError(format!(
                "{}: [plugins.{name}] has neither path nor source\nhow to fix: add path = \
                 \"FILE.wasm\", or run `palisade add oci://...`",
                path.display()
            )));
        }
    };
    let verify = resolve_verify(
        section.verify,
        section.trusted_root.as_deref().or(defaults.trusted_root),
        base,
    )
    .map_err(|why| ConfigError(format!("{} {why}", at(&name, "verify"))))?;
    if verify.is_some() && source.is_none() {
        return Err(ConfigError(format!(
            "{} applies to plugins from a registry or a URL\nhow to fix: use source = \
             \"oci://...\", or pin a local file with sha256 = \"...\"",
            at(&name, "verify")
        )));
    }
    Ok(PluginConfig {
        source,
        locked: None,
        verify,
        spec: PluginSpec {
            path,
            name,
            roots: section.roots,
            dirs,
            limits,
            env,
            config,
            secrets,
            network,
            ca_files,
            compile_bounds: defaults.compile_bounds,
            sha256,
            ask: section.ask.unwrap_or(defaults.ask),
            links: Vec::new(),
            keyvalue,
            http_handler: section.http_handler,
            reuse,
        },
        prefix,
        tools,
        links: section.link,
    })
}

/// A `verify` table as a policy; key files and the trusted root are relative to `base`.
fn resolve_verify(
    section: Option<VerifySection>,
    trusted_root: Option<&Path>,
    base: &Path,
) -> Result<Option<Policy>, String> {
    let Some(section) = section else {
        return Ok(None);
    };
    match section {
        VerifySection {
            key: Some(key),
            identity: None,
            issuer: None,
        } => {
            let file = base.join(key);
            let pem = std::fs::read_to_string(&file)
                .map_err(|e| format!("key = {}: cannot read it: {e}", file.display()))?;
            Ok(Some(Policy::Key { file, pem }))
        }
        VerifySection {
            key: None,
            identity: Some(identity),
            issuer: Some(issuer),
        } if !identity.is_empty() && issuer.starts_with("https://") => Ok(Some(Policy::Keyless {
            identity,
            issuer,
            trusted_root: trusted_root.map(|r| base.join(r)),
        })),
        _ => Err(
            "give key = \"cosign.pub\", or identity = \"...\" with issuer = \"https://...\"; \
             keyless verification always names who signed (never any signer)"
                .into(),
        ),
    }
}

/// `[sources]` with defaults filled in.
fn resolve_sources(section: SourcesSection, base: &Path) -> Result<SourcesConfig, String> {
    let defaults = SourcesConfig::default();
    let max_bytes = match section.max_mib {
        Some(0) => return Err("max_mib = 0 would refuse every plugin".into()),
        Some(mib) if mib > 4096 => return Err(format!("max_mib = {mib} is over 4096")),
        Some(mib) => mib << 20,
        None => defaults.max_bytes,
    };
    let tag_check_timeout = match section.tag_check_timeout_s {
        Some(0) => return Err("tag_check_timeout_s must be at least 1".into()),
        Some(secs) => std::time::Duration::from_secs(secs.min(600)),
        None => defaults.tag_check_timeout,
    };
    let mut registries = BTreeMap::new();
    for (registry, login) in section.registries {
        let login = match login {
            RegistrySection {
                username: Some(username),
                password_env: Some(password_env),
                token_env: None,
            } => RegistryLogin::Basic {
                username,
                password_env,
            },
            RegistrySection {
                username: None,
                password_env: None,
                token_env: Some(token_env),
            } => RegistryLogin::Token { token_env },
            _ => {
                return Err(format!(
                    "registries.\"{registry}\": give username and password_env, or token_env \
                     (names of environment variables holding the secret)"
                ));
            }
        };
        registries.insert(registry, login);
    }
    Ok(SourcesConfig {
        store_dir: section.store_dir.map(|d| base.join(d)),
        max_bytes,
        insecure_registries: section.insecure_registries,
        tag_check_timeout,
        registries,
        require_signatures: section.require_signatures.unwrap_or(false),
        verify: None,
    })
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
        questions_per_call: l.questions_per_call.unwrap_or(d.questions_per_call),
    };
    if limits.questions_per_call > MAX_QUESTIONS_PER_CALL {
        return Err((
            "questions_per_call",
            format!(
                "is above {MAX_QUESTIONS_PER_CALL}: no user answers that many questions from one \
                 tool call\nhow to fix: use at most {MAX_QUESTIONS_PER_CALL}"
            ),
        ));
    }
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

/// The most questions one call may be allowed to ask: past a few, a prompt flood, not a dialogue.
const MAX_QUESTIONS_PER_CALL: u64 = 1000;

/// Calls one reused instance serves by default before it is replaced.
const DEFAULT_REUSE_CALLS: u32 = 1000;

/// `reuse`, `reuse_calls` and `reuse_memory_mib` as the runtime takes them; the error names the
/// field.
fn resolve_reuse(
    setting: Option<ReuseSetting>,
    calls: Option<u32>,
    memory_mib: Option<u64>,
    limits: &Limits,
) -> Result<Reuse, (&'static str, String)> {
    if setting != Some(ReuseSetting::PerClient) {
        return match (calls, memory_mib) {
            (None, None) => Ok(Reuse::Never),
            (Some(_), _) => Err(("reuse_calls", NEEDS_REUSE.into())),
            (None, Some(_)) => Err(("reuse_memory_mib", NEEDS_REUSE.into())),
        };
    }
    if calls == Some(0) {
        return Err((
            "reuse_calls",
            "= 0 would keep no instance\nhow to fix: give a positive number, or remove `reuse`"
                .into(),
        ));
    }
    let memory_bytes = match memory_mib {
        Some(0) => {
            return Err((
                "reuse_memory_mib",
                "= 0 would keep no instance\nhow to fix: give a positive number, or leave it out for the default".into(),
            ));
        }
        Some(mib) if mib.saturating_mul(1 << 20) > limits.memory_bytes => {
            return Err((
                "reuse_memory_mib",
                format!(
                    "is above limits.memory_mib ({} MiB): no instance can grow past it\nhow to \
                     fix: use at most {}",
                    limits.memory_bytes >> 20,
                    limits.memory_bytes >> 20
                ),
            ));
        }
        Some(mib) => mib << 20,
        None => limits.memory_bytes / 2,
    };
    Ok(Reuse::PerClient {
        calls: calls.unwrap_or(DEFAULT_REUSE_CALLS),
        memory_bytes,
    })
}

const NEEDS_REUSE: &str = "applies only with reuse = \"per-client\"\nhow to fix: add reuse = \"per-client\", or remove it";

/// A setting given in seconds, or its default.
fn secs_or(seconds: Option<u64>, default: std::time::Duration) -> std::time::Duration {
    seconds.map_or(default, std::time::Duration::from_secs)
}

/// Every `link` names another plugin of the file, which links nothing itself (one level: the
/// composed component is the plugin's, and a chain would hide whose exports fill what).
fn check_links(
    plugins: &[PluginConfig],
    at: &dyn Fn(&str, &str) -> String,
) -> Result<(), ConfigError> {
    for plugin in plugins {
        let name = &plugin.spec.name;
        for linked in &plugin.links {
            let how = "how to fix: name a plugin of this file whose component exports what this \
                       one imports";
            if linked == name {
                return Err(ConfigError(format!(
                    "{} links the plugin itself\n{how}",
                    at(name, "link")
                )));
            }
            let Some(target) = plugins.iter().find(|p| p.spec.name == *linked) else {
                return Err(ConfigError(format!(
                    "{} names `{linked}`, which is not a plugin of this file\n{how}",
                    at(name, "link")
                )));
            };
            if !target.links.is_empty() {
                return Err(ConfigError(format!(
                    "{} names `{linked}`, which links plugins itself; links are one level deep\n\
                     how to fix: link what `{linked}` links here too",
                    at(name, "link")
                )));
            }
        }
    }
    Ok(())
}

/// Default size of a plugin's key-value store, in KiB.
const DEFAULT_KEYVALUE_KIB: u64 = 1024;

/// The grant of a `[plugins.NAME.keyvalue]` table; paths relative to `base`.
fn resolve_keyvalue(
    section: KeyValueSection,
    name: &str,
    base: &Path,
) -> Result<KeyValueGrant, String> {
    let max_kib = section.max_kib.unwrap_or(DEFAULT_KEYVALUE_KIB);
    let most = MAX_STORE_BYTES >> 10;
    if max_kib == 0 || max_kib > most {
        return Err(format!(
            "max_kib = {max_kib} is out of range\nhow to fix: use a number from 1 to {most}"
        ));
    }
    let path = section
        .path
        .unwrap_or_else(|| PathBuf::from(format!("palisade-keyvalue/{name}.json")));
    Ok(KeyValueGrant {
        path: base.join(path),
        max_bytes: max_kib << 10,
    })
}

fn is_variable_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// Environment variables or `wasi:config` values, given in the configuration or taken from the
/// server's own environment; the error names the key.
fn resolve_values(
    values: BTreeMap<String, EnvValue>,
    valid_key: fn(&str) -> bool,
    what: &str,
) -> Result<Vec<(String, String)>, (String, String)> {
    values
        .into_iter()
        .map(|(var, value)| {
            if !valid_key(&var) || var.contains('\0') {
                return Err((var, format!("is not a valid {what}")));
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

/// The most a secret's file may hold.
const MAX_SECRET_BYTES: u64 = 64 << 10;

/// Secrets, read from the server's environment or from files only the server's user can read;
/// the error names the secret.
fn resolve_secrets(
    secrets: BTreeMap<String, SecretSection>,
    base: &Path,
) -> Result<Vec<SecretGrant>, (String, String)> {
    let mut granted = Vec::new();
    for (name, section) in secrets {
        let fail = |why: String| (name.clone(), why);
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(fail("is not a valid name".into()));
        }
        let read = match (section.env, section.file, section.keyring) {
            (Some(var), None, None) => std::env::var(&var).map_err(|_| {
                Unreadable::Missing(format!(
                    "the server's environment variable {var} is not set (or not UTF-8)\nhow to fix: \
                     set it before starting palisade, or add optional = true"
                ))
            }),
            (None, Some(file), None) => read_secret_file(&base.join(file)),
            (None, None, Some(entry)) => read_keyring(&entry),
            _ => {
                return Err(fail(
                    "give exactly one of env = \"VARIABLE\", file = \"PATH\" or keyring = \
                     \"SERVICE/USER\""
                        .into(),
                ));
            }
        };
        let value = match read {
            Ok(value) => value,
            Err(Unreadable::Missing(why)) if section.optional => {
                let why = why.lines().next().unwrap_or_default();
                tracing::warn!("secret {name}: {why}; serving the plugin without it (optional)");
                continue;
            }
            Err(Unreadable::Missing(why) | Unreadable::Wrong(why)) => return Err(fail(why)),
        };
        if value.is_empty() {
            return Err(fail("its value is empty".into()));
        }
        if value.contains('\0') {
            return Err(fail("its value contains a NUL byte".into()));
        }
        granted.push(SecretGrant {
            name: name.clone(),
            value: SecretValue::new(value),
            as_env: section.as_env,
        });
    }
    Ok(granted)
}

/// Why a secret's value could not be read: it is not there (an optional secret is then left
/// out), or it is there but must not be used (always an error).
enum Unreadable {
    Missing(String),
    Wrong(String),
}

/// A secret's file: a regular file of the server's user that no one else can read, its text
/// without the final line break.
fn read_secret_file(path: &Path) -> Result<String, Unreadable> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        let why = format!("cannot read {shown}: {e}");
        if e.kind() == std::io::ErrorKind::NotFound {
            Unreadable::Missing(why)
        } else {
            Unreadable::Wrong(why)
        }
    })?;
    if !meta.is_file() {
        return Err(Unreadable::Wrong(format!("{shown} is not a file")));
    }
    if !crate::runtime::private_dir::readable_only_by_me(&meta) {
        return Err(Unreadable::Wrong(format!(
            "{shown} can be read or written by other users, or belongs to another\nhow to fix: \
             chmod 600 {shown} (as the user that runs palisade)"
        )));
    }
    if meta.len() > MAX_SECRET_BYTES {
        return Err(Unreadable::Wrong(format!(
            "{shown} holds more than {} KiB: not a secret",
            MAX_SECRET_BYTES >> 10
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Unreadable::Wrong(format!("cannot read {shown}: {e}")))?;
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Ok(text.strip_suffix('\r').unwrap_or(text).to_string())
}

/// A secret's keyring entry, `SERVICE/USER`.
fn read_keyring(entry: &str) -> Result<String, Unreadable> {
    let (service, user) = super::keyring::parse_entry(entry).map_err(Unreadable::Wrong)?;
    super::keyring::lookup(service, user, MAX_SECRET_BYTES as usize).map_err(|e| match e {
        super::keyring::KeyringError::Absent(why) => Unreadable::Missing(why),
        super::keyring::KeyringError::Unusable(why) => Unreadable::Wrong(why),
    })
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
    let oauth = auth
        .oauth
        .map(|section| super::OAuthSettings::resolve(section, find))
        .transpose()?;
    Ok(AccessConfig {
        tokens,
        stdio_scope,
        oauth,
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
pub fn check_plugin_name(name: &str) -> Result<(), InvalidValue> {
    if is_public_name(name) {
        Ok(())
    } else {
        Err(InvalidValue(format!(
            "{name:?} is not a valid plugin name: use 1 to 32 of A-Z a-z 0-9 _ -"
        )))
    }
}

fn is_public_name(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A TOML error for people: the parser's text with Rust's type names in words, and a hint that
/// fits a syntax error or a wrong field.
fn toml_error(e: &toml::de::Error) -> String {
    let mut text = e.to_string().trim_end().to_string();
    for (rust, words) in [
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u16", "expected a whole number, 0 to 65535"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
    ] {
        text = text.replace(rust, words);
    }
    let about_a_field = [
        "unknown field",
        "missing field",
        "duplicate field",
        "invalid type",
        "invalid value",
        "unknown variant",
        "invalid length",
    ]
    .iter()
    .any(|kind| text.contains(kind));
    let hint = if about_a_field {
        "correct or remove the field; every field is listed in docs/configuration.md"
    } else {
        "fix the TOML syntax at that line (https://toml.io shows it in one page)"
    };
    format!("{text}\nhow to fix: {hint}")
}

/// Best-effort ", line N" for a semantic error found after parsing: the line of `field` inside the
/// plugin's section, else the section header.
fn line_of(text: &str, plugin: &str, field: &str) -> String {
    if let Some((index, key)) = array_entry(field) {
        return entry_line(text, plugin, index, key)
            .map(|l| format!(", line {l}"))
            .unwrap_or_default();
    }
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

/// `dirs[2].host` as (2, "host").
fn array_entry(field: &str) -> Option<(usize, &str)> {
    let rest = field.strip_prefix("dirs[")?;
    let (index, key) = rest.split_once("].")?;
    Some((index.parse().ok()?, key))
}

/// The line of `key` in the `index`-th `[[plugins.PLUGIN.dirs]]` table (its header's when the
/// key is not there).
fn entry_line(text: &str, plugin: &str, index: usize, key: &str) -> Option<usize> {
    let header = format!("[[plugins.{plugin}.dirs]]");
    let mut seen = 0;
    let mut entry: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('[') {
            if entry.is_some() {
                break;
            }
            if t.starts_with(&header) {
                if seen == index {
                    entry = Some(i + 1);
                }
                seen += 1;
            }
            continue;
        }
        if entry.is_some() && t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') {
            return Some(i + 1);
        }
    }
    entry
}
