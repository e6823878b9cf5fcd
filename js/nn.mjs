// nn.mjs -- gluon.nn layers with Gluon 1.9's constructor arguments, defaults, parameter names
// and initializers, lowering to the exact operators and attributes MXNet exports
// (../shared/spec/gluon-semantics.md §6). Every constructor binds its arguments through the one
// binder with its Python signature from signatures.mjs: Python's positional order, then an
// options object naming any parameter (camelCase or snake_case).
import { MXNetError, registry } from './core.mjs';
import { HybridBlock, Block, Sequential, HybridSequential, nextAlias } from './block.mjs';
import * as init from './initializer.mjs';
import { pyFloat } from './format.mjs';
import { bindArgs } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';

const tupleOf = (v, n) => (Array.isArray(v) || ArrayBuffer.isView(v) ? Array.from(v) : new Array(n).fill(v));
const blockArgs = (a) => ({ prefix: a.prefix, params: a.params });
const bind = (name, args) => bindArgs(SIGNATURES[`nn.${name}`], args);
const LAYOUTS = { 1: ['NCW', 'NWC'], 2: ['NCHW', 'NHWC'], 3: ['NCDHW', 'NDHWC'] };
const CONV_LAYOUTS = { 1: ['NCW'], 2: ['NCHW', 'NHWC'], 3: ['NCDHW', 'NDHWC'] }; // Gluon 1.9's Conv1D: NCW only
function checkPositive(layer, name, values) {
  for (const v of values) {
    if (!(Number.isInteger(v) && v > 0)) throw new MXNetError(`${layer}: ${name} must be positive integers, got (${values.join(', ')})`);
  }
}
function checkNonNegative(layer, name, values) {
  for (const v of values) {
    if (!(Number.isInteger(v) && v >= 0)) throw new MXNetError(`${layer}: ${name} must be non-negative integers, got (${values.join(', ')})`);
  }
}
// in_channels / in_units: 0 means "inferred at the first forward"
const checkInSize = (layer, name, v) => checkNonNegative(layer, name, [v]);
// The act_type values of MXNet's Activation op (its ActivationParam enum), read from the registry:
// a bad name fails when the layer is built, not at its first forward.
const ACT_TYPES = registry.ops.find((o) => o.name === 'Activation').attrs.find((x) => x.name === 'act_type').values;
function checkActivation(layer, act) {
  if (!ACT_TYPES.includes(act)) {
    throw new MXNetError(`${layer}: activation '${act}' is not a valid act_type (valid values are: ${ACT_TYPES.map((v) => `'${v}'`).join(', ')})`);
  }
}

// ---- basic layers ----------------------------------------------------------------------------------
export class Activation extends HybridBlock {
  static alias(hint) { return hint; }
  constructor(...args) {
    const a = bind('Activation', args);
    checkActivation('Activation', a.activation);
    nextAlias(a.activation);
    super(blockArgs(a));
    this._actType = a.activation;
  }
  hybridForward(F, x) { return F.Activation(x, { act_type: this._actType, name: 'fwd' }); }
  toString() { return `Activation(${this._actType})`; }
}

