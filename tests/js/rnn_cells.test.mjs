// gluon.rnn's cells (js/rnn.mjs) against a plain float64 JS recurrence written from MXNet's
// formulas (tests/js/rnn_ref.mjs) and TF.js's basicLSTMCell: one step and unroll (both layouts,
// merged or per-step outputs, tensor or list inputs), imperative and hybridized; stacks
// (Sequential / HybridSequential), BidirectionalCell, valid_length, the modifier cells (Dropout,
// Zoneout, Residual); MXNet's prefixes, parameter names, begin-state names and attributes, and the
// symbol graph an unrolled LSTMCell composes (hand-written from rnn_cell.py); gradients by finite
// differences.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, assertClose } from './oracle.mjs';
import { cellStep, refLayer, swap01, f64, randomArray, randomizeParams, checkBlockGrad } from './rnn_ref.mjs';

const { nd, sym, gluon, autograd } = mx;
const { rnn } = gluon;
const fresh = (fn) => mx.name.withNameManager(new mx.name.NameManager(), fn);
const TOL = { rtol: 1e-5, atol: 1e-5 };
const MODES = ['rnn_tanh', 'rnn_relu', 'lstm', 'gru'];

function makeCell(mode, H, o = {}) {
  if (mode === 'lstm') return new rnn.LSTMCell(H, o);
  if (mode === 'gru') return new rnn.GRUCell(H, o);
  return new rnn.RNNCell(H, mode.slice(4), o);
}
// A cell's parameters under the fused layer's names for refLayer: `${k}i2h_weight`, ...
function asLayerParams(cell, k, into = {}) {
  for (const g of ['i2h_weight', 'h2h_weight', 'i2h_bias', 'h2h_bias']) into[`${k}${g}`] = f64(cell[g].data());
  return into;
}
// The value of `states` as refLayer's (1, N, H) begin states.

// =================================================================================================
// one step
// =================================================================================================
test('one step of RNNCell (tanh, relu), LSTMCell, GRUCell vs the float64 formulas, imperative and hybridized', () => {
  const N = 3, I = 4, H = 5;
  let seed = 10;
  for (const mode of MODES) {
    const cell = makeCell(mode, H, { input_size: I });
    cell.initialize();
    randomizeParams(cell, seed);
    const x = randomArray([N, I], seed + 1);
    const states = cell.stateInfo(N).map((s, i) => randomArray(s.shape, seed + 2 + i));
    const w = { wx: f64(cell.i2h_weight.data()), wh: f64(cell.h2h_weight.data()), bx: f64(cell.i2h_bias.data()), bh: f64(cell.h2h_bias.data()) };
    const want = { h: new Float64Array(N * H), c: new Float64Array(N * H) };
    const xs = f64(x), hs = f64(states[0]), cs = mode === 'lstm' ? f64(states[1]) : null;
    for (let n = 0; n < N; n++) {
      const r = cellStep(mode, w, H, I, xs, n * I, hs.slice(n * H, (n + 1) * H), cs ? cs.slice(n * H, (n + 1) * H) : null);
      want.h.set(r.h, n * H);
      if (r.c) want.c.set(r.c, n * H);
    }
    for (const hybrid of [false, true]) {
      if (hybrid) cell.hybridize();
      const [out, next] = cell(x, states);
      const msg = `${mode} ${hybrid ? 'hybridized' : 'imperative'}`;
      assertClose(f64(out), want.h, { ...TOL, msg });
      assert.equal(next.length, mode === 'lstm' ? 2 : 1);
      assertClose(f64(next[0]), want.h, { ...TOL, msg: `${msg} h` });
      if (mode === 'lstm') assertClose(f64(next[1]), want.c, { ...TOL, msg: `${msg} c` });
    }
    seed += 10;
  }
});

