// block.mjs -- gluon.Block, HybridBlock and SymbolBlock (../shared/spec/gluon-semantics.md):
// MXNet's naming (prefixes, name scopes, counters), registration of children and parameters by
// attribute assignment, callable blocks with hooks, deferred initialization, hybridize() into a
// CachedOp, export, and parameter files.
import { M, MXNetError, registry } from './core.mjs';
import { NDArray, keep, tidy, clearParamCache } from './ndarray.mjs';
import { Symbol, variable, Group, fromJSON, Prefix, currentNameManager, withNameManager } from './symbol.mjs';
import { Parameter, ParameterDict, DeferredInitializationError, opt } from './parameter.mjs';
import { bindArgs, isPlainObject } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { CachedOp } from './cached_op.mjs';
import { readAll, readBytes, readOptions, loadBytes, loadLimit, saveBytes, writeFileSync } from './io.mjs';
import { attrString } from './format.mjs';
import { isTraining } from './autograd.mjs';

// The F namespaces handed to hybridForward; set by api.mjs (nd and sym are built there).
export const F = { nd: null, sym: null };

// ---- name scopes ------------------------------------------------------------------------------------
class BlockScope {
  constructor(block) { this.block = block; this.counter = new Map(); }
}
const scopeStack = [];

// _BlockScope.create: a block's prefix and ParameterDict from the enclosing scope.
function createPrefix(prefix, params, hint) {
  const current = scopeStack[scopeStack.length - 1];
  if (!current) {
    if (prefix === null || prefix === undefined) prefix = `${currentNameManager().get(null, hint)}_`;
    const dict = params ? new ParameterDict(params.prefix, params) : new ParameterDict(prefix);
    return [prefix, dict];
  }
  if (prefix === null || prefix === undefined) {
    const n = current.counter.get(hint) ?? 0;
    prefix = `${hint}${n}_`;
    current.counter.set(hint, n + 1);
  }
  const parent = current.block.params;
  const dict = params ? new ParameterDict(params.prefix, params) : new ParameterDict(parent.prefix + prefix, parent._shared);
  return [current.block.prefix + prefix, dict];
}

// ---- flatten / regroup of nested inputs and outputs ----------------------------------------------------
function flatten(x, what) {
  if (x instanceof NDArray) return [[x], 0];
  if (x instanceof Symbol) {
    const n = x.numOutputs;
    return [[x], n > 1 ? n : 0];
  }
  if (x === null || x === undefined) return [[null], -1];
  if (!Array.isArray(x)) {
    throw new MXNetError(`When hybridized, the ${what} of HybridBlock must be (nested) list of Symbol or NDArray, but got ${String(x)} of type ${typeof x}`);
  }
  const flat = [];
  const fmts = [];
  for (const item of x) {
    const [f, fmt] = flatten(item, what);
    flat.push(...f);
    fmts.push(fmt);
  }
  return [flat, fmts];
}
function regroup(args, fmt) {
  if (typeof fmt === 'number') {
    if (fmt === 0) return [args[0], args.slice(1)];
    if (fmt === -1) {
      if (args[0] !== null && args[0] !== undefined) throw new MXNetError('Data provided to HybridBlock has an unexpected placeholder');
      return [null, args.slice(1)];
    }
    return [args.slice(0, fmt), args.slice(fmt)];
  }
  const ret = [];
  let rest = args;
  for (const f of fmt) {
    const [r, tail] = regroup(rest, f);
    ret.push(r);
    rest = tail;
  }
  return [ret, rest];
}
// Formats equal but for trailing null inputs (-1): net(a) and net(a, null) are the same call.
function trimFormat(f) {
  if (!Array.isArray(f)) return f;
  let n = f.length;
  while (n > 1 && f[n - 1] === -1) n--;
  return f.slice(0, n);
}
const fmtEqual = (a, b) => JSON.stringify(trimFormat(a)) === JSON.stringify(trimFormat(b));

