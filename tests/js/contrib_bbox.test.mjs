// The bounding-box ops (csrc/ops/contrib_bbox.c): _contrib_box_nms, _contrib_box_iou,
// _contrib_bipartite_matching, _contrib_box_encode, _contrib_box_decode. Checked against MXNet
// 1.9.1's own unit tests (tests/python/unittest/test_contrib_operator.py: test_box_nms_op's nine
// cases and their gradients, test_box_iou_op's numpy reference, test_bipartite_matching_op,
// test_box_encode_op, test_box_decode_op) rewritten here, against plain float64 JS references of
// MXNet's documented algorithms on random data with odd shapes and every attribute, and against
// tfjs-backend-cpu's nonMaxSuppression for the kept boxes in the plain case.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { registry } from '../../dist/core.mjs';
import { tf, rng, assertClose } from './oracle.mjs';

const { nd, sym, autograd } = mx;
const flat = (a) => Array.from(a.toTypedArray(), Number);
const arr = (data, shape, dtype = 'float32') => nd.array(Array.from(data), { dtype }).reshape(shape);
const prod = (s) => s.reduce((a, b) => a * b, 1);

// ---- box_nms: MXNet's algorithm written out in float64 ------------------------------------------------
// Per batch: rows with score > valid (and id != bid when cid >= 0), sorted by score descending
// (ties in input order), the first topk; a row is kept unless an earlier kept row of the same class
// (any class with force or cid < 0; ids compared as truncated ints) overlaps it with IoU > thresh.
// Kept rows first, the rest -1; out_format != in_format converts the kept rows whose first
// coordinate is >= 0. topk = 0 returns the input. Also returns each output row's source row.
function corner(b, fmt) {
  return fmt === 'corner' ? b : [b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2];
}
function area(b, fmt) {
  const w = fmt === 'corner' ? b[2] - b[0] : b[2], h = fmt === 'corner' ? b[3] - b[1] : b[3];
  return w < 0 || h < 0 ? 0 : w * h;
}
function iou(a, b, fmt) {
  const A = corner(a, fmt), B = corner(b, fmt);
  const w = Math.max(0, Math.min(A[2], B[2]) - Math.max(A[0], B[0]));
  const h = Math.max(0, Math.min(A[3], B[3]) - Math.max(A[1], B[1]));
  return (w * h) / (area(a, fmt) + area(b, fmt) - w * h);
}
function refNms(x, shape, o = {}) {
  const { thresh = 0.5, valid = 0, topk = -1, coord = 2, score = 1, cid = -1, bid = -1, force = false } = o;
  const inFmt = o.in_format ?? 'corner', outFmt = o.out_format ?? 'corner';
  const W = shape.at(-1), N = shape.at(-2), B = prod(shape) / (N * W);
  const row = (i) => Array.from(x.slice(i * W, (i + 1) * W));
  if (topk === 0) return { out: Array.from(x), src: Array.from({ length: B * N }, (_, i) => i) };
  const out = new Array(B * N * W).fill(-1), src = new Array(B * N).fill(-1);
  for (let b = 0; b < B; b++) {
    let cand = [];
    for (let i = b * N; i < (b + 1) * N; i++) {
      const r = row(i);
      if (r[score] > valid && (cid < 0 || r[cid] !== bid)) cand.push(i);
    }
    cand.sort((p, q) => row(q)[score] - row(p)[score]); // stable
    if (topk > 0) cand = cand.slice(0, topk);
    const keep = [];
    for (const i of cand) {
      const r = row(i);
      const sameClass = (k) => force || cid < 0 || Math.trunc(row(k)[cid]) === Math.trunc(r[cid]);
      const box = (v) => v.slice(coord, coord + 4);
      if (!keep.some((k) => sameClass(k) && iou(box(row(k)), box(r), inFmt) > thresh)) keep.push(i);
    }
    keep.forEach((i, n) => {
      const r = row(i);
      if (inFmt !== outFmt && r[coord] >= 0) {
        const [p, q, s, t] = r.slice(coord, coord + 4);
        r.splice(coord, 4, ...(outFmt === 'center' ? [(p + s) / 2, (q + t) / 2, s - p, t - q] : [p - s / 2, q - t / 2, p + s / 2, q + t / 2]));
      }
      out.splice((b * N + n) * W, W, ...r);
      src[b * N + n] = i;
    });
  }
  return { out, src };
}
const nmsAttrs = (o) => ({
  overlap_thresh: o.thresh ?? 0.5, valid_thresh: o.valid ?? 0, topk: o.topk ?? -1, coord_start: o.coord ?? 2,
  score_index: o.score ?? 1, id_index: o.cid ?? -1, background_id: o.bid ?? -1, force_suppress: o.force ?? false,
  in_format: o.in_format ?? 'corner', out_format: o.out_format ?? 'corner',
});

