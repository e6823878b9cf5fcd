// Gradients of the fused RNN operator (its _backward_RNN: the forward recomputed, then
// backpropagation through time) against central finite differences in float64, for data,
// parameters, state and state_cell: every mode, 1 and 2 layers, bidirectional, LSTM projection and
// clipping, use_sequence_length, dropout (re-seeded so every evaluation draws the same mask),
// state_outputs on and off, eager tape and hybridized; the float32 kernels against the float64
// ones; and _rnn_param_concat's gradient (slices of the output gradient).
import test from 'node:test';
import { checkGrad, assertClose, assert, rng, nd, mx, autograd } from './grad_check.mjs';

const GATES = { rnn_relu: 1, rnn_tanh: 1, lstm: 4, gru: 3 };
function paramSize(mode, I, H, L, D, P = 0) {
  const G = GATES[mode], Ho = P || H;
  let n = 0;
  for (let l = 0; l < L; l++) n += D * (G * H * ((l ? D * Ho : I) + Ho) + P * H + 2 * G * H);
  return n;
}
// input specs for checkGrad: data, parameters, state[, state_cell]
function specs({ mode, L = 1, D = 1, H, P = 0 }, [T, N, I]) {
  const s = [{ shape: [T, N, I] }, { shape: [paramSize(mode, I, H, L, D, P)], low: -0.6, high: 0.6 },
    { shape: [L * D, N, P || H] }];
  if (mode === 'lstm') s.push({ shape: [L * D, N, H] });
  return s;
}
const attrsOf = ({ mode, L = 1, D = 1, H, P = 0 }, extra = {}) => ({
  mode, state_size: H, num_layers: L, bidirectional: D === 2, ...(P ? { projection_size: P } : {}), ...extra,
});

test('RNN: every mode, 1 and 2 layers, uni- and bidirectional, all outputs (finite differences)', () => {
  const shape = [3, 2, 3];
  for (const mode of ['rnn_relu', 'rnn_tanh', 'lstm', 'gru']) {
    for (const [L, D] of [[1, 1], [1, 2], [2, 1], [2, 2]]) {
      const opts = { mode, L, D, H: 3 };
      checkGrad('RNN', specs(opts, shape), attrsOf(opts, { state_outputs: true }), { seed: 10 * L + D });
    }
  }
  // odd sizes, one output only (state_outputs=False: the final states get no gradient from outside)
  checkGrad('RNN', specs({ mode: 'lstm', L: 1, D: 2, H: 5 }, [4, 3, 2]), attrsOf({ mode: 'lstm', D: 2, H: 5 }));
  checkGrad('RNN', specs({ mode: 'gru', L: 2, D: 1, H: 4 }, [2, 1, 5]), attrsOf({ mode: 'gru', L: 2, H: 4 }));
});

test('RNN: gradients reaching only through the final states, or only through the output', () => {
  const opts = { mode: 'lstm', L: 2, D: 2, H: 3 }, shape = [3, 2, 3];
  const a = attrsOf(opts, { state_outputs: true });
  checkGrad((...ins) => nd.RNN(...ins, a).slice(1), specs(opts, shape));
  checkGrad((...ins) => nd.RNN(...ins, a)[2], specs(opts, shape));
  const g = { mode: 'gru', L: 2, D: 2, H: 3 };
  checkGrad((...ins) => nd.RNN(...ins, attrsOf(g, { state_outputs: true }))[1], specs(g, shape));
});

test('RNN: LSTM projection and state clipping (finite differences)', () => {
  const shape = [3, 2, 4];
  for (const [L, D] of [[1, 1], [2, 2]]) {
    const opts = { mode: 'lstm', L, D, H: 4, P: 2 };
    checkGrad('RNN', specs(opts, shape), attrsOf(opts, { state_outputs: true }), { seed: 30 + L });
  }
  // clipping: the clipped cells pass no gradient (weights large enough that some clip, some not)
  const opts = { mode: 'lstm', L: 2, D: 1, H: 3 };
  const sp = specs(opts, shape);
  sp[1] = { ...sp[1], low: -2, high: 2 };
  const clip = { lstm_state_clip_min: -0.4, lstm_state_clip_max: 0.3, state_outputs: true };
  const { outputs } = checkGrad('RNN', sp, attrsOf(opts, clip), { seed: 33 });
  const cy = outputs[2].toTypedArray();
  assert.ok(cy.some((v) => v === 0.3 || v === -0.4) && cy.some((v) => v > -0.4 && v < 0.3), 'some cells clip, some do not');
});

test('RNN: use_sequence_length (padding gets no gradient; the state carries through) (finite differences)', () => {
  const shape = [4, 3, 2];
  for (const opts of [{ mode: 'gru', L: 2, D: 2, H: 3 }, { mode: 'lstm', L: 1, D: 2, H: 3 },
    { mode: 'rnn_tanh', L: 2, D: 1, H: 2 }, { mode: 'lstm', L: 2, D: 2, H: 3, P: 2 }]) {
    const lens = nd.array([2, 4, 1], { dtype: 'int32' });
    const a = attrsOf(opts, { state_outputs: true, use_sequence_length: true });
    const { analytic } = checkGrad((...ins) => nd.RNN(...ins, lens, a), specs(opts, shape), {}, { seed: 40 });
    // data rows past an item's length get exactly zero gradient
    const dx = analytic[0], I = 2, N = 3;
    for (let t = 0; t < 4; t++) {
      for (let n = 0; n < N; n++) {
        if (t < [2, 4, 1][n]) continue;
        for (let i = 0; i < I; i++) assert.equal(dx[(t * N + n) * I + i], 0, `${opts.mode} dx[${t}, ${n}]`);
      }
    }
  }
});

