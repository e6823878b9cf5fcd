// mx.optimizer (js/optimizer.mjs) and the update operators (csrc/ops/optimizer.c): three steps of
// every optimizer on an odd-shaped float32 weight against MXNet 1.9.1's documented update rule
// recomputed in plain float64 JS here (rescale_grad, clip_gradient, wd, momentum, lr_mult /
// wd_mult, a scheduler with warmup), float16 weights with multi_precision, each nd.*_update op
// called directly (float64 with float32-exact attributes: exact to rounding), the optimizer API
// (create / register, learning rate, update counts, Python-style subclasses) and the Updater's
// states round trip.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose, sizeOf, roundToFormat, FLOAT16 } from './oracle.mjs';

const { nd, optimizer: opt, lr_scheduler: lrs, gluon } = mx;
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));
const values = (x) => Float64Array.from(x.toTypedArray(), Number);
const clip = (x, c) => (c === undefined || c === null ? x : Math.max(-c, Math.min(c, x)));
const sign = (x) => (x > 0 ? 1 : x < 0 ? -1 : 0);
const fp16 = (v) => values(nd.array(Float64Array.from(v), { dtype: 'float16' }));

// Runs `steps` updates of one weight (shape, dtype) through create_state_multi_precision and
// update_multi_precision, as the Updater does. Returns the final weight, the state, and the
// float64 values the run started from (the weight and gradients as stored in `dtype`).
function run(o, { shape = [3, 5], steps = 3, dtype = 'float32', seed = 7, index = 0, wScale = 1, gScale = 2 } = {}) {
  const n = sizeOf(shape);
  const r = rng(seed);
  const w = nd.array(r.uniform(n, -wScale, wScale), { shape, dtype });
  const w0 = values(w);
  const grads = [];
  const state = o.create_state_multi_precision(index, w);
  for (let s = 0; s < steps; s++) {
    const g = nd.array(r.uniform(n, -gScale, gScale), { shape, dtype });
    grads.push(values(g));
    o.update_multi_precision(index, w, g, state);
    g.dispose();
  }
  return { w: values(w), w0, grads, state, weight: w };
}
// The documented rule, step by step, in float64: stepFn(i, w, g, step) updates element i.
function reference(w0, grads, stepFn) {
  const w = Float64Array.from(w0);
  grads.forEach((g, s) => { for (let i = 0; i < w.length; i++) w[i] = stepFn(i, w[i], g[i], s); });
  return w;
}
const tol = { rtol: 2e-5, atol: 2e-6 };

test('SGD: w -= lr * (clip(rescale_grad * g, clip_gradient) + wd * w), lr_mult / wd_mult from param_dict', () => {
  // MXNet's sgd_update rescales then clips (SGDParam: grad = rescale_grad*grad, then
  // max(min(grad, clip_gradient), -clip_gradient)); the Parameter's lr_mult 2 and wd_mult 0.5
  const p = new gluon.Parameter('fc_weight', { lr_mult: 2, wd_mult: 0.5 });
  const o = new opt.SGD({ learning_rate: 0.1, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.3, param_dict: { 0: p } });
  assert.equal(o.create_state(0, nd.zeros([2])), null); // no momentum, no state
  const r = run(o);
  const lr = 0.2, wd = 0.005;
  assertClose(r.w, reference(r.w0, r.grads, (i, w, g) => w - lr * (clip(0.5 * g, 0.3) + wd * w)), tol);
  assert.equal(o.numUpdate, 3);
});

test('SGD with momentum and a FactorScheduler with linear warmup', () => {
  // warmup over 2 updates from 0.05 to base_lr 0.2, then halved every 2 updates after the warmup:
  // num_update 1 -> 0.05 + 0.15 * 1/2 = 0.125, 2 -> 0.2, 3 -> 0.1
  const sched = new lrs.FactorScheduler(2, 0.5, { base_lr: 0.2, warmup_steps: 2, warmup_begin_lr: 0.05 });
  const o = new opt.SGD({ momentum: 0.9, wd: 0.002, rescale_grad: 0.25, lr_scheduler: sched });
  const r = run(o);
  const lrsSeen = [0.125, 0.2, 0.1];
  const mom = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g, s) => {
    // rescaled_grad = lr * (rescale_grad * grad + wd * weight); state = momentum * state - rescaled_grad (sgd_mom_update's sign)
    mom[i] = 0.9 * mom[i] - lrsSeen[s] * (0.25 * g + 0.002 * w);
    return w + mom[i];
  });
  assertClose(r.w, want, tol);
  assertClose(values(r.state), mom, tol);
  assert.equal(o.learningRate, 0.1);
  assert.equal(o.learning_rate, 0.1);
});

test('NAG: state = momentum * state + grad; weight -= lr * (grad + momentum * state), grad carrying wd * weight', () => {
  const o = new opt.NAG({ momentum: 0.9, learning_rate: 0.05, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.4 });
  const r = run(o);
  const st = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g) => {
    const grad = clip(0.5 * g, 0.4) + 0.01 * w;
    st[i] = 0.9 * st[i] + grad;
    return w - 0.05 * (grad + 0.9 * st[i]);
  });
  assertClose(r.w, want, tol);
  // MXNet keeps the momentum as -lr * state
  assertClose(values(r.state), st.map((v) => -0.05 * v), tol);
  // momentum 0: plain sgd_update
  const o0 = new opt.NAG({ learning_rate: 0.05, wd: 0.01 });
  const r0 = run(o0, { seed: 3 });
  assertClose(r0.w, reference(r0.w0, r0.grads, (i, w, g) => w - 0.05 * (g + 0.01 * w)), tol);
});

test('Adam: bias-corrected lr, clip(grad * rescale_grad + wd * weight); lr_mult by name (param_idx2name) and the default wd_mult 0 of biases', () => {
  const o = new opt.Adam({ learning_rate: 0.01, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.6, param_idx2name: { 0: 'fc_weight', 1: 'fc_bias' } });
  o.set_lr_mult({ fc_weight: 0.5 });
  assert.deepEqual(o.wdMult, { fc_bias: 0 }); // set_wd_mult: names not ending in _weight/_gamma
  const adam = (r, lr0, wd) => {
    const m = new Float64Array(r.w0.length), v = new Float64Array(r.w0.length);
    return reference(r.w0, r.grads, (i, w, g, s) => {
      const t = s + 1;
      const lr = lr0 * Math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t);
      const gr = clip(g * 0.5 + wd * w, 0.6);
      m[i] = 0.9 * m[i] + 0.1 * gr;
      v[i] = 0.999 * v[i] + 0.001 * gr * gr;
      return w - lr * m[i] / (Math.sqrt(v[i]) + 1e-8);
    });
  };
  const r0 = run(o, { index: 0, shape: [7] });
  assertClose(r0.w, adam(r0, 0.005, 0.01), tol);
  const r1 = run(o, { index: 1, shape: [7], seed: 11 });
  assertClose(r1.w, adam(r1, 0.01, 0), tol);
  assert.deepEqual(o._indexUpdateCount, { 0: 3, 1: 3 });
});

test('AdaGrad (nd operators): history += g^2; w += (g / sqrt(history + eps) + w * wd) * -lr', () => {
  const o = new opt.AdaGrad({ learning_rate: 0.1, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7, eps: 1e-6 });
  const r = run(o);
  const h = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g0) => {
    const g = clip(g0 * 0.5, 0.7);
    h[i] += g * g;
    return w + (g / Math.sqrt(h[i] + 1e-6) + w * 0.01) * -0.1;
  });
  assertClose(r.w, want, tol);
  assertClose(values(r.state), h, tol);
});

