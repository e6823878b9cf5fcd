// The examples (examples/imperative.mjs, hybridblock_model.mjs, train_mnist.mjs, lenet_export.mjs)
// as a TypeScript user writes them: tests/js/types.test.mjs compiles this file with
// tsc --strict --noEmit and expects zero errors. (Type-checked only, not run.)
import * as mx from 'mxnet-wasm';

const { nd, gluon, autograd } = mx, { nn } = gluon;

// ---- imperative.mjs ----
mx.random.seed(42);
const x = nd.random_normal({ shape: [4, 8] });
const w1 = nd.random_uniform({ low: -0.3, high: 0.3, shape: [16, 8] });
const b1 = nd.zeros([16]);
const w2 = nd.random_uniform({ low: -0.3, high: 0.3, shape: [3, 16] });
const b2 = nd.zeros([3]);
const probs = mx.tidy(() => {
  const h = nd.relu(nd.FullyConnected(x, w1, b1, { num_hidden: 16 }));
  console.log('hidden mean', h.mean().item().toFixed(4));
  const logits = nd.FullyConnected(h, w2, b2, { num_hidden: 3 });
  return nd.softmax(logits, { axis: -1 });
});
console.log('predicted classes', nd.argmax(probs, { axis: 1 }).toArray<number[]>());
console.log('rows sum to one', nd.sum(probs, { axis: 1 }).toArray<number[]>().map((v) => v.toFixed(6)));
const centered = probs.sub(probs.mean({ axis: 1, keepdims: true }));
console.log('above 1/3', centered.greater(0).sum().item(), 'of', centered.size);
try {
  nd.dot(x, w1);
} catch (e) {
  if (e instanceof mx.MXNetError) console.log(e.name, e.message);
}

// ---- hybridblock_model.mjs ----
class Model extends gluon.HybridBlock {
  declare dense0: mx.gluon.nn.Dense;
  declare dense1: mx.gluon.nn.Dense;
  constructor(opts?: { prefix?: string; params?: mx.gluon.ParameterDict }) {
    super(opts ?? {});
    this.nameScope(() => {
      this.dense0 = new nn.Dense(20);
      this.dense1 = new nn.Dense(20);
    });
  }
  hybridForward(F: mx.F, x: mx.NDArray): mx.NDArray {
    x = F.relu(this.dense0(x));
    return F.relu(this.dense1(x));
  }
}
const model = new Model();
model.initialize({ ctx: mx.cpu(0) });
model.summary(nd.zeros([10, 10]));
const h = model.registerForwardHook((block, inputs, output) => console.log(`${block.name}: output ${(output as mx.NDArray).shape.join('x')}`));
model(nd.zeros([10, 10]));
h.detach();
model.hybridize();
const y = model(nd.zeros([10, 10], { ctx: mx.cpu(0) }));
console.log('output', y.shape, 'params', [...model.collectParams().keys()].join(', '));
console.log(`saveParameters: ${model.saveParametersBytes().length} bytes`);

// ---- train_mnist.mjs ----
function lenet(): mx.gluon.nn.HybridSequential {
  const net = new nn.HybridSequential();
  net.add(new nn.Conv2D({ channels: 6, kernel_size: 5, activation: 'relu' }), new nn.MaxPool2D({ pool_size: 2, strides: 2 }),
    new nn.Conv2D({ channels: 16, kernel_size: 3, activation: 'relu' }), new nn.MaxPool2D({ pool_size: 2, strides: 2 }),
    new nn.Flatten(), new nn.Dense(120, 'relu'), new nn.Dense(84, 'relu'), new nn.Dense(10));
  return net;
}
export async function main(train: { x: Float32Array; y: Float32Array; n: number }, epochs = 3, batchSize = 64, lr = 0.008) {
  const trainSet = new gluon.data.ArrayDataset(nd.array(train.x, { shape: [train.n, 1, 28, 28] }), nd.array(train.y));
  const loader = new gluon.data.DataLoader(trainSet, { batchSize, shuffle: true });
  const net = lenet();
  net.initialize(new mx.init.Xavier());
  net.hybridize();
  const lossFn = new gluon.loss.SoftmaxCrossEntropyLoss();
  const schedule = new mx.lr_scheduler.CosineScheduler({ maxUpdate: epochs * loader.length, baseLr: lr });
  const trainer = new gluon.Trainer(net.collectParams(), 'adam', { learning_rate: lr, lr_scheduler: schedule });
  const metric = new mx.metric.Accuracy();
  for (let epoch = 1; epoch <= epochs; epoch++) {
    metric.reset();
    let lossSum = 0;
    for (const [data, label] of loader) {
      const n = data.shape[0];
      lossSum += mx.tidy(() => {
        const [out, loss] = autograd.record(() => {
          const o = net(data);
          return [o, lossFn(o, label)] as const;
        });
        loss.backward();
        trainer.step(n);
        metric.update([label], [out]);
        return loss.sum().item();
      });
      data.dispose();
      label.dispose();
    }
    console.log(`epoch ${epoch}: loss ${lossSum}, train acc ${metric.get()[1]}`);
  }
  const [symbolFile, paramsFile] = net.export('/tmp/lenet');
  const imported = await gluon.SymbolBlock.imports(symbolFile, ['data'], paramsFile);
  imported.hybridize();
  const pred = imported(nd.zeros([1, 1, 28, 28])).argmax({ axis: 1 }).toTypedArray();
  return { pred, symbolFile, paramsFile };
}

// ---- lenet_export.mjs: parameters as hybridForward's last argument ----
class Head extends gluon.HybridBlock {
  declare fc3_weight: mx.gluon.Parameter;
  constructor() {
    super();
    this.fc3_weight = this.params.get('fc3_weight', { shape: [10, 84] });
  }
  hybridForward(F: mx.F, x: mx.NDArray, { fc3_weight }: { fc3_weight: mx.NDArray }): mx.NDArray {
    return F.FullyConnected(x, fc3_weight, null, { num_hidden: 10, no_bias: true });
  }
}
const head = new Head();
head.initialize();
const diff = head(nd.ones([2, 84])).sub(nd.zeros([2, 10])).abs().max().item();
console.log(diff);
