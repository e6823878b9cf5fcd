// ndarray.mjs -- NDArray: a handle to a C array, its creation and read-back, arithmetic methods
// with MXNet's broadcasting rules, memory scopes (tidy), and the eager operator call.
import { nodeBuiltinSync } from './platform.mjs';
import { M, MXNetError, args, check, lastError, heap32, heapU8, heapF64, registry, shapeBuf, DTYPE_FLAGS, DTYPE_NAMES } from './core.mjs';
import { attrString, formatValues } from './format.mjs';

// ---- dtypes ------------------------------------------------------------------------------------
const TYPED = {
  float32: Float32Array, float64: Float64Array, uint8: Uint8Array, int32: Int32Array,
  int8: Int8Array, int64: BigInt64Array, bool: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  uint32: Uint32Array, uint64: BigUint64Array,
};
// Types with no JS typed array of their own are read back as float32 values.
const VALUE_DTYPE = { float16: 'float32', bfloat16: 'float32' };
const ITEM_BYTES = { float16: 2, bfloat16: 2 };
for (const [k, T] of Object.entries(TYPED)) ITEM_BYTES[k] = T.BYTES_PER_ELEMENT;

export function dtypeFlag(dtype) {
  if (dtype === undefined || dtype === null) return DTYPE_FLAGS.float32;
  if (typeof dtype === 'number' && DTYPE_NAMES[dtype] !== undefined) return dtype;
  const name = typeof dtype === 'function' ? dtypeOfTyped(dtype) : String(dtype);
  const flag = DTYPE_FLAGS[name === 'bool_' ? 'bool' : name];
  if (flag === undefined) throw new MXNetError(`unknown dtype ${String(dtype)}`);
  return flag;
}
function dtypeOfTyped(ctor) {
  switch (ctor) {
    case Float32Array: return 'float32';
    case Float64Array: return 'float64';
    case Int32Array: return 'int32';
    case Uint8Array: case Uint8ClampedArray: return 'uint8';
    case Int8Array: return 'int8';
    case BigInt64Array: return 'int64';
    case Int16Array: return 'int16';
    case Uint16Array: return 'uint16';
    case Uint32Array: return 'uint32';
    case BigUint64Array: return 'uint64';
    default: return undefined;
  }
}

// ---- contexts ----------------------------------------------------------------------------------
export class Context {
  constructor(deviceType = 'cpu', deviceId = 0) { this.deviceType = deviceType; this.deviceId = deviceId; }
  toString() { return `${this.deviceType}(${this.deviceId})`; }
  equals(o) { return o instanceof Context && o.deviceType === this.deviceType && o.deviceId === this.deviceId; }
}
export const cpu = (id = 0) => new Context('cpu', id);

// ---- lifetime: explicit dispose, tidy scopes, and a FinalizationRegistry backstop ---------------
// Each array's C handle is freed by dispose(), by the tidy scope it was created in, or -- when it
// is dropped without either -- by a FinalizationRegistry once the JS garbage collector finds it
// unreachable. The collector does not see wasm memory, so a program that drops large arrays could
// fill the wasm heap before it runs; the bytes of arrays left to it (created outside any tidy,
// kept, or returned from the outermost tidy, and not yet disposed or finalized) are counted, and
// when they grow by gcThreshold (default 64 MiB; or by half of what survived the last collection,
// whichever is more) a full collection is requested. What the engine allows: in Node the `gc`
// function is taken from --expose-gc (globalThis.gc) or, without the flag, through node:v8 and
// node:vm (as jest's leak detector does); browsers offer none, so there only their own
// collections free dropped arrays. Finalizers run as tasks after the collection, never inside a
// synchronous loop: a loop that drops arrays without yielding to the event loop keeps them until
// it yields; within it only dispose() and tidy() free memory.
// node:v8 and node:vm are loaded when first needed (loading node:v8 at import took ~2 ms of it).
let forceGc; // undefined until first needed, then a function or null (unavailable)
function findGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  const mods = [nodeBuiltinSync('v8'), nodeBuiltinSync('vm')];
  if (!mods[0] || !mods[1]) return null;
  const [v8, vm] = mods.map((m) => m.default ?? m);
  try {
    v8.setFlagsFromString('--expose-gc');
    const fn = vm.runInNewContext('gc');
    v8.setFlagsFromString('--no-expose-gc');
    return typeof fn === 'function' ? fn : null;
  } catch {
    return null;
  }
}
// Bytes and arrays left to the collector (cell.n >= 0 marks a counted cell), what finalizers
// freed so far, and the trigger's state.
const gcState = {
  bytes: 0, arrays: 0, finalizedArrays: 0, finalizedBytes: 0, collections: 0,
  baseline: 0, threshold: 64 * 1024 * 1024, armed: true,
};
function countCell(cell, n) {
  if (cell.n >= 0) { gcState.bytes -= cell.n; gcState.arrays--; }
  cell.n = n;
  if (n < 0) { if (gcState.bytes < gcState.baseline) gcState.baseline = gcState.bytes; return; }
  gcState.bytes += n;
  gcState.arrays++;
  if (gcState.bytes > gcState.baseline + Math.max(gcState.threshold, gcState.baseline / 2)) maybeCollect();
}
function maybeCollect() {
  gcState.baseline = gcState.bytes; // next request after another threshold of growth
  if (!gcState.armed || !(gcState.threshold > 0)) return;
  if (forceGc === undefined) forceGc = findGc();
  if (!forceGc) return;
  // One request per turn of the event loop: in a loop that never yields, finalizers cannot run,
  // so further collections would only cost time.
  gcState.armed = false;
  const t = setTimeout(() => { gcState.armed = true; }, 0);
  if (t && typeof t.unref === 'function') t.unref();
  gcState.collections++;
  forceGc();
}
// Other wasm memory owned by a JS object and left to the collector (a cached graph's buffers):
// trackBytes(cell, n) counts n bytes for cell ({n: -1} when new), trackBytes(cell, -1) stops.
export function trackBytes(cell, n) { if (n !== cell.n) countCell(cell, n); }

