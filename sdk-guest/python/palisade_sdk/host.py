"""What the host offers a plugin while it serves a request: logs, progress, cancellation, roots,
and questions for the client (:func:`ask`).

Every function acts on the request being served. Outside a Palisade component (on plain
CPython, in unit tests) they stand in quietly: :func:`log` writes to stderr,
:func:`is_cancelled` is false, :func:`list_roots` is empty, and :func:`ask` answers every
question with :class:`AskFailed`. Tests that need answers replace ``palisade_sdk.host.ask``
(``monkeypatch.setattr(host, "ask", lambda requests: Answers({...}))``).

Asking the client
-----------------

:func:`ask` puts questions to the client: the user (:func:`form`, :func:`url`), its language
model (:func:`sample`) or its list of roots (:func:`client_roots`). It works with every MCP
revision, but over 2026-07-28 (multi round-trip requests) the client answers *between* runs of
the call, not during it:

1. the first run asks; every answer is :class:`AwaitingAnswer` (or :class:`AskFailed` when the
   client lacks the capability); the function should return at once (its result is discarded)
   and the host tells the client what it needs;
2. the client gathers the answers and sends the call again; the host runs the function again
   *from the start*, and this time :func:`ask` returns the answers.

Hence three rules:

- **Stable keys.** A question's key names the question (``"user_name"``), never the attempt.
- **Work before asking is done again.** Keep it cheap and free of effects that must not repeat:
  ask first, then act.
- **Return quickly while awaiting.** :attr:`Answers.awaiting` says so; the getters
  (:meth:`Answers.elicitation`, ...) raise :class:`AwaitingAnswer`, and letting it propagate is
  fine: the SDK ends the call and the host discards its result.

Over earlier revisions the host sends the questions at once and :func:`ask` waits, so the same
code works there too::

    from palisade_sdk import host

    @palisade.tool
    def greet() -> str:
        answers = host.ask({"user_name": host.form("What is your name?", {
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
        })})
        answer = answers.elicitation("user_name")   # raises while awaiting, or if it failed
        return f"Hello, {answer.field('name', 'stranger')}!"
"""

from __future__ import annotations

import enum
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Union

from . import _wit
from ._content import ContentBlock, Role, TextContent
from ._errors import AskError, AskFailed, AwaitingAnswer
from ._results import PromptMessage, user

__all__ = [
    "LogLevel", "log", "report_progress", "is_cancelled", "get_env", "Root", "list_roots",
    "notify_resource_updated", "notify_list_changed",
    "ask", "form", "url", "sample", "client_roots", "Answers",
    "FormRequest", "UrlRequest", "SamplingRequest", "RootsRequest",
    "ElicitationAnswer", "SamplingAnswer", "ClientRoot",
    "AskError", "AwaitingAnswer", "AskFailed",
]


_INSIDE = sys.platform == "wasi"


def inside_component() -> bool:
    """True when running inside a Palisade component (not on plain CPython)."""
    return _INSIDE


def _raw() -> Any:
    return _wit.bind().host


# ---- logs, progress, cancellation, roots ----


class LogLevel(str, enum.Enum):
    """MCP log levels (RFC 5424 severities), lowest first."""

    DEBUG = "debug"
    INFO = "info"
    NOTICE = "notice"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"
    ALERT = "alert"
    EMERGENCY = "emergency"


#: Each level, by itself and by its name: what `log` is called with nearly always.
_LEVELS: dict[Any, LogLevel] = {level.value: level for level in LogLevel}


def _level(level: LogLevel | str | Any) -> LogLevel:
    known = _LEVELS.get(level) if isinstance(level, str) else None
    if known is not None:
        return known
    name = level if isinstance(level, str) else getattr(level, "name", None)
    if isinstance(name, str):
        name = name.strip().lower()
        name = {"warn": "warning", "err": "error", "crit": "critical", "fatal": "emergency"}.get(name, name)
        try:
            return LogLevel(name)
        except ValueError:
            pass
    raise ValueError(f"not a log level: {level!r} (one of {', '.join(known.value for known in LogLevel)})")


def log(level: LogLevel | str, message: str) -> None:
    """Writes a log message: to the host's log, tagged with the plugin's name, and to the MCP
    client when it asked for this level. ``level`` is a :class:`LogLevel` or its name
    (``"info"``)."""
    level = _level(level)
    if inside_component():
        bound = _wit.bind()
        bound.host.log(bound.log_levels[level], str(message))
    else:
        print(f"[{level.value}] {message}", file=sys.stderr)


