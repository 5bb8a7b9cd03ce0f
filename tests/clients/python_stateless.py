"""A real MCP 2026-07-28 (stateless) client against Palisade: the official Python SDK's
high-level `mcp.Client` (2.x) in its default `mode="auto"`, which probes `server/discover` and
falls back to `initialize` only for a server that is not stateless.

Usage:
  python_stateless.py http URL [--no-listen]
  python_stateless.py stdio PALISADE CONFIG CACHE_DIR [--no-listen]

The server serves plugins/fixtures/conformance under the fixtures' own names (prefix ""); over stdio it is
started as `PALISADE serve --config CONFIG --cache-dir CACHE_DIR` (live reload on, so that the
tool list change of the listen check is relisted). `--no-listen` skips `subscriptions/listen`
(behind a load balancer the change and the stream may land on different processes).

Steps, each asserted: the negotiated version is 2026-07-28 and the server is palisade; tools are
listed (which also teaches the client the x-mcp-header of test_custom_header); a tool that asks
the user (input_required) is answered by the elicitation callback, "Hello, Alice!"; a call over
two rounds; one asking an elicitation, a sampling and the roots at once; test_custom_header with
an ASCII and a non-ASCII region (Mcp-Param-Region, plain and Base64); a resource is read; a prompt
asking for its context; progress; and a listen subscription that sees a tool list change.

Progress goes to stderr; stdout gets one line of JSON, the summary the Rust test asserts on.
Exits non-zero on the first failure.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged

EXPECTED_VERSION = "2026-07-28"

# What the elicitation callback answers, by field name.
FORM_ANSWERS: dict[str, Any] = {
    "name": "Alice",
    "color": "blue",
    "context": "test context",
    "ok": True,
}


def log(*parts: Any) -> None:
    print(*parts, file=sys.stderr, flush=True)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def run(server: str | StdioServerParameters, listen: bool) -> dict[str, Any]:
    asked: list[str] = []

    async def on_elicit(ctx, params: types.ElicitRequestParams) -> types.ElicitResult:
        # ctx.request_id is the key of the question among the result's inputRequests.
        asked.append(f"elicitation:{ctx.request_id}")
        schema = getattr(params, "requested_schema", None) or {}
        content: dict[str, Any] = {}
        for field, prop in (schema.get("properties") or {}).items():
            kind = prop.get("type") if isinstance(prop, dict) else None
            default = {"boolean": True, "integer": 1, "number": 1.5}.get(kind, "x")
            content[field] = FORM_ANSWERS.get(field, default)
        log("[elicit]", ctx.request_id, params.message, "->", content)
        return types.ElicitResult(action="accept", content=content)

    async def on_sample(ctx, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(f"sampling:{ctx.request_id}")
        first = params.messages[0].content if params.messages else None
        question = getattr(first, "text", "") or ""
        answer = "Paris" if "capital" in question else "Hello there!"
        log("[sample]", ctx.request_id, question, "->", answer)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=answer),
            model="test-model",
            stop_reason="endTurn",
        )

    async def on_roots(ctx) -> types.ListRootsResult:
        asked.append(f"roots:{ctx.request_id}")
        return types.ListRootsResult(roots=[types.Root(uri="file:///test/root", name="Test Root")])

    summary: dict[str, Any] = {}
    async with Client(
        server,
        mode="auto",
        client_info=types.Implementation(name="palisade-tests-python-stateless", version="1.0.0"),
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        list_roots_callback=on_roots,
        read_timeout_seconds=120,
        cache=None,
    ) as client:
        version = client.protocol_version
        log("negotiated", version)
        assert version == EXPECTED_VERSION, f"negotiated {version!r}, not {EXPECTED_VERSION}"
        summary["protocol_version"] = version
        info = client.server_info
        assert info is not None and info.name == "palisade", info
        summary["server_name"] = info.name

        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        log("tools", names)
        for needed in ("test_input_required_result_elicitation", "test_custom_header", "test_simple_text"):
            assert needed in names, (needed, names)
        summary["tools"] = names

        result = await client.call_tool("test_simple_text", {})
        assert not result.is_error, result
        summary["simple_text"] = text_of(result)

        result = await client.call_tool("test_input_required_result_elicitation", {})
        assert not result.is_error, result
        summary["elicitation"] = text_of(result)
        log("elicitation ->", summary["elicitation"])
        assert summary["elicitation"] == "Hello, Alice!", summary["elicitation"]

        result = await client.call_tool("test_input_required_result_multi_round", {})
        assert not result.is_error, result
        summary["multi_round"] = text_of(result)
        log("multi_round ->", summary["multi_round"])

        result = await client.call_tool("test_input_required_result_multiple_inputs", {})
        assert not result.is_error, result
        summary["multiple_inputs"] = text_of(result)
        log("multiple_inputs ->", summary["multiple_inputs"])

        summary["custom_header"] = []
        for region in ("eu-west1", "Zürich"):
            result = await client.call_tool("test_custom_header", {"region": region})
            assert not result.is_error, result
            summary["custom_header"].append(text_of(result))
        log("custom_header ->", summary["custom_header"])

        read = await client.read_resource("test://static-text")
        summary["resource"] = read.contents[0].text
        log("resource ->", summary["resource"])

        prompt = await client.get_prompt("test_input_required_result_prompt")
        summary["prompt"] = [getattr(m.content, "text", None) for m in prompt.messages]
        log("prompt ->", summary["prompt"])

        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        result = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert not result.is_error, result
        summary["progress"] = progress
        log("progress ->", progress)

        summary["listen"] = None
        if listen:
            async with client.listen(tools_list_changed=True) as sub:
                honored = bool(sub.honored and sub.honored.tools_list_changed)
                log("listen", sub.subscription_id, "honored", sub.honored)
                result = await client.call_tool("test_trigger_tool_change", {})
                assert not result.is_error, result
                event = None
                with anyio.fail_after(120):
                    async for event in sub:
                        if isinstance(event, ToolsListChanged):
                            break
                summary["listen"] = {
                    "honored_tools": honored,
                    "event": type(event).__name__ if event is not None else None,
                }
            log("listen ->", summary["listen"])

        summary["asked"] = sorted(set(asked))
    return summary


def main(argv: list[str]) -> None:
    # Whatever the locale: the summary and the log carry non-ASCII text (Zürich).
    sys.stdout.reconfigure(encoding="utf-8")
    sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")
    listen = "--no-listen" not in argv
    argv = [a for a in argv if a != "--no-listen"]
    if len(argv) == 2 and argv[0] == "http":
        server: str | StdioServerParameters = argv[1]
    elif len(argv) == 4 and argv[0] == "stdio":
        palisade, config, cache = argv[1:]
        server = StdioServerParameters(
            command=palisade, args=["serve", "--config", config, "--cache-dir", cache]
        )
    else:
        sys.exit(__doc__)
    summary = asyncio.run(run(server, listen))
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
