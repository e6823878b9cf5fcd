// The SSD ops (csrc/ops/contrib_multibox.c): _contrib_MultiBoxPrior, _contrib_MultiBoxDetection,
// _contrib_MultiBoxTarget. MXNet 1.9.1's own expected values (test_contrib_operator.py:
// test_multibox_prior_op, test_multibox_target_op) and plain JS references of MXNet's CPU
// algorithms (multibox_prior.cc, multibox_detection.cc, multibox_target.cc) on random data with odd
// sizes and every attribute: MultiBoxPrior in float32 arithmetic (Math.fround, as MXNet computes it),
// the other two in float64.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, sym } = mx;
const flat = (a) => Array.from(a.toTypedArray(), Number);
const arr = (data, shape, dtype = 'float32') => nd.array(Array.from(data), { dtype }).reshape(shape);
const f = Math.fround;

// ---- MultiBoxPrior ------------------------------------------------------------------------------------
// For every cell (r, c), centre ((c + off_x) * step_x, (r + off_y) * step_y): sizes[i] with
// sqrt(ratios[0]), then sizes[0] with sqrt(ratios[j]), j >= 1; half width size * H / W * ratio / 2,
// half height size / ratio / 2; steps <= 0 mean 1 / H, 1 / W; clip to [0, 1]. In float32.
function refPrior(H, W, { sizes = [1], ratios = [1], clip = false, steps = [-1, -1], offsets = [0.5, 0.5] }) {
  let [sy, sx] = steps.map(f);
  if (sy <= 0 || sx <= 0) [sy, sx] = [f(1 / H), f(1 / W)];
  const out = [];
  const put = (cx, cy, size, ratio) => {
    const w = f(f(f(f(f(size) * H) / W) * ratio) / 2), h = f(f(f(size) / ratio) / 2);
    for (const v of [f(cx - w), f(cy - h), f(cx + w), f(cy + h)]) out.push(clip ? Math.min(1, Math.max(0, v)) : v);
  };
  for (let r = 0; r < H; r++) {
    const cy = f(f(r + f(offsets[0])) * sy);
    for (let c = 0; c < W; c++) {
      const cx = f(f(c + f(offsets[1])) * sx);
      for (const s of sizes) put(cx, cy, s, f(Math.sqrt(f(ratios[0]))));
      for (const q of ratios.slice(1)) put(cx, cy, sizes[0], f(Math.sqrt(f(q))));
    }
  }
  return out;
}

test('MultiBoxPrior: MXNet\'s test values on a 561 x 728 map (sizes, ratios, a first ratio of 20)', () => {
  const h = 561, w = 728;
  const X = nd.zeros([1, 3, h, w]);
  const at = (Y) => {
    const v = Y.toTypedArray(), k = ((250 * w + 250) * 5) * 4;
    return Array.from(v.slice(k, k + 4));
  };
  let Y = nd._contrib_MultiBoxPrior(X, { sizes: [0.75, 0.5, 0.25], ratios: [1, 2, 0.5] });
  assert.deepEqual(Y.shape, [1, 2042040, 4]);
  assertClose(at(Y), [0.055117, 0.071524, 0.63307, 0.821524], { rtol: 1e-5, atol: 1e-5 });
  Y.dispose();
  Y = nd._contrib_MultiBoxPrior(X, { sizes: [0.75, 0.5, 0.25], ratios: [20, 2, 0.5] });
  assertClose(at(Y), [-0.948249, 0.362671, 1.636436, 0.530377], { rtol: 1e-5, atol: 1e-5 });
  Y.dispose();
  X.dispose();
});

