// Test fixtures that need nothing outside the project.
//
// 1. Where the real MXNet files are: one setting, the environment variable MXW_MODELS (a
//    relative value is taken from the project root, not the cwd), default ../shared/models
//    beside the project root. Tests that read them use `{ skip: REAL_FILES_SKIP }`: false when
//    the folder is there, else the reason, so node --test reports them as skipped.
// 2. A test-only writer of MXNet's NDArray-list (.params) records, written from
//    ../shared/spec/params-format.md and independent of the library's writer: legacy (V0, u32
//    dims, no magic), V1, V2, V3, dense / row_sparse / csr, named or unnamed lists.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env.MXW_MODELS;
export const MODELS = env ? path.resolve(ROOT, env) : path.resolve(ROOT, '../shared/models');
export const MODELS_PRESENT = existsSync(MODELS) && statSync(MODELS).isDirectory();
export const REAL_FILES_SKIP = MODELS_PRESENT ? false
  : `real MXNet files not found at ${MODELS} (MXW_MODELS=${env || 'unset, default ../shared/models'})`;
/** A path inside the real-models folder. */
export const model = (p) => path.join(MODELS, p);

// ---- .params writer ---------------------------------------------------------------------------------
export const V1 = 0xf993fac8, V2 = 0xf993fac9, V3 = 0xf993faca;
// dtype flags (§4) and their element sizes
export const FLAG = { float32: 0, float64: 1, float16: 2, uint8: 3, int32: 4, int8: 5, int64: 6, bool: 7, bfloat16: 12 };

class Bytes {
  constructor() { this.parts = []; }
  u32(v) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); this.parts.push(b); return this; }
  i32(v) { const b = new Uint8Array(4); new DataView(b.buffer).setInt32(0, v, true); this.parts.push(b); return this; }
  u64(v) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); this.parts.push(b); return this; }
  i64(v) { const b = new Uint8Array(8); new DataView(b.buffer).setBigInt64(0, BigInt(v), true); this.parts.push(b); return this; }
  raw(typed) { this.parts.push(new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength).slice()); return this; }
  shape64(dims) { this.i32(dims === null ? -1 : dims.length); for (const d of dims ?? []) this.i64(d); return this; }
  ctx(flag) { return this.i32(1).i32(0).i32(flag); } // cpu(0), dtype flag
  bytes() {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of this.parts) { out.set(p, o); o += p.length; }
    return out;
  }
}

// Records: each is a function writing itself into a Bytes.
/** Legacy V0: u32 ndim (no magic), u32 dims, context, dtype, payload. */
export const legacy = (dims, flag, data) => (b) => { b.u32(dims.length); for (const d of dims) b.u32(d); b.ctx(flag).raw(data); };
/** V1: magic, i32 ndim + i64 dims, context, dtype, payload; dims null = a none record (ndim -1). */
export const v1 = (dims, flag, data) => (b) => { b.u32(V1).shape64(dims); if (dims) b.ctx(flag).raw(data); };
/** V2 / V3 dense: magic, stype 0, shape, context, dtype, payload. V2 with [] and V3 with null are none. */
export const dense = (magic, dims, flag, data) => (b) => {
  b.u32(magic).i32(0).shape64(dims);
  if ((magic === V2 && dims.length === 0) || (magic === V3 && dims === null)) return;
  b.ctx(flag).raw(data);
};
/** row_sparse (V2): float32 values of the stored rows, int64 row indices. */
export const rowSparse = (rows, cols, rowIdx, values) => (b) => {
  b.u32(V2).i32(1).shape64([rowIdx.length, cols]).shape64([rows, cols]).ctx(0).i32(6).shape64([rowIdx.length]);
  b.raw(new Float32Array(values)).raw(new BigInt64Array(rowIdx.map(BigInt)));
};
/** csr (V2, 2-D): float32 values, int64 row pointer and column indices. */
export const csr = (rows, cols, indptr, indices, values) => (b) => {
  b.u32(V2).i32(2).shape64([values.length]).shape64([rows, cols]).ctx(0).i32(6).shape64([rows + 1]).i32(6).shape64([indices.length]);
  b.raw(new Float32Array(values)).raw(new BigInt64Array(indptr.map(BigInt))).raw(new BigInt64Array(indices.map(BigInt)));
};

/** A whole file: header (0x112, reserved 0, count), the records, the names (none: a list file). */
export function paramsFile(records, names = null) {
  const b = new Bytes().u64(0x112).u64(0).u64(records.length);
  for (const r of records) r(b);
  b.u64(names ? names.length : 0);
  const enc = new TextEncoder();
  for (const n of names ?? []) { const s = enc.encode(n); b.u64(s.length); b.parts.push(s); }
  return b.bytes();
}
