// The nd namespace is generated from the C registry: it must hold exactly the registered names
// and aliases (as the native C build lists them) plus MXNet's documented Python-level helpers,
// and every registered op must be exercised by some test.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import * as mx from 'mxnet-wasm';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const listOps = path.join(root, 'build/native/mxw_list_ops');

// ndarray.py-level functions that are not operators in MXNet's registry either.
const HELPERS = ['NDArray', 'array', 'empty', 'zeros', 'ones', 'full', 'arange', 'add', 'subtract',
  'multiply', 'divide', 'modulo', 'power', 'maximum', 'minimum', 'equal', 'not_equal', 'greater',
  'greater_equal', 'lesser', 'lesser_equal', 'concatenate', 'true_divide', 'logical_and', 'logical_or', 'logical_xor', 'random', 'save', 'saveBytes', 'load', 'loadBytes', 'CachedOp', 'image', 'contrib', 'linalg', 'split_v2'];

function nativeRegistry() {
  assert.ok(existsSync(listOps), 'build/native/mxw_list_ops is missing: run `npm test` (scripts/build.sh) first');
  return execFileSync(listOps, { encoding: 'utf8' }).trim().split('\n').map((l) => l.split(' '));
}

test('nd holds exactly the C registry names and aliases, plus the documented helpers', () => {
  const entries = nativeRegistry();
  const names = new Set(entries.flat());
  const ndNames = new Set(Object.keys(mx.nd));
  for (const n of names) assert.ok(ndNames.has(n), `registered op or alias ${n} is missing from nd`);
  for (const n of ndNames) {
    assert.ok(names.has(n) || HELPERS.includes(n), `nd.${n} is neither a registered op nor a documented helper`);
  }
  // Aliases are the canonical op, not a copy.
  for (const [name, ...aliases] of entries) {
    for (const a of aliases) if (!HELPERS.includes(a)) assert.equal(mx.nd[a], mx.nd[name], `${a} -> ${name}`);
  }
  assert.deepEqual([...mx.registeredOps].sort(), entries.map((e) => e[0]).sort());
});

test('every registered op is exercised by at least one test', () => {
  const dirs = [path.join(root, 'tests/js'), path.join(root, 'tests/c')];
  let text = '';
  for (const d of dirs) {
    for (const f of readdirSync(d)) {
      if (/\.test\.mjs$/.test(f) && f !== 'registry.test.mjs') text += readFileSync(path.join(d, f), 'utf8');
      if (/^test_.*\.c$/.test(f)) text += readFileSync(path.join(d, f), 'utf8');
    }
  }
  const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const used = (n) => new RegExp(`(nd\\.${esc(n)}\\b|['"\`]${esc(n)}['"\`])`).test(text);
  // A `_backward_<Op>` kernel runs in every gradient test of <Op> (checkGrad calls, which
  // grad_coverage.test.mjs requires for each op with a gradient), so it counts as exercised
  // when its forward op's gradient is checked.
  const gradText = readdirSync(path.join(root, 'tests/js')).filter((f) => /^grad_.*\.test\.mjs$/.test(f))
    .map((f) => readFileSync(path.join(root, 'tests/js', f), 'utf8')).join('\n');
  const checked = [...text.matchAll(/checkGrad\(\s*['"`]([\w.]+)['"`]/g), ...gradText.matchAll(/['"`]([\w.]+)['"`]/g)].map((m) => m[1]);
  checked.push('_CachedOp', '_CustomFunction'); // their own gradient tests (hybrid_backward, autograd_semantics)
  const viaForward = (n) => n.startsWith('_backward_') && checked.map((f) => f.replace(/^_/, ''))
    .some((f) => n.slice(10) === f || n.slice(10).startsWith(`${f}_`));
  // A `_backward_grad_<op>` kernel (the second derivative) runs in the second-order test of <op>
  // (grad_second_order.test.mjs's tables).
  const secondOrder = new Set([...readFileSync(path.join(root, 'tests/js/grad_second_order.test.mjs'), 'utf8')
    .matchAll(/^ {2}(\w+): \[/gm)].map((m) => m[1]));
  const viaSecond = (n) => n.startsWith('_backward_grad_') && secondOrder.has(n.slice('_backward_grad_'.length));
  const missing = nativeRegistry().filter((names) => !names.some(used) && !viaForward(names[0]) && !viaSecond(names[0]))
    .map((names) => names[0]);
  assert.deepEqual(missing, [], `ops with no test: ${missing.join(', ')}`);
});
