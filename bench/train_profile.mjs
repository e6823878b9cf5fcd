// Where the time of a training step goes (the models and batches of bench/train.mjs): the CPU time
// of each kernel the step runs, called alone at the step's shapes, next to the CPU time of whole
// steps, imperative and hybridized, and the per-op cost of the imperative machinery. CPU time
// (process.cpuUsage) rather than wall time, so that other processes on a shared machine disturb
// the numbers less; medians of repeated runs.
//
//   node bench/train_profile.mjs        (not part of npm run bench; build first)
//   env: ONLY=<substring of a model name>
import * as mx from 'mxnet-wasm';
import { median } from './common.mjs';

const { nd, gluon, autograd } = mx;
const { nn } = gluon;
// CPU ms per call of f: n calls per run after n warm-up calls, median of `reps` runs
function cpuMs(f, n, reps = 7) {
  for (let i = 0; i < n; i++) f();
  const t = [];
  for (let r = 0; r < reps; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) f();
    const d = process.cpuUsage(t0);
    t.push((d.user + d.system) / 1000 / n);
  }
  return median(t);
}
const R = (shape) => nd.random.uniform(-1, 1, shape);
const kernelRow = (name, ms, macs) => ({ kernel: name, 'cpu ms': +ms.toFixed(3), 'GFLOP/s': macs ? +(2 * macs / ms / 1e6).toFixed(1) : '-' });

