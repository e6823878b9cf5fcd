// gluon.contrib.rnn's LSTMPCell, VariationalDropoutCell and Conv<d>D cells (js/rnn.mjs; MXNet 1.9.1
// python/mxnet/gluon/contrib/rnn/rnn_cell.py): LSTMP against its equations computed here in
// float64 from the cell's own weights, imperative and hybridized; the variational masks are the
// same at every step of a sequence (a pass-through base cell shows them), new after reset(), and
// absent outside training; ConvLSTM / ConvGRU against gates computed with TF.js conv2d.
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

// TF.js conv2d (NCHW data, (F, C, kh, kw) weights) with `pad` on both sides, plus a bias
function tfConv(tf, x, xShape, w, wShape, b, pad) {
  const tx = tf.transpose(tf.tensor4d(x, xShape), [0, 2, 3, 1]);
  const tw = tf.transpose(tf.tensor4d(w, wShape), [2, 3, 1, 0]);
  const y = tf.transpose(tf.conv2d(tx, tw, 1, [[0, 0], [pad, pad], [pad, pad], [0, 0]]), [0, 3, 1, 2]);
  return tf.add(y, tf.reshape(tf.tensor1d(b), [1, -1, 1, 1]));
}

test('Conv2DLSTMCell and Conv2DGRUCell: two steps against the gates computed with TF.js conv2d; Conv1D/3D shapes', async () => {
  const { tf } = await import('./oracle.mjs');
  const [N, C, S, Hc] = [2, 3, 6, 4];
  const x = [0, 1].map((t) => Array.from(rng(20 + t).uniform(N * C * S * S, -1, 1), Number));
  for (const kind of ['LSTM', 'GRU']) {
    const G = kind === 'LSTM' ? 4 : 3;
    const cell = new gluon.contrib.rnn[`Conv2D${kind}Cell`]([C, S, S], Hc, 3, 3, { i2h_pad: 1 });
    cell.initialize(new mx.init.Uniform(0.4));
    for (const k of ['i2h_bias', 'h2h_bias']) cell[k].setData(nd.array(Array.from(rng(k.length).uniform(G * Hc, -0.3, 0.3))));
    const W = Object.fromEntries(['i2h_weight', 'h2h_weight', 'i2h_bias', 'h2h_bias'].map((k) => [k, Array.from(cell[k].data().toTypedArray())]));
    let h = tf.zeros([N, Hc, S, S]), c = tf.zeros([N, Hc, S, S]);
    for (let t = 0; t < 2; t++) {
      const i2h = tfConv(tf, x[t], [N, C, S, S], W.i2h_weight, [G * Hc, C, 3, 3], W.i2h_bias, 1);
      const h2h = tfConv(tf, h.dataSync(), [N, Hc, S, S], W.h2h_weight, [G * Hc, Hc, 3, 3], W.h2h_bias, 1);
      if (kind === 'LSTM') {
        const [gi, gf, gc, go] = tf.split(tf.add(i2h, h2h), 4, 1);
        c = tf.add(tf.mul(tf.sigmoid(gf), c), tf.mul(tf.sigmoid(gi), tf.tanh(gc)));
        h = tf.mul(tf.sigmoid(go), tf.tanh(c));
      } else {
        const [ir, iz, ih] = tf.split(i2h, 3, 1), [hr, hz, hh] = tf.split(h2h, 3, 1);
        const r = tf.sigmoid(tf.add(ir, hr)), z = tf.sigmoid(tf.add(iz, hz));
        const tmp = tf.tanh(tf.add(ih, tf.mul(r, hh)));
        h = tf.add(tf.mul(tf.sub(1, z), tmp), tf.mul(z, h));
      }
    }
    const xs = nd.stack(...x.map((v) => nd.array(v).reshape([N, C, S, S])), { axis: 1 });
    for (const hybrid of [false, true]) {
      if (hybrid) cell.hybridize();
      const [out, states] = cell.unroll(2, xs, null, 'NTC', true);
      assert.deepEqual(out.shape, [N, 2, Hc, S, S]);
      assertClose(states[0].toTypedArray(), h.dataSync(), { rtol: 1e-4, atol: 1e-5 });
      if (kind === 'LSTM') assertClose(states[1].toTypedArray(), c.dataSync(), { rtol: 1e-4, atol: 1e-5 });
    }
    assert.equal(String(cell), `Conv2D${kind}Cell(3 -> ${G * Hc}, tanh, NCHW)`);
  }
  // the state takes the i2h convolution's output size (no padding: 6 - 3 + 1); 1-D and 3-D
  const c1 = new gluon.contrib.rnn.Conv1DRNNCell([2, 7], 3, 3, 5);
  assert.deepEqual(c1.stateInfo(4)[0].shape, [4, 3, 5]);
  const c3 = new gluon.contrib.rnn.Conv3DLSTMCell([1, 4, 4, 4], 2, [1, 3, 3], 3, { i2h_pad: [0, 1, 1] });
  c3.initialize();
  const [o3] = c3.unroll(2, nd.ones([1, 2, 1, 4, 4, 4]), null, 'NTC', true);
  assert.deepEqual(o3.shape, [1, 2, 2, 4, 4, 4]);
  assert.throws(() => new gluon.contrib.rnn.Conv2DGRUCell([3, 6, 6], 4, 3, 2), mx.MXNetError); // even h2h kernel
});
