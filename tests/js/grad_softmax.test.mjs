// Gradients of the softmax family: softmax / log_softmax (axis, temperature, dtype, use_length) and
// SoftmaxActivation against float64 finite differences and TF.js's tf.grads; the output layers
// (SoftmaxOutput, Linear/MAE/LogisticRegressionOutput), whose MXNet gradient is the loss's
// gradient and ignores the head gradient, against float64 JS re-computations of MXNet's formulas
// (softmax_output-inl.h, regression_output-inl.h) and TF.js's softmax / sigmoid cross-entropy.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assert, assertClose, rng, tf, nd, autograd } from './grad_check.mjs';

test('softmax and log_softmax: axes, temperature, dtype: finite differences (float64)', () => {
  for (const op of ['softmax', 'log_softmax']) {
    for (const attrs of [{}, { axis: 0 }, { axis: 1 }, { axis: -1, temperature: 2.5 }, { axis: 1, temperature: 0.7 }]) {
      checkGrad(op, [{ shape: [3, 4, 5], low: -2, high: 2 }], attrs);
    }
    checkGrad(op, [{ shape: [7] }]);
    checkGrad(op, [{ shape: [2, 67], low: -3, high: 3 }]); // long rows: the SIMD row path and its tail
    checkGrad(op, [{ shape: [3, 70, 2] }], { axis: 1 }); // strided lines, more than one block of lanes
    // dtype given: the data is passed to the backward for dx's dtype
    checkGrad(op, [{ shape: [3, 4] }], { dtype: 'float64' });
    // float32 data, float64 output: dx comes back float32 (float32 finite differences, looser tolerance)
    checkGrad(op, [{ shape: [3, 4] }], { dtype: 'float64' }, { dtype: 'float32', rtol: 2e-2, atol: 2e-3 });
  }
  checkGrad('_npx_softmax', [{ shape: [2, 3] }], { axis: 0 });
  checkGrad('_npx_log_softmax', [{ shape: [2, 3] }], { axis: 0 });
});

test('softmax / log_softmax with use_length: entries past the length get 0, the length none', () => {
  for (const op of ['softmax', 'log_softmax']) {
    const len = nd.array([2, 5, 1, 4], { dtype: 'int32' });
    const { analytic } = checkGrad(op, [{ shape: [4, 5] }, len], { use_length: true, axis: -1 });
    for (let r = 0; r < 4; r++) for (let j = [2, 5, 1, 4][r]; j < 5; j++) assert.equal(analytic[0][r * 5 + j], 0);
    // axis 0 with a (3, 2) length: strided lines
    checkGrad(op, [{ shape: [5, 3, 2] }, nd.array([[1, 5], [3, 0], [5, 2]], { dtype: 'int32' })], { use_length: true, axis: 0 });
    checkGrad(op, [{ shape: [4, 5] }, len], { use_length: true, temperature: 3 }, { dtype: 'float32', rtol: 2e-2, atol: 2e-3 });
  }
  const x = nd.array([[1, 2, 3], [4, 5, 6]], { dtype: 'float64' }), len = nd.array([2, 3], { dtype: 'float64' });
  x.attachGrad();
  len.attachGrad();
  autograd.record(() => nd.softmax(x, len, { use_length: true })).backward();
  // the head gradient is all ones: softmax's rows sum to 1, so the gradient is 0 everywhere
  assertClose(x.grad.toTypedArray(), [0, 0, 0, 0, 0, 0], { atol: 1e-15 });
  assertClose(len.grad.toTypedArray(), [0, 0]);
});

test('SoftmaxActivation (instance and channel): finite differences (float64)', () => {
  checkGrad('SoftmaxActivation', [{ shape: [3, 6] }]);
  checkGrad('SoftmaxActivation', [{ shape: [2, 3, 4] }], { mode: 'instance' });
  checkGrad('SoftmaxActivation', [{ shape: [2, 3, 4, 2] }], { mode: 'channel' });
});