// MXNet's test_box_nms_op cases (forward for float16/32/64, backward with random output gradients)
const BOXES = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2], [0, 0.3, 0.1, 0.1, 0.14, 0.14],
  [2, 0.6, 0.5, 0.5, 0.7, 0.8]];
const M1 = [-1, -1, -1, -1, -1, -1];
function nmsForward(data, expected, o) {
  for (const dtype of ['float16', 'float32', 'float64']) {
    const y = nd._contrib_box_nms(nd.array(data, { dtype }), nmsAttrs({ cid: 0, ...o }));
    assert.equal(y.dtype, dtype);
    assertClose(flat(y), expected.flat(Infinity), { rtol: 1e-3, atol: 1e-3, msg: `box_nms ${dtype} ${JSON.stringify(o)}` });
  }
}
// in_grad[src[i]] = out_grad[i] for every written row i; 0 elsewhere (MXNet's expected_in_grad)
function nmsBackward(data, grad, expected, o) {
  const x = nd.array(data, { dtype: 'float64' });
  x.attachGrad();
  const y = autograd.record(() => nd._contrib_box_nms(x, nmsAttrs({ cid: 0, ...o })));
  y.backward(nd.array(grad, { dtype: 'float64' }));
  assertClose(flat(x.grad), expected.flat(Infinity), { rtol: 1e-12, atol: 0, msg: `box_nms gradient ${JSON.stringify(o)}` });
}
// numpy's grad[(1, 3, 2, 0), :] with rows zeroed
const pick = (g, order, zero = []) => order.map((k, i) => (zero.includes(i) ? g[k].map(() => 0) : g[k].slice()));
const randGrad = (r, rows, w = 6) => Array.from({ length: rows }, () => Array.from(r.uniform(w, 0, 1), Number));

test('box_nms: MXNet\'s test cases 1-4 (force, multi-batch, thresh, per class) forward and gradient', () => {
  const r = rng(11);
  // case 1
  const e1 = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2], [0, 0.3, 0.1, 0.1, 0.14, 0.14], M1];
  const g1 = randGrad(r, 4);
  const eg1 = pick(g1, [1, 3, 2, 0], [1]);
  nmsForward(BOXES, e1, { force: true, thresh: 0.5 });
  nmsBackward(BOXES, g1, eg1, { force: true, thresh: 0.5 });
  // case 2: batches of 3, then (2, 3) batches
  nmsForward([BOXES, BOXES, BOXES], [e1, e1, e1], { force: true });
  nmsBackward([BOXES, BOXES, BOXES], [g1, g1, g1], [eg1, eg1, eg1], { force: true });
  const b23 = [[BOXES, BOXES, BOXES], [BOXES, BOXES, BOXES]];
  nmsForward(b23, [[e1, e1, e1], [e1, e1, e1]], { force: true });
  nmsBackward(b23, [[g1, g1, g1], [g1, g1, g1]], [[eg1, eg1, eg1], [eg1, eg1, eg1]], { force: true });
  // case 3: thresh 0.1
  const e3 = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2], M1, M1];
  const g3 = randGrad(r, 4);
  nmsForward(BOXES, e3, { force: true, thresh: 0.1 });
  nmsBackward(BOXES, g3, pick(g3, [1, 3, 2, 0], [1, 2]), { force: true, thresh: 0.1 });
  // case 4: not forced: the class-1 box survives
  const e4 = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2], M1];
  const g4 = randGrad(r, 4);
  nmsForward(BOXES, e4, { force: false, thresh: 0.1 });
  nmsBackward(BOXES, g4, pick(g4, [1, 2, 3, 0], [2]), { force: false, thresh: 0.1 });
});

