// gluon.model_zoo.vision: MXNet's names, graphs and files.
// - every model of get_model's table has MXNet 1.9.1's parameter names (prefix included) and
//   shapes, in collect_params order: tests/js/fixtures/model_zoo_params.json, derived by hand from
//   MXNet's Python source by the script in its "_source" (no code of this project runs there);
// - resnet18_v1 and squeezenet1.0 export the -symbol.json MXNet 1.5 wrote
//   (../shared/models/zoo-symbols; skipped when the folder is absent);
// - pretrained: true reads <root>/<MXNet's file name> (directory, file path, file: URL), with
//   files written in MXNet's model-store format by the test's own writer (fixtures.mjs);
// - constructors take Python's arguments (positional, snake_case or camelCase options);
// - gluon.contrib.nn's HybridConcurrent / Concurrent / Identity against hand-worked values.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as mx from 'mxnet-wasm';
import { REAL_FILES_SKIP, model, paramsFile, dense, V2, FLAG, ROOT } from './fixtures.mjs';

const { nd, gluon } = mx;
const { vision, model_store: store } = gluon.model_zoo;
const FIXTURE = JSON.parse(readFileSync(path.join(ROOT, 'tests/js/fixtures/model_zoo_params.json'), 'utf8'));
const NAMES = Object.keys(FIXTURE).filter((k) => !k.startsWith('_'));
// (each holds a model's files, ~230 MB: removed when the file's tests end; 1,010 left behind by
// earlier runs had filled the disk)
const tmpDirs = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'mxw-zoo-'));
  tmpDirs.push(d);
  return d;
};
test.after(() => { for (const d of tmpDirs) rmSync(d, { recursive: true, force: true }); });

// Builds inside a fresh name manager, as in a fresh Python process (top prefix '<hint>0_').
function fresh(fn) {
  let out;
  mx.name.withNameManager(new mx.name.NameManager(), () => { out = fn(); });
  return out;
}
const inputSize = (name) => (name === 'inceptionv3' ? 299 : 224);
// "<name without prefix> <shape>" per parameter, in collect_params order
const listParams = (net) => [...net.collectParams().values()].map((p) => `${p.name.slice(net.prefix.length)} ${p.shape.join(',')}`);

test('the fixture covers get_model\'s whole table (34 models), and its source script is there', () => {
  assert.deepEqual([...NAMES].sort(), [...vision.modelNames].sort());
  assert.equal(NAMES.length, 34);
  assert.ok(FIXTURE._source.some((l) => l.includes('def resnet(')), 'the derivation script is recorded in _source');
});

test('every architecture: MXNet 1.9.1\'s parameter names, prefixes and shapes (shape inference at 224, inceptionv3 299)', () => {
  for (const name of NAMES) {
    const net = fresh(() => vision.get_model(name));
    const s = inputSize(name);
    const x = nd.zeros([1, 3, s, s]);
    net.inferShape(x);
    assert.equal(net.prefix, FIXTURE[name].prefix, `${name}: prefix`);
    assert.deepEqual(listParams(net), FIXTURE[name].params, `${name}: parameters`);
    x.dispose();
    net.dispose();
  }
});

test('structural names (save_parameters) follow the attribute names of MXNet\'s blocks', () => {
  const r = fresh(() => vision.resnet18_v1());
  const keys = [...r._collectParamsWithPrefix().keys()];
  // resnet.py: features[0] conv, [1] BN, stage blocks at 4..7 with body / downsample, output Dense
  assert.equal(keys[0], 'features.0.weight');
  assert.ok(keys.includes('features.1.running_var'));
  assert.ok(keys.includes('features.5.0.downsample.0.weight'), 'stage2 block0 downsample conv');
  assert.ok(keys.includes('features.4.1.body.4.gamma'), 'stage1 block1 second BN');
  assert.deepEqual(keys.slice(-2), ['output.weight', 'output.bias']);
  const m = fresh(() => vision.mobilenet_v2_0_25());
  const mk = [...m._collectParamsWithPrefix().keys()];
  assert.ok(mk.includes('features.3.out.3.weight'), 'LinearBottleneck.out holds the convs');
  assert.equal(mk[mk.length - 1], 'output.0.weight');
  const b = fresh(() => vision.resnet18_v2());
  assert.ok([...b._collectParamsWithPrefix().keys()].includes('features.6.0.downsample.weight'), 'V2 downsample is a Conv2D');
  for (const n of [r, m, b]) n.dispose();
});

