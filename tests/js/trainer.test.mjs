// gluon.Trainer (js/trainer.mjs) as MXNet 1.9.1's gluon/trainer.py: gradients filled by hand, one
// or more steps checked against the optimizer's update rule in plain float64 JS (rescale_grad =
// 1 / batch_size, wd, momentum, lr_mult), the argument forms, learning rate access, stale
// gradients, several contexts (local kvstore: summed gradients, update on the kvstore or per
// context), saveStates / loadStates restoring the optimizer and its momentum exactly, and errors.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, gluon, optimizer: opt, lr_scheduler: lrs } = mx;
const { Trainer } = gluon;
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));
const values = (x) => Float64Array.from(x.toTypedArray(), Number);
const tol = { rtol: 1e-5, atol: 1e-6 };

// A parameter holding `vals` (float32) on `ctx`.
function param(name, vals, shape, { ctx = null, ...opts } = {}) {
  const p = new gluon.Parameter(name, { shape, ...opts });
  p.initialize({ ctx });
  p.setData(nd.array(Float32Array.from(vals), { shape }));
  return p;
}
// Writes a gradient as backward would (fresh).
function setGrad(p, vals, k = 0) {
  const g = p.listGrad()[k];
  nd.array(Float32Array.from(vals), { shape: p.shape }).copyto(g);
  g._freshGrad = true;
}

test('step: SGD with momentum and wd, rescale_grad = 1 / batch_size, lr_mult read from the Parameter', () => {
  const r = rng(3);
  const w0 = Float64Array.from(r.uniform(15)), b0 = Float64Array.from(r.uniform(3));
  const w = param('fc_weight', w0, [3, 5]), b = param('fc_bias', b0, [3]);
  const trainer = new Trainer([w, b], 'sgd', { learning_rate: 0.1, momentum: 0.9, wd: 0.01 });
  b.lrMult = 2; // the optimizer's param_dict holds the Parameters themselves
  const ref = { w: Float64Array.from(w0), b: Float64Array.from(b0) };
  const mom = { w: new Float64Array(15), b: new Float64Array(3) };
  for (let s = 0; s < 2; s++) {
    const gw = Float64Array.from(r.uniform(15, -2, 2)), gb = Float64Array.from(r.uniform(3, -2, 2));
    setGrad(w, gw);
    setGrad(b, gb);
    trainer.step(4);
    for (const [k, g, lr] of [['w', gw, 0.1], ['b', gb, 0.2]]) {
      for (let i = 0; i < g.length; i++) {
        mom[k][i] = 0.9 * mom[k][i] - lr * (g[i] / 4 + 0.01 * ref[k][i]);
        ref[k][i] += mom[k][i];
      }
    }
  }
  assertClose(values(w.data()), ref.w, tol);
  assertClose(values(b.data()), ref.b, tol);
  assert.equal(trainer.optimizer.rescaleGrad, 0.25);
  assert.equal(trainer.optimizer.numUpdate, 2);
  assert.ok(trainer.optimizer instanceof opt.SGD);
});

test('a ParameterDict (sorted names), camelCase optimizer parameters, learningRate and setLearningRate', () => {
  const net = new gluon.nn.Dense(2, { inUnits: 3, prefix: 'fc_' });
  net.initialize();
  const trainer = new Trainer(net.collectParams(), 'sgd', { learningRate: 0.5 });
  assert.deepEqual(trainer._params.map((p) => p.name), ['fc_bias', 'fc_weight']);
  assert.equal(trainer.learningRate, 0.5);
  assert.equal(trainer.learning_rate, 0.5);
  const w0 = values(net.weight.data());
  setGrad(net.weight, [1, 2, 3, 4, 5, 6]);
  setGrad(net.bias, [1, -1]);
  trainer.step(2);
  assertClose(values(net.weight.data()), w0.map((v, i) => v - 0.5 * (i + 1) / 2), tol);
  trainer.setLearningRate(0.25);
  assert.equal(trainer.learningRate, 0.25);
  const b1 = values(net.bias.data());
  setGrad(net.weight, [0, 0, 0, 0, 0, 0]);
  setGrad(net.bias, [1, -1]);
  trainer.step(1);
  assertClose(values(net.bias.data()), [b1[0] - 0.25, b1[1] + 0.25], tol);
  // the positional dict and the options object: the same Trainer
  const t2 = new Trainer({ params: net.collectParams(), optimizer: 'adam', optimizer_params: { learning_rate: 0.125 }, kvstore: null });
  assert.equal(t2.learningRate, 0.125);
  assert.ok(t2.optimizer instanceof opt.Adam);
  // a scheduler owns the learning rate
  const sched = new lrs.FactorScheduler(1, 0.5, { base_lr: 1 });
  const t3 = new Trainer(net.collectParams(), 'sgd', { lr_scheduler: sched });
  assert.equal(t3.learningRate, 1);
  throwsNaming(() => t3.setLearningRate(0.1), /LRScheduler of the optimizer has already been defined/);
});

