// autograd.mjs -- mx.autograd (python/mxnet/autograd.py): record() / pause() / trainMode() /
// predictMode() run a function with recording and training switched, as Python's `with` blocks;
// x.attachGrad(), y.backward(), autograd.backward / grad / markVariables, x.detach() and
// autograd.Function. The tape and the gradients live in C (csrc/graph/autograd.c): every eager
// call made while recording on an input with history is recorded there, and backward runs the
// gradient graph (each op's FGradient) through the graph executor.
import { M, MXNetError, args, check, heap32 } from './core.mjs';
import { NDArray, keep, invokeByName } from './ndarray.mjs';
import { isPlainObject } from './signature.mjs';

let recording = false;
let training = false;

function setState(rec, train) {
  recording = rec;
  training = train;
  M._mxw_set_training(train ? 1 : 0);
  M._mxw_autograd_set_recording(rec ? 1 : 0);
}

function withState(rec, train, fn) {
  if (typeof fn !== 'function') {
    throw new MXNetError('autograd scopes take the body as a function: autograd.record(() => { ... }) '
      + "(Python's `with autograd.record():` block)");
  }
  const prev = [recording, training];
  setState(rec, train);
  try {
    const r = fn();
    if (r && typeof r.then === 'function') {
      throw new MXNetError('autograd scopes take a synchronous function (every computation is synchronous); await outside the scope');
    }
    return r;
  } finally {
    setState(prev[0], prev[1]);
  }
}

// `record(fn, trainMode = true)` or `record(fn, {trainMode})` (train_mode accepted).
function modeArg(opt, dflt) {
  if (opt === undefined || opt === null) return dflt;
  if (isPlainObject(opt)) return opt.trainMode ?? opt.train_mode ?? dflt;
  return !!opt;
}
export function record(fn, trainMode = true) { return withState(true, modeArg(trainMode, true), fn); }
export function pause(fn, trainMode = false) { return withState(false, modeArg(trainMode, false), fn); }
export function trainMode(fn) { return withState(recording, true, fn); }
export function predictMode(fn) { return withState(recording, false, fn); }
export const isRecording = () => recording;
export const isTraining = () => training;
export const is_recording = isRecording;
export const is_training = isTraining;
export const train_mode = trainMode;
export const predict_mode = predictMode;
// Python's set_training / set_recording: set the state, return the previous value.
export function setTraining(flag) {
  const prev = training;
  setState(recording, !!flag);
  return prev;
}
export function setRecording(flag) {
  const prev = recording;
  setState(!!flag, training);
  return prev;
}
export const set_training = setTraining;
export const set_recording = setRecording;

// ---- variables and backward ---------------------------------------------------------------------
const REQS = { null: 0, write: 1, add: 2 };
function reqFlag(req) {
  const f = REQS[req ?? 'write'];
  if (f === undefined) throw new MXNetError(`grad_req must be one of 'write', 'add', or 'null', but got '${req}'`);
  return f;
}
const asList = (x) => (x instanceof NDArray ? [x] : Array.from(x ?? []));
function checkArrays(list, what) {
  list.forEach((a, i) => {
    if (!(a instanceof NDArray)) throw new MXNetError(`${what}[${i}] must be an NDArray`);
  });
}

// mark_variables(variables, gradients, grad_reqs='write')
export function markVariables(variables, gradients, gradReqs = 'write') {
  const vars = asList(variables), grads = asList(gradients);
  checkArrays(vars, 'variables');
  checkArrays(grads, 'gradients');
  if (vars.length !== grads.length) throw new MXNetError('variables and gradients must have the same length');
  const reqs = typeof gradReqs === 'string' || gradReqs === null ? vars.map(() => gradReqs) : Array.from(gradReqs);
  if (reqs.length !== vars.length) throw new MXNetError('grad_reqs must be a string or have one entry per variable');
  const a = args.reset();
  check(M._mxw_autograd_mark_variables(vars.length, a.i32s(vars.map((v) => v.handle)), a.i32s(grads.map((g) => g.handle)),
    a.i32s(reqs.map(reqFlag))));
  vars.forEach((v, i) => { v._grad = grads[i]; });
}
export const mark_variables = markVariables;

