// _image_resize's interpolations beyond nearest/bilinear (csrc/ops/image.c; MXNet 1.9.1's resize-inl.h calls
// OpenCV's cv::resize): 2 bicubic, 3 pixel area, 4 lanczos, and the bilinear halving OpenCV does as area.
// Each is compared with a plain float64 re-implementation written here from OpenCV's documented algorithm
// (imgproc's resize: half-pixel mapping src = (dst + 0.5) * scale - 0.5 with scale = src / dst, edge pixels
// replicated; Keys' cubic with a = -0.75 on 4x4 pixels; Lanczos with a = 4 on 8x8 pixels, weights normalised
// to sum 1; INTER_AREA averaging each output cell's covered source area when shrinking and, when enlarging,
// OpenCV's bilinear variant s = floor(d * scale), f = (d + 1) - (s + 1) / scale kept when positive), with
// hand-worked values on tiny images, with mx.image's helpers at their default interp=2, and (when python3's
// cv2 is installed, else skipped) with cv2.resize itself.
// float32 outputs are checked within 1e-3 of the float64 value (pixel values 0..255); uint8 outputs within 1
// level: OpenCV computes uint8 cubic and lanczos with 11-bit fixed-point weights and integer rounding.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd } = mx;
const vals = (x) => Array.from(x.toTypedArray(), Number);
const throwsWith = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));

// ---- the float64 reference ---------------------------------------------------------------------------------
// Keys' cubic convolution kernel, a = -0.75 (OpenCV's INTER_CUBIC).
function keys(t) {
  const a = -0.75, x = Math.abs(t);
  if (x <= 1) return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1;
  if (x < 2) return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a;
  return 0;
}
// Lanczos with a = 4: sinc(t) sinc(t / 4).
function lanczos(t) {
  if (t === 0) return 1;
  const p = Math.PI * t;
  return (4 * Math.sin(p) * Math.sin(p / 4)) / (p * p);
}

// For one axis: per output index, the list of [source index (clamped to the image), weight]. INTER_AREA
// averages areas only when neither side is enlarged (area = true); otherwise both axes take its bilinear variant.
function axisTaps(src, dst, interp, area) {
  const scale = src / dst, taps = [];
  const clamp = (i) => Math.min(Math.max(i, 0), src - 1);
  for (let d = 0; d < dst; d++) {
    const t = [];
    if (interp === 3 && area) {
      // pixel area: source pixel s covers [s, s + 1); the output cell covers [d * scale, (d + 1) * scale)
      const lo = d * scale, hi = (d + 1) * scale;
      for (let s = Math.floor(lo); s < Math.min(Math.ceil(hi), src); s++) {
        const overlap = Math.min(hi, s + 1) - Math.max(lo, s);
        if (overlap > 0) t.push([s, overlap / scale]);
      }
    } else if (interp === 3 || interp === 1) {
      // bilinear: the half-pixel position, or INTER_AREA's enlarging variant; weights (1 - f, f)
      let s, f;
      if (interp === 1) {
        const x = (d + 0.5) * scale - 0.5;
        s = Math.floor(x), f = x - s;
      } else {
        s = Math.floor(d * scale), f = d + 1 - (s + 1) / scale;
        f = f <= 0 ? 0 : f - Math.floor(f);
      }
      t.push([clamp(s), 1 - f], [clamp(s + 1), f]);
    } else {
      const x = (d + 0.5) * scale - 0.5, s = Math.floor(x), f = x - s;
      if (interp === 2) {
        for (let k = -1; k <= 2; k++) t.push([clamp(s + k), keys(f - k)]);
      } else {
        const w = [];
        for (let k = -3; k <= 4; k++) w.push(lanczos(f - k));
        const sum = w.reduce((a, b) => a + b, 0);
        for (let k = -3; k <= 4; k++) t.push([clamp(s + k), w[k + 3] / sum]);
      }
    }
    taps.push(t);
  }
  return taps;
}

