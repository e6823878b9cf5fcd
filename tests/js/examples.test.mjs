// The seed programs in examples/ run with node as a user would run them, and print what MXNet's
// tutorials show.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REAL_FILES_SKIP } from './fixtures.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = (file, ...args) => execFileSync(process.execPath, [path.join(root, 'examples', file), ...args], { cwd: root, encoding: 'utf8' });

test('examples/hybridize_mlp.mjs: same output before and after hybridize, both timings, the graph', () => {
  const out = run('hybridize_mlp.mjs');
  const nets = [...out.matchAll(/=== net\(x\) ===\n(\[\[.*\]\])\n<NDArray 1x2 @cpu\(0\)>/g)].map((m) => m[1]);
  assert.equal(nets.length, 2);
  assert.equal(nets[0], nets[1]);
  const before = Number(out.match(/Before hybridizing: ([\d.]+) sec/)[1]);
  const after = Number(out.match(/After hybridizing: ([\d.]+) sec/)[1]);
  assert.ok(before > 0 && after > 0);
  assert.match(out, /<Symbol hybridsequential\d+_dense2_fwd>/);
  assert.match(out, /"name": "hybridsequential\d+_dense0_weight"/);
});

test('examples/lenet_export.mjs: NDArray printed per imperative call, Symbol once, export and import agree', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-example-'));
  const out = run('lenet_export.mjs', dir);
  const lines = out.split('\n');
  assert.deepEqual(lines.slice(0, 2), ['<NDArray 16x1x28x28 @cpu(0)>', '<Symbol data>']);
  assert.match(out, /max \|imperative - hybridized\| = 0\n/);
  assert.match(out, /max \|imported - original\| = 0\n/);
  assert.ok(existsSync(path.join(dir, 'model-symbol.json')) && existsSync(path.join(dir, 'model-0001.params')));
  assert.equal(out.match(/<NDArray/g).length, 1, 'hybridized calls do not run hybridForward again');
});

test('examples/hybridblock_model.mjs: summary table, hook output, structural parameter names', () => {
  const out = run('hybridblock_model.mjs');
  assert.match(out, / {13}Dense-1 {36}\(10, 20\) {13}220/);
  assert.match(out, /Total params: 640/);
  assert.match(out, /model\d+: output 10x20/);
  assert.match(out, /output \[ 10, 20 \] params model\d+_dense0_weight, model\d+_dense0_bias, model\d+_dense1_weight, model\d+_dense1_bias/);
});

test('examples/wgan_gp.mjs: the gradient-penalty GAN moves its samples onto the target Gaussian at (2, -1)', () => {
  const out = run('wgan_gp.mjs');
  const rows = [...out.matchAll(/^step +(\d+) +generated mean \((-?[\d.]+), (-?[\d.]+)\) +distance to target ([\d.]+)/gm)]
    .map((m) => ({ step: Number(m[1]), mean: [Number(m[2]), Number(m[3])], dist: Number(m[4]) }));
  assert.deepEqual(rows.map((r) => r.step), [0, 50, 100, 150, 200, 250, 300, 350, 400]);
  // the printed distance is the mean's distance from the target (hand-set in the example)
  for (const r of rows) assert.ok(Math.abs(Math.hypot(r.mean[0] - 2, r.mean[1] + 1) - r.dist) < 2e-3, JSON.stringify(r));
  assert.ok(rows[0].dist > 2, `untrained: ${rows[0].dist}`);
  for (const r of rows.slice(-3)) assert.ok(r.dist < 0.5, `step ${r.step}: ${r.dist}`);
  assert.match(out, /critic W-distance -?\d+\.\d{3}\n/);
});

test('examples/imperative.mjs runs and reports a clean MXNetError for a bad call', () => {
  const out = run('imperative.mjs');
  assert.match(out, /MXNetError: Operator dot: /);
  assert.match(out, /predicted classes/);
});

