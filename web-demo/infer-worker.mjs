// The demo's inference Worker: the digit model and a user's own files run here, off the page's
// main thread. In a cross-origin-isolated page (scripts/serve.mjs sends COOP/COEP) this worker
// loads mxnet-wasm's threaded tier (a browser's main thread cannot block, so threads are chosen
// automatically only in workers); otherwise a single-thread tier. Requests carry an id; a reply
// is {type: 'ok', id, ...} or {type: 'failed', id, message, cause}. Requests:
//   {type: 'load', slot, symbol, params, base?}  symbol/params: URL strings, File/Blob or ArrayBuffer;
//        replies {ms, bytes, nParams, inputs, inputShape, shapeSource, outputs}
//   {type: 'predict', slot, shape, input: Float32Array | null (random uniform 0..1)} or
//   {type: 'predict', slot, shape, image: ImageBitmap, prep: 'imagenet'|'unit'|'raw'|'mnist'}
//        replies {outputs: [{shape, first: number[] (sample 0's scores)}], ms}, and for an image the
//        preprocessed sample (input) and its first plane (preview: {plane, w, h})
// On start it posts {type: 'ready', version, features}.
// (A worker has no import map: the package is imported by its path, as the page's map resolves it.)
import * as mx from '../dist/index.mjs';
import { mnistInput, IMAGENET_MEAN, IMAGENET_STD } from './preprocess.mjs';

const { nd, gluon, sym } = mx, { transforms } = gluon.data.vision;
const nets = new Map(); // slot -> {net, inputs}

// An error whose message is the whole story for the page (no "Error:" prefix needed).
class DemoError extends Error {
  constructor(message, cause) { super(message); this.name = 'DemoError'; this.cause = cause; }
}

// MXNet's .params files start with the NDArray-list magic 0x112 (a little-endian uint64).
const isParamsMagic = (b) => b.length >= 8 && b[0] === 0x12 && b[1] === 0x01 && b.slice(2, 8).every((v) => v === 0);
const firstChar = (b) => { for (const v of b) if (v > 0x20) return String.fromCharCode(v); return ''; };

// Bytes and a display name from a URL, a File/Blob or an ArrayBuffer; a failed download names the
// URL and the HTTP status.
async function bytesOf(src, what) {
  if (src == null) return null;
  if (typeof src === 'string' || src instanceof URL) {
    const url = new URL(src, self.location.href);
    let res;
    try { res = await fetch(url); } catch (e) { throw new DemoError(`cannot download the ${what} ${url.pathname}: ${e.message}`, 'network'); }
    if (!res.ok) throw new DemoError(`cannot download the ${what} ${url.pathname}: HTTP ${res.status} ${res.statusText}`.trim(), 'http');
    return { bytes: new Uint8Array(await res.arrayBuffer()), name: url.pathname.split('/').pop() };
  }
  if (src instanceof Blob) return { bytes: new Uint8Array(await src.arrayBuffer()), name: src.name ?? `the ${what}` };
  return { bytes: new Uint8Array(src), name: `the ${what}` };
}

// The two files checked before MXNet parses them, so that a swapped or missing file is named as such.
function checkPair(symbol, params) {
  if (!symbol) throw new DemoError('pick the -symbol.json file (net.export writes NAME-symbol.json and NAME-0000.params)', 'missing');
  const symIsParams = isParamsMagic(symbol.bytes), paramsIsJson = params && firstChar(params.bytes.subarray(0, 64)) === '{';
  if (symIsParams && paramsIsJson) {
    throw new DemoError(`the two files are swapped: ${symbol.name} is the .params file and ${params.name} the symbol JSON`, 'swapped');
  }
  if (symIsParams) throw new DemoError(`${symbol.name} is a .params file (MXNet's binary NDArray list), not the -symbol.json file`, 'not-json');
  let graph;
  try {
    graph = JSON.parse(new TextDecoder().decode(symbol.bytes));
  } catch (e) {
    throw new DemoError(`${symbol.name} is not JSON (${e.message}): pick the -symbol.json file that net.export wrote`, 'not-json');
  }
  if (!graph || !Array.isArray(graph.nodes)) throw new DemoError(`${symbol.name} is JSON but not an MXNet symbol (it has no "nodes")`, 'not-symbol');
  if (!params) {
    throw new DemoError('pick the .params file too: the -symbol.json file holds the graph, the .params file its weights', 'missing');
  }
  if (paramsIsJson) throw new DemoError(`${params.name} is a JSON file, not the .params file (NAME-0000.params)`, 'not-params');
  if (!isParamsMagic(params.bytes)) {
    throw new DemoError(`${params.name} is not an MXNet .params file (it does not start with the NDArray-list magic 0x112)`, 'not-params');
  }
  return graph;
}

