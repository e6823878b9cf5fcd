// gluon.nn layers (js/nn.mjs) against independent references: TensorFlow.js's CPU kernels
// (tests/js/oracle.mjs, tests/js/nn_helpers.mjs) or hand-worked values, imperatively and
// hybridized (the two modes agree within 1e-6, both match the oracle within 1e-5), with parameter
// names, shapes and initializers, and the exported graph (ops, node names, attribute strings) of
// ../shared/spec/gluon-semantics.md §6.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf, rng, sizeOf, assertClose } from './oracle.mjs';
import { tfRun, convRef, deconvRef, poolRef, checkModes, graphOf, assertNode } from './nn_helpers.mjs';

const { nd, sym, gluon } = mx;
const { nn } = gluon;

let seed = 9100;
const rand = (shape, lo = -1, hi = 1) => rng(seed++).uniform(sizeOf(shape), lo, hi);
const arr = (data, shape) => nd.array(data, { shape });
const setP = (param, data) => param.setData(arr(data, param.shape));
// Fresh symbol/block name counters for deterministic prefixes.
const fresh = (fn) => mx.name.withNameManager(new mx.name.NameManager(), fn);
const dataVar = () => sym.var('data');
// tfjs tensor from flat data
const T = (data, shape) => tf.tensor(data, shape);

function assertUniform(values, scale, msg) {
  const a = Array.from(values);
  assert.ok(a.every((v) => v >= -scale && v <= scale), `${msg}: values in [-${scale}, ${scale}]`);
  assert.ok(a.some((v) => v !== 0), `${msg}: not all zero`);
}

// =================================================================================================
// Dense
// =================================================================================================
test('Dense: flatten, bias, relu activation (deferred init) vs tf.matMul', () => {
  const xs = [2, 3, 4];
  const x = rand(xs);
  const net = new nn.Dense(5, { activation: 'relu', prefix: 'd_' });
  assert.deepEqual(net.weight.shape, [5, 0]);
  net.initialize();
  net(arr(x, xs));
  assert.deepEqual(net.weight.shape, [5, 12], 'deferred init filled in_units = 3*4');
  assert.deepEqual(net.bias.shape, [5]);
  assertUniform(net.weight.data().toTypedArray(), 0.07, 'default weight init Uniform(0.07)');
  assert.deepEqual(Array.from(net.bias.data().toTypedArray()), [0, 0, 0, 0, 0], 'bias init zeros');
  assert.deepEqual([...net.collectParams().keys()], ['d_weight', 'd_bias']);
  const w = rand([5, 12]), b = rand([5]);
  setP(net.weight, w);
  setP(net.bias, b);
  const ref = tfRun(() => tf.relu(tf.add(tf.matMul(T(x, [2, 12]), T(w, [5, 12]), false, true), T(b, [5]))));
  checkModes(net, [arr(x, xs)], ref);
});

test('Dense: useBias false, flatten false, inUnits given (no deferred init)', () => {
  const xs = [2, 3, 4];
  const x = rand(xs);
  const net = new nn.Dense(6, { useBias: false, flatten: false, inUnits: 4 });
  assert.equal(net.bias, null);
  assert.deepEqual(net.weight.shape, [6, 4]);
  net.initialize();
  assert.deepEqual(net.collectParams().size, 1);
  const w = rand([6, 4]);
  setP(net.weight, w);
  const ref = tfRun(() => tf.reshape(tf.matMul(T(x, [6, 4]), T(w, [6, 4]), false, true), [2, 3, 6]));
  checkModes(net, [arr(x, xs)], ref);
});

test('Dense: tanh activation, deferred init in the hybridized path', () => {
  const xs = [3, 7];
  const x = rand(xs);
  const net = new nn.Dense(4, { activation: 'tanh' });
  net.initialize();
  net.hybridize();
  net(arr(x, xs));
  assert.deepEqual(net.weight.shape, [4, 7]);
  const w = rand([4, 7]), b = rand([4]);
  setP(net.weight, w);
  setP(net.bias, b);
  const ref = tfRun(() => tf.tanh(tf.add(tf.matMul(T(x, xs), T(w, [4, 7]), false, true), T(b, [4]))));
  const y = net(arr(x, xs));
  assertClose(y.toTypedArray(), ref.data, { rtol: 1e-5, atol: 1e-5 });
  net.hybridize(false);
  assertClose(net(arr(x, xs)).toTypedArray(), y.toTypedArray(), { rtol: 1e-6, atol: 1e-6 });
});

test('Dense: exported graph (FullyConnected dense0_fwd, Activation dense0_relu_fwd)', () => fresh(() => {
  const net = new nn.Dense(10, { activation: 'relu' });
  assert.equal(net.prefix, 'dense0_');
  const g = graphOf(net, dataVar());
  assert.equal(g.ops.length, 2);
  assertNode(g.ops[0], 'FullyConnected', 'dense0_fwd', { flatten: 'True', no_bias: 'False', num_hidden: '10' });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'dense0_weight', 'dense0_bias']);
  assertNode(g.ops[1], 'Activation', 'dense0_relu_fwd', { act_type: 'relu' });
  assert.equal(g.byName.dense0_weight.attrs.__shape__, '(10, 0)');
  assert.equal(g.byName.dense0_bias.attrs.__init__, 'zeros');
  const net2 = new nn.Dense(3, { useBias: false, flatten: false, inUnits: 4 });
  const g2 = graphOf(net2, dataVar());
  assertNode(g2.ops[0], 'FullyConnected', 'dense1_fwd', { flatten: 'False', no_bias: 'True', num_hidden: '3' });
  assert.deepEqual(g2.inputsOf(g2.ops[0]), ['data', 'dense1_weight']);
  assert.equal(g2.byName.dense1_weight.attrs.__shape__, '(3, 4)');
}));

test('Dense: wrong input width throws MXNetError naming FullyConnected; the next call works', () => {
  const net = new nn.Dense(3, { inUnits: 4 });
  net.initialize();
  assert.throws(() => net(nd.ones([2, 5])), (e) => e instanceof mx.MXNetError && /FullyConnected/.test(e.message));
  net.hybridize();
  assert.throws(() => net(nd.ones([2, 5])), (e) => e instanceof mx.MXNetError);
  net.hybridize(false);
  assert.deepEqual(net(nd.ones([2, 4])).shape, [2, 3]);
});

// =================================================================================================
// Convolution
// =================================================================================================
function convCase({ cls, channels, kernel, opts = {}, xs, nsp, inChannelsGiven = false }) {
  const x = rand(xs);
  const net = new cls(channels, kernel, { ...opts, ...(inChannelsGiven ? { inChannels: xs[1] } : {}) });
  net.initialize();
  if (!inChannelsGiven) net(arr(x, xs));
  const groups = opts.groups ?? 1;
  const k = Array.isArray(kernel) ? kernel : new Array(nsp).fill(kernel);
  const tuple = (v, d) => (v === undefined ? new Array(nsp).fill(d) : Array.isArray(v) ? v : new Array(nsp).fill(v));
  const ws = [channels, xs[1] / groups, ...k];
  assert.deepEqual(net.weight.shape, ws, 'weight (channels, in/groups, k...)');
  const w = rand(ws), b = opts.useBias === false ? null : rand([channels]);
  setP(net.weight, w);
  if (b) setP(net.bias, b);
  const ref = convRef(x, xs, w, ws, b, {
    stride: tuple(opts.strides, 1), pad: tuple(opts.padding, 0), dilate: tuple(opts.dilation, 1), groups,
  });
  if (opts.activation === 'relu') ref.data = ref.data.map((v) => Math.max(v, 0));
  checkModes(net, [arr(x, xs)], ref);
}

test('Conv1D: default, strides+padding+dilation, groups, useBias false', () => {
  convCase({ cls: nn.Conv1D, channels: 4, kernel: 3, xs: [2, 3, 9], nsp: 1 });
  convCase({ cls: nn.Conv1D, channels: 4, kernel: 3, opts: { strides: 2, padding: 1, dilation: 2 }, xs: [2, 2, 9], nsp: 1, inChannelsGiven: true });
  convCase({ cls: nn.Conv1D, channels: 6, kernel: 2, opts: { groups: 2, useBias: false }, xs: [2, 4, 7], nsp: 1 });
});

test('Conv2D: padding 1, relu activation; tuple strides/padding/dilation; groups 3', () => {
  convCase({ cls: nn.Conv2D, channels: 5, kernel: 3, opts: { padding: 1, activation: 'relu' }, xs: [2, 3, 5, 6], nsp: 2 });
  convCase({ cls: nn.Conv2D, channels: 4, kernel: [3, 2], opts: { strides: [2, 1], padding: [1, 0], dilation: [1, 2] }, xs: [2, 2, 7, 6], nsp: 2 });
  convCase({ cls: nn.Conv2D, channels: 6, kernel: 3, opts: { groups: 3, strides: 2, padding: 1, dilation: 2, useBias: false }, xs: [1, 6, 8, 7], nsp: 2, inChannelsGiven: true });
});

test('Conv3D: default, strides+padding, dilation+groups', () => {
  convCase({ cls: nn.Conv3D, channels: 3, kernel: 2, xs: [2, 2, 3, 4, 3], nsp: 3 });
  convCase({ cls: nn.Conv3D, channels: 4, kernel: [2, 3, 2], opts: { strides: [1, 2, 2], padding: [1, 1, 0] }, xs: [1, 3, 4, 5, 5], nsp: 3 });
  convCase({ cls: nn.Conv3D, channels: 4, kernel: 2, opts: { dilation: 2, groups: 2, padding: 1 }, xs: [1, 4, 4, 4, 5], nsp: 3, inChannelsGiven: true });
});

