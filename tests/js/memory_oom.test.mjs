// Running out of memory (issue 14): every allocation failure is an MXNetError that says "out of
// memory", what needed how many bytes, what the heap holds in how many live arrays, and that
// disposing frees it; never a parse error from a reader; and after disposing, the same instance
// works again. The heap is capped with MXW_MAX_MEMORY_MB (setMemoryLimit) so that a test runs out
// at 96 MiB instead of 4 GiB. And the heap does grow past 2 GiB: arrays placed there read and
// write correctly (addresses above 2^31 are negative as i32 in JS).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Runs module code in a fresh Node on the simd tier with the heap capped; returns its last JSON line.
function child(body, maxMb) {
  const code = `const mx = await import('mxnet-wasm'); const { nd, sym, gluon } = mx;\n${body}`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 2 ** 20,
    env: { ...process.env, MXW_TIER: 'simd', ...(maxMb ? { MXW_MAX_MEMORY_MB: String(maxMb) } : {}) },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const OOM = /^(Operator \w+: )?out of memory: .+ needs \d+ bytes .*the wasm heap is [\d.]+ MiB; \d+ live arrays and cached graphs hold [\d.]+ MiB\); dispose\(\) blocks and arrays no longer in use to free memory/;

test('array creation past the limit: the error says so; after dispose() the instance works', () => {
  const r = child(`
    const held = [];
    let message = null, name = null;
    try { for (;;) held.push(nd.ones([4, 2 ** 20])); } catch (e) { message = e.message; name = e.name; }
    for (const a of held) a.dispose();
    const again = nd.ones([4, 2 ** 20]);
    console.log(JSON.stringify({ message, name, held: held.length, sum: nd.sum(again).toTypedArray()[0] }));`, 96);
  assert.equal(r.name, 'MXNetError');
  assert.match(r.message, OOM);
  assert.match(r.message, /an array of shape \(4, 1048576\) and dtype float32 needs 16777216 bytes/);
  assert.ok(r.held >= 3 && r.held <= 5, `${r.held} arrays of 16 MiB fit in 96 MiB`);
  assert.equal(r.sum, 4 * 2 ** 20); // sum of ones, by hand
});

test('the symbol JSON reader out of memory: an out-of-memory error, not a parse error', () => {
  const r = child(`
    // a valid graph of 20,000 nodes (~1 MB of JSON, several times that as a parse tree)
    const nodes = [{ op: 'null', name: 'x', inputs: [] }];
    for (let i = 1; i < 20000; i++) nodes.push({ op: 'relu', name: 'r' + i, inputs: [[i - 1, 0, 0]] });
    const json = JSON.stringify({ nodes, arg_nodes: [0], heads: [[19999, 0, 0]], attrs: { mxnet_version: ['int', 10901] } });
    // fill the heap in 1 MiB arrays, then give back three: room for the text, not for the tree
    const held = [];
    try { for (;;) held.push(nd.zeros([2 ** 18])); } catch (e) { /* full */ }
    for (const a of held.splice(0, 3)) a.dispose();
    let message = null;
    try { sym.fromJSON(json); } catch (e) { message = e.message; }
    for (const a of held) a.dispose();
    const s = sym.fromJSON(json);
    console.log(JSON.stringify({ message, bytes: json.length, loaded: s.listArguments() }));`, 64);
  assert.match(r.message, OOM);
  assert.match(r.message, /reading the symbol JSON \(\d+ bytes of text\)/);
  assert.doesNotMatch(r.message, /parse error/);
  assert.deepEqual(r.loaded, ['x']); // the same text loads once memory is free
});

test('the heap grows past 2 GiB: arrays there read, write and compute correctly', () => {
  const r = child(`
    const { M } = await import('mxnet-wasm/dist/core.mjs').catch(() => import(${JSON.stringify(path.join(ROOT, 'dist/core.mjs'))}));
    const arrs = [];
    for (let i = 0; i < 5; i++) arrs.push(nd.full([150 * 2 ** 20], i + 1)); // 5 x 600 MiB
    const high = arrs.filter((a) => (M._mxw_ndarray_data(a.handle) >>> 0) >= 2 ** 31);
    const last = high[high.length - 1];
    const v = Array.from(last.get([2 ** 20, 2 ** 20 + 4]).toTypedArray());
    last.set([5, 7], 9);
    const w = Array.from(last.get([4, 8]).toTypedArray());
    const s = nd.sum(last.get([0, 1000])).toTypedArray()[0];
    console.log(JSON.stringify({ high: high.length, v, w, s }));`);
  assert.ok(r.high >= 1, 'an array lies above 2 GiB');
  assert.deepEqual(r.v, [5, 5, 5, 5]); // nd.full(..., 5), by hand
  assert.deepEqual(r.w, [5, 9, 9, 5]);
  assert.equal(r.s, 5 * 1000 - 2 * 5 + 2 * 9);
});
