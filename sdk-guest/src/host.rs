//! What the host offers a plugin while it serves a request.
//!
//! Every function acts on the request the current call belongs to. They are only usable inside
//! the component: on a native target they panic.
//!
//! # Asking the client
//!
//! [`ask`] puts questions to the client: the user ([`InputRequest::Elicit`]), its language
//! model ([`InputRequest::Sample`]) or its list of roots ([`InputRequest::ListRoots`]). It works
//! with every MCP revision, but over 2026-07-28 (multi round-trip requests) the client answers
//! *between* runs of the call, not during it:
//!
//! 1. the first run asks; [`ask`] answers each question with [`AskError::AwaitingAnswer`]
//!    (or [`AskError::Failed`], when the client lacks the capability); the tool should return
//!    at once (anything: its result is discarded) and the host tells the client what it needs
//!    (`resultType: "input_required"`);
//! 2. the client gathers the answers and sends the same call again with them; the host runs the
//!    tool again *from the start*, and this time [`ask`] returns the answers.
//!
//! Hence three rules:
//!
//! - **Stable keys.** A question's key names the question (`"user_name"`), never the attempt: the
//!   host finds the answer by key, so ask the same thing under the same key on every run.
//! - **Work before asking is done again.** Anything before the [`ask`] runs once per round trip:
//!   keep it cheap and free of effects that must not repeat (ask first, then act).
//! - **Return quickly while awaiting.** Check [`Answers::awaiting`] (or use `?` on
//!   [`Answers::ready`] or on an answer) and stop; a question that depends on an earlier answer
//!   is asked in a later run, once that answer is in.
//!
//! Over earlier revisions the host sends the questions to the client at once and [`ask`] waits
//! for the answers, so the same code works there too.
//!
//! ```no_run
//! use palisade_sdk::host::{self, InputRequest};
//! use palisade_sdk::NoArgs;
//! use serde_json::json;
//!
//! fn greet(_: NoArgs) -> Result<String, String> {
//!     let answers = host::ask([(
//!         "user_name",
//!         InputRequest::form(
//!             "What is your name?",
//!             &json!({
//!                 "type": "object",
//!                 "properties": { "name": { "type": "string" } },
//!                 "required": ["name"],
//!             }),
//!         ),
//!     )]);
//!     // Awaiting (or failed): `?` returns early; an awaited call's result is discarded.
//!     let answer = answers.elicitation("user_name")?;
//!     match answer.field("name") {
//!         Some(serde_json::Value::String(name)) => Ok(format!("Hello, {name}!")),
//!         _ => Ok("Hello, stranger!".into()),
//!     }
//! }
//! ```

use serde_json::Value;

use crate::bindings::palisade::plugin::host as raw;
use crate::types::{ContentBlock, PluginError, Role};

/// The questions [`ask`] takes and the answers it returns, as generated.
pub use raw::{AskError, ClientRoot, InputRequest, InputResponse};
/// Less common host functions, re-exported as generated: asking the user (`elicit`) and asking
/// the client's model (`sample`). Both block until the client answers; prefer [`ask`], which also
/// works over MCP 2026-07-28, where a server may not send requests of its own during a call.
pub use raw::{
    ElicitationAction, ElicitationRequest, ElicitationResponse, FormElicitation, SamplingMessage,
    SamplingRequest, SamplingResponse, UrlElicitation, elicit, sample,
};
pub use raw::{ListKind, LogLevel, Root};

/// Writes a log message: to the host's log, tagged with the plugin's name, and to the MCP client
/// when it asked for this level.
pub fn log(level: LogLevel, message: &str) {
    raw::log(level, message);
}

/// Reports progress on the current request. `progress` should grow with every report; `total`
/// is the value it reaches at the end, if known.
pub fn report_progress(progress: f64, total: Option<f64>, message: Option<&str>) {
    raw::report_progress(progress, total, message);
}

/// True once the client has cancelled the current request. A long-running tool should check now
/// and then and stop; the host stops it anyway at its next chance.
pub fn is_cancelled() -> bool {
    raw::is_cancelled()
}

/// The server's environment variable `name`, when this plugin may read it: granted in its
/// configuration (`env`, also in `std::env`), granted "always" by a user before, or, for a
/// plugin with `ask = true`, allowed by the user when asked now. `None` otherwise, and when it
/// is not set.
pub fn get_env(name: &str) -> Option<String> {
    raw::get_env(name)
}

/// The client's directories this plugin may use for the current request, each with the path the
/// plugin sees it at (such as `/home/me/project`, or `/roots/project` with `roots_at = "/roots"`).
pub fn list_roots() -> Vec<Root> {
    raw::list_roots()
}

/// Tells the host that the resource at `uri` changed: clients subscribed to it get
/// `notifications/resources/updated`. A resource listed with a
/// [`file`](crate::ResourceInfo::file) is watched by the host anyway; call this for changes the
/// host cannot see, or right after writing the file yourself.
pub fn notify_resource_updated(uri: &str) {
    raw::notify_resource_updated(uri);
}

