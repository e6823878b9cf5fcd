// The build tiers (issue 10): forced subpaths load their tier, the automatic choice falls back
// when relaxed SIMD is unavailable, mx.features() tells the truth, setNumThreads / getNumThreads,
// threaded results bit-identical to one thread of the same tier, relaxed results within 1e-5
// (relative) of the simd tier, and a threaded process that exits by itself.
//
// Each configuration runs in a child process (a realm loads one tier). The computations are
// checked against float64 references written here, so every tier is also proven right on its own.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
const built = (tier) => existsSync(path.join(ROOT, 'dist', tier === 'simd' ? '' : tier, 'mxcore.wasm'));
const relaxedBuilt = built('relaxed-simd') && built('relaxed-simd-threads');

// Runs `body` (module code; `mx` is the package imported from `entry`) in a fresh Node; the
// last line it prints is JSON, returned parsed.
function child(entry, body, { flags = [], env = {}, timeout = 120000 } = {}) {
  const code = `const mx = await import(${JSON.stringify(entry)});\n${body}`;
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', code], {
    cwd: ROOT, encoding: 'utf8', timeout, maxBuffer: 64 * 2 ** 20, env: { ...process.env, MXW_TIER: '', ...env },
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: r.status === 0 ? JSON.parse(r.stdout.trim().split('\n').pop()) : null };
}
const flagsFor = (tier) => (tier.includes('relaxed') ? [RELAXED_FLAG] : []);

// Deterministic inputs (an LCG), the same in every child and here.
const LCG = `function fill(n, seed) { const a = new Float32Array(n); let s = seed >>> 0;
  for (let i = 0; i < n; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; a[i] = s / 2 ** 32 - 0.5; } return a; }`;
// eslint-disable-next-line no-new-func
const fill = new Function(`${LCG}; return fill;`)();

// A workload touching the GEMM, convolution, pooling, normalization, softmax, elementwise ops and
// reductions, at sizes the pool splits. Prints the outputs' bytes (base64) and values.
const WORKLOAD = `${LCG}
const { nd } = mx;
const threads = Number(process.env.WORKLOAD_THREADS || 0);
if (threads) mx.setNumThreads(threads);
const out = {};
const A = nd.array(fill(301 * 203, 1)).reshape([301, 203]);
const B = nd.array(fill(203 * 157, 2)).reshape([203, 157]);
out.dot = nd.dot(A, B);
const x = nd.array(fill(2 * 8 * 30 * 30, 3)).reshape([2, 8, 30, 30]);
const w = nd.array(fill(16 * 8 * 3 * 3, 4)).reshape([16, 8, 3, 3]);
out.conv = nd.Convolution(x, w, { kernel: [3, 3], num_filter: 16, pad: [1, 1], no_bias: true });
const dw = nd.array(fill(8 * 1 * 3 * 3, 5)).reshape([8, 1, 3, 3]);
out.depthwise = nd.Convolution(x, dw, { kernel: [3, 3], num_filter: 8, num_group: 8, stride: [2, 2], pad: [1, 1], no_bias: true });
out.pool = nd.Pooling(out.conv, { kernel: [2, 2], stride: [2, 2], pool_type: 'max' });
const g = nd.ones([16]), b = nd.zeros([16]), m = nd.zeros([16]), v = nd.ones([16]);
out.bn = nd.BatchNorm(out.conv, g, b, m, v, { fix_gamma: false, use_global_stats: true });
out.softmax = nd.softmax(out.dot, { axis: -1 });
out.tanh = nd.tanh(out.dot);
out.sum = nd.sum(out.conv, { axis: [0, 2, 3] });
// a hybridized graph: conv + relu fused, conv + BatchNorm + relu folded, batch items over the pool
mx.random.seed(7);
const net = new mx.gluon.nn.HybridSequential();
net.add(new mx.gluon.nn.Conv2D(12, 3, { padding: 1, inChannels: 8, activation: 'relu' }),
  new mx.gluon.nn.Conv2D(8, 3, { padding: 1, inChannels: 12 }), new mx.gluon.nn.BatchNorm({ inChannels: 8 }),
  new mx.gluon.nn.Activation('relu'), new mx.gluon.nn.Flatten());
net.initialize();
net.hybridize();
out.fused = net.forward(nd.array(fill(6 * 8 * 20 * 20, 6)).reshape([6, 8, 20, 20]));
const res = {};
for (const [k, a] of Object.entries(out)) {
  const t = a.toTypedArray();
  res[k] = { shape: a.shape, b64: Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString('base64') };
}
console.log(JSON.stringify({ features: mx.features(), out: res }));
`;
const decode = (o) => new Float32Array(Uint8Array.from(Buffer.from(o.b64, 'base64')).buffer);

