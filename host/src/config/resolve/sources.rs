//! `[sources]` and a plugin's `verify`: where remote plugins come from and whose signature they
//! must carry.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::file::{RegistrySection, SourcesSection, VerifySection};
use crate::config::io::ConfigIo;
use crate::config::model::*;

/// A `verify` table as a policy; key files and the trusted root are relative to `base`.
pub(super) fn resolve_verify(
    section: Option<VerifySection>,
    trusted_root: Option<&Path>,
    base: &Path,
    io: &dyn ConfigIo,
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
            let pem = io.read_text(&file).map_err(|why| format!("key = {why}"))?;
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

/// `[sources]` with defaults filled in (its `verify` is resolved on its own).
pub(super) fn resolve_sources(
    section: SourcesSection,
    base: &Path,
) -> Result<SourcesConfig, String> {
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