// ---- rule 6: where hybridForward's parameters object goes --------------------------------------------
// hybridForward(F, a, b = null, params): the declared parameter list decides the slot. Inputs
// that Python defaults to None are declared with a default (`b = null`); the last parameter
// without a default is the parameters object. Calls with fewer inputs get null in the missing
// input slots, so net(a) gives (F, a, null, params), imperatively and hybridized.
const declared = new WeakMap();
function parseParams(fn) {
  const src = Function.prototype.toString.call(fn);
  let i = src.indexOf('(');
  if (i < 0) return null;
  const parts = [];
  let depth = 0, start = i + 1, quote = null;
  for (i += 1; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '/' && src[i + 1] === '*') i = src.indexOf('*/', i + 2) + 1 || src.length;
    else if (c === '/' && src[i + 1] === '/') i = src.indexOf('\n', i) < 0 ? src.length : src.indexOf('\n', i);
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) { parts.push(src.slice(start, i)); break; }
      depth--;
    } else if (c === ',' && depth === 0) { parts.push(src.slice(start, i)); start = i + 1; }
  }
  const params = parts.map((p) => p.replace(/\/\*[\s\S]*?\*\//g, '').trim()).filter((p) => p.length);
  const hasDefault = (p) => {
    let d = 0;
    for (let k = 0; k < p.length; k++) {
      const c = p[k];
      if (c === '(' || c === '[' || c === '{') d++;
      else if (c === ')' || c === ']' || c === '}') d--;
      else if (c === '=' && d === 0 && p[k + 1] !== '>') return true;
    }
    return false;
  };
  const after = params.slice(1); // F is first
  const rest = after.length > 0 && after[after.length - 1].startsWith('...');
  const lastDefault = after.length > 0 && hasDefault(after[after.length - 1]);
  // number of input slots: every declared parameter but F and the parameters object
  return { rest, slots: rest ? Infinity : (lastDefault ? after.length : Math.max(after.length - 1, 0)) };
}
function declaration(fn) {
  let d = declared.get(fn);
  if (d === undefined) { d = parseParams(fn) ?? { rest: true, slots: Infinity }; declared.set(fn, d); }
  return d;
}
// One input given: nothing to pad when hybridForward declares at most one input or takes ...rest.
function noPadding(fn) { const { slots } = declaration(fn); return slots <= 1 || slots === Infinity; }
function arrangeInputs(fn, args) {
  const { slots } = declaration(fn);
  if (args.length >= slots || slots === Infinity) return args;
  const out = args.slice();
  while (out.length < slots) out.push(null);
  return out;
}
// The context of the first array input (null: the default cpu(0)); parameters kept on several
// contexts give the copy on it, as Gluon's forward does with x.context.
function firstContext(args, depth = 0) {
  for (const a of args) {
    if (a instanceof NDArray) return a._ctx ?? null;
    if (Array.isArray(a) && depth < 16) { const c = firstContext(a, depth + 1); if (c !== undefined) return c; }
  }
  return undefined;
}
// Which kinds of arrays the (nested) inputs hold; numbers, strings and null pass through.
function inputKinds(args, acc = { nd: false, sym: false }, depth = 0) {
  for (const a of args) {
    if (a instanceof NDArray) acc.nd = true;
    else if (a instanceof Symbol) acc.sym = true;
    else if (Array.isArray(a) && depth < 16) inputKinds(a, acc, depth + 1);
  }
  return acc;
}

// ---- hooks ------------------------------------------------------------------------------------------------
let hookId = 0;
export class HookHandle {
  constructor(map) { this._map = map; this._id = hookId++; }
  detach() { this._map.delete(this._id); }
}

// ---- Block --------------------------------------------------------------------------------------------------
function isPublicKey(k) { return typeof k === 'string' && !k.startsWith('_'); }

// The naming hint of the next Block constructed (Activation's is its activation name): set by a
// subclass constructor right before its super() call.
let pendingAlias = null;
export function nextAlias(hint) { pendingAlias = hint; }

// Container indexing (rule 10): net[0], net[-1] on Sequential / HybridSequential.
const INDEX_KEY = /^-?\d+$/;
const setTrap = (proxyRef) => function set(t, key, value) {
  if (isPublicKey(key)) t._onSetAttr(key, value, proxyRef.p);
  t[key] = value;
  return true;
};

// An MXNetError raised inside a block's forward names the innermost block it came from:
// "Conv2D conv0: Operator Convolution: ...". The error object itself is re-thrown with the longer
// message, so its class (MXNetError, DeferredInitializationError, ...) is kept.
const layerNamed = new WeakSet();
function namedByLayer(block, e) {
  if (!(e instanceof MXNetError) || layerNamed.has(e)) return e;
  layerNamed.add(e);
  const old = e.message;
  e.message = `${block.constructor.name} ${block.name}: ${old}`;
  if (typeof e.stack === 'string') e.stack = e.stack.replace(old, e.message);
  return e;
}

let disposeDepth = 0; // Block.dispose() nesting (children dispose inside their parent's call)

export class Block {
  constructor(...args) {
    const a = bindArgs(SIGNATURES.Block, args);
    // Blocks are callable (net(x)) as in Python: the object is a Proxy over a function whose
    // prototype is the block's class; its set trap registers children and parameters.
    const ref = { p: null };
    const target = (...x) => ref.p.__call__(...x);
    delete target.name;
    delete target.length;
    Object.setPrototypeOf(target, new.target.prototype);
    const handler = { set: setTrap(ref) };
    if (new.target._indexable) {
      handler.get = (t, key, receiver) => {
        if (typeof key === 'string') {
          const c = key.charCodeAt(0); // digits or '-': the only keys that can be indices
          if (((c >= 48 && c <= 57) || c === 45) && INDEX_KEY.test(key)) return t.get(Number(key));
        }
        return Reflect.get(t, key, receiver);
      };
    }
    const proxy = new Proxy(target, handler);
    ref.p = proxy;
    const { prefix, params } = a;
    const alias = new.target.alias ? new.target.alias(pendingAlias) : new.target.name.toLowerCase();
    pendingAlias = null;
    const [pfx, dict] = createPrefix(prefix, params, alias);
    Object.assign(target, {
      _emptyPrefix: prefix === '', // Python's prefix == '' (the argument): such a block's name_scope is a no-op
      _prefix: pfx,
      _params: dict,
      _name: pfx.endsWith('_') ? pfx.slice(0, -1) : pfx,
      _scope: null,
      _children: new Map(),
      _regParams: new Map(),
      _forwardHooks: new Map(),
      _forwardPreHooks: new Map(),
    });
    target._scope = new BlockScope(proxy);
    return proxy;
  }

  // Python's __setattr__ checks and registration.
  _onSetAttr(key, value, self) {
    const existing = Object.prototype.hasOwnProperty.call(this, key) ? this[key] : undefined;
    if (existing instanceof Block || existing instanceof Parameter) {
      const same = (existing instanceof Block && value instanceof Block) || (existing instanceof Parameter && value instanceof Parameter);
      if (!same) {
        throw new TypeError(`Changing attribute type for ${key} from ${existing.constructor.name} to ${value?.constructor?.name ?? typeof value} is not allowed.`);
      }
    }
    if (value instanceof Block) self.registerChild(value, key);
    else if (value instanceof Parameter) {
      if (this._regParams.has(key) && this._regParams.get(key) !== value) {
        throw new MXNetError(`Overriding Parameter attribute ${key} is not allowed. If you want to share parameters between blocks, please set 'params' at Block construction instead.`);
      }
      this._regParams.set(key, value);
    }
  }

  get prefix() { return this._prefix; }
  get name() { return this._name; }
  get params() { return this._params; }

  // with self.name_scope(): -> this.nameScope(() => { ... })
  nameScope(fn) {
    if (this._emptyPrefix) return fn();
    scopeStack.push(this._scope);
    try {
      return withNameManager(new Prefix(this._prefix), fn);
    } finally {
      scopeStack.pop();
    }
  }
  name_scope(fn) { return this.nameScope(fn); }

  registerChild(block, name = null) {
    if (name === null || name === undefined) name = String(this._children.size);
    this._children.set(name, block);
  }
  registerForwardPreHook(hook) {
    const h = new HookHandle(this._forwardPreHooks);
    this._forwardPreHooks.set(h._id, hook);
    return h;
  }
  registerForwardHook(hook) {
    const h = new HookHandle(this._forwardHooks);
    this._forwardHooks.set(h._id, hook);
    return h;
  }
  apply(fn) {
    for (const c of this._children.values()) c.apply(fn);
    fn(this);
    return this;
  }

  // Python's _check_container_with_block: Blocks kept in a plain list, or an object used as a
  // dict, are not registered; say so once per attribute.
  _checkContainerWithBlock() {
    const children = new Set(this._children.values());
    const found = (v, depth = 0) => {
      if (depth > 8) return false;
      if (v instanceof Block) return !children.has(v);
      if (Array.isArray(v)) return v.some((x) => found(x, depth + 1));
      if (v instanceof Map) return [...v.values()].some((x) => found(x, depth + 1));
      if (isPlainObject(v)) return Object.values(v).some((x) => found(x, depth + 1));
      return false;
    };
    for (const k of Object.keys(this)) {
      if (k.startsWith('_')) continue;
      const v = this[k];
      if (!(Array.isArray(v) || v instanceof Map || isPlainObject(v))) continue;
      if (found(v)) {
        console.warn(`"${this.constructor.name}.${k}" is an unregistered container with Blocks. Note that Blocks inside the list, tuple or dict will not be registered automatically. Make sure to register them using register_child() or switching to nn.Sequential/nn.HybridSequential instead. `);
      }
    }
  }

  collectParams(select = null) {
    this._checkAlive();
    this._checkContainerWithBlock();
    const ret = new ParameterDict(this._params.prefix);
    if (!select) ret.update(this._params);
    else {
      const re = new RegExp(select);
      for (const [k, v] of this._params.entries()) {
        const m = re.exec(k);
        if (m && m.index === 0) ret._params.set(k, v); // Python's re.match anchors at the start
      }
    }
    for (const c of this._children.values()) ret.update(c.collectParams(select));
    return ret;
  }
  collect_params(select) { return this.collectParams(select); }

  // Structural names ('0.weight', 'features.3.running_mean'), as _collect_params_with_prefix.
  _collectParamsWithPrefix(prefix = '') {
    if (prefix) prefix += '.';
    const ret = new Map();
    for (const [k, p] of this._regParams) ret.set(prefix + k, p);
    for (const [name, child] of this._children) {
      for (const [k, p] of child._collectParamsWithPrefix(prefix + name)) ret.set(k, p);
    }
    return ret;
  }

  // initialize(init = Uniform(), ctx = null, verbose = false, forceReinit = false)
  initialize(...args) {
    const a = bindArgs(SIGNATURES['Block.initialize'], args);
    this._checkAlive();
    this.collectParams().initialize(a.init, a.ctx, a.verbose, a.forceReinit);
  }

  // hybridize(active = true, {staticAlloc, staticShape, inlineLimit, backend, clear, ...})
  hybridize(...args) {
    this._checkAlive();
    this._hybridizeBound(bindArgs(SIGNATURES['Block.hybridize'], args));
  }
  _hybridizeBound(a) { for (const c of this._children.values()) c._hybridizeBound(a); }

  cast(dtype) {
    for (const c of this._children.values()) c.cast(dtype);
    for (const p of this._params.values()) p.cast(dtype);
  }

  __call__(...args) {
    if (this._disposed) this._checkAlive();
    for (const hook of this._forwardPreHooks.values()) hook(this, args);
    let out;
    try {
      out = this.forward(...args);
    } catch (e) {
      throw namedByLayer(this, e);
    }
    for (const hook of this._forwardHooks.values()) hook(this, args, out);
    return out;
  }
  forward() { throw new MXNetError(`${this.constructor.name} must implement forward()`); }

  // ---- lifetime (an mxnet-wasm addition: Python frees a block's memory with the object) -------------
  // Frees what the block holds in wasm memory: its children, the values, gradients and context
  // copies of the parameters its own ParameterDicts created (not those shared from another
  // block's), and (HybridBlock) its cached graph and executor. Using it afterwards raises an
  // MXNetError. Dropped blocks are freed by the garbage collector; dispose() frees them now.
  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    disposeDepth++;
    try {
      for (const c of this._children.values()) c.dispose();
      const mine = this._params._params;
      for (const p of this._params.values()) if (p._owner === mine) p.dispose();
      for (const p of this._regParams.values()) if (p._owner === undefined) p.dispose(); // made outside any dict
    } finally {
      disposeDepth--;
    }
    // Once per dispose(): the kernels' grow-only buffers (scratch, GEMM panels) and the cached
    // attribute parses go too. Sized for and scattered through this model's memory, they would cut
    // up the heap the next model needs in one piece (measured: eleven model-zoo networks in turn
    // grew the heap 44% past the largest alone; they are rebuilt on the next call).
    if (disposeDepth === 0) {
      M._mxw_scratch_release();
      clearParamCache();
    }
  }
  get isDisposed() { return !!this._disposed; }
  _checkAlive() {
    if (this._disposed) throw new MXNetError(`${this.constructor.name} '${this.name}' has been disposed`);
  }

  // ---- parameter files --------------------------------------------------------------------------------
  // Structural names as MXNet 1.9's save_parameters; returns the bytes (writes `file` in Node).
  saveParameters(...args) {
    const a = bindArgs(SIGNATURES['Block.saveParameters'], args);
    const bytes = this.saveParametersBytes({ deduplicate: a.deduplicate });
    if (a.filename) writeFileSync(a.filename, bytes);
    return bytes;
  }
  saveParametersBytes(o = {}) {
    const dedup = opt(o, 'deduplicate', false);
    const seen = new Set();
    const names = [];
    const arrays = [];
    for (const [k, p] of this._collectParamsWithPrefix()) {
      if (dedup && seen.has(p)) continue;
      seen.add(p);
      names.push(k);
      arrays.push(p.data());
    }
    return saveBytes(Object.fromEntries(names.map((n, i) => [n, arrays[i]])));
  }
  // await loadParameters(filename, ctx = null, allowMissing = false, ignoreExtra = false, castDtype = false, dtypeSource = 'current',
  //   {maxBytes, onProgress, signal, requestInit, fetch})
  async loadParameters(...args) {
    const a = bindArgs(SIGNATURES['Block.loadParameters'], args);
    this._checkAlive();
    const source = a.filename;
    const maxBytes = loadLimit({ maxBytes: a.maxBytes }, 'loadParameters');
    const bytes = await readBytes(source, readOptions(a, 'loadParameters'));
    this._checkAlive();
    const loaded = loadBytes(bytes, { maxBytes });
    return this._loadParameterDict(loaded, a, typeof source === 'string' ? source : 'the given data');
  }
  _loadParameterDict(loaded, o, label) {
    const allowMissing = opt(o, 'allowMissing', false);
    const ignoreExtra = opt(o, 'ignoreExtra', false);
    const castDtype = opt(o, 'castDtype', false);
    const dtypeSource = opt(o, 'dtypeSource', 'current');
    const keys = Object.keys(loaded);
    try {
      if (Array.isArray(loaded)) throw new MXNetError(`${label} holds an unnamed list of arrays, not parameters`);
      if (!keys.some((k) => k.includes('.'))) {
        // legacy file (save_params / export): names with the block prefix stripped
        this.collectParams()._loadDict(loaded, { allowMissing, ignoreExtra, restorePrefix: this.prefix, castDtype, dtypeSource, label });
        return this;
      }
      const params = this._collectParamsWithPrefix();
      if (!allowMissing) {
        const byParam = new Map();
        for (const [k, p] of params) { if (!byParam.has(p)) byParam.set(p, []); byParam.get(p).push(k); }
        for (const names of byParam.values()) {
          if (!names.some((n) => n in loaded)) {
            throw new MXNetError(`Parameter '${names[0]}' is missing in file '${label}', which contains parameters: ${keys.slice(0, 10).join(', ')}${keys.length > 10 ? ', ...' : ''}. Set allow_missing=True to ignore missing parameters.`);
          }
        }
      }
      for (const k of keys) {
        if (!params.has(k)) {
          if (ignoreExtra) continue;
          throw new MXNetError(`Parameter '${k}' loaded from file '${label}' is not present in ParameterDict, which contains parameters ${[...params.keys()].slice(0, 10).join(', ')}. Set ignore_extra=True to ignore.`);
        }
        params.get(k)._checkLoad(loaded[k], { castDtype });
      }
      // every check passed: only now are the parameters changed
      for (const k of keys) if (params.has(k)) params.get(k)._loadInit(loaded[k], { castDtype, dtypeSource });
    } finally {
      disposeLoaded(loaded);
    }
    return this;
  }
  // Deprecated 1.x names, kept for ported code.
  saveParams(file) {
    console.warn('save_params is deprecated. Please use save_parameters. Note that if you want load from SymbolBlock later, please use export instead.');
    const params = this.collectParams();
    const arrays = {};
    for (const [name, p] of params.entries()) {
      if (!name.startsWith(this.prefix)) throw new MXNetError(`Prefix '${this.prefix}' is to be striped before saving, but Parameter's name '${name}' does not start with '${this.prefix}'.`);
      arrays[name.slice(this.prefix.length)] = p.data();
    }
    const bytes = saveBytes(arrays);
    if (file) writeFileSync(file, bytes);
    return bytes;
  }
  async loadParams(source, o = {}) {
    console.warn('load_params is deprecated. Please use load_parameters.');
    return this.loadParameters(source, o);
  }

  toString() {
    const lines = [...this._children].map(([k, c]) => `  (${k}): ${String(c).split('\n').join('\n  ')}`);
    return lines.length ? `${this.constructor.name}(\n${lines.join('\n')}\n)` : `${this.constructor.name}(\n\n)`;
  }
  [globalThis.Symbol.for('nodejs.util.inspect.custom')]() { return this.toString(); }

  // summary(...inputs): MXNet's table (forward hooks on every block but Sequential containers).
  summary(...inputs) {
    const rows = [];
    const handles = [];
    const seen = new Set();
    let total = 0, trainable = 0, shared = 0;
    const shapeStr = (o) => {
      if (o instanceof NDArray) return `(${o.shape.join(', ')}${o.shape.length === 1 ? ',' : ''})`;
      if (Array.isArray(o)) return o.map(shapeStr).join(', ');
      return String(o);
    };
    const visit = (block) => {
      if (block._isHybridized) {
        throw new MXNetError('"summary" does not support hybridized blocks: call net.hybridize(false) first');
      }
      if (!(block instanceof Sequential) && !(block instanceof HybridSequential)) {
        handles.push(block.registerForwardHook((b, _in, out) => {
          let n = 0, nt = 0;
          for (const p of b._params.values()) {
            const sz = p.data().size;
            n += sz;
            if (p.gradReq !== 'null') nt += sz;
            if (seen.has(p)) shared += sz;
            seen.add(p);
          }
          total += n;
          trainable += nt;
          rows.push([`${b.constructor.name}-${rows.length + 1}`, shapeStr(out), n]);
        }));
      }
      for (const c of block._children.values()) visit(c);
    };
    visit(this);
    try {
      tidy(() => { this.__call__(...inputs); });
    } finally {
      for (const h of handles) h.detach();
    }
    const fmt = (a, b, c) => `${String(a).padStart(20)}  ${String(b).padStart(42)} ${String(c).padStart(15)}`;
    const out = [];
    out.push('-'.repeat(80));
    out.push(fmt('Layer (type)', 'Output Shape', 'Param #'));
    out.push('='.repeat(80));
    out.push(fmt('Input', shapeStr(inputs.length === 1 ? inputs[0] : inputs), 0));
    for (const r of rows) out.push(fmt(...r));
    out.push('='.repeat(80));
    out.push('Parameters in forward computation graph, duplicate included');
    out.push(`   Total params: ${total}`);
    out.push(`   Trainable params: ${trainable}`);
    out.push(`   Non-trainable params: ${total - trainable}`);
    out.push(`Shared params in forward computation graph: ${shared}`);
    out.push(`Unique parameters in model: ${total - shared}`);
    out.push('-'.repeat(80));
    const text = out.join('\n');
    console.log(text);
    return text;
  }
}

