// The optimizers of MXNet 1.9.1 that aggregate over whole arrays or accumulate gradients (LARS,
// LBSGD, DCASGD; js/optimizer.mjs) and the operators they and Gluon's zero_grad / AMP call
// (csrc/ops/multi_array.c: multi_sum_sq, multi_lars, all_finite, multi_all_finite, reset_arrays;
// csrc/ops/optimizer.c: preloaded_multi_*sgd*_update). Every expected value is recomputed here in
// plain float64 JS from the formulas of MXNet's source (optimizer.py, multi_lars-inl.h,
// preloaded_multi_sgd-inl.h, all_finite.cc), or worked by hand.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, optimizer: opt, gluon, autograd } = mx;
const values = (x) => Float64Array.from(x.toTypedArray(), Number);
const clip = (x, c) => (c == null ? x : Math.max(-c, Math.min(c, x)));
const sumSq = (v) => v.reduce((s, x) => s + x * x, 0);
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));
const tol = { rtol: 2e-5, atol: 2e-6 };

test('multi_sum_sq: one float32 sum of squares per array, of any dtype; inputs named array_<i>', () => {
  const r = rng(3);
  const arrays = [[3, 5], [7], [2, 2, 2]].map((shape, i) => {
    const n = shape.reduce((a, b) => a * b, 1);
    return nd.array(r.uniform(n, -2, 2), { shape, dtype: ['float32', 'float64', 'float16'][i] });
  });
  const out = nd.multi_sum_sq(arrays[0], arrays[2].astype('float32'), { num_arrays: 2 });
  assert.equal(out.dtype, 'float32');
  assert.deepEqual(out.shape, [2]);
  assertClose(values(out), [arrays[0], arrays[2]].map((a) => sumSq(values(a))), { rtol: 1e-6, atol: 0 });
  for (const a of arrays) assertClose(values(nd.multi_sum_sq(a, { num_arrays: 1 })), [sumSq(values(a))], { rtol: 1e-6, atol: 0 });
  assert.deepEqual(values(nd.multi_sum_sq(nd.array([1, -2, 3], { dtype: 'int32' }), { num_arrays: 1 })), Float64Array.of(14));
  const s = mx.sym.multi_sum_sq(mx.sym.var('a'), mx.sym.var('b'), { num_arrays: 2 });
  assert.deepEqual(JSON.parse(s.tojson()).nodes.at(-1).inputs.length, 2);
  assert.deepEqual(s.inferShape({ a: [2, 3], b: [4] })[1], [[2]]);
  throwsNaming(() => nd.multi_sum_sq(nd.ones([2]), nd.ones([2], { dtype: 'float64' }), { num_arrays: 2 }), /dtype float64/); // one dtype, as MXNet's
  throwsNaming(() => nd.multi_sum_sq(nd.ones([2]), { num_arrays: 0 }), /num_arrays/);
});

test('multi_lars: lr * eta * |w| / (|g| * rescale_grad + wd * |w| + eps), lr itself where a norm is 0; in place', () => {
  const lrs = [0.1, 0.2, 0.3, 0.4], wss = [4, 0, 9, 2.25], gss = [1, 1, 0, 0.16], wds = [0.1, 0.1, 0.2, 0.05];
  const eta = 0.5, eps = 1e-3, rescale = 0.25;
  const want = lrs.map((lr, i) => {
    const wn = Math.sqrt(wss[i]), gn = Math.sqrt(gss[i]);
    return wn > 0 && gss[i] > 0 ? lr * eta * wn / (gn * rescale + wds[i] * wn + eps) : lr;
  });
  // by hand, the first: 0.1 * 0.5 * 2 / (0.25 + 0.2 + 0.001)
  assert.ok(Math.abs(want[0] - 0.1 / 0.451) < 1e-12);
  const L = nd.array(lrs);
  const out = nd.multi_lars(L, nd.array(wss), nd.array(gss), nd.array(wds), { eta, eps, rescale_grad: rescale, out: L });
  assert.equal(out, L);
  assertClose(values(L), want, { rtol: 1e-6, atol: 0 });
  throwsNaming(() => nd.multi_lars(nd.ones([2], { dtype: 'float64' }), nd.ones([2]), nd.ones([2]), nd.ones([2]), { eta: 1, eps: 0 }), /float32/);
  throwsNaming(() => nd.multi_lars(nd.ones([2]), nd.ones([3]), nd.ones([2]), nd.ones([2]), { eta: 1, eps: 0 }), /shape/);
});

