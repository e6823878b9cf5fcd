// The region-of-interest ops (csrc/ops/contrib_roi.c): _contrib_ROIAlign, ROIPooling,
// _contrib_PSROIPooling, _contrib_Proposal, _contrib_MultiProposal. References: MXNet 1.9.1's
// numpy ROIAlign of test_operator.py (test_op_roi_align: roialign_forward_backward, values and
// data gradients, sample_ratio, position_sensitive; extended with `aligned` from roi_align.cc),
// ROIPooling's documented example, and plain JS rewrites of MXNet's CPU loops (roi_pooling.cc,
// psroi_pooling.cc, proposal.cc -- Proposal in float32 arithmetic with Math.fround, as MXNet runs
// it) on odd shapes with every attribute; test_multi_proposal_op's single-vs-batch consistency.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, sym, autograd } = mx;
const flat = (a) => Array.from(a.toTypedArray(), Number);
const arr = (data, shape, dtype = 'float32') => nd.array(Array.from(data), { dtype }).reshape(shape);
const prod = (s) => s.reduce((a, b) => a * b, 1);
const f = Math.fround;
const cRound = (x) => Math.sign(x) * Math.round(Math.abs(x)); // C's round: halves away from zero

// rois [batch, x1, y1, x2, y2]: batch in [0, N), corners inside a dlen x dlen image
function randomRois(r, R, N, dlen) {
  const out = [];
  for (let i = 0; i < R; i++) {
    const [b, cx, cy, w, h] = Array.from(r.uniform(5, 0, 1), Number);
    const [x, y, ww, hh] = [cx * dlen, cy * dlen, w * dlen, h * dlen];
    out.push(Math.floor(b * N), x - ww / 2, y - hh / 2, x + ww / 2, y + hh / 2);
  }
  return out;
}

// ---- ROIAlign: test_op_roi_align's roialign_forward_backward (+ aligned) ------------------------------
function bilinear(plane, H, W, y, x) {
  if (y < -1 || y > H || x < -1 || x > W) return [0, []];
  x = Math.max(0, x);
  y = Math.max(0, y);
  let xl = Math.trunc(x), yl = Math.trunc(y), xh, yh;
  if (xl >= W - 1) { xl = xh = W - 1; x = xl; } else xh = xl + 1;
  if (yl >= H - 1) { yl = yh = H - 1; y = yl; } else yh = yl + 1;
  const ly = y - yl, lx = x - xl, hy = 1 - ly, hx = 1 - lx;
  const g = [[yl, xl, hy * hx], [yl, xh, hy * lx], [yh, xl, ly * hx], [yh, xh, ly * lx]];
  return [g.reduce((s, [p, q, w]) => s + w * plane(p, q), 0), g];
}
function refRoiAlign(data, [N, C, H, W], rois, o, dy) {
  const { pooled: [PH, PW], scale, ratio = -1, ps = false, aligned = false } = o;
  const R = rois.length / 5, Cout = ps ? C / PH / PW : C;
  const out = new Array(R * Cout * PH * PW).fill(0), dx = new Array(N * C * H * W).fill(0);
  for (let r = 0; r < R; r++) {
    const b = Math.trunc(rois[r * 5]);
    if (b < 0) continue;
    const off = aligned ? 0.5 : 0, s = f(scale);
    const [sw, sh, ew, eh] = rois.slice(r * 5 + 1, r * 5 + 5).map((v) => v * s - off);
    let rw = ew - sw, rh = eh - sh;
    if (!aligned) { rw = Math.max(rw, 1); rh = Math.max(rh, 1); }
    const bh = rh / PH, bw = rw / PW;
    const gh = ratio > 0 ? ratio : Math.ceil(rh / PH), gw = ratio > 0 ? ratio : Math.ceil(rw / PW), count = gh * gw;
    for (let c = 0; c < Cout; c++) {
      for (let ph = 0; ph < PH; ph++) {
        for (let pw = 0; pw < PW; pw++) {
          const cin = ps ? (c * PH + ph) * PW + pw : c, base = (b * C + cin) * H * W;
          const o = ((r * Cout + c) * PH + ph) * PW + pw;
          let v = 0;
          for (let iy = 0; iy < gh; iy++) {
            const y = sh + ph * bh + ((iy + 0.5) * bh) / gh;
            for (let ix = 0; ix < gw; ix++) {
              const x = sw + pw * bw + ((ix + 0.5) * bw) / gw;
              const [val, g] = bilinear((p, q) => data[base + p * W + q], H, W, y, x);
              v += val;
              if (dy) for (const [p, q, w] of g) dx[base + p * W + q] += (dy[o] * w) / count;
            }
          }
          out[o] = v / count;
        }
      }
    }
  }
  return { out, dx };
}

