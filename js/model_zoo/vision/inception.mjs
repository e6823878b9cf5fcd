// inception.mjs -- Inception v3 (MXNet 1.9.1 python/mxnet/gluon/model_zoo/vision/inception.py):
// the stem, blocks A1-A3, B, C1-C4, D, E1-E2 (HybridConcurrent branches of conv-BN(eps 1e-3)-relu),
// an 8x8 average pool, Dropout and the classifier; input 299x299.
import { HybridBlock } from '../../block.mjs';
import * as nn from '../../nn.mjs';
import { HybridConcurrent } from '../../contrib_nn.mjs';
import { bindArgs } from '../../signature.mjs';
import { sig, blockArgs, pick, finish, PRETRAINED, BLOCK_KW } from './common.mjs';

const SIG = {
  Inception3: sig('Inception3', [['classes', 1000, 'int']]),
  inception_v3: sig('inception_v3', PRETRAINED, [['classes', 1000, 'int'], ...BLOCK_KW]),
};

// _make_basic_conv(**kwargs): Conv2D without bias, BatchNorm(epsilon=0.001), relu
function makeBasicConv(kwargs) {
  const out = new nn.HybridSequential({ prefix: '' });
  out.add(new nn.Conv2D({ useBias: false, ...kwargs }));
  out.add(new nn.BatchNorm({ epsilon: 0.001 }));
  out.add(new nn.Activation('relu'));
  return out;
}
// _make_branch(use_pool, *conv_settings): an optional pool, then a basic conv per setting
// [channels, kernel_size, strides, padding] (null: the Conv2D default).
const SETTING_NAMES = ['channels', 'kernel_size', 'strides', 'padding'];
function makeBranch(usePool, ...convSettings) {
  const out = new nn.HybridSequential({ prefix: '' });
  if (usePool === 'avg') out.add(new nn.AvgPool2D({ poolSize: 3, strides: 1, padding: 1 }));
  else if (usePool === 'max') out.add(new nn.MaxPool2D({ poolSize: 3, strides: 2 }));
  for (const setting of convSettings) {
    const kwargs = {};
    setting.forEach((value, i) => { if (value !== null) kwargs[SETTING_NAMES[i]] = value; });
    out.add(makeBasicConv(kwargs));
  }
  return out;
}
function concurrent(prefix, fill) {
  const out = new HybridConcurrent({ axis: 1, prefix });
  out.nameScope(() => fill(out));
  return out;
}
const makeA = (poolFeatures, prefix) => concurrent(prefix, (out) => {
  out.add(makeBranch(null, [64, 1, null, null]));
  out.add(makeBranch(null, [48, 1, null, null], [64, 5, null, 2]));
  out.add(makeBranch(null, [64, 1, null, null], [96, 3, null, 1], [96, 3, null, 1]));
  out.add(makeBranch('avg', [poolFeatures, 1, null, null]));
});
const makeB = (prefix) => concurrent(prefix, (out) => {
  out.add(makeBranch(null, [384, 3, 2, null]));
  out.add(makeBranch(null, [64, 1, null, null], [96, 3, null, 1], [96, 3, 2, null]));
  out.add(makeBranch('max'));
});
const makeC = (c7, prefix) => concurrent(prefix, (out) => {
  out.add(makeBranch(null, [192, 1, null, null]));
  out.add(makeBranch(null, [c7, 1, null, null], [c7, [1, 7], null, [0, 3]], [192, [7, 1], null, [3, 0]]));
  out.add(makeBranch(null, [c7, 1, null, null], [c7, [7, 1], null, [3, 0]], [c7, [1, 7], null, [0, 3]],
    [c7, [7, 1], null, [3, 0]], [192, [1, 7], null, [0, 3]]));
  out.add(makeBranch('avg', [192, 1, null, null]));
});
const makeD = (prefix) => concurrent(prefix, (out) => {
  out.add(makeBranch(null, [192, 1, null, null], [320, 3, 2, null]));
  out.add(makeBranch(null, [192, 1, null, null], [192, [1, 7], null, [0, 3]], [192, [7, 1], null, [3, 0]],
    [192, 3, 2, null]));
  out.add(makeBranch('max'));
});
const makeE = (prefix) => concurrent(prefix, (out) => {
  out.add(makeBranch(null, [320, 1, null, null]));

  const branch3x3 = new nn.HybridSequential({ prefix: '' });
  out.add(branch3x3);
  branch3x3.add(makeBranch(null, [384, 1, null, null]));
  const branch3x3Split = new HybridConcurrent({ axis: 1, prefix: '' });
  branch3x3Split.add(makeBranch(null, [384, [1, 3], null, [0, 1]]));
  branch3x3Split.add(makeBranch(null, [384, [3, 1], null, [1, 0]]));
  branch3x3.add(branch3x3Split);

  const branch3x3dbl = new nn.HybridSequential({ prefix: '' });
  out.add(branch3x3dbl);
  branch3x3dbl.add(makeBranch(null, [448, 1, null, null], [384, 3, null, 1]));
  const branch3x3dblSplit = new HybridConcurrent({ axis: 1, prefix: '' });
  branch3x3dbl.add(branch3x3dblSplit);
  branch3x3dblSplit.add(makeBranch(null, [384, [1, 3], null, [0, 1]]));
  branch3x3dblSplit.add(makeBranch(null, [384, [3, 1], null, [1, 0]]));

  out.add(makeBranch('avg', [192, 1, null, null]));
});

