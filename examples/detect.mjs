// Object detection with an SSD exported from GluonCV, as GluonCV's demo does it in Python:
//
//   net = gluon.SymbolBlock.imports('ssd_512_resnet50_v1-symbol.json', ['data'], 'ssd_512_resnet50_v1-0000.params')
//   x, img = gcv.data.transforms.presets.ssd.load_test('street.png', short=512)
//   class_ids, scores, boxes = net(x)      # after the graph's own box_nms
//
// Run: node examples/detect.mjs [image.png] [--symbol file --params file] [--classes names.txt] [--threshold 0.5]
//   image       a PNG (or PPM/PGM) file; without one, a generated test picture
//   --symbol / --params   your exported pair; without them the SSD symbol of ../shared/models/gluon-exports
//               runs on random weights (the boxes are then meaningless, the pipeline is not)
//   --classes   one class name per line (COCO's or VOC's) to print names
//   --threshold the score below which detections are not printed (default 0.5; with random
//               weights the top 10 are printed whatever their scores)
import * as mx from 'mxnet-wasm';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const { nd, sym, gluon } = mx;
const here = path.dirname(fileURLToPath(import.meta.url));

// ---- command line -------------------------------------------------------------------------------
const args = process.argv.slice(2);
const opts = { image: null, symbol: null, params: null, classes: null, threshold: 0.5 };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--symbol') opts.symbol = args[++i];
  else if (a === '--params') opts.params = args[++i];
  else if (a === '--classes') opts.classes = args[++i];
  else if (a === '--threshold') opts.threshold = Number(args[++i]);
  else if (a === '-h' || a === '--help') {
    console.log('usage: node examples/detect.mjs [image.png] [--symbol file --params file] [--classes names.txt] [--threshold 0.5]');
    process.exit(0);
  } else opts.image = a;
}
const SIDE = 512; // ssd_512's input

// ---- the picture: HWC uint8 ---------------------------------------------------------------------
let img;
if (opts.image) {
  img = await mx.image.imread(opts.image); // PNG decoded in JS; other formats: convert first
} else {
  // a test picture: two bright rectangles on a dark background
  const [h, w] = [360, 480];
  const px = new Uint8Array(h * w * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 3;
      const a = x > 60 && x < 200 && y > 80 && y < 300, b = x > 260 && x < 430 && y > 40 && y < 160;
      px[o] = a ? 220 : b ? 40 : 25; px[o + 1] = a ? 60 : b ? 200 : 25; px[o + 2] = a ? 50 : b ? 230 : 30;
    }
  }
  img = nd.array(px, { shape: [h, w, 3], dtype: 'uint8' });
}
const [H, W] = img.shape;

// ---- the network ----------------------------------------------------------------------------------
const t0 = performance.now();
let net, random = false;
if (opts.symbol) {
  if (!opts.params) throw new Error('--symbol needs --params');
  net = await gluon.SymbolBlock.imports(opts.symbol, ['data'], opts.params);
} else {
  const file = path.join(here, '../../shared/models/gluon-exports/ssd_512_resnet50_v1-symbol.json');
  if (!existsSync(file)) {
    console.error(`no model: pass --symbol and --params (the shared SSD symbol ${file} is not here)`);
    process.exit(2);
  }
  net = new gluon.SymbolBlock(await sym.load(file), [sym.var('data')]);
  // random weights as MXNet's initialize() draws them; BatchNorm variances 1
  net.initialize(new mx.init.Mixed(['.*running_var$', '.*'], [new mx.init.One(), new mx.init.Uniform(0.07)]));
  random = true;
}
net.hybridize({ static_alloc: true });
const loadMs = performance.now() - t0;

// ---- preprocessing: resize to 512 x 512, ToTensor, ImageNet normalization (GluonCV's SSD preset) ----
const t1 = performance.now();
const { transforms } = gluon.data.vision;
const x = mx.tidy(() => {
  const resized = mx.image.imresize(img, SIDE, SIDE, 1); // bilinear
  const t = new transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])(new transforms.ToTensor()(resized));
  return t.expandDims(0);
});
const preMs = performance.now() - t1;

// ---- detection ------------------------------------------------------------------------------------
const t2 = performance.now();
const [ids, scores, boxes] = net(x);
const id = ids.toTypedArray(), score = scores.toTypedArray(), box = boxes.toTypedArray();
const runMs = performance.now() - t2;

const names = opts.classes ? readFileSync(opts.classes, 'utf8').split('\n').map((s) => s.trim()) : null;
// rows with id -1 are the ones box_nms suppressed; boxes are in the 512 x 512 input's pixels
const kept = [];
for (let i = 0; i < id.length; i++) if (id[i] >= 0) kept.push(i);
kept.sort((a, b) => score[b] - score[a]);
const shown = random ? kept.slice(0, 10) : kept.filter((i) => score[i] >= opts.threshold);
console.log(`image: ${opts.image ?? 'generated test picture'} (${W}x${H}); model: ${opts.symbol ?? 'ssd_512_resnet50_v1 (random weights)'}`);
console.log(`detections: ${kept.length} after NMS, ${shown.length} shown${random ? ' (top 10: random weights)' : ` (score >= ${opts.threshold})`}`);
console.log('class  score   xmin    ymin    xmax    ymax   (pixels of the original image)');
const sx = W / SIDE, sy = H / SIDE;
for (const i of shown) {
  const c = id[i];
  const b = [box[4 * i] * sx, box[4 * i + 1] * sy, box[4 * i + 2] * sx, box[4 * i + 3] * sy].map((v) => v.toFixed(1).padStart(7));
  console.log(`${String(c).padStart(5)}  ${score[i].toFixed(3)} ${b.join(' ')}  ${names ? names[c] ?? '' : ''}`);
}
console.log(`timing: load ${loadMs.toFixed(0)} ms, preprocess ${preMs.toFixed(1)} ms, detect ${runMs.toFixed(0)} ms (${mx.features().tier})`);
for (const a of [ids, scores, boxes, x, img]) a.dispose();
net.dispose();
