// squeezenet.mjs -- SqueezeNet 1.0 and 1.1 (MXNet 1.9.1 python/mxnet/gluon/model_zoo/vision/
// squeezenet.py): fire modules (1x1 squeeze, then 1x1 and 3x3 expand paths concatenated).
import { MXNetError } from '../../core.mjs';
import { HybridBlock } from '../../block.mjs';
import * as nn from '../../nn.mjs';
import { HybridConcurrent } from '../../contrib_nn.mjs';
import { bindArgs, REQUIRED as R } from '../../signature.mjs';
import { sig, blockArgs, pick, finish, PRETRAINED, BLOCK_KW } from './common.mjs';

const NET_KW = [['classes', 1000, 'int'], ...BLOCK_KW];
const SIG = {
  SqueezeNet: sig('SqueezeNet', [['version', R, 'str'], ['classes', 1000, 'int']]),
  get_squeezenet: sig('get_squeezenet', [['version', R, 'str'], ...PRETRAINED], NET_KW),
  squeezenet1_0: sig('squeezenet1_0', [], [...PRETRAINED, ...NET_KW]),
  squeezenet1_1: sig('squeezenet1_1', [], [...PRETRAINED, ...NET_KW]),
};

// _make_fire_conv: Conv2D + relu in an unnamed HybridSequential
function makeFireConv(channels, kernelSize, padding = 0) {
  const out = new nn.HybridSequential({ prefix: '' });
  out.add(new nn.Conv2D(channels, kernelSize, { padding }));
  out.add(new nn.Activation('relu'));
  return out;
}
// _make_fire: squeeze 1x1, then the 1x1 and 3x3 expand paths concatenated on the channels
function makeFire(squeezeChannels, expand1x1Channels, expand3x3Channels) {
  const out = new nn.HybridSequential({ prefix: '' });
  out.add(makeFireConv(squeezeChannels, 1));
  const paths = new HybridConcurrent({ axis: 1, prefix: '' });
  paths.add(makeFireConv(expand1x1Channels, 1));
  paths.add(makeFireConv(expand3x3Channels, 3, 1));
  out.add(paths);
  return out;
}

// SqueezeNet(version, classes = 1000): version '1.0' or '1.1'.
export class SqueezeNet extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.SqueezeNet, args);
    super(blockArgs(a));
    if (a.version !== '1.0' && a.version !== '1.1') {
      throw new MXNetError(`Unsupported SqueezeNet version ${a.version}:1.0 or 1.1 expected`);
    }
    this.nameScope(() => {
      const f = this.features = new nn.HybridSequential({ prefix: '' });
      const pool = () => new nn.MaxPool2D({ poolSize: 3, strides: 2, ceilMode: true });
      if (a.version === '1.0') {
        f.add(new nn.Conv2D(96, { kernelSize: 7, strides: 2 }));
        f.add(new nn.Activation('relu'));
        f.add(pool());
        f.add(makeFire(16, 64, 64));
        f.add(makeFire(16, 64, 64));
        f.add(makeFire(32, 128, 128));
        f.add(pool());
        f.add(makeFire(32, 128, 128));
        f.add(makeFire(48, 192, 192));
        f.add(makeFire(48, 192, 192));
        f.add(makeFire(64, 256, 256));
        f.add(pool());
        f.add(makeFire(64, 256, 256));
      } else {
        f.add(new nn.Conv2D(64, { kernelSize: 3, strides: 2 }));
        f.add(new nn.Activation('relu'));
        f.add(pool());
        f.add(makeFire(16, 64, 64));
        f.add(makeFire(16, 64, 64));
        f.add(pool());
        f.add(makeFire(32, 128, 128));
        f.add(makeFire(32, 128, 128));
        f.add(pool());
        f.add(makeFire(48, 192, 192));
        f.add(makeFire(48, 192, 192));
        f.add(makeFire(64, 256, 256));
        f.add(makeFire(64, 256, 256));
      }
      f.add(new nn.Dropout(0.5));
      const o = this.output = new nn.HybridSequential({ prefix: '' });
      o.add(new nn.Conv2D(a.classes, { kernelSize: 1 }));
      o.add(new nn.Activation('relu'));
      o.add(new nn.AvgPool2D(13));
      o.add(new nn.Flatten());
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// get_squeezenet(version, pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models', {classes, prefix, params})
export function get_squeezenet(...args) {
  const a = bindArgs(SIG.get_squeezenet, args);
  const net = new SqueezeNet(a.version, pick(a, ['classes', 'prefix', 'params']));
  return finish(net, a, `squeezenet${a.version}`);
}
// squeezenet1_0({pretrained, ctx, root, classes, prefix, params}), squeezenet1_1(...)
export const squeezenet1_0 = (...args) => get_squeezenet('1.0', bindArgs(SIG.squeezenet1_0, args));
export const squeezenet1_1 = (...args) => get_squeezenet('1.1', bindArgs(SIG.squeezenet1_1, args));
export const getSqueezenet = get_squeezenet;
