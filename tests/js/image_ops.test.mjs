// The image operators (csrc/ops/image.c, MXNet 1.9.1's src/operator/image/): to_tensor,
// normalize, flips and crop against plain JS loops written here; resize against TF.js's
// tf.image.resizeBilinear (alignCorners false, halfPixelCenters true = OpenCV's INTER_LINEAR) and
// resizeNearestNeighbor (alignCorners false, halfPixelCenters false = OpenCV's INTER_NEAREST:
// floor(d * src / dst)); the colour ops against their formulas (image_random-inl.h) evaluated in
// float64 here; shapes, dtypes and MXNet's error messages.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose } from './oracle.mjs';

const { nd } = mx;
const throwsWith = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));
const vals = (x) => Array.from(x.toTypedArray(), Number);

// Deterministic pixels: integers 0..255 (uint8 images) or floats.
function pixels(n, seed = 1) { return Array.from(rng(seed).uniform(n, 0, 256), (v) => Math.floor(v)); }
function image(shape, dtype = 'uint8', seed = 1) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = dtype === 'uint8' ? Uint8Array.from(pixels(n, seed)) : Float32Array.from(rng(seed).uniform(n, 0, 255));
  return { x: nd.array(data, { shape, dtype }), data: Array.from(data) };
}

test('_image_to_tensor: (H, W, C) -> (C, H, W) / 255 and (N, H, W, C) -> (N, C, H, W), float32', () => {
  for (const [shape, dtype] of [[[4, 5, 3], 'uint8'], [[2, 3, 4, 1], 'float32'], [[3, 2, 3], 'float32']]) {
    const { x, data } = image(shape, dtype);
    const y = nd._image_to_tensor(x);
    const [N, H, W, C] = shape.length === 4 ? shape : [1, ...shape];
    const expect = [];
    for (let b = 0; b < N; b++)
      for (let c = 0; c < C; c++)
        for (let i = 0; i < H * W; i++) expect.push(data[(b * H * W + i) * C + c] / 255);
    assert.equal(y.dtype, 'float32');
    assert.deepEqual(y.shape, shape.length === 4 ? [N, C, H, W] : [C, H, W]);
    assertClose(vals(y), expect, { rtol: 1e-6, atol: 1e-7 });
  }
  // MXNet's own docstring pixel: 218 / 255 = 0.85490197
  assertClose(vals(nd._image_to_tensor(nd.array([[[218]]], { dtype: 'uint8' }))), [0.85490197], { rtol: 1e-7 });
  throwsWith(() => nd._image_to_tensor(nd.zeros([4, 4])), /Input image must have shape \(height, width, channels\), or \(N, height, width, channels\) but got \(4, 4\)/);
});

test('_image_normalize: (x[c] - mean[c]) / std[c] on CHW and NCHW; one value for every channel', () => {
  const x = nd.array(rng(3).uniform(3 * 4 * 2, 0, 1), { shape: [3, 4, 2] });
  const d = vals(x);
  const mean = [0, 1, 2], std = [3, 2, 1];
  const y = nd._image_normalize(x, { mean, std });
  assertClose(vals(y), d.map((v, i) => (v - mean[Math.floor(i / 8)]) / std[Math.floor(i / 8)]), { rtol: 1e-6 });
  // batched, scalar mean and std (as transforms.Normalize's defaults pass them)
  const xb = nd.array(rng(4).uniform(2 * 3 * 2 * 2, -1, 1), { shape: [2, 3, 2, 2] });
  assertClose(vals(nd._image_normalize(xb, { mean: 0.5, std: 0.25 })), vals(xb).map((v) => (v - 0.5) / 0.25), { rtol: 1e-6 });
  // one channel
  const g = nd.array([[[1, 2], [3, 4]]]);
  assert.deepEqual(vals(nd._image_normalize(g, { mean: [1], std: [2] })), [0, 0.5, 1, 1.5]);
  // positional attributes in the registry's order: mean, std
  assertClose(vals(nd._image_normalize(x, mean, std)), vals(y));
  throwsWith(() => nd._image_normalize(nd.zeros([2, 4, 4]), { mean: 0, std: 1 }),
    /The first dimension of input tensor must be the channel dimension with either 1 or 3 elements, but got input with shape \(2, 4, 4\)/);
  throwsWith(() => nd._image_normalize(x, { mean: [1, 2], std: 1 }),
    /Invalid mean for input with shape \(3, 4, 2\)\. mean must have either 1 or 3 elements, but got \[1,2\]/);
  throwsWith(() => nd._image_normalize(xb, { mean: 0, std: [1, 2] }), /Invalid std for input with shape \(2, 3, 2, 2\)\. std must have either 1 or 3 elements/);
  // MXNet 1.9.1's default mean/std have 4 elements: a 3-channel input needs them given
  throwsWith(() => nd._image_normalize(x), /mean must have either 1 or 3 elements, but got \[0,0,0,0\]/);
  throwsWith(() => nd._image_normalize(x, { mean: 'abc', std: 1 }), /invalid value 'abc' for attribute 'mean'/);
  throwsWith(() => nd._image_normalize(nd.zeros([3, 4])), /Input tensor must have shape \(channels, height, width\)/);
});

