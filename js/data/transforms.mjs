// transforms.mjs -- gluon.data.vision.transforms, as MXNet 1.9.1's
// python/mxnet/gluon/data/vision/transforms.py: each transform is a Block (HybridBlock where
// MXNet's is) lowering to the image operators (csrc/ops/image.c: _image_to_tensor,
// _image_normalize, _image_resize, _image_crop, _image_random_flip_*, _image_random_* colour
// jitter). CenterCrop and RandomResizedCrop follow python/mxnet/image/image.py's center_crop and
// random_size_crop (crop by slicing, then resize as OpenCV). Random choices (the flip ops, the
// crop position and size) draw from the library's seeded stream, so mx.random.seed(n) makes
// them reproducible (Python's crops use Python's `random` module instead).
// Rotate and RandomRotation (mx.image.imrotate) are not provided.
import { MXNetError } from '../core.mjs';
import { NDArray, invokeVisible, opId } from '../ndarray.mjs';
import { Block, HybridBlock, Sequential, HybridSequential, F } from '../block.mjs';
import { REQUIRED as R, bindArgs, defineSignature } from '../signature.mjs';

const SIG = Object.fromEntries([
  ['Compose', [['transforms', R, 'array']]],
  ['Cast', [['dtype', 'float32', 'dtype']]],
  ['ToTensor', []],
  ['Normalize', [['mean', 0.0, 'number|array'], ['std', 1.0, 'number|array']]],
  ['Resize', [['size', R, 'ints'], ['keep_ratio', false, 'bool'], ['interpolation', 1, 'int']]],
  ['CenterCrop', [['size', R, 'ints'], ['interpolation', 1, 'int']]],
  ['RandomResizedCrop', [['size', R, 'ints'], ['scale', [0.08, 1.0], 'number|array'],
    ['ratio', [3.0 / 4.0, 4.0 / 3.0], 'array'], ['interpolation', 1, 'int']]],
  ['CropResize', [['x', R, 'int'], ['y', R, 'int'], ['width', R, 'int'], ['height', R, 'int'], ['size', null, 'ints'],
    ['interpolation', null, 'int']]],
  ['RandomFlipLeftRight', []],
  ['RandomFlipTopBottom', []],
  ['RandomBrightness', [['brightness', R, 'number']]],
  ['RandomContrast', [['contrast', R, 'number']]],
  ['RandomSaturation', [['saturation', R, 'number']]],
  ['RandomHue', [['hue', R, 'number']]],
  ['RandomColorJitter', [['brightness', 0, 'number'], ['contrast', 0, 'number'], ['saturation', 0, 'number'],
    ['hue', 0, 'number']]],
  ['RandomLighting', [['alpha', R, 'number']]],
  ['RandomApply', [['transforms', R, 'any'], ['p', 0.5, 'number']]],
].map(([name, params]) => [name, defineSignature(`transforms.${name}`, params)]));
const bind = (name, args) => bindArgs(SIG[name], args);

const pair = (size) => (typeof size === 'number' ? [size, size] : Array.from(size));

// The shortest decimal reading back as the same float32 (MXNet parses mean/std as floats), so
// the attribute text stays short: (0.485, 0.456, 0.406).
function f32Text(v) {
  const f = Math.fround(v);
  for (let d = 1; d <= 9; d++) {
    const t = Number(f.toPrecision(d));
    if (Math.fround(t) === f) return Number.isInteger(t) ? `${t}.0` : String(t);
  }
  return String(f);
}
function floatTupleText(v) {
  if (typeof v === 'number') return f32Text(v);
  const items = Array.from(v, (x) => {
    if (typeof x !== 'number') throw new MXNetError(`Normalize: mean and std must be numbers, got ${String(x)}`);
    return f32Text(x);
  });
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
}

// One draw in [0, 1) from the library's seeded stream.
function random() {
  const u = invokeVisible(opId('_random_uniform'), [], { low: 0, high: 1, shape: [1], dtype: 'float64' });
  try { return u.toTypedArray()[0]; } finally { u.dispose(); }
}
const uniform = (a, b) => a + (b - a) * random();                      // Python's random.uniform
const randint = (a, b) => a + Math.min(b - a, Math.floor(random() * (b - a + 1))); // random.randint (inclusive)
// Python 3's round(): halves to even.
function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

// ---- image.py helpers ------------------------------------------------------------------------------
// _get_interp_method: 9 picks by the sizes (cubic to enlarge, area to shrink, else bilinear),
// 10 a random one of 0..4.
export function getInterpMethod(interp, sizes = null) {
  if (interp === 9) {
    if (sizes) {
      const [oh, ow, nh, nw] = sizes;
      if (nh > oh && nw > ow) return 2;
      if (nh < oh && nw < ow) return 3;
      return 1;
    }
    return 2;
  }
  if (interp === 10) return randint(0, 4);
  if (![0, 1, 2, 3, 4].includes(interp)) throw new MXNetError(`Unknown interp method ${interp}`);
  return interp;
}

