// lr_scheduler.mjs -- mx.lr_scheduler (MXNet 1.9.1 python/mxnet/lr_scheduler.py): LRScheduler and
// the Factor, MultiFactor, Poly and Cosine schedulers, with linear or constant warmup.
//
// A scheduler maps the number of updates to a learning rate. As in Python (where a scheduler is
// called, `sched(num_update)`), an instance is callable: `sched(numUpdate)`, the same as
// `sched.call(numUpdate)`; a subclass overrides `call(numUpdate)`. Like Python's, the Factor and
// MultiFactor schedulers keep state (baseLr decays as the count passes each step) and the Poly and
// Cosine ones store the last value in baseLr. Attributes are camelCase (`sched.baseLr`,
// `sched.warmupSteps`); Python's snake_case names read and write the same fields.
import { MXNetError } from './core.mjs';
import { bindArgs, snakeAliases } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';

// A subclass hands its bound arguments to LRScheduler's constructor with this marker.
const BOUND = Symbol('bound arguments');


export class LRScheduler {
  // LRScheduler(base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear')
  constructor(...args) {
    const a = args[0] === BOUND ? args[1] : bindArgs(SIGNATURES['lr_scheduler.LRScheduler'], args);
    // callable, as Python's __call__: a function whose prototype is the scheduler's class
    const self = (numUpdate) => self.call(numUpdate);
    delete self.name;
    delete self.length;
    Object.setPrototypeOf(self, new.target.prototype);
    self.baseLr = a.baseLr;
    self.warmupSteps = a.warmupSteps;
    self.warmupFinalLr = a.baseLr;
    self.warmupBeginLr = a.warmupBeginLr;
    if (self.warmupBeginLr > self.warmupFinalLr) throw new MXNetError('Base lr has to be higher than warmup_begin_lr');
    if (self.warmupSteps < 0) throw new MXNetError('Warmup steps has to be positive or 0');
    if (!['linear', 'constant'].includes(a.warmupMode)) throw new MXNetError('Supports only linear and constant modes of warmup');
    self.warmupMode = a.warmupMode;
    return self;
  }

  // The warmup rate for num_update < warmup_steps: linear from warmup_begin_lr to base_lr, or
  // constant at warmup_begin_lr.
  getWarmupLr(numUpdate) {
    if (!(numUpdate < this.warmupSteps)) throw new MXNetError(`get_warmup_lr: num_update ${numUpdate} is not below warmup_steps ${this.warmupSteps}`);
    if (this.warmupMode === 'linear') {
      const increase = (this.warmupFinalLr - this.warmupBeginLr) * numUpdate / this.warmupSteps;
      return this.warmupBeginLr + increase;
    }
    if (this.warmupMode === 'constant') return this.warmupBeginLr;
    throw new MXNetError(`Invalid warmup mode ${this.warmupMode}`);
  }
  get_warmup_lr(numUpdate) { return this.getWarmupLr(numUpdate); }

  // The learning rate after num_update updates (the largest update count of any weight).
  call(numUpdate) { // eslint-disable-line no-unused-vars
    throw new MXNetError('must override this');
  }

  toString() { return `${this.constructor.name}(base_lr=${this.baseLr})`; }
}

export class FactorScheduler extends LRScheduler {
  // FactorScheduler(step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
  //   warmup_begin_lr=0, warmup_mode='linear'): base_lr * factor^floor(num_update / step), not
  //   below stop_factor_lr.
  constructor(...args) {
    const a = bindArgs(SIGNATURES['lr_scheduler.FactorScheduler'], args);
    super(BOUND, a);
    if (a.step < 1) throw new MXNetError('Schedule step must be greater or equal than 1 round');
    if (a.factor > 1.0) throw new MXNetError('Factor must be no more than 1 to make lr reduce');
    this.step = a.step;
    this.factor = a.factor;
    this.stopFactorLr = a.stopFactorLr;
    this.count = 0;
  }
  call(numUpdate) {
    if (numUpdate < this.warmupSteps) return this.getWarmupLr(numUpdate);
    // a loop, not an if (training resumed at a later update)
    while (numUpdate > this.count + this.step) {
      this.count += this.step;
      this.baseLr *= this.factor;
      if (this.baseLr < this.stopFactorLr) this.baseLr = this.stopFactorLr;
    }
    return this.baseLr;
  }
}

