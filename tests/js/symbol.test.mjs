// The Symbol API against hand-worked expectations from ../shared/spec/symbol-json.md: MXNet's
// automatic naming, listings, aux states decided by the op, versions, exact JSON text,
// inference, groups and internals.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { sym, nd } = mx;
const fresh = (fn) => mx.name.withNameManager(new mx.name.NameManager(), fn);

test('automatic names: <hint><n> per hint, name: given, _output suffixes, arithmetic hints', () => fresh(() => {
  const data = sym.var('data');
  const fc = sym.FullyConnected(data, { num_hidden: 8 });
  const fc2 = sym.FullyConnected(fc, { num_hidden: 4 });
  const act = sym.Activation(fc2, { act_type: 'relu', name: 'myrelu' });
  assert.equal(fc.name, 'fullyconnected0');
  assert.equal(fc2.name, 'fullyconnected1');
  assert.deepEqual(act.listOutputs(), ['myrelu_output']);
  assert.deepEqual(act.listArguments(), ['data', 'fullyconnected0_weight', 'fullyconnected0_bias', 'fullyconnected1_weight', 'fullyconnected1_bias']);
  assert.equal(String(data), '<Symbol data>');
  assert.equal(String(act), '<Symbol myrelu>');
  const s = act.add(fc2).add(1).mul(2).neg();
  const names = JSON.parse(s.tojson()).nodes.filter((n) => n.op !== 'null').map((n) => `${n.op}:${n.name}`);
  assert.deepEqual(names.slice(-4), ['elemwise_add:_plus0', '_plus_scalar:_plusscalar0', '_mul_scalar:_mulscalar0', '_mul_scalar:_mulscalar1']);
  const j = JSON.parse(s.tojson());
  assert.equal(j.nodes.find((n) => n.name === '_plusscalar0').attrs.scalar, '1');
  assert.equal(j.nodes.find((n) => n.name === '_mulscalar1').attrs.scalar, '-1.0');
  // aliases use their own lower-cased name as the hint, as MXNet's Python wrappers do
  assert.equal(sym.flatten(data).name, 'flatten0');
  assert.equal(sym.Flatten(data).name, 'flatten1');
  // a Prefix manager prepends to given and automatic names (Gluon's name scopes)
  mx.name.withNameManager(new mx.name.Prefix('net0_'), () => {
    assert.equal(sym.relu(data).name, 'net0_relu0');
    assert.equal(sym.relu(data, { name: 'fwd' }).name, 'net0_fwd');
  });
}));

test('auxiliary states come from the op (FMutateInputs), with versions and __init__ defaults', () => fresh(() => {
  const x = sym.var('x');
  const bn = sym.BatchNorm(x, { name: 'bn' });
  const bn2 = sym.BatchNorm(bn, { name: 'bn2', moving_mean: sym.var('bn_moving_mean') });
  assert.deepEqual(bn.listArguments(), ['x', 'bn_gamma', 'bn_beta']);
  assert.deepEqual(bn.listAuxiliaryStates(), ['bn_moving_mean', 'bn_moving_var']);
  assert.deepEqual(bn.listOutputs(), ['bn_output']); // one visible output of three
  const j = JSON.parse(bn.tojson());
  assert.deepEqual(j.nodes.at(-1).inputs, [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]);
  assert.deepEqual(j.node_row_ptr, [0, 1, 2, 3, 4, 5, 8]);
  assert.equal(j.nodes[3].attrs.__init__, '["zero", {}]');
  assert.equal(j.nodes[4].attrs.__init__, '["one", {}]');
  void bn2;
  // keyword inputs: weight given by name
  const w = sym.var('w');
  const fc = sym.FullyConnected(x, { weight: w, num_hidden: 3, no_bias: true, name: 'fc' });
  assert.deepEqual(fc.listArguments(), ['x', 'w']);
  assert.throws(() => sym.FullyConnected(x, { wieght: w, num_hidden: 3 }), /unknown input 'wieght'/);
}));

