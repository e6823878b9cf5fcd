// Convolution, Deconvolution and UpSampling against TensorFlow.js's CPU kernels (an independent
// implementation) on random data: tf.conv1d / conv2d / conv3d / depthwiseConv2d /
// conv2dTranspose / image.resizeNearestNeighbor, with MXNet's NCHW layout transposed to tf's NHWC,
// symmetric padding done by tf.pad, groups by splitting channels, and the error messages. The
// channel-last layouts (NHWC, NDHWC) go to tf as they are, only the weight transposed. Few
// filters (up to 32 per group) run a direct float32 kernel: the cases below cover it and the
// im2col + GEMM path (more filters, 1x1 windows with more than 5 filters, rows under 4 wide).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';

const { nd, sym } = mx;
const tol = { rtol: 1e-4, atol: 1e-4 };
let seed = 500;
const rand = (shape) => rng(seed++).uniform(sizeOf(shape), -1, 1);
const ndarr = (data, shape, dtype) => nd.array(data, dtype ? { shape, dtype } : { shape });
const tfRun = (fn) => tf.tidy(fn).dataSync();
const fill = (n, v) => Array(n).fill(v);

// ---- oracles ----------------------------------------------------------------------------------
// Channel-first <-> channel-last permutations for 1, 2 or 3 spatial dims.
const toLast = (nsp) => [0, ...Array.from({ length: nsp }, (_, i) => i + 2), 1];
const toFirst = (nsp) => [0, nsp + 1, ...Array.from({ length: nsp }, (_, i) => i + 1)];

// MXNet Convolution via tf: data (N, C, ...) -> channel-last, zero-padded by tf.pad, weight
// (F, C/G, k...) -> (k..., C/G, F), groups by tf.split along channels, a stride together with
// a dilation (which tf does not take at once) as a stride-1 conv followed by a strided slice.
function tfConv(x, xs, w, ws, b, { stride, pad, dilate, groups = 1 }) {
  const nsp = xs.length - 2;
  stride = stride ?? fill(nsp, 1); pad = pad ?? fill(nsp, 0); dilate = dilate ?? fill(nsp, 1);
  return tfRun(() => {
    let xt = tf.transpose(tf.tensor(x, xs), toLast(nsp));
    xt = tf.pad(xt, [[0, 0], ...pad.map((p) => [p, p]), [0, 0]]);
    const wt = tf.transpose(tf.tensor(w, ws), [...Array.from({ length: nsp }, (_, i) => i + 2), 1, 0]);
    const xg = groups > 1 ? tf.split(xt, groups, nsp + 1) : [xt];
    const wg = groups > 1 ? tf.split(wt, groups, nsp + 1) : [wt];
    const both = stride.some((s) => s > 1) && dilate.some((d) => d > 1);
    const s = both ? fill(nsp, 1) : stride;
    const ys = xg.map((xi, g) => {
      if (nsp === 1) return tf.conv1d(xi, wg[g], s[0], 'valid', 'NWC', dilate[0]);
      if (nsp === 2) return tf.conv2d(xi, wg[g], s, 'valid', 'NHWC', dilate);
      return tf.conv3d(xi, wg[g], s, 'valid', 'NDHWC', dilate);
    });
    let y = ys.length > 1 ? tf.concat(ys, nsp + 1) : ys[0];
    if (both) y = tf.stridedSlice(y, fill(nsp + 2, 0), y.shape, [1, ...stride, 1]);
    if (b) y = tf.add(y, tf.tensor1d(b));
    return tf.transpose(y, toFirst(nsp));
  });
}

// Depthwise (num_group == C == num_filter) via tf.depthwiseConv2d: weight (C, 1, kh, kw) ->
// (kh, kw, C, 1).
function tfDepthwise(x, xs, w, ws, b, { stride = [1, 1], pad = [0, 0], dilate = [1, 1] }) {
  return tfRun(() => {
    let xt = tf.transpose(tf.tensor(x, xs), [0, 2, 3, 1]);
    xt = tf.pad(xt, [[0, 0], [pad[0], pad[0]], [pad[1], pad[1]], [0, 0]]);
    const wt = tf.transpose(tf.tensor(w, ws), [2, 3, 0, 1]);
    let y = tf.depthwiseConv2d(xt, wt, stride, 'valid', 'NHWC', dilate);
    if (b) y = tf.add(y, tf.tensor1d(b));
    return tf.transpose(y, [0, 3, 1, 2]);
  });
}

// A dilated kernel as an undilated one with zeros between the taps: (O, I, kh, kw) ->
// (O, I, dh*(kh-1)+1, dw*(kw-1)+1).
function dilateKernel(w, ws, [dh, dw]) {
  const [O, I, kh, kw] = ws, KH = dh * (kh - 1) + 1, KW = dw * (kw - 1) + 1;
  const out = new Float32Array(O * I * KH * KW);
  for (let o = 0; o < O * I; o++)
    for (let i = 0; i < kh; i++)
      for (let j = 0; j < kw; j++) out[(o * KH + i * dh) * KW + j * dw] = w[(o * kh + i) * kw + j];
  return [out, [O, I, KH, KW]];
}

