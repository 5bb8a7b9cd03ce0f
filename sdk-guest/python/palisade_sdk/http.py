"""HTTP requests from a plugin, over ``wasi:http``: to the hosts the plugin's ``network`` grant
lists, and nowhere else (the host refuses the rest). The API follows ``requests``::

    from palisade_sdk import http, secret

    issues = http.get(
        "https://api.github.com/repos/o/r/issues",
        params={"state": "open"},
        headers={"authorization": f"Bearer {secret('GITHUB_TOKEN')}"},
        timeout=10,
    )
    issues.raise_for_status()
    for issue in issues.json():
        ...

- Redirects are followed (5 at most, ``max_redirects=``); every hop is a new request the host
  checks against the grant, and a hop to another host drops ``authorization`` and ``cookie``.
- ``timeout=`` (seconds, default 30) bounds the whole exchange, body included.
- Bodies larger than ``max_body=`` bytes (default 10 MiB) raise :class:`RequestError`; nothing
  is cut short silently.
- A host without a grant raises :class:`NotGranted`, whose message names the ``network`` entry to
  add.

``urllib.request.urlopen`` goes through here too when the plugin imports ``urllib.request``
(``palisade-py build`` installs the handler); ``http.client`` and sockets stay unavailable.
"""

from __future__ import annotations

import json as _json
from typing import Any, Iterator, Mapping, MutableMapping, Union
from urllib.parse import urlencode, urljoin, urlsplit

from ._errors import ToolError

# componentize-py puts in the component only the modules imported while it builds: the bindings
# are imported here, not when a request is made. (Plain CPython has no bindings.)
try:
    from componentize_py_types import Err
    from wit_world.imports import (
        http_types,
        monotonic_clock,
        outgoing_handler,
        poll,
        streams,
    )
