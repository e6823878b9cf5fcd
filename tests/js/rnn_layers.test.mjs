// gluon.rnn's fused layers RNN, LSTM, GRU (js/rnn.mjs) against a plain float64 JS recurrence
// written from MXNet's formulas (tests/js/rnn_ref.mjs) and TF.js's basicLSTMCell: 1 and 2 layers,
// bidirectional, both layouts, with and without states, imperative and hybridized, fused and
// unrolled (the equivalent cells with the layer's parameters); parameter names, shapes and file
// names; the exported graph of a small LSTM as MXNet 1.9.1's rnn_layer.py builds it; gradients by
// finite differences; argument binding and errors.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, assertClose } from './oracle.mjs';
import { refLayer, swap01, f64, paramValues, randomArray, randomizeParams, checkBlockGrad, GATES } from './rnn_ref.mjs';
import { checkGrad } from './grad_check.mjs';

const { nd, sym, gluon, autograd } = mx;
const { rnn } = gluon;
const fresh = (fn) => mx.name.withNameManager(new mx.name.NameManager(), fn);
const TOL = { rtol: 1e-5, atol: 1e-5 };
const LAYERS = { rnn_tanh: rnn.RNN, rnn_relu: rnn.RNN, lstm: rnn.LSTM, gru: rnn.GRU };

function makeLayer(mode, H, o = {}) {
  const extra = mode.startsWith('rnn_') ? { activation: mode.slice(4) } : {};
  return new LAYERS[mode](H, { ...extra, ...o });
}

// Runs the layer on x with random begin states and compares output and states with refLayer.
function checkLayer(layer, { mode, L, D, H, P = null, clip = null }, [T, N, I], layout, seed, msg) {
  const Ho = P ?? H;
  const shapeTNC = [T, N, I];
  const x = randomArray(layout === 'TNC' ? shapeTNC : [N, T, I], seed, layer._dtype);
  const h0 = randomArray([L * D, N, Ho], seed + 1, layer._dtype);
  const c0 = randomArray([L * D, N, H], seed + 2, layer._dtype);
  const states = mode === 'lstm' ? [h0, c0] : [h0];
  const [out, st] = layer(x, states);
  const xTNC = layout === 'TNC' ? f64(x) : swap01(f64(x), [N, T, I]);
  const want = refLayer({ mode, L, D, H, P, clip }, xTNC, shapeTNC, paramValues(layer), f64(h0), mode === 'lstm' ? f64(c0) : null);
  const wantOut = layout === 'TNC' ? want.out : swap01(want.out, [T, N, D * Ho]);
  assert.deepEqual(out.shape, layout === 'TNC' ? [T, N, D * Ho] : [N, T, D * Ho], `${msg} output shape`);
  assertClose(f64(out), wantOut, { ...TOL, msg: `${msg} output` });
  assert.equal(st.length, mode === 'lstm' ? 2 : 1, `${msg} number of states`);
  assert.deepEqual(st[0].shape, [L * D, N, Ho]);
  assertClose(f64(st[0]), want.h, { ...TOL, msg: `${msg} h` });
  if (mode === 'lstm') assertClose(f64(st[1]), want.c, { ...TOL, msg: `${msg} c` });
  // without states: zeros, and only the output comes back
  const out0 = layer(x);
  assert.ok(out0 instanceof mx.NDArray, `${msg}: no states given -> the output alone`);
  const z = refLayer({ mode, L, D, H, P, clip }, xTNC, shapeTNC, paramValues(layer), new Float64Array(L * D * N * Ho),
    mode === 'lstm' ? new Float64Array(L * D * N * H) : null);
  assertClose(f64(out0), layout === 'TNC' ? z.out : swap01(z.out, [T, N, D * Ho]), { ...TOL, msg: `${msg} output (zero states)` });
  return { x, states, out, st };
}

