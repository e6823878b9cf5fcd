// The small operators of real GluonCV / GluonNLP exports (csrc/ops/contrib_misc.c) against MXNet
// 1.9.1's own unit-test references (test_operator.py: test_adaptive_avg_pool_op,
// test_bilinear_resize_op, test_shape_array, test_size_array, test_broadcast, test_arange_like,
// test_div_sqrt_dim, test_special_functions_using_scipy) rewritten as float64 JS here, MXNet's
// documented examples and hand-worked values, tfjs-backend-cpu's resizeBilinear for the resize
// modes it shares, erfinv values from mpmath (50 digits, written down), and gradients by finite
// differences (tests/js/grad_check.mjs).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose, oracle } from './oracle.mjs';
import { checkGrad } from './grad_check.mjs';

const { nd, sym, autograd } = mx;
const size = (s) => s.reduce((a, b) => a * b, 1);
const arr = (data, shape, dtype = 'float32') => nd.array(Array.from(data), { dtype }).reshape(shape);
const flat = (a) => Float64Array.from(a.toTypedArray(), Number);
const isErr = (re) => (e) => e instanceof mx.MXNetError && re.test(e.message);

// ---- _contrib_AdaptiveAvgPooling2D ------------------------------------------------------------------
// test_adaptive_avg_pool_op's py_adaptive_avg_pool: output cell (oh, ow) averages rows
// [floor(oh*H/OH), ceil((oh+1)*H/OH)) and the matching columns.
function adaptiveRef(x, [B, C, H, W], OH, OW) {
  const y = new Float64Array(B * C * OH * OW);
  for (let p = 0; p < B * C; p++) {
    for (let oh = 0; oh < OH; oh++) {
      const hs = Math.floor((oh * H) / OH), he = Math.ceil(((oh + 1) * H) / OH);
      for (let ow = 0; ow < OW; ow++) {
        const ws = Math.floor((ow * W) / OW), we = Math.ceil(((ow + 1) * W) / OW);
        let s = 0;
        for (let i = hs; i < he; i++) for (let j = ws; j < we; j++) s += x[p * H * W + i * W + j];
        y[p * OH * OW + oh * OW + ow] = s / (he - hs) / (we - ws);
      }
    }
  }
  return y;
}

test('AdaptiveAvgPooling2D: every output size 1..10 of a 10x10 input and odd shapes vs the numpy reference', () => {
  const r = rng(3);
  const shape = [2, 2, 10, 10];
  const xv = r.uniform(size(shape), 0, 1);
  const x = arr(xv, shape);
  for (let i = 1; i <= 10; i++) {
    const y1 = nd._contrib_AdaptiveAvgPooling2D(x, { output_size: i });
    assertClose(flat(y1), adaptiveRef(xv, shape, i, i), { msg: `${i}` });
    for (const j of [1, 3, 7, 10]) {
      const y = nd._contrib_AdaptiveAvgPooling2D(x, { output_size: [i, j] });
      assert.deepEqual(y.shape, [2, 2, i, j]);
      assertClose(flat(y), adaptiveRef(xv, shape, i, j), { msg: `${i}x${j}` });
    }
  }
  // odd shapes, output larger than the input (overlapping windows), float64
  for (const [s, oh, ow] of [[[1, 3, 7, 5], 3, 4], [[2, 1, 5, 7], 9, 11], [[1, 2, 13, 3], 4, 2]]) {
    const v = r.uniform(size(s), -2, 2);
    assertClose(flat(nd._contrib_AdaptiveAvgPooling2D(arr(v, s, 'float64'), { output_size: [oh, ow] })),
      adaptiveRef(v, s, oh, ow), { rtol: 1e-12, atol: 1e-14 });
  }
});

