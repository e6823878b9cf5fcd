// The linalg operators (nd.linalg.* / F.linalg.*, MXNet 1.9.1's la_op): gemm, gemm2, syrk, potrf,
// inverse, det, slogdet, sumlogdiag, extractdiag, makediag, extracttrian, maketrian, potri, trmm, trsm. Values against TF.js's matMul and
// against float64 reference implementations written out here (Gauss-Jordan inverse, determinant
// by cofactor expansion, Cholesky-Banachiewicz), MXNet's docstring examples; gradients against
// central finite differences (potrf's with symmetric perturbations, as MXNet defines it).
import test from 'node:test';
import { checkGrad, assert, assertClose, rng, tf, mx, nd, autograd } from './grad_check.mjs';

const { linalg } = nd;
const rand = (shape, seed, lo = -1, hi = 1) =>
  nd.array(Array.from(rng(seed).uniform(shape.reduce((a, b) => a * b, 1), lo, hi), Number), { dtype: 'float64' }).reshape(shape);
// a batch of well-conditioned (diagonally dominant) matrices, and of symmetric positive-definite ones
const dominant = (b, n, seed) => {
  const m = rand([b, n, n], seed).toArray();
  for (const a of m) for (let i = 0; i < n; i++) a[i][i] += n * (i % 2 ? -1 : 1);
  return m;
};
const spd = (b, n, seed) => rand([b, n, n], seed).toArray().map((a) => a.map((_, i) =>
  a.map((__, j) => a.reduce((s, row) => s + row[i] * row[j], 0) + (i === j ? 0.5 : 0))));
