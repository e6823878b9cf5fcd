// The densities of the sampling distributions (random_pdf_*, csrc/ops/pdf.c; MXNet 1.9.1
// src/operator/random/pdf_op.h): values against the closed forms worked out here, shapes (a
// distribution per parameter, several samples each; dirichlet's vector samples), is_log, and the
// gradients of the parameters (and of the sample for the continuous distributions) against
// central finite differences.
import test from 'node:test';
import { checkGrad, assert, assertClose, nd, mx } from './grad_check.mjs';

const f64 = (v) => nd.array(v, { dtype: 'float64' });
const one = (op, sample, ...params) => nd[op](f64([sample]), ...params.map((p) => f64([p]))).toTypedArray()[0];
const tol = { rtol: 1e-12, atol: 0 };

test('each density at a point equals its closed form, the log density its log', () => {
  const cases = [
    ['random_pdf_uniform', 2.5, [1, 3], 0.5],
    ['random_pdf_normal', 2, [1, 2], Math.exp(-1 / 8) / (Math.sqrt(2 * Math.PI) * 2)],
    ['random_pdf_gamma', 0.5, [2, 3], 9 * 0.5 * Math.exp(-1.5)], // beta^alpha x^(alpha-1) e^(-beta x) / Gamma(2)
    ['random_pdf_exponential', 0.3, [2], 2 * Math.exp(-0.6)],
    ['random_pdf_poisson', 3, [2], 8 * Math.exp(-2) / 6],
    ['random_pdf_negative_binomial', 2, [3, 0.4], 6 * 0.4 ** 3 * 0.6 ** 2], // C(4, 2) p^k (1 - p)^x
    ['random_pdf_generalized_negative_binomial', 1, [2, 0.5], 0.25], // NB(k = 2, p = 1/2) at 1: 2 / 8
  ];
  for (const [op, x, params, want] of cases) {
    assertClose([one(op, x, ...params)], [want], tol);
    const lg = nd[op](f64([x]), ...params.map((p) => f64([p])), { is_log: true }).toTypedArray()[0];
    assertClose([lg], [Math.log(want)], { rtol: 1e-12, atol: 1e-14 });
  }
  // the backward kernel itself on N(1, 2) at 2 (head gradient 1): d/dx = -v (x - mu) / s^2,
  // d/dmu = v (x - mu) / s^2, d/ds = v ((x - mu)^2 - s^2) / s^3
  const v = Math.exp(-1 / 8) / (Math.sqrt(2 * Math.PI) * 2);
  const grads = nd._backward_pdf(f64([1]), f64([2]), f64([1]), f64([2]), f64([v]), { distr: 'normal' });
  assertClose(grads.map((g) => g.toTypedArray()[0]), [-v / 4, v / 4, -3 * v / 8], tol);
  // dirichlet(1, 2, 3) at (0.2, 0.3, 0.5): Gamma(6) / (Gamma(1) Gamma(2) Gamma(3)) 0.3 0.5^2 = 60 * 0.075
  assertClose(nd.random_pdf_dirichlet(f64([0.2, 0.3, 0.5]), f64([1, 2, 3])).toTypedArray(), [4.5], tol);
});

test('shapes: one distribution per parameter with several samples each; dirichlet\'s vector samples', () => {
  // two normals, three samples each: N(0, 1) and N(5, 2)
  const out = nd._random_pdf_normal(f64([[0, 1, -1], [5, 7, 3]]), f64([0, 5]), f64([1, 2]));
  assert.deepEqual(out.shape, [2, 3]);
  const n = (x, m, s) => Math.exp(-((x - m) ** 2) / (2 * s * s)) / (Math.sqrt(2 * Math.PI) * s);
  assertClose(out.toTypedArray(), [n(0, 0, 1), n(1, 0, 1), n(-1, 0, 1), n(5, 5, 2), n(7, 5, 2), n(3, 5, 2)], tol);
  const d = nd.random_pdf_dirichlet(f64([[[0.2, 0.8], [0.5, 0.5]], [[0.1, 0.9], [0.6, 0.4]]]), f64([[1, 1], [2, 3]]));
  assert.deepEqual(d.shape, [2, 2]);
  // Dirichlet(1, 1) is uniform on the simplex (density 1); Dirichlet(2, 3) = 12 x y^2
  assertClose(d.toTypedArray(), [1, 1, 12 * 0.1 * 0.81, 12 * 0.6 * 0.16], tol);
  assert.throws(() => nd.random_pdf_normal(f64([[1, 2]]), f64([0, 1]), f64([1, 1])), /does not lead/);
  assert.throws(() => nd.random_pdf_normal(f64([1, 2]), f64([0, 1]), f64([1])), /parameter/);
  assert.throws(() => nd.random_pdf_dirichlet(f64([[], []]).reshape([2, 0]), f64([]).reshape([0])), /at least one element/);
  const s = mx.sym.random_pdf_gamma(mx.sym.var('x'), mx.sym.var('a'), mx.sym.var('b'), { name: 'pdf' });
  assert.deepEqual(JSON.parse(s.tojson()).nodes.at(-1).op, '_random_pdf_gamma');
});

test('gradients of the parameters, and of continuous samples, against finite differences; is_log too', () => {
  const P = (low, high) => ({ shape: [2], low, high });
  const X = (low, high) => ({ shape: [2, 3], low, high });
  const ints = f64([[0, 1, 3], [2, 4, 1]]);
  for (const is_log of [false, true]) {
    checkGrad('_random_pdf_uniform', [X(1.2, 1.8), P(0, 1), P(2, 3)], { is_log }, { wrt: [1, 2] });
    checkGrad('_random_pdf_normal', [X(-1, 1), P(-0.5, 0.5), P(0.5, 1.5)], { is_log });
    checkGrad('_random_pdf_gamma', [X(0.5, 2), P(1.5, 3), P(0.5, 2)], { is_log });
    checkGrad('_random_pdf_exponential', [X(0.1, 2), P(0.5, 2)], { is_log });
    checkGrad('_random_pdf_poisson', [ints, P(1, 3)], { is_log }, { wrt: [1] });
    checkGrad('_random_pdf_negative_binomial', [ints, P(1, 3), P(0.2, 0.8)], { is_log }, { wrt: [1, 2] });
    checkGrad('_random_pdf_generalized_negative_binomial', [ints, P(0.5, 2), P(0.3, 1)], { is_log }, { wrt: [1, 2] });
    checkGrad('_random_pdf_dirichlet', [{ shape: [2, 4, 3], low: 0.1, high: 0.6 }, { shape: [2, 3], low: 1, high: 3 }], { is_log });
  }
});