// backward(heads, head_grads=None, retain_graph=False, train_mode=True)
function runBackward(heads, headGrads, retainGraph, trainMode, vars, createGraph = false) {
  const hs = asList(heads);
  checkArrays(hs, 'heads');
  const hg = headGrads === null || headGrads === undefined ? null : asList(headGrads);
  if (hg && hg.length !== hs.length) throw new MXNetError('heads and head_grads must have the same length');
  if (hg) hg.forEach((g, i) => { if (g !== null && !(g instanceof NDArray)) throw new MXNetError(`head_grads[${i}] must be an NDArray or None`); });
  const a = args.reset();
  const hP = a.i32s(hs.map((h) => h.handle));
  const gP = hg ? a.i32s(hg.map((g) => (g ? g.handle : 0))) : 0;
  if (!vars) {
    check(M._mxw_autograd_backward(hs.length, hP, gP, retainGraph ? 1 : 0, trainMode ? 1 : 0));
    return null;
  }
  const vP = a.i32s(vars.map((v) => v.handle));
  const out = a.alloc(4 * vars.length);
  check(M._mxw_autograd_grad_ex(hs.length, hP, gP, vars.length, vP, retainGraph ? 1 : 0, createGraph ? 1 : 0,
    trainMode ? 1 : 0, out));
  const h32 = heap32();
  const handles = vars.map((_, i) => h32[(out >>> 2) + i]);
  return handles.map((h, i) => { const g = new NDArray(h); if (vars[i]._ctx) g._ctx = vars[i]._ctx; return g; });
}

function options(rest, names, defaults) {
  const o = { ...defaults };
  let pos = rest;
  if (rest.length && isPlainObject(rest[rest.length - 1]) && !(rest[rest.length - 1] instanceof NDArray)) {
    const opts = rest[rest.length - 1];
    pos = rest.slice(0, -1);
    for (const [k, v] of Object.entries(opts)) {
      const camel = k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
      if (!(camel in defaults)) throw new MXNetError(`unexpected keyword argument '${k}' (accepted: ${names.join(', ')})`);
      o[camel] = v;
    }
  }
  if (pos.length > names.length) throw new MXNetError(`takes at most ${names.length} arguments, ${pos.length} given`);
  pos.forEach((v, i) => { o[names[i]] = v; });
  return o;
}

// autograd.backward(heads, head_grads=None, retain_graph=False, train_mode=True)
export function backward(heads, ...rest) {
  const o = options(rest, ['headGrads', 'retainGraph', 'trainMode'], { headGrads: null, retainGraph: false, trainMode: true });
  runBackward(heads, o.headGrads, o.retainGraph, o.trainMode, null);
}

// autograd.grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False, train_mode=True)
// create_graph: the gradients are recorded computations (MXNet: "for computing higher order
// gradients"), differentiable again by backward or grad through each backward op's own gradient;
// retain_graph defaults to create_graph, as in MXNet.
export function grad(heads, variables, ...rest) {
  const o = options(rest, ['headGrads', 'retainGraph', 'createGraph', 'trainMode'],
    { headGrads: null, retainGraph: null, createGraph: false, trainMode: true });
  const single = variables instanceof NDArray;
  const vars = asList(variables);
  checkArrays(vars, 'variables');
  const res = runBackward(heads, o.headGrads, o.retainGraph ?? o.createGraph, o.trainMode, vars, !!o.createGraph);
  return single ? res[0] : res;
}

// ---- NDArray methods --------------------------------------------------------------------------------
// x.attach_grad(grad_req='write', stype=None): a zero gradient buffer, marked as x's variable.
NDArray.prototype.attachGrad = function attachGrad(...rest) {
  const o = options(rest, ['gradReq', 'stype'], { gradReq: 'write', stype: null });
  if (o.stype !== null && o.stype !== 'default') throw new MXNetError(`attach_grad: stype '${o.stype}' is not supported (dense only)`);
  const g = keep(invokeByName('_zeros', [], { shape: this.shape, dtype: this.dtype })[0]);
  if (this._ctx) g._ctx = this._ctx;
  const old = this._ownedGrad;
  markVariables([this], [g], o.gradReq);
  this._ownedGrad = g;
  if (old) old.dispose();
};
NDArray.prototype.attach_grad = NDArray.prototype.attachGrad;

