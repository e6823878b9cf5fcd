// NDArray basics: creation from nested and typed arrays, dtypes, read-back, printing as MXNet
// prints, memory scopes and the error type. Expected values are worked by hand (numpy's
// printing for the text forms).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as mx from 'mxnet-wasm';
import mxDefault from 'mxnet-wasm';

const { nd } = mx;

test('nd.array from nested arrays: float32, shape, values', () => {
  const x = nd.array([[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual(x.shape, [2, 3]);
  assert.equal(x.dtype, 'float32');
  assert.equal(x.size, 6);
  assert.equal(x.ndim, 2);
  assert.equal(String(x.context), 'cpu(0)');
  assert.deepEqual(x.toArray(), [[1, 2, 3], [4, 5, 6]]);
  assert.ok(x.toTypedArray() instanceof Float32Array);
  assert.equal(nd.array([[[7]]]).item(), 7);
  assert.throws(() => nd.array([[1, 2], [3]]), mx.MXNetError);
  assert.throws(() => x.item(), /size 1/);
});

test('typed arrays keep their dtype; shape option; dtype conversion truncates like Cast', () => {
  const cases = [
    [new Float64Array([1.5, -2]), 'float64', Float64Array],
    [new Int32Array([1, -2]), 'int32', Int32Array],
    [new Uint8Array([1, 255]), 'uint8', Uint8Array],
    [new Int8Array([1, -128]), 'int8', Int8Array],
    [new BigInt64Array([1n, -(2n ** 40n)]), 'int64', BigInt64Array],
  ];
  for (const [data, dtype, T] of cases) {
    const a = nd.array(data);
    assert.equal(a.dtype, dtype);
    const back = a.toTypedArray();
    assert.ok(back instanceof T, dtype);
    assert.deepEqual(Array.from(back), Array.from(data));
  }
  const m = nd.array(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [3, 2] });
  assert.deepEqual(m.toArray(), [[1, 2], [3, 4], [5, 6]]);
  const t = nd.array(new Float64Array([2.7, -2.7, 1e10]), { dtype: 'int32' });
  // 1e10 is beyond int32: static_cast on x86-64 (MXNet's one rule, csrc/core/dtype.c) gives INT32_MIN
  assert.deepEqual(Array.from(t.toTypedArray()), [2, -2, -2147483648]);
  assert.deepEqual(nd.array([2.7, -1], { dtype: 'int64' }).toArray(), [2, -1]);
  assert.throws(() => nd.array([1], { dtype: 'float99' }), /unknown dtype float99/);
});

test('float16 and bfloat16 store rounded values and read back as float32', () => {
  const h = nd.array([1.5, 0.1, 70000], { dtype: 'float16' });
  assert.equal(h.dtype, 'float16');
  // 0.1 -> 0x2E66 = 0.0999755859375; 70000 overflows to inf in binary16
  assert.deepEqual(Array.from(h.toTypedArray()), [1.5, 0.0999755859375, Infinity]);
  const b = nd.array([3.14159], { dtype: 'bfloat16' });
  assert.deepEqual(Array.from(b.toTypedArray()), [3.140625]);
});

test('printing follows MXNet (numpy body, then <NDArray shape @ctx>)', () => {
  assert.equal(String(nd.array([[1, 2, 3], [4, 5, 6]])), '\n[[1. 2. 3.]\n [4. 5. 6.]]\n<NDArray 2x3 @cpu(0)>');
  assert.equal(String(nd.array([0.5, 1.25, 3])), '\n[0.5  1.25 3.  ]\n<NDArray 3 @cpu(0)>');
  assert.equal(String(nd.array(new Int32Array([1, -20]))), '\n[  1 -20]\n<NDArray 2 @cpu(0)>');
  assert.equal(String(nd.array([[[1]], [[2]]])), '\n[[[1.]]\n\n [[2.]]]\n<NDArray 2x1x1 @cpu(0)>');
  // numpy's maxprec/unique rules on float32 values (hand-worked from numpy's printing)
  assert.equal(String(nd.array([123.456, 0.1, 1 / 3])), '\n[123.456        0.1          0.33333334]\n<NDArray 3 @cpu(0)>');
  assert.equal(String(nd.array([1e-5, 1])), '\n[1.e-05 1.e+00]\n<NDArray 2 @cpu(0)>');
  assert.equal(String(nd.array([1.5e-5, 1])), '\n[1.5e-05 1.0e+00]\n<NDArray 2 @cpu(0)>');
});

test('dispose, tidy and memory()', () => {
  const before = mx.memory();
  let kept;
  const result = mx.tidy(() => {
    const a = nd.array([1, 2, 3]);
    const b = nd.array([4, 5, 6]);
    kept = nd.array([7]);
    mx.keep(kept);
    void b;
    return a;
  });
  assert.deepEqual(result.toArray(), [1, 2, 3]);
  const mid = mx.memory();
  assert.equal(mid.numArrays, before.numArrays + 2); // result and the kept array
  result.dispose();
  kept.dispose();
  result.dispose(); // idempotent
  assert.equal(mx.memory().numArrays, before.numArrays);
  assert.throws(() => result.toArray(), /disposed/);
  assert.equal(typeof mid.bytes, 'number');
  assert.ok(mid.wasmHeapBytes >= 16 * 1024 * 1024);
});

test('memory growth keeps earlier arrays readable', () => {
  const small = nd.array([1, 2, 3]);
  const heap = mx.memory().wasmHeapBytes;
  const big = nd.empty([64 * 1024 * 1024 / 4]); // forces the wasm memory to grow
  assert.ok(mx.memory().wasmHeapBytes > heap);
  assert.deepEqual(small.toArray(), [1, 2, 3]);
  big.dispose();
});

test('module surface: named and default exports, version, features, MXNetError', () => {
  for (const k of ['nd', 'sym', 'gluon', 'autograd', 'init', 'cpu', 'tidy', 'memory', 'features', 'MXNetError', 'version']) {
    assert.ok(k in mx, k);
    assert.equal(mxDefault[k], mx[k], k);
  }
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url)));
  assert.equal(mx.version, pkg.version);
  const f = mx.features();
  assert.ok(['simd', 'threads', 'relaxed-simd', 'relaxed-simd-threads'].includes(f.tier)); // tiers.test.mjs checks which
  assert.equal(typeof f.threads, 'boolean');
  const e = new mx.MXNetError('x');
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'MXNetError');
  assert.ok(mx.cpu(0).equals(mx.cpu()));
});

test('astype and copy', () => {
  const x = nd.array([1.7, -1.7, 300]);
  const i = x.astype('int32');
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(i.toArray(), [1, -1, 300]);
  const u = x.astype('uint8');
  assert.deepEqual(u.toArray().slice(0, 1), [1]);
  const c = x.copy();
  assert.deepEqual(Array.from(c.toTypedArray()), Array.from(x.toTypedArray()));
  assert.equal(x.astype('float32', { copy: false }), x);
});