test('variables carry MXNet\'s hidden attributes', () => {
  const v = sym.var('w', { shape: [256, 0], dtype: 'float32', lr_mult: 1, wd_mult: 0.5, init: 'zeros' });
  assert.deepEqual(v.listAttr(), { __shape__: '(256, 0)', __dtype__: '0', __lr_mult__: '1.0', __wd_mult__: '0.5', __init__: 'zeros' });
  assert.equal(sym.var('b', { shape: [4] }).attr('__shape__'), '(4,)');
});

// symbol-json.md §14: the Gluon export of Dense(4, relu) + BatchNorm, reproduced through the
// Symbol API. The expected text is the spec's (its elided nodes follow the stated layout).
test('tojson writes MXNet 1.x\'s exact text (spec §14 example)', () => fresh(() => {
  const pv = (name, shape, init) => sym.var(name, { shape, dtype: 'float32', lr_mult: 1, wd_mult: 1, init, stype: 'default' });
  const P = 'hybridsequential0_';
  const data = sym.var('data');
  const fc = sym.FullyConnected(data, pv(`${P}dense0_weight`, [4, 0]), pv(`${P}dense0_bias`, [4], 'zeros'),
    { flatten: true, no_bias: false, num_hidden: 4, name: `${P}dense0_fwd` });
  const act = sym.Activation(fc, { act_type: 'relu', name: `${P}dense0_relu_fwd` });
  const out = sym.BatchNorm(act, pv(`${P}batchnorm0_gamma`, [0], 'ones'), pv(`${P}batchnorm0_beta`, [0], 'zeros'),
    pv(`${P}batchnorm0_running_mean`, [0], 'zeros'), pv(`${P}batchnorm0_running_var`, [0], 'ones'),
    { axis: 1, eps: 1e-5, fix_gamma: false, momentum: 0.9, use_global_stats: false, name: `${P}batchnorm0_fwd` });
  const varNode = (name, init, shape) => [
    '    {', '      "op": "null", ', `      "name": "${name}", `, '      "attrs": {', '        "__dtype__": "0", ',
    ...(init ? [`        "__init__": "${init}", `] : []), '        "__lr_mult__": "1.0", ', `        "__shape__": "${shape}", `,
    '        "__storage_type__": "0", ', '        "__wd_mult__": "1.0"', '      }, ', '      "inputs": []', '    }, '];
  const expected = [
    '{', '  "nodes": [',
    '    {', '      "op": "null", ', '      "name": "data", ', '      "inputs": []', '    }, ',
    ...varNode(`${P}dense0_weight`, null, '(4, 0)'),
    ...varNode(`${P}dense0_bias`, 'zeros', '(4,)'),
    '    {', '      "op": "FullyConnected", ', `      "name": "${P}dense0_fwd", `, '      "attrs": {',
    '        "flatten": "True", ', '        "no_bias": "False", ', '        "num_hidden": "4"', '      }, ',
    '      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]', '    }, ',
    '    {', '      "op": "Activation", ', `      "name": "${P}dense0_relu_fwd", `, '      "attrs": {"act_type": "relu"}, ',
    '      "inputs": [[3, 0, 0]]', '    }, ',
    ...varNode(`${P}batchnorm0_gamma`, 'ones', '(0,)'),
    ...varNode(`${P}batchnorm0_beta`, 'zeros', '(0,)'),
    ...varNode(`${P}batchnorm0_running_mean`, 'zeros', '(0,)'),
    ...varNode(`${P}batchnorm0_running_var`, 'ones', '(0,)'),
    '    {', '      "op": "BatchNorm", ', `      "name": "${P}batchnorm0_fwd", `, '      "attrs": {',
    '        "axis": "1", ', '        "eps": "1e-05", ', '        "fix_gamma": "False", ', '        "momentum": "0.9", ',
    '        "use_global_stats": "False"', '      }, ',
    '      "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0], [7, 0, 1], [8, 0, 1]]', '    }',
    '  ], ', '  "arg_nodes": [0, 1, 2, 5, 6, 7, 8], ', '  "node_row_ptr": [',
    '    0, ', '    1, ', '    2, ', '    3, ', '    4, ', '    5, ', '    6, ', '    7, ', '    8, ', '    9, ', '    12',
    '  ], ', '  "heads": [[9, 0, 0]], ', '  "attrs": {"mxnet_version": ["int", 10901]}', '}'].join('\n');
  assert.equal(out.tojson(), expected);
  assert.deepEqual(out.listAuxiliaryStates(), [`${P}batchnorm0_running_mean`, `${P}batchnorm0_running_var`]);
}));

