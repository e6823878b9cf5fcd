// api_script.mjs -- in Node >= 20.16 the package's entry runs the API's modules as one script,
// dist/api.bundle.js (scripts/bundle-api.mjs), compiled by vm.Script with V8's code cache of it,
// dist/api.bundle.cache (scripts/code-cache.mjs makes it at build time, after an import and a
// first inference, so it holds the bytecode of the functions those run). Compiling the ES module
// bundle and the first calls' lazy compiles were ~20 ms of the time from import to a first LeNet
// inference. Before -> after (medians of 7-11 fresh processes of bench/startup.mjs, 2026-11-25,
// with the session's other start-up changes): default (threads) 59 -> 51-53 ms, simd 51-55 -> 43-47,
// relaxed-simd 56 -> 51, relaxed-simd-threads 68 -> 54.
//
// The cache is used only when it was made from this very script (it holds the script's CRC-32)
// and V8 accepts it: V8 rejects a cache made by another V8 version or with other V8 flags (a
// package built on another Node release; --experimental-wasm-relaxed-simd), and the script then
// compiles as the module would. The build makes a second cache under Node 20's
// --experimental-wasm-relaxed-simd (api.bundle.relaxed-simd.cache), used where relaxed SIMD is
// on: the relaxed tiers' start-up then has one too. features().codeCache tells which: 'used', 'rejected', 'stale'
// (made from another script), 'absent', or 'off' where the ES module bundle was imported instead
// (browsers and bundlers, Node < 20.16, MXW_API_SCRIPT=0, coverage: scripts/unbundled.mjs).
import { isNode } from './platform.mjs';
import { hostSupport } from './tiers.mjs';

const STATE = Symbol.for('mxnet-wasm.apiScript');
// api.bundle.cache: MAGIC, the script's CRC-32 and byte length (little-endian uint32s), V8's data.
// (CRC-32 through node:zlib, not a SHA-256 through node:crypto: loading node:crypto took 2.3 ms of
// the import, and 8 ms under any V8 flag, such as the relaxed tiers' --experimental-wasm-relaxed-simd,
// since Node's built-in modules then compile without their code cache; node:zlib 0.5 / 1 ms.)
const MAGIC = 'MXW2';
const HEADER = 12;

// The API's exports, or null where the ES module bundle is to be imported.
export async function loadApiScript() {
  if (!isNode || typeof process.getBuiltinModule !== 'function' || process.env.MXW_API_SCRIPT === '0') return null;
  const fs = process.getBuiltinModule('node:fs');
  const vm = process.getBuiltinModule('node:vm');
  const { crc32 } = process.getBuiltinModule('node:zlib');
  const { fileURLToPath } = process.getBuiltinModule('node:url');
  const path = process.getBuiltinModule('node:path');
  // (paths joined here, not `new URL('./file', import.meta.url)`: bundlers would copy these
  // Node-only files into a browser app as assets)
  const dir = path.dirname(fileURLToPath(import.meta.url));
  const file = path.join(dir, 'api.bundle.js');
  let source;
  try {
    source = fs.readFileSync(file);
  } catch {
    return null; // a dist/ without the script form
  }
  let cachedData, codeCache = 'absent';
  // the cache made by a Node with relaxed SIMD on (Node 20's --experimental-wasm-relaxed-simd, the
  // relaxed tiers' flag), where this Node has it on
  let cache = null;
  try {
    cache = fs.readFileSync(path.join(dir, hostSupport().relaxed ? 'api.bundle.relaxed-simd.cache' : 'api.bundle.cache'));
  } catch { /* absent */ }
  if (cache) {
    if (cache.length > HEADER && cache.toString('latin1', 0, 4) === MAGIC && typeof crc32 === 'function'
      && cache.readUInt32LE(4) === crc32(source) && cache.readUInt32LE(8) === source.length) {
      cachedData = cache.subarray(HEADER);
    } else {
      codeCache = 'stale';
    }
  }
  // compiled here, on the main thread, while V8 compiles the wasm module on its background threads
  const script = new vm.Script(source.toString('utf8'), { filename: file, cachedData });
  if (cachedData) codeCache = script.cachedDataRejected ? 'rejected' : 'used';
  const modules = { './tiers.mjs': await import('./tiers.mjs'), './core_load.mjs': await import('./core_load.mjs') };
  const require = (id) => {
    if (!Object.hasOwn(modules, id)) throw new Error(`mxnet-wasm: api.bundle.js asks for '${id}'`);
    return modules[id];
  };
  // the script is kept for scripts/code-cache.mjs (V8 keeps its source for lazy compiles anyway)
  globalThis[STATE] = { codeCache, script };
  const module = { exports: {} };
  script.runInThisContext()(require, module, module.exports);
  return module.exports;
}