// MXNet 2-D Deconvolution via tf.conv2dTranspose: the full ('valid') transposed convolution of
// each group, weight (C, F/G, kh, kw) -> (kh, kw, F/G, C/G), then `pad` cropped from each side
// and `adj` extra (zero-contribution) rows/columns kept at the end.
function tfDeconv2d(x, xs, w, ws, b, { stride = [1, 1], pad = [0, 0], adj = [0, 0], dilate = [1, 1], groups = 1 }) {
  const [wd, wds] = dilateKernel(w, ws, dilate);
  const [N, , H, W] = xs, [, Fg, KH, KW] = wds, F = Fg * groups;
  const fullH = (H - 1) * stride[0] + KH, fullW = (W - 1) * stride[1] + KW;
  const Ho = fullH - 2 * pad[0] + adj[0], Wo = fullW - 2 * pad[1] + adj[1];
  return tfRun(() => {
    const xt = tf.transpose(tf.tensor(x, xs), [0, 2, 3, 1]);
    const wt = tf.transpose(tf.tensor(wd, wds), [2, 3, 1, 0]);
    const xg = groups > 1 ? tf.split(xt, groups, 3) : [xt];
    const wg = groups > 1 ? tf.split(wt, groups, 3) : [wt];
    const ys = xg.map((xi, g) => tf.conv2dTranspose(xi, wg[g], [N, fullH, fullW, Fg], stride, 'valid'));
    let y = ys.length > 1 ? tf.concat(ys, 3) : ys[0];
    y = tf.pad(y, [[0, 0], [0, adj[0]], [0, adj[1]], [0, 0]]);
    y = tf.slice(y, [0, pad[0], pad[1], 0], [N, Ho, Wo, F]);
    if (b) y = tf.add(y, tf.tensor1d(b));
    return tf.transpose(y, [0, 3, 1, 2]);
  });
}

// ---- Convolution ------------------------------------------------------------------------------
const convCases = [
  // [label, data shape, num_filter, kernel, {stride, pad, dilate, num_group}, no_bias]
  ['2-D 3x3, bias', [2, 3, 7, 9], 4, [3, 3], {}, false],
  ['2-D 3x3 pad 1 (same)', [1, 5, 11, 13], 6, [3, 3], { pad: [1, 1] }, false],
  ['2-D (3, 2) stride (2, 1) pad (1, 0)', [2, 3, 11, 8], 5, [3, 2], { stride: [2, 1], pad: [1, 0] }, false],
  ['2-D 7x7 stride 2 pad 3, batch 3', [3, 3, 17, 15], 8, [7, 7], { stride: [2, 2], pad: [3, 3] }, false],
  ['2-D dilate 2 pad 2', [1, 4, 12, 10], 3, [3, 3], { pad: [2, 2], dilate: [2, 2] }, true],
  ['2-D stride 2 and dilate (2, 3)', [2, 3, 15, 16], 4, [3, 3], { stride: [2, 2], dilate: [2, 3], pad: [1, 2] }, false],
  ['2-D 1x1 (pointwise GEMM)', [2, 16, 5, 7], 12, [1, 1], {}, false],
  ['2-D 1x1 stride 2', [2, 8, 9, 7], 5, [1, 1], { stride: [2, 2] }, true],
  ['2-D groups 2', [2, 4, 9, 8], 6, [3, 3], { pad: [1, 1], num_group: 2 }, false],
  ['2-D groups 3, 1x1', [1, 6, 5, 5], 9, [1, 1], { num_group: 3 }, false],
  ['2-D depthwise multiplier 2 (groups = C, F = 2C)', [2, 3, 8, 9], 6, [3, 3], { pad: [1, 1], num_group: 3 }, false],
  ['2-D kernel = input (1x1 output)', [2, 3, 4, 5], 7, [4, 5], {}, false],
  ['2-D 64 ch, 100x100, 4 filters (direct kernel, large padded copy)', [1, 64, 100, 100], 4, [3, 3], { pad: [1, 1] }, false],
  ['2-D several column bands (32 ch, 70x70, 40 filters: im2col + GEMM)', [1, 32, 70, 70], 40, [3, 3], { pad: [1, 1] }, false],
  ['2-D LeNet conv0 (1 ch, 28x28, 5 filters 5x5), batch 4', [4, 1, 28, 28], 5, [5, 5], {}, false],
  ['2-D LeNet conv1 (5 ch, 12x12, 5 filters 5x5), batch 3', [3, 5, 12, 12], 5, [5, 5], {}, false],
  ['2-D 9 filters (blocks of 4 and 5), rows of 6 and 13', [2, 3, 8, 15], 9, [3, 3], { stride: [1, 1], pad: [0, 0] }, false],
  ['2-D 7 filters, stride 3 (phase split), rows of 5', [1, 2, 9, 14], 7, [3, 2], { stride: [2, 3], pad: [1, 1] }, true],
  ['2-D 33 filters, rows of 3 (GEMM)', [2, 3, 5, 5], 33, [3, 3], {}, false],
  ['1-D k3 stride 2 pad 1', [2, 3, 20], 4, [3], { stride: [2], pad: [1] }, false],
  ['1-D k3 dilate 2, groups 2', [2, 4, 17], 6, [3], { dilate: [2], num_group: 2 }, false],
  ['1-D 1x1', [3, 5, 9], 2, [1], {}, true],
  ['3-D (2,3,3) stride (1,2,1) pad (1,1,0)', [1, 2, 5, 6, 7], 3, [2, 3, 3], { stride: [1, 2, 1], pad: [1, 1, 0] }, false],
  ['3-D groups 2, dilate (1,2,2)', [2, 4, 4, 7, 6], 4, [2, 2, 2], { dilate: [1, 2, 2], num_group: 2 }, true],
];

