// gluon.model_zoo.vision (MXNet 1.9.1 python/mxnet/gluon/model_zoo/vision/__init__.py): every
// architecture's classes and constructor functions (the names each module's __all__ exports) and
// get_model(name, opts) with MXNet's name table.
//
//   const net = vision.resnet18_v1();                                   // random weights
//   const net2 = await vision.resnet18_v1({pretrained: true, root: 'models/'}); // resnet18_v1-a0666292.params
//   const net3 = vision.get_model('mobilenetv2_1.0', {classes: 10});
import { MXNetError } from '../../core.mjs';
import { bindArgs, defineSignature, isPlainObject, REQUIRED as R } from '../../signature.mjs';
import { AlexNet, alexnet } from './alexnet.mjs';
import { DenseNet, densenet121, densenet161, densenet169, densenet201 } from './densenet.mjs';
import { Inception3, inception_v3 } from './inception.mjs';
import {
  ResNetV1, ResNetV2, BasicBlockV1, BasicBlockV2, BottleneckV1, BottleneckV2, resnet18_v1, resnet34_v1, resnet50_v1,
  resnet101_v1, resnet152_v1, resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2, get_resnet,
} from './resnet.mjs';
import { SqueezeNet, squeezenet1_0, squeezenet1_1 } from './squeezenet.mjs';
import { VGG, vgg11, vgg13, vgg16, vgg19, vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn, get_vgg } from './vgg.mjs';
import {
  MobileNet, MobileNetV2, mobilenet1_0, mobilenet_v2_1_0, mobilenet0_75, mobilenet_v2_0_75, mobilenet0_5,
  mobilenet_v2_0_5, mobilenet0_25, mobilenet_v2_0_25, get_mobilenet, get_mobilenet_v2,
} from './mobilenet.mjs';

export {
  AlexNet, alexnet, DenseNet, densenet121, densenet161, densenet169, densenet201, Inception3, inception_v3,
  ResNetV1, ResNetV2, BasicBlockV1, BasicBlockV2, BottleneckV1, BottleneckV2, resnet18_v1, resnet34_v1, resnet50_v1,
  resnet101_v1, resnet152_v1, resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2, get_resnet,
  SqueezeNet, squeezenet1_0, squeezenet1_1, VGG, vgg11, vgg13, vgg16, vgg19, vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn,
  get_vgg, MobileNet, MobileNetV2, mobilenet1_0, mobilenet_v2_1_0, mobilenet0_75, mobilenet_v2_0_75, mobilenet0_5,
  mobilenet_v2_0_5, mobilenet0_25, mobilenet_v2_0_25, get_mobilenet, get_mobilenet_v2,
};

// get_model's table: MXNet's model names -> constructor functions
const MODELS = Object.freeze({
  resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1,
  resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2,
  vgg11, vgg13, vgg16, vgg19, vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn,
  alexnet,
  densenet121, densenet161, densenet169, densenet201,
  'squeezenet1.0': squeezenet1_0,
  'squeezenet1.1': squeezenet1_1,
  inceptionv3: inception_v3,
  'mobilenet1.0': mobilenet1_0,
  'mobilenet0.75': mobilenet0_75,
  'mobilenet0.5': mobilenet0_5,
  'mobilenet0.25': mobilenet0_25,
  'mobilenetv2_1.0': mobilenet_v2_1_0,
  'mobilenetv2_0.75': mobilenet_v2_0_75,
  'mobilenetv2_0.5': mobilenet_v2_0_5,
  'mobilenetv2_0.25': mobilenet_v2_0_25,
});
export const modelNames = Object.freeze(Object.keys(MODELS));

const GET_MODEL = defineSignature('model_zoo.vision.get_model', [['name', R, 'str']], { varargs: null });

// get_model(name, {pretrained, ctx, root, classes, ...}): the model `name` (case-insensitive) built
// with the options (each model's own keyword arguments); with pretrained a Promise of it.
export function get_model(name, ...rest) {
  bindArgs(GET_MODEL, [name]);
  if (rest.length > 1 || (rest.length === 1 && rest[0] !== undefined && !isPlainObject(rest[0]))) {
    throw new MXNetError('get_model(name, options): the model\'s arguments go in one options object');
  }
  const key = name.toLowerCase();
  if (!Object.prototype.hasOwnProperty.call(MODELS, key)) {
    throw new MXNetError(`Model ${key} is not supported. Available options are\n\t${Object.keys(MODELS).sort().join('\n\t')}`);
  }
  return MODELS[key](rest[0] ?? {});
}
export const getModel = get_model;
export const getResnet = get_resnet;
export const getVgg = get_vgg;
export const getMobilenet = get_mobilenet;
export const getMobilenetV2 = get_mobilenet_v2;
