// The workload whose functions stay in a split tier's mxcore.wasm (scripts/split-wasm.mjs runs it
// on the instrumented module): what an application of the package usually does. Every function it
// reaches stays; the rest moves to mxcore.deferred.wasm, loaded on first use (wasm/split_pre.js).
// So it covers loading, eager NDArray calls and printing, the Gluon layers of the model zoo's
// classification, detection-backbone, segmentation and BERT-style models in float32, imperative
// and hybridized, export and import of MXNet's files, and training (autograd, the common losses,
// SGD / Adam / RMSProp, metrics, a DataLoader). Not covered on purpose: float64 and integer
// arithmetic beyond indices, the contrib and detection operators, recurrent layers, control flow,
// linear algebra, image decoding ops, the less common optimizers: their first call loads the rest.
//   node scripts/split-profile.mjs <package dir> <tier> <profile out>
// (the package dir holds the instrumented mxcore.wasm; its __write_profile writes the profile)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkg, tier, out] = process.argv.slice(2);
if (!pkg || !tier || !out) {
  console.error('usage: node scripts/split-profile.mjs <package dir> <tier> <profile out>');
  process.exit(2);
}
const mx = await import(pathToFileURL(path.join(pkg, `${tier}.mjs`)).href);
const { M } = await import(pathToFileURL(path.join(pkg, 'core.mjs')).href);
const { nd, gluon, autograd } = mx;
const { nn } = gluon;
mx.setNumThreads(tier.includes('threads') ? 2 : 1);
if (tier.includes('threads')) {
  await new Promise((r) => setTimeout(r, 200)); // (the pool's worker starts after the import)
}
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mxw-profile-'));
const sink = [];
const use = (x) => { sink.push(typeof x?.asArray === 'function' ? x.asArray() : x); if (sink.length > 64) sink.length = 0; };
use(mx.features()); use(mx.getNumThreads()); use(mx.memory()); use(mx.registeredOps?.length);

