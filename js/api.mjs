// mxnet-wasm: MXNet Gluon's hybrid programming model on a C core compiled to WebAssembly SIMD.
//
//   import * as mx from 'mxnet-wasm';
//   const { nd } = mx;
//   const x = nd.array([[1, 2], [3, 4]]);
//   const y = nd.dot(x, x.T);            // every registered operator, eagerly
//   console.log(y.toString());           // [[ 5. 11.] [11. 25.]] <NDArray 2x2 @cpu(0)>
//
// The wasm module is instantiated at import (top-level await); every call after is synchronous.
// The package's entry, dist/index.mjs, is generated from this module's exports (scripts/gen-api.mjs):
// it starts loading the wasm module before these modules are parsed, then re-exports them.
import { M, MXNetError, registry, check, core } from './core.mjs';
import {
  NDArray, Context, cpu, tidy, keep, memory, array, ufunc,
} from './ndarray.mjs';
import { generateNd } from './ops.mjs';
import './indexing.mjs';
import * as io from './io.mjs';
import {
  Symbol, generateSym, variable, Group, fromJSON, load as loadSymbol, NameManager, Prefix, withNameManager,
  currentNameManager,
} from './symbol.mjs';
import { VERSION } from './version.mjs';
import * as initializer from './initializer.mjs';
import { Parameter, Constant, ParameterDict, DeferredInitializationError } from './parameter.mjs';
import { Block, HybridBlock, SymbolBlock, Sequential, HybridSequential, HookHandle, F } from './block.mjs';
import { CachedOp } from './cached_op.mjs';
import * as nnLayers from './nn.mjs';
import * as autogradModule from './autograd.mjs';
import * as randomModule from './random.mjs';
import * as creation from './creation.mjs';
import * as gluonUtils from './gluon_utils.mjs';
import { symCreation } from './sym_creation.mjs';
import * as optimizerModule from './optimizer.mjs';
import * as lrSchedulerModule from './lr_scheduler.mjs';
import * as lossModule from './loss.mjs';
import * as metricModule from './metric.mjs';
import * as dataModule from './data.mjs';
import * as visionDatasets from './data/datasets.mjs';
import * as trainerModule from './trainer.mjs';
import modelZooModule from './model_zoo/index.mjs';
import * as rnnModule from './rnn.mjs';
import * as contribNn from './contrib_nn.mjs';
import { ndControlFlow, symControlFlow } from './control_flow.mjs';
import * as imageModule from './image.mjs';
import * as recordioModule from './recordio.mjs';

// ---- nd: every registered op (generated), plus MXNet's Python-level helpers ---------------------
const generated = generateNd();

// Python's mx.nd.zeros(shape, ctx=None, dtype=None) etc. call the registry ops _zeros, _ones,
// _full and _arange; arithmetic helpers (nd.add(lhs, rhs), ...) dispatch between broadcast_*
// and _*_scalar as ndarray.py's _ufunc_helper does (two numbers: Python's operator's value).
function ufn(arrayOp, scalarOp, rscalarOp, pyFn) {
  return (lhs, rhs) => ufunc(lhs, rhs, arrayOp, scalarOp, rscalarOp, pyFn);
}
const pyMod = (x, y) => x - Math.floor(x / y) * y; // Python's % (sign of the divisor)
const flag = (c) => (c ? 1 : 0);

