// An independent reference runtime for the model tests: reads MXNet's symbol JSON with
// JSON.parse and .params files with a small DataView parser of its own, then runs the graph
// op by op with TensorFlow.js's CPU kernels (NCHW data transposed to NHWC around convolutions
// and pooling). None of the library's C code is involved. Not a test file itself.
import { tf } from './oracle.mjs';

// ---- .params (dense V1/V2 and legacy records) ---------------------------------------------------
const DTYPE_BYTES = { 0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8 };
export function readParams(buf) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let off = 0;
  const u32 = () => { const v = dv.getUint32(off, true); off += 4; return v; };
  const u64 = () => { const v = Number(dv.getBigUint64(off, true)); off += 8; return v; };
  if (u64() !== 0x112) throw new Error('not an NDArray file');
  u64();
  const n = u64();
  const arrays = [];
  for (let i = 0; i < n; i++) {
    const magic = u32();
    let shape;
    if (magic === 0xf993fac9 || magic === 0xf993fac8) {
      if (magic === 0xf993fac9 && u32() !== 0) throw new Error('sparse record');
      const nd = u32();
      shape = Array.from({ length: nd }, u64);
    } else {
      shape = Array.from({ length: magic }, u32);
    }
    u32(); u32();
    const dtype = u32();
    if (dtype !== 0) throw new Error(`dtype ${dtype} not handled by the reference reader`);
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    for (let k = 0; k < size; k++) data[k] = dv.getFloat32(off + 4 * k, true);
    off += size * DTYPE_BYTES[dtype];
    arrays.push({ shape, data });
  }
  const k = u64();
  const out = {};
  for (let i = 0; i < k; i++) {
    const len = u64();
    const name = new TextDecoder().decode(buf.subarray(off, off + len));
    off += len;
    out[name.replace(/^(arg|aux):/, '')] = arrays[i];
  }
  return out;
}

// ---- attributes -----------------------------------------------------------------------------------------
const tuple = (s, d) => (s === undefined ? d : s.replace(/[()[\]\s]/g, '').split(',').filter((x) => x !== '').map(Number));
const bool = (s, d) => (s === undefined ? d : /^(true|1)$/i.test(s));
const num = (s, d) => (s === undefined ? d : Number(s));

const toNHWC = (x) => tf.transpose(x, [0, 2, 3, 1]);
const toNCHW = (x) => tf.transpose(x, [0, 3, 1, 2]);

function conv(x, w, b, a) {
  const k = tuple(a.kernel);
  if (k.length !== 2) throw new Error('reference conv: 2-D only');
  const stride = tuple(a.stride, [1, 1]), pad = tuple(a.pad, [0, 0]), dil = tuple(a.dilate, [1, 1]);
  const groups = num(a.num_group, 1);
  let h = toNHWC(x);
  h = tf.pad(h, [[0, 0], [pad[0], pad[0]], [pad[1], pad[1]], [0, 0]]);
  const C = x.shape[1], F = w.shape[0];
  let y;
  if (groups === 1) {
    y = tf.conv2d(h, tf.transpose(w, [2, 3, 1, 0]), stride, 'valid', 'NHWC', dil);
  } else if (groups === C && F === C) {
    y = tf.depthwiseConv2d(h, tf.transpose(w, [2, 3, 0, 1]), stride, 'valid', 'NHWC', dil);
  } else {
    const hs = tf.split(h, groups, 3), ws = tf.split(w, groups, 0);
    y = tf.concat(hs.map((hg, g) => tf.conv2d(hg, tf.transpose(ws[g], [2, 3, 1, 0]), stride, 'valid', 'NHWC', dil)), 3);
  }
  if (b) y = tf.add(y, b);
  return toNCHW(y);
}

function pool(x, a) {
  const type = a.pool_type ?? 'max';
  if (bool(a.global_pool, false)) {
    return type === 'max' ? tf.max(x, [2, 3], true) : tf.mean(x, [2, 3], true);
  }
  const k = tuple(a.kernel), s = tuple(a.stride, [1, 1]), p = tuple(a.pad, [0, 0]);
  const conv = a.pooling_convention ?? 'valid';
  const [H, W] = [x.shape[2], x.shape[3]];
  const out = (n, i) => (conv === 'full' ? 1 + Math.ceil((n + 2 * p[i] - k[i]) / s[i]) : 1 + Math.floor((n + 2 * p[i] - k[i]) / s[i]));
  const oh = out(H, 0), ow = out(W, 1);
  const extraH = Math.max(0, (oh - 1) * s[0] + k[0] - (H + 2 * p[0]));
  const extraW = Math.max(0, (ow - 1) * s[1] + k[1] - (W + 2 * p[1]));
  if (type !== 'max') throw new Error('reference pooling: max or global only');
  const h = tf.pad(toNHWC(x), [[0, 0], [p[0], p[0] + extraH], [p[1], p[1] + extraW], [0, 0]], -3.4028234663852886e38);
  return toNCHW(tf.maxPool(h, k, s, 'valid'));
}