// =================================================================================================
// every mode, 1 and 2 layers, uni/bidirectional, both layouts; imperative then hybridized
// =================================================================================================
for (const mode of ['rnn_tanh', 'rnn_relu', 'lstm', 'gru']) {
  test(`${mode} layer: 1/2 layers x uni/bidirectional x TNC/NTC vs the float64 recurrence, imperative and hybridized`, () => {
    let seed = 100;
    for (const L of [1, 2]) {
      for (const D of [1, 2]) {
        for (const layout of ['TNC', 'NTC']) {
          const H = 5, dims = [3, 2, 4];
          const layer = makeLayer(mode, H, { num_layers: L, bidirectional: D === 2, layout });
          layer.initialize();
          layer(randomArray(layout === 'TNC' ? dims : [dims[1], dims[0], dims[2]], 1)); // deferred init: input size 4
          assert.deepEqual(layer.l0_i2h_weight.shape, [GATES[mode] * H, 4]);
          randomizeParams(layer, seed);
          const cfg = { mode, L, D, H };
          const msg = `${mode} L=${L} D=${D} ${layout}`;
          const a = checkLayer(layer, cfg, dims, layout, seed + 50, `${msg} imperative`);
          layer.hybridize();
          const b = checkLayer(layer, cfg, dims, layout, seed + 50, `${msg} hybridized`);
          assertClose(f64(b.out), f64(a.out), { rtol: 1e-6, atol: 1e-6, msg: `${msg} modes agree` });
          seed += 10;
        }
      }
    }
  });
}

test('LSTM layer (bidirectional, 2 layers) against TF.js basicLSTMCell with the gate order mapped', () => {
  const T = 4, N = 2, I = 3, H = 4;
  const layer = new rnn.LSTM(H, 2, 'TNC', 0, true, I);
  layer.initialize();
  randomizeParams(layer, 300);
  const x = randomArray([T, N, I], 310);
  const out = layer(x);
  const P = paramValues(layer);
  // TF's basicLSTMCell: concat(x, h) x kernel + bias, gates i, j (MXNet's g), f, o; forget bias 0
  const tfDir = (xs, In, k, reverse) => {
    const G = 4 * H, wx = P[`${k}i2h_weight`], wh = P[`${k}h2h_weight`], bx = P[`${k}i2h_bias`], bh = P[`${k}h2h_bias`];
    const kernel = new Float32Array((In + H) * G), bias = new Float32Array(G);
    [0, 2, 1, 3].forEach((src, dst) => {
      for (let u = 0; u < H; u++) {
        const row = src * H + u, col = dst * H + u;
        for (let i = 0; i < In; i++) kernel[i * G + col] = wx[row * In + i];
        for (let j = 0; j < H; j++) kernel[(In + j) * G + col] = wh[row * H + j];
        bias[col] = bx[row] + bh[row];
      }
    });
    return tf.tidy(() => {
      const K = tf.tensor2d(kernel, [In + H, G]), B = tf.tensor1d(bias), fb = tf.scalar(0);
      let c = tf.zeros([N, H]), h = tf.zeros([N, H]);
      const ys = new Array(T);
      for (let s = 0; s < T; s++) {
        const t = reverse ? T - 1 - s : s;
        [c, h] = tf.basicLSTMCell(fb, K, B, xs[t], c, h);
        ys[t] = h;
      }
      return ys.map((y) => tf.keep(y));
    });
  };
  let xs = Array.from({ length: T }, (_, t) => tf.tensor2d(Array.from(f64(x).slice(t * N * I, (t + 1) * N * I)), [N, I]));
  let In = I;
  for (let l = 0; l < 2; l++) {
    const fw = tfDir(xs, In, `l${l}_`, false), bw = tfDir(xs, In, `r${l}_`, true);
    xs = fw.map((f, t) => tf.concat([f, bw[t]], 1));
    In = 2 * H;
  }
  const want = tf.stack(xs).dataSync();
  assertClose(f64(out), want, { ...TOL, msg: 'LSTM vs tf.basicLSTMCell' });
});

test('LSTM with projection_size and state clipping vs the float64 recurrence', () => {
  const H = 5, P = 3, dims = [4, 2, 3];
  for (const D of [1, 2]) {
    const layer = new rnn.LSTM(H, { num_layers: 2, bidirectional: D === 2, projection_size: P, state_clip_min: -0.3, state_clip_max: 0.4, input_size: 3 });
    assert.deepEqual(layer.l0_h2h_weight.shape, [4 * H, P]);
    assert.deepEqual(layer.l0_h2r_weight.shape, [P, H]);
    assert.deepEqual(layer.l1_i2h_weight.shape, [4 * H, P * D]);
    assert.deepEqual(layer.stateInfo(2).map((s) => s.shape), [[2 * D, 2, P], [2 * D, 2, H]]);
    layer.initialize();
    randomizeParams(layer, 400 + D, 1.5);
    checkLayer(layer, { mode: 'lstm', L: 2, D, H, P, clip: [-0.3, 0.4] }, dims, 'TNC', 410, `projection D=${D}`);
  }
});

