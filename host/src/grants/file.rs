//! `palisade.grants`: what users granted by answering "always", as TOML beside the configuration
//! and the lock. Palisade writes it; a person may read or edit it, so it is checked like any
//! input: entries must be valid grants, and a file others could write is not believed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::runtime::{Capability, HostPattern, is_env_name};

/// The grants file's name, beside the configuration.
pub const GRANTS_FILE: &str = "palisade.grants";

/// Largest grants file read: it holds a few lines per plugin.
const MAX_BYTES: u64 = 1 << 20;

/// The whole file.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantsFile {
    /// The format's version: 1.
    pub version: u32,
    /// By plugin name.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginGrants>,
}

/// One plugin's remembered grants.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginGrants {
    /// Hosts, each as a `network` entry would name it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<Granted>,
    /// The server's environment variables, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<Granted>,
}

/// One answer "always".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Granted {
    /// The host grant (`api.example.com`, `http://127.0.0.1:8080`) or the variable's name.
    pub grant: String,
    /// When (RFC 3339).
    pub at: String,
    /// Which client answered: a token's name, `stdio`, or an address.
    pub by: String,
}

impl GrantsFile {
    /// The grants file beside `config`, and the lock.
    pub fn path_beside(config: &Path) -> PathBuf {
        crate::sources::Lock::path_beside(config).with_file_name(GRANTS_FILE)
    }

    /// Reads and checks `path`; a missing file holds no grants.
    pub fn load(path: &Path) -> Result<GrantsFile> {
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GrantsFile::empty()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        check_owner(&file, path)?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_BYTES + 1), &mut text)
            .with_context(|| format!("cannot read {}", path.display()))?;
        anyhow::ensure!(
            text.len() as u64 <= MAX_BYTES,
            "{} is larger than {} KiB",
            path.display(),
            MAX_BYTES >> 10
        );
        let file: GrantsFile =
            toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
        file.check()
            .with_context(|| format!("{} is not valid", path.display()))?;
        Ok(file)
    }

    /// A file with no grants.
    pub fn empty() -> GrantsFile {
        GrantsFile {
            version: 1,
            plugins: BTreeMap::new(),
        }
    }

    /// Every entry must be a grant Palisade could have written.
    fn check(&self) -> Result<()> {
        anyhow::ensure!(
            self.version == 1,
            "version {} is not one this palisade knows (1)",
            self.version
        );
        for (plugin, grants) in &self.plugins {
            for host in &grants.network {
                HostPattern::parse(&host.grant)
                    .with_context(|| format!("plugins.{plugin}.network"))?;
            }
            for var in &grants.env {
                anyhow::ensure!(
                    is_env_name(&var.grant),
                    "plugins.{plugin}.env: `{}` is not an environment variable's name",
                    var.grant
                );
            }
        }
        Ok(())
    }

    /// Writes the file whole, readable only by its owner.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut text = String::from(
            "# Grants users gave by answering \"always\" when a plugin with `ask = true` reached\n\
             # for something it was not granted. Written by palisade; `palisade grants` shows\n\
             # them, `palisade grants revoke PLUGIN [GRANT]` removes them.\n",
        );
        text.push_str(&toml::to_string(self).context("cannot write the grants")?);
        crate::runtime::private_dir::write(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// Whether `plugin` was granted `capability`.
    pub fn allows(&self, plugin: &str, capability: &Capability) -> bool {
        let Some(grants) = self.plugins.get(plugin) else {
            return false;
        };
        match capability {
            Capability::Host(grant) => grants.network.iter().any(|g| g.grant == *grant),
            Capability::EnvVar(name) => grants.env.iter().any(|g| g.grant == *name),
        }
    }

    /// Adds `capability` for `plugin`, unless it is there already.
    pub fn add(&mut self, plugin: &str, capability: &Capability, by: &str) {
        if self.allows(plugin, capability) {
            return;
        }
        let grants = self.plugins.entry(plugin.to_string()).or_default();
        let (list, grant) = match capability {
            Capability::Host(grant) => (&mut grants.network, grant),
            Capability::EnvVar(name) => (&mut grants.env, name),
        };
        list.push(Granted {
            grant: grant.clone(),
            at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            by: by.to_string(),
        });
    }

    /// Removes `plugin`'s grants named in `which` (a host grant, or an environment variable's
    /// name), or all of them when `which` is empty; returns what was removed.
    pub fn revoke(&mut self, plugin: &str, which: &[String]) -> Vec<String> {
        let Some(grants) = self.plugins.get_mut(plugin) else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        let mut drop = |list: &mut Vec<Granted>, kind: &str| {
            list.retain(|g| {
                let goes = which.is_empty() || which.contains(&g.grant);
                if goes {
                    removed.push(format!("{kind} {}", g.grant));
                }
                !goes
            })
        };
        drop(&mut grants.network, "network");
        drop(&mut grants.env, "env");
        if grants.network.is_empty() && grants.env.is_empty() {
            self.plugins.remove(plugin);
        }
        removed
    }
}

/// A grants file someone else could have written grants nothing.
fn check_owner(file: &std::fs::File, path: &Path) -> Result<()> {
    let meta = file.metadata()?;
    anyhow::ensure!(
        crate::runtime::private_dir::writable_only_by_me(&meta),
        "{} is not believed: it must belong to the user running palisade and be writable only \
         by them (chmod 600)",
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(line: u32) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("palisade-grants-{}-{line}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn grants_round_trip_and_revoke() {
        let path = scratch(line!()).join(GRANTS_FILE);
        let mut grants = GrantsFile::load(&path).unwrap();
        let host = Capability::Host("api.example.com".into());
        let var = Capability::EnvVar("KEY".into());
        grants.add("w", &host, "stdio");
        grants.add("w", &host, "stdio");
        grants.add("w", &var, "alice");
        grants.save(&path).unwrap();
        let read = GrantsFile::load(&path).unwrap();
        assert_eq!(read, grants);
        assert_eq!(read.plugins["w"].network.len(), 1);
        assert!(read.allows("w", &host) && read.allows("w", &var));
        assert!(!read.allows("other", &host));
        let mut revoked = read.clone();
        assert_eq!(revoked.revoke("w", &["KEY".into()]), ["env KEY"]);
        assert!(!revoked.allows("w", &var) && revoked.allows("w", &host));
        assert_eq!(revoked.revoke("w", &[]), ["network api.example.com"]);
        assert!(revoked.plugins.is_empty());
    }

    #[test]
    fn hostile_files_are_refused() {
        let path = scratch(line!()).join(GRANTS_FILE);
        let write =
            |text: &str| crate::runtime::private_dir::write(&path, text.as_bytes()).unwrap();
        write(
            "version = 1\n[[plugins.w.network]]\ngrant = \"http://x/path\"\nat = \"\"\nby = \"\"\n",
        );
        assert!(GrantsFile::load(&path).is_err(), "not a host grant");
        write("version = 1\n[[plugins.w.env]]\ngrant = \"A=B\"\nat = \"\"\nby = \"\"\n");
        assert!(GrantsFile::load(&path).is_err(), "not a variable name");
        write("version = 1\nextra = true\n");
        assert!(GrantsFile::load(&path).is_err(), "unknown field");
        write(&format!(
            "version = 1\n#{}\n",
            "x".repeat(MAX_BYTES as usize)
        ));
        assert!(GrantsFile::load(&path).is_err(), "too large");
        write("version = 1\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
            let error = GrantsFile::load(&path).unwrap_err().to_string();
            assert!(error.contains("chmod 600"), "{error}");
        }
    }
}
