// gluon.model_zoo.vision forward passes on random weights.
// - ResNet-18 v1 and MobileNet v2 1.0 against onnxruntime-node running the ONNX graph that
//   bench/models.mjs describes from MXNet's source (its own layer list, independent of
//   js/model_zoo), holding the same weights;
// - SqueezeNet 1.0 against onnxruntime-node running MXNet 1.5's own exported graph
//   (../shared/models/zoo-symbols/squeezenet1.0-symbol.json, converted node by node here);
// - every model of get_model's table: output (1, classes), finite, not constant (batch 1,
//   32x32 input where the architecture allows it).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as mx from 'mxnet-wasm';
import { modelByKey, buildOnnx } from '../../bench/models.mjs';
import { OnnxGraph } from '../../bench/onnx_build.mjs';
import { rng } from './oracle.mjs';
import { REAL_FILES_SKIP, model } from './fixtures.mjs';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');
const { nd, gluon } = mx;
const { vision } = gluon.model_zoo;

async function runOnnx(bytes, data, shape) {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['cpu'], intraOpNumThreads: 1 });
  const r = await session.run({ data: new ort.Tensor('float32', data, shape) });
  return r[session.outputNames[0]].data;
}
// max |a - ref| / max |ref| (the output's scale)
function relError(a, ref) {
  assert.equal(a.length, ref.length);
  let d = 0, s = 0;
  for (let i = 0; i < ref.length; i++) {
    d = Math.max(d, Math.abs(a[i] - ref[i]));
    s = Math.max(s, Math.abs(ref[i]));
  }
  assert.ok(s > 0 && Number.isFinite(d));
  return d / s;
}

// The zoo net with bench/models.mjs's weights: both list the parameters in the same order
// (MXNet's collect_params order); each pair's shapes must agree.
function loadBenchWeights(net, params, shape) {
  const x = nd.zeros(shape);
  net.initialize();
  net.inferShape(x);
  x.dispose();
  const ours = [...net.collectParams().values()];
  const theirs = [...params.entries()];
  assert.equal(ours.length, theirs.length);
  ours.forEach((p, i) => {
    const [key, { shape: s, data }] = theirs[i];
    assert.deepEqual(p.shape, s, `${p.name} vs bench ${key}`);
    const a = nd.array(data, { shape: s });
    p.setData(a);
    a.dispose();
  });
}

for (const [key, ctor, label] of [['resnet18', vision.resnet18_v1, 'ResNet-18 v1'], ['mobilenetv2', vision.mobilenet_v2_1_0, 'MobileNet v2 1.0']]) {
  test(`${label} (224x224, batch 1) matches onnxruntime-node on the same weights, imperative and hybridized`, async () => {
    const graph = modelByKey(key).build();
    const shape = [1, 3, 224, 224];
    const data = rng(7).uniform(3 * 224 * 224, -1, 1);
    const g = new OnnxGraph(key);
    const y = buildOnnx(g, graph, 'data');
    const ref = await runOnnx(g.finish(['data', shape], [y, null]), data, shape);
    const net = ctor();
    loadBenchWeights(net, graph.params, shape);
    const x = nd.array(data, { shape });
    const out1 = net(x);
    assert.deepEqual(out1.shape, [1, 1000]);
    const e1 = relError(out1.toTypedArray(), ref);
    net.hybridize();
    const out2 = net(x);
    const e2 = relError(out2.toTypedArray(), ref);
    assert.ok(e1 < 2e-5 && e2 < 2e-5, `${label}: max |mx - ort| / max |ort| = ${e1} imperative, ${e2} hybridized`);
    for (const a of [x, out1, out2]) a.dispose();
    net.dispose();
  });
}