for (const [label, xs, F, kernel, opts, noBias] of convCases) {
  test(`Convolution: ${label} matches tfjs`, () => {
    const G = opts.num_group ?? 1, ws = [F, xs[1] / G, ...kernel];
    const x = rand(xs), w = rand(ws), b = noBias ? null : rand([F]);
    const args = [ndarr(x, xs), ndarr(w, ws)];
    if (!noBias) args.push(ndarr(b, [F]));
    const y = nd.Convolution(...args, { kernel, num_filter: F, no_bias: noBias, ...opts });
    const want = tfConv(x, xs, w, ws, b, { ...opts, groups: G });
    const nsp = kernel.length, stride = opts.stride ?? fill(nsp, 1), pad = opts.pad ?? fill(nsp, 0);
    const dilate = opts.dilate ?? fill(nsp, 1);
    const spatial = kernel.map((k, i) => Math.floor((xs[2 + i] + 2 * pad[i] - (dilate[i] * (k - 1) + 1)) / stride[i]) + 1);
    assert.deepEqual(y.shape, [xs[0], F, ...spatial]);
    assertClose(y.toTypedArray(), want, { ...tol, msg: label });
  });
}

// num_group == C == num_filter runs the direct SIMD loop: widths around its 16- and 4-wide
// blocks, strides, dilations, non-square kernels; and the 1-D depthwise case.
const dwCases = [
  ['3x3 pad 1, width 17', [2, 8, 13, 17], [3, 3], {}, { pad: [1, 1] }],
  ['3x3 pad 1, width 7', [1, 5, 9, 7], [3, 3], {}, { pad: [1, 1] }],
  ['3x3 stride 2 pad 1, width 37', [1, 4, 21, 37], [3, 3], {}, { stride: [2, 2], pad: [1, 1] }],
  ['3x3 stride (1, 2), no pad', [2, 3, 10, 33], [3, 3], {}, { stride: [1, 2] }],
  ['5x5 pad 2 dilate 2', [1, 3, 14, 19], [5, 5], {}, { pad: [2, 2], dilate: [2, 2] }],
  ['(3, 1) kernel, stride 3', [1, 2, 12, 40], [3, 1], {}, { stride: [3, 3] }],
  ['1x1 single channel', [2, 1, 6, 6], [1, 1], {}, {}],
];
for (const [label, xs, kernel, , opts] of dwCases) {
  test(`Convolution depthwise: ${label} matches tf.depthwiseConv2d`, () => {
    const C = xs[1], ws = [C, 1, ...kernel];
    const x = rand(xs), w = rand(ws), b = rand([C]);
    const y = nd.Convolution(ndarr(x, xs), ndarr(w, ws), ndarr(b, [C]), { kernel, num_filter: C, num_group: C, ...opts });
    assertClose(y.toTypedArray(), tfDepthwise(x, xs, w, ws, b, opts), { ...tol, msg: label });
  });
}
test('Convolution depthwise 1-D (stride 2 dilate 2 is not taken by tf at once: 2 cases)', () => {
  for (const opts of [{ stride: [2], pad: [1] }, { dilate: [2], pad: [2] }]) {
    const xs = [2, 6, 23], ws = [6, 1, 3];
    const x = rand(xs), w = rand(ws), b = rand([6]);
    const y = nd._npx_convolution(ndarr(x, xs), ndarr(w, ws), ndarr(b, [6]), { kernel: [3], num_filter: 6, num_group: 6, ...opts });
    assertClose(y.toTypedArray(), tfConv(x, xs, w, ws, b, { ...opts, groups: 6 }), tol);
  }
});

test('Convolution float64 matches tfjs (float32 oracle)', () => {
  const xs = [2, 3, 9, 8], ws = [4, 3, 3, 3];
  const x = rand(xs), w = rand(ws), b = rand([4]);
  const y = nd.Convolution(ndarr(Float64Array.from(x), xs, 'float64'), ndarr(Float64Array.from(w), ws, 'float64'),
    ndarr(Float64Array.from(b), [4], 'float64'), { kernel: [3, 3], num_filter: 4, stride: [2, 1], pad: [1, 1] });
  assert.equal(y.dtype, 'float64');
  assertClose(y.toTypedArray(), tfConv(x, xs, w, ws, b, { stride: [2, 1], pad: [1, 1] }), tol);
});

test('Convolution layout NCHW is accepted; cudnn/workspace attributes are ignored', () => {
  const xs = [1, 2, 6, 6], ws = [3, 2, 3, 3];
  const x = rand(xs), w = rand(ws);
  const y = nd.Convolution(ndarr(x, xs), ndarr(w, ws), {
    kernel: [3, 3], num_filter: 3, no_bias: true, layout: 'NCHW', cudnn_tune: 'fastest', cudnn_off: true, workspace: 64,
  });
  assertClose(y.toTypedArray(), tfConv(x, xs, w, ws, null, {}), tol);
});