// ---- the models (as bench/train.mjs) and the kernels one step runs, at the step's shapes ---------------
const MODELS = [
  {
    name: 'MLP 784-256-128-10', batch: 64, inShape: (n) => [n, 784], n: 30,
    build() {
      const net = new nn.HybridSequential();
      net.add(new nn.Dense(256, { activation: 'relu', inUnits: 784 }), new nn.Dense(128, { activation: 'relu', inUnits: 256 }),
        new nn.Dense(10, { inUnits: 128 }));
      return net;
    },
    kernels(B) {
      const k = [];
      for (const [i, o] of [[784, 256], [256, 128], [128, 10]]) {
        const x = R([B, i]), w = R([o, i]), b = R([o]), g = R([B, o]);
        k.push([`FullyConnected ${B}x${i} -> ${o}`, () => nd.FullyConnected(x, w, b, { num_hidden: o }), B * i * o, 'fwd']);
        // the first layer's data needs no gradient: a step runs only its weight half
        // (_backward_FullyConnected_weight), and only that counts in the kernel sum
        k.push([`_backward_FullyConnected ${i} -> ${o} (dX, dW, db)`, () => nd._backward_FullyConnected(g, x, w, { num_hidden: o }),
          2 * B * i * o, i === 784 ? 'part' : 'bwd']);
        if (i === 784) {
          k.push([`  of which dX = G W (not run: the data needs no gradient)`, () => nd.dot(g, w), B * i * o, 'part']);
          k.push([`  of which dW, db (what the step runs)`, () => nd._backward_FullyConnected_weight(g, x, { num_hidden: o }),
            B * i * o, 'bwd']);
        }
        if (o !== 10) {
          const h = R([B, o]);
          k.push([`Activation relu ${B}x${o}`, () => nd.Activation(h, { act_type: 'relu' }), 0, 'fwd']);
          k.push([`_backward_Activation relu ${B}x${o}`, () => nd._backward_Activation(g, h, { act_type: 'relu' }), 0, 'bwd']);
        }
      }
      const logits = R([B, 10]);
      k.push([`log_softmax ${B}x10`, () => nd.log_softmax(logits), 0, 'fwd']);
      return k;
    },
  },
  {
    name: 'LeNet 20c5-p2-50c5-p2-500-10', batch: 32, inShape: (n) => [n, 1, 28, 28], n: 5,
    build() {
      const net = new nn.HybridSequential();
      net.add(new nn.Conv2D(20, { kernelSize: 5, activation: 'relu', inChannels: 1 }), new nn.MaxPool2D({ poolSize: 2 }),
        new nn.Conv2D(50, { kernelSize: 5, activation: 'relu', inChannels: 20 }), new nn.MaxPool2D({ poolSize: 2 }),
        new nn.Dense(500, { activation: 'relu', inUnits: 800 }), new nn.Dense(10, { inUnits: 500 }));
      return net;
    },
    kernels(B) {
      const x = R([B, 1, 28, 28]), w1 = R([20, 1, 5, 5]), b1 = R([20]), a1 = R([B, 20, 24, 24]), p1 = R([B, 20, 12, 12]);
      const w2 = R([50, 20, 5, 5]), b2 = R([50]), a2 = R([B, 50, 8, 8]), p2 = R([B, 50, 4, 4]);
      const w3 = R([500, 800]), b3 = R([500]), h3 = R([B, 500]), w4 = R([10, 500]), b4 = R([10]), g4 = R([B, 10]);
      const k5 = { kernel: [5, 5] }, pool = { kernel: [2, 2], stride: [2, 2], pool_type: 'max' };
      return [
        ['Convolution conv1 1->20 5x5', () => nd.Convolution(x, w1, b1, { ...k5, num_filter: 20 }), B * 20 * 576 * 25, 'fwd'],
        ['Activation relu after conv1', () => nd.Activation(a1, { act_type: 'relu' }), 0, 'fwd'],
        ['Pooling max 2x2 after conv1', () => nd.Pooling(a1, pool), 0, 'fwd'],
        ['Convolution conv2 20->50 5x5', () => nd.Convolution(p1, w2, b2, { ...k5, num_filter: 50 }), B * 50 * 64 * 500, 'fwd'],
        ['Activation relu after conv2', () => nd.Activation(a2, { act_type: 'relu' }), 0, 'fwd'],
        ['Pooling max 2x2 after conv2', () => nd.Pooling(a2, pool), 0, 'fwd'],
        ['FullyConnected 800 -> 500', () => nd.FullyConnected(p2, w3, b3, { num_hidden: 500 }), B * 800 * 500, 'fwd'],
        ['FullyConnected 500 -> 10', () => nd.FullyConnected(h3, w4, b4, { num_hidden: 10 }), B * 500 * 10, 'fwd'],
        ['_backward_FullyConnected 500 -> 10', () => nd._backward_FullyConnected(g4, h3, w4, { num_hidden: 10 }), 2 * B * 500 * 10, 'bwd'],
        ['_backward_Activation relu 32x500', () => nd._backward_Activation(h3, h3, { act_type: 'relu' }), 0, 'bwd'],
        ['_backward_FullyConnected 800 -> 500', () => nd._backward_FullyConnected(h3, p2, w3, { num_hidden: 500 }), 2 * B * 800 * 500, 'bwd'],
        ['_backward_Pooling after conv2', () => nd._backward_Pooling(p2, a2, p2, pool), 0, 'bwd'],
        ['_backward_Activation relu after conv2', () => nd._backward_Activation(a2, a2, { act_type: 'relu' }), 0, 'bwd'],
        ['conv2 dX: Deconvolution 50->20', () => nd.Deconvolution(a2, w2, { ...k5, num_filter: 20, no_bias: true }), B * 50 * 64 * 500, 'bwd'],
        ['conv2 dW: _backward_Convolution_weight', () => nd._backward_Convolution_weight(a2, p1, { ...k5, num_filter: 50 }), B * 50 * 64 * 500, 'bwd'],
        ['_backward_Pooling after conv1', () => nd._backward_Pooling(p1, a1, p1, pool), 0, 'bwd'],
        ['_backward_Activation relu after conv1', () => nd._backward_Activation(a1, a1, { act_type: 'relu' }), 0, 'bwd'],
        ['conv1 dW: _backward_Convolution_weight', () => nd._backward_Convolution_weight(a1, x, { ...k5, num_filter: 20 }), B * 20 * 576 * 25, 'bwd'],
      ];
    },
  },
];

// ---- per-op cost of the machinery: an eager op on one element, recorded and differentiated -------------
const one = R([1]);
const eagerUs = cpuMs(() => mx.tidy(() => { nd.relu(one); }), 2000) * 1000;
one.attachGrad();
const recUs = cpuMs(() => mx.tidy(() => {
  const y = autograd.record(() => nd.relu(nd.relu(nd.relu(nd.relu(nd.relu(one))))));
  y.backward();
}), 500) * 1000 / 5;
console.log(`per-op machinery (CPU): eager call ${eagerUs.toFixed(2)} us; recorded + its backward node ${recUs.toFixed(2)} us`);