/// Tells the host that one of this plugin's lists changed (tools, resources and templates, or
/// prompts); the host asks for it again and tells clients (`notifications/.../list_changed`).
pub fn notify_list_changed(kind: ListKind) {
    raw::notify_list_changed(kind);
}

/// Asks the client several things at once, each under a key the plugin chooses, and returns the
/// answers by key. See [the module documentation](self#asking-the-client) for how this works
/// over MCP 2026-07-28: keys must be the same on every run, work done before asking is done
/// again, and a tool should return quickly while [`Answers::awaiting`].
///
/// ```no_run
/// use palisade_sdk::host::{self, InputRequest};
///
/// let answers = host::ask([
///     ("summary", InputRequest::sample_text("Summarize: ...", 200)),
///     ("client_roots", InputRequest::ListRoots),
/// ]);
/// if answers.awaiting() {
///     return; // the call runs again, with the answers
/// }
/// let roots = answers.roots("client_roots").map(<[_]>::len).unwrap_or(0);
/// ```
///
/// The generated function, which takes and returns lists of pairs, is
/// `palisade_sdk::bindings::palisade::plugin::host::ask`.
pub fn ask<K: Into<String>>(requests: impl IntoIterator<Item = (K, InputRequest)>) -> Answers {
    let requests: Vec<(String, InputRequest)> = requests
        .into_iter()
        .map(|(key, request)| (key.into(), request))
        .collect();
    Answers {
        answers: raw::ask(&requests),
    }
}

/// The answers [`ask`] returned, by key.
///
/// The typed getters ([`elicitation`](Self::elicitation), [`sampling`](Self::sampling),
/// [`roots`](Self::roots)) return an [`AskError`] when there is no answer, so a function
/// returning `Result<_, String>` or `Result<_, PluginError>` can stop with `?`: while awaiting,
/// its result is discarded anyway.
#[derive(Clone, Debug)]
pub struct Answers {
    answers: Vec<(String, Result<InputResponse, AskError>)>,
}

impl Answers {
    /// Builds answers by hand, to test a function that takes them.
    pub fn new<K: Into<String>>(
        answers: impl IntoIterator<Item = (K, Result<InputResponse, AskError>)>,
    ) -> Self {
        Answers {
            answers: answers.into_iter().map(|(k, a)| (k.into(), a)).collect(),
        }
    }

    /// True when the client has yet to answer at least one question (MCP 2026-07-28): return
    /// quickly, the call runs again with the answers. Never true over earlier revisions.
    pub fn awaiting(&self) -> bool {
        self.answers
            .iter()
            .any(|(_, answer)| matches!(answer, Err(AskError::AwaitingAnswer)))
    }

    /// `Err(AwaitingAnswer)` while [`awaiting`](Self::awaiting), so `answers.ready()?` returns
    /// early before looking at any answer; `Ok` otherwise (some answers may still have
    /// failed).
    pub fn ready(&self) -> Result<(), AskError> {
        if self.awaiting() {
            Err(AskError::AwaitingAnswer)
        } else {
            Ok(())
        }
    }

    /// The answer under `key`; `None` when nothing was asked under it.
    pub fn get(&self, key: &str) -> Option<&Result<InputResponse, AskError>> {
        self.answers.iter().find(|(k, _)| k == key).map(|(_, a)| a)
    }

    /// Every key and its answer, in the order asked.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Result<InputResponse, AskError>)> {
        self.answers.iter().map(|(k, a)| (k.as_str(), a))
    }

    /// The user's answer to the question under `key`.
    pub fn elicitation(&self, key: &str) -> Result<&ElicitationResponse, AskError> {
        match self.answered(key)? {
            InputResponse::Elicit(response) => Ok(response),
            _ => Err(wrong_kind(key, "an elicitation")),
        }
    }

    /// The model's answer to the request under `key`.
    pub fn sampling(&self, key: &str) -> Result<&SamplingResponse, AskError> {
        match self.answered(key)? {
            InputResponse::Sample(response) => Ok(response),
            _ => Err(wrong_kind(key, "a sampling")),
        }
    }

    /// The client's roots, asked under `key`.
    pub fn roots(&self, key: &str) -> Result<&[ClientRoot], AskError> {
        match self.answered(key)? {
            InputResponse::ListRoots(roots) => Ok(roots),
            _ => Err(wrong_kind(key, "a roots")),
        }
    }

    fn answered(&self, key: &str) -> Result<&InputResponse, AskError> {
        match self.get(key) {
            Some(answer) => answer.as_ref().map_err(Clone::clone),
            None => Err(AskError::Failed(format!("nothing was asked under `{key}`"))),
        }
    }
}

impl IntoIterator for Answers {
    type Item = (String, Result<InputResponse, AskError>);
    type IntoIter = std::vec::IntoIter<Self::Item>;

    fn into_iter(self) -> Self::IntoIter {
        self.answers.into_iter()
    }
}

fn wrong_kind(key: &str, kind: &str) -> AskError {
    AskError::Failed(format!("the answer under `{key}` is not {kind} answer"))
}