test('ROIAlign: test_op_roi_align\'s values and data gradients (adaptive, sample_ratio 2, position_sensitive, aligned)', () => {
  const r = rng(201);
  for (const [ratio, ps, aligned] of [[0, false, false], [2, false, false], [0, true, false], [-1, false, true],
    [3, true, true]]) {
    const N = 5, H = 16, W = 16, dlen = 224, R = 7, pooled = [3, 4];
    const C = ps ? 3 * 12 : 3;
    const shape = [N, C, H, W];
    const data = Array.from({ length: prod(shape) }, (_, i) => i);
    const rois = randomRois(r, R, N, dlen);
    const o = { pooled, scale: (H * 1.0) / dlen, ratio, ps, aligned };
    const Cout = ps ? C / 12 : C;
    const dy = Array.from(r.uniform(R * Cout * 12, -1, 1), Number);
    const { out, dx } = refRoiAlign(data, shape, rois, o, dy);
    for (const dtype of ['float64', 'float32']) {
      const x = arr(data, shape, dtype), rr = arr(rois, [R, 5], dtype);
      x.attachGrad();
      rr.attachGrad();
      const y = autograd.record(() => nd._contrib_ROIAlign(x, rr, { pooled_size: pooled, spatial_scale: o.scale,
        sample_ratio: ratio, position_sensitive: ps, aligned }));
      assert.deepEqual(y.shape, [R, Cout, 3, 4]);
      y.backward(arr(dy, y.shape, dtype));
      const tol = dtype === 'float64' ? { rtol: 1e-10, atol: 1e-9 } : { rtol: 1e-5, atol: 1e-3 };
      const msg = `${dtype} ratio ${ratio} ps ${ps} aligned ${aligned}`;
      assertClose(flat(y), out, { ...tol, msg });
      assertClose(flat(x.grad), dx, { ...tol, msg: `${msg} data gradient` });
      assert.deepEqual(flat(rr.grad), new Array(R * 5).fill(0));
    }
  }
});

