// tiers.mjs -- which build of the C core this realm loads (issue 10). The same sources are built
// four ways (CMakeLists.txt): 'simd' (every host), 'relaxed-simd' (FMA through
// f32x4.relaxed_madd; Node 20 needs --experimental-wasm-relaxed-simd, Chromium runs it),
// 'threads' (a pthreads worker pool over SharedArrayBuffer: always in Node, in browsers only when
// the page is cross-origin isolated) and 'relaxed-simd-threads'.
//
// The choice, in order: a tier requested by a subpath import ('mxnet-wasm/threads' evaluates
// tier-threads.mjs, which calls requestTier before the core loads), else the MXW_TIER
// environment variable in Node, else the best tier this host runs: threads before single
// thread (threads only in Node and in workers: a page's main thread cannot block), relaxed before
// plain SIMD. A requested tier the host cannot run is an MXNetError
// saying why; the automatic choice falls back (features().tierFallbacks says from what).

import { isNode, nodeBuiltin, nodeBuiltinSync } from './platform.mjs';

const TIERS = ['relaxed-simd-threads', 'threads', 'relaxed-simd', 'simd'];

// One choice per realm, kept on globalThis so that two copies of the package (a bundle and
// node_modules) agree.
const KEY = Symbol.for('mxnet-wasm.tier');
const state = globalThis[KEY] ?? (globalThis[KEY] = { requested: null, loaded: null, wasmPaths: null, memoryLimit: null });

// Called by the generated dist/tier-<name>.mjs, before the core is evaluated.
// setWasmPaths(prefix | {tier: prefix}): where the tiers' files (mxcore.wasm, and the threaded
// tiers' mxcore.worker.js) are fetched from, for a CDN or a bundler's asset folder; by default
// they are beside the modules. A prefix ends with '/': 'https://cdn.example/mxnet-wasm/dist/' holds
// mxcore.wasm and threads/mxcore.wasm, ...; a map gives one folder per tier. It must run before
// the package loads: import it from 'mxnet-wasm/config' and import 'mxnet-wasm' dynamically
// after, or set globalThis.MXNET_WASM_PATHS before any import.
export function setWasmPaths(paths) {
  if (state.loaded) throw new Error(`mxnet-wasm: setWasmPaths must run before the package loads (the '${state.loaded}' tier is loaded)`);
  const ok = typeof paths === 'string' || paths instanceof URL
    || (paths && typeof paths === 'object' && Object.keys(paths).every((k) => TIERS.includes(k)));
  if (!ok) throw new Error(`mxnet-wasm: setWasmPaths takes a prefix or an object of tier -> prefix (tiers: ${TIERS.join(', ')})`);
  state.wasmPaths = paths;
}
// setMemoryLimit(bytes): the most memory the wasm heap may grow to (default and at most 4 GiB,
// wasm32's limit; at least 32 MiB). Past it an allocation fails with MXNetError "out of memory:
// ..." as when the host runs out. Before the package loads, like setWasmPaths; in Node also the
// environment variable MXW_MAX_MEMORY_MB.
export function setMemoryLimit(bytes) {
  if (state.loaded) throw new Error(`mxnet-wasm: setMemoryLimit must run before the package loads (the '${state.loaded}' tier is loaded)`);
  if (!(typeof bytes === 'number' && bytes >= 32 * 2 ** 20)) throw new Error(`mxnet-wasm: setMemoryLimit takes a number of bytes >= 32 MiB, got ${bytes}`);
  state.memoryLimit = Math.min(bytes, 4 * 2 ** 30);
}
// The module's memory, created here for every tier (the glue would not hand its own back): 32 MiB
// growing to the limit (4 GiB, wasm32's most, unless set lower); shared in the threaded tiers.
function memoryOption(tier) {
  let limit = state.memoryLimit;
  const env = isNode ? Number(process.env.MXW_MAX_MEMORY_MB) : NaN;
  if (limit === null && Number.isFinite(env) && env > 0) limit = Math.min(Math.max(env, 32), 4096) * 2 ** 20;
  const maximum = Math.min(65536, Math.floor((limit ?? 4 * 2 ** 30) / 65536));
  return { wasmMemory: new WebAssembly.Memory({ initial: 512, maximum, shared: tier.includes('threads') }) };
}

