// Gradients of the elemwise_binary family against central finite differences in float64 (odd
// shapes, broadcasting both ways) and, for the arithmetic, against TF.js's tf.grads.
import test from 'node:test';
import { checkGrad, tfGrads, ourGrads, assertClose, rng, tf, nd } from './grad_check.mjs';

const positive = (shape) => ({ shape, low: 0.5, high: 2 });

test('broadcast arithmetic: finite differences, shapes broadcast both ways', () => {
  const pairs = [[[3, 1, 5], [1, 4, 5]], [[2, 3], [3]], [[4], [2, 1]], [[1], [3, 2]], [[2, 3, 4], [2, 3, 4]]];
  for (const [a, b] of pairs) {
    for (const op of ['broadcast_add', 'broadcast_sub', 'broadcast_mul', 'broadcast_hypot']) checkGrad(op, [{ shape: a }, { shape: b }]);
    checkGrad('broadcast_div', [{ shape: a }, positive(b)]);
    checkGrad('broadcast_power', [positive(a), { shape: b }]);
    checkGrad('broadcast_mod', [{ shape: a, low: 0.1, high: 3 }, { shape: b, low: 0.7, high: 0.9 }]);
    // distinct values: max/min are not differentiable at ties
    checkGrad('broadcast_maximum', [{ shape: a }, { shape: b, low: 1.5, high: 2 }]);
    checkGrad('broadcast_minimum', [{ shape: a, low: -1, high: 0.4 }, { shape: b, low: 0.5, high: 1 }]);
    checkGrad('broadcast_maximum', [{ shape: a, low: 2, high: 3 }, { shape: b }]);
  }
});

test('elemwise and scalar ops: finite differences', () => {
  const s = [2, 3, 5];
  for (const op of ['elemwise_add', 'elemwise_sub', 'elemwise_mul', '_hypot']) checkGrad(op, [{ shape: s }, { shape: s }]);
  checkGrad('elemwise_div', [{ shape: s }, positive(s)]);
  checkGrad('_power', [positive(s), { shape: s }]);
  checkGrad('_mod', [{ shape: s, low: 0.1, high: 3 }, { shape: s, low: 0.7, high: 0.9 }]);
  checkGrad('_maximum', [{ shape: s, low: 1, high: 2 }, { shape: s, low: -1, high: 0.5 }]);
  checkGrad('_minimum', [{ shape: s, low: 1, high: 2 }, { shape: s, low: -1, high: 0.5 }]);
  checkGrad('add_n', [{ shape: s }, { shape: s }, { shape: s }], { num_args: 3 });
  for (const op of ['_plus_scalar', '_minus_scalar', '_rminus_scalar', '_mul_scalar', '_div_scalar', '_hypot_scalar']) {
    checkGrad(op, [{ shape: s }], { scalar: 1.7 });
  }
  checkGrad('_rdiv_scalar', [positive(s)], { scalar: 1.7 });
  checkGrad('_power_scalar', [positive(s)], { scalar: 2.5 });
  checkGrad('_rpower_scalar', [{ shape: s }], { scalar: 1.7 });
  checkGrad('_mod_scalar', [{ shape: s, low: 0.1, high: 0.6 }], { scalar: 0.7 });
  checkGrad('_rmod_scalar', [{ shape: s, low: 0.7, high: 0.9 }], { scalar: 2.5 });
  checkGrad('_maximum_scalar', [{ shape: s }], { scalar: 0.25 });
  checkGrad('_minimum_scalar', [{ shape: s }], { scalar: 0.25 });
});

test('comparisons and logical ops give zero gradients (MXNet marks them non-differentiable)', () => {
  const s = [2, 3];
  for (const op of ['broadcast_equal', 'broadcast_greater', '_lesser_equal', 'broadcast_logical_and']) {
    const { analytic } = checkGrad(op, [{ shape: s }, { shape: s }]);
    for (const g of analytic) assertClose(g, new Float64Array(g.length));
  }
  const { analytic } = checkGrad('_greater_scalar', [{ shape: s }], { scalar: 0.1 });
  assertClose(analytic[0], new Float64Array(6));
});

test('broadcast arithmetic matches TF.js gradients', () => {
  const r = rng(3);
  const a = { shape: [3, 1, 4], data: r.uniform(12, 0.5, 2) }, b = { shape: [2, 4], data: r.uniform(8, 0.5, 2) };
  const dy = { shape: [3, 2, 4], data: r.uniform(24) };
  const cases = [
    [(x, y) => nd.broadcast_add(x, y), (x, y) => tf.add(x, y)],
    [(x, y) => nd.broadcast_sub(x, y), (x, y) => tf.sub(x, y)],
    [(x, y) => nd.broadcast_mul(x, y), (x, y) => tf.mul(x, y)],
    [(x, y) => nd.broadcast_div(x, y), (x, y) => tf.div(x, y)],
    [(x, y) => nd.broadcast_power(x, y), (x, y) => tf.pow(x, y)],
    // (tf.maximum's gradient does not reduce broadcast inputs in TF.js 4.22; finite differences cover it)
  ];
  for (const [ours, theirs] of cases) {
    const got = ourGrads(ours, [a, b], dy), want = tfGrads(theirs, [a, b], dy);
    got.forEach((g, i) => assertClose(g, want[i], { rtol: 1e-4, atol: 1e-5 }));
  }
});

test('views of recorded arrays (reshape, contiguous ranges) are taped as _view_range', () => {
  checkGrad((x) => x.reshape([5, 3]), [{ shape: [3, 5] }]);
  checkGrad('_view_range', [{ shape: [4, 3] }], { offset: 2, shape: '(2, 3)' });
});
