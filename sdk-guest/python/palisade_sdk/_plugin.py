"""The plugin: its tools, resources, templates and prompts, the decorators that define them, and
the dispatch of calls to them (in SDK terms; ``exports`` translates to and from WIT)."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from ._content import Annotations, Icon, ResourceContents
from ._errors import (
    AskError,
    ErrorCode,
    InvalidParams,
    NotFound,
    PluginError,
    ToolError,
    internal_error,
)
from ._results import (
    CompletionResult,
    PromptResult,
    ToolResult,
    prefix_matches,
    to_prompt_result,
    to_resource_contents,
    to_tool_result,
)
from ._schema import (
    SCHEMA_DIALECT,
    ArgumentError,
    Convert,
    SchemaError,
    describe,
    parse_docstring,
    set_default,
)
from ._template import UriTemplate
from ._ui import UI_MIME_TYPE, tool_meta, ui_uri, view_meta

#: What a tool or prompt name is made of (the WIT rule): 1 to 64 of ``A-Z a-z 0-9 _ -``.
NAME_RULE = re.compile(r"[A-Za-z0-9_-]{1,64}")

Completer = Callable[[str, dict[str, str]], list[str]]
#: What ``complete={...}`` maps an argument to: values to filter by what the user typed, or a
#: function ``f(typed)`` or ``f(typed, context)`` returning suggestions.
CompleterSpec = Iterable[str] | Callable[..., Iterable[str]]


# ---- definitions ----


@dataclass
class _Param:
    name: str
    convert: Convert
    required: bool


#: What ``task_support`` may be (MCP ``execution.taskSupport``).
TASK_SUPPORT = ("forbidden", "optional", "required")


@dataclass
class Tool:
    """A tool the plugin offers (MCP `Tool`), as a decorator defined it."""

    name: str
    fn: Callable[..., Any]
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    task_support: str = "forbidden"
    icons: list[Icon] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    params: list[_Param] = field(default_factory=list, repr=False)

    def call(self, arguments: Mapping[str, Any] | str | None = None) -> ToolResult:
        """Runs the tool on ``arguments`` (a dict, or JSON text). Arguments that do not fit the
        parameters, and :class:`ToolError`, give a result with ``is_error`` set; other exceptions
        propagate."""
        if isinstance(arguments, (str, bytes)):
            if not arguments.strip():
                arguments = {}
            else:
                try:
                    arguments = json.loads(arguments)
                except ValueError as e:
                    return ToolResult.error(f"invalid arguments: not valid JSON: {e}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return ToolResult.error("invalid arguments: expected a JSON object")
        kwargs = {}
        for param in self.params:
            if param.name in arguments:
                try:
                    kwargs[param.name] = param.convert(arguments[param.name])
                except ArgumentError as e:
                    return ToolResult.error(f"invalid arguments: `{param.name}`: {e}")
            elif param.required:
                return ToolResult.error(f"invalid arguments: missing `{param.name}`")
        try:
            value = self.fn(**kwargs)
        except ToolError as e:
            return ToolResult.error(str(e))
        except AskError as e:
            return ToolResult.error(e.message)
        return to_tool_result(value)


@dataclass
class ResourceInfo:
    """How a resource is listed (MCP `Resource`): what a resource lister returns."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    #: Its size in bytes, if known.
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    #: The file its contents come from, as the plugin sees it (``/notes/todo.md``): the host
    #: watches it and tells subscribed clients when it changes.
    file: str | None = None


@dataclass
class Resource:
    """A resource with a fixed URI and the function that reads it."""

    info: ResourceInfo
    fn: Callable[..., Any] = field(repr=False)
    pass_uri: bool = field(default=False, repr=False)

    def read(self) -> list[ResourceContents]:
        value = self.fn(uri=self.info.uri) if self.pass_uri else self.fn()
        return to_resource_contents(value, self.info.uri, self.info.mime_type)


