#!/usr/bin/env node
// palisade-js: builds a Palisade plugin written in JavaScript into a WebAssembly component.
//
//   palisade-js build APP.js [-o OUT.wasm] [--wit DIR] [--world WORLD] [--bundle FILE]
//
// 1. esbuild bundles the app, the SDK and anything else it imports into one ES module (the
//    componentizer resolves no packages, and relative imports only below one directory); the
//    WIT imports (`palisade:*`, `wasi:*`) stay imports.
// 2. When the app reads files (the SDK's `fs` imports `wasi:filesystem`), the world is extended
//    with `wasi:filesystem`, whose WIT comes with the pinned componentize-js (through jco); when
//    it reads secrets (`secret()` imports `wasi:config/store`), with the SDK's own wit/.
// 3. The pinned componentize-js builds the component, with `fetch()` (over `wasi:http`) when
//    the app calls it, and without `wasi:http` otherwise.

import { parseArgs } from 'node:util';
import { existsSync, statSync, readFileSync, readdirSync, mkdtempSync, writeFileSync, cpSync, mkdirSync, rmSync, realpathSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SDK_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
const VERSION = JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')).version;

const USAGE = `Usage: palisade-js build APP.js [options]

Builds APP.js, a Palisade plugin written with @palisade/sdk, into a WebAssembly component.

Options:
  -o, --out FILE     Where to write the component (default: APP's name with .wasm, next to it)
      --wit DIR      The palisade:plugin WIT directory (default: $PALISADE_WIT, else the wit/
                     directory of the Palisade repository this SDK is in)
      --world NAME   The world to build (default: plugin)
      --bundle FILE  Also write the bundled JavaScript there (line numbers in the plugin's stack
                     traces refer to it)
  -h, --help         Show this help
  -v, --version      Show the SDK's version`;

class BuildError extends Error {}

async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        out: { type: 'string', short: 'o' },
        wit: { type: 'string' },
        world: { type: 'string' },
        bundle: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    throw new BuildError(`${error.message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.version) {
    console.log(VERSION);
    return;
  }
  const [command, app, ...extra] = positionals;
  if (command !== 'build') {
    throw new BuildError(command === undefined ? USAGE : `unknown command \`${command}\` (the only one is \`build\`)\n\n${USAGE}`);
  }
  if (app === undefined) {
    throw new BuildError(`which app? palisade-js build APP.js\n\n${USAGE}`);
  }
  if (extra.length > 0) {
    throw new BuildError(`unexpected argument(s): ${extra.join(' ')}\n\n${USAGE}`);
  }
  await build({
    app: resolve(app),
    out: values.out === undefined ? undefined : resolve(values.out),
    wit: values.wit === undefined ? undefined : resolve(values.wit),
    world: values.world ?? 'plugin',
    bundle: values.bundle === undefined ? undefined : resolve(values.bundle),
  });
}

