// dist/index.d.ts under `tsc --strict --noEmit` (issue 12, acceptance 2): user programs compile with
// zero errors, every deliberate mistake of tests/types/mistakes.ts is rejected (and nothing else in
// it), and every public name the module has at run time is declared (a program naming each one,
// written from a walk of the loaded module, compiles).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as mx from '../../dist/index.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dts = path.join(root, 'dist/index.d.ts');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');

// Compiles the given files (name -> source) as a user's project resolving 'mxnet-wasm' to the
// package's declarations; returns tsc's diagnostics as {file, line, text}.
function compile(files) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-types-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext',
        lib: ['es2022', 'dom'], types: [], paths: { 'mxnet-wasm': [dts], 'mxnet-wasm/config': [path.join(root, 'dist/config.d.ts')] },
      },
      files: Object.keys(files),
    }));
    let out = '';
    try {
      out = execFileSync(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { encoding: 'utf8' });
    } catch (e) {
      out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    return out.split('\n').filter((l) => /^\S+\(\d+,\d+\): error/.test(l)).map((l) => {
      const m = /^(.+?)\((\d+),\d+\): error (.*)$/.exec(l);
      return { file: path.basename(m[1]), line: Number(m[2]), text: m[3] };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const source = (name) => readFileSync(path.join(root, 'tests/types', name), 'utf8');

test('user programs using every namespace compile with tsc --strict: zero errors', () => {
  const errors = compile({ 'every_namespace.ts': source('every_namespace.ts'), 'examples.ts': source('examples.ts') });
  assert.deepEqual(errors, []);
});

test("'mxnet-wasm/config' is typed: its settings compile, a wrong tier or type does not", () => {
  const ok = compile({ 'config.ts': `import { setWasmPaths, setMemoryLimit, requestTier } from 'mxnet-wasm/config';
setWasmPaths('https://cdn.example/dist/'); setWasmPaths({ simd: '/a/', threads: new URL('https://b/') });
setMemoryLimit(512 * 2 ** 20); requestTier('relaxed-simd');
` });
  assert.deepEqual(ok, []);
  const bad = compile({ 'config.ts': `import { setWasmPaths, setMemoryLimit } from 'mxnet-wasm/config';
setWasmPaths({ gpu: '/a/' });
setMemoryLimit('1GB');
` });
  assert.deepEqual([...new Set(bad.map((e) => e.line))], [2, 3]);
});

test('every deliberate mistake is rejected, and nothing else', () => {
  const text = source('mistakes.ts');
  const marked = text.split('\n').flatMap((l, i) => (l.includes('// MISTAKE:') ? [i + 1] : []));
  assert.ok(marked.length >= 25, `only ${marked.length} mistakes marked`);
  const errors = compile({ 'mistakes.ts': text });
  const lines = [...new Set(errors.map((e) => e.line))].sort((a, b) => a - b);
  assert.deepEqual(lines, marked, `errors on lines ${lines} but mistakes on ${marked}:\n${errors.map((e) => `${e.line}: ${e.text}`).join('\n')}`);
});

test('every public name of the loaded module is declared (a walk of mx, nd, sym, gluon, ...)', () => {
  // The run-time tree: exported names, then the members of each namespace object, depth-first;
  // classes are named, not entered; internal names (leading _) and the registry's op table are skipped.
  const paths = [];
  const seen = new Set();
  const walk = (obj, expr, depth) => {
    if (seen.has(obj) || depth > 5) return;
    seen.add(obj);
    for (const k of Object.keys(obj)) {
      if (k.startsWith('_') || /^\d+$/.test(k) || (depth === 0 && k === 'default')) continue;
      const v = obj[k];
      const e = /^[A-Za-z$][\w$]*$/.test(k) ? `${expr}.${k}` : `${expr}[${JSON.stringify(k)}]`;
      paths.push(e);
      if (v && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof mx.NDArray)) walk(v, e, depth + 1);
    }
  };
  walk(mx, 'mx', 0);
  for (const k of Object.keys(mx.default)) paths.push(`mx.default.${k}`); // the default export: the same namespaces
  assert.ok(paths.length > 900, `only ${paths.length} names walked`);
  for (const p of ['mx.gluon.nn.Dense', 'mx.gluon.loss.L2Loss', 'mx.metric.Accuracy', 'mx.gluon.data.vision.transforms.ToTensor',
    'mx.nd.FullyConnected', 'mx.sym.Convolution', 'mx.gluon.model_zoo.vision.resnet18_v1', 'mx.autograd.record']) {
    assert.ok(paths.includes(p), p);
  }
  const program = `import * as mx from 'mxnet-wasm';\n${paths.map((p) => `void ${p};`).join('\n')}\n`;
  const errors = compile({ 'walk.ts': program });
  const lines = program.split('\n');
  assert.deepEqual(errors.map((e) => `${lines[e.line - 1]} ${e.text}`), []);
});

test('the types carry no catch-all index signature and no internal helper', () => {
  const text = readFileSync(dts, 'utf8');
  assert.doesNotMatch(text, /\[(helper|k|key|name): string\]: any/);
  assert.doesNotMatch(text, /attrFloat/);
  // toTypedArray is typed by dtype: the declared array of each dtype is the one returned at run time
  for (const [d, T] of [['float32', 'Float32Array'], ['int32', 'Int32Array'], ['uint8', 'Uint8Array'], ['int64', 'BigInt64Array'],
    ['float64', 'Float64Array'], ['int8', 'Int8Array']]) {
    assert.match(text, new RegExp(`\\b${d}: ${T};`));
    const arr = mx.nd.zeros([2], { dtype: d });
    assert.equal(arr.toTypedArray().constructor.name, T, `${d} at run time`);
    arr.dispose();
  }
});
