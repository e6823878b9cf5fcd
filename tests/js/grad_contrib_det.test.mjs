// Gradients of the detection ops that MXNet differentiates (FGradient): _contrib_box_nms (each
// output row's gradient back at its source row), _contrib_ROIAlign, ROIPooling and
// _contrib_PSROIPooling (data gradients; rois get none) against central finite differences in
// float64 (tests/js/grad_check.mjs), eager and through a hybridized graph.
import test from 'node:test';
import { checkGrad, assertClose, assert, rng, nd, mx, autograd } from './grad_check.mjs';

const arr = (data, shape, dtype = 'float64') => nd.array(Array.from(data), { dtype }).reshape(shape);

// boxes [id, score, x1, y1, x2, y2] with distinct scores, some overlaps and ids 0.5 / 1.5 (box_nms
// truncates ids), so that small perturbations change neither the order nor the suppressions
function boxes(r, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const [c, cx, cy, w, h] = Array.from(r.uniform(5, 0, 1), Number);
    out.push(Math.floor(c * 2) + 0.5, (i + 0.5) / n, cx * 3, cy * 3, cx * 3 + 0.5 + w * 2, cy * 3 + 0.5 + h * 2);
  }
  // shuffle the scores between rows
  for (let i = n - 1; i > 0; i--) {
    const j = Math.min(i, Math.floor(r.uniform(1, 0, 1)[0] * (i + 1)));
    [out[i * 6 + 1], out[j * 6 + 1]] = [out[j * 6 + 1], out[i * 6 + 1]];
  }
  return out;
}

test('box_nms: finite differences (batches, topk, valid_thresh, classes, formats)', () => {
  const r = rng(301);
  checkGrad('_contrib_box_nms', [{ shape: [9, 6], data: boxes(r, 9) }], { overlap_thresh: 0.4 });
  checkGrad('_contrib_box_nms', [{ shape: [2, 7, 6], data: boxes(r, 14) }], { id_index: 0, overlap_thresh: 0.3, topk: 5 });
  checkGrad('_contrib_box_nms', [{ shape: [3, 5, 6], data: boxes(r, 15) }],
    { id_index: 0, valid_thresh: 0.31, force_suppress: true });
  checkGrad('_contrib_box_nms', [{ shape: [2, 2, 4, 6], data: boxes(r, 16) }],
    { in_format: 'center', out_format: 'center', overlap_thresh: 0.2 });
  // with a format conversion MXNet's gradient still copies each row's gradient unchanged (not the
  // derivative of the conversion): the same gradient as without it
  const x = arr(boxes(r, 7), [7, 6]);
  const g = ['corner', 'center'].map((out_format) => {
    const xx = x.copy();
    xx.attachGrad();
    const head = arr(Array.from({ length: 42 }, (_, k) => k + 1), [7, 6]);
    autograd.record(() => nd._contrib_box_nms(xx, { overlap_thresh: 0.3, out_format })).backward(head);
    return Array.from(xx.grad.toTypedArray());
  });
  assert.ok(g[0].some((v) => v !== 0));
  assert.deepEqual(g[1], g[0]);
});

// rois [batch, x1, y1, x2, y2] on a (N, C, 9, 11) map
function rois(r, R, N, scale) {
  const out = [];
  for (let i = 0; i < R; i++) {
    const [b, x, y, w, h] = Array.from(r.uniform(5, 0, 1), Number);
    const [x1, y1] = [x * 8 - 1, y * 6 - 1];
    out.push(Math.floor(b * N), x1 / scale, y1 / scale, (x1 + 1.5 + w * 4) / scale, (y1 + 1.5 + h * 4) / scale);
  }
  return out;
}