// y.backward(out_grad=None, retain_graph=False, train_mode=True)
NDArray.prototype.backward = function ndBackward(...rest) {
  const o = options(rest, ['outGrad', 'retainGraph', 'trainMode'], { outGrad: null, retainGraph: false, trainMode: true });
  runBackward([this], o.outGrad ? [o.outGrad] : null, o.retainGraph, o.trainMode, null);
};

// x.detach(): the same values, no history.
NDArray.prototype.detach = function detach() {
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_ndarray_detach(this.handle, out));
  const d = new NDArray(heap32()[out >>> 2]);
  if (this._ctx) d._ctx = this._ctx;
  return d;
};

// Whether backward wrote this gradient since the last optimizer update (gluon's stale check).
Object.defineProperty(NDArray.prototype, '_freshGrad', {
  get() { return !!M._mxw_ndarray_fresh_grad(this.handle, -1); },
  set(v) { M._mxw_ndarray_fresh_grad(this.handle, v ? 1 : 0); },
  configurable: true,
});

// ---- autograd.Function ------------------------------------------------------------------------------
// class Sigmoid extends autograd.Function {
//   forward(x) { const y = nd.sigmoid(x); this.saveForBackward(y); return y; }
//   backward(dy) { const [y] = this.savedTensors; return dy.__mul__(y.__mul__(y.__rsub__(1))); }
// }
// const f = new Sigmoid(); const y = f(x);   // (or f.call(x))
// forward runs with recording paused; while recording, the call is taped as one node whose
// gradient calls backward (also paused) with the outputs' gradients.
const functions = new Map(); // id -> {fn, refs}: refs counts the C param structs naming the id
let nextFunctionId = 1;

export class Function {
  constructor() {
    const self = (...xs) => self.call(...xs);
    delete self.name;
    delete self.length;
    Object.setPrototypeOf(self, new.target.prototype);
    self._saved = [];
    return self;
  }
  saveForBackward(...arrays) { this._saved = arrays; }
  save_for_backward(...arrays) { this.saveForBackward(...arrays); }
  get savedTensors() { return this._saved; }
  get saved_tensors() { return this._saved; }
  forward() { throw new MXNetError('autograd.Function subclasses implement forward(...inputs)'); }
  backward() { throw new MXNetError('autograd.Function subclasses implement backward(...outputGrads)'); }
  call(...inputs) {
    inputs.forEach((x, i) => { if (!(x instanceof NDArray)) throw new MXNetError(`Function input ${i} must be an NDArray`); });
    const res = pause(() => this.forward(...inputs), training);
    const outs = Array.isArray(res) ? res : [res];
    outs.forEach((o, i) => { if (!(o instanceof NDArray)) throw new MXNetError(`Function.forward must return NDArrays (output ${i} is not)`); });
    if (recording) {
      const id = nextFunctionId++;
      functions.set(id, { fn: this, refs: 1 });
      const a = args.reset();
      const st = M._mxw_autograd_record_custom(id, inputs.length, a.i32s(inputs.map((x) => x.handle)), outs.length,
        a.i32s(outs.map((o) => o.handle)));
      if (st !== 0) { functions.delete(id); check(st); }
    }
    return res;
  }
}

M.mxwCustomRefs = (id, delta) => {
  const e = functions.get(id);
  if (!e) return;
  e.refs += delta;
  if (e.refs <= 0) functions.delete(id);
};
M.mxwCustomBackward = (id, nog, ogP, nig, outP, errP, errLen) => {
  try {
    const e = functions.get(id);
    if (!e) throw new MXNetError(`Function ${id} is gone`);
    const h32 = heap32();
    const ogH = Array.from(h32.subarray(ogP >>> 2, (ogP >>> 2) + nog));
    const outH = Array.from(h32.subarray(outP >>> 2, (outP >>> 2) + nig));
    const ograds = ogH.map((h) => new NDArray(h));
    const res = pause(() => e.fn.backward(...ograds), training);
    const grads = Array.isArray(res) ? res : [res];
    if (grads.length !== nig) throw new MXNetError(`backward returned ${grads.length} gradients for ${nig} inputs`);
    grads.forEach((g, k) => {
      if (!(g instanceof NDArray)) throw new MXNetError(`backward's gradient ${k} is not an NDArray`);
      check(M._mxw_ndarray_copy(g.handle, outH[k]));
    });
    return 0;
  } catch (err) {
    M.stringToUTF8(String(err && err.message ? err.message : err), errP, errLen);
    return -1;
  }
};
