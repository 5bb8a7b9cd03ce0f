//! Who may see and call what: scopes, the bearer tokens that carry them, and the identity of a
//! client as the rest of the server knows it.

use std::sync::Arc;

use globset::{Glob, GlobMatcher};
use sha2::{Digest, Sha256};

use super::OAuthSettings;

/// The scope that grants everything; the default over stdio.
pub const ALL: &str = "all";

/// The plugins and tools a client may see and call.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The scope's name in the configuration (`[auth.scopes.NAME]`), for logs.
    pub name: String,
    /// As configured, to tell whether a new configuration changed it.
    entries: Vec<String>,
    patterns: Vec<ScopePattern>,
}

/// `PLUGIN` or `PLUGIN/NAME`, each part a glob. `NAME` is the plugin's own name of a tool or a
/// prompt; a pattern without it grants the whole plugin (its resources too).
#[derive(Debug, Clone)]
struct ScopePattern {
    plugin: GlobMatcher,
    item: Option<GlobMatcher>,
}

impl Scope {
    /// Everything every plugin offers.
    pub fn all() -> Scope {
        Scope::parse(ALL, &["*".to_string()]).expect("`*` is a valid glob")
    }

    /// [`Scope::all`], built once: compiling its glob is a regex build, too slow for every
    /// request of an anonymous HTTP client.
    pub fn shared_all() -> Arc<Scope> {
        static ALL_SCOPE: std::sync::LazyLock<Arc<Scope>> =
            std::sync::LazyLock::new(|| Arc::new(Scope::all()));
        ALL_SCOPE.clone()
    }

    /// A scope from its entries; the error names the bad entry.
    pub fn parse(name: &str, entries: &[String]) -> Result<Scope, super::InvalidValue> {
        let glob = |text: &str, entry: &str| {
            Glob::new(text)
                .map(|g| g.compile_matcher())
                .map_err(|e| format!("`{entry}` is not a valid pattern: {e}"))
        };
        let patterns = entries
            .iter()
            .map(|entry| {
                let (plugin, item) = match entry.split_once('/') {
                    Some((plugin, "*")) => (plugin, None),
                    Some((plugin, item)) => (plugin, Some(item)),
                    None => (entry.as_str(), None),
                };
                if plugin.is_empty() || item.is_some_and(|i| i.is_empty() || i.contains('/')) {
                    return Err(format!(
                        "`{entry}` is not PLUGIN or PLUGIN/TOOL (each may use * ? [..] globs)"
                    ));
                }
                Ok(ScopePattern {
                    plugin: glob(plugin, entry)?,
                    item: item.map(|i| glob(i, entry)).transpose()?,
                })
            })
            .collect::<Result<_, String>>()
            .map_err(super::InvalidValue)?;
        Ok(Scope {
            name: name.to_string(),
            entries: entries.to_vec(),
            patterns,
        })
    }

    /// Everything any of `scopes` allows, named after them (`a+b`); nothing when empty. The
    /// compiled patterns are shared, not built again.
    pub fn union(scopes: &[&Arc<Scope>]) -> Scope {
        let name = match scopes.len() {
            0 => "(none)".to_string(),
            _ => scopes
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join("+"),
        };
        Scope {
            name,
            entries: scopes.iter().flat_map(|s| s.entries.clone()).collect(),
            patterns: scopes.iter().flat_map(|s| s.patterns.clone()).collect(),
        }
    }

    /// Whether the tool or prompt `item` (the plugin's own name) of `plugin` is in scope.
    pub fn allows_item(&self, plugin: &str, item: &str) -> bool {
        self.patterns
            .iter()
            .any(|p| p.plugin.is_match(plugin) && p.item.as_ref().is_none_or(|i| i.is_match(item)))
    }

    /// Whether all of `plugin` is in scope: what it offers besides named tools and prompts
    /// (resources, templates) is visible only then.
    pub fn allows_plugin(&self, plugin: &str) -> bool {
        self.patterns
            .iter()
            .any(|p| p.item.is_none() && p.plugin.is_match(plugin))
    }
}

/// Who a verified OAuth access token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSubject {
    /// The `sub` claim: the user, or the client itself for client-credentials tokens.
    pub subject: String,
    /// The `client_id` claim (RFC 9068), else `azp`.
    pub client_id: Option<String>,
    /// The token's OAuth scopes.
    pub scopes: Vec<String>,
}

/// A client as the server knows it: a name for logs, audit and rate limits, and its scope.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The token's name over HTTP with tokens, `stdio` over stdio, else `anonymous`.
    pub client: Arc<str>,
    /// What the client may see and call.
    pub scope: Arc<Scope>,
    /// Whether the identity was proven by a token.
    pub authenticated: bool,
    /// Who an OAuth access token speaks for, when one was presented.
    pub oauth: Option<Arc<OAuthSubject>>,
}

