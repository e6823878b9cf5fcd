// The fused RNN operator (nd.RNN / sym.RNN, alias _npx_rnn): every mode (rnn_relu, rnn_tanh, lstm,
// gru), 1 and 2 layers, bidirectional, LSTM projection and state clipping, use_sequence_length,
// state_outputs, odd sizes, against a plain float64 loop written here from MXNet 1.9.1's formulas
// (rnn.cc's documentation, rnn_impl.h's parameter layout and GRU form) and, for LSTM, against
// TF.js's tf.basicLSTMCell with the gate order mapped; hybridized through a HybridLambda; shape
// inference (GetRnnParamSize) and MXNet's errors.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { registry } from '../../dist/core.mjs';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';

const { nd, sym, autograd } = mx;
const tol = { rtol: 1e-5, atol: 1e-5 };
const GATES = { rnn_relu: 1, rnn_tanh: 1, lstm: 4, gru: 3 };

// GetRnnParamSize (rnn-inl.h), written out: per layer and direction G*H rows of W_x (input size
// columns) and W_h (H or P columns), the projection P x H, and two G*H bias vectors.
function paramSize(mode, I, H, L, D, P = 0) {
  const G = GATES[mode], Ho = P || H;
  let n = 0;
  for (let l = 0; l < L; l++) n += D * (G * H * ((l ? D * Ho : I) + Ho) + P * H + 2 * G * H);
  return n;
}

// MXNet's RNN in float64. x: flat (T, N, I); params: flat; hx: flat (L*D, N, Ho); cx: flat (L*D, N, H).
// opts: {mode, L, D, H, P, clip: [min, max], clipNan, lens, masks: per inner layer a flat (T, N, D*Ho)
// dropout scale}. Returns {y (T, N, D*Ho), hy, cy} as flat arrays.
function refRNN(opts, x, [T, N, I], params, hx, cx) {
  const { mode, L = 1, D = 1, H, P = 0, clip = null, clipNan = false, lens = null, masks = null } = opts;
  const G = GATES[mode], Ho = P || H;
  const sig = (v) => 1 / (1 + Math.exp(-v));
  // unpack the parameter vector: all weights (per layer, per direction: W_x, W_h[, W_r]), then all biases
  let off = 0;
  const mat = (rows, cols) => {
    const m = [];
    for (let r = 0; r < rows; r++) m.push(Array.from(params.slice(off + r * cols, off + (r + 1) * cols), Number));
    off += rows * cols;
    return m;
  };
  const vec = (n) => { const v = Array.from(params.slice(off, off + n), Number); off += n; return v; };
  const W = [];
  for (let l = 0; l < L; l++) for (let d = 0; d < D; d++) {
    W.push({ wx: mat(G * H, l ? D * Ho : I), wh: mat(G * H, Ho), wr: P ? mat(P, H) : null });
  }
  for (let l = 0; l < L; l++) for (let d = 0; d < D; d++) Object.assign(W[l * D + d], { bx: vec(G * H), bh: vec(G * H) });
  assert.equal(off, params.length, 'parameter vector length');
  const dot = (row, v) => row.reduce((s, a, k) => s + a * v[k], 0);
  let input = [];
  for (let t = 0; t < T; t++) {
    input.push([]);
    for (let n = 0; n < N; n++) input[t].push(Array.from(x.slice((t * N + n) * I, (t * N + n + 1) * I), Number));
  }
  const hy = new Float64Array(L * D * N * Ho), cy = new Float64Array(L * D * N * H);
  for (let l = 0; l < L; l++) {
    const out = Array.from({ length: T }, () => Array.from({ length: N }, () => new Array(D * Ho).fill(0)));
    for (let d = 0; d < D; d++) {
      const w = W[l * D + d], ld = l * D + d;
      const h = Array.from({ length: N }, (_, n) => Array.from(hx.slice((ld * N + n) * Ho, (ld * N + n + 1) * Ho), Number));
      const c = Array.from({ length: N }, (_, n) => (cx ? Array.from(cx.slice((ld * N + n) * H, (ld * N + n + 1) * H), Number) : null));
      for (let s = 0; s < T; s++) {
        const t = d ? T - 1 - s : s;
        for (let n = 0; n < N; n++) {
          if (lens && t >= lens[n]) continue; // padding: output 0, state carried over
          const xt = input[t][n], hp = h[n];
          const ax = (j) => dot(w.wx[j], xt) + w.bx[j], ah = (j) => dot(w.wh[j], hp) + w.bh[j];
          let hn;
          if (mode === 'lstm') {
            const cn = [], hr = [];
            for (let k = 0; k < H; k++) {
              const i = sig(ax(k) + ah(k)), f = sig(ax(H + k) + ah(H + k));
              const g = Math.tanh(ax(2 * H + k) + ah(2 * H + k)), o = sig(ax(3 * H + k) + ah(3 * H + k));
              let cc = f * c[n][k] + i * g;
              if (clip) {
                if (Number.isNaN(cc)) cc = clipNan ? clip[0] : cc;
                else cc = Math.min(Math.max(cc, clip[0]), clip[1]);
              }
              cn.push(cc);
              hr.push(o * Math.tanh(cc));
            }
            c[n] = cn;
            hn = P ? w.wr.map((row) => dot(row, hr)) : hr;
          } else if (mode === 'gru') {
            hn = [];
            for (let k = 0; k < H; k++) {
              const r = sig(ax(k) + ah(k)), z = sig(ax(H + k) + ah(H + k));
              const nn = Math.tanh(ax(2 * H + k) + r * ah(2 * H + k));
              hn.push((1 - z) * nn + z * hp[k]);
            }
          } else {
            hn = [];
            for (let k = 0; k < H; k++) {
              const v = ax(k) + ah(k);
              hn.push(mode === 'rnn_relu' ? Math.max(v, 0) : Math.tanh(v));
            }
          }
          h[n] = hn;
          for (let k = 0; k < Ho; k++) out[t][n][d * Ho + k] = hn[k];
        }
      }
      for (let n = 0; n < N; n++) {
        hy.set(h[n], (ld * N + n) * Ho);
        if (mode === 'lstm') cy.set(c[n], (ld * N + n) * H);
      }
    }
    if (l < L - 1 && masks) {
      const m = masks[l];
      out.forEach((row, t) => row.forEach((v, n) => v.forEach((_, k) => { v[k] *= m[(t * N + n) * D * Ho + k]; })));
    }
    input = out;
  }
  return { y: Float64Array.from(input.flat(2)), hy, cy };
}

