// The demo's inference Worker: the MNIST model and a user's own files run here, off the page's
// main thread. In a cross-origin-isolated page (scripts/serve.mjs sends COOP/COEP) this worker
// loads mxnet-wasm's threaded tier (a browser's main thread cannot block, so threads are chosen
// automatically only in workers); otherwise a single-thread tier. Messages:
//   in:  {type: 'classify', id, pixels: Float32Array(784)}, {type: 'run', id, symbol: File|Blob,
//        params: File|Blob|null, shape: number[]}
//   out: {type: 'ready', version, features} | {type: 'error', message},
//        {type: 'classified', id, probs, ms}, {type: 'ran', id, text}, {type: 'failed', id, message}
// (A worker has no import map: the package is imported by its path, as the page's map resolves it.)
import * as mx from '../dist/index.mjs';

const { nd, gluon } = mx;
const MODEL = new URL('../models/mnist-mlp-module/', import.meta.url);

let net = null;
async function init() {
  net = await gluon.SymbolBlock.imports(new URL('model-symbol.json', MODEL), ['data'], new URL('model-0000.params', MODEL));
  net.hybridize();
  self.postMessage({ type: 'ready', version: mx.version, features: mx.features() });
}

function classify(pixels) {
  const t0 = performance.now();
  const probs = mx.tidy(() => net(nd.array(pixels, { shape: [1, 1, 28, 28] })));
  const p = Array.from(probs.toTypedArray());
  probs.dispose();
  return { probs: p, ms: performance.now() - t0 };
}

async function run({ symbol, params, shape }) {
  const model = await gluon.SymbolBlock.imports(symbol, ['data'], params ?? null);
  try {
    model.hybridize();
    return mx.tidy(() => {
      const x = nd.random.uniform(0, 1, shape);
      model(x);
      const t0 = performance.now();
      const y = model(x);
      const ms = performance.now() - t0;
      const outs = Array.isArray(y) ? y : [y];
      return `loaded ${model.collectParams().size} parameters; forward ${ms.toFixed(1)} ms (${mx.features().tier})\n`
        + outs.map((o, i) => `output ${i}: shape (${o.shape.join(', ')}), first values ${Array.from(o.toTypedArray().slice(0, 5)).map((v) => v.toFixed(4)).join(' ')}`).join('\n');
    });
  } finally {
    model.dispose();
  }
}

const ready = init().catch((e) => self.postMessage({ type: 'error', message: `${e.name}: ${e.message}` }));
self.onmessage = async ({ data: m }) => {
  await ready;
  try {
    if (m.type === 'classify') self.postMessage({ type: 'classified', id: m.id, ...classify(m.pixels) });
    else if (m.type === 'run') self.postMessage({ type: 'ran', id: m.id, text: await run(m) });
  } catch (e) {
    self.postMessage({ type: 'failed', id: m.id, message: `${e.name}: ${e.message}` });
  }
};
