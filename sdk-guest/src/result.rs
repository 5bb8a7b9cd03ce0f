//! What a tool returns, and how Rust values become it.

use std::fmt::Display;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::bindings::exports::palisade::plugin::tools::CallResult;
use crate::types::{ContentBlock, ResourceContents};

/// The result of a tool call (MCP `CallToolResult`), built step by step.
///
/// ```
/// use palisade_sdk::{ContentBlock, ToolResult};
///
/// let png: Vec<u8> = vec![0x89, b'P', b'N', b'G'];
/// let result = ToolResult::text("Here is the chart:")
///     .with_image(png, "image/png")
///     .with_resource_link("file:///data/sales.csv", "sales.csv")
///     .structured_content(serde_json::json!({ "rows": 42 }));
/// assert_eq!(result.content.len(), 3);
/// assert!(!result.is_error);
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ToolResult {
    /// The result for the model: text, images, audio, links, resources.
    pub content: Vec<ContentBlock>,
    /// The same result as JSON, matching the tool's output schema if it has one.
    pub structured_content: Option<Value>,
    /// True when the tool ran but failed; the content then says why.
    pub is_error: bool,
    /// Extra metadata (`_meta`), a JSON object.
    pub meta: Option<Value>,
}

impl ToolResult {
    /// An empty result.
    pub fn new() -> Self {
        Self::default()
    }

    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new().with_text(text)
    }

    /// A failed result: one text block saying what went wrong, with `is_error` set.
    pub fn error(message: impl Into<String>) -> Self {
        Self::text(message).is_error(true)
    }

    /// Adds a content block.
    pub fn with_content(mut self, block: ContentBlock) -> Self {
        self.content.push(block);
        self
    }

    /// Adds a text block.
    pub fn with_text(self, text: impl Into<String>) -> Self {
        self.with_content(ContentBlock::text(text))
    }

    /// Adds an image, from its raw bytes and MIME type.
    pub fn with_image(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.with_content(ContentBlock::image(data, mime_type))
    }

    /// Adds a sound, from its raw bytes and MIME type.
    pub fn with_audio(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.with_content(ContentBlock::audio(data, mime_type))
    }

    /// Adds a link to a resource, with a name to show for it.
    pub fn with_resource_link(self, uri: impl Into<String>, name: impl Into<String>) -> Self {
        self.with_content(ContentBlock::resource_link(uri, name))
    }

    /// Adds a resource carried inline.
    pub fn with_embedded_resource(self, contents: ResourceContents) -> Self {
        self.with_content(ContentBlock::embedded_resource(contents))
    }

    /// Sets the structured content. MCP wants a JSON object matching the tool's output schema.
    pub fn structured_content(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Marks the result as failed (or not).
    pub fn is_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// Sets the extra metadata (`_meta`), a JSON object.
    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }
}

impl From<ToolResult> for CallResult {
    fn from(result: ToolResult) -> Self {
        CallResult {
            content: result.content,
            structured_content: result.structured_content.map(|v| v.to_string()),
            is_error: result.is_error,
            meta: result.meta.map(|v| v.to_string()),
        }
    }
}

/// A value a tool function may return.
///
/// Implemented for [`ToolResult`], `String` and `&str` (one text block), [`Json<T>`] (structured
/// content), and `Result<R, E>` where `R` is one of these and `E: Display` (an error becomes a
/// result with `is_error` set and the error's message as text).
pub trait IntoToolResult {
    /// Converts the value.
    fn into_tool_result(self) -> ToolResult;

    /// The JSON Schema of the structured content, when the type fixes it. [`crate::Tool::new`]
    /// uses it as the tool's output schema.
    fn output_schema() -> Option<Value> {
        None
    }
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl<R: IntoToolResult, E: Display> IntoToolResult for Result<R, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => ToolResult::error(error.to_string()),
        }
    }

    fn output_schema() -> Option<Value> {
        R::output_schema()
    }
}

/// Structured output: a tool returning `Json<T>` sends `T` as structured content, and also as JSON
/// text for clients that only read text. Its output schema is derived from `T`, which must
/// serialize as a JSON object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => ToolResult::text(value.to_string()).structured_content(value),
            Err(error) => ToolResult::error(format!("could not serialize the result: {error}")),
        }
    }

    fn output_schema() -> Option<Value> {
        Some(crate::schema::output_schema::<T>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ContentBlock;

    fn text_of(result: &ToolResult) -> &str {
        match result.content.first() {
            Some(ContentBlock::Text(t)) => &t.text,
            _ => panic!("no text block"),
        }
    }

    #[test]
    fn err_becomes_error_result() {
        let result = Err::<String, _>("boom").into_tool_result();
        assert!(result.is_error);
        assert_eq!(text_of(&result), "boom");
    }

    #[test]
    fn json_sets_text_and_structured_content() {
        #[derive(Serialize, JsonSchema)]
        struct Out {
            n: u32,
        }
        let result = Json(Out { n: 3 }).into_tool_result();
        assert_eq!(text_of(&result), r#"{"n":3}"#);
        assert_eq!(
            result.structured_content,
            Some(serde_json::json!({ "n": 3 }))
        );
        let schema = <Result<Json<Out>, String>>::output_schema().expect("schema");
        assert_eq!(schema["type"], "object");
    }

    #[test]
    fn call_result_carries_json_as_text() {
        let call: CallResult = ToolResult::text("hi")
            .structured_content(serde_json::json!({ "a": 1 }))
            .into();
        assert_eq!(call.structured_content.as_deref(), Some(r#"{"a":1}"#));
        assert!(!call.is_error);
    }
}
