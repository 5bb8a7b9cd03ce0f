import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fs, testing } from '../index.js';

/** A WASI error as componentize-js throws it. */
function wasiError(code) {
  const error = new Error(code);
  error.payload = code;
  return error;
}

/** A fake preopened directory over a map of relative path to bytes (or 'dir'). */
function fakeDir(files, opened) {
  return {
    openAt(pathFlags, path, openFlags, descriptorFlags) {
      opened.push(path);
      if (path.split('/').includes('..')) throw wasiError('not-permitted');
      if (descriptorFlags.write) throw wasiError('read-only');
      const entry = files[path];
      if (entry === undefined) throw wasiError('no-entry');
      return {
        getType: () => (entry === 'dir' ? 'directory' : 'regular-file'),
        read(length, offset) {
          const start = Number(offset);
          const chunk = entry.subarray(start, start + Math.min(Number(length), 3));
          return [chunk, false];
        },
        readDirectory() {
          const names = Object.keys(files).filter((p) => p !== path && p.startsWith(path === '.' ? '' : `${path}/`));
          return { readDirectoryEntry: () => (names.length ? { name: names.pop(), type: 'regular-file' } : undefined) };
        },
      };
    },
  };
}

function withFiles(run) {
  const opened = [];
  const encode = (s) => new TextEncoder().encode(s);
  const data = fakeDir({ 'a.txt': encode('one two\nthree\n'), 'bom.txt': new Uint8Array([0xef, 0xbb, 0xbf, 0x41]), 'bad.txt': new Uint8Array([0xff]), sub: 'dir', 'sub/b.txt': encode('b') }, opened);
  const roots = fakeDir({ 'p/x.md': encode('# x') }, opened);
  const restore = testing.setFilesystem({ getDirectories: () => [[data, '/data'], [roots, '/roots'], [fakeDir({ 'deep.txt': encode('deep') }, opened), '/roots/p/deeper/']] });
  try {
    run(opened);
  } finally {
    restore();
  }
}

test('paths resolve against the granted directories, chunk by chunk', () => {
  withFiles((opened) => {
    assert.equal(fs.readText('/data/a.txt'), 'one two\nthree\n');
    assert.equal(fs.readText('/data/./sub/../a.txt'), 'one two\nthree\n', 'normalized before resolving');
    assert.equal(fs.readText('data/a.txt'), 'one two\nthree\n', 'relative paths start at /');
    assert.equal(fs.readText('/roots/p/x.md'), '# x');
    assert.equal(fs.readText('/roots/p/deeper/deep.txt'), 'deep', 'the longest granted prefix wins');
    assert.deepEqual(fs.readBytes('/data/bom.txt'), new Uint8Array([0xef, 0xbb, 0xbf, 0x41]));
    assert.equal(fs.readText('/data/bom.txt'), '\ufeffA', 'a byte-order mark is kept');
    assert.deepEqual(opened.slice(0, 4), ['a.txt', 'a.txt', 'a.txt', 'p/x.md']);
  });
});

test('paths outside every grant are refused before asking', () => {
  withFiles((opened) => {
    for (const path of ['/etc/passwd', '/data/../secret.txt', '/datax/a.txt', '/', '/roots/../etc']) {
      assert.throws(() => fs.readText(path), (error) => {
        assert.equal(error.name, 'FsError');
        assert.equal(error.code, 'not-granted');
        assert.equal(error.path, path);
        assert.match(error.message, /^no such file or directory \(not inside a directory this plugin was granted\)$/);
        return true;
      });
    }
    assert.deepEqual(opened, []);
  });
});

test('WASI errors become FsErrors with a readable message', () => {
  withFiles(() => {
    assert.throws(() => fs.readText('/data/nope.txt'), { name: 'FsError', code: 'no-entry', message: 'no such file or directory' });
    assert.throws(() => fs.readText('/data/sub'), { code: 'is-directory', message: 'is a directory' });
    assert.throws(() => fs.readText('/data/bad.txt'), { code: 'not-utf8', message: 'not valid UTF-8 text' });
    assert.throws(() => fs.writeFile('/data/new.txt', 'x'), { code: 'read-only', message: 'read-only file system' });
    assert.throws(() => fs.readText(''), TypeError);
  });
});

test('readDir lists a directory, sorted', () => {
  withFiles(() => {
    assert.deepEqual(fs.readDir('/data/sub'), [{ name: 'sub/b.txt', type: 'regular-file' }]);
  });
});

test('normalize', () => {
  assert.equal(fs.normalize('/a//b/./c/../d'), '/a/b/d');
  assert.equal(fs.normalize('/../..'), '/');
  assert.equal(fs.normalize('x/y'), '/x/y');
});
