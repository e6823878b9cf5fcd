// MXNet's file formats through the JS API without any real file: .params fixtures of every
// record version (tests/js/fixtures.mjs writes them from ../shared/spec/params-format.md) and
// symbol JSON in every dialect (written here from ../shared/spec/symbol-json.md), checked against
// the spec's worked example byte for byte and hand-worked values. models.test.mjs does the same
// on real MXNet files when they are there.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { V2, V3, FLAG, legacy, v1, dense, rowSparse, csr, paramsFile } from './fixtures.mjs';

const { nd, sym, gluon } = mx;
const f32 = (...v) => new Float32Array(v);

// params-format.md §9, typed from the spec's listing.
const WORKED = Uint8Array.from([
  0x12, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
  0xc9, 0xfa, 0x93, 0xf9, 0, 0, 0, 0, 0x02, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
  0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40,
  0xc9, 0xfa, 0x93, 0xf9, 0, 0, 0, 0, 0x01, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0xbf,
  0x02, 0, 0, 0, 0, 0, 0, 0, 0x05, 0, 0, 0, 0, 0, 0, 0, 0x61, 0x72, 0x67, 0x3a, 0x77,
  0x05, 0, 0, 0, 0, 0, 0, 0, 0x61, 0x75, 0x78, 0x3a, 0x6d,
]);

test('params-format.md §9: the 158-byte worked example, written and read byte for byte', () => {
  assert.equal(WORKED.length, 158);
  const w = [[1, 2], [3, 4]], m = [0.5, 0, -1];
  assert.deepEqual(paramsFile([dense(V2, [2, 2], 0, f32(...w.flat())), dense(V2, [3], 0, f32(...m))], ['arg:w', 'aux:m']), WORKED);
  assert.deepEqual(nd.saveBytes({ 'arg:w': nd.array(w), 'aux:m': nd.array(m) }), WORKED);
  // the list form ends at 0x7c with a zero name count: 132 bytes
  const list = nd.saveBytes([nd.array(w), nd.array(m)]);
  assert.equal(list.length, 132);
  assert.deepEqual(list.subarray(0, 124), WORKED.subarray(0, 124));
  assert.deepEqual(Array.from(list.subarray(124)), [0, 0, 0, 0, 0, 0, 0, 0]);
  // read back, and the np-mode copy (only the two magics differ) reads the same
  const v3 = WORKED.slice();
  v3[0x18] = v3[0x50] = 0xca;
  for (const bytes of [WORKED, v3]) {
    const d = nd.loadBytes(bytes);
    assert.deepEqual(Object.keys(d), ['arg:w', 'aux:m']);
    assert.deepEqual(d['arg:w'].toArray(), w);
    assert.deepEqual(d['aux:m'].toArray(), m);
  }
  const l = nd.loadBytes(list);
  assert.ok(Array.isArray(l));
  assert.deepEqual(l.map((a) => a.toArray()), [w, m]);
});