test('use_sequence_length: variable lengths through the fused op, imperative and hybridized', () => {
  const H = 3, T = 4, N = 3, I = 2;
  for (const mode of ['lstm', 'gru']) {
    const layer = makeLayer(mode, H, { bidirectional: true, input_size: I, use_sequence_length: true });
    layer.initialize();
    randomizeParams(layer, 500);
    const x = randomArray([T, N, I], 510);
    const len = nd.array([4, 1, 3]);
    const want = refLayer({ mode, L: 1, D: 2, H }, f64(x), [T, N, I], paramValues(layer), new Float64Array(2 * N * H),
      mode === 'lstm' ? new Float64Array(2 * N * H) : null, [4, 1, 3]);
    for (const hybrid of [false, true]) {
      if (hybrid) layer.hybridize();
      const msg = `${mode} ${hybrid ? 'hybridized' : 'imperative'}`;
      const [out, st] = layer(x, layer.beginState(N), len);
      assertClose(f64(out), want.out, { ...TOL, msg: `${msg} output` });
      assertClose(f64(st[0]), want.h, { ...TOL, msg: `${msg} h` });
      assertClose(f64(layer(x, null, len)), want.out, { ...TOL, msg: `${msg} output without states` });
    }
  }
});

// =================================================================================================
// fused vs unrolled
// =================================================================================================
test('fused layer == its unfused stack of cells (_unfuse shares the parameters), and == cells given copies of l0_*', () => {
  const T = 3, N = 2, I = 4, H = 3;
  for (const mode of ['rnn_tanh', 'lstm', 'gru']) {
    for (const D of [1, 2]) {
      fresh(() => {
        const layer = makeLayer(mode, H, { num_layers: 2, bidirectional: D === 2, layout: 'NTC', input_size: I });
        layer.initialize();
        randomizeParams(layer, 600);
        const x = randomArray([N, T, I], 610);
        const fused = layer(x);
        // MXNet's _unfuse: a HybridSequentialRNNCell whose cells find the layer's parameters by name
        const stack = layer._unfuse();
        const names = [...stack.collectParams().keys()].sort();
        assert.deepEqual(names, [...layer.collectParams().keys()].sort(), `${mode} D=${D}: the stack's parameter names`);
        for (const [k, p] of stack.collectParams()) assert.equal(p, layer.collectParams().getItem(k), `${k} is shared`);
        const [outs] = stack.unroll(T, x, null, 'NTC', true);
        assertClose(f64(outs), f64(fused), { ...TOL, msg: `${mode} D=${D} unfused` });
        // cells built by hand, values copied from the layer's l<i>_/r<i>_ parameters
        const cells = new rnn.SequentialRNNCell();
        let ni = I;
        const mk = (k) => {
          const c = mode === 'lstm' ? new rnn.LSTMCell(H, { input_size: ni }) : mode === 'gru' ? new rnn.GRUCell(H, { input_size: ni })
            : new rnn.RNNCell(H, 'tanh', { input_size: ni });
          c.initialize();
          for (const g of ['i2h_weight', 'h2h_weight', 'i2h_bias', 'h2h_bias']) c[g].setData(layer[`${k}${g}`].data());
          return c;
        };
        for (let l = 0; l < 2; l++) {
          cells.add(D === 2 ? new rnn.BidirectionalCell(mk(`l${l}_`), mk(`r${l}_`)) : mk(`l${l}_`));
          ni = H * D;
        }
        const [outs2, states2] = cells.unroll(T, x, null, 'NTC', true);
        assertClose(f64(outs2), f64(fused), { ...TOL, msg: `${mode} D=${D} hand-built cells` });
        assert.equal(states2.length, (mode === 'lstm' ? 2 : 1) * 2 * D);
      });
    }
  }
});