test('Convolution errors name the op and the problem; the next call works', () => {
  const xs = [1, 3, 5, 5], x = ndarr(rand(xs), xs);
  assert.throws(() => nd.Convolution(x, ndarr(rand([4, 2, 3, 3]), [4, 2, 3, 3]), { kernel: [3, 3], num_filter: 4, no_bias: true }),
    (e) => e instanceof mx.MXNetError && /Convolution/.test(e.message) && /weight/.test(e.message) && /\(4, 3, 3, 3\)/.test(e.message));
  assert.throws(() => nd.Convolution(x, ndarr(rand([2, 3, 9, 9]), [2, 3, 9, 9]), { kernel: [9, 9], num_filter: 2, pad: [1, 1], no_bias: true }),
    (e) => e instanceof mx.MXNetError && /Convolution/.test(e.message) && /dilated kernel \(9\) is larger than the padded input \(7\)/.test(e.message)
      && /\(1, 3, 5, 5\)/.test(e.message));
  assert.throws(() => nd.Convolution(x, ndarr(rand([2, 5, 5, 3]), [2, 5, 5, 3]), { kernel: [3, 3], num_filter: 2, layout: 'NHWC', no_bias: true }),
    (e) => e instanceof mx.MXNetError && /Convolution/.test(e.message) && /weight has shape \(2, 5, 5, 3\), expected \(2, 3, 3, 5\) = \(num_filter, kernel\.\.\., channels \/ num_group\)/.test(e.message));
  assert.throws(() => nd.Convolution(x, ndarr(rand([2, 3, 3]), [2, 3, 3]), { kernel: [3], num_filter: 2, layout: 'NHWC', no_bias: true }),
    (e) => e instanceof mx.MXNetError && /layout NHWC does not match kernel \(3,\) \(1-D: layout NCW\)/.test(e.message));
  assert.throws(() => nd.Convolution(x, ndarr(rand([2, 3, 3]), [2, 3, 3]), { kernel: [3], num_filter: 2, layout: 'NWC', no_bias: true }),
    (e) => e instanceof mx.MXNetError && /invalid value 'NWC' for attribute 'layout'/.test(e.message));
  assert.throws(() => nd.Convolution(x, ndarr(rand([4, 1, 3, 3]), [4, 1, 3, 3]), { kernel: [3, 3], num_filter: 4, num_group: 2, no_bias: true }),
    (e) => e instanceof mx.MXNetError && /3 channels, not divisible by num_group 2/.test(e.message));
  assert.throws(() => nd.Convolution(x, ndarr(rand([2, 3, 3, 3]), [2, 3, 3, 3]), { num_filter: 2, no_bias: true }),
    (e) => e instanceof mx.MXNetError && /kernel/.test(e.message));
  assert.throws(() => nd.Convolution(x, ndarr(rand([2, 3, 3]), [2, 3, 3]), { kernel: [3], num_filter: 2, no_bias: true }),
    (e) => e instanceof mx.MXNetError && /expected 3 dimensions/.test(e.message));
  const w = rand([2, 3, 3, 3]);
  const y = nd.Convolution(x, ndarr(w, [2, 3, 3, 3]), { kernel: [3, 3], num_filter: 2, no_bias: true });
  assertClose(y.toTypedArray(), tfConv(x.toTypedArray(), xs, w, [2, 3, 3, 3], null, {}), tol);
});

// ---- Deconvolution ----------------------------------------------------------------------------
const deconvCases = [
  // [label, data shape, num_filter, kernel, {stride, pad, adj, dilate, num_group}, no_bias]
  ['3x3 stride 1', [2, 3, 5, 6], 4, [3, 3], {}, true],
  ['3x3 stride 2 pad 1 adj 1, bias', [2, 4, 5, 6], 3, [3, 3], { stride: [2, 2], pad: [1, 1], adj: [1, 1] }, false],
  ['4x4 stride 2 pad 1 (2x upsampling)', [1, 5, 7, 7], 6, [4, 4], { stride: [2, 2], pad: [1, 1] }, false],
  ['(3, 2) stride (3, 1) adj (2, 0)', [1, 2, 4, 5], 3, [3, 2], { stride: [3, 1], adj: [2, 0] }, true],
  ['dilate 2', [2, 3, 4, 5], 2, [3, 3], { dilate: [2, 2], pad: [1, 1] }, false],
  ['groups 2', [2, 4, 5, 4], 6, [3, 3], { stride: [2, 2], num_group: 2 }, false],
  ['1x1 (pointwise GEMM)', [2, 6, 4, 5], 5, [1, 1], {}, false],
  ['1x1 stride 2', [1, 3, 4, 3], 2, [1, 1], { stride: [2, 2] }, true],
  ['depthwise (groups = C = F)', [2, 3, 6, 5], 3, [4, 4], { stride: [2, 2], pad: [1, 1], num_group: 3 }, false],
  ['several column bands', [1, 32, 48, 48], 64, [4, 4], { stride: [2, 2], pad: [1, 1] }, true],
];
for (const [label, xs, F, kernel, opts, noBias] of deconvCases) {
  test(`Deconvolution: ${label} matches tf.conv2dTranspose`, () => {
    const G = opts.num_group ?? 1, ws = [xs[1], F / G, ...kernel];
    const x = rand(xs), w = rand(ws), b = noBias ? null : rand([F]);
    const args = [ndarr(x, xs), ndarr(w, ws)];
    if (!noBias) args.push(ndarr(b, [F]));
    const y = nd.Deconvolution(...args, { kernel, num_filter: F, no_bias: noBias, ...opts });
    const stride = opts.stride ?? [1, 1], pad = opts.pad ?? [0, 0], adj = opts.adj ?? [0, 0], dilate = opts.dilate ?? [1, 1];
    const spatial = kernel.map((k, i) => stride[i] * (xs[2 + i] - 1) + dilate[i] * (k - 1) + 1 - 2 * pad[i] + adj[i]);
    assert.deepEqual(y.shape, [xs[0], F, ...spatial]);
    assertClose(y.toTypedArray(), tfDeconv2d(x, xs, w, ws, b, { ...opts, groups: G }), { ...tol, msg: label });
  });
}

