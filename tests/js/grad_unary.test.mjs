// Gradients of the elemwise_unary and cast_clip families: every differentiable op against central
// finite differences in float64, the `_backward_*` kernels called directly against float64 JS
// re-computations of MXNet's derivative formulas (mshadow_op.h), the activations and the math
// functions TF.js has against tf.grads (float32), and the non-differentiable ops' zero gradients.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assert, assertClose, rng, tf, nd, autograd } from './grad_check.mjs';

const S = [2, 3, 5];
const u = (low, high, shape = S) => ({ shape, low, high });

// op -> input range away from kinks and domain edges
const DIFFERENTIABLE = {
  relu: [u(0.05, 1), u(-1, -0.05)], sigmoid: [u(-3, 3)], tanh: [u(-2, 2)], exp: [u(-2, 2)], expm1: [u(-2, 2)],
  log: [u(0.2, 3)], log1p: [u(-0.5, 2)], log2: [u(0.2, 3)], log10: [u(0.2, 3)], sqrt: [u(0.2, 3)],
  rsqrt: [u(0.2, 3)], cbrt: [u(0.2, 3), u(-3, -0.2)], rcbrt: [u(0.2, 3), u(-3, -0.2)], square: [u(-2, 2)], reciprocal: [u(0.3, 2), u(-2, -0.3)],
  abs: [u(0.1, 2), u(-2, -0.1)], negative: [u(-2, 2)], erf: [u(-2, 2)], softsign: [u(0.1, 2), u(-2, -0.1)],
  sin: [u(-3, 3)], cos: [u(-3, 3)], tan: [u(-1.2, 1.2)], arcsin: [u(-0.9, 0.9)], arccos: [u(-0.9, 0.9)],
  arctan: [u(-3, 3)], sinh: [u(-2, 2)], cosh: [u(-2, 2)], arcsinh: [u(-3, 3)], arccosh: [u(1.2, 3)],
  arctanh: [u(-0.9, 0.9)], gamma: [u(0.3, 4), u(-2.8, -2.2), u(-0.8, -0.2)],
  gammaln: [u(0.3, 12), u(-2.8, -2.2), u(-0.8, -0.2), u(15, 40)], degrees: [u(-2, 2)], radians: [u(-2, 2)],
  _copy: [u(-2, 2)], clip: [u(-2, 2)],
};

test('unary math ops: finite differences (float64)', () => {
  for (const [op, ranges] of Object.entries(DIFFERENTIABLE)) {
    const attrs = op === 'clip' ? { a_min: -0.5, a_max: 0.7 } : {};
    for (const r of ranges) checkGrad(op, [r], attrs, { rtol: 1e-5, atol: 1e-6 });
  }
  // odd shapes: a scalar-like (1,), a long vector and rank 4
  for (const shape of [[1], [37], [2, 1, 3, 2]]) {
    checkGrad('sigmoid', [u(-2, 2, shape)]);
    checkGrad('log', [u(0.5, 2, shape)]);
  }
});

test('Activation (every act_type) and hard_sigmoid: finite differences (float64)', () => {
  checkGrad('Activation', [u(0.05, 1)], { act_type: 'relu' });
  checkGrad('Activation', [u(-1, -0.05)], { act_type: 'relu' });
  for (const act of ['sigmoid', 'tanh', 'softrelu']) checkGrad('Activation', [u(-3, 3, [3, 7])], { act_type: act });
  checkGrad('Activation', [u(-25, 25, [3, 7])], { act_type: 'softrelu' }); // both sides of the x > 20 switch
  checkGrad('Activation', [u(0.05, 2)], { act_type: 'softsign' });
  checkGrad('Activation', [u(-2, -0.05)], { act_type: 'softsign' });
  // hard_sigmoid: inside the linear part, and outside it on both sides (gradient 0)
  checkGrad('hard_sigmoid', [u(-2.4, 2.4)]);
  checkGrad('hard_sigmoid', [u(-2, 2)], { alpha: 0.3, beta: 0.4 });
  const { analytic } = checkGrad('hard_sigmoid', [u(2.6, 4)]);
  assertClose(analytic[0], new Float64Array(30));
  checkGrad('hard_sigmoid', [u(-4, -2.6)]);
});

