// Blocks and memory (issue 9, finding 5; acceptance 4): net.dispose() frees a block's parameters,
// gradients, cached graph and children; 1,000 hybridized nets or SymbolBlocks created and
// disposed leave mx.memory() as it was and the heap's high-water mark where one net put it; dropped
// without dispose (in a loop that yields) they stay within a bound; SymbolBlock.imports leaves
// nothing behind when a file is bad.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { paramsFile, v1 } from './fixtures.mjs';

const { nd, gluon } = mx;
const { nn } = gluon;
const MiB = 1024 * 1024;
const tick = () => new Promise((r) => setImmediate(r));

// 256 -> 256 (relu) -> 10: 68,874 float32 parameters = 275,496 bytes, as much again in gradients
const mlp = () => {
  const net = new nn.HybridSequential();
  net.add(new nn.Dense(256, { activation: 'relu', inUnits: 256 }), new nn.Dense(10, { inUnits: 256 }));
  return net;
};
const PARAM_BYTES = 4 * (256 * 256 + 256 + 10 * 256 + 10);
const x = mx.keep(nd.ones([4, 256]));
const runOne = () => {
  const net = mlp();
  net.initialize();
  net.hybridize();
  net(x).dispose();
  return net;
};

test('net.dispose() frees parameters, gradients, the cached graph and the children; a disposed net refuses use', () => {
  const before = mx.memory();
  const net = runOne();
  const mid = mx.memory();
  // values and gradients of four parameters, plus the executor's planned buffers
  assert.ok(mid.bytes - before.bytes >= 2 * PARAM_BYTES, `bytes held: ${mid.bytes - before.bytes}`);
  const weight = [...net.collectParams().values()][0];
  const child = net.get(0);
  net.dispose();
  const after = mx.memory();
  assert.equal(after.numArrays, before.numArrays, 'arrays');
  assert.equal(after.bytes, before.bytes, 'bytes (arrays and executor buffers)');
  assert.equal(net.isDisposed, true);
  assert.equal(child.isDisposed, true, 'children are disposed with their parent');
  assert.throws(() => net(x), (e) => e instanceof mx.MXNetError && /HybridSequential 'hybridsequential\d+' has been disposed/.test(e.message));
  assert.throws(() => child(x), /has been disposed/);
  assert.throws(() => weight.data(), new RegExp(`Parameter '${weight.name}' has been disposed`));
  assert.throws(() => net.collectParams(), /has been disposed/);
  assert.throws(() => net.hybridize(), /has been disposed/);
  assert.throws(() => net.initialize(), /has been disposed/);
  net.dispose(); // twice is fine
});

test('trainer.dispose() frees the optimizer states (Adam: two per parameter); the trainer stays usable', () => {
  const before = mx.memory();
  const net = runOne();
  const trainer = new gluon.Trainer(net.collectParams(), 'adam', { learning_rate: 0.01 });
  const step = () => mx.tidy(() => {
    mx.autograd.record(() => net(x).sum()).backward();
    trainer.step(4);
  });
  step();
  const trained = mx.memory();
  trainer.dispose();
  const freed = mx.memory();
  // four parameters, a mean and a variance each, of the parameters' sizes
  assert.equal(trained.numArrays - freed.numArrays, 8);
  assert.equal(trained.bytes - freed.bytes, 2 * PARAM_BYTES);
  step(); // fresh states
  assert.equal(mx.memory().numArrays, trained.numArrays);
  trainer.dispose();
  net.dispose();
  assert.equal(mx.memory().numArrays, before.numArrays);
  assert.equal(mx.memory().bytes, before.bytes);
});

test('dispose() leaves parameters shared from another block alone', () => {
  const before = mx.memory().numArrays;
  const a = new nn.Dense(2, { inUnits: 3, useBias: false });
  const b = new nn.Dense(2, { inUnits: 3, useBias: false, params: a.collectParams() });
  a.initialize(new mx.init.One());
  const input = nd.array([[1, 2, 3]]);
  const yb = b(input);
  assert.deepEqual(yb.toArray(), [[6, 6]]); // ones weight: 1 + 2 + 3
  b.dispose();
  const ya = a(input);
  assert.deepEqual(ya.toArray(), [[6, 6]], 'the owner still works');
  for (const t of [input, ya, yb]) t.dispose();
  a.dispose();
  assert.equal(mx.memory().numArrays, before);
});

