//! `[server]` (with `[server.http]`) and `[telemetry]`: the server's own settings.

use std::path::{Path, PathBuf};

use toml::Spanned;

use crate::config::InvalidValue;
use crate::config::file::{HttpSection, ServerSection, TelemetrySection};
use crate::config::io::ConfigIo;
use crate::config::model::*;
use crate::config::problems::{Problems, span};
use crate::runtime::CompileBounds;

/// `host-paths` or `/roots`, as `--roots-at` takes them.
/// The names are the configuration's own (`RootsAt`'s serde names), so the two cannot drift.
pub fn parse_roots_at(text: &str) -> Result<RootsAt, InvalidValue> {
    use serde::Deserialize as _;
    use serde::de::IntoDeserializer as _;
    let text: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
        text.into_deserializer();
    RootsAt::deserialize(text).map_err(|e| InvalidValue(e.to_string()))
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

/// `[server]`, checked, with what it sets for every plugin.
pub(super) struct Server {
    pub(super) page_size: usize,
    pub(super) cache_dir: Option<PathBuf>,
    pub(super) request_state: RequestStateConfig,
    pub(super) roots: Vec<PathBuf>,
    pub(super) roots_at: RootsAt,
    pub(super) watch: bool,
    pub(super) http: HttpConfig,
    pub(super) shutdown_grace: std::time::Duration,
    /// `[server] ask`: the default of every plugin's.
    pub(super) ask: bool,
    /// `[server] ca_file`, resolved and checked: trusted by every plugin, besides its own.
    pub(super) ca_file: Option<PathBuf>,
    /// `[server] max_component_mib` and `max_component_functions`.
    pub(super) compile_bounds: CompileBounds,
}

/// `[server]` checked; paths are relative to `base`.
pub(super) fn resolve(
    section: ServerSection,
    problems: &mut Problems<'_>,
    base: &Path,
    io: &dyn ConfigIo,
) -> Server {
    let page_size = match section.page_size {
        Some(size) if !(1..=10_000).contains(size.get_ref()) => {
            problems.add(
                span(&size),
                format_args!(
                    "[server] page_size = {} is out of range\nhow to fix: use a number from 1 to \
                     10000",
                    size.get_ref()
                ),
            );
            DEFAULT_PAGE_SIZE
        }
        Some(size) => size.into_inner(),
        None => DEFAULT_PAGE_SIZE,
    };
    let ttl = match section.request_state_ttl_s {
        Some(ttl) if !(1..=86_400).contains(ttl.get_ref()) => {
            problems.add(
                span(&ttl),
                format_args!(
                    "[server] request_state_ttl_s = {} is out of range\nhow to fix: use a number \
                     of seconds from 1 to 86400",
                    ttl.get_ref()
                ),
            );
            DEFAULT_REQUEST_STATE_TTL_S
        }
        Some(ttl) => ttl.into_inner(),
        None => DEFAULT_REQUEST_STATE_TTL_S,
    };
    let mut roots = Vec::new();
    for root in section.roots {
        let dir = base.join(root.get_ref());
        if !io.is_dir(&dir) {
            problems.add(
                span(&root),
                format_args!(
                    "[server] roots: {} is not a directory\nhow to fix: create it or correct the \
                     path (relative paths start at the configuration file)",
                    dir.display()
                ),
            );
        }
        roots.push(dir);
    }
    let ca_file = section.ca_file.map(|file| {
        let path = base.join(file.get_ref());
        problems.take(
            span(&file),
            "[server] ca_file: ",
            io.check_ca_file(&path).map_err(|why| {
                format!(
                    "{why}\nhow to fix: name a PEM file of the certificate authority plugins' \
                     HTTPS should trust (relative paths start at the configuration file)"
                )
            }),
        );
        path
    });
    let bounds_span = section
        .max_component_mib
        .as_ref()
        .or(section.max_component_functions.as_ref())
        .map(Spanned::span);
    let compile_bounds = problems
        .take(
            bounds_span,
            "[server] ",
            compile_bounds(
                section.max_component_mib.map(Spanned::into_inner),
                section.max_component_functions.map(Spanned::into_inner),
            ),
        )
        .unwrap_or_default();
    Server {
        page_size,
        cache_dir: section.cache_dir.map(|d| base.join(d)),
        request_state: RequestStateConfig {
            key_file: section.request_state_key_file.map(|f| base.join(f)),
            ttl: std::time::Duration::from_secs(ttl),
        },
        roots,
        roots_at: section.roots_at.unwrap_or_default(),
        watch: section.watch.unwrap_or(true),
        http: section
            .http
            .map(|http| resolve_http(http, problems))
            .unwrap_or_default(),
        shutdown_grace: section
            .shutdown_grace_s
            .map_or(DEFAULT_SHUTDOWN_GRACE, std::time::Duration::from_secs),
        ask: section.ask.unwrap_or(false),
        ca_file,
        compile_bounds,
    }
}

/// `[server] max_component_mib` and `max_component_functions`, checked.
fn compile_bounds(
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
            "max_component_mib and max_component_functions must be positive\nhow to fix: leave \
             them out for the defaults (64 MiB, 50000 functions)"
                .into(),
        );
    }
    Ok(bounds)
}