function flipLoop(data, [H, W, C], axis) {
  const out = new Array(data.length);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++)
      for (let c = 0; c < C; c++) {
        const sy = axis === 0 ? H - 1 - y : y, sx = axis === 1 ? W - 1 - x : x;
        out[(y * W + x) * C + c] = data[(sy * W + sx) * C + c];
      }
  return out;
}

test('_image_flip_left_right / _image_flip_top_bottom: reversed columns / rows (odd and even sizes, in place too)', () => {
  for (const shape of [[3, 5, 3], [4, 4, 1], [1, 7, 3], [5, 2, 3]]) {
    for (const dtype of ['uint8', 'float32']) {
      const { x, data } = image(shape, dtype, shape[1]);
      assert.deepEqual(vals(nd._image_flip_left_right(x)), flipLoop(data, shape, 1));
      assert.deepEqual(vals(nd._image_flip_top_bottom(x)), flipLoop(data, shape, 0));
      const y = x.copy();
      nd._image_flip_left_right(y, { out: y });
      assert.deepEqual(vals(y), flipLoop(data, shape, 1), 'in place');
    }
  }
  throwsWith(() => nd._image_flip_left_right(nd.zeros([2, 3, 3, 3])), /Input image must have shape \(height, width, channels\), but got \(2, 3, 3, 3\)/);
  throwsWith(() => nd._image_flip_top_bottom(nd.zeros([2, 3, 2])),
    /The last dimension of input image must be the channel dimension with either 1 or 3 elements, but got input with shape \(2, 3, 2\)/);
});

test('_image_random_flip_*: either the image or its flip, about half of each, reproducible under mx.random.seed', () => {
  const shape = [2, 3, 3];
  const { x, data } = image(shape, 'uint8', 7);
  for (const [op, axis] of [['_image_random_flip_left_right', 1], ['_image_random_flip_top_bottom', 0]]) {
    const flipped = flipLoop(data, shape, axis);
    const draw = () => {
      const out = [];
      for (let i = 0; i < 400; i++) {
        const v = vals(nd[op](x));
        if (JSON.stringify(v) === JSON.stringify(flipped)) out.push(1);
        else { assert.deepEqual(v, data); out.push(0); }
      }
      return out;
    };
    mx.random.seed(11);
    const a = draw();
    mx.random.seed(11);
    assert.deepEqual(draw(), a, 'same seed, same choices');
    // Binomial(400, 0.5): mean 200, sd 10; 5 sd
    const k = a.reduce((s, v) => s + v, 0);
    assert.ok(Math.abs(k - 200) <= 50, `${op} flipped ${k} of 400`);
  }
});

