// Sampling-grid operators (csrc/ops/spatial.c) against MXNet 1.9.1's unit tests (test_operator.py:
// test_grid_generator, test_stn, test_deformable_convolution's shapes), the BilinearSampler
// examples of its documentation, float64 JS rewrites of the documented formulas (normalised grids,
// bilinear sampling with zero padding, deformable convolution's offset sampling), tf.conv2d for a
// deformable convolution whose offsets are zero, and gradients by finite differences.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose, oracle } from './oracle.mjs';
import { checkGrad } from './grad_check.mjs';

const { nd, sym, autograd } = mx;
const size = (s) => s.reduce((a, b) => a * b, 1);
const arr = (data, shape, dtype = 'float32') => nd.array(Array.from(data), { dtype }).reshape(shape);
const flat = (a) => Float64Array.from(a.toTypedArray(), Number);
const isErr = (re) => (e) => e instanceof mx.MXNetError && re.test(e.message);

// ---- references -------------------------------------------------------------------------------------
// the target grid of an affine GridGenerator: x = -1 + 2 w / (W - 1), y = -1 + 2 h / (H - 1)
const affineGrid = (theta, N, H, W) => {
  const g = new Float64Array(N * 2 * H * W);
  for (let n = 0; n < N; n++) {
    for (let h = 0; h < H; h++) {
      for (let w = 0; w < W; w++) {
        const x = -1 + (2 * w) / (W - 1), y = -1 + (2 * h) / (H - 1);
        for (let k = 0; k < 2; k++) {
          const t = theta.slice(n * 6 + 3 * k, n * 6 + 3 * k + 3);
          g[((n * 2 + k) * H + h) * W + w] = t[0] * x + t[1] * y + t[2];
        }
      }
    }
  }
  return g;
};
// bilinear sampling at normalised points: source (x + 1) (IW - 1) / 2, zero outside the image
function sampleRef(data, [N, C, IH, IW], grid, OH, OW) {
  const out = new Float64Array(N * C * OH * OW);
  for (let n = 0; n < N; n++) {
    for (let i = 0; i < OH * OW; i++) {
      const gx = grid[n * 2 * OH * OW + i], gy = grid[n * 2 * OH * OW + OH * OW + i];
      const x = ((gx + 1) * (IW - 1)) / 2, y = ((gy + 1) * (IH - 1)) / 2;
      const x0 = Math.floor(x), y0 = Math.floor(y), fx = x - x0, fy = y - y0;
      for (let c = 0; c < C; c++) {
        const at = (yy, xx) => (yy >= 0 && yy < IH && xx >= 0 && xx < IW ? data[((n * C + c) * IH + yy) * IW + xx] : 0);
        out[(n * C + c) * OH * OW + i] = (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1))
          + fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
      }
    }
  }
  return out;
}

// ---- GridGenerator ----------------------------------------------------------------------------------
test('GridGenerator affine: identity gives the pixel grid, random matrices, backward (test_grid_generator)', () => {
  for (const [H, W] of [[20, 21], [4, 3], [6, 12], [15, 17]]) {
    const theta = nd.array([[1, 0, 0, 0, 1, 0]]);
    theta.attachGrad();
    const g = autograd.record(() => nd.GridGenerator(theta, { transform_type: 'affine', target_shape: [H, W] }));
    assert.deepEqual(g.shape, [1, 2, H, W]);
    const v = flat(g), px = (i, h, w) => ((v[i * H * W + h * W + w] + 1) * ((i ? H : W) - 1)) / 2;
    for (let h = 0; h < H; h++) {
      for (let w = 0; w < W; w++) assertClose([px(0, h, w), px(1, h, w)], [w, h], { atol: 1e-4 });
    }
    const og = rng(H).normal(2 * H * W);
    g.backward(arr(og, [1, 2, H, W]));
    // out_grad (2, HW) . tmpᵀ with tmp rows x, y, 1
    const want = [];
    for (let k = 0; k < 2; k++) {
      for (let j = 0; j < 3; j++) {
        let s = 0;
        for (let i = 0; i < H * W; i++) {
          const t = [-1 + (i % W) * (2 / (W - 1)), -1 + Math.floor(i / W) * (2 / (H - 1)), 1][j];
          s += og[k * H * W + i] * t;
        }
        want.push(s);
      }
    }
    assertClose(flat(theta.grad), want, { rtol: 1e-4, atol: 1e-4 });
  }
  const r = rng(2);
  const th = r.uniform(12, -1, 1);
  assertClose(flat(nd.GridGenerator(arr(th, [2, 6], 'float64'), 'affine', [5, 7])), affineGrid(th, 2, 5, 7),
    { rtol: 1e-14, atol: 1e-15 });
  checkGrad('GridGenerator', [{ shape: [2, 6] }], { transform_type: 'affine', target_shape: [3, 4] });
});

