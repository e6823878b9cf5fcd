// Shape manipulation ops against TensorFlow.js's CPU kernels (an independent implementation) on
// random data, plus the NDArray shape methods, dtype preservation and error messages.
// These ops only move elements, so results must match exactly (tolerance 0).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, sizeOf } from './oracle.mjs';

const { nd } = mx;
const exact = { rtol: 0, atol: 0 };

// A random float32 array of `shape` as an NDArray and as its flat values.
function rand(shape, seed) {
  const data = rng(seed).uniform(sizeOf(shape), -5, 5);
  return { x: nd.array(data, { shape }), data, shape };
}
// y must equal the tfjs result of fn(tensor of data) in shape and values.
function expectTf(y, data, shape, fn, msg = '') {
  const t = tf.tidy(() => fn(tf.tensor(data, shape)));
  try {
    assert.deepEqual(y.shape, t.shape, `${msg} shape`);
    assertClose(y.toTypedArray(), t.dataSync(), { ...exact, msg });
  } finally {
    t.dispose();
  }
}
// For dtypes tfjs lacks: tfjs moves the indices 0..n-1 with fn; the expected values are the
// input's values at those indices (index < 0: `fill`).
function expectByIndex(y, values, shape, fn, fill = 0) {
  const t = tf.tidy(() => fn(tf.reshape(tf.range(0, sizeOf(shape), 1, 'int32'), shape)));
  const idx = t.dataSync();
  assert.deepEqual(y.shape, t.shape);
  t.dispose();
  assert.deepEqual(Array.from(y.toTypedArray()), Array.from(idx, (i) => (i < 0 ? fill : values[i])));
}

// ---- Reshape --------------------------------------------------------------------------------------
test('Reshape: every special-code example of the spec, against tf.reshape', () => {
  const { x, data, shape } = rand([2, 3, 4], 1);
  const cases = [
    [[4, 0, 2], [4, 3, 2]], [[2, 0, 0], [2, 3, 4]], [[6, 1, -1], [6, 1, 4]], [[-2], [2, 3, 4]],
    [[2, -2], [2, 3, 4]], [[-3, 4], [6, 4]], [[-4, 1, 2, -2], [1, 2, 3, 4]], [[2, -4, -1, 3, -2], [2, 1, 3, 4]],
  ];
  for (const [code, want] of cases) {
    const y = nd.Reshape(x, { shape: code });
    assert.deepEqual(y.shape, want, `shape=${code}`);
    expectTf(y, data, shape, (t) => tf.reshape(t, want), `shape=${code}`);
  }
  const r = rand([10, 5, 4], 2);
  const y = nd.reshape(r.x, { shape: [-1, 0], reverse: true });
  expectTf(y, r.data, r.shape, (t) => tf.reshape(t, [50, 4]), 'reverse');
  expectTf(nd.reshape(r.x, { shape: [-1, 0] }), r.data, r.shape, (t) => tf.reshape(t, [40, 5]), 'no reverse');
  // deprecated target_shape: one 0 inferred; keep_highest pins dim 0
  expectTf(nd.Reshape(x, { target_shape: [4, 0] }), data, shape, (t) => tf.reshape(t, [4, 6]), 'target_shape');
  expectTf(nd.Reshape(x, { target_shape: [9, 0], keep_highest: true }), data, shape, (t) => tf.reshape(t, [2, 12]),
    'keep_highest');
});

test('NDArray shape methods: reshape codes, T, transpose, flatten, expandDims, squeeze', () => {
  const { x, data, shape } = rand([2, 3, 4], 3);
  expectTf(x.reshape([0, -1]), data, shape, (t) => tf.reshape(t, [2, 12]), 'reshape([0, -1])');
  expectTf(x.reshape(4, 6), data, shape, (t) => tf.reshape(t, [4, 6]), 'reshape(4, 6)');
  expectTf(x.reshape([-1, 0], { reverse: true }), data, shape, (t) => tf.reshape(t, [6, 4]), 'reverse');
  const six = rand([6], 4);
  expectTf(six.x.reshape(2, 3), six.data, six.shape, (t) => tf.reshape(t, [2, 3]), 'reshape(2, 3)');
  expectTf(x.T, data, shape, (t) => tf.transpose(t), 'T');
  expectTf(x.transpose([1, 0, 2]), data, shape, (t) => tf.transpose(t, [1, 0, 2]), 'transpose([1, 0, 2])');
  expectTf(x.flatten(), data, shape, (t) => tf.reshape(t, [2, 12]), 'flatten');
  expectTf(x.expandDims(1), data, shape, (t) => tf.expandDims(t, 1), 'expandDims(1)');
  const ones = rand([1, 3, 1, 4], 5);
  expectTf(ones.x.squeeze(), ones.data, ones.shape, (t) => tf.squeeze(t), 'squeeze()');
  expectTf(ones.x.squeeze(2), ones.data, ones.shape, (t) => tf.squeeze(t, [2]), 'squeeze(2)');
});

