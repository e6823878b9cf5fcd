// Gradients of the normalization family against central finite differences in float64:
// BatchNorm (training through the batch statistics, fix_gamma, use_global_stats, axis, inference
// with the moving statistics), _contrib_BatchNormWithReLU, LayerNorm (axes), InstanceNorm,
// GroupNorm, L2Normalization (instance / channel / spatial), LRN; BatchNorm and LayerNorm also
// against TF.js's tf.grads of the tf.moments formula.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assertClose, assert, rng, tf, nd, mx, autograd } from './grad_check.mjs';

const vec = (n, low = -1, high = 1) => ({ shape: [n], low, high });
// data, gamma, beta, moving_mean, moving_var (positive)
const bnInputs = (xs, axis = 1) => {
  const C = xs[axis < 0 ? xs.length + axis : axis];
  return [{ shape: xs }, vec(C, 0.5, 1.5), vec(C), vec(C), vec(C, 0.5, 2)];
};
const WRT3 = { wrt: [0, 1, 2] }; // the moving statistics get no gradient (MXNet: _NoGradient)

test('BatchNorm in training: through the batch statistics, fix_gamma, axis (finite differences)', () => {
  checkGrad('BatchNorm', bnInputs([4, 3, 5, 2]), { fix_gamma: false }, WRT3);
  checkGrad('BatchNorm', bnInputs([5, 3]), { fix_gamma: false, eps: 1e-4 }, WRT3);
  checkGrad('BatchNorm', bnInputs([3, 2, 7], -1), { fix_gamma: false, axis: -1 }, WRT3);
  checkGrad('BatchNorm', bnInputs([2, 4, 3, 3], 2), { fix_gamma: false, axis: 2 }, WRT3);
  // fix_gamma (the default): gamma is 1 and gets a zero gradient
  const { analytic } = checkGrad('BatchNorm', bnInputs([4, 3, 5]), {}, WRT3);
  assertClose(analytic[1], new Float64Array(3));
  // use_global_stats: the moving statistics normalize, as constants, also in training
  checkGrad('BatchNorm', bnInputs([4, 3, 5]), { fix_gamma: false, use_global_stats: true }, WRT3);
  // output_mean_var: the gradient flows from the output (MXNet ignores the mean/var outputs' gradients)
  checkGrad((x, g, b, mm, mv) => nd.BatchNorm(x, g, b, mm, mv, { fix_gamma: false, output_mean_var: true })[0],
    bnInputs([4, 3, 2]), {}, WRT3);
});

test('_contrib_BatchNormWithReLU (finite differences)', () => {
  checkGrad('_contrib_BatchNormWithReLU', bnInputs([4, 3, 5]), { fix_gamma: false }, WRT3);
  checkGrad('_contrib_BatchNormWithReLU', bnInputs([6, 2]), { fix_gamma: false, axis: -1 }, WRT3);
});

// Finite differences of sum(head * f(x)) for f run in predict mode, against autograd.backward with
// train_mode=False (checkGrad's backward runs in training mode, as MXNet's default).
function checkPredictMode(f, inputs, wrt, r) {
  const xs = inputs.map((s) => nd.array(Array.from(r.uniform(s.shape.reduce((a, b) => a * b, 1), s.low ?? -1, s.high ?? 1)),
    { dtype: 'float64' }).reshape(s.shape));
  for (const i of wrt) xs[i].attachGrad();
  const y = autograd.record(() => f(...xs), false);
  const head = nd.array(Array.from(r.uniform(y.size)), { dtype: 'float64' }).reshape(y.shape);
  autograd.backward([y], [head], { trainMode: false });
  const hv = head.toTypedArray();
  for (const i of wrt) {
    const base = Float64Array.from(xs[i].toTypedArray()), num = new Float64Array(base.length);
    for (let j = 0; j < base.length; j++) {
      const val = (d) => {
        const v = Float64Array.from(base);
        v[j] += d;
        const ins = xs.slice();
        ins[i] = nd.array(Array.from(v), { dtype: 'float64' }).reshape(xs[i].shape);
        const out = autograd.pause(() => f(...ins), false).toTypedArray();
        return out.reduce((s, o, k) => s + o * hv[k], 0);
      };
      num[j] = (val(1e-6) - val(-1e-6)) / 2e-6;
    }
    assertClose(xs[i].grad.toTypedArray(), num, { rtol: 1e-5, atol: 1e-7, msg: `input ${i}` });
  }
}

test('BatchNorm in inference mode: the moving statistics are constants (finite differences)', () => {
  const r = rng(31);
  checkPredictMode((x, g, b, mm, mv) => nd.BatchNorm(x, g, b, mm, mv, { fix_gamma: false }), bnInputs([3, 4, 2]), [0, 1, 2], r);
  checkPredictMode((x, g, b, mm, mv) => nd.BatchNorm(x, g, b, mm, mv, { fix_gamma: false, axis: -1 }), bnInputs([3, 2, 4], -1), [0, 1, 2], r);
});

