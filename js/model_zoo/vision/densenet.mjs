// densenet.mjs -- DenseNet-BC 121/161/169/201 (MXNet 1.9.1 python/mxnet/gluon/model_zoo/vision/
// densenet.py): dense blocks whose layers concatenate their input with growth_rate new channels
// (HybridConcurrent of Identity and BN-relu-1x1-BN-relu-3x3), transitions halving the channels.
import { MXNetError } from '../../core.mjs';
import { HybridBlock } from '../../block.mjs';
import * as nn from '../../nn.mjs';
import { HybridConcurrent, Identity } from '../../contrib_nn.mjs';
import { bindArgs, REQUIRED as R } from '../../signature.mjs';
import { sig, blockArgs, pick, finish, PRETRAINED, BLOCK_KW } from './common.mjs';

const NET_KW = [['bn_size', 4, 'int'], ['dropout', 0, 'number'], ['classes', 1000, 'int'], ...BLOCK_KW];
const SIG = {
  DenseNet: sig('DenseNet', [['num_init_features', R, 'int'], ['growth_rate', R, 'int'], ['block_config', R, 'array'],
    ['bn_size', 4, 'int'], ['dropout', 0, 'number'], ['classes', 1000, 'int']]),
  get_densenet: sig('get_densenet', [['num_layers', R, 'int'], ...PRETRAINED], NET_KW),
};

function makeDenseLayer(growthRate, bnSize, dropout) {
  const f = new nn.HybridSequential({ prefix: '' });
  f.add(new nn.BatchNorm());
  f.add(new nn.Activation('relu'));
  f.add(new nn.Conv2D(bnSize * growthRate, { kernelSize: 1, useBias: false }));
  f.add(new nn.BatchNorm());
  f.add(new nn.Activation('relu'));
  f.add(new nn.Conv2D(growthRate, { kernelSize: 3, padding: 1, useBias: false }));
  if (dropout) f.add(new nn.Dropout(dropout));
  const out = new HybridConcurrent({ axis: 1, prefix: '' });
  out.add(new Identity());
  out.add(f);
  return out;
}
function makeDenseBlock(numLayers, bnSize, growthRate, dropout, stageIndex) {
  const out = new nn.HybridSequential({ prefix: `stage${stageIndex}_` });
  out.nameScope(() => {
    for (let i = 0; i < numLayers; i++) out.add(makeDenseLayer(growthRate, bnSize, dropout));
  });
  return out;
}
function makeTransition(numOutputFeatures) {
  const out = new nn.HybridSequential({ prefix: '' });
  out.add(new nn.BatchNorm());
  out.add(new nn.Activation('relu'));
  out.add(new nn.Conv2D(numOutputFeatures, { kernelSize: 1, useBias: false }));
  out.add(new nn.AvgPool2D({ poolSize: 2, strides: 2 }));
  return out;
}

// DenseNet(num_init_features, growth_rate, block_config, bn_size = 4, dropout = 0, classes = 1000)
export class DenseNet extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.DenseNet, args);
    super(blockArgs(a));
    this.nameScope(() => {
      const f = this.features = new nn.HybridSequential({ prefix: '' });
      f.add(new nn.Conv2D(a.numInitFeatures, { kernelSize: 7, strides: 2, padding: 3, useBias: false }));
      f.add(new nn.BatchNorm());
      f.add(new nn.Activation('relu'));
      f.add(new nn.MaxPool2D({ poolSize: 3, strides: 2, padding: 1 }));
      let numFeatures = a.numInitFeatures;
      a.blockConfig.forEach((numLayers, i) => {
        f.add(makeDenseBlock(numLayers, a.bnSize, a.growthRate, a.dropout, i + 1));
        numFeatures += numLayers * a.growthRate;
        if (i !== a.blockConfig.length - 1) {
          f.add(makeTransition(Math.floor(numFeatures / 2)));
          numFeatures = Math.floor(numFeatures / 2);
        }
      });
      f.add(new nn.BatchNorm());
      f.add(new nn.Activation('relu'));
      f.add(new nn.AvgPool2D({ poolSize: 7 }));
      f.add(new nn.Flatten());
      this.output = new nn.Dense(a.classes);
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// num_layers -> (num_init_features, growth_rate, block_config)
export const densenet_spec = Object.freeze({
  121: [64, 32, [6, 12, 24, 16]],
  161: [96, 48, [6, 12, 36, 24]],
  169: [64, 32, [6, 12, 32, 32]],
  201: [64, 32, [6, 12, 48, 32]],
});

// get_densenet(num_layers, pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models',
// {bn_size, dropout, classes, prefix, params})
export function get_densenet(...args) {
  const a = bindArgs(SIG.get_densenet, args);
  const spec = densenet_spec[a.numLayers];
  if (!Object.prototype.hasOwnProperty.call(densenet_spec, a.numLayers)) {
    throw new MXNetError(`Invalid number of layers: ${a.numLayers}. Options are ${Object.keys(densenet_spec).join(', ')}`);
  }
  const [numInitFeatures, growthRate, blockConfig] = spec;
  const net = new DenseNet(numInitFeatures, growthRate, blockConfig.slice(), pick(a, ['bnSize', 'dropout', 'classes', 'prefix', 'params']));
  return finish(net, a, `densenet${a.numLayers}`);
}
// densenet121({pretrained, ctx, root, bn_size, dropout, classes, prefix, params}), ...
const ctor = (numLayers) => {
  const s = sig(`densenet${numLayers}`, [], [...PRETRAINED, ...NET_KW]);
  return (...args) => get_densenet(numLayers, bindArgs(s, args));
};
export const densenet121 = ctor(121);
export const densenet161 = ctor(161);
export const densenet169 = ctor(169);
export const densenet201 = ctor(201);
export const getDensenet = get_densenet;