test('AdaDelta (nd operators): accumulators with rho; weight -= delta + wd * weight; the gradient is scaled in place', () => {
  const o = new opt.AdaDelta({ rho: 0.8, epsilon: 1e-4, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7 });
  const r = run(o);
  const ag = new Float64Array(r.w0.length), ad = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g0) => {
    const g = clip(g0 * 0.5, 0.7);
    ag[i] = 0.8 * ag[i] + 0.2 * g * g;
    const d = Math.sqrt(ad[i] + 1e-4) / Math.sqrt(ag[i] + 1e-4) * g;
    ad[i] = 0.8 * ad[i] + 0.2 * d * d;
    return w - (d + 0.01 * w);
  });
  assertClose(r.w, want, tol);
  assertClose(values(r.state[0]), ag, tol);
  assertClose(values(r.state[1]), ad, tol);
  // Python's `grad *= self.rescale_grad` scales the caller's gradient
  const g = nd.array([2, -4]);
  o.update(5, nd.array([1, 1]), g, o.create_state(5, nd.array([1, 1])));
  assert.deepEqual(Array.from(values(g)), [1, -2]);
});

test('RMSProp: n = (1 - gamma1) g^2 + gamma1 n; w -= lr g / sqrt(n + eps), weights clipped to clip_weights', () => {
  const o = new opt.RMSProp({ learning_rate: 0.01, gamma1: 0.8, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7, clip_weights: 0.5 });
  const r = run(o);
  const n = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g0) => {
    const g = clip(0.5 * g0 + 0.01 * w, 0.7);
    n[i] = 0.2 * g * g + 0.8 * n[i];
    return clip(w - 0.01 * g / Math.sqrt(n[i] + 1e-8), 0.5);
  });
  assertClose(r.w, want, tol);
  // weights starting at |w| > 0.6 end up within [-0.5, 0.5]
  assert.ok(r.w0.some((v) => Math.abs(v) > 0.6) && r.w.every((v) => Math.abs(v) <= 0.5), 'weights are clipped');
  assertClose(values(r.state[0]), n, tol);
});

test('RMSProp centered (rmspropalex_update): E[g^2], E[g], delta = gamma2 delta - lr g / sqrt(E[g^2] - E[g]^2 + eps)', () => {
  const o = new opt.RMSProp({ learning_rate: 0.01, gamma1: 0.8, gamma2: 0.7, centered: true, wd: 0.01, rescale_grad: 0.5 });
  const r = run(o);
  const n = new Float64Array(r.w0.length), eg = new Float64Array(r.w0.length), d = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g0) => {
    const g = 0.5 * g0 + 0.01 * w;
    n[i] = 0.2 * g * g + 0.8 * n[i];
    eg[i] = 0.2 * g + 0.8 * eg[i];
    d[i] = 0.7 * d[i] - 0.01 * g / Math.sqrt(n[i] - eg[i] * eg[i] + 1e-8);
    return w + d[i];
  });
  assertClose(r.w, want, { rtol: 1e-4, atol: 1e-5 }); // sqrt of a difference of float32 accumulators
  assert.equal(r.state.length, 3);
});

test('Ftrl: z += g - (sqrt(n + g^2) - sqrt(n)) w / lr; n += g^2; w = (sign(z) lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)', () => {
  const o = new opt.Ftrl({ lamda1: 1.5, learning_rate: 0.1, beta: 1, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7 });
  const r = run(o);
  const z = new Float64Array(r.w0.length), n = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g0) => {
    const g = clip(g0 * 0.5, 0.7);
    z[i] += g - (Math.sqrt(n[i] + g * g) - Math.sqrt(n[i])) * w / 0.1;
    n[i] += g * g;
    return Math.abs(z[i]) > 1.5 ? (sign(z[i]) * 1.5 - z[i]) / ((1 + Math.sqrt(n[i])) / 0.1 + 0.01) : 0;
  });
  assertClose(r.w, want, tol);
  assert.ok(r.w.some((v) => v === 0), 'lamda1 zeroes some weights');
  assert.ok(r.w.some((v) => v !== 0), 'not all');
});

test('Signum: state = momentum state + (1 - momentum) (grad + wd w); w = (1 - lr wd_lh) w - lr sign(state); momentum 0 is signSGD', () => {
  const o = new opt.Signum({ learning_rate: 0.01, momentum: 0.9, wd_lh: 0.01, wd: 0.005, rescale_grad: 0.5, clip_gradient: 0.7 });
  const r = run(o);
  const st = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g) => {
    st[i] = 0.9 * st[i] + 0.1 * (clip(0.5 * g, 0.7) + 0.005 * w);
    return (1 - 0.01 * 0.01) * w - 0.01 * sign(st[i]);
  });
  assertClose(r.w, want, tol);
  const s0 = new opt.Signum({ learning_rate: 0.01, momentum: 0, wd: 0.1 });
  assert.equal(s0.create_state(0, nd.zeros([3])), null);
  const r0 = run(s0, { seed: 5 });
  assertClose(r0.w, reference(r0.w0, r0.grads, (i, w, g) => (1 - 0.001) * w - 0.01 * sign(g)), tol);
});

// LAMB: the documented phases, with the trust ratio ||w|| / ||g|| of the whole weight.
function lambReference(w0, grads, { lr, wd, rs, c, b1 = 0.9, b2 = 0.999, eps = 1e-6, bias = true, lower, upper }) {
  const w = Float64Array.from(w0);
  const m = new Float64Array(w.length), v = new Float64Array(w.length);
  grads.forEach((g, s) => {
    const t = s + 1;
    const d = new Float64Array(w.length);
    for (let i = 0; i < w.length; i++) {
      const gr = clip(g[i] * rs, c);
      m[i] = b1 * m[i] + (1 - b1) * gr;
      v[i] = b2 * v[i] + (1 - b2) * gr * gr;
      d[i] = bias ? (m[i] / (1 - b1 ** t)) / (Math.sqrt(v[i] / (1 - b2 ** t)) + eps) + wd * w[i] : m[i] / (Math.sqrt(v[i]) + eps) + wd * w[i];
    }
    let r1 = Math.hypot(...w);
    const r2 = Math.hypot(...d);
    if (lower !== undefined) r1 = Math.max(r1, lower);
    if (upper !== undefined) r1 = Math.min(r1, upper);
    const ratio = r1 === 0 || r2 === 0 ? 1 : r1 / r2;
    for (let i = 0; i < w.length; i++) w[i] -= lr * ratio * d[i];
  });
  return w;
}

test('LAMB: phase 1 (Adam direction + wd * w) and phase 2 (trust ratio), with and without bias correction, with bounds', () => {
  const o = new opt.LAMB({ learning_rate: 0.01, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7 });
  const r = run(o);
  assertClose(r.w, lambReference(r.w0, r.grads, { lr: 0.01, wd: 0.01, rs: 0.5, c: 0.7 }), tol);
  const o2 = new opt.LAMB({ learning_rate: 0.02, bias_correction: false, upper_bound: 0.5, lower_bound: 0.1 });
  const r2 = run(o2, { seed: 9 });
  assertClose(r2.w, lambReference(r2.w0, r2.grads, { lr: 0.02, wd: 0, rs: 1, bias: false, upper: 0.5, lower: 0.1 }), tol);
});

