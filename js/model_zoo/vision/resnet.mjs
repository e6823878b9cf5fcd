// resnet.mjs -- ResNet V1 and V2 (MXNet 1.9.1 python/mxnet/gluon/model_zoo/vision/resnet.py),
// with MXNet's blocks, names (resnetv10_stage1_conv0_weight, ...) and graph.
import { MXNetError } from '../../core.mjs';
import { HybridBlock } from '../../block.mjs';
import * as nn from '../../nn.mjs';
import { bindArgs, REQUIRED as R } from '../../signature.mjs';
import { sig, blockArgs, pick, finish, PRETRAINED, BLOCK_KW } from './common.mjs';

const blockSig = (name) => sig(name, [['channels', R, 'int'], ['stride', R, 'int'], ['downsample', false, 'bool'],
  ['in_channels', 0, 'int']]);
const netSig = (name) => sig(name, [['block', R, 'function'], ['layers', R, 'array'], ['channels', R, 'array'],
  ['classes', 1000, 'int'], ['thumbnail', false, 'bool']]);
const NET_KW = [['classes', 1000, 'int'], ['thumbnail', false, 'bool'], ...BLOCK_KW];
const SIG = {
  BasicBlockV1: blockSig('BasicBlockV1'),
  BottleneckV1: blockSig('BottleneckV1'),
  BasicBlockV2: blockSig('BasicBlockV2'),
  BottleneckV2: blockSig('BottleneckV2'),
  ResNetV1: netSig('ResNetV1'),
  ResNetV2: netSig('ResNetV2'),
  get_resnet: sig('get_resnet', [['version', R, 'int'], ['num_layers', R, 'int'], ...PRETRAINED], NET_KW),
};

// _conv3x3: 3x3 convolution, padding 1, no bias
const conv3x3 = (channels, stride, inChannels) => new nn.Conv2D(channels, {
  kernelSize: 3, strides: stride, padding: 1, useBias: false, inChannels,
});

// ---- blocks -------------------------------------------------------------------------------------
// BasicBlockV1(channels, stride, downsample = false, in_channels = 0): conv3x3-BN-relu-conv3x3-BN,
// plus a 1x1 conv-BN shortcut when downsampling; relu(residual + x).
export class BasicBlockV1 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.BasicBlockV1, args);
    super(blockArgs(a));
    this.body = new nn.HybridSequential({ prefix: '' });
    this.body.add(conv3x3(a.channels, a.stride, a.inChannels));
    this.body.add(new nn.BatchNorm());
    this.body.add(new nn.Activation('relu'));
    this.body.add(conv3x3(a.channels, 1, a.channels));
    this.body.add(new nn.BatchNorm());
    if (a.downsample) {
      this.downsample = new nn.HybridSequential({ prefix: '' });
      this.downsample.add(new nn.Conv2D(a.channels, { kernelSize: 1, strides: a.stride, useBias: false, inChannels: a.inChannels }));
      this.downsample.add(new nn.BatchNorm());
    } else {
      this.downsample = null;
    }
  }
  hybridForward(F, x) {
    let residual = x;
    x = this.body(x);
    if (this.downsample) residual = this.downsample(residual);
    return F.Activation(residual.add(x), { act_type: 'relu' });
  }
}

// BottleneckV1(channels, stride, downsample = false, in_channels = 0): 1x1 (channels/4, stride)
// -BN-relu-3x3-BN-relu-1x1 (channels)-BN; relu(x + residual).
export class BottleneckV1 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.BottleneckV1, args);
    super(blockArgs(a));
    const c4 = Math.floor(a.channels / 4);
    this.body = new nn.HybridSequential({ prefix: '' });
    this.body.add(new nn.Conv2D(c4, { kernelSize: 1, strides: a.stride }));
    this.body.add(new nn.BatchNorm());
    this.body.add(new nn.Activation('relu'));
    this.body.add(conv3x3(c4, 1, c4));
    this.body.add(new nn.BatchNorm());
    this.body.add(new nn.Activation('relu'));
    this.body.add(new nn.Conv2D(a.channels, { kernelSize: 1, strides: 1 }));
    this.body.add(new nn.BatchNorm());
    if (a.downsample) {
      this.downsample = new nn.HybridSequential({ prefix: '' });
      this.downsample.add(new nn.Conv2D(a.channels, { kernelSize: 1, strides: a.stride, useBias: false, inChannels: a.inChannels }));
      this.downsample.add(new nn.BatchNorm());
    } else {
      this.downsample = null;
    }
  }
  hybridForward(F, x) {
    let residual = x;
    x = this.body(x);
    if (this.downsample) residual = this.downsample(residual);
    return F.Activation(x.add(residual), { act_type: 'relu' });
  }
}

