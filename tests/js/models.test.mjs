// Real files written by MXNet 0.8-1.5 ($MXW_MODELS, default ../shared/models, used in place;
// these tests are reported as skipped when the folder is absent, and formats.test.mjs covers
// every format version without it): every one loads, the known results in models/README.md
// hold, forward passes agree with an independent TensorFlow.js reference runtime
// (tests/js/tf_graph.mjs), round trips are exact, and bad files fail cleanly.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';
import { readParams, runGraph } from './tf_graph.mjs';
import { REAL_FILES_SKIP, model } from './fixtures.mjs';

const { nd, sym, gluon } = mx;
const m = model;
const RF = { skip: REAL_FILES_SKIP };

test('symbol-only files load and infer shapes (resnet18_v1: (1,3,224,224) -> (1,1000))', RF, async () => {
  const resnet = await sym.load(m('zoo-symbols/resnet18_v1-symbol.json'));
  const [args, outs, aux] = resnet.inferShape({ data: [1, 3, 224, 224] });
  assert.deepEqual(outs, [[1, 1000]]);
  assert.equal(args[0].join(), '1,3,224,224');
  assert.ok(aux.length > 0 && aux.every((s) => s && s.length === 1), 'BatchNorm aux states are (C,)');
  assert.ok(resnet.listAuxiliaryStates().every((n) => /running_(mean|var)$/.test(n)));
  const squeeze = await sym.load(m('zoo-symbols/squeezenet1.0-symbol.json'));
  assert.deepEqual(squeeze.inferShape({ data: [1, 3, 224, 224] })[1], [[1, 1000]]);
  const mlp = await sym.load(m('zoo-symbols/mlp-symbol.json'));
  assert.ok(mlp.listArguments().includes('data'));
  const vgg = await sym.load(m('mxnet-fixtures/test_mkldnn_test_mkldnn_model_model1.json'));
  const [, vout] = vgg.inferShape({ data: [32, 3, 300, 300] });
  assert.equal(vout[0][0], 32);
  const clj = await sym.load(m('mxnet-fixtures/clojure-test-symbol.json'));
  assert.ok(clj.listArguments().length > 1);
});

test('save_000800.json (MXNet 0.8) loads with its BatchNorm aux states added', RF, async () => {
  const s = await sym.load(m('mxnet-fixtures/save_000800.json'));
  const aux = s.listAuxiliaryStates();
  assert.equal(aux.length, 2);
  assert.ok(aux[0].endsWith('_moving_mean') && aux[1].endsWith('_moving_var'), aux.join());
  const [, outs] = s.inferShape({ data: [1, 200] });
  assert.equal(outs[0][0], 1);
  // hidden keys of the 0.8 format are moved to __key__ form; __init__ defaults added (0.9.4)
  const json = JSON.parse(s.tojson());
  const mean = json.nodes.find((n) => n.name === aux[0]);
  assert.equal(mean.attrs.__init__, '["zero", {}]');
  assert.ok(!json.nodes.some((n) => n.op !== 'null' && n.attrs && ('lr_mult' in n.attrs || 'wd_mult' in n.attrs || 'ctx_group' in n.attrs)));
});

test('linreg-v1 (MXNet 0.11, V1 params): data [[1,2]] gives exactly 4.9999918937683105', RF, async () => {
  const net = await gluon.SymbolBlock.imports(m('linreg-v1/model-symbol.json'), ['data'], m('linreg-v1/model-0000.params'));
  assert.ok(!net.collectParams().has('lin_reg_label'), 'the label variable stays unbound');
  const y = net(nd.array([[1, 2]]));
  assert.equal(y.toTypedArray()[0], 4.9999918937683105);
});

test('mnist-mlp-module (MXNet 1.4): every row of 07.csv is classified 7', RF, async () => {
  const net = await gluon.SymbolBlock.imports(m('mnist-mlp-module/model-symbol.json'), 'data', m('mnist-mlp-module/model-0000.params'));
  const rows = readFileSync(m('mnist-mlp-module/07.csv'), 'utf8').trim().split('\n').map((l) => l.split(',').map(Number));
  const x = nd.array(rows).reshape([rows.length, 1, 28, 28]);
  const y = net(x);
  assert.deepEqual(y.shape, [rows.length, 10]);
  assert.deepEqual(nd.argmax(y, { axis: 1 }).toArray(), new Array(rows.length).fill(7));
});

