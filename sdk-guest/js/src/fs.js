// Files in the directories the host granted this plugin (its `dirs` and roots), through WASI's
// preopened directories: there is no `node:fs` inside a component. Paths are the ones the plugin
// sees, such as `/data/notes.txt`; the host's sandbox refuses anything outside its grants, and so
// does this module, before asking.

import { filesystem as witFilesystem } from '#wit/filesystem';

/** @import { Descriptor, FilesystemBindings } from './types.js' */

/** @type {FilesystemBindings} */
let raw = witFilesystem;

/**
 * Replaces the WASI bindings (for tests in plain Node); returns a function that restores them.
 *
 * @param {Partial<FilesystemBindings>} fake
 * @returns {() => void}
 */
export function setBindings(fake) {
  const previous = raw;
  raw = { ...raw, ...fake };
  return () => {
    raw = previous;
  };
}

/**
 * What the WASI `error-code`s mean, for people.
 * @type {{ readonly [code: string]: string | undefined }}
 */
const MEANINGS = {
  access: 'permission denied',
  'not-permitted': 'operation not permitted',
  'read-only': 'read-only file system',
  'no-entry': 'no such file or directory',
  exist: 'file exists',
  'is-directory': 'is a directory',
  'not-directory': 'not a directory',
  'not-empty': 'directory not empty',
  loop: 'too many levels of symbolic links',
  'name-too-long': 'file name too long',
  'insufficient-space': 'no space left on device',
  quota: 'disk quota exceeded',
  'file-too-large': 'file too large',
  invalid: 'invalid argument',
  io: 'input/output error',
  unsupported: 'operation not supported',
  'illegal-byte-sequence': 'illegal byte sequence',
};

/**
 * A failed file operation. `code` is the WASI `error-code` (`'no-entry'`, `'access'`,
 * `'not-permitted'`...), or `'not-granted'` for a path outside every granted directory, or
 * `'not-utf8'` for text that is not UTF-8; `path` is the path asked for.
 */
export class FsError extends Error {
  /**
   * @param {string} path
   * @param {string} code
   * @param {string} [message]
   */
  constructor(path, code, message) {
    super(message ?? MEANINGS[code] ?? String(code).replaceAll('-', ' '));
    this.name = 'FsError';
    this.path = path;
    this.code = code;
  }
}

/**
 * `path` without `.`, `..` and repeated slashes, as an absolute path (relative ones start at `/`).
 *
 * @param {string} path
 * @returns {string}
 */
export function normalize(path) {
  const parts = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/**
 * The granted directory `path` lies in, and the path relative to it: `{ dir, relative }`.
 * Throws an {@link FsError} (`not-granted`) for a path in none of them.
 *
 * @param {string} path
 * @returns {{ dir: Descriptor, relative: string }}
 */
function locate(path) {
  if (typeof path !== 'string' || path === '') {
    throw new TypeError(`a path must be a non-empty string, not ${JSON.stringify(path)}`);
  }
  if (path.includes('\0')) {
    throw new FsError(path, 'invalid', 'invalid argument: the path contains a NUL character');
  }
  const wanted = normalize(path);
  /** @type {{ dir: Descriptor, root: string } | undefined} */
  let best;
  for (const [dir, guestPath] of raw.getDirectories()) {
    const root = normalize(guestPath);
    const inside = root === '/' || wanted === root || wanted.startsWith(`${root}/`);
    if (inside && (best === undefined || root.length > best.root.length)) {
      best = { dir, root };
    }
  }
  if (best === undefined) {
    throw new FsError(path, 'not-granted', 'no such file or directory (not inside a directory this plugin was granted)');
  }
  const relative = best.root === '/' ? wanted.slice(1) : wanted.slice(best.root.length + 1);
  return { dir: best.dir, relative: relative === '' ? '.' : relative };
}

/**
 * Runs a WASI call, turning its `error-code` into an {@link FsError}.
 *
 * @template T
 * @param {string} path
 * @param {() => T} call
 * @returns {T}
 */
function wasi(path, call) {
  try {
    return call();
  } catch (error) {
    if (error && typeof error === 'object' && 'payload' in error) {
      throw new FsError(path, String(error.payload));
    }
    throw error;
  }
}

/**
 * @param {string} path
 * @param {{ create?: boolean, directory?: boolean, truncate?: boolean }} openFlags
 * @param {{ read?: boolean, write?: boolean }} descriptorFlags
 * @returns {Descriptor}
 */
function open(path, openFlags, descriptorFlags) {
  const { dir, relative } = locate(path);
  return wasi(path, () => dir.openAt({ symlinkFollow: true }, relative, openFlags, descriptorFlags));
}

const CHUNK = 1n << 16n;

/**
 * The bytes of the file at `path`, as a Uint8Array. Throws an {@link FsError}.
 *
 * @param {string} path
 * @returns {Uint8Array}
 */
export function readBytes(path) {
  const file = open(path, {}, { read: true });
  if (wasi(path, () => file.getType()) === 'directory') {
    throw new FsError(path, 'is-directory');
  }
  /** @type {Uint8Array[]} */
  const chunks = [];
  let length = 0;
  for (;;) {
    const [chunk, end] = wasi(path, () => file.read(CHUNK, BigInt(length)));
    if (chunk.length > 0) {
      chunks.push(chunk);
      length += chunk.length;
    }
    if (end || chunk.length === 0) break;
  }
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return all;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of the file at `path`, decoded as UTF-8 (strictly: invalid bytes are an error; a
 * byte-order mark is kept). Throws an {@link FsError}.
 *
 * @param {string} path
 * @returns {string}
 */
export function readText(path) {
  const data = readBytes(path);
  try {
    return UTF8.decode(data);
  } catch {
    throw new FsError(path, 'not-utf8', 'not valid UTF-8 text');
  }
}

/**
 * The entries of the directory at `path`: `[{ name, type }]`, sorted by name, where `type` is
 * `'regular-file'`, `'directory'`, `'symbolic-link'` or another WASI descriptor type.
 *
 * @param {string} path
 * @returns {{ name: string, type: string }[]}
 */
export function readDir(path) {
  const dir = open(path, { directory: true }, { read: true });
  const stream = wasi(path, () => dir.readDirectory());
  /** @type {{ name: string, type: string }[]} */
  const entries = [];
  for (;;) {
    const entry = wasi(path, () => stream.readDirectoryEntry());
    if (entry === undefined || entry === null) break;
    entries.push({ name: entry.name, type: entry.type });
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Writes `data` (a Uint8Array, or a string written as UTF-8) to the file at `path`, creating
 * or replacing it. Needs a directory granted read-write. Throws an {@link FsError}.
 *
 * @param {string} path
 * @param {string | Uint8Array} data
 */
export function writeFile(path, data) {
  const body = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  if (!(body instanceof Uint8Array)) {
    throw new TypeError('writeFile(path, data): data must be a string or a Uint8Array');
  }
  const file = open(path, { create: true, truncate: true }, { write: true });
  let written = 0;
  while (written < body.length) {
    const count = wasi(path, () => file.write(body.subarray(written, written + Number(CHUNK)), BigInt(written)));
    written += Number(count);
  }
}
