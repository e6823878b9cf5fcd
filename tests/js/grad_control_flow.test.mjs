// Gradients through the control-flow operators in graphs: a hybridized block calling
// F.contrib.foreach / while_loop / cond records one _foreach / _while_loop / _cond node, whose
// FGradient is a _backward_<op> node differentiating the subgraph (csrc/graph/subgraph.c). Checked
// against the imperative block (nd.contrib.* are JS loops of ops on the tape, an independent path),
// against central finite differences in float64 (checkGrad), and against hand-worked values.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as mx from 'mxnet-wasm';
import { registry } from '../../dist/core.mjs';
import { rng, assertClose } from './oracle.mjs';
import { checkGrad } from './grad_check.mjs';
import { DecayLoop } from './control_flow_blocks.mjs';

const { nd, sym, gluon, autograd } = mx;
const isErr = (re) => (e) => e instanceof mx.MXNetError && re.test(e.message);
const vals = (a) => Array.from(a.toTypedArray(), Number);
const r = rng(11);
const uniform = (n, lo = -1, hi = 1) => Array.from(r.uniform(n, lo, hi), Number);
const arr = (shape, lo, hi) => nd.array(uniform(shape.reduce((a, b) => a * b, 1), lo, hi)).reshape(shape);

test('the registry: the three ops have a gradient now, their backward ops none (first-order, as MXNet)', () => {
  for (const name of ['_foreach', '_while_loop', '_cond']) {
    const op = registry.ops.find((o) => o.name === name);
    assert.equal(op.gradient, true, name);
    const bw = registry.ops.find((o) => o.name === `_backward${name}`);
    assert.ok(bw && !bw.gradient, `_backward${name}`);
  }
});

// Gradients of every parameter and of the inputs that attached one, for a block built by make(),
// hybridized or not; loss(outputs) gives the scalar to differentiate.
function blockGrads(make, inputs, loss, hybrid) {
  const net = make();
  if (hybrid) net.hybridize();
  const xs = inputs.map((x) => x.copy());
  for (const x of xs) if (x.dtype.startsWith('float')) x.attachGrad();
  let outs;
  autograd.record(() => {
    outs = net.forward(...xs);
    loss(outs).backward();
  });
  const params = [...net.collectParams().values()];
  return {
    outs: outs.flat(2).map(vals),
    grads: [...xs.filter((x) => x.dtype.startsWith('float')).map((x) => vals(x.grad)), ...params.map((p) => vals(p.grad()))],
  };
}
// Hybridized equals imperative within 1e-5 relative.
function sameAsImperative(make, inputs, loss) {
  const a = blockGrads(make, inputs, loss, false);
  const b = blockGrads(make, inputs, loss, true);
  assert.equal(b.grads.length, a.grads.length);
  a.outs.forEach((o, k) => assertClose(b.outs[k], o, { rtol: 1e-5, atol: 1e-6, msg: `output ${k}` }));
  a.grads.forEach((g, k) => assertClose(b.grads[k], g, { rtol: 1e-5, atol: 1e-6, msg: `gradient ${k}` }));
  return b;
}

// ---- foreach -----------------------------------------------------------------------------------------
// An RNN-like recurrence: h_t = tanh(x_t + h_{t-1} W + b); outputs 2 h_t per step and the last h.
class Recur extends gluon.HybridBlock {
  constructor(W, B) {
    super();
    this.w = this.params.get('w', { shape: [3, 3] });
    this.b = this.params.get('b', { shape: [3] });
    this.initialize();
    if (W) this.w.setData(nd.array(W));
    if (B) this.b.setData(nd.array(B));
  }
  hybridForward(F, x, s, params) {
    const [out, [last]] = F.contrib.foreach((row, [h]) => {
      const y = F.tanh(F.broadcast_add(F.broadcast_add(row, F.dot(h, params.w)), params.b));
      return [y.mul(2), [y]];
    }, x, [s]);
    return [out, last];
  }
}
const W3 = [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [0.7, -0.8, 0.9]];
const B3 = [0.05, -0.1, 0.2];