test('AdaptiveAvgPooling2D: output_size () / one value / two values / positional, hand-worked windows', () => {
  // 1x1x3x3 holding 0..8; output 2x2: windows rows [0,2), [1,3) and the same columns
  const x = nd.arange(0, 9).reshape([1, 1, 3, 3]);
  assert.deepEqual(nd._contrib_AdaptiveAvgPooling2D(x, { output_size: 2 }).toArray(), [[[[2, 3], [5, 6]]]]);
  assert.deepEqual(nd._contrib_AdaptiveAvgPooling2D(x).toArray(), [[[[4]]]]); // () -> 1x1, the mean
  assert.deepEqual(nd._contrib_AdaptiveAvgPooling2D(x, [1, 3]).toArray(), [[[[3, 4, 5]]]]);
  // more than two values: 1x1
  assert.deepEqual(nd._contrib_AdaptiveAvgPooling2D(x, { output_size: [2, 2, 2] }).shape, [1, 1, 1, 1]);
  const h = nd._contrib_AdaptiveAvgPooling2D(x.astype('float16'), { output_size: 2 });
  assert.equal(h.dtype, 'float16');
  assert.deepEqual(h.toArray(), [[[[2, 3], [5, 6]]]]);
  assert.throws(() => nd._contrib_AdaptiveAvgPooling2D(nd.zeros([2, 3, 4])), isErr(/4-D/));
  assert.throws(() => nd._contrib_AdaptiveAvgPooling2D(nd.zeros([1, 1, 4, 4], { dtype: 'int32' })),
    isErr(/floating point/));
  // the graph form: the exported SE blocks' attribute output_size='1'
  const s = sym._contrib_AdaptiveAvgPooling2D(sym.var('x'), { output_size: 1 });
  assert.deepEqual(s.inferShape({ x: [4, 64, 7, 9] })[1], [[4, 64, 1, 1]]);
});

test('AdaptiveAvgPooling2D: gradient (each window spreads ograd / its size), finite differences', () => {
  const x = nd.arange(0, 9).reshape([1, 1, 3, 3]);
  x.attachGrad();
  autograd.record(() => nd._contrib_AdaptiveAvgPooling2D(x, { output_size: 2 }))
    .backward(nd.array([[[[1, 2], [3, 4]]]]));
  // every window is 2x2 (weight 1/4); the centre cell is in all four
  assert.deepEqual(x.grad.toArray(), [[[[0.25, 0.75, 0.5], [1, 2.5, 1.5], [0.75, 1.75, 1]]]]);
  checkGrad('_contrib_AdaptiveAvgPooling2D', [{ shape: [2, 2, 5, 7] }], { output_size: [3, 4] });
  checkGrad('_contrib_AdaptiveAvgPooling2D', [{ shape: [1, 3, 4, 3] }], { output_size: [6, 5] });
});

