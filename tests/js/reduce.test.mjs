// Reductions (sum, mean, max, min, prod, nansum, nanprod, norm), argmax/argmin and pick against
// TensorFlow.js's CPU kernels on random data, plus hand-worked shapes and values where tfjs has
// no counterpart (exclude, float64, integer wrap-around).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, sizeOf } from './oracle.mjs';

const { nd } = mx;
const values = (a) => Array.from(a.toTypedArray(), Number);

// tfjs reductions by MXNet op name (nansum/nanprod see no NaN in the random data).
const TF_REDUCE = {
  sum: (t, ax, k) => tf.sum(t, ax, k),
  mean: (t, ax, k) => tf.mean(t, ax, k),
  max: (t, ax, k) => tf.max(t, ax, k),
  min: (t, ax, k) => tf.min(t, ax, k),
  prod: (t, ax, k) => tf.prod(t, ax, k),
  nansum: (t, ax, k) => tf.sum(t, ax, k),
  nanprod: (t, ax, k) => tf.prod(t, ax, k),
};

const SHAPES = [[7], [4, 5], [3, 4, 5], [2, 3, 4, 5]];
// Axis sets per rank (null = MXNet's None).
const AXES = {
  1: [null, [], [0], [-1]],
  2: [null, [0], [1], [-1], [0, 1], [-2, 1]],
  3: [null, [0], [1], [2], [-1], [0, 2], [1, -1], [0, 1, 2]],
  4: [null, [0], [3], [-2], [0, 2], [1, 3], [0, -1], [1, 2], [0, 1, 3]],
};

// The axes actually reduced, in tfjs's terms (non-negative, sorted).
function reducedAxes(rank, axis, exclude) {
  if (axis === null || axis.length === 0) return [...Array(rank).keys()];
  const listed = new Set(axis.map((a) => (a < 0 ? a + rank : a)));
  return [...Array(rank).keys()].filter((a) => (exclude ? !listed.has(a) : listed.has(a)));
}

for (const shape of SHAPES) {
  const n = sizeOf(shape);
  const data = rng(100 + shape.length).uniform(n, -2, 2);
  const pos = rng(200 + shape.length).uniform(n, 0.6, 1.4); // products stay well inside float32
  for (const op of Object.keys(TF_REDUCE)) {
    test(`${op} on ${JSON.stringify(shape)} matches tfjs for every axis set, keepdims and exclude`, () => {
      const src = op.includes('prod') ? pos : data;
      const x = nd.array(src, { shape });
      for (const axis of AXES[shape.length]) {
        for (const exclude of axis === null ? [false] : [false, true]) {
          for (const keepdims of [false, true]) {
            const axes = reducedAxes(shape.length, axis, exclude);
            const y = nd[op](x, { axis, keepdims, exclude });
            const ref = tf.tidy(() => {
              const r = axes.length ? TF_REDUCE[op](tf.tensor(src, shape), axes, keepdims) : tf.tensor(src, shape);
              return { shape: r.shape, data: r.dataSync() };
            });
            // MXNet: removing every axis gives (1,) where tfjs gives a scalar.
            const want = ref.shape.length === 0 ? [1] : ref.shape;
            const msg = `${op} axis=${JSON.stringify(axis)} keepdims=${keepdims} exclude=${exclude}`;
            assert.deepEqual(y.shape, want, msg);
            assert.equal(y.dtype, 'float32');
            assertClose(y.toTypedArray(), ref.data, { rtol: 2e-6, atol: 1e-6, msg });
            y.dispose();
          }
        }
      }
      x.dispose();
    });
  }
}

test('output shapes follow the spec rules (hand-written)', () => {
  const x = nd.zeros([2, 3, 4]);
  const cases = [
    [{ axis: [0, 2] }, [3]],
    [{ axis: [0, 2], keepdims: true }, [1, 3, 1]],
    [{ axis: [0, 2], exclude: true }, [2, 4]],
    [{ axis: [0, 2], exclude: true, keepdims: true }, [2, 1, 4]],
    [{ axis: [2, 0], exclude: true }, [2, 4]],
    [{ axis: -1, exclude: true }, [4]],
    [{}, [1]],
    [{ axis: [] }, [1]],
    [{ keepdims: true }, [1, 1, 1]],
    [{ axis: [0, 1, 2] }, [1]],
    [{ axis: [0, 1, 2], exclude: true }, [2, 3, 4]],
    [{ axis: 1 }, [2, 4]],
  ];
  for (const [attrs, want] of cases) assert.deepEqual(nd.sum(x, attrs).shape, want, JSON.stringify(attrs));
  assert.deepEqual(nd.mean(nd.zeros([5]), { axis: 0 }).shape, [1]);
});

