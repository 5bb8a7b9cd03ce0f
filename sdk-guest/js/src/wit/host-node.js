// In plain Node (unit tests): no host. Each function throws until a test installs a fake with
// `testing.setHost(...)`.

/** @import { HostBindings } from '../types.js' */

/**
 * @param {string} name
 * @returns {() => never}
 */
function unavailable(name) {
  return () => {
    throw new Error(`host.${name}() is only available inside a Palisade component (build the plugin with \`palisade-js build\`), or in tests after testing.setHost()`);
  };
}

/** @type {HostBindings} */
export const host = {
  log: unavailable('log'),
  reportProgress: unavailable('reportProgress'),
  isCancelled: unavailable('isCancelled'),
  listRoots: unavailable('listRoots'),
  getEnv: unavailable('getEnv'),
  elicit: unavailable('elicit'),
  sample: unavailable('sample'),
  ask: unavailable('ask'),
  notifyResourceUpdated: unavailable('notifyResourceUpdated'),
  notifyListChanged: unavailable('notifyListChanged'),
};
