// gluon.utils (js/gluon_utils.mjs): split_data and split_and_load against MXNet 1.9.1's
// slicing worked by hand (gluon/utils.py: the first size % num_slice slices take one extra
// row), clip_global_norm against a float64 computation in JS, check_sha1 against known SHA-1
// digests (FIPS 180 test vectors).
import test from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, gluon } = mx;
const { utils } = gluon;
const values = (x) => Array.from(x.toTypedArray(), Number);
// The context recorded on an array by its creator (context.mjs's onContext; NDArray.context reports it).
const ctxOf = (a) => String(a._ctx ?? a.context);
const throwsNaming = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message));

test('Python names and camelCase aliases', () => {
  assert.equal(utils.splitData, utils.split_data);
  assert.equal(utils.splitAndLoad, utils.split_and_load);
  assert.equal(utils.clipGlobalNorm, utils.clip_global_norm);
  assert.equal(utils.checkSha1, utils.check_sha1);
});

test('split_data: even and uneven slices along batch_axis', () => {
  const x = nd.arange(10);
  // 10 rows in 3 slices: not even
  throwsNaming(() => utils.split_data(x, 3), /cannot be evenly split into 3 slices/);
  // uneven: divmod(10, 3) = (3, 1), so one slice of 4 then two of 3: [0, 4), [4, 7), [7, 10)
  const parts = utils.split_data(x, 3, { even_split: false });
  assert.deepEqual(parts.map((p) => p.shape), [[4], [3], [3]]);
  assert.deepEqual(parts.map(values), [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  // 11 rows in 4 slices: divmod = (2, 3): 3, 3, 3, 2
  assert.deepEqual(utils.split_data(nd.arange(11), 4, 0, false).map((p) => p.shape[0]), [3, 3, 3, 2]);
  // even: 8 rows of a (8, 2) array in 4 slices of 2 rows
  const y = nd.arange(16).reshape([8, 2]);
  const even = utils.splitData(y, 4);
  assert.deepEqual(even.map((p) => p.shape), [[2, 2], [2, 2], [2, 2], [2, 2]]);
  assert.deepEqual(even[1].toArray(), [[4, 5], [6, 7]]);
  // batch_axis 1: (2, 6) in 3 slices of 2 columns; (2, 5) unevenly in 2: 3 and 2 columns
  const z = nd.arange(12).reshape([2, 6]);
  const cols = utils.split_data({ data: z, num_slice: 3, batch_axis: 1 });
  assert.deepEqual(cols.map((p) => p.toArray()), [[[0, 1], [6, 7]], [[2, 3], [8, 9]], [[4, 5], [10, 11]]]);
  const w = nd.arange(10).reshape([2, 5]);
  assert.deepEqual(utils.split_data(w, 2, 1, false).map((p) => p.toArray()), [[[0, 1, 2], [5, 6, 7]], [[3, 4], [8, 9]]]);
  // one slice is the whole array (a list of one)
  const one = utils.split_data(x, 1);
  assert.equal(one.length, 1);
  assert.deepEqual(values(one[0]), values(x));
  throwsNaming(() => utils.split_data(x, 0), /num_slice/);
  throwsNaming(() => utils.split_data(x, 2, 1), /batch_axis 1/);
  throwsNaming(() => utils.split_data([1, 2], 2), /'data'/);
  throwsNaming(() => utils.split_data(x), /missing required argument 'num_slice'/);
});

test('split_and_load: one slice per context, recorded on it', () => {
  const x = nd.arange(8).reshape([4, 2]);
  const ctxs = [mx.cpu(0), mx.cpu(1)];
  const parts = utils.split_and_load(x, ctxs);
  assert.equal(parts.length, 2);
  assert.deepEqual(parts[0].toArray(), [[0, 1], [2, 3]]);
  assert.deepEqual(parts[1].toArray(), [[4, 5], [6, 7]]);
  assert.deepEqual(parts.map((p) => ctxOf(p)), ['cpu(0)', 'cpu(1)']);
  // uneven along axis 1 over 2 contexts; plain nested arrays go through nd.array
  const q = utils.splitAndLoad([[1, 2, 3], [4, 5, 6]], ctxs, { batchAxis: 1, evenSplit: false });
  assert.deepEqual(q.map((p) => p.toArray()), [[[1, 2], [4, 5]], [[3], [6]]]);
  assert.equal(q[0].dtype, 'float32');
  throwsNaming(() => utils.split_and_load(nd.arange(5), ctxs), /cannot be evenly split into 2 slices/);
  // one context: the data itself when it is there already, else a copy on that context
  assert.equal(utils.split_and_load(x, [mx.cpu(0)])[0], x);
  const moved = utils.split_and_load(x, [mx.cpu(3)])[0];
  assert.notEqual(moved, x);
  assert.equal(ctxOf(moved), 'cpu(3)');
  assert.deepEqual(moved.toArray(), x.toArray());
  throwsNaming(() => utils.split_and_load(x, 'cpu'), /'ctx_list'/);
});

test('clip_global_norm: in place, against a float64 computation', () => {
  const r = rng(9);
  const shapes = [[3, 4], [5], [2, 2, 2]];
  const data = shapes.map((s) => r.uniform(s.reduce((a, b) => a * b, 1), -2, 2));
  const arrays = data.map((d, i) => nd.array(d, { shape: shapes[i] }));
  let sq = 0;
  for (const d of data) for (const v of d) sq += v * v; // the float32 values, summed in float64
  const total = Math.sqrt(sq);
  assert.ok(total > 1, 'the test data must need clipping');
  const got = utils.clip_global_norm(arrays, 1.0);
  assert.equal(typeof got, 'number');
  assertClose([got], [total], { rtol: 1e-6, atol: 0, msg: 'returned norm' });
  const scale = 1.0 / (total + 1e-8);
  arrays.forEach((a, i) => assertClose(values(a), Array.from(data[i], (v) => v * scale), { rtol: 2e-6, atol: 1e-7, msg: `array ${i}` }));
  // the clipped arrays' global norm is max_norm
  let after = 0;
  for (const a of arrays) for (const v of values(a)) after += v * v;
  assertClose([Math.sqrt(after)], [1.0], { rtol: 1e-5, atol: 0 });

  // a norm under max_norm leaves the arrays as they were (scale min(.., 1) = 1)
  const small = [nd.array([0.3, 0.4])];
  assertClose([utils.clipGlobalNorm(small, 10)], [0.5], { rtol: 1e-6, atol: 0 });
  assertClose(values(small[0]), [Math.fround(0.3), Math.fround(0.4)], { rtol: 0, atol: 0 });

  // check_isfinite=False: the norm comes back as an NDArray (Python skips the sync)
  const nd3 = [nd.array([3, 4], { dtype: 'float64' })];
  const n = utils.clip_global_norm(nd3, 1, { check_isfinite: false });
  assert.ok(n instanceof mx.NDArray);
  assert.deepEqual(values(n), [5]);
  assertClose(values(nd3[0]), [3 / (5 + 1e-8), 4 / (5 + 1e-8)], { rtol: 1e-12, atol: 0 });

  // a non-finite norm is warned about (Python's UserWarning), once
  const warned = [];
  const orig = console.warn;
  console.warn = (...m) => warned.push(m.join(' '));
  try {
    const total2 = utils.clip_global_norm([nd.array([1, NaN])], 1);
    assert.ok(Number.isNaN(total2));
  } finally {
    console.warn = orig;
  }
  assert.equal(warned.length, 1);
  assert.match(warned[0], /nan or inf is detected/);
  throwsNaming(() => utils.clip_global_norm([], 1), /must not be empty/);
  throwsNaming(() => utils.clip_global_norm([nd.array([1])]), /missing required argument 'max_norm'/);
});

test('check_sha1: WebCrypto SHA-1 of any readable source', async () => {
  const abc = new TextEncoder().encode('abc');
  // FIPS 180-2 test vectors
  assert.equal(await utils.check_sha1(abc, 'a9993e364706816aba3e25717850c26c9cd0d89d'), true);
  assert.equal(await utils.checkSha1(new Uint8Array(0), 'da39a3ee5e6b4b0d3255bfef95601890afd80709'), true);
  const long = new TextEncoder().encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq');
  assert.equal(await utils.check_sha1(long.buffer, '84983e441c3bd26ebaae4aa1f95129e5e54670f1'), true);
  // a different hash, or the same in upper case (Python compares the hex strings exactly)
  assert.equal(await utils.check_sha1(abc, 'a9993e364706816aba3e25717850c26c9cd0d89e'), false);
  assert.equal(await utils.check_sha1(abc, 'A9993E364706816ABA3E25717850C26C9CD0D89D'), false);
  // a file path (Node) and a Blob
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-sha1-'));
  try {
    const file = path.join(dir, 'abc.bin');
    writeFileSync(file, 'abc');
    assert.equal(await utils.check_sha1(file, 'a9993e364706816aba3e25717850c26c9cd0d89d'), true);
    assert.equal(await utils.check_sha1({ filename: file, sha1Hash: 'a9993e364706816aba3e25717850c26c9cd0d89d' }), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(await utils.check_sha1(new Blob(['abc']), 'a9993e364706816aba3e25717850c26c9cd0d89d'), true);
  await assert.rejects(utils.check_sha1(abc), (e) => e instanceof mx.MXNetError && /'sha1_hash'/.test(e.message));
  await assert.rejects(utils.check_sha1(path.join(tmpdir(), 'mxw-no-such-file'), 'x'), mx.MXNetError);
});
