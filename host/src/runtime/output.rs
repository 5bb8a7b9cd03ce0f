//! How many bytes a plugin's answer carries, for the output limit. Counts the payload (text,
//! bytes, JSON) and the strings beside it; bytes are counted raw, before base64.

use super::bindings::{completion, prompts, tools, types};

/// The size of what a plugin returned.
pub trait OutputSize {
    fn output_size(&self) -> u64;
}

fn opt(s: &Option<String>) -> u64 {
    s.as_ref().map_or(0, |s| s.len() as u64)
}

impl OutputSize for types::ContentBlock {
    fn output_size(&self) -> u64 {
        use types::ContentBlock::*;
        match self {
            Text(t) => t.text.len() as u64 + opt(&t.meta),
            Image(m) | Audio(m) => m.data.len() as u64 + m.mime_type.len() as u64 + opt(&m.meta),
            ResourceLink(l) => {
                (l.uri.len() + l.name.len()) as u64
                    + opt(&l.title)
                    + opt(&l.description)
                    + opt(&l.mime_type)
            }
            EmbeddedResource(e) => e.resource.output_size() + opt(&e.meta),
        }
    }
}

impl OutputSize for types::ResourceContents {
    fn output_size(&self) -> u64 {
        let body = match &self.body {
            types::ResourceBody::Text(t) => t.len(),
            types::ResourceBody::Blob(b) => b.len(),
        };
        (self.uri.len() + body) as u64 + opt(&self.mime_type) + opt(&self.meta)
    }
}

impl<T: OutputSize> OutputSize for Vec<T> {
    fn output_size(&self) -> u64 {
        self.iter().map(OutputSize::output_size).sum()
    }
}

impl<T: OutputSize, E> OutputSize for Result<T, E> {
    fn output_size(&self) -> u64 {
        self.as_ref().map_or(0, OutputSize::output_size)
    }
}

impl OutputSize for tools::CallResult {
    fn output_size(&self) -> u64 {
        self.content.output_size() + opt(&self.structured_content) + opt(&self.meta)
    }
}

impl OutputSize for prompts::PromptResult {
    fn output_size(&self) -> u64 {
        self.messages
            .iter()
            .map(|m| m.content.output_size())
            .sum::<u64>()
            + opt(&self.description)
            + opt(&self.meta)
    }
}

impl OutputSize for completion::CompletionResult {
    fn output_size(&self) -> u64 {
        self.values.iter().map(|v| v.len() as u64).sum()
    }
}
