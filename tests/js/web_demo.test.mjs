// The web demo in headless Chromium: it loads the package through an import map, imports
// MXNet 1.4's MNIST model from URLs, and classifies MNIST test images of a 7 as 7 (the known
// result, ../shared/models/README.md); a user's exported files load from File objects.
import test from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import path from 'node:path';
import { startServer } from '../../scripts/serve.mjs';
import { MODELS, REAL_FILES_SKIP } from './fixtures.mjs';

const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};

// A new page on the demo, ready to classify; `errors` collects the page's uncaught errors.
async function openDemo(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${url}/web-demo/index.html`);
  await page.waitForFunction(() => window.demo && window.demo.ready, null, { timeout: 60_000 });
  return { page, errors };
}

test('web demo: the sample 7 is classified 7; a model picked from local files runs', { timeout: 180_000, skip: REAL_FILES_SKIP }, async () => {
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const { page, errors } = await openDemo(browser, server.url);
    for (let i = 0; i < 3; i++) {
      await page.click('#sample');
      await page.waitForFunction(() => document.getElementById('prediction').textContent !== '–');
      assert.equal(await page.textContent('#prediction'), '7');
    }
    assert.equal(await page.locator('#probs li').count(), 10);
    await page.setInputFiles('#symfile', path.join(MODELS, 'lenet-gluon/lenet-symbol.json'));
    await page.setInputFiles('#paramfile', path.join(MODELS, 'lenet-gluon/lenet-0001.params'));
    await page.fill('#shape', '2,1,28,28');
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('byo-out').textContent.length > 0);
    const out = await page.textContent('#byo-out');
    assert.match(out, /output 0: shape \(2, 10\)/);
    assert.match(out, /loaded 8 parameters/);
    if (process.env.MXW_SCREENSHOT) await page.screenshot({ path: process.env.MXW_SCREENSHOT, fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});

// The demo served cross-origin isolated (COOP/COEP: scripts/serve.mjs's default) runs its
// inference worker on a threaded tier; served without the headers, on a single-thread tier; the
// same test digit gets the same prediction and probabilities either way.
test('web demo: threaded tier when cross-origin isolated, single-thread when not, same prediction', { timeout: 180_000, skip: REAL_FILES_SKIP }, async () => {
  const browser = await chromium.launch(LAUNCH);
  const seen = {};
  try {
    for (const isolated of [true, false]) {
      const server = await startServer(0, { isolated });
      try {
        const { page, errors } = await openDemo(browser, server.url);
        seen[isolated] = await page.evaluate(async () => {
          const text = await (await fetch('../models/mnist-mlp-module/07.csv')).text();
          const pixels = Float32Array.from(text.trim().split('\n')[0].split(','), Number);
          const r = await window.demo.classify(pixels);
          return { isolated: window.demo.isolated, features: window.demo.features, best: r.best, probs: r.probs,
            status: document.getElementById('status').textContent };
        });
        assert.deepEqual(errors, []);
        await page.close();
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
  }
  const on = seen[true], off = seen[false];
  assert.equal(on.isolated, true);
  assert.equal(on.features.threads, true);
  assert.match(on.features.tier, /threads$/);
  assert.ok(on.features.numThreads >= 2, `${on.features.numThreads} threads`);
  assert.match(on.status, /tier in a worker, \d+ threads/);
  assert.equal(off.isolated, false);
  assert.equal(off.features.threads, false);
  assert.doesNotMatch(off.features.tier, /threads/);
  assert.ok(off.features.fallbacks.some((f) => /cross-origin isolated/.test(f.reason)), JSON.stringify(off.features.fallbacks));
  // the known result (../shared/models/README.md): the test digits in 07.csv are 7s
  assert.equal(on.best, 7);
  assert.equal(off.best, 7);
  for (let i = 0; i < 10; i++) assert.ok(Math.abs(on.probs[i] - off.probs[i]) <= 1e-6, `class ${i}: ${on.probs[i]} vs ${off.probs[i]}`);
});

