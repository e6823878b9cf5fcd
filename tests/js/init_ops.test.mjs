// Creation ops (_zeros, _ones, _full, _arange, _linspace, _eye) against TensorFlow.js and hand
// values, and the random samplers against the moments of their distributions (bounds are 5
// standard errors of the statistic, worked out in the comments), plus seeding.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, assertClose } from './oracle.mjs';

const { nd } = mx;
const values = (a) => Array.from(a.toTypedArray(), Number);
const tfValues = (fn) => Array.from(tf.tidy(() => fn().dataSync()), Number);

function moments(v) {
  const n = v.length;
  const mean = v.reduce((s, x) => s + x, 0) / n;
  const variance = v.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1);
  return { mean, variance, min: Math.min(...v), max: Math.max(...v) };
}

test('nd.zeros / nd.ones / nd.full helpers match tfjs', () => {
  const z = nd.zeros([2, 3]);
  assert.deepEqual(z.shape, [2, 3]);
  assert.equal(z.dtype, 'float32');
  assert.deepEqual(values(z), tfValues(() => tf.zeros([2, 3])));
  const o = nd.ones([4], { dtype: 'int32' });
  assert.equal(o.dtype, 'int32');
  assert.deepEqual(values(o), tfValues(() => tf.ones([4], 'int32')));
  const f = nd.full([2], 7);
  assert.deepEqual(f.shape, [2]);
  assert.deepEqual(values(f), tfValues(() => tf.fill([2], 7)));
  const f64 = nd.full([2, 2], 0.1, { dtype: 'float64' });
  assert.equal(f64.dtype, 'float64');
  assert.deepEqual(values(f64), [0.1, 0.1, 0.1, 0.1]); // exact in float64
});

test('nd.arange helper matches tf.range', () => {
  const a = nd.arange(0, 10, 3);
  assert.deepEqual(a.shape, [4]);
  assert.deepEqual(values(a), tfValues(() => tf.range(0, 10, 3)));
  assert.deepEqual(values(nd.arange(5)), tfValues(() => tf.range(0, 5)));
  assertClose(values(nd.arange(1, 2, 0.25)), tfValues(() => tf.range(1, 2, 0.25)));
  assert.deepEqual(values(nd.arange(0, 3, 1, { repeat: 2 })), [0, 0, 1, 1, 2, 2]);
  const i = nd.arange(2, 11, 4, { dtype: 'int32' });
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(values(i), [2, 6, 10]);
});

test('_zeros, _ones, _full and their _npi_ aliases by registry name', () => {
  const z = nd._zeros({ shape: [2, 2] });
  assert.deepEqual(z.shape, [2, 2]);
  assert.deepEqual(values(z), [0, 0, 0, 0]);
  const z64 = nd._npi_zeros({ shape: [3], dtype: 'float64' });
  assert.equal(z64.dtype, 'float64');
  assert.deepEqual(values(z64), [0, 0, 0]);
  const o = nd._ones({ shape: [1, 3], dtype: 'uint8' });
  assert.equal(o.dtype, 'uint8');
  assert.deepEqual(values(o), [1, 1, 1]);
  const o16 = nd._npi_ones({ shape: [2], dtype: 'float16' });
  assert.equal(o16.dtype, 'float16');
  assert.deepEqual(values(o16), [1, 1]);
  const f = nd._full({ shape: [2, 3], value: 2.5, dtype: 'float64' });
  assert.deepEqual(values(f), tfValues(() => tf.fill([6], 2.5)));
  // value converts to the dtype as C does: 2.9 -> 2, -2.9 -> -2
  assert.deepEqual(values(nd._npi_full({ shape: [2], value: 2.9, dtype: 'int32' })), [2, 2]);
  assert.deepEqual(values(nd._full({ shape: [2], value: -2.9, dtype: 'int64' })), [-2, -2]);
  const n = nd._full({ shape: [2], value: NaN });
  assert.ok(values(n).every(Number.isNaN));
  // ctx is accepted and ignored
  assert.deepEqual(values(nd._zeros({ shape: [1], ctx: 'cpu(0)' })), [0]);
});

