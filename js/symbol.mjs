// symbol.mjs -- Symbols: graphs built in C (csrc/graph), with MXNet's automatic naming, the
// sym.* namespace generated from the registry, composition, listings, inference and JSON.
import { M, MXNetError, args, check, heap32, registry, DTYPE_FLAGS, DTYPE_NAMES } from './core.mjs';
import { attrString, pyFloat } from './format.mjs';
import { opId, attrStrings, sigArgs } from './ndarray.mjs';
import { callSpec, parseCall, isOptions, dropGatedHoles } from './ops.mjs';
import { installFluent, SYMBOL_FLUENT } from './fluent.mjs';
import { READ_OPTION_NAMES, readText, readOptions, writeFileSync } from './io.mjs';

// ---- naming: mx.name.NameManager / Prefix ---------------------------------------------------------
export class NameManager {
  constructor() { this._counter = new Map(); }
  // name given -> name; else hint + per-hint counter (MXNet's NameManager.get)
  get(name, hint) {
    if (name) return name;
    const n = this._counter.get(hint) ?? 0;
    this._counter.set(hint, n + 1);
    return `${hint}${n}`;
  }
}
export class Prefix extends NameManager {
  constructor(prefix) { super(); this.prefix = prefix; }
  get(name, hint) { return this.prefix + super.get(name, hint); }
}
const managers = [new NameManager()];
export const currentNameManager = () => managers[managers.length - 1];
// Runs fn with `manager` as the current name manager (Python's `with manager:`).
export function withNameManager(manager, fn) {
  managers.push(manager);
  try { return fn(); } finally { managers.pop(); }
}

// Control flow (control_flow.mjs): while a loop body or branch is traced, every node composed gets
// "__subgraph_name__" (MXNet's AttrScope(__subgraph_name__=...)), which decides what the subgraph cuts.
const subgraphScopes = [];
export const currentSubgraphScope = () => subgraphScopes[subgraphScopes.length - 1];
export function withSubgraphScope(name, fn) {
  subgraphScopes.push(name);
  try { return fn(); } finally { subgraphScopes.pop(); }
}

// ---- Symbol ---------------------------------------------------------------------------------------
const finalizer = new FinalizationRegistry((h) => M._mxw_sym_free(h));

