//! The run loop: one call into an instance of a plugin under every one of its limits (the gate,
//! a slot of the instance pool, fuel, the deadline, memory, the hostcall fuel), then the
//! instance retired or, with `reuse = "per-client"`, kept for the client's next call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use wasmtime::component::{Instance, InstancePre};
use wasmtime::{Store, UpdateDeadline};

use crate::call::CallContext;
use crate::engine::Metering;
use crate::error::{CallError, describe_failure, limit_hit};
use crate::gate::Gate;
use crate::grant_ask::CallClock;
use crate::keyvalue::KeyValueStore;
use crate::limits::{Budget, MemoryLimiter};
use crate::reuse::{KeptInstances, LiveInstance};
use crate::runtime::Runtime;
use crate::sandbox::{Grants, OutputCapture, wasi_context};
use crate::spec::{Limits, PluginSpec, Reuse};
use crate::store::{Sandbox, StoreState};

/// The next [`Runner`]'s id.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What running a call of one loaded plugin takes: its linked component, its sandbox and limits,
/// and the shared pool and gates.
pub(crate) struct Runner {
    /// The plugin's name, in logs, errors and limits.
    pub(crate) name: Arc<str>,
    limits: Limits,
    reuse: Reuse,
    /// The plugin's `ask = true`.
    ask: bool,
    /// Its grants, resolved.
    pub(crate) grants: Arc<Grants>,
    keyvalue: Option<Arc<KeyValueStore>>,
    /// Bytes of its resource templates (known once it has listed them).
    template_bytes: u64,
    gate: Arc<Gate>,
    instance_slots: Arc<Semaphore>,
    metering: Metering,
    /// Instances kept between calls, shared by every plugin.
    kept: Arc<KeptInstances>,
    /// Tells this loaded plugin's kept instances from those of an earlier version.
    id: u64,
    pub(crate) pre: InstancePre<StoreState>,
}

impl Runner {
    /// The runner of the plugin of `spec`, linked as `pre`, with `grants`.
    pub(crate) fn new(
        runtime: &Runtime,
        spec: &PluginSpec,
        grants: Arc<Grants>,
        keyvalue: Option<Arc<KeyValueStore>>,
        pre: InstancePre<StoreState>,
    ) -> Runner {
        let name: Arc<str> = spec.name.as_str().into();
        Runner {
            gate: runtime.gates.for_plugin(&name, &spec.limits),
            name,
            limits: spec.limits,
            reuse: spec.reuse,
            ask: spec.ask,
            grants,
            keyvalue,
            template_bytes: 0,
            instance_slots: runtime.instance_slots.clone(),
            metering: runtime.metering,
            kept: runtime.kept.clone(),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            pre,
        }
    }

    /// Bytes of the plugin's resource templates: what matching one of its resource updates
    /// costs per URI byte.
    pub(crate) fn template_bytes(&self) -> u64 {
        self.template_bytes
    }

    /// Sets [`template_bytes`](Runner::template_bytes) once the plugin has listed its templates.
    pub(crate) fn set_template_bytes(&mut self, bytes: u64) {
        self.template_bytes = bytes;
    }

