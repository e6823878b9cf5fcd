// Gradients of the linalg family: FullyConnected (bias, no_bias, flatten=False, (num_hidden, 1)
// bias), dot and batch_dot with every transpose combination, against float64 finite differences,
// TF.js's tf.grads of tf.matMul (+ add) in float32 at sizes that take the SIMD GEMM paths, and
// hand-worked values of the _backward_* kernels; a hybridized Dense stack against the eager one.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assert, assertClose, rng, tf, nd, mx, autograd } from './grad_check.mjs';

test('FullyConnected: finite differences (float64)', () => {
  checkGrad('FullyConnected', [{ shape: [3, 5] }, { shape: [4, 5] }, { shape: [4] }], { num_hidden: 4 });
  checkGrad('FullyConnected', [{ shape: [3, 5] }, { shape: [4, 5] }], { num_hidden: 4, no_bias: true });
  // flatten: (2, 3, 2) is used as (2, 6)
  checkGrad('FullyConnected', [{ shape: [2, 3, 2] }, { shape: [5, 6] }, { shape: [5] }], { num_hidden: 5 });
  // flatten=False: the last axis is the input, (2, 3, 4) -> (2, 3, 7)
  checkGrad('FullyConnected', [{ shape: [2, 3, 4] }, { shape: [7, 4] }, { shape: [7] }], { num_hidden: 7, flatten: false });
  checkGrad('FullyConnected', [{ shape: [2, 3, 4] }, { shape: [7, 4] }], { num_hidden: 7, flatten: false, no_bias: true });
  // a (num_hidden, 1) bias gets a gradient of its own shape
  checkGrad('FullyConnected', [{ shape: [3, 2] }, { shape: [4, 2] }, { shape: [4, 1] }], { num_hidden: 4 });
  // one row, one hidden unit
  checkGrad('FullyConnected', [{ shape: [1, 9] }, { shape: [1, 9] }, { shape: [1] }], { num_hidden: 1 });
  checkGrad('_npx_fully_connected', [{ shape: [2, 3] }, { shape: [2, 3] }, { shape: [2] }], { num_hidden: 2 });
});

test('dot and batch_dot, every transpose combination: finite differences (float64)', () => {
  const T = [[false, false], [true, false], [false, true], [true, true]];
  for (const [ta, tb] of T) {
    const a = ta ? [4, 3] : [3, 4], b = tb ? [5, 4] : [4, 5];
    checkGrad('dot', [{ shape: a }, { shape: b }], { transpose_a: ta, transpose_b: tb });
    // higher rank: lhs (2, 3, 4) as (6, 4) or transposed (2, 12)^T; rhs (4, 2, 3) as (4, 6)
    const la = ta ? [4, 2, 3] : [2, 3, 4], rb = tb ? [2, 3, 4] : [4, 2, 3];
    checkGrad('dot', [{ shape: la }, { shape: rb }], { transpose_a: ta, transpose_b: tb });
    const A = ta ? [2, 4, 3] : [2, 3, 4], B = tb ? [2, 5, 4] : [2, 4, 5];
    checkGrad('batch_dot', [{ shape: A }, { shape: B }], { transpose_a: ta, transpose_b: tb });
    checkGrad('batch_dot', [{ shape: [2, 3, ...A.slice(1)] }, { shape: [2, 3, ...B.slice(1)] }], { transpose_a: ta, transpose_b: tb });
  }
  // vectors: inner product, vector-matrix, matrix-vector
  checkGrad('dot', [{ shape: [5] }, { shape: [5] }]);
  checkGrad('dot', [{ shape: [4] }, { shape: [4, 3] }]);
  checkGrad('dot', [{ shape: [3, 4] }, { shape: [4] }]);
  checkGrad('dot', [{ shape: [4, 3] }, { shape: [4] }], { transpose_a: true });
  checkGrad('dot', [{ shape: [4] }, { shape: [3, 4] }], { transpose_b: true });
  checkGrad('_npx_batch_dot', [{ shape: [3, 2, 2] }, { shape: [3, 2, 1] }]);
});

test('the _backward_ kernels on hand-worked values', () => {
  // X (2, 2), W (3, 2), G (2, 3): dX = G W, dW = G^T X, db = column sums of G
  const X = nd.array([[1, 2], [3, 4]]), W = nd.array([[1, 0], [0, 1], [1, 1]]), G = nd.array([[1, 2, 3], [4, 5, 6]]);
  const [dx, dw, db] = nd._backward_FullyConnected(G, X, W, { num_hidden: 3 });
  assertClose(dx.toTypedArray(), [1 + 3, 2 + 3, 4 + 6, 5 + 6]);
  assertClose(dw.toTypedArray(), [1 + 12, 2 + 16, 2 + 15, 4 + 20, 3 + 18, 6 + 24]);
  assertClose(db.toTypedArray(), [5, 7, 9]);
  const outs = nd._backward_FullyConnected(G, X, W, { num_hidden: 3, no_bias: true });
  assert.equal(outs.length, 2);
  // the weight half alone (what the gradient builds, with the data gradient as its own dot node)
  const [dw2, db2] = nd._backward_FullyConnected_weight(G, X, { num_hidden: 3 });
  assertClose(dw2.toTypedArray(), [1 + 12, 2 + 16, 2 + 15, 4 + 20, 3 + 18, 6 + 24]);
  assertClose(db2.toTypedArray(), [5, 7, 9]);
  const wOnly = nd._backward_FullyConnected_weight(G, X, { num_hidden: 3, no_bias: true });
  assert.ok(!Array.isArray(wOnly) || wOnly.length === 1);
  // flatten: data (2, 1, 2) is used as (2, 2)
  const [dw3] = nd._backward_FullyConnected_weight(G, X.reshape([2, 1, 2]), { num_hidden: 3 });
  assert.deepEqual(dw3.shape, [3, 2]);
  assertClose(dw3.toTypedArray(), [1 + 12, 2 + 16, 2 + 15, 4 + 20, 3 + 18, 6 + 24]);
  // dot: C = A B with A (1, 2), B (2, 1): dA = dC B^T, dB = A^T dC
  const [da, dB] = nd._backward_dot(nd.array([[2]]), nd.array([[3, 4]]), nd.array([[5], [6]]));
  assertClose(da.toTypedArray(), [10, 12]);
  assertClose(dB.toTypedArray(), [6, 8]);
  const [ba, bb] = nd._backward_batch_dot(nd.array([[[1]], [[2]]]), nd.array([[[3]], [[4]]]), nd.array([[[5]], [[6]]]));
  assertClose(ba.toTypedArray(), [5, 12]);
  assertClose(bb.toTypedArray(), [3, 8]);
});

