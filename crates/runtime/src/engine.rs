//! The wasmtime engine shared by every plugin and its epoch clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances. A running plugin yields to the scheduler and has its deadline
/// checked once per tick, so this bounds both how late a deadline fires and how long a spinning
/// plugin can hold a worker thread.
pub const EPOCH_TICK: Duration = Duration::from_millis(2);

/// Wasm stack a call may use before it traps with a stack overflow.
const MAX_WASM_STACK: usize = 1 << 20;

/// Instances that can be alive at once, across all plugins: the size of the instance pool. A call
/// waits for a free slot (`Runtime::instance_slots`) rather than fail.
pub const INSTANCE_SLOTS: u32 = 128;

/// Linear memories and tables one component instance may have (toolchains link a component's
/// modules to one shared memory; componentize-py's CPython has about a dozen tables).
const MEMORIES_PER_COMPONENT: u32 = 2;
const TABLES_PER_COMPONENT: u32 = 32;
/// Core instances one component instance may have: toolchains split components into several
/// core modules (CPython under componentize-py has about a dozen, plus adapters).
const CORE_INSTANCES_PER_COMPONENT: u32 = 64;

/// Linear memory (per slot) reset with `memset` rather than `madvise` when an instance ends: the
/// pages a call touched stay mapped, so the next instance in the slot takes no page faults on
/// them. Either way the next instance sees the memory exactly as the module's image defines it.
/// Up to this much stays resident per warm slot, which bounds what idle slots cost in RSS.
const MEMORY_KEEP_RESIDENT: usize = 1 << 20;

/// Whether wasm code counts fuel. Servers always do; only `palisade-bench` builds an unmetered
/// engine, to measure what metering costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metering {
    /// Every instruction costs fuel; a call stops when its fuel runs out.
    Fuel,
    /// No fuel counted: only the benchmark's baseline.
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
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config()));
    Engine::new(&config)
        .map_err(anyhow::Error::from)
        .context("cannot create the wasmtime engine")
}

/// The instance pool. Every total holds every slot at the per-component maximum (core
/// instances, memories, tables), so only the slots (`Runtime::instance_slots`, which calls wait
/// for) can run out: a component at every maximum, however many calls it runs, never empties
/// the pool for other plugins. A component over a maximum fails to load instead. (The totals of
/// core instances are counts, not reservations: instances are allocated on demand.)
fn pool_config() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(INSTANCE_SLOTS)
        .total_core_instances(INSTANCE_SLOTS * CORE_INSTANCES_PER_COMPONENT)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT)
        .total_memories(INSTANCE_SLOTS * MEMORIES_PER_COMPONENT)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .total_tables(INSTANCE_SLOTS * TABLES_PER_COMPONENT)
        .max_tables_per_component(TABLES_PER_COMPONENT)
        .max_tables_per_module(4)
        .table_elements(100_000)
        .total_stacks(INSTANCE_SLOTS)
        .linear_memory_keep_resident(MEMORY_KEEP_RESIDENT)
        .table_keep_resident(1 << 16)
        // Where the kernel can tell (Linux 6.7+), reset only the pages a call dirtied.
        .pagemap_scan(Enabled::Auto);
    pool
}

/// Advances the engine's epoch every `EPOCH_TICK` (2 ms) until dropped.
pub struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    /// Starts ticking `engine`'s epoch, which bounds every call's wall-clock time.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_holds_every_slot_at_every_per_component_maximum() {
        let pool = pool_config();
        assert!(pool.get_total_core_instances() >= INSTANCE_SLOTS * CORE_INSTANCES_PER_COMPONENT);
        assert!(pool.get_total_memories() >= INSTANCE_SLOTS * MEMORIES_PER_COMPONENT);
        assert!(pool.get_total_tables() >= INSTANCE_SLOTS * TABLES_PER_COMPONENT);
        assert!(pool.get_total_stacks() >= INSTANCE_SLOTS);
        assert_eq!(pool.get_total_component_instances(), INSTANCE_SLOTS);
    }
}
