// Peers benchmark: the same models, with the same weights, on mxnet-wasm (a hybridized Gluon
// block or SymbolBlock), TensorFlow.js's WASM backend (XNNPACK, SIMD, single thread in Node) and
// ONNX Runtime Web's wasm backend (numThreads = 1), in one Node process.
//
//   node bench/peers.mjs        (build first: bash scripts/build.sh wasm)
//   env: RUNS (timed runs per engine, default 7, at least 7), RUN_MS (target length of one run,
//        default 250), WARM_MS (warm-up per engine and model, default 1000), RESNET=0 skips the
//        conv stack, ONLY=<substring of a model name> runs only matching models.
//
// One timed iteration is what an application does per inference: copy a Float32Array input in,
// run the network, copy the output back out to a Float32Array. Each engine gets the input in
// its native layout (TF.js: NHWC, prepared outside the timing). Outputs are compared first
// (max difference relative to the largest reference value, must be <= 1e-4); then every engine
// is warmed up (V8 runs wasm through its baseline compiler first), and the timed runs are
// interleaved across engines so load changes on a shared machine hit all of them alike. The
// result is the median per iteration of each engine and the ratios peer / mxnet-wasm (> 1:
// mxnet-wasm is faster).
import os from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import * as mx from 'mxnet-wasm';
import { OnnxGraph } from './onnx_build.mjs';
import { median, oihwToHwio, transpose2d } from './common.mjs';

const { nd, gluon } = mx;
const { nn } = gluon;
const require = createRequire(import.meta.url);

const RUNS = Math.max(7, Number(process.env.RUNS ?? 7));
const RUN_MS = Number(process.env.RUN_MS ?? 250);
const WARM_MS = Number(process.env.WARM_MS ?? 1000);
const TOL = 1e-4;
// The real MXNet files: $MXW_MODELS (relative to the project root), default ../shared/models.
const MODELS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', process.env.MXW_MODELS || '../shared/models');
const LENET = path.join(MODELS, 'lenet-gluon');

// ---- peers: loaded defensively; an engine that cannot run here is left out with a note ----------
const notes = [];
let tf = null;
try {
  tf = await import('@tensorflow/tfjs-core');
  const { setWasmPaths } = await import('@tensorflow/tfjs-backend-wasm');
  // In Node the backend cannot find its .wasm files by itself: point it at the package's dist/.
  const dist = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'));
  setWasmPaths(dist + path.sep);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") returned false');
  await tf.ready();
} catch (e) {
  notes.push(`tfjs-wasm left out: ${e.message}`);
  tf = null;
}
let ort = null;
try {
  ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1; // single thread, as mxnet-wasm and tfjs-wasm here
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  // Creating a session is what instantiates the wasm: probe once so a failure is reported here.
  const g = new OnnxGraph('probe');
  const y = g.node('Relu', ['x']);
  const s = await ort.InferenceSession.create(g.finish(['x', [1]], [y, [1]]), { executionProviders: ['wasm'] });
  await s.run({ x: new ort.Tensor('float32', new Float32Array([1]), [1]) });
  await s.release();
} catch (e) {
  notes.push(`ort-web left out: ${e.message}`);
  ort = null;
}

// ---- helpers --------------------------------------------------------------------------------------
function rand(n, lo, hi, seed) { // deterministic uniform [lo, hi)
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = lo + (hi - lo) * (s / 4294967296);
  }
  return v;
}
const prod = (shape) => shape.reduce((a, b) => a * b, 1);

// NCHW <-> NHWC for whole tensors
function nchwToNhwc(x, [N, C, H, W]) {
  const out = new Float32Array(x.length);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let p = 0; p < H * W; p++) out[(n * H * W + p) * C + c] = x[(n * C + c) * H * W + p];
  return out;
}
function nhwcToNchw(x, [N, C, H, W]) {
  const out = new Float32Array(x.length);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let p = 0; p < H * W; p++) out[(n * C + c) * H * W + p] = x[(n * H * W + p) * C + c];
  return out;
}

