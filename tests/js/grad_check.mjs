// Gradient test helpers (not a test file): checkGrad compares an op's autograd gradient with
// central finite differences of the forward computation, and tfGrads runs TF.js's `tf.grads` on
// tfjs-backend-cpu as an independent implementation. The objective is sum_k <headGrad_k, out_k>
// with random head gradients, so every output element's gradient is exercised.
import assert from 'node:assert/strict';
import * as mx from '../../dist/index.mjs';
import { rng, assertClose, tf } from './oracle.mjs';
import '@tensorflow/tfjs'; // registers TF.js's gradient functions (tf.grads); tfjs-core's node bundle has none

const { nd, autograd } = mx;

// Every op name a checkGrad call covered in this process (the coverage test scans sources).
export const checked = new Set();

const toNd = (spec, dtype, r) => {
  if (spec instanceof mx.NDArray) return spec;
  const { shape, data, dtype: dt, low = -1, high = 1 } = spec;
  const n = shape.reduce((a, b) => a * b, 1);
  const values = data ?? Array.from(r.uniform(n, low, high), Number);
  return nd.array(Array.from(values), { dtype: dt ?? dtype }).reshape(shape);
};

// Runs `fn` (an op name called as nd[name](...inputs, attrs), or a function of the inputs) and
// returns its outputs as a list.
function run(fn, inputs, attrs) {
  const out = typeof fn === 'function' ? fn(...inputs) : nd[fn](...inputs, attrs ?? {});
  return Array.isArray(out) ? out : [out];
}

// checkGrad(fn, inputs, attrs?, opts?)
//   fn     op name (e.g. 'broadcast_mul') or (...inputs) => NDArray | NDArray[]
//   inputs [{shape, data?, dtype?, low?, high?} | NDArray]; NDArrays not in `wrt` stay fixed
//   opts   {wrt: input indices (default: every float input), dtype: 'float64', eps, rtol, atol, seed}
// Returns {analytic, numeric} (arrays of Float64Array per wrt input).
export function checkGrad(fn, inputs, attrs = {}, opts = {}) {
  const dtype = opts.dtype ?? 'float64';
  const f64 = dtype === 'float64';
  const eps = opts.eps ?? (f64 ? 1e-6 : 1e-3);
  const rtol = opts.rtol ?? (f64 ? 1e-5 : 2e-2);
  const atol = opts.atol ?? (f64 ? 1e-7 : 2e-3);
  const r = rng(opts.seed ?? 7);
  const xs = inputs.map((s) => toNd(s, dtype, r));
  const wrt = opts.wrt ?? xs.map((x, i) => (x.dtype.startsWith('float') ? i : -1)).filter((i) => i >= 0);
  if (typeof fn === 'string') checked.add(fn);
  // analytic
  for (const i of wrt) xs[i].attachGrad();
  const outs = autograd.record(() => run(fn, xs, attrs), opts.trainMode ?? true);
  const heads = outs.map((o) => nd.array(Array.from(r.uniform(o.size), Number), { dtype: o.dtype }).reshape(o.shape));
  autograd.backward(outs, heads);
  const analytic = wrt.map((i) => Float64Array.from(xs[i].grad.toTypedArray()));
  const headVals = heads.map((h) => Float64Array.from(h.toTypedArray()));
  // numeric: central differences of sum_k <head_k, out_k>
  const objective = (ins) => {
    const o = autograd.pause(() => run(fn, ins, attrs), opts.trainMode ?? true);
    let s = 0;
    o.forEach((t, k) => { const v = t.toTypedArray(); for (let j = 0; j < v.length; j++) s += headVals[k][j] * v[j]; t.dispose(); });
    return s;
  };
  const numeric = wrt.map((i) => {
    const base = Float64Array.from(xs[i].toTypedArray());
    const g = new Float64Array(base.length);
    for (let j = 0; j < base.length; j++) {
      const vals = Float64Array.from(base);
      const probe = (delta) => {
        vals[j] = base[j] + delta;
        const xi = nd.array(Array.from(vals), { dtype: xs[i].dtype }).reshape(xs[i].shape);
        const ins = xs.slice();
        ins[i] = xi;
        const v = objective(ins);
        xi.dispose();
        return v;
      };
      g[j] = (probe(eps) - probe(-eps)) / (2 * eps);
    }
    return g;
  });
  wrt.forEach((i, k) => assertClose(analytic[k], numeric[k], { rtol, atol, msg: `${typeof fn === 'string' ? fn : 'fn'} d/dinput${i}` }));
  return { analytic, numeric, inputs: xs, heads, outputs: outs };
}

// The gradients TF.js computes for f(...tensors) with output gradient `dy` (tf.grads on the CPU
// backend), as Float64Arrays.
export function tfGrads(f, inputs, dy) {
  return tf.tidy(() => {
    const ts = inputs.map(({ shape, data }) => tf.tensor(Array.from(data), shape, 'float32'));
    const g = tf.grads(f)(ts, dy ? tf.tensor(Array.from(dy.data), dy.shape, 'float32') : undefined);
    return g.map((t) => Float64Array.from(t.dataSync()));
  });
}

// Our gradients of fn at float32 `inputs` ({shape, data}) with output gradient dy ({shape, data}).
export function ourGrads(fn, inputs, dy) {
  const xs = inputs.map(({ shape, data }) => nd.array(Array.from(data)).reshape(shape));
  for (const x of xs) x.attachGrad();
  const y = autograd.record(() => fn(...xs));
  const head = dy ? nd.array(Array.from(dy.data)).reshape(dy.shape) : null;
  y.backward(head);
  return xs.map((x) => Float64Array.from(x.grad.toTypedArray()));
}

export { assert, assertClose, rng, tf, mx, nd, autograd };