test('FullyConnected matches TF.js (tf.matMul + add) at SIMD GEMM sizes', () => {
  const r = rng(31);
  for (const [rows, inDim, nh] of [[17, 33, 29], [1, 40, 24], [5, 12, 3], [64, 16, 40]]) {
    const x = { shape: [rows, inDim], data: r.uniform(rows * inDim) };
    const w = { shape: [nh, inDim], data: r.uniform(nh * inDim) };
    const b = { shape: [nh], data: r.uniform(nh) };
    const dy = { shape: [rows, nh], data: r.uniform(rows * nh) };
    const got = ourGrads((X, Wt, B) => nd.FullyConnected(X, Wt, B, { num_hidden: nh }), [x, w, b], dy);
    const want = tfGrads((X, Wt, B) => tf.add(tf.matMul(X, Wt, false, true), B), [x, w, b], dy);
    got.forEach((g, i) => assertClose(g, want[i], { rtol: 1e-4, atol: 1e-4, msg: `FC ${rows}x${inDim}x${nh} input ${i}` }));
  }
  // flatten=False on (2, 3, 8): TF.js on the (6, 8) reshape
  const x = { shape: [2, 3, 8], data: r.uniform(48) }, w = { shape: [5, 8], data: r.uniform(40) };
  const dy = { shape: [2, 3, 5], data: r.uniform(30) };
  const got = ourGrads((X, Wt) => nd.FullyConnected(X, Wt, { num_hidden: 5, flatten: false, no_bias: true }), [x, w], dy);
  const want = tfGrads((X, Wt) => tf.reshape(tf.matMul(tf.reshape(X, [6, 8]), Wt, false, true), [2, 3, 5]), [x, w], dy);
  got.forEach((g, i) => assertClose(g, want[i], { rtol: 1e-4, atol: 1e-5 }));
});

test('dot and batch_dot match TF.js (tf.matMul with transposes)', () => {
  const r = rng(32);
  for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]]) {
    const [M, K, N] = [13, 21, 18];
    const a = { shape: ta ? [K, M] : [M, K], data: r.uniform(M * K) }, b = { shape: tb ? [N, K] : [K, N], data: r.uniform(K * N) };
    const dy = { shape: [M, N], data: r.uniform(M * N) };
    const got = ourGrads((A, B) => nd.dot(A, B, { transpose_a: ta, transpose_b: tb }), [a, b], dy);
    const want = tfGrads((A, B) => tf.matMul(A, B, ta, tb), [a, b], dy);
    got.forEach((g, i) => assertClose(g, want[i], { rtol: 1e-4, atol: 1e-4, msg: `dot ${ta} ${tb}` }));
    const ba = { shape: [3, ...a.shape], data: r.uniform(3 * M * K) }, bb = { shape: [3, ...b.shape], data: r.uniform(3 * K * N) };
    const bdy = { shape: [3, M, N], data: r.uniform(3 * M * N) };
    const gotb = ourGrads((A, B) => nd.batch_dot(A, B, { transpose_a: ta, transpose_b: tb }), [ba, bb], bdy);
    const wantb = tfGrads((A, B) => tf.matMul(A, B, ta, tb), [ba, bb], bdy);
    gotb.forEach((g, i) => assertClose(g, wantb[i], { rtol: 1e-4, atol: 1e-4, msg: `batch_dot ${ta} ${tb}` }));
  }
});

test('a hybridized Dense stack has the same parameter gradients as the eager one', () => {
  const { gluon } = mx;
  const make = () => {
    const net = new gluon.nn.HybridSequential();
    net.add(new gluon.nn.Dense(6, { activation: 'tanh', inUnits: 5 }));
    net.add(new gluon.nn.Dense(3, { inUnits: 6, useBias: false }));
    net.initialize(new mx.init.Uniform(0.5));
    return net;
  };
  const x = nd.array(Array.from(rng(40).uniform(20)), { dtype: 'float32' }).reshape([4, 5]);
  const grads = (net) => {
    autograd.record(() => nd.sum(nd.square(net.forward(x)))).backward();
    return [...net.collectParams().values()].map((p) => Float64Array.from(p.grad().toTypedArray()));
  };
  const eager = make();
  const hyb = make();
  for (const [pe, ph] of [...eager.collectParams().values()].map((p, i) => [p, [...hyb.collectParams().values()][i]])) {
    ph.setData(pe.data());
  }
  hyb.hybridize();
  const ge = grads(eager);
  grads(hyb);
  const gh = grads(hyb); // second call: the cached graph
  assert.equal(ge.length, 3);
  ge.forEach((g, i) => {
    assert.ok(g.some((v) => v !== 0));
    assertClose(gh[i], g, { rtol: 1e-5, atol: 1e-6 });
  });
});
