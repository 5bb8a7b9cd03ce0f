// Content blocks, tool results, resource contents and prompt messages: short constructors for
// the WIT records, and the conversions from plain values.

import { kind } from './schema.js';

/**
 * @import { Annotations, BlockOptions, Bytes, ContentBlock, ContentLike, ContentsOptions, Icon, MessageLike,
 *   PromptMessage, PromptResultFields, ResourceContents, ResourceLinkOptions, Role, ToolResultFields,
 *   WitAnnotations, WitCallResult, WitIcon, WitPromptResult, JsonObject, MediaContent } from './types.js'
 */

/**
 * Content blocks built by the helpers below, so arrays of them are recognized as content.
 * @type {WeakSet<object>}
 */
const BLOCKS = new WeakSet();

/**
 * The tags of the WIT `content-block` variant.
 * @type {readonly string[]}
 */
const BLOCK_TAGS = ['text', 'image', 'audio', 'resource-link', 'embedded-resource'];

/**
 * @template {ContentBlock} B
 * @param {B} made
 * @returns {B}
 */
function block(made) {
  BLOCKS.add(made);
  return made;
}

/**
 * Whether `value` is a content block: made by a helper, or a WIT record written by hand.
 *
 * @param {unknown} value
 * @returns {value is ContentBlock}
 */
export function isBlock(value) {
  if (value === null || typeof value !== 'object') {
    return false;
  }
  if (BLOCKS.has(value)) {
    return true;
  }
  const { tag, val } = /** @type {{ tag?: unknown, val?: unknown }} */ (value);
  return typeof tag === 'string' && BLOCK_TAGS.includes(tag) && val !== null && typeof val === 'object';
}

/**
 * A text block. `options`: `annotations` ({ audience: ['user'|'assistant'], priority, lastModified })
 * and `meta` (a JSON object).
 *
 * @param {unknown} value The text (other values are turned into strings).
 * @param {BlockOptions} [options]
 * @returns {Extract<ContentBlock, { tag: 'text' }>}
 */
export function text(value, options = {}) {
  return block({ tag: 'text', val: { text: String(value), annotations: annotations(options.annotations), meta: json(options.meta) } });
}

/**
 * An image block from its bytes (a Uint8Array; the host base64-encodes them) and MIME type.
 *
 * @param {Bytes} data
 * @param {string} mimeType Such as `image/png`.
 * @param {BlockOptions} [options]
 * @returns {Extract<ContentBlock, { tag: 'image' }>}
 */
export function image(data, mimeType, options = {}) {
  return block({ tag: 'image', val: media(data, mimeType, options, 'image') });
}

/**
 * An audio block from its bytes and MIME type (such as `audio/wav`).
 *
 * @param {Bytes} data
 * @param {string} mimeType
 * @param {BlockOptions} [options]
 * @returns {Extract<ContentBlock, { tag: 'audio' }>}
 */
export function audio(data, mimeType, options = {}) {
  return block({ tag: 'audio', val: media(data, mimeType, options, 'audio') });
}

/**
 * @param {unknown} data
 * @param {unknown} mimeType
 * @param {BlockOptions} options
 * @param {'image' | 'audio'} what
 * @returns {MediaContent}
 */
function media(data, mimeType, options, what) {
  if (typeof mimeType !== 'string' || mimeType === '') {
    throw new TypeError(`${what}(): give the MIME type, such as '${what === 'image' ? 'image/png' : 'audio/wav'}'`);
  }
  return { data: bytes(data, `${what}()`), mimeType, annotations: annotations(options.annotations), meta: json(options.meta) };
}

/**
 * A link to a resource the client can read. `options`: title, description, mimeType, size,
 * annotations, icons, meta.
 *
 * @param {string} uri
 * @param {string} name
 * @param {ResourceLinkOptions} [options]
 * @returns {Extract<ContentBlock, { tag: 'resource-link' }>}
 */
export function resourceLink(uri, name, options = {}) {
  return block({
    tag: 'resource-link',
    val: {
      uri: String(uri),
      name: String(name),
      title: options.title,
      description: options.description,
      mimeType: options.mimeType,
      size: size(options.size),
      annotations: annotations(options.annotations),
      icons: icons(options.icons),
      meta: json(options.meta),
    },
  });
}

