// What the host offers a plugin while it serves a call: logs, progress, cancellation, roots,
// and questions for the client (`ask`). Every function acts on the call being served, so use
// them inside handlers, never at the top level of the module (that runs at build time).

import { host as witHost } from '#wit/host';
import { ToolError } from './errors.js';
import { objectSchema, checkObjectSchema, kind } from './schema.js';
import { json, toBlock, isBlock } from './content.js';

/**
 * @import { AskResult, ClientRoot, ContentBlock, ContentLike, ElicitationResponse, Fields, HostBindings, InputRequest,
 *   JsonObject, JsonSchema, ListKind, LogLevel, Role, Root, SamplingRequest, SamplingResponse } from './types.js'
 */

/** @type {HostBindings} */
let raw = witHost;

/**
 * Replaces the host bindings (for tests in plain Node); returns a function that restores them.
 *
 * @param {Partial<HostBindings>} fake
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
 * MCP log levels (RFC 5424 severities), lowest first.
 * @type {readonly LogLevel[]}
 */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * Writes a log message: to the host's log, tagged with the plugin's name, and to the client as
 * `notifications/message` when it asked for this level. `level` is one of {@link LOG_LEVELS}.
 *
 * @param {LogLevel} level
 * @param {unknown} message Turned into a string.
 */
export function log(level, message) {
  if (!LOG_LEVELS.includes(level)) {
    throw new TypeError(`unknown log level ${JSON.stringify(level)} (use one of ${LOG_LEVELS.join(', ')})`);
  }
  raw.log(level, String(message));
}

/**
 * Reports progress on the current call; `progress` should grow with every report, `total` is
 * the value it reaches at the end, if known.
 *
 * @param {number} progress
 * @param {number | null} [total]
 * @param {string | null} [message]
 */
export function reportProgress(progress, total, message) {
  raw.reportProgress(Number(progress), total === undefined || total === null ? undefined : Number(total), message === undefined || message === null ? undefined : String(message));
}

/**
 * True once the client has cancelled the current call: stop now (the host stops it anyway).
 * @returns {boolean}
 */
export function isCancelled() {
  return raw.isCancelled();
}

/**
 * The server's environment variable `name`, when this plugin may read it: granted in its
 * configuration (`env`), granted "always" by a user before, or, for a plugin with `ask = true`,
 * allowed by the user when asked now. `undefined` otherwise, and when it is not set.
 *
 * @param {string} name
 * @returns {string | undefined}
 */
export function getEnv(name) {
  return raw.getEnv(String(name)) ?? undefined;
}

/**
 * The client's directories this plugin may use for the current call: `{ uri, name, guestPath,
 * writable }`, where `guestPath` is where the plugin sees it (such as `/home/me/project`).
 *
 * @returns {Root[]}
 */
export function listRoots() {
  return raw.listRoots();
}

/**
 * Tells the host that the resource at `uri` changed, for clients subscribed to it.
 *
 * @param {string} uri
 */
export function notifyResourceUpdated(uri) {
  raw.notifyResourceUpdated(String(uri));
}

/**
 * Tells the host that one of this plugin's lists changed: `'tools'`, `'resources'` or `'prompts'`.
 *
 * @param {ListKind} kind
 */
export function notifyListChanged(kind) {
  if (!['tools', 'resources', 'prompts'].includes(kind)) {
    throw new TypeError(`unknown list ${JSON.stringify(kind)} (use 'tools', 'resources' or 'prompts')`);
  }
  raw.notifyListChanged(kind);
}

// ---- Asking the client -------------------------------------------------------------------------

/**
 * Asks the client several things at once, each under a key: `requests` maps keys to requests
 * made with `ask.form(...)`, `ask.url(...)`, `ask.sample(...)` or `ask.roots()`. Returns the
 * {@link Answers}.
 *
 * Over MCP 2026-07-28 the client answers between runs of the call: the first run gets
 * `answers.awaiting === true` and should return at once (its result is discarded); the call
 * then runs again from the start, and `ask` returns the answers. Hence: use the same keys on
 * every run (name the question, not the attempt), keep work before `ask` cheap and free of
 * effects that must not repeat, and return quickly while awaiting. Over earlier revisions the
 * host asks the client at once and `ask` waits, so the same code works there too.
 *
 * @example
 * const answers = host.ask({ user_name: host.ask.form('What is your name?', { name: 'string' }) });
 * if (answers.awaiting) return;           // the call runs again with the answer
 * const name = answers.elicitation('user_name').field('name') ?? 'stranger';
 *
 * @param {{ [key: string]: InputRequest } | [string, InputRequest][]} requests
 * @returns {Answers}
 */
export function ask(requests) {
  const pairs = Array.isArray(requests) ? requests : Object.entries(requests ?? {});
  /** @type {[string, InputRequest][]} */
  const checked = pairs.map(([key, request]) => {
    if (!isInputRequest(request)) {
      throw new TypeError(`ask(): the request under \`${key}\` is ${kind(request)}; make it with ask.form(), ask.url(), ask.sample() or ask.roots()`);
    }
    return [String(key), request];
  });
  return new Answers(raw.ask(checked));
}

