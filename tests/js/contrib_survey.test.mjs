// The operators the GluonCV / GluonNLP survey (docs/gluon-exports.md) found missing:
// amp_multicast and _contrib_SyncBatchNorm (csrc/ops/contrib_more.c) and
// _contrib_ModulatedDeformableConvolution (csrc/ops/contrib_dcn.c), each against a plain float64 JS
// re-computation of MXNet 1.9.1's formulas (amp_cast.h's AMPMultiCastType, sync_batch_norm-inl.h's
// forward, modulated_deformable_im2col.h's dmcn_im2col_bilinear + the convolution GEMM), TF.js's
// conv2d where DCNv2 reduces to a convolution, and gradients by finite differences. Then a graph in
// the style of GluonCV's CenterNetDecoder (heat-map NMS, top-k decode) through SymbolBlock.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose, tf } from './oracle.mjs';
import { checkGrad } from './grad_check.mjs';

const { nd, sym, gluon, autograd } = mx;
const size = (s) => s.reduce((a, b) => a * b, 1);
const arr = (data, shape, dtype = 'float32') => nd.array(Array.from(data), { dtype }).reshape(shape);
const flat = (a) => Float64Array.from(a.toTypedArray(), Number);
const isErr = (re) => (e) => e instanceof mx.MXNetError && re.test(e.message);

// ---- amp_multicast ---------------------------------------------------------------------------------
test('amp_multicast: float inputs become the widest (float32), or with cast_narrow the narrowest; others pass', () => {
  const a = arr([1.5, -2.25, 3], [3], 'float16');
  const b = arr([0.1, 0.2], [2], 'float32');
  const c = arr([7, -8], [2], 'int32');
  let [x, y, z] = nd.amp_multicast(a, b, c, { num_outputs: 3 });
  assert.deepEqual([x.dtype, y.dtype, z.dtype], ['float32', 'float32', 'int32']);
  assert.deepEqual(Array.from(x.toTypedArray()), [1.5, -2.25, 3]); // exact in float16
  assertClose(flat(y), [0.1, 0.2], { rtol: 1e-7 });
  assert.deepEqual(Array.from(z.toTypedArray()), [7, -8]);
  // cast_narrow: float16 wins over float32; 0.1 and 0.2 round to float16's 1638/16384 and 1638/8192
  [x, y] = nd.amp_multicast(a, b, { num_outputs: 2, cast_narrow: true });
  assert.deepEqual([x.dtype, y.dtype], ['float16', 'float16']);
  assertClose(flat(y), [1638 / 16384, 1638 / 8192], { rtol: 0, atol: 0 }); // spacing 2^-14, 2^-13
  // all float32: unchanged; bfloat16 with cast_narrow
  const [u, v] = nd.amp_multicast(b, b, { num_outputs: 2, cast_narrow: true });
  assert.deepEqual([u.dtype, v.dtype], ['float32', 'float32']);
  const bf = arr([1, 2], [2], 'bfloat16');
  const [p, q] = nd.amp_multicast(bf, b, { num_outputs: 2, cast_narrow: true });
  assert.deepEqual([p.dtype, q.dtype], ['bfloat16', 'bfloat16']);
  assert.deepEqual(Array.from(q.astype('float32').toTypedArray()), [0.10009765625, 0.2001953125]);
  // without cast_narrow and no float32: input 0's type (float16 stays float16)
  const r = nd.amp_multicast(a, { num_outputs: 1 }); // one output: an NDArray
  assert.equal(r.dtype, 'float16');
  assert.throws(() => nd.amp_multicast(a, b, { num_outputs: 3 }), isErr(/input|3/));
  assert.throws(() => nd.amp_multicast(a, { num_outputs: 0 }), isErr(/num_outputs/));
});

test('amp_multicast: symbol input names data_i, shapes kept, gradient cast back to each input dtype', () => {
  const s = sym.amp_multicast(sym.var('x'), sym.var('anchors'), { num_outputs: 2, name: 'mc' });
  assert.deepEqual(s.listArguments(), ['x', 'anchors']);
  const [, outShapes] = s.inferShape({ x: [2, 3, 4], anchors: [1, 3, 4] });
  assert.deepEqual(outShapes, [[2, 3, 4], [1, 3, 4]]);
  const a = arr([1, 2, 3], [3], 'float16');
  const b = arr([4, 5, 6], [3], 'float32');
  a.attach_grad();
  b.attach_grad();
  autograd.record(() => {
    const [x, y] = nd.amp_multicast(a, b, { num_outputs: 2 });
    nd.elemwise_add(nd.elemwise_mul(x, nd.array([1, 2, 3])), nd.elemwise_mul(y, nd.array([4, 5, 6]))).backward();
  });
  assert.equal(a.grad.dtype, 'float16');
  assert.equal(b.grad.dtype, 'float32');
  assert.deepEqual(Array.from(a.grad.astype('float32').toTypedArray()), [1, 2, 3]);
  assert.deepEqual(Array.from(b.grad.toTypedArray()), [4, 5, 6]);
  // float64 inputs: the identity cast, gradient by finite differences
  checkGrad('amp_multicast', [{ shape: [2, 3] }, { shape: [4] }], { num_outputs: 2 });
});

