// LeakyReLU, Dropout, Embedding and Crop: against TensorFlow.js's CPU kernels (leakyRelu, elu,
// selu, prelu, erf, gather) on random data, and hand-worked values where tfjs has no equivalent.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';

const { nd, sym } = mx;
const tol = { rtol: 1e-5, atol: 1e-6 };
let seed = 900;
const rand = (shape, lo = -3, hi = 3) => rng(seed++).uniform(sizeOf(shape), lo, hi);
const tfRun = (fn) => tf.tidy(fn).dataSync();

// ---- LeakyReLU ------------------------------------------------------------------------------------
test('LeakyReLU leaky (default slope 0.25 and a given slope) matches tf.leakyRelu', () => {
  const shape = [4, 5, 6];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  assertClose(nd.LeakyReLU(xa).toTypedArray(), tfRun(() => tf.leakyRelu(tf.tensor(x), 0.25)), tol);
  assertClose(nd._npx_leaky_relu(xa, { act_type: 'leaky', slope: 0.1 }).toTypedArray(),
    tfRun(() => tf.leakyRelu(tf.tensor(x), 0.1)), tol);
});

test('LeakyReLU elu matches tf.elu (slope 1) and slope * expm1(x) otherwise', () => {
  const shape = [3, 7];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  assertClose(nd.LeakyReLU(xa, { act_type: 'elu', slope: 1 }).toTypedArray(), tfRun(() => tf.elu(tf.tensor(x))), tol);
  const want = tfRun(() => {
    const t = tf.tensor(x);
    return tf.where(tf.greater(t, 0), t, tf.mul(tf.sub(tf.exp(t), 1), 0.25));
  });
  assertClose(nd.LeakyReLU(xa, { act_type: 'elu' }).toTypedArray(), want, tol);
});

test('LeakyReLU selu matches tf.selu; gelu matches 0.5 x (1 + erf(x / sqrt 2)) with tf.erf', () => {
  const shape = [2, 3, 4, 5];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  assertClose(nd.LeakyReLU(xa, { act_type: 'selu' }).toTypedArray(), tfRun(() => tf.selu(tf.tensor(x))), tol);
  const gelu = tfRun(() => {
    const t = tf.tensor(x);
    return tf.mul(tf.mul(t, 0.5), tf.add(1, tf.erf(tf.div(t, Math.SQRT2))));
  });
  assertClose(nd.LeakyReLU(xa, { act_type: 'gelu' }).toTypedArray(), gelu, { rtol: 1e-5, atol: 1e-5 });
});

test('LeakyReLU prelu: gamma (C,) along axis 1 and a one-element gamma match tf.prelu', () => {
  const shape = [2, 4, 3, 5];
  const x = rand(shape), g = rand([4], 0.05, 0.9);
  const xa = nd.array(x, { shape });
  const y = nd.LeakyReLU(xa, nd.array(g, { shape: [4] }), { act_type: 'prelu' });
  assertClose(y.toTypedArray(), tfRun(() => tf.prelu(tf.tensor(x, shape), tf.tensor(g, [4, 1, 1]))), tol);
  const y1 = nd._npx_leaky_relu(xa, nd.array([0.3], { shape: [1] }), { act_type: 'prelu' });
  assertClose(y1.toTypedArray(), tfRun(() => tf.prelu(tf.tensor(x), tf.scalar(0.3))), tol);
  // 2-D data (N, C)
  const x2 = rand([6, 4]);
  const y2 = nd.LeakyReLU(nd.array(x2, { shape: [6, 4] }), nd.array(g, { shape: [4] }), { act_type: 'prelu' });
  assertClose(y2.toTypedArray(), tfRun(() => tf.prelu(tf.tensor(x2, [6, 4]), tf.tensor(g))), tol);
  assert.throws(() => nd.LeakyReLU(xa, nd.array([1, 2, 3], { shape: [3] }), { act_type: 'prelu' }),
    (e) => e instanceof mx.MXNetError && /LeakyReLU/.test(e.message) && /cannot broadcast gamma of shape \(3,\)/.test(e.message));
});

