// The acceptance point for users' clones: `git clone` of the project into an empty folder with no
// ../shared beside it, then `CI=true npm test`, passes and reports how many real-file tests it
// skipped; with ../shared/models beside the clone, none are skipped.
//
// The clone is of this repository's HEAD (what a user gets; uncommitted work is not in it), in a
// fresh temporary folder, and its `npm test` is the real one: it installs its own npm
// dependencies, builds its own native and wasm targets from the committed sources and runs every
// test, with MXW_MODELS unset. Nothing of this checkout's build is reused. That takes about a
// minute; MXW_SKIP_CLEAN_CLONE=1 skips it (the nested run sets it, so it does not recurse). The
// nested run fuzzes each target 5 s instead of 60 (MXW_FUZZ_SECONDS).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, MODELS, REAL_FILES_SKIP } from './fixtures.mjs';

const SKIP = process.env.MXW_SKIP_CLEAN_CLONE ? 'MXW_SKIP_CLEAN_CLONE is set (nested run, or opted out)'
  : !existsSync(path.join(ROOT, '.git')) ? 'not a git checkout: nothing to clone' : false;

const run = (cmd, args, opts) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, error: r.error };
};
const tail = (s, n = 60) => s.split('\n').slice(-n).join('\n');
const SUMMARY = /^real-file tests skipped: (\d+) \(C: (\d+) in (\d+) ctest programs; JS: (\d+)\) -- (.*)$/m;

let dir = null, clone = null;
test.after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

test('a clean clone with no ../shared: CI=true npm test passes and reports the real-file tests it skipped',
  { skip: SKIP, timeout: 900_000 }, () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mxw-clean-clone-'));
    clone = path.join(dir, 'p');
    const c = run('git', ['clone', '-q', ROOT, clone]);
    assert.equal(c.status, 0, c.out);
    assert.ok(!existsSync(path.join(dir, 'shared')));
    // the outer run fuzzes each target 60 s; the clone's run only shows the fuzz build and step work
    // from a fresh checkout (5 s each)
    const env = { ...process.env, CI: 'true', MXW_SKIP_CLEAN_CLONE: '1', MXW_FUZZ_SECONDS: '5' };
    delete env.MXW_MODELS;
    for (const k of Object.keys(env)) if (k.startsWith('npm_') || k === 'NODE_TEST_CONTEXT') delete env[k];
    const r = run('npm', ['test'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    assert.equal(r.status, 0, `npm test failed in the clean clone:\n${tail(r.out, 120)}`);
    const m = r.out.match(SUMMARY);
    assert.ok(m, `no summary line:\n${tail(r.out)}`);
    const [, total, cCases, cPrograms, js, where] = m;
    assert.ok(Number(cPrograms) >= 1 && Number(cCases) >= Number(cPrograms), m[0]);
    assert.ok(Number(js) >= 1, m[0]);
    assert.equal(Number(total), Number(cCases) + Number(js));
    assert.equal(where, `real MXNet files not found at ${path.join(dir, 'shared/models')} (MXW_MODELS unset, default ../shared/models)`);
    // every skip is a real-file one, and says why
    assert.match(r.out, /^\s*\d+ - test_real_\w+ \(Skipped\)$/m);
    const skips = [...r.out.matchAll(/^\s*﹣ .* # (.*)$/gm)].map((x) => x[1]);
    assert.equal(skips.length, Number(r.out.match(/^ℹ skipped (\d+)$/m)?.[1]));
    assert.equal(skips.filter((x) => x.startsWith('real MXNet files not found at ')).length, Number(js));
    assert.deepEqual(skips.filter((x) => !x.startsWith('real MXNet files not found at ') && !x.startsWith('MXW_SKIP_CLEAN_CLONE')), [],
      'node skipped only the real-file tests (and, nested, this file\'s)');
    assert.ok(!/^✖/m.test(r.out), tail(r.out));
    process.stdout.write(`clean clone: ${m[0]}\n`);
  });

test('the same clone with ../shared/models beside it: no real-file test is skipped',
  { skip: SKIP || REAL_FILES_SKIP, timeout: 600_000 }, (t) => {
    if (!clone) { t.skip('the clean-clone run did not happen'); return; }
    mkdirSync(path.join(dir, 'shared'));
    symlinkSync(MODELS, path.join(dir, 'shared/models'));
    const env = { ...process.env, MXW_SKIP_CLEAN_CLONE: '1' };
    delete env.MXW_MODELS;
    for (const k of Object.keys(env)) if (k === 'NODE_TEST_CONTEXT') delete env[k];
    const c = run('ctest', ['--test-dir', 'build/native', '-L', 'real-files', '--output-on-failure'], { cwd: clone, env });
    assert.equal(c.status, 0, c.out);
    assert.match(c.out, /100% tests passed, 0 tests failed out of [1-9]/);
    assert.doesNotMatch(c.out, /Skipped/);
    // the JS test files that read the real files (they all take the setting from fixtures.mjs)
    const files = readdirSync(path.join(clone, 'tests/js')).filter((f) => f.endsWith('.test.mjs'))
      .filter((f) => readFileSync(path.join(clone, 'tests/js', f), 'utf8').includes('REAL_FILES_SKIP') && f !== 'clean_clone.test.mjs');
    assert.ok(files.length >= 1);
    const j = run(process.execPath, ['--test', ...files.map((f) => `tests/js/${f}`)], { cwd: clone, env });
    assert.equal(j.status, 0, tail(j.out, 120));
    assert.match(j.out, /^# skipped 0$/m);
    assert.match(j.out, /^# pass [1-9]\d*$/m);
  });