test('foreach: an RNN-like recurrence with parameters, hybridized gradients equal the imperative ones', () => {
  const heads = arr([5, 3]);
  const loss = ([out, last]) => out.mul(heads).sum().add(last.mul(last).sum());
  sameAsImperative(() => new Recur(W3, B3), [arr([5, 3]), arr([3])], loss);
  // another sequence length (a new gradient plan) and a second call (the cached one)
  const heads2 = arr([2, 3]);
  const loss2 = ([out, last]) => out.mul(heads2).sum().add(last.sum());
  sameAsImperative(() => new Recur(W3, B3), [arr([2, 3]), arr([3])], loss2);
  const net = new Recur(W3, B3);
  net.hybridize();
  const x = arr([4, 3]);
  const g = [];
  for (let k = 0; k < 2; k++) {
    autograd.record(() => net.forward(x, nd.zeros([3]))[0].sum().backward());
    g.push(vals(net.w.grad()));
  }
  assert.deepEqual(g[1], g[0]);
});

test('foreach: finite differences in float64 (the weights as inputs of the hybridized graph)', () => {
  class RecurIn extends gluon.HybridBlock {
    hybridForward(F, x, s, w, b) {
      const [out, [last]] = F.contrib.foreach((row, [h]) => {
        const y = F.tanh(F.broadcast_add(F.broadcast_add(row, F.dot(h, w)), b));
        return [y.mul(2), [y]];
      }, x, [s]);
      return [out, last];
    }
  }
  const net = new RecurIn();
  net.hybridize();
  checkGrad((x, s, w, b) => net.forward(x, s, w, b), [{ shape: [4, 3] }, { shape: [3] }, { shape: [3, 3] }, { shape: [3] }]);
  // two data inputs, two states (one only carried), a remaining input
  class Two extends gluon.HybridBlock {
    hybridForward(F, x, y, s, t, c) {
      const [outs, st] = F.contrib.foreach(([a, d], [u, v]) => {
        const z = a.mul(u).add(d.mul(c)).sin();
        return [[z, d.mul(v)], [z.add(v), v.mul(c)]];
      }, [x, y], [s, t]);
      return [...outs, ...st];
    }
  }
  const two = new Two();
  two.hybridize();
  checkGrad((...a) => two.forward(...a), [{ shape: [3, 2] }, { shape: [3, 2] }, { shape: [2] }, { shape: [2] }, { shape: [2] }]);
});

test('foreach: hand-worked gradients, and a loaded graph (SymbolBlock over the JSON fixture) trains its captured input', () => {
  // out_t = x_t w + s_{t-1}, s_t = out_t: d sum(out) / dx_t = (T - t) w, dw = sum_t (T - t) x_t
  class Scan extends gluon.HybridBlock {
    constructor() {
      super();
      this.w = this.params.get('w', { shape: [2] });
      this.initialize();
      this.w.setData(nd.array([1, -2]));
    }
    hybridForward(F, x, s, params) {
      return F.contrib.foreach((d, [st]) => { const y = F.broadcast_add(F.broadcast_mul(d, params.w), st); return [y, [y]]; }, x, [s])[0];
    }
  }
  const net = new Scan();
  net.hybridize();
  const x = nd.array([[1, 2], [3, 4], [5, 6]]);
  const s = nd.array([0, 0]);
  x.attachGrad();
  s.attachGrad();
  autograd.record(() => net.forward(x, s).sum().backward());
  assert.deepEqual(x.grad.toArray(), [[3, -6], [2, -4], [1, -2]]);
  assert.deepEqual(vals(s.grad), [3, 3]);
  assert.deepEqual(vals(net.w.grad()), [3 + 6 + 5, 6 + 8 + 6]);
  // fixture: out_t = x_t + s; s <- out_t + bias (3 steps): d sum(out) / d bias = 0 + 1 + 2 = 3 per element,
  // d final state / d bias = 3; d sum(out) / d init = 3
  const fixture = readFileSync(new URL('./fixtures/control_flow/foreach.json', import.meta.url), 'utf8');
  const blk = new gluon.SymbolBlock(sym.fromJSON(fixture), [sym.var('data'), sym.var('init')]);
  blk.initialize();
  blk.collectParams().get('bias').setData(nd.array([1, -1]));
  blk.hybridize();
  const init = nd.array([10, 20]);
  init.attachGrad();
  autograd.record(() => {
    const [o, st] = blk.forward(nd.array([[1, 2], [3, 4], [5, 6]]), init);
    o.sum().add(st.sum()).backward();
  });
  assert.deepEqual(vals(blk.collectParams().get('bias').grad()), [6, 6]);
  assert.deepEqual(vals(init.grad), [4, 4]);
});