// ---- SqueezeNet 1.0 through MXNet's own graph ---------------------------------------------------
const tuple = (s) => s.replace(/[()\s]/g, '').split(',').filter((v) => v !== '').map(Number);
// MXNet symbol JSON -> ONNX (the ops of squeezenet1.0-symbol.json), weights by variable name.
function mxnetJsonToOnnx(json, weights) {
  const g = new OnnxGraph('squeezenet');
  const out = []; // node index -> ONNX value name
  for (const [i, n] of json.nodes.entries()) {
    const ins = n.inputs.map(([k]) => out[k]);
    const a = n.attrs ?? {};
    switch (n.op) {
      case 'null': out[i] = n.name === 'data' ? 'data' : g.init(n.name, weights[n.name].shape, weights[n.name].data); break;
      case 'Convolution': {
        const pad = tuple(a.pad);
        out[i] = g.node('Conv', ins, { kernel_shape: tuple(a.kernel), strides: tuple(a.stride), pads: [...pad, ...pad],
          dilations: tuple(a.dilate), group: Number(a.num_group) });
        break;
      }
      case 'Activation': assert.equal(a.act_type, 'relu'); out[i] = g.node('Relu', ins); break;
      case 'Pooling': {
        const pad = tuple(a.pad);
        const attrs = { kernel_shape: tuple(a.kernel), strides: tuple(a.stride), pads: [...pad, ...pad],
          ceil_mode: a.pooling_convention === 'full' ? 1 : 0 };
        out[i] = g.node(a.pool_type === 'max' ? 'MaxPool' : 'AveragePool', ins, attrs);
        break;
      }
      case 'Concat': out[i] = g.node('Concat', ins, { axis: Number(a.dim) }); break;
      case 'Dropout': out[i] = ins[0]; break; // inference: identity
      case 'Flatten': out[i] = g.node('Flatten', ins, { axis: 1 }); break;
      default: throw new Error(`no ONNX conversion for ${n.op}`);
    }
  }
  return g.finish(['data', [1, 3, 224, 224]], [out[json.heads[0][0]], null]);
}

test('SqueezeNet 1.0 matches onnxruntime-node running MXNet\'s own exported graph with the same weights', { skip: REAL_FILES_SKIP }, async () => {
  const json = JSON.parse(readFileSync(model('zoo-symbols/squeezenet1.0-symbol.json'), 'utf8'));
  const net = vision.squeezenet1_0();
  net.initialize();
  const shape = [1, 3, 224, 224];
  const x = nd.array(rng(11).uniform(3 * 224 * 224, 0, 1), { shape });
  net.inferShape(x);
  // random weights from the test's own generator (He-uniform-like scale keeps activations O(1))
  const r = rng(12);
  const weights = {};
  for (const p of net.collectParams().values()) {
    const n = p.shape.reduce((a, b) => a * b, 1);
    const fanIn = p.shape.length > 1 ? n / p.shape[0] : 1;
    const data = p.name.endsWith('_bias') ? r.uniform(n, 0, 0.1) : r.uniform(n, -Math.sqrt(6 / fanIn), Math.sqrt(6 / fanIn));
    const a = nd.array(data, { shape: p.shape });
    p.setData(a);
    a.dispose();
    // MXNet's file names the variables squeezenet0_*; ours has this process's counter
    weights[`squeezenet0_${p.name.slice(net.prefix.length)}`] = { shape: p.shape, data };
  }
  const ref = await runOnnx(mxnetJsonToOnnx(json, weights), x.toTypedArray(), shape);
  net.hybridize();
  const y = net(x);
  assert.deepEqual(y.shape, [1, 1000]);
  const e = relError(y.toTypedArray(), ref);
  assert.ok(e < 2e-5, `max |mx - ort| / max |ort| = ${e}`);
  for (const a of [x, y]) a.dispose();
  net.dispose();
});

// ---- every model -----------------------------------------------------------------------------------
// Input sizes: inceptionv3 299 (its 8x8 average pool), densenets and squeezenets 224 (7x7 / 13x13
// average pools), alexnet 224 (its 11x11/4 stem and three 3x3/2 pools); the rest 32x32.
const size = (name) => (name === 'inceptionv3' ? 299 : /^(densenet|squeezenet|alexnet)/.test(name) ? 224 : 32);

test('every model of get_model\'s table runs a forward on random weights, imperative and hybridized: (1, classes), finite, not constant', () => {
  const classes = 10;
  for (const name of vision.modelNames) {
    const net = vision.get_model(name, { classes });
    net.initialize();
    const s = size(name);
    const x = nd.array(rng(name.length).uniform(3 * s * s, 0, 1), { shape: [1, 3, s, s] });
    const y = net(x);
    assert.deepEqual(y.shape, [1, classes], name);
    const v = y.toTypedArray();
    assert.ok(v.every(Number.isFinite), `${name}: finite`);
    assert.ok(v.some((t) => t !== v[0]), `${name}: not constant`);
    // the hybridized graph (traced with Symbols: HybridConcurrent, Identity, RELU6, ...) runs too
    net.hybridize();
    const yh = net(x);
    const vh = yh.toTypedArray();
    const scale = Math.max(...v.map(Math.abs));
    assert.ok(vh.every((t, i) => Math.abs(t - v[i]) <= 1e-5 * scale), `${name}: hybridized forward`);
    x.dispose();
    y.dispose();
    yh.dispose();
    net.dispose();
  }
});
