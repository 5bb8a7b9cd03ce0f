//! The request methods of a session, one file per MCP area: each checks its parameters, finds
//! what serves the request, and runs the plugin call with the session's roots, cancellation and
//! event forwarding. Here: dispatch, and what every handler shares (the request's context, the
//! plugin call, errors).

mod completion;
mod logging;
mod prompts;
mod resources;
mod tools;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, RpcError};
use super::plugin_events::{self};
use super::session::asks::SessionClient;
use super::stateless::StatelessCall;
use super::version::ProtocolVersion;
use crate::config::RootsAccess;
use crate::runtime::bindings::host::{AskError, InputRequest};
use crate::runtime::bindings::types::ErrorCode;
use crate::runtime::sandbox::Root;
use crate::runtime::{CallContext, CallError, ClientChannel, Plugin};

/// Every method a client may call in an initialize-based session; anything else is `-32601`,
/// before or after `initialize`.
pub(super) const SESSION_METHODS: [&str; 13] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

impl Session {
    pub(super) async fn request(
        self: &Arc<Self>,
        version: ProtocolVersion,
        id: &Value,
        method: &str,
        params: Map<String, Value>,
        cancelled: CancellationToken,
        stateless: Option<&StatelessCall>,
    ) -> Result<Value, RpcError> {
        let call = Call {
            id,
            params: &params,
            version,
            cancelled,
            stateless,
        };
        match method {
            "ping" => Ok(json!({})),
            "tools/list" => self
                .server
                .list_tools(&params, version, &self.identity.scope),
            "tools/call" => self.call_tool(call).await,
            "resources/list" => self.list_resources(call).await,
            "resources/templates/list" => {
                self.server
                    .list_resource_templates(&params, version, &self.identity.scope)
            }
            "resources/read" => self.read_resource(call).await,
            "resources/subscribe" => self.subscribe(&params, true),
            "resources/unsubscribe" => self.subscribe(&params, false),
            "prompts/list" => self
                .server
                .list_prompts(&params, version, &self.identity.scope),
            "prompts/get" => self.get_prompt(call).await,
            "completion/complete" => self.complete(call).await,
            "logging/setLevel" => self.set_level(&params),
            _ => Err(RpcError::method_not_found(method, "this session")),
        }
    }

    /// Whom a plugin call's questions go to: the client at once (initialize-based sessions), or
    /// the input requests of this attempt (2026-07-28).
    fn client_channel(self: &Arc<Self>, call: &Call<'_>) -> Arc<dyn ClientChannel> {
        match call.stateless {
            Some(StatelessCall {
                round: Some(round), ..
            }) => round.clone(),
            // Lists and completions of this revision cannot carry input requests.
            Some(_) => Arc::new(NoInput),
            None => Arc::new(SessionClient {
                session: self.clone(),
                related: call.id.clone(),
            }),
        }
    }

    /// Runs `f` against `plugin` with this session's roots, the request's cancellation, and the
    /// plugin's events forwarded; every notification is out before this returns.
    async fn with_plugin<R>(
        self: &Arc<Self>,
        plugin: &Arc<Plugin>,
        call: &Call<'_>,
        f: impl AsyncFnOnce(CallContext) -> Result<R, CallError>,
    ) -> Result<R, CallError> {
        let roots = self.call_roots(plugin, call).await;
        let log_level = match call.stateless {
            Some(stateless) => stateless.meta.log_level,
            None => Some(*self.log_level.lock().unwrap_or_else(|e| e.into_inner())),
        };
        let progress_token = call
            .params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        let (events, rx) = mpsc::unbounded_channel();
        let forwarder = plugin_events::forward(
            self.clone(),
            plugin.clone(),
            progress_token,
            call.id.clone(),
            rx,
            call.version,
            log_level,
        );
        let ctx = CallContext {
            cancelled: call.cancelled.clone(),
            roots,
            events: Some(events),
            client: Some(self.client_channel(call)),
            caller: Some(self.caller.clone()),
            stats: Default::default(),
        };
        // The forwarder runs in this task, beside the call, rather than spawned: a spawned task
        // tends to wake on the other worker thread, and that hand-off was a visible part of every
        // call's latency. It ends when the call's store, and with it the event sender, is gone,
        // so no notification about this request follows its response.
        let (result, ()) = tokio::join!(f(ctx), forwarder);
        result
    }
}

