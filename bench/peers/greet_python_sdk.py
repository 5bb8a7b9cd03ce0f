"""A stdio MCP server with the languages benchmark's `greet`, written with the official MCP Python
SDK and run by plain CPython, without a sandbox: a peer for `palisade-bench languages --peer`.

    palisade-bench languages --peer "target/pyclient/bin/python bench/peers/greet_python_sdk.py" \\
        --peer-tool Python=greet

(`target/pyclient` is the virtualenv `./dev test` makes from tests/clients/requirements.txt.)
"""

from mcp.server import MCPServer

server = MCPServer("greet-python-sdk")


@server.tool()
def greet(name: str) -> str:
    """Say hello to someone."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    server.run("stdio")