test('GridGenerator warp: pixel grid plus the flow, normalised; backward divides by the half sizes', () => {
  for (const [H, W] of [[12, 21], [4, 3], [6, 12]]) {
    const flow = nd.ones([1, 2, H, W]);
    flow.attachGrad();
    const g = autograd.record(() => nd.GridGenerator(flow, { transform_type: 'warp' }));
    const v = flat(g), px = (i, h, w) => ((v[i * H * W + h * W + w] + 1) * ((i ? H : W) - 1)) / 2;
    for (let h = 0; h < H; h++) {
      for (let w = 0; w < W; w++) assertClose([px(0, h, w), px(1, h, w)], [w + 1, h + 1], { atol: 1e-4 });
    }
    const og = rng(W).normal(2 * H * W);
    g.backward(arr(og, [1, 2, H, W]));
    const want = Array.from(og, (x, i) => x / ((i < H * W ? W - 1 : H - 1) / 2));
    assertClose(flat(flow.grad), want, { rtol: 1e-5, atol: 1e-6 });
  }
  checkGrad('GridGenerator', [{ shape: [2, 2, 3, 5] }], { transform_type: 'warp' });
  assert.throws(() => nd.GridGenerator(nd.zeros([1, 5]), { transform_type: 'affine', target_shape: [3, 3] }),
    isErr(/should be 6/));
  assert.throws(() => nd.GridGenerator(nd.zeros([1, 6]), { transform_type: 'affine' }),
    isErr(/incorrect target_shape: 0/));
  assert.throws(() => nd.GridGenerator(nd.zeros([1, 3, 4, 4]), { transform_type: 'warp' }), isErr(/should be 2/));
  assert.throws(() => nd.GridGenerator(nd.zeros([1, 6])), mx.MXNetError); // transform_type is required
  // the hidden grid_dst output, in the graph
  const s = sym.GridGenerator(sym.var('t'), { transform_type: 'affine', target_shape: [3, 4], name: 'gg' });
  assert.deepEqual(s.listOutputs(), ['gg_output']);
  assert.deepEqual(s.inferShape({ t: [5, 6] })[1], [[5, 2, 3, 4]]);
});

// ---- BilinearSampler --------------------------------------------------------------------------------
test('BilinearSampler: the two examples of MXNet\'s documentation (zoom out, shift by a warp)', () => {
  const data = nd.array([[[[1, 4, 3, 6], [1, 8, 8, 9], [0, 4, 1, 5], [1, 0, 1, 3]]]]);
  const grid = nd.GridGenerator(nd.array([[2, 0, 0, 0, 2, 0]]), { transform_type: 'affine', target_shape: [4, 4] });
  assertClose(flat(nd.BilinearSampler(data, grid)), [0, 0, 0, 0, 0, 3.5, 6.5, 0, 0, 1.25, 2.5, 0, 0, 0, 0, 0],
    { atol: 1e-5 });
  const warp = nd.concat(nd.ones([1, 1, 4, 4]), nd.zeros([1, 1, 4, 4]), { dim: 1 });
  const out = nd.BilinearSampler(data, nd.GridGenerator(warp, { transform_type: 'warp' }));
  assertClose(flat(out), [4, 3, 6, 0, 8, 8, 9, 0, 4, 1, 5, 0, 0, 1, 3, 0], { atol: 1e-5 });
});

