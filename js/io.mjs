// io.mjs -- reading sources (a path in Node, a URL string or URL, an ArrayBuffer, a typed array, a
// Blob/File or a Response) and writing files in Node, plus nd.save / nd.load through the C
// reader and writer of MXNet's NDArray-list format.
import { M, MXNetError, args, check, heap32, heapU8 } from './core.mjs';
import { NDArray } from './ndarray.mjs';

const isNode = typeof process === 'object' && typeof process.versions === 'object' && !!process.versions.node;
let nodeFs = null;
async function fs() {
  if (!nodeFs) nodeFs = await import('node:fs');
  return nodeFs;
}

// Any readable source -> Uint8Array.
export async function readBytes(source) {
  if (source instanceof Uint8Array) return source;
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (typeof Response !== 'undefined' && source instanceof Response) return new Uint8Array(await source.arrayBuffer());
  if (typeof Blob !== 'undefined' && source instanceof Blob) return new Uint8Array(await source.arrayBuffer());
  if (source instanceof URL || typeof source === 'string') {
    const s = String(source);
    const isUrl = source instanceof URL || /^[a-z][a-z0-9+.-]*:\/\//i.test(s) || s.startsWith('blob:') || s.startsWith('data:');
    if (isNode && (!isUrl || s.startsWith('file:'))) {
      const { readFileSync } = await fs();
      const path = s.startsWith('file:') ? new URL(s) : s;
      try {
        return new Uint8Array(readFileSync(path));
      } catch (e) {
        throw new MXNetError(`cannot read ${s}: ${e.message}`);
      }
    }
    const res = await fetch(isUrl || typeof location === 'undefined' ? s : new URL(s, location.href));
    if (!res.ok) throw new MXNetError(`cannot fetch ${s}: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }
  throw new MXNetError('a source must be a path, a URL, an ArrayBuffer, a typed array, a Blob or a Response');
}

export async function readText(source) {
  return new TextDecoder().decode(await readBytes(source));
}

export function writeFileSync(path, data) {
  if (!isNode) throw new MXNetError('writing files needs Node; use the in-memory form (it returns the bytes)');
  // node:fs is loaded lazily; after any read it is cached. A first write loads it synchronously
  // through process.getBuiltinModule where available, else through the cached import.
  const mod = nodeFs ?? (typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:fs') : null);
  if (!mod) throw new MXNetError('node:fs is not loaded yet');
  mod.writeFileSync(path, data);
}
if (isNode) nodeFs = await import('node:fs');

// Copies bytes into wasm memory, runs fn(ptr, len), frees the copy.
export function withBytes(bytes, fn) {
  const p = M._malloc(Math.max(bytes.length, 1));
  if (!p) throw new MXNetError(`out of memory copying ${bytes.length} bytes into wasm`);
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
export function loadLimit(opts, where = 'nd.load') {
  if (opts === undefined || opts === null) return 0;
  if (typeof opts !== 'object' || Array.isArray(opts)) throw new MXNetError(`${where}: options must be an object such as {maxBytes: 1e9}`);
  for (const k of Object.keys(opts)) {
    if (k !== 'maxBytes' && k !== 'max_bytes') throw new MXNetError(`${where}: unknown option '${k}' (accepted: maxBytes)`);
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

// await nd.load(source, {maxBytes}): for a named file, an object name -> NDArray (as MXNet's
// dict) with no prototype, so that every name -- '__proto__', 'constructor' -- is an own key
// and `name in result` is true only for names in the file; an array for an unnamed list.
// Duplicate names are an error.
export async function load(source, opts) {
  const maxBytes = loadLimit(opts);
  return loadBytes(await readBytes(source), { maxBytes });
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
