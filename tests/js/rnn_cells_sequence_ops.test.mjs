// The sequence ops gluon.rnn's cells unroll with valid_length through (csrc/ops/sequence.c):
// SequenceMask, SequenceLast, SequenceReverse against hand-worked values from MXNet 1.9.1's
// operator docs, both time axes, shape/argument errors, and their gradients against finite
// differences (tests/js/grad_check.mjs).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { checkGrad } from './grad_check.mjs';

const { nd, sym } = mx;
// MXNet's doc example: x of shape (3, 2, 3) holding 1..18, time on axis 0
const X = () => nd.arange(1, 19).reshape([3, 2, 3]);
const rows = (a) => a.toArray();

test('SequenceMask: identity without lengths; steps at or past each length set to value (axis 0 and 1)', () => {
  assert.deepEqual(rows(nd.SequenceMask(X())), rows(X()));
  const m = nd.SequenceMask(X(), nd.array([1, 1]), { use_sequence_length: true });
  assert.deepEqual(rows(m), [[[1, 2, 3], [4, 5, 6]], [[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0]]]);
  const m2 = nd.SequenceMask(X(), nd.array([2, 3]), { use_sequence_length: true, value: 1 });
  assert.deepEqual(rows(m2), [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]], [[1, 1, 1], [16, 17, 18]]]);
  // axis 1: (N, T, C); lengths per row of axis 0
  const y = X().transpose([1, 0, 2]);
  const m3 = nd.SequenceMask(y, nd.array([2, 0], { dtype: 'int32' }), { use_sequence_length: true, axis: 1, value: -1 });
  assert.deepEqual(rows(m3), [[[1, 2, 3], [7, 8, 9], [-1, -1, -1]], [[-1, -1, -1], [-1, -1, -1], [-1, -1, -1]]]);
});

test('SequenceLast: the last step, or step length - 1 of each sequence (axis 0 and 1)', () => {
  assert.deepEqual(rows(nd.SequenceLast(X())), [[13, 14, 15], [16, 17, 18]]);
  assert.deepEqual(rows(nd.SequenceLast(X(), nd.array([1, 2]), { use_sequence_length: true })), [[1, 2, 3], [10, 11, 12]]);
  const y = X().transpose([1, 0, 2]);
  assert.deepEqual(rows(nd.SequenceLast(y, nd.array([3, 1]), { use_sequence_length: true, axis: 1 })), [[13, 14, 15], [4, 5, 6]]);
  assert.deepEqual(nd.SequenceLast(nd.zeros([4, 2, 3, 5])).shape, [2, 3, 5]);
});

test('SequenceReverse: each sequence\'s first length steps reversed, padding in place', () => {
  assert.deepEqual(rows(nd.SequenceReverse(X())),
    [[[13, 14, 15], [16, 17, 18]], [[7, 8, 9], [10, 11, 12]], [[1, 2, 3], [4, 5, 6]]]);
  assert.deepEqual(rows(nd.SequenceReverse(X(), nd.array([2, 3]), { use_sequence_length: true })),
    [[[7, 8, 9], [16, 17, 18]], [[1, 2, 3], [10, 11, 12]], [[13, 14, 15], [4, 5, 6]]]);
});

test('sequence ops: inputs listed by use_sequence_length, shapes inferred, bad lengths and axes are MXNetErrors', () => {
  const s = sym.SequenceLast(sym.var('x'), sym.var('len'), { use_sequence_length: true, name: 'last' });
  assert.deepEqual(s.listArguments(), ['x', 'len']);
  const [args, outs] = s.inferShape({ x: [5, 4, 3] });
  assert.deepEqual(args, [[5, 4, 3], [4]]);
  assert.deepEqual(outs, [[4, 3]]);
  assert.deepEqual(sym.SequenceMask(sym.var('x')).listArguments(), ['x']);
  assert.throws(() => nd.SequenceLast(X(), nd.array([0, 1]), { use_sequence_length: true }),
    (e) => e instanceof mx.MXNetError && /out of range \[1, 3\]/.test(e.message));
  assert.throws(() => nd.SequenceMask(X(), nd.array([4, 1]), { use_sequence_length: true }), mx.MXNetError);
  assert.throws(() => nd.SequenceReverse(X(), { axis: 1 }), (e) => e instanceof mx.MXNetError && /axis to be 0/.test(e.message));
  assert.throws(() => nd.SequenceMask(X(), { axis: 2 }), mx.MXNetError);
  assert.throws(() => nd.SequenceLast(nd.zeros([3])), (e) => e instanceof mx.MXNetError && /rank 2 or greater/.test(e.message));
});

test('sequence ops: gradients against finite differences', () => {
  const len = nd.array([2, 3, 1], { dtype: 'float64' });
  const data = { shape: [3, 3, 2] };
  checkGrad('SequenceMask', [data, len], { use_sequence_length: true, value: 5 }, { wrt: [0] });
  checkGrad('SequenceMask', [data], {});
  checkGrad('SequenceMask', [{ shape: [3, 3, 2] }, len], { use_sequence_length: true, axis: 1 }, { wrt: [0] });
  checkGrad('SequenceLast', [data, len], { use_sequence_length: true }, { wrt: [0] });
  checkGrad('SequenceLast', [{ shape: [3, 3, 2] }, len], { use_sequence_length: true, axis: 1 }, { wrt: [0] });
  checkGrad('SequenceLast', [data], {});
  checkGrad('SequenceReverse', [data, len], { use_sequence_length: true }, { wrt: [0] });
  checkGrad('SequenceReverse', [data], {});
});
