//! Grants users give while the server runs (`ask = true`): remembered "always" answers, kept in
//! `palisade.grants` beside the configuration and the lock, never in the hand-written
//! configuration. `palisade grants` shows them and `palisade grants revoke` removes them; a
//! running server sees a revocation at the plugin's next reach.

pub mod commands;
pub mod file;

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Result;

pub use file::{GRANTS_FILE, GrantsFile};

use crate::runtime::Capability;

/// The grants file a server consults, read again whenever it changed.
pub struct UserGrants {
    /// `None` without a configuration file: "always" then lasts as long as the process.
    path: Option<PathBuf>,
    cached: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    /// What told the file apart when it was read (`None`: it did not exist).
    seen: Option<Stamp>,
    grants: GrantsFile,
}

impl UserGrants {
    /// The grants file beside the configuration `config`, or grants held in memory only.
    pub fn beside(config: Option<&Path>) -> UserGrants {
        UserGrants {
            path: config.map(GrantsFile::path_beside),
            cached: Mutex::new(Cached {
                seen: None,
                grants: GrantsFile::empty(),
            }),
        }
    }

    /// Where "always" is written, if anywhere.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the user granted `capability` to `plugin` "always".
    pub fn allows(&self, plugin: &str, capability: &Capability) -> bool {
        let mut cached = self.cached.lock();
        self.refresh(&mut cached);
        cached.grants.allows(plugin, capability)
    }

    /// Remembers "always": written to the file (read again first, so nothing another process
    /// wrote is lost).
    pub fn remember(&self, plugin: &str, capability: &Capability, by: &str) -> Result<()> {
        let mut cached = self.cached.lock();
        let Some(path) = &self.path else {
            cached.grants.add(plugin, capability, by);
            return Ok(());
        };
        let mut grants = GrantsFile::load(path)?;
        grants.add(plugin, capability, by);
        grants.save(path)?;
        cached.seen = stamp(path);
        cached.grants = grants;
        Ok(())
    }

    /// Every remembered grant, as the file holds it now.
    pub fn list(&self) -> GrantsFile {
        let mut cached = self.cached.lock();
        self.refresh(&mut cached);
        cached.grants.clone()
    }

    /// Removes `plugin`'s grant `which` (read again first, so nothing another process wrote is
    /// lost); returns what was removed ("network api.example.com"), empty when it was not there.
    pub fn revoke(&self, plugin: &str, which: &str) -> Result<Vec<String>> {
        let which = [which.to_string()];
        let mut cached = self.cached.lock();
        let Some(path) = &self.path else {
            return Ok(cached.grants.revoke(plugin, &which));
        };
        let mut grants = GrantsFile::load(path)?;
        let removed = grants.revoke(plugin, &which);
        if !removed.is_empty() {
            grants.save(path)?;
        }
        cached.seen = stamp(path);
        cached.grants = grants;
        Ok(removed)
    }

    /// Reads the grants again if the file changed since. A file that cannot be believed grants
    /// nothing (said in the log).
    fn refresh(&self, cached: &mut Cached) {
        let Some(path) = &self.path else {
            return;
        };
        let now = stamp(path);
        if now != cached.seen || now.is_none() {
            cached.grants = GrantsFile::load(path).unwrap_or_else(|e| {
                tracing::error!("no remembered grants are used: {e:#}");
                GrantsFile::empty()
            });
            cached.seen = now;
        }
    }
}

/// What tells a changed file: its modification time and length, and on Unix its inode, mode
/// and change time (a `chmod`, or a file renamed over it, changes whether it is believed).
type Stamp = (SystemTime, u64, u64, u32, i64, i64);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((
            modified,
            meta.len(),
            meta.ino(),
            meta.mode(),
            meta.ctime(),
            meta.ctime_nsec(),
        ))
    }
    #[cfg(not(unix))]
    {
        Some((modified, meta.len(), 0, 0, 0, 0))
    }
}
