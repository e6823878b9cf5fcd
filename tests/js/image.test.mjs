// mx.image (js/image.mjs) in Node: fromPixels from ImageData-shaped objects against arrays worked
// out here; imdecode/imread of PNGs written by an encoder in this file (node:zlib's deflate and
// crc32, every colour type and bit depth, filters, Adam7 interlacing, palettes with tRNS) against
// the pixels encoded; grey levels by libpng's formula written here; corrupt files refused; the
// image.py helpers (imresize, resize_short, center_crop, fixed_crop, scale_down, color_normalize)
// against values and positions worked by hand; fromPixels -> transforms.ToTensor/Normalize.
import test from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync, crc32 } from 'node:zlib';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as mx from 'mxnet-wasm';

const { nd, gluon } = mx;
const T = gluon.data.vision.transforms;
const vals = (x) => Array.from(x.toTypedArray(), Number);
const rejectsWith = (p, re) => assert.rejects(p, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));
const throwsWith = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));

// A deterministic byte pattern.
const pattern = (n, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + seed * 11 + ((i * i) >> 3)) & 255);

// ---- a PNG encoder (the test's own) ----------------------------------------------------------------
function chunk(type, body) {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, 'latin1');
  Buffer.from(body).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}
// samples: one integer per channel per pixel (row-major), `depth` bits each.
function packRows(samples, width, height, comps, depth, filter) {
  const stride = Math.ceil((width * comps * depth) / 8);
  const bpp = Math.max(1, (comps * depth) >> 3);
  const rows = [];
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const line = new Uint8Array(stride);
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < comps; k++) {
        const v = samples[(y * width + x) * comps + k];
        if (depth === 16) { line[(x * comps + k) * 2] = v >> 8; line[(x * comps + k) * 2 + 1] = v & 255; } else if (depth === 8) line[x * comps + k] = v;
        else { const bit = (x * comps + k) * depth; line[bit >> 3] |= v << (8 - depth - (bit & 7)); }
      }
    }
    const f = filter === 'mixed' ? y % 5 : filter;
    const enc = new Uint8Array(stride + 1);
    enc[0] = f;
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? line[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      const paeth = () => { const p = a + b - c; const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); return pa <= pb && pa <= pc ? a : pb <= pc ? b : c; };
      const pred = [0, a, b, (a + b) >> 1, paeth()][f];
      enc[i + 1] = (line[i] - pred) & 255;
    }
    rows.push(enc);
    prev = line;
  }
  return Buffer.concat(rows);
}
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]];
function encodePNG({ width, height, colorType, depth = 8, samples, palette = null, trns = null, filter = 'mixed', interlace = false }) {
  const comps = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colorType];
  let raw;
  if (!interlace) raw = packRows(samples, width, height, comps, depth, filter);
  else {
    const parts = [];
    for (const [x0, y0, dx, dy] of ADAM7) {
      const pw = Math.ceil((width - x0) / dx), ph = Math.ceil((height - y0) / dy);
      if (pw <= 0 || ph <= 0) continue;
      const sub = [];
      for (let y = y0; y < height; y += dy) for (let x = x0; x < width; x += dx) for (let k = 0; k < comps; k++) sub.push(samples[(y * width + x) * comps + k]);
      parts.push(packRows(sub, pw, ph, comps, depth, filter));
    }
    raw = Buffer.concat(parts);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([depth, colorType, 0, 0, interlace ? 1 : 0], 8);
  return new Uint8Array(Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
    ...(palette ? [chunk('PLTE', palette)] : []), ...(trns ? [chunk('tRNS', trns)] : []),
    // the image data split over two IDAT chunks, as encoders may
    chunk('IDAT', deflateSync(raw).subarray(0, 5)), chunk('IDAT', deflateSync(raw).subarray(5)), chunk('IEND', Buffer.alloc(0)),
  ]));
}

// libpng's rgb_to_gray as OpenCV sets it (0.299, 0.587 of 32768, truncated; blue the rest).
const greyOf = (r, g, b) => (r === g && g === b ? r : Math.floor((9797 * r + 19234 * g + 3737 * b) / 32768));

