//! Asking the user, through the client's elicitation, for a host or environment variable a
//! plugin with `ask = true` reached for without a grant: allow once, always (remembered in
//! `palisade.grants`), or deny. Every outcome is logged and audited. With the operator's console,
//! the questions waiting are listed there and an operator may answer them, so a client that
//! cannot show a question no longer means a refusal.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::audit::AuditLog;
use crate::grants::UserGrants;
use crate::runtime::bindings::host::{
    AskError, ElicitationAction, ElicitationRequest, FormElicitation, InputRequest, InputResponse,
};
use crate::runtime::{
    CallContext, Capability, Decision, GrantDecider, HostPattern, PendingDecision, Unasked,
};
use crate::telemetry::{Activity, Topic};

/// The choices of the form, as the client shows them.
const ONCE: &str = "Allow once";
const ALWAYS: &str = "Always allow";
const DENY: &str = "Deny";

/// The server's [`GrantDecider`]: remembered grants, the question, the audit line; and, with the
/// operator's console, the questions waiting for an answer, which an operator may give.
pub struct GrantQuestions {
    grants: Arc<UserGrants>,
    audit: Option<Arc<AuditLog>>,
    activity: Arc<Activity>,
    /// Questions asked and not answered yet, by their id.
    waiting: Arc<Mutex<BTreeMap<String, Waiting>>>,
    /// Set when operators can answer (the console is served): how long a question the client
    /// cannot show waits for them.
    operators_answer: OnceLock<Duration>,
}

/// A grant question waiting for an answer, as the console lists it.
#[derive(Debug, Clone)]
pub struct WaitingQuestion {
    /// Its id: what an answer names.
    pub id: String,
    /// The plugin that reached for it.
    pub plugin: Arc<str>,
    /// `network` or `env`.
    pub kind: &'static str,
    /// The host grant, or the variable's name.
    pub grant: String,
    /// Whose call it is.
    pub client: Arc<str>,
    /// When it was asked.
    pub asked: SystemTime,
    /// Whether the client is asked too (else only an operator can answer).
    pub client_asked: bool,
}

struct Waiting {
    view: WaitingQuestion,
    answer: Option<oneshot::Sender<(Decision, Arc<str>)>>,
}

/// A grant the user or an operator remembered ("always").
#[derive(Debug, Clone)]
pub struct RememberedGrant {
    /// The plugin given it.
    pub plugin: String,
    /// `network` or `env`.
    pub kind: &'static str,
    /// The host grant, or the variable's name.
    pub grant: String,
    /// When (RFC 3339).
    pub at: String,
    /// Who answered: a client, or `operator:NAME`.
    pub by: String,
}

/// What an operator's answer or revocation could not do.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The question was answered, or its call ended, before the operator's answer arrived.
    #[error("that question is no longer waiting: it was answered, or its call ended")]
    NoSuchQuestion,
    /// Nothing to revoke.
    #[error("`{0}` has no remembered grant `{1}`")]
    NoSuchGrant(String, String),
    /// The grants file could not be written.
    #[error("cannot change the remembered grants: {0:#}")]
    Grants(anyhow::Error),
}

impl GrantQuestions {
    /// Questions about grants, remembering "always" in `grants`, auditing to `audit`, telling
    /// `activity` when the questions or the grants change.
    pub fn new(
        grants: UserGrants,
        audit: Option<Arc<AuditLog>>,
        activity: Arc<Activity>,
    ) -> GrantQuestions {
        GrantQuestions {
            grants: Arc::new(grants),
            audit,
            activity,
            waiting: Arc::default(),
            operators_answer: OnceLock::new(),
        }
    }

    /// Lets operators answer questions (the console is served): a question the client cannot
    /// show then waits `wait` for one rather than being refused at once.
    pub fn let_operators_answer(&self, wait: Duration) {
        let _ = self.operators_answer.set(wait);
    }

    /// The questions waiting for an answer, oldest first.
    pub fn waiting(&self) -> Vec<WaitingQuestion> {
        let mut list: Vec<_> = self
            .waiting
            .lock()
            .values()
            .map(|w| w.view.clone())
            .collect();
        list.sort_by_key(|q| q.asked);
        list
    }

