// MXNet's autograd semantics as its docs and tests (tests/python/unittest/test_autograd.py)
// state them, with hand-worked expected values.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { assertClose } from './oracle.mjs';

const { nd, autograd, gluon } = mx;
const vals = (a) => Array.from(a.toTypedArray());

test('y = x * x gives x.grad = 2x; the result keeps its value; console between calls works', () => {
  const x = nd.array([[1, 2], [3, 4]]);
  x.attachGrad();
  const y = autograd.record(() => nd.elemwise_mul(x, x));
  assert.deepEqual(vals(y), [1, 4, 9, 16]);
  y.backward();
  assert.deepEqual(vals(x.grad), [2, 4, 6, 8]);
  assert.ok(String(x.grad).includes('<NDArray 2x2 @cpu(0)>'));
});

test('head gradients scale the result (y.backward(outGrad), autograd.backward(heads, headGrads))', () => {
  const x = nd.array([1, 2, 3]);
  x.attachGrad();
  const y = autograd.record(() => nd.elemwise_mul(x, x));
  y.backward(nd.array([10, 1, 0.5]));
  assert.deepEqual(vals(x.grad), [20, 4, 3]);
  const z1 = autograd.record(() => nd._mul_scalar(x, { scalar: 3 }));
  const z2 = autograd.record(() => nd.elemwise_mul(x, x));
  autograd.backward([z1, z2], [nd.array([1, 1, 1]), nd.array([1, 0, 2])]);
  assert.deepEqual(vals(x.grad), [3 + 2, 3 + 0, 3 + 12]); // d(3x)/dx + headGrad * 2x
});

test("grad_req 'add' accumulates across backward calls; 'write' overwrites; 'null' leaves it", () => {
  const x = nd.array([1, 2]);
  x.attachGrad('add');
  for (let i = 0; i < 3; i++) autograd.record(() => nd._mul_scalar(x, { scalar: 2 })).backward();
  assert.deepEqual(vals(x.grad), [6, 6]);
  const w = nd.array([1, 2]);
  w.attachGrad({ grad_req: 'write' });
  for (let i = 0; i < 3; i++) autograd.record(() => nd._mul_scalar(w, { scalar: 2 })).backward();
  assert.deepEqual(vals(w.grad), [2, 2]);
  const n = nd.array([1, 2]);
  n.attachGrad('null');
  const y = autograd.record(() => nd.elemwise_add(nd._mul_scalar(n, { scalar: 2 }), w));
  y.backward();
  assert.deepEqual(vals(n.grad), [0, 0]);
  assert.deepEqual(vals(w.grad), [1, 1]);
});

test('retain_graph: a second backward works with it and raises without it', () => {
  const x = nd.array([1, 2, 3]);
  x.attachGrad('add');
  const y = autograd.record(() => nd.elemwise_mul(x, x));
  y.backward({ retainGraph: true });
  y.backward(); // the graph was kept
  assert.deepEqual(vals(x.grad), [4, 8, 12]);
  assert.throws(() => y.backward(), (e) => e instanceof mx.MXNetError && /retain_graph/.test(e.message));
  // positional form backward(outGrad, retainGraph)
  const z = autograd.record(() => nd.elemwise_mul(x, x));
  z.backward(null, true);
  z.backward(null, false);
  assert.deepEqual(vals(x.grad), [8, 16, 24]);
});

test('pause: computations inside are not recorded (no gradient flows through them)', () => {
  const x = nd.array([1, 2, 3]);
  x.attachGrad();
  const y = autograd.record(() => {
    const a = nd.elemwise_mul(x, x);
    const c = autograd.pause(() => nd._mul_scalar(x, { scalar: 5 })); // a constant
    return nd.elemwise_add(a, nd.elemwise_mul(c, x));
  });
  y.backward(); // d/dx (x^2 + c x) with c = 5x held constant: 2x + 5x
  assert.deepEqual(vals(x.grad), [7, 14, 21]);
  // not recorded at all outside record
  assert.throws(() => nd.elemwise_mul(x, x).backward(), /not in a computational graph/);
});

test('detach and BlockGrad / stop_gradient cut the graph', () => {
  const x = nd.array([1, 2, 3]);
  x.attachGrad();
  const y = autograd.record(() => nd.elemwise_add(nd.elemwise_mul(x.detach(), x), nd.BlockGrad(nd.elemwise_mul(x, x))));
  y.backward(); // d/dx (c * x + const) = c = x
  assert.deepEqual(vals(x.grad), [1, 2, 3]);
  const z = autograd.record(() => nd.elemwise_add(nd.stop_gradient(nd.elemwise_mul(x, x)), x));
  z.backward();
  assert.deepEqual(vals(x.grad), [1, 1, 1]);
});

test('in-place assignment to an array in a recorded graph raises while recording', () => {
  const x = nd.array([1, 2, 3]);
  x.attachGrad();
  assert.throws(() => autograd.record(() => nd.elemwise_add(x, x, { out: x })), /computational graph/);
  assert.deepEqual(vals(x), [1, 2, 3]); // nothing written
});