const T = (a) => a[0].map((_, j) => a.map((r) => r[j]));
const mm = (a, b) => a.map((r) => b[0].map((_, j) => r.reduce((s, v, k) => s + v * b[k][j], 0)));
function invRef(a) { // Gauss-Jordan with partial pivoting
  const n = a.length, m = a.map((r, i) => [...r, ...r.map((_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    const d = m[c][c];
    m[c] = m[c].map((v) => v / d);
    for (let r = 0; r < n; r++) if (r !== c) { const f = m[r][c]; m[r] = m[r].map((v, j) => v - f * m[c][j]); }
  }
  return m.map((r) => r.slice(n));
}
const detRef = (a) => (a.length === 1 ? a[0][0]
  : a[0].reduce((s, v, j) => s + (j % 2 ? -1 : 1) * v * detRef(a.slice(1).map((r) => r.filter((_, k) => k !== j))), 0));
function cholRef(a) {
  const n = a.length, l = a.map(() => new Array(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i][j];
      for (let k = 0; k < j; k++) s -= l[i][k] * l[j][k];
      l[i][j] = i === j ? Math.sqrt(s) : s / l[j][j];
    }
  }
  return l;
}
const flat = (x) => x.flat(Infinity);
const tfOf = (x) => tf.tensor(Array.from(x.toTypedArray()), x.shape, 'float32');

test('gemm2 and gemm equal TF.js matMul (transposes, alpha, beta, batches, the row axis)', () => {
  const A = rand([2, 3, 4], 1), B = rand([2, 4, 5], 2), C = rand([2, 3, 5], 3);
  const want = tf.matMul(tfOf(A), tfOf(B));
  assertClose(linalg.gemm2(A, B).toTypedArray(), want.dataSync(), { rtol: 1e-5, atol: 1e-6 });
  assertClose(linalg.gemm2(A.astype('float32'), B.astype('float32'), { alpha: 2 }).toTypedArray(), tf.mul(want, 2).dataSync(), { rtol: 1e-5, atol: 1e-6 });
  const At = A.swapaxes(1, 2), Bt = B.swapaxes(1, 2);
  assertClose(linalg.gemm2(At, Bt, { transpose_a: true, transpose_b: true }).toTypedArray(), want.dataSync(), { rtol: 1e-5, atol: 1e-6 });
  assertClose(linalg.gemm(A, B, C, { alpha: 0.5, beta: -2 }).toTypedArray(),
    tf.add(tf.mul(want, 0.5), tf.mul(tfOf(C), -2)).dataSync(), { rtol: 1e-5, atol: 1e-6 });
  // rows on axis 0: (rows, batch, cols) operands are (batch) matrices rows x cols
  const A0 = A.transpose([1, 0, 2]), B0 = B.transpose([1, 0, 2]);
  const out0 = linalg.gemm2(A0, B0, { axis: 0 });
  assert.deepEqual(out0.shape, [3, 2, 5]);
  assertClose(out0.transpose([1, 0, 2]).toTypedArray(), want.dataSync(), { rtol: 1e-5, atol: 1e-6 });
  assertClose(linalg.gemm(A0, B0, C.transpose([1, 0, 2]), { axis: -3, beta: 0 }).transpose([1, 0, 2]).toTypedArray(),
    want.dataSync(), { rtol: 1e-5, atol: 1e-6 });
  assert.throws(() => linalg.gemm2(A, A), /incompatible matrix dimensions/);
  assert.throws(() => linalg.gemm2(A, B, { axis: 2 }), /invalid row axis/);
});

test('gemm2 / gemm / syrk gradients against finite differences, and a second order', () => {
  checkGrad('_linalg_gemm2', [{ shape: [2, 3, 4] }, { shape: [2, 4, 5] }], { alpha: 1.5 });
  checkGrad('linalg_gemm2', [{ shape: [4, 3] }, { shape: [5, 4] }], { transpose_a: true, transpose_b: true });
  checkGrad('_linalg_gemm2', [{ shape: [3, 2, 4] }, { shape: [4, 2, 5] }], { axis: 0 });
  checkGrad('_linalg_gemm', [{ shape: [2, 3, 4] }, { shape: [2, 5, 4] }, { shape: [2, 3, 5] }], { transpose_b: true, alpha: -0.5, beta: 2 });
  checkGrad('_linalg_syrk', [{ shape: [2, 3, 4] }], { alpha: 0.7 });
  checkGrad('linalg_syrk', [{ shape: [3, 4] }], { transpose: true });
  // second order: the gradient of sum(A A) is G A^T + A^T G; differentiate <that, H> again
  const A = rand([3, 3], 4), H = rand([3, 3], 5);
  A.attachGrad();
  autograd.record(() => {
    const [g] = autograd.grad(linalg.gemm2(A, A).sum(), [A], { createGraph: true });
    return (g.mul(H)).sum();
  }).backward();
  // d/dA <1 A^T + A^T 1, H> = H^T-weighted sums: d/dA_ij [sum_k (sum_l A_kl) H_ki ... ] by hand:
  // <J A^T + A^T J, H> = sum_ij H_ij (sum_k A_jk + sum_k A_ki), so d/dA_ab = sum_i H_ia + sum_j H_bj... as
  // row and column sums of H
  const h = H.toArray();
  const want = [0, 1, 2].map((a) => [0, 1, 2].map((b) => h.reduce((s, r) => s + r[a], 0) + h[b].reduce((s, v) => s + v, 0)));
  assertClose(A.grad.toTypedArray(), flat(want), { rtol: 1e-12, atol: 1e-12 });
});

test('inverse, det and slogdet equal the float64 references; singular matrices', () => {
  const m = dominant(3, 4, 6);
  const A = nd.array(m, { dtype: 'float64' });
  assertClose(linalg.inverse(A).toTypedArray(), flat(m.map(invRef)), { rtol: 1e-12, atol: 1e-13 });
  assertClose(linalg.det(A).toTypedArray(), m.map(detRef), { rtol: 1e-12, atol: 1e-12 });
  const [sign, logabs] = linalg.slogdet(A);
  assertClose(sign.toTypedArray(), m.map((a) => Math.sign(detRef(a))), { rtol: 0, atol: 0 });
  assertClose(logabs.toTypedArray(), m.map((a) => Math.log(Math.abs(detRef(a)))), { rtol: 1e-12, atol: 1e-12 });
  assert.deepEqual(linalg.det(nd.array([[4, 2], [2, 10]])).toArray(), [36]);
  assertClose(linalg.inverse(A.astype('float32')).toTypedArray(), flat(m.map(invRef)), { rtol: 1e-4, atol: 1e-5 });
  // singular: det 0, slogdet (0, -inf), inverse an error naming the matrix
  const S = nd.array([[[1, 2], [3, 4]], [[1, 2], [2, 4]]], { dtype: 'float64' });
  assertClose(linalg.det(S).toTypedArray(), [-2, 0], { rtol: 1e-15, atol: 0 });
  const [s2, l2] = linalg.slogdet(S);
  assert.deepEqual(Array.from(s2.toTypedArray()), [-1, 0]);
  assertClose([l2.toTypedArray()[0]], [Math.log(2)], { rtol: 1e-14, atol: 0 });
  assert.equal(l2.toTypedArray()[1], -Infinity);
  assert.throws(() => linalg.inverse(S), /matrix 1 of the batch is singular/);
  assert.throws(() => linalg.det(rand([2, 3], 7)), /square matrix/);
});

test('inverse, det, slogdet, sumlogdiag gradients against finite differences; second order through inverse', () => {
  const A = nd.array(dominant(2, 3, 8), { dtype: 'float64' });
  checkGrad('_linalg_inverse', [A]);
  checkGrad('_linalg_det', [A]);
  checkGrad('linalg_det', [nd.array(dominant(1, 3, 9)[0], { dtype: 'float64' })]);
  checkGrad('_linalg_slogdet', [A]);
  checkGrad('_linalg_sumlogdiag', [nd.array(spd(2, 3, 10), { dtype: 'float64' })]);
  // d/dA of <grad of sum(inverse(A)), H> against finite differences of the first gradient
  const H = rand([3, 3], 11), A0 = nd.array(dominant(1, 3, 12)[0], { dtype: 'float64' });
  const firstGrad = (a) => {
    const x = a.copy();
    x.attachGrad();
    autograd.record(() => linalg.inverse(x).sum()).backward();
    return Float64Array.from(x.grad.toTypedArray());
  };
  A0.attachGrad();
  autograd.record(() => {
    const [g] = autograd.grad(linalg.inverse(A0).sum(), [A0], { createGraph: true });
    return g.mul(H).sum();
  }).backward();
  const hv = H.toTypedArray(), base = Float64Array.from(A0.toTypedArray()), eps = 1e-6;
  const numeric = Array.from(base, (_, i) => {
    const p = base.slice(), q = base.slice();
    p[i] += eps;
    q[i] -= eps;
    const gp = firstGrad(nd.array(Array.from(p), { dtype: 'float64' }).reshape([3, 3]));
    const gq = firstGrad(nd.array(Array.from(q), { dtype: 'float64' }).reshape([3, 3]));
    return gp.reduce((s, v, k) => s + (v - gq[k]) * hv[k], 0) / (2 * eps);
  });
  assertClose(A0.grad.toTypedArray(), numeric, { rtol: 1e-6, atol: 1e-8 });
});

test('potrf equals the Cholesky reference (lower and upper); its gradient as MXNet defines it', () => {
  const m = spd(2, 4, 13);
  const A = nd.array(m, { dtype: 'float64' });
  assertClose(linalg.potrf(A).toTypedArray(), flat(m.map(cholRef)), { rtol: 1e-12, atol: 1e-13 });
  assertClose(linalg.potrf(A, { lower: false }).toTypedArray(), flat(m.map((a) => T(cholRef(a)))), { rtol: 1e-12, atol: 1e-13 });
  assert.deepEqual(linalg.potrf(nd.array([[4, 2], [2, 10]])).toArray(), [[2, 0], [1, 3]]); // MXNet's docstring
  assert.throws(() => linalg.potrf(nd.array([[1, 2], [2, 1]])), /not positive definite/);
  // MXNet's gradient is symmetric: a symmetric perturbation E_ij + E_ji of A moves the objective
  // by dA_ij + dA_ji (dA_ii on the diagonal)
  for (const lower of [true, false]) {
    const a = m[0], n = 4, H = rand([n, n], 14).toArray();
    const f = (mat) => flat(linalg.potrf(nd.array(mat, { dtype: 'float64' }), { lower }).toArray())
      .reduce((s, v, k) => s + v * flat(H)[k], 0);
    const x = nd.array(a, { dtype: 'float64' });
    x.attachGrad();
    autograd.record(() => linalg.potrf(x, { lower })).backward(nd.array(H, { dtype: 'float64' }));
    const g = x.grad.toArray();
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) assertClose([g[i][j]], [g[j][i]], { rtol: 1e-12, atol: 1e-14 });
    const eps = 1e-6;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= i; j++) {
        const p = a.map((r) => [...r]), q = a.map((r) => [...r]);
        p[i][j] += eps; q[i][j] -= eps;
        if (i !== j) { p[j][i] += eps; q[j][i] -= eps; }
        const numeric = (f(p) - f(q)) / (2 * eps);
        assertClose([i === j ? g[i][i] : g[i][j] + g[j][i]], [numeric], { rtol: 1e-6, atol: 1e-8, msg: `(${i}, ${j}) lower=${lower}` });
      }
    }
  }
  // no second order (it would need the backward's own gradient): the error names it
  const x = nd.array(m[0], { dtype: 'float64' });
  x.attachGrad();
  assert.throws(() => autograd.record(() => {
    const [g] = autograd.grad(linalg.potrf(x).sum(), [x], { createGraph: true });
    return g.sum();
  }).backward(), /_backward_linalg_potrf/);
});

