// Gradients of the conv family (Convolution, Deconvolution, UpSampling) against central finite
// differences in float64 (odd shapes, groups, stride, dilation, pad, 1-D/2-D/3-D, channel-last
// layouts, no_bias) and against TF.js's tf.grads of tf.conv2d / tf.depthwiseConv2d /
// tf.conv2dTranspose in float32.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assertClose, rng, tf, nd, mx, autograd } from './grad_check.mjs';

const conv = (xs, ws, attrs, bias = true) => {
  const ins = [{ shape: xs }, { shape: ws }];
  if (bias) ins.push({ shape: [attrs.num_filter] });
  return checkGrad('Convolution', ins, bias ? attrs : { ...attrs, no_bias: true });
};

test('Convolution 2-D: stride, pad, dilation, groups, depthwise, no_bias (finite differences)', () => {
  conv([2, 3, 7, 6], [4, 3, 3, 3], { kernel: [3, 3], num_filter: 4 });
  conv([2, 3, 7, 6], [4, 3, 3, 2], { kernel: [3, 2], num_filter: 4, stride: [2, 3], pad: [1, 2] });
  conv([1, 2, 9, 8], [3, 2, 2, 3], { kernel: [2, 3], num_filter: 3, dilate: [2, 3], pad: [1, 1] });
  conv([2, 4, 8, 7], [6, 2, 3, 3], { kernel: [3, 3], num_filter: 6, num_group: 2, stride: [2, 1], pad: [1, 0] });
  conv([2, 3, 6, 9], [3, 1, 3, 3], { kernel: [3, 3], num_filter: 3, num_group: 3, pad: [1, 1], stride: [2, 2] }); // depthwise
  conv([2, 3, 7, 6], [5, 3, 1, 1], { kernel: [1, 1], num_filter: 5 }, false); // pointwise, no bias
  conv([1, 2, 9, 10], [3, 2, 3, 3], { kernel: [3, 3], num_filter: 3, stride: [2, 2], dilate: [2, 2], pad: [2, 1] }, false);
});

test('Convolution 1-D and 3-D, channel-last NHWC / NDHWC (finite differences)', () => {
  conv([2, 3, 11], [4, 3, 3], { kernel: [3], num_filter: 4, stride: [2], pad: [1], dilate: [2] });
  conv([2, 4, 9], [4, 2, 2], { kernel: [2], num_filter: 4, num_group: 2 }, false);
  conv([1, 2, 4, 5, 4], [3, 2, 2, 3, 2], { kernel: [2, 3, 2], num_filter: 3, stride: [1, 2, 1], pad: [1, 0, 1] });
  conv([2, 5, 6, 4], [6, 3, 3, 2], { kernel: [3, 3], num_filter: 6, num_group: 2, pad: [1, 1], stride: [2, 1], layout: 'NHWC' });
  conv([1, 3, 4, 5, 2], [2, 2, 2, 2, 2], { kernel: [2, 2, 2], num_filter: 2, layout: 'NDHWC' });
});

test('Deconvolution: stride, pad, adj, dilation, groups, target_shape, 1-D/3-D, NHWC (finite differences)', () => {
  const dec = (xs, ws, attrs, bias = false) => {
    const ins = [{ shape: xs }, { shape: ws }];
    if (bias) ins.push({ shape: [attrs.num_filter] });
    checkGrad('Deconvolution', ins, { ...attrs, no_bias: !bias });
  };
  dec([2, 3, 4, 5], [3, 2, 3, 3], { kernel: [3, 3], num_filter: 2 }, true);
  dec([2, 3, 4, 3], [3, 4, 3, 2], { kernel: [3, 2], num_filter: 4, stride: [2, 3], pad: [1, 0], adj: [1, 2] });
  dec([1, 4, 3, 4], [4, 3, 2, 3], { kernel: [2, 3], num_filter: 6, num_group: 2, dilate: [2, 1], stride: [2, 2] }, true);
  dec([2, 2, 3, 3], [2, 3, 4, 4], { kernel: [4, 4], num_filter: 3, stride: [2, 2], target_shape: [7, 8] });
  dec([2, 3, 5], [3, 2, 3], { kernel: [3], num_filter: 2, stride: [2], pad: [1] }, true);
  dec([1, 2, 2, 3, 2], [2, 2, 2, 2, 3], { kernel: [2, 2, 3], num_filter: 2, stride: [2, 1, 2] });
  dec([2, 3, 4, 3], [3, 3, 3, 2], { kernel: [3, 3], num_filter: 2, stride: [2, 2], pad: [1, 1], layout: 'NHWC' }, true);
});

