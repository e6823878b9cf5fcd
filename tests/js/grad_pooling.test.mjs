// Gradients of Pooling against central finite differences in float64 (max / avg with and without
// count_include_pad / sum / lp, pooling_convention valid / full / same, global_pool, pad, 1-D / 2-D
// / 3-D, channel-last layouts), MXNet's first-max rule on ties (hand-worked), and TF.js's
// tf.maxPool / tf.avgPool gradients in float32.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assertClose, assert, rng, tf, nd, autograd } from './grad_check.mjs';

const pool = (shape, attrs, opts) => checkGrad('Pooling', [{ shape }], attrs, opts);

test('max pooling: windows, stride, pad, full convention, 1-D / 3-D, global (finite differences)', () => {
  pool([2, 3, 7, 6], { kernel: [2, 2], stride: [2, 2] });
  pool([2, 2, 7, 8], { kernel: [3, 2], stride: [2, 3], pad: [1, 1] });
  pool([1, 3, 7, 6], { kernel: [3, 3], stride: [2, 2], pooling_convention: 'full' });
  pool([2, 3, 9], { kernel: [3], stride: [2], pad: [1] });
  pool([2, 3, 9], { kernel: [2], stride: [2], pooling_convention: 'same' });
  pool([1, 2, 4, 5, 3], { kernel: [2, 3, 2], stride: [2, 1, 1], pad: [0, 1, 0] });
  pool([2, 3, 5, 4], { kernel: [1, 1], global_pool: true });
  pool([2, 7, 6, 3], { kernel: [3, 3], stride: [2, 2], pad: [1, 1], layout: 'NHWC' });
});

test('avg (count_include_pad true / false), sum and lp pooling (finite differences)', () => {
  for (const cip of [true, false]) {
    pool([2, 3, 7, 6], { kernel: [3, 3], stride: [2, 2], pad: [1, 1], pool_type: 'avg', count_include_pad: cip });
    pool([1, 2, 7, 8], { kernel: [3, 2], stride: [2, 3], pad: [1, 1], pool_type: 'avg', pooling_convention: 'full', count_include_pad: cip });
    pool([2, 2, 9], { kernel: [4], stride: [3], pad: [2], pool_type: 'avg', count_include_pad: cip });
  }
  pool([1, 2, 4, 5, 3], { kernel: [2, 2, 2], stride: [1, 2, 1], pool_type: 'avg' });
  pool([2, 3, 5, 4], { kernel: [1, 1], global_pool: true, pool_type: 'avg' });
  pool([2, 3, 9], { kernel: [3], stride: [2], pooling_convention: 'same', pool_type: 'avg' });
  pool([2, 3, 7, 6], { kernel: [2, 3], stride: [2, 2], pad: [1, 0], pool_type: 'sum' });
  pool([2, 5, 4, 3], { kernel: [2, 2], pool_type: 'sum', layout: 'NHWC' });
  pool([2, 5, 3], { kernel: [2], stride: [1], pool_type: 'avg', layout: 'NWC', count_include_pad: false });
  // lp: p = 1 (the plain sum), 2 and 3; positive data keeps the p = 3 root away from 0
  pool([2, 3, 6, 5], { kernel: [2, 2], stride: [2, 1], pool_type: 'lp', p_value: 1 });
  pool([2, 3, 6, 5], { kernel: [3, 2], stride: [1, 2], pad: [1, 0], pool_type: 'lp', p_value: 2 });
  checkGrad('Pooling', [{ shape: [2, 3, 6, 5], low: 0.2, high: 1 }], { kernel: [2, 3], pool_type: 'lp', p_value: 3 });
  checkGrad('Pooling', [{ shape: [2, 3, 4, 4], low: 0.2, high: 1 }], { global_pool: true, kernel: [1, 1], pool_type: 'lp', p_value: 2 });
});