test('BilinearSampler: random grids (inside, across and outside the border) vs the float64 reference, cudnn_off', () => {
  const r = rng(12);
  const cases = [[[2, 3, 5, 7], 4, 6, 'float64'], [[1, 2, 9, 4], 7, 3, 'float32'], [[3, 1, 4, 4], 5, 5, 'float32']];
  for (const [s, OH, OW, dtype] of cases) {
    const d = r.uniform(size(s), -1, 1), g = r.uniform(s[0] * 2 * OH * OW, -1.3, 1.3);
    const y = nd.BilinearSampler(arr(d, s, dtype), arr(g, [s[0], 2, OH, OW], dtype), { cudnn_off: true });
    assert.deepEqual(y.shape, [s[0], s[1], OH, OW]);
    assertClose(flat(y), sampleRef(d, s, g, OH, OW), { rtol: 1e-5, atol: 1e-6, msg: `${s} ${dtype}` });
  }
  const half = { dtype: 'float16' };
  const h = nd.BilinearSampler(nd.ones([1, 1, 3, 3], half), nd.zeros([1, 2, 2, 2], half));
  assert.equal(h.dtype, 'float16');
  assert.deepEqual(h.toArray(), [[[[1, 1], [1, 1]]]]);
  const s = sym.BilinearSampler(sym.var('d'), sym.var('g'));
  assert.deepEqual(s.inferShape({ d: [2, 3, 10, 10], g: [2, 2, 4, 5] })[1], [[2, 3, 4, 5]]);
  assert.throws(() => nd.BilinearSampler(nd.zeros([1, 1, 3, 3]), nd.zeros([1, 3, 2, 2])), isErr(/should be 2/));
  assert.throws(() => nd.BilinearSampler(nd.zeros([1, 1, 3]), nd.zeros([1, 2, 2, 2])), isErr(/4D/));
  assert.throws(() => nd.BilinearSampler(nd.zeros([2, 1, 3, 3]), nd.zeros([1, 2, 2, 2])), isErr(/batch/));
});

test('BilinearSampler: gradients of data and grid by finite differences', () => {
  checkGrad('BilinearSampler', [{ shape: [2, 2, 4, 5] }, { shape: [2, 2, 3, 3], low: -1.2, high: 1.2 }]);
  checkGrad('BilinearSampler', [{ shape: [1, 3, 6, 3] }, { shape: [1, 2, 2, 4], low: -0.9, high: 0.9 }]);
});

// ---- SpatialTransformer -----------------------------------------------------------------------------
test('SpatialTransformer: a 0.5 zoom is the centre crop, its gradient ones there (test_stn)', () => {
  for (const n of [1, 2]) {
    for (const c of [1, 3]) {
      for (const [h, w] of [[5, 9], [13, 5], [9, 9]]) {
        const target = [(h + 1) / 2, (w + 1) / 2];
        const r = rng(n * 100 + c * 10 + h);
        const dv = r.normal(n * c * h * w);
        const data = arr(dv, [n, c, h, w]);
        data.attachGrad();
        const loc = nd.array(Array.from({ length: n }, () => [0.5, 0, 0, 0, 0.5, 0]));
        const attrs = { target_shape: target, transform_type: 'affine', sampler_type: 'bilinear' };
        const out = autograd.record(() => nd.SpatialTransformer(data, loc, attrs));
        assert.deepEqual(out.shape, [n, c, ...target]);
        const crop = [], ones = new Float64Array(n * c * h * w);
        for (let p = 0; p < n * c; p++) {
          for (let y = Math.floor(h / 4); y < h - Math.floor(h / 4); y++) {
            for (let x = Math.floor(w / 4); x < w - Math.floor(w / 4); x++) {
              crop.push(dv[(p * h + y) * w + x]);
              ones[(p * h + y) * w + x] = 1;
            }
          }
        }
        assertClose(flat(out), crop, { rtol: 1e-2, atol: 1e-4 });
        out.backward(nd.ones(out.shape));
        assertClose(flat(data.grad), ones, { rtol: 1e-2, atol: 1e-4 });
      }
    }
  }
});