// ---- _contrib_BilinearResize2D ----------------------------------------------------------------------
// test_bilinear_resize_op's py_bilinear_resize (align_corners) and, for align_corners=False, the
// half-pixel source index of MXNet's area_pixel_compute_source_index (scale * (i + 0.5) - 0.5,
// negative clamped to 0; scale in / out); same size is a copy.
function srcIndex(o, inS, outS, align) {
  if (align) return o * (outS > 1 ? (inS - 1) / (outS - 1) : 0);
  return Math.max((outS > 1 ? inS / outS : 0) * (o + 0.5) - 0.5, 0);
}
function resizeRef(x, [B, C, H, W], OH, OW, align = true) {
  if (OH === H && OW === W) return Float64Array.from(x);
  const y = new Float64Array(B * C * OH * OW);
  for (let h2 = 0; h2 < OH; h2++) {
    const h1r = srcIndex(h2, H, OH, align), h1 = Math.floor(h1r), h1l = h1r - h1, h1p = h1 < H - 1 ? 1 : 0;
    for (let w2 = 0; w2 < OW; w2++) {
      const w1r = srcIndex(w2, W, OW, align), w1 = Math.floor(w1r), w1l = w1r - w1, w1p = w1 < W - 1 ? 1 : 0;
      for (let p = 0; p < B * C; p++) {
        const at = (i, j) => x[p * H * W + i * W + j];
        y[p * OH * OW + h2 * OW + w2] = (1 - h1l) * ((1 - w1l) * at(h1, w1) + w1l * at(h1, w1 + w1p))
          + h1l * ((1 - w1l) * at(h1 + h1p, w1) + w1l * at(h1 + h1p, w1 + w1p));
      }
    }
  }
  return y;
}
// py_bilinear_resize_backward: the four weights of each output cell carry its gradient back
function resizeBackRef(g, [B, C, H, W], OH, OW, align = true) {
  const dx = new Float64Array(B * C * H * W);
  if (OH === H && OW === W) return Float64Array.from(g);
  for (let h2 = 0; h2 < OH; h2++) {
    const h1r = srcIndex(h2, H, OH, align), h1 = Math.floor(h1r), h1l = h1r - h1, h1p = h1 < H - 1 ? 1 : 0;
    for (let w2 = 0; w2 < OW; w2++) {
      const w1r = srcIndex(w2, W, OW, align), w1 = Math.floor(w1r), w1l = w1r - w1, w1p = w1 < W - 1 ? 1 : 0;
      for (let p = 0; p < B * C; p++) {
        const v = g[p * OH * OW + h2 * OW + w2], at = (i, j) => p * H * W + i * W + j;
        dx[at(h1, w1)] += (1 - h1l) * (1 - w1l) * v;
        dx[at(h1, w1 + w1p)] += (1 - h1l) * w1l * v;
        dx[at(h1 + h1p, w1)] += h1l * (1 - w1l) * v;
        dx[at(h1 + h1p, w1 + w1p)] += h1l * w1l * v;
      }
    }
  }
  return dx;
}
const tfResize = (x, [B, C, H, W], OH, OW, alignCorners, halfPixelCenters) => oracle((tf) =>
  tf.image.resizeBilinear(tf.tensor4d(Array.from(x), [B, C, H, W]).transpose([0, 2, 3, 1]), [OH, OW], alignCorners,
    halfPixelCenters).transpose([0, 3, 1, 2]));

test('BilinearResize2D (size): test_bilinear_resize_op\'s sizes and scales vs the numpy reference and tf', () => {
  const r = rng(5);
  const shape = [2, 2, 10, 10];
  const xv = r.uniform(size(shape), 0, 1);
  const x = arr(xv, shape);
  for (const [h, w] of [[5, 5], [10, 10], [15, 15], [3, 7], [13, 17]]) {
    const want = resizeRef(xv, shape, h, w);
    const y = nd._contrib_BilinearResize2D(x, { height: h, width: w });
    assert.deepEqual(y.shape, [2, 2, h, w]);
    assertClose(flat(y), want, { msg: `${h}x${w}` });
    assertClose(flat(y), tfResize(xv, shape, h, w, true, false), { msg: `tf ${h}x${w}` });
    assertClose(flat(nd._contrib_BilinearResize2D(x, { scale_height: h / 10, scale_width: w / 10 })), want);
  }
});

