"""The official Python SDK's OAuth support against Palisade as an OAuth 2.1 resource server.

Usage:
  python_oauth.py URL ISSUER CLIENT_ID CLIENT_SECRET TOOL ARGS_JSON
      client credentials: the SDK reads the 401 challenge and the protected resource metadata,
      finds the issuer, gets a token for URL (RFC 8707 `resource`) and retries with it
  python_oauth.py URL --token TOKEN TOOL ARGS_JSON
      a token obtained beforehand, sent as `Authorization: Bearer`
Prints one JSON line: {"tools": [names listed], "call": {"isError": bool, "text": str}}.
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class MemoryStorage:
    """Where the SDK keeps the token and the client's registration; it ships none in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def http_client(argv: list[str]) -> tuple[httpx2.AsyncClient, str, dict]:
    timeout = httpx2.Timeout(30.0, read=120.0)
    url = argv[0]
    if argv[1] == "--token":
        headers = {"Authorization": f"Bearer {argv[2]}"}
        return httpx2.AsyncClient(headers=headers, timeout=timeout), argv[3], json.loads(argv[4])
    issuer, client_id, secret, tool, args = argv[1:6]
    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=client_id,
        client_secret=secret,
        token_endpoint_auth_method="client_secret_basic",
        issuer=issuer,
    )
    return httpx2.AsyncClient(auth=auth, timeout=timeout), tool, json.loads(args)


async def main(argv: list[str]) -> None:
    url = argv[0]
    client, tool, args = http_client(argv)
    async with client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool(tool, args)
                text = " ".join(getattr(c, "text", "") for c in result.content)
                summary = {
                    "tools": [t.name for t in tools.tools],
                    "call": {"isError": bool(result.is_error), "text": text},
                }
                print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