except ImportError:  # pragma: no cover - outside a component
    pass

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BODY = 10 << 20
DEFAULT_MAX_REDIRECTS = 5
#: ``wasi:http`` hosts accept 4096 bytes per blocking write.
_CHUNK = 4096
_REDIRECTS = (301, 302, 303, 307, 308)
_CREDENTIALS = ("authorization", "cookie", "proxy-authorization")
#: Headers urllib adds for its own connections, which wasi:http sets itself or forbids.
_URLLIB_OWN = {"connection", "host", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length"}

Params = Union[Mapping[str, Any], list, None]


class RequestError(ToolError):
    """A request that failed; ``kind`` says how: ``invalid-request``, ``not-granted``,
    ``local-address``, ``timeout``, ``too-large``, ``status``, ``redirect``, ``decode`` or
    ``transport``. Raised in a tool, its message is the failed result the model reads."""

    def __init__(self, message: str, kind: str = "transport", response: "Response | None" = None):
        super().__init__(message)
        self.kind = kind
        self.response = response


class NotGranted(RequestError):
    """The host refused the request: the plugin has no grant for that host."""


class Timeout(RequestError):
    """The exchange took longer than ``timeout``."""


class HTTPError(RequestError):
    """The server answered with an error status (:meth:`Response.raise_for_status`)."""


class Headers(MutableMapping[str, str]):
    """Header names in any case; a name received twice keeps its values joined with ``, ``."""

    def __init__(self, items: Any = ()) -> None:
        self._items: dict[str, tuple[str, str]] = {}
        pairs = items.items() if isinstance(items, Mapping) else items
        for name, value in pairs:
            self[name] = value

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()][1]

    def __setitem__(self, name: str, value: str) -> None:
        self._items[name.lower()] = (name, str(value))

    def __delitem__(self, name: str) -> None:
        del self._items[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def add(self, name: str, value: str) -> None:
        if name.lower() in self._items:
            self[name] = f"{self[name]}, {value}"
        else:
            self[name] = value

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"


class Response:
    """A response, its body read whole."""

    def __init__(self, status_code: int, headers: Headers, content: bytes, url: str, method: str) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.url = url
        self._method = method

    @property
    def ok(self) -> bool:
        return self.status_code < 400

    @property
    def text(self) -> str:
        """The body as text, in the charset the ``content-type`` names (UTF-8 otherwise)."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        try:
            return _json.loads(self.content)
        except ValueError as e:
            raise RequestError(f"{self._method} {self.url}: the body is not JSON: {e}", "decode", self) from None

    def raise_for_status(self) -> None:
        """Raises :class:`HTTPError` when the status is 400 or more, with the start of the body,
        which usually says why."""
        if self.ok:
            return
        excerpt = self.content[:512].decode("utf-8", errors="replace").strip()
        message = f"{self._method} {self.url}: the server answered {self.status_code}"
        raise HTTPError(f"{message}: {excerpt}" if excerpt else message, "status", self)

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}] {self.url}>"


def get(url: str, params: Params = None, **kwargs: Any) -> Response:
    return request("GET", url, params=params, **kwargs)


def head(url: str, **kwargs: Any) -> Response:
    return request("HEAD", url, **kwargs)


def post(url: str, data: Any = None, json: Any = None, **kwargs: Any) -> Response:
    return request("POST", url, data=data, json=json, **kwargs)


def put(url: str, data: Any = None, json: Any = None, **kwargs: Any) -> Response:
    return request("PUT", url, data=data, json=json, **kwargs)


def patch(url: str, data: Any = None, json: Any = None, **kwargs: Any) -> Response:
    return request("PATCH", url, data=data, json=json, **kwargs)


def delete(url: str, **kwargs: Any) -> Response:
    return request("DELETE", url, **kwargs)


def request(
    method: str,
    url: str,
    *,
    params: Params = None,
    headers: Mapping[str, str] | None = None,
    data: Any = None,
    json: Any = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    max_body: int = DEFAULT_MAX_BODY,
    allow_redirects: bool = True,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
) -> Response:
    """Sends a request and reads the whole response.

    ``data``: bytes or text as is, a mapping as a form; ``json``: a value sent as JSON.
    ``timeout``: seconds for the whole exchange (``None``: the call's own limit only)."""
    method = method.upper()
    sent = Headers(headers or {})
    body = b""
    if json is not None:
        body = _json.dumps(json).encode()
        sent.setdefault("content-type", "application/json")
    elif isinstance(data, Mapping):
        body = urlencode(data).encode()
        sent.setdefault("content-type", "application/x-www-form-urlencoded")
    elif isinstance(data, str):
        body = data.encode()
    elif data is not None:
        body = bytes(data)
    if params:
        url += ("&" if "?" in url else "?") + urlencode(params)
    deadline = _Deadline(timeout)
    redirects = 0
    while True:
        response = _send_once(method, url, sent, body, deadline, max_body, timeout)
        location = response.headers.get("location")
        if not allow_redirects or response.status_code not in _REDIRECTS or not location:
            return response
        if redirects >= max_redirects:
            raise RequestError(f"{method} {url}: more than {max_redirects} redirects", "redirect", response)
        redirects += 1
        next_url = _resolve(url, location)
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, body = "GET", b""
            sent.pop("content-type", None)
        if _origin(next_url) != _origin(url):
            for name in _CREDENTIALS:
                sent.pop(name, None)
        url = next_url


def _resolve(base: str, location: str) -> str:
    resolved = urljoin(base, location.strip())
    if urlsplit(resolved).scheme not in ("http", "https"):
        raise RequestError(f"{base}: redirected to {location!r}, which is not an http(s) URL", "redirect")
    return resolved


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def grant_for(url: str) -> str:
    """The ``network`` entry that grants ``url``, as the server's configuration writes it."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    https = parts.scheme == "https"
    port = parts.port
    if https:
        return host if port in (None, 443) else f"{host}:{port}"
    return f"http://{host}" if port in (None, 80) else f"http://{host}:{port}"


class _Deadline:
    def __init__(self, timeout: float | None) -> None:
        self.at = None if timeout is None else monotonic_clock.now() + int(timeout * 1e9)

    def left(self) -> int | None:
        return None if self.at is None else max(1, self.at - monotonic_clock.now())

    def wait(self, pollable: Any) -> None:
        """Waits for ``pollable`` or the deadline, whichever comes first."""
        if self.at is None:
            pollable.block()
            return
        with monotonic_clock.subscribe_instant(self.at) as timer:
            poll.poll([pollable, timer])

    def passed(self) -> bool:
        return self.at is not None and monotonic_clock.now() >= self.at


def _send_once(
    method: str, url: str, headers: Headers, body: bytes, deadline: _Deadline, max_body: int, timeout: float | None
) -> Response:
    what = f"{method} {url}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RequestError(f"{what}: not an http:// or https:// URL with a host", "invalid-request")
    if parts.username is not None:
        raise RequestError(f"{what}: user names and passwords in URLs are not sent: use a header", "invalid-request")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    pairs = [(name.lower(), str(value).encode()) for name, value in headers.items()]
    if body and "content-length" not in headers:  # a known length: some APIs refuse chunks
        pairs.append(("content-length", str(len(body)).encode()))
    try:
        fields = http_types.Fields.from_list(pairs)
    except Err as e:
        raise RequestError(f"{what}: a header is not allowed ({type(e.value).__name__})", "invalid-request") from None
    methods = {
        "GET": http_types.Method_Get(), "HEAD": http_types.Method_Head(), "POST": http_types.Method_Post(),
        "PUT": http_types.Method_Put(), "DELETE": http_types.Method_Delete(), "PATCH": http_types.Method_Patch(),
        "OPTIONS": http_types.Method_Options(),
    }
    outgoing = http_types.OutgoingRequest(fields)
    try:
        outgoing.set_method(methods.get(method) or http_types.Method_Other(method))
        outgoing.set_scheme(http_types.Scheme_Https() if parts.scheme == "https" else http_types.Scheme_Http())
        outgoing.set_authority(parts.netloc)
        outgoing.set_path_with_query(path)
    except Err:
        raise RequestError(f"{what}: the method, host or path is not valid", "invalid-request") from None
    options = http_types.RequestOptions()
    left = deadline.left()
    if left is not None:
        for setter in (options.set_connect_timeout, options.set_first_byte_timeout, options.set_between_bytes_timeout):
            try:
                setter(left)
            except Err:
                pass  # the deadline is still kept while waiting and reading
    outgoing_body = outgoing.body()
    try:
        future = outgoing_handler.handle(outgoing, options)
    except Err as e:
        raise _failure(what, url, e.value, timeout) from None
    try:
        if body:
            with outgoing_body.write() as stream:
                for start in range(0, len(body), _CHUNK):
                    stream.blocking_write_and_flush(body[start : start + _CHUNK])
        http_types.OutgoingBody.finish(outgoing_body, None)
    except Err as e:
        raise RequestError(f"{what}: sending the body failed: {e.value}", "transport") from None
    with future:
        with future.subscribe() as ready:
            deadline.wait(ready)
        answer = future.get()
    if answer is None:
        raise _timed_out(what, timeout)
    if isinstance(answer, Err):
        raise RequestError(f"{what}: the response was already taken", "transport")
    if isinstance(answer.value, Err):
        raise _failure(what, url, answer.value.value, timeout)
    with answer.value.value as incoming:
        status = incoming.status()
        received = Headers()
        with incoming.headers() as fields:
            for name, value in fields.entries():
                received.add(name, value.decode("latin-1"))
        content = _read_body(incoming, what, deadline, max_body, timeout)
    return Response(status, received, content, url, method)


def _read_body(incoming: Any, what: str, deadline: _Deadline, max_body: int, timeout: float | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    with incoming.consume() as body, body.stream() as stream:
        while True:
            try:
                chunk = stream.read(65536)
            except Err as e:
                if isinstance(e.value, streams.StreamError_Closed):
                    break
                raise RequestError(f"{what}: reading the body failed", "transport") from None
            if chunk:
                size += len(chunk)
                if size > max_body:
                    raise RequestError(f"{what}: the body is larger than {max_body} bytes (raise max_body=)", "too-large")
                chunks.append(chunk)
                continue
            if deadline.passed():
                raise _timed_out(what, timeout)
            with stream.subscribe() as ready:
                deadline.wait(ready)
    return b"".join(chunks)


def _timed_out(what: str, timeout: float | None) -> Timeout:
    return Timeout(f"{what}: no complete answer within {timeout} s (raise timeout=)", "timeout")


def _failure(what: str, url: str, code: Any, timeout: float | None) -> RequestError:
    """A ``wasi:http`` error code in words, naming the grant to add when the host refused. The
    host's own timeouts are the caller's ``timeout`` (it sets them from it), so they read alike."""
    name = type(code).__name__.removeprefix("ErrorCode_")
    if name == "HttpRequestDenied":
        grant = grant_for(url)
        return NotGranted(
            f'{what}: host not granted: add `network = ["{grant}"]` to the plugin\'s section of the '
            "server's configuration",
            "not-granted",
        )
    if name == "DestinationIpProhibited":
        return RequestError(
            f"{what}: {urlsplit(url).netloc} resolves to a loopback or private address, which a name's "
            "grant does not cover: grant the address itself",
            "local-address",
        )
    if name in ("ConnectionTimeout", "ConnectionReadTimeout", "ConnectionWriteTimeout", "HttpResponseTimeout"):
        return _timed_out(what, timeout) if timeout is not None else Timeout(f"{what}: timed out", "timeout")
    if name == "DnsError":
        return RequestError(f"{what}: cannot resolve the host's name ({getattr(code.value, 'rcode', None)})", "transport")
    if name == "ConnectionRefused":
        return RequestError(f"{what}: connection refused", "transport")
    return RequestError(f"{what}: {name}", "transport")


# ---- urllib.request ----


def install_urllib() -> None:
    """Makes ``urllib.request.urlopen`` send http(s) requests through ``wasi:http``; its own
    handlers would open sockets, which plugins do not have. Redirects stay urllib's, so each hop
    comes back here (and to the host's grant check)."""
    import io
    import urllib.error
    import urllib.request
    import urllib.response
    from email.message import Message

    class WasiHTTPHandler(urllib.request.BaseHandler):
        handler_order = 100  # before urllib's own HTTP handlers

        def _open(self, req: Any) -> Any:
            # urllib adds headers of its own connection handling; wasi:http sets (or forbids) them.
            headers = {k: v for k, v in req.header_items() if k.lower() not in _URLLIB_OWN}
            try:
                timeout = req.timeout if isinstance(req.timeout, (int, float)) else DEFAULT_TIMEOUT
            except AttributeError:
                timeout = DEFAULT_TIMEOUT
            try:
                response = request(
                    req.get_method(), req.full_url, headers=headers, data=req.data,
                    timeout=timeout, allow_redirects=False,
                )
            except RequestError as e:
                raise urllib.error.URLError(str(e)) from None
            message = Message()
            for name, value in response.headers.items():
                message[name] = value
            answer = urllib.response.addinfourl(io.BytesIO(response.content), message, response.url, response.status_code)
            answer.msg = ""  # type: ignore[attr-defined]
            return answer

        http_open = _open
        https_open = _open

    urllib.request.install_opener(urllib.request.build_opener(WasiHTTPHandler))