export class Symbol {
  constructor(handle) {
    if (!handle) throw new MXNetError('Symbol: NULL handle');
    this._h = handle;
    finalizer.register(this, handle, this);
  }
  get handle() {
    if (!this._h) throw new MXNetError('this Symbol has been disposed');
    return this._h;
  }
  dispose() {
    if (!this._h) return;
    finalizer.unregister(this);
    M._mxw_sym_free(this._h);
    this._h = 0;
  }
  _info() {
    const p = M._mxw_sym_info(this.handle);
    if (!p) check(-1);
    return JSON.parse(M.UTF8ToString(p));
  }
  get name() { return this._info().name; }
  listArguments() { return this._info().arguments; }
  listOutputs() { return this._info().outputs; }
  listAuxiliaryStates() { return this._info().aux; }
  listInputs() { return this._info().inputs; }
  get numOutputs() { return M._mxw_sym_num_outputs(this.handle); }
  // The head node's attributes (for one-output symbols): attr('__shape__'), listAttr().
  attr(key) { const a = this._info().attrs; return a && key in a ? a[key] : undefined; }
  listAttr() { return { ...(this._info().attrs ?? {}) }; }
  setAttr(attrs) {
    const keys = Object.keys(attrs);
    const vals = keys.map((k) => attrString(attrs[k]));
    const a = args.reset();
    check(M._mxw_sym_set_attrs(this.handle, keys.length, a.strs(keys), a.strs(vals)));
    return this;
  }
  getInternals() {
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_sym_internals(this.handle, out));
    return new Symbol(heap32()[out >>> 2]);
  }
  // sym.get(i) or sym.get('name_output'): one output (Python's sym[i] / sym['name']).
  get(index) {
    if (typeof index === 'string') {
      const outs = this.listOutputs();
      const i = outs.indexOf(index);
      if (i < 0) throw new MXNetError(`cannot find output ${index} among ${outs.length} outputs`);
      index = i;
    }
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_sym_output(this.handle, index, out));
    return new Symbol(heap32()[out >>> 2]);
  }
  at(i) { return this.get(i); }
  [globalThis.Symbol.iterator]() { let i = 0; const n = this.numOutputs; return { next: () => (i < n ? { value: this.get(i++), done: false } : { value: undefined, done: true }) }; }

  tojson() {
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_sym_tojson(this.handle, out));
    const p = heap32()[out >>> 2];
    const text = M.UTF8ToString(p);
    M._mxw_buffer_free(p);
    return text;
  }
  toJSON() { return this.tojson(); }
  // Writes the JSON text to a file (Node), as Symbol.save; returns the text.
  save(file) {
    const text = this.tojson();
    if (file) writeFileSync(file, text);
    return text;
  }
  // Python's s(*args, **kwargs) (Symbol.__call__): a composed copy; `this` is unchanged.
  // compose(t1, t2, {data: t, name: 'x'}): keyword Symbols replace the free variables of that
  // name; positional Symbols replace the free variables in listInputs() order (the order nnvm's
  // Symbol::Compose walks them; MXNet 1.9.1 itself accepts positional arguments only for an
  // atomic op symbol); `name` renames the head node (nothing else is renamed, as in nnvm).
  compose(...a) {
    let opts = {};
    if (a.length && isOptions(a[a.length - 1])) opts = a.pop();
    const subs = new Map();
    let name = null;
    for (const [k, v] of Object.entries(opts)) {
      if (k === 'name') { name = v; continue; }
      if (!(v instanceof Symbol)) throw new MXNetError(`compose: argument '${k}' must be a Symbol, got ${v === null ? 'null' : typeof v}`);
      subs.set(k, v);
    }
    const inputs = a.length || subs.size ? this.listInputs() : [];
    if (a.length > inputs.length) throw new MXNetError(`compose: ${a.length} positional Symbols for ${inputs.length} free variables (${inputs.join(', ')})`);
    a.forEach((v, i) => {
      if (!(v instanceof Symbol)) throw new MXNetError(`compose: positional argument ${i} must be a Symbol, got ${v === null ? 'null' : typeof v}`);
      if (subs.has(inputs[i])) throw new MXNetError(`compose: variable '${inputs[i]}' is given twice (positionally and by name)`);
      subs.set(inputs[i], v);
    });
    for (const k of subs.keys()) {
      if (!inputs.includes(k)) throw new MXNetError(`compose: keyword argument name '${k}' not found among the free variables (${inputs.join(', ')})`);
    }
    for (const [k, v] of subs) {
      if (v.numOutputs !== 1) throw new MXNetError(`compose: argument '${k}' is a grouped symbol; a single output is required`);
    }
    const names = [...subs.keys()];
    const vals = [...subs.values()];
    const a2 = args.reset();
    const out = a2.alloc(4);
    check(M._mxw_sym_substitute(this.handle, names.length, a2.strs(names), a2.i32s(vals.map((v) => v.handle)), out));
    const r = new Symbol(heap32()[out >>> 2]);
    if (name === null || name === undefined || name === '') return r;
    // nnvm renames outputs[0]'s node
    const j = JSON.parse(r.tojson());
    r.dispose();
    j.nodes[j.heads[0][0]].name = String(name);
    return fromJSON(JSON.stringify(j));
  }

  // Python's get_children(): the inputs of the head node(s) as a grouped Symbol; null for a
  // variable (no inputs).
  getChildren() {
    const j = JSON.parse(this.tojson());
    const seen = new Set();
    const heads = [];
    for (const [nid] of j.heads) {
      if (seen.has(nid)) continue;
      seen.add(nid);
      for (const e of j.nodes[nid].inputs) heads.push(e);
    }
    if (!heads.length) return null;
    return fromJSON(JSON.stringify({ ...j, heads }));
  }

  // Shape inference: inferShape({data: [1, 3, 224, 224]}) -> [argShapes, outShapes, auxShapes],
  // as MXNet's infer_shape: [null, null, null] unless every shape is known (with a warning naming
  // the unknown arguments). inferShapePartial returns what is known: an unknown shape is [] (the
  // empty tuple MXNet returns), unknown dimensions 0.
  inferShape(shapes = {}) {
    const r = this._infer(shapes, {}, false);
    if (!r.raw.complete) warnUnknown('shape', r.raw.args.filter((x) => !x.shape || x.shape.some((d) => d <= 0)).map((x) => `${x.name}: (${(x.shape ?? []).join(', ')})`));
    return r.shapes;
  }
  inferShapePartial(shapes = {}) { return this._infer(shapes, {}, true).shapes; }
  // Type inference as infer_type: [null, null, null] unless complete; inferTypePartial gives null
  // for each unknown type.
  inferType(dtypes = {}) {
    const r = this._infer({}, dtypes, true);
    if (!r.raw.types_complete) {
      warnUnknown('type', r.raw.args.filter((x) => x.dtype < 0).map((x) => `${x.name}: None`));
      return [null, null, null];
    }
    return r.types;
  }
  inferTypePartial(dtypes = {}) { return this._infer({}, dtypes, true).types; }
  _infer(shapes, dtypes, partial) {
    const dt = {};
    for (const [k, v] of Object.entries(dtypes)) {
      const flag = typeof v === 'number' ? v : DTYPE_FLAGS[v];
      if (flag === undefined) throw new MXNetError(`unknown dtype ${v} for '${k}'`);
      dt[k] = flag;
    }
    const p = M._mxw_sym_infer(this.handle, args.reset().str(JSON.stringify({ shapes, dtypes: dt })));
    if (!p) check(-1);
    const r = JSON.parse(M.UTF8ToString(p));
    const complete = r.complete;
    const sh = partial
      ? (list) => list.map((x) => (x.shape ? x.shape : []))
      : (list) => list.map((x) => (x.shape && x.shape.every((d) => d > 0) ? x.shape : null));
    const ty = (list) => list.map((x) => (x.dtype >= 0 ? DTYPE_NAMES[x.dtype] : null));
    const result = {
      shapes: complete || partial ? [sh(r.args), sh(r.outputs), sh(r.aux)] : [null, null, null],
      types: [ty(r.args), ty(r.outputs), ty(r.aux)],
      raw: r,
    };
    return result;
  }

  toString() { return `<Symbol ${this.name ?? 'Grouped'}>`; }
  [globalThis.Symbol.for('nodejs.util.inspect.custom')]() { return this.toString(); }

  // ---- operators (Python's dunders, rule 13) as symbol.py writes them: the elemwise _Plus,
  // _Minus, ... with a Symbol (no broadcasting), _PlusScalar, ... with a number.
  add(o) { return arith(this, o, '_Plus', '_PlusScalar'); }
  radd(o) { return this.add(o); }
  sub(o) { return arith(this, o, '_Minus', '_MinusScalar'); }
  rsub(o) { return o instanceof Symbol ? o.sub(this) : arith(this, o, null, '_RMinusScalar'); }
  mul(o) { return arith(this, o, '_Mul', '_MulScalar'); }
  rmul(o) { return this.mul(o); }
  div(o) { return arith(this, o, '_Div', '_DivScalar'); }
  rdiv(o) { return o instanceof Symbol ? o.truediv(this) : arith(this, o, null, '_RDivScalar'); }
  truediv(o) { return this.div(o); }
  rtruediv(o) { return this.rdiv(o); }
  mod(o) { return arith(this, o, '_Mod', '_ModScalar'); }
  rmod(o) { return o instanceof Symbol ? o.mod(this) : arith(this, o, null, '_RModScalar'); }
  pow(o) { return arith(this, o, '_Power', '_PowerScalar'); }
  rpow(o) { return o instanceof Symbol ? o.pow(this) : arith(this, o, null, '_rpower_scalar'); }
  // __neg__ is self * -1.0 (a _MulScalar node with scalar "-1.0"); __abs__ the fluent abs().
  neg() { return callOp('_MulScalar', [this], { scalar: pyFloat(-1) }); }
  eq(o) { return arith(this, o, '_equal', '_equal_scalar'); }
  ne(o) { return arith(this, o, '_not_equal', '_not_equal_scalar'); }
  gt(o) { return arith(this, o, '_greater', '_greater_scalar'); }
  ge(o) { return arith(this, o, '_greater_equal', '_greater_equal_scalar'); }
  lt(o) { return arith(this, o, '_lesser', '_lesser_scalar'); }
  le(o) { return arith(this, o, '_lesser_equal', '_lesser_equal_scalar'); }
  // symbol.py raises NotImplementedForSymbol for +=, -=, *=, /=; it defines no __imod__, so
  // Python's x %= y falls back to x = x % y (a new Symbol).
  iadd(o) { throw notForSymbol('__iadd__', '+=', o); }
  isub(o) { throw notForSymbol('__isub__', '-=', o); }
  imul(o) { throw notForSymbol('__imul__', '*=', o); }
  idiv(o) { throw notForSymbol('__idiv__', '/=', o); }
  itruediv(o) { throw notForSymbol('__itruediv__', '/=', o); }
  imod(o) { return this.mod(o); }
  // len(s): the number of outputs.
  get length() { return this.numOutputs; }
  // Named forms kept from earlier releases.
  equal(o) { return this.eq(o); }
  notEqual(o) { return this.ne(o); }
  greater(o) { return this.gt(o); }
  greaterEqual(o) { return this.ge(o); }
  lesser(o) { return this.lt(o); }
  lesserEqual(o) { return this.le(o); }
  maximum(o) { return arith(this, o, '_Maximum', '_MaximumScalar'); }
  minimum(o) { return arith(this, o, '_Minimum', '_MinimumScalar'); }

  // Methods shared with NDArray, so hybridForward code runs on both. Fluent op methods
  // (s.sum(axis), s.sliceAxis(...), s.astype(dtype), s.broadcastTo(shape), ...) are generated
  // from js/fluent.mjs by generateSym; reshape also takes the shape spread out, as NDArray's.
  reshape(...shape) {
    let opts = {};
    if (shape.length && isOptions(shape[shape.length - 1])) opts = shape.pop();
    if (shape.length === 1 && Array.isArray(shape[0])) shape = shape[0];
    if (!shape.length && opts.shape !== undefined) return callOp('reshape', [this], opts);
    return callOp('reshape', [this], { shape, ...opts });
  }
  get T() { return callOp('transpose', [this], {}); }
  // flatten(inplace=False, **kwargs), expand_dims(axis, inplace=False, **kwargs),
  // squeeze(axis=None, inplace=False, **kwargs): `inplace` is ignored, as symbol.py does.
  flatten(...a) {
    const rest = {};
    sigArgs('flatten', a, ['inplace'], rest);
    return callOp('flatten', [this], rest);
  }
  expandDims(...a) {
    const rest = {};
    const { axis } = sigArgs('expand_dims', a, ['axis', 'inplace'], rest);
    return callOp('expand_dims', [this], { ...rest, axis });
  }
  squeeze(...a) {
    const rest = {};
    const { axis = null } = sigArgs('squeeze', a, ['axis', 'inplace'], rest);
    return callOp('squeeze', [this], { ...rest, axis });
  }
  // split_v2(indices_or_sections, axis=0, squeeze_axis=False) (symbol.py's: an int is `sections`)
  splitV2(...a) {
    const { indices_or_sections: ios, axis = 0, squeeze_axis = false } =
      sigArgs('split_v2', a, ['indices_or_sections', 'axis', 'squeeze_axis']);
    if (Number.isInteger(ios)) return callOp('_split_v2', [this], { indices: [], axis, squeeze_axis, sections: ios });
    if (!Array.isArray(ios)) throw new MXNetError('split_v2: indices_or_sections must either int or tuple of ints');
    return callOp('_split_v2', [this], { indices: [0, ...ios], axis, squeeze_axis, sections: 0 });
  }
  // diag(k=0, **kwargs)
  diag(...a) {
    const rest = {};
    const { k = 0 } = sigArgs('diag', a, ['k'], rest);
    return callOp('diag', [this], { ...rest, k });
  }
}