test('an invalid reshape throws MXNetError naming Reshape and both shapes; the next call works', () => {
  const { x, data, shape } = rand([2, 3, 4], 6);
  assert.throws(() => x.reshape([5, 5]),
    (e) => e instanceof mx.MXNetError && /Reshape/.test(e.message) && /\(2, 3, 4\)/.test(e.message)
      && /shape=\(5, 5\)/.test(e.message));
  assert.throws(() => nd.Reshape(x, { shape: [-1, -1] }),
    (e) => e instanceof mx.MXNetError && /Reshape/.test(e.message) && /\(2, 3, 4\)/.test(e.message)
      && /only one dimension can be -1/.test(e.message));
  assert.throws(() => nd.Reshape(x, { shape: [-3, -3] }), (e) => e instanceof mx.MXNetError && /-3 at position 1/.test(e.message));
  assert.throws(() => x.reshape([0, -4, 3]), (e) => e instanceof mx.MXNetError && /-4 at position 1/.test(e.message));
  expectTf(x.reshape([-1]), data, shape, (t) => tf.reshape(t, [24]), 'after errors');
});

test('Flatten and its aliases against tf.reshape', () => {
  const { x, data, shape } = rand([3, 2, 5], 7);
  expectTf(nd.Flatten(x), data, shape, (t) => tf.reshape(t, [3, 10]));
  expectTf(nd.flatten(x), data, shape, (t) => tf.reshape(t, [3, 10]));
  expectTf(nd._npx_batch_flatten(x), data, shape, (t) => tf.reshape(t, [3, 10]));
  const v = rand([7], 8);
  expectTf(nd.Flatten(v.x), v.data, v.shape, (t) => tf.reshape(t, [7, 1]), '1-D');
});

// ---- permutations ---------------------------------------------------------------------------------
test('transpose against tf.transpose: 2-D (blocked SIMD path, odd sizes), N-d permutations', () => {
  for (const [shape, axes] of [
    [[67, 129], undefined], [[5, 3], [1, 0]], [[3, 37, 41], [0, 2, 1]], [[2, 3, 5, 7], [0, 2, 3, 1]],
    [[2, 3, 5, 7], [3, 1, 0, 2]], [[4, 1, 6], [2, 1, 0]], [[2, 3, 4], [-1, 0, 1]],
  ]) {
    const { x, data } = rand(shape, shape.length * 10 + shape[0]);
    const y = axes ? nd.transpose(x, { axes }) : nd.transpose(x);
    const tfAxes = axes && axes.map((a) => (a < 0 ? a + shape.length : a));
    expectTf(y, data, shape, (t) => tf.transpose(t, tfAxes), `transpose ${shape} ${axes}`);
  }
  const { x, data, shape } = rand([4, 5], 11);
  expectTf(nd._npi_transpose(x, { axes: [1, 0] }), data, shape, (t) => tf.transpose(t));
  expectTf(nd._npi_transpose(x, { axes: null }), data, shape, (t) => tf.transpose(t), 'axes=None reverses');
});

test('SwapAxis / swapaxes against tf.transpose', () => {
  const { x, data, shape } = rand([2, 3, 4, 5], 12);
  expectTf(nd.SwapAxis(x, { dim1: 1, dim2: 3 }), data, shape, (t) => tf.transpose(t, [0, 3, 2, 1]));
  expectTf(nd.swapaxes(x, { dim1: 0, dim2: -1 }), data, shape, (t) => tf.transpose(t, [3, 1, 2, 0]));
  expectTf(nd.SwapAxis(x), data, shape, (t) => tf.clone(t), 'defaults swap axis 0 with itself');
});

