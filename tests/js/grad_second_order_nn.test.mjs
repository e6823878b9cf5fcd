// Higher-order gradients through the network layers: autograd.grad(..., create_graph=True) through
// Dense and convolution weights (MAML's inner step, Hessian-vector products), convolution and
// pooling data gradients with LayerNorm, BatchNorm, InstanceNorm or GroupNorm between them (WGAN-GP's
// gradient penalty on a convolutional critic), and the LeakyReLU kinds. MXNet 1.9.1 has none of
// these second orders; the reference is independent of the package all the same: central finite
// differences of first-order gradients (checkSecondOrderFD), and of each backward op's forward
// (checkGrad).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from '../../dist/index.mjs';
import { rng, assertClose } from './oracle.mjs';
import { checkGrad } from './grad_check.mjs';

const { nd, autograd, gluon } = mx;

const f64 = (values, shape) => nd.array(Array.from(values, Number), { dtype: 'float64' }).reshape(shape);
const vals = (a) => Array.from(a.toTypedArray(), Number);
const size = (shape) => shape.reduce((a, b) => a * b, 1);

// L(a_0, ..., a_n) = sum_k <hh_k, grad(f(a), a_wrt[k], head_grads=h)_k>: its gradient with respect
// to every a_i by create_graph (a second backward) against central finite differences of L, which
// needs first-order gradients only. shapes: the inputs' shapes (values drawn in [-1, 1] unless
// given); wrt: the inputs of the inner gradient; outer: the inputs compared (default all; BatchNorm's
// moving statistics get no gradient, as in MXNet); trainMode: the mode of the recording and of
// both gradients.
function checkSecondOrderFD(f, shapes, { wrt = [0], outer, values, seed = 3, trainMode = true } = {}) {
  const r = rng(seed);
  const x0 = values ?? shapes.map((s) => Array.from(r.uniform(size(s), -1, 1), Number));
  const hh = wrt.map((i) => Array.from(r.uniform(size(shapes[i]), -1, 1), Number));
  const hv = Array.from(r.uniform(4096, -1, 1), Number);
  const L = (xv, create) => {
    const a = xv.map((v, i) => f64(v, shapes[i]));
    a.forEach((t) => t.attachGrad());
    let l;
    autograd.record(() => {
      const y = f(...a);
      const h = f64(hv.slice(0, y.size), y.shape);
      const g = autograd.grad(y, wrt.map((i) => a[i]), { head_grads: h, create_graph: create, train_mode: trainMode });
      l = g.map((gk, k) => nd.sum(nd.elemwise_mul(gk, f64(hh[k], gk.shape)))).reduce((s, t) => nd.elemwise_add(s, t));
    }, { trainMode });
    if (!create) return l.asscalar();
    l.backward({ trainMode });
    return a.map((t) => vals(t.grad));
  };
  const keep = outer ?? x0.map((_, i) => i);
  const analytic = L(x0, true).filter((_, i) => keep.includes(i));
  const eps = 1e-6;
  const numeric = x0.filter((_, i) => keep.includes(i)).map((v, k) => v.map((_, j) => {
    const i = keep[k];
    const p = x0.map((u) => u.slice()), m = x0.map((u) => u.slice());
    p[i][j] += eps;
    m[i][j] -= eps;
    return (L(p, false) - L(m, false)) / (2 * eps);
  }));
  return [analytic.flat(), numeric.flat()];
}
const expectFD = (name, f, shapes, opts = {}) => {
  const [analytic, numeric] = checkSecondOrderFD(f, shapes, opts);
  assert.ok(numeric.some((v) => Math.abs(v) > 1e-3), `${name}: the second-order terms are not all zero`);
  assertClose(analytic, numeric, { rtol: 1e-6, atol: 1e-8, msg: name });
};

test('Dense: second order through the weight and bias gradients (a MAML inner step) and the data gradient', () => {
  const fc = (attrs) => (x, w, b) => nd.tanh(b ? nd.FullyConnected(x, w, b, attrs) : nd.FullyConnected(x, w, attrs));
  expectFD('weights and bias', fc({ num_hidden: 3 }), [[2, 4], [3, 4], [3]], { wrt: [1, 2] });
  expectFD('data, weights and bias together', fc({ num_hidden: 3 }), [[2, 4], [3, 4], [3]], { wrt: [0, 1, 2] });
  expectFD('3-D data flattened, no bias', fc({ num_hidden: 2, no_bias: true }), [[2, 2, 3], [2, 6]], { wrt: [0, 1] });
  expectFD('flatten=False', fc({ num_hidden: 2, flatten: false }), [[2, 2, 3], [2, 3], [2]], { wrt: [1] });
});

