// take, where, topk, sort, argsort, one_hot and gather_nd against TensorFlow.js's CPU kernels
// (gather, where, topk, oneHot, gatherND) on random data, with out-of-range indices mapped by
// hand (clip / wrap) before they reach tfjs, plus hand-worked cases and the error messages.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';

const { nd } = mx;
const exact = { rtol: 0, atol: 0 };
let seed = 1300;
const rand = (shape, lo = -1, hi = 1) => rng(seed++).uniform(sizeOf(shape), lo, hi);
const randInts = (n, lo, hi) => Array.from(rng(seed++).uniform(n, 0, 1), (u) => lo + Math.floor(u * (hi - lo)));
const tfRun = (fn) => tf.tidy(fn).dataSync();

// ---- take -------------------------------------------------------------------------------------------
test('take: clip, wrap and in-range indices match tf.gather along every axis', () => {
  const shape = [4, 5, 6];
  const a = rand(shape);
  const aa = nd.array(a, { shape });
  for (let axis = -3; axis < 3; axis++) {
    const n = shape[(axis + 3) % 3];
    const idx = randInts(6, -2 * n, 2 * n); // many out of range
    const idxShape = [2, 3];
    const clip = idx.map((v) => Math.min(Math.max(v, 0), n - 1));
    const wrap = idx.map((v) => ((v % n) + n) % n);
    const ia = nd.array(idx, { shape: idxShape });
    for (const [mode, mapped, fn] of [['clip', clip, nd.take], ['wrap', wrap, nd._npi_take]]) {
      const y = fn(aa, ia, { axis, mode });
      const want = tf.tidy(() => tf.gather(tf.tensor(a, shape), tf.tensor(mapped, idxShape, 'int32'), axis));
      assert.deepEqual(y.shape, want.shape, `${mode} axis ${axis}`);
      assertClose(y.toTypedArray(), want.dataSync(), { ...exact, msg: `${mode} axis ${axis}` });
      want.dispose();
    }
  }
  // raise with in-range indices is a plain gather
  const ok = nd.array([3, 0, 1], { shape: [3], dtype: 'int32' });
  assertClose(nd.take(aa, ok, { mode: 'raise' }).toTypedArray(),
    tfRun(() => tf.gather(tf.tensor(a, shape), tf.tensor([3, 0, 1], [3], 'int32'))), exact);
});

test('take: hand-worked clip / wrap; float indices truncate; the default is clip on axis 0', () => {
  const a = nd.array([10, 11, 12, 13], { shape: [4] });
  const idx = nd.array([-1, 4, 5, 1.9, -5], { shape: [5] });
  assert.deepEqual(Array.from(nd.take(a, idx).toTypedArray()), [10, 13, 13, 11, 10]);
  assert.deepEqual(Array.from(nd.take(a, idx, { mode: 'wrap' }).toTypedArray()), [13, 10, 11, 11, 13]);
});

test("take mode='raise' with an out-of-range index names 'take'; the next call works", () => {
  const a = nd.array([1, 2, 3], { shape: [3] });
  assert.throws(() => nd.take(a, nd.array([0, 3], { shape: [2] }), { mode: 'raise' }),
    (e) => e instanceof mx.MXNetError && /take/.test(e.message) && /index 3/.test(e.message) && /size 3/.test(e.message));
  assert.throws(() => nd.take(a, nd.array([0]), { axis: 1 }), /take.*axis=1 is out of range/);
  assert.deepEqual(Array.from(nd.take(a, nd.array([2, 0]), { mode: 'raise' }).toTypedArray()), [3, 1]);
});

// ---- where ------------------------------------------------------------------------------------------
test('where: same-shape and 1-D (row) conditions match tf.where', () => {
  const shape = [5, 7];
  const x = rand(shape), y = rand(shape), c = rand(shape).map((v) => (v > 0 ? 1 : 0));
  const want = tfRun(() => tf.where(tf.tensor(c, shape, 'bool'), tf.tensor(x, shape), tf.tensor(y, shape)));
  const got = nd.where(nd.array(c, { shape }), nd.array(x, { shape }), nd.array(y, { shape }));
  assertClose(got.toTypedArray(), want, exact);
  // an int32 condition, by the _sparse_ alias
  const got2 = nd._sparse_where(nd.array(c, { shape, dtype: 'int32' }), nd.array(x, { shape }), nd.array(y, { shape }));
  assertClose(got2.toTypedArray(), want, exact);
  // a 1-D condition picks whole rows
  const rows = [1, 0, 0, 1, 1];
  const wantRows = tfRun(() => tf.where(tf.tensor(rows, [5, 1], 'bool'), tf.tensor(x, shape), tf.tensor(y, shape)));
  assertClose(nd.where(nd.array(rows), nd.array(x, { shape }), nd.array(y, { shape })).toTypedArray(), wantRows, exact);
  assert.throws(() => nd.where(nd.array([1, 0]), nd.array(x, { shape }), nd.array(y, { shape })),
    /where.*condition of shape \(2,\)/);
  assert.throws(() => nd.where(nd.array(c, { shape }), nd.array(x, { shape }), nd.array(y.slice(0, 30), { shape: [5, 6] })),
    /where.*x and y must have the same shape/);
});