test('all_finite / multi_all_finite: 1 when every element is finite; init_output false only clears an existing flag', () => {
  assert.deepEqual(nd.all_finite(nd.array([1, -2, 3e38])).toArray(), [1]);
  assert.deepEqual(nd.all_finite(nd.array([1, Infinity])).toArray(), [0]);
  assert.deepEqual(nd.all_finite(nd.array([NaN], { dtype: 'float16' })).toArray(), [0]);
  assert.deepEqual(nd.all_finite(nd.array([1, 2], { dtype: 'int32' })).toArray(), [1]);
  assert.deepEqual(nd.multi_all_finite(nd.ones([2, 2]), nd.array([-Infinity]), { num_arrays: 2 }).toArray(), [0]);
  assert.deepEqual(nd.multi_all_finite(nd.ones([2, 2]), nd.zeros([3], { dtype: 'float64' }), { num_arrays: 2 }).toArray(), [1]);
  // AMP's loss scaler folds chunks into one flag: the first call initializes it, the rest only clear it
  const flag = nd.zeros([1]);
  nd.multi_all_finite(nd.ones([3]), { num_arrays: 1, out: flag });
  assert.deepEqual(flag.toArray(), [1]);
  nd.multi_all_finite(nd.array([NaN]), { num_arrays: 1, init_output: false, out: flag });
  assert.deepEqual(flag.toArray(), [0]);
  nd.multi_all_finite(nd.ones([3]), { num_arrays: 1, init_output: false, out: flag });
  assert.deepEqual(flag.toArray(), [0]);
  assert.equal(nd.all_finite(nd.ones([2])).dtype, 'float32');
});

test('reset_arrays sets every array to zero in place and returns no outputs', () => {
  const a = nd.array([[1, 2], [3, 4]]), b = nd.array([5, 6, 7], { dtype: 'int32' }), c = nd.array([1.5], { dtype: 'float16' });
  const out = nd.reset_arrays(a, b, c, { num_arrays: 3 });
  assert.deepEqual(out, []);
  assert.deepEqual(a.toArray(), [[0, 0], [0, 0]]);
  assert.deepEqual(b.toArray(), [0, 0, 0]);
  assert.deepEqual(c.toArray(), [0]);
  throwsNaming(() => nd.reset_arrays(a, b, { num_arrays: 3 }), /input/);
});

// MultiSGDKernel / PreloadedMultiSGDKernel: mom = momentum mom - lr wd w - lr clip(rescale g); w += mom
function refMultiSgd(w, g, mom, lr, wd, { momentum = 0, rescale = 1, clipG = null } = {}) {
  const W = Float64Array.from(w), M = Float64Array.from(mom ?? w.map(() => 0));
  for (let i = 0; i < W.length; i++) {
    M[i] = momentum * M[i] - lr * wd * W[i] - lr * clip(rescale * g[i], clipG);
    W[i] += M[i];
  }
  return { w: W, mom: M };
}