test('an Optimizer instance (its param_dict set to the parameters); optimizer_params must then be empty', () => {
  const p = param('w', [1, 2, 3], [3], { lr_mult: 0.5 });
  const adam = new opt.Adam({ learning_rate: 0.1 });
  const trainer = new Trainer([p], adam);
  assert.equal(trainer.optimizer, adam);
  setGrad(p, [1, 1, 1]);
  trainer.step(1);
  // first Adam step: m = 0.1 g, v = 0.001 g^2, lr_t = lr * lr_mult * sqrt(0.001) / 0.1 -> w - 0.05 * sqrt(0.001)/0.1 * 0.1 / (sqrt(0.001) + 1e-8)
  const step = 0.05 * Math.sqrt(0.001) / 0.1 * 0.1 / (Math.sqrt(0.001) + 1e-8);
  assertClose(values(p.data()), [1 - step, 2 - step, 3 - step], tol);
  throwsNaming(() => new Trainer([p], new opt.SGD(), { learning_rate: 0.1 }),
    /optimizer_params must be None if optimizer is an instance of Optimizer instead of str/);
});

test('grad_req null parameters are skipped', () => {
  const a = param('a', [1, 2], [2]), frozen = param('frozen', [5, 6], [2]);
  frozen.gradReq = 'null';
  const trainer = new Trainer([a, frozen], 'sgd', { learning_rate: 1 });
  setGrad(a, [1, 1]);
  trainer.step(1);
  assert.deepEqual(a.data().toArray(), [0, 1]);
  assert.deepEqual(frozen.data().toArray(), [5, 6]);
});

test('stale gradients: an error naming the parameter unless ignore_stale_grad; marked stale after each update', () => {
  const a = param('a', [1, 2], [2]), b = param('b', [3, 4], [2]);
  const trainer = new Trainer([a, b], 'sgd', { learning_rate: 1 });
  // never written by backward: stale, as MXNet's
  throwsNaming(() => trainer.step(1), /Gradient of Parameter `a` on context cpu\(0\) has not been updated by backward since last `step`/);
  setGrad(a, [1, 1]);
  throwsNaming(() => trainer.step(1), /Gradient of Parameter `b` on context cpu\(0\) has not been updated by backward since last `step`/);
  trainer.step(1, { ignoreStaleGrad: true });
  assert.deepEqual(a.data().toArray(), [0, 1]);
  assert.deepEqual(b.data().toArray(), [3, 4]);
  assert.equal(a.grad()._freshGrad, false);
  setGrad(b, [1, 1]);
  trainer.step(1, { ignore_stale_grad: true }); // a is stale now: only b moves
  assert.deepEqual(a.data().toArray(), [0, 1]);
  assert.deepEqual(b.data().toArray(), [2, 3]);
  throwsNaming(() => trainer.update(1), /Gradient of Parameter `a`/);
});

test('allreduceGrads() then update(): on one context the same as step()', () => {
  const a = param('a', [1, 2], [2]), a2 = param('a', [1, 2], [2]);
  const t1 = new Trainer([a], 'sgd', { learning_rate: 0.5, momentum: 0.5 });
  const t2 = new Trainer([a2], 'sgd', { learning_rate: 0.5, momentum: 0.5 });
  for (let s = 0; s < 2; s++) {
    setGrad(a, [1, -1]);
    setGrad(a2, [1, -1]);
    t1.step(2);
    t2.allreduceGrads();
    t2.update(2);
  }
  assert.deepEqual(a2.data().toArray(), a.data().toArray());
  // mom = -0.25 g, then -0.375 g: w - 0.625 g
  assert.deepEqual(a.data().toArray(), [0.375, 2.625]);
});

