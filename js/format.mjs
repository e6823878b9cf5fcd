// format.mjs -- values into MXNet's string forms (what Python's str() gives, as stored in
// symbol JSON), and NDArray values printed the way MXNet (numpy) prints them.

// Python's repr of a float: shortest round-trip digits, scientific below 1e-4 and from 1e16,
// two-digit exponents ("1e-05"), and ".0" on integral values ("1.0").
export function pyFloat(v) {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  // Python's repr and JS's String agree (shortest round-trip digits, positional) on non-integers
  // in [1e-4, 1e16): the common case of every attribute (lr, momentum, eps) goes no further
  const a = Math.abs(v);
  if (a >= 1e-4 && a < 1e16 && !Number.isInteger(v)) return String(v);
  const [mant, expStr] = v.toExponential().split('e');
  const exp = Number(expStr);
  if (exp < -4 || exp >= 16) {
    const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : `${Math.abs(exp)}`;
    return `${mant}e${exp < 0 ? '-' : '+'}${e}`;
  }
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  let s;
  if (exp >= 0) {
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    s = `${intPart}.${frac || '0'}`;
  } else {
    s = `0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  return neg ? `-${s}` : s;
}

// A JS value as Python's str() would write the corresponding Python value: true -> "True",
// [3, 3] -> "(3, 3)", [2] -> "(2,)", null -> "None", 5 -> "5", 0.5 -> "0.5".
// `type` is the registry's attribute type; floats that are integral stay "1" (as Python's int
// 1 would), so callers that must write "1.0" pass that string.
export function attrString(value, type) {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return String(value);
    return pyFloat(value);
  }
  if (typeof value === 'bigint') return String(value);
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    const items = Array.from(value, (v) => attrString(v));
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
  }
  return String(value);
}

// ---- printing ----------------------------------------------------------------------------------
// The shortest decimal that reads back as the same float32.
function shortestF32(v) {
  for (let d = 1; d <= 9; d++) {
    const t = v.toPrecision(d);
    if (Math.fround(Number(t)) === v) return String(Number(t));
  }
  return String(v);
}

function formatFloats(values, f32) {
  // numpy's default: up to 8 significant decimals, trailing zeros dropped, a common width.
  const finite = values.filter((v) => Number.isFinite(v));
  const allInt = finite.every((v) => Number.isInteger(v));
  const maxAbs = finite.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const minAbs = finite.reduce((m, v) => Math.min(m, Math.abs(v) || m), Infinity);
  const sci = finite.length > 0 && (maxAbs >= 1e16 || (minAbs < 1e-4 && minAbs > 0 && !allInt) || (maxAbs / (minAbs || 1) > 1e3 && minAbs < 1e-4));
  // scientific mantissas share one fraction length: the longest shortest-repr one (numpy)
  const sciFrac = !sci ? 0 : Math.min(8, Math.max(0, ...finite.map((v) => {
    const m = Number(f32 ? shortestF32(v) : String(v)).toExponential().split('e')[0];
    return (m.split('.')[1] ?? '').length;
  })));
  const strs = values.map((v) => {
    if (Number.isNaN(v)) return 'nan';
    if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
    if (sci) {
      const [m, e] = v.toExponential(sciFrac).split('e');
      const en = Number(e);
      return `${sciFrac === 0 ? `${m}.` : m}e${en < 0 ? '-' : '+'}${String(Math.abs(en)).padStart(2, '0')}`;
    }
    if (allInt) return `${v.toFixed(0)}.`;
    // numpy's 'maxprec' mode: the value's shortest round-trip digits (of float32 for float32
    // arrays), at most 8 after the decimal point
    const short = f32 ? shortestF32(v) : String(v);
    const digits = short.includes('e') ? 8 : (short.split('.')[1] ?? '').length;
    const s = v.toFixed(Math.min(8, digits)).replace(/(\.\d*?)0+$/, '$1');
    return s.includes('.') ? s : `${s}.`;
  });
  if (sci || allInt) {
    const w = Math.max(...strs.map((s) => s.length));
    return strs.map((s) => s.padStart(w));
  }
  // align on the decimal point: pad the integer part left and the fraction right
  const parts = strs.map((s) => { const i = s.indexOf('.'); return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + 1)]; });
  const wi = Math.max(...parts.map((p) => p[0].length));
  const wf = Math.max(...parts.map((p) => p[1].length));
  return parts.map(([a, b]) => (b === '' && !strs.some((s) => s.includes('.')) ? a.padStart(wi) : `${a.padStart(wi)}.${b.padEnd(wf)}`));
}

export function formatValues(flat, shape, isFloat, isF32 = false) {
  const strs = isFloat ? formatFloats(Array.from(flat, Number), isF32) : (() => {
    const s = Array.from(flat, (v) => String(v));
    const w = Math.max(0, ...s.map((x) => x.length));
    return s.map((x) => x.padStart(w));
  })();
  if (shape.length === 0) return strs[0] ?? '';
  const summarize = flat.length > 1000;
  const rec = (dim, offset, indent) => {
    const n = shape[dim];
    const stride = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
    const idx = summarize && n > 6 ? [0, 1, 2, -1, n - 3, n - 2, n - 1] : [...Array(n).keys()];
    if (dim === shape.length - 1) {
      return `[${idx.map((i) => (i < 0 ? '...' : strs[offset + i])).join(' ')}]`;
    }
    const sep = `\n${'\n'.repeat(shape.length - dim - 2)}${' '.repeat(indent + 1)}`;
    return `[${idx.map((i) => (i < 0 ? '...' : rec(dim + 1, offset + i * stride, indent + 1))).join(sep)}]`;
  };
  return rec(0, 0, 0);
}