test('ROIAlign: odd shapes, tiny and outside rois, negative batch index (zeros), float16, errors', () => {
  const r = rng(202);
  const shape = [2, 5, 7, 9];
  const data = Array.from(r.uniform(prod(shape), -1, 1), Number);
  // a roi partly outside the map, one smaller than a pixel, one far outside, one with batch -1
  const rois = [0, -3, -2, 4.5, 3.3, 1, 2.2, 3.1, 2.4, 3.3, 1, 40, 40, 60, 50, -1, 1, 1, 5, 5, 1, 0.5, 0.5, 8.7, 6.2];
  for (const o of [{ pooled: [2, 3], scale: 1 }, { pooled: [3, 2], scale: 0.5, ratio: 2 },
    { pooled: [1, 1], scale: 1, aligned: true }]) {
    const { out } = refRoiAlign(data, shape, rois, o);
    const y = nd._contrib_ROIAlign(arr(data, shape, 'float64'), arr(rois, [5, 5], 'float64'),
      { pooled_size: o.pooled, spatial_scale: o.scale, sample_ratio: o.ratio ?? -1, aligned: o.aligned ?? false });
    assertClose(flat(y), out, { rtol: 1e-12, atol: 1e-12, msg: JSON.stringify(o) });
    const blk = 5 * o.pooled[0] * o.pooled[1];
    assert.deepEqual(flat(y).slice(3 * blk, 4 * blk), new Array(blk).fill(0));
    const y16 = nd._contrib_ROIAlign(arr(data, shape, 'float16'), arr(rois, [5, 5], 'float16'),
      { pooled_size: o.pooled, spatial_scale: o.scale, sample_ratio: o.ratio ?? -1, aligned: o.aligned ?? false });
    assert.equal(y16.dtype, 'float16');
    assertClose(flat(y16), out, { rtol: 1e-2, atol: 1e-2, msg: `float16 ${JSON.stringify(o)}` });
  }
  const x = nd.zeros([1, 4, 5, 5]), roi = nd.array([[0, 1, 1, 3, 3]]);
  const err = (o, re, d = x, rr = roi) => assert.throws(() => nd._contrib_ROIAlign(d, rr, o),
    (e) => e instanceof mx.MXNetError && re.test(e.message), JSON.stringify(o));
  err({ pooled_size: [2, 2], spatial_scale: 1.5 }, /spatial_scale exceed bound \[0,1\]/);
  err({ pooled_size: [2], spatial_scale: 1 }, /pooled_size must have 2 elements/);
  err({ pooled_size: [2, 0], spatial_scale: 1 }, /pooled_size must be positive/);
  err({ pooled_size: [3, 2], spatial_scale: 1, position_sensitive: true }, /Input channels should be divided/);
  err({ pooled_size: [2, 2], spatial_scale: 1 }, /bbox should be a 2D tensor of shape \[batch, 5\]/, x, nd.zeros([1, 4]));
  err({ pooled_size: [2, 2], spatial_scale: 1 }, /batch index 1, out of range \[0, 1\)/, x, nd.array([[1, 1, 1, 3, 3]]));
  err({ pooled_size: [2, 2], spatial_scale: 1, aligned: true }, /no positive width/, x, nd.array([[0, 1, 1, 1, 3]]));
  const s = sym._contrib_ROIAlign(sym.var('data'), sym.var('rois'), { pooled_size: [14, 14], spatial_scale: 0.0625 });
  assert.deepEqual(s.listArguments(), ['data', 'rois']);
  assert.deepEqual(s.inferShape({ data: [2, 256, 38, 50], rois: [100, 5] })[1], [[100, 256, 14, 14]]);
});

// ---- ROIPooling ---------------------------------------------------------------------------------------
// roi_pooling.cc: corners rounded (x * scale, C's round), at least 1 x 1, bins floor(i * size / p) ..
// ceil((i + 1) * size / p) shifted and clipped; max over the bin (0 when empty or the batch index is
// invalid); maxidx = the flat data index of the max (-1 for those).
function refRoiPool(data, [N, C, H, W], rois, [PH, PW], scale, f32) {
  const R = rois.length / 5, out = [], arg = [];
  const mul = (a, b) => (f32 ? f(a * b) : a * b);
  for (let n = 0; n < R; n++) {
    const [sw, sh, ew, eh] = rois.slice(n * 5 + 1, n * 5 + 5).map((v) => cRound(mul(v, f(scale))));
    const b = Math.trunc(rois[n * 5]), bad = b < 0 || b >= N;
    const rh = Math.max(eh - sh + 1, 1), rw = Math.max(ew - sw + 1, 1), bh = rh / PH, bw = rw / PW;
    for (let c = 0; c < C; c++) {
      for (let ph = 0; ph < PH; ph++) {
        for (let pw = 0; pw < PW; pw++) {
          const clampH = (v) => Math.min(Math.max(v + sh, 0), H), clampW = (v) => Math.min(Math.max(v + sw, 0), W);
          const hs = clampH(Math.floor(ph * bh)), he = clampH(Math.ceil((ph + 1) * bh));
          const ws = clampW(Math.floor(pw * bw)), we = clampW(Math.ceil((pw + 1) * bw));
          if (he <= hs || we <= ws || bad) { out.push(0); arg.push(-1); continue; }
          let m = -3.4028234663852886e38, k = -1;
          for (let h = hs; h < he; h++) {
            for (let w = ws; w < we; w++) {
              const i = ((b * C + c) * H + h) * W + w;
              if (data[i] > m) { m = data[i]; k = i; }
            }
          }
          out.push(m);
          arg.push(k);
        }
      }
    }
  }
  return { out, arg };
}

