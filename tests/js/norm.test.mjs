// Normalization ops (BatchNorm, _contrib_BatchNormWithReLU, LayerNorm, InstanceNorm, GroupNorm,
// L2Normalization, LRN) against TensorFlow.js's CPU kernels on random data: tf.batchNorm,
// tf.moments-based normalizations, tf.norm / sums of squares and tf.localResponseNormalization.
// BatchNorm's training mode needs autograd's train flag, which JS does not have yet: it is
// tested in tests/c/test_norm.c. Also: visible outputs with output_mean_var, symbol inference
// (parameter shapes filled from data, aux states, __init__ of the moving statistics) and errors.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';

const { nd } = mx;
const tol = { rtol: 1e-5, atol: 1e-5 };
let seed = 500;
const rand = (shape, lo = -2, hi = 2) => rng(seed++).uniform(sizeOf(shape), lo, hi);
const ndarr = (data, shape, dtype) => nd.array(data, dtype ? { shape, dtype } : { shape });
const tfRun = (fn) => tf.tidy(fn).dataSync();
// A shape of ones except `len` at `axis` (to broadcast a per-channel vector in tfjs).
const bshape = (rank, axis, len) => Array.from({ length: rank }, (_, i) => (i === axis ? len : 1));
const normAxis = (axis, rank) => (axis < 0 ? axis + rank : axis);

// ---- BatchNorm (inference) ------------------------------------------------------------------------
// tf.batchNorm(x, mean, variance, offset, scale, eps) = (x - mean) / sqrt(variance + eps) * scale + offset
// with (C,) vectors along the LAST axis (its CPU kernel indexes the vectors by flat index modulo C,
// so it does not broadcast other shapes): MXNet's channel axis is moved last and back.
function bnOracle(x, shape, axis, p, fixGamma, eps, relu = false) {
  const ax = normAxis(axis, shape.length), rank = shape.length;
  const perm = [...Array(rank).keys()].filter((i) => i !== ax).concat([ax]);
  const inv = perm.map((_, i) => perm.indexOf(i));
  return tfRun(() => {
    const v = (a) => tf.tensor1d(a);
    const xt = tf.transpose(tf.tensor(x, shape), perm);
    const y = tf.batchNorm(xt, v(p.mm), v(p.mv), v(p.beta), fixGamma ? undefined : v(p.gamma), eps);
    const back = tf.transpose(y, inv);
    return relu ? tf.relu(back) : back;
  });
}
function bnParams(C) {
  return { gamma: rand([C], 0.2, 2), beta: rand([C]), mm: rand([C], -1, 1), mv: rand([C], 0.3, 3) };
}
function bnArgs(x, shape, p, dtype) {
  const C = p.gamma.length, pd = dtype === 'float64' ? 'float64' : undefined;
  return [ndarr(x, shape, dtype), ndarr(p.gamma, [C], pd), ndarr(p.beta, [C], pd), ndarr(p.mm, [C], pd), ndarr(p.mv, [C], pd)];
}

const bnCases = [
  // [label, shape, axis]
  ['NCHW (2, 3, 4, 5)', [2, 3, 4, 5], 1],
  ['odd NCHW (3, 7, 5, 3)', [3, 7, 5, 3], 1],
  ['NHWC axis -1 (2, 3, 5, 6)', [2, 3, 5, 6], -1],
  ['axis 2 of (2, 3, 5, 4)', [2, 3, 5, 4], 2],
  ['2-D axis 1 (6, 5)', [6, 5], 1],
  ['2-D axis -1 (7, 3)', [7, 3], -1],
  ['3-D (4, 9, 37)', [4, 9, 37], 1],
];
for (const [label, shape, axis] of bnCases) {
  for (const fixGamma of [true, false]) {
    test(`BatchNorm ${label}, fix_gamma=${fixGamma} matches tf.batchNorm`, () => {
      const C = shape[normAxis(axis, shape.length)];
      const x = rand(shape, -3, 4), p = bnParams(C);
      const args = bnArgs(x, shape, p);
      const y = nd.BatchNorm(...args, { axis, fix_gamma: fixGamma, eps: 1e-3 });
      assert.deepEqual(y.shape, shape);
      assertClose(y.toTypedArray(), bnOracle(x, shape, axis, p, fixGamma, 1e-3), { ...tol, msg: label });
      // inference leaves gamma and the moving statistics untouched
      assertClose(args[1].toTypedArray(), p.gamma, { rtol: 0, atol: 0 });
      assertClose(args[3].toTypedArray(), p.mm, { rtol: 0, atol: 0 });
      assertClose(args[4].toTypedArray(), p.mv, { rtol: 0, atol: 0 });
    });
  }
}