// Random inputs for one configuration.
function setup(opts, [T, N, I], seed = 1, dtype = 'float32') {
  const { mode, L = 1, D = 1, H, P = 0 } = opts;
  const r = rng(seed), Ho = P || H;
  const x = r.uniform(T * N * I), params = r.uniform(paramSize(mode, I, H, L, D, P), -0.5, 0.5);
  const hx = r.uniform(L * D * N * Ho), cx = mode === 'lstm' ? r.uniform(L * D * N * H) : null;
  const arr = (v, shape) => nd.array(v, { dtype }).reshape(shape);
  const inputs = [arr(x, [T, N, I]), arr(params, [params.length]), arr(hx, [L * D, N, Ho])];
  if (cx) inputs.push(arr(cx, [L * D, N, H]));
  return { x, params, hx, cx, inputs };
}
const attrsOf = ({ mode, L = 1, D = 1, H, P = 0, clip = null, clipNan = false }) => ({
  mode, state_size: H, num_layers: L, bidirectional: D === 2, state_outputs: true,
  ...(P ? { projection_size: P } : {}),
  ...(clip ? { lstm_state_clip_min: clip[0], lstm_state_clip_max: clip[1], lstm_state_clip_nan: clipNan } : {}),
});

function checkAgainstRef(opts, shape, { seed = 1, dtype = 'float32', t = tol } = {}) {
  const { x, params, hx, cx, inputs } = setup(opts, shape, seed, dtype);
  const outs = nd.RNN(...inputs, attrsOf(opts));
  const want = refRNN(opts, x, shape, params, hx, cx);
  const [T, N] = shape, D = opts.D ?? 1, L = opts.L ?? 1, Ho = opts.P || opts.H;
  const msg = JSON.stringify(opts);
  assert.deepEqual(outs[0].shape, [T, N, D * Ho], msg);
  assert.deepEqual(outs[1].shape, [L * D, N, Ho], msg);
  assertClose(outs[0].toTypedArray(), want.y, { ...t, msg: `${msg} output` });
  assertClose(outs[1].toTypedArray(), want.hy, { ...t, msg: `${msg} state_output` });
  if (opts.mode === 'lstm') {
    assert.deepEqual(outs[2].shape, [L * D, N, opts.H], msg);
    assertClose(outs[2].toTypedArray(), want.cy, { ...t, msg: `${msg} statecell_output` });
  } else {
    assert.equal(outs.length, 2, msg);
  }
  for (const a of [...outs, ...inputs]) a.dispose();
  return want;
}

