// optimizer.mjs -- mx.optimizer (MXNet 1.9.1 python/mxnet/optimizer/optimizer.py): the Optimizer
// base class (learning rate and its scheduler, weight decay, per-parameter lr_mult / wd_mult,
// update counting, multi-precision state), the registered optimizers, create / register, and
// the Updater that keeps one state per weight index.
//
// As in Python, each update calls MXNet's update operator (csrc/ops/optimizer.c: sgd_update,
// sgd_mom_update, mp_sgd_*, nag_mom_update, adam_update, rmsprop_update, rmspropalex_update,
// ftrl_update, signsgd_update, signum_update, ftml_update, lamb_update_phase1/2) with out=weight,
// the states updated in place; AdaGrad, AdaDelta, Adamax, Nadam, SGLD and Test compute with nd
// operators as Python's do. Python's aggregated SGD update (multi_sgd_update over up to
// MXNET_OPTIMIZER_AGGREGATION_SIZE weights) counts every weight of a group before reading the
// learning rates, then runs multi_sgd_update / multi_sgd_mom_update / multi_mp_sgd_* on the group
// (MultiSGDKernel's formula, SGD with momentum's even without momentum), as here. LAMB's
// aggregated path (multi_lamb_update) is its per-weight phase 1 + phase 2.
//
// JS names: classes as Python's; methods camelCase (createState, update, updateMultiPrecision,
// setLearningRate, setLrMult, ...) with Python's snake_case spellings too; attributes camelCase
// (opt.rescaleGrad, opt.numUpdate, opt.lrScheduler, opt.momentum, ...) with their snake_case
// names as aliases. Constructors bind Python's signatures (signatures.mjs): each class's own
// parameters positionally or by name, Optimizer's (rescale_grad, wd, clip_gradient,
// learning_rate, lr_scheduler, param_dict, ...) by name, snake_case or camelCase:
//   new mx.optimizer.SGD({momentum: 0.9, learning_rate: 0.1, wd: 1e-4})
//   mx.optimizer.create('adam', {learningRate: 1e-3})
//
// A subclass written the Python way may override the snake_case methods (create_state,
// update_multi_precision, ...) or the camelCase ones: the optimizer's own calls go through the
// snake_case method, whose base version forwards to the camelCase one.
//
// Updater.getStates() serializes the states (and, with dumpOptimizer, the optimizer) in the
// format trainer.mjs documents (an MXNet NDArray-list file whose "__mxw_updater_states__" entry
// is a uint8 array of UTF-8 JSON describing the rest); setStates(bytes) reads it back.
import { MXNetError } from './core.mjs';
import { NDArray, keep, tidy, invokeByName, array, cpu } from './ndarray.mjs';
import { bindArgs, registerType, isPlainObject, snakeAliases } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { onContext } from './context.mjs';
import { saveBytes, loadBytes } from './io.mjs';
import {
  LRScheduler, FactorScheduler, MultiFactorScheduler, PolyScheduler, CosineScheduler,
} from './lr_scheduler.mjs';

// A subclass hands its bound arguments to Optimizer's constructor with this marker.
const BOUND = Symbol('bound arguments');
const sig = (name) => SIGNATURES[`optimizer.${name}`];


// ---- small helpers ---------------------------------------------------------------------------
const ctxOf = (x) => x._ctx ?? x.context ?? cpu(0);
const op = (name, inputs, attrs = {}, out = undefined) => invokeByName(name, inputs, attrs, out)[0];
// nd.zeros(weight.shape, weight.context, dtype): a state array, kept past any tidy scope
function zeros(weight, dtype = 'float32') {
  return keep(onContext(op('_zeros', [], { shape: weight.shape, dtype }), ctxOf(weight)));
}
const zerosLike = (weight) => zeros(weight, weight.dtype);
function astype32(weight) { return keep(onContext(weight.astype('float32'), ctxOf(weight))); }
// mx.nd helpers the nd-based optimizers use (Python's operators on NDArrays)
const mulS = (x, s) => op('_mul_scalar', [x], { scalar: s });
const plusS = (x, s) => op('_plus_scalar', [x], { scalar: s });
const add = (a, b) => op('broadcast_add', [a, b]);
const mul = (a, b) => op('broadcast_mul', [a, b]);
const div = (a, b) => op('broadcast_div', [a, b]);
const iadd = (a, b) => op('broadcast_add', [a, b], {}, a);
const isub = (a, b) => op('broadcast_sub', [a, b], {}, a);
const imulS = (a, s) => op('_mul_scalar', [a], { scalar: s }, a);
const assign = (dst, src) => { src.copyto(dst); return dst; };
const clipNd = (x, c) => op('clip', [x], { a_min: -c, a_max: c });
const callScheduler = (s, n) => (typeof s === 'function' ? s(n) : s.call(n));
const lookup = (d, k) => {
  if (!d) return undefined;
  if (d instanceof Map) return d.has(k) ? d.get(k) : d.get(String(k));
  return Object.prototype.hasOwnProperty.call(d, k) ? d[k] : undefined;
};
const has = (d, k) => lookup(d, k) !== undefined;
const toPlainDict = (d) => (d instanceof Map ? Object.fromEntries(d) : { ...(d ?? {}) });
function warnOnce(msg) { console.warn(msg); }
function checkArrays(weight, grad) {
  if (!(weight instanceof NDArray)) throw new MXNetError('weight must be an NDArray');
  if (!(grad instanceof NDArray)) throw new MXNetError('grad must be an NDArray');
}
// MXNET_OPTIMIZER_AGGREGATION_SIZE, where there is an environment (Node)
function envInt(name, fallback) {
  const v = typeof process === 'object' && process.env ? process.env[name] : undefined;
  const n = v === undefined ? NaN : parseInt(v, 10);
  return Number.isNaN(n) ? fallback : n;
}
// The argument names and attributes of a Symbol (Python's sym.attr_dict(), sym.list_arguments()).
function symInfo(sym) {
  const args = sym.listArguments();
  let attr = {};
  if (typeof sym.attrDict === 'function') attr = sym.attrDict();
  else {
    const internals = sym.getInternals();
    for (const name of args) {
      try { attr[name] = internals.get(name).listAttr(); } catch { /* no attributes */ }
    }
  }
  return [attr, args];
}

// ---- Optimizer -------------------------------------------------------------------------------
export class Optimizer {
  // Optimizer(rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None, learning_rate=None,
  //   lr_scheduler=None, sym=None, begin_num_update=0, multi_precision=False, param_dict=None)
  constructor(...args) {
    const a = args[0] === BOUND ? args[1] : bindArgs(sig('Optimizer'), args);
    this.rescaleGrad = a.rescaleGrad;
    this.lrScheduler = a.lrScheduler;
    let lr = a.learningRate;
    if (this.lrScheduler == null && lr == null) lr = 0.01;
    this.lr = lr;
    if (this.lrScheduler != null && lr != null) {
      const s = this.lrScheduler;
      const key = 'baseLr' in s || !('base_lr' in s) ? 'baseLr' : 'base_lr';
      if (s[key] !== lr) {
        warnOnce('UserWarning: learning rate from ``lr_scheduler`` has been overwritten by ``learning_rate`` in optimizer.');
        s[key] = lr;
      }
    }
    this.wd = a.wd;
    this.lrMult = {};
    this.wdMult = {};
    this.beginNumUpdate = a.beginNumUpdate;
    this.numUpdate = a.beginNumUpdate;
    this._allIndexUpdateCounts = { 0: {} };
    this._currentDevice = 0;
    Object.defineProperty(this, '_indexUpdateCount', { value: this._allIndexUpdateCounts[0], writable: true, configurable: true });
    this.clipGradient = a.clipGradient;
    this.multiPrecision = a.multiPrecision;
    this.aggregateNum = 0;
    const idx2name = a.paramIdx2name ?? {};
    if (!(isPlainObject(idx2name) || idx2name instanceof Map)) {
      throw new MXNetError('param_idx2name should be a dict of param indexes to names.');
    }
    this.idx2name = toPlainDict(idx2name);
    this.symInfo = a.sym != null ? symInfo(a.sym) : null;
    // not serialized (as Python's __getstate__ drops it): the Trainer sets it
    Object.defineProperty(this, 'paramDict', { value: a.paramDict ?? {}, writable: true, configurable: true, enumerable: false });
    this.allowNpArray = false;
    this.setLrMult({});
    this.setWdMult({});
  }

