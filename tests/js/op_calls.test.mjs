// How operators are called (js-api.md rules 2 and 11), as MXNet 1.9.1's generated Python functions
// `op(in1=None, ..., attr1=_Null, ..., out=None, name=None)` take them: inputs positionally, then
// attributes positionally in signature order, then one options object naming any attribute or
// input. Values are checked against TensorFlow.js's CPU kernels or hand-worked numbers; symbol
// attributes against the JSON text MXNet writes. Also Symbol composition (s(...)), getChildren and
// partial inference, against MXNet's documented results.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, assertClose, oracle } from './oracle.mjs';

const { nd, sym } = mx;
const fresh = (fn) => mx.name.withNameManager(new mx.name.NameManager(), fn);
const isErr = (...parts) => (e) => e instanceof mx.MXNetError && parts.every((p) => (p instanceof RegExp ? p.test(e.message) : e.message.includes(p)));
const R = rng(7);
const X = R.normal(12), XS = [3, 4];
const x = nd.array(X, { shape: XS });
// the attributes of the op node named `name` in a symbol's JSON text
const nodeOf = (s, name) => JSON.parse(s.tojson()).nodes.find((n) => n.name === name);

test('sum: axis and keepdims positionally, as Python nd.sum(x, 1, True)', () => {
  assertClose(nd.sum(x, 1).toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS), 1)));
  const k = nd.sum(x, 1, true);
  assert.deepEqual(k.shape, [3, 1]);
  assertClose(k.toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS), 1, true)));
  assertClose(nd.sum(x, [0, 1]).toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS))), { rtol: 1e-5, atol: 1e-5 });
  // axis positionally, keepdims by name; exclude positionally (reduces every axis but 0)
  assert.deepEqual(nd.sum(x, 0, { keepdims: true }).shape, [1, 4]);
  assertClose(nd.sum(x, 0, false, true).toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS), 1)));
  // the options object alone keeps working
  assertClose(nd.sum(x, { axis: 1 }).toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS), 1)));
});

test('clip: a_min and a_max positionally', () => {
  assertClose(nd.clip(x, -0.5, 0.5).toTypedArray(), oracle(() => tf.clipByValue(tf.tensor(X, XS), -0.5, 0.5)));
  assertClose(nd.clip(x, -0.5, { a_max: 0.25 }).toTypedArray(), oracle(() => tf.clipByValue(tf.tensor(X, XS), -0.5, 0.25)));
});

test('softmax: its second declared input is `length`, so axis comes positionally after it', () => {
  const ref0 = oracle(() => tf.transpose(tf.softmax(tf.transpose(tf.tensor(X, XS)))));
  assertClose(nd.softmax(x, { axis: 0 }).toTypedArray(), ref0);
  assertClose(nd.softmax(x, null, 0).toTypedArray(), ref0); // softmax(data, length=None, axis=0)
  assertClose(nd.softmax(x).toTypedArray(), oracle(() => tf.softmax(tf.tensor(X, XS))));
  // Python: softmax(x, 1) puts 1 in the `length` slot, an NDArray argument
  assert.throws(() => nd.softmax(x, 1), isErr('softmax', "'length'", 'NDArray'));
});

test('FullyConnected: num_hidden and no_bias positionally; inputs by name', () => {
  const W = R.normal(12), B = R.normal(3);
  const w = nd.array(W, { shape: [3, 4] }), b = nd.array(B);
  const ref = oracle(() => tf.add(tf.matMul(tf.tensor(X, XS), tf.tensor(W, [3, 4]), false, true), tf.tensor(B)));
  const refNoBias = oracle(() => tf.matMul(tf.tensor(X, XS), tf.tensor(W, [3, 4]), false, true));
  assertClose(nd.FullyConnected(x, w, b, 3).toTypedArray(), ref, { atol: 1e-5 });
  assertClose(nd.FullyConnected(x, w, null, 3, true).toTypedArray(), refNoBias, { atol: 1e-5 });
  assertClose(nd.FullyConnected({ data: x, weight: w, num_hidden: 3, no_bias: true }).toTypedArray(), refNoBias, { atol: 1e-5 });
  assertClose(nd.FullyConnected(x, { weight: w, bias: b, num_hidden: 3 }).toTypedArray(), ref, { atol: 1e-5 });
  assertClose(nd.FullyConnected(x, w, b, { num_hidden: 3 }).toTypedArray(), ref, { atol: 1e-5 });
});