test('the softmax backward kernels on a hand-worked row', () => {
  // y = softmax([0, ln 3]) = [1/4, 3/4], g = [1, 2]: s = 1/4 + 3/2 = 7/4; dx = y (g - s) = [-3/16, 3/16]
  const y = nd.array([[0.25, 0.75]]), g = nd.array([[1, 2]]);
  assertClose(nd._backward_softmax(g, y).toTypedArray(), [-3 / 16, 3 / 16]);
  assertClose(nd._backward_SoftmaxActivation(g, y).toTypedArray(), [-3 / 16, 3 / 16]);
  // log_softmax: y = log([1/4, 3/4]), dx = g - exp(y) sum(g) = [1 - 3/4, 2 - 9/4]; T = 2 halves it
  const ly = nd.array([[Math.log(0.25), Math.log(0.75)]]);
  assertClose(nd._backward_log_softmax(g, ly).toTypedArray(), [0.25, -0.25], { rtol: 1e-6 });
  assertClose(nd._backward_log_softmax(g, ly, { temperature: 2 }).toTypedArray(), [0.125, -0.125], { rtol: 1e-6 });
});

test('softmax, log_softmax and SoftmaxActivation match TF.js gradients', () => {
  const r = rng(17);
  const x = { shape: [4, 7], data: r.uniform(28, -2, 2) }, dy = { shape: [4, 7], data: r.uniform(28) };
  const pairs = [
    [(t) => nd.softmax(t), (t) => tf.softmax(t)],
    [(t) => nd.log_softmax(t), (t) => tf.logSoftmax(t)],
    [(t) => nd.softmax(t, { temperature: 2 }), (t) => tf.softmax(tf.div(t, 2))],
    [(t) => nd.log_softmax(t, { temperature: 0.5 }), (t) => tf.logSoftmax(tf.div(t, 0.5))],
    [(t) => nd.SoftmaxActivation(t), (t) => tf.softmax(t)],
    // axis 0: TF.js's softmax works on the last axis, so transpose around it
    [(t) => nd.softmax(t, { axis: 0 }), (t) => tf.transpose(tf.softmax(tf.transpose(t)))],
    [(t) => nd.log_softmax(t, { axis: 0 }), (t) => tf.transpose(tf.logSoftmax(tf.transpose(t)))],
  ];
  for (const [o, t] of pairs) {
    const got = ourGrads(o, [x], dy), want = tfGrads(t, [x], dy);
    assertClose(got[0], want[0], { rtol: 1e-4, atol: 1e-6, msg: String(o) });
  }
  // channel mode on (N, C, H, W) = softmax over axis 1
  const x4 = { shape: [2, 3, 2, 2], data: r.uniform(24, -2, 2) }, dy4 = { shape: [2, 3, 2, 2], data: r.uniform(24) };
  const got = ourGrads((t) => nd.SoftmaxActivation(t, { mode: 'channel' }), [x4], dy4);
  const want = tfGrads((t) => tf.transpose(tf.softmax(tf.transpose(t, [0, 2, 3, 1])), [0, 3, 1, 2]), [x4], dy4);
  assertClose(got[0], want[0], { rtol: 1e-4, atol: 1e-6 });
});

// ---- output layers -------------------------------------------------------------------------------
const softmaxRows = (x, rows, C, inner = 1) => {
  const y = new Float64Array(x.length);
  for (let o = 0; o < rows; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (j) => (o * C + j) * inner + i;
      let m = -Infinity, s = 0;
      for (let j = 0; j < C; j++) m = Math.max(m, x[at(j)]);
      for (let j = 0; j < C; j++) s += Math.exp(x[at(j)] - m);
      for (let j = 0; j < C; j++) y[at(j)] = Math.exp(x[at(j)] - m) / s;
    }
  }
  return y;
};