// the test's corner_to_center (rows whose id < 0 all -1)
const toCenter = (rows) => rows.map((b) => (b[0] < 0 ? M1.slice()
  : [b[0], b[1], (b[2] + b[4]) / 2, (b[3] + b[5]) / 2, b[4] - b[2], b[5] - b[3]]));

test('box_nms: MXNet\'s cases 5-7 (center format in and out, other column positions, no id)', () => {
  const e4 = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2], M1];
  const b5 = toCenter(BOXES), e5 = toCenter(e4);
  nmsForward(b5, e4, { thresh: 0.1, in_format: 'center' });
  nmsForward(BOXES, e5, { thresh: 0.1, out_format: 'center' });
  nmsForward(b5, e5, { thresh: 0.1, in_format: 'center', out_format: 'center' });
  // case 6 (swap_position with two extra columns): every placement of the 4 coordinates, score
  // and id in 8 columns the test can draw, the other columns -1
  const r = rng(12);
  for (let coord = 0; coord <= 4; coord++) {
    const others = [...Array(8).keys()].filter((k) => k < coord || k >= coord + 4);
    for (let t = 0; t < 3; t++) {
      const sh = others.slice().sort(() => r.uniform(1)[0] - 0.5);
      const [score, cid] = sh;
      const place = (rows) => rows.map((b) => {
        const n = new Array(8).fill(-1);
        n.splice(coord, 4, ...b.slice(2, 6));
        n[score] = b[1];
        n[cid] = b[0];
        return n;
      });
      nmsForward(place(BOXES), place(e4), { thresh: 0.1, coord, score, cid });
    }
  }
  // case 7: no id: as force_suppress
  nmsForward(BOXES, [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2], [0, 0.3, 0.1, 0.1, 0.14, 0.14], M1],
    { thresh: 0.5, cid: -1 });
});

test('box_nms: MXNet\'s cases 8-9 (valid_thresh + topk per batch, background_id) forward and gradient', () => {
  const r = rng(13);
  const b8 = [1, 2, 3].map((c) => [[c, 1, 0, 0, 10, 10], [c, 0.4, 0, 0, 10, 10], [c, 0.3, 0, 0, 10, 10]]);
  const e8 = [1, 2, 3].map((c) => [[c, 1, 0, 0, 10, 10], M1, M1]);
  const g8 = [0, 1, 2].map(() => randGrad(r, 3));
  const eg8 = g8.map((g) => [g[0].slice(), g[0].map(() => 0), g[0].map(() => 0)]);
  const o8 = { force: false, thresh: 0.5, valid: 0.5, topk: 2 };
  nmsForward(b8, e8, o8);
  nmsBackward(b8, g8, eg8, o8);
  const b9 = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [0, 0.4, 0.1, 0.1, 0.2, 0.2], [1, 0.3, 0.1, 0.1, 0.14, 0.14],
    [-1, 0.6, 0.5, 0.5, 0.7, 0.8]];
  const g9 = randGrad(r, 4);
  nmsForward(b9, [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.3, 0.1, 0.1, 0.14, 0.14], M1, M1], { force: true });
  nmsBackward(b9, g9, pick(g9, [0, 2, 1, 3], [1, 3]), { force: true });
  const g9b = randGrad(r, 4);
  nmsForward(b9, [[-1, 0.6, 0.5, 0.5, 0.7, 0.8], [1, 0.3, 0.1, 0.1, 0.14, 0.14], M1, M1], { force: true, bid: 0 });
  nmsBackward(b9, g9b, pick(g9b, [2, 3, 1, 0], [0, 1]), { force: true, bid: 0 });
});