test('LeakyReLU prelu in a symbol: gamma is inferred as (C,) and initialised to 0.25', () => {
  const s = sym.LeakyReLU(sym.var('data'), { act_type: 'prelu', name: 'act' });
  assert.deepEqual(s.listArguments(), ['data', 'act_gamma']);
  const [args, outs] = s.inferShape({ data: [2, 3, 4, 4] });
  assert.deepEqual(args, [[2, 3, 4, 4], [3]]);
  assert.deepEqual(outs, [[2, 3, 4, 4]]);
  const gamma = JSON.parse(s.tojson()).nodes.find((n) => n.name === 'act_gamma');
  assert.equal(gamma.attrs.__init__, '["Constant", {"value": 0.25}]');
  // rrelu has a hidden mask output; the symbol shows one
  assert.deepEqual(sym.LeakyReLU(sym.var('x'), { act_type: 'rrelu', name: 'r' }).listOutputs(), ['r_output']);
});

test('LeakyReLU rrelu at inference is leaky with slope (lower + upper) / 2', () => {
  const x = rand([50]);
  const y = nd.LeakyReLU(nd.array(x), { act_type: 'rrelu', lower_bound: 0.1, upper_bound: 0.5 });
  assertClose(y.toTypedArray(), tfRun(() => tf.leakyRelu(tf.tensor(x), 0.3)), tol);
});

// ---- Dropout -----------------------------------------------------------------------------------------
test('Dropout at inference (the default) is the identity; it shows one output', () => {
  const shape = [3, 4, 5];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  const y = nd.Dropout(xa, { p: 0.5 });
  assert.ok(y instanceof mx.NDArray);
  assert.deepEqual(y.shape, shape);
  assert.deepEqual(Array.from(y.toTypedArray()), Array.from(x));
  assert.deepEqual(Array.from(nd._npx_dropout(xa, { p: 0.9, axes: [1] }).toTypedArray()), Array.from(x));
  assert.deepEqual(sym.Dropout(sym.var('x'), { name: 'd' }).listOutputs(), ['d_output']);
});

test("Dropout mode='always' drops about p and scales the rest by 1/(1-p)", () => {
  const x = rand([4000], 0.5, 2);
  const y = nd.Dropout(nd.array(x), { p: 0.25, mode: 'always' }).toTypedArray();
  let zeros = 0;
  for (let i = 0; i < x.length; i++) {
    if (y[i] === 0) zeros++;
    else assertClose([y[i]], [x[i] / 0.75], { ...tol, msg: `element ${i}` });
  }
  assert.ok(Math.abs(zeros / x.length - 0.25) < 0.03, `dropped ${zeros / x.length}`);
  assert.throws(() => nd.Dropout(nd.array(x), { p: 2 }), /Dropout.*p=2 is out of range/);
});

// ---- Embedding ----------------------------------------------------------------------------------------
test('Embedding matches tf.gather on clipped indices, for every alias', () => {
  const inputDim = 7, outputDim = 5;
  const w = rand([inputDim, outputDim]);
  const idx = [0, 3, 6, 2, 2, -4, 9, 1.7, 5.99, -0.5, 4, 6];
  const clipped = idx.map((v) => Math.min(Math.max(Math.trunc(v), 0), inputDim - 1));
  const want = tfRun(() => tf.gather(tf.tensor(w, [inputDim, outputDim]), tf.tensor(clipped, [3, 4], 'int32')));
  for (const fn of [nd.Embedding, nd._npx_embedding, nd._sparse_Embedding]) {
    const y = fn(nd.array(idx, { shape: [3, 4] }), nd.array(w, { shape: [inputDim, outputDim] }),
      { input_dim: inputDim, output_dim: outputDim });
    assert.deepEqual(y.shape, [3, 4, outputDim]);
    assertClose(y.toTypedArray(), want, { rtol: 0, atol: 0 });
  }
  // int32 indices work the same
  const yi = nd.Embedding(nd.array(clipped, { shape: [12], dtype: 'int32' }), nd.array(w, { shape: [inputDim, outputDim] }),
    { input_dim: inputDim, output_dim: outputDim });
  assertClose(yi.toTypedArray(), want, { rtol: 0, atol: 0 });
  assert.throws(() => nd.Embedding(nd.array(idx), nd.array(w, { shape: [inputDim, outputDim] }), { input_dim: 8, output_dim: 5 }),
    /Embedding.*weight has shape \(7, 5\), expected .* \(8, 5\)/);
});

