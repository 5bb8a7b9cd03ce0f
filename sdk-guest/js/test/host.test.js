import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Plugin, host, testing, user, assistant } from '../index.js';

const { ask, Answers, AskError } = host;

test('host functions say where they work when there is no host', () => {
  assert.throws(() => host.log('info', 'x'), /host.log\(\) is only available inside a Palisade component/);
});

test('log checks its level and reaches the host', () => {
  const logged = [];
  const restore = testing.setHost({ log: (level, message) => logged.push([level, message]) });
  try {
    host.log('warning', 42);
    assert.throws(() => host.log('warn', 'x'), /unknown log level "warn" \(use one of debug, info, notice, warning/);
  } finally {
    restore();
  }
  assert.deepEqual(logged, [['warning', '42']]);
  assert.throws(() => host.log('info', 'x'), /only available/);
});

test('ask sends keyed requests in the WIT shape', () => {
  let sent;
  const restore = testing.setHost({ ask: (requests) => { sent = requests; return []; } });
  try {
    host.ask({
      user_name: ask.form('What is your name?', { name: 'string', age: 'integer?' }),
      summary: ask.sample('Summarize: ...', 200, { systemPrompt: 'Be brief', modelPreferences: { hints: [{ name: 'x' }] } }),
      convo: ask.sample([user('a'), assistant('b')], 10),
      client_roots: ask.roots(),
      sign_in: ask.url('Sign in', 'https://example.com/login', 'login-1'),
    });
    assert.throws(() => host.ask({ bad: { tag: 'nope' } }), /the request under `bad` is an object; make it with ask.form\(\)/);
  } finally {
    restore();
  }
  assert.deepEqual(sent.map(([key]) => key), ['user_name', 'summary', 'convo', 'client_roots', 'sign_in']);
  const form = sent[0][1];
  assert.equal(form.tag, 'elicit');
  assert.equal(form.val.tag, 'form');
  assert.equal(form.val.val.message, 'What is your name?');
  assert.deepEqual(JSON.parse(form.val.val.requestedSchema), { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'] });
  const sample = sent[1][1].val;
  assert.equal(sample.maxTokens, 200);
  assert.equal(sample.systemPrompt, 'Be brief');
  assert.deepEqual(sample.stopSequences, []);
  assert.equal(sample.modelPreferences, '{"hints":[{"name":"x"}]}');
  assert.deepEqual(sample.messages.map((m) => [m.role, m.content[0].val.text]), [['user', 'Summarize: ...']]);
  assert.deepEqual(sent[2][1].val.messages.map((m) => m.role), ['user', 'assistant']);
  assert.deepEqual(sent[3][1], { tag: 'list-roots' });
  assert.deepEqual(sent[4][1].val.val, { message: 'Sign in', url: 'https://example.com/login', elicitationId: 'login-1' });
  const full = ask.form('Why?', { type: 'object', properties: { why: { type: 'string' } } });
  assert.deepEqual(JSON.parse(full.val.val.requestedSchema), { type: 'object', properties: { why: { type: 'string' } } });
});

const ok = (val) => ({ tag: 'ok', val });
const awaiting = { tag: 'err', val: { tag: 'awaiting-answer' } };
const failedWith = (message) => ({ tag: 'err', val: { tag: 'failed', val: message } });

test('answers: awaiting, typed getters, kinds and keys', () => {
  const answers = new Answers([
    ['name', ok({ tag: 'elicit', val: { action: 'accept', content: '{"name":"Ada"}' } })],
    ['roots', ok({ tag: 'list-roots', val: [{ uri: 'file:///p', name: 'p' }] })],
    ['summary', ok({ tag: 'sample', val: { role: 'assistant', content: [{ tag: 'text', val: { text: 'one' } }, { tag: 'text', val: { text: 'two' } }], model: 'm', stopReason: 'endTurn', raw: '{"model":"m"}' } })],
    ['later', awaiting],
    ['refused', failedWith('client cannot sample')],
  ]);
  assert.equal(answers.awaiting, true);
  assert.deepEqual(answers.keys(), ['name', 'roots', 'summary', 'later', 'refused']);
  const name = answers.elicitation('name');
  assert.equal(name.accepted, true);
  assert.equal(name.field('name'), 'Ada');
  assert.equal(name.field('other'), undefined);
  assert.deepEqual(answers.roots('roots'), [{ uri: 'file:///p', name: 'p' }]);
  const summary = answers.sampling('summary');
  assert.equal(summary.text, 'one\ntwo');
  assert.deepEqual(summary.raw, { model: 'm' });
  assert.throws(() => answers.roots('name'), { name: 'AskError', message: 'the answer under `name` is not a roots answer' });
  assert.throws(() => answers.sampling('nope'), { message: 'nothing was asked under `nope`' });
  assert.throws(() => answers.elicitation('later'), (error) => error instanceof AskError && error.awaiting);
  assert.throws(() => answers.sampling('refused'), (error) => error instanceof AskError && !error.awaiting && error.message === 'client cannot sample');
  assert.equal(answers.get('nope'), undefined);
  assert.equal(answers.get('refused').ok, false);
  assert.equal(new Answers([['x', failedWith('no')]]).awaiting, false);
});

test('a declined form has no fields', () => {
  const declined = new Answers([['f', ok({ tag: 'elicit', val: { action: 'decline', content: '{"name":"x"}' } })]]).elicitation('f');
  assert.equal(declined.accepted, false);
  assert.equal(declined.field('name'), undefined);
});

test('an AskError out of a tool is a tool error; the call runs again with the answers', async () => {
  let answer = [['user_name', awaiting]];
  const restore = testing.setHost({ ask: () => answer });
  const plugin = new Plugin().tool({ name: 'greet' }, () => {
    const answers = host.ask({ user_name: ask.form('What is your name?', { name: 'string' }) });
    return `Hello, ${answers.elicitation('user_name').field('name')}!`;
  }).exports();
  try {
    const first = await plugin.tools.callTool('greet', '{}');
    assert.equal(first.isError, true);
    assert.equal(first.content[0].val.text, "awaiting the client's answer");
    answer = [['user_name', ok({ tag: 'elicit', val: { action: 'accept', content: '{"name":"Ada"}' } })]];
    const second = await plugin.tools.callTool('greet', '{}');
    assert.equal(second.content[0].val.text, 'Hello, Ada!');
  } finally {
    restore();
  }
});

test('progress, cancellation, roots and notifications pass through', () => {
  const calls = [];
  const restore = testing.setHost({
    reportProgress: (...args) => calls.push(['progress', ...args]),
    isCancelled: () => true,
    listRoots: () => [{ uri: 'file:///p', name: undefined, guestPath: '/roots/p', writable: false }],
    notifyResourceUpdated: (uri) => calls.push(['updated', uri]),
    notifyListChanged: (kind) => calls.push(['changed', kind]),
  });
  try {
    host.reportProgress(1, 10, 'one of ten');
    host.reportProgress(2);
    assert.equal(host.isCancelled(), true);
    assert.equal(host.listRoots()[0].guestPath, '/roots/p');
    host.notifyResourceUpdated('notes://a');
    host.notifyListChanged('tools');
    assert.throws(() => host.notifyListChanged('templates'), /unknown list "templates"/);
  } finally {
    restore();
  }
  assert.deepEqual(calls, [
    ['progress', 1, 10, 'one of ten'],
    ['progress', 2, undefined, undefined],
    ['updated', 'notes://a'],
    ['changed', 'tools'],
  ]);
});

test('getEnv reaches the host and gives undefined for no value', () => {
  const asked = [];
  const restore = testing.setHost({ getEnv: (name) => { asked.push(name); return name === 'KEY' ? 'v' : undefined; } });
  try {
    assert.equal(host.getEnv('KEY'), 'v');
    assert.equal(host.getEnv('OTHER'), undefined);
  } finally {
    restore();
  }
  assert.deepEqual(asked, ['KEY', 'OTHER']);
  assert.throws(() => host.getEnv('KEY'), /host.getEnv\(\) is only available/);
});