test('long float32 sums stay accurate (pairwise summation) against tfjs', () => {
  for (const [n, lo, hi] of [[100000, -1, 1], [100000, 0, 1], [1000003, 0, 1]]) {
    const d = rng(n).uniform(n, lo, hi);
    const expected = tf.tidy(() => tf.sum(tf.tensor(d)).dataSync());
    assertClose(nd.sum(nd.array(d)).toTypedArray(), expected, { rtol: 1e-5, atol: 0, msg: `sum of ${n}` });
    const mean = tf.tidy(() => tf.mean(tf.tensor(d)).dataSync());
    assertClose(nd.mean(nd.array(d)).toTypedArray(), mean, { rtol: 1e-5, atol: 0, msg: `mean of ${n}` });
  }
  // a long column reduction (axis 0 of (50000, 3)) is pairwise too
  const d = rng(5).uniform(150000, 0, 1);
  const expected = tf.tidy(() => tf.sum(tf.tensor(d, [50000, 3]), 0).dataSync());
  assertClose(nd.sum(nd.array(d, { shape: [50000, 3] }), { axis: 0 }).toTypedArray(), expected, { rtol: 1e-5, atol: 0 });
});

test('int32 sums are exact (tfjs int32) and keep the dtype', () => {
  const ints = Int32Array.from(rng(9).uniform(6000, -1e6, 1e6), Math.trunc);
  const x = nd.array(ints, { shape: [6, 1000] });
  for (const axis of [null, 0, 1]) {
    const y = nd.sum(x, { axis });
    assert.equal(y.dtype, 'int32');
    const expected = tf.tidy(() => tf.sum(tf.tensor(ints, [6, 1000], 'int32'), axis === null ? undefined : axis).dataSync());
    assert.deepEqual(values(y), Array.from(expected));
  }
  const mx_ = nd.max(x, { axis: 1 }), mn = nd.min(x, { axis: 0 });
  assert.deepEqual(values(mx_), Array.from(tf.tidy(() => tf.max(tf.tensor(ints, [6, 1000], 'int32'), 1).dataSync())));
  assert.deepEqual(values(mn), Array.from(tf.tidy(() => tf.min(tf.tensor(ints, [6, 1000], 'int32'), 0).dataSync())));
  // overflow wraps as int32 accumulation does; mean truncates toward zero
  assert.deepEqual(values(nd.sum(nd.array(new Int32Array([2147483647, 1])))), [-2147483648]);
  assert.deepEqual(values(nd.mean(nd.array(new Int32Array([-7, 2])))), [-2]);
});

test('float64 keeps double precision', () => {
  const d = Float64Array.from(rng(3).uniform(999, -1, 1), (v, i) => v + i * 1e-9);
  const x = nd.array(d, { shape: [9, 111] });
  const s = nd.sum(x, { axis: 1 });
  assert.equal(s.dtype, 'float64');
  const expected = Array.from({ length: 9 }, (_, r) => d.slice(r * 111, r * 111 + 111).reduce((a, b) => a + b, 0));
  assertClose(s.toTypedArray(), expected, { rtol: 1e-13, atol: 1e-15 });
  // 1 + 2^-40 is not a float32 value
  const m = nd.max(nd.array(new Float64Array([1, 1 + 2 ** -40, 0.5])));
  assert.equal(m.toTypedArray()[0], 1 + 2 ** -40);
  assertClose(nd.norm(nd.array(new Float64Array([3, 4]))).toTypedArray(), [5], { rtol: 1e-15, atol: 0 });
});

