//! The request methods, one file per MCP area, each a free function over a [`Request`]: it
//! checks its parameters, asks the catalog what serves the request, and runs the plugin call with
//! the request's roots, cancellation and event forwarding. Here: [`dispatch`], and what every
//! handler shares (the request, the plugin call, errors).

mod completion;
mod logging;
mod prompts;
mod resources;
mod tasks;
mod tools;

pub(super) use tasks::{
    declares_extension as declares_tasks, extension_required as tasks_extension_required,
};

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, RpcError};
use super::plugin_events::{self};
use super::session::asks::SessionClient;
use super::stateless::input_round::InputRound;
use super::stateless::meta::RequestMeta;
use super::tasks::TaskChannel;
use super::version::ProtocolVersion;
use crate::config::RootsAccess;
use crate::runtime::Root;
use crate::runtime::bindings::host::{AskError, InputRequest, ListKind};
use crate::runtime::bindings::types::ErrorCode;
use crate::runtime::{
    CallContext, CallError, CallStats, ClientChannel, InstanceSource, LimitExceeded, Plugin,
};
use crate::telemetry::{Tracing, traces};
use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;

/// Every method a client may call in an initialize-based session; anything else is `-32601`,
/// before or after `initialize`.
pub(super) const SESSION_METHODS: [&str; 17] = [
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
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
];

/// The list a list method answers with: answered once the plugins loading at start are ready,
/// or after [`LIST_WAIT`].
fn listed_kind(method: &str) -> Option<ListKind> {
    match method {
        "tools/list" => Some(ListKind::Tools),
        "resources/list" | "resources/templates/list" => Some(ListKind::Resources),
        "prompts/list" => Some(ListKind::Prompts),
        _ => None,
    }
}

/// The longest a list waits for plugins still loading.
const LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Serves one request of a session or of the stateless revision: the method's handler, given
/// the request as a [`Request`].
pub(super) async fn dispatch(
    session: &Arc<Session>,
    version: ProtocolVersion,
    id: &Value,
    method: &str,
    params: Map<String, Value>,
    cancelled: CancellationToken,
    stateless: Option<&StatelessCall>,
) -> Result<Value, RpcError> {
    let trace = (session.server().tracing.as_ref())
        .map(|tracing| request_span(tracing, session, version, id, method, &params));
    let req = Request {
        session,
        id,
        params: &params,
        version,
        // Its own token under the session's: the operator's console may stop this request's
        // call alone, and it is then answered (a client's cancel is not).
        cancelled: cancelled.child_token(),
        stateless,
        stats: Arc::default(),
        trace,
        task: None,
    };
    let result = serve(&req, method).await;
    if let Some(cx) = &req.trace {
        end_request_span(cx, &result);
    }
    result
}

/// The request's method, served.
async fn serve(req: &Request<'_>, method: &str) -> Result<Value, RpcError> {
    let (session, params, version) = (req.session, req.params, req.version);
    let (server, scope) = (&session.server(), &session.scope());
    if let Some(kind) = listed_kind(method) {
        // A warm cache loads every plugin within the wait: the first list is whole. Past it
        // the list holds what is ready, and `list_changed` tells of the rest.
        server.loading.settled(LIST_WAIT).await;
        // Before the catalog is read: what grows after it is announced to this client.
        session.listed().mark(kind, server.catalog_generation());
    }
    match method {
        "ping" => Ok(json!({})),
        "tools/list" => server.list_tools(params, version, scope),
        "tools/call" => tools::call(req).await,
        "resources/list" => resources::list(req).await,
        "resources/templates/list" => server.list_resource_templates(params, version, scope),
        "resources/read" => resources::read(req).await,
        "resources/subscribe" => resources::subscribe(req, true).await,
        "resources/unsubscribe" => resources::subscribe(req, false).await,
        "prompts/list" => server.list_prompts(params, version, scope),
        "prompts/get" => prompts::get(req).await,
        "completion/complete" => completion::complete(req).await,
        "logging/setLevel" => logging::set_level(req).await,
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" | "tasks/update" => {
            tasks::serve(req, method).await
        }
        _ => Err(RpcError::method_not_found(method, "this session")),
    }
}

/// The span of one MCP request, as the OpenTelemetry semantic conventions for MCP name it
/// (`{mcp.method.name} {target}`), under the trace context its `_meta` carries.
fn request_span(
    tracing: &Tracing,
    session: &Session,
    version: ProtocolVersion,
    id: &Value,
    method: &str,
    params: &Map<String, Value>,
) -> opentelemetry::Context {
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", method.to_string()),
        KeyValue::new("mcp.protocol.version", version.as_str()),
        KeyValue::new("jsonrpc.request.id", id_text(id)),
        KeyValue::new("network.transport", session.network_transport()),
        KeyValue::new("palisade.client", session.caller().to_string()),
    ];
    if let Some(session_id) = session.transport_id() {
        attributes.push(KeyValue::new("mcp.session.id", session_id.to_string()));
    }
    if let Some(who) = &session.identity().oauth {
        attributes.push(KeyValue::new("enduser.id", who.subject.clone()));
    }
    let mut name = method.to_string();
    match (method, text("name"), text("uri")) {
        ("tools/call", Some(tool), _) => {
            name = format!("{method} {tool}");
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_string()));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        ("prompts/get", Some(prompt), _) => {
            name = format!("{method} {prompt}");
            attributes.push(KeyValue::new("gen_ai.prompt.name", prompt.to_string()));
        }
        (_, _, Some(uri)) => attributes.push(KeyValue::new("mcp.resource.uri", uri.to_string())),
        _ => {}
    }
    tracing.span(
        &traces::meta_context(params),
        name,
        SpanKind::Server,
        attributes,
    )
}

