// CTCLoss (nd.CTCLoss and its aliases, sym.CTCLoss, gluon.loss.CTCLoss) against an independent
// oracle: the CTC probability summed by brute force over every one of the A^T frame paths (collapse
// repeats, drop blanks, keep the paths that spell the label), in float64, for blank 'first' and
// 'last', padding, label and data lengths, repeated labels; warp-ctc's "no alignment fits" case by
// hand; the gradient against central finite differences of the loss (checkGrad); a tiny model
// trained with it decodes its target; bad labels and lengths are errors naming the value.
import test from 'node:test';
import { checkGrad, assert, assertClose, rng, mx, nd, autograd } from './grad_check.mjs';

const { gluon } = mx;

function softmaxRows(rows) {
  return rows.map((r) => {
    const m = Math.max(...r);
    const e = r.map((v) => Math.exp(v - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
  });
}
// -log p(label | acts) over every path of length T (acts: T rows of A activations).
function bruteCTC(acts, label, blank) {
  const T = acts.length;
  if (T === 0) return label.length === 0 ? 0 : Infinity;
  const A = acts[0].length;
  const p = softmaxRows(acts);
  const path = new Array(T).fill(0);
  let total = 0;
  for (let code = 0; code < A ** T; code++) {
    let c = code;
    for (let t = 0; t < T; t++) { path[t] = c % A; c = Math.floor(c / A); }
    const out = [];
    for (let t = 0; t < T; t++) if (path[t] !== blank && (t === 0 || path[t] !== path[t - 1])) out.push(path[t]);
    if (out.length !== label.length || out.some((v, i) => v !== label[i])) continue;
    let pr = 1;
    for (let t = 0; t < T; t++) pr *= p[t][path[t]];
    total += pr;
  }
  return -Math.log(total);
}
// The (T, N, A) array's sequence b, its first `steps` rows.
const seqOf = (d, b, steps) => d.slice(0, steps).map((row) => row[b]);
const randomActs = (shape, seed, dtype = 'float64') =>
  nd.array(Array.from(rng(seed).uniform(shape.reduce((a, b) => a * b, 1), -2, 2), Number), { dtype }).reshape(shape);

test('CTCLoss equals the brute-force sum over paths: blank first, padding 0, repeated labels', () => {
  const T = 5, N = 4, A = 4;
  const data = randomActs([T, N, A], 11);
  // labels 1..3; a row ends at its first 0; [3, 3] needs a blank between the repeats
  const label = nd.array([[1, 2, 0], [3, 3, 0], [1, 2, 1], [2, 0, 0]], { dtype: 'float64' });
  const want = [[1, 2], [3, 3], [1, 2, 1], [2]].map((l, b) => bruteCTC(seqOf(data.toArray(), b, T), l, 0));
  assertClose(nd.CTCLoss(data, label).toTypedArray(), want, { rtol: 1e-12, atol: 1e-12 });
  // the aliases are the same op; a float32 run agrees to float rounding
  assertClose(nd.ctc_loss(data, label).toTypedArray(), want, { rtol: 1e-12, atol: 1e-12 });
  assertClose(nd.contrib.CTCLoss(data.astype('float32'), label).toTypedArray(), want, { rtol: 1e-5, atol: 1e-6 });
  assertClose(nd.contrib.ctc_loss(data.astype('float32'), label.astype('int32')).toTypedArray(), want, { rtol: 1e-5, atol: 1e-6 });
});

test('CTCLoss with blank last (padding -1), label lengths and data lengths', () => {
  const T = 5, N = 3, A = 4;
  const data = randomActs([T, N, A], 12);
  const d = data.toArray();
  const label = nd.array([[0, 1, -1], [2, 2, -1], [0, 1, 0]], { dtype: 'float64' });
  const labs = [[0, 1], [2, 2], [0, 1, 0]];
  assertClose(nd.CTCLoss(data, label, { blank_label: 'last' }).toTypedArray(),
    labs.map((l, b) => bruteCTC(seqOf(d, b, T), l, 3)), { rtol: 1e-12, atol: 1e-12 });
  // label_lengths (the padding value is then an ordinary entry past the length); data_lengths
  // absent: Python's None in its slot, which MXNet's generated function leaves out
  const ll = nd.array([1, 2, 3]);
  assertClose(nd.CTCLoss(data, label, null, ll, { use_label_lengths: true, blank_label: 'last' }).toTypedArray(),
    [[0], [2, 2], [0, 1, 0]].map((l, b) => bruteCTC(seqOf(d, b, T), l, 3)), { rtol: 1e-12, atol: 1e-12 });
  // by name
  assertClose(nd.CTCLoss(data, label, { label_lengths: ll, use_label_lengths: true, blank_label: 'last' }).toTypedArray(),
    [[0], [2, 2], [0, 1, 0]].map((l, b) => bruteCTC(seqOf(d, b, T), l, 3)), { rtol: 1e-12, atol: 1e-12 });
  // data_lengths: each sequence sees its first steps only; both lengths together
  const dl = nd.array([5, 4, 3]);
  assertClose(nd.CTCLoss(data, label, dl, { use_data_lengths: true, blank_label: 'last' }).toTypedArray(),
    labs.map((l, b) => bruteCTC(seqOf(d, b, [5, 4, 3][b]), l, 3)), { rtol: 1e-12, atol: 1e-12 });
  assertClose(nd.CTCLoss(data, label, dl, ll, { use_data_lengths: true, use_label_lengths: true, blank_label: 'last' }).toTypedArray(),
    [[0], [2, 2], [0, 1, 0]].map((l, b) => bruteCTC(seqOf(d, b, [5, 4, 3][b]), l, 3)), { rtol: 1e-12, atol: 1e-12 });
  // a hole whose flag is on is still an error
  assert.throws(() => nd.CTCLoss(data, label, null, ll, { use_data_lengths: true, use_label_lengths: true }), /missing/);
});

test('a label that cannot fit its steps gives loss 0 and gradient 0 (warp-ctc), empty labels their path', () => {
  const T = 3, N = 2, A = 3;
  const data = randomActs([T, N, A], 13);
  // [1, 1, 1] needs 5 frames (two blanks between the repeats); [] is the all-blank path
  const label = nd.array([[1, 1, 1], [0, 0, 0]], { dtype: 'float64' });
  data.attachGrad();
  const loss = autograd.record(() => nd.CTCLoss(data, label));
  loss.backward();
  const p = softmaxRows(seqOf(data.toArray(), 1, T));
  assertClose(loss.toTypedArray(), [0, -Math.log(p[0][0] * p[1][0] * p[2][0])], { rtol: 1e-12, atol: 1e-12 });
  const g = data.grad.toArray();
  for (let t = 0; t < T; t++) assert.deepEqual(g[t][0], [0, 0, 0]);
  // the all-blank path: d(-log prod_t y_t(0)) / d a_t(k) = y_t(k) - [k == 0]
  for (let t = 0; t < T; t++) assertClose(g[t][1], p[t].map((v, k) => v - (k === 0)), { rtol: 1e-12, atol: 1e-12 });
});

test('CTCLoss gradient against finite differences (float64), with lengths; steps past a length get none', () => {
  const label = nd.array([[1, 2, 2], [3, 0, 0], [2, 1, 3]], { dtype: 'float64' });
  checkGrad('CTCLoss', [{ shape: [6, 3, 4], low: -2, high: 2 }, label], {}, { wrt: [0] });
  checkGrad('CTCLoss', [{ shape: [6, 3, 4], low: -2, high: 2 }, label, nd.array([6, 3, 4]), nd.array([3, 1, 2])],
    { use_data_lengths: true, use_label_lengths: true }, { wrt: [0], seed: 9 });
  checkGrad('ctc_loss', [{ shape: [5, 2, 5], low: -3, high: 3 }, nd.array([[0, 1, 1, 2], [3, 2, -1, -1]])],
    { blank_label: 'last' }, { wrt: [0], seed: 10 });
  const data = randomActs([6, 3, 4], 14);
  data.attachGrad();
  autograd.record(() => nd.CTCLoss(data, label, nd.array([6, 3, 4]), { use_data_lengths: true })).backward();
  const g = data.grad.toArray();
  for (const [b, steps] of [[1, 3], [2, 4]]) {
    for (let t = steps; t < 6; t++) assert.deepEqual(g[t][b], [0, 0, 0, 0], `steps past sequence ${b}'s length`);
  }
  // the head gradient scales each sequence's gradient (MXNet's _backward_ctc_loss)
  const g1 = Float64Array.from(data.grad.toTypedArray());
  autograd.record(() => nd.CTCLoss(data, label, nd.array([6, 3, 4]), { use_data_lengths: true }))
    .backward(nd.array([2, -1, 0.5], { dtype: 'float64' }));
  const g2 = data.grad.toArray().flat(2);
  const scale = [2, -1, 0.5];
  assertClose(g2, Array.from(g1, (v, i) => v * scale[Math.floor(i / 4) % 3]), { rtol: 1e-12, atol: 1e-15 });
});

test('gluon.loss.CTCLoss: layouts, lengths, sample weights, imperative and hybridized', () => {
  const N = 3, T = 4, A = 4;
  const predNTC = randomActs([N, T, A], 15, 'float32');
  const p = predNTC.toArray(); // (N, T, A)
  const acts = (b, steps = T) => p[b].slice(0, steps).map((r) => Array.from(r));
  // Gluon uses blank_label 'last': labels 0..2, padding -1
  const labelNT = nd.array([[0, 1, -1], [2, 2, -1], [1, -1, -1]]);
  const want = [[0, 1], [2, 2], [1]].map((l, b) => bruteCTC(acts(b), l, 3));
  for (const hybrid of [false, true]) {
    const L = new gluon.loss.CTCLoss();
    if (hybrid) L.hybridize();
    assertClose(L(predNTC, labelNT).toTypedArray(), want, { rtol: 1e-5, atol: 1e-6 });
    // TNC pred and TN label, positionally and by name
    const Lt = new gluon.loss.CTCLoss('TNC', 'TN');
    const Ln = new gluon.loss.CTCLoss({ layout: 'TNC', labelLayout: 'TN' });
    if (hybrid) { Lt.hybridize(); Ln.hybridize(); }
    assertClose(Lt(predNTC.swapaxes(0, 1), labelNT.T).toTypedArray(), want, { rtol: 1e-5, atol: 1e-6 });
    assertClose(Ln(predNTC.swapaxes(0, 1), labelNT.T).toTypedArray(), want, { rtol: 1e-5, atol: 1e-6 });
    // pred_lengths and label_lengths, then a sample weight and the scalar weight
    const pl = nd.array([4, 3, 2]), ll = nd.array([1, 2, 1]);
    const wantLen = [[0], [2, 2], [1]].map((l, b) => bruteCTC(acts(b, [4, 3, 2][b]), l, 3));
    assertClose(L(predNTC, labelNT, pl, ll).toTypedArray(), wantLen, { rtol: 1e-5, atol: 1e-6 });
    assertClose(L(predNTC, labelNT, null, ll).toTypedArray(), [[0], [2, 2], [1]].map((l, b) => bruteCTC(acts(b), l, 3)),
      { rtol: 1e-5, atol: 1e-6 });
    const sw = nd.array([1, 0.5, 2]);
    const Lw = new gluon.loss.CTCLoss('NTC', 'NT', 0.25);
    if (hybrid) Lw.hybridize();
    assertClose(Lw(predNTC, labelNT, pl, ll, sw).toTypedArray(), wantLen.map((v, b) => v * [1, 0.5, 2][b] * 0.25),
      { rtol: 1e-5, atol: 1e-6 });
  }
  assert.equal(String(new gluon.loss.CTCLoss()), 'CTCLoss(batch_axis=0, w=None)');
  assert.equal(new gluon.loss.CTCLoss('NTC', 'TN')._batchAxis, 1);
  assert.throws(() => new gluon.loss.CTCLoss('NCT'), /Only 'NTC' and 'TNC' layouts/);
  assert.throws(() => new gluon.loss.CTCLoss('NTC', 'NN'), /Only 'NT' and 'TN' layouts/);
});

test('a model trained with gluon.loss.CTCLoss decodes its target sequences', () => {
  // per-frame logits from a Dense layer over a one-hot frame index: the net learns, for each of
  // two input codes, frames whose best path collapses to that code's label
  mx.random.seed(3);
  const T = 6, A = 4, targets = [[0, 1, 1], [2, 0]];
  const net = new gluon.nn.HybridSequential();
  net.add(new gluon.nn.Dense(T * A, { inUnits: 2 + T }));
  net.initialize(new mx.init.Normal(0.1));
  net.hybridize();
  const x = nd.array([[1, 0], [0, 1]]); // the two input codes
  const inputs = nd.concat(x, nd.ones([2, T]), { dim: 1 });
  const label = nd.array([[0, 1, 1], [2, 0, -1]]);
  const lossFn = new gluon.loss.CTCLoss();
  const trainer = new gluon.Trainer(net.collectParams(), 'adam', { learning_rate: 0.05 });
  let first, last;
  for (let step = 0; step < 150; step++) {
    const loss = autograd.record(() => lossFn(net.forward(inputs).reshape([2, T, A]), label));
    loss.backward();
    trainer.step(2);
    const m = loss.mean().asscalar();
    if (step === 0) first = m;
    last = m;
    loss.dispose();
  }
  assert.ok(last < first / 10, `loss fell from ${first} to ${last}`);
  // greedy decoding: argmax per frame, collapse repeats, drop the blank (channel A-1)
  const out = net.forward(inputs).reshape([2, T, A]).argmax({ axis: 2 }).toArray();
  const decoded = out.map((path) => path.filter((k, t) => k !== A - 1 && (t === 0 || k !== path[t - 1])));
  assert.deepEqual(decoded, targets);
});

test('CTCLoss in a symbol: MXNet\'s input names and output name, shapes inferred', () => {
  const s = mx.sym.CTCLoss(mx.sym.var('d'), mx.sym.var('l'), null, mx.sym.var('ll'), { use_label_lengths: true, name: 'ctc' });
  assert.deepEqual(s.listArguments(), ['d', 'l', 'll']);
  // MXNet registers no output names for CTCLoss (its FListOutputNames is misspelt), so nnvm
  // names the visible one of its two outputs output0
  assert.deepEqual(s.listOutputs(), ['ctc_output0']);
  const auto = mx.sym.CTCLoss({ use_data_lengths: true, name: 'c2' });
  assert.deepEqual(auto.listArguments(), ['c2_data', 'c2_label', 'c2_data_lengths']);
  const [, outShapes] = s.inferShape({ d: [7, 2, 5], l: [2, 3], ll: [2] });
  assert.deepEqual(outShapes, [[2]]);
});

test('bad labels, lengths and shapes are errors naming the value; the instance stays usable', () => {
  const data = randomActs([4, 2, 3], 16);
  const ok = nd.array([[1, 2], [2, 0]]);
  const before = nd.CTCLoss(data, ok).toTypedArray();
  assert.throws(() => nd.CTCLoss(data, nd.array([[1, 3], [1, 0]])), /label\[0, 1\] = 3 is not a label of an alphabet of 3/);
  assert.throws(() => nd.CTCLoss(data, nd.array([[0, 2], [1, 0]]), { blank_label: 'last' }), /label\[0, 1\] = 2 is not a label .* \(labels 0\.\.1\)/);
  assert.throws(() => nd.CTCLoss(data, nd.array([[1, -2], [1, 0]])), /label\[0, 1\] = -2/);
  assert.throws(() => nd.CTCLoss(data, nd.array([[1, NaN], [1, 0]])), /is not a label index/);
  assert.throws(() => nd.CTCLoss(data, ok, nd.array([5, 1]), { use_data_lengths: true }), /data_lengths\[0\] = 5 is out of range \[0, 4\]/);
  assert.throws(() => nd.CTCLoss(data, ok, nd.array([-1, 1]), { use_data_lengths: true }), /data_lengths\[0\] = -1/);
  assert.throws(() => nd.CTCLoss(data, ok, nd.array([1, 3]), { use_label_lengths: true }), /label_lengths\[1\] = 3 is out of range \[0, 2\]/);
  assert.throws(() => nd.CTCLoss(data, nd.array([[1, 2, 1, 2, 1], [1, 1, 1, 1, 1]])), /cannot exceed the data sequence length/);
  assert.throws(() => nd.CTCLoss(data.reshape([4, 6]), ok), /must be 3-D/);
  assert.throws(() => nd.CTCLoss(data, nd.array([[1, 2]])), /batch size/);
  assert.throws(() => nd.CTCLoss(data.astype('int32'), ok), /floating-point/);
  assert.deepEqual(nd.CTCLoss(data, ok).toTypedArray(), before);
  // second order would need the loss's Hessian: create_graph through it names the op
  data.attachGrad();
  assert.throws(() => autograd.record(() => {
    const [g] = autograd.grad(nd.CTCLoss(data, ok).sum(), [data], { createGraph: true });
    return g.sum();
  }).backward(), /_backward_ctc_loss/);
});
