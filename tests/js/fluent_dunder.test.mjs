// Fluent methods (js-api.md rule 12), operator methods (rule 13) and the NDArray values API
// (rule 14) on NDArray and Symbol. Values against TensorFlow.js's CPU kernels or hand-worked
// numbers; Symbols run through the C executor (CachedOp) and their JSON against the op names and
// attributes MXNet's symbol.py writes.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, oracle } from './oracle.mjs';

const { nd, sym } = mx;
const fresh = (fn) => mx.name.withNameManager(new mx.name.NameManager(), fn);
const R = rng(11);
const X = R.normal(24), XS = [2, 3, 4];
const x = nd.array(X, { shape: XS });
const T = () => tf.tensor(X, XS);
const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
// runs fn(sym.var('x')) through the executor on x
function symRun(fn, input = x) {
  const out = fresh(() => fn(sym.var('x')));
  return new mx.CachedOp(out).forward([input]);
}

// MXNet 1.9.1's fluent methods, read from python/mxnet/ndarray/ndarray.py ("Convenience fluent
// method for ...") and python/mxnet/symbol/symbol.py.
const NDARRAY_FLUENT = `reshape_like zeros_like ones_like broadcast_axes repeat pad swapaxes split split_v2 slice
  slice_axis slice_like take one_hot pick sort topk argsort argmax argmax_channel argmin clip abs sign shape_array
  size_array tile transpose flip depth_to_space space_to_depth sum nansum prod nanprod mean max min norm round rint
  fix floor ceil trunc sin cos tan arcsin arccos arctan degrees radians sinh cosh tanh arcsinh arccosh arctanh exp
  expm1 log log10 log2 log1p sqrt rsqrt cbrt rcbrt square reciprocal relu sigmoid softmax log_softmax softmin`.split(/\s+/);
const SYMBOL_FLUENT = ['reshape', 'astype', 'broadcast_to', 'broadcast_like', ...NDARRAY_FLUENT];
// Methods with their own Python signature on both classes.
const SIGNATURE = ['flatten', 'expand_dims', 'squeeze', 'broadcast_to', 'broadcast_like'];
// Fluent names whose operator is not registered in the C core yet (skipped, not generated).
const EXPECTED_MISSING = new Set([]);

test('every MXNet fluent method is a camelCase method of NDArray and Symbol, except the unregistered ones', () => {
  const registered = new Set(Object.keys(nd));
  for (const [cls, list] of [[mx.NDArray, NDARRAY_FLUENT], [mx.Symbol, SYMBOL_FLUENT]]) {
    for (const py of [...list, ...SIGNATURE, 'diag']) {
      const m = camel(py);
      const op = py === 'astype' ? 'cast' : py;
      if (EXPECTED_MISSING.has(py)) {
        assert.ok(!registered.has(op), `${py} is registered now: remove it from EXPECTED_MISSING`);
        assert.equal(cls.prototype[m], undefined, `${cls.name}.${m} should not exist`);
      } else {
        assert.equal(typeof cls.prototype[m], 'function', `${cls.name}.${m} is missing`);
      }
    }
    // methods are camelCase only
    assert.equal(cls.prototype.slice_axis, undefined);
    assert.equal(cls.prototype.log_softmax, undefined);
  }
});

