"""github, a Palisade plugin written in Python: list, search and create the issues of a GitHub
repository, through GitHub's REST API with the token the server's configuration gives it.
Build it with the Python SDK::

    palisade-py build plugins/github/app.py -o github.wasm

It needs, in the server's configuration (plugins/palisade.toml has them)::

    network = ["api.github.com"]
    [plugins.github.secrets]
    GITHUB_TOKEN = { env = "GITHUB_TOKEN" }

Reading public repositories works without a token (at GitHub's lower rate limit); creating an
issue needs one. ``[plugins.github.config] api_url = "..."`` points it at GitHub Enterprise
(``https://HOST/api/v3``) or any server with the same API.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import palisade_sdk as palisade
from palisade_sdk import ToolError, http

DEFAULT_API = "https://api.github.com"
TIMEOUT = 15.0
REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def _api() -> str:
    return (palisade.config("api_url") or DEFAULT_API).rstrip("/")


def _headers(token_required: bool) -> dict[str, str]:
    headers = {
        "accept": "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "palisade-github-plugin/0.1",
    }
    token = palisade.config("GITHUB_TOKEN")
    if token is None and token_required:
        token = palisade.secret("GITHUB_TOKEN")  # raises, saying how to grant it
    if token:
        headers["authorization"] = f"Bearer {token}"
    return headers


def _check_repo(repo: str) -> str:
    if not REPO.match(repo):
        raise ToolError(f"`{repo}` is not a repository: write it OWNER/NAME, such as rust-lang/rust")
    return repo


def _answer(response: http.Response, repo: str) -> Any:
    if response.status_code == 404:
        raise ToolError(f"no repository {repo}, or the token cannot see it")
    if response.status_code in (401, 403):
        message = _message(response)
        raise ToolError(f"GitHub refused ({response.status_code}): {message}")
    response.raise_for_status()
    return response.json()


def _message(response: http.Response) -> str:
    try:
        return str(response.json().get("message", ""))
    except (http.RequestError, AttributeError):  # not JSON, or not an object
        return response.text[:300]


def _issue(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "number": item.get("number"),
        "title": item.get("title", ""),
        "state": item.get("state", ""),
        "author": (item.get("user") or {}).get("login", ""),
        "labels": [label.get("name", "") for label in item.get("labels", []) if isinstance(label, dict)],
        "comments": item.get("comments", 0),
        "url": item.get("html_url", ""),
    }


@palisade.tool(read_only=True, open_world=True)
def list_issues(
    repo: str,
    state: Literal["open", "closed", "all"] = "open",
    limit: Annotated[int, {"minimum": 1, "maximum": 100}] = 20,
) -> dict[str, Any]:
    """List the issues of a repository, newest first (pull requests left out)

    Args:
        repo: The repository, OWNER/NAME.
        state: Which issues: open, closed or all.
        limit: How many, at most (1 to 100).
    """
    _check_repo(repo)
    response = http.get(
        f"{_api()}/repos/{repo}/issues",
        params={"state": state, "per_page": limit},
        headers=_headers(token_required=False),
        timeout=TIMEOUT,
    )
    items = _answer(response, repo)
    issues = [_issue(item) for item in items if "pull_request" not in item]
    return {"repo": repo, "issues": issues}


@palisade.tool(read_only=True, open_world=True)
def search_issues(
    repo: str,
    query: str,
    limit: Annotated[int, {"minimum": 1, "maximum": 100}] = 20,
) -> dict[str, Any]:
    """Search the issues of a repository

    Args:
        repo: The repository, OWNER/NAME.
        query: Words to look for, with GitHub's qualifiers if wanted (label:bug, is:open).
        limit: How many, at most (1 to 100).
    """
    _check_repo(repo)
    response = http.get(
        f"{_api()}/search/issues",
        params={"q": f"{query} repo:{repo} is:issue", "per_page": limit},
        headers=_headers(token_required=False),
        timeout=TIMEOUT,
    )
    found = _answer(response, repo)
    return {
        "repo": repo,
        "total": found.get("total_count", 0),
        "issues": [_issue(item) for item in found.get("items", [])],
    }


@palisade.tool(destructive=False, idempotent=False, open_world=True)
def create_issue(repo: str, title: str, body: str = "") -> dict[str, Any]:
    """Open a new issue in a repository

    Args:
        repo: The repository, OWNER/NAME.
        title: The issue's title.
        body: Its text, in Markdown.
    """
    _check_repo(repo)
    if not title.strip():
        raise ToolError("the title is empty")
    response = http.post(
        f"{_api()}/repos/{repo}/issues",
        json={"title": title, "body": body},
        headers=_headers(token_required=True),
        timeout=TIMEOUT,
    )
    created = _answer(response, repo)
    return _issue(created)