// ---- while_loop --------------------------------------------------------------------------------------
const newDecay = () => new DecayLoop({ g: [0.9, -1.3] });

test('while_loop: hybridized gradients equal the imperative ones (steps below and at max_iterations)', () => {
  for (const steps of [4, 6, 20]) {
    const taken = Math.min(steps, 6);
    const h = arr([taken, 2]);
    // the hybridized step outputs have max_iterations rows (zero padding), the imperative ones `taken`
    const loss = ([ys, sums, last]) => ys.slice({ begin: [0, 0], end: [taken, 2] }).mul(h).sum()
      .add(sums.slice({ begin: [0], end: [taken] }).mul(2).sum()).add(last.sum());
    sameAsImperative(newDecay, [nd.array([0.7, 0.2]), nd.array([steps])], loss);
  }
});

test('while_loop: finite differences in float64, zero steps, an integer counter, padding rows ignored', () => {
  class Pow extends gluon.HybridBlock {
    hybridForward(F, x, a, n) {
      const [outs, vars] = F.contrib.while_loop((i) => i.lt(n).sum(), (i, v) => [[v.mul(a).sum(), v.sin()], [i.add(1), v.mul(a).sin()]],
        [F.zeros_like(n), x], 5);
      return [...outs, vars[1]];
    }
  }
  const net = new Pow();
  net.hybridize();
  for (const steps of [3, 5]) {
    const n = nd.array([steps], { dtype: 'float64' });
    checkGrad((x, a) => net.forward(x, a, n), [{ shape: [2] }, { shape: [2] }]);
  }
  // no step: the final loop variables are the initial ones (gradient 1), the parameter gets none
  const d = newDecay();
  d.hybridize();
  const x = nd.array([0.7, 0.2]);
  x.attachGrad();
  autograd.record(() => {
    const [ys, sums, last] = d.forward(x, nd.array([0]));
    ys.sum().add(sums.sum()).add(last.mul(3).sum()).backward();
  });
  assert.deepEqual([vals(x.grad), vals(d.g.grad())], [[3, 3], [0, 0]]);
  // rows past the last step do not contribute: s <- s * a while i < 3 (int64 counter), out_t = s_t
  class Geo extends gluon.HybridBlock {
    constructor() { super(); this.a = this.params.get('a', { shape: [1] }); this.initialize(); this.a.setData(nd.array([2])); }
    hybridForward(F, i, s, params) {
      const [[o], [, last]] = F.contrib.while_loop((k) => k.lt(3), (k, v) => [[v], [k.add(1), F.broadcast_mul(v, params.a)]], [i, s], 5);
      return [o, last];
    }
  }
  const geo = new Geo();
  geo.hybridize();
  const s0 = nd.array([1.5]);
  s0.attachGrad();
  autograd.record(() => {
    const [o, last] = geo.forward(nd.array([0], { dtype: 'int64' }), s0);
    assert.deepEqual(vals(o), [1.5, 3, 6, 0, 0]);
    // weights 1 on every row (padding rows included) and on the last value (s0 a^3)
    o.sum().add(last.sum()).backward();
  });
  // d/da (s0 + s0 a + s0 a^2 + s0 a^3) = s0 (1 + 2a + 3a^2) = 1.5 * 17; d/ds0 = 1 + a + a^2 + a^3 = 15
  assert.deepEqual([vals(geo.a.grad()), vals(s0.grad)], [[25.5], [15]]);
});

