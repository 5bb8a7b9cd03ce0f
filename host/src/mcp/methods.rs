//! The request methods of a session: each checks its parameters, finds what serves the request,
//! and runs the plugin call with the session's roots, cancellation and event forwarding.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::client_requests::SessionClient;
use super::jsonrpc::{
    INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, RpcError,
};
use super::plugin_events::{self, LEVEL_NAMES};
use super::stateless::StatelessCall;
use super::version::ProtocolVersion;
use super::{Session, lists, wire};
use crate::audit::AuditRecord;
use crate::catalog::{Backend, Catalog, CompletionTarget, check_cursor};
use crate::config::RootsAccess;
use crate::runtime::bindings::host::{
    AskError, ElicitationAction, ElicitationRequest, FormElicitation, InputRequest, InputResponse,
};
use crate::runtime::bindings::types::ErrorCode;
use crate::runtime::sandbox::Root;
use crate::runtime::{CallContext, CallError, CallStats, ClientChannel, LimitExceeded, Plugin};

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
            _ => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        }
    }

    async fn call_tool(self: &Arc<Self>, call: Call<'_>) -> Result<Value, RpcError> {
        let name = string_param(call.params, "name")?;
        let arguments = match call.params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::Object(a)) => Value::Object(a.clone()),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.arguments must be an object",
                ));
            }
        };
        // Written when the call ends, however it ends (a cancelled call is dropped mid-way).
        let mut audit = AuditEntry::new(self, name, &arguments);
        let catalog = self.server.catalog();
        // A tool outside the client's scope does not exist for it.
        let Some(tool) = catalog
            .tool(name)
            .filter(|t| Catalog::tool_in_scope(t, &self.identity.scope))
        else {
            audit.finish("unknown-tool", None);
            return Err(RpcError::invalid_params(format!("unknown tool: {name}")));
        };
        audit.plugin = Some(tool.backend.owner().into());
        if let Some(log) = &self.server.audit
            && let Err(unavailable) = log.admit_call()
        {
            audit.finish("audit-unavailable", None);
            return Err(RpcError::new(INTERNAL_ERROR, unavailable.to_string()));
        }
        if let Err(errors) = tool.validate(&arguments) {
            audit.finish("invalid-arguments", None);
            return Ok(wire::call_error(&format!(
                "invalid arguments for `{name}`:\n{errors}"
            )));
        }
        let result = match &tool.backend {
            Backend::Plugin(plugin) => {
                let confirm = plugin
                    .config
                    .tools
                    .get(&tool.tool.name)
                    .is_some_and(|t| t.confirm);
                if confirm && let Err((outcome, why)) = self.confirm(&call, name, &arguments).await
                {
                    let outcome = if call.awaiting_input() {
                        "input-required"
                    } else {
                        outcome
                    };
                    audit.finish(outcome, Some(&why));
                    return Ok(wire::call_error(&why));
                }
                let own_name = tool.tool.name.clone();
                let stats = audit.stats.clone();
                self.with_plugin(plugin, &call, async |mut ctx| {
                    ctx.stats = stats;
                    plugin.call_tool(own_name, arguments.to_string(), ctx).await
                })
                .await
            }
            Backend::InHost { run, .. } => Ok(run(&arguments)),
        };
        if call.awaiting_input() {
            // An attempt that asked the client: the client's retry is the call that counts.
            audit.finish("input-required", None);
            return Ok(wire::call_error("awaiting the client's input"));
        }
        match result {
            Ok(result) => {
                let nonconforming = result
                    .structured_content
                    .as_deref()
                    .filter(|_| !result.is_error)
                    .and_then(|structured| tool.validate_output(structured).err());
                if let Some(why) = nonconforming {
                    let why = format!("tool `{name}` answered wrongly: {why}");
                    tracing::warn!(tool = name, "{why}");
                    audit.finish("tool-error", Some(&why));
                    return Ok(wire::call_error(&why));
                }
                audit.finish(if result.is_error { "tool-error" } else { "ok" }, None);
                Ok(wire::call_result(&result, call.version))
            }
            // Tool errors are results the model can read, not protocol errors.
            Err(CallError::Plugin(e)) => {
                audit.finish("tool-error", Some(&e.message));
                Ok(wire::call_error(&e.message))
            }
            Err(CallError::Limit(plugin, limit)) => {
                let mut why = format!("plugin `{plugin}` {limit}");
                audit.finish("limit", Some(&why));
                if limit.retry_after().is_none()
                    && !matches!(limit, LimitExceeded::Concurrency { .. })
                {
                    why.push_str(
                        ". The call was stopped; retrying it as is will hit the same limit. The \
                         server is fine and other calls go on.",
                    );
                }
                Ok(wire::limit_error(&why, limit.retry_after()))
            }
            Err(CallError::Stopped(why)) => {
                audit.finish("stopped", Some(&why));
                Ok(wire::call_error(&format!(
                    "{why}. The plugin was stopped; the server is fine and other calls go on."
                )))
            }
            Err(e) => {
                audit.finish("host-error", Some(&e.to_string()));
                Err(rpc_error(e, name))
            }
        }
    }

    /// Asks the user, through elicitation, whether the tool `name` may run with `arguments`.
    /// `Err` has the audit outcome and the message for the caller.
    async fn confirm(
        self: &Arc<Self>,
        call: &Call<'_>,
        name: &str,
        arguments: &Value,
    ) -> Result<(), (&'static str, String)> {
        let mut shown = serde_json::to_string_pretty(arguments).unwrap_or_default();
        if shown.len() > 2000 {
            shown.truncate(shown.floor_char_boundary(2000));
            shown.push_str("\n...");
        }
        let request = ElicitationRequest::Form(FormElicitation {
            message: format!(
                "Allow the tool `{name}` to run with these arguments?\n{shown}\n(The server's operator asks for confirmation before this tool runs.)"
            ),
            requested_schema: r#"{"type":"object","properties":{}}"#.into(),
        });
        let answer = self
            .client_channel(call)
            .ask(vec![(CONFIRM_KEY.into(), InputRequest::Elicit(request))])
            .await
            .pop()
            .map(|(_, answer)| answer);
        match answer {
            Some(Ok(InputResponse::Elicit(answer)))
                if answer.action == ElicitationAction::Accept =>
            {
                Ok(())
            }
            Some(Ok(_)) => Err((
                "declined",
                format!("the user declined to run `{name}`; it did not run"),
            )),
            Some(Err(AskError::AwaitingAnswer)) => Err((
                "input-required",
                "awaiting the user's confirmation".to_string(),
            )),
            Some(Err(AskError::Failed(why))) => Err((
                "not-confirmed",
                format!(
                    "`{name}` runs only after the user confirms it (confirm = true in the server's \
                     configuration), and this client cannot be asked: {why}. It did not run."
                ),
            )),
            None => Err((
                "not-confirmed",
                format!("no confirmation for `{name}`; it did not run"),
            )),
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

    async fn list_resources(self: &Arc<Self>, call: Call<'_>) -> Result<Value, RpcError> {
        // Listing calls every resource plugin: a request that cannot be answered costs none.
        check_cursor(lists::cursor(call.params)?).map_err(lists::bad_cursor)?;
        let catalog = self.server.catalog();
        let plugins: Vec<Arc<Plugin>> = catalog
            .resource_plugins()
            .filter(|p| self.identity.scope.allows_plugin(&p.name))
            .cloned()
            .collect();
        // Listed live, every plugin at once: their lists follow the files behind them.
        let call = &call;
        let listings = join_all(plugins.iter().map(|plugin| async move {
            let roots = self.call_roots(plugin, call).await;
            let listing = self
                .with_plugin(plugin, call, async |ctx| plugin.list_resources(ctx).await)
                .await;
            (plugin, listing, roots)
        }))
        .await;
        let mut resources = Vec::new();
        for (plugin, listing, roots) in listings {
            let listing = match listing {
                Ok(listing) => listing,
                Err(e) => {
                    tracing::warn!(plugin = &*plugin.name, "listing resources failed: {e}");
                    continue;
                }
            };
            let accepted = catalog.resources.record_listing(plugin, listing);
            self.server
                .record_resource_files(accepted.iter().filter_map(|r| {
                    let file = plugin.host_path(r.file.as_deref()?, &roots)?;
                    Some((file, r.uri.clone()))
                }));
            resources.extend(accepted);
        }
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        self.server
            .paged(call.params, "resources", &resources, |r| {
                wire::resource(r, call.version)
            })
    }

    async fn read_resource(self: &Arc<Self>, call: Call<'_>) -> Result<Value, RpcError> {
        let uri = string_param(call.params, "uri")?;
        // 2026-07-28 made it invalid params, as JSON-RPC has it.
        let code = if call.version.is_stateless() {
            INVALID_PARAMS
        } else {
            RESOURCE_NOT_FOUND
        };
        let not_found = || {
            RpcError::new(code, format!("resource not found: {uri}"))
                .with_data(json!({ "uri": uri }))
        };
        let catalog = self.server.catalog();
        let plugin = catalog
            .resources
            .route(uri)
            .filter(|p| self.identity.scope.allows_plugin(&p.name))
            .ok_or_else(not_found)?;
        let contents = self
            .with_plugin(&plugin, &call, async |ctx| {
                plugin.read_resource(uri.to_string(), ctx).await
            })
            .await;
        match contents {
            Ok(contents) => {
                let contents: Vec<Value> = contents
                    .iter()
                    .map(|c| wire::resource_contents(c, call.version))
                    .collect();
                Ok(json!({ "contents": contents }))
            }
            Err(CallError::Plugin(e)) if e.code == ErrorCode::NotFound => Err(not_found()),
            Err(e) => Err(rpc_error(e, uri)),
        }
    }

    fn subscribe(&self, params: &Map<String, Value>, on: bool) -> Result<Value, RpcError> {
        let uri = string_param(params, "uri")?;
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if on {
            let routed = self.server.catalog().resources.route(uri);
            if !routed.is_some_and(|p| self.identity.scope.allows_plugin(&p.name)) {
                return Err(RpcError::new(
                    RESOURCE_NOT_FOUND,
                    format!("resource not found: {uri}"),
                )
                .with_data(json!({ "uri": uri })));
            }
            subscriptions.insert(uri.to_string());
        } else {
            subscriptions.remove(uri);
        }
        Ok(json!({}))
    }

    async fn get_prompt(self: &Arc<Self>, call: Call<'_>) -> Result<Value, RpcError> {
        let name = string_param(call.params, "name")?;
        let arguments = match call.params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.arguments must be an object",
                ));
            }
        };
        let catalog = self.server.catalog();
        let prompt = catalog
            .prompt(name)
            .filter(|p| Catalog::prompt_in_scope(p, &self.identity.scope))
            .ok_or_else(|| RpcError::invalid_params(format!("unknown prompt: {name}")))?;
        let arguments = prompt
            .check_arguments(&arguments)
            .map_err(RpcError::invalid_params)?;
        let plugin = &prompt.plugin;
        let own_name = prompt.prompt.name.clone();
        let result = self
            .with_plugin(plugin, &call, async |ctx| {
                plugin.get_prompt(own_name, arguments, ctx).await
            })
            .await
            .map_err(|e| rpc_error(e, name))?;
        Ok(wire::prompt_result(&result, call.version))
    }

    async fn complete(self: &Arc<Self>, call: Call<'_>) -> Result<Value, RpcError> {
        let reference = call
            .params
            .get("ref")
            .and_then(Value::as_object)
            .ok_or_else(|| RpcError::invalid_params("params.ref must be an object"))?;
        let target = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                CompletionTarget::Prompt(string_param(reference, "name")?.to_string())
            }
            Some("ref/resource") => {
                CompletionTarget::Resource(string_param(reference, "uri")?.to_string())
            }
            _ => {
                return Err(RpcError::invalid_params(
                    "params.ref.type must be \"ref/prompt\" or \"ref/resource\"",
                ));
            }
        };
        let argument = call
            .params
            .get("argument")
            .and_then(Value::as_object)
            .ok_or_else(|| RpcError::invalid_params("params.argument must be an object"))?;
        let argument = (
            string_param(argument, "name")?.to_string(),
            string_param(argument, "value")?.to_string(),
        );
        let context: Vec<(String, String)> = call
            .params
            .get("context")
            .and_then(|c| c.get("arguments"))
            .and_then(Value::as_object)
            .map(|args| {
                args.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let catalog = self.server.catalog();
        // Scope first: a routing error ("has no argument") would reveal what is out of scope.
        if !self.completion_in_scope(&catalog, &target) {
            return Err(RpcError::invalid_params(match &target {
                CompletionTarget::Prompt(name) => format!("unknown prompt: {name}"),
                CompletionTarget::Resource(uri) => format!("unknown resource template: {uri}"),
            }));
        }
        let route = catalog
            .completion_route(&target, &argument.0)
            .map_err(RpcError::invalid_params)?;
        let Some((plugin, own_target)) = route else {
            // Nothing completes this argument: no suggestions.
            return Ok(json!({ "completion": { "values": [], "total": 0, "hasMore": false } }));
        };
        let result = self
            .with_plugin(&plugin, &call, async |ctx| {
                plugin.complete(own_target, argument, context, ctx).await
            })
            .await
            .map_err(|e| rpc_error(e, "completion"))?;
        Ok(wire::completion_result(&result))
    }

    /// Whether the prompt or template a completion is about is in the client's scope.
    fn completion_in_scope(&self, catalog: &Catalog, target: &CompletionTarget) -> bool {
        let scope = &self.identity.scope;
        match target {
            CompletionTarget::Prompt(name) => catalog
                .prompt(name)
                .is_some_and(|p| Catalog::prompt_in_scope(p, scope)),
            CompletionTarget::Resource(uri) => {
                let owner = match catalog.resources.template(uri) {
                    Some(t) => Some(t.plugin.clone()),
                    None => catalog.resources.route(uri),
                };
                owner.is_some_and(|p| scope.allows_plugin(&p.name))
            }
        }
    }

    fn set_level(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let level = string_param(params, "level")?;
        let level = plugin_events::parse_level(level).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "unknown log level `{level}`: use one of {LEVEL_NAMES}"
            ))
        })?;
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) = level;
        Ok(json!({}))
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
        if plugin.config.roots == RootsAccess::None {
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

/// The audit line of one tool call, written when dropped: a call cancelled mid-way is recorded
/// as `cancelled`.
struct AuditEntry<'a> {
    session: &'a Session,
    tool: &'a str,
    arguments: &'a Value,
    plugin: Option<String>,
    started: Instant,
    stats: Arc<CallStats>,
    outcome: Option<(&'static str, Option<String>)>,
}

impl<'a> AuditEntry<'a> {
    fn new(session: &'a Session, tool: &'a str, arguments: &'a Value) -> AuditEntry<'a> {
        AuditEntry {
            session,
            tool,
            arguments,
            plugin: None,
            started: Instant::now(),
            stats: Arc::default(),
            outcome: None,
        }
    }

    fn finish(&mut self, outcome: &'static str, detail: Option<&str>) {
        self.outcome = Some((outcome, detail.map(str::to_string)));
    }
}

impl Drop for AuditEntry<'_> {
    fn drop(&mut self) {
        let Some(log) = &self.session.server.audit else {
            return;
        };
        let (outcome, detail) = self.outcome.take().unwrap_or(("cancelled", None));
        log.record(&AuditRecord {
            client: &self.session.caller,
            plugin: self.plugin.as_deref(),
            tool: self.tool,
            arguments: self.arguments,
            outcome,
            detail: detail.as_deref(),
            fuel_used: self.stats.fuel_used.load(Ordering::Relaxed),
            duration: self.started.elapsed(),
        });
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

/// The key of the operator's confirmation (`confirm = true`) among a call's input requests.
const CONFIRM_KEY: &str = "palisade/confirm";

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
