// MXNet's hybridize tutorial, part 2 (the seed program of ../shared/spec/js-api.md): a LeNet-style
// HybridBlock that prints its input inside hybridForward -- an NDArray on every imperative call,
// a Symbol once when hybridize() traces it -- then export and SymbolBlock.imports.
// Run: node examples/lenet_export.mjs [output directory]
import * as mx from 'mxnet-wasm';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const { nd, sym, gluon } = mx, { nn } = gluon;

class Net extends gluon.HybridBlock {
  constructor(opts) {
    super(opts);
    this.nameScope(() => {
      this.conv1 = new nn.Conv2D(6, { kernelSize: 5 });
      this.pool1 = new nn.MaxPool2D({ poolSize: 2 });
      this.conv2 = new nn.Conv2D(16, { kernelSize: 5 });
      this.pool2 = new nn.MaxPool2D({ poolSize: 2 });
      this.fc1 = new nn.Dense(120);
      this.fc2 = new nn.Dense(84);
      this.fc3_weight = this.params.get('fc3_weight', { shape: [10, 84] });
    });
  }
  hybridForward(F, x, { fc3_weight }) {
    console.log(x.toString().split('\n').pop()); // an NDArray each call; a Symbol once after hybridize()
    x = this.pool1(F.relu(this.conv1(x)));
    x = this.pool2(F.relu(this.conv2(x)));
    x = x.reshape([0, -1]);
    x = F.relu(this.fc1(x));
    x = F.relu(this.fc2(x));
    return F.dot(x, fc3_weight, { transpose_b: true });
  }
}

const dir = process.argv[2] ?? mkdtempSync(path.join(tmpdir(), 'mxnet-wasm-lenet-'));
const net = new Net();
net.initialize();
const x = nd.random_normal({ shape: [16, 1, 28, 28] });
const before = net.forward(x);          // net(x) also works
net.hybridize();                        // {staticAlloc: true, staticShape: true} are accepted too
const after = net.forward(x);
net.forward(x);                         // no print: the cached graph runs in C
console.log('max |imperative - hybridized| =', nd.max(nd.abs(before.sub(after))).item());
const [symFile, paramFile] = net.export(path.join(dir, 'model'), 1);  // model-symbol.json, model-0001.params
console.log('exported', symFile, paramFile);
const net2 = await gluon.SymbolBlock.imports(symFile, ['data'], paramFile);
console.log('max |imported - original| =', nd.max(nd.abs(net2(x).sub(after))).item());
console.log(net(sym.var('data')).tojson().split('\n').slice(0, 8).join('\n'), '...'); // MXNet's JSON text
