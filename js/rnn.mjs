// rnn.mjs -- gluon.rnn: the recurrent cells (MXNet 1.9.1 python/mxnet/gluon/rnn/rnn_cell.py) and
// the fused layers RNN, LSTM, GRU (rnn_layer.py), with MXNet's names, defaults, parameter names
// and graphs. Constructors and methods bind Python's signatures (signatures.mjs, js-api.md rule 4).
//
//   const layer = new mx.gluon.rnn.LSTM(100, 2, {layout: 'NTC', bidirectional: true});
//   layer.initialize();
//   const out = layer(x);                          // (N, T, 200): no states given, none returned
//   const [out2, [h, c]] = layer(x, layer.beginState(N));
//   const cell = new mx.gluon.rnn.LSTMCell(100);
//   const [outputs, states] = cell.unroll(T, x, null, 'NTC', true);
//
// Cells compute one step with FullyConnected, SliceChannel and elementwise ops (node names
// 't<step>_i2h', ... as MXNet); unroll() steps them over a sequence and, with valid_length,
// masks the outputs (SequenceMask) and picks each sequence's last state (SequenceLast). The
// layers pack their weights into the fused RNN op's parameter vector (reshape(-1) of each, then
// _rnn_param_concat, in MXNet's order: every weight, then every bias, by layer, direction and
// i2h/h2h[/h2r]) and call F.RNN, transposing NTC to TNC around it. A layer's parameters
// (l0_i2h_weight, ...) are the ones the equivalent stack of cells uses (layer._unfuse()).
import { MXNetError } from './core.mjs';
import { NDArray } from './ndarray.mjs';
import { Symbol } from './symbol.mjs';
import { Block, HybridBlock, F as NS } from './block.mjs';
import { LeakyReLU } from './nn.mjs';
import { bindArgs, isPlainObject } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { pyFloat } from './format.mjs';

const bind = (name, args) => bindArgs(SIGNATURES[`rnn.${name}`], args);
const isSym = (F) => F === NS.sym;
const isTensor = (x) => x instanceof NDArray || x instanceof Symbol;
// Output i of a multi-output op: a list imperatively, a grouped Symbol symbolically.
const outAt = (r, i) => (r instanceof Symbol ? r.get(i) : r[i]);
// Python's _as_list, with a grouped Symbol spread into its outputs.
const asList = (x) => {
  if (Array.isArray(x)) return x;
  if (x instanceof Symbol && x.numOutputs > 1) return [...x];
  return [x];
};
const pyTuple = (s) => `(${s.join(', ')}${s.length === 1 ? ',' : ''})`;
const assert = (cond, msg) => { if (!cond) throw new MXNetError(msg); };
const indent = (s, n) => s.split('\n').join(`\n${' '.repeat(n)}`);

// symbol.zeros(shape, dtype=None, **kwargs): _zeros with dtype float32 by default. (sym has no
// `zeros` helper in this package; cells and layers use this one for F.zeros on Symbols.)
function symZeros(o = {}) {
  const { shape, dtype, ...rest } = o;
  return NS.sym._zeros({ ...rest, shape, dtype: dtype ?? 'float32' });
}

// Calls a begin-state function as Python's func(name=..., shape=..., __layout__=..., **kwargs):
// sym.var takes the name first; the nd creation helpers and samplers (whose JS signatures refuse
// unknown names) get the arguments their Python signatures take (Python's swallow the rest in
// **kwargs); any other function (a registered op, a user's function) gets them all in one object.
let creators = null;
function callStateFunc(func, name, o) {
  const { nd, sym } = NS;
  if (func === symZeros) return symZeros({ name, ...o });
  if (func === sym.var || func === sym.Variable) return func(name, o);
  if (!creators) {
    creators = new Map([[nd.zeros, 'nd.zeros'], [nd.ones, 'nd.ones'], [nd.empty, 'nd.empty'], [nd.full, 'nd.full']]);
    for (const k of ['uniform', 'normal', 'exponential', 'gamma', 'poisson', 'negative_binomial', 'generalized_negative_binomial']) {
      if (nd.random?.[k]) creators.set(nd.random[k], `random.${k}`);
    }
  }
  const sigName = creators.get(func);
  if (sigName) {
    const sig = SIGNATURES[sigName];
    const picked = {};
    for (const [k, v] of Object.entries(o)) if (sig.byName.has(k)) picked[k] = v;
    return func(picked);
  }
  if (typeof func !== 'function') throw new MXNetError(`begin_state: func must be a function, got ${typeof func}`);
  return func({ name, ...o });
}

// begin_state(batch_size=0, func=<default>, **kwargs): the options object may name batch_size and
// func (camelCase or snake_case); its other keys are the kwargs passed on to func.
function bindBeginState(args, defaultFunc) {
  const a = Array.prototype.slice.call(args);
  while (a.length && a[a.length - 1] === undefined) a.pop();
  let o = {};
  if (a.length && isPlainObject(a[a.length - 1])) o = a.pop();
  if (a.length > 2) throw new MXNetError(`begin_state takes at most 2 positional arguments (${a.length} given)`);
  const kwargs = {};
  let batchSize = a.length > 0 ? a[0] : undefined;
  let func = a.length > 1 ? a[1] : undefined;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'batch_size' || k === 'batchSize') {
      if (batchSize !== undefined) throw new MXNetError("begin_state: got multiple values for argument 'batch_size'");
      batchSize = v;
    } else if (k === 'func') {
      if (func !== undefined) throw new MXNetError("begin_state: got multiple values for argument 'func'");
      func = v;
    } else if (v !== undefined) {
      kwargs[k] = v;
    }
  }
  batchSize = batchSize ?? 0;
  if (!Number.isInteger(batchSize) || batchSize < 0) throw new MXNetError(`begin_state: argument 'batch_size' must be a non-negative integer, got ${batchSize}`);
  return { batchSize, func: func ?? defaultFunc(), kwargs };
}

// ---- sequence helpers (rnn_cell.py's module functions) ------------------------------------------
function cellsStateInfo(cells, batchSize) { return cells.flatMap((c) => c.stateInfo(batchSize)); }
function cellsBeginState(cells, kw) { return cells.flatMap((c) => c.beginState(kw)); }

function getBeginState(cell, F, beginState, inputs, batchSize) {
  if (beginState !== null && beginState !== undefined) return beginState;
  if (isSym(F)) return cell.beginState({ func: symZeros, batchSize });
  // Python runs this `with ctx:` (the inputs' context)
  const x = isTensor(inputs) ? inputs : inputs[0];
  const ctx = x instanceof NDArray ? x._ctx : null;
  return cell.beginState({ func: NS.nd.zeros, batchSize, ...(ctx ? { ctx } : {}) });
}

// _format_sequence: inputs as a list of steps (merge false), one tensor (merge true) or as they
// are (merge null); returns [inputs, time axis, F, batch size].
function formatSequence(length, inputs, layout, merge, inLayout = null) {
  assert(inputs !== null && inputs !== undefined, 'unroll(inputs=None) has been deprecated. Please create input variables outside unroll.');
  const axis = layout.indexOf('T');
  const batchAxis = layout.indexOf('N');
  let batchSize = 0;
  let inAxis = inLayout !== null ? inLayout.indexOf('T') : axis;
  let F;
  if (inputs instanceof Symbol) {
    F = NS.sym;
    if (merge === false) {
      assert(inputs.listOutputs().length === 1, "unroll doesn't allow grouped symbol as input. Please convert to list with list(inputs) first or let unroll handle splitting.");
      inputs = [...NS.sym.split(inputs, { axis: inAxis, num_outputs: length, squeeze_axis: 1 })];
    }
  } else if (inputs instanceof NDArray) {
    F = NS.nd;
    batchSize = inputs.shape[batchAxis];
    if (merge === false) {
      assert(length === null || length === undefined || length === inputs.shape[inAxis],
        `unroll: length ${length} does not match the input's ${inputs.shape[inAxis]} steps along axis ${inAxis}`);
      inputs = asList(NS.nd.split(inputs, { axis: inAxis, num_outputs: inputs.shape[inAxis], squeeze_axis: 1 }));
    }
  } else {
    assert(Array.isArray(inputs) && inputs.length > 0 && isTensor(inputs[0]),
      'unroll: inputs must be a Symbol, an NDArray or a list of them');
    assert(length === null || length === undefined || inputs.length === length,
      `unroll: ${inputs.length} inputs given for length ${length}`);
    if (inputs[0] instanceof Symbol) {
      F = NS.sym;
    } else {
      F = NS.nd;
      batchSize = inputs[0].shape[0];
    }
    if (merge === true) {
      inputs = F.stack(...inputs, { axis });
      inAxis = axis;
    }
  }
  if (isTensor(inputs) && axis !== inAxis) inputs = F.swapaxes(inputs, { dim1: axis, dim2: inAxis });
  return [inputs, axis, F, batchSize];
}