test('_arange / _npi_arange by registry name against tf.range', () => {
  const a = nd._arange({ start: 1, stop: 4 });
  assert.equal(a.dtype, 'float32');
  assert.deepEqual(values(a), [1, 2, 3]);
  assertClose(values(nd._npi_arange({ start: 10, stop: 0, step: -2.5 })), tfValues(() => tf.range(10, 0, -2.5)));
  assert.deepEqual(values(nd._arange({ start: 4 })), tfValues(() => tf.range(0, 4)));
  const d = nd._arange({ start: -1, stop: 1, step: 0.5, dtype: 'float64' });
  assert.equal(d.dtype, 'float64');
  assert.deepEqual(values(d), [-1, -0.5, 0, 0.5]);
  const r = nd._arange({ start: 0, stop: 5, step: 2, repeat: 3, dtype: 'int64' });
  assert.equal(r.dtype, 'int64');
  assert.deepEqual(values(r), [0, 0, 0, 2, 2, 2, 4, 4, 4]);
  // length ceil((stop - start) / step) also for a step that does not divide: (7 - 0) / 2 -> 4
  assert.deepEqual(values(nd._arange({ start: 0, stop: 7, step: 2 })), [0, 2, 4, 6]);
});

test('_linspace / _npi_linspace against tf.linspace and hand values', () => {
  const l = nd._linspace({ start: -1, stop: 1, num: 7 });
  assert.deepEqual(l.shape, [7]);
  assertClose(values(l), tfValues(() => tf.linspace(-1, 1, 7)));
  // endpoint False: step (stop - start) / num = 0.25
  assertClose(values(nd._npi_linspace({ start: 0, stop: 1, num: 4, endpoint: false })), [0, 0.25, 0.5, 0.75]);
  const i = nd._linspace({ start: 0, stop: 10, num: 4, dtype: 'int32' }); // 0, 3.33, 6.67, 10 truncated
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(values(i), [0, 3, 6, 10]);
});

test('_eye against tf.eye and hand values', () => {
  assert.deepEqual(values(nd._eye({ N: 3 })), tfValues(() => tf.eye(3)));
  assert.deepEqual(values(nd._eye({ N: 2, M: 4 })), tfValues(() => tf.eye(2, 4)));
  const e = nd._eye({ N: 4, M: 3, k: -1, dtype: 'int32' });
  assert.deepEqual(e.shape, [4, 3]);
  assert.equal(e.dtype, 'int32');
  assert.deepEqual(e.toArray(), [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]);
  assert.deepEqual(nd._eye({ N: 2, M: 3, k: 2 }).toArray(), [[0, 0, 1], [0, 0, 0]]);
});

test('random_uniform: range, mean, variance and histogram within statistical bounds', () => {
  mx.random.seed(1234);
  const n = 10000;
  const u = nd.random_uniform({ shape: [n], low: -2, high: 3 });
  assert.deepEqual(u.shape, [n]);
  assert.equal(u.dtype, 'float32');
  const v = values(u);
  const m = moments(v);
  assert.ok(m.min >= -2 && m.max <= 3, `range [${m.min}, ${m.max}]`);
  // mean (low + high) / 2 = 0.5; sd of the mean 5 / sqrt(12 n) = 0.0144 -> 5 sigma 0.072
  assert.ok(Math.abs(m.mean - 0.5) < 0.072, `mean ${m.mean}`);
  // variance 25 / 12 = 2.0833; sd of s^2 = w^2 sqrt((1/80 - 1/144) / n) = 0.0186 -> 5 sigma 0.093
  assert.ok(Math.abs(m.variance - 25 / 12) < 0.093, `variance ${m.variance}`);
  // 10 bins of 1000 expected, sd sqrt(1000 * 0.9) = 30 -> 5 sigma 150
  const bins = new Array(10).fill(0);
  for (const x of v) bins[Math.min(9, Math.floor((x + 2) / 0.5))]++;
  for (const b of bins) assert.ok(Math.abs(b - 1000) < 150, `bins ${bins}`);
});

test('_random_uniform / uniform with float64 and float16 dtypes', () => {
  const d = nd._random_uniform({ shape: [4000], low: 10, high: 11, dtype: 'float64' });
  assert.equal(d.dtype, 'float64');
  const md = moments(values(d));
  // sd of the mean 1 / sqrt(12 * 4000) = 0.00456 -> 5 sigma 0.023
  assert.ok(md.min >= 10 && md.max <= 11 && Math.abs(md.mean - 10.5) < 0.023, JSON.stringify(md));
  const h = nd.uniform({ shape: [2, 500], dtype: 'float16' });
  assert.equal(h.dtype, 'float16');
  assert.deepEqual(h.shape, [2, 500]);
  const mh = moments(values(h));
  // default [0, 1); sd of the mean 1 / sqrt(12 * 1000) = 0.0091 -> 5 sigma 0.046
  assert.ok(mh.min >= 0 && mh.max <= 1 && Math.abs(mh.mean - 0.5) < 0.046, JSON.stringify(mh));
});