test('ROIPooling: MXNet\'s documented example, random rois against the reference, gradient to the argmax', () => {
  const x = nd.arange(0, 48).reshape([1, 1, 8, 6]), y = nd.array([[0, 0, 0, 4, 4]]);
  assert.deepEqual(flat(nd.ROIPooling(x, y, [2, 2], 1.0)), [14, 16, 26, 28]);
  assert.deepEqual(flat(nd.ROIPooling(x, y, { pooled_size: [2, 2], spatial_scale: 0.7 })), [7, 9, 19, 21]);
  const r = rng(211);
  for (const [shape, pooled, scale, R] of [[[2, 3, 12, 8], [4, 4], 1, 6], [[3, 2, 9, 11], [3, 2], 0.5, 7],
    [[1, 4, 7, 5], [2, 3], 0.25, 5]]) {
    const data = Array.from(r.uniform(prod(shape), -1, 1), Number);
    const rois = randomRois(r, R, shape[0], shape[2] / scale);
    rois.push(-1, 1, 1, 4, 4, shape[0], 1, 1, 3, 3, 0, -8, -8, -5, -5); // invalid batches, an outside roi
    const nR = rois.length / 5;
    for (const dtype of ['float64', 'float32']) {
      const { out, arg } = refRoiPool(data.map(dtype === 'float32' ? f : Number), shape, rois.map(dtype === 'float32' ? f : Number),
        pooled, scale, dtype === 'float32');
      const xd = arr(data, shape, dtype);
      xd.attachGrad();
      const yd = autograd.record(() => nd._npx_roi_pooling(xd, arr(rois, [nR, 5], dtype),
        { pooled_size: pooled, spatial_scale: scale }));
      assert.deepEqual(yd.shape, [nR, shape[1], ...pooled]);
      assertClose(flat(yd), out, { rtol: 0, atol: 0, msg: `${dtype} ${shape}` });
      const dy = Array.from(r.uniform(out.length, -1, 1), Number);
      yd.backward(arr(dy, yd.shape, dtype));
      const dx = new Array(prod(shape)).fill(0);
      arg.forEach((k, i) => { if (k >= 0) dx[k] += dtype === 'float32' ? f(dy[i]) : dy[i]; });
      assertClose(flat(xd.grad), dx, { rtol: 1e-6, atol: 1e-7, msg: `${dtype} gradient` });
    }
  }
  const s = sym.ROIPooling(sym.var('data'), sym.var('rois'), { pooled_size: [3, 3], spatial_scale: 0.5, name: 'pool' });
  assert.deepEqual(s.listOutputs(), ['pool_output']);
  assert.deepEqual(s.inferShape({ data: [1, 6, 10, 10], rois: [4, 5] })[1], [[4, 6, 3, 3]]);
  assert.throws(() => nd.ROIPooling(nd.zeros([1, 1, 4, 4]), nd.zeros([1, 5]),
    { pooled_size: [2, 2], spatial_scale: -0.1 }), /exceed bound/);
  assert.throws(() => nd.ROIPooling(nd.zeros([1, 4, 4]), nd.zeros([1, 5]), { pooled_size: [2, 2], spatial_scale: 1 }),
    /data should be a 4D tensor/);
});

