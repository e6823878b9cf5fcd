// trainer.mjs -- gluon.Trainer (MXNet 1.9.1 python/mxnet/gluon/trainer.py): applies an Optimizer to
// a set of Parameters.
//
//   const trainer = new gluon.Trainer(net.collectParams(), 'sgd', {learning_rate: 0.1, momentum: 0.9});
//   ... backward ...
//   trainer.step(batchSize);                       // rescale_grad = 1 / batchSize, then update
//
// Trainer(params, optimizer, optimizer_params=None, kvstore='device', compression_params=None,
// update_on_kvstore=None): params is a ParameterDict (its parameters in sorted name order, as
// Python's), a list of Parameters or a dict / Map of them; optimizer a registered name or an
// Optimizer instance (then optimizer_params must be empty). The optimizer's parameters keep
// MXNet's names (camelCase accepted).
//
// Devices: one machine. kvstore 'device', 'local' (or an object whose `type` is one of them) and
// null are supported; any other kvstore ('dist_sync', 'nccl', 'horovod', ...) throws. With
// parameters on one context there is no kvstore (Python's _create_kvstore makes none): each step
// updates the weights with their own gradients. With several contexts the 'device'/'local'
// kvstore is emulated as MXNet's local one: gradients are summed across contexts; with
// update_on_kvstore (the default, as MXNET_UPDATE_ON_KVSTORE=1) one updater updates the first
// context's weights with the sum and the others receive a copy, otherwise (update_on_kvstore
// false) the sum is written into every context's gradient and each context's updater updates its
// own weights. kvstore null with several contexts updates each context with its own gradient.
//
// Stale gradients: an NDArray gradient carries `_freshGrad` (autograd sets it when a backward
// pass writes the gradient; a gradient never written is stale, as MXNet's; undefined counts as
// fresh). step()/update() throw for a stale gradient unless ignoreStaleGrad, then skip it;
// after updating they set it to false.
//
// saveStates(fname) / await loadStates(source): the optimizer's states and the optimizer itself
// (learning rate, update counts, scheduler, ...), not the parameters' lr_mult / wd_mult (those
// come from the current parameters, as in MXNet). File format (optimizer.mjs, Updater.getStates):
// an MXNet NDArray-list file (what nd.save writes; nd.load reads it) of named arrays, whose entry
// "__mxw_updater_states__" is a uint8 array of UTF-8 JSON:
//   {"format": "mxnet-wasm-updater-states", "version": 1,
//    "states": [[index, desc], ...], "optimizer": {"name", "class", "fields", "lrScheduler"}}
// desc being null, {"array": entry name} or {"tuple": [desc, ...]}, the state arrays the entries
// "state:<i>[:<j>...]". saveStates writes the file in Node and returns the bytes (saveStates()
// with no file name returns them only); loadStates takes a path (Node), a URL, or the bytes
// (ArrayBuffer, typed array, Blob, Response), as the other loaders.
import { MXNetError } from './core.mjs';
import { tidy, invokeByName, cpu } from './ndarray.mjs';
import { Parameter, ParameterDict } from './parameter.mjs';
import { Optimizer, Updater, create } from './optimizer.mjs';
import { bindArgs, isPlainObject } from './signature.mjs';
import { SIGNATURES } from './signatures.mjs';
import { readBytes, writeFileSync } from './io.mjs';

const ctxStr = (c) => `${c.deviceType}(${c.deviceId})`;
const listStr = (l) => `[${l.map(ctxStr).join(', ')}]`;
const isFresh = (g) => g._freshGrad !== false;
const LOCAL_KV = ['device', 'local'];
function describe(v) {
  if (v === null) return 'None';
  if (typeof v === 'object' || typeof v === 'function') return `<class '${v.constructor?.name ?? typeof v}'>`;
  return `<class '${typeof v}'>`;
}
function envInt(name, fallback) {
  const v = typeof process === 'object' && process.env ? process.env[name] : undefined;
  const n = v === undefined ? NaN : parseInt(v, 10);
  return Number.isNaN(n) ? fallback : n;
}

