"""Write Palisade MCP plugins in Python.

A Palisade plugin is a WebAssembly component implementing the ``palisade:plugin`` WIT contract.
This SDK hides the contract behind decorated functions::

    import palisade_sdk as palisade
    from palisade_sdk import host

    @palisade.tool(read_only=True)
    def greet(name: str, excited: bool = False) -> str:
        \"\"\"Say hello to someone

        Args:
            name: Who to greet.
            excited: Whether to shout.
        \"\"\"
        host.log("info", f"greeting {name}")
        return f"Hello, {name}{'!!!' if excited else '!'}"

    @palisade.resource("motd://today", mime_type="text/plain")
    def motd() -> str:
        return "Be kind."

    @palisade.resource_template("notes://{name}", mime_type="text/markdown")
    def note(name: str) -> str:
        raise palisade.NotFound(f"no note `{name}`")

    @palisade.prompt(complete={"language": ["Python", "Rust"]})
    def review(code: str, language: str = "Python") -> str:
        \"\"\"Ask for a code review\"\"\"
        return f"Review this {language} code:\\n\\n{code}"

Build it with ``palisade-py build app.py`` (a component of about 18 MB; see ``palisade_sdk.build``).

Only modules imported while the component is built end up in it (componentize-py snapshots the
interpreter after importing the app): import everything a plugin uses at the top of its
modules, not inside functions.
"""

from __future__ import annotations

# Every SDK module is imported here, so that all of them are in the component's snapshot.
from . import (  # noqa: F401
    _content,
    _errors,
    _results,
    _schema,
    _template,
    _wit,
    exports,
    host,
    http,
    secrets,
)
from ._content import (
    Annotations,
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceContents,
    ResourceLink,
    Role,
    TextContent,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
)
from ._errors import (
    AskError,
    AskFailed,
    AwaitingAnswer,
    Cancelled,
    ErrorCode,
    InvalidParams,
    NotFound,
    PluginError,
    ToolError,
)
from ._plugin import (
    DEFAULT as plugin,
)
from ._plugin import (
    Plugin,
    Prompt,
    PromptArgument,
    Resource,
    ResourceInfo,
    ResourceTemplate,
    Tool,
)
from ._results import (
    CompletionResult,
    PromptMessage,
    PromptResult,
    ToolResult,
    assistant,
    prefix_matches,
    user,
)
from ._schema import SchemaError
from ._template import UriTemplate, percent_encode
from ._ui import UI_MIME_TYPE
from .secrets import MissingSecret, config, secret

__version__ = "0.2.0"

#: Defines a tool of :data:`plugin`: see :meth:`Plugin.tool`.
tool = plugin.tool
#: Defines a resource with a fixed URI: see :meth:`Plugin.resource`.
resource = plugin.resource
#: Defines a resource template: see :meth:`Plugin.resource_template`.
resource_template = plugin.resource_template
#: Defines a resource lister: see :meth:`Plugin.resource_lister`.
resource_lister = plugin.resource_lister
#: Defines a prompt: see :meth:`Plugin.prompt`.
prompt = plugin.prompt
#: Defines an MCP Apps view: see :meth:`Plugin.ui_view`.
ui_view = plugin.ui_view

__all__ = [
    # defining
    "plugin", "Plugin", "tool", "resource", "resource_template", "resource_lister", "prompt",
    "ui_view", "UI_MIME_TYPE",
    "Tool", "Resource", "ResourceInfo", "ResourceTemplate", "Prompt", "PromptArgument",
    # results and content
    "ToolResult", "PromptResult", "PromptMessage", "CompletionResult", "user", "assistant",
    "text", "image", "audio", "resource_link", "embedded_resource",
    "TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource",
    "ResourceContents", "ContentBlock", "Annotations", "Icon", "Role",
    # errors
    "ToolError", "PluginError", "NotFound", "InvalidParams", "Cancelled", "ErrorCode",
    "AskError", "AwaitingAnswer", "AskFailed", "SchemaError",
    # helpers
    "prefix_matches", "percent_encode", "UriTemplate", "host", "exports",
    # the world outside
    "http", "secret", "config", "MissingSecret",
]
