//! `palisade grants` and `palisade grants revoke`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Result, bail};

use super::GrantsFile;

/// What `palisade grants` prints: every remembered grant, by plugin.
pub fn show(config: &Path) -> Result<String> {
    let path = GrantsFile::path_beside(config);
    let grants = GrantsFile::load(&path)?;
    if grants.plugins.is_empty() {
        return Ok(format!(
            "No remembered grants ({} has none). Plugins with `ask = true` add them when a user \
             answers \"always\".\n",
            path.display()
        ));
    }
    let mut out = format!("Remembered grants ({}):\n", path.display());
    for (plugin, granted) in &grants.plugins {
        let _ = writeln!(out, "\n[{plugin}]");
        for (kind, list) in [("network", &granted.network), ("env", &granted.env)] {
            for g in list {
                let _ = writeln!(
                    out,
                    "  {kind:<8} {:<40} granted {} by {}",
                    g.grant, g.at, g.by
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "\nRemove one with `palisade grants revoke PLUGIN GRANT`, or all of a plugin's with \
         `palisade grants revoke PLUGIN`."
    );
    Ok(out)
}

/// Removes `plugin`'s grants named in `which` (all when empty); returns the report. A running
/// server sees it at the plugin's next reach.
pub fn revoke(config: &Path, plugin: &str, which: &[String]) -> Result<String> {
    let path = GrantsFile::path_beside(config);
    let mut grants = GrantsFile::load(&path)?;
    let removed = grants.revoke(plugin, which);
    if removed.is_empty() {
        let held: Vec<String> = grants
            .plugins
            .get(plugin)
            .map(|g| {
                g.network
                    .iter()
                    .chain(&g.env)
                    .map(|g| g.grant.clone())
                    .collect()
            })
            .unwrap_or_default();
        if held.is_empty() {
            bail!(
                "{} holds no grants for plugin `{plugin}`\nhow to fix: `palisade grants` lists them",
                path.display()
            );
        }
        bail!(
            "plugin `{plugin}` holds no grant named {}; it holds: {}",
            which.join(", "),
            held.join(", ")
        );
    }
    grants.save(&path)?;
    let mut out = String::new();
    for what in removed {
        let _ = writeln!(out, "revoked {what} for {plugin}");
    }
    Ok(out)
}

/// Drops every grant of `plugin` (when it is removed from the configuration); says nothing
/// when it had none.
pub fn forget_plugin(config: &Path, plugin: &str) -> Result<bool> {
    let path = GrantsFile::path_beside(config);
    let mut grants = GrantsFile::load(&path)?;
    if grants.revoke(plugin, &[]).is_empty() {
        return Ok(false);
    }
    grants.save(&path)?;
    Ok(true)
}
