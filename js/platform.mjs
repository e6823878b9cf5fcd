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
