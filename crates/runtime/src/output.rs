//! How many bytes what a plugin sends during a call weighs, for the output limit: the payload
//! (text, bytes, JSON) and every string beside it (annotations, icons, `_meta`), plus
//! [`ITEM_BYTES`] for each item of a list, so a million empty content blocks weigh what their
//! JSON does. Bytes are counted raw, before base64. A call's answer is weighed by the same rules
//! once lifted ([`within_limit`]); what lifting may copy before that is bounded by the store's
//! hostcall fuel (`copy_bound.rs`).

use super::bindings::{completion, host, prompts, resources, tools, types};
use super::generic::value::Value;
use crate::error::LimitExceeded;

/// What one item of a list (a content block, a list entry, an annotation) adds besides its
/// strings: about the JSON framing it becomes.
pub const ITEM_BYTES: u64 = 32;

/// The size of what a plugin returned.
pub trait OutputSize {
    fn output_size(&self) -> u64;
}

/// `answer`, if it weighs no more than `limit` bytes.
pub fn within_limit<T: OutputSize>(answer: T, limit: u64) -> Result<T, LimitExceeded> {
    let bytes = answer.output_size();
    if bytes > limit {
        return Err(LimitExceeded::Output {
            bytes,
            limit_bytes: limit,
        });
    }
    Ok(answer)
}

/// Numbers, flags and cases weigh nothing of their own: the record or list around them does.
macro_rules! weightless {
    ($($ty:ty),*) => {$(
        impl OutputSize for $ty {
            fn output_size(&self) -> u64 {
                0
            }
        }
    )*};
}
weightless!(
    bool,
    u32,
    u64,
    f64,
    types::Role,
    types::IconTheme,
    types::ErrorCode
);

impl OutputSize for String {
    fn output_size(&self) -> u64 {
        self.len() as u64
    }
}

impl<T: OutputSize> OutputSize for Option<T> {
    fn output_size(&self) -> u64 {
        self.as_ref().map_or(0, OutputSize::output_size)
    }
}

impl<T: OutputSize, E: OutputSize> OutputSize for Result<T, E> {
    fn output_size(&self) -> u64 {
        match self {
            Ok(ok) => ok.output_size(),
            Err(err) => err.output_size(),
        }
    }
}

impl<A: OutputSize, B: OutputSize> OutputSize for (A, B) {
    fn output_size(&self) -> u64 {
        self.0.output_size().saturating_add(self.1.output_size())
    }
}

impl<T: OutputSize> OutputSize for Vec<T> {
    fn output_size(&self) -> u64 {
        self.iter()
            .map(|item| item.output_size().saturating_add(ITEM_BYTES))
            .fold(0, u64::saturating_add)
    }
}

/// Sums the sizes of the listed fields.
macro_rules! sum {
    ($($part:expr),* $(,)?) => {
        0u64 $(.saturating_add($part.output_size()))*
    };
}

impl OutputSize for types::Annotations {
    fn output_size(&self) -> u64 {
        sum!(self.last_modified, self.audience).saturating_add(ITEM_BYTES)
    }
}

impl OutputSize for types::Icon {
    fn output_size(&self) -> u64 {
        sum!(self.src, self.mime_type, self.sizes)
    }
}

impl OutputSize for types::ContentBlock {
    fn output_size(&self) -> u64 {
        use types::ContentBlock::*;
        match self {
            Text(t) => sum!(t.text, t.annotations, t.meta),
            Image(m) | Audio(m) => {
                sum!(m.mime_type, m.annotations, m.meta).saturating_add(m.data.len() as u64)
            }
            ResourceLink(l) => sum!(
                l.uri,
                l.name,
                l.title,
                l.description,
                l.mime_type,
                l.annotations,
                l.icons,
                l.meta
            ),
            EmbeddedResource(e) => sum!(e.resource, e.annotations, e.meta),
        }
    }
}

impl OutputSize for types::ResourceContents {
    fn output_size(&self) -> u64 {
        let body = match &self.body {
            types::ResourceBody::Text(t) => t.len(),
            types::ResourceBody::Blob(b) => b.len(),
        };
        sum!(self.uri, self.mime_type, self.meta).saturating_add(body as u64)
    }
}

impl OutputSize for types::PluginError {
    fn output_size(&self) -> u64 {
        sum!(self.message, self.data)
    }
}

impl OutputSize for tools::ToolAnnotations {
    fn output_size(&self) -> u64 {
        sum!(self.title)
    }
}

impl OutputSize for tools::Tool {
    fn output_size(&self) -> u64 {
        sum!(
            self.name,
            self.title,
            self.description,
            self.input_schema,
            self.output_schema,
            self.annotations,
            self.icons,
            self.meta
        )
    }
}

impl OutputSize for tools::CallResult {
    fn output_size(&self) -> u64 {
        sum!(self.content, self.structured_content, self.meta)
    }
}

