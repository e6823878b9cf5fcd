// mobilenet.mjs -- MobileNet and MobileNetV2 (MXNet 1.9.1 python/mxnet/gluon/model_zoo/vision/
// mobilenet.py): depthwise-separable convolutions (v1) and inverted residual linear bottlenecks
// with RELU6 = clip(x, 0, 6) (v2), every convolution without bias and followed by BatchNorm.
import { HybridBlock } from '../../block.mjs';
import * as nn from '../../nn.mjs';
import { bindArgs, REQUIRED as R } from '../../signature.mjs';
import { sig, blockArgs, pick, finish, int, PRETRAINED, BLOCK_KW } from './common.mjs';

const NET_KW = [['classes', 1000, 'int'], ...BLOCK_KW];
const SIG = {
  RELU6: sig('RELU6', []),
  LinearBottleneck: sig('LinearBottleneck', [['in_channels', R, 'int'], ['channels', R, 'int'], ['t', R, 'int'],
    ['stride', R, 'int']]),
  MobileNet: sig('MobileNet', [['multiplier', 1.0, 'number'], ['classes', 1000, 'int']]),
  MobileNetV2: sig('MobileNetV2', [['multiplier', 1.0, 'number'], ['classes', 1000, 'int']]),
  get_mobilenet: sig('get_mobilenet', [['multiplier', R, 'number'], ...PRETRAINED], NET_KW),
  get_mobilenet_v2: sig('get_mobilenet_v2', [['multiplier', R, 'number'], ...PRETRAINED], NET_KW),
};

// RELU6: clip(x, 0, 6), the node named "relu6"
export class RELU6 extends HybridBlock {
  constructor(...args) { super(blockArgs(bindArgs(SIG.RELU6, args))); }
  hybridForward(F, x) { return F.clip(x, 0, 6, { name: 'relu6' }); }
}

// _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True, relu6=False)
function addConv(out, { channels = 1, kernel = 1, stride = 1, pad = 0, numGroup = 1, active = true, relu6 = false } = {}) {
  out.add(new nn.Conv2D(channels, kernel, stride, pad, { groups: numGroup, useBias: false }));
  out.add(new nn.BatchNorm({ scale: true }));
  if (active) out.add(relu6 ? new RELU6() : new nn.Activation('relu'));
}
// _add_conv_dw: depthwise 3x3 (stride) then pointwise 1x1
function addConvDw(out, dwChannels, channels, stride, relu6 = false) {
  addConv(out, { channels: dwChannels, kernel: 3, stride, pad: 1, numGroup: dwChannels, relu6 });
  addConv(out, { channels, relu6 });
}

// LinearBottleneck(in_channels, channels, t, stride): 1x1 expand (x t), 3x3 depthwise, 1x1 linear
// projection; adds the input when stride 1 and in_channels == channels.
export class LinearBottleneck extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.LinearBottleneck, args);
    super(blockArgs(a));
    this.useShortcut = a.stride === 1 && a.inChannels === a.channels;
    this.nameScope(() => {
      this.out = new nn.HybridSequential();
      addConv(this.out, { channels: a.inChannels * a.t, relu6: true });
      addConv(this.out, { channels: a.inChannels * a.t, kernel: 3, stride: a.stride, pad: 1, numGroup: a.inChannels * a.t, relu6: true });
      addConv(this.out, { channels: a.channels, active: false, relu6: true });
    });
  }
  hybridForward(F, x) {
    const out = this.out(x);
    return this.useShortcut ? F.elemwise_add(out, x) : out;
  }
}

