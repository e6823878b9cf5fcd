// FullyConnected, dot and batch_dot against TensorFlow.js's CPU matMul/dot (an independent
// implementation) on random inputs, float64 against a plain double loop written here, and the
// error messages.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';

const { nd } = mx;
const tol = { rtol: 1e-5, atol: 1e-5 };
let seed = 100;
const rand = (shape) => rng(seed++).uniform(sizeOf(shape), -1, 1);
const ndarr = (data, shape) => nd.array(data, { shape });
const tfRun = (fn) => tf.tidy(fn).dataSync();

// ---- FullyConnected: Y = X W^T + b ------------------------------------------------------------
// X is data reshaped to (rows, in); the oracle is tf.matMul(X, W, false, true) + b.
function fcOracle(x, xShape2d, w, wShape, b) {
  return tfRun(() => {
    const y = tf.matMul(tf.tensor(x, xShape2d), tf.tensor(w, wShape), false, true);
    return b ? tf.add(y, tf.tensor1d(b)) : y;
  });
}

const fcCases = [
  // [label, data shape, num_hidden, flatten, no_bias, op name]
  ['2-D, bias', [4, 6], 5, true, false, 'FullyConnected'],
  ['4-D (2,3,4,5) flattened', [2, 3, 4, 5], 7, true, false, 'FullyConnected'],
  ['no_bias', [3, 10], 9, true, true, '_npx_fully_connected'],
  ['flatten=False on 3-D', [2, 3, 5], 4, false, false, '_sparse_FullyConnected'],
  ['flatten=False, no_bias, 4-D', [2, 2, 3, 6], 3, false, true, 'FullyConnected'],
  ['batch 1, in 300, num_hidden 257', [1, 300], 257, true, false, 'FullyConnected'],
  ['batch 17, in 300, num_hidden 257', [17, 300], 257, true, false, 'FullyConnected'],
  ['batch 2, in 300, num_hidden 257', [2, 300], 257, true, false, 'FullyConnected'],
  ['batch 3, in 300, num_hidden 257', [3, 300], 257, true, false, 'FullyConnected'],
  ['batch 6, in 300, num_hidden 257', [6, 300], 257, true, false, 'FullyConnected'],
];

for (const [label, dshape, nh, flatten, noBias, name] of fcCases) {
  test(`${name}: ${label} matches tfjs`, () => {
    const inDim = flatten ? sizeOf(dshape.slice(1)) : dshape[dshape.length - 1];
    const rows = sizeOf(dshape) / inDim;
    const x = rand(dshape), w = rand([nh, inDim]), b = noBias ? null : rand([nh]);
    const args = [ndarr(x, dshape), ndarr(w, [nh, inDim])];
    if (!noBias) args.push(ndarr(b, [nh]));
    const fn = { FullyConnected: nd.FullyConnected, _npx_fully_connected: nd._npx_fully_connected,
      _sparse_FullyConnected: nd._sparse_FullyConnected }[name];
    const y = fn(...args, { num_hidden: nh, flatten, no_bias: noBias });
    const want = flatten ? [dshape[0], nh] : [...dshape.slice(0, -1), nh];
    assert.deepEqual(y.shape, want);
    assertClose(y.toTypedArray(), fcOracle(x, [rows, inDim], w, [nh, inDim], b), { ...tol, msg: label });
  });
}

test('FullyConnected accepts a (num_hidden, 1) bias', () => {
  const x = rand([3, 4]), w = rand([2, 4]), b = rand([2]);
  const y = nd.FullyConnected(ndarr(x, [3, 4]), ndarr(w, [2, 4]), ndarr(b, [2, 1]), { num_hidden: 2 });
  assertClose(y.toTypedArray(), fcOracle(x, [3, 4], w, [2, 4], b), tol);
});