test('MultiBoxPrior: every attribute on odd maps against the float32 reference; alias, defaults, errors', () => {
  const cases = [
    [3, 5, {}],
    [7, 4, { sizes: [0.3, 0.6, 0.9], ratios: [1, 2, 0.5, 3] }],
    [5, 9, { sizes: [0.2, 0.45], ratios: [2, 0.7], clip: true }],
    [6, 3, { sizes: [0.5], ratios: [1, 3], steps: [0.1, 0.25], offsets: [0.2, 0.9] }],
    [1, 1, { sizes: [1.5, 0.3], ratios: [0.25], clip: true, offsets: [0, 1] }],
  ];
  for (const [H, W, o] of cases) {
    const Y = nd._contrib_MultiBoxPrior(nd.zeros([2, 3, H, W]), o);
    const n = (o.sizes ?? [1]).length + (o.ratios ?? [1]).length - 1;
    assert.deepEqual(Y.shape, [1, H * W * n, 4]);
    assert.deepEqual(flat(Y), refPrior(H, W, o), JSON.stringify(o));
  }
  // float64 data gives float64 anchors of the same float32 values; the alias; attributes as text
  const y64 = nd._npx_multibox_prior(nd.zeros([1, 1, 3, 4], { dtype: 'float64' }), { sizes: '(0.5, 0.25)', ratios: '[1,2]' });
  assert.equal(y64.dtype, 'float64');
  assert.deepEqual(flat(y64), refPrior(3, 4, { sizes: [0.5, 0.25], ratios: [1, 2] }));
  const s = sym._contrib_MultiBoxPrior(sym.var('data'), { sizes: [0.5, 0.25], ratios: [1, 2, 0.5] });
  assert.deepEqual(s.inferShape({ data: [1, 8, 5, 7] })[1], [[1, 5 * 7 * 4, 4]]);
  const err = (o, re, shape = [1, 1, 2, 2]) => assert.throws(() => nd._contrib_MultiBoxPrior(nd.zeros(shape), o),
    (e) => e instanceof mx.MXNetError && re.test(e.message), JSON.stringify(o));
  err({ steps: [0.1] }, /Step ndim must be 2/);
  err({ steps: [-1, 0.1] }, /Must specify both step_y and step_x/);
  err({ offsets: [0.5, 1.5] }, /offsets\[1\] = 1.5 is out of range/);
  err({ sizes: 'big' }, /invalid value 'big' for attribute 'sizes'/);
  err({}, /Input data should be 4D/, [2, 2]);
});

// ---- MultiBoxDetection --------------------------------------------------------------------------------
// Per anchor: the best class j >= 1 (first of equal scores; score -1 and class 0 when none beats
// -1); below `threshold` it becomes background; row [j - 1, score, box] with the box decoded from
// the anchor (centre offsets times variances, exp sizes) and clipped to [0, 1]. Rows with an id
// >= 0 move to the front in anchor order; when 0 < nms_threshold <= 1 they are sorted by score
// (stable), rows past nms_topk get id -1 (keeping their unsorted values), and an earlier row with
// id >= 0 of the same class (any with force_suppress) sets the id of a later one to -1 when their
// IoU >= nms_threshold. Rows after the kept ones are -1.
function refDetection(cls, loc, anc, [B, C, A], o) {
  const { clip = true, threshold = 0.01, nms_threshold: nms = 0.5, force_suppress: force = false } = o;
  const topk = o.nms_topk ?? -1;
  const v = o.variances ?? [0.1, 0.1, 0.2, 0.2];
  const out = new Array(B * A * 6).fill(-1);
  const ov = (a, b) => {
    const w = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
    const h = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
    const u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h;
    return u <= 0 ? 0 : (w * h) / u;
  };
  for (let n = 0; n < B; n++) {
    const rows = [];
    for (let i = 0; i < A; i++) {
      let score = -1, id = 0;
      for (let j = 1; j < C; j++) if (cls[(n * C + j) * A + i] > score) [score, id] = [cls[(n * C + j) * A + i], j];
      if (id > 0 && score < f(threshold)) id = 0;
      const a = anc.slice(i * 4, i * 4 + 4), l = loc.slice((n * A + i) * 4, (n * A + i) * 4 + 4);
      const [aw, ah] = [a[2] - a[0], a[3] - a[1]], [ax, ay] = [(a[0] + a[2]) / 2, (a[1] + a[3]) / 2];
      const ox = l[0] * f(v[0]) * aw + ax, oy = l[1] * f(v[1]) * ah + ay;
      const ow = (Math.exp(l[2] * f(v[2])) * aw) / 2, oh = (Math.exp(l[3] * f(v[3])) * ah) / 2;
      const box = [ox - ow, oy - oh, ox + ow, oy + oh].map((t) => (clip ? Math.max(0, Math.min(1, t)) : t));
      if (id - 1 >= 0) rows.push([id - 1, score, ...box]);
    }
    const po = rows.map((r) => r.slice());
    const nmsT = f(nms);
    if (rows.length > 0 && nmsT > 0 && nmsT <= 1) {
      const sorted = rows.slice().sort((p, q) => q[1] - p[1]);
      const keep = topk > 0 && topk < rows.length ? topk : rows.length;
      for (let i = keep; i < rows.length; i++) po[i][0] = -1;
      for (let i = 0; i < keep; i++) po[i] = sorted[i].slice();
      for (let i = 0; i < keep; i++) {
        if (po[i][0] < 0) continue;
        for (let j = i + 1; j < keep; j++) {
          if (po[j][0] < 0) continue;
          if ((force || po[i][0] === po[j][0]) && ov(po[i].slice(2), po[j].slice(2)) >= nmsT) po[j][0] = -1;
        }
      }
    }
    po.forEach((r, i) => out.splice((n * A + i) * 6, 6, ...r));
  }
  return out;
}