test('sym: positional attributes are written into the node, as MXNet writes them', () => fresh(() => {
  const v = sym.var('x');
  assert.deepEqual(nodeOf(sym.sum(v, 1, { name: 's' }), 's').attrs, { axis: '1' });
  assert.deepEqual(nodeOf(sym.sum(v, [0, 1], true, { name: 's2' }), 's2').attrs, { axis: '(0, 1)', keepdims: 'True' });
  assert.deepEqual(nodeOf(sym.clip(v, 0, 1, { name: 'c' }), 'c').attrs, { a_min: '0', a_max: '1' });
  assert.deepEqual(nodeOf(sym.softmax(v, { axis: 1, name: 'sm' }), 'sm').attrs, { axis: '1' });
  const sm = sym.softmax(v, null, 0, { name: 'sm0' });
  assert.deepEqual(nodeOf(sm, 'sm0').attrs, { axis: '0' });
  assert.deepEqual(sm.listArguments(), ['x']); // the absent length input is not created
  // FullyConnected(x, None, None, 3, True, name='fc'): weight created as fc_weight, no bias
  const fc = sym.FullyConnected(v, null, null, 3, true, { name: 'fc' });
  assert.deepEqual(nodeOf(fc, 'fc').attrs, { num_hidden: '3', no_bias: 'True' });
  assert.deepEqual(fc.listArguments(), ['x', 'fc_weight']);
  // inputs by name
  const w = sym.var('w');
  const fc2 = sym.FullyConnected({ data: v, weight: w, num_hidden: 3, no_bias: true, name: 'fc2' });
  assert.deepEqual(fc2.listArguments(), ['x', 'w']);
  assert.deepEqual(sym.FullyConnected(v, { bias: sym.var('b'), num_hidden: 2, name: 'fc3' }).listArguments(), ['x', 'fc3_weight', 'b']);
  // hybridForward's F is sym: the composed graph computes what nd does
  const op = new mx.CachedOp(sym.sum(v, 1, true));
  const [y] = op.forward([x]);
  assertClose(y.toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS), 1, true)));
}));

test('errors name the operator and the parameter', () => {
  const w = nd.ones([3, 4]);
  assert.throws(() => nd.sum(x, { axes: 1 }), isErr('sum', "'axes'"));
  assert.throws(() => nd.sum(x, 1, { axis: 0 }), isErr('sum', "'axis'", 'twice'));
  assert.throws(() => nd.FullyConnected(x, w, { data: x, num_hidden: 3, no_bias: true }), isErr('FullyConnected', "'data'", 'twice'));
  assert.throws(() => nd.FullyConnected(x, 5, { num_hidden: 3, no_bias: true }), isErr('FullyConnected', "'weight'", 'NDArray'));
  assert.throws(() => nd.FullyConnected(x, [1, 2], { num_hidden: 3, no_bias: true }), isErr('FullyConnected', "'weight'", 'NDArray'));
  assert.throws(() => nd.FullyConnected(x, null, nd.zeros([3]), { num_hidden: 3 }), isErr('FullyConnected', "'weight'", 'missing'));
  assert.throws(() => nd.FullyConnected(x, w, null, 3, true, true, 1), isErr('FullyConnected', 'positional'));
  assert.throws(() => nd.Activation(x, { act_type: 'relu', inputs: x }), isErr('Activation', "'inputs'"));
  assert.throws(() => sym.relu(1), isErr('relu', "'data'", 'Symbol'));
  assert.throws(() => sym.relu(sym.var('a'), { weight: sym.var('w') }), isErr('relu', "'weight'"));
  assert.throws(() => sym.sum(sym.var('a'), 1, { axis: 1 }), isErr('sum', "'axis'", 'twice'));
  assert.throws(() => sym.FullyConnected(sym.var('a'), { num_hidden: 2, bogus: 1 }), isErr('FullyConnected', "'bogus'"));
});

test('only a plain object is an options object', () => {
  const opts = Object.create(null);
  opts.axis = 1;
  assertClose(nd.sum(x, opts).toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS), 1)));
  // a class instance is positional: here the axis, which the C parser refuses with the name
  class Axis { toString() { return 'one'; } }
  assert.throws(() => nd.sum(x, new Axis()), isErr('sum', "'axis'"));
  assert.throws(() => nd.relu(x, new Axis()), isErr('relu', 'positional'));
});

