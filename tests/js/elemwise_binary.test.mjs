// Elementwise binary ops (broadcast_*, same-shape, *_scalar, add_n), the NDArray arithmetic
// methods and the nd.add/subtract/... helpers, against TensorFlow.js's CPU kernels (an
// independent implementation) on random data, plus hand-worked integer semantics and errors.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, sizeOf, roundToFormat, FLOAT16, BFLOAT16 } from './oracle.mjs';

const { nd } = mx;

// ---- data ----------------------------------------------------------------------------------------
// Kinds of operands, chosen so every op is defined and interesting on them: divisors stay away
// from 0, powers take positive bases, comparisons and logic get small integers (ties and zeros).
let seed = 100;
function values(kind, n) {
  const r = rng(seed++);
  switch (kind) {
    case 'any': return r.uniform(n, -3, 3);
    case 'nonzero': {
      const mag = r.uniform(n, 0.5, 2), sign = r.uniform(n, -1, 1);
      return mag.map((m, i) => (sign[i] < 0 ? -m : m));
    }
    case 'pos': return r.uniform(n, 0.2, 3);
    case 'expo': return r.uniform(n, -2, 2);
    case 'small': return r.uniform(n, -2.49, 2.49).map(Math.round);
    default: throw new Error(kind);
  }
}
// Arrays of ones made here, so these tests depend on no other op family.
const ones = (shape, dtype = 'float32') => nd.array(new Array(sizeOf(shape)).fill(1), { shape, dtype });
const ref = (fn, ...operands) => tf.tidy(() => fn(...operands.map(([v, s]) => tf.tensor(v, s)))).dataSync();
const f32 = (t) => tf.cast(t, 'float32');
const bool = (t) => tf.notEqual(t, 0);

// ---- the op table: [canonical fn, lhs kind, rhs kind, tfjs reference, aliases] --------------------
const OPS = {
  add: ['any', 'any', (a, b) => tf.add(a, b)],
  sub: ['any', 'any', (a, b) => tf.sub(a, b)],
  mul: ['any', 'any', (a, b) => tf.mul(a, b)],
  div: ['any', 'nonzero', (a, b) => tf.div(a, b)],
  mod: ['any', 'nonzero', (a, b) => tf.mod(a, b)],
  power: ['pos', 'expo', (a, b) => tf.pow(a, b)],
  maximum: ['any', 'any', (a, b) => tf.maximum(a, b)],
  minimum: ['any', 'any', (a, b) => tf.minimum(a, b)],
  hypot: ['any', 'any', (a, b) => tf.sqrt(tf.add(tf.square(a), tf.square(b)))],
  equal: ['small', 'small', (a, b) => f32(tf.equal(a, b))],
  not_equal: ['small', 'small', (a, b) => f32(tf.notEqual(a, b))],
  greater: ['small', 'small', (a, b) => f32(tf.greater(a, b))],
  greater_equal: ['small', 'small', (a, b) => f32(tf.greaterEqual(a, b))],
  lesser: ['small', 'small', (a, b) => f32(tf.less(a, b))],
  lesser_equal: ['small', 'small', (a, b) => f32(tf.lessEqual(a, b))],
  logical_and: ['small', 'small', (a, b) => f32(tf.logicalAnd(bool(a), bool(b)))],
  logical_or: ['small', 'small', (a, b) => f32(tf.logicalOr(bool(a), bool(b)))],
  logical_xor: ['small', 'small', (a, b) => f32(tf.logicalXor(bool(a), bool(b)))],
};

// Every broadcast op by its canonical name, with its aliases.
const BROADCAST = {
  add: [nd.broadcast_add, { broadcast_plus: nd.broadcast_plus, _npi_add: nd._npi_add, _sparse_broadcast_add: nd._sparse_broadcast_add }],
  sub: [nd.broadcast_sub, { broadcast_minus: nd.broadcast_minus, _npi_subtract: nd._npi_subtract }],
  mul: [nd.broadcast_mul, { _npi_multiply: nd._npi_multiply }],
  div: [nd.broadcast_div, { _npi_true_divide: nd._npi_true_divide }],
  mod: [nd.broadcast_mod, { _npi_mod: nd._npi_mod }],
  power: [nd.broadcast_power, { _npi_power: nd._npi_power }],
  maximum: [nd.broadcast_maximum, { _npi_maximum: nd._npi_maximum }],
  minimum: [nd.broadcast_minimum, { _npi_minimum: nd._npi_minimum }],
  hypot: [nd.broadcast_hypot, {}],
  equal: [nd.broadcast_equal, {}],
  not_equal: [nd.broadcast_not_equal, {}],
  greater: [nd.broadcast_greater, {}],
  greater_equal: [nd.broadcast_greater_equal, {}],
  lesser: [nd.broadcast_lesser, {}],
  lesser_equal: [nd.broadcast_lesser_equal, {}],
  logical_and: [nd.broadcast_logical_and, {}],
  logical_or: [nd.broadcast_logical_or, {}],
  logical_xor: [nd.broadcast_logical_xor, {}],
};