function maskSequenceVariableLength(F, data, length, validLength, timeAxis, merge) {
  assert(validLength !== null && validLength !== undefined, 'valid_length is required');
  if (!isTensor(data)) data = F.stack(...data, { axis: timeAxis });
  let outputs = F.SequenceMask(data, validLength, { use_sequence_length: true, axis: timeAxis });
  if (!merge) outputs = asList(F.split(outputs, { num_outputs: length, axis: timeAxis, squeeze_axis: true }));
  return outputs;
}

// The steps in reverse (each sequence's first valid_length steps reversed, the padding kept).
function reverseSequences(sequences, unrollStep, validLength = null) {
  const F = sequences[0] instanceof Symbol ? NS.sym : NS.nd;
  if (validLength === null || validLength === undefined) return sequences.slice().reverse();
  const rev = F.SequenceReverse(F.stack(...sequences, { axis: 0 }), validLength, { use_sequence_length: true });
  if (unrollStep > 1 || isSym(F)) return asList(F.split(rev, { axis: 0, num_outputs: unrollStep, squeeze_axis: true }));
  return [rev.get(0)];
}

// ---- RecurrentCell / HybridRecurrentCell ------------------------------------------------------------
// Python's HybridRecurrentCell derives from both RecurrentCell and HybridBlock; here it derives
// from HybridBlock and shares RecurrentCell's methods, and `instanceof RecurrentCell` holds for it.
const cellMethods = {
  // reset(): before re-using the cell for another graph.
  reset() {
    this._initCounter = -1;
    this._counter = -1;
    for (const c of this._children.values()) if (typeof c.reset === 'function') c.reset();
  },
  stateInfo() { throw new MXNetError(`${this.constructor.name} must implement stateInfo(batchSize)`); },
  // beginState(batchSize = 0, func = nd.zeros, {...kwargs}): the initial states.
  beginState(...args) {
    const { batchSize, func, kwargs } = bindBeginState(args, () => NS.nd.zeros);
    assert(!this._modified, 'After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called directly. Call the modifier cell instead.');
    const states = [];
    for (const info of this.stateInfo(batchSize)) {
      this._initCounter += 1;
      const o = info ? { ...info, ...kwargs } : { ...kwargs };
      states.push(callStateFunc(func, `${this._prefix}begin_state_${this._initCounter}`, o));
    }
    return states;
  },
  // unroll(length, inputs, beginState = null, layout = 'NTC', mergeOutputs = null, validLength = null)
  // -> [outputs, states]
  unroll(...args) {
    const a = bind('RecurrentCell.unroll', args);
    const { length, layout, validLength } = a;
    this.reset();
    const [inputs, axis, F, batchSize] = formatSequence(length, a.inputs, layout, false);
    let states = getBeginState(this, F, a.beginState, inputs, batchSize);
    let outputs = [];
    const allStates = [];
    for (let i = 0; i < length; i++) {
      const [output, next] = this.__call__(inputs[i], states);
      states = next;
      outputs.push(output);
      if (validLength !== null) allStates.push(states);
    }
    if (validLength !== null) {
      states = allStates[0].map((_, k) => F.SequenceLast(F.stack(...allStates.map((s) => s[k]), { axis: 0 }), validLength,
        { use_sequence_length: true, axis: 0 }));
      outputs = maskSequenceVariableLength(F, outputs, length, validLength, axis, true);
    }
    [outputs] = formatSequence(length, outputs, layout, a.mergeOutputs);
    return [outputs, states];
  },
  // Python's _get_activation: a name (tanh, relu, sigmoid, softsign as their ops, others through
  // Activation), a LeakyReLU block, or a function called as f(inputs, {name}).
  _getActivation(F, inputs, activation, kw = {}) {
    const direct = { tanh: 'tanh', relu: 'relu', sigmoid: 'sigmoid', softsign: 'softsign' };
    if (typeof activation === 'string') {
      if (Object.prototype.hasOwnProperty.call(direct, activation)) return F[direct[activation]](inputs, kw);
      return F.Activation(inputs, { act_type: activation, ...kw });
    }
    if (activation instanceof LeakyReLU) return F.LeakyReLU(inputs, { act_type: 'leaky', slope: activation._alpha, ...kw });
    if (typeof activation === 'function') return activation(inputs, kw);
    throw new MXNetError(`unsupported activation ${String(activation)}`);
  },
};

export class RecurrentCell extends Block {
  // RecurrentCell(prefix = null, params = null)
  constructor(...args) {
    super(bind('RecurrentCell', args));
    this._modified = false;
    this.reset();
  }
  forward(inputs, states) {
    this._counter += 1;
    return super.forward(inputs, states);
  }
  static [globalThis.Symbol.hasInstance](x) {
    if (this === RecurrentCell && x instanceof HybridRecurrentCell) return true;
    return Function.prototype[globalThis.Symbol.hasInstance].call(this, x);
  }
}
export class HybridRecurrentCell extends HybridBlock {
  // HybridRecurrentCell(prefix = null, params = null)
  constructor(...args) {
    super(bind('HybridRecurrentCell', args));
    this._modified = false;
    this.reset();
  }
  forward(inputs, states) {
    this._counter += 1;
    return super.forward(inputs, states);
  }
  hybridForward() { throw new MXNetError(`${this.constructor.name} must implement hybridForward(F, inputs, states, params)`); }
}
for (const proto of [RecurrentCell.prototype, HybridRecurrentCell.prototype]) {
  for (const [k, fn] of Object.entries(cellMethods)) {
    Object.defineProperty(proto, k, { value: fn, writable: true, configurable: true });
  }
}

const cellBlockArgs = (a) => ({ prefix: a.prefix, params: a.params });
// i2h/h2h weights and biases of a gated cell (gates x hidden rows).
function cellParams(cell, a, gates) {
  const H = a.hiddenSize;
  if (!(Number.isInteger(H) && H > 0)) throw new MXNetError(`${cell.constructor.name}: hidden_size must be a positive integer, got ${H}`);
  if (!(Number.isInteger(a.inputSize) && a.inputSize >= 0)) throw new MXNetError(`${cell.constructor.name}: input_size must be a non-negative integer, got ${a.inputSize}`);
  cell._hiddenSize = H;
  cell._inputSize = a.inputSize;
  cell.i2h_weight = cell.params.get('i2h_weight', { shape: [gates * H, a.inputSize], init: a.i2hWeightInitializer, allowDeferredInit: true });
  cell.h2h_weight = cell.params.get('h2h_weight', { shape: [gates * H, H], init: a.h2hWeightInitializer, allowDeferredInit: true });
  cell.i2h_bias = cell.params.get('i2h_bias', { shape: [gates * H], init: a.i2hBiasInitializer, allowDeferredInit: true });
  cell.h2h_bias = cell.params.get('h2h_bias', { shape: [gates * H], init: a.h2hBiasInitializer, allowDeferredInit: true });
}
const mapping = (w, div = 1) => { const s = w.shape; return `${s[1] ? s[1] : 'None'} -> ${s[0] / div}`; };
const actName = (act) => (typeof act === 'string' ? act : act instanceof Block ? String(act) : act?.name || 'function');