    /// `operator`'s answer to question `id`: the call waiting on it goes on with it.
    pub fn answer(
        &self,
        id: &str,
        decision: Decision,
        operator: &str,
    ) -> Result<WaitingQuestion, OperatorError> {
        let mut waiting = self.waiting.lock();
        let entry = waiting.get_mut(id).ok_or(OperatorError::NoSuchQuestion)?;
        let sender = entry.answer.take().ok_or(OperatorError::NoSuchQuestion)?;
        sender
            .send((decision, operator.into()))
            .map_err(|_| OperatorError::NoSuchQuestion)?;
        Ok(entry.view.clone())
    }

    /// Every remembered grant, plugin by plugin.
    pub fn remembered(&self) -> Vec<RememberedGrant> {
        let file = self.grants.list();
        let mut list = Vec::new();
        for (plugin, grants) in file.plugins {
            for (kind, entries) in [("network", grants.network), ("env", grants.env)] {
                list.extend(entries.into_iter().map(|g| RememberedGrant {
                    plugin: plugin.clone(),
                    kind,
                    grant: g.grant,
                    at: g.at,
                    by: g.by,
                }));
            }
        }
        list
    }

    /// Removes `plugin`'s remembered grant `grant`: its next reach asks again. A call already
    /// allowed keeps what it was allowed until it ends.
    pub fn revoke(&self, plugin: &str, grant: &str) -> Result<(), OperatorError> {
        let removed = self
            .grants
            .revoke(plugin, grant)
            .map_err(OperatorError::Grants)?;
        if removed.is_empty() {
            return Err(OperatorError::NoSuchGrant(plugin.into(), grant.into()));
        }
        self.activity.changed(Topic::Grants);
        Ok(())
    }

    /// Whether the grants remembered are kept in a file (else until the server stops).
    pub fn remembered_in_file(&self) -> bool {
        self.grants.path().is_some()
    }
}

/// A question's place among those waiting; dropping it (answered, or its call gone) takes it
/// off.
struct Asked {
    waiting: Arc<Mutex<BTreeMap<String, Waiting>>>,
    id: String,
    activity: Arc<Activity>,
}

impl Asked {
    /// The client could not be asked: only an operator can answer now.
    fn client_cannot_answer(&self) {
        if let Some(waiting) = self.waiting.lock().get_mut(&self.id) {
            waiting.view.client_asked = false;
        }
        self.activity.changed(Topic::Grants);
    }
}

impl Drop for Asked {
    fn drop(&mut self) {
        self.waiting.lock().remove(&self.id);
        self.activity.changed(Topic::Grants);
    }
}

impl GrantDecider for GrantQuestions {
    fn remembered(&self, plugin: &str, capability: &Capability) -> bool {
        self.grants.allows(plugin, capability)
    }