// scale_down(src_size, size): the crop (w, h) shrunk to fit the image, keeping its aspect ratio.
export function scaleDown(srcSize, size) {
  let [w, h] = size;
  const [sw, sh] = srcSize;
  if (sh < h) { w = (w * sh) / h; h = sh; }
  if (sw < w) { h = (h * sw) / w; w = sw; }
  return [Math.trunc(w), Math.trunc(h)];
}

function imageHW(src, what) {
  if (!(src instanceof NDArray) || src.ndim !== 3) {
    const got = src instanceof NDArray ? `shape (${src.shape.join(', ')})` : String(src);
    throw new MXNetError(`${what} takes an (H, W, C) image NDArray, got ${got}`);
  }
  return src.shape;
}

// fixed_crop(src, x0, y0, w, h, size, interp): src[y0:y0+h, x0:x0+w], resized to size (w, h).
export function fixedCrop(src, x0, y0, w, h, size = null, interp = 2) {
  let out = F.nd.slice(src, { begin: [y0, x0], end: [y0 + h, x0 + w] });
  if (size !== null && size !== undefined && (w !== size[0] || h !== size[1])) {
    const method = getInterpMethod(interp, [h, w, size[1], size[0]]);
    const resized = F.nd._image_resize(out, { size: [size[0], size[1]], interp: method });
    out.dispose();
    out = resized;
  }
  return out;
}

// center_crop(src, size, interp): [the centred crop resized to size (w, h), [x0, y0, w, h]].
export function centerCrop(src, size, interp = 2) {
  const [h, w] = imageHW(src, 'center_crop');
  const [newW, newH] = scaleDown([w, h], size);
  const x0 = Math.trunc((w - newW) / 2), y0 = Math.trunc((h - newH) / 2);
  return [fixedCrop(src, x0, y0, newW, newH, size, interp), [x0, y0, newW, newH]];
}

// random_size_crop(src, size, area, ratio, interp): up to 10 tries of a crop with area
// uniform(area) * H * W and aspect ratio exp(uniform(log(ratio))); then the centre crop.
export function randomSizeCrop(src, size, area, ratio, interp = 2) {
  const [h, w] = imageHW(src, 'random_size_crop');
  const srcArea = h * w;
  if (typeof area === 'number') area = [area, 1.0];
  for (let t = 0; t < 10; t++) {
    const targetArea = uniform(area[0], area[1]) * srcArea;
    const newRatio = Math.exp(uniform(Math.log(ratio[0]), Math.log(ratio[1])));
    const newW = roundHalfEven(Math.sqrt(targetArea * newRatio));
    const newH = roundHalfEven(Math.sqrt(targetArea / newRatio));
    if (newW <= w && newH <= h) {
      const x0 = randint(0, w - newW), y0 = randint(0, h - newH);
      return [fixedCrop(src, x0, y0, newW, newH, size, interp), [x0, y0, newW, newH]];
    }
  }
  return centerCrop(src, size, interp);
}

// ---- transforms ------------------------------------------------------------------------------------
// Compose(transforms): a Sequential of the transforms in which each run of two or more
// consecutive HybridBlocks becomes one hybridized HybridSequential, as MXNet's.
export class Compose extends Sequential {
  constructor(...args) {
    const { transforms } = bind('Compose', args);
    super();
    let hybrid = [];
    for (const t of [...transforms, null]) {
      if (t instanceof HybridBlock) {
        hybrid.push(t);
        continue;
      } else if (hybrid.length === 1) {
        this.add(hybrid[0]);
        hybrid = [];
      } else if (hybrid.length > 1) {
        const hblock = new HybridSequential();
        hblock.add(...hybrid);
        hblock.hybridize();
        this.add(hblock);
        hybrid = [];
      }
      if (t !== null) this.add(t);
    }
  }
}

// Cast(dtype='float32')
export class Cast extends HybridBlock {
  constructor(...args) {
    const { dtype } = bind('Cast', args);
    super();
    this._dtype = dtype;
  }
  hybridForward(F_, x) { return F_.cast(x, { dtype: this._dtype }); }
}

// ToTensor(): (H, W, C) or (N, H, W, C) in [0, 255] -> float32 (C, H, W) or (N, C, H, W) in [0, 1].
export class ToTensor extends HybridBlock {
  constructor(...args) {
    bind('ToTensor', args);
    super();
  }
  hybridForward(F_, x) { return F_._image_to_tensor(x); }
}

// Normalize(mean=0.0, std=1.0): (x[c] - mean[c]) / std[c] on a (C, H, W) or (N, C, H, W) tensor.
export class Normalize extends HybridBlock {
  constructor(...args) {
    const { mean, std } = bind('Normalize', args);
    super();
    this._mean = mean;
    this._std = std;
    this._attrs = { mean: floatTupleText(mean), std: floatTupleText(std) };
  }
  hybridForward(F_, x) { return F_._image_normalize(x, this._attrs); }
}