// The kvstore argument -> 'device' | 'local' | null; anything else throws.
function kvstoreType(kv) {
  if (kv === null || kv === undefined) return null;
  const type = typeof kv === 'string' ? kv : (typeof kv === 'object' && typeof kv.type === 'string' ? kv.type : undefined);
  if (type === undefined) throw new MXNetError(`kvstore must be KVStore, str or None, got ${describe(kv)}`);
  if (!LOCAL_KV.includes(type)) {
    throw new MXNetError(`kvstore '${type}' is not supported: mxnet-wasm trains on one machine (kvstore 'device', 'local' or None)`);
  }
  return type;
}

export class Trainer {
  // Trainer(params, optimizer, optimizer_params=None, kvstore='device', compression_params=None,
  //   update_on_kvstore=None)
  constructor(...args) {
    const a = bindArgs(SIGNATURES.Trainer, args);
    let params = a.params;
    if (params instanceof ParameterDict || params instanceof Map || isPlainObject(params)) {
      const entries = params instanceof ParameterDict || params instanceof Map ? [...params.entries()] : Object.entries(params);
      entries.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
      params = entries.map(([, p]) => p);
    }
    if (!Array.isArray(params)) throw new MXNetError(`First argument must be a list or dict of Parameters, got ${describe(params)}.`);
    this._params = [];
    this._containsSparseWeight = false;
    this._containsSparseGrad = false;
    this._param2idx = {};
    params.forEach((p, i) => {
      if (!(p instanceof Parameter)) throw new MXNetError(`First argument must be a list or dict of Parameters, got list of ${describe(p)}.`);
      this._param2idx[p.name] = i;
      this._params.push(p);
      if (typeof p._setTrainer === 'function') p._setTrainer(this);
      if ((p._stype ?? 'default') !== 'default') this._containsSparseWeight = true;
      if ((p._gradStype ?? 'default') !== 'default') this._containsSparseGrad = true;
    });
    this._compressionParams = a.compressionParams;
    this._contexts = this._checkContexts();
    let optimizerParams = a.optimizerParams ?? {};
    if (optimizerParams instanceof Map) optimizerParams = Object.fromEntries(optimizerParams);
    this._initOptimizer(a.optimizer, optimizerParams);
    this._scale = this._optimizer.rescaleGrad;
    this._kvstoreParams = { kvstore: kvstoreType(a.kvstore), updateOnKVStore: a.updateOnKvstore };
    this._kvInitialized = false;
    this._kvstore = null;
    this._updateOnKVStore = null;
    this._distributed = null;
    this._paramsToInit = [];
    this._resetKVStore();
  }

  // Every parameter lives on the same contexts (Python's list_ctx: an error before initialize).
  _checkContexts() {
    let contexts = null;
    for (const p of this._params) {
      if (!p._data && !p._deferredInit) throw new MXNetError(`Parameter '${p.name}' has not been initialized`);
      const ctx = p.listCtx();
      if (contexts !== null && listStr(contexts) !== listStr(ctx)) {
        throw new MXNetError(`All Parameters must be initialized on the same set of contexts, but Parameter ${p.name} is initialized on ${listStr(ctx)} while previous Parameters are initialized on ${listStr(contexts)}.`);
      }
      contexts = ctx;
    }
    return contexts ?? [cpu()];
  }

  _initOptimizer(optimizer, optimizerParams) {
    const paramDict = Object.fromEntries(this._params.map((p, i) => [i, p]));
    if (optimizer instanceof Optimizer) {
      if (Object.keys(optimizerParams).length) {
        throw new MXNetError('optimizer_params must be None if optimizer is an instance of Optimizer instead of str');
      }
      this._optimizer = optimizer;
      // not copied: lr_mult / wd_mult changes on the parameters take effect
      this._optimizer.paramDict = paramDict;
    } else {
      this._optimizer = create(optimizer, { ...optimizerParams, param_dict: paramDict });
    }
    this._updaters = this._contexts.map(() => new Updater(this._optimizer));
  }

