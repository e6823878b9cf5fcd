// Gradients of the reduce family: sum/mean/max/min/prod/nansum/nanprod/norm over every axis form
// (None, one, several, negative, keepdims, exclude) against float64 finite differences, the
// `_backward_*` kernels against hand-worked values, TF.js's tf.grads for sum/mean/max/min/prod/norm,
// pick's scatter, and argmax/argmin's zero gradients.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assert, assertClose, rng, tf, nd, autograd } from './grad_check.mjs';

const AXES = [
  {}, { axis: 1 }, { axis: -1 }, { axis: [0, 2] }, { axis: [0, 2], keepdims: true }, { axis: 1, keepdims: true },
  { axis: 1, exclude: true }, { axis: [0, -1], exclude: true, keepdims: true }, { axis: [] },
];

test('sum, mean, max, min, prod, nansum, nanprod over every axis form: finite differences (float64)', () => {
  const shape = [3, 4, 5];
  for (const attrs of AXES) {
    for (const op of ['sum', 'mean', 'max', 'min', 'nansum']) checkGrad(op, [{ shape }], attrs, { seed: 3 });
    // products: magnitudes near 1 keep the product and its derivatives well scaled
    checkGrad('prod', [{ shape, low: 0.7, high: 1.3 }], attrs);
    checkGrad('nanprod', [{ shape, low: 0.7, high: 1.3 }], attrs);
  }
  // rank 4 with a size-1 axis, and 1-D
  for (const attrs of [{ axis: [1, 3] }, { axis: 2 }, { axis: [0, 2], keepdims: true }]) {
    for (const op of ['sum', 'mean', 'max', 'min']) checkGrad(op, [{ shape: [2, 3, 1, 4] }], attrs);
  }
  for (const op of ['sum', 'mean', 'max', 'min', 'prod']) checkGrad(op, [{ shape: [7], low: 0.6, high: 1.4 }]);
  // aliases
  checkGrad('sum_axis', [{ shape }], { axis: 2 });
  checkGrad('max_axis', [{ shape }], { axis: 0 });
  checkGrad('min_axis', [{ shape }], { axis: [1, 2] });
});

test('prod with negative entries and nansum/nanprod with NaN entries', () => {
  const d = [0.9, -1.2, 1.1, -0.8, 1.3, 0.7, -1.05, 0.95, 1.2, -1.1, 0.85, 1.15];
  checkGrad('prod', [{ shape: [3, 4], data: d }], { axis: 1 });
  checkGrad('prod', [{ shape: [3, 4], data: d }]);
  const withNaN = d.map((v, i) => (i % 5 === 2 ? NaN : v));
  // finite differences see a NaN entry as a constant 0 (sum) / 1 (prod): its gradient is 0
  const s = checkGrad('nansum', [{ shape: [3, 4], data: withNaN }], { axis: 0 });
  const p = checkGrad('nanprod', [{ shape: [3, 4], data: withNaN }], { axis: 1 });
  for (const g of [s.analytic[0], p.analytic[0]]) for (const i of [2, 7]) assert.equal(g[i], 0);
});

test('norm (ord 1 and 2, axis variants): finite differences (float64)', () => {
  const shape = [3, 4, 5];
  for (const ord of [1, 2]) {
    for (const attrs of [{}, { axis: 1 }, { axis: -1, keepdims: true }, { axis: [0, 2] }, { axis: [1, 2], keepdims: true }]) {
      // ord 1 has a kink at 0: entries away from it
      const input = ord === 1 ? { shape, data: Array.from(rng(ord).uniform(60, 0.1, 1), (v, i) => (i % 3 ? v : -v)) } : { shape };
      checkGrad('norm', [input], { ord, ...attrs });
    }
  }
  // out_dtype: a float32 norm of float64 data; the gradient comes back as float64 (x / y with y in float32)
  const x = nd.array([3, -4, 12, 0.5, 2, -1], { dtype: 'float64' }).reshape([2, 3]);
  x.attachGrad();
  const y = autograd.record(() => nd.norm(x, { axis: 1, out_dtype: 'float32' }));
  assert.equal(y.dtype, 'float32');
  y.backward(nd.array([2, 1]));
  const n0 = Math.fround(Math.hypot(3, -4, 12)), n1 = Math.fround(Math.hypot(0.5, 2, -1));
  assert.equal(x.grad.dtype, 'float64');
  assertClose(x.grad.toTypedArray(), [2 * 3 / n0, 2 * -4 / n0, 2 * 12 / n0, 0.5 / n1, 2 / n1, -1 / n1], { rtol: 1e-12 });
});

