import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Plugin, ToolError, PluginError, NotFound, InvalidParams, DefinitionError,
  text, image, audio, resourceLink, embeddedResource, contents, toolResult, user, assistant, promptResult, prefixMatches,
} from '../index.js';

/** Runs `fn` with console.error captured; returns [result, captured lines]. */
async function quietly(fn) {
  const original = console.error;
  const lines = [];
  console.error = (...args) => lines.push(args.join(' '));
  try {
    return [await fn(), lines];
  } finally {
    console.error = original;
  }
}

/** What an export threw (the WIT error record), or fails. */
async function rejection(run) {
  try {
    await run();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

function demo() {
  return new Plugin()
    .tool({ name: 'greet', input: { name: 'string', excited: { type: 'boolean', default: false } } }, ({ name, excited }) => `Hello, ${name}${excited ? '!!!' : '!'}`)
    .tool({ name: 'nothing' }, () => undefined)
    .tool({ name: 'object', output: { n: 'integer' } }, () => ({ n: 3 }))
    .tool({ name: 'number' }, () => 25)
    .tool({ name: 'list' }, () => [1, 'two'])
    .tool({ name: 'flag' }, () => false)
    .tool({ name: 'blocks' }, () => [text('a'), image(new Uint8Array([1, 2]), 'image/png')])
    .tool({ name: 'full' }, () => toolResult({ content: ['x', resourceLink('file:///a', 'a', { size: 3 })], structuredContent: { ok: 1 }, meta: { m: true } }))
    .tool({ name: 'refuse' }, () => { throw new ToolError('the model should read this'); })
    .tool({ name: 'crash' }, () => { null.x; })
    .tool({ name: 'string_throw' }, () => { throw 'plain string'; })
    .tool({ name: 'not_found' }, () => { throw new NotFound('no such thing', { id: 7 }); })
    .tool({ name: 'raw_error' }, () => { throw { code: 'invalid-params', message: 'raw record' }; })
    .tool({ name: 'bytes' }, () => new Uint8Array([1]))
    .tool({ name: 'slow', input: { ms: 'integer' } }, async ({ ms }) => { await new Promise((r) => setTimeout(r, ms)); return `slept ${ms}`; })
    .tool({ name: 'full_schema', inputSchema: { type: 'object', properties: { n: { type: 'integer', default: 5 } } } }, (args) => JSON.stringify(args));
}

const call = (plugin, name, args) => plugin.exports().tools.callTool(name, typeof args === 'string' ? args : JSON.stringify(args ?? {}));
const texts = (result) => result.content.map((block) => block.val.text);

test('plain return values become results', async () => {
  const plugin = demo();
  assert.deepEqual(await call(plugin, 'greet', { name: 'Ada' }), {
    content: [{ tag: 'text', val: { text: 'Hello, Ada!', annotations: undefined, meta: undefined } }],
    structuredContent: undefined,
    isError: false,
    meta: undefined,
  });
  assert.deepEqual(texts(await call(plugin, 'greet', { name: 'Ada', excited: true })), ['Hello, Ada!!!']);
  assert.deepEqual((await call(plugin, 'nothing')).content, []);
  const object = await call(plugin, 'object');
  assert.deepEqual(texts(object), ['{"n":3}']);
  assert.equal(object.structuredContent, '{"n":3}');
  assert.deepEqual(texts(await call(plugin, 'number')), ['25']);
  assert.deepEqual(texts(await call(plugin, 'list')), ['[1,"two"]']);
  assert.equal((await call(plugin, 'list')).structuredContent, undefined);
  assert.deepEqual(texts(await call(plugin, 'flag')), ['false']);
  const blocks = await call(plugin, 'blocks');
  assert.deepEqual(blocks.content.map((b) => b.tag), ['text', 'image']);
  assert.deepEqual(blocks.content[1].val, { data: new Uint8Array([1, 2]), mimeType: 'image/png', annotations: undefined, meta: undefined });
  const full = await call(plugin, 'full');
  assert.deepEqual(full.content.map((b) => b.tag), ['text', 'resource-link']);
  assert.equal(full.content[1].val.size, 3n);
  assert.equal(full.structuredContent, '{"ok":1}');
  assert.equal(full.meta, '{"m":true}');
  assert.deepEqual(texts(await call(plugin, 'slow', { ms: 5 })), ['slept 5']);
});

test('defaults are filled in; arguments are checked', async () => {
  const plugin = demo();
  assert.deepEqual(texts(await call(plugin, 'full_schema', {})), ['{}'], 'a full schema is not interpreted');
  const missing = await call(plugin, 'greet', {});
  assert.equal(missing.isError, true);
  assert.deepEqual(texts(missing), ['invalid arguments: missing field `name`']);
  assert.deepEqual(texts(await call(plugin, 'greet', { name: 42 })), ['invalid arguments: `name` must be a string, not an integer']);
  assert.match(texts(await call(plugin, 'greet', '{'))[0], /^invalid arguments: not valid JSON: /);
  assert.deepEqual(texts(await call(plugin, 'greet', '[1]')), ['invalid arguments: expected a JSON object, not an array']);
  assert.deepEqual(texts(await call(plugin, 'nothing', '')), [], 'empty arguments are an empty object');
});

test('a ToolError is a result for the model; other throws are plugin errors', async () => {
  const plugin = demo();
  const refused = await call(plugin, 'refuse');
  assert.equal(refused.isError, true);
  assert.deepEqual(texts(refused), ['the model should read this']);

  const [crash, logged] = await quietly(() => rejection(() => call(plugin, 'crash')));
  assert.equal(crash.code, 'internal');
  assert.match(crash.message, /^TypeError: Cannot read properties of null/);
  assert.ok(!(crash instanceof Error), 'a plain record, which componentize-js can send');
  assert.match(logged.join('\n'), /tool `crash` failed: TypeError: .*\n.*at /s);

  const [thrown] = await quietly(() => rejection(() => call(plugin, 'string_throw')));
  assert.deepEqual(thrown, { code: 'internal', message: 'plain string', data: undefined });
  assert.deepEqual(await rejection(() => call(plugin, 'not_found')), { code: 'not-found', message: 'no such thing', data: '{"id":7}' });
  assert.deepEqual(await rejection(() => call(plugin, 'raw_error')), { code: 'invalid-params', message: 'raw record', data: undefined });
  const [bytes] = await quietly(() => rejection(() => call(plugin, 'bytes')));
  assert.match(bytes.message, /^TypeError: a tool returned bytes: wrap them in image/);
});

test('a synchronous tool answers without a promise; an async one with one', async () => {
  const plugin = demo();
  const greeted = call(plugin, 'greet', { name: 'Ada' });
  assert.ok(!(greeted instanceof Promise), 'no promise, so no job queue to run in the call');
  assert.deepEqual(texts(greeted), ['Hello, Ada!']);
  assert.ok(!(call(plugin, 'refuse') instanceof Promise));
  assert.ok(!(call(plugin, 'greet', { name: 7 }) instanceof Promise), 'wrong arguments too');
  assert.throws(() => call(plugin, 'not_found'), (error) => error.code === 'not-found' && !(error instanceof Error));
  const slow = call(plugin, 'slow', { ms: 1 });
  assert.ok(slow instanceof Promise);
  assert.deepEqual(texts(await slow), ['slept 1']);
  const asyncRefusal = new Plugin().tool({ name: 'later' }, async () => { throw new ToolError('not now'); });
  assert.deepEqual(texts(await call(asyncRefusal, 'later')), ['not now']);
  const asyncCrash = new Plugin().tool({ name: 'later' }, async () => { throw new NotFound('gone'); });
  assert.equal((await rejection(() => call(asyncCrash, 'later'))).code, 'not-found');
});

test('unknown names are not-found', async () => {
  const plugin = demo().exports();
  assert.deepEqual(await rejection(() => plugin.tools.callTool('nope', '{}')), { code: 'not-found', message: 'this plugin has no tool named `nope`', data: undefined });
  assert.equal((await rejection(() => plugin.resources.readResource('x://y'))).code, 'not-found');
  assert.equal((await rejection(() => plugin.prompts.getPrompt('p', []))).code, 'not-found');
  assert.equal((await rejection(() => plugin.completion.complete({ tag: 'prompt', val: 'p' }, 'a', '', []))).code, 'not-found');
  assert.deepEqual(await plugin.resources.listResources(), []);
  assert.deepEqual(await plugin.prompts.listPrompts(), []);
  assert.deepEqual(await plugin.completion.completable(), []);
});

function library() {
  return new Plugin()
    .resource({ uri: 'textkit://about', name: 'about', mimeType: 'text/plain' }, () => 'about text')
    .resource({ uri: 'bin://one', name: 'one', size: 2 }, () => new Uint8Array([1, 2]))
    .resource({ uri: 'multi://x', name: 'multi', mimeType: 'text/plain' }, (uri) => [contents(uri, '{}', { mimeType: 'application/json' }), contents(`${uri}/b`, 'b')])
    .resource({ uri: 'broken://x', name: 'broken' }, () => { throw new Error('disk on fire'); })
    .resourceLister(() => [{ uri: 'textkit://about', name: 'duplicate' }, { uri: 'notes://b', name: 'b' }, { uri: 'notes://a', name: 'a' }])
    .resourceTemplate(
      { uriTemplate: 'notes://{name}', name: 'note', mimeType: 'text/markdown', complete: { name: ['alpha', 'beta', 'Bravo'] } },
      ({ name }) => {
        if (name === 'missing') throw new NotFound(`no note ${name}`);
        return `# ${name}`;
      },
    )
    .resourceTemplate({ uriTemplate: 'textkit://upper/{text}', name: 'upper' }, ({ text }, uri) => `${text.toUpperCase()} (${uri})`)
    .prompt(
      {
        name: 'summarize',
        description: 'Summarize a file',
        arguments: {
          path: 'The file to summarize',
          style: { description: 'short or detailed', optional: true, complete: ['short', 'detailed'] },
          lang: { description: 'Language', required: false },
        },
        complete: { lang: (typed, context) => [...prefixMatches(typed, ['en', 'fr']), `path=${context.path}`] },
      },
      ({ path, style = 'short' }) => `Summarize the file ${path} in a ${style} style.`,
    )
    .prompt({ name: 'chat' }, () => [user('hi'), assistant('hello'), 'and a string'])
    .prompt({ name: 'described' }, () => promptResult({ description: 'specific', messages: user(text('x')), meta: { a: 1 } }))
    .prompt({ name: 'many' }, () => ({ not: 'a message' }))
    .prompt({ name: 'counting', arguments: { n: 'n' }, complete: { n: () => Array.from({ length: 150 }, (_, i) => i) } }, () => '');
}

test('resources: fixed, listed, templated', async () => {
  const plugin = library().exports();
  const listed = await plugin.resources.listResources();
  assert.deepEqual(listed.map((r) => r.uri), ['textkit://about', 'bin://one', 'multi://x', 'broken://x', 'notes://b', 'notes://a']);
  assert.equal(listed[1].size, 2n);
  assert.deepEqual(await plugin.resources.readResource('textkit://about'), [{ uri: 'textkit://about', mimeType: 'text/plain', body: { tag: 'text', val: 'about text' }, meta: undefined }]);
  assert.deepEqual((await plugin.resources.readResource('bin://one'))[0].body, { tag: 'blob', val: new Uint8Array([1, 2]) });
  const multi = await plugin.resources.readResource('multi://x');
  assert.deepEqual(multi.map((c) => [c.uri, c.mimeType]), [['multi://x', 'application/json'], ['multi://x/b', 'text/plain']]);
  const note = await plugin.resources.readResource('notes://my%20note');
  assert.deepEqual(note, [{ uri: 'notes://my%20note', mimeType: 'text/markdown', body: { tag: 'text', val: '# my note' }, meta: undefined }]);
  assert.equal((await plugin.resources.readResource('textkit://upper/hello%20world'))[0].body.val, 'HELLO WORLD (textkit://upper/hello%20world)');
  assert.deepEqual(await rejection(() => plugin.resources.readResource('notes://missing')), { code: 'not-found', message: 'no note missing', data: undefined });
  assert.equal((await rejection(() => plugin.resources.readResource('notes://a/b'))).code, 'not-found');
  const [broken] = await quietly(() => rejection(() => plugin.resources.readResource('broken://x')));
  assert.deepEqual(broken, { code: 'internal', message: 'Error: disk on fire', data: undefined });
  const templates = await plugin.resources.listResourceTemplates();
  assert.deepEqual(templates.map((t) => [t.uriTemplate, t.name, t.mimeType]), [['notes://{name}', 'note', 'text/markdown'], ['textkit://upper/{text}', 'upper', undefined]]);
});

test('prompts: arguments, messages, missing ones', async () => {
  const plugin = library().exports();
  const [summarize] = await plugin.prompts.listPrompts();
  assert.deepEqual(summarize, {
    name: 'summarize',
    title: undefined,
    description: 'Summarize a file',
    arguments: [
      { name: 'path', title: undefined, description: 'The file to summarize', required: true },
      { name: 'style', title: undefined, description: 'short or detailed', required: false },
      { name: 'lang', title: undefined, description: 'Language', required: false },
    ],
    icons: [],
    meta: undefined,
  });
  const got = await plugin.prompts.getPrompt('summarize', [['path', '/data/a.txt']]);
  assert.deepEqual(got.messages, [{ role: 'user', content: { tag: 'text', val: { text: 'Summarize the file /data/a.txt in a short style.', annotations: undefined, meta: undefined } } }]);
  assert.equal(got.description, undefined);
  const detailed = await plugin.prompts.getPrompt('summarize', [['path', 'b.md'], ['style', 'detailed']]);
  assert.equal(detailed.messages[0].content.val.text, 'Summarize the file b.md in a detailed style.');
  assert.deepEqual(await rejection(() => plugin.prompts.getPrompt('summarize', [])), {
    code: 'invalid-params',
    message: 'the prompt `summarize` needs the argument(s) `path`',
    data: undefined,
  });
  const chat = await plugin.prompts.getPrompt('chat', []);
  assert.deepEqual(chat.messages.map((m) => [m.role, m.content.val.text]), [['user', 'hi'], ['assistant', 'hello'], ['user', 'and a string']]);
  const described = await plugin.prompts.getPrompt('described', []);
  assert.equal(described.description, 'specific');
  assert.equal(described.meta, '{"a":1}');
  const [many] = await quietly(() => rejection(() => plugin.prompts.getPrompt('many', [])));
  assert.match(many.message, /^TypeError: message 0: expected a string or user/);
});

test('completion: lists filtered by prefix, functions with context, cut at 100', async () => {
  const plugin = library().exports();
  assert.deepEqual(await plugin.completion.completable(), [
    { tag: 'prompt', val: 'summarize' },
    { tag: 'prompt', val: 'counting' },
    { tag: 'resource-template', val: 'notes://{name}' },
  ]);
  const prompt = { tag: 'prompt', val: 'summarize' };
  assert.deepEqual(await plugin.completion.complete(prompt, 'style', 'd', []), { values: ['detailed'], total: 1, hasMore: false });
  assert.deepEqual((await plugin.completion.complete(prompt, 'style', '', [])).values, ['short', 'detailed']);
  assert.deepEqual((await plugin.completion.complete(prompt, 'lang', 'F', [['path', 'x']])).values, ['fr', 'path=x']);
  assert.deepEqual(await plugin.completion.complete(prompt, 'path', '', []), { values: [], total: 0, hasMore: false });
  assert.equal((await rejection(() => plugin.completion.complete(prompt, 'zzz', '', []))).code, 'invalid-params');
  const counted = await plugin.completion.complete({ tag: 'prompt', val: 'counting' }, 'n', '', []);
  assert.equal(counted.values.length, 100);
  assert.equal(counted.values[0], '0');
  assert.equal(counted.total, 150);
  assert.equal(counted.hasMore, true);
  const template = { tag: 'resource-template', val: 'notes://{name}' };
  assert.deepEqual((await plugin.completion.complete(template, 'name', 'B', [])).values, ['beta', 'Bravo']);
  assert.equal((await rejection(() => plugin.completion.complete(template, 'other', '', []))).code, 'invalid-params');
  assert.equal((await rejection(() => plugin.completion.complete({ tag: 'resource-template', val: 'zz://{x}' }, 'x', '', []))).code, 'not-found');
});

test('definition mistakes in resources, templates and prompts', () => {
  const plugin = library();
  assert.throws(() => plugin.resource({ uri: 'textkit://about', name: 'again' }, () => ''), /two resources have the URI `textkit:\/\/about`/);
  assert.throws(() => plugin.resourceTemplate({ uriTemplate: 'notes://{name}', name: 'again' }, () => ''), /two resource templates are `notes:\/\/\{name\}`/);
  assert.throws(() => plugin.prompt({ name: 'chat' }, () => ''), /two prompts are named `chat`/);
  assert.throws(() => plugin.resourceTemplate({ uriTemplate: 'x://{?q}', name: 'x' }, () => ''), /resource template `x:\/\/\{\?q\}`: `\{\?q\}`: the SDK matches only/);
  assert.throws(() => plugin.resourceTemplate({ uriTemplate: 'y://{a}', name: 'y', complete: { b: [] } }, () => ''), /resource template `y:\/\/\{a\}` completes `b`, which is not one of its variables/);
  assert.throws(() => plugin.prompt({ name: 'p', arguments: { a: 'A' }, complete: { b: [] } }, () => ''), /prompt `p` completes `b`, which is not one of its arguments/);
  assert.throws(() => plugin.prompt({ name: 'q', arguments: { a: { descripton: 'typo' } } }, () => ''), /prompt `q`: argument `a`: unknown key `descripton`/);
  assert.throws(() => plugin.prompt({ name: 'r', arguments: { a: { complete: 'abc' } } }, () => ''), /prompt `r`: argument `a`: a completion is a list of values or a function/);
  assert.throws(() => plugin.resource({ uri: 'z://', name: 'z', mimetype: 'text/plain' }, () => ''), DefinitionError);
  assert.throws(() => plugin.resource({ uri: 'z://' }, () => ''), /resource `z:\/\/`: `name` must be a non-empty string/);
});

test('a failing lister aborts the listing, as a panic would', async () => {
  const plugin = new Plugin().resourceLister(() => { throw new Error('no directory'); }).exports();
  const [error, logged] = await quietly(() => rejection(() => plugin.resources.listResources()));
  assert.ok(error instanceof Error, 'an Error, which aborts the component instance');
  assert.match(logged.join('\n'), /listing the resources failed: Error: no directory/);
});

test('content helpers check their arguments', () => {
  assert.throws(() => image(new Uint8Array(), ''), /give the MIME type/);
  assert.throws(() => image('not bytes', 'image/png'), /expected bytes/);
  assert.deepEqual(audio([1, 2], 'audio/wav').val.data, new Uint8Array([1, 2]));
  const embedded = embeddedResource(contents('a://b', 'text'));
  assert.deepEqual(embedded.val.resource.body, { tag: 'text', val: 'text' });
  assert.throws(() => embeddedResource({ uri: 'a://b' }), /expected resource contents made with contents/);
  assert.throws(() => toolResult({ content: [42] }), /content\[0\]: expected a string or a content block/);
  assert.throws(() => new PluginError('nope', 'x'), /unknown plugin error code "nope"/);
  assert.equal(new InvalidParams('x').code, 'invalid-params');
  assert.deepEqual(text('x', { annotations: { audience: ['user'], priority: 1 } }).val.annotations, { audience: ['user'], priority: 1, lastModified: undefined });
});

test('a tool says whether it may run as a task', async () => {
  const plugin = new Plugin()
    .tool({ name: 'quick' }, () => 'done')
    .tool({ name: 'crawl', taskSupport: 'optional' }, () => 'crawled');
  const listed = await plugin.exports().tools.listTools();
  assert.deepEqual(listed.map((t) => [t.name, t.taskSupport]), [['quick', 'forbidden'], ['crawl', 'optional']]);
  assert.throws(() => new Plugin().tool({ name: 'x', taskSupport: 'sometimes' }, () => ''), /taskSupport must be one of forbidden, optional, required/);
});

test('an MCP Apps view is a ui:// resource of its mime type, and a tool names it', async () => {
  const plugin = new Plugin()
    .uiView(
      { uri: 'ui://demo/chart', name: 'chart', csp: { connectDomains: ['https://api.example.com'] }, permissions: ['clipboardWrite'], prefersBorder: true },
      () => '<!DOCTYPE html><p>chart</p>',
    )
    .tool({ name: 'plot', ui: 'ui://demo/chart' }, () => 'plotted')
    .tool({ name: 'refresh', ui: { resourceUri: 'ui://demo/chart', visibility: ['app'] } }, () => 'fresh');
  const ui = { csp: { connectDomains: ['https://api.example.com'] }, permissions: { clipboardWrite: {} }, prefersBorder: true };
  const [listed] = await plugin.exports().resources.listResources();
  assert.equal(listed.mimeType, 'text/html;profile=mcp-app');
  assert.deepEqual(JSON.parse(listed.meta), { ui });
  const [read] = await plugin.exports().resources.readResource('ui://demo/chart');
  assert.deepEqual(read.body, { tag: 'text', val: '<!DOCTYPE html><p>chart</p>' });
  assert.equal(read.mimeType, 'text/html;profile=mcp-app');
  assert.deepEqual(JSON.parse(read.meta), { ui });
  const tools = await plugin.exports().tools.listTools();
  assert.deepEqual(JSON.parse(tools[0].meta), { ui: { resourceUri: 'ui://demo/chart', visibility: ['model', 'app'] }, 'ui/resourceUri': 'ui://demo/chart' });
  assert.deepEqual(JSON.parse(tools[1].meta).ui.visibility, ['app']);
  for (const [spec, why] of [
    [{ uri: 'https://x/y', name: 'v' }, /ui:\/\/AUTHORITY\/PATH/],
    [{ uri: 'ui://x/y', name: 'v', csp: { scriptDomains: [] } }, /csp.scriptDomains is not one of/],
    [{ uri: 'ui://x/y', name: 'v', permissions: ['teleport'] }, /permission "teleport"/],
  ]) {
    assert.throws(() => new Plugin().uiView(spec, () => ''), why);
  }
  assert.throws(() => new Plugin().tool({ name: 't', ui: { resourceUri: 'ui://x/y', visibility: ['everyone'] } }, () => ''), /ui.visibility/);
});