test('preloaded_multi_sgd_update / _mom_ / _mp_ / _mp_mom_: multi_sgd with the learning rates and weight decays as inputs', () => {
  const r = rng(11);
  const shapes = [[3, 4], [5], [2, 3]];
  const lrs = [0.1, 0.05, 0.2], wds = [0.01, 0, 0.02];
  const make = (dtype) => shapes.map((s) => nd.array(r.uniform(s[0] * (s[1] ?? 1), -1, 1), { shape: s, dtype }));
  for (const [variant, momentum, mp] of [['preloaded_multi_sgd_update', 0, false], ['preloaded_multi_sgd_mom_update', 0.9, false],
    ['preloaded_multi_mp_sgd_update', 0, true], ['preloaded_multi_mp_sgd_mom_update', 0.9, true]]) {
    const ws = make(mp ? 'float16' : 'float32'), gs = make(mp ? 'float16' : 'float32'), moms = make('float32');
    const w32 = ws.map((w) => w.astype('float32'));
    const before = ws.map((w, i) => ({ w: values(w), g: values(gs[i]), m: values(moms[i]) }));
    const inputs = ws.flatMap((w, i) => [w, gs[i], ...(momentum ? [moms[i]] : []), ...(mp ? [w32[i]] : [])]);
    const attrs = { num_weights: 3, rescale_grad: 0.5, clip_gradient: 0.3, ...(momentum ? { momentum } : {}) };
    nd[variant](...inputs, nd.array(lrs), nd.array(wds), { ...attrs, out: ws });
    ws.forEach((w, i) => {
      const want = refMultiSgd(before[i].w, before[i].g, momentum ? before[i].m : null, lrs[i], wds[i],
        { momentum, rescale: 0.5, clipG: 0.3 });
      assertClose(values(w), want.w, mp ? { rtol: 2e-3, atol: 2e-3 } : tol);
      if (momentum) assertClose(values(moms[i]), want.mom, tol);
      if (mp) assertClose(values(w32[i]), want.w, tol); // the float32 master copy, not rounded to float16
    });
  }
  // the symbol's inputs: the groups, then lrs and wds; momentum states are auxiliary (mutated)
  const v = (n) => mx.sym.var(n);
  const s = mx.sym.preloaded_multi_sgd_mom_update(v('w0'), v('g0'), v('m0'), v('w1'), v('g1'), v('m1'), v('lrs'), v('wds'),
    { num_weights: 2, momentum: 0.9 });
  assert.deepEqual(s.listArguments(), ['w0', 'g0', 'w1', 'g1', 'lrs', 'wds']);
  assert.deepEqual(s.listAuxiliaryStates(), ['m0', 'm1']);
  const w = nd.ones([2]);
  throwsNaming(() => nd.preloaded_multi_sgd_update(w, nd.ones([2]), nd.array([0.1, 0.1]), nd.array([0]), { num_weights: 1 }),
    /learning rates/);
  throwsNaming(() => nd.preloaded_multi_sgd_update(w, nd.ones([2]), nd.array([0.1], { dtype: 'float64' }), nd.array([0]), { num_weights: 1 }),
    /lrs/);
  assert.deepEqual(w.toArray(), [1, 1]); // unchanged by the failed calls
});

// Python's LARS, aggregated path, in float64: the step's learning rate lr, the per-weight lr from
// multi_lars for names that are not biases/gamma/beta, then the preloaded SGD (momentum) rule.
function refLars(ws, gs, moms, names, { lr, wds, eta, eps, rescale, momentum, clipG }) {
  return ws.map((w, i) => {
    let lri = lr;
    if (!/(gamma|beta|bias)$/.test(names[i])) {
      const wn = Math.sqrt(sumSq(w)), gn = Math.sqrt(sumSq(gs[i]));
      if (wn > 0 && gn > 0) lri = lr * eta * wn / (gn * rescale + wds[i] * wn + eps);
    }
    return refMultiSgd(w, gs[i], moms[i], lri, wds[i], { momentum, rescale, clipG });
  });
}

