// Helpers for tests/js/nn_layers.test.mjs (not a test file itself): TensorFlow.js references for
// convolution, transposed convolution and pooling in MXNet's channel-first layouts, written
// independently of the library (every rank is lifted to tf's 3-D NDHWC kernels), plus small
// utilities to run a Gluon block in both modes and to read its exported graph.
import assert from 'node:assert/strict';
import { tf, sizeOf, assertClose } from './oracle.mjs';

// Runs fn under tf.tidy and returns {data: Float32Array, shape} of the tensor it returns.
export function tfRun(fn) {
  const t = tf.tidy(fn);
  const r = { data: t.dataSync().slice(), shape: t.shape.slice() };
  t.dispose();
  return r;
}

const lift = (a, nsp, fill) => [...new Array(3 - nsp).fill(fill), ...a];

// (N, C, ...spatial) with 1-3 spatial dims -> (N, D, H, W, C) with singleton leading dims.
function to3d(t, nsp) {
  const [N, C, ...sp] = t.shape;
  return tf.transpose(tf.reshape(t, [N, C, ...lift(sp, nsp, 1)]), [0, 2, 3, 4, 1]);
}
// (N, D, H, W, C) -> (N, C, ...last nsp spatial dims)
function from3d(t, nsp) {
  const [N, D, H, W, C] = t.shape;
  return tf.reshape(tf.transpose(t, [0, 4, 1, 2, 3]), [N, C, ...[D, H, W].slice(3 - nsp)]);
}

// A dilated kernel written out as an undilated one with zeros between the taps:
// (A, B, k1..kn) -> (A, B, d1(k1-1)+1, ...).
export function dilateKernel(w, ws, dil) {
  const ks = ws.slice(2);
  const nk = ks.map((k, i) => dil[i] * (k - 1) + 1);
  const outShape = [ws[0], ws[1], ...nk];
  const out = new Float32Array(sizeOf(outShape));
  const inner = sizeOf(ks), innerOut = sizeOf(nk);
  for (let ab = 0; ab < ws[0] * ws[1]; ab++) {
    for (let f = 0; f < inner; f++) {
      const idx = new Array(ks.length);
      let rem = f;
      for (let i = ks.length - 1; i >= 0; i--) { idx[i] = rem % ks[i]; rem = Math.floor(rem / ks[i]); }
      let off = 0;
      for (let i = 0; i < ks.length; i++) off = off * nk[i] + idx[i] * dil[i];
      out[ab * innerOut + off] = w[ab * inner + f];
    }
  }
  return [out, outShape];
}

// MXNet Convolution (NCW/NCHW/NCDHW): zero padding by tf.pad, dilation by an explicitly dilated
// kernel, groups by splitting channels, tf.conv3d on the lifted tensors.
export function convRef(x, xs, w, ws, b, { stride, pad, dilate, groups = 1 }) {
  const nsp = xs.length - 2;
  const [wd, wds] = dilateKernel(w, ws, dilate);
  return tfRun(() => {
    let xt = to3d(tf.tensor(x, xs), nsp);
    xt = tf.pad(xt, [[0, 0], ...lift(pad, nsp, 0).map((p) => [p, p]), [0, 0]]);
    let wt = tf.reshape(tf.tensor(wd, wds), [wds[0], wds[1], ...lift(wds.slice(2), nsp, 1)]);
    wt = tf.transpose(wt, [2, 3, 4, 1, 0]); // (kd, kh, kw, C/G, F)
    const xg = groups > 1 ? tf.split(xt, groups, 4) : [xt];
    const wg = groups > 1 ? tf.split(wt, groups, 4) : [wt];
    const ys = xg.map((xi, g) => tf.conv3d(xi, wg[g], lift(stride, nsp, 1), 'valid'));
    let y = ys.length > 1 ? tf.concat(ys, 4) : ys[0];
    if (b) y = tf.add(y, tf.tensor1d(b));
    return from3d(y, nsp);
  });
}

// MXNet Deconvolution: per group the full ('valid') tf.conv3dTranspose of size (in-1)*s + k,
// weight (C, F/G, k...) -> (k..., F/G, C/G); then `pad` cropped at the start, the output size
// (in-1)*s + k - 2p + adj kept (zeros appended when adj reaches past the full result), + bias.
export function deconvRef(x, xs, w, ws, b, { stride, pad, adj, dilate, groups = 1 }) {
  const nsp = xs.length - 2;
  const [wd, wds] = dilateKernel(w, ws, dilate);
  const [N, C, ...sp] = xs;
  const Fg = wds[1], F = Fg * groups, K = wds.slice(2);
  const full = sp.map((s, i) => (s - 1) * stride[i] + K[i]);
  const out = full.map((f, i) => f - 2 * pad[i] + adj[i]);
  const ext = out.map((o, i) => Math.max(0, pad[i] + o - full[i]));
  return tfRun(() => {
    const xt = to3d(tf.tensor(x, xs), nsp);
    let wt = tf.reshape(tf.tensor(wd, wds), [C, Fg, ...lift(K, nsp, 1)]);
    wt = tf.transpose(wt, [2, 3, 4, 1, 0]); // (kd, kh, kw, F/G, C)
    const xg = groups > 1 ? tf.split(xt, groups, 4) : [xt];
    const wg = groups > 1 ? tf.split(wt, groups, 4) : [wt];
    const ys = xg.map((xi, g) => tf.conv3dTranspose(xi, wg[g], [N, ...lift(full, nsp, 1), Fg], lift(stride, nsp, 1), 'valid'));
    let y = ys.length > 1 ? tf.concat(ys, 4) : ys[0];
    y = tf.pad(y, [[0, 0], ...lift(ext, nsp, 0).map((e) => [0, e]), [0, 0]]);
    y = tf.slice(y, [0, ...lift(pad, nsp, 0), 0], [N, ...lift(out, nsp, 1), F]);
    if (b) y = tf.add(y, tf.tensor1d(b));
    return from3d(y, nsp);
  });
}

