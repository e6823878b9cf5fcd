// im2col and col2im (csrc/ops/im2col.c, MXNet 1.9.1 src/operator/nn/im2col.h): values against a
// reference written out here (the block matrix element by element) and against a convolution
// computed by TF.js (conv = weights x im2col), col2im as im2col's adjoint (<im2col(x), y> =
// <x, col2im(y)>), and both gradients against central finite differences, second order included.
import test from 'node:test';
import { checkGrad, assert, assertClose, rng, tf, nd, mx } from './grad_check.mjs';

const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));
// the block matrix of one (C, H, W) image: rows (c, ky, kx), columns (oy, ox)
function im2colRef(x, [C, H, W], [kh, kw], [sh, sw], [dh, dw], [ph, pw]) {
  const oh = Math.floor((H + 2 * ph - (1 + (kh - 1) * dh)) / sh) + 1, ow = Math.floor((W + 2 * pw - (1 + (kw - 1) * dw)) / sw) + 1;
  const out = [];
  for (let c = 0; c < C; c++) for (let ky = 0; ky < kh; ky++) for (let kx = 0; kx < kw; kx++) {
    for (let oy = 0; oy < oh; oy++) for (let ox = 0; ox < ow; ox++) {
      const y = oy * sh - ph + ky * dh, xx = ox * sw - pw + kx * dw;
      out.push(y >= 0 && y < H && xx >= 0 && xx < W ? x[(c * H + y) * W + xx] : 0);
    }
  }
  return { out, L: oh * ow };
}

test('im2col: the block matrix element by element (stride, dilation, padding), 1-D and 3-D kernels', () => {
  const r = rng(5);
  const [N, C, H, W] = [2, 3, 6, 7];
  const xv = Array.from(r.uniform(N * C * H * W, -1, 1), Number);
  const x = nd.array(xv, { dtype: 'float64' }).reshape([N, C, H, W]);
  for (const [k, s, d, p] of [[[3, 3], [1, 1], [1, 1], [0, 0]], [[2, 3], [2, 1], [1, 2], [1, 2]], [[3, 2], [3, 2], [2, 1], [2, 0]]]) {
    const col = nd.im2col(x, { kernel: k, stride: s, dilate: d, pad: p });
    const want = [];
    let L = 0;
    for (let n = 0; n < N; n++) {
      const ref = im2colRef(xv.slice(n * C * H * W, (n + 1) * C * H * W), [C, H, W], k, s, d, p);
      want.push(...ref.out);
      L = ref.L;
    }
    assert.deepEqual(col.shape, [N, C * k[0] * k[1], L]);
    assert.deepEqual(Array.from(col.toTypedArray()), want);
  }
  // 1-D: (N, C, W) with kernel (w,) is the 2-D case with H = 1
  const x1 = nd.array([[[1, 2, 3, 4, 5]]]);
  assert.deepEqual(nd.im2col(x1, { kernel: [2], stride: [2], pad: [1] }).toArray(), [[[0, 2, 4], [1, 3, 5]]]);
  const x3 = nd.arange(0, 27).reshape([1, 1, 3, 3, 3]);
  const c3 = nd.im2col(x3, { kernel: [2, 2, 2] }).toArray()[0];
  assert.equal(c3.length, 8);
  assert.deepEqual(c3[0], [0, 1, 3, 4, 9, 10, 12, 13]); // the block corners of kernel offset (0, 0, 0)
  assert.deepEqual(c3[7], [13, 14, 16, 17, 22, 23, 25, 26]);
  throwsNaming(() => nd.im2col(x, { kernel: [8, 8] }), /kernel size exceed input/);
  throwsNaming(() => nd.im2col(x, { kernel: [2, 2], stride: [1] }), /stride/);
});

test('im2col makes a convolution a matrix product: weights (F, C k k) x columns equals TF.js conv2d', () => {
  const r = rng(9);
  const [N, C, H, W, F] = [2, 3, 9, 8, 4];
  const xv = Float32Array.from(r.uniform(N * C * H * W, -1, 1)), wv = Float32Array.from(r.uniform(F * C * 9, -1, 1));
  const col = nd.im2col(nd.array(xv).reshape([N, C, H, W]), { kernel: [3, 3], stride: [2, 2], pad: [1, 1] });
  const y = nd.batch_dot(nd.broadcast_to(nd.array(wv).reshape([1, F, C * 9]), [N, F, C * 9]), col); // (N, F, L)
  const tx = tf.tensor4d(xv, [N, C, H, W]).transpose([0, 2, 3, 1]);
  const tw = tf.tensor4d(wv, [F, C, 3, 3]).transpose([2, 3, 1, 0]);
  const ty = tf.conv2d(tx, tw, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]).transpose([0, 3, 1, 2]); // (N, F, 5, 4)
  assertClose(y.toTypedArray(), ty.dataSync(), { rtol: 1e-5, atol: 1e-5 });
});

test('col2im is im2col\'s adjoint and sums overlapping blocks; gradients of both against finite differences', () => {
  const r = rng(13);
  const attrs = { kernel: [3, 2], stride: [1, 2], dilate: [2, 1], pad: [1, 0] };
  const x = nd.array(Array.from(r.uniform(2 * 2 * 7 * 6, -1, 1), Number), { dtype: 'float64' }).reshape([2, 2, 7, 6]);
  const col = nd.im2col(x, attrs);
  const yv = nd.array(Array.from(r.uniform(col.size, -1, 1), Number), { dtype: 'float64' }).reshape(col.shape);
  const back = nd.col2im(yv, { output_size: [7, 6], ...attrs });
  assert.deepEqual(back.shape, [2, 2, 7, 6]);
  const dot = (a, b) => a.toTypedArray().reduce((s, v, i) => s + v * b.toTypedArray()[i], 0);
  assertClose([dot(col, yv)], [dot(x, back)], { rtol: 1e-12, atol: 0 });
  // each pixel of an image of ones is counted once per block covering it: 3x3 blocks, stride 1, 4x4
  const ones = nd.col2im(nd.ones([1, 9, 4]), { output_size: [4, 4], kernel: [3, 3] }).toArray()[0][0];
  assert.deepEqual(ones, [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]]);
  checkGrad('im2col', [{ shape: [2, 2, 5, 4] }], { kernel: [3, 2], stride: [2, 1], pad: [1, 1] });
  checkGrad('col2im', [{ shape: [1, 6, 15] }], { output_size: [5, 4], kernel: [3, 2], stride: [2, 1], pad: [1, 1] });
  checkGrad('_backward_im2col', [{ shape: [1, 6, 15] }, nd.zeros([1, 1, 5, 4], { dtype: 'float64' })],
    { kernel: [3, 2], stride: [2, 1], pad: [1, 1] }, { wrt: [0] });
  checkGrad('_backward_col2im', [{ shape: [1, 1, 5, 4] }], { output_size: [5, 4], kernel: [3, 2], stride: [2, 1], pad: [1, 1] });
  throwsNaming(() => nd.col2im(nd.ones([1, 9, 5]), { output_size: [4, 4], kernel: [3, 3] }), /blocks/);
  throwsNaming(() => nd._backward_im2col(nd.ones([1, 9, 5]), nd.ones([1, 1, 4, 4]), { kernel: [3, 3] }), /ograd/);
});