export class Dense extends HybridBlock {
  constructor(...args) {
    const a = bind('Dense', args);
    super(blockArgs(a));
    checkPositive('Dense', 'units', [a.units]);
    checkInSize('Dense', 'in_units', a.inUnits);
    if (a.activation) checkActivation('Dense', a.activation);
    this._units = a.units;
    this._inUnits = a.inUnits;
    this._flatten = a.flatten;
    this.nameScope(() => {
      this.weight = this.params.get('weight', { shape: [a.units, a.inUnits], init: a.weightInitializer, dtype: a.dtype, allowDeferredInit: true });
      if (a.useBias) this.bias = this.params.get('bias', { shape: [a.units], init: a.biasInitializer, dtype: a.dtype, allowDeferredInit: true });
      else this.bias = null;
      this.act = a.activation ? new Activation(a.activation, { prefix: `${a.activation}_` }) : null;
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
  constructor(...args) {
    const a = bind('Dropout', args);
    super(blockArgs(a));
    if (!(a.rate >= 0 && a.rate <= 1)) throw new MXNetError(`Dropout: rate must be in [0, 1], got ${a.rate}`);
    this._rate = a.rate;
    this._axes = tupleOf(a.axes, 1);
  }
  hybridForward(F, x) {
    if (this._rate > 0) return F.Dropout(x, { p: this._rate, axes: this._axes, name: 'fwd', cudnn_off: false });
    return F.identity(x);
  }
  toString() { return `Dropout(p = ${this._rate}, axes=(${this._axes.join(', ')}))`; }
}

class _BatchNormBase extends HybridBlock {
  static alias() { return 'batchnorm'; }
  constructor(a, opName) {
    super(blockArgs(a));
    this._opName = opName;
    this._kwargs = {
      axis: a.axis, eps: pyFloat(a.epsilon), momentum: pyFloat(a.momentum), fix_gamma: !a.scale,
      use_global_stats: a.useGlobalStats,
    };
    this._axis = a.axis;
    const ch = a.inChannels;
    checkInSize(this.constructor.name, 'in_channels', ch);
    if (ch !== 0) this.inChannels = ch;
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: a.scale ? 'write' : 'null', shape: [ch], init: a.gammaInitializer, allowDeferredInit: true, differentiable: a.scale });
      this.beta = this.params.get('beta', { gradReq: a.center ? 'write' : 'null', shape: [ch], init: a.betaInitializer, allowDeferredInit: true, differentiable: a.center });
      this.running_mean = this.params.get('running_mean', { gradReq: 'null', shape: [ch], init: a.runningMeanInitializer, allowDeferredInit: true, differentiable: false });
      this.running_var = this.params.get('running_var', { gradReq: 'null', shape: [ch], init: a.runningVarianceInitializer, allowDeferredInit: true, differentiable: false });
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
  constructor(...args) { super(bind('BatchNorm', args), 'BatchNorm'); }
}
export class BatchNormReLU extends _BatchNormBase {
  static alias() { return 'batchnormrelu'; }
  constructor(...args) { super(bind('BatchNormReLU', args), '_contrib_BatchNormWithReLU'); }
}

export class Embedding extends HybridBlock {
  constructor(...args) {
    const a = bind('Embedding', args);
    super(blockArgs(a));
    checkPositive('Embedding', 'input_dim and output_dim', [a.inputDim, a.outputDim]);
    this._kwargs = { input_dim: a.inputDim, output_dim: a.outputDim, dtype: a.dtype, sparse_grad: a.sparseGrad };
    this.nameScope(() => {
      this.weight = this.params.get('weight', { shape: [a.inputDim, a.outputDim], init: a.weightInitializer, dtype: a.dtype, allowDeferredInit: true, gradStype: a.sparseGrad ? 'row_sparse' : 'default' });
    });
  }
  hybridForward(F, x, { weight }) { return F.Embedding(x, weight, { ...this._kwargs, name: 'fwd' }); }
  toString() { return `Embedding(${this._kwargs.input_dim} -> ${this._kwargs.output_dim}, ${this._kwargs.dtype})`; }
}

export class Flatten extends HybridBlock {
  constructor(...args) { super(blockArgs(bind('Flatten', args))); }
  hybridForward(F, x) { return F.Flatten(x); }
  toString() { return 'Flatten'; }
}

export class InstanceNorm extends HybridBlock {
  constructor(...args) {
    const a = bind('InstanceNorm', args);
    super(blockArgs(a));
    checkInSize('InstanceNorm', 'in_channels', a.inChannels);
    this._axis = a.axis;
    this._kwargs = { eps: pyFloat(a.epsilon) };
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: a.scale ? 'write' : 'null', shape: [a.inChannels], init: a.gammaInitializer, allowDeferredInit: true });
      this.beta = this.params.get('beta', { gradReq: a.center ? 'write' : 'null', shape: [a.inChannels], init: a.betaInitializer, allowDeferredInit: true });
    });
  }
  hybridForward(F, x, { gamma, beta }) {
    if (this._axis === 1) return F.InstanceNorm(x, gamma, beta, { ...this._kwargs, name: 'fwd' });
    const t = F.swapaxes(x, { dim1: 1, dim2: this._axis });
    return F.swapaxes(F.InstanceNorm(t, gamma, beta, { ...this._kwargs, name: 'fwd' }), { dim1: 1, dim2: this._axis });
  }
}

