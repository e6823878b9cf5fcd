// The demo's "Train in the browser" panel: a model is trained on MNIST digits in a Web Worker
// (train-worker.mjs) while this page draws the loss curve; Export downloads MXNet's two files
// (model-symbol.json, model-0000.params) and loads them back here with
// gluon.SymbolBlock.imports, from the bytes, to score the imported net on the same test digits.
import * as mx from 'mxnet-wasm';
import { predictClasses, accuracyOf } from './digits.mjs';

const { gluon } = mx;
const $ = (id) => document.getElementById(id);

// What the panel did, for people and for tests (tests/js/web_demo_train.test.mjs).
const state = {
  ready: true, dataReady: false, training: false, losses: [], epochs: [], testAcc: null, testPred: null,
  files: null, exported: null, importedAcc: null, samePredictions: null, error: null,
};
window.trainDemo = state;

let worker = null, workerUp = null, test = null;
// The worker, once it has said hello (messages posted before its module has run may be lost).
function ensureWorker() {
  if (workerUp) return workerUp;
  $('train-status').textContent = 'starting the worker…';
  workerUp = new Promise((resolve) => {
    worker = new Worker(new URL('./train-worker.mjs', import.meta.url), { type: 'module' });
    worker.onmessage = ({ data }) => (data.type === 'hello' ? resolve(worker) : onMessage(data));
    worker.onerror = (e) => fail(`worker: ${e.message ?? 'failed to start (see the console)'}`);
  });
  return workerUp;
}

function fail(message) {
  state.error = message;
  state.training = false;
  $('train-status').textContent = message;
  setButtons();
}

function setButtons() {
  $('train-start').disabled = state.training;
  $('train-stop').disabled = !state.training;
  $('train-export').disabled = state.training || state.testAcc === null;
  $('train-use').disabled = state.training || !state.exported || !window.demo?.useDigitModel;
}

const fmt = (v) => v.toFixed(4);

async function onMessage(msg) {
  switch (msg.type) {
    case 'status': $('train-status').textContent = msg.text; break;
    case 'ready':
      test = msg.test;
      state.dataReady = true;
      $('train-status').textContent = `${msg.nTrain} training and ${test.n} test digits loaded; training…`;
      break;
    case 'loss':
      state.losses.push({ step: msg.step, steps: msg.steps, loss: msg.loss });
      drawCurve();
      $('train-status').textContent = `step ${msg.step} / ${msg.steps}: loss ${fmt(msg.loss)}`;
      break;
    case 'epoch': {
      state.epochs.push(msg);
      const line = `epoch ${msg.epoch}: loss ${fmt(msg.loss)}, train acc ${fmt(msg.trainAcc)}, `
        + `test acc ${fmt(msg.testAcc)}, ${msg.samplesPerSec.toFixed(0)} samples/s`
        + `${msg.partial ? ' (stopped mid-epoch)' : ''}`;
      $('train-log').textContent += `${line}\n`;
      break;
    }
    case 'done':
      state.training = false;
      state.testAcc = msg.testAcc;
      state.testPred = msg.testPred;
      $('train-status').textContent = msg.testAcc === null ? 'stopped before the first epoch ended'
        : `${msg.stopped ? 'stopped' : 'done'}: test accuracy ${fmt(msg.testAcc)}`;
      $('train-acc').textContent = msg.testAcc === null ? '–' : fmt(msg.testAcc);
      setButtons();
      break;
    case 'exported':
      try {
        await exported(msg.symbol, msg.params);
      } catch (e) {
        fail(`${e.name}: ${e.message}`);
      }
      break;
    case 'error': fail(msg.message); break;
    default: break;
  }
}

