// Higher-order gradients: autograd.grad(..., create_graph=True) returns gradients that are recorded
// computations, which a later backward differentiates again (MXNet 1.9.1: python/mxnet/autograd.py
// grad(); tests/python/unittest/test_autograd.py test_gradient; test_higher_order_grad.py's
// check_second_order_unary). Every expected value is independent of the package: hand-worked
// constants, second derivatives written out in plain float64 JS (Math), or central finite
// differences of the first-order gradient.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from '../../dist/index.mjs';
import { rng, assertClose } from './oracle.mjs';
import { registry } from '../../dist/core.mjs';

const { nd, autograd, gluon } = mx;

const f64 = (values, shape) => nd.array(Array.from(values, Number), { dtype: 'float64' }).reshape(shape);
const vals = (a) => Array.from(a.toTypedArray(), Number);

test("MXNet's test_gradient: the gradient of exp(x) + x, then its own gradient", () => {
  const x = nd.ones([1]);
  x.attachGrad();
  let z;
  autograd.record(() => { z = nd.elemwise_add(nd.exp(x), x); });
  const [dx] = autograd.grad(z, [x], { create_graph: true });
  assert.ok(Math.abs(dx.asscalar() - 3.71828175) < 1e-6, `dx = e + 1, got ${dx.asscalar()}`);
  dx.backward();
  assert.ok(Math.abs(x.grad.asscalar() - 2.71828175) < 1e-6, `d(dx)/dx = e, got ${x.grad.asscalar()}`);
});

// op -> [input range, f''(x)] (f'' of the op itself, by hand)
const sech2 = (v) => 1 / Math.cosh(v) ** 2;
const sig = (v) => 1 / (1 + Math.exp(-v));
const SECOND = {
  relu: [[0.1, 2], () => 0],
  sigmoid: [[-3, 3], (v) => sig(v) * (1 - sig(v)) * (1 - 2 * sig(v))],
  tanh: [[-2, 2], (v) => -2 * Math.tanh(v) * sech2(v)],
  expm1: [[-2, 2], (v) => Math.exp(v)],
  log: [[0.3, 3], (v) => -1 / (v * v)],
  log1p: [[-0.5, 2], (v) => -1 / (1 + v) ** 2],
  log2: [[0.3, 3], (v) => -1 / (v * v * Math.LN2)],
  log10: [[0.3, 3], (v) => -1 / (v * v * Math.LN10)],
  sqrt: [[0.3, 3], (v) => -0.25 * v ** -1.5],
  rsqrt: [[0.3, 3], (v) => 0.75 * v ** -2.5],
  cbrt: [[0.3, 3], (v) => (-2 / 9) * v ** (-5 / 3)],
  rcbrt: [[0.3, 3], (v) => (4 / 9) * v ** (-7 / 3)],
  square: [[-2, 2], () => 2],
  reciprocal: [[0.4, 2], (v) => 2 / v ** 3],
  abs: [[-2, -0.1], () => 0],
  erf: [[-2, 2], (v) => (-4 / Math.sqrt(Math.PI)) * v * Math.exp(-v * v)],
  softsign: [[0.1, 2], (v) => -2 / (1 + v) ** 3],
  sin: [[-3, 3], (v) => -Math.sin(v)],
  cos: [[-3, 3], (v) => -Math.cos(v)],
  tan: [[-1.2, 1.2], (v) => 2 * Math.tan(v) / Math.cos(v) ** 2],
  arcsin: [[-0.9, 0.9], (v) => v / (1 - v * v) ** 1.5],
  arccos: [[-0.9, 0.9], (v) => -v / (1 - v * v) ** 1.5],
  arctan: [[-3, 3], (v) => -2 * v / (1 + v * v) ** 2],
  sinh: [[-2, 2], (v) => Math.sinh(v)],
  cosh: [[-2, 2], (v) => Math.cosh(v)],
  arcsinh: [[-3, 3], (v) => -v / (v * v + 1) ** 1.5],
  arccosh: [[1.2, 3], (v) => -v / (v * v - 1) ** 1.5],
  arctanh: [[-0.9, 0.9], (v) => 2 * v / (1 - v * v) ** 2],
  degrees: [[-2, 2], () => 0],
  radians: [[-2, 2], () => 0],
  exp: [[-2, 2], (v) => Math.exp(v)], // (its gradient is built from elemwise_mul)
};
const ACTIVATIONS = {
  relu: [[0.1, 2], () => 0],
  sigmoid: [[-3, 3], SECOND.sigmoid[1]],
  tanh: [[-2, 2], SECOND.tanh[1]],
  softrelu: [[-3, 3], (v) => sig(v) * (1 - sig(v))],
  softsign: [[0.1, 2], SECOND.softsign[1]],
};

// x > 0 ? x : 0.2 x: its derivative is piecewise constant
const LEAKY = {
  LeakyReLU: [[-2, 2], () => 0],
};