test('BatchNorm default eps is 1e-3 and fix_gamma defaults to True (a stored gamma is ignored)', () => {
  const shape = [2, 4, 3, 3], x = rand(shape), p = bnParams(4);
  p.mv = Float32Array.from([1e-3, 2e-3, 0.01, 0.5]); // small variances make eps visible
  const y = nd.BatchNorm(...bnArgs(x, shape, p));
  assertClose(y.toTypedArray(), bnOracle(x, shape, 1, p, true, 1e-3), tol);
  const y2 = nd._npx_batch_norm(...bnArgs(x, shape, p), { fix_gamma: false, eps: 1e-5 });
  assertClose(y2.toTypedArray(), bnOracle(x, shape, 1, p, false, 1e-5), tol);
});

test('BatchNorm output_mean_var returns [output, mean, var] with var = invstd of moving_var', () => {
  const shape = [3, 5, 2, 3], x = rand(shape), p = bnParams(5);
  const outs = nd.BatchNorm(...bnArgs(x, shape, p), { output_mean_var: true, fix_gamma: false, eps: 2e-3 });
  assert.equal(outs.length, 3);
  assert.deepEqual(outs[1].shape, [5]);
  assert.deepEqual(outs[2].shape, [5]);
  assertClose(outs[0].toTypedArray(), bnOracle(x, shape, 1, p, false, 2e-3), tol);
  assertClose(outs[1].toTypedArray(), p.mm, tol);
  assertClose(outs[2].toTypedArray(), tfRun(() => tf.rsqrt(tf.add(tf.tensor(p.mv), 2e-3))), tol);
});

test('BatchNorm float64 and float16 data', () => {
  const shape = [2, 3, 5, 7], x = rand(shape), p = bnParams(3);
  const want = bnOracle(x, shape, 1, p, false, 1e-3);
  const y64 = nd.BatchNorm(...bnArgs(Float64Array.from(x), shape, p, 'float64'), { fix_gamma: false });
  assert.equal(y64.dtype, 'float64');
  assertClose(y64.toTypedArray(), want, tol);
  // float16 data rounds x to half precision: the oracle sees the same rounded values
  const x16 = ndarr(x, shape, 'float16');
  const xr = x16.toTypedArray();
  const args16 = bnArgs(x, shape, p);
  args16[0] = x16;
  const outs = nd.BatchNorm(...args16, { fix_gamma: false, output_mean_var: true });
  assert.equal(outs[0].dtype, 'float16');
  assert.equal(outs[1].dtype, 'float32');
  assertClose(outs[0].toTypedArray(), bnOracle(xr, shape, 1, p, false, 1e-3), { rtol: 2e-3, atol: 2e-3 });
});

test('_contrib_BatchNormWithReLU = relu(BatchNorm)', () => {
  for (const [shape, axis] of [[[2, 6, 3, 5], 1], [[5, 4], -1]]) {
    const C = shape[normAxis(axis, shape.length)], x = rand(shape), p = bnParams(C);
    const y = nd._contrib_BatchNormWithReLU(...bnArgs(x, shape, p), { axis, fix_gamma: false });
    assertClose(y.toTypedArray(), bnOracle(x, shape, axis, p, false, 1e-3, true), tol);
    const outs = nd._contrib_BatchNormWithReLU(...bnArgs(x, shape, p), { axis, output_mean_var: true });
    assert.equal(outs.length, 3);
    assertClose(outs[0].toTypedArray(), bnOracle(x, shape, axis, p, true, 1e-3, true), tol);
  }
});

