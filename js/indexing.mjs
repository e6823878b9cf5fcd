// indexing.mjs -- NDArray indexing as MXNet 1.9.1's NDArray.__getitem__ / __setitem__
// (js-api.md rule 10): Python's x[k1, k2, ...] is x.get(k1, k2, ...) and x[k1, ...] = v is
// x.set(k1, ..., v), in place (x[:] = v is x.set(v)).
//
// Keys: an integer (negative from the end); a slice a:b:c as the array [a, b, c] with null for an
// omitted part ([] is `:`, [1] is `1:`, [null, null, 2] is `::2`); null (a new axis); '...'; an
// NDArray of indices of any integer or float dtype (advanced indexing; several broadcast together
// as in numpy). As in MXNet:
//  - basic indexing (integers, slices, null, '...') returns a view sharing memory when the
//    selected elements are contiguous in memory (_basic_indexing_slice_is_contiguous), else a
//    copy made by the `slice` operator; x.get(i) and x.get([a, b]) (step 1) are always views,
//    x.get() and x.get([]) return x itself; a result with no axes left has shape (1,);
//  - advanced indexing builds one (M, ...) index array (_get_index_nd) and runs `gather_nd`;
//  - set writes through `_full` / copy (the whole array), `_slice_assign_scalar` and
//    `_slice_assign` (a box), or `_scatter_set_nd` (advanced), each with out = x.
// Deliberate differences, all where MXNet 1.9.1 errs or misplaces axes: x.get([3, 1]) is empty
// (MXNet's first-axis fast path raises, its general path returns the empty view), a new axis
// after an adjacent advanced block lands where numpy puts it, advanced indices are
// bounds-checked (MXNet's scatter kernel does not check), and an out-of-range integer in a full
// tuple of integers names its real axis. Nothing is changed by a call that throws.
import { M, MXNetError, args, check, heap32 } from './core.mjs';
import { NDArray, array, invokeByName } from './ndarray.mjs';

// ---- small helpers -------------------------------------------------------------------------------
const prod = (s) => s.reduce((a, b) => a * b, 1);
const shapeStr = (s) => (s.length === 1 ? `(${s[0]},)` : `(${s.join(', ')})`);
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

function describe(k) {
  if (k === undefined) return 'undefined';
  if (typeof k === 'string') return `'${k}'`;
  if (typeof k === 'function') return 'a function';
  if (Array.isArray(k)) return `[${k.map((e) => (e === null ? 'null' : describe(e))).join(', ')}]`;
  if (k instanceof NDArray) return `an NDArray of shape ${shapeStr(k.shape)} and dtype ${k.dtype}`;
  if (ArrayBuffer.isView(k)) return `a ${k.constructor.name}`;
  if (typeof k === 'object') return `an object (${Object.prototype.toString.call(k)})`;
  return String(k);
}

// A view of `count = prod(shape)` elements of `base` starting at flat element `offset`; it shares
// base's storage (mxw_ndarray_view_range checks the range).
function viewRange(base, offset, shape) {
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_ndarray_view_range(base.handle, offset, shape.length, a.i32s(shape), out));
  return new NDArray(heap32()[out >>> 2]);
}
const reshapeView = (x, shape) => viewRange(x, 0, shape);

// Runs fn(temps) and disposes every array pushed onto temps afterwards (also on error).
function withTemps(fn) {
  const temps = [];
  try {
    return fn(temps);
  } finally {
    for (const t of temps) t.dispose();
  }
}

// ---- keys ------------------------------------------------------------------------------------------
// Parsed keys: {t: 'int', v}, {t: 'slice', start, stop, step} (null = omitted), {t: 'none'},
// {t: 'ell'}, {t: 'arr', nd}.
function keyError(k, pos, why) {
  return new MXNetError(
    `NDArray indexing: key ${describe(k)} at position ${pos} ${why}; a key is an integer, a slice ` +
      `[start, stop, step] (null for an omitted part), null (a new axis), '...' or an NDArray of indices`);
}