// float64 references of the GEMM and the convolution (NCHW, OIHW, pad 1, stride 1).
function refDot() {
  const a = fill(301 * 203, 1), bb = fill(203 * 157, 2), c = new Float64Array(301 * 157);
  for (let i = 0; i < 301; i++) for (let k = 0; k < 203; k++) { const av = a[i * 203 + k]; for (let j = 0; j < 157; j++) c[i * 157 + j] += av * bb[k * 157 + j]; }
  return c;
}
function refConv() {
  const x = fill(2 * 8 * 30 * 30, 3), w = fill(16 * 8 * 9, 4), y = new Float64Array(2 * 16 * 30 * 30);
  for (let n = 0; n < 2; n++) for (let f = 0; f < 16; f++) for (let i = 0; i < 30; i++) for (let j = 0; j < 30; j++) {
    let s = 0;
    for (let c = 0; c < 8; c++) for (let p = 0; p < 3; p++) for (let q = 0; q < 3; q++) {
      const ii = i + p - 1, jj = j + q - 1;
      if (ii >= 0 && ii < 30 && jj >= 0 && jj < 30) s += x[((n * 8 + c) * 30 + ii) * 30 + jj] * w[((f * 8 + c) * 3 + p) * 3 + q];
    }
    y[((n * 16 + f) * 30 + i) * 30 + j] = s;
  }
  return y;
}
function assertClose(got, want, tol, what) {
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]));
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  assert.ok(worst <= tol * scale, `${what}: max |diff| ${worst} > ${tol} x ${scale}`);
}
const REF = { dot: refDot(), conv: refConv() };

const TIERS = ['simd', 'threads', 'relaxed-simd', 'relaxed-simd-threads'];
const results = {};
function workload(tier, threads = 0) {
  const key = `${tier}/${threads}`;
  if (!results[key]) {
    const r = child(`mxnet-wasm/${tier}`, WORKLOAD, { flags: flagsFor(tier), env: { WORKLOAD_THREADS: String(threads), MXW_NUM_THREADS: '3' } });
    assert.equal(r.status, 0, r.stderr);
    results[key] = r.json;
  }
  return results[key];
}

for (const tier of TIERS) {
  test(`'mxnet-wasm/${tier}' loads the ${tier} tier, and its results match float64 references`, { skip: !built(tier) && `the ${tier} tier is not built (bash scripts/setup.sh installs clang-19 for the relaxed tiers)` }, () => {
    const r = workload(tier);
    assert.equal(r.features.tier, tier);
    assert.equal(r.features.requested, tier);
    assert.equal(r.features.threads, tier.includes('threads'));
    assert.equal(r.features.relaxedSimd, tier.includes('relaxed'));
    assert.equal(r.features.numThreads, tier.includes('threads') ? 3 : 1); // MXW_NUM_THREADS=3
    assertClose(decode(r.out.dot), REF.dot, 1e-5, `${tier} dot`);
    assertClose(decode(r.out.conv), REF.conv, 1e-5, `${tier} conv`);
  });
}

for (const tier of ['threads', 'relaxed-simd-threads']) {
  test(`${tier}: every output bit-identical at 1, 2 and 3 threads`, { skip: !built(tier) && `the ${tier} tier is not built` }, () => {
    const one = workload(tier, 1);
    assert.equal(one.features.numThreads, 1);
    for (const n of [2, 3]) {
      const many = workload(tier, n);
      assert.equal(many.features.numThreads, n);
      for (const k of Object.keys(one.out)) {
        assert.deepEqual(many.out[k].shape, one.out[k].shape, k);
        if (many.out[k].b64 !== one.out[k].b64) {
          const a = decode(one.out[k]), b = decode(many.out[k]);
          const i = a.findIndex((v, j) => !Object.is(v, b[j]));
          assert.fail(`${k} at ${n} threads differs from 1 thread: element ${i} is ${b[i]}, not ${a[i]}`);
        }
      }
    }
  });
}