impl OutputSize for resources::Resource {
    fn output_size(&self) -> u64 {
        sum!(
            self.uri,
            self.name,
            self.title,
            self.description,
            self.mime_type,
            self.annotations,
            self.icons,
            self.meta,
            self.file
        )
    }
}

impl OutputSize for resources::ResourceTemplate {
    fn output_size(&self) -> u64 {
        sum!(
            self.uri_template,
            self.name,
            self.title,
            self.description,
            self.mime_type,
            self.annotations,
            self.icons,
            self.meta
        )
    }
}

impl OutputSize for prompts::PromptArgument {
    fn output_size(&self) -> u64 {
        sum!(self.name, self.title, self.description)
    }
}

impl OutputSize for prompts::Prompt {
    fn output_size(&self) -> u64 {
        sum!(
            self.name,
            self.title,
            self.description,
            self.arguments,
            self.icons,
            self.meta
        )
    }
}

impl OutputSize for prompts::PromptMessage {
    fn output_size(&self) -> u64 {
        self.content.output_size()
    }
}

impl OutputSize for prompts::PromptResult {
    fn output_size(&self) -> u64 {
        sum!(self.description, self.messages, self.meta)
    }
}

impl OutputSize for completion::CompletionRef {
    fn output_size(&self) -> u64 {
        match self {
            completion::CompletionRef::Prompt(name) => name.output_size(),
            completion::CompletionRef::ResourceTemplate(uri) => uri.output_size(),
        }
    }
}

impl OutputSize for completion::CompletionResult {
    fn output_size(&self) -> u64 {
        self.values.output_size()
    }
}

/// A generic component's result: its strings and bytes, [`ITEM_BYTES`] per list item and per
/// record, tuple or case.
impl OutputSize for Value {
    fn output_size(&self) -> u64 {
        match self {
            Value::String(s) => s.output_size(),
            Value::Bytes(b) => b.len() as u64,
            Value::List(items) => items.output_size(),
            Value::Fields(fields) => fields
                .iter()
                .map(OutputSize::output_size)
                .fold(ITEM_BYTES, u64::saturating_add),
            Value::Case(_, payload) => payload
                .as_deref()
                .map_or(0, OutputSize::output_size)
                .saturating_add(ITEM_BYTES),
            _ => 0,
        }
    }
}

impl OutputSize for host::ElicitationRequest {
    fn output_size(&self) -> u64 {
        match self {
            host::ElicitationRequest::Form(f) => sum!(f.message, f.requested_schema),
            host::ElicitationRequest::Url(u) => sum!(u.message, u.url, u.elicitation_id),
        }
    }
}

impl OutputSize for host::SamplingMessage {
    fn output_size(&self) -> u64 {
        self.content.output_size()
    }
}

impl OutputSize for host::SamplingRequest {
    fn output_size(&self) -> u64 {
        sum!(
            self.messages,
            self.system_prompt,
            self.stop_sequences,
            self.model_preferences,
            self.extra
        )
    }
}

impl OutputSize for host::InputRequest {
    fn output_size(&self) -> u64 {
        match self {
            host::InputRequest::Elicit(e) => e.output_size(),
            host::InputRequest::Sample(s) => s.output_size(),
            host::InputRequest::ListRoots => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> types::ContentBlock {
        types::ContentBlock::Text(types::TextContent {
            text: t.into(),
            annotations: None,
            meta: None,
        })
    }

    #[test]
    fn every_part_of_a_question_counts() {
        let question = host::SamplingRequest {
            messages: vec![host::SamplingMessage {
                role: types::Role::User,
                content: vec![text("hello"), text("")],
            }],
            system_prompt: Some("s".repeat(10)),
            max_tokens: 10,
            temperature: None,
            stop_sequences: vec!["x".into()],
            model_preferences: None,
            extra: Some("e".repeat(100)),
        };
        // One message (5 + 0 bytes, two blocks), 10, one stop sequence, 100.
        let expected = (5 + 2 * ITEM_BYTES) + ITEM_BYTES + 10 + (1 + ITEM_BYTES) + 100;
        assert_eq!(question.output_size(), expected);
        let link = types::ContentBlock::ResourceLink(types::ResourceLink {
            uri: "u".into(),
            name: "n".into(),
            title: None,
            description: Some("d".repeat(10)),
            mime_type: None,
            size: None,
            annotations: Some(types::Annotations {
                audience: vec![types::Role::User],
                priority: None,
                last_modified: Some("t".into()),
            }),
            icons: vec![types::Icon {
                src: "i".repeat(50),
                mime_type: None,
                sizes: vec![],
                theme: None,
            }],
            meta: None,
        });
        assert_eq!(
            link.output_size(),
            1 + 1 + 10 + (1 + 2 * ITEM_BYTES) + 50 + ITEM_BYTES
        );
    }
}