test('the _backward_* kernels match MXNet\'s derivative formulas (float32 and float64)', () => {
  const r = rng(11);
  // [op, uses x (in) or y (out), input range, d/dx as a function of that value]
  const table = [
    ['relu', 'out', [-1, 1], (y) => (y > 0 ? 1 : 0)], ['sigmoid', 'out', [0.05, 0.95], (y) => y * (1 - y)],
    ['tanh', 'out', [-0.9, 0.9], (y) => 1 - y * y], ['expm1', 'in', [-2, 2], Math.exp],
    ['log', 'in', [0.2, 3], (x) => 1 / x], ['log1p', 'in', [-0.5, 2], (x) => 1 / (1 + x)],
    ['log2', 'in', [0.2, 3], (x) => 1 / (x * Math.LN2)], ['log10', 'in', [0.2, 3], (x) => 1 / (x * Math.LN10)],
    ['sqrt', 'out', [0.2, 3], (y) => 0.5 / y], ['rsqrt', 'in', [0.2, 3], (x) => -0.5 / (Math.sqrt(x) * x)],
    ['cbrt', 'out', [0.2, 3], (y) => 1 / (3 * y * y)], ['square', 'in', [-2, 2], (x) => 2 * x],
    ['rcbrt', 'in', [0.2, 3], (x) => -1 / (3 * Math.cbrt(x) * x)],
    ['reciprocal', 'in', [0.3, 2], (x) => -1 / (x * x)], ['abs', 'in', [-2, 2], Math.sign],
    ['erf', 'in', [-2, 2], (x) => (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x)],
    ['softsign', 'in', [-2, 2], (x) => 1 / (1 + Math.abs(x)) ** 2], ['sin', 'in', [-3, 3], Math.cos],
    ['cos', 'in', [-3, 3], (x) => -Math.sin(x)], ['tan', 'out', [-2, 2], (y) => 1 + y * y],
    ['arcsin', 'in', [-0.9, 0.9], (x) => 1 / Math.sqrt(1 - x * x)],
    ['arccos', 'in', [-0.9, 0.9], (x) => -1 / Math.sqrt(1 - x * x)], ['arctan', 'in', [-3, 3], (x) => 1 / (1 + x * x)],
    ['sinh', 'in', [-2, 2], Math.cosh], ['cosh', 'in', [-2, 2], Math.sinh],
    ['arcsinh', 'in', [-3, 3], (x) => 1 / Math.sqrt(x * x + 1)], ['arccosh', 'in', [1.2, 3], (x) => 1 / Math.sqrt(x * x - 1)],
    ['arctanh', 'in', [-0.9, 0.9], (x) => 1 / (1 - x * x)],
    ['degrees', 'in', [-2, 2], () => 180 / Math.PI], ['radians', 'in', [-2, 2], () => Math.PI / 180],
  ];
  for (const dtype of ['float32', 'float64']) {
    for (const [op, , [lo, hi], deriv] of table) {
      const a = Array.from(r.uniform(12, lo, hi)), g = Array.from(r.uniform(12, -2, 2));
      const got = nd[`_backward_${op}`](nd.array(g, { dtype }), nd.array(a, { dtype })).toTypedArray();
      const want = a.map((v, i) => g[i] * deriv(dtype === 'float32' ? Math.fround(v) : v));
      assertClose(got, want, dtype === 'float32' ? { rtol: 2e-6, atol: 1e-6, msg: op } : { rtol: 1e-12, atol: 1e-14, msg: op });
    }
  }
});

// digamma values: psi(1) = -Euler's gamma, psi(1/2) = -gamma - 2 ln 2, psi(-1/2) = psi(1/2) + 2 and
// psi(5/2) = psi(1/2) + 2 + 2/3 (recurrence psi(x + 1) = psi(x) + 1/x), psi(10) = H_9 - gamma,
// psi(1e-3) = psi(1.001) - 1000 with psi(1 + t) = -gamma + zeta(2) t - zeta(3) t^2 + zeta(4) t^3 - ...
test('_backward_gammaln is digamma, _backward_gamma is gamma * digamma', () => {
  const EG = 0.5772156649015329;
  const H9 = [1, 2, 3, 4, 5, 6, 7, 8, 9].reduce((s, k) => s + 1 / k, 0);
  const xs = [1, 0.5, -0.5, 10, 2.5, 1e-3];
  const psiHalf = -EG - 2 * Math.LN2, t = 1e-3;
  const psiSmall = -1000 - EG + (Math.PI ** 2 / 6) * t - 1.2020569031595942 * t * t + (Math.PI ** 4 / 90) * t ** 3;
  const psi = [-EG, psiHalf, psiHalf + 2, H9 - EG, psiHalf + 2 + 2 / 3, psiSmall];
  const ones = nd.ones([xs.length], { dtype: 'float64' });
  assertClose(nd._backward_gammaln(ones, nd.array(xs, { dtype: 'float64' })).toTypedArray(), psi, { rtol: 1e-12, atol: 1e-12 });
  // gamma(2.5) = 3 sqrt(pi) / 4
  const g25 = (3 * Math.sqrt(Math.PI)) / 4;
  assertClose(nd._backward_gamma(nd.array([2], { dtype: 'float64' }), nd.array([2.5], { dtype: 'float64' })).toTypedArray(),
    [2 * g25 * (psiHalf + 2 + 2 / 3)], { rtol: 1e-12 });
  // float32 too
  assertClose(nd._backward_gammaln(nd.ones([2]), nd.array([1, 10])).toTypedArray(), [-EG, H9 - EG], { rtol: 1e-6 });
});

