// nd's creation helpers with Python's signatures (js/creation.mjs): zeros, ones, empty, full,
// arange, array and concatenate, bound through the one argument binder. Expected values are
// worked by hand from MXNet 1.9.1's ndarray.py; concatenate is compared with TensorFlow.js's
// CPU tf.concat.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, sizeOf } from './oracle.mjs';

const { nd } = mx;
const values = (x) => Array.from(x.toTypedArray(), Number);
// The context recorded on an array by its creator (context.mjs's onContext; NDArray.context reports it).
const ctxOf = (a) => String(a._ctx ?? a.context);
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));

test('arange: positional and named arguments, stop None, repeat, dtype', () => {
  assert.deepEqual(values(nd.arange({ start: 1, stop: 10, step: 2 })), [1, 3, 5, 7, 9]);
  assert.deepEqual(values(nd.arange(1, 10, 2)), [1, 3, 5, 7, 9]);
  assert.deepEqual(values(nd.arange(5)), [0, 1, 2, 3, 4]); // arange(n) is [0, n)
  assert.deepEqual(values(nd.arange(0, 3, { repeat: 2 })), [0, 0, 1, 1, 2, 2]);
  assert.deepEqual(values(nd.arange(3, 0, -1)), [3, 2, 1]);
  const a = nd.arange(0, 1, 0.25);
  assert.equal(a.dtype, 'float32'); // Python's default mx_real_t
  assert.deepEqual(values(a), [0, 0.25, 0.5, 0.75]);
  const b = nd.arange(2, 5, 1, 1, null, null, 'int32'); // every parameter positionally
  assert.equal(b.dtype, 'int32');
  assert.deepEqual(values(b), [2, 3, 4]);
  assert.equal(ctxOf(nd.arange(3, { ctx: mx.cpu(2) })), 'cpu(2)');
  // infer_range is deprecated in MXNet 1.9.1: a warning, then ignored
  const warned = [];
  const orig = console.warn;
  console.warn = (...m) => warned.push(m.join(' '));
  try {
    assert.deepEqual(values(nd.arange(0, 2, { infer_range: true })), [0, 1]);
  } finally {
    console.warn = orig;
  }
  assert.equal(warned.length, 1);
  assert.match(warned[0], /infer_range/);
  throwsNaming(() => nd.arange(), /missing required argument 'start'/);
  throwsNaming(() => nd.arange('1'), /'start'/);
  throwsNaming(() => nd.arange(1, { stp: 2 }), /unknown argument 'stp'/);
});

test('zeros, ones, empty: shape, ctx, dtype in Python order or by name', () => {
  const z = nd.zeros([2, 3], { dtype: 'int32' });
  assert.equal(z.dtype, 'int32');
  assert.deepEqual(z.toArray(), [[0, 0, 0], [0, 0, 0]]);
  const zc = nd.zeros({ shape: [2], ctx: mx.cpu(1) });
  assert.deepEqual(values(zc), [0, 0]);
  assert.equal(ctxOf(zc), 'cpu(1)');
  assert.deepEqual(nd.zeros(3).shape, [3]); // an int shape is (n,)
  const zp = nd.zeros([2], mx.cpu(0), 'float64'); // zeros(shape, ctx, dtype) positionally
  assert.equal(zp.dtype, 'float64');
  assert.equal(nd.zeros([2], { stype: 'default' }).dtype, 'float32');
  throwsNaming(() => nd.zeros([2], { stype: 'csr' }), /stype 'csr'/);
  throwsNaming(() => nd.zeros(), /missing required argument 'shape'/);
  throwsNaming(() => nd.zeros([2.5]), /'shape'/);
  throwsNaming(() => nd.zeros([2], { ctx: 'cpu' }), /'ctx'/);

  const o = nd.ones([2, 2], { dtype: 'int8' });
  assert.equal(o.dtype, 'int8');
  assert.deepEqual(o.toArray(), [[1, 1], [1, 1]]);
  assert.deepEqual(values(nd.ones(3)), [1, 1, 1]);
  assert.equal(nd.ones([1]).dtype, 'float32');

  const e = nd.empty([2, 3]);
  assert.deepEqual(e.shape, [2, 3]);
  assert.equal(e.dtype, 'float32');
  const e2 = nd.empty(4, { dtype: 'float64', ctx: mx.cpu(3) });
  assert.deepEqual(e2.shape, [4]);
  assert.equal(e2.dtype, 'float64');
  assert.equal(ctxOf(e2), 'cpu(3)');
});

