//! Short constructors for the WIT content types, which otherwise need every optional field spelled
//! out.

use crate::types::{
    Annotations, ContentBlock, EmbeddedResource, MediaContent, ResourceBody, ResourceContents,
    ResourceLink, Role, TextContent,
};

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An image, from its raw bytes (the host base64-encodes them) and MIME type.
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(media(data.into(), mime_type.into()))
    }

    /// A sound, from its raw bytes and MIME type.
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(media(data.into(), mime_type.into()))
    }

    /// A link to a resource the client can read, with a name to show for it.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
        })
    }

    /// A resource carried inline.
    pub fn embedded_resource(contents: ResourceContents) -> Self {
        ContentBlock::EmbeddedResource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
        })
    }
}

fn media(data: Vec<u8>, mime_type: String) -> MediaContent {
    MediaContent {
        data,
        mime_type,
        annotations: None,
        meta: None,
    }
}

impl ResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self::with_body(uri.into(), ResourceBody::Text(text.into()))
    }

    /// Binary contents of the resource at `uri`.
    pub fn blob(uri: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Self::with_body(uri.into(), ResourceBody::Blob(data.into()))
    }

    /// Sets the MIME type of the contents.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    fn with_body(uri: String, body: ResourceBody) -> Self {
        ResourceContents {
            uri,
            mime_type: None,
            body,
            meta: None,
        }
    }
}

impl Annotations {
    /// No hints yet.
    ///
    /// ```
    /// use palisade_sdk::types::{Annotations, Role};
    ///
    /// let hints = Annotations::new()
    ///     .audience([Role::User])
    ///     .priority(0.8)
    ///     .last_modified("2025-01-12T15:00:58Z");
    /// assert_eq!(hints.priority, Some(0.8));
    /// ```
    pub fn new() -> Self {
        Annotations {
            audience: Vec::new(),
            priority: None,
            last_modified: None,
        }
    }

    /// Sets who the content is for.
    pub fn audience(mut self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.audience = audience.into_iter().collect();
        self
    }

    /// Sets how important the content is, from 0 (optional) to 1 (required).
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Sets when the underlying data last changed, an ISO 8601 timestamp.
    pub fn last_modified(mut self, timestamp: impl Into<String>) -> Self {
        self.last_modified = Some(timestamp.into());
        self
    }
}

impl Default for Annotations {
    fn default() -> Self {
        Self::new()
    }
}