test('FTML: v, d_t, z as the docstring; weight = -z / d_t', () => {
  const o = new opt.FTML({ learning_rate: 0.01, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7 });
  const r = run(o);
  const d = new Float64Array(r.w0.length), v = new Float64Array(r.w0.length), z = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g0, s) => {
    const t = s + 1;
    const g = clip(g0 * 0.5 + 0.01 * w, 0.7);
    v[i] = 0.999 * v[i] + 0.001 * g * g;
    const dt = (1 - 0.6 ** t) / 0.01 * (Math.sqrt(v[i] / (1 - 0.999 ** t)) + 1e-8);
    z[i] = 0.6 * z[i] + 0.4 * g - (dt - 0.6 * d[i]) * w;
    d[i] = dt;
    return -z[i] / dt;
  });
  assertClose(r.w, want, { rtol: 1e-4, atol: 1e-5 });
});

test('Adamax and Nadam (nd operators) as their docstrings', () => {
  const o = new opt.Adamax({ learning_rate: 0.01, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7 });
  const r = run(o);
  const m = new Float64Array(r.w0.length), u = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g0, s) => {
    const g = clip(g0 * 0.5 + 0.01 * w, 0.7);
    m[i] = 0.9 * m[i] + 0.1 * g;
    u[i] = Math.max(0.999 * u[i], Math.abs(g));
    return w - 0.01 / (1 - 0.9 ** (s + 1)) * m[i] / u[i];
  });
  assertClose(r.w, want, tol);

  const on = new opt.Nadam({ learning_rate: 0.01, wd: 0.01, rescale_grad: 0.5, clip_gradient: 0.7 });
  const rn = run(on, { seed: 4 });
  const mn = new Float64Array(rn.w0.length), vn = new Float64Array(rn.w0.length);
  let msched = 1;
  const wn = Float64Array.from(rn.w0);
  rn.grads.forEach((g0, s) => {
    const t = s + 1;
    const mt = 0.9 * (1 - 0.5 * 0.96 ** (t * 0.004)), mt1 = 0.9 * (1 - 0.5 * 0.96 ** ((t + 1) * 0.004));
    msched *= mt;
    const mnext = msched * mt1;
    for (let i = 0; i < wn.length; i++) {
      const g = clip(g0[i] * 0.5 + 0.01 * wn[i], 0.7);
      mn[i] = 0.9 * mn[i] + 0.1 * g;
      vn[i] = 0.999 * vn[i] + 0.001 * g * g;
      const mbar = (1 - mt) * g / (1 - msched) + mt1 * mn[i] / (1 - mnext);
      wn[i] -= 0.01 * mbar / (Math.sqrt(vn[i] / (1 - 0.999 ** t)) + 1e-8);
    }
  });
  assertClose(rn.w, wn, tol);
});

test('SGLD: the gradient step plus N(0, sqrt(lr)) noise', () => {
  mx.random.seed(3);
  const o = new opt.SGLD({ learning_rate: 0.01, wd: 0.1 });
  const n = 20000;
  const w = nd.zeros([n]).add(1);
  const g = nd.ones([n]);
  o.update(0, w, g, o.create_state(0, w));
  // w - lr/2 (g + wd w) = 1 - 0.005 * 1.1; the rest is noise with std sqrt(0.01) = 0.1
  const noise = values(w).map((x) => x - (1 - 0.005 * 1.1));
  const mean = noise.reduce((a, b) => a + b, 0) / n;
  const std = Math.sqrt(noise.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
  assert.ok(Math.abs(mean) < 0.005, `noise mean ${mean}`);
  assert.ok(Math.abs(std - 0.1) < 0.005, `noise std ${std}`);
});

test('multi_precision: float16 weights update a float32 master copy (SGD, NAG: mp_ ops; Adam, LAMB)', () => {
  // SGD with momentum: state [momentum (float32), master copy (float32)]
  const o = new opt.SGD({ learning_rate: 0.1, momentum: 0.9, wd: 0.01, rescale_grad: 0.5, multi_precision: true });
  const r = run(o, { dtype: 'float16' });
  assert.equal(r.state.length, 2);
  assert.equal(r.state[0].dtype, 'float32');
  assert.equal(r.state[1].dtype, 'float32');
  const mom = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g) => { mom[i] = 0.9 * mom[i] - 0.1 * (0.5 * g + 0.01 * w); return w + mom[i]; });
  assertClose(values(r.state[1]), want, tol);
  assert.equal(r.weight.dtype, 'float16');
  assert.deepEqual(Array.from(r.w), Array.from(fp16(values(r.state[1])))); // the weight is the master copy in float16
  // NAG (wd 0)
  const on = new opt.NAG({ learning_rate: 0.1, momentum: 0.9, multi_precision: true });
  const rn = run(on, { dtype: 'float16', seed: 2 });
  const st = new Float64Array(rn.w0.length);
  const wantN = reference(rn.w0, rn.grads, (i, w, g) => { st[i] = 0.9 * st[i] + g; return w - 0.1 * (g + 0.9 * st[i]); });
  assertClose(values(rn.state[1]), wantN, tol);
  // Adam through Optimizer's generic wrapper: state [master copy, (mean, var)]
  const oa = new opt.Adam({ learning_rate: 0.01, multi_precision: true });
  const ra = run(oa, { dtype: 'float16', seed: 6 });
  assert.equal(ra.state[0].dtype, 'float32');
  const m = new Float64Array(ra.w0.length), v = new Float64Array(ra.w0.length);
  const wantA = reference(ra.w0, ra.grads, (i, w, g, s) => {
    const t = s + 1;
    m[i] = 0.9 * m[i] + 0.1 * g;
    v[i] = 0.999 * v[i] + 0.001 * g * g;
    return w - 0.01 * Math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * m[i] / (Math.sqrt(v[i]) + 1e-8);
  });
  assertClose(values(ra.state[0]), wantA, tol);
  assert.deepEqual(Array.from(ra.w), Array.from(fp16(values(ra.state[0]))));
  // LAMB: mp_lamb_update_phase1/2 on the master copy
  const ol = new opt.LAMB({ learning_rate: 0.01, wd: 0.01, multi_precision: true });
  const rl = run(ol, { dtype: 'float16', seed: 8 });
  const wantL = lambReference(rl.w0, rl.grads, { lr: 0.01, wd: 0.01, rs: 1 });
  assertClose(values(rl.state[0]), wantL, tol);
  assertClose(rl.w, wantL, { rtol: 2e-3, atol: 1e-3 });
  // without multi_precision a float16 weight is updated in float16 (with Python's warning)
  const warn = console.warn;
  const warned = [];
  console.warn = (m) => warned.push(m);
  try {
    const plain = new opt.SGD({ learning_rate: 0.5 });
    const w = nd.array([1, -2, 3], { dtype: 'float16' });
    plain.update_multi_precision(0, w, nd.array([1, 1, 1], { dtype: 'float16' }), plain.create_state_multi_precision(0, w));
    assert.deepEqual(w.toArray(), [0.5, -2.5, 2.5]);
  } finally {
    console.warn = warn;
  }
  assert.match(warned.join('\n'), /multi_precision=True/);
});

