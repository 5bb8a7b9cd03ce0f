// Errors a plugin throws, and how any thrown value becomes the WIT `plugin-error`.

/** @import { ErrorCode, PluginErrorRecord } from './types.js' */

/**
 * The `error-code`s of the WIT contract.
 * @type {readonly ErrorCode[]}
 */
export const ERROR_CODES = ['invalid-params', 'not-found', 'internal', 'cancelled'];

/**
 * A failure reported to the host as a WIT `plugin-error`: `code` is one of `invalid-params`,
 * `not-found`, `internal` or `cancelled`; `data`, if given, is any JSON value for programs.
 *
 * Thrown from a resource reader, a prompt or a completer, the client gets the matching JSON-RPC
 * error (an unknown resource is MCP's -32002). Thrown from a tool, the host turns it into a tool
 * error; throw a {@link ToolError} there instead.
 */
export class PluginError extends Error {
  /**
   * @param {ErrorCode} code
   * @param {string} message
   * @param {unknown} [data] Any JSON value, for programs.
   */
  constructor(code, message, data) {
    super(message);
    if (!ERROR_CODES.includes(code)) {
      throw new TypeError(`unknown plugin error code ${JSON.stringify(code)} (use one of ${ERROR_CODES.join(', ')})`);
    }
    this.name = 'PluginError';
    this.code = code;
    this.data = data;
  }
}

/** The named tool, prompt, resource or template value does not exist (MCP -32002 for resources). */
export class NotFound extends PluginError {
  /**
   * @param {string} message
   * @param {unknown} [data]
   */
  constructor(message, data) {
    super('not-found', message, data);
    this.name = 'NotFound';
  }
}

/** The arguments are wrong (JSON-RPC -32602). */
export class InvalidParams extends PluginError {
  /**
   * @param {string} message
   * @param {unknown} [data]
   */
  constructor(message, data) {
    super('invalid-params', message, data);
    this.name = 'InvalidParams';
  }
}

/**
 * A failed tool call the model should read about: the tool's result carries `message` as text,
 * with `isError` set. Anything else a tool throws is a failure of the plugin (`internal`).
 */
export class ToolError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'ToolError';
  }
}

/**
 * The WIT `plugin-error` record for `code` and `message`, `data` serialized as JSON.
 *
 * @param {ErrorCode} code
 * @param {unknown} message
 * @param {unknown} [data]
 * @returns {PluginErrorRecord}
 */
export function pluginError(code, message, data) {
  return { code, message: String(message), data: data === undefined ? undefined : JSON.stringify(data) };
}

/**
 * Converts anything thrown by plugin code into a WIT `plugin-error` record. `where` says what ran
 * (`tool \`greet\``), for the log. Unexpected errors are `internal`, with `"<name>: <message>"`,
 * and their stack goes to stderr (the host's log).
 *
 * @param {unknown} error
 * @param {string} where
 * @returns {PluginErrorRecord}
 */
export function toPluginError(error, where) {
  if (error instanceof PluginError) {
    return pluginError(error.code, error.message, error.data);
  }
  if (isPluginErrorRecord(error)) {
    // A raw WIT record, as componentize-js documents it: passed through.
    const data = error.data === undefined || typeof error.data === 'string' ? error.data : JSON.stringify(error.data);
    return { code: error.code, message: error.message, data };
  }
  if (error instanceof ToolError) {
    return pluginError('internal', error.message);
  }
  const message = describe(error);
  reportUnexpected(error, where);
  return pluginError('internal', message);
}

/**
 * `"<name>: <message>"` for an Error, the value as text for anything else.
 *
 * @param {unknown} error
 * @returns {string}
 */
export function describe(error) {
  if (error instanceof Error) {
    return `${error.name}: ${error.message}`;
  }
  if (typeof error === 'string') {
    return error;
  }
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * The message of an Error, the value as text for anything else.
 *
 * @param {unknown} error
 * @returns {string}
 */
export function messageOf(error) {
  return error instanceof Error ? error.message : describe(error);
}

/**
 * Writes an unexpected failure and its stack to stderr, which goes to the host's log.
 *
 * @param {unknown} error
 * @param {string} where
 */
export function reportUnexpected(error, where) {
  const stack = error instanceof Error && error.stack ? `\n${String(error.stack).trimEnd()}` : '';
  console.error(`${where} failed: ${describe(error)}${stack}`);
}

/**
 * @param {unknown} value
 * @returns {value is { code: ErrorCode, message: string, data?: unknown }}
 */
function isPluginErrorRecord(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    !(value instanceof Error) &&
    'code' in value &&
    ERROR_CODES.includes(/** @type {ErrorCode} */ (value.code)) &&
    'message' in value &&
    typeof value.message === 'string'
  );
}