// ---- _contrib_SyncBatchNorm --------------------------------------------------------------------------
// sync_batch_norm-inl.h: inference y = gamma / sqrt(mv + eps) * x + (beta - gamma * mm / sqrt(mv + eps));
// training: batch mean and biased variance over every axis but 1; fix_gamma -> gamma = 1.
function syncBnRef(x, shape, gamma, beta, mm, mv, { eps = 1e-3, fixGamma = true, train = false } = {}) {
  const C = shape[1], N = shape[0], S = size(shape.slice(2));
  const y = new Float64Array(x.length);
  for (let c = 0; c < C; c++) {
    let mean = mm[c], v = mv[c];
    if (train) {
      let s = 0, s2 = 0;
      for (let n = 0; n < N; n++) for (let i = 0; i < S; i++) { const t = x[(n * C + c) * S + i]; s += t; s2 += t * t; }
      mean = s / (N * S);
      v = s2 / (N * S) - mean * mean;
    }
    const g = fixGamma ? 1 : gamma[c];
    for (let n = 0; n < N; n++) {
      for (let i = 0; i < S; i++) {
        const k = (n * C + c) * S + i;
        y[k] = (g * (x[k] - mean)) / Math.sqrt(v + eps) + beta[c];
      }
    }
  }
  return y;
}

test('SyncBatchNorm: inference with the moving statistics, every attribute, 2-D/3-D/4-D data', () => {
  const r = rng(11);
  for (const shape of [[2, 3], [3, 2, 5], [2, 3, 4, 5], [1, 4, 3, 2]]) {
    const C = shape[1];
    const xv = r.uniform(size(shape), -2, 2), g = r.uniform(C, 0.5, 1.5), b = r.uniform(C, -1, 1);
    const mm = r.uniform(C, -0.5, 0.5), mv = r.uniform(C, 0.2, 2);
    for (const [fixGamma, eps] of [[true, 1e-3], [false, 1e-5], [false, 0.25]]) {
      const out = nd._contrib_SyncBatchNorm(arr(xv, shape, 'float64'), arr(g, [C], 'float64'), arr(b, [C], 'float64'),
        arr(mm, [C], 'float64'), arr(mv, [C], 'float64'), { key: 'bn0_', fix_gamma: fixGamma, eps, ndev: 4 });
      assert.deepEqual(out.shape, shape);
      assertClose(flat(out), syncBnRef(xv, shape, g, b, mm, mv, { eps, fixGamma }), { rtol: 1e-12, atol: 1e-12 });
    }
  }
  // float32, defaults (eps 1e-3, fix_gamma true), output_mean_var gives three outputs
  const shape = [2, 3, 2, 2];
  const xv = r.uniform(24), g = [2, 3, 4], b = [0.5, -0.5, 1], mm = [0.1, 0.2, 0.3], mv = [1, 2, 3];
  const y = nd._contrib_SyncBatchNorm(arr(xv, shape), nd.array(g), nd.array(b), nd.array(mm), nd.array(mv), { key: 'k' });
  assertClose(flat(y), syncBnRef(xv, shape, g, b, mm, mv), { rtol: 1e-5, atol: 1e-6 });
  const outs = nd._contrib_SyncBatchNorm(arr(xv, shape), nd.array(g), nd.array(b), nd.array(mm), nd.array(mv),
    { key: 'k', output_mean_var: true });
  assert.equal(outs.length, 3);
  // key is required (MXNet's parameter has no default)
  assert.throws(() => nd._contrib_SyncBatchNorm(arr(xv, shape), nd.array(g), nd.array(b), nd.array(mm), nd.array(mv)),
    isErr(/key/));
});

