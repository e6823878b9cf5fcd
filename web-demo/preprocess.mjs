// Image preprocessing for the web demo, as plain functions over pixel arrays (no DOM, so Node
// tests run them too).
//   mnistDigit: a drawing (white ink on black, any size) as MNIST prepared its digits: the ink's
//     bounding box scaled to fit 20x20 (aspect kept, area-averaged), then placed in a 28x28 field
//     with its centre of mass at the centre (LeCun et al.'s description of MNIST).
//   mnistInput: the same for any picture (dark ink on a light background inverted first).
//   topK: the top classes, with softmax probabilities when the scores are not a distribution.

// Grey levels in 0..1 from RGBA bytes: the red channel for the drawing pad (it draws white on
// black), ITU-R 601 luma (0.299 R + 0.587 G + 0.114 B, as MXNet's imread with flag 0) otherwise.
export function greyOf(rgba, { luma = true } = {}) {
  const n = rgba.length / 4, g = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    g[i] = luma ? (0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2]) / 255 : rgba[4 * i] / 255;
  }
  return g;
}

// The bounding box {x, y, w, h} of the pixels above `threshold`, or null when there are none.
export function inkBox(grey, width, height, threshold = 0.1) {
  let x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (grey[y * width + x] > threshold) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  return x1 < 0 ? null : { x: x0, y: y0, w: x1 - x0 + 1, h: y1 - y0 + 1 };
}

// Area-averaged resampling of the box (bx, by, bw, bh) of a grey image to tw x th: each output
// pixel is the mean of the source area it covers (fractional pixels weighted by their overlap).
export function resampleArea(grey, width, box, tw, th) {
  const out = new Float32Array(tw * th);
  const sx = box.w / tw, sy = box.h / th;
  for (let ty = 0; ty < th; ty++) {
    const ya = box.y + ty * sy, yb = ya + sy;
    for (let tx = 0; tx < tw; tx++) {
      const xa = box.x + tx * sx, xb = xa + sx;
      let sum = 0;
      for (let y = Math.floor(ya); y < Math.ceil(yb); y++) {
        const wy = Math.min(yb, y + 1) - Math.max(ya, y);
        for (let x = Math.floor(xa); x < Math.ceil(xb); x++) {
          const wx = Math.min(xb, x + 1) - Math.max(xa, x);
          sum += wx * wy * grey[y * width + x];
        }
      }
      out[ty * tw + tx] = sum / (sx * sy);
    }
  }
  return out;
}

// An MNIST-style 28x28 digit (Float32Array, 0..1, row-major) from a grey drawing, or null when
// nothing is drawn. Also returns the ink box and where the 20x20-fitted patch went.
export function mnistDigit(grey, width, height, { threshold = 0.1, fit = 20, size = 28 } = {}) {
  const box = inkBox(grey, width, height, threshold);
  if (!box) return null;
  const scale = fit / Math.max(box.w, box.h);
  const tw = Math.max(1, Math.round(box.w * scale)), th = Math.max(1, Math.round(box.h * scale));
  const patch = resampleArea(grey, width, box, tw, th);
  // centre of mass (pixel centres at +0.5), moved to the field's centre (size / 2)
  let m = 0, mx = 0, my = 0;
  for (let y = 0; y < th; y++) {
    for (let x = 0; x < tw; x++) {
      const v = patch[y * tw + x];
      m += v;
      mx += v * (x + 0.5);
      my += v * (y + 0.5);
    }
  }
  const ox = Math.round(size / 2 - mx / m), oy = Math.round(size / 2 - my / m);
  const pixels = new Float32Array(size * size);
  for (let y = 0; y < th; y++) {
    for (let x = 0; x < tw; x++) {
      const X = x + ox, Y = y + oy;
      if (X >= 0 && X < size && Y >= 0 && Y < size) pixels[Y * size + X] = patch[y * tw + x];
    }
  }
  return { pixels, box, offset: [ox, oy], patchSize: [tw, th] };
}

// The preprocessings the own-model panel offers (value -> label). The worker applies them with
// mx.image and Gluon's transforms (infer-worker.mjs), the MNIST one with mnistInput.
export const PREPROCESSING = {
  imagenet: 'ImageNet: short side to size / 0.875, centre crop, ToTensor + Normalize(ImageNet mean, std)',
  unit: 'resize, ToTensor (RGB / 255)',
  raw: 'resize, raw 0..255',
  mnist: 'MNIST digit (grey, white on black, fitted to 20x20 and centred by mass)',
};
export const IMAGENET_MEAN = [0.485, 0.456, 0.406];
export const IMAGENET_STD = [0.229, 0.224, 0.225];

// An MNIST input (784 values in 0..1) from grey levels (0..1) of any size: a light background
// (mean above 0.5: dark ink on paper) is inverted first, then mnistDigit. Throws on a blank image.
export function mnistInput(grey, width, height) {
  let g = grey;
  const mean = g.reduce((s, v) => s + v, 0) / g.length;
  if (mean > 0.5) g = g.map((v) => 1 - v);
  const d = mnistDigit(g, width, height);
  if (!d) throw new Error('the image is blank: no ink to centre');
  return d.pixels;
}

// The top k of scores as [{index, score, prob}], with softmax probabilities when the scores are
// not already a distribution (non-negative, summing to 1 within 1e-3).
export function topK(scores, k = 5) {
  const s = Array.from(scores);
  const isDist = s.every((v) => v >= 0) && Math.abs(s.reduce((a, b) => a + b, 0) - 1) < 1e-3;
  let probs = s;
  if (!isDist) {
    const max = Math.max(...s);
    const e = s.map((v) => Math.exp(v - max));
    const z = e.reduce((a, b) => a + b, 0);
    probs = e.map((v) => v / z);
  }
  return s.map((score, index) => ({ index, score, prob: probs[index] }))
    .sort((a, b) => b.score - a.score).slice(0, k);
}
