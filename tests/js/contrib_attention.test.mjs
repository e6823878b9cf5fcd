// GluonNLP's fused attention products (csrc/ops/contrib_attention.c) against a float64 JS
// rewrite of the "equivalent code" MXNet 1.9.1 documents for each op (transformer.cc): the
// interleaved projections reshaped to (T, S, heads, 3 or 2, D), transposed to (S * heads, T, D),
// then batch_dot (q scaled by 1 / sqrt(D)). Shapes of test_multihead_attention_selfatt/encdec
// (T 7, batch 2, 3 heads of 5) and larger ones through the packed gemm, shape rules and errors,
// and every gradient by finite differences (tests/js/grad_check.mjs).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';
import { checkGrad } from './grad_check.mjs';

const { nd, sym } = mx;
const arr = (data, shape, dtype = 'float32') => nd.array(Array.from(data), { dtype }).reshape(shape);
const flat = (a) => Float64Array.from(a.toTypedArray(), Number);
const isErr = (re) => (e) => e instanceof mx.MXNetError && re.test(e.message);

// proj(x, T, S, H, D, parts, which) -> [b][t] vectors of length D, b = s * H + h: the reshape to
// (T, S, H, parts, D), part `which`, transposed to (S, H, T, D) and flattened to (S * H, T, D)
function proj(x, T, S, H, D, parts, which) {
  const out = [];
  for (let s = 0; s < S; s++) {
    for (let h = 0; h < H; h++) {
      const rows = [];
      for (let t = 0; t < T; t++) {
        const base = (((t * S + s) * H + h) * parts + which) * D;
        rows.push(Array.from({ length: D }, (_, d) => x[base + d]));
      }
      out.push(rows);
    }
  }
  return out;
}
const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
// batch_dot(q / sqrt(D), k, transpose_b=True) -> (B, Tq, Tk), flattened
function scores(q, k, D) {
  const out = [];
  for (let b = 0; b < q.length; b++) for (const qi of q[b]) for (const kj of k[b]) out.push(dot(qi, kj) / Math.sqrt(D));
  return Float64Array.from(out);
}
// batch_dot(att, v) -> (B, Tq, D), transposed back to (Tq, S, H * D)
function weighted(att, v, Tq, Tk, S, H, D) {
  const out = new Float64Array(Tq * S * H * D);
  for (let s = 0; s < S; s++) {
    for (let h = 0; h < H; h++) {
      const b = s * H + h;
      for (let i = 0; i < Tq; i++) {
        for (let d = 0; d < D; d++) {
          let acc = 0;
          for (let j = 0; j < Tk; j++) acc += att[(b * Tq + i) * Tk + j] * v[b][j][d];
          out[((i * S + s) * H + h) * D + d] = acc;
        }
      }
    }
  }
  return out;
}

const CASES = [['float64', 7, 2, 3, 5, 1e-12], ['float32', 7, 2, 3, 5, 1e-5], ['float32', 33, 3, 4, 16, 1e-5]];
for (const [dtype, T, S, H, D, tol] of CASES) {
  test(`selfatt_qk and selfatt_valatt (${dtype}, T ${T}, batch ${S}, ${H} heads of ${D}) vs the documented equivalent code`, () => {
    const r = rng(T * 100 + D);
    const qkvV = r.uniform(T * S * 3 * H * D, -1, 1), attV = r.uniform(S * H * T * T, 0, 1);
    const qkv = arr(qkvV, [T, S, 3 * H * D], dtype);
    const q = proj(qkvV, T, S, H, D, 3, 0), k = proj(qkvV, T, S, H, D, 3, 1), v = proj(qkvV, T, S, H, D, 3, 2);
    const sc = nd._contrib_interleaved_matmul_selfatt_qk(qkv, { heads: H });
    assert.deepEqual(sc.shape, [S * H, T, T]);
    assertClose(flat(sc), scores(q, k, D), { rtol: tol, atol: tol, msg: 'qk' });
    const out = nd._contrib_interleaved_matmul_selfatt_valatt(qkv, arr(attV, [S * H, T, T], dtype), { heads: H });
    assert.deepEqual(out.shape, [T, S, H * D]);
    assertClose(flat(out), weighted(attV, v, T, T, S, H, D), { rtol: tol, atol: tol, msg: 'valatt' });
  });

  test(`encdec_qk and encdec_valatt (${dtype}, Tq ${T}, Tk ${T - 3}, batch ${S}, ${H} heads of ${D}) vs the documented equivalent code`, () => {
    const r = rng(T * 10 + D);
    const Tq = T, Tk = T - 3;
    const qV = r.uniform(Tq * S * H * D, -1, 1), kvV = r.uniform(Tk * S * 2 * H * D, -1, 1);
    const attV = r.uniform(S * H * Tq * Tk, 0, 1);
    const q = proj(qV, Tq, S, H, D, 1, 0), k = proj(kvV, Tk, S, H, D, 2, 0), v = proj(kvV, Tk, S, H, D, 2, 1);
    const kv = arr(kvV, [Tk, S, 2 * H * D], dtype);
    const sc = nd._contrib_interleaved_matmul_encdec_qk(arr(qV, [Tq, S, H * D], dtype), kv, { heads: H });
    assert.deepEqual(sc.shape, [S * H, Tq, Tk]);
    assertClose(flat(sc), scores(q, k, D), { rtol: tol, atol: tol, msg: 'qk' });
    const out = nd._contrib_interleaved_matmul_encdec_valatt(kv, arr(attV, [S * H, Tq, Tk], dtype), { heads: H });
    assert.deepEqual(out.shape, [Tq, S, H * D]);
    assertClose(flat(out), weighted(attV, v, Tq, Tk, S, H, D), { rtol: tol, atol: tol, msg: 'valatt' });
  });
}