test('SyncBatchNorm: training uses the batch statistics and updates the moving ones; gradient', () => {
  const r = rng(12);
  const shape = [3, 2, 3, 2], C = 2;
  const xv = r.uniform(size(shape), -1, 3), g = [1.5, 0.5], b = [0.1, -0.2];
  const mm = nd.array([0, 0], { dtype: 'float64' }), mv = nd.array([1, 1], { dtype: 'float64' });
  let y;
  autograd.record(() => {
    y = nd._contrib_SyncBatchNorm(arr(xv, shape, 'float64'), nd.array(g, { dtype: 'float64' }),
      nd.array(b, { dtype: 'float64' }), mm, mv, { key: 'k', fix_gamma: false, momentum: 0.75 });
  });
  assertClose(flat(y), syncBnRef(xv, shape, g, b, [0, 0], [1, 1], { fixGamma: false, train: true }),
    { rtol: 1e-12, atol: 1e-12 });
  // moving = moving * momentum + batch * (1 - momentum): batch mean of channel c
  const S = 6, N = 3;
  for (let c = 0; c < C; c++) {
    let s = 0;
    for (let n = 0; n < N; n++) for (let i = 0; i < S; i++) s += xv[(n * C + c) * S + i];
    assertClose([flat(mm)[c]], [0.25 * (s / (N * S))], { rtol: 1e-12, atol: 1e-14 });
  }
  // gradients (data, gamma, beta) by finite differences in training mode
  const fn = (x, gm, bt) => nd._contrib_SyncBatchNorm(x, gm, bt, nd.zeros([C], { dtype: 'float64' }),
    nd.ones([C], { dtype: 'float64' }), { key: 'k', fix_gamma: false });
  autograd.train_mode(() => checkGrad(fn, [{ shape }, { shape: [C], low: 0.5, high: 1.5 }, { shape: [C] }]));
  // by name; use_global_stats: the moving statistics are constants (fixed NDArrays here)
  const f64 = (v) => nd.array(v, { dtype: 'float64' });
  checkGrad('_contrib_SyncBatchNorm', [{ shape: [2, 3, 4] }, { shape: [3] }, { shape: [3] }, f64([0.1, -0.2, 0.3]),
    f64([0.5, 1, 2])], { key: 'k', fix_gamma: false, use_global_stats: true },
  { wrt: [0, 1, 2] }); // no gradient for the auxiliary states
});

test('SyncBatchNorm: a symbol creates moving_mean/moving_var auxiliary states; Gluon-style graph in SymbolBlock', () => {
  const s = sym._contrib_SyncBatchNorm(sym.var('data'), { key: 'net_syncbn0_', name: 'syncbn0', fix_gamma: false });
  assert.deepEqual(s.listArguments(), ['data', 'syncbn0_gamma', 'syncbn0_beta']);
  assert.deepEqual(s.listAuxiliaryStates(), ['syncbn0_moving_mean', 'syncbn0_moving_var']);
  const net = new gluon.SymbolBlock(s, [sym.var('data')]);
  const C = 3, shape = [2, C, 2, 3];
  const r = rng(13);
  const g = r.uniform(C, 0.5, 1.5), b = r.uniform(C), mm = r.uniform(C), mv = r.uniform(C, 0.5, 2);
  const params = net.collect_params();
  for (const [k, v] of [['gamma', g], ['beta', b], ['moving_mean', mm], ['moving_var', mv]]) {
    const p = params.get(`syncbn0_${k}`);
    p.initialize({ force_reinit: true });
    p.setData(nd.array(Array.from(v)));
  }
  const xv = r.uniform(size(shape));
  assertClose(flat(net.forward(arr(xv, shape))), syncBnRef(xv, shape, g, b, mm, mv, { fixGamma: false }),
    { rtol: 1e-5, atol: 1e-6 });
});