// make_aux(classes): the auxiliary classifier head (defined by MXNet's module, unused by Inception3)
export function make_aux(classes) {
  const out = new nn.HybridSequential({ prefix: '' });
  out.add(new nn.AvgPool2D({ poolSize: 5, strides: 3 }));
  out.add(makeBasicConv({ channels: 128, kernel_size: 1 }));
  out.add(makeBasicConv({ channels: 768, kernel_size: 5 }));
  out.add(new nn.Flatten());
  out.add(new nn.Dense(classes));
  return out;
}

// Inception3(classes = 1000)
export class Inception3 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.Inception3, args);
    super(blockArgs(a));
    this.nameScope(() => {
      const f = this.features = new nn.HybridSequential({ prefix: '' });
      f.add(makeBasicConv({ channels: 32, kernel_size: 3, strides: 2 }));
      f.add(makeBasicConv({ channels: 32, kernel_size: 3 }));
      f.add(makeBasicConv({ channels: 64, kernel_size: 3, padding: 1 }));
      f.add(new nn.MaxPool2D({ poolSize: 3, strides: 2 }));
      f.add(makeBasicConv({ channels: 80, kernel_size: 1 }));
      f.add(makeBasicConv({ channels: 192, kernel_size: 3 }));
      f.add(new nn.MaxPool2D({ poolSize: 3, strides: 2 }));
      f.add(makeA(32, 'A1_'));
      f.add(makeA(64, 'A2_'));
      f.add(makeA(64, 'A3_'));
      f.add(makeB('B_'));
      f.add(makeC(128, 'C1_'));
      f.add(makeC(160, 'C2_'));
      f.add(makeC(160, 'C3_'));
      f.add(makeC(192, 'C4_'));
      f.add(makeD('D_'));
      f.add(makeE('E1_'));
      f.add(makeE('E2_'));
      f.add(new nn.AvgPool2D({ poolSize: 8 }));
      f.add(new nn.Dropout(0.5));
      this.output = new nn.Dense(a.classes);
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// inception_v3(pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models', {classes, prefix, params})
export function inception_v3(...args) {
  const a = bindArgs(SIG.inception_v3, args);
  return finish(new Inception3(pick(a, ['classes', 'prefix', 'params'])), a, 'inceptionv3');
}
export const inceptionV3 = inception_v3;