test('BilinearResize2D: align_corners True / False, MXNet\'s hand values, tf.image.resizeBilinear on odd shapes', () => {
  // check_bilinear_resize_align_corners_op: a 3x2 image to 6x4
  const x = nd.array([64, 32, 32, 64, 50, 100]).reshape([1, 1, 3, 2]);
  const noAlign = [64, 56, 40, 32, 56, 52, 44, 40, 40, 44, 52, 56, 36.5, 45.625, 63.875, 73, 45.5, 56.875, 79.625, 91,
    50, 62.5, 87.5, 100];
  const align = [64, 53.333, 42.667, 32, 51.2, 49.067, 46.933, 44.8, 38.4, 44.8, 51.2, 57.6, 35.6, 47.467, 59.333, 71.2,
    42.8, 57.067, 71.333, 85.6, 50, 66.667, 83.333, 100];
  const at = (ac) => flat(nd._contrib_BilinearResize2D(x, { height: 6, width: 4, mode: 'size', align_corners: ac }));
  assertClose(at(false), noAlign, { atol: 1e-3 });
  assertClose(at(true), align, { atol: 1e-3 });
  // align_corners=False is tf's half-pixel centres; True is tf's alignCorners (output sizes > 1)
  const r = rng(6);
  const odd = [[[1, 3, 5, 7], 9, 4], [[2, 2, 7, 3], 3, 8], [[1, 1, 4, 9], 11, 2], [[1, 2, 6, 6], 6, 13]];
  for (const [s, oh, ow] of odd) {
    const v = r.uniform(size(s), -1, 1);
    const xv = arr(v, s);
    for (const ac of [true, false]) {
      const y = flat(nd._contrib_BilinearResize2D(xv, { height: oh, width: ow, align_corners: ac }));
      assertClose(y, tfResize(v, s, oh, ow, ac, !ac), { msg: `tf ${s} -> ${oh}x${ow} align ${ac}` });
      assertClose(y, resizeRef(v, s, oh, ow, ac), { msg: `ref ${s} -> ${oh}x${ow} align ${ac}` });
    }
  }
  // float64 and float16 inputs keep their dtype
  const v = r.uniform(2 * 5 * 4, 0, 1);
  assertClose(flat(nd._contrib_BilinearResize2D(arr(v, [1, 2, 5, 4], 'float64'), { height: 7, width: 3 })),
    resizeRef(v, [1, 2, 5, 4], 7, 3), { rtol: 1e-6 });
  const h = nd._contrib_BilinearResize2D(arr(v, [1, 2, 5, 4], 'float16'), { height: 7, width: 3 });
  assert.equal(h.dtype, 'float16');
  assertClose(flat(h), resizeRef(v, [1, 2, 5, 4], 7, 3), { rtol: 2e-3, atol: 2e-3 });
});

test('BilinearResize2D: odd_scale, like, the even/odd modes (check_bilinear_resize_modes_op\'s shapes, values)', () => {
  const r = rng(7);
  const newSize = (mode, h, w, sh, sw, like) => {
    switch (mode) {
      case 'odd_scale': return [h % 2 === 0 ? Math.trunc(h * sh) : Math.trunc((h - 1) * sh) + 1,
        w % 2 === 0 ? Math.trunc(w * sw) : Math.trunc((w - 1) * sw) + 1];
      case 'to_even_down': return [h % 2 === 0 ? h : h - 1, w % 2 === 0 ? w : w - 1];
      case 'to_even_up': return [h % 2 === 0 ? h : h + 1, w % 2 === 0 ? w : w + 1];
      case 'to_odd_down': return [h % 2 === 1 ? h : h - 1, w % 2 === 1 ? w : w - 1];
      case 'to_odd_up': return [h % 2 === 1 ? h : h + 1, w % 2 === 1 ? w : w + 1];
      default: return [like[2], like[3]];
    }
  };
  const cases = [];
  for (const s of [[2, 2, 20, 20], [2, 2, 21, 21], [1, 2, 7, 10]]) {
    for (const [sh, sw] of [[0.5, 0.5], [5, 10], [0.1, 0.2]]) {
      cases.push([s, 'odd_scale', { scale_height: sh, scale_width: sw }, sh, sw]);
    }
    for (const m of ['to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up']) cases.push([s, m, { mode: m }]);
  }
  for (const [s, mode, attrs, sh, sw] of cases) {
    const v = r.uniform(size(s), 0, 1);
    const [oh, ow] = newSize(mode, s[2], s[3], sh, sw);
    const y = nd._contrib_BilinearResize2D(arr(v, s), { mode, ...attrs });
    assert.deepEqual(y.shape, [s[0], s[1], oh, ow], `${mode} ${s}`);
    assertClose(flat(y), resizeRef(v, s, oh, ow), { rtol: 1e-5, atol: 1e-6, msg: `${mode} ${s}` });
    // the backward pass of ones, as the MXNet test
    const x = arr(v, s);
    x.attachGrad();
    autograd.record(() => nd._contrib_BilinearResize2D(x, { mode, ...attrs })).backward();
    assertClose(flat(x.grad), resizeBackRef(new Float64Array(s[0] * s[1] * oh * ow).fill(1), s, oh, ow),
      { rtol: 1e-5, atol: 1e-5, msg: `backward ${mode} ${s}` });
  }
  // like: the second input's H and W; its gradient is zero
  const likes = [[[2, 2, 21, 21], [2, 2, 10, 10]], [[2, 2, 10, 10], [2, 2, 21, 21]], [[1, 3, 5, 4], [7, 1, 6, 9]]];
  for (const [s0, s1] of likes) {
    const v = r.uniform(size(s0), 0, 1);
    const x = arr(v, s0), like = nd.ones(s1);
    x.attachGrad();
    like.attachGrad();
    const y = autograd.record(() => nd._contrib_BilinearResize2D(x, like, { mode: 'like' }));
    assert.deepEqual(y.shape, [s0[0], s0[1], s1[2], s1[3]]);
    assertClose(flat(y), resizeRef(v, s0, s1[2], s1[3]), { msg: `like ${s0} ${s1}` });
    y.backward();
    const ones = new Float64Array(y.size).fill(1);
    assertClose(flat(x.grad), resizeBackRef(ones, s0, s1[2], s1[3]), { rtol: 1e-5, atol: 1e-5 });
    assert.ok(flat(like.grad).every((g) => g === 0));
  }
});

