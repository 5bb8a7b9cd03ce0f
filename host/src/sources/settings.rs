//! `[sources]`, resolved: how plugins from registries and URLs are fetched, kept and checked.

use std::path::PathBuf;

use super::verify::Policy;

/// How plugins from registries and URLs are fetched and kept, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcesConfig {
    /// The store; `None`: the default directory.
    pub store_dir: Option<PathBuf>,
    /// Largest component fetched, in bytes (declared, sent and unpacked).
    pub max_bytes: u64,
    /// Registries reached over plain HTTP besides loopback ones.
    pub insecure_registries: Vec<String>,
    /// How long `serve` waits for a registry to say what a tag names now.
    pub tag_check_timeout: std::time::Duration,
    /// Credentials by registry.
    pub registries: std::collections::BTreeMap<String, RegistryLogin>,
    /// Refuse plugins from registries and URLs that no `verify` covers.
    pub require_signatures: bool,
    /// `[sources] verify`: who must have signed plugins without a `verify` of their own.
    pub verify: Option<Policy>,
}

impl Default for SourcesConfig {
    fn default() -> Self {
        SourcesConfig {
            store_dir: None,
            max_bytes: 256 << 20,
            insecure_registries: Vec::new(),
            tag_check_timeout: std::time::Duration::from_secs(5),
            registries: std::collections::BTreeMap::new(),
            require_signatures: false,
            verify: None,
        }
    }
}

/// How to log in to one registry; the secrets stay in the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryLogin {
    /// HTTP basic: a user name, and the variable holding the password.
    Basic {
        /// The user name.
        username: String,
        /// The variable holding the password.
        password_env: String,
    },
    /// A bearer token in a variable.
    Token {
        /// The variable holding the token.
        token_env: String,
    },
}