// The graph's inputs: its arguments that the parameter file does not hold ('data' in exports).
function inputsOf(graph, symbol, params) {
  const args = symbol.listArguments();
  if (args.includes('data')) return ['data'];
  const dict = nd.load(params.bytes);
  const names = new Set(Object.keys(dict).map((k) => k.replace(/^(arg|aux):/, '')));
  for (const a of Object.values(dict)) a.dispose();
  const aux = new Set(symbol.listAuxiliaryStates?.() ?? []);
  return args.filter((a) => !names.has(a) && !aux.has(a));
}

// The input shape, from the graph where it can: the input's __shape__ attribute, else a shape
// consistent with every parameter's shape (shape inference) built from the first layer's
// weights: a Convolution's input channels with the usual image sizes, a FullyConnected's input
// size (as a square image when it is one). Returns {shape, source} or {shape: null, source}.
function guessInputShape(graph, symbol, net, input) {
  const node = graph.nodes.find((n) => n.op === 'null' && n.name === input);
  const attr = node?.attrs?.__shape__ ?? node?.attr?.__shape__;
  if (attr) {
    const shape = attr.replace(/[()[\]\s]/g, '').split(',').filter(Boolean).map((v) => Math.max(1, Number(v)));
    if (shape.every(Number.isFinite)) return { shape, source: `the graph's ${input} variable (__shape__ ${attr})` };
  }
  const params = new Map([...net.collectParams().entries()].map(([k, p]) => [k, p.shape]));
  const known = Object.fromEntries(params);
  const fits = (shape) => {
    try {
      symbol.inferShape({ ...known, [input]: shape });
      return true;
    } catch { return false; }
  };
  // the first operator node (in the graph's order) that has a parameter input
  const first = graph.nodes.find((n) => n.op !== 'null' && n.inputs.some(([i]) => params.has(graph.nodes[i].name)));
  if (!first) return { shape: null, source: 'no layer with parameters' };
  const wNode = first.inputs.map(([i]) => graph.nodes[i]).find((n) => params.has(n.name));
  const w = params.get(wNode.name), cands = [];
  let why;
  if (first.op === 'FullyConnected' && w.length === 2) {
    const k = w[1], s1 = Math.round(Math.sqrt(k)), s3 = Math.round(Math.sqrt(k / 3));
    if (s1 * s1 === k) cands.push([1, 1, s1, s1]);
    if (3 * s3 * s3 === k) cands.push([1, 3, s3, s3]);
    cands.push([1, k]);
    why = `${wNode.name} ${JSON.stringify(w)}: ${k} inputs`;
  } else {
    const groups = Number(first.attrs?.num_group ?? 1);
    const c = first.op === 'Convolution' && w.length === 4 ? w[1] * groups : w[0];
    // the usual sizes first (a fully convolutional net takes any: 28 for grey, 224 for colour), then
    // every size to 512: multiples of 8, of 4, the rest (pooling can make neighbours fit as well)
    const usual = c === 1 ? [28, 32, 64, 96, 112, 128, 224, 256, 299]
      : [224, 32, 28, 64, 96, 112, 128, 227, 256, 299, 320, 416, 512];
    const rest = Array.from({ length: 505 }, (_, i) => i + 8).filter((v) => !usual.includes(v));
    const sizes = [...usual, ...rest.filter((v) => v % 8 === 0), ...rest.filter((v) => v % 8 === 4),
      ...rest.filter((v) => v % 4)];
    for (const s of sizes) cands.push([1, c, s, s]);
    why = `${wNode.name} ${JSON.stringify(w)}: ${c} input channel${c === 1 ? '' : 's'}`;
  }
  const shape = cands.find(fits);
  return shape ? { shape, source: `${why}; the first size consistent with all ${params.size} parameters` }
    : { shape: null, source: `${why}, but none of the usual sizes fits the parameters` };
}