test('FullyConnected float64 matches a double loop', () => {
  const x = Float64Array.from(rand([3, 5])), w = Float64Array.from(rand([4, 5])), b = Float64Array.from(rand([4]));
  const y = nd.FullyConnected(nd.array(x, { shape: [3, 5] }), nd.array(w, { shape: [4, 5] }),
    nd.array(b, { shape: [4] }), { num_hidden: 4 });
  assert.equal(y.dtype, 'float64');
  const want = [];
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 4; j++) {
      let s = b[j];
      for (let k = 0; k < 5; k++) s += x[i * 5 + k] * w[j * 5 + k];
      want.push(s);
    }
  }
  assertClose(y.toTypedArray(), want, { rtol: 1e-12, atol: 1e-12 });
});

test('FullyConnected and batch_dot in float16 / bfloat16 keep the dtype (hand-worked values)', () => {
  // [[1,2,3],[4,5,6]] . [[1,0,-1],[0.5,0.5,0.5]]^T + [10,-1] = [[8,2],[8,6.5]], exact in both types
  for (const dtype of ['float16', 'bfloat16']) {
    const y = nd.FullyConnected(nd.array([[1, 2, 3], [4, 5, 6]], { dtype }), nd.array([[1, 0, -1], [0.5, 0.5, 0.5]], { dtype }),
      nd.array([10, -1], { dtype }), { num_hidden: 2 });
    assert.equal(y.dtype, dtype);
    assert.deepEqual(Array.from(y.toTypedArray()), [8, 2, 8, 6.5]);
    const z = nd.batch_dot(nd.array([[[1, 2]], [[3, 4]]], { dtype }), nd.array([[[3], [4]], [[-1], [1]]], { dtype }));
    assert.equal(z.dtype, dtype);
    assert.deepEqual(z.shape, [2, 1, 1]);
    assert.deepEqual(Array.from(z.toTypedArray()), [11, 1]);
  }
});

// float16 / bfloat16 products run as float32 GEMMs of the half values (accumulating in float32, as
// MXNet's CPU GEMM of half_t): each result is within one unit in the last place of the half type
// of the exact product of the rounded operands (worked in float64 here).
test('FullyConnected, dot and batch_dot in float16 / bfloat16 on larger shapes: within 1 ulp of the exact product', () => {
  const mant = { float16: 10, bfloat16: 7 };
  for (const dtype of ['float16', 'bfloat16']) {
    const q = (a, shape) => nd.array(a, { shape }).astype(dtype);
    const vals = (t) => Array.from(t.astype('float32').toTypedArray());
    const check = (got, want, what) => {
      for (let i = 0; i < want.length; i++) {
        const ulp = want[i] === 0 ? 2 ** -24 : 2 ** (Math.floor(Math.log2(Math.abs(want[i]))) - mant[dtype]);
        assert.ok(Math.abs(got[i] - want[i]) <= ulp, `${dtype} ${what}[${i}]: ${got[i]} vs ${want[i]}`);
      }
    };
    const [M, K, N] = [33, 70, 17];
    const x = q(rand([M, K]), [M, K]), w = q(rand([N, K]), [N, K]), b = q(rand([N]), [N]);
    const xv = vals(x), wv = vals(w), bv = vals(b);
    const fc = nd.FullyConnected(x, w, b, { num_hidden: N });
    assert.equal(fc.dtype, dtype);
    const want = [];
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = bv[j];
        for (let k = 0; k < K; k++) s += xv[i * K + k] * wv[j * K + k];
        want.push(s);
      }
    }
    check(vals(fc), want, 'FullyConnected');
    const d = nd.dot(x, w, { transpose_b: true }); // the same product without the bias
    check(vals(d), want.map((v, i) => v - bv[i % N]), 'dot');
    const bd = nd.batch_dot(x.reshape([3, 11, K]), nd.broadcast_to(w.reshape([1, N, K]), { shape: [3, N, K] }), { transpose_b: true });
    check(vals(bd), want.map((v, i) => v - bv[i % N]), 'batch_dot');
  }
});