for (const model of MODELS) {
  if (process.env.ONLY && !model.name.includes(process.env.ONLY)) continue;
  const B = model.batch, shape = model.inShape(B);
  const xb = new Float32Array(shape.reduce((a, b) => a * b)).map((_, i) => ((i * 2654435761) % 1000) / 1000);
  const yb = new Float32Array(B).map((_, i) => i % 10);
  // whole steps and their phases
  const phases = {};
  let updateMs = 0;
  for (const hybrid of [false, true]) {
    mx.random.seed(0);
    const net = model.build();
    net.initialize(new mx.init.Xavier());
    const loss = new gluon.loss.SoftmaxCrossEntropyLoss();
    if (hybrid) { net.hybridize(); loss.hybridize(); }
    const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.01, momentum: 0.9 });
    const x = nd.array(xb, { shape }), y = nd.array(yb);
    const params = [...net.collectParams().values()];
    const step = () => mx.tidy(() => {
      const L = autograd.record(() => loss(net(nd.array(xb, { shape })), nd.array(yb)));
      L.backward();
      trainer.step(B);
    });
    step();
    const r = {
      'step': cpuMs(step, model.n),
      'forward + loss (recorded)': cpuMs(() => mx.tidy(() => { autograd.record(() => loss(net(x), y)); }), model.n),
      'forward + loss + backward': cpuMs(() => mx.tidy(() => { autograd.record(() => loss(net(x), y)).backward(); }), model.n),
      // the gradients were written by the calls above; marked fresh so that step() updates with them
      'trainer.step': cpuMs(() => { for (const p of params) p.grad()._freshGrad = true; trainer.step(B); }, model.n),
    };
    phases[hybrid ? 'hybridized ms' : 'imperative ms'] = r;
    if (!hybrid) {
      // the optimizer's kernels at these weights' shapes
      for (const p of params) {
        const w = p.data(), g = p.grad(), m = nd.zeros(w.shape);
        updateMs += cpuMs(() => nd.sgd_mom_update(w, g, m, { lr: 0.01, momentum: 0.9, rescale_grad: 1 / B, out: w }), model.n);
        m.dispose();
      }
    }
    x.dispose();
    y.dispose();
  }
  const rows = Object.keys(phases['imperative ms']).map((k) => ({
    phase: k, 'imperative ms': +phases['imperative ms'][k].toFixed(3), 'hybridized ms': +phases['hybridized ms'][k].toFixed(3),
    'imp / hyb': +(phases['imperative ms'][k] / phases['hybridized ms'][k]).toFixed(2),
  }));
  console.log(`\n${model.name}, batch ${B}: CPU time of one training step and its phases (medians)`);
  console.table(rows);

  // the kernels alone
  const krows = [];
  const sums = { fwd: 0, bwd: 0 };
  for (const [name, f, macs, kind] of model.kernels(B)) {
    const ms = cpuMs(() => mx.tidy(() => { f(); }), model.n);
    if (kind !== 'part') sums[kind] += ms;
    krows.push(kernelRow(name, ms, macs));
  }
  krows.push(kernelRow('sgd_mom_update, every parameter', updateMs, 0));
  const total = sums.fwd + sums.bwd + updateMs, hyb = phases['hybridized ms'].step;
  console.log(`${model.name}: the kernels alone, at the step's shapes (fresh outputs each call, as imperatively)`);
  console.table(krows);
  console.log(`  kernel sum: forward ${sums.fwd.toFixed(2)} ms + backward ${sums.bwd.toFixed(2)} ms + updates ${updateMs.toFixed(2)} ms = ` +
    `${total.toFixed(2)} ms, ${(100 * total / hyb).toFixed(0)}% of a hybridized step (${hyb.toFixed(2)} ms), ` +
    `${(100 * total / phases['imperative ms'].step).toFixed(0)}% of an imperative one`);
}
