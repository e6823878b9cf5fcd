// Gradients of the indexing and slice_assign families and of NDArray indexing in JS (views,
// basic and advanced x.get, x.set under autograd.record, hybridized): finite differences in
// float64, hand-worked values, and TF.js's tf.grads for take (tf.gather), where (tf.where) and
// gather_nd (tf.gather on the flattened leading axes: TF.js has no gatherND gradient). TF.js has
// no gradient for topk or sort: finite differences and hand-worked values cover those.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assert, assertClose, rng, tf, nd, autograd, mx } from './grad_check.mjs';

const f64 = (values, shape) => nd.array(values, { dtype: 'float64' }).reshape(shape);
const i32 = (values, shape) => nd.array(values, { dtype: 'int32' }).reshape(shape);
const zeros = (n) => new Float64Array(n);
const sizeOf = (s) => s.reduce((a, b) => a * b, 1);

test('take: clip and wrap, any axis, repeated indices accumulate', () => {
  checkGrad('take', [{ shape: [4, 3] }, i32([0, 3, 3, 1, -1, 7], [2, 3])], { axis: 0, mode: 'clip' });
  checkGrad('take', [{ shape: [2, 5, 3] }, i32([0, 6, -2, 1, 6], [5])], { axis: 1, mode: 'wrap' });
  checkGrad('take', [{ shape: [2, 3, 4] }, i32([3, 0, 3], [3, 1])], { axis: -1, mode: 'raise' });
  // float indices truncate as in the forward; they get no gradient
  const { analytic } = checkGrad('take', [{ shape: [5, 2] }, f64([1.7, 4.2, 1.2], [3])], {}, { wrt: [0, 1] });
  assertClose(analytic[1], zeros(3));
  // hand-worked: rows 0, 2, 2 of a (3, 2) array; row 2 is read twice
  const x = nd.zeros([3, 2], { dtype: 'float64' });
  x.attachGrad();
  autograd.record(() => nd.take(x, i32([0, 2, 2], [3]))).backward(f64([1, 2, 3, 4, 5, 6], [3, 2]));
  assert.deepEqual(x.grad.toArray(), [[1, 2], [0, 0], [8, 10]]);
});

test('where: x gets the gradient where the condition holds, y elsewhere, the condition none', () => {
  const cond = f64([1, 0, 0, 2, -1, 0], [2, 3]);
  checkGrad('where', [cond, { shape: [2, 3] }, { shape: [2, 3] }], {}, { wrt: [1, 2] });
  checkGrad('where', [f64([0, 3], [2]), { shape: [2, 3] }, { shape: [2, 3] }], {}, { wrt: [1, 2] });
  const c = cond.copy(), x = nd.zeros([2, 3], { dtype: 'float64' }), y = nd.zeros([2, 3], { dtype: 'float64' });
  for (const t of [c, x, y]) t.attachGrad();
  autograd.record(() => nd.where(c, x, y)).backward(f64([1, 2, 3, 4, 5, 6], [2, 3]));
  assert.deepEqual(x.grad.toArray(), [[1, 0, 0], [4, 5, 0]]);
  assert.deepEqual(y.grad.toArray(), [[0, 2, 3], [0, 0, 6]]);
  assert.deepEqual(c.grad.toArray(), [[0, 0, 0], [0, 0, 0]]);
});

test('topk (value, both) and sort: the gradient goes back to the selected positions', () => {
  checkGrad('topk', [{ shape: [3, 5] }], { k: 2, ret_typ: 'value' });
  checkGrad('topk', [{ shape: [3, 5] }], { k: 2, ret_typ: 'both', axis: 0, dtype: 'int32' });
  checkGrad('topk', [{ shape: [2, 3, 4] }], { k: 3, ret_typ: 'value', axis: 1, is_ascend: true });
  checkGrad('topk', [{ shape: [3, 5] }], { k: 4, ret_typ: 'value', axis: null });
  checkGrad('topk', [{ shape: [3, 5] }], { k: 0, ret_typ: 'value' });
  checkGrad('sort', [{ shape: [3, 5] }]);
  checkGrad('sort', [{ shape: [2, 3, 4] }], { axis: 0, is_ascend: false });
  checkGrad('sort', [{ shape: [3, 5] }], { axis: null });
  // hand-worked: the 2 largest of [3, 9, 1, 7] are 9 (index 1) and 7 (index 3)
  const x = f64([3, 9, 1, 7], [4]);
  x.attachGrad();
  autograd.record(() => nd.topk(x, { k: 2, ret_typ: 'value' })).backward(f64([10, 20], [2]));
  assert.deepEqual(Array.from(x.grad.toTypedArray()), [0, 10, 0, 20]);
  autograd.record(() => nd.sort(x, { is_ascend: false })).backward(f64([1, 2, 3, 4], [4]));
  assert.deepEqual(Array.from(x.grad.toTypedArray()), [3, 1, 4, 2]);
});