test('BilinearResize2D: inputs listed by mode, attribute rules and errors', () => {
  assert.deepEqual(sym._contrib_BilinearResize2D(sym.var('a'), { height: 3, width: 4 }).listArguments(), ['a']);
  const s = sym._contrib_BilinearResize2D(sym.var('a'), sym.var('b'), { mode: 'like' });
  assert.deepEqual(s.listArguments(), ['a', 'b']);
  assert.deepEqual(s.inferShape({ a: [1, 3, 8, 8], b: [1, 1, 5, 6] })[1], [[1, 3, 5, 6]]);
  const x = nd.zeros([1, 1, 5, 7]);
  // MXNet's size mode takes the width from scale_width only when scale_height is given
  assert.deepEqual(nd._contrib_BilinearResize2D(x, { width: 3, scale_width: 2 }).shape, [1, 1, 1, 3]);
  assert.deepEqual(nd._contrib_BilinearResize2D(x, { scale_height: 2, scale_width: 0.5 }).shape, [1, 1, 10, 3]);
  assert.deepEqual(nd._contrib_BilinearResize2D(x).shape, [1, 1, 1, 1]); // height and width default to 1
  assert.throws(() => nd._contrib_BilinearResize2D(x, { scale_height: 2 }), isErr(/scale_width/));
  assert.throws(() => nd._contrib_BilinearResize2D(x, { mode: 'odd_scale', scale_height: 2 }), isErr(/odd_scale/));
  assert.throws(() => nd._contrib_BilinearResize2D(x, { height: 0, width: 2 }),
    isErr(/height should be greater equal to 1/));
  assert.throws(() => nd._contrib_BilinearResize2D(x, { mode: 'nearest' }), mx.MXNetError);
  assert.throws(() => nd._contrib_BilinearResize2D(nd.zeros([5, 7]), { height: 2, width: 2 }), isErr(/4-D/));
  assert.throws(() => nd._contrib_BilinearResize2D(x, { mode: 'like' }), mx.MXNetError);
});

test('BilinearResize2D: gradients by finite differences (align_corners both ways, like) and against tf', () => {
  checkGrad('_contrib_BilinearResize2D', [{ shape: [1, 2, 4, 5] }], { height: 7, width: 3 });
  checkGrad('_contrib_BilinearResize2D', [{ shape: [2, 1, 5, 3] }], { height: 3, width: 6, align_corners: false });
  checkGrad('_contrib_BilinearResize2D', [{ shape: [1, 1, 3, 4] }, nd.zeros([1, 1, 6, 2], { dtype: 'float64' })],
    { mode: 'like' }, { wrt: [0] });
  checkGrad('_contrib_BilinearResize2D', [{ shape: [1, 2, 5, 5] }], { mode: 'to_even_up' });
});

