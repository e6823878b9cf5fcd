// The split tiers (scripts/split-wasm.mjs, wasm/split_pre.js): a tier's mxcore.wasm holds what
// loading, inference and training reach, and mxcore.deferred.wasm the rest, loaded at the first call
// of one of its functions. Checked in fresh processes (the state is per process and thread):
//  - a LeNet's hybridized inference, export and import, and training steps run on the first part
//    alone (features().deferred stays 'not loaded'): the split keeps what users usually run;
//  - float64 arithmetic and a float64 reduction split across the threaded tier's pool (whose worker
//    loads the part itself) load it and give the values computed here in float64;
//  - a tier whose deferred part is missing names the file in its error, and float32 work goes on;
//  - the relaxed tiers, split with their relaxed madd renamed for binaryen 108 and back, compute
//    a product through it right and load their deferred part.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { MODELS, REAL_FILES_SKIP } from './fixtures.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist');
const tierDir = (dist, tier) => (tier === 'simd' ? dist : path.join(dist, tier));
const split = (tier) => existsSync(path.join(tierDir(DIST, tier), 'mxcore.deferred.wasm'));

function child(dist, tier, body, flags = []) {
  const code = `const mx = await import(${JSON.stringify(pathToFileURL(path.join(dist, `${tier}.mjs`)).href)});\n${body}`;
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', code], {
    cwd: ROOT, encoding: 'utf8', timeout: 120000, env: { ...process.env, MXW_TIER: '' },
  });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, `child failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// LeNet: hybridized inference, export + SymbolBlock.imports, then SGD training steps
const USUAL = `
const { nd, gluon, autograd } = mx, { nn } = gluon;
const states = [mx.features().deferred];
const net = new nn.HybridSequential();
net.add(new nn.Conv2D(6, 5, { activation: 'relu' }), new nn.MaxPool2D(2), new nn.Conv2D(16, 5, { activation: 'relu' }),
  new nn.MaxPool2D(2), new nn.Flatten(), new nn.Dense(120, { activation: 'relu' }), new nn.Dense(84, { activation: 'relu' }), new nn.Dense(10));