test('relaxed-simd results are within 1e-5 (relative to the largest value) of the simd tier', { skip: !relaxedBuilt && 'the relaxed tiers are not built' }, () => {
  const plain = workload('simd');
  for (const tier of ['relaxed-simd', 'relaxed-simd-threads']) {
    const relaxed = workload(tier);
    for (const k of Object.keys(plain.out)) {
      const a = decode(relaxed.out[k]), b = decode(plain.out[k]);
      assert.equal(a.length, b.length);
      assertClose(a, Float64Array.from(b), 1e-5, `${tier} ${k}`);
    }
  }
});

test('the automatic choice: threads + relaxed with the V8 flag; without it, falls back and says why', { skip: !relaxedBuilt && 'the relaxed tiers are not built' }, () => {
  const body = 'console.log(JSON.stringify(mx.features()));';
  const withFlag = child('mxnet-wasm', body, { flags: [RELAXED_FLAG] });
  assert.equal(withFlag.status, 0, withFlag.stderr);
  assert.equal(withFlag.json.tier, 'relaxed-simd-threads');
  assert.equal(withFlag.json.requested, null);
  assert.deepEqual(withFlag.json.fallbacks, []);
  const without = child('mxnet-wasm', body);
  assert.equal(without.status, 0, without.stderr);
  assert.equal(without.json.tier, 'threads');
  assert.equal(without.json.relaxedSimd, false);
  assert.deepEqual(without.json.fallbacks.map((f) => f.tier), ['relaxed-simd-threads', 'relaxed-simd']);
  assert.match(without.json.fallbacks[0].reason, /--experimental-wasm-relaxed-simd/);
  // a forced relaxed tier without the flag is an error naming the flag, not a silent fallback
  const forced = child('mxnet-wasm/relaxed-simd', body);
  assert.notEqual(forced.status, 0);
  assert.match(forced.stderr, /MXNetError: mxnet-wasm: the 'relaxed-simd' tier cannot run here: .*--experimental-wasm-relaxed-simd/);
  // MXW_TIER forces a tier too
  const env = child('mxnet-wasm', body, { env: { MXW_TIER: 'simd' } });
  assert.equal(env.json.tier, 'simd');
  assert.equal(env.json.requested, 'simd');
  const bad = child('mxnet-wasm', body, { env: { MXW_TIER: 'fast' } });
  assert.match(bad.stderr, /unknown tier 'fast' in MXW_TIER/);
});

test('setNumThreads / getNumThreads: the pool size on a threaded tier, 1 on a single-thread tier', () => {
  const body = `const r = {};
    r.start = mx.getNumThreads();
    r.one = [mx.setNumThreads(1), mx.getNumThreads(), mx.features().numThreads];
    r.three = [mx.setNumThreads(3), mx.getNumThreads()];
    r.many = [mx.setNumThreads(16), mx.getNumThreads(), mx.features().maxThreads];
    try { mx.setNumThreads(0); } catch (e) { r.err = e.name + ': ' + e.message; }
    console.log(JSON.stringify(r));`;
  const t = child('mxnet-wasm/threads', body, { env: { MXW_NUM_THREADS: '3' } });
  assert.equal(t.status, 0, t.stderr);
  assert.equal(t.json.start, 3);
  assert.deepEqual(t.json.one, [1, 1, 1]);
  assert.deepEqual(t.json.three, [3, 3]);
  assert.deepEqual(t.json.many, [3, 3, 3]); // clamped to the pool the module started with
  assert.match(t.json.err, /MXNetError: setNumThreads takes a positive integer, got 0/);
  const s = child('mxnet-wasm/simd', body);
  assert.equal(s.json.start, 1);
  assert.deepEqual(s.json.three, [1, 1]);
  assert.deepEqual(s.json.many, [1, 1, 1]);
});