// ParameterDict.load / load_dict (params-format.md §8.5).
// await pd.load(filename, ctx = null, allowMissing = false, ignoreExtra = false, restorePrefix = '', castDtype = false, dtypeSource = 'current')
ParameterDict.prototype.load = async function load(...args) {
  const o = bindArgs(SIGNATURES['ParameterDict.load'], args);
  const source = o.filename;
  const maxBytes = loadLimit({ maxBytes: o.maxBytes }, 'ParameterDict.load');
  const loaded = loadBytes(await readBytes(source, readOptions(o, 'ParameterDict.load')), { maxBytes });
  const label = typeof source === 'string' ? source : 'the given data';
  try {
    this._loadDict(loaded, { ...o, label });
  } finally {
    disposeLoaded(loaded);
  }
};
// The arrays nd.load gave (a list or an object of them): the parameters took copies.
function disposeLoaded(loaded) {
  for (const v of Object.values(loaded)) if (v instanceof NDArray) v.dispose();
}
ParameterDict.prototype._loadDict = function loadDict(loaded, o = {}) {
  const allowMissing = opt(o, 'allowMissing', false);
  const ignoreExtra = opt(o, 'ignoreExtra', false);
  const restorePrefix = opt(o, 'restorePrefix', '');
  const castDtype = opt(o, 'castDtype', false);
  const dtypeSource = opt(o, 'dtypeSource', 'current');
  const label = o.label ?? 'the given data';
  if (Array.isArray(loaded)) throw new MXNetError(`${label} holds an unnamed list of arrays, not named parameters`);
  if (restorePrefix) {
    for (const name of this._params.keys()) {
      if (!name.startsWith(restorePrefix)) throw new MXNetError(`restore_prefix is '${restorePrefix}' but Parameters name '${name}' does not start with '${restorePrefix}'`);
    }
  }
  // no prototype: a parameter named '__proto__' or 'constructor' is an ordinary key
  const arg = Object.create(null);
  for (const [k, v] of Object.entries(loaded)) {
    const key = k.startsWith('arg:') || k.startsWith('aux:') ? k.slice(4) : k;
    arg[restorePrefix + key] = v;
  }
  if (!allowMissing) {
    for (const name of this._params.keys()) {
      if (!(name in arg)) {
        throw new MXNetError(`Parameter '${name.slice(restorePrefix.length)}' is missing in file '${label}', which contains parameters: ${Object.keys(loaded).slice(0, 10).join(', ')}. Please make sure source and target networks have the same prefix. For SymbolBlock.imports, the parameter names in the file must match the graph's variable names.`);
      }
    }
  }
  for (const [name, v] of Object.entries(arg)) {
    const p = this._params.get(name);
    if (!p) {
      if (ignoreExtra) continue;
      throw new MXNetError(`Parameter '${name.slice(restorePrefix.length)}' loaded from file '${label}' is not present in ParameterDict, choices are: ${[...this._params.keys()].slice(0, 10).join(', ')}. Set ignore_extra to True to ignore. Please make sure source and target networks have the same prefix.`);
    }
    if (v !== null) p._checkLoad(v, { castDtype });
  }
  // every check passed: only now are the parameters changed
  for (const [name, v] of Object.entries(arg)) {
    const p = this._params.get(name);
    if (p && v !== null) p._loadInit(v, { castDtype, dtypeSource });
  }
};