test('every mode, 1 and 2 layers, uni- and bidirectional, odd sizes (T=3, N=2, I=5, H=7): the float64 loop', () => {
  for (const mode of ['rnn_relu', 'rnn_tanh', 'lstm', 'gru']) {
    for (const L of [1, 2]) {
      for (const D of [1, 2]) checkAgainstRef({ mode, L, D, H: 7 }, [3, 2, 5], { seed: 10 * L + D });
    }
  }
  // more shapes: one step, batch 1, a 3-layer stack, input size 1, H larger than the input
  checkAgainstRef({ mode: 'lstm', L: 3, D: 2, H: 4 }, [1, 1, 3]);
  checkAgainstRef({ mode: 'gru', L: 1, D: 1, H: 9 }, [6, 3, 1]);
  checkAgainstRef({ mode: 'rnn_tanh', L: 2, D: 2, H: 13 }, [4, 5, 2]);
  // sizes past the GEMM's tiles (H * G = 132 rows, 9 batch rows)
  checkAgainstRef({ mode: 'lstm', L: 2, D: 2, H: 33 }, [5, 9, 17]);
  checkAgainstRef({ mode: 'gru', L: 2, D: 1, H: 40 }, [4, 9, 21]);
});

test('float64 matches the loop to 1e-12; float16 to its precision', () => {
  const t64 = { rtol: 1e-12, atol: 1e-12 };
  for (const mode of ['rnn_relu', 'rnn_tanh', 'lstm', 'gru']) {
    checkAgainstRef({ mode, L: 2, D: 2, H: 5 }, [3, 2, 4], { dtype: 'float64', t: t64 });
  }
  checkAgainstRef({ mode: 'lstm', L: 2, D: 2, H: 6, P: 4 }, [3, 2, 4], { dtype: 'float64', t: t64 });
  // float16 inputs (rounded) run in float32: compare with the loop on the rounded values
  const opts = { mode: 'gru', L: 1, D: 2, H: 5 }, shape = [3, 2, 4];
  const { inputs } = setup(opts, shape, 3, 'float16');
  const outs = nd.RNN(...inputs, attrsOf(opts));
  assert.equal(outs[0].dtype, 'float16');
  const vals = inputs.map((a) => Float64Array.from(a.astype('float64').toTypedArray()));
  const want = refRNN(opts, vals[0], shape, vals[1], vals[2], null);
  assertClose(outs[0].astype('float32').toTypedArray(), want.y, { rtol: 2e-3, atol: 2e-3 });
});

// TF.js's basicLSTMCell: [c', h'] from concat(x, h) * kernel + bias, gates split as i, j (the cell
// input, MXNet's g), f, o with a forget bias; MXNet's rows are i, f, g, o.
function tfLSTM(x, [T, N, I], params, hx, cx, H, reverse = false) {
  return tf.tidy(() => {
    const G = 4 * H, wx = params.slice(0, G * I), wh = params.slice(G * I, G * (I + H));
    const bx = params.slice(G * (I + H), G * (I + H) + G), bh = params.slice(G * (I + H) + G, G * (I + H) + 2 * G);
    const order = [0, 2, 1, 3]; // TF's i, j, f, o from MXNet's gate blocks i, f, g, o
    const kernel = new Float32Array((I + H) * G), bias = new Float32Array(G);
    order.forEach((src, dst) => {
      for (let k = 0; k < H; k++) {
        const row = src * H + k, col = dst * H + k;
        for (let i = 0; i < I; i++) kernel[i * G + col] = wx[row * I + i];
        for (let j = 0; j < H; j++) kernel[(I + j) * G + col] = wh[row * H + j];
        bias[col] = bx[row] + bh[row];
      }
    });
    const K = tf.tensor2d(kernel, [I + H, G]), B = tf.tensor1d(bias), fb = tf.scalar(0);
    let h = tf.tensor2d(hx, [N, H]), c = tf.tensor2d(cx, [N, H]);
    const ys = new Array(T);
    for (let s = 0; s < T; s++) {
      const t = reverse ? T - 1 - s : s;
      [c, h] = tf.basicLSTMCell(fb, K, B, tf.tensor2d(x.slice(t * N * I, (t + 1) * N * I), [N, I]), c, h);
      ys[t] = h;
    }
    return { y: tf.stack(ys).dataSync(), h: h.dataSync(), c: c.dataSync() };
  });
}