test('a threaded process ends by itself when its work is done (the pool holds no event-loop reference)', () => {
  const t0 = Date.now();
  const r = child('mxnet-wasm/threads', `const a = mx.nd.ones([512, 512]);
    console.log(JSON.stringify({ v: mx.nd.dot(a, a).sum().asscalar() }));`, { timeout: 30000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.json.v, 512 * 512 * 512);
  assert.ok(Date.now() - t0 < 30000);
});

test('threaded tier: the import starts no worker; the first parallel call, or else the first task after the import, does', () => {
  // The pool starts empty (csrc/core/parallel.c, js/api.mjs): a worker's start-up would run beside
  // the import and the first calls. Seen through Node's active resources (a Worker holds a
  // MessagePort) and, for the worker that a parallel call starts, the kernels' retained buffers as
  // in the test below; features() gives the default thread count from the import on.
  const ports = 'process.getActiveResourcesInfo().filter((r) => r === "MessagePort").length';
  const one = child('mxnet-wasm/threads', `mx.setNumThreads(1);
    const a = mx.nd.ones([512, 512]); mx.nd.dot(a, a).dispose();
    console.log(JSON.stringify({ scratch: mx.memory().scratchBytes }));`, { env: { MXW_NUM_THREADS: '2' } });
  assert.equal(one.status, 0, one.stderr);
  const sync = child('mxnet-wasm/threads', `const atImport = ${ports}, numThreads = mx.features().numThreads;
    const a = mx.nd.ones([512, 512]);
    const t0 = Date.now();
    let scratch = 0, v = 0;
    do { const y = mx.nd.dot(a, a); v = y.sum().asscalar(); y.dispose(); scratch = mx.memory().scratchBytes; }
    while (scratch <= ${one.json.scratch} && Date.now() - t0 < 10000);
    console.log(JSON.stringify({ atImport, numThreads, afterCalls: ${ports}, scratch, v }));`, { env: { MXW_NUM_THREADS: '2' } });
  assert.equal(sync.status, 0, sync.stderr);
  assert.deepEqual([sync.json.atImport, sync.json.numThreads, sync.json.afterCalls], [0, 2, 1]);
  assert.ok(sync.json.scratch > one.json.scratch, `${sync.json.scratch} bytes, one thread ${one.json.scratch}`);
  assert.equal(sync.json.v, 512 ** 3);
  const idle = child('mxnet-wasm/threads', `const atImport = ${ports};
    await new Promise((resolve) => setTimeout(resolve, 0));
    console.log(JSON.stringify({ atImport, afterTask: ${ports} }));`, { env: { MXW_NUM_THREADS: '2' } });
  assert.equal(idle.status, 0, idle.stderr);
  assert.deepEqual(idle.json, { atImport: 0, afterTask: 1 });
});

test('threaded tier: the pool\'s worker joins the kernels while the caller runs synchronously after the import', () => {
  // The module does not wait for its workers to load (scripts/patch-glue.mjs); a worker takes
  // part once it runs, without the caller yielding to the event loop. Observed through the
  // kernels' retained buffers: a split GEMM packs panels on each thread, so memory().scratchBytes
  // is larger once the worker takes part than at one thread.
  const body = (threads) => `mx.setNumThreads(${threads});
    const a = mx.nd.ones([512, 512]);
    const t0 = Date.now();
    let scratch = 0, calls = 0, v = 0;
    do { const y = mx.nd.dot(a, a); v = y.sum().asscalar(); y.dispose(); scratch = mx.memory().scratchBytes; calls++; }
    while (${threads} > 1 && scratch <= Number(process.env.ONE_THREAD_SCRATCH) && Date.now() - t0 < 10000);
    console.log(JSON.stringify({ scratch, calls, v }));`;
  const one = child('mxnet-wasm/threads', body(1), { env: { MXW_NUM_THREADS: '2' } });
  assert.equal(one.status, 0, one.stderr);
  const two = child('mxnet-wasm/threads', body(2),
    { env: { MXW_NUM_THREADS: '2', ONE_THREAD_SCRATCH: String(one.json.scratch) } });
  assert.equal(two.status, 0, two.stderr);
  assert.ok(two.json.scratch > one.json.scratch, `2 threads: ${two.json.scratch} bytes after ${two.json.calls} calls, 1 thread: ${one.json.scratch}`);
  assert.equal(one.json.v, 512 ** 3);
  assert.equal(two.json.v, 512 ** 3);
});

test('threaded tier: memory growth leaves the views valid (arrays written before and after a growth read back)', () => {
  const body = `${LCG}
    const before = mx.memory().wasmHeapBytes;
    const a = mx.nd.array(fill(1000, 7));
    const big = mx.nd.zeros([64, 1024, 1024]); // 256 MiB: the memory grows
    const grown = mx.memory().wasmHeapBytes;
    const b = mx.nd.array(fill(1000, 8));
    const c = mx.nd.dot(a.reshape([10, 100]), b.reshape([100, 10]));
    console.log(JSON.stringify({ before, grown, a: Array.from(a.toTypedArray()), c: Array.from(c.toTypedArray()),
      shared: mx.nd.ones([2]).toTypedArray().buffer instanceof SharedArrayBuffer, big: big.shape }));`;
  const r = child('mxnet-wasm/threads', body);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.json.grown > r.json.before + 200 * 2 ** 20, `${r.json.before} -> ${r.json.grown}`);
  assert.deepEqual(r.json.a, Array.from(fill(1000, 7)));
  const a = fill(1000, 7), b = fill(1000, 8);
  const want = new Float64Array(100);
  for (let i = 0; i < 10; i++) for (let j = 0; j < 10; j++) for (let k = 0; k < 100; k++) want[i * 10 + j] += a[i * 100 + k] * b[k * 10 + j];
  assertClose(r.json.c, want, 1e-5, 'dot after growth');
  assert.equal(r.json.shared, false, 'toTypedArray copies out of the shared memory');
});