test('expand_dims and squeeze (with aliases) against tfjs', () => {
  const { x, data, shape } = rand([2, 3], 13);
  expectTf(nd.expand_dims(x, { axis: 0 }), data, shape, (t) => tf.expandDims(t, 0));
  expectTf(nd._npi_expand_dims(x, { axis: -1 }), data, shape, (t) => tf.expandDims(t, 2));
  expectTf(nd.expand_dims(x, { axis: -3 }), data, shape, (t) => tf.expandDims(t, 0));
  const s = rand([1, 2, 1, 3, 1], 14);
  expectTf(nd.squeeze(s.x), s.data, s.shape, (t) => tf.squeeze(t));
  expectTf(nd._npi_squeeze(s.x, { axis: [0, -1] }), s.data, s.shape, (t) => tf.squeeze(t, [0, 4]));
  const allOnes = nd.squeeze(nd.array([[[7]]]));
  assert.deepEqual(allOnes.shape, [1]); // legacy: squeezing everything leaves (1,)
  assert.throws(() => nd.squeeze(s.x, { axis: 1 }), (e) => e instanceof mx.MXNetError && /squeeze/.test(e.message)
    && /not 1/.test(e.message));
  assert.throws(() => nd.expand_dims(x, { axis: 3 }), /axis=3 is out of range/);
});

// ---- joining and splitting ------------------------------------------------------------------------
test('Concat / concat against tf.concat', () => {
  const a = rand([2, 3, 4], 20), b = rand([2, 5, 4], 21), c = rand([2, 1, 4], 22);
  const t3 = (fn) => tf.tidy(() => fn(tf.tensor(a.data, a.shape), tf.tensor(b.data, b.shape), tf.tensor(c.data, c.shape)));
  const check = (y, fn, msg) => {
    const t = t3(fn);
    assert.deepEqual(y.shape, t.shape, msg);
    assertClose(y.toTypedArray(), t.dataSync(), { ...exact, msg });
    t.dispose();
  };
  check(nd.Concat(a.x, b.x, c.x), (p, q, r) => tf.concat([p, q, r], 1), 'default dim=1');
  check(nd.concat(a.x, b.x, c.x, { dim: -2 }), (p, q, r) => tf.concat([p, q, r], 1), 'dim=-2');
  const d = rand([3, 3, 4], 23);
  const y = nd.concat(a.x, d.x, { dim: 0 });
  const t = tf.tidy(() => tf.concat([tf.tensor(a.data, a.shape), tf.tensor(d.data, d.shape)], 0));
  assertClose(y.toTypedArray(), t.dataSync(), exact);
  t.dispose();
  const e = rand([2, 3, 7], 24);
  const z = nd.Concat([a.x, e.x], { dim: 2 }); // the inputs as one list
  const tz = tf.tidy(() => tf.concat([tf.tensor(a.data, a.shape), tf.tensor(e.data, e.shape)], 2));
  assert.deepEqual(z.shape, [2, 3, 11]);
  assertClose(z.toTypedArray(), tz.dataSync(), exact);
  tz.dispose();
});

test('Concat with mismatched shapes names Concat and the input; the next call works', () => {
  const a = rand([2, 3], 25), b = rand([4, 3], 26);
  assert.throws(() => nd.Concat(a.x, b.x, { dim: 1 }),
    (e) => e instanceof mx.MXNetError && /Operator Concat/.test(e.message) && /arg1/.test(e.message)
      && /\(4, 3\)/.test(e.message));
  assert.throws(() => nd.Concat(a.x, nd.array([1, 2, 3]), { dim: 0 }),
    (e) => e instanceof mx.MXNetError && /Concat/.test(e.message) && /rank/.test(e.message));
  assert.throws(() => nd.Concat(a.x, b.x, { dim: 2 }), /dim=2 is out of range/);
  const y = nd.Concat(a.x, b.x, { dim: 0 });
  const t = tf.tidy(() => tf.concat([tf.tensor(a.data, a.shape), tf.tensor(b.data, b.shape)], 0));
  assertClose(y.toTypedArray(), t.dataSync(), exact);
  t.dispose();
});