/**
 * A form for the user: `message`, and the fields to fill in, either in the compact form of tool
 * inputs (`{ name: 'string', age: 'integer?' }`) or as a full JSON Schema object (flat, of
 * primitive properties).
 *
 * @param {string} message
 * @param {Fields | JsonSchema} fields
 * @returns {InputRequest}
 */
ask.form = function form(message, fields) {
  const schema = isFullSchema(fields) ? checkObjectSchema(fields) : objectSchema(/** @type {Fields} */ (fields));
  return { tag: 'elicit', val: { tag: 'form', val: { message: String(message), requestedSchema: JSON.stringify(schema) } } };
};

/**
 * Sends the user to a URL (MCP 2025-11-25 URL-mode elicitation), for steps that must not pass
 * through the client such as signing in; `elicitationId` matches the answer with the request.
 *
 * @param {string} message
 * @param {string} address
 * @param {string} elicitationId
 * @returns {InputRequest}
 */
ask.url = function url(message, address, elicitationId) {
  return { tag: 'elicit', val: { tag: 'url', val: { message: String(message), url: String(address), elicitationId: String(elicitationId) } } };
};

/**
 * A request for the client's language model: `prompt` is a string (one user message) or a list
 * of messages (`user(...)`, `assistant(...)`); at most `maxTokens` tokens back. `options`:
 * systemPrompt, temperature, stopSequences, modelPreferences (a JSON object), extra (a JSON
 * object of other request fields, merged in).
 *
 * @param {SamplingMessageLike | SamplingMessageLike[]} prompt
 * @param {number} maxTokens
 * @param {SampleOptions} [options]
 * @returns {InputRequest}
 */
ask.sample = function sample(prompt, maxTokens, options = {}) {
  if (!Number.isInteger(maxTokens) || maxTokens <= 0) {
    throw new TypeError('ask.sample(prompt, maxTokens): maxTokens must be a positive integer');
  }
  /** @type {SamplingRequest['messages']} */
  const messages = (Array.isArray(prompt) ? prompt : [prompt]).map((message, i) => {
    if (typeof message === 'string') {
      return { role: 'user', content: [toBlock(message, `ask.sample(): message ${i}`)] };
    }
    if (message && (message.role === 'user' || message.role === 'assistant')) {
      const content = Array.isArray(message.content) ? message.content : [message.content];
      return { role: message.role, content: content.map((block) => toBlock(block, `ask.sample(): message ${i}`)) };
    }
    throw new TypeError(`ask.sample(): message ${i} is ${kind(message)}; use a string, user(...) or assistant(...)`);
  });
  return {
    tag: 'sample',
    val: {
      messages,
      systemPrompt: options.systemPrompt,
      maxTokens,
      temperature: options.temperature,
      stopSequences: options.stopSequences ?? [],
      modelPreferences: json(options.modelPreferences),
      extra: json(options.extra),
    },
  };
};

/**
 * A request for the client's list of roots (MCP `roots/list`): their names only, not access.
 *
 * @returns {InputRequest}
 */
ask.roots = function roots() {
  return { tag: 'list-roots' };
};

/**
 * A message for `ask.sample`: a string (from the user), `user(...)` / `assistant(...)`, or a
 * role with one or more content blocks.
 * @typedef {string | { role: Role, content: ContentLike | ContentLike[] }} SamplingMessageLike
 */

/**
 * @typedef {object} SampleOptions
 * @property {string} [systemPrompt]
 * @property {number} [temperature]
 * @property {string[]} [stopSequences]
 * @property {JsonObject} [modelPreferences]
 * @property {JsonObject} [extra] Other request fields, merged in.
 */

/**
 * @param {unknown} fields
 * @returns {fields is JsonSchema}
 */
function isFullSchema(fields) {
  return fields !== null && typeof fields === 'object' && 'type' in fields && fields.type === 'object' && 'properties' in fields && typeof fields.properties === 'object';
}

/**
 * @param {unknown} request
 * @returns {request is InputRequest}
 */
function isInputRequest(request) {
  return request !== null && typeof request === 'object' && 'tag' in request && ['elicit', 'sample', 'list-roots'].includes(/** @type {string} */ (request.tag));
}

/**
 * Why a question has no answer. `awaiting` is true when the client answers after this run
 * (MCP 2026-07-28): return quickly. Thrown by the getters of {@link Answers}; out of a tool, it
 * becomes a tool error with its message (discarded anyway while awaiting).
 */
export class AskError extends ToolError {
  /**
   * @param {string} message
   * @param {boolean} [awaiting]
   */
  constructor(message, awaiting = false) {
    super(message);
    this.name = 'AskError';
    this.awaiting = awaiting;
  }
}

/**
 * What each kind of answer is.
 * @typedef {{ elicit: Elicitation, sample: Sampling, 'list-roots': ClientRoot[] }} AnswerValues
 */

