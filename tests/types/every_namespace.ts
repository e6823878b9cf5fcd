// A user program touching every namespace of mxnet-wasm; tests/js/types.test.mjs compiles it with
// tsc --strict --noEmit against dist/index.d.ts and expects zero errors. (Type-checked only, not run.)
import * as mx from 'mxnet-wasm';
import mxDefault, { nd, sym, gluon, autograd, init, optimizer, lr_scheduler, lrScheduler, metric, NDArray, Symbol as MxSymbol } from 'mxnet-wasm';

const { nn, rnn, loss, data, utils, model_zoo, contrib } = gluon;

// ---- nd: ops in positional and object forms, helpers, fluent methods, indexing ----
const x: NDArray = nd.array([[1, 2, 3], [4, 5, 6]]);
const p1 = nd.softmax(x, { axis: 1 });
const p2 = nd.sum(x, 1);
const p3 = nd.clip(x, 0, 1);
const p4 = nd.FullyConnected(x, nd.ones([4, 3]), nd.zeros([4]), { num_hidden: 4 });
const p5 = nd.Convolution({ data: nd.ones([1, 1, 5, 5]), weight: nd.ones([2, 1, 3, 3]), kernel: [3, 3], num_filter: 2, no_bias: true });
const p6 = nd.concat(x, x, { dim: 0 });
const sum: number = nd.add(1, 2);
const arr: NDArray = nd.add(x, 1).mul(2).exp().sum({ axis: 1 }).sliceAxis(0, 0, 1);
const f32: Float32Array = x.toTypedArray();
const i32: Int32Array = x.astype('int32').toTypedArray<'int32'>();
const i64: BigInt64Array = x.astype('int64').toTypedArray<'int64'>();
const rows = x.toArray<number[][]>();
const first: number = rows[0][0] + x.get(0, 1).item() + x.get([0, 2], [null, null, 2]).size;
x.set(0, [0, 2], 7);
x.set(nd.zeros([2, 3]));
const r1 = x.reshape([3, 2]).T.expandDims(0).squeeze().flatten().broadcastTo([2, 3]);
nd.save('/tmp/x.params', { x });
const bytes: Uint8Array = nd.saveBytes([x]);
const loaded = nd.loadBytes(bytes);
const img = nd.image.to_tensor(nd.zeros([4, 4, 3], { dtype: 'uint8' }));
const rnd = nd.random.uniform(0, 1, [2, 2]);
mx.random.seed(42);
const norm = mx.random.normal({ loc: 0, scale: 1, shape: [3] });
const c = nd.concatenate([x, x], 1);

// ---- autograd ----
x.attachGrad();
const y = autograd.record(() => x.mul(x).sum());
y.backward();
const g: NDArray | null = x.grad;
const gs: NDArray = autograd.grad(autograd.record(() => x.sum()), x, { retainGraph: false });
class Square extends autograd.Function {
  forward(a: NDArray): NDArray { this.saveForBackward(a); return a.mul(a); }
  backward(dy: NDArray): NDArray { const [a] = this.savedTensors; return dy.mul(a).mul(2); }
}
const sq = new Square()(x);

// ---- sym ----
const data0 = sym.var('data');
const fc = sym.FullyConnected(data0, { num_hidden: 10, name: 'fc1' });
const act = sym.Activation(fc, { act_type: 'relu' }).exp();
const [argShapes] = act.inferShape({ data: [2, 5] });
const json: string = act.tojson();
const back: MxSymbol = sym.fromJSON(json);
const grouped = sym.Group([fc, act]);
const z = sym.zeros([2, 2]);

