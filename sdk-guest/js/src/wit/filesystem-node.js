// In plain Node (unit tests): no preopened directories until a test installs fakes with
// `testing.setFilesystem(...)`.

/** @import { FilesystemBindings } from '../types.js' */

/** @type {FilesystemBindings} */
export const filesystem = {
  getDirectories() {
    return [];
  },
};
