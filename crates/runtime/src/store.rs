//! The data of one call's store: the WASI and `wasi:http` contexts, the plugin's grants and
//! limits, and what the call has spent so far. The plugin (`plugin.rs`) creates it for every call;
//! the host imports (`host_api.rs`, `wasi_guard.rs`) read and charge it.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::call::CallContext;
use super::grant_ask::CallAsks;
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