/**
 * One answer of {@link Answers}: the value of its kind, or why there is none.
 * @typedef {{ [K in keyof AnswerValues]: { ok: true, kind: K, value: AnswerValues[K] } }[keyof AnswerValues] | { ok: false, error: AskError }} Answer
 */

/** The answers `ask` returned, by key. */
export class Answers {
  /**
   * `list`: the WIT answer, pairs of key and `{ tag: 'ok' | 'err', val }`; or built by hand in tests.
   *
   * @param {[string, AskResult][]} list
   */
  constructor(list) {
    /** @type {[string, AskResult][]} */
    this.list = list.map(([key, answer]) => [key, answer]);
  }

  /** True when the client has yet to answer at least one question: return quickly. */
  get awaiting() {
    return this.list.some(([, answer]) => answer.tag === 'err' && answer.val.tag === 'awaiting-answer');
  }

  /**
   * The keys asked, in order.
   * @returns {string[]}
   */
  keys() {
    return this.list.map(([key]) => key);
  }

  /**
   * The answer under `key`: `{ ok: true, kind: 'elicit' | 'sample' | 'list-roots', value }` or
   * `{ ok: false, error: AskError }`; `undefined` when nothing was asked under it.
   *
   * @param {string} key
   * @returns {Answer | undefined}
   */
  get(key) {
    const found = this.list.find(([k]) => k === key);
    if (found === undefined) {
      return undefined;
    }
    const answer = found[1];
    if (answer.tag === 'err') {
      const error = answer.val.tag === 'awaiting-answer' ? new AskError("awaiting the client's answer", true) : new AskError(answer.val.val);
      return { ok: false, error };
    }
    const response = answer.val;
    switch (response.tag) {
      case 'elicit':
        return { ok: true, kind: response.tag, value: new Elicitation(response.val) };
      case 'sample':
        return { ok: true, kind: response.tag, value: new Sampling(response.val) };
      default:
        return { ok: true, kind: response.tag, value: response.val };
    }
  }

  /**
   * The user's answer to the question under `key` (an {@link Elicitation}); throws an {@link AskError} when there is none.
   *
   * @param {string} key
   * @returns {Elicitation}
   */
  elicitation(key) {
    return this.#answered(key, 'elicit', 'an elicitation');
  }

  /**
   * The model's answer to the request under `key` (a {@link Sampling}); throws an {@link AskError} when there is none.
   *
   * @param {string} key
   * @returns {Sampling}
   */
  sampling(key) {
    return this.#answered(key, 'sample', 'a sampling');
  }

  /**
   * The client's roots asked under `key` (`[{ uri, name }]`); throws an {@link AskError} when there are none.
   *
   * @param {string} key
   * @returns {ClientRoot[]}
   */
  roots(key) {
    return this.#answered(key, 'list-roots', 'a roots');
  }

  /**
   * @template {keyof AnswerValues} K
   * @param {string} key
   * @param {K} kind
   * @param {string} what
   * @returns {AnswerValues[K]}
   */
  #answered(key, kind, what) {
    const answer = this.get(key);
    if (answer === undefined) {
      throw new AskError(`nothing was asked under \`${key}\``);
    }
    if (!answer.ok) {
      throw answer.error;
    }
    if (answer.kind !== kind) {
      throw new AskError(`the answer under \`${key}\` is not ${what} answer`);
    }
    return /** @type {AnswerValues[K]} its kind is K */ (answer.value);
  }
}

/** The user's answer to a question: `action` is `'accept'`, `'decline'` or `'cancel'`. */
export class Elicitation {
  /** @param {ElicitationResponse} response */
  constructor({ action, content }) {
    this.action = action;
    /**
     * The submitted values (a JSON object) when the user accepted a form.
     * @type {JsonObject | undefined}
     */
    this.content = content === undefined || content === null ? undefined : JSON.parse(content);
  }

  /** True when the user submitted the form or agreed. */
  get accepted() {
    return this.action === 'accept';
  }

  /**
   * The submitted value of the form field `name`, when the user accepted and filled it in.
   *
   * @param {string} name
   * @returns {unknown}
   */
  field(name) {
    return this.accepted && this.content !== null && typeof this.content === 'object' ? this.content[name] : undefined;
  }
}

/** The model's answer: `role`, `content` (content blocks), `model`, `stopReason`, `raw` (the whole result as JSON). */
export class Sampling {
  /** @param {SamplingResponse} response */
  constructor({ role, content, model, stopReason, raw: whole }) {
    this.role = role;
    /** @type {ContentBlock[]} */
    this.content = content;
    this.model = model;
    this.stopReason = stopReason;
    /** @type {JsonObject | undefined} */
    this.raw = whole === undefined ? undefined : JSON.parse(whole);
  }

  /**
   * The text blocks of the answer, joined by newlines (empty when it has none).
   * @returns {string}
   */
  get text() {
    return this.content
      .flatMap((block) => (isBlock(block) && block.tag === 'text' ? [block.val.text] : []))
      .join('\n');
  }
}
