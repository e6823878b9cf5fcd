// MXNet 1.9.1's loss operators of the symbolic API (MakeLoss, SVMOutput, softmax_cross_entropy;
// csrc/ops/loss_ops.c) and index operators (batch_take, ravel_multi_index / unravel_index,
// khatri_rao): forward values from MXNet's docstring examples and hand-worked formulas, gradients
// against central finite differences (checkGrad) or, for the output layers whose gradient is not
// the derivative, against MXNet's backward formulas worked by hand.
import test from 'node:test';
import { checkGrad, assert, assertClose, nd, mx, autograd } from './grad_check.mjs';

const values = (x) => Array.from(x.toTypedArray(), Number);
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));
// the gradient of data through op(data, ...rest) under a head gradient `head` (ignored by output layers)
function gradOf(op, data, rest, attrs, head) {
  const x = nd.array(data);
  x.attachGrad();
  let y;
  autograd.record(() => { y = nd[op](x, ...rest, attrs); });
  y.backward(head ? nd.array(head) : undefined);
  return { y: values(y), dx: values(x.grad) };
}

test('MakeLoss: identity forward; the gradient is grad_scale, over the batch size or the count of valid elements', () => {
  const x = [[0.5, -1, 2], [0, 3, -0.5]];
  const head = [[9, 9, 9], [9, 9, 9]]; // not used: MakeLoss starts the backward pass
  let r = gradOf('MakeLoss', x, [], { grad_scale: 3 }, head);
  assert.deepEqual(r.y, x.flat());
  assert.deepEqual(r.dx, Array(6).fill(3));
  r = gradOf('MakeLoss', x, [], { grad_scale: 3, normalization: 'batch' }, head);
  assert.deepEqual(r.dx, Array(6).fill(1.5)); // 3 / 2 rows
  r = gradOf('MakeLoss', x, [], { grad_scale: 3, normalization: 'valid', valid_thresh: 0.2 }, head);
  assert.deepEqual(r.dx, Array(6).fill(1)); // 3 / |{0.5, 2, 3}|
  r = gradOf('MakeLoss', [[-1, -2]], [], { normalization: 'valid' });
  assert.deepEqual(r.dx, [1, 1]); // no valid element: divided by max(1, 0)
  // its backward is constant in data: a zero second derivative
  checkGrad('_backward_MakeLoss', [{ shape: [3, 4], low: 0.1, high: 1 }], { normalization: 'valid' });
  // in a symbol, as old training graphs hold it
  const s = mx.sym.MakeLoss(mx.sym.square(mx.sym.var('x')), { normalization: 'batch', name: 'loss' });
  assert.deepEqual(JSON.parse(s.tojson()).nodes.at(-1), { op: 'MakeLoss', name: 'loss', attrs: { normalization: 'batch' }, inputs: [[1, 0, 0]] });
});

test('SVMOutput: identity forward; L2-SVM and L1-SVM gradients of MXNet\'s svm_output.cc by hand', () => {
  const y = [[0.5, -2, 0.3], [1.5, 0.2, -0.4]], label = nd.array([0, 2]);
  // L2 (margin 1, reg 0.5): label class k: margin > y_k ? -reg * 2 (margin - y_k) : 0;
  // other x: margin > -y_x ? reg * 2 (margin + y_x) : 0
  let r = gradOf('SVMOutput', y, [label], { regularization_coefficient: 0.5 }, [[7, 7, 7], [7, 7, 7]]);
  assert.deepEqual(r.y, y.flat().map((v) => Math.fround(v)));
  assertClose(r.dx, [-0.5, 0, 1.3, 2.5, 1.2, -1.4], { rtol: 1e-6, atol: 1e-7 });
  // L1 (margin 0.4): k: -reg * (margin > y_k); x: reg * (margin > -y_x)
  r = gradOf('SVMOutput', y, [label], { margin: 0.4, use_linear: true });
  assert.deepEqual(r.dx.map((v) => v + 0), [0, 0, 1, 1, 1, -1]); // (MXNet's -(margin > y_k) * reg is -0 there)
  throwsNaming(() => gradOf('SVMOutput', y, [nd.array([0, 3])], {}), /label 3/);
  assert.deepEqual(mx.sym.SVMOutput(mx.sym.var('d'), { name: 'svm' }).listArguments(), ['d', 'svm_label']);
});