test('gather_nd: scatter-add into the data gradient (negative and repeated indices)', () => {
  checkGrad('gather_nd', [{ shape: [3, 4, 2] }, i32([0, 2, 2, -1, 1, 3, 3, 0], [2, 4])]);
  checkGrad('gather_nd', [{ shape: [3, 4] }, i32([2, 0, 1, 2, 3, 2], [2, 1, 3])]);
  checkGrad('gather_nd', [{ shape: [4, 3] }, i32([3, -1], [1, 2])]);
  const x = nd.zeros([2, 3], { dtype: 'float64' });
  x.attachGrad();
  autograd.record(() => nd.gather_nd(x, i32([1, 1, 0, 2, 2, 0], [2, 3]))).backward(f64([1, 2, 3], [3]));
  assert.deepEqual(x.grad.toArray(), [[3, 0, 0], [0, 0, 3]]);
});

test('non-differentiable: argsort, one_hot, topk indices and mask give zero gradients', () => {
  for (const [op, inputs, attrs] of [
    ['argsort', [{ shape: [3, 4] }], { axis: 0 }],
    ['one_hot', [f64([0.5, 2.5, 1.5], [3])], { depth: 4 }], // fractions: truncation stable under the probes
    ['topk', [{ shape: [3, 4] }], { k: 2, ret_typ: 'indices' }],
    ['topk', [{ shape: [3, 4] }], { k: 2, ret_typ: 'mask' }],
  ]) {
    const { analytic } = checkGrad(op, inputs, attrs);
    assertClose(analytic[0], zeros(analytic[0].length), { msg: op });
  }
});

test('the _backward_* ops of take and gather_nd are linear in ograd: their own gradients', () => {
  const data = (shape) => nd.zeros(shape, { dtype: 'float64' }); // lends only its shape
  checkGrad('_backward_take', [{ shape: [2, 3, 3] }, i32([0, 6, -2], [3]), data([2, 5, 3])], { axis: 1, mode: 'wrap' },
    { wrt: [0] });
  checkGrad('_backward_take', [{ shape: [4, 2] }, i32([1, 1, 0, 5], [4]), data([3, 2])], {}, { wrt: [0] });
  checkGrad('_backward_gather_nd', [{ shape: [4, 2] }, i32([0, 2, 2, -1, 1, 3, 3, 0], [2, 4])], { shape: [3, 4, 2] },
    { wrt: [0] });
});

test('_slice_assign, _slice_assign_scalar, _scatter_set_nd: the overwritten part gets no gradient', () => {
  checkGrad('_slice_assign', [{ shape: [5, 4] }, { shape: [2, 2] }], { begin: [4, 1], end: [0, null], step: [-2, 2] });
  checkGrad('_slice_assign', [{ shape: [3, 4, 2] }, { shape: [1, 4, 2] }], { begin: [1], end: [2] });
  checkGrad('_slice_assign_scalar', [{ shape: [5, 4] }], { scalar: 3, begin: [1, null], end: [-1, 3] });
  const strided = { scalar: 3, begin: [null, 3], end: [null, 0], step: [2, -2] };
  checkGrad('_slice_assign_scalar', [{ shape: [5, 4] }], strided);
  const cols = i32([0, 2, 1, 1, 3, -4], [2, 3]);
  checkGrad('_scatter_set_nd', [{ shape: [3, 4] }, { shape: [3] }, cols], { shape: [3, 4] });
  checkGrad('_scatter_set_nd', [{ shape: [3, 4] }, { shape: [2, 4] }, i32([2, 0], [1, 2])], { shape: [3, 4] });
  // hand-worked: lhs (2, 3) with [:, 1:] = rhs
  const lhs = nd.zeros([2, 3], { dtype: 'float64' }), rhs = nd.zeros([2, 2], { dtype: 'float64' });
  lhs.attachGrad();
  rhs.attachGrad();
  autograd.record(() => nd._slice_assign(lhs, rhs, { begin: [null, 1], end: [null, null] }))
    .backward(f64([1, 2, 3, 4, 5, 6], [2, 3]));
  assert.deepEqual(lhs.grad.toArray(), [[1, 0, 0], [4, 0, 0]]);
  assert.deepEqual(rhs.grad.toArray(), [[2, 3], [5, 6]]);
});

