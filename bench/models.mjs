// The peers benchmark's models, written once as a small layer graph and turned into a hybridized
// Gluon block (mxnet-wasm), a TF.js forward function and an ONNX graph, all holding the same
// deterministic random weights. Plain ES module with no imports of its own beyond common.mjs, so
// the browser page of bench/peers_browser.mjs loads it too.
//
// Architectures follow MXNet 1.9.1's sources:
// - ResNet-18 v1: gluon/model_zoo/vision/resnet.py (ResNetV1 + BasicBlockV1, layers [2, 2, 2, 2],
//   channels [64, 64, 128, 256, 512]): 7x7/2 stem without bias, BatchNorm, relu, 3x3/2 max pool
//   with pad 1; each block conv3x3-BN-relu-conv3x3-BN (+ 1x1/stride conv-BN downsample when the
//   channels change), residual add, relu; global average pool; Dense(1000).
// - MobileNet v2 1.0: gluon/model_zoo/vision/mobilenet.py (MobileNetV2 + LinearBottleneck): every
//   conv without bias and followed by BatchNorm(scale=True), activations RELU6 = clip(x, 0, 6);
//   each bottleneck expands 1x1 (also when t = 1, as MXNet's does), depthwise 3x3, projects 1x1
//   linearly, and adds the input when stride 1 and in == out channels; last 1x1 conv to 1280,
//   global average pool, output 1x1 conv to 1000 without bias, Flatten.
// - the seed MLP 512-256(relu)-128(relu)-2 and the seed LeNet: Conv2D(6, 5) relu, max pool 2,
//   Conv2D(16, 5) relu, max pool 2, Dense 120 relu, 84 relu, 10 (input 1x28x28).
//
// Peers get what their own converters would give them: TF.js runs NHWC with the BatchNorms folded
// into the convolutions (w * gamma / sqrt(var + eps), as tfjs-converter's graph optimizer does) and
// fused activations; ONNX Runtime gets the plain graph (Conv, BatchNormalization, Relu/Clip, ...)
// and fuses it itself (graphOptimizationLevel 'all'). mxnet-wasm runs the Gluon blocks as a user
// writes them (BatchNorm layers included), hybridized.
import { rand } from './common.mjs';

const EPS = 1e-5; // Gluon BatchNorm's default epsilon

// ---- the layer graph ------------------------------------------------------------------------------
// Nodes: conv {name, cin, cout, k, stride, pad, groups, bias, act}, bn {name, c}, act {type},
// maxpool {k, stride, pad}, gap, flatten, dense {name, in, units, act}, seq {items},
// residual {body, shortcut (null: identity), act}, matmul {name, k, n}.
class Graph {
  constructor(seed) { this.params = new Map(); this.seed = seed; this.count = 0; }
  param(name, shape, lo, hi) {
    const n = shape.reduce((a, b) => a * b, 1);
    this.params.set(name, { shape, data: rand(n, lo, hi, this.seed * 7919 + this.count++) });
    return name;
  }
  conv(name, cin, cout, k, { stride = 1, pad = 0, groups = 1, bias = false, act = null } = {}) {
    const a = Math.sqrt(6 / ((cin / groups) * k * k)); // He-uniform: keeps activations O(1) through depth
    this.param(`${name}_weight`, [cout, cin / groups, k, k], -a, a);
    if (bias) this.param(`${name}_bias`, [cout], -0.1, 0.1);
    return { op: 'conv', name, cin, cout, k, stride, pad, groups, bias, act };
  }
  bn(name, c) {
    this.param(`${name}_gamma`, [c], 0.8, 1.2);
    this.param(`${name}_beta`, [c], -0.1, 0.1);
    this.param(`${name}_running_mean`, [c], -0.1, 0.1);
    this.param(`${name}_running_var`, [c], 0.8, 1.2);
    return { op: 'bn', name, c };
  }
  dense(name, inUnits, units, act = null) {
    const a = Math.sqrt(6 / inUnits);
    this.param(`${name}_weight`, [units, inUnits], -a, a);
    this.param(`${name}_bias`, [units], -0.1, 0.1);
    return { op: 'dense', name, in: inUnits, units, act };
  }
}
const seq = (...items) => ({ op: 'seq', items: items.flat() });
const act = (type) => ({ op: 'act', type });

