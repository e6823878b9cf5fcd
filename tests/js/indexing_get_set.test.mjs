// NDArray indexing (js-api.md rule 10, MXNet 1.9.1's __getitem__ / __setitem__): x.get(...keys)
// and x.set(...keys, value). Reads are checked against TensorFlow.js's CPU kernels (stridedSlice
// with begin/end/new-axis/shrink masks written out by hand for each key, gather, gatherND,
// transpose); writes against expected arrays built by hand-written loops over the indexed
// positions. View semantics follow MXNet's contiguity rule: each case says whether MXNet returns
// a view, and the test writes through the result to check it.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, assertClose } from './oracle.mjs';

const { nd } = mx;
const exact = { rtol: 0, atol: 0 };
const SHAPE = [2, 3, 4, 5];
const DATA = Float32Array.from({ length: 120 }, (_, i) => i);
const base = () => nd.array(DATA, { shape: SHAPE });
const tfx = () => tf.tensor(DATA, SHAPE);

// y against a tfjs result (shape and values).
function expectTf(y, fn, msg = '') {
  const want = tf.tidy(() => fn(tfx()));
  assert.deepEqual(y.shape, want.shape, `${msg} shape`);
  assertClose(y.toTypedArray(), want.dataSync(), { ...exact, msg });
  want.dispose();
}
const idx = (v, shape) => nd.array(v, { dtype: 'int32', ...(shape ? { shape } : {}) });
const at4 = (i, j, k, l) => ((i * 3 + j) * 4 + k) * 5 + l; // flat offset in SHAPE
// A copy of DATA with f(i, j, k, l, old) applied everywhere (the hand-worked expectation).
function expected4(f) {
  const out = Float32Array.from(DATA);
  for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) for (let k = 0; k < 4; k++) {
    for (let l = 0; l < 5; l++) out[at4(i, j, k, l)] = f(i, j, k, l, out[at4(i, j, k, l)]);
  }
  return out;
}
// Does writing into y change x? (y's first element is set to -1000.)
function writesThrough(x, y) {
  const before = x.toTypedArray();
  y.set(...Array(y.ndim).fill(0), -1000);
  const after = x.toTypedArray();
  return after.some((v, i) => v !== before[i]);
}

// ---- basic reads -------------------------------------------------------------------------------
test('integers: x[1], x[-1], x[0, -2], x[1, 2, 3, 4] against tf.stridedSlice with shrink masks', () => {
  const x = base();
  const full = [2, 3, 4, 5], one = [1, 1, 1, 1];
  expectTf(x.get(1), (t) => tf.stridedSlice(t, [1, 0, 0, 0], full, one, 0, 0, 0, 0, 0b0001), 'x[1]');
  expectTf(x.get(-1), (t) => tf.stridedSlice(t, [1, 0, 0, 0], full, one, 0, 0, 0, 0, 0b0001), 'x[-1]');
  expectTf(x.get(0, -2), (t) => tf.stridedSlice(t, [0, 1, 0, 0], [1, 2, 4, 5], one, 0, 0, 0, 0, 0b0011), 'x[0, -2]');
  // every axis indexed: MXNet returns shape (1,), not a scalar
  const e = x.get(1, 2, 3, 4);
  assert.deepEqual(e.shape, [1]);
  assert.equal(e.item(), at4(1, 2, 3, 4));
  const e2 = x.get(-1, -1, -4, -5);
  assert.equal(e2.item(), at4(1, 2, 0, 0));
  // x[1] of a 1-D array is (1,) too (MXNDArrayAt)
  const v = nd.array([5, 6, 7]);
  assert.deepEqual(v.get(-2).shape, [1]);
  assert.equal(v.get(-2).item(), 6);
});