test('float64 weights', () => {
  const o = new opt.SGD({ learning_rate: 0.125, momentum: 0.5, wd: 0.25 });
  const r = run(o, { dtype: 'float64' });
  const mom = new Float64Array(r.w0.length);
  const want = reference(r.w0, r.grads, (i, w, g) => { mom[i] = 0.5 * mom[i] - 0.125 * (g + 0.25 * w); return w + mom[i]; });
  assertClose(r.w, want, { rtol: 1e-12, atol: 1e-14 });
  assert.equal(r.state.dtype, 'float64');
});

// ---- the update operators, called directly ---------------------------------------------------
// Attributes exactly representable in float32 (MXNet's fields are C floats), float64 arrays:
// the results equal the float64 reference up to rounding.
const OPS = [
  ['sgd_update', 0, { lr: 0.125, wd: 0.25, rescale_grad: 0.5, clip_gradient: 0.75 },
    ([w, g]) => [w - 0.125 * (clip(0.5 * g, 0.75) + 0.25 * w)]],
  ['sgd_mom_update', 1, { lr: 0.125, momentum: 0.5, wd: 0.25, rescale_grad: 0.5 },
    ([w, g, m]) => { const m1 = 0.5 * m - 0.125 * 0.25 * w - 0.125 * 0.5 * g; return [w + m1, m1]; }],
  ['nag_mom_update', 1, { lr: 0.125, momentum: 0.5, wd: 0.25, rescale_grad: 0.5, clip_gradient: 0.75 },
    ([w, g, m]) => {
      const gr = clip(0.5 * g, 0.75) + 0.25 * w, m1 = 0.5 * m - 0.125 * gr;
      return [w + 0.5 * m1 - 0.125 * gr, m1]; // w_t = w - lr (grad + momentum state_t), state kept as -lr * state
    }],
  ['adam_update', 2, { lr: 0.125, beta1: 0.75, beta2: 0.875, epsilon: 0.0625, wd: 0.25, rescale_grad: 0.5 },
    ([w, g, m, v]) => {
      const gr = 0.5 * g + 0.25 * w, m1 = 0.75 * m + 0.25 * gr, v1 = 0.875 * v + 0.125 * gr * gr;
      return [w - 0.125 * m1 / (Math.sqrt(v1) + 0.0625), m1, v1];
    }],
  ['rmsprop_update', 1, { lr: 0.125, gamma1: 0.75, epsilon: 0.0625, wd: 0.25, rescale_grad: 0.5, clip_weights: 0.875 },
    ([w, g, n]) => {
      const gr = 0.5 * g + 0.25 * w, n1 = 0.25 * gr * gr + 0.75 * n;
      return [clip(w - 0.125 * gr / Math.sqrt(n1 + 0.0625), 0.875), n1];
    }],
  ['rmspropalex_update', 3, { lr: 0.125, gamma1: 0.75, gamma2: 0.5, epsilon: 0.0625, rescale_grad: 0.5 },
    ([w, g, n, eg, d]) => {
      const gr = 0.5 * g, n1 = 0.25 * gr * gr + 0.75 * n, g1 = 0.25 * gr + 0.75 * eg;
      const d1 = 0.5 * d - 0.125 * gr / Math.sqrt(n1 - g1 * g1 + 0.0625);
      return [w + d1, n1, g1, d1];
    }],
  ['ftrl_update', 2, { lr: 0.125, lamda1: 0.0625, beta: 0.5, wd: 0.25, rescale_grad: 0.5 },
    ([w, g, z, n]) => {
      const gr = 0.5 * g, z1 = z + gr - (Math.sqrt(n + gr * gr) - Math.sqrt(n)) * w / 0.125, n1 = n + gr * gr;
      return [Math.abs(z1) > 0.0625 ? (sign(z1) * 0.0625 - z1) / ((0.5 + Math.sqrt(n1)) / 0.125 + 0.25) : 0, z1, n1];
    }],
  ['signsgd_update', 0, { lr: 0.125, wd: 0.25 }, ([w, g]) => [(1 - 0.125 * 0.25) * w - 0.125 * sign(g)]],
  ['signum_update', 1, { lr: 0.125, momentum: 0.5, wd: 0.25, wd_lh: 0.5, rescale_grad: 0.5 },
    ([w, g, m]) => {
      const m1 = 0.5 * m - 0.5 * (0.25 * w + 0.5 * g); // -(state), as MXNet stores it
      return [(1 - 0.125 * 0.5) * w + 0.125 * sign(m1), m1];
    }],
  ['ftml_update', 3, { lr: 0.125, beta1: 0.5, beta2: 0.75, epsilon: 0.0625, t: 2, wd: 0.25, rescale_grad: 0.5, clip_grad: 0.75 },
    ([w, g, d, v, z]) => {
      const gr = clip(0.5 * g + 0.25 * w, 0.75), v1 = 0.75 * v + 0.25 * gr * gr;
      const dt = (1 - 0.25) / 0.125 * (Math.sqrt(v1 / (1 - 0.5625)) + 0.0625);
      const z1 = 0.5 * z + 0.5 * gr - (dt - 0.5 * d) * w;
      return [-z1 / dt, dt, v1, z1];
    }],
  ['lamb_update_phase1', 2, { beta1: 0.75, beta2: 0.875, epsilon: 0.0625, t: 2, wd: 0.25, rescale_grad: 0.5 },
    ([w, g, m, v]) => {
      const gr = 0.5 * g, m1 = 0.75 * m + 0.25 * gr, v1 = 0.875 * v + 0.125 * gr * gr;
      return [(m1 / (1 - 0.5625)) / (Math.sqrt(v1 / (1 - 0.765625)) + 0.0625) + 0.25 * w, m1, v1];
    }],
];

test('each update operator on float64 arrays, in place (out = weight) and with a fresh output', () => {
  const r = rng(21);
  for (const [name, nStates, attrs, rule] of OPS) {
    const n = 7;
    const w0 = Float64Array.from(r.uniform(n, -1, 1)), g0 = Float64Array.from(r.uniform(n, -2, 2));
    // states start away from 0 (accumulators of squares positive)
    const s0 = Array.from({ length: nStates }, (_, k) => Float64Array.from(r.uniform(n, 0.1, 0.6), (x) => (k % 2 ? x : x - 0.3)));
    if (name === 'ftrl_update' || name === 'rmsprop_update') s0[nStates - 1] = s0[nStates - 1].map(Math.abs);
    if (name === 'rmspropalex_update') s0[0] = s0[0].map((x) => Math.abs(x) + 0.5);
    if (name === 'adam_update' || name === 'lamb_update_phase1') s0[1] = s0[1].map(Math.abs);
    if (name === 'ftml_update') s0[1] = s0[1].map(Math.abs);
    const expect = Array.from({ length: 1 + nStates }, () => new Float64Array(n));
    for (let i = 0; i < n; i++) rule([w0[i], g0[i], ...s0.map((s) => s[i])]).forEach((v, k) => { expect[k][i] = v; });
    const w = nd.array(w0, { dtype: 'float64' }), g = nd.array(g0, { dtype: 'float64' });
    const states = s0.map((s) => nd.array(s, { dtype: 'float64' }));
    const isPhase1 = name === 'lamb_update_phase1';
    const out = nd[name](w, g, ...states, isPhase1 ? { ...attrs } : { ...attrs, out: w });
    assertClose(values(out), expect[0], { rtol: 1e-12, atol: 1e-14, msg: name });
    if (!isPhase1) assert.equal(out, w, `${name} returns out`);
    states.forEach((s, k) => assertClose(values(s), expect[k + 1], { rtol: 1e-12, atol: 1e-14, msg: `${name} state ${k}` }));
    assert.equal(nd[name].name, name);
    // float32: the same within float32 rounding, and a fresh output leaves the weight
    const w32 = nd.array(w0), s32 = s0.map((s) => nd.array(s));
    const o32 = nd[name](w32, nd.array(g0), ...s32, attrs);
    assertClose(values(o32), expect[0], { rtol: 1e-5, atol: 1e-6, msg: `${name} float32` });
    assertClose(values(w32), w0, { rtol: 1e-7, atol: 0, msg: `${name} leaves the weight` });
  }
});