test('LARS: per-layer learning rates from the weight and gradient norms, momentum corrected by the lr change', () => {
  const names = ['a_bias', 'b_weight', 'c_gamma', 'd_weight', 'e_weight'];
  const shapes = [[4], [3, 5], [4], [2, 3, 2], [7]];
  const sched = (n) => 0.2 / n; // lr 0.2, 0.1, 0.0667: the momentum is scaled by 0.5, then 2/3
  const o = new opt.LARS({ momentum: 0.9, eta: 0.02, eps: 1e-4, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.8,
    lr_scheduler: sched, param_idx2name: Object.fromEntries(names.map((n, i) => [i, n])) });
  assert.equal(o.aggregateNum, 4); // five weights: preloaded groups of 4 and 1
  // LARS's set_wd_mult: only _weight parameters decay
  const wds = names.map((n) => (n.endsWith('_weight') ? 0.01 : 0));
  const r = rng(5);
  const ws = shapes.map((s) => nd.array(r.uniform(s.reduce((a, b) => a * b, 1), -1, 1), { shape: s }));
  const idx = names.map((_, i) => i);
  const states = idx.map((i) => o.create_state_multi_precision(i, ws[i]));
  let W = ws.map(values), M = ws.map((w) => new Float64Array(w.size));
  let lastLr = null;
  for (let step = 1; step <= 3; step++) {
    const gs = shapes.map((s) => nd.array(r.uniform(s.reduce((a, b) => a * b, 1), -3, 3), { shape: s }));
    o.update_multi_precision(idx, ws, gs, states);
    const lr = sched(step), momentum = lastLr === null ? 0.9 : 0.9 * lr / lastLr;
    lastLr = lr;
    const out = refLars(W, gs.map(values), M, names, { lr, wds, eta: 0.02, eps: 1e-4, rescale: 0.5, momentum, clipG: 0.8 });
    W = out.map((x) => x.w);
    M = out.map((x) => x.mom);
    ws.forEach((w, i) => assertClose(values(w), W[i], tol));
    states.forEach((s, i) => assertClose(values(s), M[i], tol));
  }
  assert.equal(o.numUpdate, 3);
  // without momentum there is no state, and preloaded_multi_sgd_update runs
  const o2 = opt.create('lars', { learning_rate: 0.1, eta: 0.5 });
  const w = nd.array([3, 4]), g = nd.array([0.6, 0.8]);
  assert.equal(o2.create_state(0, w), null);
  o2.update(0, w, g, null);
  // |w| = 5, |g| = 1: lr = 0.1 * 0.5 * 5 / 1 = 0.25; w -= 0.25 g
  assertClose(values(w), [3 - 0.25 * 0.6, 4 - 0.25 * 0.8], tol);
});

test('LARS with multi_precision: float16 weights update float32 master copies (preloaded_multi_mp_*)', () => {
  const o = new opt.LARS({ momentum: 0.5, eta: 0.1, learning_rate: 0.05, multi_precision: true, momentum_correction: false });
  const w = nd.array([0.5, -0.25, 1, 2], { dtype: 'float16' }), g = nd.array([0.1, 0.2, -0.3, 0.4], { dtype: 'float16' });
  const state = o.create_state_multi_precision(0, w);
  assert.equal(state[1].dtype, 'float32');
  const [wv, gv] = [values(w), values(g)];
  o.update_multi_precision([0], [w], [g], [state]);
  const [want] = refLars([wv], [gv], [new Float64Array(4)], ['0'], { lr: 0.05, wds: [0], eta: 0.1, eps: 0, rescale: 1, momentum: 0.5 });
  assertClose(values(state[1]), want.w, tol);
  assertClose(values(state[0]), want.mom, tol);
  assertClose(values(w), want.w, { rtol: 1e-3, atol: 1e-3 });
});

