// Elementwise unary ops and Activation against TensorFlow.js's CPU kernels (independent
// implementation) and hand-worked values.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, roundToFormat, FLOAT16, BFLOAT16 } from './oracle.mjs';

const { nd } = mx;
const shape = [3, 5, 7];
const x = rng(7).uniform(105, -3, 3);
const pos = rng(8).uniform(105, 0.1, 4);
const unit = rng(9).uniform(105, -0.95, 0.95);

// [mxnet op, input data, tfjs function]
const cases = [
  ['relu', x, (t) => tf.relu(t)],
  ['sigmoid', x, (t) => tf.sigmoid(t)],
  ['tanh', x, (t) => tf.tanh(t)],
  ['exp', x, (t) => tf.exp(t)],
  ['expm1', x, (t) => tf.expm1(t)],
  ['log', pos, (t) => tf.log(t)],
  ['log1p', pos, (t) => tf.log1p(t)],
  ['log2', pos, (t) => tf.div(tf.log(t), Math.log(2))],
  ['log10', pos, (t) => tf.div(tf.log(t), Math.log(10))],
  ['sqrt', pos, (t) => tf.sqrt(t)],
  ['rsqrt', pos, (t) => tf.rsqrt(t)],
  ['cbrt', pos, (t) => tf.pow(t, 1 / 3)],
  ['rcbrt', pos, (t) => tf.pow(t, -1 / 3)],
  ['square', x, (t) => tf.square(t)],
  ['reciprocal', pos, (t) => tf.reciprocal(t)],
  ['abs', x, (t) => tf.abs(t)],
  ['negative', x, (t) => tf.neg(t)],
  ['sign', x, (t) => tf.sign(t)],
  ['floor', x, (t) => tf.floor(t)],
  ['ceil', x, (t) => tf.ceil(t)],
  ['trunc', x, (t) => tf.mul(tf.sign(t), tf.floor(tf.abs(t)))],
  ['fix', x, (t) => tf.mul(tf.sign(t), tf.floor(tf.abs(t)))],
  ['erf', x, (t) => tf.erf(t)],
  ['softsign', x, (t) => tf.div(t, tf.add(1, tf.abs(t)))],
  ['sin', x, (t) => tf.sin(t)],
  ['cos', x, (t) => tf.cos(t)],
  ['tan', unit, (t) => tf.tan(t)],
  ['arcsin', unit, (t) => tf.asin(t)],
  ['arccos', unit, (t) => tf.acos(t)],
  ['arctan', x, (t) => tf.atan(t)],
  ['sinh', x, (t) => tf.sinh(t)],
  ['cosh', x, (t) => tf.cosh(t)],
  ['arcsinh', x, (t) => tf.asinh(t)],
  ['arccosh', pos.map((v) => v + 1), (t) => tf.acosh(t)],
  ['arctanh', unit, (t) => tf.atanh(t)],
  ['degrees', x, (t) => tf.mul(t, 180 / Math.PI)],
  ['radians', x, (t) => tf.mul(t, Math.PI / 180)],
  ['logical_not', x.map((v) => (v > 0 ? v : 0)), (t) => tf.cast(tf.equal(t, 0), 'float32')],
  ['_copy', x, (t) => tf.clone(t)],
  ['identity', x, (t) => tf.clone(t)],
  ['BlockGrad', x, (t) => tf.clone(t)],
  ['stop_gradient', x, (t) => tf.clone(t)],
  ['make_loss', x, (t) => tf.clone(t)],
  ['zeros_like', x, (t) => tf.zerosLike(t)],
  ['ones_like', x, (t) => tf.onesLike(t)],
];

for (const [name, data, ref] of cases) {
  test(`${name} matches tfjs`, () => {
    const y = nd[name](nd.array(data, { shape }));
    assert.deepEqual(y.shape, shape);
    assert.equal(y.dtype, 'float32');
    const expected = tf.tidy(() => ref(tf.tensor(data, shape)).dataSync());
    assertClose(y.toTypedArray(), expected, { rtol: 2e-6, atol: 1e-6, msg: name });
  });
}

test('round, rint, gamma, gammaln: hand-worked values', () => {
  const v = nd.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]);
  assert.deepEqual(Array.from(nd.round(v).toTypedArray()), [-3, -2, -1, 1, 2, 3]); // half away from zero
  assert.deepEqual(Array.from(nd.rint(v).toTypedArray()), [-2, -2, -0, 0, 2, 2]); // half to even
  assertClose(nd.gamma(nd.array([1, 2, 3, 4, 0.5])).toTypedArray(), [1, 1, 2, 6, Math.sqrt(Math.PI)]);
  assertClose(nd.gammaln(nd.array([1, 3, 10])).toTypedArray(), [0, Math.log(2), Math.log(362880)]);
});