  static register(klass) { return register(klass); }
  static create_optimizer(name, kwargs) { return create(name, kwargs); }
  static createOptimizer(name, kwargs) { return create(name, kwargs); }

  // The current learning rate: the scheduler's at num_update, else lr.
  get learningRate() { return this.lrScheduler != null ? callScheduler(this.lrScheduler, this.numUpdate) : this.lr; }
  get learning_rate() { return this.learningRate; }

  // Auxiliary state for a weight (none by default).
  createState(index, weight) { return null; } // eslint-disable-line no-unused-vars
  create_state(index, weight) { return this.createState(index, weight); }

  // With multi_precision and a float16 weight: [float32 master copy, state of the copy].
  createStateMultiPrecision(index, weight) {
    if (this.multiPrecision && weight.dtype === 'float16') {
      const master = astype32(weight);
      return [master, this.create_state(index, master)];
    }
    if (weight.dtype === 'float16' && !this.multiPrecision) {
      warnOnce('Accumulating with float16 in optimizer can lead to poor accuracy or slow convergence. '
        + 'Consider using multi_precision=True option of the optimizer');
    }
    return this.create_state(index, weight);
  }
  create_state_multi_precision(index, weight) { return this.createStateMultiPrecision(index, weight); }

  update(index, weight, grad, state) { // eslint-disable-line no-unused-vars
    throw new MXNetError(`${this.constructor.name}.update is not implemented`);
  }

  // multi_precision with a float16 weight: update the float32 master copy with a float32 copy of
  // the gradient, then cast it into the weight.
  updateMultiPrecision(index, weight, grad, state) {
    if (this.multiPrecision && weight.dtype === 'float16') {
      const [master, original] = state;
      const grad32 = grad.astype('float32');
      try {
        this.update(index, master, grad32, original);
      } finally {
        grad32.dispose();
      }
      op('Cast', [master], { dtype: weight.dtype }, weight);
    } else {
      this.update(index, weight, grad, state);
    }
  }
  update_multi_precision(index, weight, grad, state) { return this.updateMultiPrecision(index, weight, grad, state); }

  // Only without a scheduler (Python raises UserWarning otherwise).
  setLearningRate(lr) {
    if (this.lrScheduler != null) {
      throw new MXNetError('LRScheduler of the optimizer has already been defined. Note that set_learning_rate can mutate '
        + 'the value of the learning rate of the optimizer only when the LRScheduler of the optimizer is undefined.');
    }
    this.lr = lr;
  }
  set_learning_rate(lr) { return this.setLearningRate(lr); }
  setLrScale() { throw new MXNetError('set_lr_scale is deprecated: use set_lr_mult'); }
  set_lr_scale() { return this.setLrScale(); }

  // The Symbol's per-argument multipliers (attribute `key`: __lr_mult__ / __wd_mult__) by name.
  _symbolMults(key) {
    const out = {};
    if (!this.symInfo) return out;
    const [attr, argNames] = this.symInfo;
    for (const name of argNames) if (attr[name] && key in attr[name]) out[name] = parseFloat(attr[name][key]);
    return out;
  }

  // lr multipliers by parameter name (or index): the Symbol's __lr_mult__ attributes, then these.
  setLrMult(argsLrMult) {
    this.lrMult = { ...this._symbolMults('__lr_mult__'), ...toPlainDict(argsLrMult) };
  }
  set_lr_mult(a) { return this.setLrMult(a); }

  // wd multipliers: 0 for every named parameter not ending in _weight or _gamma (when
  // param_idx2name is given), the Symbol's __wd_mult__ attributes, then these.
  setWdMult(argsWdMult) {
    this.wdMult = {};
    for (const n of Object.values(this.idx2name)) {
      if (!(n.endsWith('_weight') || n.endsWith('_gamma'))) this.wdMult[n] = 0.0;
    }
    Object.assign(this.wdMult, this._symbolMults('__wd_mult__'), toPlainDict(argsWdMult));
  }
  set_wd_mult(a) { return this.setWdMult(a); }

  // Update counts are kept per device (Updater calls this with the weights' device id).
  _setCurrentContext(deviceId) {
    if (!(deviceId in this._allIndexUpdateCounts)) this._allIndexUpdateCounts[deviceId] = {};
    this._currentDevice = deviceId;
    this._indexUpdateCount = this._allIndexUpdateCounts[deviceId];
  }
  _set_current_context(d) { return this._setCurrentContext(d); }

  // Counts one update of each index; num_update is the largest count.
  _updateCount(index) {
    const indices = Array.isArray(index) ? index : [index];
    for (const idx of indices) {
      if (!(idx in this._indexUpdateCount)) this._indexUpdateCount[idx] = this.beginNumUpdate;
      this._indexUpdateCount[idx] += 1;
      this.numUpdate = Math.max(this._indexUpdateCount[idx], this.numUpdate);
    }
  }
  _update_count(index) { return this._updateCount(index); }
  // What every update starts with (as each of MXNet's update methods does): check the arrays,
  // count the update, and the index's learning rate, weight decay and update count t.
  _startUpdate(index, weight, grad) {
    checkArrays(weight, grad);
    this._update_count(index);
    return { lr: this._get_lr(index), wd: this._get_wd(index), t: this._indexUpdateCount[index] };
  }

  // Learning rates: the scheduler's (or lr), times the Parameter's lr_mult (param_dict), else
  // lr_mult by index, else by name (param_idx2name).
  _getLrs(indices) {
    const lr = this.lrScheduler != null ? callScheduler(this.lrScheduler, this.numUpdate) : this.lr;
    return indices.map((index) => {
      const p = lookup(this.paramDict, index);
      if (p !== undefined) return lr * (p.lrMult ?? p.lr_mult);
      if (has(this.lrMult, index)) return lr * this.lrMult[index];
      if (has(this.idx2name, index)) return lr * (lookup(this.lrMult, this.idx2name[index]) ?? 1.0);
      return lr;
    });
  }
  _get_lrs(indices) { return this._getLrs(indices); }
  _getLr(index) { return this._getLrs([index])[0]; }
  _get_lr(index) { return this._getLr(index); }

