// Register-only f32x4 peak: GFLOP/s of hand-assembled wasm loops that keep a dozen f32x4 values in
// registers and update them with a multiply and an add, either as f32x4.mul then f32x4.add (the
// SIMD tiers' kernels) or as one f32x4.relaxed_madd (the relaxed tiers' FMA). Each update is 8 flops
// (4 lanes, a multiply and an add). No memory is touched inside the loops, so the figure is what
// the engine's code generator and the core can issue at best: the ceiling for a GEMM of that tier.
//
//   node bench/peak.mjs                                   peaks at 1 and 2 threads (mul+add)
//   node --experimental-wasm-relaxed-simd bench/peak.mjs  also relaxed_madd (Node 20 needs the flag)
//   env: PEAK_MS (one timed run, default 200), PEAK_RUNS (runs, the best is kept, default 7), THREADS (default "1,2"),
//        PEAK_JSON=1 prints one JSON line { muladd: { <threads>: {gflops, shape} | null }, relaxed: {...} }
//
// Two loop shapes, several sizes; a short probe picks the fastest per kind, then it is timed:
// - chain N: acc_k = acc_k * m + c for N accumulators. Every multiply waits for the previous add, so
//   a chain takes mul + add latency per step: with too few registers for enough chains it is
//   latency-bound (mul+add more than relaxed_madd, which is one instruction).
// - ring N: acc_k = acc_k + acc_(k-1) * m, the N accumulators in a ring (acc_(k-1) was updated N - 1
//   steps before), as a GEMM's acc += a * b: only the add is on an accumulator's own chain. m is 0
//   at run time (a function argument, so nothing can fold it), so the values stay where they start.
// Loop-invariant multiplications (acc += a * b with a, b fixed) are not used: V8 would compute a
// repeated a * b once per iteration after unrolling. Threads: N worker_threads run the same loop at
// once for the same number of iterations; the peak is N x flops / the wall time of the slowest.
// The figure is the best of the runs, not their median: it is a ceiling, and load from other
// processes on a shared machine only ever lowers a run.
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

export const SHAPES = ['chain 10', 'chain 12', 'chain 14', 'ring 11', 'ring 12', 'ring 13'];

// ---- a minimal wasm encoder for one function run(iters: i32, m: f32) -> f32 ----------------------
const uleb = (n) => {
  const out = [];
  do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n);
  return out;
};
const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const SIMD = (op) => [0xfd, ...uleb(op)];
const OP = {
  splat: SIMD(0x13), extract0: [...SIMD(0x1f), 0], add: SIMD(0xe4), mul: SIMD(0xe6), madd: SIMD(0x105),
  get: (i) => [0x20, ...uleb(i)], set: (i) => [0x21, ...uleb(i)], f32Const: (x) => [0x43, ...f32(x)],
};
// m at run time: 0.5 for chains (fixed point 2: no value ever becomes denormal or infinite), 0 for rings
export const runArg = (shape) => (shape.startsWith('chain') ? 0.5 : 0);

// kind: 'muladd' | 'relaxed'; shape: 'chain N' | 'ring N'. Locals: 0 = iters, 1 = m (params), 2 = m
// splat, 3 = c splat, 4.. = accumulators.
export function peakModule(kind, shape) {
  const [form, size] = shape.split(' '), n = Number(size);
  const mv = 2, c = 3, acc = (k) => 4 + k;
  const body = [...OP.get(1), ...OP.splat, ...OP.set(mv), ...OP.f32Const(1), ...OP.splat, ...OP.set(c)];
  for (let k = 0; k < n; k++) body.push(...OP.f32Const(1 + k / n), ...OP.splat, ...OP.set(acc(k)));
  body.push(0x02, 0x40, 0x03, 0x40); // block, loop
  body.push(...OP.get(0), 0x45, 0x0d, 1); // if (iters == 0) break
  for (let k = 0; k < n; k++) {
    // chain: acc_k * m + c; ring: acc_(k-1) * m + acc_k. relaxed_madd(a, b, c) = a * b + c
    const [x, y] = form === 'chain' ? [acc(k), c] : [acc((k + n - 1) % n), acc(k)];
    if (kind === 'relaxed') body.push(...OP.get(x), ...OP.get(mv), ...OP.get(y), ...OP.madd);
    else body.push(...OP.get(x), ...OP.get(mv), ...OP.mul, ...OP.get(y), ...OP.add);
    body.push(...OP.set(acc(k)));
  }
  body.push(...OP.get(0), 0x41, 1, 0x6b, ...OP.set(0), 0x0c, 0, 0x0b, 0x0b); // iters--, continue; end; end
  body.push(...OP.get(acc(0)));
  for (let k = 1; k < n; k++) body.push(...OP.get(acc(k)), ...OP.add);
  body.push(...OP.extract0, 0x0b);
  const func = [1, ...uleb(n + 2), 0x7b, ...body]; // one group of n + 2 v128 locals
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 2, 0x7f, 0x7d, 1, 0x7d]), // type 0: (i32, f32) -> f32
    ...section(3, [1, 0]),
    ...section(7, [1, 3, ...[...'run'].map((ch) => ch.charCodeAt(0)), 0x00, 0]),
    ...section(10, [1, ...uleb(func.length), ...func]),
  ]);
}
const flopsPerIter = (shape) => 8 * Number(shape.split(' ')[1]);

