// data.mjs -- gluon.data: MXNet 1.9.1's python/mxnet/gluon/data/ dataset.py (Dataset,
// SimpleDataset, ArrayDataset), sampler.py (Sampler, SequentialSampler, RandomSampler,
// FilterSampler, BatchSampler) and dataloader.py (DataLoader, default_batchify_fn), plus
// gluon.data.vision.transforms (data/transforms.mjs).
//
// Python's protocols map as js-api.md says: `ds[i]` is `ds.get(i)`, `len(ds)` is `ds.length`;
// a custom Dataset defines those two, a custom Sampler `[Symbol.iterator]()` and `length`.
// A JS array is Python's tuple: an ArrayDataset's sample is `[x1[i], x2[i], ...]`, a transform
// receives its fields as separate arguments, and the default batchify function batches each
// field. Plain JS arrays, typed arrays and NDArrays can be used directly as datasets.
//
// Everything runs in-process: num_workers, thread_pool, prefetch, pin_memory and timeout are
// accepted and checked as MXNet does but there are no worker processes (num_workers > 0 loads
// the same batches, in order, in the calling thread). Datasets whose samples are Promises (lazy
// reads) iterate with `for await (const batch of loader)`.
import { MXNetError } from './core.mjs';
import { NDArray, invokeVisible, opId, array as ndArray, tidy } from './ndarray.mjs';
import { REQUIRED as R, bindArgs, defineSignature } from './signature.mjs';
import * as transforms from './data/transforms.mjs';

// Python's signatures (dataset.py, sampler.py, dataloader.py), bound by signature.mjs.
const SIG = Object.fromEntries([
  ['SimpleDataset', [['data', R, 'any']]],
  ['Dataset.filter', [['fn', R, 'function']]],
  ['Dataset.shard', [['num_shards', R, 'int'], ['index', R, 'int']]],
  ['Dataset.take', [['count', R, 'int?']]],
  ['Dataset.sample', [['sampler', R, 'any']]],
  ['Dataset.transform', [['fn', R, 'function'], ['lazy', true, 'bool']]],
  ['Dataset.transformFirst', [['fn', R, 'function'], ['lazy', true, 'bool']]],
  ['SequentialSampler', [['length', R, 'int'], ['start', 0, 'int']]],
  ['RandomSampler', [['length', R, 'int']]],
  ['FilterSampler', [['fn', R, 'function'], ['dataset', R, 'any']]],
  ['BatchSampler', [['sampler', R, 'any'], ['batch_size', R, 'int'], ['last_batch', 'keep', 'str']]],
  ['DataLoader', [['dataset', R, 'any'], ['batch_size', null, 'int'], ['shuffle', false, 'bool'],
    ['sampler', null, 'any'], ['last_batch', null, 'str'], ['batch_sampler', null, 'any'],
    ['batchify_fn', null, 'function'], ['num_workers', 0, 'int'], ['pin_memory', false, 'bool'],
    ['pin_device_id', 0, 'int'], ['prefetch', null, 'int'], ['thread_pool', false, 'bool'],
    ['timeout', 120, 'number'], ['auto_reload', false, 'bool']]],
].map(([name, params]) => [name, defineSignature(name, params)]));
const bind = (name, args) => bindArgs(SIG[name], args);

const isThenable = (v) => v !== null && (typeof v === 'object' || typeof v === 'function')
  && typeof v.then === 'function';
function typeName(v) {
  if (v === null) return 'null';
  if (typeof v === 'object' || typeof v === 'function') return v.constructor?.name ?? typeof v;
  return typeof v;
}