  // Weight decays: wd times the Parameter's wd_mult, else wd_mult by index, else by name.
  _getWds(indices) {
    return indices.map((index) => {
      const p = lookup(this.paramDict, index);
      if (p !== undefined) return this.wd * (p.wdMult ?? p.wd_mult);
      if (has(this.wdMult, index)) return this.wd * this.wdMult[index];
      if (has(this.idx2name, index)) return this.wd * (lookup(this.wdMult, this.idx2name[index]) ?? 1.0);
      return this.wd;
    });
  }
  _get_wds(indices) { return this._getWds(indices); }
  _getWd(index) { return this._getWds([index])[0]; }
  _get_wd(index) { return this._getWd(index); }
}
snakeAliases(Optimizer.prototype, ['rescaleGrad', 'lrScheduler', 'lrMult', 'wdMult', 'beginNumUpdate', 'numUpdate',
  'clipGradient', 'multiPrecision', 'aggregateNum', 'symInfo', 'paramDict', 'allowNpArray', 'lazyUpdate', 'wdLh',
  'lowerBound', 'upperBound', 'biasCorrection', 'floatStableEps', 'clipWeights', 'scheduleDecay', 'mSchedule',
  '_indexUpdateCount', '_allIndexUpdateCounts', 'momentumCorrection', 'lastLr', 'curLr', 'warmupStrategy', 'warmupEpochs',
  'batchScale', 'updatesPerEpoch', 'initUpdates', 'numEpochs', 'weightPrevious']);
registerType('optimizer', (v) => v instanceof Optimizer, 'an Optimizer');

// ---- the registry ------------------------------------------------------------------------------
const optRegistry = Object.create(null);
Optimizer.opt_registry = optRegistry;
Optimizer.optRegistry = optRegistry;

// register(klass): makes create(klass.name.toLowerCase()) construct it; returns klass (a decorator).
export function register(klass) {
  if (typeof klass !== 'function') throw new MXNetError('register takes an Optimizer class');
  const name = klass.name.toLowerCase();
  if (name in optRegistry && optRegistry[name] !== klass) {
    console.warn(`WARNING: New optimizer ${klass.name} is overriding existing optimizer ${optRegistry[name].name}`);
  }
  optRegistry[name] = klass;
  return klass;
}

// create(name, kwargs): the registered optimizer of that name (case-insensitive).
export function create(name, kwargs = {}) {
  if (typeof name !== 'string') throw new MXNetError('create takes an optimizer name (a string)');
  const klass = optRegistry[name.toLowerCase()];
  if (!klass) throw new MXNetError(`Cannot find optimizer ${name}`);
  return new klass(kwargs ?? {}); // eslint-disable-line new-cap
}

// Python's create_state_multi_precision of SGD and NAG: [state of the master copy, master copy].
function momentumStateMP(self, index, weight, what) {
  if (self.multiPrecision && weight.dtype === 'float16') {
    const master = astype32(weight);
    return [self.create_state(index, master), master];
  }
  if (weight.dtype === 'float16' && !self.multiPrecision) {
    warnOnce('Accumulating with float16 in optimizer can lead to poor accuracy or slow convergence. '
      + `Consider using multi_precision=True option of the ${what} optimizer`);
  }
  return self.create_state(index, weight);
}

// update / updateMultiPrecision of the optimizers whose _updateImpl takes a weight or a group of
// them (SGD, LARS, LAMB): multi_precision applies to float16 weights.
function listUpdates(klass) {
  const methods = {
    update(index, weight, grad, state) { this._updateImpl(index, weight, grad, state, false); },
    updateMultiPrecision(index, weight, grad, state) {
      const w0 = Array.isArray(index) ? weight[0] : weight;
      this._updateImpl(index, weight, grad, state, this.multiPrecision && w0.dtype === 'float16');
    },
  };
  for (const [k, f] of Object.entries(methods)) { // (as class methods: not enumerable)
    Object.defineProperty(klass.prototype, k, { value: f, writable: true, configurable: true });
  }
}

// ---- SGD -------------------------------------------------------------------------------------
// rescaled_grad = lr * (rescale_grad * clip(grad, clip_gradient) + wd * weight)
// state = momentum * state + rescaled_grad; weight = weight - state
export class SGD extends Optimizer {
  // SGD(momentum=0.0, lazy_update=True, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('SGD'), args);
    super(BOUND, a);
    this.momentum = a.momentum;
    this.lazyUpdate = a.lazyUpdate;
    this.aggregateNum = envInt('MXNET_OPTIMIZER_AGGREGATION_SIZE', 4);
  }
  createStateMultiPrecision(index, weight) { return momentumStateMP(this, index, weight, 'SGD'); }
  createState(index, weight) { return this.momentum !== 0.0 ? zerosLike(weight) : null; }

  _updateImpl(indices, weights, grads, states, multiPrecision = false) {
    if (!Array.isArray(indices)) {
      indices = [indices];
      weights = [weights];
      grads = [grads];
      states = [states];
    }
    weights.forEach((w, i) => checkArrays(w, grads[i]));
    this._update_count(indices);
    const lrs = this._get_lrs(indices);
    const wds = this._get_wds(indices);
    const kwargs = { rescale_grad: this.rescaleGrad };
    if (this.momentum > 0) kwargs.momentum = this.momentum;
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    // Python's aggregate path (dense weights and gradients, the only storage here): one
    // multi_*sgd*_update call for the group, its inputs (weight, grad[, mom][, weight32]) per
    // weight. Python calls sgd_update / sgd_mom_update / mp_* only for sparse ones.
    const multi = { num_weights: weights.length, lrs, wds, ...kwargs };
    if (!multiPrecision) {
      if (this.momentum > 0) invokeByName('multi_sgd_mom_update', weights.flatMap((w, i) => [w, grads[i], states[i]]), multi, weights);
      else invokeByName('multi_sgd_update', weights.flatMap((w, i) => [w, grads[i]]), multi, weights);
      return;
    }
    if (this.momentum > 0) {
      invokeByName('multi_mp_sgd_mom_update', weights.flatMap((w, i) => [w, grads[i], states[i][0], states[i][1]]), multi, weights);
    } else {
      invokeByName('multi_mp_sgd_update', weights.flatMap((w, i) => [w, grads[i], states[i][1]]), multi, weights);
    }
  }
}
listUpdates(SGD);

// [DEPRECATED] Same as SGD.
export class ccSGD extends SGD {} // eslint-disable-line camelcase

// ---- Signum ----------------------------------------------------------------------------------
// rescaled_grad = rescale_grad * clip(grad, clip_gradient) + wd * weight
// state = momentum * state + (1-momentum)*rescaled_grad; weight = (1 - lr * wd_lh) * weight - lr * sign(state)
export class Signum extends Optimizer {
  // Signum(learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('Signum'), args);
    super(BOUND, a);
    this.momentum = a.momentum;
    this.wdLh = a.wdLh;
  }
  createState(index, weight) { return this.momentum !== 0.0 ? zerosLike(weight) : null; }
  _updateImpl(index, weight, grad, state) {
    const { lr, wd } = this._startUpdate(index, weight, grad);
    const kwargs = { rescale_grad: this.rescaleGrad };
    if (this.momentum > 0) kwargs.momentum = this.momentum;
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    if (this.wdLh) kwargs.wd_lh = this.wdLh;
    if (state != null) op('signum_update', [weight, grad, state], { lr, wd, ...kwargs }, weight);
    else op('signsgd_update', [weight, grad], { lr, wd, ...kwargs }, weight);
  }
  update(index, weight, grad, state) { this._updateImpl(index, weight, grad, state); }
}

// ---- FTML ------------------------------------------------------------------------------------
export class FTML extends Optimizer {
  // FTML(beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('FTML'), args);
    super(BOUND, a);
    this.beta1 = a.beta1;
    this.beta2 = a.beta2;
    this.epsilon = a.epsilon;
  }
  createState(index, weight) { return [zerosLike(weight), zerosLike(weight), zerosLike(weight)]; } // d_0, v_0, z_0
  update(index, weight, grad, state) {
    const { lr, wd, t } = this._startUpdate(index, weight, grad);
    const kwargs = { beta1: this.beta1, beta2: this.beta2, epsilon: this.epsilon, rescale_grad: this.rescaleGrad, t };
    if (this.clipGradient) kwargs.clip_grad = this.clipGradient;
    const [d, v, z] = state;
    op('ftml_update', [weight, grad, d, v, z], { lr, wd, ...kwargs }, weight);
  }
}

