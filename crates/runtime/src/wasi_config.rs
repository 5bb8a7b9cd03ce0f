//! `wasi:config/store`: the configuration values and secrets the operator gives a plugin
//! (`[plugins.NAME.config]`, `[plugins.NAME.secrets]`), read by key.
//!
//! Both published versions are served, `0.2.0-draft` and `0.2.0-rc.1`: their interfaces are the
//! same, but pre-release versions only match themselves, so a component built against one does
//! not link to the other. A plugin without a `config` table sees an empty store.

use wasmtime::component::{ComponentType, Lift, Linker, Lower};

use super::store::StoreState;

/// The instance names of the versions served.
pub const INTERFACES: [&str; 2] = [
    "wasi:config/store@0.2.0-draft",
    "wasi:config/store@0.2.0-rc.1",
];

/// `wasi:config/store`'s `error`. The host's values never fail to read, so it is never
/// returned; it is here for the functions' types.
#[derive(ComponentType, Lift, Lower)]
#[component(variant)]
#[allow(dead_code)]
enum ConfigError {
    /// The store behind the values failed.
    #[component(name = "upstream")]
    Upstream(String),
    /// Reading the values failed.
    #[component(name = "io")]
    Io(String),
}

/// Defines both versions of `wasi:config/store` in `linker`.
pub fn add_to_linker(linker: &mut Linker<StoreState>) -> anyhow::Result<()> {
    for name in INTERFACES {
        let mut instance = linker.instance(name)?;
        instance.func_wrap("get", |store, (key,): (String,)| {
            let grants = &store.data().grants;
            let config = grants.config.iter().find(|(k, _)| *k == key);
            let value = match config {
                Some((_, value)) => {
                    grants.usage.note("config", &key);
                    Some(value.clone())
                }
                None => grants.secrets.iter().find(|s| s.name == key).map(|secret| {
                    grants.usage.note("secret", &key);
                    secret.value.expose().to_string()
                }),
            };
            Ok((Ok::<_, ConfigError>(value),))
        })?;
        instance.func_wrap("get-all", |store, (): ()| {
            let grants = &store.data().grants;
            grants.usage.note("config", "(all keys and secrets)");
            let secrets = grants
                .secrets
                .iter()
                .map(|s| (s.name.clone(), s.value.expose().to_string()));
            let all: Vec<(String, String)> = grants.config.iter().cloned().chain(secrets).collect();
            Ok((Ok::<_, ConfigError>(all),))
        })?;
    }
    Ok(())
}