// MobileNet(multiplier = 1.0, classes = 1000)
export class MobileNet extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.MobileNet, args);
    super(blockArgs(a));
    const m = a.multiplier;
    this.nameScope(() => {
      this.features = new nn.HybridSequential({ prefix: '' });
      this.features.nameScope(() => {
        addConv(this.features, { channels: int(32 * m), kernel: 3, pad: 1, stride: 2 });
        const dwChannels = [32, 64, 128, 128, 256, 256, ...new Array(6).fill(512), 1024].map((x) => int(x * m));
        const channels = [64, 128, 128, 256, 256, ...new Array(6).fill(512), 1024, 1024].map((x) => int(x * m));
        const strides = [1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1];
        for (let i = 0; i < strides.length; i++) addConvDw(this.features, dwChannels[i], channels[i], strides[i]);
        this.features.add(new nn.GlobalAvgPool2D());
        this.features.add(new nn.Flatten());
      });
      this.output = new nn.Dense(a.classes);
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// MobileNetV2(multiplier = 1.0, classes = 1000)
export class MobileNetV2 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.MobileNetV2, args);
    super(blockArgs(a));
    const m = a.multiplier;
    this.nameScope(() => {
      this.features = new nn.HybridSequential({ prefix: 'features_' });
      this.features.nameScope(() => {
        addConv(this.features, { channels: int(32 * m), kernel: 3, stride: 2, pad: 1, relu6: true });
        const inChannelsGroup = [32, 16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160].map((x) => int(x * m));
        const channelsGroup = [16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320].map((x) => int(x * m));
        const ts = [1, ...new Array(16).fill(6)];
        const strides = [1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1];
        for (let i = 0; i < strides.length; i++) {
          this.features.add(new LinearBottleneck({ inChannels: inChannelsGroup[i], channels: channelsGroup[i], t: ts[i], stride: strides[i] }));
        }
        const lastChannels = m > 1.0 ? int(1280 * m) : 1280;
        addConv(this.features, { channels: lastChannels, relu6: true });
        this.features.add(new nn.GlobalAvgPool2D());
      });
      this.output = new nn.HybridSequential({ prefix: 'output_' });
      this.output.nameScope(() => {
        this.output.add(new nn.Conv2D(a.classes, 1, { useBias: false, prefix: 'pred_' }), new nn.Flatten());
      });
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// '{0:.2f}'.format(multiplier) with '1.00' -> '1.0' and '0.50' -> '0.5': the model store's suffix
function versionSuffix(multiplier) {
  const s = multiplier.toFixed(2);
  return s === '1.00' || s === '0.50' ? s.slice(0, -1) : s;
}

// get_mobilenet(multiplier, pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models', {classes, prefix, params})
export function get_mobilenet(...args) {
  const a = bindArgs(SIG.get_mobilenet, args);
  const net = new MobileNet(a.multiplier, pick(a, ['classes', 'prefix', 'params']));
  return finish(net, a, `mobilenet${versionSuffix(a.multiplier)}`);
}
// get_mobilenet_v2(multiplier, pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models', {classes, prefix, params})
export function get_mobilenet_v2(...args) {
  const a = bindArgs(SIG.get_mobilenet_v2, args);
  const net = new MobileNetV2(a.multiplier, pick(a, ['classes', 'prefix', 'params']));
  return finish(net, a, `mobilenetv2_${versionSuffix(a.multiplier)}`);
}
const ctor = (get, name, multiplier) => {
  const s = sig(name, [], [...PRETRAINED, ...NET_KW]);
  return (...args) => get(multiplier, bindArgs(s, args));
};
// mobilenet1_0({pretrained, ctx, root, classes, prefix, params}), ...
export const mobilenet1_0 = ctor(get_mobilenet, 'mobilenet1_0', 1.0);
export const mobilenet0_75 = ctor(get_mobilenet, 'mobilenet0_75', 0.75);
export const mobilenet0_5 = ctor(get_mobilenet, 'mobilenet0_5', 0.5);
export const mobilenet0_25 = ctor(get_mobilenet, 'mobilenet0_25', 0.25);
export const mobilenet_v2_1_0 = ctor(get_mobilenet_v2, 'mobilenet_v2_1_0', 1.0);
export const mobilenet_v2_0_75 = ctor(get_mobilenet_v2, 'mobilenet_v2_0_75', 0.75);
export const mobilenet_v2_0_5 = ctor(get_mobilenet_v2, 'mobilenet_v2_0_5', 0.5);
export const mobilenet_v2_0_25 = ctor(get_mobilenet_v2, 'mobilenet_v2_0_25', 0.25);
export const getMobilenet = get_mobilenet;
export const getMobilenetV2 = get_mobilenet_v2;