// len(x) of anything dataset-like.
export function lengthOf(x) {
  if (x !== null && x !== undefined && typeof x.length === 'number') return x.length;
  throw new MXNetError(`object of type '${typeName(x)}' has no len()`);
}
// x[i] of anything dataset-like: JS arrays and typed arrays index (negative from the end, as
// Python's lists), everything else (Datasets, NDArrays) through get(i).
export function itemAt(x, i) {
  if (Array.isArray(x) || ArrayBuffer.isView(x)) {
    const n = x.length;
    const k = i < 0 ? i + n : i;
    if (!Number.isInteger(k) || k < 0 || k >= n) {
      throw new MXNetError(`index ${i} is out of range for a sequence of length ${n}`);
    }
    return x[k];
  }
  if (x !== null && x !== undefined && typeof x.get === 'function') return x.get(i);
  throw new MXNetError(`object of type '${typeName(x)}' is not subscriptable`);
}

// `length` as an overridable accessor: subclasses define `get length()` or assign this.length.
function lengthAccessor(what) {
  return {
    get() { throw new MXNetError(`${this.constructor.name} must define length (Python's __len__) as a ${what}`); },
    set(v) {
      Object.defineProperty(this, 'length', { value: v, writable: true, configurable: true, enumerable: true });
    },
    configurable: true,
  };
}

// ---- datasets (dataset.py) -----------------------------------------------------------------------
// Abstract dataset: subclasses define get(idx) (__getitem__) and length (__len__).
export class Dataset {
  get(idx) { throw new MXNetError(`${this.constructor.name} must implement get(idx) (Python's __getitem__)`); }

  // Python iterates a dataset by index.
  *[Symbol.iterator]() {
    const n = lengthOf(this);
    for (let i = 0; i < n; i++) yield this.get(i);
  }

  // filter(fn): the samples for which fn(sample) is true (evaluated now, as FilterSampler).
  filter(...args) {
    const { fn } = bind('Dataset.filter', args);
    return new SampledDataset(this, new FilterSampler(fn, this));
  }

  // shard(num_shards, index): the index-th of num_shards contiguous parts; the first
  // len % num_shards parts hold one sample more.
  shard(...args) {
    const { numShards, index } = bind('Dataset.shard', args);
    if (!(index < numShards)) throw new MXNetError(`Shard index of out bound: ${index} out of ${numShards}`);
    if (!(numShards > 0)) throw new MXNetError('Number of shards must be greater than 0');
    if (!(index >= 0)) throw new MXNetError('Index must be non-negative');
    const length = lengthOf(this);
    const shardLen = Math.floor(length / numShards), rest = length % numShards;
    const start = shardLen * index + Math.min(index, rest);
    const end = start + shardLen + (index < rest ? 1 : 0);
    return new SampledDataset(this, new SequentialSampler(end - start, start));
  }

  // take(count): the first `count` samples (all of them when count is null or larger).
  take(...args) {
    let { count } = bind('Dataset.take', args);
    const n = lengthOf(this);
    if (count === null || count > n) count = n;
    return new SampledDataset(this, new SequentialSampler(count));
  }

  // sample(sampler): the samples at the indices the sampler yields.
  sample(...args) {
    const { sampler } = bind('Dataset.sample', args);
    if (!(sampler instanceof Sampler)) {
      throw new MXNetError(`Invalid sampler type: ${typeName(sampler)}. Expected gluon.data.Sampler instead.`);
    }
    return new SampledDataset(this, sampler);
  }

  // transform(fn, lazy = true): each sample through fn (a sample that is an array is spread into
  // fn's arguments). lazy = false transforms every sample now (a sync dataset only).
  transform(...args) {
    const { fn, lazy } = bind('Dataset.transform', args);
    const trans = new LazyTransformDataset(this, fn);
    if (lazy) return trans;
    const all = [...trans];
    if (all.some(isThenable)) {
      throw new MXNetError('transform(fn, lazy=false) needs synchronous samples; use lazy=true for a dataset whose '
        + 'samples are Promises');
    }
    return new SimpleDataset(all);
  }

  // transformFirst(fn, lazy = true): fn applied to the first field of each sample only.
  transformFirst(...args) {
    const { fn, lazy } = bind('Dataset.transformFirst', args);
    return this.transform(transformFirstClosure(fn), lazy);
  }
}
Object.defineProperty(Dataset.prototype, 'length', lengthAccessor('getter'));