// ---- shape_array / size_array ------------------------------------------------------------------------
test('shape_array, size_array: int64 shape and size, ranks 1-5, zero gradient (test_shape_array/size_array)', () => {
  const r = rng(8);
  for (let nd1 = 1; nd1 <= 5; nd1++) {
    const shape = Array.from(r.uniform(nd1, 1, 5), (v) => Math.floor(v));
    const x = nd.ones(shape);
    const s = nd.shape_array(x), z = nd.size_array(x);
    assert.equal(s.dtype, 'int64');
    assert.equal(z.dtype, 'int64');
    assert.deepEqual(s.toArray(), shape);
    assert.deepEqual(z.shape, [1]);
    assert.deepEqual(z.toArray(), [size(shape)]);
    x.attachGrad();
    autograd.record(() => nd.shape_array(x)).backward(nd.ones([nd1], { dtype: 'int64' }));
    assert.ok(flat(x.grad).every((g) => g === 0));
  }
  assert.deepEqual(nd._npx_shape_array(nd.zeros([3, 0, 2], { dtype: 'int8' })).toArray(), [3, 0, 2]);
  assert.deepEqual(nd.size_array(nd.zeros([4, 0])).toArray(), [0]);
  const s = sym.shape_array(sym.var('x'));
  assert.deepEqual(s.inferShape({ x: [2, 3, 4] })[1], [[3]]);
  assert.deepEqual(s.inferType({ x: 'float16' })[1], ['int64']);
});

// ---- broadcast_axis ---------------------------------------------------------------------------------
test('broadcast_axis / broadcast_axes: MXNet\'s examples and test_broadcast\'s random shapes, gradient = sum', () => {
  const x = nd.array([[[1], [2]]]); // (1, 2, 1)
  assert.deepEqual(nd.broadcast_axis(x, { axis: 2, size: 3 }).toArray(), [[[1, 1, 1], [2, 2, 2]]]);
  assert.deepEqual(nd.broadcast_axes(x, { axis: [0, 2], size: [2, 3] }).toArray(),
    [[[1, 1, 1], [2, 2, 2]], [[1, 1, 1], [2, 2, 2]]]);
  assert.deepEqual(nd.broadcast_axis(x).toArray(), x.toArray()); // no axes: a copy
  const r = rng(9);
  for (let t = 0; t < 30; t++) {
    const ndim = 1 + Math.floor(r.uniform(1, 0, 5)[0]);
    const target = Array.from(r.uniform(ndim, 1, 6), (v) => Math.floor(v));
    const nAxes = 1 + Math.floor(r.uniform(1, 0, ndim)[0]);
    const axes = [...new Set(Array.from(r.uniform(nAxes, 0, ndim), (v) => Math.floor(v)))];
    const shape = target.map((d, i) => (axes.includes(i) ? 1 : d));
    const v = r.uniform(size(shape), 0, 1);
    const a = arr(v, shape, 'float64');
    a.attachGrad();
    const og = r.uniform(size(target), 0, 1);
    const y = autograd.record(() => nd.broadcast_axis(a, { axis: axes, size: axes.map((i) => target[i]) }));
    assert.deepEqual(y.shape, target);
    // y[idx] = x[idx with the broadcast axes at 0]; dx = ograd summed over those axes
    const want = new Float64Array(size(target)), dx = new Float64Array(size(shape));
    const idx = new Array(ndim).fill(0);
    for (let k = 0; k < want.length; k++) {
      let src = 0;
      for (let d = 0; d < ndim; d++) src = src * shape[d] + (axes.includes(d) ? 0 : idx[d]);
      want[k] = v[src];
      dx[src] += og[k];
      for (let d = ndim - 1; d >= 0; d--) { if (++idx[d] < target[d]) break; idx[d] = 0; }
    }
    assertClose(flat(y), want, { rtol: 0, atol: 0 });
    y.backward(arr(og, target, 'float64'));
    assertClose(flat(a.grad), dx, { rtol: 1e-12, atol: 1e-12 });
  }
  checkGrad('broadcast_axis', [{ shape: [3, 1, 2, 1] }], { axis: [1, 3], size: [4, 2] });
  checkGrad('broadcast_axes', [{ shape: [1, 5] }], { axis: 0, size: 3 });
});

