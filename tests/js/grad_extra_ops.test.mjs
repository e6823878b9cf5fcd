// MXNet 1.9.1 operators added beside the families they extend: smooth_l1, softmin, moments, cumsum
// (_np_cumsum) and diag. Forward values against TF.js (tf.softmax of -x, tf.moments, tf.cumsum) or
// against the formulas of MXNet's docs written out here in float64; gradients against central
// finite differences (checkGrad), second order against hand-worked values.
import test from 'node:test';
import { checkGrad, assert, assertClose, rng, tf, mx, nd, autograd } from './grad_check.mjs';

const sample = (shape, seed, lo = -2, hi = 2, dtype = 'float64') =>
  nd.array(Array.from(rng(seed).uniform(shape.reduce((a, b) => a * b, 1), lo, hi), Number), { dtype }).reshape(shape);
const tfOf = (x) => tf.tensor(Array.from(x.toTypedArray()), x.shape, 'float32');

test('smooth_l1: MXNet\'s formula for several sigma, float32 and float64; gradient and second order', () => {
  const x = sample([4, 5], 1, -3, 3);
  const xs = Array.from(x.toTypedArray());
  for (const sigma of [1, 0.5, 2]) {
    const s2 = sigma * sigma;
    const want = xs.map((v) => (Math.abs(v) < 1 / s2 ? 0.5 * s2 * v * v : Math.abs(v) - 0.5 / s2));
    assertClose(nd.smooth_l1(x, { scalar: sigma }).toTypedArray(), want, { rtol: 1e-14, atol: 1e-15 });
    assertClose(nd.smooth_l1(x.astype('float32'), sigma).toTypedArray(), want, { rtol: 1e-6, atol: 1e-6 });
    // inside and outside the quadratic part, away from the switch at |x| = 1 / sigma^2
    checkGrad('smooth_l1', [{ shape: [3, 4], low: -0.9 / s2, high: 0.9 / s2 }], { scalar: sigma });
    checkGrad('smooth_l1', [{ shape: [3, 4], low: 1.1 / s2, high: 3 / s2 }], { scalar: sigma });
    checkGrad('smooth_l1', [{ shape: [3, 4], low: -3 / s2, high: -1.1 / s2 }], { scalar: sigma });
  }
  // second order: sigma^2 inside, 0 outside
  const y = nd.array([0.1, -0.2, 2, -3], { dtype: 'float64' });
  y.attachGrad();
  autograd.record(() => {
    const [g] = autograd.grad(nd.smooth_l1(y, { scalar: 2 }).sum(), [y], { createGraph: true });
    return g.sum();
  }).backward();
  assertClose(y.grad.toTypedArray(), [4, 4, 0, 0], { rtol: 1e-14, atol: 0 });
});

test('softmin equals TF.js softmax of -x / T, with axis, temperature and length; gradient', () => {
  const x = sample([3, 4, 5], 2);
  for (const [axis, T] of [[-1, 1], [0, 1], [1, 2.5]]) {
    const want = tf.softmax(tf.div(tf.neg(tfOf(x)), T).transpose(axis === -1 ? [0, 1, 2] : axis === 0 ? [1, 2, 0] : [0, 2, 1]))
      .transpose(axis === -1 ? [0, 1, 2] : axis === 0 ? [2, 0, 1] : [0, 2, 1]);
    assertClose(nd.softmin(x.astype('float32'), { axis, temperature: T }).toTypedArray(), want.dataSync(), { rtol: 1e-5, atol: 1e-7 });
    checkGrad('softmin', [x], { axis, temperature: T });
  }
  // length: the first length[i] entries of each row take part, the rest are 0
  const d = sample([2, 4], 3);
  const len = nd.array([2, 4], { dtype: 'int32' });
  const rows = d.toArray();
  const want = rows.map((r, i) => {
    const n = [2, 4][i];
    const e = r.slice(0, n).map((v) => Math.exp(-v));
    const s = e.reduce((a, b) => a + b, 0);
    return [...e.map((v) => v / s), ...new Array(4 - n).fill(0)];
  });
  assertClose(nd.softmin(d, len, { use_length: true, axis: -1 }).toArray().flat(), want.flat(), { rtol: 1e-12, atol: 1e-15 });
  checkGrad('softmin', [d, len], { use_length: true, axis: -1 }, { wrt: [0] });
});

