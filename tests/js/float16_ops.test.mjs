// float16 / bfloat16 through float32 (ops marked half_as_f32: softmax, normalizations, reductions,
// LeakyReLU, argmax/argmin, and their gradients): the 16-bit tensors are widened, the float32
// kernel runs, the outputs are rounded back. Each result is checked against the op's math worked
// in float64 here, within one unit in the last place of the half type (plus the half rounding of
// the inputs, which are made exact half values first), eagerly and in a hybridized graph.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, roundToFormat, FLOAT16, BFLOAT16 } from './oracle.mjs';

const { nd, gluon } = mx;
const FORMATS = [['float16', FLOAT16], ['bfloat16', BFLOAT16]];

function within1ulp(got, want, fmt, what) {
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    const ulp = 2 ** (Math.max(Math.floor(Math.log2(Math.abs(w) || 2 ** fmt.emin)), fmt.emin) - fmt.mant);
    assert.ok(Math.abs(got[i] - w) <= ulp, `${what}[${i}]: ${got[i]} vs ${w} (ulp ${ulp})`);
  }
}
const rows = (flat, n) => Array.from({ length: flat.length / n }, (_, r) => flat.slice(r * n, (r + 1) * n));

test('softmax, log_softmax, LayerNorm, sum, mean, gelu and argmax in float16 / bfloat16: the float64 math within 1 ulp', () => {
  for (const [dtype, fmt] of FORMATS) {
    const [R, C] = [6, 37];
    const xs = Array.from(rng(51).uniform(R * C, -4, 4), (v) => roundToFormat(Math.fround(v), fmt));
    const x = nd.array(xs, { shape: [R, C] }).astype(dtype);
    const out = (y) => { assert.equal(y.dtype, dtype); return y.astype('float32').toTypedArray(); };
    const sm = rows(xs, C).flatMap((r) => { const m = Math.max(...r), e = r.map((v) => Math.exp(v - m)), s = e.reduce((a, b) => a + b); return e.map((v) => v / s); });
    within1ulp(out(nd.softmax(x)), sm, fmt, `${dtype} softmax`);
    within1ulp(out(nd.log_softmax(x)), sm.map(Math.log), fmt, `${dtype} log_softmax`);
    const ln = rows(xs, C).flatMap((r) => {
      const mean = r.reduce((a, b) => a + b) / C, v = r.reduce((a, b) => a + (b - mean) ** 2, 0) / C;
      return r.map((t) => (t - mean) / Math.sqrt(v + 1e-5));
    });
    within1ulp(out(nd.LayerNorm(x, nd.ones([C]).astype(dtype), nd.zeros([C]).astype(dtype))), ln, fmt, `${dtype} LayerNorm`);
    within1ulp(out(nd.sum(x, { axis: 1 })), rows(xs, C).map((r) => r.reduce((a, b) => a + b)), fmt, `${dtype} sum`);
    within1ulp(out(nd.mean(x, { axis: 0 })), Array.from({ length: C }, (_, c) => xs.filter((_, i) => i % C === c).reduce((a, b) => a + b) / R),
      fmt, `${dtype} mean`);
    const erf = (t) => { // Abramowitz-Stegun 7.1.26 is too coarse here: series / continued fraction in float64
      let s = 0, term = t, k = 0;
      while (Math.abs(term) > 1e-17 * Math.abs(s) || k < 3) { s += term / (2 * k + 1); k++; term *= -t * t / k; if (k > 200) break; }
      return (2 / Math.sqrt(Math.PI)) * s;
    };
    within1ulp(out(nd.LeakyReLU(x, { act_type: 'gelu' })), xs.map((t) => 0.5 * t * (1 + erf(t / Math.SQRT2))), fmt, `${dtype} gelu`);
    const am = rows(xs, C).map((r) => r.indexOf(Math.max(...r)));
    assert.deepEqual(Array.from(out(nd.argmax(x, { axis: 1 }))), am, `${dtype} argmax`);
  }
});

test('BatchNorm (inference) in float16 with float32 statistics, eager and hybridized: the float64 math within 1 ulp', () => {
  const fmt = FLOAT16;
  const [N, C, H, W] = [2, 3, 5, 7];
  const xs = Array.from(rng(52).uniform(N * C * H * W, -3, 3), (v) => roundToFormat(Math.fround(v), fmt));
  const gamma = [1.5, -0.5, 2], beta = [0.25, 0, -1], mean = [0.1, -0.2, 0.3], vari = [0.5, 2, 1];
  const want = xs.map((v, i) => { const c = Math.floor(i / (H * W)) % C; return (v - mean[c]) / Math.sqrt(vari[c] + 1e-5) * gamma[c] + beta[c]; });
  const x = nd.array(xs, { shape: [N, C, H, W] }).astype('float16');
  const y = nd.BatchNorm(x, nd.array(gamma), nd.array(beta), nd.array(mean), nd.array(vari), { use_global_stats: true, fix_gamma: false, eps: 1e-5 });
  assert.equal(y.dtype, 'float16');
  within1ulp(y.astype('float32').toTypedArray(), want, fmt, 'BatchNorm eager');
  // the same through a hybridized block's graph (the executor's path)
  const bn = new gluon.nn.BatchNorm({ inChannels: C });
  bn.initialize();
  bn.gamma.setData(nd.array(gamma)); bn.beta.setData(nd.array(beta));
  bn.running_mean.setData(nd.array(mean)); bn.running_var.setData(nd.array(vari));
  bn.cast('float16');
  for (const p of [bn.running_mean, bn.running_var, bn.gamma, bn.beta]) p.cast('float32'); // as MXNet's AMP keeps them
  bn.hybridize();
  const z = bn(x);
  assert.equal(z.dtype, 'float16');
  assert.deepEqual(Array.from(z.astype('float32').toTypedArray()), Array.from(y.astype('float32').toTypedArray()));
});

test('unary gradients in float16 (_backward_<op> through float32): the float64 derivative within 1 ulp', () => {
  const fmt = FLOAT16;
  const xs = Array.from(rng(53).uniform(301, -3, 3), (v) => roundToFormat(Math.fround(v), fmt));
  const gs = Array.from(rng(54).uniform(301, -2, 2), (v) => roundToFormat(Math.fround(v), fmt));
  const g = nd.array(gs).astype('float16');
  const cases = [
    ['_backward_sigmoid', (y) => y * (1 - y), (t) => 1 / (1 + Math.exp(-t))], // input: the output y
    ['_backward_tanh', (y) => 1 - y * y, Math.tanh],
    ['_backward_log', (t) => 1 / t, null],
  ];
  for (const [op, d, fwd] of cases) {
    const ins = xs.map((t) => roundToFormat(Math.fround(fwd ? fwd(t) : Math.abs(t) + 0.5), fmt));
    const got = nd[op](g, nd.array(ins).astype('float16'));
    assert.equal(got.dtype, 'float16');
    within1ulp(got.astype('float32').toTypedArray(), ins.map((v, i) => gs[i] * d(v)), fmt, op);
  }
});
