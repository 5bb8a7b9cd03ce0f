// In plain Node (unit tests): no values until a test installs them with `testing.setConfig(...)`.

/** @import { ConfigBindings } from '../types.js' */

/** @type {ConfigBindings} */
export const config = {
  get() {
    return undefined;
  },
};