// ---- eager NDArray calls, printing -------------------------------------------------------------------
for (const shape of [[3, 5], [2, 3, 4, 5], [64, 300]]) {
  const a = nd.random.uniform(-1, 1, shape), b = nd.random.normal(0, 1, shape), c = nd.ones(shape);
  use(String(a));
  use(a.add(b).mul(c).sub(1).div(2).pow(2).sqrt().abs().neg().exp().log1p());
  use(nd.maximum(a, b)); use(nd.minimum(a, 0.5)); use(a.greater(b)); use(a.equal(b)); use(nd.where(a.greater(0), a, b));
  for (const f of ['relu', 'sigmoid', 'tanh', 'exp', 'log', 'sqrt', 'square', 'floor', 'round', 'sign', 'erf', 'reciprocal', 'softsign']) use(nd[f](a.abs().add(0.1)));
  for (const f of ['sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'norm']) { use(nd[f](a)); use(nd[f](a, { axis: shape.length - 1 })); }
  use(nd.softmax(a)); use(nd.log_softmax(a)); use(nd.softmax(a, { axis: 0 })); use(nd.topk(a, { k: 2 })); use(nd.sort(a)); use(nd.argsort(a));
  use(a.reshape([-1])); use(a.transpose()); use(nd.expand_dims(a, 0)); use(nd.concat(a, b, { dim: 0 })); use(nd.stack(a, b));
  use(nd.split(nd.concat(a, b, { dim: 0 }), { num_outputs: 2, axis: 0 })); use(nd.slice_axis(a, { axis: 0, begin: 0, end: 1 }));
  use(a.slice([0, 0], [1, 2])); use(a.get(0)); use(nd.tile(a, [2])); use(nd.clip(a, -0.5, 0.5)); use(nd.broadcast_to(nd.ones([1]), [3]));
  use(nd.one_hot(nd.array([0, 2, 1]), 4)); use(nd.take(a, nd.array([0, 1]))); use(nd.pick(a, nd.zeros(shape.slice(0, -1)), { axis: -1 }));
  use(a.astype('float16').astype('float32')); use(a.astype('int32')); use(a.astype('uint8')); use(nd.cast(a, 'float32'));
  use(nd.dot(a.reshape([shape[0], -1]), a.reshape([shape[0], -1]).T));
}
use(nd.arange(0, 10)); use(nd.zeros([2, 2])); use(nd.full([2, 2], 3)); use(nd.array([[1, 2], [3, 4]]));
use(nd.batch_dot(nd.ones([2, 3, 4]), nd.ones([2, 4, 5])));
nd.save(path.join(tmp, 'a.params'), { a: nd.ones([2, 3]), b: nd.arange(0, 4) });
use(nd.load(path.join(tmp, 'a.params')));

// ---- Gluon models: imperative, hybridized, exported and imported back ---------------------------------
const models = {
  mlp: () => [[4, 20], new nn.Dense(64, { activation: 'relu' }), new nn.Dense(32, { activation: 'tanh' }), new nn.Dropout(0.2), new nn.Dense(10)],
  lenet: () => [[4, 1, 28, 28], new nn.Conv2D(6, 5, { activation: 'relu' }), new nn.MaxPool2D(2), new nn.Conv2D(16, 5, { activation: 'relu' }),
    new nn.MaxPool2D(2), new nn.Flatten(), new nn.Dense(120, { activation: 'relu' }), new nn.Dense(10)],
  resnet: () => [[1, 3, 64, 64], new nn.Conv2D(16, 7, { strides: 2, padding: 3, useBias: false }), new nn.BatchNorm(), new nn.Activation('relu'),
    new nn.MaxPool2D(3, 2, 1), new nn.Conv2D(32, 3, { padding: 1, useBias: false }), new nn.BatchNorm(), new nn.LeakyReLU(0.1),
    new nn.Conv2D(32, 3, { strides: 2, padding: 1 }), new nn.Conv2D(32, 1), new nn.Conv2D(64, 3, { padding: 1 }),
    new nn.Conv2D(64, 3, { padding: 1, groups: 64 }), new nn.Activation('sigmoid'), new nn.AvgPool2D(2), new nn.GlobalAvgPool2D(), new nn.Flatten(), new nn.Dense(10)],
  mobile: () => [[1, 3, 32, 32], new nn.Conv2D(16, 3, { padding: 1 }), new nn.BatchNorm(), new nn.Activation('relu'),
    new nn.Conv2D(16, 3, { padding: 1, groups: 16, strides: 2 }), new nn.Conv2D(32, 1), new nn.Activation('softrelu'),
    new nn.Conv2DTranspose(8, 4, { strides: 2, padding: 1 }), new nn.GlobalMaxPool2D(), new nn.Flatten(), new nn.Dense(5)],
  // MobileNet v1 as RetinaFace and GluonCV's mobilenet use it: depthwise and pointwise convolutions,
  // each followed by BatchNorm and relu (folded and fused in the hybridized graph)
  mobilev1: () => [[1, 3, 64, 64], ...[[8, 1, 2], [8, 8, 1], [16, 1, 1], [16, 16, 2], [32, 1, 1], [32, 32, 1]].flatMap(([c, g, s]) => [
    new nn.Conv2D(c, g === 1 && c > 8 ? 1 : 3, { strides: s, padding: g === 1 && c > 8 ? 0 : 1, groups: g, useBias: false }),
    new nn.BatchNorm(), new nn.Activation('relu')]), new nn.GlobalAvgPool2D(), new nn.Flatten(), new nn.Dense(4)],
  seq: () => [[2, 7], new nn.Embedding(50, 16), new nn.LayerNorm(), new nn.Dense(16, { flatten: false, activation: 'relu' }), new nn.Dense(4, { flatten: false })],
};
for (const [name, make] of Object.entries(models)) {
  const [inShape, ...layers] = make();
  const net = new nn.HybridSequential();
  net.add(...layers);
  net.initialize(new mx.init.Xavier());
  const x = name === 'seq' ? nd.random.randint(0, 50, inShape).astype('float32') : nd.random.uniform(0, 1, inShape);
  use(net(x));
  net.hybridize({ static_alloc: true, static_shape: true });
  const y = net(x);
  use(y); use(net(x)); use(nd.softmax(y).argmax(-1));
  const prefix = path.join(tmp, name);
  net.export(prefix, 3);
  const back = await gluon.SymbolBlock.imports(`${prefix}-symbol.json`, ['data'], `${prefix}-0003.params`);
  use(back(x));
  // the forms MXNet's own files take: the version that wrote them (graph upgrades of older
  // versions), and the key names of MXNet 0.8-0.11 ('param' / 'attr', backward_source_id)
  if (name !== 'seq') {
    const json = JSON.parse(readFileSync(`${prefix}-symbol.json`, 'utf8'));
    const variants = [800, 904, 1000, 1100, 1200, 10000, 10100, 10200, 10300, 10401, 10500, 10600, 10700, 10800, null]
      .map((v) => { const j = structuredClone(json); if (v === null) delete j.attrs; else j.attrs = { mxnet_version: ['int', v] }; return j; });
    for (const key of ['param', 'attr']) {
      const j = structuredClone(json);
      delete j.attrs;
      delete j.node_row_ptr;
      for (const node of j.nodes) {
        node[key] = node.attrs ?? {};
        delete node.attrs;
        node.backward_source_id = -1;
        node.inputs = node.inputs.map((e) => e.slice(0, 2));
      }
      variants.push(j);
    }
    for (const [i, j] of variants.entries()) {
      writeFileSync(`${prefix}-v${i}-symbol.json`, JSON.stringify(j, null, 2));
      use((await gluon.SymbolBlock.imports(`${prefix}-v${i}-symbol.json`, ['data'], `${prefix}-0003.params`))(x));
    }
  }
  net.saveParameters(`${prefix}.params`);
  net.loadParameters(`${prefix}.params`);
  use((await mx.sym.load(`${prefix}-symbol.json`)).tojson());
}
// ops of segmentation and BERT-style graphs
{
  const x = nd.random.uniform(0, 1, [1, 4, 8, 8]);
  use(nd.contrib.BilinearResize2D(x, { height: 16, width: 16 })); use(nd.UpSampling(x, { scale: 2, sample_type: 'nearest' }));
  const q = nd.random.uniform(0, 1, [2, 5, 8]);
  use(nd.softmax(nd.batch_dot(q, q, { transpose_b: true }).div(Math.sqrt(8)), { axis: -1 }));
  use(nd.LayerNorm(q, nd.ones([8]), nd.zeros([8]))); use(nd.LeakyReLU(q, { act_type: 'gelu' }));
  use(nd.SequenceMask(q, nd.array([1, 2, 1, 2, 1]), { use_sequence_length: true }));
}

// the float32 kernels over a sweep of small shapes, so that their edge paths (partial tiles, narrow
// images, strides, paddings) stay with them: real inputs come in every size (an image pyramid)
for (const hw of [3, 5, 7, 8, 12, 13, 24, 31]) {
  for (const [c, f, k, s, p, g] of [[3, 10, 3, 1, 0, 1], [10, 16, 3, 1, 0, 1], [4, 8, 1, 1, 0, 1], [32, 2, 1, 1, 0, 1], [32, 4, 1, 1, 0, 1], [8, 8, 3, 2, 1, 8], [8, 8, 3, 1, 1, 8], [6, 6, 5, 1, 2, 6], [5, 7, 3, 2, 1, 1], [3, 4, 7, 2, 3, 1], [4, 4, 2, 2, 0, 1]]) {
    if (hw + 2 * p < k) continue;
    const x = nd.random.uniform(-1, 1, [2, c, hw, hw]);
    const y = nd.Convolution(x, nd.random.uniform(-1, 1, [f, c / g, k, k]), nd.zeros([f]), { kernel: [k, k], stride: [s, s], pad: [p, p], num_filter: f, num_group: g });
    use(y); use(nd.LeakyReLU(y, nd.full([f], 0.25), { act_type: 'prelu' }));
    for (const pool of ['max', 'avg']) use(nd.Pooling(x, { kernel: [Math.min(3, hw), Math.min(3, hw)], stride: [2, 2], pool_type: pool, pooling_convention: hw % 2 ? 'full' : 'valid' }));
  }
}
// the depthwise 3x3 kernel's forms (kernels/dwconv.c): strips with either edge or both (an output row
// of one strip), and the row pairs it takes on wide rows (stride 1 from 48 columns, stride 2 from
// 96), over odd and even heights: RetinaFace's MobileNet at camera sizes runs them
for (const w of [4, 6, 9, 10, 15, 16, 17, 48, 49, 96, 97]) {
  for (const s of [1, 2]) {
    for (const h of [w, w + 1]) {
      const x = nd.random.uniform(-1, 1, [1, 4, h, w]);
      use(nd.Convolution(x, nd.random.uniform(-1, 1, [4, 1, 3, 3]), nd.zeros([4]), { kernel: [3, 3], stride: [s, s], pad: [1, 1], num_filter: 4, num_group: 4 }));
    }
  }
}
for (const [m, n, k] of [[1, 7, 5], [3, 9, 17], [5, 33, 2], [13, 20, 31], [9, 1, 8], [2, 2, 2]]) {
  const a = nd.random.uniform(-1, 1, [m, k]), b = nd.random.uniform(-1, 1, [n, k]);
  use(nd.FullyConnected(a, b, nd.zeros([n]), { num_hidden: n })); use(nd.dot(a, b, { transpose_b: true })); use(nd.softmax(a)); use(nd.sum(a, { axis: 0 }));
  use(nd.add(a, 1).relu().sigmoid().tanh().exp());
}

// graphs with several outputs (detectors), and features taken from internal outputs
{
  const data = mx.sym.var('data');
  const fc = mx.sym.FullyConnected(data, { num_hidden: 6, name: 'fc' });
  const out = mx.sym.Group([mx.sym.Activation(fc, { act_type: 'relu', name: 'relu' }), mx.sym.softmax(fc, { name: 'prob' })]);
  const block = new gluon.SymbolBlock(out, data);
  block.initialize();
  const x = nd.random.uniform(0, 1, [2, 5]);
  use(block(x));
  block.export(path.join(tmp, 'group'), 0);
  const back = await gluon.SymbolBlock.imports(path.join(tmp, 'group-symbol.json'), ['data'], path.join(tmp, 'group-0000.params'));
  use(back(x));
  const internals = out.getInternals();
  use(internals.listOutputs()); use(out.listArguments()); use([...internals].map((o) => o.name));
  const feat = new gluon.SymbolBlock(internals.get('fc_output'), data, block.collectParams());
  use(feat(x));
}

// ops of files MXNet's Module API and the model zoos wrote (the Module API's output layers, MTCNN,
// RetinaFace, SE-ResNeXt, BERT)
{
  const x = nd.random.uniform(-1, 1, [2, 4, 6, 6]), f = nd.random.uniform(-1, 1, [2, 10]), lbl = nd.array([1, 3]);
  use(nd.SoftmaxOutput(f, lbl)); use(nd.LinearRegressionOutput(f, nd.zeros([2, 10]))); use(nd.LogisticRegressionOutput(f, nd.zeros([2, 10])));
  use(nd.SoftmaxActivation(x, { mode: 'channel' })); use(nd.SoftmaxActivation(f));
  use(nd.LeakyReLU(x, nd.full([4], 0.25), { act_type: 'prelu' })); use(nd.LeakyReLU(x, { act_type: 'elu' }));
  use(nd.UpSampling(x, { scale: 2, sample_type: 'nearest', num_args: 1 })); use(nd.Crop(x, nd.zeros([2, 4, 4, 4]), { num_args: 2 }));
  use(nd.contrib.AdaptiveAvgPooling2D(x, { output_size: [1, 1] })); use(nd.broadcast_mul(x, nd.ones([2, 4, 1, 1])));
  use(nd.Pooling(x, { kernel: [3, 3], stride: [2, 2], pool_type: 'max', pooling_convention: 'full' }));
  const ids = nd.array([[1, 2, 3], [4, 5, 6]]);
  use(nd.arange(0, 6)); use(nd.broadcast_lesser(nd.arange(0, 3).expandDims(0), nd.array([[2], [3]])));
  use(nd.broadcast_axis(nd.ones([2, 1, 3]), { axis: 1, size: 4 })); use(nd.ones_like(ids)); use(nd.zeros_like(ids));
  use(nd.contrib.div_sqrt_dim(nd.ones([2, 3, 8]))); use(nd.erf(f)); use(nd.gather_nd(f, nd.array([[0, 1], [2, 3]])));
  use(nd.Embedding(ids, nd.ones([8, 5]), { input_dim: 8, output_dim: 5 })); use(nd.slice_like(x, nd.zeros([2, 4, 3, 3])));
  use(nd.reshape_like(f, nd.zeros([5, 4]))); use(nd.concat(x, x, x, { dim: 1 }));
  for (const shape of [[0, 2, -1, 0], [-3, 0, 0], [0, -4, 2, -1, 0, 0], [-2], [0, 0, -3], [-1]]) use(nd.reshape(x, shape));
  use(nd.reshape(x, { shape: [-1, 0], reverse: true })); use(nd.flip(x, { axis: 3 })); use(nd.squeeze(nd.ones([2, 1, 3])));
}

// ---- training ----------------------------------------------------------------------------------------
for (const name of ['mlp', 'lenet', 'resnet']) {
  const [inShape, ...layers] = models[name]();
  const net = new nn.HybridSequential();
  net.add(...layers);
  net.initialize(new mx.init.Xavier());
  const n = inShape[0];
  const X = nd.random.uniform(0, 1, [n * 4, ...inShape.slice(1)]), Y = nd.array(Array.from({ length: n * 4 }, (_, i) => i % 10));
  const loader = new gluon.data.DataLoader(new gluon.data.ArrayDataset(X, Y), { batchSize: n, shuffle: true, lastBatch: 'rollover' });
  for (const hybrid of [false, true]) {
    if (hybrid) net.hybridize();
    for (const [opt, args] of [['sgd', { learning_rate: 0.05, momentum: 0.9, wd: 1e-4 }], ['adam', { learning_rate: 1e-3 }], ['rmsprop', { learning_rate: 1e-3 }]]) {
      const trainer = new gluon.Trainer(net.collectParams(), opt, args);
      const losses = [new gluon.loss.SoftmaxCrossEntropyLoss(), new gluon.loss.L2Loss()];
      const metrics = [new mx.metric.Accuracy(), new mx.metric.CrossEntropy()];
      for (const [data, label] of loader) {
        let L;
        autograd.record(() => {
          const out = net(data);
          L = losses[0](out, label).mean().add(losses[1](out, nd.one_hot(label, 10)).mean());
        });
        L.backward();
        trainer.step(n);
        const out = net(data);
        metrics[0].update([label], [out]);
        metrics[1].update([label], [nd.softmax(out)]);
      }
      use(metrics[0].get()); use(metrics[1].get());
    }
  }
}
{ // autograd on eager calls
  const x = nd.random.uniform(0, 1, [3, 4]);
  x.attachGrad();
  autograd.record(() => nd.sum(nd.sigmoid(x).mul(x).add(nd.tanh(x)))).backward();
  use(x.grad);
}

// ---- the threaded tiers' pool: a worker falling asleep between jobs and woken, blocks disposed (their
// buffers released on every thread) -----------------------------------------------------------------
{
  const a = nd.random.uniform(-1, 1, [256, 256]), v = nd.random.uniform(-1, 1, [1 << 18]);
  for (let i = 0; i < 4; i++) {
    await new Promise((r) => setTimeout(r, 20)); // (past the pool's spin: the worker sleeps)
    use(nd.dot(a, a)); use(nd.relu(v)); use(nd.sum(v));
  }
  const net = new nn.HybridSequential();
  net.add(new nn.Conv2D(8, 3), new nn.Dense(4));
  net.initialize();
  net.hybridize();
  use(net(nd.random.uniform(0, 1, [2, 3, 16, 16])));
  net.dispose();
  use(mx.memory());
}

// ---- the profile ------------------------------------------------------------------------------------
const size = 1 << 20, at = M._malloc(size);
const n = M.asm.__write_profile(at, size);
if (!(n > 8 && n <= size)) throw new Error(`split-profile: __write_profile wrote ${n} bytes`);
writeFileSync(out, new Uint8Array(M.HEAPU8.buffer, at, n));
rmSync(tmp, { recursive: true, force: true });
console.log(`split-profile: ${tier}: ${n} bytes of profile`);