@dataclass
class ResourceTemplate:
    """A family of resources named by a URI template, and the function that reads them."""

    uri_template: str
    name: str
    fn: Callable[..., Any] = field(repr=False)
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    completers: dict[str, Completer] = field(default_factory=dict, repr=False)
    parsed: UriTemplate = field(default=None, repr=False)  # type: ignore[assignment]
    pass_uri: bool = field(default=False, repr=False)
    var_keywords: bool = field(default=False, repr=False)
    param_names: frozenset[str] = field(default=frozenset(), repr=False)

    @property
    def variables(self) -> list[str]:
        return self.parsed.variables

    def match(self, uri: str) -> dict[str, str] | None:
        """The values of the variables if ``uri`` matches, percent-decoded."""
        return self.parsed.match(uri)

    def read(self, uri: str) -> list[ResourceContents]:
        values = self.match(uri)
        if values is None:
            raise NotFound(f"`{uri}` does not match the resource template `{self.uri_template}`")
        kwargs = {k: v for k, v in values.items() if self.var_keywords or k in self.param_names}
        if self.pass_uri:
            kwargs["uri"] = uri
        return to_resource_contents(self.fn(**kwargs), uri, self.mime_type)


@dataclass
class PromptArgument:
    """An argument a prompt takes (MCP `PromptArgument`)."""

    name: str
    description: str | None = None
    required: bool = False
    title: str | None = None


@dataclass
class Prompt:
    """A prompt the plugin offers (MCP `Prompt`), as a decorator defined it."""

    name: str
    fn: Callable[..., Any] = field(repr=False)
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = field(default_factory=list)
    icons: list[Icon] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    completers: dict[str, Completer] = field(default_factory=dict, repr=False)
    converters: dict[str, Convert] = field(default_factory=dict, repr=False)
    var_keywords: bool = field(default=False, repr=False)

    def get(self, arguments: Mapping[str, str]) -> PromptResult:
        """Fills in the prompt. A missing required argument, or a value a ``Literal`` hint does
        not allow, is an :class:`InvalidParams` error."""
        missing = [a.name for a in self.arguments if a.required and a.name not in arguments]
        if missing:
            names = ", ".join(f"`{m}`" for m in missing)
            raise InvalidParams(f"the prompt `{self.name}` needs the argument(s) {names}")
        kwargs = {}
        for name, value in arguments.items():
            convert = self.converters.get(name)
            if convert is None:
                if self.var_keywords:
                    kwargs[name] = value
                continue
            try:
                kwargs[name] = convert(value)
            except ArgumentError as e:
                raise InvalidParams(f"the prompt `{self.name}`: argument `{name}`: {e}") from None
        try:
            value = self.fn(**kwargs)
        except AskError as e:
            raise PluginError(ErrorCode.INTERNAL, e.message) from None
        return to_prompt_result(value)


# ---- the plugin ----