// Max |a - ref| and that divided by max |ref| (the scale of the output).
function compare(a, ref) {
  if (a.length !== ref.length) return { abs: Infinity, rel: Infinity };
  let abs = 0, scale = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(a[i] - ref[i]);
    abs = Number.isNaN(d) ? Infinity : Math.max(abs, d);
    scale = Math.max(scale, Math.abs(ref[i]));
  }
  return { abs, rel: abs / (scale || 1) };
}

// ---- engines: each model builds { run(): Float32Array | Promise<Float32Array>, async, toRef } ---
// mxnet-wasm: a hybridized block; one iteration = nd.array in, forward, toTypedArray out.
function mxRunner(net, input, shape) {
  return {
    async: false,
    run() {
      const x = nd.array(input, { shape });
      const y = net(x);
      const out = y.toTypedArray();
      x.dispose();
      y.dispose();
      return out;
    },
  };
}
// TF.js: fwd maps a tf tensor to a tf tensor; weights are tf tensors created once.
function tfRunner(fwd, input, shape, toRef = (o) => o) {
  return {
    async: false,
    toRef,
    run() {
      const y = tf.tidy(() => fwd(tf.tensor(input, shape, 'float32')));
      const out = y.dataSync();
      y.dispose();
      return out;
    },
  };
}
// ORT Web: a session per (model, batch) with static shapes; run() is asynchronous by API.
async function ortRunner(bytes, input, shape) {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const [inName] = session.inputNames, [outName] = session.outputNames;
  return {
    async: true,
    session,
    async run() {
      const r = await session.run({ [inName]: new ort.Tensor('float32', input, shape) });
      return r[outName].data;
    },
  };
}

// ---- model 1: the seed MLP (Dense(256, relu) -> Dense(128, relu) -> Dense(2)) ---------------------
async function mlpModel() {
  mx.random.seed(0);
  const net = new nn.HybridSequential();
  const layers = [];
  net.nameScope(() => {
    layers.push(new nn.Dense(256, { activation: 'relu', inUnits: 512 }));
    layers.push(new nn.Dense(128, { activation: 'relu', inUnits: 256 }));
    layers.push(new nn.Dense(2, { inUnits: 128 }));
    for (const l of layers) net.add(l);
  });
  net.initialize();
  // The initializer's values (MXNet's default uniform(-0.07, 0.07), zero biases) are copied to the
  // peers; the biases get random values so that they are exercised too.
  const W = layers.map((l) => ({ w: l.weight.data().toTypedArray(), shape: l.weight.shape }));
  const B = layers.map((l, i) => rand(l.bias.shape[0], -0.1, 0.1, 100 + i));
  layers.forEach((l, i) => { const b = nd.array(B[i]); l.bias.setData(b); b.dispose(); });
  net.hybridize();
  const tfW = tf && W.map(({ w, shape }, i) => ({ w: tf.tensor(transpose2d(w, shape), [shape[1], shape[0]]), b: tf.tensor(B[i]) }));
  return {
    name: 'MLP 512-256-128-2',
    batches: [1, 64],
    inShape: (n) => [n, 512],
    inRange: [-1, 1],
    mx: (input, shape) => mxRunner(net, input, shape),
    tf: tfW && ((input, shape) => tfRunner((x) => {
      let h = tf.fused.matMul({ a: x, b: tfW[0].w, bias: tfW[0].b, activation: 'relu' });
      h = tf.fused.matMul({ a: h, b: tfW[1].w, bias: tfW[1].b, activation: 'relu' });
      return tf.fused.matMul({ a: h, b: tfW[2].w, bias: tfW[2].b });
    }, input, shape)),
    ort: ort && ((input, shape) => {
      const g = new OnnxGraph('mlp');
      let h = 'data';
      W.forEach(({ w, shape: ws }, i) => {
        h = g.node('Gemm', [h, g.init(`w${i}`, ws, w), g.init(`b${i}`, [ws[0]], B[i])], { transB: 1 });
        if (i < 2) h = g.node('Relu', [h]);
      });
      return ortRunner(g.finish(['data', shape], [h, [shape[0], 2]]), input, shape);
    }),
  };
}

