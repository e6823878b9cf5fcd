// random.mjs -- mx.random / nd.random: MXNet 1.9.1's python/mxnet/ndarray/random.py helpers
// (uniform, normal, randn, randint, exponential, gamma, poisson, negative_binomial,
// generalized_negative_binomial, multinomial, shuffle) and mx.random.seed. Arguments bind
// through signature.mjs with Python's parameter order and defaults (signatures.mjs).
//
// As in Python: numeric distribution parameters call the _random_* op (shape defaults to 1);
// NDArray parameters call the _sample_* op, one distribution per element, and the output's
// shape is the parameters' shape followed by `shape`. Every draw comes from the library's one
// seeded stream, so mx.random.seed(n) makes all of them reproducible (the values differ from
// MXNet's own generator).
import { M, MXNetError } from './core.mjs';
import { NDArray, Context, invokeVisible, opId } from './ndarray.mjs';
import { bindArgs } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { onContext } from './context.mjs';
import { dtypeArg, shapeArg, oneContext } from './creation.mjs';

const describe = (v) => (v instanceof NDArray ? 'NDArray' : v === null ? 'null' : typeof v);

// _random_helper: params are the distribution parameters in Python's order; names are the
// _random_* op's attribute names for them.
function randomHelper(fname, randomOp, sampleOp, params, names, a) {
  const { shape, dtype, out } = a;
  const ctx = oneContext(fname, a.ctx);
  const attrs = {};
  if (shape !== null) attrs.shape = shapeArg(shape);
  if (dtype !== null) attrs.dtype = dtypeArg(dtype);
  // With `out`, the output's shape and dtype are out's (MXNet infers them from it).
  else if (out) attrs.dtype = out.dtype;
  if (params[0] instanceof NDArray) {
    if (out && shape === null) attrs.shape = out.shape.slice(params[0].ndim);
    for (let i = 1; i < params.length; i++) {
      if (!(params[i] instanceof NDArray)) {
        throw new MXNetError(`${fname}: distribution parameters must all have the same type, but got both NDArray and ${describe(params[i])}`);
      }
    }
    if (!sampleOp) throw new MXNetError(`${fname}: distribution parameters must be numbers`);
    // Python ignores ctx here: the samples live where the parameters do.
    return invokeVisible(opId(sampleOp), params, attrs, out ?? undefined);
  }
  if (typeof params[0] === 'number') {
    for (let i = 1; i < params.length; i++) {
      if (typeof params[i] !== 'number') {
        throw new MXNetError(`${fname}: distribution parameters must all have the same type, but got both number and ${describe(params[i])}`);
      }
    }
    if (shape === null) attrs.shape = out ? out.shape : [1];
    params.forEach((v, i) => { attrs[names[i]] = v; });
    const res = invokeVisible(opId(randomOp), [], attrs, out ?? undefined);
    return out ? res : onContext(res, ctx);
  }
  throw new MXNetError(`${fname}: distribution parameters must be either NDArray or numbers, but got ${describe(params[0])}`);
}

const bind = (name, args) => bindArgs(SIGNATURES[name], args);

export function uniform(...args) {
  const a = bind('random.uniform', args);
  return randomHelper('random.uniform', '_random_uniform', '_sample_uniform', [a.low, a.high], ['low', 'high'], a);
}

export function normal(...args) {
  const a = bind('random.normal', args);
  return randomHelper('random.normal', '_random_normal', '_sample_normal', [a.loc, a.scale], ['loc', 'scale'], a);
}

// randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None): randn(2, 3, {loc: 5}).
// randn() is one sample, shape (1,), as Python's documented example.
export function randn(...args) {
  const a = bind('random.randn', args);
  let shape = a.shape ?? [];
  if (shape.length === 1 && Array.isArray(shape[0])) shape = shape[0];
  for (const d of shape) {
    if (!Number.isInteger(d)) throw new MXNetError(`random.randn: the shape must be integers, got ${describe(d)}`);
  }
  return randomHelper('random.randn', '_random_normal', '_sample_normal', [a.loc, a.scale], ['loc', 'scale'],
    { ...a, shape: shape.length ? shape : null });
}

export function randint(...args) {
  const a = bind('random.randint', args);
  for (const [n, v] of [['low', a.low], ['high', a.high]]) {
    if (!Number.isInteger(v)) throw new MXNetError(`random.randint: argument '${n}' must be an integer, got ${describe(v)}`);
  }
  return randomHelper('random.randint', '_random_randint', null, [a.low, a.high], ['low', 'high'], a);
}

// exponential takes the scale (the mean); the ops take the rate 1 / scale.
export function exponential(...args) {
  const a = bind('random.exponential', args);
  const lam = a.scale instanceof NDArray ? a.scale.rdiv(1.0) : 1.0 / a.scale;
  try {
    return randomHelper('random.exponential', '_random_exponential', '_sample_exponential', [lam], ['lam'], a);
  } finally {
    if (lam instanceof NDArray) lam.dispose();
  }
}

export function gamma(...args) {
  const a = bind('random.gamma', args);
  return randomHelper('random.gamma', '_random_gamma', '_sample_gamma', [a.alpha, a.beta], ['alpha', 'beta'], a);
}

export function poisson(...args) {
  const a = bind('random.poisson', args);
  return randomHelper('random.poisson', '_random_poisson', '_sample_poisson', [a.lam], ['lam'], a);
}

export function negative_binomial(...args) {
  const a = bind('random.negative_binomial', args);
  return randomHelper('random.negative_binomial', '_random_negative_binomial', '_sample_negative_binomial',
    [a.k, a.p], ['k', 'p'], a);
}

export function generalized_negative_binomial(...args) {
  const a = bind('random.generalized_negative_binomial', args);
  return randomHelper('random.generalized_negative_binomial', '_random_generalized_negative_binomial',
    '_sample_generalized_negative_binomial', [a.mu, a.alpha], ['mu', 'alpha'], a);
}

// multinomial(data, shape, get_prob=False, out=None, dtype='int32'): indices drawn from the
// distributions on data's last axis; with get_prob, [indices, log-probabilities].
export function multinomial(...args) {
  const a = bind('random.multinomial', args);
  const attrs = { get_prob: a.getProb, dtype: dtypeArg(a.dtype) };
  if (a.shape !== null) attrs.shape = shapeArg(a.shape);
  return invokeVisible(opId('_sample_multinomial'), [a.data], attrs, a.out ?? undefined);
}

// shuffle(data): a copy with the entries along the first axis in random order.
export function shuffle(...args) {
  const a = bind('random.shuffle', args);
  return invokeVisible(opId('_shuffle'), [a.data], {});
}

// seed(seed_state, ctx='all'): one stream serves every context here, so ctx only is checked.
export function seed(...args) {
  const a = bind('random.seed', args);
  if (!Number.isInteger(a.seedState)) {
    throw new MXNetError(`random.seed: argument 'seed_state' must be an integer, got ${describe(a.seedState)}`);
  }
  if (a.ctx !== 'all' && !(a.ctx instanceof Context)) {
    throw new MXNetError("random.seed: argument 'ctx' must be 'all' or a Context");
  }
  M._mxw_random_seed(a.seedState >>> 0);
}

// Python's names; the multi-word functions also under their camelCase spelling.
export const negativeBinomial = negative_binomial;
export const generalizedNegativeBinomial = generalized_negative_binomial;
