//! What a plugin is given to read: environment variables, `wasi:config` values and secrets,
//! from the configuration, the server's environment, files or the keyring.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use crate::config::file::{EnvValue, SecretSection};
use crate::config::io::{ConfigIo, Unreadable};
use crate::config::problems::span;
use crate::runtime::{SecretGrant, SecretValue};

/// A problem of one entry: its key, where it is, and what is wrong.
pub(super) type EntryProblem = (String, Option<Range<usize>>, String);

/// Whether `name` can be an environment variable's name.
pub(super) fn is_variable_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// Environment variables or `wasi:config` values, given in the configuration or taken from the
/// server's environment; the entries with a problem are left out.
pub(super) fn resolve_values(
    values: BTreeMap<String, Spanned<EnvValue>>,
    valid_key: fn(&str) -> bool,
    what: &str,
    io: &dyn ConfigIo,
) -> (Vec<(String, String)>, Vec<EntryProblem>) {
    let (mut resolved, mut problems) = (Vec::new(), Vec::new());
    for (var, value) in values {
        let at = span(&value);
        if !valid_key(&var) || var.contains('\0') {
            problems.push((var, at, format!("is not a valid {what}")));
            continue;
        }
        let value = match value.into_inner() {
            EnvValue::Value(v) => v,
            EnvValue::FromHost { from_host } => match io.env(&from_host) {
                Some(v) => v,
                None => {
                    problems.push((
                        var,
                        at,
                        format!(
                            "the server's environment variable {from_host} is not set (or not \
                             UTF-8)\nhow to fix: set it before starting palisade, or give a value"
                        ),
                    ));
                    continue;
                }
            },
        };
        if value.contains('\0') {
            problems.push((var, at, "its value contains a NUL byte".to_string()));
            continue;
        }
        resolved.push((var, value));
    }
    (resolved, problems)
}

/// Secrets, read from the server's environment, files only the server's user can read, or the
/// keyring; paths are relative to `base`. Entries with a problem are left out.
pub(super) fn resolve_secrets(
    secrets: BTreeMap<String, Spanned<SecretSection>>,
    base: &Path,
    io: &dyn ConfigIo,
) -> (Vec<SecretGrant>, Vec<EntryProblem>) {
    let (mut granted, mut problems) = (Vec::new(), Vec::new());
    for (name, section) in secrets {
        let at = span(&section);
        let section = section.into_inner();
        let mut fail = |why: String| problems.push((name.clone(), at.clone(), why));
        if name.is_empty() || name.contains(['=', '\0']) {
            fail("is not a valid name".into());
            continue;
        }
        let read = match (section.env, section.file, section.keyring) {
            (Some(var), None, None) => io.env(&var).ok_or_else(|| {
                Unreadable::Missing(format!(
                    "the server's environment variable {var} is not set (or not UTF-8)\nhow to \
                     fix: set it before starting palisade, or add optional = true"
                ))
            }),
            (None, Some(file), None) => io.secret_file(&base.join(file)),
            (None, None, Some(entry)) => io.keyring(&entry),
            _ => {
                fail(
                    "give exactly one of env = \"VARIABLE\", file = \"PATH\" or keyring = \
                     \"SERVICE/USER\""
                        .into(),
                );
                continue;
            }
        };
        let value = match read {
            Ok(value) => value,
            Err(Unreadable::Missing(why)) if section.optional => {
                let why = why.lines().next().unwrap_or_default();
                tracing::warn!("secret {name}: {why}; serving the plugin without it (optional)");
                continue;
            }
            Err(Unreadable::Missing(why) | Unreadable::Wrong(why)) => {
                fail(why);
                continue;
            }
        };
        if value.is_empty() {
            fail("its value is empty".into());
            continue;
        }
        if value.contains('\0') {
            fail("its value contains a NUL byte".into());
            continue;
        }
        granted.push(SecretGrant {
            name: name.clone(),
            value: SecretValue::new(value),
            as_env: section.as_env,
        });
    }
    (granted, problems)
}
