// Gradients of the shape_ops family: every op against central finite differences in float64 (odd
// shapes, negative axes, special codes, steps), a few hand-worked gradients, and the ops TF.js can
// differentiate against tf.grads (reshape, transpose, concat, slice, stack, split, tile, reverse,
// broadcastTo, expandDims, squeeze, pad, and compositions of those for repeat, depth_to_space,
// space_to_depth and reflect / edge padding). TF.js has no gradient for strided slices: finite
// differences and hand-worked values cover those.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assert, assertClose, rng, tf, nd, autograd } from './grad_check.mjs';

const sizeOf = (s) => s.reduce((a, b) => a * b, 1);
const zeros = (n) => new Float64Array(n);

test('reshapes: Reshape, Flatten, expand_dims, squeeze, reshape_like', () => {
  checkGrad('Reshape', [{ shape: [2, 3, 5] }], { shape: [5, -1] });
  checkGrad('Reshape', [{ shape: [2, 3, 5] }], { shape: [0, -3] });
  checkGrad('Reshape', [{ shape: [2, 3, 5] }], { shape: [-4, 1, 2, -2] });
  checkGrad('Reshape', [{ shape: [2, 3, 5] }], { shape: [-1, 0], reverse: true });
  checkGrad('Flatten', [{ shape: [2, 3, 5] }]);
  checkGrad('Flatten', [{ shape: [7] }]);
  checkGrad('expand_dims', [{ shape: [3, 5] }], { axis: -1 });
  checkGrad('expand_dims', [{ shape: [3, 5] }], { axis: 0 });
  checkGrad('squeeze', [{ shape: [1, 3, 1, 5] }]);
  checkGrad('squeeze', [{ shape: [1, 3, 1, 5] }], { axis: [-2] });
  // rhs lends only its shape: no gradient flows to it
  const { analytic } = checkGrad('reshape_like', [{ shape: [2, 3, 5] }, { shape: [6, 5] }], {}, { wrt: [0, 1] });
  assertClose(analytic[1], zeros(30));
  checkGrad('reshape_like', [{ shape: [2, 3, 5] }, { shape: [7, 15] }], { lhs_begin: 1, lhs_end: 3, rhs_begin: 1 },
    { wrt: [0] });
});

test('permutations: transpose, SwapAxis, reverse, depth_to_space, space_to_depth', () => {
  checkGrad('transpose', [{ shape: [2, 3, 5] }]);
  checkGrad('transpose', [{ shape: [2, 3, 5] }], { axes: [1, -1, 0] });
  checkGrad('transpose', [{ shape: [2, 3, 5, 7] }], { axes: [3, 1, 0, 2] });
  checkGrad('SwapAxis', [{ shape: [2, 3, 5] }], { dim1: 0, dim2: 2 });
  checkGrad('SwapAxis', [{ shape: [2, 3, 5] }], { dim1: -1, dim2: 1 });
  checkGrad('reverse', [{ shape: [2, 3, 5] }], { axis: [0, -1] });
  checkGrad('reverse', [{ shape: [3, 5] }], { axis: [1, 1, 0] }); // axis 1 twice: no reversal along it
  checkGrad('depth_to_space', [{ shape: [2, 8, 3, 2] }], { block_size: 2 });
  checkGrad('depth_to_space', [{ shape: [1, 9, 2, 3] }], { block_size: 3 });
  checkGrad('space_to_depth', [{ shape: [2, 3, 4, 6] }], { block_size: 2 });
  checkGrad('space_to_depth', [{ shape: [1, 2, 3, 6] }], { block_size: 3 });
});

test('joins and splits: Concat, stack, SliceChannel (unused outputs contribute zeros)', () => {
  checkGrad('Concat', [{ shape: [2, 3] }, { shape: [2, 1] }, { shape: [2, 4] }], { num_args: 3, dim: 1 });
  checkGrad('Concat', [{ shape: [1, 3, 2] }, { shape: [3, 3, 2] }], { num_args: 2, dim: 0 });
  checkGrad('Concat', [{ shape: [2, 3, 1] }, { shape: [2, 3, 2] }], { num_args: 2, dim: -1 });
  checkGrad('Concat', [{ shape: [3, 5] }], { num_args: 1, dim: 0 });
  checkGrad('stack', [{ shape: [2, 3] }, { shape: [2, 3] }, { shape: [2, 3] }], { num_args: 3, axis: 1 });
  checkGrad('stack', [{ shape: [3] }, { shape: [3] }], { num_args: 2, axis: -1 });
  checkGrad('SliceChannel', [{ shape: [2, 6, 3] }], { num_outputs: 3, axis: 1 });
  checkGrad('SliceChannel', [{ shape: [3, 5] }], { num_outputs: 3, axis: 0, squeeze_axis: true });
  checkGrad('SliceChannel', [{ shape: [2, 5, 2] }], { num_outputs: 2, axis: -1, squeeze_axis: true });
  // only output 1 used: the others' gradients are zeros
  const x = nd.array(Array.from({ length: 12 }, (_, i) => i), { dtype: 'float64' }).reshape([2, 6]);
  x.attachGrad();
  const y = autograd.record(() => nd.split(x, { num_outputs: 3, axis: 1 })[1]);
  y.backward(nd.array([1, 2, 3, 4], { dtype: 'float64' }).reshape([2, 2]));
  assert.deepEqual(x.grad.toArray(), [[0, 0, 1, 2, 0, 0], [0, 0, 3, 4, 0, 0]]);
});

