// Image classification with the model zoo's ResNet-18 v1, as MXNet's tutorials do it in Python:
//
//   net = vision.resnet18_v1(pretrained=True)
//   img = transform(mx.image.imread('cat.jpg'))          # Resize(256), CenterCrop(224), ToTensor, Normalize
//   prob = net(img.expand_dims(0)).softmax()
//
// Run: node examples/resnet_imports.mjs [image.ppm] [--params <file | directory | URL>] [--synset synset.txt]
//   image     a PPM/PGM file (P6, P5, P3, P2); without one, a generated test pattern. There is no
//             JPEG/PNG decoder in this package: convert first (`convert cat.jpg cat.ppm`, or
//             `ffmpeg -i cat.jpg cat.ppm`).
//   --params  MXNet's resnet18_v1-a0666292.params (from MXNet's model store, unzipped): the file
//             itself, the directory holding it, or a URL of either. Without it the weights are
//             random (the top-5 is then meaningless, the timing is not).
//   --synset  a text file with one ImageNet class name per line (MXNet's synset.txt) to print names.
import * as mx from 'mxnet-wasm';
import { readFileSync } from 'node:fs';

const { nd, gluon } = mx;
const { vision } = gluon.model_zoo;
const { transforms } = gluon.data.vision;

// ---- command line ---------------------------------------------------------------------------------
const args = process.argv.slice(2);
const opts = { image: null, params: null, synset: null };
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--params') opts.params = args[++i];
  else if (args[i] === '--synset') opts.synset = args[++i];
  else if (args[i] === '-h' || args[i] === '--help') {
    console.log('usage: node examples/resnet_imports.mjs [image.ppm] [--params <file | directory | URL>] [--synset synset.txt]');
    process.exit(0);
  } else opts.image = args[i];
}

// ---- the image: PPM/PGM -> HWC uint8 (MXNet's image layout) -------------------------------------------
function readNetpbm(bytes, file) {
  const magic = String.fromCharCode(bytes[0], bytes[1]);
  if (!['P6', 'P5', 'P3', 'P2'].includes(magic)) {
    const kind = bytes[0] === 0xff && bytes[1] === 0xd8 ? 'JPEG' : bytes[0] === 0x89 && bytes[1] === 0x50 ? 'PNG' : 'not PPM/PGM';
    throw new Error(`${file}: ${kind}. This example reads PPM/PGM only (no image decoder is bundled); convert it first, `
      + `e.g. \`convert ${file} image.ppm\` (ImageMagick) or \`ffmpeg -i ${file} image.ppm\``);
  }
  // header: magic, width, height, maxval, separated by whitespace and # comments
  let pos = 2;
  const fields = [];
  while (fields.length < 3) {
    while (/\s/.test(String.fromCharCode(bytes[pos]))) pos++;
    if (bytes[pos] === 0x23) { while (bytes[pos] !== 0x0a && pos < bytes.length) pos++; continue; }
    let s = '';
    while (pos < bytes.length && !/\s/.test(String.fromCharCode(bytes[pos]))) s += String.fromCharCode(bytes[pos++]);
    fields.push(Number(s));
  }
  const [w, h, maxval] = fields;
  const channels = magic === 'P6' || magic === 'P3' ? 3 : 1;
  const n = w * h * channels;
  const raw = new Float64Array(n);
  if (magic === 'P6' || magic === 'P5') {
    pos++; // the single whitespace after maxval
    const wide = maxval > 255;
    for (let i = 0; i < n; i++) raw[i] = wide ? (bytes[pos + 2 * i] << 8) | bytes[pos + 2 * i + 1] : bytes[pos + i];
  } else {
    const text = new TextDecoder().decode(bytes.subarray(pos)).replace(/#[^\n]*/g, '');
    const vals = text.trim().split(/\s+/).map(Number);
    for (let i = 0; i < n; i++) raw[i] = vals[i];
  }
  const rgb = new Uint8Array(w * h * 3);
  for (let p = 0; p < w * h; p++) {
    for (let c = 0; c < 3; c++) rgb[p * 3 + c] = Math.round((raw[p * channels + (channels === 3 ? c : 0)] * 255) / maxval);
  }
  return { data: rgb, width: w, height: h };
}
// A 320x240 test pattern (color gradients and a disc) when no image is given.
function testPattern() {
  const width = 320, height = 240, data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const disc = (x - 160) ** 2 + (y - 120) ** 2 < 60 ** 2;
      const o = (y * width + x) * 3;
      data[o] = disc ? 230 : (x * 255) / width;
      data[o + 1] = disc ? 40 : (y * 255) / height;
      data[o + 2] = disc ? 40 : 128;
    }
  }
  return { data, width, height };
}

const t0 = performance.now();
let img;
try {
  img = opts.image ? readNetpbm(new Uint8Array(readFileSync(opts.image)), opts.image) : testPattern();
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
console.log(`image: ${opts.image ?? 'generated test pattern'} (${img.width}x${img.height})`);

// ---- the network ------------------------------------------------------------------------------------
// vision.resnet18_v1(pretrained=True, root=...): a Promise in JS (reading is async); root is the
// file, its directory or a URL.
let net;
const tLoad = performance.now();
if (opts.params) {
  net = await vision.resnet18_v1({ pretrained: true, root: opts.params });
  console.log(`parameters: ${opts.params} (${(performance.now() - tLoad).toFixed(1)} ms)`);
} else {
  net = vision.resnet18_v1();
  net.initialize(new mx.init.Xavier());
  console.log(`parameters: random (Xavier) -- pass --params resnet18_v1-a0666292.params for real predictions`);
}
net.hybridize({ static_alloc: true, static_shape: true });

// ---- MXNet's ImageNet transform: short side 256, center 224x224, [0, 1], per-channel normalize ----
const transform = new transforms.Compose([
  new transforms.Resize(256, { keepRatio: true }),
  new transforms.CenterCrop(224),
  new transforms.ToTensor(),
  new transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
]);
const tPre = performance.now();
const x = mx.tidy(() => transform(nd.array(img.data, { shape: [img.height, img.width, 3], dtype: 'uint8' })).expandDims(0));
const preMs = performance.now() - tPre;

// ---- classify and time -------------------------------------------------------------------------------
const tFirst = performance.now();
const prob = mx.tidy(() => nd.softmax(net(x)));
const firstMs = performance.now() - tFirst;
const runs = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  mx.tidy(() => { net(x).toTypedArray(); });
  runs.push(performance.now() - t);
}
runs.sort((a, b) => a - b);

const p = prob.toTypedArray();
const top = Array.from(p.keys()).sort((a, b) => p[b] - p[a]).slice(0, 5);
const labels = opts.synset ? readFileSync(opts.synset, 'utf8').split('\n').map((l) => l.trim()) : null;
console.log('top-5:');
for (const k of top) console.log(`  ${String(k).padStart(4)}  ${p[k].toFixed(4)}  ${labels ? labels[k] : `class ${k}`}`);
console.log(`timing: preprocess ${preMs.toFixed(1)} ms, first forward (builds the graph) ${firstMs.toFixed(1)} ms, `
  + `forward median of 5 ${runs[2].toFixed(1)} ms, total ${(performance.now() - t0).toFixed(1)} ms `
  + `(${mx.features().tier}, ${mx.getNumThreads()} thread${mx.getNumThreads() > 1 ? 's' : ''})`);
x.dispose();
prob.dispose();
net.dispose();
