// Convolution microbenchmark: GFLOP/s of nd.Convolution on the shapes the models use -- LeNet's
// small-filter convolutions (batch 1 and 16), every distinct ResNet-18 layer at batch 1 (3x3
// stride 1 and 2, the 1x1 downsamples, the 7x7 stem), MobileNet v2's depthwise 3x3 (stride 1
// and 2) and some of its 1x1s, channel-last (NHWC) variants -- and, with MODEL=..., whole models
// from bench/models.mjs. Each figure is the median of ROUNDS runs after a warm-up (V8 first runs
// wasm on its baseline compiler and swaps in optimized code once a function is hot). The layer
// cases write into a preallocated output (`out`), as a hybridized graph does: a fresh eager output
// is calloc'ed, which alone costs ~0.09 ms per 1.6 MB here (ALLOC=1 measures that way).
//   node bench/conv.mjs                      (build first: bash scripts/build.sh wasm)
//   BASE=/tmp/distA node bench/conv.mjs      also loads another build (a copy of dist/ made before
//                                            a change): runs interleaved, "speedup" = base / new
//   env: TIER (simd, threads, relaxed-simd, relaxed-simd-threads; default: the package's choice),
//        THREADS (mx.setNumThreads), ONLY=<substring of case labels>, ROUNDS (default 9),
//        RUN_MS (one run, default 120), WARM_MS (warm-up per case and build, default 600),
//        MODEL=resnet18|mobilenetv2|lenet[:batch] (whole hybridized models instead of layers),
//        ALLOC=1 (layer cases allocate their output each call)
// Relaxed-SIMD tiers need `node --experimental-wasm-relaxed-simd bench/conv.mjs` in Node 20.
import { median } from './common.mjs';

const ROUNDS = Math.max(3, Number(process.env.ROUNDS ?? 9));
const RUN_MS = Number(process.env.RUN_MS ?? 120);
const WARM_MS = Number(process.env.WARM_MS ?? 600);
const ONLY = process.env.ONLY;
const TIER = process.env.TIER;
const entry = (dir) => `${dir.replace(/\/$/, '')}/${TIER ? `${TIER}.mjs` : 'index.mjs'}`;

const builds = [{ name: 'new', mx: await import(TIER ? `mxnet-wasm/${TIER}` : 'mxnet-wasm') }];
if (process.env.BASE) builds.push({ name: 'base', mx: await import(entry(process.env.BASE)) });
for (const b of builds) if (process.env.THREADS && b.mx.setNumThreads) b.mx.setNumThreads(Number(process.env.THREADS));

// [label, data shape (NCHW), filters, kernel, stride, pad, groups, count in ResNet-18 (for the
// layer-sum estimate), layout]
const CASES = [
  ['LeNet conv0 b1 (1->6, k5, 28x28)', [1, 1, 28, 28], 6, 5, 1, 0, 1],
  ['LeNet conv1 b1 (6->16, k5, 12x12)', [1, 6, 12, 12], 16, 5, 1, 0, 1],
  ['LeNet conv0 b16', [16, 1, 28, 28], 6, 5, 1, 0, 1],
  ['LeNet conv1 b16', [16, 6, 12, 12], 16, 5, 1, 0, 1],
  ['R18 stem 7x7/2 3->64 224', [1, 3, 224, 224], 64, 7, 2, 3, 1, 1],
  ['R18 3x3 64->64 56', [1, 64, 56, 56], 64, 3, 1, 1, 1, 4],
  ['R18 3x3/2 64->128 56', [1, 64, 56, 56], 128, 3, 2, 1, 1, 1],
  ['R18 1x1/2 64->128 56', [1, 64, 56, 56], 128, 1, 2, 0, 1, 1],
  ['R18 3x3 128->128 28', [1, 128, 28, 28], 128, 3, 1, 1, 1, 3],
  ['R18 3x3/2 128->256 28', [1, 128, 28, 28], 256, 3, 2, 1, 1, 1],
  ['R18 1x1/2 128->256 28', [1, 128, 28, 28], 256, 1, 2, 0, 1, 1],
  ['R18 3x3 256->256 14', [1, 256, 14, 14], 256, 3, 1, 1, 1, 3],
  ['R18 3x3/2 256->512 14', [1, 256, 14, 14], 512, 3, 2, 1, 1, 1],
  ['R18 1x1/2 256->512 14', [1, 256, 14, 14], 512, 1, 2, 0, 1, 1],
  ['R18 3x3 512->512 7', [1, 512, 7, 7], 512, 3, 1, 1, 1, 3],
  ['MNv2 dw3x3 32 112', [1, 32, 112, 112], 32, 3, 1, 1, 32],
  ['MNv2 dw3x3/2 96 112', [1, 96, 112, 112], 96, 3, 2, 1, 96],
  ['MNv2 dw3x3 144 56', [1, 144, 56, 56], 144, 3, 1, 1, 144],
  ['MNv2 dw3x3/2 144 56', [1, 144, 56, 56], 144, 3, 2, 1, 144],
  ['MNv2 dw3x3 192 28', [1, 192, 28, 28], 192, 3, 1, 1, 192],
  ['MNv2 dw3x3 384 14', [1, 384, 14, 14], 384, 3, 1, 1, 384],
  ['MNv2 dw3x3/2 576 14', [1, 576, 14, 14], 576, 3, 2, 1, 576],
  ['MNv2 dw3x3 960 7', [1, 960, 7, 7], 960, 3, 1, 1, 960],
  ['MNv2 1x1 16->96 112', [1, 16, 112, 112], 96, 1, 1, 0, 1],
  ['MNv2 1x1 144->24 56', [1, 144, 56, 56], 24, 1, 1, 0, 1],
  ['MNv2 1x1 96->576 14', [1, 96, 14, 14], 576, 1, 1, 0, 1],
  ['NHWC LeNet conv0 b1', [1, 1, 28, 28], 6, 5, 1, 0, 1, 0, 'NHWC'],
  ['NHWC LeNet conv1 b1', [1, 6, 12, 12], 16, 5, 1, 0, 1, 0, 'NHWC'],
  ['NHWC 3x3 64->64 56', [1, 64, 56, 56], 64, 3, 1, 1, 1, 0, 'NHWC'],
  ['NHWC dw3x3 144 56', [1, 144, 56, 56], 144, 3, 1, 1, 144, 0, 'NHWC'],
  ['NHWC 1x1 144->24 56', [1, 144, 56, 56], 24, 1, 1, 0, 1, 0, 'NHWC'],
].filter(([label]) => !ONLY || label.includes(ONLY));

