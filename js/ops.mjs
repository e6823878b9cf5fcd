// ops.mjs -- the nd.* namespace, generated at load from the C operator registry (names and
// aliases; nothing is listed by hand), and the argument rules shared with sym.*.
//
// As MXNet's generated Python functions `op(in1=None, ..., attr1=_Null, ..., out=None, name=None)`:
// positions below the op's number of declared inputs are input slots (an array or null), later
// positions are its attributes in signature order (the registry's `inputs`, then `attrs`, as
// dist/OPS.md lists them), then one optional trailing plain object names any attribute or input
// (plus `out`, `name`; `attr` for sym). Variadic ops (Concat, add_n, stack) take every positional
// as an input and their attributes in the options object only.
//   nd.sum(x, 1)  nd.clip(x, 0, 1)  nd.FullyConnected(x, w, b, {num_hidden: 10})
//   nd.FullyConnected({data: x, weight: w, num_hidden: 3, no_bias: true})
import { MXNetError, registry } from './core.mjs';
import { NDArray, invokeVisible } from './ndarray.mjs';
import { installFluent, NDARRAY_FLUENT } from './fluent.mjs';

const OBJECT_PROTO = Object.prototype;
// Only a plain object (prototype Object.prototype or null) is an options object.
export function isOptions(v) {
  if (v === null || typeof v !== 'object') return false;
  const p = Object.getPrototypeOf(v);
  return p === OBJECT_PROTO || p === null;
}

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return v.constructor && v.constructor.name ? `a ${v.constructor.name}` : 'an object';
  return `${typeof v} ${String(v)}`;
}

// Per-op tables, computed once: where each name goes.
const specs = [];
export function callSpec(id) {
  let s = specs[id];
  if (s) return s;
  const op = registry.ops[id];
  const inputPos = Object.create(null);
  op.inputs.forEach((n, i) => { inputPos[n] = i; });
  const attrPos = Object.create(null);
  op.attrs.forEach((a, i) => { attrPos[a.name] = i; });
  // keys of the options object that are not attributes (need taking out before the C call)
  const ndSpecial = Object.create(null);
  const symSpecial = Object.create(null);
  for (const n of op.inputs) { ndSpecial[n] = true; symSpecial[n] = true; }
  for (const n of ['out', 'name']) ndSpecial[n] = true;
  for (const n of ['out', 'name', 'attr']) symSpecial[n] = true;
  s = {
    op,
    id,
    variadic: !!op.variadic,
    nIn: op.variadic ? Infinity : op.inputs.length,
    attrNames: op.attrs.map((a) => a.name),
    inputPos,
    attrPos,
    ndSpecial,
    symSpecial,
    hasNumArgs: op.variadic && attrPos.num_args !== undefined,
  };
  specs[id] = s;
  return s;
}

// The general split of a call's arguments (sym.*, and nd.* off its fast path):
// -> {inputs (null where absent), attrs, out, name, attr}. `Kind` is NDArray or Symbol.
export function parseCall(spec, a, Kind, kindName) {
  const { op, variadic, nIn, attrNames, inputPos } = spec;
  let n = a.length;
  let opts;
  if (n > 0 && isOptions(a[n - 1])) opts = a[--n];
  let inputs;
  const attrs = {};
  let out, name, attr;
  if (variadic) {
    inputs = n === 1 && Array.isArray(a[0]) ? a[0].slice() : a.slice(0, n);
  } else {
    const nPos = n < nIn ? n : nIn;
    inputs = a.slice(0, nPos);
    if (n - nIn > attrNames.length) {
      throw new MXNetError(`Operator ${op.name}: takes at most ${nIn + attrNames.length} positional arguments `
        + `(${[...op.inputs, ...attrNames].join(', ')}), got ${n}`);
    }
    for (let i = nIn; i < n; i++) attrs[attrNames[i - nIn]] = a[i];
  }
  if (opts !== undefined) {
    for (const k in opts) {
      const v = opts[k];
      if (k === 'out') { out = v; continue; }
      if (k === 'name') { name = v; continue; }
      if (k === 'attr' && Kind !== NDArray) { attr = v; continue; }
      const ip = variadic ? undefined : inputPos[k];
      if (ip !== undefined) {
        if (v === undefined) continue;
        if (inputs[ip] !== undefined && inputs[ip] !== null) {
          throw new MXNetError(`Operator ${op.name}: input '${k}' is given twice (positionally and by name)`);
        }
        while (inputs.length < ip) inputs.push(null);
        inputs[ip] = v;
        continue;
      }
      if (k in attrs) throw new MXNetError(`Operator ${op.name}: attribute '${k}' is given twice (positionally and by name)`);
      if (v instanceof Kind) {
        throw new MXNetError(variadic
          ? `Operator ${op.name}: takes its inputs positionally only; '${k}' is not an attribute`
          : `Operator ${op.name}: unknown input '${k}' (inputs: ${op.inputs.join(', ') || 'none'})`);
      }
      if (v === undefined) continue;
      attrs[k] = v;
    }
  }
  for (let i = 0; i < inputs.length; i++) {
    const v = inputs[i];
    if (v === null || v === undefined) { inputs[i] = null; continue; }
    if (!(v instanceof Kind)) {
      const what = variadic ? `input ${i}` : `input '${op.inputs[i]}'`;
      throw new MXNetError(`Operator ${op.name}: ${what} must be ${kindName}, got ${describe(v)}`);
    }
  }
  if (spec.hasNumArgs && attrs.num_args === undefined) attrs.num_args = inputs.filter((x) => x).length;
  return { inputs, attrs, out, name, attr };
}