test('the _backward_ reduction kernels on hand-worked values', () => {
  const x = nd.array([[1, 5, 2], [4, 4, -3]]);
  const og = nd.array([10, 20]); // gradient of the (2,) output of a reduction over axis 1
  const ax = { axis: 1 };
  assertClose(nd._backward_sum(og, x, ax).toTypedArray(), [10, 10, 10, 20, 20, 20]);
  assertClose(nd._backward_mean(og, x, ax).toTypedArray(), [10 / 3, 10 / 3, 10 / 3, 20 / 3, 20 / 3, 20 / 3]);
  // max: ties each get the whole gradient (MXNet's x == y mask)
  assertClose(nd._backward_max(og, x, nd.array([5, 4]), ax).toTypedArray(), [0, 10, 0, 20, 20, 0]);
  assertClose(nd._backward_min(og, x, nd.array([1, -3]), ax).toTypedArray(), [10, 0, 0, 0, 0, 20]);
  // prod: y / x
  assertClose(nd._backward_prod(og, x, nd.array([10, -48]), ax).toTypedArray(), [100, 20, 50, -240, -240, 320]);
  const xn = nd.array([[1, NaN, 2], [4, NaN, -3]]);
  assertClose(nd._backward_nansum(og, xn, ax).toTypedArray(), [10, 0, 10, 20, 0, 20]);
  assertClose(nd._backward_nanprod(og, xn, nd.array([2, -12]), ax).toTypedArray(), [20, 0, 10, -60, 0, 80]);
  // norm: ord 2 x / y, ord 1 sign(x)
  const n = nd.array([[3, 0, -4], [0, 0, 2]]);
  assertClose(nd._backward_norm(og, n, nd.array([5, 2]), { ord: 2, axis: 1 }).toTypedArray(), [6, 0, -8, 0, 0, 20]);
  assertClose(nd._backward_norm(og, n, nd.array([7, 2]), { ord: 1, axis: 1 }).toTypedArray(), [10, 0, -10, 0, 0, 20]);
  // all axes reduced: one output element for everything; exclude keeps axis 1
  assertClose(nd._backward_sum(nd.array([2]), x).toTypedArray(), [2, 2, 2, 2, 2, 2]);
  assertClose(nd._backward_sum(nd.array([1, 2, 3]), x, { axis: 1, exclude: true }).toTypedArray(), [1, 2, 3, 1, 2, 3]);
});

