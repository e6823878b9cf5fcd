// gluon.data.vision's datasets (js/data/datasets.mjs) and mx.recordio (js/recordio.mjs): MNIST /
// FashionMNIST from gzipped IDX files and CIFAR10 / CIFAR100 from binary batches (files, or the
// .tar.gz made by the system's tar), written here from known pixels and labels with node:zlib;
// ImageFolderDataset over PNG files encoded here. Each sample is checked against the bytes written
// (CIFAR's CHW records as HWC images), with transforms and a DataLoader; RecordIO bytes against the
// layout worked by hand; missing and malformed files are MXNetErrors.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import * as mx from 'mxnet-wasm';
import { rng } from './oracle.mjs';

const { gluon } = mx;
const { vision } = gluon.data;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mxw-datasets-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
const bytes = (n, seed) => Uint8Array.from(rng(seed).uniform(n, 0, 256), (v) => Math.floor(v));
const u32 = (...v) => { const b = Buffer.alloc(4 * v.length); v.forEach((x, i) => b.writeUInt32BE(x, 4 * i)); return b; };
const throwsAsync = (p, re) => assert.rejects(p, (e) => e instanceof mx.MXNetError && re.test(e.message));

function writeMnist(dir, prefix, n, seed) {
  mkdirSync(dir, { recursive: true });
  const images = bytes(n * 784, seed), labels = Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) % 10);
  writeFileSync(path.join(dir, `${prefix}-images-idx3-ubyte.gz`), zlib.gzipSync(Buffer.concat([u32(0x803, n, 28, 28), images])));
  writeFileSync(path.join(dir, `${prefix}-labels-idx1-ubyte.gz`), zlib.gzipSync(Buffer.concat([u32(0x801, n), labels])));
  return { images, labels };
}

test('MNIST / FashionMNIST: images (28, 28, 1) uint8 and labels from the IDX files; test set, transforms, DataLoader', async () => {
  const dir = path.join(tmp, 'mnist');
  const train = writeMnist(dir, 'train', 6, 1), testSet = writeMnist(dir, 't10k', 3, 2);
  const warn = console.warn;
  const warnings = [];
  console.warn = (m) => warnings.push(String(m));
  let ds, dt;
  try {
    ds = await new vision.MNIST({ root: dir });
    dt = await new vision.MNIST(dir, false);
  } finally {
    console.warn = warn;
  }
  assert.ok(warnings.some((w) => /SHA-1/.test(w)), 'files other than MXNet\'s are warned about');
  assert.equal(ds.length, 6);
  assert.equal(dt.length, 3);
  for (let i = 0; i < 6; i++) {
    const [img, label] = ds.get(i);
    assert.deepEqual(img.shape, [28, 28, 1]);
    assert.equal(img.dtype, 'uint8');
    assert.deepEqual(Array.from(img.toTypedArray()), Array.from(train.images.subarray(i * 784, (i + 1) * 784)));
    assert.equal(label, train.labels[i]);
  }
  assert.equal(dt.get(-1)[1], testSet.labels[2]);
  // Python's transform(data, label), and the usual pipeline
  const scaled = await new vision.FashionMNIST(dir, true, (x, y) => [x.astype('float32').div(255), y + 100]);
  assert.equal(scaled.get(0)[1], train.labels[0] + 100);
  const loader = new gluon.data.DataLoader(ds.transformFirst(new vision.transforms.ToTensor()), { batchSize: 4 });
  const batches = [...loader];
  assert.deepEqual(batches.map(([x]) => x.shape), [[4, 1, 28, 28], [2, 1, 28, 28]]);
  assert.deepEqual(Array.from(batches[1][1].toTypedArray()), Array.from(train.labels.subarray(4)));
  assert.throws(() => ds.get(6), mx.MXNetError);
  await throwsAsync(new vision.MNIST({ root: path.join(tmp, 'none') }), /not found.*does not download.*gluon\/dataset\/mnist\/train-images-idx3-ubyte\.gz/);
  const bad = path.join(tmp, 'bad');
  mkdirSync(bad);
  writeFileSync(path.join(bad, 'train-images-idx3-ubyte.gz'), zlib.gzipSync(Buffer.concat([u32(0x803, 2, 28, 28), bytes(100, 3)])));
  writeFileSync(path.join(bad, 'train-labels-idx1-ubyte.gz'), zlib.gzipSync(Buffer.concat([u32(0x801, 2), Buffer.from([1, 2])])));
  await throwsAsync(new vision.MNIST({ root: bad }), /100 bytes of data for shape \(2, 28, 28\)/);
  writeFileSync(path.join(bad, 'train-labels-idx1-ubyte.gz'), Buffer.from('not gzip'));
  await throwsAsync(new vision.MNIST({ root: bad }), /not a gzip file/);
});