test('RNN: dropout between layers in training: the recorded mask in the backward (finite differences, re-seeded)', () => {
  const shape = [3, 2, 3];
  for (const opts of [{ mode: 'lstm', L: 2, D: 2, H: 3 }, { mode: 'gru', L: 3, D: 1, H: 3 }]) {
    const a = attrsOf(opts, { p: 0.5, state_outputs: true });
    const seeded = (...ins) => { mx.random.seed(11); return nd.RNN(...ins, a); };
    checkGrad(seeded, specs(opts, shape), {}, { seed: 50 });
    // not training: no dropout, the plain gradient
    checkGrad((...ins) => nd.RNN(...ins, a), specs(opts, shape), {}, { seed: 51, trainMode: false });
  }
});

test('RNN hybridized: the graph\'s gradient equals finite differences and the eager tape\'s', () => {
  const shape = [3, 2, 3];
  for (const opts of [{ mode: 'lstm', L: 2, D: 2, H: 3 }, { mode: 'gru', L: 2, D: 2, H: 3 }, { mode: 'rnn_relu', L: 2, D: 1, H: 4 },
    { mode: 'lstm', L: 1, D: 2, H: 3, P: 2 }]) {
    const a = attrsOf(opts, { state_outputs: true });
    const blk = new mx.gluon.nn.HybridLambda((F, ...ins) => [...F.RNN(...ins, a)]);
    blk.hybridize();
    const hyb = checkGrad((...ins) => blk.forward(...ins), specs(opts, shape), {}, { seed: 60 });
    const eager = checkGrad((...ins) => nd.RNN(...ins, a), specs(opts, shape), {}, { seed: 60 });
    hyb.analytic.forEach((g, i) => assertClose(g, eager.analytic[i], { rtol: 1e-12, atol: 1e-12 }));
  }
  // with dropout inside a hybridized graph (training): the hidden mask feeds the backward node
  const opts = { mode: 'rnn_tanh', L: 2, D: 2, H: 3 };
  const blk = new mx.gluon.nn.HybridLambda((F, ...ins) => F.RNN(...ins, attrsOf(opts, { p: 0.3 })));
  blk.hybridize();
  checkGrad((...ins) => { mx.random.seed(12); return blk.forward(...ins); }, specs(opts, shape), {}, { seed: 61 });
});

test('RNN float32 gradients equal the float64 kernels\' at the same values', () => {
  const shape = [5, 3, 4];
  for (const opts of [{ mode: 'lstm', L: 2, D: 2, H: 6 }, { mode: 'gru', L: 2, D: 2, H: 5 }, { mode: 'rnn_tanh', L: 1, D: 2, H: 7 },
    { mode: 'lstm', L: 2, D: 1, H: 6, P: 3 }]) {
    const r = rng(70);
    const vals = specs(opts, shape).map((s) => ({ shape: s.shape, data: r.uniform(s.shape.reduce((x, y) => x * y, 1), s.low ?? -1, s.high ?? 1) }));
    const heads = [];
    const grads = ['float64', 'float32'].map((dtype) => {
      const xs = vals.map(({ shape: sh, data }) => nd.array(Array.from(data), { dtype }).reshape(sh));
      xs.forEach((x) => x.attachGrad());
      const outs = autograd.record(() => nd.RNN(...xs, attrsOf(opts, { state_outputs: true })));
      if (!heads.length) outs.forEach((o, k) => heads.push(rng(80 + k).uniform(o.size)));
      autograd.backward(outs, outs.map((o, k) => nd.array(Array.from(heads[k]), { dtype }).reshape(o.shape)));
      return xs.map((x) => Float64Array.from(x.grad.toTypedArray()));
    });
    grads[0].forEach((g, i) => assertClose(grads[1][i], g, { rtol: 1e-4, atol: 1e-5, msg: `${opts.mode} input ${i}` }));
  }
});

test('RNN float16 gradients (run on float32 copies) equal the float32 ones at the same values, to float16 precision', () => {
  const r = rng(90);
  const opts = { mode: 'lstm', L: 2, D: 2, H: 5 };
  const vals = specs(opts, [3, 2, 4]).map((sp) => ({ shape: sp.shape, data: r.uniform(sp.shape.reduce((x, y) => x * y, 1), sp.low ?? -1, sp.high ?? 1) }));
  const grads = ['float16', 'float32'].map((dtype) => {
    const xs = vals.map(({ shape: sh, data }) => nd.array(Array.from(data), { dtype: 'float16' }).astype(dtype).reshape(sh));
    xs.forEach((x) => x.attachGrad());
    autograd.record(() => nd.RNN(...xs, attrsOf(opts))).backward();
    assert.equal(xs[1].grad.dtype, dtype);
    return xs.map((x) => Float64Array.from(x.grad.astype('float32').toTypedArray()));
  });
  grads[1].forEach((g, i) => assertClose(grads[0][i], g, { rtol: 1e-2, atol: 2e-3, msg: `input ${i}` }));
});

test('_rnn_param_concat: the gradient of each input is its slice of the output gradient (finite differences)', () => {
  checkGrad('_rnn_param_concat', [{ shape: [6] }, { shape: [3] }, { shape: [4] }], { num_args: 3, dim: 0 });
  checkGrad('_rnn_param_concat', [{ shape: [2, 3] }, { shape: [2, 1] }], { num_args: 2, dim: 1 });
});
