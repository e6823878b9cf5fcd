// dist/registry.mjs: the build's copy of the operator registry JSON, which core.mjs uses instead
// of building the JSON in C at every import when the module's checksum of its op definitions
// matches. The copy must say exactly what the module's own registry says, plus the op and attribute
// docs, which the shipped modules are built without (MXW_NO_DOCS) and the copy takes from a build
// of the same sources with them (scripts/gen-api.mjs); a copy that does not fit (a stale file,
// another build) must be ignored in favour of the module's JSON.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist');

// Imports core.mjs from `dist` in a fresh Node on the simd tier and prints what it used.
function load(dist, fresh = false) {
  const code = `${fresh ? 'globalThis.__mxwFreshRegistry = true;' : ''}
const c = await import(${JSON.stringify(path.join(dist, 'core.mjs'))});
const mx = await import(${JSON.stringify(path.join(dist, 'index.mjs'))});
const y = mx.nd.relu(mx.nd.array([-1, 2])).toTypedArray();
console.log(JSON.stringify({ source: c.registrySource, registry: c.registry, y: Array.from(y) }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    encoding: 'utf8', maxBuffer: 64 * 2 ** 20, env: { ...process.env, MXW_TIER: 'simd' },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const withoutDocs = (r) => ({ ...r, ops: r.ops.map(({ doc, ...op }) => ({ ...op, attrs: op.attrs.map(({ doc: _, ...a }) => a) })) });

test('the built copy is used and equals the registry the module builds itself, with the docs added', () => {
  const copy = load(DIST);
  const own = load(DIST, true);
  assert.equal(copy.source, 'copy');
  assert.equal(own.source, 'module');
  assert.deepEqual(withoutDocs(copy.registry), withoutDocs(own.registry));
  // the module carries no docs; the copy has one for every op and attribute (as the C sources do)
  assert.deepEqual(own.registry.ops.filter((op) => op.doc !== '' || op.attrs.some((a) => 'doc' in a)).map((op) => op.name), []);
  assert.deepEqual(copy.registry.ops.filter((op) => !op.doc || op.attrs.some((a) => !a.doc)).map((op) => op.name), []);
  // a doc as written in csrc/ops/linalg.c
  const linalg = readFileSync(path.join(ROOT, 'csrc/ops/linalg.c'), 'utf8');
  const fc = copy.registry.ops.find((op) => op.name === 'FullyConnected');
  assert.ok(linalg.includes(JSON.stringify(fc.doc)), `FullyConnected's doc in the copy: ${fc.doc}`);
  assert.deepEqual(copy.y, [0, 2]); // relu, by hand
});

test('a copy whose checksum does not match the module is ignored', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mxw-registry-'));
  try {
    cpSync(DIST, dir, { recursive: true });
    // a stale copy: another checksum, and an op list that would be wrong if it were used
    const text = readFileSync(path.join(dir, 'registry.mjs'), 'utf8')
      .replace(/REGISTRY_CHECKSUM = \d+/, 'REGISTRY_CHECKSUM = 12345')
      .replace(/\\"name\\":\\"relu\\"/, '\\"name\\":\\"not_relu\\"');
    writeFileSync(path.join(dir, 'registry.mjs'), text);
    const r = load(dir);
    assert.equal(r.source, 'module');
    assert.ok(r.registry.ops.some((o) => o.name === 'relu'));
    assert.deepEqual(r.y, [0, 2]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
