// Build scripts that recover (issue 15), on a temporary copy of the project (HEAD's files with this
// checkout's build scripts and package.json over them), never on this checkout's build/:
// - the trap of the issue: a configure that failed (here: cJSON made unfindable) leaves
//   build/native/CMakeCache.txt and no build.ninja; `npm run build` then configures again, from a
//   fresh cache (the failed run's setting is gone), and builds;
// - a configure that did not finish (no stamp) is redone in place, and nothing is recompiled;
// - `npm run clean` removes build/, dist/ and coverage/, and `npm run build` after it builds;
// - run directly with a tool missing, scripts/build.sh stops at once naming `npm run setup`.
// The builds are native ones limited to one test program (MXW_BUILD_TARGETS=test_core), which is
// run; the copy's node_modules links to this checkout's packages.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './fixtures.mjs';

const SKIP = !existsSync(path.join(ROOT, '.git')) ? 'not a git checkout: nothing to copy'
  : spawnSync('sh', ['-c', 'command -v cmake && command -v ninja && test -f /usr/include/cjson/cJSON.h']).status
    ? 'cmake, ninja or cJSON missing (npm run setup)' : false;

let dir = null;
test.after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const env = { ...process.env, MXW_SKIP_CHROMIUM: '1', MXW_BUILD_TARGETS: 'test_core' };
for (const k of Object.keys(env)) if (k.startsWith('npm_') || k === 'NODE_TEST_CONTEXT') delete env[k];
const run = (cmd, args, extra = {}) => {
  const r = spawnSync(cmd, args, { cwd: dir, env, encoding: 'utf8', maxBuffer: 64 << 20, ...extra });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
};
const tail = (s, n = 40) => s.split('\n').slice(-n).join('\n');
const at = (...p) => path.join(dir, ...p);

function makeCopy() {
  dir = mkdtempSync(path.join(tmpdir(), 'mxw-build-'));
  const a = spawnSync('sh', ['-c', `git -C "${ROOT}" archive HEAD | tar -x -C "${dir}"`]);
  assert.equal(a.status, 0, String(a.stderr));
  for (const f of ['package.json', 'scripts/build.sh', 'scripts/clean.sh', 'scripts/setup.sh']) {
    copyFileSync(path.join(ROOT, f), at(f));
  }
  // node_modules: links to this checkout's packages, and setup's stamp newer than package.json
  mkdirSync(at('node_modules'));
  for (const e of readdirSync(path.join(ROOT, 'node_modules'))) {
    if (e !== '.mxw-installed') symlinkSync(path.join(ROOT, 'node_modules', e), at('node_modules', e));
  }
  writeFileSync(at('node_modules/.mxw-installed'), '');
}

function assertBuilt(r) {
  assert.equal(r.status, 0, `npm run build failed:\n${tail(r.out)}`);
  assert.ok(existsSync(at('build/native/build.ninja')));
  const t = run(at('build/native/test_core'), [], { env: { ...env, MXW_MODELS: at('no-models') } });
  assert.equal(t.status, 0, tail(t.out));
}

test('a failed configure does not stick; clean then build; a missing tool is named',
  { skip: SKIP, timeout: 1_200_000 }, () => {
    makeCopy();
    // the trap: a configure that fails, leaving a cache (with the failed run's setting) and no build files
    const c = run('cmake', ['-S', '.', '-B', 'build/native', '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Debug',
      '-DCMAKE_DISABLE_FIND_PACKAGE_cJSON=ON']);
    assert.notEqual(c.status, 0, 'the configure was meant to fail');
    assert.ok(existsSync(at('build/native/CMakeCache.txt')));
    assert.ok(!existsSync(at('build/native/build.ninja')));
    let r = run('npm', ['run', 'build', '--', 'native']);
    assert.match(r.out, /build\/native holds a CMake cache but no build\.ninja .*configuring again/);
    assertBuilt(r);
    assert.doesNotMatch(readFileSync(at('build/native/CMakeCache.txt'), 'utf8'), /CMAKE_DISABLE_FIND_PACKAGE_cJSON/);

    // a configure that did not finish (its stamp is written last): configured again, nothing recompiled
    rmSync(at('build/native/.mxw-configured'));
    r = run('npm', ['run', 'build', '--', 'native']);
    assert.match(r.out, /build\/native: the last configure did not finish: configuring again/);
    assert.match(r.out, /ninja: no work to do/);
    assertBuilt(r);
    r = run('npm', ['run', 'build', '--', 'native']);
    assert.doesNotMatch(r.out, /configuring again/);

    // npm run clean, then npm run build
    mkdirSync(at('dist'), { recursive: true });
    mkdirSync(at('coverage/c'), { recursive: true });
    r = run('npm', ['run', 'clean']);
    assert.equal(r.status, 0, r.out);
    for (const d of ['build', 'dist', 'coverage']) assert.ok(!existsSync(at(d)), `${d}/ is still there`);
    assert.ok(existsSync(at('csrc/core/ndarray.c')) && existsSync(at('node_modules/.mxw-installed')));
    assertBuilt(run('npm', ['run', 'build', '--', 'native']));

    // scripts/build.sh run directly with no cmake on PATH (only node and dirname): it stops, naming the command
    const bin = at('bin-no-cmake');
    mkdirSync(bin);
    for (const t of ['node', 'dirname']) symlinkSync(spawnSync('sh', ['-c', `command -v ${t}`]).stdout.toString().trim(), path.join(bin, t));
    r = run('/bin/bash', ['scripts/build.sh', 'native'], { env: { ...env, PATH: bin } });
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /^build: missing cmake gcc; install them with: npm run setup/m);
  });