test('interleaved attention: a hand-worked head (one sequence, one head of 2)', () => {
  // T = 2, qkv rows [q | k | v]: q0 = (1, 0), k0 = (1, 1), v0 = (2, 0); q1 = (0, 2), k1 = (0, 1), v1 = (0, 4)
  const qkv = nd.array([[[1, 0, 1, 1, 2, 0]], [[0, 2, 0, 1, 0, 4]]]);
  const s2 = Math.SQRT2;
  assertClose(flat(nd._contrib_interleaved_matmul_selfatt_qk(qkv, { heads: 1 })), [1 / s2, 0, 2 / s2, 2 / s2],
    { rtol: 1e-6 });
  // attention [[1, 0], [0.25, 0.75]] -> rows v0 and 0.25 v0 + 0.75 v1
  const out = nd._contrib_interleaved_matmul_selfatt_valatt(qkv, nd.array([[[1, 0], [0.25, 0.75]]]), { heads: 1 });
  assert.deepEqual(out.toArray(), [[[2, 0]], [[0.5, 3]]]);
});

test('interleaved attention: shape inference, input names, MXNet\'s shape rules and dtype errors', () => {
  const s = sym._contrib_interleaved_matmul_selfatt_valatt(sym.var('qkv'), sym.var('att'), { heads: 4 });
  assert.deepEqual(s.listArguments(), ['qkv', 'att']);
  const [args, outs] = s.inferShape({ qkv: [10, 3, 96] });
  assert.deepEqual(args, [[10, 3, 96], [12, 10, 10]]);
  assert.deepEqual(outs, [[10, 3, 32]]);
  assert.deepEqual(sym._contrib_interleaved_matmul_encdec_qk(sym.var('q'), sym.var('kv'), { heads: 2 })
    .inferShape({ q: [5, 3, 8], kv: [9, 3, 16] })[1], [[6, 5, 9]]);
  const e = nd.zeros([4, 2, 12]);
  assert.throws(() => nd._contrib_interleaved_matmul_selfatt_qk(e), mx.MXNetError); // heads is required
  const qk = (x) => nd._contrib_interleaved_matmul_selfatt_qk(x, { heads: 2 });
  assert.throws(() => qk(nd.zeros([4, 12])), isErr(/should be 3D/));
  assert.throws(() => qk(nd.zeros([4, 2, 10])), isErr(/multiple of 3/));
  assert.throws(() => nd._contrib_interleaved_matmul_selfatt_valatt(e, nd.zeros([4, 4, 3]), { heads: 2 }),
    mx.MXNetError);
  assert.throws(() => nd._contrib_interleaved_matmul_encdec_qk(nd.zeros([4, 2, 6]), nd.zeros([5, 2, 10]), { heads: 2 }),
    isErr(/queries.shape\[2\] \* 2/));
  assert.throws(() => nd._contrib_interleaved_matmul_encdec_valatt(nd.zeros([5, 2, 12]), nd.zeros([3, 4, 5]),
    { heads: 2 }), isErr(/keys_values.shape\[1\] \* heads/));
  assert.throws(() => nd._contrib_interleaved_matmul_selfatt_qk(e.astype('float16'), { heads: 2 }), isErr(/Only FP32/));
});

test('interleaved attention: gradients by finite differences (every input, the unread parts get zeros)', () => {
  const [T, S, H, D] = [4, 2, 2, 3];
  checkGrad('_contrib_interleaved_matmul_selfatt_qk', [{ shape: [T, S, 3 * H * D] }], { heads: H });
  checkGrad('_contrib_interleaved_matmul_selfatt_valatt', [{ shape: [T, S, 3 * H * D] }, { shape: [S * H, T, T] }],
    { heads: H });
  checkGrad('_contrib_interleaved_matmul_encdec_qk', [{ shape: [T, S, H * D] }, { shape: [T + 1, S, 2 * H * D] }],
    { heads: H });
  checkGrad('_contrib_interleaved_matmul_encdec_valatt',
    [{ shape: [T + 1, S, 2 * H * D] }, { shape: [S * H, T, T + 1] }], { heads: H });
  // the values are not read by the scores: their gradient is exactly zero
  const x = arr(rng(1).uniform(T * S * 3 * H * D), [T, S, 3 * H * D]);
  x.attachGrad();
  mx.autograd.record(() => nd._contrib_interleaved_matmul_selfatt_qk(x, { heads: H })).backward();
  const g = flat(x.grad);
  for (let i = 0; i < g.length; i++) if (Math.floor(i / D) % 3 === 2) assert.equal(g[i], 0, `value gradient ${i}`);
});