test('slices with every omitted part and negative steps against tf.stridedSlice', () => {
  const x = base();
  // x[1:] and x[:1] (fast path, first axis)
  expectTf(x.get([1]), (t) => tf.slice(t, [1, 0, 0, 0], [1, 3, 4, 5]), 'x[1:]');
  expectTf(x.get([null, 1]), (t) => tf.slice(t, [0, 0, 0, 0], [1, 3, 4, 5]), 'x[:1]');
  expectTf(x.get([-1, null, 1]), (t) => tf.slice(t, [1, 0, 0, 0], [1, 3, 4, 5]), 'x[-1::1]');
  // x[:, :2], x[:, -2:], x[:, 1:-1]
  expectTf(x.get([], [null, 2]), (t) => tf.slice(t, [0, 0, 0, 0], [2, 2, 4, 5]), 'x[:, :2]');
  expectTf(x.get([], [-2, null]), (t) => tf.slice(t, [0, 1, 0, 0], [2, 2, 4, 5]), 'x[:, -2:]');
  expectTf(x.get([], [], [1, -1]), (t) => tf.slice(t, [0, 0, 1, 0], [2, 3, 2, 5]), 'x[:, :, 1:-1]');
  // x[::2] (step only), x[:, ::-1], x[:, :, 3:0:-2], x[..., ::-2], x[:, 5:-9:-1] (clamped)
  expectTf(x.get([null, null, 2]), (t) => tf.stridedSlice(t, [0, 0, 0, 0], [2, 3, 4, 5], [2, 1, 1, 1]), 'x[::2]');
  expectTf(x.get([], [null, null, -1]),
    (t) => tf.stridedSlice(t, [0, 0, 0, 0], [0, 0, 0, 0], [1, -1, 1, 1], 0b1111, 0b1111), 'x[:, ::-1]');
  expectTf(x.get([], [], [3, 0, -2]),
    (t) => tf.stridedSlice(t, [0, 0, 3, 0], [0, 0, 0, 0], [1, 1, -2, 1], 0b1011, 0b1011), 'x[:, :, 3:0:-2]');
  expectTf(x.get('...', [null, null, -2]),
    (t) => tf.stridedSlice(t, [0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, -2], 0b1111, 0b1111), 'x[..., ::-2]');
  expectTf(x.get([], [5, -9, -1]),
    (t) => tf.stridedSlice(t, [0, 2, 0, 0], [0, 0, 0, 0], [1, -1, 1, 1], 0b1101, 0b1111), 'x[:, 5:-9:-1]');
  // x[:] and x[()] are x itself, as in MXNet
  assert.equal(x.get([]), x);
  assert.equal(x.get(), x);
  assert.equal(x.get([null, null, 1]), x);
  // empty results: x[3:1] (MXNet's tuple path; its one-slice fast path raises) and x[:, 2:2]
  assert.deepEqual(x.get([3, 1]).shape, [0, 3, 4, 5]);
  assert.deepEqual(x.get([], [2, 2]).shape, [2, 0, 4, 5]);
  assert.deepEqual(x.get([], [2, 0, 1]).shape, [2, 0, 4, 5]);
});

