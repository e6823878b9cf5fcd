// vgg.mjs -- VGG 11/13/16/19 with and without BatchNorm (MXNet 1.9.1 python/mxnet/gluon/model_zoo/
// vision/vgg.py): 3x3 convolutions (Xavier gaussian, factor 'out', magnitude 2) in five blocks
// each ending in a 2x2 max pool, then Dense(4096)-Dropout twice (normal init) and the classifier.
import { MXNetError } from '../../core.mjs';
import { HybridBlock } from '../../block.mjs';
import * as nn from '../../nn.mjs';
import { Xavier } from '../../initializer.mjs';
import { bindArgs, REQUIRED as R } from '../../signature.mjs';
import { sig, blockArgs, pick, finish, PRETRAINED, BLOCK_KW } from './common.mjs';

const NET_KW = [['classes', 1000, 'int'], ['batch_norm', false, 'bool'], ...BLOCK_KW];
const SIG = {
  VGG: sig('VGG', [['layers', R, 'array'], ['filters', R, 'array'], ['classes', 1000, 'int'], ['batch_norm', false, 'bool']]),
  get_vgg: sig('get_vgg', [['num_layers', R, 'int'], ...PRETRAINED], NET_KW),
};

// VGG(layers, filters, classes = 1000, batch_norm = false)
export class VGG extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.VGG, args);
    super(blockArgs(a));
    if (a.layers.length !== a.filters.length) {
      throw new MXNetError(`VGG: layers and filters must have the same length, got ${a.layers.length} and ${a.filters.length}`);
    }
    this.nameScope(() => {
      this.features = this._makeFeatures(a.layers, a.filters, a.batchNorm);
      const dense = () => new nn.Dense(4096, { activation: 'relu', weightInitializer: 'normal', biasInitializer: 'zeros' });
      this.features.add(dense());
      this.features.add(new nn.Dropout({ rate: 0.5 }));
      this.features.add(dense());
      this.features.add(new nn.Dropout({ rate: 0.5 }));
      this.output = new nn.Dense(a.classes, { weightInitializer: 'normal', biasInitializer: 'zeros' });
    });
  }
  _makeFeatures(layers, filters, batchNorm) {
    const featurizer = new nn.HybridSequential({ prefix: '' });
    layers.forEach((num, i) => {
      for (let k = 0; k < num; k++) {
        featurizer.add(new nn.Conv2D(filters[i], {
          kernelSize: 3, padding: 1, biasInitializer: 'zeros',
          weightInitializer: new Xavier({ rnd_type: 'gaussian', factor_type: 'out', magnitude: 2 }),
        }));
        if (batchNorm) featurizer.add(new nn.BatchNorm());
        featurizer.add(new nn.Activation('relu'));
      }
      featurizer.add(new nn.MaxPool2D({ strides: 2 }));
    });
    return featurizer;
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// num_layers -> (layers, filters)
export const vgg_spec = Object.freeze({
  11: [[1, 1, 2, 2, 2], [64, 128, 256, 512, 512]],
  13: [[2, 2, 2, 2, 2], [64, 128, 256, 512, 512]],
  16: [[2, 2, 3, 3, 3], [64, 128, 256, 512, 512]],
  19: [[2, 2, 4, 4, 4], [64, 128, 256, 512, 512]],
});

// get_vgg(num_layers, pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models',
// {classes, batch_norm, prefix, params}): pretrained loads vgg<n>[_bn]-<sha1>.params.
export function get_vgg(...args) {
  const a = bindArgs(SIG.get_vgg, args);
  if (!Object.prototype.hasOwnProperty.call(vgg_spec, a.numLayers)) {
    throw new MXNetError(`Invalid number of layers: ${a.numLayers}. Options are ${Object.keys(vgg_spec).join(', ')}`);
  }
  const [layers, filters] = vgg_spec[a.numLayers];
  const net = new VGG(layers.slice(), filters.slice(), pick(a, ['classes', 'batchNorm', 'prefix', 'params']));
  return finish(net, a, `vgg${a.numLayers}${a.batchNorm ? '_bn' : ''}`);
}
// vgg11({pretrained, ctx, root, classes, batch_norm, prefix, params}), ...; the _bn ones set batch_norm.
const ctor = (numLayers, bn) => {
  const s = sig(`vgg${numLayers}${bn ? '_bn' : ''}`, [], [...PRETRAINED, ...NET_KW]);
  return (...args) => {
    const a = bindArgs(s, args);
    if (bn) a.batchNorm = true;
    return get_vgg(numLayers, a);
  };
};
export const vgg11 = ctor(11, false);
export const vgg13 = ctor(13, false);
export const vgg16 = ctor(16, false);
export const vgg19 = ctor(19, false);
export const vgg11_bn = ctor(11, true);
export const vgg13_bn = ctor(13, true);
export const vgg16_bn = ctor(16, true);
export const vgg19_bn = ctor(19, true);
export const getVgg = get_vgg;