// Same-shape ops, with their aliases.
const ELEMWISE = {
  add: [nd.elemwise_add, { _add: nd._add, _plus: nd._plus, _Plus: nd._Plus }],
  sub: [nd.elemwise_sub, { _sub: nd._sub, _minus: nd._minus, _Minus: nd._Minus, _sparse_elemwise_sub: nd._sparse_elemwise_sub }],
  mul: [nd.elemwise_mul, { _mul: nd._mul, _Mul: nd._Mul, _sparse_elemwise_mul: nd._sparse_elemwise_mul }],
  div: [nd.elemwise_div, { _div: nd._div, _Div: nd._Div, _sparse_elemwise_div: nd._sparse_elemwise_div }],
  mod: [nd._mod, { _Mod: nd._Mod }],
  power: [nd._power, { _Power: nd._Power }],
  maximum: [nd._maximum, { _Maximum: nd._Maximum }],
  minimum: [nd._minimum, { _Minimum: nd._Minimum }],
  hypot: [nd._hypot, {}],
  equal: [nd._equal, { _Equal: nd._Equal }],
  not_equal: [nd._not_equal, { _Not_Equal: nd._Not_Equal }],
  greater: [nd._greater, { _Greater: nd._Greater }],
  greater_equal: [nd._greater_equal, { _Greater_Equal: nd._Greater_Equal }],
  lesser: [nd._lesser, { _Lesser: nd._Lesser }],
  lesser_equal: [nd._lesser_equal, { _Lesser_Equal: nd._Lesser_Equal }],
  logical_and: [nd._logical_and, {}],
  logical_or: [nd._logical_or, {}],
  logical_xor: [nd._logical_xor, {}],
};

// Broadcast patterns [lhs shape, rhs shape]: same shape (with odd SIMD tails), (N,C)+(C,),
// (N,C,H,W)+(1,C,1,1), (2,1,3)+(4,1), scalar-like (1,) on either side, and the reverses.
const PATTERNS = [
  [[3, 4], [3, 4]],
  [[3, 37], [3, 37]],
  [[5, 7], [7]],
  [[7], [5, 7]],
  [[2, 3, 4, 5], [1, 3, 1, 1]],
  [[1, 3, 1, 1], [2, 3, 4, 5]],
  [[2, 1, 3], [4, 1]],
  [[3, 4], [1]],
  [[1], [37]],
  [[4, 1], [1, 5]],
  [[6, 1], [6, 9]],
  [[], [2, 3]],
];
const broadcastShape = (a, b) => {
  const n = Math.max(a.length, b.length);
  return Array.from({ length: n }, (_, i) => {
    const x = a[a.length - n + i] ?? 1, y = b[b.length - n + i] ?? 1;
    return x === 1 ? y : x;
  });
};

function checkBinary(label, fn, op, lhsShape, rhsShape) {
  const [lk, rk, tfRef] = OPS[op];
  const a = values(lk, sizeOf(lhsShape)), b = values(rk, sizeOf(rhsShape));
  const y = fn(nd.array(a, { shape: lhsShape }), nd.array(b, { shape: rhsShape }));
  assert.deepEqual(y.shape, broadcastShape(lhsShape, rhsShape), `${label} shape`);
  assert.equal(y.dtype, 'float32');
  const expected = ref(tfRef, [a, lhsShape], [b, rhsShape]);
  assertClose(y.toTypedArray(), expected, { rtol: 2e-6, atol: 1e-6, msg: label });
}