// sign, round and hard_sigmoid (and its gradient) run four float32 lanes at a time with masks:
// every element, in the lanes and in the 1-3 left over, equals the scalar rule written here in JS
// (Math.fround after each float32 operation; hard_sigmoid's forward in double, as MXNet's).
test('sign, round, hard_sigmoid and its gradient: lanes and tails equal the scalar rules exactly', () => {
  const f = Math.fround;
  const edge = [0, -0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 8388607.5, -8388607.5, 8388609,
    2 ** 24 + 2, 1e30, -1e30, Infinity, -Infinity, NaN, 1e-45, -1e-45, 2.4999998, -4, 4.5, -7.5];
  const vals = Float32Array.from([...edge, ...rng(21).uniform(203, -12, 12)]); // 228 = 57 lanes; also sliced odd
  const sameBits = (got, want, what) => {
    for (let i = 0; i < want.length; i++) {
      const g = got[i], w = f(want[i]);
      assert.ok(Object.is(g, w) || (Number.isNaN(g) && Number.isNaN(w)), `${what}[${i}] (x = ${vals[i]}): ${g} vs ${w}`);
    }
  };
  const signRef = (v) => (v > 0 ? 1 : v < 0 ? -1 : 0);
  const roundRef = (v) => (!Number.isFinite(v) || Object.is(v, -0) ? v : Math.sign(v) * Math.floor(Math.abs(v) + 0.5) || (v < 0 ? -0 : 0));
  const hs = (v, al, be) => { const r = al * v + be; return r < 0 ? 0 : r > 1 ? 1 : r; };
  for (const n of [vals.length, 227, 226, 225, 3]) {
    const xs = vals.subarray(0, n);
    const a = nd.array(xs);
    sameBits(nd.sign(a).toTypedArray(), Array.from(xs, signRef), 'sign');
    sameBits(nd.round(a).toTypedArray(), Array.from(xs, roundRef), 'round');
    sameBits(nd.hard_sigmoid(a).toTypedArray(), Array.from(xs, (v) => hs(v, 0.2, 0.5)), 'hard_sigmoid');
    sameBits(nd.hard_sigmoid(a, { alpha: 0.3, beta: 0.25 }).toTypedArray(), Array.from(xs, (v) => hs(v, 0.3, 0.25)), 'hard_sigmoid(0.3, 0.25)');
    const g = Float32Array.from(xs, (_, i) => f((i % 7) - 3.25));
    const al = f(0.2), be = f(0.5);
    const gradRef = Array.from(xs, (v, i) => { const r = f(f(al * v) + be); return r > 0 && r < 1 ? f(g[i] * al) : 0; });
    sameBits(nd._backward_hard_sigmoid(nd.array(g), a).toTypedArray(), gradRef, '_backward_hard_sigmoid');
  }
});

test('relu propagates NaN; hard_sigmoid clips', () => {
  const y = nd.relu(nd.array([NaN, -1, 2])).toTypedArray();
  assert.ok(Number.isNaN(y[0]));
  assert.deepEqual(Array.from(y.slice(1)), [0, 2]);
  assertClose(nd.hard_sigmoid(nd.array([-5, 0, 1, 5])).toTypedArray(), [0, 0.5, 0.7, 1]);
  assertClose(nd.hard_sigmoid(nd.array([1]), { alpha: 0.5, beta: 0.1 }).toTypedArray(), [0.6]);
});

test('Activation: every act_type against tfjs', () => {
  const t = nd.array(x, { shape });
  const refs = {
    relu: (v) => tf.relu(v), sigmoid: (v) => tf.sigmoid(v), tanh: (v) => tf.tanh(v),
    softrelu: (v) => tf.softplus(v), softsign: (v) => tf.div(v, tf.add(1, tf.abs(v))),
  };
  for (const [act, ref] of Object.entries(refs)) {
    const y = nd.Activation(t, { act_type: act });
    assertClose(y.toTypedArray(), tf.tidy(() => ref(tf.tensor(x, shape)).dataSync()), { rtol: 2e-6, msg: act });
  }
  // softrelu is x itself above 20 (MXNet's overflow guard)
  assert.deepEqual(Array.from(nd.Activation(nd.array([25]), { act_type: 'softrelu' }).toTypedArray()), [25]);
});