// Random boxes: N boxes of width W (extra columns), ids in 0..2 (some 1.5-ish to test the int
// truncation), distinct scores in (0, 1), corners or centres.
function randomBoxes(r, shape, { coord = 2, score = 1, cid = 0, fmt = 'corner' } = {}) {
  const W = shape.at(-1), rows = prod(shape) / W;
  const x = new Float64Array(rows * W);
  const perm = Array.from({ length: rows }, (_, i) => i).sort(() => r.uniform(1)[0] - 0.5);
  for (let i = 0; i < rows; i++) {
    const u = Array.from(r.uniform(W + 6, 0, 1), Number);
    for (let k = 0; k < W; k++) x[i * W + k] = u[k] * 4 - 2;
    const [cx, cy, w, h] = [u[W] * 4, u[W + 1] * 4, 0.5 + u[W + 2] * 4, 0.5 + u[W + 3] * 4];
    x.set(fmt === 'corner' ? [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2] : [cx, cy, w, h], i * W + coord);
    x[i * W + score] = (perm[i] + 0.5) / rows;
    if (cid >= 0) x[i * W + cid] = Math.floor(u[W + 4] * 3) + (u[W + 5] < 0.3 ? 0.5 : 0);
  }
  return x;
}

test('box_nms: random boxes against the float64 reference (batch dims, odd N, every attribute)', () => {
  const r = rng(21);
  const cases = [
    { shape: [7, 6], o: {} },
    { shape: [3, 11, 6], o: { cid: 0, thresh: 0.3 } },
    { shape: [2, 3, 9, 6], o: { cid: 0, force: true, thresh: 0.2, valid: 0.3 } },
    { shape: [2, 13, 6], o: { cid: 0, topk: 5, thresh: 0.25 } },
    { shape: [2, 13, 6], o: { cid: 0, topk: 0 } },
    { shape: [5, 6], o: { cid: 0, topk: 100, valid: 0.99 } }, // nothing valid except maybe one
    { shape: [4, 9, 6], o: { cid: 0, bid: 1, thresh: 0.1 } },
    { shape: [3, 17, 8], o: { coord: 3, score: 0, cid: 7, thresh: 0.15, valid: 0.1 } },
    { shape: [3, 17, 5], o: { coord: 1, score: 0, cid: -1, thresh: 0.3 } },
    { shape: [2, 15, 6], o: { cid: 0, thresh: 0.3, in_format: 'center' }, fmt: 'center' },
    { shape: [2, 15, 6], o: { cid: 0, thresh: 0.3, in_format: 'center', out_format: 'corner' }, fmt: 'center' },
    { shape: [2, 15, 6], o: { cid: 0, thresh: 0.3, out_format: 'center' } },
  ];
  for (const { shape, o, fmt } of cases) {
    const x = randomBoxes(r, shape, { coord: o.coord ?? 2, score: o.score ?? 1, cid: o.cid ?? -1, fmt: fmt ?? 'corner' });
    const { out } = refNms(x, shape, o);
    const y64 = nd._contrib_box_nms(arr(x, shape, 'float64'), nmsAttrs(o));
    assert.deepEqual(y64.shape, shape);
    assertClose(flat(y64), out, { rtol: 1e-12, atol: 1e-12, msg: `float64 ${JSON.stringify(o)}` });
    const y32 = nd._contrib_box_nms(arr(x, shape, 'float32'), nmsAttrs(o));
    assertClose(flat(y32), out, { rtol: 1e-6, atol: 1e-6, msg: `float32 ${JSON.stringify(o)}` });
  }
  // nothing valid: every row -1
  const x = randomBoxes(r, [2, 5, 6]);
  assert.deepEqual(flat(nd._contrib_box_nms(arr(x, [2, 5, 6]), { valid_thresh: 2 })), new Array(60).fill(-1));
});