test('NDArray fluent values: slice, sliceAxis, broadcastTo, tile, clip, expandDims, norm, exp, relu, ...', () => {
  const c = (a, ref, o) => assertClose(a.toTypedArray(), oracle(ref), { rtol: 1e-5, atol: 1e-6, ...o });
  c(x.abs().rcbrt(), () => tf.pow(tf.abs(T()), -1 / 3));
  c(x.softmin({ axis: 1 }), () => tf.transpose(tf.softmax(tf.transpose(tf.neg(T()), [0, 2, 1])), [0, 2, 1]));
  c(x.diag({ axis1: 1, axis2: 2 }), () => tf.tensor(X.filter((_, i) => i % 12 === 0 || i % 12 === 5 || i % 12 === 10), [2, 3]));
  c(x.diag(1, { axis1: 1, axis2: 2 }), () => tf.tensor(X.filter((_, i) => i % 12 === 1 || i % 12 === 6 || i % 12 === 11), [2, 3]));
  c(x.slice([0, 1, 1], [2, 3, 3]), () => tf.slice(T(), [0, 1, 1], [2, 2, 2]));
  c(x.slice({ begin: [null, 1], end: [null, 3] }), () => tf.slice(T(), [0, 1, 0], [2, 2, 4]));
  c(x.sliceAxis(2, 1, 3), () => tf.slice(T(), [0, 0, 1], [2, 3, 2]));
  c(x.sliceAxis({ axis: 1, begin: 0, end: -1 }), () => tf.slice(T(), [0, 0, 0], [2, 2, 4]));
  const v = nd.array([1, 2, 3]);
  assert.deepEqual(v.broadcastTo([2, 3]).toArray(), [[1, 2, 3], [1, 2, 3]]); // leading axis added, as NDArray.broadcast_to
  c(x.sum(1, true).broadcastTo([2, 3, 4]), () => tf.broadcastTo(tf.sum(T(), 1, true), [2, 3, 4]));
  assert.throws(() => v.broadcastTo([2, 4]), /could not be broadcast/);
  c(x.tile([1, 2, 1]), () => tf.tile(T(), [1, 2, 1]));
  c(x.clip(-0.5, 0.5), () => tf.clipByValue(T(), -0.5, 0.5));
  assert.deepEqual(x.expandDims(0).shape, [1, 2, 3, 4]);
  assert.deepEqual(x.expandDims(-1).shape, [2, 3, 4, 1]);
  assert.deepEqual(x.expandDims(1, true).shape, [2, 1, 3, 4]); // a view (inplace=True)
  c(x.expandDims(1), () => tf.expandDims(T(), 1));
  c(x.norm(), () => tf.norm(T()), { rtol: 1e-5 });
  c(x.norm(1, 2), () => tf.sum(tf.abs(T()), 2));
  c(x.norm({ axis: 1 }), () => tf.sqrt(tf.sum(tf.square(T()), 1)));
  c(x.exp(), () => tf.exp(T()));
  c(x.relu(), () => tf.relu(T()));
  c(x.sigmoid(), () => tf.sigmoid(T()));
  c(x.abs().log(), () => tf.log(tf.abs(T())));
  c(x.abs().sqrt(), () => tf.sqrt(tf.abs(T())));
  c(x.square(), () => tf.square(T()));
  c(x.round(), () => tf.round(T())); // no .5 ties in this data
  c(x.floor(), () => tf.floor(T()));
  c(x.sum(2), () => tf.sum(T(), 2));
  c(x.mean(), () => tf.mean(T()));
  c(x.max(1), () => tf.max(T(), 1));
  c(x.min({ axis: 0, keepdims: true }), () => tf.min(T(), 0, true));
  c(x.softmax(), () => tf.softmax(T()));
  c(x.logSoftmax(), () => tf.logSoftmax(T()), { atol: 1e-5 });
  c(x.transpose([2, 0, 1]), () => tf.transpose(T(), [2, 0, 1]));
  c(x.swapaxes(0, 2), () => tf.transpose(T(), [2, 1, 0]));
  c(x.flip(1), () => tf.reverse(T(), 1));
  c(x.argmax(2), () => tf.cast(tf.argMax(T(), 2), 'float32'));
  c(x.topk({ axis: 2, k: 2, ret_typ: 'value' }), () => tf.topk(T(), 2).values);
  c(x.zerosLike(), () => tf.zerosLike(T()));
  c(x.onesLike(), () => tf.onesLike(T()));
  c(x.reshapeLike(nd.zeros([6, 4])), () => tf.reshape(T(), [6, 4]));
  const parts = x.split(3, 1);
  assert.equal(parts.length, 3);
  parts.forEach((p, i) => c(p, () => tf.slice(T(), [0, i, 0], [2, 1, 4])));
  c(nd.array([0, 2, 1]).oneHot(3), () => tf.oneHot(tf.tensor1d([0, 2, 1], 'int32'), 3));
  c(nd.array([[1, 2], [3, 4]]).pick(nd.array([1, 0]), 1), () => tf.tensor([2, 3]));
});