test('_image_crop: rows y..y+height-1, columns x..x+width-1 of HWC and NHWC images', () => {
  const shape = [2, 5, 6, 3];
  const { x, data } = image(shape, 'uint8', 5);
  const y = nd._image_crop(x, { x: 1, y: 2, width: 4, height: 3 });
  assert.deepEqual(y.shape, [2, 3, 4, 3]);
  const expect = [];
  for (let b = 0; b < 2; b++)
    for (let r = 2; r < 5; r++)
      for (let c = 1; c < 5; c++)
        for (let k = 0; k < 3; k++) expect.push(data[((b * 5 + r) * 6 + c) * 3 + k]);
  assert.deepEqual(vals(y), expect);
  // one image, positional attributes x, y, width, height (mx.nd.image.crop(image, 1, 1, 2, 2))
  const one = x.get(1);
  assert.deepEqual(vals(nd._image_crop(one, 1, 2, 4, 3)), expect.slice(36));
  assert.equal(nd._image_crop(nd.zeros([4, 4, 1], { dtype: 'float32' }), 0, 0, 4, 4).dtype, 'float32');
  throwsWith(() => nd._image_crop(one, { x: 3, y: 0, width: 4, height: 2 }), /x \+ width should not be greater than input width/);
  throwsWith(() => nd._image_crop(one, { x: 0, y: 3, width: 2, height: 3 }), /y \+ height should not be greater than input height/);
  throwsWith(() => nd._image_crop(one, { x: 0, y: 0, width: 0, height: 2 }), /Input height and width must be greater than 0/);
  throwsWith(() => nd._image_crop(nd.zeros([4, 4, 2]), 0, 0, 1, 1), /Expect channel of the input image is 1 or 3, but got2/);
  throwsWith(() => nd._image_crop(nd.zeros([4, 4]), 0, 0, 1, 1), /Image Crop expects inputs of 3D \(h, w, c\) or 4D \(n, h, w, c\)\. But got 2/);
  throwsWith(() => nd._image_crop(one, { x: -1, y: 0, width: 1, height: 1 }), /must not be negative/);
});

// TF.js on an (H, W, C) or (N, H, W, C) float image, output (height, width).
function tfResize(data, shape, [h, w], kind) {
  return Array.from(tf.tidy(() => {
    const t = tf.tensor(data, shape, 'float32');
    return kind === 'bilinear' ? tf.image.resizeBilinear(t, [h, w], false, true) : tf.image.resizeNearestNeighbor(t, [h, w], false, false);
  }).dataSync());
}

const RESIZE_CASES = [
  // [input shape, size (w, h)]: up, down, non-integer ratios, exact 2x, one row/column
  [[4, 5, 3], [7, 9]], [[9, 7, 3], [4, 3]], [[6, 8, 1], [3, 3]], [[8, 8, 3], [4, 4]], [[5, 6, 3], [11, 2]],
  [[1, 5, 3], [3, 4]], [[3, 3, 1], [3, 3]], [[2, 7, 5, 3], [3, 6]],
];

test('_image_resize bilinear (interp=1), float32: tf.image.resizeBilinear with half-pixel centres, within 1e-4', () => {
  for (const [shape, size] of RESIZE_CASES) {
    const { x, data } = image(shape, 'float32', shape[0] + shape[1]);
    const y = nd._image_resize(x, { size });
    const hw = [size[1], size[0]];
    const nd_ = shape.length;
    const outShape = shape.slice();
    outShape[nd_ - 3] = hw[0];
    outShape[nd_ - 2] = hw[1];
    assert.deepEqual(y.shape, outShape);
    assertClose(vals(y), tfResize(data, shape, hw, 'bilinear'), { rtol: 1e-5, atol: 1e-4, msg: `${shape} -> ${size}` });
  }
  // float64 through the same coefficients
  const { x, data } = image([5, 4, 3], 'float32', 9);
  assertClose(vals(nd._image_resize(x.astype('float64'), [6, 7])), tfResize(data, [5, 4, 3], [7, 6], 'bilinear'), { atol: 1e-4 });
});

