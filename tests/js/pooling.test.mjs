// Pooling against TensorFlow.js's CPU pooling kernels (an independent implementation; NCHW data
// is transposed to tfjs's NHWC / NDHWC) on random data, and against the window definition of
// ../shared/spec/ops.md computed with plain loops here where tfjs has no equivalent (padding
// counted in the divisor, the 'full' convention, lp). Also shapes and error messages. The
// channel-last layouts (NWC, NHWC, NDHWC) are tfjs's own, so there the data goes to tf as it is.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';

const { nd } = mx;
const tol = { rtol: 1e-5, atol: 1e-6 };
let seed = 500;
const rand = (shape) => rng(seed++).uniform(sizeOf(shape), -2, 2);
const tfRun = (fn) => tf.tidy(fn).dataSync();

// tfjs 2-D pooling of NCHW data: to NHWC, pool, back to NCHW.
function tf2d(x, shape, op, k, s, pad = 'valid') {
  return tfRun(() => {
    const t = tf.transpose(tf.tensor(x, shape), [0, 2, 3, 1]);
    return tf.transpose(tf[op](t, k, s, pad), [0, 3, 1, 2]);
  });
}
function tf3d(x, shape, op, k, s) {
  return tfRun(() => {
    const t = tf.transpose(tf.tensor(x, shape), [0, 2, 3, 4, 1]);
    return tf.transpose(tf[op](t, k, s, 'valid'), [0, 4, 1, 2, 3]);
  });
}

// The spec's definition for 2-D data, written out: windows start at o*s - p; max over in-range
// cells; avg divides by the window size clipped at in + p (padding counted unless
// count_include_pad is false); sum divisor 1; lp (sum x^p)^(1/p).
function refPool2d(x, [N, C, H, W], { k, s, p = [0, 0], type = 'max', full = false, includePad = true, pv = 1 }) {
  const os = [0, 1].map((d) => {
    const n = [H, W][d] + 2 * p[d] - k[d];
    return 1 + (full ? Math.ceil(n / s[d]) : Math.floor(n / s[d]));
  });
  const out = new Float64Array(N * C * os[0] * os[1]);
  let o = 0;
  for (let nc = 0; nc < N * C; nc++) {
    for (let oh = 0; oh < os[0]; oh++) {
      for (let ow = 0; ow < os[1]; ow++) {
        const h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
        const h1 = Math.min(h0 + k[0], H + p[0]), w1 = Math.min(w0 + k[1], W + p[1]);
        const ch0 = Math.max(h0, 0), cw0 = Math.max(w0, 0);
        const ch1 = Math.min(h0 + k[0], H), cw1 = Math.min(w0 + k[1], W);
        // each element is divided before it is added, so an empty window gives 0
        const size = type !== 'avg' ? 1
          : includePad ? (h1 - h0) * (w1 - w0) : Math.max(ch1 - ch0, 0) * Math.max(cw1 - cw0, 0);
        let acc = type === 'max' ? -3.4028234663852886e38 : 0;
        for (let h = ch0; h < ch1; h++) {
          for (let w = cw0; w < cw1; w++) {
            const v = x[(nc * H + h) * W + w];
            if (type === 'max') acc = Math.max(acc, v);
            else acc += v ** pv / size;
          }
        }
        if (type === 'lp') acc = pv === 2 ? Math.sqrt(acc) : pv === 3 ? Math.cbrt(acc) : acc;
        out[o++] = acc;
      }
    }
  }
  return { shape: [N, C, ...os], data: out };
}