test('softmax_cross_entropy: MXNet\'s example; gradient (softmax - one_hot) times the head gradient', () => {
  const x = nd.array([[1, 2, 3], [11, 7, 5]]);
  const out = nd.softmax_cross_entropy(x, nd.array([2, 0]));
  assert.deepEqual(out.shape, [1]);
  assertClose(values(out), [0.4281871], { rtol: 1e-6, atol: 0 }); // the docstring's value
  // by hand: -log softmax
  const ls = (row, k) => row[k] - Math.max(...row) - Math.log(row.reduce((s, v) => s + Math.exp(v - Math.max(...row)), 0));
  assertClose(values(out), [-(ls([1, 2, 3], 2) + ls([11, 7, 5], 0))], { rtol: 1e-6, atol: 0 });
  checkGrad('softmax_cross_entropy', [{ shape: [4, 5], low: -2, high: 2 }, nd.array([1, 0, 4, 2], { dtype: 'float64' })], {}, { wrt: [0] });
  throwsNaming(() => nd.softmax_cross_entropy(x, nd.array([2, -1])), /label -1/);
  throwsNaming(() => nd.softmax_cross_entropy(nd.ones([2, 3, 1]), nd.array([0, 0])), /2-D/);
});

test('batch_take: out[i] = a[i, clip(indices[i])]; its gradient scatters back', () => {
  const x = nd.array([[1, 2], [3, 4], [5, 6]]);
  assert.deepEqual(nd.batch_take(x, nd.array([0, 1, 0], { dtype: 'int32' })).toArray(), [1, 4, 5]); // MXNet's example
  assert.deepEqual(nd.batch_take(x, nd.array([-3, 7, 1])).toArray(), [1, 4, 6]); // clipped
  checkGrad('batch_take', [{ shape: [4, 3] }, nd.array([0, 2, 5, -1], { dtype: 'int32' })], {}, { wrt: [0] });
  throwsNaming(() => nd.batch_take(x, nd.array([0, 1])), /size/);
  throwsNaming(() => nd.batch_take(nd.ones([2, 2, 2]), nd.array([0, 1])), /2-D/);
  throwsNaming(() => nd.batch_take(nd.zeros([2, 0]), nd.array([0, 0])), /no elements/); // (MXNet reads before the data)
});

test('ravel_multi_index / unravel_index: row-major flat indices of a shape, and back', () => {
  // shape (3, 4, 5): (2, 3, 4) -> 2*20 + 3*5 + 4 = 59; (1, 0, 2) -> 22
  const multi = nd.array([[2, 1], [3, 0], [4, 2]]);
  const flat = nd.ravel_multi_index(multi, { shape: [3, 4, 5] });
  assert.deepEqual(flat.toArray(), [59, 22]);
  assert.deepEqual(nd.unravel_index(flat, { shape: [3, 4, 5] }).toArray(), [[2, 1], [3, 0], [4, 2]]);
  const u = nd._unravel_index(nd.array([7, -1], { dtype: 'int32' }), { shape: [2, 3] });
  assert.equal(u.dtype, 'int32');
  assert.deepEqual(values(u), [2, 0, 1, -1]); // 7 = 2*3 + 1; -1: C's truncating division and remainder
  throwsNaming(() => nd.ravel_multi_index(multi, { shape: [3, 4] }), /shape parameter/);
  throwsNaming(() => nd.unravel_index(flat, { shape: [3, 0, 5] }), /positive/);
});

test('khatri_rao: MXNet\'s example, and the gradient of each matrix against finite differences', () => {
  const A = nd.array([[1, -1], [2, -3]]), B = nd.array([[1, 4], [2, 5], [3, 6]]);
  assert.deepEqual(nd.khatri_rao(A, B, { num_args: 2 }).toArray(), [[1, -4], [2, -5], [3, -6], [2, -12], [4, -15], [6, -18]]);
  checkGrad('khatri_rao', [{ shape: [2, 3] }, { shape: [3, 3] }, { shape: [2, 3] }], { num_args: 3 });
  checkGrad('khatri_rao', [{ shape: [4, 2] }], { num_args: 1 });
  throwsNaming(() => nd.khatri_rao(A, nd.ones([2, 3]), { num_args: 2 }), /columns/);
});