// ---- export against MXNet's own files ------------------------------------------------------------
const RF = { skip: REAL_FILES_SKIP };
const parse = (file) => JSON.parse(readFileSync(file, 'utf8'));

// Writes net's parameters in MXNet's model-store format (prefix-stripped names, V2 records) under
// the file name MXNet gives `name`, with the test's own writer; returns the directory.
function modelStoreDir(name, net) {
  const dir = tmp();
  const names = [], records = [];
  for (const p of net.collectParams().values()) {
    names.push(p.name.slice(net.prefix.length));
    records.push(dense(V2, p.shape, FLAG.float32, p.data().toTypedArray()));
  }
  writeFileSync(path.join(dir, `${name}-${store.short_hash(name)}.params`), paramsFile(records, names));
  return dir;
}
// MXNet's flow: vision.<model>(pretrained=True) -> hybridize() -> net(x) -> export(path)
async function exportLikeMxnet(name, ctor) {
  const src = ctor();
  src.initialize();
  const x = nd.zeros([1, 3, 224, 224]);
  src.inferShape(x);
  for (const p of src.collectParams().values()) p._finishDeferredInit();
  const dir = modelStoreDir(name, src);
  src.dispose();
  const warn = console.warn;
  console.warn = () => {}; // the test's file is not MXNet's: the SHA-1 mismatch warning is expected
  let net;
  try {
    net = await fresh(() => ctor({ pretrained: true, root: dir }));
  } finally {
    console.warn = warn;
  }
  net.hybridize();
  net(x).dispose();
  const [symFile] = net.export(path.join(dir, name));
  net.dispose();
  x.dispose();
  return parse(symFile);
}

// The differences from MXNet 1.5's files that are allowed, each explained:
// - graph attrs: mxnet_version is 10901 (the version these files claim to be) instead of 10500;
//   no node attribute is added or changed by 1.9.1 for these graphs;
// - node_row_ptr: MXNet 1.5's export came from an MKL-DNN build, whose max Pooling with
//   pooling_convention 'full' has a second (workspace) output (squeezenet's three pools); here
//   Pooling has one output, so the row pointer (derived from the output counts) differs there.
function compareGraphs(ours, ref, label) {
  assert.equal(ours.nodes.length, ref.nodes.length, `${label}: node count`);
  ours.nodes.forEach((n, i) => {
    const r = ref.nodes[i];
    assert.equal(n.name, r.name, `${label}: node ${i} name`);
    assert.equal(n.op, r.op, `${label}: node ${i} (${r.name}) op`);
    assert.deepEqual(n.inputs, r.inputs, `${label}: node ${i} (${r.name}) inputs`);
    assert.deepEqual(n.attrs ?? {}, r.attrs ?? {}, `${label}: node ${i} (${r.name}) attrs`);
  });
  assert.deepEqual(ours.arg_nodes, ref.arg_nodes, `${label}: arg_nodes`);
  assert.deepEqual(ours.heads, ref.heads, `${label}: heads`);
  assert.deepEqual(ref.attrs, { mxnet_version: ['int', 10500] });
  assert.deepEqual(ours.attrs, { mxnet_version: ['int', 10901] });
  const outputs = (g) => g.nodes.map((n, i) => g.node_row_ptr[i + 1] - g.node_row_ptr[i]);
  const refOut = outputs(ref), ourOut = outputs(ours);
  ref.nodes.forEach((n, i) => {
    const extra = n.op === 'Pooling' && n.attrs.pool_type === 'max' && n.attrs.pooling_convention === 'full' ? 1 : 0;
    assert.equal(ourOut[i], refOut[i] - extra, `${label}: outputs of node ${i} (${n.name})`);
  });
}