// Separable resize of an (H, W, C) float64 array to (OH, OW, C).
function refResize(data, [H, W, C], [OH, OW], interp) {
  const area = OH <= H && OW <= W;
  const ty = axisTaps(H, OH, interp, area), tx = axisTaps(W, OW, interp, area), out = new Float64Array(OH * OW * C);
  for (let y = 0; y < OH; y++)
    for (let x = 0; x < OW; x++)
      for (let c = 0; c < C; c++) {
        let v = 0;
        for (const [sy, wy] of ty[y]) for (const [sx, wx] of tx[x]) v += wy * wx * data[(sy * W + sx) * C + c];
        out[(y * OW + x) * C + c] = v;
      }
  return Array.from(out);
}
const toU8 = (v) => Math.min(255, Math.max(0, Math.round(v)));

function image(shape, dtype, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const u = rng(seed).uniform(n, 0, 256);
  const data = dtype === 'uint8' ? Array.from(u, Math.floor) : Array.from(u, Math.fround);
  return { x: nd.array(data, { shape, dtype }), data };
}

// Checks one resize against the reference; returns the largest uint8 difference.
function check(y, data, shape, osize, interp, dtype, msg) {
  const expect = refResize(data, shape, osize, interp);
  assert.deepEqual(y.shape, [osize[0], osize[1], shape[2]], msg);
  assert.equal(y.dtype, dtype, msg);
  if (dtype === 'uint8') {
    const got = vals(y);
    let worst = 0;
    got.forEach((v, i) => {
      worst = Math.max(worst, Math.abs(v - toU8(expect[i])));
    });
    assert.ok(worst <= 1, `${msg}: uint8 differs from the rounded float64 value by ${worst} levels`);
    return worst;
  }
  assertClose(vals(y), expect, { rtol: 0, atol: 1e-3, msg });
  return 0;
}

// Odd sizes, shrinking and enlarging, mixed (one side up, the other down), 1 and 3 channels.
const SIZES = [[7, 5, 13, 11], [9, 11, 4, 5], [13, 17, 5, 4], [5, 9, 8, 3], [3, 4, 9, 12], [11, 7, 4, 7], [6, 9, 4, 6],
  [12, 9, 4, 3], [8, 8, 3, 5], [1, 5, 3, 7]];

for (const [interp, name] of [[2, 'bicubic'], [3, 'area'], [4, 'lanczos']]) {
  test(`_image_resize interp=${interp} (${name}): float64 re-implementation of OpenCV's algorithm, uint8/float32/float64`, () => {
    let seed = 10 * interp;
    for (const dtype of ['uint8', 'float32', 'float64']) {
      for (const C of [1, 3]) {
        for (const [H, W, OH, OW] of SIZES) {
          const { x, data } = image([H, W, C], dtype, seed++);
          const y = nd._image_resize(x, { size: [OW, OH], interp });
          check(y, data, [H, W, C], [OH, OW], interp, dtype, `${dtype} ${H}x${W}x${C} -> ${OH}x${OW}`);
          x.dispose(), y.dispose();
        }
      }
    }
  });
}

test('_image_resize: (N, H, W, C) batches resize each image, uint8 and float32, every mode', () => {
  for (const interp of [1, 2, 3, 4]) {
    for (const dtype of ['uint8', 'float32']) {
      const { x, data } = image([2, 7, 6, 3], dtype, 100 + interp);
      const y = nd._image_resize(x, { size: [9, 5], interp });
      assert.deepEqual(y.shape, [2, 5, 9, 3]);
      const per = 7 * 6 * 3, outPer = 5 * 9 * 3, got = vals(y);
      for (let b = 0; b < 2; b++) {
        const expect = refResize(data.slice(b * per, (b + 1) * per), [7, 6, 3], [5, 9], interp);
        const part = got.slice(b * outPer, (b + 1) * outPer);
        if (dtype === 'uint8') part.forEach((v, i) => assert.ok(Math.abs(v - toU8(expect[i])) <= 1, `interp ${interp} image ${b} [${i}]`));
        else assertClose(part, expect, { rtol: 0, atol: 1e-3, msg: `interp ${interp} image ${b}` });
      }
    }
  }
});