    fn ask(&self, plugin: Arc<str>, capability: Capability, call: &CallContext) -> PendingDecision {
        let (grants, audit) = (self.grants.clone(), self.audit.clone());
        let client = call.client.clone();
        let caller = call.caller.clone().unwrap_or_else(|| "the host".into());
        // With operators able to answer, the question is listed for them while it waits.
        let operators = self.operators_answer.get().map(|&wait| {
            let (tx, rx) = oneshot::channel();
            let id = question_id();
            let (kind, grant) = kind_and_grant(&capability);
            self.waiting.lock().insert(
                id.clone(),
                Waiting {
                    view: WaitingQuestion {
                        id: id.clone(),
                        plugin: plugin.clone(),
                        kind,
                        grant: grant.to_string(),
                        client: caller.clone(),
                        asked: SystemTime::now(),
                        client_asked: client.is_some(),
                    },
                    answer: Some(tx),
                },
            );
            self.activity.changed(Topic::Grants);
            let listed = Asked {
                waiting: self.waiting.clone(),
                id,
                activity: self.activity.clone(),
            };
            (rx, wait, listed)
        });
        let activity = self.activity.clone();
        Box::pin(async move {
            let from_client = async {
                match client {
                    Some(client) => {
                        let question = question(&plugin, &capability, grants.path().is_some());
                        let mut answers = client
                            .ask(vec![(capability.question_key(), question)])
                            .await;
                        decision(answers.pop().map(|(_, answer)| answer))
                    }
                    None => Err(Unasked::Failed("no client to ask".into())),
                }
            };
            let (outcome, by) = match operators {
                None => (from_client.await, caller.clone()),
                Some((mut from_operator, wait, listed)) => {
                    tokio::pin!(from_client);
                    let by_operator = |(decision, operator): (Decision, Arc<str>)| {
                        (Ok(decision), Arc::from(format!("operator:{operator}")))
                    };
                    tokio::select! {
                        biased;
                        Ok(answer) = &mut from_operator => by_operator(answer),
                        outcome = &mut from_client => match outcome {
                            // The client cannot show the question: an operator still may.
                            Err(Unasked::Failed(why)) => {
                                listed.client_cannot_answer();
                                match tokio::time::timeout(wait, from_operator).await {
                                    Ok(Ok(answer)) => by_operator(answer),
                                    _ => (
                                        Err(Unasked::Failed(format!(
                                            "{why}; no operator answered in the console within {}s",
                                            wait.as_secs()
                                        ))),
                                        caller.clone(),
                                    ),
                                }
                            }
                            other => (other, caller.clone()),
                        },
                    }
                }
            };
            let outcome = match outcome {
                Ok(Decision::Always) => match grants.remember(&plugin, &capability, &by) {
                    Ok(()) => {
                        activity.changed(Topic::Grants);
                        Ok(Decision::Always)
                    }
                    Err(e) => {
                        tracing::error!(
                            plugin = &*plugin,
                            "cannot remember the grant, allowing it once: {e:#}"
                        );
                        Ok(Decision::Once)
                    }
                },
                other => other,
            };
            record(audit.as_deref(), &by, &plugin, &capability, &outcome);
            outcome
        })
    }
}

/// A capability as the grants file and the audit log name it.
fn kind_and_grant(capability: &Capability) -> (&'static str, &str) {
    match capability {
        Capability::Host(grant) => ("network", grant),
        Capability::EnvVar(name) => ("env", name),
    }
}

/// 128 random bits, in hex: a question's id.
fn question_id() -> String {
    let mut bytes = [0u8; 16];
    // Without randomness the id is still unique enough among the few questions waiting: it is
    // an operator's handle, not a secret.
    if getrandom::fill(&mut bytes).is_err() {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_le_bytes());
    }
    hex::encode(bytes)
}

/// The form put to the user.
fn question(plugin: &str, capability: &Capability, remembered_in_file: bool) -> InputRequest {
    let what = match capability {
        Capability::Host(grant) => {
            let local = HostPattern::parse(grant).is_ok_and(|p| p.names_local_address());
            let note = if local {
                " This address is on the server's own machine or private network."
            } else {
                ""
            };
            format!("The plugin `{plugin}` wants to reach {grant}, which it was not granted.{note}")
        }
        Capability::EnvVar(name) => format!(
            "The plugin `{plugin}` wants to read the server's environment variable {name}, \
             which it was not granted. Its value would be given to the plugin."
        ),
    };
    let always = if remembered_in_file {
        "\"Always allow\" is remembered in palisade.grants (`palisade grants revoke` undoes it)."
    } else {
        "\"Always allow\" lasts until the server stops (it has no configuration file to remember it in)."
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "Allow once: for this call only. Deny: the plugin goes without.",
                "enum": [ONCE, ALWAYS, DENY],
                "default": DENY,
            }
        },
        "required": ["decision"],
    });
    InputRequest::Elicit(ElicitationRequest::Form(FormElicitation {
        message: format!("{what}\n{always}"),
        requested_schema: schema.to_string(),
    }))
}

