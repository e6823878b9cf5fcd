// initializer.mjs -- mx.init: weight initializers with MXNet's names, defaults and dumps() text
// (the "__init__" attribute of exported parameter variables). Random values come from the
// library's seeded stream (mx.random.seed), so they are reproducible here but not equal to
// MXNet's.
import { MXNetError } from './core.mjs';
import { NDArray, invokeByName, tidy, array } from './ndarray.mjs';
import { bindArgs, registerType } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';

const bind = (name, args) => bindArgs(SIGNATURES[`init.${name}`], args);

// Python's json.dumps layout: ", " and ": " separators, floats as Python prints them.
export function pyJson(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(', ')}}`;
}

const registry = new Map();
function register(cls, ...names) { for (const n of names) registry.set(n, cls); return cls; }

// A float kwarg printed as Python prints a float (0.07, 1.0, 2.0) inside dumps().
class PyFloat {
  constructor(v) { this.v = v; }
  toJSON() { return this.v; }
}

function fill(arr, value) { invokeByName('_full', [], { shape: arr.shape, value, dtype: arr.dtype }, arr); }
function uniformFill(arr, low, high) { invokeByName('_random_uniform', [], { low, high, shape: arr.shape, dtype: arr.dtype }, arr); }
function normalFill(arr, loc, scale) { invokeByName('_random_normal', [], { loc, scale, shape: arr.shape, dtype: arr.dtype }, arr); }

export class Initializer {
  constructor(kwargs = {}) { this._kwargs = kwargs; }
  // The registered name, lower-cased class name as MXNet's dumps() writes it.
  get alias() { return this.constructor.alias ?? this.constructor.name.toLowerCase(); }
  dumps() {
    const kw = Object.entries(this._kwargs).map(([k, v]) => `${JSON.stringify(k)}: ${v instanceof PyFloat ? pyFloatText(v.v) : pyJson(v)}`);
    return `[${JSON.stringify(this.alias)}, {${kw.join(', ')}}]`;
  }
  // Fills arr (an NDArray) in place. `name` is the parameter's name (InitDesc).
  init(name, arr) {
    if (!(arr instanceof NDArray)) throw new MXNetError('an initializer fills an NDArray');
    this._initWeight(name, arr);
  }
  _initWeight() { throw new MXNetError(`${this.constructor.name} does not implement _initWeight`); }
  toString() { return this.dumps(); }
}

function pyFloatText(v) {
  if (Number.isInteger(v)) return `${v}.0`;
  return String(v).replace(/e-(\d)$/, 'e-0$1');
}

export class Zero extends Initializer {
  static alias = 'zero';
  constructor(...args) { bind('Zero', args); super(); }
  _initWeight(_, arr) { fill(arr, 0); }
}
export class One extends Initializer {
  static alias = 'one';
  constructor(...args) { bind('One', args); super(); }
  _initWeight(_, arr) { fill(arr, 1); }
}
export class Constant extends Initializer {
  static alias = 'constant';
  // Constant(value): a number, or an array / typed array / NDArray that broadcasts to the weight
  constructor(...args) {
    const { value } = bind('Constant', args);
    super({ value: ArrayBuffer.isView(value) ? Array.from(value) : value });
    this.value = value;
  }
  _initWeight(_, arr) {
    if (typeof this.value === 'number') { fill(arr, this.value); return; }
    tidy(() => {
      const src = this.value instanceof NDArray ? this.value : array(this.value, { dtype: 'float64' });
      // numpy's broadcasting: align on the right, then broadcast_to
      const lifted = src.ndim < arr.ndim ? src.reshape([...new Array(arr.ndim - src.ndim).fill(1), ...src.shape]) : src;
      const b = lifted.shape.join() === arr.shape.join() ? lifted : invokeByName('broadcast_to', [lifted], { shape: arr.shape })[0];
      b.copyto(arr);
    });
  }
}
export class Uniform extends Initializer {
  static alias = 'uniform';
  constructor(...args) { const { scale } = bind('Uniform', args); super({ scale }); this.scale = scale; }
  _initWeight(_, arr) { uniformFill(arr, -this.scale, this.scale); }
}
export class Normal extends Initializer {
  static alias = 'normal';
  constructor(...args) { const { sigma } = bind('Normal', args); super({ sigma }); this.sigma = sigma; }
  _initWeight(_, arr) { normalFill(arr, 0, this.sigma); }
}

function fans(shape) {
  if (shape.length < 2) throw new MXNetError(`Xavier initializer needs at least 2 dimensions, got shape (${shape.join(', ')})`);
  const hw = shape.slice(2).reduce((a, b) => a * b, 1);
  return [shape[1] * hw, shape[0] * hw];
}
export class Xavier extends Initializer {
  static alias = 'xavier';
  // Xavier(rndType = 'uniform', factorType = 'avg', magnitude = 3)
  constructor(...args) {
    const { rndType, factorType, magnitude } = bind('Xavier', args);
    super({ rnd_type: rndType, factor_type: factorType, magnitude });
    if (!['uniform', 'gaussian'].includes(rndType)) throw new MXNetError(`Xavier: unknown rnd_type ${rndType}`);
    if (!['avg', 'in', 'out'].includes(factorType)) throw new MXNetError(`Xavier: unknown factor_type ${factorType}`);
    Object.assign(this, { rndType, factorType, magnitude });
  }
  _initWeight(_, arr) {
    const [fanIn, fanOut] = fans(arr.shape);
    const factor = this.factorType === 'avg' ? (fanIn + fanOut) / 2 : this.factorType === 'in' ? fanIn : fanOut;
    const scale = Math.sqrt(this.magnitude / factor);
    if (this.rndType === 'uniform') uniformFill(arr, -scale, scale);
    else normalFill(arr, 0, scale);
  }
}
export class MSRAPrelu extends Xavier {
  static alias = 'msraprelu';
  // MSRAPrelu(factorType = 'avg', slope = 0.25)
  constructor(...args) {
    const { factorType, slope } = bind('MSRAPrelu', args);
    super({ rndType: 'gaussian', factorType, magnitude: 2 / (1 + slope * slope) });
    this._kwargs = { factor_type: factorType, slope };
    Object.assign(this, { slope });
  }
}
export class Orthogonal extends Initializer {
  static alias = 'orthogonal';
  // Orthogonal(scale = 1.414, randType = 'uniform')
  constructor(...args) {
    const { scale, randType } = bind('Orthogonal', args);
    super({ scale, rand_type: randType });
    Object.assign(this, { scale, randType });
  }
  // An orthonormal basis of random vectors (modified Gram-Schmidt on the longer side), scaled.
  _initWeight(_, arr) {
    const nout = arr.shape[0];
    const nin = arr.shape.slice(1).reduce((a, b) => a * b, 1);
    const rows = Math.min(nout, nin), cols = Math.max(nout, nin);
    const tmp = tidy(() => (this.randType === 'uniform'
      ? invokeByName('_random_uniform', [], { low: -1, high: 1, shape: [rows, cols], dtype: 'float64' })[0]
      : invokeByName('_random_normal', [], { loc: 0, scale: 1, shape: [rows, cols], dtype: 'float64' })[0]));
    const m = tmp.toTypedArray();
    tmp.dispose();
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < i; j++) {
        let d = 0;
        for (let k = 0; k < cols; k++) d += m[i * cols + k] * m[j * cols + k];
        for (let k = 0; k < cols; k++) m[i * cols + k] -= d * m[j * cols + k];
      }
      let n = 0;
      for (let k = 0; k < cols; k++) n += m[i * cols + k] ** 2;
      n = Math.sqrt(n) || 1;
      for (let k = 0; k < cols; k++) m[i * cols + k] /= n;
    }
    const out = new Float64Array(nout * nin);
    for (let r = 0; r < nout; r++) {
      for (let c = 0; c < nin; c++) out[r * nin + c] = this.scale * (nout <= nin ? m[r * cols + c] : m[c * cols + r]);
    }
    setValues(arr, out);
  }
}
export class Bilinear extends Initializer {
  static alias = 'bilinear';
  constructor(...args) { bind('Bilinear', args); super(); }
  // The upsampling kernel of MXNet's Bilinear initializer, for (C, 1, k, k) weights.
  _initWeight(_, arr) {
    const shape = arr.shape;
    const n = shape.reduce((a, b) => a * b, 1);
    const w = new Float64Array(n);
    const k = shape[3];
    const f = Math.ceil(k / 2);
    const c = (2 * f - 1 - (f % 2)) / (2 * f);
    for (let i = 0; i < n; i++) {
      const x = i % k, y = Math.floor(i / k) % shape[2];
      w[i] = (1 - Math.abs(x / f - c)) * (1 - Math.abs(y / f - c));
    }
    setValues(arr, w);
  }
}
export class LSTMBias extends Initializer {
  static alias = 'lstmbias';
  constructor(...args) { const { forgetBias } = bind('LSTMBias', args); super({ forget_bias: new PyFloat(forgetBias) }); this.forgetBias = forgetBias; }
  _initWeight(_, arr) {
    const n = arr.size, h = n / 4;
    const v = new Float64Array(n);
    for (let i = h; i < 2 * h; i++) v[i] = this.forgetBias;
    setValues(arr, v);
  }
}

// Mixed(patterns, initializers): the first regular expression that matches a parameter's name
// chooses its initializer.
export class Mixed extends Initializer {
  static alias = 'mixed';
  constructor(...args) {
    const { patterns, initializers } = bind('Mixed', args);
    if (patterns.length !== initializers.length) throw new MXNetError('Mixed: patterns and initializers must have the same length');
    super();
    this._map = patterns.map((p, i) => [new RegExp(p), create(initializers[i])]);
  }
  init(name, arr) {
    for (const [re, ini] of this._map) {
      const m = re.exec(name);
      if (m && m.index === 0) { ini.init(name, arr); return; }
    }
    throw new MXNetError(`Parameter name ${name} did not match any pattern. Consider adding a ".*" pattern at the and with default Initializer.`);
  }
}

// Load(param, defaultInit = null, verbose = false): values from a dict of NDArrays (names may
// carry MXNet's "arg:"/"aux:" prefixes); the others from defaultInit.
export class Load extends Initializer {
  static alias = 'load';
  constructor(...args) {
    const { param, defaultInit, verbose } = bind('Load', args);
    super();
    this.param = Object.fromEntries(Object.entries(param).map(([k, v]) => [k.startsWith('arg:') || k.startsWith('aux:') ? k.slice(4) : k, v]));
    this.defaultInit = defaultInit === null ? null : create(defaultInit);
    this.verbose = verbose;
  }
  init(name, arr) {
    const v = this.param[name];
    if (v) {
      if (v.shape.join() !== arr.shape.join()) {
        throw new MXNetError(`Parameter ${name} cannot be initialized from loading. Shape mismatch, target (${arr.shape.join(', ')}) vs loaded (${v.shape.join(', ')})`);
      }
      v.copyto(arr);
      if (this.verbose) console.log(`Initialized ${name} by loading`);
      return;
    }
    if (!this.defaultInit) throw new MXNetError(`Cannot Initialize ${name}. Not found in loaded param and no default Initializer is provided.`);
    this.defaultInit.init(name, arr);
    if (this.verbose) console.log(`Initialized ${name} by default`);
  }
}

registerType('init', (v) => v instanceof Initializer, 'an Initializer');

let setValuesImpl = null;
export function _setValuesImpl(fn) { setValuesImpl = fn; }
function setValues(arr, values) { setValuesImpl(arr, values); }

register(Zero, 'zero', 'zeros');
register(One, 'one', 'ones');
register(Constant, 'constant');
register(Uniform, 'uniform');
register(Normal, 'normal');
register(Xavier, 'xavier');
register(MSRAPrelu, 'msraprelu');
register(Orthogonal, 'orthogonal');
register(Bilinear, 'bilinear');
register(LSTMBias, 'lstmbias');

// create('zeros'), create(new Xavier()), create('["constant", {"value": 0.25}]')
export function create(init) {
  if (init instanceof Initializer) return init;
  if (typeof init === 'string') {
    const t = init.trim();
    if (t.startsWith('[')) {
      let parsed;
      try { parsed = JSON.parse(t); } catch { throw new MXNetError(`cannot parse initializer ${init}`); }
      const [name, kw] = parsed;
      const cls = registry.get(String(name).toLowerCase());
      if (!cls) throw new MXNetError(`unknown initializer ${name}`);
      return construct(cls, kw ?? {});
    }
    const cls = registry.get(t.toLowerCase());
    if (!cls) throw new MXNetError(`unknown initializer ${init}`);
    return new cls();
  }
  throw new MXNetError(`cannot make an initializer from ${String(init)}`);
}
// An initializer from its dumps() kwargs, through the class's own signature.
function construct(cls, kw) { return new cls({ ...kw }); }
