// Helpers shared by the benchmarks: medians, deterministic inputs, output comparison, and MXNet ->
// TF.js weight layouts. Plain ES module (no Node imports): the browser side of the peers benchmark
// loads it too.
export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };

// Deterministic uniform [lo, hi) floats: the same bytes in every process for the same seed.
export function rand(n, lo, hi, seed) {
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = lo + (hi - lo) * (s / 4294967296);
  }
  return v;
}

// Max |a - ref| and that divided by max |ref| (the scale of the output); NaN counts as Infinity.
export function compare(a, ref) {
  if (a.length !== ref.length) return { abs: Infinity, rel: Infinity };
  let abs = 0, scale = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(a[i] - ref[i]);
    abs = Number.isNaN(d) ? Infinity : Math.max(abs, d);
    scale = Math.max(scale, Math.abs(ref[i]));
  }
  return { abs, rel: abs / (scale || 1) };
}

// [O, I, KH, KW] (MXNet/ONNX) -> [KH, KW, I, O] (TF.js conv2d filter)
export function oihwToHwio(w, [O, I, KH, KW]) {
  const out = new Float32Array(w.length);
  for (let o = 0; o < O; o++) for (let i = 0; i < I; i++) for (let y = 0; y < KH; y++) for (let x = 0; x < KW; x++) {
    out[((y * KW + x) * I + i) * O + o] = w[((o * I + i) * KH + y) * KW + x];
  }
  return out;
}

// [O, I] (MXNet FullyConnected weight) -> [I, O] (TF.js matMul right operand)
export function transpose2d(w, [O, I]) {
  const out = new Float32Array(w.length);
  for (let o = 0; o < O; o++) for (let i = 0; i < I; i++) out[i * O + o] = w[o * I + i];
  return out;
}