test('resnet18_v1: pretrained -> hybridize -> forward -> export gives MXNet\'s resnet18_v1-symbol.json', RF, async () => {
  const ours = await exportLikeMxnet('resnet18_v1', vision.resnet18_v1);
  compareGraphs(ours, parse(model('zoo-symbols/resnet18_v1-symbol.json')), 'resnet18_v1');
});

test('squeezenet1.0: pretrained -> hybridize -> forward -> export gives MXNet\'s squeezenet1.0-symbol.json', RF, async () => {
  const ours = await exportLikeMxnet('squeezenet1.0', vision.squeezenet1_0);
  compareGraphs(ours, parse(model('zoo-symbols/squeezenet1.0-symbol.json')), 'squeezenet1.0');
});

test('hybridized before its first forward, an export differs from MXNet\'s only in the deferred dims of __shape__', RF, () => {
  // As in MXNet 1.9.1: the graph is traced while in_channels are still unknown (0), and the
  // parameter variables keep the shape they had then.
  const dir = tmp();
  const net = fresh(() => vision.resnet18_v1());
  net.initialize();
  net.hybridize();
  const x = nd.zeros([1, 3, 224, 224]);
  net(x).dispose();
  const ours = parse(net.export(path.join(dir, 'r18'))[0]);
  const ref = parse(model('zoo-symbols/resnet18_v1-symbol.json'));
  let zeros = 0;
  ours.nodes.forEach((n, i) => {
    const r = ref.nodes[i];
    assert.equal(n.name, r.name);
    assert.deepEqual(n.inputs, r.inputs);
    const a = { ...(n.attrs ?? {}) }, b = { ...(r.attrs ?? {}) };
    if (a.__shape__ !== b.__shape__) {
      const dims = (s) => s.replace(/[(),]/g, ' ').trim().split(/\s+/).map(Number);
      const da = dims(a.__shape__), db = dims(b.__shape__);
      assert.equal(da.length, db.length, n.name);
      da.forEach((d, k) => assert.ok(d === db[k] || d === 0, `${n.name}: ${a.__shape__} vs ${b.__shape__}`));
      zeros++;
      delete a.__shape__;
      delete b.__shape__;
    }
    assert.deepEqual(a, b, `${n.name} attrs`);
  });
  assert.equal(zeros, 81, 'conv0 (in_channels) and the 80 BatchNorm parameters are deferred');
  net.dispose();
  x.dispose();
});

// ---- pretrained files -----------------------------------------------------------------------------
// Parameters named as MXNet's model-store files name them (the fixture's names), each filled with
// its own index, loaded through pretrained: true.
function writeFixtureFile(dir, name, fileName = `${name}-${store.short_hash(name)}.params`) {
  const names = [], records = [];
  FIXTURE[name].params.forEach((entry, i) => {
    const [pname, shape] = entry.split(' ');
    const dims = shape.split(',').map(Number);
    names.push(pname);
    records.push(dense(V2, dims, FLAG.float32, new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(i + 0.5)));
  });
  const file = path.join(dir, fileName);
  writeFileSync(file, paramsFile(records, names));
  return file;
}
function assertLoaded(net, name) {
  const values = [...net.collectParams().values()].map((p) => p.data().toTypedArray());
  FIXTURE[name].params.forEach((entry, i) => {
    const v = values[i];
    assert.ok(v.length > 0 && v.every((x) => x === i + 0.5), `${name}: ${entry.split(' ')[0]} holds the file's values`);
  });
}
async function quietly(fn) {
  const warn = console.warn, warnings = [];
  console.warn = (m) => warnings.push(String(m));
  try { return [await fn(), warnings]; } finally { console.warn = warn; }
}

