"""A real MCP client against Palisade: the official Python SDK's ClientSession over stdio.

Usage: python_stdio.py PALISADE_BIN HELLO_WASM CACHE_DIR
Prints one line per check and exits non-zero on the first failure.
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary: str, hello: str, cache: str) -> None:
    params = StdioServerParameters(
        command=binary,
        args=["serve", "--plugin", hello, "--cache-dir", cache],
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print("negotiated", init.protocol_version, "with", init.server_info.name)
            assert init.server_info.name == "palisade", init

            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            print("tools", names)
            assert names == ["hello_echo", "hello_greet"], names

            result = await session.call_tool("hello_greet", {"name": "Python"})
            text = result.content[0].text
            print("greet ->", text)
            assert not result.is_error and text == "Hello, Python!", result

            result = await session.call_tool("hello_echo", {"text": "round trip"})
            print("echo ->", result.structured_content)
            assert result.structured_content == {"text": "round trip"}, result

            result = await session.call_tool("hello_greet", {"name": 7})
            print("bad arguments ->", result.content[0].text.splitlines()[0])
            assert result.is_error, result

            await session.send_ping()
            print("ping ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