test('Conv: kernelSize given as an option, snake_case options, bias init zeros, weight init uniform', () => {
  const net = new nn.Conv2D(3, { kernel_size: 2, in_channels: 2, use_bias: true });
  assert.deepEqual(net.weight.shape, [3, 2, 2, 2]);
  net.initialize();
  assertUniform(net.weight.data().toTypedArray(), 0.07, 'conv weight');
  assert.deepEqual(Array.from(net.bias.data().toTypedArray()), [0, 0, 0]);
  // hand-worked: ones input, weight all 0.5 on 2x2x2 -> 8 * 0.5 = 4, + bias [1, 2, 3]
  setP(net.weight, new Float32Array(24).fill(0.5));
  setP(net.bias, [1, 2, 3]);
  const ref = { data: new Float32Array(3 * 4).map((_, i) => 4 + 1 + Math.floor(i / 4)), shape: [1, 3, 2, 2] };
  checkModes(net, [nd.ones([1, 2, 3, 3])], ref);
});

test('Conv: exported graphs (Convolution <prefix>fwd with Gluon attrs)', () => fresh(() => {
  const c2 = new nn.Conv2D(16, { kernelSize: 3, padding: 1 });
  assert.equal(c2.prefix, 'conv0_');
  let g = graphOf(c2, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'Convolution', 'conv0_fwd', {
    dilate: '(1, 1)', kernel: '(3, 3)', layout: 'NCHW', no_bias: 'False', num_filter: '16', num_group: '1', pad: '(1, 1)', stride: '(1, 1)',
  });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'conv0_weight', 'conv0_bias']);
  assert.equal(g.byName.conv0_weight.attrs.__shape__, '(16, 0, 3, 3)');
  const c1 = new nn.Conv1D(4, 3, { strides: 2, dilation: 2, groups: 2, inChannels: 6, useBias: false, activation: 'sigmoid' });
  g = graphOf(c1, dataVar());
  assertNode(g.ops[0], 'Convolution', 'conv1_fwd', {
    dilate: '(2,)', kernel: '(3,)', layout: 'NCW', no_bias: 'True', num_filter: '4', num_group: '2', pad: '(0,)', stride: '(2,)',
  });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'conv1_weight']);
  assert.equal(g.byName.conv1_weight.attrs.__shape__, '(4, 3, 3)');
  assertNode(g.ops[1], 'Activation', 'conv1_sigmoid_fwd', { act_type: 'sigmoid' });
  const c3 = new nn.Conv3D(2, [1, 2, 3], { padding: [0, 1, 1], prefix: 'c3_' });
  g = graphOf(c3, dataVar());
  assertNode(g.ops[0], 'Convolution', 'c3_fwd', {
    dilate: '(1, 1, 1)', kernel: '(1, 2, 3)', layout: 'NCDHW', no_bias: 'False', num_filter: '2', num_group: '1', pad: '(0, 1, 1)', stride: '(1, 1, 1)',
  });
}));

test('Conv: bad layout, missing kernel and channel mismatch throw MXNetError; runtime keeps working', () => {
  assert.throws(() => new nn.Conv2D(4, 3, { layout: 'NCW' }), mx.MXNetError);
  assert.throws(() => new nn.Conv2D(4), mx.MXNetError);
  assert.throws(() => new nn.Conv1D(4, [3, 3]), mx.MXNetError);
  const net = new nn.Conv2D(2, 3, { inChannels: 3 });
  net.initialize();
  assert.throws(() => net(nd.ones([1, 4, 5, 5])), (e) => e instanceof mx.MXNetError && /Convolution/.test(e.message));
  assert.deepEqual(net(nd.ones([1, 3, 5, 5])).shape, [1, 2, 3, 3]);
});

test('Conv: NHWC layout gives Gluon\'s weight shape, and its forward runs (MXNet\'s CPU kernel refuses it)', () => {
  const c = new nn.Conv2D(4, 3, { layout: 'NHWC', inChannels: 2 });
  assert.deepEqual(c.weight.shape, [4, 3, 3, 2], 'NHWC weight (channels, kh, kw, in/groups)');
  assert.deepEqual(new nn.Conv2D(4, 3, { layout: 'NHWC' }).weight.shape, [4, 3, 3, 0]);
  // Gluon 1.9.1's Conv1D asserts layout == 'NCW' (and MXNet's Convolution has no NWC layout)
  assert.throws(() => new nn.Conv1D(4, 3, { layout: 'NWC', inChannels: 2 }), /Only NCW layout is supported for 1D convolution/);
  assert.deepEqual(new nn.Conv2DTranspose(4, 3, { layout: 'NHWC', inChannels: 2 }).weight.shape, [2, 3, 3, 4]);
  c.initialize();
  const xs = Float32Array.from({ length: 50 }, (_, i) => Math.sin(i));
  const y = c(nd.array(xs, { shape: [1, 5, 5, 2] }));
  assert.deepEqual(y.shape, [1, 3, 3, 4]);
  const w = c.weight.data();
  const ref = tf.tidy(() => tf.conv2d(tf.tensor(xs, [1, 5, 5, 2]), tf.transpose(tf.tensor(w.toTypedArray(), w.shape), [1, 2, 3, 0]), 1, 'valid').dataSync());
  y.toTypedArray().forEach((v, i) => assert.ok(Math.abs(v - ref[i]) <= 1e-5 * (1 + Math.abs(ref[i]))));
  assert.deepEqual(new nn.Conv2D(1, 1, { inChannels: 1 }).weight.shape, [1, 1, 1, 1], 'runtime keeps working');
});

test('Conv: an NHWC layer still composes into an exportable graph (MXNet checks the layout only in the CPU kernel)',
  () => {
    const c = new nn.Conv2D(4, 3, { layout: 'NHWC', inChannels: 2, prefix: 'nhwc_' });
    assertNode(graphOf(c, dataVar()).ops[0], 'Convolution', 'nhwc_fwd', {
      dilate: '(1, 1)', kernel: '(3, 3)', layout: 'NHWC', no_bias: 'False', num_filter: '4', num_group: '1', pad: '(0, 0)', stride: '(1, 1)',
    });
  });

test('Deferred init with an incompatible input: the error names the op and the problem',
  {}, () => {
    const conv = new nn.Conv2D(4, 3, { groups: 2 });
    conv.initialize();
    assert.throws(() => conv(nd.ones([1, 3, 5, 5])), (e) => e instanceof mx.MXNetError && /Convolution/.test(e.message));
    const ln = new nn.LayerNorm({ axis: 3 });
    ln.initialize();
    assert.throws(() => ln(nd.ones([1, 3, 5])), (e) => e instanceof mx.MXNetError && /LayerNorm/.test(e.message));
    const inorm = new nn.InstanceNorm();
    inorm.initialize();
    assert.throws(() => inorm(nd.ones([2, 4])), (e) => e instanceof mx.MXNetError && /InstanceNorm/.test(e.message));
    const hyb = new nn.BatchNorm({ axis: 3 });
    hyb.initialize();
    hyb.hybridize();
    assert.throws(() => hyb(nd.ones([1, 3, 5])), (e) => e instanceof mx.MXNetError && /BatchNorm/.test(e.message));
  });

test('Deferred init with an incompatible input throws MXNetError and the block works afterwards', () => {
  const conv = new nn.Conv2D(4, 3, { groups: 2 });
  conv.initialize();
  assert.throws(() => conv(nd.ones([1, 3, 5, 5])), mx.MXNetError);
  assert.deepEqual(conv(nd.ones([1, 4, 5, 5])).shape, [1, 4, 3, 3]);
  assert.deepEqual(conv.weight.shape, [4, 2, 3, 3]);
});

// =================================================================================================
// Transposed convolution
// =================================================================================================
function deconvCase({ cls, channels, kernel, opts = {}, xs, nsp, inChannelsGiven = false }) {
  const x = rand(xs);
  const net = new cls(channels, kernel, { ...opts, ...(inChannelsGiven ? { inChannels: xs[1] } : {}) });
  net.initialize();
  if (!inChannelsGiven) net(arr(x, xs));
  const groups = opts.groups ?? 1;
  const k = Array.isArray(kernel) ? kernel : new Array(nsp).fill(kernel);
  const tuple = (v, d) => (v === undefined ? new Array(nsp).fill(d) : Array.isArray(v) ? v : new Array(nsp).fill(v));
  const ws = [xs[1], channels / groups, ...k];
  assert.deepEqual(net.weight.shape, ws, 'weight (in, channels/groups, k...)');
  const w = rand(ws), b = opts.useBias === false ? null : rand([channels]);
  setP(net.weight, w);
  if (b) setP(net.bias, b);
  const ref = deconvRef(x, xs, w, ws, b, {
    stride: tuple(opts.strides, 1), pad: tuple(opts.padding, 0), adj: tuple(opts.outputPadding, 0),
    dilate: tuple(opts.dilation, 1), groups,
  });
  checkModes(net, [arr(x, xs)], ref);
}

test('Conv1DTranspose: default; strides+padding+outputPadding', () => {
  deconvCase({ cls: nn.Conv1DTranspose, channels: 3, kernel: 3, xs: [2, 2, 5], nsp: 1 });
  deconvCase({ cls: nn.Conv1DTranspose, channels: 3, kernel: 3, opts: { strides: 2, padding: 1, outputPadding: 1 }, xs: [2, 4, 5], nsp: 1 });
  deconvCase({ cls: nn.Conv1DTranspose, channels: 2, kernel: 2, opts: { strides: 3, outputPadding: 2 }, xs: [1, 3, 4], nsp: 1, inChannelsGiven: true });
});

test('Conv2DTranspose: strides+padding+outputPadding (tuples), dilation, groups', () => {
  deconvCase({ cls: nn.Conv2DTranspose, channels: 4, kernel: 3, opts: { strides: 2, padding: 1, outputPadding: 1 }, xs: [2, 3, 4, 5], nsp: 2 });
  deconvCase({ cls: nn.Conv2DTranspose, channels: 3, kernel: [3, 2], opts: { strides: [2, 1], padding: [1, 0], outputPadding: [1, 0] }, xs: [1, 2, 4, 3], nsp: 2, inChannelsGiven: true });
  deconvCase({ cls: nn.Conv2DTranspose, channels: 4, kernel: 2, opts: { dilation: 2, groups: 2, useBias: false }, xs: [1, 4, 3, 3], nsp: 2 });
});