/// Ends a request's span: a JSON-RPC error, or a tool's error result, marks it failed.
fn end_request_span(cx: &opentelemetry::Context, result: &Result<Value, RpcError>) {
    match result {
        Ok(value) if value.get("isError") == Some(&Value::Bool(true)) => traces::end_span(
            cx,
            Vec::new(),
            Some((
                "tool_error".into(),
                "the tool answered with an error".into(),
            )),
        ),
        Ok(_) => traces::end_span(cx, Vec::new(), None),
        Err(error) => traces::end_span(
            cx,
            vec![KeyValue::new(
                "rpc.response.status_code",
                error.code.to_string(),
            )],
            Some((error.code.to_string(), error.message.clone())),
        ),
    }
}

/// A JSON-RPC id as span attributes write it.
fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Learns the files behind the resources `uris` whose files are not known yet, for a stateless
/// `subscriptions/listen` made before any `resources/list` (see `resources::learn_files`).
pub(super) async fn learn_resource_files(
    session: &Arc<Session>,
    version: ProtocolVersion,
    id: &Value,
    uris: impl IntoIterator<Item = &String>,
    call: &StatelessCall,
    cancelled: CancellationToken,
) {
    let params = Map::new();
    let req = Request {
        session,
        id,
        params: &params,
        version,
        cancelled,
        stateless: Some(call),
        stats: Arc::default(),
        trace: None,
        task: None,
    };
    let catalog = session.server().catalog();
    let mut learned: Vec<Arc<str>> = Vec::new();
    for uri in uris {
        if session.server().knows_resource_file(uri) {
            continue;
        }
        let Some(plugin) = catalog.resources.route(uri) else {
            continue;
        };
        if !learned.contains(&plugin.name) {
            learned.push(plugin.name.clone());
            resources::learn_files(&req, &plugin).await;
        }
    }
}

/// What a stateless request (2026-07-28) brings besides its parameters.
pub(super) struct StatelessCall {
    /// What its `_meta` says: revision, capabilities, log level.
    pub meta: RequestMeta,
    /// For requests that may ask the client for input: this attempt's answers and questions.
    pub round: Option<Arc<InputRound>>,
}

/// One request, as every handler gets it.
pub(super) struct Request<'a> {
    /// The session it came in (for the stateless revision, one made for it).
    session: &'a Arc<Session>,
    id: &'a Value,
    params: &'a Map<String, Value>,
    /// The revision it is served in.
    version: ProtocolVersion,
    cancelled: CancellationToken,
    /// For a stateless request: its metadata and input round.
    stateless: Option<&'a StatelessCall>,
    /// What its plugin calls cost, filled in by the sandbox.
    stats: Arc<CallStats>,
    /// Its span, when traces are exported: the parent of its plugin calls' spans.
    trace: Option<opentelemetry::Context>,
    /// For a tool call running as a task: how it asks the client.
    task: Option<Arc<TaskChannel>>,
}

impl Request<'_> {
    /// Whom a plugin call's questions go to: the client at once (initialize-based sessions), or
    /// the input requests of this attempt (2026-07-28).
    fn client_channel(&self) -> Arc<dyn ClientChannel> {
        if let Some(task) = &self.task {
            return task.clone();
        }
        match self.stateless {
            Some(StatelessCall {
                round: Some(round), ..
            }) => round.clone(),
            // Lists and completions of this revision cannot carry input requests.
            Some(_) => Arc::new(NoInput),
            None => Arc::new(SessionClient {
                session: self.session.clone(),
                related: self.id.clone(),
            }),
        }
    }

    /// Runs `f` against `plugin` with this session's roots, the request's cancellation, and the
    /// plugin's events forwarded; every notification is out before this returns.
    async fn with_plugin<R>(
        &self,
        plugin: &Arc<Plugin>,
        f: impl AsyncFnOnce(CallContext) -> Result<R, CallError>,
    ) -> Result<R, CallError> {
        let roots = self.call_roots(plugin).await;
        let log_level = match self.stateless {
            Some(stateless) => stateless.meta.log_level,
            None => Some(self.session.logging().level()),
        };
        let progress_token = self
            .params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        let (events, rx) = mpsc::unbounded_channel();
        let rx = match &self.task {
            Some(task) => tasks::note_progress(self.session.server(), task.live(), rx),
            None => rx,
        };
        let forwarder = plugin_events::forward(
            self.session.clone(),
            plugin.clone(),
            progress_token,
            self.id.clone(),
            rx,
            self.version,
            log_level,
        );
        let ctx = CallContext {
            cancelled: self.cancelled.clone(),
            roots,
            events: Some(events),
            client: Some(self.client_channel()),
            caller: Some(self.session.caller().clone()),
            reuse_key: self.session.reuse_key(),
            grants: Some(self.session.server().grant_questions.clone()),
            stats: self.stats.clone(),
            task: self.task.is_some(),
        };
        let span = match (&self.session.server().tracing, &self.trace) {
            (Some(tracing), Some(parent)) => Some(tracing.span(
                parent,
                format!("plugin {}", plugin.name),
                SpanKind::Internal,
                vec![KeyValue::new(
                    "palisade.plugin.name",
                    plugin.name.to_string(),
                )],
            )),
            _ => None,
        };
        // The forwarder runs in this task, beside the call, rather than spawned: a spawned task
        // tends to wake on the other worker thread, and that hand-off was a visible part of every
        // call's latency. It ends when the call's store, and with it the event sender, is gone,
        // so no notification about this request follows its response.
        let (result, ()) = tokio::join!(f(ctx), forwarder);
        if let Some(span) = span {
            end_plugin_span(&span, &self.stats, &result);
        }
        result
    }

    /// The trace id of this request: its span's, else the one its `_meta` carries.
    fn trace_id(&self) -> Option<String> {
        match &self.trace {
            Some(cx) => traces::trace_id(cx),
            None if self
                .params
                .get("_meta")
                .is_some_and(|m| m.get("traceparent").is_some()) =>
            {
                traces::trace_id(&traces::meta_context(self.params))
            }
            None => None,
        }
    }
}