function mlp() {
  const g = new Graph(1);
  const root = seq(g.dense('dense0', 512, 256, 'relu'), g.dense('dense1', 256, 128, 'relu'), g.dense('dense2', 128, 2));
  return { root, params: g.params };
}

function lenet() {
  const g = new Graph(2);
  const root = seq(
    g.conv('conv0', 1, 6, 5, { bias: true, act: 'relu' }), { op: 'maxpool', k: 2, stride: 2, pad: 0 },
    g.conv('conv1', 6, 16, 5, { bias: true, act: 'relu' }), { op: 'maxpool', k: 2, stride: 2, pad: 0 },
    { op: 'flatten' }, g.dense('dense0', 256, 120, 'relu'), g.dense('dense1', 120, 84, 'relu'),
    g.dense('dense2', 84, 10));
  return { root, params: g.params };
}

function resnet18() {
  const g = new Graph(3);
  const items = [g.conv('conv0', 3, 64, 7, { stride: 2, pad: 3 }), g.bn('bn0', 64), act('relu'),
    { op: 'maxpool', k: 3, stride: 2, pad: 1 }];
  const channels = [64, 64, 128, 256, 512];
  for (let stage = 1; stage <= 4; stage++) {
    for (let b = 0; b < 2; b++) {
      const cin = b === 0 ? channels[stage - 1] : channels[stage], c = channels[stage];
      const stride = b === 0 && stage > 1 ? 2 : 1;
      const p = `stage${stage}_block${b}`;
      const body = seq(g.conv(`${p}_conv0`, cin, c, 3, { stride, pad: 1 }), g.bn(`${p}_bn0`, c), act('relu'),
        g.conv(`${p}_conv1`, c, c, 3, { pad: 1 }), g.bn(`${p}_bn1`, c));
      const shortcut = cin !== c ? seq(g.conv(`${p}_down`, cin, c, 1, { stride }), g.bn(`${p}_downbn`, c)) : null;
      items.push({ op: 'residual', body, shortcut, act: 'relu' });
    }
  }
  items.push({ op: 'gap' }, g.dense('dense0', 512, 1000));
  return { root: seq(items), params: g.params };
}

function mobilenetV2() {
  const g = new Graph(4);
  let n = 0;
  const convBn = (cin, cout, k, { stride = 1, groups = 1, active = true } = {}) => {
    const name = `conv${n++}`;
    return [g.conv(name, cin, cout, k, { stride, pad: (k - 1) / 2, groups }), g.bn(`${name}_bn`, cout),
      ...(active ? [act('relu6')] : [])];
  };
  const items = convBn(3, 32, 3, { stride: 2 });
  const inC = [32, 16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160];
  const outC = [16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320];
  const ts = [1, ...new Array(16).fill(6)];
  const strides = [1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1];
  for (let i = 0; i < inC.length; i++) {
    const mid = inC[i] * ts[i];
    const body = seq(convBn(inC[i], mid, 1), convBn(mid, mid, 3, { stride: strides[i], groups: mid }),
      convBn(mid, outC[i], 1, { active: false }));
    items.push(strides[i] === 1 && inC[i] === outC[i] ? { op: 'residual', body, shortcut: null, act: null } : body);
  }
  items.push(...convBn(320, 1280, 1), { op: 'gap' }, g.conv('pred', 1280, 1000, 1), { op: 'flatten' });
  return { root: seq(items), params: g.params };
}

function gemm() {
  const g = new Graph(5);
  g.param('w', [1024, 1024], -1 / 32, 1 / 32);
  return { root: { op: 'matmul', name: 'w', k: 1024, n: 1024 }, params: g.params };
}