test('Conv3DTranspose: default; strides+padding+outputPadding', () => {
  deconvCase({ cls: nn.Conv3DTranspose, channels: 2, kernel: 2, xs: [1, 3, 2, 3, 2], nsp: 3 });
  deconvCase({ cls: nn.Conv3DTranspose, channels: 2, kernel: [3, 2, 3], opts: { strides: [2, 2, 1], padding: [1, 0, 1], outputPadding: [1, 1, 0] }, xs: [2, 2, 3, 2, 3], nsp: 3 });
});

test('ConvTranspose: exported graphs (Deconvolution <prefix>fwd with adj)', () => fresh(() => {
  const d2 = new nn.Conv2DTranspose(4, 3, { strides: 2, padding: 1, outputPadding: 1 });
  assert.equal(d2.prefix, 'conv0_', 'transposed convs share the "conv" hint');
  let g = graphOf(d2, dataVar());
  assertNode(g.ops[0], 'Deconvolution', 'conv0_fwd', {
    adj: '(1, 1)', dilate: '(1, 1)', kernel: '(3, 3)', layout: 'NCHW', no_bias: 'False', num_filter: '4', num_group: '1', pad: '(1, 1)', stride: '(2, 2)',
  });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'conv0_weight', 'conv0_bias']);
  assert.equal(g.byName.conv0_weight.attrs.__shape__, '(0, 4, 3, 3)');
  const d1 = new nn.Conv1DTranspose(6, 2, { groups: 2, inChannels: 4, useBias: false, prefix: 'd1_' });
  g = graphOf(d1, dataVar());
  assertNode(g.ops[0], 'Deconvolution', 'd1_fwd', {
    adj: '(0,)', dilate: '(1,)', kernel: '(2,)', layout: 'NCW', no_bias: 'True', num_filter: '6', num_group: '2', pad: '(0,)', stride: '(1,)',
  });
  assert.equal(g.byName.d1_weight.attrs.__shape__, '(4, 3, 2)');
  const ds = new nn.Conv2DTranspose(2, { kernel_size: 3, output_padding: 1, strides: 2, in_channels: 3, use_bias: false, prefix: 'ds_' });
  assert.deepEqual(ds.weight.shape, [3, 2, 3, 3]);
  assertNode(graphOf(ds, dataVar()).ops[0], 'Deconvolution', 'ds_fwd', {
    adj: '(1, 1)', dilate: '(1, 1)', kernel: '(3, 3)', layout: 'NCHW', no_bias: 'True', num_filter: '2', num_group: '1', pad: '(0, 0)', stride: '(2, 2)',
  });
  const d3 = new nn.Conv3DTranspose(2, 2, { strides: 2, prefix: 'd3_' });
  g = graphOf(d3, dataVar());
  assertNode(g.ops[0], 'Deconvolution', 'd3_fwd', {
    adj: '(0, 0, 0)', dilate: '(1, 1, 1)', kernel: '(2, 2, 2)', layout: 'NCDHW', no_bias: 'False', num_filter: '2', num_group: '1', pad: '(0, 0, 0)', stride: '(2, 2, 2)',
  });
}));

// =================================================================================================
// Pooling
// =================================================================================================
function poolCase(net, xs, spec) {
  const x = rand(xs);
  const ref = poolRef(x, xs, spec);
  checkModes(net, [arr(x, xs)], ref);
}

test('MaxPool1D/2D/3D: defaults, strides, padding, ceilMode', () => {
  poolCase(new nn.MaxPool1D(), [2, 3, 8], { kernel: [2], stride: [2], pad: [0], type: 'max' });
  poolCase(new nn.MaxPool1D(3, { strides: 2, padding: 1 }), [2, 3, 8], { kernel: [3], stride: [2], pad: [1], type: 'max' });
  poolCase(new nn.MaxPool1D({ poolSize: 3, strides: 2, ceilMode: true }), [1, 2, 8], { kernel: [3], stride: [2], pad: [0], type: 'max', full: true });
  poolCase(new nn.MaxPool2D(), [2, 2, 6, 5], { kernel: [2, 2], stride: [2, 2], pad: [0, 0], type: 'max' });
  poolCase(new nn.MaxPool2D({ poolSize: [3, 2], strides: [2, 1], padding: [1, 0], ceilMode: true }), [2, 2, 7, 5],
    { kernel: [3, 2], stride: [2, 1], pad: [1, 0], type: 'max', full: true });
  poolCase(new nn.MaxPool3D(), [1, 2, 4, 4, 6], { kernel: [2, 2, 2], stride: [2, 2, 2], pad: [0, 0, 0], type: 'max' });
  poolCase(new nn.MaxPool3D(2, { ceilMode: true }), [1, 2, 4, 4, 5], { kernel: [2, 2, 2], stride: [2, 2, 2], pad: [0, 0, 0], type: 'max', full: true });
  poolCase(new nn.MaxPool3D([2, 3, 2], { strides: 1, padding: [1, 1, 0] }), [1, 2, 3, 4, 3], { kernel: [2, 3, 2], stride: [1, 1, 1], pad: [1, 1, 0], type: 'max' });
});

test('MaxPool2D hand-worked: 4x4 ramp, 2x2 windows', () => {
  const x = Float32Array.from({ length: 16 }, (_, i) => i);
  checkModes(new nn.MaxPool2D(2), [arr(x, [1, 1, 4, 4])], { data: [5, 7, 13, 15], shape: [1, 1, 2, 2] });
});

test('AvgPool1D/2D/3D: countIncludePad true and false, padding, ceilMode', () => {
  for (const cip of [true, false]) {
    poolCase(new nn.AvgPool1D(3, { strides: 2, padding: 1, countIncludePad: cip }), [2, 3, 8], { kernel: [3], stride: [2], pad: [1], type: 'avg', countIncludePad: cip });
    poolCase(new nn.AvgPool1D(3, { strides: 2, padding: 1, ceilMode: true, countIncludePad: cip }), [1, 2, 8],
      { kernel: [3], stride: [2], pad: [1], type: 'avg', full: true, countIncludePad: cip });
    poolCase(new nn.AvgPool2D(3, { strides: 2, padding: 1, ceilMode: true, countIncludePad: cip }), [1, 2, 6, 6],
      { kernel: [3, 3], stride: [2, 2], pad: [1, 1], type: 'avg', full: true, countIncludePad: cip });
    poolCase(new nn.AvgPool2D([2, 3], { strides: [1, 2], padding: [1, 1], countIncludePad: cip }), [2, 2, 4, 5],
      { kernel: [2, 3], stride: [1, 2], pad: [1, 1], type: 'avg', countIncludePad: cip });
    poolCase(new nn.AvgPool3D(2, { padding: 1, countIncludePad: cip }), [1, 2, 3, 4, 3], { kernel: [2, 2, 2], stride: [2, 2, 2], pad: [1, 1, 1], type: 'avg', countIncludePad: cip });
    poolCase(new nn.AvgPool3D([2, 3, 3], { strides: 2, padding: [0, 1, 1], ceilMode: true, countIncludePad: cip }), [1, 2, 3, 6, 6],
      { kernel: [2, 3, 3], stride: [2, 2, 2], pad: [0, 1, 1], type: 'avg', full: true, countIncludePad: cip });
  }
  poolCase(new nn.AvgPool2D(), [2, 3, 4, 6], { kernel: [2, 2], stride: [2, 2], pad: [0, 0], type: 'avg' });
});

test('AvgPool1D hand-worked: [1..4] pool 3 stride 2 pad 1 (count_include_pad true/false, ceil)', () => {
  const x = arr([1, 2, 3, 4], [1, 1, 4]);
  // windows [-1,2) and [1,4): sums 3 and 9; include pad: /3 -> 1, 3; exclude: /2, /3 -> 1.5, 3
  checkModes(new nn.AvgPool1D(3, { strides: 2, padding: 1 }), [x], { data: [1, 3], shape: [1, 1, 2] });
  checkModes(new nn.AvgPool1D(3, { strides: 2, padding: 1, countIncludePad: false }), [x], { data: [1.5, 3], shape: [1, 1, 2] });
  // ceil mode adds the window [3,6): padded extent ends at 5 -> include pad /2 = 2, exclude /1 = 4
  checkModes(new nn.AvgPool1D(3, { strides: 2, padding: 1, ceilMode: true }), [x], { data: [1, 3, 2], shape: [1, 1, 3] });
  checkModes(new nn.AvgPool1D(3, { strides: 2, padding: 1, ceilMode: true, countIncludePad: false }), [x], { data: [1.5, 3, 4], shape: [1, 1, 3] });
});

test('Pool1D hand-worked: a ceil-mode window lying wholly in the padding (max -> -FLT_MAX, avg -> 0)', () => {
  // [1..5], pool 2 stride 2 pad 1 ceil: windows [-1,1) [1,3) [3,5) [5,7); the last holds no data
  // (ops.md: max starts from the lowest float32; avg sums nothing; the avg divisor counts the
  // padded extent up to in + pad = 6, so [-1,1) is divided by 2 with count_include_pad).
  const x = arr([1, 2, 3, 4, 5], [1, 1, 5]);
  const lowest = -3.4028234663852886e38;
  checkModes(new nn.MaxPool1D(2, { strides: 2, padding: 1, ceilMode: true }), [x], { data: [1, 3, 5, lowest], shape: [1, 1, 4] });
  checkModes(new nn.AvgPool1D(2, { strides: 2, padding: 1, ceilMode: true }), [x], { data: [0.5, 2.5, 4.5, 0], shape: [1, 1, 4] });
  checkModes(new nn.AvgPool1D(2, { strides: 2, padding: 1, ceilMode: true, countIncludePad: false }), [x], { data: [1, 2.5, 4.5, 0], shape: [1, 1, 4] });
});

