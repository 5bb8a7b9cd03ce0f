// The operator's console, as an operator and an MCP client use it together: Debian's Chromium,
// driven by playwright-core, logs in (the one-time link of --console, and an operator's token on
// the MCP listener's /console), sees the plugins, opens one, watches a call appear, answers a
// grant question that the client (the official TypeScript SDK, which declares no elicitation)
// cannot show and sees the call succeed, revokes the grant and sees the next call refused, and
// cancels a running call. Refused: no credentials, an MCP token that is not an operator's, a
// wrong token, a forged action without the CSRF token. Screenshots go to ARTIFACTS_DIR.
//
// Usage: node console.mjs MCP_URL CONSOLE_LINK OPERATOR_TOKEN OTHER_TOKEN PAGE_URL ARTIFACTS_DIR
// Prints one line per check and `ok` at the end; exits non-zero on the first failure.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';

const [mcpUrl, link, operatorToken, otherToken, pageUrl, artifacts] = process.argv.slice(2);
const mcpBase = new URL(mcpUrl).origin;
const consoleBase = new URL(link).origin;
mkdirSync(artifacts, { recursive: true });
const WAIT = { timeout: 20_000 };

// -- Refused before any browser ----------------------------------------------------------------

const status = async (url, init) => (await fetch(url, { redirect: 'manual', ...init })).status;
assert.equal(await status(`${mcpBase}/console`), 401);
assert.equal(await status(`${mcpBase}/console`, { headers: { authorization: `Bearer ${otherToken}` } }), 403);
assert.equal(await status(`${mcpBase}/console`, { headers: { authorization: 'Bearer not-a-token-at-all' } }), 401);
assert.equal(await status(`${mcpBase}/console`, { headers: { authorization: `Bearer ${operatorToken}` } }), 200);
const wrongLogin = await status(`${mcpBase}/console/login`, {
  method: 'POST', body: new URLSearchParams({ token: otherToken }),
});
assert.equal(wrongLogin, 403);
console.log('refused: no credentials 401, a client that is not an operator 403, a bad token 401');

// -- The MCP client: alice's token, no elicitation ---------------------------------------------

