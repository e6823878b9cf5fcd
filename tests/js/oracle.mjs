// Test helpers: the independent oracle (TensorFlow.js's plain-JS CPU backend, a devDependency),
// deterministic test data, and tolerance checks. Not a test file itself.
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';

await tf.setBackend('cpu');
export { tf };

// Deterministic data independent of the library's own RNG (mulberry32 + Box-Muller).
export function rng(seed = 1) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    uniform: (n, lo = -1, hi = 1) => Float32Array.from({ length: n }, () => lo + (hi - lo) * next()),
    normal: (n) => Float32Array.from({ length: n }, () => {
      const u = 1 - next(), v = next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }),
  };
}
export const sizeOf = (shape) => shape.reduce((a, b) => a * b, 1);

// |a - b| <= atol + rtol * |b| elementwise, with the first offending index in the message.
export function assertClose(actual, expected, { rtol = 1e-5, atol = 1e-6, msg = '' } = {}) {
  const a = Array.from(actual, Number), e = Array.from(expected, Number);
  assert.equal(a.length, e.length, `${msg} length ${a.length} vs ${e.length}`);
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(e[i]) && Number.isNaN(a[i])) continue;
    if (!(Math.abs(a[i] - e[i]) <= atol + rtol * Math.abs(e[i]))) {
      assert.fail(`${msg} index ${i}: got ${a[i]}, expected ${e[i]} (rtol ${rtol}, atol ${atol})`);
    }
  }
}

// Runs fn with tfjs tensors made from flat data; returns the flat Float32Array result.
export function oracle(fn) {
  return tf.tidy(() => fn(tf)).dataSync();
}

// IEEE binary16 and bfloat16 worked in JS from their definitions: a float16 bit pattern's value,
// and a number rounded to the nearest value of a binary format with `mant` stored mantissa bits
// and exponents down to `emin` (ties to even; past the largest finite value, infinity).
export function halfValue(b) {
  const s = b & 0x8000 ? -1 : 1, e = (b >> 10) & 31, m = b & 0x3ff;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15));
}
export function roundToFormat(v, { mant, emin, emax }) {
  if (Number.isNaN(v) || v === 0 || !Number.isFinite(v)) return v;
  const a = Math.abs(v), s = Math.sign(v);
  let e = Math.max(Math.floor(Math.log2(a)), emin);
  if (e > emin && 2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  const q = a / 2 ** (e - mant); // the value in units of the last place (binade e, or subnormal)
  const f = Math.floor(q), d = q - f;
  const r = d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
  const out = r * 2 ** (e - mant);
  if (out >= 2 ** (emax + 1)) return s * Infinity;
  return s * out || (s < 0 ? -0 : 0);
}
export const FLOAT16 = { mant: 10, emin: -14, emax: 15 };
export const BFLOAT16 = { mant: 7, emin: -126, emax: 127 };
export const roundToHalf = (v) => roundToFormat(v, FLOAT16);