// ---- _contrib_ModulatedDeformableConvolution ------------------------------------------------------
// modulated_deformable_im2col.h: dmcn_im2col_bilinear reads 0 for neighbours outside the plane, and a
// sample at (h, w) outside (-1, H) x (-1, W) is 0; each column entry is sample * mask.
function bilinear(plane, H, W, h, w) {
  if (!(h > -1 && w > -1 && h < H && w < W)) return 0;
  const hl = Math.floor(h), wl = Math.floor(w), lh = h - hl, lw = w - wl;
  const at = (y, x) => (y >= 0 && y < H && x >= 0 && x < W ? plane[y * W + x] : 0);
  return (1 - lh) * (1 - lw) * at(hl, wl) + (1 - lh) * lw * at(hl, wl + 1) + lh * (1 - lw) * at(hl + 1, wl) +
    lh * lw * at(hl + 1, wl + 1);
}
function mdcnRef(x, [N, C, H, W], off, mask, wt, bias, p) {
  const [kh, kw] = p.kernel, [sh, sw] = p.stride ?? [1, 1], [dh, dw] = p.dilate ?? [1, 1], [ph, pw] = p.pad ?? [0, 0];
  const F = p.num_filter, G = p.num_group ?? 1, DG = p.num_deformable_group ?? 1;
  const Ho = Math.floor((H + 2 * ph - (dh * (kh - 1) + 1)) / sh) + 1;
  const Wo = Math.floor((W + 2 * pw - (dw * (kw - 1) + 1)) / sw) + 1;
  const K = kh * kw, cpg = C / G, fpg = F / G, cpdg = C / DG;
  const y = new Float64Array(N * F * Ho * Wo);
  for (let n = 0; n < N; n++) {
    for (let f = 0; f < F; f++) {
      const gr = Math.floor(f / fpg);
      for (let oy = 0; oy < Ho; oy++) {
        for (let ox = 0; ox < Wo; ox++) {
          let s = bias ? bias[f] : 0;
          for (let cc = 0; cc < cpg; cc++) {
            const c = gr * cpg + cc, dg = Math.floor(c / cpdg);
            const plane = x.subarray((n * C + c) * H * W, (n * C + c + 1) * H * W);
            for (let i = 0; i < kh; i++) {
              for (let j = 0; j < kw; j++) {
                const k = i * kw + j;
                const oi = (((n * DG + dg) * 2 * K + 2 * k) * Ho + oy) * Wo + ox;
                const h = oy * sh - ph + i * dh + off[oi], w = ox * sw - pw + j * dw + off[oi + Ho * Wo];
                const m = mask[(((n * DG + dg) * K + k) * Ho + oy) * Wo + ox];
                s += wt[((f * cpg + cc) * kh + i) * kw + j] * bilinear(plane, H, W, h, w) * m;
              }
            }
          }
          y[((n * F + f) * Ho + oy) * Wo + ox] = s;
        }
      }
    }
  }
  return { y, Ho, Wo };
}

test('ModulatedDeformableConvolution: every attribute and odd shapes vs the float64 reference', () => {
  const r = rng(21);
  const cases = [
    { shape: [1, 2, 5, 6], p: { kernel: [3, 3], num_filter: 3, pad: [1, 1] } },
    { shape: [2, 4, 7, 5],
      p: { kernel: [3, 2], num_filter: 4, stride: [2, 1], dilate: [1, 2], pad: [1, 2], num_group: 2,
        num_deformable_group: 2 } },
    { shape: [1, 3, 4, 4], p: { kernel: [1, 1], num_filter: 2, no_bias: true } },
    { shape: [3, 2, 6, 3],
      p: { kernel: [2, 3], num_filter: 2, stride: [2, 2], pad: [0, 1], num_deformable_group: 2, no_bias: true } },
  ];
  for (const { shape, p } of cases) {
    const [N, C] = shape, [kh, kw] = p.kernel, G = p.num_group ?? 1, DG = p.num_deformable_group ?? 1;
    const H = shape[2], W = shape[3], [ph, pw] = p.pad ?? [0, 0];
    const [dh, dw] = p.dilate ?? [1, 1], [sh, sw] = p.stride ?? [1, 1];
    const Ho = Math.floor((H + 2 * ph - (dh * (kh - 1) + 1)) / sh) + 1;
    const Wo = Math.floor((W + 2 * pw - (dw * (kw - 1) + 1)) / sw) + 1;
    const xv = r.uniform(size(shape), -1, 1);
    // offsets up to +-2.5 pixels push samples past the borders (the zero-padding rule)
    const ov = r.uniform(N * DG * 2 * kh * kw * Ho * Wo, -2.5, 2.5);
    const mv = r.uniform(N * DG * kh * kw * Ho * Wo, 0, 1);
    const wv = r.uniform(p.num_filter * (C / G) * kh * kw);
    const bv = p.no_bias ? null : r.uniform(p.num_filter);
    const ref = mdcnRef(xv, shape, ov, mv, wv, bv, p);
    for (const dtype of ['float64', 'float32']) {
      const ins = [arr(xv, shape, dtype), arr(ov, [N, DG * 2 * kh * kw, Ho, Wo], dtype),
        arr(mv, [N, DG * kh * kw, Ho, Wo], dtype),
        arr(wv, [p.num_filter, C / G, kh, kw], dtype)];
      if (bv) ins.push(arr(bv, [p.num_filter], dtype));
      const y = nd._contrib_ModulatedDeformableConvolution(...ins, p);
      assert.deepEqual(y.shape, [N, p.num_filter, ref.Ho, ref.Wo]);
      assertClose(flat(y), ref.y, dtype === 'float64' ? { rtol: 1e-12, atol: 1e-12 } : { rtol: 1e-4, atol: 1e-5 });
    }
  }
});