// ---- PSROIPooling -------------------------------------------------------------------------------------
// psroi_pooling.cc: corners rounded then scaled (end + 1), sizes at least 0.1, bins floor/ceil
// clipped to the map, the mean of channel (ctop * g + gh) * g + gw with gh = floor(ph * g / p).
function refPsroi(data, [, C, H, W], rois, { scale, dim, pooled: P, group = 0 }, dy) {
  const g = group || P, R = rois.length / 5, out = [], dx = new Array(data.length).fill(0);
  for (let i = 0; i < R * dim * P * P; i++) {
    const pw = i % P, ph = Math.floor(i / P) % P, ctop = Math.floor(i / P / P) % dim, n = Math.floor(i / P / P / dim);
    const roi = rois.slice(n * 5, n * 5 + 5), b = Math.trunc(roi[0]), s = f(scale);
    const [sw, sh] = [cRound(roi[1]) * s, cRound(roi[2]) * s];
    const [ew, eh] = [(cRound(roi[3]) + 1) * s, (cRound(roi[4]) + 1) * s];
    const rw = Math.max(ew - sw, 0.1), rh = Math.max(eh - sh, 0.1), bh = rh / P, bw = rw / P;
    const cl = (v, hi) => Math.min(Math.max(v, 0), hi);
    const hs = cl(Math.floor(ph * bh + sh), H), he = cl(Math.ceil((ph + 1) * bh + sh), H);
    const ws = cl(Math.floor(pw * bw + sw), W), we = cl(Math.ceil((pw + 1) * bw + sw), W);
    const gw = cl(Math.floor((pw * g) / P), g - 1), gh = cl(Math.floor((ph * g) / P), g - 1);
    const c = (ctop * g + gh) * g + gw, base = (b * C + c) * H * W, empty = he <= hs || we <= ws;
    const area = (he - hs) * (we - ws);
    let sum = 0;
    for (let h = hs; h < he; h++) {
      for (let w = ws; w < we; w++) {
        sum += data[base + h * W + w];
        if (dy && !empty) dx[base + h * W + w] += dy[i] / area;
      }
    }
    out.push(empty ? 0 : sum / area);
  }
  return { out, dx };
}

test('PSROIPooling: test_psroipooling\'s settings and odd ones against the reference, with gradients', () => {
  const r = rng(221);
  for (const [numClasses, numGroup, ih, iw, R] of [[2, 2, 168, 224, 2], [3, 3, 224, 168, 1], [3, 2, 100, 75, 4]]) {
    const scale = 0.0625, fh = Math.floor(ih * scale), fw = Math.floor(iw * scale);
    const shape = [1, numClasses * numGroup * numGroup, fh, fw];
    const data = Array.from(r.uniform(prod(shape), 0, 1), Number);
    const rois = [];
    for (let i = 0; i < R; i++) {
      const xs = Array.from(r.uniform(2, 0, iw - 1), Number).sort((a, b) => a - b);
      const ys = Array.from(r.uniform(2, 0, ih - 1), Number).sort((a, b) => a - b);
      rois.push(0, xs[0], ys[0], xs[1], ys[1]);
    }
    const o = { scale, dim: numClasses, pooled: numGroup, group: numGroup };
    const dy = Array.from(r.uniform(R * numClasses * numGroup * numGroup, -1, 1), Number);
    const { out, dx } = refPsroi(data, shape, rois, o, dy);
    const x = arr(data, shape, 'float64');
    x.attachGrad();
    const y = autograd.record(() => nd._contrib_PSROIPooling(x, arr(rois, [R, 5], 'float64'),
      { spatial_scale: scale, output_dim: numClasses, pooled_size: numGroup, group_size: numGroup }));
    assert.deepEqual(y.shape, [R, numClasses, numGroup, numGroup]);
    assertClose(flat(y), out, { rtol: 1e-12, atol: 1e-12 });
    y.backward(arr(dy, y.shape, 'float64'));
    assertClose(flat(x.grad), dx, { rtol: 1e-12, atol: 1e-12 });
  }
  // test_psroipooling_with_type's rois; group_size 0 means pooled_size; pooled 3 of a group of 2; float32
  const data = Array.from(r.uniform(18 * 14 * 14, -1, 1), Number);
  const rois = [0, 10, 22, 161, 173, 0, 20, 15, 154, 160];
  for (const o of [{ scale: 0.0625, dim: 2, pooled: 3 }, { scale: 0.0625, dim: 4, pooled: 3, group: 2 }]) {
    const { out } = refPsroi(data, [1, 18, 14, 14], rois, o);
    const y = nd._contrib_PSROIPooling(arr(data, [1, 18, 14, 14]), arr(rois, [2, 5]),
      { spatial_scale: o.scale, output_dim: o.dim, pooled_size: o.pooled, group_size: o.group ?? 0 });
    assertClose(flat(y), out, { rtol: 1e-5, atol: 1e-6, msg: JSON.stringify(o) });
  }
  assert.throws(() => nd._contrib_PSROIPooling(nd.zeros([1, 7, 4, 4]), nd.zeros([1, 5]),
    { spatial_scale: 1, output_dim: 2, pooled_size: 2 }), /fewer than output_dim \* group_size\^2 = 8/);
});