test('NDArray squeeze / flatten take Python\'s (axis, inplace) arguments; an options object is options', () => {
  const y = nd.zeros([2, 1, 3, 1]);
  assert.deepEqual(y.squeeze({ inplace: false }).shape, [2, 3]);
  assert.deepEqual(y.squeeze().shape, [2, 3]);
  assert.deepEqual(y.squeeze(1).shape, [2, 3, 1]);
  assert.deepEqual(y.squeeze({ axis: 3, inplace: true }).shape, [2, 1, 3]);
  assert.deepEqual(y.squeeze(null, true).shape, [2, 3]);
  assert.deepEqual(y.flatten().shape, [2, 3]);
  assert.deepEqual(y.flatten(true).shape, [2, 3]);
  assert.deepEqual(y.broadcastLike(nd.zeros([2, 4, 3, 5])).shape, [2, 4, 3, 5]);
  assert.throws(() => y.squeeze(0), mx.MXNetError);
  assert.throws(() => y.squeeze({ axes: 1 }), /unexpected argument 'axes'/);
});

test('Symbol fluent methods compute what the NDArray ones do (run by the executor)', () => {
  const c = (fn, ref, o) => assertClose(symRun(fn)[0].toTypedArray(), oracle(ref), { rtol: 1e-5, atol: 1e-6, ...o });
  c((s) => s.slice([0, 1, 1], [2, 3, 3]), () => tf.slice(T(), [0, 1, 1], [2, 2, 2]));
  c((s) => s.sliceAxis(2, 1, 3), () => tf.slice(T(), [0, 0, 1], [2, 3, 2]));
  c((s) => s.sum(1, true).broadcastTo([2, 3, 4]), () => tf.broadcastTo(tf.sum(T(), 1, true), [2, 3, 4]));
  c((s) => s.tile([1, 2, 1]), () => tf.tile(T(), [1, 2, 1]));
  c((s) => s.clip(-0.5, 0.5), () => tf.clipByValue(T(), -0.5, 0.5));
  c((s) => s.expandDims(1), () => tf.expandDims(T(), 1));
  c((s) => s.norm(1, 2), () => tf.sum(tf.abs(T()), 2));
  c((s) => s.exp(), () => tf.exp(T()));
  c((s) => s.relu(), () => tf.relu(T()));
  c((s) => s.softmax({ axis: 1 }), () => tf.transpose(tf.softmax(tf.transpose(T(), [0, 2, 1])), [0, 2, 1]));
  c((s) => s.transpose([2, 0, 1]), () => tf.transpose(T(), [2, 0, 1]));
  c((s) => s.reshape([0, -1]).squeeze(), () => tf.reshape(T(), [2, 12]));
  c((s) => s.flatten(), () => tf.reshape(T(), [2, 12]));
  const outs = symRun((s) => s.split(3, 1));
  assert.equal(outs.length, 3);
  outs.forEach((p, i) => assertClose(p.toTypedArray(), oracle(() => tf.slice(T(), [0, i, 0], [2, 1, 4]))));
});

