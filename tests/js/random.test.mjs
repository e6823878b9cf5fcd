// mx.random / nd.random (js/random.mjs) with Python's signatures, over the C random family.
// The samples are checked against moments worked by hand from each distribution's definition
// (tolerance: 5 standard errors for the sample size; the arithmetic is in the comments), against
// their support, and for reproducibility under mx.random.seed. NDArray parameters go through the
// _sample_* ops: one distribution per element, output shape = parameter shape + shape.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { nd } = mx;
const N = 20000;
const values = (x) => Array.from(x.toTypedArray(), Number);
// The context recorded on an array by its creator (context.mjs's onContext; NDArray.context reports it).
const ctxOf = (a) => String(a._ctx ?? a.context);
function moments(v) {
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  const variance = v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length;
  return { mean, variance };
}
function near(actual, expected, tol, what) {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} is not within ${tol} of ${expected}`);
}
const isCount = (v) => v >= 0 && Number.isInteger(v);
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));

test('call forms: Python positional order, an options object with any parameter, defaults', () => {
  mx.random.seed(1);
  assert.deepEqual(nd.random.uniform({ shape: [2, 3] }).shape, [2, 3]);
  assert.deepEqual(nd.random.normal({ shape: [2] }).shape, [2]);
  const u = nd.random.uniform(-1, 1, [2, 3]);
  assert.deepEqual(u.shape, [2, 3]);
  for (const v of values(u)) assert.ok(v >= -1 && v < 1);
  const d = mx.random.uniform(0, 1, { shape: [4], dtype: 'float64' });
  assert.equal(d.dtype, 'float64');
  assert.deepEqual(d.shape, [4]);
  // mx.random and nd.random are the same functions
  for (const name of ['uniform', 'normal', 'randn', 'randint', 'exponential', 'gamma', 'poisson', 'negative_binomial',
    'generalized_negative_binomial', 'multinomial', 'shuffle', 'seed']) {
    assert.equal(typeof mx.random[name], 'function', name);
    assert.equal(mx.random[name], nd.random[name], name);
  }
  // shape not given: one sample, shape (1,) as Python's _random_helper sets shape=1
  assert.deepEqual(nd.random.uniform().shape, [1]);
  assert.deepEqual(nd.random.poisson(2).shape, [1]);
  assert.deepEqual(nd.random.uniform(0, 1, 5).shape, [5]); // an int shape is (n,)
  // the options object takes positional parameters too, in either spelling
  const g = nd.random.gamma({ alpha: 2, beta: 3, shape: [3], dtype: 'float16' });
  assert.equal(g.dtype, 'float16');
  assert.deepEqual(nd.random.multinomial(nd.array([0.5, 0.5]), { get_prob: true }).length, 2);
  assert.deepEqual(nd.random.multinomial(nd.array([0.5, 0.5]), { getProb: true }).length, 2);
  // randn(*shape, loc, scale, ...)
  assert.deepEqual(nd.random.randn(2, 3, { loc: 5, scale: 1 }).shape, [2, 3]);
  assert.deepEqual(nd.random.randn().shape, [1]);
});

test('bad arguments throw MXNetError naming the parameter', () => {
  throwsNaming(() => nd.random.uniform({ shap: [2] }), /unknown argument 'shap'/);
  throwsNaming(() => nd.random.randint(1), /missing required argument 'high'/);
  throwsNaming(() => nd.random.uniform('a'), /'low'/);
  throwsNaming(() => nd.random.normal(0, 1, 'x'), /'shape'/);
  throwsNaming(() => nd.random.randint(0.5, 2), /'low'/);
  throwsNaming(() => nd.random.uniform(nd.array([0]), 1), /same type/);
  throwsNaming(() => nd.random.uniform(0, nd.array([1])), /same type/);
  throwsNaming(() => nd.random.multinomial([0.5, 0.5]), /'data'/);
  throwsNaming(() => mx.random.seed(1.5), /'seed_state'/);
  throwsNaming(() => mx.random.seed(1, { ctx: 3 }), /'ctx'/);
  throwsNaming(() => nd.random.uniform(0, 1, { ctx: [mx.cpu(0), mx.cpu(1)] }), /'ctx'/);
  // the C core's attribute checks (MXNet's): scale must be positive, low <= high
  throwsNaming(() => nd.random.normal(0, -1, [2]), /scale/);
  throwsNaming(() => nd.random.uniform(2, 1, [2]), /low/);
  throwsNaming(() => nd.random.uniform(0, 1, { shape: [2], dtype: 'int32' }), /dtype/);
});

test('uniform and normal: support and moments', () => {
  mx.random.seed(11);
  // U[-2, 3): mean 0.5, variance 25 / 12 = 2.0833. se of the mean sqrt(2.0833 / 2e4) = 0.0102;
  // of the variance sqrt((mu4 - var^2) / n) with mu4 = 5^4 / 80 = 7.8125: 0.0132.
  const u = values(nd.random.uniform(-2, 3, [N]));
  for (const v of u) assert.ok(v >= -2 && v < 3);
  const mu = moments(u);
  near(mu.mean, 0.5, 5 * 0.0102, 'uniform mean');
  near(mu.variance, 25 / 12, 5 * 0.0132, 'uniform variance');
  // N(1, 2^2): se of the mean 2 / sqrt(2e4) = 0.0141; of the variance sqrt(2 * 16 / 2e4) = 0.04
  const mn = moments(values(nd.random.normal(1, 2, [N], { dtype: 'float64' })));
  near(mn.mean, 1, 5 * 0.0141, 'normal mean');
  near(mn.variance, 4, 5 * 0.04, 'normal variance');
  // randn(100, 200, loc=5, scale=0.5): se of the mean 0.5 / sqrt(2e4) = 0.0035
  const r = nd.random.randn(100, 200, { loc: 5, scale: 0.5 });
  assert.deepEqual(r.shape, [100, 200]);
  const mr = moments(values(r));
  near(mr.mean, 5, 5 * 0.0035, 'randn mean');
  near(Math.sqrt(mr.variance), 0.5, 5 * 0.5 / Math.sqrt(2 * N), 'randn sd');
});

test('randint: integers in [low, high), each with frequency 1 / (high - low)', () => {
  mx.random.seed(12);
  const a = nd.random.randint(-3, 4, [N]);
  assert.equal(a.dtype, 'int32');
  const counts = new Map();
  for (const v of values(a)) {
    assert.ok(Number.isInteger(v) && v >= -3 && v < 4, `randint value ${v}`);
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  // p = 1/7 each; se sqrt(p (1 - p) / n) = 0.00247
  for (let v = -3; v < 4; v++) near((counts.get(v) ?? 0) / N, 1 / 7, 5 * 0.00247, `randint frequency of ${v}`);
  const b = nd.random.randint({ low: 0, high: 2 ** 40, shape: [100], dtype: 'int64' });
  assert.equal(b.dtype, 'int64');
  for (const v of values(b)) assert.ok(v >= 0 && v < 2 ** 40);
});

test('exponential, gamma: moments', () => {
  mx.random.seed(13);
  // exponential(scale=2) (Python passes the rate 1 / scale): mean 2, variance 4; se of the mean
  // 2 / sqrt(2e4) = 0.0141, of the variance sqrt((9 - 1) * 16 / 2e4) = 0.08 (mu4 = 9 scale^4)
  const e = values(nd.random.exponential(2, [N]));
  for (const v of e) assert.ok(v >= 0);
  const me = moments(e);
  near(me.mean, 2, 5 * 0.0141, 'exponential mean');
  near(me.variance, 4, 5 * 0.08, 'exponential variance');
  // gamma(alpha=3, beta=0.5): mean alpha beta = 1.5, variance alpha beta^2 = 0.75; se of the mean
  // sqrt(0.75 / 2e4) = 0.0061; excess kurtosis 6 / alpha = 2, so mu4 = 5 * 0.5625 and the
  // variance's se is sqrt((2.8125 - 0.5625) / 2e4) = 0.0106
  const mg = moments(values(nd.random.gamma(3, 0.5, [N])));
  near(mg.mean, 1.5, 5 * 0.0061, 'gamma mean');
  near(mg.variance, 0.75, 5 * 0.0106, 'gamma variance');
});

test('poisson, negative_binomial, generalized_negative_binomial: counts with the right moments', () => {
  mx.random.seed(14);
  // Poisson(4): mean = variance = 4; se of the mean sqrt(4 / 2e4) = 0.0141; of the variance
  // sqrt((lam (1 + 3 lam) - lam^2) / n) = sqrt(36 / 2e4) = 0.0424
  const p = nd.random.poisson(4, [N]);
  assert.equal(p.dtype, 'float32'); // samples are floats, as in MXNet
  const pv = values(p);
  assert.ok(pv.every(isCount), 'poisson samples are non-negative integers');
  const mp = moments(pv);
  near(mp.mean, 4, 5 * 0.0141, 'poisson mean');
  near(mp.variance, 4, 5 * 0.0424, 'poisson variance');
  // negative_binomial(k=5, p=0.5), p the failure probability: mean k (1 - p) / p = 5, variance
  // k (1 - p) / p^2 = 10; se of the mean sqrt(10 / 2e4) = 0.0224
  const nb = values(nd.random.negative_binomial(5, 0.5, [N]));
  assert.ok(nb.every(isCount));
  const mnb = moments(nb);
  near(mnb.mean, 5, 5 * 0.0224, 'negative binomial mean');
  // excess kurtosis 6 / k + (1 - p)^2 / (k p) = 1.3: mu4 = 4.3 * 100, se sqrt(330 / 2e4) = 0.128
  near(mnb.variance, 10, 5 * 0.128, 'negative binomial variance');
  // generalized_negative_binomial(mu=3, alpha=0.25): mean 3, variance mu + alpha mu^2 = 5.25;
  // se of the mean sqrt(5.25 / 2e4) = 0.0162
  const g = values(nd.random.generalized_negative_binomial({ mu: 3, alpha: 0.25, shape: [N] }));
  assert.ok(g.every(isCount));
  const mgn = moments(g);
  near(mgn.mean, 3, 5 * 0.0162, 'generalized negative binomial mean');
  // a negative binomial with r = 1 / alpha = 4, q = r / (r + mu) = 4/7: excess kurtosis
  // 6 / r + (1 - q)^2 / (r q) = 1.58, mu4 = 4.58 * 5.25^2 = 126.3, se sqrt(98.7 / 2e4) = 0.0703
  near(mgn.variance, 5.25, 5 * 0.0703, 'generalized negative binomial variance');
});

test('NDArray parameters: _sample_* with one distribution per element', () => {
  mx.random.seed(15);
  const S = 10000;
  // uniform on [0, 1) and [10, 20): shape (2,) + (S,)
  const u = nd.random.uniform(nd.array([0, 10]), nd.array([1, 20]), { shape: S });
  assert.deepEqual(u.shape, [2, S]);
  const uv = values(u);
  assert.ok(uv.slice(0, S).every((v) => v >= 0 && v < 1));
  assert.ok(uv.slice(S).every((v) => v >= 10 && v < 20));
  near(moments(uv.slice(0, S)).mean, 0.5, 5 * Math.sqrt(1 / 12 / S), 'row 0 mean');
  near(moments(uv.slice(S)).mean, 15, 5 * Math.sqrt(100 / 12 / S), 'row 1 mean');
  // normal with (2, 1) parameters and shape (2, 50): output (2, 1, 2, 50)
  const n = nd.random.normal(nd.array([[-100], [100]]), nd.array([[1], [2]]), [2, 50]);
  assert.deepEqual(n.shape, [2, 1, 2, 50]);
  const nv = values(n);
  near(moments(nv.slice(0, 100)).mean, -100, 5 * 1 / 10, 'normal row 0');
  near(moments(nv.slice(100)).mean, 100, 5 * 2 / 10, 'normal row 1');
  // no shape: one sample per parameter, output shape = parameter shape
  assert.deepEqual(nd.random.normal(nd.array([0, 1, 2]), nd.array([1, 1, 1])).shape, [3]);
  // exponential(scale) as NDArray: the rate is 1 / scale elementwise; means 1 and 10
  const e = values(nd.random.exponential(nd.array([1, 10]), [S]));
  near(moments(e.slice(0, S)).mean, 1, 5 * 1 / 100, 'exponential scale 1');
  near(moments(e.slice(S)).mean, 10, 5 * 10 / 100, 'exponential scale 10');
  // gamma: alpha (2, 4), beta (1, 0.5): means 2 and 2, variances 2 and 1
  const g = values(nd.random.gamma(nd.array([2, 4]), nd.array([1, 0.5]), [S]));
  near(moments(g.slice(0, S)).mean, 2, 5 * Math.sqrt(2 / S), 'gamma row 0');
  near(moments(g.slice(S)).mean, 2, 5 * Math.sqrt(1 / S), 'gamma row 1');
  // poisson: rates (0, 5): all zero, then mean 5
  const p = values(nd.random.poisson(nd.array([0, 5]), [S]));
  assert.ok(p.every(isCount));
  assert.ok(p.slice(0, S).every((v) => v === 0));
  near(moments(p.slice(S)).mean, 5, 5 * Math.sqrt(5 / S), 'poisson rate 5');
  // negative binomial k (2, 8), p (0.5, 0.8): means 2 and 2
  const nb = values(nd.random.negative_binomial(nd.array([2, 8]), nd.array([0.5, 0.8]), [S]));
  near(moments(nb.slice(0, S)).mean, 2, 5 * Math.sqrt(4 / S), 'negative binomial row 0'); // var 2 * 0.5 / 0.25 = 4
  near(moments(nb.slice(S)).mean, 2, 5 * Math.sqrt(2.5 / S), 'negative binomial row 1'); // var 8 * 0.2 / 0.64 = 2.5
  // generalized negative binomial mu (2, 2), alpha (0, 1): variances 2 and 6
  const gn = values(nd.random.generalized_negative_binomial(nd.array([2, 2]), nd.array([0, 1]), [S]));
  const g0 = moments(gn.slice(0, S)), g1 = moments(gn.slice(S));
  near(g0.mean, 2, 5 * Math.sqrt(2 / S), 'gnb row 0 mean');
  near(g1.mean, 2, 5 * Math.sqrt(6 / S), 'gnb row 1 mean');
  // variance se: Poisson(2) sqrt((lam (1 + 3 lam) - lam^2) / n) = sqrt(10 / 1e4) = 0.0316; the
  // r = 1 negative binomial (q = 1/3, excess kurtosis 6 + (2/3)^2 / (1/3) = 7.33, mu4 = 10.33 * 36)
  // sqrt((372 - 36) / 1e4) = 0.183
  near(g0.variance, 2, 5 * 0.0316, 'gnb row 0 variance (Poisson)');
  near(g1.variance, 6, 5 * 0.183, 'gnb row 1 variance');
  // float64 parameters give float32 samples unless dtype says otherwise
  const lam = nd.array([1, 2], { dtype: 'float64' });
  assert.equal(nd.random.poisson(lam).dtype, 'float32');
  assert.equal(nd.random.poisson(lam, { dtype: 'float64' }).dtype, 'float64');
});

test('multinomial: frequencies match the probabilities, get_prob is the log of the chosen one', () => {
  mx.random.seed(16);
  const probs = [[0.1, 0.2, 0.3, 0.4], [0.7, 0, 0.3, 0]];
  const [idx, lp] = nd.random.multinomial(nd.array(probs), { shape: N, get_prob: true });
  assert.deepEqual(idx.shape, [2, N]);
  assert.deepEqual(lp.shape, [2, N]);
  assert.equal(idx.dtype, 'int32');
  assert.equal(lp.dtype, 'float32');
  const iv = values(idx), lv = values(lp);
  for (let r = 0; r < 2; r++) {
    const counts = [0, 0, 0, 0];
    for (let j = 0; j < N; j++) {
      const c = iv[r * N + j];
      assert.ok(probs[r][c] > 0, `drew outcome ${c} of probability 0`);
      counts[c]++;
      near(lv[r * N + j], Math.log(probs[r][c]), 1e-6, 'log probability');
    }
    // se of a frequency sqrt(p (1 - p) / n) <= sqrt(0.25 / 2e4) = 0.0035
    counts.forEach((k, c) => near(k / N, probs[r][c], 5 * Math.sqrt(probs[r][c] * (1 - probs[r][c]) / N) + 1e-12,
      `frequency of outcome ${c} in row ${r}`));
  }
  // one distribution, no shape: one sample of shape (1,); dtype option
  const one = nd.random.multinomial(nd.array([0, 0, 1]));
  assert.deepEqual(one.shape, [1]);
  assert.deepEqual(values(one), [2]);
  const f = nd.random.multinomial(nd.array(probs), { shape: [3], dtype: 'float32' });
  assert.equal(f.dtype, 'float32');
  assert.deepEqual(f.shape, [2, 3]);
});

test('shuffle: a permutation of the rows along the first axis, the same for a seed', () => {
  const x = nd.array([[0, 0], [1, 10], [2, 20], [3, 30], [4, 40], [5, 50]]);
  mx.random.seed(17);
  const a = nd.random.shuffle(x);
  mx.random.seed(17);
  const b = nd.random.shuffle(x);
  assert.deepEqual(a.toArray(), b.toArray());
  const rows = a.toArray();
  for (const [i, t] of rows) assert.equal(t, 10 * i); // rows move whole
  assert.deepEqual(rows.map((r) => r[0]).sort((p, q) => p - q), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(x.toArray(), [[0, 0], [1, 10], [2, 20], [3, 30], [4, 40], [5, 50]]); // input unchanged
  // over many shuffles of (0, 1, 2): each of the 6 orders has frequency 1/6 (se 0.0083 at 2000)
  const y = nd.array([0, 1, 2], { dtype: 'int32' });
  const counts = new Map();
  for (let t = 0; t < 2000; t++) {
    const s = nd.shuffle(y); // the op, as Python's nd.shuffle
    const key = values(s).join('');
    counts.set(key, (counts.get(key) ?? 0) + 1);
    s.dispose();
  }
  assert.equal(counts.size, 6);
  for (const k of counts.values()) near(k / 2000, 1 / 6, 5 * Math.sqrt((1 / 6) * (5 / 6) / 2000), 'order frequency');
});

test('seed makes every sampler reproducible; another seed differs', () => {
  const draw = () => [
    nd.random.uniform(0, 1, [5]), nd.random.normal(0, 1, [5]), nd.random.randn(5), nd.random.randint(0, 100, [5]),
    nd.random.exponential(1, [5]), nd.random.gamma(2, 1, [5]), nd.random.poisson(20, [5]),
    nd.random.negative_binomial(3, 0.5, [5]), nd.random.generalized_negative_binomial(3, 0.5, [5]),
    nd.random.uniform(nd.array([0]), nd.array([1]), [5]), nd.random.multinomial(nd.array([0.25, 0.25, 0.5]), [5]),
    nd.random.shuffle(nd.arange(10)),
  ].map(values);
  mx.random.seed(42);
  const a = draw();
  mx.random.seed(42, 'all');
  const b = draw();
  mx.random.seed(43, { ctx: mx.cpu(0) });
  const c = draw();
  assert.deepEqual(a, b);
  assert.notDeepEqual(a[0], c[0]);
  assert.notDeepEqual(a[1], c[1]);
});

test('ctx is recorded on the result; out receives the samples', () => {
  const a = nd.random.uniform(0, 1, { shape: [2], ctx: mx.cpu(1) });
  assert.equal(ctxOf(a), 'cpu(1)');
  assert.equal(ctxOf(nd.random.normal({ shape: [2] })), 'cpu(0)');
  // out: shape and dtype come from out
  const o = nd.zeros([3], { dtype: 'float64' });
  const r = nd.random.uniform(5, 6, { out: o });
  assert.equal(r, o);
  for (const v of values(o)) assert.ok(v >= 5 && v < 6);
  const o2 = nd.zeros([2, 4]);
  nd.random.normal(nd.array([0, 1000]), nd.array([1, 1]), { out: o2 });
  const v2 = values(o2);
  assert.ok(v2.slice(0, 4).every((v) => Math.abs(v) < 10) && v2.slice(4).every((v) => Math.abs(v - 1000) < 10));
});