test('stack / _npi_stack against tf.stack', () => {
  const xs = [rand([3, 4], 30), rand([3, 4], 31), rand([3, 4], 32)];
  for (const axis of [0, 1, 2, -1, -3]) {
    const y = axis === -3 ? nd._npi_stack(...xs.map((v) => v.x), { axis }) : nd.stack(...xs.map((v) => v.x), { axis });
    const t = tf.tidy(() => tf.stack(xs.map((v) => tf.tensor(v.data, v.shape)), axis < 0 ? axis + 3 : axis));
    assert.deepEqual(y.shape, t.shape, `axis ${axis}`);
    assertClose(y.toTypedArray(), t.dataSync(), { ...exact, msg: `axis ${axis}` });
    t.dispose();
  }
  assert.throws(() => nd.stack(xs[0].x, nd.array([1, 2])), (e) => e instanceof mx.MXNetError && /stack/.test(e.message)
    && /arg1/.test(e.message));
});

test('SliceChannel / split against tf.split and tf.unstack', () => {
  const { x, data, shape } = rand([2, 6, 3], 40);
  const parts = nd.SliceChannel(x, { num_outputs: 3 });
  const ref = tf.split(tf.tensor(data, shape), 3, 1);
  assert.equal(parts.length, 3);
  parts.forEach((p, i) => {
    assert.deepEqual(p.shape, ref[i].shape);
    assertClose(p.toTypedArray(), ref[i].dataSync(), exact);
  });
  tf.dispose(ref);
  const last = nd.split(x, { num_outputs: 3, axis: -1, squeeze_axis: true });
  const un = tf.unstack(tf.tensor(data, shape), 2);
  last.forEach((p, i) => {
    assert.deepEqual(p.shape, [2, 6]);
    assertClose(p.toTypedArray(), un[i].dataSync(), exact);
  });
  tf.dispose(un);
  const one = nd.split(x, { num_outputs: 1, axis: 0 });
  assert.deepEqual(one.shape, [2, 6, 3]);
  assert.throws(() => nd.split(x, { num_outputs: 4 }), /cannot split axis 1 of input of shape \(2, 6, 3\)/);
  assert.throws(() => nd.SliceChannel(x, { num_outputs: 2, squeeze_axis: true }), /squeeze_axis=True/);
});

// ---- slicing --------------------------------------------------------------------------------------
test('slice / crop / _npx_slice against tf.stridedSlice (None entries, negative steps, clamping)', () => {
  const { x, data, shape } = rand([4, 7, 5], 50);
  // [begin, end, step, tf begin, tf end, tf strides, beginMask, endMask]
  const cases = [
    [[1, 2], [3, 6], undefined, [1, 2], [3, 6], [1, 1], 0, 0],
    [[null, 6], [null, 1], [null, -2], [0, 6], [0, 1], [1, -2], 1, 1],
    [[-1, null, 4], [null, null, 0], [-1, -3, -1], [-1, 0, 4], [0, 0, 0], [-1, -3, -1], 2, 3],
    [[0, 10], [4, -100], [2, -3], [0, 10], [4, -100], [2, -3], 0, 0],
    [[-100, 3], [100, 100], [1, 2], [-100, 3], [100, 100], [1, 2], 0, 0],
  ];
  const ops = [nd.slice, nd.crop, nd._npx_slice];
  cases.forEach(([begin, end, step, tb, te, ts, bm, em], i) => {
    const y = ops[i % 3](x, step ? { begin, end, step } : { begin, end });
    expectTf(y, data, shape, (t) => tf.stridedSlice(t, [...tb, 0, 0].slice(0, 3), [...te, 5, 5].slice(0, 3),
      [...ts, 1, 1].slice(0, 3), bm | (te.length < 3 ? 4 : 0), em | (te.length < 3 ? 4 : 0)), `case ${i}`);
  });
  // begin 2 > end 1 with step 1 is empty (tfjs's stridedSlice cannot produce empty results)
  const empty = nd.slice(x, { begin: [2, 5], end: [1, 6] });
  assert.deepEqual(empty.shape, [0, 1, 5]);
  assert.equal(empty.toTypedArray().length, 0);
  expectTf(nd.slice(x, { begin: [1], end: [3] }), data, shape, (t) => tf.slice(t, [1, 0, 0], [2, 7, 5]), 'tf.slice');
  assert.throws(() => nd.slice(x, { begin: [0, 0], end: [1] }), /must have the same length/);
  assert.throws(() => nd.slice(x, { begin: [0], end: [1], step: [0] }), /step 0 is 0/);
});