  _resetKVStore() {
    this._kvInitialized = false;
    this._kvstore = null;
    this._distributed = null;
    this._updateOnKVStore = null;
    this._kvUpdater = null;
    this._paramsToInit = this._params.slice();
  }

  // Python's _create_kvstore for one machine: no kvstore for one context; the local one for
  // several, updating on the kvstore unless update_on_kvstore is false.
  _initKVStore() {
    if (this._containsSparseWeight || this._containsSparseGrad) {
      throw new MXNetError('Trainer: row_sparse weights or gradients are not supported by mxnet-wasm');
    }
    const { kvstore, updateOnKVStore } = this._kvstoreParams;
    if (kvstore !== null && this._contexts.length > 1) {
      let onKV = envInt('MXNET_UPDATE_ON_KVSTORE', 1) !== 0;
      if (kvstore === 'local') {
        const maxSize = Math.max(...this._params.map((p) => (p.shape ?? [0]).reduce((x, y) => x * y, 1)));
        if (maxSize > 1024 * 1024 * 16) onKV = false;
      }
      if (updateOnKVStore !== null && updateOnKVStore !== undefined) onKV = updateOnKVStore;
      this._kvstore = { type: kvstore };
      this._updateOnKVStore = onKV;
      if (onKV) this._kvUpdater = new Updater(this._optimizer);
    } else {
      this._kvstore = null;
      this._updateOnKVStore = null;
    }
    this._distributed = false;
    this._kvInitialized = true;
  }

  // The kvstore's broadcast of each initialized parameter: every context starts from the first
  // one's values. Parameters still waiting for deferred initialization wait for the next call.
  _initParams() {
    const waiting = [];
    if (this._kvstore) {
      for (const p of this._paramsToInit) {
        if (!p._data && p._deferredInit) { waiting.push(p); continue; }
        const data = p.listData();
        for (let k = 1; k < data.length; k++) data[0].copyto(data[k]);
      }
    }
    this._paramsToInit = waiting;
  }

  _ensureKV() {
    if (!this._kvInitialized) this._initKVStore();
    if (this._paramsToInit.length) this._initParams();
  }

  get learningRate() { return this._optimizer.learningRate; }
  get learning_rate() { return this.learningRate; }
  get optimizer() { return this._optimizer; }

  // Sets the optimizer's learning rate (an error when it has a scheduler).
  setLearningRate(lr) { this._optimizer.setLearningRate(lr); }

  _checkAndRescaleGrad(scale) { this._optimizer.rescaleGrad = scale; }

  // step(batch_size, ignore_stale_grad=False): rescale_grad = scale / batch_size, reduce the
  // gradients across contexts, update.
  step(...args) {
    const { batchSize, ignoreStaleGrad } = bindArgs(SIGNATURES['Trainer.step'], args);
    this._checkAndRescaleGrad(this._scale / batchSize);
    this._ensureKV();
    if (this._kvstore && this._updateOnKVStore && !ignoreStaleGrad) this._checkStale();
    this._allreduceGrads();
    this._update(ignoreStaleGrad);
  }

  // Sums each parameter's gradients across its contexts (nothing to do on one context).
  allreduceGrads() {
    this._ensureKV();
    if (this._kvstore && this._updateOnKVStore) {
      throw new MXNetError('allreduce_grads() when parameters are updated on kvstore is not supported. '
        + 'Try setting `update_on_kvstore` to False when creating trainer.');
    }
    this._allreduceGrads();
  }

