// GEMM microbenchmark: GFLOP/s of mxw_sgemm (float32) through nd.dot and nd.FullyConnected on the
// shapes the models hit, squares, and the matrix-vector paths.
//   node bench/gemm.mjs                          (build first: bash scripts/build.sh wasm)
//   BASE=/tmp/distA node bench/gemm.mjs          also loads another build (e.g. a copy of dist/
//                                                made before a change) and reports the speedup
//   env: ROUNDS (timed runs per case and build, default 11, at least 9), RUN_MS (one run, default
//        60), WARM_MS (warm-up per case and build, default 1200), ONLY=<substring of a case name>
//
// The machine is shared: the runs of every case are interleaved across builds (so a load change
// hits both), each figure is the median of ROUNDS runs, and "speedup" is the median of the
// per-round ratios base time / new time. The warm-up matters: V8 first runs wasm through its baseline compiler
// (Liftoff, ~4x slower here) and swaps in optimized code only once a function has run hot.
import * as mx from 'mxnet-wasm';

const ROUNDS = Math.max(9, Number(process.env.ROUNDS ?? 11));
const RUN_MS = Number(process.env.RUN_MS ?? 60);
const WARM_MS = Number(process.env.WARM_MS ?? 1200);
const ONLY = process.env.ONLY;

const builds = [{ name: 'new', mx }];
if (process.env.BASE) builds.push({ name: 'base', mx: await import(`${process.env.BASE.replace(/\/$/, '')}/index.mjs`) });

// [name, M, N, K, kind]: dot = nd.dot(A (M, K), B (K, N)); dotT = nd.dot(A, B (N, K), transpose_b);
// fc = nd.FullyConnected(x (M, K), weight (N, K), bias (N)) (M = batch).
const CASES = [
  ['FC batch 64, 512 -> 256', 64, 256, 512, 'fc'],
  ['FC batch 64, 256 -> 128', 64, 128, 256, 'fc'],
  ['FC batch 64, 128 -> 2', 64, 2, 128, 'fc'],
  ['conv 3x3 GEMM 64x3136x576', 64, 3136, 576, 'dot'],
  ['conv 3x3 GEMM 128x784x1152', 128, 784, 1152, 'dot'],
  ['conv 1x1 GEMM 256x196x64', 256, 196, 64, 'dot'],
  ['FC batch 1, 512 -> 256', 1, 256, 512, 'fc'],
  ['FC batch 1, 4096 -> 4096', 1, 4096, 4096, 'fc'],
  ['FC batch 4, 300 -> 257', 4, 257, 300, 'fc'],
  ['FC batch 17, 300 -> 257', 17, 257, 300, 'fc'],
  ['FC batch 8, 4096 -> 1024', 8, 1024, 4096, 'fc'],
  ['dot 256^3', 256, 256, 256, 'dot'],
  ['dot 256^3 (B^T)', 256, 256, 256, 'dotT'],
  ['dot 1024^3', 1024, 1024, 1024, 'dot'],
].filter(([name]) => !ONLY || name.includes(ONLY));

function randArray(nd, shape, seed) {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    v[i] = s / 4294967296 - 0.5;
  }
  return nd.array(v, { shape });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

// Seconds per call, averaged over one run of about `ms`.
function run(fn, ms) {
  let reps = 0;
  const t0 = performance.now();
  let t;
  do {
    fn().dispose();
    reps++;
    t = performance.now();
  } while (t - t0 < ms);
  return (t - t0) / 1000 / reps;
}

const rows = [];
for (const [name, M, N, K, kind] of CASES) {
  const fns = builds.map(({ mx: lib }) => {
    const { nd } = lib;
    const a = randArray(nd, [M, K], 1);
    if (kind === 'fc') {
      const w = randArray(nd, [N, K], 2), b = randArray(nd, [N], 3);
      return () => nd.FullyConnected(a, w, b, { num_hidden: N });
    }
    const b = randArray(nd, kind === 'dotT' ? [N, K] : [K, N], 2);
    return () => nd.dot(a, b, { transpose_b: kind === 'dotT' });
  });
  for (const fn of fns) run(fn, WARM_MS);
  const times = fns.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...fns.keys()].reverse() : [...fns.keys()];
    for (const i of order) times[i].push(run(fns[i], RUN_MS));
  }
  const flops = 2 * M * N * K;
  const row = { case: name };
  builds.forEach((b, i) => { row[`GFLOP/s ${b.name}`] = +(flops / median(times[i]) / 1e9).toFixed(1); });
  if (builds.length > 1) row['speedup'] = +median(times[1].map((t, r) => t / times[0][r])).toFixed(2); // base time / new time
  if (M === 1) row['weight GB/s'] = +((4 * N * K) / median(times[0]) / 1e9).toFixed(1);
  rows.push(row);
}
console.table(rows);