for (const [op, [fn, aliases]] of Object.entries(BROADCAST)) {
  test(`broadcast ${op} matches tfjs on every broadcast pattern`, () => {
    for (const [ls, rs] of PATTERNS) {
      mx.tidy(() => checkBinary(`broadcast_${op} (${ls}) (${rs})`, fn, op, ls, rs));
    }
  });
  for (const [alias, afn] of Object.entries(aliases)) {
    test(`${alias} is broadcast_${op}`, () => {
      assert.equal(afn, fn);
      checkBinary(alias, afn, op, [2, 1, 3], [4, 1]);
    });
  }
}

for (const [op, [fn, aliases]] of Object.entries(ELEMWISE)) {
  test(`same-shape ${fn.name} and its aliases match tfjs`, () => {
    checkBinary(fn.name, fn, op, [3, 5, 7], [3, 5, 7]);
    for (const [alias, afn] of Object.entries(aliases)) checkBinary(alias, afn, op, [4, 9], [4, 9]);
    // no broadcasting, even between compatible shapes
    assert.throws(() => fn(ones([2, 3]), ones([1, 3])),
      (e) => e instanceof mx.MXNetError && e.message.includes(`Operator ${fn.name}`) &&
        e.message.includes('(2, 3)') && e.message.includes('(1, 3)'));
  });
}

// ---- scalar ops: [fn, aliases, data kind, scalar, tfjs reference of (tensor, scalar)] -------------
const SCALAR = [
  [nd._plus_scalar, { _PlusScalar: nd._PlusScalar }, 'any', 1.5, (t, s) => tf.add(t, s)],
  [nd._minus_scalar, { _MinusScalar: nd._MinusScalar }, 'any', 1.5, (t, s) => tf.sub(t, s)],
  [nd._rminus_scalar, { _RMinusScalar: nd._RMinusScalar }, 'any', 1.5, (t, s) => tf.sub(s, t)],
  [nd._mul_scalar, { _MulScalar: nd._MulScalar }, 'any', -2.5, (t, s) => tf.mul(t, s)],
  [nd._div_scalar, { _DivScalar: nd._DivScalar }, 'any', -1.7, (t, s) => tf.div(t, s)],
  [nd._rdiv_scalar, { _RDivScalar: nd._RDivScalar }, 'nonzero', 3, (t, s) => tf.div(s, t)],
  [nd._mod_scalar, { _ModScalar: nd._ModScalar }, 'any', 1.3, (t, s) => tf.mod(t, s)],
  [nd._mod_scalar, {}, 'any', -1.3, (t, s) => tf.mod(t, s)],
  [nd._rmod_scalar, { _RModScalar: nd._RModScalar }, 'nonzero', 2.5, (t, s) => tf.mod(s, t)],
  [nd._rmod_scalar, {}, 'nonzero', -2.5, (t, s) => tf.mod(s, t)],
  [nd._power_scalar, { _PowerScalar: nd._PowerScalar }, 'pos', 2.5, (t, s) => tf.pow(t, s)],
  [nd._rpower_scalar, { _RPowerScalar: nd._RPowerScalar }, 'expo', 1.7, (t, s) => tf.pow(s, t)],
  [nd._maximum_scalar, { _MaximumScalar: nd._MaximumScalar }, 'any', 0.3, (t, s) => tf.maximum(t, s)],
  [nd._minimum_scalar, { _MinimumScalar: nd._MinimumScalar }, 'any', 0.3, (t, s) => tf.minimum(t, s)],
  [nd._hypot_scalar, { _HypotScalar: nd._HypotScalar }, 'any', 2, (t, s) => tf.sqrt(tf.add(tf.square(t), s * s))],
  [nd._equal_scalar, { _EqualScalar: nd._EqualScalar }, 'small', 1, (t, s) => f32(tf.equal(t, s))],
  [nd._not_equal_scalar, { _NotEqualScalar: nd._NotEqualScalar }, 'small', 1, (t, s) => f32(tf.notEqual(t, s))],
  [nd._greater_scalar, { _GreaterScalar: nd._GreaterScalar }, 'small', 1, (t, s) => f32(tf.greater(t, s))],
  [nd._greater_equal_scalar, { _GreaterEqualScalar: nd._GreaterEqualScalar }, 'small', 1, (t, s) => f32(tf.greaterEqual(t, s))],
  [nd._lesser_scalar, { _LesserScalar: nd._LesserScalar }, 'small', -1, (t, s) => f32(tf.less(t, s))],
  [nd._lesser_equal_scalar, { _LesserEqualScalar: nd._LesserEqualScalar }, 'small', -1, (t, s) => f32(tf.lessEqual(t, s))],
  [nd._logical_and_scalar, {}, 'small', 2, (t, s) => f32(tf.logicalAnd(bool(t), s !== 0))],
  [nd._logical_and_scalar, {}, 'small', 0, (t, s) => f32(tf.logicalAnd(bool(t), s !== 0))],
  [nd._logical_or_scalar, {}, 'small', 0, (t, s) => f32(tf.logicalOr(bool(t), s !== 0))],
  [nd._logical_or_scalar, {}, 'small', -3, (t, s) => f32(tf.logicalOr(bool(t), s !== 0))],
  [nd._logical_xor_scalar, {}, 'small', 2, (t, s) => f32(tf.logicalXor(bool(t), s !== 0))],
  [nd._logical_xor_scalar, {}, 'small', 0, (t, s) => f32(tf.logicalXor(bool(t), s !== 0))],
];