async function build({ app, out, wit, world, bundle }) {
  const started = performance.now();
  if (!existsSync(app) || !statSync(app).isFile()) {
    throw new BuildError(`no such file: ${app}`);
  }
  out ??= join(dirname(app), `${basename(app, extname(app))}.wasm`);
  const witDir = findWit(wit);
  const worlds = readWorlds(witDir);
  if (!worlds.names.includes(world)) {
    throw new BuildError(`the WIT in ${witDir} has no world \`${world}\` (it has ${worlds.names.map((w) => `\`${w}\``).join(', ') || 'none'}); pass --world`);
  }

  const work = mkdtempSync(join(tmpdir(), 'palisade-js-'));
  try {
    const code = await bundleApp(app, worlds.exports[world]);
    await checkServed(app, world, worlds.exports[world], work);
    const source = join(work, `${basename(app, extname(app))}.js`);
    writeFileSync(source, code);
    if (bundle !== undefined) {
      writeFileSync(bundle, code);
    }

    // The world, extended with wasi:filesystem when the app reads files and wasi:config when it
    // reads secrets.
    let witPath = witDir;
    let worldName = world;
    const filesystem = /["']wasi:filesystem\/[a-z-]+@([0-9][0-9A-Za-z.+-]*)["']/.exec(code)?.[1];
    const config = /["']wasi:config\/store@0\.2\.0-draft["']/.test(code);
    if (filesystem !== undefined || config) {
      witPath = join(work, 'wit');
      worldName = 'app';
      extendWorld(witDir, worlds.package, world, { filesystem, config }, witPath);
    }

    const { componentize } = await import('@bytecodealliance/componentize-js');
    // componentize-js maps the source's directory (or the working directory, when the source is
    // below it) into the build; running from the work directory keeps that to the bundle.
    const cwd = process.cwd();
    process.chdir(work);
    let component;
    try {
      ({ component } = await componentize({
        sourcePath: source,
        witPath,
        worldName,
        disableFeatures: usesFetch(code) ? ['fetch-event'] : ['http', 'fetch-event'],
      }));
    } catch (error) {
      throw new BuildError(`componentize-js could not build ${app}:\n${String(error?.message ?? error).trimEnd()}`);
    } finally {
      process.chdir(cwd);
    }
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, component);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const megabytes = (component.length / 1e6).toFixed(1);
    console.error(`palisade-js: built ${out} (${megabytes} MB) in ${seconds} s`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Whether the bundled app calls `fetch` (or builds its `Request`s and `Headers`): then the
 * component gets StarlingMonkey's `fetch()`, which imports `wasi:http`. Without it, calling
 * `fetch` would trap the plugin.
 */
export function usesFetch(code) {
  return /\b(fetch\s*\(|new\s+(Request|Headers)\s*\()/.test(code);
}

/** The WIT directory: --wit, $PALISADE_WIT, or the repository's wit/ next to this SDK. */
function findWit(given) {
  const candidates = [
    [given, '--wit'],
    [process.env.PALISADE_WIT ? resolve(process.env.PALISADE_WIT) : undefined, '$PALISADE_WIT'],
  ];
  for (const [dir, from] of candidates) {
    if (dir !== undefined) {
      if (!existsSync(dir) || !statSync(dir).isDirectory()) {
        throw new BuildError(`${from} names ${dir}, which is not a directory`);
      }
      return dir;
    }
  }
  const repository = resolve(SDK_DIR, '..', '..', 'wit');
  if (existsSync(join(repository, 'worlds.wit'))) {
    return repository;
  }
  throw new BuildError('cannot find the palisade:plugin WIT: pass --wit DIR (the wit/ directory of the Palisade repository) or set $PALISADE_WIT');
}

/** The package of a WIT directory, its worlds, and the interfaces each world exports. */
function readWorlds(dir) {
  const files = readdirSync(dir).filter((name) => name.endsWith('.wit'));
  let pkg;
  const names = [];
  const exports = {};
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8').replace(/\/\/[^\n]*/g, '');
    pkg ??= /^\s*package\s+([^;\s]+)\s*;/m.exec(text)?.[1];
    for (const match of text.matchAll(/\bworld\s+([a-z][a-z0-9-]*)\s*\{([^}]*)\}/g)) {
      names.push(match[1]);
      // Plain `export name;` lines: the interfaces the app must export (camelCased).
      exports[match[1]] = [...match[2].matchAll(/\bexport\s+([a-z][a-z0-9-]*)\s*;/g)].map((m) => camel(m[1]));
    }
  }
  if (pkg === undefined) {
    throw new BuildError(`${dir} holds no WIT package (no .wit file with a \`package\` line)`);
  }
  return { package: pkg, names, exports };
}

function camel(name) {
  return name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
}

/** Bundles the app into one ES module; the WIT imports stay imports. */
async function bundleApp(app, required = []) {
  const esbuild = await import('esbuild');
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [app],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      target: 'es2023',
      mainFields: ['module', 'main'],
      conditions: ['palisade-component'],
      external: ['palisade:*', 'wasi:*'],
      keepNames: true,
      charset: 'utf8',
      legalComments: 'none',
      metafile: true,
      logLevel: 'silent',
      plugins: [sdkFallback(), noNodeBuiltins()],
    });
  } catch (error) {
    const messages = await esbuild.formatMessages(error.errors ?? [], { kind: 'error', color: process.stderr.isTTY });
    throw new BuildError(`cannot bundle ${app}:\n${messages.join('').trimEnd() || error.message}`);
  }
  const [output] = result.outputFiles;
  const exported = Object.values(result.metafile.outputs)[0]?.exports ?? [];
  const missing = required.filter((name) => !exported.includes(name));
  if (missing.length > 0) {
    throw new BuildError(
      `${app} does not export ${missing.map((m) => `\`${m}\``).join(', ')}, which the world needs: end it with\n` +
        `  export const { ${required.join(', ')} } = plugin.exports();`,
    );
  }
  return output.text;
}

/**
 * Refuses a world that would drop what the app defines (tools built for `resource-provider`),
 * and an app that defines nothing: the app is bundled again for plain Node, where the SDK runs
 * without a host, imported, and asked what it defines. An app that cannot run in Node (it
 * imports WIT interfaces itself, say) is built unchecked, with a warning.
 */
async function checkServed(app, world, exported, work) {
  const esbuild = await import('esbuild');
  const check = join(work, 'check.mjs');
  let module;
  try {
    await esbuild.build({
      entryPoints: [app],
      bundle: true,
      outfile: check,
      format: 'esm',
      platform: 'node',
      target: 'es2023',
      external: ['palisade:*', 'wasi:*'],
      logLevel: 'silent',
      plugins: [sdkFallback()],
    });
    module = await import(pathToFileURL(check).href);
  } catch (error) {
    console.error(`palisade-js: warning: cannot check what ${basename(app)} defines (${String(error?.message ?? error).split('\n')[0]}); building it anyway`);
    return;
  }
  const summary = ['tools', 'resources', 'prompts', 'completion']
    .map((name) => module[name]?.[Symbol.for('palisade.sdk.definitions')])
    .find((definitions) => typeof definitions === 'function')?.();
  if (summary === undefined) {
    return; // not made with this SDK's Plugin: nothing to compare
  }
  const defined = Object.entries(summary).filter(([, found]) => found.length > 0);
  if (defined.length === 0) {
    throw new BuildError(`${basename(app)} defines no tools, resources or prompts (no plugin.tool, plugin.resource, plugin.resourceTemplate, plugin.resourceLister or plugin.prompt ran when it was loaded)`);
  }
  for (const [name, found] of defined) {
    if (!exported.includes(name)) {
      const shown = found.slice(0, 5).join(', ') + (found.length > 5 ? ` and ${found.length - 5} more` : '');
      throw new BuildError(`${basename(app)} defines ${shown}, but the world \`${world}\` does not export \`${name}\` (it exports: ${exported.join(', ') || 'nothing'}): build with --world plugin, which serves everything`);
    }
  }
}

