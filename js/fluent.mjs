// fluent.mjs -- MXNet 1.x's fluent methods (x.exp(), x.sliceAxis(...), s.broadcastTo(...)) as data:
// the methods that python/mxnet/ndarray/ndarray.py and python/mxnet/symbol/symbol.py (1.9.1)
// define as "Convenience fluent method for <op>" with `self` as the op's data. Each becomes a
// camelCase method taking the nd./sym. function's arguments after self (positional inputs and
// attributes, then an options object). Names whose op is not in the C registry are skipped and
// reported by installFluent (tests/js/fluent_dunder.test.mjs lists them).

// NDArray: method name = op name.
export const NDARRAY_FLUENT = [
  'reshape_like', 'zeros_like', 'ones_like', 'broadcast_axes', 'repeat', 'pad', 'swapaxes', 'split',
  'split_v2', 'slice', 'slice_axis', 'slice_like', 'take', 'one_hot', 'pick', 'sort', 'topk', 'argsort',
  'argmax', 'argmax_channel', 'argmin', 'clip', 'abs', 'sign', 'shape_array', 'size_array', 'tile',
  'transpose', 'flip', 'depth_to_space', 'space_to_depth', 'sum', 'nansum', 'prod', 'nanprod', 'mean',
  'max', 'min', 'norm', 'round', 'rint', 'fix', 'floor', 'ceil', 'trunc', 'sin', 'cos', 'tan', 'arcsin',
  'arccos', 'arctan', 'degrees', 'radians', 'sinh', 'cosh', 'tanh', 'arcsinh', 'arccosh', 'arctanh',
  'exp', 'expm1', 'log', 'log10', 'log2', 'log1p', 'sqrt', 'rsqrt', 'cbrt', 'rcbrt', 'square',
  'reciprocal', 'relu', 'sigmoid', 'softmax', 'log_softmax', 'softmin',
];

// Symbol: the same list plus reshape, astype (the op `cast`), broadcast_to and broadcast_like
// (NDArray's own versions of the last two are methods with Python signatures, in ndarray.mjs).
export const SYMBOL_FLUENT = [
  'reshape', ['astype', 'cast'], 'broadcast_to', 'broadcast_like', ...NDARRAY_FLUENT,
];

// Methods both classes define with their own Python signature rather than as fluent ops
// (flatten(inplace), expand_dims(axis, inplace), squeeze(axis, inplace), diag(k), and NDArray's
// broadcast_to / broadcast_like); ndarray.mjs and symbol.mjs implement them by hand.
export const SIGNATURE_METHODS = ['flatten', 'expand_dims', 'squeeze', 'diag', 'broadcast_to', 'broadcast_like'];

export const camelCase = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

// Defines proto[camelCase(name)] = function (...args) { return ns[op](this, ...args); } for each
// entry whose op is registered; a method the class defines itself is kept. Returns the skipped
// Python names (op not registered).
const missingByProto = new Map();
export function installFluent(proto, table, ns) {
  const missing = [];
  for (const entry of table) {
    const [pyName, opName] = Array.isArray(entry) ? entry : [entry, entry];
    const method = camelCase(pyName);
    const fn = ns[opName];
    if (typeof fn !== 'function') { missing.push(pyName); continue; }
    if (Object.prototype.hasOwnProperty.call(proto, method)) continue;
    const m = function (...args) { return fn(this, ...args); };
    Object.defineProperty(m, 'name', { value: method });
    Object.defineProperty(proto, method, { value: m, writable: true, configurable: true, enumerable: false });
  }
  missingByProto.set(proto, missing);
  return missing;
}
// The Python fluent names skipped on a class's prototype because their op is not registered.
export const missingFluent = (proto) => (missingByProto.get(proto) ?? []).slice();
