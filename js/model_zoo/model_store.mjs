// model_store.mjs -- gluon.model_zoo.model_store (MXNet 1.9.1 python/mxnet/gluon/model_zoo/
// model_store.py): the pretrained files' names and SHA-1s, where a file is looked for, and the
// loading behind every constructor's `pretrained: true`.
//
// MXNet downloads a missing or mismatching file from its model store; mxnet-wasm never downloads.
// `root` is where the user put the files, with MXNet's names (`resnet18_v1-a0666292.params`):
// a directory path (Node) or a URL (a directory URL ends with '/' or is taken as one unless it
// names a .params file), or the .params file itself (a path or a URL).
import { isNode, nodeBuiltinSync } from '../platform.mjs';
import { MXNetError } from '../core.mjs';
import { readBytes } from '../io.mjs';
import { check_sha1 as checkSha1 } from '../gluon_utils.mjs';
import { bindArgs, defineSignature, REQUIRED as R } from '../signature.mjs';

const nodeFs = nodeBuiltinSync('fs');
const nodePath = nodeBuiltinSync('path');
const nodeOs = nodeBuiltinSync('os');

// model_store.py's _model_sha1 table: name -> full SHA-1 of the .params file.
const MODEL_SHA1 = Object.freeze({
  alexnet: '44335d1f0046b328243b32a26a4fbd62d9057b45',
  densenet121: 'f27dbf2dbd5ce9a80b102d89c7483342cd33cb31',
  densenet161: 'b6c8a95717e3e761bd88d145f4d0a214aaa515dc',
  densenet169: '2603f878403c6aa5a71a124c4a3307143d6820e9',
  densenet201: '1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb',
  inceptionv3: 'ed47ec45a937b656fcc94dabde85495bbef5ba1f',
  'mobilenet0.25': '9f83e440996887baf91a6aff1cccc1c903a64274',
  'mobilenet0.5': '8e9d539cc66aa5efa71c4b6af983b936ab8701c3',
  'mobilenet0.75': '529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2',
  'mobilenet1.0': '6b8c5106c730e8750bcd82ceb75220a3351157cd',
  'mobilenetv2_1.0': '36da4ff1867abccd32b29592d79fc753bca5a215',
  'mobilenetv2_0.75': 'e2be7b72a79fe4a750d1dd415afedf01c3ea818d',
  'mobilenetv2_0.5': 'aabd26cd335379fcb72ae6c8fac45a70eab11785',
  'mobilenetv2_0.25': 'ae8f9392789b04822cbb1d98c27283fc5f8aa0a7',
  resnet18_v1: 'a0666292f0a30ff61f857b0b66efc0228eb6a54b',
  resnet34_v1: '48216ba99a8b1005d75c0f3a0c422301a0473233',
  resnet50_v1: '0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce',
  resnet101_v1: 'd988c13d6159779e907140a638c56f229634cb02',
  resnet152_v1: '671c637a14387ab9e2654eafd0d493d86b1c8579',
  resnet18_v2: 'a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657',
  resnet34_v2: '9d6b80bbc35169de6b6edecffdd6047c56fdd322',
  resnet50_v2: 'ecdde35339c1aadbec4f547857078e734a76fb49',
  resnet101_v2: '18e93e4f48947e002547f50eabbcc9c83e516aa6',
  resnet152_v2: 'f2695542de38cf7e71ed58f02893d82bb409415e',
  'squeezenet1.0': '264ba4970a0cc87a4f15c96e25246a1307caf523',
  'squeezenet1.1': '33ba0f93753c83d86e1eb397f38a667eaf2e9376',
  vgg11: 'dd221b160977f36a53f464cb54648d227c707a05',
  vgg11_bn: 'ee79a8098a91fbe05b7a973fed2017a6117723a8',
  vgg13: '6bc5de58a05a5e2e7f493e2d75a580d83efde38c',
  vgg13_bn: '7d97a06c3c7a1aecc88b6e7385c2b373a249e95e',
  vgg16: 'e660d4569ccb679ec68f1fd3cce07a387252a90a',
  vgg16_bn: '7f01cf050d357127a73826045c245041b0df7363',
  vgg19: 'ad2f660d101905472b83590b59708b71ea22b2e5',
  vgg19_bn: 'f360b758e856f1074a85abd5fd873ed1d98297c3',
});
export const modelSha1 = MODEL_SHA1;

