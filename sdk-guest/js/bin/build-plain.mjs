#!/usr/bin/env node
// Builds a component of plain exported functions (no Palisade SDK) with the SDK's pinned
// componentize-js: the kind of component another host's catalogue has, which Palisade serves
// with one tool per function. No wasi:http, clocks, random or stdio: the functions compute.
//
// Usage: build-plain.mjs SOURCE.js --wit WIT_DIR --world WORLD -o OUT.wasm

import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { componentize } from '@bytecodealliance/componentize-js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    wit: { type: 'string' },
    world: { type: 'string' },
    o: { type: 'string' },
  },
});
if (positionals.length !== 1 || !values.wit || !values.world || !values.o) {
  console.error('usage: build-plain.mjs SOURCE.js --wit WIT_DIR --world WORLD -o OUT.wasm');
  process.exit(2);
}
const { component } = await componentize({
  sourcePath: positionals[0],
  witPath: values.wit,
  worldName: values.world,
  disableFeatures: ['http', 'fetch-event', 'random', 'stdio', 'clocks'],
});
writeFileSync(values.o, component);