// ---- Proposal / MultiProposal: proposal.cc in float32 ------------------------------------------------
function refAnchors(fs, scales, ratios) {
  const out = [];
  const w = f(fs - 1 + 1), xc = f(0.5 * f(w - 1));
  for (const ratio of ratios) {
    for (const scale of scales) {
      const sr = Math.floor(f(f(w * w) / f(ratio)));
      const nw = f(Math.floor(f(f(Math.sqrt(sr)) + 0.5)) * f(scale));
      const nh = f(Math.floor(f(f(f(nw / f(scale)) * f(ratio)) + 0.5)) * f(scale));
      const hw = f(0.5 * f(nw - 1)), hh = f(0.5 * f(nh - 1));
      out.push([f(xc - hw), f(xc - hh), f(xc + hw), f(xc + hh)]);
    }
  }
  return out;
}
function refProposal(scores, deltas, info, [B, A2, H, W], o, multi) {
  const A = A2 / 2, fs = o.feature_stride ?? 16;
  const anchors = refAnchors(fs, o.scales ?? [4, 8, 16, 32], o.ratios ?? [0.5, 1, 2]);
  const count = A * H * W, post = o.rpn_post_nms_top_n ?? 300, thr = f(o.threshold ?? 0.7), minS = o.rpn_min_size ?? 16;
  let pre = (o.rpn_pre_nms_top_n ?? 6000) > 0 ? o.rpn_pre_nms_top_n ?? 6000 : count;
  pre = Math.min(pre, count);
  const keepMax = Math.min(post, pre), rois = [], sc = [];
  for (let b = 0; b < B; b++) {
    const [imH, imW, imS] = info.slice(b * 3, b * 3 + 3).map(f);
    const realH = Math.trunc(f(imH / fs)), realW = Math.trunc(f(imW / fs));
    const props = [];
    for (let h = 0; h < H; h++) {
      for (let x = 0; x < W; x++) {
        for (let a = 0; a < A; a++) {
          const an = anchors[a], d = (k) => f(deltas[(((b * A + a) * 4 + k) * H + h) * W + x]);
          const bx = [f(an[0] + x * fs), f(an[1] + h * fs), f(an[2] + x * fs), f(an[3] + h * fs)];
          let p;
          if (o.iou_loss) {
            p = [f(bx[0] + d(0)), f(bx[1] + d(1)), f(bx[2] + d(2)), f(bx[3] + d(3))];
          } else {
            const bw = f(f(bx[2] - bx[0]) + 1), bh = f(f(bx[3] - bx[1]) + 1);
            const cx = f(bx[0] + 0.5 * (bw - 1)), cy = f(bx[1] + 0.5 * (bh - 1));
            const pcx = f(f(d(0) * bw) + cx), pcy = f(f(d(1) * bh) + cy);
            const pw = f(f(Math.exp(d(2))) * bw), ph = f(f(Math.exp(d(3))) * bh);
            p = [f(pcx - 0.5 * (pw - 1)), f(pcy - 0.5 * (ph - 1)), f(pcx + 0.5 * (pw - 1)), f(pcy + 0.5 * (ph - 1))];
          }
          const clip = (v, hi) => Math.max(Math.min(v, hi), 0);
          p = [clip(p[0], f(imW - 1)), clip(p[1], f(imH - 1)), clip(p[2], f(imW - 1)), clip(p[3], f(imH - 1))];
          let s = f(scores[(((b * A2) + A + a) * H + h) * W + x]);
          if (h >= realH || x >= realW) s = -1;
          const ms = f(minS * imS);
          if (f(f(p[2] - p[0]) + 1) < ms || f(f(p[3] - p[1]) + 1) < ms) {
            const m2 = f(ms / 2);
            p = [f(p[0] - m2), f(p[1] - m2), f(p[2] + m2), f(p[3] + m2)];
            s = -1;
          }
          props.push([...p, s]);
        }
      }
    }
    const ord = props.slice().sort((p, q) => q[4] - p[4]).slice(0, pre);
    const area = ord.map((d) => f(f(f(d[2] - d[0]) + 1) * f(f(d[3] - d[1]) + 1)));
    const supp = new Array(pre).fill(false), keep = [];
    for (let i = 0; i < pre && keep.length < keepMax; i++) {
      if (supp[i]) continue;
      keep.push(i);
      for (let j = i + 1; j < pre; j++) {
        if (supp[j]) continue;
        const iw = Math.max(0, f(f(Math.min(ord[i][2], ord[j][2]) - Math.max(ord[i][0], ord[j][0])) + 1));
        const ih = Math.max(0, f(f(Math.min(ord[i][3], ord[j][3]) - Math.max(ord[i][1], ord[j][1])) + 1));
        const inter = f(iw * ih);
        if (f(inter / f(f(area[i] + area[j]) - inter)) > thr) supp[j] = true;
      }
    }
    for (let i = 0; i < post; i++) {
      const d = ord[keep[i % keep.length]];
      rois.push(multi ? b : 0, d[0], d[1], d[2], d[3]);
      sc.push(d[4]);
    }
  }
  return { rois, sc };
}

