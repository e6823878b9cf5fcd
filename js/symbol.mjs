// symbol.mjs -- Symbols: graphs built in C (csrc/graph), with MXNet's automatic naming, the
// sym.* namespace generated from the registry, composition, listings, inference and JSON.
import { M, MXNetError, args, check, heap32, registry, DTYPE_FLAGS, DTYPE_NAMES } from './core.mjs';
import { attrString, pyFloat } from './format.mjs';
import { opId, attrStrings } from './ndarray.mjs';
import { readText, writeFileSync } from './io.mjs';

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
    return new Symbol(heap32()[out >> 2]);
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
    return new Symbol(heap32()[out >> 2]);
  }
  at(i) { return this.get(i); }
  [globalThis.Symbol.iterator]() { let i = 0; const n = this.numOutputs; return { next: () => (i < n ? { value: this.get(i++), done: false } : { value: undefined, done: true }) }; }

  tojson() {
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_sym_tojson(this.handle, out));
    const p = heap32()[out >> 2];
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
  // A copy of the graph with variables replaced by symbols ({data: x}), as Symbol._compose on
  // a copy (what calling a loaded graph with new inputs does).
  compose(substitutes) {
    const names = Object.keys(substitutes);
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_sym_substitute(this.handle, names.length, a.strs(names), a.i32s(names.map((n) => substitutes[n].handle)), out));
    return new Symbol(heap32()[out >> 2]);
  }

  // Shape inference: inferShape({data: [1, 3, 224, 224]}) -> [argShapes, outShapes, auxShapes]
  // (null entries where unknown), as MXNet's infer_shape; inferShapePartial keeps unknown dims 0.
  inferShape(shapes = {}) { return this._infer(shapes, {}, false).shapes; }
  inferShapePartial(shapes = {}) { return this._infer(shapes, {}, true).shapes; }
  inferType(dtypes = {}) { return this._infer({}, dtypes, true).types; }
  _infer(shapes, dtypes, partial) {
    const dt = {};
    for (const [k, v] of Object.entries(dtypes)) dt[k] = typeof v === 'number' ? v : DTYPE_FLAGS[v];
    const p = M._mxw_sym_infer(this.handle, args.reset().str(JSON.stringify({ shapes, dtypes: dt })));
    if (!p) check(-1);
    const r = JSON.parse(M.UTF8ToString(p));
    const complete = r.complete;
    const sh = (list) => list.map((x) => (x.shape && (partial || (x.shape.every((d) => d > 0))) ? x.shape : null));
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

  // Arithmetic as Python's Symbol operators: elemwise ops with a Symbol, _*_scalar with a number.
  add(o) { return arith(this, o, '_Plus', '_PlusScalar'); }
  sub(o) { return arith(this, o, '_Minus', '_MinusScalar'); }
  rsub(o) { return arith(this, o, null, '_RMinusScalar'); }
  mul(o) { return arith(this, o, '_Mul', '_MulScalar'); }
  div(o) { return arith(this, o, '_Div', '_DivScalar'); }
  rdiv(o) { return arith(this, o, null, '_RDivScalar'); }
  pow(o) { return arith(this, o, '_Power', '_PowerScalar'); }
  mod(o) { return arith(this, o, '_Mod', '_ModScalar'); }
  neg() { return callOp('_MulScalar', [this], { scalar: pyFloat(-1) }); }
  equal(o) { return arith(this, o, '_equal', '_equal_scalar'); }
  notEqual(o) { return arith(this, o, '_not_equal', '_not_equal_scalar'); }
  greater(o) { return arith(this, o, '_greater', '_greater_scalar'); }
  greaterEqual(o) { return arith(this, o, '_greater_equal', '_greater_equal_scalar'); }
  lesser(o) { return arith(this, o, '_lesser', '_lesser_scalar'); }
  lesserEqual(o) { return arith(this, o, '_lesser_equal', '_lesser_equal_scalar'); }
  maximum(o) { return arith(this, o, '_Maximum', '_MaximumScalar'); }
  minimum(o) { return arith(this, o, '_Minimum', '_MinimumScalar'); }

  // Methods shared with NDArray, so hybridForward code runs on both.
  reshape(...shape) {
    let opts = {};
    if (shape.length && isAttrObject(shape[shape.length - 1])) opts = shape.pop();
    if (shape.length === 1 && Array.isArray(shape[0])) shape = shape[0];
    return callOp('reshape', [this], { shape, ...opts });
  }
  get T() { return callOp('transpose', [this], {}); }
  transpose(axes) { return callOp('transpose', [this], axes ? { axes } : {}); }
  flatten() { return callOp('flatten', [this], {}); }
  expandDims(axis) { return callOp('expand_dims', [this], { axis }); }
  squeeze(axis) { return callOp('squeeze', [this], axis === undefined ? {} : { axis }); }
  astype(dtype) { return callOp('cast', [this], { dtype }); }
  sum(opts = {}) { return callOp('sum', [this], opts); }
  mean(opts = {}) { return callOp('mean', [this], opts); }
  max(opts = {}) { return callOp('max', [this], opts); }
  min(opts = {}) { return callOp('min', [this], opts); }
  softmax(opts = {}) { return callOp('softmax', [this], opts); }
  abs() { return callOp('abs', [this], {}); }
}

