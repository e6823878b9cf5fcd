// Cast (and its aliases), amp_cast and clip against TensorFlow.js's CPU kernels where tfjs has
// the dtype, and hand-worked values elsewhere (float16, float64, uint8, NaN handling).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, halfValue, roundToHalf } from './oracle.mjs';

const { nd } = mx;
const values = (a) => Array.from(a.toTypedArray(), Number);
const shape = [3, 5, 7]; // 105 elements: SIMD blocks of 4 and a tail of 1
const data = rng(21).uniform(105, -100, 100);

test('astype / Cast to int32 truncate toward zero like tf.cast', () => {
  const x = nd.array(data, { shape });
  const i = x.astype('int32');
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(i.shape, shape);
  const expected = Array.from(tf.tidy(() => tf.cast(tf.tensor(data, shape), 'int32').dataSync()));
  assert.deepEqual(values(i), expected);
  assert.deepEqual(values(nd.Cast(nd.array([2.7, -2.7, 0.5, -0.5, 1e3]), { dtype: 'int32' })), [2, -2, 0, 0, 1000]);
});

test('int32 -> float32 and float32 -> bool match tf.cast', () => {
  const ints = Int32Array.from(data, (v) => Math.trunc(v * 1000));
  const f = nd.cast(nd.array(ints), { dtype: 'float32' });
  assert.equal(f.dtype, 'float32');
  assert.deepEqual(values(f), Array.from(tf.tidy(() => tf.cast(tf.tensor(ints, [105], 'int32'), 'float32').dataSync())));
  const withZeros = Float32Array.from(data, (v, k) => (k % 3 === 0 ? 0 : v));
  const b = nd._npi_cast(nd.array(withZeros), { dtype: 'bool' });
  assert.equal(b.dtype, 'bool');
  assert.deepEqual(values(b), Array.from(tf.tidy(() => tf.cast(tf.tensor(withZeros), 'bool').dataSync()), Number));
});

// float32 <-> float16 run eight lanes at a time: checked on every binary16 value (exact both
// ways) and on a million float32 bit patterns (rounding, subnormals, overflow, NaN), with tails.
test('Cast float32 <-> float16: every binary16 value and 1M float32 patterns against the IEEE rule', () => {
  const same = (got, want, what) => {
    for (let i = 0; i < want.length; i++) {
      const g = got[i], w = want[i];
      if (!(Object.is(g, w) || (Number.isNaN(g) && Number.isNaN(w)))) assert.fail(`${what}[${i}]: ${g} vs ${w}`);
    }
  };
  const all = Float32Array.from({ length: 65536 }, (_, b) => halfValue(b));
  for (const n of [65536, 65533]) {
    const xs = all.subarray(0, n);
    same(nd.array(xs).astype('float16').astype('float32').toTypedArray(), xs, 'float16 round trip');
  }
  const bits = Uint32Array.from({ length: 1 << 20 }, (_, i) => (i * 4099 + (i >> 7)) >>> 0);
  const f32 = new Float32Array(bits.buffer);
  const want = Array.from(f32, roundToHalf);
  same(nd.array(f32).astype('float16').astype('float32').toTypedArray(), want, 'float32 -> float16');
  same(nd.Cast(nd.array(f32.subarray(0, 1001)), { dtype: 'float16' }).astype('float32').toTypedArray(), want.slice(0, 1001),
    'float32 -> float16 (tail)');
});

test('Cast to float16 and back: hand-rounded binary16 values', () => {
  // nearest binary16: 0.1 -> 1638 / 16384; 2.7 -> 1382 / 512; 1 + 2^-10 exact; 65504 is the
  // largest finite half; 70000 overflows to inf; 1e-8 is below half the smallest subnormal
  // (2^-24 / 2) and becomes 0; 2^-24 is the smallest subnormal itself
  const x = nd.array([0.1, 2.7, 1.0009765625, 65504, 70000, -1e-8, 2 ** -24, -3.5]);
  const h = nd.Cast(x, { dtype: 'float16' });
  assert.equal(h.dtype, 'float16');
  const back = nd._npx_cast(h, { dtype: 'float32' });
  assert.deepEqual(values(back), [1638 / 16384, 1382 / 512, 1.0009765625, 65504, Infinity, -0, 2 ** -24, -3.5]);
  // round half to even: 2049 lies between 2048 and 2050 (spacing 2) -> 2048; 2051 -> 2052
  assert.deepEqual(values(nd.Cast(nd.Cast(nd.array([2049, 2051]), { dtype: 'float16' }), { dtype: 'float32' })), [2048, 2052]);
});

