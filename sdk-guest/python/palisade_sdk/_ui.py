"""MCP Apps (the extension ``io.modelcontextprotocol/ui``): a view is an HTML page, served as a
``ui://`` resource, that a host shows for a tool's results; a tool names its view in
``_meta.ui``. These helpers shape both exactly as the extension says."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: The mime type of an MCP Apps view.
UI_MIME_TYPE = "text/html;profile=mcp-app"

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
_VISIBILITY = ("model", "app")
_UI_URI = re.compile(r"^ui://[^/?#]+/.")


def ui_uri(uri: object, where: str) -> str:
    """``uri`` if it is a view's URI, ``ui://AUTHORITY/PATH``."""
    if not isinstance(uri, str) or not _UI_URI.match(uri):
        raise ValueError(
            f"{where}: a view's URI is ui://AUTHORITY/PATH (such as ui://weather/forecast), not {uri!r}"
        )
    return uri


def view_meta(
    where: str,
    csp: Mapping[str, Sequence[str]] | None,
    permissions: Iterable[str] | None,
    domain: str | None,
    prefers_border: bool | None,
) -> dict[str, Any]:
    """A view's ``_meta.ui``, checked."""
    ui: dict[str, Any] = {}
    if csp is not None:
        checked: dict[str, list[str]] = {}
        for key, domains in csp.items():
            if key not in _CSP_KEYS:
                raise ValueError(f"{where}: csp key {key!r} is not one of {', '.join(_CSP_KEYS)}")
            if isinstance(domains, str) or not all(isinstance(d, str) and d for d in domains):
                raise ValueError(f"{where}: csp {key!r} must be a list of origins (\"https://api.example.com\")")
            checked[key] = list(domains)
        ui["csp"] = checked
    if permissions is not None:
        if isinstance(permissions, str):
            raise ValueError(f"{where}: permissions is a list of names, such as [\"camera\"]")
        granted: dict[str, dict[str, Any]] = {}
        for name in permissions:
            if name not in _PERMISSIONS:
                raise ValueError(f"{where}: permission {name!r} is not one of {', '.join(_PERMISSIONS)}")
            granted[name] = {}
        ui["permissions"] = granted
    if domain is not None:
        if not isinstance(domain, str) or not domain:
            raise ValueError(f"{where}: domain must be a non-empty string")
        ui["domain"] = domain
    if prefers_border is not None:
        if not isinstance(prefers_border, bool):
            raise ValueError(f"{where}: prefers_border must be True or False")
        ui["prefersBorder"] = prefers_border
    return ui


def tool_meta(
    where: str,
    resource_uri: str,
    visibility: Sequence[str],
    meta: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A tool's ``_meta`` with its view: ``ui.resourceUri`` and ``ui.visibility``, and the older
    flat ``ui/resourceUri`` hosts still read."""
    uri = ui_uri(resource_uri, where)
    shown = list(visibility)
    if not shown or any(v not in _VISIBILITY for v in shown):
        raise ValueError(f"{where}: ui_visibility lists \"model\", \"app\" or both")
    return {**(meta or {}), "ui": {"resourceUri": uri, "visibility": shown}, "ui/resourceUri": uri}