for (const [fn, aliases, kind, s, tfRef] of SCALAR) {
  test(`${fn.name} (scalar ${s}) and its aliases match tfjs`, () => {
    const shape = [3, 37];
    for (const [name, f] of [[fn.name, fn], ...Object.entries(aliases)]) {
      const x = values(kind, sizeOf(shape));
      const y = f(nd.array(x, { shape }), { scalar: s });
      assert.deepEqual(y.shape, shape);
      assert.equal(y.dtype, 'float32');
      const expected = tf.tidy(() => tfRef(tf.tensor(x, shape), s).dataSync());
      assertClose(y.toTypedArray(), expected, { rtol: 2e-6, atol: 1e-6, msg: name });
    }
  });
}

test('scalar defaults: scalar = 1, is_int accepted', () => {
  const x = nd.array([1, 2, 3]);
  assert.deepEqual(Array.from(nd._plus_scalar(x).toTypedArray()), [2, 3, 4]);
  assert.deepEqual(Array.from(nd._mul_scalar(x, { scalar: 0.5, is_int: false }).toTypedArray()), [0.5, 1, 1.5]);
  assert.throws(() => nd._plus_scalar(x, { scalr: 2 }), (e) => e instanceof mx.MXNetError && /unknown attribute 'scalr'/.test(e.message));
});

// ---- NDArray methods and nd.* helpers -------------------------------------------------------------
test('NDArray arithmetic methods with NDArray operands match tfjs (broadcasting)', () => {
  const a = values('any', 20), b = values('nonzero', 5), p = values('pos', 20);
  const x = nd.array(a, { shape: [4, 5] }), y = nd.array(b, { shape: [5] }), px = nd.array(p, { shape: [4, 5] });
  const T = (v, s) => tf.tensor(v, s);
  const cases = [
    [x.add(y), (ta, tb) => tf.add(ta, tb)],
    [x.sub(y), (ta, tb) => tf.sub(ta, tb)],
    [x.mul(y), (ta, tb) => tf.mul(ta, tb)],
    [x.div(y), (ta, tb) => tf.div(ta, tb)],
    [x.mod(y), (ta, tb) => tf.mod(ta, tb)],
    [x.maximum(y), (ta, tb) => tf.maximum(ta, tb)],
    [x.minimum(y), (ta, tb) => tf.minimum(ta, tb)],
  ];
  for (const [got, f] of cases) {
    assertClose(got.toTypedArray(), tf.tidy(() => f(T(a, [4, 5]), T(b, [5])).dataSync()), { msg: f.toString() });
  }
  assertClose(px.pow(y).toTypedArray(), tf.tidy(() => tf.pow(T(p, [4, 5]), T(b, [5])).dataSync()), { rtol: 2e-6 });
  assertClose(x.neg().toTypedArray(), tf.tidy(() => tf.neg(T(a, [4, 5])).dataSync()));
});