// ---- LayerNorm ----------------------------------------------------------------------------------
function lnOracle(x, shape, axis, gamma, beta, eps) {
  const ax = normAxis(axis, shape.length), bs = bshape(shape.length, ax, shape[ax]);
  let mean, std, y;
  tf.tidy(() => {
    const t = tf.tensor(x, shape);
    const { mean: m, variance } = tf.moments(t, ax, true);
    const s = tf.sqrt(tf.add(variance, eps));
    const out = tf.add(tf.mul(tf.div(tf.sub(t, m), s), tf.tensor(gamma, bs)), tf.tensor(beta, bs));
    [mean, std, y] = [m.dataSync(), s.dataSync(), out.dataSync()];
  });
  return { mean, std, y };
}

const lnCases = [
  [[3, 4, 5], -1], [[3, 4, 5], 0], [[3, 4, 5], 1], [[3, 4, 5], 2], [[2, 7, 9], -2],
  [[5, 33], -1], [[4, 1030], 1], [[2, 3, 2, 5], 1], [[6], 0],
];
for (const [shape, axis] of lnCases) {
  test(`LayerNorm (${shape}) axis ${axis} matches tf.moments normalization`, () => {
    const n = shape[normAxis(axis, shape.length)];
    const x = rand(shape, -1, 3), gamma = rand([n], 0.5, 1.5), beta = rand([n]);
    const want = lnOracle(x, shape, axis, gamma, beta, 1e-5);
    const y = nd.LayerNorm(ndarr(x, shape), ndarr(gamma, [n]), ndarr(beta, [n]), { axis });
    assert.deepEqual(y.shape, shape);
    assertClose(y.toTypedArray(), want.y, { rtol: 1e-4, atol: 1e-4 });
  });
}

test('LayerNorm output_mean_var: mean and std have the data shape with the axis set to 1', () => {
  const shape = [3, 4, 6], x = rand(shape), gamma = rand([4]), beta = rand([4]);
  const want = lnOracle(x, shape, 1, gamma, beta, 1e-3);
  const [y, mean, std] = nd._npx_layer_norm(ndarr(x, shape), ndarr(gamma, [4]), ndarr(beta, [4]),
    { axis: 1, eps: 1e-3, output_mean_var: true });
  assert.deepEqual(mean.shape, [3, 1, 6]);
  assert.deepEqual(std.shape, [3, 1, 6]);
  assertClose(y.toTypedArray(), want.y, { rtol: 1e-4, atol: 1e-4 });
  assertClose(mean.toTypedArray(), want.mean, tol);
  assertClose(std.toTypedArray(), want.std, tol);
});

// ---- InstanceNorm ---------------------------------------------------------------------------------
function inOracle(x, shape, gamma, beta, eps) {
  const C = shape[1], axes = shape.map((_, i) => i).slice(2), bs = bshape(shape.length, 1, C);
  return tfRun(() => {
    const t = tf.tensor(x, shape);
    const { mean, variance } = tf.moments(t, axes, true);
    const z = tf.div(tf.sub(t, mean), tf.sqrt(tf.add(variance, eps)));
    return tf.add(tf.mul(z, tf.tensor(gamma, bs)), tf.tensor(beta, bs));
  });
}
for (const shape of [[2, 3, 4, 5], [2, 3, 7], [1, 4, 3, 3, 3], [3, 2, 1030]]) {
  test(`InstanceNorm (${shape}) matches tf.moments normalization`, () => {
    const C = shape[1], x = rand(shape, -1, 2), gamma = rand([C]), beta = rand([C]);
    const y = nd.InstanceNorm(ndarr(x, shape), ndarr(gamma, [C]), ndarr(beta, [C]), { eps: 1e-3 });
    assertClose(y.toTypedArray(), inOracle(x, shape, gamma, beta, 1e-3), { rtol: 1e-4, atol: 1e-4 });
    const yd = nd.InstanceNorm(ndarr(x, shape), ndarr(gamma, [C]), ndarr(beta, [C])); // default eps 1e-3
    assertClose(yd.toTypedArray(), inOracle(x, shape, gamma, beta, 1e-3), { rtol: 1e-4, atol: 1e-4 });
  });
}