function notForSymbol(fn, alias, o) {
  return new MXNetError(`Function ${fn} (namely operator "${alias}") with arguments (${typeof o === 'number' ? o : o && o.constructor ? o.constructor.name : typeof o}) is not implemented for Symbol and only available in NDArray.`);
}
function warnUnknown(kind, unknowns) {
  if (!unknowns.length) return;
  const list = unknowns.length > 10 ? [...unknowns.slice(0, 10), '...'] : unknowns;
  console.warn(`Cannot decide ${kind} for the following arguments${kind === 'shape' ? ' (0s in shape means unknown dimensions)' : ''}. Consider providing them as input:\n\t${list.join('\n\t')}`);
}

function arith(lhs, rhs, symOp, scalarOp) {
  if (rhs instanceof Symbol) {
    if (!symOp) throw new MXNetError('this method takes a scalar operand');
    return callOp(symOp, [lhs, rhs], {});
  }
  if (typeof rhs === 'number') return callOp(scalarOp, [lhs], { scalar: rhs });
  throw new MXNetError(`operand must be a Symbol or a number, got ${typeof rhs}`);
}

// ---- composition --------------------------------------------------------------------------------------
// Creates an op node. `calledName` is the function's name as the user called it: its lower case
// is the naming hint (sym.FullyConnected -> fullyconnected0), as MXNet's Python wrappers do.
export function callOp(calledName, positional, attrsIn) {
  let list = positional;
  if (list.length === 1 && Array.isArray(list[0])) list = list[0];
  return composeCall(opId(calledName), calledName, [...list, attrsIn ?? {}]);
}