test('slice_axis and slice_like against tf.slice', () => {
  const { x, data, shape } = rand([3, 8, 4], 51);
  expectTf(nd.slice_axis(x, { axis: 1, begin: 2, end: 5 }), data, shape, (t) => tf.slice(t, [0, 2, 0], [3, 3, 4]));
  expectTf(nd.slice_axis(x, { axis: -1, begin: -3, end: null }), data, shape, (t) => tf.slice(t, [0, 0, 1], [3, 8, 3]));
  expectTf(nd.slice_axis(x, { axis: 0, begin: 1, end: -1 }), data, shape, (t) => tf.slice(t, [1, 0, 0], [1, 8, 4]));
  assert.throws(() => nd.slice_axis(x, { axis: 1, begin: 5, end: 5 }), /not a non-empty range of axis 1/);
  const like = nd.zeros([2, 5, 4]);
  expectTf(nd.slice_like(x, like), data, shape, (t) => tf.slice(t, [0, 0, 0], [2, 5, 4]));
  expectTf(nd.slice_like(x, nd.zeros([1, 3]), { axes: [-2] }), data, shape, (t) => tf.slice(t, [0, 0, 0], [3, 3, 4]));
  assert.throws(() => nd.slice_like(x, nd.zeros([4, 5, 4])), /larger than data/);
});

// ---- broadcasting, tiling, reversing ---------------------------------------------------------------
test('broadcast_to and broadcast_like against tf.broadcastTo', () => {
  const { x, data, shape } = rand([3, 1, 4, 1], 60);
  expectTf(nd.broadcast_to(x, { shape: [3, 5, 4, 2] }), data, shape, (t) => tf.broadcastTo(t, [3, 5, 4, 2]));
  expectTf(nd.broadcast_to(x, { shape: [0, 6, 0, 0] }), data, shape, (t) => tf.broadcastTo(t, [3, 6, 4, 1]), '0 keeps');
  expectTf(nd.broadcast_like(x, nd.zeros([3, 2, 4, 3])), data, shape, (t) => tf.broadcastTo(t, [3, 2, 4, 3]));
  expectTf(nd.broadcast_like(x, nd.zeros([7, 9]), { lhs_axes: [1, 3], rhs_axes: [0, -1] }), data, shape,
    (t) => tf.broadcastTo(t, [3, 7, 4, 9]), 'axes');
  assert.throws(() => nd.broadcast_to(x, { shape: [2, 1, 4, 1] }),
    (e) => e instanceof mx.MXNetError && /broadcast_to/.test(e.message) && /\(3, 1, 4, 1\)/.test(e.message));
});

test('reshape_like / _npx_reshape_like against tf.reshape, including axis ranges', () => {
  const { x, data, shape } = rand([6, 4], 61);
  expectTf(nd.reshape_like(x, nd.zeros([2, 3, 4])), data, shape, (t) => tf.reshape(t, [2, 3, 4]));
  const r = rand([30, 7], 62);
  expectTf(nd._npx_reshape_like(r.x, nd.zeros([15, 2, 4]), { lhs_begin: 0, lhs_end: 1, rhs_begin: 0, rhs_end: 2 }),
    r.data, r.shape, (t) => tf.reshape(t, [15, 2, 7]));
  const q = rand([30, 12], 63);
  expectTf(nd.reshape_like(q.x, nd.zeros([4, 2, 2, 3]), { lhs_begin: -1, lhs_end: null, rhs_begin: 1 }), q.data,
    q.shape, (t) => tf.reshape(t, [30, 2, 2, 3]));
  assert.throws(() => nd.reshape_like(x, nd.zeros([5, 5])), /reshape_like/);
});

