// Prepended at module top level (--extern-pre-js). emcc 3.1.6's EXPORT_ES6 output uses
// __dirname, __filename and require in its Node branch, which an ES module does not have.
const __mx_is_node = typeof process == 'object' && typeof process.versions == 'object' &&
                     typeof process.versions.node == 'string';
const require = __mx_is_node ? (await import('node:module')).createRequire(import.meta.url) : undefined;
const __filename = __mx_is_node ? require('node:url').fileURLToPath(import.meta.url) : '';
const __dirname = __mx_is_node ? require('node:path').dirname(__filename) : '';
