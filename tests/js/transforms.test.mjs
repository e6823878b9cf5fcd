// gluon.data.vision.transforms (js/data/transforms.mjs) as MXNet 1.9.1's transforms.py: each
// transform against a plain JS computation written here (ToTensor + Normalize), TF.js's
// tf.image.resizeBilinear for the resizes (half-pixel centres, tolerance 1e-4 on float images),
// crop positions worked by hand from image.py's center_crop / scale_down, Compose's grouping of
// HybridBlocks, seeded random transforms, argument binding, and a full pipeline
// ArrayDataset -> transformFirst(Compose) -> DataLoader.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose } from './oracle.mjs';

const { nd, gluon } = mx;
const T = gluon.data.vision.transforms;
const throwsWith = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));
const vals = (x) => Array.from(x.toTypedArray(), Number);

function hwcImage([H, W, C], seed = 1, dtype = 'float32') {
  const data = Array.from(rng(seed).uniform(H * W * C, 0, 256), (v) => (dtype === 'uint8' ? Math.floor(v) : v));
  return { x: nd.array(data, { shape: [H, W, C], dtype }), data };
}
// (H, W, C) -> (C, H, W), (v / 255 - mean[c]) / std[c], in float64
function tensorNormalized(data, [H, W, C], mean, std) {
  const out = [];
  for (let c = 0; c < C; c++)
    for (let i = 0; i < H * W; i++) out.push((data[i * C + c] / 255 - mean[c]) / std[c]);
  return out;
}
function tfBilinear(data, shape, [h, w]) {
  return Array.from(tf.tidy(() => tf.image.resizeBilinear(tf.tensor(data, shape, 'float32'), [h, w], false, true)).dataSync());
}
// src[y0:y0+h, x0:x0+w] of an (H, W, C) image
function cropLoop(data, [, W, C], x0, y0, w, h) {
  const out = [];
  for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) for (let c = 0; c < C; c++) out.push(data[(y * W + x) * C + c]);
  return out;
}

test('ToTensor and Normalize: (x / 255 - mean) / std in CHW', () => {
  const shape = [4, 5, 3];
  const { x, data } = hwcImage(shape, 2, 'uint8');
  const mean = [0.485, 0.456, 0.406], std = [0.229, 0.224, 0.225];
  const t = new T.ToTensor()(x);
  assert.deepEqual(t.shape, [3, 4, 5]);
  const y = new T.Normalize(mean, std)(t);
  assertClose(vals(y), tensorNormalized(data, shape, mean, std), { rtol: 1e-5, atol: 1e-5 });
  // scalar mean/std (the defaults 0 and 1 leave the tensor unchanged)
  assert.deepEqual(vals(new T.Normalize()(t)), vals(t));
  assertClose(vals(new T.Normalize({ mean: 0.5, std: 0.5 })(t)), vals(t).map((v) => (v - 0.5) / 0.5), { rtol: 1e-6 });
  // batched NHWC -> NCHW
  const batch = nd.stack(x, x, { axis: 0, num_args: 2 });
  const tb = new T.ToTensor()(batch);
  assert.deepEqual(tb.shape, [2, 3, 4, 5]);
  assert.deepEqual(vals(tb), [...vals(t), ...vals(t)]);
  throwsWith(() => new T.Normalize({ mean: [1, 2, 3], average: 1 }), /unknown argument 'average'/);
});

test('Resize: (w, h) or one size, keep_ratio, interpolation; matches tf.image.resizeBilinear', () => {
  const shape = [6, 9, 3];
  const { x, data } = hwcImage(shape, 3);
  const y = new T.Resize([4, 5])(x); // (width, height)
  assert.deepEqual(y.shape, [5, 4, 3]);
  assertClose(vals(y), tfBilinear(data, shape, [5, 4]), { atol: 1e-4 });
  assert.deepEqual(new T.Resize(7)(x).shape, [7, 7, 3]);
  // keep_ratio: the short edge (6) becomes 4, the long one 9 * 4 / 6 = 6
  assert.deepEqual(new T.Resize(4, { keepRatio: true })(x).shape, [4, 6, 3]);
  assert.deepEqual(new T.Resize({ size: 4, keep_ratio: true })(x).shape, [4, 6, 3]);
  // nearest: floor(d * src / dst)
  const nn = new T.Resize([3, 2], false, 0)(x);
  const rows = [0, 3], cols = [0, 3, 6];
  assert.deepEqual(vals(nn), rows.flatMap((r) => cols.flatMap((c) => data.slice((r * 9 + c) * 3, (r * 9 + c) * 3 + 3))).map(Math.fround));
  // batched
  const b = new T.Resize([4, 5])(nd.stack(x, x, { axis: 0, num_args: 2 }));
  assert.deepEqual(b.shape, [2, 5, 4, 3]);
});

