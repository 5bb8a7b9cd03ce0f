//! The `palisade:plugin/host` import: what a plugin may ask of the host during a call.

use super::bindings::host::{
    self, AskError, ElicitationRequest, ElicitationResponse, InputRequest, InputResponse, ListKind,
    LogLevel, SamplingRequest, SamplingResponse,
};
use super::call::{Answers, PluginEvent};
use super::output::{ITEM_BYTES, OutputSize as _};
use super::store::StoreState;
use crate::{Capability, HOST_KEY_PREFIX, LimitExceeded, RootsAccess, is_env_name, log_safe};

impl StoreState {
    /// Forwards `event`, charged against the call's output limit: past it, events are dropped
    /// (said once in the server's log), so a plugin cannot queue more than its limit.
    fn report(&mut self, mut event: PluginEvent) {
        if let PluginEvent::Progress {
            message: Some(message),
            ..
        } = &mut event
        {
            self.grants.redactor.redact_in_place(message);
        }
        let strings = match &event {
            PluginEvent::Progress { message, .. } => message.output_size(),
            PluginEvent::Log { message, .. } => message.output_size(),
            PluginEvent::ResourceUpdated(uri) => uri.output_size(),
            PluginEvent::ListChanged(_) => 0,
        };
        if !self.charge_output(strings + ITEM_BYTES) {
            return;
        }
        if let Some(events) = &self.call.events {
            // The receiver enforces ordering and rate; a closed channel means the request ended.
            let _ = events.send(event);
        }
    }

    /// Counts `bytes` more of what the call sent besides its result; false when that passes the
    /// plugin's output limit.
    fn charge_output(&mut self, bytes: u64) -> bool {
        let before = self.side_output;
        self.side_output = before.saturating_add(bytes);
        if self.side_output <= self.output_limit {
            return true;
        }
        if before <= self.output_limit {
            tracing::warn!(
                plugin = &*self.plugin,
                "the call's notifications, logs and questions passed its output limit of {} KiB \
                 (limits.output_kib): the rest are dropped",
                self.output_limit >> 10
            );
        }
        false
    }

    /// Refuses a question to the client larger than what the call may still send.
    fn charge_request(&mut self, request: &InputRequest) -> Result<(), String> {
        let bytes = request.output_size() + ITEM_BYTES;
        if self.charge_output(bytes) {
            Ok(())
        } else {
            Err(format!(
                "the question ({bytes} bytes) passes this call's output limit of {} KiB \
                 (limits.output_kib)",
                self.output_limit >> 10
            ))
        }
    }
}

/// Bytes of `host.log` messages one call may put in the server's log.
const MAX_HOST_LOG_BYTES: usize = 64 << 10;

const NO_CLIENT: &str =
    "no client to ask: this call was not made by a client (the plugin is being loaded)";

impl host::Host for StoreState {
    async fn log(&mut self, level: LogLevel, mut message: String) -> wasmtime::Result<()> {
        self.grants.redactor.redact_in_place(&mut message);
        let plugin = &*self.plugin;
        // The server's own log gets at most MAX_HOST_LOG_BYTES of one call's messages, as for
        // stdout and stderr; the client's share is rate-limited where it is forwarded.
        self.host_log_bytes += message.len();
        if self.host_log_bytes > MAX_HOST_LOG_BYTES {
            if self.host_log_bytes - message.len() <= MAX_HOST_LOG_BYTES {
                tracing::warn!(target: "palisade::plugin", plugin, "more than {} KiB of log messages in one call: the rest of this call's go only to the client", MAX_HOST_LOG_BYTES >> 10);
            }
            self.report(PluginEvent::Log { level, message });
            return Ok(());
        }
        let shown = log_safe(&message);
        match level {
            LogLevel::Debug => tracing::debug!(target: "palisade::plugin", plugin, "{shown}"),
            LogLevel::Info | LogLevel::Notice => {
                tracing::info!(target: "palisade::plugin", plugin, "{shown}")
            }
            LogLevel::Warning => tracing::warn!(target: "palisade::plugin", plugin, "{shown}"),
            _ => tracing::error!(target: "palisade::plugin", plugin, "{shown}"),
        }
        self.report(PluginEvent::Log { level, message });
        Ok(())
    }