test('_backward_Activation and _backward_hard_sigmoid kernels (float32 and float64)', () => {
  const r = rng(5);
  const x = Array.from(r.uniform(10, -3, 3)), g = Array.from(r.uniform(10, -2, 2));
  const sig = (v) => 1 / (1 + Math.exp(-v));
  for (const dtype of ['float32', 'float64']) {
    const tol = dtype === 'float32' ? { rtol: 1e-5, atol: 1e-6 } : { rtol: 1e-12, atol: 1e-14 };
    const X = nd.array(x, { dtype }), G = nd.array(g, { dtype });
    const y = (act) => nd.Activation(X, { act_type: act });
    const xf = dtype === 'float32' ? x.map(Math.fround) : x;
    const yv = (act) => Array.from(y(act).toTypedArray());
    assertClose(nd._backward_Activation(G, y('relu'), { act_type: 'relu' }).toTypedArray(), g.map((v, i) => (xf[i] > 0 ? v : 0)), tol);
    const ys = yv('sigmoid'), yt = yv('tanh'), ysr = yv('softrelu');
    assertClose(nd._backward_Activation(G, y('sigmoid'), X, { act_type: 'sigmoid' }).toTypedArray(), g.map((v, i) => v * ys[i] * (1 - ys[i])), tol);
    assertClose(nd._backward_Activation(G, y('tanh'), X, { act_type: 'tanh' }).toTypedArray(), g.map((v, i) => v * (1 - yt[i] ** 2)), tol);
    // softrelu: -expm1(-y) = sigmoid(x)
    assertClose(nd._backward_Activation(G, y('softrelu'), X, { act_type: 'softrelu' }).toTypedArray(), g.map((v, i) => v * -Math.expm1(-ysr[i])), tol);
    assertClose(nd._backward_Activation(G, y('softrelu'), X, { act_type: 'softrelu' }).toTypedArray(), g.map((v, i) => v * sig(xf[i])), { rtol: 1e-5, atol: 1e-6 });
    assertClose(nd._backward_Activation(G, y('softsign'), X, { act_type: 'softsign' }).toTypedArray(), g.map((v, i) => v / (1 + Math.abs(xf[i])) ** 2), tol);
    // hard_sigmoid: alpha * ograd where 0 < alpha x + beta < 1
    assertClose(nd._backward_hard_sigmoid(G, X, { alpha: 0.25, beta: 0.4 }).toTypedArray(),
      g.map((v, i) => { const t = 0.25 * xf[i] + 0.4; return t > 0 && t < 1 ? v * 0.25 : 0; }), tol);
  }
});