test('ModulatedDeformableConvolution: zero offsets and unit mask are a convolution (TF.js conv2d); half mask halves', () => {
  const r = rng(22);
  const [N, C, H, W, F] = [2, 3, 6, 5, 4];
  const xv = r.uniform(N * C * H * W), wv = r.uniform(F * C * 9);
  const x = arr(xv, [N, C, H, W]), w = arr(wv, [F, C, 3, 3]);
  const off = nd.zeros([N, 18, H, W]), ones = nd.ones([N, 9, H, W]);
  const attrs = { kernel: [3, 3], pad: [1, 1], num_filter: F, no_bias: true };
  const y = nd._contrib_ModulatedDeformableConvolution(x, off, ones, w, attrs);
  // TF.js: NHWC input, HWIO filter, 'same' padding for a 3x3 kernel with pad 1
  const tx = tf.tensor(xv, [N, C, H, W]).transpose([0, 2, 3, 1]);
  const tw = tf.tensor(wv, [F, C, 3, 3]).transpose([2, 3, 1, 0]);
  const ty = tf.conv2d(tx, tw, 1, 'same').transpose([0, 3, 1, 2]);
  assertClose(flat(y), ty.dataSync(), { rtol: 1e-4, atol: 1e-5 });
  const y2 = nd._contrib_ModulatedDeformableConvolution(x, off, nd.full([N, 9, H, W], 0.5), w,
    { kernel: [3, 3], pad: [1, 1], num_filter: F, no_bias: true });
  assertClose(flat(y2), Array.from(ty.dataSync(), (v) => v / 2), { rtol: 1e-4, atol: 1e-5 });
  // an integer offset of +1 row: tap i of output row y reads row y + i (pad 1 above is skipped, rows past the
  // bottom read 0), a valid convolution of the image padded with 0 rows above, 2 below, 1 column each side
  const tap = () => nd.concat(nd.ones([N, 1, H, W]), nd.zeros([N, 1, H, W]), { dim: 1 });
  const offUp = nd.concat(...Array.from({ length: 9 }, tap), { dim: 1 });
  const y3 = nd._contrib_ModulatedDeformableConvolution(x, offUp, ones, w, attrs);
  const padded = tf.tensor(xv, [N, C, H, W]).transpose([0, 2, 3, 1]).pad([[0, 0], [0, 2], [1, 1], [0, 0]]);
  const ty3 = tf.conv2d(padded, tw, 1, 'valid').transpose([0, 3, 1, 2]);
  assertClose(flat(y3), ty3.dataSync(), { rtol: 1e-4, atol: 1e-5 });
});

test('ModulatedDeformableConvolution: shape inference, symbol arguments and MXNet\'s errors', () => {
  const s = sym._contrib_ModulatedDeformableConvolution(sym.var('data'), sym.var('offset'), sym.var('mask'),
    { kernel: [3, 3], pad: [1, 1], num_filter: 8, num_deformable_group: 2, name: 'dcn' });
  assert.deepEqual(s.listArguments(), ['data', 'offset', 'mask', 'dcn_weight', 'dcn_bias']);
  const [argShapes, outShapes] = s.inferShape({ data: [2, 4, 9, 7] });
  assert.deepEqual(argShapes, [[2, 4, 9, 7], [2, 36, 9, 7], [2, 18, 9, 7], [8, 4, 3, 3], [8]]);
  assert.deepEqual(outShapes, [[2, 8, 9, 7]]);
  const x = nd.ones([1, 2, 4, 4]), w = nd.ones([2, 2, 3, 3]);
  assert.throws(() => nd._contrib_ModulatedDeformableConvolution(x, nd.zeros([1, 16, 2, 2]), nd.ones([1, 9, 2, 2]), w,
    { kernel: [3, 3], num_filter: 2, no_bias: true }), isErr(/offset/));
  assert.throws(() => nd._contrib_ModulatedDeformableConvolution(x, nd.zeros([1, 18, 3, 2]), nd.ones([1, 9, 2, 2]), w,
    { kernel: [3, 3], num_filter: 2, no_bias: true }), isErr(/offset map height/));
  assert.throws(() => nd._contrib_ModulatedDeformableConvolution(x, nd.zeros([1, 18, 2, 2]), nd.ones([1, 8, 2, 2]), w,
    { kernel: [3, 3], num_filter: 2, no_bias: true }), isErr(/mask/));
  assert.throws(() => nd._contrib_ModulatedDeformableConvolution(x, nd.zeros([1, 18, 2, 2]), nd.ones([1, 9, 2, 2]), w,
    { kernel: [3, 3, 3], num_filter: 2, no_bias: true }), isErr(/kernel/));
  assert.throws(() => nd._contrib_ModulatedDeformableConvolution(nd.ones([1, 3, 4, 4]), nd.zeros([1, 36, 2, 2]),
    nd.ones([1, 18, 2, 2]), nd.ones([2, 3, 3, 3]),
    { kernel: [3, 3], num_filter: 2, num_deformable_group: 2, no_bias: true }),
  isErr(/deformable group/));
  assert.throws(() => nd._contrib_ModulatedDeformableConvolution(nd.ones([65, 1, 3, 3]), nd.zeros([65, 2, 3, 3]),
    nd.ones([65, 1, 3, 3]), nd.ones([1, 1, 1, 1]), { kernel: [1, 1], num_filter: 1, no_bias: true }), isErr(/im2col_step/));
});

