// The web demo: loads MXNet files with gluon.SymbolBlock.imports from URLs and from local
// files, and runs them on the page. Served by `node scripts/serve.mjs` (the package at /dist/,
// the real MXNet models at /models/).
import * as mx from 'mxnet-wasm';

const { nd, gluon } = mx;
const $ = (id) => document.getElementById(id);
const MODEL = '../models/mnist-mlp-module/';

$('status').textContent = `mxnet-wasm ${mx.version}, ${mx.features().tier}`;

// ---- 1. the MNIST model -------------------------------------------------------------------------
const net = await gluon.SymbolBlock.imports(`${MODEL}model-symbol.json`, ['data'], `${MODEL}model-0000.params`);
net.hybridize();

const pad = $('pad');
const ctx = pad.getContext('2d');
function clear() {
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, pad.width, pad.height);
  $('prediction').textContent = '–';
  $('probs').innerHTML = '';
  $('latency').textContent = '';
}
clear();
let drawing = false;
const pos = (e) => { const r = pad.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
pad.addEventListener('pointerdown', (e) => { drawing = true; ctx.beginPath(); ctx.moveTo(...pos(e)); });
pad.addEventListener('pointermove', (e) => {
  if (!drawing) return;
  ctx.lineTo(...pos(e));
  ctx.strokeStyle = '#fff';
  ctx.lineWidth = 22;
  ctx.lineCap = 'round';
  ctx.stroke();
});
window.addEventListener('pointerup', () => { drawing = false; });

// The canvas as a 28x28 grey image in 0..1, as the model's inputs (MNIST pixels / 255).
function canvasPixels() {
  const small = document.createElement('canvas');
  small.width = 28;
  small.height = 28;
  const sctx = small.getContext('2d');
  sctx.drawImage(pad, 0, 0, 28, 28);
  const rgba = sctx.getImageData(0, 0, 28, 28).data;
  return Float32Array.from({ length: 784 }, (_, i) => rgba[4 * i] / 255);
}
function showPixels(pixels) {
  const img = ctx.createImageData(28, 28);
  pixels.forEach((v, i) => { const g = Math.round(v * 255); img.data.set([g, g, g, 255], 4 * i); });
  const small = document.createElement('canvas');
  small.width = 28;
  small.height = 28;
  small.getContext('2d').putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(small, 0, 0, pad.width, pad.height);
}

export function classify(pixels) {
  const t0 = performance.now();
  const probs = mx.tidy(() => net(nd.array(pixels, { shape: [1, 1, 28, 28] })));
  const p = Array.from(probs.toTypedArray());
  probs.dispose();
  const ms = performance.now() - t0;
  const best = p.indexOf(Math.max(...p));
  $('prediction').textContent = String(best);
  $('latency').textContent = `(${ms.toFixed(2)} ms)`;
  $('probs').innerHTML = p.map((v) => `<li>${v.toFixed(3)}<span style="width:${Math.round(v * 200)}px"></span></li>`).join('');
  return { best, probs: p };
}

let samples = null;
async function sample() {
  if (!samples) {
    const text = await (await fetch(`${MODEL}07.csv`)).text();
    samples = text.trim().split('\n').map((l) => Float32Array.from(l.split(','), Number));
  }
  const pixels = samples[Math.floor(Math.random() * samples.length)];
  showPixels(pixels);
  return classify(pixels);
}
$('classify').onclick = () => classify(canvasPixels());
$('sample').onclick = sample;
$('clear').onclick = clear;

// ---- 2. a user's own files ---------------------------------------------------------------------------
$('run').onclick = async () => {
  const out = $('byo-out');
  try {
    const symFile = $('symfile').files[0], paramFile = $('paramfile').files[0];
    if (!symFile) throw new Error('pick the -symbol.json file');
    const model = await gluon.SymbolBlock.imports(symFile, ['data'], paramFile ?? null);
    const shape = $('shape').value.split(',').map((s) => Number(s.trim()));
    const x = nd.random.uniform(0, 1, shape);
    model.hybridize();
    let y = model(x);
    const t0 = performance.now();
    y = model(x);
    const ms = performance.now() - t0;
    const outs = Array.isArray(y) ? y : [y];
    out.textContent = `loaded ${model.collectParams().size} parameters; forward ${ms.toFixed(1)} ms\n`
      + outs.map((o, i) => `output ${i}: shape (${o.shape.join(', ')}), first values ${Array.from(o.toTypedArray().slice(0, 5)).map((v) => v.toFixed(4)).join(' ')}`).join('\n');
  } catch (e) {
    out.textContent = `${e.name}: ${e.message}`;
  }
};

for (const id of ['classify', 'sample', 'run']) $(id).disabled = false;
window.demo = { classify, sample, mx, ready: true };
