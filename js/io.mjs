// io.mjs -- reading sources (a path in Node, a URL string or URL, an ArrayBuffer, a typed array, a
// Blob/File or a Response) with progress events, an AbortSignal and fetch options; writing files
// in Node; nd.save / nd.load through the C reader and writer of MXNet's NDArray-list format.
import { M, MXNetError, args, check, heap32, heapU8, oomMessage } from './core.mjs';
import { NDArray } from './ndarray.mjs';
import { isNode, nodeBuiltin, nodeBuiltinSync } from './platform.mjs';

let nodeFs = null;
async function fs() {
  if (!nodeFs) nodeFs = await nodeBuiltin('fs');
  return nodeFs;
}

// ---- reading with progress, cancellation and request options -----------------------------------
// Every reader (nd.load, sym.load, loadParameters, SymbolBlock.imports, ParameterDict.load,
// image.imread) takes these options beside its own:
//   onProgress(event)  called as bytes arrive: {file, loaded, total, bytes, done}: `file` names the
//                      source (its path or URL, else 'data'), `loaded` the bytes so far, `total` the
//                      size when known (Content-Length, the file's or the Blob's size; null when the
//                      response is compressed or the server does not say), `bytes` what this event
//                      added (their sum is the file's size), `done` true on the last event (bytes 0).
//   signal             an AbortSignal: aborting stops the transfer, frees what was read and rejects
//                      with the signal's reason (a DOMException named 'AbortError' by default).
//   requestInit        fetch's RequestInit for URLs (headers, credentials, cache, mode, ...).
//   fetch              the fetch function to use for URLs (default globalThis.fetch).
export const READ_OPTION_NAMES = ['onProgress', 'on_progress', 'signal', 'requestInit', 'request_init', 'fetch'];
// The read options in `o` (camelCase or snake_case keys), checked; unknown keys are the caller's.
export function readOptions(o, where) {
  if (o === undefined || o === null) return {};
  const onProgress = o.onProgress ?? o.on_progress ?? null;
  const requestInit = o.requestInit ?? o.request_init ?? null;
  const { signal = null, fetch: fetchFn = null } = o;
  if (onProgress !== null && typeof onProgress !== 'function') throw new MXNetError(`${where}: onProgress must be a function`);
  if (signal !== null && !(typeof AbortSignal !== 'undefined' && signal instanceof AbortSignal)) {
    throw new MXNetError(`${where}: signal must be an AbortSignal`);
  }
  if (requestInit !== null && (typeof requestInit !== 'object' || Array.isArray(requestInit))) {
    throw new MXNetError(`${where}: requestInit must be an object (fetch's RequestInit)`);
  }
  if (fetchFn !== null && typeof fetchFn !== 'function') throw new MXNetError(`${where}: fetch must be a function`);
  return { onProgress, signal, requestInit, fetch: fetchFn };
}

// The signal's reason as fetch throws it: a DOMException named 'AbortError' unless the caller
// aborted with a reason of their own.
export function abortReason(signal) {
  return signal?.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
function throwIfAborted(signal) {
  if (signal?.aborted) throw abortReason(signal);
}

// Collects chunks into one Uint8Array (preallocated when the size is known) and reports progress.
class Sink {
  constructor(file, total, onProgress) {
    this.file = file;
    this.total = Number.isFinite(total) && total >= 0 ? total : null;
    this.onProgress = onProgress;
    this.loaded = 0;
    this.inBuf = 0; // bytes held in buf; the rest (beyond the announced size) in chunks
    this.buf = new Uint8Array(this.total ?? 0);
    this.chunks = [];
  }
  push(chunk) {
    if (!this.chunks.length && this.inBuf + chunk.length <= this.buf.length) {
      this.buf.set(chunk, this.inBuf);
      this.inBuf += chunk.length;
    } else {
      this.chunks.push(chunk.slice());
    }
    this.loaded += chunk.length;
    this.emit(chunk.length, false);
  }
  emit(bytes, done) {
    if (this.onProgress) this.onProgress({ file: this.file, loaded: this.loaded, total: this.total, bytes, done });
  }
  finish() {
    let out = this.buf;
    if (this.chunks.length || out.length !== this.loaded) {
      const head = out.subarray(0, this.inBuf);
      out = new Uint8Array(this.loaded);
      out.set(head);
      let off = head.length;
      for (const c of this.chunks) { out.set(c, off); off += c.length; }
    }
    this.buf = null;
    this.chunks = null;
    if (this.total === null) this.total = this.loaded;
    this.emit(0, true);
    return out;
  }
}

// Reads a WHATWG ReadableStream to the end; an abort cancels the stream.
async function readStream(stream, sink, signal) {
  const reader = stream.getReader();
  const onAbort = () => { reader.cancel(abortReason(signal)).catch(() => {}); };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      throwIfAborted(signal);
      const { done, value } = await reader.read();
      throwIfAborted(signal);
      if (done) break;
      sink.push(value instanceof Uint8Array ? value : new Uint8Array(value));
    }
  } catch (e) {
    reader.cancel(e).catch(() => {});
    throw signal?.aborted ? abortReason(signal) : e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.releaseLock?.();
  }
  return sink.finish();
}