test('GlobalMaxPool1D/2D/3D and GlobalAvgPool1D/2D/3D vs tf.max / tf.mean', () => {
  for (const [cls, xs, type] of [
    [nn.GlobalMaxPool1D, [2, 3, 7], 'max'], [nn.GlobalMaxPool2D, [2, 3, 4, 5], 'max'], [nn.GlobalMaxPool3D, [2, 3, 2, 3, 4], 'max'],
    [nn.GlobalAvgPool1D, [2, 3, 7], 'avg'], [nn.GlobalAvgPool2D, [2, 3, 4, 5], 'avg'], [nn.GlobalAvgPool3D, [2, 3, 2, 3, 4], 'avg'],
  ]) {
    const x = rand(xs);
    const axes = xs.slice(2).map((_, i) => i + 2);
    const ref = tfRun(() => (type === 'max' ? tf.max(T(x, xs), axes, true) : tf.mean(T(x, xs), axes, true)));
    checkModes(new cls(), [arr(x, xs)], ref, { msg: cls.name });
  }
});

test('Pooling: channel-last layouts NWC/NHWC/NDHWC (ops.md Pooling layouts) vs tf',
  () => {
    // reference: move channels first, pool, move back
    const cases = [
      [new nn.MaxPool2D(2, { layout: 'NHWC' }), [2, 4, 6, 3], { kernel: [2, 2], stride: [2, 2], pad: [0, 0], type: 'max' }, [0, 3, 1, 2], [0, 2, 3, 1]],
      [new nn.AvgPool2D(3, { strides: 1, padding: 1, layout: 'NHWC' }), [1, 4, 5, 2], { kernel: [3, 3], stride: [1, 1], pad: [1, 1], type: 'avg' }, [0, 3, 1, 2], [0, 2, 3, 1]],
      [new nn.MaxPool1D(2, { layout: 'NWC' }), [2, 6, 3], { kernel: [2], stride: [2], pad: [0], type: 'max' }, [0, 2, 1], [0, 2, 1]],
      [new nn.AvgPool3D(2, { layout: 'NDHWC' }), [1, 2, 4, 4, 2], { kernel: [2, 2, 2], stride: [2, 2, 2], pad: [0, 0, 0], type: 'avg' }, [0, 4, 1, 2, 3], [0, 2, 3, 4, 1]],
    ];
    for (const [net, xs, spec, toFirst, toLast] of cases) {
      const x = rand(xs);
      const xf = tfRun(() => tf.transpose(T(x, xs), toFirst));
      const pf = poolRef(xf.data, xf.shape, spec);
      checkModes(net, [arr(x, xs)], tfRun(() => tf.transpose(T(pf.data, pf.shape), toLast)));
    }
  });

test('Pooling: a layout of the wrong rank is rejected at construction (Gluon asserts it)',
  {}, () => {
    assert.throws(() => new nn.MaxPool2D({ layout: 'NCW' }), mx.MXNetError);
    assert.throws(() => new nn.AvgPool1D({ layout: 'NCHW' }), mx.MXNetError);
    assert.throws(() => new nn.GlobalMaxPool3D({ layout: 'NCHW' }), mx.MXNetError);
  });

test('Pooling: exported graphs (Pooling <prefix>fwd, hint "pool")', () => fresh(() => {
  const mp = new nn.MaxPool2D();
  assert.equal(mp.prefix, 'pool0_');
  let g = graphOf(mp, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'Pooling', 'pool0_fwd', {
    global_pool: 'False', kernel: '(2, 2)', layout: 'NCHW', pad: '(0, 0)', pool_type: 'max', pooling_convention: 'valid', stride: '(2, 2)',
  });
  g = graphOf(new nn.MaxPool1D(3, { strides: 1, padding: 1, ceilMode: true }), dataVar());
  assertNode(g.ops[0], 'Pooling', 'pool1_fwd', {
    global_pool: 'False', kernel: '(3,)', layout: 'NCW', pad: '(1,)', pool_type: 'max', pooling_convention: 'full', stride: '(1,)',
  });
  g = graphOf(new nn.MaxPool3D(), dataVar());
  assertNode(g.ops[0], 'Pooling', 'pool2_fwd', {
    global_pool: 'False', kernel: '(2, 2, 2)', layout: 'NCDHW', pad: '(0, 0, 0)', pool_type: 'max', pooling_convention: 'valid', stride: '(2, 2, 2)',
  });
  g = graphOf(new nn.MaxPool2D(3, { prefix: 'm3_' }), dataVar());
  assertNode(g.ops[0], 'Pooling', 'm3_fwd', {
    global_pool: 'False', kernel: '(3, 3)', layout: 'NCHW', pad: '(0, 0)', pool_type: 'max', pooling_convention: 'valid', stride: '(3, 3)',
  });
  g = graphOf(new nn.MaxPool2D({ poolSize: [3, 2], prefix: 'm32_' }), dataVar());
  assert.equal(g.ops[0].attrs.stride, '(3, 2)', 'strides default to pool_size');
  g = graphOf(new nn.AvgPool2D({ pool_size: 3, strides: 2, padding: 1, ceil_mode: true, count_include_pad: false, prefix: 'sn_' }), dataVar());
  assertNode(g.ops[0], 'Pooling', 'sn_fwd', {
    count_include_pad: 'False', global_pool: 'False', kernel: '(3, 3)', layout: 'NCHW', pad: '(1, 1)', pool_type: 'avg', pooling_convention: 'full', stride: '(2, 2)',
  });
  g = graphOf(new nn.AvgPool2D(3, { strides: 2, padding: 1, countIncludePad: false, prefix: 'ap_' }), dataVar());
  assertNode(g.ops[0], 'Pooling', 'ap_fwd', {
    count_include_pad: 'False', global_pool: 'False', kernel: '(3, 3)', layout: 'NCHW', pad: '(1, 1)', pool_type: 'avg', pooling_convention: 'valid', stride: '(2, 2)',
  });
  g = graphOf(new nn.AvgPool1D({ prefix: 'a1_' }), dataVar());
  assertNode(g.ops[0], 'Pooling', 'a1_fwd', {
    count_include_pad: 'True', global_pool: 'False', kernel: '(2,)', layout: 'NCW', pad: '(0,)', pool_type: 'avg', pooling_convention: 'valid', stride: '(2,)',
  });
  g = graphOf(new nn.AvgPool3D(2, { ceilMode: true, prefix: 'a3_' }), dataVar());
  assertNode(g.ops[0], 'Pooling', 'a3_fwd', {
    count_include_pad: 'True', global_pool: 'False', kernel: '(2, 2, 2)', layout: 'NCDHW', pad: '(0, 0, 0)', pool_type: 'avg', pooling_convention: 'full', stride: '(2, 2, 2)',
  });
  const globals = [
    [nn.GlobalMaxPool1D, 'max', '(1,)', '(0,)', 'NCW'], [nn.GlobalMaxPool2D, 'max', '(1, 1)', '(0, 0)', 'NCHW'],
    [nn.GlobalMaxPool3D, 'max', '(1, 1, 1)', '(0, 0, 0)', 'NCDHW'], [nn.GlobalAvgPool1D, 'avg', '(1,)', '(0,)', 'NCW'],
    [nn.GlobalAvgPool2D, 'avg', '(1, 1)', '(0, 0)', 'NCHW'], [nn.GlobalAvgPool3D, 'avg', '(1, 1, 1)', '(0, 0, 0)', 'NCDHW'],
  ];
  for (const [cls, type, k, p, layout] of globals) {
    g = graphOf(new cls({ prefix: 'gp_' }), dataVar());
    assertNode(g.ops[0], 'Pooling', 'gp_fwd', {
      global_pool: 'True', kernel: k, layout, pad: p, pool_type: type, pooling_convention: 'full', stride: k,
    });
  }
}));

// =================================================================================================
// Normalization
// =================================================================================================
// (x - mean) / sqrt(var + eps) * gamma + beta with per-channel vectors along `axis`.
function bnRef(x, xs, axis, { gamma, beta, mean, variance, eps = 1e-5 }) {
  const C = xs[axis];
  const bs = xs.map((d, i) => (i === axis ? C : 1));
  return tfRun(() => {
    const v = (a) => tf.reshape(T(a, [C]), bs);
    const norm = tf.div(tf.sub(T(x, xs), v(mean)), tf.sqrt(tf.add(v(variance), eps)));
    return tf.add(tf.mul(norm, v(gamma)), v(beta));
  });
}

test('BatchNorm: inference uses the running stats (deferred init), stats unchanged', () => {
  const xs = [2, 3, 4, 5];
  const x = rand(xs);
  const net = new nn.BatchNorm({ prefix: 'bn_' });
  net.initialize();
  net(arr(x, xs));
  assert.deepEqual([...net.collectParams().keys()], ['bn_gamma', 'bn_beta', 'bn_running_mean', 'bn_running_var']);
  for (const p of [net.gamma, net.beta, net.running_mean, net.running_var]) assert.deepEqual(p.shape, [3]);
  assert.deepEqual(Array.from(net.gamma.data().toTypedArray()), [1, 1, 1]);
  assert.deepEqual(Array.from(net.beta.data().toTypedArray()), [0, 0, 0]);
  assert.deepEqual(Array.from(net.running_mean.data().toTypedArray()), [0, 0, 0]);
  assert.deepEqual(Array.from(net.running_var.data().toTypedArray()), [1, 1, 1]);
  assert.equal(net.gamma.gradReq, 'write');
  assert.equal(net.running_mean.gradReq, 'null');
  assert.equal(net.running_var.gradReq, 'null');
  const p = { gamma: rand([3], 0.5, 2), beta: rand([3]), mean: rand([3]), variance: rand([3], 0.2, 2) };
  setP(net.gamma, p.gamma);
  setP(net.beta, p.beta);
  setP(net.running_mean, p.mean);
  setP(net.running_var, p.variance);
  checkModes(net, [arr(x, xs)], bnRef(x, xs, 1, p));
  assertClose(net.running_mean.data().toTypedArray(), p.mean, { rtol: 0, atol: 0, msg: 'running_mean untouched' });
  assertClose(net.running_var.data().toTypedArray(), p.variance, { rtol: 0, atol: 0, msg: 'running_var untouched' });
});

