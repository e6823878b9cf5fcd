// Inside the factory (--pre-js). emcc 3.1.6 fetch()es the .wasm whenever a global fetch exists,
// and Node's fetch rejects file: URLs; read the file beside this module instead.
if (__mx_is_node && !Module['wasmBinary'] && !Module['instantiateWasm'])
  Module['wasmBinary'] = require('node:fs').readFileSync(__filename.replace(/\.m?js$/, '.wasm'));
