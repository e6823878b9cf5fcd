// Soak test (issue 9): long runs that must leave memory flat. Prints, for each phase, the wasm
// heap (its size: wasm memory never shrinks, so this is its high-water mark), the live arrays and
// their bytes (mx.memory()), the process RSS and the JS heap, before and after; exits with 1 when
// a phase that must be flat is not. Between phases it runs the JS collector (through node:v8 and
// node:vm when --expose-gc is not given) so that each phase is measured alone. Not part of CI's
// default run.
//
//   npm run soak [-- --scale=0.1] [-- --phases=imperative,hybridized,training]
//
// Phases (counts at scale 1):
//   imperative  100,000 eager operator calls, 100 per mx.tidy
//   hybridized  10,000 forwards of a hybridized MLP (784-128-10, batch 8), each in mx.tidy
//   training    1,000 LeNet training steps (hybridized, batch 16, SoftmaxCrossEntropyLoss, Trainer
//               sgd with momentum) on fixed synthetic digits, each in mx.tidy; flat after step 1
//               (which creates the optimizer's momentum)
//   nets        1,000 hybridized MLPs created, run once and disposed
//   dropped     2,000 arrays of 1 MiB dropped without dispose in a loop that yields to the event
//               loop: bounded by the collections mxnet-wasm requests (not flat: some still wait
//               for the collector at the end; the bound checked is 256 MiB of heap growth)
import v8 from 'node:v8';
import vm from 'node:vm';
import * as mx from 'mxnet-wasm';
import { lenetOf } from '../web-demo/digits.mjs';

const { nd, gluon, autograd } = mx;
const { nn } = gluon;

const opts = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([\w-]+)(?:=(.*))?$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a} (use --scale=<factor>, --phases=<a,b,...>)`);
  return [m[1], m[2] ?? 'true'];
}));
const scale = Number(opts.scale ?? 1);
if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${opts.scale}`);
const ALL = ['imperative', 'hybridized', 'training', 'nets', 'dropped'];
const phases = opts.phases ? opts.phases.split(',') : ALL;
for (const p of phases) if (!ALL.includes(p)) throw new Error(`unknown phase ${p} (phases: ${ALL.join(', ')})`);
const n = (count) => Math.max(1, Math.round(count * scale));
const MiB = 1024 * 1024;
const tick = () => new Promise((r) => setImmediate(r));
// Before and after each phase, what earlier phases dropped (a trainer's states, say) is collected
// and finalized, so that the counts compare this phase alone.
const gc = typeof globalThis.gc === 'function' ? globalThis.gc : (() => {
  v8.setFlagsFromString('--expose-gc');
  const fn = vm.runInNewContext('gc');
  v8.setFlagsFromString('--no-expose-gc');
  return fn;
})();
async function settle() {
  for (let i = 0; i < 3; i++) { gc(); await tick(); }
}

// Deterministic data (mulberry32), independent of mx.random.
function uniform(count, seed) {
  let a = seed >>> 0;
  return Float32Array.from({ length: count }, () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  });
}

function snapshot() {
  const m = mx.memory();
  const p = process.memoryUsage();
  return { ...m, rss: p.rss, jsHeap: p.heapUsed };
}
const mb = (b) => `${(b / MiB).toFixed(1)} MiB`;
const rows = [];
let failed = false;
// Runs one phase's body(); `flat` checks that the live arrays and their bytes end where they
// started (after the collector ran; 'right after' is printed too). Heap, RSS and JS heap are
// read right after the run.
async function phase(name, what, body, { flat = true, check } = {}) {
  if (!phases.includes(name)) return;
  await settle();
  const before = snapshot();
  const t0 = performance.now();
  await body(before);
  const ms = performance.now() - t0;
  const afterRun = snapshot();
  await settle();
  const after = { ...snapshot(), wasmHeapBytes: afterRun.wasmHeapBytes, rss: afterRun.rss, jsHeap: afterRun.jsHeap };
  let ok = true;
  if (flat) ok = after.numArrays === before.numArrays && after.bytes === before.bytes;
  if (check) ok = ok && check(before, after);
  if (!ok) failed = true;
  rows.push({ name, what, ms, before, after, ok });
  console.log(`${name}: ${what}: ${(ms / 1000).toFixed(1)} s, ${ok ? 'ok' : 'NOT FLAT'}`);
  console.log(`  wasm heap ${mb(before.wasmHeapBytes)} -> ${mb(after.wasmHeapBytes)}, RSS ${mb(before.rss)} -> ${mb(after.rss)},`
    + ` JS heap ${mb(before.jsHeap)} -> ${mb(after.jsHeap)} (right after the run); arrays ${before.numArrays} -> ${afterRun.numArrays}`
    + ` (${mb(before.bytes)} -> ${mb(afterRun.bytes)}) right after, ${after.numArrays} (${mb(after.bytes)}) once the collector ran;`
    + ` collections requested by mxnet-wasm ${afterRun.gcCollections - before.gcCollections}, arrays finalized ${afterRun.finalizedArrays - before.finalizedArrays}`);
}