test('examples/resnet_imports.mjs: loads the given MXNet-named parameters and prints the top-5 they imply', async () => {
  // Parameters whose prediction is known by hand: every weight zero (so every activation is
  // zero whatever the image) and the classifier's bias set, so the logits are that bias and the
  // top-5 is its five largest entries with softmax probabilities computed here.
  const mx = await import('mxnet-wasm');
  const net = mx.gluon.model_zoo.vision.resnet18_v1();
  net.initialize(new mx.init.Zero());
  net(mx.nd.zeros([1, 3, 32, 32])).dispose(); // shapes known
  const bias = new Float64Array(1000).fill(0);
  const picks = [[417, 3.0], [9, 2.5], [281, 2.0], [963, 1.5], [5, 1.0], [777, 0.75]];
  for (const [k, v] of picks) bias[k] = v;
  net.output.bias.setData(mx.nd.array(bias)); // resnetv10_dense0_bias, as in MXNet's ResNetV1
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-resnet-'));
  net.saveParameters(path.join(dir, 'resnet18_v1-a0666292.params'));
  const out = run('resnet_imports.mjs', '--params', dir);
  const z = bias.reduce((s, v) => s + Math.exp(v), 0);
  const rows = [...out.matchAll(/^\s+(\d+)\s+([\d.]+)\s+class \d+$/gm)].map((m) => [Number(m[1]), Number(m[2])]);
  assert.deepEqual(rows.map((r) => r[0]), picks.slice(0, 5).map((p) => p[0]));
  rows.forEach(([, pr], i) => assert.ok(Math.abs(pr - Math.exp(picks[i][1]) / z) < 1e-4, `class ${rows[i][0]}: ${pr}`));
  assert.match(out, /forward median of 5 [\d.]+ ms/);
});

test('examples/detect.mjs: the shared SSD export on a picture prints the detections box_nms kept', { skip: REAL_FILES_SKIP }, () => {
  const out = run('detect.mjs');
  const n = Number(out.match(/detections: (\d+) after NMS, 10 shown/)[1]);
  assert.ok(n >= 10 && n <= 100, `${n} detections: ssd_512's box_nms keeps at most topk = 100`);
  const rows = [...out.matchAll(/^\s+(-?\d+)\s+([\d.]+)((?:\s+-?[\d.]+){4})/gm)].map((m) => ({ id: Number(m[1]), score: Number(m[2]) }));
  assert.equal(rows.length, 10);
  for (const r of rows) assert.ok(Number.isInteger(r.id) && r.id >= 0 && r.score >= 0 && r.score <= 1, JSON.stringify(r));
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i].score <= rows[i - 1].score, 'sorted by score');
  assert.match(out, /timing: load \d+ ms, preprocess [\d.]+ ms, detect \d+ ms/);
});

test('docs/porting.md: the ported script runs as written and gives what the Python gives', async () => {
  // The guide's JavaScript, run as a user would (its import resolves to this package).
  const doc = (await import('node:fs')).readFileSync(path.join(root, 'docs/porting.md'), 'utf8');
  const start = doc.indexOf('JavaScript:\n\n```js\n') + 'JavaScript:\n\n```js\n'.length;
  const code = doc.slice(start, doc.indexOf('```', start));
  const { writeFileSync, mkdirSync } = await import('node:fs');
  mkdirSync(path.join(root, 'build'), { recursive: true });
  const file = path.join(root, 'build', 'porting-doc.mjs');
  writeFileSync(file, code);
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-porting-'));
  const out = execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8' });
  // print(net(x)[0, :3]): three softmax probabilities of the first sample
  const first = out.match(/\[([^\]]+)\]\n<NDArray 3 @cpu\(0\)>/);
  assert.ok(first, out);
  const probs = first[1].trim().split(/\s+/).map(Number);
  assert.equal(probs.length, 3);
  assert.ok(probs.every((p) => p > 0 && p < 1));
  // print(y.sum(axis=1), len(net.collect_params())): softmax rows sum to 1; 7 parameters
  // (conv1 weight/bias, conv2 weight/bias, fc weight/bias, fc3_weight)
  const sums = out.match(/\[([^\]]+)\]\n<NDArray 4 @cpu\(0\)> 7\n/);
  assert.ok(sums, out);
  for (const v of sums[1].trim().split(/\s+/).map(Number)) assert.ok(Math.abs(v - 1) < 1e-6);
  assert.ok(existsSync(path.join(dir, 'net-symbol.json')) && existsSync(path.join(dir, 'net-0001.params')));
});