test('LSTMCell unrolled vs TF.js basicLSTMCell (gate order i, f, g, o mapped to i, j, f, o)', () => {
  const T = 4, N = 2, I = 3, H = 4;
  const cell = new rnn.LSTMCell(H, { input_size: I });
  cell.initialize();
  randomizeParams(cell, 50);
  const x = randomArray([T, N, I], 51);
  const [outs] = cell.unroll(T, x, null, 'TNC', true);
  const wx = f64(cell.i2h_weight.data()), wh = f64(cell.h2h_weight.data()), bx = f64(cell.i2h_bias.data()), bh = f64(cell.h2h_bias.data());
  const G = 4 * H, kernel = new Float32Array((I + H) * G), bias = new Float32Array(G);
  [0, 2, 1, 3].forEach((src, dst) => {
    for (let u = 0; u < H; u++) {
      const row = src * H + u, col = dst * H + u;
      for (let i = 0; i < I; i++) kernel[i * G + col] = wx[row * I + i];
      for (let j = 0; j < H; j++) kernel[(I + j) * G + col] = wh[row * H + j];
      bias[col] = bx[row] + bh[row];
    }
  });
  const want = tf.tidy(() => {
    const K = tf.tensor2d(kernel, [I + H, G]), B = tf.tensor1d(bias), fb = tf.scalar(0);
    let c = tf.zeros([N, H]), h = tf.zeros([N, H]);
    const ys = [];
    const xv = f64(x);
    for (let t = 0; t < T; t++) {
      [c, h] = tf.basicLSTMCell(fb, K, B, tf.tensor2d(Array.from(xv.slice(t * N * I, (t + 1) * N * I)), [N, I]), c, h);
      ys.push(h);
    }
    return tf.stack(ys).dataSync();
  });
  assertClose(f64(outs), want, { ...TOL, msg: 'LSTMCell vs tf.basicLSTMCell' });
});

// =================================================================================================
// unroll: layouts, merge_outputs, list inputs, given states; imperative and hybridized
// =================================================================================================
// A HybridBlock running cell.unroll on its input (and begin states), so the unroll is traced.
class Unroller extends gluon.HybridBlock {
  constructor(cell, length, layout, merge, withValid = false) {
    super();
    this.cell = cell;
    Object.assign(this, { _length: length, _layout: layout, _merge: merge, _withValid: withValid });
  }
  hybridForward(F, x, ...rest) {
    rest.pop();
    const validLength = this._withValid ? rest.pop() : null;
    const begin = rest.length ? rest : null;
    const [outs, states] = this.cell.unroll(this._length, x, begin, this._layout, this._merge, validLength);
    return [outs, states];
  }
}

test('unroll: TNC/NTC, merged and per-step outputs, list inputs, given begin states; imperative and hybridized', () => {
  const T = 3, N = 2, I = 4, H = 3;
  let seed = 100;
  for (const mode of MODES) {
    for (const layout of ['TNC', 'NTC']) {
      const cell = makeCell(mode, H, { input_size: I });
      cell.initialize();
      randomizeParams(cell, seed);
      const x = randomArray(layout === 'TNC' ? [T, N, I] : [N, T, I], seed + 1);
      const begin = cell.stateInfo(N).map((s, i) => randomArray(s.shape, seed + 2 + i));
      const xT = layout === 'TNC' ? f64(x) : swap01(f64(x), [N, T, I]);
      const want = refLayer({ mode, L: 1, D: 1, H }, xT, [T, N, I], asLayerParams(cell, 'l0_'), f64(begin[0]),
        mode === 'lstm' ? f64(begin[1]) : null);
      const wantOut = layout === 'TNC' ? want.out : swap01(want.out, [T, N, H]);
      const msg = `${mode} ${layout}`;
      // merged
      const [outs, states] = cell.unroll(T, x, begin, layout, true);
      assert.deepEqual(outs.shape, layout === 'TNC' ? [T, N, H] : [N, T, H]);
      assertClose(f64(outs), wantOut, { ...TOL, msg: `${msg} merged` });
      assertClose(f64(states[0]), want.h, { ...TOL, msg: `${msg} h` });
      if (mode === 'lstm') assertClose(f64(states[1]), want.c, { ...TOL, msg: `${msg} c` });
      // per step (merge false and null give the list)
      for (const merge of [false, null]) {
        const [list] = cell.unroll(T, x, begin, layout, merge);
        assert.ok(Array.isArray(list) && list.length === T, `${msg} merge=${merge}: a list of ${T} steps`);
        list.forEach((o, t) => assertClose(f64(o), want.out.slice(t * N * H, (t + 1) * N * H), { ...TOL, msg: `${msg} step ${t}` }));
      }
      // a list of (N, I) steps as inputs
      const steps = nd.split(x, { axis: layout.indexOf('T'), num_outputs: T, squeeze_axis: true });
      const [fromList] = cell.unroll({ length: T, inputs: steps, begin_state: begin, layout, mergeOutputs: true });
      assertClose(f64(fromList), wantOut, { ...TOL, msg: `${msg} list inputs` });
      // hybridized inside a block
      const net = new Unroller(cell, T, layout, true);
      net.hybridize();
      const [hy, hyStates] = net(x, ...begin);
      assertClose(f64(hy), wantOut, { ...TOL, msg: `${msg} hybridized` });
      assertClose(f64(hyStates[0]), want.h, { ...TOL, msg: `${msg} hybridized h` });
      seed += 10;
    }
  }
});