test('variadic ops: every positional is an input, attributes by name only', () => {
  const A = R.normal(6), B = R.normal(6), C = R.normal(6);
  const a = nd.array(A, { shape: [2, 3] }), b = nd.array(B, { shape: [2, 3] }), c = nd.array(C, { shape: [2, 3] });
  assertClose(nd.Concat(a, b, { dim: 0 }).toTypedArray(), oracle(() => tf.concat([tf.tensor(A, [2, 3]), tf.tensor(B, [2, 3])], 0)));
  assertClose(nd.concat([a, b], { dim: 1 }).toTypedArray(), oracle(() => tf.concat([tf.tensor(A, [2, 3]), tf.tensor(B, [2, 3])], 1)));
  assertClose(nd.add_n(a, b, c).toTypedArray(), oracle(() => tf.addN([tf.tensor(A, [2, 3]), tf.tensor(B, [2, 3]), tf.tensor(C, [2, 3])])));
  assertClose(nd.stack(a, b, { axis: 1 }).toTypedArray(), oracle(() => tf.stack([tf.tensor(A, [2, 3]), tf.tensor(B, [2, 3])], 1)));
  assert.throws(() => nd.Concat(a, b, 0), isErr('Concat', 'input 2', 'NDArray'));
  fresh(() => {
    const s = sym.Concat(sym.var('a'), sym.var('b'), { dim: 0, name: 'cat' });
    assert.deepEqual(nodeOf(s, 'cat').attrs, { dim: '0', num_args: '2' });
  });
});

test('out= writes into the given array and returns it', () => {
  const o = nd.zeros([3]);
  const r = nd.sum(x, 1, { out: o });
  assert.equal(r, o);
  assertClose(o.toTypedArray(), oracle(() => tf.sum(tf.tensor(X, XS), 1)));
});

test('nd.add, nd.subtract, ...: ndarray.py\'s _ufunc_helper dispatch', () => {
  const Y = R.normal(4);
  const y = nd.array(Y, { shape: [1, 4] });
  const t = () => tf.tensor(X, XS), u = () => tf.tensor(Y, [1, 4]);
  assertClose(nd.add(x, y).toTypedArray(), oracle(() => tf.add(t(), u())));
  assertClose(nd.add(2, x).toTypedArray(), oracle(() => tf.add(2, t())));
  assertClose(nd.subtract(2, x).toTypedArray(), oracle(() => tf.sub(2, t())));
  assertClose(nd.subtract(x, y).toTypedArray(), oracle(() => tf.sub(t(), u())));
  assertClose(nd.multiply(x, 3).toTypedArray(), oracle(() => tf.mul(t(), 3)));
  assertClose(nd.divide(1, x).toTypedArray(), oracle(() => tf.div(1, t())), { rtol: 1e-5 });
  assertClose(nd.true_divide(x, y).toTypedArray(), oracle(() => tf.div(t(), u())), { rtol: 1e-5 });
  assertClose(nd.power(2, x).toTypedArray(), oracle(() => tf.pow(2, t())), { rtol: 1e-5 });
  assertClose(nd.modulo(7, nd.array([2, 3, -4])).toTypedArray(), [1, 1, -1]); // Python: 7 % -4 == -1
  assertClose(nd.maximum(x, y).toTypedArray(), oracle(() => tf.maximum(t(), u())));
  assertClose(nd.minimum(0, x).toTypedArray(), oracle(() => tf.minimum(t(), 0)));
  assertClose(nd.greater(0, x).toTypedArray(), oracle(() => tf.cast(tf.less(t(), 0), 'float32')));
  assertClose(nd.lesser_equal(x, y).toTypedArray(), oracle(() => tf.cast(tf.lessEqual(t(), u()), 'float32')));
  assertClose(nd.not_equal(x, x).toTypedArray(), new Float32Array(12));
  // two numbers: Python's operator
  assert.equal(nd.add(2, 3), 5);
  assert.equal(nd.modulo(-7, 3), 2);
  assert.equal(nd.greater(2, 3), 0);
  assert.throws(() => nd.add(x, 'a'), mx.MXNetError);
});