test('LSTM against TF.js basicLSTMCell (gate order mapped), forward and reverse direction', () => {
  const T = 4, N = 3, I = 5, H = 6, shape = [T, N, I];
  for (const D of [1, 2]) {
    const opts = { mode: 'lstm', L: 1, D, H };
    const { x, params, hx, cx, inputs } = setup(opts, shape, 21 + D);
    const [y, hy, cy] = nd.RNN(...inputs, attrsOf(opts));
    const yv = y.toTypedArray(), hv = hy.toTypedArray(), cv = cy.toTypedArray();
    const per = paramSize('lstm', I, H, 1, 1) - 8 * H; // one direction's weights
    for (let d = 0; d < D; d++) {
      // direction d's weights, then its biases (after all of the weights)
      const p = new Float32Array(per + 8 * H);
      p.set(params.slice(d * per, (d + 1) * per));
      p.set(params.slice(D * per + d * 8 * H, D * per + (d + 1) * 8 * H), per);
      const ref = tfLSTM(x, shape, p, hx.slice(d * N * H, (d + 1) * N * H), cx.slice(d * N * H, (d + 1) * N * H), H, d === 1);
      const mine = new Float32Array(T * N * H);
      for (let i = 0; i < T * N; i++) mine.set(yv.slice(i * D * H + d * H, i * D * H + (d + 1) * H), i * H);
      assertClose(mine, ref.y, { ...tol, msg: `output direction ${d}` });
      assertClose(hv.slice(d * N * H, (d + 1) * N * H), ref.h, { ...tol, msg: `state_output ${d}` });
      assertClose(cv.slice(d * N * H, (d + 1) * N * H), ref.c, { ...tol, msg: `statecell_output ${d}` });
    }
  }
});

test('LSTM projection (projection_size): state and output of size P, W_r after W_h in the packed vector', () => {
  checkAgainstRef({ mode: 'lstm', L: 1, D: 1, H: 7, P: 3 }, [3, 2, 5]);
  checkAgainstRef({ mode: 'lstm', L: 2, D: 2, H: 7, P: 3 }, [3, 2, 5]);
  checkAgainstRef({ mode: 'lstm', L: 2, D: 1, H: 6, P: 6 }, [4, 3, 2]);
  // GetRnnParamSize with a projection, worked by hand for I=5, H=7, P=3, L=2, D=2:
  // layer 0: 2 * (28*5 + 28*3 + 3*7 + 56) = 602; layer 1: 2 * (28*6 + 28*3 + 21 + 56) = 658
  assert.equal(paramSize('lstm', 5, 7, 2, 2, 3), 1260);
  const s = sym.RNN(sym.var('data'), { mode: 'lstm', state_size: 7, num_layers: 2, bidirectional: true, projection_size: 3,
    state_outputs: true, name: 'rnn' });
  const [args, outs] = s.inferShape({ data: [3, 2, 5] });
  assert.deepEqual(s.listArguments(), ['data', 'rnn_parameters', 'rnn_state', 'rnn_state_cell']);
  assert.deepEqual(args, [[3, 2, 5], [1260], [4, 2, 3], [4, 2, 7]]);
  assert.deepEqual(outs, [[3, 2, 6], [4, 2, 3], [4, 2, 7]]);
});

test('LSTM state clipping: the cell is clipped before h = o tanh(c); lstm_state_clip_nan stops NaN', () => {
  // large weights drive the cell past the bounds
  const opts = { mode: 'lstm', L: 2, D: 2, H: 5, clip: [-0.3, 0.25] }, shape = [4, 3, 3];
  const { x, params, hx, cx, inputs } = setup(opts, shape, 31);
  const big = nd.array(params.map((v) => 6 * v));
  const outs = nd.RNN(inputs[0], big, inputs[2], inputs[3], attrsOf(opts));
  const want = refRNN(opts, x, shape, params.map((v) => 6 * v), hx, cx);
  assertClose(outs[0].toTypedArray(), want.y, tol);
  assertClose(outs[2].toTypedArray(), want.cy, tol);
  const cyv = outs[2].toTypedArray();
  assert.ok(cyv.every((v) => v >= -0.3 - 1e-7 && v <= 0.25 + 1e-7));
  assert.ok(cyv.some((v) => Math.abs(v + 0.3) < 1e-7) && cyv.some((v) => Math.abs(v - 0.25) < 1e-7), 'both bounds reached');
  // without clipping the same weights give cells outside the bounds
  const free = nd.RNN(inputs[0], big, inputs[2], inputs[3], attrsOf({ ...opts, clip: null }));
  assert.ok(free[2].toTypedArray().some((v) => v > 0.25 || v < -0.3));
  // a NaN initial cell: propagates by default, becomes clip_min with lstm_state_clip_nan
  const o1 = { mode: 'lstm', L: 1, D: 1, H: 4, clip: [-0.5, 0.5] }, sh1 = [2, 2, 3];
  const s1 = setup(o1, sh1, 32);
  const nanCx = new Float32Array(2 * 4).fill(NaN);
  const run = (clipNan) => nd.RNN(s1.inputs[0], s1.inputs[1], s1.inputs[2], nd.array(nanCx).reshape([1, 2, 4]),
    attrsOf({ ...o1, clipNan }));
  const prop = run(false);
  assert.ok(prop[0].toTypedArray().every(Number.isNaN));
  const stop = run(true);
  const want1 = refRNN({ ...o1, clipNan: true }, s1.x, sh1, s1.params, s1.hx, nanCx);
  assert.ok(stop[0].toTypedArray().every(Number.isFinite));
  assertClose(stop[0].toTypedArray(), want1.y, tol);
  assertClose(stop[2].toTypedArray(), want1.cy, tol);
});