// Resize(size, keep_ratio=false, interpolation=1): size is (width, height) or one integer.
export class Resize extends HybridBlock {
  constructor(...args) {
    const a = bind('Resize', args);
    super();
    this._keep = a.keepRatio;
    this._size = typeof a.size === 'number' ? a.size : Array.from(a.size);
    this._interpolation = a.interpolation;
  }
  hybridForward(F_, x) {
    return F_._image_resize(x, { size: this._size, keep_ratio: this._keep, interp: this._interpolation });
  }
}

// CenterCrop(size, interpolation=1): the centred crop of size (w, h), upsampled when the image is smaller.
export class CenterCrop extends Block {
  constructor(...args) {
    const a = bind('CenterCrop', args);
    super();
    this._args = [pair(a.size), a.interpolation];
  }
  forward(x) { return centerCrop(x, ...this._args)[0]; }
}

// RandomResizedCrop(size, scale=(0.08, 1.0), ratio=(3/4, 4/3), interpolation=1): a crop of random
// area fraction and aspect ratio, resized to size (w, h).
export class RandomResizedCrop extends Block {
  constructor(...args) {
    const a = bind('RandomResizedCrop', args);
    super();
    const scale = typeof a.scale === 'number' ? a.scale : Array.from(a.scale);
    this._args = [pair(a.size), scale, Array.from(a.ratio), a.interpolation];
  }
  forward(x) { return randomSizeCrop(x, ...this._args)[0]; }
}

// CropResize(x, y, width, height, size=null, interpolation=null): _image_crop, then resize to size.
export class CropResize extends HybridBlock {
  constructor(...args) {
    const a = bind('CropResize', args);
    super();
    Object.assign(this, { _x: a.x, _y: a.y, _width: a.width, _height: a.height });
    this._size = a.size;
    this._interpolation = a.interpolation;
  }
  hybridForward(F_, x) {
    let out = F_._image_crop(x, { x: this._x, y: this._y, width: this._width, height: this._height });
    if (this._size) {
      const attrs = { size: this._size, keep_ratio: false };
      if (this._interpolation !== null) attrs.interp = this._interpolation;
      const resized = F_._image_resize(out, attrs);
      if (out instanceof NDArray) out.dispose();
      out = resized;
    }
    return out;
  }
}

// RandomFlipLeftRight() / RandomFlipTopBottom(): flip an (H, W, C) image with probability 0.5.
export class RandomFlipLeftRight extends HybridBlock {
  constructor(...args) {
    bind('RandomFlipLeftRight', args);
    super();
  }
  hybridForward(F_, x) { return F_._image_random_flip_left_right(x); }
}
export class RandomFlipTopBottom extends HybridBlock {
  constructor(...args) {
    bind('RandomFlipTopBottom', args);
    super();
  }
  hybridForward(F_, x) { return F_._image_random_flip_top_bottom(x); }
}

// Random colour jitter of an (H, W, C) image: a factor from [max(0, 1 - v), 1 + v].
function enhance(name, op) {
  return class extends HybridBlock {
    constructor(...args) {
      const v = Object.values(bind(name, args))[0];
      super();
      this._args = { min_factor: Math.max(0, 1 - v), max_factor: 1 + v };
    }
    hybridForward(F_, x) { return F_[op](x, this._args); }
  };
}
export const RandomBrightness = enhance('RandomBrightness', '_image_random_brightness');
export const RandomContrast = enhance('RandomContrast', '_image_random_contrast');
export const RandomSaturation = enhance('RandomSaturation', '_image_random_saturation');
export const RandomHue = enhance('RandomHue', '_image_random_hue');
for (const [cls, name] of [[RandomBrightness, 'RandomBrightness'], [RandomContrast, 'RandomContrast'],
  [RandomSaturation, 'RandomSaturation'], [RandomHue, 'RandomHue']]) {
  Object.defineProperty(cls, 'name', { value: name });
}

// RandomColorJitter(brightness=0, contrast=0, saturation=0, hue=0)
export class RandomColorJitter extends HybridBlock {
  constructor(...args) {
    const a = bind('RandomColorJitter', args);
    super();
    this._args = { brightness: a.brightness, contrast: a.contrast, saturation: a.saturation, hue: a.hue };
  }
  hybridForward(F_, x) { return F_._image_random_color_jitter(x, this._args); }
}

// RandomLighting(alpha): AlexNet-style PCA noise with alphas from N(0, alpha).
export class RandomLighting extends HybridBlock {
  constructor(...args) {
    const { alpha } = bind('RandomLighting', args);
    super();
    this._alpha = alpha;
  }
  hybridForward(F_, x) { return F_._image_random_lighting(x, { alpha_std: this._alpha }); }
}

// RandomApply(transforms, p=0.5): applies `transforms` (a Block) with probability p.
export class RandomApply extends Sequential {
  constructor(...args) {
    const a = bind('RandomApply', args);
    super();
    this.transforms = a.transforms;
    this.p = a.p;
  }
  forward(x) {
    if (this.p < random()) return x;
    return this.transforms(x);
  }
}