test('SpatialTransformer: random transforms vs GridGenerator + sampling in float64; gradients; shapes', () => {
  const r = rng(13);
  const s = [2, 3, 6, 7];
  const d = r.uniform(size(s), -1, 1), th = r.uniform(12, -0.8, 0.8);
  const out = nd.SpatialTransformer(arr(d, s, 'float64'), arr(th, [2, 6], 'float64'),
    { target_shape: [4, 5], transform_type: 'affine', sampler_type: 'bilinear' });
  assertClose(flat(out), sampleRef(d, s, affineGrid(th, 2, 4, 5), 4, 5), { rtol: 1e-12, atol: 1e-13 });
  checkGrad('SpatialTransformer', [{ shape: [2, 2, 5, 4] }, { shape: [2, 6], low: -0.7, high: 0.7 }],
    { target_shape: [3, 3], transform_type: 'affine', sampler_type: 'bilinear' });
  const st = sym.SpatialTransformer(sym.var('data'), sym.var('loc'), { target_shape: [4, 4], transform_type: 'affine',
    sampler_type: 'bilinear', name: 'st' });
  assert.deepEqual(st.listArguments(), ['data', 'loc']);
  const [args, outs] = st.inferShape({ data: [3, 2, 8, 8] });
  assert.deepEqual(args, [[3, 2, 8, 8], [3, 6]]);
  assert.deepEqual(outs, [[3, 2, 4, 4]]);
  const stn = (attrs) => nd.SpatialTransformer(nd.zeros([1, 1, 4, 4]), nd.zeros([1, 6]),
    { target_shape: [2, 2], ...attrs });
  assert.throws(() => stn({}), mx.MXNetError); // transform_type and sampler_type are required
  assert.throws(() => stn({ transform_type: 'affine', sampler_type: 'nearest' }), mx.MXNetError);
});

// ---- _contrib_DeformableConvolution -----------------------------------------------------------------
// out[n, f, y, x] = bias[f] + sum over the group's channels c and taps (i, j) of
// weight[f, c, i, j] * data[n, c] sampled at (y*sh - ph + i*dh + dy, x*sw - pw + j*dw + dx), where
// (dy, dx) = offset[n, dg*2*kh*kw + 2*(i*kw + j) (+1), y, x] for c's deformable group dg; the
// sample is bilinear, 0 outside [0, H) x [0, W), a point past the last row/column reads that row.
function dcnRef(data, [N, C, H, W], offset, weight, bias, p) {
  const { F, G = 1, DG = 1, k: [kh, kw], s: [sh, sw] = [1, 1], pad: [ph, pw] = [0, 0], d: [dh, dw] = [1, 1] } = p;
  const Ho = Math.floor((H + 2 * ph - (dh * (kh - 1) + 1)) / sh) + 1;
  const Wo = Math.floor((W + 2 * pw - (dw * (kw - 1) + 1)) / sw) + 1;
  const sample = (plane, h, w) => {
    if (!(h >= 0 && w >= 0 && h < H && w < W)) return 0;
    const h0 = Math.floor(h), w0 = Math.floor(w);
    const h1 = h0 >= H - 1 ? H - 1 : h0 + 1, w1 = w0 >= W - 1 ? W - 1 : w0 + 1;
    const lh = h0 >= H - 1 ? 0 : h - h0, lw = w0 >= W - 1 ? 0 : w - w0;
    const at = (a, b) => data[plane + a * W + b];
    return (1 - lh) * (1 - lw) * at(h0, w0) + (1 - lh) * lw * at(h0, w1)
      + lh * (1 - lw) * at(h1, w0) + lh * lw * at(h1, w1);
  };
  const out = new Float64Array(N * F * Ho * Wo), cpg = C / G, fpg = F / G, cpd = C / DG;
  for (let n = 0; n < N; n++) {
    for (let f = 0; f < F; f++) {
      const g = Math.floor(f / fpg);
      for (let y = 0; y < Ho; y++) {
        for (let x = 0; x < Wo; x++) {
          let acc = bias ? bias[f] : 0;
          for (let cc = 0; cc < cpg; cc++) {
            const c = g * cpg + cc, dg = Math.floor(c / cpd);
            for (let i = 0; i < kh; i++) {
              for (let j = 0; j < kw; j++) {
                const ch = ((n * DG + dg) * kh * kw + i * kw + j) * 2;
                const dy = offset[(ch * Ho + y) * Wo + x], dx = offset[((ch + 1) * Ho + y) * Wo + x];
                acc += weight[((f * cpg + cc) * kh + i) * kw + j]
                  * sample((n * C + c) * H * W, y * sh - ph + i * dh + dy, x * sw - pw + j * dw + dx);
              }
            }
          }
          out[((n * F + f) * Ho + y) * Wo + x] = acc;
        }
      }
    }
  }
  return { out, Ho, Wo };
}
const dcnAttrs = (p) => ({ kernel: p.k, stride: p.s, pad: p.pad, dilate: p.d, num_filter: p.F, num_group: p.G ?? 1,
  num_deformable_group: p.DG ?? 1 });

