// softmax, log_softmax, SoftmaxActivation, SoftmaxOutput and the regression outputs against
// TensorFlow.js's CPU kernels. tf.softmax / tf.logSoftmax work on the last axis only, so other
// axes are moved last with tf.transpose and moved back.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, sizeOf } from './oracle.mjs';

const { nd } = mx;

// fn (tf.softmax or tf.logSoftmax) along `axis` of a tfjs tensor.
function alongAxis(fn, t, axis) {
  const r = t.shape.length;
  const a = axis < 0 ? axis + r : axis;
  if (a === r - 1) return fn(t);
  const perm = [...Array(r).keys()].filter((i) => i !== a).concat([a]);
  const inv = perm.map((_, i) => perm.indexOf(i));
  return tf.transpose(fn(tf.transpose(t, perm)), inv);
}
const ref = (fn, data, shape, axis) => tf.tidy(() => alongAxis(fn, tf.tensor(data, shape), axis).dataSync());

const CASES = [
  [[7], [-1, 0]],
  [[4, 37], [-1, 0, 1, -2]],
  [[3, 4, 5], [-1, 0, 1, 2, -2]],
  [[2, 3, 4, 5], [-1, 0, 1, 2, -3]],
];

for (const [shape, axes] of CASES) {
  const n = sizeOf(shape);
  const data = rng(500 + n).uniform(n, -6, 6);
  test(`softmax / log_softmax on ${JSON.stringify(shape)} match tfjs on axes ${axes}`, () => {
    const x = nd.array(data, { shape });
    for (const axis of axes) {
      const s = nd.softmax(x, { axis });
      assert.deepEqual(s.shape, shape);
      assertClose(s.toTypedArray(), ref(tf.softmax, data, shape, axis), { rtol: 2e-6, atol: 1e-7, msg: `softmax axis ${axis}` });
      const l = nd.log_softmax(x, { axis });
      assertClose(l.toTypedArray(), ref(tf.logSoftmax, data, shape, axis), { rtol: 2e-6, atol: 5e-7, msg: `log_softmax axis ${axis}` });
    }
  });
}

test('temperature divides the logits: softmax(x / T) in tfjs', () => {
  const shape = [5, 23];
  const data = rng(4).uniform(115, -10, 10);
  const x = nd.array(data, { shape });
  for (const [T, axis] of [[0.5, -1], [2.5, 0], [3, 1]]) {
    const scaled = Float32Array.from(data, (v) => v / T);
    assertClose(nd.softmax(x, { temperature: T, axis }).toTypedArray(), ref(tf.softmax, scaled, shape, axis),
      { rtol: 2e-6, atol: 1e-7, msg: `T=${T}` });
    assertClose(nd._npx_log_softmax(x, { temperature: T, axis }).toTypedArray(), ref(tf.logSoftmax, scaled, shape, axis),
      { rtol: 2e-6, atol: 5e-7, msg: `log T=${T}` });
  }
});

test('hand-worked: softmax of [1, 2, 3], and the _npx_ aliases', () => {
  const want = [0.0900305732, 0.2447284711, 0.6652409558];
  assertClose(nd.softmax(nd.array([1, 2, 3])).toTypedArray(), want);
  assertClose(nd._npx_softmax(nd.array([1, 2, 3])).toTypedArray(), want);
  assertClose(nd.log_softmax(nd.array([1, 2, 3])).toTypedArray(), want.map(Math.log), { rtol: 1e-6 });
  // shifting every logit changes nothing; very large logits do not overflow
  assertClose(nd.softmax(nd.array([1001, 1002, 1003])).toTypedArray(), want);
});

test('long rows (SIMD exp) and wide columns match tfjs', () => {
  for (const shape of [[3, 1001], [1, 4099], [1000, 3]]) {
    const n = sizeOf(shape);
    const d = rng(n).uniform(n, -30, 30);
    const x = nd.array(d, { shape });
    for (const axis of [-1, 0]) {
      assertClose(nd.softmax(x, { axis }).toTypedArray(), ref(tf.softmax, d, shape, axis), { rtol: 5e-6, atol: 1e-12, msg: `${shape} axis ${axis}` });
    }
  }
});