test('autograd.grad returns the gradients without touching .grad; markVariables', () => {
  const x = nd.array([1, 2, 3]);
  const gx = nd.zeros([3]);
  autograd.markVariables([x], [gx], 'write');
  const y = autograd.record(() => nd._power_scalar(x, { scalar: 3 }));
  const g = autograd.grad(y, x, { retainGraph: true });
  assert.deepEqual(vals(g), [3, 12, 27]);
  assert.deepEqual(vals(gx), [0, 0, 0]);
  const [g2] = autograd.grad([y], [x], [nd.array([1, 0, 1])], true);
  assert.deepEqual(vals(g2), [3, 0, 27]);
  const w = nd.array([1]);
  assert.throws(() => autograd.grad(y, [w]), /not marked/);
});

test('no variable in the graph: the error MXNet gives', () => {
  const x = nd.array([1, 2]);
  x.attachGrad('null');
  const y = autograd.record(() => nd.elemwise_mul(x, x));
  assert.throws(() => y.backward(), /no inputs in computation graph that require gradients/i);
});

test('a custom autograd.Function with a JS backward, composed with recorded ops (taped as _CustomFunction)', () => {
  class Sigmoid extends autograd.Function {
    forward(x) {
      const y = nd._rdiv_scalar(nd._plus_scalar(nd.exp(nd.negative(x)), { scalar: 1 }), { scalar: 1 });
      this.saveForBackward(y);
      return y;
    }
    backward(dy) {
      const [y] = this.savedTensors;
      return nd.elemwise_mul(dy, nd.elemwise_mul(y, nd._rminus_scalar(y, { scalar: 1 })));
    }
  }
  const x = nd.array([-1, 0, 2]);
  x.attachGrad();
  const f = new Sigmoid();
  assert.ok(mx.registeredOps.includes('_CustomFunction'), 'the tape op of a Function call');
  const y = autograd.record(() => nd._mul_scalar(f(x), { scalar: 2 }));
  y.backward();
  const s = (v) => 1 / (1 + Math.exp(-v));
  assertClose(vals(x.grad), [-1, 0, 2].map((v) => 2 * s(v) * (1 - s(v))), { rtol: 1e-6 });
  class Bad extends autograd.Function {
    forward(x) { return nd.elemwise_mul(x, x); }
    backward() { throw new Error('bad backward'); }
  }
  const z = autograd.record(() => new Bad()(x));
  assert.throws(() => z.backward(), /bad backward/);
});

test('train_mode / predict_mode decide Dropout: the gradient is the mask in training, 1 in prediction', () => {
  const x = nd.ones([1000]);
  x.attachGrad();
  const y = autograd.record(() => nd.Dropout(x, { p: 0.5 }));
  y.backward();
  const m = vals(y), g = vals(x.grad);
  assert.ok(m.some((v) => v === 0) && m.some((v) => v === 2));
  assert.deepEqual(g, m); // d(mask * x / (1-p)) / dx = mask / (1-p) = y for x = 1
  const yp = autograd.record(() => nd.Dropout(x, { p: 0.5 }), false); // record(fn, trainMode=false)
  yp.backward();
  assert.deepEqual([...new Set(vals(x.grad))], [1]);
  const yp2 = autograd.record(() => autograd.predictMode(() => nd.Dropout(x, { p: 0.5 })));
  yp2.backward();
  assert.deepEqual([...new Set(vals(x.grad))], [1]);
});

test('BatchNorm: batch statistics while training (gradient sums to zero over the batch), moving ones in predict mode', () => {
  const bn = new gluon.nn.BatchNorm({ inChannels: 1 });
  bn.initialize();
  const x = nd.array([[1], [2], [4]]);
  x.attachGrad();
  const y = autograd.record(() => bn(x));
  y.backward();
  // with batch statistics, y is invariant to shifting x, so the gradient of sum(y) is 0
  assertClose(vals(x.grad), [0, 0, 0], { atol: 1e-5 });
  const yp = autograd.record(() => bn(x), false);
  yp.backward({ trainMode: false }); // backward(train_mode=False), as MXNet pairs it with predict-mode records; moving stats: y = (x - mean) / sqrt(var + eps) * gamma + beta, slope 1/sqrt(var + 1e-5)
  const mv = vals(bn.running_var.data())[0];
  assertClose(vals(x.grad), [1, 1, 1].map(() => 1 / Math.sqrt(mv + 1e-5)), { rtol: 1e-5 });
});

test('x.set(y) (x[:] = y) of a recorded array is taped as a copy, as MXNet records _copyto', () => {
  const x = nd.array([1, 2, 3]);
  x.attachGrad();
  const y = autograd.record(() => {
    const u = nd.zeros([3]);
    u.set(nd.elemwise_mul(x, x));
    return nd._mul_scalar(u, { scalar: 2 });
  });
  y.backward(); // d/dx 2x^2
  assert.deepEqual(vals(x.grad), [4, 8, 12]);
});