test('pretrained: MXNet model-store files load by name from a root directory, a file path and a file: URL', async () => {
  for (const name of ['resnet18_v1', 'resnet50_v2', 'squeezenet1.1', 'mobilenet0.25', 'mobilenetv2_0.25', 'densenet121', 'inceptionv3']) {
    const dir = tmp();
    const file = writeFixtureFile(dir, name);
    const [net, warnings] = await quietly(() => vision.get_model(name, { pretrained: true, root: dir }));
    assertLoaded(net, name);
    assert.equal(warnings.length, 1, 'one warning: the file is not the one MXNet published');
    assert.match(warnings[0], /^Mismatch in the content of model file .* detected/);
    net.dispose();
    if (name === 'resnet18_v1') {
      // the file itself, by path (any name) and as a file: URL
      const other = path.join(dir, 'my-weights.params');
      copyFileSync(file, other);
      const [a, wa] = await quietly(() => vision.resnet18_v1({ pretrained: true, root: other }));
      assertLoaded(a, name);
      assert.equal(wa.length, 0, 'a file under another name is not checked against MXNet\'s SHA-1');
      const [b] = await quietly(() => vision.resnet18_v1({ pretrained: true, root: pathToFileURL(dir).href }));
      assertLoaded(b, name);
      a.dispose();
      b.dispose();
    }
  }
});

test('pretrained: MXNet\'s file names and locations; a missing file says where to get it; ctx and classes', async () => {
  assert.equal(store.short_hash('resnet18_v1'), 'a0666292');
  assert.equal(path.basename(store.get_model_file('squeezenet1.0', '/m')), 'squeezenet1.0-264ba497.params');
  assert.equal(store.get_model_file('mobilenetv2_1.0', 'https://example.org/models'), 'https://example.org/models/mobilenetv2_1.0-36da4ff1.params');
  assert.equal(store.get_model_file('mobilenet0.5', 'https://example.org/models/'), 'https://example.org/models/mobilenet0.5-8e9d539c.params');
  assert.equal(store.get_model_file('vgg16_bn', 'https://example.org/v.params'), 'https://example.org/v.params');
  assert.throws(() => store.get_model_file('resnet19_v1', '/m'), /Pretrained model for resnet19_v1 is not available/);
  const dir = tmp();
  await assert.rejects(vision.resnet34_v1({ pretrained: true, root: dir }),
    (e) => e instanceof mx.MXNetError && e.message.includes(path.join(dir, 'resnet34_v1-48216ba9.params'))
      && e.message.includes('gluon/models/resnet34_v1-48216ba9.zip'));
  // file names of every pretrained constructor (vgg _bn, mobilenet suffixes, inceptionv3, squeezenet)
  const expect = {
    vgg11_bn: 'vgg11_bn-ee79a809', 'mobilenet0.75': 'mobilenet0.75-529b2c7f', 'mobilenetv2_0.5': 'mobilenetv2_0.5-aabd26cd',
    inceptionv3: 'inceptionv3-ed47ec45', 'squeezenet1.1': 'squeezenet1.1-33ba0f93', densenet169: 'densenet169-2603f878',
    alexnet: 'alexnet-44335d1f', resnet152_v2: 'resnet152_v2-f2695542',
  };
  for (const [name, file] of Object.entries(expect)) {
    await assert.rejects(vision.get_model(name, { pretrained: true, root: dir }), (e) => e.message.includes(`${file}.params not found`), name);
  }
  await assert.rejects(vision.vgg13({ pretrained: true, root: dir, batch_norm: true }), /vgg13_bn-7d97a06c\.params not found/);
  // a file for other classes does not load (shape mismatch), named in the error
  writeFixtureFile(dir, 'alexnet');
  await assert.rejects(quietly(() => vision.alexnet({ pretrained: true, root: dir, classes: 10 })),
    (e) => e instanceof mx.MXNetError && e.message.includes('alexnet-44335d1f.params'));
  const [net] = await quietly(() => vision.alexnet(true, mx.cpu(), dir));
  assertLoaded(net, 'alexnet');
  net.dispose();
});