// ---- model 2: LeNet from the shared MXNet export (SymbolBlock.imports) ----------------------------
async function lenetModel() {
  const net = await gluon.SymbolBlock.imports(`${LENET}/lenet-symbol.json`, ['data'], `${LENET}/lenet-0001.params`);
  net.hybridize();
  const loaded = await nd.load(`${LENET}/lenet-0001.params`);
  const P = {};
  for (const [k, v] of Object.entries(loaded)) {
    P[k.replace(/^arg:hybridsequential0_/, '')] = { v: v.toTypedArray(), shape: v.shape };
    v.dispose();
  }
  const need = ['conv0_weight', 'conv0_bias', 'conv1_weight', 'conv1_bias', 'dense0_weight', 'dense0_bias', 'dense1_weight', 'dense1_bias'];
  for (const k of need) if (!P[k]) throw new Error(`lenet params: ${k} missing`);
  // TF.js runs NHWC: the flattened features come out in (h, w, c) order, MXNet's in (c, h, w), so
  // dense0's input columns are permuted once here instead of transposing activations per call.
  let tfP = null;
  if (tf) {
    const [O0, I0] = P.dense0_weight.shape; // 32 x 80 = 32 x (5 * 4 * 4)
    const C = P.conv1_weight.shape[0], HW = I0 / C;
    const d0 = new Float32Array(I0 * O0); // [I0 (h, w, c), O0]
    for (let o = 0; o < O0; o++) for (let c = 0; c < C; c++) for (let p = 0; p < HW; p++) d0[(p * C + c) * O0 + o] = P.dense0_weight.v[o * I0 + c * HW + p];
    const conv = (k) => { const s = P[k].shape; return tf.tensor(oihwToHwio(P[k].v, s), [s[2], s[3], s[1], s[0]]); };
    tfP = {
      c0: conv('conv0_weight'), b0: tf.tensor(P.conv0_bias.v), c1: conv('conv1_weight'), b1: tf.tensor(P.conv1_bias.v),
      d0: tf.tensor(d0, [I0, O0]), db0: tf.tensor(P.dense0_bias.v),
      d1: tf.tensor(transpose2d(P.dense1_weight.v, P.dense1_weight.shape), [P.dense1_weight.shape[1], P.dense1_weight.shape[0]]),
      db1: tf.tensor(P.dense1_bias.v),
    };
  }
  return {
    name: 'LeNet (SymbolBlock)',
    batches: [1, 32],
    inShape: (n) => [n, 1, 28, 28],
    inRange: [0, 1],
    mx: (input, shape) => mxRunner(net, input, shape),
    // one input channel: NCHW and NHWC are the same bytes, so the input is passed as is
    tf: tfP && ((input, [n, , h, w]) => tfRunner((x) => {
      let y = tf.fused.conv2d({ x, filter: tfP.c0, strides: 1, pad: 'valid', bias: tfP.b0, activation: 'relu' });
      y = tf.maxPool(y, 2, 2, 'valid');
      y = tf.fused.conv2d({ x: y, filter: tfP.c1, strides: 1, pad: 'valid', bias: tfP.b1, activation: 'relu' });
      y = tf.maxPool(y, 2, 2, 'valid');
      y = tf.reshape(y, [y.shape[0], -1]);
      y = tf.fused.matMul({ a: y, b: tfP.d0, bias: tfP.db0, activation: 'relu' });
      return tf.fused.matMul({ a: y, b: tfP.d1, bias: tfP.db1 });
    }, input, [n, h, w, 1])),
    ort: ort && ((input, shape) => {
      const g = new OnnxGraph('lenet');
      const w = (k) => g.init(k, P[k].shape, P[k].v);
      let y = g.node('Conv', ['data', w('conv0_weight'), w('conv0_bias')], { kernel_shape: [5, 5] });
      y = g.node('Relu', [y]);
      y = g.node('MaxPool', [y], { kernel_shape: [2, 2], strides: [2, 2] });
      y = g.node('Conv', [y, w('conv1_weight'), w('conv1_bias')], { kernel_shape: [5, 5] });
      y = g.node('Relu', [y]);
      y = g.node('MaxPool', [y], { kernel_shape: [2, 2], strides: [2, 2] });
      y = g.node('Flatten', [y], { axis: 1 });
      y = g.node('Gemm', [y, w('dense0_weight'), w('dense0_bias')], { transB: 1 });
      y = g.node('Relu', [y]);
      y = g.node('Gemm', [y, w('dense1_weight'), w('dense1_bias')], { transB: 1 });
      return ortRunner(g.finish(['data', shape], [y, [shape[0], 10]]), input, shape);
    }),
  };
}