// The folder a tier's files come from, or null for beside the modules.
function wasmFolder(tier) {
  const paths = state.wasmPaths ?? globalThis.MXNET_WASM_PATHS ?? null;
  if (paths === null) return null;
  if (typeof paths === 'string' || paths instanceof URL) {
    const base = String(paths).endsWith('/') ? String(paths) : `${paths}/`;
    return tier === 'simd' ? base : `${base}${tier}/`;
  }
  const p = paths[tier];
  if (p === undefined || p === null) return null;
  return String(p).endsWith('/') ? String(p) : `${p}/`;
}
// Module options that fetch the tier's files from its configured folder.
async function locateOptions(tier) {
  const folder = wasmFolder(tier);
  if (folder === null) return {};
  const url = (file) => new URL(file, folder).href;
  if (isNode && !/^(https?|data|blob):/.test(folder)) {
    // Node: read the file (a path or file: URL), as the glue does beside the module
    const fs = await nodeBuiltin('fs');
    const { pathToFileURL } = await nodeBuiltin('url');
    const wasm = new URL('mxcore.wasm', folder.startsWith('file:') ? folder : pathToFileURL(folder)).href;
    return { wasmBinary: fs.readFileSync(new URL(wasm)), locateFile: (file) => new URL(file, wasm).pathname };
  }
  if (isNode) return { wasmBinary: new Uint8Array(await (await fetch(url('mxcore.wasm'))).arrayBuffer()), locateFile: url };
  return { locateFile: url };
}

// Node: the tier's .wasm read and compiled as soon as the tier is chosen, before its glue module is
// imported. The glue's import waits in the ESM loader behind the API bundle's parse, and the glue
// compiled the binary only when called: now V8 compiles it on its background threads while the
// bundle is parsed, and the glue instantiates the compiled module (instantiateWasm).
// { options for the glue, failed: a promise rejected with the compile's error }, or null (a
// browser, or files at a URL: the glue fetches them).
// Where Node gives its built-ins synchronously (>= 20.16) the compile starts within the caller's
// turn, before anything the caller does next: the entry compiles the API script right after
// preloadCore(), and a wasm compile started only after it (one `await` later) left the main thread
// waiting ~8 ms for the module.
function earlyCompile(tier) {
  if (!isNode) return null;
  const folder = wasmFolder(tier);
  if (folder !== null && /^(https?|data|blob):/.test(folder)) return null;
  const fs = nodeBuiltinSync('fs'), url = nodeBuiltinSync('url');
  if (!fs || !url) return Promise.all([nodeBuiltin('fs'), nodeBuiltin('url')]).then(([f, u]) => compileFrom(tier, folder, f, u));
  return compileFrom(tier, folder, fs, url);
}
function compileFrom(tier, folder, fs, { pathToFileURL }) {
  let wasm;
  if (folder === null) {
    wasm = new URL(tier === 'simd' ? './mxcore.wasm' : `./${tier}/mxcore.wasm`, import.meta.url);
  } else {
    wasm = new URL('mxcore.wasm', folder.startsWith('file:') ? folder : pathToFileURL(folder));
  }
  const compiled = WebAssembly.compile(fs.readFileSync(wasm));
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  failed.catch(() => {}); // seen by loadCore's race; not an unhandled rejection before it
  compiled.catch(fail);
  const instantiateWasm = (imports, receive) => {
    compiled.then((module) => WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module)))
      .catch(fail);
    return {};
  };
  return { options: { instantiateWasm, locateFile: (file) => new URL(file, wasm).pathname }, failed };
}