test('bilinear halving of both sides is OpenCV\'s 2x2 area mean (uint8 (sum + 2) >> 2); same size copies', () => {
  // a 4 x 4 ramp, pixel (y, x) = 4 y + x, halved: block means (0 + 1 + 4 + 5) / 4 = 2.5, 4.5, 10.5, 12.5
  const ramp = Array.from({ length: 16 }, (_, i) => i);
  for (const interp of [1, 3]) {
    assert.deepEqual(vals(nd._image_resize(nd.array(ramp, { shape: [4, 4, 1] }), { size: [2, 2], interp })), [2.5, 4.5, 10.5, 12.5]);
    // uint8: sums 10, 18, 42, 50 -> (s + 2) >> 2 = 3, 5, 11, 13 (halves round up)
    assert.deepEqual(vals(nd._image_resize(nd.array(ramp, { shape: [4, 4, 1], dtype: 'uint8' }), { size: [2, 2], interp })), [3, 5, 11, 13]);
  }
  // a 3 x 3 box mean of uint8 (integer factor 3): (0 + 1 + 2 + 6 + 7 + 8 + 12 + 13 + 14) / 9 = 7
  const six = Array.from({ length: 36 }, (_, i) => i);
  assert.deepEqual(vals(nd._image_resize(nd.array(six, { shape: [6, 6, 1], dtype: 'uint8' }), { size: [2, 2], interp: 3 })), [7, 10, 25, 28]);
  for (const interp of [2, 3, 4]) {
    const x = nd.array([1.5, 2, 250, 7, 9, 11], { shape: [2, 1, 3] });
    assert.deepEqual(vals(nd._image_resize(x, { size: [1, 2], interp })), [1.5, 2, 250, 7, 9, 11]);
  }
});

test('INTER_AREA by hand: 4x4 -> 2x2 box means, 1x3 -> 1x2 fractional coverage, enlarging is bilinear-like', () => {
  // three channels of a 4 x 4 image: channel c of pixel (y, x) = 100 c + 4 y + x
  const img = [];
  for (let y = 0; y < 4; y++) for (let x = 0; x < 4; x++) for (let c = 0; c < 3; c++) img.push(100 * c + 4 * y + x);
  const box = vals(nd._image_resize(nd.array(img, { shape: [4, 4, 3] }), { size: 2, interp: 3 }));
  // block means of 4 y + x: (0 + 1 + 4 + 5) / 4 = 2.5, 4.5, 10.5, 12.5
  assert.deepEqual(box, [2.5, 102.5, 202.5, 4.5, 104.5, 204.5, 10.5, 110.5, 210.5, 12.5, 112.5, 212.5]);
  // width 3 -> 2 (scale 1.5): cell 0 = (1 * 0 + 0.5 * 30) / 1.5 = 10, cell 1 = (0.5 * 30 + 1 * 60) / 1.5 = 50
  assertClose(vals(nd._image_resize(nd.array([0, 30, 60], { shape: [1, 3, 1] }), { size: [2, 1], interp: 3 })), [10, 50], { atol: 1e-5 });
  // and 5 -> 2 (scale 2.5) in uint8: (10 + 20 + 0.5 * 30) / 2.5 = 18, (0.5 * 30 + 40 + 50) / 2.5 = 42
  assert.deepEqual(vals(nd._image_resize(nd.array([10, 20, 30, 40, 50], { shape: [1, 5, 1], dtype: 'uint8' }), { size: [2, 1], interp: 3 })), [18, 42]);
  // enlarging 2 -> 4 (scale 0.5): s = floor(d / 2), f = (d + 1) - 2 (s + 1) kept if positive:
  // d = 0: s 0, f 0 -> 0; d = 1: s 0, f 0 -> 0; d = 2: s 1 (the last pixel) -> 80; d = 3 -> 80
  assert.deepEqual(vals(nd._image_resize(nd.array([0, 80], { shape: [1, 2, 1] }), { size: [4, 1], interp: 3 })), [0, 0, 80, 80]);
  // 2 -> 3 (scale 2/3): d = 0: s 0, f = 1 - 1.5 < 0 -> 0; d = 1: s 0, f = 2 - 1.5 = 0.5 -> 40; d = 2: s 1 -> 80
  assertClose(vals(nd._image_resize(nd.array([0, 80], { shape: [1, 2, 1] }), { size: [3, 1], interp: 3 })), [0, 40, 80], { atol: 1e-5 });
});