test('UpSampling nearest (concat / sum, several factors) and bilinear with its weight (finite differences)', () => {
  checkGrad('UpSampling', [{ shape: [2, 3, 3, 4] }], { scale: 2, sample_type: 'nearest', num_args: 1 });
  // concat: output (6, 9) = input 0 times 3; input 1 has factor 1, input 2 factor 3
  checkGrad('UpSampling', [{ shape: [1, 2, 2, 3] }, { shape: [1, 3, 6, 9] }, { shape: [1, 1, 2, 3] }],
    { scale: 3, sample_type: 'nearest', num_args: 3 });
  // sum: factors 2, 1 and 4
  checkGrad('UpSampling', [{ shape: [2, 2, 2, 2] }, { shape: [2, 2, 4, 4] }, { shape: [2, 2, 1, 1] }],
    { scale: 2, sample_type: 'nearest', num_args: 3, multi_input_mode: 'sum' });
  for (const scale of [2, 3]) {
    const k = 2 * scale - (scale % 2);
    checkGrad('UpSampling', [{ shape: [2, 3, 3, 4] }, { shape: [3, 1, k, k] }],
      { scale, sample_type: 'bilinear', num_filter: 3, num_args: 2 });
  }
});

test('nearest UpSampling: a hand-worked block sum', () => {
  // one 1x1 input with scale 2: its gradient is the sum of the 4 head values
  const x = nd.array([[[[5]]]]);
  x.attachGrad();
  const y = autograd.record(() => nd.UpSampling(x, { scale: 2, sample_type: 'nearest', num_args: 1 }));
  y.backward(nd.array([[[[1, 2], [3, 4]]]]));
  assertClose(x.grad.toTypedArray(), [10]);
});

// ---- TF.js -------------------------------------------------------------------------------------
// MXNet NCHW data / (F, C/G, kh, kw) weight vs TF's NHWC / (kh, kw, C, F) through transposes inside
// the differentiated function, so both sides see the same values and head gradient.
const nchw = (t) => tf.transpose(t, [0, 2, 3, 1]);
const toNchw = (t) => tf.transpose(t, [0, 3, 1, 2]);
const hwio = (t) => tf.transpose(t, [2, 3, 1, 0]);
const rand = (r, shape) => ({ shape, data: r.uniform(shape.reduce((a, b) => a * b, 1)) });

