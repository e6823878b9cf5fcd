// nn.mjs -- gluon.nn layers with Gluon 1.9's constructor arguments, defaults, parameter names
// and initializers, lowering to the exact operators and attributes MXNet exports
// (../shared/spec/gluon-semantics.md §6). Options are camelCase; snake_case is accepted too.
import { MXNetError } from './core.mjs';
import { HybridBlock, Block, Sequential, HybridSequential } from './block.mjs';
import { opt } from './parameter.mjs';
import * as init from './initializer.mjs';
import { pyFloat } from './format.mjs';

const tupleOf = (v, n) => (Array.isArray(v) ? v.slice() : new Array(n).fill(v));
// Attribute values that must print as Python floats go through attrFloat.
export const attrFloat = (v) => pyFloat(v);

// ---- basic layers ----------------------------------------------------------------------------------
export class Activation extends HybridBlock {
  static alias(o) { return o.__hint; }
  constructor(activation, o = {}) {
    if (typeof activation !== 'string') throw new MXNetError('Activation takes the activation name, e.g. new nn.Activation(\'relu\')');
    super({ ...o, __hint: activation });
    this._actType = activation;
  }
  hybridForward(F, x) { return F.Activation(x, { act_type: this._actType, name: 'fwd' }); }
  toString() { return `Activation(${this._actType})`; }
}

export class Dense extends HybridBlock {
  constructor(units, o = {}) {
    super(o);
    const inUnits = opt(o, 'inUnits', 0);
    const useBias = opt(o, 'useBias', true);
    const dtype = opt(o, 'dtype', 'float32');
    const activation = opt(o, 'activation', null);
    this._units = units;
    this._inUnits = inUnits;
    this._flatten = opt(o, 'flatten', true);
    this.nameScope(() => {
      this.weight = this.params.get('weight', { shape: [units, inUnits], init: opt(o, 'weightInitializer', null), dtype, allowDeferredInit: true });
      if (useBias) this.bias = this.params.get('bias', { shape: [units], init: opt(o, 'biasInitializer', 'zeros'), dtype, allowDeferredInit: true });
      else this.bias = null;
      this.act = activation ? new Activation(activation, { prefix: `${activation}_` }) : null;
    });
  }
  hybridForward(F, x, { weight, bias }) {
    const args = bias ? [x, weight, bias] : [x, weight];
    let y = F.FullyConnected(...args, { no_bias: !bias, num_hidden: this._units, flatten: this._flatten, name: 'fwd' });
    if (this.act) y = this.act(y);
    return y;
  }
  toString() {
    const shape = this.weight.shape;
    return `Dense(${shape[1] || 'None'} -> ${shape[0]}, ${this.act ? String(this.act) : 'linear'})`;
  }
}

export class Dropout extends HybridBlock {
  constructor(rate, o = {}) {
    super(o);
    this._rate = rate;
    this._axes = opt(o, 'axes', []);
  }
  hybridForward(F, x) {
    if (this._rate > 0) return F.Dropout(x, { p: this._rate, axes: this._axes, name: 'fwd', cudnn_off: false });
    return F.identity(x);
  }
  toString() { return `Dropout(p = ${this._rate}, axes=(${this._axes.join(', ')}))`; }
}