def report_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    """Reports progress on the current request. ``progress`` should grow with every report;
    ``total`` is the value it reaches at the end, if known."""
    if inside_component():
        _raw().report_progress(float(progress), None if total is None else float(total), message)


def is_cancelled() -> bool:
    """True once the client has cancelled the current request. A long-running function should
    check now and then and stop (raise ``palisade_sdk.Cancelled()``); the host stops it anyway at
    its next chance."""
    return bool(_raw().is_cancelled()) if inside_component() else False


def get_env(name: str) -> str | None:
    """The server's environment variable ``name``, when this plugin may read it: granted in its
    configuration (``env``), granted "always" by a user before, or, for a plugin with
    ``ask = true``, allowed by the user when asked now. ``None`` otherwise, and when it is not
    set. Outside a component (in tests) it reads the process's own environment."""
    if inside_component():
        return _raw().get_env(str(name))
    return os.environ.get(str(name))


@dataclass
class Root:
    """A directory of the client's (an MCP root) that this plugin may use."""

    #: The root's URI, as the client gave it (``file:///...``).
    uri: str
    #: The client's name for it, if any.
    name: str | None
    #: Where the plugin sees it: an absolute path inside the sandbox, such as ``/home/me/project``.
    guest_path: str
    #: Whether the plugin may write there.
    writable: bool


def list_roots() -> list[Root]:
    """The client's directories this plugin may use for the current request."""
    if not inside_component():
        return []
    return [Root(r.uri, r.name, r.guest_path, r.writable) for r in _raw().list_roots()]


def notify_resource_updated(uri: str) -> None:
    """Tells the host that the resource at ``uri`` changed: clients subscribed to it hear so."""
    if inside_component():
        _raw().notify_resource_updated(uri)


def notify_list_changed(kind: str) -> None:
    """Tells the host that one of this plugin's lists changed: ``"tools"``, ``"resources"``
    (and templates) or ``"prompts"``; the host asks for it again."""
    if kind not in ("tools", "resources", "prompts"):
        raise ValueError(f"not a list: {kind!r} (one of tools, resources, prompts)")
    if inside_component():
        raw = _raw()
        raw.notify_list_changed(raw.ListKind[kind.upper()])


# ---- questions ----


@dataclass
class FormRequest:
    """A form for the user (MCP form-mode elicitation)."""

    message: str
    #: A flat JSON Schema object of primitive properties: the fields of the form.
    schema: dict[str, Any]


@dataclass
class UrlRequest:
    """A URL to send the user to (MCP URL-mode elicitation), for steps that must not pass
    through the client, such as signing in."""

    message: str
    url: str
    #: An id the plugin chooses, to match the answer with the request.
    elicitation_id: str


@dataclass
class SamplingRequest:
    """A request for the client's language model (MCP ``sampling/createMessage``)."""

    messages: list[PromptMessage]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] = field(default_factory=list)
    #: MCP ``modelPreferences``, a JSON object.
    model_preferences: dict[str, Any] | None = None
    #: Other request fields MCP defines (``tools``, ``toolChoice``...), merged into the request.
    extra: dict[str, Any] | None = None


@dataclass
class RootsRequest:
    """The client's root directories, as far as it shares them (MCP ``roots/list``)."""


Request = Union[FormRequest, UrlRequest, SamplingRequest, RootsRequest]


def form(message: str, schema: Mapping[str, Any]) -> FormRequest:
    """Asks the user to fill in a form: ``message`` and the JSON Schema of its fields (an
    object of primitive properties)."""
    return FormRequest(message, dict(schema))


def url(message: str, url: str, elicitation_id: str) -> UrlRequest:
    """Asks the user to visit ``url``."""
    return UrlRequest(message, url, elicitation_id)


def sample(
    messages: str | PromptMessage | Iterable[str | PromptMessage], max_tokens: int = 1000, **options: Any
) -> SamplingRequest:
    """Asks the client's model: ``messages`` is a text from the user or a list of messages
    (``user(...)``, ``assistant(...)``); ``options`` are the other :class:`SamplingRequest` fields
    (``system_prompt``, ``temperature``, ``stop_sequences``...)."""
    if isinstance(messages, (str, PromptMessage)):
        messages = [messages]
    listed = [user(m) if isinstance(m, str) else m for m in messages]
    return SamplingRequest(listed, max_tokens, **options)


