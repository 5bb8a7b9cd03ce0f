"""What tools, prompts, resources and completions return, and how plain Python values become it."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, Iterable

from ._content import (
    CONTENT_TYPES,
    ContentBlock,
    ResourceContents,
    Role,
    TextContent,
)
from ._errors import NotFound, dumps


@dataclass
class ToolResult:
    """The result of a tool call (MCP `CallToolResult`), for full control over it.

    Tools usually return plain values instead: see :func:`to_tool_result`.
    """

    #: The result for the model: text, images, audio, links, resources.
    content: list[ContentBlock] = field(default_factory=list)
    #: The same result as a JSON object, matching the tool's output schema if it has one.
    structured_content: dict[str, Any] | None = None
    #: True when the tool ran but failed; the content then says why.
    is_error: bool = False
    #: Extra metadata (``_meta``), a JSON object.
    meta: dict[str, Any] | None = None

    @classmethod
    def error(cls, message: str) -> "ToolResult":
        """A failed result: one text block saying what went wrong, with ``is_error`` set."""
        return cls([TextContent(message)], is_error=True)

    @classmethod
    def json(cls, value: Any) -> "ToolResult":
        """A JSON object as structured content, and as JSON text for clients that read only text."""
        value = to_json(value)
        if not isinstance(value, dict):
            raise TypeError(f"structured content must be a JSON object, not {type(value).__name__}")
        return cls([TextContent(dumps(value))], structured_content=value)

    def text(self) -> str:
        """The text blocks joined by newlines (handy in tests)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


def to_json(value: Any) -> Any:
    """``value`` as JSON data: dataclasses become objects, enums their values, tuples lists.
    Raises :class:`TypeError` for anything else that JSON cannot hold."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, enum.Enum):
            return to_json(value.value)
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, enum.Enum):
                key = key.value
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys are strings, not {type(key).__name__} ({key!r})")
            out[key] = to_json(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    raise TypeError(f"a {type(value).__name__} is not a JSON value")


def to_tool_result(value: Any) -> ToolResult:
    """Turns what a tool function returned into a :class:`ToolResult`.

    - a :class:`ToolResult`: as it is;
    - ``None``: no content;
    - ``str``: one text block;
    - a content block (``text(...)``, ``image(...)``, ...) or a non-empty list of them: those blocks;
    - a ``dict`` or a dataclass: structured content, and its JSON as text;
    - other JSON values (lists, numbers, booleans): their JSON as text only (structured content
      must be an object).
    """
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult()
    if isinstance(value, str):
        return ToolResult([TextContent(value)])
    if isinstance(value, CONTENT_TYPES):
        return ToolResult([value])
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(
            "the tool returned bytes: wrap them in palisade_sdk.image(data, mime_type), "
            "audio(data, mime_type) or embedded_resource(uri, data, mime_type)"
        )
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, CONTENT_TYPES) for v in value):
        return ToolResult(list(value))
    data = to_json(value)
    if isinstance(data, dict):
        return ToolResult([TextContent(dumps(data))], structured_content=data)
    return ToolResult([TextContent(dumps(data))])


# ---- prompts ----


@dataclass
class PromptMessage:
    """One message of a prompt (MCP `PromptMessage`): who says it, and one content block."""

    role: Role | str
    content: ContentBlock


def user(content: str | ContentBlock) -> PromptMessage:
    """A message from the user: text, or a content block (``image(...)``, ...)."""
    return PromptMessage(Role.USER, _block(content))


def assistant(content: str | ContentBlock) -> PromptMessage:
    """A message from the assistant, such as the start of the answer the model should continue."""
    return PromptMessage(Role.ASSISTANT, _block(content))


def _block(content: str | ContentBlock) -> ContentBlock:
    if isinstance(content, str):
        return TextContent(content)
    if isinstance(content, CONTENT_TYPES):
        return content
    raise TypeError(f"a message holds text or a content block, not {type(content).__name__}")


@dataclass
class PromptResult:
    """A prompt filled in with its arguments (MCP `GetPromptResult`), for full control."""

    messages: list[PromptMessage] = field(default_factory=list)
    #: A description of this particular result.
    description: str | None = None
    #: Extra metadata (``_meta``), a JSON object.
    meta: dict[str, Any] | None = None


def to_prompt_result(value: Any) -> PromptResult:
    """Turns what a prompt function returned into a :class:`PromptResult`: a ``str`` is one user
    message; a :class:`PromptMessage`, or a list of them (``str`` items are user messages), are
    the messages."""
    if isinstance(value, PromptResult):
        return value
    if isinstance(value, (str, PromptMessage)):
        value = [value]
    if isinstance(value, (list, tuple)):
        messages = []
        for item in value:
            if isinstance(item, str):
                item = user(item)
            if not isinstance(item, PromptMessage):
                raise TypeError(
                    f"a prompt returns messages (str, user(...), assistant(...)), not {type(item).__name__}"
                )
            messages.append(item)
        return PromptResult(messages)
    raise TypeError(
        f"a prompt returns a str, a message or a list of messages, not {type(value).__name__}"
    )


# ---- resources ----


def to_resource_contents(value: Any, uri: str, mime_type: str | None) -> list[ResourceContents]:
    """Turns what a resource function returned into contents: ``str`` is text, ``bytes`` a blob,
    a ``dict`` or ``list`` JSON text; :class:`ResourceContents` (or a list of them) as built.
    Contents without a MIME type get ``mime_type``, the one declared. ``None`` means the
    resource does not exist."""
    if value is None:
        raise NotFound(f"there is no resource `{uri}`")
    if isinstance(value, ResourceContents):
        value = [value]
    if isinstance(value, str):
        return [ResourceContents(uri, value, mime_type)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [ResourceContents(uri, bytes(value), mime_type)]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, ResourceContents) for v in value):
        out = []
        for contents in value:
            if contents.mime_type is None and mime_type is not None:
                contents = dataclasses.replace(contents, mime_type=mime_type)
            out.append(contents)
        return out
    if isinstance(value, (dict, list, tuple)) or dataclasses.is_dataclass(value):
        return [ResourceContents(uri, dumps(to_json(value)), mime_type or "application/json")]
    raise TypeError(
        f"a resource function returns str, bytes, ResourceContents or JSON data, not {type(value).__name__}"
    )


# ---- completions ----

#: The most values one completion answer carries (MCP's limit).
MAX_COMPLETIONS = 100


@dataclass
class CompletionResult:
    """Suggestions for an argument (MCP `CompleteResult.completion`)."""

    values: list[str] = field(default_factory=list)
    #: How many values there are in all, if known.
    total: int | None = None
    #: Whether there are more values than returned.
    has_more: bool = False

    @classmethod
    def of(cls, values: Iterable[str]) -> "CompletionResult":
        """At most 100 of ``values``, with the total and whether some were cut."""
        values = [str(v) for v in values]
        return cls(values[:MAX_COMPLETIONS], len(values), len(values) > MAX_COMPLETIONS)


def prefix_matches(typed: str, candidates: Iterable[str]) -> list[str]:
    """The candidates that start with ``typed``, ignoring case, in their order: the usual
    completer over a fixed list."""
    typed = typed.casefold()
    return [c for c in candidates if str(c).casefold().startswith(typed)]