// ---- GroupNorm (MXNet 1.x: gamma and beta per group) ------------------------------------------------
function gnOracle(x, shape, G, gamma, beta, eps) {
  const N = shape[0], L = sizeOf(shape) / N / G;
  let y, mean, std;
  tf.tidy(() => {
    const t = tf.reshape(tf.tensor(x, shape), [N, G, L]);
    const { mean: m, variance } = tf.moments(t, 2, true);
    const s = tf.sqrt(tf.add(variance, eps));
    const z = tf.div(tf.sub(t, m), s);
    const out = tf.add(tf.mul(z, tf.tensor(gamma, [1, G, 1])), tf.tensor(beta, [1, G, 1]));
    [y, mean, std] = [out.dataSync(), m.dataSync(), s.dataSync()];
  });
  return { y, mean, std };
}
for (const [shape, G] of [[[2, 6, 3, 5], 2], [[2, 6, 3, 5], 1], [[3, 6, 7], 3], [[2, 4, 2, 2, 3], 4]]) {
  test(`GroupNorm (${shape}) num_groups ${G} matches tf.moments normalization`, () => {
    const x = rand(shape, -1, 3), gamma = rand([G], 0.5, 2), beta = rand([G]);
    const want = gnOracle(x, shape, G, gamma, beta, 1e-5);
    const y = nd.GroupNorm(ndarr(x, shape), ndarr(gamma, [G]), ndarr(beta, [G]), { num_groups: G });
    assertClose(y.toTypedArray(), want.y, { rtol: 1e-4, atol: 1e-4 });
    const [y2, mean, std] = nd.GroupNorm(ndarr(x, shape), ndarr(gamma, [G]), ndarr(beta, [G]),
      { num_groups: G, output_mean_var: true });
    assert.deepEqual(mean.shape, [shape[0], G]);
    assert.deepEqual(std.shape, [shape[0], G]);
    assertClose(y2.toTypedArray(), want.y, { rtol: 1e-4, atol: 1e-4 });
    assertClose(mean.toTypedArray(), want.mean, tol);
    assertClose(std.toTypedArray(), want.std, tol);
  });
}

// ---- L2Normalization ----------------------------------------------------------------------------------
// y = x / sqrt(sum(x^2) + eps) over: instance -> axes 1..; spatial -> axes 2..; channel -> axis 1.
function l2Oracle(x, shape, mode, eps) {
  // viewed as (N, rest) for instance, (N, C, spatial) for spatial (sum over axis 2) and channel
  // (sum over axis 1); tf.norm reduces at most two axes.
  const N = shape[0], C = shape[1] ?? 1, rest = sizeOf(shape) / N / C;
  const view = mode === 'instance' ? [N, sizeOf(shape) / N] : [N, C, rest];
  const axis = mode === 'spatial' ? 2 : 1;
  return tfRun(() => {
    const t = tf.tensor(x, view);
    if (eps === null) return tf.div(t, tf.norm(t, 'euclidean', axis, true)); // eps 1e-10 is below float32 resolution
    return tf.div(t, tf.sqrt(tf.add(tf.sum(tf.square(t), axis, true), eps)));
  });
}
for (const mode of ['instance', 'spatial', 'channel']) {
  for (const shape of [[2, 3, 4, 5], [3, 5, 7], [2, 4, 3, 3, 2]]) {
    test(`L2Normalization mode ${mode} (${shape}) matches tf.norm`, () => {
      const x = rand(shape);
      const y = nd.L2Normalization(ndarr(x, shape), { mode });
      assertClose(y.toTypedArray(), l2Oracle(x, shape, mode, null), tol);
      // a large eps shows that it is added inside the square root
      const y2 = nd.L2Normalization(ndarr(x, shape), { mode, eps: 0.5 });
      assertClose(y2.toTypedArray(), l2Oracle(x, shape, mode, 0.5), tol);
    });
  }
}
test('L2Normalization instance mode on 1-D and 2-D data; default mode is instance', () => {
  for (const shape of [[6], [4, 9]]) {
    const x = rand(shape);
    const y = nd.L2Normalization(ndarr(x, shape));
    assertClose(y.toTypedArray(), l2Oracle(x, shape, 'instance', 1e-10), tol);
  }
});

