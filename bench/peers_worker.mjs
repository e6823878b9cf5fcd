// The browser side of bench/peers_browser.mjs: one engine in a module worker of a cross-origin
// isolated page (threads need SharedArrayBuffer, and a worker may block where a page's main thread
// may not). The page relays bench/engines.mjs's commands; the first is
//   { cmd: 'setup', engine: 'mx' | 'tf' | 'ort', threads, tier?, build? }
//     -> { ready, label, detail } | { ready: false, reason }
// Libraries come from the server's /dist/ (mxnet-wasm), /node_modules/ (TF.js's UMD bundles,
// evaluated here; onnxruntime-web's ES module) and the inputs and references from /data/.
import { createHandler } from './engines.mjs';

let handle = null;
const loadBlob = async (name) => {
  const r = await fetch(`/data/${name}`);
  if (!r.ok) throw new Error(`GET /data/${name}: ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
};

async function setup({ engine, threads, tier, build }) {
  const isolated = `crossOriginIsolated ${self.crossOriginIsolated}`;
  if (engine === 'mx') {
    // a tier forced through its subpath entry point, else the default import's choice
    const mx = await import(tier ? `/dist/${tier}.mjs` : '/dist/index.mjs');
    const f = mx.features();
    if (threads > 1 && !f.threads) return { reason: `tier ${f.tier} has no threads here (${isolated})` };
    if (f.threads) mx.setNumThreads(threads);
    const got = mx.getNumThreads();
    if (got !== threads) return { reason: `tier ${f.tier}: setNumThreads(${threads}) gave ${got}` };
    return { libs: { mx }, label: `mxnet-wasm ${mx.version} ${f.tier}`,
      detail: `${JSON.stringify(mx.features())}, ${isolated}` };
  }
  if (engine === 'tf') {
    // tfjs-backend-wasm caps its pool at navigator.hardwareConcurrency / 2 (it assumes two
    // hyperthreads per core; init_with_threads_count in its backend.cc), so on a machine that
    // reports 2 it never runs more than one thread: report 2 x threads to it, so that it runs the
    // number of threads asked for.
    const reported = navigator.hardwareConcurrency;
    if (reported < 2 * threads) Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => 2 * threads });
    for (const file of ['tfjs-core/dist/tf-core.min.js', 'tfjs-backend-wasm/dist/tf-backend-wasm.min.js']) {
      (0, eval)(await (await fetch(`/node_modules/@tensorflow/${file}`)).text()); // UMD: defines self.tf
    }
    const { tf } = self;
    tf.wasm.setWasmPaths('/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
    if (build === 'simd') tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    tf.wasm.setThreadsCount(threads);
    if (!(await tf.setBackend('wasm'))) return { reason: 'tf.setBackend("wasm") failed' };
    await tf.ready();
    const mt = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
    const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
    const n = tf.wasm.getThreadsCount();
    if (build === 'threaded-simd' && !mt) return { reason: `the threaded build does not load here (${isolated})` };
    if (n !== threads) return { reason: `setThreadsCount(${threads}) gave ${n} threads` };
    return { libs: { tf }, label: `tfjs-wasm ${tf.version_core} ${mt ? 'threaded-simd' : simd ? 'simd' : 'plain'}`,
      detail: `getThreadsCount ${n}, hardwareConcurrency ${reported}${navigator.hardwareConcurrency !== reported
        ? ` (reported to TF.js as ${navigator.hardwareConcurrency})` : ''}, ${isolated}` };
  }
  if (engine === 'ort') {
    const ort = await import('/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
    ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = 'error';
    return { libs: { ort }, label: `onnxruntime-web ${ort.env.versions?.web ?? ''} wasm`,
      detail: `numThreads ${threads}, ${isolated}` };
  }
  return { reason: `unknown engine ${engine}` };
}

self.onmessage = async ({ data: msg }) => {
  if (msg.cmd === 'setup') {
    let s;
    try {
      s = await setup(msg);
    } catch (e) {
      s = { reason: `failed to load: ${e?.message ?? e}` };
    }
    if (s.reason) { postMessage({ ready: false, reason: s.reason }); return; }
    handle = createHandler({ engine: msg.engine, libs: s.libs, loadBlob });
    postMessage({ ready: true, label: s.label, detail: s.detail });
    return;
  }
  postMessage(handle ? await handle(msg) : { error: 'not set up' });
};