/**
 * A resource's contents carried inline; `resource` comes from {@link contents}.
 *
 * @param {ResourceContents} resource
 * @param {BlockOptions} [options]
 * @returns {Extract<ContentBlock, { tag: 'embedded-resource' }>}
 */
export function embeddedResource(resource, options = {}) {
  return block({
    tag: 'embedded-resource',
    val: {
      resource: checkContents(resource),
      annotations: annotations(options.annotations),
      meta: json(options.meta),
    },
  });
}

/**
 * Converts a value given as content: a block, or a string (a text block).
 *
 * @param {unknown} value
 * @param {string} where
 * @returns {ContentBlock}
 */
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

/** @type {WeakSet<object>} */
const CONTENTS = new WeakSet();

/**
 * The contents of the resource at `uri` (a WIT `resource-contents`): `body` is a string (text)
 * or a Uint8Array (bytes, which the host base64-encodes). `options`: mimeType, meta.
 *
 * @param {string} uri
 * @param {string | Bytes} body
 * @param {ContentsOptions} [options]
 * @returns {ResourceContents}
 */
export function contents(uri, body, options = {}) {
  /** @type {ResourceContents} */
  const made = {
    uri: String(uri),
    mimeType: options.mimeType,
    body: typeof body === 'string' ? { tag: 'text', val: body } : { tag: 'blob', val: bytes(body, 'contents()') },
    meta: json(options.meta),
  };
  CONTENTS.add(made);
  return made;
}

/**
 * @param {unknown} value
 * @returns {value is ResourceContents}
 */
function isContents(value) {
  return value !== null && typeof value === 'object' && CONTENTS.has(value);
}

/**
 * @param {unknown} value
 * @returns {ResourceContents}
 */
function checkContents(value) {
  if (isContents(value)) {
    return value;
  }
  throw new TypeError(`expected resource contents made with contents(uri, body), not ${kind(value)}`);
}

/**
 * What a resource reader returned, as a list of `resource-contents`: a string (text), bytes, one
 * {@link contents} or a list of them. Contents without a MIME type get the declared one.
 *
 * @param {unknown} value
 * @param {string} uri
 * @param {string | undefined} mimeType
 * @returns {ResourceContents[]}
 */
export function toContents(value, uri, mimeType) {
  let list;
  if (typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer) {
    list = [contents(uri, value)];
  } else if (isContents(value)) {
    list = [value];
  } else if (Array.isArray(value) && value.every(isContents)) {
    list = value;
  } else {
    throw new TypeError(`the reader of ${uri} returned ${kind(value)}: return a string (text), a Uint8Array (bytes), or contents(uri, body) (one or a list)`);
  }
  return list.map((item) => (item.mimeType === undefined && mimeType !== undefined ? { ...item, mimeType } : item));
}

// ---- Tool results ------------------------------------------------------------------------------

/** A tool result built with {@link toolResult}. */
export class ToolResult {
  /** @param {ToolResultFields} [fields] */
  constructor({ content = [], structuredContent, isError = false, meta } = {}) {
    const list = Array.isArray(content) ? content : [content];
    this.content = list.map((item, i) => toBlock(item, `toolResult(): content[${i}]`));
    this.structuredContent = structuredContent;
    this.isError = Boolean(isError);
    this.meta = meta;
  }

  /**
   * The WIT `call-result` record.
   * @returns {WitCallResult}
   */
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
 *
 * @param {ToolResultFields} [fields]
 * @returns {ToolResult}
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
 *
 * @param {unknown} value
 * @returns {ToolResult}
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

/**
 * @param {unknown} value
 * @returns {value is JsonObject}
 */
function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// ---- Prompt messages ---------------------------------------------------------------------------

/** @type {WeakSet<object>} */
const MESSAGES = new WeakSet();

/**
 * @param {Role} role
 * @param {unknown} content
 * @returns {PromptMessage}
 */
function message(role, content) {
  const made = { role, content: toBlock(content, `${role}()`) };
  MESSAGES.add(made);
  return made;
}

/**
 * A message from the user: a string (text) or a content block.
 *
 * @param {ContentLike} content
 * @returns {PromptMessage}
 */
export function user(content) {
  return message('user', content);
}

/**
 * A message from the assistant, such as the start of an answer the model should continue.
 *
 * @param {ContentLike} content
 * @returns {PromptMessage}
 */
export function assistant(content) {
  return message('assistant', content);
}

/** A filled-in prompt with a description of its own: `{ description, messages, meta }`. */
export class PromptResult {
  /** @param {PromptResultFields} [fields] */
  constructor({ description, messages = [], meta } = {}) {
    this.description = description;
    this.messages = toMessages(messages);
    this.meta = meta;
  }