// ---- RNNCell, LSTMCell, GRUCell ------------------------------------------------------------------------
export class RNNCell extends HybridRecurrentCell {
  static alias() { return 'rnn'; }
  // RNNCell(hidden_size, activation = 'tanh', i2h_weight_initializer = null, h2h_weight_initializer = null,
  //   i2h_bias_initializer = 'zeros', h2h_bias_initializer = 'zeros', input_size = 0, prefix = null, params = null)
  constructor(...args) {
    const a = bind('RNNCell', args);
    super(cellBlockArgs(a));
    this._activation = a.activation;
    cellParams(this, a, 1);
  }
  stateInfo(batchSize = 0) { return [{ shape: [batchSize, this._hiddenSize], __layout__: 'NC' }]; }
  hybridForward(F, inputs, states, { i2h_weight, h2h_weight, i2h_bias, h2h_bias }) {
    const prefix = `t${this._counter}_`;
    const H = this._hiddenSize;
    const i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, { num_hidden: H, name: `${prefix}i2h` });
    const h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, { num_hidden: H, name: `${prefix}h2h` });
    const sum = F.elemwise_add(i2h, h2h, { name: `${prefix}plus0` });
    const output = this._getActivation(F, sum, this._activation, { name: `${prefix}out` });
    return [output, [output]];
  }
  toString() { return `RNNCell(${mapping(this.i2h_weight)}, ${actName(this._activation)})`; }
}

export class LSTMCell extends HybridRecurrentCell {
  static alias() { return 'lstm'; }
  // LSTMCell(hidden_size, i2h_weight_initializer = null, h2h_weight_initializer = null,
  //   i2h_bias_initializer = 'zeros', h2h_bias_initializer = 'zeros', input_size = 0, prefix = null,
  //   params = null, activation = 'tanh', recurrent_activation = 'sigmoid')
  constructor(...args) {
    const a = bind('LSTMCell', args);
    super(cellBlockArgs(a));
    cellParams(this, a, 4);
    this._activation = a.activation;
    this._recurrentActivation = a.recurrentActivation;
  }
  stateInfo(batchSize = 0) {
    return [{ shape: [batchSize, this._hiddenSize], __layout__: 'NC' }, { shape: [batchSize, this._hiddenSize], __layout__: 'NC' }];
  }
  hybridForward(F, inputs, states, { i2h_weight, h2h_weight, i2h_bias, h2h_bias }) {
    const prefix = `t${this._counter}_`;
    const G = this._hiddenSize * 4;
    const i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, { num_hidden: G, name: `${prefix}i2h` });
    const h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, { num_hidden: G, name: `${prefix}h2h` });
    const gates = F.elemwise_add(i2h, h2h, { name: `${prefix}plus0` });
    const slices = F.SliceChannel(gates, { num_outputs: 4, name: `${prefix}slice` });
    const inGate = this._getActivation(F, outAt(slices, 0), this._recurrentActivation, { name: `${prefix}i` });
    const forgetGate = this._getActivation(F, outAt(slices, 1), this._recurrentActivation, { name: `${prefix}f` });
    const inTransform = this._getActivation(F, outAt(slices, 2), this._activation, { name: `${prefix}c` });
    const outGate = this._getActivation(F, outAt(slices, 3), this._recurrentActivation, { name: `${prefix}o` });
    const nextC = F.elemwise_add(F.elemwise_mul(forgetGate, states[1], { name: `${prefix}mul0` }),
      F.elemwise_mul(inGate, inTransform, { name: `${prefix}mul1` }), { name: `${prefix}state` });
    const nextH = F.elemwise_mul(outGate, F.Activation(nextC, { act_type: this._activation, name: `${prefix}activation0` }),
      { name: `${prefix}out` });
    return [nextH, [nextH, nextC]];
  }
  toString() { return `LSTMCell(${mapping(this.i2h_weight)})`; }
}

export class GRUCell extends HybridRecurrentCell {
  static alias() { return 'gru'; }
  // GRUCell(hidden_size, i2h_weight_initializer = null, h2h_weight_initializer = null,
  //   i2h_bias_initializer = 'zeros', h2h_bias_initializer = 'zeros', input_size = 0, prefix = null, params = null)
  constructor(...args) {
    const a = bind('GRUCell', args);
    super(cellBlockArgs(a));
    cellParams(this, a, 3);
  }
  stateInfo(batchSize = 0) { return [{ shape: [batchSize, this._hiddenSize], __layout__: 'NC' }]; }
  // r = sigmoid(i2h_r + h2h_r), z = sigmoid(i2h_z + h2h_z), n = tanh(i2h_n + r * h2h_n),
  // h' = (1 - z) * n + z * h (the reset gate applied after the product, as cuDNN)
  hybridForward(F, inputs, states, { i2h_weight, h2h_weight, i2h_bias, h2h_bias }) {
    const prefix = `t${this._counter}_`;
    const prevH = states[0];
    const G = this._hiddenSize * 3;
    const i2hAll = F.FullyConnected(inputs, i2h_weight, i2h_bias, { num_hidden: G, name: `${prefix}i2h` });
    const h2hAll = F.FullyConnected(prevH, h2h_weight, h2h_bias, { num_hidden: G, name: `${prefix}h2h` });
    const is = F.SliceChannel(i2hAll, { num_outputs: 3, name: `${prefix}i2h_slice` });
    const hs = F.SliceChannel(h2hAll, { num_outputs: 3, name: `${prefix}h2h_slice` });
    const resetGate = F.Activation(F.elemwise_add(outAt(is, 0), outAt(hs, 0), { name: `${prefix}plus0` }),
      { act_type: 'sigmoid', name: `${prefix}r_act` });
    const updateGate = F.Activation(F.elemwise_add(outAt(is, 1), outAt(hs, 1), { name: `${prefix}plus1` }),
      { act_type: 'sigmoid', name: `${prefix}z_act` });
    const nextHTmp = F.Activation(F.elemwise_add(outAt(is, 2), F.elemwise_mul(resetGate, outAt(hs, 2), { name: `${prefix}mul0` }),
      { name: `${prefix}plus2` }), { act_type: 'tanh', name: `${prefix}h_act` });
    const ones = F.ones_like(updateGate, { name: `${prefix}ones_like0` });
    const nextH = F.elemwise_add(
      F.elemwise_mul(F.elemwise_sub(ones, updateGate, { name: `${prefix}minus0` }), nextHTmp, { name: `${prefix}mul1` }),
      F.elemwise_mul(updateGate, prevH, { name: `${prefix}mul20` }), { name: `${prefix}out` });
    return [nextH, [nextH]];
  }
  toString() { return `GRUCell(${mapping(this.i2h_weight)})`; }
}

// ---- SequentialRNNCell, HybridSequentialRNNCell ---------------------------------------------------------
// Shared by both: stacking, the stack's states, one step, and unroll layer by layer.
const sequentialMethods = {
  add(cell) { this.registerChild(cell); return this; },
  stateInfo(batchSize = 0) { return cellsStateInfo([...this._children.values()], batchSize); },
  beginState(...args) {
    assert(!this._modified, 'After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called directly. Call the modifier cell instead.');
    const { batchSize, func, kwargs } = bindBeginState(args, () => NS.nd.zeros);
    return cellsBeginState([...this._children.values()], { ...kwargs, batchSize, func });
  },
  __call__(inputs, states) {
    this._counter += 1;
    const next = [];
    let p = 0;
    const cells = [...this._children.values()];
    assert(cells.every((c) => !(c instanceof BidirectionalCell)), 'Bidirectional cannot be stepped. Please use unroll');
    for (const cell of cells) {
      const n = cell.stateInfo().length;
      const state = states.slice(p, p + n);
      p += n;
      let st;
      [inputs, st] = cell.__call__(inputs, state);
      next.push(...st);
    }
    return [inputs, next];
  },
  unroll(...args) {
    const a = bind('RecurrentCell.unroll', args);
    this.reset();
    let [inputs, , F, batchSize] = formatSequence(a.length, a.inputs, a.layout, null);
    const cells = [...this._children.values()];
    const beginState = getBeginState(this, F, a.beginState, inputs, batchSize);
    let p = 0;
    const next = [];
    cells.forEach((cell, i) => {
      const n = cell.stateInfo().length;
      const states = beginState.slice(p, p + n);
      p += n;
      let st;
      [inputs, st] = cell.unroll(a.length, inputs, states, a.layout, i < cells.length - 1 ? null : a.mergeOutputs, a.validLength);
      next.push(...st);
    });
    return [inputs, next];
  },
  get(i) {
    const c = this._children.get(String(i));
    if (!c) throw new MXNetError(`${this.constructor.name} index ${i} is out of range (it holds ${this._children.size} cells)`);
    return c;
  },
  at(i) { return this.get(i); },
  toString() {
    const body = [...this._children].map(([i, m]) => `(${i}): ${indent(String(m), 2)}`).join('\n');
    return `${this.constructor.name}(\n${body}\n)`;
  },
};

