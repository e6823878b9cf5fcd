// MXNet's control-flow operators (csrc/graph/subgraph.c, js/control_flow.mjs): foreach,
// while_loop and cond, imperative (nd.contrib) and hybridized (F.contrib -> _foreach /
// _while_loop / _cond nodes with subgraphs), against MXNet 1.9.1's own unit tests
// (tests/python/unittest/test_contrib_control_flow.py: test_while_loop_simple_forward,
// test_foreach_nested, test_cond) rewritten as plain float64 JS, and hand-worked values. The JSON
// fixtures (fixtures/control_flow/*.json) are written in MXNet's exact layout by an emulation of
// dmlc's JSON writer (make_fixtures.py), independent of the C writer.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';
import { DecayLoop } from './control_flow_blocks.mjs';

const { nd, sym, gluon, autograd } = mx;
const fixture = (n) => readFileSync(new URL(`./fixtures/control_flow/${n}.json`, import.meta.url), 'utf8');
const isErr = (re) => (e) => e instanceof mx.MXNetError && re.test(e.message);
const vals = (a) => Array.from(a.toTypedArray(), Number);
// Runs a Symbol with inputs by name (its listInputs order).
function run(s, byName) {
  const op = new mx.CachedOp(s);
  const outs = op.forward(op.inputNames.map((n) => byName[n]));
  op.dispose?.();
  return outs;
}

test('JSON fixtures in MXNet layout load, run with hand-worked values and are written back byte for byte', () => {
  for (const name of ['foreach', 'while_loop', 'cond']) {
    const text = fixture(name);
    const s = sym.fromJSON(text);
    assert.equal(s.tojson(), text, `${name} round trip`);
    assert.equal(sym.fromJSON(s.tojson()).tojson(), text);
  }
  // foreach: out_t = x_t + s; s <- out_t + bias
  let [o, st] = run(sym.fromJSON(fixture('foreach')),
    { data: nd.array([[1, 2], [3, 4], [5, 6]]), init: nd.array([10, 20]), bias: nd.array([1, -1]) });
  assert.deepEqual(o.toArray(), [[11, 22], [15, 25], [21, 30]]);
  assert.deepEqual(st.toArray(), [22, 29]);
  // while_loop over (i, s) while i < n: out = 2s; i += 1; s += i; max_iterations 5, zero rows after
  const wl = sym.fromJSON(fixture('while_loop'));
  const w = (n) => run(wl, { i: nd.array([0]), s: nd.array([1]), n: nd.array([n]) }).map(vals);
  assert.deepEqual(w(3), [[2, 2, 4, 0, 0], [3], [4]]);
  assert.deepEqual(w(0), [[0, 0, 0, 0, 0], [0], [1]]);
  assert.deepEqual(w(100), [[2, 2, 4, 8, 14], [5], [11]]);
  // cond: p > 0 ? a * b : b - a
  const cd = sym.fromJSON(fixture('cond'));
  [o] = run(cd, { p: nd.array([2]), a: nd.array([2, 3]), b: nd.array([5, 7]) });
  assert.deepEqual(vals(o), [10, 21]);
  [o] = run(cd, { p: nd.array([0]), a: nd.array([2, 3]), b: nd.array([5, 7]) });
  assert.deepEqual(vals(o), [3, 4]);
  // shape inference goes through the subgraphs
  const wl2 = sym.fromJSON(fixture('while_loop'));
  assert.deepEqual(wl2.inferShape({ i: [1], s: [1], n: [1] }), [[[1], [1], [1]], [[5, 1], [1], [1]], []]);
  assert.deepEqual(wl2.inferType({ i: 'float64', s: 'float64', n: 'float64' }),
    [['float64', 'float64', 'float64'], ['float64', 'float64', 'float64'], []]);
  void st;
});