export function requestTier(tier) {
  if (!TIERS.includes(tier)) throw new Error(`mxnet-wasm: unknown tier '${tier}' (tiers: ${TIERS.join(', ')})`);
  if (state.loaded && state.loaded !== tier) {
    throw new Error(`mxnet-wasm: the '${state.loaded}' tier is already loaded in this realm; 'mxnet-wasm/${tier}' ` +
      'cannot load another (import one entry point per realm, or use a worker)');
  }
  if (state.requested && state.requested !== tier) {
    throw new Error(`mxnet-wasm: both 'mxnet-wasm/${state.requested}' and 'mxnet-wasm/${tier}' were imported`);
  }
  state.requested = tier;
}

// f32x4.relaxed_madd in a 40-byte module: (func (result v128) v128.const 0 x3 f32x4.relaxed_madd)
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00,
  0x0a, 0x3d, 0x01, 0x3b, 0x00,
  0xfd, 0x0c, ...new Array(16).fill(0),
  0xfd, 0x0c, ...new Array(16).fill(0),
  0xfd, 0x0c, ...new Array(16).fill(0),
  0xfd, 0x85, 0x02, 0x0b,
]);
// v128.const: a module using SIMD at all
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00,
  0x0a, 0x16, 0x01, 0x14, 0x00, 0xfd, 0x0c, ...new Array(16).fill(0), 0x0b,
]);

function validate(bytes) {
  try { return WebAssembly.validate(bytes); } catch { return false; }
}

// What this host can run, and why not where it cannot.
export function hostSupport() {
  const why = {};
  const simd = validate(SIMD_PROBE);
  if (!simd) why.simd = 'this engine has no WebAssembly SIMD';
  const relaxed = simd && validate(RELAXED_PROBE);
  if (!relaxed) {
    why.relaxed = isNode
      ? 'this Node does not enable relaxed SIMD (Node 20: run node --experimental-wasm-relaxed-simd)'
      : 'this browser does not support WebAssembly relaxed SIMD';
  }
  let threads = typeof SharedArrayBuffer === 'function' && typeof Atomics === 'object';
  if (!isNode && globalThis.crossOriginIsolated !== true) {
    // (browsers hide SharedArrayBuffer itself unless the page is isolated)
    threads = false;
    why.threads = 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and ' +
      'Cross-Origin-Embedder-Policy: require-corp)';
  } else if (!threads) {
    why.threads = 'SharedArrayBuffer is not available';
  } else if (!isNode && typeof Worker !== 'function') {
    threads = false;
    why.threads = 'this context cannot start workers';
  }
  return { simd, relaxed, threads, why };
}

function runnable(tier, host) {
  if (!host.simd) return host.why.simd;
  if (tier.includes('relaxed') && !host.relaxed) return host.why.relaxed;
  if (tier.includes('threads') && !host.threads) return host.why.threads;
  return null;
}

// The module factories: static strings, so that bundlers see every file.
const LOADERS = {
  simd: () => import('./mxcore.mjs'),
  threads: () => import('./threads/mxcore.mjs'),
  'relaxed-simd': () => import('./relaxed-simd/mxcore.mjs'),
  'relaxed-simd-threads': () => import('./relaxed-simd-threads/mxcore.mjs'),
};

// The threaded tiers' pool size: the default thread count minus the caller, or MXW_NUM_THREADS - 1
// in Node. Returns the default thread count; the pool is that minus one, and at least one worker.
// The module starts with none (mxwPoolSize 0): csrc/core/parallel.c adds them when first wanted
// (js/api.mjs). Nothing waits for a worker to load (scripts/patch-glue.mjs): they load on their
// own threads, and the kernels use each from when it runs, the calls before on the caller.
async function defaultThreads() {
  let cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  if (isNode) {
    const env = Number(process.env.MXW_NUM_THREADS);
    if (Number.isInteger(env) && env >= 1) return Math.min(env, 16);
    const os = await nodeBuiltin('os');
    cores = os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  }
  return Math.max(1, Math.min(cores, 4));
}