test('RNNCell activations: softsign (its op), softrelu (through Activation), a LeakyReLU block and a function', () => {
  const N = 2, I = 3, H = 4;
  const cases = [
    ['softsign', (v) => v / (1 + Math.abs(v))],
    ['softrelu', (v) => Math.log1p(Math.exp(v))],
    [new gluon.nn.LeakyReLU(0.1), (v) => (v > 0 ? v : 0.1 * v)],
    [(x, kw) => mx.nd.square(x, kw), (v) => v * v],
  ];
  for (const [act, f] of cases) {
    const cell = new rnn.RNNCell(H, act, { input_size: I });
    cell.initialize();
    randomizeParams(cell, 200);
    const x = randomArray([N, I], 201), h = randomArray([N, H], 202);
    const [out] = cell(x, [h]);
    // f(W_x x + b_x + W_h h + b_h) per row
    const wx = f64(cell.i2h_weight.data()), wh = f64(cell.h2h_weight.data()), bx = f64(cell.i2h_bias.data()), bh = f64(cell.h2h_bias.data());
    const xv = f64(x), hv = f64(h), want = [];
    for (let n = 0; n < N; n++) {
      for (let j = 0; j < H; j++) {
        let s = bx[j] + bh[j];
        for (let i = 0; i < I; i++) s += wx[j * I + i] * xv[n * I + i];
        for (let k = 0; k < H; k++) s += wh[j * H + k] * hv[n * H + k];
        want.push(f(s));
      }
    }
    assertClose(f64(out), want, { ...TOL, msg: `activation ${typeof act === 'string' ? act : act.constructor.name}` });
  }
});

// =================================================================================================
// stacks and bidirectional
// =================================================================================================
test('SequentialRNNCell / HybridSequentialRNNCell: stepping and unroll match layer-by-layer recurrences', () => {
  const T = 3, N = 2, I = 3, H = 4;
  for (const Seq of [rnn.SequentialRNNCell, rnn.HybridSequentialRNNCell]) {
    const seq = new Seq();
    seq.nameScope(() => {
      seq.add(new rnn.LSTMCell(H, { input_size: I }));
      seq.add(new rnn.GRUCell(H, { input_size: H }));
    });
    seq.initialize();
    randomizeParams(seq, 300);
    assert.equal(seq.length, 2);
    assert.ok(seq.get(0) instanceof rnn.LSTMCell && seq[1] instanceof rnn.GRUCell);
    assert.deepEqual(seq.stateInfo(N).map((s) => s.shape), [[N, H], [N, H], [N, H]]);
    const x = randomArray([N, T, I], 301);
    const xT = swap01(f64(x), [N, T, I]);
    const l1 = refLayer({ mode: 'lstm', L: 1, D: 1, H }, xT, [T, N, I], asLayerParams(seq.get(0), 'l0_'), new Float64Array(N * H), new Float64Array(N * H));
    const l2 = refLayer({ mode: 'gru', L: 1, D: 1, H }, l1.out, [T, N, H], asLayerParams(seq.get(1), 'l0_'), new Float64Array(N * H));
    const [outs, states] = seq.unroll(T, x, null, 'NTC', true);
    assertClose(f64(outs), swap01(l2.out, [T, N, H]), { ...TOL, msg: `${Seq.name} unroll` });
    assert.equal(states.length, 3);
    assertClose(f64(states[1]), l1.c, { ...TOL, msg: `${Seq.name} lstm c` });
    assertClose(f64(states[2]), l2.h, { ...TOL, msg: `${Seq.name} gru h` });
    // stepping by hand
    let st = seq.beginState(N);
    const steps = nd.split(x, { axis: 1, num_outputs: T, squeeze_axis: true });
    for (let t = 0; t < T; t++) {
      let o;
      [o, st] = seq(steps[t], st);
      assertClose(f64(o), l2.out.slice(t * N * H, (t + 1) * N * H), { ...TOL, msg: `${Seq.name} step ${t}` });
    }
    seq.hybridize();
    const [hy] = seq.unroll(T, x, null, 'NTC', true);
    assertClose(f64(hy), swap01(l2.out, [T, N, H]), { ...TOL, msg: `${Seq.name} hybridized children` });
  }
});

