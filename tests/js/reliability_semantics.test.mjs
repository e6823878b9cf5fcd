// Issue 9, findings 4 (shapes that wrapped, slicing past the end), 6 (zero-size arrays, layer
// errors and constructor checks) and 7 (integer wrap and the one conversion rule). Expected values
// are worked by hand in the comments or taken from MXNet 1.9.1's source as cited.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { nd, sym, gluon } = mx;
const { nn } = gluon;
const { MXNetError } = mx;
const values = (a) => Array.from(a.toTypedArray(), (v) => (typeof v === 'bigint' ? v : Number(v)));
const INT32_MIN = -(2 ** 31);
const fresh = (fn) => mx.name.withNameManager(new mx.name.NameManager(), fn);

// ---- finding 4: shapes beyond the runtime are refused, never wrapped -----------------------------
test('nd.empty / zeros / ones / full / array refuse a dim or a size the runtime cannot hold', () => {
  // 2^32 + 1 became 1 through the int32 C API; MXNet 1.9.1's _new_alloc_handle refuses more than
  // 2^31 - 1 elements, InitShape 2^31 - 1 or more
  assert.throws(() => nd.empty([2 ** 32 + 1]), (e) => e instanceof MXNetError && /nd\.empty: shape \(4294967297,\): dimension 0 is 4294967297, more than 2\^31 - 1/.test(e.message));
  assert.throws(() => nd.empty([2 ** 16, 2 ** 16]), /nd\.empty: shape \(65536, 65536\) has 4294967296 elements: the size of a tensor is limited to 2\^31 - 1 elements/);
  assert.throws(() => nd.empty([3, -1]), /nd\.empty: shape \(3, -1\): dimension 1 is -1, not a non-negative integer/);
  for (const f of [() => nd.zeros([2 ** 32 + 1]), () => nd.ones([2 ** 32 + 1]), () => nd.full([2 ** 32 + 1], 1)]) {
    assert.throws(f, (e) => e instanceof MXNetError && /\(4294967297,\): the size of a tensor must be below 2\^31 - 1 elements/.test(e.message));
  }
  assert.throws(() => nd.zeros([2 ** 31 - 1]), /below 2\^31 - 1 elements/); // CHECK_LT(Size, 2^31 - 1)
  // no element, but a dim the int32 shapes of the API cannot carry
  assert.throws(() => nd.zeros([0, 2 ** 32]), /dimension 1 is 4294967296, more than 2\^31 - 1/);
  assert.throws(() => nd.empty([0, 2 ** 32]), /dimension 1 is 4294967296, more than 2\^31 - 1/);
  assert.throws(() => nd.array(new Float32Array(1), { shape: [2 ** 32 + 1] }), /nd\.array: shape \(4294967297,\): dimension 0/);
  assert.throws(() => nd.ones([2, 3]).reshape([2 ** 32 + 6]), /has 4294967302 elements/);
  // 2^31 - 2 int8 elements pass every shape check; only the 2 GB wasm heap can refuse them
  assert.deepEqual(nd.empty([2, 3]).shape, [2, 3]); // the runtime is fine afterwards
});

test('slice past the end: empty as MXNet 1.9.1, slice_axis still raises', () => {
  // MXNet 1.9.1's GetIndexRange (src/operator/tensor/matrix_op-inl.h) clamps since "Numpy
  // compatible slicing" (#15798), which removed the "exceeds limit" checks and their tests: begin 5
  // of an axis of 2 is b = -1, an empty range, so slice((2, 3), begin=(5,)) is (0, 3)
  const x = nd.array([[1, 2, 3], [4, 5, 6]]);
  for (const [begin, end] of [[[5], [null]], [[5], [6]], [[2], [2]]]) {
    const y = nd.slice(x, { begin, end });
    assert.deepEqual(y.shape, [0, 3], `begin=${begin} end=${end}`);
    assert.equal(y.toTypedArray().length, 0);
  }
  // x[5:] (NDArray._slice through _get_index_range: start clamped to the length) is empty too
  assert.deepEqual(x.get([5]).shape, [0, 3]);
  // a negative step starts at the last row when begin is past the end: rows 1, 0
  assert.deepEqual(nd.slice(x, { begin: [5], end: [null], step: [-1] }).toArray(), [[4, 5, 6], [1, 2, 3]]);
  // slice_axis: GetSliceAxisParams CHECKs begin < end
  assert.throws(() => nd.slice_axis(x, { axis: 0, begin: 5, end: null }), (e) => e instanceof MXNetError && /slice_axis/.test(e.message));
  assert.throws(() => nd.slice_axis(x, { axis: 0, begin: 1, end: 1 }), /slice_axis/);
});

