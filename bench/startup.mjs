// Import -> first LeNet inference, in this fresh process: the time from just before
// `await import('mxnet-wasm')` to the first output copied out of the seed LeNet (built as a Gluon
// block with bench/models.mjs's weights, hybridized, one 1x1x28x28 input). bench/peers.mjs runs it
// in 5 fresh processes per tier and prints the medians.
//   node bench/startup.mjs        (MXW_TIER=<tier> forces a tier; prints one JSON line)
// importMs: the import alone; firstMs: import + build + first inference; processMs: the same end
// measured from the process's start (Node's own start-up included).
import { modelByKey, modelInput, buildMx } from './models.mjs';

const lenet = modelByKey('lenet');
const graph = lenet.build(); // the weights, as a file's contents would be: not part of the timing
const { shape, data } = modelInput(lenet, 1);

const t0 = performance.now();
const mx = await import('mxnet-wasm');
const t1 = performance.now();
const net = buildMx(mx, graph);
const x = mx.nd.array(data, { shape });
const y = net.forward(x).toTypedArray();
const t2 = performance.now();
if (y.length !== 10 || !y.every(Number.isFinite)) throw new Error(`startup: unexpected LeNet output ${y}`);
console.log(JSON.stringify({ tier: mx.features().tier, importMs: t1 - t0, firstMs: t2 - t0, processMs: t2 }));