test('ROIAlign: finite differences (adaptive and fixed sampling, position_sensitive, aligned)', () => {
  const r = rng(311);
  const R = rois(r, 4, 2, 0.5);
  const rr = arr(R, [4, 5]);
  checkGrad('_contrib_ROIAlign', [{ shape: [2, 3, 9, 11] }, rr], { pooled_size: [2, 3], spatial_scale: 0.5 }, { wrt: [0] });
  checkGrad('_contrib_ROIAlign', [{ shape: [2, 2, 9, 11] }, rr], { pooled_size: [3, 2], spatial_scale: 0.5, sample_ratio: 2 },
    { wrt: [0] });
  checkGrad('_contrib_ROIAlign', [{ shape: [2, 12, 9, 11] }, rr],
    { pooled_size: [2, 3], spatial_scale: 0.5, position_sensitive: true }, { wrt: [0] });
  checkGrad('_contrib_ROIAlign', [{ shape: [2, 3, 9, 11] }, rr], { pooled_size: [2, 2], spatial_scale: 0.5, aligned: true },
    { wrt: [0] });
  // test_roi_align_autograd's rois (spatial_scale 1, (4, 1, 12, 12))
  const R2 = arr([0, 1.1, 1.1, 6.2, 6.2, 2, 6.1, 2.1, 8.2, 11.2, 1, 3.1, 1.1, 5.2, 10.2], [3, 5]);
  checkGrad('_contrib_ROIAlign', [{ shape: [4, 1, 12, 12] }, R2], { pooled_size: [4, 4], spatial_scale: 1 }, { wrt: [0] });
});

test('ROIPooling: finite differences (test_roipooling\'s rois, odd maps)', () => {
  // test_roipooling: data (4, 3, 12, 8), pooled (4, 4), spatial_scale 1
  const R = arr([0, 1.1, 1.1, 6.2, 6.2, 2, 6.1, 2.1, 8.2, 11.2, 1, 3.1, 1.1, 5.2, 10.2, 0, 3, 3, 3, 3], [4, 5]);
  checkGrad('ROIPooling', [{ shape: [4, 3, 12, 8] }, R], { pooled_size: [4, 4], spatial_scale: 1 }, { wrt: [0] });
  const r = rng(321);
  checkGrad('ROIPooling', [{ shape: [2, 2, 9, 11] }, arr(rois(r, 5, 2, 0.5), [5, 5])], { pooled_size: [3, 2], spatial_scale: 0.5 },
    { wrt: [0] });
});

test('PSROIPooling: finite differences (group_size = pooled_size, and a coarser group)', () => {
  const r = rng(331);
  const R = arr(rois(r, 3, 2, 0.25).map((v, i) => (i % 5 === 0 ? v : Math.max(0, v))), [3, 5]);
  checkGrad('_contrib_PSROIPooling', [{ shape: [2, 18, 9, 11] }, R], { spatial_scale: 0.25, output_dim: 2, pooled_size: 3 },
    { wrt: [0] });
  checkGrad('_contrib_PSROIPooling', [{ shape: [2, 8, 9, 11] }, R],
    { spatial_scale: 0.25, output_dim: 2, pooled_size: 3, group_size: 2 }, { wrt: [0] });
});

test('a hybridized graph gives the eager gradients (box_nms, ROIAlign, ROIPooling, PSROIPooling)', () => {
  const r = rng(341);
  const box = arr(boxes(r, 8), [2, 4, 6]);
  const R = arr(rois(r, 3, 2, 0.5).map((v, i) => (i % 5 === 0 ? v : Math.max(0, v))), [3, 5]);
  const feat = arr(Array.from(r.uniform(2 * 18 * 9 * 11), Number), [2, 18, 9, 11]);
  const f = (F, b, x, rr) => F.add_n(
    F.sum(F._contrib_box_nms(b, { id_index: 0, overlap_thresh: 0.3 })),
    F.sum(F._contrib_ROIAlign(x, rr, { pooled_size: [3, 3], spatial_scale: 0.5, sample_ratio: 2 })),
    F.sum(F.ROIPooling(x, rr, { pooled_size: [2, 3], spatial_scale: 0.5 })),
    F.sum(F._contrib_PSROIPooling(x, rr, { spatial_scale: 0.5, output_dim: 2, pooled_size: 3 })));
  const grads = [false, true].map((hybrid) => {
    const blk = new mx.gluon.nn.HybridLambda(f);
    if (hybrid) blk.hybridize();
    const [b, x] = [box.copy(), feat.copy()];
    b.attachGrad();
    x.attachGrad();
    autograd.record(() => blk.forward(b, x, R)).backward();
    return [Array.from(b.grad.toTypedArray()), Array.from(x.grad.toTypedArray())];
  });
  assert.ok(grads[0][1].some((v) => v !== 0) && grads[0][0].some((v) => v !== 0));
  assertClose(grads[1][0], grads[0][0], { rtol: 1e-12, atol: 0 });
  assertClose(grads[1][1], grads[0][1], { rtol: 1e-12, atol: 1e-15 });
});