def client_roots() -> RootsRequest:
    """Asks for the client's roots (their names and URIs, not access to them)."""
    return RootsRequest()


@dataclass
class ElicitationAnswer:
    """The user's answer to a form or URL."""

    #: ``"accept"`` (submitted or agreed), ``"decline"`` or ``"cancel"``.
    action: str
    #: The submitted values, when the user accepted a form.
    content: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    def field(self, name: str, default: Any = None) -> Any:
        """The submitted value of the field ``name``, when the user accepted and filled it in."""
        if not self.accepted or not self.content:
            return default
        return self.content.get(name, default)


@dataclass
class SamplingAnswer:
    """The model's answer (MCP ``CreateMessageResult``)."""

    role: Role
    content: list[ContentBlock]
    model: str
    stop_reason: str | None = None
    #: The whole result as the client sent it.
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text blocks of the answer, joined by newlines."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


@dataclass
class ClientRoot:
    """A directory the client named (MCP ``Root``): only its name, not access to it."""

    uri: str
    name: str | None = None


Answer = Union[ElicitationAnswer, SamplingAnswer, list[ClientRoot], AskError]


class Answers(Mapping[str, Answer]):
    """The answers :func:`ask` returned, by key: an answer, or the :class:`AskError` saying why
    there is none. Build one by hand to test a function that asks."""

    def __init__(self, answers: Mapping[str, Answer] | Iterable[tuple[str, Answer]] = ()):
        self._answers: dict[str, Answer] = dict(answers)

    def __getitem__(self, key: str) -> Answer:
        return self._answers[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)

    def __repr__(self) -> str:
        return f"Answers({self._answers!r})"

    @property
    def awaiting(self) -> bool:
        """True when the client has yet to answer some question (MCP 2026-07-28): return
        quickly, the call runs again with the answers. Never true over earlier revisions."""
        return any(isinstance(a, AskError) and a.awaiting for a in self._answers.values())

    def ready(self) -> None:
        """Raises :class:`AwaitingAnswer` while :attr:`awaiting`."""
        if self.awaiting:
            raise AwaitingAnswer()

    def elicitation(self, key: str) -> ElicitationAnswer:
        """The user's answer to the question under ``key``; raises :class:`AskError` if there is
        none."""
        return self._answered(key, ElicitationAnswer, "an elicitation")

    def sampling(self, key: str) -> SamplingAnswer:
        """The model's answer to the request under ``key``; raises :class:`AskError` if none."""
        return self._answered(key, SamplingAnswer, "a sampling")

    def roots(self, key: str) -> list[ClientRoot]:
        """The client's roots, asked under ``key``; raises :class:`AskError` if there is none."""
        return self._answered(key, list, "a roots")

    def _answered(self, key: str, kind: type, described: str) -> Any:
        if key not in self._answers:
            raise AskFailed(f"nothing was asked under `{key}`")
        answer = self._answers[key]
        if isinstance(answer, AskError):
            raise answer
        if not isinstance(answer, kind):
            raise AskFailed(f"the answer under `{key}` is not {described} answer")
        return answer


def ask(requests: Mapping[str, Request] | Iterable[tuple[str, Request]]) -> Answers:
    """Asks the client several things at once, each under a key you choose (the same on every
    run), and returns the answers by key. See the module documentation."""
    pairs = list(requests.items()) if isinstance(requests, Mapping) else list(requests)
    keys = set()
    for key, request in pairs:
        if not isinstance(key, str):
            raise TypeError(f"question keys are strings, not {key!r}")
        if key in keys:
            raise ValueError(f"two questions under the key `{key}`")
        keys.add(key)
        if not isinstance(request, (FormRequest, UrlRequest, SamplingRequest, RootsRequest)):
            raise TypeError(
                f"`{key}`: ask with host.form(...), host.url(...), host.sample(...) or "
                f"host.client_roots(), not {type(request).__name__}"
            )
    if not inside_component():
        return Answers((k, AskFailed("not running inside Palisade: there is no client to ask")) for k, _ in pairs)
    answered = _raw().ask([(k, _wit.input_request(r)) for k, r in pairs])
    return Answers((k, _wit.answer(result)) for k, result in answered)
