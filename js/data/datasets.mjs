// datasets.mjs -- gluon.data.vision's datasets (MXNet 1.9.1 python/mxnet/gluon/data/vision/
// datasets.py): MNIST, FashionMNIST, CIFAR10, CIFAR100 and ImageFolderDataset.
//
// Python downloads a missing file from MXNet's repository; mxnet-wasm never downloads (as the model
// zoo): `root` is where the user put MXNet's files -- a directory (Node; default
// $MXNET_HOME/datasets/<name>, MXNET_HOME defaulting to ~/.mxnet) or a URL. Reading is async, so
// each constructor returns a Promise of the dataset (js-api.md rule 7):
//   const train = await new gluon.data.vision.MNIST({ train: true });
//   const loader = new gluon.data.DataLoader(train.transformFirst(new transforms.ToTensor()), { batchSize: 64 });
// A sample is [image, label]: the image an (H, W, C) uint8 NDArray ((28, 28, 1) or (32, 32, 3)),
// the label a number (Python: an int32 scalar); with `transform`, transform(image, label). The MNIST
// files are the gzipped IDX files; CIFAR's the binary batches (data_batch_<i>.bin, test_batch.bin;
// train.bin, test.bin), or the .tar.gz holding them, read in memory. A file whose SHA-1 is not
// MXNet's is warned about (Python would download it again) and read; a malformed one is an
// MXNetError naming it.
import { MXNetError } from '../core.mjs';
import { array as ndArray, keep } from '../ndarray.mjs';
import { Dataset } from '../data.mjs';
import { isNode, nodeBuiltinSync } from '../platform.mjs';
import { readBytes } from '../io.mjs';
import { imread, imdecode } from '../image.mjs';
import { MXIndexedRecordIO, unpack } from '../recordio.mjs';
import { REQUIRED as R, bindArgs, defineSignature } from '../signature.mjs';

const nodeFs = nodeBuiltinSync('fs');
const nodePath = nodeBuiltinSync('path');
const nodeOs = nodeBuiltinSync('os');
const nodeZlib = nodeBuiltinSync('zlib');

const FN = 'function?';
const SIG = {
  MNIST: defineSignature('vision.MNIST', [['root', null, 'str|any'], ['train', true, 'bool'], ['transform', null, FN]]),
  FashionMNIST: defineSignature('vision.FashionMNIST', [['root', null, 'str|any'], ['train', true, 'bool'], ['transform', null, FN]]),
  CIFAR10: defineSignature('vision.CIFAR10', [['root', null, 'str|any'], ['train', true, 'bool'], ['transform', null, FN]]),
  CIFAR100: defineSignature('vision.CIFAR100', [['root', null, 'str|any'], ['fine_label', false, 'bool'], ['train', true, 'bool'],
    ['transform', null, FN]]),
  RecordFileDataset: defineSignature('data.RecordFileDataset', [['filename', R, 'str|any']]),
  ImageRecordDataset: defineSignature('vision.ImageRecordDataset', [['filename', R, 'str|any'], ['flag', 1, 'int'], ['transform', null, FN]]),
  ImageFolderDataset: defineSignature('vision.ImageFolderDataset', [['root', R, 'str'], ['flag', 1, 'int'], ['transform', null, FN]]),
};

const isUrl = (s) => s instanceof URL || /^[a-z][a-z0-9+.-]*:\/\//i.test(String(s)) || String(s).startsWith('blob:');
// $MXNET_HOME/datasets/<name> (base.data_dir(): MXNET_HOME, else ~/.mxnet)
function defaultRoot(name) {
  if (!isNode) throw new MXNetError(`${name}: outside Node there is no default dataset directory; pass root (a URL)`);
  return nodePath.join(process.env.MXNET_HOME || nodePath.join(nodeOs.homedir(), '.mxnet'), 'datasets', name);
}
const expandUser = (p) => (isNode && (p === '~' || p.startsWith('~/')) ? nodeOs.homedir() + p.slice(1) : p);
function fileIn(root, name) {
  if (isUrl(root)) return new URL(name, String(root).endsWith('/') ? String(root) : `${root}/`).href;
  return isNode ? nodePath.join(root, name) : `${String(root).replace(/\/+$/, '')}/${name}`;
}
const exists = (file) => !isNode || isUrl(file) || nodeFs.existsSync(file);

