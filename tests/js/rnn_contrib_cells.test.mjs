// gluon.contrib.rnn's LSTMPCell and VariationalDropoutCell (js/rnn.mjs; MXNet 1.9.1
// python/mxnet/gluon/contrib/rnn/rnn_cell.py): LSTMP against its equations computed here in
// float64 from the cell's own weights, imperative and hybridized; the variational masks are the
// same at every step of a sequence (a pass-through base cell shows them), new after reset(), and
// absent outside training.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, gluon, autograd } = mx;
const { LSTMPCell, VariationalDropoutCell } = gluon.contrib.rnn;
const sig = (v) => 1 / (1 + Math.exp(-v));
const mv = (W, x) => W.map((row) => row.reduce((s, w, j) => s + w * x[j], 0)); // W (m, n) x (n,)

test('LSTMPCell: i, f, g, o gates, c = f c + i g, h = o tanh(c), r = W_hr h; states [r, c]', () => {
  const [H, P, I, N, T] = [5, 3, 4, 2, 4];
  const cell = new LSTMPCell(H, P, { input_size: I, prefix: 'lstmp_' });
  cell.initialize(new mx.init.Uniform(0.5));
  cell.i2h_bias.setData(nd.array(Array.from(rng(3).uniform(4 * H, -0.5, 0.5))));
  const W = Object.fromEntries(['i2h_weight', 'h2h_weight', 'h2r_weight', 'i2h_bias', 'h2h_bias'].map((k) => [k, cell[k].data().toArray()]));
  const x = Array.from(rng(4).uniform(N * T * I, -1, 1), Number);
  const xs = nd.array(x).reshape([N, T, I]);
  const ref = [];
  const r = Array.from({ length: N }, () => new Array(P).fill(0)), c = Array.from({ length: N }, () => new Array(H).fill(0));
  for (let t = 0; t < T; t++) {
    const outT = [];
    for (let n = 0; n < N; n++) {
      const xt = x.slice((n * T + t) * I, (n * T + t + 1) * I);
      const g = mv(W.i2h_weight, xt).map((v, k) => v + W.i2h_bias[k] + mv(W.h2h_weight, r[n])[k] + W.h2h_bias[k]);
      const gate = (q) => g.slice(q * H, (q + 1) * H);
      const cNew = gate(0).map((v, k) => sig(gate(1)[k]) * c[n][k] + sig(v) * Math.tanh(gate(2)[k]));
      const h = cNew.map((v, k) => sig(gate(3)[k]) * Math.tanh(v));
      c[n] = cNew;
      r[n] = mv(W.h2r_weight, h);
      outT.push(r[n]);
    }
    ref.push(outT);
  }
  const want = []; // (N, T, P)
  for (let n = 0; n < N; n++) for (let t = 0; t < T; t++) want.push(...ref[t][n]);
  for (const hybrid of [false, true]) {
    if (hybrid) cell.hybridize();
    const [out, states] = cell.unroll(T, xs, null, 'NTC', true);
    assertClose(out.toTypedArray(), want, { rtol: 1e-5, atol: 1e-6 });
    assert.deepEqual(states.map((s) => s.shape), [[N, P], [N, H]]);
    assertClose(states[1].toTypedArray(), c.flat(), { rtol: 1e-5, atol: 1e-6 });
  }
  assert.equal(String(cell), 'LSTMPCell(4 -> 20 -> 3)');
  assert.deepEqual(cell.stateInfo(7).map((s) => s.shape), [[7, 3], [7, 5]]);
});

// a base cell whose output is its input plus its (masked) first state, and whose next state is ones
class PassCell extends gluon.rnn.HybridRecurrentCell {
  stateInfo(batchSize = 0) { return [{ shape: [batchSize, 6], __layout__: 'NC' }]; }
  hybridForward(F, inputs, states) { return [F.elemwise_add(inputs, states[0]), [F.ones_like(states[0])]]; }
}

test('VariationalDropoutCell: one mask per sequence for inputs, states and outputs; fresh after reset; none in prediction', () => {
  const T = 4;
  for (const [di, ds, dout] of [[0.5, 0, 0], [0, 0.5, 0], [0, 0, 0.5], [0.5, 0.5, 0.5]]) {
    const cell = new VariationalDropoutCell(new PassCell(), di, ds, dout);
    const x = nd.ones([3, T, 6]);
    const begin = [nd.ones([3, 6])];
    let out;
    autograd.record(() => { [out] = cell.unroll(T, x, begin, 'NTC', true); });
    const v = out.toArray();
    // every step equals the first: the masks do not change along the sequence
    for (let t = 1; t < T; t++) assert.deepEqual(v.map((row) => row[t]), v.map((row) => row[0]));
    const vals = new Set(v.flat(2));
    const scale = (p) => 1 / (1 - p);
    // inputs and states ones: (mask_in x + mask_state s) * mask_out, each mask 0 or 1/(1-p)
    const most = ((di ? scale(di) : 1) + (ds ? scale(ds) : 1)) * (dout ? scale(dout) : 1);
    for (const val of vals) assert.ok(val >= 0 && val <= most + 1e-6, `${val} within [0, ${most}]`);
    assert.ok(vals.size > 1, `some elements are dropped (${[...vals]})`);
    // prediction: no dropout at all
    const [pred] = cell.unroll(T, x, begin, 'NTC', true);
    assert.deepEqual([...new Set(pred.toArray().flat(2))], [2]);
  }
  // step by step, the masks are kept until reset()
  const cell = new VariationalDropoutCell(new PassCell(), 0.5);
  const a = [], b = [];
  autograd.record(() => {
    for (let t = 0; t < 3; t++) a.push(cell(nd.ones([4, 6]), [nd.zeros([4, 6])])[0].toArray());
    cell.reset();
    b.push(cell(nd.ones([4, 6]), [nd.zeros([4, 6])])[0].toArray());
  });
  assert.deepEqual(a[1], a[0]);
  assert.deepEqual(a[2], a[0]);
  assert.notDeepEqual(b[0], a[0]); // (a new draw: equal with probability 2^-24)
  assert.equal(String(cell), 'VariationalDropoutCell(p_out = 0.0, p_state = 0.0)');
  assert.throws(() => new VariationalDropoutCell(new gluon.rnn.BidirectionalCell(new PassCell(), new PassCell()), 0, 0.5), mx.MXNetError);
});