// ---- finding 6: zero-size arrays -------------------------------------------------------------------
test('zero-size arrays: creation', () => {
  const z = nd.zeros([0, 3]);
  assert.deepEqual(z.shape, [0, 3]);
  assert.equal(z.size, 0);
  assert.equal(z.dtype, 'float32');
  assert.ok(z.toTypedArray() instanceof Float32Array);
  assert.equal(z.toTypedArray().length, 0);
  assert.deepEqual(z.toArray(), []);
  assert.deepEqual(nd.ones([3, 0]).shape, [3, 0]);
  assert.deepEqual(nd.ones([3, 0]).toArray(), [[], [], []]);
  const f = nd.full([0, 2], 7, { dtype: 'int32' });
  assert.deepEqual([f.shape, f.dtype], [[0, 2], 'int32']);
  assert.ok(f.toTypedArray() instanceof Int32Array);
  assert.deepEqual(nd.empty([0]).shape, [0]);
  assert.deepEqual(nd.zeros(0).shape, [0]);
  assert.deepEqual(nd.random.uniform({ shape: [0, 3] }).shape, [0, 3]);
  assert.deepEqual(nd.array([[], []]).shape, [2, 0]);
  assert.deepEqual(nd.zeros_like(z).shape, [0, 3]);
  // shape () stays "unknown" in MXNet 1.x's legacy semantics
  assert.throws(() => nd.zeros([]), /could not infer the shape of output 0/);
});