// sym.<op>(...args): the arguments split by the nd/sym rules (js/ops.mjs parseCall); absent
// inputs (null, or fewer than the op takes) become "<name>_<input>" variables in C.
function composeCall(id, calledName, a) {
  const { inputs, attrs, name, attr } = parseCall(callSpec(id), a, Symbol, 'a Symbol');
  if (!registry.ops[id].variadic) dropGatedHoles(registry.ops[id], inputs, attrs);
  while (inputs.length && inputs[inputs.length - 1] === null) inputs.pop();
  const nodeName = currentNameManager().get(name, calledName.toLowerCase());
  const { keys, vals } = attrStrings(id, attrs);
  if (attr) {
    if (!isOptions(attr)) throw new MXNetError(`Operator ${registry.ops[id].name}: attr must be a plain object of strings`);
    for (const [k, v] of Object.entries(attr)) { keys.push(k); vals.push(String(v)); }
  }
  const sg = currentSubgraphScope();
  if (sg !== undefined && !keys.includes('__subgraph_name__')) { keys.push('__subgraph_name__'); vals.push(sg); }
  const ar = args.reset();
  const inP = ar.i32s(inputs.map((s) => (s ? s.handle : 0)));
  const out = ar.alloc(4);
  check(M._mxw_sym_compose(id, ar.str(String(nodeName)), keys.length, ar.strs(keys), ar.strs(vals), inputs.length, inP, out));
  return new Symbol(heap32()[out >>> 2]);
}