// BasicBlockV2 (pre-activation): BN-relu, (shortcut from here), conv3x3-BN-relu-conv3x3; x + residual.
export class BasicBlockV2 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.BasicBlockV2, args);
    super(blockArgs(a));
    this.bn1 = new nn.BatchNorm();
    this.conv1 = conv3x3(a.channels, a.stride, a.inChannels);
    this.bn2 = new nn.BatchNorm();
    this.conv2 = conv3x3(a.channels, 1, a.channels);
    this.downsample = a.downsample
      ? new nn.Conv2D(a.channels, 1, a.stride, { useBias: false, inChannels: a.inChannels }) : null;
  }
  hybridForward(F, x) {
    let residual = x;
    x = this.bn1(x);
    x = F.Activation(x, { act_type: 'relu' });
    if (this.downsample) residual = this.downsample(x);
    x = this.conv1(x);
    x = this.bn2(x);
    x = F.Activation(x, { act_type: 'relu' });
    x = this.conv2(x);
    return x.add(residual);
  }
}

// BottleneckV2 (pre-activation): BN-relu, 1x1 (channels/4), BN-relu, 3x3 (stride), BN-relu, 1x1.
export class BottleneckV2 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.BottleneckV2, args);
    super(blockArgs(a));
    const c4 = Math.floor(a.channels / 4);
    this.bn1 = new nn.BatchNorm();
    this.conv1 = new nn.Conv2D(c4, { kernelSize: 1, strides: 1, useBias: false });
    this.bn2 = new nn.BatchNorm();
    this.conv2 = conv3x3(c4, a.stride, c4);
    this.bn3 = new nn.BatchNorm();
    this.conv3 = new nn.Conv2D(a.channels, { kernelSize: 1, strides: 1, useBias: false });
    this.downsample = a.downsample
      ? new nn.Conv2D(a.channels, 1, a.stride, { useBias: false, inChannels: a.inChannels }) : null;
  }
  hybridForward(F, x) {
    let residual = x;
    x = this.bn1(x);
    x = F.Activation(x, { act_type: 'relu' });
    if (this.downsample) residual = this.downsample(x);
    x = this.conv1(x);
    x = this.bn2(x);
    x = F.Activation(x, { act_type: 'relu' });
    x = this.conv2(x);
    x = this.bn3(x);
    x = F.Activation(x, { act_type: 'relu' });
    x = this.conv3(x);
    return x.add(residual);
  }
}

// ---- nets ---------------------------------------------------------------------------------------
// _make_layer: stage<i>_ holding `layers` blocks (the first strides and downsamples when needed).
function makeLayer(block, layers, channels, stride, stageIndex, inChannels) {
  const layer = new nn.HybridSequential({ prefix: `stage${stageIndex}_` });
  layer.nameScope(() => {
    layer.add(new block(channels, stride, channels !== inChannels, { inChannels, prefix: '' }));
    for (let i = 0; i < layers - 1; i++) layer.add(new block(channels, 1, false, { inChannels: channels, prefix: '' }));
  });
  return layer;
}

function checkSpec(name, a) {
  // Python: assert len(layers) == len(channels) - 1
  if (a.layers.length !== a.channels.length - 1) {
    throw new MXNetError(`${name}: len(layers) must be len(channels) - 1, got ${a.layers.length} layers and ${a.channels.length} channels`);
  }
}