net.initialize(new mx.init.Xavier());
net.hybridize();
const x = nd.random.uniform(0, 1, [8, 1, 28, 28]), y = nd.array([0, 1, 2, 3, 4, 5, 6, 7]);
const before = net(x).toTypedArray();
const dir = (await import('node:fs')).mkdtempSync((await import('node:os')).tmpdir() + '/mxw-split-');
net.export(dir + '/lenet', 0);
const back = await gluon.SymbolBlock.imports(dir + '/lenet-symbol.json', ['data'], dir + '/lenet-0000.params');
const again = back(x).toTypedArray();
states.push(mx.features().deferred);
const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.1, momentum: 0.9 });
const lossFn = new gluon.loss.SoftmaxCrossEntropyLoss();
const losses = [];
for (let i = 0; i < 5; i++) {
  let L;
  autograd.record(() => { L = lossFn(net(x), y); });
  L.backward();
  trainer.step(8);
  losses.push(L.mean().asscalar());
}
states.push(mx.features().deferred);
(await import('node:fs')).rmSync(dir, { recursive: true });
console.log(JSON.stringify({ states, same: before.every((v, i) => Math.abs(v - again[i]) <= 1e-6 * (1 + Math.abs(v))), losses }));
`;

for (const tier of ['simd', 'threads']) {
  test(`${tier}: inference, export/import and training run without the deferred part`, { skip: !split(tier) && `the ${tier} tier is not built split here` }, () => {
    const r = child(DIST, tier, USUAL);
    assert.deepEqual(r.states, ['not loaded', 'not loaded', 'not loaded']);
    assert.ok(r.same, 'the imported export gives the block\'s outputs');
    assert.ok(r.losses[4] < r.losses[0], `training lowers the loss: ${r.losses}`);
  });
}

// Real MXNet files (../shared/models): Gluon's LeNet, the Module API's MLP (SoftmaxOutput) and linear
// regression, MTCNN's first stage from MXNet 0.8 (PReLU, SoftmaxActivation, 'param' keys) over the
// sizes of an image pyramid, RetinaFace (MobileNet 0.25: depthwise convolutions, BatchNorm, UpSampling,
// Crop) at camera sizes: imported and run on the first part alone.
test('real MXNet files import and run without the deferred part', { skip: REAL_FILES_SKIP || (!split('simd') && 'not built split here') }, () => {
  const cases = [['lenet-gluon/lenet-symbol.json', 'lenet-gluon/lenet-0001.params', [2, 1, 28, 28]],
    ['mnist-mlp-module/model-symbol.json', 'mnist-mlp-module/model-0000.params', [2, 784]],
    ['linreg-v1/model-symbol.json', 'linreg-v1/model-0000.params', [2, 2]],
    ...[12, 17, 24, 33, 61].map((s) => ['mtcnn-legacy/det1-symbol.json', 'mtcnn-legacy/det1-0001.params', [1, 3, s, s]]), // (a pyramid)
    ...[[64, 64], [96, 128], [240, 320], [480, 640]].map((hw) => ['retinaface-mnet25/16-symbol.json', 'retinaface-mnet25/16-0000.params', [1, 3, ...hw]])];
  const r = child(DIST, 'simd', `
    const out = [];
    for (const [sym, params, shape] of ${JSON.stringify(cases.map(([a, b, c]) => [path.join(MODELS, a), path.join(MODELS, b), c]))}) {
      const net = await mx.gluon.SymbolBlock.imports(sym, ['data'], params);
      const y = net(mx.nd.random.uniform(0, 1, shape));
      const ys = Array.isArray(y) ? y : [y];
      out.push({ sym, finite: ys.every((a) => a.toTypedArray().every(Number.isFinite)), deferred: mx.features().deferred });
    }
    console.log(JSON.stringify(out));`);
  for (const c of r) {
    assert.ok(c.finite, c.sym);
    assert.equal(c.deferred, 'not loaded', c.sym);
  }
});

// float64 work: every float64 kernel is outside the usual work, so its first call loads the part
const F64 = `
const { nd } = mx;
mx.setNumThreads(2);
const before = mx.features().deferred;
const a = nd.array([1.5, -2, 3.25], { dtype: 'float64' });
const doubled = a.add(a).toArray();
const n = 1 << 17, xs = new Float64Array(n);
for (let i = 0; i < n; i++) xs[i] = Math.sin(i) * 0.5;
const s = nd.sum(nd.exp(nd.array(xs, { dtype: 'float64' }))).asscalar();
console.log(JSON.stringify({ before, after: mx.features().deferred, doubled, s, dtype: nd.array(xs, { dtype: 'float64' }).dtype }));
`;
test('float64 calls load the deferred part, on the caller and on the pool\'s worker', { skip: !split('simd') && 'not built split here' }, () => {
  let expect = 0;
  for (let i = 0; i < 1 << 17; i++) expect += Math.exp(Math.sin(i) * 0.5);
  for (const tier of ['simd', 'threads'].filter(split)) {
    const r = child(DIST, tier, F64);
    assert.equal(r.before, 'not loaded', tier);
    assert.equal(r.after, 'loaded', tier);
    assert.equal(r.dtype, 'float64');
    assert.deepEqual(r.doubled, [3, -4, 6.5]);
    assert.ok(Math.abs(r.s - expect) <= 1e-9 * expect, `${tier}: sum ${r.s} vs ${expect}`);
  }
});

test('a missing deferred part is named in the error, and float32 work goes on', { skip: !split('simd') && 'not built split here' }, () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'mxw-split-test-'));
  try {
    cpSync(DIST, tmp, { recursive: true, filter: (src) => !/[/\\](relaxed-simd|relaxed-simd-threads|threads)$/.test(src) && !src.endsWith('mxcore.deferred.wasm') });
    const r = child(tmp, 'simd', `
      const { nd } = mx;
      let message = null;
      try { nd.array([1, 2], { dtype: 'float64' }).add(1).toArray(); } catch (e) { message = String(e && e.message); }
      console.log(JSON.stringify({ message, f32: nd.array([1, 2]).mul(3).toArray(), deferred: mx.features().deferred }));
    `);
    assert.match(r.message, /cannot load .*mxcore\.deferred\.wasm/);
    assert.deepEqual(r.f32, [3, 6]);
    assert.equal(r.deferred, 'not loaded');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

// The relaxed tiers go through the split with their relaxed madd renamed to binaryen 108's draft
// encoding and back (scripts/split-wasm.mjs): a product through the GEMM (relaxed madd in the first
// part) against float64 sums here, then a float64 call loading the deferred part.
test('the relaxed tiers: split, their fused multiply-adds intact in both parts', { skip: !existsSync(path.join(DIST, 'relaxed-simd', 'mxcore.wasm')) && 'relaxed tiers not built here' }, () => {
  for (const tier of ['relaxed-simd', 'relaxed-simd-threads'].filter((t) => existsSync(path.join(DIST, t, 'mxcore.wasm')))) {
    const r = child(DIST, tier, `
      const { nd } = mx;
      const n = 67, a = Float32Array.from({ length: n * n }, (_, i) => Math.sin(i)), b = Float32Array.from({ length: n * n }, (_, i) => Math.cos(3 * i));
      const c = nd.dot(nd.array(a).reshape([n, n]), nd.array(b).reshape([n, n])).toTypedArray();
      const before = mx.features().deferred;
      const d = nd.array([0.5, 2], { dtype: 'float64' }).mul(nd.array([4, -3], { dtype: 'float64' })).toArray();
      console.log(JSON.stringify({ before, after: mx.features().deferred, d, c: Array.from(c) }));`, ['--experimental-wasm-relaxed-simd']);
    const n = 67;
    let worst = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0, mag = 0;
        for (let k = 0; k < n; k++) { const p = Math.fround(Math.sin(i * n + k)) * Math.fround(Math.cos(3 * (k * n + j))); s += p; mag += Math.abs(p); }
        worst = Math.max(worst, Math.abs(r.c[i * n + j] - s) / mag);
      }
    }
    assert.ok(worst < 1e-6, `${tier}: dot off by ${worst} of the terms' magnitude`);
    if (split(tier)) {
      assert.equal(r.before, 'not loaded', tier);
      assert.equal(r.after, 'loaded', tier);
    } else {
      assert.equal(r.before, 'none', tier);
    }
    assert.deepEqual(r.d, [2, -6]);
  }
});
