//! Which plugins to serve: from the command line and the configuration file to the plugins to
//! load (their names, links and files), at start and again on every reload; and the plugin
//! `palisade inspect` describes.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::config::{Config, PluginConfig, RootsAccess, RootsAt};
use crate::runtime::LinkedComponent;

/// What `palisade serve` was asked to serve.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// `--config`: palisade.toml.
    pub config: Option<PathBuf>,
    /// `--plugin` files.
    pub plugins: Vec<PathBuf>,
    /// `--root` directories.
    pub roots: Vec<PathBuf>,
    /// `--roots-at`.
    pub roots_at: Option<RootsAt>,
    /// `--page-size`.
    pub page_size: Option<usize>,
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    /// `--no-watch`.
    pub no_watch: bool,
    /// `--http ADDR`.
    pub http: Option<std::net::SocketAddr>,
    /// `--console ADDR`.
    pub console: Option<std::net::SocketAddr>,
}

/// A plugin to load, and where it was asked for (for errors the operator can act on).
#[derive(Debug, Clone)]
pub struct Wanted {
    /// What to load it with.
    pub config: PluginConfig,
    /// Where it was asked for: a configuration section or a `--plugin` flag.
    pub origin: String,
}

impl ServeOptions {
    /// The configuration with the command line applied, and every plugin to load.
    pub fn resolve(&self) -> Result<(Config, Vec<Wanted>)> {
        let mut config = match &self.config {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        };
        if let Some(page_size) = self.page_size {
            anyhow::ensure!(page_size > 0, "--page-size must be at least 1");
            config.page_size = page_size;
        }
        if self.no_watch {
            config.watch = false;
        }
        if let Some(at) = self.roots_at {
            config.roots_at = at;
        }
        if let Some(listen) = self.http {
            config.http.listen = Some(listen);
        }
        if let Some(listen) = self.console {
            anyhow::ensure!(
                listen.port() == 0
                    || (Some(listen) != config.http.listen
                        && Some(listen) != config.metrics_listen),
                "--console {listen} is the address of MCP or of the metrics: give the console an \
                 address of its own"
            );
            config.console.listen = Some(listen);
        }
        let mut wanted: Vec<Wanted> = std::mem::take(&mut config.plugins)
            .into_iter()
            .map(|plugin| Wanted {
                origin: format!(
                    "{}: [plugins.{}]",
                    self.config.as_deref().unwrap_or("?".as_ref()).display(),
                    plugin.spec.name
                ),
                config: plugin,
            })
            .collect();
        for path in &self.plugins {
            let stem = name_from_file(path);
            let name = name_for_file(path, |name| {
                wanted.iter().any(|w| w.config.spec.name == name)
            });
            if name != stem {
                tracing::info!(
                    "--plugin {}: served as plugin `{name}` (tools `{name}_...`): `{}` is not a \
                     valid plugin name (1 to 32 of A-Z a-z 0-9 _ -) or is taken",
                    path.display(),
                    crate::runtime::log_safe(&stem)
                );
            }
            let mut plugin = PluginConfig::new(name, path.clone());
            plugin.spec.roots = RootsAccess::ReadOnly;
            wanted.push(Wanted {
                config: plugin,
                origin: format!("--plugin {}", path.display()),
            });
        }
        config.roots.extend(self.roots.iter().cloned());
        attach_links(&mut wanted);
        Ok((config, wanted))
    }
}

/// Points each plugin's linked components (`link`) at the files of the plugins it names: again
/// after pinning, which gives plugins from registries their paths in the store.
fn attach_links(wanted: &mut [Wanted]) {
    let files: Vec<LinkedComponent> = wanted
        .iter()
        .map(|w| LinkedComponent {
            name: w.config.spec.name.clone(),
            path: w.config.spec.path.clone(),
            sha256: w.config.spec.sha256,
        })
        .collect();
    for w in wanted {
        w.config.spec.links = w
            .config
            .links
            .iter()
            .filter_map(|name| files.iter().find(|f| f.name == *name).cloned())
            .collect();
    }
}

