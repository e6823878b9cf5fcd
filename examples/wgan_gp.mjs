// WGAN-GP (Gulrajani et al., 2017) on a toy 2-D distribution: a generator learns to map noise onto
// a Gaussian centred at (2, -1), against a critic trained with the gradient penalty
//   lambda * (||d critic(x_hat) / d x_hat|| - 1)^2,  x_hat between real and generated samples,
// which needs the gradient of a gradient: autograd.grad(..., {create_graph: true}).
// Run: node examples/wgan_gp.mjs [generator steps]
import * as mx from 'mxnet-wasm';

const { nd, autograd, gluon } = mx;
const { nn } = gluon;

mx.random.seed(7);
const steps = Number(process.argv[2] ?? 400);
const batch = 64, nCritic = 5, lambda = 10, target = [2, -1], spread = 0.5;

const mlp = (out) => {
  const net = new nn.HybridSequential();
  net.add(new nn.Dense(32, { in_units: 2 }), new nn.LeakyReLU(0.2), new nn.Dense(32), new nn.LeakyReLU(0.2), new nn.Dense(out));
  net.initialize(new mx.init.Xavier());
  return net;
};
const generator = mlp(2), critic = mlp(1);
generator.hybridize();
critic.hybridize(); // create_graph recomputes its graph for the penalty's second-order terms
// the critic learns faster than the generator (two time-scale updates), so that it keeps up
const gTrainer = new gluon.Trainer(generator.collectParams(), 'adam', { learning_rate: 2e-4, beta1: 0.5, beta2: 0.9 });
const cTrainer = new gluon.Trainer(critic.collectParams(), 'adam', { learning_rate: 2e-3, beta1: 0.5, beta2: 0.9 });

const real = () => nd.broadcast_add(nd.random.normal(0, spread, [batch, 2]), nd.array([target]));
const noise = () => nd.random.normal(0, 1, [batch, 2]);

// the mean of generated samples and their distance from the target's centre
function report(step, wDistance) {
  mx.tidy(() => {
    const m = generator(nd.random.normal(0, 1, [1000, 2])).mean({ axis: 0 }).toArray();
    const dist = Math.hypot(m[0] - target[0], m[1] - target[1]);
    const w = wDistance === null ? '' : `  critic W-distance ${wDistance.toFixed(3)}`;
    console.log(`step ${String(step).padStart(4)}  generated mean (${m[0].toFixed(3)}, ${m[1].toFixed(3)})  ` +
      `distance to target ${dist.toFixed(3)}${w}`);
  });
}

report(0, null);
for (let step = 1; step <= steps; step++) {
  let wDistance = 0;
  for (let k = 0; k < nCritic; k++) {
    mx.tidy(() => {
      const x = real(), fake = generator(noise()).detach();
      const eps = nd.random.uniform(0, 1, [batch, 1]);
      const xHat = nd.broadcast_add(nd.broadcast_mul(eps, x), nd.broadcast_mul(eps.rsub(1), fake));
      xHat.attachGrad();
      let loss, w;
      autograd.record(() => {
        const [g] = autograd.grad(critic(xHat), [xHat], { create_graph: true });
        const penalty = nd.square(nd.sqrt(nd.sum(nd.square(g), { axis: 1 })).sub(1)).mean();
        w = nd.subtract(critic(x).mean(), critic(fake).mean());
        loss = nd.add(nd.negative(w), penalty.mul(lambda));
      });
      loss.backward();
      cTrainer.step(1);
      wDistance = w.asscalar();
    });
  }
  mx.tidy(() => {
    let loss;
    autograd.record(() => { loss = nd.negative(critic(generator(noise())).mean()); });
    loss.backward();
    gTrainer.step(1);
  });
  if (step % 50 === 0 || step === steps) report(step, wDistance);
}