test('DeformableConvolution: test_deformable_convolution\'s configurations and odd ones vs the float64 reference', () => {
  const r = rng(14);
  const configs = [];
  for (const N of [1, 2]) {
    for (const [C, DG] of [[4, 1], [4, 2], [8, 2]]) {
      for (const [H, W] of [[5, 6], [6, 5]]) {
        for (const d of [[1, 1], [2, 2]]) {
          configs.push({ N, C, H, W, p: { F: C, DG, k: [3, 3], s: [1, 1], pad: d, d } });
        }
      }
    }
  }
  configs.push({ N: 2, C: 6, H: 7, W: 9, p: { F: 4, G: 2, DG: 3, k: [3, 2], s: [2, 3], pad: [1, 0], d: [1, 2] } });
  configs.push({ N: 1, C: 3, H: 4, W: 4, p: { F: 5, k: [1, 1], s: [1, 1], pad: [0, 0], d: [1, 1] }, noBias: true });
  for (const { N, C, H, W, p, noBias } of configs) {
    const [kh, kw] = p.k, DG = p.DG ?? 1;
    const { Ho, Wo } = dcnRef([], [N, C, H, W], [], [], null, { ...p, F: 0 });
    const dv = r.uniform(N * C * H * W, 0, 1), ov = r.uniform(N * DG * 2 * kh * kw * Ho * Wo, -1.5, 2.5);
    const wv = r.normal(p.F * (C / (p.G ?? 1)) * kh * kw), bv = noBias ? null : r.uniform(p.F, -1, 1);
    const { out } = dcnRef(dv, [N, C, H, W], ov, wv, bv, p);
    for (const dtype of ['float64', 'float32']) {
      const inputs = [arr(dv, [N, C, H, W], dtype), arr(ov, [N, DG * 2 * kh * kw, Ho, Wo], dtype),
        arr(wv, [p.F, C / (p.G ?? 1), kh, kw], dtype)];
      if (!noBias) inputs.push(arr(bv, [p.F], dtype));
      const y = nd._contrib_DeformableConvolution(...inputs, { ...dcnAttrs(p), no_bias: !!noBias });
      assert.deepEqual(y.shape, [N, p.F, Ho, Wo]);
      assertClose(flat(y), out, { rtol: dtype === 'float64' ? 1e-12 : 1e-4, atol: dtype === 'float64' ? 1e-12 : 1e-4,
        msg: `${JSON.stringify(p)} ${dtype}` });
    }
  }
});