// Wraps anything with a length and get(i)/[i]: a JS array, a typed array, an NDArray, a Dataset.
export class SimpleDataset extends Dataset {
  constructor(...args) {
    super();
    this._data = bind('SimpleDataset', args).data;
  }
  get length() { return lengthOf(this._data); }
  get(idx) { return itemAt(this._data, idx); }
}

function applyFn(fn, item) {
  if (isThenable(item)) return item.then((v) => applyFn(fn, v));
  return Array.isArray(item) ? fn(...item) : fn(item);
}

// _LazyTransformDataset: fn applied on each get (chained after the sample when it is a Promise).
class LazyTransformDataset extends Dataset {
  constructor(data, fn) {
    super();
    this._data = data;
    this._fn = fn;
  }
  get length() { return lengthOf(this._data); }
  get(idx) { return applyFn(this._fn, itemAt(this._data, idx)); }
}

// _TransformFirstClosure: (x, ...rest) -> [fn(x), ...rest], or fn(x) for a one-field sample.
function transformFirstClosure(fn) {
  return (x, ...rest) => {
    const y = fn(x);
    if (!rest.length) return y;
    return isThenable(y) ? y.then((v) => [v, ...rest]) : [y, ...rest];
  };
}

// _SampledDataset: the samples at the sampler's indices (listed once, at construction).
class SampledDataset extends Dataset {
  constructor(dataset, sampler) {
    super();
    this._dataset = dataset;
    this._sampler = sampler;
    this._indices = [...sampler];
  }
  get length() { return lengthOf(this._sampler); }
  get(idx) { return itemAt(this._dataset, itemAt(this._indices, idx)); }
}

// ArrayDataset(...arrays): sample i is [x1[i], x2[i], ...] (x1[i] alone for one array). A 1-D
// NDArray is read into a typed array first (Python's asnumpy), so its samples are numbers
// (BigInt for int64); other NDArrays give x.get(i) along axis 0.
export class ArrayDataset extends Dataset {
  constructor(...args) {
    super();
    if (args.length === 0) throw new MXNetError('Needs at least 1 arrays');
    this._length = lengthOf(args[0]);
    this._data = args.map((data, i) => {
      const n = lengthOf(data);
      if (n !== this._length) {
        // (the message numbers the arrays as MXNet 1.9.1's does)
        throw new MXNetError(`All arrays must have the same length; array[0] has length ${this._length} `
          + `while array[${i + 1}] has ${n}.`);
      }
      return data instanceof NDArray && data.ndim === 1 ? data.toTypedArray() : data;
    });
  }
  get(idx) {
    if (this._data.length === 1) return itemAt(this._data[0], idx);
    return this._data.map((d) => itemAt(d, idx));
  }
  get length() { return this._length; }
}

// ---- samplers (sampler.py) -----------------------------------------------------------------------
// Abstract sampler: subclasses define [Symbol.iterator]() and length.
export class Sampler {
  [Symbol.iterator]() {
    throw new MXNetError(`${this.constructor.name} must implement [Symbol.iterator]() (Python's __iter__)`);
  }
}
Object.defineProperty(Sampler.prototype, 'length', lengthAccessor('getter'));

// start, start + 1, ..., start + length - 1
export class SequentialSampler extends Sampler {
  constructor(...args) {
    super();
    const a = bind('SequentialSampler', args);
    this._length = a.length;
    this._start = a.start;
  }
  *[Symbol.iterator]() {
    for (let i = this._start; i < this._start + this._length; i++) yield i;
  }
  get length() { return this._length; }
}

// A random permutation of 0 .. n-1 from the library's seeded stream (mx.random.seed makes it
// reproducible; Python draws from numpy's global generator instead).
function permutation(n) {
  if (n <= 0) return new Int32Array(0);
  const idx = ndArray(Int32Array.from({ length: n }, (_, i) => i));
  const shuffled = invokeVisible(opId('_shuffle'), [idx], {});
  try {
    return shuffled.toTypedArray();
  } finally {
    idx.dispose();
    shuffled.dispose();
  }
}