test('null (new axis), ... and mixed keys against tf.gather / reverse / expandDims / stridedSlice', () => {
  const x = base();
  assert.deepEqual(x.get(null).shape, [1, 2, 3, 4, 5]);
  assertClose(x.get(null).toTypedArray(), DATA, exact);
  // (tfjs's stridedSlice mishandles new-axis masks on partial specs: gather, reverse and
  // expandDims compose the same selections)
  const g = (t, ids, axis) => tf.gather(t, tf.tensor1d(ids, 'int32'), axis);
  // x[:, None, 1] -> (2, 1, 4, 5)
  expectTf(x.get([], null, 1), (t) => tf.expandDims(tf.squeeze(g(t, [1], 1), [1]), 1), 'x[:, None, 1]');
  // x[0, ..., 1] -> (3, 4): the ellipsis covers axes 1 and 2
  expectTf(x.get(0, '...', 1),
    (t) => tf.stridedSlice(t, [0, 0, 0, 1], [1, 3, 4, 2], [1, 1, 1, 1], 0, 0, 0, 0, 0b1001), 'x[0, ..., 1]');
  // x[..., None] and x[None, ..., None, 2] -> (1, 2, 3, 4, 1)
  assert.deepEqual(x.get('...', null).shape, [2, 3, 4, 5, 1]);
  expectTf(x.get(null, '...', null, 2),
    (t) => tf.expandDims(tf.expandDims(tf.squeeze(g(t, [2], 3), [3]), 3), 0), 'x[None, ..., None, 2]');
  // x[1, ::-1, None, 1:4:2] -> (3, 1, 2, 5)
  expectTf(x.get(1, [null, null, -1], null, [1, 4, 2]),
    (t) => tf.expandDims(g(tf.reverse(tf.squeeze(g(t, [1], 0), [0]), 0), [1, 3], 1), 1), 'x[1, ::-1, None, 1:4:2]');
  // x[0, None] -> (1, 3, 4, 5) and x[1, 2, 3, 4, None] -> (1,)
  assert.deepEqual(x.get(0, null).shape, [1, 3, 4, 5]);
  const e = x.get(1, 2, 3, 4, null);
  assert.deepEqual(e.shape, [1]);
  assert.equal(e.item(), at4(1, 2, 3, 4));
  // a 0-d NDArray key is an integer
  const k0 = nd.empty([], { dtype: 'int32' });
  k0.set(1);
  expectTf(x.get(k0), (t) => tf.stridedSlice(t, [1, 0, 0, 0], [2, 3, 4, 5], [1, 1, 1, 1], 0, 0, 0, 0, 1), 'x[array(1)]');
});

test('0-d arrays: x[()] and x[:] are x, new axes give (1, ...), and set takes a number or a size-1 array', () => {
  const s = nd.empty([], { dtype: 'float64' });
  s.set(2.5);
  assert.equal(s.toArray(), 2.5);
  assert.equal(s.get(), s);
  assert.equal(s.get([]), s);
  const v = s.get(null, null);
  assert.deepEqual(v.shape, [1, 1]);
  s.set([], nd.array([[7]]));
  assert.equal(v.item(), 7); // a view
  s.set(v.get(0));
  assert.equal(s.item(), 7);
  assert.throws(() => s.get(0), /too many indices \(1\) for array with 0 dimensions/);
  assert.throws(() => s.set(0, 1), /0-d array/);
  assert.throws(() => s.set(nd.array([1, 2])), /0-d array/);
});

// ---- views -----------------------------------------------------------------------------------------
test('basic indexing returns a view exactly where MXNet 1.9.1 does, and writes go through', () => {
  // [description, key, is a view in MXNet]
  const cases = [
    ['x[1]', [1], true],
    ['x[-1, 2]', [-1, 2], true],
    ['x[1:2]', [[1, 2]], true],
    ['x[1, :1, :]', [1, [null, 1], []], true], // MXNet's docstring example: contiguous
    ['x[0, 1:3]', [0, [1, 3]], true],
    ['x[0, 2, 1:3]', [0, 2, [1, 3]], true],
    ['x[::2] (one row selected)', [[null, null, 2]], true],
    ['x[0::-1] (one row selected, negative step)', [[0, null, -1], 0], true],
    ['x[1::-1] (two rows reversed)', [[1, null, -1]], false],
    ['x[1, 2, 3, 4]', [1, 2, 3, 4], true],
    ['x[None, 1]', [null, 1], true],
    ['x[..., 4] (not contiguous)', ['...', 4], false],
    ['x[:, 0] (not contiguous)', [[], 0], false],
    ['x[::-1] (two rows reversed)', [[null, null, -1]], false],
    ['x[0, ::2]', [0, [null, null, 2]], false],
    ['x[0, 1:3, 1:2]', [0, [1, 3], [1, 2]], false],
  ];
  for (const [what, key, isView] of cases) {
    const x = base();
    const y = x.get(...key);
    assert.equal(writesThrough(x, y), isView, `${what}: ${isView ? 'a view' : 'a copy'} in MXNet`);
  }
  // a view's values and the write's position: x[1, 1:3][0, 0, 0] is x[1, 1, 0, 0]
  const x = base();
  const v = x.get(1, [1, 3]);
  assert.deepEqual(v.shape, [2, 4, 5]);
  assertClose(v.toTypedArray(), DATA.slice(at4(1, 1, 0, 0), at4(1, 1, 0, 0) + 40), exact);
  v.set(1, 2, 3, 77);
  assert.equal(x.toTypedArray()[at4(1, 2, 2, 3)], 77);
  // a view of a view, and the view outlives its base's handle
  const w = v.get(1).get(2);
  x.dispose();
  w.set(-1, 55);
  assert.equal(v.toTypedArray()[20 + 10 + 4], 55);
  // advanced indexing always copies
  const x2 = base();
  assert.equal(writesThrough(x2, x2.get(idx([1]))), false);
});

