// api_script.mjs -- in Node >= 20.16 the package's entry runs the API's modules as one script,
// dist/api.bundle.js (scripts/bundle-api.mjs), compiled by vm.Script with V8's code cache of it,
// dist/api.bundle.cache (scripts/code-cache.mjs makes it at build time, after an import and a
// first inference, so it holds the bytecode of the functions those run). Compiling the ES module
// bundle and the first calls' lazy compiles were ~20 ms of the time from import to a first LeNet
// inference. Before -> after (medians of 7-11 fresh processes of bench/startup.mjs, 2026-11-25,
// with the session's other start-up changes): default (threads) 59 -> 51-53 ms, simd 51-55 -> 43-47,
// relaxed-simd 56 -> 51, relaxed-simd-threads 68 -> 54.
//
// The cache is used only when it was made from this very script (it holds the script's hash)
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
// api.bundle.cache: MAGIC, the script's hash (sourceHash) and byte length (little-endian uint32s),
// V8's data.
const MAGIC = 'MXW3';
const HEADER = 12;

// sourceHash(bytes): FNV-1a over the little-endian 32-bit words of `bytes` (zero-padded), xor the
// length, as an unsigned 32-bit number. Each step is a bijection of the running hash, so a change
// of any one word always changes it. It runs in the small WebAssembly module below (0.3 ms for
// the 0.8 MB script), not in node:crypto or node:zlib: loading node:crypto took 2.3 ms of the
// import and node:zlib 1.3, and 8 and 4.6 ms under any V8 flag, such as the relaxed tiers'
// --experimental-wasm-relaxed-simd (Node's built-in modules then compile without their code cache).
//   (func (export "h") (param $n i32) (result i32) (local $i i32) (local $h i32)
//     h = 0x811c9dc5; while (i < n) { h = (h ^ i32.load(i)) * 0x01000193; i += 4 } return h ^ n)
// with (memory (export "m") 1), grown to hold the bytes.
const HASH_WASM = Uint8Array.of(
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, // types: (i32) -> i32
  0x03, 0x02, 0x01, 0x00, // functions: one of type 0
  0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1 page
  0x07, 0x09, 0x02, 0x01, 0x6d, 0x02, 0x00, 0x01, 0x68, 0x00, 0x00, // exports: "m" memory 0, "h" func 0
  0x0a, 0x39, 0x01, 0x37, 0x01, 0x02, 0x7f, // code: one body of 0x37 bytes, locals: 2 x i32
  0x41, 0xc5, 0xbb, 0xf2, 0x88, 0x78, 0x21, 0x02, // h = 0x811c9dc5
  0x02, 0x40, 0x03, 0x40, // block, loop
  0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01, // br_if 1 (i >= n, unsigned)
  0x20, 0x02, 0x20, 0x01, 0x28, 0x02, 0x00, 0x73, // h ^ i32.load(i)
  0x41, 0x93, 0x83, 0x80, 0x08, 0x6c, 0x21, 0x02, // * 0x01000193 -> h
  0x20, 0x01, 0x41, 0x04, 0x6a, 0x21, 0x01, // i += 4
  0x0c, 0x00, 0x0b, 0x0b, // br 0, end loop, end block
  0x20, 0x02, 0x20, 0x00, 0x73, 0x0b); // h ^ n, end
let hasher = null;
export function sourceHash(bytes) {
  hasher ??= new WebAssembly.Instance(new WebAssembly.Module(HASH_WASM)).exports;
  const pages = Math.ceil((bytes.length + 4) / 65536) - hasher.m.buffer.byteLength / 65536;
  if (pages > 0) hasher.m.grow(pages);
  const mem = new Uint8Array(hasher.m.buffer);
  mem.set(bytes);
  mem.fill(0, bytes.length, bytes.length + 4);
  return hasher.h(bytes.length) >>> 0;
}

// The API's exports, or null where the ES module bundle is to be imported.
export async function loadApiScript() {
  if (!isNode || typeof process.getBuiltinModule !== 'function' || process.env.MXW_API_SCRIPT === '0') return null;
  const fs = process.getBuiltinModule('node:fs');
  const vm = process.getBuiltinModule('node:vm');
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
    if (cache.length > HEADER && cache.toString('latin1', 0, 4) === MAGIC
      && cache.readUInt32LE(8) === source.length && cache.readUInt32LE(4) === sourceHash(source)) {
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
