//! The data of one call's store: the WASI and `wasi:http` contexts, the plugin's grants and
//! limits, and what the call has spent so far. The plugin (`plugin.rs`) creates it for every call;
//! the host imports (`host_api.rs`, `wasi_guard.rs`) read and charge it.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::call::CallContext;
use super::grant_ask::{CallAsks, CallClock};
use super::limits::MemoryLimiter;
use super::network::NetworkPolicy;
use super::sandbox::Grants;

/// The data of one call's store.
pub struct StoreState {
    pub(super) wasi: WasiCtx,
    pub(super) http: WasiHttpCtx,
    pub(super) network: NetworkPolicy,
    pub(super) table: ResourceTable,
    pub(super) limiter: MemoryLimiter,
    /// Bytes of `host.log` messages this call wrote to the server's log.
    pub(super) host_log_bytes: usize,
    /// Bytes the call sent besides its result (notifications, logs, questions to the client),
    /// and the most it may: the plugin's output limit.
    pub(super) side_output: u64,
    pub(super) output_limit: u64,
    /// Questions this call put to the client through `elicit` and `sample`.
    pub(super) asked: u32,
    /// Questions (elicitations, sampling requests) this call put to the client in all, and the
    /// most it may: `limits.questions_per_call`.
    pub(super) questions: u64,
    pub(super) questions_limit: u64,
    /// Bytes of the plugin's URI templates, what matching one of its resource updates costs
    /// per URI byte; the matching work this call's updates cost so far; whether some were
    /// dropped for it.
    pub(super) template_bytes: u64,
    pub(super) update_steps: u64,
    pub(super) updates_dropped: bool,
    pub(super) plugin: Arc<str>,
    pub(super) grants: Arc<Grants>,
    /// Hosts and variables the plugin asks for beyond its grants, during this call.
    pub(super) asks: Arc<CallAsks>,
    pub(super) call: CallContext,
    /// The plugin's key-value store, when granted.
    pub(super) keyvalue: Option<Arc<super::keyvalue::KeyValueStore>>,
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for StoreState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.network,
        }
    }
}

/// What a store is made of besides its call: the plugin's sandbox, fixed for its lifetime.
pub(super) struct Sandbox {
    pub(super) plugin: Arc<str>,
    pub(super) grants: Arc<Grants>,
    pub(super) wasi: WasiCtx,
    pub(super) limiter: MemoryLimiter,
    pub(super) output_limit: u64,
    pub(super) questions_limit: u64,
    pub(super) template_bytes: u64,
    pub(super) keyvalue: Option<Arc<super::keyvalue::KeyValueStore>>,
}

impl StoreState {
    /// A store in `sandbox` for `call`, which ends at `clock`'s deadline; `ask` is the plugin's
    /// `ask` setting.
    pub(super) fn new(
        sandbox: Sandbox,
        call: CallContext,
        ask: bool,
        clock: Arc<CallClock>,
    ) -> StoreState {
        let Sandbox {
            plugin,
            grants,
            wasi,
            limiter,
            output_limit,
            questions_limit,
            template_bytes,
            keyvalue,
        } = sandbox;
        let (asks, network) = call_policies(&plugin, &grants, &call, ask, &clock);
        StoreState {
            wasi,
            http: WasiHttpCtx::new(),
            network,
            table: ResourceTable::new(),
            limiter,
            host_log_bytes: 0,
            side_output: 0,
            output_limit,
            asked: 0,
            questions: 0,
            questions_limit,
            template_bytes,
            update_steps: 0,
            updates_dropped: false,
            plugin,
            grants,
            asks,
            call,
            keyvalue,
        }
    }

    /// Points a kept store at its next call: that call's client, deadline and budgets, nothing
    /// left of the last call's. The plugin's memory, WASI state and resources stay.
    pub(super) fn begin_call(&mut self, call: CallContext, ask: bool, clock: Arc<CallClock>) {
        (self.asks, self.network) = call_policies(&self.plugin, &self.grants, &call, ask, &clock);
        self.call = call;
        self.host_log_bytes = 0;
        self.side_output = 0;
        self.asked = 0;
        self.questions = 0;
        self.update_steps = 0;
        self.updates_dropped = false;
    }

    /// Lets go of the call's context (its event sender, its client channel), so the protocol
    /// layer sees the call end while the store is kept for the client's next call.
    pub(super) fn end_call(&mut self) {
        let clock = self.asks.clock().clone();
        self.begin_call(CallContext::default(), false, clock);
    }

    /// Linear memory the instance holds, across its memories.
    pub(super) fn memory_bytes(&self) -> u64 {
        self.limiter.in_use()
    }
}

/// What one call may ask the user for, and where it may connect, under the plugin's grants.
fn call_policies(
    plugin: &Arc<str>,
    grants: &Grants,
    call: &CallContext,
    ask: bool,
    clock: &Arc<CallClock>,
) -> (Arc<CallAsks>, NetworkPolicy) {
    let asks = Arc::new(CallAsks::new(
        plugin.clone(),
        ask,
        call.clone(),
        clock.clone(),
    ));
    let network = NetworkPolicy::new(
        plugin.clone(),
        grants.network.clone(),
        asks.clone(),
        call.stats.clone(),
        grants.redactor.clone(),
        grants.tls.clone(),
        grants.usage.clone(),
    );
    (asks, network)
}