// ---- HybridBlock ------------------------------------------------------------------------------------------------
export class HybridBlock extends Block {
  constructor(...args) {
    super(...args);
    Object.assign(this, {
      _cachedGraph: null, _cachedOp: null, _cachedOpArgs: null, _outFormat: null, _inFormat: null,
      _active: false, _flags: {}, _opHooks: null,
    });
  }
  _onSetAttr(key, value, self) {
    super._onSetAttr(key, value, self);
    if (value instanceof HybridBlock) self._clearCachedOp();
  }
  registerChild(block, name = null) {
    if (!(block instanceof HybridBlock)) {
      throw new MXNetError(`Children of HybridBlock must also be HybridBlock, but ${block} has type ${block?.constructor?.name}. If you are using Sequential, please try HybridSequential instead.`);
    }
    super.registerChild(block, name);
    this._clearCachedOp();
  }
  get _isHybridized() { return this._active; }

  _hybridizeBound(a) {
    this._active = !!a.active;
    this._flags = {
      staticAlloc: a.staticAlloc, staticShape: a.staticShape, inlineLimit: a.inlineLimit,
      backend: a.backend, backendOpts: a.backendOpts ?? {},
    };
    if (a.clear) this._clearCachedOp();
    if (this._active && (this._forwardHooks.size || this._forwardPreHooks.size)) {
      console.warn(`"${this.name}" is being hybridized while still having forward hook/pre-hook. If "${this.name}" is a child of HybridBlock, the hooks will not take effect.`);
    }
    super._hybridizeBound(a);
  }
  _clearCachedOp() {
    if (this._cachedOp) this._cachedOp.dispose();
    this._cachedGraph = null;
    this._cachedOp = null;
    this._cachedOpArgs = null;
    this._cargs = null; // sized for the old graph's inputs: a re-trace may take another count
  }
  dispose() {
    if (this._disposed) return;
    if (this._cachedOp) this._cachedOp.dispose();
    // the graph this block traced, or (SymbolBlock) made or loaded; not a user's Symbols
    for (const s of [...(this._tracedSymbols ?? []), ...(this._ownedSymbols ?? [])]) s.dispose();
    this._tracedSymbols = this._ownedSymbols = null;
    this._cachedGraph = this._cachedOp = this._cachedOpArgs = this._cargs = null;
    super.dispose();
  }
  cast(dtype) {
    this._clearCachedOp();
    super.cast(dtype);
  }

