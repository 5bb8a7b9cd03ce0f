//! Fresh instances built before they are needed.
//!
//! Every call still runs in an instance no other call has used, but making one (instantiating
//! the component: its memory image, its tables, its core instances and their start functions)
//! need not happen while the client waits. Once a client has called a plugin, the plugin keeps
//! a few never-used instances ready, built on the builder thread, and a call takes one; a call
//! that finds none ready but one being built waits for that one (it started earlier than the
//! call could) for up to twice the time a build takes, then builds its own as before.
//!
//! How many: as many as the plugin's calls recently ran at once, from 1 to its
//! `ready_instances` ([`DEFAULT_READY_INSTANCES`], at most [`MOST_READY_INSTANCES`]; 0 builds
//! none). None for a plugin no client calls (its ready ones are dropped once idle
//! for `shelf::IDLE`), for tasks (their limits are not a call's) or for `reuse = "per-client"`
//! (its clients keep theirs), and none after a build failed (the plugin's calls then instantiate
//! as they come, and say why they fail). What bounds them: [`shelf::MAX_READY`] across plugins;
//! a build takes a pool slot only while more than a quarter of the pool is free, and a call that
//! finds the pool empty drops a ready one first; a build runs under the plugin's per-call limits
//! (fuel, time, memory), and the fuel it burned is charged to the call that takes it.
//!
//! [`shelf::MAX_READY`]: crate::shelf::MAX_READY
//! [`DEFAULT_READY_INSTANCES`]: crate::spec::DEFAULT_READY_INSTANCES
//! [`MOST_READY_INSTANCES`]: crate::spec::MOST_READY_INSTANCES

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::call::CallContext;
use crate::engine::{INSTANCE_SLOTS, Metering};
use crate::error::describe_failure;
use crate::grant_ask::CallClock;
use crate::limits::Budget;
use crate::live::{InstanceFactory, LiveInstance, until_deadline};
use crate::sandbox::Root;
use crate::shelf::Shelf;

/// How long the peak of a plugin's calls at once is remembered when sizing its ready instances.
const DEMAND_WINDOW: Duration = Duration::from_secs(10);

/// The shortest a call waits for an instance being built before it builds its own.
const SHORTEST_WAIT: Duration = Duration::from_millis(1);

/// One loaded plugin's instances built ahead: how many it needs, which are being built, and
/// the calls waiting for them.
pub(crate) struct Prebuild {
    /// The loaded plugin (`Runner`'s id), as the shelf knows it.
    plugin: u64,
    factory: Arc<InstanceFactory>,
    shelf: Arc<Shelf>,
    slots: Arc<Semaphore>,
    builder: Builder,
    /// The most instances it keeps ready (`ready_instances`).
    most: usize,
    state: Mutex<Demand>,
}

struct Demand {
    /// Client calls running now, and the most at once since `window_start`.
    in_flight: usize,
    peak: usize,
    window_start: Instant,
    /// Builds under way.
    building: usize,
    /// Calls waiting for an instance being built, oldest first: each build goes to the first
    /// still waiting.
    claims: VecDeque<oneshot::Sender<LiveInstance>>,
    /// The roots of the latest call, which builds use.
    roots: Arc<Vec<Root>>,
    /// How long the latest build took.
    build_time: Duration,
    /// A build failed: the plugin's calls instantiate as they come.
    off: bool,
}

/// A client call of the plugin, counted while it runs. When it ends, the plugin's ready
/// instances are topped up: after the call rather than beside it, since building an instance
/// while a call runs makes every page the call first writes cost an interrupt to the builder's
/// core (a TLB shootdown; measured: 60% more CPU per call of the Python example, no faster).
pub(crate) struct InFlight {
    prebuild: Arc<Prebuild>,
    /// The call found nothing built for it.
    missed: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        {
            let mut demand = self.prebuild.state.lock();
            demand.in_flight = demand.in_flight.saturating_sub(1);
        }
        self.prebuild.top_up(self.missed);
    }
}