// Where MXNet downloads a file from (told to the user when a file is missing).
export const apache_repo_url = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/';

const SIG = {
  get_model_file: defineSignature('model_store.get_model_file', [['name', R, 'str'], ['root', null, 'any']]),
  purge: defineSignature('model_store.purge', [['root', null, 'str']]),
};

const isUrl = (s) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s) || s.startsWith('blob:') || s.startsWith('data:');

export function short_hash(name) {
  if (typeof name !== 'string') throw new MXNetError(`short_hash: name must be a string, got ${String(name)}`);
  if (!Object.prototype.hasOwnProperty.call(MODEL_SHA1, name)) throw new MXNetError(`Pretrained model for ${name} is not available.`);
  return MODEL_SHA1[name].slice(0, 8);
}

// $MXNET_HOME/models, MXNet's default root (~/.mxnet/models); null outside Node.
export function defaultRoot() {
  if (!isNode) return null;
  const home = process.env.MXNET_HOME || nodePath.join(nodeOs.homedir(), '.mxnet');
  return nodePath.join(home, 'models');
}

const expandUser = (p) => (isNode && (p === '~' || p.startsWith('~/')) ? nodeOs.homedir() + p.slice(1) : p);

// get_model_file(name, root = '$MXNET_HOME/models'): the location of `name`'s parameter file,
// `<root>/<name>-<short sha1>.params`, or root itself when it names a file. Nothing is read.
export function get_model_file(...args) {
  const a = bindArgs(SIG.get_model_file, args);
  const fileName = `${a.name}-${short_hash(a.name)}.params`;
  let root = a.root ?? defaultRoot();
  if (root === null) {
    throw new MXNetError(`pretrained: no root given for ${a.name}: outside Node there is no default model directory; pass root (a URL of the directory holding ${fileName}, or of the file)`);
  }
  root = String(root);
  if (root.endsWith('.params')) return isUrl(root) ? root : expandUser(root);
  if (isUrl(root)) return root.endsWith('/') ? `${root}${fileName}` : `${root}/${fileName}`;
  root = expandUser(root);
  if (isNode && nodeFs.existsSync(root) && nodeFs.statSync(root).isFile()) return root;
  return isNode ? nodePath.join(root, fileName) : `${root.replace(/\/+$/, '')}/${fileName}`;
}

// Loads `name`'s pretrained parameters into net from `root` (loadParameters with ctx); resolves
// to net. A file with MXNet's name is checked against the table's SHA-1 (a mismatch is warned
// about: MXNet would download the file again, mxnet-wasm cannot).
export async function loadPretrained(net, name, root, ctx) {
  const file = get_model_file(name, root);
  const expected = `${name}-${short_hash(name)}.params`;
  if (isNode && !isUrl(file) && !nodeFs.existsSync(file)) {
    throw new MXNetError(`Pretrained model file ${file} not found. mxnet-wasm does not download: get ${apache_repo_url}gluon/models/${expected.slice(0, -7)}.zip (MXNet's model store), unzip ${expected} into ${nodePath.dirname(file)}, or pass root (a directory, a URL or the .params file itself)`);
  }
  const bytes = await readBytes(file);
  const base = file.split(/[\\/]/).pop();
  if (base === expected && globalThis.crypto?.subtle && !(await checkSha1(bytes, MODEL_SHA1[name]))) {
    console.warn(`Mismatch in the content of model file ${file} detected (its SHA-1 is not ${MODEL_SHA1[name]}); loading it anyway, as mxnet-wasm does not download.`);
  }
  try {
    await net.loadParameters(bytes, { ctx });
  } catch (e) {
    if (e instanceof MXNetError) e.message = `${file}: ${e.message}`;
    throw e;
  }
  return net;
}

// purge(root = '$MXNET_HOME/models'): removes every .params file in root (Node).
export function purge(...args) {
  const a = bindArgs(SIG.purge, args);
  if (!isNode) throw new MXNetError('purge needs Node (it deletes files)');
  const root = expandUser(a.root ?? defaultRoot());
  for (const f of nodeFs.readdirSync(root)) if (f.endsWith('.params')) nodeFs.unlinkSync(nodePath.join(root, f));
}

export const getModelFile = get_model_file;
export const shortHash = short_hash;