// ---- dot ----------------------------------------------------------------------------------------
test('dot: 2-D, all transpose combinations, odd sizes, match tf.matMul', () => {
  for (const [m, k, n] of [[5, 7, 9], [1, 13, 6], [17, 33, 1], [65, 130, 33], [130, 300, 70]]) {
    for (const ta of [false, true]) {
      for (const tb of [false, true]) {
        const ls = ta ? [k, m] : [m, k], rs = tb ? [n, k] : [k, n];
        const l = rand(ls), r = rand(rs);
        const y = nd.dot(ndarr(l, ls), ndarr(r, rs), { transpose_a: ta, transpose_b: tb });
        assert.deepEqual(y.shape, [m, n]);
        const want = tfRun(() => tf.matMul(tf.tensor(l, ls), tf.tensor(r, rs), ta, tb));
        assertClose(y.toTypedArray(), want, { ...tol, msg: `${m}x${k}x${n} ta=${ta} tb=${tb}` });
      }
    }
  }
});

test('dot: 1-D . 1-D is an inner product of shape (1,)', () => {
  const a = rand([37]), b = rand([37]);
  const y = nd.dot(ndarr(a, [37]), ndarr(b, [37]));
  assert.deepEqual(y.shape, [1]);
  assertClose(y.toTypedArray(), tfRun(() => tf.dot(tf.tensor1d(a), tf.tensor1d(b))), tol);
});

test('dot: 1-D . 2-D and 2-D . 1-D match tf.dot', () => {
  const v = rand([6]), m = rand([6, 11]), m2 = rand([9, 6]);
  const y1 = nd._sparse_dot(ndarr(v, [6]), ndarr(m, [6, 11]));
  assert.deepEqual(y1.shape, [11]);
  assertClose(y1.toTypedArray(), tfRun(() => tf.dot(tf.tensor1d(v), tf.tensor(m, [6, 11]))), tol);
  const y2 = nd.dot(ndarr(m2, [9, 6]), ndarr(v, [6]));
  assert.deepEqual(y2.shape, [9]);
  assertClose(y2.toTypedArray(), tfRun(() => tf.dot(tf.tensor(m2, [9, 6]), tf.tensor1d(v))), tol);
  // transpose_b on a 2-D rhs: v (6,) . m3 (11, 6)^T
  const m3 = rand([11, 6]);
  const y3 = nd.dot(ndarr(v, [6]), ndarr(m3, [11, 6]), { transpose_b: true });
  assert.deepEqual(y3.shape, [11]);
  assertClose(y3.toTypedArray(), tfRun(() => tf.matMul(tf.tensor(v, [1, 6]), tf.tensor(m3, [11, 6]), false, true)), tol);
});

test('dot: 3-D . 2-D flattens lhs, with and without transposes', () => {
  const l = rand([2, 3, 4]), r = rand([4, 5]);
  const y = nd.dot(ndarr(l, [2, 3, 4]), ndarr(r, [4, 5]), { forward_stype: 'default' });
  assert.deepEqual(y.shape, [2, 3, 5]);
  assertClose(y.toTypedArray(), tfRun(() => tf.matMul(tf.tensor(l, [6, 4]), tf.tensor(r, [4, 5]))), tol);
  // transpose_a contracts over lhs's first dim: (4, 2, 3) -> output (2, 3, 5)
  const lt = rand([4, 2, 3]);
  const yt = nd.dot(ndarr(lt, [4, 2, 3]), ndarr(r, [4, 5]), { transpose_a: true });
  assert.deepEqual(yt.shape, [2, 3, 5]);
  assertClose(yt.toTypedArray(), tfRun(() => tf.matMul(tf.tensor(lt, [4, 6]), tf.tensor(r, [4, 5]), true, false)), tol);
  // transpose_b contracts over rhs's last dim: (2, 3, 4) . (5, 2, 4)^T -> (2, 3, 5, 2)
  const rt = rand([5, 2, 4]);
  const yb = nd.dot(ndarr(l, [2, 3, 4]), ndarr(rt, [5, 2, 4]), { transpose_b: true });
  assert.deepEqual(yb.shape, [2, 3, 5, 2]);
  assertClose(yb.toTypedArray(), tfRun(() => tf.matMul(tf.tensor(l, [6, 4]), tf.tensor(rt, [10, 4]), false, true)), tol);
});

