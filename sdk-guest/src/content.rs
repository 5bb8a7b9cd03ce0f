//! Short constructors for the WIT content types, which otherwise need every optional field spelled
//! out.

use crate::types::{
    ContentBlock, EmbeddedResource, MediaContent, ResourceBody, ResourceContents, ResourceLink,
    TextContent,
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