// ---- advanced reads --------------------------------------------------------------------------------------
test('advanced indexing with one NDArray key against tf.gather', () => {
  const x = base();
  expectTf(x.get(idx([1, 0, 1])), (t) => tf.gather(t, tf.tensor1d([1, 0, 1], 'int32'), 0), 'x[[1, 0, 1]]');
  expectTf(x.get([], idx([[2, 0]])), (t) => tf.gather(t, tf.tensor2d([[2, 0]], [1, 2], 'int32'), 1), 'x[:, [[2, 0]]]');
  // negative, float (truncated) and int64 index arrays
  expectTf(x.get([], [], nd.array([-1, 0.9, 2.2])), (t) => tf.gather(t, tf.tensor1d([3, 0, 2], 'int32'), 2), 'float/negative');
  expectTf(x.get('...', nd.array([4, 1], { dtype: 'int64' })), (t) => tf.gather(t, tf.tensor1d([4, 1], 'int32'), 3), 'int64');
  // with integers and a new axis: x[1, [2, 0], None] -> (2, 1, 4, 5) (numpy's placement)
  const row1 = (t) => tf.squeeze(tf.gather(t, tf.tensor1d([1], 'int32'), 0), [0]);
  const y = x.get(1, idx([2, 0]), null);
  expectTf(y, (t) => tf.expandDims(tf.gather(row1(t), tf.tensor1d([2, 0], 'int32'), 0), 1), 'x[1, [2, 0], None]');
  // x[None, [1, 0]] -> (1, 2, 3, 4, 5)
  expectTf(x.get(null, idx([1, 0])), (t) => tf.expandDims(tf.gather(t, tf.tensor1d([1, 0], 'int32'), 0), 0), 'x[None, [1, 0]]');
});