/** `@palisade/sdk` resolves to this SDK when the app's folder has no copy of its own. */
function sdkFallback() {
  return {
    name: 'palisade-sdk-fallback',
    setup(build) {
      build.onResolve({ filter: /^@palisade\/sdk$/ }, async (args) => {
        if (args.pluginData?.fallback) return undefined;
        const found = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { fallback: true },
        });
        if (found.errors.length === 0) return found;
        return { path: join(SDK_DIR, 'index.js') };
      });
    },
  };
}

/** Node's built-in modules do not exist inside a component: say so, and what to use instead. */
function noNodeBuiltins() {
  const hints = { fs: "use `fs` from '@palisade/sdk' (fs.readText, fs.readBytes, fs.readDir, fs.writeFile)" };
  return {
    name: 'palisade-no-node-builtins',
    setup(build) {
      build.onResolve({ filter: /^node:/ }, (args) => {
        const name = args.path.slice('node:'.length).split('/')[0];
        return {
          errors: [{ text: `\`${args.path}\` is a Node.js module; a Palisade plugin runs in a WebAssembly sandbox without Node's APIs${hints[name] ? `: ${hints[name]}` : ''}` }],
        };
      });
    },
  };
}

/**
 * Writes to `into` a WIT directory whose world `app` is `world` of `pkg` plus
 * wasi:filesystem@`filesystem` (when given) and wasi:config/store (when `config`), with the
 * packages they need under deps/.
 */
function extendWorld(witDir, pkg, world, { filesystem, config }, into) {
  const deps = join(into, 'deps');
  mkdirSync(deps, { recursive: true });
  // The contract itself, and whatever it depends on.
  const contract = join(deps, 'contract');
  mkdirSync(contract);
  for (const name of readdirSync(witDir)) {
    const path = join(witDir, name);
    if (name.endsWith('.wit')) {
      cpSync(path, join(contract, name));
    } else if (name === 'deps' && statSync(path).isDirectory()) {
      cpSync(path, deps, { recursive: true });
    }
  }
  const imports = [];
  if (filesystem !== undefined) {
    const wasi = findWasiWit(filesystem);
    for (const name of ['io', 'clocks', 'filesystem']) {
      const target = join(deps, `wasi-${name}@${filesystem}`);
      if (!existsSync(target)) {
        cpSync(join(wasi, `wasi-${name}`), target, { recursive: true });
      }
    }
    imports.push(`wasi:filesystem/preopens@${filesystem}`, `wasi:filesystem/types@${filesystem}`);
  }
  if (config) {
    const target = join(deps, 'wasi-config@0.2.0-draft');
    if (!existsSync(target)) {
      mkdirSync(target);
      cpSync(join(SDK_DIR, 'wit', 'wasi-config.wit'), join(target, 'store.wit'));
    }
    imports.push('wasi:config/store@0.2.0-draft');
  }
  const [name, pkgVersion] = pkg.split('@');
  const at = pkgVersion === undefined ? '' : `@${pkgVersion}`;
  writeFileSync(
    join(into, 'app.wit'),
    `package palisade-js:app;\n\nworld app {\n  include ${name}/${world}${at};\n${imports.map((i) => `  import ${i};\n`).join('')}}\n`,
  );
}

/** The WASI 0.2 WIT that comes with componentize-js (through jco), for `version`. */
function findWasiWit(version) {
  const componentizeJs = dirname(dirname(fileURLToPath(import.meta.resolve('@bytecodealliance/componentize-js'))));
  for (let dir = componentizeJs; ; dir = dirname(dir)) {
    for (const base of [join(dir, 'node_modules', '@bytecodealliance', 'jco'), join(dir, 'jco')]) {
      const wit = join(base, 'lib', 'wit', 'builtin', version);
      if (existsSync(join(wit, 'wasi-filesystem'))) {
        return wit;
      }
    }
    if (dirname(dir) === dir) {
      throw new BuildError(`cannot find the WIT of wasi:filesystem@${version}, which should come with componentize-js (through jco); reinstall the SDK's dependencies (npm ci)`);
    }
  }
}

// Run as a program, not when imported (the SDK's tests import `usesFetch`).
const invoked = process.argv[1] === undefined ? undefined : realpathSync(process.argv[1]);
if (invoked === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    if (error instanceof BuildError) {
      console.error(`palisade-js: ${error.message}`);
    } else {
      console.error(`palisade-js: ${error?.stack ?? error}`);
    }
    process.exitCode = 1;
  });
}