// The loss curve: mean loss per REPORT_EVERY batches against the step.
function drawCurve() {
  const c = $('loss-curve'), g = c.getContext('2d');
  const W = c.width, H = c.height, L = 44, R = 10, T = 10, B = 26;
  g.fillStyle = '#fff';
  g.fillRect(0, 0, W, H);
  const pts = state.losses;
  if (!pts.length) return;
  const steps = pts[pts.length - 1].steps;
  const top = Math.max(...pts.map((p) => p.loss)) * 1.05;
  const x = (s) => L + (W - L - R) * (s / steps), y = (v) => T + (H - T - B) * (1 - v / top);
  g.strokeStyle = '#888';
  g.fillStyle = '#444';
  g.font = '11px system-ui, sans-serif';
  g.beginPath();
  g.moveTo(L, T);
  g.lineTo(L, H - B);
  g.lineTo(W - R, H - B);
  g.stroke();
  for (let k = 0; k <= 4; k++) {
    const v = (top * k) / 4;
    g.fillText(v.toFixed(2), 4, y(v) + 4);
  }
  g.fillText(`step (of ${steps})`, W / 2 - 30, H - 8);
  g.strokeStyle = '#c33';
  g.lineWidth = 2;
  g.beginPath();
  pts.forEach((p, i) => (i ? g.lineTo(x(p.step), y(p.loss)) : g.moveTo(x(p.step), y(p.loss))));
  g.stroke();
  g.lineWidth = 1;
}


// Downloads the two files, then imports them from the same bytes and scores the imported net.
async function exported(symbol, params) {
  const blobs = [
    ['model-symbol.json', new Blob([symbol], { type: 'application/json' })],
    ['model-0000.params', new Blob([params], { type: 'application/octet-stream' })],
  ];
  const files = $('train-files');
  files.innerHTML = '';
  for (const [name, blob] of blobs) {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    a.textContent = `${name} (${(blob.size / 1024).toFixed(1)} KB)`;
    files.append(a, ' ');
    a.click();
  }
  state.files = { symbolBytes: blobs[0][1].size, paramsBytes: blobs[1][1].size };
  $('train-status').textContent = 'exported; importing the two files…';
  const net = await gluon.SymbolBlock.imports(blobs[0][1], ['data'], blobs[1][1]);
  net.hybridize();
  const pred = predictClasses(mx, net, test);
  state.importedAcc = accuracyOf(mx, pred, test);
  state.samePredictions = pred.every((p, i) => p === state.testPred[i]);
  $('imported-acc').textContent = `${fmt(state.importedAcc)} (${state.samePredictions
    ? `same predictions as the trained net on all ${test.n} test digits`
    : 'predictions differ from the trained net'})`;
  $('train-status').textContent = `imported ${net.collectParams().size} parameters with SymbolBlock.imports`;
  state.exported = { symbol: blobs[0][1], params: blobs[1][1], kind: $('train-model').selectedOptions[0].text };
  setButtons();
}

$('train-start').onclick = () => {
  state.training = true;
  state.losses = [];
  state.epochs = [];
  state.testAcc = null;
  state.importedAcc = null;
  state.exported = null;
  state.samePredictions = null;
  state.error = null;
  $('train-log').textContent = '';
  $('train-acc').textContent = '–';
  $('imported-acc').textContent = '–';
  $('train-files').innerHTML = '';
  drawCurve();
  setButtons();
  const epochs = Math.max(1, Math.min(50, Math.trunc(Number($('train-epochs').value) || 1)));
  const msg = { type: 'train', model: $('train-model').value, epochs, batchSize: 64, seed: 42 };
  ensureWorker().then((w) => w.postMessage(msg));
  if (state.dataReady) $('train-status').textContent = 'training…';
};
$('train-stop').onclick = () => worker?.postMessage({ type: 'stop' });
$('train-export').onclick = () => {
  $('train-export').disabled = true;
  worker.postMessage({ type: 'export' });
};
// The exported pair becomes panel 1's digit model (app.mjs's window.demo.useDigitModel).
$('train-use').onclick = async () => {
  const { symbol, params, kind } = state.exported;
  try {
    await window.demo.useDigitModel(symbol, params, `the ${kind} trained in panel 3 (${fmt(state.importedAcc)} on the held-out digits)`);
    $('train-status').textContent = 'panel 1 now uses the net trained here';
  } catch (e) {
    fail(`${e.name}: ${e.message}`);
  }
};
setButtons();
