// MCP Apps (the extension `io.modelcontextprotocol/ui`): a view is an HTML page, served as a
// `ui://` resource, that a host shows for a tool's results; a tool names its view in
// `_meta.ui`. These helpers shape both exactly as the extension says.

import { DefinitionError } from './plugin.js';

/** The mime type of an MCP Apps view. */
export const UI_MIME_TYPE = 'text/html;profile=mcp-app';

const CSP_KEYS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];
const PERMISSIONS = ['camera', 'microphone', 'geolocation', 'clipboardWrite'];
const VISIBILITY = ['model', 'app'];

/**
 * Checks a `ui://` URI.
 * @param {unknown} uri
 * @param {string} where
 * @returns {string}
 */
export function uiUri(uri, where) {
  if (typeof uri !== 'string' || !/^ui:\/\/[^/?#]+\/./.test(uri)) {
    throw new DefinitionError(`${where}: a view's URI is ui://AUTHORITY/PATH (such as ui://weather/forecast), not ${JSON.stringify(uri)}`);
  }
  return uri;
}

/**
 * A view's `_meta.ui` from its spec: `csp`, `permissions`, `domain`, `prefersBorder`.
 * @param {import('./types.js').UiViewSpec} spec
 * @param {string} where
 * @returns {Record<string, unknown>}
 */
export function viewMeta(spec, where) {
  /** @type {Record<string, unknown>} */
  const ui = {};
  if (spec.csp !== undefined) {
    const csp = object(spec.csp, 'csp', where);
    for (const [key, domains] of Object.entries(csp)) {
      if (!CSP_KEYS.includes(key)) {
        throw new DefinitionError(`${where}: csp.${key} is not one of ${CSP_KEYS.join(', ')}`);
      }
      if (!Array.isArray(domains) || !domains.every((d) => typeof d === 'string' && d.length > 0)) {
        throw new DefinitionError(`${where}: csp.${key} must be a list of origins ("https://api.example.com")`);
      }
    }
    ui.csp = csp;
  }
  if (spec.permissions !== undefined) {
    const asked = spec.permissions;
    const list = Array.isArray(asked) ? asked : Object.keys(object(asked, 'permissions', where));
    /** @type {Record<string, {}>} */
    const permissions = {};
    for (const name of list) {
      if (!PERMISSIONS.includes(name)) {
        throw new DefinitionError(`${where}: permission ${JSON.stringify(name)} is not one of ${PERMISSIONS.join(', ')}`);
      }
      permissions[name] = {};
    }
    ui.permissions = permissions;
  }
  if (spec.domain !== undefined) {
    if (typeof spec.domain !== 'string' || spec.domain === '') throw new DefinitionError(`${where}: domain must be a non-empty string`);
    ui.domain = spec.domain;
  }
  if (spec.prefersBorder !== undefined) {
    if (typeof spec.prefersBorder !== 'boolean') throw new DefinitionError(`${where}: prefersBorder must be true or false`);
    ui.prefersBorder = spec.prefersBorder;
  }
  return ui;
}

/**
 * A tool's `_meta` with its view: `ui.resourceUri` and `ui.visibility`, and the older flat
 * `ui/resourceUri` hosts still read.
 * @param {import('./types.js').ToolUi} link
 * @param {Record<string, unknown> | undefined} meta the tool's own `_meta`
 * @param {string} where
 * @returns {Record<string, unknown>}
 */
export function toolMeta(link, meta, where) {
  const spec = typeof link === 'string' ? { resourceUri: link } : object(link, 'ui', where);
  const resourceUri = uiUri(spec.resourceUri, where);
  const visibility = spec.visibility ?? ['model', 'app'];
  if (!Array.isArray(visibility) || visibility.length === 0 || !visibility.every((v) => VISIBILITY.includes(v))) {
    throw new DefinitionError(`${where}: ui.visibility lists "model", "app" or both`);
  }
  return { ...(meta ?? {}), ui: { resourceUri, visibility }, 'ui/resourceUri': resourceUri };
}

/**
 * @param {unknown} value
 * @param {string} key
 * @param {string} where
 * @returns {Record<string, any>}
 */
function object(value, key, where) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new DefinitionError(`${where}: ${key} must be an object`);
  }
  return /** @type {Record<string, any>} */ (value);
}
