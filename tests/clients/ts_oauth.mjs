// The official TypeScript SDK's OAuth support against Palisade as an OAuth 2.1 resource server.
//
//   node ts_oauth.mjs URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE TOOL ARGS_JSON
//       client credentials: the SDK reads the 401 challenge and the protected resource metadata,
//       finds the issuer, gets a token for URL (RFC 8707 `resource`) with SCOPE, and retries
//   node ts_oauth.mjs URL --token TOKEN TOOL ARGS_JSON
//       a token obtained beforehand, sent as `Authorization: Bearer`
// Prints one JSON line: {"tools": [names listed], "call": {"isError": bool, "text": str}}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [url, ...rest] = process.argv.slice(2);
let transport;
let tool;
let args;
if (rest[0] === '--token') {
  [, , tool, args] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${rest[1]}` } },
  });
} else {
  const [expectedIssuer, clientId, clientSecret, scope] = rest;
  [tool, args] = rest.slice(4);
  // The SDK asks for exactly this scope (not the server's scopes_supported).
  const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer, scope });
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
}

const client = new Client({ name: 'palisade-oauth-test', version: '1.0.0' });
await client.connect(transport);
const { tools } = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
const text = result.content.map((c) => c.text ?? '').join(' ');
console.log(JSON.stringify({ tools: tools.map((t) => t.name), call: { isError: result.isError ?? false, text } }));
await client.close();
