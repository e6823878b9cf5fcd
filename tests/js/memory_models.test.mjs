// Large models one after the other in one process (issue 14, acceptance 3): eleven model-zoo
// networks (VGG-16's 528 MB of parameters the largest) are each built, initialized, run once and
// disposed; the wasm heap (which never shrinks) then stays within 10% of what the largest needs
// on its own in a fresh process. Without dispose(), loading them under a capped heap ends in
// the out-of-memory MXNetError, and once the held ones are disposed the next load succeeds.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// [get_model name, input side]: inceptionv3 needs 299, the others run at 64.
// (DenseNet's and SqueezeNet's final fixed-size pooling needs 224.)
const MODELS = [['vgg16', 64], ['resnet50_v1', 64], ['densenet121', 224], ['inceptionv3', 299], ['mobilenetv2_1.0', 64],
  ['squeezenet1.0', 224], ['alexnet', 64], ['resnet18_v2', 64], ['densenet169', 224], ['vgg11_bn', 64], ['mobilenet0.5', 64]];

function child(body, env = {}) {
  const code = `const mx = await import('mxnet-wasm'); const { nd, gluon } = mx;
// Builds, initializes and runs one hybridized network; \`held\` gets the block first, so that it can
// be disposed even when its parameters' allocation fails.
const run = (name, side, held = []) => {
  const net = gluon.model_zoo.vision.get_model(name);
  held.push(net);
  net.initialize();
  net.hybridize();
  const x = nd.random.uniform({ shape: [1, 3, side, side] });
  const y = net(x);
  const out = y.toTypedArray();
  x.dispose(); y.dispose();
  if (out.length !== 1000 || !out.every(Number.isFinite)) throw new Error(name + ': bad output');
  return net;
};
${body}`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 2 ** 20, timeout: 600_000, env: { ...process.env, MXW_TIER: 'simd', ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test('eleven large models in one process, each disposed: the heap stays within 10% of the largest alone', { timeout: 900_000 }, () => {
  const alone = MODELS.map(([name, side]) => child(`run(${JSON.stringify(name)}, ${side}).dispose();
    console.log(JSON.stringify({ heap: mx.memory().wasmHeapBytes }));`).heap);
  const seq = child(`const heaps = [];
    for (const [name, side] of ${JSON.stringify(MODELS)}) { run(name, side).dispose(); heaps.push(mx.memory().wasmHeapBytes); }
    console.log(JSON.stringify({ heaps, arrays: mx.memory().numArrays }));`);
  const need = Math.max(...alone);
  const high = Math.max(...seq.heaps);
  assert.ok(high <= 1.1 * need, `heap ${(high / 2 ** 20).toFixed(0)} MiB after the sequence, ${(need / 2 ** 20).toFixed(0)} MiB for the largest alone`);
  assert.equal(seq.arrays, 0, 'every array was freed');
});

test('without dispose, loading until memory runs out: the out-of-memory MXNetError; after disposing, the next load works', { timeout: 600_000 }, () => {
  const r = child(`const held = [];
    let message = null;
    try { for (let i = 0; i < 50; i++) run(${JSON.stringify(MODELS[1][0])}, 64, held); } catch (e) { message = e.message; }
    const count = held.length - 1; // the last one ran out of memory
    for (const n of held) n.dispose();
    run(${JSON.stringify(MODELS[0][0])}, 64).dispose();
    console.log(JSON.stringify({ message, count }));`, { MXW_MAX_MEMORY_MB: '640' });
  assert.ok(r.count >= 2, `${r.count} ResNet-50s fit before memory ran out`);
  assert.match(r.message, /out of memory: .+ needs \d+ bytes .*live arrays and cached graphs hold [\d.]+ MiB\); dispose\(\) blocks and arrays no longer in use to free memory/);
});