function softmaxAxis1(x) {
  return tf.transpose(tf.softmax(tf.transpose(x, [0, ...x.shape.slice(2).map((_, i) => i + 2), 1])), [0, x.shape.length - 1, ...x.shape.slice(2).map((_, i) => i + 1)]);
}

function reshape(x, a) {
  const spec = tuple(a.shape);
  const out = [];
  spec.forEach((d, i) => out.push(d === 0 ? x.shape[i] : d));
  const known = out.filter((d) => d !== -1).reduce((p, q) => p * q, 1);
  return tf.reshape(x, out.map((d) => (d === -1 ? x.size / known : d)));
}

const OPS = {
  Convolution: (ins, a) => conv(ins[0], ins[1], bool(a.no_bias, false) ? null : ins[2], a),
  Pooling: ([x], a) => pool(x, a),
  Activation: ([x], a) => ({ relu: tf.relu, sigmoid: tf.sigmoid, tanh: tf.tanh, softrelu: tf.softplus })[a.act_type](x),
  LeakyReLU: ([x, g], a) => {
    const t = a.act_type ?? 'leaky';
    if (t === 'prelu') return tf.prelu(x, tf.reshape(g, [1, g.size, ...x.shape.slice(2).map(() => 1)]));
    if (t === 'leaky') return tf.leakyRelu(x, num(a.slope, 0.25));
    throw new Error(`reference LeakyReLU: ${t}`);
  },
  BatchNorm: ([x, g, b, m, v], a) => {
    const C = x.shape[1], sh = [1, C, ...x.shape.slice(2).map(() => 1)];
    const gamma = bool(a.fix_gamma, true) ? tf.onesLike(g) : g;
    const inv = tf.rsqrt(tf.add(v, num(a.eps, 1e-3)));
    return tf.add(tf.mul(tf.mul(tf.sub(x, tf.reshape(m, sh)), tf.reshape(inv, sh)), tf.reshape(gamma, sh)), tf.reshape(b, sh));
  },
  FullyConnected: ([x, w, b], a) => {
    const flat = bool(a.flatten, true) ? tf.reshape(x, [x.shape[0], -1]) : x;
    const y = tf.matMul(flat, w, false, true);
    return bool(a.no_bias, false) ? y : tf.add(y, b);
  },
  Flatten: ([x]) => tf.reshape(x, [x.shape[0], -1]),
  SoftmaxActivation: ([x], a) => ((a.mode ?? 'instance') === 'channel' ? softmaxAxis1(x) : tf.softmax(x)),
  SoftmaxOutput: ([x]) => tf.reshape(tf.softmax(tf.reshape(x, [x.shape[0], -1])), x.shape),
  UpSampling: ([x], a) => {
    const s = num(a.scale);
    return toNCHW(tf.image.resizeNearestNeighbor(toNHWC(x), [x.shape[2] * s, x.shape[3] * s]));
  },
  Crop: ([x, like]) => tf.slice(x, [0, 0, 0, 0], [x.shape[0], x.shape[1], like.shape[2], like.shape[3]]),
  elemwise_add: ([x, y]) => tf.add(x, y),
  Concat: (ins, a) => tf.concat(ins, num(a.dim, 1)),
  Reshape: ([x], a) => reshape(x, a),
  Dropout: ([x]) => x,
};

// Runs the graph; inputs: {name: {shape, data}}, params: from readParams. Returns the heads as
// Float32Arrays.
export function runGraph(json, params, inputs) {
  const g = JSON.parse(json);
  return tf.tidy(() => {
    const vals = [];
    g.nodes.forEach((n, i) => {
      if (n.op === 'null') {
        const src = inputs[n.name] ?? params[n.name];
        vals[i] = src ? [tf.tensor(src.data, src.shape)] : [null];
        return;
      }
      const attrs = { ...(n.param ?? {}), ...(n.attr ?? {}), ...(n.attrs ?? {}) };
      const ins = n.inputs.map(([id, idx]) => vals[id][idx]);
      const fn = OPS[n.op];
      if (!fn) throw new Error(`reference runtime: no ${n.op}`);
      vals[i] = [fn(ins, attrs)];
    });
    return g.heads.map(([id, idx]) => vals[id][idx].dataSync());
  });
}
