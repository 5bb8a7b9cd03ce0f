"""Translation between the SDK's types and the bindings componentize-py generates from the WIT
contract (``wit_world``). The bindings exist only inside a component (or where a test generated
them), so they are imported inside the functions."""

from __future__ import annotations

import json
from typing import Any

from ._content import (
    Annotations,
    AudioContent,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceContents,
    ResourceLink,
    Role,
    TextContent,
)
from ._errors import AskFailed, AwaitingAnswer, ErrorCode, PluginError, dumps
from ._results import CompletionResult, PromptResult, ToolResult, to_json


class Bindings:
    """The generated modules a tool call uses, imported once.

    A fresh instance starts from the snapshot componentize-py took at build time, so whatever a
    call imports or looks up lazily is imported again by every call: the entry module calls
    :func:`bind` while the snapshot is taken (``exports.prepare``), and calls find these bound.
    """

    __slots__ = ("types", "host", "tools", "err", "log_levels")

    def __init__(self) -> None:
        from componentize_py_types import Err

        # A world names what it imports and exports: what it leaves out is None here.
        self.types: Any = _module("wit_world.imports.types")
        self.host: Any = _module("wit_world.imports.host")
        self.tools: Any = _module("wit_world.exports.tools")
        self.err: Any = Err
        #: The WIT log levels by name (`"info"`).
        self.log_levels: dict[str, Any] = (
            {} if self.host is None else {level.name.lower(): level for level in self.host.LogLevel}
        )


