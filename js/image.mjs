// image.mjs -- mx.image (also mx.img): MXNet 1.9.1's python/mxnet/image/image.py helpers on
// (H, W, C) image NDArrays, plus fromPixels, the JS way in from the browser's pixels.
//
//   const x = mx.image.fromPixels(canvas);                  // (H, W, 3) uint8, from the page
//   const img = await mx.image.imread('cat.png');           // (H, W, 3) uint8, RGB
//   const small = mx.image.resize_short(img, 256);          // shorter edge 256, as OpenCV
//   const [crop] = mx.image.center_crop(small, [224, 224]);
//   const t = new transforms.Compose([new transforms.ToTensor(), new transforms.Normalize(mean, std)]);
//
// MXNet decodes with OpenCV; here imdecode/imread are async (the platform's decoders are) and
// decode PNG with their own decoder everywhere (libpng's conversions as OpenCV calls them: 16-bit
// samples keep their high byte, alpha is dropped, grey from colour is libpng's rgb_to_gray with
// OpenCV's 0.299/0.587 weights -- of the high bytes for 16-bit files, where libpng takes the high
// byte of a 16-bit grey, which can differ by one level), other formats (JPEG, WebP, GIF, BMP, ...) with the browser's
// decoder (createImageBitmap) where there is one, or with a `decoder` function the caller gives.
import { MXNetError } from './core.mjs';
import { NDArray, array, invokeVisible, opId } from './ndarray.mjs';

const run = (name, inputs, attrs, out) => invokeVisible(opId(name), inputs, attrs, out);
import { bindArgs } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { readBytes, readOptions } from './io.mjs';
import * as T from './data/transforms.mjs';

const bind = (name, args) => bindArgs(SIGNATURES[`image.${name}`], args);

// ---- grey levels -----------------------------------------------------------------------------------
// libpng's rgb_to_gray without gamma, with the weights OpenCV sets (png_set_rgb_to_gray(png, 1,
// 0.299, 0.587)): coefficients 0.299 and 0.587 of 32768 truncated, blue the rest; the sum is
// truncated (>> 15), and a pixel whose R, G and B are equal keeps that value.
const RC = 9797, GC = 19234, BC = 32768 - RC - GC;
const grey = (r, g, b) => ((r === g && r === b) ? r : (RC * r + GC * g + BC * b) >>> 15);

// RGBA bytes (4 per pixel) -> an (H, W, channels) uint8 NDArray: 4 keeps alpha, 3 drops it,
// 1 is the grey level above; bgr swaps red and blue (OpenCV's order).
function rgbaToNDArray(rgba, width, height, channels, bgr = false) {
  const n = width * height;
  const out = new Uint8Array(n * channels);
  if (channels === 1) {
    for (let i = 0, j = 0; i < n; i++, j += 4) out[i] = grey(rgba[j], rgba[j + 1], rgba[j + 2]);
  } else {
    const r = bgr ? 2 : 0, b = bgr ? 0 : 2;
    for (let i = 0, j = 0, k = 0; i < n; i++, j += 4, k += channels) {
      out[k] = rgba[j + r];
      out[k + 1] = rgba[j + 1];
      out[k + 2] = rgba[j + b];
      if (channels === 4) out[k + 3] = rgba[j + 3];
    }
  }
  return array(out, { shape: [height, width, channels], dtype: 'uint8' });
}

function checkChannels(channels, where) {
  if (channels !== 1 && channels !== 3 && channels !== 4) {
    throw new MXNetError(`${where}: channels must be 1, 3 or 4, got ${String(channels)}`);
  }
}

// ---- fromPixels --------------------------------------------------------------------------------------
// A 2D context to draw into: an OffscreenCanvas where there is one, else a <canvas>.
function scratchContext(width, height) {
  let canvas;
  if (typeof OffscreenCanvas !== 'undefined') canvas = new OffscreenCanvas(width, height);
  else if (typeof document !== 'undefined') {
    canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
  } else {
    throw new MXNetError('fromPixels: drawing this source needs a canvas (OffscreenCanvas or document); pass ImageData instead');
  }
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) throw new MXNetError('fromPixels: cannot get a 2d canvas context');
  return ctx;
}

const isCanvas = (s) => (typeof HTMLCanvasElement !== 'undefined' && s instanceof HTMLCanvasElement)
  || (typeof OffscreenCanvas !== 'undefined' && s instanceof OffscreenCanvas);