test('BatchNorm: training mode updates the moving statistics once (in the forward), not again in backward', () => {
  const x = nd.array([[1, 2], [3, 6]], { dtype: 'float64' });
  const g = nd.array([1, 1], { dtype: 'float64' }), b = nd.array([0, 0], { dtype: 'float64' });
  const mm = nd.array([0, 0], { dtype: 'float64' }), mv = nd.array([1, 1], { dtype: 'float64' });
  x.attachGrad();
  const y = autograd.record(() => nd.BatchNorm(x, g, b, mm, mv, { momentum: 0.5 }));
  y.backward();
  // batch mean (2, 4), biased var (1, 4): m = 0.5 * 0 + 0.5 * mean, v = 0.5 * 1 + 0.5 * var
  assertClose(mm.toTypedArray(), [1, 2]);
  assertClose(mv.toTypedArray(), [1, 2.5]);
});

test('LayerNorm over the last, a middle and the first axis (finite differences)', () => {
  checkGrad('LayerNorm', [{ shape: [3, 7] }, vec(7), vec(7)], {});
  checkGrad('LayerNorm', [{ shape: [2, 3, 5] }, vec(5), vec(5)], { axis: -1, eps: 1e-3 });
  checkGrad('LayerNorm', [{ shape: [2, 4, 3] }, vec(4), vec(4)], { axis: 1 });
  checkGrad('LayerNorm', [{ shape: [5, 2, 3] }, vec(5), vec(5)], { axis: 0 });
  checkGrad((x, g, b) => nd.LayerNorm(x, g, b, { output_mean_var: true })[0], [{ shape: [3, 4] }, vec(4), vec(4)]);
});

test('InstanceNorm and GroupNorm (finite differences)', () => {
  checkGrad('InstanceNorm', [{ shape: [2, 3, 5] }, vec(3), vec(3)], {});
  checkGrad('InstanceNorm', [{ shape: [2, 2, 3, 4] }, vec(2), vec(2)], { eps: 1e-2 });
  checkGrad('GroupNorm', [{ shape: [2, 4, 3] }, vec(2), vec(2)], { num_groups: 2 });
  checkGrad('GroupNorm', [{ shape: [3, 6, 2, 2] }, vec(3), vec(3)], { num_groups: 3, eps: 1e-3 });
  checkGrad('GroupNorm', [{ shape: [2, 3, 4] }, vec(1), vec(1)], {});
});

test('L2Normalization instance / channel / spatial and LRN (finite differences)', () => {
  checkGrad('L2Normalization', [{ shape: [3, 4] }], {});
  checkGrad('L2Normalization', [{ shape: [2, 3, 4] }], { mode: 'instance' });
  checkGrad('L2Normalization', [{ shape: [2, 3, 2, 3] }], { mode: 'channel' });
  checkGrad('L2Normalization', [{ shape: [2, 3, 5] }], { mode: 'spatial', eps: 1e-3 });
  checkGrad('LRN', [{ shape: [2, 5, 3, 2] }], { nsize: 3, alpha: 0.1, beta: 0.75, knorm: 2 });
  checkGrad('LRN', [{ shape: [1, 6, 2, 3] }], { nsize: 5, alpha: 0.3, beta: 0.5, knorm: 1 });
});

// ---- TF.js ---------------------------------------------------------------------------------------
const rand = (r, shape, lo = -1, hi = 1) => ({ shape, data: r.uniform(shape.reduce((a, b) => a * b, 1), lo, hi) });