  _paramVars() {
    const out = {};
    for (const [k, p] of this._regParams) out[k] = p.var();
    return out;
  }

  // Traces hybridForward with Symbols once: [input variables, Group of outputs].
  _getGraph(...args) {
    if (!this._cachedGraph) {
      const [flat, inFmt] = flatten(args, 'input');
      this._inFormat = inFmt;
      const real = flat.filter((x) => x !== null);
      const vars = flat.map((x, i) => {
        if (x === null) return null;
        return variable(real.length === 1 ? 'data' : `data${flat.slice(0, i).filter((y) => y !== null).length}`);
      });
      const [grouped] = regroup(vars, inFmt);
      const params = this._paramVars();
      const out = this.nameScope(() => this.hybridForward(F.sym, ...grouped, params));
      const [outFlat, outFmt] = flatten(out, 'output');
      this._outFormat = outFmt;
      this._cachedGraph = [vars.filter((v) => v !== null), outFlat.length === 1 && outFlat[0].numOutputs === 1 ? Group([outFlat[0]]) : Group(outFlat)];
      this._tracedSymbols = [...this._cachedGraph[0], this._cachedGraph[1]]; // an earlier trace's: left to the collector
      this._numTraces = (this._numTraces ?? 0) + 1; // hybridForward traced with Symbols
    }
    return this._cachedGraph;
  }