test('Convolution and Deconvolution: second order through the weight, bias and data gradients', () => {
  const conv = (attrs) => (x, w, b) => nd.tanh(nd.Convolution(x, w, b, attrs));
  const deconv = (attrs) => (x, w, b) => nd.sin(nd.Deconvolution(x, w, b, attrs));
  expectFD('Conv2D stride 2, pad 1, 2 groups: weights and bias',
    conv({ kernel: [3, 3], stride: [2, 2], pad: [1, 1], num_filter: 4, num_group: 2 }), [[1, 4, 5, 5], [4, 2, 3, 3], [4]],
    { wrt: [1, 2] });
  expectFD('Conv2D: data (the gradient penalty)', conv({ kernel: [2, 3], num_filter: 2 }), [[2, 2, 4, 4], [2, 2, 2, 3], [2]],
    { wrt: [0] });
  expectFD('Conv1D dilate 2: data and weights', conv({ kernel: [3], dilate: [2], num_filter: 3 }), [[2, 2, 7], [3, 2, 3], [3]],
    { wrt: [0, 1] });
  expectFD('Conv2D NHWC: weights', conv({ kernel: [2, 2], num_filter: 2, layout: 'NHWC' }), [[1, 4, 3, 2], [2, 2, 2, 2], [2]],
    { wrt: [1] });
  expectFD('Deconv2D stride 2, adj 1: data, weights and bias',
    deconv({ kernel: [3, 3], stride: [2, 2], adj: [1, 1], num_filter: 3, no_bias: false }), [[1, 2, 3, 3], [2, 3, 3, 3], [3]],
    { wrt: [0, 1, 2] });
});

test('Pooling: second order through avg, sum and max pooling gradients (channel-first and channel-last)', () => {
  const pool = (attrs) => (x) => nd.tanh(nd.Pooling(nd.sin(nd.square(x)), attrs));
  expectFD('avg 3x3 stride 2 pad 1, count_include_pad false',
    pool({ kernel: [3, 3], stride: [2, 2], pad: [1, 1], pool_type: 'avg', count_include_pad: false }), [[1, 2, 5, 5]]);
  expectFD('avg, full convention', pool({ kernel: [2, 2], stride: [2, 2], pool_type: 'avg', pooling_convention: 'full' }),
    [[1, 1, 5, 5]]);
  expectFD('sum 1-D', pool({ kernel: [3], stride: [1], pool_type: 'sum' }), [[2, 2, 6]]);
  expectFD('global avg', pool({ kernel: [1, 1], global_pool: true, pool_type: 'avg' }), [[2, 3, 3, 2]]);
  expectFD('max 3x3 stride 2 pad 1', pool({ kernel: [3, 3], stride: [2, 2], pad: [1, 1], pool_type: 'max' }), [[1, 2, 5, 5]]);
  expectFD('max 2x2 (disjoint windows)', pool({ kernel: [2, 2], stride: [2, 2], pool_type: 'max' }), [[2, 1, 4, 6]]);
  expectFD('max NHWC', pool({ kernel: [2, 2], stride: [1, 1], pool_type: 'max', layout: 'NHWC' }), [[1, 4, 3, 2]]);
  // lp pooling's gradient is nonlinear in data and output: no second order, a clear error
  const x = f64([0.5, -0.2, 0.3, 0.9], [1, 1, 4]);
  x.attachGrad();
  let g;
  autograd.record(() => {
    g = autograd.grad(nd.Pooling(nd.square(x), { kernel: [2], pool_type: 'lp', p_value: 2 }), x, { create_graph: true });
  });
  assert.throws(() => g.backward(), (e) => e instanceof mx.MXNetError && /max, avg and sum pooling, not lp/.test(e.message));
});