function parseKey(k, pos) {
  if (typeof k === 'number') {
    if (!Number.isSafeInteger(k)) throw keyError(k, pos, 'is not an integer');
    return { t: 'int', v: k };
  }
  if (typeof k === 'bigint') return { t: 'int', v: Number(k) };
  if (k === null) return { t: 'none' };
  if (k === '...') return { t: 'ell' };
  if (Array.isArray(k)) {
    if (k.length > 3) throw keyError(k, pos, 'has more than 3 parts for a slice (write an index list as an NDArray)');
    const part = (i) => {
      const v = k[i];
      if (v === null || v === undefined) return null;
      if (typeof v === 'bigint') return Number(v);
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
        throw keyError(k, pos, `has a slice part ${describe(v)} that is neither an integer nor null`);
      }
      return v;
    };
    const s = { t: 'slice', start: part(0), stop: part(1), step: part(2) };
    if (s.step === 0) throw new MXNetError(`NDArray indexing: slice step cannot be zero (key ${describe(k)} at position ${pos})`);
    return s;
  }
  if (k instanceof NDArray) {
    if (k.dtype === 'bool') {
      throw keyError(k, pos, 'is a boolean array: boolean indexing is not supported by MXNet NDArray (legacy mode)');
    }
    if (k.ndim === 0) return { t: 'int', v: Math.trunc(k.item()) }; // as MXNet: int(idx.item())
    return { t: 'arr', nd: k };
  }
  if (typeof k === 'boolean') throw keyError(k, pos, 'is a boolean: boolean indexing is not supported by MXNet NDArray (legacy mode)');
  throw keyError(k, pos, 'has a type that cannot index an NDArray');
}

const isFullSlice = (k) => k.t === 'slice' && k.start === null && k.stop === null && k.step === null;
const FULL = Object.freeze({ t: 'slice', start: null, stop: null, step: null });

// indexing_key_expand_implicit_axes: '...' (or the missing trailing axes) becomes full slices.
function expandKey(keys, ndim) {
  let ell = -1, numNone = 0;
  const rest = [];
  keys.forEach((k, i) => {
    if (k.t === 'ell') {
      if (ell >= 0) throw new MXNetError(`NDArray indexing: an index can only have a single ellipsis ('...'), found another at position ${i}`);
      ell = rest.length;
    } else {
      if (k.t === 'none') numNone++;
      rest.push(k);
    }
  });
  if (ell < 0) ell = rest.length;
  const fill = Math.max(0, ndim + numNone - rest.length);
  return [...rest.slice(0, ell), ...Array(fill).fill(FULL), ...rest.slice(ell)];
}

function checkNumIndices(keyNd, ndim) {
  if (keyNd.length > ndim) {
    throw new MXNetError(`NDArray indexing: too many indices (${keyNd.length}) for array with ${ndim} dimensions`);
  }
}
function checkIntIndex(v, axis, n) {
  if (!(v >= -n && v < n)) {
    throw new MXNetError(`NDArray indexing: index ${v} is out of bounds for axis ${axis} with size ${n}`);
  }
}

// Python's slice(start, stop, step).indices(n) plus the number of elements.
function sliceIndices(s, n) {
  const step = s.step ?? 1;
  const lower = step < 0 ? -1 : 0, upper = step < 0 ? n - 1 : n;
  const clampEnd = (v, dflt) => {
    if (v === null) return dflt;
    if (v < 0) return Math.max(v + n, lower);
    return Math.min(v, upper);
  };
  const start = clampEnd(s.start, step < 0 ? upper : lower);
  const stop = clampEnd(s.stop, step < 0 ? lower : upper);
  const len = step > 0 ? (stop > start ? Math.floor((stop - start - 1) / step) + 1 : 0)
    : (start > stop ? Math.floor((start - stop - 1) / -step) + 1 : 0);
  return { start, stop, step, len };
}

// _int_to_slice: the slice that selects the same element as integer k (-1 -> [-1:]).
const intToSlice = (k) => (k === -1 ? { t: 'slice', start: -1, stop: null, step: null } : { t: 'slice', start: k, stop: k + 1, step: null });

// Where the new axes (null keys) go in the result of basic indexing: after the non-integer keys
// before them (_new_axes_after_basic_indexing).
function newAxesAfterBasic(key) {
  const out = [];
  let pos = 0;
  for (const k of key) {
    if (k.t === 'none') out.push(pos);
    if (k.t !== 'int') pos++;
  }
  return out;
}