// ---- fromPixels ---------------------------------------------------------------------------------------
test('fromPixels: ImageData-shaped RGBA -> (H, W, 3|4|1) uint8 as worked out by hand', () => {
  // 2 x 3 image, row-major RGBA
  const data = new Uint8ClampedArray([
    255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 0,
    10, 20, 30, 40, 200, 100, 50, 255, 7, 7, 7, 7,
  ]);
  const src = { data, width: 3, height: 2 };
  const rgb = mx.image.fromPixels(src);
  assert.deepEqual(rgb.shape, [2, 3, 3]);
  assert.equal(rgb.dtype, 'uint8');
  assert.deepEqual(vals(rgb), [255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 200, 100, 50, 7, 7, 7]);
  assert.deepEqual(vals(mx.image.fromPixels(src, { channels: 4 })), Array.from(data));
  // grey: floor((9797 R + 19234 G + 3737 B) / 32768); equal R, G, B keep their value
  assert.deepEqual(vals(mx.image.fromPixels(src, 1)), [76, 149, 29, 18, 124, 7]);
  assert.deepEqual(mx.image.fromPixels(src, 1).shape, [2, 3, 1]);
  // a Uint8Array works as well (ImageData.data is a Uint8ClampedArray)
  assert.deepEqual(vals(mx.image.fromPixels({ data: new Uint8Array(data), width: 3, height: 2 })), vals(rgb));
  throwsWith(() => mx.image.fromPixels(src, { channels: 2 }), /channels must be 1, 3 or 4/);
  throwsWith(() => mx.image.fromPixels({ data, width: 2, height: 2 }), /needs 16 RGBA bytes, got 24/);
  throwsWith(() => mx.image.fromPixels({ data: [1, 2, 3, 4], width: 1, height: 1 }), /Uint8ClampedArray/);
  throwsWith(() => mx.image.fromPixels(42), /fromPixels takes ImageData/);
  throwsWith(() => mx.image.fromPixels(src, { chanels: 1 }), /unknown argument 'chanels'/);
});

test('fromPixels feeds transforms: ToTensor and Normalize give (C, H, W) (v / 255 - mean) / std', () => {
  const W = 4, H = 3;
  const data = new Uint8ClampedArray(pattern(W * H * 4));
  const x = mx.image.fromPixels({ data, width: W, height: H });
  const mean = [0.485, 0.456, 0.406], std = [0.229, 0.224, 0.225];
  const t = new T.Compose([new T.ToTensor(), new T.Normalize(mean, std)]);
  const y = t.forward(x);
  assert.deepEqual(y.shape, [3, H, W]);
  const want = [];
  for (let c = 0; c < 3; c++) for (let i = 0; i < H * W; i++) want.push((data[i * 4 + c] / 255 - mean[c]) / std[c]);
  vals(y).forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-5, `${i}: ${v} vs ${want[i]}`));
});

// ---- imdecode / imread: PNG ---------------------------------------------------------------------------
// Expected RGB (or grey) of the samples encoded, per colour type.
function expectedRGB({ width, height, colorType, depth = 8, samples, palette, trns }, flag = 1, bgr = false) {
  const n = width * height;
  const out = [];
  const hi = (v) => (depth === 16 ? v >> 8 : depth < 8 ? Math.round((v * 255) / ((1 << depth) - 1)) : v);
  for (let i = 0; i < n; i++) {
    let r, g, b;
    if (colorType === 0) r = g = b = hi(samples[i]);
    else if (colorType === 4) r = g = b = hi(samples[i * 2]);
    else if (colorType === 2) [r, g, b] = [0, 1, 2].map((k) => hi(samples[i * 3 + k]));
    else if (colorType === 6) [r, g, b] = [0, 1, 2].map((k) => hi(samples[i * 4 + k]));
    else [r, g, b] = [0, 1, 2].map((k) => palette[samples[i] * 3 + k]);
    if (flag === 0) out.push(greyOf(r, g, b));
    else out.push(...(bgr ? [b, g, r] : [r, g, b]));
  }
  void trns;
  return out;
}

const CASES = [
  { name: 'RGB 8-bit', width: 5, height: 4, colorType: 2, depth: 8 },
  { name: 'RGBA 8-bit (alpha dropped)', width: 3, height: 6, colorType: 6, depth: 8 },
  { name: 'grey 8-bit', width: 7, height: 3, colorType: 0, depth: 8 },
  { name: 'grey+alpha 8-bit', width: 4, height: 4, colorType: 4, depth: 8 },
  { name: 'grey 1-bit', width: 11, height: 3, colorType: 0, depth: 1 },
  { name: 'grey 2-bit', width: 6, height: 2, colorType: 0, depth: 2 },
  { name: 'grey 4-bit', width: 5, height: 3, colorType: 0, depth: 4 },
  { name: 'RGB 16-bit (high byte)', width: 3, height: 3, colorType: 2, depth: 16 },
  { name: 'grey 16-bit', width: 4, height: 2, colorType: 0, depth: 16 },
  { name: 'palette 8-bit with tRNS', width: 6, height: 5, colorType: 3, depth: 8 },
  { name: 'palette 2-bit', width: 9, height: 2, colorType: 3, depth: 2 },
  { name: 'RGB 8-bit, Adam7 interlaced', width: 13, height: 11, colorType: 2, depth: 8, interlace: true },
  { name: 'grey 1-bit, Adam7 interlaced', width: 10, height: 9, colorType: 0, depth: 1, interlace: true },
  { name: 'RGBA 16-bit, Adam7 interlaced', width: 3, height: 5, colorType: 6, depth: 16, interlace: true },
];
function makeCase(c) {
  const comps = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[c.colorType];
  const max = c.colorType === 3 ? Math.min(1 << c.depth, 7) : 1 << c.depth;
  const bytes = pattern(c.width * c.height * comps * 2, c.width);
  const samples = Array.from({ length: c.width * c.height * comps }, (_, i) => (c.depth === 16
    ? (bytes[2 * i] << 8) | bytes[2 * i + 1] : bytes[i] % max));
  const spec = { ...c, samples };
  if (c.colorType === 3) {
    spec.palette = pattern(7 * 3, 3);
    spec.trns = Uint8Array.from([0, 128, 255]);
  }
  return spec;
}

