// In plain Node (unit tests): no host. Each function throws until a test installs a fake with
// `testing.setHost(...)`.
/**
 * @param {string} name
 * @returns {(...args: any[]) => any}
 */
function unavailable(name) {
  return () => {
    throw new Error(`host.${name}() is only available inside a Palisade component (build the plugin with \`palisade-js build\`), or in tests after testing.setHost()`);
  };
}

export const host = Object.fromEntries(
  ['log', 'reportProgress', 'isCancelled', 'listRoots', 'elicit', 'sample', 'ask', 'notifyResourceUpdated', 'notifyListChanged'].map(
    (name) => [name, unavailable(name)],
  ),
);