// ---- topk / sort / argsort ------------------------------------------------------------------------------
// tf.topk works on the last axis: move `axis` there and back.
function tfTopk(x, shape, axis, k, ascend) {
  return tf.tidy(() => {
    const nd0 = shape.length;
    const perm = [...Array(nd0).keys()].filter((d) => d !== axis).concat([axis]);
    const inv = perm.map((_, i) => perm.indexOf(i));
    let t = tf.transpose(tf.tensor(x, shape), perm);
    if (ascend) t = tf.neg(t);
    const { values, indices } = tf.topk(t, k);
    const v = tf.transpose(ascend ? tf.neg(values) : values, inv);
    const i = tf.transpose(indices, inv);
    return { values: v.dataSync(), indices: i.dataSync(), shape: v.shape };
  });
}

test('topk: values, indices and both along each axis, largest and smallest, match tf.topk', () => {
  const shape = [3, 8, 5];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  for (const axis of [0, 1, 2]) {
    for (const ascend of [false, true]) {
      const k = [2, 5, 3][axis];
      const want = tfTopk(x, shape, axis, k, ascend);
      const attrs = { axis, k, is_ascend: ascend };
      const idx = nd.topk(xa, attrs); // indices, float32
      assert.equal(idx.dtype, 'float32');
      assert.deepEqual(idx.shape, want.shape);
      assertClose(idx.toTypedArray(), want.indices, exact);
      const val = nd._npx_topk(xa, { ...attrs, ret_typ: 'value' });
      assertClose(val.toTypedArray(), want.values, exact);
      const [v2, i2] = nd.topk(xa, { ...attrs, ret_typ: 'both', dtype: 'int64' });
      assert.equal(i2.dtype, 'int64');
      assertClose(v2.toTypedArray(), want.values, exact);
      assertClose(Array.from(i2.toTypedArray(), Number), want.indices, exact);
    }
  }
});

test('topk: mask marks the selected positions; axis=None flattens; k <= 0 selects all', () => {
  const shape = [4, 6];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  const want = tfTopk(x, shape, 1, 2, false);
  const mask = nd.topk(xa, { k: 2, ret_typ: 'mask' });
  assert.deepEqual(mask.shape, shape);
  const wantMask = new Float32Array(24);
  for (let r = 0; r < 4; r++) for (let j = 0; j < 2; j++) wantMask[r * 6 + want.indices[r * 2 + j]] = 1;
  assertClose(mask.toTypedArray(), wantMask, exact);
  const flat = nd.topk(xa, { axis: null, k: 5, ret_typ: 'both' });
  assert.deepEqual(flat[1].shape, [5]);
  const wantFlat = tfTopk(x, [24], 0, 5, false);
  assertClose(flat[0].toTypedArray(), wantFlat.values, exact);
  assertClose(flat[1].toTypedArray(), wantFlat.indices, exact);
  const all = nd.topk(xa, { k: 0, ret_typ: 'value' });
  assert.deepEqual(all.shape, shape);
  assertClose(all.toTypedArray(), tfTopk(x, shape, 1, 6, false).values, exact);
  assert.throws(() => nd.topk(xa, { k: 7 }), /topk.*k=7 must not exceed the 6 elements/);
  assert.throws(() => nd.topk(xa, { axis: 2 }), /topk.*axis=2 is out of range/);
});