impl ServeOptions {
    /// [`resolve`](Self::resolve), then every plugin from a registry or a URL pointed at what
    /// `palisade.lock` accepted (fetched into the store when missing), or refused.
    pub async fn resolve_pinned(&self) -> Result<(Config, Vec<Wanted>)> {
        // Reading the configuration may wait on the keyring (secrets): off the async threads.
        let options = self.clone();
        let (config, mut wanted) = tokio::task::spawn_blocking(move || options.resolve())
            .await
            .context("reading the configuration stopped")??;
        let mut plugins: Vec<&mut PluginConfig> =
            wanted.iter_mut().map(|w| &mut w.config).collect();
        crate::remote_plugins::pin(&config, self.config.as_deref(), &mut plugins).await?;
        attach_links(&mut wanted);
        Ok((config, wanted))
    }
}

/// Checks that every wanted plugin's file can be opened: a missing file is a mistake in the
/// configuration or the command line, refused at start like one, before the plugins load in the
/// background (where a plugin that fails is only left out).
pub fn check_files(wanted: &[Wanted]) -> Result<()> {
    for Wanted { config, origin } in wanted {
        let path = &config.spec.path;
        std::fs::File::open(path)
            .with_context(|| format!("{origin}: cannot read the plugin file {}", path.display()))?;
    }
    Ok(())
}

/// A valid plugin name for the component file `path`, not `taken`: its stem, made valid (other
/// characters become `_`, at most 32 kept), with `-2`, `-3`... when taken.
fn name_for_file(path: &Path, taken: impl Fn(&str) -> bool) -> String {
    let base = crate::sources::Source::File(path.to_path_buf()).suggested_name();
    let mut name = base.clone();
    let mut n = 2;
    while taken(&name) {
        let suffix = format!("-{n}");
        // ASCII only (suggested_name made it so): any byte is a boundary.
        name = format!("{}{suffix}", &base[..base.len().min(32 - suffix.len())]);
        n += 1;
    }
    name
}

/// A plugin given as a file is named after the file's stem (`hello.wasm` → `hello`).
pub fn name_from_file(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The plugin `palisade inspect` describes: with a configuration, the configured plugin named
/// `target` or at the path `target`, grants and all; else the file with no grants.
pub async fn plugin_to_inspect(target: &Path, config: Option<&Path>) -> Result<PluginConfig> {
    let Some(config_path) = config else {
        return Ok(PluginConfig {
            prefix: String::new(),
            ..PluginConfig::new(name_from_file(target), target.to_path_buf())
        });
    };
    let mut config = Config::load(config_path)?;
    let wanted = std::fs::canonicalize(target).ok();
    let plugins = std::mem::take(&mut config.plugins);
    let plugin = plugins
        .into_iter()
        .find(|p| {
            Path::new(&p.spec.name) == target
                || wanted.is_some() && std::fs::canonicalize(&p.spec.path).ok() == wanted
        })
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{} configures no plugin named or at {}",
                config_path.display(),
                target.display()
            )
        })?;
    // A plugin from a registry is described as `serve` would load it: from the store, as locked.
    let mut plugin = plugin;
    crate::remote_plugins::pin(&config, Some(config_path), &mut [&mut plugin]).await?;
    Ok(plugin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_that_is_no_plugin_name_becomes_one() {
        let free = |_: &str| false;
        let long = Path::new("/x/a-very-long-component-file-name-from-a-build.wasm");
        let name = name_for_file(long, free);
        assert_eq!(name, "a-very-long-component-file-name-");
        assert!(crate::config::check_plugin_name(&name).is_ok());
        assert_eq!(
            name_for_file(Path::new("my tool.v2.wasm"), free),
            "my_tool_v2"
        );
        let taken = |n: &str| n == name || n == "a-very-long-component-file-nam-2";
        assert_eq!(
            name_for_file(long, taken),
            "a-very-long-component-file-nam-3"
        );
    }
}
