// GEMM microbenchmark: GFLOP/s of nd.dot (float32, mxw_sgemm) on square sizes, and the
// batch-1 FullyConnected (the matrix-vector path). Median of several timed runs after warm-up.
//   node bench/gemm.mjs            (build first: bash scripts/build.sh wasm)
import * as mx from 'mxnet-wasm';

const { nd } = mx;

function randArray(shape) {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  let s = 1;
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

// Times fn (which returns an NDArray to dispose) and returns the median seconds per call.
// The warm-up matters: V8 first runs wasm through its baseline compiler (Liftoff, ~4x slower
// here) and swaps in optimized code only once a function has run hot for a while.
function time(fn, minSeconds = 0.5, runs = 7, warmSeconds = 0.5) {
  const w0 = performance.now();
  do fn().dispose(); while (performance.now() - w0 < warmSeconds * 1000);
  const per = [];
  for (let r = 0; r < runs; r++) {
    let reps = 0;
    const t0 = performance.now();
    let t;
    do {
      fn().dispose();
      reps++;
      t = performance.now();
    } while (t - t0 < (minSeconds * 1000) / runs);
    per.push((t - t0) / 1000 / reps);
  }
  return median(per);
}

const rows = [];
for (const n of [256, 1024]) {
  for (const [ta, tb] of [[false, false], [false, true]]) {
    const a = randArray([n, n]), b = randArray([n, n]);
    const sec = time(() => nd.dot(a, b, { transpose_a: ta, transpose_b: tb }));
    rows.push({ case: `dot ${n}^3${tb ? ' (B^T)' : ''}`, ms: +(sec * 1e3).toFixed(3), GFLOPs: +((2 * n ** 3) / sec / 1e9).toFixed(1) });
    a.dispose();
    b.dispose();
  }
}
for (const [batch, inDim, hidden] of [[1, 4096, 4096], [1, 300, 257], [2, 300, 257], [3, 300, 257], [4, 300, 257], [17, 300, 257], [2, 4096, 1024], [4, 4096, 1024]]) {
  const x = randArray([batch, inDim]), w = randArray([hidden, inDim]), b = randArray([hidden]);
  const sec = time(() => nd.FullyConnected(x, w, b, { num_hidden: hidden }));
  const gflops = (2 * batch * inDim * hidden) / sec / 1e9;
  const gbs = (4 * inDim * hidden) / sec / 1e9; // weight bytes streamed per call
  rows.push({ case: `FC batch ${batch}, ${inDim} -> ${hidden}`, ms: +(sec * 1e3).toFixed(3), GFLOPs: +gflops.toFixed(1),
    'weight GB/s': +gbs.toFixed(1) });
  x.dispose();
  w.dispose();
  b.dispose();
}
console.table(rows);
