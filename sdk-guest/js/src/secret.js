// Secrets and configuration values the operator gives the plugin, read through
// `wasi:config/store`: `[plugins.NAME.secrets]` (an API key, a token: from the server's
// environment or a file, never logged) and `[plugins.NAME.config]` for plain values.

import { config as bindings } from '#wit/config';
import { ToolError } from './errors.js';

/** @import { ConfigBindings } from './types.js' */

/** @type {ConfigBindings} */
let raw = bindings;

/**
 * Replaces the bindings (tests in plain Node); returns a function that undoes it.
 * @param {Partial<ConfigBindings>} fake
 * @returns {() => void}
 */
export function setBindings(fake) {
  const previous = raw;
  raw = { ...raw, ...fake };
  return () => {
    raw = previous;
  };
}

/** A secret the plugin asked for and was not given; thrown in a tool, the model reads why. */
export class MissingSecret extends ToolError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'MissingSecret';
  }
}

/**
 * The configuration value (or secret) `name`, or `undefined`: for settings with a default, such
 * as an API's base URL.
 * @param {string} name
 * @returns {string | undefined}
 */
export function config(name) {
  try {
    return raw.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The secret (or configuration value) `name`.
 * @param {string} name
 * @returns {string}
 * @throws {MissingSecret} when the server's configuration does not give it
 */
export function secret(name) {
  let value;
  try {
    value = raw.get(name);
  } catch (error) {
    const why = /** @type {any} */ (error)?.payload?.val ?? /** @type {any} */ (error)?.message ?? String(error);
    throw new MissingSecret(`the secret ${name} cannot be read: ${why}`);
  }
  if (value === undefined || value === null) {
    throw new MissingSecret(
      `the secret ${name} is not given to this plugin: add \`${name} = { env = "HOST_VARIABLE" }\` ` +
        '(or `{ file = "PATH" }`) under [plugins.PLUGIN.secrets] in the server\'s configuration',
    );
  }
  return value;
}
