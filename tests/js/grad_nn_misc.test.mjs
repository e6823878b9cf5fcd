// Gradients of Dropout, LeakyReLU (leaky, prelu, rrelu, elu, selu, gelu), Embedding and Crop
// against central finite differences in float64 and against TF.js's tf.grads (tf.leakyRelu,
// tf.prelu, tf.elu, tf.selu, tf.gather, the same dropout mask through tf.mul).
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assertClose, assert, rng, tf, nd, mx, autograd } from './grad_check.mjs';

// data away from 0, where the activations bend (finite differences straddling the kink are wrong)
const away = (shape, r) => {
  const n = shape.reduce((a, b) => a * b, 1);
  return { shape, data: Array.from(r.uniform(n, 0.1, 1), (v, i) => (i % 3 === 1 ? -v : v)) };
};

test('Dropout: identity when not training or p = 0, mask * ograd when training (finite differences)', () => {
  checkGrad('Dropout', [{ shape: [3, 4, 5] }], { p: 0.5 }, { trainMode: false });
  checkGrad('Dropout', [{ shape: [3, 4, 5] }], { p: 0 });
  // training: the same mask for every forward by re-seeding the generator before each call
  const seeded = (attrs) => (x) => { mx.random.seed(7); return nd.Dropout(x, attrs); };
  checkGrad(seeded({ p: 0.4 }), [{ shape: [4, 6, 5] }]);
  checkGrad(seeded({ p: 0.5, axes: [1] }), [{ shape: [3, 4, 5] }]);
  checkGrad(seeded({ p: 0.3, mode: 'always' }), [{ shape: [2, 7] }], {}, { trainMode: false });
});

test('Dropout gradient is the mask applied to the head gradient (TF.js tf.mul with the same mask)', () => {
  const r = rng(41);
  const x = { shape: [6, 8], data: r.uniform(48, 0.5, 1) }, dy = { shape: [6, 8], data: r.uniform(48) };
  const xa = nd.array(Array.from(x.data)).reshape(x.shape);
  xa.attachGrad();
  mx.random.seed(3);
  const y = autograd.record(() => nd.Dropout(xa, { p: 0.5, axes: [0] }));
  y.backward(nd.array(Array.from(dy.data)).reshape(dy.shape));
  // the mask, read off the output (x is nonzero): 0 or 1 / (1 - p) = 2, shared along axis 0
  const mask = Array.from(y.toTypedArray(), (v, i) => v / x.data[i]);
  assert.ok(mask.every((m) => Math.abs(m) < 1e-6 || Math.abs(m - 2) < 1e-5), 'mask values are 0 or 2');
  for (let i = 8; i < 48; i++) assert.ok(Math.abs(mask[i] - mask[i % 8]) < 1e-5, 'one mask row shared along axis 0');
  const want = tfGrads((a) => tf.mul(a, tf.tensor(mask, x.shape)), [x], dy)[0];
  assertClose(xa.grad.toTypedArray(), want, { rtol: 1e-6, atol: 1e-6 });
});

test('LeakyReLU leaky / elu / selu / gelu / prelu / rrelu (finite differences)', () => {
  const r = rng(42);
  for (const act_type of ['leaky', 'elu', 'selu']) {
    checkGrad('LeakyReLU', [away([3, 4, 5], r)], { act_type, slope: 0.3 });
  }
  checkGrad('LeakyReLU', [{ shape: [3, 4, 5], low: -3, high: 3 }], { act_type: 'gelu' });
  // prelu: gamma per channel, one gamma, and gamma over (N, C)
  checkGrad('LeakyReLU', [away([2, 3, 4], r), { shape: [3], low: 0.1, high: 0.5 }], { act_type: 'prelu' });
  checkGrad('LeakyReLU', [away([4, 3, 2, 2], r), { shape: [1], low: 0.1, high: 0.5 }], { act_type: 'prelu' });
  checkGrad('LeakyReLU', [away([2, 3, 4], r), { shape: [2, 3], low: 0.1, high: 0.5 }], { act_type: 'prelu' });
  checkGrad('LeakyReLU', [away([5, 4], r), { shape: [4], low: 0.1, high: 0.5 }], { act_type: 'prelu' });
  // rrelu: inference uses the mean slope; training a random slope per element (same seed every call)
  checkGrad('LeakyReLU', [away([3, 4], r)], { act_type: 'rrelu' }, { trainMode: false });
  checkGrad((x) => { mx.random.seed(9); return nd.LeakyReLU(x, { act_type: 'rrelu', lower_bound: 0.1, upper_bound: 0.6 }); },
    [away([4, 5], r)]);
});

test('selu: the gradient is the derivative of the forward (not MXNet 1.9.1\'s lambda * (y + alpha))', () => {
  const lambda = 1.0507009873554805, alpha = 1.6732632423543772;
  const xs = [-1.5, -0.2, 0.7];
  const x = nd.array(xs, { dtype: 'float64' });
  x.attachGrad();
  const y = autograd.record(() => nd.LeakyReLU(x, { act_type: 'selu' }));
  y.backward();
  // d/dx lambda * alpha * (exp(x) - 1) = lambda * alpha * exp(x) for x < 0; lambda for x > 0
  assertClose(x.grad.toTypedArray(), xs.map((v) => (v > 0 ? lambda : lambda * alpha * Math.exp(v))), { rtol: 1e-6 });
});