export class SequentialRNNCell extends RecurrentCell {
  static _indexable = true;
  // SequentialRNNCell(prefix = null, params = null)
  constructor(...args) { super(bind('SequentialRNNCell', args)); }
  get length() { return this._children.size; }
}
export class HybridSequentialRNNCell extends HybridRecurrentCell {
  static _indexable = true;
  // HybridSequentialRNNCell(prefix = null, params = null)
  constructor(...args) { super(bind('HybridSequentialRNNCell', args)); }
  get length() { return this._children.size; }
  hybridForward(F, inputs, states) { return this.__call__(inputs, states); }
}
for (const proto of [SequentialRNNCell.prototype, HybridSequentialRNNCell.prototype]) {
  for (const [k, fn] of Object.entries(sequentialMethods)) {
    Object.defineProperty(proto, k, { value: fn, writable: true, configurable: true });
  }
}

// ---- DropoutCell -----------------------------------------------------------------------------------------
export class DropoutCell extends HybridRecurrentCell {
  static alias() { return 'dropout'; }
  // DropoutCell(rate, axes = [], prefix = null, params = null)
  constructor(...args) {
    const a = bind('DropoutCell', args);
    super(cellBlockArgs(a));
    assert(typeof a.rate === 'number', 'rate must be a number');
    this._rate = a.rate;
    this._axes = Array.isArray(a.axes) ? a.axes.slice() : [a.axes];
  }
  stateInfo() { return []; }
  hybridForward(F, inputs, states, params) {
    void params;
    if (this._rate > 0) inputs = F.Dropout(inputs, { p: this._rate, axes: this._axes, name: `t${this._counter}_fwd` });
    return [inputs, states];
  }
  unroll(...args) {
    const a = bind('RecurrentCell.unroll', args);
    this.reset();
    const [inputs, , F] = formatSequence(a.length, a.inputs, a.layout, a.mergeOutputs);
    if (isTensor(inputs)) return this.hybridForward(F, inputs, a.beginState ? a.beginState : [], {});
    return cellMethods.unroll.call(this, a.length, inputs, a.beginState, a.layout, a.mergeOutputs, null);
  }
  toString() { return `DropoutCell(rate=${this._rate}, axes=${this._axes.length === 1 ? `(${this._axes[0]},)` : `(${this._axes.join(', ')})`})`; }
}

// ---- ModifierCell, ZoneoutCell, ResidualCell ----------------------------------------------------------------
export class ModifierCell extends HybridRecurrentCell {
  // ModifierCell(base_cell): the base cell may then only be used through the modifier.
  constructor(...args) {
    const { baseCell } = bind('ModifierCell', args);
    checkCell(baseCell, 'base_cell');
    assert(!baseCell._modified, `Cell ${baseCell.name} is already modified. One cell cannot be modified twice`);
    const alias = new.target.alias ? new.target.alias() : new.target.name.toLowerCase();
    super({ prefix: baseCell.prefix + alias, params: null });
    baseCell._modified = true;
    this.base_cell = baseCell;
  }
  get params() { return this.base_cell.params; }
  stateInfo(batchSize = 0) { return this.base_cell.stateInfo(batchSize); }
  // beginState(func = symbol.zeros, {...kwargs}) -- Python's default func here is symbol.zeros
  beginState(...args) {
    assert(!this._modified, 'After applying modifier cells (e.g. DropoutCell) the base cell cannot be called directly. Call the modifier cell instead.');
    const a = Array.prototype.slice.call(args);
    let o = {};
    if (a.length && isPlainObject(a[a.length - 1])) o = { ...a.pop() };
    if (a.length > 1) throw new MXNetError(`begin_state takes at most 1 positional argument (${a.length} given)`);
    if (a.length) {
      if (o.func !== undefined) throw new MXNetError("begin_state: got multiple values for argument 'func'");
      o.func = a[0];
    }
    if (o.func === undefined) o.func = symZeros;
    this.base_cell._modified = false;
    try {
      return this.base_cell.beginState(o);
    } finally {
      this.base_cell._modified = true;
    }
  }
  hybridForward() { throw new MXNetError(`${this.constructor.name} must implement hybridForward(F, inputs, states, params)`); }
  toString() { return `${this.constructor.name}(${this.base_cell})`; }
}
function checkCell(c, what) {
  if (!(c instanceof HybridRecurrentCell) && !(c instanceof RecurrentCell)) {
    throw new MXNetError(`${what} must be a recurrent cell, got ${c?.constructor?.name ?? typeof c}`);
  }
}

export class ZoneoutCell extends ModifierCell {
  static alias() { return 'zoneout'; }
  // ZoneoutCell(base_cell, zoneout_outputs = 0, zoneout_states = 0)
  constructor(...args) {
    const a = bind('ZoneoutCell', args);
    assert(!(a.baseCell instanceof BidirectionalCell), "BidirectionalCell doesn't support zoneout since it doesn't support step. Please add ZoneoutCell to the cells underneath instead.");
    assert(!(a.baseCell instanceof SequentialRNNCell) || !a.baseCell._bidirectional, "Bidirectional SequentialRNNCell doesn't support zoneout. Please add ZoneoutCell to the cells underneath instead.");
    super(a.baseCell);
    this.zoneoutOutputs = a.zoneoutOutputs;
    this.zoneoutStates = a.zoneoutStates;
    this._prevOutput = null;
  }
  reset() {
    super.reset();
    this._prevOutput = null;
  }
  hybridForward(F, inputs, states, params) {
    void params;
    const cell = this.base_cell, pOut = this.zoneoutOutputs, pState = this.zoneoutStates;
    const [nextOutput, nextStates] = cell.__call__(inputs, states);
    const mask = (p, like) => F.Dropout(F.ones_like(like), { p });
    const prevOutput = this._prevOutput ?? F.zeros_like(nextOutput);
    const output = pOut !== 0 ? F.where(mask(pOut, nextOutput), nextOutput, prevOutput) : nextOutput;
    const newStates = pState !== 0 ? nextStates.map((s, i) => F.where(mask(pState, s), s, states[i])) : nextStates;
    this._prevOutput = output;
    return [output, newStates];
  }
  toString() { return `ZoneoutCell(p_out=${pyFloat(this.zoneoutOutputs)}, p_state=${pyFloat(this.zoneoutStates)}, ${this.base_cell})`; }
}

