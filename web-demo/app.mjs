// The web demo: the digit model trained at build time (scripts/train-demo-model.mjs, served at
// model/) and a user's own exported files, both loaded with gluon.SymbolBlock.imports and run in
// a Worker (infer-worker.mjs), which uses the threaded tier when the page is cross-origin isolated.
// Served by `node scripts/serve.mjs` (http://127.0.0.1:8080/). The page's state is window.demo
// (for people and for tests/js/web_demo.test.mjs).
import { greyOf, mnistDigit, topK, PREPROCESSING } from './preprocess.mjs';

const $ = (id) => document.getElementById(id);
const MODEL = new URL('model/', location.href);
const demo = { ready: false, error: null, features: null, isolated: globalThis.crossOriginIsolated === true };
window.demo = demo;

// ---- status and errors --------------------------------------------------------------------------------
function setStatus(text, kind = 'ok') {
  const s = $('status');
  s.textContent = text;
  s.className = `status ${kind}`;
}
function showError(id, message) {
  const p = $(id);
  p.textContent = message;
  p.hidden = !message;
}

// ---- the inference worker: requests by id ---------------------------------------------------------------
const worker = new Worker(new URL('./infer-worker.mjs', import.meta.url), { type: 'module' });
const pending = new Map();
let nextId = 0;
// A failed request rejects with an Error whose message is the worker's (the cause in .cause).
const request = (msg, transfer = []) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  worker.postMessage({ ...msg, id }, transfer);
});
const started = new Promise((resolve, reject) => {
  worker.onmessage = ({ data: m }) => {
    if (m.type === 'ready') { resolve(m); return; }
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.type === 'failed') p.reject(Object.assign(new Error(m.message), { cause: m.cause }));
    else p.resolve(m);
  };
  worker.onerror = (e) => reject(new Error(`the inference worker failed to start: ${e.message ?? 'see the console'}`
    + ' (is the package built? bash scripts/build.sh wasm)'));
});