test('LeakyReLU: second order of every kind (elu, selu, gelu, prelu, rrelu at inference)', () => {
  const leaky = (attrs) => (x) => nd.LeakyReLU(nd.sin(nd.elemwise_mul(x, f64(Array(6).fill(3), [2, 3]))), attrs);
  expectFD('elu', leaky({ act_type: 'elu', slope: 0.7 }), [[2, 3]]);
  expectFD('selu', leaky({ act_type: 'selu' }), [[2, 3]]);
  expectFD('gelu', leaky({ act_type: 'gelu' }), [[2, 3]]);
  expectFD('rrelu (inference: the mean slope)', leaky({ act_type: 'rrelu' }), [[2, 3]], { trainMode: false });
  const prelu = (x, gamma) => nd.square(nd.LeakyReLU(nd.sin(x), gamma, { act_type: 'prelu' }));
  expectFD('prelu, gamma per channel', prelu, [[2, 3, 2], [3]], { wrt: [0, 1] });
  expectFD('prelu, one gamma', prelu, [[2, 3], [1]], { wrt: [0, 1] });
});

test('LayerNorm, BatchNorm, InstanceNorm, GroupNorm and L2Normalization: second order through the decomposed gradient', () => {
  const ln = (attrs) => (x, g, b) => nd.sin(nd.LayerNorm(x, g, b, attrs));
  expectFD('LayerNorm, last axis', ln({}), [[3, 5], [5], [5]], { wrt: [0] });
  expectFD('LayerNorm axis 1 of 3-D: data, gamma and beta', ln({ axis: 1, eps: 1e-3 }), [[2, 3, 2], [3], [3]], { wrt: [0, 1, 2] });
  const bn = (attrs) => (x, g, b, mm, mv) => nd.sin(nd.BatchNorm(x, g, b, mm, mv, attrs));
  const bnShapes = [[4, 3, 2], [3], [3], [3], [3]];
  const r = rng(5);
  const bnValues = bnShapes.map((s, i) => Array.from(r.uniform(size(s), i === 4 ? 0.5 : -1, 1.5), Number));
  expectFD('BatchNorm training (batch statistics)', bn({ fix_gamma: false }), bnShapes, { wrt: [0, 1], outer: [0, 1, 2], values: bnValues });
  expectFD('BatchNorm training, fix_gamma', bn({ fix_gamma: true }), bnShapes, { wrt: [0], outer: [0, 1, 2], values: bnValues });
  expectFD('BatchNorm inference (moving statistics)', bn({ fix_gamma: false }), bnShapes,
    { wrt: [0, 1], outer: [0, 1, 2], values: bnValues, trainMode: false });
  expectFD('BatchNorm use_global_stats, channel axis 2', bn({ fix_gamma: false, use_global_stats: true, axis: 2 }),
    [[2, 2, 3], [3], [3], [3], [3]], { wrt: [0], outer: [0, 1, 2], values: bnValues.map((v, i) => (i === 0 ? v.slice(0, 12) : v)) });
  expectFD('InstanceNorm', (x, g, b) => nd.sin(nd.InstanceNorm(x, g, b)), [[2, 2, 3], [2], [2]], { wrt: [0, 1] });
  for (const mode of ['instance', 'channel', 'spatial']) {
    expectFD(`L2Normalization, ${mode}`, (x) => nd.sin(nd.L2Normalization(x, { mode, eps: 1e-3 })), [[2, 3, 2]]);
  }
  expectFD('GroupNorm, 2 groups of 2 channels (gamma per group)',
    (x, g, b) => nd.sin(nd.GroupNorm(x, g, b, { num_groups: 2 })), [[2, 4, 3], [2], [2]], { wrt: [0, 1, 2] });
});