test('Symbol fluent methods write MXNet\'s nodes: hint = the op function name, attributes in Python\'s str()', () => fresh(() => {
  const s = sym.var('x');
  const node = (y) => JSON.parse(y.tojson()).nodes.at(-1);
  assert.deepEqual(node(s.sliceAxis(1, 0, 2)), { op: 'slice_axis', name: 'slice_axis0', attrs: { axis: '1', begin: '0', end: '2' }, inputs: [[0, 0, 0]] });
  assert.deepEqual(node(s.astype('float16')), { op: 'Cast', name: 'cast0', attrs: { dtype: 'float16' }, inputs: [[0, 0, 0]] });
  assert.deepEqual(node(s.broadcastTo([2, 3])), { op: 'broadcast_to', name: 'broadcast_to0', attrs: { shape: '(2, 3)' }, inputs: [[0, 0, 0]] });
  assert.deepEqual(node(s.expandDims(0)), { op: 'expand_dims', name: 'expand_dims0', attrs: { axis: '0' }, inputs: [[0, 0, 0]] });
  assert.deepEqual(node(s.sum({ axis: 1, name: 'total' })).name, 'total');
}));

// ---- operators ---------------------------------------------------------------------------------------
const Y = R.normal(12), YS = [3, 4];
const y = nd.array(Y, { shape: YS });
const U = () => tf.tensor(Y, YS);
const P = Float32Array.from(X, (v) => Math.abs(v) + 0.5); // positive values for pow / mod / div
const p = nd.array(P, { shape: XS });
const PT = () => tf.tensor(P, XS);
const f32 = (t) => tf.cast(t, 'float32');

test('NDArray operators: NDArray (broadcasting), number, reversed forms', () => {
  const c = (a, ref, o) => assertClose(a.toTypedArray(), oracle(ref), { rtol: 1e-5, atol: 1e-6, ...o });
  c(x.add(y), () => tf.add(T(), U()));
  c(x.add(2), () => tf.add(T(), 2));
  c(x.radd(2), () => tf.add(2, T()));
  c(x.sub(y), () => tf.sub(T(), U()));
  c(x.sub(2), () => tf.sub(T(), 2));
  c(x.rsub(2), () => tf.sub(2, T()));
  c(x.rsub(y), () => tf.sub(U(), T()));
  c(x.mul(y), () => tf.mul(T(), U()));
  c(x.rmul(-3), () => tf.mul(-3, T()));
  c(x.div(p), () => tf.div(T(), PT()));
  c(x.div(4), () => tf.div(T(), 4));
  c(p.rdiv(1), () => tf.div(1, PT()));
  c(x.truediv(p), () => tf.div(T(), PT()));
  c(p.rtruediv(y), () => tf.div(U(), PT()));
  c(x.mod(0.75), () => tf.mod(T(), 0.75), { atol: 1e-5 });
  c(p.rmod(3), () => tf.mod(3, PT()), { atol: 1e-5 });
  c(x.mod(p), () => tf.mod(T(), PT()), { atol: 1e-5 });
  c(p.pow(2), () => tf.pow(PT(), 2));
  c(p.pow(y), () => tf.pow(PT(), U()));
  c(x.rpow(2), () => tf.pow(2, T()));
  c(x.neg(), () => tf.neg(T()));
  c(x.abs(), () => tf.abs(T()));
  c(x.lt(y), () => f32(tf.less(T(), U())));
  c(x.le(0), () => f32(tf.lessEqual(T(), 0)));
  c(x.gt(y), () => f32(tf.greater(T(), U())));
  c(x.ge(0.1), () => f32(tf.greaterEqual(T(), 0.1)));
  c(x.eq(x), () => tf.onesLike(T()));
  c(x.ne(0), () => tf.onesLike(T()));
  assert.deepEqual(nd.array([1, 2, 3]).eq(2).toArray(), [0, 1, 0]);
  assert.throws(() => x.add('1'), mx.MXNetError);
  assert.throws(() => x.add(nd.zeros([5])), mx.MXNetError); // shapes that do not broadcast
});