// ---- 2-D max / avg / sum, valid convention, vs tfjs -------------------------------------------
const cases2d = [
  // [data shape, kernel, stride]
  [[2, 3, 8, 8], [2, 2], [2, 2]],
  [[1, 4, 11, 13], [3, 3], [2, 2]],
  [[2, 2, 9, 7], [3, 3], [1, 1]],
  [[1, 3, 10, 9], [2, 3], [1, 2]],
  [[3, 2, 15, 17], [2, 2], [1, 1]],
  [[1, 5, 12, 12], [4, 4], [3, 3]],
  [[2, 3, 7, 6], [5, 2], [2, 1]],
  [[1, 1, 33, 35], [3, 3], [2, 2]],
];
for (const [shape, k, s] of cases2d) {
  test(`Pooling 2-D ${shape} kernel ${k} stride ${s}: max, avg and sum match tfjs`, () => {
    const x = rand(shape);
    const xa = nd.array(x, { shape });
    const mx0 = nd.Pooling(xa, { kernel: k, stride: s, pool_type: 'max' });
    const want = tf2d(x, shape, 'maxPool', k, s);
    assertClose(mx0.toTypedArray(), want, { ...tol, msg: 'max' });
    const [N, C, H, W] = shape;
    assert.deepEqual(mx0.shape, [N, C, Math.floor((H - k[0]) / s[0]) + 1, Math.floor((W - k[1]) / s[1]) + 1]);
    const avg = nd.Pooling(xa, { kernel: k, stride: s, pool_type: 'avg' });
    assertClose(avg.toTypedArray(), tf2d(x, shape, 'avgPool', k, s), { ...tol, msg: 'avg' });
    // sum = avg * window size for unpadded valid windows
    const sum = nd._npx_pooling(xa, { kernel: k, stride: s, pool_type: 'sum' });
    const wantSum = tfRun(() => tf.mul(tf.tensor(tf2d(x, shape, 'avgPool', k, s)), k[0] * k[1]));
    assertClose(sum.toTypedArray(), wantSum, { rtol: 1e-5, atol: 1e-5, msg: 'sum' });
  });
}

test('Pooling 2-D with padding: max and avg(count_include_pad=False) match tfjs numeric padding', () => {
  // tfjs's numeric pad pads every side by p and leaves padded cells out of max and of the avg
  // count: MXNet's max and its avg with count_include_pad=False.
  for (const [shape, k, s, p] of [[[2, 3, 9, 9], 3, 2, 1], [[1, 2, 8, 11], 3, 1, 1], [[1, 4, 12, 10], 2, 2, 1]]) {
    const x = rand(shape);
    const xa = nd.array(x, { shape });
    const attrs = { kernel: [k, k], stride: [s, s], pad: [p, p] };
    assertClose(nd.Pooling(xa, attrs).toTypedArray(), tf2d(x, shape, 'maxPool', k, s, p), { ...tol, msg: `max ${shape}` });
    const avg = nd.Pooling(xa, { ...attrs, pool_type: 'avg', count_include_pad: false });
    assertClose(avg.toTypedArray(), tf2d(x, shape, 'avgPool', k, s, p), { ...tol, msg: `avg ${shape}` });
  }
});

test('Pooling avg with padding counted (the default) matches the window definition', () => {
  for (const [shape, k, s, p, full] of [
    [[2, 3, 9, 9], [3, 3], [2, 2], [1, 1], false],
    [[1, 2, 7, 10], [3, 2], [2, 3], [1, 1], true],
    [[1, 1, 5, 5], [2, 2], [2, 2], [0, 0], true],
    [[2, 2, 8, 6], [4, 4], [3, 3], [2, 1], true],
  ]) {
    const x = rand(shape);
    const y = nd.Pooling(nd.array(x, { shape }), {
      kernel: k, stride: s, pad: p, pool_type: 'avg', pooling_convention: full ? 'full' : 'valid',
    });
    const want = refPool2d(x, shape, { k, s, p, type: 'avg', full });
    assert.deepEqual(y.shape, want.shape);
    assertClose(y.toTypedArray(), want.data, { ...tol, msg: `${shape} ${full ? 'full' : 'valid'}` });
  }
});

test('Pooling full convention: max, sum and count_include_pad=False match the definition', () => {
  for (const [shape, k, s, p] of [[[2, 2, 10, 7], [3, 3], [2, 2], [0, 0]], [[1, 3, 6, 9], [2, 3], [3, 2], [1, 1]]]) {
    const x = rand(shape);
    const xa = nd.array(x, { shape });
    const base = { kernel: k, stride: s, pad: p, pooling_convention: 'full' };
    for (const [type, extra, ref] of [
      ['max', {}, {}], ['sum', {}, {}], ['avg', { count_include_pad: false }, { includePad: false }],
    ]) {
      const y = nd.Pooling(xa, { ...base, pool_type: type, ...extra });
      const want = refPool2d(x, shape, { k, s, p, type, full: true, ...ref });
      assert.deepEqual(y.shape, want.shape);
      assertClose(y.toTypedArray(), want.data, { ...tol, msg: `${type} ${shape}` });
    }
  }
});

