//! An instance with its store, and how one is made: a store in the plugin's sandbox on a slot of
//! the instance pool, the component instantiated in it under the plugin's limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::OwnedSemaphorePermit;
use wasmtime::component::{Instance, InstancePre};
use wasmtime::{Store, UpdateDeadline};

use crate::call::CallContext;
use crate::engine::Metering;
use crate::error::CallError;
use crate::grant_ask::CallClock;
use crate::keyvalue::KeyValueStore;
use crate::limits::{Budget, MemoryLimiter};
use crate::sandbox::{Grants, OutputCapture, Root, wasi_context};
use crate::spec::{Limits, PluginSpec};
use crate::store::{Sandbox, StoreState};

/// An instance with its store, between calls or during one.
pub(crate) struct LiveInstance {
    // Dropped in this order: the store (which returns the instance's memory to its pool slot)
    // before the permit that lets another call take the slot.
    pub(crate) store: Store<StoreState>,
    /// `None` until the component is instantiated in the store.
    pub(crate) instance: Option<Instance>,
    pub(crate) stdout: OutputCapture,
    pub(crate) stderr: OutputCapture,
    /// The roots its preopens were made from.
    pub(crate) roots: Arc<Vec<Root>>,
    /// Calls it has served.
    pub(crate) calls: u32,
    /// Fuel its instantiation burned before a call took it (built ahead, `ready.rs`): charged
    /// to that call.
    pub(crate) build_fuel: u64,
    pub(crate) _slot: OwnedSemaphorePermit,
}

/// Linear memory past which an ended instance is dropped on the reaper thread rather than where
/// its call ended: resetting its pool slot returns what it touched to the kernel, milliseconds
/// for a call that built a 100 MiB answer, which an async worker would take from every other
/// request. Below it, the reset is cheaper than the hand-over.
const RETIRE_INLINE_BYTES: u64 = 8 << 20;

impl LiveInstance {
    /// Ends this instance: dropped here when small, else on the reaper thread (one, so slot
    /// resets take at most one core; its slot comes free once reset, which holds new calls back
    /// while it falls behind).
    pub(crate) fn retire(self) {
        if self.store.data().memory_bytes() <= RETIRE_INLINE_BYTES {
            return;
        }
        static REAPER: std::sync::OnceLock<Option<std::sync::mpsc::Sender<LiveInstance>>> =
            std::sync::OnceLock::new();
        let reaper = REAPER.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<LiveInstance>();
            std::thread::Builder::new()
                .name("palisade-reaper".into())
                .spawn(move || rx.into_iter().for_each(drop))
                .ok()
                .map(|_| tx)
        });
        // Without the thread (it could not start), dropped here as before.
        if let Some(reaper) = reaper
            && let Err(returned) = reaper.send(self)
        {
            drop(returned.0);
        }
    }
}

/// What making an instance of one loaded plugin takes: its linked component, its sandbox and
/// its limits. Shared by its calls and by the builder that makes instances ahead (`ready.rs`).
pub(crate) struct InstanceFactory {
    /// The plugin's name, in logs, errors and limits.
    pub(crate) name: Arc<str>,
    pub(crate) limits: Limits,
    /// The plugin's `ask = true`.
    pub(crate) ask: bool,
    /// Its grants, resolved.
    pub(crate) grants: Arc<Grants>,
    keyvalue: Option<Arc<KeyValueStore>>,
    /// Bytes of its resource templates (known once it has listed them).
    template_bytes: AtomicU64,
    pub(crate) metering: Metering,
    pub(crate) pre: InstancePre<StoreState>,
}

impl InstanceFactory {
    pub(crate) fn new(
        spec: &PluginSpec,
        grants: Arc<Grants>,
        keyvalue: Option<Arc<KeyValueStore>>,
        metering: Metering,
        pre: InstancePre<StoreState>,
    ) -> InstanceFactory {
        InstanceFactory {
            name: spec.name.as_str().into(),
            limits: spec.limits,
            ask: spec.ask,
            grants,
            keyvalue,
            template_bytes: AtomicU64::new(0),
            metering,
            pre,
        }
    }

    /// Bytes of the plugin's resource templates: what matching one of its resource updates
    /// costs per URI byte.
    pub(crate) fn template_bytes(&self) -> u64 {
        self.template_bytes.load(Ordering::Relaxed)
    }

    /// Sets [`template_bytes`](Self::template_bytes) once the plugin has listed its templates.
    pub(crate) fn set_template_bytes(&self, bytes: u64) {
        self.template_bytes.store(bytes, Ordering::Relaxed);
    }

    /// A store for `call` in this plugin's sandbox, on the pool slot `slot`, under `budget`;
    /// the component is not instantiated in it yet.
    pub(crate) fn store(
        &self,
        call: CallContext,
        clock: Arc<CallClock>,
        slot: OwnedSemaphorePermit,
        budget: Budget,
    ) -> Result<LiveInstance, CallError> {
        let limits = self.limits;
        let redactor = &self.grants.redactor;
        let stdout = OutputCapture::new(self.name.clone(), "stdout", redactor.clone());
        let stderr = OutputCapture::new(self.name.clone(), "stderr", redactor.clone());
        let roots = call.roots.clone();
        let wasi = wasi_context(&self.grants, &roots, stdout.clone(), stderr.clone())
            .map_err(CallError::Host)?;
        let sandbox = Sandbox {
            plugin: self.name.clone(),
            grants: self.grants.clone(),
            wasi,
            limiter: MemoryLimiter::new(&limits),
            output_limit: limits.output_bytes,
            questions_limit: limits.questions_per_call,
            template_bytes: self.template_bytes(),
            keyvalue: self.keyvalue.clone(),
        };
        let mut store = Store::new(
            self.pre.engine(),
            StoreState::new(sandbox, call, self.ask, clock),
        );
        store.limiter(|state| &mut state.limiter);
        store.set_hostcall_fuel(super::copy_bound::hostcall_fuel(&limits));
        store.epoch_deadline_callback(move |store| {
            if Instant::now() >= store.data().asks.clock().deadline() {
                Err(wasmtime::Error::new(budget.out_of_time()))
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        Ok(LiveInstance {
            store,
            instance: None,
            stdout,
            stderr,
            roots,
            calls: 0,
            build_fuel: 0,
            _slot: slot,
        })
    }

    /// Instantiates the component in `live`'s store, if it is not yet, with the fuel and under
    /// the deadline the store has.
    pub(crate) async fn instantiate(&self, live: &mut LiveInstance) -> wasmtime::Result<Instance> {
        if let Some(instance) = live.instance {
            return Ok(instance);
        }
        let instance = self.pre.instantiate_async(&mut live.store).await?;
        Ok(*live.instance.insert(instance))
    }

    /// Whether the WASI context of an instance depends on the client's roots (the plugin is
    /// granted them): only then must an instance built ahead have been built for the same ones.
    pub(crate) fn sees_roots(&self) -> bool {
        self.grants.roots != crate::spec::RootsAccess::None
    }
}

/// Runs `run` until it ends or `clock`'s deadline passes (`None`); the deadline may move while
/// it runs (see [`CallClock`]).
pub(crate) async fn until_deadline<F: Future>(run: F, clock: &CallClock) -> Option<F::Output> {
    let mut run = std::pin::pin!(run);
    loop {
        let deadline = clock.deadline();
        if let Ok(done) = tokio::time::timeout_at(deadline.into(), &mut run).await {
            return Some(done);
        }
        if clock.deadline() <= deadline {
            return None;
        }
    }
}