// =================================================================================================
// names, shapes, files
// =================================================================================================
test('parameter names, shapes, initializers and state info as MXNet', () => {
  fresh(() => {
    const lstm = new rnn.LSTM(8, 2, { bidirectional: true, input_size: 5 });
    assert.equal(lstm.prefix, 'lstm0_');
    assert.deepEqual([...lstm.collectParams().keys()], [
      'lstm0_l0_i2h_weight', 'lstm0_l0_h2h_weight', 'lstm0_l0_i2h_bias', 'lstm0_l0_h2h_bias',
      'lstm0_r0_i2h_weight', 'lstm0_r0_h2h_weight', 'lstm0_r0_i2h_bias', 'lstm0_r0_h2h_bias',
      'lstm0_l1_i2h_weight', 'lstm0_l1_h2h_weight', 'lstm0_l1_i2h_bias', 'lstm0_l1_h2h_bias',
      'lstm0_r1_i2h_weight', 'lstm0_r1_h2h_weight', 'lstm0_r1_i2h_bias', 'lstm0_r1_h2h_bias']);
    assert.deepEqual(lstm.l0_i2h_weight.shape, [32, 5]);
    assert.deepEqual(lstm.l1_i2h_weight.shape, [32, 16]);
    assert.deepEqual(lstm.r1_h2h_weight.shape, [32, 8]);
    assert.deepEqual(lstm.l0_i2h_bias.shape, [32]);
    assert.equal(lstm.l0_i2h_bias.init, 'zeros');
    assert.deepEqual(lstm.stateInfo(3), [{ shape: [4, 3, 8], __layout__: 'LNC', dtype: 'float32' }, { shape: [4, 3, 8], __layout__: 'LNC', dtype: 'float32' }]);
    assert.equal(String(lstm), 'LSTM(5 -> 8, TNC, num_layers=2, bidirectional)');
    const gru = new rnn.GRU(4, { layout: 'NTC', dropout: 0.5, num_layers: 3 });
    assert.equal(gru.prefix, 'gru0_');
    assert.deepEqual(gru.l0_i2h_weight.shape, [12, 0]);
    assert.equal(String(gru), 'GRU(None -> 4, NTC, num_layers=3, dropout=0.5)');
    const r = new rnn.RNN(6, { activation: 'tanh' });
    assert.equal(r.prefix, 'rnn0_');
    assert.equal(r._mode, 'rnn_tanh');
    assert.deepEqual(r.stateInfo(2), [{ shape: [1, 2, 6], __layout__: 'LNC', dtype: 'float32' }]);
    assert.equal(String(r), 'RNN(None -> 6, TNC)');
    // beginState: named <prefix>h0_<i>, through any creation function
    const st = lstm.beginState(3, { func: sym.var });
    assert.deepEqual(st.map((s) => s.name), ['lstm0_h0_0', 'lstm0_h0_1']);
    assert.equal(st[0].attr('__layout__'), 'LNC');
    assert.equal(st[0].attr('__shape__'), '(4, 3, 8)');
    const ones = lstm.beginState({ batchSize: 2, func: nd.ones, dtype: 'float64' });
    assert.deepEqual(ones[1].shape, [4, 2, 8]);
    assert.equal(ones[1].dtype, 'float64');
    assert.ok(f64(ones[1]).every((v) => v === 1));
  });
});

test('saveParameters uses MXNet 1.9.1\'s structural names (_unfused...) and loads back', () => {
  fresh(() => {
    const a = new rnn.LSTM(3, { bidirectional: true, input_size: 2 });
    a.initialize();
    const names = [...a._collectParamsWithPrefix().keys()];
    assert.deepEqual(names.slice(0, 5), ['_unfused.0.l_cell.i2h_weight', '_unfused.0.l_cell.h2h_weight', '_unfused.0.l_cell.i2h_bias',
      '_unfused.0.l_cell.h2h_bias', '_unfused.0.r_cell.i2h_weight']);
    const g = new rnn.GRU(3, { input_size: 2 });
    assert.deepEqual([...g._collectParamsWithPrefix().keys()],
      ['_unfused.0.i2h_weight', '_unfused.0.h2h_weight', '_unfused.0.i2h_bias', '_unfused.0.h2h_bias']);
    const bytes = a.saveParametersBytes();
    const loaded = nd.loadBytes(bytes);
    assert.deepEqual(Object.keys(loaded).sort(), [...names].sort());
    const b = new rnn.LSTM(3, { bidirectional: true, input_size: 2 });
    b.initialize();
    return b.loadParameters(bytes).then(() => {
      for (const k of ['l0_i2h_weight', 'r0_h2h_bias']) assert.deepEqual(f64(b[k].data()), f64(a[k].data()));
    });
  });
});