test('_image_resize bilinear, uint8: OpenCV fixed-point rounding, within 1 of the exact value', () => {
  for (const [shape, size] of RESIZE_CASES) {
    const { x, data } = image(shape, 'uint8', shape[1] * 3);
    const y = nd._image_resize(x, size);
    assert.equal(y.dtype, 'uint8');
    const got = vals(y), exact = tfResize(data, shape, [size[1], size[0]], 'bilinear');
    let bias = 0;
    for (let i = 0; i < got.length; i++) {
      assert.ok(Math.abs(got[i] - exact[i]) <= 1, `${shape} -> ${size} at ${i}: ${got[i]} vs ${exact[i]}`);
      bias += got[i] - exact[i];
    }
    assert.ok(Math.abs(bias / got.length) < 0.5, `mean error ${bias / got.length}`);
  }
  // hand-worked: a 1x2 image [0, 255] -> width 4: positions -0.25, 0.25, 0.75, 1.25 -> 0, 63.75, 191.25, 255.
  // OpenCV's 11-bit weights (1536, 512) give (2048 * 255 * 512 >> 4 ...) = 64 and 191.
  const r = nd._image_resize(nd.array([[[0], [255]]], { dtype: 'uint8' }), { size: [4, 1] });
  assert.deepEqual(vals(r), [0, 64, 191, 255]);
});

test('_image_resize nearest (interp=0): tf.image.resizeNearestNeighbor (floor(d * src / dst)), exactly', () => {
  for (const [shape, size] of RESIZE_CASES) {
    for (const dtype of ['uint8', 'float32']) {
      const { x, data } = image(shape, dtype, shape[2] + 1);
      const y = nd._image_resize(x, { size, interp: 0 });
      assert.deepEqual(vals(y), tfResize(data, shape, [size[1], size[0]], 'nearest'), `${shape} -> ${size} ${dtype}`);
    }
  }
  const { x, data } = image([3, 5, 1], 'uint8', 2);
  const i32 = nd._image_resize(x.astype('int32'), { size: [7, 4], interp: 0 });
  assert.equal(i32.dtype, 'int32');
  assert.deepEqual(vals(i32), tfResize(data, [3, 5, 1], [4, 7], 'nearest'));
});

