//! The on-disk cache of compiled components.
//!
//! Loading an entry maps native code from it into the server, so whoever can write the cache can
//! run code as the server. The cache is therefore held to the rules ssh holds its keys to: the
//! directory and every entry belong to the user running the server and nobody else can write
//! them, nor any directory above; no plugin grant may reach it; and every entry has the BLAKE3
//! digest of its compiled code recorded beside it, checked before use, so a changed entry is
//! compiled again, never run. (BLAKE3 rather than SHA-256: every start hashes every entry, tens of
//! MiB with many plugins, and BLAKE3 does that several times faster.)

use parking_lot::Mutex;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context as _, Result};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::compile_progress::{self, ProgressSink};
use crate::{Cause, private_dir};

/// File name extensions: the compiled code, and its digest (hex) beside it.
const EXTENSION: &str = "cwasm";
const DIGEST_EXTENSION: &str = "cwasm.blake3";

/// Compiled components on disk, keyed by the component's SHA-256 and the engine's compatibility
/// hash, so a changed file or a changed engine (version, settings, CPU features) recompiles.
#[derive(Clone)]
pub struct CompileCache {
    /// Canonical: the path grants are compared against.
    dir: PathBuf,
    /// Told how far along each compile is (a log line every few seconds by default).
    progress: ProgressSink,
    /// Held while compiling: one compile at a time in this process. Each already spreads its
    /// functions over every core, and two at once share the cores by chance (a small plugin
    /// then waits as long as the large one beside it); one at a time, in the order asked (the
    /// smallest first at start), each is ready as soon as it can be.
    compiling: Arc<Mutex<()>>,
    /// Loads served from the cache, and compiles, for the server's metrics.
    counts: CacheCounts,
}

/// How many loads the cache served (hits) and how many compiled (misses); shared by clones.
#[derive(Clone, Debug, Default)]
pub struct CacheCounts(Arc<(AtomicU64, AtomicU64)>);

impl CacheCounts {
    /// (hits, misses) so far.
    pub fn get(&self) -> (u64, u64) {
        (
            self.0.0.load(Ordering::Relaxed),
            self.0.1.load(Ordering::Relaxed),
        )
    }
}

impl std::fmt::Debug for CompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCache")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Why the compile cache cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The directory does not exist and cannot be created.
    #[error("creating cache directory {}", dir.display())]
    Create {
        /// The cache directory.
        dir: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// The path cannot be resolved to a canonical one.
    #[error("compile cache {}: cannot resolve the path", dir.display())]
    Resolve {
        /// The cache directory.
        dir: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// Someone besides this user could write the directory, an entry, or a directory above.
    #[error(
        "refusing the compile cache {}: loading a compiled component runs native code from it",
        dir.display()
    )]
    NotPrivate {
        /// The cache directory.
        dir: PathBuf,
        /// What is writable, by whom.
        source: Cause,
    },
    /// Neither `XDG_CACHE_HOME` nor `HOME` is set, and no directory was given.
    #[error(
        "no place for the compile cache: neither XDG_CACHE_HOME nor HOME is set; give \
         --cache-dir DIR (or [server] cache_dir), a directory only you can write"
    )]
    NoPlace,
}

impl CompileCache {
    /// Opens the cache at `dir`, creating it (mode 0700) when missing. Refuses a directory that
    /// another user could write, or that holds an entry another user could have written.
    pub fn open(dir: &Path) -> Result<CompileCache, CacheError> {
        private_dir::create(dir).map_err(|source| CacheError::Create {
            dir: dir.to_path_buf(),
            source,
        })?;
        let dir = std::fs::canonicalize(dir).map_err(|source| CacheError::Resolve {
            dir: dir.to_path_buf(),
            source,
        })?;
        private_dir::check(&dir).map_err(|source| CacheError::NotPrivate {
            dir: dir.clone(),
            source,
        })?;
        Ok(CompileCache {
            dir,
            progress: compile_progress::log_progress(),
            compiling: Arc::default(),
            counts: CacheCounts::default(),
        })
    }

