// gluon.data (js/data.mjs) as MXNet 1.9.1's gluon/data/dataset.py, sampler.py and dataloader.py:
// samplers and DataLoader batches against hand-worked index lists (keep / discard / rollover
// over several passes), shuffling as a seeded permutation of every index, datasets' transform /
// transformFirst / filter / shard / take / sample, default and custom batchify, lazy
// (Promise) datasets under for await, argument binding, and MXNet's error messages.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';

const { nd, gluon } = mx;
const { data } = gluon;
const throwsWith = (fn, re) => assert.throws(fn, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));
const vals = (x) => Array.from(x.toTypedArray(), Number);
const range = (a, b) => Array.from({ length: b - a }, (_, i) => a + i);

test('the namespace: classes of gluon.data and gluon.data.vision.transforms', () => {
  for (const k of ['Dataset', 'SimpleDataset', 'ArrayDataset', 'Sampler', 'SequentialSampler', 'RandomSampler', 'FilterSampler',
    'BatchSampler', 'DataLoader']) assert.equal(typeof data[k], 'function', k);
  assert.equal(typeof data.vision.transforms.ToTensor, 'function');
  assert.equal(data.default_batchify_fn, data.defaultBatchifyFn);
});

test('SequentialSampler and RandomSampler', () => {
  assert.deepEqual([...new data.SequentialSampler(5)], [0, 1, 2, 3, 4]);
  const s = new data.SequentialSampler(4, 3);
  assert.deepEqual([...s], [3, 4, 5, 6]);
  assert.equal(s.length, 4);
  assert.deepEqual([...new data.SequentialSampler({ length: 2, start: 1 })], [1, 2]);

  const r = new data.RandomSampler(50);
  assert.equal(r.length, 50);
  mx.random.seed(7);
  const a = [...r], b = [...r];
  assert.deepEqual([...a].sort((x, y) => x - y), range(0, 50), 'a permutation of every index');
  assert.deepEqual([...b].sort((x, y) => x - y), range(0, 50));
  assert.notDeepEqual(a, b, 'a new order each pass');
  assert.notDeepEqual(a, range(0, 50));
  mx.random.seed(7);
  assert.deepEqual([...r], a, 'mx.random.seed makes the order reproducible');
  assert.deepEqual([...new data.RandomSampler(0)], []);
  throwsWith(() => new data.SequentialSampler(), /missing required argument 'length'/);
  throwsWith(() => new data.SequentialSampler(2.5), /argument 'length' must be an integer/);
});