test('use_sequence_length: steps past each length output 0 and keep the state (GRU: input 3, LSTM: input 4)', () => {
  const shape = [4, 3, 5], lens = [4, 1, 2];
  for (const opts of [{ mode: 'gru', L: 2, D: 2, H: 6 }, { mode: 'lstm', L: 2, D: 2, H: 6 },
    { mode: 'rnn_relu', L: 1, D: 1, H: 3 }, { mode: 'lstm', L: 1, D: 2, H: 6, P: 2 }]) {
    const { x, params, hx, cx, inputs } = setup(opts, shape, 41);
    for (const ldtype of ['int32', 'float32']) {
      const outs = nd.RNN(...inputs, nd.array(lens, { dtype: ldtype }), { ...attrsOf(opts), use_sequence_length: true });
      const want = refRNN({ ...opts, lens }, x, shape, params, hx, cx);
      const msg = JSON.stringify(opts);
      assertClose(outs[0].toTypedArray(), want.y, { ...tol, msg });
      assertClose(outs[1].toTypedArray(), want.hy, { ...tol, msg });
      if (opts.mode === 'lstm') assertClose(outs[2].toTypedArray(), want.cy, { ...tol, msg });
      // item 1 (length 1): its rows at t >= 1 are zero
      const y = outs[0].toArray();
      for (let t = 1; t < 4; t++) assert.ok(y[t][1].every((v) => v === 0), msg);
    }
  }
  // full lengths equal the op without sequence_length
  const opts = { mode: 'gru', L: 1, D: 2, H: 4 };
  const { inputs } = setup(opts, shape, 42);
  const a = nd.RNN(...inputs, nd.array([4, 4, 4]), { ...attrsOf(opts), use_sequence_length: true });
  const b = nd.RNN(...inputs, attrsOf(opts));
  assertClose(a[0].toTypedArray(), b[0].toTypedArray(), { rtol: 0, atol: 0 });
  // the input list and names
  const s = sym.RNN(sym.var('x'), { mode: 'gru', state_size: 4, num_layers: 1, use_sequence_length: true, name: 'g' });
  assert.deepEqual(s.listArguments(), ['x', 'g_parameters', 'g_state', 'g_sequence_length']);
  const l = sym.RNN(sym.var('x'), { mode: 'lstm', state_size: 4, num_layers: 1, use_sequence_length: true, name: 'l' });
  assert.deepEqual(l.listArguments(), ['x', 'l_parameters', 'l_state', 'l_state_cell', 'l_sequence_length']);
  assert.deepEqual(l.inferShape({ x: [4, 3, 5] })[0], [[4, 3, 5], [paramSize('lstm', 5, 4, 1, 1)], [1, 3, 4], [1, 3, 4], [3]]);
});

