// Prepended at module top level (--extern-pre-js). emcc 3.1.6's EXPORT_ES6 output uses
// __dirname, __filename and require in its Node branch, which an ES module does not have.
// No `import 'node:...'` appears (js/platform.mjs says why): Node >= 20.16 hands out built-ins
// through process.getBuiltinModule, earlier Node 20 through a specifier bundlers do not follow.
const __mx_is_node = typeof process == 'object' && typeof process.versions == 'object' &&
                     typeof process.versions.node == 'string';
// (The glue requires built-ins only: through getBuiltinModule they need no node:module, whose load
// was 0.2 ms of the import, 0.75 under a V8 flag.)
const require = !__mx_is_node ? undefined
  : typeof process.getBuiltinModule == 'function' ? (id) => process.getBuiltinModule(id)
  : (await import(/* @vite-ignore */ /* webpackIgnore: true */ ['node', 'module'].join(':'))).createRequire(import.meta.url);
const __filename = __mx_is_node ? require('node:url').fileURLToPath(import.meta.url) : '';
const __dirname = __mx_is_node ? require('node:path').dirname(__filename) : '';