// ---- Crop -------------------------------------------------------------------------------------------------
test('Crop: h_w at an offset, centered, and to the size of crop_like (hand-worked)', () => {
  // data (1, 2, 4, 5) = 0..39
  const x = nd.arange(0, 40).reshape(1, 2, 4, 5);
  const a = nd.Crop(x, { num_args: 1, h_w: [2, 3], offset: [1, 2] });
  assert.deepEqual(a.shape, [1, 2, 2, 3]);
  assert.deepEqual(Array.from(a.toTypedArray()), [7, 8, 9, 12, 13, 14, 27, 28, 29, 32, 33, 34]);
  const b = nd.Crop(x, { num_args: 1, h_w: [3, 3], center_crop: true }); // offset (0, 1)
  assert.deepEqual(Array.from(b.toTypedArray()), [1, 2, 3, 6, 7, 8, 11, 12, 13, 21, 22, 23, 26, 27, 28, 31, 32, 33]);
  const like = nd.zeros([5, 1, 2, 2]);
  const c = nd.Crop(x, like, { center_crop: true }); // num_args = 2 from the inputs; offset (1, 1)
  assert.deepEqual(c.shape, [1, 2, 2, 2]);
  assert.deepEqual(Array.from(c.toTypedArray()), [6, 7, 11, 12, 26, 27, 31, 32]);
  const d = nd.Crop(x, like); // offset (0, 0)
  assert.deepEqual(Array.from(d.toTypedArray()), [0, 1, 5, 6, 20, 21, 25, 26]);
  assert.throws(() => nd.Crop(x, { num_args: 1, h_w: [2, 3], offset: [0, 3] }), /Crop.*offset\[1\] = 3 must be in \[0, 2\]/);
  assert.throws(() => nd.Crop(nd.zeros([2, 3]), { num_args: 1, h_w: [1, 1] }), /Crop.*4-D/);
  assert.deepEqual(nd.Crop(x, { num_args: 1, h_w: [1, 1] }).shape, [1, 2, 1, 1]);
});

test('LeakyReLU leaky and its gradient, hand-worked: x > 0 ? x : slope x; ograd * (y > 0 ? 1 : slope); lanes and tail', () => {
  const x = [NaN, -1, 0, -0, 2, 0.5, -3, Infinity, -Infinity, -2, 7];
  const wantY = [NaN, -0.25, 0, -0, 2, 0.5, -0.75, Infinity, -Infinity, -0.5, 7];
  const y = nd.LeakyReLU(nd.array(x), { act_type: 'leaky', slope: 0.25 });
  assert.deepEqual(Array.from(y.toTypedArray()), wantY);
  const g = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  const d = nd._backward_LeakyReLU(nd.array(g), nd.array(x), y, { act_type: 'leaky', slope: 0.25 });
  assert.deepEqual(Array.from(d.toTypedArray()), [0.25, 0.5, 0.75, 1, 5, 6, 1.75, 8, 2.25, 2.5, 11]);
});

test("Dropout's training mask keeps element i when the seeded stream's i-th uniform draw is below 1 - p", () => {
  // the mask is Bernoulli(1 - p) / (1 - p) from mx.random's stream, one draw per element: the same
  // draws nd.random.uniform makes after the same seed (float64, so that no draw is rounded)
  const n = 1003, p = 0.3;
  mx.random.seed(11);
  const m = mx.autograd.trainMode(() => nd.Dropout(nd.ones([n]), { p })).toTypedArray(); // ones * mask
  mx.random.seed(11);
  const u = nd.random.uniform({ low: 0, high: 1, shape: [n], dtype: 'float64' }).toTypedArray();
  const keep = Math.fround(1 - Math.fround(p)), scale = Math.fround(1 / keep);
  let kept = 0;
  for (let i = 0; i < n; i++) {
    assert.equal(m[i], u[i] < keep ? scale : 0, `element ${i} (draw ${u[i]})`);
    kept += m[i] !== 0;
  }
  assert.ok(Math.abs(kept / n - 0.7) < 0.05, `kept ${kept / n}`);
  // at inference the mask is all ones (the output is the input)
  assert.deepEqual(Array.from(nd.Dropout(nd.array([1, 2, 3, 4, 5]), { p }).toTypedArray()), [1, 2, 3, 4, 5]);
});
