// mx.autograd's mode switches: Dropout and BatchNorm behave as in training inside record() /
// trainMode() and as in inference outside, imperatively and hybridized. Expected values come
// from TensorFlow.js's moments and hand-worked statistics.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose } from './oracle.mjs';

const { nd, gluon, autograd } = mx;
const { nn } = gluon;

test('record / pause / trainMode / predictMode set and restore the flags, also on exceptions', () => {
  assert.equal(autograd.isTraining(), false);
  assert.equal(autograd.isRecording(), false);
  autograd.record(() => {
    assert.equal(autograd.isTraining(), true);
    assert.equal(autograd.isRecording(), true);
    autograd.pause(() => assert.equal(autograd.isTraining(), false));
    autograd.predictMode(() => assert.equal(autograd.isTraining(), false));
    assert.equal(autograd.isTraining(), true);
  });
  assert.equal(autograd.record(() => 5, false), 5);
  assert.throws(() => autograd.trainMode(() => { throw new Error('boom'); }), /boom/);
  assert.equal(autograd.isTraining(), false);
  assert.equal(autograd.setTraining(true), false);
  assert.equal(autograd.setTraining(false), true);
});

test('Dropout: identity in inference; in training a Bernoulli(1-p) mask scaled by 1/(1-p)', () => {
  for (const hybrid of [false, true]) {
    const drop = new nn.Dropout(0.5);
    if (hybrid) drop.hybridize();
    const x = nd.ones([20000]);
    assert.deepEqual([...new Set(drop(x).toTypedArray())], [1]);
    const y = autograd.record(() => drop(x)).toTypedArray();
    const zeros = y.filter((v) => v === 0).length;
    assert.ok(y.every((v) => v === 0 || v === 2), 'kept values are scaled by 1/(1-p) = 2');
    // 5 standard deviations of a binomial(20000, 0.5) fraction: 5 * sqrt(0.25 / 20000) = 0.0177
    assert.ok(Math.abs(zeros / y.length - 0.5) < 0.0177, `zero fraction ${zeros / y.length}`);
    assert.deepEqual([...new Set(autograd.predictMode(() => drop(x)).toTypedArray())], [1]);
  }
});

test('BatchNorm: batch statistics and the momentum update in training, running statistics in inference', () => {
  const shape = [4, 3, 5];
  const data = rng(12).normal(60);
  for (const hybrid of [false, true]) {
    const bn = new nn.BatchNorm({ inChannels: 3, momentum: 0.9 });
    bn.initialize();
    bn.gamma.setData(nd.array([1.5, 0.5, 2]));
    bn.beta.setData(nd.array([0.1, -0.2, 0.3]));
    if (hybrid) bn.hybridize();
    const x = nd.array(data, { shape });
    const y = autograd.record(() => bn(x));
    const { mean, variance } = tf.tidy(() => {
      const m = tf.moments(tf.tensor(data, shape), [0, 2]);
      return { mean: m.mean.dataSync(), variance: m.variance.dataSync() };
    });
    const expected = tf.tidy(() => {
      const t = tf.tensor(data, shape);
      const r = (v) => tf.tensor(v, [1, 3, 1]);
      return tf.add(tf.mul(tf.div(tf.sub(t, r(mean)), tf.sqrt(tf.add(r(variance), 1e-5))), r([1.5, 0.5, 2])), r([0.1, -0.2, 0.3])).dataSync();
    });
    assertClose(y.toTypedArray(), expected, { rtol: 1e-5, atol: 1e-5, msg: `training output (hybrid ${hybrid})` });
    // running = 0.9 * running + 0.1 * batch (initial mean 0, var 1; the batch variance is biased)
    assertClose(bn.running_mean.data().toTypedArray(), Array.from(mean, (v) => 0.1 * v), { rtol: 1e-5, atol: 1e-6 });
    assertClose(bn.running_var.data().toTypedArray(), Array.from(variance, (v) => 0.9 + 0.1 * v), { rtol: 1e-5, atol: 1e-6 });
    // inference uses the updated running statistics
    const rm = Array.from(mean, (v) => 0.1 * v), rv = Array.from(variance, (v) => 0.9 + 0.1 * v);
    const inf = bn(x).toTypedArray();
    const g = [1.5, 0.5, 2], b = [0.1, -0.2, 0.3];
    inf.forEach((v, i) => {
      const c = Math.floor(i / 5) % 3;
      const want = ((data[i] - rm[c]) / Math.sqrt(rv[c] + 1e-5)) * g[c] + b[c];
      assert.ok(Math.abs(v - want) < 1e-5, `inference ${i}: ${v} vs ${want}`);
    });
  }
});

test('no fixed cap on inputs or heads: a 100-input concat differentiates, backward takes 300 heads (hand-worked)', () => {
  // concat of 100 arrays x_i (2,) with weights: L = Σ_j c_j · concat(x)_j, so dL/dx_i = c[2i..2i+1]
  const xs = Array.from({ length: 100 }, (_, i) => { const a = mx.nd.array([i, -i]); a.attachGrad(); return a; });
  const c = mx.nd.array(Array.from({ length: 200 }, (_, j) => (j % 7) - 3));
  mx.autograd.record(() => { mx.nd.sum(mx.nd.concat(...xs, { dim: 0 }).mul(c)).backward(); });
  for (const i of [0, 64, 99]) assert.deepEqual(Array.from(xs[i].grad.toTypedArray()), [((2 * i) % 7) - 3, ((2 * i + 1) % 7) - 3]);
  // stack of 70 and a split into 70 parts: L = Σ_k (k + 1) · sum(part_k of stack(x)) gives dL/dx_i = i + 1 per element
  const ys = Array.from({ length: 70 }, (_, i) => { const a = mx.nd.array([i, 1, 2]); a.attachGrad(); return a; });
  mx.autograd.record(() => {
    const parts = mx.nd.split(mx.nd.stack(...ys, { axis: 0 }), { num_outputs: 70, axis: 0 });
    mx.nd.add_n(...parts.map((p, k) => p.sum().mul(k + 1))).backward();
  });
  for (const i of [0, 33, 69]) assert.deepEqual(Array.from(ys[i].grad.toTypedArray()), [i + 1, i + 1, i + 1]);
  // 300 heads h_k = (k + 1) · w: backward of all of them at once gives dw = Σ (k + 1) = 45150
  const w = mx.nd.array([2]);
  w.attachGrad();
  let heads;
  mx.autograd.record(() => { heads = Array.from({ length: 300 }, (_, k) => w.mul(k + 1)); });
  mx.autograd.backward(heads);
  assert.deepEqual(Array.from(w.grad.toTypedArray()), [45150]);
});