test('Convolution matches tf.conv2d / tf.depthwiseConv2d gradients (stride, pad, dilation, groups)', () => {
  const r = rng(11);
  const cases = [
    { xs: [2, 3, 9, 8], F: 4, k: [3, 3], stride: [1, 1], pad: [0, 0], dilate: [1, 1] },
    { xs: [2, 3, 9, 8], F: 5, k: [3, 2], stride: [2, 2], pad: [1, 1], dilate: [1, 1] },
    { xs: [2, 1, 28, 28], F: 20, k: [5, 5], stride: [1, 1], pad: [0, 0], dilate: [1, 1] }, // LeNet's first layer
    { xs: [2, 20, 12, 12], F: 50, k: [5, 5], stride: [1, 1], pad: [0, 0], dilate: [1, 1] }, // and its second
  ];
  for (const { xs, F, k, stride, pad, dilate } of cases) {
    const C = xs[1];
    const x = rand(r, xs), w = rand(r, [F, C, ...k]), b = rand(r, [F]);
    const y = nd.Convolution(nd.array(Array.from(x.data)).reshape(xs), nd.array(Array.from(w.data)).reshape([F, C, ...k]),
      nd.array(Array.from(b.data)), { kernel: k, num_filter: F, stride, pad, dilate });
    const dy = rand(r, y.shape);
    const ours = ourGrads((a, wt, bb) => nd.Convolution(a, wt, bb, { kernel: k, num_filter: F, stride, pad, dilate }), [x, w, b], dy);
    const theirs = tfGrads((a, wt, bb) => {
      const padded = tf.pad(nchw(a), [[0, 0], [pad[0], pad[0]], [pad[1], pad[1]], [0, 0]]);
      return tf.add(toNchw(tf.conv2d(padded, hwio(wt), stride, 'valid', 'NHWC', dilate)), tf.reshape(bb, [1, F, 1, 1]));
    }, [x, w, b], dy);
    ours.forEach((g, i) => assertClose(g, theirs[i], { rtol: 2e-4, atol: 2e-4, msg: `conv ${xs} k${k} s${stride} d${dilate} input ${i}` }));
  }
  // grouped: tf.conv2d per group on channel slices
  {
    const xs = [2, 4, 7, 7], G = 2, F = 6, k = [3, 3];
    const x = rand(r, xs), w = rand(r, [F, 2, ...k]);
    const dy = rand(r, [2, F, 5, 5]);
    const ours = ourGrads((a, wt) => nd.Convolution(a, wt, { kernel: k, num_filter: F, num_group: G, no_bias: true }), [x, w], dy);
    const theirs = tfGrads((a, wt) => {
      const xg = tf.split(nchw(a), G, 3), wg = tf.split(hwio(wt), G, 3);
      return toNchw(tf.concat(xg.map((xi, g) => tf.conv2d(xi, wg[g], 1, 'valid')), 3));
    }, [x, w], dy);
    ours.forEach((g, i) => assertClose(g, theirs[i], { rtol: 2e-4, atol: 2e-4, msg: `grouped input ${i}` }));
  }
  // depthwise with stride and pad: tf.depthwiseConv2d, filter (kh, kw, C, 1)
  {
    const xs = [2, 3, 9, 8], C = 3, k = [3, 3];
    const x = rand(r, xs), w = rand(r, [C, 1, ...k]);
    const dy = rand(r, [2, C, 5, 4]);
    const ours = ourGrads((a, wt) => nd.Convolution(a, wt, { kernel: k, num_filter: C, num_group: C, stride: [2, 2], pad: [1, 1], no_bias: true }), [x, w], dy);
    const theirs = tfGrads((a, wt) => {
      const padded = tf.pad(nchw(a), [[0, 0], [1, 1], [1, 1], [0, 0]]);
      return toNchw(tf.depthwiseConv2d(padded, tf.transpose(wt, [2, 3, 0, 1]), [2, 2], 'valid'));
    }, [x, w], dy);
    ours.forEach((g, i) => assertClose(g, theirs[i], { rtol: 2e-4, atol: 2e-4, msg: `depthwise input ${i}` }));
  }
  // dilation: TF.js 4.22's conv2d gradient refuses any dilation > 1 ('dilation rates greater than 1 are not yet
  // supported in gradients'), so TF convolves with the explicitly dilated kernel (zeros between the taps), built
  // inside the differentiated function as W (.., kh*kw) x S (kh*kw, kh'*kw') with a 0/1 selection matrix S
  for (const [stride, dilate, pad] of [[[1, 1], [2, 2], [2, 1]], [[2, 2], [2, 3], [1, 2]]]) {
    const xs = [2, 3, 11, 12], F = 4, k = [3, 2];
    const kd = k.map((kk, i) => dilate[i] * (kk - 1) + 1);
    const sel = new Float32Array(k[0] * k[1] * kd[0] * kd[1]);
    for (let i = 0; i < k[0]; i++) for (let j = 0; j < k[1]; j++) sel[(i * k[1] + j) * kd[0] * kd[1] + i * dilate[0] * kd[1] + j * dilate[1]] = 1;
    const x = rand(r, xs), w = rand(r, [F, 3, ...k]);
    const attrs = { kernel: k, num_filter: F, stride, pad, dilate, no_bias: true };
    const y = nd.Convolution(nd.array(Array.from(x.data)).reshape(xs), nd.array(Array.from(w.data)).reshape(w.shape), attrs);
    const dy = rand(r, y.shape);
    const ours = ourGrads((a, wt) => nd.Convolution(a, wt, attrs), [x, w], dy);
    const theirs = tfGrads((a, wt) => {
      const wd = tf.reshape(tf.matMul(tf.reshape(wt, [F * 3, k[0] * k[1]]), tf.tensor(sel, [k[0] * k[1], kd[0] * kd[1]])), [F, 3, ...kd]);
      const padded = tf.pad(nchw(a), [[0, 0], [pad[0], pad[0]], [pad[1], pad[1]], [0, 0]]);
      return toNchw(tf.conv2d(padded, hwio(wd), stride, 'valid'));
    }, [x, w], dy);
    ours.forEach((g, i) => assertClose(g, theirs[i], { rtol: 2e-4, atol: 2e-4, msg: `dilated s${stride} d${dilate} input ${i}` }));
  }
});