test('several NDArray keys broadcast together, adjacent or split by slices, against tf.gatherND', () => {
  const x = base();
  const T = (v, shape) => tf.tensor(v, shape, 'int32');
  const row = (t, i) => tf.squeeze(tf.gather(t, T([i], [1]), 0), [0]);
  // x[[[0], [1]], [0, 2]] -> (2, 2, 4, 5): pairs (0,0) (0,2) (1,0) (1,2)
  expectTf(x.get(idx([[0], [1]]), idx([0, 2])),
    (t) => tf.gatherND(t, T([[[0, 0], [0, 2]], [[1, 0], [1, 2]]], [2, 2, 2])), 'x[[[0],[1]], [0,2]]');
  // adjacent block after a slice: x[:, [2, 0], [1, 1]] -> (2, 2, 5), block stays in place
  expectTf(x.get([], idx([2, 0]), idx([1, 1])),
    (t) => tf.transpose(tf.gatherND(tf.transpose(t, [1, 2, 0, 3]), T([[2, 1], [0, 1]], [2, 2])), [1, 0, 2]),
    'x[:, [2, 0], [1, 1]]');
  // split by a slice: x[[0, 1], :, [1, 3]] -> (2, 3, 5), the block moves to the front
  expectTf(x.get(idx([0, 1]), [], idx([1, 3])),
    (t) => tf.gatherND(tf.transpose(t, [0, 2, 1, 3]), T([[0, 1], [1, 3]], [2, 2])), 'x[[0, 1], :, [1, 3]]');
  // with a stepped slice and an integer: x[1, [2, 1], ::-2] -> (2, 2, 5)
  expectTf(x.get(1, idx([2, 1]), [null, null, -2]),
    (t) => tf.gather(tf.gather(row(t, 1), T([2, 1], [2]), 0), T([3, 1], [2]), 1), 'x[1, [2, 1], ::-2]');
  // split by a slice and a new axis: x[[1], 1:3, None, [0, 3]] -> (2, 2, 1, 5)
  expectTf(x.get(idx([1]), [1, 3], null, idx([0, 3])),
    (t) => tf.expandDims(tf.slice(tf.gatherND(tf.transpose(t, [0, 2, 1, 3]), T([[1, 0], [1, 3]], [2, 2])),
      [0, 1, 0], [2, 2, 5]), 2), 'x[[1], 1:3, None, [0, 3]]');
  // a 2-D and a 1-D key broadcast: x[0, [[0], [2]], [1, 3, 0]] -> (2, 3, 5)
  expectTf(x.get(0, idx([[0], [2]]), idx([1, 3, 0])),
    (t) => tf.gatherND(row(t, 0), T([[[0, 1], [0, 3], [0, 0]], [[2, 1], [2, 3], [2, 0]]], [2, 3, 2])),
    'x[0, [[0], [2]], [1, 3, 0]]');
});

// ---- writes -------------------------------------------------------------------------------------------------
test('set with a number: the whole array, an integer, slices with steps, new axes and ...', () => {
  let x = base();
  x.set(3);
  assertClose(x.toTypedArray(), new Float32Array(120).fill(3), exact);
  x = base();
  x.set([], 7); // x[:] = 7
  assertClose(x.toTypedArray(), new Float32Array(120).fill(7), exact);
  x = base();
  assert.equal(x.set(1, -1), x); // returns x
  assertClose(x.toTypedArray(), expected4((i, j, k, l, o) => (i === 1 ? -1 : o)), exact);
  x = base();
  x.set([], [null, null, 2], -2); // x[:, ::2] = -2
  assertClose(x.toTypedArray(), expected4((i, j, k, l, o) => (j % 2 === 0 ? -2 : o)), exact);
  x = base();
  x.set('...', [3, 0, -2], null, true); // x[..., 3:0:-2, None] = True -> 1
  assertClose(x.toTypedArray(), expected4((i, j, k, l, o) => (l === 3 || l === 1 ? 1 : o)), exact);
  x = base();
  x.set(-1, 0, [1, null, -1], -3, 9); // x[-1, 0, 1::-1, -3] = 9
  assertClose(x.toTypedArray(), expected4((i, j, k, l, o) => (i === 1 && j === 0 && k <= 1 && l === 2 ? 9 : o)), exact);
  // int32: the number is cast (truncated)
  const n = nd.array([1, 2, 3, 4], { dtype: 'int32' });
  n.set([1, 3], 7.8);
  assert.deepEqual(Array.from(n.toTypedArray()), [1, 7, 7, 4]);
});