test('state_outputs=False: one output; the defaults and attribute names are MXNet\'s', () => {
  const opts = { mode: 'gru', L: 2, D: 1, H: 5 }, shape = [3, 2, 4];
  const { x, params, hx, inputs } = setup(opts, shape, 51);
  const y = nd.RNN(...inputs, { mode: 'gru', state_size: 5, num_layers: 2 });
  assert.ok(y instanceof mx.NDArray);
  assertClose(y.toTypedArray(), refRNN(opts, x, shape, params, hx, null).y, tol);
  // positional attributes follow MXNet's signature: the five input slots (None where absent), then
  // state_size, num_layers, bidirectional, mode, ...
  const y2 = nd.RNN(...inputs, null, null, 5, 2, false, 'gru');
  assertClose(y2.toTypedArray(), y.toTypedArray(), { rtol: 0, atol: 0 });
  const s = sym.RNN(sym.var('data'), { mode: 'lstm', state_size: 3, num_layers: 1, name: 'r' });
  assert.deepEqual(s.listOutputs(), ['r_output']);
  const s2 = sym.RNN(sym.var('data'), { mode: 'lstm', state_size: 3, num_layers: 2, p: 0.2, state_outputs: true, name: 'r' });
  assert.deepEqual(s2.listOutputs(), ['r_output', 'r_state_output', 'r_statecell_output']); // the dropout mask is hidden
  const g = sym.RNN(sym.var('data'), { mode: 'gru', state_size: 3, num_layers: 2, p: 0.2, state_outputs: true, name: 'r' });
  assert.deepEqual(g.listOutputs(), ['r_output', 'r_state_output']);
  const op = registry.ops.find((o) => o.name === 'RNN');
  assert.deepEqual(op.attrs.map((a) => a.name), ['state_size', 'num_layers', 'bidirectional', 'mode', 'p', 'state_outputs',
    'projection_size', 'lstm_state_clip_min', 'lstm_state_clip_max', 'lstm_state_clip_nan', 'use_sequence_length']);
  assert.deepEqual(op.attrs.filter((a) => a.required).map((a) => a.name), ['state_size', 'num_layers', 'mode']);
  assert.deepEqual(op.attrs.find((a) => a.name === 'mode').values, ['rnn_relu', 'rnn_tanh', 'lstm', 'gru']);
  assert.deepEqual(op.aliases, ['_npx_rnn']);
  // the alias
  const y3 = nd._npx_rnn(...inputs, { mode: 'gru', state_size: 5, num_layers: 2 });
  assertClose(y3.toTypedArray(), y.toTypedArray(), { rtol: 0, atol: 0 });
});

test('GetRnnParamSize through shape inference, both ways (data -> parameters, parameters -> input size)', () => {
  for (const [mode, I, H, L, D, want] of [
    // by hand: G*H*(I + H + 2) per direction of layer 0, G*H*(D*H + H + 2) per direction after
    ['rnn_relu', 5, 7, 1, 1, 7 * (5 + 7 + 2)],
    ['rnn_tanh', 5, 7, 2, 2, 2 * 7 * (5 + 7 + 2) + 2 * 7 * (14 + 7 + 2)],
    ['lstm', 5, 7, 2, 1, 28 * (5 + 7 + 2) + 28 * (7 + 7 + 2)],
    ['gru', 3, 4, 3, 2, 2 * 12 * (3 + 4 + 2) + 2 * 2 * 12 * (8 + 4 + 2)],
  ]) {
    assert.equal(paramSize(mode, I, H, L, D), want);
    const s = sym.RNN(sym.var('data'), { mode, state_size: H, num_layers: L, bidirectional: D === 2, state_outputs: true, name: 'r' });
    const [args, outs] = s.inferShape({ data: [6, 2, I] });
    assert.equal(args[1][0], want, mode);
    assert.deepEqual(args[2], [L * D, 2, H]);
    assert.deepEqual(outs[0], [6, 2, D * H]);
    // backwards: the parameter count and the output fix the data's shape
    const part = s.inferShapePartial({ r_parameters: [want], r_state: [L * D, 2, H] });
    assert.deepEqual(part[0][0], [0, 2, I], mode);
  }
});

test('hybridized: sym.RNN in a HybridLambda gives the same values as nd.RNN and the loop', () => {
  for (const opts of [{ mode: 'lstm', L: 2, D: 2, H: 5 }, { mode: 'gru', L: 2, D: 1, H: 6 },
    { mode: 'rnn_tanh', L: 1, D: 2, H: 3 }, { mode: 'lstm', L: 1, D: 1, H: 6, P: 2, clip: [-0.2, 0.2] }]) {
    const shape = [3, 2, 5];
    const { x, params, hx, cx, inputs } = setup(opts, shape, 61);
    const want = refRNN(opts, x, shape, params, hx, cx);
    const lstm = opts.mode === 'lstm';
    const blk = new mx.gluon.nn.HybridLambda((F, ...a) => {
      const outs = F.RNN(...a, { ...attrsOf(opts), p: 0.3 }); // dropout is inactive at inference
      return [...outs];
    });
    blk.hybridize();
    for (let rep = 0; rep < 2; rep++) {
      const outs = blk.forward(...inputs);
      assertClose(outs[0].toTypedArray(), want.y, tol);
      assertClose(outs[1].toTypedArray(), want.hy, tol);
      if (lstm) assertClose(outs[2].toTypedArray(), want.cy, tol);
    }
  }
});