  // infer_shape / infer_type: set every parameter's shape (dtype) from the inputs.
  inferShape(...args) { this._inferAttrs('shape', ...args); }
  inferType(...args) { this._inferAttrs('type', ...args); }
  _inferAttrs(kind, ...args) {
    const [inputs, out] = this._getGraph(...args);
    const [flat] = flatten(args, 'input');
    const real = flat.filter((x) => x !== null);
    const req = {};
    inputs.forEach((v, i) => { req[v.name] = kind === 'shape' ? real[i].shape : real[i].dtype; });
    const r = kind === 'shape' ? out._infer(req, {}, true).raw : out._infer({}, req, true).raw;
    const all = new Map([...r.args, ...r.aux].map((x) => [x.name, x]));
    for (const p of this.collectParams().values()) {
      const x = all.get(p.name);
      if (!x) continue;
      if (kind === 'shape') {
        if (x.shape) p.shape = x.shape;
      } else if (x.dtype >= 0) {
        const name = Object.keys(registry.dtypes).find((k) => registry.dtypes[k] === x.dtype);
        if (name !== p.dtype) p.cast(name);
      }
    }
  }
  _deferredInferShape(...args) {
    try {
      this.inferShape(...args);
    } catch (e) {
      throw new MXNetError(`Deferred initialization failed because shape cannot be inferred. ${e.message}`);
    }
  }

  _buildCache(...args) {
    const [inputs, out] = this._getGraph(...args);
    const dataNames = new Map(inputs.map((v, i) => [v.name, i]));
    const params = this.collectParams();
    const byName = new Map([...params.values()].map((p) => [p.name, p]));
    const inputNames = out.listInputs();
    const labels = new Set(out._info().labels ?? []);
    this._cachedOpArgs = inputNames.map((name) => {
      if (dataNames.has(name)) return [true, dataNames.get(name)];
      if (byName.has(name)) return [false, byName.get(name)];
      if (labels.has(name)) return [null, name];
      throw new MXNetError(`Unknown input to HybridBlock: ${name}`);
    });
    const used = new Set(inputNames);
    for (const n of dataNames.keys()) {
      if (!used.has(n)) console.warn(`The ${n} input to HybridBlock is not used by any computation. Is this intended?`);
    }
    this._cachedOp = new CachedOp(out, this._flags);
  }

  _callCachedOp(...args) {
    if (!this._cachedOp) this._buildCache(...args);
    let real;
    if (args.length === 1 && args[0] instanceof NDArray && this._inFormat.length === 1 && this._inFormat[0] === 0) {
      real = args; // the common case: one array in, no flattening
    } else {
      const [flat, fmt] = flatten(args, 'input');
      if (!fmtEqual(fmt, this._inFormat) && !(this instanceof SymbolBlock)) {
        // called with another structure of inputs (an optional input now given): trace again
        this._clearCachedOp();
        return this._callCachedOp(...args);
      }
      if (!fmtEqual(fmt, this._inFormat)) {
        throw new MXNetError(`Invalid input format: the block was traced with inputs of structure ${JSON.stringify(this._inFormat)}, now called with ${JSON.stringify(fmt)} (0 = an array, -1 = null, a list = a nested list)`);
      }
      real = flat.filter((x) => x !== null);
    }
    const opArgs = this._cachedOpArgs;
    const cargs = this._cargs ?? (this._cargs = new Array(opArgs.length));
    try {
      for (let i = 0; i < opArgs.length; i++) {
        const [isArg, x] = opArgs[i];
        cargs[i] = isArg === true ? real[x] : isArg === null ? null : x._copies ? x.data(firstContext(real)) : (x._data ?? x.data());
      }
    } catch (e) {
      if (!(e instanceof DeferredInitializationError)) throw e;
      this._deferredInferShape(...args);
      for (const [isArg, p] of opArgs) if (isArg === false) p._finishDeferredInit();
      for (let i = 0; i < opArgs.length; i++) {
        const [isArg, x] = opArgs[i];
        cargs[i] = isArg === true ? real[x] : isArg === null ? null : x.data(firstContext(real));
      }
    }
    if (this._opHooks && !this._cachedOp._monitor) this._cachedOp.setMonitor(true);
    const outs = this._cachedOp.forward(cargs, isTraining());
    cargs.fill(null);
    if (this._opHooks) this._cachedOp.runMonitor(this._opHooks.callback, this._opHooks.monitorAll);
    if (this._outFormat === 0 || (Array.isArray(this._outFormat) && this._outFormat.length === 1 && this._outFormat[0] === 0)) {
      return outs[0];
    }
    const [res] = regroup(outs, this._outFormat);
    return res;
  }

  forward(x, ...rest) {
    // the common hybridized call: one array in, one declared input
    if (rest.length === 0 && this._active && x instanceof NDArray && noPadding(this.hybridForward)) return this._callCachedOp(x);
    const args = arrangeInputs(this.hybridForward, [x, ...rest]);
    const kinds = inputKinds(args);
    if (kinds.sym && kinds.nd) throw new MXNetError('In HybridBlock, there must be one NDArray or one Symbol in the input. Please check the type of the args.');
    if (kinds.sym) {
      const params = this._paramVars();
      return this.nameScope(() => this.hybridForward(F.sym, ...args, params));
    }
    if (this._active) return this._callCachedOp(...args);
    return this._forwardImperative(args);
  }
  _forwardImperative(args) {
    let params;
    const ctx = firstContext(args);
    const gather = () => Object.fromEntries([...this._regParams].map(([k, p]) => [k, p.data(ctx)]));
    try {
      params = gather();
    } catch (e) {
      if (!(e instanceof DeferredInitializationError)) throw e;
      this._deferredInferShape(...args);
      for (const p of this._params.values()) p._finishDeferredInit();
      params = gather();
    }
    return this.hybridForward(F.nd, ...args, params);
  }
  hybridForward() { throw new MXNetError(`${this.constructor.name} must implement hybridForward(F, x, ...args, params)`); }