test('compose: s(data=t, name=...) returns a new Symbol and leaves s unchanged', () => fresh(() => {
  // MXNet's Symbol.__call__ docstring example
  const data = sym.var('data');
  const net1 = sym.FullyConnected({ data, name: 'fc1', num_hidden: 10 });
  const net2 = sym.FullyConnected({ name: 'fc3', num_hidden: 10 });
  assert.deepEqual(net2.listArguments(), ['fc3_data', 'fc3_weight', 'fc3_bias']);
  const composed = net2.compose({ fc3_data: net1, name: 'composed' });
  assert.equal(composed.name, 'composed');
  assert.deepEqual(composed.listArguments(), ['data', 'fc1_weight', 'fc1_bias', 'fc3_weight', 'fc3_bias']);
  assert.equal(net2.name, 'fc3');
  assert.deepEqual(net2.listArguments(), ['fc3_data', 'fc3_weight', 'fc3_bias']);
  // without a name the head keeps its own (nnvm renames only for a non-empty name)
  assert.equal(net2.compose({ fc3_data: net1 }).name, 'fc3');
  // positional Symbols fill the free variables in listInputs() order
  const w = sym.var('w');
  const pos = net2.compose(net1, w, { name: 'p' });
  assert.deepEqual(pos.listArguments(), ['data', 'fc1_weight', 'fc1_bias', 'w', 'fc3_bias']);
  // the composed graph computes FC(FC(data)) with the same parameters
  const D = R.normal(8), W1 = R.normal(40), B1 = R.normal(10), W3 = R.normal(100), B3 = R.normal(10);
  const [y] = new mx.CachedOp(composed).forward([nd.array(D, { shape: [2, 4] }), nd.array(W1, { shape: [10, 4] }),
    nd.array(B1), nd.array(W3, { shape: [10, 10] }), nd.array(B3)]);
  const ref = oracle(() => {
    const h = tf.add(tf.matMul(tf.tensor(D, [2, 4]), tf.tensor(W1, [10, 4]), false, true), tf.tensor(B1));
    return tf.add(tf.matMul(h, tf.tensor(W3, [10, 10]), false, true), tf.tensor(B3));
  });
  assertClose(y.toTypedArray(), ref, { atol: 1e-4 });
  // errors: unknown keyword, a non-Symbol, a variable given twice
  assert.throws(() => net2.compose({ nosuch: net1 }), isErr("'nosuch'"));
  assert.throws(() => net2.compose({ fc3_data: 3 }), isErr("'fc3_data'", 'Symbol'));
  assert.throws(() => net2.compose(net1, { fc3_data: net1 }), isErr("'fc3_data'", 'twice'));
}));

test('getChildren: the head node\'s inputs as a group, null for a variable', () => fresh(() => {
  // MXNet's get_children docstring: b = x + (y + z)
  const xv = sym.var('x'), y = sym.var('y'), z = sym.var('z');
  const a = y.add(z);
  const b = xv.add(a);
  const ch = b.getChildren();
  assert.deepEqual(ch.listOutputs(), ['x', '_plus0_output']);
  assert.deepEqual(ch.getChildren().listOutputs(), ['y', 'z']);
  assert.equal(xv.getChildren(), null);
  const fc = sym.FullyConnected(sym.var('d'), { num_hidden: 2, name: 'fc' });
  assert.deepEqual(fc.getChildren().listOutputs(), ['d', 'fc_weight', 'fc_bias']);
}));

test('inferShapePartial leaves FullyConnected\'s weight () while data is unknown, as MXNet', () => fresh(() => {
  // FullyConnectedShape returns before assigning anything when data's shape is unknown
  const fc = sym.FullyConnected(sym.var('data'), { num_hidden: 10 });
  assert.deepEqual(fc.inferShapePartial(), [[[], [], []], [[]], []]);
  // a known rank with an unknown batch (0): the weight and bias follow, the batch stays 0
  assert.deepEqual(fc.inferShapePartial({ data: [0, 5] }), [[[0, 5], [10, 5], [10]], [[0, 10]], []]);
  assert.deepEqual(fc.inferShape({ data: [2, 5] }), [[[2, 5], [10, 5], [10]], [[2, 10]], []]);
}));

test('inferTypePartial: the infer_type_partial docstring example', () => fresh(() => {
  const data = sym.var('data'), prev = sym.var('prev');
  const casted = sym.cast(prev, { dtype: 'float32' });
  const out = sym.Activation({ data: sym.elemwise_add(data, casted), act_type: 'relu' });
  assert.deepEqual(out.listArguments(), ['data', 'prev']);
  assert.deepEqual(out.inferType({ data: 'float32' }), [null, null, null]);
  assert.deepEqual(out.inferTypePartial({ data: 'float32' }), [['float32', null], ['float32'], []]);
  assert.deepEqual(out.inferType({ data: 'float32', prev: 'float16' }), [['float32', 'float16'], ['float32'], []]);
}));