test('_image_resize: size forms, keep_ratio (short edge, integer division) and errors', () => {
  const x = nd.zeros([6, 4, 3], { dtype: 'uint8' });
  assert.deepEqual(nd._image_resize(x, { size: 3 }).shape, [3, 3, 3]);
  assert.deepEqual(nd._image_resize(x, { size: [5, 2] }).shape, [2, 5, 3]);
  // h > w: width = 3, height = 6 * 3 / 4 = 4 (integer division)
  assert.deepEqual(nd._image_resize(x, { size: 3, keep_ratio: true }).shape, [4, 3, 3]);
  // w >= h: height = size, width = w * size / h = 5 * 5 / 4 = 6
  assert.deepEqual(nd._image_resize(nd.zeros([2, 4, 5, 1]), 5, true).shape, [2, 5, 6, 1]);
  // keep_ratio does not apply to (w, h)
  assert.deepEqual(nd._image_resize(x, { size: [2, 2], keep_ratio: true }).shape, [2, 2, 3]);
  throwsWith(() => nd._image_resize(x), /Input size dimension must be 1 or 2, but got 0/);
  throwsWith(() => nd._image_resize(x, { size: [1, 2, 3] }), /Input size dimension must be 1 or 2, but got 3/);
  throwsWith(() => nd._image_resize(x, { size: 0 }), /Input size should be greater than 0, but got 0/);
  throwsWith(() => nd._image_resize(x, { size: [0, 2] }), /Input width should be greater than 0, but got 0/);
  throwsWith(() => nd._image_resize(x, { size: [2, -1] }), /Input height should be greater than 0, but got -1/);
  throwsWith(() => nd._image_resize(nd.zeros([4, 4]), { size: 2 }), /Input image dimension should be 3 or 4 but got 2/);
  throwsWith(() => nd._image_resize(x.astype('float16'), { size: 2 }), /opencv image mat doesn't support fp16/);
  throwsWith(() => nd._image_resize(x, { size: 2, interp: 5 }), /interp=5 is not supported/);
  throwsWith(() => nd._image_resize(x.astype('int32'), { size: 2 }), /int32 with interp=0 only/);
});

// ---- colour ops ----------------------------------------------------------------------------------
const GRAY = [0.299, 0.587, 0.114];

test('_image_random_brightness: x * alpha with one alpha in [min_factor, max_factor] per call', () => {
  const { x, data } = image([3, 4, 3], 'float32', 21);
  mx.random.seed(3);
  const y = vals(nd._image_random_brightness(x, { min_factor: 0.5, max_factor: 1.5 }));
  const alpha = y[0] / data[0];
  assert.ok(alpha >= 0.5 && alpha <= 1.5, `alpha ${alpha}`);
  assertClose(y, data.map((v) => v * alpha), { rtol: 1e-5 });
  mx.random.seed(3);
  assert.deepEqual(vals(nd._image_random_brightness(x, 0.5, 1.5)), y, 'reproducible');
  // uint8 saturates at 255
  const u = nd.array([[[200, 100, 0]]], { dtype: 'uint8' });
  assert.deepEqual(vals(nd._image_random_brightness(u, { min_factor: 2, max_factor: 2 })), [255, 200, 0]);
  throwsWith(() => nd._image_random_brightness(x, { min_factor: -1, max_factor: 1 }), /min_factor/);
});

test('_image_random_contrast: x * a + (1 - a) * mean(0.299 R + 0.587 G + 0.114 B)', () => {
  const { x, data } = image([2, 3, 3], 'float32', 22);
  let gray = 0;
  for (let l = 0; l < 6; l++) for (let c = 0; c < 3; c++) gray += data[l * 3 + c] * GRAY[c];
  gray /= 6;
  const a = 0.7;
  assertClose(vals(nd._image_random_contrast(x, { min_factor: a, max_factor: a })), data.map((v) => v * a + (1 - a) * gray), { rtol: 1e-5 });
  // one channel: the plain mean
  const g = nd.array([[[10], [20]], [[30], [40]]]);
  assertClose(vals(nd._image_random_contrast(g, 0.5, 0.5)), [10, 20, 30, 40].map((v) => v * 0.5 + 0.5 * 25), { rtol: 1e-6 });
});

test('_image_random_saturation: MXNet 1.9.1 blends with 0.114 * B (its loop keeps only the last gray term)', () => {
  const { x, data } = image([2, 2, 3], 'float32', 23);
  const a = 1.3;
  const expect = [];
  for (let l = 0; l < 4; l++) {
    const gray = data[l * 3 + 2] * GRAY[2] * (1 - a);
    for (let c = 0; c < 3; c++) expect.push(gray + data[l * 3 + c] * a);
  }
  assertClose(vals(nd._image_random_saturation(x, { min_factor: a, max_factor: a })), expect, { rtol: 1e-5 });
  const g = nd.array([[[5], [6]]]);
  assert.deepEqual(vals(nd._image_random_saturation(g, 0.2, 0.2)), [5, 6]);
});

// Python's colorsys rgb_to_hls / hls_to_rgb (values in [0, 1], hue in [0, 1)).
function rgbToHls(r, g, b) {
  const maxc = Math.max(r, g, b), minc = Math.min(r, g, b), l = (minc + maxc) / 2;
  if (minc === maxc) return [0, l, 0];
  const s = l <= 0.5 ? (maxc - minc) / (maxc + minc) : (maxc - minc) / (2 - maxc - minc);
  const rc = (maxc - r) / (maxc - minc), gc = (maxc - g) / (maxc - minc), bc = (maxc - b) / (maxc - minc);
  let h = r === maxc ? bc - gc : g === maxc ? 2 + rc - bc : 4 + gc - rc;
  h = (((h / 6) % 1) + 1) % 1;
  return [h, l, s];
}
function hlsToRgb(h, l, s) {
  if (s === 0) return [l, l, l];
  const m2 = l <= 0.5 ? l * (1 + s) : l + s - l * s, m1 = 2 * l - m2;
  const v = (hue) => {
    hue = ((hue % 1) + 1) % 1;
    if (hue < 1 / 6) return m1 + (m2 - m1) * hue * 6;
    if (hue < 0.5) return m2;
    if (hue < 2 / 3) return m1 + (m2 - m1) * (2 / 3 - hue) * 6;
    return m1;
  };
  return [v(h + 1 / 3), v(h), v(h - 1 / 3)];
}

test('_image_random_hue: the HLS hue rotated by alpha * 360 degrees (colorsys as the reference)', () => {
  const { x, data } = image([3, 3, 3], 'float32', 24);
  for (const alpha of [0, 0.25, 0.6, 1.3]) {
    const expect = [];
    for (let l = 0; l < 9; l++) {
      const [h, li, s] = rgbToHls(data[l * 3] / 255, data[l * 3 + 1] / 255, data[l * 3 + 2] / 255);
      expect.push(...hlsToRgb(h + alpha, li, s).map((v) => v * 255));
    }
    assertClose(vals(nd._image_random_hue(x, { min_factor: alpha, max_factor: alpha })), expect, { atol: 2e-3, msg: `alpha ${alpha}` });
  }
  const g = nd.array([[[5], [6]]]);
  assert.deepEqual(vals(nd._image_random_hue(g, 0.3, 0.3)), [5, 6], 'one channel is unchanged');
});

test('_image_adjust_lighting / _image_random_lighting: x + eigvec * (eigval * alpha) (AlexNet PCA)', () => {
  const eigval = [55.46, 4.794, 1.148];
  const eigvec = [[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]];
  const { x, data } = image([2, 2, 3], 'float32', 25);
  const alpha = [0.1, -0.2, 0.3];
  const pca = eigvec.map((row) => row.reduce((s, v, j) => s + v * eigval[j] * alpha[j], 0));
  assertClose(vals(nd._image_adjust_lighting(x, { alpha })), data.map((v, i) => v + pca[i % 3]), { rtol: 1e-5, atol: 1e-4 });
  throwsWith(() => nd._image_adjust_lighting(x, { alpha: [1, 2] }), /alpha must have 3 elements/);
  assert.deepEqual(vals(nd._image_random_lighting(x, { alpha_std: 0 })), vals(x), 'alpha_std 0: unchanged');
  mx.random.seed(5);
  const a = vals(nd._image_random_lighting(x));
  mx.random.seed(5);
  assert.deepEqual(vals(nd._image_random_lighting(x, 0.05)), a, 'default alpha_std is 0.05, reproducible');
});

test('_image_random_color_jitter: zero jitter is the identity; one kind at a time matches its op', () => {
  const { x } = image([3, 4, 3], 'uint8', 26);
  assert.deepEqual(vals(nd._image_random_color_jitter(x, { brightness: 0, contrast: 0, saturation: 0, hue: 0 })), vals(x));
  const y = vals(nd._image_random_color_jitter(x.astype('float32'), { brightness: 0.5, contrast: 0, saturation: 0, hue: 0 }));
  const ratio = y[1] / vals(x)[1];
  assert.ok(ratio >= 0.5 && ratio <= 1.5);
  assertClose(y, vals(x).map((v) => v * ratio), { rtol: 1e-5 });
});

test('the image ops are registered under MXNet names and _npx_ aliases, and compose as symbols', () => {
  for (const name of ['_image_to_tensor', '_image_normalize', '_image_resize', '_image_crop', '_image_flip_left_right',
    '_image_flip_top_bottom', '_image_random_flip_left_right', '_image_random_flip_top_bottom', '_image_random_brightness',
    '_image_random_contrast', '_image_random_saturation', '_image_random_hue', '_image_random_color_jitter',
    '_image_adjust_lighting', '_image_random_lighting']) {
    assert.ok(mx.registeredOps.includes(name), name);
    assert.equal(typeof nd[`_npx_${name}`], 'function', `_npx_${name}`);
  }
  const s = mx.sym._image_normalize(mx.sym._image_to_tensor(mx.sym.var('data')), { mean: [0.5, 0.5, 0.5], std: 0.5 });
  const [, [out]] = s.inferShape({ data: [8, 6, 3] });
  assert.deepEqual(out, [3, 8, 6]);
});