// ---- gluon.contrib.rnn (contrib/rnn/rnn_cell.py) -------------------------------------------------------
// LSTMPCell(hidden_size, projection_size, i2h/h2h/h2r weight initializers, i2h/h2h bias
// initializers, input_size = 0, prefix, params): an LSTM whose recurrent state is the projection
// r = W_hr h (Sak et al., 2014): states [r (N, projection_size), c (N, hidden_size)].
export class LSTMPCell extends HybridRecurrentCell {
  static alias() { return 'lstmp'; }
  constructor(...args) {
    const a = bind('LSTMPCell', args);
    super(cellBlockArgs(a));
    const H = a.hiddenSize, P = a.projectionSize;
    if (!(Number.isInteger(P) && P > 0)) throw new MXNetError(`LSTMPCell: projection_size must be a positive integer, got ${P}`);
    if (!(Number.isInteger(H) && H > 0)) throw new MXNetError(`LSTMPCell: hidden_size must be a positive integer, got ${H}`);
    this._hiddenSize = H;
    this._inputSize = a.inputSize;
    this._projectionSize = P;
    // h2h reads the projection: (4H, P); h2r projects h: (P, H)
    const get = (name, shape, init) => this.params.get(name, { shape, init, allowDeferredInit: true });
    this.i2h_weight = get('i2h_weight', [4 * H, a.inputSize], a.i2hWeightInitializer);
    this.h2h_weight = get('h2h_weight', [4 * H, P], a.h2hWeightInitializer);
    this.h2r_weight = get('h2r_weight', [P, H], a.h2rWeightInitializer);
    this.i2h_bias = get('i2h_bias', [4 * H], a.i2hBiasInitializer);
    this.h2h_bias = get('h2h_bias', [4 * H], a.h2hBiasInitializer);
  }
  stateInfo(batchSize = 0) {
    return [{ shape: [batchSize, this._projectionSize], __layout__: 'NC' }, { shape: [batchSize, this._hiddenSize], __layout__: 'NC' }];
  }
  hybridForward(F, inputs, states, { i2h_weight, h2h_weight, h2r_weight, i2h_bias, h2h_bias }) {
    const prefix = `t${this._counter}_`;
    const G = this._hiddenSize * 4;
    const i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, { num_hidden: G, name: `${prefix}i2h` });
    const h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, { num_hidden: G, name: `${prefix}h2h` });
    const gates = F.elemwise_add(i2h, h2h);
    const slices = F.SliceChannel(gates, { num_outputs: 4, name: `${prefix}slice` });
    const inGate = F.Activation(outAt(slices, 0), { act_type: 'sigmoid', name: `${prefix}i` });
    const forgetGate = F.Activation(outAt(slices, 1), { act_type: 'sigmoid', name: `${prefix}f` });
    const inTransform = F.Activation(outAt(slices, 2), { act_type: 'tanh', name: `${prefix}c` });
    const outGate = F.Activation(outAt(slices, 3), { act_type: 'sigmoid', name: `${prefix}o` });
    const nextC = F.elemwise_add(F.elemwise_mul(forgetGate, states[1]), F.elemwise_mul(inGate, inTransform), { name: `${prefix}state` });
    const hidden = F.elemwise_mul(outGate, F.Activation(nextC, { act_type: 'tanh' }), { name: `${prefix}hidden` });
    const nextR = F.FullyConnected(hidden, h2r_weight, { num_hidden: this._projectionSize, no_bias: true, name: `${prefix}out` });
    return [nextR, [nextR, nextC]];
  }
  toString() {
    const s = this.i2h_weight.shape;
    return `LSTMPCell(${s[1] ? s[1] : 'None'} -> ${s[0]} -> ${this.h2r_weight.shape[0]})`;
  }
}

// VariationalDropoutCell(base_cell, drop_inputs = 0, drop_states = 0, drop_outputs = 0): dropout
// masks on the inputs, the first state and the outputs drawn once per sequence (Gal and
// Ghahramani, 2016) and kept until reset(); unroll without state dropout drops whole sequences
// along the time axis.
export class VariationalDropoutCell extends ModifierCell {
  static alias() { return 'vardrop'; }
  constructor(...args) {
    const a = bind('VariationalDropoutCell', args);
    assert(!a.dropStates || !(a.baseCell instanceof BidirectionalCell), "BidirectionalCell doesn't support variational state dropout. Please add VariationalDropoutCell to the cells underneath instead.");
    assert(!a.dropStates || !(a.baseCell instanceof SequentialRNNCell) || !a.baseCell._bidirectional, 'Bidirectional SequentialRNNCell doesn\'t support variational state dropout. Please add VariationalDropoutCell to the cells underneath instead.');
    super(a.baseCell);
    this.drop_inputs = a.dropInputs;
    this.drop_states = a.dropStates;
    this.drop_outputs = a.dropOutputs;
    this.drop_inputs_mask = null;
    this.drop_states_mask = null;
    this.drop_outputs_mask = null;
  }
  reset() {
    super.reset();
    this.drop_inputs_mask = null;
    this.drop_states_mask = null;
    this.drop_outputs_mask = null;
  }
  hybridForward(F, inputs, states, params) {
    void params;
    const cell = this.base_cell;
    if (this.drop_states && this.drop_states_mask === null) this.drop_states_mask = F.Dropout(F.ones_like(states[0]), { p: this.drop_states });
    if (this.drop_inputs && this.drop_inputs_mask === null) this.drop_inputs_mask = F.Dropout(F.ones_like(inputs), { p: this.drop_inputs });
    if (this.drop_states) states = [F.broadcast_mul(states[0], this.drop_states_mask), ...states.slice(1)];
    if (this.drop_inputs) inputs = F.broadcast_mul(inputs, this.drop_inputs_mask);
    let [nextOutput, nextStates] = cell.__call__(inputs, states); // eslint-disable-line prefer-const
    if (this.drop_outputs && this.drop_outputs_mask === null) this.drop_outputs_mask = F.Dropout(F.ones_like(nextOutput), { p: this.drop_outputs });
    if (this.drop_outputs) nextOutput = F.broadcast_mul(nextOutput, this.drop_outputs_mask);
    return [nextOutput, nextStates];
  }
  unroll(...args) {
    if (this.drop_states) return super.unroll(...args);
    const a = bind('RecurrentCell.unroll', args);
    const { length, layout, validLength } = a;
    this.reset();
    let [inputs, axis, F, batchSize] = formatSequence(length, a.inputs, layout, true); // eslint-disable-line prefer-const
    const states0 = getBeginState(this, F, a.beginState, inputs, batchSize);
    if (this.drop_inputs) inputs = F.Dropout(inputs, { p: this.drop_inputs, axes: [axis] });
    let [outputs, states] = this.base_cell.unroll(length, inputs, states0, layout, true, validLength); // eslint-disable-line prefer-const
    if (this.drop_outputs) outputs = F.Dropout(outputs, { p: this.drop_outputs, axes: [axis] });
    const merge = a.mergeOutputs === null ? isTensor(outputs) : a.mergeOutputs;
    [outputs] = formatSequence(length, outputs, layout, merge);
    if (validLength !== null) outputs = maskSequenceVariableLength(F, outputs, length, validLength, axis, merge);
    return [outputs, states];
  }
  toString() { return `VariationalDropoutCell(p_out = ${pyFloat(this.drop_outputs)}, p_state = ${pyFloat(this.drop_states)})`; }
}

