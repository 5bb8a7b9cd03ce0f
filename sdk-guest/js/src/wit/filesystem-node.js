// In plain Node (unit tests): no preopened directories until a test installs fakes with
// `testing.setFilesystem(...)`.
export const filesystem = {
  getDirectories() {
    return [];
  },
};