// CIFAR records: label byte(s), then (3, 32, 32) pixels
function cifarRecords(n, labelBytes, seed) {
  const rec = 3072 + labelBytes, b = bytes(n * rec, seed);
  for (let i = 0; i < n; i++) for (let k = 0; k < labelBytes; k++) b[i * rec + k] = (i * 3 + k * 5 + seed) % (k ? 100 : 10);
  return b;
}
const hwc = (rec, labelBytes) => { // the record's pixels as (32, 32, 3)
  const out = [];
  for (let p = 0; p < 1024; p++) for (let c = 0; c < 3; c++) out.push(rec[labelBytes + c * 1024 + p]);
  return out;
};

test('CIFAR10 from the batch files and from the .tar.gz; CIFAR100 with coarse and fine labels', async (t) => {
  const dir = path.join(tmp, 'cifar10');
  mkdirSync(dir);
  const batches = [1, 2, 3, 4, 5].map((i) => cifarRecords(2, 1, i));
  batches.forEach((b, i) => writeFileSync(path.join(dir, `data_batch_${i + 1}.bin`), b));
  writeFileSync(path.join(dir, 'test_batch.bin'), cifarRecords(3, 1, 9));
  const warn = console.warn;
  console.warn = () => {};
  try {
    const ds = await new vision.CIFAR10({ root: dir });
    assert.equal(ds.length, 10);
    const [img, label] = ds.get(7); // batch 4, record 1
    assert.deepEqual(img.shape, [32, 32, 3]);
    assert.deepEqual(Array.from(img.toTypedArray()), hwc(batches[3].subarray(3073, 2 * 3073), 1));
    assert.equal(label, batches[3][3073]);
    assert.equal((await new vision.CIFAR10(dir, false)).length, 3);
    // the archive only (what MXNet's repository holds), read in memory
    const tarDir = path.join(tmp, 'cifar10tar');
    mkdirSync(tarDir);
    const r = spawnSync('tar', ['czf', path.join(tarDir, 'cifar-10-binary.tar.gz'), '-C', dir, 'data_batch_1.bin', 'data_batch_2.bin',
      'data_batch_3.bin', 'data_batch_4.bin', 'data_batch_5.bin', 'test_batch.bin']);
    if (r.status !== 0) t.skip('no tar command');
    else {
      const fromTar = await new vision.CIFAR10({ root: tarDir });
      assert.deepEqual(Array.from(fromTar.get(7)[0].toTypedArray()), Array.from(img.toTypedArray()));
      assert.equal(fromTar.get(7)[1], label);
    }
    const d100 = path.join(tmp, 'cifar100');
    mkdirSync(d100);
    const recs = cifarRecords(4, 2, 5);
    writeFileSync(path.join(d100, 'train.bin'), recs);
    writeFileSync(path.join(d100, 'test.bin'), cifarRecords(1, 2, 6));
    const coarse = await new vision.CIFAR100({ root: d100 }), fine = await new vision.CIFAR100({ root: d100, fine_label: true });
    assert.deepEqual([0, 1, 2, 3].map((i) => coarse.get(i)[1]), [0, 1, 2, 3].map((i) => recs[i * 3074]));
    assert.deepEqual([0, 1, 2, 3].map((i) => fine.get(i)[1]), [0, 1, 2, 3].map((i) => recs[i * 3074 + 1]));
    assert.deepEqual(Array.from(fine.get(2)[0].toTypedArray()), hwc(recs.subarray(2 * 3074, 3 * 3074), 2));
    writeFileSync(path.join(d100, 'test.bin'), bytes(100, 1));
    await throwsAsync(new vision.CIFAR100({ root: d100, train: false }), /not a multiple of 3074/);
  } finally {
    console.warn = warn;
  }
});