test('LeakyReLU kinds match TF.js gradients (tf.leakyRelu, tf.elu, tf.selu, tf.prelu)', () => {
  const r = rng(43);
  const x = away([4, 3, 5], r), dy = { shape: [4, 3, 5], data: r.uniform(60) };
  const cases = [
    [(a) => nd.LeakyReLU(a, { act_type: 'leaky', slope: 0.2 }), (a) => tf.leakyRelu(a, 0.2)],
    [(a) => nd.LeakyReLU(a, { act_type: 'elu', slope: 1 }), (a) => tf.elu(a)],
    [(a) => nd.LeakyReLU(a, { act_type: 'selu' }), (a) => tf.selu(a)],
  ];
  for (const [ours, theirs] of cases) {
    assertClose(ourGrads(ours, [x], dy)[0], tfGrads(theirs, [x], dy)[0], { rtol: 1e-5, atol: 1e-5 });
  }
  // prelu with a gamma per channel: TF's alpha broadcasts along the last axis, so work in (N, W, C)
  const g = { shape: [3], data: r.uniform(3, 0.1, 0.5) };
  const ours = ourGrads((a, gm) => nd.LeakyReLU(a, gm, { act_type: 'prelu' }), [x, g], dy);
  const theirs = tfGrads((a, gm) => tf.transpose(tf.prelu(tf.transpose(a, [0, 2, 1]), gm), [0, 2, 1]), [x, g], dy);
  ours.forEach((v, i) => assertClose(v, theirs[i], { rtol: 1e-5, atol: 1e-5, msg: `prelu input ${i}` }));
  // gelu (erf form): TF.js has no gelu; 0.5 x (1 + erf(x / sqrt 2)) written out with tf.erf
  const gx = { shape: [2, 6], data: r.uniform(12, -3, 3) }, gdy = { shape: [2, 6], data: r.uniform(12) };
  assertClose(ourGrads((a) => nd.LeakyReLU(a, { act_type: 'gelu' }), [gx], gdy)[0],
    tfGrads((a) => tf.mul(tf.mul(a, 0.5), tf.add(1, tf.erf(tf.div(a, Math.SQRT2)))), [gx], gdy)[0], { rtol: 1e-4, atol: 1e-5 });
});

test('Embedding: the weight gradient scatter-adds rows (repeated and clipped indices); indices get none', () => {
  const idx = nd.array([[0, 2, 2], [4, 1, 7]], { dtype: 'int32' }); // 7 is clipped to the last row (4)
  checkGrad('Embedding', [idx, { shape: [5, 3] }], { input_dim: 5, output_dim: 3 });
  const fidx = nd.array([1.5, 3.5, 1.25, 0.5], { dtype: 'float64' }); // truncated to 1, 3, 1, 0: flat in between
  const { analytic } = checkGrad('Embedding', [fidx, { shape: [4, 2] }], { input_dim: 4, output_dim: 2 }, { wrt: [0, 1] });
  assertClose(analytic[0], new Float64Array(4)); // no gradient for the indices
  // TF.js: tf.gather's gradient (unsorted segment sum)
  const r = rng(44);
  const w = { shape: [6, 4], data: r.uniform(24) }, dy = { shape: [2, 3, 4], data: r.uniform(24) };
  const ids = [5, 0, 5, 2, 2, 5];
  const ours = ourGrads((wt) => nd.Embedding(nd.array(ids).reshape([2, 3]), wt, { input_dim: 6, output_dim: 4 }), [w], dy);
  const theirs = tfGrads((wt) => tf.gather(wt, tf.tensor(ids, [2, 3], 'int32')), [w], dy);
  assertClose(ours[0], theirs[0], { rtol: 1e-6, atol: 1e-6 });
});

test('Crop: the window gets ograd, the rest zeros; crop_like none (finite differences)', () => {
  checkGrad('Crop', [{ shape: [2, 3, 5, 6] }], { num_args: 1, h_w: [3, 4], offset: [1, 2] });
  checkGrad('Crop', [{ shape: [2, 2, 5, 6] }], { num_args: 1, h_w: [2, 3], center_crop: true });
  const { analytic } = checkGrad('Crop', [{ shape: [1, 2, 4, 5] }, { shape: [1, 1, 2, 3] }], { num_args: 2, offset: [2, 1] });
  assertClose(analytic[1], new Float64Array(6));
});

test('hybridized Dropout / LeakyReLU / Embedding blocks: gradients through the saved mask and outputs', () => {
  const { gluon } = mx;
  const r = rng(45);
  const x = nd.array(Array.from(r.uniform(5 * 8, 0.5, 1))).reshape([5, 8]);
  const net = new gluon.nn.HybridSequential();
  net.add(new gluon.nn.Dropout(0.5), new gluon.nn.ELU(0.7));
  net.initialize();
  net.hybridize();
  for (let it = 0; it < 2; it++) {
    x.attachGrad();
    const y = autograd.record(() => net.forward(x));
    y.backward();
    // inputs positive: elu is the identity there, so the gradient is the mask, y / x
    const yv = y.toTypedArray(), xv = x.toTypedArray();
    assertClose(x.grad.toTypedArray(), Array.from(yv, (v, i) => v / xv[i]), { rtol: 1e-5, atol: 1e-6 });
    assert.ok(Array.from(yv).some((v) => v === 0) && Array.from(yv).some((v) => v !== 0), 'some dropped, some kept');
  }
  const emb = new gluon.nn.Embedding(4, 3);
  emb.initialize();
  emb.hybridize();
  const ids = nd.array([[3, 1], [3, 3]]);
  const y = autograd.record(() => emb.forward(ids));
  y.backward(nd.ones([2, 2, 3]));
  assertClose(emb.weight.grad().toTypedArray(), [0, 0, 0, 1, 1, 1, 0, 0, 0, 3, 3, 3]);
});
