// npm run lint / npm run format (issue 15) on a temporary copy of the project's lint set-up: the
// configuration files, scripts/lint.sh and node_modules, with a few small C and JS files written
// here and a compile_commands.json naming the C ones. A clean tree passes; a misformatted C file,
// a JS file with an unused variable and a C file with a bug clang-tidy's analyzer finds each make
// it fail, naming the file and the rule; npm run format rewrites the C file into the house style
// written out by hand below.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './fixtures.mjs';

const have = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const SKIP = !existsSync(path.join(ROOT, 'node_modules/.bin/eslint')) ? 'eslint is not installed (npm run setup)'
  : !have('clang-format-14') || !have('clang-tidy-14') ? 'clang-format-14/clang-tidy-14 are not installed (npm run setup)'
    : false;

let dir = null;
test.after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const env = { ...process.env };
for (const k of Object.keys(env)) if (k.startsWith('npm_') || k === 'NODE_TEST_CONTEXT') delete env[k];
const run = (script) => {
  const r = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
};
const write = (rel, text) => {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), text);
};

// Written by hand in the house style: Google's base, 2 spaces, attached braces, `type *name`.
const GOOD_C = `/* good.c -- a small file in the house style. */
#include <stddef.h>

typedef struct {
  int n;
  const float *data;
} span;

static float sum(const span *s) {
  float acc = 0.f;
  for (int i = 0; i < s->n; i++) acc += s->data[i];
  return acc;
}

float mean(const span *s) {
  if (s == NULL || s->n == 0) return 0.f;
  return sum(s) / (float)s->n;
}
`;
const GOOD_JS = `// good.mjs -- clean under the project's eslint config.
export function mean(xs) {
  let acc = 0;
  for (const x of xs) acc += x;
  return xs.length ? acc / xs.length : 0;
}
`;
// The same code as GOOD_C's function `mean`, badly laid out.
const BAD_FORMAT_C = `float   mean2(const float* d,int n)
{
    if(n==0) return 0.f; float acc=0.f;
    for(int i=0;i<n;i++){ acc+=d[i]; }
    return acc/(float)n;
}
`;
// ... and after npm run format (worked out by hand from .clang-format)
const BAD_FORMAT_C_FORMATTED = `float mean2(const float *d, int n) {
  if (n == 0) return 0.f;
  float acc = 0.f;
  for (int i = 0; i < n; i++) {
    acc += d[i];
  }
  return acc / (float)n;
}
`;
const UNUSED_JS = `// an unused variable
export function twice(x) {
  const unused = x * 3;
  return x * 2;
}
`;
// formatted, but it reads freed memory (clang-analyzer-unix.Malloc)
const TIDY_C = `#include <stdlib.h>

int use_after_free(int n) {
  int *p = malloc(sizeof(int) * (size_t)n);
  if (p == NULL) return -1;
  p[0] = n;
  free(p);
  return p[0];
}
`;

test('npm run lint: a clean copy passes; a misformatted C file, an unused JS variable and an analyzer finding fail',
  { skip: SKIP, timeout: 300_000 }, () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mxw-lint-'));
    for (const f of ['.clang-format', '.clang-tidy', 'eslint.config.mjs', 'package.json', 'scripts/lint.sh',
      'scripts/data/clang-tidy-baseline.txt']) {
      mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      copyFileSync(path.join(ROOT, f), path.join(dir, f));
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    write('csrc/core/good.c', GOOD_C);
    write('js/good.mjs', GOOD_JS);
    const db = (files) => write('build/native/compile_commands.json', JSON.stringify(files.map((file) => (
      { directory: dir, command: `cc -std=gnu11 -Wall -c ${file} -o /dev/null`, file })), null, 1));
    db(['csrc/core/good.c']);

    let r = run('lint');
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /^clang-format: 1 C files formatted$/m);
    assert.match(r.out, /^clang-tidy: 1 files, no new findings/m);
    assert.match(r.out, /^eslint: 2 files, 0 errors, 0 warnings/m); // js/good.mjs and eslint.config.mjs
    assert.match(r.out, /^lint: OK$/m);

    write('csrc/ops/bad_format.c', BAD_FORMAT_C);
    r = run('lint');
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /^clang-format: 1 of 2 C files are not formatted/m);
    assert.match(r.out, /^ {2}csrc\/ops\/bad_format\.c$/m);
    assert.match(r.out, /^lint: FAILED: clang-format \(1 files\)$/m);
    // npm run format rewrites it into the style above, and lint passes again
    r = run('format');
    assert.equal(r.status, 0, r.out);
    assert.equal(readFileSync(path.join(dir, 'csrc/ops/bad_format.c'), 'utf8'), BAD_FORMAT_C_FORMATTED);
    assert.equal(readFileSync(path.join(dir, 'csrc/core/good.c'), 'utf8'), GOOD_C, 'a formatted file is left as it is');
    assert.equal(run('lint').status, 0);

    write('js/unused.mjs', UNUSED_JS);
    r = run('lint');
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /^js\/unused\.mjs:3:9: 'unused' is assigned a value but never used\..* \[no-unused-vars\]$/m);
    assert.match(r.out, /^eslint: 3 files, 1 errors/m);
    assert.match(r.out, /^lint: FAILED: eslint$/m);
    rmSync(path.join(dir, 'js/unused.mjs'));

    write('csrc/core/uaf.c', TIDY_C);
    db(['csrc/core/good.c', 'csrc/ops/bad_format.c', 'csrc/core/uaf.c']);
    r = run('lint');
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /^clang-tidy: csrc\/core\/uaf\.c: clang-analyzer-unix\.Malloc: 1 finding\(s\), 0 accepted/m);
    assert.match(r.out, /^ {2}csrc\/core\/uaf\.c:8:10: warning: Use of memory after it is freed \[clang-analyzer-unix\.Malloc\]$/m);
    assert.match(r.out, /^lint: FAILED: clang-tidy \(1 file\/check pairs with new findings\)$/m);
    // a finding counted in the baseline is accepted; one more of the same check in that file is not
    write('scripts/data/clang-tidy-baseline.txt', '# test\n1 clang-analyzer-unix.Malloc csrc/core/uaf.c\n');
    assert.equal(run('lint').status, 0);
    write('csrc/core/uaf.c', `${TIDY_C}
int use_after_free2(void) {
  int *q = malloc(sizeof(int));
  if (q == NULL) return -1;
  free(q);
  return *q;
}
`);
    r = run('lint');
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /clang-analyzer-unix\.Malloc: 2 finding\(s\), 1 accepted in the baseline/);
  });
