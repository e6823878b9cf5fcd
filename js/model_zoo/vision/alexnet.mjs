// alexnet.mjs -- AlexNet (MXNet 1.9.1 python/mxnet/gluon/model_zoo/vision/alexnet.py), "One weird
// trick..." variant: five convolutions with ReLU, three max pools, two Dense(4096) + Dropout(0.5).
import { HybridBlock } from '../../block.mjs';
import * as nn from '../../nn.mjs';
import { bindArgs } from '../../signature.mjs';
import { sig, blockArgs, pick, finish, PRETRAINED, BLOCK_KW } from './common.mjs';

const SIG = {
  AlexNet: sig('AlexNet', [['classes', 1000, 'int']]),
  alexnet: sig('alexnet', PRETRAINED, [['classes', 1000, 'int'], ...BLOCK_KW]),
};

// AlexNet(classes = 1000)
export class AlexNet extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.AlexNet, args);
    super(blockArgs(a));
    this.nameScope(() => {
      this.features = new nn.HybridSequential({ prefix: '' });
      this.features.nameScope(() => {
        const f = this.features;
        f.add(new nn.Conv2D(64, { kernelSize: 11, strides: 4, padding: 2, activation: 'relu' }));
        f.add(new nn.MaxPool2D({ poolSize: 3, strides: 2 }));
        f.add(new nn.Conv2D(192, { kernelSize: 5, padding: 2, activation: 'relu' }));
        f.add(new nn.MaxPool2D({ poolSize: 3, strides: 2 }));
        f.add(new nn.Conv2D(384, { kernelSize: 3, padding: 1, activation: 'relu' }));
        f.add(new nn.Conv2D(256, { kernelSize: 3, padding: 1, activation: 'relu' }));
        f.add(new nn.Conv2D(256, { kernelSize: 3, padding: 1, activation: 'relu' }));
        f.add(new nn.MaxPool2D({ poolSize: 3, strides: 2 }));
        f.add(new nn.Flatten());
        f.add(new nn.Dense(4096, { activation: 'relu' }));
        f.add(new nn.Dropout(0.5));
        f.add(new nn.Dense(4096, { activation: 'relu' }));
        f.add(new nn.Dropout(0.5));
      });
      this.output = new nn.Dense(a.classes);
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// alexnet(pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models', {classes, prefix, params}):
// the net, or with pretrained a Promise of it (root/alexnet-44335d1f.params loaded).
export function alexnet(...args) {
  const a = bindArgs(SIG.alexnet, args);
  return finish(new AlexNet(pick(a, ['classes', 'prefix', 'params'])), a, 'alexnet');
}