async function load({ slot, symbol: symSrc, params: paramsSrc }) {
  const t0 = performance.now();
  const [symbol, params] = await Promise.all([bytesOf(symSrc, 'symbol file'), bytesOf(paramsSrc, 'parameters')]);
  const graph = checkPair(symbol, params);
  const s = sym.fromJSON(new TextDecoder().decode(symbol.bytes));
  const inputs = inputsOf(graph, s, params);
  const net = await gluon.SymbolBlock.imports(new Blob([symbol.bytes]), inputs, new Blob([params.bytes]));
  net.hybridize();
  const ms = performance.now() - t0;
  nets.get(slot)?.net.dispose();
  nets.set(slot, { net, inputs });
  const guess = inputs.length === 1 ? guessInputShape(graph, s, net, inputs[0]) : { shape: null, source: `${inputs.length} inputs` };
  return {
    ms, bytes: symbol.bytes.length + params.bytes.length, nParams: net.collectParams().size, inputs,
    inputShape: guess.shape, shapeSource: guess.source, outputs: s.listOutputs(),
  };
}

// An image (ImageBitmap) as the model's input of `shape` ((N, C, H, W), or (N, 784) for MNIST), in
// MXNet's way: mx.image.fromPixels (H, W, C) uint8; ImageNet: resize_short to size / 0.875 and
// center_crop; otherwise imresize; then transforms.ToTensor (and Normalize), or the raw values in
// CHW. The MNIST preparation (preprocess.mjs) works on the grey picture at its own size.
// Returns the NCHW data (the image repeated N times) and its first plane for the page's preview.
function imageInput(image, prep, shape) {
  const flat = shape.length === 2;
  const [n, c, h, w] = flat ? [shape[0], 1, 28, 28] : shape;
  const one = mx.tidy(() => {
    if (prep === 'mnist') {
      const grey = mx.image.fromPixels(image, 1);
      const pixels = mnistInput(Float32Array.from(grey.toTypedArray(), (v) => v / 255), grey.shape[1], grey.shape[0]);
      const out = new Float32Array(c * 784);
      for (let k = 0; k < c; k++) out.set(pixels, k * 784);
      return out;
    }
    let img = mx.image.fromPixels(image, c);
    if (prep === 'imagenet') {
      img = mx.image.resize_short(img, Math.floor(Math.min(h, w) / 0.875), 1); // bilinear
      [img] = mx.image.center_crop(img, [w, h], 1);
    } else {
      img = mx.image.imresize(img, w, h, 1);
    }
    let t;
    if (prep === 'raw') t = nd.transpose(img.astype('float32'), { axes: [2, 0, 1] });
    else {
      t = new transforms.ToTensor()(img);
      if (prep === 'imagenet') {
        const [mean, std] = c === 3 ? [IMAGENET_MEAN, IMAGENET_STD] : [IMAGENET_MEAN[0], IMAGENET_STD[0]];
        t = new transforms.Normalize(mean, std)(t);
      }
    }
    return Float32Array.from(t.toTypedArray());
  });
  image.close?.();
  const input = new Float32Array(n * one.length);
  for (let i = 0; i < n; i++) input.set(one, i * one.length);
  return { input, preview: { plane: one.slice(0, h * w), w, h } };
}

function predict({ slot, input: given, image, prep, shape }) {
  const entry = nets.get(slot);
  if (!entry) throw new DemoError(slot === 'digits' ? 'the digit model is not loaded' : 'load a model first', 'not-loaded');
  const t0 = performance.now();
  const { input, preview } = image ? imageInput(image, prep, shape) : { input: given, preview: null };
  const prepMs = performance.now() - t0;
  const r = mx.tidy(() => {
    const x = input ? nd.array(input, { shape }) : nd.random.uniform(0, 1, shape);
    const t0 = performance.now();
    const y = entry.net(x);
    const outs = Array.isArray(y) ? y : [y];
    const outputs = outs.map((o) => {
      const all = o.toTypedArray(); // (waits for the result: part of the timing)
      const per = o.shape.length ? all.length / o.shape[0] : all.length;
      return { shape: o.shape, first: Array.from(all.subarray(0, per)) };
    });
    return { outputs, ms: performance.now() - t0 };
  });
  return image ? { ...r, preview, prepMs, input: input.subarray(0, input.length / shape[0]) } : r;
}

const ready = Promise.resolve().then(() => self.postMessage({ type: 'ready', version: mx.version, features: mx.features() }));
self.onmessage = async ({ data: m }) => {
  await ready;
  try {
    const r = m.type === 'load' ? await load(m) : m.type === 'predict' ? predict(m) : null;
    if (!r) throw new DemoError(`unknown request ${m.type}`);
    self.postMessage({ type: 'ok', id: m.id, ...r });
  } catch (e) {
    const message = e instanceof DemoError || e.name === 'MXNetError' ? e.message : `${e.name}: ${e.message}`;
    self.postMessage({ type: 'failed', id: m.id, message, cause: e instanceof DemoError ? e.cause : e.name });
  }
};