// ---- 1. the digit model ---------------------------------------------------------------------------------
const pad = $('pad');
const ctx = pad.getContext('2d', { willReadFrequently: true });
function clear() {
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, pad.width, pad.height);
  $('prediction').textContent = '–';
  $('probs').innerHTML = '';
  $('latency').textContent = '';
  drawGrey($('preview'), new Float32Array(784), 28);
}
let drawing = false, autoTimer = 0;
const pos = (e) => { const r = pad.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
pad.addEventListener('pointerdown', (e) => {
  drawing = true;
  clearTimeout(autoTimer);
  ctx.strokeStyle = '#fff';
  ctx.lineWidth = Number($('pen').value);
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.beginPath();
  ctx.moveTo(...pos(e));
  ctx.lineTo(...pos(e)); // a click leaves a dot
  ctx.stroke();
});
pad.addEventListener('pointermove', (e) => {
  if (!drawing) return;
  ctx.lineTo(...pos(e));
  ctx.stroke();
});
window.addEventListener('pointerup', () => {
  if (!drawing) return;
  drawing = false;
  // classify once the hand rests
  if (demo.ready) autoTimer = setTimeout(() => classifyPad().catch(() => {}), 400);
});

// A grey image (0..1, size x size) drawn on a canvas, scaled up without smoothing.
function drawGrey(canvas, pixels, size) {
  const small = new OffscreenCanvas(size, size);
  const img = new ImageData(size, size);
  pixels.forEach((v, i) => {
    const g = Math.round(Math.min(1, Math.max(0, v)) * 255);
    img.data.set([g, g, g, 255], 4 * i);
  });
  small.getContext('2d').putImageData(img, 0, 0);
  const c = canvas.getContext('2d');
  c.imageSmoothingEnabled = false;
  c.drawImage(small, 0, 0, canvas.width, canvas.height);
}

// Classifies 784 MNIST-prepared pixels (0..1): {best, probs, ms}.
async function classify(pixels) {
  const { outputs, ms } = await request({ type: 'predict', slot: 'digits', input: Float32Array.from(pixels), shape: [1, 1, 28, 28] });
  const top = topK(outputs[0].first, 10);
  const probs = new Array(10);
  for (const t of top) probs[t.index] = t.prob;
  const best = top[0].index;
  drawGrey($('preview'), pixels, 28);
  $('prediction').textContent = String(best);
  $('latency').textContent = `(${Math.round(100 * top[0].prob)}%, ${ms.toFixed(2)} ms)`;
  $('probs').innerHTML = probs.map((v) => `<li>${v.toFixed(3)}<span style="width:${Math.round(v * 200)}px"></span></li>`).join('');
  return { best, probs, ms };
}

// The pad's drawing, prepared as MNIST's digits, classified.
async function classifyPad() {
  const { data } = ctx.getImageData(0, 0, pad.width, pad.height);
  const d = mnistDigit(greyOf(data, { luma: false }), pad.width, pad.height);
  if (!d) {
    $('prediction').textContent = '–';
    $('latency').textContent = '(draw a digit first)';
    return null;
  }
  return { ...(await classify(d.pixels)), pixels: d.pixels };
}

let tests = null;
// A held-out digit (one the model did not train on) drawn on the pad and classified: {label, best, ...}.
async function sample(k) {
  if (!tests) {
    const res = await fetch(new URL('test-digits.json', MODEL));
    if (!res.ok) throw new Error(`cannot download model/test-digits.json: HTTP ${res.status}`);
    const t = await res.json();
    const bytes = Uint8Array.from(atob(t.pixels), (c) => c.charCodeAt(0));
    tests = t.labels.map((label, i) => ({
      label, pixels: Float32Array.from(bytes.subarray(i * 784, (i + 1) * 784), (v) => v / 255),
    }));
  }
  const { label, pixels } = tests[k ?? Math.floor(Math.random() * tests.length)];
  drawGrey(pad, pixels, 28);
  const r = await classify(pixels);
  $('latency').textContent += ` — a held-out ${label}`;
  return { label, ...r };
}

$('classify').onclick = () => classifyPad().catch((e) => showError('digits-error', e.message));
$('sample').onclick = () => sample().catch((e) => showError('digits-error', e.message));
$('clear').onclick = clear;
clear();

// ---- 2. a user's own files --------------------------------------------------------------------------------
for (const [value, label] of Object.entries(PREPROCESSING)) $('prep').append(new Option(label, value));
let own = null, labels = null;

const fmtShape = (s) => `(${s.join(', ')})`;
const parseShape = (text) => {
  const shape = text.replace(/[()[\]\s]/g, '').split(',').filter(Boolean).map(Number);
  if (!shape.length || !shape.every((v) => Number.isInteger(v) && v > 0)) {
    throw new Error(`input shape '${text}': give positive integers separated by commas, e.g. 1,3,224,224`);
  }
  return shape;
};

async function loadOwn() {
  showError('byo-error', '');
  $('byo-model').hidden = true;
  own = null;
  $('run').disabled = true;
  $('byo-top').innerHTML = '';
  $('byo-out').textContent = '';
  $('byo-preview').getContext('2d').clearRect(0, 0, 112, 112);
  const symbol = $('symfile').files[0] ?? null, params = $('paramfile').files[0] ?? null;
  const r = await request({ type: 'load', slot: 'own', symbol, params });
  const labelFile = $('labelfile').files[0];
  labels = labelFile ? (await labelFile.text()).split(/\r?\n/).filter((l) => l.trim())
    .map((l) => l.replace(/^n\d{8}\s+/, '').trim()) : null;
  own = r;
  if (r.inputShape) {
    $('shape').value = r.inputShape.join(',');
    const [, c, h, w] = r.inputShape;
    $('prep').value = (c === 1 && h === 28 && w === 28) || (r.inputShape.length === 2 && r.inputShape[1] === 784) ? 'mnist'
      : 'imagenet';
  }
  $('byo-model').textContent = `loaded ${r.nParams} parameters (${(r.bytes / 1048576).toFixed(2)} MB) in ${r.ms.toFixed(0)} ms; `
    + `input ${r.inputs.join(', ')} ${r.inputShape ? `${fmtShape(r.inputShape)}, inferred from ${r.shapeSource}`
      : `shape not inferred (${r.shapeSource}): enter it`}${labels ? `; ${labels.length} class names` : ''}`;
  $('byo-model').hidden = false;
  $('run').disabled = false;
  return r;
}

// The chosen input for `shape`: {image: ImageBitmap, prep} for the worker to preprocess with
// mx.image (transferred), or null for random data. Shapes an image cannot fill are refused here.
async function ownInput(shape) {
  const source = document.querySelector('input[name=source]:checked').value;
  if (source === 'random') return null;
  const prep = $('prep').value;
  const flat = shape.length === 2;
  if (!flat && shape.length !== 4) throw new Error(`an image input needs a 4-d shape (N, C, H, W), not ${fmtShape(shape)}`);
  if (flat && !(prep === 'mnist' && shape[1] === 784)) {
    throw new Error(`an image cannot fill the input ${fmtShape(shape)}: give (N, C, H, W), or 784 inputs with the MNIST preprocessing`);
  }
  const [, c, h, w] = flat ? [shape[0], 1, 28, 28] : shape;
  if (c !== 1 && c !== 3) throw new Error(`an image gives 1 (grey) or 3 (RGB) channels; the input has ${c}`);
  if (prep === 'mnist' && (h !== 28 || w !== 28)) throw new Error(`the MNIST preprocessing makes 28x28 inputs; the input is ${h}x${w}`);
  if (source === 'pad') return { image: await createImageBitmap(pad), prep, name: 'the drawing' };
  const file = $('imagefile').files[0];
  if (!file) throw new Error('pick an image file (or choose random data or the drawing)');
  try {
    return { image: await createImageBitmap(file), prep, name: file.name };
  } catch (e) {
    throw new Error(`${file.name} is not an image the browser can decode (${e.message})`, { cause: e });
  }
}

// The model's input as the worker made it (its first channel, min-max scaled) on the preview canvas.
function drawPreview({ plane, w, h }) {
  let lo = Infinity, hi = -Infinity;
  for (const v of plane) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const prev = new OffscreenCanvas(w, h), img = new ImageData(w, h);
  plane.forEach((v, i) => {
    const q = Math.round(((v - lo) / (hi - lo || 1)) * 255);
    img.data.set([q, q, q, 255], 4 * i);
  });
  prev.getContext('2d').putImageData(img, 0, 0);
  const pc = $('byo-preview').getContext('2d');
  pc.imageSmoothingEnabled = false;
  pc.clearRect(0, 0, 112, 112);
  pc.drawImage(prev, 0, 0, 112, 112);
}

// Detector outputs: three of shapes (N, K, 1) class ids, (N, K, 1) scores and (N, K, 4) boxes
// (xmin, ymin, xmax, ymax in input pixels); rows with id < 0 are the ones NMS suppressed. The kept
// ones of sample 0, best first; null when the outputs are not a detector's.
function detections(outputs) {
  if (outputs.length !== 3) return null;
  const [ids, scores, boxes] = outputs;
  const k = ids.shape.length === 3 ? ids.shape[1] : -1;
  if (k < 0 || ids.shape[2] !== 1 || scores.shape.length !== 3 || scores.shape[1] !== k || scores.shape[2] !== 1
    || boxes.shape.length !== 3 || boxes.shape[1] !== k || boxes.shape[2] !== 4) return null;
  const out = [];
  for (let i = 0; i < k; i++) {
    if (ids.first[i] < 0) continue;
    out.push({ id: Math.round(ids.first[i]), score: scores.first[i], box: boxes.first.slice(4 * i, 4 * i + 4) });
  }
  return out.sort((a, b) => b.score - a.score);
}

// The boxes over the preview (the input scaled to 112 x 112), in red.
function drawBoxes(dets, shape) {
  const [h, w] = shape.length === 4 ? [shape[2], shape[3]] : [112, 112];
  const c = $('byo-preview').getContext('2d');
  c.strokeStyle = 'rgb(255, 0, 0)';
  c.lineWidth = 2;
  for (const d of dets) {
    const [x0, y0, x1, y1] = d.box;
    c.strokeRect((x0 / w) * 112, (y0 / h) * 112, ((x1 - x0) / w) * 112, ((y1 - y0) / h) * 112);
  }
}

async function runOwn() {
  showError('byo-error', '');
  $('byo-top').innerHTML = '';
  $('byo-out').textContent = '';
  if (!own) throw new Error('load a model first');
  const shape = parseShape($('shape').value);
  const input = await ownInput(shape);
  const r = await request({ type: 'predict', slot: 'own', shape, image: input?.image, prep: input?.prep },
    input ? [input.image] : []);
  if (r.preview) drawPreview(r.preview);
  else $('byo-preview').getContext('2d').clearRect(0, 0, 112, 112);
  const dets = detections(r.outputs);
  let top;
  if (dets) {
    // a detector's (ids, scores, boxes), as GluonCV's SSD / YOLO / Faster R-CNN exports give them
    // after their NMS: the five best kept boxes, listed and drawn over the input
    top = dets.slice(0, 5);
    drawBoxes(top, shape);
    $('byo-top').innerHTML = top.map((d) => `<li><strong>${labels?.[d.id] ?? `class ${d.id}`}</strong> `
      + `${(100 * d.score).toFixed(1)}% <span class="note">box [${d.box.map((v) => v.toFixed(1)).join(', ')}]</span></li>`).join('');
  } else {
    const [o] = r.outputs;
    top = topK(o.first, Math.min(5, o.first.length));
    $('byo-top').innerHTML = top.map((t) => `<li><strong>${labels?.[t.index] ?? `class ${t.index}`}</strong> `
      + `${(100 * t.prob).toFixed(1)}% <span class="note">(score ${t.score.toFixed(4)})</span></li>`).join('');
  }
  demo.lastRun = { input: r.input ?? null, outputs: r.outputs, top, detections: dets };
  $('byo-out').textContent = `${r.prepMs !== undefined ? `preprocessing ${r.prepMs.toFixed(1)} ms (mx.image), ` : ''}forward ${r.ms.toFixed(1)} ms (${demo.features.tier}${demo.features.threads
    ? `, ${demo.features.numThreads} threads` : ''}) on ${input ? input.name : 'random data'} ${fmtShape(shape)}\n`
    + r.outputs.map((x, i) => `output ${i}: shape ${fmtShape(x.shape)}`).join('\n');
  return { ...r, top, labels: top.map((t) => labels?.[t.index] ?? null) };
}
$('load').onclick = () => loadOwn().catch((e) => showError('byo-error', e.message));
$('run').onclick = () => runOwn().catch((e) => showError('byo-error', e.message));

// Another digit model for panel 1 (the training panel's exported pair): symbol and params as Blobs.
async function useDigitModel(symbol, params, label) {
  const r = await request({ type: 'load', slot: 'digits', symbol, params });
  demo.model = { label, loadMs: r.ms, bytes: r.bytes };
  $('model-info').textContent = `Now using ${label}.`;
  setStatus(`${demo.runtime}; digit model: ${label}, loaded in ${r.ms.toFixed(0)} ms (${(r.bytes / 1024).toFixed(0)} KB)`, 'ok');
  for (const id of ['classify', 'sample']) $(id).disabled = false;
  Object.assign(demo, { classify, classifyPad, sample, clear, ready: true, error: null });
  clear();
  return r;
}
demo.useDigitModel = useDigitModel;

// ---- start: the runtime, then the digit model ---------------------------------------------------------------
try {
  const info = await started;
  demo.features = info.features;
  demo.version = info.version;
  const runtime = `mxnet-wasm ${info.version}, ${info.features.tier} tier in a worker`
    + (info.features.threads ? `, ${info.features.numThreads} threads` : demo.isolated ? '' : ' (not cross-origin isolated: one thread)');
  demo.runtime = runtime;
  $('load').disabled = false;
  setStatus(`${runtime}; loading the digit model…`, 'busy');
  let meta;
  try {
    const res = await fetch(new URL('meta.json', MODEL));
    if (!res.ok) {
      throw new Error(`the digit model is missing (model/meta.json: HTTP ${res.status}): \`bash scripts/build.sh wasm\` `
        + 'trains it (scripts/train-demo-model.mjs, with the devDependency mnist); panel 3 trains one in the page');
    }
    meta = await res.json();
    const r = await request({
      type: 'load', slot: 'digits', symbol: new URL(meta.files.symbol, MODEL).href, params: new URL(meta.files.params, MODEL).href,
    });
    demo.model = { ...meta, loadMs: r.ms, bytes: r.bytes };
  } catch (e) {
    const what = e.message.startsWith('the digit model') ? '' : 'the digit model failed to load: ';
    throw new Error(`${runtime}; ${what}${e.message}`, { cause: e });
  }
  $('model-info').textContent = `${(100 * meta.testAccuracy).toFixed(2)}% on the ${meta.nTest.toLocaleString('en')} held-out digits `
    + `(${meta.options.epochs} epochs, ${meta.seconds} s with mxnet-wasm ${meta.mxnetWasm}).`;
  demo.readyMs = performance.now();
  setStatus(`ready in ${demo.readyMs.toFixed(0)} ms: ${runtime}; digit model loaded in ${demo.model.loadMs.toFixed(0)} ms `
    + `(${(demo.model.bytes / 1024).toFixed(0)} KB)`, 'ok');
  for (const id of ['classify', 'sample']) $(id).disabled = false;
  Object.assign(demo, { classify, classifyPad, sample, loadOwn, runOwn, clear, ready: true });
} catch (e) {
  demo.error = e.message;
  setStatus(e.message, 'error');
  Object.assign(demo, { loadOwn, runOwn });
}
