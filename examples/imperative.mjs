// Imperative NDArray programming: every nd.* call runs one C kernel eagerly, so you can print
// between calls. Run: node examples/imperative.mjs (after `npm run build`).
import * as mx from 'mxnet-wasm';

const { nd } = mx;
mx.random.seed(42);

const x = nd.random_normal({ shape: [4, 8] });          // a batch of 4 samples, 8 features
console.log('input', x.toString());

// A two-layer perceptron, written with the raw operators.
const w1 = nd.random_uniform({ low: -0.3, high: 0.3, shape: [16, 8] });
const b1 = nd.zeros([16]);
const w2 = nd.random_uniform({ low: -0.3, high: 0.3, shape: [3, 16] });
const b2 = nd.zeros([3]);

const probs = mx.tidy(() => {
  const h = nd.relu(nd.FullyConnected(x, w1, b1, { num_hidden: 16 }));
  console.log('hidden mean', h.mean().item().toFixed(4)); // inspect intermediate results freely
  const logits = nd.FullyConnected(h, w2, b2, { num_hidden: 3 });
  return nd.softmax(logits, { axis: -1 });
});
console.log('class probabilities', probs.toString());
console.log('predicted classes', nd.argmax(probs, { axis: 1 }).toArray());
console.log('rows sum to one', nd.sum(probs, { axis: 1 }).toArray().map((v) => v.toFixed(6)));

// Broadcasting arithmetic as in MXNet: (4, 3) - (4, 1), scalar forms, comparisons.
const centered = probs.sub(probs.mean({ axis: 1, keepdims: true }));
console.log('centered', centered.toString());
console.log('above 1/3', centered.greater(0).sum().item(), 'of', centered.size);

// Errors are MXNetError and leave the runtime usable.
try {
  nd.dot(x, w1);                                          // (4, 8) · (16, 8): shapes do not match
} catch (e) {
  console.log(`${e.name}: ${e.message}`);
}
console.log('memory', mx.memory());
