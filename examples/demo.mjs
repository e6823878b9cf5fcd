// The end-to-end demo (npm run demo): MXNet Gluon in JavaScript on a WebAssembly SIMD core.
//   1. imperative NDArray code, one C kernel per call;
//   2. a Gluon HybridBlock, debugged imperatively, then hybridize()d into a cached C graph;
//   3. export to MXNet's two files and SymbolBlock.imports back, bit for bit;
//   4. a model that real MXNet 1.4 wrote, loaded and run, from the folder of real MXNet files:
//      $MXW_MODELS (relative to the project root), default ../shared/models; skipped, saying
//      so, when that folder is absent.
import * as mx from 'mxnet-wasm';
import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const { nd, sym, gluon } = mx, { nn } = gluon;
const here = path.dirname(fileURLToPath(import.meta.url));
mx.random.seed(7);
console.log(`mxnet-wasm ${mx.version}`, mx.features());

console.log('\n1. Imperative: nd.* runs eagerly');
const a = nd.array([[1, 2], [3, 4]]);
console.log('a =', a.toString());
console.log('dot(a, a.T) =', nd.dot(a, a.T).toString());

console.log('\n2. A HybridBlock: imperative first, then hybridize()');
class MLP extends gluon.HybridBlock {
  constructor() {
    super();
    this.nameScope(() => {
      this.hidden = new nn.Dense(64, { activation: 'relu' });
      this.out = new nn.Dense(10);
    });
  }
  hybridForward(F, x) {
    return F.softmax(this.out(this.hidden(x)));
  }
}
const net = new MLP();
net.initialize({ init: new mx.init.Xavier() });
const x = nd.random.normal(0, 1, [4, 32]);
const eager = net(x);
net.hybridize();
const cached = net(x);
console.log('output', cached.shape, 'rows sum to', nd.sum(cached, { axis: 1 }).toArray().map((v) => v.toFixed(6)).join(' '));
console.log('max |imperative - hybridized| =', nd.max(nd.abs(eager.sub(cached))).item());
// mx.tidy frees each pass's temporaries; the first passes warm V8's wasm tiers up
const time = (fn, n = 500) => {
  for (let i = 0; i < 200; i++) mx.tidy(fn).dispose();
  const t = performance.now();
  for (let i = 0; i < n; i++) mx.tidy(fn).dispose();
  return (performance.now() - t) / n;
};
net.hybridize(false);
const ti = time(() => net(x));
net.hybridize();
net(x);
const th = time(() => net(x));
console.log(`per forward: imperative ${(ti * 1000).toFixed(1)} us, hybridized ${(th * 1000).toFixed(1)} us (${(ti / th).toFixed(1)}x)`);

console.log('\n3. export and SymbolBlock.imports');
const dir = mkdtempSync(path.join(tmpdir(), 'mxnet-wasm-demo-'));
const [symFile, paramFile] = net.export(path.join(dir, 'mlp'), 0);
console.log('wrote', symFile, 'and', paramFile);
const loaded = await gluon.SymbolBlock.imports(symFile, ['data'], paramFile);
const same = loaded(x).toTypedArray().every((v, i) => v === cached.toTypedArray()[i]);
console.log('imported model reproduces the outputs bit for bit:', same);
console.log('graph:', net(sym.var('data')).listArguments().join(', '));

console.log('\n4. A model real MXNet wrote');
const models = path.resolve(here, '..', process.env.MXW_MODELS || '../shared/models');
const mnist = path.join(models, 'mnist-mlp-module');
if (existsSync(mnist)) {
  const model = await gluon.SymbolBlock.imports(path.join(mnist, 'model-symbol.json'), ['data'], path.join(mnist, 'model-0000.params'));
  const rows = readFileSync(path.join(mnist, '07.csv'), 'utf8').trim().split('\n').map((l) => l.split(',').map(Number));
  const probs = model(nd.array(rows).reshape([rows.length, 1, 28, 28]));
  console.log(`MXNet 1.4 MNIST MLP on ${rows.length} images of a 7: predicted`, nd.argmax(probs, { axis: 1 }).toArray().join(' '));
} else {
  console.log(`skipped step 4: the real MXNet files are not there (${mnist} not found; ` +
    `set MXW_MODELS to the folder that holds mnist-mlp-module/)`);
}
console.log('\nmemory:', mx.memory());