test('dropout between layers: training only, inner layers\' outputs scaled by 0 or 1/(1-p), the last layer and the states untouched', () => {
  // layer 2 is relu(I x + 0): it passes layer 1's (non-negative, relu) output through, so the
  // output is layer 1's output times the dropout mask
  const T = 10, N = 8, I = 6, H = 25, p = 0.4;
  const r = rng(71);
  const x = r.uniform(T * N * I);
  const n0 = H * (I + H), n1 = H * (H + H);
  const params = new Float32Array(n0 + n1 + 4 * H);
  params.set(r.uniform(n0, -0.3, 0.6), 0);
  for (let k = 0; k < H; k++) params[n0 + k * H + k] = 1; // W_x of layer 2 = identity, W_h = 0
  params.set(r.uniform(2 * H, 0, 0.2), n0 + n1); // layer 1 biases
  const hx = new Float32Array(2 * N * H);
  const inputs = [nd.array(x).reshape([T, N, I]), nd.array(params), nd.array(hx).reshape([2, N, H])];
  const attrs = { mode: 'rnn_relu', state_size: H, num_layers: 2, p, state_outputs: true };
  // layer 1 alone: its weights, then its biases (which follow both layers' weights in the 2-layer vector)
  const p1 = Float32Array.from([...params.slice(0, n0), ...params.slice(n0 + n1, n0 + n1 + 2 * H)]);
  const clean = refRNN({ mode: 'rnn_relu', L: 1, H }, x, [T, N, I], p1, hx.slice(0, N * H), null);
  // inference (and training=false under record): no dropout
  const inf = nd.RNN(...inputs, attrs);
  assertClose(inf[0].toTypedArray(), clean.y, tol);
  const rec = autograd.record(() => nd.RNN(...inputs, attrs), false);
  assertClose(rec[0].toTypedArray(), clean.y, tol);
  // training
  const tr = autograd.record(() => nd.RNN(...inputs, attrs), true);
  const y = tr[0].toTypedArray(), scale = Math.fround(1 / Math.fround(1 - p));
  let dropped = 0, kept = 0;
  for (let i = 0; i < y.length; i++) {
    if (clean.y[i] < 1e-3) continue;
    const ratio = y[i] / clean.y[i];
    if (Math.abs(ratio) < 1e-6) dropped++;
    else { assert.ok(Math.abs(ratio - scale) < 1e-4, `ratio ${ratio} at ${i}`); kept++; }
  }
  const frac = dropped / (dropped + kept);
  assert.ok(dropped + kept > 1000 && frac > p - 0.05 && frac < p + 0.05, `dropped fraction ${frac}`);
  // layer 1's final state is taken before dropout
  assertClose(tr[1].toTypedArray().slice(0, N * H), clean.hy, tol);
  // a one-layer RNN has no dropout even when training
  const one = autograd.record(() => nd.RNN(inputs[0], nd.array(p1), nd.array(hx.slice(0, N * H)).reshape([1, N, H]),
    { ...attrs, num_layers: 1 }), true);
  assertClose(one[0].toTypedArray(), clean.y, tol);
});

test('errors: MXNet\'s checks on attributes, shapes and dtypes raise MXNetError', () => {
  const opts = { mode: 'lstm', L: 1, D: 1, H: 4 }, shape = [3, 2, 5];
  const { inputs } = setup(opts, shape, 81);
  const base = { mode: 'lstm', state_size: 4, num_layers: 1 };
  const bad = (attrs, re, ins = inputs) => assert.throws(() => nd.RNN(...ins, attrs), (e) => e instanceof mx.MXNetError && re.test(e.message), JSON.stringify(attrs));
  bad({ ...base, mode: 'lstmx' }, /mode/);
  bad({ mode: 'lstm', num_layers: 1 }, /state_size/);
  bad({ mode: 'lstm', state_size: 4 }, /num_layers/);
  bad({ state_size: 4, num_layers: 1 }, /mode/);
  bad({ ...base, state_size: 0 }, /state_size/);
  bad({ ...base, p: 1 }, /dropout/);
  bad({ ...base, p: -0.1 }, /dropout/);
  bad({ ...base, projection_size: 5 }, /State size must be larger than projection size/);
  bad({ ...base, lstm_state_clip_min: -1 }, /must be specified together/);
  bad({ ...base, lstm_state_clip_min: 1, lstm_state_clip_max: -1 }, /greater or equal/);
  bad({ ...base, foo: 1 }, /foo/);
  const g = setup({ mode: 'gru', H: 4 }, shape, 82);
  bad({ mode: 'gru', state_size: 4, num_layers: 1, projection_size: 2 }, /Projection is only supported for LSTM/, g.inputs);
  bad({ mode: 'gru', state_size: 4, num_layers: 1, lstm_state_clip_min: -1, lstm_state_clip_max: 1 },
    /State clipping is only supported for LSTM/, g.inputs);
  // shapes
  bad(base, /rank-3/, [nd.zeros([3, 10]), ...inputs.slice(1)]);
  bad(base, /parameters/, [inputs[0], nd.zeros([7]), ...inputs.slice(2)]);
  bad(base, /state/, [inputs[0], inputs[1], nd.zeros([1, 3, 4]), inputs[3]]);
  bad(base, /state_cell/, [...inputs.slice(0, 3), nd.zeros([2, 2, 4])]);
  bad({ ...base, num_layers: 2 }, /parameters|state/);
  bad(base, /input|expected 4/, inputs.slice(0, 3)); // LSTM without state_cell
  // sequence lengths out of [1, T]; of the wrong size
  bad({ ...base, use_sequence_length: true }, /sequence_length\[1\] = 4/, [...inputs, nd.array([3, 4])]);
  bad({ ...base, use_sequence_length: true }, /sequence_length\[0\] = 0/, [...inputs, nd.array([0, 1])]);
  bad({ ...base, use_sequence_length: true }, /sequence_length/, [...inputs, nd.array([1, 2, 3])]);
  // dtypes: integer data, mixed float dtypes
  bad(base, /dtype/, [inputs[0].astype('int32'), ...inputs.slice(1).map((a) => a.astype('int32'))]);
  bad(base, /dtype/, [inputs[0], inputs[1].astype('float64'), inputs[2], inputs[3]]);
});