// a minimal RGB PNG (filter 0 rows, zlib from node:zlib)
function png(w, h, rgb) {
  const chunk = (type, data) => {
    const td = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td) >>> 0);
    return Buffer.concat([u32(data.length), td, crc]);
  };
  const rows = [];
  for (let y = 0; y < h; y++) rows.push(Buffer.from([0]), Buffer.from(rgb.subarray(y * w * 3, (y + 1) * w * 3)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', Buffer.concat([u32(w, h), Buffer.from([8, 2, 0, 0, 0])])), chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0))]);
}

test('ImageFolderDataset: one class per sub-folder, sorted; images read as they are taken', async (t) => {
  if (typeof zlib.crc32 !== 'function') return t.skip('this Node has no zlib.crc32 to write the PNG files');
  const root = path.join(tmp, 'folders');
  const pixels = {};
  for (const [cls, files] of [['dog', ['b.png', 'a.png']], ['cat', ['x.png']]]) {
    mkdirSync(path.join(root, cls), { recursive: true });
    for (const f of files) {
      const rgb = bytes(4 * 3 * 3, f.charCodeAt(0));
      pixels[`${cls}/${f}`] = rgb;
      writeFileSync(path.join(root, cls, f), png(4, 3, rgb));
    }
  }
  writeFileSync(path.join(root, 'cat', 'notes.txt'), 'skip me');
  writeFileSync(path.join(root, 'README'), 'not a folder');
  const warn = console.warn;
  const warnings = [];
  console.warn = (m) => warnings.push(String(m));
  let ds;
  try {
    ds = new vision.ImageFolderDataset(root, 1, (img, label) => [img.astype('float32'), label]);
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(ds.synsets, ['cat', 'dog']);
  assert.deepEqual(ds.items.map(([f, l]) => [path.relative(root, f), l]), [['cat/x.png', 0], ['dog/a.png', 1], ['dog/b.png', 1]]);
  assert.equal(ds.length, 3);
  assert.equal(warnings.length, 2); // notes.txt and README
  const [img, label] = await ds.get(2);
  assert.deepEqual(img.shape, [3, 4, 3]);
  assert.equal(img.dtype, 'float32');
  assert.deepEqual(Array.from(img.toTypedArray()), Array.from(pixels['dog/b.png']));
  assert.equal(label, 1);
  const seen = [];
  for await (const [x, y] of ds) seen.push([x.shape[0], y]);
  assert.deepEqual(seen, [[3, 0], [3, 1], [3, 1]]);
});

// ---- mx.recordio and the RecordIO datasets -----------------------------------------------------------
const { recordio } = mx;
const MAGIC = [0x0a, 0x23, 0xd7, 0xce]; // 0xced7230a little-endian

test('mx.recordio: records laid out as dmlc-core writes them (hand-worked bytes), split at an aligned magic; read back', async () => {
  const w = new recordio.MXRecordIO(null, 'w');
  w.write('abcde');
  w.write(Uint8Array.of(1, 2, 3, 4, ...MAGIC, 9)); // the magic at offset 4: two parts, the magic dropped
  w.write(new Uint8Array(0));
  const b = w.getBytes();
  assert.deepEqual(Array.from(b), [
    ...MAGIC, 5, 0, 0, 0, 97, 98, 99, 100, 101, 0, 0, 0, // flag 0, length 5, padded to 8
    ...MAGIC, 4, 0, 0, 0x20, 1, 2, 3, 4, // flag 1 (1 << 29 | 4)
    ...MAGIC, 1, 0, 0, 0x60, 9, 0, 0, 0, // flag 3 (3 << 29 | 1), padded
    ...MAGIC, 0, 0, 0, 0, // an empty record
  ]);
  const r = await new recordio.MXRecordIO(b, 'r');
  assert.equal(new TextDecoder().decode(r.read()), 'abcde');
  assert.deepEqual(Array.from(r.read()), [1, 2, 3, 4, ...MAGIC, 9]);
  assert.equal(r.read().length, 0);
  assert.equal(r.read(), null);
  r.reset();
  assert.equal(new TextDecoder().decode(r.read()), 'abcde');
  // indexed: Python's docstring positions (8-byte records: 0, 16, 32, ...)
  const iw = new recordio.MXIndexedRecordIO(null, null, 'w');
  for (let i = 0; i < 4; i++) iw.write_idx(i, `record_${i}`);
  assert.equal(iw.getIndex(), '0\t0\n1\t16\n2\t32\n3\t48\n');
  const ir = await new recordio.MXIndexedRecordIO(new TextEncoder().encode(iw.getIndex()), iw.getBytes(), 'r');
  assert.deepEqual(ir.keys, [0, 1, 2, 3]);
  assert.equal(new TextDecoder().decode(ir.read_idx(2)), 'record_2');
  // files in Node
  const rec = path.join(tmp, 'r.rec'), idx = path.join(tmp, 'r.idx');
  const fw = new recordio.MXIndexedRecordIO(idx, rec, 'w');
  fw.write_idx(10, 'ten');
  fw.write_idx(20, 'twenty');
  fw.close();
  const fr = await new recordio.MXIndexedRecordIO(idx, rec, 'r');
  assert.equal(new TextDecoder().decode(fr.read_idx(20)), 'twenty');
  // corrupt input is an MXNetError, never a crash
  await assert.rejects(new recordio.MXIndexedRecordIO(Uint8Array.from([...new TextEncoder().encode('0\t999\n')]), b, 'r'), mx.MXNetError);
  const bad = await new recordio.MXRecordIO(b.slice(0, 10), 'r');
  assert.throws(() => bad.read(), /runs past the end|cut off/);
  const notRec = await new recordio.MXRecordIO(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8), 'r');
  assert.throws(() => notRec.read(), /no record magic/);
});

test('recordio pack / unpack: IRHeader (flag, label float32, id, id2 uint64) by hand; several labels', () => {
  const p = recordio.pack(recordio.IRHeader(0, 3.5, 7, 0), 'xy');
  assert.deepEqual(Array.from(p), [0, 0, 0, 0, 0, 0, 0x60, 0x40, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 120, 121]);
  const [h, s] = recordio.unpack(p);
  assert.deepEqual(h, { flag: 0, label: 3.5, id: 7, id2: 0 });
  assert.equal(new TextDecoder().decode(s), 'xy');
  const [h2, s2] = recordio.unpack(recordio.pack([0, [1, 2.5, -1], 3, 1], Uint8Array.of(9)));
  assert.equal(h2.flag, 3);
  assert.deepEqual(Array.from(h2.label), [1, 2.5, -1]);
  assert.deepEqual([h2.id, h2.id2, Array.from(s2)], [3, 1, [9]]);
  assert.throws(() => recordio.unpack(Uint8Array.of(1, 2, 3)), /24-byte header/);
  assert.throws(() => recordio.unpack(recordio.pack([0, 1, 0, 0], '').map((v, i) => (i === 0 ? 9 : v))), /labels run past/);
});

test('RecordFileDataset and ImageRecordDataset over im2rec-style records of PNG images', async (t) => {
  if (typeof zlib.crc32 !== 'function') return t.skip('this Node has no zlib.crc32 to write the PNG files');
  const rec = path.join(tmp, 'imgs.rec'), idx = path.join(tmp, 'imgs.idx');
  const w = new recordio.MXIndexedRecordIO(idx, rec, 'w');
  const pixels = [];
  for (let i = 0; i < 3; i++) {
    const rgb = bytes(2 * 5 * 3, 40 + i);
    pixels.push(rgb);
    w.write_idx(i, recordio.pack(recordio.IRHeader(0, i * 2, i, 0), png(5, 2, rgb)));
  }
  w.close();
  const raw = await new gluon.data.RecordFileDataset(rec);
  assert.equal(raw.length, 3);
  assert.equal(recordio.unpack(raw.get(1))[0].label, 2);
  const ds = await new vision.ImageRecordDataset(rec);
  const [img, label] = await ds.get(2);
  assert.deepEqual(img.shape, [2, 5, 3]);
  assert.deepEqual(Array.from(img.toTypedArray()), Array.from(pixels[2]));
  assert.equal(label, 4);
  const [bgrHeader, bgr] = await recordio.unpack_img(raw.get(0));
  assert.equal(bgrHeader.id, 0);
  const rgb0 = pixels[0];
  assert.deepEqual(Array.from(bgr.toTypedArray()).slice(0, 3), [rgb0[2], rgb0[1], rgb0[0]]); // OpenCV's BGR
});