test('full: every element is val, in dtype; out is filled in place', () => {
  assert.deepEqual(values(nd.full([2], 7)), [7, 7]);
  assert.equal(nd.full([2], 7).dtype, 'float32'); // Python's default mx_real_t
  const i = nd.full([2, 2], 2.5, { dtype: 'int32' }); // 2.5 -> int32 truncates to 2
  assert.deepEqual(i.toArray(), [[2, 2], [2, 2]]);
  assert.deepEqual(values(nd.full({ shape: 3, val: -1.5 })), [-1.5, -1.5, -1.5]);
  const out = nd.zeros([3], { dtype: 'float64' });
  const r = nd.full([3], 0.1, { out });
  assert.equal(r, out); // Python returns out
  assert.deepEqual(values(out), [0.1, 0.1, 0.1]); // in out's float64
  throwsNaming(() => nd.full([2]), /missing required argument 'val'/);
});

test('array: data, ctx, dtype (and shape for typed arrays)', () => {
  const a = nd.array([[1, 2], [3, 4]], { dtype: 'float64' });
  assert.equal(a.dtype, 'float64');
  assert.deepEqual(a.toArray(), [[1, 2], [3, 4]]);
  const b = nd.array([1, 2], mx.cpu(2)); // array(source_array, ctx) positionally
  assert.equal(ctxOf(b), 'cpu(2)');
  assert.equal(b.dtype, 'float32');
  const c = nd.array(new Float32Array([1, 2, 3, 4]), { shape: [2, 2] });
  assert.deepEqual(c.toArray(), [[1, 2], [3, 4]]);
  const d = nd.array(a, { dtype: 'int32' }); // from an NDArray: a converted copy
  assert.equal(d.dtype, 'int32');
  assert.deepEqual(d.toArray(), [[1, 2], [3, 4]]);
  throwsNaming(() => nd.array(), /missing required argument 'source_array'/);
  throwsNaming(() => nd.array([1], { dtyp: 'int32' }), /unknown argument 'dtyp'/);
});

// Flat values of an NDArray list concatenated by tf.concat (the independent oracle).
function tfConcat(arrays, axis) {
  return tf.tidy(() => tf.concat(arrays.map((x) => tf.tensor(values(x), x.shape)), axis).dataSync());
}

test('concatenate: joins along axis as tf.concat does; always_copy; checks', () => {
  const r = rng(3);
  const make = (shape) => nd.array(r.uniform(sizeOf(shape)), { shape });
  const cases = [
    [[[2, 3], [1, 3]], 0],
    [[[2, 1], [2, 3], [2, 2]], 1],
    [[[2, 3, 4], [2, 1, 4]], 1],
    [[[2, 3, 4], [2, 3, 5]], 2],
    [[[2, 3, 4], [2, 3, 1]], -1],
  ];
  for (const [shapes, axis] of cases) {
    const arrays = shapes.map(make);
    const got = nd.concatenate(arrays, axis);
    const ax = axis < 0 ? axis + shapes[0].length : axis;
    const want = shapes[0].slice();
    want[ax] = shapes.reduce((s, sh) => s + sh[ax], 0);
    assert.deepEqual(got.shape, want, `shape for ${JSON.stringify(shapes)} axis ${axis}`);
    assertClose(values(got), tfConcat(arrays, axis), { rtol: 0, atol: 0, msg: `concat ${JSON.stringify(shapes)}` });
  }
  // axis defaults to 0; named arguments
  const a = make([1, 2]), b = make([2, 2]);
  assertClose(values(nd.concatenate([a, b])), tfConcat([a, b], 0), { rtol: 0, atol: 0 });
  assertClose(values(nd.concatenate({ arrays: [a, b], axis: 1 - 1 })), tfConcat([a, b], 0), { rtol: 0, atol: 0 });
  // always_copy=False with one array returns that array; True (the default) a copy
  assert.equal(nd.concatenate([a], 0, false), a);
  assert.equal(nd.concatenate([a], { alwaysCopy: false }), a);
  const copy = nd.concatenate([a]);
  assert.notEqual(copy, a);
  assert.deepEqual(values(copy), values(a));
  // the result lives on arrays[0]'s context
  const onOne = nd.array([[1, 2]], mx.cpu(1));
  assert.equal(ctxOf(nd.concatenate([onOne, b])), 'cpu(1)');
  // shapes or dtypes that do not agree (Python's assertions)
  throwsNaming(() => nd.concatenate([make([2, 3]), make([2, 4])]), /arrays\[1\] has shape \(2, 4\)/);
  throwsNaming(() => nd.concatenate([a, nd.zeros([1, 2], { dtype: 'float64' })]), /dtype float64/);
  throwsNaming(() => nd.concatenate([]), /non-empty/);
  throwsNaming(() => nd.concatenate([a], 2), /axis 2/);
  throwsNaming(() => nd.concatenate(a), /'arrays'/);
});