test('Group, getInternals, get by name and index, multi-output ops', () => fresh(() => {
  const x = sym.var('x');
  const parts = sym.split(x, { num_outputs: 2, axis: 1, name: 'sp' });
  assert.deepEqual(parts.listOutputs(), ['sp_output0', 'sp_output1']);
  const g = sym.Group([sym.relu(parts.get(0), { name: 'a' }), sym.sigmoid(parts.get(1), { name: 'b' })]);
  assert.deepEqual(g.listOutputs(), ['a_output', 'b_output']);
  assert.equal(String(g), '<Symbol Grouped>');
  const j = JSON.parse(g.tojson());
  assert.deepEqual(j.heads, [[2, 0, 0], [3, 0, 0]]);
  assert.deepEqual(j.nodes[2].inputs, [[1, 0, 0]]);
  assert.deepEqual(j.nodes[3].inputs, [[1, 1, 0]]);
  const internals = g.getInternals();
  assert.deepEqual(internals.listOutputs(), ['x', 'sp_output0', 'sp_output1', 'a_output', 'b_output']);
  assert.equal(internals.get('sp_output1').listOutputs()[0], 'sp_output1');
  assert.throws(() => internals.get('nope'), /cannot find output nope/);
}));

test('inferShape / inferShapePartial / inferType', () => fresh(() => {
  const data = sym.var('data');
  const net = sym.FullyConnected(sym.Flatten(data), { num_hidden: 10, name: 'fc' });
  const [args, outs, aux] = net.inferShape({ data: [2, 3, 4] });
  assert.deepEqual(args, [[2, 3, 4], [10, 12], [10]]);
  assert.deepEqual(outs, [[2, 10]]);
  assert.deepEqual(aux, []);
  assert.deepEqual(net.inferShape({}), [null, null, null]);
  assert.deepEqual(net.inferShapePartial({})[1], [[]]); // MXNet: an unknown shape is ()
  const [argT, outT] = net.inferType({ data: 'float64' });
  assert.deepEqual(argT, ['float64', 'float64', 'float64']);
  assert.deepEqual(outT, ['float64']);
  const bad = sym.FullyConnected(data, sym.var('w', { shape: [10, 5] }), { num_hidden: 10, no_bias: true, name: 'fc2' });
  assert.throws(() => bad.inferShape({ data: [2, 7] }), (e) => e instanceof mx.MXNetError && /fc2/.test(e.message) && /'w'/.test(e.message));
  assert.throws(() => net.inferShape({ nosuch: [1] }), /no input of that name/);
}));

test('a Symbol graph runs through the executor like the eager ops', () => fresh(() => {
  const a = sym.var('a'), b = sym.var('b');
  const out = sym.broadcast_add(sym.dot(a, b), sym.var('c'));
  const op = new mx.CachedOp(out);
  assert.deepEqual(op.inputNames, ['a', 'b', 'c']);
  const A = nd.array([[1, 2], [3, 4]]), B = nd.array([[5, 6], [7, 8]]), C = nd.array([100, 200]);
  const [y] = op.forward([A, B, C]);
  assert.deepEqual(y.toArray(), [[119, 222], [143, 250]]);
  // new input shapes re-infer and re-plan
  const [y2] = op.forward([nd.array([[1, 1]]), B, C]);
  assert.deepEqual(y2.toArray(), [[112, 214]]);
  assert.throws(() => op.forward([A, B]), /3 inputs, 2 given/);
}));