test('Cast to uint8, float64 and int64: hand values', () => {
  const x = nd.array([255, 3.9, 0, 127.5]);
  const u = x.astype('uint8');
  assert.equal(u.dtype, 'uint8');
  assert.deepEqual(values(u), [255, 3, 0, 127]);
  const f32 = Float32Array.from([0.1, -1e-30, 3.4e38]);
  const d = nd.Cast(nd.array(f32), { dtype: 'float64' });
  assert.equal(d.dtype, 'float64');
  assert.deepEqual(values(d), Array.from(f32)); // widening is exact: the float32 values themselves
  const l = nd.Cast(nd.array(new Float64Array([-7.99, 2 ** 40 + 0.5])), { dtype: 'int64' });
  assert.deepEqual(Array.from(l.toTypedArray()), [-7n, 2n ** 40n]);
  // Cast to the same dtype is a copy
  const same = nd.Cast(x, { dtype: 'float32' });
  assert.deepEqual(values(same), [255, 3.9, 0, 127.5].map(Math.fround));
});

test('amp_cast converts float32 inputs and passes integer inputs through', () => {
  const h = nd.amp_cast(nd.array([0.1, 2]), { dtype: 'float16' });
  assert.equal(h.dtype, 'float16');
  assert.deepEqual(values(h), [1638 / 16384, 2]);
  const i = nd.amp_cast(nd.array(new Int32Array([5, -6])), { dtype: 'float16' });
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(values(i), [5, -6]);
});

test('clip / _npi_clip / _sparse_clip match tf.clipByValue on random data', () => {
  const x = nd.array(data, { shape });
  for (const [name, lo, hi] of [['clip', -30, 45.5], ['_npi_clip', 0, 1], ['_sparse_clip', -1000, 1000]]) {
    const y = nd[name](x, { a_min: lo, a_max: hi });
    assert.deepEqual(y.shape, shape);
    assert.equal(y.dtype, 'float32');
    const expected = tf.tidy(() => tf.clipByValue(tf.tensor(data, shape), lo, hi).dataSync());
    assertClose(values(y), expected, { rtol: 0, atol: 0, msg: name });
  }
  // odd sizes around the SIMD width
  for (const n of [1, 3, 4, 5, 7, 9]) {
    const v = data.slice(0, n);
    const expected = tf.tidy(() => tf.clipByValue(tf.tensor(v), -10, 10).dataSync());
    assertClose(values(nd.clip(nd.array(v), { a_min: -10, a_max: 10 })), expected, { rtol: 0, atol: 0, msg: `n=${n}` });
  }
});

test('clip: NaN passes through; float64 and int32 keep their dtype (hand values)', () => {
  const y = values(nd.clip(nd.array([NaN, -5, 0.5, 5, NaN, 2]), { a_min: -1, a_max: 1 }));
  assert.ok(Number.isNaN(y[0]) && Number.isNaN(y[4]));
  assert.deepEqual([y[1], y[2], y[3], y[5]], [-1, 0.5, 1, 1]);
  const d = nd.clip(nd.array(new Float64Array([-1e300, 0.25, 1e300])), { a_min: 0, a_max: 1 });
  assert.equal(d.dtype, 'float64');
  assert.deepEqual(values(d), [0, 0.25, 1]);
  // bounds are float32 values: 0.1 becomes 0.100000001490116...
  assert.deepEqual(values(nd.clip(nd.array(new Float64Array([0.5])), { a_min: -1, a_max: 0.1 })), [Math.fround(0.1)]);
  const i = nd.clip(nd.array(new Int32Array([-5, 1, 3, 100])), { a_min: -1, a_max: 2.5 });
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(values(i), [-1, 1, 2, 2]); // the bound 2.5 truncates to 2 when stored
});

test('errors name the op and the problem; the next call works', () => {
  const x = nd.array([1.5, -2]);
  assert.throws(() => nd.Cast(x, { dtype: 'float99' }),
    (e) => e instanceof mx.MXNetError && /Operator Cast/.test(e.message) && /float99/.test(e.message));
  assert.throws(() => nd.Cast(x), (e) => e instanceof mx.MXNetError && /Operator Cast/.test(e.message) && /'dtype'/.test(e.message));
  assert.throws(() => nd.clip(x, { a_min: 0 }), (e) => e instanceof mx.MXNetError && /Operator clip/.test(e.message) && /'a_max'/.test(e.message));
  assert.throws(() => nd.clip(x, { a_min: 'low', a_max: 1 }), (e) => e instanceof mx.MXNetError && /'a_min'/.test(e.message));
  assert.throws(() => nd.Cast(x, x, { dtype: 'int32' }), (e) => e instanceof mx.MXNetError && /Operator Cast/.test(e.message));
  assert.deepEqual(values(nd.Cast(x, { dtype: 'int32' })), [1, -2]);
});
