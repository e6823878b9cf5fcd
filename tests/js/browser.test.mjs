// The same SymbolBlock.imports in headless Chromium (Debian's, driven by playwright-core), from
// URLs served on 127.0.0.1: the outputs equal Node's bit for bit (same wasm, same inputs: the page
// loads the tier this Node process runs, through its subpath entry).
import test from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import * as mx from 'mxnet-wasm';
import path from 'node:path';
import { startServer } from '../../scripts/serve.mjs';
import { MODELS, REAL_FILES_SKIP } from './fixtures.mjs';
import { rng } from './oracle.mjs';

const { nd, gluon } = mx;

// Chromium as the probe recipe starts it: headless, no sandbox (root), no background networking.
const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};

test('SymbolBlock.imports runs in Chromium from 127.0.0.1 URLs with the same outputs as Node', { timeout: 180_000, skip: REAL_FILES_SKIP }, async () => {
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    const logs = [];
    page.on('console', (m) => logs.push(m.text()));
    page.on('pageerror', (e) => logs.push(String(e)));
    await page.goto(`${server.url}/tests/browser/blank.html`);
    const lenetInput = Array.from(rng(3).uniform(2 * 28 * 28, 0, 1));
    const retinaInput = Array.from(rng(4).uniform(3 * 64 * 64, 0, 255));
    const tier = mx.features().tier;
    const result = await page.evaluate(async ({ lenetInput, retinaInput, tier }) => {
      const mx = await import(`/dist/${tier}.mjs`);
      const { nd, gluon } = mx;
      const linreg = await gluon.SymbolBlock.imports('/models/linreg-v1/model-symbol.json', ['data'], '/models/linreg-v1/model-0000.params');
      const lenet = await gluon.SymbolBlock.imports(new URL('/models/lenet-gluon/lenet-symbol.json', location.href), ['data'],
        await fetch('/models/lenet-gluon/lenet-0001.params'));
      const retina = await gluon.SymbolBlock.imports('/models/retinaface-mnet25/16-symbol.json', ['data'],
        await (await fetch('/models/retinaface-mnet25/16-0000.params')).blob());
      const r = retina(nd.array(retinaInput, { shape: [1, 3, 64, 64] }));
      return {
        version: mx.version,
        linreg: Array.from(linreg(nd.array([[1, 2]])).toTypedArray()),
        lenet: Array.from(lenet(nd.array(lenetInput, { shape: [2, 1, 28, 28] })).toTypedArray()),
        retina: r.map((o) => Array.from(o.toTypedArray())),
        features: mx.features(),
      };
    }, { lenetInput, retinaInput, tier });
    assert.equal(result.version, mx.version);
    assert.deepEqual(result.linreg, [4.9999918937683105]);
    const lenet = await gluon.SymbolBlock.imports(path.join(MODELS, 'lenet-gluon/lenet-symbol.json'), ['data'], path.join(MODELS, 'lenet-gluon/lenet-0001.params'));
    assert.deepEqual(result.lenet, Array.from(lenet(nd.array(lenetInput, { shape: [2, 1, 28, 28] })).toTypedArray()));
    const retina = await gluon.SymbolBlock.imports(path.join(MODELS, 'retinaface-mnet25/16-symbol.json'), ['data'], path.join(MODELS, 'retinaface-mnet25/16-0000.params'));
    const r = retina(nd.array(retinaInput, { shape: [1, 3, 64, 64] }));
    assert.deepEqual(result.retina, r.map((o) => Array.from(o.toTypedArray())));
    assert.equal(result.features.simd, true);
    assert.equal(result.features.tier, tier);
    assert.ok(!logs.some((l) => /error/i.test(l)), logs.join('\n'));
  } finally {
    await browser.close();
    await server.close();
  }
});