test('nansum / nanprod skip NaN; max / min / sum propagate it', () => {
  const d = Float32Array.from([1, NaN, 3, 4, NaN, 6, 2, 2]);
  const shape = [2, 4];
  const clean = (t) => tf.where(tf.isNaN(t), tf.zerosLike(t), t);
  const ones = (t) => tf.where(tf.isNaN(t), tf.onesLike(t), t);
  const x = nd.array(d, { shape });
  assertClose(nd.nansum(x, { axis: 1 }).toTypedArray(), tf.tidy(() => tf.sum(clean(tf.tensor(d, shape)), 1).dataSync()));
  assertClose(nd.nanprod(x, { axis: 0 }).toTypedArray(), tf.tidy(() => tf.prod(ones(tf.tensor(d, shape)), 0).dataSync()));
  const m = values(nd.max(x, { axis: 1 }));
  assert.ok(Number.isNaN(m[0]) && Number.isNaN(m[1]));
  assert.ok(Number.isNaN(values(nd.min(x))[0]));
  assert.ok(Number.isNaN(values(nd.sum(x))[0]));
});

test('norm (ord 1 and 2) matches tfjs on vectors, matrices and axis sets', () => {
  const shape = [3, 4, 5];
  const d = rng(12).uniform(60, -3, 3);
  const x = nd.array(d, { shape });
  const t = () => tf.tensor(d, shape);
  // tf.norm: vector norm of everything, and the Frobenius norm over two axes
  assertClose(nd.norm(x).toTypedArray(), tf.tidy(() => tf.norm(t()).dataSync()), { rtol: 2e-6 });
  assertClose(nd.norm(x, { ord: 1 }).toTypedArray(), tf.tidy(() => tf.norm(t(), 1).dataSync()), { rtol: 2e-6 });
  assertClose(nd.norm(x, { axis: [0, 2] }).toTypedArray(), tf.tidy(() => tf.norm(t(), 'fro', [0, 2]).dataSync()), { rtol: 2e-6 });
  for (const axis of [0, -1, [1, 2], [0, 1, 2]]) {
    for (const keepdims of [false, true]) {
      const ax = Array.isArray(axis) ? axis : [axis];
      const y2 = nd.norm(x, { axis, keepdims });
      const r2 = tf.tidy(() => tf.sqrt(tf.sum(tf.square(t()), ax, keepdims)));
      assert.deepEqual(y2.shape, r2.shape.length ? r2.shape : [1]);
      assertClose(y2.toTypedArray(), r2.dataSync(), { rtol: 2e-6, msg: `ord 2 axis ${axis}` });
      const y1 = nd.norm(x, { ord: 1, axis, keepdims });
      assertClose(y1.toTypedArray(), tf.tidy(() => tf.sum(tf.abs(t()), ax, keepdims).dataSync()), { rtol: 2e-6 });
      r2.dispose();
    }
  }
  const o = nd.norm(x, { out_dtype: 'float64', axis: 1 });
  assert.equal(o.dtype, 'float64');
  assertClose(o.toTypedArray(), tf.tidy(() => tf.norm(t(), 'euclidean', 1).dataSync()), { rtol: 2e-6 });
});