// key, name, batches, input shape (NCHW), input range, build, tolerance of max |y - ref| / max |ref|
export const MODELS = [
  { key: 'mlp', name: 'MLP 512-256-128-2', batches: [1, 64], inShape: (n) => [n, 512], range: [-1, 1], build: mlp,
    tol: 1e-4 },
  { key: 'lenet', name: 'LeNet 6c5-16c5-120-84-10', batches: [1, 16], inShape: (n) => [n, 1, 28, 28], range: [0, 1],
    build: lenet, tol: 1e-4 },
  { key: 'resnet18', name: 'ResNet-18 v1 224', batches: [1], inShape: (n) => [n, 3, 224, 224], range: [-1, 1],
    build: resnet18, tol: 1e-3 },
  { key: 'mobilenetv2', name: 'MobileNet v2 1.0 224', batches: [1], inShape: (n) => [n, 3, 224, 224], range: [-1, 1],
    build: mobilenetV2, tol: 1e-3 },
  { key: 'gemm', name: 'GEMM 1024^3', batches: [1024], inShape: (n) => [n, 1024], range: [-1, 1], build: gemm,
    tol: 1e-4 },
];
export const modelByKey = (key) => {
  const m = MODELS.find((x) => x.key === key);
  if (!m) throw new Error(`bench: no model ${key}`);
  return m;
};
// The input of (model, batch): the same bytes in every process.
export function modelInput(model, batch) {
  const shape = model.inShape(batch);
  let seed = batch;
  for (const ch of model.key) seed = (seed * 31 + ch.charCodeAt(0)) >>> 0;
  return { shape, data: rand(shape.reduce((a, b) => a * b, 1), model.range[0], model.range[1], seed) };
}

// ---- mxnet-wasm: Gluon blocks ------------------------------------------------------------------------
// Returns { forward(NDArray) -> NDArray, dispose() }.
export function buildMx(mx, { root, params }) {
  const { nd, gluon } = mx;
  const { nn } = gluon;
  if (root.op === 'matmul') {
    const p = params.get(root.name);
    const w = nd.array(p.data, { shape: p.shape });
    return { forward: (x) => nd.dot(x, w), dispose: () => w.dispose() };
  }
  class RELU6 extends gluon.HybridBlock { // mobilenet.py's RELU6
    hybridForward(F, x) { return F.clip(x, { a_min: 0, a_max: 6, name: 'relu6' }); }
  }
  class Residual extends gluon.HybridBlock { // resnet.py's BasicBlockV1, mobilenet.py's LinearBottleneck
    constructor(node) {
      super();
      this._act = node.act;
      this.body = layer(node.body);
      if (node.shortcut) this.downsample = layer(node.shortcut);
    }
    hybridForward(F, x) {
      const y = F.elemwise_add(this.body(x), this.downsample ? this.downsample(x) : x);
      return this._act ? F.Activation(y, { act_type: this._act }) : y;
    }
  }
  const assign = []; // [Parameter, params key]
  function layer(node) {
    switch (node.op) {
      case 'seq': {
        const s = new nn.HybridSequential();
        for (const item of node.items) s.add(layer(item));
        return s;
      }
      case 'conv': {
        const c = new nn.Conv2D(node.cout, node.k, { strides: node.stride, padding: node.pad, groups: node.groups,
          useBias: node.bias, inChannels: node.cin, activation: node.act });
        assign.push([c.weight, `${node.name}_weight`]);
        if (node.bias) assign.push([c.bias, `${node.name}_bias`]);
        return c;
      }
      case 'bn': {
        const b = new nn.BatchNorm({ inChannels: node.c });
        for (const k of ['gamma', 'beta', 'running_mean', 'running_var']) assign.push([b[k], `${node.name}_${k}`]);
        return b;
      }
      case 'dense': {
        const d = new nn.Dense(node.units, { activation: node.act, inUnits: node.in });
        assign.push([d.weight, `${node.name}_weight`], [d.bias, `${node.name}_bias`]);
        return d;
      }
      case 'act': return node.type === 'relu6' ? new RELU6() : new nn.Activation(node.type);
      case 'maxpool': return new nn.MaxPool2D(node.k, node.stride, node.pad);
      case 'gap': return new nn.GlobalAvgPool2D();
      case 'flatten': return new nn.Flatten();
      case 'residual': return new Residual(node);
      default: throw new Error(`bench: mx has no layer for ${node.op}`);
    }
  }
  const net = layer(root);
  net.initialize();
  for (const [param, key] of assign) {
    const p = params.get(key);
    const a = nd.array(p.data, { shape: p.shape });
    param.setData(a);
    a.dispose();
  }
  net.hybridize({ static_alloc: true, static_shape: true });
  return { forward: (x) => net(x), dispose: () => {}, net };
}