// MXNet's SoftmaxOutput gradient recomputed: (y - onehot) * scale, ignored rows 0, smoothing.
function softmaxOutputGrad(x, labels, { rows, C, inner = 1, multi = false, gradScale = 1, useIgnore = false,
  ignore = -1, norm = 'null', alpha = 0 }) {
  const y = softmaxRows(x, rows, C, inner);
  let valid;
  if (norm === 'batch') valid = multi ? rows : labels.length; // the label's first dim (viewed as 1-D unless multi)
  else if (norm === 'valid') valid = Math.max(1, labels.filter((l) => Math.trunc(l) !== Math.trunc(ignore)).length);
  else valid = 1;
  const scale = multi ? gradScale / (norm === 'valid' ? 1 : inner) / valid : gradScale / valid;
  const dx = new Float64Array(x.length);
  for (let o = 0; o < rows; o++) {
    for (let i = 0; i < inner; i++) {
      const k = Math.trunc(labels[o * inner + i]);
      if (useIgnore && k === Math.trunc(ignore)) continue;
      for (let j = 0; j < C; j++) {
        const at = (o * C + j) * inner + i;
        const target = j === k ? 1 - alpha : alpha / (C - 1);
        dx[at] = (y[at] - target) * scale;
      }
    }
  }
  return dx;
}

function softmaxOutputBackward(shape, xData, labelShape, labels, attrs, head) {
  const x = nd.array(Array.from(xData), { dtype: 'float64' }).reshape(shape);
  const label = nd.array(labels, { dtype: 'float64' }).reshape(labelShape);
  x.attachGrad();
  const y = autograd.record(() => nd.SoftmaxOutput(x, label, attrs));
  y.backward(head ? nd.array(head, { dtype: 'float64' }).reshape(shape) : undefined);
  return x.grad.toTypedArray();
}

