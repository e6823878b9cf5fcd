// Makes dist/api.bundle.cache: V8's code cache of dist/api.bundle.js, the API's script form, which
// the package's entry compiles with it in Node >= 20.16 (js/api_script.mjs says why and when it is
// used). This process imports the package from distDir, so the script runs from its cache-less
// compile, then runs what an application's start runs (a Gluon block built, initialized,
// hybridized and run; eager calls; a Symbol traced, exported and imported back), and asks V8 for
// the cache: it then holds the bytecode of every function those ran. The file is a 4-byte magic,
// the script's hash (api_script.mjs's sourceHash) and byte length, then V8's data: api_script.mjs uses it only for that script.
// V8 accepts it only under the same V8 version and flags: the Node that builds the package. A
// second cache, dist/api.bundle.relaxed-simd.cache, is made the same way in a Node started with
// --experimental-wasm-relaxed-simd (Node 20's flag for the relaxed tiers), where that flag turns
// relaxed SIMD on.
//   node scripts/code-cache.mjs [distDir]
import { spawnSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../dist'));
// relaxed SIMD on: the cache api_script.mjs reads in such a Node (tiers.mjs's probe)
const { hostSupport } = await import(pathToFileURL(path.join(dist, 'tiers.mjs')).href);
const relaxedOn = hostSupport().relaxed;
const { sourceHash } = await import(pathToFileURL(path.join(dist, 'api_script.mjs')).href);
const relaxedChild = process.argv.includes('--relaxed-child');
if (relaxedChild && !relaxedOn) process.exit(0); // the flag does not turn it on here: no second cache
const out = path.join(dist, relaxedOn ? 'api.bundle.relaxed-simd.cache' : 'api.bundle.cache');
rmSync(out, { force: true }); // compiled without one, as a first start would be
if (typeof process.getBuiltinModule !== 'function') {
  console.log('code-cache: this Node has no process.getBuiltinModule (< 20.16): the API loads as an ES module, no cache made');
  process.exit(0);
}
const mx = await import(pathToFileURL(path.join(dist, 'index.mjs')).href);
const state = globalThis[Symbol.for('mxnet-wasm.apiScript')];
if (!state || !state.script) throw new Error('code-cache: the package did not load its script form (api.bundle.js)');

// An application's first steps.
const { nd, gluon, sym } = mx;
const { nn } = gluon;
const net = new nn.HybridSequential();
net.add(new nn.Conv2D(4, 3, { activation: 'relu' }), new nn.MaxPool2D(2), new nn.BatchNorm(),
  new nn.Flatten(), new nn.Dense(8, { activation: 'relu' }), new nn.Dropout(0.5), new nn.Dense(3));
net.initialize(new mx.init.Xavier());
const x = nd.random.uniform(0, 1, [2, 1, 8, 8]);
net(x).asnumpy();
net.hybridize();
net(x).toTypedArray();
const y = nd.softmax(nd.dot(x.reshape([2, -1]), nd.ones([64, 3])).add(1).mul(0.5));
y.argmax({ axis: 1 }).asnumpy();
String(y);
const s = sym.FullyConnected(sym.var('data'), { num_hidden: 3, name: 'fc' });
const block = new gluon.SymbolBlock(s, sym.var('data'));
block.initialize();
block(nd.ones([1, 4])).asnumpy();

const source = readFileSync(path.join(dist, 'api.bundle.js'));
const data = state.script.createCachedData();
const header = Buffer.alloc(12);
header.write('MXW3', 0, 'latin1');
header.writeUInt32LE(sourceHash(source), 4);
header.writeUInt32LE(source.length, 8);
const file = Buffer.concat([header, data]);
const tmp = `${out}.${process.pid}.tmp`;
writeFileSync(tmp, file);
renameSync(tmp, out);
console.log(`code-cache: ${path.relative(process.cwd(), out)} (${(file.length / 1024).toFixed(0)} KiB)`);
// the threaded tiers' workers do not keep Node alive (js/tiers.mjs); nothing else is pending

// the relaxed-SIMD cache, from a Node started with the flag (where the flag is what turns it on)
if (!relaxedOn) {
  const r = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', fileURLToPath(import.meta.url), dist, '--relaxed-child'],
    { encoding: 'utf8' });
  process.stdout.write(r.stdout ?? '');
  if (r.status !== 0 && !/bad option/.test(r.stderr ?? '')) {
    process.stderr.write(r.stderr ?? '');
    process.exit(r.status ?? 1);
  }
}
