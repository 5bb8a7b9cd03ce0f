//! Asking the user, through the client's elicitation, for a host or environment variable a
//! plugin with `ask = true` reached for without a grant: allow once, always (remembered in
//! `palisade.grants`), or deny. Every outcome is logged and audited.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::audit::AuditLog;
use crate::grants::UserGrants;
use crate::runtime::bindings::host::{
    AskError, ElicitationAction, ElicitationRequest, FormElicitation, InputRequest, InputResponse,
};
use crate::runtime::{
    CallContext, Capability, Decision, GrantDecider, HostPattern, PendingDecision, Unasked,
};

/// The choices of the form, as the client shows them.
const ONCE: &str = "Allow once";
const ALWAYS: &str = "Always allow";
const DENY: &str = "Deny";

/// The server's [`GrantDecider`]: remembered grants, the question, the audit line.
pub struct GrantQuestions {
    grants: Arc<UserGrants>,
    audit: Option<Arc<AuditLog>>,
}

impl GrantQuestions {
    /// Questions about grants, remembering "always" in `grants` and auditing to `audit`.
    pub fn new(grants: UserGrants, audit: Option<Arc<AuditLog>>) -> GrantQuestions {
        GrantQuestions {
            grants: Arc::new(grants),
            audit,
        }
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
        Box::pin(async move {
            let outcome = match client {
                Some(client) => {
                    let question = question(&plugin, &capability, grants.path().is_some());
                    let mut answers = client
                        .ask(vec![(capability.question_key(), question)])
                        .await;
                    decision(answers.pop().map(|(_, answer)| answer))
                }
                None => Err(Unasked::Failed("no client to ask".into())),
            };
            let outcome = match outcome {
                Ok(Decision::Always) => match grants.remember(&plugin, &capability, &caller) {
                    Ok(()) => Ok(Decision::Always),
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
            record(audit.as_deref(), &caller, &plugin, &capability, &outcome);
            outcome
        })
    }
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
    let (kind, grant) = match capability {
        Capability::Host(grant) => ("network", grant),
        Capability::EnvVar(name) => ("env", name),
    };
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