test('use_length: only the first length[i] entries take part, the rest are 0', () => {
  const shape = [3, 2, 6];
  const d = rng(19).uniform(36, -3, 3);
  const lengths = [1, 6, 3, 9, 2, 4]; // one length per (row, column-of-2); 9 > 6 means all
  const masked = Float32Array.from(d, (v, k) => (k % 6 < lengths[Math.floor(k / 6)] ? v : -Infinity));
  const x = nd.array(d, { shape });
  const len = nd.array(new Int32Array(lengths), { shape: [3, 2] });
  const y = nd.softmax(x, len, { use_length: true });
  assertClose(y.toTypedArray(), ref(tf.softmax, masked, shape, -1), { rtol: 2e-6, atol: 1e-7 });
  // along axis 1 the length has shape (3, 6); the general path gives the same masking
  const l1 = Float32Array.from({ length: 18 }, (_, k) => (k % 3) + (k % 2 === 0 ? 0 : 1)); // 0..3; 0 = all zeros
  const y1 = nd.softmax(x, nd.array(l1, { shape: [3, 6] }), { use_length: true, axis: 1 });
  const got = y1.toTypedArray();
  for (let b = 0; b < 3; b++) {
    for (let c = 0; c < 6; c++) {
      const L = Math.min(l1[b * 6 + c], 2);
      const col = [0, 1].map((j) => d[(b * 2 + j) * 6 + c]);
      const m = Math.max(...col.slice(0, L));
      const e = col.map((v, j) => (j < L ? Math.exp(v - m) : 0));
      const s = e.reduce((p, q) => p + q, 0);
      for (let j = 0; j < 2; j++) {
        const want = L === 0 ? 0 : e[j] / s;
        assert.ok(Math.abs(got[(b * 2 + j) * 6 + c] - want) <= 1e-6, `b${b} c${c} j${j}: ${got[(b * 2 + j) * 6 + c]} vs ${want}`);
      }
    }
  }
});

test('dtype: float64 output from float32 input matches tfjs', () => {
  const shape = [4, 9];
  const d = rng(23).uniform(36, -4, 4);
  const y = nd.softmax(nd.array(d, { shape }), { dtype: 'float64' });
  assert.equal(y.dtype, 'float64');
  assertClose(y.toTypedArray(), ref(tf.softmax, d, shape, -1), { rtol: 1e-6, atol: 1e-8 });
  const l = nd.log_softmax(nd.array(Float64Array.from(d), { shape }));
  assert.equal(l.dtype, 'float64');
  assertClose(l.toTypedArray(), ref(tf.logSoftmax, d, shape, -1), { rtol: 1e-6, atol: 1e-7 });
});

test('SoftmaxActivation: instance = last axis, channel = axis 1', () => {
  const shape = [2, 5, 3, 4];
  const d = rng(31).uniform(120, -3, 3);
  const x = nd.array(d, { shape });
  assertClose(nd.SoftmaxActivation(x).toTypedArray(), ref(tf.softmax, d, shape, -1), { rtol: 2e-6, atol: 1e-7 });
  assertClose(nd.SoftmaxActivation(x, { mode: 'channel' }).toTypedArray(), ref(tf.softmax, d, shape, 1), { rtol: 2e-6, atol: 1e-7 });
  assert.throws(() => nd.SoftmaxActivation(nd.array([1, 2]), { mode: 'channel' }),
    (e) => e instanceof mx.MXNetError && /Operator SoftmaxActivation/.test(e.message) && /2 dimensions/.test(e.message));
});

test('SoftmaxOutput: rows of (N, size/N), multi_output over C, preserve_shape over the last axis', () => {
  const shape = [3, 4, 5];
  const d = rng(37).uniform(60, -3, 3);
  const x = nd.array(d, { shape });
  const y = nd.SoftmaxOutput(x, nd.zeros([3, 4])); // label: the data shape minus the last dim
  assert.deepEqual(y.shape, shape);
  assertClose(y.toTypedArray(), ref(tf.softmax, d, [3, 20], -1), { rtol: 2e-6, atol: 1e-7, msg: 'default' });
  const m = nd.SoftmaxOutput(x, nd.zeros([3, 5]), { multi_output: true, grad_scale: 2, normalization: 'valid' });
  assertClose(m.toTypedArray(), ref(tf.softmax, d, shape, 1), { rtol: 2e-6, atol: 1e-7, msg: 'multi_output' });
  const p = nd.Softmax(x, nd.zeros([3, 4]), { preserve_shape: true, use_ignore: true, ignore_label: 0 });
  assertClose(p.toTypedArray(), ref(tf.softmax, d, shape, -1), { rtol: 2e-6, atol: 1e-7, msg: 'preserve_shape' });
  // a probability label of the data's shape is accepted
  assert.deepEqual(nd.SoftmaxOutput(x, nd.zeros(shape)).shape, shape);
  assert.throws(() => nd.SoftmaxOutput(x, nd.zeros([4])),
    (e) => e instanceof mx.MXNetError && /Operator SoftmaxOutput/.test(e.message) && /label shape \(4,\)/.test(e.message));
  assert.throws(() => nd.SoftmaxOutput(x, nd.zeros([3, 4]), { normalization: 'sum' }), /normalization/);
});