const client = new Client({ name: 'console-test-client', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), {
  requestInit: { headers: { authorization: `Bearer ${operatorToken}` } },
}));
const text = (result) => result.content.map((c) => c.text ?? '').join('\n');
const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const shot = (name) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

  // -- Log in with the one-time link; it works once ----------------------------------------------
  await page.goto(link);
  assert.equal(new URL(page.url()).pathname, '/console');
  await page.locator('table.plugins').waitFor(WAIT);
  for (const plugin of ['fetch', 'hello', 'misbehave']) {
    await page.locator('table.plugins a', { hasText: plugin }).first().waitFor(WAIT);
  }
  await page.locator('#live.on').waitFor(WAIT);
  console.log('logged in with the link: the plugins are listed, live updates on');
  assert.equal(await status(link), 401, 'the link works once');

  // -- A plugin's page ---------------------------------------------------------------------------
  await page.locator('table.plugins a', { hasText: 'fetch' }).first().click();
  await page.locator('h1', { hasText: 'fetch' }).waitFor(WAIT);
  for (const heading of ['Where it came from', 'Granted', 'Imports', 'Limits', 'Tools', 'Recent calls', 'Log']) {
    await page.locator('h2', { hasText: heading }).first().waitFor(WAIT);
  }
  assert.match(await page.locator('section').first().innerText(), /sha256/);
  assert.match(await page.locator('table.imports').innerText(), /wasi:http/);
  console.log('the plugin page shows where fetch came from, its grants, imports, limits and tools');
  await shot('plugin');

  // -- Watch a call appear --------------------------------------------------------------------
  await page.goto(`${consoleBase}/console/calls`);
  await page.locator('#live.on').waitFor(WAIT);
  const greeted = await call('hello_greet', { name: 'console' });
  assert.ok(!greeted.isError, text(greeted));
  await page.locator('table.calls td', { hasText: 'hello_greet' }).first().waitFor(WAIT);
  console.log('a call appeared on the calls page without a reload');

  // -- A grant question the client cannot show, answered in the console --------------------------
  await page.goto(`${consoleBase}/console/grants`);
  await page.locator('#live.on').waitFor(WAIT);
  const fetched = call('fetch_fetch', { url: pageUrl });
  // The SDK's client declares no elicitation: only the console can answer.
  const question = page.locator('table.questions tr', { hasText: 'its client cannot be asked' });
  await question.waitFor(WAIT);
  assert.match(await question.innerText(), /fetch/);
  await shot('grant-question');
  await question.getByRole('button', { name: 'Always allow' }).click();
  const answered = await fetched;
  assert.ok(!answered.isError, text(answered));
  assert.match(text(answered), /Hello from the console test/);
  console.log('answered "always" in the console: the call went on and the page arrived');

  // The plugin's page now shows the host as used, and the call as recent.
  await page.goto(`${consoleBase}/console/plugins/fetch`);
  const host = new URL(pageUrl).host;
  await page.locator('li', { hasText: `network http://${host}` }).first().waitFor(WAIT);
  await page.locator('table.calls td', { hasText: 'fetch_fetch' }).first().waitFor(WAIT);
  assert.match(await page.locator('dl.facts').nth(2).innerText(), /calls running\s+0 of 16/);
  console.log('the plugin page shows the host it used, its budget and its call');
  await shot('plugin-used');
  await page.goto(`${consoleBase}/console/grants`);

  // -- Revoked: the next call asks again, and is refused when denied ----------------------------
  const remembered = page.locator('table.remembered tr', { hasText: 'fetch' });
  await remembered.waitFor(WAIT);
  assert.match(await remembered.innerText(), /operator:console-link/);
  await shot('grants');
  await remembered.getByRole('button', { name: 'Revoke' }).click();
  await page.locator('p.said', { hasText: 'revoked' }).waitFor(WAIT);
  assert.equal(await page.locator('table.remembered tr', { hasText: 'fetch' }).count(), 0);
  const again = call('fetch_fetch', { url: pageUrl });
  const asked = page.locator('table.questions tr', { hasText: 'fetch' });
  await asked.waitFor(WAIT);
  await asked.getByRole('button', { name: 'Deny' }).click();
  const refused = await again;
  assert.ok(refused.isError, text(refused));
  assert.match(text(refused), /refused/i);
  console.log('revoked: the next call asked again and, denied, was refused');

  // -- Cancel a running call ---------------------------------------------------------------------
  await page.goto(`${consoleBase}/console/calls`);
  await page.locator('#live.on').waitFor(WAIT);
  const running = call('misbehave_until_cancelled', {});
  const row = page.locator('table.running tr', { hasText: 'misbehave_until_cancelled' });
  await row.waitFor(WAIT);
  await shot('calls');
  await row.getByRole('button', { name: 'Cancel' }).click();
  const cancelled = await running;
  assert.ok(cancelled.isError, text(cancelled));
  assert.match(text(cancelled), /operator \(console-link\) cancelled this call/);
  console.log('cancelled a running call: the client was told the operator stopped it');

  assert.deepEqual(errors, [], 'no script errors, no failed loads in the console');

  // -- A forged action: without the CSRF token, refused ------------------------------------------
  const forged = await page.evaluate(async () => {
    const post = (body) => fetch('/console/grants/revoke', {
      method: 'POST', body: new URLSearchParams(body),
    }).then((r) => r.status);
    return [await post({ plugin: 'fetch', grant: 'x' }), await post({ plugin: 'fetch', grant: 'x', csrf: 'forged' })];
  });
  assert.deepEqual(forged, [403, 403]);
  console.log('forged actions without the CSRF token: 403');

  // -- Logging in with an operator's token on the MCP listener ----------------------------------
  const second = await browser.newContext();
  const login = await second.newPage();
  await login.goto(`${mcpBase}/console/login`);
  await login.fill('#token', otherToken);
  await login.getByRole('button', { name: 'Log in' }).click();
  await login.locator('p.problem', { hasText: 'not an operator' }).waitFor(WAIT);
  await login.fill('#token', operatorToken);
  await login.getByRole('button', { name: 'Log in' }).click();
  await login.locator('span.who', { hasText: 'alice' }).waitFor(WAIT);
  console.log('the login form refused a client that is not an operator and let alice in');
  await second.close();

  await page.goto(`${consoleBase}/console/sessions`);
  await page.locator('table.sessions td', { hasText: 'console-test-client' }).first().waitFor(WAIT);
  await shot('sessions');
  console.log('the sessions page lists the client as it named itself');

  await page.goto(`${consoleBase}/console`);
  await page.locator('table.plugins td', { hasText: 'ready' }).first().waitFor(WAIT);
  await shot('overview');
} finally {
  await browser.close();
  await client.close();
}
console.log('ok');