test('CenterCrop: the centred crop (image.py center_crop), upsampled when the image is smaller', () => {
  const shape = [7, 10, 3];
  const { x, data } = hwcImage(shape, 4);
  // size (4, 3): x0 = int((10 - 4) / 2) = 3, y0 = int((7 - 3) / 2) = 2
  const y = new T.CenterCrop([4, 3])(x);
  assert.deepEqual(y.shape, [3, 4, 3]);
  assert.deepEqual(vals(y), cropLoop(data, shape, 3, 2, 4, 3).map(Math.fround));
  // one integer: a square, x0 = int((10 - 5) / 2) = 2, y0 = 1
  assert.deepEqual(vals(new T.CenterCrop(5)(x)), cropLoop(data, shape, 2, 1, 5, 5).map(Math.fround));
  // larger than the image: scale_down((10, 7), (12, 14)) -> w = 12 * 7 / 14 = 6, h = 7; crop (2, 0, 6, 7), resized to 12x14
  const up = new T.CenterCrop([12, 14])(x);
  assert.deepEqual(up.shape, [14, 12, 3]);
  assertClose(vals(up), tfBilinear(cropLoop(data, shape, 2, 0, 6, 7), [7, 6, 3], [14, 12]), { atol: 1e-4 });
  // interpolation 0: nearest
  assert.deepEqual(new T.CenterCrop([12, 14], 0)(x).shape, [14, 12, 3]);
});

test('RandomResizedCrop: output size, reproducible under mx.random.seed, the whole image when scale and ratio allow only it', () => {
  const shape = [12, 12, 3];
  const { x, data } = hwcImage(shape, 5);
  const rrc = new T.RandomResizedCrop(6);
  mx.random.seed(9);
  const a = vals(rrc(x));
  mx.random.seed(9);
  assert.deepEqual(vals(rrc(x)), a);
  assert.deepEqual(rrc(x).shape, [6, 6, 3]);
  // scale (1, 1) and ratio (1, 1) on a square image: the crop is the whole image, then resized
  const whole = new T.RandomResizedCrop([5, 4], { scale: [1, 1], ratio: [1, 1] })(x);
  assertClose(vals(whole), tfBilinear(data, shape, [4, 5]), { atol: 1e-4 });
  // an impossible area (4x the image) falls back to the centre crop after 10 tries
  const fallback = new T.RandomResizedCrop([4, 4], [4, 4], [1, 1])(x);
  assertClose(vals(fallback), vals(new T.CenterCrop(4)(x)));
  // a crop of a given area fraction: 0.25 of 12x12 with ratio 1 is 6x6 somewhere, not resized when size is 6
  mx.random.seed(1);
  const quarter = vals(new T.RandomResizedCrop(6, [0.25, 0.25], [1, 1])(x));
  let found = false;
  for (let y0 = 0; y0 <= 6 && !found; y0++)
    for (let x0 = 0; x0 <= 6 && !found; x0++) found = JSON.stringify(cropLoop(data, shape, x0, y0, 6, 6).map(Math.fround)) === JSON.stringify(quarter);
  assert.ok(found, 'a 6x6 window of the image');
});

test('RandomFlipLeftRight / RandomFlipTopBottom: the image or its flip, reproducible', () => {
  const shape = [3, 4, 3];
  const { x, data } = hwcImage(shape, 6, 'uint8');
  const lr = [], tb = [];
  for (let y = 0; y < 3; y++)
    for (let c = 0; c < 4; c++) {
      lr.push(...data.slice((y * 4 + 3 - c) * 3, (y * 4 + 3 - c) * 3 + 3));
      tb.push(...data.slice(((2 - y) * 4 + c) * 3, ((2 - y) * 4 + c) * 3 + 3));
    }
  for (const [Cls, flipped] of [[T.RandomFlipLeftRight, lr], [T.RandomFlipTopBottom, tb]]) {
    const t = new Cls();
    mx.random.seed(3);
    const seen = new Set();
    const outs = [];
    for (let i = 0; i < 40; i++) {
      const v = vals(t(x));
      const s = JSON.stringify(v);
      assert.ok(s === JSON.stringify(flipped) || s === JSON.stringify(data), 'identity or flip');
      seen.add(s);
      outs.push(s);
    }
    assert.equal(seen.size, 2, 'both outcomes occur');
    mx.random.seed(3);
    for (let i = 0; i < 40; i++) assert.equal(JSON.stringify(vals(t(x))), outs[i]);
  }
});