test('hostile control-flow JSON gives an MXNetError naming the problem, and the library stays usable', () => {
  const text = fixture('foreach');
  const bad = [
    [text.replace('"in_data_locs": "[0]"', '"in_data_locs": "[9]"'), /in_data_locs\[0\] is 9/],
    [text.replace('"remain_locs": "[2]"', '"remain_locs": "[1]"'), /both name subgraph input 1/],
    [text.replace('"subgraphs": [', '"subgraphs": [], "x": ['), /takes 1 subgraph, the node has 0/],
    [text.replace('"num_outputs": "2"', '"num_outputs": "7"'), /num_outputs is 7/],
    [text.replace('"heads": [[2, 0, 0], [4, 0, 0]]', '"heads": [[2, 0, 0], [5, 0, 0]]'), /subgraph 0: .*head 1/],
    [fixture('cond').replace('"else_input_locs": "[2, 1]"', '"else_input_locs": "[2, 1, 0]"'), /else_input_locs names 3 inputs/],
    [fixture('while_loop').replace('"max_iterations": "5"', '"max_iterations": "-1"'), /max_iterations/],
  ];
  // deep nesting: subgraphs in subgraphs past the reader's limit
  let deep = '{"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[0, 0, 0]]}';
  for (let d = 0; d < 30; d++) {
    deep = `{"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "_copy", "name": "c", "inputs": [[0, 0, 0]], "subgraphs": [${deep}]}], "heads": [[1, 0, 0]]}`;
  }
  bad.push([deep, /nested more than 16 levels deep/]);
  for (const [t, re] of bad) assert.throws(() => sym.fromJSON(t), isErr(re));
  // the ops without subgraphs, composed or called directly
  assert.throws(() => sym._foreach(sym.var('x'), { num_args: 2, num_outputs: 1, num_out_data: 1, in_data_locs: '[0]', in_state_locs: '[]', remain_locs: '[]' }),
    isErr(/takes 1 subgraph, the node has 0/));
  const [o] = run(sym.fromJSON(text), { data: nd.array([[1, 1]]), init: nd.array([1, 2]), bias: nd.array([0, 0]) });
  assert.deepEqual(o.toArray(), [[2, 3]]);
});

// ---- foreach -----------------------------------------------------------------------------------------
// A block whose body scales each row by a parameter w and adds the running state.
class ScanBlock extends gluon.HybridBlock {
  constructor() {
    super();
    this.w = this.params.get('w', { shape: [3], init: 'ones' });
  }
  hybridForward(F, x, s, params) {
    const [out, [last]] = F.contrib.foreach((row, [st]) => {
      const y = F.broadcast_add(F.broadcast_mul(row, params.w), st);
      return [y, [y]];
    }, x, [s]);
    return [out, last];
  }
}

test('foreach: a scan (cumulative sum of w * x_t) imperatively, hybridized and in float64 JS agree', () => {
  const r = rng(7).uniform(12);
  const X = Array.from({ length: 4 }, (_, i) => Array.from(r.slice(3 * i, 3 * i + 3), Number));
  const S0 = [0.5, -1, 2];
  const W = [1.5, -0.5, 0.25];
  // plain JS: out_t = w * x_t + s_{t-1}
  const want = [];
  let s = S0.slice();
  for (const row of X) {
    s = row.map((v, j) => v * W[j] + s[j]);
    want.push(s);
  }
  for (const hybrid of [false, true]) {
    const net = new ScanBlock();
    net.initialize();
    net.w.setData(nd.array(W));
    if (hybrid) net.hybridize();
    for (let k = 0; k < 2; k++) { // a second call reuses the cached graph
      const [out, last] = net.forward(nd.array(X), nd.array(S0));
      assert.deepEqual(out.shape, [4, 3]);
      assertClose(vals(out), want.flat(), { atol: 1e-6 });
      assertClose(vals(last), want[3], { atol: 1e-6 });
    }
    // another sequence length
    const [out2] = net.forward(nd.array(X.slice(0, 2)), nd.array(S0));
    assertClose(vals(out2), want.slice(0, 2).flat(), { atol: 1e-6 });
  }
});

test('foreach: nested lists of data and states keep their format (test_output_format_foreach)', () => {
  const a = nd.array([[1, 2], [3, 4]]);
  const b = nd.array([[10], [20]]);
  const body = ([x, y], [[s1], s2]) => [[x.add(s1), [y.mul(2)]], [[s1.add(1)], s2.add(y)]];
  const [outs, states] = nd.contrib.foreach(body, [a, b], [[nd.array([0, 0])], nd.array([5])]);
  assert.deepEqual(outs[0].toArray(), [[1, 2], [4, 5]]);
  assert.deepEqual(outs[1][0].toArray(), [[20], [40]]);
  assert.deepEqual(states[0][0].toArray(), [2, 2]);
  assert.deepEqual(states[1].toArray(), [35]);
  // the same body traced: outputs and states in the same nesting, same values
  const [so, ss] = sym.contrib.foreach(body, [sym.var('a'), sym.var('b')], [[sym.var('s1')], sym.var('s2')]);
  const g = sym.Group([so[0], so[1][0], ss[0][0], ss[1]]);
  const r = run(g, { a, b, s1: nd.array([0, 0]), s2: nd.array([5]) }).map((x) => x.toArray());
  assert.deepEqual(r, [[[1, 2], [4, 5]], [[20], [40]], [2, 2], [35]]);
});