test('slices: slice (steps, negative and None entries), slice_axis, slice_like', () => {
  checkGrad('slice', [{ shape: [5, 6] }], { begin: [4, null], end: [0, null], step: [-2, 3] });
  checkGrad('slice', [{ shape: [4, 5, 3] }], { begin: [1, -4], end: [-1, null] });
  checkGrad('slice', [{ shape: [4, 5, 3] }], { begin: [null, null, 2], end: [null, null, null], step: [-1, 2, -1] });
  checkGrad('slice_axis', [{ shape: [4, 5, 3] }], { axis: 1, begin: -4, end: -1 });
  checkGrad('slice_axis', [{ shape: [4, 5, 3] }], { axis: -1, begin: 1, end: null });
  checkGrad('slice_like', [{ shape: [5, 6] }, { shape: [3, 4] }], {}, { wrt: [0] });
  checkGrad('slice_like', [{ shape: [4, 5, 3] }, { shape: [2, 9, 2] }], { axes: [0, -1] }, { wrt: [0] });
  // hand-worked: x[4:0:-2, ::3] of a (5, 6) array reads rows 4, 2 and columns 0, 3
  const x = nd.zeros([5, 6], { dtype: 'float64' });
  x.attachGrad();
  const y = autograd.record(() => nd.slice(x, { begin: [4, null], end: [0, null], step: [-2, 3] }));
  y.backward(nd.array([1, 2, 3, 4], { dtype: 'float64' }).reshape([2, 2]));
  const want = Array.from({ length: 5 }, () => Array(6).fill(0));
  want[4][0] = 1; want[4][3] = 2; want[2][0] = 3; want[2][3] = 4;
  assert.deepEqual(x.grad.toArray(), want);
  // shape_like gets no gradient
  const { analytic } = checkGrad('slice_like', [{ shape: [3, 4] }, { shape: [2, 2] }], {}, { wrt: [0, 1] });
  assertClose(analytic[1], zeros(4));
});

test('broadcasts and repeats: broadcast_to, broadcast_like, tile, repeat', () => {
  checkGrad('broadcast_to', [{ shape: [1, 3, 1] }], { shape: [2, 3, 4] });
  checkGrad('broadcast_to', [{ shape: [2, 1] }], { shape: [0, 5] });
  checkGrad('broadcast_like', [{ shape: [1, 3, 1] }, { shape: [2, 3, 4] }], {}, { wrt: [0] });
  checkGrad('broadcast_like', [{ shape: [1, 3] }, { shape: [5, 4, 3] }], { lhs_axes: [0], rhs_axes: [1] },
    { wrt: [0] });
  checkGrad('tile', [{ shape: [2, 3] }], { reps: [2, 1, 3] });
  checkGrad('tile', [{ shape: [2, 3, 2] }], { reps: [3] });
  checkGrad('repeat', [{ shape: [2, 3] }], { repeats: 2, axis: 1 });
  checkGrad('repeat', [{ shape: [2, 3, 2] }], { repeats: 3, axis: -3 });
  checkGrad('repeat', [{ shape: [2, 3] }], { repeats: 3 });
  // hand-worked: every input element of tile(x, (2, 3)) appears 6 times, of repeat(x, 4) 4 times
  for (const [f, n] of [[(x) => nd.tile(x, { reps: [2, 3] }), 6], [(x) => nd.repeat(x, { repeats: 4 }), 4]]) {
    const x = nd.zeros([3, 2], { dtype: 'float64' });
    x.attachGrad();
    autograd.record(() => f(x)).backward();
    assertClose(x.grad.toTypedArray(), new Float64Array(6).fill(n));
  }
});