test('several contexts: gradients summed (local kvstore), on the kvstore or per context; kvstore null keeps them apart', () => {
  const ctx = [mx.cpu(0), mx.cpu(1)];
  const make = () => {
    const p = param('w', [1, 2, 3], [3], { ctx });
    setGrad(p, [1, 2, 3], 0);
    setGrad(p, [3, 2, 1], 1);
    return p;
  };
  // default ('device', update on the kvstore): w - lr * (g0 + g1) / batch on every context
  const p = make();
  const t = new Trainer([p], 'sgd', { learning_rate: 0.5, momentum: 0.5 });
  t.step(2);
  for (const d of p.listData()) assert.deepEqual(d.toArray(), [0, 1, 2]);
  assert.deepEqual(p.listGrad()[0].toArray(), [1, 2, 3]); // gradients are pushed, not overwritten
  throwsNaming(() => t.allreduceGrads(), /allreduce_grads\(\) when parameters are updated on kvstore is not supported/);
  throwsNaming(() => t.update(2), /update\(\) when parameters are updated on kvstore is not supported/);
  // update_on_kvstore false: the sum in every gradient, each context's updater
  const q = make();
  const tq = new Trainer([q], 'sgd', { learning_rate: 0.5, momentum: 0.5 }, 'local', null, false);
  tq.allreduceGrads();
  for (const g of q.listGrad()) assert.deepEqual(g.toArray(), [4, 4, 4]);
  tq.update(2);
  for (const d of q.listData()) assert.deepEqual(d.toArray(), [0, 1, 2]);
  assert.equal(tq._updaters.length, 2);
  // same momentum on both: a second step matches the kvstore trainer
  setGrad(p, [1, 2, 3], 0);
  setGrad(p, [3, 2, 1], 1);
  setGrad(q, [1, 2, 3], 0);
  setGrad(q, [3, 2, 1], 1);
  t.step(2);
  tq.step(2);
  for (const d of [...p.listData(), ...q.listData()]) assert.deepEqual(d.toArray(), [-1.5, -0.5, 0.5]);
  // no kvstore: each context with its own gradient
  const n = make();
  const tn = new Trainer([n], 'sgd', { learning_rate: 1 }, { kvstore: null });
  tn.step(1);
  assert.deepEqual(n.listData()[0].toArray(), [0, 0, 0]);
  assert.deepEqual(n.listData()[1].toArray(), [-2, 0, 2]);
  // a KVStore-like object of type 'local' (a class instance: a plain object last would be the options)
  class KVStore { constructor(type) { this.type = type; } }
  const l = make();
  new Trainer([l], 'sgd', { learning_rate: 0.5 }, new KVStore('local')).step(2);
  assert.deepEqual(l.listData()[1].toArray(), [0, 1, 2]);
});

