import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Plugin, DefinitionError, objectSchema } from '../index.js';

const listed = async (plugin) => (await plugin.exports().tools.listTools()).map((tool) => ({
  ...tool,
  inputSchema: JSON.parse(tool.inputSchema),
  outputSchema: tool.outputSchema && JSON.parse(tool.outputSchema),
}));

test('compact fields become an object schema with the required ones listed', () => {
  const schema = objectSchema({
    name: 'string',
    nickname: 'string?',
    count: { type: 'integer', description: 'How many', optional: true, default: 1 },
    ratio: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
    tags: { type: 'array', items: 'string' },
    mode: { enum: ['fast', 'slow'] },
    where: { type: 'object', properties: { city: 'string', zip: 'string?' } },
    extra: { type: 'object' },
  });
  assert.deepEqual(schema, {
    type: 'object',
    properties: {
      name: { type: 'string' },
      nickname: { type: 'string' },
      count: { type: 'integer', description: 'How many', default: 1 },
      ratio: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
      tags: { type: 'array', items: { type: 'string' } },
      mode: { enum: ['fast', 'slow'] },
      where: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] },
      extra: { type: 'object' },
    },
    required: ['name', 'tags', 'mode', 'where', 'extra'],
  });
});

test('no input means an empty object schema', async () => {
  const plugin = new Plugin().tool({ name: 'ping' }, () => 'pong');
  const [tool] = await listed(plugin);
  assert.deepEqual(tool.inputSchema, { type: 'object', properties: {} });
  assert.equal(tool.outputSchema, undefined);
  assert.equal(tool.annotations, undefined);
});

test('tool listing carries description, hints, output schema and meta', async () => {
  const plugin = new Plugin().tool(
    {
      name: 'count',
      title: 'Counter',
      description: 'Count things',
      input: { path: 'string' },
      output: { lines: 'integer', words: 'integer' },
      readOnly: true,
      openWorld: false,
      meta: { 'example.com/x': 1 },
    },
    () => ({ lines: 1, words: 2 }),
  );
  const [tool] = await listed(plugin);
  assert.equal(tool.name, 'count');
  assert.equal(tool.title, 'Counter');
  assert.equal(tool.description, 'Count things');
  assert.deepEqual(tool.annotations, { title: undefined, readOnlyHint: true, destructiveHint: undefined, idempotentHint: undefined, openWorldHint: false });
  assert.deepEqual(tool.outputSchema, { type: 'object', properties: { lines: { type: 'integer' }, words: { type: 'integer' } }, required: ['lines', 'words'] });
  assert.equal(tool.meta, '{"example.com/x":1}');
  assert.deepEqual(tool.icons, []);
});

test('a full JSON Schema is passed as it is', async () => {
  const inputSchema = { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'], additionalProperties: false };
  const [tool] = await listed(new Plugin().tool({ name: 'search', inputSchema }, () => ''));
  assert.deepEqual(tool.inputSchema, inputSchema);
  const [untyped] = await listed(new Plugin().tool({ name: 'any', inputSchema: { properties: {} } }, () => ''));
  assert.equal(untyped.inputSchema.type, 'object');
});

test('header marks become x-mcp-header, checked', async () => {
  const [tool] = await listed(new Plugin().tool({ name: 'route', input: { region: { type: 'string', header: 'Region' }, n: 'number' } }, () => ''));
  assert.equal(tool.inputSchema.properties.region['x-mcp-header'], 'Region');
  assert.throws(
    () => new Plugin().tool({ name: 'route', input: { score: { type: 'number', header: 'Score' } } }, () => ''),
    /tool `route`: input `score`: cannot mirror into a header: its type is "number"/,
  );
  assert.throws(
    () => new Plugin().tool({ name: 'route', input: { a: { type: 'string', header: 'My Region' } } }, () => ''),
    /is not an HTTP field name/,
  );
  assert.throws(
    () => new Plugin().tool({ name: 'route', input: { a: { type: 'string', header: 'Region' }, b: { type: 'integer', header: 'REGION' } } }, () => ''),
    /input `b`: cannot mirror into the header `REGION`: `a` is mirrored into it already/,
  );
});

test('definition mistakes name the tool and the field', () => {
  const bad = (spec, pattern) => assert.throws(() => new Plugin().tool(spec, () => ''), (error) => {
    assert.ok(error instanceof DefinitionError, `${error}`);
    assert.match(error.message, pattern);
    return true;
  });
  bad({ name: 'greet', input: { count: 'strng' } }, /^tool `greet`: input `count`: unknown type "strng" \(use one of string, number, integer, boolean, array, object/);
  bad({ name: 'greet', input: { count: { type: 'integer', optinal: true } } }, /^tool `greet`: input `count`: unknown key `optinal`/);
  bad({ name: 'greet', input: { where: { type: 'object', properties: { city: 7 } } } }, /^tool `greet`: input `where.city`: expected a type name/);
  bad({ name: 'greet', input: { tags: { type: 'array', items: 'strin' } } }, /^tool `greet`: input `tags\[\]`: unknown type/);
  bad({ name: 'greet', input: { n: {} } }, /^tool `greet`: input `n`: no `type`/);
  bad({ name: 'greet', input: 'string' }, /^tool `greet`: input: expected an object of fields, not a string/);
  bad({ name: 'greet', output: { lines: 'int' } }, /^tool `greet`: output `lines`: unknown type "int"/);
  bad({ name: 'greet', outputSchema: { type: 'array' } }, /^tool `greet`: output: the schema must describe a JSON object/);
  bad({ name: 'greet', input: {}, inputSchema: {} }, /either `input` or `inputSchema`/);
  bad({ name: 'greet', readonly: true }, /^tool `greet`: unknown key `readonly`/);
  bad({ name: 'greet', readOnly: 'yes' }, /`readOnly` must be true or false/);
  bad({ name: 'bad name' }, /tool name "bad name" is not 1 to 64 characters of A-Z a-z 0-9 _ -/);
  bad({ name: '' }, /is not 1 to 64 characters/);
  bad({ name: 'x'.repeat(65) }, /is not 1 to 64 characters/);
  assert.throws(() => new Plugin().tool({ name: 'ok' }), /tool `ok`: the second argument must be the function/);
});

test('tool names follow the WIT rule and may not repeat', () => {
  const plugin = new Plugin().tool({ name: 'A-z_09' }, () => '').tool({ name: 'x'.repeat(64) }, () => '');
  assert.throws(() => plugin.tool({ name: 'A-z_09' }, () => ''), /two tools are named `A-z_09`/);
});
