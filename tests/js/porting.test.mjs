// Porting Gluon code by js-api.md's rules (issue: "Gluon code ports line by line"): the argument
// binder over every nn layer, each example call that used to fail, hybridForward's parameter
// slot (rule 6), container indexing, ParameterDict indexing, contexts, op hooks' names.
// Independent references: MXNet's documented results (its own unit tests' expected names),
// TensorFlow.js pooling, hand-worked values, and the layer built with default arguments.
import test from 'node:test';
import assert from 'node:assert/strict';
// the API's own modules (not the entry's bundle of them): the binder's internals imported below
// (signature.mjs, signatures.mjs) are then the ones the API's classes registered their types with
import * as mx from '../../dist/api.mjs';
import { SIGNATURES } from '../../dist/signatures.mjs';
import { tf } from './oracle.mjs';

const { nd, sym, gluon, init } = mx;
const { nn } = gluon;
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));

// ---- the binder over every nn layer ----------------------------------------------------------
// A valid non-default value for each Python parameter name (the layers' arguments).
const ALT = {
  units: 7, activation: 'tanh', use_bias: false, flatten: false, dtype: 'float64', weight_initializer: 'ones',
  bias_initializer: 'ones', in_units: 5, rate: 0.3, axes: [1], axis: 2, momentum: 0.8, epsilon: 1e-3, center: false,
  scale: true, use_global_stats: true, beta_initializer: 'ones', gamma_initializer: 'zeros', running_mean_initializer: 'ones',
  running_variance_initializer: 'zeros', in_channels: 4, input_dim: 11, output_dim: 3, sparse_grad: true, num_groups: 2,
  function: 'tanh', alpha: 0.2, alpha_initializer: 'ones', beta: 2.0, channels: 8, kernel_size: 3, strides: 3, padding: 1,
  output_padding: 1, dilation: 2, groups: 2, pool_size: 3, ceil_mode: true, count_include_pad: false, prefix: 'alt_',
};
// Required parameters get these when another parameter is under test.
const BASE = { units: 6, rate: 0.5, input_dim: 10, output_dim: 4, function: 'relu', activation: 'relu', alpha: 0.1, channels: 6, kernel_size: 2 };
// InstanceNorm's scale defaults to false: its alternative is true; BatchNorm's is true -> false.
const altFor = (layer, p) => {
  if (p.name === 'scale') return !p.default;
  if (p.name === 'layout') return { 1: 'NWC', 2: 'NHWC', 3: 'NDHWC' }[String(p.default).length - 2];
  if (p.name === 'function' && layer.startsWith('nn.Lambda')) return 'exp';
  return ALT[p.name];
};
const layers = Object.keys(SIGNATURES).filter((k) => k.startsWith('nn.'));

// What a layer is, as a user can observe it: its exported graph (ops, attributes, parameter
// variables with shapes, dtypes, initializers) for a Symbol input, or for non-hybrid blocks
// their prefix and function.
function fingerprint(block) {
  if (block instanceof gluon.HybridBlock && !(block instanceof nn.HybridSequential)) {
    const graph = mx.name.withNameManager(new mx.name.NameManager(), () => block(sym.var('data')).tojson());
    // what the export does not show: gradient requests (BatchNorm's center/scale)
    const reqs = [...block.collectParams().values()].map((p) => `${p.name}:${p.gradReq}`).join(',');
    return `${graph}\n${reqs}`;
  }
  return JSON.stringify({ prefix: block.prefix, fn: block._fnName ?? null, n: block.length ?? null });
}
function build(cls, args) { return new cls(...args); }

