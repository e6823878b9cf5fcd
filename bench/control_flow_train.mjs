// A hybridized training step of a 50-step foreach RNN (h_t = tanh(x_t W + h_{t-1} U + b), hidden 32,
// batch 4; loss: the sum of the outputs and the last state), against the same block run imperatively.
// Prints per-step medians in ms. MXW_DIST=<dir> imports the API from another build's dist/ (for
// A/B runs against an earlier build; run the two alternately and compare their medians).
import { median } from './common.mjs';

const mx = await import(process.env.MXW_DIST ? `${process.env.MXW_DIST}/index.mjs` : 'mxnet-wasm');
const { nd, gluon, autograd } = mx;
const STEPS = Number(process.env.STEPS ?? 200), RUNS = Number(process.env.RUNS ?? 5), T = 50, H = 32, B = 4;

class Rnn extends gluon.HybridBlock {
  constructor() {
    super();
    this.w = this.params.get('w', { shape: [H, H] });
    this.u = this.params.get('u', { shape: [H, H] });
    this.b = this.params.get('b', { shape: [H] });
    this.initialize(new mx.init.Uniform(0.1));
  }
  hybridForward(F, x, s, p) {
    const [out, [last]] = F.contrib.foreach((row, [h]) => {
      const y = F.tanh(F.broadcast_add(F.dot(row, p.w).add(F.dot(h, p.u)), p.b));
      return [y, [y]];
    }, x, [s]);
    return [out, last];
  }
}

function time(hybrid) {
  mx.random.seed(0);
  const net = new Rnn();
  if (hybrid) net.hybridize();
  const x = mx.keep(nd.random.uniform(-1, 1, [T, B, H])), s = mx.keep(nd.zeros([B, H]));
  const step = () => mx.tidy(() => {
    autograd.record(() => {
      const [out, last] = net.forward(x, s);
      out.sum().add(last.sum()).backward();
    });
  });
  for (let i = 0; i < 5; i++) step();
  const per = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < STEPS / RUNS; i++) step();
    per.push((performance.now() - t0) / (STEPS / RUNS));
  }
  return median(per);
}

const hyb = time(true), imp = time(false);
console.log(JSON.stringify({ hybridized_ms: +hyb.toFixed(3), imperative_ms: +imp.toFixed(3), ratio: +(imp / hyb).toFixed(2) }));