// sym.var(name, {shape, dtype, init, lr_mult, wd_mult, attr, stype}) -- Python's mx.sym.var.
export function variable(name, opts = {}) {
  if (typeof name !== 'string') throw new MXNetError('sym.var needs a name');
  const attrs = {};
  const o = { ...opts };
  const pick = (a, b) => (o[a] !== undefined ? o[a] : o[b]);
  if (o.attr) for (const [k, v] of Object.entries(o.attr)) attrs[k] = String(v);
  const shape = o.shape;
  if (shape !== undefined && shape !== null) attrs.__shape__ = attrString(Array.isArray(shape) ? shape : [shape]);
  const lr = pick('lr_mult', 'lrMult');
  if (lr !== undefined && lr !== null) attrs.__lr_mult__ = typeof lr === 'string' ? lr : pyFloat(lr);
  const wd = pick('wd_mult', 'wdMult');
  if (wd !== undefined && wd !== null) attrs.__wd_mult__ = typeof wd === 'string' ? wd : pyFloat(wd);
  if (o.dtype !== undefined && o.dtype !== null) {
    const flag = typeof o.dtype === 'number' ? o.dtype : DTYPE_FLAGS[o.dtype];
    if (flag === undefined) throw new MXNetError(`unknown dtype ${o.dtype}`);
    attrs.__dtype__ = String(flag);
  }
  if (o.init !== undefined && o.init !== null) {
    attrs.__init__ = typeof o.init === 'string' ? o.init : (typeof o.init.dumps === 'function' ? o.init.dumps() : String(o.init));
  }
  if (o.stype !== undefined && o.stype !== null) {
    const st = { default: 0, row_sparse: 1, csr: 2 }[o.stype];
    if (st === undefined) throw new MXNetError(`unknown stype ${o.stype}`);
    attrs.__storage_type__ = String(st);
  }
  for (const [k, v] of Object.entries(o)) {
    if (/^__.*__$/.test(k)) attrs[k] = String(v);
  }
  if (currentSubgraphScope() !== undefined && !('__subgraph_name__' in attrs)) attrs.__subgraph_name__ = currentSubgraphScope();
  const keys = Object.keys(attrs);
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_sym_var(a.str(name), keys.length, a.strs(keys), a.strs(keys.map((k) => attrs[k])), out));
  return new Symbol(heap32()[out >>> 2]);
}

