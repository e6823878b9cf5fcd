// Bad calls throw mx.MXNetError naming the operator and the problem; nothing is changed and the
// next call works (issue 2, acceptance 3). Messages are checked against what each mistake is.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { nd } = mx;
const isErr = (op, ...parts) => (e) => e instanceof mx.MXNetError && e.message.includes(`Operator ${op}`) && parts.every((p) => (p instanceof RegExp ? p.test(e.message) : e.message.includes(p)));

test('mismatched shapes, unknown attributes, wrong attribute types, missing attributes, wrong input counts', () => {
  const x = nd.ones([2, 3]), w = nd.ones([4, 5]), b = nd.zeros([4]);
  assert.throws(() => nd.FullyConnected(x, w, b, { num_hidden: 4 }), isErr('FullyConnected', 'weight has shape (4, 5)', '(4, 3)'));
  assert.throws(() => nd.dot(x, w), isErr('dot', '(2, 3)', '(4, 5)'));
  assert.throws(() => nd.broadcast_add(x, nd.ones([4, 3])), isErr('broadcast_add', '(2, 3)', '(4, 3)'));
  assert.throws(() => nd.FullyConnected(x, nd.ones([4, 3]), b, { num_hidden: 4, bias_size: 2 }), isErr('FullyConnected', "unknown attribute 'bias_size'"));
  assert.throws(() => nd.FullyConnected(x, nd.ones([4, 3]), b, { num_hidden: 'four' }), isErr('FullyConnected', "invalid value 'four' for attribute 'num_hidden'", 'integer'));
  assert.throws(() => nd.FullyConnected(x, nd.ones([4, 3]), b, { num_hidden: 2.5 }), isErr('FullyConnected', "'2.5'", 'num_hidden'));
  assert.throws(() => nd.FullyConnected(x, nd.ones([4, 3]), b, { num_hidden: 4, flatten: 'maybe' }), isErr('FullyConnected', "'flatten'", 'boolean'));
  assert.throws(() => nd.Convolution(nd.ones([1, 1, 5, 5]), nd.ones([1, 1, 3, 3]), { num_filter: 1, no_bias: true }), isErr('Convolution', "required attribute 'kernel'"));
  assert.throws(() => nd.Reshape(x, { shape: [7, -1] }), isErr('Reshape', '(2, 3)'));
  assert.throws(() => nd.FullyConnected(x, { num_hidden: 4 }), isErr('FullyConnected', 'expected 3 inputs, got 1'));
  // relu(data=None, out=None, name=None) has no attribute to take a second positional (rule 2)
  assert.throws(() => nd.relu(x, 3), (e) => e instanceof mx.MXNetError && /relu.*at most 1 positional/.test(e.message));
  // the next calls work, and give hand-worked values
  assert.deepEqual(nd.FullyConnected(x, nd.ones([4, 3]), b, { num_hidden: 4 }).toArray(), [[3, 3, 3, 3], [3, 3, 3, 3]]);
  assert.deepEqual(nd.dot(x, nd.ones([3, 1])).toArray(), [[3], [3]]);
});

test('a failing call with out= leaves the out array unchanged', () => {
  const out = nd.array([[7, 7, 7], [7, 7, 7]]);
  assert.throws(() => nd.broadcast_add(nd.ones([2, 3]), nd.ones([5]), { out }), mx.MXNetError);
  assert.throws(() => nd.relu(nd.ones([3, 2]), { out }), isErr('relu', 'output 0 has shape (2, 3)'));
  assert.deepEqual(out.toArray(), [[7, 7, 7], [7, 7, 7]]);
  nd.relu(nd.array([[-1, 2, -3], [4, -5, 6]]), { out });
  assert.deepEqual(out.toArray(), [[0, 2, 0], [4, 0, 6]]);
});

test('a disposed array and non-arrays are refused with clear errors', () => {
  const a = nd.ones([2]);
  a.dispose();
  assert.throws(() => nd.relu(a), /disposed/);
  assert.throws(() => nd.array('hello'), mx.MXNetError);
  assert.throws(() => nd.zeros([-1, 2]), /negative dimension/);
  assert.deepEqual(nd.relu(nd.array([-1, 1])).toArray(), [0, 1]);
});