// ResNetV1(block, layers, channels, classes = 1000, thumbnail = false)
export class ResNetV1 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.ResNetV1, args);
    super(blockArgs(a));
    checkSpec('ResNetV1', a);
    const { channels } = a;
    this.nameScope(() => {
      this.features = new nn.HybridSequential({ prefix: '' });
      if (a.thumbnail) {
        this.features.add(conv3x3(channels[0], 1, 0));
      } else {
        this.features.add(new nn.Conv2D(channels[0], 7, 2, 3, { useBias: false }));
        this.features.add(new nn.BatchNorm());
        this.features.add(new nn.Activation('relu'));
        this.features.add(new nn.MaxPool2D(3, 2, 1));
      }
      a.layers.forEach((numLayer, i) => {
        const stride = i === 0 ? 1 : 2;
        this.features.add(makeLayer(a.block, numLayer, channels[i + 1], stride, i + 1, channels[i]));
      });
      this.features.add(new nn.GlobalAvgPool2D());
      this.output = new nn.Dense(a.classes, { inUnits: channels[channels.length - 1] });
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// ResNetV2(block, layers, channels, classes = 1000, thumbnail = false): a BatchNorm without
// scale and center on the input; BN-relu, global pool and Flatten after the stages.
export class ResNetV2 extends HybridBlock {
  constructor(...args) {
    const a = bindArgs(SIG.ResNetV2, args);
    super(blockArgs(a));
    checkSpec('ResNetV2', a);
    const { channels } = a;
    this.nameScope(() => {
      this.features = new nn.HybridSequential({ prefix: '' });
      this.features.add(new nn.BatchNorm({ scale: false, center: false }));
      if (a.thumbnail) {
        this.features.add(conv3x3(channels[0], 1, 0));
      } else {
        this.features.add(new nn.Conv2D(channels[0], 7, 2, 3, { useBias: false }));
        this.features.add(new nn.BatchNorm());
        this.features.add(new nn.Activation('relu'));
        this.features.add(new nn.MaxPool2D(3, 2, 1));
      }
      let inChannels = channels[0];
      a.layers.forEach((numLayer, i) => {
        const stride = i === 0 ? 1 : 2;
        this.features.add(makeLayer(a.block, numLayer, channels[i + 1], stride, i + 1, inChannels));
        inChannels = channels[i + 1];
      });
      this.features.add(new nn.BatchNorm());
      this.features.add(new nn.Activation('relu'));
      this.features.add(new nn.GlobalAvgPool2D());
      this.features.add(new nn.Flatten());
      this.output = new nn.Dense(a.classes, { inUnits: inChannels });
    });
  }
  hybridForward(F, x) { return this.output(this.features(x)); }
}

// ---- specification and constructors -----------------------------------------------------------------
export const resnet_spec = Object.freeze({
  18: ['basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]],
  34: ['basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]],
  50: ['bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]],
  101: ['bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]],
  152: ['bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048]],
});
export const resnet_net_versions = Object.freeze([ResNetV1, ResNetV2]);
export const resnet_block_versions = Object.freeze([
  Object.freeze({ basic_block: BasicBlockV1, bottle_neck: BottleneckV1 }),
  Object.freeze({ basic_block: BasicBlockV2, bottle_neck: BottleneckV2 }),
]);

// get_resnet(version, num_layers, pretrained = false, ctx = cpu(), root = '$MXNET_HOME/models',
// {classes, thumbnail, prefix, params}): the net, or with pretrained a Promise of it (parameters
// loaded from root/resnet<num_layers>_v<version>-<sha1>.params).
export function get_resnet(...args) {
  const a = bindArgs(SIG.get_resnet, args);
  if (!Object.prototype.hasOwnProperty.call(resnet_spec, a.numLayers)) {
    throw new MXNetError(`Invalid number of layers: ${a.numLayers}. Options are ${Object.keys(resnet_spec).join(', ')}`);
  }
  const [blockType, layers, channels] = resnet_spec[a.numLayers];
  if (!(a.version >= 1 && a.version <= 2)) throw new MXNetError(`Invalid resnet version: ${a.version}. Options are 1 and 2.`);
  const ResNet = resnet_net_versions[a.version - 1];
  const block = resnet_block_versions[a.version - 1][blockType];
  const net = new ResNet(block, layers.slice(), channels.slice(), pick(a, ['classes', 'thumbnail', 'prefix', 'params']));
  return finish(net, a, `resnet${a.numLayers}_v${a.version}`);
}

// resnet18_v1({pretrained, ctx, root, classes, thumbnail, prefix, params}), ...: keyword arguments only.
const ctor = (version, numLayers) => {
  const s = sig(`resnet${numLayers}_v${version}`, [], [...PRETRAINED, ...NET_KW]);
  return (...args) => get_resnet(version, numLayers, bindArgs(s, args));
};
export const resnet18_v1 = ctor(1, 18);
export const resnet34_v1 = ctor(1, 34);
export const resnet50_v1 = ctor(1, 50);
export const resnet101_v1 = ctor(1, 101);
export const resnet152_v1 = ctor(1, 152);
export const resnet18_v2 = ctor(2, 18);
export const resnet34_v2 = ctor(2, 34);
export const resnet50_v2 = ctor(2, 50);
export const resnet101_v2 = ctor(2, 101);
export const resnet152_v2 = ctor(2, 152);
export const getResnet = get_resnet;