test('lamb_update_phase2 and the mp_ operators', () => {
  // out = w - lr * (r1 / r2) * g: r1 = 2, r2 = 4 -> ratio 0.5
  const w = nd.array([1, 2, 3], { dtype: 'float64' });
  nd.lamb_update_phase2(w, nd.array([1, -1, 2], { dtype: 'float64' }), nd.array([2], { dtype: 'float64' }), nd.array([4], { dtype: 'float64' }), { lr: 0.5, out: w });
  assert.deepEqual(w.toArray(), [0.75, 2.25, 2.5]);
  // mp_sgd_update / mp_sgd_mom_update / mp_nag_mom_update: the float32 master copy and momentum move, the float16 weight follows
  const w16 = nd.array([0, 0], { dtype: 'float16' }), g16 = nd.array([0.5, -1], { dtype: 'float16' });
  const master = nd.array([1, 2]), mom = nd.array([0.5, 0.5]);
  nd.mp_sgd_mom_update(w16, g16, mom, master, { lr: 0.5, momentum: 0.5, out: w16 });
  // mom = 0.5 * 0.5 - 0.5 * g = [0, 0.75]; master = [1, 2.75]
  assert.deepEqual(mom.toArray(), [0, 0.75]);
  assert.deepEqual(master.toArray(), [1, 2.75]);
  assert.deepEqual(w16.toArray(), [1, 2.75]);
  nd.mp_sgd_update(w16, g16, master, { lr: 1, out: w16 });
  assert.deepEqual(master.toArray(), [0.5, 3.75]);
  assert.deepEqual(w16.toArray(), [0.5, 3.75]);
  // NAG: m = 0.5 * m = [0, 0.375]; w = w - m + 1.5 (m - g) = [0.5 - 0.75, 3.75 - 0.375 + 1.5 * 1.375]; m -= g
  nd.mp_nag_mom_update(w16, g16, mom, master, { lr: 1, momentum: 0.5, out: w16 });
  assert.deepEqual(master.toArray(), [-0.25, 5.4375]);
  assert.deepEqual(mom.toArray(), [-0.5, 1.375]);
  // mp_lamb_update_phase2 writes the master copy too (as its documentation says)
  const m32 = nd.array([1, 2]);
  nd.mp_lamb_update_phase2(w16, nd.array([1, 1]), nd.array([1]), nd.array([1]), m32, { lr: 0.25, out: w16 });
  assert.deepEqual(m32.toArray(), [0.75, 1.75]);
  assert.deepEqual(w16.toArray(), [0.75, 1.75]);
  // MXNet's type rules: the master copy is float32; the mp_ lamb phase 1 takes float16 weights
  throwsNaming(() => nd.mp_sgd_update(w16, g16, nd.array([1, 2], { dtype: 'float16' }), { lr: 1 }), /weight32.*float32/);
  throwsNaming(() => nd.mp_lamb_update_phase1(nd.array([1]), nd.array([1]), nd.array([0]), nd.array([0]), nd.array([1]), { t: 1, wd: 0 }), /float16/);
  throwsNaming(() => nd.sgd_update(nd.array([1], { dtype: 'int32' }), nd.array([1], { dtype: 'int32' }), { lr: 1 }), /floating point/);
  throwsNaming(() => nd.sgd_update(w, nd.array([1, 2], { dtype: 'float64' }), { lr: 1 }), /shape/);
  throwsNaming(() => nd.sgd_update(w, w, {}), /lr/);
  throwsNaming(() => nd.lamb_update_phase2(w, w, w, w, { lr: 1 }), /r1 shape incorrect/);
});

// ---- the optimizer API ------------------------------------------------------------------------
test('create / register and the constructors\' argument forms', () => {
  assert.ok(opt.create('sgd') instanceof opt.SGD);
  assert.ok(opt.create('Adam', { learning_rate: 0.1 }) instanceof opt.Adam);
  for (const name of ['sgd', 'nag', 'adam', 'adagrad', 'adadelta', 'rmsprop', 'ftrl', 'signum', 'lamb', 'ftml', 'adamax', 'nadam', 'sgld', 'ccsgd', 'test']) {
    assert.ok(opt.create(name) instanceof opt.Optimizer, name);
  }
  throwsNaming(() => opt.create('nosuch'), /Cannot find optimizer nosuch/);
  // positional own parameters, Optimizer's by name in either spelling
  const a = new opt.SGD(0.9, false, { learningRate: 0.5, rescale_grad: 0.25, clipGradient: 2 });
  assert.equal(a.momentum, 0.9);
  assert.equal(a.lazyUpdate, false);
  assert.equal(a.lazy_update, false);
  assert.equal(a.lr, 0.5);
  assert.equal(a.rescale_grad, 0.25);
  assert.equal(a.clipGradient, 2);
  const b = new opt.Adam(0.01, 0.8);
  assert.equal(b.lr, 0.01);
  assert.equal(b.beta1, 0.8);
  throwsNaming(() => new opt.SGD({ nosuch: 1 }), /nosuch/);
  throwsNaming(() => new opt.SGD(0.9, true, 0.1), /positional/);
  throwsNaming(() => new opt.SGD({ momentum: 'x' }), /momentum/);
  // default learning rate 0.01; Ftrl's and the Adam family's own defaults
  assert.equal(new opt.SGD().learningRate, 0.01);
  assert.equal(new opt.Ftrl().lr, 0.1);
  assert.equal(new opt.Adam().lr, 0.001);
  // register: a Python-style subclass (snake_case overrides) is created by its lowercase name
  class MyOpt extends opt.Optimizer {
    create_state(index, weight) { return nd.zeros(weight.shape); }
    update(index, weight, grad, state) {
      this._update_count(index);
      const lr = this._get_lr(index);
      weight.isub(grad.mul(lr));
      state.iadd(grad);
    }
  }
  assert.equal(opt.register(MyOpt), MyOpt);
  const my = opt.create('myopt', { learning_rate: 0.5 });
  const u = opt.get_updater(my);
  const w = nd.array([1, 2]);
  u(3, nd.array([2, 2]), w);
  u(3, nd.array([2, 2]), w);
  assert.deepEqual(w.toArray(), [-1, 0]);
  assert.deepEqual(u.states.get(3).toArray(), [4, 4]);
  assert.equal(my.num_update, 2);
});

