// Completion of prompt arguments and resource-template variables.

import { kind } from './schema.js';

/** @import { Completer, Completion, CompletionResult } from './types.js' */

/** The most values one completion answer carries (MCP's limit). */
export const MAX_COMPLETIONS = 100;

/**
 * The candidates that start with `typed`, ignoring case, in their order: the usual completer
 * over a fixed list.
 *
 * @param {string} typed
 * @param {Iterable<unknown>} candidates
 * @returns {string[]}
 */
export function prefixMatches(typed, candidates) {
  const prefix = String(typed).toLowerCase();
  return [...candidates].map(String).filter((candidate) => candidate.toLowerCase().startsWith(prefix));
}

/**
 * A completer from a declaration: a list of values (filtered by what the user typed) or a
 * function `(typed, context) => values` (context: the other arguments, name to value).
 *
 * @param {Completion} spec
 * @param {string} where
 * @returns {Completer}
 */
export function toCompleter(spec, where) {
  if (Array.isArray(spec)) {
    const values = spec.map(String);
    return (typed) => prefixMatches(typed, values);
  }
  if (typeof spec === 'function') {
    return spec;
  }
  throw new Error(`${where}: a completion is a list of values or a function (typed, context) => values, not ${kind(spec)}`);
}

/**
 * Runs `completer` and shapes its answer as a WIT `completion-result`.
 *
 * @param {Completer | undefined} completer
 * @param {string} typed
 * @param {{ [name: string]: string }} context
 * @param {string} where
 * @returns {Promise<CompletionResult>}
 */
export async function runCompleter(completer, typed, context, where) {
  /** @type {unknown} */
  const values = completer === undefined ? [] : await completer(typed, context);
  if (!isIterable(values)) {
    throw new TypeError(`${where}: the completer returned ${kind(values)}, not a list of values`);
  }
  const all = [...values].map(String);
  return {
    values: all.slice(0, MAX_COMPLETIONS),
    total: all.length,
    hasMore: all.length > MAX_COMPLETIONS,
  };
}

/**
 * @param {unknown} value
 * @returns {value is Iterable<unknown>}
 */
function isIterable(value) {
  return Array.isArray(value) || Boolean(value && typeof (/** @type {{ [Symbol.iterator]?: unknown }} */ (value))[Symbol.iterator] === 'function');
}