    async fn report_progress(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> wasmtime::Result<()> {
        self.report(PluginEvent::Progress {
            progress,
            total,
            message,
        });
        Ok(())
    }

    async fn is_cancelled(&mut self) -> wasmtime::Result<bool> {
        Ok(self.call.cancelled.is_cancelled())
    }

    async fn list_roots(&mut self) -> wasmtime::Result<Vec<host::Root>> {
        if self.grants.roots == RootsAccess::None {
            return Ok(Vec::new());
        }
        let writable = self.grants.roots == RootsAccess::ReadWrite;
        Ok(self
            .grants
            .visible_roots(&self.call.roots)
            .map(|r| host::Root {
                uri: r.uri.clone(),
                name: r.name.clone(),
                guest_path: r.guest_path.clone(),
                writable,
            })
            .collect())
    }

    async fn get_env(&mut self, name: String) -> wasmtime::Result<Option<String>> {
        if let Some((_, value)) = self.grants.env.iter().find(|(granted, _)| *granted == name) {
            self.grants.usage.note("env", &name);
            return Ok(Some(value.clone()));
        }
        if !is_env_name(&name) {
            return Ok(None);
        }
        // Nothing to ask the user for when the server does not have it.
        let Ok(value) = std::env::var(&name) else {
            return Ok(None);
        };
        match self.asks.allow(Capability::EnvVar(name.clone())).await {
            Ok(()) => {
                self.grants.usage.note("env", &name);
                Ok(Some(value))
            }
            Err(why) => {
                tracing::warn!(
                    plugin = &*self.plugin,
                    "environment variable {name} denied: {why}"
                );
                self.call.stats.note_denied(format!(
                    "environment variable {name}: {why} (grant it with {name} = {{ from_host = \"{name}\" }} under [plugins.{}.env])",
                    self.plugin
                ));
                Ok(None)
            }
        }
    }

    async fn elicit(
        &mut self,
        request: ElicitationRequest,
    ) -> wasmtime::Result<Result<ElicitationResponse, String>> {
        Ok(
            match self
                .ask_one("elicit", InputRequest::Elicit(request))
                .await?
            {
                Ok(InputResponse::Elicit(answer)) => Ok(answer),
                Ok(_) => Err("the client answered something else than an elicitation".into()),
                Err(why) => Err(why),
            },
        )
    }

    async fn sample(
        &mut self,
        request: SamplingRequest,
    ) -> wasmtime::Result<Result<SamplingResponse, String>> {
        Ok(
            match self
                .ask_one("sample", InputRequest::Sample(request))
                .await?
            {
                Ok(InputResponse::Sample(answer)) => Ok(answer),
                Ok(_) => Err("the client answered something else than a sampling result".into()),
                Err(why) => Err(why),
            },
        )
    }

    async fn ask(
        &mut self,
        mut requests: Vec<(String, InputRequest)>,
    ) -> wasmtime::Result<Answers> {
        if requests.len() > MAX_REQUESTS_PER_ASK {
            let why = format!("at most {MAX_REQUESTS_PER_ASK} requests per ask");
            return Ok(requests
                .into_iter()
                .map(|(key, _)| (key, Err(AskError::Failed(why.clone()))))
                .collect());
        }
        if let Err(why) = requests.iter().try_for_each(|(key, request)| {
            if key.starts_with(HOST_KEY_PREFIX) {
                return Err(format!(
                    "key `{key}`: keys starting with `{HOST_KEY_PREFIX}` are the host's own"
                ));
            }
            self.charge_output(key.len() as u64)
                .then_some(())
                .ok_or_else(|| "the keys pass the call's output limit".to_string())?;
            self.charge_request(request)
        }) {
            return Ok(requests
                .into_iter()
                .map(|(key, _)| (key, Err(AskError::Failed(why.clone()))))
                .collect());
        }
        let mut refused = Vec::new();
        for (key, request) in &mut requests {
            if let Err(why) = self.vet_question(request)? {
                refused.push((key.clone(), why));
            }
        }
        if !refused.is_empty() {
            return Ok(requests
                .into_iter()
                .map(|(key, _)| {
                    let why = refused
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map_or("another question of this ask was refused", |(_, why)| why);
                    (key, Err(AskError::Failed(why.to_string())))
                })
                .collect());
        }
        Ok(match &self.call.client {
            Some(client) => {
                let clock = self.call.task.then(|| self.asks.clock().clone());
                waiting_for_client(clock, client.ask(requests)).await
            }
            None => requests
                .into_iter()
                .map(|(key, _)| (key, Err(AskError::Failed(NO_CLIENT.into()))))
                .collect(),
        })
    }

    async fn notify_resource_updated(&mut self, uri: String) -> wasmtime::Result<()> {
        // The host matches each update against the plugin's own templates: that work is the
        // call's, bounded per call like its output.
        let steps = (uri.len() as u64).saturating_mul(self.template_bytes.max(1));
        let over = if uri.len() > MAX_URI_BYTES {
            Some(format!(
                "a URI of {} bytes, over {MAX_URI_BYTES}",
                uri.len()
            ))
        } else if self.update_steps.saturating_add(steps) > MAX_UPDATE_MATCH_STEPS {
            Some("more resource updates in one call than the host matches".to_string())
        } else {
            None
        };
        if let Some(why) = over {
            if !self.updates_dropped {
                self.updates_dropped = true;
                tracing::warn!(
                    plugin = &*self.plugin,
                    "resource updates of this call dropped: {why}"
                );
            }
            return Ok(());
        }
        self.update_steps += steps;
        tracing::debug!(
            plugin = &*self.plugin,
            uri = log_safe(&uri).as_ref(),
            "plugin reports a resource update"
        );
        self.report(PluginEvent::ResourceUpdated(uri));
        Ok(())
    }

    async fn notify_list_changed(&mut self, kind: ListKind) -> wasmtime::Result<()> {
        tracing::debug!(
            plugin = &*self.plugin,
            ?kind,
            "plugin reports a list change"
        );
        self.report(PluginEvent::ListChanged(kind));
        Ok(())
    }
}

impl StoreState {
    /// Checks a question the plugin puts to the client, and marks it as the plugin's: counted
    /// against `limits.questions_per_call` (past it the call stops, `Err`), a URL-mode one only
    /// to a host the plugin's `network` grants (`Ok(Err)` says why not), and every message the
    /// user reads prefixed with the plugin's name, so no plugin can word a question as the
    /// host's own (the host's confirmations and grant questions never carry the prefix).
    fn vet_question(&mut self, request: &mut InputRequest) -> wasmtime::Result<Result<(), String>> {
        if matches!(request, InputRequest::ListRoots) {
            return Ok(Ok(()));
        }
        self.questions += 1;
        if self.questions > self.questions_limit {
            return Err(wasmtime::Error::new(LimitExceeded::Questions {
                limit: self.questions_limit,
            }));
        }
        let InputRequest::Elicit(elicitation) = request else {
            return Ok(Ok(()));
        };
        let message = match elicitation {
            ElicitationRequest::Form(form) => &mut form.message,
            ElicitationRequest::Url(url) => {
                if let Err(why) = self.granted_url(&url.url) {
                    tracing::warn!(
                        plugin = &*self.plugin,
                        "URL-mode question refused: {}",
                        log_safe(&why)
                    );
                    return Ok(Err(why));
                }
                &mut url.message
            }
        };
        *message = format!("[plugin `{}`] {}", self.plugin, message.trim_start());
        Ok(Ok(()))
    }