test('legacy_ndarray.v0: an unnamed list of six arrays equal to 0..127', RF, async () => {
  const arrays = await nd.load(m('mxnet-fixtures/legacy_ndarray.v0'));
  assert.ok(Array.isArray(arrays));
  assert.equal(arrays.length, 6);
  const want = Array.from({ length: 128 }, (_, i) => i);
  for (const a of arrays) assert.deepEqual(Array.from(a.toTypedArray()), want);
});

// ---- forward passes against the TensorFlow.js reference runtime -------------------------------------
async function compare(symFile, paramFile, inputShape, lo, hi, seed) {
  const json = readFileSync(m(symFile), 'utf8');
  const params = readParams(readFileSync(m(paramFile)));
  const n = inputShape.reduce((a, b) => a * b, 1);
  const data = rng(seed).uniform(n, lo, hi);
  const net = await gluon.SymbolBlock.imports(m(symFile), ['data'], m(paramFile));
  let outs = net(nd.array(data, { shape: inputShape }));
  if (!Array.isArray(outs)) outs = [outs];
  const ref = runGraph(json, params, { data: { shape: inputShape, data } });
  assert.equal(outs.length, ref.length);
  outs.forEach((o, i) => {
    const r = ref[i];
    const scale = r.reduce((mx_, v) => Math.max(mx_, Math.abs(v)), 0);
    assertClose(o.toTypedArray(), r, { rtol: 1e-4, atol: 1e-4 * scale + 1e-7, msg: `${symFile} output ${i}` });
  });
  return outs;
}

test('lenet-gluon (MXNet 1.4.1 Gluon export) agrees with the reference', RF, async () => {
  const [y] = await compare('lenet-gluon/lenet-symbol.json', 'lenet-gluon/lenet-0001.params', [2, 1, 28, 28], 0, 1, 11);
  assert.deepEqual(y.shape, [2, 10]);
});

test('mtcnn det1-det3 (MXNet 0.8, legacy params, PReLU, full pooling) agree with the reference', RF, async () => {
  // MTCNN's input normalization: (x - 127.5) * 0.0078125 of RGB in 0..255 -> [-1, 1)
  await compare('mtcnn-legacy/det1-symbol.json', 'mtcnn-legacy/det1-0001.params', [1, 3, 37, 53], -1, 1, 21);
  await compare('mtcnn-legacy/det2-symbol.json', 'mtcnn-legacy/det2-0001.params', [2, 3, 24, 24], -1, 1, 22);
  await compare('mtcnn-legacy/det3-symbol.json', 'mtcnn-legacy/det3-0001.params', [2, 3, 48, 48], -1, 1, 23);
});

test('retinaface-mnet25 (MXNet 1.5, BatchNorm aux, depthwise conv, UpSampling, Crop) agrees with the reference', RF, async () => {
  const outs = await compare('retinaface-mnet25/16-symbol.json', 'retinaface-mnet25/16-0000.params', [1, 3, 96, 128], 0, 255, 31);
  assert.equal(outs.length, 2);
});

// ---- round trips -----------------------------------------------------------------------------------------
test('JSON round trip: load, tojson, load again gives identical text; MXNet 1.4 files are reproduced byte for byte', RF, async () => {
  for (const f of ['lenet-gluon/lenet-symbol.json', 'mnist-mlp-module/model-symbol.json', 'retinaface-mnet25/16-symbol.json',
    'zoo-symbols/resnet18_v1-symbol.json', 'mxnet-fixtures/clojure-test-symbol.json', 'linreg-v1/model-symbol.json',
    'mtcnn-legacy/det3-symbol.json', 'mxnet-fixtures/save_000800.json']) {
    const text = readFileSync(m(f), 'utf8');
    const once = sym.fromJSON(text).tojson();
    assert.equal(sym.fromJSON(once).tojson(), once, f);
    if (!/"attr":|"param":/.test(text) && / \n/.test(text) && !/Pooling/.test(text)) {
      // written by MXNet >= 1.0's JSON writer: the same bytes but for our mxnet_version
      assert.equal(once, text.replace(/"mxnet_version": \["int", \d+\]/, '"mxnet_version": ["int", 10901]'), f);
    }
  }
});

