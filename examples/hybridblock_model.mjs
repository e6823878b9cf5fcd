// The HybridBlock API page's Model: two Dense layers with relu, hybridized, then the rest of the
// HybridBlock API -- summary, hooks, inferShape, export, parameter files.
// Run: node examples/hybridblock_model.mjs
import * as mx from 'mxnet-wasm';

const { nd, gluon } = mx, { nn } = gluon;

class Model extends gluon.HybridBlock {
  constructor(opts) {
    super(opts);
    // use nameScope to give child Blocks appropriate names.
    this.nameScope(() => {
      this.dense0 = new nn.Dense(20);
      this.dense1 = new nn.Dense(20);
    });
  }
  hybridForward(F, x) {
    x = F.relu(this.dense0(x));
    return F.relu(this.dense1(x));
  }
}

const model = new Model();
model.initialize({ ctx: mx.cpu(0) });
model.summary(nd.zeros([10, 10]));       // MXNet's table (before hybridizing)
const h = model.registerForwardHook((block, inputs, output) => console.log(`${block.name}: output ${output.shape.join('x')}`));
model(nd.zeros([10, 10]));
h.detach();
model.hybridize();
const y = model(nd.zeros([10, 10], { ctx: mx.cpu(0) }));
console.log('output', y.shape, 'params', [...model.collectParams().keys()].join(', '));
const bytes = model.saveParametersBytes();
console.log(`saveParameters: ${bytes.length} bytes with structural names (dense0.weight, ...)`);
