// web-demo/preprocess.mjs against hand-worked values: MNIST's preparation of a drawing (ink box
// fitted to 20x20 by area averaging, centre of mass at the field's centre), of a picture (dark
// ink on light paper inverted), top-k with softmax.
import test from 'node:test';
import assert from 'node:assert/strict';
import { greyOf, inkBox, resampleArea, mnistDigit, mnistInput, topK } from '../../web-demo/preprocess.mjs';

const close = (a, b, tol = 1e-6) => Math.abs(a - b) <= tol;
const assertClose = (got, want, tol = 1e-6) => {
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) assert.ok(close(got[i], want[i], tol), `[${i}]: ${got[i]} vs ${want[i]}`);
};

test('greyOf: the red channel, or ITU-R 601 luma', () => {
  const rgba = Uint8Array.from([255, 0, 0, 255, 10, 200, 30, 255]);
  assertClose(greyOf(rgba, { luma: false }), [1, 10 / 255]);
  assertClose(greyOf(rgba), [0.299, (0.299 * 10 + 0.587 * 200 + 0.114 * 30) / 255]);
});

test('inkBox: the bounding box of pixels above the threshold; null for a blank image', () => {
  const g = new Float32Array(6 * 5);
  g[1 * 6 + 2] = 0.5;
  g[3 * 6 + 4] = 0.2;
  g[4 * 6 + 0] = 0.05; // below 0.1
  assert.deepEqual(inkBox(g, 6, 5), { x: 2, y: 1, w: 3, h: 3 });
  assert.equal(inkBox(new Float32Array(30), 6, 5), null);
});

test('resampleArea: each output pixel is the mean of the area it covers', () => {
  // one row of 3 -> 2: [a, b/2] over 1.5 pixels, [b/2, c] over 1.5
  const [a, b, c] = [0.3, 0.6, 0.9];
  assertClose(resampleArea(Float32Array.from([a, b, c]), 3, { x: 0, y: 0, w: 3, h: 1 }, 2, 1),
    [(a + b / 2) / 1.5, (b / 2 + c) / 1.5]);
  // 4x4 -> 2x2: the mean of each 2x2 block
  const g = Float32Array.from({ length: 16 }, (_, i) => i / 16);
  assertClose(resampleArea(g, 4, { x: 0, y: 0, w: 4, h: 4 }, 2, 2),
    [(0 + 1 + 4 + 5) / 64, (2 + 3 + 6 + 7) / 64, (8 + 9 + 12 + 13) / 64, (10 + 11 + 14 + 15) / 64]);
});

test('mnistDigit: a 40x80 bar -> a 10x20 patch with its centre of mass at (14, 14)', () => {
  const W = 100, H = 100, g = new Float32Array(W * H);
  for (let y = 5; y < 85; y++) for (let x = 10; x < 50; x++) g[y * W + x] = 1;
  const d = mnistDigit(g, W, H);
  assert.deepEqual(d.box, { x: 10, y: 5, w: 40, h: 80 });
  // scale 20 / 80: a 10x20 patch of ones; its centre of mass (5, 10) goes to (14, 14): offset (9, 4)
  assert.deepEqual(d.patchSize, [10, 20]);
  assert.deepEqual(d.offset, [9, 4]);
  const want = new Float32Array(784);
  for (let y = 4; y < 24; y++) for (let x = 9; x < 19; x++) want[y * 28 + x] = 1;
  assertClose(d.pixels, want);
  assert.equal(mnistDigit(new Float32Array(W * H), W, H), null);
});

test('mnistDigit: the centre of mass, not the box centre, goes to the middle', () => {
  // a 20x20 box whose left column is 4x as heavy as the rest: ink 1 in column 0, 0.25 elsewhere
  const W = 20, H = 20, g = new Float32Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) g[y * W + x] = x === 0 ? 1 : 0.25;
  const d = mnistDigit(g, W, H);
  // scale 1; per row, mass 1 + 0.25 * 19 = 5.75 and x moment 1 * 0.5 + 0.25 * sum_{x=1..19} (x + 0.5) = 50.375:
  // the centre of mass is at x = 8.761, moved to 14: offset round(5.239) = 5 (the box's centre, 10, would give 4)
  assert.deepEqual(d.offset, [5, 4]);
});

test('mnistInput: dark ink on a light background is inverted, then prepared as MNIST', () => {
  // 56x56 white image with a black 8x16 bar: inverted, fitted to 10x20, centred
  const W = 56, H = 56, g = new Float32Array(W * H).fill(1);
  for (let y = 10; y < 26; y++) for (let x = 20; x < 28; x++) g[y * W + x] = 0;
  const want = new Float32Array(784);
  for (let y = 4; y < 24; y++) for (let x = 9; x < 19; x++) want[y * 28 + x] = 1;
  assertClose(mnistInput(g, W, H), want);
  // white on black: as is
  assertClose(mnistInput(g.map((v) => 1 - v), W, H), want);
  assert.throws(() => mnistInput(new Float32Array(16), 4, 4), /blank/);
});

test('topK: sorted by score; softmax probabilities unless the scores are a distribution', () => {
  const s = [1, 3, 2];
  const z = Math.exp(1) + Math.exp(3) + Math.exp(2);
  const t = topK(s, 2);
  assert.deepEqual(t.map((x) => x.index), [1, 2]);
  assert.ok(close(t[0].prob, Math.exp(3) / z) && close(t[1].prob, Math.exp(2) / z));
  const p = topK([0.2, 0.5, 0.3], 3);
  assert.deepEqual(p.map((x) => [x.index, x.prob]), [[1, 0.5], [2, 0.3], [0, 0.2]]);
});