test('set with a broadcasting NDArray, nested arrays and typed arrays', () => {
  const y = nd.zeros([3, 4]);
  y.set([1, 3], nd.array([1, 2, 3, 4])); // y[1:3] = [1, 2, 3, 4]
  assert.deepEqual(y.toArray(), [[0, 0, 0, 0], [1, 2, 3, 4], [1, 2, 3, 4]]);
  y.set([], [null, null, 3], nd.array([[5], [6], [7]])); // y[:, ::3] = [[5], [6], [7]]
  assert.deepEqual(y.toArray(), [[5, 0, 0, 5], [6, 2, 3, 6], [7, 2, 3, 7]]);
  y.set(0, [[[9, 8, 7, 6]]]); // surplus leading 1s are dropped
  assert.deepEqual(y.toArray(), [[9, 8, 7, 6], [6, 2, 3, 6], [7, 2, 3, 7]]);
  y.set(2, [1, null, -1], new Float32Array([10, 11])); // y[2, 1::-1] = [10, 11]
  assert.deepEqual(y.toArray(), [[9, 8, 7, 6], [6, 2, 3, 6], [11, 10, 3, 7]]);
  y.set(nd.array([[4]], { dtype: 'int32' })); // y[:] = [[4]] (dtype converted)
  assert.deepEqual(y.toArray(), [[4, 4, 4, 4], [4, 4, 4, 4], [4, 4, 4, 4]]);
  y.set(1, null, nd.array([[1, 2, 3, 4]])); // y[1, None] = value with the new axis
  assert.deepEqual(y.toArray(), [[4, 4, 4, 4], [1, 2, 3, 4], [4, 4, 4, 4]]);
  // from a view of itself: y[0] = y[1]; y[:] = y is a no-op
  y.set(0, y.get(1));
  y.set(y);
  assert.deepEqual(y.toArray(), [[1, 2, 3, 4], [1, 2, 3, 4], [4, 4, 4, 4]]);
  // through a view and into a copy
  const v = y.get(2);
  v.set([1, 3], 0);
  assert.deepEqual(y.toArray()[2], [4, 0, 0, 4]);
  const c = y.get([], 0);
  c.set(100);
  assert.deepEqual(y.toArray().map((r) => r[0]), [1, 1, 4]);
});

test('advanced set: NDArray keys alone, broadcast, mixed with slices and integers', () => {
  const y = nd.zeros([3, 4]);
  y.set(idx([0, 2]), idx([1, 3]), 7); // y[[0, 2], [1, 3]] = 7
  assert.deepEqual(y.toArray(), [[0, 7, 0, 0], [0, 0, 0, 0], [0, 0, 0, 7]]);
  y.set(idx([2, 0]), nd.array([[1, 1, 1, 1], [2, 2, 2, 2]])); // rows 2 and 0
  assert.deepEqual(y.toArray(), [[2, 2, 2, 2], [0, 0, 0, 0], [1, 1, 1, 1]]);
  y.set([], idx([0, 3]), nd.array([9, 8])); // y[:, [0, 3]] = [9, 8] broadcast over rows
  assert.deepEqual(y.toArray(), [[9, 2, 2, 8], [9, 0, 0, 8], [9, 1, 1, 8]]);
  y.set(1, nd.array([-1, 1.5]), [5, 6]); // y[1, [-1, 1.5]] = [5, 6]: index -1 -> 3, 1.5 -> 1
  assert.deepEqual(y.toArray(), [[9, 2, 2, 8], [9, 6, 0, 5], [9, 1, 1, 8]]);
  y.set(idx([[0], [2]]), idx([1, 2]), nd.array([[3, 4], [5, 6]])); // broadcast keys (2, 2)
  assert.deepEqual(y.toArray(), [[9, 3, 4, 8], [9, 6, 0, 5], [9, 5, 6, 8]]);
  const x = base();
  x.set(idx([0, 1]), [], idx([1, 3]), null, 0); // x[[0, 1], :, [1, 3], None] = 0
  assertClose(x.toTypedArray(), expected4((i, j, k, l, o) => ((i === 0 && k === 1) || (i === 1 && k === 3) ? 0 : o)), exact);
});

// ---- errors ---------------------------------------------------------------------------------------------
function expectError(fn, re) {
  assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));
}