test('box_nms: the kept boxes of the plain case equal tfjs-backend-cpu\'s nonMaxSuppression', () => {
  const r = rng(31);
  for (const [N, thresh, valid, topk] of [[25, 0.5, 0, -1], [40, 0.3, 0.2, -1], [33, 0.1, 0, 7], [18, 0.7, 0.5, 30]]) {
    const x = randomBoxes(r, [N, 5], { coord: 1, score: 0, cid: -1 });
    const y = flat(nd._contrib_box_nms(arr(x, [N, 5], 'float64'), { overlap_thresh: thresh, valid_thresh: valid, topk, coord_start: 1, score_index: 0 }));
    // output rows back to input rows by their (distinct) scores
    const ours = [];
    for (let i = 0; i < N && y[i * 5] !== -1; i++) ours.push([...Array(N).keys()].find((k) => x[k * 5] === y[i * 5]));
    // tfjs takes [y1, x1, y2, x2]; its candidates are the top maxOutputSize after NMS, ours NMS over the top-k
    const boxes = [], scores = [];
    const cand = [...Array(N).keys()].filter((k) => x[k * 5] > valid).sort((a, b) => x[b * 5] - x[a * 5])
      .slice(0, topk < 0 ? N : topk);
    for (const k of cand) {
      boxes.push([x[k * 5 + 2], x[k * 5 + 1], x[k * 5 + 4], x[k * 5 + 3]]);
      scores.push(x[k * 5]);
    }
    const kept = tf.tidy(() => tf.image.nonMaxSuppression(tf.tensor2d(boxes, [boxes.length, 4]), tf.tensor1d(scores), N,
      thresh, valid).dataSync());
    assert.deepEqual(ours, Array.from(kept, (i) => cand[i]), `N ${N} thresh ${thresh}`);
  }
});

test('box_nms: alias, hidden index output, symbol outputs, shape and attribute errors', () => {
  const x = nd.array(BOXES);
  assert.deepEqual(flat(nd._contrib_box_non_maximum_suppression(x, { id_index: 0, force_suppress: true })),
    flat(nd._contrib_box_nms(x, { id_index: 0, force_suppress: true })));
  // one visible output; the symbol has MXNet's name for it (two outputs: output0)
  const s = sym._contrib_box_nms(sym.var('data'), { name: 'nms' });
  assert.deepEqual(s.listOutputs(), ['nms_output0']);
  const [, outs] = s.inferShape({ data: [2, 7, 6] });
  assert.deepEqual(outs, [[2, 7, 6]]);
  const err = (attrs, re, shape = [3, 6]) => assert.throws(() => nd._contrib_box_nms(nd.zeros(shape), attrs),
    (e) => e instanceof mx.MXNetError && re.test(e.message), `${JSON.stringify(attrs)}`);
  err({}, /input must have dim >= 2/, [6]);
  err({}, /at least 5 elements .* 4 provided, 5 expected/, [3, 4]);
  err({ id_index: 0 }, /5 provided, 6 expected/, [3, 5]);
  err({ score_index: 6 }, /score_index: 6 out of range: \(0, 6\)/);
  err({ score_index: 3 }, /score_index: 3 conflict with coordinates: \(2, 5\)/);
  err({ coord_start: 3, score_index: 0 }, /coordinates: \(3, 6\) out of range/);
  err({ id_index: 1 }, /id_index: 1 conflict with score_index: 1/);
  err({ id_index: 4 }, /id_index: 4 conflict with coordinates/);
  err({ in_format: 'xyxy' }, /in_format/);
  assert.throws(() => nd._contrib_box_nms(nd.zeros([3, 6], { dtype: 'int32' })), mx.MXNetError);
});

// ---- box_iou: test_box_iou_op's numpy_box_iou ---------------------------------------------------------
function refIou(a, b, fmt) {
  const na = a.length / 4, nb = b.length / 4, out = [];
  for (let i = 0; i < na; i++) {
    for (let j = 0; j < nb; j++) {
      const p = corner(Array.from(a.slice(i * 4, i * 4 + 4)), fmt);
      const q = corner(Array.from(b.slice(j * 4, j * 4 + 4)), fmt);
      const ar = (v) => Math.max(0, v[2] - v[0]) * Math.max(0, v[3] - v[1]);
      const side = (k) => Math.max(0, Math.min(p[k + 2], q[k + 2]) - Math.max(p[k], q[k]));
      const inter = side(0) * side(1);
      out.push(inter <= 0 ? 0 : inter / (ar(p) + ar(q) - inter));
    }
  }
  return out;
}

