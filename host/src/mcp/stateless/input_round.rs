//! Multi round-trip requests (2026-07-28): a plugin's questions to the client become input
//! requests in the result, and the client's retry brings the answers.
//!
//! Nothing is kept between attempts. An attempt runs the plugin from the start with every answer
//! known so far (those of earlier rounds, carried in the signed `requestState`, and the retry's
//! `inputResponses`). A question without an answer fails inside the plugin with
//! `awaiting-answer`; when the attempt ends, the unanswered questions go back to the client as
//! `inputRequests`, with a new `requestState` holding the answers used so far.

use parking_lot::Mutex;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::meta::{MISSING_CLIENT_CAPABILITY, RequestMeta};
use super::request_state::{RequestState, StateKey, request_digest};
use crate::mcp::jsonrpc::{INVALID_PARAMS, RpcError};
use crate::mcp::requests_to_client::{ClientView, Unaskable, input_request, input_response};
use crate::mcp::version::ProtocolVersion;
use crate::runtime::bindings::host::{AskError, InputRequest};
use crate::runtime::{Answers, ClientChannel, PendingAnswers};

/// Questions one attempt may leave unanswered.
const MAX_PENDING: usize = 16;

/// How `requestState` is signed and how long it lasts.
#[derive(Debug, Clone)]
pub struct StateSettings {
    /// The key `requestState` is signed with.
    pub key: StateKey,
    /// How long a `requestState` stays valid.
    pub ttl: std::time::Duration,
}

/// One attempt of a request that may ask the client for input.
pub(crate) struct InputRound {
    version: ProtocolVersion,
    capabilities: Value,
    /// Answers known to this attempt, by key.
    answers: Map<String, Value>,
    /// Who the state is issued to.
    principal: Arc<str>,
    /// Which request it resumes: computed only when a state is issued (most calls ask nothing).
    request: RequestKey,
    settings: StateSettings,
    asked: Mutex<Asked>,
}

/// What the plugin asked during the attempt.
#[derive(Default)]
struct Asked {
    /// Questions without an answer: key to `{method, params}`.
    pending: Map<String, Value>,
    /// Answers the plugin used, for the next round's state.
    used: Map<String, Value>,
    /// Capabilities the plugin needed that the client did not declare.
    missing: Map<String, Value>,
    /// The first answer that does not fit its question.
    invalid: Option<String>,
}