export function Group(symbols) {
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_sym_group(symbols.length, a.i32s(symbols.map((s) => s.handle)), out));
  return new Symbol(heap32()[out >>> 2]);
}

export function fromJSON(text) {
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_sym_fromjson(a.str(text), out));
  return new Symbol(heap32()[out >>> 2]);
}

// await sym.load(source, {onProgress, signal, requestInit, fetch}): a symbol file (io.mjs readBytes).
export async function load(source, opts = {}) {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new MXNetError('sym.load: options must be an object');
  for (const k of Object.keys(opts)) {
    if (!READ_OPTION_NAMES.includes(k)) throw new MXNetError(`sym.load: unknown option '${k}' (accepted: onProgress, signal, requestInit, fetch)`);
  }
  return fromJSON(await readText(source, readOptions(opts, 'sym.load')));
}

// Every registered name and alias -> a composing function (the naming hint is the name called);
// installs Symbol's fluent methods (s.exp(), s.sliceAxis(...)) over them.
export function generateSym() {
  const ns = {};
  registry.ops.forEach((op, id) => {
    for (const nm of [op.name, ...op.aliases]) {
      if (nm in ns) continue;
      const fn = (...a) => composeCall(id, nm, a);
      Object.defineProperty(fn, 'name', { value: nm });
      ns[nm] = fn;
    }
  });
  installFluent(Symbol.prototype, SYMBOL_FLUENT, ns);
  return ns;
}
