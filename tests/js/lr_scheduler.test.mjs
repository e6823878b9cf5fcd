// mx.lr_scheduler (js/lr_scheduler.mjs) against values worked by hand from MXNet 1.9.1's
// lr_scheduler.py formulas: warmup (linear, constant), Factor (with stop_factor_lr and the
// catch-up loop), MultiFactor, Poly and Cosine; callable instances, argument forms and errors.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { lr_scheduler: lrs } = mx;
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));
const close = (a, b, msg) => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${msg ?? ''} got ${a}, expected ${b}`);
const closeAll = (got, want) => got.forEach((v, i) => close(v, want[i], `at ${i}:`));

test('namespace: mx.lr_scheduler and mx.lrScheduler', () => {
  assert.equal(mx.lrScheduler, mx.lr_scheduler);
  for (const k of ['LRScheduler', 'FactorScheduler', 'MultiFactorScheduler', 'PolyScheduler', 'CosineScheduler']) {
    assert.equal(typeof lrs[k], 'function', k);
  }
});

test('FactorScheduler: base_lr * factor^k once num_update passes count + step, not below stop_factor_lr', () => {
  // step 2, factor 0.5: 1 up to update 2, 0.5 for 3-4, 0.25 for 5-6
  const s = new lrs.FactorScheduler(2, 0.5, { base_lr: 1 });
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map((n) => s(n)), [1, 1, 1, 0.5, 0.5, 0.25, 0.25]);
  assert.equal(s.count, 4);
  // resuming at update 7 catches up three reductions at once: 0.125
  const r = new lrs.FactorScheduler({ step: 2, factor: 0.5, baseLr: 1 });
  assert.equal(r(7), 0.125);
  // stop_factor_lr 1e-3: 1, 0.1, 0.01, 0.001, then held at 0.001
  const f = new lrs.FactorScheduler(1, 0.1, 1e-3, 1);
  closeAll([1, 2, 3, 4, 5, 6].map((n) => f(n)), [1, 0.1, 0.01, 0.001, 0.001, 0.001]);
});

test('warmup: linear from warmup_begin_lr to base_lr over warmup_steps, or constant', () => {
  // begin 0.02, base 0.1 over 4 updates: 0.02, 0.04, 0.06, 0.08, then the schedule (0.1)
  const s = new lrs.FactorScheduler(10, 0.5, { base_lr: 0.1, warmup_steps: 4, warmup_begin_lr: 0.02 });
  closeAll([0, 1, 2, 3, 4, 5].map((n) => s(n)), [0.02, 0.04, 0.06, 0.08, 0.1, 0.1]);
  const c = new lrs.FactorScheduler(10, 0.5, { base_lr: 0.1, warmup_steps: 4, warmup_begin_lr: 0.02, warmup_mode: 'constant' });
  assert.deepEqual([0, 3, 4].map((n) => c(n)), [0.02, 0.02, 0.1]);
  assert.equal(c.getWarmupLr(1), 0.02);
  assert.equal(c.get_warmup_lr(1), 0.02);
  throwsNaming(() => c.getWarmupLr(4), /warmup_steps/);
});

test('MultiFactorScheduler: base_lr * factor^(k+1) after step[k]', () => {
  // steps [3, 5], factor 0.1: 1 up to update 3, 0.1 for 4-5, 0.01 from 6
  const s = new lrs.MultiFactorScheduler([3, 5], 0.1, { base_lr: 1 });
  closeAll([1, 2, 3, 4, 5, 6, 100].map((n) => s(n)), [1, 1, 1, 0.1, 0.1, 0.01, 0.01]);
  assert.equal(s.curStepInd, 2);
  assert.equal(s.cur_step_ind, 2);
  // with warmup: 2 updates from 0 to 0.5
  const w = new lrs.MultiFactorScheduler({ step: [4], factor: 0.5, base_lr: 0.5, warmup_steps: 2 });
  closeAll([0, 1, 2, 4, 5].map((n) => w(n)), [0, 0.25, 0.5, 0.5, 0.25]);
});

test('PolyScheduler: final_lr + (base_lr - final_lr) * (1 - nup / max_nup)^pwr after the warmup', () => {
  // max_update 10, base 1, pwr 2, final 0.1, 2 warmup updates from 0: max_steps = 8
  const s = new lrs.PolyScheduler(10, 1, 2, 0.1, 2);
  // warmup 0, 0.5; then 0.1 + 0.9 (1 - (n - 2)/8)^2: n = 2 -> 1, n = 6 -> 0.325, n = 10 -> 0.1; past max_update the last value
  closeAll([0, 1, 2, 6, 10, 12].map((n) => s(n)), [0, 0.5, 1, 0.325, 0.1, 0.1]);
  assert.equal(s.baseLrOrig, 1);
  const p1 = new lrs.PolyScheduler({ max_update: 4, base_lr: 2, pwr: 1 });
  closeAll([1, 2, 3, 4].map((n) => p1(n)), [1.5, 1, 0.5, 0]);
});

test('CosineScheduler: final_lr + (base_lr - final_lr) * (1 + cos(pi * nup / max_nup)) / 2', () => {
  const s = new lrs.CosineScheduler(10, { base_lr: 1 });
  // 0 -> 1, 5 -> 0.5, 10 -> 0; 3 -> (1 + cos(0.3 pi)) / 2 = (1 + 0.5877852522924731) / 2
  closeAll([0, 3, 5, 10, 11].map((n) => s(n)), [1, 0.7938926261462366, 0.5, 0, 0]);
  const f = new lrs.CosineScheduler({ maxUpdate: 4, baseLr: 2, finalLr: 1, warmupSteps: 2, warmupBeginLr: 1 });
  // warmup 1, 1.5; then max_steps 2: n = 2 -> 2, 3 -> 1.5, 4 -> 1
  closeAll([0, 1, 2, 3, 4].map((n) => f(n)), [1, 1.5, 2, 1.5, 1]);
});

test('instances are callable functions of their class, with call(), camelCase and snake_case attributes', () => {
  const s = new lrs.PolyScheduler(8, { base_lr: 0.4 });
  assert.equal(typeof s, 'function');
  assert.ok(s instanceof lrs.PolyScheduler && s instanceof lrs.LRScheduler);
  assert.equal(s(4), s.call(4));
  assert.equal(s.base_lr, s.baseLr);
  s.base_lr = 0.3;
  assert.equal(s.baseLr, 0.3);
  assert.equal(s.max_update, 8);
  assert.equal(s.warmup_mode, 'linear');
  // a subclass written as Python's overrides call()
  class Halving extends lrs.LRScheduler {
    call(n) { return this.baseLr / 2 ** n; }
  }
  const h = new Halving({ base_lr: 1 });
  assert.deepEqual([0, 1, 2].map((n) => h(n)), [1, 0.5, 0.25]);
  throwsNaming(() => new lrs.LRScheduler()(1), /must override/);
});

test('MXNet\'s argument checks', () => {
  throwsNaming(() => new lrs.FactorScheduler(0), /Schedule step must be greater or equal than 1 round/);
  throwsNaming(() => new lrs.FactorScheduler(2, 1.5), /Factor must be no more than 1/);
  throwsNaming(() => new lrs.FactorScheduler(2, 0.5, { base_lr: 0.1, warmup_begin_lr: 0.2 }), /Base lr has to be higher than warmup_begin_lr/);
  throwsNaming(() => new lrs.FactorScheduler(2, 0.5, { warmup_steps: -1 }), /Warmup steps has to be positive or 0/);
  throwsNaming(() => new lrs.FactorScheduler(2, 0.5, { warmup_mode: 'cosine' }), /Supports only linear and constant modes of warmup/);
  throwsNaming(() => new lrs.FactorScheduler(2, 0.5, { warmup_steps: 1.5 }), /warmup_steps/);
  throwsNaming(() => new lrs.MultiFactorScheduler([3, 3]), /increasing integer list/);
  throwsNaming(() => new lrs.MultiFactorScheduler([0, 3]), /greater or equal than 1 round/);
  throwsNaming(() => new lrs.PolyScheduler(0), /maximum number of updates must be strictly positive/);
  throwsNaming(() => new lrs.CosineScheduler(), /max_update/);
  throwsNaming(() => new lrs.CosineScheduler(10, { nosuch: 1 }), /nosuch/);
});
