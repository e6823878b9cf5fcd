// platform.mjs -- the host facts and Node built-ins the package uses, with no `import 'node:...'`
// anywhere: bundlers building for browsers (Vite, webpack, esbuild) then have nothing to
// externalize or warn about, and one set of modules serves Node and browsers.
export const isNode = typeof process === 'object' && typeof process.versions === 'object' && !!process.versions.node;

// A Node built-in (`name` without the `node:` prefix), or null off Node. Node >= 20.16 gives it
// synchronously (process.getBuiltinModule); earlier Node 20 releases import it by a specifier
// built at run time, which bundlers leave alone.
export async function nodeBuiltin(name) {
  if (!isNode) return null;
  if (typeof process.getBuiltinModule === 'function') return process.getBuiltinModule(`node:${name}`);
  const specifier = ['node', name].join(':');
  return import(/* @vite-ignore */ /* webpackIgnore: true */ specifier);
}

// The built-ins the API's modules read while they evaluate, without a top-level await of their
// own (the API is also compiled as one script, api_script.mjs, where none can be): Node >= 20.16
// gives them synchronously; on earlier Node 20 releases core_load.mjs awaits preloadNodeBuiltins()
// before any of those modules evaluates. Kept on globalThis: tiers.mjs and core_load.mjs are
// modules of their own beside the bundles, with their own copy of this module.
const PRELOADED = Symbol.for('mxnet-wasm.nodeBuiltins');
const PRELOAD_NAMES = ['fs', 'path', 'os', 'url', 'v8', 'vm'];
export async function preloadNodeBuiltins() {
  if (!isNode || typeof process.getBuiltinModule === 'function' || globalThis[PRELOADED]) return;
  const mods = await Promise.all(PRELOAD_NAMES.map((n) => nodeBuiltin(n).catch(() => null)));
  globalThis[PRELOADED] = Object.fromEntries(PRELOAD_NAMES.map((n, i) => [n, mods[i]]));
}
// A Node built-in now (one of PRELOAD_NAMES on Node < 20.16), or null off Node.
export function nodeBuiltinSync(name) {
  if (!isNode) return null;
  if (typeof process.getBuiltinModule === 'function') return process.getBuiltinModule(`node:${name}`);
  return globalThis[PRELOADED]?.[name] ?? null;
}
