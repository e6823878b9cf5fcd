// contrib_nn.mjs -- gluon.contrib.nn (MXNet 1.9.1 python/mxnet/gluon/contrib/nn/basic_layers.py):
// the container layers Concurrent, HybridConcurrent and Identity, which the model zoo's DenseNet,
// SqueezeNet and Inception v3 are built from; SyncBatchNorm (one device here: BatchNorm over the
// batch through _contrib_SyncBatchNorm, the op segmentation and detection exports hold); and
// PixelShuffle1D / 2D / 3D (super-resolution's upsampling: reshapes and transposes, as Python's).
// (SparseEmbedding needs row_sparse storage, which this package does not have.)
//
//   const net = new gluon.contrib.nn.HybridConcurrent(1);    // axis 1
//   net.add(new gluon.nn.Dense(10), new gluon.contrib.nn.Identity());
import { Sequential, HybridSequential, HybridBlock, F } from './block.mjs';
import { BatchNorm } from './nn.mjs';
import { MXNetError } from './core.mjs';
import { bindArgs, defineSignature, REQUIRED } from './signature.mjs';

const INIT = 'init|str?';

const SIG = {
  Concurrent: defineSignature('contrib.nn.Concurrent', [['axis', -1, 'int'], ['prefix', null, 'str'], ['params', null, 'params']]),
  HybridConcurrent: defineSignature('contrib.nn.HybridConcurrent', [['axis', -1, 'int'], ['prefix', null, 'str'],
    ['params', null, 'params']]),
  Identity: defineSignature('contrib.nn.Identity', [['prefix', null, 'str'], ['params', null, 'params']]),
  SyncBatchNorm: defineSignature('contrib.nn.SyncBatchNorm', [['in_channels', 0, 'int'], ['num_devices', null, 'int'],
    ['momentum', 0.9, 'number'], ['epsilon', 1e-5, 'number'], ['center', true, 'bool'], ['scale', true, 'bool'],
    ['use_global_stats', false, 'bool'], ['beta_initializer', 'zeros', INIT], ['gamma_initializer', 'ones', INIT],
    ['running_mean_initializer', 'zeros', INIT], ['running_variance_initializer', 'ones', INIT],
    ['prefix', null, 'str'], ['params', null, 'params']]),
  PixelShuffle1D: defineSignature('contrib.nn.PixelShuffle1D', [['factor', REQUIRED, 'shape']]),
  PixelShuffle2D: defineSignature('contrib.nn.PixelShuffle2D', [['factor', REQUIRED, 'shape']]),
  PixelShuffle3D: defineSignature('contrib.nn.PixelShuffle3D', [['factor', REQUIRED, 'shape']]),
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

// SyncBatchNorm(in_channels = 0, num_devices = null, momentum = 0.9, epsilon = 1e-5, center = true,
// scale = true, use_global_stats = false, initializers..., prefix, params): BatchNorm on axis 1 whose
// op is _contrib_SyncBatchNorm with ndev and key = the block's prefix, as Python's. Without
// num_devices Python counts the GPUs (here none: 1) and warns.
export class SyncBatchNorm extends BatchNorm {
  constructor(...args) {
    const a = bindArgs(SIG.SyncBatchNorm, args);
    super({
      axis: 1, momentum: a.momentum, epsilon: a.epsilon, center: a.center, scale: a.scale, useGlobalStats: a.useGlobalStats,
      betaInitializer: a.betaInitializer, gammaInitializer: a.gammaInitializer, runningMeanInitializer: a.runningMeanInitializer,
      runningVarianceInitializer: a.runningVarianceInitializer, inChannels: a.inChannels, prefix: a.prefix, params: a.params,
    });
    let ndev = a.numDevices;
    if (ndev == null) {
      console.warn('UserWarning: Caution using SyncBatchNorm: if not using all the GPUs, please mannually set num_devices');
      ndev = 1;
    }
    this._opName = '_contrib_SyncBatchNorm';
    this._kwargs = {
      eps: this._kwargs.eps, momentum: this._kwargs.momentum, fix_gamma: !a.scale, use_global_stats: a.useGlobalStats,
      ndev, key: this.prefix,
    };
  }
}

// The factors of a PixelShuffle<d>D: an int for every axis, or d ints.
function shuffleFactors(name, factor, d) {
  const f = Array.isArray(factor) ? factor.map(Number) : Array(d).fill(Number(factor));
  if (f.length !== d || !f.every((v) => Number.isInteger(v) && v >= 1)) {
    throw new MXNetError(`${name}: factor must be a positive int or ${d} of them, got ${JSON.stringify(factor)}`);
  }
  return f;
}

// PixelShuffle1D(factor): (N, C f, W) -> (N, C, W f)
export class PixelShuffle1D extends HybridBlock {
  constructor(...args) {
    super();
    [this._factor] = shuffleFactors('PixelShuffle1D', bindArgs(SIG.PixelShuffle1D, args).factor, 1);
  }
  hybridForward(F_, x) {
    const f = this._factor;
    x = F_.reshape(x, [0, -4, -1, f, 0]); // (N, C, f, W)
    x = F_.transpose(x, [0, 1, 3, 2]); // (N, C, W, f)
    return F_.reshape(x, [0, 0, -3]); // (N, C, W*f)
  }
  toString() { return `PixelShuffle1D(${this._factor})`; }
}

// PixelShuffle2D(factor): (N, C f1 f2, H, W) -> (N, C, H f1, W f2)
export class PixelShuffle2D extends HybridBlock {
  constructor(...args) {
    super();
    this._factors = shuffleFactors('PixelShuffle2D', bindArgs(SIG.PixelShuffle2D, args).factor, 2);
  }
  hybridForward(F_, x) {
    const [f1, f2] = this._factors;
    x = F_.reshape(x, [0, -4, -1, f1 * f2, 0, 0]); // (N, C, f1*f2, H, W)
    x = F_.reshape(x, [0, 0, -4, f1, f2, 0, 0]); // (N, C, f1, f2, H, W)
    x = F_.transpose(x, [0, 1, 4, 2, 5, 3]); // (N, C, H, f1, W, f2)
    return F_.reshape(x, [0, 0, -3, -3]); // (N, C, H*f1, W*f2)
  }
  toString() { return `PixelShuffle2D((${this._factors.join(', ')}))`; }
}

// PixelShuffle3D(factor): (N, C f1 f2 f3, D, H, W) -> (N, C, D f1, H f2, W f3)
export class PixelShuffle3D extends HybridBlock {
  constructor(...args) {
    super();
    this._factors = shuffleFactors('PixelShuffle3D', bindArgs(SIG.PixelShuffle3D, args).factor, 3);
  }
  hybridForward(F_, x) {
    const [f1, f2, f3] = this._factors;
    x = F_.reshape(x, [0, -4, -1, f1 * f2 * f3, 0, 0, 0]); // (N, C, f1*f2*f3, D, H, W)
    x = F_.swapaxes(x, 2, 3); // (N, C, D, f1*f2*f3, H, W)
    x = F_.reshape(x, [0, 0, 0, -4, f1, f2 * f3, 0, 0]); // (N, C, D, f1, f2*f3, H, W)
    x = F_.reshape(x, [0, 0, -3, 0, 0, 0]); // (N, C, D*f1, f2*f3, H, W)
    x = F_.swapaxes(x, 3, 4); // (N, C, D*f1, H, f2*f3, W)
    x = F_.reshape(x, [0, 0, 0, 0, -4, f2, f3, 0]); // (N, C, D*f1, H, f2, f3, W)
    x = F_.reshape(x, [0, 0, 0, -3, 0, 0]); // (N, C, D*f1, H*f2, f3, W)
    x = F_.swapaxes(x, 4, 5); // (N, C, D*f1, H*f2, W, f3)
    return F_.reshape(x, [0, 0, 0, 0, -3]); // (N, C, D*f1, H*f2, W*f3)
  }
  toString() { return `PixelShuffle3D((${this._factors.join(', ')}))`; }
}