test('NDArray arithmetic methods with number operands match tfjs', () => {
  const a = values('any', 30), p = values('pos', 30);
  const x = nd.array(a, { shape: [5, 6] }), px = nd.array(p, { shape: [5, 6] });
  const t = () => tf.tensor(a, [5, 6]);
  const cases = [
    [x.add(2.5), () => tf.add(t(), 2.5)],
    [x.sub(2.5), () => tf.sub(t(), 2.5)],
    [x.rsub(2.5), () => tf.sub(2.5, t())],
    [x.mul(-3), () => tf.mul(t(), -3)],
    [x.div(0.75), () => tf.div(t(), 0.75)],
    [x.mod(1.25), () => tf.mod(t(), 1.25)],
    [x.maximum(0.5), () => tf.maximum(t(), 0.5)],
    [x.minimum(0.5), () => tf.minimum(t(), 0.5)],
    [px.pow(1.5), () => tf.pow(tf.tensor(p, [5, 6]), 1.5)],
    [px.rdiv(2), () => tf.div(2, tf.tensor(p, [5, 6]))],
  ];
  for (const [got, f] of cases) assertClose(got.toTypedArray(), tf.tidy(() => f().dataSync()), { rtol: 2e-6, msg: f.toString() });
});

test('NDArray comparison methods with NDArray and number operands match tfjs', () => {
  const a = values('small', 24), b = values('small', 6);
  const x = nd.array(a, { shape: [4, 6] }), y = nd.array(b, { shape: [6] });
  const T = () => [tf.tensor(a, [4, 6]), tf.tensor(b, [6])];
  const cases = [
    ['equal', (u, v) => tf.equal(u, v)], ['notEqual', (u, v) => tf.notEqual(u, v)],
    ['greater', (u, v) => tf.greater(u, v)], ['greaterEqual', (u, v) => tf.greaterEqual(u, v)],
    ['lesser', (u, v) => tf.less(u, v)], ['lesserEqual', (u, v) => tf.lessEqual(u, v)],
  ];
  for (const [method, f] of cases) {
    const withArray = x[method](y);
    assert.equal(withArray.dtype, 'float32');
    assertClose(withArray.toTypedArray(), tf.tidy(() => f32(f(...T())).dataSync()), { msg: `${method} array` });
    const withNumber = x[method](1);
    assertClose(withNumber.toTypedArray(), tf.tidy(() => f32(f(T()[0], 1)).dataSync()), { msg: `${method} number` });
  }
  // the short Python-style names are the same methods
  assert.deepEqual(Array.from(x.gt(0).toTypedArray()), Array.from(x.greater(0).toTypedArray()));
  assert.deepEqual(Array.from(x.le(y).toTypedArray()), Array.from(x.lesserEqual(y).toTypedArray()));
});

test('nd.add/subtract/multiply/divide/modulo/power/maximum/minimum/comparisons with a number on either side', () => {
  const a = values('nonzero', 12), b = values('any', 12);
  const x = nd.array(a, { shape: [3, 4] }), z = nd.array(b, { shape: [3, 4] });
  const t = () => tf.tensor(a, [3, 4]);
  const cases = [
    [nd.add(x, 2), () => tf.add(t(), 2)],
    [nd.add(2, x), () => tf.add(2, t())],
    [nd.subtract(x, 1), () => tf.sub(t(), 1)],
    [nd.subtract(1, x), () => tf.sub(1, t())], // _rminus_scalar
    [nd.multiply(3, x), () => tf.mul(3, t())],
    [nd.divide(x, 4), () => tf.div(t(), 4)],
    [nd.divide(1, x), () => tf.div(1, t())], // _rdiv_scalar
    [nd.modulo(x, 0.7), () => tf.mod(t(), 0.7)],
    [nd.modulo(5, x), () => tf.mod(5, t())], // _rmod_scalar
    [nd.power(2, x), () => tf.pow(2, t())], // _rpower_scalar
    [nd.power(nd.abs(x), 2), () => tf.pow(tf.abs(t()), 2)],
    [nd.maximum(0.5, x), () => tf.maximum(0.5, t())],
    [nd.minimum(x, 0.5), () => tf.minimum(t(), 0.5)],
    [nd.greater(1, x), () => f32(tf.greater(1, t()))],
    [nd.greater_equal(x, 1), () => f32(tf.greaterEqual(t(), 1))],
    [nd.lesser(1, x), () => f32(tf.less(1, t()))],
    [nd.lesser_equal(1, x), () => f32(tf.lessEqual(1, t()))],
    [nd.equal(x, x), () => f32(tf.equal(t(), t()))],
    [nd.not_equal(0.5, x), () => f32(tf.notEqual(0.5, t()))],
    [nd.add(x, z), () => tf.add(t(), tf.tensor(b, [3, 4]))],
  ];
  for (const [got, f] of cases) assertClose(got.toTypedArray(), tf.tidy(() => f().dataSync()), { rtol: 2e-6, msg: f.toString() });
});