test('every nn layer: each positional parameter given positionally, by camelCase and by snake_case name builds the same layer', () => {
  let checked = 0;
  for (const name of layers) {
    const sig = SIGNATURES[name];
    const cls = nn[name.slice(3)];
    assert.ok(cls, `${name} is exported`);
    const required = sig.positional.filter((p) => p.required);
    for (let i = 0; i < sig.positional.length; i++) {
      const p = sig.positional[i];
      if (p.name === 'params') continue;
      if (p.name === 'layout' && /Conv1D/.test(name)) continue; // Gluon's Conv1D takes NCW only
      const v = altFor(name, p);
      assert.notEqual(v, undefined, `${name}: a test value for ${p.name}`);
      // positionally: the parameters before it at their defaults (required ones from BASE)
      // output_padding must stay below the stride (MXNet's Deconvolution): stride 2 in every form
      const extra = p.name === 'output_padding' ? { strides: 2 } : {};
      const pos = sig.positional.slice(0, i).map((q) => (q.name in extra ? extra[q.name] : q.required ? BASE[q.name] : q.default));
      const prefixOpt = p.name === 'prefix' ? {} : { prefix: 'L_' };
      const hasPrefixKw = sig.all.some((q) => q.name === 'prefix');
      const opts = hasPrefixKw ? prefixOpt : {};
      const named = { ...opts, ...extra };
      const reqPos = required.filter((q) => q !== p).map((q) => BASE[q.name]);
      const forms = {
        positional: [...pos, v, ...sig.positional.slice(i + 1).filter((q) => q.required).map((q) => BASE[q.name]), opts],
        camelCase: [...(p.required ? [] : reqPos), { ...(p.required ? Object.fromEntries(required.filter((q) => q !== p).map((q) => [q.camel, BASE[q.name]])) : {}), [p.camel]: v, ...named }],
        snake_case: [{ ...Object.fromEntries(required.filter((q) => q !== p).map((q) => [q.name, BASE[q.name]])), [p.name]: v, ...named }],
      };
      const prints = Object.fromEntries(Object.entries(forms).map(([form, args]) => [form, fingerprint(build(cls, args))]));
      assert.equal(prints.camelCase, prints.positional, `${name}(${p.name}): by camelCase name = positionally`);
      assert.equal(prints.snake_case, prints.positional, `${name}(${p.name}): by snake_case name = positionally`);
      // the value was not silently dropped: the layer differs from one with the default
      if (!p.required) {
        const dflt = fingerprint(build(cls, [...reqPos, named]));
        assert.notEqual(prints.positional, dflt, `${name}(${p.name}=${JSON.stringify(v)}) differs from the default layer`);
      }
      checked++;
    }
  }
  assert.ok(checked > 150, `${checked} parameter checks`);
});

test('every nn layer: an unknown name, a missing required argument, a wrong type and too many positionals throw MXNetError naming it', () => {
  for (const name of layers) {
    const sig = SIGNATURES[name];
    const cls = nn[name.slice(3)];
    const req = sig.positional.filter((p) => p.required).map((p) => BASE[p.name]);
    throwsNaming(() => new cls(...req, { bogusOption: 1 }), /unknown argument 'bogusOption'/);
    for (const p of sig.positional.filter((q) => q.required)) {
      const args = Object.fromEntries(sig.positional.filter((q) => q.required && q !== p).map((q) => [q.camel, BASE[q.name]]));
      throwsNaming(() => new cls(args), new RegExp(`missing required argument '${p.name}'`));
    }
    throwsNaming(() => new cls(...new Array(sig.positional.length + 1).fill(1)), /positional argument/);
  }
  throwsNaming(() => new nn.Dense('10'), /'units' must be an integer/);
  throwsNaming(() => new nn.Dense(10, { useBias: 'no' }), /'use_bias' must be a boolean/);
  throwsNaming(() => new nn.Conv2D(6, 5, { kernelSize: 3 }), /multiple values for argument 'kernel_size'/);
  throwsNaming(() => new nn.Conv2D(6, -3), /kernel_size must be positive/);
  throwsNaming(() => new nn.Dropout(1.5), /rate must be in \[0, 1\]/);
});

