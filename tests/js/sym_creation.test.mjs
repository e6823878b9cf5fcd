// mx.sym's creation helpers (symbol.py's zeros, ones, full, arange, linspace, eye): the node and
// attributes Python writes (written out here from MXNet 1.9.1's symbol.py: dtype float32 when not
// given, full's value=float(val), arange's keywords all passed, None as 'None'), and the values a
// graph computes with them (by hand).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { sym, nd, gluon } = mx;
const node = (s) => JSON.parse(s.toJSON()).nodes.at(-1);

test('attributes as Python writes them', () => {
  assert.deepEqual(node(sym.zeros([2, 3])), { op: '_zeros', name: '_zeros0', attrs: { dtype: 'float32', shape: '(2, 3)' }, inputs: [] });
  assert.deepEqual(node(sym.ones({ shape: 4, dtype: 'int32', name: 'o' })).attrs, { dtype: 'int32', shape: '(4,)' });
  assert.equal(node(sym.ones([1], { name: 'o' })).name, 'o');
  assert.deepEqual(node(sym.full([2], 7)).attrs, { dtype: 'float32', shape: '(2,)', value: '7.0' });
  assert.deepEqual(node(sym.arange(5)).attrs,
    { dtype: 'float32', infer_range: 'False', repeat: '1', start: '5', step: '1.0', stop: 'None' });
  assert.deepEqual(node(sym.linspace(0, 1, 5)).attrs, { dtype: 'float32', endpoint: 'True', num: '5', start: '0', stop: '1' });
  assert.deepEqual(node(sym.eye(3, { k: 1 })).attrs, { M: '0', N: '3', dtype: 'float32', k: '1' });
  assert.deepEqual(node(sym.zeros([2], { attr: { __layout__: 'NC' } })).attrs, { __layout__: 'NC', dtype: 'float32', shape: '(2,)' });
  assert.throws(() => sym.zeros(), mx.MXNetError);
  assert.throws(() => sym.full([2]), /val/);
});

test('values computed in a graph', () => {
  const x = sym.var('x');
  const out = sym.Group([
    sym.elemwise_add(x, sym.arange(1, 11, 2)), sym.elemwise_add(x, sym.full([5], 0.5)),
    sym.elemwise_add(x, sym.ones([5])), sym.elemwise_add(x, sym.zeros([5])),
    sym.linspace(0, 1, 5), sym.eye(2, 3, 1),
  ]);
  const net = new gluon.SymbolBlock(out, [x]);
  const ys = net(nd.array([10, 20, 30, 40, 50])).map((y) => Array.from(y.toTypedArray()));
  assert.deepEqual(ys, [[11, 23, 35, 47, 59], [10.5, 20.5, 30.5, 40.5, 50.5], [11, 21, 31, 41, 51], [10, 20, 30, 40, 50],
    [0, 0.25, 0.5, 0.75, 1], [0, 1, 0, 0, 0, 1]]);
});
