// Post-link fixes of the emscripten glue (run by CMakeLists.txt after each link).
//
// 0. Every tier: the instance's imports get the "placeholder" namespace of a split module
// (wasm/split_pre.js, scripts/split-wasm.mjs); a module without placeholders never reads it. In
// browsers the deferred part is found as `new URL("mxcore.deferred.wasm", import.meta.url)`,
// which bundlers copy as an asset (emcc's minifier does not take import.meta in a --pre-js).
//
// The threaded tiers' glue and worker, also:
// 1. emcc 3.1.6 writes `new Worker(new URL("mxcore.worker.js", import.meta.url))`, the pattern that
// bundlers (Vite, webpack) take for a module worker to bundle. That fails (Vite: "UMD and IIFE
// output formats are not supported for code-splitting builds"): this worker is a classic script
// that loads the main module itself. As `new Worker((0, new URL(...)))` the bundlers copy the file
// as an asset (the `new URL(..., import.meta.url)` rule) and leave the Worker call alone: Vite's
// rule matches `new Worker(new URL(` whatever follows, so the URL object goes through a comma
// expression (Node's Worker needs the URL object: it refuses a file: URL string).
//
// 2. The module does not wait for its pool's workers to load it before it resolves (it waited,
// ~25 ms of the threads tier's import in Node): the workers load on their own threads meanwhile,
// and the kernels' pool (csrc/core/parallel.c) counts a worker from when its thread runs, the
// first calls running on the caller (results are the same for any thread count). For that, a
// thread started on a worker still loading is posted at once (the glue held it until the main
// thread had seen the worker's "loaded" message: never, while the caller runs synchronously),
// and the worker (mxcore.worker.js) keeps the messages that come before its module is ready and
// handles them in order once it is.
//   node scripts/patch-glue.mjs build/link/threads/mxcore.mjs   (mxcore.worker.js beside it, if threaded)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// A pattern matching the minified code `code` whatever the whitespace around its punctuation and
// a `;` before a `}` (the relaxed tiers link at -O1: their glue is not minified).
const loose = (code) => new RegExp([...code].map((c) => {
  if (c === ' ') return '\\s+';
  if (c === '}') return '\\s*;?\\s*\\}\\s*'; // (a statement's `;` before a brace is left out when minified)
  const e = c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  return /[\w"]/.test(c) ? e : `\\s*${e}\\s*`;
}).join(''));

// Replaces each [from, to] in a file (`from` a minified snippet of the glue, whitespace aside, or
// a RegExp): `from` must be there once, or else (a file already patched) `to`; anything else
// means emcc changed its output: an error naming the file.
function patch(file, pairs) {
  let text = readFileSync(file, 'utf8');
  for (const [snippet, to] of pairs) {
    const from = typeof snippet === 'string' ? loose(snippet) : snippet;
    const n = (text.match(new RegExp(from.source, 'g')) ?? []).length;
    if (n === 0 && text.includes(to)) continue;
    if (n !== 1) {
      console.error(`patch-glue: ${file}: ${n} places match ${snippet} (emscripten changed?)`);
      process.exit(1);
    }
    text = text.replace(from, () => to);
  }
  writeFileSync(file, text);
}

const file = process.argv[2];
const worker = path.join(path.dirname(file), 'mxcore.worker.js');
const threaded = existsSync(worker);
patch(file, [
  [/var info\s*=\s*\{(?!"placeholder")/, 'var info={"placeholder":Module["mxwPlaceholders"](),'],
  ['function mxwDeferredUrl(){return scriptDirectory+"mxcore.deferred.wasm"}',
    'function mxwDeferredUrl(){return new URL("mxcore.deferred.wasm",import.meta.url).href}'],
  ...(threaded ? threadPairs() : []),
]);
function threadPairs() {
  return [
    [/new Worker\(new URL\("mxcore\.worker\.js",\s*import\.meta\.url\)\)/, 'new Worker((0,new URL("mxcore.worker.js",import.meta.url)))'],
    ['var numWorkersToLoad=PThread.unusedWorkers.length;PThread.unusedWorkers.forEach(function(w){PThread.loadWasmModuleToWorker(w,'
    + 'function(){if(!--numWorkersToLoad)removeRunDependency("wasm-instantiate")})})',
    'PThread.unusedWorkers.forEach(function(w){PThread.loadWasmModuleToWorker(w)});removeRunDependency("wasm-instantiate")'],
    ['if(worker.loaded){worker.runPthread();delete worker.runPthread}', 'worker.runPthread();delete worker.runPthread;'],
    // 3. In Node, node:worker_threads loads when the pool adds its first worker, not with the module:
    // its load was 1.2 ms of the import, 5 ms under a V8 flag (the relaxed tiers'), and the pool
    // starts after the import (csrc/core/parallel.c). global.Worker, which the glue sets, is a
    // getter that loads it until first read.
    ['let nodeWorkerThreads;try{nodeWorkerThreads=require("worker_threads")}catch(e){console.error(\'The "worker_threads" module is '
    + 'not supported in this node.js build - perhaps a newer version is needed?\');throw e}global.Worker=nodeWorkerThreads.Worker',
    'Object.defineProperty(global,"Worker",{configurable:true,enumerable:false,get(){var W=require("worker_threads").Worker;'
    + 'Object.defineProperty(global,"Worker",{configurable:true,writable:true,enumerable:false,value:W});return W},'
    + 'set(v){Object.defineProperty(global,"Worker",{configurable:true,writable:true,enumerable:false,value:v})}})'],
  ];
}
if (threaded) {
  patch(worker, [
    ['self.onmessage=(e=>{try{if(e.data.cmd==="load"){',
      'var mxwReady=false,mxwEarly=[];self.onmessage=(e=>{if(!mxwReady&&e.data.cmd!=="load"){mxwEarly.push(e);return}'
      + 'try{if(e.data.cmd==="load"){'],
    ['.then(function(instance){Module=instance})',
      '.then(function(instance){Module=instance;mxwReady=true;mxwEarly.splice(0).forEach(function(m){self.onmessage(m)})})'],
  ]);
}
