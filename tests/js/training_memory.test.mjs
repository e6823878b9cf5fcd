// Memory under training (acceptance: memory stays flat): 1,000 LeNet training steps leave
// mx.memory() where it was after the first step, imperatively and hybridized; a hybridized step's
// working memory (peak bytes above the resting state) is below the imperative one's.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { lenetOf } from './nn_helpers.mjs';
import { rng } from './oracle.mjs';

const { nd, autograd, gluon } = mx;
const { nn } = gluon;

const lenet = () => lenetOf(mx);

function setup(hybrid) {
  mx.random.seed(1);
  const net = lenet();
  net.initialize(new mx.init.Xavier());
  if (hybrid) net.hybridize();
  const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.05, momentum: 0.9 });
  const loss = new gluon.loss.SoftmaxCrossEntropyLoss();
  const x = mx.keep(nd.array(Array.from(rng(2).uniform(8 * 28 * 28, 0, 1))).reshape([8, 1, 28, 28]));
  const y = mx.keep(nd.array([0, 1, 2, 3, 4, 5, 6, 7]));
  const step = () => mx.tidy(() => {
    const l = autograd.record(() => loss(net(x), y));
    l.backward();
    trainer.step(8);
    return l.mean().asscalar();
  });
  return { step };
}

for (const hybrid of [false, true]) {
  test(`1,000 LeNet training steps (${hybrid ? 'hybridized' : 'imperative'}): memory flat after the first step`, () => {
    const { step } = setup(hybrid);
    const first = step();
    step();
    const after = mx.memory();
    let last = first;
    for (let i = 0; i < 998; i++) last = step();
    const end = mx.memory();
    assert.equal(end.numArrays, after.numArrays, 'live arrays');
    assert.equal(end.bytes, after.bytes, 'bytes held');
    assert.ok(last < first, `the loss fell (${first} -> ${last})`);
  });
}

test('a hybridized training step uses less working memory than an imperative one', () => {
  // Counted from before the network exists: the same weights, gradients and momenta in both modes,
  // plus what a step needs at its peak -- for the hybridized one including its training arena, which
  // stays pooled between steps (so it counts even though it is not freed after the step).
  const peak = {};
  for (const hybrid of [false, true]) {
    const base = mx.memory().bytes;
    const { step } = setup(hybrid);
    step();
    step();
    mx.memory({ resetPeak: true });
    step();
    peak[hybrid] = mx.memory().peakBytes - base;
  }
  console.log(`memory of a LeNet being trained, at a step's peak (batch 8): imperative ${peak.false} B, hybridized ${peak.true} B`);
  assert.ok(peak.true < peak.false, `hybridized ${peak.true} < imperative ${peak.false}`);
});

test('a loop without tidy (only the loss disposed) does not pin a training arena per step', () => {
  // After backward (no retain_graph), a hybridized call's saved arena returns to its pool even
  // though the call's output array still waits for the garbage collector.
  const net = new nn.HybridSequential();
  net.add(new nn.Dense(256, { activation: 'relu', inUnits: 784 }), new nn.Dense(10, { inUnits: 256 }));
  net.initialize();
  net.hybridize();
  const loss = new gluon.loss.SoftmaxCrossEntropyLoss();
  const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.01 });
  const x = nd.array(Array.from(rng(3).uniform(4 * 784, 0, 1))).reshape([4, 784]), y = nd.array([1, 2, 3, 4]);
  const step = () => { const l = autograd.record(() => loss(net(x), y)); l.backward(); trainer.step(4); l.dispose(); };
  step();
  step();
  const before = mx.memory().bytes;
  for (let i = 0; i < 200; i++) step();
  const perStep = (mx.memory().bytes - before) / 200;
  // the weights alone are 784 * 256 * 4 = 802,816 bytes: an arena pinned per step would show
  assert.ok(perStep < 4096, `bytes held per step: ${perStep}`);
});