const helpers = {
  NDArray,
  // creation helpers with Python's signatures (creation.mjs)
  array: creation.array,
  empty: creation.empty,
  zeros: creation.zeros,
  ones: creation.ones,
  full: creation.full,
  arange: creation.arange,
  concatenate: creation.concatenate,
  // split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False): ndarray.py's, as NDArray.splitV2
  split_v2: (ary, ...rest) => {
    if (!(ary instanceof NDArray)) throw new MXNetError('nd.split_v2: ary must be an NDArray');
    return ary.splitV2(...rest);
  },
  add: ufn('broadcast_add', '_plus_scalar', null, (x, y) => x + y),
  subtract: ufn('broadcast_sub', '_minus_scalar', '_rminus_scalar', (x, y) => x - y),
  multiply: ufn('broadcast_mul', '_mul_scalar', null, (x, y) => x * y),
  divide: ufn('broadcast_div', '_div_scalar', '_rdiv_scalar', (x, y) => x / y),
  true_divide: ufn('broadcast_div', '_div_scalar', '_rdiv_scalar', (x, y) => x / y),
  modulo: ufn('broadcast_mod', '_mod_scalar', '_rmod_scalar', pyMod),
  power: ufn('broadcast_power', '_power_scalar', '_rpower_scalar', (x, y) => x ** y),
  maximum: ufn('broadcast_maximum', '_maximum_scalar', null, (x, y) => (x > y ? x : y)),
  minimum: ufn('broadcast_minimum', '_minimum_scalar', null, (x, y) => (x < y ? x : y)),
  equal: ufn('broadcast_equal', '_equal_scalar', null, (x, y) => flag(x === y)),
  not_equal: ufn('broadcast_not_equal', '_not_equal_scalar', null, (x, y) => flag(x !== y)),
  greater: ufn('broadcast_greater', '_greater_scalar', '_lesser_scalar', (x, y) => flag(x > y)),
  greater_equal: ufn('broadcast_greater_equal', '_greater_equal_scalar', '_lesser_equal_scalar', (x, y) => flag(x >= y)),
  lesser: ufn('broadcast_lesser', '_lesser_scalar', '_greater_scalar', (x, y) => flag(x < y)),
  lesser_equal: ufn('broadcast_lesser_equal', '_lesser_equal_scalar', '_greater_equal_scalar', (x, y) => flag(x <= y)),
  logical_and: ufn('broadcast_logical_and', '_logical_and_scalar', null, (x, y) => flag(x && y)),
  logical_or: ufn('broadcast_logical_or', '_logical_or_scalar', null, (x, y) => flag(x || y)),
  logical_xor: ufn('broadcast_logical_xor', '_logical_xor_scalar', null, (x, y) => flag(!x !== !y)),
  CachedOp,
  save: io.save,
  saveBytes: io.saveBytes,
  load: io.load,
  loadBytes: io.loadBytes,
  random: Object.freeze({ ...randomModule }), // nd.random is mx.random (random.mjs)
};

// The registry's ops come first; helpers fill names the registry does not have (MXNet's
// Python module has the same layering: generated ops, then ndarray.py's functions).
// MXNet's Python exposes the _image_* ops as nd.image.to_tensor etc. (ndarray/image.py)
const imageNamespace = (ops) => Object.freeze(Object.fromEntries(
  Object.entries(ops).filter(([k]) => k.startsWith('_image_')).map(([k, f]) => [k.slice(7), f])));
helpers.image = imageNamespace(generated);
// ... and the _contrib_* ops as nd.contrib.box_nms, F.contrib.ROIAlign, ... (ndarray/contrib.py,
// the op registration's "_contrib_" prefix), as GluonCV and GluonNLP code calls them
const contribNamespace = (ops) => Object.freeze(Object.fromEntries(
  Object.entries(ops).filter(([k]) => k.startsWith('_contrib_')).map(([k, f]) => [k.slice(9), f])));
helpers.contrib = Object.freeze({ ...contribNamespace(generated), ...ndControlFlow }); // + foreach, while_loop, cond
// ... and the _linalg_* ops as nd.linalg.gemm2, F.linalg.potrf, ... (ndarray/linalg.py)
const linalgNamespace = (ops) => Object.freeze(Object.fromEntries(
  Object.entries(ops).filter(([k]) => k.startsWith('_linalg_')).map(([k, f]) => [k.slice(8), f])));
helpers.linalg = linalgNamespace(generated);
// (Object.assign, not an object spread: a spread of ~900 names gives each its own hidden-class
// transition, ~3 ms of the import each for nd and sym; assign builds a dictionary at once)
export const nd = Object.freeze(Object.assign({}, helpers, generated, Object.fromEntries(
  Object.entries(helpers).filter(([k]) => !(k in generated)))));