// 0 .. length-1 in a new random order on every pass.
export class RandomSampler extends Sampler {
  constructor(...args) {
    super();
    this._length = bind('RandomSampler', args).length;
  }
  *[Symbol.iterator]() { for (const i of permutation(this._length)) yield i; }
  get length() { return this._length; }
}

// The indices of the samples for which fn(sample) is true (evaluated at construction).
export class FilterSampler extends Sampler {
  constructor(...args) {
    super();
    const { fn, dataset } = bind('FilterSampler', args);
    this._fn = fn;
    this._dataset = dataset;
    this._indices = [];
    const n = lengthOf(dataset);
    for (let i = 0; i < n; i++) {
      const sample = itemAt(dataset, i);
      if (isThenable(sample)) throw new MXNetError(`filter needs synchronous samples: sample ${i} is a Promise`);
      if (fn(sample)) this._indices.push(i);
    }
  }
  *[Symbol.iterator]() { yield* this._indices; }
  get length() { return this._indices.length; }
}

const lastBatchError = (v) => new MXNetError(
  `last_batch must be one of 'keep', 'discard', or 'rollover', but got ${v}`);

// Mini-batches (arrays of indices) of another sampler. last_batch: 'keep' yields a short last
// batch, 'discard' drops it, 'rollover' carries its indices into the next pass's first batch.
export class BatchSampler extends Sampler {
  constructor(...args) {
    super();
    const a = bind('BatchSampler', args);
    this._sampler = a.sampler;
    this._batchSize = a.batchSize;
    this._lastBatch = a.lastBatch;
    this._prev = [];
  }
  *[Symbol.iterator]() {
    let batch = this._prev;
    this._prev = [];
    for (const i of this._sampler) {
      batch.push(i);
      if (batch.length === this._batchSize) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length) {
      if (this._lastBatch === 'keep') yield batch;
      else if (this._lastBatch === 'discard') return;
      else if (this._lastBatch === 'rollover') this._prev = batch;
      else throw lastBatchError(this._lastBatch);
    }
  }
  get length() {
    const n = lengthOf(this._sampler), b = this._batchSize;
    if (this._lastBatch === 'keep') return Math.floor((n + b - 1) / b);
    if (this._lastBatch === 'discard') return Math.floor(n / b);
    if (this._lastBatch === 'rollover') return Math.floor((this._prev.length + n) / b);
    throw lastBatchError(this._lastBatch);
  }
}

// ---- batching (dataloader.py) --------------------------------------------------------------------
const TYPED_DTYPES = new Map([
  [Float32Array, 'float32'], [Float64Array, 'float64'], [Uint8Array, 'uint8'], [Int8Array, 'int8'],
  [Int32Array, 'int32'], [BigInt64Array, 'int64'], [Int16Array, 'int16'], [Uint16Array, 'uint16'],
  [Uint32Array, 'uint32'], [BigUint64Array, 'uint64'],
]);