test('zero-size arrays: elementwise ops, reductions, reshape, concat, layers', () => {
  const e = nd.zeros([0, 3]);
  assert.deepEqual(e.add(1).shape, [0, 3]);
  assert.deepEqual(nd.elemwise_add(e, e).shape, [0, 3]);
  assert.deepEqual(nd.broadcast_add(e, nd.ones([1, 3])).shape, [0, 3]);
  assert.deepEqual(nd.exp(e).shape, [0, 3]);
  assert.deepEqual(e.astype('int32').dtype, 'int32');
  // reductions: the empty sum is 0, the empty product 1, the mean 0 / 0
  assert.deepEqual(values(nd.sum(e)), [0]);
  assert.deepEqual(values(nd.sum(e, { axis: 0 })), [0, 0, 0]);
  assert.deepEqual(nd.sum(e, { axis: 1 }).shape, [0]);
  assert.deepEqual(values(nd.prod(e)), [1]);
  assert.ok(Number.isNaN(values(nd.mean(e))[0]));
  // max has no identity: numpy's "zero-size array to reduction operation maximum" is an error
  assert.throws(() => nd.max(e, { axis: 0 }), /empty/);
  // reshape: -1 of zero elements; a 0 in the target copies the input dim (MXNet's special code)
  assert.deepEqual(e.reshape([-1]).shape, [0]);
  assert.deepEqual(e.reshape([0, 5]).shape, [0, 5]);
  assert.throws(() => e.reshape([3, 0]), /9 elements/); // (3, 0) means (3, 3): 9 != 0
  // concat with an empty part
  const c = nd.concat(e, nd.array([[1, 2, 3], [4, 5, 6]]), { dim: 0 });
  assert.deepEqual(c.toArray(), [[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual(nd.concatenate([nd.array([[7, 8, 9]]), e]).toArray(), [[7, 8, 9]]);
  // FullyConnected and dot on an empty batch
  assert.deepEqual(nd.FullyConnected(e, nd.ones([4, 3]), nd.ones([4]), { num_hidden: 4 }).shape, [0, 4]);
  assert.deepEqual(nd.dot(nd.ones([2, 0]), nd.ones([0, 2])).toArray(), [[0, 0], [0, 0]]); // empty sums
});

test('symbol inference keeps the legacy reading of 0 (unknown) while NDArrays may be empty', () => {
  // a 0 in _zeros' shape inside a graph is filled from the consumer: (0, 4) + x(2, 4) -> (2, 4)
  const z = sym._zeros({ shape: [0, 4] });
  const y = sym.elemwise_add(sym.var('x'), z);
  const [, outShapes] = y.inferShape({ x: [2, 4] });
  assert.deepEqual(outShapes, [[2, 4]]);
  // a 0 in a given input shape is still "unknown" for symbols: inference stays incomplete
  const fc = sym.FullyConnected(sym.var('x'), { num_hidden: 4 });
  const partial = fc.inferShape({ x: [0, 3] });
  assert.ok(partial.every((s) => s === null || s === undefined), 'incomplete inference returns nothing');
});

// ---- finding 6: layer errors and constructor checks ---------------------------------------------------
test('an error inside a layer names the layer, keeping MXNetError', () => {
  fresh(() => {
    const conv = new nn.Conv2D(4, 3, { inChannels: 2 });
    conv.initialize();
    assert.throws(() => conv(nd.ones([1, 3, 5, 5])), (e) => e instanceof MXNetError && /^Conv2D conv0: Operator Convolution: /.test(e.message));
    // nested: the innermost block is named, once
    const net = new nn.HybridSequential();
    net.add(new nn.Dense(4, { inUnits: 3 }), new nn.Dense(2, { inUnits: 5 }));
    net.initialize();
    assert.throws(() => net(nd.ones([2, 3])), (e) => e instanceof MXNetError && /^Dense dense1: Operator FullyConnected: weight has shape \(2, 5\)/.test(e.message));
    // hybridized, the graph runs as one: the block called is named, the node names the layer
    net.hybridize();
    assert.throws(() => net(nd.ones([2, 3])), (e) => e instanceof MXNetError && /^HybridSequential hybridsequential0: .*dense1_fwd/.test(e.message));
  });
});

test('layers check their arguments when built, naming the argument', () => {
  const cases = [
    [() => new nn.Conv2D(4, -3), /Conv2D: kernel_size must be positive integers, got \(-3, -3\)/],
    [() => new nn.Conv2D({ channels: 4, kernelSize: -3 }), /Conv2D: kernel_size must be positive/],
    [() => new nn.Conv2D(-1, 3), /Conv2D: channels must be positive integers, got \(-1\)/],
    [() => new nn.Conv2D(4, 3, { strides: 0 }), /Conv2D: strides must be positive integers/],
    [() => new nn.Conv2D(4, 3, { layout: 'NCWH' }), /Conv2D: Only NCHW and NHWC layouts are supported .* got 'NCWH'/],
    [() => new nn.Conv2D(4, 3, { activation: 'foo' }), /Conv2D: activation 'foo' is not a valid act_type \(valid values are: 'relu', 'sigmoid', 'tanh', 'softrelu', 'softsign'\)/],
    [() => new nn.Conv2D(4, 3, { inChannels: -2 }), /Conv2D: in_channels must be non-negative integers, got \(-2\)/],
    [() => new nn.Conv2D(4, 3, { groups: 3 }), /Conv2D: channels=4 must be divisible by groups=3/],
    [() => new nn.Conv2D(4, 3, { groups: 2, inChannels: 3 }), /Conv2D: in_channels=3 must be divisible by groups=2/],
    [() => new nn.Conv2DTranspose(4, 3, { groups: 3 }), /Conv2DTranspose: channels=4 must be divisible by groups=3/],
    [() => new nn.Dense(-1), /Dense: units must be positive integers, got \(-1\)/],
    [() => new nn.Dense(3, { inUnits: -1 }), /Dense: in_units must be non-negative integers/],
    [() => new nn.Dense(3, { activation: 'foo' }), /Dense: activation 'foo' is not a valid act_type/],
    [() => new nn.Activation('foo'), /Activation: activation 'foo' is not a valid act_type/],
    [() => new nn.BatchNorm({ inChannels: -1 }), /BatchNorm: in_channels must be non-negative integers/],
    [() => new nn.LayerNorm({ in_channels: -1 }), /LayerNorm: in_channels must be non-negative integers/],
    [() => new nn.PReLU({ inChannels: 0 }), /PReLU: in_channels must be positive integers/],
    [() => new nn.MaxPool2D(-1), /MaxPool2D: pool_size must be positive integers/],
  ];
  for (const [make, re] of cases) assert.throws(make, (e) => e instanceof MXNetError && re.test(e.message), String(re));
  // a valid activation still builds (and a failed one left no pending name behind)
  fresh(() => assert.equal(new nn.Activation('relu').name, 'relu0'));
});

// ---- finding 7: integers ---------------------------------------------------------------------------
test('negative and abs of the most negative integer wrap as in MXNet', () => {
  // negative is -a in the dtype (two's complement); abs is DType(fabs(double(a))), and 2^31 does
  // not fit int32: static_cast gives INT32_MIN on x86-64
  const i32 = nd.array(new Int32Array([INT32_MIN, 2147483647, -5, 0]));
  assert.deepEqual(values(nd.negative(i32)), [INT32_MIN, -2147483647, 5, 0]);
  assert.deepEqual(values(nd.abs(i32)), [INT32_MIN, 2147483647, 5, 0]);
  assert.deepEqual(values(i32.neg ? i32.neg() : nd.negative(i32)), [INT32_MIN, -2147483647, 5, 0]);
  const i8 = nd.array(new Int8Array([-128, 127, -3]));
  assert.deepEqual(values(nd.negative(i8)), [-128, -127, 3]);
  assert.deepEqual(values(nd.abs(i8)), [-128, 127, 3]);
  const i64 = nd.array(new BigInt64Array([-(2n ** 63n), 2n ** 53n + 1n]));
  assert.deepEqual(values(nd.negative(i64)), [-(2n ** 63n), -(2n ** 53n) - 1n]); // exact, no double round trip
  assert.deepEqual(values(nd.negative(nd.array(new Uint8Array([5, 0])))), [251, 0]); // 256 - 5
});

test('nd.array(values, {dtype}) converts as Cast does: one rule, MXNet\'s', () => {
  // static_cast<int32_t> on x86-64 (MXNet's Cast; numpy's astype, through which MXNet's nd.array
  // converts an array): truncation toward zero; out of range or NaN -> INT32_MIN
  const v = [1e20, -1e20, NaN, 3e9, 2.9, -2.9, 2147483647];
  const want = [INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, 2, -2, 2147483647];
  const fromList = nd.array(v, { dtype: 'int32' });
  assert.equal(fromList.dtype, 'int32');
  assert.deepEqual(values(fromList), want);
  assert.deepEqual(values(nd.array(Float64Array.from(v), { dtype: 'int32' })), want);
  assert.deepEqual(values(nd.Cast(nd.array(v, { dtype: 'float64' }), { dtype: 'int32' })), want);
  assert.deepEqual(values(nd.array(v, { dtype: 'float64' }).astype('int32')), want);
  assert.deepEqual(values(nd.full([2], 1e20, { dtype: 'int32' })), [INT32_MIN, INT32_MIN]);
  // arange casts start and step to the dtype first (range_fwd's static_cast<DType>(start)), then
  // counts in the dtype: 3e9 -> INT32_MIN, INT32_MIN + 1
  assert.deepEqual(values(nd.arange(3e9, 3e9 + 2, { dtype: 'int32' })), [INT32_MIN, INT32_MIN + 1]);
  // narrower types take the low bits of that 32-bit conversion: 300 -> 44, -1.5 -> -1 -> 255,
  // 1e20 -> 0x80000000 -> 0, 256 -> 0
  const u = [300, -1.5, 1e20, 256, 255.9];
  assert.deepEqual(values(nd.array(u, { dtype: 'uint8' })), [44, 255, 0, 0, 255]);
  assert.deepEqual(values(nd.array(u, { dtype: 'float64' }).astype('uint8')), [44, 255, 0, 0, 255]);
  assert.deepEqual(values(nd.array(u, { dtype: 'int8' })), [44, -1, 0, 0, -1]);
  // integer -> integer keeps the low bits: 300 -> 44, -129 -> 127
  assert.deepEqual(values(nd.array(new Int32Array([300, -129]), { dtype: 'int8' })), [44, 127]);
  assert.deepEqual(values(nd.array(new Int32Array([300, -129])).astype('int8')), [44, 127]);
  // bool is != 0
  assert.deepEqual(values(nd.array([0, 2, -0.5, NaN], { dtype: 'bool' })), [0, 1, 1, 1]);
  assert.deepEqual(values(nd.array(new Uint8Array([0, 2]), { dtype: 'bool' })), [0, 1]);
  // int64: 2^63 and beyond -> INT64_MIN
  assert.deepEqual(values(nd.array([1e19, -3.7], { dtype: 'int64' })), [-(2n ** 63n), -3n]);
  // the conversion leaves no temporary behind
  const before = mx.memory().numArrays;
  const kept = nd.array([1, 2, 3], { dtype: 'int32' });
  assert.equal(mx.memory().numArrays, before + 1);
  kept.dispose();
});