test('BatchNorm: scale false (fix_gamma) ignores gamma; epsilon; inChannels; axis -1', () => {
  const xs = [2, 4, 3];
  const x = rand(xs);
  const net = new nn.BatchNorm({ scale: false, epsilon: 1e-3, inChannels: 4 });
  assert.equal(net.gamma.gradReq, 'null');
  net.initialize();
  const p = { gamma: rand([4], 0.5, 2), beta: rand([4]), mean: rand([4]), variance: rand([4], 0.2, 2), eps: 1e-3 };
  setP(net.gamma, p.gamma);
  setP(net.beta, p.beta);
  setP(net.running_mean, p.mean);
  setP(net.running_var, p.variance);
  checkModes(net, [arr(x, xs)], bnRef(x, xs, 1, { ...p, gamma: [1, 1, 1, 1] }), { msg: 'fix_gamma' });

  const last = new nn.BatchNorm({ axis: -1 });
  last.initialize();
  last(arr(x, xs));
  assert.deepEqual(last.gamma.shape, [3]);
  const q = { gamma: rand([3], 0.5, 2), beta: rand([3]), mean: rand([3]), variance: rand([3], 0.2, 2) };
  setP(last.gamma, q.gamma);
  setP(last.beta, q.beta);
  setP(last.running_mean, q.mean);
  setP(last.running_var, q.variance);
  checkModes(last, [arr(x, xs)], bnRef(x, xs, 2, q), { msg: 'axis -1' });
});

test('BatchNorm: exported graph (attrs, aux states)', () => fresh(() => {
  const bn = new nn.BatchNorm();
  assert.equal(bn.prefix, 'batchnorm0_');
  const out = bn(dataVar());
  const g = graphOf(bn, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'BatchNorm', 'batchnorm0_fwd', { axis: '1', eps: '1e-05', fix_gamma: 'False', momentum: '0.9', use_global_stats: 'False' });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'batchnorm0_gamma', 'batchnorm0_beta', 'batchnorm0_running_mean', 'batchnorm0_running_var']);
  assert.deepEqual(out.listAuxiliaryStates(), ['batchnorm0_running_mean', 'batchnorm0_running_var']);
  assert.deepEqual(out.listArguments(), ['data', 'batchnorm0_gamma', 'batchnorm0_beta']);
  assert.equal(g.byName.batchnorm0_gamma.attrs.__init__, 'ones');
  assert.equal(g.byName.batchnorm0_running_var.attrs.__init__, 'ones');
  assert.equal(g.byName.batchnorm0_running_mean.attrs.__init__, 'zeros');
  const bn2 = new nn.BatchNorm({ scale: false, epsilon: 0.001, momentum: 0.95, useGlobalStats: true, axis: -1, prefix: 'b_' });
  assertNode(graphOf(bn2, dataVar()).ops[0], 'BatchNorm', 'b_fwd', { axis: '-1', eps: '0.001', fix_gamma: 'True', momentum: '0.95', use_global_stats: 'True' });
}));

test('LayerNorm: last axis (deferred) and axis 1 (inChannels) vs tf.moments', () => {
  const xs = [2, 3, 5];
  const x = rand(xs);
  const ln = new nn.LayerNorm({ prefix: 'ln_' });
  ln.initialize();
  ln(arr(x, xs));
  assert.deepEqual([...ln.collectParams().keys()], ['ln_gamma', 'ln_beta']);
  assert.deepEqual(ln.gamma.shape, [5]);
  assert.deepEqual(Array.from(ln.gamma.data().toTypedArray()), [1, 1, 1, 1, 1]);
  assert.deepEqual(Array.from(ln.beta.data().toTypedArray()), [0, 0, 0, 0, 0]);
  const gm = rand([5], 0.5, 2), bt = rand([5]);
  setP(ln.gamma, gm);
  setP(ln.beta, bt);
  const lnRef = (axis, C, g, b, eps) => tfRun(() => {
    const { mean, variance } = tf.moments(T(x, xs), axis, true);
    const bs = xs.map((d, i) => (i === axis ? C : 1));
    const norm = tf.div(tf.sub(T(x, xs), mean), tf.sqrt(tf.add(variance, eps)));
    return tf.add(tf.mul(norm, tf.reshape(T(g, [C]), bs)), tf.reshape(T(b, [C]), bs));
  });
  checkModes(ln, [arr(x, xs)], lnRef(2, 5, gm, bt, 1e-5), { msg: 'axis -1' });
  const ln1 = new nn.LayerNorm({ axis: 1, epsilon: 1e-3, inChannels: 3 });
  ln1.initialize();
  const g1 = rand([3], 0.5, 2), b1 = rand([3]);
  setP(ln1.gamma, g1);
  setP(ln1.beta, b1);
  checkModes(ln1, [arr(x, xs)], lnRef(1, 3, g1, b1, 1e-3), { msg: 'axis 1' });
  const fixed = new nn.LayerNorm({ center: false, scale: false });
  assert.equal(fixed.gamma.gradReq, 'null');
  assert.equal(fixed.beta.gradReq, 'null');
  assert.equal(ln.gamma.gradReq, 'write');
});

test('LayerNorm: exported graph (LayerNorm <prefix>layernorm0)', () => fresh(() => {
  const ln = new nn.LayerNorm();
  assert.equal(ln.prefix, 'layernorm0_');
  const g = graphOf(ln, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'LayerNorm', 'layernorm0_layernorm0', { axis: '-1', eps: '1e-05' });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'layernorm0_gamma', 'layernorm0_beta']);
  assertNode(graphOf(new nn.LayerNorm({ axis: 1, epsilon: 1e-6, prefix: 'l_' }), dataVar()).ops[0], 'LayerNorm', 'l_layernorm0', { axis: '1', eps: '1e-06' });
}));

function instRef(x, xs, gamma, beta, eps) {
  const C = xs[1];
  const axes = xs.slice(2).map((_, i) => i + 2);
  const bs = xs.map((d, i) => (i === 1 ? C : 1));
  return tfRun(() => {
    const { mean, variance } = tf.moments(T(x, xs), axes, true);
    const norm = tf.div(tf.sub(T(x, xs), mean), tf.sqrt(tf.add(variance, eps)));
    return tf.add(tf.mul(norm, tf.reshape(T(gamma, [C]), bs)), tf.reshape(T(beta, [C]), bs));
  });
}

test('InstanceNorm: per (n, c) over spatial dims, gamma/beta per channel (3-D and 4-D input)', () => {
  for (const xs of [[2, 3, 5], [2, 3, 2, 4]]) {
    const x = rand(xs);
    const net = new nn.InstanceNorm({ prefix: 'in_' });
    assert.equal(net.gamma.gradReq, 'null', 'scale defaults to false');
    net.initialize();
    net(arr(x, xs));
    assert.deepEqual([...net.collectParams().keys()], ['in_gamma', 'in_beta']);
    assert.deepEqual(net.gamma.shape, [3]);
    const gm = rand([3], 0.5, 2), bt = rand([3]);
    setP(net.gamma, gm);
    setP(net.beta, bt);
    checkModes(net, [arr(x, xs)], instRef(x, xs, gm, bt, 1e-5), { msg: `InstanceNorm ${xs}` });
  }
});

test('InstanceNorm: axis 2 (swapaxes around the op), epsilon', () => {
  const xs = [2, 3, 4, 2];
  const x = rand(xs);
  const net = new nn.InstanceNorm({ axis: 2, epsilon: 1e-3, scale: true, inChannels: 4 });
  net.initialize();
  const gm = rand([4], 0.5, 2), bt = rand([4]);
  setP(net.gamma, gm);
  setP(net.beta, bt);
  // reference: swap axes 1 and 2, instance-normalize, swap back
  const xt = tfRun(() => tf.transpose(T(x, xs), [0, 2, 1, 3]));
  const yt = instRef(xt.data, xt.shape, gm, bt, 1e-3);
  const ref = tfRun(() => tf.transpose(T(yt.data, yt.shape), [0, 2, 1, 3]));
  checkModes(net, [arr(x, xs)], ref);
});

test('InstanceNorm: exported graph (InstanceNorm <prefix>fwd)', () => fresh(() => {
  const net = new nn.InstanceNorm();
  assert.equal(net.prefix, 'instancenorm0_');
  const g = graphOf(net, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'InstanceNorm', 'instancenorm0_fwd', { eps: '1e-05' });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'instancenorm0_gamma', 'instancenorm0_beta']);
  const g2 = graphOf(new nn.InstanceNorm({ axis: 2, prefix: 'i2_' }), dataVar());
  assert.deepEqual(g2.ops.map((n) => n.op), ['SwapAxis', 'InstanceNorm', 'SwapAxis']);
  assert.deepEqual(g2.ops[0].attrs, { dim1: '1', dim2: '2' });
  assertNode(g2.ops[1], 'InstanceNorm', 'i2_fwd', { eps: '1e-05' });
}));

