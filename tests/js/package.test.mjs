// The npm package as a user gets it: `npm pack`, `npm install <tarball>` in an empty folder
// elsewhere, then `import * as mx from 'mxnet-wasm'` computes nd.dot (hand-worked result).
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('npm pack → npm install elsewhere → import computes nd.dot', { timeout: 300_000 }, () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'mxw-pack-'));
  try {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', tmp],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    const files = packed[0].files.map((f) => f.path);
    for (const f of ['dist/index.mjs', 'dist/mxcore.mjs', 'dist/mxcore.wasm', 'dist/mxcore.deferred.wasm', 'dist/threads/mxcore.wasm',
      'dist/threads/mxcore.deferred.wasm', 'dist/threads/mxcore.worker.js',
      'dist/threads.mjs', 'dist/simd.mjs', 'dist/api.bundle.mjs', 'dist/api.bundle.js', 'dist/api.bundle.cache', 'package.json', 'README.md']) {
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    assert.ok(!files.some((f) => f.startsWith('csrc/') || f.startsWith('tests/')), 'no sources or tests shipped');
    const tgz = path.join(tmp, readdirSync(tmp).find((f) => f.endsWith('.tgz')));

    const app = path.join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tgz], { cwd: app, stdio: 'pipe' });
    writeFileSync(path.join(app, 'main.mjs'), `
      import * as mx from 'mxnet-wasm';
      const a = mx.nd.array([[1, 2], [3, 4]]);
      const b = mx.nd.array([[5, 6], [7, 8]]);
      // float64: in the split module's second part (mxcore.deferred.wasm), found beside the first
      const f64 = mx.nd.array([1.5, 2], { dtype: 'float64' }).mul(2).toArray();
      console.log(JSON.stringify({ dot: mx.nd.dot(a, b).toArray(), f64, version: mx.version, codeCache: mx.features().codeCache }));
    `);
    // run from another working directory: the .wasm is found next to the module, not via cwd
    const out = execFileSync(process.execPath, [path.join(app, 'main.mjs')], { cwd: tmpdir(), encoding: 'utf8' });
    const res = JSON.parse(out.trim().split('\n').pop());
    assert.deepEqual(res.dot, [[19, 22], [43, 50]]);
    assert.deepEqual(res.f64, [3, 4]);
    // the build's code cache serves the installed copy too (this Node made it; js/api_script.mjs)
    assert.equal(res.codeCache, typeof process.getBuiltinModule === 'function' ? 'used' : 'off');
    // the subpath entries resolve in the installed package and load their tier
    for (const tier of ['simd', 'threads']) {
      writeFileSync(path.join(app, `${tier}.mjs`), `
        import * as mx from 'mxnet-wasm/${tier}';
        console.log(JSON.stringify({ tier: mx.features().tier, dot: mx.nd.dot(mx.nd.ones([2, 3]), mx.nd.ones([3, 2])).toArray() }));
      `);
      const r = JSON.parse(execFileSync(process.execPath, [path.join(app, `${tier}.mjs`)], { cwd: tmpdir(), encoding: 'utf8', env: { ...process.env, MXW_TIER: '' } }).trim().split('\n').pop());
      assert.equal(r.tier, tier);
      assert.deepEqual(r.dot, [[3, 3], [3, 3]]);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