// ---- add_n ----------------------------------------------------------------------------------------
test('add_n / ElementWiseSum of 3 inputs matches tf.addN', () => {
  const shape = [4, 13];
  const vs = [values('any', 52), values('any', 52), values('any', 52)];
  const expected = tf.tidy(() => tf.addN(vs.map((v) => tf.tensor(v, shape))).dataSync());
  const arrs = vs.map((v) => nd.array(v, { shape }));
  assertClose(nd.add_n(...arrs).toTypedArray(), expected, { rtol: 1e-6 });
  assertClose(nd.ElementWiseSum(arrs, { num_args: 3 }).toTypedArray(), expected, { rtol: 1e-6 });
  assert.deepEqual(Array.from(nd.add_n(arrs[0]).toTypedArray()), Array.from(arrs[0].toTypedArray()));
  assert.throws(() => nd.add_n(arrs[0], ones([13, 4])),
    (e) => e instanceof mx.MXNetError && /Operator add_n/.test(e.message) && /\(4, 13\)/.test(e.message));
  const i = nd.add_n(nd.array(new Int32Array([1, 2])), nd.array(new Int32Array([3, 4])), nd.array(new Int32Array([5, -6])));
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(Array.from(i.toTypedArray()), [9, 0]);
});

// ---- integer arrays --------------------------------------------------------------------------------
test('int32: dtype is preserved; division truncates, mod takes the sign of the divisor, x/0 and x%0 are 0', () => {
  const a = [7, -7, 7, -7, 9, 0, 5, -5, 2147483647];
  const b = [2, 2, -2, -2, 3, 4, 0, 0, 1];
  const x = nd.array(new Int32Array(a)), y = nd.array(new Int32Array(b));
  const q = nd.broadcast_div(x, y);
  assert.equal(q.dtype, 'int32');
  assert.deepEqual(Array.from(q.toTypedArray()), a.map((v, i) => (b[i] === 0 ? 0 : Math.trunc(v / b[i]))));
  const m = x.mod(y);
  assert.equal(m.dtype, 'int32');
  const pyMod = (u, v) => (v === 0 ? 0 : ((u % v) + v) % v);
  assert.deepEqual(Array.from(m.toTypedArray()), a.map((v, i) => pyMod(v, b[i])));
  // tfjs agrees wherever the divisor is nonzero
  const tfMod = tf.tidy(() => tf.mod(tf.tensor(a.slice(0, 5), undefined, 'int32'), tf.tensor(b.slice(0, 5), undefined, 'int32')).dataSync());
  assert.deepEqual(Array.from(m.toTypedArray()).slice(0, 5), Array.from(tfMod));
});

test('int32 against tfjs: add, sub, mul, maximum, minimum, comparisons with broadcasting', () => {
  const r = rng(55);
  const a = Int32Array.from(r.uniform(24, -50, 50), Math.round), b = Int32Array.from(r.uniform(6, -50, 50), Math.round);
  const x = nd.array(a, { shape: [4, 6] }), y = nd.array(b, { shape: [6] });
  const t = () => [tf.tensor(a, [4, 6], 'int32'), tf.tensor(b, [6], 'int32')];
  const cases = [
    [nd.broadcast_add, (u, v) => tf.add(u, v)], [nd.broadcast_sub, (u, v) => tf.sub(u, v)],
    [nd.broadcast_mul, (u, v) => tf.mul(u, v)], [nd.broadcast_maximum, (u, v) => tf.maximum(u, v)],
    [nd.broadcast_minimum, (u, v) => tf.minimum(u, v)],
    [nd.broadcast_greater, (u, v) => tf.cast(tf.greater(u, v), 'int32')],
    [nd.broadcast_lesser_equal, (u, v) => tf.cast(tf.lessEqual(u, v), 'int32')],
  ];
  for (const [fn, f] of cases) {
    const z = fn(x, y);
    assert.equal(z.dtype, 'int32', fn.name);
    assert.deepEqual(Array.from(z.toTypedArray()), Array.from(tf.tidy(() => f(...t()).dataSync())), fn.name);
  }
});