const CHUNK = 256 * 1024;
async function readNodeFile(path, label, { onProgress, signal }) {
  const { promises } = await fs();
  let fh;
  try {
    fh = await promises.open(path, 'r');
  } catch (e) {
    throw new MXNetError(`cannot read ${label}: ${e.message}`);
  }
  try {
    const { size } = await fh.stat();
    const sink = new Sink(label, size, onProgress);
    for (;;) {
      throwIfAborted(signal);
      const chunk = new Uint8Array(CHUNK);
      const { bytesRead } = await fh.read(chunk, 0, CHUNK, null);
      throwIfAborted(signal);
      if (bytesRead === 0) break;
      sink.push(chunk.subarray(0, bytesRead));
    }
    return sink.finish();
  } catch (e) {
    if (e instanceof MXNetError || signal?.aborted) throw e;
    if (e?.name === 'AbortError') throw e;
    throw new MXNetError(`cannot read ${label}: ${e.message}`);
  } finally {
    await fh.close();
  }
}

function contentLength(res) {
  const enc = res.headers?.get?.('content-encoding');
  if (enc && enc !== 'identity') return null; // the length of the compressed body, not of what we read
  const n = res.headers?.get?.('content-length');
  return n === null || n === undefined || n === '' ? null : Number(n);
}

// The signal that aborts a request: the caller's, the requestInit's, or either.
function joinSignals(a, b) {
  if (!a) return b ?? null;
  if (!b || a === b) return a;
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const c = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) { c.abort(s.reason); break; }
    s.addEventListener('abort', () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}

// A short name for a source, for progress events and messages.
export function sourceLabel(source) {
  if (typeof source === 'string') return source;
  if (source instanceof URL) return source.href;
  if (typeof Response !== 'undefined' && source instanceof Response && source.url) return source.url;
  if (typeof File !== 'undefined' && source instanceof File && source.name) return source.name;
  return 'data';
}