test('Deconvolution target_shape sets the output size (pad and adj derived from it)', () => {
  // full = 2*(5-1) + 3 = 11 per axis; target (10, 9): t = 1 -> pad 1 adj 1; t = 2 -> pad 1 adj 0
  const xs = [1, 3, 5, 5], ws = [3, 2, 3, 3];
  const x = rand(xs), w = rand(ws);
  const y = nd._npx_deconvolution(ndarr(x, xs), ndarr(w, ws),
    { kernel: [3, 3], num_filter: 2, stride: [2, 2], pad: [4, 4], target_shape: [10, 9] });
  assert.deepEqual(y.shape, [1, 2, 10, 9]);
  assertClose(y.toTypedArray(), tfDeconv2d(x, xs, w, ws, null, { stride: [2, 2], pad: [1, 1], adj: [1, 0] }), tol);
});

test('Deconvolution 1-D matches tf.conv2dTranspose on a height-1 image', () => {
  const xs = [2, 3, 9], ws = [3, 4, 3];
  const x = rand(xs), w = rand(ws), b = rand([4]);
  const y = nd.Deconvolution(ndarr(x, xs), ndarr(w, ws), ndarr(b, [4]),
    { kernel: [3], num_filter: 4, stride: [2], pad: [1], adj: [1], no_bias: false });
  assert.deepEqual(y.shape, [2, 4, 18]);
  const want = tfDeconv2d(x, [2, 3, 1, 9], w, [3, 4, 1, 3], b, { stride: [1, 2], pad: [0, 1], adj: [0, 1] });
  assertClose(y.toTypedArray(), want, tol);
});

test('Deconvolution float64 matches tfjs (float32 oracle)', () => {
  const xs = [1, 2, 4, 3], ws = [2, 3, 3, 3];
  const x = rand(xs), w = rand(ws);
  const y = nd.Deconvolution(ndarr(Float64Array.from(x), xs, 'float64'), ndarr(Float64Array.from(w), ws, 'float64'),
    { kernel: [3, 3], num_filter: 3, stride: [2, 2], pad: [1, 1] });
  assert.equal(y.dtype, 'float64');
  assertClose(y.toTypedArray(), tfDeconv2d(x, xs, w, ws, null, { stride: [2, 2], pad: [1, 1] }), tol);
});

test('Deconvolution errors name the op and the problem', () => {
  const x = ndarr(rand([1, 3, 4, 4]), [1, 3, 4, 4]);
  assert.throws(() => nd.Deconvolution(x, ndarr(rand([2, 3, 3, 3]), [2, 3, 3, 3]), { kernel: [3, 3], num_filter: 3 }),
    (e) => e instanceof mx.MXNetError && /Deconvolution/.test(e.message) && /weight has shape \(2, 3, 3, 3\), expected \(3, 3, 3, 3\)/.test(e.message));
  assert.throws(() => nd.Deconvolution(x, ndarr(rand([3, 3, 3, 3]), [3, 3, 3, 3]), { kernel: [3, 3], num_filter: 3, stride: [2, 2], adj: [2, 2] }),
    (e) => e instanceof mx.MXNetError && /adj \(2, 2\) must be smaller than stride \(2, 2\)/.test(e.message));
  assert.throws(() => nd.Deconvolution(x, ndarr(rand([3, 3, 3, 3]), [3, 3, 3, 3]), { kernel: [3, 3], num_filter: 3, target_shape: [20, 20] }),
    (e) => e instanceof mx.MXNetError && /target_shape \(20, 20\) is too big/.test(e.message));
  assert.throws(() => nd.Deconvolution(x, ndarr(rand([3, 3, 3, 3]), [3, 3, 3, 3]), { kernel: [3, 3], num_filter: 3, pad: [3, 3] }),
    (e) => e instanceof mx.MXNetError && /output size -?\d+ <= 0/.test(e.message));
});

// ---- channel-last layouts -----------------------------------------------------------------------
// Convolution NHWC / NDHWC via tf with the data as it is: weight (F, k..., C/G) -> tf's (k..., C/G,
// F); padding by tf.pad, groups by tf.split (no case takes a stride and a dilation at once).
function tfConvLast(x, xs, w, ws, b, { stride, pad, dilate, groups = 1 }) {
  const nsp = xs.length - 2;
  stride = stride ?? fill(nsp, 1); pad = pad ?? fill(nsp, 0); dilate = dilate ?? fill(nsp, 1);
  return tfRun(() => {
    const xt = tf.pad(tf.tensor(x, xs), [[0, 0], ...pad.map((p) => [p, p]), [0, 0]]);
    const wt = tf.transpose(tf.tensor(w, ws), [...Array.from({ length: nsp }, (_, i) => i + 1), nsp + 1, 0]);
    const xg = groups > 1 ? tf.split(xt, groups, nsp + 1) : [xt];
    const wg = groups > 1 ? tf.split(wt, groups, nsp + 1) : [wt];
    const ys = xg.map((xi, g) => (nsp === 2 ? tf.conv2d(xi, wg[g], stride, 'valid', 'NHWC', dilate)
      : tf.conv3d(xi, wg[g], stride, 'valid', 'NDHWC', dilate)));
    const y = ys.length > 1 ? tf.concat(ys, nsp + 1) : ys[0];
    return b ? tf.add(y, tf.tensor1d(b)) : y;
  });
}

