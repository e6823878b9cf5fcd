// The training panel's Web Worker: Gluon's training loop (autograd.record, loss.backward(),
// trainer.step) on MNIST digits, off the page's main thread. Messages:
//   in:  {type: 'train', model: 'mlp'|'lenet', epochs, batchSize, lr (optional), seed}, {type: 'stop'},
//        {type: 'export'}
//   out: {type: 'hello'}, {type: 'ready', test, nTrain}, {type: 'status', text}, {type: 'loss', step, steps, loss},
//        {type: 'epoch', epoch, loss, trainAcc, testAcc, samplesPerSec, partial},
//        {type: 'done', testAcc, testPred, stopped}, {type: 'exported', symbol, params},
//        {type: 'error', message}
// (A worker has no import map: the package is imported by its path, as the page's map resolves it.)
import * as mx from '../dist/index.mjs';
import { loadMnist, splitDigits, predictClasses, accuracyOf, lenetOf } from './digits.mjs';

const { nd, gluon, autograd } = mx, { nn } = gluon;
const REPORT_EVERY = 5; // batches per reported loss (their mean)

function model(kind) {
  if (kind === 'lenet') return lenetOf(mx);
  const net = new nn.HybridSequential();
  // Dense flattens its (n, 1, 28, 28) input, so both models take the same images
  net.add(new nn.Dense(128, { activation: 'relu' }), new nn.Dense(64, { activation: 'relu' }), new nn.Dense(10));
  return net;
}

const post = (msg, transfer) => self.postMessage(msg, transfer ?? []);
const tick = () => new Promise((r) => setTimeout(r, 0)); // lets 'stop' messages in

let data = null, trainX = null, trainY = null, net = null, stopRequested = false, busy = false;

async function init() {
  post({ type: 'status', text: 'loading the digits…' });
  const mnist = await loadMnist(new URL('../mnist/mnist.js', import.meta.url));
  data = splitDigits(mnist);
  trainX = nd.array(data.train.x, { shape: [data.train.n, 1, 28, 28] });
  trainY = nd.array(data.train.y);
  const test = { x: data.test.x, y: data.test.y, n: data.test.n };
  post({ type: 'ready', nTrain: data.train.n, test, version: mx.version });
}

async function train({ model: kind = 'mlp', epochs = 1, batchSize = 64, lr = null, seed = 42 }) {
  lr ??= kind === 'lenet' ? 0.008 : 0.003;
  mx.random.seed(seed); // initial weights and the DataLoader's shuffling
  net = model(kind);
  net.initialize(new mx.init.Xavier());
  net.hybridize();
  const loader = new gluon.data.DataLoader(new gluon.data.ArrayDataset(trainX, trainY), { batchSize, shuffle: true });
  const lossFn = new gluon.loss.SoftmaxCrossEntropyLoss();
  // Adam, the learning rate annealed to 0 over the run (a cosine schedule)
  const schedule = new mx.lr_scheduler.CosineScheduler({ maxUpdate: epochs * loader.length, baseLr: lr });
  const trainer = new gluon.Trainer(net.collectParams(), 'adam', { learning_rate: lr, lr_scheduler: schedule });
  const metric = new mx.metric.Accuracy();
  const steps = epochs * loader.length;
  let step = 0, testPred = null, testAcc = null;
  stopRequested = false;
  for (let epoch = 1; epoch <= epochs && !stopRequested; epoch++) {
    metric.reset();
    let lossSum = 0, seen = 0, windowSum = 0, windowN = 0, busyMs = 0;
    for (const [x, y] of loader) {
      const t0 = performance.now();
      const n = x.shape[0];
      const l = mx.tidy(() => {
        const [out, loss] = autograd.record(() => {
          const o = net(x);
          return [o, lossFn(o, y)];
        });
        loss.backward();
        trainer.step(n);
        metric.update([y], [out]);
        return loss.sum().item();
      });
      x.dispose();
      y.dispose();
      busyMs += performance.now() - t0;
      lossSum += l;
      seen += n;
      windowSum += l;
      windowN += n;
      step++;
      if (step % REPORT_EVERY === 0 || step === steps) {
        post({ type: 'loss', step, steps, loss: windowSum / windowN });
        windowSum = 0;
        windowN = 0;
        await tick();
        if (stopRequested) break;
      }
    }
    testPred = predictClasses(mx, net, data.test);
    testAcc = accuracyOf(mx, testPred, data.test);
    post({
      type: 'epoch', epoch, loss: lossSum / seen, trainAcc: metric.get()[1], testAcc,
      samplesPerSec: seen / (busyMs / 1000), partial: stopRequested,
    });
  }
  post({ type: 'done', testAcc, testPred, stopped: stopRequested });
}

// MXNet's two files as text and bytes (net.export writes files in Node; exportBytes is its
// in-memory form).
function exportModel() {
  if (!net) throw new Error('train a model first');
  const { symbol, params } = net.exportBytes();
  post({ type: 'exported', symbol, params }, [params.buffer]);
}

let ready = null;
self.onmessage = async ({ data: msg }) => {
  if (msg.type === 'stop') { stopRequested = true; return; }
  await ready;
  try {
    if (msg.type === 'train') {
      if (busy) throw new Error('already training');
      busy = true;
      try { await train(msg); } finally { busy = false; }
    } else if (msg.type === 'export') {
      exportModel();
    }
  } catch (e) {
    post({ type: 'error', message: `${e.name}: ${e.message}` });
  }
};
// Messages sent before this module finished evaluating (its imports instantiate the wasm) may be
// lost, so the page waits for 'hello' before posting.
post({ type: 'hello' });
ready = init().catch((e) => post({ type: 'error', message: `${e.name}: ${e.message}` }));