// ---- sym: every registered op as a composing function, plus MXNet's symbol.py helpers ----------
const symGenerated = generateSym();
const symHelpers = {
  Symbol,
  var: variable,
  Variable: variable,
  Group,
  fromJSON,
  load_json: fromJSON,
  loadJSON: fromJSON,
  load: loadSymbol,
  // split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False): symbol.py's, as Symbol.splitV2
  split_v2: (ary, ...rest) => {
    if (!(ary instanceof Symbol)) throw new MXNetError('sym.split_v2: ary must be a Symbol');
    return ary.splitV2(...rest);
  },
};
symHelpers.image = imageNamespace(symGenerated);
symHelpers.contrib = Object.freeze({ ...contribNamespace(symGenerated), ...symControlFlow });
symHelpers.linalg = linalgNamespace(symGenerated);
Object.assign(symHelpers, symCreation(symGenerated)); // sym.zeros, ones, full, arange, linspace, eye
export const sym = Object.freeze(Object.assign({}, symGenerated, symHelpers)); // (assign: as nd)
export const symbol = sym;
F.nd = nd;
F.sym = sym;

// The initializers' values are written through nd.array (float64 staging, converted in C).
initializer._setValuesImpl((arr, values) => { const src = array(values, { shape: arr.shape, dtype: 'float64' }); src.copyto(arr); src.dispose(); });
export const init = initializer;
export const autograd = Object.freeze({ ...autogradModule });

// gluon.contrib.rnn's cells, which rnn.mjs defines beside gluon.rnn's
const CONTRIB_RNN = ['LSTMPCell', 'VariationalDropoutCell', ...[1, 2, 3].flatMap((d) => ['RNN', 'LSTM', 'GRU'].map((k) => `Conv${d}D${k}Cell`))];
export const gluon = {
  Block, HybridBlock, SymbolBlock, Parameter, Constant, ParameterDict, DeferredInitializationError, HookHandle,
  // Python re-exports Block, HybridBlock and SymbolBlock from gluon.nn
  nn: { ...nnLayers, Sequential, HybridSequential, Block, HybridBlock, SymbolBlock },
  utils: Object.freeze({ ...gluonUtils }), // gluon_utils.mjs
  loss: Object.freeze({ ...lossModule }), // loss.mjs
  // data.mjs (gluon.data, gluon.data.vision.transforms) and data/datasets.mjs (gluon.data.vision's datasets)
  data: Object.freeze({
    ...dataModule.default,
    RecordFileDataset: visionDatasets.RecordFileDataset,
    vision: Object.freeze({
      ...dataModule.vision, MNIST: visionDatasets.MNIST, FashionMNIST: visionDatasets.FashionMNIST, CIFAR10: visionDatasets.CIFAR10,
      CIFAR100: visionDatasets.CIFAR100, ImageRecordDataset: visionDatasets.ImageRecordDataset,
      ImageFolderDataset: visionDatasets.ImageFolderDataset,
    }),
  }),
  ...trainerModule, // Trainer (trainer.mjs)
  model_zoo: modelZooModule, // model_zoo/ (vision architectures, model_store)
  // rnn.mjs (recurrent cells and the fused RNN, LSTM, GRU layers; its contrib cells go to gluon.contrib.rnn)
  rnn: Object.freeze(Object.fromEntries(Object.entries(rnnModule).filter(([k]) => !CONTRIB_RNN.includes(k)))),
  modelZoo: modelZooModule,
  // gluon.contrib.rnn: rnn.mjs's LSTMPCell, VariationalDropoutCell, Conv<d>D{RNN,LSTM,GRU}Cell
  contrib: { nn: Object.freeze({ ...contribNn }), rnn: Object.freeze(Object.fromEntries(CONTRIB_RNN.map((k) => [k, rnnModule[k]]))) }, // contrib_nn.mjs (Concurrent, HybridConcurrent, Identity, SyncBatchNorm, PixelShuffle*D)
};
nnLayers.Lambda._nd = nd;
nnLayers.Lambda._sym = sym;

