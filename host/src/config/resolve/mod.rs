//! From the file as written (`file.rs`) to the resolved configuration (`model.rs`): every check,
//! default and path resolution, each problem with its line (from the file's spans) and how to
//! fix it, and every problem of a file in one run. What it reads from the machine comes
//! through [`ConfigIo`], so parsing is a function of the text and that.
//!
//! One file per concern: `server.rs` (`[server]`, `[telemetry]`), `plugin.rs`
//! (`[plugins.NAME]`, links), `limits.rs`, `values.rs` (env, config, secrets), `sources.rs`,
//! `access.rs` (`[auth]`, `[audit]`), `tasks.rs` (`[tasks]`), `console.rs` (`[console]`);
//! `[cluster]` is `super::cluster`.

mod access;
mod console;
mod limits;
mod plugin;
mod server;
mod sources;
mod tasks;
mod values;

use std::path::Path;

use toml::Spanned;

pub use plugin::check_plugin_name;
pub use server::{parse_listen, parse_roots_at};

use super::ConfigError;
use super::file::ConfigFile;
use super::io::{ConfigIo, SystemIo};
use super::model::*;
use super::problems::{Problems, span};

impl Config {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError(format!(
                "cannot read configuration file {}: {e}",
                path.display()
            ))
        })?;
        Self::parse(&text, path, &SystemIo)
    }

    /// Validates the text of a configuration file; `path` names it in errors and anchors
    /// relative paths, `io` is the machine it describes. Every problem is reported at once (a
    /// TOML syntax error stops the parse where it is).
    pub fn parse(text: &str, path: &Path, io: &dyn ConfigIo) -> Result<Config, ConfigError> {
        let file: ConfigFile = toml::from_str(text)
            .map_err(|e| ConfigError(format!("{}: {}", path.display(), toml_error(&e))))?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut problems = Problems::new(path, text);
        let server = server::resolve(file.server, &mut problems, base, io);
        let sources_at = file.sources.as_ref().map(Spanned::span);
        let sources = file.sources.map(Spanned::into_inner).unwrap_or_default();
        let global_verify = problems
            .take(
                sources_at.clone(),
                "[sources] verify: ",
                sources::resolve_verify(
                    sources.verify.clone(),
                    sources.trusted_root.as_deref(),
                    base,
                    io,
                ),
            )
            .flatten();
        let mut plugins = Vec::new();
        let mut link_spans = Vec::new();
        for (name, section) in file.plugins {
            link_spans.push(section.get_ref().link.iter().map(span).collect());
            let mut plugin = plugin::resolve_plugin(
                name,
                section,
                &server,
                sources.trusted_root.as_deref(),
                &mut problems,
                base,
                io,
            );
            if plugin.source.is_some() && plugin.verify.is_none() {
                plugin.verify = global_verify.clone();
            }
            plugins.push(plugin);
        }
        plugin::check_links(&plugins, &link_spans, &mut problems);
        let (metrics_listen, traces) =
            server::resolve_telemetry(file.telemetry, server.http.listen, &mut problems);
        let cluster = file.cluster.and_then(|cluster| {
            let at = span(&cluster);
            let resolved = super::cluster::resolve_cluster(cluster.into_inner(), base, io);
            problems.take(at, "[cluster] ", resolved).flatten()
        });
        let auth_at = file.auth.as_ref().map(Spanned::span);
        let access = problems
            .take(
                auth_at,
                "[auth] ",
                access::resolve_access(
                    file.auth.map(Spanned::into_inner).unwrap_or_default(),
                    base,
                    io,
                ),
            )
            .unwrap_or_default();
        let audit = file.audit.and_then(|audit| {
            let at = span(&audit);
            problems.take(
                at,
                "[audit] ",
                access::resolve_audit(audit.into_inner(), base),
            )
        });
        let sources = problems
            .take(
                sources_at,
                "[sources] ",
                sources::resolve_sources(sources, base),
            )
            .map(|resolved| SourcesConfig {
                verify: global_verify,
                ..resolved
            })
            .unwrap_or_default();
        let tasks = tasks::resolve(file.tasks, &mut problems);
        let console = console::resolve(
            file.console,
            &access,
            &[server.http.listen, metrics_listen],
            &mut problems,
        );
        let config = Config {
            console,
            tasks,
            cluster,
            metrics_listen,
            traces,
            shutdown_grace: server.shutdown_grace,
            page_size: server.page_size,
            cache_dir: server.cache_dir,
            roots: server.roots,
            roots_at: server.roots_at,
            watch: server.watch,
            http: server.http,
            plugins,
            access,
            audit,
            request_state: server.request_state,
            sources,
        };
        problems.finish(config)
    }
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