function detInputs(r, B, C, A) {
  // softmax-like class probabilities with distinct values
  const cls = Array.from(r.uniform(B * C * A, 0, 1), Number);
  const loc = Array.from(r.uniform(B * A * 4, -1, 1), Number);
  const anc = [];
  for (let i = 0; i < A; i++) {
    const [x, y, w, h] = Array.from(r.uniform(4, 0, 1), Number);
    anc.push(x * 0.6, y * 0.6, x * 0.6 + 0.1 + w * 0.4, y * 0.6 + 0.1 + h * 0.4);
  }
  return { cls, loc, anc };
}

test('MultiBoxDetection: random predictions against the float64 reference for every attribute', () => {
  const r = rng(101);
  const cases = [
    [[1, 3, 9], {}],
    [[2, 4, 13], { threshold: 0.3, nms_threshold: 0.3 }],
    [[3, 5, 11], { force_suppress: true, nms_threshold: 0.2, clip: false }],
    [[2, 4, 17], { nms_topk: 5, threshold: 0.2, variances: [0.2, 0.3, 0.1, 0.4] }],
    [[2, 3, 10], { nms_threshold: 0 }], // no NMS: kept rows in anchor order
    [[2, 3, 10], { nms_threshold: 1.5 }],
    [[1, 2, 7], { threshold: 0.9 }],
    [[2, 1, 5], {}], // background only: every row -1
    [[1, 6, 15], { background_id: 3, nms_threshold: 0.6, nms_topk: 40 }], // background_id is unused by MXNet
  ];
  for (const [[B, C, A], o] of cases) {
    const { cls, loc, anc } = detInputs(r, B, C, A);
    const e = refDetection(cls, loc, anc, [B, C, A], o);
    const y = nd._contrib_MultiBoxDetection(arr(cls, [B, C, A], 'float64'), arr(loc, [B, A * 4], 'float64'),
      arr(anc, [1, A, 4], 'float64'), o);
    assert.deepEqual(y.shape, [B, A, 6]);
    assertClose(flat(y), e, { rtol: 1e-12, atol: 1e-12, msg: JSON.stringify(o) });
    const y32 = nd._npx_multibox_detection(arr(cls, [B, C, A]), arr(loc, [B, A * 4]), arr(anc, [1, A, 4]), o);
    assertClose(flat(y32), e, { rtol: 1e-5, atol: 1e-6, msg: `float32 ${JSON.stringify(o)}` });
  }
});