test('foreach nested in foreach (test_foreach_nested): symbolic, imperative and float64 JS agree; JSON round trip', () => {
  const stepIn = (in1, states) => { const out = in1.mul(2).add(states[0]); return [out, [out]]; };
  const stepSym = (in1, states) => {
    const out1 = sym.contrib.foreach(stepIn, in1, states);
    const out = sym.broadcast_add(out1[0], states[0]);
    return [out, [sym.squeeze(sym.slice(out, { begin: [0, 0], end: [1, 2] }))]];
  };
  const stepNd = (in1, states) => {
    const out1 = nd.contrib.foreach(stepIn, in1, states);
    const out = nd.broadcast_add(out1[0], states[0]);
    return [out, [nd.squeeze(nd.slice(out, { begin: [0, 0], end: [1, 2] }))]];
  };
  let [out, states] = sym.contrib.foreach(stepSym, sym.var('v1'), [sym.var('v2')]);
  assert.ok(Array.isArray(states) && states.length === 1);
  out = sym.broadcast_add(out, states[0]);
  const js1 = out.tojson();
  assert.equal(sym.fromJSON(js1).tojson(), js1);
  const data = nd.arange(8).reshape([2, 2, 2]);
  const state = nd.arange(2);
  const [got] = run(sym.fromJSON(js1), { v1: data, v2: state });
  const [o2, st2] = nd.contrib.foreach(stepNd, data, [state]);
  const nd2 = nd.broadcast_add(o2, st2[0]);
  // plain JS
  const D = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]];
  let S = [0, 1];
  const outs = [];
  for (const m of D) {
    let s = S;
    const inner = m.map((row) => { s = row.map((v, j) => v * 2 + s[j]); return s; });
    const o = inner.map((row) => row.map((v, j) => v + S[j]));
    outs.push(o);
    S = o[0];
  }
  const want = outs.map((o) => o.map((row) => row.map((v, j) => v + S[j])));
  assert.deepEqual(got.toArray(), want);
  assert.deepEqual(nd2.toArray(), want);
});

// ---- while_loop --------------------------------------------------------------------------------------
class WhileBlock extends gluon.HybridBlock {
  constructor(cond, func, maxIterations) {
    super();
    Object.assign(this, { cond, func, maxIterations });
  }
  hybridForward(F, ...loopVars) {
    const vars = loopVars.filter((v) => v !== null && !(v && v.constructor === Object)); // not the params object
    return F.contrib.while_loop(this.cond, this.func, vars, this.maxIterations);
  }
}
const i64 = (v) => nd.array([v], { dtype: 'int64' });

test('while_loop: test_while_loop_simple_forward cases, imperative and hybridized', () => {
  for (const hybrid of [false, true]) {
    const mk = (c, f, m) => { const b = new WhileBlock(c, f, m); if (hybrid) b.hybridize(); return b; };
    // 1.1: sum of 1..5
    let [, r] = mk((i) => i.le(5), (i, s) => [null, [i.add(1), s.add(i)]], 10).forward(i64(1), i64(0));
    assert.deepEqual(r.map(vals), [[6], [15]]);
    // 1.2: 1000 steps of a loop whose condition is a loop variable
    [, r] = mk((i, s, t) => t, (i, s, t) => [null, [i.add(1), s.add(i), t]], 1000).forward(i64(1), i64(0), i64(1));
    assert.deepEqual(r.map(vals), [[1001], [500500], [1]]);
    // 1.3: no step at all
    [, r] = mk((i, s, f) => f, (i, s, f) => [null, [i.add(1), s.add(i), f]], 1000).forward(i64(1), i64(0), i64(0));
    assert.deepEqual(r.map(vals), [[1], [0], [0]]);
    // 2.1: step outputs stacked to max_iterations: 1..100 then zero rows
    const [outs, [ri, rs]] = mk((i) => i.le(100), (i, s) => [i, [i.add(1), s.add(i)]], 1000).forward(i64(1), i64(0));
    assert.deepEqual(outs.shape, [1000, 1]);
    const o = vals(outs);
    assert.deepEqual(o.slice(0, 100), Array.from({ length: 100 }, (_, k) => k + 1));
    assert.ok(o.slice(100).every((v) => v === 0));
    assert.deepEqual([vals(ri), vals(rs)], [[101], [5050]]);
  }
});