test('learning rate, schedulers, update counts and lr/wd multipliers', () => {
  const o = new opt.SGD({ learning_rate: 0.1 });
  o.set_learning_rate(0.2);
  assert.equal(o.learning_rate, 0.2);
  o.setLearningRate(0.3);
  assert.equal(o.learningRate, 0.3);
  // a learning_rate different from the scheduler's base_lr overwrites it (with Python's warning)
  const warn = console.warn;
  const warned = [];
  console.warn = (m) => warned.push(m);
  let s;
  try {
    s = new lrs.FactorScheduler(1, 0.5, { base_lr: 1 });
    const os = new opt.SGD({ learning_rate: 0.4, lr_scheduler: s });
    assert.equal(s.baseLr, 0.4);
    assert.match(warned.join(), /overwritten/);
    throwsNaming(() => os.set_learning_rate(0.1), /LRScheduler of the optimizer has already been defined/);
    os._update_count(0);
    os._update_count(0);
    assert.equal(os.numUpdate, 2);
    assert.equal(os.learningRate, 0.2); // 0.4 * 0.5 after passing update 1
  } finally {
    console.warn = warn;
  }
  // begin_num_update starts every index's count
  const ob = new opt.SGD({ begin_num_update: 10 });
  ob._update_count([0, 1]);
  ob._update_count(1);
  assert.deepEqual(ob._index_update_count, { 0: 11, 1: 12 });
  assert.equal(ob.num_update, 12);
  // counts per device (Updater's _set_current_context)
  ob._set_current_context(1);
  ob._update_count(0);
  assert.deepEqual(ob._indexUpdateCount, { 0: 11 });
  assert.equal(ob.numUpdate, 12);
  // lr_mult / wd_mult: param_dict first, then by index, then by name
  const p = new gluon.Parameter('w', { lr_mult: 3, wd_mult: 0 });
  const om = new opt.SGD({ learning_rate: 1, wd: 0.5, param_idx2name: { 1: 'a_weight', 2: 'a_bias' }, param_dict: { 0: p } });
  om.set_lr_mult({ 1: 2, a_bias: 4 });
  om.setWdMult({ a_weight: 0.5 });
  assert.deepEqual(om._get_lrs([0, 1, 2, 3]), [3, 2, 4, 1]);
  assert.deepEqual(om._getWds([0, 1, 2, 3]), [0, 0.25, 0, 0.5]);
  p.lrMult = 5; // read at each update, not copied
  assert.equal(om._get_lr(0), 5);
  throwsNaming(() => om.set_lr_scale({}), /deprecated/);
  throwsNaming(() => new opt.Optimizer().update(0, nd.zeros([1]), nd.zeros([1]), null), /not implemented/);
});

test('Updater: states per index, aggregated SGD, states round trip with the optimizer', () => {
  const o = new opt.SGD({ learning_rate: 0.1, momentum: 0.9 });
  const u = opt.getUpdater(o);
  assert.equal(u.aggregateUpdates, true);
  const ws = [nd.array([1, 2, 3]), nd.array([[1], [2]])];
  const gs = [nd.array([1, 1, 1]), nd.array([[2], [2]])];
  u([0, 1], gs, ws);
  u([0, 1], gs, ws);
  // mom = -0.1 g, then 0.9 mom - 0.1 g = -0.19 g; w = w - 0.29 g
  assertClose(values(ws[0]), [0.71, 1.71, 2.71], { rtol: 1e-6 });
  assertClose(values(ws[1]), [0.42, 1.42], { rtol: 1e-6 });
  assert.equal(o.numUpdate, 2);
  const bytes = u.getStates(true);
  // the file is an NDArray list: the header entry and the momenta
  const listed = nd.loadBytes(bytes);
  assert.deepEqual(Object.keys(listed).sort(), ['__mxw_updater_states__', 'state:0', 'state:1']);
  const u2 = opt.getUpdater(new opt.Adam());
  u2.setStates(bytes);
  assert.ok(u2.optimizer instanceof opt.SGD);
  assert.notEqual(u2.optimizer, o);
  assert.equal(u2.optimizer.momentum, 0.9);
  assert.equal(u2.optimizer.numUpdate, 2);
  assert.deepEqual(u2.optimizer._indexUpdateCount, { 0: 2, 1: 2 });
  assert.deepEqual(Array.from(values(u2.states.get(0))), Array.from(values(u.states.get(0))));
  assert.deepEqual(u2.states.get(1).shape, [2, 1]);
  // states only: the optimizer stays
  const u3 = opt.getUpdater(new opt.SGD({ momentum: 0.5 }));
  u3.set_states(u.get_states());
  assert.equal(u3.optimizer.momentum, 0.5);
  assert.equal(u3.states.size, 2);
  // a scheduler is restored with its state and stays callable
  const os = new opt.SGD({ lr_scheduler: new lrs.MultiFactorScheduler([1, 2], 0.5, { base_lr: 1 }) });
  const us = opt.getUpdater(os);
  for (let k = 0; k < 3; k++) us(0, nd.array([0]), nd.array([0]));
  const us2 = opt.getUpdater(new opt.SGD());
  us2.setStates(us.getStates(true));
  assert.equal(typeof us2.optimizer.lrScheduler, 'function');
  assert.equal(us2.optimizer.lrScheduler.curStepInd, 2);
  assert.equal(us2.optimizer.learningRate, 0.25);
  throwsNaming(() => us2.setStates(nd.saveBytes({ a: nd.zeros([1]) })), /not an optimizer states file/);
});

test("a Symbol's __lr_mult__ / __wd_mult__ attributes set the multipliers, then lr_mult / wd_mult override them", () => {
  // MXNet's Optimizer(sym=...): fc_weight has lr_mult 0.5 and wd_mult 3 on the Symbol
  const w = mx.sym.var('fc_weight', { lr_mult: 0.5, wd_mult: 3 });
  const net = mx.sym.FullyConnected(mx.sym.var('data'), w, mx.sym.var('fc_bias'), { num_hidden: 2, name: 'fc' });
  const o = new opt.SGD({ learning_rate: 0.1, wd: 0.01, sym: net, param_idx2name: { 0: 'fc_weight', 1: 'fc_bias' } });
  assert.equal(o._getLr(0), 0.1 * 0.5);
  assert.equal(o._getLr(1), 0.1);
  assert.equal(o._getWd(0), 0.01 * 3);
  assert.equal(o._getWd(1), 0); // not *_weight / *_gamma
  o.setLrMult({ fc_weight: 2 });
  assert.equal(o._getLr(0), 0.1 * 2);
});

test('states in the subnormal range are flushed to zero (WebAssembly has no FTZ mode; documented in optimizer.c)', () => {
  // float32 subnormals lie below 2^-126 = 1.1754944e-38. A momentum of 1e-38 with a zero gradient
  // decays to 0.9e-38, a subnormal: it is stored as 0 (what FTZ hardware would do), while a
  // normal momentum decays exactly as the rule says.
  const w = nd.array([1, 2, 3]), g = nd.zeros([3]);
  const mom = nd.array([1e-38, -1e-38, 1e-3]);
  nd.sgd_mom_update(w, g, mom, { lr: 0.1, momentum: 0.9, out: w });
  const m = values(mom);
  assert.equal(m[0], 0);
  assert.equal(m[1], 0);
  assertClose([m[2]], [Math.fround(0.9) * Math.fround(1e-3)], { rtol: 1e-6 });
  assert.deepEqual(Array.from(values(w)), [1, 2, 3 + m[2]].map(Math.fround));
  // Adam's moments likewise: mean = 0.9 * 1e-38 underflows and is flushed, var keeps its value
  const mean = nd.array([1e-38]), vr = nd.array([0.25]);
  nd.adam_update(nd.array([1]), nd.zeros([1]), mean, vr, { lr: 0.1, out: nd.zeros([1]) });
  assert.equal(values(mean)[0], 0);
  assertClose(values(vr), [Math.fround(0.999) * 0.25], { rtol: 1e-6 });
});