test('dispose() of a plain Block: a Parameter assigned without a dict and a Constant are freed; ParameterDict.dispose()', () => {
  const before = mx.memory().numArrays;
  class Net extends gluon.Block {
    constructor() {
      super();
      this.w = new gluon.Parameter('free_w', { shape: [2, 2] });
      this.c = this.params.getConstant('c', [[1, 2], [3, 4]]);
    }
    forward(v) { return v.add(this.w.data()).add(this.c.data()); }
  }
  const net = new Net();
  net.w.initialize(new mx.init.Zero());
  net.c.initialize();
  assert.deepEqual(mx.tidy(() => net(nd.ones([2, 2])).toArray()), [[2, 3], [4, 5]]);
  net.dispose();
  assert.throws(() => net.w.data(), /Parameter 'free_w' has been disposed/);
  assert.equal(mx.memory().numArrays, before);

  const pd = new gluon.ParameterDict('pd_');
  pd.get('a', { shape: [3] });
  pd.get('b', { shape: [4], gradReq: 'null' });
  pd.initialize();
  pd.dispose();
  assert.equal(mx.memory().numArrays, before);
  assert.throws(() => pd.getItem('pd_a').data(), /has been disposed/);
});

test('1,000 hybridized nets created, run and disposed: arrays unchanged, high-water marks those of one net', () => {
  runOne().dispose(); // warm: the first net's allocations set the heap's size
  const m0 = mx.memory({ resetPeak: true });
  const net = runOne();
  const oneNetPeak = mx.memory().peakBytes - m0.bytes;
  net.dispose();
  const heapOne = mx.memory().wasmHeapBytes;
  mx.memory({ resetPeak: true });
  for (let i = 0; i < 1000; i++) runOne().dispose();
  const m1 = mx.memory();
  console.log(`one net: peak +${oneNetPeak} bytes; 1,000 disposed nets: peak +${m1.peakBytes - m0.bytes} bytes, heap ${heapOne} -> ${m1.wasmHeapBytes}`);
  assert.equal(m1.numArrays, m0.numArrays);
  assert.equal(m1.bytes, m0.bytes);
  assert.ok(m1.peakBytes - m0.bytes <= 1.1 * oneNetPeak, 'the arrays\' high-water mark is one net\'s');
  assert.ok(m1.wasmHeapBytes <= 1.1 * heapOne, 'the wasm heap\'s high-water mark is within 10% of one net\'s');
});

test('1,000 hybridized nets dropped without dispose in a loop that yields: arrays and heap within a bound', async () => {
  const old = mx.memory().gcThreshold;
  mx.memory({ gcThreshold: 8 * MiB });
  try {
    await tick();
    const m0 = mx.memory({ resetPeak: true });
    for (let i = 0; i < 1000; i++) { runOne(); await tick(); }
    const m1 = mx.memory();
    console.log(`1,000 dropped nets: ${m1.numArrays - m0.numArrays} arrays live, peak +${((m1.peakBytes - m0.bytes) / MiB).toFixed(1)} MiB,`
      + ` heap +${((m1.wasmHeapBytes - m0.wasmHeapBytes) / MiB).toFixed(1)} MiB, ${m1.gcCollections - m0.gcCollections} collections`);
    // undisposed, the 1,000 nets would hold 1,000 x 2 x 275,496 bytes (525 MiB): a collection
    // is requested every 8 MiB, so at most a few dozen nets wait for their finalizers
    assert.ok(m1.peakBytes - m0.bytes <= 32 * MiB, `peak +${m1.peakBytes - m0.bytes}`);
    assert.ok(m1.wasmHeapBytes - m0.wasmHeapBytes <= 32 * MiB, 'heap growth');
    assert.ok(m1.numArrays - m0.numArrays <= 100 * 12, `${m1.numArrays - m0.numArrays} arrays live`);
  } finally {
    mx.memory({ gcThreshold: old });
  }
});

// One exported MLP: its symbol JSON and parameter file, loaded 1,000 times.
const exported = (() => {
  const net = runOne();
  const { symbol, params } = net.exportBytes();
  net.dispose();
  return { symbol: new TextEncoder().encode(symbol), params };
})();
const importOne = async () => {
  const b = await gluon.SymbolBlock.imports(exported.symbol, ['data'], exported.params);
  b(x).dispose();
  return b;
};