class _BatchNormBase extends HybridBlock {
  static alias() { return 'batchnorm'; }
  constructor(o = {}, opName = 'BatchNorm') {
    super(o);
    const axis = opt(o, 'axis', 1);
    const center = opt(o, 'center', true);
    const scale = opt(o, 'scale', true);
    const inChannels = opt(o, 'inChannels', 0);
    this._opName = opName;
    this._kwargs = {
      axis, eps: attrFloat(opt(o, 'epsilon', 1e-5)), momentum: attrFloat(opt(o, 'momentum', 0.9)), fix_gamma: !scale,
      use_global_stats: opt(o, 'useGlobalStats', false),
    };
    this._axis = axis;
    if (inChannels !== 0) this.inChannels = inChannels;
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: scale ? 'write' : 'null', shape: [inChannels], init: opt(o, 'gammaInitializer', 'ones'), allowDeferredInit: true, differentiable: scale });
      this.beta = this.params.get('beta', { gradReq: center ? 'write' : 'null', shape: [inChannels], init: opt(o, 'betaInitializer', 'zeros'), allowDeferredInit: true, differentiable: center });
      this.running_mean = this.params.get('running_mean', { gradReq: 'null', shape: [inChannels], init: opt(o, 'runningMeanInitializer', 'zeros'), allowDeferredInit: true, differentiable: false });
      this.running_var = this.params.get('running_var', { gradReq: 'null', shape: [inChannels], init: opt(o, 'runningVarianceInitializer', 'ones'), allowDeferredInit: true, differentiable: false });
    });
  }
  cast(dtype) {
    if (dtype === 'float16') dtype = 'float32';
    super.cast(dtype);
  }
  hybridForward(F, x, { gamma, beta, running_mean: rm, running_var: rv }) {
    return F[this._opName](x, gamma, beta, rm, rv, { ...this._kwargs, name: 'fwd' });
  }
  toString() {
    const ch = this.gamma.shape[0];
    return `${this.constructor.name}(axis=${this._axis}, eps=${this._kwargs.eps}, momentum=${this._kwargs.momentum}, fix_gamma=${this._kwargs.fix_gamma ? 'True' : 'False'}, use_global_stats=${this._kwargs.use_global_stats ? 'True' : 'False'}, in_channels=${ch || 'None'})`;
  }
}
export class BatchNorm extends _BatchNormBase {
  constructor(o = {}) { super(o, 'BatchNorm'); }
}
export class BatchNormReLU extends _BatchNormBase {
  static alias() { return 'batchnormrelu'; }
  constructor(o = {}) { super(o, '_contrib_BatchNormWithReLU'); }
}

export class Embedding extends HybridBlock {
  constructor(inputDim, outputDim, o = {}) {
    super(o);
    const dtype = opt(o, 'dtype', 'float32');
    const sparseGrad = opt(o, 'sparseGrad', false);
    this._kwargs = { input_dim: inputDim, output_dim: outputDim, dtype, sparse_grad: sparseGrad };
    this.nameScope(() => {
      this.weight = this.params.get('weight', { shape: [inputDim, outputDim], init: opt(o, 'weightInitializer', null), dtype, allowDeferredInit: true, gradStype: sparseGrad ? 'row_sparse' : 'default' });
    });
  }
  hybridForward(F, x, { weight }) { return F.Embedding(x, weight, { ...this._kwargs, name: 'fwd' }); }
  toString() { return `Embedding(${this._kwargs.input_dim} -> ${this._kwargs.output_dim}, ${this._kwargs.dtype})`; }
}

export class Flatten extends HybridBlock {
  hybridForward(F, x) { return F.Flatten(x); }
  toString() { return 'Flatten'; }
}

export class InstanceNorm extends HybridBlock {
  constructor(o = {}) {
    super(o);
    this._axis = opt(o, 'axis', 1);
    this._kwargs = { eps: attrFloat(opt(o, 'epsilon', 1e-5)) };
    const inChannels = opt(o, 'inChannels', 0);
    const center = opt(o, 'center', true), scale = opt(o, 'scale', false);
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: scale ? 'write' : 'null', shape: [inChannels], init: opt(o, 'gammaInitializer', 'ones'), allowDeferredInit: true });
      this.beta = this.params.get('beta', { gradReq: center ? 'write' : 'null', shape: [inChannels], init: opt(o, 'betaInitializer', 'zeros'), allowDeferredInit: true });
    });
  }
  hybridForward(F, x, { gamma, beta }) {
    if (this._axis === 1) return F.InstanceNorm(x, gamma, beta, { ...this._kwargs, name: 'fwd' });
    const t = F.swapaxes(x, { dim1: 1, dim2: this._axis });
    return F.swapaxes(F.InstanceNorm(t, gamma, beta, { ...this._kwargs, name: 'fwd' }), { dim1: 1, dim2: this._axis });
  }
}

export class LayerNorm extends HybridBlock {
  constructor(o = {}) {
    super(o);
    this._kwargs = { axis: opt(o, 'axis', -1), eps: attrFloat(opt(o, 'epsilon', 1e-5)) };
    const inChannels = opt(o, 'inChannels', 0);
    const center = opt(o, 'center', true), scale = opt(o, 'scale', true);
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: scale ? 'write' : 'null', shape: [inChannels], init: opt(o, 'gammaInitializer', 'ones'), allowDeferredInit: true });
      this.beta = this.params.get('beta', { gradReq: center ? 'write' : 'null', shape: [inChannels], init: opt(o, 'betaInitializer', 'zeros'), allowDeferredInit: true });
    });
  }
  hybridForward(F, x, { gamma, beta }) { return F.LayerNorm(x, gamma, beta, this._kwargs); }
}