// ---- gluon: blocks (callable), custom HybridBlock, parameters ----
class Net extends gluon.HybridBlock {
  dense0: gluon.nn.Dense;
  dense1: gluon.nn.Dense;
  constructor(opts?: { prefix?: string }) {
    super(opts ?? {});
    this.dense0 = this.nameScope(() => new nn.Dense(20, { activation: 'relu' }));
    this.dense1 = this.nameScope(() => new nn.Dense(10));
  }
  hybridForward(F: mx.F, x: NDArray): NDArray {
    return F.relu(this.dense1(this.dense0(x)));
  }
}
const net = new Net();
net.initialize({ init: new init.Xavier({ magnitude: 2.24 }), ctx: mx.cpu() });
net.hybridize({ staticAlloc: true });
const out: NDArray = net(nd.ones([2, 5]));
const params: gluon.ParameterDict = net.collectParams();
for (const [name, param] of params) console.log(name, param.shape, param.data().shape);
const w: NDArray = net.dense0.weight.data();
const seq = new nn.HybridSequential();
seq.add(new nn.Conv2D(6, 5, { activation: 'relu' }), new nn.MaxPool2D(2, 2), new nn.Flatten(), new nn.Dense(10));
seq.add(new nn.BatchNorm(), new nn.Dropout(0.5), new nn.LayerNorm(), new nn.Activation('relu'), new nn.LeakyReLU(0.1));
seq.add(new nn.Conv2DTranspose({ channels: 2, kernel_size: [3, 3] }), new nn.GlobalAvgPool2D(), new nn.Embedding(10, 4));
seq.add(new nn.HybridLambda((F, a) => F.relu(a)), new contrib.nn.Identity(), new contrib.nn.HybridConcurrent({ axis: 1 }));
const child = seq.at(0);
const lam = new nn.Lambda('tanh');
const n2 = seq.length;
const exported: [string, string] = seq.export('/tmp/model', 3);
const bytes2 = seq.exportBytes();
async function loading(): Promise<void> {
  const controller = new AbortController();
  const imported = await gluon.SymbolBlock.imports('model-symbol.json', ['data'], 'model-0000.params', {
    onProgress: (e) => console.log(e.file, e.loaded, e.total), signal: controller.signal,
  });
  const o: NDArray = imported(nd.zeros([1, 784]));
  await net.loadParameters('net.params', { ctx: mx.cpu(), allowMissing: true });
  await net.loadParameters(new Uint8Array(4), null, false, true);
  const s = await sym.load('a-symbol.json', { requestInit: { credentials: 'omit' } });
  const arrays = await nd.load('a.params');
  const pretrained: gluon.HybridBlock = await model_zoo.vision.resnet18_v1({ pretrained: true, root: 'https://example.org/models/' });
}
const mobilenet: gluon.HybridBlock = model_zoo.vision.mobilenet_v2_1_0({ classes: 10 });
const byName = model_zoo.vision.getModel('squeezenet1.0');
const file: string = gluon.model_zoo.model_store.getModelFile('resnet18_v1', '/models');

// ---- rnn ----
const lstm = new rnn.LSTM(20, 2, { layout: 'NTC' });
lstm.initialize();
const [seqOut, states] = lstm(nd.ones([3, 4, 5]), lstm.beginState(3));
const cell = new rnn.LSTMCell({ hidden_size: 8 });
const stack = new rnn.SequentialRNNCell();
stack.add(cell);
stack.add(new rnn.DropoutCell(0.5));
const [outs, last] = stack.unroll(4, nd.ones([2, 4, 3]), { layout: 'NTC', mergeOutputs: true });
const gru = new rnn.GRU({ hiddenSize: 4 });

// ---- losses, data, Trainer, optimizer, lr_scheduler, metric ----
const lossFn = new loss.SoftmaxCrossEntropyLoss({ sparse_label: true });
const l2 = new loss.L2Loss();
const lossValue: NDArray = lossFn(out, nd.array([1, 2]));
const dataset = new data.ArrayDataset(nd.ones([10, 5]), nd.zeros([10]));
const loader = new data.DataLoader(dataset, { batchSize: 4, shuffle: true, last_batch: 'rollover' });
const schedule = new lr_scheduler.CosineScheduler({ maxUpdate: 100, baseLr: 0.1, warmupSteps: 5 });
const factor = new lrScheduler.FactorScheduler(10, 0.5);
const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.1, momentum: 0.9, lr_scheduler: schedule });
const adam = new optimizer.Adam({ learningRate: 1e-3, wd: 1e-4 });
const trainer2 = new gluon.Trainer(net.collectParams(), adam);
const acc = new metric.Accuracy();
const topk = new metric.TopKAccuracy({ top_k: 3 });
const composite = metric.create(['acc', 'ce']);
for (const [batch, label] of loader) {
  mx.tidy(() => {
    const l = autograd.record(() => lossFn(net(batch), label));
    l.backward();
    trainer.step(batch.shape[0]);
    acc.update([label], [net(batch)]);
  });
}
const [metricName, metricValue] = acc.get();
const states2: Uint8Array = trainer.saveStates();
const transformed = new data.vision.transforms.Compose([
  new data.vision.transforms.Resize(32), new data.vision.transforms.CenterCrop(28), new data.vision.transforms.ToTensor(),
  new data.vision.transforms.Normalize(0.13, 0.31),
]);
const clipped: number = utils.clipGlobalNorm([w], 1.0);

// ---- mx.image, name, runtime ----
const pixels = mx.image.fromPixels({ data: new Uint8ClampedArray(16), width: 2, height: 2 }, { channels: 3 });
const small = mx.image.resize_short(pixels, 2);
const [crop, box] = mx.image.center_crop(small, [2, 2]);
const normalized = mx.image.color_normalize(crop.astype('float32'), nd.array([0.5, 0.5, 0.5]));
const prefixed = mx.name.withNameManager(new mx.name.Prefix('net_'), () => sym.var('x'));
const features = mx.features();
const t: string = features.tier;
mx.setNumThreads(1);
const mem = mx.memory().bytes;
const v: string = mx.version + mxDefault.version;
const kept = mx.keep(nd.ones([1]));
const op = new mx.CachedOp(act);
const ops: readonly string[] = mx.registeredOps;
try { nd.ones([-1]); } catch (e) { if (e instanceof mx.MXNetError) console.log(e.message); }
const sgd = mxDefault.optimizer.create('sgd', { learning_rate: 0.1 });
const initializer = init.create('xavier');
