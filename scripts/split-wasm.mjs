// Splits a published tier's module in two with binaryen's wasm-split (Debian's binaryen, as emcc
// uses): <dist tier>/mxcore.wasm, the functions that the usual work reaches, and
// mxcore.deferred.wasm, the rest, which the first call of one of them loads (wasm/split_pre.js).
//  1. wasm-split --instrument on the full module as linked (the threaded tiers: --in-memory, one
//     byte per function from address 0, written by every thread; they link with GLOBAL_BASE 4096);
//  2. scripts/split-profile.mjs runs on a copy of the package holding the instrumented module;
//  3. wasm-split --split with that profile; functions with a v128 in their signature stay (a
//     placeholder is a JS function, and v128 cannot cross into JS); checked afterwards, as is that
//     the deferred part holds no data (every thread instantiates it on the one memory);
//  4. mxcore.deferred.wasm, then mxcore.wasm, renamed into place.
// The relaxed tiers: binaryen 108 knows relaxed SIMD only by its draft encodings, and the one relaxed
// instruction these modules hold, f32x4.relaxed_madd (0xfd 0x105), is its draft f32x4.relaxed_fma
// (0xfd 0xaf), of the same length. Their code goes through the tools with the opcode renamed, and
// back, at the instructions a decoder of the code section finds (never bytes that only look like
// them); each rename's count is checked against the one a disassembler reports (npm's binaryen 132
// before, Debian's 108 after).
//   node scripts/split-wasm.mjs <tier> <full mxcore.wasm> <dist dir> <work dir>
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [tier, full, dist, work] = process.argv.slice(2);
if (!tier || !full || !dist || !work) {
  console.error('usage: node scripts/split-wasm.mjs <tier> <full mxcore.wasm> <dist dir> <work dir>');
  process.exit(2);
}
const fail = (msg) => { console.error(`split-wasm: ${tier}: ${msg}`); process.exit(1); };
// Debian's binaryen, not npm's (node_modules/.bin first on PATH under npm scripts: it has no
// wasm-split, and another version than emcc's)
const WASM_SPLIT = '/usr/bin/wasm-split', WASM_DIS = '/usr/bin/wasm-dis';
const run = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30, ...opts });
  if (r.status !== 0) fail(`${path.basename(cmd)} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
};
const threaded = tier.includes('threads'), relaxed = tier.includes('relaxed');
const tierDir = tier === 'simd' ? dist : path.join(dist, tier);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// ---- the relaxed opcode's renames ---------------------------------------------------------------------
// The code section is decoded instruction by instruction, so that only opcodes are renamed (a byte
// scan also matched the sequence inside an immediate once the module changed).
const MADD = 0x105, DRAFT_FMA = 0xaf; // f32x4.relaxed_madd, binaryen 108's draft f32x4.relaxed_fma
const MADD_BYTES = [0xfd, 0x85, 0x02], DRAFT_FMA_BYTES = [0xfd, 0xaf, 0x01];
// Calls visit(position of the prefix byte, sub-opcode, position after the instruction) for every
// 0xfd (SIMD) instruction of every function body in the code section (id 10).
function simdInstructions(bytes, visit) {
  let at = 8;
  const u32 = () => {
    let v = 0, shift = 0, b;
    do { b = bytes[at++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return v;
  };
  const skipLeb = () => { while (bytes[at++] & 0x80); };
  const memarg = () => { skipLeb(); skipLeb(); };
  const decodeFail = (op) => fail(`cannot decode opcode 0x${op.toString(16)} at byte ${at - 1} of the code section`);
  // skips the immediates of an instruction (MVP, sign-extension, bulk memory, reference types,
  // saturating truncations, atomics) after its opcode
  const immediates = (op) => {
    if (op === 0x02 || op === 0x03 || op === 0x04) { // block types: 0x40, a value type or an s33 index
      if (bytes[at] === 0x40 || (bytes[at] >= 0x6f && bytes[at] <= 0x7f)) at++;
      else skipLeb();
    } else if ([0x0c, 0x0d, 0x10, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x41, 0x42, 0xd2].includes(op)) {
      skipLeb(); // br, br_if, call, local/global get/set/tee, table.get/set, i32/i64.const, ref.func
    } else if (op === 0x0e) { // br_table
      for (let k = u32() + 1; k > 0; k--) skipLeb();
    } else if (op === 0x11) { // call_indirect
      skipLeb();
      skipLeb();
    } else if (op >= 0x28 && op <= 0x3e) {
      memarg();
    } else if (op === 0x3f || op === 0x40 || op === 0xd0) { // memory.size/grow, ref.null
      at++;
    } else if (op === 0x43 || op === 0x44) { // f32/f64.const
      at += op === 0x43 ? 4 : 8;
    } else if (op === 0x1c) { // select with types
      for (let k = u32(); k > 0; k--) at++;
    } else if (op === 0xfc) {
      const sub = u32();
      if (sub === 8) { // memory.init
        skipLeb();
        at++;
      } else if (sub === 9 || sub === 13 || (sub >= 15 && sub <= 17)) {
        skipLeb();
      } else if (sub === 10 || sub === 11) { // memory.copy, memory.fill
        at += sub === 10 ? 2 : 1;
      } else if (sub === 12 || sub === 14) {
        skipLeb();
        skipLeb();
      } else if (sub > 7) {
        decodeFail(op);
      }
    } else if (op === 0xfe) { // atomics: atomic.fence has a 0 byte, the rest a memarg
      if (u32() === 3) at++;
      else memarg();
    } else if (op > 0xd2) {
      decodeFail(op);
    } // every other opcode has no immediates
  };
  const simdImmediates = (sub) => {
    if (sub <= 11 || sub === 92 || sub === 93) memarg(); // loads, stores, load zero
    else if (sub === 12 || sub === 13) at += 16; // v128.const, i8x16.shuffle
    else if (sub >= 21 && sub <= 34) at++; // lane extracts and replaces
    else if (sub >= 84 && sub <= 91) { // load / store lane
      memarg();
      at++;
    }
  };
  while (at < bytes.length) {
    const id = bytes[at++], size = u32(), end = at + size;
    if (id !== 10) { at = end; continue; }
    for (let n = u32(); n > 0; n--) {
      const bodySize = u32(), bodyEnd = at + bodySize;
      for (let groups = u32(); groups > 0; groups--) { skipLeb(); at++; } // locals: count, type
      while (at < bodyEnd) {
        const op = bytes[at++];
        if (op === 0xfd) {
          const p = at - 1, sub = u32();
          simdImmediates(sub);
          visit(p, sub, at);
        } else {
          immediates(op);
        }
      }
      if (at !== bodyEnd) fail(`a function body decoded past its end (byte ${at}, end ${bodyEnd})`);
    }
    return;
  }
  fail('no code section');
}
// Renames every instruction `from` (sub-opcode) to `to` (same-length encodings): there must be
// `expect` of them.
function rename(file, out, from, fromBytes, toBytes, expect) {
  const bytes = readFileSync(file);
  let n = 0;
  simdInstructions(bytes, (p, sub, after) => {
    if (sub !== from) return;
    if (after - p !== fromBytes.length || !fromBytes.every((b, i) => bytes[p + i] === b)) fail(`an unexpected encoding of opcode 0x${from.toString(16)} at byte ${p}`);
    bytes.set(toBytes, p);
    n++;
  });
  if (n !== expect) fail(`${path.basename(file)}: ${n} instructions 0xfd 0x${from.toString(16)} decoded in its code, for ${expect} from a disassembler`);
  writeFileSync(out, bytes);
}
const count = (text, name) => text.split(`(${name}`).length - 1;
// a module written by binaryen 108 (the draft encoding) -> the standard one
const toStandard = (file) => rename(file, file, DRAFT_FMA, DRAFT_FMA_BYTES, MADD_BYTES, count(run(WASM_DIS, ['-all', file]), 'f32x4.relaxed_fma'));
let source = full;
if (relaxed) {
  const text = run(process.execPath, [path.join(here, '../node_modules/binaryen/bin/wasm-dis'), '--enable-simd',
    '--enable-relaxed-simd', '--enable-threads', '--enable-bulk-memory', '--enable-sign-ext', '--enable-mutable-globals',
    '--enable-nontrapping-float-to-int', full]);
  const others = new Set(text.match(/\b\w+\.relaxed_\w+/g) ?? []);
  others.delete('f32x4.relaxed_madd');
  if (others.size) fail(`relaxed instructions other than f32x4.relaxed_madd: ${[...others].join(', ')}`);
  source = path.join(work, 'draft.wasm');
  rename(full, source, MADD, MADD_BYTES, DRAFT_FMA_BYTES, count(text, 'f32x4.relaxed_madd'));
}

// Function headers of the full module: (func $<index> (param ...) (result ...)
const headers = run(WASM_DIS, ['-all', source]).split('\n').filter((l) => /^ \(func \$/.test(l));
if (threaded && headers.length >= 4096) fail(`${headers.length} functions: the profile's bytes would reach the static data (GLOBAL_BASE 4096)`);
const keep = headers.filter((l) => /\b(param|result)\b[^;]*\bv128\b/.test(l)).map((l) => l.match(/^ \(func \$(\S+)/)[1]);

// 1-2. the profile
const instrumented = path.join(work, 'instrumented.wasm');
run(WASM_SPLIT, ['--instrument', '-all', ...(threaded ? ['--in-memory'] : []), source, '-o', instrumented]);
if (relaxed) toStandard(instrumented);
const pkg = path.join(work, 'package');
cpSync(dist, pkg, { recursive: true, filter: (src) => !src.endsWith('.deferred.wasm') });
const pkgTier = tier === 'simd' ? pkg : path.join(pkg, tier);
copyFileSync(instrumented, path.join(pkgTier, 'mxcore.wasm'));
const profile = path.join(work, 'profile.data');
const env = { ...process.env, MXW_NUM_THREADS: threaded ? '2' : '1' };
delete env.MXW_TIER;
process.stdout.write(run(process.execPath, [...(relaxed ? ['--experimental-wasm-relaxed-simd'] : []),
  path.join(here, 'split-profile.mjs'), pkg, tier, profile], { env }));

// 3. the split. wasm-split 108 takes a profile or a list of functions to keep, not both: the list
// is the profile's functions that ran (after its 8-byte module hash, a 32-bit first-call
// timestamp per defined function, in order: 0 for none; binaryen names them by that index) and the
// v128 ones.
const data = readFileSync(profile);
if (data.length !== 8 + 4 * headers.length) fail(`the profile has ${data.length} bytes, not 8 + 4 x ${headers.length} functions`);
const ran = [];
for (let i = 0; i < headers.length; i++) if (data.readUInt32LE(8 + 4 * i) !== 0) ran.push(String(i));
const keepAll = [...new Set([...ran, ...keep])];
const keepFile = path.join(work, 'keep.txt');
writeFileSync(keepFile, keepAll.join('\n'));
const primary = path.join(work, 'mxcore.wasm'), deferred = path.join(work, 'mxcore.deferred.wasm');
run(WASM_SPLIT, ['--split', '-all', `--keep-funcs=@${keepFile}`, '--export-prefix=%', source, '-o1', primary, '-o2', deferred]);
const primaryText = run(WASM_DIS, ['-all', primary]);
const bad = primaryText.split('\n').filter((l) => /^ \(import "placeholder"/.test(l) && /v128/.test(l));
if (bad.length) fail(`placeholders with a v128 in their signature:\n${bad.join('\n')}`);
if (/^ \(data /m.test(run(WASM_DIS, ['-all', deferred]))) fail('the deferred part holds data segments');
const placeholders = (primaryText.match(/^ \(import "placeholder"/gm) ?? []).length;
if (relaxed) for (const f of [primary, deferred]) toStandard(f);

// 4. into dist/, the deferred part first (an older mxcore.wasm there has no placeholders)
for (const f of [deferred, primary]) {
  const to = path.join(tierDir, path.basename(f)), tmp = `${to}.${process.pid}.tmp`;
  copyFileSync(f, tmp);
  renameSync(tmp, to);
}
rmSync(pkg, { recursive: true, force: true });
const kb = (f) => `${(statSync(f).size / 1024).toFixed(1)} KiB, gzip ${(gzipSync(readFileSync(f), { level: 9 }).length / 1024).toFixed(1)} KiB`;
console.log(`split-wasm: ${tier}: ${keepAll.length} of ${headers.length} functions stay (${ran.length} ran, ${keep.length} with v128), ${placeholders} placeholders:`
  + ` mxcore.wasm ${kb(primary)}; mxcore.deferred.wasm ${kb(deferred)} (full: ${kb(full)})`);