test('BidirectionalCell: forward and reversed cells joined (merged and per step), stepping refused', () => {
  const T = 4, N = 2, I = 3, H = 2;
  for (const mode of ['lstm', 'gru']) {
    const bi = new rnn.BidirectionalCell(makeCell(mode, H, { input_size: I }), makeCell(mode, H, { input_size: I }));
    bi.initialize();
    randomizeParams(bi, 400);
    const [l, r] = bi._children.values();
    const x = randomArray([T, N, I], 401);
    const p = asLayerParams(r, 'r0_', asLayerParams(l, 'l0_'));
    const zeros = new Float64Array(2 * N * H);
    const want = refLayer({ mode, L: 1, D: 2, H }, f64(x), [T, N, I], p, zeros, mode === 'lstm' ? zeros : null);
    const [outs, states] = bi.unroll(T, x, null, 'TNC', true);
    assertClose(f64(outs), want.out, { ...TOL, msg: `${mode} merged` });
    assert.equal(states.length, mode === 'lstm' ? 4 : 2);
    // states: l's then r's; refLayer's h is (dir, N, H)
    assertClose(f64(states[0]), want.h.slice(0, N * H), { ...TOL, msg: `${mode} l h` });
    assertClose(f64(states[mode === 'lstm' ? 2 : 1]), want.h.slice(N * H), { ...TOL, msg: `${mode} r h` });
    const [list] = bi.unroll(T, x, null, 'TNC', false);
    list.forEach((o, t) => assertClose(f64(o), want.out.slice(t * N * 2 * H, (t + 1) * N * 2 * H), { ...TOL, msg: `${mode} step ${t}` }));
    assert.throws(() => bi(x.get(0), bi.beginState(N)), (e) => e instanceof mx.MXNetError && /cannot be stepped/.test(e.message));
  }
});

// =================================================================================================
// valid_length
// =================================================================================================
test('unroll with valid_length: outputs masked past each length, states from each sequence\'s last step (uni- and bidirectional)', () => {
  const T = 4, N = 3, I = 2, H = 3, lens = [4, 1, 2];
  for (const mode of ['lstm', 'rnn_tanh']) {
    const cell = makeCell(mode, H, { input_size: I });
    const bi = new rnn.BidirectionalCell(makeCell(mode, H, { input_size: I }), makeCell(mode, H, { input_size: I }));
    for (const c of [cell, bi]) { c.initialize(); randomizeParams(c, 500); }
    const x = randomArray([N, T, I], 501);
    const xT = swap01(f64(x), [N, T, I]);
    const vl = nd.array(lens);
    const z = (k) => new Float64Array(k * N * H);
    const w1 = refLayer({ mode, L: 1, D: 1, H }, xT, [T, N, I], asLayerParams(cell, 'l0_'), z(1), mode === 'lstm' ? z(1) : null, lens);
    for (const hybrid of [false, true]) {
      let outs, states;
      if (hybrid) {
        const net = new Unroller(cell, T, 'NTC', true, true);
        net.hybridize();
        [outs, states] = net(x, vl);
      } else {
        [outs, states] = cell.unroll(T, x, null, 'NTC', true, vl);
      }
      const msg = `${mode} ${hybrid ? 'hybridized' : 'imperative'}`;
      assertClose(f64(outs), swap01(w1.out, [T, N, H]), { ...TOL, msg: `${msg} outputs` });
      assertClose(f64(states[0]), w1.h, { ...TOL, msg: `${msg} last h` });
      if (mode === 'lstm') assertClose(f64(states[1]), w1.c, { ...TOL, msg: `${msg} last c` });
    }
    const [l, r] = bi._children.values();
    const w2 = refLayer({ mode, L: 1, D: 2, H }, xT, [T, N, I], asLayerParams(r, 'r0_', asLayerParams(l, 'l0_')), z(2), mode === 'lstm' ? z(2) : null, lens);
    const [bo, bs] = bi.unroll(T, x, null, 'NTC', true, vl);
    assertClose(f64(bo), swap01(w2.out, [T, N, 2 * H]), { ...TOL, msg: `${mode} bidirectional outputs` });
    assertClose(f64(bs[mode === 'lstm' ? 2 : 1]), w2.h.slice(N * H), { ...TOL, msg: `${mode} bidirectional reverse h` });
  }
});

