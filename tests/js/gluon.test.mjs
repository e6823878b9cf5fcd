// Gluon: MXNet's hybridize tutorial line for line, naming, hybridize into the C executor, export
// and parameter files, and the HybridBlock API -- each checked against MXNet's own files and
// texts (../shared/models, ../shared/spec) or hand-worked values.
// The order of the first tests matters: block names use process-wide counters, so the LeNet is
// this process's first HybridSequential and the seed MLP its second, as the acceptance asks.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as mx from 'mxnet-wasm';
import { tf, rng } from './oracle.mjs';
import { MODELS, REAL_FILES_SKIP } from './fixtures.mjs';

const { nd, sym, gluon } = mx;
const { nn } = gluon;
const tmp = mkdtempSync(path.join(tmpdir(), 'mxw-gluon-'));
const maxAbsDiff = (a, b) => nd.max(nd.abs(a.sub(b))).item();

// MXNet 1.4.1 exported this exact LeNet (../shared/models/lenet-gluon): same layers here. The
// net is built and exported unconditionally (it must be this process's first HybridSequential);
// the comparison with MXNet's file is the next test, skipped when the real files are absent.
let lenetExport = null;
test('a HybridSequential LeNet exports lenet-symbol.json and lenet-0001.params', () => {
  const net = new nn.HybridSequential();
  net.nameScope(() => {
    net.add(new nn.Conv2D(5, { kernelSize: 5, activation: 'relu' }), new nn.MaxPool2D({ poolSize: 2, strides: 2 }),
      new nn.Conv2D(5, { kernelSize: 5, activation: 'relu' }), new nn.MaxPool2D({ poolSize: 2, strides: 2 }),
      new nn.Flatten(), new nn.Dense(32, { activation: 'relu' }), new nn.Dense(10));
  });
  assert.equal(net.name, 'hybridsequential0');
  net.initialize();
  net.hybridize();
  const x = nd.array(rng(1).uniform(784, 0, 1), { shape: [1, 1, 28, 28] });
  const y = net(x);
  const [symFile, paramFile] = net.export(path.join(tmp, 'lenet'), 1);
  assert.equal(path.basename(symFile), 'lenet-symbol.json');
  assert.equal(path.basename(paramFile), 'lenet-0001.params');
  assert.equal(y.shape.join(), '1,10');
  lenetExport = { symFile, paramFile };
});

test('the LeNet export has the node names, ops and attributes of MXNet\'s lenet-symbol.json', { skip: REAL_FILES_SKIP }, () => {
  const { symFile, paramFile } = lenetExport;
  const ours = JSON.parse(readFileSync(symFile, 'utf8'));
  const theirs = JSON.parse(readFileSync(path.join(MODELS, 'lenet-gluon/lenet-symbol.json'), 'utf8'));
  assert.deepEqual(ours.nodes.map((n) => [n.op, n.name]), theirs.nodes.map((n) => [n.op, n.name]));
  ours.nodes.forEach((n, i) => {
    const want = { ...(theirs.nodes[i].attrs ?? {}) };
    // MXNet 1.9's pooling layers also pass layout (gluon-semantics.md §6); 1.4.1 did not.
    if (n.op === 'Pooling') want.layout = 'NCHW';
    assert.deepEqual(n.attrs ?? {}, want, n.name);
    assert.deepEqual(n.inputs, theirs.nodes[i].inputs, n.name);
  });
  assert.deepEqual(ours.arg_nodes, theirs.arg_nodes);
  assert.deepEqual(ours.heads, theirs.heads);
  // the parameter file: arg: names in list_inputs order, readable by the real-file reader
  const loaded = nd.loadBytes(readFileSync(paramFile));
  assert.deepEqual(Object.keys(loaded), Object.keys(nd.loadBytes(readFileSync(path.join(MODELS, 'lenet-gluon/lenet-0001.params')))).sort((a, b) => {
    const order = ours.nodes.filter((n) => n.op === 'null' && n.name !== 'data').map((n) => `arg:${n.name}`);
    return order.indexOf(a) - order.indexOf(b);
  }));
});