test('GroupNorm: gamma/beta per group (num_groups,), vs tf.moments on (N, G, rest)', () => {
  const xs = [2, 4, 3, 2];
  const x = rand(xs);
  const G = 2;
  const net = new nn.GroupNorm({ numGroups: G, prefix: 'gn_' });
  assert.deepEqual(net.gamma.shape, [2]);
  assert.deepEqual(net.beta.shape, [2]);
  net.initialize();
  assert.deepEqual([...net.collectParams().keys()], ['gn_gamma', 'gn_beta']);
  assert.deepEqual(Array.from(net.gamma.data().toTypedArray()), [1, 1]);
  const gm = rand([G], 0.5, 2), bt = rand([G]);
  setP(net.gamma, gm);
  setP(net.beta, bt);
  const ref = tfRun(() => {
    const v = tf.reshape(T(x, xs), [2, G, 12]);
    const { mean, variance } = tf.moments(v, 2, true);
    const norm = tf.div(tf.sub(v, mean), tf.sqrt(tf.add(variance, 1e-5)));
    return tf.reshape(tf.add(tf.mul(norm, tf.reshape(T(gm, [G]), [1, G, 1])), tf.reshape(T(bt, [G]), [1, G, 1])), xs);
  });
  checkModes(net, [arr(x, xs)], ref);
  // default num_groups 1: whole sample normalized
  const one = new nn.GroupNorm({ epsilon: 1e-3 });
  one.initialize();
  const ref1 = tfRun(() => {
    const v = tf.reshape(T(x, xs), [2, 24]);
    const { mean, variance } = tf.moments(v, 1, true);
    return tf.reshape(tf.div(tf.sub(v, mean), tf.sqrt(tf.add(variance, 1e-3))), xs);
  });
  checkModes(one, [arr(x, xs)], ref1, { msg: 'num_groups 1' });
});

test('GroupNorm: exported graph (GroupNorm <prefix>groupnorm0)', () => fresh(() => {
  const net = new nn.GroupNorm({ numGroups: 2 });
  assert.equal(net.prefix, 'groupnorm0_');
  const g = graphOf(net, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'GroupNorm', 'groupnorm0_groupnorm0', { eps: '1e-05', num_groups: '2' });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'groupnorm0_gamma', 'groupnorm0_beta']);
  assert.equal(g.byName.groupnorm0_gamma.attrs.__shape__, '(2,)');
}));

// =================================================================================================
// Dropout, Flatten, Embedding
// =================================================================================================
test('Dropout: identity at inference (rate 0.5, axes, rate 0)', () => {
  const xs = [3, 4, 5];
  const x = rand(xs);
  for (const net of [new nn.Dropout(0.5), new nn.Dropout(0.3, { axes: [1] }), new nn.Dropout(0)]) {
    checkModes(net, [arr(x, xs)], { data: x, shape: xs }, { tol: { rtol: 0, atol: 0 } });
  }
});

test('Dropout: exported graphs (Dropout <prefix>fwd; rate 0 -> _copy <prefix>identity0)', () => fresh(() => {
  const d = new nn.Dropout(0.5);
  assert.equal(d.prefix, 'dropout0_');
  let g = graphOf(d, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'Dropout', 'dropout0_fwd', { axes: '()', cudnn_off: 'False', p: '0.5' });
  g = graphOf(new nn.Dropout(0.25, { axes: [1, 2], prefix: 'd_' }), dataVar());
  assertNode(g.ops[0], 'Dropout', 'd_fwd', { axes: '(1, 2)', cudnn_off: 'False', p: '0.25' });
  g = graphOf(new nn.Dropout(0, { prefix: 'z_' }), dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], '_copy', 'z_identity0', {});
}));

test('Flatten: (2, 3, 2, 2) -> (2, 12), 1-D -> (n, 1); graph Flatten <prefix>flatten0', () => {
  const xs = [2, 3, 2, 2];
  const x = rand(xs);
  checkModes(new nn.Flatten(), [arr(x, xs)], { data: x, shape: [2, 12] }, { tol: { rtol: 0, atol: 0 } });
  checkModes(new nn.Flatten(), [arr([1, 2, 3], [3])], { data: [1, 2, 3], shape: [3, 1] }, { tol: { rtol: 0, atol: 0 } });
  fresh(() => {
    const f = new nn.Flatten();
    assert.equal(f.prefix, 'flatten0_');
    const g = graphOf(f, dataVar());
    assert.equal(g.ops.length, 1);
    assertNode(g.ops[0], 'Flatten', 'flatten0_flatten0', {});
  });
});

test('Embedding: rows of the weight vs tf.gather; graph Embedding <prefix>fwd', () => {
  const net = new nn.Embedding(6, 4, { prefix: 'emb_' });
  assert.deepEqual(net.weight.shape, [6, 4]);
  net.initialize();
  assertUniform(net.weight.data().toTypedArray(), 0.07, 'embedding weight');
  const w = rand([6, 4]);
  setP(net.weight, w);
  const idx = [[0, 5, 2], [3, 3, 1]];
  const ref = tfRun(() => tf.gather(T(w, [6, 4]), tf.tensor(idx.flat(), [2, 3], 'int32')));
  checkModes(net, [nd.array(idx)], ref, { tol: { rtol: 0, atol: 0 } });
  fresh(() => {
    const e = new nn.Embedding(10, 3);
    assert.equal(e.prefix, 'embedding0_');
    const g = graphOf(e, dataVar());
    assert.equal(g.ops.length, 1);
    assertNode(g.ops[0], 'Embedding', 'embedding0_fwd', { dtype: 'float32', input_dim: '10', output_dim: '3', sparse_grad: 'False' });
    assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'embedding0_weight']);
    assert.equal(g.byName.embedding0_weight.attrs.__shape__, '(10, 3)');
  });
});

// =================================================================================================
// Activations
// =================================================================================================
const actX = () => {
  const x = rand([2, 3, 4], -3, 3);
  x[0] = 25; x[1] = -25; x[2] = 0; x[3] = 19.5; // softrelu threshold and saturation
  return x;
};

test('Activation: relu, sigmoid, tanh, softrelu, softsign vs tfjs', () => {
  const xs = [2, 3, 4];
  const x = actX();
  const refs = {
    relu: (t) => tf.relu(t),
    sigmoid: (t) => tf.sigmoid(t),
    tanh: (t) => tf.tanh(t),
    softrelu: (t) => tf.softplus(t),
    softsign: (t) => tf.div(t, tf.add(tf.abs(t), 1)),
  };
  for (const [act, fn] of Object.entries(refs)) {
    checkModes(new nn.Activation(act), [arr(x, xs)], tfRun(() => fn(T(x, xs))), { msg: act });
  }
});

test('Activation: exported graph (Activation <act><k>_fwd, hint = activation name)', () => fresh(() => {
  for (const act of ['relu', 'sigmoid', 'tanh', 'softrelu', 'softsign']) {
    const a = new nn.Activation(act);
    assert.equal(a.prefix, `${act}0_`);
    const g = graphOf(a, dataVar());
    assert.equal(g.ops.length, 1);
    assertNode(g.ops[0], 'Activation', `${act}0_fwd`, { act_type: act });
  }
  assert.equal(new nn.Activation('relu').prefix, 'relu1_');
  assert.throws(() => new nn.Activation(), mx.MXNetError);
}));

test('LeakyReLU: slope 0.1 and 0 vs tf.leakyRelu; negative slope rejected; graph', () => {
  const xs = [2, 3, 4];
  const x = actX();
  checkModes(new nn.LeakyReLU(0.1), [arr(x, xs)], tfRun(() => tf.leakyRelu(T(x, xs), 0.1)));
  checkModes(new nn.LeakyReLU(0), [arr(x, xs)], tfRun(() => tf.relu(T(x, xs))));
  assert.throws(() => new nn.LeakyReLU(-0.1), mx.MXNetError);
  fresh(() => {
    const l = new nn.LeakyReLU(0.1);
    assert.equal(l.prefix, 'leakyrelu0_');
    const g = graphOf(l, dataVar());
    assert.equal(g.ops.length, 1);
    assertNode(g.ops[0], 'LeakyReLU', 'leakyrelu0_fwd', { act_type: 'leaky', slope: '0.1' });
  });
});

test('PReLU: inChannels 1 (default alpha 0.25, then set) and 3 (per channel on axis 1)', () => {
  const xs = [2, 3, 4];
  const x = actX();
  const p1 = new nn.PReLU({ prefix: 'pr_' });
  assert.deepEqual([...p1.collectParams().keys()], ['pr_alpha']);
  assert.deepEqual(p1.alpha.shape, [1]);
  p1.initialize();
  assert.deepEqual(Array.from(p1.alpha.data().toTypedArray()), [0.25], 'Constant(0.25) init');
  const hand = (a) => ({ data: x.map((v) => (v > 0 ? v : a * v)), shape: xs });
  checkModes(p1, [arr(x, xs)], hand(0.25), { msg: 'alpha 0.25' });
  const p1b = new nn.PReLU();
  p1b.initialize();
  setP(p1b.alpha, [0.6]);
  checkModes(p1b, [arr(x, xs)], tfRun(() => tf.prelu(T(x, xs), tf.scalar(0.6))), { msg: 'alpha 0.6' });

  const p3 = new nn.PReLU({ inChannels: 3 });
  assert.deepEqual(p3.alpha.shape, [3]);
  p3.initialize();
  assert.deepEqual(Array.from(p3.alpha.data().toTypedArray()), [0.25, 0.25, 0.25]);
  const al = [0.1, 0.5, 2.0];
  setP(p3.alpha, al);
  for (const s of [xs, [2, 3, 2, 2]]) {
    const xv = rand(s);
    const bs = s.map((d, i) => (i === 1 ? 3 : 1));
    const ref = tfRun(() => {
      const t = T(xv, s);
      return tf.where(tf.greater(t, 0), t, tf.mul(t, tf.reshape(T(al, [3]), bs)));
    });
    p3.hybridize(false);
    checkModes(p3, [arr(xv, s)], ref, { msg: `inChannels 3 ${s}` });
  }
});

test('PReLU: exported graph (LeakyReLU prelu <prefix>fwd, alpha var __init__ constant 0.25)', () => fresh(() => {
  const p = new nn.PReLU();
  assert.equal(p.prefix, 'prelu0_');
  const g = graphOf(p, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'LeakyReLU', 'prelu0_fwd', { act_type: 'prelu' });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data', 'prelu0_alpha']);
  assert.equal(g.byName.prelu0_alpha.attrs.__init__, '["constant", {"value": 0.25}]');
  assert.equal(g.byName.prelu0_alpha.attrs.__shape__, '(1,)');
  const g3 = graphOf(new nn.PReLU({ inChannels: 3 }), dataVar());
  assert.equal(g3.byName.prelu1_alpha.attrs.__shape__, '(3,)');
}));

