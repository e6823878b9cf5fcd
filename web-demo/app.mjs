// The web demo: loads MXNet files with gluon.SymbolBlock.imports from URLs and from local
// files, and runs them in a Worker (infer-worker.mjs), which uses the threaded tier when the page
// is cross-origin isolated. Served by `node scripts/serve.mjs` (the package at /dist/, the real
// MXNet models at /models/, COOP/COEP headers on).
const $ = (id) => document.getElementById(id);
const MODEL = '../models/mnist-mlp-module/';

// ---- the inference worker: requests by id ----------------------------------------------------------
const worker = new Worker(new URL('./infer-worker.mjs', import.meta.url), { type: 'module' });
const pending = new Map();
let nextId = 0;
const request = (msg) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  worker.postMessage({ ...msg, id });
});
const started = new Promise((resolve, reject) => {
  worker.onmessage = ({ data: m }) => {
    if (m.type === 'ready') resolve(m);
    else if (m.type === 'error') reject(new Error(m.message));
    else {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.type === 'failed') p.reject(new Error(m.message));
      else p.resolve(m);
    }
  };
  worker.onerror = (e) => reject(new Error(e.message));
});
const info = await started;
const isolated = globalThis.crossOriginIsolated === true;
$('status').textContent = `mxnet-wasm ${info.version}, ${info.features.tier} tier in a worker`
  + (info.features.threads ? `, ${info.features.numThreads} threads` : isolated ? '' : ' (not cross-origin isolated: one thread)');

// ---- 1. the MNIST model -------------------------------------------------------------------------

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

export async function classify(pixels) {
  const { probs: p, ms } = await request({ type: 'classify', pixels });
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
    const shape = $('shape').value.split(',').map((s) => Number(s.trim()));
    out.textContent = (await request({ type: 'run', symbol: symFile, params: paramFile ?? null, shape })).text;
  } catch (e) {
    out.textContent = e.message;
  }
};

for (const id of ['classify', 'sample', 'run']) $(id).disabled = false;
window.demo = { classify, sample, features: info.features, isolated, ready: true };