test('seed MLP (second HybridSequential): net(sym.var("data")).tojson() before any forward has MXNet\'s structure', () => {
  const net = new nn.HybridSequential();
  net.nameScope(() => {
    net.add(new nn.Dense(256, { activation: 'relu' }));
    net.add(new nn.Dense(128, { activation: 'relu' }));
    net.add(new nn.Dense(2));
  });
  net.initialize();
  const j = JSON.parse(net(sym.var('data')).tojson());
  const P = 'hybridsequential1_';
  assert.deepEqual(j.nodes.map((n) => n.name), ['data', `${P}dense0_weight`, `${P}dense0_bias`, `${P}dense0_fwd`,
    `${P}dense0_relu_fwd`, `${P}dense1_weight`, `${P}dense1_bias`, `${P}dense1_fwd`, `${P}dense1_relu_fwd`,
    `${P}dense2_weight`, `${P}dense2_bias`, `${P}dense2_fwd`]);
  assert.equal(j.nodes[1].attrs.__shape__, '(256, 0)');
  assert.deepEqual(j.nodes[3], {
    op: 'FullyConnected', name: `${P}dense0_fwd`, attrs: { flatten: 'True', no_bias: 'False', num_hidden: '256' },
    inputs: [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
  });
  assert.deepEqual(j.nodes[4], { op: 'Activation', name: `${P}dense0_relu_fwd`, attrs: { act_type: 'relu' }, inputs: [[3, 0, 0]] });
  assert.equal(j.nodes[11].op, 'FullyConnected');
  assert.deepEqual(j.arg_nodes, [0, 1, 2, 5, 6, 9, 10]);
  assert.deepEqual(j.heads, [[11, 0, 0]]);
  assert.equal(String(net), `HybridSequential(\n  (0): Dense(None -> 256, Activation(relu))\n  (1): Dense(None -> 128, Activation(relu))\n  (2): Dense(None -> 2, linear)\n)`);
});

class Net extends gluon.HybridBlock {
  constructor(opts) {
    super(opts);
    this.nameScope(() => {
      this.conv1 = new nn.Conv2D(6, { kernelSize: 5 });
      this.pool1 = new nn.MaxPool2D({ poolSize: 2 });
      this.conv2 = new nn.Conv2D(16, { kernelSize: 5 });
      this.pool2 = new nn.MaxPool2D({ poolSize: 2 });
      this.fc1 = new nn.Dense(120);
      this.fc2 = new nn.Dense(84);
      this.fc3_weight = this.params.get('fc3_weight', { shape: [10, 84] });
    });
  }
  hybridForward(F, x, { fc3_weight }) {
    console.log(x);
    x = this.pool1(F.relu(this.conv1(x)));
    x = this.pool2(F.relu(this.conv2(x)));
    x = x.reshape([0, -1]);
    x = F.relu(this.fc1(x));
    x = F.relu(this.fc2(x));
    return F.dot(x, fc3_weight, { transpose_b: true });
  }
}

function captureLogs(fn) {
  const logged = [];
  const orig = console.log;
  console.log = (...a) => logged.push(a[0]);
  try { fn(); } finally { console.log = orig; }
  return logged;
}

test('the seed tutorial: an NDArray logged on every imperative call, a Symbol once after hybridize(), same outputs', () => {
  const net = new Net();
  net.initialize();
  const x = nd.random_normal({ shape: [16, 1, 28, 28] });
  let before;
  const logs1 = captureLogs(() => { before = net.forward(x); net(x); });
  assert.equal(logs1.length, 2);
  assert.ok(logs1.every((l) => l instanceof mx.NDArray));
  net.hybridize({ staticAlloc: true, staticShape: true });
  let after;
  const logs2 = captureLogs(() => { after = net.forward(x); net(x); net(x); });
  assert.equal(logs2.length, 1);
  assert.ok(logs2[0] instanceof mx.Symbol);
  assert.equal(String(logs2[0]), '<Symbol data>');
  assert.ok(maxAbsDiff(before, after) <= 1e-6);
  // independent check of the first layer: conv1 through tfjs on the same weights
  const w = net.conv1.weight.data(), b = net.conv1.bias.data();
  const conv = tf.tidy(() => tf.transpose(tf.add(tf.conv2d(tf.transpose(tf.tensor(x.toTypedArray(), x.shape), [0, 2, 3, 1]),
    tf.transpose(tf.tensor(w.toTypedArray(), w.shape), [2, 3, 1, 0]), 1, 'valid'), tf.tensor(b.toTypedArray())), [0, 3, 1, 2]).dataSync());
  const ours = net.conv1(x);
  assert.ok(ours.toTypedArray().every((v, i) => Math.abs(v - conv[i]) <= 1e-5 * (1 + Math.abs(conv[i]))));
  // export + imports reproduce the outputs bit for bit; hybridize(false) returns to imperative
  const [s, p] = net.export(path.join(tmp, 'model'), 1);
  return gluon.SymbolBlock.imports(s, ['data'], p).then((net2) => {
    assert.deepEqual(net2(x).toTypedArray(), after.toTypedArray());
    net.hybridize(false);
    const logs3 = captureLogs(() => net(x));
    assert.ok(logs3[0] instanceof mx.NDArray);
    // Symbol input: the whole network's graph, MXNet's names
    const graph = JSON.parse(net(sym.var('data')).tojson());
    assert.equal(graph.nodes.at(-1).op, 'dot');
    assert.equal(graph.nodes.at(-1).attrs.transpose_b, 'True');
    assert.ok(graph.nodes.some((n) => n.name === `${net.prefix}fc3_weight`));
  });
});

test('a new input shape re-infers and re-plans without re-tracing; a non-hybrid parent hybridizes its children', () => {
  let traces = 0;
  class Tiny extends gluon.HybridBlock {
    constructor() { super(); this.nameScope(() => { this.d = new nn.Dense(3, { inUnits: 4 }); }); }
    hybridForward(F, x) { traces++; return F.sigmoid(this.d(x)); }
  }
  const seq = new nn.Sequential();
  const tiny = new Tiny();
  seq.add(tiny);
  seq.initialize();
  const warn = console.warn;
  console.warn = () => {};
  try { seq.hybridize(); } finally { console.warn = warn; }
  assert.equal(tiny._active, true);
  const w = tiny.d.weight.data().toArray(), b = tiny.d.bias.data().toArray();
  for (const batch of [1, 5, 2]) {
    const xs = rng(batch).uniform(batch * 4);
    const y = seq(nd.array(xs, { shape: [batch, 4] })).toArray();
    for (let r = 0; r < batch; r++) {
      for (let c = 0; c < 3; c++) {
        let z = b[c];
        for (let k = 0; k < 4; k++) z += xs[r * 4 + k] * w[c][k];
        assert.ok(Math.abs(y[r][c] - 1 / (1 + Math.exp(-z))) < 1e-6);
      }
    }
  }
  assert.equal(traces, 1);
  assert.throws(() => tiny(nd.zeros([2, 5])), (e) => e instanceof mx.MXNetError && /weight/.test(e.message));
  assert.equal(seq(nd.zeros([2, 4])).shape.join(), '2,3'); // still usable
});

test('export before a hybridized forward raises MXNet\'s error; in-memory export', () => {
  const d = new nn.Dense(2, { inUnits: 3 });
  d.initialize();
  assert.throws(() => d.export(path.join(tmp, 'x')), /Please first call block.hybridize\(\) and then run forward/);
  d.hybridize();
  d(nd.ones([1, 3]));
  const { symbol, params } = d.exportBytes();
  assert.ok(symbol.includes('"FullyConnected"'));
  const back = nd.loadBytes(params);
  assert.deepEqual(Object.keys(back), [`arg:${d.prefix}weight`, `arg:${d.prefix}bias`]);
  assert.deepEqual(back[`arg:${d.prefix}weight`].toArray(), d.weight.data().toArray());
});

test('BatchNorm export writes aux: names and version-1 entries; params re-read are byte-identical', () => {
  const net = new nn.HybridSequential({ prefix: 'net_' });
  net.nameScope(() => net.add(new nn.Dense(4, { activation: 'relu' }), new nn.BatchNorm()));
  net.initialize();
  net.hybridize();
  net(nd.ones([2, 3]));
  const [s, p] = net.export(path.join(tmp, 'bn'));
  assert.ok(existsSync(path.join(tmp, 'bn-0000.params')));
  const j = JSON.parse(readFileSync(s, 'utf8'));
  const bn = j.nodes.find((n) => n.op === 'BatchNorm');
  assert.deepEqual(bn.attrs, { axis: '1', eps: '1e-05', fix_gamma: 'False', momentum: '0.9', use_global_stats: 'False' });
  assert.deepEqual(bn.inputs.map((e) => e[2]), [0, 0, 0, 1, 1]);
  const bytes = readFileSync(p);
  const params = nd.loadBytes(bytes);
  assert.deepEqual(Object.keys(params), ['arg:net_dense0_weight', 'arg:net_dense0_bias', 'arg:net_batchnorm0_gamma',
    'arg:net_batchnorm0_beta', 'aux:net_batchnorm0_running_mean', 'aux:net_batchnorm0_running_var']);
  assert.deepEqual(Buffer.from(nd.saveBytes(params)), bytes);
});

test('saveParameters / loadParameters: structural names, legacy prefixed names, deprecated aliases', async () => {
  const make = () => {
    const net = new nn.HybridSequential();
    net.nameScope(() => net.add(new nn.Dense(3, { inUnits: 2 }), new nn.Dense(1, { inUnits: 3, useBias: false })));
    return net;
  };
  const a = make();
  a.initialize();
  const file = path.join(tmp, 'a.params');
  a.saveParameters(file);
  assert.deepEqual(Object.keys(await nd.load(file)), ['0.weight', '0.bias', '1.weight']);
  const b = make();
  await b.loadParameters(file);
  assert.deepEqual(b.at(0).weight.data().toArray(), a.at(0).weight.data().toArray());
  // missing / extra
  const c = new nn.HybridSequential();
  c.nameScope(() => c.add(new nn.Dense(3, { inUnits: 2 })));
  await assert.rejects(c.loadParameters(file), /1.weight' loaded from file .* is not present/);
  await c.loadParameters(file, { ignoreExtra: true });
  const d = make();
  d.add(new nn.Dense(1, { inUnits: 1 }));
  await assert.rejects(d.loadParameters(file), /Parameter '2.weight' is missing/);
  await d.loadParameters(file, { allowMissing: true });
  // deprecated: prefix-stripped names, with a warning
  const warns = [];
  const warn = console.warn;
  console.warn = (m) => warns.push(m);
  try {
    const bytes = a.saveParams(path.join(tmp, 'legacy.params'));
    assert.deepEqual(Object.keys(nd.loadBytes(bytes)), ['dense0_weight', 'dense0_bias', 'dense1_weight']);
    const e = make();
    await e.loadParams(path.join(tmp, 'legacy.params'));
    assert.deepEqual(e.at(1).weight.data().toArray(), a.at(1).weight.data().toArray());
  } finally {
    console.warn = warn;
  }
  assert.ok(warns.some((w) => /save_params is deprecated/.test(w)) && warns.some((w) => /load_params is deprecated/.test(w)));
});

test('naming: prefixes, per-scope counters, explicit prefix, children and parameters by attribute', () => {
  const a = new nn.Dense(2);
  const b = new nn.Dense(2);
  assert.match(a.prefix, /^dense\d+_$/);
  assert.equal(Number(b.prefix.match(/\d+/)[0]), Number(a.prefix.match(/\d+/)[0]) + 1);
  class Outer extends gluon.HybridBlock {
    constructor() {
      super({ prefix: 'outer_' });
      this.nameScope(() => {
        this.x = new nn.Dense(1);
        this.y = new nn.Dense(1);
        this.z = new nn.Conv2D(1, { kernelSize: 1 });
        this.a = new nn.Activation('relu');
        this.w = this.params.get('w', { shape: [1] });
      });
    }
    hybridForward(F, x, { w }) { return F.broadcast_mul(this.y(this.x(x)), w); }
  }
  const o = new Outer();
  assert.deepEqual([o.x.prefix, o.y.prefix, o.z.prefix, o.a.prefix], ['outer_dense0_', 'outer_dense1_', 'outer_conv0_', 'outer_relu0_']);
  assert.equal(o.name, 'outer');
  assert.deepEqual([...o._children.keys()], ['x', 'y', 'z', 'a']);
  assert.deepEqual([...o.collectParams().keys()], ['outer_w', 'outer_dense0_weight', 'outer_dense0_bias',
    'outer_dense1_weight', 'outer_dense1_bias', 'outer_conv0_weight', 'outer_conv0_bias']);
  assert.deepEqual([...o.collectParams('.*weight').keys()], ['outer_dense0_weight', 'outer_dense1_weight', 'outer_conv0_weight']);
  assert.deepEqual([...o.collectParams('dense').keys()], [], 'select anchors at the start, as re.match');
  assert.throws(() => { o.x = o.w; }, TypeError);
  assert.throws(() => { o.w = o.params.get('w2', { shape: [1] }); }, /Overriding Parameter attribute w/);
  class Bad extends gluon.HybridBlock {
    constructor() { super(); this.l = new nn.Lambda('tanh'); }
  }
  assert.throws(() => new Bad(), /Children of HybridBlock must also be HybridBlock/);
  const shared = new nn.Dense(2, { inUnits: 2, params: a.collectParams() });
  assert.equal(shared.weight, a.weight);
  // Python's `with name_scope` inside a parent: Dense's Activation child is <prefix>relu_
  const act = new nn.Dense(2, { activation: 'tanh', prefix: 'q_' });
  assert.equal(act.act.prefix, 'q_tanh_');
});

test('Parameter and ParameterDict behave as Gluon\'s', () => {
  const pd = new gluon.ParameterDict('blk_');
  const w = pd.get('w', { shape: [2, 0], allowDeferredInit: true, lrMult: 2 });
  assert.equal(w.name, 'blk_w');
  assert.equal(pd.get('w', { shape: [2, 3] }), w);
  assert.deepEqual(w.shape, [2, 3]); // unknown dims filled
  assert.throws(() => pd.get('w', { lr_mult: 3 }), /desired attribute does not match/);
  assert.deepEqual([...pd.keys()], ['blk_w']);
  assert.equal(pd.size, 1);
  assert.ok(pd.has('blk_w'));
  assert.deepEqual(pd.items().map(([k]) => k), ['blk_w']);
  const u = pd.get('u', { shape: [2, 0], allowDeferredInit: true });
  pd.initialize();
  assert.throws(() => u.data(), (e) => e instanceof gluon.DeferredInitializationError);
  const v = new gluon.Parameter('v', { shape: [2] });
  assert.throws(() => v.data(), /has not been initialized/);
  v.initialize({ init: new mx.init.One() });
  assert.deepEqual(v.data().toArray(), [1, 1]);
  assert.deepEqual(v.grad().toArray(), [0, 0]);
  v.setData(nd.array([3, 4]));
  assert.deepEqual(v.data().toArray(), [3, 4]);
  v.gradReq = 'null';
  assert.throws(() => v.grad(), /grad_req='null'/);
  assert.throws(() => { v.gradReq = 'sometimes'; }, /grad_req must be one of/);
  const c = pd.getConstant('c', nd.array([5, 6]));
  c.initialize();
  assert.deepEqual(c.data().toArray(), [5, 6]);
  assert.equal(c.gradReq, 'null');
  const warns = [];
  const warn = console.warn;
  console.warn = (m) => warns.push(m);
  try { v.initialize(); } finally { console.warn = warn; }
  assert.match(warns[0], /already initialized/);
  v.initialize({ init: new mx.init.Constant(7), forceReinit: true });
  assert.deepEqual(v.data().toArray(), [7, 7]);
});

test('initializers: Gluon defaults, dumps() text, statistics of the random ones', () => {
  mx.random.seed(3);
  const d = new nn.Dense(400, { inUnits: 500 });
  d.initialize();
  const wv = d.weight.data().toTypedArray();
  assert.ok(wv.every((v) => v >= -0.07 && v <= 0.07), 'default Uniform(0.07)');
  assert.ok(Math.abs(wv.reduce((s, v) => s + v, 0) / wv.length) < 0.002);
  assert.deepEqual([...new Set(d.bias.data().toArray())], [0], 'bias zeros');
  const x = new nn.Dense(300, { inUnits: 200, weightInitializer: new mx.init.Xavier() });
  x.initialize();
  const bound = Math.sqrt(3 / ((200 + 300) / 2));
  const xv = x.weight.data().toTypedArray();
  assert.ok(xv.every((v) => Math.abs(v) <= bound) && xv.some((v) => Math.abs(v) > 0.9 * bound));
  const n = new gluon.Parameter('n', { shape: [20000], init: new mx.init.Normal(0.5) });
  n.initialize();
  const nv = n.data().toTypedArray();
  const sd = Math.sqrt(nv.reduce((s, v) => s + v * v, 0) / nv.length);
  assert.ok(Math.abs(sd - 0.5) < 0.02);
  const o = new gluon.Parameter('o', { shape: [4, 6], init: new mx.init.Orthogonal({ scale: 1 }) });
  o.initialize();
  const om = o.data().toArray();
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      const dot = om[i].reduce((s, v, k) => s + v * om[j][k], 0);
      assert.ok(Math.abs(dot - (i === j ? 1 : 0)) < 1e-5);
    }
  }
  assert.equal(new mx.init.Constant(0.25).dumps(), '["constant", {"value": 0.25}]');
  assert.equal(new mx.init.Xavier({ magnitude: 2 }).dumps(), '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}]');
  assert.equal(new mx.init.Zero().dumps(), '["zero", {}]');
  assert.equal(mx.init.create('ones').alias, 'one');
  assert.equal(mx.init.create('["constant", {"value": 3}]').value, 3);
  const bl = new gluon.Parameter('up', { shape: [1, 1, 4, 4], init: new mx.init.Bilinear() });
  bl.initialize();
  // MXNet's bilinear kernel for k = 4: f = 2, c = 0.75: weights (1 - |x/2 - 0.75|)(1 - |y/2 - 0.75|)
  const row = [0.25, 0.75, 0.75, 0.25];
  assert.deepEqual(bl.data().toArray()[0][0].map((r) => r.map((v) => Math.round(v * 1e6) / 1e6)),
    row.map((a) => row.map((b) => Math.round(a * b * 1e6) / 1e6)));
});