test('random_normal / _random_normal / normal: mean, standard deviation and the 1-sigma mass', () => {
  mx.random.seed(99);
  const n = 10000;
  const v = values(nd.random_normal({ shape: [n], loc: 1.5, scale: 2 }));
  const m = moments(v);
  // sd of the mean 2 / 100 = 0.02 -> 5 sigma 0.1; sd of s ~ sigma / sqrt(2n) = 0.0141 -> 5 sigma 0.071
  assert.ok(Math.abs(m.mean - 1.5) < 0.1, `mean ${m.mean}`);
  assert.ok(Math.abs(Math.sqrt(m.variance) - 2) < 0.071, `sd ${Math.sqrt(m.variance)}`);
  // P(|x - loc| < scale) = 0.6827; sd sqrt(0.6827 * 0.3173 / n) = 0.00465 -> 5 sigma 0.023
  const inside = v.filter((x) => Math.abs(x - 1.5) < 2).length / n;
  assert.ok(Math.abs(inside - 0.6827) < 0.023, `mass ${inside}`);
  const d = nd._random_normal({ shape: [3, 4], dtype: 'float64' });
  assert.equal(d.dtype, 'float64');
  assert.deepEqual(d.shape, [3, 4]);
  const s = moments(values(nd.normal({ shape: [4000], loc: -3, scale: 0.5 })));
  // sd of the mean 0.5 / sqrt(4000) = 0.0079 -> 5 sigma 0.04
  assert.ok(Math.abs(s.mean + 3) < 0.04, `mean ${s.mean}`);
});

test('random_randint / _random_randint / _npi_random_randint: range and uniform counts', () => {
  const r = nd.random_randint({ low: -3, high: 4, shape: [7000] });
  assert.equal(r.dtype, 'int32');
  const counts = new Array(7).fill(0);
  for (const x of values(r)) {
    assert.ok(Number.isInteger(x) && x >= -3 && x < 4, `value ${x}`);
    counts[x + 3]++;
  }
  // 1000 expected per value, sd sqrt(1000 * 6 / 7) = 29.3 -> 5 sigma 146
  for (const c of counts) assert.ok(Math.abs(c - 1000) < 146, `counts ${counts}`);
  const l = nd._random_randint({ low: 5000000000, high: 5000000003, shape: [300], dtype: 'int64' });
  assert.equal(l.dtype, 'int64');
  const lv = Array.from(l.toTypedArray());
  assert.ok(lv.every((x) => x >= 5000000000n && x < 5000000003n));
  assert.equal(new Set(lv).size, 3); // each of 3 values missing has p = 3 * (2/3)^300
  const one = nd._npi_random_randint({ low: 7, high: 8, shape: [4] });
  assert.deepEqual(values(one), [7, 7, 7, 7]);
});

test('random_exponential / _random_exponential and random_gamma / _random_gamma moments', () => {
  mx.random.seed(7);
  const n = 10000;
  const e = moments(values(nd.random_exponential({ lam: 4, shape: [n] })));
  // mean 1 / lam = 0.25, sd of the mean 0.25 / 100 -> 5 sigma 0.0125; variance 1 / lam^2 = 0.0625,
  // sd of s^2 = sigma^2 sqrt(8 / n) (excess kurtosis 6) = 0.00177 -> 5 sigma 0.0089
  assert.ok(e.min > 0 && Math.abs(e.mean - 0.25) < 0.0125, JSON.stringify(e));
  assert.ok(Math.abs(e.variance - 0.0625) < 0.0089, JSON.stringify(e));
  const e2 = moments(values(nd._random_exponential({ shape: [n], dtype: 'float64' })));
  assert.ok(Math.abs(e2.mean - 1) < 0.05, JSON.stringify(e2)); // lam 1: sd of the mean 0.01

  const g = moments(values(nd.random_gamma({ alpha: 2.5, beta: 0.5, shape: [n] })));
  // mean alpha beta = 1.25, variance alpha beta^2 = 0.625; sd of the mean sqrt(0.625 / n) =
  // 0.0079 -> 5 sigma 0.04; sd of s^2 = sigma^2 sqrt((2 + 6 / alpha) / n) = 0.0131 -> 5 sigma 0.066
  assert.ok(g.min > 0 && Math.abs(g.mean - 1.25) < 0.04, JSON.stringify(g));
  assert.ok(Math.abs(g.variance - 0.625) < 0.066, JSON.stringify(g));
  // alpha < 1 takes the boosted path: mean 0.5 * 2 = 1, variance 0.5 * 4 = 2 -> 5 sigma 0.071
  const g2 = moments(values(nd._random_gamma({ alpha: 0.5, beta: 2, shape: [n] })));
  assert.ok(g2.min >= 0 && Math.abs(g2.mean - 1) < 0.071, JSON.stringify(g2));
});