test('1,000 SymbolBlocks imported, run and disposed: arrays unchanged, high-water marks those of one', async () => {
  (await importOne()).dispose();
  const m0 = mx.memory({ resetPeak: true });
  const one = await importOne();
  const onePeak = mx.memory().peakBytes - m0.bytes;
  one.dispose();
  const heapOne = mx.memory().wasmHeapBytes;
  mx.memory({ resetPeak: true });
  for (let i = 0; i < 1000; i++) (await importOne()).dispose();
  const m1 = mx.memory();
  assert.equal(m1.numArrays, m0.numArrays);
  assert.equal(m1.bytes, m0.bytes);
  assert.ok(m1.peakBytes - m0.bytes <= 1.1 * onePeak, `peak +${m1.peakBytes - m0.bytes} vs one ${onePeak}`);
  assert.ok(m1.wasmHeapBytes <= 1.1 * heapOne);
});

test('1,000 SymbolBlocks dropped without dispose in a loop that yields: within a bound', async () => {
  const old = mx.memory().gcThreshold;
  mx.memory({ gcThreshold: 8 * MiB });
  try {
    await tick();
    const m0 = mx.memory({ resetPeak: true });
    for (let i = 0; i < 1000; i++) { await importOne(); await tick(); }
    const m1 = mx.memory();
    console.log(`1,000 dropped SymbolBlocks: ${m1.numArrays - m0.numArrays} arrays live, peak +${((m1.peakBytes - m0.bytes) / MiB).toFixed(1)} MiB`);
    assert.ok(m1.peakBytes - m0.bytes <= 32 * MiB, `peak +${m1.peakBytes - m0.bytes}`);
    assert.ok(m1.wasmHeapBytes - m0.wasmHeapBytes <= 32 * MiB, 'heap growth');
    assert.ok(m1.numArrays - m0.numArrays <= 100 * 12, `${m1.numArrays - m0.numArrays} arrays live`);
  } finally {
    mx.memory({ gcThreshold: old });
  }
});

test('SymbolBlock.imports error paths leave no arrays behind', async () => {
  const f32 = (n) => new Float32Array(n);
  const names = ['arg:dense0_weight', 'arg:dense0_bias', 'arg:dense1_weight', 'arg:dense1_bias'];
  const good = [v1([256, 256], 0, f32(65536)), v1([256], 0, f32(256)), v1([10, 256], 0, f32(2560)), v1([10], 0, f32(10))];
  const cases = {
    'an unnamed list': paramsFile(good),
    'a zero-size weight': paramsFile([v1([256, 0], 0, f32(0)), ...good.slice(1)], names),
    'a missing parameter': paramsFile(good.slice(0, 3), names.slice(0, 3)),
    'an extra parameter': paramsFile([...good, v1([1], 0, f32(1))], [...names, 'arg:extra']),
    'a truncated file': exported.params.slice(0, exported.params.length - 100),
  };
  const before = mx.memory().numArrays;
  for (const [label, bytes] of Object.entries(cases)) {
    let b = null;
    try {
      b = await gluon.SymbolBlock.imports(exported.symbol, ['data'], bytes);
    } catch (e) {
      assert.ok(e instanceof mx.MXNetError, `${label}: ${e.message}`);
    }
    if (b) {
      // loaded (a zero-size weight is a valid array): its forward fails, and dispose frees it
      assert.throws(() => b(x), mx.MXNetError, label);
      b.dispose();
    }
    assert.equal(mx.memory().numArrays, before, `${label}: arrays left`);
  }
  // a bad symbol file fails before any array exists
  await assert.rejects(gluon.SymbolBlock.imports(new TextEncoder().encode('{"nodes": 5}'), ['data'], exported.params), mx.MXNetError);
  // ... and input names not in the graph: the loaded graph and variables are freed too
  await assert.rejects(gluon.SymbolBlock.imports(exported.symbol, 7, exported.params));
  assert.equal(mx.memory().numArrays, before);
  // the same unnamed list through Block.loadParameters and ParameterDict.load
  const net = runOne();
  const held = mx.memory().numArrays;
  await assert.rejects(net.loadParameters(cases['an unnamed list']), /unnamed list/);
  await assert.rejects(net.collectParams().load(cases['an unnamed list']), /unnamed list/);
  assert.equal(mx.memory().numArrays, held);
  net.dispose();
  assert.equal(mx.memory().numArrays, before);
});