export class LayerNorm extends HybridBlock {
  constructor(...args) {
    const a = bind('LayerNorm', args);
    super(blockArgs(a));
    checkInSize('LayerNorm', 'in_channels', a.inChannels);
    this._kwargs = { axis: a.axis, eps: pyFloat(a.epsilon) };
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: a.scale ? 'write' : 'null', shape: [a.inChannels], init: a.gammaInitializer, allowDeferredInit: true });
      this.beta = this.params.get('beta', { gradReq: a.center ? 'write' : 'null', shape: [a.inChannels], init: a.betaInitializer, allowDeferredInit: true });
    });
  }
  hybridForward(F, x, { gamma, beta }) { return F.LayerNorm(x, gamma, beta, this._kwargs); }
}

export class GroupNorm extends HybridBlock {
  constructor(...args) {
    const a = bind('GroupNorm', args);
    super(blockArgs(a));
    checkPositive('GroupNorm', 'num_groups', [a.numGroups]);
    this._kwargs = { eps: pyFloat(a.epsilon), num_groups: a.numGroups };
    this.nameScope(() => {
      this.gamma = this.params.get('gamma', { gradReq: a.scale ? 'write' : 'null', shape: [a.numGroups], init: a.gammaInitializer, allowDeferredInit: true });
      this.beta = this.params.get('beta', { gradReq: a.center ? 'write' : 'null', shape: [a.numGroups], init: a.betaInitializer, allowDeferredInit: true });
    });
  }
  hybridForward(F, x, { gamma, beta }) { return F.GroupNorm(x, gamma, beta, this._kwargs); }
}

// Lambda(function): an mx.nd function name or a callable f(...args).
export class Lambda extends Block {
  constructor(...args) {
    const a = bind('Lambda', args);
    super({ prefix: a.prefix });
    const fn = a.function;
    if (typeof fn === 'string') {
      if (!Lambda._nd[fn]) throw new MXNetError(`Function name ${fn} is not found in ndarray.`);
      this._fn = (...x) => Lambda._nd[fn](...x);
      this._fnName = fn;
    } else {
      this._fn = fn;
      this._fnName = fn.name || 'function';
    }
  }
  forward(...args) { return this._fn(...args); }
  toString() { return `Lambda(${this._fnName})`; }
}

// HybridLambda(function): a name present in both nd and sym, or f(F, x, ...args).
export class HybridLambda extends HybridBlock {
  constructor(...args) {
    const a = bind('HybridLambda', args);
    super({ prefix: a.prefix });
    const fn = a.function;
    if (typeof fn === 'string') {
      if (!Lambda._nd[fn] || !Lambda._sym[fn]) throw new MXNetError(`Function name ${fn} is not found in symbol/ndarray.`);
      this._fn = (F, ...x) => F[fn](...x);
      this._fnName = fn;
    } else {
      this._fn = fn;
      this._fnName = fn.name || 'function';
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
  constructor(...args) {
    const a = bind('LeakyReLU', args);
    super(blockArgs(a));
    if (!(a.alpha >= 0)) throw new MXNetError('Slope coefficient for LeakyReLU must be no less than 0.');
    this._alpha = a.alpha;
  }
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'leaky', slope: this._alpha, name: 'fwd' }); }
  toString() { return `LeakyReLU(${this._alpha})`; }
}
export class PReLU extends HybridBlock {
  constructor(...args) {
    const a = bind('PReLU', args);
    super(blockArgs(a));
    checkPositive('PReLU', 'in_channels', [a.inChannels]);
    this.nameScope(() => {
      this.alpha = this.params.get('alpha', { shape: [a.inChannels], init: a.alphaInitializer ?? new init.Constant(0.25) });
    });
  }
  hybridForward(F, x, { alpha }) { return F.LeakyReLU(x, alpha, { act_type: 'prelu', name: 'fwd' }); }
}
export class ELU extends HybridBlock {
  constructor(...args) {
    const a = bind('ELU', args);
    super(blockArgs(a));
    this._alpha = a.alpha;
  }
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'elu', slope: pyFloat(this._alpha) }); }
}
export class SELU extends HybridBlock {
  constructor(...args) { super(blockArgs(bind('SELU', args))); }
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'selu', name: 'fwd' }); }
}
export class GELU extends HybridBlock {
  constructor(...args) { super(blockArgs(bind('GELU', args))); }
  hybridForward(F, x) { return F.LeakyReLU(x, { act_type: 'gelu', name: 'fwd' }); }
}
export class Swish extends HybridBlock {
  constructor(...args) {
    const a = bind('Swish', args);
    super(blockArgs(a));
    this._beta = a.beta;
  }
  // x * sigmoid(beta * x): _mul_scalar (scalar written as Python's float) -> sigmoid -> x * that
  hybridForward(F, x) {
    return x.mul(F.sigmoid(F._MulScalar(x, { scalar: pyFloat(this._beta) }), { name: 'fwd' }));
  }
}