export class GroupNorm extends HybridBlock {
  constructor(o = {}) {
    super(o);
    const numGroups = opt(o, 'numGroups', 1);
    this._kwargs = { eps: attrFloat(opt(o, 'epsilon', 1e-5)), num_groups: numGroups };
    const center = opt(o, 'center', true), scale = opt(o, 'scale', true);
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: scale ? 'write' : 'null', shape: [numGroups], init: opt(o, 'gammaInitializer', 'ones'), allowDeferredInit: true });
      this.beta = this.params.get('beta', { gradReq: center ? 'write' : 'null', shape: [numGroups], init: opt(o, 'betaInitializer', 'zeros'), allowDeferredInit: true });
    });
  }
  hybridForward(F, x, { gamma, beta }) { return F.GroupNorm(x, gamma, beta, this._kwargs); }
}

// Lambda(function): an mx.nd function name or a callable f(...args).
export class Lambda extends Block {
  constructor(fn, o = {}) {
    super(o);
    if (typeof fn === 'string') {
      const name = fn;
      if (!Lambda._nd[name]) throw new MXNetError(`Function name ${name} is not found in ndarray.`);
      this._fn = (...a) => Lambda._nd[name](...a);
      this._fnName = name;
    } else if (typeof fn === 'function') {
      this._fn = fn;
      this._fnName = fn.name || 'function';
    } else {
      throw new MXNetError(`Unrecognized function in lambda: ${fn} of type ${typeof fn}`);
    }
  }
  forward(...args) { return this._fn(...args); }
  toString() { return `Lambda(${this._fnName})`; }
}

// HybridLambda(function): a name present in both nd and sym, or f(F, x, ...args).
export class HybridLambda extends HybridBlock {
  constructor(fn, o = {}) {
    super(o);
    if (typeof fn === 'string') {
      const name = fn;
      if (!Lambda._nd[name] || !Lambda._sym[name]) throw new MXNetError(`Function name ${name} is not found in symbol/ndarray.`);
      this._fn = (F, ...a) => F[name](...a);
      this._fnName = name;
    } else if (typeof fn === 'function') {
      this._fn = fn;
      this._fnName = fn.name || 'function';
    } else {
      throw new MXNetError(`Unrecognized function in lambda: ${fn} of type ${typeof fn}`);
    }
  }
  hybridForward(F, x, ...rest) {
    rest.pop();
    return this._fn(F, x, ...rest);
  }
  toString() { return `HybridLambda(${this._fnName})`; }
}

// ---- activations --------------------------------------------------------------------------------
export class LeakyReLU extends HybridBlock {
  constructor(alpha, o = {}) {
    super(o);
    if (!(alpha >= 0)) throw new MXNetError('Slope coefficient for LeakyReLU must be no less than 0.');
    this._alpha = alpha;
  }
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'leaky', slope: this._alpha, name: 'fwd' }); }
  toString() { return `LeakyReLU(${this._alpha})`; }
}
export class PReLU extends HybridBlock {
  constructor(o = {}) {
    super(o);
    const inChannels = opt(o, 'inChannels', 1);
    this.nameScope(() => {
      this.alpha = this.params.get('alpha', { shape: [inChannels], init: opt(o, 'alphaInitializer', new init.Constant(0.25)) });
    });
  }
  hybridForward(F, x, { alpha }) { return F.LeakyReLU(x, alpha, { act_type: 'prelu', name: 'fwd' }); }
}
export class ELU extends HybridBlock {
  constructor(alpha = 1.0, o = {}) {
    super(o);
    this._alpha = alpha;
  }
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'elu', slope: attrFloat(this._alpha) }); }
}
export class SELU extends HybridBlock {
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'selu', name: 'fwd' }); }
}
export class GELU extends HybridBlock {
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'gelu', name: 'fwd' }); }
}
export class Swish extends HybridBlock {
  constructor(beta = 1.0, o = {}) {
    super(o);
    this._beta = beta;
  }
  // x * sigmoid(beta * x): _mul_scalar (scalar written as Python's float) -> sigmoid -> x * that
  hybridForward(F, x) {
    return x.mul(F.sigmoid(F._MulScalar(x, { scalar: pyFloat(this._beta) }), { name: 'fwd' }));
  }
}