  /**
   * The WIT `prompt-result` record.
   * @returns {WitPromptResult}
   */
  toWit() {
    return { description: this.description, messages: this.messages, meta: json(this.meta) };
  }
}

/**
 * A prompt result with a description of its own, besides the messages.
 *
 * @param {PromptResultFields} [fields]
 * @returns {PromptResult}
 */
export function promptResult(fields) {
  return new PromptResult(fields);
}

/**
 * @param {unknown} value
 * @returns {PromptMessage[]}
 */
function toMessages(value) {
  const list = Array.isArray(value) ? value : [value];
  return list.map((item, i) => {
    if (typeof item === 'string') return user(item);
    if (isMessage(item)) return item;
    throw new TypeError(`message ${i}: expected a string or user(...)/assistant(...), not ${kind(item)}`);
  });
}

/**
 * A message made by {@link user} or {@link assistant}, or a WIT record written by hand.
 *
 * @param {unknown} value
 * @returns {value is PromptMessage}
 */
function isMessage(value) {
  if (value === null || typeof value !== 'object') {
    return false;
  }
  if (MESSAGES.has(value)) {
    return true;
  }
  const { role, content } = /** @type {{ role?: unknown, content?: unknown }} */ (value);
  return (role === 'user' || role === 'assistant') && isBlock(content);
}

/**
 * Converts what a prompt handler returned: a string (one user message), a message, a list of
 * them, or a {@link PromptResult}.
 *
 * @param {unknown} value
 * @returns {PromptResult}
 */
export function toPromptResult(value) {
  if (value instanceof PromptResult) {
    return value;
  }
  if (value === undefined || value === null) {
    throw new TypeError('a prompt returned nothing: return a string, user(...)/assistant(...) messages, or promptResult({...})');
  }
  return new PromptResult({ messages: /** @type {MessageLike[]} checked by toMessages */ (value) });
}

// ---- Shared record fields ----------------------------------------------------------------------

/**
 * A JSON field of the WIT contract (a string), from any JSON value.
 *
 * @param {unknown} value
 * @returns {string | undefined}
 */
export function json(value) {
  return value === undefined ? undefined : JSON.stringify(value);
}

/**
 * A list<u8> from a Uint8Array (or a Buffer, an ArrayBuffer, an array of numbers).
 *
 * @param {unknown} value
 * @param {string} where
 * @returns {Uint8Array}
 */
export function bytes(value, where) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value) && value.every((b) => Number.isInteger(b) && b >= 0 && b < 256)) return Uint8Array.from(value);
  throw new TypeError(`${where}: expected bytes (a Uint8Array), not ${kind(value)}`);
}

/**
 * An option<u64> (a BigInt for the bindings).
 *
 * @param {unknown} value
 * @returns {bigint | undefined}
 */
export function size(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'bigint') return value;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new TypeError(`a size must be a non-negative integer, not ${value}`);
  return BigInt(value);
}

/**
 * The WIT `annotations` record.
 *
 * @param {Annotations | null | undefined} value
 * @returns {WitAnnotations | undefined}
 */
export function annotations(value) {
  if (value === undefined || value === null) return undefined;
  return { audience: value.audience ?? [], priority: value.priority, lastModified: value.lastModified };
}

/**
 * A list of WIT `icon`s: { src, mimeType, sizes: ['48x48'], theme: 'light'|'dark' }.
 *
 * @param {Icon[] | null | undefined} value
 * @returns {WitIcon[]}
 */
export function icons(value) {
  if (value === undefined || value === null) return [];
  return value.map((icon) => ({ src: String(icon.src), mimeType: icon.mimeType, sizes: icon.sizes ?? [], theme: icon.theme }));
}