// ---- LARS ------------------------------------------------------------------------------------
// SGD (with momentum) whose learning rate is scaled per layer (except biases and BatchNorm's gamma
// and beta, by name): lr * eta * |w| / (|g| * rescale_grad + wd * |w| + eps) where both norms are
// positive. As Python's aggregated path: multi_sum_sq of the weights and gradients, multi_lars, then
// preloaded_multi_(mp_)sgd(_mom)_update on groups of aggregate_num weights, the learning rates and
// weight decays as float32 arrays. With momentum_correction the momentum is scaled by the learning
// rate's change between updates (cur_lr / last_lr). Only `_weight` parameters get weight decay
// when param_idx2name names them (LARS's set_wd_mult).
export class LARS extends Optimizer {
  // LARS(momentum=0.0, lazy_update=True, eta=0.001, eps=0, momentum_correction=True, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('LARS'), args);
    super(BOUND, a);
    this.momentum = a.momentum;
    this.momentumCorrection = a.momentumCorrection;
    this.lazyUpdate = a.lazyUpdate;
    this.aggregateNum = envInt('MXNET_OPTIMIZER_AGGREGATION_SIZE', 4);
    this.eta = a.eta;
    this.eps = a.eps;
    this.skip = 0;
    this.lastLr = null;
    this.curLr = null;
  }
  // the learning rates, keeping the last two base rates for the momentum correction
  _getLrs(indices) {
    if (this.curLr != null) this.lastLr = this.curLr;
    const lr = this.lrScheduler != null ? callScheduler(this.lrScheduler, this.numUpdate) : this.lr;
    if (this.curLr == null) this.lastLr = lr;
    this.curLr = lr;
    return super._getLrs(indices);
  }
  setWdMult(argsWdMult) {
    this.wdMult = {};
    for (const n of Object.values(this.idx2name)) if (!n.endsWith('_weight')) this.wdMult[n] = 0.0;
    Object.assign(this.wdMult, this._symbolMults('__wd_mult__'), toPlainDict(argsWdMult));
  }
  createStateMultiPrecision(index, weight) { return momentumStateMP(this, index, weight, 'SGD'); }
  createState(index, weight) { return this.momentum !== 0.0 ? zerosLike(weight) : null; }

  _updateImpl(indices, weights, grads, states, multiPrecision = false) {
    if (!Array.isArray(indices)) {
      indices = [indices];
      weights = [weights];
      grads = [grads];
      states = [states];
    }
    weights.forEach((w, i) => checkArrays(w, grads[i]));
    this._update_count(indices);
    const lrs = this._get_lrs(indices);
    const wds = this._get_wds(indices);
    const kwargs = { rescale_grad: this.rescaleGrad };
    if (this.momentum > 0) {
      kwargs.momentum = this.momentumCorrection && this.lastLr !== 0 ? this.momentum * (this.curLr / this.lastLr) : this.momentum;
    }
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    const names = indices.map((i) => (has(this.idx2name, i) ? this.idx2name[i] : String(i)));
    const skip = (n) => n.endsWith('gamma') || n.endsWith('beta') || n.endsWith('bias');
    const full = [...names.keys()].filter((i) => !skip(names[i]));
    const nbLars = full.length;
    full.push(...[...names.keys()].filter((i) => skip(names[i])));
    const ctx = ctxOf(weights[0]);
    const pick = (list) => full.map((i) => list[i]);
    const [ws, gs, ss] = [pick(weights), pick(grads), pick(states)];
    tidy(() => {
      const newLrs = onContext(array(pick(lrs), { dtype: 'float32' }), ctx);
      const newWds = onContext(array(pick(wds), { dtype: 'float32' }), ctx);
      if (nbLars > 0) {
        const wSumSq = op('multi_sum_sq', ws.slice(0, nbLars), { num_arrays: nbLars });
        const gSumSq = op('multi_sum_sq', gs.slice(0, nbLars), { num_arrays: nbLars });
        const head = (x) => x.get([0, nbLars]);
        op('multi_lars', [head(newLrs), wSumSq, gSumSq, head(newWds)],
          { eta: this.eta, eps: this.eps, rescale_grad: this.rescaleGrad }, head(newLrs));
      }
      for (let s = 0; s < full.length; s += this.aggregateNum) {
        const e = Math.min(full.length, s + this.aggregateNum);
        const group = [];
        for (let i = s; i < e; i++) {
          group.push(ws[i], gs[i]);
          if (!multiPrecision) {
            if (this.momentum > 0) group.push(ss[i]);
          } else if (this.momentum > 0) {
            group.push(ss[i][0], ss[i][1]);
          } else {
            group.push(ss[i][1]);
          }
        }
        group.push(newLrs.get([s, e]), newWds.get([s, e]));
        const name = `preloaded_multi_${multiPrecision ? 'mp_' : ''}sgd_${this.momentum > 0 ? 'mom_' : ''}update`;
        invokeByName(name, group, { num_weights: e - s, ...kwargs }, ws.slice(s, e));
      }
    });
  }
}
listUpdates(LARS);

