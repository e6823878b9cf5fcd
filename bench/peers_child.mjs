// A Node child process of bench/peers.mjs: one engine configuration at one thread count, driven
// over the IPC channel with bench/engines.mjs's protocol. Started by the parent with fork():
//   argv[2]: JSON { engine: 'mx' | 'tf' | 'ort' | 'ref', tier?, threads, data }   (data: the folder of
//   the ONNX files and reference outputs). mx gets its tier from MXW_TIER in its environment (set by the
//   parent) and, for relaxed tiers on Node 20, --experimental-wasm-relaxed-simd in its execArgv.
// The first message it sends is { ready: true, label, detail } or { ready: false, reason }.
// engine 'ref' builds every model's ONNX graph, runs it with onnxruntime-node (native CPU, the
// independent reference) and writes <model>-b<batch>.onnx and .ref into data, then exits. It also
// checks bench/models.mjs's ResNet-18 against MXNet's own model_zoo export (zoo-symbols/resnet18_v1 in
// $MXW_MODELS or ../shared/models): the same parameter shapes after shape inference.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { createHandler } from './engines.mjs';
import { MODELS, modelByKey, modelInput, buildOnnx } from './models.mjs';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = JSON.parse(process.argv[2]);
const loadBlob = async (name) => new Uint8Array(await readFile(path.join(config.data, name)));
const send = (m) => new Promise((resolve) => process.send(m, resolve));

async function setup() {
  const { engine, threads } = config;
  if (engine === 'mx') {
    const mx = await import('mxnet-wasm');
    const f = mx.features();
    const want = process.env.MXW_TIER;
    if (want && f.tier !== want) return { reason: `tier ${want}: not built (the import gave tier ${f.tier})` };
    if (threads > 1 && !f.threads) return { reason: `tier ${f.tier} has no threads` };
    if (f.threads) mx.setNumThreads(threads);
    const got = mx.getNumThreads();
    if (got !== threads) return { reason: `tier ${f.tier}: setNumThreads(${threads}) gave ${got} threads` };
    return { libs: { mx }, label: `mxnet-wasm ${mx.version} ${f.tier}`, detail: JSON.stringify(mx.features()) };
  }
  if (engine === 'tf') {
    const tf = await import('@tensorflow/tfjs-core');
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    // In Node the backend cannot find its .wasm files by itself: point it at the package's dist/.
    const simdWasm = require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm');
    wasm.setWasmPaths(path.dirname(simdWasm) + path.sep);
    if (threads > 1) return { reason: 'tfjs-backend-wasm has no threads in Node' };
    if (!(await tf.setBackend('wasm'))) return { reason: 'tf.setBackend("wasm") failed' };
    await tf.ready();
    const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
    const mt = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
    return { libs: { tf }, label: `tfjs-wasm ${tf.version_core} ${mt ? 'threaded-simd' : simd ? 'simd' : 'plain'}`,
      detail: `SIMD ${simd}, threads ${mt} (getThreadsCount ${wasm.getThreadsCount()})` };
  }
  if (engine === 'ort') {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = 'error';
    return { libs: { ort }, label: `onnxruntime-web ${ort.env.versions?.web ?? ''} wasm`,
      detail: `numThreads ${threads}` };
  }
  throw new Error(`peers_child: unknown engine ${engine}`);
}

// The references: every (model, batch) through onnxruntime-node.
async function writeReferences() {
  const ortNode = require('onnxruntime-node');
  const { OnnxGraph } = await import('./onnx_build.mjs');
  const only = config.models;
  for (const model of MODELS) {
    if (only && !only.includes(model.key)) continue;
    const graph = model.build();
    for (const batch of model.batches) {
      const { shape, data } = modelInput(model, batch);
      const g = new OnnxGraph(model.key);
      const y = buildOnnx(g, graph, 'data');
      const bytes = g.finish(['data', shape], [y, null]);
      await writeFile(path.join(config.data, `${model.key}-b${batch}.onnx`), bytes);
      const session = await ortNode.InferenceSession.create(bytes, { executionProviders: ['cpu'] });
      const r = await session.run({ data: new ortNode.Tensor('float32', data, shape) });
      const out = r[session.outputNames[0]].data;
      const bytesOut = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
      await writeFile(path.join(config.data, `${model.key}-b${batch}.ref`), bytesOut);
      await session.release();
    }
  }
  return `onnxruntime-node ${ortNode.env.versions?.node ?? ''} (native CPU)`;
}

async function checkResnetArchitecture() {
  const models = path.resolve(root, process.env.MXW_MODELS || '../shared/models');
  const file = path.join(models, 'zoo-symbols/resnet18_v1-symbol.json');
  if (!existsSync(file)) return `ResNet-18 architecture not checked: ${file} not found (set MXW_MODELS)`;
  const mx = await import('mxnet-wasm');
  const sym = await mx.sym.load(file);
  const [args, , aux] = sym.inferShape({ data: [1, 3, 224, 224] });
  const names = [...sym.listArguments(), ...sym.listAuxiliaryStates()], shapes = [...args, ...aux];
  const theirs = names.map((n, i) => (n === 'data' ? null : shapes[i].join('x'))).filter(Boolean).sort();
  const mine = [...modelByKey('resnet18').build().params.values()].map((p) => p.shape.join('x')).sort();
  const same = JSON.stringify(mine) === JSON.stringify(theirs);
  return `ResNet-18: ${same ? 'the same' : 'NOT the same'} ${mine.length} parameter shapes as MXNet's model_zoo ` +
    `export (${path.relative(root, file)}${same ? '' : `, which has ${theirs.length}`})`;
}

if (config.engine === 'ref') {
  try {
    const label = await writeReferences();
    const arch = config.models.includes('resnet18') ? await checkResnetArchitecture() : null;
    await send({ ready: true, label, arch });
  } catch (e) {
    await send({ ready: false, reason: String(e?.stack ?? e) });
  }
  process.exit(0);
}

let s;
try {
  s = await setup();
} catch (e) {
  const message = String(e?.message ?? e);
  const tier = process.env.MXW_TIER;
  const notBuilt = tier && /not built/.test(message);
  s = { reason: notBuilt ? `tier ${tier}: not built (${message})` : `failed to load: ${message}` };
}
if (s.reason) {
  await send({ ready: false, reason: s.reason });
  process.exit(0);
}
const handle = createHandler({ engine: config.engine, libs: s.libs, loadBlob });
process.on('message', async (msg) => {
  if (msg.cmd === 'exit') process.exit(0);
  await send(await handle(msg));
});
await send({ ready: true, label: s.label, detail: s.detail });