// ---- basic indexing ------------------------------------------------------------------------------------
// _basic_indexing_slice_is_contiguous: from the last axis back, once an axis takes a proper subset
// every earlier axis must take at most one element; a step other than 1 over several elements
// breaks contiguity.
function isContiguous(ranges, shape) {
  const total = prod(ranges.map((r) => r.len));
  if (total === 0 || total === 1) return true;
  let subset = false;
  for (let ax = shape.length - 1; ax >= 0; ax--) {
    const { len, step } = ranges[ax];
    if (len === 0) return true;
    if (len > 1 && (step > 1 || step < 0)) return false;
    if (subset) {
      if (len > 1) return false;
    } else if (len < shape[ax]) {
      subset = true;
    }
  }
  return true;
}

// The basic key's parts: integer axes, slices per axis and their ranges, the final shape.
function basicPlan(x, key) {
  const shape = x.shape, ndim = shape.length;
  const keyNd = key.filter((k) => k.t !== 'none');
  checkNumIndices(keyNd, ndim);
  const intAxes = [];
  keyNd.forEach((k, ax) => {
    if (k.t === 'int') {
      checkIntIndex(k.v, ax, shape[ax]);
      intAxes.push(ax);
    }
  });
  const slc = keyNd.map((k) => (k.t === 'int' ? intToSlice(k.v) : k));
  const ranges = slc.map((s, ax) => sliceIndices(s, shape[ax]));
  const sliced = ranges.map((r) => r.len);
  const finalShape = sliced.filter((_, ax) => !intAxes.includes(ax));
  for (const ax of newAxesAfterBasic(key)) finalShape.splice(ax, 0, 1);
  if (finalShape.length === 0) finalShape.push(1);
  return { shape, slc, ranges, sliced, intAxes, finalShape };
}

const keepNone = (slc) => ({
  begin: slc.map((s) => s.start), end: slc.map((s) => s.stop), step: slc.map((s) => s.step),
});

function getBasic(x, key) {
  const { shape, slc, ranges, finalShape } = basicPlan(x, key);
  if (isContiguous(ranges, shape)) {
    // _basic_indexing_contiguous_flat_begin_end: the flat offset of the first selected element
    let begin = 0;
    for (let ax = 0; ax < shape.length; ax++) {
      if (ranges[ax].len === 0) { begin = 0; break; }
      begin = begin * shape[ax] + ranges[ax].start;
    }
    return viewRange(x, begin, finalShape);
  }
  const copy = invokeByName('slice', [x], keepNone(slc))[0];
  try {
    return reshapeView(copy, finalShape);
  } finally {
    copy.dispose();
  }
}

// __getitem__'s fast path for one integer: MXNDArrayAt, a view of one row ((1,) for 1-D).
function at(x, k) {
  const shape = x.shape, n = shape[0];
  if (k > n - 1 || k < -n) {
    throw new MXNetError(`NDArray indexing: index ${k} is out of bounds for axis 0 with size ${n}`);
  }
  if (k < 0) k += n;
  const row = shape.slice(1);
  return viewRange(x, k * prod(row), shape.length > 1 ? row : [1]);
}

// __getitem__'s fast path for a step-1 slice of the first axis: MXNDArraySlice, a view.
function sliceRows(x, start, stop) {
  const shape = x.shape, n = shape[0];
  const clamp = (v, dflt) => (v === null ? dflt : v < 0 ? Math.max(v + n, 0) : Math.min(v, n));
  const b = clamp(start, 0), e = Math.max(b, clamp(stop, n));
  const row = shape.slice(1);
  return viewRange(x, b * prod(row), [e - b, ...row]);
}

// ---- advanced indexing ------------------------------------------------------------------------------------
const isAdvanced = (k) => k.t === 'int' || k.t === 'arr';

// numpy's broadcast of several shapes (right-aligned); error naming them all.
function broadcastShapes(shapes) {
  const nd = Math.max(0, ...shapes.map((s) => s.length));
  const out = Array(nd).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const j = nd - s.length + i, d = s[i];
      if (out[j] === 1) out[j] = d;
      else if (d !== 1 && d !== out[j]) {
        throw new MXNetError(
          `NDArray indexing: shape mismatch: indexing arrays could not be broadcast together with shapes ${shapes.map(shapeStr).join(' ')}`);
      }
    }
  }
  return out;
}