test('Block.dispose() frees the kernels\' retained buffers on every thread of the pool, not only the caller\'s', () => {
  // a convolution and a product large enough to be split: each thread packs its own GEMM panels
  // and im2col columns, which it keeps between calls (memory().scratchBytes counts all threads')
  const body = `${LCG}
    mx.setNumThreads(2);
    const net = new mx.gluon.nn.HybridSequential();
    net.add(new mx.gluon.nn.Conv2D(32, 3, { padding: 1, inChannels: 16 }), new mx.gluon.nn.Dense(64));
    net.initialize();
    const y = net.forward(mx.nd.array(fill(4 * 16 * 48 * 48, 3)).reshape([4, 16, 48, 48]));
    const held = mx.memory().scratchBytes;
    y.dispose();
    net.dispose();
    const after = mx.memory().scratchBytes;
    // and the kernels grow them back on the next call
    const a = mx.nd.array(fill(256 * 256, 4)).reshape([256, 256]);
    const v = mx.nd.dot(a, a).sum().asscalar();
    console.log(JSON.stringify({ held, after, again: mx.memory().scratchBytes, v }));`;
  for (const tier of ['threads', 'simd']) {
    if (!built(tier)) continue;
    const r = child(`mxnet-wasm/${tier}`, body);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.json.held > 65536, `${tier}: ${r.json.held} bytes held after the forward`);
    assert.equal(r.json.after, 0, `${tier}: every thread's buffers freed`);
    assert.ok(r.json.again > 0, tier);
    const a = fill(256 * 256, 4), col = new Float64Array(256), row = new Float64Array(256);
    for (let i = 0; i < 256; i++) for (let k = 0; k < 256; k++) { row[i] += a[i * 256 + k]; col[k] += a[i * 256 + k]; }
    let want = 0; // sum(A·A) = Σ_k (Σ_i A[i,k]) (Σ_j A[k,j])
    for (let k = 0; k < 256; k++) want += col[k] * row[k];
    assert.ok(Math.abs(r.json.v - want) < 1e-3 * Math.max(1, Math.abs(want)), `${tier}: ${r.json.v} vs ${want}`);
  }
});