impl Request<'_> {
    /// The roots a call to `plugin` sees. Only a session's own client roots are waited for.
    async fn call_roots(&self, plugin: &Plugin) -> Arc<Vec<Root>> {
        if plugin.spec.roots == RootsAccess::None {
            Arc::new(Vec::new())
        } else if self.stateless.is_some() {
            // 2026-07-28 deprecates client roots and has no session to keep them in: a
            // stateless request gets the roots the server was configured with.
            self.session.server().roots.clone()
        } else {
            self.session.current_roots().await
        }
    }

    /// Whether the plugin asked the client something this attempt has no answer to.
    fn awaiting_input(&self) -> bool {
        self.stateless
            .and_then(|m| m.round.as_ref())
            .is_some_and(|r| r.awaiting())
    }
}

/// Ends a plugin call's span with what the sandbox measured.
fn end_plugin_span<R>(
    cx: &opentelemetry::Context,
    stats: &CallStats,
    result: &Result<R, CallError>,
) {
    let load = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed) as i64;
    let mut attributes = vec![
        KeyValue::new("palisade.fuel.used", load(&stats.fuel_used)),
        KeyValue::new("palisade.memory.peak_bytes", load(&stats.memory_bytes)),
        KeyValue::new(
            "palisade.instance.wait_ms",
            stats.instance_wait_us.load(Ordering::Relaxed) as f64 / 1000.0,
        ),
        KeyValue::new(
            "palisade.instance.reused",
            stats.instance() == Some(InstanceSource::Kept),
        ),
    ];
    if let Some(source) = stats.instance() {
        attributes.push(KeyValue::new("palisade.instance.source", source.name()));
    }
    let error = match result {
        Ok(_) => None,
        Err(CallError::Limit(_, limit)) => {
            attributes.push(KeyValue::new("palisade.limit.hit", limit.kind()));
            Some(("limit".to_string(), limit.to_string()))
        }
        Err(CallError::Plugin(e)) => Some(("plugin_error".to_string(), e.message.clone())),
        Err(CallError::Stopped(why)) => Some(("stopped".to_string(), why.clone())),
        Err(CallError::Host(_)) => Some(("host_error".to_string(), "host failure".to_string())),
    };
    traces::end_span(cx, attributes, error);
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
            // Too busy now is the server-busy code, as the session's own in-flight cap says it:
            // a client (or a batch element) retries that; the rest stopped the call itself.
            let code = match limit {
                LimitExceeded::Concurrency { .. }
                | LimitExceeded::SharedLimitsUnavailable { .. } => super::session::SERVER_BUSY,
                _ => INTERNAL_ERROR,
            };
            let error = RpcError::new(code, format!("plugin `{plugin}` {limit}"));
            match limit.retry_after() {
                Some(after) => error.with_data(json!({ "retryAfterMs": after.as_millis() as u64 })),
                None => error,
            }
        }
        // The chain names host paths and internals: the operator's log has it, the client
        // gets an id to quote.
        CallError::Host(e) => super::incident::host_failure(what, &format_args!("{e:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_too_busy_now_is_server_busy_and_a_stopped_call_an_internal_error() {
        let busy = rpc_error(
            CallError::Limit("p".into(), LimitExceeded::Concurrency { limit: 16 }),
            "resources/read",
        );
        assert_eq!(busy.code, super::super::session::SERVER_BUSY);
        let spent = rpc_error(
            CallError::Limit("p".into(), LimitExceeded::Fuel { per_call: 1 }),
            "resources/read",
        );
        assert_eq!(spent.code, INTERNAL_ERROR);
    }
}