test('ModulatedDeformableConvolution: gradients of data, offset, mask, weight and bias by finite differences', () => {
  const p = { kernel: [3, 2], num_filter: 4, stride: [1, 2], pad: [1, 1], dilate: [2, 1], num_group: 2,
    num_deformable_group: 2 };
  const [N, C, H, W] = [2, 4, 5, 6];
  const Ho = Math.floor((H + 2 - 5) / 1) + 1, Wo = Math.floor((W + 2 - 2) / 2) + 1;
  // fractional offsets away from integer sample points (the interpolation is piecewise linear)
  const r = rng(23);
  const ov = Array.from(r.uniform(N * 2 * 12 * Ho * Wo, -1.5, 1.5), (v) => Math.round(v * 4) / 4 + 0.13);
  checkGrad('_contrib_ModulatedDeformableConvolution',
    [{ shape: [N, C, H, W] }, { shape: [N, 24, Ho, Wo], data: ov }, { shape: [N, 12, Ho, Wo], low: 0, high: 1 },
      { shape: [4, 2, 3, 2] }, { shape: [4] }], p, { eps: 1e-7 });
  checkGrad('_contrib_ModulatedDeformableConvolution',
    [{ shape: [1, 2, 4, 4] },
      { shape: [1, 18, 4, 4], data: Array.from(r.uniform(288, -1, 1), (v) => Math.round(v * 4) / 4 + 0.11) },
      { shape: [1, 9, 4, 4] }, { shape: [3, 2, 3, 3] }],
    { kernel: [3, 3], pad: [1, 1], num_filter: 3, no_bias: true }, { eps: 1e-7 });
});