test('ELU (alpha 1 and 0.5), SELU, GELU (erf), Swish (beta 1 and 2) vs tfjs', () => {
  const xs = [2, 3, 4];
  const x = rand(xs, -4, 4);
  x[0] = 0;
  const elu = (a) => (t) => tf.where(tf.greater(t, 0), t, tf.mul(tf.expm1(t), a));
  checkModes(new nn.ELU(), [arr(x, xs)], tfRun(() => elu(1)(T(x, xs))), { msg: 'ELU(1)' });
  checkModes(new nn.ELU(), [arr(x, xs)], tfRun(() => tf.elu(T(x, xs))), { msg: 'ELU vs tf.elu' });
  checkModes(new nn.ELU(0.5), [arr(x, xs)], tfRun(() => elu(0.5)(T(x, xs))), { msg: 'ELU(0.5)' });
  checkModes(new nn.SELU(), [arr(x, xs)], tfRun(() => tf.selu(T(x, xs))), { msg: 'SELU' });
  checkModes(new nn.GELU(), [arr(x, xs)], tfRun(() => {
    const t = T(x, xs);
    return tf.mul(tf.mul(t, 0.5), tf.add(tf.erf(tf.div(t, Math.SQRT2)), 1));
  }), { msg: 'GELU' });
  checkModes(new nn.Swish(), [arr(x, xs)], tfRun(() => tf.mul(T(x, xs), tf.sigmoid(T(x, xs)))), { msg: 'Swish(1)' });
  checkModes(new nn.Swish(2), [arr(x, xs)], tfRun(() => tf.mul(T(x, xs), tf.sigmoid(tf.mul(T(x, xs), 2)))), { msg: 'Swish(2)' });
});

test('ELU/SELU/GELU/Swish: exported graphs', () => fresh(() => {
  const e = new nn.ELU();
  assert.equal(e.prefix, 'elu0_');
  let g = graphOf(e, dataVar());
  assert.equal(g.ops.length, 1);
  assertNode(g.ops[0], 'LeakyReLU', 'elu0_leakyrelu0', { act_type: 'elu', slope: '1.0' });
  g = graphOf(new nn.ELU(0.5, { prefix: 'e_' }), dataVar());
  assertNode(g.ops[0], 'LeakyReLU', 'e_leakyrelu0', { act_type: 'elu', slope: '0.5' });
  const s = new nn.SELU();
  assert.equal(s.prefix, 'selu0_');
  assertNode(graphOf(s, dataVar()).ops[0], 'LeakyReLU', 'selu0_fwd', { act_type: 'selu' });
  const ge = new nn.GELU();
  assert.equal(ge.prefix, 'gelu0_');
  assertNode(graphOf(ge, dataVar()).ops[0], 'LeakyReLU', 'gelu0_fwd', { act_type: 'gelu' });
  const sw = new nn.Swish();
  assert.equal(sw.prefix, 'swish0_');
  g = graphOf(sw, dataVar());
  assert.equal(g.ops.length, 3);
  assertNode(g.ops[0], '_mul_scalar', 'swish0__mulscalar0', { scalar: '1.0' });
  assert.deepEqual(g.inputsOf(g.ops[0]), ['data']);
  assertNode(g.ops[1], 'sigmoid', 'swish0_fwd', {});
  assert.deepEqual(g.inputsOf(g.ops[1]), ['swish0__mulscalar0']);
  assertNode(g.ops[2], 'elemwise_mul', 'swish0__mul0', {});
  assert.deepEqual(g.inputsOf(g.ops[2]), ['data', 'swish0_fwd']);
  g = graphOf(new nn.Swish(2, { prefix: 'w_' }), dataVar());
  assertNode(g.ops[0], '_mul_scalar', 'w__mulscalar0', { scalar: '2.0' });
}));

// =================================================================================================
// ReflectionPad2D
// =================================================================================================
test('ReflectionPad2D: int and 8-tuple padding vs tf.mirrorPad(reflect); graph Pad <prefix>pad0', () => {
  const xs = [2, 2, 4, 5];
  const x = rand(xs);
  checkModes(new nn.ReflectionPad2D(2), [arr(x, xs)],
    tfRun(() => tf.mirrorPad(T(x, xs), [[0, 0], [0, 0], [2, 2], [2, 2]], 'reflect')), { tol: { rtol: 0, atol: 0 } });
  checkModes(new nn.ReflectionPad2D([0, 0, 0, 0, 1, 3, 2, 1]), [arr(x, xs)],
    tfRun(() => tf.mirrorPad(T(x, xs), [[0, 0], [0, 0], [1, 3], [2, 1]], 'reflect')), { tol: { rtol: 0, atol: 0 } });
  // hand-worked 1-D row [1 2 3] padded by 1 each side -> [2 1 2 3 2]
  const y = new nn.ReflectionPad2D(1)(arr([1, 2, 3, 4, 5, 6], [1, 1, 2, 3]));
  assert.deepEqual(Array.from(y.toTypedArray()), [5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5, 2, 1, 2, 3, 2]);
  fresh(() => {
    const p = new nn.ReflectionPad2D(2);
    assert.equal(p.prefix, 'reflectionpad2d0_');
    const g = graphOf(p, dataVar());
    assert.equal(g.ops.length, 1);
    assertNode(g.ops[0], 'Pad', 'reflectionpad2d0_pad0', { mode: 'reflect', pad_width: '(0, 0, 0, 0, 2, 2, 2, 2)' });
  });
  assert.throws(() => new nn.ReflectionPad2D([1, 2]), mx.MXNetError);
});

// =================================================================================================
// Lambda / HybridLambda
// =================================================================================================
test('Lambda: an nd function name and a function (imperative only: a Block)', () => {
  const xs = [2, 5];
  const x = rand(xs, -2, 2);
  const l1 = new nn.Lambda('tanh');
  assert.ok(!(l1 instanceof gluon.HybridBlock));
  assertClose(l1(arr(x, xs)).toTypedArray(), tfRun(() => tf.tanh(T(x, xs))).data, { rtol: 1e-5, atol: 1e-5 });
  const l2 = new nn.Lambda((a) => nd.relu(a));
  assertClose(l2(arr(x, xs)).toTypedArray(), tfRun(() => tf.relu(T(x, xs))).data, { rtol: 0, atol: 0 });
  const l3 = new nn.Lambda((a, b) => nd.broadcast_add(a, b));
  assertClose(l3(arr(x, xs), arr([1, 2, 3, 4, 5], [1, 5])).toTypedArray(), x.map((v, i) => v + (i % 5) + 1), { rtol: 1e-6, atol: 1e-6 });
  assert.throws(() => new nn.Lambda(42), mx.MXNetError);
  assert.throws(() => new nn.HybridSequential().add(new nn.Lambda('tanh')), mx.MXNetError, 'a HybridBlock only takes HybridBlock children');
  fresh(() => assert.equal(new nn.Lambda('tanh').prefix, 'lambda0_'));
});

test('Lambda/HybridLambda: an unknown function name is rejected at construction (as Gluon asserts)',
  {}, () => {
    assert.throws(() => new nn.Lambda('no_such_function'), mx.MXNetError);
    assert.throws(() => new nn.HybridLambda('no_such_function'), mx.MXNetError);
  });

test('Lambda/HybridLambda: an unknown function name fails on the call with a clear error', () => {
  assert.throws(() => new nn.Lambda('no_such_function')(nd.ones([2])), (e) => e instanceof mx.MXNetError && /no_such_function/.test(e.message));
  assert.throws(() => new nn.HybridLambda('no_such_function')(nd.ones([2])), (e) => e instanceof mx.MXNetError && /no_such_function/.test(e.message));
});

test('HybridLambda: a name and a function f(F, x), both modes; graphs <prefix><hint>0', () => {
  const xs = [2, 3, 4];
  const x = rand(xs, -2, 2);
  checkModes(new nn.HybridLambda('tanh'), [arr(x, xs)], tfRun(() => tf.tanh(T(x, xs))), { msg: 'name' });
  const fn = (F, v) => F.LeakyReLU(v, { act_type: 'leaky', slope: 0.2 });
  checkModes(new nn.HybridLambda(fn), [arr(x, xs)], tfRun(() => tf.leakyRelu(T(x, xs), 0.2)), { msg: 'function' });
  const fn2 = (F, v) => F.broadcast_mul(F.sigmoid(v), F.relu(v));
  checkModes(new nn.HybridLambda(fn2), [arr(x, xs)], tfRun(() => tf.mul(tf.sigmoid(T(x, xs)), tf.relu(T(x, xs)))), { msg: 'composite' });
  fresh(() => {
    const h = new nn.HybridLambda('tanh');
    assert.equal(h.prefix, 'hybridlambda0_');
    let g = graphOf(h, dataVar());
    assert.equal(g.ops.length, 1);
    assertNode(g.ops[0], 'tanh', 'hybridlambda0_tanh0', {});
    g = graphOf(new nn.HybridLambda(fn), dataVar());
    assertNode(g.ops[0], 'LeakyReLU', 'hybridlambda1_leakyrelu0', { act_type: 'leaky', slope: '0.2' });
    g = graphOf(new nn.HybridLambda(fn2, { prefix: 'h_' }), dataVar());
    assert.deepEqual(g.ops.map((n) => n.name), ['h_sigmoid0', 'h_relu0', 'h_broadcast_mul0']);
  });
});