// numpy.asarray(samples) -> nd.array: numbers batch to float32 (nd.array's default; Python's
// numpy would pick int64 or float64 for Python ints and floats), BigInts to int64, booleans to
// bool, equal-length typed arrays to an (N, len) array of their dtype.
function asBatchArray(data) {
  const first = data[0];
  if (typeof first === 'number') {
    if (!data.every((v) => typeof v === 'number')) throw batchTypeError(data);
    return ndArray(Float32Array.from(data));
  }
  if (typeof first === 'bigint') {
    if (!data.every((v) => typeof v === 'bigint')) throw batchTypeError(data);
    return ndArray(BigInt64Array.from(data));
  }
  if (typeof first === 'boolean') {
    if (!data.every((v) => typeof v === 'boolean')) throw batchTypeError(data);
    return ndArray(data.map(Number), { dtype: 'bool' });
  }
  if (ArrayBuffer.isView(first) && TYPED_DTYPES.has(first.constructor)) {
    const Ctor = first.constructor, len = first.length;
    if (!data.every((v) => v instanceof Ctor && v.length === len)) throw batchTypeError(data);
    const flat = new Ctor(data.length * len);
    data.forEach((v, i) => flat.set(v, i * len));
    return ndArray(flat, { shape: [data.length, len], dtype: TYPED_DTYPES.get(Ctor) });
  }
  throw batchTypeError(data);
}
function batchTypeError(data) {
  const kinds = [...new Set(data.map(typeName))].join(', ');
  return new MXNetError(`default_batchify_fn: cannot batch samples of type ${kinds} (NDArrays, numbers, BigInts, `
    + 'booleans, typed arrays and arrays of those batch)');
}

// nd.stack of any number of arrays: an op call takes at most 64 inputs (MXW_MAX_IO), so larger
// batches are stacked 64 at a time and the pieces concatenated along the batch axis.
const MAX_OP_INPUTS = 64;
function stackMany(data) {
  if (data.length <= MAX_OP_INPUTS) return invokeVisible(opId('stack'), data, { axis: 0, num_args: data.length });
  const parts = [];
  try {
    for (let i = 0; i < data.length; i += MAX_OP_INPUTS) parts.push(stackMany(data.slice(i, i + MAX_OP_INPUTS)));
    return parts.length <= MAX_OP_INPUTS ? invokeVisible(opId('Concat'), parts, { dim: 0, num_args: parts.length }) : stackConcat(parts);
  } finally {
    for (const p of parts) p.dispose();
  }
}
function stackConcat(parts) {
  const merged = [];
  try {
    for (let i = 0; i < parts.length; i += MAX_OP_INPUTS) {
      const chunk = parts.slice(i, i + MAX_OP_INPUTS);
      merged.push(invokeVisible(opId('Concat'), chunk, { dim: 0, num_args: chunk.length }));
    }
    return merged.length === 1 ? merged.shift() : stackConcat(merged);
  } finally {
    for (const m of merged) m.dispose();
  }
}

// default_batchify_fn(data): NDArrays are stacked along a new first axis (nd.stack); samples
// that are arrays (tuples) are batched field by field into an array of batches; numbers become
// one nd.array.
export function defaultBatchifyFn(data) {
  if (!Array.isArray(data) || data.length === 0) {
    throw new MXNetError('default_batchify_fn takes a non-empty array of samples');
  }
  const first = data[0];
  if (first instanceof NDArray) {
    if (!data.every((d) => d instanceof NDArray)) throw batchTypeError(data);
    return stackMany(data);
  }
  if (Array.isArray(first)) {
    const n = Math.min(...data.map((d) => (Array.isArray(d) ? d.length : 0))); // zip(*data)
    return Array.from({ length: n }, (_, j) => defaultBatchifyFn(data.map((d) => d[j])));
  }
  return asBatchArray(data);
}
// default_mp_batchify_fn stacks into shared memory for worker processes; in-process it is the same.
export const defaultMpBatchifyFn = defaultBatchifyFn;

// Resolves a sample that is, or holds (one level deep), Promises.
async function resolveSample(s) {
  if (isThenable(s)) s = await s;
  if (Array.isArray(s) && s.some(isThenable)) s = await Promise.all(s);
  return s;
}
function syncSample(dataset, idx) {
  const s = itemAt(dataset, idx);
  if (isThenable(s) || (Array.isArray(s) && s.some(isThenable))) {
    throw new MXNetError(`sample ${idx} of the dataset is a Promise (a lazily read dataset): iterate with `
      + 'for await (const batch of loader)');
  }
  return s;
}