test('INTER_CUBIC by hand: a 0, 0, 90, 90 row enlarged to 8 (Keys a = -0.75), float32 and uint8, rows and columns', () => {
  // scale 0.5: x = d / 2 - 0.25; f = 0.25 has weights (W(1.25), W(0.25), W(0.75), W(1.75)) =
  // (-0.10546875, 0.87890625, 0.26171875, -0.03515625), f = 0.75 the reverse; taps past the edge read the edge.
  // d = 1 (s 0, f .25): 90 * -0.03515625; d = 2 (s 0, f .75): 90 * -0.10546875; d = 3: 90 * (0.26171875 - 0.03515625)
  const expect = [0, -3.1640625, -9.4921875, 20.390625, 69.609375, 99.4921875, 93.1640625, 90];
  const row = nd.array([0, 0, 90, 90], { shape: [1, 4, 1] });
  assert.deepEqual(vals(nd._image_resize(row, { size: [8, 1], interp: 2 })), expect);
  assert.deepEqual(vals(nd._image_resize(row.reshape([4, 1, 1]), { size: [1, 8], interp: 2 })), expect);
  // uint8 saturates the undershoot to 0 and rounds: 20.39 -> 20, 69.61 -> 70, 99.49 -> 99, 93.16 -> 93
  const u8 = nd._image_resize(row.astype('uint8'), { size: [8, 1], interp: 2 });
  assert.deepEqual(vals(u8), [0, 0, 0, 20, 70, 99, 93, 90]);
  // shrinking 4 -> 2 (scale 2): x = 2 d + 0.5, f = 0.5 with weights (-0.09375, 0.59375, 0.59375, -0.09375)
  // d = 0 taps -1..2 = 0, 0, 0, 90 -> -8.4375; d = 1 taps 1..4 = 0, 90, 90, 90 -> 98.4375
  assert.deepEqual(vals(nd._image_resize(row, { size: [2, 1], interp: 2 })), [-8.4375, 98.4375]);
});

test('INTER_LANCZOS4: a constant image stays constant, an integer-aligned sample is the pixel itself', () => {
  const c = nd._image_resize(nd.full([5, 7, 3], 77), { size: [11, 3], interp: 4 });
  assertClose(vals(c), new Array(3 * 11 * 3).fill(77), { atol: 1e-4 });
  // 3 -> 1 (scale 3): x = 0.5 * 3 - 0.5 = 1, f = 0 -> exactly the middle pixel
  assert.deepEqual(vals(nd._image_resize(nd.array([5, 123, 9], { shape: [1, 3, 1], dtype: 'uint8' }), { size: [1, 1], interp: 4 })), [123]);
});

test('mx.image helpers at their default interp=2 (bicubic) now run: resize_short, center_crop, fixed_crop, imresize', () => {
  const { x, data } = image([7, 10, 3], 'uint8', 77);
  // resize_short(7 x 10, 5): (5, 10 * 5 // 7 = 7), bicubic
  const r = mx.image.resize_short(x, 5);
  check(r, data, [7, 10, 3], [5, 7], 2, 'uint8', 'resize_short');
  // interp 9 picks area when shrinking both sides, bicubic when enlarging both
  check(mx.image.resize_short(x, 5, 9), data, [7, 10, 3], [5, 7], 3, 'uint8', 'resize_short interp 9, shrinking');
  check(mx.image.resize_short(x, 9, 9), data, [7, 10, 3], [9, 12], 2, 'uint8', 'resize_short interp 9, enlarging');
  // center_crop(7 x 10, (12, 8)): scale_down((10, 7), (12, 8)) = (10, 20 / 3 -> 6), the crop at (0, 0)
  // (x0 = 0, y0 = (7 - 6) // 2 = 0) enlarged to 12 x 8 bicubic
  const [cc, rect] = mx.image.center_crop(x, [12, 8]);
  assert.deepEqual(rect, [0, 0, 10, 6]);
  check(cc, data.slice(0, 6 * 10 * 3), [6, 10, 3], [8, 12], 2, 'uint8', 'center_crop');
  // fixed_crop(x, 2, 1, 5, 5, (7, 3)): rows 1..5, columns 2..6, to 7 wide 3 high
  const crop = [];
  for (let y = 1; y < 6; y++) for (let xx = 2; xx < 7; xx++) for (let c = 0; c < 3; c++) crop.push(data[(y * 10 + xx) * 3 + c]);
  const fc = mx.image.fixed_crop(x, 2, 1, 5, 5, [7, 3]);
  check(fc, crop, [5, 5, 3], [3, 7], 2, 'uint8', 'fixed_crop');
  // imresize keeps MXNet's default interp=1 (bilinear); interp 3 and 4 pass through
  check(mx.image.imresize(x, 4, 3, 3), data, [7, 10, 3], [3, 4], 3, 'uint8', 'imresize interp 3');
  check(mx.image.imresize(x, 13, 9, { interp: 4 }), data, [7, 10, 3], [9, 13], 4, 'uint8', 'imresize interp 4');
  // gluon's transforms.Resize with interpolation=2 (positional and named)
  const T = mx.gluon.data.vision.transforms;
  const f = x.astype('float32');
  check(new T.Resize([6, 4], false, 2).forward(f), data, [7, 10, 3], [4, 6], 2, 'float32', 'transforms.Resize');
  check(new T.Resize({ size: 4, keep_ratio: true, interpolation: 4 }).forward(f), data, [7, 10, 3], [4, 5], 4, 'float32', 'transforms.Resize keep_ratio');
});