// Any readable source -> Uint8Array: a path (Node), a URL string or URL, an ArrayBuffer, a typed
// array, a Blob/File or a Response; opts as readOptions above.
export async function readBytes(source, opts = {}) {
  const { onProgress = null, signal: sig = null, requestInit = null, fetch: fetchFn = null } = opts ?? {};
  const signal = joinSignals(sig, requestInit?.signal ?? null);
  throwIfAborted(signal);
  const label = sourceLabel(source);
  const inMemory = (bytes) => {
    if (onProgress) {
      const n = bytes.length;
      if (n) onProgress({ file: label, loaded: n, total: n, bytes: n, done: false });
      onProgress({ file: label, loaded: n, total: n, bytes: 0, done: true });
    }
    return bytes;
  };
  if (source instanceof Uint8Array) return inMemory(source);
  if (ArrayBuffer.isView(source)) return inMemory(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  if (source instanceof ArrayBuffer) return inMemory(new Uint8Array(source));
  if (typeof Response !== 'undefined' && source instanceof Response) {
    if (!source.body) return inMemory(new Uint8Array(await source.arrayBuffer()));
    return readStream(source.body, new Sink(label, contentLength(source), onProgress), signal);
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    return readStream(source.stream(), new Sink(label, source.size, onProgress), signal);
  }
  if (source instanceof URL || typeof source === 'string') {
    const s = String(source);
    const isUrl = source instanceof URL || /^[a-z][a-z0-9+.-]*:\/\//i.test(s) || s.startsWith('blob:') || s.startsWith('data:');
    if (isNode && (!isUrl || s.startsWith('file:'))) {
      return readNodeFile(s.startsWith('file:') ? new URL(s) : s, s, { onProgress, signal });
    }
    const f = fetchFn ?? globalThis.fetch;
    if (typeof f !== 'function') throw new MXNetError(`cannot fetch ${s}: no fetch function here (pass {fetch})`);
    const url = isUrl || typeof location === 'undefined' ? s : new URL(s, location.href);
    let res;
    try {
      res = await f(url, { ...(requestInit ?? {}), ...(signal ? { signal } : {}) });
    } catch (e) {
      if (signal?.aborted) throw abortReason(signal);
      if (e?.name === 'AbortError') throw e;
      throw new MXNetError(`cannot fetch ${s}: ${e?.message ?? e}`);
    }
    if (!res.ok) {
      res.body?.cancel().catch(() => {});
      throw new MXNetError(`cannot fetch ${s}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
    }
    if (!res.body) return inMemory(new Uint8Array(await res.arrayBuffer()));
    return readStream(res.body, new Sink(label, contentLength(res), onProgress), signal);
  }
  throw new MXNetError('a source must be a path, a URL, an ArrayBuffer, a typed array, a Blob or a Response');
}

export async function readText(source, opts) {
  return new TextDecoder().decode(await readBytes(source, opts));
}

// Reads several sources at once (SymbolBlock.imports' symbol and params files): one failure
// aborts the others, and nothing is returned or kept until every read has settled.
export async function readAll(sources, opts = {}) {
  const ctl = new AbortController();
  const outer = joinSignals(opts.signal ?? null, opts.requestInit?.signal ?? null);
  const signal = outer ? joinSignals(outer, ctl.signal) : ctl.signal;
  const results = await Promise.allSettled(sources.map((src) => (src === null || src === undefined
    ? Promise.resolve(null)
    : readBytes(src, { ...opts, signal }).catch((e) => { ctl.abort(e); throw e; }))));
  if (results.some((r) => r.status === 'rejected')) {
    // the caller's abort, else the first failure (the other reads were aborted because of it)
    if (outer?.aborted) throw abortReason(outer);
    throw ctl.signal.reason;
  }
  return results.map((r) => r.value);
}

export function writeFileSync(path, data) {
  if (!isNode) throw new MXNetError('writing files needs Node; use the in-memory form (it returns the bytes)');
  // node:fs, as the module's evaluation found it (platform.mjs nodeBuiltinSync)
  const mod = nodeFs ?? nodeBuiltinSync('fs');
  if (!mod) throw new MXNetError('node:fs is not loaded yet');
  mod.writeFileSync(path, data);
}
if (isNode) nodeFs = nodeBuiltinSync('fs');

// Copies bytes into wasm memory, runs fn(ptr, len), frees the copy.
export function withBytes(bytes, fn) {
  const p = M._malloc(Math.max(bytes.length, 1)) >>> 0; // an address past 2 GiB is negative as i32
  if (!p) throw new MXNetError(oomMessage(`copying a file's ${bytes.length} bytes into wasm`, bytes.length));
  try {
    heapU8().set(bytes, p);
    return fn(p, bytes.length);
  } finally {
    M._free(p);
  }
}

// The cap on the bytes one load may allocate in wasm memory: {maxBytes} (or max_bytes), a
// number of bytes; omitted, null or 0 means the default, 8 x the file's size + 1 MiB + the
// bytes of the values present in the file (so a small file declaring huge arrays, or a sparse
// record whose dense form is huge, is refused before anything is allocated).
// With `reading`, the read options (readOptions) are accepted too.
export function loadLimit(opts, where = 'nd.load', reading = false) {
  if (opts === undefined || opts === null) return 0;
  if (typeof opts !== 'object' || Array.isArray(opts)) throw new MXNetError(`${where}: options must be an object such as {maxBytes: 1e9}`);
  for (const k of Object.keys(opts)) {
    if (k === 'maxBytes' || k === 'max_bytes' || (reading && READ_OPTION_NAMES.includes(k))) continue;
    throw new MXNetError(`${where}: unknown option '${k}' (accepted: maxBytes${reading ? ', onProgress, signal, requestInit, fetch' : ''})`);
  }
  const v = opts.maxBytes ?? opts.max_bytes ?? 0;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new MXNetError(`${where}: maxBytes must be a non-negative number of bytes (0 for the default), got ${String(v)}`);
  }
  return v;
}

// A NUL-terminated UTF-8 string in wasm memory, decoded by the WHATWG rules (an invalid
// sequence becomes U+FFFD) whatever its length.
const utf8 = new TextDecoder();
function cString(p) {
  const h = heapU8();
  let e = p;
  while (h[e] !== 0) e++;
  return utf8.decode(h.slice(p, e)); // a copy: TextDecoder refuses views of shared memory
}

// Parses NDArray-list bytes: {names: string[] | null, arrays: (NDArray|null)[]}. maxBytes as
// in loadLimit.
export function parseNDList(bytes, maxBytes = 0) {
  return withBytes(bytes, (p, n) => {
    const a = args.reset();
    const out = a.alloc(4);
    check(M._mxw_ndlist_load_ex(p, n, maxBytes, out));
    const list = heap32()[out >> 2];
    const arrays = [];
    try {
      const count = M._mxw_ndlist_size(list);
      const named = M._mxw_ndlist_has_names(list) !== 0;
      const names = named ? [] : null;
      for (let i = 0; i < count; i++) {
        if (named) names.push(cString(M._mxw_ndlist_name(list, i)));
        const h = M._mxw_ndlist_take(list, i);
        arrays.push(h ? new NDArray(h) : null);
      }
      if (named) {
        // the C reader refuses equal byte strings; two invalid UTF-8 names can still decode to
        // the same string, which would silently drop an array here
        const seen = new Map();
        names.forEach((nm, i) => {
          if (seen.has(nm)) {
            throw new MXNetError(`corrupt params data: the name '${nm}' is given twice (arrays ${seen.get(nm)} and ${i} of ${count}, as decoded from UTF-8)`);
          }
          seen.set(nm, i);
        });
      }
      return { names, arrays };
    } catch (e) {
      for (const x of arrays) x?.dispose();
      throw e;
    } finally {
      M._mxw_ndlist_free(list);
    }
  });
}

// NDArray-list bytes for arrays (with names, or an unnamed list).
export function serializeNDList(arrays, names) {
  const a = args.reset();
  const arrP = a.i32s(arrays.map((x) => x.handle));
  const namesP = names ? a.strs(names) : 0;
  const outP = a.alloc(4);
  const lenP = a.alloc(4);
  check(M._mxw_ndlist_save(arrays.length, arrP, namesP, outP, lenP));
  const h = heap32();
  const ptr = h[outP >> 2] >>> 0, len = h[lenP >> 2] >>> 0;
  const bytes = heapU8().slice(ptr, ptr + len);
  M._mxw_buffer_free(ptr);
  return bytes;
}

function normalizeSaveArg(data) {
  if (data instanceof NDArray) return { arrays: [data], names: null };
  if (Array.isArray(data)) return { arrays: data, names: null };
  if (data instanceof Map) return { arrays: [...data.values()], names: [...data.keys()] };
  if (data && typeof data === 'object') return { arrays: Object.values(data), names: Object.keys(data) };
  throw new MXNetError('nd.save takes an NDArray, an array of NDArrays, or an object/Map of name -> NDArray');
}

// nd.save(file, data): writes MXNet's format (Node); returns the bytes.
export function save(file, data) {
  const bytes = saveBytes(data);
  writeFileSync(file, bytes);
  return bytes;
}
export function saveBytes(data) {
  const { arrays, names } = normalizeSaveArg(data);
  for (const x of arrays) if (!(x instanceof NDArray)) throw new MXNetError('nd.save: every value must be an NDArray');
  return serializeNDList(arrays, names);
}

// await nd.load(source, {maxBytes, onProgress, signal, requestInit, fetch}): for a named file, an object name -> NDArray (as MXNet's
// dict) with no prototype, so that every name -- '__proto__', 'constructor' -- is an own key
// and `name in result` is true only for names in the file; an array for an unnamed list.
// Duplicate names are an error.
export async function load(source, opts) {
  const maxBytes = loadLimit(opts, 'nd.load', true);
  return loadBytes(await readBytes(source, readOptions(opts, 'nd.load')), { maxBytes });
}
export function loadBytes(bytes, opts) {
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  else if (ArrayBuffer.isView(bytes) && !(bytes instanceof Uint8Array)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!(bytes instanceof Uint8Array)) throw new MXNetError('nd.loadBytes takes the bytes of a file: a Uint8Array, a typed array or an ArrayBuffer');
  const { names, arrays } = parseNDList(bytes, loadLimit(opts, 'nd.loadBytes'));
  if (!names) return arrays;
  const out = Object.create(null);
  names.forEach((n, i) => { out[n] = arrays[i]; });
  return out;
}
