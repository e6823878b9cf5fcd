// One engine of the peers benchmark behind a small command protocol, the same in a Node child
// process (bench/peers_child.mjs) and in a browser worker (bench/peers_worker.mjs). Plain ES module.
//
//   const handle = createHandler({ engine: 'mx' | 'tf' | 'ort', libs: { mx } | { tf } | { ort }, loadBlob });
//   await handle({ cmd: 'prepare', model, batch, warmMs, runMs })  -> { ok, abs, rel, iters } | { ok: false, error }
//   await handle({ cmd: 'run' })                                   -> { ms }   (per iteration, one timed run)
//   await handle({ cmd: 'kernel', runs, runMs })                   -> { gflops } (mx, GEMM on resident arrays)
//   await handle({ cmd: 'release', model })                        -> { ok }
//
// One iteration is what an application does per inference: copy a Float32Array input in, run the
// network, copy the output out to a Float32Array. Each engine gets the input in its native layout
// (TF.js: NHWC, converted outside the timing). Before timing, the output is compared with the
// reference (onnxruntime-node, written by the parent as <model>-b<batch>.ref); a mismatch above the
// model's tolerance is reported and that engine is not timed. loadBlob(name) -> Promise<Uint8Array>.
import { modelByKey, modelInput, buildMx, buildTf, toNhwc } from './models.mjs';
import { compare, median } from './common.mjs';

const f32 = (bytes) => new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);

export function createHandler({ engine, libs, loadBlob }) {
  const models = new Map(); // model key -> engine object (weights held by the engine)
  let current = null; // { key, run, async }
  const now = () => performance.now();

  async function getModel(model) {
    if (!models.has(model.key)) {
      const graph = model.build();
      if (engine === 'mx') models.set(model.key, buildMx(libs.mx, graph));
      else if (engine === 'tf') models.set(model.key, buildTf(libs.tf, graph, model.inShape(1).slice(1)));
      else models.set(model.key, { sessions: new Map(), dispose() {} });
    }
    return models.get(model.key);
  }

  async function makeRunner(model, batch) {
    const impl = await getModel(model);
    const { shape, data } = modelInput(model, batch);
    if (engine === 'mx') {
      const { nd } = libs.mx;
      return {
        async: false,
        run() {
          const x = nd.array(data, { shape });
          const y = impl.forward(x);
          const out = y.toTypedArray();
          x.dispose();
          y.dispose();
          return out;
        },
      };
    }
    if (engine === 'tf') {
      const { tf } = libs;
      const [native, nshape] = toNhwc(data, shape);
      return {
        async: false,
        run() {
          const y = tf.tidy(() => impl.forward(tf.tensor(native, nshape, 'float32')));
          const out = y.dataSync();
          y.dispose();
          return out;
        },
      };
    }
    const { ort } = libs;
    const bytes = await loadBlob(`${model.key}-b${batch}.onnx`);
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'],
      graphOptimizationLevel: 'all' });
    impl.sessions.set(batch, session);
    const [inName] = session.inputNames, [outName] = session.outputNames;
    return {
      async: true,
      async run() {
        const r = await session.run({ [inName]: new ort.Tensor('float32', data, shape) });
        return r[outName].data;
      },
    };
  }

  async function timeIters(r, n) {
    const t0 = now();
    if (r.async) for (let i = 0; i < n; i++) await r.run();
    else for (let i = 0; i < n; i++) r.run();
    return now() - t0;
  }

  async function prepare({ model: key, batch, warmMs, runMs }) {
    const model = modelByKey(key);
    current = null;
    const r = await makeRunner(model, batch);
    const out = await r.run();
    const ref = f32(await loadBlob(`${key}-b${batch}.ref`));
    const { abs, rel } = compare(out, ref);
    if (!(rel <= model.tol)) {
      const error = `output differs from onnxruntime-node: max |diff| ${abs} (${rel} of max |y|)`;
      return { ok: false, abs, rel, error };
    }
    // V8 runs wasm through its baseline compiler first: warm up, then size one run to ~runMs
    let n = 0;
    const t0 = now();
    do { if (r.async) await r.run(); else r.run(); n++; } while (now() - t0 < warmMs);
    const probe = Math.max(1, Math.ceil(n / 10));
    const per = (await timeIters(r, probe)) / probe;
    current = { ...r, iters: Math.max(1, Math.round(runMs / per)) };
    return { ok: true, abs, rel, iters: current.iters };
  }

  // mxnet-wasm only: GFLOP/s of nd.dot on 1024 x 1024 operands already in wasm memory, output disposed.
  function kernel({ runs = 5, runMs = 300 }) {
    if (engine !== 'mx') return { error: 'kernel: mx only' };
    const { nd } = libs.mx;
    const N = 1024;
    const a = nd.array(modelInput(modelByKey('gemm'), N).data, { shape: [N, N] });
    const b = nd.array(modelByKey('gemm').build().params.get('w').data, { shape: [N, N] });
    const once = () => nd.dot(a, b).dispose();
    const t0 = now();
    while (now() - t0 < runMs) once();
    const rates = [];
    for (let r = 0; r < runs; r++) {
      let n = 0;
      const t = now();
      do { once(); n++; } while (now() - t < runMs);
      rates.push((2 * N * N * N * n) / (now() - t) / 1e6);
    }
    a.dispose();
    b.dispose();
    return { gflops: median(rates) };
  }

  return async function handle(msg) {
    try {
      switch (msg.cmd) {
        case 'prepare': return await prepare(msg);
        case 'run': {
          if (!current) return { error: 'run: nothing prepared' };
          return { ms: (await timeIters(current, current.iters)) / current.iters };
        }
        case 'kernel': return kernel(msg);
        case 'release': {
          current = null;
          const m = models.get(msg.model);
          if (m) {
            for (const s of m.sessions?.values() ?? []) await s.release();
            m.dispose();
            models.delete(msg.model);
          }
          return { ok: true };
        }
        default: return { error: `unknown command ${msg.cmd}` };
      }
    } catch (e) {
      return { ok: false, error: String(e?.stack ?? e?.message ?? e) };
    }
  };
}