const lastCases = [
  // [label, data shape (channel-last), num_filter, kernel, {stride, pad, dilate, num_group}, no_bias]
  ['NHWC 3x3 pad 1, bias', [2, 7, 9, 3], 4, [3, 3], { pad: [1, 1] }, false],
  ['NHWC stride 2, groups 2', [2, 9, 8, 4], 6, [3, 3], { stride: [2, 2], pad: [1, 1], num_group: 2 }, false],
  ['NHWC dilate 2, 5 filters', [1, 10, 12, 3], 5, [3, 3], { dilate: [2, 2] }, true],
  ['NHWC 5x5, LeNet-like', [3, 12, 12, 5], 5, [5, 5], {}, false],
  ['NHWC 1x1, 12 filters (GEMM)', [2, 5, 6, 8], 12, [1, 1], {}, false],
  ['NHWC 3x3, 40 filters (im2col + GEMM)', [1, 6, 7, 3], 40, [3, 3], { pad: [1, 1] }, false],
  ['NHWC depthwise (groups = C = F)', [2, 6, 7, 3], 3, [3, 3], { pad: [1, 1], num_group: 3 }, false],
  ['NDHWC (2,2,3) stride (1,2,1) pad (1,0,1)', [1, 4, 5, 6, 2], 3, [2, 2, 3], { stride: [1, 2, 1], pad: [1, 0, 1] }, false],
];
for (const [label, xs, F, kernel, opts, noBias] of lastCases) {
  test(`Convolution ${label} matches tf (natively channel-last)`, () => {
    const nsp = kernel.length, G = opts.num_group ?? 1, C = xs[nsp + 1], ws = [F, ...kernel, C / G];
    const x = rand(xs), w = rand(ws), b = noBias ? null : rand([F]);
    const args = [ndarr(x, xs), ndarr(w, ws)];
    if (!noBias) args.push(ndarr(b, [F]));
    const layout = nsp === 2 ? 'NHWC' : 'NDHWC';
    const y = nd.Convolution(...args, { kernel, num_filter: F, no_bias: noBias, layout, ...opts });
    const want = tfConvLast(x, xs, w, ws, b, { ...opts, groups: G });
    const stride = opts.stride ?? fill(nsp, 1), pad = opts.pad ?? fill(nsp, 0), dilate = opts.dilate ?? fill(nsp, 1);
    const spatial = kernel.map((k, i) => Math.floor((xs[1 + i] + 2 * pad[i] - (dilate[i] * (k - 1) + 1)) / stride[i]) + 1);
    assert.deepEqual(y.shape, [xs[0], ...spatial, F]);
    assertClose(y.toTypedArray(), want, { ...tol, msg: label });
  });
}

test('Convolution NHWC float64 matches tf (float32 oracle)', () => {
  const xs = [2, 6, 5, 3], ws = [4, 3, 3, 3];
  const x = rand(xs), w = rand(ws), b = rand([4]);
  const y = nd.Convolution(ndarr(Float64Array.from(x), xs, 'float64'), ndarr(Float64Array.from(w), ws, 'float64'),
    ndarr(Float64Array.from(b), [4], 'float64'), { kernel: [3, 3], num_filter: 4, pad: [1, 1], layout: 'NHWC' });
  assert.equal(y.dtype, 'float64');
  assertClose(y.toTypedArray(), tfConvLast(x, xs, w, ws, b, { pad: [1, 1] }), tol);
});

// Deconvolution NHWC via tf.conv2dTranspose on the data as it is: weight (C, kh, kw, F/G) -> tf's
// (kh, kw, F/G, C/G) per group; pad cropped from each side, adj kept at the end.
function tfDeconvNhwc(x, xs, w, ws, b, { stride = [1, 1], pad = [0, 0], adj = [0, 0], groups = 1 }) {
  const [N, H, W] = xs, [, KH, KW, Fg] = ws, F = Fg * groups;
  const fullH = (H - 1) * stride[0] + KH, fullW = (W - 1) * stride[1] + KW;
  const Ho = fullH - 2 * pad[0] + adj[0], Wo = fullW - 2 * pad[1] + adj[1];
  return tfRun(() => {
    const xt = tf.tensor(x, xs), wt = tf.transpose(tf.tensor(w, ws), [1, 2, 3, 0]);
    const xg = groups > 1 ? tf.split(xt, groups, 3) : [xt];
    const wg = groups > 1 ? tf.split(wt, groups, 3) : [wt];
    const ys = xg.map((xi, g) => tf.conv2dTranspose(xi, wg[g], [N, fullH, fullW, Fg], stride, 'valid'));
    let y = ys.length > 1 ? tf.concat(ys, 3) : ys[0];
    y = tf.slice(tf.pad(y, [[0, 0], [0, adj[0]], [0, adj[1]], [0, 0]]), [0, pad[0], pad[1], 0], [N, Ho, Wo, F]);
    return b ? tf.add(y, tf.tensor1d(b)) : y;
  });
}