test('imdecode: PNGs of every colour type and bit depth, filtered and interlaced, decode to the encoded pixels', async () => {
  for (const c of CASES) {
    const spec = makeCase(c);
    const png = encodePNG(spec);
    const rgb = await mx.image.imdecode(png);
    assert.deepEqual(rgb.shape, [c.height, c.width, 3], c.name);
    assert.equal(rgb.dtype, 'uint8');
    assert.deepEqual(vals(rgb), expectedRGB(spec), c.name);
    const bgr = await mx.image.imdecode(png, { to_rgb: false });
    assert.deepEqual(vals(bgr), expectedRGB(spec, 1, true), `${c.name} BGR`);
    const grey = await mx.image.imdecode(png.buffer, 0);
    assert.deepEqual(grey.shape, [c.height, c.width, 1], c.name);
    if (c.depth !== 16 || c.colorType === 0) assert.deepEqual(vals(grey), expectedRGB(spec, 0), `${c.name} grey`);
    for (const x of [rgb, bgr, grey]) x.dispose();
  }
});

test('imdecode: NDArray and Blob buffers, out=, and errors naming the cause', async () => {
  const spec = makeCase(CASES[0]);
  const png = encodePNG(spec);
  const fromNd = await mx.image.imdecode(nd.array(png, { dtype: 'uint8' }));
  assert.deepEqual(vals(fromNd), expectedRGB(spec));
  const fromBlob = await mx.image.imdecode(new Blob([png]));
  assert.deepEqual(vals(fromBlob), expectedRGB(spec));
  const out = nd.zeros([4, 5, 3], { dtype: 'uint8' });
  const r = await mx.image.imdecode(png, 1, true, out);
  assert.equal(r, out);
  assert.deepEqual(vals(out), expectedRGB(spec));
  // corrupt files
  const badCrc = png.slice();
  badCrc[20] ^= 1; // inside IHDR
  await rejectsWith(mx.image.imdecode(badCrc), /corrupt PNG: chunk IHDR at byte 8 fails its CRC/);
  await rejectsWith(mx.image.imdecode(png.subarray(0, 40)), /corrupt PNG/);
  await rejectsWith(mx.image.imdecode(Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9])), /not a PNG, JPEG/);
  await rejectsWith(mx.image.imdecode(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0])), /no JPEG decoder here.*decoder/);
  await rejectsWith(mx.image.imdecode('cat.png'), /use imread/);
  await rejectsWith(mx.image.imdecode(png, 2), /flag must be 1/);
  // a caller's decoder for what the platform cannot decode (here: "JPEG" bytes decoded by a stub)
  const jpegish = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 1, 2]);
  const seen = [];
  const img = await mx.image.imdecode(jpegish, {
    decoder: async (bytes, mime) => { seen.push([bytes.length, mime]); return { data: Uint8Array.from([1, 2, 3, 4, 5, 6]), width: 2, height: 1 }; },
  });
  assert.deepEqual(seen, [[6, 'image/jpeg']]);
  assert.deepEqual(vals(img), [1, 2, 3, 4, 5, 6]);
  const grey = await mx.image.imdecode(jpegish, { flag: 0, decoder: () => ({ data: Uint8Array.from([9, 200]), width: 2, height: 1 }) });
  assert.deepEqual(vals(grey), [9, 200]);
});