test('NDArray in-place operators change the array and return it', () => {
  const cases = [
    ['iadd', y, (a, b) => tf.add(a, b)], ['iadd', 1.5, (a, b) => tf.add(a, b)],
    ['isub', y, (a, b) => tf.sub(a, b)], ['isub', 2, (a, b) => tf.sub(a, b)],
    ['imul', y, (a, b) => tf.mul(a, b)], ['imul', -2, (a, b) => tf.mul(a, b)],
    ['idiv', 4, (a, b) => tf.div(a, b)], ['itruediv', 0.5, (a, b) => tf.div(a, b)],
    ['imod', 0.75, (a, b) => tf.mod(a, b)],
  ];
  for (const [m, o, ref] of cases) {
    const z = x.copy();
    const r = z[m](o);
    assert.equal(r, z, `${m} returns the same object`);
    assert.deepEqual(z.shape, XS);
    const other = () => (o instanceof mx.NDArray ? U() : o);
    assertClose(z.toTypedArray(), oracle(() => ref(T(), other())), { atol: 1e-5, msg: m });
  }
  const z = p.copy();
  z.idiv(p);
  assertClose(z.toTypedArray(), new Float32Array(24).fill(1));
  assert.throws(() => y.copy().iadd(x), mx.MXNetError); // the result would not fit y
});

test('len(x) is x.length: the first axis; a 0-d array has none', () => {
  assert.equal(x.length, 2);
  assert.equal(nd.zeros([5]).length, 5);
  const scalar = nd.empty([]);
  assert.deepEqual(scalar.shape, []);
  assert.throws(() => scalar.length, mx.MXNetError);
});

test('Symbol operators: the ops and names symbol.py writes', () => fresh(() => {
  const a = sym.var('a'), b = sym.var('b');
  const head = (s) => { const n = JSON.parse(s.tojson()).nodes.at(-1); return [n.op, n.name, n.attrs ?? {}]; };
  assert.deepEqual(head(a.add(b)), ['elemwise_add', '_plus0', {}]);
  assert.deepEqual(head(a.add(1)), ['_plus_scalar', '_plusscalar0', { scalar: '1' }]);
  assert.deepEqual(head(a.radd(2.5)), ['_plus_scalar', '_plusscalar1', { scalar: '2.5' }]);
  assert.deepEqual(head(a.sub(b)), ['elemwise_sub', '_minus0', {}]);
  assert.deepEqual(head(a.sub(1)), ['_minus_scalar', '_minusscalar0', { scalar: '1' }]);
  assert.deepEqual(head(a.rsub(1)), ['_rminus_scalar', '_rminusscalar0', { scalar: '1' }]);
  assert.deepEqual(head(a.rsub(b)), ['elemwise_sub', '_minus1', {}]);
  assert.deepEqual(head(a.mul(b)), ['elemwise_mul', '_mul0', {}]);
  assert.deepEqual(head(a.rmul(2)), ['_mul_scalar', '_mulscalar0', { scalar: '2' }]);
  assert.deepEqual(head(a.div(b)), ['elemwise_div', '_div0', {}]);
  assert.deepEqual(head(a.truediv(2)), ['_div_scalar', '_divscalar0', { scalar: '2' }]);
  assert.deepEqual(head(a.rdiv(2)), ['_rdiv_scalar', '_rdivscalar0', { scalar: '2' }]);
  assert.deepEqual(head(a.rtruediv(b)), ['elemwise_div', '_div1', {}]);
  assert.deepEqual(head(a.mod(b)), ['_mod', '_mod0', {}]);
  assert.deepEqual(head(a.mod(3)), ['_mod_scalar', '_modscalar0', { scalar: '3' }]);
  assert.deepEqual(head(a.rmod(3)), ['_rmod_scalar', '_rmodscalar0', { scalar: '3' }]);
  assert.deepEqual(head(a.pow(b)), ['_power', '_power0', {}]);
  assert.deepEqual(head(a.pow(2)), ['_power_scalar', '_powerscalar0', { scalar: '2' }]);
  assert.deepEqual(head(a.rpow(2)), ['_rpower_scalar', '_rpower_scalar0', { scalar: '2' }]);
  assert.deepEqual(head(a.neg()), ['_mul_scalar', '_mulscalar1', { scalar: '-1.0' }]);
  assert.deepEqual(head(a.abs()), ['abs', 'abs0', {}]);
  assert.deepEqual(head(a.eq(b)), ['_equal', '_equal0', {}]);
  assert.deepEqual(head(a.ne(1)), ['_not_equal_scalar', '_not_equal_scalar0', { scalar: '1' }]);
  assert.deepEqual(head(a.gt(b)), ['_greater', '_greater0', {}]);
  assert.deepEqual(head(a.ge(0)), ['_greater_equal_scalar', '_greater_equal_scalar0', { scalar: '0' }]);
  assert.deepEqual(head(a.lt(b)), ['_lesser', '_lesser0', {}]);
  assert.deepEqual(head(a.le(0.5)), ['_lesser_equal_scalar', '_lesser_equal_scalar0', { scalar: '0.5' }]);
  // +=, -=, *=, /= raise NotImplementedForSymbol; %= falls back to % (symbol.py has no __imod__)
  for (const m of ['iadd', 'isub', 'imul', 'idiv', 'itruediv']) {
    assert.throws(() => a[m](1), (e) => e instanceof mx.MXNetError && /not implemented for Symbol/.test(e.message), m);
  }
  assert.deepEqual(head(a.imod(2)), ['_mod_scalar', '_modscalar1', { scalar: '2' }]);
  // len(s): the number of outputs
  assert.equal(a.length, 1);
  assert.equal(sym.split(a, { num_outputs: 3 }).length, 3);
  assert.equal(sym.Group([a, b, a.add(b)]).length, 3);
  // no broadcasting between Symbols (elemwise ops): shapes must agree
  assert.throws(() => a.add(b).inferShape({ a: [2, 3], b: [3] }), mx.MXNetError);
}));