test('Pad: constant, edge and reflect on 4-D and 5-D inputs', () => {
  for (const mode of ['constant', 'edge', 'reflect']) {
    checkGrad('Pad', [{ shape: [2, 2, 3, 4] }], { mode, pad_width: [0, 0, 0, 0, 1, 2, 3, 2], constant_value: 1.5 });
    checkGrad('Pad', [{ shape: [1, 2, 3, 4, 3] }], { mode, pad_width: [0, 0, 0, 0, 2, 0, 0, 3, 1, 1] });
  }
  // hand-worked on one row: reflect (1, 1) of [a, b, c] is [b, a, b, c, b]; edge (2, 1) is [a, a, a, b, c, c]
  const row = (mode, pw) => {
    const x = nd.zeros([1, 1, 1, 3], { dtype: 'float64' });
    x.attachGrad();
    autograd.record(() => nd.Pad(x, { mode, pad_width: [0, 0, 0, 0, 0, 0, ...pw] })).backward();
    return Array.from(x.grad.toTypedArray());
  };
  assert.deepEqual(row('reflect', [1, 1]), [1, 3, 1]);
  assert.deepEqual(row('edge', [2, 1]), [3, 1, 2]);
  assert.deepEqual(row('constant', [2, 1]), [1, 1, 1]);
});

// (autograd.grad's create_graph is not supported yet, so these are checked as ops of their own)
test('the _backward_* ops are linear in ograd: their own gradients', () => {
  const data = (shape) => nd.zeros(shape, { dtype: 'float64' }); // lends only its shape
  const wrt = { wrt: [0] };
  checkGrad('_backward_slice', [{ shape: [2, 2] }, data([5, 6])], { begin: [4, null], end: [0, null], step: [-2, 3] },
    wrt);
  checkGrad('_backward_slice_axis', [{ shape: [4, 3, 3] }, data([4, 5, 3])], { axis: 1, begin: -4, end: -1 }, wrt);
  checkGrad('_backward_slice_like', [{ shape: [2, 5, 2] }, data([4, 5, 3])], { axes: [0, -1] }, wrt);
  checkGrad('_backward_tile', [{ shape: [2, 6, 3] }, data([3, 1])], { reps: [2, 2, 3] }, wrt);
  checkGrad('_backward_repeat', [{ shape: [2, 6] }, data([2, 3])], { repeats: 2, axis: 1 }, wrt);
  for (const mode of ['constant', 'edge', 'reflect']) {
    const attrs = { mode, pad_width: [0, 0, 0, 0, 1, 2, 2, 1] };
    checkGrad('_backward_Pad', [{ shape: [1, 2, 6, 7] }, data([1, 2, 3, 4])], attrs, wrt);
  }
});

// ---- TF.js ------------------------------------------------------------------------------------------
// Our gradients and tf.grads' at the same float32 inputs and output gradient.
function vsTF(ours, theirs, shapes, msg, seed = 11) {
  const r = rng(seed);
  const inputs = shapes.map((shape) => ({ shape, data: r.uniform(sizeOf(shape)) }));
  const y = ours(...inputs.map(({ shape, data }) => nd.array(Array.from(data)).reshape(shape)));
  const dy = { shape: y.shape, data: r.uniform(y.size) };
  const got = ourGrads(ours, inputs, dy), want = tfGrads(theirs, inputs, dy);
  got.forEach((g, i) => assertClose(g, want[i], { rtol: 1e-5, atol: 1e-6, msg: `${msg} d/dinput${i}` }));
}