console.log(`mxnet-wasm ${mx.version ?? ''} soak, scale ${scale}, Node ${process.version}${typeof globalThis.gc === 'function' ? ' (--expose-gc)' : ''}`);
const start = snapshot();

// ---- 100,000 imperative operator calls, 100 per tidy -------------------------------------------
{
  const a = nd.array(uniform(64 * 64, 1), { shape: [64, 64] });
  const b = nd.array(uniform(64 * 64, 2), { shape: [64, 64] });
  const tidies = n(1000);
  await phase('imperative', `${(tidies * 100).toLocaleString('en-US')} eager ops in ${tidies.toLocaleString('en-US')} tidies`, () => {
    for (let t = 0; t < tidies; t++) {
      mx.tidy(() => {
        let x = a;
        for (let i = 0; i < 10; i++) {
          // 10 calls per round: broadcast_mul, _plus_scalar, relu, dot, _div_scalar, broadcast_add,
          // tanh, sum, _mul_scalar, broadcast_sub
          x = x.mul(b).add(0.5).relu();
          x = nd.dot(x, b).div(64).add(a).tanh();
          x = x.sub(x.sum().mul(1e-6));
        }
        return x.mean().asscalar();
      });
    }
  });
  a.dispose();
  b.dispose();
}

// ---- 10,000 hybridized forwards ------------------------------------------------------------------------
const mlp = () => {
  const net = new nn.HybridSequential();
  net.add(new nn.Dense(128, { activation: 'relu', inUnits: 784 }), new nn.Dense(10, { inUnits: 128 }));
  return net;
};
if (phases.includes('hybridized')) {
  const net = mlp();
  net.initialize(new mx.init.Xavier());
  net.hybridize();
  const x = nd.array(uniform(8 * 784, 3), { shape: [8, 784] });
  mx.tidy(() => net(x)); // the first call traces and binds the graph
  const count = n(10000);
  await phase('hybridized', `${count.toLocaleString('en-US')} hybridized MLP forwards`, () => {
    for (let i = 0; i < count; i++) mx.tidy(() => { net(x).argmax(1); });
  });
  net.dispose();
  x.dispose();
}

// ---- 1,000 training steps --------------------------------------------------------------------------------
if (phases.includes('training')) {
  const net = lenetOf(mx); // the crash course's LeNet, as the web demo trains it
  mx.random.seed(1);
  net.initialize(new mx.init.Xavier());
  net.hybridize();
  const loss = new gluon.loss.SoftmaxCrossEntropyLoss();
  const trainer = new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.05, momentum: 0.9 });
  const batch = 16;
  const x = nd.array(uniform(batch * 28 * 28, 4), { shape: [batch, 1, 28, 28] });
  const y = nd.array(Array.from({ length: batch }, (_, i) => i % 10));
  const step = () => mx.tidy(() => {
    const l = autograd.record(() => loss(net(x), y));
    l.backward();
    trainer.step(batch);
    return l.mean().asscalar();
  });
  const first = step(); // creates the momentum states
  let last = first;
  const count = n(1000);
  await phase('training', `${count.toLocaleString('en-US')} LeNet training steps (batch ${batch})`, () => {
    for (let i = 0; i < count; i++) last = step();
  }, { check: () => last < first });
  console.log(`  loss ${first.toFixed(4)} -> ${last.toFixed(4)}`);
  net.dispose();
  x.dispose();
  y.dispose();
}

// ---- 1,000 nets created and disposed ---------------------------------------------------------------------
if (phases.includes('nets')) {
  const x = nd.array(uniform(4 * 784, 5), { shape: [4, 784] });
  const count = n(1000);
  await phase('nets', `${count.toLocaleString('en-US')} hybridized MLPs created, run and disposed`, () => {
    for (let i = 0; i < count; i++) {
      const net = mlp();
      net.initialize();
      net.hybridize();
      net(x).dispose();
      net.dispose();
    }
  });
  x.dispose();
}

// ---- 2,000 dropped 1 MiB arrays ------------------------------------------------------------------------------
{
  const count = n(2000);
  await phase('dropped', `${count.toLocaleString('en-US')} arrays of 1 MiB dropped without dispose, yielding after each`, async () => {
    for (let i = 0; i < count; i++) { nd.zeros([256, 1024]); await tick(); }
  }, { flat: false, check: (b, a) => a.wasmHeapBytes - b.wasmHeapBytes <= 256 * MiB });
}

const end = snapshot();
console.log(`overall: wasm heap ${mb(start.wasmHeapBytes)} -> ${mb(end.wasmHeapBytes)}, arrays ${start.numArrays} -> ${end.numArrays},`
  + ` RSS ${mb(start.rss)} -> ${mb(end.rss)}, JS heap ${mb(start.jsHeap)} -> ${mb(end.jsHeap)}`);
if (failed) {
  console.log(`soak: FAILED (${rows.filter((r) => !r.ok).map((r) => r.name).join(', ')})`);
  process.exitCode = 1;
} else {
  console.log('soak: ok');
}
