import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UriTemplate, percentEncode, percentDecode } from '../index.js';

const vars = (template, uri) => new UriTemplate(template).match(uri);

test('a simple variable stops at reserved characters and is percent-decoded', () => {
  assert.deepEqual(vars('notes://{name}', 'notes://todo'), { name: 'todo' });
  assert.equal(vars('notes://{name}', 'notes://a/b'), undefined);
  assert.equal(vars('notes://{name}', 'notes://'), undefined);
  assert.equal(vars('notes://{name}', 'other://todo'), undefined);
  assert.deepEqual(vars('notes://{name}', 'notes://my%20note%2F..'), { name: 'my note/..' });
  assert.deepEqual(vars('textkit://upper/{text}', 'textkit://upper/hello%20world'), { text: 'hello world' });
});

test('a reserved variable takes slashes, and matching backtracks', () => {
  assert.deepEqual(vars('file:///{+path}.md', 'file:///a/b.c.md'), { path: 'a/b.c' });
  assert.deepEqual(vars('weather://{city}/{+rest}', 'weather://paris/today/noon'), { city: 'paris', rest: 'today/noon' });
  assert.equal(vars('x://{+p}.md', 'x://a.txt'), undefined);
  assert.deepEqual(vars('x://{a}-{b}', 'x://1-2-3'), { a: '1-2', b: '3' });
});

test('malformed escapes and bytes that are not UTF-8 do not match', () => {
  assert.equal(vars('n://{v}', 'n://%zz'), undefined);
  assert.equal(vars('n://{v}', 'n://%f'), undefined);
  assert.equal(vars('n://{v}', 'n://%ff'), undefined);
  assert.deepEqual(vars('n://{v}', 'n://caf%C3%A9'), { v: 'café' });
  assert.deepEqual(vars('n://{v}', 'n://😀x'), { v: '😀x' });
});

test('templates the SDK cannot match are refused', () => {
  for (const bad of ['x://{?q}', 'x://{a,b}', 'x://{p*}', 'x://{p:3}', 'x://{}', 'x://{a', 'x://a}', 'x://{a}/{a}', 'x://{a}{b}', 'x://{/p}']) {
    assert.throws(() => new UriTemplate(bad), Error, bad);
  }
  assert.deepEqual(new UriTemplate('x://{a}/{+b}').variables, ['a', 'b']);
});

test('encoding then matching gives the value back', () => {
  const value = 'é ü/?#%+ 😀';
  assert.equal(percentEncode('my notes/2024'), 'my%20notes%2F2024');
  assert.deepEqual(vars('n://{v}', `n://${percentEncode(value)}`), { v: value });
  assert.equal(percentDecode(percentEncode(value)), value);
});
