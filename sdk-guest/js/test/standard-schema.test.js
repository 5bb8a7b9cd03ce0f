import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { z } from 'zod';
import { Plugin, DefinitionError } from '../index.js';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

const listed = async (plugin) => (await plugin.exports().tools.listTools()).map((tool) => ({
  name: tool.name,
  inputSchema: JSON.parse(tool.inputSchema),
  outputSchema: tool.outputSchema && JSON.parse(tool.outputSchema),
}));
const call = (plugin, name, args) => plugin.exports().tools.callTool(name, JSON.stringify(args));
const texts = (result) => result.content.map((block) => block.val.text);

/** Arguments with defaults, a transformation, and a nested list: `tags` comes in as text. */
const Forecast = z.object({
  city: z.string().trim().min(1).describe('The city'),
  days: z.number().int().min(1).max(7).default(3),
  tags: z.string().transform((list) => list.split(',')).optional(),
  stops: z.array(z.object({ name: z.string() })).default([]),
});

function forecast() {
  return new Plugin().tool(
    { name: 'forecast', input: Forecast, output: z.object({ summary: z.string() }) },
    (args) => ({ summary: JSON.stringify(args) }),
  );
}

test('a zod schema is listed as the JSON Schema of its input, and of its output', async () => {
  const [tool] = await listed(forecast());
  assert.deepEqual(tool.inputSchema, {
    $schema: DRAFT,
    type: 'object',
    properties: {
      city: { type: 'string', minLength: 1, description: 'The city' },
      days: { default: 3, type: 'integer', minimum: 1, maximum: 7 },
      tags: { type: 'string' },
      stops: { default: [], type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    },
    required: ['city'],
  });
  assert.deepEqual(tool.outputSchema, {
    $schema: DRAFT,
    type: 'object',
    properties: { summary: { type: 'string' } },
    required: ['summary'],
    additionalProperties: false,
  });
});

test("a valid call gets the schema's output: defaults filled in, values transformed", async () => {
  const result = await call(forecast(), 'forecast', { city: '  Oslo ', tags: 'rain,wind' });
  assert.equal(result.isError, false);
  assert.deepEqual(JSON.parse(JSON.parse(result.structuredContent).summary), {
    city: 'Oslo',
    days: 3,
    tags: ['rain', 'wind'],
    stops: [],
  });
});

test("an invalid call is a tool error listing the schema's issues with their paths", async () => {
  const result = await call(forecast(), 'forecast', { city: ' ', days: 9, stops: [{ name: 'a' }, { name: 2 }] });
  assert.equal(result.isError, true);
  assert.deepEqual(texts(result), [
    'invalid arguments: `city`: Too small: expected string to have >=1 characters; `days`: Too big: expected number to be <=7; ' +
      '`stops[1].name`: Invalid input: expected string, received number',
  ]);
  const missing = await call(forecast(), 'forecast', {});
  assert.deepEqual(texts(missing), ['invalid arguments: `city`: Invalid input: expected string, received undefined']);
});

test('async validation is awaited', async () => {
  const plugin = new Plugin().tool(
    { name: 'login', input: z.object({ user: z.string().refine(async (name) => name !== 'root', 'root may not log in') }) },
    ({ user }) => `hello ${user}`,
  );
  assert.deepEqual(texts(await call(plugin, 'login', { user: 'ada' })), ['hello ada']);
  const refused = await call(plugin, 'login', { user: 'root' });
  assert.equal(refused.isError, true);
  assert.deepEqual(texts(refused), ['invalid arguments: `user`: root may not log in']);
});

test('a zod schema without a JSON Schema form, or not of an object, is refused at definition time', () => {
  assert.throws(
    () => new Plugin().tool({ name: 'when', input: z.object({ at: z.date() }) }, () => ''),
    { name: 'DefinitionError', message: 'tool `when`: input: the zod schema cannot be described as JSON Schema for the client: Date cannot be represented in JSON Schema' },
  );
  assert.throws(
    () => new Plugin().tool({ name: 'word', input: z.string() }, () => ''),
    { name: 'DefinitionError', message: 'tool `word`: input: the schema must describe a JSON object, but has "type": "string"' },
  );
});

// Hand-written schemas: the protocol itself, without a library.

/** A Standard Schema of `{ n: integer }` whose `validate` is async and reports paths as segments. */
function counter({ jsonSchema } = {}) {
  return {
    '~standard': {
      version: 1,
      vendor: 'acme',
      async validate(value) {
        if (Number.isInteger(value?.n)) {
          return { value: { n: value.n * 2 } };
        }
        return { issues: [{ message: 'expected an integer', path: [{ key: 'n' }] }, { message: 'see the manual' }] };
      },
      ...(jsonSchema && { jsonSchema }),
    },
  };
}

test('a Standard Schema without Standard JSON Schema is refused with how to fix it', () => {
  assert.throws(
    () => new Plugin().tool({ name: 'count', input: counter() }, () => ''),
    (error) => {
      assert.ok(error instanceof DefinitionError);
      assert.equal(
        error.message,
        'tool `count`: input: the acme schema cannot be described as JSON Schema for the client: it implements Standard Schema (`~standard`) ' +
          'but not Standard JSON Schema (`~standard.jsonSchema`). Use a library that does (zod 4.2 or later, but not zod/mini), ' +
          'or give its JSON Schema as `inputSchema` beside `input` (which still checks the arguments)',
      );
      return true;
    },
  );
  assert.throws(() => new Plugin().tool({ name: 'out', output: counter() }, () => ''), /output: the acme schema .*give its JSON Schema as `outputSchema` in place of `output`$/);
  const future = { '~standard': { version: 2, vendor: 'acme', validate: () => ({ value: {} }) } };
  assert.throws(() => new Plugin().tool({ name: 'v2', input: future }, () => ''), {
    message: 'tool `v2`: input: not a Standard Schema the SDK knows: `~standard` must have `version: 1` and a `validate` function',
  });
});

test('`inputSchema` beside a Standard Schema describes it; the schema still validates', async () => {
  const inputSchema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  const plugin = new Plugin().tool({ name: 'double', input: counter(), inputSchema }, ({ n }) => `${n}`);
  assert.deepEqual((await listed(plugin))[0].inputSchema, inputSchema);
  assert.deepEqual(texts(await call(plugin, 'double', { n: 21 })), ['42']);
  assert.deepEqual(texts(await call(plugin, 'double', { n: 'x' })), ['invalid arguments: `n`: expected an integer; see the manual']);
  assert.throws(() => new Plugin().tool({ name: 'both', input: { n: 'integer' }, inputSchema }, () => ''), /give either `input` or `inputSchema`, not both/);
});

test('the Standard JSON Schema extension is asked for draft 2020-12', async () => {
  const targets = [];
  const jsonSchema = {
    input: ({ target }) => (targets.push(target), { type: 'object', properties: { n: { type: 'integer' } } }),
    output: () => ({}),
  };
  const plugin = new Plugin().tool({ name: 'double', input: counter({ jsonSchema }) }, ({ n }) => `${n}`);
  assert.deepEqual(targets, ['draft-2020-12']);
  assert.deepEqual((await listed(plugin))[0].inputSchema, { type: 'object', properties: { n: { type: 'integer' } } });
  assert.deepEqual(texts(await call(plugin, 'double', { n: 4 })), ['8']);
});

test('the SDK itself imports no schema library', async () => {
  const src = new URL('../src/', import.meta.url);
  for (const file of await readdir(src, { recursive: true })) {
    if (file.endsWith('.js')) {
      assert.doesNotMatch(await readFile(new URL(file, src), 'utf8'), /from ['"]zod|require\(['"]zod/, file);
    }
  }
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(manifest.dependencies.zod, undefined);
  assert.match(manifest.devDependencies.zod, /^4\.\d+\.\d+$/, 'an exact version, for tests');
});
