// Inside the component: WASI's preopened directories, the ones the host granted this plugin. The
// build adds `wasi:filesystem` to the world when the app uses it (see bin/palisade-js.mjs).
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

export const filesystem = { getDirectories };