test('BatchSampler: keep / discard / rollover over three passes (MXNet docstring example first)', () => {
  const keep = new data.BatchSampler(new data.SequentialSampler(10), 3, 'keep');
  assert.deepEqual([...keep], [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]);
  assert.equal(keep.length, 4);
  const discard = new data.BatchSampler(new data.SequentialSampler(10), 3, 'discard');
  assert.deepEqual([...discard], [[0, 1, 2], [3, 4, 5], [6, 7, 8]]);
  assert.deepEqual([...discard], [[0, 1, 2], [3, 4, 5], [6, 7, 8]]);
  assert.equal(discard.length, 3);
  // rollover: the leftover [9] opens the next pass; 11 indices make 3 batches and leave [8, 9];
  // the third pass has 12 = 4 batches and nothing left over.
  const roll = new data.BatchSampler(new data.SequentialSampler(10), { batch_size: 3, last_batch: 'rollover' });
  assert.equal(roll.length, 3);
  assert.deepEqual([...roll], [[0, 1, 2], [3, 4, 5], [6, 7, 8]]);
  assert.equal(roll.length, 3); // (1 + 10) / 3
  assert.deepEqual([...roll], [[9, 0, 1], [2, 3, 4], [5, 6, 7]]);
  assert.equal(roll.length, 4); // (2 + 10) / 3
  assert.deepEqual([...roll], [[8, 9, 0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  assert.equal(roll.length, 3);
  // default last_batch is 'keep'; an exact division leaves nothing
  assert.deepEqual([...new data.BatchSampler(new data.SequentialSampler(4), 2)], [[0, 1], [2, 3]]);
  // MXNet checks last_batch when iterating or asking the length
  const bad = new data.BatchSampler(new data.SequentialSampler(5), 2, 'drop');
  throwsWith(() => [...bad], /last_batch must be one of 'keep', 'discard', or 'rollover', but got drop/);
  throwsWith(() => bad.length, /last_batch must be one of 'keep', 'discard', or 'rollover', but got drop/);
  // any iterable with a length works as the source sampler
  assert.deepEqual([...new data.BatchSampler([5, 6, 7], 2)], [[5, 6], [7]]);
});

test('ArrayDataset, SimpleDataset, plain arrays and NDArrays as datasets', () => {
  const x = nd.array([[1, 2], [3, 4], [5, 6]]);
  const y = nd.array([7, 8, 9]);
  const ds = new data.ArrayDataset(x, y, ['a', 'b', 'c']);
  assert.equal(ds.length, 3);
  const [xi, yi, zi] = ds.get(1);
  assert.deepEqual(xi.toArray(), [3, 4]);
  assert.equal(yi, 8, 'a 1-D NDArray gives numbers (Python: asnumpy)');
  assert.equal(zi, 'b');
  const one = new data.ArrayDataset(x);
  assert.deepEqual(one.get(2).toArray(), [5, 6], 'one array: the sample itself, not a tuple');
  assert.deepEqual([...new data.ArrayDataset([1, 2, 3])], [1, 2, 3]);
  throwsWith(() => new data.ArrayDataset(), /Needs at least 1 arrays/);
  throwsWith(() => new data.ArrayDataset(x, [1, 2]), /All arrays must have the same length; array\[0\] has length 3 while array\[2\] has 2\./);

  const sd = new data.SimpleDataset([10, 20, 30]);
  assert.equal(sd.length, 3);
  assert.equal(sd.get(-1), 30, 'negative indices as Python lists');
  throwsWith(() => sd.get(3), /index 3 is out of range/);
  assert.deepEqual(new data.SimpleDataset(x).get(0).toArray(), [1, 2]);
  assert.deepEqual([...new data.SimpleDataset({ data: 'xyz'.split('') })], ['x', 'y', 'z']);
});

test('custom Dataset subclass: get(i) and length (as a getter or assigned)', () => {
  class Squares extends data.Dataset {
    constructor(n) { super(); this.length = n; }
    get(i) { return i * i; }
  }
  const sq = new Squares(5);
  assert.deepEqual([...sq], [0, 1, 4, 9, 16]);
  assert.deepEqual([...sq.take(2)], [0, 1]);
  class Bare extends data.Dataset {}
  throwsWith(() => new Bare().length, /must define length/);
  throwsWith(() => new Bare().get(0), /must implement get\(idx\)/);
});

test('transform, transformFirst (lazy and eager), filter, shard, take, sample', () => {
  const ds = new data.ArrayDataset([1, 2, 3, 4], [10, 20, 30, 40]);
  let calls = 0;
  const t = ds.transform((a, b) => { calls++; return [a + b, b]; });
  assert.equal(calls, 0, 'lazy: nothing computed yet');
  assert.deepEqual(t.get(2), [33, 30]);
  assert.equal(calls, 1);
  const eager = ds.transform((a, b) => { calls++; return a * b; }, false);
  assert.equal(calls, 5, 'lazy=false: every sample now');
  assert.ok(eager instanceof data.SimpleDataset);
  assert.deepEqual([...eager], [10, 40, 90, 160]);
  assert.deepEqual(ds.transformFirst((a) => -a).get(1), [-2, 20]);
  assert.deepEqual([...ds.transformFirst((a) => a * 2, { lazy: false })], [[2, 10], [4, 20], [6, 30], [8, 40]]);
  assert.equal(new data.SimpleDataset([1, 2]).transformFirst((a) => a + 1).get(0), 2, 'a one-field sample: fn(x)');
  // filter: samples for which fn is true
  const f = ds.filter(([a]) => a % 2 === 0);
  assert.equal(f.length, 2);
  assert.deepEqual([...f], [[2, 20], [4, 40]]);
  // shard: 10 samples in 3 shards -> 4, 3, 3 (the first len % n shards hold one more)
  const ten = new data.SimpleDataset(range(0, 10));
  assert.deepEqual([...ten.shard(3, 0)], [0, 1, 2, 3]);
  assert.deepEqual([...ten.shard(3, 1)], [4, 5, 6]);
  assert.deepEqual([...ten.shard({ num_shards: 3, index: 2 })], [7, 8, 9]);
  throwsWith(() => ten.shard(3, 3), /Shard index of out bound: 3 out of 3/);
  throwsWith(() => ten.shard(3, -1), /Index must be non-negative/);
  throwsWith(() => ten.shard(0, -1), /Number of shards must be greater than 0/);
  assert.deepEqual([...ten.take(3)], [0, 1, 2]);
  assert.equal(ten.take(20).length, 10);
  assert.equal(ten.take(null).length, 10);
  assert.deepEqual([...ten.sample(new data.SequentialSampler(3, 5))], [5, 6, 7]);
  throwsWith(() => ten.sample([1, 2]), /Invalid sampler type: Array\. Expected gluon\.data\.Sampler instead\./);
  throwsWith(() => ten.transform(5), /argument 'fn' must be a function/);
});

test('DataLoader: batch counts and contents for keep / discard / rollover over two passes', () => {
  const x = nd.array(range(0, 10).map((i) => [i, 100 + i]));
  const y = nd.array(range(0, 10));
  const ds = new data.ArrayDataset(x, y);
  const labels = (loader) => [...loader].map(([d, l]) => {
    assert.deepEqual(vals(d), vals(l).flatMap((i) => [i, 100 + i]), 'data rows follow their labels');
    return vals(l);
  });
  const keep = new data.DataLoader(ds, 4);
  assert.equal(keep.length, 3);
  assert.deepEqual(labels(keep), [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
  assert.deepEqual(labels(keep), [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], 'again on the next pass');
  const discard = new data.DataLoader(ds, { batchSize: 4, lastBatch: 'discard' });
  assert.equal(discard.length, 2);
  assert.deepEqual(labels(discard), [[0, 1, 2, 3], [4, 5, 6, 7]]);
  const roll = new data.DataLoader(ds, { batch_size: 4, last_batch: 'rollover' });
  assert.equal(roll.length, 2);
  assert.deepEqual(labels(roll), [[0, 1, 2, 3], [4, 5, 6, 7]]);
  assert.equal(roll.length, 3); // (2 + 10) / 4
  assert.deepEqual(labels(roll), [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]);
  const [d0, l0] = [...keep][0];
  assert.deepEqual(d0.shape, [4, 2]);
  assert.equal(d0.dtype, 'float32');
  assert.equal(l0.dtype, 'float32');
  assert.deepEqual(l0.shape, [4]);
});

test('DataLoader shuffle: every pass a permutation of all samples, reproducible with mx.random.seed', () => {
  const ds = new data.ArrayDataset(range(0, 23));
  const loader = new data.DataLoader(ds, { batchSize: 5, shuffle: true });
  const pass = () => [...loader].map((b) => vals(b));
  mx.random.seed(42);
  const p1 = pass(), p2 = pass();
  for (const p of [p1, p2]) {
    assert.deepEqual(p.map((b) => b.length), [5, 5, 5, 5, 3]);
    assert.deepEqual(p.flat().sort((a, b) => a - b), range(0, 23));
  }
  assert.notDeepEqual(p1.flat(), p2.flat());
  mx.random.seed(42);
  assert.deepEqual(pass(), p1);
});

test('DataLoader: samplers, batch_sampler, batchify_fn, workers accepted, argument errors with MXNet messages', () => {
  const ds = new data.SimpleDataset(range(0, 6).map((i) => i * 10));
  const bs = new data.BatchSampler(new data.SequentialSampler(3, 2), 2);
  const viaBatchSampler = new data.DataLoader(ds, { batchSampler: bs });
  assert.deepEqual([...viaBatchSampler].map(vals), [[20, 30], [40]]);
  const viaSampler = new data.DataLoader(ds, 2, false, new data.SequentialSampler(4, 1), 'discard');
  assert.deepEqual([...viaSampler].map(vals), [[10, 20], [30, 40]]);
  // custom batchify: the raw samples
  const raw = new data.DataLoader(ds, { batch_size: 4, batchify_fn: (samples) => samples.map((s) => s + 1) });
  assert.deepEqual([...raw], [[1, 11, 21, 31], [41, 51]]);
  // num_workers / thread_pool / prefetch / pin_memory are accepted (in-process here), same batches
  const workers = new data.DataLoader(ds, { batchSize: 4, numWorkers: 2, threadPool: true, prefetch: 3, pinMemory: true, timeout: 10 });
  assert.deepEqual([...workers].map(vals), [[0, 10, 20, 30], [40, 50]]);
  const auto = new data.DataLoader(ds, { batchSize: 3, autoReload: true });
  assert.deepEqual([...auto].map(vals), [[0, 10, 20], [30, 40, 50]]);
  assert.deepEqual([...auto].map(vals), [[0, 10, 20], [30, 40, 50]]);

  throwsWith(() => new data.DataLoader(ds), /batch_size must be specified unless batch_sampler is specified/);
  throwsWith(() => new data.DataLoader(ds, { batchSize: 2, shuffle: true, sampler: new data.SequentialSampler(6) }),
    /shuffle must not be specified if sampler is specified/);
  throwsWith(() => new data.DataLoader(ds, { batchSize: 2, batchSampler: bs }),
    /batch_size, shuffle, sampler and last_batch must not be specified if batch_sampler is specified\./);
  throwsWith(() => new data.DataLoader(ds, { lastBatch: 'keep', batchSampler: bs }), /must not be specified if batch_sampler/);
  throwsWith(() => new data.DataLoader(ds, { batchSize: 2, timeout: 0 }), /timeout must be positive, given 0/);
  throwsWith(() => new data.DataLoader(ds, { batchSize: 2, workers: 1 }), /unknown argument 'workers'/);
  throwsWith(() => new data.DataLoader(ds, { batchSize: '2' }), /argument 'batch_size' must be an integer/);
  throwsWith(() => [...new data.DataLoader(ds, { batchSize: 4, lastBatch: 'drop' })], /last_batch must be one of/);
});

test('default_batchify_fn: stacks NDArrays, batches tuples field by field, numbers / BigInts / booleans / typed arrays', () => {
  const a = nd.array([[1, 2], [3, 4]]), b = nd.array([[5, 6], [7, 8]]);
  const st = data.defaultBatchifyFn([a, b]);
  assert.deepEqual(st.shape, [2, 2, 2]);
  assert.deepEqual(vals(st), [1, 2, 3, 4, 5, 6, 7, 8]);
  const [x, [y, z]] = data.defaultBatchifyFn([[a, [1, 2n]], [b, [3, 4n]]]);
  assert.deepEqual(x.shape, [2, 2, 2]);
  assert.deepEqual(vals(y), [1, 3]);
  assert.equal(y.dtype, 'float32');
  assert.equal(z.dtype, 'int64');
  assert.deepEqual(vals(z), [2, 4]);
  const flags = data.defaultBatchifyFn([true, false, true]);
  assert.equal(flags.dtype, 'bool');
  assert.deepEqual(vals(flags), [1, 0, 1]);
  const t = data.defaultBatchifyFn([Int32Array.of(1, 2, 3), Int32Array.of(4, 5, 6)]);
  assert.equal(t.dtype, 'int32');
  assert.deepEqual(t.shape, [2, 3]);
  assert.deepEqual(vals(t), [1, 2, 3, 4, 5, 6]);
  // an int64 1-D NDArray column keeps its dtype through ArrayDataset (samples are BigInts)
  const ids = nd.array([1, 2, 3], { dtype: 'int64' });
  const [batch] = [...new data.DataLoader(new data.ArrayDataset(ids), 3)];
  assert.equal(batch.dtype, 'int64');
  throwsWith(() => data.defaultBatchifyFn(['a', 'b']), /cannot batch samples of type string/);
  throwsWith(() => data.defaultBatchifyFn([1, 'b']), /cannot batch samples/);
});

test('lazy datasets: Promise samples batch under for await; plain for...of says to use for await', async () => {
  class Lazy extends data.Dataset {
    get length() { return 5; }
    get(i) { return new Promise((resolve) => setTimeout(() => resolve([nd.array([i, 10 - i]), i]), 5 - i)); }
  }
  const ds = new Lazy();
  const loader = new data.DataLoader(ds.transformFirst((x) => x.mul(2)), { batchSize: 2 });
  const seen = [];
  for await (const [d, l] of loader) seen.push([vals(d), vals(l)]);
  assert.deepEqual(seen, [[[0, 20, 2, 18], [0, 1]], [[4, 16, 6, 14], [2, 3]], [[8, 12], [4]]]);
  throwsWith(() => { for (const b of loader) void b; }, /sample 0 of the dataset is a Promise.*for await/);
  // an async transform on a synchronous dataset
  const asyncT = new data.SimpleDataset([1, 2, 3]).transform(async (v) => v * 10);
  const out = [];
  for await (const b of new data.DataLoader(asyncT, 2)) out.push(vals(b));
  assert.deepEqual(out, [[10, 20], [30]]);
  // for await over a synchronous dataset works too
  const sync = [];
  for await (const b of new data.DataLoader(new data.SimpleDataset([4, 5, 6]), 2)) sync.push(vals(b));
  assert.deepEqual(sync, [[4, 5], [6]]);
});

test('DataLoader frees what it creates per batch, never the dataset\'s own arrays', () => {
  const own = [nd.array([1, 2]), nd.array([3, 4]), nd.array([5, 6])];
  const loader = new data.DataLoader(new data.SimpleDataset(own).transform((x) => x.mul(10)), 2);
  const before = mx.memory().numArrays;
  for (const b of loader) b.dispose();
  assert.equal(mx.memory().numArrays, before, 'views, transform results and stacked inputs are freed');
  assert.deepEqual(own.map(vals), [[1, 2], [3, 4], [5, 6]], 'the dataset\'s arrays are still usable');
  const X = nd.array([[1, 2], [3, 4], [5, 6]]);
  const ad = new data.DataLoader(new data.ArrayDataset(X, [7, 8, 9]), { batchSize: 2 });
  const n0 = mx.memory().numArrays;
  for (const [d, l] of ad) { d.dispose(); l.dispose(); }
  assert.equal(mx.memory().numArrays, n0);
  assert.deepEqual(vals(X), [1, 2, 3, 4, 5, 6]);
});

test('default batchify stacks batches larger than one op call takes (64 inputs): 200 samples', async () => {
  const mxm = await import('mxnet-wasm');
  const xs = Array.from({ length: 200 }, (_, i) => mxm.nd.array([i, -i]));
  const loader = new mxm.gluon.data.DataLoader(new mxm.gluon.data.SimpleDataset(xs), { batchSize: 128, lastBatch: 'keep' });
  const batches = [...loader];
  const { deepEqual } = await import('node:assert/strict');
  deepEqual(batches.map((b) => b.shape), [[128, 2], [72, 2]]);
  const b1 = batches[1].toArray();
  deepEqual(b1[0], [128, -128]);
  deepEqual(b1[71], [199, -199]);
});