// Conv<d>D{RNN,LSTM,GRU}Cell(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad = 0s,
// i2h_dilate = 1s, h2h_dilate = 1s, initializers..., conv_layout = 'NC[D][H]W', activation = 'tanh',
// prefix, params) (contrib/rnn/conv_rnn_cell.py): the cells with convolutions (stride 1) for
// their i2h and h2h products; input_shape is one sample's (C, ...) (or (..., C) channel-last); h2h
// kernels are odd and padded to keep the state's size, whose spatial size is the i2h convolution's
// output.
const CONV_GATES = { RNN: [''], LSTM: ['_i', '_f', '_c', '_o'], GRU: ['_r', '_z', '_o'] };
class BaseConvRNNCell extends HybridRecurrentCell {
  constructor(a, dims, kind) {
    super(cellBlockArgs(a));
    const tuple = (v, what) => {
      const t = Array.isArray(v) ? v.map(Number) : Array(dims).fill(Number(v));
      assert(t.length === dims, `For ${dims}D convolution, the convolution settings can only be either int or list/tuple of length ${dims} (${what})`);
      return t;
    };
    this._kind = kind;
    this._hiddenChannels = a.hiddenChannels;
    this._inputShape = Array.isArray(a.inputShape) ? a.inputShape.map(Number) : [Number(a.inputShape)];
    this._convLayout = a.convLayout;
    this._activation = a.activation;
    this._i2hKernel = tuple(a.i2hKernel, 'i2h_kernel');
    this._stride = Array(dims).fill(1);
    this._i2hPad = tuple(a.i2hPad, 'i2h_pad');
    this._i2hDilate = tuple(a.i2hDilate, 'i2h_dilate');
    this._h2hKernel = tuple(a.h2hKernel, 'h2h_kernel');
    assert(this._h2hKernel.every((k) => k % 2 === 1), `Only support odd number, get h2h_kernel= ${JSON.stringify(a.h2hKernel)}`);
    this._h2hDilate = tuple(a.h2hDilate, 'h2h_dilate');
    const gates = CONV_GATES[kind].length, total = this._hiddenChannels * gates;
    const ca = this._convLayout.indexOf('C');
    this._channelAxis = ca;
    const inC = this._inputShape[ca - 1];
    const dimsIn = ca === 1 ? this._inputShape.slice(1) : this._inputShape.slice(0, -1);
    const out = dimsIn.map((x, i) => (x ? Math.floor(x + 2 * this._i2hPad[i] - this._i2hDilate[i] * (this._i2hKernel[i] - 1) - 1) + 1 : 0));
    this._h2hPad = this._h2hDilate.map((d, i) => Math.floor((d * (this._h2hKernel[i] - 1)) / 2));
    const first = ca === 1;
    this._stateShape = first ? [this._hiddenChannels, ...out] : [...out, this._hiddenChannels];
    const get = (name, shape, init) => this.params.get(name, { shape, init, allowDeferredInit: true });
    this.i2h_weight = get('i2h_weight', first ? [total, inC, ...this._i2hKernel] : [total, ...this._i2hKernel, inC], a.i2hWeightInitializer);
    this.h2h_weight = get('h2h_weight', first ? [total, this._hiddenChannels, ...this._h2hKernel] : [total, ...this._h2hKernel, this._hiddenChannels],
      a.h2hWeightInitializer);
    this.i2h_bias = get('i2h_bias', [total], a.i2hBiasInitializer);
    this.h2h_bias = get('h2h_bias', [total], a.h2hBiasInitializer);
  }
  stateInfo(batchSize = 0) {
    const info = { shape: [batchSize, ...this._stateShape], __layout__: this._convLayout };
    return this._kind === 'LSTM' ? [info, { ...info }] : [info];
  }
  _convForward(F, inputs, states, w, prefix) {
    const num_filter = this._hiddenChannels * CONV_GATES[this._kind].length;
    const i2h = F.Convolution(inputs, w.i2h_weight, w.i2h_bias, { num_filter, kernel: this._i2hKernel, stride: this._stride, pad: this._i2hPad,
      dilate: this._i2hDilate, layout: this._convLayout, name: `${prefix}i2h` });
    const h2h = F.Convolution(states[0], w.h2h_weight, w.h2h_bias, { num_filter, kernel: this._h2hKernel, dilate: this._h2hDilate,
      pad: this._h2hPad, stride: this._stride, layout: this._convLayout, name: `${prefix}h2h` });
    return [i2h, h2h];
  }
  hybridForward(F, inputs, states, w) {
    const prefix = `t${this._counter}_`, axis = this._channelAxis;
    const [i2h, h2h] = this._convForward(F, inputs, states, w, prefix);
    if (this._kind === 'RNN') {
      const output = this._getActivation(F, F.elemwise_add(i2h, h2h), this._activation, { name: `${prefix}out` });
      return [output, [output]];
    }
    if (this._kind === 'LSTM') {
      const g = F.SliceChannel(F.elemwise_add(i2h, h2h), { num_outputs: 4, name: `${prefix}slice`, axis });
      const inGate = F.Activation(outAt(g, 0), { act_type: 'sigmoid', name: `${prefix}i` });
      const forgetGate = F.Activation(outAt(g, 1), { act_type: 'sigmoid', name: `${prefix}f` });
      const inTransform = this._getActivation(F, outAt(g, 2), this._activation, { name: `${prefix}c` });
      const outGate = F.Activation(outAt(g, 3), { act_type: 'sigmoid', name: `${prefix}o` });
      const nextC = F.elemwise_add(F.elemwise_mul(forgetGate, states[1]), F.elemwise_mul(inGate, inTransform), { name: `${prefix}state` });
      const nextH = F.elemwise_mul(outGate, this._getActivation(F, nextC, this._activation), { name: `${prefix}out` });
      return [nextH, [nextH, nextC]];
    }
    const si = F.SliceChannel(i2h, { num_outputs: 3, name: `${prefix}i2h_slice`, axis });
    const sh = F.SliceChannel(h2h, { num_outputs: 3, name: `${prefix}h2h_slice`, axis });
    const reset = F.Activation(F.elemwise_add(outAt(si, 0), outAt(sh, 0)), { act_type: 'sigmoid', name: `${prefix}r_act` });
    const update = F.Activation(F.elemwise_add(outAt(si, 1), outAt(sh, 1)), { act_type: 'sigmoid', name: `${prefix}z_act` });
    const tmp = this._getActivation(F, F.elemwise_add(outAt(si, 2), F.elemwise_mul(reset, outAt(sh, 2))), this._activation, { name: `${prefix}h_act` });
    const nextH = F.elemwise_add(F.elemwise_mul(F._rminus_scalar(update, { scalar: 1 }), tmp), F.elemwise_mul(update, states[0]), { name: `${prefix}out` });
    return [nextH, [nextH]];
  }
  toString() {
    const shape = this.i2h_weight.shape, inC = shape[this._channelAxis === 1 ? 1 : shape.length - 1];
    return `${this.constructor.name}(${inC || 'None'} -> ${shape[0]}, ${actName(this._activation)}, ${this._convLayout})`;
  }
}
const convCell = (d, kind) => {
  const name = `Conv${d}D${kind}Cell`;
  const klass = { [name]: class extends BaseConvRNNCell {
    static alias() { return { RNN: 'conv_rnn', LSTM: 'conv_lstm', GRU: 'conv_gru' }[kind]; }
    constructor(...args) { super(bind(name, args), d, kind); }
  } }[name];
  return klass;
};
export const Conv1DRNNCell = convCell(1, 'RNN');
export const Conv2DRNNCell = convCell(2, 'RNN');
export const Conv3DRNNCell = convCell(3, 'RNN');
export const Conv1DLSTMCell = convCell(1, 'LSTM');
export const Conv2DLSTMCell = convCell(2, 'LSTM');
export const Conv3DLSTMCell = convCell(3, 'LSTM');
export const Conv1DGRUCell = convCell(1, 'GRU');
export const Conv2DGRUCell = convCell(2, 'GRU');
export const Conv3DGRUCell = convCell(3, 'GRU');

export class ResidualCell extends ModifierCell {
  // ResidualCell(base_cell): the base cell's output plus its input (Wu et al., 2016).
  constructor(...args) { super(bind('ResidualCell', args).baseCell); }
  hybridForward(F, inputs, states, params) {
    void params;
    const [output, next] = this.base_cell.__call__(inputs, states);
    return [F.elemwise_add(output, inputs, { name: `t${this._counter}_fwd` }), next];
  }
  unroll(...args) {
    const a = bind('RecurrentCell.unroll', args);
    this.reset();
    this.base_cell._modified = false;
    let outputs, states;
    try {
      [outputs, states] = this.base_cell.unroll(a.length, a.inputs, a.beginState, a.layout, a.mergeOutputs, a.validLength);
    } finally {
      this.base_cell._modified = true;
    }
    const merge = a.mergeOutputs === null ? isTensor(outputs) : a.mergeOutputs;
    let [inputs, axis, F] = formatSequence(a.length, a.inputs, a.layout, merge);
    if (a.validLength !== null) inputs = maskSequenceVariableLength(F, inputs, a.length, a.validLength, axis, merge);
    if (merge) outputs = F.elemwise_add(outputs, inputs);
    else outputs = outputs.map((o, i) => F.elemwise_add(o, inputs[i]));
    return [outputs, states];
  }
}