// ---- cond --------------------------------------------------------------------------------------------
class Branch extends gluon.HybridBlock {
  constructor() {
    super();
    this.g = this.params.get('g', { shape: [2] });
    this.initialize();
    this.g.setData(nd.array([0.5, 2]));
  }
  hybridForward(F, p, a, b, params) {
    return F.contrib.cond(p.sum().gt(0), () => [F.broadcast_mul(a.mul(b), params.g), [b.sub(a).exp()]],
      () => [F.broadcast_mul(b.sub(a), params.g), [a.mul(b).mul(-1)]]);
  }
}

test('cond: the branch that ran gets the gradients; hybridized equals imperative and hand-worked values', () => {
  const h = nd.array([3, 4]);
  const loss = ([x, [y]]) => x.sum().add(y.mul(h).sum());
  for (const p of [[1, 0.5], [-1, 0.5]]) sameAsImperative(() => new Branch(), [nd.array(p), nd.array([2, -3]), nd.array([5, 7])], loss);
  // else branch by hand: x = (b - a) g, y = -a b: dL/da = -g - 3 b... per element: -g - h b
  const { grads } = blockGrads(() => new Branch(), [nd.array([-1, 0.5]), nd.array([2, -3]), nd.array([5, 7])], loss, true);
  const [gp, ga, gb, gg] = grads;
  assert.deepEqual(gp, [0, 0]); // the predicate gets none
  assert.deepEqual(ga, [-0.5 - 3 * 5, -2 - 4 * 7]);
  assert.deepEqual(gb, [0.5 - 3 * 2, 2 + 4 * 3]);
  assert.deepEqual(gg, [5 - 2, 7 + 3]);
});

test('cond: finite differences in float64 on both branches', () => {
  class C extends gluon.HybridBlock {
    hybridForward(F, p, a, b) {
      return F.contrib.cond(p.sum().gt(0), () => [a.mul(b).sin(), a.exp()], () => [b.sub(a).square(), b.tanh()]);
    }
  }
  const net = new C();
  net.hybridize();
  for (const p of [1, -1]) {
    const pred = nd.array([p], { dtype: 'float64' });
    checkGrad((a, b) => net.forward(pred, a, b), [{ shape: [3] }, { shape: [3] }]);
  }
});

// ---- nesting and errors ------------------------------------------------------------------------------
test('cond nested in a foreach body, with a parameter: hybridized equals imperative', () => {
  class Clip extends gluon.HybridBlock {
    constructor() { super(); this.k = this.params.get('k', { shape: [2] }); this.initialize(); this.k.setData(nd.array([1.5, -0.5])); }
    hybridForward(F, x, s, params) {
      const [out, [tot]] = F.contrib.foreach((row, [acc]) => {
        const y = F.contrib.cond(row.sum().gt(0), () => F.broadcast_mul(row, params.k).mul(acc), () => row.mul(-1).add(acc));
        return [y, [acc.add(y).tanh()]];
      }, x, [s]);
      return [out, tot];
    }
  }
  const X = nd.array([[1, 2], [-3, 1], [0.5, -0.25], [-1, -1], [0.3, 0.4]]);
  const h = arr([5, 2]);
  sameAsImperative(() => new Clip(), [X, nd.array([0.2, -0.4])], ([out, tot]) => out.mul(h).sum().add(tot.sum()));
});