test('MultiBoxDetection: a hand-worked case (decode, background, NMS by class), shapes and errors', () => {
  // 3 anchors, classes (background, a, b); anchor 2 is background; anchors 0 and 1 overlap (IoU 0.8)
  const cls = [[[0.1, 0.2, 0.99], [0.7, 0.3, 0.005], [0.2, 0.5, 0.005]]]; // anchor 2 under threshold 0.01
  const anc = [[[0.1, 0.1, 0.5, 0.5], [0.1, 0.1, 0.5, 0.6], [0.6, 0.6, 0.9, 0.9]]];
  const loc = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]];
  const y = nd._contrib_MultiBoxDetection(nd.array(cls), nd.array(loc), nd.array(anc), { nms_threshold: 0.5 });
  // anchor 0: class a (id 0) 0.7; anchor 1: class b (id 1) 0.5; different classes: no suppression
  const rest = [0.5, 0.1, 0.1, 0.5, 0.6, -1, -1, -1, -1, -1, -1];
  assertClose(flat(y), [0, 0.7, 0.1, 0.1, 0.5, 0.5, 1, ...rest], { atol: 1e-6 });
  const yf = nd._contrib_MultiBoxDetection(nd.array(cls), nd.array(loc), nd.array(anc),
    { nms_threshold: 0.5, force_suppress: true });
  assertClose(flat(yf), [0, 0.7, 0.1, 0.1, 0.5, 0.5, -1, ...rest], { atol: 1e-6 });
  const s = sym._contrib_MultiBoxDetection(sym.var('c'), sym.var('l'), sym.var('a'));
  assert.deepEqual(s.listArguments(), ['c', 'l', 'a']);
  assert.deepEqual(s.inferShape({ c: [2, 4, 9], l: [2, 36], a: [1, 9, 4] })[1], [[2, 9, 6]]);
  assert.throws(() => nd._contrib_MultiBoxDetection(nd.zeros([1, 3, 4]), nd.zeros([1, 12]), nd.zeros([1, 4, 4])),
    /# anchors mismatch with # loc/);
  assert.throws(() => nd._contrib_MultiBoxDetection(nd.zeros([1, 3, 4]), nd.zeros([1, 16]), nd.zeros([1, 5, 4])),
    /Number of anchors mismatch/);
  assert.throws(() => nd._contrib_MultiBoxDetection(nd.array(cls), nd.array(loc), nd.array(anc),
    { variances: [0.1, 0.2] }), /Variance size must be 4/);
});