// ---- model 3: a ResNet-ish stack: 4 x (Conv 3x3, 64 -> 64, pad 1, BatchNorm folded, relu) on 56x56
async function convStackModel() {
  const C = 64, K = 3, DEPTH = 4, EPS = 1e-5;
  // Conv weights with He-uniform scale; BatchNorm inference statistics folded into the conv:
  // w' = w * gamma / sqrt(var + eps), b' = beta - mean * gamma / sqrt(var + eps).
  const layersW = [];
  for (let l = 0; l < DEPTH; l++) {
    const a = Math.sqrt(6 / (C * K * K));
    const w = rand(C * C * K * K, -a, a, 200 + l);
    const gamma = rand(C, 0.5, 1.5, 300 + l), beta = rand(C, -0.1, 0.1, 400 + l);
    const mean = rand(C, -0.1, 0.1, 500 + l), variance = rand(C, 0.5, 1.5, 600 + l);
    const b = new Float32Array(C);
    for (let o = 0; o < C; o++) {
      const s = gamma[o] / Math.sqrt(variance[o] + EPS);
      for (let i = 0; i < C * K * K; i++) w[o * C * K * K + i] *= s;
      b[o] = beta[o] - mean[o] * s;
    }
    layersW.push({ w, b, shape: [C, C, K, K] });
  }
  const net = new nn.HybridSequential();
  const convs = [];
  net.nameScope(() => {
    for (let l = 0; l < DEPTH; l++) {
      const c = new nn.Conv2D(C, K, { padding: 1, inChannels: C, activation: 'relu' });
      convs.push(c);
      net.add(c);
    }
  });
  net.initialize();
  convs.forEach((c, l) => {
    const w = nd.array(layersW[l].w, { shape: layersW[l].shape }), b = nd.array(layersW[l].b);
    c.weight.setData(w);
    c.bias.setData(b);
    w.dispose();
    b.dispose();
  });
  net.hybridize();
  const tfP = tf && layersW.map(({ w, b, shape }) => ({ f: tf.tensor(oihwToHwio(w, shape), [K, K, C, C]), b: tf.tensor(b) }));
  return {
    name: 'conv3x3 64ch 56x56 x4',
    batches: [1],
    inShape: (n) => [n, C, 56, 56],
    inRange: [-1, 1],
    mx: (input, shape) => mxRunner(net, input, shape),
    tf: tfP && ((input, shape) => {
      const [n, c, h, w] = shape;
      return tfRunner((x) => {
        let y = x;
        for (const p of tfP) y = tf.fused.conv2d({ x: y, filter: p.f, strides: 1, pad: 'same', bias: p.b, activation: 'relu' });
        return y;
      }, nchwToNhwc(input, shape), [n, h, w, c], (o) => nhwcToNchw(o, shape));
    }),
    ort: ort && ((input, shape) => {
      const g = new OnnxGraph('convstack');
      let y = 'data';
      layersW.forEach(({ w, b, shape: ws }, l) => {
        y = g.node('Conv', [y, g.init(`w${l}`, ws, w), g.init(`b${l}`, [C], b)], { kernel_shape: [K, K], pads: [1, 1, 1, 1] });
        y = g.node('Relu', [y]);
      });
      return ortRunner(g.finish(['data', shape], [y, shape]), input, shape);
    }),
  };
}

// ---- timing ---------------------------------------------------------------------------------------
// n iterations; returns elapsed ms. Synchronous engines run without awaiting per iteration.
async function runN(r, n) {
  const t0 = performance.now();
  if (r.async) for (let i = 0; i < n; i++) await r.run();
  else for (let i = 0; i < n; i++) r.run();
  return performance.now() - t0;
}
// Warm-up for WARM_MS, then picks the iteration count of one run (about RUN_MS long).
async function warm(r) {
  let n = 0;
  const t0 = performance.now();
  do { if (r.async) await r.run(); else r.run(); n++; } while (performance.now() - t0 < WARM_MS);
  const per = await runN(r, Math.max(1, Math.ceil(n / 10))) / Math.max(1, Math.ceil(n / 10));
  return Math.max(1, Math.round(RUN_MS / per));
}