// ---- the backward reads the values the forward kept (it does not run the forward again) ----------------
// A Dropout(p = 0.5) in training keeps an element with probability 1/2 and scales it by 1 / (1 - p) = 2.
// Its mask is read back from the forward's own output (where the output is 0 the element was dropped:
// the inputs are nonzero), so the hand-worked gradient uses the numbers the forward drew. A backward
// that ran the forward again would draw other masks and miss these values.
const P = 0.5, SCALE = 1 / (1 - P);
class DropRecur extends gluon.HybridBlock {
  constructor() { super(); this.w = this.params.get('w', { shape: [4] }); this.initialize(); this.w.setData(nd.array([0.5, -1.5, 2, 0.75])); }
  hybridForward(F, x, s, params) {
    // d_t = Dropout(x_t * w); s_t = s_{t-1} + d_t; outputs [d_t], the last s
    const [d, [last]] = F.contrib.foreach((row, [st]) => {
      const y = F.Dropout(F.broadcast_mul(row, params.w), { p: P });
      return [y, [st.add(y)]];
    }, x, [s]);
    return [d, last];
  }
}
// L = sum(d * h) + sum(last): dL/dd_t = h_t + 1, so dL/dw_i = sum_t (h_ti + 1) x_ti SCALE m_ti,
// dL/dx_ti = (h_ti + 1) w_i SCALE m_ti, dL/ds = 1.
function dropRecurExpected(X, W, H, D) {
  const T = X.length, n = W.length, gw = new Array(n).fill(0), gx = X.map((r) => r.map(() => 0));
  for (let t = 0; t < T; t++)
    for (let i = 0; i < n; i++) {
      const m = D[t][i] !== 0 ? 1 : 0;
      gw[i] += (H[t][i] + 1) * X[t][i] * SCALE * m;
      gx[t][i] = (H[t][i] + 1) * W[i] * SCALE * m;
    }
  return { gw, gx: gx.flat() };
}

test('foreach: a body with Dropout(p=0.5) in training trains hybridized, with the gradients of the masks its forward drew', () => {
  mx.random.seed(7);
  const X = [[1, 2, -1, 0.5], [-2, 1.5, 3, -1], [0.25, -0.5, 1, 2], [1, 1, -1, -1], [2, -3, 0.5, 1.5], [-1, 0.75, 2, 1]];
  const H = X.map((r) => r.map(() => Math.round(uniform(1)[0] * 100) / 100));
  const net = new DropRecur();
  net.hybridize();
  const x = nd.array(X), s = nd.zeros([4]);
  x.attachGrad();
  s.attachGrad();
  let d, loss;
  autograd.record(() => {
    const [d1, last] = net.forward(x, s);
    const [d2] = net.forward(x, s); // a second call before the backward keeps its own values
    d = d1;
    loss = d1.mul(nd.array(H)).sum().add(last.sum()).add(d2.mul(0).sum());
  });
  loss.backward({ retainGraph: true });
  const D = d.toArray(), W = vals(net.w.data());
  const dropped = D.flat().filter((v) => v === 0).length;
  assert.ok(dropped > 0 && dropped < 24, `a mask that drops some elements (${dropped} of 24)`);
  D.flat().forEach((v, k) => { if (v !== 0) assertClose([v], [X.flat()[k] * W[k % 4] * SCALE], { rtol: 1e-6 }); });
  const want = dropRecurExpected(X, W, H, D);
  assertClose(vals(net.w.grad()), want.gw, { rtol: 1e-5, atol: 1e-6, msg: 'w' });
  assertClose(vals(x.grad), want.gx, { rtol: 1e-5, atol: 1e-6, msg: 'x' });
  assert.deepEqual(vals(s.grad), [1, 1, 1, 1]);
  // retain_graph: the second backward reads the same kept values; a third after one without it fails
  loss.backward();
  assertClose(vals(net.w.grad()), want.gw, { rtol: 1e-5, atol: 1e-6, msg: 'w, second backward' });
  assert.throws(() => loss.backward(), isErr(/retain_graph|freed/));
});

test('foreach with Dropout: the state path and the last state, hand-worked from the masks', () => {
  mx.random.seed(3);
  const X = [[1, 2, -1, 0.5], [-2, 1.5, 3, -1], [0.25, -0.5, 1, 2]];
  const H = [[0.5, -1, 2, 0.25], [1, 0, -0.5, 3], [-2, 1, 1, -1]];
  const net = new DropRecur();
  net.hybridize();
  const x = nd.array(X), s = nd.array([1, 2, 3, 4]);
  s.attachGrad();
  let d, last;
  autograd.record(() => {
    [d, last] = net.forward(x, s);
    d.mul(nd.array(H)).sum().add(last.sum()).backward();
  });
  const D = d.toArray(), W = vals(net.w.data());
  // last = s + sum_t d_t
  assertClose(vals(last), [0, 1, 2, 3].map((i) => 1 + i + D.reduce((a, r) => a + r[i], 0)), { rtol: 1e-6 });
  assertClose(vals(net.w.grad()), dropRecurExpected(X, W, H, D).gw, { rtol: 1e-5, atol: 1e-6 });
  assert.deepEqual(vals(s.grad), [1, 1, 1, 1]);
});

