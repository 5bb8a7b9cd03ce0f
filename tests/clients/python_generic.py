"""The official Python SDK's ClientSession against a generic component (plain exported
functions, no palisade:plugin): it lists the tools and calls them, and the SDK checks each
structured result against the tool's outputSchema itself.

Usage: python_generic.py PALISADE_BIN COMPONENT_WASM CACHE_DIR
Prints one line per check and exits non-zero on the first failure.
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary: str, component: str, cache: str) -> None:
    params = StdioServerParameters(
        command=binary,
        args=["serve", "--plugin", component, "--cache-dir", cache],
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            print("tools", len(tools))
            add = tools["generic-types_numbers_add-u8"]
            assert add.input_schema["properties"]["a"]["maximum"] == 255, add
            assert add.output_schema is not None, add

            result = await session.call_tool("generic-types_numbers_add-u8", {"a": 250, "b": 10})
            print("add-u8 ->", result.structured_content)
            assert result.structured_content == {"result": 4}, result

            result = await session.call_tool(
                "generic-types_shapes_shift", {"p": {"x": 1, "y": 2, "label": "a"}, "dx": 2}
            )
            print("shift ->", result.structured_content)
            assert result.structured_content == {"x": 3, "y": 2, "label": "a"}, result

            result = await session.call_tool(
                "generic-types_shapes_describe", {"s": {"circle": 1.5}, "c": "blue"}
            )
            print("describe ->", result.content[0].text)
            assert result.content[0].text == "blue circle of radius 1.5", result

            result = await session.call_tool("generic-types_numbers_extremes", {})
            print("extremes ->", result.structured_content)
            assert result.structured_content == {"result": [2**64 - 1, -(2**63)]}, result

            result = await session.call_tool("generic-types_numbers_divide", {"a": 1, "b": 0})
            print("divide by zero ->", result.content[0].text)
            assert result.is_error and result.content[0].text == "cannot divide 1 by 0", result


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
