"""RFC 6570 URI templates, the small part resource templates need: ``{var}`` (simple expansion)
and ``{+var}`` (reserved expansion), matched against a URI to get the variables' values back."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: RFC 3986 reserved characters (gen-delims and sub-delims): a ``{var}`` value never holds them
#: unencoded.
RESERVED = frozenset(":/?#[]@!$&'()*+,;=")

_NAME = re.compile(r"[A-Za-z0-9_.]+")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@dataclass(frozen=True)
class _Variable:
    name: str
    reserved: bool


class UriTemplate:
    """A parsed URI template such as ``notes://{name}`` or ``file:///{+path}.md``.

    Refuses (with :class:`ValueError`) what it cannot match: other operators (``{?q}``,
    ``{/p}``...), lists (``{a,b}``), modifiers (``{p*}``, ``{p:3}``), a variable used twice, two
    variables with nothing between them, and unbalanced braces.
    """

    def __init__(self, template: str):
        self.template = template
        self._parts: list[str | _Variable] = []
        rest = template
        while rest:
            brace = min((i for i in (rest.find("{"), rest.find("}")) if i >= 0), default=-1)
            if brace < 0:
                self._parts.append(rest)
                break
            if rest[brace] == "}":
                raise ValueError("a `}` without its `{`")
            if brace > 0:
                self._parts.append(rest[:brace])
            close = rest.find("}", brace + 1)
            if close < 0:
                raise ValueError("a `{` without its `}`")
            expression = rest[brace + 1 : close]
            reserved = expression.startswith("+")
            name = expression[1:] if reserved else expression
            if not _NAME.fullmatch(name):
                raise ValueError(
                    f"`{{{expression}}}`: the SDK matches only `{{name}}` and `{{+name}}`, "
                    "names made of A-Z a-z 0-9 _ ."
                )
            if name in self.variables:
                raise ValueError(f"the variable `{name}` appears twice")
            if self._parts and isinstance(self._parts[-1], _Variable):
                raise ValueError(
                    f"`{{{expression}}}` follows another variable directly: put a literal between them"
                )
            self._parts.append(_Variable(name, reserved))
            rest = rest[close + 1 :]

    @property
    def variables(self) -> list[str]:
        """The names of the variables, in order."""
        return [p.name for p in self._parts if isinstance(p, _Variable)]

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values, percent-decoded, if ``uri`` is an expansion of the template.

        Every variable matches at least one character. ``{var}`` matches characters other than
        RFC 3986 reserved ones (so not ``/``, ``?``, ``#``...); ``{+var}`` matches any. Where a
        URI can match in several ways, earlier variables take as much as they can.
        """
        raw: list[tuple[str, str]] = []
        if not _match(self._parts, 0, uri, 0, raw):
            return None
        values = {}
        for name, value in raw:
            decoded = percent_decode(value)
            if decoded is None:
                return None
            values[name] = decoded
        return values

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"


def _match(parts: list, index: int, uri: str, at: int, values: list) -> bool:
    if index == len(parts):
        return at == len(uri)
    part = parts[index]
    if isinstance(part, str):
        return uri.startswith(part, at) and _match(parts, index + 1, uri, at + len(part), values)
    if part.reserved:
        longest = len(uri)
    else:
        longest = next((i for i in range(at, len(uri)) if uri[i] in RESERVED), len(uri))
    for end in range(longest, at, -1):
        values.append((part.name, uri[at:end]))
        if _match(parts, index + 1, uri, end, values):
            return True
        values.pop()
    return False


def percent_decode(raw: str) -> str | None:
    """Decodes ``%XX`` escapes; ``None`` for a malformed escape or bytes that are not UTF-8."""
    if "%" not in raw:
        return raw
    out = bytearray()
    i = 0
    encoded = raw.encode("utf-8")
    while i < len(encoded):
        byte = encoded[i]
        if byte == ord("%"):
            hex_digits = encoded[i + 1 : i + 3]
            if len(hex_digits) != 2 or not all(chr(b) in "0123456789abcdefABCDEF" for b in hex_digits):
                return None
            out.append(int(hex_digits, 16))
            i += 3
        else:
            out.append(byte)
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def percent_encode(value: str) -> str:
    """Percent-encodes ``value`` for a ``{var}`` in a URI: everything but the RFC 3986 unreserved
    characters (``A-Z a-z 0-9 - . _ ~``) becomes ``%XX``. Use it to build the URIs a resource
    lister returns, so that they match the template that reads them."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in value.encode("utf-8"))