test('max pooling gives the whole gradient to the first maximum of a window (ties, MXNet unpool_max)', () => {
  // one 2x3 window per row pair: ties at (0,1),(1,0),(1,2) -> the first in row-major order wins
  const x = nd.array([[[[0, 4, 1], [4, 2, 4]]]]);
  x.attachGrad();
  const y = autograd.record(() => nd.Pooling(x, { kernel: [2, 3], pool_type: 'max' }));
  y.backward(nd.array([[[[2.5]]]]));
  assertClose(x.grad.toTypedArray(), [0, 2.5, 0, 0, 0, 0]);
  // overlapping windows (stride 1): each window's first max gets its own head value
  const z = nd.array([[[[1, 3, 3, 2]]]]);
  z.attachGrad();
  const w = autograd.record(() => nd.Pooling(z, { kernel: [1, 2], stride: [1, 1], pool_type: 'max' }));
  w.backward(nd.array([[[[1, 10, 100]]]]));
  assertClose(z.grad.toTypedArray(), [0, 11, 100, 0]);
});

test('2x2 stride-2 max pooling: first max on ties, uncovered rows / columns get zero (float32 SIMD and float64)', () => {
  // four windows with ties: all equal -> top-left; top-right = bottom-left -> top-right; bottom-left =
  // bottom-right -> bottom-left; only bottom-right; column 8 and row 2 are in no window
  const rows = [[7, 7, 1, 6, 0, 1, -1, -2, 9], [7, 7, 6, 2, 3, 3, -3, 0, 9], [9, 9, 9, 9, 9, 9, 9, 9, 9]];
  const want = [[1, 0, 0, 2, 0, 0, 0, 0, 0], [0, 0, 0, 0, 3, 0, 0, 4, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]];
  for (const dtype of ['float32', 'float64']) {
    const x = nd.array([[rows]], { dtype });
    x.attachGrad();
    const y = autograd.record(() => nd.Pooling(x, { kernel: [2, 2], stride: [2, 2], pool_type: 'max' }));
    assertClose(y.toTypedArray(), [7, 6, 3, 0]);
    y.backward(nd.array([[[[1, 2, 3, 4]]]], { dtype }));
    assertClose(x.grad.toTypedArray(), want.flat(), { msg: dtype });
  }
  // 3x3 stride 3 windows (the scalar loop of the same path) and avg
  const z = nd.array(Array.from({ length: 7 * 7 }, (_, i) => ((i * 5) % 11) - 5)).reshape([1, 1, 7, 7]);
  for (const pool_type of ['max', 'avg', 'sum']) {
    const attrs = { kernel: [3, 3], stride: [3, 3], pool_type };
    const g32 = ourGrads((a) => nd.Pooling(a, attrs), [{ shape: [1, 1, 7, 7], data: z.toTypedArray() }],
      { shape: [1, 1, 2, 2], data: [1, -2, 3, 0.5] })[0];
    const a64 = z.astype('float64');
    a64.attachGrad();
    const y = autograd.record(() => nd.Pooling(a64, attrs));
    y.backward(nd.array([[[[1, -2], [3, 0.5]]]], { dtype: 'float64' }));
    assertClose(g32, a64.grad.toTypedArray(), { rtol: 1e-6, atol: 1e-7, msg: pool_type });
  }
});

// ---- TF.js -----------------------------------------------------------------------------------------
const nchw = (t) => tf.transpose(t, [0, 2, 3, 1]);
const toNchw = (t) => tf.transpose(t, [0, 3, 1, 2]);
const rand = (r, shape) => ({ shape, data: r.uniform(shape.reduce((a, b) => a * b, 1)) });

