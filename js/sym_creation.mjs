// sym_creation.mjs -- mx.sym's creation helpers with Python's signatures (MXNet 1.9.1
// python/mxnet/symbol/symbol.py): zeros, ones, full, arange, linspace, eye. Each is the
// registry's _zeros/_ones/_full/_arange/_linspace/_eye node with the attributes Python writes
// (dtype float32 when not given, full's value as a float); **kwargs (name, attr) pass through.
import { bindArgs } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { dtypeArg, shapeArg } from './creation.mjs';
import { pyFloat } from './format.mjs';

// The op's kwargs (name=, attr=) as the generated sym functions take them.
const passOn = (a) => {
  const o = {};
  if (a.name !== null && a.name !== undefined) o.name = a.name;
  if (a.attr !== null && a.attr !== undefined) o.attr = a.attr;
  return o;
};

export function symCreation(gen) {
  const bind = (name, args) => bindArgs(SIGNATURES[name], args);
  const dtype = (d) => dtypeArg(d ?? 'float32');
  return {
    // zeros(shape, dtype=None, **kwargs)
    zeros: (...args) => {
      const a = bind('sym.zeros', args);
      return gen._zeros({ shape: shapeArg(a.shape), dtype: dtype(a.dtype), ...passOn(a) });
    },
    // ones(shape, dtype=None, **kwargs)
    ones: (...args) => {
      const a = bind('sym.ones', args);
      return gen._ones({ shape: shapeArg(a.shape), dtype: dtype(a.dtype), ...passOn(a) });
    },
    // full(shape, val, dtype=None, **kwargs): value=float(val), written as Python's str(float)
    full: (...args) => {
      const a = bind('sym.full', args);
      return gen._full({ shape: shapeArg(a.shape), dtype: dtype(a.dtype), value: pyFloat(Number(a.val)), ...passOn(a) });
    },
    // arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None): every
    // keyword is passed on, None as 'None' and the default step as '1.0', as Python writes them
    arange: (...args) => {
      const a = bind('sym.arange', args);
      return gen._arange({ start: a.start, stop: a.stop ?? 'None', step: a.step === 1 ? '1.0' : a.step,
        repeat: a.repeat, infer_range: a.inferRange, dtype: dtype(a.dtype), ...passOn(a) });
    },
    // linspace(start, stop, num, endpoint=True, name=None, dtype=None)
    linspace: (...args) => {
      const a = bind('sym.linspace', args);
      return gen._linspace({ start: a.start, stop: a.stop, num: a.num, endpoint: a.endpoint, dtype: dtype(a.dtype),
        ...passOn(a) });
    },
    // eye(N, M=0, k=0, dtype=None, **kwargs)
    eye: (...args) => {
      const a = bind('sym.eye', args);
      return gen._eye({ N: a.N, M: a.M, k: a.k, dtype: dtype(a.dtype), ...passOn(a) });
    },
  };
}