  // export(path, epoch): MXNet's two files; returns their names. exportBytes: the in-memory form.
  // export(path, epoch = 0, removeAmpCast = true): MXNet's two files; returns their names.
  export(...args) {
    const { path, epoch } = bindArgs(SIGNATURES['HybridBlock.export'], args);
    const { symbol, params } = this.exportBytes();
    const symFile = `${path}-symbol.json`;
    const paramFile = `${path}-${String(epoch).padStart(4, '0')}.params`;
    writeFileSync(symFile, symbol);
    writeFileSync(paramFile, params);
    return [symFile, paramFile];
  }
  exportBytes() {
    if (!this._cachedGraph) {
      throw new MXNetError('Please first call block.hybridize() and then run forward with this block at least once before calling export.');
    }
    const s = this._cachedGraph[1];
    const argNames = new Set(s.listArguments());
    const auxNames = new Set(s.listAuxiliaryStates());
    const dict = {};
    for (const [isArg, p] of this._cachedOpArgs ?? []) {
      if (isArg !== false) continue;
      if (argNames.has(p.name)) dict[`arg:${p.name}`] = p.data();
      else if (auxNames.has(p.name)) dict[`aux:${p.name}`] = p.data();
      else console.warn(`Parameter "${p.name}" is not found in the graph. `);
    }
    return { symbol: s.tojson(), params: saveBytes(dict) };
  }

  // registerOpHook(callback(name, opName, ndarray), monitorAll): on a hybridized block, called
  // for every node output of the cached graph ("<node>_output"), and with monitorAll for every
  // node input too ("<node>_<input name>"), in execution order. The array is valid during the call.
  registerOpHook(callback, monitorAll = false) {
    if (typeof callback !== 'function') throw new MXNetError('registerOpHook takes a function');
    if (this._flags.staticAlloc || this._flags.staticShape) console.warn('registerOpHook is experimental with static_alloc/static_shape');
    this._opHooks = { callback, monitorAll };
    for (const c of this._children.values()) if (c instanceof HybridBlock) c._opHooks = this._opHooks;
  }

  // optimizeFor(x, ...args, {backend, backendOpts, staticAlloc, staticShape, clear}): hybridizes
  // and binds the graph for these inputs without running it.
  optimizeFor(x, ...rest) {
    let o = {};
    if (rest.length && rest[rest.length - 1] && typeof rest[rest.length - 1] === 'object' && !(rest[rest.length - 1] instanceof NDArray) && !Array.isArray(rest[rest.length - 1])) o = rest.pop();
    const backend = opt(o, 'backend', null);
    if (backend && backend !== 'default') throw new MXNetError(`backend ${backend} is not available: this runtime has no subgraph backends`);
    this.hybridize(true, { ...o, clear: opt(o, 'clear', false) });
    this._buildCache(x, ...rest);
    this._getGraph(x, ...rest);
    const [inputs, out] = this._cachedGraph;
    const shapes = {};
    [x, ...rest].forEach((a, i) => { if (a instanceof NDArray) shapes[inputs[i].name] = a.shape; });
    out._infer(shapes, {}, true);
    return this;
  }
}

// ---- SymbolBlock ----------------------------------------------------------------------------------------
export class SymbolBlock extends HybridBlock {
  static alias() { return 'symbolblock'; }
  // SymbolBlock(outputs, inputs, params = null)
  constructor(...args) {
    let { outputs, inputs, params } = bindArgs(SIGNATURES.SymbolBlock, args);
    super({ prefix: null, params: null });
    this._prefix = '';
    this._name = '';
    this._emptyPrefix = true;
    this._params = new ParameterDict('', params);
    if (Array.isArray(outputs) && outputs.length === 1) outputs = outputs[0];
    const outSym = Array.isArray(outputs) ? Group(outputs) : outputs;
    this._ownedSymbols = Array.isArray(outputs) ? [outSym] : [];
    const inList = inputs instanceof Symbol ? [inputs] : inputs;
    for (const i of inList) {
      const info = i._info();
      if (info.op !== null || info.outputs.length !== 1) throw new MXNetError(`Input symbols must be variable, but ${info.name} is an output of operators`);
    }
    const inputNames = new Set(inList.map((i) => i.name));
    // MXNet refuses row_sparse variables here (SymbolBlock.__init__'s assertion)
    for (const node of JSON.parse(outSym.tojson()).nodes) {
      const st = node.attrs?.__storage_type__ ?? node.attr?.__storage_type__;
      if (node.op === 'null' && st === '1') {
        throw new MXNetError(`SymbolBlock doesn't support Parameter '${node.name}' because its storage type is 'row_sparse'.`);
      }
    }
    const info = outSym._info();
    const labels = new Set(info.labels ?? []);
    // parameter dtypes by type inference from the inputs (float32 when it cannot tell)
    const dt = {};
    for (const i of inList) if (!(i.name in dt)) dt[i.name] = i.attr('__dtype__') !== undefined ? Number(i.attr('__dtype__')) : 0;
    let types;
    try { types = outSym._infer({}, dt, true).raw; } catch { types = null; }
    // one map, built once (a lookup per parameter in the lists was quadratic)
    const dtypeName = new Map();
    for (const [k, v] of Object.entries(registry.dtypes)) if (!dtypeName.has(v)) dtypeName.set(v, k);
    const inferred = new Map();
    for (const x of types ? [...types.args, ...types.aux] : []) if (!inferred.has(x.name)) inferred.set(x.name, x.dtype);
    const typeOf = (name) => {
      const d = inferred.get(name);
      return d !== undefined && d >= 0 ? dtypeName.get(d) ?? 'float32' : 'float32';
    };
    for (const name of info.arguments) {
      if (inputNames.has(name) || labels.has(name)) continue;
      this._params.get(name, { allowDeferredInit: true, dtype: typeOf(name) });
    }
    for (const name of info.aux) {
      if (inputNames.has(name)) continue;
      this._params.get(name, { gradReq: 'null', allowDeferredInit: true, dtype: typeOf(name) });
    }
    const [, outFmt] = flatten(outSym.numOutputs > 1 ? [...outSym] : outSym, 'output');
    this._outFormat = outSym.numOutputs > 1 ? new Array(outSym.numOutputs).fill(0) : 0;
    void outFmt;
    this._inFormat = new Array(inList.length).fill(0);
    this._cachedGraph = [inList, outSym];
    this._labels = labels;
    // registered params keyed by names minus their common prefix (as Gluon)
    const names = [...this._params.keys()];
    let common = names.length ? names[0] : '';
    for (const n of names) while (!n.startsWith(common)) common = common.slice(0, -1);
    for (const [n, p] of this._params.entries()) this._regParams.set(n.slice(common.length), p);
  }