test('HybridBlock API: apply, cast, inferShape, inferType, hooks, registerOpHook, optimizeFor, summary', () => {
  const make = () => {
    const net = new nn.HybridSequential({ prefix: 'api_' });
    net.nameScope(() => net.add(new nn.Dense(20), new nn.Dense(20)));
    return net;
  };
  const net = make();
  const visited = [];
  net.apply((b) => visited.push(b.name));
  assert.deepEqual(visited, ['api_dense0', 'api_dense1', 'api']);
  net.inferShape(nd.zeros([10, 10]));
  assert.deepEqual(net.at(0).weight.shape, [20, 10]);
  assert.deepEqual(net.at(1).weight.shape, [20, 20]);
  net.initialize();
  net.cast('float64');
  assert.equal(net.at(1).weight.data().dtype, 'float64');
  net.inferType(nd.zeros([10, 10], { dtype: 'float64' }));
  assert.equal(net.at(0).weight.dtype, 'float64');
  const y64 = net(nd.ones([1, 10], { dtype: 'float64' }));
  assert.equal(y64.dtype, 'float64');
  net.cast('float32');
  assert.equal(net.at(1).weight.data().dtype, 'float32');
  assert.ok(Math.abs(net(nd.ones([1, 10])).toTypedArray()[0] - y64.toTypedArray()[0]) < 1e-5);
  // forward hooks and pre-hooks with detachable handles
  const calls = [];
  const h1 = net.registerForwardPreHook((b, inputs) => calls.push(['pre', b.name, inputs[0].shape.join()]));
  const h2 = net.registerForwardHook((b, inputs, out) => calls.push(['post', b.name, out.shape.join()]));
  net(nd.zeros([10, 10]));
  h1.detach();
  h2.detach();
  net(nd.zeros([10, 10]));
  assert.deepEqual(calls, [['pre', 'api', '10,10'], ['post', 'api', '10,20']]);
  // summary: MXNet's table text
  const logs = [];
  const orig = console.log;
  console.log = (m) => logs.push(m);
  let text;
  try { text = net.summary(nd.zeros([10, 10])); } finally { console.log = orig; }
  const row = (a, b, c) => `${a.padStart(20)}  ${b.padStart(42)} ${String(c).padStart(15)}`;
  assert.equal(text, ['-'.repeat(80), row('Layer (type)', 'Output Shape', 'Param #'), '='.repeat(80),
    row('Input', '(10, 10)', 0), row('Dense-1', '(10, 20)', 220), row('Dense-2', '(10, 20)', 420), '='.repeat(80),
    'Parameters in forward computation graph, duplicate included', '   Total params: 640', '   Trainable params: 640',
    '   Non-trainable params: 0', 'Shared params in forward computation graph: 0', 'Unique parameters in model: 640',
    '-'.repeat(80)].join('\n'));
  assert.equal(logs[0], text);
  // registerOpHook on the hybridized graph: every node output, and inputs with monitorAll
  net.hybridize();
  const seen = [];
  net.registerOpHook((name, op, arr) => seen.push([name, op, arr.shape.join()]));
  const x = nd.array(rng(9).uniform(100), { shape: [10, 10] });
  const y = net(x);
  assert.deepEqual(seen, [['api_dense0_fwd_output', 'FullyConnected', '10,20'], ['api_dense1_fwd_output', 'FullyConnected', '10,20']]);
  const seenAll = [];
  net.registerOpHook((name, op, arr) => seenAll.push([name, arr.toArray()]), true);
  net(x);
  assert.deepEqual(seenAll.map((s) => s[0]), ['api_dense0_fwd_data', 'api_dense0_fwd_weight', 'api_dense0_fwd_bias',
    'api_dense0_fwd_output', 'api_dense1_fwd_data', 'api_dense1_fwd_weight', 'api_dense1_fwd_bias', 'api_dense1_fwd_output']);
  assert.deepEqual(seenAll[7][1], y.toArray());
  assert.deepEqual(seenAll[4][1], seenAll[3][1]);
  // optimizeFor binds and caches without running
  const other = make();
  other.initialize();
  let ran = 0;
  other.registerForwardHook(() => { ran++; });
  other.optimizeFor(nd.zeros([4, 10]), { backend: 'default' });
  assert.equal(ran, 0);
  assert.ok(other._cachedOp);
  assert.throws(() => other.optimizeFor(nd.zeros([4, 10]), { backend: 'MKLDNN' }), /backend MKLDNN is not available/);
});

