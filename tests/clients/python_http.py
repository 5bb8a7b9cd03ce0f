"""A real MCP client against Palisade over Streamable HTTP: the official Python SDK's ClientSession
on its streamable HTTP client transport.

Usage: python_http.py URL
  URL is http://ADDR/mcp of a `palisade serve --http` that serves hello, misbehave and the
  conformance plugin (test_sampling).
Prints one line per check and exits non-zero on the first failure.
"""

import asyncio
import sys

import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str) -> None:
    sampled = []

    async def sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="4"),
            model="test-model",
            stop_reason="endTurn",
        )

    logs = []

    async def logging(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with streamable_http_client(url) as (read, write):
        async with ClientSession(
            read, write, sampling_callback=sampling, logging_callback=logging
        ) as session:
            init = await session.initialize()
            print("negotiated", init.protocol_version, "with", init.server_info.name)
            assert init.server_info.name == "palisade", init

            # Every page: the server lists 50 tools a page.
            listed, cursor = [], None
            while True:
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                listed += page.tools
                cursor = page.next_cursor
                if not cursor:
                    break
            names = sorted(t.name for t in listed)
            print("tools include", [n for n in names if n in ("hello_greet", "misbehave_progress", "test_sampling")])
            for name in ("hello_greet", "misbehave_progress", "test_sampling"):
                assert name in names, names

            result = await session.call_tool("hello_greet", {"name": "HTTP"})
            text = result.content[0].text
            print("greet ->", text)
            assert not result.is_error and text == "Hello, HTTP!", result

            progress = []

            async def on_progress(value, total, message) -> None:
                progress.append(value)

            result = await session.call_tool(
                "misbehave_progress", {"steps": 200000}, progress_callback=on_progress
            )
            print("progress ->", result.content[0].text, "after", "some" if progress else "no", "progress")
            assert result.content[0].text == "reported 200000 steps", result
            assert progress and progress == sorted(progress), progress

            result = await session.call_tool("misbehave_log", {"level": "info", "count": 2})
            print("log ->", result.content[0].text, logs)
            assert logs == ["message 1", "message 2"], logs

            result = await session.call_tool("test_sampling", {"prompt": "What is 2+2?"})
            text = result.content[0].text
            print("sampling ->", text)
            assert not result.is_error and text == "LLM response: 4", result
            assert len(sampled) == 1, sampled

            await session.send_ping()
            print("ping ok")
    print("closed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