class Plugin:
    """Everything a plugin offers, defined with its decorators.

    ``palisade_sdk.plugin`` is the one the module-level decorators (``@palisade_sdk.tool`` ...)
    fill and the exports serve; make your own ``Plugin()`` to test definitions in isolation.
    Its dispatch methods (:meth:`call_tool`, :meth:`read_resource`, :meth:`get_prompt`,
    :meth:`complete_prompt`...) do what the host's calls do, in SDK types, so tests can drive
    a plugin without WebAssembly.
    """

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.resource_templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        self.resource_listers: list[Callable[[], Iterable[ResourceInfo]]] = []

    def __repr__(self) -> str:
        return (
            f"Plugin(tools={list(self.tools)}, resources={list(self.resources)}, "
            f"resource_templates={list(self.resource_templates)}, prompts={list(self.prompts)})"
        )

    def check_served(self, exports: list[str], world: str, app: str) -> None:
        """Raises when the world ``exports`` leaves out what this plugin defines, or when it
        defines nothing: ``palisade-py build`` checks this while it builds, so definitions are
        never dropped silently."""
        defined = {
            "tools": [f"@tool {name}" for name in self.tools],
            "resources": [f"@resource {uri}" for uri in self.resources]
            + [f"@resource_template {t}" for t in self.resource_templates]
            + (["@resource_lister"] if self.resource_listers else []),
            "prompts": [f"@prompt {name}" for name in self.prompts],
        }
        if not any(defined.values()):
            raise RuntimeError(
                "palisade-py build check failed: "
                f"{app} defines no tools, resources or prompts (no @tool, @resource, "
                "@resource_template, @resource_lister or @prompt ran when it was imported)"
            )
        for interface, found in defined.items():
            if found and interface not in exports:
                shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
                raise RuntimeError(
                    "palisade-py build check failed: "
                    f"{app} defines {shown}, but the world `{world}` does not export `{interface}` "
                    f"(it exports: {', '.join(sorted(exports)) or 'nothing'}): build with --world "
                    "plugin, which serves everything"
                )

    # ---- decorators ----

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        task_support: str = "forbidden",
        ui: str | None = None,
        ui_visibility: Sequence[str] = ("model", "app"),
        output_schema: dict[str, Any] | type | None = None,
        icons: Iterable[Icon] = (),
        meta: dict[str, Any] | None = None,
    ) -> Any:
        """Defines a tool: ``@tool`` or ``@tool(name=..., read_only=True, ...)``.

        ``task_support`` says whether a call may run as a task, detached from its request under
        the plugin's task limits: ``"forbidden"`` (the default), ``"optional"`` (a task whenever
        the client can run one: for a tool that may take minutes) or ``"required"``.

        ``ui`` names the tool's MCP Apps view (a ``ui://`` URI, see :meth:`ui_view`), which hosts
        able to show one render with the tool's results; ``ui_visibility`` is who may call the
        tool: ``("model", "app")`` (the default), or one of them (``("app",)`` keeps it from the
        model).

        The parameters' type hints make the input schema; parameters with defaults are
        optional. The description is the docstring's first paragraph unless given; parameter
        descriptions come from its ``Args:`` section or ``Annotated[T, "description"]``. A
        ``TypedDict`` or dataclass return annotation makes the output schema (or pass
        ``output_schema``, a type or a JSON Schema dict). Returns the function unchanged.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = _check_name("tool", fn.__name__ if name is None else name, self.tools)
            where = f"tool `{tool_name}`"
            tool_meta_ = meta if ui is None else tool_meta(where, ui, ui_visibility, meta)
            if task_support not in TASK_SUPPORT:
                raise ValueError(
                    f"{where}: task_support must be one of {', '.join(TASK_SUPPORT)}, "
                    f"not {task_support!r}"
                )
            _check_plain_function(fn, where)
            summary, docs = parse_docstring(fn.__doc__)
            hints = _hints(fn, where)
            properties: dict[str, Any] = {}
            required: list[str] = []
            params: list[_Param] = []
            for param in inspect.signature(fn).parameters.values():
                _check_named(param, where)
                if param.name not in hints:
                    raise SchemaError(
                        f"{where}: parameter `{param.name}` has no type hint; the input schema is "
                        "derived from type hints (use typing.Any to accept any JSON value)"
                    )
                try:
                    schema, convert = describe(hints[param.name], f"parameter `{param.name}`")
                except SchemaError as e:
                    raise SchemaError(f"{where}: {e}") from None
                schema = dict(schema)
                if "description" not in schema and param.name in docs:
                    schema["description"] = docs[param.name]
                has_default = param.default is not inspect.Parameter.empty
                if has_default:
                    set_default(schema, param.default)
                else:
                    required.append(param.name)
                properties[param.name] = schema
                params.append(_Param(param.name, convert, not has_default))
            input_schema: dict[str, Any] = {
                "$schema": SCHEMA_DIALECT,
                "type": "object",
                "properties": properties,
            }
            if required:
                input_schema["required"] = required
            self.tools[tool_name] = Tool(
                name=tool_name,
                fn=fn,
                title=title,
                description=description if description is not None else summary,
                input_schema=input_schema,
                output_schema=_output_schema(output_schema, hints.get("return"), where),
                read_only=read_only,
                destructive=destructive,
                idempotent=idempotent,
                open_world=open_world,
                task_support=task_support,
                icons=list(icons),
                meta=tool_meta_,
                params=params,
            )
            return fn

        return register(fn) if fn is not None else register

    def ui_view(
        self,
        uri: str,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: Mapping[str, Sequence[str]] | None = None,
        permissions: Iterable[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        icons: Iterable[Icon] = (),
        meta: dict[str, Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Defines an MCP Apps view (the extension ``io.modelcontextprotocol/ui``): the HTML page
        the decorated function returns (one self-contained document: inline scripts and
        styles), which hosts able to show one render for the results of a tool whose ``ui``
        names it. ``uri`` is ``ui://AUTHORITY/PATH`` (the plugin's name as the authority keeps
        it the plugin's own). What the host reads in ``_meta.ui``: ``csp`` (``connectDomains``,
        ``resourceDomains``, ``frameDomains``, ``baseUriDomains``: lists of origins; none: no
        network), ``permissions`` (``camera``, ``microphone``, ``geolocation``,
        ``clipboardWrite``), ``domain``, ``prefers_border``."""
        where = f"view `{uri}`"
        ui_uri(uri, where)
        ui = view_meta(where, csp, permissions, domain, prefers_border)
        listing = self.resource(
            uri,
            name=name,
            title=title,
            description=description,
            mime_type=UI_MIME_TYPE,
            icons=icons,
            meta={**(meta or {}), "ui": ui},
        )

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            def page() -> ResourceContents:
                html = fn()
                if not isinstance(html, str):
                    raise TypeError(f"{where}: the function returned {type(html).__name__}, not the page's HTML")
                return ResourceContents(uri, html, UI_MIME_TYPE, {"ui": ui})

            page.__name__ = fn.__name__
            page.__doc__ = fn.__doc__
            listing(page)
            return fn

        return register

    def resource(
        self,
        uri: str,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        file: str | None = None,
        annotations: Annotations | None = None,
        icons: Iterable[Icon] = (),
        meta: dict[str, Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Defines a resource with a fixed URI, read by the decorated function, which takes no
        arguments (or ``uri``) and returns ``str`` (text), ``bytes``, JSON data or
        :class:`ResourceContents`. The name defaults to the function's; the description to its
        docstring's first paragraph."""
        if not isinstance(uri, str) or ":" not in uri:
            raise ValueError(f"resource {uri!r}: a URI has a scheme, such as `notes://today`")
        if uri in self.resources:
            raise ValueError(f"two resources have the URI `{uri}`")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            where = f"resource `{uri}`"
            _check_plain_function(fn, where)
            pass_uri = False
            for param in inspect.signature(fn).parameters.values():
                if param.name == "uri" and param.kind is not inspect.Parameter.POSITIONAL_ONLY:
                    pass_uri = True
                elif param.default is inspect.Parameter.empty and param.kind not in (
                    inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD
                ):
                    raise TypeError(
                        f"{where}: its function takes no arguments (or `uri`), but has `{param.name}`"
                    )
            summary, _ = parse_docstring(fn.__doc__)
            info = ResourceInfo(
                uri=uri,
                name=name or fn.__name__,
                title=title,
                description=description if description is not None else summary,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                icons=list(icons),
                meta=meta,
                file=file,
            )
            self.resources[uri] = Resource(info, fn, pass_uri)
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        icons: Iterable[Icon] = (),
        meta: dict[str, Any] | None = None,
        complete: Mapping[str, CompleterSpec] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Defines a family of resources named by a URI template (``notes://{name}``,
        ``file:///{+path}``), read by the decorated function. It gets each variable's value
        (percent-decoded) as the keyword argument of that name, and the whole URI as ``uri`` if
        it has such a parameter; it raises :class:`NotFound` (or returns ``None``) for values
        that name nothing. ``complete`` maps variables to completions."""
        where = f"resource template `{uri_template}`"
        try:
            parsed = UriTemplate(uri_template)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        if uri_template in self.resource_templates:
            raise ValueError(f"two resource templates are `{uri_template}`")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            _check_plain_function(fn, where)
            variables = parsed.variables
            hints = _hints(fn, where)
            names: set[str] = set()
            pass_uri = var_keywords = False
            for param in inspect.signature(fn).parameters.values():
                if param.kind is inspect.Parameter.VAR_KEYWORD:
                    var_keywords = True
                    continue
                _check_named(param, where)
                if param.name in variables:
                    hint = _strip_annotated(hints.get(param.name, str))
                    if hint not in (str, Any):
                        raise SchemaError(
                            f"{where}: parameter `{param.name}`: template variables are strings, "
                            f"so hint it as str, not {hint!r}"
                        )
                    names.add(param.name)
                elif param.name == "uri":
                    pass_uri = True
                elif param.default is inspect.Parameter.empty:
                    raise TypeError(
                        f"{where}: parameter `{param.name}` is not one of the template's variables "
                        f"({', '.join(variables) or 'none'}) nor `uri`"
                    )
            left = [v for v in variables if v not in names]
            if left and not var_keywords:
                raise TypeError(
                    f"{where}: its function has no parameter for the variable(s) "
                    f"{', '.join(f'`{v}`' for v in left)} (add them, or **variables)"
                )
            summary, _ = parse_docstring(fn.__doc__)
            completers = {
                var: _completer(spec, f"{where}: completion of `{var}`")
                for var, spec in (complete or {}).items()
            }
            for var in completers:
                if var not in variables:
                    raise ValueError(f"{where} completes `{var}`, which is not one of its variables")
            self.resource_templates[uri_template] = ResourceTemplate(
                uri_template=uri_template,
                name=name or fn.__name__,
                fn=fn,
                title=title,
                description=description if description is not None else summary,
                mime_type=mime_type,
                annotations=annotations,
                icons=list(icons),
                meta=meta,
                completers=completers,
                parsed=parsed,
                pass_uri=pass_uri,
                var_keywords=var_keywords,
                param_names=frozenset(names),
            )
            return fn

        return register

    def resource_lister(self, fn: Callable[[], Iterable[ResourceInfo]]) -> Callable[[], Iterable[ResourceInfo]]:
        """Defines a function that lists resources when the client asks, for resources that come
        and go (such as the files in a directory); it returns :class:`ResourceInfo` values.
        They are listed after the fixed ones (a URI listed already is left out) and read by the
        first resource template their URI matches."""
        _check_plain_function(fn, "resource lister")
        self.resource_listers.append(fn)
        return fn

    def prompt(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Iterable[Icon] = (),
        meta: dict[str, Any] | None = None,
        complete: Mapping[str, CompleterSpec] | None = None,
    ) -> Any:
        """Defines a prompt: ``@prompt`` or ``@prompt(name=..., complete={...})``.

        Its parameters are its arguments, all strings (hint them ``str``, ``str | None`` or
        ``Literal["a", "b"]``); those without defaults are required. Descriptions come from the
        docstring as for tools. It returns a ``str`` (one user message), messages
        (``user(...)``, ``assistant(...)``) or a :class:`PromptResult`. ``complete`` maps
        arguments to completions; ``Literal`` arguments complete their values by themselves.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            prompt_name = _check_name("prompt", fn.__name__ if name is None else name, self.prompts)
            where = f"prompt `{prompt_name}`"
            _check_plain_function(fn, where)
            summary, docs = parse_docstring(fn.__doc__)
            hints = _hints(fn, where)
            arguments: list[PromptArgument] = []
            converters: dict[str, Convert] = {}
            literal_values: dict[str, list[str]] = {}
            var_keywords = False
            for param in inspect.signature(fn).parameters.values():
                if param.kind is inspect.Parameter.VAR_KEYWORD:
                    var_keywords = True
                    continue
                _check_named(param, where)
                hint = hints.get(param.name, str)
                doc = _annotated_description(hint) or docs.get(param.name)
                values = _string_literal(_strip_annotated(hint))
                if values is None:
                    raise SchemaError(
                        f"{where}: argument `{param.name}`: prompt arguments are strings, so hint "
                        f"it as str, str | None or Literal[...] of strings, not {hint!r}"
                    )
                if values:
                    literal_values[param.name] = values
                    converters[param.name] = describe(_strip_annotated(hint), param.name)[1]
                else:
                    converters[param.name] = _identity
                required = param.default is inspect.Parameter.empty
                arguments.append(PromptArgument(param.name, doc, required))
            completers = {arg: _prefix_completer(values) for arg, values in literal_values.items()}
            for arg, spec in (complete or {}).items():
                if arg not in converters:
                    raise ValueError(f"{where} completes `{arg}`, which is not one of its arguments")
                completers[arg] = _completer(spec, f"{where}: completion of `{arg}`")
            self.prompts[prompt_name] = Prompt(
                name=prompt_name,
                fn=fn,
                title=title,
                description=description if description is not None else summary,
                arguments=arguments,
                icons=list(icons),
                meta=meta,
                completers=completers,
                converters=converters,
                var_keywords=var_keywords,
            )
            return fn

        return register(fn) if fn is not None else register

    # ---- dispatch (what the host's calls do) ----

    def call_tool(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResult:
        """Runs the tool ``name``. Raises :class:`NotFound` for an unknown tool, and an internal
        :class:`PluginError` for an exception the tool did not expect (its traceback goes to
        stderr)."""
        tool = self.tools.get(name)
        if tool is None:
            raise NotFound(f"this plugin has no tool named `{name}`")
        # What `_guard` does, without a context manager's generator on every call.
        try:
            return tool.call(arguments)
        except BaseException as e:
            raise _unexpected(e, f"tool `{name}`") from None

    def list_resources(self) -> list[ResourceInfo]:
        """The fixed resources, then those the listers return (without URIs listed already)."""
        listed = [r.info for r in self.resources.values()]
        seen = {info.uri for info in listed}
        for lister in self.resource_listers:
            for info in lister():
                if not isinstance(info, ResourceInfo):
                    raise TypeError(f"a resource lister returned {type(info).__name__}, not ResourceInfo")
                if info.uri not in seen:
                    seen.add(info.uri)
                    listed.append(info)
        return listed

    def read_resource(self, uri: str) -> list[ResourceContents]:
        """Reads the resource at ``uri``: the fixed one, or the first template that matches.
        Raises :class:`NotFound` when none does."""
        resource = self.resources.get(uri)
        if resource is not None:
            with _guard(f"resource `{uri}`"):
                return resource.read()
        for template in self.resource_templates.values():
            if template.match(uri) is not None:
                with _guard(f"resource `{uri}`"):
                    return template.read(uri)
        raise NotFound(f"this plugin has no resource `{uri}`")

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> PromptResult:
        """Fills in the prompt ``name``; :class:`NotFound` if there is none."""
        prompt = self.prompts.get(name)
        if prompt is None:
            raise NotFound(f"this plugin has no prompt named `{name}`")
        with _guard(f"prompt `{name}`"):
            return prompt.get(dict(arguments or {}))

    def completable(self) -> list[tuple[str, str]]:
        """What has completions: ``("prompt", name)`` and ``("resource-template", uri_template)``."""
        refs = [("prompt", p.name) for p in self.prompts.values() if p.completers]
        refs += [("resource-template", t.uri_template) for t in self.resource_templates.values() if t.completers]
        return refs

    def complete_prompt(
        self, name: str, argument: str, typed: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        """Suggestions for the argument ``argument`` of the prompt ``name``."""
        prompt = self.prompts.get(name)
        if prompt is None:
            raise NotFound(f"this plugin has no prompt named `{name}`")
        if argument not in prompt.converters:
            raise InvalidParams(f"the prompt `{name}` has no argument `{argument}`")
        return self._complete(prompt.completers.get(argument), typed, context, f"completion of `{name}`")

    def complete_template(
        self, uri_template: str, variable: str, typed: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        """Suggestions for the variable ``variable`` of the resource template ``uri_template``."""
        template = self.resource_templates.get(uri_template)
        if template is None:
            raise NotFound(f"this plugin has no resource template `{uri_template}`")
        if variable not in template.variables:
            raise InvalidParams(f"the resource template `{uri_template}` has no variable `{variable}`")
        return self._complete(
            template.completers.get(variable), typed, context, f"completion of `{uri_template}`"
        )

    @staticmethod
    def _complete(
        completer: Completer | None, typed: str, context: Mapping[str, str] | None, what: str
    ) -> CompletionResult:
        if completer is None:
            return CompletionResult()
        with _guard(what):
            return CompletionResult.of(completer(typed, dict(context or {})))


#: The plugin the module-level decorators fill and the exports serve.
DEFAULT = Plugin()


# ---- helpers ----


@contextlib.contextmanager
def _guard(what: str) -> Iterator[None]:
    """Turns an exception the plugin did not expect into an internal :class:`PluginError`."""
    try:
        yield
    except BaseException as e:
        raise _unexpected(e, what) from None


def _unexpected(error: BaseException, what: str) -> BaseException:
    """What `_guard` raises for ``error``: a :class:`PluginError` (the one raised, or an internal
    one), or ``error`` itself when it must go on (an interrupt)."""
    if isinstance(error, (PluginError, KeyboardInterrupt, GeneratorExit)):
        return error
    if isinstance(error, AskError):
        return PluginError(ErrorCode.INTERNAL, error.message)
    return internal_error(error, f"{what} failed")


def _identity(value: Any) -> Any:
    return value


def _check_name(kind: str, name: str, taken: Mapping[str, Any]) -> str:
    if not isinstance(name, str) or not NAME_RULE.fullmatch(name):
        raise ValueError(
            f"{kind} name {name!r}: a {kind} name is 1 to 64 characters of A-Z a-z 0-9 _ - "
            f"(pass name=... to the decorator)"
        )
    if name in taken:
        raise ValueError(f"two {kind}s are named `{name}`")
    return name


def _check_plain_function(fn: Any, where: str) -> None:
    if not callable(fn):
        raise TypeError(f"{where}: {fn!r} is not a function")
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"{where}: async functions are not supported; define it with plain `def`")


def _check_named(param: inspect.Parameter, where: str) -> None:
    if param.kind is inspect.Parameter.VAR_POSITIONAL:
        raise TypeError(f"{where}: `*{param.name}`: arguments are passed by name, so it cannot take *args")
    if param.kind is inspect.Parameter.VAR_KEYWORD:
        raise TypeError(f"{where}: `**{param.name}`: a tool's arguments must be declared one by one")
    if param.kind is inspect.Parameter.POSITIONAL_ONLY:
        raise TypeError(f"{where}: parameter `{param.name}` is positional-only; arguments are passed by name")


def _hints(fn: Callable[..., Any], where: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as e:
        raise SchemaError(f"{where}: cannot resolve its type hints: {type(e).__name__}: {e}") from None


def _strip_annotated(hint: Any) -> Any:
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    return hint


def _annotated_description(hint: Any) -> str | None:
    if typing.get_origin(hint) is typing.Annotated:
        for extra in hint.__metadata__:
            if isinstance(extra, str):
                return extra
    return None


def _string_literal(hint: Any) -> list[str] | None:
    """``[]`` for a plain string hint, the values of a ``Literal`` of strings, ``None`` for
    anything else."""
    if hint in (str, Any):
        return []
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        members = [a for a in args if a is not type(None)]
        return _string_literal(members[0]) if len(members) == 1 else None
    if typing.get_origin(hint) is typing.Literal and args and all(isinstance(a, str) for a in args):
        return list(args)
    return None


def _output_schema(given: Any, return_hint: Any, where: str) -> dict[str, Any] | None:
    if isinstance(given, dict):
        schema = dict(given)
    else:
        hint = _strip_annotated(given if given is not None else return_hint)
        is_object = (
            isinstance(hint, type)
            and (typing.is_typeddict(hint) or dataclasses.is_dataclass(hint))
            # The SDK's own dataclasses (ToolResult, content blocks) are results, not data.
            and not hint.__module__.startswith("palisade_sdk.")
        )
        if not is_object:
            if given is not None:
                raise SchemaError(f"{where}: output_schema must be a TypedDict, a dataclass or a JSON Schema dict")
            return None
        try:
            schema = {"$schema": SCHEMA_DIALECT, **describe(hint, "return value")[0]}
        except SchemaError as e:
            raise SchemaError(f"{where}: {e}") from None
    if schema.get("type", "object") != "object":
        raise SchemaError(f"{where}: the output schema must describe a JSON object")
    schema.setdefault("type", "object")
    return schema


def _completer(spec: Any, where: str) -> Completer:
    if callable(spec):
        params: list[inspect.Parameter]
        try:
            params = list(inspect.signature(spec).parameters.values())
        except (TypeError, ValueError):
            params = []
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        takes_context = len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)

        def complete(typed: str, context: dict[str, str]) -> list[str]:
            values = spec(typed, context) if takes_context else spec(typed)
            return [] if values is None else list(values)

        return complete
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Iterable):
        raise TypeError(f"{where}: give a list of values or a function, not {spec!r}")
    return _prefix_completer([str(v) for v in spec])


def _prefix_completer(values: list[str]) -> Completer:
    def complete(typed: str, context: dict[str, str]) -> list[str]:
        return prefix_matches(typed, values)

    return complete