impl Identity {
    /// A client nobody vouched for, on a server that requires nothing: it sees everything.
    pub fn anonymous() -> Identity {
        Identity {
            client: "anonymous".into(),
            scope: Scope::shared_all(),
            authenticated: false,
            oauth: None,
        }
    }
}

/// A bearer token, kept only as its SHA-256.
#[derive(Debug, Clone)]
pub struct Token {
    /// The token's name: the client's name in logs, limits and the audit log.
    pub name: String,
    /// SHA-256 of the token; the token itself is never kept.
    pub sha256: [u8; 32],
    /// What a client with this token may see and call.
    pub scope: Arc<Scope>,
}

/// The access rules of the server.
#[derive(Debug, Clone)]
pub struct AccessConfig {
    /// When any exist, every HTTP request must carry one of them.
    pub tokens: Vec<Token>,
    /// What a client over stdio may use (the operator's own scope).
    pub stdio_scope: Arc<Scope>,
    /// OAuth access tokens from a trusted issuer, beside the static tokens.
    pub oauth: Option<OAuthSettings>,
}

impl Default for AccessConfig {
    fn default() -> Self {
        AccessConfig {
            tokens: Vec::new(),
            stdio_scope: Arc::new(Scope::all()),
            oauth: None,
        }
    }
}

impl AccessConfig {
    /// Whether `other` grants the same: the same tokens with the same scopes, the same stdio scope.
    pub fn same_as(&self, other: &AccessConfig) -> bool {
        let scope = |s: &Scope| (s.name.clone(), s.entries.clone());
        let tokens = |a: &AccessConfig| -> Vec<_> {
            a.tokens
                .iter()
                .map(|t| (t.name.clone(), t.sha256, scope(&t.scope)))
                .collect()
        };
        let oauth = match (&self.oauth, &other.oauth) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same_as(b),
            _ => false,
        };
        tokens(self) == tokens(other)
            && scope(&self.stdio_scope) == scope(&other.stdio_scope)
            && oauth
    }

    /// Whether HTTP clients must present a token (a static one, or an OAuth access token).
    pub fn tokens_required(&self) -> bool {
        !self.tokens.is_empty() || self.oauth.is_some()
    }

    /// The identity behind `bearer`, if it is one of the configured tokens.
    pub fn authenticate(&self, bearer: &str) -> Option<Identity> {
        let digest = sha256(bearer);
        // Comparing digests, not tokens: timing reveals nothing useful about a token.
        self.tokens
            .iter()
            .find(|t| t.sha256 == digest)
            .map(|t| Identity {
                client: t.name.as_str().into(),
                scope: t.scope.clone(),
                authenticated: true,
                oauth: None,
            })
    }

    /// Who a stdio client is.
    pub fn stdio_identity(&self) -> Identity {
        Identity {
            client: "stdio".into(),
            scope: self.stdio_scope.clone(),
            authenticated: false,
            oauth: None,
        }
    }
}

/// SHA-256 of a token's text.
pub fn sha256(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A new bearer token: 32 random bytes from the OS, in hex.
pub fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness from the OS: {e}"))?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(entries: &[&str]) -> Scope {
        let entries: Vec<String> = entries.iter().map(|s| s.to_string()).collect();
        Scope::parse("t", &entries).unwrap()
    }

    #[test]
    fn patterns_name_plugins_and_their_items() {
        let s = scope(&["files/read_*", "hello", "notes/*"]);
        assert!(s.allows_item("files", "read_file"));
        assert!(!s.allows_item("files", "write_file"));
        assert!(!s.allows_plugin("files"), "only some of files");
        assert!(s.allows_item("hello", "greet"));
        assert!(s.allows_plugin("hello"));
        assert!(s.allows_plugin("notes"));
        assert!(!s.allows_item("misbehave", "spin"));
        assert!(Scope::all().allows_plugin("anything"));
    }

    #[test]
    fn bad_patterns_are_refused() {
        for bad in ["", "/x", "a/", "a/b/c", "[a"] {
            assert!(Scope::parse("t", &[bad.to_string()]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn tokens_are_matched_by_hash() {
        let access = AccessConfig {
            tokens: vec![Token {
                name: "alice".into(),
                sha256: sha256("s3cret"),
                scope: Arc::new(scope(&["hello"])),
            }],
            ..AccessConfig::default()
        };
        let who = access.authenticate("s3cret").unwrap();
        assert_eq!(&*who.client, "alice");
        assert!(who.authenticated);
        assert!(access.authenticate("s3cret ").is_none());
        assert!(access.authenticate("").is_none());
    }
}
