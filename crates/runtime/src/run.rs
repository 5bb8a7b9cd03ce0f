//! The run loop: one call into an instance of a plugin under every one of its limits (the gate,
//! a slot of the instance pool, its share of the cores, fuel, the deadline, memory, the hostcall
//! fuel), then the instance retired or, with `reuse = "per-client"`, kept for the client's next
//! call. The instance is fresh: built for the call, or built ahead and never used (`ready.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use wasmtime::Store;
use wasmtime::component::Instance;

use crate::call::{CallContext, InstanceSource};
use crate::cores::CoreShare;
use crate::engine::Metering;
use crate::error::{CallError, describe_failure, limit_hit};
use crate::gate::Gate;
use crate::grant_ask::CallClock;
use crate::keyvalue::KeyValueStore;
use crate::limits::Budget;
use crate::live::{InstanceFactory, LiveInstance, until_deadline};
use crate::ready::Prebuild;
use crate::runtime::Runtime;
use crate::sandbox::Grants;
use crate::shelf::Shelf;
use crate::spec::{PluginSpec, Reuse};
use crate::store::StoreState;

/// The next [`Runner`]'s id.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What running a call of one loaded plugin takes: how to make its instances, its instances
/// built ahead, its share of the cores, and the shared pool and gates.
pub(crate) struct Runner {
    /// The plugin's name, in logs, errors and limits.
    pub(crate) name: Arc<str>,
    reuse: Reuse,
    /// Its grants, resolved.
    pub(crate) grants: Arc<Grants>,
    pub(crate) factory: Arc<InstanceFactory>,
    prebuild: Arc<Prebuild>,
    gate: Arc<Gate>,
    cores: CoreShare,
    instance_slots: Arc<Semaphore>,
    /// Instances between calls (kept for a client, ready for anyone), shared by every plugin.
    shelf: Arc<Shelf>,
    /// Tells this loaded plugin's shelved instances from those of an earlier version.
    id: u64,
}

impl Runner {
    /// What the plugin's gate holds now.
    pub(crate) fn budget(&self) -> crate::gate::Budget {
        self.gate.budget()
    }

    /// The runner of the plugin of `spec`, linked as `pre`, with `grants`.
    pub(crate) fn new(
        runtime: &Runtime,
        spec: &PluginSpec,
        grants: Arc<Grants>,
        keyvalue: Option<Arc<KeyValueStore>>,
        pre: wasmtime::component::InstancePre<StoreState>,
    ) -> Runner {
        let factory = Arc::new(InstanceFactory::new(
            spec,
            grants.clone(),
            keyvalue,
            runtime.metering,
            pre,
        ));
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let prebuild = Arc::new(Prebuild::new(
            id,
            factory.clone(),
            runtime.shelf.clone(),
            runtime.instance_slots.clone(),
            runtime.builder.clone(),
            spec.ready_instances,
        ));
        Runner {
            gate: runtime.gates.for_plugin(&factory.name, &spec.limits),
            cores: CoreShare::new(spec.limits.cores),
            name: factory.name.clone(),
            reuse: spec.reuse,
            grants,
            factory,
            prebuild,
            instance_slots: runtime.instance_slots.clone(),
            shelf: runtime.shelf.clone(),
            id,
        }
    }

    /// Bytes of the plugin's resource templates: what matching one of its resource updates
    /// costs per URI byte.
    pub(crate) fn template_bytes(&self) -> u64 {
        self.factory.template_bytes()
    }

    /// Sets [`template_bytes`](Runner::template_bytes) once the plugin has listed its templates.
    pub(crate) fn set_template_bytes(&mut self, bytes: u64) {
        self.factory.set_template_bytes(bytes);
    }

    /// Runs `f` against an instance under every limit of the plugin: a fresh one (built ahead
    /// or now), or with `reuse = "per-client"` the one kept for this client.
    pub(crate) async fn run<R>(
        &self,
        call: CallContext,
        f: impl AsyncFnOnce(&mut Store<StoreState>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        let limits = self.factory.limits;
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
            .and_then(|client| self.shelf.take_kept(self.id, client, &call.roots));
        // A client's call of a plugin with fresh instances takes one built ahead.
        let (ready, _in_flight) = match self.reuse {
            Reuse::Never if call.caller.is_some() && !call.task => {
                let (ready, in_flight) = self.prebuild.take(&call.roots, deadline).await;
                (ready, Some(in_flight))
            }
            _ => (None, None),
        };
        let source = match (&kept, &ready) {
            (Some(_), _) => InstanceSource::Kept,
            (None, Some(_)) => InstanceSource::BuiltAhead,
            (None, None) => InstanceSource::New,
        };
        let mut live = match kept.or(ready) {
            Some(mut live) => {
                (live.store.data_mut()).begin_call(call, self.factory.ask, clock.clone());
                live
            }
            None => {
                let slot = self.instance_slot(deadline).await?.ok_or_else(time_limit)?;
                self.factory.store(call, clock.clone(), slot, budget)?
            }
        };
        stats.instance_wait_us.store(
            entered.elapsed().as_micros().min(u64::MAX as u128) as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        stats.set_instance(source);
        // An instance built ahead burned some of the call's fuel already.
        let fuel = budget.fuel.saturating_sub(live.build_fuel);
        let metering = self.factory.metering;
        if metering == Metering::Fuel {
            (live.store.set_fuel(fuel)).map_err(|e| CallError::Host(e.into()))?;
        }
        // Every epoch tick: stop if past the deadline, else yield so other calls (and a
        // cancellation, which drops this future) get their turn.
        live.store.set_epoch_deadline(1);

        let started = Instant::now();
        let run = self.cores.run(async {
            let instance = self.factory.instantiate(&mut live).await?;
            f(&mut live.store, &instance).await
        });
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
        let fuel_used = match metering {
            Metering::Fuel => budget
                .fuel
                .saturating_sub(live.store.get_fuel().unwrap_or(0)),
            Metering::Off => 0,
        };
        live.build_fuel = 0;
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
    /// came free). Shelved instances (kept or ready) give theirs up first.
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
                Err(TryAcquireError::NoPermits) if self.shelf.drop_oldest() => continue,
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
        self.shelf.keep(self.id, client, live);
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.shelf.forget(self.id);
    }
}