test('a WGAN-GP penalty on a convolutional critic (Conv2D, LayerNorm, LeakyReLU, pooling, Dense) equals finite differences', () => {
  mx.random.seed(3);
  const net = new gluon.nn.HybridSequential();
  net.add(new gluon.nn.Conv2D(3, 3, 1, 1, { in_channels: 1 }), new gluon.nn.LayerNorm({ axis: 1, in_channels: 3 }),
    new gluon.nn.LeakyReLU(0.2), new gluon.nn.MaxPool2D(2), new gluon.nn.Conv2D(2, 2, { in_channels: 3 }),
    new gluon.nn.ELU(), new gluon.nn.Dense(1, { in_units: 2 }));
  net.initialize(new mx.init.Uniform(0.8));
  net.cast('float64');
  const xv = Array.from(rng(9).uniform(2 * 16, -1, 1), Number);
  const penalty = (withGrad) => {
    const x = f64(xv, [2, 1, 4, 4]);
    x.attachGrad();
    let p;
    autograd.record(() => {
      const gx = autograd.grad(net(x), x, { create_graph: withGrad });
      p = nd.sum(nd.square(nd.elemwise_sub(nd.sqrt(nd.sum(nd.square(gx.reshape([2, -1])), { axis: 1 })), nd.ones([2], { dtype: 'float64' }))));
    });
    if (withGrad) p.backward();
    return p.asscalar();
  };
  penalty(true);
  const W = net[0].weight;
  const analytic = vals(W.grad());
  const w0 = vals(W.data());
  const at = (i, d) => {
    const w = w0.slice();
    w[i] += d;
    W.setData(f64(w, W.shape));
    return penalty(false);
  };
  const numeric = w0.map((_, i) => (at(i, 1e-6) - at(i, -1e-6)) / 2e-6);
  W.setData(f64(w0, W.shape));
  assertClose(analytic, numeric, { rtol: 1e-6, atol: 1e-8, msg: 'penalty gradient' });
});

test('clip (ReLU6), hard_sigmoid, Embedding, max/min, norm, bilinear resize and adaptive pooling: second order', () => {
  const scale = (x, k) => nd._mul_scalar(x, { scalar: k });
  expectFD('clip(x, -0.5, 0.6) of sin', (x) => nd.square(nd.clip(nd.sin(scale(x, 2)), -0.5, 0.6)), [[2, 5]]);
  expectFD('hard_sigmoid', (x) => nd.square(nd.hard_sigmoid(scale(x, 3))), [[2, 5]]);
  const idx = nd.array([2, 0, 3, 2], { dtype: 'float64' });
  expectFD('Embedding: the weight (an NLP model\'s inner step)', (w) => nd.tanh(nd.Embedding(idx, w, { input_dim: 4, output_dim: 3 })),
    [[4, 3]]);
  expectFD('max over axis 1', (x) => nd.max(nd.sin(scale(x, 2)), { axis: 1 }), [[3, 4]]);
  expectFD('min over every axis but 0, keepdims', (x) => nd.broadcast_mul(x, nd.min(nd.square(x), { axis: 0, exclude: true, keepdims: true })),
    [[2, 2, 3]]);
  expectFD('norm (L2) over axis 1', (x) => nd.norm(nd.sin(x), { axis: 1 }), [[3, 4]]);
  expectFD('prod over axis 1', (x) => nd.prod(nd._plus_scalar(nd.sin(x), { scalar: 1.5 }), { axis: 1 }), [[2, 3]]);
  expectFD('nansum over axis 0, keepdims', (x) => nd.broadcast_mul(x, nd.nansum(nd.square(x), { axis: 0, keepdims: true })),
    [[3, 2]]);
  expectFD('norm (L2) of everything, keepdims', (x) => nd.broadcast_mul(x, nd.norm(x, { keepdims: true })), [[2, 3]]);
  expectFD('norm (L1) over axis 0', (x) => nd.square(nd.norm(nd.sin(x), { ord: 1, axis: 0 })), [[3, 2]]);
  expectFD('BilinearResize2D 3x4 -> 5x7', (x) => nd.tanh(nd.contrib.BilinearResize2D(nd.sin(x), { height: 5, width: 7 })), [[1, 2, 3, 4]]);
  expectFD('AdaptiveAvgPooling2D 5x5 -> 2x3', (x) => nd.tanh(nd.contrib.AdaptiveAvgPooling2D(nd.sin(x), { output_size: [2, 3] })),
    [[1, 2, 5, 5]]);
});