test('indexing ops match TF.js gradients (take as tf.gather, where as tf.where, gather_nd via tf.gather)', () => {
  const r = rng(17);
  const check = (ours, theirs, shapes, msg) => {
    const inputs = shapes.map((shape) => ({ shape, data: r.uniform(sizeOf(shape)) }));
    const y = ours(...inputs.map(({ shape, data }) => nd.array(Array.from(data)).reshape(shape)));
    const dy = { shape: y.shape, data: r.uniform(y.size) };
    const got = ourGrads(ours, inputs, dy), want = tfGrads(theirs, inputs, dy);
    got.forEach((g, i) => assertClose(g, want[i], { rtol: 1e-5, atol: 1e-6, msg: `${msg} d/dinput${i}` }));
  };
  const idx = [2, 0, 2, 3, 1, 2];
  check((x) => nd.take(x, i32(idx, [2, 3]), { axis: 1 }), (x) => tf.gather(x, tf.tensor(idx, [2, 3], 'int32'), 1),
    [[3, 4, 2]], 'take');
  check((x) => nd.take(x, i32(idx, [6])), (x) => tf.gather(x, tf.tensor(idx, [6], 'int32'), 0), [[4, 3]],
    'take axis 0');
  const cond = [1, 0, 0, 1, 1, 0, 1, 0];
  check((x, y) => nd.where(nd.array(cond).reshape([2, 4]), x, y),
    (x, y) => tf.where(tf.tensor(cond, [2, 4], 'bool'), x, y), [[2, 4], [2, 4]], 'where');
  // gather_nd with M = 2 on (3, 4, 2) = gather of rows i * 4 + j of the (12, 2) reshape
  const ij = [[0, 2, 2, 1, 0], [3, 1, 1, 0, 3]];
  const lin = ij[0].map((i, k) => i * 4 + ij[1][k]);
  check((x) => nd.gather_nd(x, i32(ij.flat(), [2, 5])),
    (x) => tf.gather(tf.reshape(x, [12, 2]), tf.tensor(lin, [5], 'int32'), 0), [[3, 4, 2]], 'gather_nd');
});

// ---- NDArray views and indexing in JS -------------------------------------------------------------------
test('gradients flow through views (x.get(i), row slices, reshape) and basic slicing copies', () => {
  const x = f64([1, 2, 3, 4, 5, 6], [2, 3]);
  x.attachGrad();
  // y = x[1] * x[1]: dy/dx[1] = 2 x[1]
  autograd.record(() => nd.elemwise_mul(x.get(1), x.get(1))).backward();
  assert.deepEqual(x.grad.toArray(), [[0, 0, 0], [8, 10, 12]]);
  // x.reshape((3, 2))[1:] selects flat elements 2..5
  autograd.record(() => x.reshape([3, 2]).get([1])).backward(f64([1, 2, 3, 4], [2, 2]));
  assert.deepEqual(x.grad.toArray(), [[0, 0, 1], [2, 3, 4]]);
  // x[:, ::-1][1] * x[1] (a non-contiguous key runs the slice op): d/dx[1] = reversed x[1] + reversed x[1]
  autograd.record(() => nd.elemwise_mul(x.get([], [null, null, -1]).get(1), x.get(1))).backward();
  assert.deepEqual(x.grad.toArray(), [[0, 0, 0], [6, 5, 4].map((v, i) => v + [6, 5, 4][i])]);
  // the fluent slice / slice_axis methods
  autograd.record(() => x.sliceAxis({ axis: 1, begin: 1, end: 3 })).backward(f64([1, 2, 3, 4], [2, 2]));
  assert.deepEqual(x.grad.toArray(), [[0, 1, 2], [0, 3, 4]]);
  autograd.record(() => x.slice({ begin: [1, null], end: [2, null], step: [1, 2] })).backward(f64([7, 8], [1, 2]));
  assert.deepEqual(x.grad.toArray(), [[0, 0, 0], [7, 0, 8]]);
});