    /// Whether the plugin may send the user to `url`: http(s), no credentials in it, a host its
    /// `network` grants (not one it might be granted by asking).
    fn granted_url(&self, url: &str) -> Result<(), String> {
        let refused = |why: &str| {
            Err(format!(
                "URL-mode elicitation to {}: {why}",
                log_safe(url.get(..200).unwrap_or(url))
            ))
        };
        let Ok(parsed) = url::Url::parse(url) else {
            return refused("not a URL");
        };
        let https = match parsed.scheme() {
            "https" => true,
            "http" => false,
            _ => return refused("only http and https URLs may be opened"),
        };
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return refused("a URL with credentials in it is refused");
        }
        let host = parsed.host_str().unwrap_or_default();
        let port = parsed.port_or_known_default().unwrap_or(443);
        if self
            .grants
            .network
            .iter()
            .any(|p| p.allows(https, host, port))
        {
            Ok(())
        } else {
            refused(
                "a plugin may send the user only to hosts its network grant lists (add the host to \
                 the plugin's `network` to allow it)",
            )
        }
    }

    /// `elicit` and `sample`, the single-question forms of `ask`: their keys number the
    /// questions in the order the plugin asks them, the same on every attempt of a call.
    /// `Err` stops the call (past `questions_per_call`); `Ok(Err)` is the plugin's to handle.
    async fn ask_one(
        &mut self,
        kind: &str,
        mut request: InputRequest,
    ) -> wasmtime::Result<Result<InputResponse, String>> {
        if let Err(why) = self.vet_question(&mut request)? {
            return Ok(Err(why));
        }
        Ok(self.send_one(kind, request).await)
    }

