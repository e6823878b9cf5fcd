// creation.mjs -- nd's array-creation helpers with Python's signatures (MXNet 1.9.1
// python/mxnet/ndarray/ndarray.py and ndarray/utils.py): zeros, ones, empty, full, arange,
// array, concatenate. Arguments bind through signature.mjs (signatures.mjs holds Python's
// parameter order and defaults): nd.zeros([2, 3], {dtype: 'int32'}), nd.arange(1, 10, 2),
// nd.arange({start: 1, stop: 10, step: 2}), nd.full([2], 7), nd.zeros({shape: [2], ctx: mx.cpu(1)}).
// A given context is recorded on the new array (context.mjs).
import { MXNetError, DTYPE_NAMES } from './core.mjs';
import { NDArray, array as arrayFromData, empty as emptyArray, invokeByName, dtypeFlag } from './ndarray.mjs';
import { bindArgs } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { onContext } from './context.mjs';

const bind = (name, args) => bindArgs(SIGNATURES[name], args);

// A dtype given as a name, a typed-array constructor or a flag -> MXNet's dtype name.
export function dtypeArg(dtype) { return DTYPE_NAMES[dtypeFlag(dtype)]; }
// A shape given as an int or a list of ints -> a list.
export function shapeArg(shape) { return Array.isArray(shape) || ArrayBuffer.isView(shape) ? Array.from(shape) : [shape]; }

// A shape for a new array, checked before it reaches the C API (which takes int32 dims): every
// dim a non-negative integer below 2^31, and at most 2^31 - 1 elements, as MXNet 1.9.1's
// _new_alloc_handle refuses more ("Size of tensor you are trying to allocate is larger than 2^31
// elements", releases being built without USE_INT64_TENSOR_SIZE). No dim can wrap.
const INT32_MAX = 2 ** 31 - 1;
export function checkedShape(fname, shape) {
  const s = shapeArg(shape);
  const fmt = () => `(${s.join(', ')}${s.length === 1 ? ',' : ''})`;
  s.forEach((d, i) => {
    if (!Number.isInteger(d) || d < 0) {
      throw new MXNetError(`${fname}: shape ${fmt()}: dimension ${i} is ${String(d)}, not a non-negative integer`);
    }
    if (d > INT32_MAX) throw new MXNetError(`${fname}: shape ${fmt()}: dimension ${i} is ${d}, more than 2^31 - 1`);
  });
  const size = s.reduce((n, d) => n * d, 1);
  if (size > INT32_MAX) {
    throw new MXNetError(`${fname}: shape ${fmt()} has ${size} elements: the size of a tensor is limited to 2^31 - 1 elements (MXNet 1.9.1 without USE_INT64_TENSOR_SIZE)`);
  }
  return s;
}
// One context (Python's ctx=): a list is an error where Python takes one Context.
export function oneContext(fname, ctx) {
  if (Array.isArray(ctx)) throw new MXNetError(`${fname}: argument 'ctx' must be one Context, got a list`);
  return ctx;
}

// Only dense storage exists here; 'default' is Python's name for it.
function checkStype(fname, stype) {
  if (stype !== null && stype !== 'default') {
    throw new MXNetError(`${fname}: stype '${stype}' is not supported (only dense 'default' storage)`);
  }
}

function fill(fname, opName, a, extra = {}) {
  const ctx = oneContext(fname, a.ctx);
  const res = invokeByName(opName, [], { shape: shapeArg(a.shape), dtype: dtypeArg(a.dtype ?? 'float32'), ...extra })[0];
  return onContext(res, ctx);
}

// zeros(shape, ctx=None, dtype=None, stype=None): dtype None is float32.
export function zeros(...args) {
  const a = bind('nd.zeros', args);
  checkStype('nd.zeros', a.stype);
  return fill('nd.zeros', '_zeros', a);
}

// ones(shape, ctx=None, dtype=None)
export function ones(...args) {
  return fill('nd.ones', '_ones', bind('nd.ones', args));
}

// empty(shape, ctx=None, dtype=None, stype=None): uninitialised in MXNet; here the memory is
// whatever the allocator gives.
export function empty(...args) {
  const a = bind('nd.empty', args);
  checkStype('nd.empty', a.stype);
  const ctx = oneContext('nd.empty', a.ctx);
  return onContext(emptyArray(checkedShape('nd.empty', a.shape), dtypeArg(a.dtype ?? 'float32')), ctx);
}

// full(shape, val, ctx=None, dtype=float32, out=None): with `out`, out's elements are all set
// to val (its own shape and dtype are kept, as Python's out[:] = val) and out is returned.
export function full(...args) {
  const a = bind('nd.full', args);
  if (a.out) {
    const tmp = invokeByName('_full', [], { shape: a.out.shape, dtype: a.out.dtype, value: a.val })[0];
    tmp.copyto(a.out);
    tmp.dispose();
    return a.out;
  }
  return fill('nd.full', '_full', a, { value: a.val });
}

// arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=float32):
// arange(n) is [0, n). infer_range is deprecated in MXNet 1.9.1 (a warning) and ignored.
export function arange(...args) {
  const a = bind('nd.arange', args);
  if (a.inferRange !== null) console.warn('nd.arange: `infer_range` argument has been deprecated');
  const ctx = oneContext('nd.arange', a.ctx);
  const res = invokeByName('_arange', [], {
    start: a.start, stop: a.stop, step: a.step, repeat: a.repeat, infer_range: false, dtype: dtypeArg(a.dtype ?? 'float32'),
  })[0];
  return onContext(res, ctx);
}

// array(source_array, ctx=None, dtype=None, {shape}): nested arrays, a typed array (needs `shape`
// unless 1-D), an NDArray (copied) or a number. js/ndarray.mjs does the conversion.
//
// Values going to an integer or bool dtype convert by the one rule of Cast (csrc/core/dtype.c:
// static_cast as MXNet computes it on x86-64, 1e20 -> int32 is -2147483648), not by JS's modular
// ToInt32: the source is built in its own dtype (float64 for JS numbers) and cast. MXNet's
// nd.array converts a numpy array the same way (numpy's astype is the same C cast); a JS array
// is taken as such an array of float64, so nd.array(v, {dtype}) is nd.array(v, float64).astype(dtype).
const INT_DTYPES = new Set(['uint8', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'bool']);
const TYPED_DTYPES = new Map([
  [Float32Array, 'float32'], [Float64Array, 'float64'], [Uint8Array, 'uint8'], [Int8Array, 'int8'],
  [Int16Array, 'int16'], [Uint16Array, 'uint16'], [Int32Array, 'int32'], [Uint32Array, 'uint32'],
  [BigInt64Array, 'int64'], [BigUint64Array, 'uint64'],
]);
export function array(...args) {
  const a = bind('nd.array', args);
  const ctx = oneContext('nd.array', a.ctx);
  const opts = {};
  if (a.dtype !== null) opts.dtype = dtypeArg(a.dtype);
  if (a.shape !== null) opts.shape = checkedShape('nd.array', a.shape);
  const src = a.sourceArray;
  if (opts.dtype && INT_DTYPES.has(opts.dtype) && !(src instanceof NDArray)) {
    const own = ArrayBuffer.isView(src) ? TYPED_DTYPES.get(src.constructor) : 'float64';
    if (own && own !== opts.dtype) {
      const wide = arrayFromData(src, { ...opts, dtype: own });
      try {
        return onContext(wide.astype(opts.dtype), ctx);
      } finally {
        wide.dispose();
      }
    }
  }
  return onContext(arrayFromData(src, opts), ctx);
}

// concatenate(arrays, axis=0, always_copy=True): the arrays joined along axis (they agree in
// every other dimension and in dtype); with always_copy false a single array is returned
// itself. The result is on arrays[0]'s context.
export function concatenate(...args) {
  const a = bind('nd.concatenate', args);
  const arrays = Array.from(a.arrays);
  if (arrays.length === 0) throw new MXNetError('nd.concatenate: arrays must be a non-empty list of NDArrays');
  arrays.forEach((x, i) => {
    if (!(x instanceof NDArray)) throw new MXNetError(`nd.concatenate: arrays[${i}] must be an NDArray`);
  });
  if (!a.alwaysCopy && arrays.length === 1) return arrays[0];
  const first = arrays[0];
  const nd = first.ndim;
  const axis = a.axis < 0 ? a.axis + nd : a.axis;
  if (axis < 0 || axis >= nd) {
    throw new MXNetError(`nd.concatenate: axis ${a.axis} is out of range for arrays of ${nd} dimensions`);
  }
  const fmt = (s) => `(${s.join(', ')})`;
  arrays.forEach((x, i) => {
    const same = x.ndim === nd && x.shape.every((d, k) => k === axis || d === first.shape[k]);
    if (!same) {
      throw new MXNetError(`nd.concatenate: arrays[${i}] has shape ${fmt(x.shape)}, which does not match arrays[0]'s ${fmt(first.shape)} outside axis ${axis}`);
    }
    if (x.dtype !== first.dtype) {
      throw new MXNetError(`nd.concatenate: arrays[${i}] has dtype ${x.dtype}, arrays[0] has ${first.dtype}`);
    }
  });
  const res = invokeByName('Concat', arrays, { dim: axis, num_args: arrays.length })[0];
  return onContext(res, first._ctx ?? first.context);
}