const finalizer = new FinalizationRegistry((cell) => {
  M._mxw_ndarray_free(cell.h);
  gcState.finalizedArrays++;
  if (cell.n > 0) gcState.finalizedBytes += cell.n;
  countCell(cell, -1);
});
const scopes = [];

// mx.tidy(fn): runs fn; every array created during it is disposed when it returns, except the
// arrays in its result (an NDArray, or arrays/objects/Maps/Sets holding them), which move to the
// enclosing tidy (or, outside any, are left to dispose() and the collector), and arrays passed
// to keep(). When fn throws, every array it created is disposed and the error is rethrown. The
// same rules as TF.js's tf.tidy.
export function tidy(fn) {
  if (typeof fn !== 'function') throw new MXNetError('mx.tidy() takes a function');
  const scope = new Set();
  scopes.push(scope);
  let result;
  try {
    result = fn();
  } catch (e) {
    endScope(scope);
    throw e;
  }
  if (result && typeof result.then === 'function') {
    endScope(scope);
    throw new MXNetError('mx.tidy() takes a synchronous function; await outside the tidy');
  }
  endScope(scope, result);
  return result;
}
function endScope(scope, result) {
  scopes.pop(); // scopes nest strictly: every tidy closes its own before returning or throwing
  const outer = scopes.length ? scopes[scopes.length - 1] : null;
  const keepSet = new Set();
  if (result !== undefined) collectArrays(result, keepSet, new Set());
  for (const a of scope) {
    a._scope = null;
    if (!keepSet.has(a)) a.dispose();
    else if (outer) { outer.add(a); a._scope = outer; } else countCell(a._cell, a._nbytes);
  }
  scope.clear();
}
function collectArrays(v, out, seen, depth = 0) {
  if (!v || typeof v !== 'object' || depth > 8 || seen.has(v)) return;
  seen.add(v);
  if (v instanceof NDArray) { out.add(v); return; }
  if (Array.isArray(v) || v instanceof Set) { for (const x of v) collectArrays(x, out, seen, depth + 1); return; }
  if (v instanceof Map) { for (const x of v.values()) collectArrays(x, out, seen, depth + 1); return; }
  if (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) {
    for (const x of Object.values(v)) collectArrays(x, out, seen, depth + 1);
  }
}
// Keeps an array alive past every enclosing tidy (parameters, cached graphs' buffers); it is
// freed by dispose() or, once dropped, by the collector.
export function keep(a) {
  if (!(a instanceof NDArray)) throw new MXNetError('mx.keep() takes an NDArray');
  a._keep = true;
  if (a._scope) { a._scope.delete(a); a._scope = null; if (a._h) countCell(a._cell, a._nbytes); }
  return a;
}

// {numArrays, bytes (arrays and cached graphs' planned buffers), peakBytes, wasmHeapBytes,
// scratchBytes (kernels' retained buffers on every thread: freed by Block.dispose()), gcArrays, gcBytes, finalizedArrays, finalizedBytes, gcCollections, gcThreshold}:
// gcArrays/gcBytes are the arrays left to the garbage collector (not disposed, in no tidy scope,
// views counted at their own size): what awaits finalization is at most that, since JS cannot
// tell which of them are still reachable. finalized*: what the collector freed (arrays dropped
// without dispose). gcCollections: collections requested. memory({resetPeak: true}) also
// restarts the peak from the current bytes; memory({gcThreshold: bytes}) sets the growth that
// requests a collection (0: never request one).
export function memory({ resetPeak = false, gcThreshold } = {}) {
  if (gcThreshold !== undefined) {
    if (typeof gcThreshold !== 'number' || !(gcThreshold >= 0)) throw new MXNetError(`memory(): gcThreshold must be a number of bytes >= 0, got ${gcThreshold}`);
    gcState.threshold = gcThreshold;
    gcState.baseline = Math.min(gcState.baseline, gcState.bytes);
  }
  const p = args.reset().alloc(24);
  M._mxw_memory_stats(p);
  const f64 = heapF64();
  const r = {
    numArrays: f64[p >>> 3], bytes: f64[(p >>> 3) + 1], peakBytes: f64[(p >>> 3) + 2], wasmHeapBytes: heapU8().length,
    scratchBytes: M._mxw_scratch_bytes(),
    gcArrays: gcState.arrays, gcBytes: gcState.bytes, finalizedArrays: gcState.finalizedArrays,
    finalizedBytes: gcState.finalizedBytes, gcCollections: gcState.collections, gcThreshold: gcState.threshold,
  };
  if (resetPeak) M._mxw_memory_reset_peak();
  return r;
}