function randArray(nd, shape, seed) {
  const v = new Float32Array(shape.reduce((a, b) => a * b, 1));
  let s = seed >>> 0;
  for (let i = 0; i < v.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = s / 4294967296 - 0.5;
  }
  return nd.array(v, { shape });
}

// Milliseconds per call, averaged over one run of about `ms`.
function run(fn, ms) {
  let reps = 0;
  const t0 = performance.now();
  let t;
  do {
    fn();
    reps++;
    t = performance.now();
  } while (t - t0 < ms);
  return (t - t0) / reps;
}

// Interleaved rounds over the builds; returns the per-build times (ms) of every round.
function measure(fns) {
  for (const fn of fns) run(fn, WARM_MS);
  const times = fns.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...fns.keys()].reverse() : [...fns.keys()];
    for (const i of order) times[i].push(run(fns[i], RUN_MS));
  }
  return times;
}

function row(label, flops, times) {
  const r = { case: label };
  builds.forEach((b, i) => {
    const ms = median(times[i]);
    r[`ms ${b.name}`] = +ms.toFixed(ms < 1 ? 4 : 2);
    if (flops) r[`GFLOP/s ${b.name}`] = +(flops / ms / 1e6).toFixed(1);
  });
  if (builds.length > 1) r.speedup = +median(times[1].map((t, k) => t / times[0][k])).toFixed(2);
  return r;
}

const rows = [];
if (process.env.MODEL) {
  const { modelByKey, modelInput, buildMx } = await import('./models.mjs');
  const [key, batch] = process.env.MODEL.split(':');
  const model = modelByKey(key);
  const n = Number(batch ?? model.batches[0]);
  const fns = builds.map(({ mx }) => {
    const net = buildMx(mx, model.build());
    const input = modelInput(model, n);
    const x = mx.nd.array(input.data, { shape: input.shape });
    return () => net.forward(x).dispose();
  });
  rows.push(row(`${model.name}, batch ${n}`, 0, measure(fns)));
} else {
  const est = builds.map(() => 0);
  let estFlops = 0;
  for (const [label, shape, F, k, s, p, g, count = 0, layout] of CASES) {
    const [N, C, H, W] = shape;
    const fns = builds.map(({ mx }) => {
      const { nd } = mx;
      const x = randArray(nd, layout ? [N, H, W, C] : shape, 1);
      const w = randArray(nd, layout ? [F, k, k, C / g] : [F, C / g, k, k], 2);
      const b = randArray(nd, [F], 3);
      const attrs = { kernel: [k, k], stride: [s, s], pad: [p, p], num_filter: F, num_group: g, ...(layout ? { layout } : {}) };
      if (process.env.ALLOC === '1') return () => nd.Convolution(x, w, b, attrs).dispose();
      const y = nd.Convolution(x, w, b, attrs);
      return () => nd.Convolution(x, w, b, { ...attrs, out: y });
    });
    const Ho = Math.floor((H + 2 * p - k) / s) + 1, Wo = Math.floor((W + 2 * p - k) / s) + 1;
    const times = measure(fns);
    const flops = 2 * N * F * Ho * Wo * (C / g) * k * k;
    rows.push(row(label, flops, times));
    estFlops += count * flops;
    builds.forEach((_, i) => { est[i] += count * median(times[i]); });
  }
  if (est[0] > 0) {
    const r = { case: 'ResNet-18 convolutions (sum of layers x count)' };
    builds.forEach((b, i) => { r[`ms ${b.name}`] = +est[i].toFixed(2); r[`GFLOP/s ${b.name}`] = +(estFlops / est[i] / 1e6).toFixed(1); });
    rows.push(r);
  }
}
const tierName = builds[0].mx.features?.()?.tier ?? TIER ?? 'default';
console.log(`tier ${tierName}, threads ${builds[0].mx.getNumThreads?.() ?? 1}; median of ${ROUNDS} runs of ~${RUN_MS} ms`);
console.table(rows);