test('mx.random.seed: the same seed repeats the stream, another seed differs', () => {
  mx.random.seed(42);
  const a = values(nd.random_uniform({ shape: [64] }));
  const b = values(nd.random_normal({ shape: [64] }));
  mx.random.seed(42);
  assert.deepEqual(values(nd.random_uniform({ shape: [64] })), a);
  assert.deepEqual(values(nd.random_normal({ shape: [64] })), b);
  mx.random.seed(43);
  const c = values(nd.random_uniform({ shape: [64] }));
  assert.ok(c.some((x, i) => x !== a[i]));
  // consecutive draws without reseeding differ too
  assert.ok(values(nd.random_uniform({ shape: [64] })).some((x, i) => x !== c[i]));
});

test('nd.random.uniform / nd.random.normal helpers', () => {
  mx.random.seed(5);
  const u = nd.random.uniform(-1, 1, [2, 3]);
  assert.deepEqual(u.shape, [2, 3]);
  assert.ok(values(u).every((x) => x >= -1 && x <= 1));
  assert.deepEqual(nd.random.uniform().shape, [1]); // Python's default shape 1
  const m = moments(values(nd.random.normal(10, 0.1, [5000])));
  // sd of the mean 0.1 / sqrt(5000) = 0.0014 -> 5 sigma 0.0071
  assert.ok(Math.abs(m.mean - 10) < 0.0071, `mean ${m.mean}`);
  const d = nd.random.normal(0, 1, [3], { dtype: 'float64' });
  assert.equal(d.dtype, 'float64');
  mx.random.seed(5);
  assert.deepEqual(values(nd.random.uniform(-1, 1, [2, 3])), values(u));
});

test('errors name the op and the problem; the next call works', () => {
  const isErr = (op, re) => (e) => e instanceof mx.MXNetError && e.message.includes(`Operator ${op}`) && re.test(e.message);
  assert.throws(() => nd._full({ shape: [2] }), isErr('_full', /'value'/));
  assert.throws(() => nd._arange({ start: 0, stop: 3, step: 0 }), isErr('_arange', /step=0/));
  assert.throws(() => nd._arange({ start: 3, stop: 1 }), isErr('_arange', /invalid range/));
  assert.throws(() => nd._zeros({ shape: [2, 2], dtype: 'float99' }), isErr('_zeros', /float99/));
  assert.throws(() => nd._zeros({ shape: [2, -1] }), isErr('_zeros', /negative/));
  assert.throws(() => nd._zeros({}), isErr('_zeros', /infer the shape/)); // legacy: () is unknown
  assert.throws(() => nd._linspace({ start: 0, stop: 1 }), isErr('_linspace', /'num'/));
  assert.throws(() => nd._eye({ N: -1 }), isErr('_eye', /N must be non-negative/));
  assert.throws(() => nd.random_uniform({ shape: [2], dtype: 'int32' }), isErr('_random_uniform', /'dtype'/));
  assert.throws(() => nd.random_uniform({ shape: [2], low: 1, high: 0 }), isErr('_random_uniform', /low/));
  assert.throws(() => nd.random_normal({ shape: [2], scale: -1 }), isErr('_random_normal', /scale/));
  assert.throws(() => nd.random_gamma({ shape: [2], alpha: 0 }), isErr('_random_gamma', /alpha/));
  assert.throws(() => nd.random_exponential({ shape: [2], lam: 0 }), isErr('_random_exponential', /lam/));
  assert.throws(() => nd.random_randint({ low: 2, high: 2, shape: [2] }), isErr('_random_randint', /low/));
  assert.throws(() => nd.random_randint({ low: 0, high: 3e9, shape: [2] }), isErr('_random_randint', /int32/));
  assert.throws(() => nd._ones({ shape: [2], bogus: 1 }), isErr('_ones', /unknown attribute 'bogus'/));
  assert.deepEqual(values(nd._full({ shape: [2], value: 3 })), [3, 3]);
});