test('while_loop: float data with a captured parameter; hybridized equals float64 JS', () => {
  const G = [0.9, -1.3];
  const X = [0.7, 0.2];
  for (const hybrid of [false, true]) {
    const net = new DecayLoop({ gOptions: { init: 'ones' } });
    net.initialize();
    net.g.setData(nd.array(G));
    if (hybrid) net.hybridize();
    const [ys, sums, last] = net.forward(nd.array(X), nd.array([4]));
    let v = X.slice();
    const want = [];
    for (let k = 0; k < 4; k++) { v = v.map((a, j) => Math.tanh(a * G[j])); want.push(v); }
    assert.deepEqual(ys.shape, [6, 2]);
    assertClose(vals(ys), [...want.flat(), 0, 0, 0, 0], { atol: 1e-6 });
    assertClose(vals(sums), [...want.map((w) => w[0] + w[1]), 0, 0], { atol: 1e-6 });
    assertClose(vals(last), want[3], { atol: 1e-6 });
  }
});

// ---- cond --------------------------------------------------------------------------------------------
test('cond on a scalar predicate: both branches, nested output format, imperative and hybridized', () => {
  class Branch extends gluon.HybridBlock {
    hybridForward(F, p, a, b) {
      return F.contrib.cond(p.sum().gt(0), () => [a.mul(b), [b.sub(a)]], () => [b.sub(a), [a.mul(b).mul(-1)]]);
    }
  }
  const A = [2, -3];
  const B = [5, 7];
  for (const hybrid of [false, true]) {
    const net = new Branch();
    if (hybrid) net.hybridize();
    let [x, [y]] = net.forward(nd.array([1, 0.5]), nd.array(A), nd.array(B));
    assert.deepEqual([vals(x), vals(y)], [[10, -21], [3, 10]]);
    [x, [y]] = net.forward(nd.array([-1, 0.5]), nd.array(A), nd.array(B));
    assert.deepEqual([vals(x), vals(y)], [[3, 10], [-10, 21]]);
  }
  // the imperative predicate must be one element
  assert.throws(() => nd.contrib.cond(nd.array([1, 1]), () => 1, () => 2), isErr(/exactly one element/));
  assert.equal(nd.contrib.cond(nd.array([0]), () => 'then', () => 'else'), 'else');
});

test('cond inside a foreach body (nested control flow), hybridized equals float64 JS', () => {
  class Clip extends gluon.HybridBlock {
    hybridForward(F, x, s) {
      const [out, [tot]] = F.contrib.foreach((row, [acc]) => {
        const y = F.contrib.cond(row.sum().gt(0), () => row.mul(2), () => row.mul(-1));
        return [y, [acc.add(y)]];
      }, x, [s]);
      return [out, tot];
    }
  }
  const X = [[1, 2], [-3, 1], [0.5, -0.25], [-1, -1]];
  const want = X.map((r) => (r[0] + r[1] > 0 ? r.map((v) => v * 2) : r.map((v) => -v)));
  const tot = want.reduce((a, r) => a.map((v, j) => v + r[j]), [0, 0]);
  for (const hybrid of [false, true]) {
    const net = new Clip();
    if (hybrid) net.hybridize();
    const [out, t] = net.forward(nd.array(X), nd.array([0, 0]));
    assertClose(vals(out), want.flat(), { atol: 1e-6 });
    assertClose(vals(t), tot, { atol: 1e-6 });
  }
  // the traced graph: a _cond node inside the _foreach subgraph, written and read back
  const net = new Clip();
  net.hybridize();
  net.forward(nd.array(X), nd.array([0, 0]));
  const j = net._cachedGraph[1].tojson();
  assert.match(j, /"op": "_foreach"[^]*"subgraphs"[^]*"op": "_cond"/);
  assert.equal(sym.fromJSON(j).tojson(), j);
});

test('a SymbolBlock over a loaded graph with a _foreach node: its captured input becomes a parameter', () => {
  const net = new gluon.SymbolBlock(sym.fromJSON(fixture('foreach')), [sym.var('data'), sym.var('init')]);
  net.initialize();
  const bias = net.collectParams().get('bias');
  bias.setData(nd.array([1, -1]));
  for (const hybrid of [false, true]) {
    if (hybrid) net.hybridize();
    const [o, st] = net.forward(nd.array([[1, 2], [3, 4], [5, 6]]), nd.array([10, 20]));
    assert.deepEqual(o.toArray(), [[11, 22], [15, 25], [21, 30]]);
    assert.deepEqual(st.toArray(), [22, 29]);
  }
});