test('extractdiag and makediag with offsets; their gradients', () => {
  const A = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], { dtype: 'float64' });
  assert.deepEqual(linalg.extractdiag(A).toArray(), [1, 5, 9]);
  assert.deepEqual(linalg.extractdiag(A, { offset: 1 }).toArray(), [2, 6]);
  assert.deepEqual(linalg.extractdiag(A, { offset: -2 }).toArray(), [7]);
  assert.deepEqual(linalg.makediag(nd.array([1, 2])).toArray(), [[1, 0], [0, 2]]);
  assert.deepEqual(linalg.makediag(nd.array([[1, 2], [3, 4]]), { offset: 1 }).toArray(),
    [[[0, 1, 0], [0, 0, 2], [0, 0, 0]], [[0, 3, 0], [0, 0, 4], [0, 0, 0]]]);
  assert.throws(() => linalg.extractdiag(A, { offset: 3 }), /offset 3 is too large/);
  checkGrad('_linalg_extractdiag', [{ shape: [2, 4, 4] }], { offset: -1 });
  checkGrad('_linalg_makediag', [{ shape: [2, 3] }], { offset: 2 });
});

test('linalg in a hybridized block (a Gaussian log-likelihood through potrf) matches the imperative run and exports MXNet names', () => {
  class GaussLogLik extends mx.gluon.HybridBlock {
    hybridForward(F, K, y) {
      const L = F.linalg.potrf(K);
      const Kinv = F.linalg.inverse(K);
      const quad = F.linalg.gemm2(F.linalg.gemm2(y, Kinv, { transpose_a: true }), y);
      return quad.mul(-0.5).reshape([-1]).sub(F.linalg.sumlogdiag(L));
    }
  }
  const K = nd.array(spd(1, 3, 15)[0], { dtype: 'float64' }), y = rand([3, 1], 16);
  const net = new GaussLogLik();
  const imp = net(K, y).toTypedArray();
  // by hand: -0.5 y^T K^-1 y - sum(log diag(chol(K)))
  const k = K.toArray(), yv = y.toArray();
  const quad = mm(mm(T(yv), invRef(k)), yv)[0][0];
  assertClose(imp, [-0.5 * quad - cholRef(k).reduce((s, r, i) => s + Math.log(r[i]), 0)], { rtol: 1e-12, atol: 1e-12 });
  net.hybridize();
  assertClose(net(K, y).toTypedArray(), imp, { rtol: 1e-12, atol: 1e-12 });
  const ops = JSON.parse(net.exportBytes().symbol).nodes.map((n) => n.op);
  for (const op of ['_linalg_potrf', '_linalg_inverse', '_linalg_gemm2', '_linalg_sumlogdiag']) assert.ok(ops.includes(op), op);
});