// ---- LRN ------------------------------------------------------------------------------------------
// tf.localResponseNormalization works on NHWC with sqr_sum over [d - r, d + r] and
// output = x / (bias + alpha * sqr_sum)^beta. MXNet: NCHW, knorm + alpha / nsize * sum over
// nsize channels. So r = floor(nsize / 2), bias = knorm, alpha_tf = alpha / nsize.
function lrnOracle(x, shape, nsize, alpha, beta, knorm) {
  return tfRun(() => {
    const nhwc = tf.transpose(tf.tensor(x, shape), [0, 2, 3, 1]);
    const y = tf.localResponseNormalization(nhwc, Math.floor(nsize / 2), knorm, alpha / nsize, beta);
    return tf.transpose(y, [0, 3, 1, 2]);
  });
}
for (const [shape, nsize, alpha, beta, knorm] of [
  [[2, 7, 5, 4], 3, 0.5, 0.75, 2],
  [[2, 7, 5, 4], 5, 1.5, 0.6, 1],
  [[1, 5, 3, 3], 5, 2, 1.25, 0.5],
  [[3, 4, 2, 6], 1, 0.3, 0.5, 1.5],
  [[1, 8, 9, 7], 7, 1e-4, 0.75, 2],
]) {
  test(`LRN (${shape}) nsize ${nsize} alpha ${alpha} beta ${beta} knorm ${knorm} matches tf.localResponseNormalization`, () => {
    const x = rand(shape);
    const y = nd.LRN(ndarr(x, shape), { nsize, alpha, beta, knorm });
    assert.deepEqual(y.shape, shape);
    assertClose(y.toTypedArray(), lrnOracle(x, shape, nsize, alpha, beta, knorm), tol);
  });
}
test('LRN defaults: alpha 1e-4, beta 0.75, knorm 2', () => {
  const shape = [2, 5, 3, 4], x = rand(shape, -20, 20);
  const y = nd.LRN(ndarr(x, shape), { nsize: 3 });
  assertClose(y.toTypedArray(), lrnOracle(x, shape, 3, 1e-4, 0.75, 2), tol);
});

// ---- symbols: parameter shapes from the data, aux states, types -------------------------------------
test('BatchNorm symbol: gamma/beta args and moving stats aux, shapes filled from data, float16 params float32', () => {
  const data = mx.sym.var('data');
  const bn = mx.sym.BatchNorm(data, { name: 'bn' });
  assert.deepEqual(bn.listArguments(), ['data', 'bn_gamma', 'bn_beta']);
  assert.deepEqual(bn.listAuxiliaryStates(), ['bn_moving_mean', 'bn_moving_var']);
  assert.deepEqual(bn.listOutputs(), ['bn_output']);
  assert.deepEqual(bn.inferShape({ data: [2, 3, 4, 4] }), [[[2, 3, 4, 4], [3], [3]], [[2, 3, 4, 4]], [[3], [3]]]);
  const bnLast = mx.sym.BatchNorm(data, { name: 'bn_last', axis: -1 });
  assert.deepEqual(bnLast.inferShape({ data: [2, 3, 7] })[2], [[7], [7]]);
  assert.deepEqual(bn.inferType({ data: 'float16' }), [['float16', 'float32', 'float32'], ['float16'], ['float32', 'float32']]);
  const json = JSON.parse(bn.tojson());
  const node = (name) => json.nodes.find((n) => n.name === name);
  assert.equal(node('bn_moving_mean').attrs.__init__, '["zero", {}]');
  assert.equal(node('bn_moving_var').attrs.__init__, '["one", {}]');
  const bn3 = mx.sym.BatchNorm(data, { name: 'bn3', output_mean_var: true });
  assert.deepEqual(bn3.listOutputs(), ['bn3_output', 'bn3_mean', 'bn3_var']);
});