export const name = Object.freeze({ NameManager, Prefix, withNameManager, current: currentNameManager });

// The names the C registry reports, for tooling and the docs' op table.
export const registeredOps = Object.freeze(registry.ops.map((o) => o.name));

// ---- runtime -----------------------------------------------------------------------------------
export const random = helpers.random;
export const optimizer = optimizerModule.default ?? Object.freeze({ ...optimizerModule });
export const lr_scheduler = Object.freeze({ ...lrSchedulerModule });
export const lrScheduler = lr_scheduler;
export const metric = metricModule.default ?? Object.freeze({ ...metricModule });

// The build this realm runs (tiers.mjs) and the kernels' thread pool (csrc/core/parallel.c). A
// single-thread tier runs one thread whatever is asked; a threaded tier clamps to the workers
// its pool started with (the default count, or MXW_NUM_THREADS in Node).
const threaded = M._mxw_threads_supported() === 1;
// features(): {tier, simd, relaxedSimd, threads, numThreads, maxThreads, requested, fallbacks,
// codeCache}: `requested` is the tier a subpath import or MXW_TIER asked for (null when chosen
// automatically), `fallbacks` the better tiers passed over and why, `codeCache` whether the API
// was compiled from V8's code cache ('used', 'rejected', 'stale', 'absent', or 'off' where the
// ES module bundle was imported: api_script.mjs, which records it under this symbol), `deferred`
// the state of the tier's mxcore.deferred.wasm ('none': not a split tier; 'not loaded', 'loaded':
// on this thread; wasm/split_pre.js).
export function features() {
  return {
    tier: core.tier, simd: true, relaxedSimd: core.tier.includes('relaxed'), threads: threaded,
    numThreads: M._mxw_get_num_threads(), maxThreads: threaded ? core.poolSize + 1 : 1,
    requested: core.requested, fallbacks: core.fallbacks.map((f) => ({ ...f })),
    codeCache: globalThis[globalThis.Symbol.for('mxnet-wasm.apiScript')]?.codeCache ?? 'off', // (Symbol is mx.Symbol here)
    deferred: M.mxwDeferredState ? M.mxwDeferredState() : 'none',
  };
}
// setNumThreads(n): the threads the kernels use from now on (the caller included); returns the
// count in effect, which a threaded tier clamps to its pool and a single-thread tier keeps at 1.
export function setNumThreads(n) {
  if (!Number.isInteger(n) || n < 1) throw new MXNetError(`setNumThreads takes a positive integer, got ${n}`);
  check(M._mxw_set_num_threads(n));
  return M._mxw_get_num_threads();
}
export function getNumThreads() { return M._mxw_get_num_threads(); }
// The pool's workers are not started with the import: the first parallel call that can use them
// starts them, or else the first task after this one does (a Node worker's bootstrap beside the
// import and a first inference took ~8 ms of the threads tier's import -> first LeNet on 2 cores).
if (threaded) {
  check(M._mxw_pool_configure(core.poolSize, core.defaultThreads));
  const timer = setTimeout(() => M._mxw_start_pool(), 0);
  timer?.unref?.(); // (Node: a script that has ended does not wait for it)
}

// mx.image (also mx.img, as Python): image.py's helpers and fromPixels (image.mjs)
export const image = Object.freeze({ ...imageModule });
export const img = image;
// mx.recordio: RecordIO files (recordio.mjs)
export const recordio = Object.freeze({ ...recordioModule });
export const version = VERSION;
export { MXNetError, NDArray, Context, cpu, tidy, keep, memory, Symbol, CachedOp };

const mx = {
  nd, sym, symbol, name, Symbol, random, gluon, init, autograd, CachedOp, features, setNumThreads, getNumThreads, version, MXNetError, NDArray, Context, cpu,
  tidy, keep, memory, registeredOps, optimizer, lr_scheduler, lrScheduler, metric, image, img, recordio,
};
export default mx;