// ---- graphs in the style of the surveyed families ---------------------------------------------------
// GluonCV's CenterNet: keep = (maxpool3x3(heat) == heat); CenterNetDecoder (gluoncv/nn/coder.py) takes
// top-k of the kept heat map over classes and pixels and reads the offsets and sizes at those pixels.
test('CenterNet-style decode graph (heat-map NMS, topk both, int64 index arithmetic, gather_nd) in SymbolBlock', () => {
  const [B, Cn, H, W, K, scale] = [2, 3, 5, 6, 7, 4];
  const heat = sym.var('heat'), whv = sym.var('wh'), regv = sym.var('reg');
  const pooled = sym.Pooling(heat, { kernel: [3, 3], stride: [1, 1], pad: [1, 1], pool_type: 'max' });
  const x = sym.broadcast_mul(sym.broadcast_equal(pooled, heat), heat);
  const [, , outH, outW] = sym.split(sym.shape_array(x), { num_outputs: 4, axis: 0 });
  const [scores, indices0] = sym.topk(sym.reshape(x, { shape: [0, -1] }), { k: K, ret_typ: 'both' });
  const indices = sym.Cast(indices0, { dtype: 'int64' });
  const hw = sym.elemwise_mul(outH, outW);
  const classes = sym.Cast(sym.broadcast_div(indices, hw), { dtype: 'float32' });
  const topkIdx = sym.broadcast_mod(indices, hw);
  const ys = sym.broadcast_div(topkIdx, outW), xs = sym.broadcast_mod(topkIdx, outW);
  const center = sym.reshape(sym.transpose(regv, { axes: [0, 2, 3, 1] }), { shape: [0, -1, 2] });
  const wh = sym.reshape(sym.transpose(whv, { axes: [0, 2, 3, 1] }), { shape: [0, -1, 2] });
  const batchRange = sym.slice_like(sym._arange({ start: 0, stop: 256 }), center, { axes: [0] });
  const batchIdx = sym.Cast(sym.tile(sym.expand_dims(batchRange,
    { axis: -1 }), { reps: [1, K] }), { dtype: 'int64' });
  const regX = sym.reshape(sym.concat(batchIdx, topkIdx, sym.zeros_like(batchIdx), { dim: 0 }), { shape: [3, -1] });
  const regY = sym.reshape(sym.concat(batchIdx, topkIdx, sym.ones_like(batchIdx), { dim: 0 }), { shape: [3, -1] });
  const gx = (src, idx) => sym.Cast(sym.reshape(sym.gather_nd(src, idx), { shape: [-1, K] }), { dtype: 'float32' });
  const cx = sym.elemwise_add(sym.Cast(xs, { dtype: 'float32' }), gx(center, regX));
  const cy = sym.elemwise_add(sym.Cast(ys, { dtype: 'float32' }), gx(center, regY));
  const hw2 = sym._mul_scalar(gx(wh, regX), { scalar: 0.5 }), hh2 = sym._mul_scalar(gx(wh, regY), { scalar: 0.5 });
  const corners = [sym.elemwise_sub(cx, hw2), sym.elemwise_sub(cy, hh2),
    sym.elemwise_add(cx, hw2), sym.elemwise_add(cy, hh2)];
  const boxes = sym.concat(...corners
    .map((t) => sym.expand_dims(t, { axis: -1 })), { dim: -1 });
  const out = sym.Group([classes, scores, sym._mul_scalar(boxes, { scalar: scale })]);
  const net = new gluon.SymbolBlock(out, [heat, whv, regv]);
  // distinct heat values so the top-k order is unique
  const r = rng(31);
  const n = B * Cn * H * W;
  const perm = Array.from({ length: n }, (_, i) => i).sort(() => r.uniform(1)[0] - 0.5);
  const hv = Float32Array.from(perm, (i) => (i + 1) / (n + 1));
  const wv = r.uniform(B * 2 * H * W, 1, 5), rv = r.uniform(B * 2 * H * W, 0, 1);
  const [gc, gs, gb] = net.forward(arr(hv, [B, Cn, H, W]), arr(wv, [B, 2, H, W]), arr(rv, [B, 2, H, W]));
  // plain JS: 3x3 max-pool NMS, top-k, decode
  const at = (b, c, y, x2) => hv[((b * Cn + c) * H + y) * W + x2];
  for (let b = 0; b < B; b++) {
    const kept = [];
    for (let c = 0; c < Cn; c++) {
      for (let y = 0; y < H; y++) {
        for (let x2 = 0; x2 < W; x2++) {
          let m = -Infinity;
          for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
            const yy = y + dy, xx = x2 + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) m = Math.max(m, at(b, c, yy, xx));
          }
          kept.push({ v: m === at(b, c, y, x2) ? at(b, c, y, x2) : 0, idx: (c * H + y) * W + x2 });
        }
      }
    }
    kept.sort((p, q) => q.v - p.v || p.idx - q.idx);
    for (let k = 0; k < K; k++) {
      const { v, idx } = kept[k];
      const cls = Math.floor(idx / (H * W)), pix = idx % (H * W), y = Math.floor(pix / W), x2 = pix % W;
      const cxr = x2 + rv[((b * 2) * H + y) * W + x2], cyr = y + rv[((b * 2 + 1) * H + y) * W + x2];
      const w2 = wv[((b * 2) * H + y) * W + x2] / 2, h2 = wv[((b * 2 + 1) * H + y) * W + x2] / 2;
      assert.equal(gc.toArray()[b][k], cls, `class ${b},${k}`);
      if (v > 0) assertClose([gs.toArray()[b][k]], [v], { rtol: 1e-6 });
      assertClose(gb.toArray()[b][k], [cxr - w2, cyr - h2, cxr + w2, cyr + h2].map((t) => t * scale),
        { rtol: 1e-5, atol: 1e-5 });
    }
  }
});