test('box_iou: MXNet\'s example, and random boxes of 1-4 leading dims in both formats (numpy reference)', () => {
  const y = nd._contrib_box_iou(nd.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]]), nd.array([[0.25, 0.25, 0.75, 0.75]]), { format: 'corner' });
  assertClose(flat(y), [1 / 7, 1 / 7], { rtol: 1e-6 });
  const r = rng(41);
  for (let ndA = 1; ndA <= 4; ndA++) {
    for (let ndB = 1; ndB <= 4; ndB++) {
      const da = Array.from(r.uniform(ndA, 1, 3.99), Math.floor), db = Array.from(r.uniform(ndB, 1, 3.99), Math.floor);
      const gen = (dims) => {
        const n = prod(dims), [s1, o1, s2, o2] = Array.from(r.uniform(4, 0, 100), Number);
        const xywh = [], ltrb = [];
        for (let i = 0; i < n; i++) {
          const [x, yy] = Array.from(r.uniform(2, 0, 1), (v) => v * s1 + o1);
          const [w, h] = Array.from(r.uniform(2, 0, 1), (v) => v * s2 + o2);
          xywh.push(x, yy, w, h);
          ltrb.push(x - w / 2, yy - h / 2, x + w / 2, yy + h / 2);
        }
        return { xywh, ltrb };
      };
      const A = gen(da), B = gen(db);
      const expect = refIou(A.ltrb, B.ltrb, 'corner');
      assertClose(refIou(A.xywh, B.xywh, 'center'), expect, { rtol: 1e-9, atol: 1e-9 });
      for (const dtype of ['float32', 'float64']) {
        const tol = dtype === 'float64' ? 1e-12 : 1e-5;
        const yc = nd._contrib_box_iou(arr(A.ltrb, [...da, 4], dtype), arr(B.ltrb, [...db, 4], dtype), { format: 'corner' });
        assert.deepEqual(yc.shape, [...da, ...db]);
        assertClose(flat(yc), expect, { rtol: tol, atol: tol, msg: `corner ${da} ${db}` });
        const ym = nd._contrib_box_iou(arr(A.xywh, [...da, 4], dtype), arr(B.xywh, [...db, 4], dtype), { format: 'center' });
        assertClose(flat(ym), expect, { rtol: tol, atol: tol, msg: `center ${da} ${db}` });
      }
    }
  }
  assert.throws(() => nd._contrib_box_iou(nd.zeros([4]), nd.zeros([2, 4])), /lhs must have dim >= 2/);
  assert.throws(() => nd._contrib_box_iou(nd.zeros([2, 4]), nd.zeros([2, 5])), /last dimension of rhs must be 4 5 provided/);
});

// ---- bipartite_matching: MXNet's greedy matching ----------------------------------------------------
// Scores sorted (descending, or ascending with is_ascend; ties in input order); walking them, a pair
// whose row and column are both free is matched if its score beats the threshold, else the walk
// stops; with topk > 0 it also stops once count > topk -- after making that match (MXNet's order).
function refMatch(s, shape, { threshold, asc = false, topk = -1 }) {
  const M = shape.at(-1), N = shape.at(-2), B = s.length / (N * M);
  const rows = [], cols = [];
  for (let b = 0; b < B; b++) {
    const sc = Array.from(s.slice(b * N * M, (b + 1) * N * M));
    const order = [...sc.keys()].sort((p, q) => (asc ? sc[p] - sc[q] : sc[q] - sc[p]));
    const rm = new Array(N).fill(-1), cm = new Array(M).fill(-1);
    let count = 0;
    for (const k of order) {
      const i = Math.floor(k / M), j = k % M;
      if (rm[i] !== -1 || cm[j] !== -1) continue;
      if (!(asc ? sc[k] < threshold : sc[k] > threshold)) break;
      rm[i] = j; cm[j] = i;
      if (topk > 0 && ++count > topk) break;
    }
    rows.push(...rm); cols.push(...cm);
  }
  return { rows, cols };
}