impl InputRound {
    /// The attempt a request starts: its `requestState` verified, its `inputResponses` checked.
    /// `target` is the tool, prompt or resource, and `arguments` what identifies the request
    /// besides it.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        settings: &StateSettings,
        meta: &RequestMeta,
        version: ProtocolVersion,
        principal: Arc<str>,
        method: &str,
        target: &str,
        arguments: &Value,
        params: &Map<String, Value>,
    ) -> Result<InputRound, RpcError> {
        let request = RequestKey {
            method: method.into(),
            target: target.into(),
            arguments: arguments.clone(),
        };
        let mut answers = match params.get("requestState") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::String(sealed)) => {
                RequestState::open(sealed, &settings.key, &principal, &request.digest())
                    .map_err(|e| RpcError::new(INVALID_PARAMS, e.to_string()))?
                    .answers
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.requestState must be the string this server returned",
                ));
            }
        };
        match params.get("inputResponses") {
            None | Some(Value::Null) => {}
            Some(Value::Object(responses)) => {
                for (key, answer) in responses {
                    if !answer.is_object() {
                        return Err(RpcError::invalid_params(format!(
                            "params.inputResponses[\"{key}\"] must be an object: the client's \
                             result for that input request"
                        )));
                    }
                    answers.insert(key.clone(), answer.clone());
                }
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.inputResponses must be an object mapping input request keys to \
                     the client's results",
                ));
            }
        }
        Ok(InputRound {
            version,
            capabilities: meta.capabilities.clone(),
            answers,
            principal,
            request,
            settings: settings.clone(),
            asked: Mutex::default(),
        })
    }

    fn asked(&self) -> parking_lot::MutexGuard<'_, Asked> {
        self.asked.lock()
    }

    /// Whether the plugin left questions unanswered in this attempt.
    pub fn awaiting(&self) -> bool {
        !self.asked().pending.is_empty()
    }

    /// What the attempt amounts to, when it is not the plugin's own result: an invalid answer
    /// (`-32602`), questions for the client (`input_required`), or, when the plugin failed after
    /// needing a capability the client lacks, `-32021`. `failed` says whether the plugin's
    /// attempt ended in an error.
    pub fn outcome(&self, failed: bool) -> Option<Result<Value, RpcError>> {
        let asked = self.asked();
        if let Some(why) = &asked.invalid {
            return Some(Err(RpcError::invalid_params(why.clone())));
        }
        if !asked.pending.is_empty() {
            let state = RequestState::new(
                self.settings.ttl,
                &self.principal,
                self.request.digest(),
                asked.used.clone(),
            )
            .seal(&self.settings.key);
            return Some(match state {
                Ok(state) => Ok(json!({
                    "resultType": "input_required",
                    "inputRequests": asked.pending,
                    "requestState": state,
                })),
                Err(e) => Err(RpcError::invalid_params(format!(
                    "the answers of this request no longer fit in a requestState: {e}"
                ))),
            });
        }
        if failed && !asked.missing.is_empty() {
            let names: Vec<&str> = asked.missing.keys().map(String::as_str).collect();
            return Some(Err(RpcError::new(
                MISSING_CLIENT_CAPABILITY,
                format!(
                    "this request needs the client capabilities {}, which the request's \
                     clientCapabilities do not declare",
                    names.join(", ")
                ),
            )
            .with_data(json!({ "requiredCapabilities": asked.missing }))));
        }
        None
    }

    fn answer(
        &self,
        key: &str,
        request: InputRequest,
    ) -> Result<crate::runtime::bindings::host::InputResponse, AskError> {
        let client = ClientView {
            version: self.version,
            capabilities: &self.capabilities,
        };
        let (method, params) = match input_request(&client, request) {
            Ok(shaped) => shaped,
            Err(Unaskable::Missing(capability)) => {
                self.asked().missing.insert(capability.into(), json!({}));
                return Err(AskError::Failed(Unaskable::Missing(capability).to_string()));
            }
            Err(why) => return Err(AskError::Failed(why.to_string())),
        };
        let mut asked = self.asked();
        match self.answers.get(key) {
            Some(answer) => match input_response(method, answer.clone()) {
                Ok(response) => {
                    asked.used.insert(key.into(), answer.clone());
                    Ok(response)
                }
                Err(why) => {
                    let why =
                        format!("params.inputResponses[\"{key}\"] does not answer {method}: {why}");
                    asked.invalid.get_or_insert(why.clone());
                    Err(AskError::Failed(why))
                }
            },
            None if asked.pending.len() >= MAX_PENDING && !asked.pending.contains_key(key) => {
                Err(AskError::Failed(format!(
                    "at most {MAX_PENDING} questions may wait for the client at once"
                )))
            }
            None => {
                asked
                    .pending
                    .insert(key.into(), json!({ "method": method, "params": params }));
                Err(AskError::AwaitingAnswer)
            }
        }
    }
}

/// What makes a retry the same request.
struct RequestKey {
    method: String,
    target: String,
    arguments: Value,
}

impl RequestKey {
    fn digest(&self) -> String {
        request_digest(&self.method, &self.target, &self.arguments)
    }
}