test('hybridize plans memory (one arena by liveness, activations in place) and fuses activations into producers', () => {
  const net = new nn.HybridSequential({ prefix: 'plan_' });
  net.nameScope(() => net.add(new nn.Dense(256, { activation: 'relu', inUnits: 512 }),
    new nn.Dense(128, { activation: 'relu', inUnits: 256 }), new nn.Dense(2, { inUnits: 128 })));
  net.initialize();
  net.hybridize();
  for (const batch of [1, 4]) {
    const x = nd.random.uniform(-1, 1, [batch, 512]);
    const y = net(x);
    // hand-worked plan: dense0 out (batch x 256 floats) is live while dense1 writes its output
    // (batch x 128); both relus reuse their inputs' buffers; the last output is the caller's
    // array. Peak = (256 + 128) x 4 bytes per row, each block 64-byte aligned.
    const align = (b) => Math.ceil(b / 64) * 64;
    assert.equal(net._cachedOp.arenaBytes, align(batch * 256 * 4) + align(batch * 128 * 4), `batch ${batch}`);
    assert.equal(net._cachedOp.fusedNodes, 2, 'both relus are applied by their FullyConnected');
    net.hybridize(false);
    assert.ok(maxAbsDiff(net(x), y) <= 1e-6);
    net.hybridize();
  }
});