// Each new backward op's own gradient, as an op of independent inputs, against finite differences
// of the op itself. Max pooling's routing is held fixed (data and output not differentiated).
test('the backward ops\' own gradients (checkGrad)', () => {
  const G = { shape: [2, 3] }, X = { shape: [2, 4] };
  checkGrad('_backward_FullyConnected_weight', [G, X], { num_hidden: 3 });
  checkGrad('_backward_FullyConnected_weight', [G, X], { num_hidden: 3, no_bias: true });
  checkGrad('_backward_FullyConnected', [G, X, { shape: [3, 4] }], { num_hidden: 3 });
  checkGrad('_backward_FullyConnected', [{ shape: [2, 2, 3] }, { shape: [2, 2, 4] }, { shape: [3, 4] }],
    { num_hidden: 3, flatten: false, no_bias: true });
  const conv = { kernel: [3, 3], stride: [2, 2], pad: [1, 1], num_filter: 4, num_group: 2 };
  checkGrad('_backward_Convolution_weight', [{ shape: [1, 4, 3, 3] }, { shape: [1, 4, 5, 5] }], conv);
  checkGrad('_backward_Deconvolution_weight', [{ shape: [1, 3, 7, 7] }, { shape: [1, 2, 3, 3] }],
    { kernel: [3, 3], stride: [2, 2], num_filter: 3 });
  const data = { shape: [1, 2, 4, 4], data: Array.from(rng(2).uniform(32, -1, 1), Number) };
  for (const attrs of [{ kernel: [2, 2], stride: [2, 2], pool_type: 'max' },
    { kernel: [3, 3], stride: [1, 1], pad: [1, 1], pool_type: 'max' },
    { kernel: [3, 3], stride: [2, 2], pad: [1, 1], pool_type: 'avg' }]) {
    const x = f64(data.data, data.shape), y = nd.Pooling(x, attrs);
    checkGrad('_backward_Pooling', [{ shape: y.shape }, x, y], attrs, { wrt: [0] });
    if (attrs.pool_type === 'max') checkGrad('_backward_grad_Pooling', [{ shape: x.shape }, x, y], attrs, { wrt: [0] });
  }
  const xv = [0.8, -0.6, 0.4, -1.2, 1.1, -0.3];
  const x = { shape: [2, 3], data: xv };
  for (const act of ['elu', 'selu']) {
    const y = nd.LeakyReLU(f64(xv, [2, 3]), { act_type: act });
    checkGrad('_backward_LeakyReLU', [{ shape: [2, 3] }, x, { shape: [2, 3], data: vals(y) }], { act_type: act });
  }
  checkGrad('_backward_LeakyReLU', [{ shape: [2, 3] }, x, { shape: [2, 3] }], { act_type: 'gelu' }, { wrt: [0, 1] });
  const xs = { shape: [2, 5], data: [0.9, -0.7, 0.3, -0.1, 0.45, 1.3, -1.2, 0.05, 0.6, -0.35] };
  checkGrad('_backward_clip', [{ shape: [2, 5] }, xs], { a_min: -0.5, a_max: 0.5 }, { wrt: [0] });
  checkGrad('_backward_hard_sigmoid', [{ shape: [2, 5] }, xs], {}, { wrt: [0] });
  checkGrad('_backward_Embedding', [{ shape: [4, 3] }, nd.array([2, 0, 3, 2], { dtype: 'float64' })],
    { input_dim: 4, output_dim: 3 }, { wrt: [0] });
  const m = f64(xs.data, [2, 5]);
  for (const [op, backward] of [['max', '_backward_max'], ['min', '_backward_min']]) {
    const y = nd[op](m, { axis: 1 });
    checkGrad(backward, [{ shape: [2] }, m, y], { axis: [1] }, { wrt: [0] });
  }
  checkGrad('_backward_prod', [{ shape: [2] }, xs, { shape: [2] }], { axis: [1] });
  checkGrad('_backward_nansum', [{ shape: [5] }, xs], { axis: [0] }, { wrt: [0] });
  checkGrad('_backward_norm', [{ shape: [2] }, xs, { shape: [2], low: 0.5, high: 1.5 }], { axis: [1] });
  checkGrad('_backward_norm', [{ shape: [5] }, xs, { shape: [5] }], { axis: [0], ord: 1 }, { wrt: [0] });
  checkGrad('_backward_contrib_BilinearResize2D', [{ shape: [1, 2, 5, 7] }, { shape: [1, 2, 3, 4] }],
    { height: 5, width: 7 }, { wrt: [0] });
  checkGrad('_backward_contrib_AdaptiveAvgPooling2D', [{ shape: [1, 2, 2, 3] }, { shape: [1, 2, 5, 5] }],
    { output_size: [2, 3] }, { wrt: [0] });
  checkGrad('_backward_LeakyReLU', [{ shape: [2, 3] }, x, { shape: [2, 3] }, { shape: [3] }], { act_type: 'prelu' },
    { wrt: [0, 1, 3] });
});