test('Deconvolution matches tf.conv2dTranspose gradients', () => {
  const r = rng(12);
  for (const { xs, F, k, s } of [{ xs: [2, 3, 4, 5], F: 2, k: [3, 3], s: [1, 1] }, { xs: [2, 4, 3, 4], F: 3, k: [4, 4], s: [2, 2] }]) {
    const C = xs[1];
    const x = rand(r, xs), w = rand(r, [C, F, ...k]);
    const oh = (xs[2] - 1) * s[0] + k[0], ow = (xs[3] - 1) * s[1] + k[1];
    const dy = rand(r, [xs[0], F, oh, ow]);
    const ours = ourGrads((a, wt) => nd.Deconvolution(a, wt, { kernel: k, num_filter: F, stride: s }), [x, w], dy);
    // MXNet's weight (C, F, kh, kw) is TF's conv2dTranspose filter (kh, kw, F, C)
    const theirs = tfGrads((a, wt) => toNchw(tf.conv2dTranspose(nchw(a), tf.transpose(wt, [2, 3, 1, 0]), [xs[0], oh, ow, F], s, 'valid')),
      [x, w], dy);
    ours.forEach((g, i) => assertClose(g, theirs[i], { rtol: 2e-4, atol: 2e-4, msg: `deconv ${xs} input ${i}` }));
  }
});

test('nearest UpSampling matches the gradient of TF.js tiling (tf.tile of a reshape)', () => {
  // (tf.image.resizeNearestNeighbor's CPU gradient is wrong past the first batch item in TF.js 4.22)
  const r = rng(13);
  const x = rand(r, [2, 3, 4, 5]), dy = rand(r, [2, 3, 12, 15]);
  const ours = ourGrads((a) => nd.UpSampling(a, { scale: 3, sample_type: 'nearest', num_args: 1 }), [x], dy);
  const theirs = tfGrads((a) => tf.reshape(tf.tile(tf.reshape(a, [24, 1, 5, 1]), [1, 3, 1, 3]), [2, 3, 12, 15]), [x], dy);
  assertClose(ours[0], theirs[0], { rtol: 1e-5, atol: 1e-5 });
});

// ---- hybridized graphs and float32 ---------------------------------------------------------------
test('a hybridized Conv2D/Conv2DTranspose net gives the imperative gradients (float32)', () => {
  const r = rng(14);
  const build = () => {
    const net = new mx.gluon.nn.HybridSequential();
    net.add(new mx.gluon.nn.Conv2D(4, 3, { strides: 2, padding: 1, activation: 'relu' }));
    net.add(new mx.gluon.nn.Conv2DTranspose(2, 3, { strides: 2, padding: 1, outputPadding: 1 }));
    return net;
  };
  const x = nd.array(Array.from(r.uniform(2 * 3 * 8 * 8))).reshape([2, 3, 8, 8]);
  const grads = [];
  for (const hybrid of [false, true]) {
    mx.random.seed(3);
    const net = build();
    net.initialize(new mx.init.Xavier());
    if (hybrid) net.hybridize();
    for (let it = 0; it < 2; it++) { // the second call runs the cached graph
      const y = autograd.record(() => net.forward(x));
      y.backward();
    }
    grads.push([...net.collectParams().values()].map((p) => Float64Array.from(p.grad().toTypedArray())));
  }
  grads[0].forEach((g, i) => assertClose(grads[1][i], g, { rtol: 1e-5, atol: 1e-6, msg: `parameter ${i}` }));
});

