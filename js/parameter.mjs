// parameter.mjs -- gluon.Parameter, Constant and ParameterDict (../shared/spec/gluon-semantics.md §2).
import { MXNetError } from './core.mjs';
import { NDArray, cpu, keep, zerosArray, invokeByName, array } from './ndarray.mjs';
import * as init from './initializer.mjs';
import { variable } from './symbol.mjs';
import { attrString } from './format.mjs';
import { bindArgs, registerType, camelCase } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { onContext } from './context.mjs';
import { markVariables } from './autograd.mjs';
import { saveBytes, writeFileSync } from './io.mjs';

const ctxKey = (c) => `${c.deviceType}(${c.deviceId})`;
const ctxList = (ctx) => (ctx === null || ctx === undefined ? [cpu()] : Array.isArray(ctx) ? ctx.slice() : [ctx]);

export class DeferredInitializationError extends MXNetError {
  constructor(message) { super(message); this.name = 'DeferredInitializationError'; }
}

// camelCase or snake_case option lookup (js-api.md rule 3)
export function opt(o, camel, fallback) {
  if (!o) return fallback;
  if (o[camel] !== undefined) return o[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  if (o[snake] !== undefined) return o[snake];
  return fallback;
}

const shapeKnown = (s) => Array.isArray(s) && s.every((d) => d > 0);
const shapeText = (s) => (s ? `(${s.join(', ')}${s.length === 1 ? ',' : ''})` : 'None');

export class Parameter {
  // Parameter(name, gradReq = 'write', shape = null, dtype = 'float32', lrMult = 1, wdMult = 1,
  //   init = null, allowDeferredInit = false, differentiable = true, stype = 'default', gradStype = 'default')
  constructor(...args) {
    const a = bindArgs(SIGNATURES.Parameter, args);
    this.name = a.name;
    this._gradReq = 'write';
    let shape = a.shape;
    if (typeof shape === 'number') shape = [shape];
    this._shape = shape ? Array.from(shape) : null;
    this.dtype = a.dtype;
    this.lrMult = a.lrMult;
    this.wdMult = a.wdMult;
    this.init = a.init;
    this.allowDeferredInit = a.allowDeferredInit;
    this._differentiable = a.differentiable;
    this._stype = a.stype;
    this._gradStype = a.gradStype;
    this._data = null;        // the array on the first context
    this._grad = null;
    this._ctx = [cpu()];      // the contexts it lives on (initialize({ctx: [cpu(0), cpu(1)]}))
    this._copies = null;      // {data, grad} for every further context, or null
    this._deferredInit = null;
    this._var = null;
    this.gradReq = a.gradReq;
  }
  get lr_mult() { return this.lrMult; }
  set lr_mult(v) { this.lrMult = v; }
  get wd_mult() { return this.wdMult; }
  set wd_mult(v) { this.wdMult = v; }

  get gradReq() { return this._gradReq; }
  set gradReq(req) {
    if (!['write', 'add', 'null'].includes(req)) throw new MXNetError(`grad_req must be one of 'write', 'add', or 'null', but got '${req}'`);
    if (!this._differentiable) req = 'null';
    if (this._gradReq === req) return;
    this._gradReq = req;
    if (req === 'null' && this._grad) { this._grad.dispose(); this._grad = null; this._syncCopies(); } else if (req !== 'null' && this._data && !this._grad) this._initGrad();
    else this._markGrads();
  }
  get grad_req() { return this.gradReq; }
  set grad_req(req) { this.gradReq = req; }

  get shape() { return this._shape ? this._shape.slice() : null; }
  set shape(newShape) {
    if (typeof newShape === 'number') newShape = [newShape];
    if (!this._shape) { this._shape = newShape.slice(); return; }
    const ok = this._shape.length === newShape.length && this._shape.every((d, i) => d === 0 || d === -1 || d === newShape[i]);
    if (!ok) throw new MXNetError(`Expected shape ${shapeText(newShape)} is incompatible with given shape ${shapeText(this._shape)} for Parameter ${this.name}.`);
    this._shape = newShape.slice();
  }

  toString() { return `Parameter ${this.name} (shape=${shapeText(this._shape)}, dtype=${this.dtype})`; }

  // initialize(init = null, ctx = null, defaultInit = Uniform(), forceReinit = false)
  initialize(...args) {
    const a = bindArgs(SIGNATURES['Parameter.initialize'], args);
    const initArg = a.init;
    const defaultInit = a.defaultInit ?? new init.Uniform();
    const forceReinit = a.forceReinit;
    const ctx = ctxList(a.ctx);
    this._checkAlive();
    if (this._data && !forceReinit) {
      console.warn(`Parameter '${this.name}' is already initialized, ignoring. Set force_reinit=True to re-initialize.`);
      return;
    }
    if (this._data && forceReinit) { this._data.dispose(); this._data = null; }
    this._ctx = ctx;
    const chosen = initArg ?? this.init ?? defaultInit;
    if (!shapeKnown(this._shape)) {
      if (this.allowDeferredInit) { this._deferredInit = [chosen, ctx]; return; }
      throw new MXNetError(`Cannot initialize Parameter '${this.name}' because it has invalid shape: ${shapeText(this._shape)}.`);
    }
    this._deferredInit = [chosen, ctx];
    this._finishDeferredInit();
  }

  _finishDeferredInit() {
    if (!this._deferredInit) return;
    const [chosen] = this._deferredInit;
    if (!shapeKnown(this._shape)) {
      throw new MXNetError(`Cannot initialize Parameter '${this.name}' because it has invalid shape: ${shapeText(this._shape)}. Please specify in_units, in_channels, etc for \`Block\`s.`);
    }
    const arr = keep(zerosArray(this._shape, this.dtype)); // (MXNet hands the initializer nd.zeros)
    try {
      init.create(chosen).init(this.name, arr);
    } catch (e) {
      arr.dispose();
      throw e;
    }
    this._deferredInit = null;
    this._setData(arr);
  }

  _setData(arr) {
    if (this._data && this._data !== arr) this._data.dispose();
    this._data = onContext(arr, this._ctx[0]);
    if (this._grad) { this._grad.dispose(); this._grad = null; }
    if (this._gradReq !== 'null') this._initGrad();
    this._syncCopies();
  }
  _initGrad() {
    this._grad = onContext(keep(invokeByName('_zeros', [], { shape: this._shape, dtype: this.dtype })[0]), this._ctx[0]);
    this._syncCopies();
  }
  // One copy of the values (and a gradient) per further context, equal to the first.
  _syncCopies() {
    if (this._copies) for (const c of this._copies) { c.data.dispose(); if (c.grad) c.grad.dispose(); }
    this._copies = null;
    if (this._ctx.length >= 2 && this._data) {
      this._copies = this._ctx.slice(1).map((ctx) => ({
        ctx,
        data: onContext(keep(this._data.copy()), ctx),
        grad: this._grad ? onContext(keep(this._grad.copy()), ctx) : null,
      }));
    }
    this._markGrads();
  }
  // Each copy of the values is an autograd variable whose gradient is the matching grad buffer
  // (grad_req 'null': a variable that receives nothing, so no stale history stays attached).
  _markGrads() {
    if (!this._data) return;
    const pairs = [[this._data, this._grad], ...(this._copies ?? []).map((c) => [c.data, c.grad])];
    for (const [d, g] of pairs) markVariables([d], [g ?? d], this._gradReq === 'null' || !g ? 'null' : this._gradReq);
    for (const [d, g] of pairs) d._grad = g ?? null;
  }
  _pick(ctx, what) {
    this._checkInitialized();
    if (ctx === null || ctx === undefined) ctx = this._ctx.length === 1 ? this._ctx[0] : cpu();
    const key = ctxKey(ctx);
    if (ctxKey(this._ctx[0]) === key) return what === 'data' ? this._data : this._grad;
    const c = this._copies?.find((x) => ctxKey(x.ctx) === key);
    if (!c) {
      throw new MXNetError(`Parameter '${this.name}' was not initialized on context ${key}. It was only initialized on ${this._ctx.map(ctxKey).join(', ')}.`);
    }
    return what === 'data' ? c.data : c.grad;
  }

  _checkInitialized() {
    if (this._data) return;
    this._checkAlive();
    if (this._deferredInit) {
      throw new DeferredInitializationError(`Parameter '${this.name}' has not been initialized yet because initialization was deferred. Actual initialization happens during the first forward pass. Please pass one batch of data through the network before accessing Parameters. You can also avoid deferred initialization by specifying in_units, num_features, etc., for network layers.`);
    }
    throw new MXNetError(`Parameter '${this.name}' has not been initialized. Note that you should initialize parameters and create Trainer with Block.collect_params() instead of Block.params because the later does not include Parameters of nested child Blocks`);
  }
  data(ctx = null) { return this._copies || ctx ? this._pick(ctx, 'data') : (this._checkInitialized(), this._data); }
  listData() { this._checkInitialized(); return [this._data, ...(this._copies ?? []).map((c) => c.data)]; }
  grad(ctx = null) {
    if (this._gradReq === 'null' || (!this._grad && this._data)) {
      throw new MXNetError(`Cannot get gradient array for Parameter '${this.name}' because grad_req='null'`);
    }
    return this._pick(ctx, 'grad');
  }
  listGrad() {
    this.grad();
    return [this._grad, ...(this._copies ?? []).map((c) => c.grad)];
  }
  listCtx() {
    if (!this._data && this._deferredInit) return this._deferredInit[1].slice();
    return this._ctx.slice();
  }
  zeroGrad() {
    if (!this._grad) return;
    for (const g of [this._grad, ...(this._copies ?? []).map((c) => c.grad)]) {
      invokeByName('_zeros', [], { shape: this._shape, dtype: this.dtype }, g);
    }
  }
  // Moves the parameter to other contexts (the values are kept).
  resetCtx(ctx) {
    this._ctx = ctxList(ctx);
    if (this._data) { onContext(this._data, this._ctx[0]); if (this._grad) onContext(this._grad, this._ctx[0]); this._syncCopies(); } else if (this._deferredInit) this._deferredInit[1] = this._ctx.slice();
  }

  // Copies values in (Gluon's set_data).
  setData(value) {
    const arr = value instanceof NDArray ? value : null;
    if (!arr) throw new MXNetError('setData takes an NDArray');
    this._checkAlive();
    this.shape = arr.shape;
    if (!this._data) {
      if (this._deferredInit) { this._deferredInit = null; }
      this._setData(keep(arr.astype(this.dtype)));
      return;
    }
    if (arr.dtype === this.dtype) arr.copyto(this._data);
    else { const c = arr.astype(this.dtype); c.copyto(this._data); c.dispose(); }
    if (this._copies) for (const c of this._copies) this._data.copyto(c.data);
  }

  // The checks of _load_init, without changing anything: loaders run them on every parameter
  // first, so that a bad file leaves every parameter as it was.
  _checkLoad(arr, { castDtype = false } = {}) {
    this._checkAlive();
    if (this._shape) {
      const ok = this._shape.length === arr.shape.length && this._shape.every((d, i) => d <= 0 || d === arr.shape[i]);
      if (!ok) {
        throw new MXNetError(`Failed loading Parameter '${this.name}' from saved params: shape incompatible expected ${shapeText(this._shape)} vs saved ${shapeText(arr.shape)}`);
      }
    }
    if (!castDtype && arr.dtype !== this.dtype) {
      throw new MXNetError(`Failed loading Parameter '${this.name}' from saved params: dtype incompatible expected ${this.dtype} vs saved ${arr.dtype}. Set cast_dtype=True to cast the dtype of saved params.`);
    }
  }

  // Parameter._load_init: shape check (unknown dims filled), dtype cast or adopt.
  _loadInit(arr, { castDtype = false, dtypeSource = 'current' } = {}) {
    this._checkLoad(arr, { castDtype });
    this._shape = arr.shape;
    let value = arr;
    if (castDtype && arr.dtype !== this.dtype) {
      if (dtypeSource === 'current') value = arr.astype(this.dtype);
      else this.dtype = arr.dtype;
    }
    if (this._data) {
      if (this._data.dtype !== value.dtype || this._data.shape.join() !== value.shape.join()) {
        this._setData(keep(value === arr ? arr.copy() : value));
      } else {
        value.copyto(this._data);
        if (value !== arr) value.dispose();
        if (this._copies) for (const c of this._copies) this._data.copyto(c.data);
      }
    } else {
      this._deferredInit = null;
      this._setData(keep(value === arr ? arr.copy() : value));
    }
    this._var = null;
  }

  cast(dtype) {
    this.dtype = dtype;
    this._var = null;
    if (!this._data) return;
    const d = onContext(keep(this._data.astype(dtype)), this._ctx[0]);
    this._data.dispose();
    this._data = d;
    if (this._grad) { const g = onContext(keep(this._grad.astype(dtype)), this._ctx[0]); this._grad.dispose(); this._grad = g; }
    this._syncCopies();
  }

  // Frees the values, gradients and context copies (an mxnet-wasm addition: Python frees them
  // with the object); the parameter cannot be used afterwards. Block.dispose() calls it.
  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    if (this._copies) for (const c of this._copies) { c.data.dispose(); if (c.grad) c.grad.dispose(); }
    if (this._grad) this._grad.dispose();
    if (this._data) this._data.dispose();
    if (this._var) this._var.dispose();
    this._copies = this._grad = this._data = this._var = this._deferredInit = null;
  }
  get isDisposed() { return !!this._disposed; }
  _checkAlive() {
    if (this._disposed) throw new MXNetError(`Parameter '${this.name}' has been disposed (its block or ParameterDict was disposed)`);
  }

  // The cached variable Symbol (created once: its __shape__ records the shape at first use).
  var() {
    this._checkAlive();
    if (!this._var) {
      this._var = variable(this.name, {
        shape: this._shape, dtype: this.dtype, lr_mult: this.lrMult, wd_mult: this.wdMult,
        init: this.init ?? undefined, stype: this._stype,
      });
    }
    return this._var;
  }

}
registerType('params', (v) => v instanceof ParameterDict, 'a ParameterDict');

