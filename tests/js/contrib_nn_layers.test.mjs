// gluon.contrib.nn's PixelShuffle1D/2D/3D and SyncBatchNorm (js/contrib_nn.mjs): the shuffles
// against the index rule written out here (out[n, c, h f1 + i, w f2 + j] = in[n, c f1 f2 + i f2 + j,
// h, w], and its 1-D / 3-D forms) and MXNet's docstring shapes, imperative and hybridized;
// SyncBatchNorm against batch normalization computed here in float64, its running statistics, and
// the _contrib_SyncBatchNorm node Python's layer exports.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, gluon, autograd } = mx;
const { PixelShuffle1D, PixelShuffle2D, PixelShuffle3D, SyncBatchNorm } = gluon.contrib.nn;
const randArr = (shape, seed) => nd.array(Array.from(rng(seed).uniform(shape.reduce((a, b) => a * b, 1), -1, 1), Number), { dtype: 'float64' }).reshape(shape);

// out index (spatial s, factor offsets r) <- in index: channel c * prod(f) + flat(r), position s
function shuffleRef(x, shape, f) {
  const [N, Cf, ...sp] = shape, d = f.length, prodF = f.reduce((a, b) => a * b, 1), C = Cf / prodF;
  const outSp = sp.map((v, i) => v * f[i]);
  const src = x.toTypedArray(), out = new Float64Array(src.length);
  const inStride = (n, ch, pos) => ((n * Cf + ch) * sp.reduce((a, b) => a * b, 1)) + pos;
  let o = 0;
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) {
    const walk = (axis, coords) => {
      if (axis === d) {
        let r = 0, pos = 0;
        for (let i = 0; i < d; i++) {
          r = r * f[i] + (coords[i] % f[i]);
          pos = pos * sp[i] + Math.floor(coords[i] / f[i]);
        }
        out[o++] = src[inStride(n, c * prodF + r, pos)];
        return;
      }
      for (let k = 0; k < outSp[axis]; k++) walk(axis + 1, [...coords, k]);
    };
    walk(0, []);
  }
  return { out, shape: [N, C, ...outSp] };
}

test('PixelShuffle1D/2D/3D: MXNet\'s docstring shapes; the values by the index rule, imperative and hybridized', () => {
  for (const [Layer, factor, shape, want] of [
    [PixelShuffle1D, 2, [1, 8, 3], [1, 4, 6]],
    [PixelShuffle2D, [2, 3], [1, 12, 3, 5], [1, 2, 6, 15]],
    [PixelShuffle3D, [2, 3, 4], [1, 48, 3, 5, 7], [1, 2, 6, 15, 28]],
    [PixelShuffle2D, 2, [2, 8, 3, 2], [2, 2, 6, 4]],
  ]) {
    const x = randArr(shape, shape.length);
    const f = Array.isArray(factor) ? factor : Array(shape.length - 2).fill(factor);
    const ref = shuffleRef(x, shape, f);
    assert.deepEqual(ref.shape, want);
    const layer = new Layer(factor);
    const y = layer(x);
    assert.deepEqual(y.shape, want);
    assert.deepEqual(Array.from(y.toTypedArray()), Array.from(ref.out));
    layer.hybridize();
    assert.deepEqual(Array.from(layer(x).toTypedArray()), Array.from(ref.out));
  }
  assert.equal(String(new PixelShuffle2D(2)), 'PixelShuffle2D((2, 2))');
  assert.throws(() => new PixelShuffle2D([2, 2, 2]), mx.MXNetError);
});

test('SyncBatchNorm: batch statistics on axis 1 in training, running statistics updated; exports _contrib_SyncBatchNorm', () => {
  const x = randArr([4, 3, 5], 7).astype('float32');
  const bn = new SyncBatchNorm({ in_channels: 3, num_devices: 1, momentum: 0.8, prefix: 'sbn_' });
  bn.initialize();
  let y;
  autograd.record(() => { y = bn(x); });
  const v = x.toArray();
  for (let c = 0; c < 3; c++) {
    const vals = v.flatMap((row) => row[c]);
    const mean = vals.reduce((a, b) => a + b, 0) / vals.length;
    const varr = vals.reduce((a, b) => a + (b - mean) ** 2, 0) / vals.length;
    const got = y.toArray().flatMap((row) => row[c]);
    assertClose(got, vals.map((t) => (t - mean) / Math.sqrt(varr + 1e-5)), { rtol: 1e-6, atol: 1e-7 });
    assertClose([bn.running_mean.data().toArray()[c]], [0.2 * mean], { rtol: 1e-6, atol: 1e-9 });
    // the biased variance, as sync_batch_norm-inl.h's E[x^2] - mean^2
    assertClose([bn.running_var.data().toArray()[c]], [0.8 + 0.2 * varr], { rtol: 1e-5, atol: 1e-9 });
  }
  const json = JSON.parse(bn(mx.sym.var('data')).tojson());
  const node = json.nodes.find((n) => n.op === '_contrib_SyncBatchNorm');
  assert.equal(node.attrs.key, 'sbn_');
  assert.equal(node.attrs.ndev, '1');
  assert.equal(node.name, 'sbn_fwd');
});
