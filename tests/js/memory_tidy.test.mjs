// mx.tidy's scope rules (issue 9, finding 5): a throwing tidy disposes what its function created
// and rethrows; nested tidies adopt what an inner one returns; keep() outlives every scope. Each
// scenario runs on both libraries and the live-array count it leaves is compared with TF.js's
// tf.tidy (the reference for these rules) and with the hand-worked count.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { tf } from './oracle.mjs';

const { nd } = mx;

const MX = {
  name: 'mxnet-wasm', tidy: mx.tidy, keep: mx.keep, make: () => nd.ones([3]), live: () => mx.memory().numArrays,
  disposed: (a) => a.isDisposed, dispose: (a) => a.dispose(),
};
const TF = {
  name: 'TF.js', tidy: (fn) => tf.tidy(fn), keep: tf.keep, make: () => tf.ones([3]), live: () => tf.memory().numTensors,
  disposed: (a) => a.isDisposed, dispose: (a) => a.dispose(),
};
const boom = new Error('boom');
const swallow = (fn) => { try { fn(); } catch (e) { if (e !== boom) throw e; } };

// Each scenario returns {survivors, gone}: arrays that must still be usable and arrays that must
// have been disposed; `expect` is the hand-worked change of the live count.
const SCENARIOS = {
  'a throwing tidy disposes the 12 arrays its function created': {
    expect: 0,
    run(L) {
      const made = [];
      swallow(() => L.tidy(() => { for (let i = 0; i < 12; i++) made.push(L.make()); throw boom; }));
      return { survivors: [], gone: made };
    },
  },
  '1,000 throwing tidies leave nothing': {
    expect: 0,
    run(L) {
      for (let k = 0; k < 1000; k++) swallow(() => L.tidy(() => { L.make(); L.make(); throw boom; }));
      return { survivors: [], gone: [] };
    },
  },
  'an inner tidy throwing inside an outer one: the inner arrays go, the outer ones stay until it ends': {
    expect: 1,
    run(L) {
      let inner = [], before, after;
      const r = L.tidy(() => {
        before = L.make();
        swallow(() => L.tidy(() => { inner = [L.make(), L.make()]; throw boom; }));
        after = L.make();
        return after;
      });
      assert.equal(r, after);
      return { survivors: [after], gone: [...inner, before] };
    },
  },
  "an inner tidy's result is adopted by the outer one, which disposes it when it throws": {
    expect: 0,
    run(L) {
      let fromInner = null, innerTemp = null;
      swallow(() => L.tidy(() => {
        fromInner = L.tidy(() => { innerTemp = L.make(); return L.make(); });
        throw boom;
      }));
      return { survivors: [], gone: [fromInner, innerTemp] };
    },
  },
  'results in nested arrays and objects move up three levels': {
    expect: 2,
    run(L) {
      const temps = [];
      const out = L.tidy(() => {
        const mid = L.tidy(() => {
          const deep = L.tidy(() => { temps.push(L.make()); return { a: [L.make(), { b: L.make() }] }; });
          temps.push(L.make());
          return [deep.a[0], deep.a[1].b];
        });
        temps.push(L.make());
        return { x: mid[0], y: [mid[1]] };
      });
      return { survivors: [out.x, out.y[0]], gone: temps };
    },
  },
  'keep() inside a throwing tidy survives it': {
    expect: 1,
    run(L) {
      let kept = null, other = null;
      swallow(() => L.tidy(() => { kept = L.keep(L.make()); other = L.make(); throw boom; }));
      return { survivors: [kept], gone: [other] };
    },
  },
  'an array created outside and returned from inside is left alone': {
    expect: 1,
    run(L) {
      const outside = L.make();
      const r = L.tidy(() => { L.make(); return outside; });
      assert.equal(r, outside);
      return { survivors: [outside], gone: [] };
    },
  },
  'an outer array returned by an inner tidy stays in the outer scope and goes with it': {
    expect: 0,
    run(L) {
      let outerArr = null;
      L.tidy(() => {
        outerArr = L.make();
        L.tidy(() => outerArr);
        assert.equal(L.disposed(outerArr), false);
      });
      return { survivors: [], gone: [outerArr] };
    },
  },
  'an array disposed inside the tidy and one returned twice': {
    expect: 1,
    run(L) {
      let early = null;
      const r = L.tidy(() => { early = L.make(); L.dispose(early); const x = L.make(); return [x, x]; });
      return { survivors: [r[0]], gone: [early] };
    },
  },
};