test('LBSGD: gradients summed over batch_scale updates, a linear warmup of the lr, the weight kept between', () => {
  const o = new opt.LBSGD({ momentum: 0.9, batch_scale: 2, warmup_epochs: 1, updates_per_epoch: 4, learning_rate: 0.1,
    wd: 0.01, rescale_grad: 0.5 });
  const r = rng(9);
  const w = nd.array(r.uniform(6, -1, 1), { shape: [2, 3] });
  const state = o.create_state_multi_precision(0, w);
  let W = values(w), M = new Float64Array(6), cum = null;
  // num_cums 1..4: updates at 2 (mult 1 + (2 - 1) * 2/4 = 1.5) and 4 (past the warmup: batch_scale 2)
  const mult = { 2: 1.5, 4: 2 };
  for (let n = 1; n <= 4; n++) {
    const g = nd.array(r.uniform(6, -2, 2), { shape: [2, 3] });
    const gv = values(g);
    o.update(0, w, g, state);
    cum = cum ? cum.map((x, i) => x + gv[i]) : gv;
    if (n % 2 === 0) {
      const ref = refMultiSgd(W, cum.map((x) => x / 2), M, 0.1 * mult[n], 0.01, { momentum: 0.9, rescale: 0.5 });
      // sgd_mom_update: mom = momentum mom - lr wd w - lr rescale g; w += mom
      W = ref.w;
      M = ref.mom;
      cum = null;
    }
    assertClose(values(w), W, tol);
  }
  // warmup_strategy 'lars': lr times clip(sqrt(|w|^2 / (|g|^2 + wd |w|^2 + 1e-18)), 0.01, 100)
  const o2 = new opt.LBSGD({ warmup_strategy: 'lars', learning_rate: 0.1 });
  const w2 = nd.array([3, 4]), g2 = nd.array([0.3, 0.4]);
  o2.update(0, w2, g2, o2.create_state(0, w2));
  // |w|^2 = 25, |g|^2 = 0.25: factor 10, lr 1: w -= g
  assertClose(values(w2), [2.7, 3.6], tol);
});

test('DCASGD: the step -lr (g + wd w + lamda g^2 (w - w_prev)), with and without momentum', () => {
  for (const momentum of [0, 0.8]) {
    const o = new opt.DCASGD({ momentum, lamda: 0.1, learning_rate: 0.05, wd: 0.02, rescale_grad: 2, clip_gradient: 1.5 });
    const r = rng(21);
    const w = nd.array(r.uniform(5, -1, 1));
    const state = o.create_state(0, w);
    assert.equal(state[0] === null, momentum === 0);
    let W = values(w), prev = values(w), M = new Float64Array(5);
    for (let s = 0; s < 3; s++) {
      const g = nd.array(r.uniform(5, -1, 1));
      const gv = values(g).map((x) => clip(2 * x, 1.5));
      o.update(0, w, g, state);
      const step = W.map((x, i) => -0.05 * (gv[i] + 0.02 * x + 0.1 * gv[i] * gv[i] * (x - prev[i])));
      M = momentum ? M.map((m, i) => momentum * m + step[i]) : step;
      prev = W;
      W = W.map((x, i) => x + M[i]);
      assertClose(values(w), W, tol);
      assertClose(values(state[1]), prev, tol);
    }
  }
});

test('a Trainer trains with LARS, LBSGD and DCASGD; the states round trip', async () => {
  for (const name of ['lars', 'lbsgd', 'dcasgd']) {
    mx.random.seed(1);
    const net = new gluon.nn.Dense(1, { inUnits: 2 });
    net.initialize(new mx.init.Constant(0.5));
    const trainer = new gluon.Trainer(net.collectParams(), name,
      name === 'lars' ? { learning_rate: 1, momentum: 0.5, eta: 0.1 } : { learning_rate: 0.05, momentum: 0.5 });
    const x = nd.array([[1, 2], [2, 1], [0, 1], [1, 0]]), y = nd.array([[5], [4], [2], [1]]); // y = x . [1, 2] + 0... roughly
    const loss = new gluon.loss.L2Loss();
    const lossAt = () => loss(net(x), y).mean().item();
    const start = lossAt();
    for (let i = 0; i < 30; i++) {
      let L;
      autograd.record(() => { L = loss(net(x), y); });
      L.backward();
      trainer.step(4);
    }
    assert.ok(lossAt() < start / 2, `${name}: loss ${start} -> ${lossAt()}`);
    const bytes = trainer.saveStates();
    await trainer.loadStates(bytes);
  }
});