// ---- the examples that failed ---------------------------------------------------------------
test('new nn.MaxPool2D(3, 2): pool_size 3, strides 2 (MXNet: a 7x7 input gives 3x3), equal to tf.maxPool', () => {
  const x = nd.array(Float32Array.from({ length: 49 }, (_, i) => Math.sin(i * 1.7)), { shape: [1, 1, 7, 7] });
  const pool = new nn.MaxPool2D(3, 2);
  const y = pool(x);
  assert.deepEqual(y.shape, [1, 1, 3, 3]);
  const ref = tf.maxPool(tf.tensor4d(x.toTypedArray(), [1, 7, 7, 1]), 3, 2, 'valid').dataSync();
  assert.deepEqual(Array.from(y.toTypedArray()), Array.from(ref));
  const attrs = JSON.parse(pool(sym.var('data')).tojson()).nodes[1].attrs;
  assert.equal(attrs.stride, '(2, 2)');
  assert.equal(attrs.kernel, '(3, 3)');
});

test('new nn.MaxPool1D(3, 2, {layout: "NWC"}): channel-last 1-D pooling with stride 2, equal to tf.maxPool', () => {
  const x = nd.array(Float32Array.from({ length: 2 * 9 * 3 }, (_, i) => Math.cos(i)), { shape: [2, 9, 3] });
  const y = new nn.MaxPool1D(3, 2, { layout: 'NWC' })(x);
  assert.deepEqual(y.shape, [2, 4, 3]);
  const ref = tf.maxPool(tf.tensor4d(x.toTypedArray(), [2, 1, 9, 3]), [1, 3], [1, 2], 'valid').dataSync();
  assert.deepEqual(Array.from(y.toTypedArray()), Array.from(ref));
});

test('layers by name: Conv2D({channels, kernelSize}), Embedding({inputDim, outputDim}), Dropout({rate}), HybridSequential("pool_")', () => {
  const c = new nn.Conv2D({ channels: 6, kernelSize: 5 });
  assert.equal(c(sym.var('data')).listArguments().length, 3);
  const cAttrs = JSON.parse(c(sym.var('data')).tojson()).nodes.find((n) => n.op === 'Convolution').attrs;
  assert.equal(cAttrs.num_filter, '6');
  assert.equal(cAttrs.kernel, '(5, 5)');
  const e = new nn.Embedding({ inputDim: 10, outputDim: 4 });
  e.initialize();
  assert.deepEqual(e.weight.shape, [10, 4]);
  assert.deepEqual(e(nd.array([1, 3])).shape, [2, 4]);
  const d = new nn.Dropout({ rate: 0.25 });
  assert.equal(JSON.parse(d(sym.var('data')).tojson()).nodes[1].attrs.p, '0.25');
  const s = new nn.HybridSequential('pool_');
  assert.equal(s.prefix, 'pool_');
  s.nameScope(() => s.add(new nn.MaxPool2D()));
  assert.equal(s[0].name, 'pool_pool0');
});

