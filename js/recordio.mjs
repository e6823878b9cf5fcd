// recordio.mjs -- mx.recordio (MXNet 1.9.1 python/mxnet/recordio.py over dmlc-core's RecordIO):
// the .rec files im2rec writes and ImageRecordIter / ImageRecordDataset read.
//
// A record is the magic 0xced7230a, a 32-bit word (flag << 29 | length), the bytes and zero padding
// to 4 bytes, all little-endian; a record whose bytes hold the magic at a 4-byte boundary is
// stored in parts (flag 1 first, 2 middle, 3 last) split there, the magic dropped and put back on
// reading (dmlc-core's RecordIOWriter / RecordIOReader). An image record starts with IRHeader
// (flag uint32, label float32, id, id2 uint64; flag > 0: that many float32 labels follow).
//
// Reading is async (js-api.md rule 7): new MXRecordIO(uri, 'r') and new MXIndexedRecordIO(idx, uri,
// 'r') return Promises of the opened reader (uri a path in Node, a URL, or the bytes); read(),
// read_idx(k) are then synchronous. Writing ('w') is synchronous: records collect in memory,
// close() writes the file in Node when uri is a path, and getBytes() returns them anywhere.
//   const rec = await new mx.recordio.MXIndexedRecordIO('data.idx', 'data.rec', 'r');
//   const [header, img] = await mx.recordio.unpack_img(rec.read_idx(rec.keys[0]));
import { MXNetError } from './core.mjs';
import { readBytes, readText, writeFileSync } from './io.mjs';
import { imdecode } from './image.mjs';

const MAGIC = 0xced7230a;
const toBytes = (buf) => {
  if (typeof buf === 'string') return new TextEncoder().encode(buf);
  if (buf instanceof Uint8Array) return buf;
  if (ArrayBuffer.isView(buf)) return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf instanceof ArrayBuffer) return new Uint8Array(buf);
  throw new MXNetError(`a record must be bytes (Uint8Array, ArrayBuffer) or a string, got ${buf?.constructor?.name ?? typeof buf}`);
};
const isPath = (uri) => typeof uri === 'string' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(uri);