test('bipartite_matching: MXNet\'s cases for every float dtype, random batches, is_ascend, topk', () => {
  const s = [[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]];
  for (const dtype of ['float16', 'float32', 'float64']) {
    const [a, b] = nd._contrib_bipartite_matching(nd.array(s, { dtype }), { threshold: 1e-12, is_ascend: false });
    assert.deepEqual([flat(a), flat(b)], [[1, -1, 0], [2, 0]]);
    assert.equal(a.dtype, dtype);
    const [c, d] = nd._contrib_bipartite_matching(nd.array(s, { dtype }), { threshold: 100, is_ascend: true });
    assert.deepEqual([flat(c), flat(d)], [[-1, 0, 1], [1, 2]]);
  }
  const r = rng(51);
  for (const [shape, o] of [[[5, 3], { threshold: 0.2 }], [[2, 3, 7, 4], { threshold: 0.3 }],
    [[3, 6, 9], { threshold: 0.6, asc: true }], [[2, 8, 5], { threshold: 0.05, topk: 2 }],
    [[4, 4], { threshold: 0.5, asc: true, topk: 1 }], [[3, 5, 6], { threshold: 2 }]]) {
    const x = Array.from(r.uniform(prod(shape), 0, 1), Number);
    const { rows, cols } = refMatch(x, shape, o);
    const [a, b] = nd._contrib_bipartite_matching(arr(x, shape, 'float64'), { threshold: o.threshold, is_ascend: o.asc ?? false, topk: o.topk ?? -1 });
    assert.deepEqual(a.shape, shape.slice(0, -1));
    assert.deepEqual(b.shape, [...shape.slice(0, -2), shape.at(-1)]);
    assert.deepEqual([flat(a), flat(b)], [rows, cols], `${shape} ${JSON.stringify(o)}`);
  }
  // topk = 1 stops after the second match, as MXNet's loop does
  const [a] = nd._contrib_bipartite_matching(nd.array([[0.9, 0.1], [0.2, 0.8]]), { threshold: 0, topk: 1 });
  assert.deepEqual(flat(a), [0, 1]);
  assert.throws(() => nd._contrib_bipartite_matching(nd.zeros([3, 3])), /threshold/);
});

// ---- box_encode / box_decode -------------------------------------------------------------------------
test('box_encode: MXNet\'s case, and random matches against the formula', () => {
  const anchors = nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]).reshape([1, -1, 4]);
  const [Y, mask] = nd._contrib_box_encode(nd.array([[0, 1]]), nd.array([[0, 1]]), anchors, anchors,
    nd.array([0, 0, 0, 0]), nd.array([0.1, 0.1, 0.2, 0.2]));
  assertClose(flat(Y), new Array(8).fill(0), { atol: 1e-5 });
  assert.deepEqual(flat(mask), [0, 0, 0, 0, 1, 1, 1, 1]);
  // B = 2, N = 5 anchors, M = 3 references: targets ((ref_c - a_c) / a_size - mean) / std, log ratios
  const r = rng(61);
  const B = 2, N = 5, M = 3;
  const box = () => { const [x, y, w, h] = Array.from(r.uniform(4, 0.1, 1), Number); return [x, y, x + w, y + h]; };
  const A = Array.from({ length: B * N }, box).flat(), R = Array.from({ length: B * M }, box).flat();
  const samples = Array.from(r.uniform(B * N, -1.5, 1.5), Math.round);
  const matches = Array.from(r.uniform(B * N, 0, 2.99), Math.floor);
  const means = [0.1, -0.2, 0.05, 0], stds = [0.1, 0.2, 0.3, 0.4];
  const et = [], em = [];
  for (let i = 0; i < B * N; i++) {
    const j = Math.floor(i / N), a = A.slice(i * 4, i * 4 + 4), k0 = (j * M + matches[i]) * 4, g = R.slice(k0, k0 + 4);
    const v = samples[i] > 0.5 ? 1 : 0;
    em.push(v, v, v, v);
    const [aw, ah, gw, gh] = [a[2] - a[0], a[3] - a[1], g[2] - g[0], g[3] - g[1]];
    const t = [(g[0] + gw / 2 - a[0] - aw / 2) / aw, (g[1] + gh / 2 - a[1] - ah / 2) / ah, Math.log(gw / aw),
      Math.log(gh / ah)];
    et.push(...t.map((x, k) => (v ? (x - means[k]) / stds[k] : 0)));
  }
  const [t, m] = nd._contrib_box_encode(arr(samples, [B, N], 'float64'), arr(matches, [B, N], 'float64'), arr(A, [B, N, 4], 'float64'),
    arr(R, [B, M, 4], 'float64'), arr(means, [4], 'float64'), arr(stds, [4], 'float64'));
  assertClose(flat(t), et, { rtol: 1e-12, atol: 1e-12 });
  assert.deepEqual(flat(m), em);
  assert.throws(() => nd._contrib_box_encode(nd.zeros([1, 2, 2]), nd.zeros([1, 2]), anchors, anchors, nd.zeros([4]),
    nd.ones([4])), /samples shape must have dim == 2/);
});