// =================================================================================================
// modifier cells
// =================================================================================================
test('DropoutCell: identity at inference, inverted dropout when training; unroll of a tensor returns it directly', () => {
  const d = new rnn.DropoutCell(0.5);
  assert.deepEqual(d.stateInfo(3), []);
  assert.equal(String(d), 'DropoutCell(rate=0.5, axes=())');
  const x = randomArray([2, 3, 4], 600);
  const [y, st] = d.unroll(3, x, null, 'NTC', true);
  assert.deepEqual(f64(y), f64(x));
  assert.deepEqual(st, []);
  const [train] = autograd.record(() => d(x.get(0), []));
  const xv = f64(x.get(0)), tv = f64(train);
  assert.ok(tv.every((v, i) => v === 0 || Math.abs(v - 2 * xv[i]) < 1e-6), 'each element dropped or scaled by 1 / (1 - p)');
  assert.ok(tv.some((v) => v === 0) && tv.some((v) => v !== 0));
});

test('ZoneoutCell: the base cell at inference; when training each output element is the new one or the previous output', () => {
  const T = 5, N = 2, I = 3, H = 8;
  const base = new rnn.GRUCell(H, { input_size: I });
  const z = new rnn.ZoneoutCell(base, 0.5);
  z.initialize();
  randomizeParams(z, 700);
  assert.equal(z.params, base.params);
  assert.throws(() => base.beginState(N), (e) => e instanceof mx.MXNetError && /modifier cell/.test(e.message));
  const x = randomArray([N, T, I], 701);
  const ref = refLayer({ mode: 'gru', L: 1, D: 1, H }, swap01(f64(x), [N, T, I]), [T, N, I], asLayerParams(base, 'l0_'), new Float64Array(N * H));
  const [inf] = z.unroll(T, x, null, 'NTC', false);
  inf.forEach((o, t) => assertClose(f64(o), ref.out.slice(t * N * H, (t + 1) * N * H), { ...TOL, msg: `inference step ${t}` }));
  mx.random.seed(3);
  const [tr] = autograd.record(() => z.unroll(T, x, null, 'NTC', false));
  let prev = new Float64Array(N * H), kept = 0, zoned = 0;
  tr.forEach((o, t) => {
    const v = f64(o), fresh_ = ref.out.slice(t * N * H, (t + 1) * N * H);
    v.forEach((e, i) => {
      if (Math.abs(e - fresh_[i]) < 1e-5) kept++;
      else if (Math.abs(e - prev[i]) < 1e-5) zoned++;
      else assert.fail(`step ${t} element ${i}: ${e} is neither the new output ${fresh_[i]} nor the previous ${prev[i]}`);
    });
    prev = v;
  });
  assert.ok(kept > 0 && zoned > 0, `some outputs kept (${kept}), some zoned out (${zoned})`);
});

test('ResidualCell: the base cell\'s output plus its input (step and unroll, merged or not)', () => {
  const T = 3, N = 2, H = 4;
  const base = new rnn.LSTMCell(H, { input_size: H });
  const res = new rnn.ResidualCell(base);
  res.initialize();
  randomizeParams(res, 800);
  const x = randomArray([T, N, H], 801);
  const ref = refLayer({ mode: 'lstm', L: 1, D: 1, H }, f64(x), [T, N, H], asLayerParams(base, 'l0_'), new Float64Array(N * H), new Float64Array(N * H));
  const want = ref.out.map((v, i) => v + f64(x)[i]);
  for (const merge of [true, false]) {
    const [outs, states] = res.unroll(T, x, null, 'TNC', merge);
    const flat = merge ? f64(outs) : Float64Array.from(outs.flatMap((o) => Array.from(f64(o))));
    assertClose(flat, want, { ...TOL, msg: `merge=${merge}` });
    assertClose(f64(states[1]), ref.c, { ...TOL, msg: 'c' });
  }
  const [o0] = res(x.get(0), res.beginState(nd.zeros, { batchSize: N }));
  assertClose(f64(o0), want.slice(0, N * H), { ...TOL, msg: 'one step' });
});

