"""Exceptions a plugin raises, and how unexpected ones are reported."""

from __future__ import annotations

import enum
import json
import sys
import traceback
from typing import Any


class ErrorCode(str, enum.Enum):
    """The kind of failure a plugin reports (WIT `error-code`)."""

    #: The arguments are wrong (JSON-RPC -32602).
    INVALID_PARAMS = "invalid-params"
    #: The named tool, prompt or resource does not exist (-32602, or -32002 for resources).
    NOT_FOUND = "not-found"
    #: The plugin failed for a reason of its own (-32603).
    INTERNAL = "internal"
    #: The request was cancelled; the plugin stopped cleanly.
    CANCELLED = "cancelled"


class PluginError(Exception):
    """A failure the host turns into a JSON-RPC error (WIT `plugin-error`).

    Raise it (or one of :class:`NotFound`, :class:`InvalidParams`, :class:`Cancelled`) from a
    resource, prompt or completion function. From a tool, prefer :class:`ToolError`: the model
    reads its message.
    """

    def __init__(self, code: ErrorCode | str, message: str, data: Any = None):
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        #: Extra detail for programs: any JSON value.
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value!r}, {self.message!r})"


class NotFound(PluginError):
    """The resource (or prompt, tool, template) does not exist: MCP "resource not found"."""

    def __init__(self, message: str, data: Any = None):
        super().__init__(ErrorCode.NOT_FOUND, message, data)


class InvalidParams(PluginError):
    """The arguments are wrong (JSON-RPC -32602)."""

    def __init__(self, message: str, data: Any = None):
        super().__init__(ErrorCode.INVALID_PARAMS, message, data)


class Cancelled(PluginError):
    """The client cancelled the request (see ``host.is_cancelled()``) and the plugin stopped."""

    def __init__(self, message: str = "cancelled", data: Any = None):
        super().__init__(ErrorCode.CANCELLED, message, data)


class ToolError(Exception):
    """Raised by a tool: the call fails with ``isError`` set and this message as its text, for
    the model to read (and perhaps try again differently)."""


class AskError(Exception):
    """There is no answer to a question put with ``host.ask``.

    A tool that lets it propagate fails with its message as text, like :class:`ToolError`; a
    resource, prompt or completion fails with an internal error. Either way, while
    :attr:`awaiting`, the host discards the result and runs the call again with the answers.
    """

    #: True when the client answers after this run ends (MCP 2026-07-28): return quickly.
    awaiting = False

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class AwaitingAnswer(AskError):
    """The client answers after this run ends; the call runs again, from the start, with the
    answers (MCP 2026-07-28)."""

    awaiting = True

    def __init__(self, message: str = "awaiting the client's answer"):
        super().__init__(message)


class AskFailed(AskError):
    """The client cannot answer: it lacks the capability, refused, timed out, or the question was
    malformed."""


def internal_error(error: BaseException, context: str | None = None) -> PluginError:
    """An unexpected exception as an internal :class:`PluginError`; its traceback goes to stderr,
    which the host writes to its log."""
    print_traceback(error, context)
    message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return PluginError(ErrorCode.INTERNAL, message)


def print_traceback(error: BaseException, context: str | None = None) -> None:
    try:
        if context:
            print(f"palisade_sdk: {context}:", file=sys.stderr)
        traceback.print_exception(error, file=sys.stderr)
        sys.stderr.flush()
    except Exception:  # pragma: no cover - nothing sensible left to do
        pass


#: One encoder for every call: ``json.dumps`` with options makes a new one each time.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(value: Any) -> str:
    """Compact JSON text, as JavaScript's ``JSON.stringify`` and Rust's ``serde_json`` write it."""
    return _ENCODER.encode(value)