// ---- LBSGD -----------------------------------------------------------------------------------
// Large-batch SGD: gradients are summed over batch_scale updates (a macro-batch); on its last one
// the weight takes an SGD (with momentum) step with the mean gradient and the learning rate times
// a warmup multiplier: 'linear', 'power2' or 'sqrt' from 1 to batch_scale over warmup_epochs *
// updates_per_epoch updates, or 'lars': sqrt(|w|^2 / (|g|^2 + wd |w|^2 + 1e-18)) clipped to
// [0.01, 100]. The other updates leave the weight unchanged. (Python keeps the first gradient of a
// macro-batch by reference, so a Trainer, which overwrites its gradient buffers, sums the last
// gradient batch_scale times; here it is copied, as the algorithm intends.)
export class LBSGD extends Optimizer {
  // LBSGD(momentum=0.0, multi_precision=False, warmup_strategy='linear', warmup_epochs=5,
  //   batch_scale=1, updates_per_epoch=32, begin_epoch=0, num_epochs=60, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('LBSGD'), args);
    super(BOUND, a);
    this.momentum = a.momentum;
    this.multiPrecision = a.multiPrecision;
    this.warmupStrategy = a.warmupStrategy;
    this.warmupEpochs = a.warmupEpochs;
    this.batchScale = a.batchScale;
    this.updatesPerEpoch = a.updatesPerEpoch;
    this.initUpdates = a.beginEpoch * a.updatesPerEpoch;
    this.numEpochs = a.numEpochs;
    this.lbmult = 1;
    // index -> {cum_grad: NDArray | 0, num_cums}: arrays, not saved with the optimizer's fields
    Object.defineProperty(this, 'cumgrads', { value: {}, writable: true, configurable: true, enumerable: false });
    this.adaptive = false;
    this.admult = 1;
  }
  createState(index, weight) {
    if (this.multiPrecision && weight.dtype === 'float16') {
      const master = astype32(weight);
      return [this.momentum !== 0.0 ? zeros(weight) : null, master];
    }
    if (weight.dtype === 'float16' && !this.multiPrecision) {
      warnOnce('Accumulating with float16 in optimizer can lead to poor accuracy or slow convergence. '
        + 'Consider using multi_precision=True option of the SGD optimizer');
    }
    return this.momentum !== 0.0 ? zerosLike(weight) : null;
  }
  _getLbmult(nup) {
    const nwup = this.warmupEpochs * this.updatesPerEpoch, maxmult = this.batchScale;
    if (nup >= nwup) return maxmult;
    if (nwup <= 1) return 1.0;
    switch (this.warmupStrategy) {
      case 'linear': return 1.0 + (maxmult - 1) * nup / nwup;
      case 'power2': return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup);
      case 'sqrt': return 1.0 + (maxmult - 1) * Math.sqrt(nup / nwup);
      default: return 1.0;
    }
  }
  _get_lbmult(nup) { return this._getLbmult(nup); }
  // sums of squares (Python's _l2norm here is the inner product)
  _l2norm(v) { return tidy(() => op('sum', [op('square', [v.astype('float32')])]).item()); }
  _getLars(weight, g, wd) {
    const w2 = this._l2norm(weight), g2 = this._l2norm(g);
    return Math.min(100, Math.max(0.01, Math.sqrt(w2 / (g2 + wd * w2 + 1e-18))));
  }
  _get_lars(weight, g, wd) { return this._getLars(weight, g, wd); }
  _cumulateGradient(grad, index) {
    const c = this.cumgrads[index];
    let cum, num;
    if (c && c.num_cums > 0) {
      cum = keep(c.cum_grad instanceof NDArray ? add(c.cum_grad, grad) : grad.copy());
      num = c.num_cums + 1;
    } else {
      cum = keep(grad.copy());
      num = this.initUpdates + 1;
    }
    if (c?.cum_grad instanceof NDArray) c.cum_grad.dispose();
    this.cumgrads[index] = { cum_grad: cum, num_cums: num };
    return this.cumgrads[index];
  }
  update(index, weight, grad, state) {
    checkArrays(weight, grad);
    let lr = this._get_lr(index);
    const wd = this._get_wd(index);
    this._update_count(index);
    const c = this._cumulateGradient(grad, index);
    if (c.num_cums % this.batchScale !== 0) {
      op('sgd_update', [weight, grad], { lr: 0.0, wd }, weight);
      return;
    }
    tidy(() => {
      const g = mulS(c.cum_grad, 1 / this.batchScale);
      lr *= this.warmupStrategy === 'lars' ? this._get_lars(weight, g, wd) : this._get_lbmult(c.num_cums);
      const kwargs = { rescale_grad: this.rescaleGrad };
      if (this.momentum > 0) kwargs.momentum = this.momentum;
      if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
      if (!Array.isArray(state)) {
        if (state != null) op('sgd_mom_update', [weight, g, state], { lr, wd, ...kwargs }, weight);
        else op('sgd_update', [weight, g], { lr, wd, ...kwargs }, weight);
      } else if (state[0] != null) {
        op('mp_sgd_mom_update', [weight, g, state[0], state[1]], { lr, wd, ...kwargs }, weight);
      } else {
        op('mp_sgd_update', [weight, g, state[1]], { lr, wd, ...kwargs }, weight);
      }
    });
    c.cum_grad.dispose();
    c.cum_grad = 0; // (the macro-batch's sum restarts; num_cums counts on)
  }
}

// ---- LAMB ------------------------------------------------------------------------------------
export class LAMB extends Optimizer {
  // LAMB(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6, lower_bound=None,
  //   upper_bound=None, bias_correction=True, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('LAMB'), args);
    super(BOUND, a);
    this.beta1 = a.beta1;
    this.beta2 = a.beta2;
    this.epsilon = a.epsilon;
    this.lowerBound = a.lowerBound;
    this.upperBound = a.upperBound;
    this.biasCorrection = a.biasCorrection;
    this.aggregateNum = Math.max(1, Math.min(45, envInt('MXNET_OPTIMIZER_AGGREGATION_SIZE', 45)));
  }
  createState(index, weight) { return [zerosLike(weight), zerosLike(weight)]; } // mean, var

  // One weight: phase 1 gives the direction g (mean/var updated in place), phase 2 scales the
  // step by the trust ratio ||w|| / ||g||.
  _updateOne(index, weight, grad, state, multiPrecision) {
    const { lr, wd, t } = this._startUpdate(index, weight, grad);
    const kwargs = {
      beta1: this.beta1, beta2: this.beta2, epsilon: this.epsilon, bias_correction: this.biasCorrection,
      rescale_grad: this.rescaleGrad, t,
    };
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    const bounds = {};
    if (this.lowerBound) bounds.lower_bound = this.lowerBound;
    if (this.upperBound) bounds.upper_bound = this.upperBound;
    tidy(() => {
      if (multiPrecision) {
        const [weight32, [mean, v]] = state;
        const g = op('mp_lamb_update_phase1', [weight, grad, mean, v, weight32], { wd, ...kwargs });
        const r1 = op('norm', [weight32]);
        const r2 = op('norm', [g]);
        op('mp_lamb_update_phase2', [weight, g, r1, r2, weight32], { lr, ...bounds }, weight);
      } else {
        const [mean, v] = state;
        const g = op('lamb_update_phase1', [weight, grad, mean, v], { wd, ...kwargs });
        const r1 = op('norm', [weight]);
        const r2 = op('norm', [g]);
        op('lamb_update_phase2', [weight, g, r1, r2], { lr, ...bounds }, weight);
      }
    });
  }
  _updateImpl(index, weight, grad, state, multiPrecision = false) {
    if (!Array.isArray(index)) { this._updateOne(index, weight, grad, state, multiPrecision); return; }
    index.forEach((idx, i) => this._updateOne(idx, weight[i], grad[i], state[i], multiPrecision));
  }
}
listUpdates(LAMB);

// ---- DCASGD ----------------------------------------------------------------------------------
// Delay-compensated asynchronous SGD: g = clip(rescale_grad * grad, clip_gradient);
// mom = momentum * mom - lr * (g + wd * w + lamda * g * g * (w - w_prev)) (mom = the step without
// momentum); w_prev = w; w += mom. (Python tests the momentum array's truth value, which raises
// for a weight of more than one element: here a momentum state is used when there is one.)
export class DCASGD extends Optimizer {
  // DCASGD(momentum=0.0, lamda=0.04, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('DCASGD'), args);
    super(BOUND, a);
    this.momentum = a.momentum;
    this.weightPrevious = {};
    this.lamda = a.lamda;
  }
  createState(index, weight) {
    const prev = keep(onContext(weight.copy(), ctxOf(weight)));
    return [this.momentum === 0.0 ? null : zerosLike(weight), prev];
  }
  update(index, weight, grad, state) {
    checkArrays(weight, grad);
    this._update_count(index);
    const lr = this._get_lr(index), wd = this._get_wd(index);
    const [mom, prev] = state;
    tidy(() => {
      let g = mulS(grad, this.rescaleGrad);
      if (this.clipGradient != null) g = clipNd(g, this.clipGradient);
      // -lr * (g + wd * w + lamda * g * g * (w - w_prev))
      const dc = mul(mulS(mul(g, g), this.lamda), op('broadcast_sub', [weight, prev]));
      const step = mulS(add(add(g, mulS(weight, wd)), dc), -lr);
      if (mom != null) {
        imulS(mom, this.momentum);
        iadd(mom, step);
        assign(prev, weight);
        iadd(weight, mom);
      } else {
        assign(prev, weight);
        iadd(weight, step);
      }
    });
  }
}