test('int32 scalar ops: the scalar is converted to int32 first', () => {
  const x = nd.array(new Int32Array([7, -7, 3, 0]));
  const check = (y, expected) => {
    assert.equal(y.dtype, 'int32');
    assert.deepEqual(Array.from(y.toTypedArray()), expected);
  };
  check(x.div(2), [3, -3, 1, 0]);
  check(x.add(2.9), [9, -5, 5, 2]); // 2.9 -> 2
  check(x.mod(3), [1, 2, 0, 0]);
  check(x.mod(-3), [-2, -1, 0, 0]);
  check(nd.subtract(1, x), [-6, 8, -2, 1]);
  check(nd.divide(21, x), [3, -3, 7, 0]); // 21 / 0 -> 0
  check(x.pow(2), [49, 49, 9, 0]);
  check(x.greaterEqual(3), [1, 0, 1, 0]);
  check(nd._logical_xor_scalar(x, { scalar: 1 }), [0, 0, 0, 1]);
});

test('float64 keeps its dtype and precision', () => {
  const x = nd.array(new Float64Array([1, 1e-12])), y = nd.array(new Float64Array([1e-15, 3]));
  const z = nd.broadcast_add(x, y);
  assert.equal(z.dtype, 'float64');
  assert.deepEqual(Array.from(z.toTypedArray()), [1 + 1e-15, 1e-12 + 3]);
  assert.deepEqual(Array.from(nd.broadcast_mod(nd.array(new Float64Array([-7.5])), nd.array(new Float64Array([2]))).toTypedArray()), [0.5]);
});

test('maximum/minimum propagate NaN from either side', () => {
  const x = nd.array([NaN, 1, 2]), y = nd.array([1, NaN, 3]);
  const mxv = Array.from(nd.broadcast_maximum(x, y).toTypedArray()), mnv = Array.from(nd._minimum(x, y).toTypedArray());
  assert.ok(Number.isNaN(mxv[0]) && Number.isNaN(mxv[1]) && mxv[2] === 3);
  assert.ok(Number.isNaN(mnv[0]) && Number.isNaN(mnv[1]) && mnv[2] === 2);
});

// ---- errors ------------------------------------------------------------------------------------------
test('mismatched broadcast shapes throw MXNetError naming the op and both shapes; the runtime keeps working', () => {
  const a = ones([2, 3]), b = ones([4, 3]);
  const isShapeError = (op) => (e) => e instanceof mx.MXNetError && e.message.includes(`Operator ${op}`) &&
    e.message.includes('(2, 3)') && e.message.includes('(4, 3)') && /broadcast/.test(e.message);
  assert.throws(() => nd.broadcast_add(a, b), isShapeError('broadcast_add'));
  assert.throws(() => nd._npi_multiply(a, b), isShapeError('broadcast_mul'));
  assert.throws(() => a.sub(b), isShapeError('broadcast_sub'));
  assert.throws(() => nd.greater(a, b), isShapeError('broadcast_greater'));
  assert.throws(() => nd.broadcast_add(ones([3]), ones([3], 'int32')),
    (e) => e instanceof mx.MXNetError && /Operator broadcast_add/.test(e.message) && /dtype/.test(e.message));
  assert.throws(() => a.add('2'), mx.MXNetError);
  assert.throws(() => nd.broadcast_add(a), (e) => e instanceof mx.MXNetError && /expected 2 inputs, got 1/.test(e.message));
  const ok = nd.broadcast_add(a, nd.array([1, 2, 3]));
  assert.deepEqual(Array.from(ok.toTypedArray()), [2, 3, 4, 2, 3, 4]);
});

