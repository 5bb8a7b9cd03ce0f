// MCP Apps end to end, as a host that shows views does it: the official TypeScript SDK lists
// Palisade's tools, finds a tool's view (`_meta.ui.resourceUri`), reads the view (the exact mime
// type and `_meta.ui`, checked against the ext-apps schema) and calls the tool; then Debian's
// Chromium, driven by playwright-core, loads a host page that embeds the view in a sandboxed
// iframe through the ext-apps host bridge (AppBridge), hands it the tool's result, and this
// script reads what the view drew.
//
// Usage: node apps_view.mjs MCP_URL TOOL ARGUMENTS_JSON
// Prints one line per check and `ok` at the end; exits non-zero on the first failure.

import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020.js';
import { chromium } from 'playwright-core';

const [url, toolName, argumentsJson] = process.argv.slice(2);
const args = JSON.parse(argumentsJson);
const here = dirname(fileURLToPath(import.meta.url));
const MIME = 'text/html;profile=mcp-app';

// -- As a client: the tool, its view, its result ----------------------------------------------

const client = new Client({ name: 'palisade-apps-host', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tool = (await client.listTools()).tools.find((t) => t.name === toolName);
assert.ok(tool, `no tool ${toolName}`);
const uri = tool._meta?.ui?.resourceUri;
console.log('tool', toolName, 'names its view', uri, 'for', tool._meta.ui.visibility);
assert.match(uri, /^ui:\/\//);
assert.equal(tool._meta['ui/resourceUri'], uri);

const schema = JSON.parse(readFileSync(join(here, 'node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: false });
ajv.addSchema(schema, 'ext-apps');
const valid = (definition, value) => {
  const check = ajv.getSchema(`ext-apps#/$defs/${definition}`) ?? ajv.getSchema(`ext-apps#/definitions/${definition}`);
  assert.ok(check, `the ext-apps schema has no ${definition}`);
  assert.ok(check(value), `${definition}: ${JSON.stringify(check.errors)} in ${JSON.stringify(value)}`);
};
valid('McpUiToolMeta', tool._meta.ui);

const listed = (await client.listResources()).resources.find((r) => r.uri === uri);
assert.ok(listed, `${uri} is not listed`);
assert.equal(listed.mimeType, MIME);
valid('McpUiResourceMeta', listed._meta.ui);
const read = await client.readResource({ uri });
const [view] = read.contents;
console.log('read', uri, 'as', view.mimeType, 'with _meta.ui', JSON.stringify(view._meta.ui));
assert.equal(view.uri, uri);
assert.equal(view.mimeType, MIME);
valid('McpUiResourceMeta', view._meta.ui);
assert.match(view.text, /^<!DOCTYPE html>/i);

const result = await client.callTool({ name: toolName, arguments: args });
assert.ok(!result.isError, JSON.stringify(result));
console.log('called', toolName, '->', result.content[0].text.slice(0, 80));
await client.close();

// -- As a host: the view in a sandboxed iframe, through the ext-apps bridge --------------------

// The browser loads the bridge as modules from tests/clients/node_modules: each bare name it
// imports, mapped to its browser build.
const imports = {
  '@modelcontextprotocol/ext-apps/app-bridge': '/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js',
  '@modelcontextprotocol/client': '/node_modules/@modelcontextprotocol/client/dist/index.mjs',
  '@modelcontextprotocol/client/_shims': '/node_modules/@modelcontextprotocol/client/dist/shimsBrowser.mjs',
  '@modelcontextprotocol/core': '/node_modules/@modelcontextprotocol/core/dist/index.mjs',
  '@modelcontextprotocol/core/internal': '/node_modules/@modelcontextprotocol/core/dist/internal.mjs',
  '@modelcontextprotocol/server': '/node_modules/@modelcontextprotocol/server/dist/index.mjs',
  '@modelcontextprotocol/server/_shims': '/node_modules/@modelcontextprotocol/server/dist/shimsBrowser.mjs',
  zod: '/node_modules/zod/index.js',
  'zod/v4': '/node_modules/zod/v4/index.js',
  'zod/compile': '/node_modules/zod/compile.js',
  'pkce-challenge': '/node_modules/pkce-challenge/dist/index.browser.js',
  eventsource: '/node_modules/eventsource/dist/index.js',
  'eventsource-parser': '/node_modules/eventsource-parser/dist/index.js',
  'eventsource-parser/stream': '/node_modules/eventsource-parser/dist/stream.js',
  jose: '/node_modules/jose/dist/webapi/index.js',
};
for (const path of Object.values(imports)) assert.ok(existsSync(join(here, path)), `${path} is missing (npm ci in tests/clients)`);

// The host: `show` puts the view in an iframe (scripts only: an opaque origin, as a real host
// does), answers its handshake through AppBridge, then sends the tool's input and result.
const hostPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>test host</title>
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module">
import { AppBridge, PostMessageTransport, buildAllowAttribute } from '@modelcontextprotocol/ext-apps/app-bridge';
// The extension's default policy for a view that declares no domains.
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'";
window.show = (html, ui, args, result) => new Promise((shown, failed) => {
  const iframe = document.createElement('iframe');
  iframe.id = 'view';
  iframe.setAttribute('sandbox', 'allow-scripts');
  const allow = buildAllowAttribute(ui.permissions);
  if (allow) iframe.setAttribute('allow', allow);
  iframe.style.cssText = 'width:400px;height:40px;border:' + (ui.prefersBorder ? '1px solid' : '0');
  document.body.append(iframe);
  const bridge = new AppBridge(null, { name: 'palisade-test-host', version: '1.0.0' }, {},
    { hostContext: { theme: 'light', displayMode: 'inline', platform: 'web' } });
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = height + 'px'; };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
    shown(bridge.getAppVersion());
  };
  bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow)).then(() => {
    iframe.srcdoc = html.replace(/<head[^>]*>/i, (head) => head + '<meta http-equiv="Content-Security-Policy" content="' + CSP + '">');
  }, failed);
});
window.ready = true;
</script></head><body></body></html>`;

const server = createServer((request, response) => {
  const path = normalize(decodeURIComponent(new URL(request.url, 'http://x').pathname));
  if (path === '/host.html') {
    response.writeHead(200, { 'content-type': 'text/html' }).end(hostPage);
  } else if (path.startsWith('/node_modules/') && existsSync(join(here, path))) {
    response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(join(here, path)));
  } else {
    response.writeHead(404).end();
  }
});
await new Promise((listening) => server.listen(0, '127.0.0.1', listening));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${server.address().port}/host.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 20_000 });
  const app = await page.evaluate(([html, ui, args, result]) => window.show(html, ui, args, result), [view.text, view._meta.ui, args, result]);
  console.log('the view said hello as', JSON.stringify(app));
  const frame = page.frameLocator('#view');
  const points = result.structuredContent.points;
  await frame.locator('svg#forecast circle').nth(points.length - 1).waitFor({ timeout: 20_000 });
  const drawn = await frame.locator('svg#forecast circle').evaluateAll((circles) => circles.map((c) => Number(c.getAttribute('data-temperature'))));
  const title = await frame.locator('#title').textContent();
  console.log('the view drew', drawn.length, 'points:', drawn.join(' '), '|', title);
  assert.deepEqual(drawn, points.map((p) => p.temperature));
  assert.equal(title, `Forecast for ${result.structuredContent.city}, ${result.structuredContent.country}`);
  // The view said its size, and the host made room for the chart.
  await page.waitForFunction(() => parseInt(document.getElementById('view').style.height, 10) > 100, null, { timeout: 10_000 });
  assert.deepEqual(errors, []);
} finally {
  await browser.close();
  server.close();
}
console.log('ok');