// ---- TF.js: NHWC, BatchNorm folded, activations fused ------------------------------------------------
// inShape: one sample's shape, [C, H, W] or [K]. Returns { forward(tf.Tensor NHWC) -> tf.Tensor, dispose() }.
// Outputs are 2-D, the same in both layouts.
export function buildTf(tf, { root, params }, inShape) {
  const tensors = [];
  const T = (data, shape) => { const t = tf.tensor(data, shape, 'float32'); tensors.push(t); return t; };
  const P = (k) => params.get(k);
  let shape = inShape; // [C, H, W] or [K], tracked through the layers

  // A conv with the BatchNorm after it folded in and its activation fused: one step (x) => y.
  function convStep(node, bn, activation) {
    const { cin, cout, k, stride, pad, groups } = node;
    const w = P(`${node.name}_weight`).data;
    const scale = new Float32Array(cout).fill(1), shift = new Float32Array(cout);
    if (node.bias) shift.set(P(`${node.name}_bias`).data);
    if (bn) {
      const [g, b, m, v] = ['gamma', 'beta', 'running_mean', 'running_var'].map((s) => P(`${bn.name}_${s}`).data);
      for (let o = 0; o < cout; o++) {
        scale[o] = g[o] / Math.sqrt(v[o] + EPS);
        shift[o] = (shift[o] - m[o]) * scale[o] + b[o];
      }
    }
    const depthwise = groups > 1;
    if (depthwise && !(groups === cin && cin === cout)) {
      throw new Error('bench: tf builds plain and depthwise convs only');
    }
    const ci = depthwise ? 1 : cin;
    const f = new Float32Array(w.length); // OIHW -> HWIO (regular) or [H, W, C, 1] (depthwise)
    for (let o = 0; o < cout; o++) {
      for (let i = 0; i < ci; i++) for (let y = 0; y < k; y++) for (let x = 0; x < k; x++) {
        const v = w[((o * ci + i) * k + y) * k + x] * scale[o];
        if (depthwise) f[(y * k + x) * cout + o] = v;
        else f[((y * k + x) * cin + i) * cout + o] = v;
      }
    }
    const filter = T(f, depthwise ? [k, k, cout, 1] : [k, k, cin, cout]), bias = T(shift, [cout]);
    const args = { strides: stride, pad, bias, activation: activation ?? 'linear' };
    const out = (s) => Math.floor((s + 2 * pad - k) / stride) + 1;
    shape = [cout, out(shape[1]), out(shape[2])];
    if (depthwise) return (x) => tf.fused.depthwiseConv2d({ x, filter, ...args });
    return (x) => tf.fused.conv2d({ x, filter, ...args });
  }

  // The steps of a list of nodes.
  function emit(items) {
    const steps = [];
    for (let i = 0; i < items.length; i++) {
      const node = items[i];
      switch (node.op) {
        case 'seq': steps.push(...emit(node.items)); break;
        case 'conv': {
          let bn = null, activation = node.act;
          if (items[i + 1]?.op === 'bn') bn = items[++i];
          if (!activation && items[i + 1]?.op === 'act') activation = items[++i].type;
          steps.push(convStep(node, bn, activation));
          break;
        }
        case 'act': steps.push(node.type === 'relu6' ? (x) => tf.relu6(x) : (x) => tf.relu(x)); break;
        case 'maxpool': {
          const { k, stride, pad } = node;
          steps.push((x) => tf.maxPool(x, k, stride, pad));
          const out = (s) => Math.floor((s + 2 * pad - k) / stride) + 1;
          shape = [shape[0], out(shape[1]), out(shape[2])];
          break;
        }
        case 'gap': steps.push((x) => tf.mean(x, [1, 2], true)); shape = [shape[0], 1, 1]; break;
        case 'flatten': steps.push((x) => tf.reshape(x, [x.shape[0], -1])); break;
        case 'dense': {
          // MXNet flattens (C, H, W); TF.js (H, W, C): permute the weight's input columns once here.
          const w = P(`${node.name}_weight`).data, I = node.in, O = node.units;
          const [C, H = 1, W = 1] = shape;
          const t = new Float32Array(I * O); // [I (h, w, c), O]
          for (let o = 0; o < O; o++) for (let c = 0; c < C; c++) for (let p = 0; p < H * W; p++) {
            t[(p * C + c) * O + o] = w[o * I + c * H * W + p];
          }
          const b = T(new Float32Array(P(`${node.name}_bias`).data), [O]), wt = T(t, [I, O]);
          const activation = node.act ?? 'linear';
          const flat = (x) => (x.rank > 2 ? tf.reshape(x, [x.shape[0], -1]) : x);
          steps.push((x) => tf.fused.matMul({ a: flat(x), b: wt, bias: b, activation }));
          shape = [O];
          break;
        }
        case 'residual': {
          const start = shape;
          const body = emit([node.body]);
          const after = shape;
          shape = start;
          const short = node.shortcut ? emit([node.shortcut]) : [];
          shape = after;
          steps.push((x) => {
            const y = tf.add(body.reduce((h, f) => f(h), x), short.reduce((h, f) => f(h), x));
            return node.act ? tf.relu(y) : y;
          });
          break;
        }
        case 'matmul': {
          const w = T(P(node.name).data, [node.k, node.n]);
          steps.push((x) => tf.matMul(x, w));
          break;
        }
        default: throw new Error(`bench: tf has no step for ${node.op}`);
      }
    }
    return steps;
  }
  const steps = emit([root]);
  return {
    forward: (x) => steps.reduce((h, f) => f(h), x),
    dispose: () => { for (const t of tensors) t.dispose(); },
  };
}