test('while_loop and cond with Dropout in training: gradients of the masks the forward drew', () => {
  mx.random.seed(5);
  const xv = [1.5, -2, 0.5, 3, -1, 2];
  class DropWhile extends gluon.HybridBlock {
    constructor() { super(); this.w = this.params.get('w', { shape: [6] }); this.initialize(); this.w.setData(nd.array([1, -0.5, 2, 0.25, -1, 0.5])); }
    hybridForward(F, x, i, params) {
      // 4 steps of out_t = Dropout(x * w), each drawing its own mask (max_iterations 6: 2 padding rows)
      const [outs] = F.contrib.while_loop((k) => k.lt(4), (k) => [F.Dropout(x.mul(params.w), { p: P }), [k.add(1)]], [i], { max_iterations: 6 });
      return outs;
    }
  }
  const H = Array.from({ length: 6 }, (_, t) => xv.map((_, i) => ((t * 7 + i * 3) % 5) - 2));
  const net = new DropWhile();
  net.hybridize();
  let out;
  autograd.record(() => {
    out = net.forward(nd.array(xv), nd.array([0]));
    out.mul(nd.array(H)).sum().backward();
  });
  const O = out.toArray(), W = vals(net.w.data());
  assert.deepEqual(O.slice(4).flat(), new Array(12).fill(0), 'padding rows');
  const gw = xv.map((xi, i) => O.slice(0, 4).reduce((a, r, t) => a + (r[i] !== 0 ? H[t][i] * xi * SCALE : 0), 0));
  const dropped = O.slice(0, 4).flat().filter((v) => v === 0).length;
  assert.ok(dropped > 0 && dropped < 24, `masks that drop some elements (${dropped} of 24)`);
  assertClose(vals(net.w.grad()), gw, { rtol: 1e-5, atol: 1e-6, msg: 'while_loop' });
  void W;

  class DropCond extends gluon.HybridBlock {
    constructor() { super(); this.w = this.params.get('w', { shape: [6] }); this.initialize(); this.w.setData(nd.array([1, -0.5, 2, 0.25, -1, 0.5])); }
    hybridForward(F, x, p, params) {
      return F.contrib.cond(p.sum().gt(0), () => F.Dropout(x.mul(params.w), { p: P }), () => x.mul(params.w).mul(-1));
    }
  }
  for (const [pv, taken] of [[1, 'then'], [-1, 'else']]) {
    const c = new DropCond();
    c.hybridize();
    const h = [0.5, 1, -2, 1.5, 3, -1];
    let y;
    autograd.record(() => {
      y = c.forward(nd.array(xv), nd.array([pv]));
      y.mul(nd.array(h)).sum().backward();
    });
    const Y = vals(y);
    const want = taken === 'then' ? xv.map((xi, i) => (Y[i] !== 0 ? h[i] * xi * SCALE : 0)) : xv.map((xi, i) => -h[i] * xi);
    assertClose(vals(c.w.grad()), want, { rtol: 1e-5, atol: 1e-6, msg: `cond, ${taken}` });
  }
});