test('dot float64 matches a double loop', () => {
  const a = Float64Array.from(rand([3, 4])), b = Float64Array.from(rand([4, 2]));
  const y = nd.dot(nd.array(a, { shape: [3, 4] }), nd.array(b, { shape: [4, 2] }));
  assert.equal(y.dtype, 'float64');
  const want = [];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 2; j++) {
    let s = 0;
    for (let k = 0; k < 4; k++) s += a[i * 4 + k] * b[k * 2 + j];
    want.push(s);
  }
  assertClose(y.toTypedArray(), want, { rtol: 1e-12, atol: 1e-12 });
});

// ---- batch_dot ----------------------------------------------------------------------------------
test('batch_dot: 3-D and 4-D, all transpose combinations, match tf.matMul', () => {
  for (const [batch, m, k, n] of [[[4], 3, 5, 7], [[2, 3], 6, 9, 5], [[3], 1, 17, 9], [[2], 33, 20, 1]]) {
    for (const ta of [false, true]) {
      for (const tb of [false, true]) {
        const ls = [...batch, ...(ta ? [k, m] : [m, k])], rs = [...batch, ...(tb ? [n, k] : [k, n])];
        const l = rand(ls), r = rand(rs);
        const fn = batch.length === 1 ? nd.batch_dot : nd._npx_batch_dot;
        const y = fn(ndarr(l, ls), ndarr(r, rs), { transpose_a: ta, transpose_b: tb });
        assert.deepEqual(y.shape, [...batch, m, n]);
        const want = tfRun(() => tf.matMul(tf.tensor(l, ls), tf.tensor(r, rs), ta, tb));
        assertClose(y.toTypedArray(), want, { ...tol, msg: `${ls} x ${rs} ta=${ta} tb=${tb}` });
      }
    }
  }
});

// ---- errors -------------------------------------------------------------------------------------
test('dot of (2, 3) and (4, 5) throws naming the op and both shapes; the next call works', () => {
  const a = nd.array(rand([2, 3]), { shape: [2, 3] }), b = nd.array(rand([4, 5]), { shape: [4, 5] });
  assert.throws(() => nd.dot(a, b), (e) => e instanceof mx.MXNetError && /dot/.test(e.message) &&
    e.message.includes('(2, 3)') && e.message.includes('(4, 5)'));
  assert.throws(() => nd.dot(nd.array([1, 2]), nd.array([1, 2]), { transpose_a: true }), mx.MXNetError);
  assert.throws(() => nd.batch_dot(a, b), (e) => e instanceof mx.MXNetError && /batch_dot/.test(e.message) &&
    e.message.includes('(2, 3)') && e.message.includes('(4, 5)'));
  assert.throws(() => nd.dot(nd.array(new Int32Array([1, 2])), nd.array(new Int32Array([1, 2]))),
    (e) => e instanceof mx.MXNetError && /int32/.test(e.message));
  assert.deepEqual(Array.from(nd.dot(nd.array([[1, 2]]), nd.array([[3], [4]])).toTypedArray()), [11]);
});

test('FullyConnected with a wrong weight shape throws naming weight; the next call works', () => {
  const x = nd.array(rand([2, 3]), { shape: [2, 3] });
  assert.throws(() => nd.FullyConnected(x, nd.array(rand([4, 5]), { shape: [4, 5] }), { num_hidden: 4, no_bias: true }),
    (e) => e instanceof mx.MXNetError && /FullyConnected/.test(e.message) && /weight/.test(e.message) &&
      e.message.includes('(4, 5)') && e.message.includes('(4, 3)'));
  assert.throws(() => nd.FullyConnected(x, nd.array(rand([4, 3]), { shape: [4, 3] }), nd.array([1, 2, 3]),
    { num_hidden: 4 }), (e) => e instanceof mx.MXNetError && /bias/.test(e.message));
  assert.throws(() => nd.FullyConnected(x, nd.array(rand([4, 3]), { shape: [4, 3] }), { no_bias: true }),
    (e) => e instanceof mx.MXNetError && /num_hidden/.test(e.message));
  const y = nd.FullyConnected(nd.array([[1, 2, 3]]), nd.array([[1, 1, 1], [1, 0, -1]]), nd.array([0.5, 0]),
    { num_hidden: 2 });
  assert.deepEqual(Array.from(y.toTypedArray()), [6.5, -2]);
});