    /// Runs `f` against an instance under every limit of the plugin: a fresh one, or with
    /// `reuse = "per-client"` the one kept for this client.
    pub(crate) async fn run<R>(
        &self,
        call: CallContext,
        f: impl AsyncFnOnce(&mut Store<StoreState>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        let limits = self.limits;
        let budget = Budget::of(&limits, call.task);
        let entered = Instant::now();
        // Clients' calls pass the plugin's gate; the host's own (listing at load) do not.
        let admission = match &call.caller {
            Some(client) => Some(
                self.gate
                    .admit(client, call.task)
                    .await
                    .map_err(|limit| CallError::Limit(self.name.clone(), limit))?,
            ),
            None => None,
        };
        let deadline = Instant::now() + Duration::from_millis(budget.timeout_ms);
        let time_limit = || CallError::Limit(self.name.clone(), budget.out_of_time());
        let stats = call.stats.clone();
        let clock = Arc::new(CallClock::new(deadline));
        // A task runs in an instance of its own: its store carries the task's limits.
        let reuse_for = match self.reuse {
            Reuse::PerClient { .. } if !call.task => call.reuse_key.clone(),
            _ => None,
        };
        let kept = reuse_for
            .as_deref()
            .and_then(|client| self.kept.take(self.id, client, &call.roots));
        let reused = kept.is_some();
        let mut live = match kept {
            Some(mut live) => {
                live.store
                    .data_mut()
                    .begin_call(call, self.ask, clock.clone());
                live
            }
            None => {
                let slot = self.instance_slot(deadline).await?.ok_or_else(time_limit)?;
                self.new_store(call, clock.clone(), slot, budget)?
            }
        };
        stats.instance_wait_us.store(
            entered.elapsed().as_micros().min(u64::MAX as u128) as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        stats
            .reused_instance
            .store(reused, std::sync::atomic::Ordering::Relaxed);
        let store = &mut live.store;
        if self.metering == Metering::Fuel {
            store
                .set_fuel(budget.fuel)
                .map_err(|e| CallError::Host(e.into()))?;
        }
        // Every epoch tick: stop if past the deadline, else yield so other calls (and a
        // cancellation, which drops this future) get their turn.
        store.set_epoch_deadline(1);

        let started = Instant::now();
        let run = async {
            let instance = match live.instance {
                Some(instance) => instance,
                None => *live
                    .instance
                    .insert(self.pre.instantiate_async(&mut live.store).await?),
            };
            f(&mut live.store, &instance).await
        };
        // The epoch check only fires while wasm runs; the timeout bounds time spent in host calls
        // too. It is armed only for a call that does not finish in its first poll: most finish
        // there, and a new timer that is the runtime's earliest makes tokio wake the thread
        // parked on its timer driver, a context switch on every call.
        let outcome = {
            let mut run = std::pin::pin!(run);
            match (&mut run).now_or_never() {
                Some(done) => Some(done),
                None => until_deadline(run, &clock).await,
            }
        };
        live.stdout.finish();
        let stderr_tail = live.stderr.finish();
        let fuel_used = match self.metering {
            Metering::Fuel => budget
                .fuel
                .saturating_sub(live.store.get_fuel().unwrap_or(0)),
            Metering::Off => 0,
        };
        tracing::debug!(plugin = &*self.name, fuel_used, elapsed = ?started.elapsed(), "call finished");
        self.gate.finish(admission, fuel_used);
        stats
            .fuel_used
            .store(fuel_used, std::sync::atomic::Ordering::Relaxed);
        stats.memory_bytes.store(
            live.store.data().memory_bytes(),
            std::sync::atomic::Ordering::Relaxed,
        );
        live.calls += 1;
        match outcome {
            Some(Ok(value)) => {
                match reuse_for {
                    Some(client) => self.keep_for(client, live),
                    None => live.retire(),
                }
                Ok(value)
            }
            // A call that failed leaves its instance behind: a trap can stop it anywhere.
            Some(Err(err)) => {
                live.retire();
                if let Some(limit) = limit_hit(&err, &limits, &budget) {
                    tracing::warn!(plugin = &*self.name, "plugin stopped: {limit}");
                    return Err(CallError::Limit(self.name.clone(), limit));
                }
                let why = describe_failure(&err, &stderr_tail);
                let why = self.grants.redactor.redact(&why);
                tracing::warn!(
                    plugin = &*self.name,
                    "plugin stopped: {}",
                    crate::log_safe(&why)
                );
                Err(CallError::Stopped(format!("plugin `{}` {why}", self.name)))
            }
            None => {
                live.retire();
                Err(time_limit())
            }
        }
    }

    /// A slot of the engine's instance pool, waiting until `deadline` for one (`None` if none
    /// came free). Instances kept for reuse give theirs up first.
    async fn instance_slot(
        &self,
        deadline: Instant,
    ) -> Result<Option<OwnedSemaphorePermit>, CallError> {
        loop {
            match self.instance_slots.clone().try_acquire_owned() {
                Ok(slot) => return Ok(Some(slot)),
                Err(TryAcquireError::Closed) => {
                    return Err(CallError::Host(anyhow::anyhow!(
                        "the instance pool is closed"
                    )));
                }
                Err(TryAcquireError::NoPermits) if self.kept.drop_oldest() => continue,
                Err(TryAcquireError::NoPermits) => break,
            }
        }
        match tokio::time::timeout_at(deadline.into(), self.instance_slots.clone().acquire_owned())
            .await
        {
            Ok(slot) => slot
                .map(Some)
                .map_err(|closed| CallError::Host(closed.into())),
            Err(_elapsed) => Ok(None),
        }
    }

    /// A store for `call` in this plugin's sandbox, on the pool slot `slot`; the component is
    /// instantiated in it by the call.
    fn new_store(
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
            template_bytes: self.template_bytes,
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
            _slot: slot,
        })
    }

    /// Keeps `live`, whose call succeeded, for `client`'s next call, unless it has served its
    /// calls or grown past its memory bound.
    fn keep_for(&self, client: Arc<str>, mut live: LiveInstance) {
        let Reuse::PerClient {
            calls,
            memory_bytes,
        } = self.reuse
        else {
            return;
        };
        live.store.data_mut().end_call();
        let memory = live.store.data().memory_bytes();
        if live.calls >= calls || memory > memory_bytes {
            tracing::debug!(
                plugin = &*self.name,
                calls = live.calls,
                memory,
                "instance not kept: it served its calls or grew past its memory bound"
            );
            live.retire();
            return;
        }
        self.kept.keep(self.id, client, live);
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.kept.forget(self.id);
    }
}

/// Runs `run` until it ends or `clock`'s deadline passes (`None`); the deadline may move while
/// it runs (see [`CallClock`]).
async fn until_deadline<F: Future>(run: F, clock: &CallClock) -> Option<F::Output> {
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