test('moments equals TF.js moments (mean, variance) over any axes, keepdims; gradient of both outputs', () => {
  const x = sample([3, 4, 5], 4);
  for (const [axes, keepdims] of [[[1], false], [[0, 2], true], [null, false], [[-1], false]]) {
    const attrs = axes ? { axes, keepdims } : { keepdims };
    const [m, v] = nd.moments(x.astype('float32'), attrs);
    const tfAxes = axes ? axes.map((a) => (a < 0 ? a + 3 : a)) : [0, 1, 2];
    const want = tf.moments(tfOf(x), tfAxes, keepdims);
    assert.deepEqual(m.shape, axes || keepdims ? want.mean.shape : [1]);
    assert.deepEqual(v.shape, m.shape);
    assertClose(m.toTypedArray(), want.mean.dataSync(), { rtol: 1e-5, atol: 1e-6 });
    assertClose(v.toTypedArray(), want.variance.dataSync(), { rtol: 1e-5, atol: 1e-6 });
    checkGrad('moments', [x], attrs);
  }
  // MXNet's docstring example
  const [m, v] = nd.moments(nd.array([[1, 2, 3], [4, 5, 6]], { dtype: 'float64' }), { axes: [1] });
  assertClose(m.toTypedArray(), [2, 5], { rtol: 0, atol: 0 });
  assertClose(v.toTypedArray(), [2 / 3, 2 / 3], { rtol: 1e-15, atol: 0 });
  assert.throws(() => nd.moments(nd.array([1, 2], { dtype: 'int32' })), /floating-point/);
});

test('cumsum equals TF.js cumsum along an axis and over the flattened array; dtype; gradient', () => {
  const x = sample([3, 4, 2], 5);
  // (TF.js's cumsum mis-shapes a negative axis: given normalized)
  for (const axis of [0, 1, 2, -1]) {
    assertClose(nd.cumsum(x.astype('float32'), { axis }).toTypedArray(), tf.cumsum(tfOf(x), axis < 0 ? axis + 3 : axis).dataSync(), { rtol: 1e-5, atol: 1e-6 });
    checkGrad('cumsum', [x], { axis });
  }
  const flat = nd._np_cumsum(x);
  assert.deepEqual(flat.shape, [24]);
  let run = 0;
  assertClose(flat.toTypedArray(), Array.from(x.toTypedArray(), (v) => (run += v)), { rtol: 1e-14, atol: 1e-14 });
  checkGrad('_np_cumsum', [x], {});
  // integer running sums, in the output dtype
  const xi = nd.array([[1, 2, 3], [4, 5, 6]], { dtype: 'int32' });
  const ci = nd.cumsum(xi, { axis: 1, dtype: 'int64' });
  assert.equal(ci.dtype, 'int64');
  assert.deepEqual(ci.toArray().map((r) => r.map(Number)), [[1, 3, 6], [4, 9, 15]]);
  assert.equal(nd.cumsum(nd.array([1.5, 2.5]), { dtype: 'int32' }).dtype, 'int32');
  assert.deepEqual(Array.from(nd.cumsum(nd.array([1.5, 2.5, -0.5]), { dtype: 'int32' }).toTypedArray()), [1, 3, 3]);
  // with dtype float32 on float64 data the gradient comes back as float64: sum(cumsum(x)) -> n - i
  const y = sample([5], 6);
  y.attachGrad();
  autograd.record(() => nd.cumsum(y, { dtype: 'float32' }).sum()).backward();
  assert.equal(y.grad.dtype, 'float64');
  assertClose(y.grad.toTypedArray(), [5, 4, 3, 2, 1], { rtol: 0, atol: 0 });
  assert.throws(() => nd.cumsum(x, { axis: 3 }), /axis 3 is out of range/);
});

test('diag: 1-D to a matrix on diagonal k, N-D diagonals of any axes; gradient', () => {
  // by the index formulas of MXNet's docs: out[i, i + k] = v[i] for k >= 0, out[i - k, i] for k < 0
  const v = [1, 2, 3];
  for (const k of [0, 2, -1]) {
    const n = 3 + Math.abs(k);
    const want = Array.from({ length: n }, (_, r) => Array.from({ length: n }, (_, c) => (c - r === k ? v[Math.min(r, c)] : 0)));
    assert.deepEqual(nd.diag(nd.array(v), { k }).toArray(), want);
  }
  const a = nd.arange(0, 24, { dtype: 'float64' }).reshape([2, 3, 4]); // a[i][j][l] = 12 i + 4 j + l
  // planes (1, 2), k = 1: element t of the diagonal is a[i][t][t + 1]; length min(3, 4 - 1) = 3
  assert.deepEqual(nd.diag(a, { axis1: 1, axis2: 2, k: 1 }).toArray(), [[1, 6, 11], [13, 18, 23]]);
  // planes (0, 2), k = -1: a[t + 1][j][t], length min(2 - 1, 4) = 1; the other axis (j) first
  assert.deepEqual(nd.diag(a, { axis1: 0, axis2: 2, k: -1 }).toArray(), [[12], [16], [20]]);
  // planes (2, 0): a[t][j][t]
  assert.deepEqual(nd.diag(a, { axis1: 2, axis2: 0 }).toArray(), [[0, 13], [4, 17], [8, 21]]);
  assert.deepEqual(nd.diag(a, { k: 5, axis1: 1, axis2: 2 }).shape, [2, 0]);
  assert.deepEqual(nd.diag(nd.array([[1, 2], [3, 4]], { dtype: 'int32' })).toArray(), [1, 4]);
  checkGrad('diag', [{ shape: [4] }], { k: 1 });
  checkGrad('diag', [{ shape: [3, 5] }], { k: -1 });
  checkGrad('diag', [{ shape: [2, 3, 4] }], { axis1: 2, axis2: 0, k: 1 });
  // _backward_diag is linear in ograd: its gradient is diag of the incoming gradient
  checkGrad('_backward_diag', [{ shape: [2, 3] }, { shape: [2, 3, 4] }], { axis1: 1, axis2: 2, k: 1 }, { wrt: [0] });
  assert.throws(() => nd.diag(a, { axis1: 1, axis2: -2 }), /same axis/);
});

