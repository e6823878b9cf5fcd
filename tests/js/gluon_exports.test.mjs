// Real GluonCV / GluonNLP exports written by MXNet 1.4-1.5 (../shared/models/gluon-exports, symbol
// files only: run on random weights as its README says, BatchNorm variances 1) load with
// SymbolBlock and run, in Node and in headless Chromium, with the output shapes MXNet gives:
// SSD (ids, scores (1, N, 1), boxes (1, N, 4)), Mask R-CNN's four heads, SE-ResNeXt (1, 1000)
// and BERT QA (1, 384, 2). These need the contrib operators (_contrib_box_nms, ROIAlign,
// AdaptiveAvgPooling2D, broadcast_axis, div_sqrt_dim, SequenceMask, ...). Skipped, saying so,
// without ../shared.
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { chromium } from 'playwright-core';
import * as mx from 'mxnet-wasm';
import { MODELS, REAL_FILES_SKIP } from './fixtures.mjs';
import { startServer } from '../../scripts/serve.mjs';

const DIR = path.join(MODELS, 'gluon-exports');
// [file stem, inputs {name: shape}, expected output shapes (N: MXNet's count for this input)]
const CASES = [
  ['ssd_512_resnet50_v1', { data: [1, 3, 512, 512] }, [[1, 100, 1], [1, 100, 1], [1, 100, 4]]],
  ['se_resnext101_32x4d', { data: [1, 3, 224, 224] }, [[1, 1000]]],
  ['static_bert_qa', { data0: [1, 384], data1: [1, 384], data2: [1] }, [[1, 384, 2]]],
  ['mask_rcnn_resnet18_v1b_coco', { data: [1, 3, 256, 256] }, [[1, 1000, 1], [1, 1000, 1], [1, 1000, 4], [1, 1000, 14, 14]]],
];

// The same steps in Node and in the page: load, initialize (BatchNorm variances 1, the rest uniform in
// [-0.07, 0.07], MXNet's default), one forward, checked.
// BERT's token ids are zeros, token types zeros and valid length 100.
const RUN = `async (mx, load, name, inputs) => {
  const { nd, sym, gluon } = mx;
  const s = await load(name);
  const names = Object.keys(inputs);
  const net = new gluon.SymbolBlock(s, names.map((n) => sym.var(n)));
  net.initialize(new mx.init.Mixed(['.*running_var$', '.*'], [new mx.init.One(), new mx.init.Uniform(0.07)]));
  mx.random.seed(11);
  const xs = names.map((n) => (n === 'data2' ? nd.array([100]) : n === 'data0' || n === 'data1' ? nd.zeros(inputs[n])
    : nd.random.uniform({ shape: inputs[n] })));
  const outs = [net(...xs)].flat();
  const shapes = outs.map((o) => o.shape);
  const finite = outs.every((o) => o.toTypedArray().every(Number.isFinite));
  net.dispose();
  return { shapes, finite };
}`;
// eslint-disable-next-line no-new-func
const run = new Function(`return ${RUN}`)();

for (const [name, inputs, expected] of CASES) {
  test(`${name}: loads and runs in Node with MXNet's output shapes`, { skip: REAL_FILES_SKIP, timeout: 300_000 }, async () => {
    const r = await run(mx, (n) => mx.sym.load(path.join(DIR, `${n}-symbol.json`)), name, inputs);
    assert.deepEqual(r.shapes, expected);
    assert.ok(r.finite, 'every output finite');
  });
}

test('the four exports run in headless Chromium with the same output shapes', { skip: REAL_FILES_SKIP, timeout: 600_000 }, async () => {
  const server = await startServer();
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    const logs = [];
    page.on('pageerror', (e) => logs.push(String(e)));
    await page.goto(`${server.url}/tests/browser/blank.html`);
    const tier = mx.features().tier;
    const results = await page.evaluate(async ({ cases, tier, RUN }) => {
      const mx = await import(`/dist/${tier}.mjs`);
      const run = (0, eval)(`(${RUN})`); // the same steps as in Node
      const out = [];
      for (const [name, inputs] of cases) {
        out.push(await run(mx, (n) => mx.sym.load(`/models/gluon-exports/${n}-symbol.json`), name, inputs));
      }
      return out;
    }, { cases: CASES.map(([n, i]) => [n, i]), tier, RUN });
    results.forEach((r, i) => {
      assert.deepEqual(r.shapes, CASES[i][2], CASES[i][0]);
      assert.ok(r.finite, `${CASES[i][0]}: every output finite`);
    });
    assert.ok(!logs.length, logs.join('\n'));
  } finally {
    await browser.close();
    await server.close?.();
  }
});