export class MultiFactorScheduler extends LRScheduler {
  // MultiFactorScheduler(step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
  //   warmup_mode='linear'): base_lr * factor^(k+1) once num_update passes step[k].
  constructor(...args) {
    const a = bindArgs(SIGNATURES['lr_scheduler.MultiFactorScheduler'], args);
    super(BOUND, a);
    const step = Array.from(a.step);
    if (step.length < 1) throw new MXNetError('MultiFactorScheduler: step must be a non-empty list');
    step.forEach((s, i) => {
      if (i !== 0 && step[i] <= step[i - 1]) throw new MXNetError('Schedule step must be an increasing integer list');
      if (s < 1) throw new MXNetError('Schedule step must be greater or equal than 1 round');
    });
    if (a.factor > 1.0) throw new MXNetError('Factor must be no more than 1 to make lr reduce');
    this.step = step;
    this.curStepInd = 0;
    this.factor = a.factor;
    this.count = 0;
  }
  call(numUpdate) {
    if (numUpdate < this.warmupSteps) return this.getWarmupLr(numUpdate);
    while (this.curStepInd <= this.step.length - 1) {
      if (numUpdate > this.step[this.curStepInd]) {
        this.count = this.step[this.curStepInd];
        this.curStepInd += 1;
        this.baseLr *= this.factor;
      } else {
        return this.baseLr;
      }
    }
    return this.baseLr;
  }
}

// Poly and Cosine: from base_lr down to final_lr over the updates after the warmup, along
// shape(t) for t = 0 .. 1 (1 at the start, 0 at the end); final_lr from max_update on.
class DecayScheduler extends LRScheduler {
  constructor(sigName, args) {
    const a = bindArgs(SIGNATURES[sigName], args);
    super(BOUND, a);
    if (a.maxUpdate < 1) throw new MXNetError('maximum number of updates must be strictly positive');
    this.baseLrOrig = this.baseLr;
    this.maxUpdate = a.maxUpdate;
    this.finalLr = a.finalLr;
    this.maxSteps = this.maxUpdate - this.warmupSteps;
    if ('pwr' in a) this.power = a.pwr; // PolyScheduler's exponent
  }
  call(numUpdate) {
    if (numUpdate < this.warmupSteps) return this.getWarmupLr(numUpdate);
    if (numUpdate <= this.maxUpdate) {
      this.baseLr = this.finalLr + (this.baseLrOrig - this.finalLr) * this.shape((numUpdate - this.warmupSteps) / this.maxSteps);
    }
    return this.baseLr;
  }
}

export class PolyScheduler extends DecayScheduler {
  // PolyScheduler(max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
  //   warmup_mode='linear'): final_lr + (base_lr - final_lr) * (1 - nup/max_nup)^pwr, nup and
  //   max_nup counted after the warmup; final_lr from max_update on.
  constructor(...args) {
    super('lr_scheduler.PolyScheduler', args);
  }
  shape(t) { return (1 - t) ** this.power; }
}

export class CosineScheduler extends DecayScheduler {
  // CosineScheduler(max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
  //   warmup_mode='linear'): final_lr + (base_lr - final_lr) * (1 + cos(pi * nup/max_nup)) / 2.
  constructor(...args) {
    super('lr_scheduler.CosineScheduler', args);
  }
  shape(t) { return (1 + Math.cos(Math.PI * t)) / 2; }
}

snakeAliases(LRScheduler.prototype, ['baseLr', 'warmupSteps', 'warmupFinalLr', 'warmupBeginLr', 'warmupMode',
  'stopFactorLr', 'curStepInd', 'baseLrOrig', 'maxUpdate', 'finalLr', 'maxSteps']);