test('Pooling lp: p=2 matches sqrt(k*k * tf.avgPool(x^2)); p=1 and p=3 match the definition', () => {
  const shape = [2, 3, 9, 8];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  const y2 = nd.Pooling(xa, { kernel: [3, 3], stride: [2, 2], pool_type: 'lp', p_value: 2 });
  const want2 = tfRun(() => {
    const t = tf.transpose(tf.tensor(x, shape), [0, 2, 3, 1]);
    const a = tf.mul(tf.avgPool(tf.square(t), 3, 2, 'valid'), 9);
    return tf.transpose(tf.sqrt(a), [0, 3, 1, 2]);
  });
  assertClose(y2.toTypedArray(), want2, { ...tol, msg: 'p=2' });
  for (const pv of [1, 3]) {
    const y = nd.Pooling(xa, { kernel: [2, 2], stride: [1, 1], pad: [1, 1], pool_type: 'lp', p_value: pv });
    const want = refPool2d(x, shape, { k: [2, 2], s: [1, 1], p: [1, 1], type: 'lp', pv });
    assertClose(y.toTypedArray(), want.data, { rtol: 1e-5, atol: 1e-5, msg: `p=${pv}` });
  }
});

test('Pooling 1-D matches tfjs 2-D pooling over a height of 1', () => {
  const shape = [2, 3, 17];
  const x = rand(shape);
  const xa = nd.array(x, { shape });
  for (const [k, s] of [[3, 2], [2, 1], [4, 4]]) {
    const as2d = [2, 3, 1, 17];
    const ymax = nd.Pooling(xa, { kernel: [k], stride: [s] });
    assert.deepEqual(ymax.shape, [2, 3, Math.floor((17 - k) / s) + 1]);
    assertClose(ymax.toTypedArray(), tf2d(x, as2d, 'maxPool', [1, k], [1, s]), { ...tol, msg: `max k${k}` });
    const yavg = nd.Pooling(xa, { kernel: k, stride: s, pool_type: 'avg' });
    assertClose(yavg.toTypedArray(), tf2d(x, as2d, 'avgPool', [1, k], [1, s]), { ...tol, msg: `avg k${k}` });
  }
  // 'same' (1-D only): ceil(17 / 2) = 9 outputs; windows run off the end and are clipped there
  const ys = nd.Pooling(xa, { kernel: [3], stride: [2], pooling_convention: 'same' });
  assert.deepEqual(ys.shape, [2, 3, 9]);
  const want = [];
  for (let r = 0; r < 6; r++) {
    for (let o = 0; o < 9; o++) {
      let m = -Infinity;
      for (let j = o * 2; j < Math.min(o * 2 + 3, 17); j++) m = Math.max(m, x[r * 17 + j]);
      want.push(m);
    }
  }
  assertClose(ys.toTypedArray(), want, tol);
});

test('Pooling 3-D max and avg match tf.maxPool3d / tf.avgPool3d', () => {
  for (const [shape, k, s] of [[[1, 2, 6, 7, 5], [2, 2, 2], [2, 2, 2]], [[2, 3, 5, 6, 7], [3, 2, 3], [1, 2, 2]]]) {
    const x = rand(shape);
    const xa = nd.array(x, { shape });
    assertClose(nd.Pooling(xa, { kernel: k, stride: s }).toTypedArray(), tf3d(x, shape, 'maxPool3d', k, s),
      { ...tol, msg: `max ${shape}` });
    assertClose(nd.Pooling(xa, { kernel: k, stride: s, pool_type: 'avg' }).toTypedArray(),
      tf3d(x, shape, 'avgPool3d', k, s), { ...tol, msg: `avg ${shape}` });
  }
});

test('Pooling global_pool matches tf.max / tf.mean / tf.sum over the spatial axes', () => {
  for (const shape of [[2, 3, 7, 9], [2, 4, 11], [1, 2, 3, 4, 5]]) {
    const x = rand(shape);
    const xa = nd.array(x, { shape });
    const axes = shape.slice(2).map((_, i) => i + 2);
    const outShape = [shape[0], shape[1], ...axes.map(() => 1)];
    for (const [type, fn] of [['max', 'max'], ['avg', 'mean'], ['sum', 'sum']]) {
      const y = nd.Pooling(xa, { global_pool: true, pool_type: type });
      assert.deepEqual(y.shape, outShape);
      assertClose(y.toTypedArray(), tfRun(() => tf[fn](tf.tensor(x, shape), axes)), { rtol: 1e-5, atol: 1e-5, msg: `${type} ${shape}` });
    }
  }
});

test('Pooling float64 matches the window definition in double precision', () => {
  const shape = [1, 2, 9, 9];
  const x = rand(shape);
  const y64 = nd.Pooling(nd.array(Float64Array.from(x), { shape, dtype: 'float64' }),
    { kernel: [3, 3], stride: [2, 2], pad: [1, 1], pool_type: 'avg' });
  assert.equal(y64.dtype, 'float64');
  const want = refPool2d(x, shape, { k: [3, 3], s: [2, 2], p: [1, 1], type: 'avg' });
  assertClose(y64.toTypedArray(), want.data, { rtol: 1e-12, atol: 1e-12 });
});

