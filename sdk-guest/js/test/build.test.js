import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { usesFetch } from '../bin/palisade-js.mjs';

const CLI = join(dirname(dirname(fileURLToPath(import.meta.url))), 'bin', 'palisade-js.mjs');

/** Runs `palisade-js build` on `source`; returns [exit status, stderr]. */
function build(source, ...args) {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-js-test-'));
  try {
    const app = join(dir, 'app.js');
    writeFileSync(app, source);
    try {
      execFileSync(process.execPath, [CLI, 'build', app, '-o', join(dir, 'app.wasm'), ...args], { stdio: 'pipe' });
      return [0, ''];
    } catch (error) {
      return [error.status, String(error.stderr)];
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const HEADER = "import { Plugin } from '@palisade/sdk';\nconst plugin = new Plugin();\n";
const FOOTER = 'export const { tools, resources, prompts, completion } = plugin.exports();\n';

test('a world that would drop the tools fails the build, naming them', () => {
  const [status, stderr] = build(
    `${HEADER}plugin.tool({ name: 'shout', input: {} }, () => 'x');\n${FOOTER}`,
    '--world', 'resource-provider',
  );
  assert.equal(status, 1);
  assert.match(stderr, /defines tool shout, but the world `resource-provider` does not export `tools` \(it exports: resources\)/);
});

test('an app that defines nothing fails the build', () => {
  const [status, stderr] = build(`${HEADER}${FOOTER}`);
  assert.equal(status, 1);
  assert.match(stderr, /defines no tools, resources or prompts/);
});

test('fetch is enabled only for apps that use it', () => {
  assert.ok(usesFetch('const r = await fetch(url);'));
  assert.ok(usesFetch('new Headers({ a: "b" })'));
  assert.ok(!usesFetch('const prefetch = 1; refetchLater();'.replace('refetchLater()', 'x')));
  assert.ok(!usesFetch('plugin.tool({ name: "fetcher" })'));
});