/// The user's decision in the client's answer. Anything but a clear allow denies.
fn decision(answer: Option<Result<InputResponse, AskError>>) -> Result<Decision, Unasked> {
    match answer {
        Some(Ok(InputResponse::Elicit(answer))) if answer.action == ElicitationAction::Accept => {
            let content: Value = answer
                .content
                .as_deref()
                .and_then(|c| serde_json::from_str(c).ok())
                .unwrap_or_default();
            Ok(match content.get("decision").and_then(Value::as_str) {
                Some(ONCE) => Decision::Once,
                Some(ALWAYS) => Decision::Always,
                _ => Decision::Deny,
            })
        }
        Some(Ok(_)) => Ok(Decision::Deny),
        Some(Err(AskError::AwaitingAnswer)) => Err(Unasked::AwaitingAnswer),
        Some(Err(AskError::Failed(why))) => Err(Unasked::Failed(format!(
            "the user could not be asked ({why}); grant it in the configuration"
        ))),
        None => Err(Unasked::Failed("the client gave no answer".into())),
    }
}

/// The server's log and the audit log say what was decided, and by whom.
fn record(
    audit: Option<&AuditLog>,
    caller: &str,
    plugin: &str,
    capability: &Capability,
    outcome: &Result<Decision, Unasked>,
) {
    let (outcome, detail) = match outcome {
        Ok(Decision::Once) => ("grant-once", None),
        Ok(Decision::Always) => ("grant-always", None),
        Ok(Decision::Deny) => ("grant-denied", None),
        // The answer comes with the retry, and is recorded then.
        Err(Unasked::AwaitingAnswer) => return,
        Err(Unasked::Failed(why)) => ("grant-unasked", Some(why.as_str())),
    };
    let (kind, grant) = kind_and_grant(capability);
    tracing::info!(
        plugin,
        client = caller,
        "{outcome}: {kind} {grant}{}",
        detail.map(|d| format!(" ({d})")).unwrap_or_default()
    );
    if let Some(log) = audit {
        log.record_grant(caller, plugin, kind, grant, outcome, detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::bindings::host::ElicitationResponse;

    fn accept(content: Value) -> Option<Result<InputResponse, AskError>> {
        Some(Ok(InputResponse::Elicit(ElicitationResponse {
            action: ElicitationAction::Accept,
            content: Some(content.to_string()),
        })))
    }

    #[test]
    fn only_a_clear_allow_allows() {
        assert_eq!(
            decision(accept(json!({"decision": ONCE}))),
            Ok(Decision::Once)
        );
        assert_eq!(
            decision(accept(json!({"decision": ALWAYS}))),
            Ok(Decision::Always)
        );
        assert_eq!(
            decision(accept(json!({"decision": DENY}))),
            Ok(Decision::Deny)
        );
        assert_eq!(
            decision(accept(json!({"decision": "yes"}))),
            Ok(Decision::Deny)
        );
        assert_eq!(decision(accept(json!({}))), Ok(Decision::Deny));
        let declined = Some(Ok(InputResponse::Elicit(ElicitationResponse {
            action: ElicitationAction::Decline,
            content: None,
        })));
        assert_eq!(decision(declined), Ok(Decision::Deny));
        assert_eq!(
            decision(Some(Err(AskError::AwaitingAnswer))),
            Err(Unasked::AwaitingAnswer)
        );
        assert!(matches!(
            decision(Some(Err(AskError::Failed("no elicitation".into())))),
            Err(Unasked::Failed(why)) if why.contains("no elicitation")
        ));
    }

    #[test]
    fn the_question_names_plugin_and_grant_and_warns_of_local_addresses() {
        let text = |q: InputRequest| match q {
            InputRequest::Elicit(ElicitationRequest::Form(f)) => f.message,
            _ => unreachable!(),
        };
        let public = text(question(
            "w",
            &Capability::Host("api.example.com".into()),
            true,
        ));
        assert!(
            public.contains("`w` wants to reach api.example.com"),
            "{public}"
        );
        assert!(public.contains("palisade.grants"), "{public}");
        assert!(!public.contains("private network"), "{public}");
        let local = text(question(
            "w",
            &Capability::Host("http://127.0.0.1:8080".into()),
            false,
        ));
        assert!(local.contains("private network"), "{local}");
        assert!(local.contains("until the server stops"), "{local}");
    }
}
