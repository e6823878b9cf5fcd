// A block both control-flow test files use: a while_loop that multiplies its state by a parameter g
// and takes tanh, while the step counter is below n (at most 6 steps); it outputs every step's state
// and its sum (padded to 6 rows when hybridized) and the last state. g has shape (2,); give its
// initial value with `g` (an array) or its Parameter options with `gOptions`.
import { gluon, nd } from 'mxnet-wasm';

export class DecayLoop extends gluon.HybridBlock {
  constructor({ g = null, gOptions = {} } = {}) {
    super();
    this.g = this.params.get('g', { shape: [2], ...gOptions });
    if (g) {
      this.initialize();
      this.g.setData(nd.array(g));
    }
  }

  hybridForward(F, x, n, params) {
    const [outs, [last]] = F.contrib.while_loop((v, k) => k.lt(n).sum(), (v, k) => {
      const y = F.broadcast_mul(v, params.g).tanh();
      return [[y, y.sum()], [y, k.add(1)]];
    }, [x, F.zeros_like(n)], 6);
    return [outs[0], outs[1], last];
  }
}
