//! `[plugins.NAME]`: one plugin's component, grants, limits and policy, and the links between
//! plugins.

use std::path::{Path, PathBuf};

use toml::Spanned;

use super::limits::{resolve_limits, resolve_ready, resolve_reuse};
use super::server::Server;
use super::sources::resolve_verify;
use super::values::{is_variable_name, resolve_secrets, resolve_values};
use crate::config::file::{KeyValueSection, PluginSection};
use crate::config::io::ConfigIo;
use crate::config::model::*;
use crate::config::problems::{Problems, span};
use crate::config::{InvalidValue, parse_sha256};
use crate::runtime::Reuse;
use crate::runtime::{KeyValueGrant, MAX_STORE_BYTES};

/// Default size of a plugin's key-value store, in KiB.
const DEFAULT_KEYVALUE_KIB: u64 = 1024;

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

/// `[plugins.NAME]` checked, with paths resolved against `base`; `server` gives the defaults
/// `[server]` and `[sources]` set. Every problem is recorded; the plugin is still built, from
/// what was valid, so that the others are checked too.
pub(super) fn resolve_plugin(
    name: String,
    section: Spanned<PluginSection>,
    server: &Server,
    trusted_root: Option<&Path>,
    problems: &mut Problems<'_>,
    base: &Path,
    io: &dyn ConfigIo,
) -> PluginConfig {
    let at = span(&section);
    let section = section.into_inner();
    let here = |field: &str| format!("[plugins.{name}] {field}");
    problems.take(
        at.clone(),
        format_args!("[plugins.{name}]: "),
        check_plugin_name(&name),
    );
    let prefix = match section.prefix {
        Some(prefix) if !prefix.get_ref().is_empty() && !is_public_name(prefix.get_ref()) => {
            problems.add(
                span(&prefix),
                format_args!(
                    "{} = {:?} is not a valid prefix\nhow to fix: use 1 to 32 of A-Z a-z 0-9 _ \
                     -, or \"\" for none",
                    here("prefix"),
                    prefix.get_ref()
                ),
            );
            name.clone()
        }
        Some(prefix) => prefix.into_inner(),
        None => name.clone(),
    };
    let mut dirs: Vec<DirGrant> = Vec::new();
    for (n, dir) in section.dirs.into_iter().enumerate() {
        let (guest_at, written) = (span(&dir.guest), dir.guest.get_ref());
        let field = |key: &str| here(&format!("dirs[{n}].{key}"));
        let guest = match written.trim_end_matches('/') {
            "" => "/",
            trimmed => trimmed,
        };
        let refused = if !written.starts_with('/') || written.split('/').any(|c| c == "..") {
            Some("must be an absolute path without `..`\nhow to fix: use a path such as \"/data\"")
        } else if guest == "/roots" || guest.starts_with("/roots/") {
            Some(
                ": /roots is reserved for the roots\nhow to fix: use another path, such as \"/data\"",
            )
        } else if dirs.iter().any(|d| d.guest == guest) {
            Some("is granted twice\nhow to fix: give each directory its own guest path")
        } else {
            None
        };
        if let Some(why) = refused {
            let gap = if why.starts_with(':') { "" } else { " " };
            problems.add(
                guest_at,
                format_args!("{} = {written:?}{gap}{why}", field("guest")),
            );
            continue;
        }
        let host = base.join(dir.host.get_ref());
        if !io.is_dir(&host) {
            problems.add(
                span(&dir.host),
                format_args!(
                    "{} = {:?}: {} is not a directory\nhow to fix: create it or correct the path \
                     (relative paths start at the configuration file)",
                    field("host"),
                    dir.host.get_ref().display(),
                    host.display()
                ),
            );
            continue;
        }
        dirs.push(DirGrant {
            host,
            guest: guest.to_string(),
            mode: dir.mode,
        });
    }
    let (limits, limit_problems) = resolve_limits(section.limits);
    for (field, at, why) in limit_problems {
        problems.add(
            at,
            format_args!("{} {why}", here(&format!("limits.{field}"))),
        );
    }
    let reuse = resolve_reuse(
        section.reuse,
        section.reuse_calls,
        section.reuse_memory_mib,
        &limits,
    )
    .unwrap_or_else(|(field, at, why)| {
        problems.add(at, format_args!("{} {why}", here(field)));
        Reuse::Never
    });
    let ready_instances =
        resolve_ready(section.ready_instances, reuse).unwrap_or_else(|(field, at, why)| {
            problems.add(at, format_args!("{} {why}", here(field)));
            0
        });
    let (env, env_problems) = resolve_values(section.env, is_variable_name, "variable name", io);
    for (var, at, why) in env_problems {
        problems.add(at, format_args!("{} {var}: {why}", here("env")));
    }
    let keyvalue = section.keyvalue.and_then(|kv| {
        problems.take(
            span(&kv),
            format_args!("{} ", here("keyvalue")),
            resolve_keyvalue(kv.into_inner(), &name, base),
        )
    });
    let (config, config_problems) =
        resolve_values(section.config, |key| !key.is_empty(), "key", io);
    for (key, at, why) in config_problems {
        problems.add(at, format_args!("{} {key:?}: {why}", here("config")));
    }
    let (secrets, secret_problems) = resolve_secrets(section.secrets, base, io);
    for (key, at, why) in secret_problems {
        problems.add(at, format_args!("{} {key}: {why}", here("secrets")));
    }
    if let Some(clash) = secrets.iter().find(|s| {
        config.iter().any(|(k, _)| *k == s.name)
            || (s.as_env && env.iter().any(|(k, _)| *k == s.name))
    }) {
        problems.add(
            at.clone(),
            format_args!(
                "{} {}: the name is also given under config or env\nhow to fix: keep one of the two",
                here("secrets"),
                clash.name
            ),
        );
    }
    let network = section
        .network
        .iter()
        .filter_map(|entry| {
            problems.take(
                span(entry),
                format_args!("{}: ", here("network")),
                HostPattern::parse(entry.get_ref()).map_err(|why| {
                    format!(
                        "{why}\nhow to fix: list entries such as \"api.example.com\", \
                         \"*.example.org:8443\" or \"http://127.0.0.1:8080\""
                    )
                }),
            )
        })
        .collect();
    let mut ca_files: Vec<PathBuf> = server.ca_file.iter().cloned().collect();
    if let Some(own) = &section.ca_file {
        let path = base.join(own.get_ref());
        let checked = io.check_ca_file(&path).map_err(|why| {
            format!(
                "{why}\nhow to fix: name a PEM file of the certificate authority this plugin's \
                 HTTPS should trust (relative paths start at the configuration file)"
            )
        });
        problems.take(span(own), format_args!("{} ", here("ca_file")), checked);
        ca_files.push(path);
    }
    let tools = section
        .tools
        .into_iter()
        .map(|(tool, t)| {
            let policy = ToolPolicy {
                confirm: t.confirm,
                annotations: t.annotations,
                description: t.description,
                task: t.task,
            };
            (tool, policy)
        })
        .collect();
    let sha256 = section.sha256.as_ref().and_then(|text| {
        let parsed = parse_sha256(text.get_ref()).ok_or_else(|| {
            format!(
                "= {:?} is not a SHA-256\nhow to fix: give the 64 hex digits `sha256sum FILE` or \
                 `palisade inspect FILE` prints",
                text.get_ref()
            )
        });
        problems.take(span(text), format_args!("{} ", here("sha256")), parsed)
    });
    let (path, source) = match (section.path, section.source) {
        (Some(file), None) => (base.join(file.get_ref()), None),
        (None, Some(text)) => match Source::parse(text.get_ref(), base) {
            Ok(Source::File(file)) => (file, None),
            // Pointed into the store, from the lock, by `pin`.
            Ok(remote) => (PathBuf::new(), Some(remote)),
            Err(why) => {
                problems.add(
                    span(&text),
                    format_args!(
                        "{} {why}\nhow to fix: use oci://REGISTRY/REPOSITORY:TAG, \
                         https://HOST/FILE.wasm or a file path",
                        here("source")
                    ),
                );
                (PathBuf::new(), None)
            }
        },
        (Some(_), Some(source)) => {
            problems.add(
                span(&source),
                format_args!(
                    "{} and path are both given\nhow to fix: keep one: path for a local file, \
                     source for a registry or a URL",
                    here("source")
                ),
            );
            (PathBuf::new(), None)
        }
        (None, None) => {
            problems.add(
                at.clone(),
                format_args!(
                    "[plugins.{name}] has neither path nor source\nhow to fix: add path = \
                     \"FILE.wasm\", or run `palisade add oci://...`"
                ),
            );
            (PathBuf::new(), None)
        }
    };
    let verify = section.verify.and_then(|verify| {
        let verify_at = span(&verify);
        let policy = resolve_verify(
            Some(verify.into_inner()),
            section.trusted_root.as_deref().or(trusted_root),
            base,
            io,
        );
        let policy = problems.take(
            verify_at.clone(),
            format_args!("{} ", here("verify")),
            policy,
        )?;
        if policy.is_some() && source.is_none() {
            problems.add(
                verify_at,
                format_args!(
                    "{} applies to plugins from a registry or a URL\nhow to fix: use source = \
                     \"oci://...\", or pin a local file with sha256 = \"...\"",
                    here("verify")
                ),
            );
        }
        policy
    });
    PluginConfig {
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
            compile_bounds: server.compile_bounds,
            sha256,
            ask: section.ask.unwrap_or(server.ask),
            links: Vec::new(),
            keyvalue,
            http_handler: section.http_handler,
            reuse,
            ready_instances,
        },
        prefix,
        tools,
        links: section.link.into_iter().map(Spanned::into_inner).collect(),
    }
}