test('tile, repeat, reverse / flip against tfjs', () => {
  const { x, data, shape } = rand([2, 3, 4], 70);
  expectTf(nd.tile(x, { reps: [2, 1, 3] }), data, shape, (t) => tf.tile(t, [2, 1, 3]));
  expectTf(nd.tile(x, { reps: [2] }), data, shape, (t) => tf.tile(t, [1, 1, 2]), 'reps shorter than rank');
  expectTf(nd.tile(x, { reps: [2, 1, 1, 2] }), data, shape, (t) => tf.tile(tf.expandDims(t, 0), [2, 1, 1, 2]),
    'reps longer than rank');
  // repeat along axis a == tile of an inserted axis after a, then merge
  for (const axis of [0, 1, 2, -1]) {
    const a = axis < 0 ? axis + 3 : axis;
    const reps = [1, 1, 1, 1];
    reps[a + 1] = 3;
    const out = shape.slice();
    out[a] *= 3;
    expectTf(nd.repeat(x, { repeats: 3, axis }), data, shape, (t) => tf.reshape(tf.tile(tf.expandDims(t, a + 1), reps), out),
      `repeat axis ${axis}`);
  }
  expectTf(nd.repeat(x, { repeats: 2 }), data, shape,
    (t) => tf.reshape(tf.tile(tf.reshape(t, [24, 1]), [1, 2]), [48]), 'repeat flat');
  assert.deepEqual(nd.repeat(x, { repeats: 0, axis: 1 }).shape, [0]);
  expectTf(nd.reverse(x, { axis: [0, 2] }), data, shape, (t) => tf.reverse(t, [0, 2]));
  expectTf(nd.flip(x, { axis: -2 }), data, shape, (t) => tf.reverse(t, [1]));
  expectTf(nd.reverse(x, { axis: [1, 1] }), data, shape, (t) => tf.clone(t), 'an axis twice reverses twice');
});

test('depth_to_space and space_to_depth (NCHW, DCR) against tf.depthToSpace', () => {
  const { x, data, shape } = rand([2, 12, 3, 5], 80);
  const toNHWC = (t) => tf.transpose(t, [0, 2, 3, 1]), toNCHW = (t) => tf.transpose(t, [0, 3, 1, 2]);
  expectTf(nd.depth_to_space(x, { block_size: 2 }), data, shape, (t) => toNCHW(tf.depthToSpace(toNHWC(t), 2)));
  const s = rand([2, 3, 6, 4], 81);
  const y = nd.space_to_depth(s.x, { block_size: 2 });
  // space_to_depth written with tfjs reshapes/transposes: (N, C, H/b, b, W/b, b) -> (N, b, b, C, H/b, W/b)
  expectTf(y, s.data, s.shape,
    (t) => tf.reshape(tf.transpose(tf.reshape(t, [2, 3, 3, 2, 2, 2]), [0, 3, 5, 1, 2, 4]), [2, 12, 3, 2]));
  // and tf.depthToSpace undoes it
  const back = tf.tidy(() => toNCHW(tf.depthToSpace(toNHWC(tf.tensor(y.toTypedArray(), y.shape)), 2)));
  assertClose(back.dataSync(), s.data, exact);
  back.dispose();
  assert.throws(() => nd.depth_to_space(x, { block_size: 3 }), /depth_to_space/);
  assert.throws(() => nd.space_to_depth(nd.zeros([2, 3, 4])), /block_size/);
});

// ---- Pad ------------------------------------------------------------------------------------------
test('Pad / pad: constant (tf.pad), reflect (tf.mirrorPad), edge (tf.gather with clamped indices)', () => {
  const { x, data, shape } = rand([2, 3, 4, 5], 90);
  const pw = [0, 0, 0, 0, 1, 2, 3, 1];
  const paddings = [[0, 0], [0, 0], [1, 2], [3, 1]];
  expectTf(nd.Pad(x, { mode: 'constant', pad_width: pw, constant_value: 1.5 }), data, shape, (t) => tf.pad(t, paddings, 1.5));
  expectTf(nd.pad(x, { mode: 'constant', pad_width: pw }), data, shape, (t) => tf.pad(t, paddings), 'default 0');
  expectTf(nd.Pad(x, { mode: 'reflect', pad_width: pw }), data, shape, (t) => tf.mirrorPad(t, paddings, 'reflect'));
  const clamp = (L, before, after) => Array.from({ length: L + before + after }, (_, o) => Math.min(L - 1, Math.max(0, o - before)));
  expectTf(nd.pad(x, { mode: 'edge', pad_width: pw }), data, shape,
    (t) => tf.gather(tf.gather(t, clamp(4, 1, 2), 2), clamp(5, 3, 1), 3));
  const v = rand([1, 2, 3, 4, 5], 91);
  const pw5 = [0, 0, 0, 0, 2, 1, 0, 3, 1, 1];
  const p5 = [[0, 0], [0, 0], [2, 1], [0, 3], [1, 1]];
  expectTf(nd.Pad(v.x, { mode: 'reflect', pad_width: pw5 }), v.data, v.shape, (t) => tf.mirrorPad(t, p5, 'reflect'), '5-D');
  expectTf(nd.Pad(v.x, { mode: 'constant', pad_width: pw5, constant_value: -2 }), v.data, v.shape, (t) => tf.pad(t, p5, -2), '5-D');
  assert.throws(() => nd.Pad(nd.zeros([3, 4]), { mode: 'constant', pad_width: [1, 1, 1, 1] }), /4-D or 5-D/);
  assert.throws(() => nd.Pad(x, { mode: 'reflect', pad_width: [0, 0, 0, 0, 4, 0, 0, 0] }), /smaller than its size 4/);
  assert.throws(() => nd.Pad(x, { mode: 'wrap', pad_width: pw }), /'constant', 'edge', 'reflect'/);
  assert.throws(() => nd.Pad(x, { mode: 'edge', pad_width: [0, 1, 0, 0, 0, 0, 0, 0] }), /first 4 entries/);
});