  // await SymbolBlock.imports(symbolFile, inputNames, paramFile, {allowMissing, ignoreExtra})
  // await SymbolBlock.imports(symbolFile, inputNames, paramFile = null, ctx = null, allowMissing = false, ignoreExtra = false,
  //   {maxBytes, onProgress, signal, requestInit, fetch}): the two files are read at once (io.mjs readAll).
  static async imports(...args) {
    const a = bindArgs(SIGNATURES['SymbolBlock.imports'], args);
    let { inputNames } = a;
    const { symbolFile, paramFile } = a;
    const o = a;
    const hasParams = paramFile !== null && paramFile !== undefined;
    const maxBytes = loadLimit({ maxBytes: opt(o, 'maxBytes', 0) }, 'SymbolBlock.imports');
    const [symBytes, paramBytes] = await readAll([symbolFile, hasParams ? paramFile : null], readOptions(o, 'SymbolBlock.imports'));
    const s = fromJSON(new TextDecoder().decode(symBytes));
    if (typeof inputNames === 'string') inputNames = [inputNames];
    let inputs = [], ret = null;
    try {
      inputs = inputNames.map((n) => (hasParams ? variable(n) : variable(n, { dtype: 'float32' })));
      ret = new SymbolBlock(s, inputs);
      ret._ownedSymbols.push(s, ...inputs);
      if (hasParams) {
        const loaded = loadBytes(paramBytes, { maxBytes });
        try {
          ret.collectParams()._loadDict(loaded, {
            allowMissing: opt(o, 'allowMissing', false), ignoreExtra: opt(o, 'ignoreExtra', false), restorePrefix: '',
            castDtype: true, dtypeSource: 'saved', label: typeof paramFile === 'string' ? paramFile : 'the given data',
          });
        } finally {
          disposeLoaded(loaded);
        }
      }
    } catch (e) {
      // a bad file leaves nothing behind: the block's parameters, graph and variables are freed
      if (ret) ret.dispose();
      else for (const x of [s, ...inputs]) x.dispose();
      throw e;
    }
    return ret;
  }

  _getGraph() { return this._cachedGraph; }
  _clearCachedOp() {
    const g = this._cachedGraph;
    super._clearCachedOp();
    this._cachedGraph = g;
  }
  forward(x, ...args) {
    if (x instanceof NDArray) return this._callCachedOp(x, ...args);
    const [flat, fmt] = flatten([x, ...args], 'input');
    if (!fmtEqual(fmt, this._inFormat)) throw new MXNetError('Invalid input format');
    const subs = {};
    this._cachedGraph[0].forEach((v, i) => { subs[v.name] = flat[i]; });
    const out = this._cachedGraph[1].compose(subs);
    const [res] = regroup([...out], this._outFormat);
    return res;
  }
  cast(dtype) {
    this._clearCachedOp();
    super.cast(dtype);
  }
}

// ---- containers ------------------------------------------------------------------------------------------
// Python's slice(start, stop, step).indices(n) as a list of indices; `key` is [start, stop, step]
// with null for an omitted part.
export function sliceIndices(n, key) {
  const [start = null, stop = null, step = null] = key;
  const st = step ?? 1;
  if (!Number.isInteger(st) || st === 0) throw new MXNetError(`slice step must be a non-zero integer, got ${step}`);
  const norm = (v, dflt, lo, hi) => {
    if (v === null) return dflt;
    if (!Number.isInteger(v)) throw new MXNetError(`slice bounds must be integers or null, got ${v}`);
    if (v < 0) v += n;
    return Math.min(Math.max(v, lo), hi);
  };
  const b = norm(start, st > 0 ? 0 : n - 1, st > 0 ? 0 : -1, st > 0 ? n : n - 1);
  const e = norm(stop, st > 0 ? n : -1, st > 0 ? 0 : -1, st > 0 ? n : n - 1);
  const out = [];
  for (let i = b; st > 0 ? i < e : i > e; i += st) out.push(i);
  return out;
}

// Sequential's __getitem__: an index gives the child, a slice [start, stop, step] a new
// container of the same kind holding those children.
function containerGet(self, key) {
  const children = [...self._children.values()];
  if (Array.isArray(key)) {
    const net = new self.constructor({ prefix: self._prefix });
    const picked = sliceIndices(children.length, key).map((i) => children[i]);
    net.nameScope(() => net.add(...picked));
    return net;
  }
  if (!Number.isInteger(key)) throw new MXNetError(`${self.constructor.name} indices must be integers or [start, stop, step] slices, got ${String(key)}`);
  const i = key < 0 ? key + children.length : key;
  if (i < 0 || i >= children.length) throw new MXNetError(`index ${key} is out of range for ${self.constructor.name} with ${children.length} children`);
  return children[i];
}

export class Sequential extends Block {
  static _indexable = true;
  add(...blocks) { for (const b of blocks) this.registerChild(b); return this; }
  forward(x, ...args) {
    for (const b of this._children.values()) { x = b(x, ...args); args = []; }
    return x;
  }
  get length() { return this._children.size; }
  get(key) { return containerGet(this, key); }
  at(i) { return containerGet(this, i); }
  _hybridizeBound(a) {
    if ([...this._children.values()].every((c) => c instanceof HybridBlock)) {
      console.warn(`All children of this Sequential layer '${this.prefix}' are HybridBlocks. Consider using HybridSequential for the best performance.`);
    }
    super._hybridizeBound(a);
  }
}
export class HybridSequential extends HybridBlock {
  static _indexable = true;
  add(...blocks) { for (const b of blocks) this.registerChild(b); return this; }
  hybridForward(F_, x, ...rest) {
    rest.pop(); // params (a container has none)
    for (const b of this._children.values()) { x = b(x, ...rest); rest = []; }
    return x;
  }
  get length() { return this._children.size; }
  get(key) { return containerGet(this, key); }
  at(i) { return containerGet(this, i); }
}

void attrString;
void keep;