// ---- MultiBoxTarget -------------------------------------------------------------------------------------
// MXNet's matching: IoUs (float) of anchors with the valid ground truths (up to the first id -1);
// greedily the best (anchor, gt) pair above 1e-6 until every gt is matched; then each other anchor
// to its best gt, positive when IoU > overlap_threshold; negatives: every other anchor, or with
// negative_mining_ratio > 0 the ratio * positives anchors below negative_mining_thresh that are
// least sure of background (softmax of cls_pred, stable order). Positives: class id + 1, mask 1,
// location ((g_c - a_c) / a_size / var, log(g_size / a_size) / var); negatives class 0; the rest
// ignore_label.
function refTarget(anc, lab, pred, [A, B, L, LW, C], o) {
  const { overlap_threshold: oth = 0.5, ignore_label: ign = -1, negative_mining_ratio: nr = -1 } = o;
  const nth = o.negative_mining_thresh ?? 0.5, v = o.variances ?? [0.1, 0.1, 0.2, 0.2];
  const locT = new Array(B * A * 4).fill(0), locM = new Array(B * A * 4).fill(0), clsT = new Array(B * A).fill(ign);
  for (let n = 0; n < B; n++) {
    const gts = [];
    for (let k = 0; k < L && lab[(n * L + k) * LW] !== -1; k++) {
      gts.push(lab.slice((n * L + k) * LW, (n * L + k) * LW + 5));
    }
    const G = gts.length;
    if (!G) continue;
    const iou = (j, k) => {
      const a = anc.slice(j * 4, j * 4 + 4), g = gts[k].slice(1);
      const side = (k) => Math.max(0, Math.min(a[k + 2], g[k + 2]) - Math.max(a[k], g[k]));
      const i = side(0) * side(1);
      const u = (a[2] - a[0]) * (a[3] - a[1]) + (g[2] - g[0]) * (g[3] - g[1]) - i;
      return f(u === 0 ? 0 : i / u);
    };
    const flag = new Array(A).fill(-1), match = new Array(A).fill(-1), mv = new Array(A).fill(-1);
    const gtDone = new Array(G).fill(false);
    let npos = 0;
    for (;;) {
      let best = f(1e-6), ba = -1, bg = -1;
      for (let j = 0; j < A; j++) {
        if (flag[j] === 1) continue;
        for (let k = 0; k < G; k++) if (!gtDone[k] && iou(j, k) > best) [best, ba, bg] = [iou(j, k), j, k];
      }
      if (ba < 0) break;
      [flag[ba], match[ba], mv[ba], gtDone[bg]] = [1, bg, best, true];
      npos++;
      if (gtDone.every(Boolean)) break;
    }
    const bestGt = (j) => {
      let bk = -1, bv = -1;
      for (let k = 0; k < G; k++) if (iou(j, k) > bv) [bk, bv] = [k, iou(j, k)];
      return [bk, bv];
    };
    if (f(oth) > 0) {
      for (let j = 0; j < A; j++) {
        if (flag[j] === 1) continue;
        [match[j], mv[j]] = bestGt(j);
        if (mv[j] > f(oth)) { flag[j] = 1; npos++; }
      }
    }
    if (f(nr) > 0) {
      let nneg = Math.trunc(f(npos * f(nr)));
      nneg = Math.min(nneg, A - npos);
      const cand = [];
      for (let j = 0; j < A; j++) {
        if (flag[j] === 1) continue;
        if (mv[j] < 0) [match[j], mv[j]] = bestGt(j);
        if (mv[j] < f(nth) && flag[j] === -1) {
          const p = Array.from({ length: C }, (_, k) => pred[(n * C + k) * A + j]), m = Math.max(...p);
          const sum = p.reduce((s, x) => s + Math.exp(x - m), 0);
          cand.push([-f(Math.exp(p[0] - m) / sum), j]);
        }
      }
      cand.sort((p, q) => q[0] - p[0]);
      for (let i = 0; i < nneg; i++) flag[cand[i][1]] = 0;
    } else {
      for (let j = 0; j < A; j++) if (flag[j] !== 1) flag[j] = 0;
    }
    for (let j = 0; j < A; j++) {
      if (flag[j] === 1) {
        const g = gts[match[j]], a = anc.slice(j * 4, j * 4 + 4);
        clsT[n * A + j] = g[0] + 1;
        const [aw, ah, gw, gh] = [a[2] - a[0], a[3] - a[1], g[3] - g[1], g[4] - g[2]];
        const t = [((g[1] + g[3]) / 2 - (a[0] + a[2]) / 2) / aw / v[0],
          ((g[2] + g[4]) / 2 - (a[1] + a[3]) / 2) / ah / v[1], Math.log(gw / aw) / v[2], Math.log(gh / ah) / v[3]];
        for (let k = 0; k < 4; k++) { locT[(n * A + j) * 4 + k] = t[k]; locM[(n * A + j) * 4 + k] = 1; }
      } else if (flag[j] === 0) {
        clsT[n * A + j] = 0;
      }
    }
  }
  return [locT, locM, clsT];
}

test('MultiBoxTarget: MXNet\'s test values (negative mining ratio 3)', () => {
  const anchors = nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]).reshape([1, -1, 4]);
  const clsPred = nd.arange(0, 10).reshape([1, -1, 2]);
  const label = nd.array([1, 0.1, 0.1, 0.5, 0.6]).reshape([1, -1, 5]);
  const [lt, lm, ct] = nd._contrib_MultiBoxTarget(anchors, label, clsPred,
    { overlap_threshold: 0.5, negative_mining_ratio: 3, negative_mining_thresh: 0.4 });
  assertClose(flat(lt), [5.0, 2.5000005, 3.4657357, 4.581454, 0, 0, 0, 0], { rtol: 1e-5, atol: 1e-5 });
  assert.deepEqual(flat(lm), [1, 1, 1, 1, 0, 0, 0, 0]);
  assert.deepEqual(flat(ct), [2, 0]);
});