// ---- arguments -------------------------------------------------------------------------------------
test('constructors take Python\'s arguments: positional, snake_case or camelCase options; bad ones raise MXNetError', () => {
  const shapes = (net) => listParams(net).join(';');
  const out = (net) => net.output.weight.shape.join(',');
  const a = fresh(() => new vision.ResNetV1(vision.BasicBlockV1, [2, 2, 2, 2], [64, 64, 128, 256, 512], 10));
  const b = fresh(() => new vision.ResNetV1({ block: vision.BasicBlockV1, layers: [2, 2, 2, 2], channels: [64, 64, 128, 256, 512], classes: 10 }));
  const c = fresh(() => vision.get_resnet(1, 18, { classes: 10 }));
  const d = fresh(() => vision.get_resnet({ version: 1, num_layers: 18, classes: 10 }));
  const e = fresh(() => vision.resnet18_v1({ classes: 10 }));
  for (const n of [b, c, d, e]) assert.equal(shapes(n), shapes(a));
  assert.equal(out(a), '10,512');
  const t = fresh(() => vision.resnet18_v1({ thumbnail: true }));
  assert.equal(t.features.get(0).weight.shape.join(','), '64,0,3,3', 'thumbnail: a 3x3 stride-1 stem');
  const p = vision.resnet18_v1({ prefix: 'mynet_' });
  assert.equal(p.prefix, 'mynet_');
  assert.equal(p.collectParams().keys().next().value, 'mynet_conv0_weight');
  assert.equal(out(fresh(() => vision.get_model('ResNet18_V1', { classes: 7 }))), '7,512', 'get_model lowercases the name');

  assert.equal(fresh(() => new vision.SqueezeNet('1.1', 10)).prefix, 'squeezenet0_');
  assert.equal(fresh(() => vision.get_mobilenet(0.5, { classes: 3 })).output.weight.shape[0], 3);
  assert.equal(fresh(() => vision.get_mobilenet_v2(0.75)).features.get(0).weight.shape[0], 24);
  assert.equal(fresh(() => new vision.MobileNetV2({ multiplier: 1.5, classes: 5 })).features.get(-4).weight.shape[0], 1920,
    'last_channels = int(1280 * multiplier) when multiplier > 1');
  assert.equal(fresh(() => vision.get_vgg(11, { batch_norm: true })).features.get(1).constructor.name, 'BatchNorm');
  assert.equal(fresh(() => vision.vgg11({ batchNorm: true })).features.get(1).constructor.name, 'BatchNorm');
  assert.equal(fresh(() => new vision.DenseNet(64, 32, [6, 12, 24, 16], { bn_size: 2, dropout: 0.1 })).prefix, 'densenet0_');
  assert.equal(fresh(() => vision.densenet121({ dropout: 0.2 })).features.get(4).get(0).get(1).length, 7, 'dropout adds a Dropout');
  assert.equal(fresh(() => new vision.Inception3(10)).output.weight.shape[0], 10);
  assert.equal(fresh(() => new vision.AlexNet({ classes: 2 })).output.weight.shape[0], 2);
  const blk = fresh(() => new vision.BottleneckV1(256, 2, true, 64));
  assert.equal(blk.prefix, 'bottleneckv10_');
  assert.deepEqual(blk.downsample.get(0).weight.shape, [256, 64, 1, 1]);
  assert.deepEqual(fresh(() => new vision.BasicBlockV2({ channels: 8, stride: 1, downsample: true, inChannels: 4 })).downsample.weight.shape, [8, 4, 1, 1]);

  const E = mx.MXNetError;
  assert.throws(() => vision.resnet18_v1(true), E, 'keyword arguments only, as in Python');
  assert.throws(() => vision.resnet18_v1({ clases: 10 }), /unknown argument 'clases'/);
  assert.throws(() => vision.get_resnet(3, 18), /Invalid resnet version: 3/);
  assert.throws(() => vision.get_resnet(1, 19), /Invalid number of layers: 19/);
  assert.throws(() => new vision.SqueezeNet('1.2'), /Unsupported SqueezeNet version 1.2/);
  assert.throws(() => new vision.ResNetV1(vision.BasicBlockV1, [2, 2], [64, 64]), /len\(layers\)/);
  assert.throws(() => vision.get_model('resnet18'), (err) => err instanceof E && /Model resnet18 is not supported. Available options are\n\talexnet\n/.test(err.message));
  assert.throws(() => vision.alexnet({ classes: 'ten' }), /'classes' must be an integer/);
  assert.throws(() => vision.get_model('alexnet', 5), E);
  for (const n of [a, b, c, d, e, t, p]) n.dispose();
});

