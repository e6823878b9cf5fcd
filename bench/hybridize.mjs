// The seed benchmark (MXNet's hybridize tutorial): an MLP of Dense(256, relu), Dense(128, relu),
// Dense(2) on a (1, 512) input, 1000 forward passes before and after hybridize(). Prints the
// median of repeated runs of each and their ratio.
import * as mx from 'mxnet-wasm';
import { median } from './common.mjs';

const { nd, gluon } = mx;
const { nn } = gluon;
const RUNS = Number(process.env.RUNS ?? 7);
const PASSES = Number(process.env.PASSES ?? 1000);

function getNet() {
  const net = new nn.HybridSequential();
  net.nameScope(() => {
    net.add(new nn.Dense(256, { activation: 'relu' }));
    net.add(new nn.Dense(128, { activation: 'relu' }));
    net.add(new nn.Dense(2));
  });
  net.initialize();
  return net;
}

function bench(net, x) {
  const t0 = performance.now();
  for (let i = 0; i < PASSES; i++) {
    const y = net(x);
    y.dispose();
  }
  return (performance.now() - t0) / 1000;
}

mx.random.seed(0);
const x = nd.random.normal(0, 1, [1, 512]);
const net = getNet();
net(x).dispose(); // deferred initialization
for (let i = 0; i < 2; i++) bench(net, x); // warm-up: V8 tiers the wasm up from Liftoff
const imperative = [];
for (let r = 0; r < RUNS; r++) imperative.push(bench(net, x));
net.hybridize();
net(x).dispose();
bench(net, x);
const hybrid = [];
for (let r = 0; r < RUNS; r++) hybrid.push(bench(net, x));
const mi = median(imperative), mh = median(hybrid);

// Working memory of one forward: every intermediate array imperatively (they live until freed),
// the planned arena (reused across calls) plus the output when hybridized.
function forwardBytes(block, input) {
  const base = mx.memory({ resetPeak: true }).bytes;
  const y = mx.tidy(() => block(input));
  const peak = mx.memory().peakBytes - base;
  y.dispose();
  return peak;
}
const lenet = new nn.HybridSequential();
lenet.nameScope(() => lenet.add(new nn.Conv2D(20, { kernelSize: 5, activation: 'relu' }), new nn.MaxPool2D({ poolSize: 2 }),
  new nn.Conv2D(50, { kernelSize: 5, activation: 'relu' }), new nn.MaxPool2D({ poolSize: 2 }), new nn.Dense(500, { activation: 'relu' }), new nn.Dense(10)));
lenet.initialize();
const img = nd.random.uniform(0, 1, [32, 1, 28, 28]);
lenet(img).dispose();
const memRows = [];
for (const [name, block, input] of [['MLP, batch 1', getNet(), x], ['LeNet, batch 32', lenet, img]]) {
  block.hybridize(false);
  block(input).dispose();
  const imp = forwardBytes(block, input);
  block.hybridize();
  block(input).dispose();
  const arena = block._cachedOp.arenaBytes;
  const hyb = forwardBytes(block, input) + arena;
  memRows.push(`  ${name}: imperative ${(imp / 1024).toFixed(0)} KiB, hybridized ${(hyb / 1024).toFixed(0)} KiB (arena ${(arena / 1024).toFixed(0)} KiB + output), ${(imp / hyb).toFixed(2)}x leaner`);
}
console.log(`seed MLP, batch 1, ${PASSES} forward passes, median of ${RUNS} runs`);
console.log(`  before hybridizing: ${mi.toFixed(4)} sec`);
console.log(`  after hybridizing:  ${mh.toFixed(4)} sec`);
console.log(`  speed-up: ${(mi / mh).toFixed(2)}x (MXNet's tutorial reports 1.95x; target >= 2x)`);
console.log('working memory of one forward pass (intermediates and outputs, parameters excluded):');
for (const r of memRows) console.log(r);
