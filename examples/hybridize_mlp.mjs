// MXNet's hybridize tutorial, part 1: an MLP, imperative then hybridized, timed over 1000
// forward passes. Run: node examples/hybridize_mlp.mjs
import * as mx from 'mxnet-wasm';

const { nd, gluon } = mx;
const { nn } = gluon;

function getNet() {
  // construct a MLP
  const net = new nn.HybridSequential();
  net.nameScope(() => {
    net.add(new nn.Dense(256, { activation: 'relu' }));
    net.add(new nn.Dense(128, { activation: 'relu' }));
    net.add(new nn.Dense(2));
  });
  // initialize the parameters
  net.initialize();
  return net;
}

// forward
const x = nd.random.normal(0, 1, [1, 512]);
let net = getNet();
console.log(`=== net(x) ===${net(x)}`);

// hybridize
net.hybridize();
console.log(`=== net(x) ===${net(x)}`);

function bench(block, input) {
  const start = performance.now();
  for (let i = 0; i < 1000; i++) {
    const y = block(input);
    y.dispose();
  }
  return (performance.now() - start) / 1000;
}

net = getNet();
const before = bench(net, x);
console.log(`Before hybridizing: ${before.toFixed(4)} sec`);
net.hybridize();
const after = bench(net, x);
console.log(`After hybridizing: ${after.toFixed(4)} sec`);

// get the symbol program: feeding a Symbol returns the graph of the whole network
const s = net(mx.sym.var('data'));
console.log(String(s));
console.log(s.tojson().split('\n').slice(0, 12).join('\n'), '...');
