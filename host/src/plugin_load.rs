//! Loading one configured plugin (at start, on reload, for `palisade inspect`), what is logged
//! when it is ready, and the compile cache it is compiled through.

use std::path::PathBuf;

use anyhow::Result;

use crate::config::PluginConfig;
use crate::runtime::{CacheError, CompileCache, Plugin, Runtime};

/// Loads one plugin as configured: at start, on reload and for `palisade inspect`.
pub async fn load_plugin(runtime: &Runtime, config: &PluginConfig) -> Result<Plugin> {
    let plugin = Plugin::load(runtime, config.spec.clone()).await?;
    // Settings for a tool the plugin lacks are refused, not ignored: a misspelt name would
    // silently drop a `confirm`.
    if let Some(missing) = config
        .tools
        .keys()
        .find(|t| !plugin.tools.iter().any(|tool| &tool.name == *t))
    {
        let known: Vec<&str> = plugin.tools.iter().map(|t| t.name.as_str()).collect();
        anyhow::bail!(
            "plugin `{name}`: the configuration has settings for tool `{missing}` \
             (plugins.{name}.tools.{missing}), but the plugin has no such tool; its tools are: {}",
            known.join(", "),
            name = plugin.name,
        );
    }
    // A plugin from a registry serves the tool definitions that were reviewed, or nothing.
    if let Some(locked) = &config.locked {
        let changes = crate::sources::lock::tool_differences(
            &locked.tools,
            &crate::sources::lock::tool_hashes(&plugin),
        );
        anyhow::ensure!(
            changes.is_empty(),
            "plugin `{name}`: its tools differ from palisade.lock ({}); it is not served until \
             you review them: run `palisade update {name}`",
            changes.join("; "),
            name = plugin.name,
        );
    }
    Ok(plugin)
}

/// Logs what a plugin offers once loaded.
pub fn log_loaded(plugin: &Plugin) {
    tracing::info!(
        plugin = &*plugin.name,
        tools = plugin.tools.len(),
        resources = plugin.resources.len(),
        templates = plugin.templates.len(),
        prompts = plugin.prompts.len(),
        "plugin loaded"
    );
    if plugin.tools.is_empty()
        && plugin.prompts.is_empty()
        && plugin.templates.is_empty()
        && plugin.resources.is_empty()
    {
        let e = plugin.exports();
        let exported: Vec<&str> = [
            (e.tools, "tools"),
            (e.resources, "resources"),
            (e.prompts, "prompts"),
        ]
        .into_iter()
        .filter_map(|(has, name)| has.then_some(name))
        .collect();
        tracing::warn!(
            plugin = &*plugin.name,
            "the plugin serves nothing yet: no tools, prompts, resources or templates (it \
             exports {}). A plugin built for a world without the interface its definitions need \
             (palisade-py/palisade-js --world) serves nothing; see `palisade inspect`",
            if exported.is_empty() {
                "none of palisade:plugin's interfaces".to_string()
            } else {
                exported.join(", ")
            }
        );
    }
}

/// The compile cache: `--cache-dir`, else the configuration's, else the user's cache directory.
pub fn compile_cache(
    flag: Option<PathBuf>,
    configured: Option<PathBuf>,
) -> Result<CompileCache, CacheError> {
    let dir = match flag.or(configured) {
        Some(dir) => dir,
        None => CompileCache::default_dir()?,
    };
    CompileCache::open(&dir)
}