// ---- NDArray -----------------------------------------------------------------------------------
export class NDArray {
  // Takes ownership of a C handle. Users create arrays with nd.array / nd.zeros / ops.
  constructor(handle) {
    if (!handle) throw new MXNetError('NDArray: NULL handle');
    this._h = handle;
    M._mxw_ndarray_info(handle, shapeBuf);
    const h32 = heap32(), b = shapeBuf >>> 2, ndim = h32[b + 1];
    const shape = new Array(ndim);
    for (let i = 0; i < ndim; i++) shape[i] = h32[b + 2 + i];
    this._shape = shape;
    this._dtype = DTYPE_NAMES[h32[b]];
    let n = ITEM_BYTES[this._dtype] ?? 4;
    for (let i = 0; i < ndim; i++) n *= shape[i];
    this._nbytes = n;
    const cell = { h: handle, n: -1 };
    this._cell = cell;
    finalizer.register(this, cell, this);
    if (scopes.length) {
      const scope = scopes[scopes.length - 1];
      scope.add(this);
      this._scope = scope;
    } else {
      this._scope = null;
      countCell(cell, n);
    }
  }
  get handle() {
    if (!this._h) throw new MXNetError('this NDArray has been disposed');
    return this._h;
  }
  get shape() { return this._shape.slice(); }
  get dtype() { return this._dtype; }
  get size() { return this._shape.reduce((a, b) => a * b, 1); }
  get ndim() { return this._shape.length; }
  get context() { return this._ctx ?? cpu(0); }   // the context a creator asked for (context.mjs)
  get ctx() { return this.context; }
  // Python's x.grad: None until attach_grad (the training work attaches gradients)
  get grad() { return this._grad ?? null; }
  get isDisposed() { return !this._h; }

  dispose() {
    if (!this._h) return;
    if (this._ownedGrad) { this._ownedGrad.dispose(); this._ownedGrad = null; } // attachGrad's buffer
    finalizer.unregister(this);
    if (this._cell.n >= 0) countCell(this._cell, -1);
    if (this._scope) { this._scope.delete(this); this._scope = null; }
    M._mxw_ndarray_free(this._h);
    this._h = 0;
  }

  // A copy of the values in a typed array of the array's dtype (float16/bfloat16: Float32Array).
  toTypedArray() {
    const h = this.handle;
    const valueDtype = VALUE_DTYPE[this._dtype];
    if (valueDtype) {
      const tmp = this.astype(valueDtype);
      try { return tmp.toTypedArray(); } finally { tmp.dispose(); }
    }
    const T = TYPED[this._dtype];
    const ptr = M._mxw_ndarray_data(h) >>> 0; // addresses past 2 GiB are negative as i32
    const n = this.size;
    // a copy in an ordinary ArrayBuffer (the threaded tiers' memory is a SharedArrayBuffer)
    return new T(heapU8().slice(ptr, ptr + n * T.BYTES_PER_ELEMENT).buffer);
  }

  toArray() {
    let flat = this.toTypedArray();
    if (flat instanceof BigInt64Array || flat instanceof BigUint64Array) flat = Array.from(flat, Number);
    const shape = this._shape;
    if (shape.length === 0) return flat[0];
    const rec = (dim, off) => {
      const n = shape[dim];
      if (dim === shape.length - 1) return Array.from(flat.subarray ? flat.subarray(off, off + n) : flat.slice(off, off + n));
      const stride = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
      return Array.from({ length: n }, (_, i) => rec(dim + 1, off + i * stride));
    };
    return rec(0, 0);
  }
  tolist() { return this.toArray(); }
  // Python's asnumpy(): the values as nested JS arrays (toTypedArray() is the flat copy).
  asnumpy() { return this.toArray(); }

  item() {
    if (this.size !== 1) throw new MXNetError(`item() needs an array of size 1, got shape (${this._shape.join(', ')})`);
    const v = this.toTypedArray()[0];
    return typeof v === 'bigint' ? Number(v) : v;
  }
  asscalar() { return this.item(); }

  astype(dtype, { copy = true } = {}) {
    const flag = dtypeFlag(dtype);
    if (!copy && flag === DTYPE_FLAGS[this._dtype]) return this;
    return invokeByName('Cast', [this], { dtype: DTYPE_NAMES[flag] })[0];
  }