// ---- gradients ---------------------------------------------------------------------------------------
test('imperative control flow records every step: gradients equal hand-worked ones', () => {
  const x = nd.array([[1, 2], [3, 4]]);
  const w = nd.array([1, 1]);
  x.attachGrad();
  w.attachGrad();
  let out;
  autograd.record(() => {
    [out] = nd.contrib.foreach((d, [s]) => { const y = d.mul(w).add(s); return [y, [y]]; }, x, [nd.zeros([2])]);
  });
  out.backward();
  // out_0 = x_0 w, out_1 = x_1 w + x_0 w: d sum / dx_0 = 2w, dx_1 = w; dw = 2 x_0 + x_1
  assert.deepEqual(x.grad.toArray(), [[2, 2], [1, 1]]);
  assert.deepEqual(w.grad.toArray(), [5, 8]);
  // while_loop: s <- s * a three times (i < 3): d s / d a = 3 a^2 s0
  const a = nd.array([2]);
  a.attachGrad();
  let res;
  autograd.record(() => {
    const step = (i, s) => [null, [i.add(1), s.mul(a)]];
    [, res] = nd.contrib.while_loop((i) => i.lt(3), step, [nd.array([0]), nd.array([1.5])], 10);
  });
  res[1].backward();
  assert.deepEqual([vals(res[1]), vals(a.grad)], [[12], [18]]);
});

test('a hybridized graph with a control-flow op trains (more in grad_control_flow.test.mjs)', () => {
  const net = new ScanBlock();
  net.initialize();
  net.hybridize();
  const x = nd.array([[1, 2, 3], [4, 5, 6]]);
  // out_0 = w x_0 + s, out_1 = w x_1 + out_0: d sum / dw = 2 x_0 + x_1, d sum / ds = 2
  const s = nd.zeros([3]);
  s.attachGrad();
  autograd.record(() => net.forward(x, s)[0].sum().backward());
  assert.deepEqual([vals(net.w.grad()), vals(s.grad)], [[6, 9, 12], [2, 2, 2]]);
  // inference still runs
  const [out] = net.forward(x.slice({ begin: [0, 0], end: [1, 3] }), nd.zeros([3]));
  assert.deepEqual(vals(out), [1, 2, 3]);
});

// ---- arguments ---------------------------------------------------------------------------------------
test('Python signatures: positional or options (snake or camel case), errors as MXNetError', () => {
  const c = (i) => i.lt(3);
  const f = (i) => [i, [i.add(1)]];
  for (const r of [
    nd.contrib.while_loop(c, f, nd.array([0]), 4),
    nd.contrib.while_loop(c, f, nd.array([0]), { max_iterations: 4 }),
    nd.contrib.whileLoop({ cond: c, func: f, loopVars: nd.array([0]), maxIterations: 4 }),
  ]) {
    assert.deepEqual(vals(r[0]), [0, 1, 2, 0]);
    assert.deepEqual(vals(r[1]), [3]); // a single loop variable comes back single
  }
  assert.throws(() => nd.contrib.while_loop(c, f, nd.array([0])), isErr(/max_iterations should be specified/));
  assert.throws(() => nd.contrib.foreach((x, s) => [x, s], 'x', []), isErr(/data should be an NDArray/));
  assert.throws(() => sym.contrib.foreach((x, s) => [sym.var('q').add(1), s], sym.var('d'), [sym.var('s')]),
    isErr(/data arrays have to be used/));
  assert.throws(() => sym.contrib.while_loop((i, s) => i.lt(3), (i, s) => [null, [i.add(1), i]], [sym.var('i'), sym.var('s')], 5),
    isErr(/2-th loop_var doesn't involve/));
  assert.throws(() => sym.contrib.cond(sym.var('p'), () => sym.var('a'), () => [sym.var('a'), sym.var('b')]),
    isErr(/Number of outputs differs/));
  const s = sym.contrib.cond({ pred: sym.var('p'), thenFunc: () => sym.var('a').mul(2), else_func: () => sym.var('a') });
  assert.deepEqual(vals(run(s, { p: nd.array([1]), a: nd.array([3]) })[0]), [6]);
});
