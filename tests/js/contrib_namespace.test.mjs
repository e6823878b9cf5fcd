// nd.contrib / sym.contrib / F.contrib: the _contrib_* operators without their prefix, as MXNet's
// Python exposes them (mx.nd.contrib.box_nms, F.contrib.div_sqrt_dim in GluonNLP's attention),
// imperatively and inside a hybridized block; values worked out by hand.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { nd, sym, gluon } = mx;

test('nd.contrib and sym.contrib hold the _contrib_ operators and their aliases', () => {
  assert.equal(nd.contrib.box_nms, nd._contrib_box_nms);
  assert.equal(nd.contrib.box_non_maximum_suppression, nd._contrib_box_non_maximum_suppression);
  assert.equal(JSON.parse(sym.contrib.div_sqrt_dim(sym.var('x')).toJSON()).nodes[1].op, '_contrib_div_sqrt_dim');
  // two overlapping boxes of one class: the lower score is suppressed (written as -1 rows)
  const b = nd.array([[[0, 0.9, 0, 0, 1, 1], [0, 0.8, 0, 0, 1, 1], [1, 0.7, 2, 2, 3, 3]]]);
  const r = nd.contrib.box_nms(b, { overlap_thresh: 0.5, id_index: 0, score_index: 1, coord_start: 2 });
  assert.deepEqual(Array.from(r.toTypedArray()), [0, 0.9, 0, 0, 1, 1, 1, 0.7, 2, 2, 3, 3, -1, -1, -1, -1, -1, -1].map(Math.fround));
});

test('F.contrib in hybridForward, imperative and hybridized', () => {
  class Scaled extends gluon.HybridBlock {
    hybridForward(F, x) { return F.contrib.div_sqrt_dim(x); } // x / sqrt(x.shape[-1])
  }
  const net = new Scaled();
  const x = nd.ones([2, 4]);
  assert.deepEqual(Array.from(net(x).toTypedArray()), Array(8).fill(0.5));
  net.hybridize();
  assert.deepEqual(Array.from(net(x).toTypedArray()), Array(8).fill(0.5));
});