function proposalInputs(r, B, A, H, W, fs) {
  const scores = Array.from(r.uniform(B * 2 * A * H * W, 0, 1), Number);
  const deltas = Array.from(r.uniform(B * 4 * A * H * W, -0.3, 0.3), Number);
  const info = [];
  const side = (n) => Math.floor(n * fs * (0.6 + 0.4 * r.uniform(1)[0]));
  for (let b = 0; b < B; b++) info.push(side(H), side(W), 0.8 + b * 0.1);
  return { scores, deltas, info };
}

test('Proposal and MultiProposal: against the float32 reference for every attribute; single vs batch', () => {
  const r = rng(231);
  const cases = [
    [[1, 5, 7], { scales: [2, 4], ratios: [0.5, 1, 2], rpn_pre_nms_top_n: 100, rpn_post_nms_top_n: 20,
      threshold: 0.7 }],
    [[1, 6, 5], { scales: [2, 4], ratios: [0.5, 1, 2], rpn_pre_nms_top_n: -1, rpn_post_nms_top_n: 300,
      rpn_min_size: 40 }],
    [[3, 4, 6], { scales: [1.5, 3], ratios: [1, 2], feature_stride: 8, rpn_pre_nms_top_n: 30, rpn_post_nms_top_n: 12,
      threshold: 0.5, output_score: true }],
    [[2, 5, 5], { scales: [2], ratios: [0.5, 1], iou_loss: true, rpn_post_nms_top_n: 9, threshold: 0.3,
      rpn_min_size: 4 }],
  ];
  for (const [[B, H, W], o] of cases) {
    const A = (o.scales ?? [4, 8, 16, 32]).length * (o.ratios ?? [0.5, 1, 2]).length, fs = o.feature_stride ?? 16;
    const { scores, deltas, info } = proposalInputs(r, B, A, H, W, fs);
    const e = refProposal(scores, deltas, info, [B, 2 * A, H, W], o, true);
    const post = o.rpn_post_nms_top_n;
    const outs = nd._contrib_MultiProposal(arr(scores, [B, 2 * A, H, W]), arr(deltas, [B, 4 * A, H, W]),
      arr(info, [B, 3]), o);
    const [rois, sc] = Array.isArray(outs) ? outs : [outs];
    assert.deepEqual(rois.shape, [B * post, 5]);
    assertClose(flat(rois), e.rois, { rtol: 1e-5, atol: 1e-3, msg: JSON.stringify(o) });
    if (o.output_score) assertClose(flat(sc), e.sc, { rtol: 1e-6, atol: 1e-7 });
    else assert.ok(!Array.isArray(outs), 'one visible output without output_score');
    // Proposal on each image alone: the same rows with batch index 0 (test_multi_proposal_op)
    for (let b = 0; b < B; b++) {
      const one = (v, n) => v.slice(b * n, (b + 1) * n);
      const p = nd._contrib_Proposal(arr(one(scores, 2 * A * H * W), [1, 2 * A, H, W]),
        arr(one(deltas, 4 * A * H * W), [1, 4 * A, H, W]), arr(one(info, 3), [1, 3]), { ...o, output_score: true });
      const single = e.rois.slice(b * post * 5, (b + 1) * post * 5).map((v, i) => (i % 5 === 0 ? 0 : v));
      assertClose(flat(p[0]), single, { rtol: 1e-5, atol: 1e-3 });
      assertClose(flat(p[1]), e.sc.slice(b * post, (b + 1) * post), { rtol: 1e-6, atol: 1e-7 });
    }
  }
});