    /// `$XDG_CACHE_HOME/palisade/components`, else `~/.cache/palisade/components`. Never a shared
    /// temporary directory: without either variable the operator must name one.
    pub fn default_dir() -> Result<PathBuf, CacheError> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .ok_or(CacheError::NoPlace)?;
        Ok(base.join("palisade").join("components"))
    }

    /// The cache, telling `progress` how far along each compile is instead of logging it.
    pub fn with_progress(self, progress: ProgressSink) -> CompileCache {
        CompileCache { progress, ..self }
    }

    /// The cache directory (canonical).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether a plugin that can see `path` could reach the cache: `path` holds the cache or lies
    /// inside it.
    pub fn overlaps(&self, path: &Path) -> bool {
        private_dir::overlaps(&self.dir, path)
    }

    /// Loads served from the cache, and compiles, so far (and from now on).
    pub fn counts(&self) -> CacheCounts {
        self.counts.clone()
    }

    /// Whether the component with SHA-256 `sha256` was compiled for `engine` before (and the
    /// entry is intact).
    pub fn contains(&self, engine: &Engine, sha256: &[u8; 32]) -> bool {
        matches!(verify_entry(&self.path(engine, sha256)), Ok(true))
    }

    fn path(&self, engine: &Engine, sha256: &[u8; 32]) -> PathBuf {
        self.dir
            .join(format!("{}.{EXTENSION}", cache_key(engine, sha256)))
    }

    /// Loads the component in `wasm` (whose SHA-256 is `sha256`: the caller has it already, and
    /// hashing a large component again costs real time at start-up), from the cache when it was
    /// compiled before and the entry is intact.
    pub fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        sha256: &[u8; 32],
        plugin: &str,
    ) -> Result<Component> {
        let path = self.path(engine, sha256);
        if let Some(component) = map_entry(engine, &path, plugin) {
            tracing::info!(plugin, path = %path.display(), "loaded compiled component from cache");
            self.counts.0.0.fetch_add(1, Ordering::Relaxed);
            return Ok(component);
        }
        self.counts.0.1.fetch_add(1, Ordering::Relaxed);
        let _compiling = self.compiling.lock();
        tracing::info!(plugin, "compiling component");
        let component = compile_progress::compile_reporting(
            &self.dir,
            plugin,
            wasm.len(),
            &self.progress,
            || Component::new(engine, wasm),
        )
        .map_err(anyhow::Error::from)?;
        if let Err(e) = self.store(&path, &component) {
            tracing::warn!(plugin, dir = %self.dir.display(), "cannot cache the compiled component: {e:#}");
            return Ok(component);
        }
        // Served from the entry just written rather than from the compiler's output: mapped
        // code is the page cache's (the kernel can take it back), where the compiler's stays
        // in the server's own memory for as long as the plugin is loaded (measured: 228 MiB
        // anonymous with the three examples compiled at start, 6 MiB when mapped).
        Ok(map_entry(engine, &path, plugin).unwrap_or(component))
    }

    /// Writes the entry, then its digest (each written then renamed, so a concurrent start never
    /// reads half a file; one that reads a new entry with an old digest compiles again).
    fn store(&self, path: &Path, component: &Component) -> Result<()> {
        let artifact = component.serialize().map_err(anyhow::Error::from)?;
        let digest = blake3::hash(&artifact).to_hex();
        write_private(path, &artifact)?;
        write_private(&digest_path(path), digest.as_bytes())
    }
}

/// The component in the cache entry at `path`, mapped, when the entry is there and intact.
fn map_entry(engine: &Engine, path: &Path, plugin: &str) -> Option<Component> {
    match verify_entry(path) {
        Ok(true) => {}
        Ok(false) => return None,
        Err(why) => {
            tracing::warn!(plugin, path = %path.display(), "cache entry refused, compiling again: {why:#}");
            return None;
        }
    }
    // SAFETY: the file is byte for byte what `Component::serialize` wrote (its digest was
    // checked just now), under a key that includes the engine's compatibility hash, in a
    // directory only this user can write (checked at open). Mapping it rather than reading it
    // keeps its pages shared with the page cache.
    #[allow(unsafe_code)]
    let loaded = unsafe { Component::deserialize_file(engine, path) };
    loaded
        .inspect_err(|e| {
            tracing::warn!(plugin, path = %path.display(), "ignoring unusable cache entry: {e}")
        })
        .ok()
}