test('shape ops match TF.js gradients', () => {
  vsTF((x) => nd.reshape(x, { shape: [5, -1] }), (x) => tf.reshape(x, [5, -1]), [[2, 3, 5]], 'reshape');
  vsTF((x) => nd.Flatten(x), (x) => tf.reshape(x, [2, 15]), [[2, 3, 5]], 'Flatten');
  vsTF((x) => nd.transpose(x, { axes: [2, 0, 1] }), (x) => tf.transpose(x, [2, 0, 1]), [[2, 3, 5]], 'transpose');
  vsTF((x) => nd.transpose(x), (x) => tf.transpose(x), [[2, 3, 5]], 'transpose default');
  vsTF((x) => nd.SwapAxis(x, { dim1: 0, dim2: 2 }), (x) => tf.transpose(x, [2, 1, 0]), [[2, 3, 5]], 'SwapAxis');
  vsTF((x) => nd.expand_dims(x, { axis: 1 }), (x) => tf.expandDims(x, 1), [[3, 5]], 'expand_dims');
  vsTF((x) => nd.squeeze(x, { axis: [0] }), (x) => tf.squeeze(x, [0]), [[1, 3, 5]], 'squeeze');
  vsTF((a, b, c) => nd.Concat(a, b, c, { num_args: 3, dim: 1 }), (a, b, c) => tf.concat([a, b, c], 1),
    [[2, 3, 2], [2, 1, 2], [2, 4, 2]], 'Concat');
  vsTF((a, b) => nd.stack(a, b, { num_args: 2, axis: 1 }), (a, b) => tf.stack([a, b], 1), [[3, 4], [3, 4]], 'stack');
  vsTF((x) => nd.split(x, { num_outputs: 3, axis: 1 })[2], (x) => tf.split(x, 3, 1)[2], [[2, 6, 3]], 'split');
  vsTF((x) => nd.split(x, { num_outputs: 3, axis: 0, squeeze_axis: true })[1], (x) => tf.unstack(x, 0)[1], [[3, 4]],
    'split squeeze');
  vsTF((x) => nd.slice(x, { begin: [1, 0, 2], end: [3, 4, 5] }), (x) => tf.slice(x, [1, 0, 2], [2, 4, 3]), [[4, 5, 6]],
    'slice');
  vsTF((x) => nd.slice_axis(x, { axis: 1, begin: 1, end: -1 }), (x) => tf.slice(x, [0, 1, 0], [4, 3, 6]), [[4, 5, 6]],
    'slice_axis');
  vsTF((x) => nd.broadcast_to(x, { shape: [4, 3, 5] }), (x) => tf.broadcastTo(x, [4, 3, 5]), [[1, 3, 1]],
    'broadcast_to');
  vsTF((x) => nd.tile(x, { reps: [2, 1, 3] }), (x) => tf.tile(tf.reshape(x, [1, 2, 3]), [2, 1, 3]), [[2, 3]], 'tile');
  vsTF((x) => nd.reverse(x, { axis: [0, 2] }), (x) => tf.reverse(x, [0, 2]), [[2, 3, 4]], 'reverse');
  // repeat(x, 2, axis=1) = reshape(tile(expand_dims(x, 2), (1, 1, 2)), (2, 6))
  vsTF((x) => nd.repeat(x, { repeats: 2, axis: 1 }), (x) => tf.reshape(tf.tile(tf.expandDims(x, 2), [1, 1, 2]), [2, 6]),
    [[2, 3]], 'repeat');
  // depth_to_space (DCR): reshape (N, b, b, C', H, W), transpose (0, 3, 4, 1, 5, 2), reshape (N, C', H b, W b)
  vsTF((x) => nd.depth_to_space(x, { block_size: 2 }),
    (x) => tf.reshape(tf.transpose(tf.reshape(x, [2, 2, 2, 3, 3, 2]), [0, 3, 4, 1, 5, 2]), [2, 3, 6, 4]),
    [[2, 12, 3, 2]], 'depth_to_space');
  // space_to_depth: reshape (N, C, H/b, b, W/b, b), transpose (0, 3, 5, 1, 2, 4), reshape (N, C b b, H/b, W/b)
  vsTF((x) => nd.space_to_depth(x, { block_size: 2 }),
    (x) => tf.reshape(tf.transpose(tf.reshape(x, [2, 3, 2, 2, 3, 2]), [0, 3, 5, 1, 2, 4]), [2, 12, 2, 3]),
    [[2, 3, 4, 6]], 'space_to_depth');
  const pw = [0, 0, 0, 0, 1, 2, 2, 1], tfPw = [[0, 0], [0, 0], [1, 2], [2, 1]];
  vsTF((x) => nd.Pad(x, { mode: 'constant', pad_width: pw, constant_value: 2 }), (x) => tf.pad(x, tfPw, 2),
    [[2, 3, 4, 5]], 'Pad constant');
  // TF.js's mirrorPad gradient only slices dy (it drops the reflected parts), so reflect and edge
  // padding are built from tf.slice / tf.reverse / tf.tile / tf.concat, whose gradients are right
  const sl = (x, axis, start, size) => {
    const begin = x.shape.map(() => 0), sz = x.shape.slice();
    begin[axis] = start;
    sz[axis] = size;
    return tf.slice(x, begin, sz);
  };
  const padAxis = (x, axis, before, after, mode) => {
    const L = x.shape[axis], reps = (n) => x.shape.map((_, d) => (d === axis ? n : 1));
    const parts = mode === 'reflect'
      ? [before && tf.reverse(sl(x, axis, 1, before), axis), x,
        after && tf.reverse(sl(x, axis, L - 1 - after, after), axis)]
      : [before && tf.tile(sl(x, axis, 0, 1), reps(before)), x, after && tf.tile(sl(x, axis, L - 1, 1), reps(after))];
    return tf.concat(parts.filter((t) => t), axis);
  };
  for (const mode of ['reflect', 'edge']) {
    vsTF((x) => nd.Pad(x, { mode, pad_width: pw }), (x) => padAxis(padAxis(x, 2, 1, 2, mode), 3, 2, 1, mode),
      [[2, 3, 4, 5]], `Pad ${mode}`);
  }
});
