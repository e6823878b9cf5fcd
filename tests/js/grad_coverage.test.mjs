// Every registered operator either has a gradient (FGradient) that some test checks against
// finite differences (a `checkGrad('<name>'` call in tests/js), or carries MXNet's
// non-differentiable mark (zero gradients). The registry reports both flags (dist/OPS.md's
// "gradient" column is generated from them).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { registry } from '../../dist/core.mjs';

const dir = path.dirname(fileURLToPath(import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs'));
const read = (f) => readFileSync(path.join(dir, f), 'utf8');
// An op's gradient is tested when a checkGrad call names it, or when one of the gradient test
// files (grad_*.test.mjs: checkGrad loops over op tables, and explicit tests of the ops whose
// MXNet gradient is not the derivative, e.g. loss heads) names it as a string, a table key or an
// nd.<op>( call.
const checkedNames = new Set([
  ...files.flatMap((f) => [...read(f).matchAll(/checkGrad\(\s*['"`]([\w.]+)['"`]/g)].map((m) => m[1])),
  ...files.filter((f) => f.startsWith('grad_')).flatMap((f) => [...read(f).matchAll(/['"`]([\w.]+)['"`]|\b(\w+):|nd\.(\w+)\(/g)]
    .map((m) => m[1] ?? m[2] ?? m[3])),
]);

// Ops whose gradient is tested through their own path rather than checkGrad: the tape ops of a
// hybridized call and of autograd.Function (hybridized-vs-imperative and Function tests), and
// the `_backward_*` ops, which are gradients themselves: those with a gradient of their own
// (second order, autograd.grad with create_graph) are covered by the test below.
const OWN_TESTS = { _CachedOp: 'hybrid_backward.test.mjs', _CustomFunction: 'autograd_semantics.test.mjs' };
test('every op has a gradient with a finite-difference test, or MXNet\'s non-differentiable mark', () => {
  const missingTest = [], unmarked = [];
  for (const op of registry.ops) {
    if (op.name.startsWith('_backward_')) continue;
    if (op.name in OWN_TESTS) {
      assert.ok(op.gradient, `${op.name} has a gradient`);
      continue;
    }
    if (op.gradient) {
      if (![op.name, ...op.aliases].some((n) => checkedNames.has(n))) missingTest.push(op.name);
    } else if (!op.no_grad) {
      unmarked.push(op.name);
    }
  }
  assert.deepEqual(unmarked, [], `ops with neither a gradient nor the non-differentiable mark: ${unmarked.join(', ')}`);
  assert.deepEqual(missingTest, [], `ops whose gradient no checkGrad test covers: ${missingTest.join(', ')}`);
});

test('the registry reports the flags the docs table shows', () => {
  const exp = registry.ops.find((o) => o.name === 'broadcast_mul');
  assert.equal(exp.gradient, true);
  const eq = registry.ops.find((o) => o.name === 'broadcast_equal');
  assert.equal(eq.gradient, false);
  assert.equal(eq.no_grad, true);
});

test('every backward op with a gradient of its own has a test of it', () => {
  // named in a gradient test file, or (second order of an elementwise op) its forward op checked
  // by grad_second_order.test.mjs's tables
  const gradSources = files.filter((f) => f.startsWith('grad_')).map(read).join('\n');
  const src = read('grad_second_order.test.mjs');
  const second = new Set([...src.matchAll(/^ {2}(\w+): \[/gm), ...src.matchAll(/nd\.(\w+)\(x, /g)].map((m) => m[1]));
  const missing = registry.ops.filter((op) => op.name.startsWith('_backward_') && op.gradient)
    .map((op) => op.name)
    .filter((name) => !gradSources.includes(`'${name}'`) && !second.has(name.slice('_backward_'.length)));
  assert.deepEqual(missing, [], `backward ops whose own gradient no test covers: ${missing.join(', ')}`);
  assert.ok(second.size >= 30, `grad_second_order.test.mjs lists ${second.size} ops`);
});
