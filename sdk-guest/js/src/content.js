// Content blocks, tool results, resource contents and prompt messages: short constructors for
// the WIT records, and the conversions from plain values.

import { kind } from './schema.js';

/** Content blocks built by the helpers below, so arrays of them are recognized as content. */
const BLOCKS = new WeakSet();

/** The tags of the WIT `content-block` variant. */
const BLOCK_TAGS = ['text', 'image', 'audio', 'resource-link', 'embedded-resource'];

function block(tag, val) {
  const made = { tag, val };
  BLOCKS.add(made);
  return made;
}

/** Whether `value` is a content block: made by a helper, or a WIT record written by hand. */
export function isBlock(value) {
  return (
    BLOCKS.has(value) ||
    (value !== null && typeof value === 'object' && BLOCK_TAGS.includes(value.tag) && value.val !== null && typeof value.val === 'object')
  );
}

/**
 * A text block. `options`: `annotations` ({ audience: ['user'|'assistant'], priority, lastModified })
 * and `meta` (a JSON object).
 */
export function text(value, options = {}) {
  return block('text', { text: String(value), annotations: annotations(options.annotations), meta: json(options.meta) });
}

/** An image block from its bytes (a Uint8Array; the host base64-encodes them) and MIME type. */
export function image(data, mimeType, options = {}) {
  return block('image', media(data, mimeType, options, 'image'));
}

/** An audio block from its bytes and MIME type (such as `audio/wav`). */
export function audio(data, mimeType, options = {}) {
  return block('audio', media(data, mimeType, options, 'audio'));
}

function media(data, mimeType, options, what) {
  if (typeof mimeType !== 'string' || mimeType === '') {
    throw new TypeError(`${what}(): give the MIME type, such as '${what === 'image' ? 'image/png' : 'audio/wav'}'`);
  }
  return { data: bytes(data, `${what}()`), mimeType, annotations: annotations(options.annotations), meta: json(options.meta) };
}

/**
 * A link to a resource the client can read. `options`: title, description, mimeType, size,
 * annotations, icons, meta.
 */
export function resourceLink(uri, name, options = {}) {
  return block('resource-link', {
    uri: String(uri),
    name: String(name),
    title: options.title,
    description: options.description,
    mimeType: options.mimeType,
    size: size(options.size),
    annotations: annotations(options.annotations),
    icons: icons(options.icons),
    meta: json(options.meta),
  });
}

/** A resource's contents carried inline; `resource` comes from {@link contents}. */
export function embeddedResource(resource, options = {}) {
  return block('embedded-resource', {
    resource: checkContents(resource),
    annotations: annotations(options.annotations),
    meta: json(options.meta),
  });
}

/** Converts a value given as content: a block, or a string (a text block). */
export function toBlock(value, where) {
  if (typeof value === 'string') {
    return text(value);
  }
  if (isBlock(value)) {
    return value;
  }
  throw new TypeError(`${where}: expected a string or a content block (text(), image(), audio(), resourceLink(), embeddedResource()), not ${kind(value)}`);
}

// ---- Resource contents -------------------------------------------------------------------------

const CONTENTS = new WeakSet();

/**
 * The contents of the resource at `uri` (a WIT `resource-contents`): `body` is a string (text)
 * or a Uint8Array (bytes, which the host base64-encodes). `options`: mimeType, meta.
 */
export function contents(uri, body, options = {}) {
  const made = {
    uri: String(uri),
    mimeType: options.mimeType,
    body: typeof body === 'string' ? { tag: 'text', val: body } : { tag: 'blob', val: bytes(body, 'contents()') },
    meta: json(options.meta),
  };
  CONTENTS.add(made);
  return made;
}

function checkContents(value) {
  if (CONTENTS.has(value)) {
    return value;
  }
  throw new TypeError(`expected resource contents made with contents(uri, body), not ${kind(value)}`);
}

/**
 * What a resource reader returned, as a list of `resource-contents`: a string (text), bytes, one
 * {@link contents} or a list of them. Contents without a MIME type get the declared one.
 */
export function toContents(value, uri, mimeType) {
  let list;
  if (typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer) {
    list = [contents(uri, value)];
  } else if (CONTENTS.has(value)) {
    list = [value];
  } else if (Array.isArray(value) && value.every((item) => CONTENTS.has(item))) {
    list = value;
  } else {
    throw new TypeError(`the reader of ${uri} returned ${kind(value)}: return a string (text), a Uint8Array (bytes), or contents(uri, body) (one or a list)`);
  }
  return list.map((item) => (item.mimeType === undefined && mimeType !== undefined ? { ...item, mimeType } : item));
}

// ---- Tool results ------------------------------------------------------------------------------

/** A tool result built with {@link toolResult}. */
export class ToolResult {
  /** @param {{ content?: unknown, structuredContent?: unknown, isError?: boolean, meta?: object }} [options] */
  constructor({ content = [], structuredContent, isError = false, meta } = {}) {
    const list = Array.isArray(content) ? content : [content];
    this.content = list.map((item, i) => toBlock(item, `toolResult(): content[${i}]`));
    this.structuredContent = structuredContent;
    this.isError = Boolean(isError);
    this.meta = meta;
  }