test('Deconvolution NHWC matches tf.conv2dTranspose (natively channel-last)', () => {
  for (const [xs, F, kernel, opts, noBias] of [
    [[2, 5, 6, 3], 4, [3, 3], {}, true],
    [[1, 4, 5, 4], 3, [4, 4], { stride: [2, 2], pad: [1, 1], adj: [1, 0] }, false],
    [[2, 4, 3, 4], 6, [3, 3], { stride: [2, 2], num_group: 2 }, false],
  ]) {
    const G = opts.num_group ?? 1, ws = [xs[3], ...kernel, F / G];
    const x = rand(xs), w = rand(ws), b = noBias ? null : rand([F]);
    const args = [ndarr(x, xs), ndarr(w, ws)];
    if (!noBias) args.push(ndarr(b, [F]));
    const y = nd.Deconvolution(...args, { kernel, num_filter: F, no_bias: noBias, layout: 'NHWC', ...opts });
    const stride = opts.stride ?? [1, 1], pad = opts.pad ?? [0, 0], adj = opts.adj ?? [0, 0];
    assert.deepEqual(y.shape, [xs[0], ...kernel.map((k, i) => stride[i] * (xs[1 + i] - 1) + k - 2 * pad[i] + adj[i]), F]);
    assertClose(y.toTypedArray(), tfDeconvNhwc(x, xs, w, ws, b, { ...opts, groups: G }), { ...tol, msg: `${xs}` });
  }
});

test('Convolution / Deconvolution NHWC symbols infer channel-last weight and output shapes, and keep the layout', () => {
  const c = sym.Convolution(sym.var('data'), { kernel: [3, 3], num_filter: 4, num_group: 2, layout: 'NHWC', name: 'c0' });
  const [args, outs] = c.inferShape({ data: [2, 7, 9, 6] });
  assert.deepEqual(args, [[2, 7, 9, 6], [4, 3, 3, 3], [4]]);
  assert.deepEqual(outs, [[2, 5, 7, 4]]);
  assert.equal(JSON.parse(c.tojson()).nodes.find((n) => n.op === 'Convolution').attrs.layout, 'NHWC');
  const d = sym.Deconvolution(sym.var('data'), { kernel: [2, 2, 2], stride: [2, 2, 2], num_filter: 5, layout: 'NDHWC', name: 'd0' });
  const [dargs, douts] = d.inferShape({ data: [1, 2, 3, 4, 6] });
  assert.deepEqual(dargs, [[1, 2, 3, 4, 6], [6, 2, 2, 2, 5]]);
  assert.deepEqual(douts, [[1, 4, 6, 8, 5]]);
});

// ---- UpSampling -------------------------------------------------------------------------------
const resizeNearest = (t, h, w) => tf.transpose(tf.image.resizeNearestNeighbor(tf.transpose(t, [0, 2, 3, 1]), [h, w]), [0, 3, 1, 2]);

test('UpSampling nearest scale 2 matches tf.image.resizeNearestNeighbor', () => {
  const xs = [2, 3, 5, 7], x = rand(xs);
  const y = nd.UpSampling(ndarr(x, xs), { scale: 2, sample_type: 'nearest' });
  assert.deepEqual(y.shape, [2, 3, 10, 14]);
  assertClose(y.toTypedArray(), tfRun(() => resizeNearest(tf.tensor(x, xs), 10, 14)), { rtol: 0, atol: 0 });
});

test('UpSampling nearest, hand-worked scale 3', () => {
  const y = nd.UpSampling(ndarr([1, 2, 3, 4], [1, 1, 2, 2]), { scale: 3, sample_type: 'nearest', num_args: 1 });
  const r0 = [1, 1, 1, 2, 2, 2], r1 = [3, 3, 3, 4, 4, 4];
  assert.deepEqual(Array.from(y.toTypedArray()), [...r0, ...r0, ...r0, ...r1, ...r1, ...r1]);
});

test('UpSampling nearest with two inputs: concat and sum', () => {
  // output 8x12 from input 0 (4x6, scale 2); input 1 (2x3) is upsampled by 4
  const s0 = [2, 3, 4, 6], s1 = [2, 3, 2, 3], a = rand(s0), b = rand(s1);
  const cat = nd.UpSampling(ndarr(a, s0), ndarr(b, s1), { scale: 2, sample_type: 'nearest' });
  assert.deepEqual(cat.shape, [2, 6, 8, 12]);
  assertClose(cat.toTypedArray(), tfRun(() => tf.concat([resizeNearest(tf.tensor(a, s0), 8, 12), resizeNearest(tf.tensor(b, s1), 8, 12)], 1)), tol);
  const sum = nd.UpSampling(ndarr(a, s0), ndarr(b, s1), { scale: 2, sample_type: 'nearest', multi_input_mode: 'sum' });
  assert.deepEqual(sum.shape, [2, 3, 8, 12]);
  assertClose(sum.toTypedArray(), tfRun(() => tf.add(resizeNearest(tf.tensor(a, s0), 8, 12), resizeNearest(tf.tensor(b, s1), 8, 12))), tol);
  assert.throws(() => nd.UpSampling(ndarr(a, s0), ndarr(rand([2, 2, 2, 3]), [2, 2, 2, 3]), { scale: 2, sample_type: 'nearest', multi_input_mode: 'sum' }),
    (e) => e instanceof mx.MXNetError && /UpSampling/.test(e.message) && /different channels/.test(e.message));
});

