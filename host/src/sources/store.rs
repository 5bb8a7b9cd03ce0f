//! The plugin store: fetched components by SHA-256, in a directory only this user can change
//! (mode 0700), which no plugin grant may reach.
//!
//! A file's name is its digest, and every load checks the digest again (the runtime refuses a
//! component whose SHA-256 is not the pinned one), so a changed file in the store is refused,
//! never run.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use sha2::Digest as _;

use super::settings::SourcesConfig;
use super::verify::Signatures;
use crate::runtime::private_dir;

/// The store, opened and checked.
#[derive(Debug, Clone)]
pub struct Store {
    /// Canonical.
    dir: PathBuf,
}

impl Store {
    /// Opens the store at `dir`, creating it (mode 0700) when missing; refuses a directory
    /// another user could change.
    pub fn open(dir: &Path) -> Result<Store> {
        private_dir::create(dir)
            .with_context(|| format!("creating the plugin store {}", dir.display()))?;
        let dir = std::fs::canonicalize(dir)
            .with_context(|| format!("plugin store {}: cannot resolve the path", dir.display()))?;
        private_dir::check(&dir).map_err(|why| {
            anyhow::anyhow!(
                "refusing the plugin store {}: {why}; the lock's digests are only as good as \
                 the store's owner",
                dir.display()
            )
        })?;
        Ok(Store { dir })
    }

    /// The store `[sources]` names, or the default one.
    pub fn open_configured(settings: &SourcesConfig) -> Result<Store> {
        let dir = match &settings.store_dir {
            Some(dir) => dir.clone(),
            None => Store::default_dir()?,
        };
        Store::open(&dir)
    }

    /// `$XDG_DATA_HOME/palisade/store`, else `~/.local/share/palisade/store`.
    pub fn default_dir() -> Result<PathBuf> {
        let base = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/share"))
            })
            .context(
                "no place for the plugin store: neither XDG_DATA_HOME nor HOME is set; give \
                 [sources] store_dir, a directory only you can write",
            )?;
        Ok(base.join("palisade").join("store"))
    }

    /// The directory (canonical).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the component with this SHA-256 is kept.
    pub fn path(&self, sha256: &[u8; 32]) -> PathBuf {
        self.dir
            .join(format!("sha256-{}.wasm", hex::encode(sha256)))
    }

    /// Whether the store holds the component with this SHA-256, and it is intact.
    pub fn contains(&self, sha256: &[u8; 32]) -> bool {
        let Ok(mut file) = std::fs::File::open(self.path(sha256)) else {
            return false;
        };
        let mut hasher = sha2::Sha256::new();
        std::io::copy(&mut file, &mut hasher).is_ok()
            && <[u8; 32]>::from(hasher.finalize()) == *sha256
    }

    /// Keeps `wasm` (mode 0600, written whole through a rename) and returns its SHA-256.
    pub fn put(&self, wasm: &[u8]) -> Result<[u8; 32]> {
        let sha256: [u8; 32] = sha2::Sha256::digest(wasm).into();
        let path = self.path(&sha256);
        private_dir::write(&path, wasm).with_context(|| format!("writing {}", path.display()))?;
        Ok(sha256)
    }

    /// Keeps the signatures found for an artifact (its manifest digest, or its SHA-256 in hex),
    /// so each load verifies them again without the network.
    pub fn put_signatures(&self, artifact: &str, found: &Signatures) -> Result<()> {
        let text = serde_json::to_string(found).context("serializing signatures")?;
        let path = self.signatures_path(artifact);
        private_dir::write(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))
    }

    /// The signatures kept for an artifact, if any. Whoever could change them still cannot
    /// forge one: they are verified at every load.
    pub fn signatures(&self, artifact: &str) -> Option<Signatures> {
        let text = std::fs::read_to_string(self.signatures_path(artifact)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn signatures_path(&self, artifact: &str) -> PathBuf {
        let name: String = artifact
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.dir.join(format!("signatures-{name}.json"))
    }

    /// Whether a plugin that can see `path` could reach the store.
    pub fn overlaps(&self, path: &Path) -> bool {
        private_dir::overlaps(&self.dir, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("palisade-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn put_keeps_the_file_under_its_digest_privately() {
        let store = Store::open(&tempdir("put")).unwrap();
        let sha = store.put(b"\0asm component").unwrap();
        assert!(store.contains(&sha));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(store.dir()), 0o700);
            assert_eq!(mode(&store.path(&sha)), 0o600);
        }
        // A changed file no longer counts as held.
        std::fs::write(store.path(&sha), b"\0asm other").unwrap();
        assert!(!store.contains(&sha));
        assert!(store.overlaps(store.dir().parent().unwrap()));
    }

    #[cfg(unix)]
    #[test]
    fn a_store_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempdir("shared");
        Store::open(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = Store::open(&dir).unwrap_err().to_string();
        assert!(err.contains("other users can write it"), "{err}");
    }
}
