//! Prompts: message templates the user picks, filled in with arguments.

use std::fmt;

use serde_json::Value;

use crate::Arguments;
use crate::bindings::exports::palisade::plugin::prompts as wit;
use crate::completion::{Completer, Completers};
use crate::types::{ContentBlock, Icon, PluginError, ResourceContents, Role};

/// One message of a prompt (MCP `PromptMessage`): who says it, and one content block.
pub use wit::PromptMessage;

impl PromptMessage {
    /// A message from `role` with one content block.
    pub fn new(role: Role, content: ContentBlock) -> Self {
        PromptMessage { role, content }
    }

    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, ContentBlock::text(text))
    }

    /// A text message from the assistant, such as the start of the answer the model should
    /// continue.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, ContentBlock::text(text))
    }

    /// An image from the user, from its raw bytes and MIME type (such as `image/png`).
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self::new(Role::User, ContentBlock::image(data, mime_type))
    }

    /// A sound from the user, from its raw bytes and MIME type (such as `audio/wav`).
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self::new(Role::User, ContentBlock::audio(data, mime_type))
    }

    /// A resource's contents carried inline, from the user.
    pub fn embedded_resource(contents: ResourceContents) -> Self {
        Self::new(Role::User, ContentBlock::embedded_resource(contents))
    }

    /// The same message, said by `role` instead.
    ///
    /// ```
    /// use palisade_sdk::{PromptMessage, types::Role};
    ///
    /// let shown = PromptMessage::image(vec![0x89, b'P', b'N', b'G'], "image/png")
    ///     .with_role(Role::Assistant);
    /// assert_eq!(shown.role, Role::Assistant);
    /// ```
    pub fn with_role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }
}

/// A prompt filled in with its arguments (MCP `GetPromptResult`), built step by step.
///
/// ```
/// use palisade_sdk::{PromptMessage, PromptResult};
///
/// let result = PromptResult::new()
///     .description("Review of a Rust function")
///     .with_message(PromptMessage::user("Review this code."))
///     .with_message(PromptMessage::assistant("Here is my review:"));
/// assert_eq!(result.messages.len(), 2);
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct PromptResult {
    /// A description of this particular result.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Extra metadata (`_meta`), a JSON object.
    pub meta: Option<Value>,
}

impl PromptResult {
    /// A result without messages yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a message.
    pub fn with_message(mut self, message: PromptMessage) -> Self {
        self.messages.push(message);
        self
    }

    /// Sets a description of this particular result.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the extra metadata (`_meta`), a JSON object.
    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }
}

impl From<PromptResult> for wit::PromptResult {
    fn from(result: PromptResult) -> Self {
        wit::PromptResult {
            description: result.description,
            messages: result.messages,
            meta: result.meta.map(|v| v.to_string()),
        }
    }
}