// ---- main -----------------------------------------------------------------------------------------
const ENGINES = [
  { key: 'mx', label: 'mxnet-wasm' },
  { key: 'tf', label: 'tfjs-wasm' },
  { key: 'ort', label: 'ort-web' },
];
console.log(`peers benchmark: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ` +
  `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (shared machine: other processes may be running)`);
console.log(`  mxnet-wasm ${mx.version}: ${JSON.stringify(mx.features())}`);
if (tf) console.log(`  tfjs-wasm ${tf.version_core}: simd ${tf.env().getBool('WASM_HAS_SIMD_SUPPORT')}, threads ${tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT')}`);
if (ort) console.log(`  onnxruntime-web ${ort.env.versions?.web ?? ''}: wasm, numThreads ${ort.env.wasm.numThreads}, simd build`);
for (const n of notes) console.log(`  NOTE: ${n}`);
console.log(`  one iteration = input copied in, forward, output copied out; median of ${RUNS} interleaved runs of ~${RUN_MS} ms after ${WARM_MS} ms warm-up each\n`);

const builders = [mlpModel];
if (existsSync(LENET)) builders.push(lenetModel);
else console.log(`  NOTE: LeNet (SymbolBlock) skipped: real MXNet files not found at ${MODELS} (set MXW_MODELS)\n`);
if (process.env.RESNET !== '0') builders.push(convStackModel);
const rows = [];
let failed = false;
for (const build of builders) {
  const model = await build();
  if (process.env.ONLY && !model.name.includes(process.env.ONLY)) continue;
  for (const batch of model.batches) {
    const shape = model.inShape(batch);
    const input = rand(prod(shape), model.inRange[0], model.inRange[1], 7 + batch);
    const runners = {};
    for (const e of ENGINES) if (model[e.key]) runners[e.key] = await model[e.key](input, shape);
    // correctness first: every peer against mxnet-wasm on the same input
    const ref = runners.mx.run();
    const checks = [];
    for (const e of ENGINES.slice(1)) {
      const r = runners[e.key];
      if (!r) continue;
      const out = (r.toRef ?? ((o) => o))(await r.run());
      const { abs, rel } = compare(out, ref);
      checks.push(`${e.label} max |diff| ${abs.toExponential(2)} (${rel.toExponential(2)} of max |y|)`);
      if (!(rel <= TOL)) {
        failed = true;
        checks[checks.length - 1] += ` MISMATCH > ${TOL}: not timed`;
        delete runners[e.key];
      }
    }
    console.log(`${model.name}, batch ${batch}: ${checks.join('; ') || 'no peer to check'}`);
    // warm-up and calibration, then interleaved timed runs
    const iters = {}, times = {};
    for (const k of Object.keys(runners)) { iters[k] = await warm(runners[k]); times[k] = []; }
    for (let run = 0; run < RUNS; run++) {
      for (const k of Object.keys(runners)) times[k].push((await runN(runners[k], iters[k])) / iters[k]);
    }
    const med = Object.fromEntries(Object.keys(times).map((k) => [k, median(times[k])]));
    const ms = (k) => (med[k] === undefined ? '-' : +med[k].toFixed(med[k] < 1 ? 4 : 2));
    const ratio = (k) => (med[k] === undefined ? '-' : +(med[k] / med.mx).toFixed(2));
    rows.push({
      model: model.name, batch,
      'mxnet-wasm ms': ms('mx'), 'tfjs-wasm ms': ms('tf'), 'ort-web ms': ms('ort'),
      'tfjs / mx': ratio('tf'), 'ort / mx': ratio('ort'),
      iters: Object.keys(iters).map((k) => iters[k]).join('/'),
    });
    for (const r of Object.values(runners)) if (r.session) await r.session.release();
  }
}
console.log(`\nmedian ms per iteration (${RUNS} runs each) and ratios peer / mxnet-wasm (> 1: mxnet-wasm is faster); ` +
  `iters = iterations per run (mx/tf/ort)`);
console.table(rows);
for (const n of notes) console.log(`NOTE: ${n}`);
if (failed) {
  console.log('FAILED: some outputs differ by more than the tolerance (those peers were not timed)');
  process.exitCode = 1;
}