test('_image_resize: interp outside 0..4 is refused (OpenCV: unknown interpolation; 9 and 10 are image.py\'s)', () => {
  const x = nd.zeros([4, 4, 3], { dtype: 'uint8' });
  throwsWith(() => nd._image_resize(x, { size: 2, interp: 5 }), /interp=5 is not supported/);
  throwsWith(() => nd._image_resize(x, { size: 2, interp: 9 }), /interp=9 is not supported/);
  throwsWith(() => nd._image_resize(x, { size: 2, interp: -1 }), /interp=-1 is not supported/);
  throwsWith(() => nd._image_resize(x.astype('int32'), { size: 2, interp: 2 }), /int32 with interp=0 only/);
});

// ---- cv2.resize itself, when python3's OpenCV bindings are installed (Debian: python3-opencv) ----------------
function findCv2() {
  for (const py of ['/usr/bin/python3', 'python3']) {
    try {
      execFileSync(py, ['-c', 'import cv2, numpy'], { stdio: 'ignore' });
      return py;
    } catch { /* try the next */ }
  }
  return null;
}
const PY = findCv2();

test('cv2.resize agrees: float64 to 1e-9, float32 to 1e-3, uint8 within 1 level', { skip: PY ? false : 'python3 cv2 (python3-opencv) is not installed' }, (t) => {
  const cases = [];
  let seed = 500;
  for (const interp of [1, 2, 3, 4])
    for (const dtype of ['uint8', 'float32', 'float64'])
      for (const C of [1, 3])
        for (const [H, W, OH, OW] of [...SIZES, [4, 6, 2, 3], [10, 12, 5, 6], [20, 30, 7, 11]]) {
          const { x, data } = image([H, W, C], dtype, seed++);
          const y = nd._image_resize(x, { size: [OW, OH], interp });
          cases.push({ interp, dtype, shape: [H, W, C], osize: [OW, OH], data, got: vals(y) });
          x.dispose(), y.dispose();
        }
  const py = [
    'import sys, json, numpy as np, cv2',
    'out = []',
    'for c in json.load(sys.stdin):',
    '    a = np.array(c["data"], dtype=c["dtype"]).reshape(c["shape"])',
    '    out.append(cv2.resize(a, tuple(c["osize"]), interpolation=c["interp"]).reshape(-1).astype(np.float64).tolist())',
    'print(json.dumps(out))',
  ].join('\n');
  const ref = JSON.parse(execFileSync(PY, ['-c', py], { input: JSON.stringify(cases), maxBuffer: 1 << 28 }).toString());
  const off = {};
  cases.forEach((c, i) => {
    const msg = `interp ${c.interp} ${c.dtype} ${c.shape} -> ${c.osize}`;
    if (c.dtype === 'float64') assertClose(c.got, ref[i], { rtol: 1e-9, atol: 1e-9, msg });
    else if (c.dtype === 'float32') assertClose(c.got, ref[i], { rtol: 0, atol: 1e-3, msg });
    else {
      c.got.forEach((v, j) => {
        const d = Math.abs(v - ref[i][j]);
        assert.ok(d <= 1, `${msg} [${j}]: ${v} vs cv2's ${ref[i][j]}`);
        if (d) off[c.interp] = (off[c.interp] ?? 0) + 1;
      });
    }
  });
  t.diagnostic(`uint8 values off by 1 from cv2 ${execFileSync(PY, ['-c', 'import cv2; print(cv2.__version__)']).toString().trim()}, per interp: ${JSON.stringify(off)}`);
});
