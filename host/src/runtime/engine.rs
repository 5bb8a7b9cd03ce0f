//! The wasmtime engine shared by every plugin, its epoch clock, and the on-disk cache of compiled
//! components.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use wasmtime::component::Component;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances. A running plugin yields to the scheduler and has its deadline
/// checked once per tick, so this bounds both how late a deadline fires and how long a spinning
/// plugin can hold a worker thread.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Wasm stack a call may use before it traps with a stack overflow.
const MAX_WASM_STACK: usize = 1 << 20;

/// Instances that can be alive at once, across all plugins: the size of the instance pool. A call
/// waits for a free slot (see [`super::Runtime::instance_slots`]) rather than fail.
pub const INSTANCE_SLOTS: u32 = 128;

/// Linear memory (per slot) reset with `memset` rather than `madvise` when an instance ends: the
/// pages a call touched stay mapped, so the next instance in the slot takes no page faults on
/// them. Either way the next instance sees the memory exactly as the module's image defines it.
/// Up to this much stays resident per warm slot, which bounds what idle slots cost in RSS.
const MEMORY_KEEP_RESIDENT: usize = 1 << 20;

/// Whether wasm code counts fuel. Servers always do; only `palisade-bench` builds an unmetered
/// engine, to measure what metering costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metering {
    Fuel,
    Off,
}

/// Builds the engine every plugin runs in: fuel metering and epoch interruption always on.
pub fn new_engine() -> Result<Engine> {
    engine_with(Metering::Fuel)
}

/// The engine, with `metering`.
///
/// Instances come from a pool of pre-reserved slots rather than fresh `mmap`s: creating and
/// dropping an instance for every call (the isolation every call gets) then costs no system
/// calls to map memory, stacks and tables, and no TLB shootdown to unmap them. The pool only
/// reserves address space; a slot's memory is reset before it is used again, and every
/// instance still starts from its module's pristine image.
pub fn engine_with(metering: Metering) -> Result<Engine> {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(INSTANCE_SLOTS)
        // Toolchains split components into several core modules: CPython under
        // componentize-py has about a dozen, each with its own table.
        .total_core_instances(INSTANCE_SLOTS * 32)
        .max_core_instances_per_component(64)
        .total_memories(INSTANCE_SLOTS * 2)
        .total_tables(INSTANCE_SLOTS * 32)
        .max_tables_per_module(4)
        .table_elements(100_000)
        .total_stacks(INSTANCE_SLOTS)
        .linear_memory_keep_resident(MEMORY_KEEP_RESIDENT)
        .table_keep_resident(1 << 16)
        // Where the kernel can tell (Linux 6.7+), reset only the pages a call dirtied.
        .pagemap_scan(Enabled::Auto);
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(metering == Metering::Fuel)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK)
        // The map from machine code to wasm offsets is a tenth of every compiled plugin, mapped
        // (and counted in the server's RSS) for each one loaded; a trap's backtrace still names
        // the functions without it.
        .generate_address_map(false)
        // The async stack must hold the wasm stack plus the host frames below it.
        .async_stack_size(MAX_WASM_STACK + (1 << 20))
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
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

    /// Whether the component with SHA-256 `sha256` was compiled for `engine` before.
    pub fn contains(&self, engine: &Engine, sha256: &[u8; 32]) -> bool {
        self.path(engine, sha256).is_file()
    }

    fn path(&self, engine: &Engine, sha256: &[u8; 32]) -> PathBuf {
        self.dir
            .join(format!("{}.cwasm", cache_key(engine, sha256)))
    }

    /// Loads the component in `wasm` (whose SHA-256 is `sha256`: the caller has it already, and
    /// hashing a large component again costs real time at start-up), from the cache when it was
    /// compiled before.
    pub fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        sha256: &[u8; 32],
        plugin: &str,
    ) -> Result<Component> {
        let path = self.path(engine, sha256);
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

/// The component's SHA-256 and the engine's compatibility hash.
fn cache_key(engine: &Engine, sha256: &[u8; 32]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{}-{:016x}", hex::encode(sha256), hasher.finish())
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