test('trmm and trsm (left and right, transposed, upper) against the float64 references; gradients', () => {
  const n = 3, m = dominant(2, n, 17);
  const A = nd.array(m, { dtype: 'float64' });
  const tri = (a, lower) => a.map((r, i) => r.map((v, j) => ((lower ? j <= i : j >= i) ? v : 0)));
  for (const lower of [true, false]) {
    for (const transpose of [false, true]) {
      for (const rightside of [false, true]) {
        const B = rand(rightside ? [2, 4, n] : [2, n, 4], 18);
        const attrs = { lower, transpose, rightside, alpha: 1.5 };
        const bv = B.toArray();
        const M = m.map((a) => (transpose ? T(tri(a, lower)) : tri(a, lower)));
        const prod = M.map((mi, k) => (rightside ? mm(bv[k], mi) : mm(mi, bv[k])).map((r) => r.map((v) => 1.5 * v)));
        assertClose(linalg.trmm(A, B, attrs).toTypedArray(), flat(prod), { rtol: 1e-12, atol: 1e-13, msg: JSON.stringify(attrs) });
        const sol = M.map((mi, k) => {
          const inv = invRef(mi);
          return (rightside ? mm(bv[k], inv) : mm(inv, bv[k])).map((r) => r.map((v) => 1.5 * v));
        });
        assertClose(linalg.trsm(A, B, attrs).toTypedArray(), flat(sol), { rtol: 1e-11, atol: 1e-12, msg: JSON.stringify(attrs) });
        checkGrad('_linalg_trmm', [A, B], attrs);
        checkGrad('_linalg_trsm', [A, B], attrs);
      }
    }
  }
  // only the triangle is read: the other one gets no gradient
  const B = rand([2, n, 2], 19);
  A.attachGrad();
  autograd.record(() => linalg.trsm(A, B).sum()).backward();
  for (const a of A.grad.toArray()) for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) assert.equal(a[i][j], 0);
  assert.throws(() => linalg.trsm(nd.array([[1, 0], [1, 0]]), nd.ones([2, 1])), /singular/);
  assert.throws(() => linalg.trmm(A, rand([2, 4, 2], 20)), /incompatible matrix dimensions/);
});