// =================================================================================================
// Containers
// =================================================================================================
test('Sequential: Dense(tanh) -> Lambda -> Dense chained, vs tf', () => {
  const xs = [3, 4];
  const x = rand(xs);
  const net = new nn.Sequential({ prefix: 'seq_' });
  net.nameScope(() => {
    net.add(new nn.Dense(5, { activation: 'tanh' }), new nn.Lambda((v) => nd.relu(v)), new nn.Dense(2, { inUnits: 5 }));
  });
  assert.equal(net.length, 3);
  net.initialize();
  net(arr(x, xs));
  assert.deepEqual([...net.collectParams().keys()], ['seq_dense0_weight', 'seq_dense0_bias', 'seq_dense1_weight', 'seq_dense1_bias']);
  const w1 = rand([5, 4]), b1 = rand([5]), w2 = rand([2, 5]), b2 = rand([2]);
  setP(net.at(0).weight, w1);
  setP(net.at(0).bias, b1);
  setP(net.at(2).weight, w2);
  setP(net.at(2).bias, b2);
  const ref = tfRun(() => {
    const h = tf.relu(tf.tanh(tf.add(tf.matMul(T(x, xs), T(w1, [5, 4]), false, true), T(b1, [5]))));
    return tf.add(tf.matMul(h, T(w2, [2, 5]), false, true), T(b2, [2]));
  });
  const y = net(arr(x, xs));
  assert.deepEqual(y.shape, [3, 2]);
  assertClose(y.toTypedArray(), ref.data, { rtol: 1e-5, atol: 1e-5 });
  // Sequential.hybridize hybridizes the HybridBlock children; results unchanged
  net.hybridize();
  assertClose(net(arr(x, xs)).toTypedArray(), y.toTypedArray(), { rtol: 1e-6, atol: 1e-6 });
  assert.throws(() => net(sym.var('data')), Error, 'a Lambda cannot take a Symbol');
});

test('HybridSequential: Conv2D -> BatchNorm -> relu -> MaxPool2D -> Flatten -> Dense, both modes vs tf', () => {
  const xs = [2, 2, 6, 6];
  const x = rand(xs);
  const net = new nn.HybridSequential({ prefix: 'net_' });
  net.nameScope(() => {
    net.add(new nn.Conv2D(3, 3, { padding: 1 }), new nn.BatchNorm(), new nn.Activation('relu'), new nn.MaxPool2D(2), new nn.Flatten(), new nn.Dense(4));
  });
  net.initialize();
  net(arr(x, xs));
  assert.deepEqual([...net.collectParams().keys()], [
    'net_conv0_weight', 'net_conv0_bias', 'net_batchnorm0_gamma', 'net_batchnorm0_beta', 'net_batchnorm0_running_mean',
    'net_batchnorm0_running_var', 'net_dense0_weight', 'net_dense0_bias',
  ]);
  const [conv, bn, , , , dense] = [0, 1, 2, 3, 4, 5].map((i) => net.at(i));
  assert.deepEqual(dense.weight.shape, [4, 27]);
  const cw = rand([3, 2, 3, 3]), cb = rand([3]);
  const bp = { gamma: rand([3], 0.5, 2), beta: rand([3]), mean: rand([3]), variance: rand([3], 0.2, 2) };
  const dw = rand([4, 27]), db = rand([4]);
  setP(conv.weight, cw); setP(conv.bias, cb);
  setP(bn.gamma, bp.gamma); setP(bn.beta, bp.beta); setP(bn.running_mean, bp.mean); setP(bn.running_var, bp.variance);
  setP(dense.weight, dw); setP(dense.bias, db);
  const c = convRef(x, xs, cw, [3, 2, 3, 3], cb, { stride: [1, 1], pad: [1, 1], dilate: [1, 1] });
  const b = bnRef(c.data, c.shape, 1, bp);
  const r = tfRun(() => tf.relu(T(b.data, b.shape)));
  const p = poolRef(r.data, r.shape, { kernel: [2, 2], stride: [2, 2], pad: [0, 0], type: 'max' });
  const ref = tfRun(() => tf.add(tf.matMul(T(p.data, [2, 27]), T(dw, [4, 27]), false, true), T(db, [4])));
  checkModes(net, [arr(x, xs)], ref);
});

test('HybridSequential hybridized before the first call: deferred init through the cached op', () => {
  const xs = [2, 3, 5];
  const x = rand(xs);
  const net = new nn.HybridSequential();
  net.nameScope(() => {
    net.add(new nn.Conv1D(4, 3, { padding: 1 }), new nn.BatchNorm(), new nn.GELU(), new nn.GlobalAvgPool1D(), new nn.Dense(2));
  });
  net.initialize();
  net.hybridize();
  assert.deepEqual(net(arr(x, xs)).shape, [2, 2]);
  const [conv, bn, , , dense] = [0, 1, 2, 3, 4].map((i) => net.at(i));
  assert.deepEqual(conv.weight.shape, [4, 3, 3]);
  assert.deepEqual(bn.running_var.shape, [4]);
  assert.deepEqual(dense.weight.shape, [2, 4]);
  const cw = rand([4, 3, 3]), cb = rand([4]), dw = rand([2, 4]), db = rand([2]);
  const bp = { gamma: rand([4], 0.5, 2), beta: rand([4]), mean: rand([4]), variance: rand([4], 0.2, 2) };
  setP(conv.weight, cw); setP(conv.bias, cb);
  setP(bn.gamma, bp.gamma); setP(bn.beta, bp.beta); setP(bn.running_mean, bp.mean); setP(bn.running_var, bp.variance);
  setP(dense.weight, dw); setP(dense.bias, db);
  const c = convRef(x, xs, cw, [4, 3, 3], cb, { stride: [1], pad: [1], dilate: [1] });
  const b = bnRef(c.data, c.shape, 1, bp);
  const ref = tfRun(() => {
    const t = T(b.data, b.shape);
    const gl = tf.mul(tf.mul(t, 0.5), tf.add(tf.erf(tf.div(t, Math.SQRT2)), 1));
    return tf.add(tf.matMul(tf.mean(gl, 2), T(dw, [2, 4]), false, true), T(db, [2]));
  });
  const y = net(arr(x, xs));
  assertClose(y.toTypedArray(), ref.data, { rtol: 1e-5, atol: 1e-5, msg: 'hybridized' });
  net.hybridize(false);
  assertClose(net(arr(x, xs)).toTypedArray(), y.toTypedArray(), { rtol: 1e-6, atol: 1e-6, msg: 'imperative vs hybridized' });
});

test('HybridLambda with two inputs f(F, a, b), both modes', () => {
  const a = rand([2, 3]), b = rand([1, 3]);
  const h = new nn.HybridLambda((F, u, v) => F.broadcast_mul(F.broadcast_add(u, v), u));
  const ref = tfRun(() => tf.mul(tf.add(T(a, [2, 3]), T(b, [1, 3])), T(a, [2, 3])));
  checkModes(h, [arr(a, [2, 3]), arr(b, [1, 3])], ref);
  const g = JSON.parse(new nn.HybridLambda((F, u, v) => F.broadcast_add(u, v), { prefix: 'two_' })(sym.var('a'), sym.var('b')).tojson());
  assert.deepEqual(g.nodes.map((n) => n.name), ['a', 'b', 'two_broadcast_add0']);
});

test('dtype float64: Dense and Embedding (dtype option) and Dense.cast vs tf', () => {
  const xs = [3, 4];
  const x = rand(xs);
  const d = new nn.Dense(2, { dtype: 'float64', inUnits: 4 });
  d.initialize();
  assert.equal(d.weight.data().dtype, 'float64');
  const w = rand([2, 4]), b = rand([2]);
  setP(d.weight, w);
  setP(d.bias, b);
  const ref = tfRun(() => tf.add(tf.matMul(T(x, xs), T(w, [2, 4]), false, true), T(b, [2])));
  const y = checkModes(d, [nd.array(x, { shape: xs, dtype: 'float64' })], ref);
  assert.equal(y.dtype, 'float64');
  const e = new nn.Embedding(4, 3, { dtype: 'float64' });
  e.initialize();
  const ew = rand([4, 3]);
  setP(e.weight, ew);
  const ye = checkModes(e, [nd.array([[3, 0], [1, 1]])], tfRun(() => tf.gather(T(ew, [4, 3]), tf.tensor([3, 0, 1, 1], [2, 2], 'int32'))));
  assert.equal(ye.dtype, 'float64');
  const c = new nn.Dense(2, { inUnits: 4 });
  c.initialize();
  setP(c.weight, w);
  setP(c.bias, b);
  c.cast('float64');
  assert.equal(c.weight.data().dtype, 'float64');
  const yc = checkModes(c, [nd.array(x, { shape: xs, dtype: 'float64' })], ref);
  assert.equal(yc.dtype, 'float64');
  const bn = new nn.BatchNorm({ inChannels: 2 });
  bn.cast('float16');
  assert.equal(bn.gamma.dtype, 'float32', 'BatchNorm.cast(float16) keeps float32 parameters');
});

test('HybridSequential: exported graph chains children with nested prefixes', () => fresh(() => {
  const net = new nn.HybridSequential();
  net.nameScope(() => {
    net.add(new nn.Dense(8, { activation: 'relu' }), new nn.Dropout(0.5), new nn.Dense(2));
  });
  assert.equal(net.prefix, 'hybridsequential0_');
  const g = graphOf(net, dataVar());
  assert.deepEqual(g.ops.map((n) => [n.op, n.name]), [
    ['FullyConnected', 'hybridsequential0_dense0_fwd'], ['Activation', 'hybridsequential0_dense0_relu_fwd'],
    ['Dropout', 'hybridsequential0_dropout0_fwd'], ['FullyConnected', 'hybridsequential0_dense1_fwd'],
  ]);
  assert.deepEqual(g.inputsOf(g.ops[2]), ['hybridsequential0_dense0_relu_fwd']);
  assert.deepEqual(g.inputsOf(g.ops[3]), ['hybridsequential0_dropout0_fwd', 'hybridsequential0_dense1_weight', 'hybridsequential0_dense1_bias']);
}));