// The drawn size of an image source, by the kind of source it is.
function sourceSize(s) {
  if (typeof HTMLImageElement !== 'undefined' && s instanceof HTMLImageElement) {
    if (!s.complete || s.naturalWidth === 0) throw new MXNetError('fromPixels: the image has not loaded (await img.decode() first)');
    return [s.naturalWidth, s.naturalHeight];
  }
  if (typeof HTMLVideoElement !== 'undefined' && s instanceof HTMLVideoElement) {
    if (s.readyState < 2) throw new MXNetError('fromPixels: the video has no frame yet (wait for its loadeddata event)');
    return [s.videoWidth, s.videoHeight];
  }
  if (typeof VideoFrame !== 'undefined' && s instanceof VideoFrame) return [s.displayWidth, s.displayHeight];
  if (typeof ImageBitmap !== 'undefined' && s instanceof ImageBitmap) return [s.width, s.height];
  if (typeof SVGImageElement !== 'undefined' && s instanceof SVGImageElement) {
    return [s.width.baseVal.value, s.height.baseVal.value];
  }
  if (isCanvas(s)) return [s.width, s.height];
  return null;
}

// RGBA bytes of any source: {data, width, height} read as is; a canvas through its 2d context (a
// canvas holding another context, e.g. WebGL, is drawn into a scratch one); images, bitmaps and
// video frames drawn at their natural size.
function pixelsOf(source) {
  if (source && typeof source === 'object' && 'data' in source && 'width' in source && 'height' in source
    && !isCanvas(source)) {
    const { data, width, height } = source;
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 0 || height < 0) {
      throw new MXNetError(`fromPixels: ImageData width and height must be non-negative integers, got ${width} x ${height}`);
    }
    if (!(data instanceof Uint8ClampedArray || data instanceof Uint8Array)) {
      throw new MXNetError('fromPixels: ImageData.data must be a Uint8ClampedArray or Uint8Array of RGBA bytes');
    }
    if (data.length !== width * height * 4) {
      throw new MXNetError(`fromPixels: ImageData of ${width} x ${height} needs ${width * height * 4} RGBA bytes, got ${data.length}`);
    }
    return { data, width, height };
  }
  const size = sourceSize(source);
  if (!size) {
    throw new MXNetError('fromPixels takes ImageData (or {data, width, height} of RGBA bytes), a canvas, an OffscreenCanvas, '
      + `an ImageBitmap, an HTMLImageElement, an HTMLVideoElement or a VideoFrame; got ${source?.constructor?.name ?? String(source)}`);
  }
  const [width, height] = size;
  if (width === 0 || height === 0) return { data: new Uint8Array(0), width, height };
  let ctx = isCanvas(source) ? source.getContext('2d') : null;
  if (!ctx) {
    ctx = scratchContext(width, height);
    ctx.drawImage(source, 0, 0, width, height);
  }
  return ctx.getImageData(0, 0, width, height);
}

// fromPixels(source, channels = 3): an (H, W, channels) uint8 NDArray of the source's pixels,
// what gluon.data.vision.transforms (ToTensor, Normalize, Resize, CenterCrop) take. channels 3
// is RGB, 4 RGBA (alpha not premultiplied, as ImageData), 1 grey (libpng's weights above; TF.js's
// fromPixels keeps the red channel instead).
export function fromPixels(...args) {
  const { source, channels } = bind('fromPixels', args);
  checkChannels(channels, 'fromPixels');
  const { data, width, height } = pixelsOf(source);
  return rgbaToNDArray(data, width, height, channels);
}

// ---- PNG -------------------------------------------------------------------------------------------------
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(bytes, start, end) {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// zlib data -> at most `limit` bytes (the image's size: a file inflating to more is cut there).
async function inflate(bytes, limit) {
  if (typeof DecompressionStream === 'undefined') {
    throw new MXNetError('imdecode: PNG needs DecompressionStream (Node >= 18, any current browser)');
  }
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate')).getReader();
  const out = new Uint8Array(limit);
  let n = 0;
  try {
    while (n < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      out.set(value.subarray(0, limit - n), n);
      n += Math.min(value.length, limit - n);
    }
  } catch (e) {
    throw new MXNetError(`imdecode: corrupt PNG: the image data does not inflate (${e.message})`);
  } finally {
    reader.cancel().catch(() => {});
  }
  return out.subarray(0, n);
}

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const CHANNELS_OF = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS_OF = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]];
const MAX_PIXELS = 1 << 28;