test('SoftmaxOutput: y - onehot(label), grad_scale, use_ignore, normalization, smoothing; the head gradient is ignored', () => {
  const r = rng(8);
  const x = Array.from(r.uniform(15, -2, 2));
  const labels = [2, 0, 4];
  const randomHead = Array.from(r.uniform(15, -3, 3));
  const base = { rows: 3, C: 5 };
  const cases = [
    [{}, {}],
    [{ grad_scale: 2.5 }, { gradScale: 2.5 }],
    [{ normalization: 'batch' }, { norm: 'batch' }],
    [{ use_ignore: true, ignore_label: 0 }, { useIgnore: true, ignore: 0 }],
    [{ use_ignore: true, ignore_label: 0, normalization: 'valid' }, { useIgnore: true, ignore: 0, norm: 'valid' }],
    // 'valid' counts non-ignored labels even without use_ignore (as MXNet)
    [{ ignore_label: 4, normalization: 'valid', grad_scale: 3 }, { ignore: 4, norm: 'valid', gradScale: 3 }],
    [{ smooth_alpha: 0.1 }, { alpha: Math.fround(0.1) }],
    [{ smooth_alpha: 0.2, use_ignore: true, ignore_label: 2 }, { alpha: Math.fround(0.2), useIgnore: true, ignore: 2 }],
  ];
  for (const [attrs, opts] of cases) {
    const want = softmaxOutputGrad(x, labels, { ...base, ...opts });
    assertClose(softmaxOutputBackward([3, 5], x, [3], labels, attrs), want, { rtol: 1e-6, atol: 1e-7, msg: JSON.stringify(attrs) });
    assertClose(softmaxOutputBackward([3, 5], x, [3], labels, attrs, randomHead), want, { rtol: 1e-6, atol: 1e-7 });
  }
  // (N, d1, d2) flattened to (N, d1 * d2) rows; preserve_shape: rows over the leading axes
  const x3 = Array.from(r.uniform(24, -2, 2));
  // (MXNet's label there is (2, 3); the two rows read its first two entries, 'batch' counts all six)
  for (const [attrs, opts] of [[{}, {}], [{ normalization: 'batch' }, { norm: 'batch' }]]) {
    assertClose(softmaxOutputBackward([2, 3, 4], x3, [2, 3], [5, 11, 0, 1, 2, 3], attrs),
      softmaxOutputGrad(x3, [5, 11, 0, 1, 2, 3], { rows: 2, C: 12, ...opts }), { rtol: 1e-6 });
  }
  assertClose(softmaxOutputBackward([2, 3, 4], x3, [2, 3], [0, 3, 1, 2, 2, 0], { preserve_shape: true, normalization: 'batch' }),
    softmaxOutputGrad(x3, [0, 3, 1, 2, 2, 0], { rows: 6, C: 4, norm: 'batch' }), { rtol: 1e-6 });
  // multi_output: (N, C, R) = (2, 3, 4) with (N, R) labels; 'null' divides by R too
  const lm = [0, 2, 1, 2, 1, 1, 0, 2];
  for (const [attrs, opts] of [[{}, {}], [{ normalization: 'batch', grad_scale: 2 }, { norm: 'batch', gradScale: 2 }],
    [{ use_ignore: true, ignore_label: 1, normalization: 'valid' }, { useIgnore: true, ignore: 1, norm: 'valid' }]]) {
    const want = softmaxOutputGrad(x3, lm, { rows: 2, C: 3, inner: 4, multi: true, ...opts });
    assertClose(softmaxOutputBackward([2, 3, 4], x3, [2, 4], lm, { multi_output: true, ...attrs }), want, { rtol: 1e-6, msg: 'multi' });
    // the (N, 1, R) label form
    assertClose(softmaxOutputBackward([2, 3, 4], x3, [2, 1, 4], lm, { multi_output: true, ...attrs }), want, { rtol: 1e-6 });
  }
  // a probability label of the data's shape: (y - label) * grad_scale, no normalisation
  const p = Array.from(r.uniform(15, 0, 1));
  const y = softmaxRows(x, 3, 5);
  assertClose(softmaxOutputBackward([3, 5], x, [3, 5], p, { grad_scale: 0.5, normalization: 'batch' }),
    y.map((v, i) => (v - p[i]) * 0.5), { rtol: 1e-6 });
  // out_grad multiplies by the head gradient
  assertClose(softmaxOutputBackward([3, 5], x, [3], labels, { out_grad: true }, randomHead),
    softmaxOutputGrad(x, labels, base).map((v, i) => v * randomHead[i]), { rtol: 1e-6 });
  // the kernel itself; `Softmax` is the deprecated alias
  const yv = nd.array(Array.from(y), { dtype: 'float64' }).reshape([3, 5]);
  assertClose(nd._backward_SoftmaxOutput(yv, nd.array(labels, { dtype: 'float64' })).toTypedArray(),
    softmaxOutputGrad(x, labels, base), { rtol: 1e-12 });
  const xa = nd.array(x, { dtype: 'float64' }).reshape([3, 5]);
  xa.attachGrad();
  autograd.record(() => nd.Softmax(xa, nd.array(labels, { dtype: 'float64' }))).backward();
  assertClose(xa.grad.toTypedArray(), softmaxOutputGrad(x, labels, base), { rtol: 1e-12 });
});

test('SoftmaxOutput matches TF.js\'s softmax cross-entropy gradient', () => {
  const r = rng(12);
  const x = { shape: [4, 6], data: r.uniform(24, -2, 2) };
  const labels = [5, 0, 3, 3];
  const onehot = tf.oneHot(tf.tensor1d(labels, 'int32'), 6);
  const got = ourGrads((t) => nd.SoftmaxOutput(t, nd.array(labels)), [x], { shape: [4, 6], data: r.uniform(24) });
  const want = tfGrads((t) => tf.losses.softmaxCrossEntropy(onehot, t, undefined, 0, tf.Reduction.SUM), [x]);
  assertClose(got[0], want[0], { rtol: 1e-4, atol: 1e-6 });
  // normalization 'batch' is the mean over the batch
  const gotb = ourGrads((t) => nd.SoftmaxOutput(t, nd.array(labels), { normalization: 'batch' }), [x]);
  const wantb = tfGrads((t) => tf.div(tf.losses.softmaxCrossEntropy(onehot, t, undefined, 0, tf.Reduction.SUM), 4), [x]);
  assertClose(gotb[0], wantb[0], { rtol: 1e-4, atol: 1e-6 });
  onehot.dispose();
});