test('legacy (V0, u32 dims, no magic) unnamed list loads as an array', () => {
  const bytes = paramsFile([
    legacy([2, 3], FLAG.float32, f32(0, 1, 2, 3, 4, 5)),
    legacy([4], FLAG.int32, new Int32Array([-1, 0, 7, 65536])),
    legacy([1, 1, 2], FLAG.float64, new Float64Array([0.25, -3])),
  ]);
  assert.equal(bytes.length, 160); // 24 + 48 + 36 + 44 + 8, worked by hand
  assert.deepEqual(Array.from(bytes.subarray(24, 36)), [2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
  const l = nd.loadBytes(bytes);
  assert.ok(Array.isArray(l) && l.length === 3);
  assert.deepEqual(l.map((a) => a.dtype), ['float32', 'int32', 'float64']);
  assert.deepEqual(l[0].toArray(), [[0, 1, 2], [3, 4, 5]]);
  assert.deepEqual(l[1].toArray(), [-1, 0, 7, 65536]);
  assert.deepEqual(l[2].shape, [1, 1, 2]);
  assert.deepEqual(l[2].toArray(), [[[0.25, -3]]]);
});

test('V1 named file (arbitrary order, a none record), V2 in every dtype, V3 0-d scalars', () => {
  const v1file = paramsFile([v1([1], 0, f32(0.25)), v1([1, 2], 0, f32(0.5, 2)), v1(null)], ['arg:fc1_bias', 'arg:fc1_weight', 'x']);
  assert.equal(v1file.length, 167);
  const d = nd.loadBytes(v1file);
  assert.deepEqual(d['arg:fc1_weight'].toArray(), [[0.5, 2]]);
  assert.deepEqual(d['arg:fc1_bias'].toArray(), [0.25]);
  assert.equal(d.x, null);

  const cases = [
    ['float64', new Float64Array([1.5, -2]), [1.5, -2]],
    ['float16', new Uint16Array([0x3c00, 0xc000, 0x3800]), [1, -2, 0.5]],
    ['uint8', new Uint8Array([0, 255]), [0, 255]],
    ['int32', new Int32Array([-7, 1 << 30]), [-7, 1 << 30]],
    ['int8', new Int8Array([-128, 127]), [-128, 127]],
    ['int64', new BigInt64Array([-(2n ** 40n), 3n]), [-(2 ** 40), 3]],
    ['bool', new Uint8Array([1, 0, 1]), [1, 0, 1]],
    ['bfloat16', new Uint16Array([0x3f80, 0xc040]), [1, -3]],
  ];
  const l = nd.loadBytes(paramsFile([...cases.map(([t, data]) => dense(V2, [data.length], FLAG[t], data)), dense(V2, [0, 3], 0, f32()), dense(V2, [])]));
  cases.forEach(([t, , want], i) => {
    assert.equal(l[i].dtype, t);
    assert.deepEqual(l[i].toArray().map(Number), want, t);
  });
  assert.deepEqual(l[cases.length].shape, [0, 3]);
  assert.equal(l[cases.length + 1], null, 'a V2 record with ndim 0 is none');

  const np = nd.loadBytes(paramsFile([dense(V3, [], 0, f32(42)), dense(V3, null), dense(V3, [2], 0, f32(-1, 8))], ['s', 'none', 'v']));
  assert.deepEqual(np.s.shape, []);
  assert.equal(np.s.item(), 42);
  assert.equal(np.none, null);
  assert.deepEqual(np.v.toArray(), [-1, 8]);
});

test('sparse records (row_sparse, csr) are densified', () => {
  const [r, c] = nd.loadBytes(paramsFile([rowSparse(4, 2, [1, 3], [1, 2, 3, 4]), csr(2, 3, [0, 1, 3], [1, 0, 2], [5, 7, 9])]));
  assert.deepEqual(r.toArray(), [[0, 0], [1, 2], [0, 0], [3, 4]]);
  assert.deepEqual(c.toArray(), [[0, 5, 0], [7, 0, 9]]);
  assert.throws(() => nd.loadBytes(paramsFile([csr(2, 3, [0, 1, 3], [1, 0, 3], [5, 7, 9])])), mx.MXNetError);
});

test('truncated fixtures of every version fail with MXNetError naming the offset', () => {
  const bytes = paramsFile([legacy([1, 2], 0, f32(1, 2)), v1([2, 1], 0, f32(1, 2)), dense(V2, [2, 1], 0, f32(1, 2)),
    dense(V3, [2, 1], 0, f32(1, 2)), rowSparse(2, 2, [1], [3, 4]), csr(2, 2, [0, 0, 1], [1], [5])], ['a', 'b', 'c', 'd', 'e', 'f']);
  const all = nd.loadBytes(bytes);
  assert.deepEqual(Object.values(all).map((a) => a.toArray().flat()), [[1, 2], [1, 2], [1, 2], [1, 2], [0, 0, 3, 4], [0, 0, 0, 5]]);
  for (let cut = 0; cut < bytes.length; cut += 5) {
    assert.throws(() => nd.loadBytes(bytes.subarray(0, cut)), (e) => e instanceof mx.MXNetError && /truncated|corrupt|not an MXNet/.test(e.message), `cut ${cut}`);
  }
  assert.throws(() => nd.loadBytes(bytes.subarray(0, 60)), /array 1 of 6.*offset \d+/);
});

// ---- symbol JSON dialects, then whole models: JSON + params of the same era -------------------------
// MXNet <= 0.8: `param` dicts, backward_source_id, 2-element entries, no node_row_ptr or version,
// BatchNorm without its aux inputs, hidden keys in `attr`, argmax axis -1, PReLU gamma without init.
const P08 = (op, name, param, inputs, attr) => ({ op, param, name, inputs, backward_source_id: -1, ...(attr ? { attr } : {}) });
const GRAPH_08 = JSON.stringify({
  nodes: [
    P08('null', 'data', {}, []), P08('null', 'fc1_weight', {}, []), P08('null', 'fc1_bias', {}, []),
    P08('FullyConnected', 'fc1', { no_bias: 'False', num_hidden: '3' }, [[0, 0], [1, 0], [2, 0]], { ctx_group: 'stage1', weight_lr_mult: '1.2' }),
    P08('null', 'bn_gamma', {}, []), P08('null', 'bn_beta', {}, []),
    P08('BatchNorm', 'bn', { eps: '0.001', fix_gamma: 'True', momentum: '0.9' }, [[3, 0], [4, 0], [5, 0]], { lr_mult: '0.5' }),
    P08('null', 'act_gamma', {}, []),
    P08('LeakyReLU', 'act', { act_type: 'prelu' }, [[6, 0], [7, 0]]),
    P08('argmax', 'am', { axis: '-1' }, [[8, 0]]),
  ],
  arg_nodes: [0, 1, 2, 4, 5, 7],
  heads: [[8, 0], [9, 0]],
}, null, 2);

test('0.8-era JSON (param, backward_source_id, 2-element entries) gets every legacy upgrade', () => {
  const s = sym.fromJSON(GRAPH_08);
  assert.deepEqual(s.listArguments(), ['data', 'fc1_weight', 'fc1_bias', 'bn_gamma', 'bn_beta', 'act_gamma']);
  assert.deepEqual(s.listAuxiliaryStates(), ['bn_moving_mean', 'bn_moving_var']);
  const j = JSON.parse(s.tojson());
  const node = (n) => j.nodes.find((x) => x.name === n);
  assert.equal(node('fc1_weight').attrs.__lr_mult__, '1.2');
  assert.equal(node('fc1').attrs.__ctx_group__, 'stage1');
  assert.ok(!('weight_lr_mult' in node('fc1').attrs));
  assert.equal(node('bn').attrs.__lr_mult__, '0.5');
  assert.equal(node('bn_moving_mean').attrs.__init__, '["zero", {}]');
  assert.equal(node('bn_moving_var').attrs.__init__, '["one", {}]');
  assert.equal(node('act_gamma').attrs.__init__, '["Constant", {"value": 0.25}]');
  assert.equal(node('am').attrs, undefined, 'argmax axis -1 (= no axis) is dropped');
  assert.deepEqual(node('bn').inputs, [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 1], [7, 0, 1]]);
  assert.deepEqual(j.attrs, { mxnet_version: ['int', 10901] });
  assert.equal(sym.fromJSON(s.tojson()).tojson(), s.tojson());
});

test('a 0.8-era model (param JSON + legacy params with arg:/aux: names) imports and runs: hand-worked outputs', async () => {
  const params = paramsFile([
    legacy([3, 2], 0, f32(1, 0, 0, 1, -1, -1)), legacy([3], 0, f32(0, 0, 0.5)), legacy([3], 0, f32(7, 7, 7)),
    legacy([3], 0, f32(0, 0, 0)), legacy([3], 0, f32(0, 0, 0)), legacy([3], 0, f32(1, 1, 1)), legacy([1], 0, f32(0.25)),
  ], ['arg:fc1_weight', 'arg:fc1_bias', 'arg:bn_gamma', 'arg:bn_beta', 'aux:bn_moving_mean', 'aux:bn_moving_var', 'arg:act_gamma']);
  const net = await gluon.SymbolBlock.imports(new TextEncoder().encode(GRAPH_08), ['data'], params);
  const [y, am] = net(nd.array([[1, 2]]));
  // fc1 = [1, 2, -2.5]; BatchNorm at inference, fix_gamma (the stored 7 is taken as 1), mean 0,
  // var 1, eps 1e-3; PReLU scales the negative entry by 0.25; argmax over everything is 1
  const k = 1 / Math.sqrt(1.001);
  const want = [1 * k, 2 * k, -2.5 * k * 0.25];
  y.toTypedArray().forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-6, `${v} vs ${want[i]}`));
  assert.equal(am.item(), 1);
});