// DataLoader(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler, batchify_fn,
// num_workers, pin_memory, pin_device_id, prefetch, thread_pool, timeout, auto_reload).
export class DataLoader {
  constructor(...args) {
    const a = bind('DataLoader', args);
    this._dataset = a.dataset;
    this._pinMemory = a.pinMemory;
    this._pinDeviceId = a.pinDeviceId;
    this._threadPool = a.threadPool;
    this._timeout = a.timeout;
    if (!(a.timeout > 0)) throw new MXNetError(`timeout must be positive, given ${a.timeout}`);
    let { batchSampler, sampler } = a;
    if (batchSampler === null) {
      if (a.batchSize === null) throw new MXNetError('batch_size must be specified unless batch_sampler is specified');
      if (sampler === null) {
        const n = lengthOf(a.dataset);
        sampler = a.shuffle ? new RandomSampler(n) : new SequentialSampler(n);
      } else if (a.shuffle) {
        throw new MXNetError('shuffle must not be specified if sampler is specified');
      }
      batchSampler = new BatchSampler(sampler, a.batchSize, a.lastBatch ? a.lastBatch : 'keep');
    } else if (a.batchSize !== null || a.shuffle || sampler !== null || a.lastBatch !== null) {
      throw new MXNetError('batch_size, shuffle, sampler and last_batch must not be specified if batch_sampler '
        + 'is specified.');
    }
    this._batchSampler = batchSampler;
    // Worker processes: none here; num_workers > 0 is accepted and loads in-process, in order.
    this._numWorkers = a.numWorkers >= 0 ? a.numWorkers : 0;
    this._prefetch = Math.max(0, a.prefetch !== null ? Math.trunc(a.prefetch) : 2 * this._numWorkers);
    this._batchifyFn = a.batchifyFn ?? defaultBatchifyFn;
    this.autoReload = a.autoReload;
    this._iter = null;
    if (this.autoReload) this.refresh();
  }

  // Python's refresh(): a new pass is ready for the next iteration.
  refresh() { this._iter = this._sameProcessIter(); }
  // Python's clean(): forget the prepared pass.
  clean() { this._iter = null; }

  // Each batch is made inside mx.tidy: the arrays the dataset creates for it (views, transform
  // intermediates, per-sample results) are freed once batched; arrays that existed before (a
  // dataset's own content) are untouched. (A dataset that caches arrays it creates in get()
  // should keep() them.) pin_memory would copy to cpu_pinned: a no-op on this one CPU device.
  *_sameProcessIter() {
    for (const batch of this._batchSampler) {
      yield tidy(() => this._batchifyFn(batch.map((idx) => syncSample(this._dataset, idx))));
    }
  }

  *[Symbol.iterator]() {
    if (this._iter === null) this.refresh();
    const t = this._iter;
    this._iter = null; // one prepared pass serves one iteration
    yield* t;
    if (this._iter === null && this.autoReload) this.refresh();
  }

  // for await: samples (or their fields) may be Promises; each batch's samples are awaited
  // together, then batchified (no tidy scope can span the awaits: the samples' arrays are left
  // to the garbage collector's finalizers).
  async *[Symbol.asyncIterator]() {
    if (this._iter === null) this.refresh();
    this._iter = null;
    for (const batch of this._batchSampler) {
      const samples = await Promise.all(batch.map((idx) => resolveSample(itemAt(this._dataset, idx))));
      yield await this._batchifyFn(samples);
    }
    if (this._iter === null && this.autoReload) this.refresh();
  }

  get length() { return lengthOf(this._batchSampler); }
}

export const vision = Object.freeze({ transforms });

// gluon.data's namespace (api.mjs installs the default export).
export default Object.freeze({
  Dataset, SimpleDataset, ArrayDataset,
  Sampler, SequentialSampler, RandomSampler, FilterSampler, BatchSampler,
  DataLoader, defaultBatchifyFn, default_batchify_fn: defaultBatchifyFn, defaultMpBatchifyFn,
  default_mp_batchify_fn: defaultMpBatchifyFn, vision,
});
