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
  return onContext(emptyArray(shapeArg(a.shape), dtypeArg(a.dtype ?? 'float32')), ctx);
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
export function array(...args) {
  const a = bind('nd.array', args);
  const ctx = oneContext('nd.array', a.ctx);
  const opts = {};
  if (a.dtype !== null) opts.dtype = dtypeArg(a.dtype);
  if (a.shape !== null) opts.shape = shapeArg(a.shape);
  return onContext(arrayFromData(a.sourceArray, opts), ctx);
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
