// core.mjs -- the thin typed FFI over the wasm exports (TVM web runtime style): instantiates the
// module once (top-level await), marshals arguments through one preallocated scratch block, and
// turns every failing status into an MXNetError carrying the C core's message.
import { loaded } from './core_load.mjs';
import { REGISTRY_CHECKSUM, REGISTRY_TEXT } from './registry.mjs';

export class MXNetError extends Error {
  constructor(message) {
    super(message);
    this.name = 'MXNetError';
  }
}

// The build of the C core this realm runs (tiers.mjs): {module, tier, requested, fallbacks}.
// The load the entry started (tiers.mjs preloadCore), or one core_load.mjs starts, awaited there:
// every copy of this module (the entry's bundle, dist/core.mjs imported alone) shares the one load.
if (loaded.error) {
  const e = loaded.error;
  throw e && e.mxwMessage !== undefined ? new MXNetError(`mxnet-wasm: ${e.mxwMessage}`) : e;
}
export const core = loaded.core;
export const M = core.module;

// Never cache a typed view of wasm memory across a call that may grow it: these getters always
// return views of the current buffer. In the threaded tiers another thread can grow the memory,
// which the module's own views (M.HEAPU8, ...) learn only at its next runtime call: the views
// here follow the memory's buffer itself.
// (the threaded tiers create the memory in JS: M.wasmMemory; the others export it, under a
// minified name, among M.asm's exports)
const memory = M.wasmMemory ?? Object.values(M.asm ?? {}).find((v) => v instanceof WebAssembly.Memory);
if (!(memory instanceof WebAssembly.Memory)) throw new MXNetError('mxnet-wasm: the module exposes no WebAssembly.Memory');
let viewsOf = null, u8 = null, i32 = null, f64 = null;
function views() {
  const b = memory.buffer;
  if (b !== viewsOf) {
    viewsOf = b;
    u8 = new Uint8Array(b);
    i32 = new Int32Array(b);
    f64 = new Float64Array(b);
  }
}
export const heapU8 = () => { if (memory.buffer !== viewsOf) views(); return u8; };
export const heap32 = () => { if (memory.buffer !== viewsOf) views(); return i32; };
export const heapF64 = () => { if (memory.buffer !== viewsOf) views(); return f64; };
// True when the memory is a SharedArrayBuffer (threaded tiers): bytes handed to users are
// copied out of it, never viewed.
export const sharedMemory = typeof SharedArrayBuffer === 'function' && memory.buffer instanceof SharedArrayBuffer;

export function lastError() {
  return M.UTF8ToString(M._mxw_get_last_error());
}

export function check(status) {
  if (status !== 0) throw new MXNetError(lastError());
  return status;
}

// Scratch block for arguments (handles, shapes, attribute strings). Calls into C never
// re-enter JS, so one block serves every call.
const SCRATCH_BYTES = 1 << 16;
const scratchBase = M._malloc(SCRATCH_BYTES);
if (!scratchBase) throw new MXNetError('mxnet-wasm: cannot allocate the argument scratch block');

// A small block of its own for NDArray shape queries, so that wrapping a handle never clobbers
// arguments still being read from the scratch block.
export const shapeBuf = M._malloc(4 * 16);
const statsBuf = M._malloc(24);

// The C core's wording of an allocation failure (mxw_fail_oom in error.c), for the ones JS meets.
export function oomMessage(what, bytes) {
  M._mxw_memory_stats(statsBuf);
  const s = heapF64().subarray(statsBuf >>> 3, (statsBuf >>> 3) + 3);
  return `out of memory: ${what} needs ${bytes} bytes (${(bytes / 2 ** 20).toFixed(1)} MiB), which the heap cannot provide `
    + `(the wasm heap is ${(heapU8().length / 2 ** 20).toFixed(1)} MiB; ${s[0]} live arrays and cached graphs hold `
    + `${(s[1] / 2 ** 20).toFixed(1)} MiB); dispose() blocks and arrays no longer in use to free memory`;
}

// A bump allocator over the scratch block, reset at the start of each marshalled call.
export class Args {
  constructor() { this.off = 0; this.extra = []; }
  reset() { this.off = 0; for (const p of this.extra) M._free(p); this.extra.length = 0; return this; }
  alloc(bytes) {
    const aligned = (this.off + 7) & ~7;
    if (aligned + bytes <= SCRATCH_BYTES) { this.off = aligned + bytes; return scratchBase + aligned; }
    const p = M._malloc(bytes) >>> 0; // an address past 2 GiB is negative as i32
    if (!p) throw new MXNetError(oomMessage("a call's arguments", bytes));
    this.extra.push(p);
    return p;
  }
  i32s(values) {
    const p = this.alloc(4 * Math.max(values.length, 1));
    heap32().set(values, p >>> 2);
    return p;
  }
  str(s) {
    const n = M.lengthBytesUTF8(s) + 1;
    const p = this.alloc(n);
    M.stringToUTF8(s, p, n);
    return p;
  }
  // An array of C strings; returns the char** pointer.
  strs(list) {
    const ptrs = list.map((s) => this.str(s));
    return this.i32s(ptrs);
  }
}
export const args = new Args();

// The registry's ~190 KB of JSON. Building it in C takes ~9 ms of the import, so the build keeps a
// copy made from the same module (registry.mjs, written by scripts/gen-api.mjs), used when the
// module's checksum of its op definitions matches the copy's (a stale copy, or a tier built from
// other sources, falls back to the module's own JSON). Decoded in one call (a copy: TextDecoder
// refuses views of the threaded tiers' shared memory).
function registryJson() {
  const n = M._mxw_registry_json_size();
  const p = M._mxw_registry_json() >>> 0;
  if (!p || !n) throw new MXNetError(`mxnet-wasm: cannot build the operator registry (${lastError()})`);
  return new TextDecoder().decode(heapU8().slice(p, p + n));
}
const registryCopyFits = REGISTRY_TEXT !== null && !globalThis.__mxwFreshRegistry
  && typeof M._mxw_registry_checksum === 'function' && M._mxw_registry_checksum() >>> 0 === REGISTRY_CHECKSUM;
export const registry = JSON.parse(registryCopyFits ? REGISTRY_TEXT : registryJson());
export const registrySource = registryCopyFits ? 'copy' : 'module';
export const DTYPE_FLAGS = registry.dtypes;                 // name -> flag, from the C core
export const DTYPE_NAMES = Object.fromEntries(Object.entries(DTYPE_FLAGS).map(([k, v]) => [v, k]));