test('the new ops compose in symbols and run hybridized like imperatively', () => {
  class Net extends mx.gluon.HybridBlock {
    hybridForward(F, x) {
      const [m, v] = F.moments(x, { axes: [1], keepdims: true });
      const z = F.broadcast_div(F.broadcast_sub(x, m), F.sqrt(v.add(1e-5)));
      const s = F.sum(F.smooth_l1(F.cumsum(F.softmin(z, { axis: 1 }), { axis: 1 }), { scalar: 1.5 }), { axis: 1 });
      return F.broadcast_add(s, F.rcbrt(F.diag(F.abs(x).add(1))).sum());
    }
  }
  const x = sample([3, 3], 7, -2, 2, 'float32');
  const net = new Net();
  const imp = net(x).toTypedArray();
  net.hybridize();
  assertClose(net(x).toTypedArray(), imp, { rtol: 1e-6, atol: 1e-7 });
  const json = JSON.parse(net.exportBytes().symbol);
  const ops = json.nodes.map((n) => n.op);
  for (const op of ['moments', 'softmin', '_np_cumsum', 'smooth_l1', 'rcbrt', 'diag']) assert.ok(ops.includes(op), `${op} in ${ops}`);
});

test('split_v2 (nd/sym helpers and the fluent method) against TF.js split; _split_v2 gradient; argmax_channel', () => {
  const x = sample([4, 6, 2], 8);
  const parts = nd.split_v2(x, [1, 4], 1);
  const want = tf.split(tfOf(x), [1, 3, 2], 1);
  assert.equal(parts.length, 3);
  parts.forEach((p, i) => {
    assert.deepEqual(p.shape, want[i].shape);
    assertClose(p.toTypedArray(), want[i].dataSync(), { rtol: 1e-6, atol: 1e-7 });
  });
  // sections: equal parts, positionally or by name; squeeze_axis
  const eq = x.splitV2(3, { axis: 1 });
  tf.split(tfOf(x), 3, 1).forEach((w, i) => assertClose(eq[i].toTypedArray(), w.dataSync(), { rtol: 1e-6, atol: 1e-7 }));
  const sq = x.splitV2({ indicesOrSections: 4, axis: 0, squeezeAxis: true });
  assert.deepEqual(sq.map((p) => p.shape), [[6, 2], [6, 2], [6, 2], [6, 2]]);
  assert.throws(() => x.splitV2(4, 1), /equal division/);
  assert.throws(() => nd._split_v2(x, { indices: [0, 3, 2], axis: 1 }), /indices must increase/);
  // Symbol: an int is `sections`; the outputs run through the executor
  const s = mx.sym.split_v2(mx.sym.var('x'), 2, { axis: 1 });
  assert.equal(s.numOutputs, 2);
  const outs = new mx.CachedOp(s).forward([x]);
  tf.split(tfOf(x), 2, 1).forEach((w, i) => assertClose(outs[i].toTypedArray(), w.dataSync(), { rtol: 1e-6, atol: 1e-7 }));
  // gradient: the parts' gradients joined again (zeros before a first index > 0)
  checkGrad('_split_v2', [{ shape: [3, 5, 2] }], { indices: [0, 2, 3], axis: 1 });
  checkGrad('_split_v2', [{ shape: [3, 5, 2] }], { indices: [1, 4], axis: -2 });
  checkGrad('_split_v2', [{ shape: [2, 3] }], { indices: [0, 1, 2], axis: 1, squeeze_axis: true });
  checkGrad('_split_v2', [{ shape: [4, 3] }], { indices: [], sections: 2, axis: 0 });
  // argmax_channel: argmax over the last axis, as a float index
  const a = nd.array([[1, 5, 2], [7, 0, 7]]);
  assert.deepEqual(nd.argmax_channel(a).toArray(), [1, 0]);
  assert.deepEqual(Array.from(a.argmaxChannel().toTypedArray()), Array.from(tf.argMax(tfOf(a), 1).dataSync()));
});
