// Hybridized backward (MXNet's CachedOp backward): a hybridized block called under
// autograd.record runs forward and backward through one training graph that is traced and
// planned once; its gradients equal the imperative tape's (<= 1e-5 relative) for the seed MLP,
// the seed LeNet and a ResNet basic block with BatchNorm. The imperative gradients are the
// independent reference here: they come from the per-op tape, a different execution path.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { lenetOf, mlpOf } from './nn_helpers.mjs';
import { rng, assertClose } from './oracle.mjs';

const { nd, autograd, gluon } = mx;
const { nn } = gluon;

const mlp = () => mlpOf(mx);
const lenet = () => lenetOf(mx);
class BasicBlock extends gluon.HybridBlock { // gluon.model_zoo's BasicBlockV1 with a downsample
  constructor() {
    super();
    this.body = new nn.HybridSequential();
    this.body.add(new nn.Conv2D(8, 3, 2, 1, { useBias: false }), new nn.BatchNorm(), new nn.Activation('relu'),
      new nn.Conv2D(8, 3, 1, 1, { useBias: false }), new nn.BatchNorm());
    this.downsample = new nn.HybridSequential();
    this.downsample.add(new nn.Conv2D(8, 1, 2, { useBias: false }), new nn.BatchNorm());
  }
  hybridForward(F, x) {
    return F.Activation(F.elemwise_add(this.body(x), this.downsample(x)), { act_type: 'relu' });
  }
}

function twin(make, shape) {
  const a = make(), b = make();
  a.initialize(new mx.init.Xavier());
  const x = nd.array(Array.from(rng(5).uniform(shape.reduce((p, q) => p * q, 1)))).reshape(shape);
  a(x); // shapes known
  b.initialize();
  b(x);
  const pa = [...a.collectParams().values()], pb = [...b.collectParams().values()];
  pa.forEach((p, i) => pb[i].setData(p.data()));
  return [a, b, x];
}

function step(net, x, label, loss) {
  const l = autograd.record(() => loss(net(x), label));
  l.backward();
  return l;
}

for (const [name, make, shape] of [['MLP', mlp, [4, 20]], ['LeNet', lenet, [3, 1, 28, 28]], ['ResNet basic block', () => new BasicBlock(), [2, 4, 9, 9]]]) {
  test(`${name}: hybridized gradients equal imperative ones; traced and planned once over steps`, () => {
    const [imp, hyb, x] = twin(make, shape);
    hyb.hybridize();
    const loss = name === 'ResNet basic block' ? new gluon.loss.L2Loss() : new gluon.loss.SoftmaxCrossEntropyLoss();
    const out0 = imp(x);
    const label = name === 'ResNet basic block' ? nd.zeros_like(out0) : nd.array([1, 7, 3, 0].slice(0, shape[0]));
    for (let s = 0; s < 3; s++) {
      const li = step(imp, x, label, loss), lh = step(hyb, x, label, loss);
      assertClose(lh.toTypedArray(), li.toTypedArray(), { rtol: 1e-5, atol: 1e-6, msg: `${name} loss step ${s}` });
      const pi = [...imp.collectParams().values()], ph = [...hyb.collectParams().values()];
      pi.forEach((p, i) => {
        if (p.gradReq === 'null') return;
        assertClose(ph[i].grad().toTypedArray(), p.grad().toTypedArray(), { rtol: 1e-5, atol: 1e-6, msg: `${name} ${p.name} step ${s}` });
      });
    }
    // BatchNorm's moving statistics were updated once per training forward in both
    for (const [p, q] of [...imp.collectParams().values()].map((p, i) => [p, [...hyb.collectParams().values()][i]])) {
      if (p.gradReq === 'null') assertClose(q.data().toTypedArray(), p.data().toTypedArray(), { rtol: 1e-5, atol: 1e-6, msg: p.name });
    }
    const blocks = [hyb];
    const st = hyb._cachedOp.stats;
    assert.equal(hyb._numTraces, 1, 'traced once');
    assert.equal(st.trainingGraphs, 1, 'one training graph (_CachedOp) for all steps');
    assert.equal(st.trainingPlans, 1, 'planned once');
    assert.ok(blocks.length);
  });
}

test('a hybridized call on the tape (_CachedOp) composes with eager ops before and after it', () => {
  const net = mlp();
  net.initialize();
  net.hybridize();
  const x = nd.ones([2, 5]);
  x.attachGrad();
  const y = autograd.record(() => nd.sum(net(nd._mul_scalar(x, { scalar: 2 }))));
  y.backward();
  // reference: the same through the imperative tape
  const net2 = mlp();
  net2.initialize();
  net2(x);
  [...net2.collectParams().values()].forEach((p, i) => p.setData([...net.collectParams().values()][i].data()));
  const x2 = nd.ones([2, 5]);
  x2.attachGrad();
  autograd.record(() => nd.sum(net2(nd._mul_scalar(x2, { scalar: 2 })))).backward();
  assertClose(x.grad.toTypedArray(), x2.grad.toTypedArray(), { rtol: 1e-5, atol: 1e-6 });
  assert.throws(() => nd._CachedOp(x), /hybridized block|autograd|_CachedOp/);
});

test('a hybridized block with more than 256 parameters trains (ResNet-50 has 320, BERT-large 390): hand-worked gradients', () => {
  // y = Σ_i w_i · x with 300 parameters w_i of shape (3,): dL/dw_i = x for L = sum(y), and dL/dx = Σ_i w_i
  class Many extends gluon.HybridBlock {
    constructor(n) {
      super();
      this.n = n;
      for (let i = 0; i < n; i++) this[`w${i}`] = this.params.get(`w${i}`, { shape: [3], init: new mx.init.Constant(i + 1) });
    }
    hybridForward(F, x, params) {
      const ws = Array.from({ length: this.n }, (_, i) => params[`w${i}`]);
      let acc = F.broadcast_mul(x, ws[0]);
      for (let i = 1; i < ws.length; i++) acc = F.elemwise_add(acc, F.broadcast_mul(x, ws[i]));
      return acc;
    }
  }
  const net = new Many(300);
  net.initialize();
  net.hybridize();
  const x = nd.array([[0.5, -1, 2], [1.5, 0.25, -3]]);
  x.attachGrad();
  autograd.record(() => { net.forward(x).sum().backward(); });
  const ps = [...net.collectParams().values()];
  assert.equal(ps.length, 300);
  const colsum = [0.5 + 1.5, -1 + 0.25, 2 - 3];
  for (const p of [ps[0], ps[150], ps[299]]) assert.deepEqual(Array.from(p.grad().toTypedArray()), colsum);
  const wsum = (300 * 301) / 2; // Σ (i + 1)
  assert.deepEqual(Array.from(x.grad.toTypedArray()), new Array(6).fill(wsum));
});