function isAttrObject(v) {
  return v !== null && typeof v === 'object' && !(v instanceof Symbol) && !Array.isArray(v) && !ArrayBuffer.isView(v);
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
  const id = opId(calledName);
  const op = registry.ops[id];
  const attrs = {};
  const named = {};
  let name;
  let symAttr = null;
  for (const [k, v] of Object.entries(attrsIn ?? {})) {
    if (v === undefined) continue;
    if (k === 'name') name = v;
    else if (k === 'attr') symAttr = v;
    else if (v instanceof Symbol) named[k] = v;
    else attrs[k] = v;
  }
  let inputs = positional.slice();
  if (inputs.length === 1 && Array.isArray(inputs[0])) inputs = inputs[0];
  while (inputs.length && (inputs[inputs.length - 1] === null || inputs[inputs.length - 1] === undefined)) inputs.pop();
  for (let i = 0; i < inputs.length; i++) {
    if (!(inputs[i] instanceof Symbol)) throw new MXNetError(`Operator ${op.name}: input ${i} must be a Symbol`);
  }
  if (op.variadic && attrs.num_args === undefined && op.attrs.some((a) => a.name === 'num_args')) attrs.num_args = inputs.length;
  // keyword inputs (weight=w) go to their position by input name
  if (Object.keys(named).length) {
    const names = op.inputs;
    for (const [k, v] of Object.entries(named)) {
      const pos = names.indexOf(k);
      if (pos < 0) throw new MXNetError(`Operator ${op.name}: unknown input '${k}' (inputs: ${names.join(', ')})`);
      if (inputs[pos]) throw new MXNetError(`Operator ${op.name}: input '${k}' given twice`);
      inputs[pos] = v;
    }
  }
  const nodeName = currentNameManager().get(name, calledName.toLowerCase());
  const { keys, vals } = attrStrings(id, attrs);
  if (symAttr) for (const [k, v] of Object.entries(symAttr)) { keys.push(k); vals.push(String(v)); }
  const a = args.reset();
  const inP = a.i32s(inputs.map((s) => (s ? s.handle : 0)));
  const out = a.alloc(4);
  check(M._mxw_sym_compose(id, a.str(nodeName), keys.length, a.strs(keys), a.strs(vals), inputs.length, inP, out));
  return new Symbol(heap32()[out >> 2]);
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
  const keys = Object.keys(attrs);
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_sym_var(a.str(name), keys.length, a.strs(keys), a.strs(keys.map((k) => attrs[k])), out));
  return new Symbol(heap32()[out >> 2]);
}

export function Group(symbols) {
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_sym_group(symbols.length, a.i32s(symbols.map((s) => s.handle)), out));
  return new Symbol(heap32()[out >> 2]);
}

export function fromJSON(text) {
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_sym_fromjson(a.str(text), out));
  return new Symbol(heap32()[out >> 2]);
}

export async function load(source) { return fromJSON(await readText(source)); }

// Every registered name and alias -> a composing function.
export function generateSym() {
  const ns = {};
  for (const op of registry.ops) {
    for (const nm of [op.name, ...op.aliases]) {
      if (nm in ns) continue;
      const fn = (...rawArgs) => {
        let list = rawArgs.slice();
        let attrs = {};
        if (list.length && isAttrObject(list[list.length - 1])) attrs = list.pop();
        return callOp(nm, list, attrs);
      };
      Object.defineProperty(fn, 'name', { value: nm });
      ns[nm] = fn;
    }
  }
  return ns;
}