impl InputRequest {
    /// A form for the user: `message` and the JSON Schema of its fields (an object of primitive
    /// properties).
    pub fn form(message: impl Into<String>, schema: &Value) -> Self {
        InputRequest::Elicit(ElicitationRequest::Form(FormElicitation {
            message: message.into(),
            requested_schema: schema.to_string(),
        }))
    }

    /// A request for the client's model: one text message from the user, at most `max_tokens`
    /// tokens back. For more control, build a [`SamplingRequest`] and wrap it in
    /// [`InputRequest::Sample`].
    pub fn sample_text(text: impl Into<String>, max_tokens: u32) -> Self {
        InputRequest::Sample(SamplingRequest {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: vec![ContentBlock::text(text)],
            }],
            system_prompt: None,
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            extra: None,
        })
    }
}

impl ElicitationResponse {
    /// True when the user submitted the form or agreed.
    pub fn accepted(&self) -> bool {
        self.action == ElicitationAction::Accept
    }

    /// The submitted value of the form field `name`, when the user accepted and filled it in.
    pub fn field(&self, name: &str) -> Option<Value> {
        if !self.accepted() {
            return None;
        }
        let content: Value = serde_json::from_str(self.content.as_deref()?).ok()?;
        content.get(name).cloned()
    }
}

impl SamplingResponse {
    /// The text blocks of the answer, joined by newlines (empty when it has none).
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

impl AskError {
    /// True when the client answers after this run ends (MCP 2026-07-28): return quickly.
    pub fn is_awaiting(&self) -> bool {
        matches!(self, AskError::AwaitingAnswer)
    }

    /// Why there is no answer, for people.
    pub fn message(&self) -> &str {
        match self {
            AskError::AwaitingAnswer => "awaiting the client's answer",
            AskError::Failed(message) => message,
        }
    }
}

/// So a tool returning `Result<_, String>` can use `?` on an answer. (The generated `Display` of
/// [`AskError`] shows its `Debug` form; this is the plain message.)
impl From<AskError> for String {
    fn from(error: AskError) -> Self {
        error.message().to_string()
    }
}

/// So a prompt or resource function can use `?` on an answer: an internal failure with the
/// message. While awaiting, the host discards it anyway.
impl From<AskError> for PluginError {
    fn from(error: AskError) -> Self {
        PluginError::internal(error.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form_answer(action: ElicitationAction, content: Option<Value>) -> InputResponse {
        InputResponse::Elicit(ElicitationResponse {
            action,
            content: content.map(|c| c.to_string()),
        })
    }

    #[test]
    fn awaiting_when_any_answer_is_awaited() {
        let answers = Answers::new([
            ("a", Ok(InputResponse::ListRoots(Vec::new()))),
            ("b", Err(AskError::AwaitingAnswer)),
        ]);
        assert!(answers.awaiting());
        assert!(answers.ready().unwrap_err().is_awaiting());
        assert!(answers.elicitation("b").unwrap_err().is_awaiting());
        let failed = Answers::new([("a", Err(AskError::Failed("no".into())))]);
        assert!(!failed.awaiting());
        assert!(failed.ready().is_ok());
    }

    #[test]
    fn typed_getters_check_the_kind_and_the_key() {
        let answers = Answers::new([(
            "name",
            Ok(form_answer(
                ElicitationAction::Accept,
                Some(json!({ "name": "Ada" })),
            )),
        )]);
        let answer = answers.elicitation("name").expect("answered");
        assert_eq!(answer.field("name"), Some(json!("Ada")));
        assert_eq!(answer.field("other"), None);
        let wrong = answers.roots("name").unwrap_err();
        assert_eq!(
            wrong.message(),
            "the answer under `name` is not a roots answer"
        );
        let missing = answers.sampling("nope").unwrap_err();
        assert_eq!(missing.message(), "nothing was asked under `nope`");
    }

    #[test]
    fn declined_form_has_no_fields() {
        let answer = match form_answer(ElicitationAction::Decline, Some(json!({ "name": "x" }))) {
            InputResponse::Elicit(e) => e,
            _ => unreachable!(),
        };
        assert!(!answer.accepted());
        assert_eq!(answer.field("name"), None);
    }

    #[test]
    fn errors_convert_with_plain_messages() {
        let message: String = AskError::Failed("client cannot sample".into()).into();
        assert_eq!(message, "client cannot sample");
        let error: PluginError = AskError::AwaitingAnswer.into();
        assert_eq!(error.message, "awaiting the client's answer");
    }

    #[test]
    fn form_request_carries_the_schema_as_json() {
        let schema = json!({ "type": "object", "properties": {} });
        match InputRequest::form("Why?", &schema) {
            InputRequest::Elicit(ElicitationRequest::Form(form)) => {
                assert_eq!(form.message, "Why?");
                assert_eq!(
                    serde_json::from_str::<Value>(&form.requested_schema).expect("json"),
                    schema
                );
            }
            _ => panic!("expected a form"),
        }
    }
}