export class Constant extends Parameter {
  // Constant(name, value): value an NDArray, nested arrays, a typed array or a number
  constructor(...args) {
    const { name, value } = bindArgs(SIGNATURES.Constant, args);
    const arr = value instanceof NDArray ? value : keep(array(value));
    const alias = `Constant_${name}_${Constant._count++}`;
    super(name, { gradReq: 'null', shape: arr.shape, dtype: arr.dtype, init: alias });
    this.value = arr;
    this._ownsValue = arr !== value; // made from numbers here: freed with the constant
    this._initializer = new init.Constant(arr);
  }
  initialize(o = {}) {
    this._checkAlive();
    if (this._data && !opt(o, 'forceReinit', false)) return;
    this._setData(keep(this.value.copy()));
  }
  dispose() {
    if (!this._disposed && this._ownsValue) this.value.dispose();
    super.dispose();
  }
}
Constant._count = 0;

export class ParameterDict {
  // ParameterDict(prefix = '', shared = null). Indexes as Python's dict: pd['fullname'].
  constructor(...args) {
    const a = bindArgs(SIGNATURES.ParameterDict, args);
    this._prefix = a.prefix;
    this._params = new Map();
    this._shared = a.shared;
    return new Proxy(this, {
      get(t, key, receiver) {
        if (typeof key === 'string' && !(key in t) && t._params.has(key)) return t._params.get(key);
        return Reflect.get(t, key, receiver);
      },
    });
  }
  get prefix() { return this._prefix; }
  get size() { return this._params.size; }
  has(name) { return this._params.has(name); }
  keys() { return this._params.keys(); }
  values() { return this._params.values(); }
  entries() { return this._params.entries(); }
  items() { return [...this._params.entries()]; }
  [Symbol.iterator]() { return this._params.entries(); }
  getItem(name) {
    const p = this._params.get(name);
    if (!p) throw new MXNetError(`Parameter '${name}' is not in the ParameterDict (it holds ${[...this._params.keys()].slice(0, 10).join(', ')}${this._params.size > 10 ? ', ...' : ''})`);
    return p;
  }
  at(name) { return this.getItem(name); }
  toString() {
    const body = [...this._params.values()].map((p) => `  ${p}`).join('\n');
    return `${this._prefix ? `${this._prefix} ` : ''}(\n${body}\n)`;
  }