/// Every `link` names another plugin of the file, which links nothing itself (one level: the
/// composed component is the plugin's, and a chain would hide whose exports fill what).
/// `spans` has, per plugin, where each of its links is written.
pub(super) fn check_links(
    plugins: &[PluginConfig],
    spans: &[Vec<Option<std::ops::Range<usize>>>],
    problems: &mut Problems<'_>,
) {
    let how = "how to fix: name a plugin of this file whose component exports what this one \
               imports";
    for (plugin, spans) in plugins.iter().zip(spans) {
        let name = &plugin.spec.name;
        for (linked, at) in plugin.links.iter().zip(spans) {
            let at = at.clone();
            if linked == name {
                problems.add(
                    at,
                    format_args!("[plugins.{name}] link links the plugin itself\n{how}"),
                );
                continue;
            }
            let Some(target) = plugins.iter().find(|p| p.spec.name == *linked) else {
                problems.add(
                    at,
                    format_args!(
                        "[plugins.{name}] link names `{linked}`, which is not a plugin of this \
                         file\n{how}"
                    ),
                );
                continue;
            };
            if !target.links.is_empty() {
                problems.add(
                    at,
                    format_args!(
                        "[plugins.{name}] link names `{linked}`, which links plugins itself; \
                         links are one level deep\nhow to fix: link what `{linked}` links here \
                         too"
                    ),
                );
            }
        }
    }
}

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
