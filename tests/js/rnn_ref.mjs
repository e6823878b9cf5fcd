// Helpers for tests/js/rnn_layers.test.mjs and rnn_cells.test.mjs (not a test file): plain float64
// JS recurrences written from MXNet 1.9.1's documented formulas (gluon/rnn/rnn_cell.py and
// rnn_layer.py docstrings; gate order i, f, g, o for LSTM and r, z, n for GRU), independent of the
// library, and a finite-difference check of a block's gradients (inputs and parameters).
import { assertClose, rng } from './oracle.mjs';
import * as mx from '../../dist/index.mjs';

const { nd, autograd } = mx;
const sigmoid = (v) => 1 / (1 + Math.exp(-v));
const ACT = { rnn_tanh: Math.tanh, rnn_relu: (v) => (v > 0 ? v : 0) };
export const GATES = { rnn_tanh: 1, rnn_relu: 1, lstm: 4, gru: 3 };

// y (rows) = W (rows x cols, row-major, from offset 0) v (cols, v[voff..]) + b1 + b2
function affine(W, rows, cols, v, voff, b1, b2) {
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = (b1 ? b1[r] : 0) + (b2 ? b2[r] : 0);
    for (let k = 0; k < cols; k++) s += W[r * cols + k] * v[voff + k];
    y[r] = s;
  }
  return y;
}

// One step of one cell for one batch item. w = {wx (G*H x In), wh (G*H x Ho), bx, bh, wr (P x H)?}.
// Returns {h (Ho), c (H)?}: the new state (and LSTM cell); the output is h.
export function cellStep(mode, w, H, In, x, xoff, h, c, opts = {}) {
  const Ho = w.wr ? opts.P : H;
  if (mode === 'gru') {
    const gx = affine(w.wx, 3 * H, In, x, xoff, w.bx, null);
    const gh = affine(w.wh, 3 * H, Ho, h, 0, w.bh, null);
    const hn = new Float64Array(H);
    for (let j = 0; j < H; j++) {
      const r = sigmoid(gx[j] + gh[j]);
      const z = sigmoid(gx[H + j] + gh[H + j]);
      const n = Math.tanh(gx[2 * H + j] + r * gh[2 * H + j]);
      hn[j] = (1 - z) * n + z * h[j];
    }
    return { h: hn };
  }
  const g = affine(w.wx, GATES[mode] * H, In, x, xoff, w.bx, w.bh);
  const gh = affine(w.wh, GATES[mode] * H, Ho, h, 0, null, null);
  for (let k = 0; k < g.length; k++) g[k] += gh[k];
  if (mode !== 'lstm') return { h: g.map(ACT[mode]) };
  const cn = new Float64Array(H), hn = new Float64Array(H);
  for (let j = 0; j < H; j++) {
    const i = sigmoid(g[j]), f = sigmoid(g[H + j]), gg = Math.tanh(g[2 * H + j]), o = sigmoid(g[3 * H + j]);
    let cc = f * c[j] + i * gg;
    if (opts.clip) cc = Math.min(Math.max(cc, opts.clip[0]), opts.clip[1]);
    cn[j] = cc;
    hn[j] = o * Math.tanh(cc);
  }
  return { h: w.wr ? affine(w.wr, opts.P, H, hn, 0, null, null) : hn, c: cn };
}

// The fused layer: x (T, N, I) flat in TNC, params name -> Float64Array ('l0_i2h_weight', ...),
// h0 (L*D, N, Ho), c0 (L*D, N, H) (LSTM). seqLen: per-item lengths (outputs 0 past them, states
// frozen, the reverse direction starting at len - 1). Returns {out (T, N, D*Ho), h (L*D, N, Ho), c}.
export function refLayer({ mode, L, D, H, P = null, clip = null }, x, [T, N, I], params, h0, c0, seqLen = null) {
  const Ho = P ?? H;
  let input = Float64Array.from(x), In = I;
  const hN = new Float64Array(L * D * N * Ho), cN = new Float64Array(L * D * N * H);
  for (let l = 0; l < L; l++) {
    const out = new Float64Array(T * N * D * Ho);
    for (let d = 0; d < D; d++) {
      const k = `${'lr'[d]}${l}_`;
      const w = { wx: params[`${k}i2h_weight`], wh: params[`${k}h2h_weight`], bx: params[`${k}i2h_bias`], bh: params[`${k}h2h_bias`], wr: params[`${k}h2r_weight`] };
      const si = l * D + d;
      for (let n = 0; n < N; n++) {
        let h = h0.slice((si * N + n) * Ho, (si * N + n + 1) * Ho);
        let c = c0 ? c0.slice((si * N + n) * H, (si * N + n + 1) * H) : null;
        const len = seqLen ? seqLen[n] : T;
        for (let s = 0; s < len; s++) {
          const t = d === 0 ? s : len - 1 - s;
          const r = cellStep(mode, w, H, In, input, (t * N + n) * In, h, c, { P, clip });
          h = r.h;
          c = r.c ?? null;
          for (let j = 0; j < Ho; j++) out[(t * N + n) * D * Ho + d * Ho + j] = h[j];
        }
        hN.set(h, (si * N + n) * Ho);
        if (c) cN.set(c, (si * N + n) * H);
      }
    }
    input = out;
    In = D * Ho;
  }
  return { out: input, h: hN, c: mode === 'lstm' ? cN : null };
}