// MXNet 0.9-0.11 checkpoint: `attr` dicts, mxnet_version 1100, a loss head with its label.
const GRAPH_ATTR = '{"nodes": [{"op": "null", "name": "data", "inputs": []}, '
  + '{"op": "null", "name": "fc1_weight", "attr": {"num_hidden": "1"}, "inputs": []}, '
  + '{"op": "null", "name": "fc1_bias", "attr": {"num_hidden": "1"}, "inputs": []}, '
  + '{"op": "FullyConnected", "name": "fc1", "attr": {"num_hidden": "1"}, "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}, '
  + '{"op": "null", "name": "lin_reg_label", "inputs": []}, '
  + '{"op": "LinearRegressionOutput", "name": "lin_reg", "inputs": [[3, 0, 0], [4, 0, 0]]}], '
  + '"arg_nodes": [0, 1, 2, 4], "node_row_ptr": [0, 1, 2, 3, 4, 5, 6], "heads": [[5, 0, 0]], '
  + '"attrs": {"mxnet_version": ["int", 1100]}}';

test('an `attr`-dialect checkpoint with V1 params: the writer\'s exact text, the label stays unbound', async () => {
  // symbol-json.md §5, worked by hand: attr -> attrs, one-key maps inline, this writer's version
  const node = (lines) => `    {\n${lines.map((l) => `      ${l}`).join(', \n')}\n    }`;
  const want = `{\n  "nodes": [\n${[
    node(['"op": "null"', '"name": "data"', '"inputs": []']),
    node(['"op": "null"', '"name": "fc1_weight"', '"attrs": {"num_hidden": "1"}', '"inputs": []']),
    node(['"op": "null"', '"name": "fc1_bias"', '"attrs": {"num_hidden": "1"}', '"inputs": []']),
    node(['"op": "FullyConnected"', '"name": "fc1"', '"attrs": {"num_hidden": "1"}', '"inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]']),
    node(['"op": "null"', '"name": "lin_reg_label"', '"inputs": []']),
    node(['"op": "LinearRegressionOutput"', '"name": "lin_reg"', '"inputs": [[3, 0, 0], [4, 0, 0]]']),
  ].join(', \n')}\n  ], \n  "arg_nodes": [0, 1, 2, 4], \n  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6], \n  "heads": [[5, 0, 0]], \n`
    + '  "attrs": {"mxnet_version": ["int", 10901]}\n}';
  assert.equal(sym.fromJSON(GRAPH_ATTR).tojson(), want);
  const params = paramsFile([v1([1, 2], 0, f32(0.5, 2)), v1([1], 0, f32(0.25))], ['arg:fc1_weight', 'arg:fc1_bias']);
  const net = await gluon.SymbolBlock.imports(new TextEncoder().encode(GRAPH_ATTR), ['data'], params);
  assert.ok(!net.collectParams().has('lin_reg_label'));
  assert.equal(net(nd.array([[1, 2]])).item(), 4.75); // 0.5 + 4 + 0.25
});