// test_higher_order_grad.py's check_second_order_unary: y = f(x); g = grad(y, x, head_grads=h,
// create_graph); g.backward(hh) gives x.grad = f''(x) * h * hh
function checkSecondOrder(f, [lo, hi], f2, shape, seed) {
  const r = rng(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  const xv = r.uniform(n, lo, hi), hv = r.uniform(n, -1, 1), hhv = r.uniform(n, -1, 1);
  const x = f64(xv, shape), h = f64(hv, shape), hh = f64(hhv, shape);
  x.attachGrad();
  let g;
  autograd.record(() => {
    const y = f(x);
    g = autograd.grad(y, x, { head_grads: h, create_graph: true, retain_graph: true });
  });
  g.backward(hh);
  const expected = Array.from(xv, (v, i) => f2(Number(v)) * hv[i] * hhv[i]);
  return [vals(x.grad), expected];
}

test('second order of the unary math ops (test_higher_order_grad.py), float64, odd shapes', () => {
  for (const [op, [range, f2]] of Object.entries(SECOND)) {
    for (const [k, shape] of [[2, 3], [4, 5, 2], [3, 1, 4, 5]].entries()) {
      const [got, expected] = checkSecondOrder((x) => nd[op](x), range, f2, shape, 7 + k);
      assertClose(got, expected, { rtol: 1e-9, atol: 1e-12, msg: `${op} ${shape}` });
    }
  }
});

test('second order of Activation (every act_type) and LeakyReLU (leaky)', () => {
  for (const [act, [range, f2]] of Object.entries(ACTIVATIONS)) {
    const [got, expected] = checkSecondOrder((x) => nd.Activation(x, { act_type: act }), range, f2, [3, 7], 3);
    assertClose(got, expected, { rtol: 1e-9, atol: 1e-12, msg: `Activation ${act}` });
  }
  for (const [name, [range, f2]] of Object.entries(LEAKY)) {
    const leaky = (x) => nd.LeakyReLU(x, { act_type: 'leaky', slope: 0.2 });
    const [got, expected] = checkSecondOrder(leaky, range, f2, [4, 3], 5);
    assertClose(got, expected, { rtol: 0, atol: 0, msg: name });
  }
  // the other kinds: grad_second_order_nn.test.mjs
});

test('a gradient penalty through Gluon Dense layers equals finite differences of the first-order gradient', () => {
  // penalty(W) = sum((dD/dx)^2), D = Dense(1)(Dense(5, act)(x)), differentiated with respect to
  // the first layer's weight: the WGAN-GP pattern
  for (const act of ['tanh', 'sigmoid', 'relu', 'softrelu', 'leaky']) {
    const net = new gluon.nn.HybridSequential();
    if (act === 'leaky') { // the DCGAN critic's activation
      net.add(new gluon.nn.Dense(5, { in_units: 3 }), new gluon.nn.LeakyReLU(0.2),
        new gluon.nn.Dense(1, { in_units: 5 }));
    } else {
      net.add(new gluon.nn.Dense(5, { activation: act, in_units: 3 }), new gluon.nn.Dense(1, { in_units: 5 }));
    }
    net.initialize(new mx.init.Uniform(0.8));
    net.cast('float64');
    const xv = [0.3, -0.2, 0.9, -1.1, 0.4, 0.25];
    const penalty = () => {
      const x = f64(xv, [2, 3]);
      x.attachGrad();
      let p;
      autograd.record(() => {
        const gx = autograd.grad(net(x), x, { create_graph: true });
        p = nd.sum(nd.square(gx));
      });
      return p;
    };
    const W = net[0].weight;
    const p = penalty();
    p.backward();
    const analytic = vals(W.grad());
    // the same penalty's finite differences, from first-order gradients only
    const w0 = vals(W.data());
    const at = (i, d) => {
      const w = w0.slice();
      w[i] += d;
      W.setData(f64(w, [5, 3]));
      const x = f64(xv, [2, 3]);
      x.attachGrad();
      let y;
      autograd.record(() => { y = net(x); });
      y.backward();
      return vals(x.grad).reduce((s, v) => s + v * v, 0);
    };
    const eps = 1e-6;
    const numeric = w0.map((_, i) => (at(i, eps) - at(i, -eps)) / (2 * eps));
    W.setData(f64(w0, [5, 3]));
    assertClose(analytic, numeric, { rtol: 1e-6, atol: 1e-8, msg: `penalty through ${act}` });
  }
});

// L(x) = <hh, grad(f(x), x, head_grads=h)>: its gradient by create_graph against central finite
// differences of L, which needs first-order gradients only
function checkSecondOrderFD(f, xv, shape, seed) {
  const r = rng(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  const L = (values, create) => {
    const x = f64(values, shape);
    x.attachGrad();
    let h, hh, l;
    autograd.record(() => {
      const y = f(x);
      h = f64(r2.h.slice(0, y.size), y.shape);
      const g = autograd.grad(y, x, { head_grads: h, create_graph: create });
      hh = f64(r2.hh, shape);
      l = nd.sum(nd.elemwise_mul(g, hh));
    });
    if (create) l.backward();
    return create ? vals(x.grad) : l.asscalar();
  };
  const r2 = { h: Array.from(r.uniform(256, -1, 1), Number), hh: Array.from(r.uniform(n, -1, 1), Number) };
  const analytic = L(xv, true);
  const eps = 1e-6;
  const numeric = xv.map((_, i) => {
    const p = xv.slice(), m = xv.slice();
    p[i] += eps;
    m[i] -= eps;
    return (L(p, false) - L(m, false)) / (2 * eps);
  });
  return [analytic, numeric];
}

test('second order through sum, mean, dot, batch_dot, softmax, log_softmax, pick and views against finite differences', () => {
  const xv = [0.3, -0.7, 1.1, 0.5, 0.2, -0.4];
  const cases = {
    'sum of cubes': (x) => nd.sum(nd.power(x, 3)),
    'sum over axis 1, keepdims, times x': (x) => nd.broadcast_mul(x, nd.sum(nd.square(x), { axis: 1, keepdims: true })),
    'mean over axis 0': (x) => nd.mean(nd.sin(x), { axis: 0 }),
    'softmax by hand (exp / sum exp)': (x) => nd.broadcast_div(nd.exp(x), nd.sum(nd.exp(x), { axis: 1, keepdims: true })),
    'dot(x, x^T)': (x) => nd.dot(x, x, { transpose_b: true }),
    'dot(x^T, tanh x)': (x) => nd.dot(x, nd.tanh(x), { transpose_a: true }),
    'batch_dot': (x) => nd.batch_dot(nd.reshape(x, [1, 2, 3]), nd.reshape(nd.square(x), [1, 3, 2])),
    'softmax': (x) => nd.softmax(x),
    'softmax over axis 0, temperature 2': (x) => nd.softmax(nd.square(x), { axis: 0, temperature: 2 }),
    'log_softmax': (x) => nd.log_softmax(x, { axis: 1 }),
    'log_softmax, temperature 0.5': (x) => nd.log_softmax(nd.sin(x), { temperature: 0.5 }),
    'a reshaped view of a recorded array': (x) => nd.dot(nd.square(x).reshape([3, 2]), nd.sin(x).reshape([2, 3])),
    'cross-entropy by pick(log_softmax)': (x) => nd.pick(nd.log_softmax(x), nd.array([2, 0], { dtype: 'float64' }), { axis: 1 }),
  };
  // the backward ops these differentiate, each with a gradient of its own in the registry
  for (const op of ['_backward_sum', '_backward_mean', '_backward_dot', '_backward_batch_dot', '_backward_softmax',
    '_backward_log_softmax', '_backward_pick', '_backward_view_range']) {
    assert.equal(mx.registeredOps.includes(op) && registry.ops.find((o) => o.name === op).gradient, true, op);
  }
  let seed = 11;
  for (const [name, f] of Object.entries(cases)) {
    const [analytic, numeric] = checkSecondOrderFD(f, xv, [2, 3], seed++);
    assertClose(analytic, numeric, { rtol: 1e-6, atol: 1e-8, msg: name });
  }
});

test('without create_graph the gradient is a plain value; an autograd.Function or gamma say why not', () => {
  const x = f64([0.5, 1.5], [2]);
  x.attachGrad();
  let y;
  autograd.record(() => { y = nd.sin(x); });
  const g = autograd.grad(y, x, { retain_graph: true });
  assertClose(vals(g), [Math.cos(0.5), Math.cos(1.5)], { rtol: 1e-12 });
  assert.throws(() => g.backward(), /not in a computational graph/);

  // gamma's backward has no gradient in MXNet either (it needs the trigamma function)
  const z = f64([1.5, 2.5], [2]);
  z.attachGrad();
  let gz;
  autograd.record(() => { gz = autograd.grad(nd.gamma(z), z, { create_graph: true }); });
  assert.throws(() => gz.backward(), (e) => e instanceof mx.MXNetError && /_backward_gamma is non-differentiable/.test(e.message));

  // an autograd.Function's backward is JS code, not a graph (MXNet's neither)
  class Square extends autograd.Function {
    forward(v) { this.saveForBackward(v); return nd.square(v); }
    backward(dy) { return nd.elemwise_mul(dy, nd._mul_scalar(this.savedTensors[0], { scalar: 2 })); }
  }
  const u = nd.array([[0.1, 0.2]]);
  u.attachGrad();
  assert.throws(() => autograd.record(() => autograd.grad(new Square()(u), u, { create_graph: true })),
    (e) => e instanceof mx.MXNetError && /autograd.Function.*_backward_CustomFunction has no gradient/.test(e.message));
  // the instance stays usable
  assertClose(vals(nd.sin(f64([0], [1]))), [0]);
});

test('repeated create_graph passes free what they made', () => {
  const step = () => mx.tidy(() => {
    const x = f64([0.2, 0.4, 0.6], [3]);
    x.attachGrad();
    let g;
    autograd.record(() => { g = autograd.grad(nd.tanh(nd.square(x)), x, { create_graph: true }); });
    g.backward();
    return vals(x.grad)[0];
  });
  step();
  const before = mx.memory();
  for (let i = 0; i < 50; i++) step();
  const after = mx.memory();
  assert.ok(before.numArrays >= 0 && after.numArrays === before.numArrays, `${before.numArrays} -> ${after.numArrays} arrays`);
  assert.equal(after.bytes, before.bytes);
});