  _allreduceGrads() {
    if (!this._kvstore) return;
    this._params.forEach((p, i) => {
      if (p.gradReq === 'null') return;
      const grads = p.listGrad();
      tidy(() => {
        let sum = grads[0].copy();
        for (let k = 1; k < grads.length; k++) sum = invokeByName('broadcast_add', [sum, grads[k]], {}, sum)[0];
        if (this._updateOnKVStore) {
          // push the summed gradient into the kvstore's updater, pull the weight everywhere
          const data = p.listData();
          this._kvUpdater(i, sum, data[0]);
          for (let k = 1; k < data.length; k++) data[0].copyto(data[k]);
        } else {
          for (const g of grads) sum.copyto(g);
        }
      });
    });
  }

  // update(batch_size, ignore_stale_grad=False): the update half of step() (after allreduceGrads).
  update(...args) {
    const { batchSize, ignoreStaleGrad } = bindArgs(SIGNATURES['Trainer.update'], args);
    this._ensureKV();
    if (this._kvstore && this._updateOnKVStore) {
      throw new MXNetError('update() when parameters are updated on kvstore is not supported. '
        + 'Try setting `update_on_kvstore` to False when creating trainer.');
    }
    this._checkAndRescaleGrad(this._scale / batchSize);
    this._update(ignoreStaleGrad);
  }

  _checkStale() {
    for (const p of this._params) {
      if (p.gradReq === 'null') continue;
      const data = p.listData();
      p.listGrad().forEach((g, k) => {
        if (!isFresh(g)) {
          throw new MXNetError(`Gradient of Parameter \`${p.name}\` on context ${ctxStr(data[k].context)} has not been updated `
            + 'by backward since last `step`. This could mean a bug in your model that made it only use a subset of the '
            + 'Parameters (Blocks) for this iteration. If you are intentionally only using a subset, call step with '
            + 'ignore_stale_grad=True to suppress this warning and skip updating of Parameters with stale gradient');
        }
      });
    }
  }

  _update(ignoreStaleGrad = false) {
    if (!ignoreStaleGrad) this._checkStale();
    if (this._kvstore && this._updateOnKVStore) return;
    const updates = this._updaters.map(() => []);
    this._params.forEach((p, i) => {
      if (p.gradReq === 'null') return;
      const data = p.listData();
      const grads = p.listGrad();
      updates.forEach((upd, k) => {
        if (!ignoreStaleGrad || isFresh(grads[k])) {
          upd.push([i, grads[k], data[k]]);
          grads[k]._freshGrad = false;
        }
      });
    });
    this._updaters.forEach((updater, k) => {
      const upd = updates[k];
      if (upd.length) updater(upd.map((u) => u[0]), upd.map((u) => u[1]), upd.map((u) => u[2]));
    });
  }

  // saveStates(fname): the optimizer and its states (format above); writes fname in Node and
  // returns the bytes.
  saveStates(fname = null) {
    this._ensureKV();
    const bytes = this._updateOnKVStore ? this._kvUpdater.getStates(true) : this._updaters[0].getStates(true);
    if (fname !== null && fname !== undefined) writeFileSync(fname, bytes);
    return bytes;
  }

  // await loadStates(source): restores saveStates' optimizer and states (the parameters' lr_mult
  // and wd_mult stay those of this Trainer's parameters).
  async loadStates(source) {
    const bytes = await readBytes(source);
    this._ensureKV();
    if (this._updateOnKVStore) {
      this._kvUpdater.setStates(bytes);
      this._optimizer = this._kvUpdater.optimizer;
      for (const u of this._updaters) u.optimizer = this._optimizer;
    } else {
      for (const u of this._updaters) {
        u.setStates(bytes);
        u.optimizer = this._updaters[0].optimizer;
      }
      this._optimizer = this._updaters[0].optimizer;
    }
    this._optimizer.paramDict = Object.fromEntries(this._params.map((p, i) => [i, p]));
  }

  // dispose(): frees the optimizer states (momenta, Adam's moments, ...) held for the
  // parameters (new: JS has no reference counting; net.dispose() frees the parameters
  // themselves). The Trainer stays usable: the next step creates fresh states.
  dispose() {
    for (const u of this._updaters) u.dispose();
    if (this._kvUpdater) this._kvUpdater.dispose();
  }
}