test('a Convolution with relu fuses when hybridized, with the imperative outputs (batch > 1, NCHW and NHWC)', () => {
  for (const layout of ['NCHW', 'NHWC']) {
    const net = new nn.HybridSequential();
    net.nameScope(() => net.add(new nn.Conv2D(7, { kernelSize: 3, padding: 1, activation: 'relu', layout }),
      new nn.Conv2D(3, { kernelSize: 1, activation: 'tanh', layout })));
    net.initialize();
    const x = nd.random.uniform(-1, 1, layout === 'NCHW' ? [3, 4, 9, 11] : [3, 9, 11, 4]);
    const eager = net(x);
    net.hybridize();
    const fused = net(x);
    assert.ok(net._cachedOp.fusedNodes >= 1, layout);
    assert.ok(maxAbsDiff(eager, fused) <= 1e-6, layout);
    assert.ok(eager.toTypedArray().some((v) => v < 0) && eager.toTypedArray().some((v) => v > 0), 'tanh output has both signs');
  }
});

test('a parameter file that fails to load leaves every parameter unchanged', async () => {
  const make = () => {
    const net = new nn.HybridSequential();
    net.nameScope(() => net.add(new nn.Dense(3, { inUnits: 2 }), new nn.Dense(2, { inUnits: 3 })));
    net.initialize();
    return net;
  };
  const net = make();
  const before = [...net.collectParams().values()].map((p) => p.data().toArray());
  const other = make();
  const bytes = nd.saveBytes({ '0.weight': other.at(0).weight.data(), '0.bias': other.at(0).bias.data(),
    '1.weight': nd.zeros([2, 4]), '1.bias': other.at(1).bias.data() }); // 1.weight has the wrong shape
  await assert.rejects(net.loadParameters(bytes), /Parameter '1_weight'|shape incompatible/);
  assert.deepEqual([...net.collectParams().values()].map((p) => p.data().toArray()), before);
  // the same for a SymbolBlock-style prefixed file through ParameterDict.load
  const pd = net.collectParams();
  const legacy = {};
  for (const [k, p] of pd.entries()) legacy[k] = p.data();
  legacy[[...pd.keys()][3]] = nd.zeros([7]);
  await assert.rejects(pd.load(nd.saveBytes(legacy)), /shape incompatible/);
  assert.deepEqual([...net.collectParams().values()].map((p) => p.data().toArray()), before);
});