impl Session {
    /// The roots a call to `plugin` sees. Only a session's own client roots are waited for.
    async fn call_roots(&self, plugin: &Plugin, call: &Call<'_>) -> Arc<Vec<Root>> {
        if plugin.spec.roots == RootsAccess::None {
            Arc::new(Vec::new())
        } else if call.stateless.is_some() {
            // 2026-07-28 deprecates client roots and has no session to keep them in: a
            // stateless request gets the roots the server was configured with.
            self.server.roots.clone()
        } else {
            self.current_roots().await
        }
    }
}

/// The client of a request that cannot ask it anything.
struct NoInput;

impl ClientChannel for NoInput {
    fn ask(&self, requests: Vec<(String, InputRequest)>) -> crate::runtime::PendingAnswers {
        let why = "this request cannot ask the client: in MCP 2026-07-28 only tools/call, \
                   prompts/get and resources/read can";
        let answers = requests
            .into_iter()
            .map(|(key, _)| (key, Err(AskError::Failed(why.into()))))
            .collect();
        Box::pin(std::future::ready(answers))
    }
}

/// What every method gets of its request.
struct Call<'a> {
    id: &'a Value,
    params: &'a Map<String, Value>,
    version: ProtocolVersion,
    cancelled: CancellationToken,
    /// For a stateless request: its metadata and input round.
    stateless: Option<&'a StatelessCall>,
}

impl Call<'_> {
    /// Whether the plugin asked the client something this attempt has no answer to.
    fn awaiting_input(&self) -> bool {
        self.stateless
            .and_then(|m| m.round.as_ref())
            .is_some_and(|r| r.awaiting())
    }
}

fn string_param<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, RpcError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("params.{key} must be a string")))
}

/// A failed plugin call as a protocol error (for methods without tool-style error results).
fn rpc_error(error: CallError, what: &str) -> RpcError {
    match error {
        CallError::Plugin(e) => {
            let code = match e.code {
                ErrorCode::InvalidParams | ErrorCode::NotFound => INVALID_PARAMS,
                ErrorCode::Internal | ErrorCode::Cancelled => INTERNAL_ERROR,
            };
            let error = RpcError::new(code, e.message);
            match e.data.as_deref().map(serde_json::from_str::<Value>) {
                Some(Ok(data)) => error.with_data(data),
                _ => error,
            }
        }
        CallError::Stopped(why) => RpcError::new(INTERNAL_ERROR, why),
        CallError::Limit(plugin, limit) => {
            let error = RpcError::new(INTERNAL_ERROR, format!("plugin `{plugin}` {limit}"));
            match limit.retry_after() {
                Some(after) => error.with_data(json!({ "retryAfterMs": after.as_millis() as u64 })),
                None => error,
            }
        }
        CallError::Host(e) => {
            // The chain names host paths and internals: the operator's log has it, the client
            // gets an id to quote.
            let incident = incident_id();
            tracing::error!(what, incident, "host failure: {e:#}");
            RpcError::new(
                INTERNAL_ERROR,
                format!(
                    "the server failed to run this (incident {incident}; the operator finds the \
                     cause in the server's log)"
                ),
            )
        }
    }
}

/// A short random id tying an error the client sees to the log line that explains it.
fn incident_id() -> String {
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        return format!("n{}", NEXT.fetch_add(1, Ordering::Relaxed));
    }
    hex::encode(bytes)
}