/// Writes `bytes` to `path` (mode 0600) whole, through a temporary file and a rename.
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    private_dir::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn digest_path(entry: &Path) -> PathBuf {
    entry.with_extension(DIGEST_EXTENSION)
}

/// Whether the entry at `path` exists with the digest recorded beside it: `Ok(false)` when there
/// is no entry, an error when it is not what was written.
fn verify_entry(path: &Path) -> Result<bool> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).context("cannot read it"),
    };
    let recorded = match std::fs::read_to_string(digest_path(path)) {
        Ok(recorded) => recorded,
        // An entry without its digest (one from before digests, or cut short): compile again.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            anyhow::bail!("no digest is recorded beside it")
        }
        Err(e) => return Err(e).context("cannot read its digest"),
    };
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(&mut file).context("cannot read it")?;
    anyhow::ensure!(
        hasher.finalize().to_hex().as_str() == recorded.trim(),
        "its digest is not the one recorded when it was written: it was changed"
    );
    Ok(true)
}

/// The component's SHA-256 and the engine's compatibility hash.
fn cache_key(engine: &Engine, sha256: &[u8; 32]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{}-{:016x}", hex::encode(sha256), hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("palisade-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[cfg(unix)]
    fn chmod(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_new_cache_directory_is_private() {
        let dir = tempdir("new").join("a/b");
        let cache = CompileCache::open(&dir).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(cache.dir()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        assert!(cache.overlaps(dir.parent().unwrap()));
        assert!(cache.overlaps(&dir.join("sub")));
        assert!(!cache.overlaps(&std::env::temp_dir().join("elsewhere")));
    }

    /// Why `dir` is refused as a cache, with every cause, as the server prints it.
    #[cfg(unix)]
    fn refusal(dir: &Path) -> String {
        let err = CompileCache::open(dir).unwrap_err();
        assert!(matches!(err, CacheError::NotPrivate { .. }), "{err:?}");
        format!("{:#}", anyhow::Error::from(err))
    }

    #[cfg(unix)]
    #[test]
    fn writable_by_others_is_refused() {
        let dir = tempdir("shared");
        std::fs::create_dir_all(&dir).unwrap();
        chmod(&dir, 0o777);
        let err = refusal(&dir);
        assert!(err.contains("other users can write it"), "{err}");

        chmod(&dir, 0o700);
        let entry = dir.join("x.cwasm");
        std::fs::write(&entry, b"x").unwrap();
        chmod(&entry, 0o666);
        let err = refusal(&dir);
        assert!(err.contains("can be changed by another user"), "{err}");

        chmod(&entry, 0o600);
        std::os::unix::fs::symlink("/etc/hostname", dir.join("link")).unwrap();
        let err = refusal(&dir);
        assert!(err.contains("symbolic link"), "{err}");
        std::fs::remove_file(dir.join("link")).unwrap();
        CompileCache::open(&dir).unwrap();
    }

    #[test]
    fn a_changed_entry_is_refused() {
        let dir = tempdir("entry");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("e.cwasm");
        assert!(!verify_entry(&path).unwrap(), "no entry");
        write_private(&path, b"artifact").unwrap();
        assert!(verify_entry(&path).is_err(), "no digest beside it");
        write_private(
            &digest_path(&path),
            blake3::hash(b"artifact").to_hex().as_bytes(),
        )
        .unwrap();
        assert!(verify_entry(&path).unwrap());
        std::fs::write(&path, b"artifacT").unwrap();
        assert!(verify_entry(&path).is_err());
        std::fs::write(&path, b"\x7fELF whatever").unwrap();
        assert!(verify_entry(&path).is_err());
    }
}