    /// [`StoreState::ask_one`] for a question already vetted.
    async fn send_one(
        &mut self,
        kind: &str,
        request: InputRequest,
    ) -> Result<InputResponse, String> {
        if self.call.client.is_none() {
            return Err(NO_CLIENT.to_string());
        }
        self.charge_request(&request)?;
        let Some(client) = &self.call.client else {
            return Err(NO_CLIENT.to_string());
        };
        self.asked += 1;
        let key = format!("{kind}-{}", self.asked);
        let clock = self.call.task.then(|| self.asks.clock().clone());
        let answer = waiting_for_client(clock, client.ask(vec![(key, request)]))
            .await
            .pop();
        match answer.map(|(_, a)| a) {
            Some(Ok(answer)) => Ok(answer),
            Some(Err(AskError::AwaitingAnswer)) => Err(AWAITING.to_string()),
            Some(Err(AskError::Failed(why))) => Err(why),
            None => Err("the client gave no answer".to_string()),
        }
    }
}

/// Waits for the client's `answers`. A task's `clock` stands still meanwhile: a task may wait
/// for its user for as long as the task lives, and only its own work counts.
async fn waiting_for_client(
    clock: Option<std::sync::Arc<crate::grant_ask::CallClock>>,
    answers: crate::call::PendingAnswers,
) -> Answers {
    let Some(clock) = clock else {
        return answers.await;
    };
    clock.pause();
    let answers = answers.await;
    clock.resume();
    answers
}

/// The longest resource URI the host routes (and so the longest update it matches).
pub const MAX_URI_BYTES: usize = 4096;

/// Work one call's resource updates may cost the host to match, in URI bytes times the bytes
/// of the plugin's templates (the matcher visits each template position once per URI byte):
/// about 20 ms of one core. A plugin with one short template sends thousands of updates
/// within it; one with many long templates and long URIs, a handful.
const MAX_UPDATE_MATCH_STEPS: u64 = 16 << 20;

/// Requests one `ask` may carry.
const MAX_REQUESTS_PER_ASK: usize = 16;

const AWAITING: &str = "awaiting the client's answer: this attempt ends, and the call runs again \
                        with the answer (MCP 2026-07-28)";

impl super::bindings::types::Host for StoreState {}