test('_rnn_param_concat: Gluon\'s packing of the flattened weights, the first layer\'s input size inferred backwards', () => {
  // forward values: a Concat along dim
  const a = nd.array([1, 2, 3]), b = nd.array([4, 5]);
  assert.deepEqual(Array.from(nd._rnn_param_concat(a, b, { num_args: 2, dim: 0 }).toTypedArray()), [1, 2, 3, 4, 5]);
  assert.deepEqual(nd._rnn_param_concat(nd.ones([2, 1]), nd.zeros([2, 2]), { num_args: 2, dim: 1 }).toArray(), [[1, 0, 0], [1, 0, 0]]);
  // the graph Gluon's LSTM layer builds: i2h weight of unknown input size, reshape(-1), concat, RNN
  const H = 4, I = 5, opts = { mode: 'lstm', L: 1, D: 1, H }, shape = [3, 2, I];
  const v = (name, shp) => sym.var(name, { shape: shp });
  const names = ['l0_i2h_weight', 'l0_h2h_weight', 'l0_i2h_bias', 'l0_h2h_bias'];
  const ws = [v(names[0], [4 * H, 0]), v(names[1], [4 * H, H]), v(names[2], [4 * H]), v(names[3], [4 * H])];
  const params = sym._rnn_param_concat(...ws.map((w) => w.reshape(-1)), { num_args: 4, dim: 0 });
  const data = sym.var('data'), h = sym.var('h'), c = sym.var('c');
  const out = sym.RNN(data, params, h, c, { ...attrsOf(opts), name: 'rnn' });
  const [args] = out.inferShape({ data: shape });
  assert.deepEqual(args, [[3, 2, I], [16, I], [16, H], [16], [16], [1, 2, H], [1, 2, H]]);
  // through the JSON text and a SymbolBlock: the values of the loop on the packed vector
  const loaded = sym.fromJSON(out.tojson());
  const json = JSON.parse(loaded.tojson());
  const node = json.nodes.find((n) => n.op === 'RNN');
  assert.deepEqual(node.attrs, { mode: 'lstm', state_size: '4', num_layers: '1', bidirectional: 'False', state_outputs: 'True' });
  assert.deepEqual(json.nodes.find((n) => n.op === '_rnn_param_concat').attrs, { num_args: '4', dim: '0' });
  const { x, params: flat, hx, cx, inputs } = setup(opts, shape, 91);
  const parts = [[16, I], [16, H], [16], [16]].map((shp, k, all) => {
    const off = all.slice(0, k).reduce((s, q) => s + sizeOf(q), 0);
    return nd.array(flat.slice(off, off + sizeOf(shp))).reshape(shp);
  });
  const blk = new mx.gluon.SymbolBlock([...loaded], [sym.var('data'), ...names.map((n) => sym.var(n)), sym.var('h'), sym.var('c')]);
  const got = blk.forward(inputs[0], ...parts, inputs[2], inputs[3]);
  const want = refRNN(opts, x, shape, flat, hx, cx);
  assertClose(got[0].toTypedArray(), want.y, tol);
  assertClose(got[2].toTypedArray(), want.cy, tol);
});