// ---- BidirectionalCell -----------------------------------------------------------------------------------------
export class BidirectionalCell extends HybridRecurrentCell {
  // BidirectionalCell(l_cell, r_cell, output_prefix = 'bi_')
  constructor(...args) {
    const a = bind('BidirectionalCell', args);
    checkCell(a.lCell, 'l_cell');
    checkCell(a.rCell, 'r_cell');
    super({ prefix: '', params: null });
    this.registerChild(a.lCell, 'l_cell');
    this.registerChild(a.rCell, 'r_cell');
    this._outputPrefix = a.outputPrefix;
  }
  __call__() { throw new MXNetError('Bidirectional cannot be stepped. Please use unroll'); }
  stateInfo(batchSize = 0) { return cellsStateInfo([...this._children.values()], batchSize); }
  beginState(...args) {
    assert(!this._modified, 'After applying modifier cells (e.g. DropoutCell) the base cell cannot be called directly. Call the modifier cell instead.');
    const { batchSize, func, kwargs } = bindBeginState(args, () => NS.nd.zeros);
    return cellsBeginState([...this._children.values()], { ...kwargs, batchSize, func });
  }
  unroll(...args) {
    const a = bind('RecurrentCell.unroll', args);
    const { length, layout, validLength } = a;
    this.reset();
    const [inputs, axis, F, batchSize] = formatSequence(length, a.inputs, layout, false);
    const reversedInputs = reverseSequences(inputs, length, validLength);
    const states = getBeginState(this, F, a.beginState, inputs, batchSize);
    const [lCell, rCell] = this._children.values();
    const nl = lCell.stateInfo(batchSize).length;
    let [lOutputs, lStates] = lCell.unroll(length, inputs, states.slice(0, nl), layout, a.mergeOutputs, validLength);
    const [rOutputs, rStates] = rCell.unroll(length, reversedInputs, states.slice(nl), layout, false, validLength);
    let reversedR = reverseSequences(rOutputs, length, validLength);
    let merge = a.mergeOutputs;
    if (merge === null) {
      merge = isTensor(lOutputs);
      [lOutputs] = formatSequence(null, lOutputs, layout, merge);
      [reversedR] = formatSequence(null, reversedR, layout, merge);
    }
    let outputs;
    if (merge) {
      if (!isTensor(reversedR)) reversedR = F.stack(...reversedR, { axis });
      outputs = F.concat(lOutputs, reversedR, { dim: 2, name: `${this._outputPrefix}out` });
    } else {
      outputs = lOutputs.map((lo, i) => F.concat(lo, reversedR[i], { dim: 1, name: `${this._outputPrefix}t${i}` }));
    }
    if (validLength !== null) outputs = maskSequenceVariableLength(F, outputs, length, validLength, axis, merge);
    return [outputs, [...lStates, ...rStates]];
  }
  toString() {
    return `BidirectionalCell(forward=${this._children.get('l_cell')}, backward=${this._children.get('r_cell')})`;
  }
}

// ---- the fused layers: RNN, LSTM, GRU ------------------------------------------------------------------------------
const GATES = { rnn_relu: 1, rnn_tanh: 1, lstm: 4, gru: 3 };
const UNFUSED_KEY = /^(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)$/;

class _RNNLayer extends HybridBlock {
  constructor(a, mode) {
    super({ prefix: a.prefix, params: a.params });
    const name = this.constructor.name;
    assert(a.layout === 'TNC' || a.layout === 'NTC', `Invalid layout ${a.layout}; must be one of ['TNC' or 'NTC']`);
    if (!(Number.isInteger(a.hiddenSize) && a.hiddenSize > 0)) throw new MXNetError(`${name}: hidden_size must be a positive integer, got ${a.hiddenSize}`);
    if (!(Number.isInteger(a.numLayers) && a.numLayers > 0)) throw new MXNetError(`${name}: num_layers must be a positive integer, got ${a.numLayers}`);
    if (!(Number.isInteger(a.inputSize) && a.inputSize >= 0)) throw new MXNetError(`${name}: input_size must be a non-negative integer, got ${a.inputSize}`);
    if (!(a.dropout >= 0 && a.dropout <= 1)) throw new MXNetError(`${name}: dropout must be in [0, 1], got ${a.dropout}`);
    if (!(mode in GATES)) throw new MXNetError(`${name}: activation must be 'relu' or 'tanh', got '${mode.slice(4)}'`);
    const projection = a.projectionSize ? a.projectionSize : null;
    if (projection !== null && !(Number.isInteger(projection) && projection > 0)) throw new MXNetError(`${name}: projection_size must be a positive integer, got ${projection}`);
    Object.assign(this, {
      _hiddenSize: a.hiddenSize, _projectionSize: projection, _numLayers: a.numLayers, _mode: mode, _layout: a.layout,
      _dropout: a.dropout, _dir: a.bidirectional ? 2 : 1, _inputSize: a.inputSize,
      _i2hWeightInitializer: a.i2hWeightInitializer, _h2hWeightInitializer: a.h2hWeightInitializer,
      _i2hBiasInitializer: a.i2hBiasInitializer, _h2hBiasInitializer: a.h2hBiasInitializer,
      _h2rWeightInitializer: a.h2rWeightInitializer ?? null,
      _lstmStateClipMin: a.stateClipMin ?? null, _lstmStateClipMax: a.stateClipMax ?? null,
      _lstmStateClipNan: a.stateClipNan ?? false, _dtype: a.dtype, _useSequenceLength: a.useSequenceLength,
      _gates: GATES[mode], _tracedSkip: null,
    });
    this.skipStates = null;
    const ng = this._gates, nh = a.hiddenSize, dirs = ['l', 'r'].slice(0, this._dir);
    let ni = a.inputSize;
    for (let i = 0; i < a.numLayers; i++) {
      for (const j of dirs) {
        this._registerParam(`${j}${i}_i2h_weight`, [ng * nh, ni], a.i2hWeightInitializer);
        this._registerParam(`${j}${i}_h2h_weight`, [ng * nh, projection ?? nh], a.h2hWeightInitializer);
        this._registerParam(`${j}${i}_i2h_bias`, [ng * nh], a.i2hBiasInitializer);
        this._registerParam(`${j}${i}_h2h_bias`, [ng * nh], a.h2hBiasInitializer);
        if (projection !== null) this._registerParam(`${j}${i}_h2r_weight`, [projection, nh], this._h2rWeightInitializer);
      }
      ni = (projection ?? nh) * this._dir;
    }
  }
  _registerParam(name, shape, init) {
    const p = this.params.get(name, { shape, init, allowDeferredInit: true, dtype: this._dtype });
    this[name] = p;
    return p;
  }

  toString() {
    let s = `${this.constructor.name}(${mapping(this.l0_i2h_weight, this._gates)}, ${this._layout}`;
    if (this._numLayers !== 1) s += `, num_layers=${this._numLayers}`;
    if (this._dropout !== 0) s += `, dropout=${this._dropout}`;
    if (this._dir === 2) s += ', bidirectional';
    return `${s})`;
  }

  // Structural names in MXNet 1.9's files: the unfused stack's ('_unfused.0.i2h_weight', or
  // '_unfused.0.l_cell.i2h_weight' when bidirectional), for compatibility with older files.
  _collectParamsWithPrefix(prefix = '') {
    if (prefix) prefix += '.';
    const keys = [...this._regParams.keys()];
    const bidirectional = keys.some((k) => UNFUSED_KEY.exec(k)?.[1] === 'r');
    const ret = new Map();
    for (const [k, p] of this._regParams) {
      const m = UNFUSED_KEY.exec(k);
      if (!m) { ret.set(prefix + k, p); continue; }
      const [, d, l, g, t] = m;
      ret.set(prefix + (bidirectional ? `_unfused.${l}.${d}_cell.${g}_${t}` : `_unfused.${l}.${g}_${t}`), p);
    }
    for (const [name, child] of this._children) {
      for (const [k, p] of child._collectParamsWithPrefix(prefix + name)) ret.set(k, p);
    }
    return ret;
  }