// The graph MXNet 1.9.1's _RNNLayer._forward_kernel builds (hand-written from rnn_layer.py):
// reshape(-1) of every weight then every bias, _rnn_param_concat(dim=0), RNN with the layer's
// attributes (state_outputs=True), swapaxes(0, 1) around it for NTC, and for a symbolic call without
// states the begin states symbol.zeros(name='<prefix>h0_<i>', shape=(L*D, 0, H), __layout__='LNC').
test('exported LSTM graph: MXNet\'s node names, ops and attributes', () => {
  fresh(() => {
    const layer = new rnn.LSTM(4, { layout: 'NTC', input_size: 3 });
    layer.initialize();
    layer.hybridize();
    layer(randomArray([2, 5, 3], 700), layer.beginState(2));
    const j = JSON.parse(layer.exportBytes().symbol);
    const nodes = j.nodes.map((n) => [n.op, n.name, n.op === 'null' ? null : n.attrs ?? {}]);
    const rnnAttrs = {
      bidirectional: 'False', lstm_state_clip_max: 'None', lstm_state_clip_min: 'None', lstm_state_clip_nan: 'False',
      mode: 'lstm', num_layers: '1', p: '0', projection_size: 'None', state_outputs: 'True', state_size: '4',
      use_sequence_length: 'False',
    };
    assert.deepEqual(nodes, [
      ['null', 'data0', null],
      ['SwapAxis', 'lstm0_swapaxes0', { dim1: '0', dim2: '1' }],
      ['null', 'lstm0_l0_i2h_weight', null], ['Reshape', 'lstm0_reshape0', { shape: '-1' }],
      ['null', 'lstm0_l0_h2h_weight', null], ['Reshape', 'lstm0_reshape1', { shape: '-1' }],
      ['null', 'lstm0_l0_i2h_bias', null], ['Reshape', 'lstm0_reshape2', { shape: '-1' }],
      ['null', 'lstm0_l0_h2h_bias', null], ['Reshape', 'lstm0_reshape3', { shape: '-1' }],
      ['_rnn_param_concat', 'lstm0__rnn_param_concat0', { dim: '0', num_args: '4' }],
      ['null', 'data1', null], ['null', 'data2', null],
      ['RNN', 'lstm0_rnn0', rnnAttrs],
      ['SwapAxis', 'lstm0_swapaxes1', { dim1: '0', dim2: '1' }],
    ]);
    const byName = Object.fromEntries(j.nodes.map((n, i) => [n.name, i]));
    assert.deepEqual(j.nodes[byName.lstm0_rnn0].inputs.map((e) => j.nodes[e[0]].name),
      ['lstm0_swapaxes0', 'lstm0__rnn_param_concat0', 'data1', 'data2']);
    // heads: the output and both states (RNN outputs 1 and 2)
    assert.deepEqual(j.heads.map(([n, i]) => [j.nodes[n].name, i]), [['lstm0_swapaxes1', 0], ['lstm0_rnn0', 1], ['lstm0_rnn0', 2]]);
    // a symbolic call without states: zeros of unknown batch as the begin states
    const s = layer(sym.var('data'));
    const g = JSON.parse(s.tojson());
    const z = g.nodes.filter((n) => n.op === '_zeros');
    assert.deepEqual(z.map((n) => [n.name, n.attrs]), [
      ['lstm0_h0_0', { __layout__: 'LNC', dtype: 'float32', shape: '(1, 0, 4)' }],
      ['lstm0_h0_1', { __layout__: 'LNC', dtype: 'float32', shape: '(1, 0, 4)' }]]);
  });
});

test('inside a hybridized parent: symbolic call without states (batch inferred into the zeros), export and re-import', async () => {
  class Net extends gluon.HybridBlock {
    constructor() {
      super();
      this.nameScope(() => {
        this.rnn = new rnn.GRU(4, { layout: 'NTC', num_layers: 2, bidirectional: true });
        this.out = new gluon.nn.Dense(2, { flatten: false });
      });
    }
    hybridForward(F, x) { return this.out(this.rnn(x)); }
  }
  const net = new Net();
  net.initialize();
  const x = randomArray([3, 5, 2], 800);
  net(x); // deferred initialization
  randomizeParams(net, 810);
  const a = net(x);
  net.hybridize();
  const b = net(x);
  assert.deepEqual(b.shape, [3, 5, 2]);
  assertClose(f64(b), f64(a), { rtol: 1e-6, atol: 1e-6, msg: 'hybridized parent' });
  const { symbol, params } = net.exportBytes();
  const imported = await gluon.SymbolBlock.imports(new TextEncoder().encode(symbol), ['data'], params);
  assertClose(f64(imported(x)), f64(a), { rtol: 1e-6, atol: 1e-6, msg: 'imported' });
});