test('initializers: positional instance, by-name options, Constant of a list / typed array; values from the formulas', () => {
  // net.initialize(new mx.init.Xavier()): uniform in [-s, s], s = sqrt(3 / ((fan_in + fan_out) / 2))
  const net = new nn.Dense(300, { inUnits: 200 });
  net.initialize(new init.Xavier());
  const w = net.weight.data().toTypedArray();
  const s = Math.sqrt(3 / ((200 + 300) / 2));
  assert.ok(w.every((v) => Math.abs(v) <= s + 1e-7), 'within the Xavier bound');
  const varW = w.reduce((a, v) => a + v * v, 0) / w.length;
  assert.ok(Math.abs(varW - (s * s) / 3) / ((s * s) / 3) < 0.05, `variance ${varW} vs ${(s * s) / 3}`);
  assert.ok(net.bias.data().toTypedArray().every((v) => v === 0), 'bias zeros');
  // new init.Normal({sigma: 0.01})
  const n = new gluon.Parameter('n', { shape: [40000], init: new init.Normal({ sigma: 0.01 }) });
  n.initialize();
  const nv = n.data().toTypedArray();
  const std = Math.sqrt(nv.reduce((a, v) => a + v * v, 0) / nv.length);
  assert.ok(Math.abs(std - 0.01) < 0.0005, `std ${std}`);
  assert.equal(new init.Normal({ sigma: 0.01 }).dumps(), '["normal", {"sigma": 0.01}]');
  // Constant([2]) broadcasts; a typed array row broadcasts over rows
  const c = new gluon.Parameter('c', { shape: [2, 3], init: new init.Constant([2]) });
  c.initialize();
  assert.deepEqual(c.data().toArray(), [[2, 2, 2], [2, 2, 2]]);
  const r = new gluon.Parameter('r', { shape: [2, 3], init: new init.Constant(new Float32Array([1, 2, 3])) });
  r.initialize();
  assert.deepEqual(r.data().toArray(), [[1, 2, 3], [1, 2, 3]]);
  assert.equal(new init.Constant([2]).dumps(), '["constant", {"value": [2]}]');
  // an initializer from its dumps() text goes through the same signature
  assert.equal(init.create('["xavier", {"rnd_type": "gaussian", "factor_type": "in", "magnitude": 2}]').dumps(),
    '["xavier", {"rnd_type": "gaussian", "factor_type": "in", "magnitude": 2}]');
  throwsNaming(() => new init.Normal({ sigma: 0.01, mean: 0 }), /unknown argument 'mean'/);
  // Mixed: the first matching pattern decides
  const mixed = new init.Mixed(['.*bias', '.*'], [new init.Constant(5), 'zeros']);
  // (a parameter's own initializer wins over the one given to initialize(), as in MXNet: the
  // bias initializer is null here so that Mixed decides)
  const md = new nn.Dense(2, { inUnits: 2, biasInitializer: null });
  md.initialize(mixed);
  assert.deepEqual(md.bias.data().toArray(), [5, 5]);
  assert.deepEqual(md.weight.data().toArray(), [[0, 0], [0, 0]]);
});