impl Prebuild {
    pub(crate) fn new(
        plugin: u64,
        factory: Arc<InstanceFactory>,
        shelf: Arc<Shelf>,
        slots: Arc<Semaphore>,
        builder: Builder,
        most: usize,
    ) -> Prebuild {
        Prebuild {
            plugin,
            factory,
            shelf,
            slots,
            builder,
            most,
            state: Mutex::new(Demand {
                in_flight: 0,
                peak: 0,
                window_start: Instant::now(),
                building: 0,
                claims: VecDeque::new(),
                roots: Arc::default(),
                build_time: Duration::ZERO,
                off: false,
            }),
        }
    }

    /// A never-used instance for a client's call with `roots`, ready or being built (waited for
    /// until `deadline` at the latest); `None` if the call must build its own. Either way the
    /// call is counted until the returned [`InFlight`] drops, which tops up the plugin's ready
    /// instances.
    pub(crate) async fn take(
        self: &Arc<Self>,
        roots: &Arc<Vec<Root>>,
        deadline: Instant,
    ) -> (Option<LiveInstance>, InFlight) {
        let mut in_flight = InFlight {
            prebuild: self.clone(),
            missed: false,
        };
        let sees_roots = self.factory.sees_roots();
        let stale = {
            let mut demand = self.state.lock();
            demand.in_flight += 1;
            if demand.window_start.elapsed() > DEMAND_WINDOW {
                demand.window_start = Instant::now();
                demand.peak = 0;
            }
            demand.peak = demand.peak.max(demand.in_flight);
            let stale = sees_roots && demand.roots != *roots;
            demand.roots = roots.clone();
            stale
        };
        if stale {
            self.shelf.forget_ready(self.plugin);
        }
        let ready = self
            .shelf
            .take_ready(self.plugin, sees_roots.then_some(&roots[..]));
        let claim = match ready {
            Some(_) => None,
            None => self.claim(),
        };
        // A call that finds nothing built for it means the builder is behind (the machine is
        // busy, or calls come faster than it builds): then one build at a time keeps the
        // pipeline going without adding hand-overs to work the calls do themselves anyway.
        in_flight.missed = ready.is_none() && claim.is_none();
        let live = match (ready, claim) {
            (Some(live), _) => Some(live),
            (None, Some((built, wait))) => {
                let until = deadline.min(Instant::now() + wait);
                match tokio::time::timeout_at(until.into(), built).await {
                    Ok(Ok(live)) if !sees_roots || live.roots == *roots => Some(live),
                    _ => None,
                }
            }
            (None, None) => None,
        };
        (live, in_flight)
    }

    /// A place in the queue for an instance being built, and how long to wait for it; `None`
    /// if every build under way is promised to an earlier call.
    fn claim(&self) -> Option<(oneshot::Receiver<LiveInstance>, Duration)> {
        let mut demand = self.state.lock();
        demand.claims.retain(|claim| !claim.is_closed());
        if demand.claims.len() >= demand.building {
            return None;
        }
        let (promise, built) = oneshot::channel();
        demand.claims.push_back(promise);
        Some((built, (demand.build_time * 2).max(SHORTEST_WAIT)))
    }

    /// Starts the builds that bring the plugin's ready instances up to what its calls need;
    /// `behind`: at most one build under way.
    fn top_up(self: &Arc<Self>, behind: bool) {
        let (wanted, roots) = {
            let mut demand = self.state.lock();
            if demand.off || self.most == 0 || (behind && demand.building > 0) {
                return;
            }
            let need = match behind {
                true => 1,
                false => demand.peak.clamp(1, self.most),
            };
            let have = self.shelf.ready(self.plugin) + demand.building;
            let wanted = need.saturating_sub(have);
            demand.building += wanted;
            (wanted, demand.roots.clone())
        };
        for _ in 0..wanted {
            // A build takes a slot only while the pool has room for calls, and never waits.
            let slot = (self.slots.available_permits() > INSTANCE_SLOTS as usize / 4)
                .then(|| self.slots.clone().try_acquire_owned().ok())
                .flatten();
            let Some(slot) = slot else {
                self.state.lock().building -= 1;
                continue;
            };
            let (factory, roots, this) =
                (self.factory.clone(), roots.clone(), Arc::downgrade(self));
            let job = Box::pin(async move {
                let built = build(&factory, slot, roots).await;
                finished(this, built);
            });
            if !self.builder.run(job) {
                self.state.lock().building -= 1;
            }
        }
    }
}