test('params round trip: real files re-written and re-read are bit-identical', RF, async () => {
  const loaded = await nd.load(m('retinaface-mnet25/16-0000.params'));
  const bytes = nd.saveBytes(loaded);
  const again = nd.loadBytes(bytes);
  assert.deepEqual(Object.keys(again), Object.keys(loaded));
  for (const k of Object.keys(loaded)) {
    assert.deepEqual(new Uint8Array(again[k].toTypedArray().buffer), new Uint8Array(loaded[k].toTypedArray().buffer), k);
  }
  assert.deepEqual(nd.saveBytes(again), bytes);
});

test('every dtype and the list form survive nd.save/nd.load', () => {
  const r = rng(5).uniform(24, -100, 100);
  for (const dtype of ['float32', 'float64', 'float16', 'uint8', 'int32', 'int8', 'int64', 'bool', 'bfloat16']) {
    const a = nd.array(r, { shape: [2, 3, 4], dtype });
    const back = nd.loadBytes(nd.saveBytes({ x: a })).x;
    assert.equal(back.dtype, dtype);
    assert.deepEqual(back.shape, [2, 3, 4]);
    assert.deepEqual(back.toArray(), a.toArray(), dtype);
  }
  const list = nd.loadBytes(nd.saveBytes([nd.array([1, 2]), nd.array([3])]));
  assert.ok(Array.isArray(list));
  assert.deepEqual(list.map((x) => x.toArray()), [[1, 2], [3]]);
});

// ---- bad files ---------------------------------------------------------------------------------------------
test('a graph with unknown ops fails at load, listing every unsupported op and its nodes; runtime stays usable', RF, async () => {
  const g = JSON.parse(readFileSync(m('lenet-gluon/lenet-symbol.json'), 'utf8'));
  g.nodes.find((n) => n.name === 'hybridsequential0_conv0_fwd').op = 'FancyConv';
  g.nodes.find((n) => n.name === 'hybridsequential0_conv1_fwd').op = 'FancyConv';
  g.nodes.find((n) => n.name === 'hybridsequential0_pool0_fwd').op = 'MagicPool';
  assert.throws(() => sym.fromJSON(JSON.stringify(g)), (e) => e instanceof mx.MXNetError
    && /FancyConv \(nodes hybridsequential0_conv0_fwd, hybridsequential0_conv1_fwd\)/.test(e.message)
    && /MagicPool \(node hybridsequential0_pool0_fwd\)/.test(e.message));
  const params = readFileSync(m('lenet-gluon/lenet-0001.params'));
  await assert.rejects(gluon.SymbolBlock.imports(m('lenet-gluon/lenet-symbol.json'), ['data'], params.subarray(0, params.length - 1000)),
    (e) => e instanceof mx.MXNetError && /array \d+ of \d+/.test(e.message) && /offset \d+/.test(e.message));
  await assert.rejects(sym.load(new TextEncoder().encode('{"nodes": [')), /invalid symbol JSON/);
  const net = await gluon.SymbolBlock.imports(m('lenet-gluon/lenet-symbol.json'), ['data'], params);
  assert.deepEqual(net(nd.zeros([1, 1, 28, 28])).shape, [1, 10]);
});

test('a parameter whose shape disagrees with the graph is named in the error', RF, async () => {
  const loaded = await nd.load(m('linreg-v1/model-0000.params'));
  loaded['arg:fc1_weight'] = nd.array([[1, 2, 3]]);
  const net = await gluon.SymbolBlock.imports(m('linreg-v1/model-symbol.json'), ['data'], nd.saveBytes(loaded));
  assert.throws(() => net(nd.array([[1, 2]])), (e) => e instanceof mx.MXNetError && /fc1_weight/.test(e.message));
  assert.throws(() => net(nd.array([[1, 2]])), /fc1_weight/);
});