// ---- NAG -------------------------------------------------------------------------------------
export class NAG extends Optimizer {
  // NAG(momentum=0.0, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('NAG'), args);
    super(BOUND, a);
    this.momentum = a.momentum;
  }
  createStateMultiPrecision(index, weight) { return momentumStateMP(this, index, weight, 'NAG'); }
  createState(index, weight) { return this.momentum !== 0.0 ? zerosLike(weight) : null; }
  _updateImpl(index, weight, grad, state, multiPrecision = false) {
    const { lr, wd } = this._startUpdate(index, weight, grad);
    const kwargs = { rescale_grad: this.rescaleGrad };
    if (this.momentum > 0) kwargs.momentum = this.momentum;
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    if (!multiPrecision) {
      if (state != null) op('nag_mom_update', [weight, grad, state], { lr, wd, ...kwargs }, weight);
      else op('sgd_update', [weight, grad], { lr, wd, ...kwargs }, weight);
    } else if (state[0] != null) {
      op('mp_nag_mom_update', [weight, grad, state[0], state[1]], { lr, wd, ...kwargs }, weight);
    } else {
      op('mp_sgd_update', [weight, grad, state[1]], { lr, wd, ...kwargs }, weight);
    }
  }
  update(index, weight, grad, state) { this._updateImpl(index, weight, grad, state, false); }
  updateMultiPrecision(index, weight, grad, state) {
    this._updateImpl(index, weight, grad, state, this.multiPrecision && weight.dtype === 'float16' && Array.isArray(state));
  }
}

// ---- SGLD ------------------------------------------------------------------------------------
// weight += -lr/2 * (rescale_grad*clip(grad) + wd*weight) + N(0, sqrt(lr))
export class SGLD extends Optimizer {
  // SGLD(**kwargs)
  constructor(...args) {
    super(BOUND, bindArgs(sig('SGLD'), args));
  }
  createState() { return null; }
  update(index, weight, grad) {
    const { lr, wd } = this._startUpdate(index, weight, grad);
    tidy(() => {
      let g = mulS(grad, this.rescaleGrad);
      if (this.clipGradient != null) g = clipNd(g, this.clipGradient);
      iadd(weight, mulS(add(g, mulS(weight, wd)), -lr / 2));
      const noise = op('_random_normal', [], { loc: 0, scale: Math.sqrt(lr), shape: weight.shape, dtype: weight.dtype });
      iadd(weight, noise);
    });
  }
}

// ---- Adam ------------------------------------------------------------------------------------
// rescaled_grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
// m = beta1 * m + (1 - beta1) * rescaled_grad; v = beta2 * v + (1 - beta2) * (rescaled_grad**2)
// lr = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t); w = w - lr * m / (sqrt(v) + epsilon)
export class Adam extends Optimizer {
  // Adam(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, lazy_update=True, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('Adam'), args);
    super(BOUND, a);
    this.beta1 = a.beta1;
    this.beta2 = a.beta2;
    this.epsilon = a.epsilon;
    this.lazyUpdate = a.lazyUpdate;
  }
  createState(index, weight) { return [zerosLike(weight), zerosLike(weight)]; } // mean, variance
  update(index, weight, grad, state) {
    const { lr: baseLr, wd, t } = this._startUpdate(index, weight, grad);
    const coef1 = 1.0 - this.beta1 ** t;
    const coef2 = 1.0 - this.beta2 ** t;
    const lr = baseLr * (Math.sqrt(coef2) / coef1);
    const kwargs = { beta1: this.beta1, beta2: this.beta2, epsilon: this.epsilon, rescale_grad: this.rescaleGrad };
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    const [mean, v] = state;
    op('adam_update', [weight, grad, mean, v], { lazy_update: this.lazyUpdate, lr, wd, ...kwargs }, weight);
  }
}

// ---- AdaGrad (nd operators, as Python's dense path) ----------------------------------------
// grad = clip(grad * rescale_grad, clip_gradient); history += square(grad)
// div = grad / sqrt(history + float_stable_eps); weight += (div + weight * wd) * -lr
export class AdaGrad extends Optimizer {
  // AdaGrad(eps=1e-7, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('AdaGrad'), args);
    super(BOUND, a);
    this.floatStableEps = a.eps;
  }
  createState(index, weight) { return zeros(weight); } // history (float32, as Python's zeros)
  update(index, weight, grad, state) {
    const { lr, wd } = this._startUpdate(index, weight, grad);
    const history = state;
    tidy(() => {
      let g = mulS(grad, this.rescaleGrad);
      if (this.clipGradient != null) g = clipNd(g, this.clipGradient);
      iadd(history, op('square', [g]));
      const d = div(g, op('sqrt', [plusS(history, this.floatStableEps)]));
      iadd(weight, mulS(add(d, mulS(weight, wd)), -lr));
    });
  }
}

// ---- RMSProp ---------------------------------------------------------------------------------
export class RMSProp extends Optimizer {
  // RMSProp(learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
  //   clip_weights=None, **kwargs): rmsprop_update, or rmspropalex_update when centered
  constructor(...args) {
    const a = bindArgs(sig('RMSProp'), args);
    super(BOUND, a);
    this.gamma1 = a.gamma1;
    this.gamma2 = a.gamma2;
    this.centered = a.centered;
    this.epsilon = a.epsilon;
    this.clipWeights = a.clipWeights;
  }
  // float32 states, as Python's zeros(weight.shape, weight.context)
  createState(index, weight) { return this.centered ? [zeros(weight), zeros(weight), zeros(weight)] : [zeros(weight)]; }
  update(index, weight, grad, state) {
    const { lr, wd } = this._startUpdate(index, weight, grad);
    const kwargs = { gamma1: this.gamma1, epsilon: this.epsilon, rescale_grad: this.rescaleGrad };
    if (this.centered) kwargs.gamma2 = this.gamma2;
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    if (this.clipWeights) kwargs.clip_weights = this.clipWeights;
    if (!this.centered) {
      const [n] = state;
      op('rmsprop_update', [weight, grad, n], { lr, wd, ...kwargs }, weight);
    } else {
      const [n, g, delta] = state;
      op('rmspropalex_update', [weight, grad, n, g, delta], { lr, wd, ...kwargs }, weight);
    }
  }
}

// ---- AdaDelta (nd operators) -----------------------------------------------------------------
// grad = clip(grad * rescale_grad, clip_gradient); acc_grad = rho * acc_grad + (1 - rho) * grad * grad
// delta = sqrt(acc_delta + epsilon) / sqrt(acc_grad + epsilon) * grad
// acc_delta = rho * acc_delta + (1 - rho) * delta * delta; weight -= (delta + wd * weight)
// As Python's, the update scales the gradient array it is given in place (grad *= rescale_grad).
export class AdaDelta extends Optimizer {
  // AdaDelta(rho=0.90, epsilon=1e-5, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('AdaDelta'), args);
    super(BOUND, a);
    this.rho = a.rho;
    this.epsilon = a.epsilon;
  }
  createState(index, weight) { return [zeros(weight), zeros(weight)]; } // accumulated g, accumulated delta
  update(index, weight, grad, state) {
    const { wd } = this._startUpdate(index, weight, grad);
    const [accG, accDelta] = state;
    tidy(() => {
      imulS(grad, this.rescaleGrad);
      let g = grad;
      if (this.clipGradient != null) g = clipNd(g, this.clipGradient);
      imulS(accG, this.rho);
      iadd(accG, mul(mulS(g, 1.0 - this.rho), g));
      const cur = mul(div(op('sqrt', [plusS(accDelta, this.epsilon)]), op('sqrt', [plusS(accG, this.epsilon)])), g);
      imulS(accDelta, this.rho);
      iadd(accDelta, mul(mulS(cur, 1.0 - this.rho), cur));
      isub(weight, add(cur, mulS(weight, wd)));
    });
  }
}