test('LayerNorm / InstanceNorm / GroupNorm / L2Normalization / LRN symbols infer parameter and output shapes', () => {
  const data = mx.sym.var('data');
  assert.deepEqual(mx.sym.LayerNorm(data, { name: 'ln' }).inferShape({ data: [2, 3, 5] }), [[[2, 3, 5], [5], [5]], [[2, 3, 5]], []]);
  assert.deepEqual(mx.sym.LayerNorm(data, { name: 'ln1', axis: 1 }).inferShape({ data: [2, 3, 5] })[0], [[2, 3, 5], [3], [3]]);
  assert.deepEqual(mx.sym.InstanceNorm(data, { name: 'in' }).inferShape({ data: [2, 4, 5, 5] })[0], [[2, 4, 5, 5], [4], [4]]);
  assert.deepEqual(mx.sym.GroupNorm(data, { name: 'gn', num_groups: 2 }).inferShape({ data: [2, 6, 5] })[0], [[2, 6, 5], [2], [2]]);
  assert.deepEqual(mx.sym.L2Normalization(data, { name: 'l2' }).listOutputs(), ['l2_output']);
  assert.deepEqual(mx.sym.LRN(data, { name: 'lrn', nsize: 3 }).inferShape({ data: [1, 4, 3, 3] })[1], [[1, 4, 3, 3]]);
});

// ---- errors ---------------------------------------------------------------------------------------
test('errors name the op and the problem; the next call works', () => {
  const shape = [2, 3, 2, 2], x = rand(shape), p = bnParams(3);
  const args = bnArgs(x, shape, p);
  const badGamma = ndarr(rand([4]), [4]);
  assert.throws(() => nd.BatchNorm(args[0], badGamma, args[2], args[3], args[4]),
    (e) => e instanceof mx.MXNetError && /BatchNorm/.test(e.message) && /gamma/.test(e.message) && /\(4,\)/.test(e.message));
  const y = nd.BatchNorm(...args, { fix_gamma: false });
  assertClose(y.toTypedArray(), bnOracle(x, shape, 1, p, false, 1e-3), tol);

  assert.throws(() => nd.BatchNorm(...args, { axis: 4 }), (e) => e instanceof mx.MXNetError && /BatchNorm/.test(e.message) && /axis/.test(e.message));
  assert.throws(() => nd.BatchNorm(...args.slice(0, 3)), (e) => e instanceof mx.MXNetError && /BatchNorm/.test(e.message));
  const xi = nd.array([1, 2, 3, 4], { shape: [1, 4], dtype: 'int32' });
  assert.throws(() => nd.LayerNorm(xi, nd.array([1, 1, 1, 1], { shape: [4], dtype: 'int32' }), nd.array([0, 0, 0, 0], { shape: [4], dtype: 'int32' })),
    (e) => e instanceof mx.MXNetError && /LayerNorm/.test(e.message) && /int32/.test(e.message));
  const g6 = ndarr(rand([6, 2, 2]), [1, 6, 2, 2]);
  assert.throws(() => nd.GroupNorm(g6, ndarr([1, 1, 1, 1], [4]), ndarr([0, 0, 0, 0], [4]), { num_groups: 4 }),
    (e) => e instanceof mx.MXNetError && /GroupNorm/.test(e.message) && /num_groups/.test(e.message));
  assert.throws(() => nd.GroupNorm(g6, ndarr([1, 1], [2]), ndarr([0, 0], [2]), { num_groups: 3 }),
    (e) => e instanceof mx.MXNetError && /gamma/.test(e.message));
  assert.throws(() => nd.LRN(g6, { nsize: 4 }), (e) => e instanceof mx.MXNetError && /LRN/.test(e.message) && /nsize/.test(e.message));
  assert.throws(() => nd.LRN(g6, { nsize: 7 }), (e) => e instanceof mx.MXNetError && /nsize = 7/.test(e.message));
  assert.throws(() => nd.L2Normalization(ndarr(rand([3, 4]), [3, 4]), { mode: 'spatial' }),
    (e) => e instanceof mx.MXNetError && /L2Normalization/.test(e.message) && /spatial/.test(e.message));
  assert.throws(() => nd.InstanceNorm(ndarr(rand([3, 4]), [3, 4]), ndarr([1, 1, 1, 1], [4]), ndarr([0, 0, 0, 0], [4])),
    (e) => e instanceof mx.MXNetError && /InstanceNorm/.test(e.message) && /3 dimensions/.test(e.message));
  // and everything still works
  const z = nd.LRN(g6, { nsize: 3, alpha: 0.5 });
  assertClose(z.toTypedArray(), lrnOracle(g6.toTypedArray(), [1, 6, 2, 2], 3, 0.5, 0.75, 2), tol);
});