// (A, B, C) <-> (B, A, C)
export function swap01(a, [A, B, C]) {
  const o = new Float64Array(a.length);
  for (let i = 0; i < A; i++) for (let j = 0; j < B; j++) for (let k = 0; k < C; k++) o[(j * A + i) * C + k] = a[(i * B + j) * C + k];
  return o;
}

export const f64 = (x) => Float64Array.from(x.toTypedArray());
// A layer's or cell's parameters by local name ('l0_i2h_weight', 'i2h_weight'), as float64.
export function paramValues(block) {
  const out = {};
  for (const [k, p] of block._regParams) out[k] = f64(p.data());
  return out;
}
export function randomArray(shape, seed, dtype = 'float32', lo = -1, hi = 1) {
  const n = shape.reduce((a, b) => a * b, 1);
  return nd.array(Array.from(rng(seed).uniform(n, lo, hi), Number), { dtype }).reshape(shape);
}
// Every parameter of a block set to uniform(-s, s) values (deterministic).
export function randomizeParams(block, seed, s = 0.5) {
  let k = seed;
  for (const p of block.collectParams().values()) {
    const v = randomArray(p.shape, k++, p.dtype, -s, s);
    p.setData(v);
    v.dispose();
  }
}

// Finite-difference check of d sum(head * out) / d (inputs and every parameter of `block`):
// run(...inputs) returns an NDArray or a (nested) list of them. float64 throughout.
export function checkBlockGrad(block, run, inputs, { eps = 1e-6, rtol = 1e-5, atol = 1e-7, seed = 3, msg = '' } = {}) {
  const flatOut = (o) => (Array.isArray(o) ? o.flatMap(flatOut) : [o]);
  const params = [...block.collectParams().values()].filter((p) => p.gradReq !== 'null');
  for (const x of inputs) x.attachGrad();
  const outs = flatOut(autograd.record(() => run(...inputs)));
  const r = rng(seed);
  const heads = outs.map((o) => nd.array(Array.from(r.uniform(o.size), Number), { dtype: o.dtype }).reshape(o.shape));
  autograd.backward(outs, heads);
  const headVals = heads.map(f64);
  const analytic = [...inputs.map((x) => f64(x.grad)), ...params.map((p) => f64(p.grad()))];
  const objective = () => {
    const o = flatOut(autograd.pause(() => run(...inputs)));
    let s = 0;
    o.forEach((t, k) => { const v = t.toTypedArray(); for (let j = 0; j < v.length; j++) s += headVals[k][j] * v[j]; });
    return s;
  };
  const targets = [
    ...inputs.map((x, i) => ({ name: `input${i}`, get: () => x, set: (v) => { x.set(v); } })),
    ...params.map((p) => ({ name: p.name, get: () => p.data(), set: (v) => { p.data().set(v); } })),
  ];
  targets.forEach((tg, ti) => {
    const base = f64(tg.get());
    const shape = tg.get().shape, dtype = tg.get().dtype;
    const g = new Float64Array(base.length);
    for (let j = 0; j < base.length; j++) {
      const probe = (delta) => {
        const vals = Float64Array.from(base);
        vals[j] += delta;
        const a = nd.array(Array.from(vals), { dtype }).reshape(shape);
        tg.set(a);
        a.dispose();
        return objective();
      };
      g[j] = (probe(eps) - probe(-eps)) / (2 * eps);
    }
    const a = nd.array(Array.from(base), { dtype }).reshape(shape);
    tg.set(a);
    a.dispose();
    assertClose(analytic[ti], g, { rtol, atol, msg: `${msg} d/d${tg.name}` });
  });
}