test('float64 and int32 inputs keep their dtype', () => {
  const d = nd.array(new Float64Array([1e-300, 4]));
  const s = nd.sqrt(d);
  assert.equal(s.dtype, 'float64');
  assertClose(s.toTypedArray(), [1e-150, 2], { rtol: 1e-15, atol: 0 });
  const i = nd.abs(nd.array(new Int32Array([-3, 4, -2147483647])));
  assert.equal(i.dtype, 'int32');
  assert.deepEqual(Array.from(i.toTypedArray()), [3, 4, 2147483647]);
});

test('a bad act_type throws MXNetError naming op and value; the next call works', () => {
  assert.throws(() => nd.Activation(nd.array([1]), { act_type: 'swish' }),
    (e) => e instanceof mx.MXNetError && /Operator Activation/.test(e.message) && /swish/.test(e.message));
  assert.throws(() => nd.LeakyReLU(nd.array([1]), { alpah: 1 }), /unknown attribute 'alpah'/);
  // relu has no attribute parser in MXNet (MXNET_OPERATOR_REGISTER_UNARY): an attribute is kept and ignored
  assert.deepEqual(Array.from(nd.relu(nd.array([-2, 3]), { alpha: 1 }).toTypedArray()), [0, 3]);
  assert.deepEqual(Array.from(nd.relu(nd.array([-1, 1])).toTypedArray()), [0, 1]);
});

test("relu's gradient (_backward_relu, _backward_Activation relu): ograd where y > 0, 0 elsewhere, NaN kept; lanes and tail", () => {
  // hand-worked: 11 elements (two 4-lane blocks and a 3-element tail), NaN in a lane and in the tail
  const y = [NaN, -1, 0, -0, 2, 0.5, -3, Infinity, 1e-40, NaN, 7];
  const g = [1, 2, 3, -4, 5, 6, -7, 8, 9, 10, -11];
  const want = [NaN, 0, 0, -0, 5, 6, -0, 8, 9, NaN, -11];
  const ya = nd.array(y), ga = nd.array(g);
  for (const d of [nd._backward_relu(ga, ya), nd._backward_Activation(ga, ya, { act_type: 'relu' })]) {
    assert.deepEqual(Array.from(d.toTypedArray()), want);
  }
});

test("abs's gradient is ograd * sign(x) (0 at 0 and NaN), in lanes and the tail", () => {
  const x = [NaN, -1, 0, -0, 2, 0.5, -3, Infinity, -Infinity, NaN, 7];
  const g = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -11];
  const d = nd._backward_abs(nd.array(g), nd.array(x));
  assert.deepEqual(Array.from(d.toTypedArray()), [0, -2, 0, 0, 5, 6, -7, 8, -9, 0, -11]);
});

// float16 / bfloat16 run the float32 code on widened chunks and round back, as MXNet's half_t:
// exact ops give the float32 result rounded to the half type; exp and sigmoid are within one unit
// in the half type's last place of the exact value.
test('float16 / bfloat16 unary ops: the float32 result rounded to the half type', () => {
  const f = Math.fround;
  for (const [dtype, fmt] of [['float16', FLOAT16], ['bfloat16', BFLOAT16]]) {
    const q = (v) => roundToFormat(f(v), fmt);
    const xs = rng(41).uniform(1029, -6, 6).map(q); // 2 chunks of 512 and a tail
    const a = nd.array(xs).astype(dtype);
    const exact = { relu: (x) => (x > 0 ? x : 0), square: (x) => f(x * x), abs: Math.abs, sign: (x) => (x > 0 ? 1 : x < 0 ? -1 : 0) };
    for (const [op, rule] of Object.entries(exact)) {
      const g = nd[op](a).astype('float32').toTypedArray();
      xs.forEach((x, i) => assert.ok(Object.is(g[i], roundToFormat(rule(x), fmt)), `${dtype} ${op}(${x}): ${g[i]}`));
    }
    const pos = xs.map(Math.abs);
    const sq = nd.sqrt(nd.array(pos).astype(dtype)).astype('float32').toTypedArray();
    pos.forEach((x, i) => assert.equal(sq[i], roundToFormat(f(Math.sqrt(x)), fmt), `${dtype} sqrt(${x})`));
    for (const [op, rule] of [['exp', Math.exp], ['sigmoid', (x) => 1 / (1 + Math.exp(-x))]]) {
      const g = nd[op](a).astype('float32').toTypedArray();
      xs.forEach((x, i) => {
        const want = rule(x), ulp = 2 ** (Math.floor(Math.log2(Math.abs(want))) - fmt.mant);
        assert.ok(Math.abs(g[i] - want) <= ulp, `${dtype} ${op}(${x}): ${g[i]} vs ${want}`);
      });
    }
  }
});
