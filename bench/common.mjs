// Helpers shared by the benchmarks: medians, and MXNet -> TF.js weight layouts.
export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };

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
