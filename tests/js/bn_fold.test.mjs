// BatchNorm folding (csrc/graph/exec.c): at inference a hybridized graph's BatchNorm after a
// Convolution is applied by the convolution itself as a per-channel affine on its output (with
// the activation after it: relu, or clip(0, 6) as MobileNet's RELU6), as MXNet's MKL-DNN
// subgraph backend, ONNX Runtime and TF.js's converter fold it. Checked against a plain float64
// convolution + BatchNorm + activation written here: inference with the moving statistics,
// training with the batch statistics (the BatchNorm runs then, and updates the moving ones, which
// the next inference uses), parameters changed between runs, NCHW and NHWC, a BatchNorm that is
// the graph's output, and a convolution read twice (no fold).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng } from './oracle.mjs';

const { nd, gluon, autograd } = mx;
const { nn } = gluon;
const EPS = 1e-5; // Gluon BatchNorm's default

// float64 NCHW convolution, kernel k, stride 1, padding p, with bias
function conv(x, [N, C, H, W], w, b, F, k, p) {
  const Ho = H + 2 * p - k + 1, Wo = W + 2 * p - k + 1, y = new Float64Array(N * F * Ho * Wo);
  for (let n = 0; n < N; n++) for (let f = 0; f < F; f++) for (let i = 0; i < Ho; i++) for (let j = 0; j < Wo; j++) {
    let s = b ? b[f] : 0;
    for (let c = 0; c < C; c++) for (let u = 0; u < k; u++) for (let v = 0; v < k; v++) {
      const r = i + u - p, q = j + v - p;
      if (r >= 0 && r < H && q >= 0 && q < W) s += x[((n * C + c) * H + r) * W + q] * w[((f * C + c) * k + u) * k + v];
    }
    y[((n * F + f) * Ho + i) * Wo + j] = s;
  }
  return { y, shape: [N, F, Ho, Wo] };
}
// BatchNorm over axis 1 of NCHW y with per-channel mean/var, then the activation
function bn(y, [N, F, H, W], { gamma, beta }, mean, vari, act) {
  const out = new Float64Array(y.length);
  for (let n = 0; n < N; n++) for (let f = 0; f < F; f++) for (let i = 0; i < H * W; i++) {
    const k = (n * F + f) * H * W + i;
    let v = (y[k] - mean[f]) / Math.sqrt(vari[f] + EPS) * gamma[f] + beta[f];
    if (act === 'relu') v = Math.max(v, 0);
    if (act === 'relu6') v = Math.min(Math.max(v, 0), 6);
    out[k] = v;
  }
  return out;
}
function batchStats(y, [N, F, H, W]) {
  const mean = new Float64Array(F), vari = new Float64Array(F), m = N * H * W;
  for (let f = 0; f < F; f++) {
    for (let n = 0; n < N; n++) for (let i = 0; i < H * W; i++) mean[f] += y[(n * F + f) * H * W + i] / m;
    for (let n = 0; n < N; n++) for (let i = 0; i < H * W; i++) vari[f] += (y[(n * F + f) * H * W + i] - mean[f]) ** 2 / m;
  }
  return { mean, vari };
}
const nhwc = (a, [N, C, H, W]) => { // NCHW values -> NHWC order
  const o = new Float64Array(a.length);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let i = 0; i < H * W; i++) o[(n * H * W + i) * C + c] = a[(n * C + c) * H * W + i];
  return o;
};
function assertNear(got, want, tol, what) {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  assert.ok(worst <= tol, `${what}: max relative error ${worst}`);
}

class RELU6 extends gluon.HybridBlock { hybridForward(F, x) { return F.clip(x, 0, 6); } }
class Double extends gluon.HybridBlock { hybridForward(F, x) { return F.elemwise_add(x, x); } }
const twice = (a) => a.map((v) => 2 * v);

// conv(F=5, k=3, pad 1) -> BatchNorm -> act, with every parameter random (moving statistics too)
function build(act, layout, seed) {
  const net = new nn.HybridSequential();
  const axis = layout === 'NCHW' ? 1 : 3;
  net.add(new nn.Conv2D(5, 3, { padding: 1, inChannels: 3, layout }), new nn.BatchNorm({ axis, inChannels: 5 }));
  if (act === 'relu') net.add(new nn.Activation('relu'));
  if (act === 'relu6') net.add(new RELU6());
  net.add(new Double()); // the activation is not the graph's output (an output is never fused)
  net.initialize();
  const r = rng(seed);
  const P = {
    w: Float64Array.from(r.uniform(5 * 3 * 9, 0, 1), (v) => v - 0.5), b: Float64Array.from(r.uniform(5, 0, 1), (v) => v - 0.5),
    gamma: Float64Array.from(r.uniform(5, 0, 1), (v) => 0.5 + v), beta: Float64Array.from(r.uniform(5, 0, 1), (v) => 2 * v - 1),
    mean: Float64Array.from(r.uniform(5, 0, 1), (v) => v - 0.5), vari: Float64Array.from(r.uniform(5, 0, 1), (v) => 0.2 + v),
  };
  const [c, b] = [net.get(0), net.get(1)];
  const wNCHW = Float32Array.from(P.w);
  // the NHWC weight is (F, k, k, C)
  const w = layout === 'NCHW' ? wNCHW : Float32Array.from(nhwc(P.w, [5, 3, 3, 3]));
  c.weight.setData(nd.array(w, { shape: c.weight.shape }));
  c.bias.setData(nd.array(Float32Array.from(P.b)));
  b.gamma.setData(nd.array(Float32Array.from(P.gamma)));
  b.beta.setData(nd.array(Float32Array.from(P.beta)));
  b.running_mean.setData(nd.array(Float32Array.from(P.mean)));
  b.running_var.setData(nd.array(Float32Array.from(P.vari)));
  // the float32 values the net holds
  for (const k of Object.keys(P)) P[k] = Float64Array.from(Float32Array.from(P[k]));
  return { net, P, conv: c, bnl: b };
}

