//! The wasmtime engine shared by every plugin, its epoch clock, and the on-disk cache of compiled
//! components.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

/// How often the epoch advances. A running plugin yields to the scheduler and has its deadline
/// checked once per tick, so this bounds both how late a deadline fires and how long a spinning
/// plugin can hold a worker thread.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Wasm stack a call may use before it traps with a stack overflow.
const MAX_WASM_STACK: usize = 1 << 20;

/// Builds the engine every plugin runs in: fuel metering and epoch interruption always on.
pub fn new_engine() -> Result<Engine> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK)
        // The async stack must hold the wasm stack plus the host frames below it.
        .async_stack_size(MAX_WASM_STACK + (1 << 20));
    Engine::new(&config)
        .map_err(anyhow::Error::from)
        .context("cannot create the wasmtime engine")
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped.
pub struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub fn start(engine: &Engine) -> Result<EpochTicker> {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.weak();
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("palisade-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    match engine.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => break,
                    }
                }
            })
            .context("cannot start the epoch thread")?;
        Ok(EpochTicker { stop })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Compiled components on disk, keyed by the component's SHA-256 and the engine's compatibility
/// hash, so a changed file or a changed engine (version, settings, CPU features) recompiles.
///
/// The directory must be writable only by the operator: loading a cached artifact runs native code
/// from it. It is created with mode 0700.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    pub fn new(dir: PathBuf) -> CompileCache {
        CompileCache { dir }
    }

    /// `$XDG_CACHE_HOME/palisade/components`, else `~/.cache/palisade/components`.
    pub fn default_dir() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("palisade").join("components"))
    }

    /// Whether `wasm` was compiled for `engine` before.
    pub fn contains(&self, engine: &Engine, wasm: &[u8]) -> bool {
        self.path(engine, wasm).is_file()
    }

    fn path(&self, engine: &Engine, wasm: &[u8]) -> PathBuf {
        self.dir.join(format!("{}.cwasm", cache_key(engine, wasm)))
    }

    /// Loads the component in `wasm`, from the cache when it was compiled before.
    pub fn load(&self, engine: &Engine, wasm: &[u8], plugin: &str) -> Result<Component> {
        let path = self.path(engine, wasm);
        if path.is_file() {
            // SAFETY: the file was written by `Component::serialize` under a key that includes the
            // engine's compatibility hash, in a directory only the operator can write.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => {
                    tracing::info!(plugin, path = %path.display(), "loaded compiled component from cache");
                    return Ok(component);
                }
                Err(e) => {
                    tracing::warn!(plugin, path = %path.display(), "ignoring unusable cache entry: {e}")
                }
            }
        }
        tracing::info!(plugin, "compiling component");
        let component = Component::new(engine, wasm).map_err(anyhow::Error::from)?;
        if let Err(e) = self.store(&path, &component) {
            tracing::warn!(plugin, dir = %self.dir.display(), "cannot cache the compiled component: {e:#}");
        }
        Ok(component)
    }

    fn store(&self, path: &Path, component: &Component) -> Result<()> {
        create_private_dir(&self.dir)?;
        let bytes = component.serialize().map_err(anyhow::Error::from)?;
        // Write then rename, so a concurrent start never reads half a file.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
        Ok(())
    }
}

fn cache_key(engine: &Engine, wasm: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let mut digest = Sha256::new();
    digest.update(wasm);
    digest.update(hasher.finish().to_le_bytes());
    hex::encode(digest.finalize())
}

fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .with_context(|| format!("creating cache directory {}", dir.display()))
}
