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

test('web demo: the sample 7 is classified 7; a model picked from local files runs', { timeout: 180_000, skip: REAL_FILES_SKIP }, async () => {
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/web-demo/index.html`);
    await page.waitForFunction(() => window.demo && window.demo.ready, null, { timeout: 60_000 });
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