// ---- Ftrl ------------------------------------------------------------------------------------
export class Ftrl extends Optimizer {
  // Ftrl(lamda1=0.01, learning_rate=0.1, beta=1, **kwargs). As Python's, learning_rate is not
  // handed to Optimizer (a scheduler keeps its own base_lr) but set as lr afterwards.
  constructor(...args) {
    const a = bindArgs(sig('Ftrl'), args);
    super(BOUND, { ...a, learningRate: null });
    this.lamda1 = a.lamda1;
    this.beta = a.beta;
    this.lr = a.learningRate;
  }
  createState(index, weight) { return [zeros(weight), zeros(weight)]; } // z, n (float32)
  update(index, weight, grad, state) {
    const { lr, wd } = this._startUpdate(index, weight, grad);
    const kwargs = { lamda1: this.lamda1, beta: this.beta, rescale_grad: this.rescaleGrad };
    if (this.clipGradient) kwargs.clip_gradient = this.clipGradient;
    const [z, n] = state;
    op('ftrl_update', [weight, grad, z, n], { lr, wd, ...kwargs }, weight);
  }
}

// ---- Adamax (nd operators) -------------------------------------------------------------------
// grad = clip(grad * rescale_grad + wd * weight, clip_gradient); m = beta1 * m + (1 - beta1) * grad
// u = maximum(beta2 * u, abs(grad)); weight -= lr / (1 - beta1**t) * m / u
export class Adamax extends Optimizer {
  // Adamax(learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('Adamax'), args);
    super(BOUND, a);
    this.beta1 = a.beta1;
    this.beta2 = a.beta2;
  }
  createState(index, weight) { return [zerosLike(weight), zerosLike(weight)]; }
  update(index, weight, grad, state) {
    const { lr: baseLr, wd, t } = this._startUpdate(index, weight, grad);
    const lr = baseLr / (1.0 - this.beta1 ** t);
    const [m, u] = state;
    tidy(() => {
      let g = add(mulS(grad, this.rescaleGrad), mulS(weight, wd));
      if (this.clipGradient != null) g = clipNd(g, this.clipGradient);
      imulS(m, this.beta1);
      iadd(m, mulS(g, 1.0 - this.beta1));
      assign(u, op('broadcast_maximum', [mulS(u, this.beta2), op('abs', [g])]));
      isub(weight, div(mulS(m, lr), u));
    });
  }
}

// ---- Nadam (nd operators) --------------------------------------------------------------------
export class Nadam extends Optimizer {
  // Nadam(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, schedule_decay=0.004, **kwargs)
  constructor(...args) {
    const a = bindArgs(sig('Nadam'), args);
    super(BOUND, a);
    this.beta1 = a.beta1;
    this.beta2 = a.beta2;
    this.epsilon = a.epsilon;
    this.scheduleDecay = a.scheduleDecay;
    this.mSchedule = 1.0;
  }
  createState(index, weight) { return [zerosLike(weight), zerosLike(weight)]; }
  update(index, weight, grad, state) {
    const { lr, wd, t } = this._startUpdate(index, weight, grad);
    // warming momentum schedule
    const momentumT = this.beta1 * (1.0 - 0.5 * 0.96 ** (t * this.scheduleDecay));
    const momentumT1 = this.beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * this.scheduleDecay));
    this.mSchedule *= momentumT;
    const mScheduleNext = this.mSchedule * momentumT1;
    const [m, v] = state;
    tidy(() => {
      let g = add(mulS(grad, this.rescaleGrad), mulS(weight, wd));
      if (this.clipGradient != null) g = clipNd(g, this.clipGradient);
      imulS(m, this.beta1);
      iadd(m, mulS(g, 1.0 - this.beta1));
      imulS(v, this.beta2);
      iadd(v, mul(mulS(g, 1.0 - this.beta2), g));
      const gPrime = mulS(g, 1 / (1.0 - this.mSchedule));
      const mPrime = mulS(m, 1 / (1.0 - mScheduleNext));
      const vPrime = mulS(v, 1 / (1.0 - this.beta2 ** t));
      const mBar = add(mulS(gPrime, 1.0 - momentumT), mulS(mPrime, momentumT1));
      isub(weight, div(mulS(mBar, lr), plusS(op('sqrt', [vPrime]), this.epsilon)));
    });
  }
}

// ---- Test ------------------------------------------------------------------------------------
export class Test extends Optimizer {
  // Test(**kwargs): weight += rescale_grad * grad; the state duplicates the weight
  constructor(...args) { super(BOUND, bindArgs(sig('Test'), args)); }
  createState(index, weight) { return zeros(weight); }
  update(index, weight, grad, state) {
    tidy(() => { iadd(weight, mulS(grad, this.rescaleGrad)); });
    assign(state, weight);
  }
}

for (const k of [SGD, Signum, FTML, LARS, LBSGD, LAMB, DCASGD, NAG, SGLD, ccSGD, Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, Adamax, Nadam, Test]) register(k);

// ---- Updater ---------------------------------------------------------------------------------
// The states' file format (also the Trainer's saveStates): an MXNet NDArray-list (nd.save) file
// of named arrays. The entry "__mxw_updater_states__" is a uint8 array holding UTF-8 JSON:
//   {"format": "mxnet-wasm-updater-states", "version": 1,
//    "states": [[index, desc], ...],          index a number or a string, as given to update
//    "optimizer": null | {"name": registered name, "class": class name, "fields": {...},
//                         "lrScheduler": null | {"class": class name, "fields": {...}}}}
// where desc is null, {"array": entry name} or {"tuple": [desc, ...]} (a state's nesting, e.g.
// SGD's [momentum, float32 master copy]); the state arrays are the entries "state:<i>" and
// "state:<i>:<j>:...", <i> the position in "states". The optimizer's fields are its own
// JSON-representable attributes (lr, wd, rescale_grad, num_update, the update counts, lr_mult,
// wd_mult, momentum, ...), without param_dict, as Python's pickle of the optimizer.
export const STATES_ENTRY = '__mxw_updater_states__';
const SCHEDULER_CLASSES = { LRScheduler, FactorScheduler, MultiFactorScheduler, PolyScheduler, CosineScheduler };

function jsonFields(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'lrScheduler' || k === 'paramDict' || typeof v === 'function') continue;
    if (v instanceof NDArray) continue;
    let text;
    try { text = JSON.stringify(v); } catch { continue; }
    if (text === undefined) continue;
    out[k] = JSON.parse(text);
  }
  return out;
}

function dumpOptimizer(o) {
  const name = Object.keys(optRegistry).find((k) => optRegistry[k] === o.constructor) ?? o.constructor.name.toLowerCase();
  const s = o.lrScheduler;
  return {
    name,
    class: o.constructor.name,
    fields: jsonFields(o),
    lrScheduler: s == null ? null : { class: s.constructor?.name ?? 'LRScheduler', fields: jsonFields(s) },
  };
}