test('extracttrian and maketrian: MXNet\'s docstring examples, batches, offsets; each other\'s gradient', () => {
  const A = nd.array([[1, 2], [3, 4]]);
  assert.deepEqual(linalg.extracttrian(A).toArray(), [1, 3, 4]);
  assert.deepEqual(linalg.extracttrian(A, { lower: false }).toArray(), [1, 2, 4]);
  assert.deepEqual(linalg.extracttrian(A, 1).toArray(), [2]);
  assert.deepEqual(linalg.extracttrian(A, -1).toArray(), [3]);
  assert.deepEqual(linalg.extracttrian(nd.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])).toArray(), [[1, 3, 4], [5, 7, 8]]);
  const v = nd.array([1, 2, 3]);
  assert.deepEqual(linalg.maketrian(v).toArray(), [[1, 0], [2, 3]]);
  assert.deepEqual(linalg.maketrian(v, { lower: false }).toArray(), [[1, 2], [0, 3]]);
  assert.deepEqual(linalg.maketrian(v, { offset: 1 }).toArray(), [[0, 1, 2], [0, 0, 3], [0, 0, 0]]);
  assert.deepEqual(linalg.maketrian(v, { offset: -1 }).toArray(), [[0, 0, 0], [1, 0, 0], [2, 3, 0]]);
  assert.deepEqual(linalg.maketrian(nd.array([[1, 2, 3], [4, 5, 6]]), { offset: 1 }).toArray()[1], [[0, 4, 5], [0, 0, 6], [0, 0, 0]]);
  // a 3 x 3 lower triangle packs row by row; the upper one by columns
  const B = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  assert.deepEqual(linalg.extracttrian(B).toArray(), [1, 4, 5, 7, 8, 9]);
  assert.deepEqual(linalg.extracttrian(B, { lower: false }).toArray(), [1, 2, 5, 3, 6, 9]);
  for (const attrs of [{}, { lower: false }, { offset: 1 }, { offset: -2 }]) {
    checkGrad('_linalg_extracttrian', [{ shape: [2, 4, 4] }], attrs);
    checkGrad('_linalg_maketrian', [{ shape: [3, attrs.offset ? 6 : 10] }], attrs);
  }
  assert.throws(() => linalg.maketrian(nd.ones([4])), /triangle/);
  assert.throws(() => linalg.extracttrian(B, { offset: 3 }), /too large/);
});