  /** The WIT `call-result` record. */
  toWit() {
    return {
      content: this.content,
      structuredContent: this.structuredContent === undefined ? undefined : JSON.stringify(this.structuredContent),
      isError: this.isError,
      meta: json(this.meta),
    };
  }
}

/**
 * A tool result with every field under control: `content` (a string, a block, or a list of
 * them), `structuredContent` (a JSON object matching the tool's output schema), `isError`,
 * `meta`.
 */
export function toolResult(fields) {
  return new ToolResult(fields);
}

/**
 * Converts what a tool handler returned into a {@link ToolResult}:
 *
 * - a string: one text block;
 * - undefined or null: no content;
 * - a content block, or a list of them: that content;
 * - a plain object: structured content, and its JSON as text;
 * - arrays, numbers, booleans: their JSON as text;
 * - a {@link ToolResult}: as it is.
 */
export function toToolResult(value) {
  if (value instanceof ToolResult) {
    return value;
  }
  if (value === undefined || value === null) {
    return new ToolResult();
  }
  if (typeof value === 'string') {
    return new ToolResult({ content: [text(value)] });
  }
  if (isBlock(value)) {
    return new ToolResult({ content: [value] });
  }
  if (Array.isArray(value) && value.length > 0 && value.every(isBlock)) {
    return new ToolResult({ content: value });
  }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    throw new TypeError('a tool returned bytes: wrap them in image(bytes, mimeType) or audio(bytes, mimeType), or return a string');
  }
  if (typeof value === 'bigint') {
    return new ToolResult({ content: [text(value.toString())] });
  }
  if (typeof value === 'function' || typeof value === 'symbol') {
    throw new TypeError(`a tool returned ${typeof value}`);
  }
  const encoded = JSON.stringify(value);
  if (encoded === undefined) {
    throw new TypeError(`a tool returned ${kind(value)}, which has no JSON form`);
  }
  if (isPlainObject(value)) {
    return new ToolResult({ content: [text(encoded)], structuredContent: JSON.parse(encoded) });
  }
  return new ToolResult({ content: [text(encoded)] });
}

function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// ---- Prompt messages ---------------------------------------------------------------------------

const MESSAGES = new WeakSet();

function message(role, content) {
  const made = { role, content: toBlock(content, `${role}()`) };
  MESSAGES.add(made);
  return made;
}

/** A message from the user: a string (text) or a content block. */
export function user(content) {
  return message('user', content);
}

/** A message from the assistant, such as the start of an answer the model should continue. */
export function assistant(content) {
  return message('assistant', content);
}

/** A filled-in prompt with a description of its own: `{ description, messages, meta }`. */
export class PromptResult {
  /** @param {{ description?: string, messages?: unknown, meta?: object }} [options] */
  constructor({ description, messages = [], meta } = {}) {
    this.description = description;
    this.messages = toMessages(messages);
    this.meta = meta;
  }

  toWit() {
    return { description: this.description, messages: this.messages, meta: json(this.meta) };
  }
}

/** A prompt result with a description of its own, besides the messages. */
export function promptResult(fields) {
  return new PromptResult(fields);
}

function toMessages(value) {
  const list = Array.isArray(value) ? value : [value];
  return list.map((item, i) => {
    if (typeof item === 'string') return user(item);
    if (MESSAGES.has(item)) return item;
    if (item !== null && typeof item === 'object' && (item.role === 'user' || item.role === 'assistant') && isBlock(item.content)) {
      return item;
    }
    throw new TypeError(`message ${i}: expected a string or user(...)/assistant(...), not ${kind(item)}`);
  });
}

/**
 * Converts what a prompt handler returned: a string (one user message), a message, a list of
 * them, or a {@link PromptResult}.
 */
export function toPromptResult(value) {
  if (value instanceof PromptResult) {
    return value;
  }
  if (value === undefined || value === null) {
    throw new TypeError('a prompt returned nothing: return a string, user(...)/assistant(...) messages, or promptResult({...})');
  }
  return new PromptResult({ messages: value });
}

// ---- Shared record fields ----------------------------------------------------------------------

/** A JSON field of the WIT contract (a string), from any JSON value. */
export function json(value) {
  return value === undefined ? undefined : JSON.stringify(value);
}

/** A list<u8> from a Uint8Array (or a Buffer, an ArrayBuffer, an array of numbers). */
export function bytes(value, where) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value) && value.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) return Uint8Array.from(value);
  throw new TypeError(`${where}: expected bytes (a Uint8Array), not ${kind(value)}`);
}

/** An option<u64> (a BigInt for the bindings). */
export function size(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`a size must be a non-negative integer, not ${value}`);
  return BigInt(value);
}

/** The WIT `annotations` record. */
export function annotations(value) {
  if (value === undefined || value === null) return undefined;
  return { audience: value.audience ?? [], priority: value.priority, lastModified: value.lastModified };
}

/** A list of WIT `icon`s: { src, mimeType, sizes: ['48x48'], theme: 'light'|'dark' }. */
export function icons(value) {
  if (value === undefined || value === null) return [];
  return value.map((icon) => ({ src: String(icon.src), mimeType: icon.mimeType, sizes: icon.sizes ?? [], theme: icon.theme }));
}
