// cached_op.mjs -- MXNet's CachedOp: a Symbol bound once into the C executor (csrc/graph/exec.c),
// then run many times with one call into wasm per forward.
import { M, MXNetError, args, check, heap32 } from './core.mjs';
import { NDArray, trackBytes, checkAlloc } from './ndarray.mjs';

// A dropped CachedOp's executor (its graph and planned buffers) is freed by the collector; its
// buffers count among the bytes left to it (ndarray.mjs), so that dropped graphs request collections.
const finalizer = new FinalizationRegistry((cell) => { M._mxw_exec_free(cell.h); trackBytes(cell, -1); });

// CachedOp(sym, flags = []) as Python's mx.nd.CachedOp: callable with the graph's inputs in
// sym.listInputs() order, `op(x, w, b)` (or `op(x, w, b, {out})`); returns one NDArray for a
// one-output graph, else a list.
export class CachedOp {
  constructor(symbol, flags = {}) {
    if (!symbol || typeof symbol.tojson !== 'function') throw new MXNetError('CachedOp takes a Symbol');
    // flags: {static_alloc: true} or Python's list of pairs [['static_alloc', true]]
    const flagObj = Array.isArray(flags) ? Object.fromEntries(flags) : { ...flags };
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_exec_create(symbol.handle, out));
    const h = heap32()[out >>> 2];
    // callable as in Python: the object is a function whose prototype is the class's
    const self = (...xs) => self.call(...xs);
    delete self.name;
    delete self.length;
    Object.setPrototypeOf(self, new.target.prototype);
    self._h = h;
    self._cell = { h, n: -1 };
    finalizer.register(self, self._cell, self);
    self.flags = flagObj;
    const n = M._mxw_exec_num_inputs(h);
    self.inputNames = Array.from({ length: n }, (_, i) => M.UTF8ToString(M._mxw_exec_input_name(h, i)));
    self.numOutputs = M._mxw_exec_num_outputs(h);
    return self;
  }
  // op(...inputs, {out}): Python's CachedOp.__call__
  call(...xs) {
    let out = null;
    const last = xs[xs.length - 1];
    if (last !== null && typeof last === 'object' && Object.getPrototypeOf(last) === Object.prototype) {
      ({ out = null } = xs.pop());
    }
    for (let i = 0; i < xs.length; i++) {
      if (!(xs[i] instanceof NDArray)) throw new MXNetError(`CachedOp: input ${i} (${this.inputNames[i] ?? '?'}) must be an NDArray`);
    }
    const res = this.forward(xs);
    if (out) {
      const outs = Array.isArray(out) ? out : [out];
      if (outs.length !== res.length) throw new MXNetError(`CachedOp: ${res.length} outputs, ${outs.length} out arrays given`);
      res.forEach((r, i) => { r.copyto(outs[i]); r.dispose(); });
      return out;
    }
    return res.length === 1 ? res[0] : res;
  }
  // inputs: one NDArray (or null = unbound) per input, in inputNames order. Returns NDArrays.
  forward(inputs, isTrain = false) {
    if (!this._h) throw new MXNetError('this CachedOp has been disposed');
    if (inputs.length !== this.inputNames.length) {
      throw new MXNetError(`the graph has ${this.inputNames.length} inputs, ${inputs.length} given`);
    }
    const a = args.reset();
    const n = inputs.length, nout = this.numOutputs;
    const inP = a.alloc(4 * (n + 2 * nout + 1));
    const outP = inP + 4 * n, noutP = outP + 4 * nout;
    const h32 = heap32();
    for (let i = 0; i < n; i++) {
      const x = inputs[i];
      h32[(inP >>> 2) + i] = x ? (x instanceof NDArray && x._h) || this._inputError(i, x) : 0;
    }
    h32.fill(0, outP >>> 2, (outP >>> 2) + nout);
    h32[noutP >>> 2] = nout;
    checkAlloc(M._mxw_exec_forward(this._h, n, inP, isTrain ? 1 : 0, noutP, outP));
    const hs = Array.from(heap32().subarray(outP >>> 2, (outP >>> 2) + nout)); // read before wrapping
    trackBytes(this._cell, M._mxw_exec_arena_bytes(this._h));
    return hs.map((h) => new NDArray(h));
  }
  _inputError(i, x) {
    const what = `CachedOp: input ${i} (${this.inputNames[i]})`;
    if (x instanceof NDArray) throw new MXNetError(`${what} was disposed`);
    throw new MXNetError(`${what} must be an NDArray`);
  }
  // registerOpHook support: keep every node's values and hand them to callback(name, opName, arr)
  // after each run (outputs always; inputs too with monitorAll).
  setMonitor(on) { check(M._mxw_exec_set_monitor(this._h, on ? 1 : 0)); this._monitor = !!on; }
  runMonitor(callback, monitorAll) {
    const p = M._mxw_exec_monitor_info(this._h);
    if (!p) check(-1);
    for (const e of JSON.parse(M.UTF8ToString(p))) {
      if (e.input && !monitorAll) continue;
      const a = args.reset();
      const out = a.alloc(4);
      check(M._mxw_exec_entry_copy(this._h, e.entry, out));
      const arr = new NDArray(heap32()[out >>> 2]);
      try { callback(e.name, e.op, arr); } finally { arr.dispose(); }
    }
  }
  // {forwardPlans, trainingGraphs, trainingPlans}: how often the graph was inferred and planned
  // for inference, and (hybridized training) how often its gradient graph was built and planned.
  get stats() {
    if (!this._h) return { forwardPlans: 0, trainingGraphs: 0, trainingPlans: 0 };
    const a = args.reset();
    const out = a.alloc(12);
    check(M._mxw_exec_stats(this._h, out));
    const h = heap32();
    return { forwardPlans: h[out >>> 2], trainingGraphs: h[(out >>> 2) + 1], trainingPlans: h[(out >>> 2) + 2] };
  }
  get arenaBytes() { return this._h ? M._mxw_exec_arena_bytes(this._h) : 0; }
  // Activation nodes the current plan fused into their producers (FullyConnected, Convolution).
  get fusedNodes() { return this._h ? M._mxw_exec_num_fused(this._h) : 0; }
  dispose() {
    if (!this._h) return;
    finalizer.unregister(this);
    trackBytes(this._cell, -1);
    M._mxw_exec_free(this._h);
    this._h = 0;
  }
}