// An input that a boolean attribute use_<input> switches on (CTCLoss's data_lengths, RNN's
// sequence_length): absent (Python's None) while that attribute is off, MXNet's generated functions
// leave it out and the op's later inputs move up, as here.
const truthy = (v) => v === true || v === 1 || (typeof v === 'string' && /^(true|1)$/i.test(v));
function gatedOff(op, i, attrs) {
  const name = op.inputs[i];
  if (name === undefined) return false;
  const flag = `use_${name}`;
  if (!op.attrs.some((a) => a.name === flag)) return false;
  return !truthy(attrs?.[flag]);
}
export function dropGatedHoles(op, inputs, attrs) {
  let last = inputs.length - 1;
  while (last >= 0 && (inputs[last] === null || inputs[last] === undefined)) last--;
  for (let i = last - 1; i >= 0; i--) {
    if ((inputs[i] === null || inputs[i] === undefined) && gatedOff(op, i, attrs)) inputs.splice(i, 1);
  }
  return inputs;
}

// nd takes no other holes: absent optional inputs (Python's None) are dropped from the end, and one
// in the middle is an error (unless dropGatedHoles's rule takes it out).
function compactInputs(op, inputs, variadic, attrs) {
  if (!variadic) dropGatedHoles(op, inputs, attrs);
  let m = inputs.length;
  while (m > 0 && (inputs[m - 1] === null || inputs[m - 1] === undefined)) m--;
  inputs.length = m;
  for (let i = 0; i < m; i++) {
    if (inputs[i] === null || inputs[i] === undefined) {
      throw new MXNetError(`Operator ${op.name}: ${variadic ? `input ${i}` : `input '${op.inputs[i]}'`} is missing (null) while a later input is given`);
    }
  }
  return inputs;
}

const NO_ATTRS = {};

function makeNdOp(id) {
  const op = registry.ops[id];
  // the op's argument tables are built at its first call (not at import: 578 ops' tables were
  // a good part of the import's time and garbage)
  let spec;
  const fn = function (...a) {
    if (spec === undefined) spec = callSpec(id);
    const { nIn, variadic, ndSpecial, inputPos } = spec;
    let n = a.length;
    let opts;
    if (n > 0) {
      const last = a[n - 1];
      if (last !== null && typeof last === 'object') {
        const p = Object.getPrototypeOf(last);
        if (p === OBJECT_PROTO || p === null) { opts = last; n--; }
      }
    }
    // Fast path: inputs only (positionally), attributes only in the options object.
    if (!variadic && n <= nIn) {
      let attrs = NO_ATTRS, out;
      if (opts !== undefined) {
        attrs = opts;
        for (const k in opts) if (ndSpecial[k] === true) { attrs = undefined; break; }
        if (attrs === undefined) {
          // `name` (ignored, as nd's Python functions do) and `out` come out of the attributes;
          // inputs named in the options go the general way
          attrs = {};
          for (const k in opts) {
            if (k === 'name') continue;
            if (k === 'out') { out = opts[k]; continue; }
            if (inputPos[k] !== undefined) { attrs = undefined; break; }
            attrs[k] = opts[k];
          }
        }
      }
      if (attrs !== undefined) {
        while (n > 0 && (a[n - 1] === null || a[n - 1] === undefined)) n--;
        if (n !== a.length) a.length = n;
        let hole = false;
        for (let i = 0; i < n; i++) {
          if (!(a[i] instanceof NDArray)) {
            if (a[i] === null || a[i] === undefined) { hole = true; break; }
            throw new MXNetError(`Operator ${op.name}: input '${op.inputs[i]}' must be an NDArray, got ${describe(a[i])}`);
          }
        }
        if (!hole) return invokeVisible(id, a, attrs, out);
        if (opts !== undefined) a.push(opts); // the general way below
      }
    }
    const { inputs, attrs, out } = parseCall(spec, a, NDArray, 'an NDArray');
    return invokeVisible(id, compactInputs(op, inputs, variadic, attrs), attrs, out);
  };
  Object.defineProperty(fn, 'name', { value: op.name });
  fn.doc = op.doc;
  return fn;
}

// Every registered name and alias -> a function (aliases share the canonical one); installs
// NDArray's fluent methods (x.exp(), x.sliceAxis(...)) over the same functions.
export function generateNd() {
  const ns = {};
  registry.ops.forEach((op, id) => {
    const fn = makeNdOp(id);
    ns[op.name] = fn;
    for (const alias of op.aliases) if (!(alias in ns)) ns[alias] = fn;
  });
  installFluent(NDArray.prototype, NDARRAY_FLUENT, ns);
  return ns;
}