test('broadcast_axis: errors as MXNet (a non-1 axis, negative axes, lengths) and the BERT export\'s attributes', () => {
  const x = nd.zeros([1, 2, 1]);
  assert.throws(() => nd.broadcast_axis(x, { axis: 1, size: 3 }), isErr(/must have size 1/));
  assert.throws(() => nd.broadcast_axis(x, { axis: -1, size: 3 }), isErr(/out of range/));
  assert.throws(() => nd.broadcast_axis(x, { axis: [0, 2], size: 3 }), isErr(/same length/));
  // staticbertencoder0_broadcast_axes0: axis='1', size='384' on (1, 1, 384)
  const s = sym.broadcast_axis(sym.var('m'), { axis: '1', size: '384' });
  assert.deepEqual(s.inferShape({ m: [1, 1, 384] })[1], [[1, 384, 384]]);
});

// ---- _contrib_arange_like ---------------------------------------------------------------------------
test('arange_like: test_arange_like\'s shapes and axes, start/step/repeat, dtypes, no gradient', () => {
  const r = rng(10);
  for (const sh of [[10], [10, 20], [10, 20, 30], [3, 4, 5, 6]]) {
    const x = arr(r.uniform(size(sh), 0, 1), sh);
    for (const axis of [0, -1]) {
      const n = sh[axis < 0 ? sh.length + axis : axis];
      const got = Array.from(flat(nd._contrib_arange_like(x, { start: 0, axis })));
      assert.deepEqual(got, Array.from({ length: n }, (_, i) => i));
    }
    const all = nd._contrib_arange_like(x, { start: 0 });
    assert.deepEqual(all.shape, sh);
    assert.deepEqual(Array.from(flat(all)), Array.from({ length: size(sh) }, (_, i) => i));
  }
  // start + (i / repeat) * step
  const y = nd._npx_arange_like(nd.zeros([2, 5]), { start: 1.5, step: -0.5, repeat: 3 });
  assertClose(flat(y), [1.5, 1.5, 1.5, 1, 1, 1, 0.5, 0.5, 0.5, 0], { rtol: 0, atol: 0 });
  const z = nd._contrib_arange_like(nd.zeros([4], { dtype: 'int32' }), { start: 2.7, step: 3 });
  assert.equal(z.dtype, 'int32');
  assert.deepEqual(z.toArray(), [2, 5, 8, 11]); // start truncated to the dtype
  assert.deepEqual(nd._contrib_arange_like(nd.zeros([3, 7]), { axis: 1, step: 2 }).toArray(), [0, 2, 4, 6, 8, 10, 12]);
  assert.throws(() => nd._contrib_arange_like(nd.zeros([3]), { axis: 1 }), isErr(/cannot handle param.axis 1/));
  assert.throws(() => nd._contrib_arange_like(nd.zeros([3]), { repeat: 0 }), mx.MXNetError);
  const x = nd.ones([2, 3]);
  x.attachGrad();
  autograd.record(() => nd.elemwise_mul(nd._contrib_arange_like(x), x)).backward();
  assert.deepEqual(x.grad.toArray(), [[0, 1, 2], [3, 4, 5]]); // only the product's path
});