test('saveStates / loadStates: the optimizer and its momentum restored exactly (file, bytes, file URL)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-trainer-'));
  try {
    const r = rng(5);
    const w0 = Float64Array.from(r.uniform(7));
    const grads = Array.from({ length: 4 }, () => Float64Array.from(r.uniform(7, -2, 2)));
    const p = param('w', w0, [7]);
    const trainer = new Trainer([p], 'sgd', { learning_rate: 0.1, momentum: 0.9, wd: 0.01 });
    for (const g of grads.slice(0, 2)) { setGrad(p, g); trainer.step(2); }
    const file = path.join(dir, 'trainer.states');
    const bytes = trainer.saveStates(file);
    assert.ok(bytes instanceof Uint8Array);
    const mom = values(trainer._updaters[0].states.get(0));
    const saved = values(p.data());
    // the file is an NDArray list (nd.load reads it)
    const listed = await nd.load(file);
    assert.deepEqual(Object.keys(listed).sort(), ['__mxw_updater_states__', 'state:0']);
    assert.deepEqual(Array.from(values(listed['state:0'])), Array.from(mom));
    // one more step changes the momentum; loading restores it and the update count
    setGrad(p, grads[2]);
    trainer.step(2);
    const old = trainer.optimizer;
    assert.equal(old.numUpdate, 3);
    await trainer.loadStates(file);
    assert.notEqual(trainer.optimizer, old);
    assert.ok(trainer.optimizer instanceof opt.SGD);
    assert.equal(trainer.optimizer.numUpdate, 2);
    assert.equal(trainer.optimizer.momentum, 0.9);
    assert.equal(trainer.learningRate, 0.1);
    assert.deepEqual(Array.from(values(trainer._updaters[0].states.get(0))), Array.from(mom));
    assert.equal(trainer.optimizer.paramDict[0], p);
    // a fresh trainer on the saved weights continues exactly as the original would have
    const q = param('w', saved, [7]);
    const t2 = new Trainer([q], 'sgd', { learning_rate: 0.5 });
    await t2.loadStates(bytes);
    p.setData(nd.array(Float32Array.from(saved)));
    await trainer.loadStates(pathToFileURL(file).href);
    setGrad(p, grads[3]);
    setGrad(q, grads[3]);
    trainer.step(2);
    t2.step(2);
    assert.deepEqual(Array.from(values(q.data())), Array.from(values(p.data())));
    // ... and as the formula from the saved momentum
    const want = saved.map((w, i) => w + (0.9 * mom[i] - 0.1 * (grads[3][i] / 2 + 0.01 * w)));
    assertClose(values(q.data()), want, tol);
    // Adam's state pair and its per-index step count (bias correction) survive too
    const a = param('a', w0, [7]);
    const ta = new Trainer([a], 'adam', { learning_rate: 0.01 });
    setGrad(a, grads[0]);
    ta.step(1);
    const b = param('a', values(a.data()), [7]);
    const tb = new Trainer([b], 'sgd');
    await tb.loadStates(ta.saveStates());
    assert.ok(tb.optimizer instanceof opt.Adam);
    assert.deepEqual(tb.optimizer._indexUpdateCount, { 0: 1 });
    setGrad(a, grads[1]);
    setGrad(b, grads[1]);
    ta.step(1);
    tb.step(1);
    assert.deepEqual(Array.from(values(b.data())), Array.from(values(a.data())));
    await assert.rejects(trainer.loadStates(nd.saveBytes({ x: nd.zeros([1]) })), /not an optimizer states file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('errors: kvstore, parameters, optimizer names and arguments', () => {
  const p = param('w', [1], [1]);
  throwsNaming(() => new Trainer([p], 'sgd', {}, 'dist_sync'), /kvstore 'dist_sync' is not supported/);
  throwsNaming(() => new Trainer([p], 'sgd', null, 'nccl'), /'nccl'/);
  throwsNaming(() => new Trainer({ params: [p], optimizer: 'sgd', kvstore: 'horovod' }), /'horovod'/);
  throwsNaming(() => new Trainer([p, 3], 'sgd'), /First argument must be a list or dict of Parameters, got list of/);
  throwsNaming(() => new Trainer(p, 'sgd'), /First argument must be a list or dict of Parameters/);
  throwsNaming(() => new Trainer([p], 'nosuch'), /Cannot find optimizer nosuch/);
  throwsNaming(() => new Trainer([p], 'sgd', { nosuch: 1 }), /nosuch/);
  throwsNaming(() => new Trainer([p], 42), /optimizer/);
  throwsNaming(() => new Trainer([p]), /missing required argument 'optimizer'/);
  throwsNaming(() => new Trainer([new gluon.Parameter('u', { shape: [2] })], 'sgd'), /Parameter 'u' has not been initialized/);
  const c2 = param('c2', [1, 2], [2], { ctx: [mx.cpu(0), mx.cpu(1)] });
  throwsNaming(() => new Trainer([p, c2], 'sgd'), /All Parameters must be initialized on the same set of contexts/);
  // deferred initialization: the Trainer is made; a step before the first forward pass names it
  const d = new gluon.Parameter('d', { shape: [0, 2], allow_deferred_init: true });
  d.initialize();
  const td = new Trainer([d], 'sgd');
  assert.throws(() => td.step(1), /Parameter 'd' has not been initialized yet because initialization was deferred/);
  throwsNaming(() => new Trainer([p], 'sgd').step(), /batch_size/);
});

test('with autograd: backward writes fresh gradients, step uses them and marks them stale', () => {
  const p = param('w', [1, 2, 3], [3]);
  const trainer = new Trainer([p], 'sgd', { learning_rate: 0.5 });
  const x = nd.array([2, 4, 6]);
  // y = w * w * x: dy/dw = 2 w x = [4, 16, 36]
  const y = mx.autograd.record(() => p.data().mul(p.data()).mul(x));
  y.backward();
  assert.equal(p.grad()._freshGrad, true);
  trainer.step(2);
  assert.deepEqual(p.data().toArray(), [1 - 0.5 * 4 / 2, 2 - 0.5 * 16 / 2, 3 - 0.5 * 36 / 2]);
  assert.equal(p.grad()._freshGrad, false);
  throwsNaming(() => trainer.step(2), /Gradient of Parameter `w`/);
});

test('float16 parameters with multi_precision: a float32 master copy and momentum, saved and loaded', async () => {
  const p = new gluon.Parameter('w', { shape: [3], dtype: 'float16' });
  p.initialize();
  p.setData(nd.array([1, 2, 3]));
  const t = new Trainer([p], 'sgd', { learning_rate: 0.5, momentum: 0.9, multi_precision: true });
  nd.array([1, 1, 1], { dtype: 'float16' }).copyto(p.grad());
  p.grad()._freshGrad = true;
  t.step(1);
  // momentum = -0.5 g; master = w + momentum
  assert.equal(p.data().dtype, 'float16');
  assert.deepEqual(p.data().toArray(), [0.5, 1.5, 2.5]);
  const [mom, master] = t._updaters[0].states.get(0);
  assert.deepEqual([mom.dtype, master.dtype], ['float32', 'float32']);
  const t2 = new Trainer([p], 'sgd');
  await t2.loadStates(t.saveStates());
  assert.equal(t2.optimizer.multiPrecision, true);
  assert.deepEqual(t2._updaters[0].states.get(0).map((s) => s.toArray()), [[-0.5, -0.5, -0.5], [0.5, 1.5, 2.5]]);
});