test('max / avg pooling match tf.maxPool / tf.avgPool gradients', () => {
  const r = rng(21);
  const cases = [
    // [data shape, kernel, stride, MXNet pad, TF padding]: TF's 'same' with an odd kernel and stride 1 is a
    // symmetric pad of k/2 that avg pooling does not count (count_include_pad=False)
    [[2, 3, 8, 6], [2, 2], [2, 2], [0, 0], 'valid'],
    [[2, 3, 9, 7], [3, 3], [2, 2], [0, 0], 'valid'],
    [[1, 4, 7, 6], [3, 3], [1, 1], [1, 1], 'same'],
    [[2, 20, 24, 24], [2, 2], [2, 2], [0, 0], 'valid'], // LeNet's pooling
  ];
  for (const [xs, kernel, stride, pad, padding] of cases) {
    const x = rand(r, xs);
    // (TF.js 4.22's avgPool gradient divides by the full kernel size even where its forward divided by the
    // in-range count, so 'same' avg pooling is compared by finite differences only)
    for (const type of padding === 'same' ? ['max'] : ['max', 'avg']) {
      const y = nd.Pooling(nd.array(Array.from(x.data)).reshape(xs), { kernel, stride, pad, pool_type: type });
      const dy = rand(r, y.shape);
      const ours = ourGrads((a) => nd.Pooling(a, { kernel, stride, pad, pool_type: type, count_include_pad: false }), [x], dy);
      const theirs = tfGrads((a) => toNchw((type === 'max' ? tf.maxPool : tf.avgPool)(nchw(a), kernel, stride, padding)), [x], dy);
      assertClose(ours[0], theirs[0], { rtol: 1e-5, atol: 1e-5, msg: `${type} ${xs} k${kernel} s${stride} ${padding}` });
    }
  }
});

test('float32, float16 and NHWC gradients agree with the float64 NCHW one', () => {
  const r = rng(22);
  const x = rand(r, [2, 3, 7, 6]);
  for (const attrs of [{ kernel: [3, 3], stride: [2, 2], pad: [1, 1], pool_type: 'max' },
    { kernel: [2, 3], stride: [2, 1], pad: [1, 1], pool_type: 'avg', pooling_convention: 'full' }]) {
    const run = (dtype, nhwc = false) => {
      let a = nd.array(Array.from(x.data), { dtype }).reshape(x.shape);
      if (nhwc) a = a.transpose([0, 2, 3, 1]);
      a.attachGrad();
      const y = autograd.record(() => nd.Pooling(a, nhwc ? { ...attrs, layout: 'NHWC' } : attrs));
      // the head in NCHW order (values multiples of 1/4, exact in float16), transposed for NHWC
      const ys = nhwc ? [y.shape[0], y.shape[3], y.shape[1], y.shape[2]] : y.shape;
      let head = nd.array(Array.from({ length: y.size }, (_, i) => ((i * 7) % 5) / 4), { dtype }).reshape(ys);
      if (nhwc) head = head.transpose([0, 2, 3, 1]);
      y.backward(head);
      return Float64Array.from((nhwc ? a.grad.transpose([0, 3, 1, 2]) : a.grad).toTypedArray());
    };
    const ref = run('float64');
    assertClose(run('float32'), ref, { rtol: 1e-6, atol: 1e-6 });
    assertClose(run('float32', true), ref, { rtol: 1e-6, atol: 1e-6 });
    assertClose(run('float64', true), ref, { rtol: 1e-12, atol: 1e-12 });
    // float16: the data is rounded to half (max positions stay), head values are exact
    assertClose(run('float16'), ref, { rtol: 2e-3, atol: 2e-3 });
    assertClose(run('float16', true), ref, { rtol: 2e-3, atol: 2e-3 });
  }
});

test('float32 2x2 stride-2 max pooling (its SIMD forward path) equals the float64 reference, valid and full', () => {
  const r = rng(23);
  for (const [shape, conv] of [[[2, 3, 7, 9], 'valid'], [[2, 3, 7, 9], 'full'], [[1, 2, 16, 20], 'valid'], [[1, 1, 5, 3], 'full']]) {
    const data = Array.from(r.uniform(shape.reduce((a, b) => a * b, 1)));
    const attrs = { kernel: [2, 2], stride: [2, 2], pool_type: 'max', pooling_convention: conv };
    const y32 = nd.Pooling(nd.array(data).reshape(shape), attrs);
    const y64 = nd.Pooling(nd.array(data, { dtype: 'float64' }).reshape(shape), attrs);
    assert.deepEqual(y32.shape, y64.shape);
    assertClose(y32.toTypedArray(), y64.toTypedArray(), { rtol: 0, atol: 0, msg: `${shape} ${conv}` });
  }
});
