// gluon_utils.mjs -- gluon.utils (MXNet 1.9.1 python/mxnet/gluon/utils.py): split_data,
// split_and_load, clip_global_norm and check_sha1, under Python's names and their camelCase
// spellings. Arguments bind through signature.mjs with Python's order and defaults.
// check_sha1 reads its source, so it is async here (js-api.md rule 7) and takes any source
// io.mjs reads (a path in Node, a URL, an ArrayBuffer, a typed array, a Blob or a Response);
// the hash is WebCrypto's SHA-1.
import { MXNetError } from './core.mjs';
import { NDArray, Context, cpu, invokeByName } from './ndarray.mjs';
import { bindArgs } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { onContext } from './context.mjs';
import { readBytes } from './io.mjs';
import { array } from './creation.mjs';

const bind = (name, args) => bindArgs(SIGNATURES[name], args);
const ctxOf = (x) => x._ctx ?? x.context ?? cpu(0);
const fmt = (s) => `(${s.join(', ')})`;

// The slices of data along batchAxis: the first size % numSlice slices hold one row more
// (MXNet 1.9.1's section sizes: 10 rows in 3 slices are 4, 3, 3). New arrays (copies).
function slices(fname, data, numSlice, batchAxis, evenSplit) {
  if (numSlice < 1) throw new MXNetError(`${fname}: num_slice must be positive, got ${numSlice}`);
  const nd = data.ndim;
  if (batchAxis < 0 || batchAxis >= nd) {
    throw new MXNetError(`${fname}: batch_axis ${batchAxis} is out of range for data of shape ${fmt(data.shape)}`);
  }
  const size = data.shape[batchAxis];
  if (evenSplit && size % numSlice !== 0) {
    throw new MXNetError(`${fname}: data with shape ${fmt(data.shape)} cannot be evenly split into ${numSlice} slices along axis ${batchAxis}. `
      + `Use a batch size that's multiple of ${numSlice} or set even_split=False to allow uneven partitioning of data.`);
  }
  const each = Math.floor(size / numSlice), extras = size % numSlice;
  const out = [];
  let begin = 0;
  for (let i = 0; i < numSlice; i++) {
    const end = begin + each + (i < extras ? 1 : 0);
    out.push(invokeByName('slice_axis', [data], { axis: batchAxis, begin, end })[0]);
    begin = end;
  }
  return out;
}

// split_data(data, num_slice, batch_axis=0, even_split=True): a list of num_slice arrays, on
// data's context.
export function split_data(...args) {
  const a = bind('utils.split_data', args);
  const ctx = ctxOf(a.data);
  return slices('split_data', a.data, a.numSlice, a.batchAxis, a.evenSplit).map((s) => onContext(s, ctx));
}

// split_and_load(data, ctx_list, batch_axis=0, even_split=True): one slice per context, each
// recorded on its context. Data that is not an NDArray goes through nd.array (on ctx_list[0]);
// with one context the data itself is returned when it already lives there.
export function split_and_load(...args) {
  const a = bind('utils.split_and_load', args);
  const ctxList = a.ctxList instanceof Context ? [a.ctxList] : a.ctxList;
  let data = a.data;
  if (!(data instanceof NDArray)) data = array(data, { ctx: ctxList[0] });
  if (ctxList.length === 1) {
    return [ctxOf(data).equals(ctxList[0]) ? data : onContext(data.copy(), ctxList[0])];
  }
  return slices('split_and_load', data, ctxList.length, a.batchAxis, a.evenSplit).map((s, i) => onContext(s, ctxList[i]));
}

// clip_global_norm(arrays, max_norm, check_isfinite=True): rescales the arrays in place so the
// 2-norm of their concatenation is at most max_norm (scale = min(max_norm / (norm + 1e-8), 1)).
// Returns the norm before clipping: a number, or with check_isfinite false an NDArray (as
// Python, which then skips the synchronising check). A NaN or infinite norm is warned about.
export function clip_global_norm(...args) {
  const a = bind('utils.clip_global_norm', args);
  const arrays = Array.from(a.arrays);
  if (arrays.length === 0) throw new MXNetError('clip_global_norm: arrays must not be empty');
  arrays.forEach((x, i) => {
    if (!(x instanceof NDArray)) throw new MXNetError(`clip_global_norm: arrays[${i}] must be an NDArray`);
  });
  const squares = arrays.map((x) => {
    const flat = x.reshape([-1]);
    const sq = invokeByName('dot', [flat, flat], {})[0];
    flat.dispose();
    return sq;
  });
  const sum = invokeByName('add_n', squares, { num_args: squares.length })[0];
  const total = invokeByName('sqrt', [sum], {})[0];
  for (const s of squares) s.dispose();
  sum.dispose();
  const norm = total.item();
  if (a.checkIsfinite && !Number.isFinite(norm)) {
    console.warn('UserWarning: nan or inf is detected. Clipping results will be undefined.');
  }
  const scale = Math.min(a.maxNorm / (norm + 1e-8), 1.0);
  for (const x of arrays) invokeByName('_mul_scalar', [x], { scalar: scale }, x);
  if (a.checkIsfinite) {
    total.dispose();
    return norm;
  }
  return onContext(total, ctxOf(arrays[0]));
}

// check_sha1(filename, sha1_hash): resolves to whether the SHA-1 of the source's bytes, as
// lowercase hex, equals sha1_hash.
export async function check_sha1(...args) {
  const a = bind('utils.check_sha1', args);
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new MXNetError('check_sha1: WebCrypto (crypto.subtle) is not available in this environment');
  const bytes = await readBytes(a.filename);
  const digest = new Uint8Array(await subtle.digest('SHA-1', bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  return hex === a.sha1Hash;
}

export const splitData = split_data;
export const splitAndLoad = split_and_load;
export const clipGlobalNorm = clip_global_norm;
export const checkSha1 = check_sha1;