test('activations and math functions match TF.js gradients', () => {
  const r = rng(21);
  const shape = [4, 6];
  const dy = { shape, data: r.uniform(24, -1, 1) };
  const data = (lo, hi) => ({ shape, data: r.uniform(24, lo, hi) });
  const cases = [
    ['relu', (x) => nd.Activation(x, { act_type: 'relu' }), (x) => tf.relu(x), data(-2, 2)],
    ['sigmoid', (x) => nd.Activation(x, { act_type: 'sigmoid' }), (x) => tf.sigmoid(x), data(-3, 3)],
    ['tanh', (x) => nd.Activation(x, { act_type: 'tanh' }), (x) => tf.tanh(x), data(-3, 3)],
    ['softrelu', (x) => nd.Activation(x, { act_type: 'softrelu' }), (x) => tf.softplus(x), data(-3, 3)],
    // TF.js has no softsign: x / (1 + |x|) from its primitives
    ['softsign', (x) => nd.Activation(x, { act_type: 'softsign' }), (x) => tf.div(x, tf.add(1, tf.abs(x))), data(-3, 3)],
    ['relu op', (x) => nd.relu(x), (x) => tf.relu(x), data(-2, 2)],
    ['sigmoid op', (x) => nd.sigmoid(x), (x) => tf.sigmoid(x), data(-3, 3)],
    ['tanh op', (x) => nd.tanh(x), (x) => tf.tanh(x), data(-3, 3)],
    ['softsign op', (x) => nd.softsign(x), (x) => tf.div(x, tf.add(1, tf.abs(x))), data(-3, 3)],
    ['exp', (x) => nd.exp(x), (x) => tf.exp(x), data(-2, 2)],
    ['expm1', (x) => nd.expm1(x), (x) => tf.expm1(x), data(-2, 2)],
    ['log', (x) => nd.log(x), (x) => tf.log(x), data(0.2, 3)],
    ['log1p', (x) => nd.log1p(x), (x) => tf.log1p(x), data(-0.5, 2)],
    ['sqrt', (x) => nd.sqrt(x), (x) => tf.sqrt(x), data(0.2, 3)],
    ['rsqrt', (x) => nd.rsqrt(x), (x) => tf.rsqrt(x), data(0.2, 3)],
    ['square', (x) => nd.square(x), (x) => tf.square(x), data(-2, 2)],
    ['reciprocal', (x) => nd.reciprocal(x), (x) => tf.reciprocal(x), data(0.3, 2)],
    ['abs', (x) => nd.abs(x), (x) => tf.abs(x), data(-2, 2)],
    ['negative', (x) => nd.negative(x), (x) => tf.neg(x), data(-2, 2)],
    ['erf', (x) => nd.erf(x), (x) => tf.erf(x), data(-2, 2)],
    ['sin', (x) => nd.sin(x), (x) => tf.sin(x), data(-3, 3)],
    ['cos', (x) => nd.cos(x), (x) => tf.cos(x), data(-3, 3)],
    ['tan', (x) => nd.tan(x), (x) => tf.tan(x), data(-1.2, 1.2)],
    ['arcsin', (x) => nd.arcsin(x), (x) => tf.asin(x), data(-0.9, 0.9)],
    ['arccos', (x) => nd.arccos(x), (x) => tf.acos(x), data(-0.9, 0.9)],
    ['arctan', (x) => nd.arctan(x), (x) => tf.atan(x), data(-3, 3)],
    ['sinh', (x) => nd.sinh(x), (x) => tf.sinh(x), data(-2, 2)],
    ['cosh', (x) => nd.cosh(x), (x) => tf.cosh(x), data(-2, 2)],
    ['arcsinh', (x) => nd.arcsinh(x), (x) => tf.asinh(x), data(-3, 3)],
    ['arccosh', (x) => nd.arccosh(x), (x) => tf.acosh(x), data(1.2, 3)],
    ['arctanh', (x) => nd.arctanh(x), (x) => tf.atanh(x), data(-0.9, 0.9)],
    ['clip', (x) => nd.clip(x, { a_min: -0.5, a_max: 0.7 }), (x) => tf.clipByValue(x, -0.5, 0.7), data(-2, 2)],
    // no TF.js op of their own: composed from its primitives
    ['hard_sigmoid', (x) => nd.hard_sigmoid(x, { alpha: 0.3, beta: 0.4 }), (x) => tf.clipByValue(tf.add(tf.mul(x, 0.3), 0.4), 0, 1), data(-4, 4)],
    ['log2', (x) => nd.log2(x), (x) => tf.div(tf.log(x), Math.LN2), data(0.2, 3)],
    ['log10', (x) => nd.log10(x), (x) => tf.div(tf.log(x), Math.LN10), data(0.2, 3)],
    ['cbrt', (x) => nd.cbrt(x), (x) => tf.pow(x, 1 / 3), data(0.2, 3)],
    ['degrees', (x) => nd.degrees(x), (x) => tf.mul(x, 180 / Math.PI), data(-2, 2)],
    ['radians', (x) => nd.radians(x), (x) => tf.mul(x, Math.PI / 180), data(-2, 2)],
  ];
  for (const [name, ours, theirs, x] of cases) {
    const got = ourGrads(ours, [x], dy), want = tfGrads(theirs, [x], dy);
    assertClose(got[0], want[0], { rtol: 1e-4, atol: 1e-5, msg: name });
  }
});

