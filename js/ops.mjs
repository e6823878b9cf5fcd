// ops.mjs -- the nd.* namespace, generated at load from the C operator registry (names and
// aliases; nothing is listed by hand). Inputs are positional NDArrays; attributes go in one
// trailing plain object with MXNet's names: nd.FullyConnected(x, w, b, {num_hidden: 10}).
import { MXNetError, registry } from './core.mjs';
import { NDArray, invokeVisible } from './ndarray.mjs';

function isAttrObject(v) {
  return v !== null && typeof v === 'object' && !(v instanceof NDArray) && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

// Splits (...inputs, attrs) into NDArray inputs and attributes, adding num_args for variadic
// ops as MXNet's Python wrapper does; `out` and `name` are taken out of the attributes.
export function splitArgs(op, rawArgs) {
  let list = rawArgs.slice();
  let attrs = {};
  if (list.length && isAttrObject(list[list.length - 1])) attrs = { ...list.pop() };
  if (list.length === 1 && Array.isArray(list[0])) list = list[0];
  // absent optional inputs (Python's None, e.g. a bias-less layer's bias) are dropped
  while (list.length && (list[list.length - 1] === null || list[list.length - 1] === undefined)) list.pop();
  const { out, name, ...rest } = attrs;
  void name;
  if (op.variadic && rest.num_args === undefined && op.attrs.some((a) => a.name === 'num_args')) {
    rest.num_args = list.length;
  }
  return { inputs: list, attrs: rest, out };
}

function makeNdOp(id) {
  const op = registry.ops[id];
  const fn = function (...rawArgs) {
    const { inputs, attrs, out } = splitArgs(op, rawArgs);
    for (let i = 0; i < inputs.length; i++) {
      if (!(inputs[i] instanceof NDArray)) {
        throw new MXNetError(`Operator ${op.name}: input ${i} must be an NDArray, got ${inputs[i] === null ? 'null' : typeof inputs[i]}`);
      }
    }
    return invokeVisible(id, inputs, attrs, out);
  };
  Object.defineProperty(fn, 'name', { value: op.name });
  fn.doc = op.doc;
  return fn;
}

// Every registered name and alias -> a function (aliases share the canonical one).
export function generateNd() {
  const ns = {};
  registry.ops.forEach((op, id) => {
    const fn = makeNdOp(id);
    ns[op.name] = fn;
    for (const alias of op.aliases) if (!(alias in ns)) ns[alias] = fn;
  });
  return ns;
}