// ---- convolution ---------------------------------------------------------------------------------
class _Conv extends HybridBlock {
  static alias() { return 'conv'; }
  // a: the bound arguments; n: spatial dims; opName: Convolution or Deconvolution
  constructor(a, n, opName, clsName) {
    super(blockArgs(a));
    const kernel = tupleOf(a.kernelSize, n);
    if (kernel.length !== n) throw new MXNetError(`${clsName}: kernel_size must be a number or a list of ${n} ints`);
    if (!CONV_LAYOUTS[n].includes(a.layout)) throw new MXNetError(`${clsName}: Only ${CONV_LAYOUTS[n].join(' and ')} layout${CONV_LAYOUTS[n].length > 1 ? 's are' : ' is'} supported for ${n}D convolution, got '${a.layout}'`);
    const stride = tupleOf(a.strides, n), pad = tupleOf(a.padding, n), dilate = tupleOf(a.dilation, n);
    for (const [nm, v] of [['strides', stride], ['padding', pad], ['dilation', dilate]]) {
      if (v.length !== n) throw new MXNetError(`${clsName}: ${nm} must be a number or a list of ${n} ints`);
    }
    checkPositive(clsName, 'kernel_size', kernel);
    checkPositive(clsName, 'strides', stride);
    checkPositive(clsName, 'dilation', dilate);
    checkNonNegative(clsName, 'padding', pad);
    checkPositive(clsName, 'channels', [a.channels]);
    checkPositive(clsName, 'groups', [a.groups]);
    checkInSize(clsName, 'in_channels', a.inChannels);
    if (a.activation) checkActivation(clsName, a.activation);
    const { channels, groups, layout, inChannels } = a;
    // the checks of MXNet's Convolution / Deconvolution shape inference, which Gluon's constructor
    // runs to get the weight's shape
    if (channels % groups !== 0) {
      throw new MXNetError(`${clsName}: channels=${channels} must be divisible by groups=${groups} (output num_filter must divide group size)`);
    }
    if (inChannels % groups !== 0) {
      throw new MXNetError(`${clsName}: in_channels=${inChannels} must be divisible by groups=${groups} (input num_filter must divide group size)`);
    }
    this._channels = channels;
    this._inChannels = inChannels;
    this._opName = opName;
    this._kwargs = {
      kernel, stride, dilate, pad, num_filter: channels, num_group: groups, no_bias: !a.useBias, layout,
    };
    if (opName === 'Deconvolution') {
      const adj = tupleOf(a.outputPadding, n);
      checkNonNegative(clsName, 'output_padding', adj);
      this._kwargs.adj = adj;
    }
    this.nameScope(() => {
      // Gluon infers the weight shape with the op's shape inference for data (1, in_channels, 0...)
      const wshape = opName === 'Convolution'
        ? (layout.startsWith('NC') ? [channels, inChannels / groups | 0, ...kernel] : [channels, ...kernel, inChannels / groups | 0])
        : (layout.startsWith('NC') ? [inChannels, channels / groups | 0, ...kernel] : [inChannels, ...kernel, channels / groups | 0]);
      this.weight = this.params.get('weight', { shape: wshape, init: a.weightInitializer, allowDeferredInit: true });
      if (a.useBias) this.bias = this.params.get('bias', { shape: [channels], init: a.biasInitializer, allowDeferredInit: true });
      else this.bias = null;
      this.act = a.activation ? new Activation(a.activation, { prefix: `${a.activation}_` }) : null;
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

function makeConv(name, n, transpose) {
  const cls = class extends _Conv {
    constructor(...args) { super(bind(name, args), n, transpose ? 'Deconvolution' : 'Convolution', name); }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls;
}
export const Conv1D = makeConv('Conv1D', 1, false);
export const Conv2D = makeConv('Conv2D', 2, false);
export const Conv3D = makeConv('Conv3D', 3, false);
export const Conv1DTranspose = makeConv('Conv1DTranspose', 1, true);
export const Conv2DTranspose = makeConv('Conv2DTranspose', 2, true);
export const Conv3DTranspose = makeConv('Conv3DTranspose', 3, true);

// ---- pooling -------------------------------------------------------------------------------------------
class _Pooling extends HybridBlock {
  static alias() { return 'pool'; }
  constructor(a, n, poolType, global, clsName) {
    super(blockArgs(a));
    if (!LAYOUTS[n].includes(a.layout)) throw new MXNetError(`${clsName}: Only ${LAYOUTS[n].join(' and ')} layouts are valid for ${n}D Pooling, got '${a.layout}'`);
    let kernel, stride, pad;
    if (global) {
      kernel = new Array(n).fill(1); stride = new Array(n).fill(1); pad = new Array(n).fill(0);
    } else {
      kernel = tupleOf(a.poolSize, n);
      stride = a.strides === null ? kernel.slice() : tupleOf(a.strides, n);
      pad = tupleOf(a.padding, n);
      for (const [nm, v] of [['pool_size', kernel], ['strides', stride], ['padding', pad]]) {
        if (v.length !== n) throw new MXNetError(`${clsName}: ${nm} must be a number or a list of ${n} ints`);
      }
      checkPositive(clsName, 'pool_size', kernel);
      checkPositive(clsName, 'strides', stride);
      checkNonNegative(clsName, 'padding', pad);
    }
    this._kwargs = {
      kernel, stride, pad, global_pool: global, pool_type: poolType, layout: a.layout,
      pooling_convention: global || a.ceilMode ? 'full' : 'valid', // Python's global pools pass ceil_mode=True
    };
    if (poolType === 'avg' && !global) this._kwargs.count_include_pad = a.countIncludePad;
  }
  hybridForward(F, x) { return F.Pooling(x, { ...this._kwargs, name: 'fwd' }); }
  toString() {
    return `${this.constructor.name}(size=(${this._kwargs.kernel.join(', ')}), stride=(${this._kwargs.stride.join(', ')}), padding=(${this._kwargs.pad.join(', ')}), ceil_mode=${this._kwargs.pooling_convention === 'full' ? 'True' : 'False'}, global_pool=${this._kwargs.global_pool ? 'True' : 'False'}, pool_type=${this._kwargs.pool_type}, layout=${this._kwargs.layout})`;
  }
}
function makePool(name, n, type, global) {
  const cls = class extends _Pooling {
    constructor(...args) { super(bind(name, args), n, type, global, name); }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls;
}
export const MaxPool1D = makePool('MaxPool1D', 1, 'max', false);
export const MaxPool2D = makePool('MaxPool2D', 2, 'max', false);
export const MaxPool3D = makePool('MaxPool3D', 3, 'max', false);
export const AvgPool1D = makePool('AvgPool1D', 1, 'avg', false);
export const AvgPool2D = makePool('AvgPool2D', 2, 'avg', false);
export const AvgPool3D = makePool('AvgPool3D', 3, 'avg', false);
export const GlobalMaxPool1D = makePool('GlobalMaxPool1D', 1, 'max', true);
export const GlobalMaxPool2D = makePool('GlobalMaxPool2D', 2, 'max', true);
export const GlobalMaxPool3D = makePool('GlobalMaxPool3D', 3, 'max', true);
export const GlobalAvgPool1D = makePool('GlobalAvgPool1D', 1, 'avg', true);
export const GlobalAvgPool2D = makePool('GlobalAvgPool2D', 2, 'avg', true);
export const GlobalAvgPool3D = makePool('GlobalAvgPool3D', 3, 'avg', true);

export class ReflectionPad2D extends HybridBlock {
  constructor(...args) {
    const a = bind('ReflectionPad2D', args);
    super(blockArgs(a));
    let padding = a.padding;
    if (typeof padding === 'number') padding = [0, 0, 0, 0, padding, padding, padding, padding];
    padding = Array.from(padding);
    if (padding.length !== 8) throw new MXNetError('ReflectionPad2D: padding must be a number or 8 ints');
    checkNonNegative('ReflectionPad2D', 'padding', padding);
    this._padding = padding;
  }
  hybridForward(F, x) { return F.pad(x, { mode: 'reflect', pad_width: this._padding }); }
}

// Python re-exports Block, HybridBlock and SymbolBlock from gluon.nn as well.
export { Sequential, HybridSequential };