  copy() { return this.copyto(empty(this._shape, this._dtype)); }
  // copyto(NDArray): copies the values into it; copyto(Context): a new array on that context.
  copyto(other) {
    if (other instanceof Context) return this.copy();
    if (!(other instanceof NDArray)) throw new MXNetError('copyto: other must be an NDArray or a Context');
    check(M._mxw_ndarray_copy(this.handle, other.handle));
    return other;
  }

  // MXNet's reshape: a view sharing memory, with the special codes 0, -1, -2, -3, -4 and
  // `reverse`, resolved by the Reshape operator's shape inference in C.
  reshape(...shape) {
    let opts = {};
    if (shape.length && isPlainObject(shape[shape.length - 1])) opts = shape.pop();
    if (shape.length === 1 && Array.isArray(shape[0])) shape = shape[0];
    const target = inferReshape(this._shape, shape, !!opts.reverse);
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_ndarray_view(this.handle, target.length, a.i32s(target), out));
    return new NDArray(heap32()[out >>> 2]);
  }
  get T() { return invokeByName('transpose', [this], {})[0]; }

  // Python's non-fluent shape methods (fluent op methods such as x.transpose(axes), x.sum(axis),
  // x.sliceAxis(...) are generated from js/fluent.mjs by ops.mjs).
  // flatten(inplace=False): inplace returns a view (reshape (0, -1)).
  flatten(...a) {
    const { inplace = false } = sigArgs('flatten', a, ['inplace']);
    return inplace ? this.reshape([0, -1]) : invokeByName('Flatten', [this], {})[0];
  }
  // expand_dims(axis, inplace=False)
  expandDims(...a) {
    const { axis, inplace = false } = sigArgs('expand_dims', a, ['axis', 'inplace']);
    if (axis === undefined || axis === null) throw new MXNetError("expand_dims: missing required argument 'axis'");
    if (!inplace) return invokeByName('expand_dims', [this], { axis })[0];
    const shape = this.shape;
    if (!Number.isInteger(axis) || axis < -shape.length - 1 || axis > shape.length) {
      throw new MXNetError(`expand_dims: axis ${axis} is out of range for ${shape.length}d array`);
    }
    shape.splice(axis < 0 ? axis + shape.length + 1 : axis, 0, 1);
    return this.reshape(shape);
  }
  // squeeze(axis=None, inplace=False)
  squeeze(...a) {
    const { axis = null, inplace = false } = sigArgs('squeeze', a, ['axis', 'inplace']);
    if (!inplace) return invokeByName('squeeze', [this], { axis })[0];
    const shape = this.shape;
    let keep;
    if (axis !== null) {
      const axes = (Array.isArray(axis) ? axis : [axis]).map((ax) => {
        const r = ax < 0 ? ax + shape.length : ax;
        if (!Number.isInteger(r) || r < 0 || r >= shape.length) throw new MXNetError(`squeeze: axis ${ax} is out of range for ${shape.length}d array`);
        if (shape[r] !== 1) throw new MXNetError(`squeeze: target axis ${ax} must be size 1, got ${shape[r]}`);
        return r;
      });
      keep = shape.filter((_, i) => !axes.includes(i));
    } else {
      keep = shape.filter((d) => d !== 1);
    }
    return this.reshape(keep.length ? keep : [1]);
  }
  // split_v2(indices_or_sections, axis=0, squeeze_axis=False) (ndarray.py's split_v2: sections
  // become the equal parts' start indices, a list of indices gets a leading 0)
  splitV2(...a) {
    const { indices_or_sections: ios, axis = 0, squeeze_axis = false } =
      sigArgs('split_v2', a, ['indices_or_sections', 'axis', 'squeeze_axis']);
    let indices;
    if (Number.isInteger(ios)) {
      const shape = this.shape, ax = axis < 0 ? axis + shape.length : axis;
      if (ios <= 0 || ax < 0 || ax >= shape.length || shape[ax] % ios !== 0) {
        throw new MXNetError('split_v2: array split does not result in an equal division');
      }
      indices = Array.from({ length: ios }, (_, i) => i * (shape[ax] / ios));
    } else if (Array.isArray(ios)) {
      indices = [0, ...ios];
    } else {
      throw new MXNetError('split_v2: indices_or_sections must either int or tuple of ints');
    }
    return invokeByName('_split_v2', [this], { indices, axis, squeeze_axis });
  }
  // diag(k=0, **kwargs)
  diag(...a) {
    const rest = {};
    const { k = 0 } = sigArgs('diag', a, ['k'], rest);
    return invokeByName('diag', [this], { ...rest, k })[0];
  }
  // broadcast_to(shape): leading axes of size 1 are added first, as NDArray.broadcast_to does.
  broadcastTo(...a) {
    let { shape } = sigArgs('broadcast_to', a, ['shape']);
    if (shape === undefined) throw new MXNetError("broadcast_to: missing required argument 'shape'");
    shape = Array.isArray(shape) ? shape : [shape];
    const cur = this._shape;
    const err = () => new MXNetError(`operands could not be broadcast together with remapped shapes [original->remapped]: (${cur.join(', ')}) and requested shape (${shape.join(', ')})`);
    if (shape.length < cur.length) throw err();
    const padded = [...new Array(shape.length - cur.length).fill(1), ...cur];
    for (let i = 0; i < shape.length; i++) if (padded[i] !== shape[i] && padded[i] !== 1) throw err();
    if (padded.length !== cur.length) {
      const view = this.reshape(padded);
      try { return invokeByName('broadcast_to', [view], { shape })[0]; } finally { view.dispose(); }
    }
    return invokeByName('broadcast_to', [this], { shape })[0];
  }
  // broadcast_like(other) = broadcast_to(other.shape)
  broadcastLike(other) {
    if (!(other instanceof NDArray)) throw new MXNetError('broadcast_like: other must be an NDArray');
    return this.broadcastTo(other.shape);
  }

  // ---- operators (Python's dunders, rule 13), with MXNet's broadcasting and scalar rules ----
  // ndarray.py: add(self, other) etc. -- broadcast_* with an NDArray, _*_scalar with a number.
  add(o) { return ufunc(this, o, 'broadcast_add', '_plus_scalar', null); }
  radd(o) { return ufunc(this, o, 'broadcast_add', '_plus_scalar', null); }
  sub(o) { return ufunc(this, o, 'broadcast_sub', '_minus_scalar', '_rminus_scalar'); }
  rsub(o) { return ufunc(o, this, 'broadcast_sub', '_minus_scalar', '_rminus_scalar'); }
  mul(o) { return ufunc(this, o, 'broadcast_mul', '_mul_scalar', null); }
  rmul(o) { return ufunc(this, o, 'broadcast_mul', '_mul_scalar', null); }
  div(o) { return ufunc(this, o, 'broadcast_div', '_div_scalar', '_rdiv_scalar'); }
  rdiv(o) { return ufunc(o, this, 'broadcast_div', '_div_scalar', '_rdiv_scalar'); }
  truediv(o) { return this.div(o); }
  rtruediv(o) { return this.rdiv(o); }
  mod(o) { return ufunc(this, o, 'broadcast_mod', '_mod_scalar', '_rmod_scalar'); }
  rmod(o) { return ufunc(o, this, 'broadcast_mod', '_mod_scalar', '_rmod_scalar'); }
  pow(o) { return ufunc(this, o, 'broadcast_power', '_power_scalar', '_rpower_scalar'); }
  rpow(o) { return ufunc(o, this, 'broadcast_power', '_power_scalar', '_rpower_scalar'); }
  // __neg__ is _mul_scalar(x, -1.0); __abs__ is the fluent abs().
  neg() { return invokeByName('_mul_scalar', [this], { scalar: -1 })[0]; }
  eq(o) { return ufunc(this, o, 'broadcast_equal', '_equal_scalar', null); }
  ne(o) { return ufunc(this, o, 'broadcast_not_equal', '_not_equal_scalar', null); }
  gt(o) { return ufunc(this, o, 'broadcast_greater', '_greater_scalar', '_lesser_scalar'); }
  ge(o) { return ufunc(this, o, 'broadcast_greater_equal', '_greater_equal_scalar', '_lesser_equal_scalar'); }
  lt(o) { return ufunc(this, o, 'broadcast_lesser', '_lesser_scalar', '_greater_scalar'); }
  le(o) { return ufunc(this, o, 'broadcast_lesser_equal', '_lesser_equal_scalar', '_greater_equal_scalar'); }
  // In place (x += y): the result is written into this array, which is returned.
  iadd(o) { return inplace(this, o, 'broadcast_add', '_plus_scalar'); }
  isub(o) { return inplace(this, o, 'broadcast_sub', '_minus_scalar'); }
  imul(o) { return inplace(this, o, 'broadcast_mul', '_mul_scalar'); }
  idiv(o) { return inplace(this, o, 'broadcast_div', '_div_scalar'); }
  itruediv(o) { return this.idiv(o); }
  imod(o) { return inplace(this, o, 'broadcast_mod', '_mod_scalar'); }
  // len(x): the size of the first axis.
  get length() {
    if (this._shape.length === 0) throw new MXNetError('len() of a 0-d NDArray');
    return this._shape[0];
  }
  // Named forms kept from earlier releases (nd.maximum etc. as methods).
  maximum(o) { return ufunc(this, o, 'broadcast_maximum', '_maximum_scalar', null); }
  minimum(o) { return ufunc(this, o, 'broadcast_minimum', '_minimum_scalar', null); }
  equal(o) { return this.eq(o); }
  notEqual(o) { return this.ne(o); }
  greater(o) { return this.gt(o); }
  greaterEqual(o) { return this.ge(o); }
  lesser(o) { return this.lt(o); }
  lesserEqual(o) { return this.le(o); }

  // ---- the rest of NDArray's Python API that ported code uses ----
  get stype() { return 'default'; }
  tostype(stype) {
    if (stype !== 'default') throw new MXNetError(`tostype: storage type '${stype}' is not supported (only 'default')`);
    return this.copy();
  }
  waitToRead() { this.handle; } // computation is synchronous: nothing to wait for
  asInContext(context) {
    if (context instanceof Context && this.context.equals(context)) return this;
    return this.copyto(context);
  }

  toString() {
    if (!this._h) return '<NDArray disposed>';
    const vals = this.toTypedArray();
    const body = formatValues(vals, this._shape, ['float32', 'float64', 'float16', 'bfloat16'].includes(this._dtype), this._dtype !== 'float64');
    const dims = this._shape.length ? this._shape.join('x') : '';
    return `\n${body}\n<NDArray ${dims} @${this.context}>`;
  }
  [Symbol.for('nodejs.util.inspect.custom')]() { return this.toString(); }
}