// =================================================================================================
// names, attributes, graphs
// =================================================================================================
test('prefixes, parameter names, begin-state names and attributes as MXNet', () => {
  fresh(() => {
    const c = new rnn.LSTMCell(3);
    assert.equal(c.prefix, 'lstm0_');
    assert.deepEqual([...c.collectParams().keys()], ['lstm0_i2h_weight', 'lstm0_h2h_weight', 'lstm0_i2h_bias', 'lstm0_h2h_bias']);
    assert.deepEqual(c.i2h_weight.shape, [12, 0]);
    assert.equal(String(c), 'LSTMCell(None -> 12)');
    assert.equal(new rnn.RNNCell(2).prefix, 'rnn0_');
    assert.equal(String(new rnn.RNNCell(2, 'relu', { input_size: 5 })), 'RNNCell(5 -> 2, relu)');
    assert.equal(new rnn.GRUCell(2).prefix, 'gru0_');
    assert.equal(new rnn.DropoutCell(0.1).prefix, 'dropout0_');
    const seq = new rnn.HybridSequentialRNNCell();
    seq.nameScope(() => { seq.add(new rnn.LSTMCell(3)); seq.add(new rnn.LSTMCell(3)); });
    assert.deepEqual([...seq.collectParams().keys()].filter((k) => k.endsWith('i2h_weight')),
      ['hybridsequentialrnncell0_lstm0_i2h_weight', 'hybridsequentialrnncell0_lstm1_i2h_weight']);
    assert.equal(new rnn.SequentialRNNCell().prefix, 'sequentialrnncell0_');
    const g = new rnn.GRUCell(2);
    assert.equal(new rnn.ZoneoutCell(g, 0.5).prefix, 'gru1_zoneout');
    assert.equal(new rnn.ResidualCell(new rnn.GRUCell(2)).prefix, 'gru2_residualcell');
    assert.throws(() => new rnn.ResidualCell(g), (e) => e instanceof mx.MXNetError && /already modified/.test(e.message));
    const bi = new rnn.BidirectionalCell(new rnn.LSTMCell(2), new rnn.LSTMCell(2));
    assert.equal(bi.prefix, '');
    assert.ok(bi instanceof rnn.RecurrentCell && bi instanceof rnn.HybridRecurrentCell && bi instanceof gluon.HybridBlock);
    assert.ok(new rnn.SequentialRNNCell() instanceof rnn.RecurrentCell && !(new rnn.SequentialRNNCell() instanceof rnn.HybridRecurrentCell));
    // begin states: '<prefix>begin_state_<k>', the counter running on until reset()
    const s1 = c.beginState(2, sym.var);
    const s2 = c.beginState({ batch_size: 2, func: sym.var });
    assert.deepEqual([...s1, ...s2].map((s) => s.name), ['lstm0_begin_state_0', 'lstm0_begin_state_1', 'lstm0_begin_state_2', 'lstm0_begin_state_3']);
    assert.deepEqual(s1[0].listAttr(), { __shape__: '(2, 3)', __layout__: 'NC' });
    c.reset();
    assert.equal(c.beginState(0, sym.var)[0].name, 'lstm0_begin_state_0');
    assert.deepEqual(c.stateInfo(4), [{ shape: [4, 3], __layout__: 'NC' }, { shape: [4, 3], __layout__: 'NC' }]);
    const z = c.beginState(2, { dtype: 'float64' });
    assert.equal(z[0].dtype, 'float64');
    assert.deepEqual(z[0].shape, [2, 3]);
    // a modifier cell's default begin-state function is symbol.zeros (Python's)
    const zo = new rnn.ZoneoutCell(new rnn.RNNCell(2), 0.1, 0.2);
    assert.ok(zo.beginState({ batchSize: 1 })[0] instanceof mx.Symbol);
    assert.equal(String(zo), 'ZoneoutCell(p_out=0.1, p_state=0.2, RNNCell(None -> 2, tanh))');
  });
});