for (const layout of ['NCHW', 'NHWC']) {
  for (const act of ['relu', 'relu6', null]) {
    test(`${layout} conv -> BatchNorm${act ? ` -> ${act}` : ''}: the folded inference equals conv + BN + act in float64`, () => {
      const { net, P } = build(act, layout, 11);
      const shp = [2, 3, 7, 6];
      const xs = Float64Array.from(Float32Array.from(rng(3).uniform(2 * 3 * 7 * 6, 0, 1), (v) => 8 * v - 4));
      const x = nd.array(Float32Array.from(layout === 'NCHW' ? xs : nhwc(xs, shp)), { shape: layout === 'NCHW' ? shp : [2, 7, 6, 3] });
      const { y, shape } = conv(xs, shp, P.w, P.b, 5, 3, 1);
      let want = twice(bn(y, shape, P, P.mean, P.vari, act));
      if (layout === 'NHWC') want = nhwc(want, shape);
      net.hybridize();
      const got = net.forward(x).toTypedArray();
      assert.equal(net._cachedOp.fusedNodes, act ? 2 : 1, 'the BatchNorm (and the activation) folded into the convolution');
      assertNear(got, want, 2e-5, 'hybridized');
      if (act === 'relu6') assert.ok(got.some((v) => v === 12) && got.some((v) => v === 0), 'both bounds of relu6 are reached (doubled)');
      net.hybridize(false);
      assertNear(net.forward(x).toTypedArray(), want, 2e-5, 'imperative');
    });
  }
}

test('training runs the BatchNorm with batch statistics; the next inference folds the updated moving statistics', () => {
  const { net, P, bnl } = build('relu', 'NCHW', 5);
  net.hybridize();
  const shp = [3, 3, 5, 5];
  const xs = Float64Array.from(Float32Array.from(rng(8).uniform(3 * 3 * 25, 0, 1), (v) => 2 * v - 1));
  const x = nd.array(Float32Array.from(xs), { shape: shp });
  const { y, shape } = conv(xs, shp, P.w, P.b, 5, 3, 1);
  net.forward(x); // inference first: the plan folds
  let out;
  autograd.record(() => { out = net.forward(x); });
  const { mean, vari } = batchStats(y, shape);
  assertNear(out.toTypedArray(), twice(bn(y, shape, P, mean, vari, 'relu')), 2e-5, 'training forward (batch statistics)');
  // moving = moving * 0.9 + batch * 0.1 (Gluon's momentum); MXNet's moving_var takes the biased batch variance
  const m2 = P.mean.map((v, f) => v * 0.9 + mean[f] * 0.1), v2 = P.vari.map((v, f) => v * 0.9 + vari[f] * 0.1);
  assertNear(bnl.running_mean.data().toTypedArray(), m2, 1e-5, 'moving mean');
  assertNear(bnl.running_var.data().toTypedArray(), v2, 1e-5, 'moving var');
  const after = net.forward(x).toTypedArray();
  assertNear(after, twice(bn(y, shape, P, m2, v2, 'relu')), 2e-5, 'inference after training (new moving statistics)');
  // a parameter set between two inference runs is used by the next one
  const g3 = P.gamma.map((v) => -v);
  bnl.gamma.setData(nd.array(Float32Array.from(g3)));
  assertNear(net.forward(x).toTypedArray(), twice(bn(y, shape, { ...P, gamma: g3 }, m2, v2, 'relu')), 2e-5, 'after setData(gamma)');
});

test('a BatchNorm that is the graph output folds into the caller\'s array; a convolution read twice does not fold', () => {
  const { net: full, P } = build(null, 'NCHW', 21);
  const net = new nn.HybridSequential(); // conv -> BatchNorm, the BatchNorm last
  net.add(full.get(0), full.get(1));
  net.hybridize();
  const shp = [1, 3, 4, 4];
  const xs = Float64Array.from(Float32Array.from(rng(2).uniform(48, 0, 1), (v) => v - 0.5));
  const { y, shape } = conv(xs, shp, P.w, P.b, 5, 3, 1);
  const x = nd.array(Float32Array.from(xs), { shape: shp });
  assertNear(net.forward(x).toTypedArray(), bn(y, shape, P, P.mean, P.vari, null), 2e-5, 'BatchNorm as the output');
  assert.equal(net._cachedOp.fusedNodes, 1);
  class Twice extends gluon.HybridBlock { // conv read by the BatchNorm and by the residual add
    constructor() { super(); this.c = net.get(0); this.b = net.get(1); }
    hybridForward(F, x) { const c = this.c(x); return F.elemwise_add(this.b(c), c); }
  }
  const t = new Twice();
  t.hybridize();
  const got = t.forward(x).toTypedArray();
  const want = bn(y, shape, P, P.mean, P.vari, null).map((v, i) => v + y[i]);
  assertNear(got, want, 2e-5, 'conv read twice');
  assert.equal(t._cachedOp.fusedNodes, 0);
});