// Only a plain object (prototype Object.prototype or null) is an options object.
function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

// A Python signature's arguments: positional in `names` order, then an options object naming
// any of them (snake_case or camelCase). `rest` collects unknown names instead of throwing.
const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export function sigArgs(method, a, names, rest) {
  const r = {};
  let n = a.length;
  if (n > 0 && isPlainObject(a[n - 1])) {
    const opts = a[--n];
    for (const k in opts) {
      const key = names.includes(k) ? k : snake(k);
      if (!names.includes(key)) {
        if (rest) { rest[k] = opts[k]; continue; }
        throw new MXNetError(`${method}() got an unexpected argument '${k}' (parameters: ${names.join(', ')})`);
      }
      r[key] = opts[k];
    }
  }
  if (n > names.length) throw new MXNetError(`${method}() takes at most ${names.length} positional arguments (${names.join(', ')}), got ${n}`);
  for (let i = 0; i < n; i++) {
    if (names[i] in r) throw new MXNetError(`${method}() got argument '${names[i]}' twice (positionally and by name)`);
    r[names[i]] = a[i];
  }
  return r;
}

const isScalar = (v) => typeof v === 'number' || typeof v === 'boolean';
function operandError(v) {
  return new MXNetError(`operand must be an NDArray or a number, got ${v === null ? 'null' : (typeof v === 'object' ? v.constructor?.name ?? 'object' : typeof v)}`);
}
// ndarray.py's _ufunc_helper: NDArray op NDArray -> arrayOp (broadcasting); NDArray op number ->
// scalarOp(lhs, scalar); number op NDArray -> rscalarOp(rhs, scalar), or scalarOp when the
// operation commutes (rscalarOp null); number op number -> the Python operator's value (pyFn).
export function ufunc(lhs, rhs, arrayOp, scalarOp, rscalarOp, pyFn) {
  if (lhs instanceof NDArray) {
    if (rhs instanceof NDArray) return invokeByName(arrayOp, [lhs, rhs], {})[0];
    if (isScalar(rhs)) return invokeByName(scalarOp, [lhs], { scalar: Number(rhs) })[0];
    throw operandError(rhs);
  }
  if (isScalar(lhs)) {
    if (rhs instanceof NDArray) return invokeByName(rscalarOp ?? scalarOp, [rhs], { scalar: Number(lhs) })[0];
    if (isScalar(rhs) && pyFn) return pyFn(Number(lhs), Number(rhs));
    throw operandError(rhs);
  }
  throw operandError(lhs);
}
// x += y etc.: broadcast_*(x, y, out=x) or _*_scalar(x, y, out=x); returns x.
function inplace(self, o, arrayOp, scalarOp) {
  if (o instanceof NDArray) return invokeByName(arrayOp, [self, o], {}, self)[0];
  if (isScalar(o)) return invokeByName(scalarOp, [self], { scalar: Number(o) }, self)[0];
  throw operandError(o);
}