// MXRecordIO(uri, flag): flag 'r' -> a Promise of the reader, 'w' -> the writer.
export class MXRecordIO {
  constructor(uri, flag) {
    if (flag !== 'r' && flag !== 'w') throw new MXNetError(`Invalid flag ${flag}: 'r' or 'w'`);
    this.uri = uri;
    this.flag = flag;
    this.writable = flag === 'w';
    this.is_open = false;
    if (this.writable) {
      this._parts = [];
      this._size = 0;
      this.is_open = true;
      return this;
    }
    return this._openReader().then(() => this);
  }
  async _openReader() {
    this._bytes = this.uri instanceof Uint8Array || this.uri instanceof ArrayBuffer || ArrayBuffer.isView(this.uri)
      ? toBytes(this.uri) : await readBytes(this.uri);
    this._view = new DataView(this._bytes.buffer, this._bytes.byteOffset, this._bytes.byteLength);
    this._pos = 0;
    this.is_open = true;
  }
  get isOpen() { return this.is_open; }
  // Closes: a writer with a path writes its file (Node).
  close() {
    if (!this.is_open) return;
    if (this.writable && isPath(this.uri)) writeFileSync(this.uri, this.getBytes());
    this.is_open = false;
  }
  // Back to the first record (a reader).
  reset() {
    if (this.writable) throw new MXNetError('reset() is for a reader');
    this._pos = 0;
  }
  // The bytes written so far (a writer).
  getBytes() {
    if (!this.writable) throw new MXNetError('getBytes() is for a writer');
    const out = new Uint8Array(this._size);
    let at = 0;
    for (const p of this._parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
  _check(writing) {
    if (!this.is_open) throw new MXNetError('the record file is closed');
    if (writing !== this.writable) throw new MXNetError(writing ? 'the record file is open for reading' : 'the record file is open for writing');
  }
  _emit(flag, bytes, from, to) {
    const head = new Uint8Array(8), dv = new DataView(head.buffer);
    dv.setUint32(0, MAGIC, true);
    dv.setUint32(4, ((flag << 29) | (to - from)) >>> 0, true);
    this._parts.push(head, bytes.slice(from, to));
    this._size += 8 + (to - from);
  }
  // write(buf): appends one record (bytes or a string).
  write(buf) {
    this._check(true);
    const b = toBytes(buf);
    if (b.length >= 2 ** 29) throw new MXNetError(`a record of ${b.length} bytes: at most 2^29 - 1`);
    let from = 0;
    for (let i = 0; i + 4 <= b.length; i += 4) {
      if (b[i] === 0x0a && b[i + 1] === 0x23 && b[i + 2] === 0xd7 && b[i + 3] === 0xce) {
        this._emit(from === 0 ? 1 : 2, b, from, i);
        from = i + 4;
      }
    }
    this._emit(from !== 0 ? 3 : 0, b, from, b.length);
    const pad = (4 - (b.length % 4)) % 4;
    if (pad) {
      this._parts.push(new Uint8Array(pad));
      this._size += pad;
    }
  }
  // The write position in bytes (a writer).
  tell() {
    this._check(true);
    return this._size;
  }
  // read(): the next record's bytes, or null at the end.
  read() {
    this._check(false);
    const parts = [];
    for (;;) {
      if (this._pos === this._bytes.length && parts.length === 0) return null;
      if (this._pos + 8 > this._bytes.length) throw new MXNetError(`${this._where()}: a record header is cut off at byte ${this._pos}`);
      if (this._view.getUint32(this._pos, true) !== MAGIC) throw new MXNetError(`${this._where()}: no record magic at byte ${this._pos}`);
      const lrec = this._view.getUint32(this._pos + 4, true), cflag = lrec >>> 29, len = lrec & (2 ** 29 - 1);
      const start = this._pos + 8;
      if (start + len > this._bytes.length) throw new MXNetError(`${this._where()}: a record of ${len} bytes at byte ${this._pos} runs past the end`);
      if ((cflag === 0 || cflag === 1) !== (parts.length === 0)) throw new MXNetError(`${this._where()}: a record part out of order at byte ${this._pos}`);
      if (parts.length) parts.push(Uint8Array.of(0x0a, 0x23, 0xd7, 0xce));
      parts.push(this._bytes.subarray(start, start + len));
      this._pos = Math.min(this._bytes.length, start + len + ((4 - (len % 4)) % 4));
      if (cflag === 0 || cflag === 3) break;
    }
    if (parts.length === 1) return parts[0].slice();
    const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
  _where() { return typeof this.uri === 'string' ? this.uri : 'the record file'; }
}

// MXIndexedRecordIO(idx_path, uri, flag, key_type = int): records by key through the index file
// (lines "key\tposition"); flag 'r' -> a Promise of the reader.
export class MXIndexedRecordIO extends MXRecordIO {
  constructor(idxPath, uri, flag, keyType = (k) => parseInt(k, 10)) {
    const self = super(uri, flag);
    const init = (me) => {
      me.idx_path = idxPath;
      me.key_type = keyType;
      me.idx = new Map();
      me.keys = [];
      return me;
    };
    if (flag === 'w') return init(self);
    return self.then(async (me) => {
      init(me);
      const text = idxPath instanceof Uint8Array ? new TextDecoder().decode(idxPath) : await readText(idxPath);
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        const [k, pos] = line.trim().split('\t');
        const p = Number(pos);
        if (!Number.isInteger(p) || p < 0 || p >= me._bytes.length) throw new MXNetError(`${idxPath}: bad index line '${line}'`);
        const key = keyType(k);
        me.idx.set(key, p);
        me.keys.push(key);
      }
      return me;
    });
  }
  close() {
    if (this.is_open && this.writable && isPath(this.idx_path)) {
      writeFileSync(this.idx_path, this.keys.map((k) => `${String(k)}\t${this.idx.get(k)}\n`).join(''));
    }
    super.close();
  }
  // The index file's text (a writer).
  getIndex() { return this.keys.map((k) => `${String(k)}\t${this.idx.get(k)}\n`).join(''); }
  seek(idx) {
    this._check(false);
    if (!this.idx.has(idx)) throw new MXNetError(`no record of key ${String(idx)}`);
    this._pos = this.idx.get(idx);
  }
  readIdx(idx) {
    this.seek(idx);
    return this.read();
  }
  writeIdx(idx, buf) {
    const key = this.key_type(idx), pos = this.tell();
    this.write(buf);
    this.idx.set(key, pos);
    this.keys.push(key);
  }
  read_idx(idx) { return this.readIdx(idx); }
  write_idx(idx, buf) { return this.writeIdx(idx, buf); }
}

// IRHeader(flag, label, id, id2): the image record header (a plain object with these fields).
export function IRHeader(flag, label, id, id2) {
  return { flag, label, id, id2 };
}
const headerOf = (h) => (Array.isArray(h) ? IRHeader(...h) : { ...h });

// pack(header, s): the header (label a number, or an array whose length becomes flag) then s.
export function pack(header, s) {
  const h = headerOf(header), body = toBytes(s);
  const labels = typeof h.label === 'number' ? null : Float32Array.from(h.label);
  const head = new Uint8Array(24 + (labels ? labels.length * 4 : 0)), dv = new DataView(head.buffer);
  dv.setUint32(0, labels ? labels.length : 0, true);
  dv.setFloat32(4, labels ? 0 : h.label, true);
  dv.setBigUint64(8, BigInt(h.id ?? 0), true);
  dv.setBigUint64(16, BigInt(h.id2 ?? 0), true);
  if (labels) head.set(new Uint8Array(labels.buffer), 24);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

// unpack(s): [header, the rest]; with flag > 0 the label is a Float32Array of flag labels.
export function unpack(s) {
  const b = toBytes(s);
  if (b.length < 24) throw new MXNetError(`an image record of ${b.length} bytes is shorter than its 24-byte header`);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const flag = dv.getUint32(0, true);
  let label = dv.getFloat32(4, true), at = 24;
  if (flag > 0) {
    if (24 + 4 * flag > b.length) throw new MXNetError(`an image record's ${flag} labels run past its ${b.length} bytes`);
    label = new Float32Array(flag);
    for (let i = 0; i < flag; i++) label[i] = dv.getFloat32(24 + 4 * i, true);
    at += 4 * flag;
  }
  const id = dv.getBigUint64(8, true), id2 = dv.getBigUint64(16, true);
  const num = (v) => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v);
  return [IRHeader(flag, label, num(id), num(id2)), b.subarray(at)];
}

// unpack_img(s, iscolor = -1): a Promise of [header, image]: the image decoded as OpenCV's
// imdecode leaves it (BGR; iscolor 0 gives grey, any other value colour).
export async function unpack_img(s, iscolor = -1) {
  const [header, img] = unpack(s);
  return [header, await imdecode(img, { flag: iscolor === 0 ? 0 : 1, to_rgb: false })];
}
export const unpackImg = unpack_img;

// (Python's pack_img encodes with OpenCV: there is no encoder here.)
export function pack_img() {
  throw new MXNetError('pack_img needs an image encoder (OpenCV in Python): encode the image yourself and use pack(header, bytes)');
}
export const packImg = pack_img;