// Instantiates the chosen tier: {module, tier, requested, fallbacks}.
// The entry (dist/index.mjs, generated) starts loading the core before the API's modules are
// parsed: the wasm compiles and the threaded tiers' workers start meanwhile (threads tier:
// import 84 -> 68 ms). core.mjs then takes that load (or starts it, imported without the entry):
// one load per realm for every copy of core.mjs. Its errors carry `mxwMessage`: core.mjs turns
// them into MXNetError as a direct load would.
let preloaded = null;
export function preloadCore() {
  if (!preloaded) {
    preloaded = loadCore((msg) => Object.assign(new Error(msg), { mxwMessage: msg }));
    preloaded.catch(() => {}); // reported when core.mjs awaits it
  }
  return preloaded;
}

export async function loadCore(wrapError) {
  const host = hostSupport();
  const envTier = isNode ? process.env.MXW_TIER || null : null;
  const requested = state.requested ?? envTier;
  const fallbacks = [];
  let order;
  if (requested) {
    if (!TIERS.includes(requested)) throw wrapError(`unknown tier '${requested}' in MXW_TIER (tiers: ${TIERS.join(', ')})`);
    const why = runnable(requested, host);
    if (why) throw wrapError(`the '${requested}' tier cannot run here: ${why}`);
    order = [requested];
  } else {
    // A browser page's main thread cannot block (no Atomics.wait there), so the pool's waits
    // would spin: threads are chosen automatically only in workers (a subpath still forces them).
    const mainThread = !isNode && typeof document === 'object' && typeof window === 'object';
    order = TIERS.filter((t) => {
      let why = runnable(t, host);
      if (!why && mainThread && t.includes('threads')) why = "a page's main thread cannot block: run mxnet-wasm in a Worker to use threads";
      if (why) fallbacks.push({ tier: t, reason: why });
      return !why;
    });
  }
  for (const tier of order) {
    let factory, early;
    try {
      // the compile and the glue's import both start within this turn (see earlyCompile)
      const compiling = earlyCompile(tier); // throws when the tier's .wasm is missing: as not built
      const glue = LOADERS[tier]();
      glue.catch(() => {}); // (its failure is seen below, or does not matter after a compile's)
      early = await compiling;
      factory = (await glue).default;
    } catch (e) {
      // a tier not built here (the simd tier always is)
      if (requested || tier === 'simd') throw wrapError(`the '${tier}' tier is not built (${e && e.message ? e.message : e}); is dist/ complete?`);
      fallbacks.push({ tier, reason: 'not built' });
      continue;
    }
    const threads = tier.includes('threads') ? await defaultThreads() : 1;
    const poolSize = tier.includes('threads') ? Math.max(1, threads - 1) : 0;
    try {
      const opts = { ...(early ? early.options : await locateOptions(tier)), ...memoryOption(tier),
        ...(tier.includes('threads') ? { mxwPoolSize: 0 } : {}) }; // (the pool's workers are added when wanted: js/api.mjs)
      const module = await (early ? Promise.race([factory(opts), early.failed]) : factory(opts));
      // A split tier's deferred part (wasm/split_pre.js) loads at its first use, synchronously:
      // on a page's main thread it is fetched and compiled in the background now instead, so
      // that its first use does not block the page on a synchronous request.
      if (!isNode && typeof document === 'object' && typeof window === 'object') module.mxwPrefetchDeferred?.();
      state.loaded = tier;
      return { module, tier, requested: requested ?? null, fallbacks, poolSize, defaultThreads: threads };
    } catch (e) {
      if (requested || tier === 'simd') throw wrapError(`cannot instantiate the '${tier}' tier (${e && e.message ? e.message : e})`);
      fallbacks.push({ tier, reason: `failed to instantiate: ${e && e.message ? e.message : e}` });
    }
  }
  throw wrapError('no tier of mxcore.wasm can run here');
}
