// @palisade/sdk: write Palisade MCP plugins in JavaScript. See README.md.

export { Plugin, DefinitionError } from './src/plugin.js';
export { ToolError, PluginError, NotFound, InvalidParams } from './src/errors.js';
export {
  text,
  image,
  audio,
  resourceLink,
  embeddedResource,
  contents,
  toolResult,
  ToolResult,
  user,
  assistant,
  promptResult,
  PromptResult,
} from './src/content.js';
export { prefixMatches } from './src/completion.js';
export { UriTemplate, percentEncode, percentDecode } from './src/template.js';
export { objectSchema } from './src/schema.js';
export { UI_MIME_TYPE } from './src/ui.js';
export * as host from './src/host.js';
export * as fs from './src/fs.js';
export { secret, config, MissingSecret } from './src/secret.js';
// Types only, as JSDoc (nothing at run time): ToolSpec, ToolArgs, Fields, StandardSchemaV1,
// ContentBlock... for `/** @type {import('@palisade/sdk').ToolSpec} */`.
export * from './src/types.js';

import { setBindings as setHost } from './src/host.js';
import { setBindings as setFilesystem } from './src/fs.js';
import { setBindings as setConfig } from './src/secret.js';

/**
 * For tests in plain Node, where there is no host: `testing.setHost({ log(level, message) {...} })`
 * replaces host functions (the WIT ones, camelCased), `testing.setFilesystem({ getDirectories })`
 * the preopened directories, `testing.setConfig({ get(key) {...} })` the secrets and values
 * `secret()` reads. Each returns a function that undoes it.
 */
export const testing = { setHost, setFilesystem, setConfig };