// ---- channel-last layouts vs tfjs's NHWC / NDHWC pooling -----------------------------------------
test('Pooling NHWC max / avg / sum match tf.maxPool / tf.avgPool on the same data', () => {
  for (const [shape, k, s] of [[[2, 8, 8, 3], [2, 2], [2, 2]], [[1, 11, 13, 4], [3, 3], [2, 2]], [[2, 9, 7, 5], [3, 2], [1, 2]]]) {
    const x = rand(shape);
    const xa = nd.array(x, { shape });
    const ymax = nd.Pooling(xa, { kernel: k, stride: s, layout: 'NHWC' });
    const [N, H, W, C] = shape;
    assert.deepEqual(ymax.shape, [N, Math.floor((H - k[0]) / s[0]) + 1, Math.floor((W - k[1]) / s[1]) + 1, C]);
    assertClose(ymax.toTypedArray(), tfRun(() => tf.maxPool(tf.tensor(x, shape), k, s, 'valid')), { ...tol, msg: `max ${shape}` });
    const yavg = nd.Pooling(xa, { kernel: k, stride: s, pool_type: 'avg', layout: 'NHWC' });
    assertClose(yavg.toTypedArray(), tfRun(() => tf.avgPool(tf.tensor(x, shape), k, s, 'valid')), { ...tol, msg: `avg ${shape}` });
    const ysum = nd._npx_pooling(xa, { kernel: k, stride: s, pool_type: 'sum', layout: 'NHWC' });
    assertClose(ysum.toTypedArray(), tfRun(() => tf.mul(tf.avgPool(tf.tensor(x, shape), k, s, 'valid'), k[0] * k[1])),
      { rtol: 1e-5, atol: 1e-5, msg: `sum ${shape}` });
  }
});

test('Pooling NHWC with padding: max and avg(count_include_pad=False) match tf; counted padding matches the definition', () => {
  const shape = [2, 9, 10, 3], x = rand(shape);
  const xa = nd.array(x, { shape });
  const attrs = { kernel: [3, 3], stride: [2, 2], pad: [1, 1], layout: 'NHWC' };
  assertClose(nd.Pooling(xa, attrs).toTypedArray(), tfRun(() => tf.maxPool(tf.tensor(x, shape), 3, 2, 1)), { ...tol, msg: 'max' });
  assertClose(nd.Pooling(xa, { ...attrs, pool_type: 'avg', count_include_pad: false }).toTypedArray(),
    tfRun(() => tf.avgPool(tf.tensor(x, shape), 3, 2, 1)), { ...tol, msg: 'avg, padding not counted' });
  // padding counted (the default): the loop definition on tf's channel-first transpose, moved back
  const cf = tfRun(() => tf.transpose(tf.tensor(x, shape), [0, 3, 1, 2]));
  const want = refPool2d(cf, [2, 3, 9, 10], { k: [3, 3], s: [2, 2], p: [1, 1], type: 'avg' });
  const y = nd.Pooling(xa, { ...attrs, pool_type: 'avg' });
  assert.deepEqual(y.shape, [2, 5, 5, 3]);
  assertClose(y.toTypedArray(), tfRun(() => tf.transpose(tf.tensor(Float32Array.from(want.data), want.shape), [0, 2, 3, 1])), { ...tol, msg: 'avg, padding counted' });
});