// ---- _contrib_div_sqrt_dim --------------------------------------------------------------------------
test('div_sqrt_dim: data / sqrt(last dim) (test_div_sqrt_dim), integer dtypes, its gradient', () => {
  const r = rng(11);
  const v = r.normal(5 * 10 * 8);
  assertClose(flat(nd._contrib_div_sqrt_dim(arr(v, [5, 10, 8], 'float64'))), Array.from(v, (a) => a / Math.sqrt(8)),
    { rtol: 1e-15, atol: 0 });
  assertClose(flat(nd._contrib_div_sqrt_dim(arr(v, [5, 10, 8]))), Array.from(v, (a) => a / Math.sqrt(8)),
    { rtol: 1e-6 });
  // int32: divided by int(sqrt(8)) = 2, truncating
  assert.deepEqual(nd._contrib_div_sqrt_dim(nd.array([[7, -7, 9, 4, 1, 0, 3, 8]], { dtype: 'int32' })).toArray(),
    [[3, -3, 4, 2, 0, 0, 1, 4]]);
  checkGrad('_contrib_div_sqrt_dim', [{ shape: [3, 2, 5] }]);
});

// ---- erfinv -----------------------------------------------------------------------------------------
// scipy.special.erfinv values: mpmath.erfinv (40 digits) of the float64 nearest each decimal,
// rounded to the nearest float64
const ERFINV = [
  [0.5, 0.4769362762044699], [0.9, 1.1630871536766743], [0.1, 0.08885599049425769], [0.99, 1.8213863677184494],
  [-0.3, -0.2724627147267543], [0.999, 2.3267537655135246], [0.999999, 3.458910737275499], [1e-8, 8.86226925452758e-9],
  [-0.75, -0.8134198475976185], [0.2, 0.1791434546212917], [0.9999999999, 4.572824958544925],
];

test('erfinv: scipy\'s values, +-inf at +-1, NaN outside, float32 and float64', () => {
  const xs = ERFINV.map(([x]) => x), want = ERFINV.map(([, y]) => y);
  assertClose(flat(nd.erfinv(nd.array(xs, { dtype: 'float64' }))), want, { rtol: 1e-14, atol: 0 });
  // float32: the input rounded to float first, so compare with the derivative's slack
  const x32 = Float32Array.from(xs);
  const y32 = flat(nd._npx_erfinv(nd.array(Array.from(x32))));
  ERFINV.forEach(([x, y], i) => {
    if (Math.abs(x32[i]) === 1) return; // 0.9999999999 rounds to 1 in float32 (inf)
    const slope = (Math.sqrt(Math.PI) / 2) * Math.exp(y * y);
    assert.ok(Math.abs(y32[i] - y) <= 2e-7 * Math.abs(y) + slope * Math.abs(x32[i] - x) * 1.01 + 1e-12, `erfinv(${x})`);
  });
  // MXNet's doc example: erfinv([0, 0.5, -1.]) = [0., 0.4769, -inf]
  const d = flat(nd.erfinv(nd.array([0, 0.5, -1, 1, 1.5, -2, NaN])));
  assert.equal(d[0], 0);
  assertClose([d[1]], [0.4769362762], { rtol: 1e-6 });
  assert.equal(d[2], -Infinity);
  assert.equal(d[3], Infinity);
  assert.ok(Number.isNaN(d[4]) && Number.isNaN(d[5]) && Number.isNaN(d[6]));
});

test('erfinv: gradient sqrt(pi)/2 exp(erfinv(x)^2) (test_special_functions_using_scipy), finite differences', () => {
  const x = nd.array(ERFINV.slice(0, 7).map(([v]) => v), { dtype: 'float64' });
  x.attachGrad();
  autograd.record(() => nd.erfinv(x)).backward();
  const slope = ERFINV.slice(0, 7).map(([, y]) => (Math.sqrt(Math.PI) / 2) * Math.exp(y * y));
  assertClose(flat(x.grad), slope, { rtol: 1e-13 });
  checkGrad('erfinv', [{ shape: [3, 4], low: -0.95, high: 0.95 }]);
});