test('potri: (L L^T)^-1 from the factor (MXNet\'s example, batches, upper); gradient against finite differences', () => {
  // MXNet's docstring: [[2, 0], [0.5, 2]] -> [[0.26563, -0.0625], [-0.0625, 0.25]]; by hand L L^T =
  // [[4, 1], [1, 4.25]], det 16: the inverse [[4.25, -1], [-1, 4]] / 16
  assertClose(linalg.potri(nd.array([[2, 0], [0.5, 2]], { dtype: 'float64' })).toTypedArray(),
    [4.25 / 16, -1 / 16, -1 / 16, 4 / 16], { rtol: 1e-14, atol: 0 });
  const m = spd(3, 4, 41);
  const L = m.map(cholRef);
  const want = flat(m.map(invRef));
  // the factor's other triangle is not read: fill it with garbage
  const Lg = L.map((a) => a.map((r, i) => r.map((x, j) => (j > i ? 7 + i + j : x))));
  assertClose(linalg.potri(nd.array(Lg, { dtype: 'float64' })).toTypedArray(), want, { rtol: 1e-10, atol: 1e-12 });
  assertClose(linalg.potri(nd.array(L.map(T), { dtype: 'float64' }), { lower: false }).toTypedArray(), want, { rtol: 1e-10, atol: 1e-12 });
  // gradients of the triangle that is read (lower / upper), the other gets none
  const Lnd = nd.array(L, { dtype: 'float64' });
  checkGrad('_linalg_potri', [Lnd], {}, { wrt: [0] });
  checkGrad('_linalg_potri', [nd.array(L.map(T), { dtype: 'float64' })], { lower: false }, { wrt: [0] });
  const x = Lnd.copy();
  x.attachGrad();
  autograd.record(() => linalg.potri(x).sum()).backward();
  const g = x.grad.toArray();
  for (const a of g) for (let i = 0; i < 4; i++) for (let j = i + 1; j < 4; j++) assert.equal(a[i][j], 0);
  assert.throws(() => linalg.potri(nd.array([[1, 0], [3, 0]])), /zero on its diagonal/);
});

test('gelqf: MXNet\'s docstring examples (LAPACK\'s signs); L Q = A, Q Q^T = I on batches; gradients against finite differences', () => {
  const [Q, L] = linalg.gelqf(nd.array([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]], { dtype: 'float64' }));
  assertClose(Q.toTypedArray(), [-0.26726124, -0.53452248, -0.80178373, 0.87287156, 0.21821789, -0.43643578,
    -0.50257071, -0.57436653, -0.64616234, 0.7620735, 0.05862104, -0.64483142], { rtol: 0, atol: 2e-8 });
  assertClose(L.toTypedArray(), [-3.74165739, 0, -8.55235974, 1.96396101, -13.92838828, 0, -19.09768702, 0.52758934],
    { rtol: 0, atol: 2e-8 });
  const A = rand([3, 3, 5], 61);
  const [q, l] = linalg.gelqf(A).map((x) => x.toArray());
  A.toArray().forEach((a, b) => {
    assertClose(flat(mm(l[b], q[b])), flat(a), { rtol: 1e-12, atol: 1e-13 });
    assertClose(flat(mm(q[b], T(q[b]))), flat([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), { rtol: 0, atol: 1e-13 });
    for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) assert.equal(l[b][i][j], 0);
  });
  checkGrad('_linalg_gelqf', [A]);
  assert.throws(() => linalg.gelqf(nd.ones([3, 2])), /x <= y/);
});

test('syevd: MXNet\'s docstring examples; U A U^T = diag(L) ascending on batches; gradients against finite differences', () => {
  const [U, L] = linalg.syevd(nd.array([[[1, 2], [2, 4]], [[1, 2], [2, 5]]], { dtype: 'float64' }));
  assertClose(U.toTypedArray(), [0.89442719, -0.4472136, 0.4472136, 0.89442719, 0.92387953, -0.38268343, 0.38268343, 0.92387953],
    { rtol: 0, atol: 2e-8 });
  assertClose(L.toTypedArray(), [0, 5, 0.17157288, 5.82842712], { rtol: 0, atol: 2e-8 });
  const m = spd(2, 5, 71);
  const [u, lam] = linalg.syevd(nd.array(m, { dtype: 'float64' })).map((x) => x.toArray());
  m.forEach((a, b) => {
    const d = lam[b].map((v, i) => lam[b].map((_, j) => (i === j ? v : 0)));
    assertClose(flat(mm(mm(u[b], a), T(u[b]))), flat(d), { rtol: 0, atol: 1e-11 });
    for (let i = 1; i < 5; i++) assert.ok(lam[b][i] >= lam[b][i - 1]);
    for (const row of u[b]) { // each eigenvector's largest element is positive
      const big = row.reduce((k, v, i) => (Math.abs(v) > Math.abs(row[k]) ? i : k), 0);
      assert.ok(row[big] > 0);
    }
  });
  // the lower triangle is read: a symmetric input made from x, spread eigenvalues so the gradient is defined
  const D = nd.array([[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 4, 0], [0, 0, 0, 6]], { dtype: 'float64' });
  const syevdOp = '_linalg_syevd';
  checkGrad((x) => nd[syevdOp](x.add(x.T).add(D)), [{ shape: [4, 4], low: -0.3, high: 0.3 }]);
  assert.throws(() => linalg.syevd(nd.ones([2, 3])), /square/);
});
