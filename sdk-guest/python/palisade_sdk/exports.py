"""The WIT exports: the classes componentize-py looks for in the app module.

``palisade-py build app.py`` generates the entry module for you::

    import app                      # runs the decorators
    from palisade_sdk.exports import Tools, Resources, Prompts, Completion

To run componentize-py yourself, end the app module with that same import (world ``plugin``
needs all four; ``tool-provider`` only ``Tools``, and so on) and put the SDK on its ``-p`` path.

The classes serve ``palisade_sdk.plugin``, the plugin the module-level decorators fill, unless
:func:`serve` named another. Every method catches every exception: a :class:`PluginError`
becomes the WIT error, anything else an internal error whose traceback goes to stderr (the
host's log), so a failing plugin never traps.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from . import _wit
from ._errors import PluginError, internal_error, print_traceback
from ._plugin import DEFAULT, Plugin

__all__ = ["Tools", "Resources", "Prompts", "Completion", "serve", "prepare"]

_served: Plugin | None = None
T = TypeVar("T")


def serve(plugin: Plugin) -> None:
    """Makes the exports serve ``plugin`` instead of ``palisade_sdk.plugin``."""
    global _served
    if not isinstance(plugin, Plugin):
        raise TypeError(f"serve() takes a palisade_sdk.Plugin, not {type(plugin).__name__}")
    _served = plugin


def prepare() -> None:
    """Imports what a call needs from the generated bindings. The entry module of
    ``palisade-py build`` calls it while componentize-py snapshots the interpreter, so each
    fresh instance starts with them imported instead of importing them on its call."""
    if _wit.bind().tools is None:  # a world without tools (a prompt pack): no call path to warm
        return
    # Run the call path once on a tool of its own, so the snapshot holds its bytecode already
    # specialised and its caches filled: a fresh instance then writes (and copies) fewer pages.
    warm = Plugin()

    @warm.tool
    def echo(text: str) -> str:
        return text

    _wit.call_result(warm.call_tool("echo", '{"text": "warm"}'))


def served() -> Plugin:
    """The plugin the exports serve."""
    return _served if _served is not None else DEFAULT


def _call(run: Callable[[], T], what: str) -> T:
    """Runs an export that returns a WIT `result`: errors are raised as `Err(plugin-error)`."""
    try:
        return run()
    except PluginError as e:
        error = e
    except BaseException as e:
        error = internal_error(e, f"{what} failed")
    try:
        wit_error = _wit.plugin_error(error)
    except BaseException as e:  # pragma: no cover - a broken error object
        wit_error = _wit.plugin_error(internal_error(e, "reporting an error failed"))
    raise _wit.bind().err(wit_error)


def _listing(build: Callable[[], list[Any]], what: str, fallback: Callable[[], list[Any]] = list) -> list[Any]:
    """Runs an export that returns a list and cannot fail: on an exception, the traceback goes
    to stderr and ``fallback`` answers."""
    try:
        return build()
    except BaseException as e:
        print_traceback(e, f"{what} failed")
        try:
            return fallback()
        except BaseException:
            return []


class Tools:
    """The WIT interface `tools`."""

    def list_tools(self) -> list[Any]:
        return _listing(lambda: [_wit.tool(t) for t in served().tools.values()], "listing the tools")

    def call_tool(self, name: str, arguments: str) -> Any:
        return _call(lambda: _wit.call_result(served().call_tool(name, arguments)), f"tool `{name}`")


class Resources:
    """The WIT interface `resources`."""

    def list_resources(self) -> list[Any]:
        plugin = served()
        return _listing(
            lambda: [_wit.resource(r) for r in plugin.list_resources()],
            "listing the resources",
            lambda: [_wit.resource(r.info) for r in plugin.resources.values()],
        )

    def list_resource_templates(self) -> list[Any]:
        return _listing(
            lambda: [_wit.resource_template(t) for t in served().resource_templates.values()],
            "listing the resource templates",
        )

    def read_resource(self, uri: str) -> list[Any]:
        return _call(
            lambda: [_wit.resource_contents(c) for c in served().read_resource(uri)], f"reading `{uri}`"
        )


class Prompts:
    """The WIT interface `prompts`."""

    def list_prompts(self) -> list[Any]:
        return _listing(lambda: [_wit.prompt(p) for p in served().prompts.values()], "listing the prompts")

    def get_prompt(self, name: str, arguments: list[tuple[str, str]]) -> Any:
        return _call(lambda: _wit.prompt_result(served().get_prompt(name, dict(arguments))), f"prompt `{name}`")


class Completion:
    """The WIT interface `completion`."""

    def completable(self) -> list[Any]:
        return _listing(
            lambda: [_wit.completion_ref(kind, name) for kind, name in served().completable()],
            "listing what completes",
        )

    def complete(self, target: Any, argument_name: str, argument_value: str, context: list[tuple[str, str]]) -> Any:
        def run() -> Any:
            kind, name = _wit.completion_target(target)
            plugin = served()
            if kind == "prompt":
                result = plugin.complete_prompt(name, argument_name, argument_value, dict(context))
            else:
                result = plugin.complete_template(name, argument_name, argument_value, dict(context))
            return _wit.completion_result(result)

        return _call(run, f"completing `{argument_name}`")
