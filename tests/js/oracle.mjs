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