test('missing and extra parameters: MXNet\'s errors, and allowMissing / ignoreExtra', RF, async () => {
  const loaded = await nd.load(m('linreg-v1/model-0000.params'));
  const onlyW = nd.saveBytes({ 'arg:fc1_weight': loaded['arg:fc1_weight'] });
  await assert.rejects(gluon.SymbolBlock.imports(m('linreg-v1/model-symbol.json'), ['data'], onlyW), /fc1_bias' is missing/);
  const net = await gluon.SymbolBlock.imports(m('linreg-v1/model-symbol.json'), ['data'], onlyW, { allowMissing: true });
  assert.ok(net.collectParams().has('fc1_bias'));
  const extra = nd.saveBytes({ ...loaded, 'arg:zzz': nd.array([1]) });
  await assert.rejects(gluon.SymbolBlock.imports(m('linreg-v1/model-symbol.json'), ['data'], extra), /zzz/);
  const ok = await gluon.SymbolBlock.imports(m('linreg-v1/model-symbol.json'), ['data'], extra, { ignoreExtra: true });
  assert.equal(ok(nd.array([[1, 2]])).toTypedArray()[0], 4.9999918937683105);
  // names without the arg:/aux: prefixes match too
  const plain = nd.saveBytes({ fc1_weight: loaded['arg:fc1_weight'], fc1_bias: loaded['arg:fc1_bias'] });
  const net2 = await gluon.SymbolBlock.imports(m('linreg-v1/model-symbol.json'), ['data'], plain);
  assert.equal(net2(nd.array([[1, 2]])).toTypedArray()[0], 4.9999918937683105);
});

test('sources: path, file URL, ArrayBuffer, typed array, Blob and Response all load', RF, async () => {
  const symText = readFileSync(m('linreg-v1/model-symbol.json'));
  const params = readFileSync(m('linreg-v1/model-0000.params'));
  const sources = [
    [m('linreg-v1/model-symbol.json'), m('linreg-v1/model-0000.params')],
    [new URL(`file://${m('linreg-v1/model-symbol.json')}`), new URL(`file://${m('linreg-v1/model-0000.params')}`)],
    [symText.buffer.slice(symText.byteOffset, symText.byteOffset + symText.length), params.buffer.slice(params.byteOffset, params.byteOffset + params.length)],
    [new Uint8Array(symText), new Uint8Array(params)],
    [new Blob([symText]), new Blob([params])],
    [new Response(symText), new Response(params)],
  ];
  for (const [s, p] of sources) {
    const net = await gluon.SymbolBlock.imports(s, ['data'], p);
    assert.equal(net(nd.array([[1, 2]])).toTypedArray()[0], 4.9999918937683105);
  }
});

test('a SymbolBlock called with a Symbol composes a copy of its graph onto that input', RF, async () => {
  const net = await gluon.SymbolBlock.imports(m('lenet-gluon/lenet-symbol.json'), ['data'], m('lenet-gluon/lenet-0001.params'));
  const x = sym.var('image');
  const g = net(sym.Activation(x, { act_type: 'sigmoid', name: 'pre' }));
  assert.deepEqual(g.listArguments().slice(0, 2), ['image', 'hybridsequential0_conv0_weight']);
  assert.deepEqual(g.inferShape({ image: [3, 1, 28, 28] })[1], [[3, 10]]);
  const nodes = JSON.parse(g.tojson()).nodes;
  assert.deepEqual(nodes.slice(0, 2).map((n) => n.name), ['image', 'pre']);
  assert.deepEqual(nodes.find((n) => n.name === 'hybridsequential0_conv0_fwd').inputs[0], [1, 0, 0], 'the first convolution now reads the new input');
  // the original graph is unchanged
  assert.equal(net(nd.zeros([1, 1, 28, 28])).shape.join(), '1,10');
  assert.equal(g.save(), g.tojson()); // no file given: the text only
});