test('errors are MXNetError with the index and the axis size, and leave the array unchanged', () => {
  const x = base();
  expectError(() => x.get(2), /index 2 is out of bounds for axis 0 with size 2/);
  expectError(() => x.get(-3), /index -3 is out of bounds for axis 0 with size 2/);
  expectError(() => x.get(0, 3), /index 3 is out of bounds for axis 1 with size 3/);
  expectError(() => x.get([], [], -5), /index -5 is out of bounds for axis 2 with size 4/);
  expectError(() => x.get(idx([0, 2])), /index 2 is out of bounds for axis 0 with size 2/);
  expectError(() => x.get([], idx([1]), idx([4])), /index 4 is out of bounds for axis 2 with size 4/);
  expectError(() => x.get(0, 0, 0, 0, 0), /too many indices \(5\) for array with 4 dimensions/);
  expectError(() => x.get(0, '...', 0, 0, 0, 0), /too many indices/);
  expectError(() => x.get('a'), /key 'a' at position 0/);
  expectError(() => x.get(0, 1.5), /key 1.5 at position 1 is not an integer/);
  expectError(() => x.get({}), /position 0/);
  expectError(() => x.get(undefined), /undefined/);
  expectError(() => x.get(true), /boolean/);
  expectError(() => x.get(nd.array([1, 0], { dtype: 'bool' })), /boolean/);
  expectError(() => x.get([1, 2, 3, 4]), /more than 3 parts/);
  expectError(() => x.get([0, 'a']), /neither an integer nor null/);
  expectError(() => x.get([null, null, 0]), /step cannot be zero/);
  expectError(() => x.get([], [0, 3, 0]), /step cannot be zero/);
  expectError(() => x.get('...', 0, '...'), /single ellipsis/);
  expectError(() => x.get(idx([[0, 1]]), idx([0, 1, 2])), /could not be broadcast together with shapes \(1, 2\) \(3,\)/);

  const before = x.toTypedArray();
  const unchanged = () => assertClose(x.toTypedArray(), before, { ...exact, msg: 'unchanged' });
  expectError(() => x.set(2, 1), /index 2 is out of bounds for axis 0 with size 2/);
  expectError(() => x.set(0, 0, 0, 0, 0, 1), /too many indices/);
  expectError(() => x.set(1, nd.array([1, 2])), /value of shape \(2,\) to the indexed region of shape \(3, 4, 5\)/);
  expectError(() => x.set([], 0, nd.ones([3, 5])), /value of shape \(3, 5\) to the indexed region of shape \(2, 4, 5\)/);
  expectError(() => x.set(idx([1, 0]), idx([0, 5]), 1), /index 5 is out of bounds for axis 1 with size 3/);
  expectError(() => x.set(idx([1, 0]), nd.ones([3, 3, 4, 5])), /do not broadcast/);
  expectError(() => x.set(0, 'abc'), /cannot assign 'abc'/);
  expectError(() => x.set(0, [[1, 2], [3]]), /cannot assign/);
  expectError(() => x.set(), /needs a value/);
  expectError(() => x.set(0, null, nd.ones([1, 2, 4, 5])), /cannot squeeze axis 0|do not broadcast/);
  unchanged();
  // the wasm instance keeps working
  assert.equal(x.get(1, 2, 3, 4).item(), at4(1, 2, 3, 4));
});

test('get/set create no leaked arrays', () => {
  const x = base();
  const i1 = idx([1]), i0 = idx([0]), i9 = idx([9]), v5 = nd.array([1, 2, 3, 4, 5]), v7 = nd.ones([7]);
  const start = mx.memory().numArrays;
  for (let r = 0; r < 3; r++) {
    x.get(1).dispose();
    x.get([], 0).dispose();
    x.get(i1, [], null).dispose();
    x.set([], [null, null, 2], v5);
    x.set(i0, 1, [1, 2, 3, 4, 5]);
    x.set(1, 5);
    x.set([null, null, -1], 2, 0, v5);
    assert.throws(() => x.set(i9, 1), mx.MXNetError);
    assert.throws(() => x.set(0, v7), mx.MXNetError);
  }
  assert.equal(mx.memory().numArrays - start, 0);
});