// One key of the (permuted) advanced key as integer index values (_advanced_index_to_array),
// checked against the axis size and made non-negative.
function indexValues(k, n, axis) {
  if (k.t === 'slice') {
    const r = sliceIndices(k, n);
    return { shape: [r.len], data: Int32Array.from({ length: r.len }, (_, i) => r.start + i * r.step) };
  }
  let raw, shape;
  if (k.t === 'int') {
    raw = [k.v];
    shape = [1];
  } else {
    raw = k.nd.toTypedArray();
    shape = k.nd.shape;
  }
  const data = new Int32Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const v = Math.trunc(Number(raw[i])); // astype(int): float indices truncate
    checkIntIndex(Number.isNaN(v) ? raw[i] : v, axis, n);
    data[i] = v < 0 ? v + n : v;
  }
  return { shape, data };
}

// Materialises src (its shape left-padded with 1s to `target`'s rank, or given padded) at target.
function broadcastData(srcShape, src, target) {
  const nd = target.length;
  const shp = [...Array(nd - srcShape.length).fill(1), ...srcShape];
  const strides = Array(nd).fill(0);
  for (let i = nd - 1, acc = 1; i >= 0; i--) {
    strides[i] = shp[i] === 1 ? 0 : acc;
    acc *= shp[i];
  }
  const out = new Int32Array(prod(target));
  const idx = Array(nd).fill(0);
  for (let o = 0; o < out.length; o++) {
    let off = 0;
    for (let i = 0; i < nd; i++) off += idx[i] * strides[i];
    out[o] = src[off];
    for (let i = nd - 1; i >= 0; i--) {
      if (++idx[i] < target[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// _get_index_nd: the (M, ...bcast) int32 index array for gather_nd / _scatter_set_nd, the index
// shape and where the new axes go in the result.
function advancedPlan(x, key) {
  const shape = x.shape, ndim = shape.length;
  const keyNd = key.filter((k) => k.t !== 'none');
  checkNumIndices(keyNd, ndim);
  const advAxs = [], advAxsNd = [], nonAdvAxsNd = [];
  key.forEach((k, i) => { if (isAdvanced(k)) advAxs.push(i); });
  keyNd.forEach((k, i) => (isAdvanced(k) ? advAxsNd : nonAdvAxsNd).push(i));
  const adjacent = advAxs.every((a, i) => i === 0 || a === advAxs[i - 1] + 1);
  // trailing full slices are left to gather_nd's implicit trailing axes
  let nShort = keyNd.length;
  while (nShort > 0 && isFullSlice(keyNd[nShort - 1])) nShort--;

  let permut, blockAxes;
  if (adjacent) {
    permut = Array.from({ length: ndim }, (_, i) => i);
    blockAxes = advAxsNd;
  } else { // the advanced block moves to the front
    permut = [...advAxsNd, ...nonAdvAxsNd];
    blockAxes = advAxsNd.map((_, i) => i);
  }
  const permShort = permut.filter((ax) => ax < nShort); // dropped axes are trailing non-advanced ones
  const arrays = permShort.map((ax) => indexValues(keyNd[ax], shape[ax], ax));

  // _broadcast_advanced_indices
  const blockShape = broadcastShapes(blockAxes.map((ax) => arrays[ax].shape));
  const lead = blockAxes[0], last = blockAxes[blockAxes.length - 1];
  const trail = arrays.length - (last + 1), delta = blockShape.length - blockAxes.length;
  const bshape = [
    ...arrays.slice(0, lead).map((a) => a.shape[0]), ...blockShape, ...arrays.slice(last + 1).map((a) => a.shape[0]),
  ];
  const rows = arrays.map((a, ax) => {
    let shp;
    if (blockAxes.includes(ax)) {
      const padded = [...Array(blockShape.length - a.shape.length).fill(1), ...a.shape];
      shp = [...Array(lead).fill(1), ...padded, ...Array(trail).fill(1)];
    } else {
      shp = Array(bshape.length).fill(1);
      shp[ax < lead ? ax : ax + delta] = a.shape[0];
    }
    return broadcastData(shp, a.data, bshape);
  });
  // stacked in the original axis order
  const m = permShort.length, n = prod(bshape);
  const data = new Int32Array(m * n);
  permShort.forEach((ax, i) => data.set(rows[i], ax * n));

  // new axes: after the entries before them; after the advanced block (numpy) when the block
  // stays in place, all after it when it moved to the front
  const advNdim = blockShape.length;
  const newAxes = [];
  let pos = adjacent ? 0 : advNdim;
  key.forEach((k, i) => {
    if (k.t === 'none') newAxes.push(pos + (adjacent && i > advAxs[advAxs.length - 1] ? advNdim : 0));
    if (!isAdvanced(k)) pos++;
  });
  return { m, bshape, data, newAxes, outShape: [...bshape, ...shape.slice(m)] };
}

function indexArray(plan) {
  return array(plan.data, { shape: [plan.m, ...plan.bshape], dtype: 'int32' });
}

function getAdvanced(x, key) {
  const plan = advancedPlan(x, key);
  return withTemps((temps) => {
    const idx = indexArray(plan);
    temps.push(idx);
    const out = invokeByName('gather_nd', [x, idx], {})[0];
    if (!plan.newAxes.length) return out;
    temps.push(out);
    const finalShape = out.shape;
    for (const ax of plan.newAxes) finalShape.splice(ax, 0, 1);
    return reshapeView(out, finalShape);
  });
}

// ---- get -----------------------------------------------------------------------------------------------------
function getItem(x, rawKeys) {
  const shape = x.shape, ndim = shape.length;
  if (rawKeys.length === 0) return x; // x[()]
  const keys = rawKeys.map(parseKey);
  if (keys.length === 1) { // __getitem__'s fast paths
    const k = keys[0];
    if (isFullSlice(k)) return x;
    if (ndim > 0 && k.t === 'int') return at(x, k.v);
    if (ndim > 0 && k.t === 'slice' && (k.step === null || k.step === 1)) {
      return k.start === null && k.stop === null ? x : sliceRows(x, k.start, k.stop);
    }
  }
  const key = expandKey(keys, ndim);
  if (key.length === 0) throw new MXNetError('NDArray indexing: indexing key cannot be an empty tuple');
  return key.some((k) => k.t === 'arr') ? getAdvanced(x, key) : getBasic(x, key);
}

// ---- set -----------------------------------------------------------------------------------------------------
const isNumber = (v) => typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint';

// _prepare_value_nd: the value as an array of x's dtype broadcast to `bshape` (new-axis dims of
// the value squeezed first, then surplus leading 1s). New arrays go onto temps.
function prepareValue(x, value, bshape, squeezeAxes, temps) {
  let v;
  if (isNumber(value)) {
    v = invokeByName('_full', [], { shape: bshape, value: Number(value), dtype: x.dtype })[0];
    temps.push(v);
    return v;
  }
  if (value instanceof NDArray) {
    v = value;
    if (v.dtype !== x.dtype) temps.push((v = v.astype(x.dtype)));
  } else if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    try {
      v = array(value, { dtype: x.dtype });
    } catch (e) {
      throw new MXNetError(`NDArray.set: cannot assign ${describe(value)}: ${e.message}`);
    }
    temps.push(v);
  } else {
    throw new MXNetError(
      `NDArray.set: cannot assign ${describe(value)}; the value is a number, an NDArray or nested arrays of numbers`);
  }
  let vs = v.shape;
  const reshapeTo = (s) => { temps.push((v = reshapeView(v, s))); vs = s; };
  if (squeezeAxes.length && vs.length > bshape.length) {
    const axes = squeezeAxes.filter((ax) => ax < vs.length);
    for (const ax of axes) {
      if (vs[ax] !== 1) {
        throw new MXNetError(`NDArray.set: cannot squeeze axis ${ax} of the value of shape ${shapeStr(vs)} (for a new axis of the key): its size is not 1`);
      }
    }
    reshapeTo(vs.filter((_, i) => !axes.includes(i)));
  }
  if (vs.length > bshape.length) {
    let drop = 0;
    while (drop < vs.length - bshape.length && vs[drop] === 1) drop++;
    if (drop) reshapeTo(vs.slice(drop));
  }
  if (!sameShape(vs, bshape)) {
    const padded = [...Array(Math.max(0, bshape.length - vs.length)).fill(1), ...vs];
    const ok = vs.length <= bshape.length && padded.every((d, i) => d === bshape[i] || d === 1);
    if (!ok) {
      throw new MXNetError(`NDArray.set: cannot assign a value of shape ${shapeStr(vs)} to the indexed region of shape ${shapeStr(bshape)}: the shapes do not broadcast`);
    }
    if (!sameShape(padded, vs)) reshapeTo(padded);
    if (prod(bshape) > 0) temps.push((v = invokeByName('broadcast_to', [v], { shape: bshape })[0]));
  }
  return v;
}

function setItem(x, rawKeys, value) {
  const shape = x.shape, ndim = shape.length;
  const keys = rawKeys.map(parseKey);
  if (ndim === 0) {
    if (!(keys.length === 0 || (keys.length === 1 && isFullSlice(keys[0])))) {
      throw new MXNetError('NDArray.set: a 0-d array can only be set with no key (x.set(v)) or [] (x[:] = v)');
    }
    if (isNumber(value)) { // _full cannot make shape () (unknown in MXNet 1.x): fill a (1,) view
      withTemps((temps) => {
        const v = reshapeView(x, [1]);
        temps.push(v);
        invokeByName('_full', [], { shape: [1], value: Number(value), dtype: x.dtype }, v);
      });
    } else if (value instanceof NDArray && value.size === 1) {
      if (value !== x) value.copyto(x);
    } else {
      throw new MXNetError(`NDArray.set: cannot set a 0-d array to ${describe(value)} (setting an array element with a sequence)`);
    }
    return x;
  }
  if (x.size === 0) return x;
  const key = expandKey(keys, ndim);
  if (key.some((k) => k.t === 'arr')) {
    setAdvanced(x, key, value);
  } else {
    setBasic(x, key, value);
  }
  return x;
}

function setBasic(x, key, value) {
  const { shape, slc, ranges, sliced, intAxes } = basicPlan(x, key);
  const whole = sameShape(sliced, shape) && ranges.every((r) => r.step > 0);
  const newAxes = newAxesAfterBasic(key);
  const { begin, end, step } = keepNone(slc);
  if (isNumber(value)) {
    if (whole) invokeByName('_full', [], { shape, value: Number(value), dtype: x.dtype }, x);
    else invokeByName('_slice_assign_scalar', [x], { scalar: Number(value), begin, end, step }, x);
    return;
  }
  if (whole && value === x) return; // x[:] = x
  let bshape = sliced.filter((_, ax) => !intAxes.includes(ax)); // _drop_int_axes
  if (bshape.length === 0) bshape = [1];
  withTemps((temps) => {
    let v = prepareValue(x, value, bshape, newAxes, temps);
    if (prod(sliced) === 0) return;
    if (!sameShape(v.shape, sliced)) temps.push((v = reshapeView(v, sliced)));
    if (whole) v.copyto(x);
    else invokeByName('_slice_assign', [x, v], { begin, end, step }, x);
  });
}

function setAdvanced(x, key, value) {
  const plan = advancedPlan(x, key);
  withTemps((temps) => {
    const v = prepareValue(x, value, plan.outShape, plan.newAxes, temps);
    if (prod(plan.outShape) === 0) return;
    const idx = indexArray(plan);
    temps.push(idx);
    invokeByName('_scatter_set_nd', [x, v, idx], { shape: x.shape }, x);
  });
}

// ---- the methods ---------------------------------------------------------------------------------------------
function get(...keys) {
  return getItem(this, keys);
}
function set(...keysAndValue) {
  if (keysAndValue.length === 0) throw new MXNetError('NDArray.set(...keys, value) needs a value (x[:] = v is x.set(v))');
  const value = keysAndValue.pop();
  if (value === undefined) throw new MXNetError('NDArray.set: the value is undefined');
  return setItem(this, keysAndValue, value);
}
for (const [name, fn] of [['get', get], ['set', set]]) {
  Object.defineProperty(NDArray.prototype, name, { value: fn, writable: true, configurable: true, enumerable: false });
}