// NCHW data -> [NHWC data, NHWC shape] (2-D data and one channel: the same bytes).
export function toNhwc(data, shape) {
  if (shape.length !== 4) return [data, shape];
  const [N, C, H, W] = shape;
  if (C === 1) return [data, [N, H, W, C]];
  const out = new Float32Array(data.length);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let p = 0; p < H * W; p++) {
    out[(n * H * W + p) * C + c] = data[(n * C + c) * H * W + p];
  }
  return [out, [N, H, W, C]];
}

// ---- ONNX: the plain graph ---------------------------------------------------------------------------
// g: an OnnxGraph (bench/onnx_build.mjs). Returns the output name.
export function buildOnnx(g, { root, params }, input) {
  const init = (k) => { const p = params.get(k); return g.init(k, p.shape, p.data); };
  const flat = new Set([input]); // 2-D values (Gemm needs one; MXNet's Dense flattens by itself)
  let clip = null; // Clip's min and max inputs (opset 13), made once
  function node(n, x) {
    switch (n.op) {
      case 'seq': return n.items.reduce((h, item) => node(item, h), x);
      case 'conv': {
        const ins = [x, init(`${n.name}_weight`), ...(n.bias ? [init(`${n.name}_bias`)] : [])];
        const y = g.node('Conv', ins, { kernel_shape: [n.k, n.k], strides: [n.stride, n.stride],
          pads: [n.pad, n.pad, n.pad, n.pad], group: n.groups });
        return n.act ? g.node('Relu', [y]) : y;
      }
      case 'bn': return g.node('BatchNormalization',
        [x, ...['gamma', 'beta', 'running_mean', 'running_var'].map((s) => init(`${n.name}_${s}`))], { epsilon: EPS });
      case 'act':
        if (n.type === 'relu') return g.node('Relu', [x]);
        clip ??= [g.init('relu6_min', [], [0]), g.init('relu6_max', [], [6])];
        return g.node('Clip', [x, ...clip]);
      case 'maxpool': return g.node('MaxPool', [x], { kernel_shape: [n.k, n.k], strides: [n.stride, n.stride],
        pads: [n.pad, n.pad, n.pad, n.pad] });
      case 'gap': return g.node('GlobalAveragePool', [x]);
      case 'flatten': { const y = g.node('Flatten', [x], { axis: 1 }); flat.add(y); return y; }
      case 'dense': {
        const y = g.node('Gemm', [flat.has(x) ? x : g.node('Flatten', [x], { axis: 1 }), init(`${n.name}_weight`),
          init(`${n.name}_bias`)], { transB: 1 });
        const out = n.act ? g.node('Relu', [y]) : y;
        flat.add(out);
        return out;
      }
      case 'residual': {
        const y = g.node('Add', [node(n.body, x), n.shortcut ? node(n.shortcut, x) : x]);
        return n.act ? g.node('Relu', [y]) : y;
      }
      case 'matmul': return g.node('MatMul', [x, init(n.name)]);
      default: throw new Error(`bench: onnx has no node for ${n.op}`);
    }
  }
  return node(root, input);
}