// ---- dtypes -----------------------------------------------------------------------------------------
test('int32, float64 and uint8 inputs keep their dtype and exact values', () => {
  const shape = [2, 3, 4];
  const n = sizeOf(shape);
  const u = rng(100).uniform(n, 0, 1);
  const inputs = {
    int32: Int32Array.from(u, (v) => Math.floor((v - 0.5) * 4e9)),
    float64: Float64Array.from(u, (v) => v / 3 + 1e-12),
    uint8: Uint8Array.from(u, (v) => Math.floor(v * 256)),
  };
  for (const [dtype, values] of Object.entries(inputs)) {
    const x = nd.array(values, { shape });
    const check = (y, fn, fill, msg) => {
      assert.equal(y.dtype, dtype, `${dtype} ${msg}`);
      expectByIndex(y, values, shape, fn, fill);
    };
    check(nd.transpose(x, { axes: [2, 0, 1] }), (t) => tf.transpose(t, [2, 0, 1]), 0, 'transpose');
    check(x.reshape([-1, 0], { reverse: true }), (t) => tf.reshape(t, [6, 4]), 0, 'reshape');
    check(nd.slice(x, { begin: [null, 2], end: [null, null], step: [-1, -2] }),
      (t) => tf.stridedSlice(t, [0, 2, 0], [0, 0, 0], [-1, -2, 1], 5, 7), 0, 'slice');
    check(nd.tile(x, { reps: [2, 1, 1] }), (t) => tf.tile(t, [2, 1, 1]), 0, 'tile');
    check(nd.flip(x, { axis: 1 }), (t) => tf.reverse(t, [1]), 0, 'flip');
    check(nd.broadcast_to(nd.slice_axis(x, { axis: 1, begin: 0, end: 1 }), { shape: [2, 3, 4] }),
      (t) => tf.tile(tf.slice(t, [0, 0, 0], [2, 1, 4]), [1, 3, 1]), 0, 'broadcast_to');
    const x4 = x.reshape(1, 2, 3, 4);
    const padded = nd.Pad(x4, { mode: 'constant', pad_width: [0, 0, 0, 0, 1, 0, 0, 2], constant_value: 3 });
    assert.equal(padded.dtype, dtype);
    const t = tf.tidy(() => tf.pad(tf.reshape(tf.range(0, n, 1, 'int32'), [1, 2, 3, 4]), [[0, 0], [0, 0], [1, 0], [0, 2]], -1));
    assert.deepEqual(Array.from(padded.toTypedArray()), Array.from(t.dataSync(), (i) => (i < 0 ? 3 : values[i])));
    t.dispose();
    const cat = nd.Concat(x, x, { dim: 0 });
    assert.equal(cat.dtype, dtype);
    assert.deepEqual(Array.from(cat.toTypedArray()), [...values, ...values]);
    const st = nd.stack(x, x, { axis: 3 });
    assert.equal(st.dtype, dtype);
    assert.deepEqual(Array.from(st.toTypedArray()), Array.from(values).flatMap((v) => [v, v]));
  }
  // mixed dtypes are rejected by Concat
  assert.throws(() => nd.Concat(nd.array(inputs.int32, { shape }), nd.array(inputs.uint8, { shape })), /dtype/);
});