// GluonCV's YOLOOutputV3 (gluoncv/model_zoo/yolo/yolo3.py) inference decode of one scale
test('YOLOv3-style output decode graph (sigmoid/exp/anchors/offsets, slice_like, ids via arange) in SymbolBlock', () => {
  const [B, A, Cl, H, W, stride] = [1, 2, 3, 3, 4, 8];
  const P = 5 + Cl;
  const pred0 = sym.var('pred'); // the prediction conv's output (B, A * P, H, W)
  const anchors = sym.var('anchors'); // (1, 1, A, 2)
  const offsetsAll = sym.var('offsets'); // (1, 1, 8, 8, 2): GluonCV keeps a larger grid and slices it
  let pred = sym.reshape(pred0, { shape: [0, A * P, -1] });
  pred = sym.reshape(sym.transpose(pred, { axes: [0, 2, 1] }), { shape: [0, -1, A, P] });
  const rawC = sym.slice_axis(pred, { axis: -1, begin: 0, end: 2 });
  const rawS = sym.slice_axis(pred, { axis: -1, begin: 2, end: 4 });
  const obj = sym.slice_axis(pred, { axis: -1, begin: 4, end: 5 }), cls = sym.slice_axis(pred, { axis: -1, begin: 5, end: 'None' });
  const offsetsCut = sym.slice_like(offsetsAll, sym._mul_scalar(pred0, { scalar: 0 }), { axes: [2, 3] });
  const offsets = sym.reshape(offsetsCut, { shape: [1, -1, 1, 2] });
  const centers = sym._mul_scalar(sym.broadcast_add(sym.sigmoid(rawC), offsets), { scalar: stride });
  const scales = sym.broadcast_mul(sym.exp(rawS), anchors);
  const score = sym.broadcast_mul(sym.sigmoid(cls), sym.sigmoid(obj));
  const wh = sym._div_scalar(scales, { scalar: 2 });
  const bbox = sym.concat(sym.elemwise_sub(centers, wh), sym.elemwise_add(centers, wh), { dim: -1 });
  const bboxes = sym.tile(bbox, { reps: [Cl, 1, 1, 1, 1] });
  const scores = sym.expand_dims(sym.transpose(score, { axes: [3, 0, 1, 2] }), { axis: -1 });
  const classIds = sym.reshape(sym._arange({ start: 0, stop: Cl }), { shape: [0, 1, 1, 1, 1] });
  const ids = sym.broadcast_add(sym._mul_scalar(scores, { scalar: 0 }), classIds);
  const joined = sym.concat(ids, scores, bboxes, { dim: -1 });
  const det = sym.reshape(sym.transpose(joined, { axes: [1, 0, 2, 3, 4] }), { shape: [0, -1, 6] });
  const net = new gluon.SymbolBlock(det, [pred0, anchors, offsetsAll]);
  const r = rng(41);
  const pv = r.uniform(B * A * P * H * W, -2, 2), av = [10, 13, 16, 30];
  const grid = 8, ofv = [];
  for (let y = 0; y < grid; y++) for (let x = 0; x < grid; x++) ofv.push(x, y);
  const out = net.forward(arr(pv, [B, A * P, H, W]), arr(av, [1, 1, A, 2]), arr(ofv, [1, 1, grid, grid, 2]));
  assert.deepEqual(out.shape, [B, Cl * H * W * A, 6]);
  const sig = (t) => 1 / (1 + Math.exp(-t));
  const pr = (a, q, pix) => pv[(a * P + q) * H * W + pix]; // channel a * P + q at pixel pix
  const expect = [];
  for (let c = 0; c < Cl; c++) {
    for (let pix = 0; pix < H * W; pix++) {
      const y = Math.floor(pix / W), x = pix % W;
      for (let a = 0; a < A; a++) {
        const cx = (sig(pr(a, 0, pix)) + x) * stride, cy = (sig(pr(a, 1, pix)) + y) * stride;
        const w2 = (Math.exp(pr(a, 2, pix)) * av[2 * a]) / 2, h2 = (Math.exp(pr(a, 3, pix)) * av[2 * a + 1]) / 2;
        expect.push(c, sig(pr(a, 5 + c, pix)) * sig(pr(a, 4, pix)), cx - w2, cy - h2, cx + w2, cy + h2);
      }
    }
  }
  assertClose(flat(out), expect, { rtol: 1e-5, atol: 1e-5 });
});

test('an op MXNet registers without an attribute parser keeps and ignores any attribute: CenterNet\'s zeros_like(dtype=int64)', () => {
  // gluoncv/model_zoo/center_net/center_net.py's decoder writes F.zeros_like(x, dtype='int64') and
  // F.ones_like(...); MXNet stores the attribute in symbol.json and ignores it (no attr_parser), so
  // the output has the input's dtype
  const json = JSON.stringify({
    nodes: [{ op: 'null', name: 'data', inputs: [] },
      { op: 'zeros_like', name: 'z', attrs: { dtype: 'int64' }, inputs: [[0, 0, 0]] },
      { op: 'ones_like', name: 'o', attrs: { dtype: 'int64' }, inputs: [[0, 0, 0]] },
      { op: 'elemwise_add', name: 's', inputs: [[1, 0, 0], [2, 0, 0]] }],
    arg_nodes: [0], node_row_ptr: [0, 1, 2, 3, 4], heads: [[3, 0, 0]], attrs: { mxnet_version: ['int', 10500] },
  });
  const net = new gluon.SymbolBlock(sym.fromJSON(json), [sym.var('data')]);
  const y = net.forward(nd.array([[5, -2, 7]]));
  assert.equal(y.dtype, 'float32');
  assert.deepEqual(y.toArray(), [[1, 1, 1]]);
  // the attribute is kept for export, as MXNet keeps it
  assert.match(sym.fromJSON(json).tojson(), /"dtype": "int64"/);
});