/// A value a prompt function may return.
///
/// Implemented for [`PromptResult`], `Vec<PromptMessage>`, one [`PromptMessage`], `String` (one
/// text message from the user), and `Result<R, E>` where `R` is one of these and
/// `E: Into<PluginError>` (such as a [`PluginError`], or a `String`, which is an internal error).
pub trait IntoPromptResult {
    /// Converts the value.
    fn into_prompt_result(self) -> Result<PromptResult, PluginError>;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> Result<PromptResult, PluginError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<PromptResult, PluginError> {
        Ok(PromptResult {
            messages: self,
            ..PromptResult::default()
        })
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<PromptResult, PluginError> {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<PromptResult, PluginError> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl<R: IntoPromptResult, E: Into<PluginError>> IntoPromptResult for Result<R, E> {
    fn into_prompt_result(self) -> Result<PromptResult, PluginError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}

type Handler = Box<dyn Fn(&Arguments) -> Result<PromptResult, PluginError>>;

/// A prompt the plugin offers (MCP `Prompt`): built from a function, described with builder
/// methods.
///
/// The function gets the arguments, name to value, and returns any [`IntoPromptResult`]. Every
/// argument declared required is present (the host checks, and so does the SDK); optional ones
/// may be missing.
///
/// ```
/// use palisade_sdk::{Arguments, Prompt, PromptMessage, prefix_matches};
///
/// fn explain(args: &Arguments) -> Vec<PromptMessage> {
///     let topic = &args["topic"];
///     let level = args.get("level").map_or("a beginner", String::as_str);
///     vec![PromptMessage::user(format!("Explain {topic} to {level}."))]
/// }
///
/// let prompt = Prompt::new("explain", explain)
///     .description("Explain a topic")
///     .argument("topic", "What to explain", true)
///     .argument("level", "Who the explanation is for", false)
///     .complete("level", |typed, _| prefix_matches(typed, ["a beginner", "an expert"]));
/// assert_eq!(prompt.name(), "explain");
/// ```
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<wit::PromptArgument>,
    icons: Vec<Icon>,
    meta: Option<Value>,
    handler: Handler,
    pub(crate) completers: Completers,
}

impl Prompt {
    /// A prompt named `name` (served under the plugin's prefix, as tools are) that `get` fills
    /// in.
    pub fn new<R, F>(name: impl Into<String>, get: F) -> Self
    where
        R: IntoPromptResult,
        F: Fn(&Arguments) -> R + 'static,
    {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            icons: Vec::new(),
            meta: None,
            handler: Box::new(move |arguments| get(arguments).into_prompt_result()),
            completers: Completers::default(),
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets a name for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the prompt is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares an argument: its name, what it means, and whether the prompt needs it.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.arguments.push(wit::PromptArgument {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            required,
        });
        self
    }

    /// Adds an icon for clients to show.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Sets extra metadata (`_meta`), a JSON object.
    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Completes the argument `argument` with `completer`, which gets what the user typed so far
    /// and the arguments already filled in, and returns suggestions
    /// ([`prefix_matches`](crate::prefix_matches) filters a fixed list; the host sends at most
    /// 100). A second completer for the same argument replaces the first.
    ///
    /// The argument must be declared with [`Prompt::argument`]; the host loading the plugin
    /// finds out otherwise (listing the prompts panics).
    pub fn complete<F>(mut self, argument: impl Into<String>, completer: F) -> Self
    where
        F: Fn(&str, &Arguments) -> Vec<String> + 'static,
    {
        self.completers
            .insert(argument.into(), Box::new(completer) as Completer);
        self
    }

    /// Whether the prompt declares the argument `name`.
    pub(crate) fn has_argument(&self, name: &str) -> bool {
        self.arguments.iter().any(|a| a.name == name)
    }

    /// Fills in the prompt. A missing required argument is an
    /// [`ErrorCode::InvalidParams`](crate::types::ErrorCode::InvalidParams) error.
    pub fn get(&self, arguments: &Arguments) -> Result<PromptResult, PluginError> {
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(PluginError::invalid_params(format!(
                "the prompt `{}` needs the argument(s) {}",
                self.name,
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        (self.handler)(arguments)
    }

    /// Panics on a mistake in the definition: two arguments with one name, or a completer for
    /// an argument the prompt does not declare.
    pub(crate) fn check(&self) {
        for (i, argument) in self.arguments.iter().enumerate() {
            if self.arguments[..i].iter().any(|a| a.name == argument.name) {
                panic!(
                    "the prompt `{}` has two arguments named `{}`",
                    self.name, argument.name
                );
            }
        }
        for name in self.completers.names() {
            if !self.has_argument(name) {
                panic!(
                    "the prompt `{}` completes `{name}`, which is not one of its arguments",
                    self.name
                );
            }
        }
    }

    pub(crate) fn to_wit(&self) -> wit::Prompt {
        wit::Prompt {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            arguments: self.arguments.clone(),
            icons: self.icons.clone(),
            meta: self.meta.as_ref().map(Value::to_string),
        }
    }
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("completes", &self.completers.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ErrorCode;

    fn args(pairs: &[(&str, &str)]) -> Arguments {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn review() -> Prompt {
        Prompt::new("review", |args: &Arguments| {
            format!("Review this: {}", args["code"])
        })
        .argument("code", "The code", true)
        .argument("language", "Its language", false)
    }

    #[test]
    fn get_fills_in_the_arguments() {
        let result = review().get(&args(&[("code", "x = 1")])).expect("ok");
        assert_eq!(result.messages.len(), 1);
        assert_eq!(result.messages[0].role, Role::User);
        assert!(matches!(&result.messages[0].content,
            ContentBlock::Text(t) if t.text == "Review this: x = 1"));
    }

    #[test]
    fn missing_required_argument_is_invalid_params() {
        let error = review()
            .get(&args(&[("language", "Rust")]))
            .expect_err("missing");
        assert_eq!(error.code, ErrorCode::InvalidParams);
        assert!(error.message.contains("`code`"), "{}", error.message);
    }

    #[test]
    fn errors_from_the_function_pass_through() {
        let prompt = Prompt::new("p", |_: &Arguments| {
            Err::<String, _>(PluginError::not_found("nothing"))
        });
        assert_eq!(
            prompt.get(&Arguments::new()).expect_err("fails").code,
            ErrorCode::NotFound
        );
    }

    #[test]
    fn listing_carries_arguments() {
        let listed = review().description("Review code").to_wit();
        assert_eq!(listed.arguments.len(), 2);
        assert!(listed.arguments[0].required && !listed.arguments[1].required);
        assert_eq!(
            listed.arguments[1].description.as_deref(),
            Some("Its language")
        );
    }

    #[test]
    #[should_panic(expected = "which is not one of its arguments")]
    fn completer_for_undeclared_argument_panics_on_check() {
        review().complete("lang", |_, _| Vec::new()).check();
    }

    #[test]
    #[should_panic(expected = "two arguments named `code`")]
    fn duplicate_argument_panics_on_check() {
        review().argument("code", "again", false).check();
    }
}