/// `[server.http]` with defaults filled in.
fn resolve_http(section: Spanned<HttpSection>, problems: &mut Problems<'_>) -> HttpConfig {
    let at = span(&section);
    let section = section.into_inner();
    let d = HttpConfig::default();
    let secs_or =
        |seconds: Option<u64>, default| seconds.map_or(default, std::time::Duration::from_secs);
    let listen = section.listen.and_then(|listen| {
        problems.take(
            span(&listen),
            "[server.http] listen = ",
            parse_listen(listen.get_ref())
                .map_err(|why| format!("{why}\nhow to fix: use a form such as \"127.0.0.1:8080\"")),
        )
    });
    let trusted_proxies = section
        .trusted_proxies
        .iter()
        .filter_map(|entry| {
            problems.take(
                span(entry),
                "[server.http] trusted_proxies: ",
                parse_net(entry.get_ref()).map_err(|why| {
                    format!(
                        "{why}\nhow to fix: list addresses or CIDRs such as \"10.0.0.0/8\" or \
                         \"127.0.0.1\""
                    )
                }),
            )
        })
        .collect();
    let http = HttpConfig {
        listen,
        allowed_hosts: section.allowed_hosts,
        allowed_origins: section.allowed_origins,
        session_idle_timeout: secs_or(section.session_idle_timeout_s, d.session_idle_timeout),
        max_body_bytes: section
            .max_body_mib
            .map(|m| (m as usize).saturating_mul(1 << 20))
            .unwrap_or(d.max_body_bytes),
        header_timeout: secs_or(section.header_timeout_s, d.header_timeout),
        body_timeout: secs_or(section.body_timeout_s, d.body_timeout),
        max_sessions: section.max_sessions.unwrap_or(d.max_sessions),
        max_sessions_per_client: section
            .max_sessions_per_client
            .unwrap_or(d.max_sessions_per_client),
        trusted_proxies,
        max_connections: section.max_connections.unwrap_or(d.max_connections),
        max_connections_per_address: section
            .max_connections_per_address
            .unwrap_or(d.max_connections_per_address),
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
        problems.add(
            at,
            "[server.http] session_idle_timeout_s, max_body_mib, header_timeout_s, \
             body_timeout_s, max_sessions, max_sessions_per_client, max_connections and \
             max_connections_per_address must be positive",
        );
        return d;
    }
    http
}

/// An address (one host) or a CIDR.
fn parse_net(entry: &str) -> Result<ipnet::IpNet, String> {
    entry
        .parse::<ipnet::IpNet>()
        .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("`{entry}` is neither an address nor a CIDR"))
}

/// `[telemetry]`, checked: the metrics address (not MCP's own `mcp_listen`) and traces.
pub(super) fn resolve_telemetry(
    section: Option<Spanned<TelemetrySection>>,
    mcp_listen: Option<std::net::SocketAddr>,
    problems: &mut Problems<'_>,
) -> (Option<std::net::SocketAddr>, TraceConfig) {
    let at = section.as_ref().map(Spanned::span);
    let section = section.map(Spanned::into_inner).unwrap_or_default();
    let metrics_listen = section.metrics_listen.as_deref().and_then(|text| {
        problems.take(
            at.clone(),
            "[telemetry] metrics_listen = ",
            parse_listen(text)
                .map_err(|why| format!("{why}\nhow to fix: use a form such as \"127.0.0.1:9464\"")),
        )
    });
    if let (Some(metrics), Some(mcp)) = (metrics_listen, mcp_listen)
        && metrics.port() != 0
        && metrics == mcp
    {
        problems.add(
            at.clone(),
            "[telemetry] metrics_listen is [server.http] listen: metrics go on an address of \
             their own",
        );
    }
    let traces = problems
        .take(at, "[telemetry] ", resolve_traces(&section))
        .unwrap_or_default();
    (metrics_listen, traces)
}

/// `[telemetry]`'s trace settings, checked.
fn resolve_traces(section: &TelemetrySection) -> Result<TraceConfig, String> {
    let otlp_endpoint = match section.otlp_endpoint.as_deref() {
        None => None,
        Some(text) => {
            let url = url::Url::parse(text).map_err(|e| {
                format!(
                    "otlp_endpoint {text:?} is not a URL: {e}\nhow to fix: give the collector's \
                     OTLP/HTTP address, such as \"http://127.0.0.1:4318\""
                )
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!(
                    "otlp_endpoint {text:?}: traces are sent over OTLP/HTTP; give an http:// or \
                     https:// URL (the collector's port 4318, not gRPC's 4317)"
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