test('Symbol operators compute what the NDArray ones do', () => {
  const op = fresh(() => {
    const a = sym.var('a'), b = sym.var('b');
    return new mx.CachedOp(sym.Group([a.add(b), a.rsub(2), a.mul(b).div(b.add(3)), a.pow(2), b.rpow(2), a.neg(), a.gt(b), a.mod(0.75), a.rmod(3)]));
  });
  const B = R.normal(24), b = nd.array(B, { shape: XS }), BT = () => tf.tensor(B, XS);
  const outs = op.forward([p, b]);
  const refs = [
    () => tf.add(PT(), BT()), () => tf.sub(2, PT()), () => tf.div(tf.mul(PT(), BT()), tf.add(BT(), 3)), () => tf.pow(PT(), 2),
    () => tf.pow(2, BT()), () => tf.neg(PT()), () => f32(tf.greater(PT(), BT())), () => tf.mod(PT(), 0.75), () => tf.mod(3, PT()),
  ];
  refs.forEach((ref, i) => assertClose(outs[i].toTypedArray(), oracle(ref), { rtol: 1e-5, atol: 1e-5, msg: `output ${i}` }));
});

test('asnumpy() gives nested arrays, asscalar() a number; stype, tostype, copyto, asInContext, waitToRead', () => {
  const a = nd.array([[1, 2], [3, 4]]);
  assert.deepEqual(a.asnumpy(), [[1, 2], [3, 4]]);
  assert.deepEqual(nd.array([7], { dtype: 'int64' }).asnumpy(), [7]);
  assert.equal(nd.array([2.5]).asscalar(), 2.5);
  assert.throws(() => a.asscalar(), mx.MXNetError);
  assert.equal(a.stype, 'default');
  const c = a.tostype('default');
  assert.notEqual(c, a);
  assert.deepEqual(c.asnumpy(), [[1, 2], [3, 4]]);
  assert.throws(() => a.tostype('csr'), /storage type 'csr'/);
  assert.equal(a.asInContext(mx.cpu(0)), a);
  const d = a.copyto(mx.cpu());
  assert.notEqual(d, a);
  assert.deepEqual(d.toArray(), [[1, 2], [3, 4]]);
  assert.equal(a.waitToRead(), undefined);
});