test('Proposal: anchors of the default scales and ratios, shapes, names, errors, zero gradients', () => {
  // MXNet's GenerateAnchors of a 16-pixel stride (py-faster-rcnn's well-known table, ratio 0.5 scale 8 first)
  const an = refAnchors(16, [8, 16, 32], [0.5, 1, 2]);
  assert.deepEqual(an[0], [-84, -40, 99, 55]);
  assert.deepEqual(an[4], [-120, -120, 135, 135]);
  assert.deepEqual(an[8], [-168, -344, 183, 359]);
  const s = sym._contrib_Proposal(sym.var('cls'), sym.var('bbox'), sym.var('info'), { rpn_post_nms_top_n: 50, output_score: true, name: 'p' });
  assert.deepEqual(s.listOutputs(), ['p_output', 'p_score']);
  const [args, outs] = s.inferShape({ cls: [1, 24, 7, 9] });
  assert.deepEqual(args, [[1, 24, 7, 9], [1, 48, 7, 9], [1, 3]]);
  assert.deepEqual(outs, [[50, 5], [50, 1]]);
  const m = sym._contrib_MultiProposal(sym.var('cls'), sym.var('bbox'), sym.var('info'), { rpn_post_nms_top_n: 50 });
  assert.deepEqual(m.inferShape({ cls: [3, 24, 7, 9] })[1], [[150, 5]]);
  const cls = nd.zeros([2, 24, 3, 3]), bb = nd.zeros([2, 48, 3, 3]), info = nd.array([[48, 48, 1], [48, 48, 1]]);
  assert.throws(() => nd._contrib_Proposal(cls, bb, info), /multiple images each device is not implemented/);
  assert.throws(() => nd._contrib_MultiProposal(nd.zeros([1, 6, 3, 3]), nd.zeros([1, 12, 3, 3]),
    nd.array([[48, 48, 1]])), /ratios x scales make 12/);
  assert.throws(() => nd._contrib_MultiProposal(cls.astype('float64'), bb.astype('float64'), info.astype('float64')),
    /only float32 is supported/);
  // non-differentiable: zero gradients (MXNet's backward writes zeros)
  const r = rng(241);
  const { scores, deltas, info: inf } = proposalInputs(r, 1, 12, 3, 3, 16);
  const x = arr(scores, [1, 24, 3, 3]);
  x.attachGrad();
  const y = autograd.record(() => nd._contrib_MultiProposal(x, arr(deltas, [1, 48, 3, 3]), arr(inf, [1, 3]),
    { rpn_post_nms_top_n: 10 }));
  y.backward();
  assert.deepEqual(flat(x.grad), new Array(216).fill(0));
});
