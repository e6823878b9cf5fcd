// The entry's two ways of loading the API (js/api_script.mjs): in Node >= 20.16 the bundle's
// script form (dist/api.bundle.js) compiled with V8's code cache made at build time
// (scripts/code-cache.mjs), else the ES module bundle. Each way runs in a fresh Node and must give
// the same results, checked against values worked by hand here; features().codeCache must say
// which way ran: 'used', 'stale' (a cache made from another script), 'rejected' (other V8 flags),
// 'absent', 'off'.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist');
const hasScript = existsSync(path.join(DIST, 'api.bundle.js'));
const hasCache = existsSync(path.join(DIST, 'api.bundle.cache'));
const syncBuiltins = typeof process.getBuiltinModule === 'function';

// A computation through eager ops, a hybridized block and file writing, with its hand-worked
// results: [[1, 2], [3, 4]] . [[5], [6]] = [[17], [39]]; relu(17 - 20) = 0, relu(39 - 20) = 19;
// the Dense(1) block with weight [[1, -1]] and bias 0.5 on [[3, 1]] gives 2.5.
const BODY = `
const { nd, gluon } = mx;
const dot = nd.dot(nd.array([[1, 2], [3, 4]]), nd.array([[5], [6]]));
const relu = nd.relu(dot.sub(20));
const net = new gluon.nn.Dense(1, { inUnits: 2 });
net.initialize();
net.weight.setData(nd.array([[1, -1]]));
net.bias.setData(nd.array([0.5]));
net.hybridize();
const dense = net(nd.array([[3, 1]]));
const file = process.env.SAVE_TO;
nd.save(file, { dot });
const back = (await nd.load(file)).dot;
console.log(JSON.stringify({ codeCache: mx.features().codeCache, dot: Array.from(dot.toTypedArray()),
  relu: Array.from(relu.toTypedArray()), dense: Array.from(dense.toTypedArray()), back: Array.from(back.toTypedArray()) }));
`;
function run(dist, { flags = [], env = {} } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-api-script-'));
  try {
    const code = `const mx = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'index.mjs')).href)});\n${BODY}`;
    const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', code], {
      cwd: ROOT, encoding: 'utf8', timeout: 120000,
      env: { ...process.env, MXW_TIER: 'simd', MXW_API_SCRIPT: '', SAVE_TO: path.join(dir, 'a.params'), ...env },
    });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
function assertResults(r) {
  assert.deepEqual(r.dot, [17, 39]);
  assert.deepEqual(r.relu, [0, 19]);
  assert.deepEqual(r.dense, [2.5]);
  assert.deepEqual(r.back, [17, 39]);
}

const why = !hasScript ? 'dist/api.bundle.js is not built' : !syncBuiltins ? 'this Node (< 20.16) loads the ES module bundle only' : false;

test('the default import compiles the script form from the build\'s code cache', { skip: why || (!hasCache && 'dist/api.bundle.cache is not built') }, () => {
  const r = run(DIST);
  assert.equal(r.codeCache, 'used');
  assertResults(r);
});

test('with relaxed SIMD on (Node 20\'s flag) the cache made under that flag is used', {
  skip: why || (!existsSync(path.join(DIST, 'api.bundle.relaxed-simd.cache')) && 'dist/api.bundle.relaxed-simd.cache is not built (no relaxed SIMD flag in this Node)'),
}, () => {
  const r = run(DIST, { flags: ['--experimental-wasm-relaxed-simd'] });
  assert.equal(r.codeCache, 'used');
  assertResults(r);
});

test('MXW_API_SCRIPT=0 imports the ES module bundle, with the same results', { skip: why }, () => {
  const r = run(DIST, { env: { MXW_API_SCRIPT: '0' } });
  assert.equal(r.codeCache, 'off');
  assertResults(r);
});

test('Node without synchronous built-ins (< 20.16) imports the ES module bundle; files still write', () => {
  // process.getBuiltinModule removed before the package loads, as on Node 20.0 - 20.15: the
  // built-ins the modules read while evaluating are preloaded (core_load.mjs)
  const pre = `data:text/javascript,${encodeURIComponent('delete process.getBuiltinModule;')}`;
  const r = run(DIST, { flags: ['--import', pre] });
  assert.equal(r.codeCache, 'off');
  assertResults(r);
});

test('a cache made from another script is not used (stale); other V8 flags make V8 reject it', { skip: why || (!hasCache && 'dist/api.bundle.cache is not built') }, () => {
  const copy = mkdtempSync(path.join(tmpdir(), 'mxw-dist-'));
  try {
    cpSync(DIST, copy, { recursive: true });
    appendFileSync(path.join(copy, 'api.bundle.js'), '\n// changed after the cache was made\n');
    const stale = run(copy);
    assert.equal(stale.codeCache, 'stale');
    assertResults(stale);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  // V8 checks its version and flags: a cache made without --stack-size does not serve a process with it
  const rejected = run(DIST, { flags: ['--stack-size=2000'] });
  assert.equal(rejected.codeCache, 'rejected');
  assertResults(rejected);
});

test('sourceHash: FNV-1a over little-endian 32-bit words, xor the length, as worked here; one changed byte always changes it', async () => {
  const { sourceHash } = await import(pathToFileURL(path.join(ROOT, 'js/api_script.mjs')).href);
  // hand-worked: the empty input is the FNV offset basis 0x811c9dc5 (xor length 0); "a" is one word
  // 0x00000061: (0x811c9dc5 ^ 0x61) * 0x01000193 mod 2^32 = 0x811c9da4 * 0x01000193 = 0xe40c292c, xor 1
  assert.equal(sourceHash(new Uint8Array(0)), 0x811c9dc5);
  assert.equal(sourceHash(Uint8Array.of(0x61)), 0xe40c292d);
  // the rule in plain JS (DataView over a zero-padded copy), on lengths around word and page edges
  const rule = (bytes) => {
    const pad = new Uint8Array(Math.ceil(bytes.length / 4) * 4);
    pad.set(bytes);
    const view = new DataView(pad.buffer);
    let h = 0x811c9dc5;
    for (let i = 0; i < pad.length; i += 4) h = Math.imul(h ^ view.getInt32(i, true), 0x01000193);
    return (h ^ bytes.length) >>> 0;
  };
  for (const n of [1, 2, 3, 4, 5, 7, 65535, 65536, 65537, 300001, 9]) { // (shorter after longer: stale bytes beyond n ignored)
    const bytes = new Uint8Array(n);
    for (let i = 0; i < n; i++) bytes[i] = (i * 131 + 7) & 255;
    const h = sourceHash(bytes);
    assert.equal(h, rule(bytes), `n = ${n}`);
    bytes[n >> 1] ^= 1;
    assert.notEqual(sourceHash(bytes), h, `n = ${n}, a byte changed`);
  }
});