test('non-differentiable ops give zero gradients (MXNet: MakeZeroGradNodes)', () => {
  for (const op of ['sign', 'floor', 'ceil', 'round', 'rint', 'fix', 'trunc', 'logical_not', 'zeros_like', 'ones_like']) {
    const x = nd.array([0.3, -1.7, 2.5, 4.2]).reshape([2, 2]);
    x.attachGrad();
    const y = autograd.record(() => nd.broadcast_add(nd[op](x), nd.ones([2, 2])));
    y.backward();
    assertClose(x.grad.toTypedArray(), [0, 0, 0, 0], { msg: op });
  }
  // BlockGrad / stop_gradient: only the other path contributes: d/dx (BlockGrad(x) * x) = BlockGrad(x) = x
  const x = nd.array([0.5, -2, 3]);
  x.attachGrad();
  autograd.record(() => nd.elemwise_mul(nd.BlockGrad(x), x)).backward();
  assertClose(x.grad.toTypedArray(), [0.5, -2, 3]);
  autograd.record(() => nd.stop_gradient(nd.square(x))).backward();
  assertClose(x.grad.toTypedArray(), [0, 0, 0]);
});

test('make_loss: the gradient is ones_like(data) whatever the head gradient (MXNet\'s make_loss)', () => {
  const x = nd.array([0.5, -2, 3, 1], { dtype: 'float64' });
  x.attachGrad();
  // loss = make_loss(x^2): d/dx = ones * 2x (the ones from make_loss, then square's chain rule)
  const y = autograd.record(() => nd.make_loss(nd.square(x)));
  y.backward(nd.array([7, 7, 7, 7], { dtype: 'float64' }));
  assertClose(x.grad.toTypedArray(), [1, -4, 6, 2]);
  const z = autograd.record(() => nd.make_loss(x));
  z.backward(nd.array([0, 3, -1, 5], { dtype: 'float64' }));
  assertClose(x.grad.toTypedArray(), [1, 1, 1, 1]);
});

test('_copy / identity pass the gradient through; clip passes it on [a_min, a_max] only (inclusive)', () => {
  const x = nd.array([-1, -0.5, 0, 0.7, 1, 0.69], { dtype: 'float64' });
  x.attachGrad();
  const head = nd.array([1, 2, 3, 4, 5, 6], { dtype: 'float64' });
  autograd.record(() => nd.clip(x, { a_min: -0.5, a_max: 0.7 })).backward(head);
  // MXNet's clip_grad: 0 where x > a_max or x < a_min; the bounds (float32) themselves pass
  const b = Math.fround(0.7);
  assertClose(x.grad.toTypedArray(), [0, 2, 3, 0.7 > b ? 0 : 4, 0, 6]);
  autograd.record(() => nd.identity(x)).backward(head);
  assertClose(x.grad.toTypedArray(), [1, 2, 3, 4, 5, 6]);
  assertClose(nd._backward_clip(head, x, { a_min: -0.5, a_max: 0.7 }).toTypedArray(), [0, 2, 3, 0.7 > b ? 0 : 4, 0, 6]);
});

test('Cast and amp_cast: the gradient is cast back to the input dtype', () => {
  const x = nd.array([0.5, -2, 3], { dtype: 'float64' });
  x.attachGrad();
  const y = autograd.record(() => nd.Cast(nd.square(x), { dtype: 'float32' }));
  assert.equal(y.dtype, 'float32');
  y.backward(nd.array([1, 0.5, 2]));
  assert.equal(x.grad.dtype, 'float64');
  assertClose(x.grad.toTypedArray(), [1, -2, 12]);
  checkGrad('Cast', [u(-2, 2)], { dtype: 'float64' });
  checkGrad('amp_cast', [u(-2, 2)], { dtype: 'float64' });
  // float32 -> float16 -> float32 through amp_cast: the gradient arrives as float32
  const x32 = nd.array([1.5, -0.25]);
  x32.attachGrad();
  const h = autograd.record(() => nd.amp_cast(x32, { dtype: 'float16' }));
  assert.equal(h.dtype, 'float16');
  h.backward(nd.array([2, 3], { dtype: 'float16' }));
  assert.equal(x32.grad.dtype, 'float32');
  assertClose(x32.grad.toTypedArray(), [2, 3]);
});