// Reshape's target shape comes from the C registry's Reshape shape inference, so the special
// codes have one implementation.
function inferReshape(inShape, shape, reverse) {
  const op = opId('Reshape');
  const p = paramsFor(op, { shape, reverse });
  return inferShapes(p, [inShape])[0];
}

// ---- creation ----------------------------------------------------------------------------------
// A new array's handle: its elements not set (mxw_ndarray_empty; for callers that write them all),
// or zeros.
function createHandle(shape, flag, zeroed = false) {
  const a = args.reset();
  const out = a.alloc(4);
  checkAlloc((zeroed ? M._mxw_ndarray_create : M._mxw_ndarray_empty)(shape.length, a.i32s(shape), flag, out));
  return heap32()[out >>> 2];
}

function checkShape(shape) {
  if (!Array.isArray(shape)) shape = [shape];
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) throw new MXNetError(`invalid shape (${shape.join(', ')}): dimensions must be non-negative integers`);
  }
  return shape;
}

export function empty(shape, dtype = 'float32') {
  return new NDArray(createHandle(checkShape(shape), dtypeFlag(dtype)));
}
export function zerosArray(shape, dtype = 'float32') {
  return new NDArray(createHandle(checkShape(shape), dtypeFlag(dtype), true));
}

// Writes a typed array of values (any numeric typed array or plain array) into arr.
function fill(arr, values) {
  const dt = arr.dtype;
  const T = TYPED[dt];
  const n = arr.size;
  if (values.length !== n) throw new MXNetError(`${values.length} values do not fill shape (${arr.shape.join(', ')})`);
  if (T && (values instanceof T || (Array.isArray(values) && !(T === BigInt64Array || T === BigUint64Array)))) {
    const ptr = M._mxw_ndarray_data(arr.handle) >>> 0;
    new T(heapU8().buffer, ptr, n).set(values);
    return arr;
  }
  // Convert through a staging array of the source's own dtype; C converts as Cast does.
  const srcDtype = (ArrayBuffer.isView(values) && dtypeOfTyped(values.constructor)) || 'float64';
  const stage = empty(arr.shape, srcDtype);
  try {
    const S = TYPED[srcDtype];
    const ptr = M._mxw_ndarray_data(stage.handle) >>> 0;
    new S(heapU8().buffer, ptr, n).set(Array.isArray(values) ? Float64Array.from(values) : values);
    stage.copyto(arr);
  } finally {
    stage.dispose();
  }
  return arr;
}