// PNG bytes -> {width, height, colorType, samples}: samples are 8-bit (16-bit samples keep their
// high byte, as png_set_strip_16), `components` per pixel in the file's colour type (palette
// images expanded to RGBA).
async function decodePNG(bytes) {
  const bad = (why) => new MXNetError(`imdecode: corrupt PNG: ${why}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8;
  let ihdr = null, palette = null, trns = null;
  const idat = [];
  let ended = false;
  while (!ended) {
    if (pos + 12 > bytes.length) throw bad(`the file ends at byte ${bytes.length} before the IEND chunk`);
    const len = dv.getUint32(pos);
    const type = String.fromCharCode(bytes[pos + 4], bytes[pos + 5], bytes[pos + 6], bytes[pos + 7]);
    const start = pos + 8, end = start + len;
    if (len > 0x7fffffff || end + 4 > bytes.length) throw bad(`chunk ${type} at byte ${pos} needs ${len} bytes, but only ${Math.max(0, bytes.length - start - 4)} remain`);
    const critical = (bytes[pos + 4] & 0x20) === 0;
    if (critical && crc32(bytes, pos + 4, end) !== dv.getUint32(end)) throw bad(`chunk ${type} at byte ${pos} fails its CRC`);
    const body = bytes.subarray(start, end);
    if (type === 'IHDR') {
      if (len !== 13) throw bad('IHDR must be 13 bytes');
      ihdr = {
        width: dv.getUint32(start), height: dv.getUint32(start + 4), depth: body[8], colorType: body[9],
        compression: body[10], filter: body[11], interlace: body[12],
      };
    } else if (!ihdr) {
      throw bad(`the first chunk must be IHDR, got ${type}`);
    } else if (type === 'PLTE') {
      if (len % 3 !== 0 || len === 0 || len > 768) throw bad(`PLTE of ${len} bytes`);
      palette = body;
    } else if (type === 'tRNS') {
      trns = body;
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      ended = true;
    } else if (critical) {
      throw bad(`unknown critical chunk ${type}`);
    }
    pos = end + 4;
  }
  const { width, height, depth, colorType, interlace } = ihdr;
  if (!(colorType in CHANNELS_OF) || !DEPTHS_OF[colorType].includes(depth)) throw bad(`colour type ${colorType} with bit depth ${depth}`);
  if (ihdr.compression !== 0 || ihdr.filter !== 0 || interlace > 1) throw bad('unknown compression, filter or interlace method');
  if (width === 0 || height === 0) throw bad(`image of ${width} x ${height} pixels`);
  if (width * height > MAX_PIXELS) throw new MXNetError(`imdecode: a PNG of ${width} x ${height} pixels is larger than the ${MAX_PIXELS} pixels allowed`);
  if (colorType === 3 && !palette) throw bad('a palette image without PLTE');
  if (!idat.length) throw bad('no IDAT chunk');
  let total = 0;
  for (const c of idat) total += c.length;
  const z = new Uint8Array(total);
  total = 0;
  for (const c of idat) { z.set(c, total); total += c.length; }
  const comps = CHANNELS_OF[colorType];
  const bitsPP = comps * depth;
  const passes = interlace ? ADAM7 : [[0, 0, 1, 1]];
  let need = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx), ph = Math.ceil((height - y0) / dy);
    if (pw > 0 && ph > 0) need += ph * (Math.ceil((pw * bitsPP) / 8) + 1);
  }
  const raw = await inflate(z, need);

  const bpp = Math.max(1, bitsPP >> 3); // filter byte distance
  // out: 8-bit samples, `outComps` per pixel (palette -> RGBA)
  const outComps = colorType === 3 ? 4 : comps;
  const out = new Uint8Array(width * height * outComps);
  const scale = depth < 8 ? 255 / ((1 << depth) - 1) : 1;
  let off = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx), ph = Math.ceil((height - y0) / dy);
    if (pw <= 0 || ph <= 0) continue;
    const stride = Math.ceil((pw * bitsPP) / 8);
    if (off + ph * (stride + 1) > raw.length) throw bad(`the image data holds ${raw.length} bytes, fewer than its ${width} x ${height} pixels need`);
    let prev = new Uint8Array(stride);
    for (let y = 0; y < ph; y++) {
      const ft = raw[off];
      const line = raw.subarray(off + 1, off + 1 + stride);
      off += stride + 1;
      for (let i = 0; i < stride; i++) {
        const a = i >= bpp ? line[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
        let v;
        switch (ft) {
          case 0: v = 0; break;
          case 1: v = a; break;
          case 2: v = b; break;
          case 3: v = (a + b) >> 1; break;
          case 4: {
            const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
            v = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
            break;
          }
          default: throw bad(`unknown filter type ${ft} on row ${y}`);
        }
        line[i] = (line[i] + v) & 0xff;
      }
      prev = line;
      // samples of this row
      const Y = y0 + y * dy;
      for (let x = 0; x < pw; x++) {
        const o = ((Y * width) + x0 + x * dx) * outComps;
        if (depth === 8) {
          const s = x * comps;
          if (colorType === 3) {
            const idx = line[s];
            writePalette(out, o, idx);
          } else {
            for (let k = 0; k < comps; k++) out[o + k] = line[s + k];
          }
        } else if (depth === 16) {
          const s = x * comps * 2;
          for (let k = 0; k < comps; k++) out[o + k] = line[s + 2 * k];
        } else {
          const bit = x * depth;
          const v = (line[bit >> 3] >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
          if (colorType === 3) writePalette(out, o, v);
          else out[o] = Math.round(v * scale);
        }
      }
    }
  }
  function writePalette(dst, o, idx) {
    if (idx * 3 + 2 >= palette.length) throw bad(`palette index ${idx} beyond the ${palette.length / 3} colours of PLTE`);
    dst[o] = palette[idx * 3];
    dst[o + 1] = palette[idx * 3 + 1];
    dst[o + 2] = palette[idx * 3 + 2];
    dst[o + 3] = trns && idx < trns.length ? trns[idx] : 255;
  }
  return { width, height, colorType, depth, components: outComps, samples: out };
}

// Decoded PNG -> RGBA bytes (grey replicated, alpha 255 where the file has none).
function pngToRGBA({ width, height, components, samples }) {
  const n = width * height;
  if (components === 4) return samples;
  const rgba = new Uint8Array(n * 4);
  for (let i = 0; i < n; i++) {
    const o = i * 4;
    if (components === 1 || components === 2) {
      const v = samples[i * components];
      rgba[o] = v; rgba[o + 1] = v; rgba[o + 2] = v;
      rgba[o + 3] = components === 2 ? samples[i * 2 + 1] : 255;
    } else {
      rgba[o] = samples[i * 3]; rgba[o + 1] = samples[i * 3 + 1]; rgba[o + 2] = samples[i * 3 + 2]; rgba[o + 3] = 255;
    }
  }
  return rgba;
}

// ---- imdecode / imread ----------------------------------------------------------------------------------
function sniff(b) {
  const at = (i, s) => s.split('').every((ch, k) => b[i + k] === ch.charCodeAt(0));
  if (PNG_SIG.every((v, i) => b[i] === v)) return 'png';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (at(0, 'GIF8')) return 'gif';
  if (at(0, 'BM')) return 'bmp';
  if (at(0, 'RIFF') && at(8, 'WEBP')) return 'webp';
  if (at(4, 'ftypavif')) return 'avif';
  return null;
}

// The platform's decoder: createImageBitmap (browsers, workers), read back through a 2d canvas.
async function decodeWithPlatform(bytes, mime) {
  if (typeof createImageBitmap !== 'function') return null;
  const bitmap = await createImageBitmap(new Blob([bytes], { type: mime }), { premultiplyAlpha: 'none', colorSpaceConversion: 'none' });
  try {
    const ctx = scratchContext(bitmap.width, bitmap.height);
    ctx.drawImage(bitmap, 0, 0);
    return ctx.getImageData(0, 0, bitmap.width, bitmap.height);
  } finally {
    bitmap.close();
  }
}

// A caller's decoder returns {data, width, height} with 1, 3 or 4 bytes per pixel (RGB order).
function fromDecoder(result) {
  const { data, width, height } = result ?? {};
  if (!Number.isInteger(width) || !Number.isInteger(height) || !ArrayBuffer.isView(data)) {
    throw new MXNetError('imdecode: the decoder must return {data, width, height} with data a Uint8Array or Uint8ClampedArray');
  }
  const c = data.length / (width * height);
  if (![1, 3, 4].includes(c)) throw new MXNetError(`imdecode: the decoder gave ${data.length} bytes for ${width} x ${height} pixels (1, 3 or 4 per pixel expected)`);
  if (c === 4) return data;
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    rgba[i * 4] = data[i * c];
    rgba[i * 4 + 1] = data[i * c + (c === 3 ? 1 : 0)];
    rgba[i * 4 + 2] = data[i * c + (c === 3 ? 2 : 0)];
    rgba[i * 4 + 3] = 255;
  }
  return rgba;
}

async function bufferBytes(buf) {
  if (buf instanceof NDArray) {
    if (buf.dtype !== 'uint8') throw new MXNetError(`imdecode: an NDArray buffer must be uint8, got ${buf.dtype}`);
    return buf.toTypedArray();
  }
  if (typeof buf === 'string' || buf instanceof URL) {
    throw new MXNetError('imdecode takes the bytes of an image (Uint8Array, ArrayBuffer, Blob, Response or uint8 NDArray); use imread for a path or URL');
  }
  return readBytes(buf);
}

// imdecode(buf, flag = 1, to_rgb = true, out = null, {decoder}) -> Promise<NDArray (H, W, 3) or
// (H, W, 1) uint8>: flag 1 colour, 0 grey; to_rgb false gives OpenCV's BGR order. `decoder`
// (bytes, mimeType) -> {data, width, height} (or a promise of it) decodes what the platform
// cannot (JPEG in Node, e.g. through sharp or jpeg-js).
export async function imdecode(...args) {
  const a = bind('imdecode', args);
  return decodeBytes(await bufferBytes(a.buf), a, 'imdecode');
}

async function decodeBytes(bytes, a, where) {
  const { flag, toRgb, out, decoder } = a;
  if (flag !== 0 && flag !== 1) throw new MXNetError(`${where}: flag must be 1 (colour) or 0 (grey), got ${flag}`);
  const channels = flag === 1 ? 3 : 1;
  const kind = sniff(bytes);
  let pixels;
  if (kind === 'png') {
    const png = await decodePNG(bytes);
    pixels = { data: pngToRGBA(png), width: png.width, height: png.height };
  } else {
    const mime = kind ? `image/${kind}` : '';
    let decoded = null;
    if (decoder) decoded = { ...(await decoder(bytes, mime)) };
    if (decoded) {
      pixels = { data: fromDecoder(decoded), width: decoded.width, height: decoded.height };
    } else {
      try {
        pixels = await decodeWithPlatform(bytes, mime);
      } catch (e) {
        throw new MXNetError(`${where}: cannot decode the ${kind ? kind.toUpperCase() : 'unrecognised'} image (${bytes.length} bytes): ${e?.message ?? e}`);
      }
      if (!pixels) {
        throw new MXNetError(`${where}: ${kind ? `no ${kind.toUpperCase()} decoder here` : 'not a PNG, JPEG, GIF, BMP, WebP or AVIF image'}`
          + ' (PNG decodes everywhere, other formats where createImageBitmap exists); pass {decoder: async (bytes) => ({data, width, height})}');
      }
    }
  }
  const img = rgbaToNDArray(pixels.data, pixels.width, pixels.height, channels, !toRgb);
  if (out === null || out === undefined) return img;
  try {
    img.copyto(out);
  } finally {
    img.dispose();
  }
  return out;
}

// imread(filename, flag = 1, to_rgb = true, out = null, {decoder, onProgress, signal, requestInit,
// fetch}) -> Promise<NDArray>: reads a path (Node) or URL (io.mjs readBytes), then imdecode.
export async function imread(...args) {
  const a = bind('imread', args);
  return decodeBytes(await readBytes(a.filename, readOptions(a, 'imread')), a, 'imread');
}

// ---- resizing and cropping (image.py) ---------------------------------------------------------------------
function hwc(src, where) {
  if (!(src instanceof NDArray) || (src.ndim !== 3 && src.ndim !== 4)) {
    throw new MXNetError(`${where} takes an (H, W, C) image NDArray, got ${src instanceof NDArray ? `shape (${src.shape.join(', ')})` : String(src)}`);
  }
  return src.shape;
}

// imresize(src, w, h, interp = 1, out = null): OpenCV's resize to w x h (_image_resize; MXNet's
// _cvimresize).
export function imresize(...args) {
  const { src, w, h, interp, out } = bind('imresize', args);
  hwc(src, 'imresize');
  return run('_image_resize', [src], { size: [w, h], interp }, out ?? undefined);
}

// resize_short(src, size, interp = 2): the shorter edge resized to size, the longer in proportion
// (integer division, as Python's //).
export function resize_short(...args) {
  const { src, size, interp } = bind('resize_short', args);
  const [h, w] = hwc(src, 'resize_short');
  const [newH, newW] = h > w ? [Math.floor((size * h) / w), size] : [size, Math.floor((size * w) / h)];
  return imresize(src, newW, newH, T.getInterpMethod(interp, [h, w, newH, newW]));
}

// fixed_crop(src, x0, y0, w, h, size = null, interp = 2): src[y0:y0+h, x0:x0+w], resized to size (w, h).
export function fixed_crop(...args) {
  const a = bind('fixed_crop', args);
  hwc(a.src, 'fixed_crop');
  return T.fixedCrop(a.src, a.x0, a.y0, a.w, a.h, a.size === null ? null : pairOf(a.size), a.interp);
}
const pairOf = (s) => (typeof s === 'number' ? [s, s] : Array.from(s));

// center_crop(src, size, interp = 2) -> [crop, [x0, y0, w, h]]: the centred crop of size (w, h),
// upsampled when the image is smaller.
export function center_crop(...args) {
  const a = bind('center_crop', args);
  return T.centerCrop(a.src, pairOf(a.size), a.interp);
}

// random_crop(src, size, interp = 2) -> [crop, [x0, y0, w, h]]: a crop at a random place (the
// library's seeded stream, mx.random.seed).
export function random_crop(...args) {
  const a = bind('random_crop', args);
  const [h, w] = hwc(a.src, 'random_crop');
  const size = pairOf(a.size);
  const [newW, newH] = T.scaleDown([w, h], size);
  const x0 = randint(0, w - newW), y0 = randint(0, h - newH);
  return [T.fixedCrop(a.src, x0, y0, newW, newH, size, a.interp), [x0, y0, newW, newH]];
}
function randint(lo, hi) {
  const u = run('_random_uniform', [], { low: 0, high: 1, shape: [1], dtype: 'float64' });
  try {
    return lo + Math.min(hi - lo, Math.floor(u.toTypedArray()[0] * (hi - lo + 1)));
  } finally {
    u.dispose();
  }
}

// random_size_crop(src, size, area, ratio, interp = 2) -> [crop, [x0, y0, w, h]]
export function random_size_crop(...args) {
  const a = bind('random_size_crop', args);
  hwc(a.src, 'random_size_crop');
  const area = typeof a.area === 'number' ? a.area : Array.from(a.area);
  return T.randomSizeCrop(a.src, pairOf(a.size), area, Array.from(a.ratio), a.interp);
}

// scale_down(src_size, size): the crop (w, h) shrunk to fit an image of src_size (w, h).
export function scale_down(...args) {
  const a = bind('scale_down', args);
  return T.scaleDown(Array.from(a.srcSize), Array.from(a.size));
}

// color_normalize(src, mean, std = null): src -= mean; src /= std, in place on src (as Python's
// -= and /=) and returned. mean and std are NDArrays, numbers or arrays of per-channel numbers
// broadcast over the last axis; src must be floating point.
export function color_normalize(...args) {
  const { src, mean, std } = bind('color_normalize', args);
  if (!(src instanceof NDArray)) throw new MXNetError('color_normalize takes an image NDArray');
  if (!src.dtype.startsWith('float')) {
    throw new MXNetError(`color_normalize: the image must be floating point, got ${src.dtype} (use src.astype('float32') first)`);
  }
  const apply = (v, op, scalarOp) => {
    if (v === null || v === undefined) return;
    if (typeof v === 'number') { run(scalarOp, [src], { scalar: v }, src); return; }
    const arr = v instanceof NDArray ? v : array(Array.from(v), { dtype: src.dtype });
    try {
      run(op, [src, arr], {}, src);
    } finally {
      if (arr !== v) arr.dispose();
    }
  };
  apply(mean, 'broadcast_sub', '_minus_scalar');
  apply(std, 'broadcast_div', '_div_scalar');
  return src;
}

// camelCase names (js-api.md's rule for snake_case Python names)
export const resizeShort = resize_short;
export const fixedCrop = fixed_crop;
export const centerCrop = center_crop;
export const randomCrop = random_crop;
export const randomSizeCrop = random_size_crop;
export const scaleDown = scale_down;
export const colorNormalize = color_normalize;