test('regression outputs: identity (Linear, MAE) and sigmoid (Logistic)', () => {
  const d = rng(43).uniform(8, -4, 4);
  const x = nd.array(d, { shape: [8, 1] });
  const label = nd.zeros([8]); // (N,) label for (N, 1) data
  const sig = tf.tidy(() => tf.sigmoid(tf.tensor(d)).dataSync());
  assertClose(nd.LogisticRegressionOutput(x, label).toTypedArray(), sig, { rtol: 2e-6 });
  assertClose(nd.LinearRegressionOutput(x, label, { grad_scale: 0.5 }).toTypedArray(), d, { rtol: 0, atol: 0 });
  assertClose(nd.MAERegressionOutput(x, nd.zeros([8, 1])).toTypedArray(), d, { rtol: 0, atol: 0 });
  assert.throws(() => nd.LinearRegressionOutput(x, nd.zeros([4, 2])),
    (e) => e instanceof mx.MXNetError && /Operator LinearRegressionOutput/.test(e.message) && /label shape/.test(e.message));
});

test('x.softmax() is softmax over the last axis', () => {
  const d = rng(47).uniform(24, -2, 2);
  const x = nd.array(d, { shape: [2, 3, 4] });
  assertClose(x.softmax().toTypedArray(), ref(tf.softmax, d, [2, 3, 4], -1), { rtol: 2e-6, atol: 1e-7 });
  assertClose(x.softmax({ axis: 1 }).toTypedArray(), ref(tf.softmax, d, [2, 3, 4], 1), { rtol: 2e-6, atol: 1e-7 });
});

test('errors name the op and the problem; the next call works', () => {
  const x = nd.array([[1, 2, 3], [4, 5, 6]]);
  assert.throws(() => nd.softmax(x, { axis: 2 }),
    (e) => e instanceof mx.MXNetError && /Operator softmax/.test(e.message) && /axis 2 is out of range/.test(e.message));
  assert.throws(() => nd.log_softmax(x, { axis: -3 }),
    (e) => e instanceof mx.MXNetError && /Operator log_softmax/.test(e.message) && /axis -3/.test(e.message));
  assert.throws(() => nd.softmax(x, nd.array([1, 2, 3]), { use_length: true }),
    (e) => e instanceof mx.MXNetError && /length/.test(e.message));
  assert.throws(() => nd.softmax(x, { dtype: 'int32' }), (e) => e instanceof mx.MXNetError && /dtype/.test(e.message));
  assertClose(nd.softmax(x, { axis: 0 }).toTypedArray(), ref(tf.softmax, [1, 2, 3, 4, 5, 6], [2, 3], 0));
});

test('softmax / log_softmax over channels (axis 1): hand-worked probabilities in lanes and the tail, large logits', () => {
  // 6 positions (a 4-lane block and a tail of 2); channel values (b, b + ln 2, b + ln 3) give (1, 2, 3) / 6
  const base = [0, 1000, -1000, 5, 0.5, -80];
  const x = [base, base.map((b) => b + Math.LN2), base.map((b) => b + Math.log(3))].flat();
  const p = nd.softmax(nd.array(x, { shape: [1, 3, 6] }), { axis: 1 }).toTypedArray();
  const lp = nd.log_softmax(nd.array(x, { shape: [1, 3, 6] }), { axis: 1 }).toTypedArray();
  for (let i = 0; i < 6; i++) {
    // the exact softmax of the float32 inputs (near (1, 2, 3) / 6; 1000 + ln 2 is rounded in float32)
    const xf = [0, 1, 2].map((c) => Math.fround(x[c * 6 + i]));
    const e = xf.map((v) => Math.exp(v - Math.max(...xf))), sum = e[0] + e[1] + e[2];
    for (let c = 0; c < 3; c++) {
      assertClose([p[c * 6 + i]], [e[c] / sum], { rtol: 2e-6, atol: 0, msg: `p position ${i} channel ${c}` });
      assertClose([p[c * 6 + i]], [(c + 1) / 6], { rtol: 1e-4, atol: 0, msg: `p position ${i} channel ${c} (hand-worked)` });
      assertClose([lp[c * 6 + i]], [Math.log(e[c] / sum)], { rtol: 2e-6, atol: 2e-6, msg: `log p position ${i} channel ${c}` });
    }
  }
});