function flattenNested(data) {
  const shape = [];
  let probe = data;
  while (Array.isArray(probe)) { shape.push(probe.length); probe = probe[0]; }
  const flat = data.flat(Infinity).map((v) => (typeof v === 'boolean' ? Number(v) : v));
  const expect = shape.reduce((a, b) => a * b, 1);
  if (flat.length !== expect || flat.some((v) => typeof v !== 'number')) {
    throw new MXNetError('nd.array: nested arrays must be rectangular and hold numbers');
  }
  return { shape, flat };
}

// nd.array(nestedArrays | typedArray | NDArray | number, {dtype, shape})
export function array(data, opts = {}) {
  let { dtype, shape } = opts;
  if (data instanceof NDArray) return data.astype(dtype ?? data.dtype);
  if (ArrayBuffer.isView(data)) {
    dtype = dtype ?? dtypeOfTyped(data.constructor) ?? 'float32';
    shape = shape ? checkShape(shape) : [data.length];
    return fill(empty(shape, dtype), data);
  }
  if (typeof data === 'number') data = [data];
  if (!Array.isArray(data)) throw new MXNetError('nd.array takes nested arrays, a typed array, an NDArray or a number');
  const { shape: s, flat } = flattenNested(data);
  return fill(empty(shape ? checkShape(shape) : s, dtype ?? 'float32'), flat);
}

// ---- the eager operator call -------------------------------------------------------------------
const opIds = new Map();
export function opId(name) {
  let id = opIds.get(name);
  if (id === undefined) {
    const a = args.reset();
    id = M._mxw_op_find(a.str(name));
    if (id < 0) throw new MXNetError(`operator ${name} is not registered`);
    opIds.set(name, id);
  }
  return id;
}
export const opInfo = (id) => registry.ops[id];

// Parsed attributes are cached per (op, attribute text): the hot path of an imperative loop
// parses nothing.
const paramCache = new Map();
const PARAM_CACHE_MAX = 4096;
export function attrStrings(id, attrs) {
  const keys = [];
  const vals = [];
  for (const k in attrs) {
    const v = attrs[k];
    if (v === undefined) continue;
    keys.push(k);
    vals.push(attrString(v));
  }
  return { keys, vals };
}
const NO_ATTRS = {};
// Frees every cached parse (also when blocks are disposed: the small blocks would otherwise stay
// scattered through memory the next model's arrays need in one piece).
export function clearParamCache() {
  for (const old of paramCache.values()) M._mxw_params_free(old);
  paramCache.clear();
  visibleCache.clear();
  numOutputsCache.clear();
}
export function paramsFor(id, attrs) {
  let key;
  if (attrs === NO_ATTRS || Object.keys(attrs).length === 0) {
    key = id; // the common no-attribute call: no string building at all
    const p = paramCache.get(key);
    if (p !== undefined) return p;
    attrs = NO_ATTRS;
  }
  const { keys, vals } = attrStrings(id, attrs);
  if (key === undefined) {
    key = `${id}\u0000${keys.join('\u0001')}\u0000${vals.join('\u0001')}`;
    const p = paramCache.get(key);
    if (p !== undefined) return p;
  }
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_params_create(id, keys.length, a.strs(keys), a.strs(vals), out));
  const p = heap32()[out >>> 2];
  if (paramCache.size >= PARAM_CACHE_MAX) clearParamCache();
  paramCache.set(key, p);
  return p;
}
// Visible output count per parsed-params pointer.
const visibleCache = new Map();
function visibleOutputs(p) {
  let n = visibleCache.get(p);
  if (n === undefined) { n = M._mxw_params_num_visible_outputs(p); visibleCache.set(p, n); }
  return n;
}