test('Pooling NWC (1-D) matches tf pooling over a height of 1; NDHWC matches tf.maxPool3d / tf.avgPool3d', () => {
  const shape = [2, 17, 3], x = rand(shape);
  const xa = nd.array(x, { shape });
  for (const [k, s] of [[3, 2], [2, 1], [4, 4]]) {
    const y = nd.Pooling(xa, { kernel: [k], stride: [s], layout: 'NWC' });
    assert.deepEqual(y.shape, [2, Math.floor((17 - k) / s) + 1, 3]);
    assertClose(y.toTypedArray(), tfRun(() => tf.maxPool(tf.tensor(x, [2, 1, 17, 3]), [1, k], [1, s], 'valid')), { ...tol, msg: `max k${k}` });
    const ya = nd.Pooling(xa, { kernel: [k], stride: [s], pool_type: 'avg', layout: 'NWC' });
    assertClose(ya.toTypedArray(), tfRun(() => tf.avgPool(tf.tensor(x, [2, 1, 17, 3]), [1, k], [1, s], 'valid')), { ...tol, msg: `avg k${k}` });
  }
  for (const [shape3, k, s] of [[[1, 6, 7, 5, 2], [2, 2, 2], [2, 2, 2]], [[2, 5, 6, 7, 3], [3, 2, 3], [1, 2, 2]]]) {
    const x3 = rand(shape3);
    const xa3 = nd.array(x3, { shape: shape3 });
    assertClose(nd.Pooling(xa3, { kernel: k, stride: s, layout: 'NDHWC' }).toTypedArray(),
      tfRun(() => tf.maxPool3d(tf.tensor(x3, shape3), k, s, 'valid')), { ...tol, msg: `max ${shape3}` });
    assertClose(nd.Pooling(xa3, { kernel: k, stride: s, pool_type: 'avg', layout: 'NDHWC' }).toTypedArray(),
      tfRun(() => tf.avgPool3d(tf.tensor(x3, shape3), k, s, 'valid')), { ...tol, msg: `avg ${shape3}` });
  }
});

test('Pooling global_pool channel-last matches tf.max / tf.mean / tf.sum over the spatial axes', () => {
  for (const [shape, layout] of [[[2, 7, 9, 3], 'NHWC'], [[2, 11, 4], 'NWC'], [[1, 3, 4, 5, 2], 'NDHWC']]) {
    const x = rand(shape);
    const xa = nd.array(x, { shape });
    const axes = shape.slice(1, -1).map((_, i) => i + 1);
    for (const [type, fn] of [['max', 'max'], ['avg', 'mean'], ['sum', 'sum']]) {
      const y = nd.Pooling(xa, { global_pool: true, pool_type: type, layout });
      assert.deepEqual(y.shape, [shape[0], ...axes.map(() => 1), shape[shape.length - 1]]);
      assertClose(y.toTypedArray(), tfRun(() => tf[fn](tf.tensor(x, shape), axes)), { rtol: 1e-5, atol: 1e-5, msg: `${type} ${layout}` });
    }
  }
});

test('Pooling NHWC float64 and float16 match tf.maxPool (float32 oracle)', () => {
  const shape = [1, 7, 6, 3], x = rand(shape);
  const want = tfRun(() => tf.maxPool(tf.tensor(x, shape), 2, 2, 'valid'));
  const y64 = nd.Pooling(nd.array(Float64Array.from(x), { shape, dtype: 'float64' }), { kernel: [2, 2], stride: [2, 2], layout: 'NHWC' });
  assert.equal(y64.dtype, 'float64');
  assertClose(y64.toTypedArray(), want, tol);
  const y16 = nd.Pooling(nd.array(x, { shape }).astype('float16'), { kernel: [2, 2], stride: [2, 2], layout: 'NHWC' });
  assert.equal(y16.dtype, 'float16');
  assertClose(y16.astype('float32').toTypedArray(), want, { rtol: 1e-3, atol: 1e-3 });
});

test('Pooling errors name the op and the problem; the next call works', () => {
  const x = nd.array(rand([1, 1, 5, 5]), { shape: [1, 1, 5, 5] });
  assert.throws(() => nd.Pooling(x, { kernel: [7, 7] }), (e) => e instanceof mx.MXNetError &&
    /Pooling/.test(e.message) && /kernel size 7 exceeds input size 5/.test(e.message));
  assert.throws(() => nd.Pooling(x, { kernel: [2, 2], layout: 'NWC' }),
    (e) => e instanceof mx.MXNetError && /Pooling/.test(e.message) && /layout NWC does not match 4-D data .*expected NCHW or NHWC/.test(e.message));
  assert.throws(() => nd.Pooling(x, { kernel: [2, 2], layout: 'NDHWC' }),
    (e) => e instanceof mx.MXNetError && /Pooling/.test(e.message) && /NDHWC/.test(e.message));
  assert.throws(() => nd.Pooling(x, { kernel: [2, 2], pool_type: 'lp' }), /Pooling.*p_value/);
  assert.throws(() => nd.Pooling(x, { kernel: [2] }), /Pooling.*data must be 3-D/);
  assert.throws(() => nd.Pooling(x, { kernel: [2, 2], stride: [0, 1] }), /Pooling.*stride\[0\] = 0/);
  const y = nd.Pooling(x, { kernel: [5, 5] });
  assert.deepEqual(y.shape, [1, 1, 1, 1]);
});