/// A build ended: the instance goes to the first call waiting for one, else to the shelf.
fn finished(prebuild: Weak<Prebuild>, built: Result<(LiveInstance, Duration), String>) {
    // The plugin was unloaded meanwhile: the instance is dropped.
    let Some(prebuild) = prebuild.upgrade() else {
        return;
    };
    let mut demand = prebuild.state.lock();
    demand.building = demand.building.saturating_sub(1);
    match built {
        Ok((mut live, took)) => {
            demand.build_time = took;
            while let Some(claim) = demand.claims.pop_front() {
                match claim.send(live) {
                    Ok(()) => return,
                    Err(unclaimed) => live = unclaimed,
                }
            }
            drop(demand);
            let refused = prebuild
                .shelf
                .put_ready(prebuild.plugin, live, prebuild.most);
            drop(refused);
        }
        Err(why) => {
            demand.off = true;
            demand.claims.clear();
            drop(demand);
            let why = prebuild.factory.grants.redactor.redact(&why);
            tracing::info!(
                plugin = &*prebuild.factory.name,
                "instances of this plugin are made as calls come, not ahead: making one \
                 failed: {}",
                crate::log_safe(&why)
            );
        }
    }
}

/// Builds an instance on pool slot `slot` for calls with `roots`, under the plugin's per-call
/// limits; how long it took, or why it failed.
async fn build(
    factory: &InstanceFactory,
    slot: tokio::sync::OwnedSemaphorePermit,
    roots: Arc<Vec<Root>>,
) -> Result<(LiveInstance, Duration), String> {
    let started = Instant::now();
    let budget = Budget::of(&factory.limits, false);
    let clock = Arc::new(CallClock::new(
        started + Duration::from_millis(budget.timeout_ms),
    ));
    let call = CallContext {
        roots,
        ..CallContext::default()
    };
    let mut live = (factory.store(call, clock.clone(), slot, budget)).map_err(|e| e.to_string())?;
    if factory.metering == Metering::Fuel {
        (live.store.set_fuel(budget.fuel)).map_err(|e| e.to_string())?;
    }
    live.store.set_epoch_deadline(1);
    let instantiated = until_deadline(factory.instantiate(&mut live), &clock).await;
    let stderr_tail = live.stderr.finish();
    live.stdout.finish();
    match instantiated {
        Some(Ok(_)) => {}
        Some(Err(err)) => return Err(describe_failure(&err, &stderr_tail)),
        None => return Err(format!("it took longer than {} ms", budget.timeout_ms)),
    }
    if factory.metering == Metering::Fuel {
        live.build_fuel = budget
            .fuel
            .saturating_sub(live.store.get_fuel().unwrap_or(0));
    }
    Ok((live, started.elapsed()))
}

/// What the builder thread runs: one build.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The thread that builds instances ahead, for every plugin of a runtime: one, so building
/// ahead never takes more than one core. Builds interleave at every epoch tick, so one slow to
/// instantiate does not hold the others back; the thread ends with the last handle.
#[derive(Clone)]
pub(crate) struct Builder {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Builder {
    pub(crate) fn start() -> std::io::Result<Builder> {
        let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?;
        std::thread::Builder::new()
            .name("palisade-builder".into())
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some(job) = queue.recv().await {
                        tokio::spawn(job);
                    }
                });
            })?;
        Ok(Builder { jobs })
    }

    /// Runs `job` on the builder thread; false if the thread has ended.
    fn run(&self, job: Job) -> bool {
        self.jobs.send(job).is_ok()
    }
}