// MXNet Pooling (max/avg, valid or full convention, count_include_pad): max pads with -inf;
// avg = window sum / window count, both from tf.avgPool3d (sum of zero-padded data, count of a
// mask that is 1 on the cells MXNet counts: the padded box when count_include_pad, else the data).
export function poolRef(x, xs, { kernel, stride, pad, type, full = false, countIncludePad = true }) {
  const nsp = xs.length - 2;
  const sp = xs.slice(2);
  const outSz = sp.map((s, i) => {
    const v = (s + 2 * pad[i] - kernel[i]) / stride[i];
    return 1 + (full ? Math.ceil(v) : Math.floor(v));
  });
  const ext = outSz.map((o, i) => Math.max(0, (o - 1) * stride[i] + kernel[i] - (sp[i] + 2 * pad[i])));
  const k3 = lift(kernel, nsp, 1), s3 = lift(stride, nsp, 1);
  const padAll = [[0, 0], ...lift(pad, nsp, 0).map((p, i) => [p, p + lift(ext, nsp, 0)[i]]), [0, 0]];
  return tfRun(() => {
    const xt = to3d(tf.tensor(x, xs), nsp);
    let y;
    if (type === 'max') {
      y = tf.maxPool3d(tf.pad(xt, padAll, -Infinity), k3, s3, 'valid');
    } else {
      const K = sizeOf(kernel);
      const sum = tf.mul(tf.avgPool3d(tf.pad(xt, padAll, 0), k3, s3, 'valid'), K);
      let m = tf.pad(tf.onesLike(xt), [[0, 0], ...lift(pad, nsp, 0).map((p) => [p, p]), [0, 0]], countIncludePad ? 1 : 0);
      m = tf.pad(m, [[0, 0], ...lift(ext, nsp, 0).map((e) => [0, e]), [0, 0]], 0);
      const cnt = tf.mul(tf.avgPool3d(m, k3, s3, 'valid'), K);
      y = tf.div(sum, tf.round(cnt));
    }
    return from3d(y, nsp);
  });
}

// ---- running blocks ---------------------------------------------------------------------------
const tolRef = { rtol: 1e-5, atol: 1e-5 };
const tolModes = { rtol: 1e-6, atol: 1e-6 };

// Calls `net` imperatively, then hybridized (twice: the build and the cached run); each output
// must have ref.shape and match ref.data within 1e-5, and the modes must agree within 1e-6.
// Returns the imperative output.
export function checkModes(net, inputs, ref, { tol = tolRef, msg = '' } = {}) {
  const y1 = net(...inputs);
  assert.deepEqual(y1.shape, ref.shape, `${msg} imperative output shape`);
  assertClose(y1.toTypedArray(), ref.data, { ...tol, msg: `${msg} imperative vs oracle` });
  net.hybridize();
  const y2 = net(...inputs);
  const y3 = net(...inputs);
  for (const [y, what] of [[y2, 'hybridized (first)'], [y3, 'hybridized (cached)']]) {
    assert.deepEqual(y.shape, ref.shape, `${msg} ${what} output shape`);
    assertClose(y.toTypedArray(), y1.toTypedArray(), { ...tolModes, msg: `${msg} ${what} vs imperative` });
    assertClose(y.toTypedArray(), ref.data, { ...tol, msg: `${msg} ${what} vs oracle` });
  }
  return y1;
}

// The exported graph of block(sym.var('data')) as parsed JSON, with helpers.
export function graphOf(block, input) {
  const json = JSON.parse(block(input).tojson());
  const ops = json.nodes.filter((n) => n.op !== 'null');
  const byName = Object.fromEntries(json.nodes.map((n) => [n.name, n]));
  const inputsOf = (node) => node.inputs.map(([i]) => json.nodes[i].name);
  return { json, ops, byName, inputsOf };
}

// One op node: op, name and exactly these attrs (a node without attrs counts as {}).
export function assertNode(node, op, name, attrs = {}) {
  assert.ok(node, `node ${name} exists`);
  assert.equal(node.op, op, `${name}: op`);
  assert.equal(node.name, name, `${name}: name`);
  assert.deepEqual(node.attrs ?? {}, attrs, `${name}: attrs`);
}

// The seed models of the training tests, built with the caller's module: Gluon's crash-course
// LeNet (shared with the demo and the example) and an MLP.
export { lenetOf } from '../../web-demo/digits.mjs';
export function mlpOf(mx) {
  const { nn } = mx.gluon;
  const net = new nn.HybridSequential();
  net.add(new nn.Dense(256, { activation: 'relu' }), new nn.Dense(128, { activation: 'relu' }), new nn.Dense(10));
  return net;
}