test('Cast, CropResize, colour jitter transforms and RandomApply', () => {
  const { x, data } = hwcImage([5, 6, 3], 7, 'uint8');
  const c = new T.Cast()(x);
  assert.equal(c.dtype, 'float32');
  assert.equal(new T.Cast('float64')(x).dtype, 'float64');
  const cr = new T.CropResize(1, 2, 4, 3)(x);
  assert.deepEqual(vals(cr), cropLoop(data, [5, 6, 3], 1, 2, 4, 3));
  assert.deepEqual(new T.CropResize({ x: 0, y: 0, width: 4, height: 4, size: [2, 2] })(x).shape, [2, 2, 3]);
  // RandomBrightness(0.5): one factor in [0.5, 1.5]
  const xf = c;
  const bright = vals(new T.RandomBrightness(0.5)(xf));
  const k = bright[0] / data[0];
  assert.ok(k >= 0.5 && k <= 1.5);
  assertClose(bright, data.map((v) => v * k), { rtol: 1e-5 });
  // zero jitter: unchanged
  assert.deepEqual(vals(new T.RandomColorJitter()(x)), data);
  assert.deepEqual(vals(new T.RandomBrightness(0)(x)), data);
  assert.deepEqual(vals(new T.RandomLighting(0)(xf)), vals(xf));
  for (const Cls of [T.RandomContrast, T.RandomSaturation, T.RandomHue]) assert.deepEqual(new Cls(0.3)(x).shape, [5, 6, 3]);
  // RandomApply(p=0) never applies, p=1 always
  const pre = new T.Compose([new T.Cast(), new T.CropResize(0, 0, 2, 2)]);
  assert.deepEqual(vals(new T.RandomApply(pre, 0)(x)), data);
  assert.deepEqual(vals(new T.RandomApply(pre, { p: 1 })(x)), cropLoop(data, [5, 6, 3], 0, 0, 2, 2));
});

test('Compose: runs of HybridBlocks become one hybridized HybridSequential, Blocks stay single', () => {
  const c1 = new T.Compose([new T.Resize(4), new T.ToTensor(), new T.Normalize(0.5, 0.5)]);
  assert.equal(c1.length, 1);
  assert.ok(c1.get(0) instanceof gluon.nn.HybridSequential);
  assert.equal(c1.get(0).length, 3);
  assert.ok(c1.get(0)._active, 'hybridized');
  const c2 = new T.Compose([new T.CenterCrop(4), new T.ToTensor(), new T.RandomResizedCrop(3)]);
  assert.deepEqual([...Array(c2.length).keys()].map((i) => c2.get(i).constructor.name), ['CenterCrop', 'ToTensor', 'RandomResizedCrop']);
  const c3 = new T.Compose([new T.CenterCrop(4), new T.ToTensor(), new T.Normalize(0.5, 0.5)]);
  assert.equal(c3.length, 2);
  assert.ok(c3 instanceof gluon.nn.Sequential);

  // the hybridized run computes what the imperative chain does
  const shape = [8, 6, 3];
  const { x, data } = hwcImage(shape, 8, 'uint8');
  const mean = [0.4, 0.5, 0.6], std = [0.2, 0.3, 0.25];
  const pipe = new T.Compose([new T.CenterCrop(4), new T.ToTensor(), new T.Normalize(mean, std)]);
  const y = pipe(x);
  assert.deepEqual(y.shape, [3, 4, 4]);
  // center crop 4x4 of 8x6: x0 = 1, y0 = 2
  assertClose(vals(y), tensorNormalized(cropLoop(data, shape, 1, 2, 4, 4), [4, 4, 3], mean, std), { rtol: 1e-5, atol: 1e-5 });
  assertClose(vals(pipe(x)), vals(y), { rtol: 0, atol: 0 });
  throwsWith(() => new T.Compose(new T.ToTensor()), /argument 'transforms' must be an array/);
});

test('a pipeline end to end: ArrayDataset -> transformFirst(Compose) -> DataLoader batches', () => {
  const N = 5, shape = [6, 7, 3];
  const images = [], raw = [];
  for (let i = 0; i < N; i++) {
    const { data } = hwcImage(shape, 20 + i, 'uint8');
    raw.push(data);
    images.push(...data);
  }
  const X = nd.array(images, { shape: [N, ...shape], dtype: 'uint8' });
  const labels = nd.array([0, 1, 2, 3, 4]);
  const mean = [0.5, 0.4, 0.3], std = [0.25, 0.2, 0.3];
  const transform = new T.Compose([new T.Resize([7, 6]), new T.ToTensor(), new T.Normalize(mean, std)]);
  const ds = new gluon.data.ArrayDataset(X, labels).transformFirst(transform);
  const loader = new gluon.data.DataLoader(ds, { batchSize: 2, lastBatch: 'keep' });
  assert.equal(loader.length, 3);
  const batches = [...loader];
  assert.deepEqual(batches.map(([d]) => d.shape), [[2, 3, 6, 7], [2, 3, 6, 7], [1, 3, 6, 7]]);
  const got = batches.flatMap(([d]) => vals(d));
  // Resize to the same size is the identity (OpenCV copies), so each sample is its normalized tensor
  const expect = raw.flatMap((d) => tensorNormalized(d, shape, mean, std));
  assertClose(got, expect, { rtol: 1e-5, atol: 1e-5 });
  assert.deepEqual(batches.flatMap(([, l]) => vals(l)), [0, 1, 2, 3, 4]);
});