// The float32 SGD, SGD-with-momentum and Adam kernels run four lanes at a time plus a scalar tail.
// Each element must be MXNet's expression evaluated in float32, operation by operation as C does
// (Math.fround after each one): checked exactly, in place and with a fresh output, with and without
// clip_gradient, on 4k + 3 elements (lanes and tail), with subnormal states flushed in both.
test('float32 sgd / sgd_mom / nag / adam / rmsprop / rmspropalex updates: every element is the float32 evaluation of the rule, bit for bit', () => {
  const f = Math.fround;
  const clipF = (x, c) => (x > c ? c : x < -c ? -c : x); // mshadow_op::clip (NaN passes)
  const ftz = (x) => (Math.abs(x) < 2 ** -126 ? 0 : x);
  const n = 43, r = rng(5);
  const w0 = Float32Array.from(r.uniform(n, -1, 1)), g0 = Float32Array.from(r.uniform(n, -3, 3));
  const m0 = Float32Array.from(r.uniform(n, -0.5, 0.5)), v0 = Float32Array.from(r.uniform(n, 0, 0.5));
  // states that decay into the subnormal range (zero gradient and weight), in lanes and in the tail
  const d0 = Float32Array.from(r.uniform(n, -0.1, 0.1));
  for (const k of [1, 6, 41]) { m0[k] = k === 6 ? -1.2e-38 : 1.2e-38; v0[k] = 1.2e-38; d0[k] = 1.2e-38; g0[k] = 0; w0[k] = 0; }
  const A = { lr: f(0.1), wd: f(0.01), rs: f(0.5), mu: f(0.9), b1: f(0.9), b2: f(0.999), eps: f(1e-8), g2: f(0.8), cw: f(0.6) };
  const grad = (i, c) => { const gr = f(f(A.rs * g0[i]) + f(A.wd * w0[i])); return c >= 0 ? clipF(gr, c) : gr; };
  const clipW = (x) => clipF(x, A.cw);
  const rules = {
    sgd_update: (c) => (i) => {
      const step = c >= 0 ? f(A.lr * clipF(f(A.rs * g0[i]), c)) : f(f(A.lr * A.rs) * g0[i]);
      return [f(f(f(1 - f(A.lr * A.wd)) * w0[i]) - step)];
    },
    sgd_mom_update: (c) => (i) => {
      const step = c >= 0 ? f(A.lr * clipF(f(A.rs * g0[i]), c)) : f(f(A.lr * A.rs) * g0[i]);
      const m = ftz(f(f(f(A.mu * m0[i]) - f(f(A.lr * A.wd) * w0[i])) - step));
      return [f(w0[i] + m), m];
    },
    nag_mom_update: (c) => (i) => {
      const gr = c >= 0 ? clipF(f(A.rs * g0[i]), c) : f(A.rs * g0[i]);
      const m = f(A.mu * m0[i]), step = f(m - f(A.lr * f(gr + f(A.wd * w0[i]))));
      return [f(f(w0[i] - m) + f(f(A.mu + 1) * step)), ftz(step)];
    },
    rmsprop_update: (c) => (i) => {
      const gr = grad(i, c);
      const sn = ftz(f(f(f(1 - A.b1) * f(gr * gr)) + f(A.b1 * v0[i])));
      return [clipW(f(w0[i] - f(A.lr * f(gr / f(Math.sqrt(f(sn + A.eps))))))), sn];
    },
    rmspropalex_update: (c) => (i) => {
      const gr = grad(i, c);
      const sn = ftz(f(f(f(f(1 - A.b1) * gr) * gr) + f(A.b1 * v0[i])));
      const sg = ftz(f(f(f(1 - A.b1) * gr) + f(A.b1 * m0[i])));
      const den = f(Math.sqrt(f(f(sn - f(sg * sg)) + A.eps)));
      const d = ftz(f(f(A.g2 * d0[i]) - f(f(A.lr * gr) / den)));
      return [clipW(f(w0[i] + d)), sn, sg, d];
    },
    adam_update: (c) => (i) => {
      let gr = f(f(g0[i] * A.rs) + f(w0[i] * A.wd));
      if (c >= 0) gr = clipF(gr, c);
      const m = ftz(f(f(A.b1 * m0[i]) + f(f(1 - A.b1) * gr)));
      const v = ftz(f(f(A.b2 * v0[i]) + f(f(f(1 - A.b2) * gr) * gr)));
      return [f(w0[i] - f(f(A.lr * m) / f(f(Math.sqrt(v)) + A.eps))), m, v];
    },
  };
  const attrs = {
    sgd_update: { lr: 0.1, wd: 0.01, rescale_grad: 0.5 },
    sgd_mom_update: { lr: 0.1, wd: 0.01, rescale_grad: 0.5, momentum: 0.9 },
    adam_update: { lr: 0.1, wd: 0.01, rescale_grad: 0.5, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 },
    nag_mom_update: { lr: 0.1, wd: 0.01, rescale_grad: 0.5, momentum: 0.9 },
    rmsprop_update: { lr: 0.1, wd: 0.01, rescale_grad: 0.5, gamma1: 0.9, epsilon: 1e-8, clip_weights: 0.6 },
    rmspropalex_update: { lr: 0.1, wd: 0.01, rescale_grad: 0.5, gamma1: 0.9, gamma2: 0.8, epsilon: 1e-8, clip_weights: 0.6 },
  };
  const init = { sgd_update: [], sgd_mom_update: [m0], nag_mom_update: [m0], adam_update: [m0, v0], rmsprop_update: [v0],
    rmspropalex_update: [v0, m0, d0] };
  for (const name of Object.keys(rules)) {
    for (const c of [-1, 0.75]) {
      const rule = rules[name](c === -1 ? -1 : f(c));
      const want = Array.from({ length: n }, (_, i) => rule(i));
      if (name !== 'sgd_update') assert.equal(want[41][1], 0, 'the rule flushes a decayed state');
      for (const inPlace of [true, false]) {
        const w = nd.array(w0), states = init[name].map((a) => nd.array(a));
        const opts = { ...attrs[name], clip_gradient: c, ...(inPlace ? { out: w } : {}) };
        const out = nd[name](w, nd.array(g0), ...states, opts);
        const got = [out, ...states].map((x) => x.toTypedArray());
        for (let i = 0; i < n; i++) {
          want[i].forEach((x, k) => assert.equal(got[k][i], x, `${name} clip ${c} ${inPlace ? 'in place' : 'fresh'}: element ${i} of output ${k}`));
        }
        if (!inPlace) assert.deepEqual(w.toTypedArray(), w0, `${name} leaves the weight`);
      }
    }
  }
});