test('BatchNorm (training) and LayerNorm match TF.js gradients of the tf.moments formula', () => {
  const r = rng(32);
  { // BatchNorm over axis 1 of NCHW: moments over (0, 2, 3)
    const xs = [4, 3, 5, 6], C = 3, eps = 1e-3;
    const x = rand(r, xs), g = rand(r, [C], 0.5, 1.5), b = rand(r, [C]), dy = rand(r, xs);
    const mm = nd.zeros([C]), mv = nd.ones([C]);
    const ours = ourGrads((a, gg, bb) => nd.BatchNorm(a, gg, bb, mm, mv, { fix_gamma: false, eps }), [x, g, b], dy);
    const theirs = tfGrads((a, gg, bb) => {
      const { mean, variance } = tf.moments(a, [0, 2, 3], true);
      const xhat = tf.div(tf.sub(a, mean), tf.sqrt(tf.add(variance, eps)));
      return tf.add(tf.mul(xhat, tf.reshape(gg, [1, C, 1, 1])), tf.reshape(bb, [1, C, 1, 1]));
    }, [x, g, b], dy);
    ours.forEach((v, i) => assertClose(v, theirs[i], { rtol: 1e-3, atol: 1e-4, msg: `BatchNorm input ${i}` }));
  }
  { // LayerNorm over the last axis
    const xs = [6, 10], eps = 1e-5;
    const x = rand(r, xs), g = rand(r, [10]), b = rand(r, [10]), dy = rand(r, xs);
    const ours = ourGrads((a, gg, bb) => nd.LayerNorm(a, gg, bb, { eps }), [x, g, b], dy);
    const theirs = tfGrads((a, gg, bb) => {
      const { mean, variance } = tf.moments(a, [1], true);
      return tf.add(tf.mul(tf.div(tf.sub(a, mean), tf.sqrt(tf.add(variance, eps))), gg), bb);
    }, [x, g, b], dy);
    ours.forEach((v, i) => assertClose(v, theirs[i], { rtol: 1e-3, atol: 1e-4, msg: `LayerNorm input ${i}` }));
  }
});

test('float32 and float16 BatchNorm / LayerNorm gradients agree with float64', () => {
  const r = rng(33);
  const x = rand(r, [4, 3, 6]), dy = rand(r, [4, 3, 6]);
  // f(x, gamma, beta) with gamma/beta of length n, in `dtype` (BatchNorm's parameters are float32 for float16 data)
  const run = (dtype, n, f) => {
    const pt = dtype === 'float16' ? 'float32' : dtype;
    const xa = nd.array(Array.from(x.data), { dtype }).reshape(x.shape);
    const ga = nd.array(Array.from({ length: n }, (_, i) => 0.5 + i / n), { dtype: pt });
    const ba = nd.array(Array.from({ length: n }, (_, i) => i / n - 0.5), { dtype: pt });
    for (const a of [xa, ga, ba]) a.attachGrad();
    const y = autograd.record(() => f(xa, ga, ba, pt));
    y.backward(nd.array(Array.from(dy.data), { dtype }).reshape(dy.shape));
    return [xa, ga, ba].map((a) => Float64Array.from(a.grad.toTypedArray()));
  };
  const bn = (a, gg, bb, pt) => nd.BatchNorm(a, gg, bb, nd.zeros([3], { dtype: pt }), nd.ones([3], { dtype: pt }), { fix_gamma: false });
  const ref = run('float64', 3, bn);
  run('float32', 3, bn).forEach((v, i) => assertClose(v, ref[i], { rtol: 1e-4, atol: 1e-4, msg: `f32 BatchNorm ${i}` }));
  run('float16', 3, bn).forEach((v, i) => assertClose(v, ref[i], { rtol: 3e-2, atol: 3e-2, msg: `f16 BatchNorm ${i}` }));
  const ln = (a, gg, bb) => nd.LayerNorm(a, gg, bb);
  const lref = run('float64', 6, ln);
  run('float32', 6, ln).forEach((v, i) => assertClose(v, lref[i], { rtol: 1e-4, atol: 1e-4, msg: `f32 LayerNorm ${i}` }));
  assert.equal(lref[0].length, 72);
});

test('a hybridized Conv2D-BatchNorm-LeakyReLU-MaxPool2D net gives the imperative gradients (float32, training)', () => {
  const r = rng(34);
  const { gluon, init } = mx;
  const x = nd.array(Array.from(r.uniform(4 * 2 * 9 * 9))).reshape([4, 2, 9, 9]);
  const grads = [];
  for (const hybrid of [false, true]) {
    mx.random.seed(5);
    const net = new gluon.nn.HybridSequential();
    net.add(new gluon.nn.Conv2D(3, 3, { padding: 1 }), new gluon.nn.BatchNorm(), new gluon.nn.LeakyReLU(0.1),
      new gluon.nn.MaxPool2D(2, { strides: 2 }), new gluon.nn.GlobalAvgPool2D());
    net.initialize(new init.Xavier());
    if (hybrid) net.hybridize();
    for (let it = 0; it < 2; it++) {
      const y = autograd.record(() => net.forward(x));
      y.backward();
    }
    grads.push([...net.collectParams().values()].filter((p) => p.gradReq !== 'null' && p.grad_req !== 'null')
      .map((p) => Float64Array.from(p.grad().toTypedArray())));
  }
  assert.equal(grads[0].length, 4); // conv weight and bias, BatchNorm gamma and beta
  assert.ok(grads[0][0].some((v) => Math.abs(v) > 1e-3), 'a nonzero conv weight gradient');
  grads[0].forEach((g, i) => assertClose(grads[1][i], g, { rtol: 1e-4, atol: 1e-6, msg: `parameter ${i}` }));
});
