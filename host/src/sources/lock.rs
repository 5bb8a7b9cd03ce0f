//! `palisade.lock`: for each plugin from a registry or a URL, what the operator accepted with
//! `palisade add` or `palisade update`: the digest, the component's SHA-256, the imports and a
//! hash of every tool's definition. `serve` refuses a plugin that differs from it (a moved tag, a
//! changed tool description), naming the difference.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::runtime::Plugin;

/// The lock file's name, beside the configuration file.
pub const LOCK_FILE: &str = "palisade.lock";

/// The whole lock file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The format's version: 1.
    pub version: u32,
    /// By plugin name.
    #[serde(default)]
    pub plugins: BTreeMap<String, Locked>,
}

/// One plugin, as accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// The source as configured (`oci://...`, `https://...`).
    pub source: String,
    /// For OCI sources: the manifest digest the reference resolved to (`sha256:...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The component's SHA-256, in hex: the file in the store, checked at every load.
    pub sha256: String,
    /// The signer whose signature was verified, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// Every interface the component imports.
    #[serde(default)]
    pub imports: Vec<String>,
    /// Each tool's name, and the SHA-256 of its definition (name, title, description, schemas,
    /// annotations).
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
}

impl Lock {
    /// The lock file beside `config`.
    pub fn path_beside(config: &Path) -> PathBuf {
        config
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .join(LOCK_FILE)
    }

    /// Reads `path`; a missing file is an empty lock.
    pub fn load(path: &Path) -> Result<Lock> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Lock {
                    version: 1,
                    plugins: BTreeMap::new(),
                });
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let lock: Lock = toml::from_str(&text).with_context(|| {
            format!(
                "{} is not a lock file Palisade wrote; restore it from version control, or \
                 remove it and run `palisade update` to review every plugin again",
                path.display()
            )
        })?;
        anyhow::ensure!(
            lock.version == 1,
            "{}: version {} is not one this Palisade reads (1)",
            path.display(),
            lock.version
        );
        Ok(lock)
    }

    /// Writes the lock to `path` whole (through a rename), so a crash never leaves half of it.
    pub fn save(&self, path: &Path) -> Result<()> {
        let body = toml::to_string_pretty(self).context("serializing the lock")?;
        let text = format!(
            "# Written by `palisade add` and `palisade update`: what was reviewed and accepted for\n\
             # each plugin from a registry or a URL. Commit it beside palisade.toml; do not edit it.\n{body}"
        );
        write_whole(path, &text)
    }
}

/// Replaces `path` whole, through a temporary file and a rename: a crash never leaves half of
/// an operator's file.
pub fn write_whole(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

impl Locked {
    /// The component's SHA-256.
    pub fn sha256(&self) -> Result<[u8; 32]> {
        super::parse_sha256(&self.sha256)
            .with_context(|| format!("palisade.lock: sha256 = {:?} is not a SHA-256", self.sha256))
    }
}

/// Each tool's definition hash, by tool name.
pub fn tool_hashes(plugin: &Plugin) -> BTreeMap<String, String> {
    plugin
        .tools
        .iter()
        .map(|tool| {
            // Schemas are hashed as parsed JSON, so key order and spacing do not count.
            let schema = |text: &str| {
                serde_json::from_str::<serde_json::Value>(text)
                    .unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
            };
            let annotations = tool.annotations.as_ref().map(|a| {
                serde_json::json!({
                    "title": a.title,
                    "readOnlyHint": a.read_only_hint,
                    "destructiveHint": a.destructive_hint,
                    "idempotentHint": a.idempotent_hint,
                    "openWorldHint": a.open_world_hint,
                })
            });
            let definition = serde_json::json!({
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "inputSchema": schema(&tool.input_schema),
                "outputSchema": tool.output_schema.as_deref().map(schema),
                "annotations": annotations,
            });
            let hash = sha2::Sha256::digest(definition.to_string().as_bytes());
            (tool.name.clone(), hex::encode(hash))
        })
        .collect()
}

/// What changed from `old` to `new`, one line each, for `update` and for `serve`'s refusals.
pub fn differences(old: &Locked, new: &Locked) -> Vec<String> {
    let mut lines = Vec::new();
    if old.source != new.source {
        lines.push(format!("source: {} -> {}", old.source, new.source));
    }
    if old.digest != new.digest {
        lines.push(format!(
            "digest: {} -> {}",
            old.digest.as_deref().unwrap_or("-"),
            new.digest.as_deref().unwrap_or("-")
        ));
    }
    if old.sha256 != new.sha256 {
        lines.push(format!(
            "component sha256: {} -> {}",
            old.sha256, new.sha256
        ));
    }
    if old.signed_by != new.signed_by {
        lines.push(format!(
            "signed by: {} -> {}",
            old.signed_by.as_deref().unwrap_or("(unsigned)"),
            new.signed_by.as_deref().unwrap_or("(unsigned)")
        ));
    }
    lines.extend(tool_differences(&old.tools, &new.tools));
    for import in new.imports.iter().filter(|i| !old.imports.contains(i)) {
        lines.push(format!("new import: {import}"));
    }
    for import in old.imports.iter().filter(|i| !new.imports.contains(i)) {
        lines.push(format!("import gone: {import}"));
    }
    lines
}

/// Tools added, removed, or whose definition changed.
pub fn tool_differences(
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, hash) in new {
        match old.get(name) {
            None => lines.push(format!("new tool: {name}")),
            Some(before) if before != hash => {
                lines.push(format!("tool {name}: definition changed"))
            }
            Some(_) => {}
        }
    }
    for name in old.keys().filter(|n| !new.contains_key(*n)) {
        lines.push(format!("tool gone: {name}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locked() -> Locked {
        Locked {
            source: "oci://127.0.0.1:5000/tools/weather:1.0".into(),
            digest: Some(format!("sha256:{}", "a".repeat(64))),
            sha256: "b".repeat(64),
            signed_by: None,
            imports: vec!["wasi:cli/environment@0.2.0".into()],
            tools: [("forecast".to_string(), "1".repeat(64))].into(),
        }
    }

    #[test]
    fn the_lock_round_trips_and_a_missing_file_is_empty() {
        let dir = std::env::temp_dir().join(format!("palisade-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(LOCK_FILE);
        let _ = std::fs::remove_file(&path);
        assert!(Lock::load(&path).unwrap().plugins.is_empty());
        let lock = Lock {
            version: 1,
            plugins: [("weather".to_string(), locked())].into(),
        };
        lock.save(&path).unwrap();
        assert_eq!(Lock::load(&path).unwrap(), lock);
        std::fs::write(&path, "version = 1\n[plugins.x]\nsource = 3\n").unwrap();
        let err = format!("{:#}", Lock::load(&path).unwrap_err());
        assert!(err.contains("not a lock file"), "{err}");
    }

    #[test]
    fn differences_name_digest_tools_and_imports() {
        let old = locked();
        let mut new = locked();
        new.digest = Some(format!("sha256:{}", "c".repeat(64)));
        new.tools.insert("forecast".into(), "2".repeat(64));
        new.tools.insert("alerts".into(), "3".repeat(64));
        new.imports.push("wasi:http/outgoing-handler@0.2.0".into());
        let lines = differences(&old, &new);
        for needle in [
            "digest: sha256:aaaa",
            "tool forecast: definition changed",
            "new tool: alerts",
            "new import: wasi:http/outgoing-handler",
        ] {
            assert!(
                lines.iter().any(|l| l.contains(needle)),
                "{needle}: {lines:?}"
            );
        }
        assert!(differences(&old, &old).is_empty());
    }
}