// rnn_cell.py's LSTMCell.unroll on a Symbol (layout NTC, merge_outputs=True): split0 of the input,
// the begin states symbol.zeros(name='<prefix>begin_state_<k>', shape=(0, H), __layout__='NC'),
// per step t the nodes <prefix>t<t>_i2h ... <prefix>t<t>_out, and stack0 of the step outputs.
test('the symbol graph of an unrolled LSTMCell: MXNet\'s node names, ops, attributes and wiring', () => {
  fresh(() => {
    const cell = new rnn.LSTMCell(3, { prefix: 'lstm_' });
    const [outs, states] = cell.unroll(2, sym.var('data'), null, 'NTC', true);
    const g = JSON.parse(sym.Group([outs, ...states]).tojson());
    const nodes = Object.fromEntries(g.nodes.map((n) => [n.name, n]));
    const ins = (name) => nodes[name].inputs.map(([k, i]) => `${g.nodes[k].name}:${i}`);
    const ops = Object.fromEntries(g.nodes.filter((n) => n.op !== 'null').map((n) => [n.name, [n.op, n.attrs ?? {}]]));
    const step = (t) => ({
      [`lstm_t${t}_i2h`]: ['FullyConnected', { num_hidden: '12' }], [`lstm_t${t}_h2h`]: ['FullyConnected', { num_hidden: '12' }],
      [`lstm_t${t}_plus0`]: ['elemwise_add', {}], [`lstm_t${t}_slice`]: ['SliceChannel', { num_outputs: '4' }],
      [`lstm_t${t}_i`]: ['sigmoid', {}], [`lstm_t${t}_f`]: ['sigmoid', {}], [`lstm_t${t}_c`]: ['tanh', {}], [`lstm_t${t}_o`]: ['sigmoid', {}],
      [`lstm_t${t}_mul0`]: ['elemwise_mul', {}], [`lstm_t${t}_mul1`]: ['elemwise_mul', {}], [`lstm_t${t}_state`]: ['elemwise_add', {}],
      [`lstm_t${t}_activation0`]: ['Activation', { act_type: 'tanh' }], [`lstm_t${t}_out`]: ['elemwise_mul', {}],
    });
    const zeros = ['_zeros', { __layout__: 'NC', dtype: 'float32', shape: '(0, 3)' }];
    assert.deepEqual(ops, {
      split0: ['SliceChannel', { axis: '1', num_outputs: '2', squeeze_axis: '1' }],
      lstm_begin_state_0: zeros, lstm_begin_state_1: zeros, ...step(0), ...step(1),
      stack0: ['stack', { axis: '1', num_args: '2' }],
    });
    assert.deepEqual(g.nodes.filter((n) => n.op === 'null').map((n) => n.name).sort(),
      ['data', 'lstm_h2h_bias', 'lstm_h2h_weight', 'lstm_i2h_bias', 'lstm_i2h_weight']);
    assert.deepEqual(ins('lstm_t0_i2h'), ['split0:0', 'lstm_i2h_weight:0', 'lstm_i2h_bias:0']);
    assert.deepEqual(ins('lstm_t0_h2h'), ['lstm_begin_state_0:0', 'lstm_h2h_weight:0', 'lstm_h2h_bias:0']);
    assert.deepEqual(ins('lstm_t1_i2h'), ['split0:1', 'lstm_i2h_weight:0', 'lstm_i2h_bias:0']);
    assert.deepEqual(ins('lstm_t1_h2h'), ['lstm_t0_out:0', 'lstm_h2h_weight:0', 'lstm_h2h_bias:0']);
    assert.deepEqual(ins('lstm_t1_f'), ['lstm_t1_slice:1']);
    assert.deepEqual(ins('lstm_t1_c'), ['lstm_t1_slice:2']);
    assert.deepEqual(ins('lstm_t1_mul0'), ['lstm_t1_f:0', 'lstm_t0_state:0']);
    assert.deepEqual(ins('lstm_t1_out'), ['lstm_t1_o:0', 'lstm_t1_activation0:0']);
    assert.deepEqual(ins('stack0'), ['lstm_t0_out:0', 'lstm_t1_out:0']);
    assert.deepEqual(g.heads.map(([k, i]) => `${g.nodes[k].name}:${i}`), ['stack0:0', 'lstm_t1_out:0', 'lstm_t1_state:0']);
    // GRUCell's step nodes (rnn_cell.py's GRUCell.hybrid_forward names)
    const gru = new rnn.GRUCell(2, { prefix: 'gru_' });
    const [go] = gru.unroll(1, [sym.var('x')], null, 'NTC', false);
    const gg = JSON.parse(go[0].tojson());
    assert.deepEqual(gg.nodes.filter((n) => n.op !== 'null').map((n) => `${n.op} ${n.name}`).sort(), [
      'Activation gru_t0_h_act', 'Activation gru_t0_r_act', 'Activation gru_t0_z_act', 'FullyConnected gru_t0_h2h',
      'FullyConnected gru_t0_i2h', 'SliceChannel gru_t0_h2h_slice', 'SliceChannel gru_t0_i2h_slice', '_zeros gru_begin_state_0',
      'elemwise_add gru_t0_out', 'elemwise_add gru_t0_plus0', 'elemwise_add gru_t0_plus1', 'elemwise_add gru_t0_plus2',
      'elemwise_mul gru_t0_mul0', 'elemwise_mul gru_t0_mul1', 'elemwise_mul gru_t0_mul20', 'elemwise_sub gru_t0_minus0',
      'ones_like gru_t0_ones_like0']);
  });
});