test('UpSampling nearest keeps integer dtypes', () => {
  const y = nd.UpSampling(ndarr(Int32Array.from([5, -7]), [1, 1, 1, 2], 'int32'), { scale: 2, sample_type: 'nearest' });
  assert.equal(y.dtype, 'int32');
  assert.deepEqual(Array.from(y.toTypedArray()), [5, 5, -7, -7, 5, 5, -7, -7]);
});

// bilinear = depthwise deconvolution with kernel 2s - s%2, stride s, pad ceil((s-1)/2); the
// oracle is that conv2dTranspose done per channel by tf.
for (const scale of [2, 3, 4]) {
  test(`UpSampling bilinear scale ${scale} matches a per-channel tf.conv2dTranspose`, () => {
    const C = 3, xs = [2, C, 5, 4], k = 2 * scale - (scale % 2), pad = Math.ceil((scale - 1) / 2), ws = [C, 1, k, k];
    const x = rand(xs), w = rand(ws);
    const y = nd.UpSampling(ndarr(x, xs), ndarr(w, ws), { scale, sample_type: 'bilinear', num_filter: C });
    assert.deepEqual(y.shape, [2, C, 5 * scale, 4 * scale]);
    assertClose(y.toTypedArray(), tfDeconv2d(x, xs, w, ws, null, { stride: [scale, scale], pad: [pad, pad], groups: C }), tol);
  });
}

test('UpSampling bilinear errors: wrong weight shape, num_filter != channels', () => {
  const x = ndarr(rand([1, 2, 3, 3]), [1, 2, 3, 3]);
  assert.throws(() => nd.UpSampling(x, ndarr(rand([2, 1, 3, 3]), [2, 1, 3, 3]), { scale: 2, sample_type: 'bilinear', num_filter: 2 }),
    (e) => e instanceof mx.MXNetError && /UpSampling/.test(e.message) && /weight has shape \(2, 1, 3, 3\), expected \(2, 1, 4, 4\)/.test(e.message));
  assert.throws(() => nd.UpSampling(x, ndarr(rand([2, 1, 4, 4]), [2, 1, 4, 4]), { scale: 2, sample_type: 'bilinear', num_filter: 3 }),
    (e) => e instanceof mx.MXNetError && /num_filter \(3\) must equal the number of channels/.test(e.message));
});

test('UpSampling bilinear: a composed weight variable gets the bilinear initializer', () => {
  const s = sym.UpSampling(sym.var('data'), sym.var('up_weight'), { sample_type: 'bilinear', scale: 2, num_filter: 3 });
  const nodes = JSON.parse(s.tojson()).nodes;
  const wNode = nodes.find((n) => n.name === 'up_weight');
  assert.equal(wNode.attrs.__init__, '["bilinear", {}]');
  assert.equal(nodes.find((n) => n.name === 'data').attrs?.__init__, undefined);
});

test('Convolution and Deconvolution symbols create weight and bias variables; no_bias drops bias', () => {
  const c = sym.Convolution(sym.var('data'), { kernel: [3, 3], num_filter: 4, name: 'c0' });
  assert.deepEqual(c.listArguments(), ['data', 'c0_weight', 'c0_bias']);
  const d = sym.Deconvolution(sym.var('data'), { kernel: [3, 3], num_filter: 4, name: 'd0' });
  assert.deepEqual(d.listArguments(), ['data', 'd0_weight']);
});

test('float16 and bfloat16 Convolution / Deconvolution compute in float32 and round once (vs tfjs on the rounded inputs)', () => {
  const r = rng(77);
  const xs = r.uniform(2 * 3 * 9 * 9, -1, 1), ws = r.uniform(4 * 3 * 3 * 3, -0.5, 0.5), bs = r.uniform(4, -0.1, 0.1);
  for (const dtype of ['float16', 'bfloat16']) {
    const x = nd.array(xs, { shape: [2, 3, 9, 9], dtype }), w = nd.array(ws, { shape: [4, 3, 3, 3], dtype });
    const b = nd.array(bs, { shape: [4], dtype });
    const y = nd.Convolution(x, w, b, { kernel: [3, 3], num_filter: 4, pad: [1, 1] });
    assert.equal(y.dtype, dtype);
    // reference: the same (already rounded) values in float32 through tfjs, then compared at the
    // output dtype's precision (one rounding: 2^-11 relative for float16, 2^-8 for bfloat16)
    const xr = x.astype('float32').toTypedArray(), wr = w.astype('float32').toTypedArray(), br = b.astype('float32').toTypedArray();
    const ref = tf.tidy(() => tf.transpose(tf.add(tf.conv2d(tf.transpose(tf.tensor(xr, [2, 3, 9, 9]), [0, 2, 3, 1]),
      tf.transpose(tf.tensor(wr, [4, 3, 3, 3]), [2, 3, 1, 0]), 1, [[0, 0], [1, 1], [1, 1], [0, 0]]), tf.tensor(br)), [0, 3, 1, 2]).dataSync());
    const eps = dtype === 'float16' ? 2 ** -11 : 2 ** -8;
    assertClose(y.astype('float32').toTypedArray(), ref, { rtol: eps, atol: 1e-3, msg: dtype });
    const d = nd.Deconvolution(y, nd.array(ws, { shape: [4, 3, 3, 3], dtype }), { kernel: [3, 3], num_filter: 3, stride: [2, 2] });
    assert.equal(d.dtype, dtype);
    assert.deepEqual(d.shape, [2, 3, 19, 19]);
  }
});