test('Linear/MAE/LogisticRegressionOutput: (y - label) * grad_scale / num_output, the head gradient ignored', () => {
  const r = rng(13);
  const x = Array.from(r.uniform(12, -2, 2)), l = Array.from(r.uniform(12, -2, 2));
  const sig = (v) => 1 / (1 + Math.exp(-v));
  const run = (op, shape, lshape, attrs, head) => {
    const X = nd.array(x, { dtype: 'float64' }).reshape(shape);
    X.attachGrad();
    const y = autograd.record(() => nd[op](X, nd.array(l, { dtype: 'float64' }).reshape(lshape), attrs));
    y.backward(head ? nd.array(head, { dtype: 'float64' }).reshape(shape) : undefined);
    return X.grad.toTypedArray();
  };
  const head = Array.from(r.uniform(12, -5, 5));
  for (const [shape, lshape, numOut] of [[[3, 4], [3, 4], 4], [[12, 1], [12], 1], [[2, 3, 2], [2, 3, 2], 6]]) {
    for (const gs of [1, 0.5]) {
      const attrs = gs === 1 ? {} : { grad_scale: gs };
      assertClose(run('LinearRegressionOutput', shape, lshape, attrs, head), x.map((v, i) => ((v - l[i]) * gs) / numOut), { rtol: 1e-12 });
      assertClose(run('MAERegressionOutput', shape, lshape, attrs), x.map((v, i) => ((v - l[i] > 0 ? 1 : -1) * gs) / numOut), { rtol: 1e-12 });
      assertClose(run('LogisticRegressionOutput', shape, lshape, attrs, head), x.map((v, i) => ((sig(v) - l[i]) * gs) / numOut), { rtol: 1e-12 });
    }
  }
  // MAE at y == label: MXNet's minus_sign gives -1
  assertClose(nd._backward_mae_reg_out(nd.array([1, 2]), nd.array([1, 3])).toTypedArray(), [-1, 1]);
  assertClose(nd._backward_linear_reg_out(nd.array([[1], [2]]), nd.array([[4], [0]]), { grad_scale: 2 }).toTypedArray(), [6, -4]);
  assertClose(nd._backward_logistic_reg_out(nd.array([1, 0]), nd.array([0.25, 0.5])).toTypedArray(), [-0.75, 0.5]);
});

test('regression outputs match TF.js loss gradients', () => {
  const r = rng(14);
  const x = { shape: [4, 3], data: r.uniform(12, -2, 2) }, lab = Array.from(r.uniform(12, 0.1, 0.9));
  const L = () => tf.tensor(lab, [4, 3]);
  const label = () => nd.array(lab).reshape([4, 3]);
  const pairs = [
    // 1/2 sum (x - l)^2 / num_output
    [(t) => nd.LinearRegressionOutput(t, label()), (t) => tf.div(tf.mul(0.5, tf.sum(tf.squaredDifference(t, L()))), 3)],
    [(t) => nd.MAERegressionOutput(t, label()), (t) => tf.div(tf.sum(tf.abs(tf.sub(t, L()))), 3)],
    [(t) => nd.LogisticRegressionOutput(t, label()), (t) => tf.div(tf.losses.sigmoidCrossEntropy(L(), t, undefined, 0, tf.Reduction.SUM), 3)],
  ];
  for (const [o, t] of pairs) {
    const got = ourGrads(o, [x]), want = tfGrads(t, [x]);
    assertClose(got[0], want[0], { rtol: 1e-4, atol: 1e-6 });
  }
});