test('a hybridized block around cell.unroll exports MXNet\'s names and re-imports to the same values', async () => {
  let net;
  fresh(() => {
    class Tagger extends gluon.HybridBlock {
      constructor() {
        super();
        this.nameScope(() => {
          this.cell = new rnn.BidirectionalCell(new rnn.GRUCell(3), new rnn.GRUCell(3));
          this.out = new gluon.nn.Dense(2, { flatten: false });
        });
      }
      hybridForward(F, x) {
        const [outs] = this.cell.unroll(4, x, null, 'NTC', true);
        return this.out(outs);
      }
    }
    net = new Tagger();
  });
  net.initialize();
  const x = randomArray([2, 4, 3], 900);
  net(x);
  randomizeParams(net, 901);
  const eager = net(x);
  net.hybridize();
  const hy = net(x);
  assertClose(f64(hy), f64(eager), { rtol: 1e-6, atol: 1e-6, msg: 'hybridized vs imperative' });
  const { symbol, params } = net.exportBytes();
  const names = JSON.parse(symbol).nodes.map((n) => n.name);
  // begin states are named '<cell prefix>begin_state_<k>' explicitly, and the enclosing name scope
  // (the block's) prefixes explicit names too (MXNet's Prefix.get): tagger0_ twice
  for (const n of ['tagger0_gru0_t0_i2h', 'tagger0_gru1_t3_out', 'tagger0_bi_out', 'tagger0_tagger0_gru0_begin_state_0',
    'tagger0_split0', 'tagger0_stack1', 'tagger0_gru0_i2h_weight', 'tagger0_dense0_fwd']) assert.ok(names.includes(n), `node ${n} in ${names.join(' ')}`);
  const back = await gluon.SymbolBlock.imports(new TextEncoder().encode(symbol), ['data'], params);
  assertClose(f64(back(x)), f64(eager), { rtol: 1e-6, atol: 1e-6, msg: 're-imported' });
});

// =================================================================================================
// gradients
// =================================================================================================
test('gradients through unrolled cells (inputs, begin states, parameters) pass the finite-difference check', () => {
  const T = 3, N = 2, I = 2, H = 2;
  for (const mode of MODES) {
    for (const hybrid of [false, true]) {
      const cell = makeCell(mode, H, { input_size: I });
      cell.initialize();
      cell.cast('float64');
      randomizeParams(cell, 1000);
      const net = new Unroller(cell, T, 'NTC', true);
      if (hybrid) net.hybridize();
      const x = randomArray([N, T, I], 1001, 'float64', -1.5, 1.5);
      const begin = cell.stateInfo(N).map((s, i) => randomArray(s.shape, 1002 + i, 'float64'));
      checkBlockGrad(net, (xx, ...st) => net(xx, ...st), [x, ...begin], { msg: `${mode} ${hybrid ? 'hybridized' : 'imperative'}` });
    }
  }
  // bidirectional with valid_length (SequenceReverse, SequenceMask, SequenceLast on the path)
  const bi = new rnn.BidirectionalCell(new rnn.LSTMCell(H, { input_size: I }), new rnn.LSTMCell(H, { input_size: I }));
  bi.initialize();
  bi.cast('float64');
  randomizeParams(bi, 1100);
  const net = new Unroller(bi, T, 'TNC', true, true);
  const vl = nd.array([3, 2], { dtype: 'float64' });
  // float64 begin states given: the default ones are float32 zeros (as MXNet's F.zeros)
  const begin = bi.stateInfo(N).map((s) => nd.zeros(s.shape, { dtype: 'float64' }));
  checkBlockGrad(net, (xx) => net(xx, ...begin, vl), [randomArray([T, N, I], 1101, 'float64')], { msg: 'bidirectional valid_length' });
});