for (const [name, sc] of Object.entries(SCENARIOS)) {
  test(`tidy: ${name} (as TF.js)`, () => {
    const deltas = {};
    for (const L of [MX, TF]) {
      const before = L.live();
      const { survivors, gone } = sc.run(L);
      deltas[L.name] = L.live() - before;
      for (const a of survivors) assert.equal(L.disposed(a), false, `${L.name}: a result was disposed`);
      for (const a of gone) assert.equal(L.disposed(a), true, `${L.name}: an array outlived its scope`);
      for (const a of survivors) L.dispose(a);
      assert.equal(L.live(), before, `${L.name}: nothing else left`);
    }
    assert.equal(deltas['mxnet-wasm'], sc.expect, 'mxnet-wasm: live arrays added');
    assert.equal(deltas['TF.js'], sc.expect, 'TF.js: live tensors added');
  });
}

test('tidy: the error thrown is the one rethrown, and the scope stack is clean afterwards', () => {
  const before = mx.memory().numArrays;
  const err = new TypeError('mine');
  assert.throws(() => mx.tidy(() => { nd.zeros([4]); throw err; }), (e) => e === err);
  // an MXNetError from an operator inside the tidy (bad shapes) is rethrown as well
  assert.throws(() => mx.tidy(() => nd.zeros([2, 3]).add(nd.zeros([4, 5]))), mx.MXNetError);
  assert.equal(mx.memory().numArrays, before);
  // no scope left open: an array made now is not disposed by anything
  const a = nd.zeros([2]);
  mx.tidy(() => nd.ones([2]));
  assert.equal(a.isDisposed, false);
  a.dispose();
});

test('tidy: Maps and Sets in the result are searched too (a Map is not searched by TF.js)', () => {
  const before = mx.memory().numArrays;
  const r = mx.tidy(() => ({ m: new Map([['w', nd.ones([2])]]), s: new Set([nd.ones([2])]), tmp: 1, t: nd.ones([2]).mul(2) }));
  assert.equal(mx.memory().numArrays, before + 3); // the Map's, the Set's and t; ones([2]) under mul went
  assert.deepEqual(r.m.get('w').toArray(), [1, 1]);
  assert.deepEqual([...r.s][0].toArray(), [1, 1]);
  assert.deepEqual(r.t.toArray(), [2, 2]);
  for (const a of [r.m.get('w'), [...r.s][0], r.t]) a.dispose();
  // a cyclic result does not loop
  const cyc = mx.tidy(() => { const o = { a: nd.ones([1]) }; o.self = o; return o; });
  assert.deepEqual(cyc.a.toArray(), [1]);
  cyc.a.dispose();
  assert.equal(mx.memory().numArrays, before);
});

test('tidy: an async function is refused and what it made before its first await is disposed', async () => {
  const before = mx.memory().numArrays;
  let made = null;
  assert.throws(() => mx.tidy(async () => { made = nd.ones([5]); await null; }), /synchronous/);
  assert.equal(made.isDisposed, true);
  assert.equal(mx.memory().numArrays, before);
  assert.throws(() => mx.tidy(5), /takes a function/);
});

test('tidy: 100,000 operations inside one tidy end with nothing left', () => {
  const before = mx.memory();
  const x = nd.ones([16]);
  const s = mx.tidy(() => {
    let acc = x;
    for (let i = 0; i < 100000; i++) {
      const next = acc.add(1);
      if (acc !== x) acc.dispose(); // disposed early: the scope does not keep its wrapper
      acc = next;
    }
    return acc.sum();
  });
  assert.equal(s.asscalar(), 100001 * 16); // 16 elements, each 1 + 100,000
  s.dispose();
  x.dispose();
  assert.equal(mx.memory().numArrays, before.numArrays);
});
