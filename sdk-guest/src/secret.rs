//! Secrets and configuration values the operator gives the plugin, read through
//! `wasi:config/store`.
//!
//! The server's configuration names them: `[plugins.NAME.secrets]` for secrets (an API key, a
//! token: read from the server's environment, a file or the keyring, never logged) and
//! `[plugins.NAME.config]` for plain values. Both are read by name here.

use std::fmt;

#[allow(missing_docs, clippy::all)]
mod bindings {
    wit_bindgen::generate!({
        inline: "
            package wasi:config@0.2.0-draft;

            interface store {
                variant error {
                    upstream(string),
                    io(string),
                }
                get: func(key: string) -> result<option<string>, error>;
                get-all: func() -> result<list<tuple<string, string>>, error>;
            }

            world imports {
                import store;
            }
        ",
        // No WIT directory: without a `path`, the macro would also parse the crate's `wit/`,
        // which holds the Go and C SDKs' world (`sdk.wit`) and does not resolve on its own.
        path: [],
        world: "imports",
    });
}

use bindings::wasi::config::store;

/// A secret or value the plugin asked for and was not given.
#[derive(Debug, Clone)]
pub struct MissingSecret {
    message: String,
}

impl fmt::Display for MissingSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MissingSecret {}

/// So tools returning `Result<_, String>` can use `?` on secrets.
impl From<MissingSecret> for String {
    fn from(e: MissingSecret) -> String {
        e.message
    }
}

impl From<MissingSecret> for crate::PluginError {
    fn from(e: MissingSecret) -> crate::PluginError {
        crate::PluginError::internal(e.message)
    }
}

impl From<MissingSecret> for crate::http::Error {
    fn from(e: MissingSecret) -> crate::http::Error {
        crate::http::Error::missing_secret(e.message)
    }
}

/// The configuration value (or secret) `name`, if the server's configuration gives one: for
/// settings with a default, such as an API's base URL.
pub fn config(name: &str) -> Option<String> {
    store::get(name).ok().flatten()
}

/// The secret (or configuration value) `name`; an error that says how to grant it when the
/// server's configuration does not give it.
///
/// ```no_run
/// # fn run() -> Result<(), palisade_sdk::MissingSecret> {
/// let token = palisade_sdk::secret("GITHUB_TOKEN")?;
/// # Ok(()) }
/// ```
pub fn secret(name: &str) -> Result<String, MissingSecret> {
    match store::get(name) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(MissingSecret {
            message: format!(
                "the secret {name} is not given to this plugin: add `{name} = {{ env = \"HOST_VARIABLE\" }}` \
                 (or `{{ file = \"PATH\" }}`) under [plugins.PLUGIN.secrets] in the server's configuration"
            ),
        }),
        Err(store::Error::Upstream(why) | store::Error::Io(why)) => Err(MissingSecret {
            message: format!("the secret {name} cannot be read: {why}"),
        }),
    }
}