// ---- convolution ---------------------------------------------------------------------------------
class _Conv extends HybridBlock {
  static alias() { return 'conv'; }
  constructor(channels, kernelSize, strides, padding, dilation, groups, layout, inChannels, activation, useBias,
    weightInitializer, biasInitializer, o, opName, adj) {
    super(o);
    const nd = kernelSize.length;
    this._channels = channels;
    this._inChannels = inChannels;
    this._opName = opName;
    this._kwargs = {
      kernel: kernelSize, stride: tupleOf(strides, nd), dilate: tupleOf(dilation, nd), pad: tupleOf(padding, nd),
      num_filter: channels, num_group: groups, no_bias: !useBias, layout,
    };
    if (adj !== undefined) this._kwargs.adj = adj;
    this.nameScope(() => {
      // Gluon infers the weight shape with the op's shape inference for data (1, in_channels, 0...)
      const wshape = opName === 'Convolution'
        ? (layout.startsWith('NC') ? [channels, inChannels / groups | 0, ...kernelSize] : [channels, ...kernelSize, inChannels / groups | 0])
        : (layout.startsWith('NC') ? [inChannels, channels / groups | 0, ...kernelSize] : [inChannels, ...kernelSize, channels / groups | 0]);
      this.weight = this.params.get('weight', { shape: wshape, init: weightInitializer, allowDeferredInit: true });
      if (useBias) this.bias = this.params.get('bias', { shape: [channels], init: biasInitializer, allowDeferredInit: true });
      else this.bias = null;
      this.act = activation ? new Activation(activation, { prefix: `${activation}_` }) : null;
    });
  }
  hybridForward(F, x, { weight, bias }) {
    const args = bias ? [x, weight, bias] : [x, weight];
    let y = F[this._opName](...args, { ...this._kwargs, name: 'fwd' });
    if (this.act) y = this.act(y);
    return y;
  }
  toString() {
    const s = this.weight.shape;
    const inC = this._opName === 'Convolution' ? s[1] * this._kwargs.num_group : s[0];
    return `${this.constructor.name}(${inC || 'None'} -> ${this._channels}, kernel_size=(${this._kwargs.kernel.join(', ')}), stride=(${this._kwargs.stride.join(', ')}))`;
  }
}

function convArgs(n, defaultLayout, o) {
  return {
    strides: opt(o, 'strides', 1), padding: opt(o, 'padding', 0), dilation: opt(o, 'dilation', 1),
    groups: opt(o, 'groups', 1), layout: opt(o, 'layout', defaultLayout), inChannels: opt(o, 'inChannels', 0),
    activation: opt(o, 'activation', null), useBias: opt(o, 'useBias', true),
    weightInitializer: opt(o, 'weightInitializer', null), biasInitializer: opt(o, 'biasInitializer', 'zeros'),
  };
}
function makeConv(n, defaultLayout, transpose) {
  return class extends _Conv {
    constructor(channels, kernelSize, o = {}) {
      if (kernelSize === undefined || kernelSize === null || (typeof kernelSize === 'object' && !Array.isArray(kernelSize))) {
        o = kernelSize && typeof kernelSize === 'object' ? kernelSize : o;
        kernelSize = opt(o, 'kernelSize', undefined);
      }
      if (kernelSize === undefined) throw new MXNetError('kernel_size is required');
      const k = tupleOf(kernelSize, n);
      if (k.length !== n) throw new MXNetError(`kernel_size must be a number or a list of ${n} ints`);
      const a = convArgs(n, defaultLayout, o);
      const layouts = n === 1 ? ['NCW', 'NWC'] : n === 2 ? ['NCHW', 'NHWC'] : ['NCDHW', 'NDHWC'];
      if (!layouts.includes(a.layout)) throw new MXNetError(`Only ${layouts.join(' and ')} layouts are valid for ${n}D convolution`);
      if (transpose) {
        const outPad = tupleOf(opt(o, 'outputPadding', 0), n);
        super(channels, k, a.strides, a.padding, a.dilation, a.groups, a.layout, a.inChannels, a.activation, a.useBias,
          a.weightInitializer, a.biasInitializer, o, 'Deconvolution', outPad);
      } else {
        super(channels, k, a.strides, a.padding, a.dilation, a.groups, a.layout, a.inChannels, a.activation, a.useBias,
          a.weightInitializer, a.biasInitializer, o, 'Convolution');
      }
    }
  };
}
export const Conv1D = makeConv(1, 'NCW', false);
export const Conv2D = makeConv(2, 'NCHW', false);
export const Conv3D = makeConv(3, 'NCDHW', false);
export const Conv1DTranspose = makeConv(1, 'NCW', true);
export const Conv2DTranspose = makeConv(2, 'NCHW', true);
export const Conv3DTranspose = makeConv(3, 'NCDHW', true);
for (const [name, cls] of Object.entries({ Conv1D, Conv2D, Conv3D, Conv1DTranspose, Conv2DTranspose, Conv3DTranspose })) {
  Object.defineProperty(cls, 'name', { value: name });
}