  _getImpl(name) {
    if (this._params.has(name)) return this._params.get(name);
    if (this._shared && this._shared._params.has(name)) {
      const p = this._shared._params.get(name);
      this._params.set(name, p);
      return p;
    }
    return null;
  }

  // Gluon's get: look up (or create) prefix + name; given attributes must agree (unknown shape
  // dims may be filled).
  get(name, o = {}) {
    const full = this._prefix + name;
    let p = this._getImpl(full);
    if (!p) {
      p = new Parameter(full, o);
      p._owner = this._params; // created here (not shared from another dict): Block.dispose frees it
      this._params.set(full, p);
      return p;
    }
    for (const [k, v] of Object.entries(o)) {
      if (v === undefined || v === null) continue;
      const camel = k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
      if (camel === 'shape') {
        const want = typeof v === 'number' ? [v] : v;
        const have = p.shape;
        if (have && want.length === have.length && want.every((d, i) => d === have[i] || d === 0 || have[i] === 0)) {
          p._shape = have.map((d, i) => (d > 0 ? d : want[i]));
          continue;
        }
        if (!have) { p._shape = want.slice(); continue; }
      }
      const existing = camel === 'gradReq' ? p.gradReq : p[camel];
      const same = JSON.stringify(existing) === JSON.stringify(v) || (camel === 'init' && existing === v);
      if (!same) {
        throw new MXNetError(`Cannot retrieve Parameter '${full}' because desired attribute does not match with stored for attribute '${k}': desired '${attrString(v)}' vs stored '${attrString(existing)}'.`);
      }
    }
    return p;
  }
  getConstant(name, value) {
    const full = this._prefix + name;
    let p = this._getImpl(full);
    if (!p) {
      if (value === undefined) throw new MXNetError(`No constant named '${name}'. Please specify value if you want to create a new constant.`);
      p = new Constant(full, value);
      p._owner = this._params;
      this._params.set(full, p);
    }
    return p;
  }
  update(other) {
    for (const [k, v] of other.entries()) {
      if (this._params.has(k) && this._params.get(k) !== v) {
        throw new MXNetError(`Cannot update self with other because they have different Parameters with the same name '${k}'`);
      }
      this._params.set(k, v);
    }
  }
  // initialize(init = Uniform(), ctx = null, verbose = false, forceReinit = false)
  initialize(...args) {
    const a = bindArgs(SIGNATURES['ParameterDict.initialize'], args);
    const defaultInit = a.init ?? new init.Uniform();
    for (const p of this._params.values()) {
      if (a.verbose) console.log(`Initializing ${p.name}`);
      p.initialize(null, a.ctx, defaultInit, a.forceReinit);
    }
  }
  zeroGrad() { for (const p of this._params.values()) p.zeroGrad(); }
  // Frees every parameter it holds (values, gradients, copies); see Parameter.dispose.
  dispose() { for (const p of this._params.values()) p.dispose(); }
  resetCtx(ctx) { for (const p of this._params.values()) p.resetCtx(ctx); }
  // setattr('grad_req', 'null'): sets an attribute on every parameter (Python's names accepted).
  setattr(name, value) {
    const key = camelCase(name);
    for (const p of this._params.values()) {
      if (!(key in p)) throw new MXNetError(`Parameter has no attribute '${name}'`);
      p[key] = value;
    }
  }
  listCtx() {
    const seen = new Map();
    for (const p of this._params.values()) for (const c of p.listCtx()) seen.set(ctxKey(c), c);
    return [...seen.values()];
  }
  // save(filename, stripPrefix = ''): MXNet's .params of these parameters, names with the prefix
  // stripped; returns the bytes (and writes the file in Node when a filename is given).
  save(...args) {
    const a = bindArgs(SIGNATURES['ParameterDict.save'], args);
    const dict = {};
    for (const p of this._params.values()) {
      if (!p.name.startsWith(a.stripPrefix)) {
        throw new MXNetError(`Prefix '${a.stripPrefix}' is to be striped before saving, but Parameter's name '${p.name}' does not start with '${a.stripPrefix}'. this may be due to your Block shares parameters from other Blocks or you forgot to use 'with name_scope()' when creating child blocks. For more info on naming, please see https://mxnet.apache.org/api/python/docs/tutorials/packages/gluon/blocks/naming.html`);
      }
      dict[p.name.slice(a.stripPrefix.length)] = p.data();
    }
    const bytes = saveBytes(dict);
    if (a.filename) writeFileSync(a.filename, bytes);
    return bytes;
  }
}