test('repeated penalty steps through convolution, BatchNorm and pooling leave memory flat', () => {
  const net = new gluon.nn.HybridSequential();
  net.add(new gluon.nn.Conv2D(4, 3, { in_channels: 2 }), new gluon.nn.BatchNorm({ in_channels: 4 }),
    new gluon.nn.PReLU(), new gluon.nn.AvgPool2D(2), new gluon.nn.Dense(1, { in_units: 16 }));
  net.initialize();
  const step = () => mx.tidy(() => {
    const x = nd.random.uniform(-1, 1, [2, 2, 6, 6]);
    x.attachGrad();
    let p;
    autograd.record(() => { p = nd.sum(nd.square(autograd.grad(net(x), x, { create_graph: true }))); });
    p.backward();
    return vals(net[0].weight.grad())[0];
  });
  const first = step();
  assert.ok(Number.isFinite(first) && first !== 0, `the penalty reaches the first weight: ${first}`);
  const before = mx.memory();
  for (let i = 0; i < 20; i++) step();
  const after = mx.memory();
  assert.equal(after.numArrays, before.numArrays);
  assert.equal(after.bytes, before.bytes);
});

// A hybridized block's call is one _CachedOp node on the tape; with create_graph its gradient is
// that of its forward graph recomputed from the call's inputs (csrc/graph/cached_op.c).
function critic(hybridize) {
  mx.random.seed(11);
  const net = new gluon.nn.HybridSequential();
  net.add(new gluon.nn.Conv2D(3, 3, { in_channels: 2 }), new gluon.nn.BatchNorm({ in_channels: 3 }),
    new gluon.nn.LeakyReLU(0.2), new gluon.nn.MaxPool2D(2), new gluon.nn.Conv2D(2, 1, { in_channels: 3 }),
    new gluon.nn.LayerNorm({ axis: 1, in_channels: 2 }), new gluon.nn.Activation('tanh'), new gluon.nn.Dense(1, { in_units: 8 }));
  net.initialize(new mx.init.Uniform(0.7));
  net.cast('float64');
  if (hybridize) net.hybridize();
  return net;
}
const xCritic = Array.from(rng(4).uniform(2 * 2 * 6 * 6, -1, 1), Number);
function penaltyStep(net, withGrad = true) {
  const x = f64(xCritic, [2, 2, 6, 6]);
  x.attachGrad();
  let p;
  autograd.record(() => {
    const gx = autograd.grad(net(x), x, { create_graph: withGrad });
    p = nd.sum(nd.square(gx));
  });
  if (withGrad) p.backward();
  return p.asscalar();
}

test('hybridized: create_graph through a hybridized critic (Conv2D, BatchNorm, LayerNorm, pooling) equals finite differences and the imperative run', () => {
  const hyb = critic(true), imp = critic(false);
  const ph = penaltyStep(hyb), pi = penaltyStep(imp);
  assertClose([ph], [pi], { rtol: 1e-12, msg: 'penalty' });
  for (const [i, name] of [[0, 'weight'], [4, 'weight'], [7, 'weight'], [1, 'gamma'], [5, 'beta']]) {
    assertClose(vals(hyb[i][name].grad()), vals(imp[i][name].grad()), { rtol: 1e-10, atol: 1e-13, msg: `layer ${i} ${name}` });
  }
  // BatchNorm's running statistics were updated once by the recorded call, not again by the recomputation
  assertClose(vals(hyb[1].running_mean.data()), vals(imp[1].running_mean.data()), { rtol: 1e-12, msg: 'running_mean' });
  assert.ok(vals(hyb[1].running_mean.data()).some((v) => v !== 0));
  // the hybridized result against finite differences of first-order penalties, for the last Conv2D's weight
  const W = hyb[4].weight;
  const analytic = vals(W.grad());
  const w0 = vals(W.data());
  const fresh = critic(true);
  const at = (i, d) => {
    const w = w0.slice();
    w[i] += d;
    fresh[4].weight.setData(f64(w, W.shape));
    return penaltyStep(fresh, false);
  };
  const numeric = w0.map((_, i) => (at(i, 1e-6) - at(i, -1e-6)) / 2e-6);
  // (each finite-difference call is a training forward: BatchNorm normalizes with the batch, as above)
  assertClose(analytic, numeric, { rtol: 1e-6, atol: 1e-8, msg: 'hybridized penalty gradient' });
});

