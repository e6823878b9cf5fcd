// Gradients of the random family: draws are non-differentiable in MXNet 1.9.1 (the _sample_* ops
// register MakeZeroGradNodes; _shuffle none), except _sample_multinomial's log probabilities
// (get_prob=True), whose gradient scatters ograd / p into the drawn outcomes.
import test from 'node:test';
import { assert, assertClose, nd, mx, autograd } from './grad_check.mjs';

test('random draws with array parameters give zero gradients to their parameters', () => {
  const mu = nd.array([0.5, -1, 2], { dtype: 'float64' }), sigma = nd.array([1, 2, 0.5], { dtype: 'float64' });
  mu.attachGrad();
  sigma.attachGrad();
  // the draw plus mu itself: only the direct path contributes (ones)
  const y = autograd.record(() => nd.broadcast_add(nd._sample_normal(mu, sigma, { shape: [1], dtype: 'float64' }).reshape([3]), mu));
  y.backward();
  assertClose(mu.grad.toTypedArray(), [1, 1, 1]);
  assertClose(sigma.grad.toTypedArray(), [0, 0, 0]);
  const lo = nd.array([0, 1], { dtype: 'float64' }), hi = nd.array([1, 3], { dtype: 'float64' });
  hi.attachGrad();
  autograd.record(() => nd._sample_uniform(lo, hi, { shape: [4] })).backward();
  assertClose(hi.grad.toTypedArray(), [0, 0]);
  const lam = nd.array([1.5, 3], { dtype: 'float64' });
  lam.attachGrad();
  autograd.record(() => nd.elemwise_add(nd._sample_poisson(lam, { dtype: 'float64' }), nd._sample_exponential(lam, { dtype: 'float64' }))).backward();
  assertClose(lam.grad.toTypedArray(), [0, 0]);
  // _shuffle
  const x = nd.array([[1, 2], [3, 4], [5, 6]], { dtype: 'float64' });
  x.attachGrad();
  autograd.record(() => nd._shuffle(x)).backward();
  assertClose(x.grad.toTypedArray(), [0, 0, 0, 0, 0, 0]);
});

test('_sample_multinomial with get_prob: d(log p[sample])/dp = 1/p at each drawn outcome, summed over draws', () => {
  mx.random.seed(3);
  const p = nd.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], { dtype: 'float64' });
  p.attachGrad();
  const [s, logp] = autograd.record(() => nd._sample_multinomial(p, { shape: [5], get_prob: true }));
  assert.deepEqual(s.shape, [2, 5]);
  const reward = nd.array([[1, 2, 3, 4, 5], [-1, 0.5, 2, 1, 3]], { dtype: 'float64' });
  autograd.backward([logp], [reward]);
  const sv = Array.from(s.toTypedArray()), rv = Array.from(reward.toTypedArray()), pv = Array.from(p.toTypedArray());
  const want = new Array(6).fill(0);
  for (let i = 0; i < 2; i++) for (let j = 0; j < 5; j++) want[i * 3 + sv[i * 5 + j]] += rv[i * 5 + j] / pv[i * 3 + sv[i * 5 + j]];
  assertClose(p.grad.toTypedArray(), want, { rtol: 1e-12 });
  // the log probabilities are those of the drawn outcomes
  assertClose(logp.toTypedArray(), sv.map((k, t) => Math.log(pv[Math.floor(t / 5) * 3 + k])), { rtol: 1e-12 });
  // the kernel on its own
  const g = nd._backward_sample_multinomial(reward, p, s, { shape: [5], get_prob: true });
  assertClose(g.toTypedArray(), want, { rtol: 1e-12 });
  // without get_prob the draw is non-differentiable
  const q = nd.array([0.25, 0.75], { dtype: 'float64' });
  q.attachGrad();
  autograd.record(() => nd.elemwise_add(nd._sample_multinomial(q, { shape: [2], dtype: 'float64' }), nd.ones([2], { dtype: 'float64' }))).backward();
  assertClose(q.grad.toTypedArray(), [0, 0]);
});