// =================================================================================================
// gradients
// =================================================================================================
test('gradients through the layers (data, states, every parameter) pass the finite-difference check', () => {
  for (const mode of ['rnn_tanh', 'lstm', 'gru']) {
    for (const hybrid of [false, true]) {
      const layer = makeLayer(mode, 2, { num_layers: 2, bidirectional: true, input_size: 2, dtype: 'float64', layout: 'NTC' });
      layer.initialize();
      randomizeParams(layer, 900);
      if (hybrid) layer.hybridize();
      const x = randomArray([2, 3, 2], 910, 'float64');
      const h = randomArray([4, 2, 2], 911, 'float64');
      const ins = mode === 'lstm' ? [x, h, randomArray([4, 2, 2], 912, 'float64')] : [x, h];
      checkBlockGrad(layer, (xx, ...st) => layer(xx, st), ins, { msg: `${mode} ${hybrid ? 'hybridized' : 'imperative'}` });
    }
  }
});

test('grad_check.mjs: d/d data and begin states of LSTM and GRU layers (float64, hybridized)', () => {
  for (const Layer of [rnn.LSTM, rnn.GRU]) {
    const layer = new Layer(3, { input_size: 2, num_layers: 2, bidirectional: true, dtype: 'float64', layout: 'NTC' });
    layer.initialize();
    randomizeParams(layer, 950);
    layer.hybridize();
    const states = layer.stateInfo(2).map((s) => ({ shape: s.shape }));
    checkGrad((x, ...st) => { const [o, s] = layer(x, st); return [o, ...s]; }, [{ shape: [2, 4, 2] }, ...states]);
  }
});

// =================================================================================================
// arguments and errors
// =================================================================================================
test('constructor arguments: positional, snake_case and camelCase options; bad values are MXNetErrors', () => {
  fresh(() => {
    const a = new rnn.LSTM(4, 2, 'NTC', 0.25, true, 3);
    assert.deepEqual([a._numLayers, a._layout, a._dropout, a._dir, a._inputSize], [2, 'NTC', 0.25, 2, 3]);
    const b = new rnn.LSTM({ hidden_size: 4, numLayers: 2, input_size: 3, projectionSize: 2, state_clip_min: -1, stateClipMax: 1 });
    assert.deepEqual([b._hiddenSize, b._numLayers, b._projectionSize, b._lstmStateClipMin, b._lstmStateClipMax], [4, 2, 2, -1, 1]);
    const c = new rnn.RNN(3, 1, 'tanh', 'NTC', { prefix: 'enc_' });
    assert.equal(c.prefix, 'enc_');
    assert.equal(c._mode, 'rnn_tanh');
    assert.throws(() => new rnn.LSTM(4, { layout: 'TCN' }), (e) => e instanceof mx.MXNetError && /Invalid layout TCN/.test(e.message));
    assert.throws(() => new rnn.LSTM(4, { num_cells: 3 }), (e) => e instanceof mx.MXNetError && /unknown argument 'num_cells'/.test(e.message));
    assert.throws(() => new rnn.LSTM(), (e) => e instanceof mx.MXNetError && /hidden_size/.test(e.message));
    assert.throws(() => new rnn.RNN(4, { activation: 'sigmoid' }), mx.MXNetError);
    assert.throws(() => new rnn.GRU(4, { dropout: 1.5 }), mx.MXNetError);
    const l = new rnn.GRU(3, { input_size: 2 });
    l.initialize();
    const x = nd.zeros([4, 2, 2]);
    assert.throws(() => l(x, nd.zeros([1, 3, 3])),
      (e) => e instanceof mx.MXNetError && /Invalid recurrent state shape. Expecting \(1, 2, 3\), got \(1, 3, 3\)/.test(e.message));
  });
});

test('dropout between layers is active only when training', () => {
  const layer = new rnn.LSTM(6, { num_layers: 2, dropout: 0.5, input_size: 3 });
  layer.initialize();
  randomizeParams(layer, 1000);
  const x = randomArray([4, 2, 3], 1010);
  const p1 = f64(layer(x)), p2 = f64(layer(x));
  assert.deepEqual(p1, p2, 'inference is deterministic');
  const want = refLayer({ mode: 'lstm', L: 2, D: 1, H: 6 }, f64(x), [4, 2, 3], paramValues(layer), new Float64Array(24), new Float64Array(24));
  assertClose(p1, want.out, { ...TOL, msg: 'inference: no dropout' });
  const t = f64(autograd.record(() => layer(x)));
  assert.ok(t.some((v, i) => Math.abs(v - p1[i]) > 1e-6), 'training: the second layer sees dropped-out inputs');
});