test('topk ties keep the lower index first', () => {
  const x = nd.array([2, 5, 5, 1, 5, 2], { shape: [6] });
  assert.deepEqual(Array.from(nd.topk(x, { k: 4 }).toTypedArray()), [1, 2, 4, 0]);
  assert.deepEqual(Array.from(nd.topk(x, { k: 3, is_ascend: true }).toTypedArray()), [3, 0, 5]);
  assert.deepEqual(Array.from(nd.argsort(x).toTypedArray()), [3, 0, 5, 1, 2, 4]);
  // many ties, k small against the axis (the selection path) and k large (the full sort), vs
  // JavaScript's stable Array.prototype.sort
  const v = randInts(3 * 64, 0, 5);
  const va = nd.array(v, { shape: [3, 64] });
  for (const k of [1, 5, 40]) {
    for (const ascend of [false, true]) {
      const want = [];
      for (let r = 0; r < 3; r++) {
        const row = [...Array(64).keys()].sort((a, b) => (ascend ? 1 : -1) * (v[r * 64 + a] - v[r * 64 + b]));
        want.push(...row.slice(0, k));
      }
      assert.deepEqual(Array.from(nd.topk(va, { k, is_ascend: ascend }).toTypedArray()), want, `k=${k} ascend=${ascend}`);
    }
  }
});

test('sort and argsort match tf.topk over the whole axis, both orders, for every alias', () => {
  const shape = [5, 9];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  for (const axis of [0, 1, -1]) {
    const ax = (axis + 2) % 2;
    const desc = tfTopk(x, shape, ax, shape[ax], false), asc = tfTopk(x, shape, ax, shape[ax], true);
    assertClose(nd.sort(xa, { axis }).toTypedArray(), asc.values, exact);
    assertClose(nd._npi_sort(xa, { axis, is_ascend: false }).toTypedArray(), desc.values, exact);
    assertClose(nd.argsort(xa, { axis }).toTypedArray(), asc.indices, exact);
    const ai = nd._npi_argsort(xa, { axis, is_ascend: false, dtype: 'int32' });
    assert.equal(ai.dtype, 'int32');
    assertClose(Array.from(ai.toTypedArray()), desc.indices, exact);
  }
  const flat = nd.sort(xa, { axis: null });
  assert.deepEqual(flat.shape, [45]);
  assertClose(flat.toTypedArray(), tfTopk(x, [45], 0, 45, true).values, exact);
  assert.throws(() => nd.argsort(nd.zeros([300]), { dtype: 'uint8' }), /argsort.*uint8 cannot represent/);
});

// ---- one_hot ----------------------------------------------------------------------------------------------
test('one_hot matches tf.oneHot, out-of-range indices giving all-off rows', () => {
  const idx = [0, 3, 4, -1, 5, 2, 1, 9];
  for (const fn of [nd.one_hot, nd._npx_one_hot]) {
    const y = fn(nd.array(idx, { shape: [2, 4] }), { depth: 5, on_value: 2.5, off_value: -1 });
    assert.deepEqual(y.shape, [2, 4, 5]);
    assertClose(y.toTypedArray(), tfRun(() => tf.oneHot(tf.tensor(idx, [2, 4], 'int32'), 5, 2.5, -1, 'float32')), exact);
  }
  const yi = nd.one_hot(nd.array([1, 0], { dtype: 'int32' }), { depth: 3, dtype: 'int32' });
  assert.equal(yi.dtype, 'int32');
  assert.deepEqual(Array.from(yi.toTypedArray()), [0, 1, 0, 1, 0, 0]);
  assert.throws(() => nd.one_hot(nd.array([1]), { depth: -2 }), /one_hot.*depth=-2/);
});

// ---- gather_nd ---------------------------------------------------------------------------------------------
test('gather_nd matches tf.gatherND (index tuples moved to the last axis); negatives count from the end', () => {
  const shape = [3, 4, 5];
  const data = rand(shape);
  const da = nd.array(data, { shape });
  for (const [m, fn] of [[1, nd.gather_nd], [2, nd._npi_gather_nd], [3, nd._npx_gather_nd]]) {
    const n = 6;
    const idx = [];
    for (let j = 0; j < m; j++) idx.push(...randInts(n, -shape[j], shape[j]));
    const y = fn(da, nd.array(idx, { shape: [m, 2, 3], dtype: 'int32' }));
    assert.deepEqual(y.shape, [2, 3, ...shape.slice(m)]);
    const pos = idx.map((v, e) => (v < 0 ? v + shape[Math.floor(e / n)] : v));
    const want = tfRun(() => tf.gatherND(tf.tensor(data, shape),
      tf.transpose(tf.tensor(pos, [m, 2, 3], 'int32'), [1, 2, 0])));
    assertClose(y.toTypedArray(), want, { ...exact, msg: `M=${m}` });
  }
  assert.throws(() => nd.gather_nd(da, nd.array([0, 3], { shape: [1, 2] })), /gather_nd.*index 3 is out of bounds for axis 0 with size 3/);
  assert.throws(() => nd.gather_nd(da, nd.array([0, 1], { shape: [2] })), /gather_nd.*at least 2 dims/);
});