// ---- pooling -------------------------------------------------------------------------------------------
class _Pooling extends HybridBlock {
  static alias() { return 'pool'; }
  constructor(poolSize, strides, padding, ceilMode, globalPool, poolType, layout, countIncludePad, o) {
    super(o);
    if (strides === null || strides === undefined) strides = poolSize;
    const n = poolSize.length;
    this._kwargs = {
      kernel: poolSize, stride: tupleOf(strides, n), pad: tupleOf(padding, n), global_pool: globalPool, pool_type: poolType,
      layout, pooling_convention: ceilMode ? 'full' : 'valid',
    };
    if (countIncludePad !== null && countIncludePad !== undefined) this._kwargs.count_include_pad = countIncludePad;
  }
  hybridForward(F, x) { return F.Pooling(x, { ...this._kwargs, name: 'fwd' }); }
  toString() {
    return `${this.constructor.name}(size=(${this._kwargs.kernel.join(', ')}), stride=(${this._kwargs.stride.join(', ')}), padding=(${this._kwargs.pad.join(', ')}), ceil_mode=${this._kwargs.pooling_convention === 'full' ? 'True' : 'False'}, global_pool=${this._kwargs.global_pool ? 'True' : 'False'}, pool_type=${this._kwargs.pool_type}, layout=${this._kwargs.layout})`;
  }
}
function makePool(n, defaultLayout, type, global) {
  return class extends _Pooling {
    constructor(poolSize, o = {}) {
      if (poolSize !== undefined && poolSize !== null && typeof poolSize === 'object' && !Array.isArray(poolSize)) { o = poolSize; poolSize = undefined; }
      const layout = opt(o, 'layout', defaultLayout);
      const layouts = n === 1 ? ['NCW', 'NWC'] : n === 2 ? ['NCHW', 'NHWC'] : ['NCDHW', 'NDHWC'];
      if (!layouts.includes(layout)) throw new MXNetError(`Only ${layouts.join(' and ')} layouts are valid for ${n}D Pooling`);
      if (global) {
        super(new Array(n).fill(1), new Array(n).fill(1), new Array(n).fill(0), true, true, type, layout, null, o);
      } else {
        const size = tupleOf(poolSize ?? opt(o, 'poolSize', 2), n);
        const cip = type === 'avg' ? opt(o, 'countIncludePad', true) : null;
        super(size, opt(o, 'strides', null), opt(o, 'padding', 0), opt(o, 'ceilMode', false), false, type, layout, cip, o);
      }
    }
  };
}
export const MaxPool1D = makePool(1, 'NCW', 'max', false);
export const MaxPool2D = makePool(2, 'NCHW', 'max', false);
export const MaxPool3D = makePool(3, 'NCDHW', 'max', false);
export const AvgPool1D = makePool(1, 'NCW', 'avg', false);
export const AvgPool2D = makePool(2, 'NCHW', 'avg', false);
export const AvgPool3D = makePool(3, 'NCDHW', 'avg', false);
export const GlobalMaxPool1D = makePool(1, 'NCW', 'max', true);
export const GlobalMaxPool2D = makePool(2, 'NCHW', 'max', true);
export const GlobalMaxPool3D = makePool(3, 'NCDHW', 'max', true);
export const GlobalAvgPool1D = makePool(1, 'NCW', 'avg', true);
export const GlobalAvgPool2D = makePool(2, 'NCHW', 'avg', true);
export const GlobalAvgPool3D = makePool(3, 'NCDHW', 'avg', true);
for (const [name, cls] of Object.entries({ MaxPool1D, MaxPool2D, MaxPool3D, AvgPool1D, AvgPool2D, AvgPool3D, GlobalMaxPool1D,
  GlobalMaxPool2D, GlobalMaxPool3D, GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D })) {
  Object.defineProperty(cls, 'name', { value: name });
}

export class ReflectionPad2D extends HybridBlock {
  constructor(padding = 0, o = {}) {
    super(o);
    if (typeof padding === 'number') padding = [0, 0, 0, 0, padding, padding, padding, padding];
    if (padding.length !== 8) throw new MXNetError('ReflectionPad2D padding must be a number or 8 ints');
    this._padding = padding;
  }
  hybridForward(F, x) { return F.pad(x, { mode: 'reflect', pad_width: this._padding }); }
}

export { Sequential, HybridSequential };