test('comparisons and logic ops give 1 or 0 as IEEE comparisons do (NaN, signed zeros), in lanes and the tail', () => {
  // 11 elements: two 4-lane blocks and a 3-element tail; the expected values are JS's own comparisons
  const a = [NaN, 1, 2, 0, -0, 3, NaN, -1, 5, 0, NaN];
  const b = [1, NaN, 2, -0, 0, 1, NaN, -2, 6, 0, 0];
  const rules = {
    equal: (x, y) => x === y, not_equal: (x, y) => x !== y, greater: (x, y) => x > y, greater_equal: (x, y) => x >= y,
    lesser: (x, y) => x < y, lesser_equal: (x, y) => x <= y, logical_and: (x, y) => x !== 0 && y !== 0,
    logical_or: (x, y) => x !== 0 || y !== 0, logical_xor: (x, y) => (x !== 0) !== (y !== 0),
  };
  const A = nd.array(a), B = nd.array(b);
  for (const [name, f] of Object.entries(rules)) {
    const want = a.map((x, i) => (f(x, b[i]) ? 1 : 0));
    assert.deepEqual(Array.from(nd[`broadcast_${name}`](A, B).toTypedArray()), want, `broadcast_${name}`);
    // against a scalar (the row kernel's splat path): data OP 0
    const ws = a.map((x) => (f(x, 0) ? 1 : 0));
    assert.deepEqual(Array.from(nd[`broadcast_${name}`](A, nd.array([0])).toTypedArray()), ws, `broadcast_${name} with 0`);
  }
  assert.deepEqual(Array.from(nd._greater_scalar(A, { scalar: 0.5 }).toTypedArray()), a.map((x) => (x > 0.5 ? 1 : 0)));
});

test('x ** 2 (_power_scalar 2, x.pow(2)) is the correctly rounded square: signed zero, NaN, infinities, underflow, overflow', () => {
  const x = [0, -0, 1.5, -2.5, NaN, Infinity, -Infinity, 3e-20, 1e20, 7, 0.1];
  // hand-worked in float32: 3e-20^2 is a subnormal (8.9999935e-40), 1e20^2 overflows, 0.1f^2 rounds to 0.010000001
  const want = [0, 0, 2.25, 6.25, NaN, Infinity, Infinity, 8.999993529957213e-40, Infinity, 49, 0.010000000707805157];
  assert.deepEqual(Array.from(nd._power_scalar(nd.array(x), { scalar: 2 }).toTypedArray()), want);
  assert.deepEqual(Array.from(nd.array(x).pow(2).toTypedArray()), want);
});

// float16 and bfloat16 compute as MXNet's half_t does: each operation in float32 on the widened
// values, the result rounded to the half type (ties to even). Worked here with Math.fround and the
// binary formats' rounding rule, on broadcast shapes with odd extents (blocks and tails).
test('float16 / bfloat16 arithmetic: float32 operations on the half values, rounded back (exact)', () => {
  const f = Math.fround;
  const ops = {
    broadcast_add: (x, y) => f(x + y), broadcast_sub: (x, y) => f(x - y), broadcast_mul: (x, y) => f(x * y),
    broadcast_div: (x, y) => f(x / y), broadcast_maximum: (x, y) => Math.max(x, y), broadcast_minimum: (x, y) => Math.min(x, y),
  };
  for (const [dtype, fmt] of [['float16', FLOAT16], ['bfloat16', BFLOAT16]]) {
    const q = (v) => roundToFormat(f(v), fmt);
    const [ls, rs] = [[7, 1, 37], [1, 5, 37]];
    const av = rng(31).uniform(sizeOf(ls), -300, 300).map(q), bv = rng(32).uniform(sizeOf(rs), 0.5, 40).map(q);
    const a = nd.array(av, { shape: ls }).astype(dtype), b = nd.array(bv, { shape: rs }).astype(dtype);
    for (const [op, rule] of Object.entries(ops)) {
      const got = nd[op](a, b);
      assert.equal(got.dtype, dtype);
      const g = got.astype('float32').toTypedArray();
      for (let i = 0; i < 7; i++) {
        for (let j = 0; j < 5; j++) {
          for (let k = 0; k < 37; k++) {
            const want = roundToFormat(rule(av[i * 37 + k], bv[j * 37 + k]), fmt);
            const at = (i * 5 + j) * 37 + k;
            assert.ok(Object.is(g[at], want), `${dtype} ${op}[${i},${j},${k}]: ${g[at]} vs ${want}`);
          }
        }
      }
    }
    const same = nd.elemwise_mul(a, a);
    const sq = same.astype('float32').toTypedArray();
    av.forEach((x, i) => assert.ok(Object.is(sq[i], roundToFormat(f(x * x), fmt)), `${dtype} elemwise_mul[${i}]`));
  }
});