test('gluon.model_zoo exposes vision, model_store and MXNet\'s exported names', () => {
  assert.equal(gluon.modelZoo, gluon.model_zoo);
  for (const k of ['ResNetV1', 'ResNetV2', 'BasicBlockV1', 'BasicBlockV2', 'BottleneckV1', 'BottleneckV2', 'get_resnet',
    'VGG', 'get_vgg', 'AlexNet', 'DenseNet', 'SqueezeNet', 'Inception3', 'MobileNet', 'MobileNetV2', 'get_mobilenet',
    'get_mobilenet_v2', 'get_model', 'getModel', 'resnet18_v1', 'resnet152_v2', 'vgg19_bn', 'alexnet', 'densenet201',
    'squeezenet1_0', 'squeezenet1_1', 'inception_v3', 'mobilenet1_0', 'mobilenet0_25', 'mobilenet_v2_1_0', 'mobilenet_v2_0_25']) {
    assert.equal(typeof vision[k], 'function', k);
  }
  for (const k of ['get_model_file', 'purge', 'short_hash']) assert.equal(typeof store[k], 'function', k);
  assert.equal(vision.get_model('inceptionv3').constructor, vision.Inception3);
});

// ---- gluon.contrib.nn ---------------------------------------------------------------------------------
test('contrib.nn: HybridConcurrent concatenates its children\'s outputs (imperative and hybridized), Identity passes through', () => {
  const { HybridConcurrent, Concurrent, Identity } = gluon.contrib.nn;
  const net = new HybridConcurrent(1);
  assert.match(net.prefix, /^hybridconcurrent\d+_$/);
  net.nameScope(() => {
    net.add(new gluon.nn.Dense(2, { inUnits: 3, useBias: false }));
    net.add(new Identity());
  });
  net.initialize();
  net.get(0).weight.setData(nd.array([[1, 0, 2], [0, -1, 1]]));
  const x = nd.array([[1, 2, 3], [-1, 0, 4]]);
  // dense: [1*1 + 3*2, -2 + 3] = [7, 1]; [-1 + 8, 0 + 4] = [7, 4]; then x itself
  const want = [[7, 1, 1, 2, 3], [7, 4, -1, 0, 4]];
  assert.deepEqual(net(x).toArray(), want);
  net.hybridize();
  assert.deepEqual(net(x).toArray(), want);
  const sym = net(mx.sym.var('data'));
  assert.match(sym.name, /^hybridconcurrent\d+_concat0$/);
  const c = new Concurrent({ axis: 0 });
  c.add(new Identity(), new Identity());
  assert.deepEqual(c(nd.array([[1, 2]])).toArray(), [[1, 2], [1, 2]]);
  const last = new HybridConcurrent();
  last.add(new Identity(), new Identity());
  assert.deepEqual(last(nd.array([[1], [2]])).toArray(), [[1, 1], [2, 2]], 'axis -1 by default');
  net.dispose();
  x.dispose();
});