test('float32 Convolution gradient is close to the float64 one (same data)', () => {
  const attrs = { kernel: [3, 3], num_filter: 4, stride: [2, 1], pad: [1, 1] };
  const r = rng(15);
  const x = rand(r, [2, 3, 7, 6]), w = rand(r, [4, 3, 3, 3]), b = rand(r, [4]);
  const dy = rand(r, [2, 4, 4, 6]);
  const run = (dtype) => {
    const xs = [x, w, b].map((s) => nd.array(Array.from(s.data), { dtype }).reshape(s.shape));
    xs.forEach((a) => a.attachGrad());
    const y = autograd.record(() => nd.Convolution(...xs, attrs));
    y.backward(nd.array(Array.from(dy.data), { dtype }).reshape(dy.shape));
    return xs.map((a) => Float64Array.from(a.grad.toTypedArray()));
  };
  const g32 = run('float32'), g64 = run('float64');
  g32.forEach((g, i) => assertClose(g, g64[i], { rtol: 1e-5, atol: 1e-5, msg: `input ${i}` }));
});

test('float16 Convolution / Deconvolution gradients (computed in float32) are close to float64', () => {
  const r = rng(16);
  const x = rand(r, [2, 3, 6, 5]), w = rand(r, [4, 3, 3, 3]), dy = rand(r, [2, 4, 6, 5]);
  const wd = rand(r, [3, 2, 3, 3]), dyd = rand(r, [2, 2, 6, 5]);
  const run = (dtype, f, ins, head) => {
    const xs = ins.map((s) => nd.array(Array.from(s.data), { dtype }).reshape(s.shape));
    xs.forEach((a) => a.attachGrad());
    const y = autograd.record(() => f(...xs));
    y.backward(nd.array(Array.from(head.data), { dtype }).reshape(head.shape));
    return xs.map((a) => Float64Array.from(a.grad.toTypedArray()));
  };
  const conv = (a, b) => nd.Convolution(a, b, { kernel: [3, 3], num_filter: 4, pad: [1, 1], no_bias: true });
  const deconv = (a, b) => nd.Deconvolution(a, b, { kernel: [3, 3], num_filter: 2, pad: [1, 1] });
  for (const [f, ins, head] of [[conv, [x, w], dy], [deconv, [x, wd], dyd]]) {
    const ref = run('float64', f, ins, head);
    run('float16', f, ins, head).forEach((g, i) => assertClose(g, ref[i], { rtol: 2e-2, atol: 3e-2, msg: `input ${i}` }));
  }
});

test('float32 depthwise gradients (their own SIMD paths) equal the float64 ones: stride, dilation, pad, 1-D', () => {
  const r = rng(17);
  const cases = [
    [[2, 3, 9, 8], { kernel: [3, 3], stride: [2, 2], pad: [1, 1] }],
    [[1, 4, 10, 11], { kernel: [3, 2], stride: [3, 1], dilate: [2, 3], pad: [2, 0] }],
    [[2, 2, 6, 7], { kernel: [5, 5], pad: [2, 2] }],
    [[2, 3, 13], { kernel: [3], stride: [2], dilate: [2], pad: [1] }],
  ];
  for (const [xs, win] of cases) {
    const C = xs[1];
    for (const op of ['Convolution', 'Deconvolution']) {
      const attrs = { ...win, num_filter: C, num_group: C, no_bias: true };
      const ws = [C, 1, ...win.kernel];
      const x = rand(r, xs), w = rand(r, ws);
      const y = nd[op](nd.array(Array.from(x.data)).reshape(xs), nd.array(Array.from(w.data)).reshape(ws), attrs);
      const dy = rand(r, y.shape);
      const run = (dtype) => {
        const a = nd.array(Array.from(x.data), { dtype }).reshape(xs), b = nd.array(Array.from(w.data), { dtype }).reshape(ws);
        a.attachGrad();
        b.attachGrad();
        const out = autograd.record(() => nd[op](a, b, attrs));
        out.backward(nd.array(Array.from(dy.data), { dtype }).reshape(dy.shape));
        return [a, b].map((t) => Float64Array.from(t.grad.toTypedArray()));
      };
      const g64 = run('float64');
      run('float32').forEach((g, i) => assertClose(g, g64[i], { rtol: 1e-4, atol: 1e-4, msg: `${op} ${xs} input ${i}` }));
    }
  }
});