impl ClientChannel for InputRound {
    fn ask(&self, requests: Vec<(String, InputRequest)>) -> PendingAnswers {
        let answers: Answers = requests
            .into_iter()
            .map(|(key, request)| {
                let answer = self.answer(&key, request);
                (key, answer)
            })
            .collect();
        Box::pin(std::future::ready(answers))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::runtime::bindings::host::{
        ElicitationAction, ElicitationRequest, FormElicitation, InputResponse,
    };

    fn meta(capabilities: Value) -> RequestMeta {
        RequestMeta::parse(
            json!({ "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            }})
            .as_object()
            .unwrap(),
        )
        .unwrap()
    }

    fn settings() -> StateSettings {
        StateSettings {
            key: StateKey::from_secret(&"s".repeat(32)).unwrap(),
            ttl: Duration::from_secs(60),
        }
    }

    fn round(capabilities: Value, params: Value) -> Result<InputRound, RpcError> {
        InputRound::open(
            &settings(),
            &meta(capabilities),
            ProtocolVersion::V2026_07_28,
            "alice".into(),
            "tools/call",
            "t",
            &json!({}),
            params.as_object().unwrap(),
        )
    }

    fn question() -> InputRequest {
        InputRequest::Elicit(ElicitationRequest::Form(FormElicitation {
            message: "Name?".into(),
            requested_schema: r#"{"type":"object","properties":{"name":{"type":"string"}}}"#.into(),
        }))
    }

    fn ask(round: &InputRound, key: &str) -> Result<InputResponse, AskError> {
        round.answer(key, question())
    }

    #[test]
    fn unanswered_questions_come_back_with_a_state_that_carries_used_answers() {
        let caps = json!({ "elicitation": {} });
        let first = round(caps.clone(), json!({})).unwrap();
        assert!(matches!(ask(&first, "name"), Err(AskError::AwaitingAnswer)));
        let Some(Ok(result)) = first.outcome(true) else {
            panic!()
        };
        assert_eq!(result["resultType"], "input_required");
        assert_eq!(
            result["inputRequests"]["name"]["method"],
            "elicitation/create"
        );
        let state = result["requestState"].as_str().unwrap().to_string();

        // Round two answers `name` and asks `color`; round three gets both.
        let second = round(
            caps.clone(),
            json!({
                "requestState": state,
                "inputResponses": { "name": { "action": "accept", "content": { "name": "Ann" } } },
            }),
        )
        .unwrap();
        assert!(
            matches!(ask(&second, "name"), Ok(InputResponse::Elicit(r)) if r.action == ElicitationAction::Accept)
        );
        assert!(matches!(
            ask(&second, "color"),
            Err(AskError::AwaitingAnswer)
        ));
        let Some(Ok(result)) = second.outcome(true) else {
            panic!()
        };
        assert!(result["inputRequests"].get("name").is_none());
        let third = round(
            caps,
            json!({
                "requestState": result["requestState"],
                "inputResponses": { "color": { "action": "accept", "content": { "name": "red" } } },
            }),
        )
        .unwrap();
        assert!(ask(&third, "name").is_ok() && ask(&third, "color").is_ok());
        assert!(third.outcome(false).is_none());
    }

    #[test]
    fn undeclared_capabilities_are_never_asked_and_become_32021_on_failure() {
        let round = round(json!({ "sampling": {} }), json!({})).unwrap();
        assert!(matches!(ask(&round, "name"), Err(AskError::Failed(_))));
        assert!(round.outcome(false).is_none());
        let Some(Err(error)) = round.outcome(true) else {
            panic!()
        };
        assert_eq!(error.code, MISSING_CLIENT_CAPABILITY);
        assert_eq!(
            error.data,
            Some(json!({ "requiredCapabilities": { "elicitation": {} } }))
        );
    }

    #[test]
    fn bad_responses_and_states_are_invalid_params() {
        let caps = json!({ "elicitation": {} });
        for params in [
            json!({ "inputResponses": 12 }),
            json!({ "inputResponses": { "name": 12345 } }),
            json!({ "requestState": "forged.state" }),
            json!({ "requestState": 7 }),
        ] {
            assert_eq!(
                round(caps.clone(), params).err().unwrap().code,
                INVALID_PARAMS
            );
        }
        let wrong = round(caps, json!({ "inputResponses": { "name": { "nope": 1 } } })).unwrap();
        assert!(ask(&wrong, "name").is_err());
        assert_eq!(
            wrong.outcome(true).unwrap().unwrap_err().code,
            INVALID_PARAMS
        );
    }
}