test('reductions match TF.js gradients', () => {
  const r = rng(9);
  const x = { shape: [3, 4, 5], data: r.uniform(60, 0.5, 1.5) };
  const cases = [
    [{ axis: [0, 2] }, [0, 2], false], [{ axis: 1, keepdims: true }, [1], true], [{}, null, false], [{ axis: -1 }, [2], false],
  ];
  for (const [attrs, axes, keep] of cases) {
    const outShape = [3, 4, 5].map((d, i) => ((axes ?? [0, 1, 2]).includes(i) ? (keep ? 1 : 0) : d)).filter((d) => d > 0);
    const size = outShape.reduce((a, b) => a * b, 1);
    const dy = { shape: outShape.length ? outShape : [], data: r.uniform(size) };
    const ours = { shape: outShape.length ? outShape : [1], data: dy.data };
    const pairs = [
      [(t) => nd.sum(t, attrs), (t) => tf.sum(t, axes, keep)],
      [(t) => nd.mean(t, attrs), (t) => tf.mean(t, axes, keep)],
      [(t) => nd.max(t, attrs), (t) => tf.max(t, axes, keep)],
      [(t) => nd.min(t, attrs), (t) => tf.min(t, axes, keep)],
      [(t) => nd.prod(t, attrs), (t) => tf.prod(t, axes, keep)],
      [(t) => nd.norm(t, attrs), (t) => tf.norm(t, 'euclidean', axes, keep)],
    ];
    for (const [o, t] of pairs) {
      const got = ourGrads(o, [x], ours), want = tfGrads(t, [x], dy);
      assertClose(got[0], want[0], { rtol: 1e-4, atol: 1e-5, msg: `${o} ${JSON.stringify(attrs)}` });
    }
  }
  // L1 norm over an axis: tf.norm(ord=1) of a vector axis is sum |x|
  const y = { shape: [3, 4], data: Array.from(r.uniform(12, -1, 1)) };
  const dy = { shape: [3], data: r.uniform(3) };
  const got = ourGrads((t) => nd.norm(t, { ord: 1, axis: 1 }), [y], dy);
  const want = tfGrads((t) => tf.sum(tf.abs(t), 1), [y], dy);
  assertClose(got[0], want[0], { rtol: 1e-5, atol: 1e-6 });
});

test('pick: the gradient lands on the picked positions (clip and wrap), none for the index', () => {
  const idx = (data, shape) => nd.array(data, { dtype: 'int32' }).reshape(shape);
  checkGrad('pick', [{ shape: [4, 5] }, idx([0, 4, 2, 7], [4])], { axis: 1 });
  checkGrad('pick', [{ shape: [4, 5] }, idx([0, 4, -2, 7], [4])], { axis: 1, mode: 'wrap' });
  checkGrad('pick', [{ shape: [3, 4, 2] }, idx([0, 3, 1, 2, 0, 1], [3, 1, 2])], { axis: 1, keepdims: true });
  checkGrad('pick', [{ shape: [3, 4, 2] }, idx([0, 2, 1, 0, 2, 1, 1, 0], [4, 2])], { axis: 0 });
  checkGrad('choose_element_0index', [{ shape: [3, 4] }, idx([3, 0, 1], [3])], { axis: -1 });
  // hand-worked: x (2, 3), index [2, 0] along axis 1, head [5, 7]
  const x = nd.array([[1, 2, 3], [4, 5, 6]], { dtype: 'float64' });
  const i = nd.array([2, 0], { dtype: 'float64' });
  x.attachGrad();
  i.attachGrad();
  autograd.record(() => nd.pick(x, i, { axis: 1 })).backward(nd.array([5, 7], { dtype: 'float64' }));
  assertClose(x.grad.toTypedArray(), [0, 0, 5, 7, 0, 0]);
  assertClose(i.grad.toTypedArray(), [0, 0]);
  assertClose(nd._backward_pick(nd.array([5, 7]), nd.array([-1, 4]), nd.zeros([2, 3]), { axis: 1 }).toTypedArray(),
    [5, 0, 0, 0, 0, 7]);
  assertClose(nd._backward_pick(nd.array([5, 7]), nd.array([-1, 4]), nd.zeros([2, 3]), { axis: 1, mode: 'wrap' }).toTypedArray(),
    [0, 0, 5, 0, 7, 0]);
  // TF.js: pick along the last axis is gather of the flattened rows
  const r = rng(4);
  const xs = { shape: [3, 4], data: r.uniform(12) }, dy = { shape: [3], data: r.uniform(3) };
  const got = ourGrads((t) => nd.pick(t, nd.array([1, 3, 0]), { axis: 1 }), [xs], dy);
  const want = tfGrads((t) => tf.gather(tf.reshape(t, [12]), tf.tensor1d([1, 7, 8], 'int32')), [xs], dy);
  assertClose(got[0], want[0], { rtol: 1e-6 });
});

test('argmax and argmin give zero gradients (MakeZeroGradNodes)', () => {
  for (const op of ['argmax', 'argmin']) {
    const { analytic } = checkGrad(op, [{ shape: [3, 4] }], { axis: 1 });
    assertClose(analytic[0], new Float64Array(12));
  }
});
