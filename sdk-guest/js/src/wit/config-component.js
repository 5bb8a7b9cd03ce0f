// Inside the component: the values and secrets the host gives this plugin. The build adds
// `wasi:config/store` to the world when the app reads a secret (see bin/palisade-js.mjs).
import { get } from 'wasi:config/store@0.2.0-draft';

export const config = { get };
