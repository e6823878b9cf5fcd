// The seed benchmark (MXNet's hybridize tutorial): an MLP of Dense(256, relu), Dense(128, relu),
// Dense(2) on a (1, 512) input, 1000 forward passes before and after hybridize(). Prints the
// median of repeated runs of each and their ratio.
import * as mx from 'mxnet-wasm';

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
const median = (a) => { const s = [...a].sort((p, q) => p - q); return s[s.length >> 1]; };

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
console.log(`seed MLP, batch 1, ${PASSES} forward passes, median of ${RUNS} runs`);
console.log(`  before hybridizing: ${mi.toFixed(4)} sec`);
console.log(`  after hybridizing:  ${mh.toFixed(4)} sec`);
console.log(`  speed-up: ${(mi / mh).toFixed(2)}x (MXNet's tutorial reports 1.95x; target >= 2x)`);