async function sha1Hex(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return null;
  return Array.from(new Uint8Array(await subtle.digest('SHA-1', bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}
// the file's bytes; a SHA-1 other than MXNet's is warned about
async function readChecked(file, sha1) {
  const bytes = await readBytes(file);
  const got = sha1 ? await sha1Hex(bytes) : null;
  if (got && got !== sha1) console.warn(`${file}: its SHA-1 is not ${sha1} (MXNet's file); reading it anyway, as mxnet-wasm does not download.`);
  return bytes;
}
async function gunzip(bytes, file) {
  try {
    if (isNode) return new Uint8Array(nodeZlib.gunzipSync(bytes));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (e) {
    throw new MXNetError(`${file}: not a gzip file (${e.message})`);
  }
}
// The regular files of a tar archive, by base name.
function untar(bytes, file) {
  const out = new Map();
  const text = (at, n) => new TextDecoder().decode(bytes.subarray(at, at + n)).replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= bytes.length;) {
    if (bytes.subarray(at, at + 512).every((b) => b === 0)) break;
    const name = text(at, 100), prefix = text(at + 345, 155), type = String.fromCharCode(bytes[at + 156] || 48);
    const size = parseInt(text(at + 124, 12).trim() || '0', 8);
    if (!Number.isFinite(size) || size < 0 || at + 512 + size > bytes.length) throw new MXNetError(`${file}: a corrupt tar entry '${name}'`);
    if (type === '0' || type === '\0') out.set(`${prefix ? `${prefix}/` : ''}${name}`.split('/').pop(), bytes.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

// _DownloadedDataset: images (an uint8 NDArray of N images) and labels (Int32Array).
class DownloadedDataset extends Dataset {
  _set(data, label, transform) {
    this._data = keep(data);
    this._label = label;
    this._transform = transform;
    return this;
  }
  get(idx) {
    const n = this._label.length;
    if (!Number.isInteger(idx) || idx < -n || idx >= n) throw new MXNetError(`index ${idx} is out of range for ${n} samples`);
    const i = idx < 0 ? idx + n : idx;
    const data = this._data.get(i), label = this._label[i];
    return this._transform ? this._transform(data, label) : [data, label];
  }
  get length() { return this._label ? this._label.length : 0; }
  // Frees the images (the dataset cannot be used afterwards).
  dispose() { this._data?.dispose(); }
}

// ---- MNIST / FashionMNIST: gzipped IDX files ------------------------------------------------------------
const readU32 = (b, at) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
function idx(bytes, file, magic, dims) {
  const head = 4 + 4 * dims;
  if (bytes.length < head || readU32(bytes, 0) !== magic) throw new MXNetError(`${file}: not an IDX file of ${dims} dimension(s) (magic ${magic.toString(16)})`);
  const shape = Array.from({ length: dims }, (_, i) => readU32(bytes, 4 + 4 * i));
  const n = shape.reduce((a, b) => a * b, 1);
  if (bytes.length - head !== n) throw new MXNetError(`${file}: ${bytes.length - head} bytes of data for shape (${shape.join(', ')})`);
  return { shape, data: bytes.subarray(head) };
}
const MNIST_FILES = {
  mnist: {
    train: [['train-images-idx3-ubyte.gz', '6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d'], ['train-labels-idx1-ubyte.gz', '2a80914081dc54586dbdf242f9805a6b8d2a15fc']],
    test: [['t10k-images-idx3-ubyte.gz', 'c3a25af1f52dad7f726cce8cacb138654b760d48'], ['t10k-labels-idx1-ubyte.gz', '763e7fa3757d93b0cdec073cef058b2004252c17']],
  },
  'fashion-mnist': {
    train: [['train-images-idx3-ubyte.gz', '0cf37b0d40ed5169c6b3aba31069a9770ac9043d'], ['train-labels-idx1-ubyte.gz', '236021d52f1e40852b06a4c3008d8de8aef1e40b']],
    test: [['t10k-images-idx3-ubyte.gz', '626ed6a7c06dd17c0eec72fa3be1740f146a2863'], ['t10k-labels-idx1-ubyte.gz', '17f9ab60e7257a1620f4ad76bbbaf857c3920701']],
  },
};
const REPO = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/dataset/';
function missing(file, namespace, name) {
  return new MXNetError(`${file} not found. mxnet-wasm does not download: get ${REPO}${namespace}/${name} into that directory, or pass root (a directory or a URL)`);
}
async function loadMnist(self, a, namespace, cls) {
  const root = a.root == null ? defaultRoot(namespace) : expandUser(String(a.root));
  const [[dataName, dataSha], [labelName, labelSha]] = MNIST_FILES[namespace][a.train ? 'train' : 'test'];
  const dataFile = fileIn(root, dataName), labelFile = fileIn(root, labelName);
  for (const [f, n] of [[dataFile, dataName], [labelFile, labelName]]) if (!exists(f)) throw missing(f, namespace, n);
  const labels = idx(await gunzip(await readChecked(labelFile, labelSha), labelFile), labelFile, 0x801, 1);
  const images = idx(await gunzip(await readChecked(dataFile, dataSha), dataFile), dataFile, 0x803, 3);
  if (images.shape[0] !== labels.shape[0]) throw new MXNetError(`${cls}: ${images.shape[0]} images and ${labels.shape[0]} labels`);
  const data = ndArray(images.data, { shape: [images.shape[0], images.shape[1], images.shape[2], 1], dtype: 'uint8' });
  return self._set(data, Int32Array.from(labels.data), a.transform);
}

// MNIST(root = '$MXNET_HOME/datasets/mnist', train = true, transform = null): a Promise of the
// dataset; samples [(28, 28, 1) uint8 image, label].
export class MNIST extends DownloadedDataset {
  constructor(...args) {
    super();
    return loadMnist(this, bindArgs(SIG.MNIST, args), 'mnist', 'MNIST');
  }
}
// FashionMNIST(root = '$MXNET_HOME/datasets/fashion-mnist', train = true, transform = null)
export class FashionMNIST extends DownloadedDataset {
  constructor(...args) {
    super();
    return loadMnist(this, bindArgs(SIG.FashionMNIST, args), 'fashion-mnist', 'FashionMNIST');
  }
}

// ---- CIFAR10 / CIFAR100: binary batches ----------------------------------------------------------------
const CIFAR = {
  cifar10: {
    archive: ['cifar-10-binary.tar.gz', 'fab780a1e191a7eda0f345501ccd62d20f7ed891'],
    train: [['data_batch_1.bin', 'aadd24acce27caa71bf4b10992e9e7b2d74c2540'], ['data_batch_2.bin', 'c0ba65cce70568cd57b4e03e9ac8d2a5367c1795'],
      ['data_batch_3.bin', '1dd00a74ab1d17a6e7d73e185b69dbf31242f295'], ['data_batch_4.bin', 'aab85764eb3584312d3c7f65fd2fd016e36a258e'],
      ['data_batch_5.bin', '26e2849e66a845b7f1e4614ae70f4889ae604628']],
    test: [['test_batch.bin', '67eb016db431130d61cd03c7ad570b013799c88c']],
    labelBytes: 1,
  },
  cifar100: {
    archive: ['cifar-100-binary.tar.gz', 'a0bb982c76b83111308126cc779a992fa506b90b'],
    train: [['train.bin', 'e207cd2e05b73b1393c74c7f5e7bea451d63e08e']],
    test: [['test.bin', '8fb6623e830365ff53cf14adec797474f5478006']],
    labelBytes: 2,
  },
};
async function loadCifar(self, a, namespace, cls, labelAt) {
  const root = a.root == null ? defaultRoot(namespace) : expandUser(String(a.root));
  const spec = CIFAR[namespace], files = spec[a.train ? 'train' : 'test'];
  let contents;
  if (files.every(([n]) => exists(fileIn(root, n)))) { // (a URL root is tried, then its archive)
    contents = new Map();
    try {
      for (const [n, sha] of files) contents.set(n, await readChecked(fileIn(root, n), sha));
    } catch (e) {
      if (!isUrl(root)) throw e;
      contents = null; // (a URL root: try the archive)
    }
  }
  if (!contents) {
    const archive = fileIn(root, spec.archive[0]);
    if (!exists(archive)) throw missing(fileIn(root, files[0][0]), namespace, spec.archive[0]);
    contents = untar(await gunzip(await readChecked(archive, spec.archive[1]), archive), archive);
  }
  const rec = 3072 + spec.labelBytes;
  const parts = files.map(([n]) => {
    const b = contents.get(n);
    if (!b) throw new MXNetError(`${cls}: ${n} is not in ${spec.archive[0]}`);
    if (b.length % rec !== 0) throw new MXNetError(`${cls}: ${n} has ${b.length} bytes, not a multiple of ${rec}`);
    return b;
  });
  const total = parts.reduce((s, b) => s + b.length / rec, 0);
  const images = new Uint8Array(total * 3072), labels = new Int32Array(total);
  let i = 0;
  for (const b of parts) {
    for (let r = 0; r < b.length / rec; r++, i++) {
      const at = r * rec;
      labels[i] = b[at + labelAt];
      const px = b.subarray(at + spec.labelBytes, at + rec); // (3, 32, 32) -> (32, 32, 3)
      const o = images.subarray(i * 3072, (i + 1) * 3072);
      for (let c = 0; c < 3; c++) for (let p = 0; p < 1024; p++) o[p * 3 + c] = px[c * 1024 + p];
    }
  }
  return self._set(ndArray(images, { shape: [total, 32, 32, 3], dtype: 'uint8' }), labels, a.transform);
}
// CIFAR10(root = '$MXNET_HOME/datasets/cifar10', train = true, transform = null): samples
// [(32, 32, 3) uint8 image, label]
export class CIFAR10 extends DownloadedDataset {
  constructor(...args) {
    super();
    return loadCifar(this, bindArgs(SIG.CIFAR10, args), 'cifar10', 'CIFAR10', 0);
  }
}
// CIFAR100(root = '$MXNET_HOME/datasets/cifar100', fine_label = false, train = true, transform = null):
// the coarse (20) or fine (100) labels
export class CIFAR100 extends DownloadedDataset {
  constructor(...args) {
    super();
    const a = bindArgs(SIG.CIFAR100, args);
    return loadCifar(this, a, 'cifar100', 'CIFAR100', a.fineLabel ? 1 : 0);
  }
}

// ---- ImageFolderDataset ----------------------------------------------------------------------------
// ImageFolderDataset(root, flag = 1, transform = null) (Node): the images (.jpg, .jpeg, .png) in
// root's sub-folders, one class per folder (synsets: the folders' names, sorted; label = index).
// get(i) resolves to [image, label] (image.imread with flag, then transform(image, label)): iterate
// it with `for await` or a DataLoader.
export class ImageFolderDataset extends Dataset {
  constructor(...args) {
    super();
    const a = bindArgs(SIG.ImageFolderDataset, args);
    if (!isNode) throw new MXNetError('ImageFolderDataset lists a directory: Node only (in a browser, build an ArrayDataset of URLs and read them with image.imread)');
    this._root = expandUser(a.root);
    this._flag = a.flag;
    this._transform = a.transform;
    this._exts = ['.jpg', '.jpeg', '.png'];
    this.synsets = [];
    this.items = [];
    for (const folder of nodeFs.readdirSync(this._root).sort()) {
      const path = nodePath.join(this._root, folder);
      if (!nodeFs.statSync(path).isDirectory()) {
        console.warn(`Ignoring ${path}, which is not a directory.`);
        continue;
      }
      const label = this.synsets.length;
      this.synsets.push(folder);
      for (const filename of nodeFs.readdirSync(path).sort()) {
        const file = nodePath.join(path, filename), ext = nodePath.extname(file).toLowerCase();
        if (!this._exts.includes(ext)) {
          console.warn(`Ignoring ${file} of type ${ext}. Only support ${this._exts.join(', ')}`);
          continue;
        }
        this.items.push([file, label]);
      }
    }
  }
  async get(idx) {
    const item = this.items.at(idx);
    if (!Number.isInteger(idx) || !item) throw new MXNetError(`index ${idx} is out of range for ${this.items.length} images`);
    const img = await imread(item[0], this._flag);
    return this._transform ? this._transform(img, item[1]) : [img, item[1]];
  }
  get length() { return this.items.length; }
}

// ---- RecordIO datasets ---------------------------------------------------------------------------
// RecordFileDataset(filename) (gluon.data): the records of a .rec file by its .idx (the same name
// with .idx), as bytes; a Promise of the dataset.
export class RecordFileDataset extends Dataset {
  constructor(...args) {
    super();
    const { filename } = bindArgs(SIG.RecordFileDataset, args);
    return this._open(filename);
  }
  async _open(filename) {
    const name = String(filename);
    this.filename = filename;
    this.idx_file = `${name.replace(/\.[^./\\]*$/, '')}.idx`;
    this._record = await new MXIndexedRecordIO(this.idx_file, filename, 'r');
    return this;
  }
  get(idx) {
    const keys = this._record.keys, key = keys.at(idx);
    if (!Number.isInteger(idx) || key === undefined) throw new MXNetError(`index ${idx} is out of range for ${keys.length} records`);
    return this._record.read_idx(key);
  }
  get length() { return this._record.keys.length; }
}

// ImageRecordDataset(filename, flag = 1, transform = null) (gluon.data.vision): a RecordFileDataset
// of image records (im2rec's); get(i) resolves to [image (H, W, C) uint8 RGB, label] (or
// transform(image, label)), label a number or, for records with several, a Float32Array.
export class ImageRecordDataset extends RecordFileDataset {
  constructor(...args) {
    const a = bindArgs(SIG.ImageRecordDataset, args);
    const self = super(a.filename);
    return self.then((me) => {
      me._flag = a.flag;
      me._transform = a.transform;
      return me;
    });
  }
  async get(idx) {
    const [header, img] = unpack(super.get(idx));
    const image = await imdecode(img, { flag: this._flag });
    return this._transform ? this._transform(image, header.label) : [image, header.label];
  }
}