test('advanced indexing accumulates repeated rows; x.set under record sends the gradient to the value', () => {
  const a = f64([1, 2, 3, 4, 5, 6], [3, 2]);
  a.attachGrad();
  autograd.record(() => a.get(nd.array([2, 0, 2]))).backward();
  assert.deepEqual(a.grad.toArray(), [[1, 1], [0, 0], [2, 2]]);
  autograd.record(() => a.get(nd.array([0, 2, 2]), nd.array([1, 0, 0]))).backward(f64([1, 2, 3], [3]));
  assert.deepEqual(a.grad.toArray(), [[0, 1], [0, 0], [5, 0]]);
  // z (no history)[0:2, 1:3] = 3 v; w = z * z: dw/dv = 18 v
  const v = f64([1, 2, 3, 4], [2, 2]);
  v.attachGrad();
  const z = nd.zeros([3, 4], { dtype: 'float64' });
  autograd.record(() => {
    z.set([0, 2], [1, 3], nd._mul_scalar(v, { scalar: 3 }));
    return nd.elemwise_mul(z, z);
  }).backward();
  assert.deepEqual(v.grad.toArray(), [[18, 36], [54, 72]]);
  // advanced set: z2[[2, 0]] = v (rows), w = z2 * c
  const z2 = nd.zeros([3, 2], { dtype: 'float64' }), c = f64([1, 2, 3, 4, 5, 6], [3, 2]);
  autograd.record(() => {
    z2.set(nd.array([2, 0]), v);
    return nd.elemwise_mul(z2, c);
  }).backward();
  assert.deepEqual(v.grad.toArray(), [[5, 6], [1, 2]]);
  // assigning into an array that is already in the graph is an error, as in MXNet
  assert.throws(() => autograd.record(() => a.set(0, v.get(0))), /already in a computational graph/);
});

test('hybridized graphs use the same gradients', () => {
  const f = (F, x, i) => F.take(
    F.slice(F.transpose(F.tile(x, { reps: [1, 2] })), { begin: [1, 0], end: [null, null], step: [2, 1] }), i);
  const x = f64([1, 2, 3, 4, 5, 6], [2, 3]), idx = nd.array([0, 2, 0]);
  const head = f64(Array.from({ length: 6 }, (_, k) => k + 1), [3, 2]);
  const grads = [false, true].map((hybrid) => {
    const blk = new mx.gluon.nn.HybridLambda(f);
    if (hybrid) blk.hybridize();
    const xx = x.copy();
    xx.attachGrad();
    autograd.record(() => blk.forward(xx, idx)).backward(head);
    return xx.grad.toArray();
  });
  // tile (2, 6) -> transpose (6, 2) -> rows 1, 3, 5 = columns 1, 0, 2 of x -> take rows 0, 2, 0:
  // columns 1 (head rows 1 and 3) and 2 (head row 2)
  assert.deepEqual(grads[0], [[0, 1 + 5, 3], [0, 2 + 6, 4]]);
  assert.deepEqual(grads[1], grads[0]);
});

test('scatter_nd: MXNet\'s docstring examples; its gradient is gather_nd of the head gradient', () => {
  const out = nd.scatter_nd(nd.array([2, 3, 0]), nd.array([[1, 1, 0], [0, 1, 0]]), { shape: [2, 2] });
  assert.deepEqual(out.toArray(), [[0, 0], [2, 3]]);
  const data = nd.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]);
  const o2 = nd.scatter_nd(data, nd.array([[0, 1], [1, 0]]), { shape: [2, 2, 2, 2] }).toArray();
  assert.deepEqual(o2[0][1], [[1, 2], [3, 4]]);
  assert.deepEqual(o2[1][0], [[5, 6], [7, 8]]);
  assert.deepEqual(o2[0][0], [[0, 0], [0, 0]]);
  checkGrad('scatter_nd', [{ shape: [3, 2] }, nd.array([[0, 2, 3], [1, 0, 1]], { dtype: 'int32' })], { shape: [4, 2, 2] }, { wrt: [0] });
  assert.throws(() => nd.scatter_nd(nd.array([1]), nd.array([[2]]), { shape: [2] }), /out of bounds/);
});
