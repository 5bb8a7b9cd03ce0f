"""Content: what tool results, prompt messages and resources are made of (the WIT `types`),
as plain dataclasses with defaults, usable without the WebAssembly bindings."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Union


class Role(str, enum.Enum):
    """Who a message or a piece of content is meant for."""

    USER = "user"
    ASSISTANT = "assistant"


@dataclass
class Annotations:
    """Hints for the client about a piece of content (MCP `Annotations`)."""

    #: Who the content is for (``"user"``, ``"assistant"``); empty means unspecified.
    audience: list[Role | str] = field(default_factory=list)
    #: How important it is, from 0 (optional) to 1 (required).
    priority: float | None = None
    #: When the underlying data last changed, an ISO 8601 timestamp.
    last_modified: str | None = None


@dataclass
class Icon:
    """An icon a client may show (MCP `Icon`)."""

    #: An ``https:`` URL or a ``data:`` URI.
    src: str
    mime_type: str | None = None
    #: Sizes such as ``"48x48"``, or ``"any"``; empty means any size.
    sizes: list[str] = field(default_factory=list)
    #: ``"light"`` or ``"dark"``, if it matters.
    theme: str | None = None


@dataclass
class TextContent:
    """Text (MCP `TextContent`)."""

    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


@dataclass
class ImageContent:
    """An image, from its raw bytes (the host base64-encodes them) and MIME type."""

    data: bytes
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


@dataclass
class AudioContent:
    """A sound, from its raw bytes and MIME type."""

    data: bytes
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


@dataclass
class ResourceLink:
    """A link to a resource the client can read (MCP `ResourceLink`)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] = field(default_factory=list)
    meta: dict[str, Any] | None = None


@dataclass
class ResourceContents:
    """The contents of one resource: text (``str``) or bytes (``bytes``)."""

    uri: str
    body: str | bytes
    mime_type: str | None = None
    meta: dict[str, Any] | None = None

    @property
    def text(self) -> str | None:
        """The body if it is text."""
        return self.body if isinstance(self.body, str) else None

    @property
    def blob(self) -> bytes | None:
        """The body if it is bytes."""
        return None if isinstance(self.body, str) else bytes(self.body)


@dataclass
class EmbeddedResource:
    """A resource's contents carried inline (MCP `EmbeddedResource`)."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]
CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


def text(text: str, *, annotations: Annotations | None = None) -> TextContent:
    """A text block."""
    return TextContent(text, annotations)


def image(data: bytes, mime_type: str, *, annotations: Annotations | None = None) -> ImageContent:
    """An image block from raw bytes, such as ``image(png, "image/png")``."""
    return ImageContent(bytes(data), mime_type, annotations)


def audio(data: bytes, mime_type: str, *, annotations: Annotations | None = None) -> AudioContent:
    """A sound block from raw bytes, such as ``audio(wav, "audio/wav")``."""
    return AudioContent(bytes(data), mime_type, annotations)


def resource_link(uri: str, name: str, **details: Any) -> ResourceLink:
    """A link to a resource; ``details`` are the other :class:`ResourceLink` fields (``title``,
    ``description``, ``mime_type``, ``size``, ...)."""
    return ResourceLink(uri, name, **details)


def embedded_resource(uri: str, body: str | bytes, mime_type: str | None = None) -> EmbeddedResource:
    """A resource carried inline: its URI and its text (``str``) or bytes."""
    return EmbeddedResource(ResourceContents(uri, body, mime_type))