// MXNet's aggregated SGD operators (optimizer_op-inl.h MultiSGDKernel), which Python's SGD calls for
// every group of dense weights: each weight of the group gets its own lr and wd, and the rule is SGD
// with momentum's even without momentum (mom = 0*0 - lr*wd*w - lr*clip(rs*g); w = w + mom), so
// multi_sgd_update rounds differently from sgd_update. Checked in float32 operation by operation
// (Math.fround after each one) on a group of weights of 43 (lanes and tail), 1 and 6 elements.
test('multi_sgd_update / multi_sgd_mom_update / multi_mp_sgd_*: each weight of the group is MultiSGDKernel in float32, bit for bit', () => {
  const f = Math.fround;
  const clipF = (x, c) => (x > c ? c : x < -c ? -c : x);
  const r = rng(11);
  const sizes = [43, 1, 6], lrs = [0.1, 0.05, 0.2], wds = [0.01, 0, 0.5], rs = 0.5, mu = 0.9;
  const W = sizes.map((n) => Float32Array.from(r.uniform(n, -1, 1)));
  const G = sizes.map((n) => Float32Array.from(r.uniform(n, -3, 3)));
  const Mo = sizes.map((n) => Float32Array.from(r.uniform(n, -0.5, 0.5)));
  // the rule for element i of weight j: [new weight, new momentum]
  const rule = (j, i, c, withMom, w0 = W[j][i]) => {
    const lr = f(lrs[j]), wd = f(wds[j]);
    const step = c >= 0 ? f(lr * clipF(f(f(rs) * G[j][i]), f(c))) : f(f(lr * f(rs)) * G[j][i]);
    const m = f(f(f(withMom ? f(f(mu) * Mo[j][i]) : 0) - f(f(lr * wd) * w0)) - step);
    return [f(w0 + m), m];
  };
  for (const c of [-1, 0.75]) {
    const clipAttr = c >= 0 ? { clip_gradient: c } : {};
    // without momentum: the weights only
    const ws = W.map((w) => nd.array(w));
    const outs = nd.multi_sgd_update(...ws.flatMap((w, j) => [w, nd.array(G[j])]),
      { num_weights: 3, lrs, wds, rescale_grad: rs, ...clipAttr, out: ws });
    assert.equal(outs.length, 3);
    ws.forEach((w, j) => assert.deepEqual(Array.from(w.toTypedArray()),
      Array.from({ length: sizes[j] }, (_, i) => rule(j, i, c, false)[0]), `multi_sgd_update clip ${c} weight ${j}`));
    // with momentum: weights and momenta, in place and with fresh outputs
    for (const inPlace of [true, false]) {
      const wm = W.map((w) => nd.array(w)), moms = Mo.map((m) => nd.array(m));
      const res = nd.multi_sgd_mom_update(...wm.flatMap((w, j) => [w, nd.array(G[j]), moms[j]]),
        { num_weights: 3, lrs, wds, rescale_grad: rs, momentum: mu, ...clipAttr, ...(inPlace ? { out: wm } : {}) });
      res.forEach((o, j) => {
        const want = Array.from({ length: sizes[j] }, (_, i) => rule(j, i, c, true));
        assert.deepEqual(Array.from(o.toTypedArray()), want.map((x) => x[0]), `multi_sgd_mom_update clip ${c} weight ${j}`);
        assert.deepEqual(Array.from(moms[j].toTypedArray()), want.map((x) => x[1]), `multi_sgd_mom_update clip ${c} momentum ${j}`);
        if (!inPlace) assert.deepEqual(wm[j].toTypedArray(), W[j], 'a fresh output leaves the weight');
      });
    }
    // mixed precision: float16 weights follow float32 master copies, which take the rule
    const w16 = W.map((w) => nd.array(w, { dtype: 'float16' })), masters = W.map((w) => nd.array(w));
    const moms = Mo.map((m) => nd.array(m));
    nd.multi_mp_sgd_mom_update(...w16.flatMap((w, j) => [w, nd.array(G[j], { dtype: 'float16' }), moms[j], masters[j]]),
      { num_weights: 3, lrs, wds, rescale_grad: rs, momentum: mu, ...clipAttr, out: w16 });
    // the gradient as the kernel reads it: float16, widened (exactly) to float32
    const G16 = G.map((g) => Float32Array.from(g, (x) => roundToFormat(x, FLOAT16)));
    masters.forEach((mst, j) => {
      const saved = G[j];
      G[j] = G16[j];
      const want = Array.from({ length: sizes[j] }, (_, i) => rule(j, i, c, true));
      G[j] = saved;
      assert.deepEqual(Array.from(mst.toTypedArray()), want.map((x) => x[0]), `multi_mp_sgd_mom_update master ${j}`);
      assert.deepEqual(Array.from(moms[j].toTypedArray()), want.map((x) => x[1]), `multi_mp_sgd_mom_update momentum ${j}`);
      assert.deepEqual(Array.from(w16[j].toTypedArray()), want.map((x) => roundToFormat(x[0], FLOAT16)),
        `multi_mp_sgd_mom_update float16 weight ${j}`);
    });
    const v16 = W.map((w) => nd.array(w, { dtype: 'float16' })), m2 = W.map((w) => nd.array(w));
    nd.multi_mp_sgd_update(...v16.flatMap((w, j) => [w, nd.array(G[j], { dtype: 'float16' }), m2[j]]),
      { num_weights: 3, lrs, wds, rescale_grad: rs, ...clipAttr, out: v16 });
    m2.forEach((mst, j) => {
      const saved = G[j];
      G[j] = G16[j];
      const want = Array.from({ length: sizes[j] }, (_, i) => rule(j, i, c, false)[0]);
      G[j] = saved;
      assert.deepEqual(Array.from(mst.toTypedArray()), want, `multi_mp_sgd_update master ${j}`);
    });
  }
  // MXNet's checks: one lr and one wd per weight; the group's inputs by name
  throwsNaming(() => nd.multi_sgd_update(nd.zeros([2]), nd.zeros([2]), { num_weights: 1, lrs: [0.1, 0.2], wds: [0] }),
    /Number of learning rates is inconsistent with num_weights.*Expected number of learning rates: 1, and got 2/);
  throwsNaming(() => nd.multi_sgd_update(nd.zeros([2]), nd.zeros([2]), { num_weights: 1, lrs: [0.1], wds: [] }),
    /Number of weight decays/);
  throwsNaming(() => nd.multi_sgd_update(nd.zeros([2]), nd.zeros([3]), { num_weights: 1, lrs: [0.1], wds: [0] }), /shape/);
  const s = mx.sym.multi_sgd_mom_update(...['w0', 'g0', 'm0', 'w1', 'g1', 'm1'].map((n) => mx.sym.var(n)),
    { num_weights: 2, lrs: [0.1, 0.1], wds: [0, 0], momentum: 0.9 });
  assert.equal(s.listOutputs().length, 2);
});

test('SGD updates a group with MXNet\'s multi_sgd_update rule: w + ((0 - lr*wd*w) - lr*rescale_grad*g), not sgd_update\'s', () => {
  // float32, wd != 0: the two rules round differently; Python 1.9.1's SGD uses the multi_ one for dense arrays
  const f = Math.fround;
  const o = new opt.SGD({ learning_rate: 0.1, wd: 0.3, rescale_grad: 0.5 });
  const r = rng(4);
  const w0 = Float32Array.from(r.uniform(64, -1, 1)), g0 = Float32Array.from(r.uniform(64, -2, 2));
  const w = nd.array(w0);
  o.update([0], [w], [nd.array(g0)], [null]);
  const want = Array.from(w0, (x, i) => f(x + f(f(0 - f(f(f(0.1) * f(0.3)) * x)) - f(f(f(0.1) * f(0.5)) * g0[i]))));
  assert.deepEqual(Array.from(w.toTypedArray()), want);
  const other = Array.from(w0, (x, i) => f(f(f(1 - f(f(0.1) * f(0.3))) * x) - f(f(f(0.1) * f(0.5)) * g0[i])));
  assert.ok(want.some((v, i) => v !== other[i]), 'the sample tells the two rules apart');
});