test('imread: a PNG file in Node, with progress events summing to its size', async () => {
  const spec = makeCase(CASES[11]);
  const png = encodePNG(spec);
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-image-'));
  const file = path.join(dir, 'x.png');
  writeFileSync(file, png);
  const events = [];
  const img = await mx.image.imread(file, { onProgress: (e) => events.push(e) });
  assert.deepEqual(vals(img), expectedRGB(spec));
  assert.equal(events.reduce((s, e) => s + e.bytes, 0), png.length);
  assert.deepEqual(events.at(-1), { file, loaded: png.length, total: png.length, bytes: 0, done: true });
  const grey = await mx.image.imread(file, 0);
  assert.deepEqual(vals(grey), expectedRGB(spec, 0));
  await rejectsWith(mx.image.imread(path.join(dir, 'missing.png')), /cannot read .*missing\.png/);
});

// ---- image.py helpers ----------------------------------------------------------------------------------
test('imresize, resize_short, fixed_crop, center_crop, scale_down as image.py', () => {
  // nearest neighbour (interp 0) doubling a 1 x 2 image: OpenCV's x = floor(dx * 2 / 4)
  const src = nd.array([[[10], [20]]], { dtype: 'uint8' });
  assert.deepEqual(vals(mx.image.imresize(src, 4, 1, 0)), [10, 10, 20, 20]);
  assert.deepEqual(mx.image.imresize(src, 4, 3, { interp: 0 }).shape, [3, 4, 1]);
  const out = nd.zeros([1, 4, 1], { dtype: 'uint8' });
  mx.image.imresize(src, 4, 1, 0, out);
  assert.deepEqual(vals(out), [10, 10, 20, 20]);
  // resize_short: (30, 40) with size 20 -> (20, 40 * 20 // 30 = 26); (50, 20) -> (125, 50)
  // (image.py's default interp is 2, bicubic)
  const img = nd.zeros([30, 40, 3], { dtype: 'uint8' });
  assert.deepEqual(mx.image.resize_short(img, 20, 1).shape, [20, 26, 3]);
  assert.deepEqual(mx.image.resizeShort(nd.zeros([50, 20, 1], { dtype: 'uint8' }), 50, { interp: 1 }).shape, [125, 50, 1]);
  assert.deepEqual(mx.image.resize_short(img, 20).shape, [20, 26, 3]);
  // scale_down((640, 480), (720, 120)) = (640, 106) (image.py's docstring)
  assert.deepEqual(mx.image.scale_down([640, 480], [720, 120]), [640, 106]);
  // a 6 x 8 image whose pixel (y, x) holds 10 y + x
  const grid = nd.array(Array.from({ length: 48 }, (_, i) => 10 * Math.floor(i / 8) + (i % 8)), { shape: [6, 8, 1], dtype: 'uint8' });
  // center_crop to (4, 2): x0 = (8 - 4) / 2 = 2, y0 = (6 - 2) / 2 = 2
  const [c, rect] = mx.image.center_crop(grid, [4, 2]);
  assert.deepEqual(rect, [2, 2, 4, 2]);
  assert.deepEqual(vals(c), [22, 23, 24, 25, 32, 33, 34, 35]);
  assert.deepEqual(vals(mx.image.fixed_crop(grid, 5, 1, 2, 3)), [15, 16, 25, 26, 35, 36]);
  // a crop larger than the image is scaled down first: (16, 3) -> (8, 1.5) -> (8, 1), then resized to 16 x 3
  const [big, r2] = mx.image.centerCrop(grid, [16, 3], 1);
  assert.deepEqual(r2, [0, 2, 8, 1]);
  assert.deepEqual(big.shape, [3, 16, 1]);
  throwsWith(() => mx.image.imresize(nd.zeros([4]), 2, 2), /takes an \(H, W, C\) image/);
});

test('color_normalize subtracts the mean and divides by std in place', () => {
  const src = nd.array([[[10, 20, 30], [40, 50, 60]]]);
  const r = mx.image.color_normalize(src, [1, 2, 3], [2, 4, 8]);
  assert.equal(r, src);
  assert.deepEqual(vals(src), [4.5, 4.5, 3.375, 19.5, 12, 7.125]);
  const s2 = nd.array([[[10, 20]]]);
  mx.image.colorNormalize(s2, 5);
  assert.deepEqual(vals(s2), [5, 15]);
  const s3 = nd.array([[[10, 20]]]);
  mx.image.color_normalize(s3, nd.array([1, 2]), nd.array([3, 6]));
  assert.deepEqual(vals(s3), [3, 3]);
  throwsWith(() => mx.image.color_normalize(nd.zeros([1, 1, 3], { dtype: 'uint8' }), [1, 2, 3]), /floating point.*astype/);
});

test('mx.img is mx.image, in the default export too', () => {
  assert.equal(mx.img, mx.image);
  assert.equal(mx.default.image, mx.image);
});