test('`attrs` with and without mxnet_version, V2 and V3 params with aux: states; param merges without overwriting', async () => {
  const graph = (version) => JSON.stringify({
    nodes: [
      { op: 'null', name: 'data', inputs: [] }, { op: 'null', name: 'bn_gamma', inputs: [] }, { op: 'null', name: 'bn_beta', inputs: [] },
      { op: 'null', name: 'bn_moving_mean', inputs: [] }, { op: 'null', name: 'bn_moving_var', inputs: [] },
      { op: 'BatchNorm', name: 'bn', attrs: { eps: '0.01', fix_gamma: 'False' }, inputs: [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]] },
      { op: 'Activation', name: 'a', attrs: { act_type: 'relu' }, param: { act_type: 'tanh' }, inputs: [[5, 0, 0]] },
    ],
    arg_nodes: [0, 1, 2, 3, 4],
    heads: [[6, 0, 0]],
    ...(version ? { attrs: { mxnet_version: ['int', version] } } : {}),
  });
  for (const version of [0, 10500]) {
    const s = sym.fromJSON(graph(version));
    assert.deepEqual(s.listAuxiliaryStates(), ['bn_moving_mean', 'bn_moving_var']);
    const mean = JSON.parse(s.tojson()).nodes.find((n) => n.name === 'bn_moving_mean');
    // no version = 0.8: the 0.9.4 upgrade gives the aux states their initializers
    assert.deepEqual(mean.attrs, version ? undefined : { __init__: '["zero", {}]' });
    for (const magic of [V2, V3]) {
      const params = paramsFile([dense(magic, [2], 0, f32(2, 1)), dense(magic, [2], 0, f32(0.5, 0)), dense(magic, [2], 0, f32(1, -1)),
        dense(magic, [2], 0, f32(4, 0.99))], ['arg:bn_gamma', 'arg:bn_beta', 'aux:bn_moving_mean', 'aux:bn_moving_var']);
      const net = await gluon.SymbolBlock.imports(new TextEncoder().encode(graph(version)), ['data'], params);
      // relu(gamma * (x - mean) / sqrt(var + eps) + beta): x [[3, -2]] -> [2*2/sqrt(4.01) + 0.5, relu(-1/1)]
      const y = net(nd.array([[3, -2]])).toTypedArray();
      assert.ok(Math.abs(y[0] - (4 / Math.sqrt(4.01) + 0.5)) < 1e-6, String(y[0]));
      assert.equal(y[1], 0);
    }
  }
});

test('float attributes are written as Python writes str(float) (symbol JSON): hand-worked reprs', () => {
  // Python 3: repr(0.1) == '0.1', repr(1e-4) == '0.0001', repr(1.5e-5) == '1.5e-05', repr(1/3) ==
  // '0.3333333333333333', repr(1e-7) == '1e-07', repr(5e-324) == '5e-324'; integral floats
  // are given by callers as "1.0" where MXNet's text has it
  const cases = [[0.1, '0.1'], [1e-4, '0.0001'], [1.5e-5, '1.5e-05'], [1 / 3, '0.3333333333333333'], [123456.789, '123456.789'],
    [-0.001, '-0.001'], [1e-7, '1e-07'], [5e-324, '5e-324'], [1500000000000000.25, '1500000000000000.2'], [-2.5e-300, '-2.5e-300'],
    [0.30000000000000004, '0.30000000000000004'], [9.999999999999999e-5, '9.999999999999999e-05']];
  for (const [v, want] of cases) {
    const json = JSON.parse(sym.LeakyReLU(sym.var('x'), { slope: v, name: 'a' }).tojson());
    assert.equal(json.nodes.find((n) => n.name === 'a').attrs.slope, want, `slope ${v}`);
  }
});