test('new gluon.SymbolBlock({outputs, inputs}) and positionally; a row_sparse variable is refused as MXNet does', () => {
  const data = sym.var('data');
  const out = sym.FullyConnected(data, { num_hidden: 2, name: 'fc' });
  const a = new gluon.SymbolBlock({ outputs: out, inputs: data });
  const b = new gluon.SymbolBlock(out, data);
  assert.deepEqual([...a.collectParams().keys()], ['fc_weight', 'fc_bias']);
  assert.deepEqual([...b.collectParams().keys()], ['fc_weight', 'fc_bias']);
  const w = sym.var('w', { stype: 'row_sparse' });
  throwsNaming(() => new gluon.SymbolBlock(sym.dot(data, w), data), /doesn't support Parameter 'w' because its storage type is 'row_sparse'/);
});

test('gluon.nn re-exports Block, HybridBlock and SymbolBlock as Python does', () => {
  assert.equal(nn.Block, gluon.Block);
  assert.equal(nn.HybridBlock, gluon.HybridBlock);
  assert.equal(nn.SymbolBlock, gluon.SymbolBlock);
});

// ---- rule 6 -----------------------------------------------------------------------------------------
class TwoInputs extends gluon.HybridBlock {
  constructor(o) {
    super(o);
    this.nameScope(() => { this.w = this.params.get('w', { shape: [3], init: new init.Constant([1, 2, 3]) }); });
  }
  hybridForward(F, a, b = null, params) {
    this.seen = b === null ? 'null' : 'array';
    const y = F.broadcast_mul(a, params.w);
    return b === null ? y : F.broadcast_add(y, b);
  }
}

test('rule 6: hybridForward(F, a, b = null, params): net(a) passes b = null and the parameters in their slot, imperative and hybridized', () => {
  const net = new TwoInputs();
  net.initialize();
  const a = nd.array([[1, 1, 1], [2, 2, 2]]);
  const b = nd.array([10, 20, 30]);
  assert.deepEqual(net(a).toArray(), [[1, 2, 3], [2, 4, 6]]);
  assert.equal(net.seen, 'null');
  assert.deepEqual(net(a, b).toArray(), [[11, 22, 33], [12, 24, 36]]);
  net.hybridize();
  assert.deepEqual(net(a).toArray(), [[1, 2, 3], [2, 4, 6]]);
  // a trailing None difference does not break the hybridized block: net(a, null) is net(a)
  assert.deepEqual(net(a, null).toArray(), [[1, 2, 3], [2, 4, 6]]);
  const net2 = new TwoInputs();
  net2.initialize();
  net2.hybridize();
  assert.deepEqual(net2(a, b).toArray(), [[11, 22, 33], [12, 24, 36]]);
  // then with fewer inputs: traced again, and called with the new graph's one input
  assert.deepEqual(net2(a).toArray(), [[1, 2, 3], [2, 4, 6]]);
  assert.deepEqual(net2(a, b).toArray(), [[11, 22, 33], [12, 24, 36]]);
});

test('rule 6: numbers and strings pass through to hybridForward un-hybridized; hybridized they are refused as Gluon does', () => {
  class Scale extends gluon.HybridBlock {
    hybridForward(F, x, factor, mode, params) {
      void params;
      return mode === 'double' ? F._mul_scalar(x, { scalar: 2 * factor }) : F._mul_scalar(x, { scalar: factor });
    }
  }
  const s = new Scale();
  const x = nd.array([1, 2]);
  assert.deepEqual(s(x, 3, 'double').toArray(), [6, 12]);
  assert.deepEqual(s(x, 3, 'single').toArray(), [3, 6]);
  s.hybridize();
  throwsNaming(() => s(x, 3, 'double'), /must be \(nested\) list of Symbol or NDArray, but got 3 of type number/);
});

test('rule 6: a block without parameters declaring hybridForward(F, x, y = null) gets y = null, not the parameters', () => {
  class Opt extends gluon.HybridBlock {
    hybridForward(F, x, y = null) { return y === null ? F.relu(x) : F.broadcast_add(x, y); }
  }
  const o = new Opt();
  assert.deepEqual(o(nd.array([-1, 2])).toArray(), [0, 2]);
  o.hybridize();
  assert.deepEqual(o(nd.array([-1, 2])).toArray(), [0, 2]);
  assert.deepEqual(o(nd.array([-1, 2]), nd.array([1, 1])).toArray(), [0, 3]);
});

// ---- containers ----------------------------------------------------------------------------------
test('containers index as Python: net[0], net[-1], net.length, net.get([1, 3]) is a new container of the same kind', () => {
  for (const Kind of [nn.Sequential, nn.HybridSequential]) {
    const net = new Kind({ prefix: 'seq_' });
    net.nameScope(() => net.add(new nn.Dense(1), new nn.Dense(2), new nn.Dense(3), new nn.Dense(4)));
    assert.equal(net.length, 4);
    assert.equal(net[0].name, 'seq_dense0');
    assert.equal(net[-1].name, 'seq_dense3');
    assert.equal(net[2], net.get(2));
    const sl = net.get([1, 3]);                    // net[1:3]
    assert.ok(sl instanceof Kind);
    assert.deepEqual([...sl._children.values()].map((b) => b.name), ['seq_dense1', 'seq_dense2']);
    assert.equal(sl.prefix, 'seq_');
    assert.deepEqual([...net.get([null, null, -2])._children.values()].map((b) => b.name), ['seq_dense3', 'seq_dense1']); // net[::-2]
    assert.deepEqual([...net.get([-3])._children.values()].map((b) => b._units), [2, 3, 4]); // net[-3:]
    throwsNaming(() => net.get(4), /index 4 is out of range/);
    throwsNaming(() => net[9], /index 9 is out of range for \w+ with 4 children/); // Python's IndexError
  }
});

// ---- ParameterDict, Parameter, contexts ---------------------------------------------------------
test('ParameterDict: pd["fullname"], pd.at, setattr("grad_req", "null"), save with strip_prefix', async () => {
  const net = new nn.Dense(2, { inUnits: 3, prefix: 'fc_' });
  net.initialize(new init.Constant(0.5));
  const pd = net.collectParams();
  assert.equal(pd['fc_weight'], net.weight);
  assert.equal(pd.at('fc_bias'), net.bias);
  assert.equal(pd.get('weight'), net.weight); // Gluon's prefixing get
  throwsNaming(() => pd.at('nope'), /'nope' is not in the ParameterDict/);
  pd.setattr('grad_req', 'null');
  assert.equal(net.weight.gradReq, 'null');
  pd.setattr('lr_mult', 0.5);
  assert.equal(net.bias.lrMult, 0.5);
  const bytes = pd.save(null, 'fc_');
  const loaded = nd.loadBytes(bytes);
  assert.deepEqual(Object.keys(loaded).sort(), ['bias', 'weight']);
  assert.deepEqual(loaded.weight.toArray(), [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]);
  throwsNaming(() => pd.save(null, 'zz_'), /Prefix 'zz_' is to be striped before saving/);
});

test('contexts: initialize({ctx: [cpu(0), cpu(1)]}) keeps one copy per context; data(ctx) picks it; an unknown context is named', () => {
  const p = new gluon.Parameter('p', { shape: [3], init: new init.Constant(4) });
  p.initialize({ ctx: [mx.cpu(0), mx.cpu(1)] });
  const list = p.listData();
  assert.equal(list.length, 2);
  assert.notEqual(list[0], list[1]);
  assert.deepEqual(list.map((a) => a.toArray()), [[4, 4, 4], [4, 4, 4]]);
  assert.deepEqual(p.listCtx().map(String), ['cpu(0)', 'cpu(1)']);
  assert.equal(p.data(mx.cpu(1)), list[1]);
  assert.equal(String(p.data(mx.cpu(1)).context), 'cpu(1)');
  throwsNaming(() => p.data(mx.cpu(2)), /was not initialized on context cpu\(2\). It was only initialized on cpu\(0\), cpu\(1\)/);
  // an op's result lives on its input's context, as in MXNet
  assert.equal(String(nd.relu(p.data(mx.cpu(1))).context), 'cpu(1)');
  assert.equal(String(p.data(mx.cpu(1)).add(1).context), 'cpu(1)');
  p.setData(nd.array([1, 2, 3]));
  assert.deepEqual(p.listData().map((a) => a.toArray()), [[1, 2, 3], [1, 2, 3]]);
});

// ---- hooks and warnings ----------------------------------------------------------------------------
test('registerOpHook with monitorAll names inputs as MXNet 1.9.1 (its test_op_hook_output_names expectations)', () => {
  const model = new nn.HybridSequential('dense_');
  model.nameScope(() => { model.add(new nn.Dense(2)); model.add(new nn.Activation('relu')); });
  model.initialize();
  model.hybridize();
  const names = [];
  model.registerOpHook((n) => names.push(n), true);
  model(nd.ones([2, 3, 4]));
  assert.deepEqual(names, ['dense_dense0_fwd_data', 'dense_dense0_fwd_weight', 'dense_dense0_fwd_bias',
    'dense_dense0_fwd_output', 'dense_relu0_fwd_input0', 'dense_relu0_fwd_output']);
  const pool = new nn.HybridSequential('pool_');
  pool.nameScope(() => pool.add(new nn.AvgPool1D()));
  pool.initialize();
  pool.hybridize();
  const seen = [];
  pool.registerOpHook((n, op) => seen.push([n, op]), true);
  pool(nd.ones([2, 3, 4]));
  assert.deepEqual(seen, [['pool_pool0_fwd_data', 'Pooling'], ['pool_pool0_fwd_output', 'Pooling']]);
});

test('Blocks kept in a plain list warn as MXNet does (collectParams)', () => {
  class Holder extends gluon.Block {
    constructor() { super(); this.layers = [new nn.Dense(2)]; }
    forward(x) { return this.layers[0](x); }
  }
  const warnings = [];
  const orig = console.warn;
  console.warn = (m) => warnings.push(String(m));
  try {
    new Holder().collectParams();
  } finally {
    console.warn = orig;
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /"Holder.layers" is an unregistered container with Blocks/);
});

test('nd.CachedOp(sym) is callable with the inputs in listInputs order, as Python', () => {
  const x = sym.var('x'), w = sym.var('w');
  const op = new nd.CachedOp(sym.dot(x, w, { transpose_b: true }));
  const y = op(nd.array([[1, 2], [3, 4]]), nd.array([[1, 0], [1, 1]]));
  assert.deepEqual(y.toArray(), [[1, 3], [3, 7]]); // hand-worked x . w^T
  const out = nd.zeros([2, 2]);
  op(nd.array([[1, 2], [3, 4]]), nd.array([[0, 1], [1, 0]]), { out });
  assert.deepEqual(out.toArray(), [[2, 1], [4, 3]]);
  assert.equal(mx.CachedOp, nd.CachedOp);
});

test('nd.random.uniform({shape: [2, 3]}) and nd.random.normal({shape}) by name, as Python: values in [0, 1) / mean 0, std 1', () => {
  mx.random.seed(7);
  const u = nd.random.uniform({ shape: [2, 3] });
  assert.deepEqual(u.shape, [2, 3]);
  assert.ok(u.toTypedArray().every((v) => v >= 0 && v < 1));
  const n = nd.random.normal({ shape: [20000] }).toTypedArray();
  const mean = n.reduce((a, v) => a + v, 0) / n.length;
  const sd = Math.sqrt(n.reduce((a, v) => a + (v - mean) ** 2, 0) / n.length);
  // 5 standard errors: 5 / sqrt(20000) = 0.035 for the mean, about 0.025 for the sd
  assert.ok(Math.abs(mean) < 0.035 && Math.abs(sd - 1) < 0.025, `mean ${mean}, sd ${sd}`);
  assert.equal(mx.random.uniform, nd.random.uniform);
});

test('the binder: a plain object where Python takes a dict is that dict (Trainer(params, "sgd", {learning_rate}))', async () => {
  const { defineSignature, bindArgs, REQUIRED } = await import('../../dist/signature.mjs');
  const sig = defineSignature('Trainer', [['params', REQUIRED, 'any'], ['optimizer', REQUIRED, 'str'], ['optimizer_params', null, 'dict'],
    ['kvstore', 'device', 'str']]);
  const a = bindArgs(sig, [{}, 'sgd', { learning_rate: 0.1 }]);
  assert.deepEqual(a.optimizerParams, { learning_rate: 0.1 });
  assert.equal(a.kvstore, 'device');
  const b = bindArgs(sig, [{}, 'sgd', { learning_rate: 0.1 }, { kvstore: 'local' }]);
  assert.deepEqual([b.optimizerParams, b.kvstore], [{ learning_rate: 0.1 }, 'local']);
  const c = bindArgs(sig, [{}, { optimizer: 'adam', optimizer_params: { wd: 1 } }]);
  assert.deepEqual([c.optimizer, c.optimizerParams], ['adam', { wd: 1 }]);
  // a class instance is never an options object: an initializer given positionally
  const d = bindArgs(SIGNATURES['Block.initialize'], [new init.Xavier()]);
  assert.ok(d.init instanceof init.Xavier);
  throwsNaming(() => bindArgs(sig, [{}, 'sgd', 5]), /'optimizer_params' must be a plain object \(dict\) or null, got 5/);
});