test('DeformableConvolution: zero offsets are an ordinary convolution (tf.conv2d), shapes are inferred', () => {
  const r = rng(15);
  const convs = [{ N: 2, C: 3, H: 7, W: 8, F: 4, k: [3, 3], s: [1, 1], pad: [1, 1], d: [1, 1] },
    { N: 1, C: 2, H: 9, W: 6, F: 3, k: [3, 2], s: [1, 1], pad: [2, 1], d: [2, 1] },
    { N: 2, C: 3, H: 8, W: 7, F: 2, k: [2, 3], s: [2, 3], pad: [0, 1], d: [1, 1] }]; // tf: strides or dilations 1
  for (const { N, C, H, W, F, k, s, pad, d } of convs) {
    const dv = r.uniform(N * C * H * W, -1, 1), wv = r.uniform(F * C * k[0] * k[1], -1, 1), bv = r.uniform(F, -1, 1);
    const want = oracle((tf) => {
      const x = tf.pad(tf.tensor4d(Array.from(dv), [N, C, H, W]).transpose([0, 2, 3, 1]),
        [[0, 0], [pad[0], pad[0]], [pad[1], pad[1]], [0, 0]]);
      const w = tf.tensor4d(Array.from(wv), [F, C, k[0], k[1]]).transpose([2, 3, 1, 0]);
      return tf.conv2d(x, w, s, 'valid', 'NHWC', d).add(tf.tensor1d(Array.from(bv))).transpose([0, 3, 1, 2]);
    });
    const Ho = Math.floor((H + 2 * pad[0] - (d[0] * (k[0] - 1) + 1)) / s[0]) + 1;
    const Wo = Math.floor((W + 2 * pad[1] - (d[1] * (k[1] - 1) + 1)) / s[1]) + 1;
    const y = nd._contrib_DeformableConvolution(arr(dv, [N, C, H, W]), nd.zeros([N, 2 * k[0] * k[1], Ho, Wo]),
      arr(wv, [F, C, ...k]), arr(bv, [F]), { kernel: k, stride: s, pad, dilate: d, num_filter: F });
    assertClose(flat(y), want, { rtol: 1e-4, atol: 1e-5 });
  }
  const dcn = sym._contrib_DeformableConvolution(sym.var('data'), sym.var('offset'),
    { kernel: [3, 3], pad: [1, 1], num_filter: 8, num_group: 2, num_deformable_group: 4, name: 'dcn' });
  assert.deepEqual(dcn.listArguments(), ['data', 'offset', 'dcn_weight', 'dcn_bias']);
  const [args, outs] = dcn.inferShape({ data: [2, 4, 10, 12] });
  assert.deepEqual(args, [[2, 4, 10, 12], [2, 72, 10, 12], [8, 2, 3, 3], [8]]);
  assert.deepEqual(outs, [[2, 8, 10, 12]]);
  const noBias = sym._contrib_DeformableConvolution(sym.var('d'), sym.var('o'), sym.var('w'),
    { kernel: [1, 1], num_filter: 2, no_bias: true });
  assert.deepEqual(noBias.listArguments(), ['d', 'o', 'w']);
  const x = nd.zeros([1, 4, 5, 5]);
  const call = (attrs, off = nd.zeros([1, 18, 5, 5])) => nd._contrib_DeformableConvolution(x, off,
    nd.zeros([4, 4, 3, 3]), nd.zeros([4]), { kernel: [3, 3], pad: [1, 1], num_filter: 4, ...attrs });
  assert.throws(() => call({ num_group: 3 }), isErr(/divide group size/));
  assert.throws(() => call({ num_deformable_group: 3 }), isErr(/deformable group/));
  assert.throws(() => call({}, nd.zeros([1, 18, 4, 5])), isErr(/offset map height/));
  assert.throws(() => call({}, nd.zeros([1, 20, 5, 5])), isErr(/offset filter/));
  assert.throws(() => call({ kernel: [3, 3, 3] }), isErr(/not implemented/));
  assert.throws(() => call({ layout: 'NCW' }), isErr(/NCHW/));
  const h = { dtype: 'float16' };
  assert.throws(() => nd._contrib_DeformableConvolution(x.astype('float16'), nd.zeros([1, 18, 5, 5], h),
    nd.zeros([4, 4, 3, 3], h), nd.zeros([4], h), { kernel: [3, 3], pad: [1, 1], num_filter: 4 }),
  isErr(/float32 and float64/));
});

test('DeformableConvolution: gradients of data, offset, weight and bias by finite differences', () => {
  // offsets in [0.1, 0.9] as test_deformable_convolution: every sample point away from the kinks
  for (const [N, C, DG, d] of [[1, 4, 2, [1, 1]], [2, 2, 1, [2, 2]]]) {
    const H = 5, W = 4;
    checkGrad('_contrib_DeformableConvolution',
      [{ shape: [N, C, H, W] }, { shape: [N, DG * 18, H, W], low: 0.1, high: 0.9 }, { shape: [3, C, 3, 3] },
        { shape: [3] }],
      { kernel: [3, 3], stride: [1, 1], pad: d, dilate: d, num_filter: 3, num_deformable_group: DG });
  }
  checkGrad('_contrib_DeformableConvolution',
    [{ shape: [1, 4, 6, 5] }, { shape: [1, 8, 3, 4], low: 0.1, high: 0.9 }, { shape: [4, 2, 2, 2] }],
    { kernel: [2, 2], stride: [2, 1], num_filter: 4, num_group: 2, no_bias: true });
});
