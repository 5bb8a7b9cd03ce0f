//! `[auth]` and `[audit]`: who may connect, with which scope, and where their calls are
//! recorded.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::access::{self, AccessConfig, Scope};
use crate::config::file::{AuditSection, AuthSection};
use crate::config::io::ConfigIo;
use crate::config::model::*;
use crate::config::parse_sha256;

/// Scopes and tokens: each token's hash, read from where the configuration says.
pub(super) fn resolve_access(
    auth: AuthSection,
    base: &Path,
    io: &dyn ConfigIo,
) -> Result<AccessConfig, String> {
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
                let text = io.read_text(&file).map_err(|why| format!("{at}: {why}"))?;
                token_hash(text.trim()).map_err(|why| format!("{at}: {} {why}", file.display()))?
            }
            (None, None, Some(var)) => {
                let text = io
                    .env(&var)
                    .ok_or_else(|| format!("{at}: environment variable {var} is not set"))?;
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
        .map(|section| crate::config::OAuthSettings::resolve(section, find))
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

pub(super) fn resolve_audit(audit: AuditSection, base: &Path) -> Result<AuditConfig, String> {
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