test('MultiBoxTarget: random anchors and padded labels against the reference (mining, thresholds, variances)', () => {
  const r = rng(111);
  const cases = [
    [[9, 2, 3, 5, 3], {}],
    [[15, 3, 4, 6, 4], { overlap_threshold: 0.3, negative_mining_ratio: 2, negative_mining_thresh: 0.5 }],
    [[21, 2, 5, 5, 3],
      { overlap_threshold: 0, negative_mining_ratio: 1.5, negative_mining_thresh: 0.3, ignore_label: -2 }],
    [[11, 2, 3, 5, 2], { overlap_threshold: 0.2, variances: [0.2, 0.2, 0.5, 0.5] }],
    [[13, 2, 4, 7, 5], { negative_mining_ratio: 3, negative_mining_thresh: 0.45, minimum_negative_samples: 2 }],
  ];
  for (const [[A, B, L, LW, C], o] of cases) {
    const anc = [];
    for (let i = 0; i < A; i++) {
      const [x, y, w, h] = Array.from(r.uniform(4, 0, 1), Number);
      anc.push(x * 0.7, y * 0.7, x * 0.7 + 0.05 + w * 0.3, y * 0.7 + 0.05 + h * 0.3);
    }
    const lab = [];
    for (let n = 0; n < B; n++) {
      const valid = 1 + (n % L); // 1..L valid rows, the rest padding
      for (let k = 0; k < L; k++) {
        if (k >= valid) { lab.push(...new Array(LW).fill(-1)); continue; }
        const [c, x, y, w, h, ...rest] = Array.from(r.uniform(LW + 4, 0, 1), Number);
        lab.push(Math.floor(c * 3), x * 0.7, y * 0.7, x * 0.7 + 0.1 + w * 0.3, y * 0.7 + 0.1 + h * 0.3,
          ...rest.slice(0, LW - 5));
      }
    }
    const pred = Array.from(r.uniform(B * C * A, -2, 2), Number);
    const e = refTarget(anc, lab, pred, [A, B, L, LW, C], o);
    const outs = nd._contrib_MultiBoxTarget(arr(anc, [1, A, 4], 'float64'), arr(lab, [B, L, LW], 'float64'),
      arr(pred, [B, C, A], 'float64'), o);
    assert.deepEqual(outs.map((t) => t.shape), [[B, A * 4], [B, A * 4], [B, A]]);
    assertClose(flat(outs[0]), e[0], { rtol: 1e-5, atol: 1e-5, msg: `loc_target ${JSON.stringify(o)}` });
    assert.deepEqual(flat(outs[1]), e[1], `loc_mask ${JSON.stringify(o)}`);
    assert.deepEqual(flat(outs[2]), e[2], `cls_target ${JSON.stringify(o)}`);
    const o32 = nd._npx_multibox_target(arr(anc, [1, A, 4]), arr(lab, [B, L, LW]), arr(pred, [B, C, A]), o);
    assert.deepEqual(flat(o32[2]), e[2], `float32 cls_target ${JSON.stringify(o)}`);
  }
});

test('MultiBoxTarget: output names, shape rules and label errors', () => {
  const s = sym._contrib_MultiBoxTarget(sym.var('anchor'), sym.var('label'), sym.var('cls_pred'), { name: 't' });
  assert.deepEqual(s.listOutputs(), ['t_loc_target', 't_loc_mask', 't_cls_target']);
  assert.deepEqual(s.inferShape({ anchor: [1, 7, 4], label: [3, 2, 6], cls_pred: [3, 4, 7] })[1],
    [[3, 28], [3, 28], [3, 7]]);
  const anchors = nd.array([[[0.1, 0.1, 0.4, 0.4]]]);
  assert.throws(() => nd._contrib_MultiBoxTarget(nd.zeros([2, 1, 4]), nd.zeros([1, 1, 5]), nd.zeros([1, 2, 1])),
    /first dimension should be 1/);
  assert.throws(() => nd._contrib_MultiBoxTarget(anchors, nd.zeros([1, 1, 4]), nd.zeros([1, 2, 1])), /Label width/);
  assert.throws(() => nd._contrib_MultiBoxTarget(anchors, nd.zeros([1, 1, 5]), nd.zeros([1, 2, 3])), /Number of anchors mismatch/);
  assert.throws(() => nd._contrib_MultiBoxTarget(anchors, nd.array([[[-1, 0.1, -1, -1, -1]]]), nd.zeros([1, 2, 1])),
    /id -1 \(padding\) but its box is not all -1/);
  // no valid ground truth: every anchor ignored
  const [, , ct] = nd._contrib_MultiBoxTarget(anchors, nd.array([[[-1, -1, -1, -1, -1]]]), nd.zeros([1, 2, 1]),
    { ignore_label: -3 });
  assert.deepEqual(flat(ct), [-3]);
});