def _module(name: str) -> Any:
    """The generated module ``name``, or None when the world has no such interface."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_bound: Bindings | None = None


def bind() -> Bindings:
    """The generated bindings, imported on the first use (the snapshot's, in a component)."""
    global _bound
    if _bound is None:
        _bound = Bindings()
    return _bound


def _types() -> Any:
    return bind().types


def json_text(value: Any) -> str | None:
    """JSON text of ``value`` (``None`` stays ``None``)."""
    return None if value is None else dumps(to_json(value))


# ---- SDK to WIT ----


def role(value: Role | str) -> Any:
    return _types().Role[Role(value).name]


def wit_annotations(value: Annotations | None) -> Any:
    if value is None:
        return None
    return _types().Annotations([role(r) for r in value.audience], value.priority, value.last_modified)


def icon(value: Icon) -> Any:
    types = _types()
    theme = None if value.theme is None else types.IconTheme[str(value.theme).upper()]
    return types.Icon(value.src, value.mime_type, list(value.sizes), theme)


def resource_contents(value: ResourceContents) -> Any:
    types = _types()
    if isinstance(value.body, str):
        body = types.ResourceBody_Text(value.body)
    else:
        body = types.ResourceBody_Blob(bytes(value.body))
    return types.ResourceContents(value.uri, value.mime_type, body, json_text(value.meta))


def content_block(block: Any) -> Any:
    types = _types()
    if isinstance(block, TextContent):
        return types.ContentBlock_Text(types.TextContent(block.text, wit_annotations(block.annotations), json_text(block.meta)))
    if isinstance(block, (ImageContent, AudioContent)):
        media = types.MediaContent(bytes(block.data), block.mime_type, wit_annotations(block.annotations), json_text(block.meta))
        return types.ContentBlock_Image(media) if isinstance(block, ImageContent) else types.ContentBlock_Audio(media)
    if isinstance(block, ResourceLink):
        return types.ContentBlock_ResourceLink(
            types.ResourceLink(
                block.uri, block.name, block.title, block.description, block.mime_type, block.size,
                wit_annotations(block.annotations), [icon(i) for i in block.icons], json_text(block.meta),
            )
        )
    if isinstance(block, EmbeddedResource):
        return types.ContentBlock_EmbeddedResource(
            types.EmbeddedResource(resource_contents(block.resource), wit_annotations(block.annotations), json_text(block.meta))
        )
    raise TypeError(f"not a content block: {type(block).__name__}")


def plugin_error(error: PluginError) -> Any:
    types = _types()
    try:
        data = json_text(error.data)
    except (TypeError, ValueError):
        data = None
    return types.PluginError(types.ErrorCode[ErrorCode(error.code).name], str(error.message), data)


def tool(value: Any) -> Any:
    tools = bind().tools
    hints = (value.read_only, value.destructive, value.idempotent, value.open_world)
    tool_annotations = None if all(h is None for h in hints) else tools.ToolAnnotations(None, *hints)
    return tools.Tool(
        value.name,
        value.title,
        value.description,
        dumps(value.input_schema),
        None if value.output_schema is None else dumps(value.output_schema),
        tool_annotations,
        tools.TaskSupport[value.task_support.upper()],
        [icon(i) for i in value.icons],
        json_text(value.meta),
    )


def call_result(result: ToolResult) -> Any:
    tools = bind().tools
    return tools.CallResult(
        [content_block(b) for b in result.content],
        json_text(result.structured_content),
        bool(result.is_error),
        json_text(result.meta),
    )


def resource(info: Any) -> Any:
    from wit_world.exports import resources

    return resources.Resource(
        info.uri, info.name, info.title, info.description, info.mime_type, info.size,
        wit_annotations(info.annotations), [icon(i) for i in info.icons], json_text(info.meta), info.file,
    )


def resource_template(template: Any) -> Any:
    from wit_world.exports import resources

    return resources.ResourceTemplate(
        template.uri_template, template.name, template.title, template.description, template.mime_type,
        wit_annotations(template.annotations), [icon(i) for i in template.icons], json_text(template.meta),
    )


def prompt(value: Any) -> Any:
    from wit_world.exports import prompts

    return prompts.Prompt(
        value.name,
        value.title,
        value.description,
        [prompts.PromptArgument(a.name, a.title, a.description, bool(a.required)) for a in value.arguments],
        [icon(i) for i in value.icons],
        json_text(value.meta),
    )


def prompt_result(result: PromptResult) -> Any:
    from wit_world.exports import prompts

    return prompts.PromptResult(
        result.description,
        [prompts.PromptMessage(role(m.role), content_block(m.content)) for m in result.messages],
        json_text(result.meta),
    )


def completion_ref(kind: str, name: str) -> Any:
    from wit_world.exports import completion

    if kind == "prompt":
        return completion.CompletionRef_Prompt(name)
    return completion.CompletionRef_ResourceTemplate(name)


def completion_target(target: Any) -> tuple[str, str]:
    from wit_world.exports import completion

    if isinstance(target, completion.CompletionRef_Prompt):
        return "prompt", target.value
    return "resource-template", target.value


def completion_result(result: CompletionResult) -> Any:
    from wit_world.exports import completion

    return completion.CompletionResult(list(result.values), result.total, bool(result.has_more))


def input_request(request: Any) -> Any:
    host = bind().host
    from .host import FormRequest, RootsRequest, SamplingRequest, UrlRequest

    if isinstance(request, FormRequest):
        return host.InputRequest_Elicit(host.ElicitationRequest_Form(host.FormElicitation(request.message, dumps(request.schema))))
    if isinstance(request, UrlRequest):
        return host.InputRequest_Elicit(
            host.ElicitationRequest_Url(host.UrlElicitation(request.message, request.url, request.elicitation_id))
        )
    if isinstance(request, SamplingRequest):
        return host.InputRequest_Sample(
            host.SamplingRequest(
                [host.SamplingMessage(role(m.role), [content_block(m.content)]) for m in request.messages],
                request.system_prompt,
                int(request.max_tokens),
                request.temperature,
                list(request.stop_sequences),
                json_text(request.model_preferences),
                json_text(request.extra),
            )
        )
    if isinstance(request, RootsRequest):
        return host.InputRequest_ListRoots()
    raise TypeError(f"not a question: {type(request).__name__}")


# ---- WIT to SDK ----


def content_from(block: Any) -> Any:
    types = _types()
    value = block.value
    if isinstance(block, types.ContentBlock_Text):
        return TextContent(value.text, annotations_from(value.annotations), _parse(value.meta))
    if isinstance(block, (types.ContentBlock_Image, types.ContentBlock_Audio)):
        make = ImageContent if isinstance(block, types.ContentBlock_Image) else AudioContent
        return make(bytes(value.data), value.mime_type, annotations_from(value.annotations), _parse(value.meta))
    if isinstance(block, types.ContentBlock_ResourceLink):
        return ResourceLink(
            value.uri, value.name, value.title, value.description, value.mime_type, value.size,
            annotations_from(value.annotations),
            [Icon(i.src, i.mime_type, list(i.sizes), None if i.theme is None else i.theme.name.lower()) for i in value.icons],
            _parse(value.meta),
        )
    contents = value.resource
    body = contents.body.value
    return EmbeddedResource(
        ResourceContents(contents.uri, body if isinstance(body, str) else bytes(body), contents.mime_type, _parse(contents.meta)),
        annotations_from(value.annotations),
        _parse(value.meta),
    )


def annotations_from(value: Any) -> Annotations | None:
    if value is None:
        return None
    return Annotations([Role(r.name.lower()) for r in value.audience], value.priority, value.last_modified)


def _parse(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def answer(result: Any) -> Any:
    """One answer of ``host.ask``: an SDK answer, or the ``AskError`` saying why there is none."""
    bound = bind()
    host = bound.host
    from .host import ClientRoot, ElicitationAnswer, SamplingAnswer

    if isinstance(result, bound.err):
        error = result.value
        if isinstance(error, host.AskError_AwaitingAnswer):
            return AwaitingAnswer()
        return AskFailed(str(getattr(error, "value", error)))
    response = result.value
    if isinstance(response, host.InputResponse_Elicit):
        elicited = response.value
        content = _parse(elicited.content)
        return ElicitationAnswer(elicited.action.name.lower(), content if isinstance(content, dict) else None)
    if isinstance(response, host.InputResponse_Sample):
        sampled = response.value
        raw = _parse(sampled.raw)
        return SamplingAnswer(
            Role(sampled.role.name.lower()),
            [content_from(b) for b in sampled.content],
            sampled.model,
            sampled.stop_reason,
            raw if isinstance(raw, dict) else {},
        )
    return [ClientRoot(r.uri, r.name) for r in response.value]