// Runs op `id` on NDArray inputs; returns every output (hidden ones included) as NDArrays.
// `out` (an NDArray or array of them) receives the results in place.
export function invoke(id, inputs, attrs, out) {
  return invokeParams(id, paramsFor(id, attrs), inputs, out);
}
// The nd.* call: visible outputs only (hidden ones, e.g. BatchNorm's mean/var, are freed).
export function invokeVisible(id, inputs, attrs, out) {
  const p = paramsFor(id, attrs);
  const outs = invokeParams(id, p, inputs, out);
  const nvis = visibleOutputs(p);
  if (!out) for (let i = nvis; i < outs.length; i++) outs[i].dispose();
  return nvis === 1 ? outs[0] : outs.slice(0, nvis);
}
// An operator argument that is not a live NDArray: the error names the operator and the argument
// ("FullyConnected: input 0 (data) was disposed").
export function argError(id, i, x, kind) {
  const op = registry.ops[id] ?? { name: `operator #${id}`, inputs: [] };
  const names = kind === 'input' ? op.inputs ?? [] : [];
  const name = kind === 'output' ? 'out' : op.variadic ? names[0] : names[i];
  const what = `${op.name}: ${kind} ${i}${name ? ` (${name})` : ''}`;
  if (x instanceof NDArray) throw new MXNetError(`${what} was disposed`);
  const type = x === null ? 'null' : typeof x === 'object' ? x.constructor?.name ?? 'object' : typeof x;
  throw new MXNetError(`${what} must be an NDArray, got ${type}`);
}
// check() for calls that allocate: an out-of-memory error also says how much is held by arrays
// left to the garbage collector, which a synchronous loop never lets it free.
export function checkAlloc(status) {
  if (status === 0) return status;
  let msg = lastError();
  if (/out of memory/.test(msg) && gcState.bytes >= 16 * 1024 * 1024) {
    msg += ` (${(gcState.bytes / 1048576).toFixed(0)} MiB are held by ${gcState.arrays} arrays that were neither `
      + 'disposed nor created in mx.tidy(); dropped arrays are freed only after the JS garbage collector runs, '
      + 'which cannot happen before the running code yields to the event loop: dispose() them or use mx.tidy())';
  }
  throw new MXNetError(msg);
}
const numOutputsCache = new Map();
function invokeParams(id, p, inputs, out) {
  let nout = numOutputsCache.get(p);
  if (nout === undefined) { nout = M._mxw_params_num_outputs(p); numOutputsCache.set(p, nout); }
  const nin = inputs.length;
  const inP = args.reset().alloc(4 * (nin + nout + 1));
  const outP = inP + 4 * nin, noutP = outP + 4 * nout;
  const outs = out ? (Array.isArray(out) ? out : [out]) : null;
  let h32 = heap32();
  for (let i = 0; i < nin; i++) {
    const x = inputs[i];
    h32[(inP >>> 2) + i] = (x instanceof NDArray && x._h) || argError(id, i, x, 'input');
  }
  for (let i = 0; i < nout; i++) {
    const x = outs && outs[i];
    h32[(outP >>> 2) + i] = x ? (x instanceof NDArray && x._h) || argError(id, i, x, 'output') : 0;
  }
  h32[noutP >>> 2] = nout;
  checkAlloc(M._mxw_op_invoke(id, p, nin, inP, noutP, outP));
  h32 = heap32();
  const hs = new Array(nout); // read every handle before wrapping any
  for (let i = 0; i < nout; i++) hs[i] = h32[(outP >>> 2) + i];
  for (let i = 0; i < nout; i++) hs[i] = (outs && outs[i]) || new NDArray(hs[i]);
  // results live on the context of the inputs (MXNet's CPU contexts cpu(1), ... stay apart)
  const ctx = nin ? inputs[0]._ctx : undefined;
  if (ctx) for (let i = 0; i < nout; i++) if (!(outs && outs[i])) hs[i]._ctx = ctx;
  return hs;
}
export function invokeByName(name, inputs, attrs, out) { return invoke(opId(name), inputs, attrs, out); }
// Output shapes of an op for known input shapes, by the op's own C shape inference.
export function inferShapes(params, inShapes) {
  const a = args.reset();
  const flat = [];
  for (const s of inShapes) flat.push(s.length, ...s);
  const nout = M._mxw_params_num_outputs(params);
  const out = a.alloc(4 * nout * 11);
  check(M._mxw_op_infer_shape(params, inShapes.length, a.i32s(flat), out));
  const h = heap32();
  const res = [];
  let off = out >>> 2;
  for (let i = 0; i < nout; i++) {
    const nd = h[off];
    res.push(Array.from(h.subarray(off + 1, off + 1 + nd)));
    off += 1 + nd;
  }
  return res;
}
export function numVisibleOutputs(id, attrs) { return M._mxw_params_num_visible_outputs(paramsFor(id, attrs)); }
