// Convolution microbenchmark: GFLOP/s of nd.Convolution on the shapes the models use (LeNet's
// small-filter convs, ResNet's 3x3 and 1x1, a 7x7 stem, MobileNet's depthwise). Median of
// repeated runs after a warm-up (V8 runs wasm on its baseline tier first).
//   node bench/conv.mjs            (build first: bash scripts/build.sh wasm)
import * as mx from 'mxnet-wasm';
import { median } from './common.mjs';

const { nd } = mx;
const CASES = [
  // [label, data shape, filters, kernel, stride, pad, groups]
  ['LeNet conv0 (F5, k5)', [32, 1, 28, 28], 5, 5, 1, 0, 1],
  ['LeNet conv1 (C5 F5, k5)', [32, 5, 12, 12], 5, 5, 1, 0, 1],
  ['ResNet 3x3, 64ch, 56x56', [1, 64, 56, 56], 64, 3, 1, 1, 1],
  ['ResNet 3x3, 256ch, 14x14', [1, 256, 14, 14], 256, 3, 1, 1, 1],
  ['1x1, 64 -> 256, 56x56', [1, 64, 56, 56], 256, 1, 1, 0, 1],
  ['7x7 stem, stride 2', [1, 3, 224, 224], 64, 7, 2, 3, 1],
  ['depthwise 3x3, 32ch, 112x112', [1, 32, 112, 112], 32, 3, 1, 1, 32],
];

console.log('case                              GFLOP/s (median)   ms (median)');
for (const [label, shape, F, k, s, p, g] of CASES) {
  const [N, C, H, W] = shape;
  const x = nd.random.uniform(-1, 1, shape);
  const w = nd.random.uniform(-1, 1, [F, C / g, k, k]);
  const b = nd.zeros([F]);
  const attrs = { kernel: [k, k], stride: [s, s], pad: [p, p], num_filter: F, num_group: g };
  const run = () => nd.Convolution(x, w, b, attrs).dispose();
  const t0 = performance.now();
  while (performance.now() - t0 < 700) run(); // warm-up
  const Ho = Math.floor((H + 2 * p - k) / s) + 1, Wo = Math.floor((W + 2 * p - k) / s) + 1;
  const flops = 2 * N * F * Ho * Wo * (C / g) * k * k;
  const times = [];
  for (let r = 0; r < 9; r++) {
    let n = 0;
    const t = performance.now();
    while (performance.now() - t < 150) { run(); n++; }
    times.push((performance.now() - t) / n);
  }
  const ms = median(times);
  console.log(`${label.padEnd(34)}${(flops / ms / 1e6).toFixed(1).padStart(8)}${ms.toFixed(3).padStart(18)}`);
}