  stateInfo() { throw new MXNetError(`${this.constructor.name} must implement stateInfo(batchSize)`); }

  // The equivalent stack of cells, sharing this layer's parameters (MXNet's _unfuse).
  _unfuse() {
    assert(!this._projectionSize, '_unfuse does not support projection layer yet!');
    assert(!this._lstmStateClipMin && !this._lstmStateClipMax, '_unfuse does not support state clipping yet!');
    const H = this._hiddenSize;
    const getCell = (kw) => {
      switch (this._mode) {
        case 'rnn_relu': return new RNNCell(H, { activation: 'relu', ...kw });
        case 'rnn_tanh': return new RNNCell(H, { activation: 'tanh', ...kw });
        case 'lstm': return new LSTMCell(H, kw);
        default: return new GRUCell(H, kw);
      }
    };
    const stack = new HybridSequentialRNNCell({ prefix: this.prefix, params: this.params });
    stack.nameScope(() => {
      let ni = this._inputSize;
      for (let i = 0; i < this._numLayers; i++) {
        const kw = {
          input_size: ni, i2h_weight_initializer: this._i2hWeightInitializer, h2h_weight_initializer: this._h2hWeightInitializer,
          i2h_bias_initializer: this._i2hBiasInitializer, h2h_bias_initializer: this._h2hBiasInitializer,
        };
        if (this._dir === 2) stack.add(new BidirectionalCell(getCell({ prefix: `l${i}_`, ...kw }), getCell({ prefix: `r${i}_`, ...kw })));
        else stack.add(getCell({ prefix: `l${i}_`, ...kw }));
        if (this._dropout > 0 && i !== this._numLayers - 1) stack.add(new DropoutCell(this._dropout));
        ni = H * this._dir;
      }
    });
    return stack;
  }

  cast(dtype) {
    super.cast(dtype);
    this._dtype = dtype;
  }

  // beginState(batchSize = 0, func = nd.zeros, {...kwargs}): one array per state_info entry,
  // named '<prefix>h0_<i>'.
  beginState(...args) {
    const { batchSize, func, kwargs } = bindBeginState(args, () => NS.nd.zeros);
    return this.stateInfo(batchSize).map((info, i) => callStateFunc(func, `${this.prefix}h0_${i}`, { ...info, ...kwargs }));
  }

  // layer(inputs, states = null, sequenceLength = null): without states, zeros are used and only
  // the output is returned; with states, [output, states].
  __call__(inputs, states = null, sequenceLength = null, ...rest) {
    this.skipStates = states === null || states === undefined;
    if (this.skipStates) {
      if (inputs instanceof NDArray) {
        const batch = inputs.shape[this._layout.indexOf('N')];
        states = this.beginState(batch, { ctx: inputs.context, dtype: inputs.dtype });
      } else {
        states = this.beginState(0, symZeros);
      }
    }
    if (isTensor(states)) states = [states];
    // the cached graph returns [out, states] or out: traced again when that changes
    if (this._cachedGraph && this._tracedSkip !== this.skipStates) this._clearCachedOp();
    if (this._useSequenceLength) return super.__call__(inputs, states, sequenceLength, ...rest);
    return super.__call__(inputs, states, ...rest);
  }
  _getGraph(...args) {
    if (!this._cachedGraph) this._tracedSkip = this.skipStates;
    return super._getGraph(...args);
  }

  hybridForward(F, inputs, states, sequenceLength = null, params) {
    if (!isSym(F)) {
      const batch = inputs.shape[this._layout.indexOf('N')];
      const infos = this.stateInfo(batch);
      states.forEach((s, i) => {
        if (i < infos.length && (s.shape.length !== infos[i].shape.length || s.shape.some((d, k) => d !== infos[i].shape[k]))) {
          throw new MXNetError(`Invalid recurrent state shape. Expecting ${pyTuple(infos[i].shape)}, got ${pyTuple(s.shape)}.`);
        }
      });
    }
    const out = this._forwardKernel(F, inputs, states, sequenceLength, params);
    return this.skipStates ? out[0] : out;
  }

  _forwardKernel(F, inputs, states, sequenceLength, params) {
    if (this._layout === 'NTC') inputs = F.swapaxes(inputs, { dim1: 0, dim2: 1 });
    const flat = [];
    const gs = this._projectionSize === null ? ['i2h', 'h2h'] : ['i2h', 'h2h', 'h2r'];
    for (const t of ['weight', 'bias']) {
      for (let l = 0; l < this._numLayers; l++) {
        for (const d of ['l', 'r'].slice(0, this._dir)) {
          for (const g of gs) {
            if (g === 'h2r' && t === 'bias') continue;
            flat.push(F.reshape(params[`${d}${l}_${g}_${t}`], { shape: -1 }));
          }
        }
      }
    }
    const packed = F._rnn_param_concat(...flat, { dim: 0 });
    const rnnArgs = this._useSequenceLength ? [...states, sequenceLength] : states;
    const rnn = F.RNN(inputs, packed, ...rnnArgs, {
      use_sequence_length: this._useSequenceLength, state_size: this._hiddenSize, projection_size: this._projectionSize,
      num_layers: this._numLayers, bidirectional: this._dir === 2, p: this._dropout, state_outputs: true, mode: this._mode,
      lstm_state_clip_min: this._lstmStateClipMin, lstm_state_clip_max: this._lstmStateClipMax,
      lstm_state_clip_nan: this._lstmStateClipNan,
    });
    let outputs = outAt(rnn, 0);
    const outStates = this._mode === 'lstm' ? [outAt(rnn, 1), outAt(rnn, 2)] : [outAt(rnn, 1)];
    if (this._layout === 'NTC') outputs = F.swapaxes(outputs, { dim1: 0, dim2: 1 });
    return [outputs, outStates];
  }
}
const layerState = (layer, batchSize, size) => ({
  shape: [layer._numLayers * layer._dir, batchSize, size], __layout__: 'LNC', dtype: layer._dtype,
});

export class RNN extends _RNNLayer {
  // RNN(hidden_size, num_layers = 1, activation = 'relu', layout = 'TNC', dropout = 0, bidirectional = false,
  //   i2h_weight_initializer = null, h2h_weight_initializer = null, i2h_bias_initializer = 'zeros',
  //   h2h_bias_initializer = 'zeros', input_size = 0, dtype = 'float32', {use_sequence_length, prefix, params})
  constructor(...args) {
    const a = bind('RNN', args);
    super(a, `rnn_${a.activation}`);
  }
  stateInfo(batchSize = 0) { return [layerState(this, batchSize, this._hiddenSize)]; }
}
export class LSTM extends _RNNLayer {
  // LSTM(hidden_size, num_layers = 1, layout = 'TNC', dropout = 0, bidirectional = false, input_size = 0,
  //   i2h_weight_initializer = null, h2h_weight_initializer = null, i2h_bias_initializer = 'zeros',
  //   h2h_bias_initializer = 'zeros', projection_size = null, h2r_weight_initializer = null,
  //   state_clip_min = null, state_clip_max = null, state_clip_nan = false, dtype = 'float32',
  //   {use_sequence_length, prefix, params})
  constructor(...args) { super(bind('LSTM', args), 'lstm'); }
  stateInfo(batchSize = 0) {
    return [layerState(this, batchSize, this._projectionSize ?? this._hiddenSize), layerState(this, batchSize, this._hiddenSize)];
  }
}
export class GRU extends _RNNLayer {
  // GRU(hidden_size, num_layers = 1, layout = 'TNC', dropout = 0, bidirectional = false, input_size = 0,
  //   i2h_weight_initializer = null, h2h_weight_initializer = null, i2h_bias_initializer = 'zeros',
  //   h2h_bias_initializer = 'zeros', dtype = 'float32', {use_sequence_length, prefix, params})
  constructor(...args) { super(bind('GRU', args), 'gru'); }
  stateInfo(batchSize = 0) { return [layerState(this, batchSize, this._hiddenSize)]; }
}