// Whether this host compiles the kind (relaxed SIMD: Node 20 only with --experimental-wasm-relaxed-simd).
export const peakSupported = (kind) => WebAssembly.validate(peakModule(kind, 'ring 4'));

// run(iters) for a kind and shape, on this thread.
export function peakRunner(kind, shape) {
  const run = new WebAssembly.Instance(new WebAssembly.Module(peakModule(kind, shape))).exports.run;
  const m = runArg(shape);
  return (iters) => run(iters, m);
}

// The shape with the highest rate on this thread (two short runs of each).
export function bestShape(kind, ms = 40) {
  let best = SHAPES[0], bestRate = 0;
  for (const shape of SHAPES) {
    const run = peakRunner(kind, shape);
    const n = calibrate(run, ms);
    for (let r = 0; r < 2; r++) {
      const t0 = performance.now();
      run(n);
      const rate = (n * flopsPerIter(shape)) / (performance.now() - t0);
      if (rate > bestRate) { bestRate = rate; best = shape; }
    }
  }
  return best;
}

// Iterations that take about ms on this thread (after V8 has tiered the loop up).
export function calibrate(run, ms) {
  let n = 1 << 16;
  run(n); // Liftoff first; then optimized
  for (;;) {
    const t0 = performance.now();
    run(n);
    const dt = performance.now() - t0;
    if (dt > ms / 4) return Math.max(1, Math.round((n * ms) / dt));
    n *= 4;
  }
}

// The best GFLOP/s of `runs` runs, on `threads` threads at once (worker_threads for threads > 1):
// { gflops, shape } or null where the host cannot compile the kind.
export async function measurePeak(kind, threads = 1, { ms = 200, runs = 7 } = {}) {
  if (!peakSupported(kind)) return null;
  const shape = bestShape(kind);
  const flops = flopsPerIter(shape);
  if (threads === 1) {
    const run = peakRunner(kind, shape);
    const iters = calibrate(run, ms);
    const g = [];
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      run(iters);
      g.push((iters * flops) / (performance.now() - t0) / 1e6);
    }
    return { gflops: Math.max(...g), shape };
  }
  // Workers: each calibrates alone, then every run starts all of them together and the wall time
  // is taken from the first start to the last finish.
  const url = new URL(import.meta.url);
  const workers = Array.from({ length: threads }, () => new Worker(url, { workerData: { kind, shape, ms } }));
  const next = (w) => new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
  const iters = await Promise.all(workers.map(next));
  const n = Math.min(...iters);
  const g = [];
  try {
    for (let r = 0; r < runs; r++) {
      const done = workers.map(next);
      const t0 = performance.now();
      for (const w of workers) w.postMessage(n);
      await Promise.all(done);
      g.push((threads * n * flops) / (performance.now() - t0) / 1e6);
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return { gflops: Math.max(...g), shape };
}

// ---- worker side ----------------------------------------------------------------------------------
const { isMainThread, parentPort, workerData } = await import('node:worker_threads');
if (!isMainThread && workerData?.kind) {
  const run = peakRunner(workerData.kind, workerData.shape);
  parentPort.postMessage(calibrate(run, workerData.ms));
  parentPort.on('message', (n) => { run(n); parentPort.postMessage('done'); });
}

// ---- standalone -----------------------------------------------------------------------------------
if (isMainThread && process.argv[1] === fileURLToPath(import.meta.url)) {
  const opts = { ms: Number(process.env.PEAK_MS ?? 200), runs: Number(process.env.PEAK_RUNS ?? 7) };
  const threads = (process.env.THREADS ?? '1,2').split(',').map(Number);
  const all = { muladd: {}, relaxed: {} };
  for (const kind of ['muladd', 'relaxed']) {
    for (const t of threads) {
      const p = await measurePeak(kind, t, opts);
      all[kind][t] = p;
      if (process.env.PEAK_JSON) continue;
      const name = kind === 'relaxed' ? 'f32x4.relaxed_madd' : 'f32x4 mul+add     ';
      console.log(`${name} ${t} thread${t > 1 ? 's' : ' '}: ` +
        (p === null ? 'not available on this host (Node 20: --experimental-wasm-relaxed-simd)'
          : `${p.gflops.toFixed(1)} GFLOP/s (${p.shape})`));
    }
  }
  if (process.env.PEAK_JSON) console.log(JSON.stringify(all));
}
