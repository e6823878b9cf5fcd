// mx.image.fromPixels and imdecode/imread in headless Chromium (Debian's, driven by playwright-core
// as browser.test.mjs does): a known opaque pattern put on a canvas comes back from the canvas,
// its ImageData, an ImageBitmap, an OffscreenCanvas, an <img> of its PNG, a VideoFrame and a
// WebGL canvas as the (H, W, C) uint8 array worked out here in Node; Chromium's own PNG encoder's
// files decode to the pattern; a JPEG goes through the browser's decoder; imread of a URL reports
// progress; ToTensor takes the result.
import test from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import * as mx from 'mxnet-wasm';
import { startServer } from '../../scripts/serve.mjs';

const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};

const W = 7, H = 5;
// RGBA, alpha 255 everywhere (a canvas stores premultiplied colour: only opaque pixels read back exactly)
const rgba = Array.from({ length: W * H * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * 53 + 17 * Math.floor(i / 28)) % 256));
const rgb = rgba.filter((_, i) => i % 4 !== 3);
const greyOf = (r, g, b) => (r === g && g === b ? r : Math.floor((9797 * r + 19234 * g + 3737 * b) / 32768));
const grey = Array.from({ length: W * H }, (_, i) => greyOf(rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2]));

test('fromPixels and imdecode in Chromium give the hand-computed arrays', { timeout: 120_000 }, async () => {
  const server = await startServer();
  const browser = await chromium.launch(LAUNCH);
  try {
    const page = await browser.newPage();
    const logs = [];
    page.on('pageerror', (e) => logs.push(String(e)));
    await page.goto(`${server.url}/tests/browser/blank.html`);
    const tier = mx.features().tier;
    const r = await page.evaluate(async ({ rgba, W, H, tier }) => {
      const mx = await import(`/dist/${tier}.mjs`);
      const vals = (x) => ({ shape: x.shape, dtype: x.dtype, data: Array.from(x.toTypedArray()) });
      const out = {};
      const canvas = document.createElement('canvas');
      canvas.width = W;
      canvas.height = H;
      const ctx = canvas.getContext('2d');
      const imageData = new ImageData(new Uint8ClampedArray(rgba), W, H);
      ctx.putImageData(imageData, 0, 0);
      out.canvas = vals(mx.image.fromPixels(canvas));
      out.canvas4 = vals(mx.image.fromPixels(canvas, { channels: 4 }));
      out.canvas1 = vals(mx.image.fromPixels(canvas, 1));
      out.imageData = vals(mx.image.fromPixels(ctx.getImageData(0, 0, W, H)));
      out.bitmap = vals(mx.image.fromPixels(await createImageBitmap(canvas)));
      const off = new OffscreenCanvas(W, H);
      off.getContext('2d').putImageData(imageData, 0, 0);
      out.offscreen = vals(mx.image.fromPixels(off));
      const img = new Image();
      img.src = canvas.toDataURL('image/png');
      await img.decode();
      out.img = vals(mx.image.fromPixels(img));
      const frame = new VideoFrame(canvas, { timestamp: 0 });
      out.videoFrame = vals(mx.image.fromPixels(frame));
      frame.close();
      // a WebGL canvas cleared to one colour (drawn into a 2d scratch canvas)
      const gl = document.createElement('canvas');
      gl.width = 3;
      gl.height = 2;
      const g = gl.getContext('webgl', { preserveDrawingBuffer: true });
      if (g) {
        g.clearColor(1, 0.2, 0.6, 1);
        g.clear(g.COLOR_BUFFER_BIT);
        out.webgl = vals(mx.image.fromPixels(gl));
      }
      const pending = new Image();
      try { mx.image.fromPixels(pending); } catch (e) { out.pendingError = `${e.name}: ${e.message}`; }
      // Chromium's PNG encoder -> our decoder; JPEG -> the browser's decoder
      const png = new Uint8Array(await (await off.convertToBlob({ type: 'image/png' })).arrayBuffer());
      out.png = vals(await mx.image.imdecode(png));
      out.pngGrey = vals(await mx.image.imdecode(png, 0));
      const smooth = new OffscreenCanvas(16, 16);
      const sctx = smooth.getContext('2d');
      const grad = sctx.createLinearGradient(0, 0, 16, 16);
      grad.addColorStop(0, 'rgb(40, 80, 120)');
      grad.addColorStop(1, 'rgb(200, 160, 100)');
      sctx.fillStyle = grad;
      sctx.fillRect(0, 0, 16, 16);
      const smoothPixels = Array.from(sctx.getImageData(0, 0, 16, 16).data).filter((_, i) => i % 4 !== 3);
      const jpeg = await smooth.convertToBlob({ type: 'image/jpeg', quality: 1 });
      const dec = await mx.image.imdecode(jpeg);
      const d = Array.from(dec.toTypedArray());
      out.jpeg = { shape: dec.shape, maxErr: Math.max(...d.map((v, i) => Math.abs(v - smoothPixels[i]))) };
      // imread of a URL, with progress
      const url = URL.createObjectURL(new Blob([png], { type: 'image/png' }));
      const events = [];
      out.imread = vals(await mx.image.imread(url, { onProgress: (e) => events.push(e) }));
      out.events = events.map((e) => [e.bytes, e.loaded, e.done]);
      out.pngSize = png.length;
      // ToTensor takes fromPixels' output
      const t = new mx.gluon.data.vision.transforms.ToTensor();
      out.tensor = vals(t.forward(mx.image.fromPixels(canvas)));
      return out;
    }, { rgba, W, H, tier });

    const HWC = (c) => ({ shape: [H, W, c], dtype: 'uint8' });
    for (const k of ['canvas', 'imageData', 'bitmap', 'offscreen', 'img', 'videoFrame', 'png', 'imread']) {
      assert.deepEqual(r[k], { ...HWC(3), data: rgb }, k);
    }
    assert.deepEqual(r.canvas4, { ...HWC(4), data: rgba });
    assert.deepEqual(r.canvas1, { ...HWC(1), data: grey });
    assert.deepEqual(r.pngGrey, { ...HWC(1), data: grey });
    // 1, 0.2, 0.6 of 255: 255, 51, 153
    if (r.webgl) assert.deepEqual(r.webgl, { shape: [2, 3, 3], dtype: 'uint8', data: new Array(6).fill([255, 51, 153]).flat() });
    assert.match(r.pendingError, /MXNetError: fromPixels: the image has not loaded/);
    assert.deepEqual(r.jpeg.shape, [16, 16, 3]);
    assert.ok(r.jpeg.maxErr <= 6, `JPEG decoded with an error of ${r.jpeg.maxErr} levels`);
    assert.equal(r.events.reduce((s, e) => s + e[0], 0), r.pngSize);
    assert.deepEqual(r.events.at(-1), [0, r.pngSize, true]);
    // ToTensor: (C, H, W) of v / 255
    const want = [];
    for (let c = 0; c < 3; c++) for (let i = 0; i < W * H; i++) want.push(Math.fround(rgb[i * 3 + c] / 255));
    assert.deepEqual(r.tensor.shape, [3, H, W]);
    r.tensor.data.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-6, `${i}`));
    assert.deepEqual(logs, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