test('argmax / argmin match tf.argMax / tf.argMin on every axis; ties take the first', () => {
  for (const shape of SHAPES) {
    const n = sizeOf(shape);
    const d = rng(300 + n).uniform(n, -5, 5);
    const x = nd.array(d, { shape });
    for (let axis = -shape.length; axis < shape.length; axis++) {
      for (const keepdims of [false, true]) {
        for (const [op, ref] of [['argmax', tf.argMax], ['argmin', tf.argMin]]) {
          const y = nd[op](x, { axis, keepdims });
          assert.equal(y.dtype, 'float32');
          const r = tf.tidy(() => {
            const a = ref(tf.tensor(d, shape), axis);
            return { shape: a.shape, data: a.dataSync() };
          });
          const a = axis < 0 ? axis + shape.length : axis;
          const want = shape.length === 1 ? [1] : keepdims ? shape.map((s, i) => (i === a ? 1 : s)) : r.shape;
          assert.deepEqual(y.shape, want, `${op} axis ${axis} keepdims ${keepdims}`);
          assert.deepEqual(values(y), Array.from(r.data), `${op} axis ${axis}`);
        }
      }
    }
    // axis None: the flat index, (1,) or all ones with keepdims
    const flat = nd.argmax(x);
    assert.deepEqual(flat.shape, [1]);
    assert.deepEqual(values(flat), Array.from(tf.tidy(() => tf.argMax(tf.tensor(d)).dataSync())));
    assert.deepEqual(nd.argmin(x, { keepdims: true }).shape, shape.map(() => 1));
    assert.deepEqual(values(nd.argmin(x)), Array.from(tf.tidy(() => tf.argMin(tf.tensor(d)).dataSync())));
  }
  const ties = nd.array([[1, 3, 3], [2, 2, 1]]);
  assert.deepEqual(values(nd.argmax(ties, { axis: 1 })), [1, 0]);
  assert.deepEqual(values(nd.argmin(ties, { axis: 0 })), [0, 1, 1]);
  assert.deepEqual(values(nd.argmax(ties)), [1]);
  // indices are stored in the input dtype
  const i = nd.argmax(nd.array(new Int32Array([4, 9, 9, 1])), { axis: 0 });
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(values(i), [1]);
});

test('pick and choose_element_0index match a one-hot selection in tfjs (clip and wrap)', () => {
  const shape = [6, 5];
  const d = rng(41).uniform(30, -1, 1);
  const idx = [0, 4, 7, -1, -6, 2.9];
  const t = tf.tensor(d, shape);
  const select = (cols, axisLen) => tf.tidy(() => tf.sum(tf.mul(t, tf.oneHot(tf.tensor1d(cols, 'int32'), axisLen)), 1).dataSync());
  const x = nd.array(d, { shape }), i = nd.array(idx);
  const clipped = idx.map((v) => Math.min(Math.max(Math.trunc(v), 0), 4));
  const wrapped = idx.map((v) => ((Math.trunc(v) % 5) + 5) % 5);
  assertClose(nd.pick(x, i).toTypedArray(), select(clipped, 5), { rtol: 0, atol: 0 });
  assertClose(nd.choose_element_0index(x, i, { mode: 'wrap' }).toTypedArray(), select(wrapped, 5), { rtol: 0, atol: 0 });
  const k = nd.pick(x, nd.array(idx, { shape: [6, 1] }), { axis: 1, keepdims: true });
  assert.deepEqual(k.shape, [6, 1]);
  assertClose(k.toTypedArray(), select(clipped, 5), { rtol: 0, atol: 0 });
  // along axis 0: index per column
  const cols = nd.pick(x, nd.array([5, 0, 3, 1, 2]), { axis: 0 });
  const tT = tf.transpose(t);
  const ref = tf.tidy(() => tf.sum(tf.mul(tT, tf.oneHot(tf.tensor1d([5, 0, 3, 1, 2], 'int32'), 6)), 1).dataSync());
  assertClose(cols.toTypedArray(), ref, { rtol: 0, atol: 0 });
  t.dispose();
  tT.dispose();
});

test('NDArray methods: sum, mean, max, min, argmax', () => {
  const shape = [3, 4, 5];
  const d = rng(77).uniform(60, -1, 1);
  const x = nd.array(d, { shape });
  const t = () => tf.tensor(d, shape);
  const s = x.sum({ axis: 1 });
  assert.deepEqual(s.shape, [3, 5]);
  assertClose(s.toTypedArray(), tf.tidy(() => tf.sum(t(), 1).dataSync()), { rtol: 2e-6 });
  const m = x.mean();
  assert.deepEqual(m.shape, [1]);
  assertClose(m.toTypedArray(), tf.tidy(() => tf.mean(t()).dataSync()), { rtol: 2e-6 });
  const mx_ = x.max({ axis: [0, 2], keepdims: true });
  assert.deepEqual(mx_.shape, [1, 4, 1]);
  assertClose(mx_.toTypedArray(), tf.tidy(() => tf.max(t(), [0, 2], true).dataSync()), { rtol: 0, atol: 0 });
  assertClose(x.min().toTypedArray(), tf.tidy(() => tf.min(t()).dataSync()), { rtol: 0, atol: 0 });
  const am = x.argmax({ axis: 1 });
  assert.deepEqual(am.shape, [3, 5]);
  assert.deepEqual(values(am), Array.from(tf.tidy(() => tf.argMax(t(), 1).dataSync())));
});