test('box_decode: MXNet\'s case (center anchors), corner anchors, clip, std per coordinate', () => {
  const d = nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]).reshape([1, -1, 4]);
  assertClose(flat(nd._contrib_box_decode(d, d, 0.1, 0.1, 0.2, 0.2)),
    [-0.0562755, -0.00865743, 0.26227552, 0.42465743, 0.13240421, 0.17859563, 0.93759584, 1.1174043],
    { rtol: 1e-5, atol: 1e-5 });
  const r = rng(71);
  const B = 3, N = 7;
  const x = Array.from(r.uniform(B * N * 4, -2, 2), Number);
  const anc = Array.from({ length: N }, () => {
    const [p, q, w, h] = Array.from(r.uniform(4, 0.1, 1), Number);
    return [p, q, p + w, q + h];
  }).flat();
  for (const [format, std, clip] of [['center', [1, 1, 1, 1], -1], ['corner', [0.1, 0.1, 0.2, 0.2], -1], ['corner', [0.5, 0.6, 0.7, 0.8], 0.2],
    ['center', [1, 2, 3, 4], 0.5]]) {
    const e = [];
    for (let i = 0; i < B * N; i++) {
      let [ax, ay, aw, ah] = anc.slice((i % N) * 4, (i % N) * 4 + 4);
      if (format === 'corner') { aw -= ax; ah -= ay; ax += aw / 2; ay += ah / 2; }
      const v = x.slice(i * 4, i * 4 + 4).map((t, k) => t * Math.fround(std[k]));
      const ox = v[0] * aw + ax, oy = v[1] * ah + ay;
      const c = (t) => (clip > 0 ? Math.min(t, Math.fround(clip)) : t);
      const ow = (Math.exp(c(v[2])) * aw) / 2, oh = (Math.exp(c(v[3])) * ah) / 2;
      e.push(ox - ow, oy - oh, ox + ow, oy + oh);
    }
    const y = nd._contrib_box_decode(arr(x, [B, N, 4], 'float64'), arr(anc, [1, N, 4], 'float64'),
      { std0: std[0], std1: std[1], std2: std[2], std3: std[3], clip, format });
    assertClose(flat(y), e, { rtol: 1e-12, atol: 1e-12, msg: `${format} ${clip}` });
  }
  assert.throws(() => nd._contrib_box_decode(nd.zeros([2, 4]), nd.zeros([1, 2, 4])), /data shape must have dim == 3/);
});

test('detection ops without MXNet gradients are marked non-differentiable (zero gradients)', () => {
  for (const name of ['_contrib_box_iou', '_contrib_bipartite_matching', '_contrib_box_encode', '_contrib_box_decode']) {
    const op = registry.ops.find((o) => o.name === name);
    assert.equal(op.no_grad, true, name);
    assert.equal(op.gradient, false, name);
  }
  const a = nd.array([[0.1, 0.1, 0.5, 0.6]]), b = nd.array([[0.2, 0.2, 0.7, 0.7], [0, 0, 1, 1]]);
  a.attachGrad();
  const y = autograd.record(() => nd._contrib_box_iou(a, b));
  y.backward();
  assert.deepEqual(flat(a.grad), [0, 0, 0, 0]);
});
