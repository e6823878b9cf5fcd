// Peers benchmark (issue 10): mxnet-wasm against TensorFlow.js's WASM backend and ONNX Runtime Web
// on the same models with the same weights, at 1 and 2 threads, one process per (engine
// configuration, thread count), so that build tiers and thread pools never share a process.
//
//   node bench/peers.mjs          (npm run bench; build first: bash scripts/build.sh wasm; about 8 minutes
//                                 with the defaults and 16 engine configurations, 3 with RUNS=3 RUN_MS=200 WARM_MS=500)
//   env: RUNS (timed runs per engine and model, default 7), RUN_MS (one run, default 300),
//        WARM_MS (warm-up per engine and model, default 1000), ONLY=<model keys, comma-separated:
//        mlp,lenet,resnet18,mobilenetv2,gemm>, ENGINES=<substrings of engine ids, comma-separated>,
//        BROWSER=0 (Node only), STARTUP_RUNS (fresh processes per tier, default 5), PEAK_RUNS (default 7)
//
// What it does, in order:
// 1. references: a child builds every model's ONNX graph (bench/models.mjs -> bench/onnx_build.mjs)
//    and runs it with onnxruntime-node (native CPU, independent of every engine measured), writing
//    the graphs and outputs to a temporary folder;
// 2. peaks: a child measures the register-only f32x4 mul+add and relaxed_madd peaks (bench/peak.mjs)
//    at 1 and 2 threads (relaxed only where the host validates it; Node 20 with its flag), here and
//    again after the models (the better of the two is kept: load only ever lowers a peak);
// 3. engines: one child per configuration, in Node (bench/peers_child.mjs) or in headless Chromium
//    behind a cross-origin isolated page (bench/peers_browser.mjs, the engine in a worker): every
//    mxnet-wasm tier (MXW_TIER; "not built" when absent), tfjs-wasm (SIMD in Node; threaded-SIMD in
//    Chromium, where it can use threads), onnxruntime-web (numThreads 1 and 2, Node and Chromium);
// 4. per model: every engine's output is compared with the reference (engines that differ are not
//    timed), warmed up (V8 runs wasm on its baseline compiler first), then timed in RUNS rounds that
//    visit the engines in turn (so a load change on this shared machine hits all of them alike);
// 5. mxnet-wasm's GEMM on resident arrays as a fraction of its tier's peak; import -> first LeNet
//    inference (median of fresh processes, bench/startup.mjs); the .wasm sizes, raw and gzip.
// The table: median ms per inference; the ratio mxnet-wasm / best peer per host and thread count.
import os from 'node:os';
import path from 'node:path';
import { fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { MODELS } from './models.mjs';
import { median } from './common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const require = createRequire(import.meta.url);
const env = process.env;
const RUNS = Math.max(1, Number(env.RUNS ?? 7));
const RUN_MS = Number(env.RUN_MS ?? 300);
const WARM_MS = Number(env.WARM_MS ?? 1000);
const STARTUP_RUNS = Math.max(1, Number(env.STARTUP_RUNS ?? 5));
const CALL_TIMEOUT_MS = 15 * 60 * 1000;
const THREADS = [1, 2];
const TIERS = ['simd', 'relaxed-simd', 'threads', 'relaxed-simd-threads'];
const only = env.ONLY ? env.ONLY.split(',') : null;
const models = MODELS.filter((m) => !only || only.includes(m.key));
const log = (s) => process.stderr.write(`[peers] ${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- host facts -------------------------------------------------------------------------------------
// Relaxed SIMD: native here, behind Node 20's flag, or not at all.
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
const { peakSupported } = await import('./peak.mjs');
const relaxedNative = peakSupported('relaxed');
const relaxedFlag = !relaxedNative && spawnSync(process.execPath, [RELAXED_FLAG, '-e', '0']).status === 0;
const relaxedArgv = relaxedFlag ? [RELAXED_FLAG] : [];
let chromiumOk = env.BROWSER !== '0';
try { require.resolve('playwright-core'); statSync(env.CHROMIUM ?? '/usr/bin/chromium'); } catch { chromiumOk = false; }

// ---- engine configurations --------------------------------------------------------------------------
const configs = [];
for (const tier of TIERS) {
  for (const threads of tier.includes('threads') ? THREADS : [1]) {
    configs.push({ engine: 'mx', host: 'node', tier, threads });
  }
}
configs.push({ engine: 'tf', host: 'node', build: 'simd', threads: 1 });
for (const threads of THREADS) configs.push({ engine: 'ort', host: 'node', threads });
if (chromiumOk) {
  for (const threads of THREADS) configs.push({ engine: 'mx', host: 'chromium', threads });
  configs.push({ engine: 'tf', host: 'chromium', build: 'simd', threads: 1 });
  for (const threads of THREADS) configs.push({ engine: 'tf', host: 'chromium', build: 'threaded-simd', threads });
  for (const threads of THREADS) configs.push({ engine: 'ort', host: 'chromium', threads });
}
for (const c of configs) {
  const variant = c.tier ?? c.build;
  c.id = `${c.engine}${variant ? `-${variant}` : ''}@${c.threads}${c.host === 'chromium' ? '-chromium' : ''}`;
}
const wanted = env.ENGINES ? env.ENGINES.split(',') : null;
const selected = configs.filter((c) => !wanted || wanted.some((w) => c.id.includes(w)));

// ---- children ---------------------------------------------------------------------------------------
// A child answers each message with one message, in order; call() resolves with the answer, or with
// { error } when the child exits or does not answer in time.
function startChild(script, config, { env: extraEnv = {}, execArgv = [] } = {}) {
  const child = fork(path.join(here, script), [JSON.stringify(config)], {
    env: { ...process.env, ...extraEnv }, execArgv, serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  child.stdout.on('data', (d) => process.stderr.write(d)); // the report alone on stdout
  const waiting = [];
  let dead = null;
  child.on('message', (m) => waiting.shift()?.(m));
  child.on('exit', (code, signal) => {
    dead = `exited (${signal ?? code})`;
    while (waiting.length) waiting.shift()({ ready: false, ok: false, reason: dead, error: dead });
  });
  const next = (ms) => new Promise((resolve) => {
    if (dead) { resolve({ ready: false, ok: false, reason: dead, error: dead }); return; }
    const t = setTimeout(() => { child.kill(); }, ms);
    waiting.push((m) => { clearTimeout(t); resolve(m); });
  });
  return {
    child,
    first: () => next(CALL_TIMEOUT_MS),
    call(msg) { const p = next(CALL_TIMEOUT_MS); if (!dead) child.send(msg); return p; },
    async stop() {
      if (dead) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.send({ cmd: 'exit' });
      await Promise.race([gone, sleep(10_000)]);
      if (!dead) child.kill();
    },
  };
}

const data = mkdtempSync(path.join(os.tmpdir(), 'mxw-peers-'));
process.on('exit', () => rmSync(data, { recursive: true, force: true }));
const loadStart = os.loadavg();
const t0 = Date.now();

// 1. references
log(`references (onnxruntime-node) for ${models.map((m) => m.key).join(', ')} ...`);
const ref = startChild('peers_child.mjs', { engine: 'ref', data, models: models.map((m) => m.key) });
const refInfo = await ref.first();
if (!refInfo.ready) { console.error(`references failed: ${refInfo.reason}`); process.exit(1); }

// 2. peaks: { muladd: { <threads>: { gflops, shape } | null }, relaxed: {...} } or null
const measurePeaks = () => new Promise((resolve) => {
  log('peaks ...');
  const p = spawn(process.execPath, [...relaxedArgv, path.join(here, 'peak.mjs')], {
    env: { ...process.env, PEAK_JSON: '1', THREADS: THREADS.join(',') }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (d) => { out += d; });
  p.on('exit', () => { try { resolve(JSON.parse(out.trim().split('\n').pop())); } catch { resolve(null); } });
});
const peakBefore = await measurePeaks();

// 3-4. engines and models, one host at a time: Node's configurations are measured while no
// Chromium runs, then Chromium's. Chromium's processes (browser, GPU, the pages and their workers)
// take CPU even between runs: with both hosts' engines alive, Node's 2-thread runs were up to 8%
// slower (ResNet-18, relaxed-simd-threads, 2 threads: 33.4 ms against 31.7 with Node's engines
// alone), which skews every engine's 2-thread time and the 2-thread speedups.
const engines = []; // { config, ch, label, detail, letter }
const unavailable = [];
const rows = []; // { model, batch, ms: Map(engine -> ms), bad: Map(engine -> text) }
let failed = false;
const rowFor = (model, batch) => {
  let row = rows.find((r) => r.model === model && r.batch === batch);
  if (!row) rows.push(row = { model, batch, ms: new Map(), bad: new Map() });
  return row;
};
for (const host of ['node', 'chromium']) {
  const hostEngines = [];
  for (const config of selected.filter((c) => c.host === host)) {
    log(`starting ${config.id} ...`);
    const isMx = config.engine === 'mx';
    const opts = config.host === 'node' && isMx ? {
      env: { MXW_TIER: config.tier, MXW_NUM_THREADS: String(Math.max(...THREADS)) },
      execArgv: config.tier.includes('relaxed') ? relaxedArgv : [],
    } : {};
    const ch = startChild(config.host === 'node' ? 'peers_child.mjs' : 'peers_browser.mjs', { ...config, data }, opts);
    const r = await ch.first();
    if (r.ready) {
      const letter = String.fromCharCode(65 + engines.length);
      const e = { config, ch, label: r.label, detail: r.detail, checks: [], letter };
      engines.push(e);
      hostEngines.push(e);
    } else {
      unavailable.push({ config, reason: r.reason });
      await ch.stop();
    }
  }
  if (!hostEngines.length) continue;
  for (const model of models) {
    for (const batch of model.batches) {
      log(`${model.key} batch ${batch} (${host}): check and warm-up ...`);
      const row = rowFor(model, batch);
      const live = [];
      for (const e of hostEngines) {
        const r = await e.ch.call({ cmd: 'prepare', model: model.key, batch, warmMs: WARM_MS, runMs: RUN_MS });
        if (r.ok) { e.checks.push(r.rel); live.push(e); continue; }
        failed = true;
        row.bad.set(e, r.rel !== undefined ? 'MISMATCH' : 'ERROR');
        log(`${e.letter} ${e.config.id} on ${model.key} b${batch}: ${r.error}`);
      }
      log(`${model.key} batch ${batch} (${host}): ${RUNS} rounds over ${live.length} engines ...`);
      const times = new Map(live.map((e) => [e, []]));
      for (let round = 0; round < RUNS; round++) {
        const order = live.map((_, i) => live[(i + round) % live.length]);
        for (const e of order) {
          const r = await e.ch.call({ cmd: 'run' });
          if (r.ms !== undefined) times.get(e).push(r.ms);
          await sleep(20); // let the previous engine's spinning threads settle
        }
      }
      for (const [e, t] of times) if (t.length) row.ms.set(e, median(t));
      if (model.key === 'gemm') {
        for (const e of live.filter((x) => x.config.engine === 'mx')) {
          const k = await e.ch.call({ cmd: 'kernel', runs: Math.max(3, RUNS), runMs: RUN_MS });
          e.kernel = k.gflops;
        }
      }
    }
    for (const e of hostEngines) await e.ch.call({ cmd: 'release', model: model.key });
  }
  for (const e of hostEngines) await e.ch.stop();
}
const loadEnd = os.loadavg();
const peakAfter = await measurePeaks();
const peak = peakBefore ?? peakAfter;
for (const kind of ['muladd', 'relaxed']) {
  for (const t of THREADS) {
    const a = peakBefore?.[kind]?.[t], b = peakAfter?.[kind]?.[t];
    if (peak && (a || b)) peak[kind][t] = !a || (b && b.gflops > a.gflops) ? b : a;
  }
}
const elapsed = (Date.now() - t0) / 1000;

// 5. start-up and sizes
const startup = [];
for (const tier of [null, ...TIERS]) {
  if (tier && !engines.some((e) => e.config.host === 'node' && e.config.tier === tier)) continue;
  log(`import -> first LeNet inference, ${tier ?? 'default import'} ...`);
  const runs = [];
  for (let i = 0; i < STARTUP_RUNS; i++) {
    const argv = [...(tier?.includes('relaxed') ? relaxedArgv : []), path.join(here, 'startup.mjs')];
    const r = spawnSync(process.execPath, argv, {
      env: { ...process.env, ...(tier ? { MXW_TIER: tier } : {}) }, encoding: 'utf8', timeout: 60_000 });
    try { runs.push(JSON.parse(r.stdout.trim().split('\n').pop())); } catch { /* counted as missing */ }
  }
  if (runs.length) {
    startup.push({ tier: tier ?? `default (${runs[0].tier})`, first: median(runs.map((r) => r.firstMs)),
      imp: median(runs.map((r) => r.importMs)), proc: median(runs.map((r) => r.processMs)), n: runs.length });
  }
}
function wasmFiles(dir, out = []) {
  for (const f of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, f.name);
    if (f.isDirectory()) wasmFiles(p, out);
    else if (f.name.endsWith('.wasm')) out.push(p);
  }
  return out;
}
const size = (file) => {
  const b = readFileSync(file);
  return { raw: b.length, gz: gzipSync(b, { level: 9 }).length };
};
const sizes = wasmFiles(path.join(root, 'dist')).map((f) => ({ file: path.relative(root, f), ...size(f) }));
const peerWasm = [];
for (const p of ['@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm',
  '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm',
  'onnxruntime-web/dist/ort-wasm-simd-threaded.wasm']) {
  try { peerWasm.push({ file: p, ...size(path.join(root, 'node_modules', p)) }); } catch { /* not installed */ }
}

// ---- report -----------------------------------------------------------------------------------------
const fmtMs = (ms) => {
  if (ms === undefined) return '-';
  return ms.toFixed(ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 1 ? 2 : 3);
};
function table(header, body) {
  const w = header.map((h, i) => Math.max(String(h).length, ...body.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  return [line(header), line(w.map((n) => '-'.repeat(n))), ...body.map(line)].join('\n');
}
const cpu = os.cpus()[0]?.model ?? '?';
const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
const load = (l) => l.map((x) => x.toFixed(2)).join(' ');
console.log(`peers benchmark, ${when} UTC: Node ${process.version}, ${os.cpus().length} CPUs (${cpu}), ` +
  `${elapsed.toFixed(0)} s`);
console.log(`load average ${load(loadStart)} at the start, ${load(loadEnd)} at the end ` +
  '(a shared machine: other processes may have run)');
console.log('one inference = input copied in, forward, output copied out; ' +
  `median of ${RUNS} runs of ~${RUN_MS} ms per engine, after ${WARM_MS} ms of warm-up; the runs visit the engines ` +
  'of one host in turn (Node\'s engines first, then Chromium\'s, never both at once)');
console.log(`reference: ${refInfo.label}; every output is compared with it first (max |diff| / max |ref| within the ` +
  'model\'s tolerance, 1e-4, 1e-3 for ResNet and MobileNet; otherwise the engine is not timed)');
if (refInfo.arch) console.log(refInfo.arch);
console.log('');
console.log('engines (one process each):');
for (const e of engines) {
  const worst = e.checks.length ? Math.max(...e.checks).toExponential(1) : '-';
  const threads = `${e.config.threads} thread${e.config.threads > 1 ? 's' : ' '}`;
  console.log(`  ${e.letter}  ${e.config.host.padEnd(8)} ${threads}  ${e.label}  [max rel diff ${worst}]`);
  console.log(`        ${e.detail}`);
}
for (const u of unavailable) console.log(`  -  ${u.config.host.padEnd(8)} ${u.config.id}: ${u.reason}`);
console.log(`  notes: tfjs-backend-wasm 4.22 cannot use threads in Node: its WASM_HAS_MULTITHREAD_SUPPORT flag is
         false under Node (tfjs issue #3830), and forcing it fails (its pthread worker is a blob: URL, which
         Node's worker_threads refuse: ERR_WORKER_PATH); its threaded-SIMD build runs in Chromium here. It
         also caps its pool at navigator.hardwareConcurrency / 2, so its worker is told 2 x threads.`);
if (!chromiumOk) console.log('         Chromium configurations skipped (BROWSER=0, or no playwright-core / chromium).');

console.log('\nmedian ms per inference');
const rowName = (r) => `${r.model.name}, batch ${r.batch}`;
console.log(table(['model', ...engines.map((e) => e.letter)],
  rows.map((r) => [rowName(r), ...engines.map((e) => r.bad.get(e) ?? fmtMs(r.ms.get(e)))])));

// The ratio: the best mxnet-wasm configuration over the best peer configuration, each using at most
// T threads, on the same host.
console.log('\nmxnet-wasm / best peer (best configuration of each with at most T threads on the same host; ' +
  'target <= 0.8)');
const hosts = [...new Set(engines.map((e) => e.config.host))];
const cols = hosts.flatMap((h) => THREADS.map((t) => ({ h, t })));
const best = (r, pred) => {
  let b = null;
  for (const [e, ms] of r.ms) if (pred(e) && (!b || ms < b.ms)) b = { e, ms };
  return b;
};
const ratioRows = rows.map((r) => [rowName(r), ...cols.map(({ h, t }) => {
  const on = (e) => e.config.host === h && e.config.threads <= t;
  const m = best(r, (e) => on(e) && e.config.engine === 'mx'), p = best(r, (e) => on(e) && e.config.engine !== 'mx');
  return m && p ? `${(m.ms / p.ms).toFixed(2)} ${m.e.letter}/${p.e.letter}` : '-';
})]);
console.log(table(['model', ...cols.map(({ h, t }) => `${h} ${t}t`)], ratioRows));
const cells = ratioRows.flatMap((r) => r.slice(1)).filter((c) => c !== '-');
console.log(`${cells.filter((c) => parseFloat(c) <= 0.8).length} of ${cells.length} within the target`);

// Thread scaling: the same configuration at 1 and at 2 threads.
const pairs = [];
for (const e1 of engines.filter((e) => e.config.threads === 1)) {
  const same = (e) => ['engine', 'host', 'tier', 'build'].every((k) => e.config[k] === e1.config[k]);
  const e2 = engines.find((e) => e.config.threads === 2 && same(e));
  if (e2) pairs.push([e1, e2]);
}
if (pairs.length) {
  console.log('\n2-thread speedup: time at 1 thread / time at 2 threads, same configuration ' +
    '(target >= 1.8 on ResNet-18)');
  console.log(table(['model', ...pairs.map(([a, b]) => `${a.letter}/${b.letter}`)], rows.map((r) => [rowName(r),
    ...pairs.map(([a, b]) => (r.ms.has(a) && r.ms.has(b) ? (r.ms.get(a) / r.ms.get(b)).toFixed(2) : '-'))])));
}

console.log('\nregister-only f32x4 peak (Node, GFLOP/s: the best run of the fastest loop shape, before and after the ' +
  'models; bench/peak.mjs)');
const pk = (kind, t) => peak?.[kind]?.[t]?.gflops;
const pkCell = (kind, t) => {
  const p = peak?.[kind]?.[t];
  if (p) return `${p.gflops.toFixed(1)} (${p.shape})`;
  return kind === 'relaxed' && !relaxedNative && !relaxedFlag ? 'not on this host' : '-';
};
console.log(table(['', ...THREADS.map((t) => `${t} thread${t > 1 ? 's' : ''}`)], [
  ['f32x4 mul+add', ...THREADS.map((t) => pkCell('muladd', t))],
  ['f32x4.relaxed_madd', ...THREADS.map((t) => pkCell('relaxed', t))],
]));
if (relaxedFlag) {
  console.log(`(relaxed SIMD through Node's ${RELAXED_FLAG}, given to the peak and relaxed-tier processes)`);
}

const gemmRows = engines.filter((e) => e.kernel !== undefined).map((e) => {
  const kind = (e.config.tier ?? e.label).includes('relaxed') ? 'relaxed' : 'muladd';
  const p = e.config.host === 'node' ? pk(kind, e.config.threads) : undefined;
  const threads = `${e.config.threads} thread${e.config.threads > 1 ? 's' : ''}`;
  const name = `${e.letter} ${e.label.replace(/^mxnet-wasm \S+ /, '')}, ${threads}`;
  const of = p ? `${((100 * e.kernel) / p).toFixed(0)}% of ${kind === 'relaxed' ? 'relaxed_madd' : 'mul+add'}` : '-';
  return [name, e.kernel.toFixed(1), of];
});
if (gemmRows.length) {
  console.log('\nmxnet-wasm GEMM 1024^3 (nd.dot on arrays already in wasm memory) against its tier\'s peak ' +
    '(target >= 85%)');
  console.log(table(['engine', 'GFLOP/s', 'of peak (Node)'], gemmRows));
}

if (startup.length) {
  console.log(`\nimport -> first LeNet inference in a fresh Node process (median of ${STARTUP_RUNS}; target <= 50 ms)`);
  console.log(table(['tier', 'import', 'import + first inference', 'from process start'],
    startup.map((s) => [s.tier, `${s.imp.toFixed(0)} ms`, `${s.first.toFixed(0)} ms`, `${s.proc.toFixed(0)} ms`])));
}
console.log('\n.wasm sizes (target <= 250 KB gzip per tier; KB = 1024 bytes). A tier loads its mxcore.wasm; its\n'
  + 'mxcore.deferred.wasm loads at the first call of a function that inference and training of the usual models\n'
  + 'do not reach (scripts/split-profile.mjs): rare operators, float64 and integer kernels, ...');
const kb = (n) => `${(n / 1024).toFixed(0)} KB`;
console.log(table(['file', 'raw', 'gzip -9'], [...sizes, ...peerWasm.map((s) => ({ ...s, file: `(peer) ${s.file}` }))]
  .map((s) => [s.file, kb(s.raw), kb(s.gz)])));
if (failed) {
  console.log('\nFAILED: some engines\' outputs differ from the reference, or an engine failed (see the log above)');
  process.exitCode = 1;
}