test('aliases sum_axis, max_axis, min_axis are the same ops', () => {
  const d = rng(8).uniform(12, -1, 1);
  const x = nd.array(d, { shape: [3, 4] });
  const t = () => tf.tensor(d, [3, 4]);
  assertClose(nd.sum_axis(x, { axis: 1 }).toTypedArray(), tf.tidy(() => tf.sum(t(), 1).dataSync()), { rtol: 2e-6 });
  assertClose(nd.max_axis(x, { axis: 0 }).toTypedArray(), tf.tidy(() => tf.max(t(), 0).dataSync()));
  assertClose(nd.min_axis(x).toTypedArray(), tf.tidy(() => tf.min(t()).dataSync()));
});

test('bad axes and attributes throw MXNetError naming the op; the next call works', () => {
  const x = nd.array([[1, 2, 3], [4, 5, 6]]);
  const isErr = (op, re) => (e) => e instanceof mx.MXNetError && e.message.includes(`Operator ${op}`) && re.test(e.message);
  assert.throws(() => nd.sum(x, { axis: 3 }), isErr('sum', /axis 3 is out of range/));
  assert.throws(() => x.mean({ axis: [-3] }), isErr('mean', /axis -3 is out of range/));
  assert.throws(() => nd.max(x, { axis: [1, -1] }), isErr('max', /more than once/));
  assert.throws(() => nd.argmax(x, { axis: 2 }), isErr('argmax', /axis 2 is out of range/));
  assert.throws(() => nd.argmin(x, { axis: -3 }), isErr('argmin', /out of range/));
  assert.throws(() => nd.norm(x, { ord: 3 }), isErr('norm', /ord=3/));
  assert.throws(() => nd.prod(x, { axis: 2, keepdims: true }), isErr('prod', /axis 2/));
  assert.throws(() => nd.nansum(x, { axis: 'x' }), isErr('nansum', /axis/));
  assert.throws(() => nd.nanprod(x, { exclude: 'maybe' }), isErr('nanprod', /exclude/));
  assert.throws(() => nd.min(nd.array(new Float32Array(0), { shape: [0, 2] })), isErr('min', /empty/));
  assert.throws(() => nd.pick(x, nd.array([1, 2, 3])), isErr('pick', /index shape/));
  assert.throws(() => nd.pick(x, nd.array([1, 2]), { axis: null }), isErr('pick', /axis=None/));
  assert.deepEqual(values(nd.sum(x, { axis: 1 })), [6, 15]);
});

test('argmax / argmin over channels (lanes of adjacent positions and a tail): ties take the first, a NaN wins at its first place', () => {
  // shape (1, 3, 6): each of the 6 positions takes the arg over 3 channels; hand-worked
  const c0 = [1, 5, NaN, 2, 0, 7];
  const c1 = [4, 5, 1, NaN, 0, 9];
  const c2 = [4, 6, NaN, NaN, -1, 9];
  const x = nd.array([c0, c1, c2].flat(), { shape: [1, 3, 6] });
  assert.deepEqual(values(nd.argmax(x, { axis: 1 })), [1, 2, 0, 1, 0, 1]);
  assert.deepEqual(values(nd.argmin(x, { axis: 1 })), [0, 0, 0, 1, 2, 0]);
});

test('max / min / prod over channels (lanes of adjacent positions and a tail), NaN propagating: hand-worked', () => {
  const x = nd.array([[1, 5, NaN, 2, 0, 7], [4, 5, 1, NaN, 0, 9], [4, 6, NaN, NaN, -1, 9]].flat(), { shape: [1, 3, 6] });
  assert.deepEqual(values(nd.max(x, { axis: 1 })), [4, 6, NaN, NaN, 0, 9]);
  assert.deepEqual(values(nd.min(x, { axis: 1 })), [1, 5, NaN, NaN, -1, 7]);
  assert.deepEqual(values(nd.prod(x, { axis: 1 })), [16, 150, NaN, NaN, -0, 567]);
});