test('hybridized: Dropout keeps the mask the call drew; a block drawing random numbers is refused by name', () => {
  mx.random.seed(2);
  const net = new gluon.nn.HybridSequential();
  net.add(new gluon.nn.Dense(4, { in_units: 3, activation: 'tanh' }), new gluon.nn.Dropout(0.5), new gluon.nn.Dense(1, { in_units: 4 }));
  net.initialize();
  net.cast('float64');
  net.hybridize();
  const xv = [0.1, -0.2, 0.3];
  const x = f64(xv, [1, 3]);
  x.attachGrad();
  let g;
  autograd.record(() => { g = autograd.grad(net(x), x, { create_graph: true }); });
  g.backward();
  // by hand, for a mask m (0 or 1/(1-p) = 2 per hidden unit): D = w2 . (m * tanh(W1 x + b1)) + b2,
  // dD/dx_j = sum_k w2_k m_k (1 - t_k^2) W1_kj, and d/dx_j of sum_i dD/dx_i =
  // sum_k w2_k m_k (-2 t_k (1 - t_k^2)) (sum_i W1_ki) W1_kj. The mask the call drew is the one whose
  // first derivative is the gradient returned; the second derivative must use the same mask.
  const W1 = net[0].weight.data().toArray(), b1 = vals(net[0].bias.data()), w2 = vals(net[2].weight.data());
  const t = W1.map((row, k) => Math.tanh(row.reduce((acc, w, j) => acc + w * xv[j], b1[k])));
  const first = (m) => xv.map((_, j) => t.reduce((acc, tk, k) => acc + w2[k] * m[k] * (1 - tk * tk) * W1[k][j], 0));
  const second = (m) => xv.map((_, j) => t.reduce((acc, tk, k) =>
    acc + w2[k] * m[k] * -2 * tk * (1 - tk * tk) * W1[k].reduce((a, b) => a + b, 0) * W1[k][j], 0));
  const masks = Array.from({ length: 16 }, (_, b) => [0, 1, 2, 3].map((k) => ((b >> k) & 1) * 2));
  const gv = vals(g);
  const drawn = masks.filter((m) => first(m).every((v, j) => Math.abs(v - gv[j]) < 1e-12));
  assert.equal(drawn.length, 1, `one mask explains the first derivative ${gv}`);
  assert.ok(drawn[0].includes(0) && drawn[0].includes(2), `the mask drops some units and keeps some: ${drawn[0]}`);
  assertClose(vals(x.grad), second(drawn[0]), { rtol: 1e-10, atol: 1e-14, msg: 'second derivative with the drawn mask' });

  class Noisy extends gluon.HybridBlock {
    hybridForward(F, v) { return F.broadcast_add(F.tanh(v), F.random_normal({ shape: [1, 3] })); }
  }
  const noisy = new Noisy();
  noisy.hybridize();
  const u = nd.array([[0.1, -0.2, 0.3]]);
  u.attachGrad();
  assert.throws(() => autograd.record(() => autograd.grad(noisy(u), u, { create_graph: true })),
    (e) => e instanceof mx.MXNetError && /draws random numbers in training mode \(node '.*', _random_normal\).*without hybridize/.test(e.message));
});

test('hybridized create_graph steps leave memory flat', () => {
  const net = critic(true);
  for (let i = 0; i < 2; i++) mx.tidy(() => penaltyStep(net)); // the plan and its pooled arena
  const before = mx.memory();
  for (let i = 0; i < 20; i++) mx.tidy(() => penaltyStep(net));
  const after = mx.memory();
  assert.equal(after.numArrays, before.numArrays);
  assert.equal(after.bytes, before.bytes);
});