// An optimizer (and its scheduler) from dumped fields, without running a constructor (as
// unpickling does). `current` (the optimizer being replaced) supplies classes that are not
// registered.
function restoreOptimizer(d, current) {
  let klass = optRegistry[d.name];
  if (!klass || klass.name !== d.class) klass = current && current.constructor.name === d.class ? current.constructor : klass;
  if (!klass) throw new MXNetError(`cannot restore optimizer '${d.class}': no optimizer of that name is registered`);
  const o = Object.create(klass.prototype);
  Object.defineProperty(o, 'paramDict', { value: {}, writable: true, configurable: true, enumerable: false });
  Object.assign(o, d.fields);
  Object.defineProperty(o, '_indexUpdateCount', {
    value: o._allIndexUpdateCounts[o._currentDevice ?? 0] ?? {}, writable: true, configurable: true,
  });
  o.lrScheduler = null;
  if (d.lrScheduler) {
    const cur = current?.lrScheduler;
    let sk = SCHEDULER_CLASSES[d.lrScheduler.class];
    if (cur && cur.constructor?.name === d.lrScheduler.class) sk = cur.constructor;
    if (!sk) throw new MXNetError(`cannot restore learning rate scheduler '${d.lrScheduler.class}'`);
    const self = (numUpdate) => self.call(numUpdate);
    delete self.name;
    delete self.length;
    Object.setPrototypeOf(self, sk.prototype);
    Object.assign(self, d.lrScheduler.fields);
    o.lrScheduler = self;
  }
  return o;
}

export class Updater {
  // Updater(optimizer): callable as Python's, updater(index, grad, weight); indices, grads and
  // weights may be lists (one call per device).
  constructor(optimizer) {
    if (!(optimizer instanceof Optimizer)) throw new MXNetError('Updater takes an Optimizer');
    const self = (index, grad, weight) => self.call(index, grad, weight);
    delete self.name;
    delete self.length;
    Object.setPrototypeOf(self, new.target.prototype);
    self.optimizer = optimizer;
    self.states = new Map();
    self.statesSynced = new Map();
    return self;
  }
  // Python sets aggregate_updates at construction; here it follows the optimizer, which
  // setStates may replace by one of another class.
  get aggregateUpdates() { return this.optimizer.aggregateNum > 0; }

  call(index, grad, weight) {
    let indices, grads, weights;
    if (!Array.isArray(index)) {
      indices = [index];
      grads = [grad];
      weights = [weight];
    } else {
      indices = index;
      grads = grad;
      weights = weight;
    }
    const opt = this.optimizer;
    if (weights.length) opt._set_current_context(ctxOf(weights[0]).deviceId);
    indices.forEach((idx, i) => {
      if (!this.states.has(idx)) {
        this.states.set(idx, opt.create_state_multi_precision(idx, weights[i]));
        this.statesSynced.set(idx, true);
      } else if (!this.statesSynced.get(idx)) {
        this.states.set(idx, this.syncStateContext(this.states.get(idx), ctxOf(weights[i])));
        this.statesSynced.set(idx, true);
      }
    });
    if (this.aggregateUpdates) {
      // by dtype, in groups of aggregate_num
      const byType = new Map();
      indices.forEach((idx, i) => {
        const dt = weights[i].dtype;
        if (!byType.has(dt)) byType.set(dt, []);
        byType.get(dt).push([idx, weights[i], grads[i]]);
      });
      const n = opt.aggregateNum;
      for (const group of byType.values()) {
        for (let at = 0; at < group.length; at += n) {
          const part = group.slice(at, at + n);
          opt.update_multi_precision(part.map((x) => x[0]), part.map((x) => x[1]), part.map((x) => x[2]),
            part.map((x) => this.states.get(x[0])));
        }
      }
    } else {
      indices.forEach((idx, i) => opt.update_multi_precision(idx, weights[i], grads[i], this.states.get(idx)));
    }
  }

  // The state's arrays recorded on `context` (states loaded from a file).
  syncStateContext(state, context) {
    if (state instanceof NDArray) return onContext(state, context);
    if (Array.isArray(state)) return state.map((s) => this.syncStateContext(s, context));
    return state;
  }
  sync_state_context(state, context) { return this.syncStateContext(state, context); }

  // The states (and the optimizer, with dumpOptimizer) as bytes, in the format above.
  getStates(dumpOptimizerToo = false) {
    const arrays = {};
    const entries = [];
    const describe = (s, name) => {
      if (s == null) return null;
      if (s instanceof NDArray) { arrays[name] = s; return { array: name }; }
      if (Array.isArray(s)) return { tuple: s.map((x, j) => describe(x, `${name}:${j}`)) };
      throw new MXNetError(`cannot save an optimizer state of type ${s?.constructor?.name ?? typeof s}`);
    };
    let i = 0;
    for (const [idx, s] of this.states) entries.push([idx, describe(s, `state:${i++}`)]);
    const header = {
      format: 'mxnet-wasm-updater-states',
      version: 1,
      states: entries,
      optimizer: dumpOptimizerToo ? dumpOptimizer(this.optimizer) : null,
    };
    const text = new TextEncoder().encode(JSON.stringify(header));
    const head = array(text, { dtype: 'uint8' });
    try {
      return saveBytes({ [STATES_ENTRY]: head, ...arrays });
    } finally {
      head.dispose();
    }
  }
  get_states(dumpOptimizerToo = false) { return this.getStates(dumpOptimizerToo); }

  // Reads getStates' bytes: the states (and the optimizer, when saved with it).
  setStates(bytes) {
    const { header, arrays } = parseStates(bytes);
    const build = (d) => {
      if (d == null) return null;
      if (d.array !== undefined) {
        const a = arrays[d.array];
        if (!a) throw new MXNetError(`optimizer states: the array '${d.array}' is missing`);
        delete arrays[d.array];
        return keep(a);
      }
      if (Array.isArray(d.tuple)) return d.tuple.map(build);
      throw new MXNetError('optimizer states: malformed state description');
    };
    const states = new Map(header.states.map(([idx, d]) => [idx, build(d)]));
    for (const a of Object.values(arrays)) a.dispose();
    if (header.optimizer) this.optimizer = restoreOptimizer(header.optimizer, this.optimizer);
    this.dispose();
    this.states = states;
    this.statesSynced = new Map([...states.keys()].map((k) => [k, false]));
  }
  set_states(bytes) { return this.setStates(bytes); }

  // Frees the optimizer states' arrays (new: JS has no reference counting); the next update
  // creates fresh ones.
  dispose() {
    const free = (s) => {
      if (s instanceof NDArray) s.dispose();
      else if (Array.isArray(s)) s.forEach(free);
    };
    for (const s of this.states.values()) free(s);
    this.states = new Map();
    this.statesSynced = new Map();
  }
}

// Parses the states format: {header, arrays (name -> NDArray, the header entry removed)}.
export function parseStates(bytes) {
  let loaded;
  try {
    loaded = loadBytes(bytes);
  } catch (e) {
    throw new MXNetError(`not an optimizer states file (${e.message})`);
  }
  const head = !Array.isArray(loaded) ? loaded[STATES_ENTRY] : undefined;
  if (!head) {
    for (const a of Object.values(loaded)) a?.dispose?.();
    throw new MXNetError(`not an optimizer states file: no '${STATES_ENTRY}' entry`);
  }
  const text = new TextDecoder().decode(Uint8Array.from(head.toTypedArray()));
  head.dispose();
  delete loaded[STATES_ENTRY];
  const header = JSON.parse(text);
  if (header.format !== 'mxnet-wasm-updater-states' || header.version !== 1) {
    for (const a of Object.values(loaded)) a.dispose();
    throw new MXNetError(`unsupported optimizer states format ${header.format} version ${header.version}`);
  }
  return { header, arrays: loaded };
}

// get_updater(optimizer): Python's closure for kvstore, an Updater.
export function getUpdater(optimizer) { return new Updater(optimizer); }

const api = {
  Optimizer, SGD, ccSGD, Signum, FTML, LARS, LBSGD, LAMB, DCASGD, NAG, SGLD, Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, Adamax, Nadam, Test,
  Updater, create, register, getUpdater, get_updater: getUpdater,
};
export default Object.freeze(api);