test('a body with BatchNorm trains hybridized: running statistics updated once per step, as imperatively', () => {
  class BN extends gluon.HybridBlock {
    constructor() {
      super();
      this.nameScope(() => { this.bn = new gluon.nn.BatchNorm({ inChannels: 2 }); });
      this.registerChild(this.bn);
      this.initialize();
    }
    hybridForward(F, x, s) {
      return F.contrib.foreach((row, [st]) => { const y = this.bn.forward(row).add(st); return [y, [y]]; }, x, [s])[0];
    }
  }
  const X = arr([3, 4, 2]);
  const h = arr([3, 4, 2]);
  const run = (hybrid) => {
    const net = new BN();
    if (hybrid) net.hybridize();
    const x = X.copy();
    x.attachGrad();
    autograd.record(() => net.forward(x, nd.zeros([4, 2])).mul(h).sum().backward());
    return { gx: vals(x.grad), gamma: vals(net.bn.gamma.grad()), mean: vals(net.bn.running_mean.data()), v: vals(net.bn.running_var.data()) };
  };
  const a = run(false), b = run(true);
  // three steps: mean_3 = 0.9^3 * 0 + sum_t 0.1 * 0.9^(2-t) * batchmean_t, not six updates
  const Xa = X.toArray();
  const bm = (t) => [0, 1].map((c) => Xa[t].reduce((acc, r) => acc + r[c], 0) / 4);
  const want = [0, 1].map((c) => [0, 1, 2].reduce((acc, t) => acc * 0.9 + 0.1 * bm(t)[c], 0));
  assertClose(a.mean, want, { rtol: 1e-5, atol: 1e-6, msg: 'imperative running mean' });
  assertClose(b.mean, want, { rtol: 1e-5, atol: 1e-6, msg: 'hybridized running mean' });
  assertClose(b.v, a.v, { rtol: 1e-5, atol: 1e-6, msg: 'running var' });
  assertClose(b.gx, a.gx, { rtol: 1e-4, atol: 1e-5, msg: 'x gradient' });
  assertClose(b.gamma, a.gamma, { rtol: 1e-4, atol: 1e-5, msg: 'gamma gradient' });
});

test('200 hybridized training steps of a foreach with Dropout: the kept values are reused (memory flat)', () => {
  mx.random.seed(1);
  const net = new DropRecur();
  net.hybridize();
  const x = mx.keep(arr([16, 4])), s = mx.keep(nd.zeros([4]));
  const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.001 });
  const step = () => mx.tidy(() => {
    autograd.record(() => {
      const [d, last] = net.forward(x, s);
      d.sum().add(last.sum()).backward();
    });
    trainer.step(1);
  });
  for (let i = 0; i < 10; i++) step();
  const m0 = mx.memory();
  for (let i = 0; i < 190; i++) step();
  const m1 = mx.memory();
  assert.equal(m1.numArrays, m0.numArrays, 'arrays');
  assert.equal(m1.bytes, m0.bytes, 'bytes');
  // inference (not recording) keeps no tape: its executor's arena (allocated by the first call) is far
  // below one tape of 16 steps (each step keeps 4 values of 4 float32 in 16-element slots: 4 KiB),
  // and stays flat
  mx.tidy(() => { net.forward(x, s); });
  const m2 = mx.memory();
  assert.ok(m2.bytes - m1.bytes < 1024, `the inference arena: ${m2.bytes - m1.bytes} bytes`);
  for (let i = 0; i < 20; i++) mx.tidy(() => { net.forward(x, s); });
  assert.equal(mx.memory().bytes, m2.bytes, 'bytes after inference calls');
});

test('foreach nested in a foreach body (test_foreach_nested\'s shape), with a parameter: hybridized equals imperative', () => {
  class Nest extends gluon.HybridBlock {
    constructor() { super(); this.w = this.params.get('w', { shape: [2] }); this.initialize(); this.w.setData(nd.array([0.8, -0.6])); }
    hybridForward(F, x, s, params) {
      const [out, [last]] = F.contrib.foreach((block, [st]) => {
        const [inner, [acc]] = F.contrib.foreach((row, [a]) => {
          const y = F.broadcast_mul(row, params.w).add(a).sin();
          return [y, [y.add(a)]];
        }, block, [st]);
        return [inner.sum({ axis: 0 }), [acc.tanh()]];
      }, x, [s]);
      return [out, last];
    }
  }
  const h = arr([3, 2]);
  sameAsImperative(() => new Nest(), [arr([3, 4, 2]), arr([2])], ([out, last]) => out.mul(h).sum().add(last.sum()));
});
