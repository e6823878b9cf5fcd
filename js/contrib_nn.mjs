// contrib_nn.mjs -- gluon.contrib.nn's container layers (MXNet 1.9.1
// python/mxnet/gluon/contrib/nn/basic_layers.py): Concurrent, HybridConcurrent and Identity, which
// the model zoo's DenseNet, SqueezeNet and Inception v3 are built from.
//
//   const net = new gluon.contrib.nn.HybridConcurrent(1);    // axis 1
//   net.add(new gluon.nn.Dense(10), new gluon.contrib.nn.Identity());
import { Sequential, HybridSequential, HybridBlock, F } from './block.mjs';
import { bindArgs, defineSignature } from './signature.mjs';

const SIG = {
  Concurrent: defineSignature('contrib.nn.Concurrent', [['axis', -1, 'int'], ['prefix', null, 'str'], ['params', null, 'params']]),
  HybridConcurrent: defineSignature('contrib.nn.HybridConcurrent', [['axis', -1, 'int'], ['prefix', null, 'str'],
    ['params', null, 'params']]),
  Identity: defineSignature('contrib.nn.Identity', [['prefix', null, 'str'], ['params', null, 'params']]),
};

// Concurrent(axis = -1, prefix = null, params = null): feeds its input to every child and
// concatenates their outputs along `axis` (nd.concat, dim = axis).
export class Concurrent extends Sequential {
  constructor(...args) {
    const a = bindArgs(SIG.Concurrent, args);
    super({ prefix: a.prefix, params: a.params });
    this.axis = a.axis;
  }
  forward(x) {
    const out = [];
    for (const block of this._children.values()) out.push(block(x));
    return F.nd.concat(...out, { dim: this.axis });
  }
}

// HybridConcurrent(axis = -1, prefix = null, params = null): the same as a HybridBlock (F.concat).
export class HybridConcurrent extends HybridSequential {
  constructor(...args) {
    const a = bindArgs(SIG.HybridConcurrent, args);
    super({ prefix: a.prefix, params: a.params });
    this.axis = a.axis;
  }
  hybridForward(F_, x) {
    const out = [];
    for (const block of this._children.values()) out.push(block(x));
    return F_.concat(...out, { dim: this.axis });
  }
}

// Identity(prefix = null, params = null): passes its input through (hybrid_forward returns x).
export class Identity extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.Identity, args);
    super({ prefix: a.prefix, params: a.params });
  }
  hybridForward(F_, x) { return x; }
}
