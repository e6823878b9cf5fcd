// metric.mjs -- mx.metric as MXNet 1.9.1's python/mxnet/metric.py: EvalMetric and the registered
// metrics (Accuracy, TopKAccuracy, F1, MCC, Perplexity, MAE, MSE, RMSE, CrossEntropy,
// NegativeLogLikelihood, PearsonCorrelation, PCC, Loss, Torch, Caffe, CustomMetric), the
// CompositeEvalMetric, and create() by MXNet's registered names and aliases. As MXNet computes its
// metrics in numpy on asnumpy() copies, these compute in float64 JS on host copies of the arrays.
// labels and preds are one NDArray or a list of NDArrays. get() returns [name, value].
//
// Attributes are camelCase (numInst, sumMetric, globalNumInst, globalSumMetric, outputNames,
// labelNames) with Python's snake_case names as accessors of the same values; methods are camelCase
// with Python's snake_case names as aliases (getNameValue / get_name_value, ...).
import { MXNetError } from './core.mjs';
import { NDArray, invokeByName } from './ndarray.mjs';
import { REQUIRED as R, bindArgs, lazySignatures, isPlainObject } from './signature.mjs';
import { pyFloat } from './format.mjs';

// ---- signatures (Python's parameter order and defaults) -------------------------------------------
const NAMES = [['output_names', null, 'array'], ['label_names', null, 'array']];
const SIGNATURES = lazySignatures([
  ['EvalMetric', [['name', R, 'any'], ...NAMES], { kwargs: [['has_global_stats', false, 'bool']] }],
  ['CompositeEvalMetric', [['metrics', null, 'array'], ['name', 'composite', 'str'], ...NAMES]],
  ['Accuracy', [['axis', 1, 'int'], ['name', 'accuracy', 'str'], ...NAMES]],
  ['TopKAccuracy', [['top_k', 1, 'int'], ['name', 'top_k_accuracy', 'str'], ...NAMES]],
  ['F1', [['name', 'f1', 'str'], ...NAMES, ['average', 'macro', 'str']]],
  ['MCC', [['name', 'mcc', 'str'], ...NAMES, ['average', 'macro', 'str']]],
  ['Perplexity', [['ignore_label', R, 'number?'], ['axis', -1, 'int'], ['name', 'perplexity', 'str'], ...NAMES]],
  ['MAE', [['name', 'mae', 'str'], ...NAMES]],
  ['MSE', [['name', 'mse', 'str'], ...NAMES]],
  ['RMSE', [['name', 'rmse', 'str'], ...NAMES]],
  ['CrossEntropy', [['eps', 1e-12, 'number'], ['name', 'cross-entropy', 'str'], ...NAMES]],
  ['NegativeLogLikelihood', [['eps', 1e-12, 'number'], ['name', 'nll-loss', 'str'], ...NAMES]],
  ['PearsonCorrelation', [['name', 'pearsonr', 'str'], ...NAMES, ['average', 'macro', 'str']]],
  ['PCC', [['name', 'pcc', 'str'], ...NAMES, ['has_global_stats', true, 'bool']]],
  ['Loss', [['name', 'loss', 'str'], ...NAMES]],
  ['Torch', [['name', 'torch', 'str'], ...NAMES]],
  ['Caffe', [['name', 'caffe', 'str'], ...NAMES]],
  ['CustomMetric', [['feval', R, 'function'], ['name', null, 'str'], ['allow_extra_outputs', false, 'bool'], ...NAMES]],
  ['np', [['numpy_feval', R, 'function'], ['name', null, 'str'], ['allow_extra_outputs', false, 'bool']]],
], { prefix: 'metric.' });
const bind = (name, args) => bindArgs(SIGNATURES[name], args);

// ---- host copies -------------------------------------------------------------------------------------
const pyTuple = (s) => `(${s.join(', ')}${s.length === 1 ? ',' : ''})`;
const asNd = (x, what) => {
  if (x instanceof NDArray) return x;
  throw new MXNetError(`metric: each ${what} must be an NDArray, got ${x === null ? 'null' : x?.constructor?.name ?? typeof x}`);
};
// {data, shape}: the values as float64 numbers (int64 read as numbers).
function host(x, what = 'array') {
  const t = asNd(x, what).toTypedArray();
  return { data: Float64Array.from(t, Number), shape: x.shape };
}
const toInt = (v) => Math.trunc(v); // numpy's astype('int32') of a float
const len = (x) => x.length; // len() of an NDArray is its first dimension
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

// Python's check_label_shapes(labels, preds, wrap=False, shape=False): the lengths (or, with
// shape, the shapes) must agree; wrap puts a single NDArray in a list.
export function check_label_shapes(labels, preds, wrap = false, shape = false) {
  if (!shape) {
    const l = len(labels), p = len(preds);
    if (l !== p) throw new MXNetError(`Shape of labels ${l} does not match shape of predictions ${p}`);
  } else if (!sameShape(labels.shape, preds.shape)) {
    throw new MXNetError(`Shape of labels ${pyTuple(labels.shape)} does not match shape of predictions ${pyTuple(preds.shape)}`);
  }
  if (wrap) {
    if (labels instanceof NDArray) labels = [labels];
    if (preds instanceof NDArray) preds = [preds];
  }
  return [labels, preds];
}
export const checkLabelShapes = check_label_shapes;
const wrapList = (x) => (x instanceof NDArray ? [x] : Array.from(x));

// numpy's argmax along `axis` (first maximum): flat values over the shape without that axis.
function argmaxHost({ data, shape }, axis) {
  const nd = shape.length;
  const ax = axis < 0 ? axis + nd : axis;
  if (ax < 0 || ax >= nd) throw new MXNetError(`axis ${axis} is out of bounds for array of dimension ${nd}`);
  const n = shape[ax];
  const inner = shape.slice(ax + 1).reduce((a, b) => a * b, 1);
  const outer = shape.slice(0, ax).reduce((a, b) => a * b, 1);
  const out = new Float64Array(outer * inner);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let best = 0, bestV = data[o * n * inner + i];
      for (let k = 1; k < n; k++) {
        const v = data[(o * n + k) * inner + i];
        if (v > bestV || (Number.isNaN(v) && !Number.isNaN(bestV))) { best = k; bestV = v; }
        if (Number.isNaN(bestV)) break;
      }
      out[o * inner + i] = best;
    }
  }
  return out;
}

// numpy broadcasting of two host arrays; returns the flat results of fn(a, b).
function broadcastMap(a, b, fn) {
  const nd = Math.max(a.shape.length, b.shape.length);
  const pad = (s) => [...new Array(nd - s.length).fill(1), ...s];
  const sa = pad(a.shape), sb = pad(b.shape);
  const so = sa.map((d, i) => {
    if (d === sb[i] || sb[i] === 1) return d;
    if (d === 1) return sb[i];
    throw new MXNetError(`operands could not be broadcast together with shapes ${pyTuple(a.shape)} ${pyTuple(b.shape)}`);
  });
  const size = so.reduce((x, y) => x * y, 1);
  const strides = (s) => {
    const st = new Array(nd);
    let acc = 1;
    for (let i = nd - 1; i >= 0; i--) { st[i] = s[i] === 1 ? 0 : acc; acc *= s[i]; }
    return st;
  };
  const ta = strides(sa), tb = strides(sb);
  const out = new Float64Array(size);
  const idx = new Array(nd).fill(0);
  for (let f = 0; f < size; f++) {
    let ia = 0, ib = 0;
    for (let d = 0; d < nd; d++) { ia += idx[d] * ta[d]; ib += idx[d] * tb[d]; }
    out[f] = fn(a.data[ia], b.data[ib]);
    for (let d = nd - 1; d >= 0; d--) { if (++idx[d] < so[d]) break; idx[d] = 0; }
  }
  return out;
}
const mean = (xs) => xs.reduce((s, v) => s + v, 0) / xs.length;
// MAE/MSE/RMSE reshape 1-D labels and predictions to (n, 1) before broadcasting.
const asColumn = (h) => (h.shape.length === 1 ? { data: h.data, shape: [h.shape[0], 1] } : h);

// ---- EvalMetric -------------------------------------------------------------------------------------
// EvalMetric(name, output_names=None, label_names=None, {has_global_stats}): the base class.
// Subclasses define update(labels, preds); get() is [name, sumMetric / numInst].
export class EvalMetric {
  constructor(...args) {
    const a = bind('EvalMetric', args);
    this.name = String(a.name);
    this.outputNames = a.outputNames;
    this.labelNames = a.labelNames;
    this._hasGlobalStats = a.hasGlobalStats;
    this._kwargs = {};
    this.reset();
  }
  toString() {
    const items = this.getNameValue().map(([n, v]) => `'${n}': ${typeof v === 'number' ? pyFloat(v) : String(v)}`);
    return `EvalMetric: {${items.join(', ')}}`;
  }
  // The constructor's arguments by Python name, with the class name under `metric`; create(config)
  // makes an equal metric.
  getConfig() {
    return {
      ...this._kwargs, metric: this.constructor.name, name: this.name, output_names: this.outputNames, label_names: this.labelNames,
    };
  }
  // update_dict(label, pred): dicts (plain objects or Maps) of named arrays, picked by
  // label_names / output_names when given, else all values in order.
  updateDict(label, pred) {
    const pick = (d, names) => {
      const get = (k) => (d instanceof Map ? d.get(k) : d[k]);
      if (names !== null && names !== undefined) {
        return names.map((k) => {
          const v = get(k);
          if (v === undefined) throw new MXNetError(`update_dict: no array named '${k}'`);
          return v;
        });
      }
      return d instanceof Map ? [...d.values()] : Object.values(d);
    };
    this.update(pick(label, this.labelNames), pick(pred, this.outputNames));
  }
  update() { throw new MXNetError(`${this.constructor.name}.update is not implemented`); }
  reset() {
    this.numInst = 0;
    this.sumMetric = 0.0;
    this.globalNumInst = 0;
    this.globalSumMetric = 0.0;
  }
  resetLocal() {
    this.numInst = 0;
    this.sumMetric = 0.0;
  }
  get() {
    if (this.numInst === 0) return [this.name, NaN];
    return [this.name, this.sumMetric / this.numInst];
  }
  getGlobal() {
    if (!this._hasGlobalStats) return this.get();
    if (this.globalNumInst === 0) return [this.name, NaN];
    return [this.name, this.globalSumMetric / this.globalNumInst];
  }
  // [[name, value], ...]
  getNameValue() { return zipNameValue(this.get()); }
  getGlobalNameValue() {
    if (!this._hasGlobalStats) return this.getNameValue();
    return zipNameValue(this.getGlobal());
  }
}
function zipNameValue([name, value]) {
  const names = Array.isArray(name) ? name : [name];
  const values = Array.isArray(value) ? value : [value];
  const n = Math.min(names.length, values.length);
  return Array.from({ length: n }, (_, i) => [names[i], values[i]]);
}
// Python's attribute and method names as aliases of the camelCase ones.
for (const [snake, camel] of [['num_inst', 'numInst'], ['sum_metric', 'sumMetric'], ['global_num_inst', 'globalNumInst'],
  ['global_sum_metric', 'globalSumMetric'], ['output_names', 'outputNames'], ['label_names', 'labelNames']]) {
  Object.defineProperty(EvalMetric.prototype, snake, {
    get() { return this[camel]; },
    set(v) { this[camel] = v; },
    configurable: true,
  });
}
const METHOD_ALIASES = [['get_config', 'getConfig'], ['update_dict', 'updateDict'], ['reset_local', 'resetLocal'],
  ['get_global', 'getGlobal'], ['get_name_value', 'getNameValue'], ['get_global_name_value', 'getGlobalNameValue']];
for (const [snake, camel] of METHOD_ALIASES) {
  Object.defineProperty(EvalMetric.prototype, snake, {
    value(...a) { return this[camel](...a); }, writable: true, configurable: true,
  });
}

// ---- registry -----------------------------------------------------------------------------------
const REGISTRY = new Map();
// register(klass, name = klass.name): registers an EvalMetric subclass for create() under its
// lower-cased name; returns the class.
export function register(klass, name = null) {
  if (!(typeof klass === 'function' && (klass === EvalMetric || klass.prototype instanceof EvalMetric))) {
    throw new MXNetError('Can only register subclass of EvalMetric');
  }
  const key = String(name ?? klass.name).toLowerCase();
  if (REGISTRY.has(key) && REGISTRY.get(key) !== klass) {
    console.warn(`New metric ${klass.name} registered with name ${key} is overriding existing metric ${REGISTRY.get(key).name}`);
  }
  REGISTRY.set(key, klass);
  return klass;
}
// alias(...names)(klass): registers klass under more names (Python's @alias decorator).
export function alias(...aliases) {
  return (klass) => { for (const a of aliases) register(klass, a); return klass; };
}

// create(metric, ...args): a registered name or alias ('acc', 'top_k_accuracy', 'f1', 'ce', ...;
// case-insensitive; a JSON '[name, {kwargs}]' or '{"metric": name, ...}' string), a config object
// {metric: name, ...kwargs}, an EvalMetric (returned as is), a list (a CompositeEvalMetric of each)
// or a function feval(label, pred) (a CustomMetric). args go to the metric's constructor.
export function create(metric, ...args) {
  if (metric instanceof EvalMetric) {
    if (args.length) throw new MXNetError('metric is already an instance. Additional arguments are invalid');
    return metric;
  }
  if (typeof metric === 'function') {
    // an EvalMetric class is constructed; any other function is a CustomMetric's feval
    if (metric === EvalMetric || metric.prototype instanceof EvalMetric) return new metric(...args);
    return new CustomMetric(metric, ...args);
  }
  if (Array.isArray(metric)) {
    const composite = new CompositeEvalMetric();
    for (const child of metric) composite.add(create(child, ...args));
    return composite;
  }
  if (isPlainObject(metric) || metric instanceof Map) {
    const kwargs = metric instanceof Map ? Object.fromEntries(metric) : { ...metric };
    const name = kwargs.metric;
    delete kwargs.metric;
    if (name === undefined) throw new MXNetError("metric.create: the config has no 'metric' entry");
    return Object.keys(kwargs).length ? create(name, ...args, kwargs) : create(name, ...args);
  }
  if (typeof metric !== 'string') throw new MXNetError('metric must be of string type');
  if (metric.startsWith('[')) {
    if (args.length) throw new MXNetError('metric.create: a JSON config takes no further arguments');
    const [name, kwargs] = JSON.parse(metric);
    return kwargs && Object.keys(kwargs).length ? create(name, kwargs) : create(name);
  }
  if (metric.startsWith('{')) {
    if (args.length) throw new MXNetError('metric.create: a JSON config takes no further arguments');
    return create(JSON.parse(metric));
  }
  const key = metric.toLowerCase();
  const klass = REGISTRY.get(key);
  if (!klass) throw new MXNetError(`${key} is not registered. Please register with metric.register first`);
  return new klass(...args);
}

// ---- CompositeEvalMetric ----------------------------------------------------------------------------
// CompositeEvalMetric(metrics=None, name='composite', output_names=None, label_names=None):
// updates every child metric; get() returns [[names...], [values...]].
export class CompositeEvalMetric extends EvalMetric {
  constructor(...args) {
    const a = bind('CompositeEvalMetric', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.metrics = (a.metrics ?? []).map((m) => create(m));
  }
  add(metric) { this.metrics.push(create(metric)); }
  getMetric(index) {
    const n = this.metrics.length;
    const i = Number.isInteger(index) && index < 0 ? index + n : index;
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new MXNetError(`Metric index ${index} is out of range 0 and ${n}`);
    return this.metrics[i];
  }
  updateDict(labels, preds) {
    const filter = (d, names) => {
      if (names === null || names === undefined) return d;
      const entries = d instanceof Map ? [...d.entries()] : Object.entries(d);
      return new Map(entries.filter(([k]) => names.includes(k)));
    };
    labels = filter(labels, this.labelNames);
    preds = filter(preds, this.outputNames);
    for (const m of this.metrics) m.updateDict(labels, preds);
  }
  update(labels, preds) { for (const m of this.metrics) m.update(labels, preds); }
  reset() { for (const m of this.metrics ?? []) m.reset(); }
  resetLocal() { for (const m of this.metrics ?? []) m.resetLocal(); }
  _collect(method) {
    const names = [], values = [];
    for (const m of this.metrics) {
      const [name, value] = m[method]();
      names.push(...(Array.isArray(name) ? name : [name]));
      values.push(...(Array.isArray(value) ? value : [value]));
    }
    return [names, values];
  }
  get() { return this._collect('get'); }
  getGlobal() { return this._collect('getGlobal'); }
  getConfig() { return { ...super.getConfig(), metrics: this.metrics.map((m) => m.getConfig()) }; }
}
Object.defineProperty(CompositeEvalMetric.prototype, 'get_metric', {
  value(i) { return this.getMetric(i); }, writable: true, configurable: true,
});

// ---- classification ------------------------------------------------------------------------------------
// Accuracy(axis=1, name='accuracy'): predictions whose shape differs from the labels' are
// class scores, reduced by argmax along `axis`; both are compared as int32.
export class Accuracy extends EvalMetric {
  constructor(...args) {
    const a = bind('Accuracy', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.axis = a.axis;
    this._kwargs = { axis: a.axis };
  }
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) {
      const label = asNd(labels[i], 'label');
      let predLabel = asNd(preds[i], 'prediction');
      let p;
      if (!sameShape(predLabel.shape, label.shape)) {
        predLabel = invokeByName('argmax', [predLabel], { axis: this.axis })[0];
        try { p = host(predLabel, 'prediction').data; } finally { predLabel.dispose(); }
      } else {
        p = host(predLabel, 'prediction').data;
      }
      const l = host(label, 'label').data;
      check_label_shapes(l, p);
      let correct = 0;
      for (let k = 0; k < l.length; k++) if (toInt(p[k]) === toInt(l[k])) correct++;
      this.sumMetric += correct;
      this.globalSumMetric += correct;
      this.numInst += p.length;
      this.globalNumInst += p.length;
    }
  }
}

// TopKAccuracy(top_k=1, name='top_k_accuracy'): a sample counts when its label is among the
// top_k highest scores (top_k > 1; the name gets '_<top_k>').
export class TopKAccuracy extends EvalMetric {
  constructor(...args) {
    const a = bind('TopKAccuracy', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.topK = a.topK;
    this._kwargs = { top_k: a.topK };
    if (!(this.topK > 1)) throw new MXNetError('Please use Accuracy if top_k is no more than 1');
    this.name += `_${this.topK}`;
  }
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) {
      const pred = host(preds[i], 'prediction');
      if (pred.shape.length > 2) throw new MXNetError('Predictions should be no more than 2 dims');
      const label = host(labels[i], 'label').data.map(toInt);
      const numSamples = pred.shape[0];
      // numpy.argpartition(pred, -top_k) puts the top_k largest last; a stable ascending argsort is
      // one such partition (among equal scores the later index ranks higher; numpy leaves ties open)
      const order = (row) => Array.from(row.keys()).sort((x, y) => (row[x] - row[y]) || (x - y));
      if (pred.shape.length === 1) {
        check_label_shapes(label, pred.data);
        const part = order(pred.data);
        let c = 0;
        for (let k = 0; k < part.length; k++) if (part[k] === label[k]) c++;
        this.sumMetric += c; // (MXNet adds no global count here)
      } else {
        check_label_shapes(label, { length: numSamples });
        const numClasses = pred.shape[1];
        const topK = Math.min(numClasses, this.topK);
        let c = 0;
        for (let r = 0; r < numSamples; r++) {
          const part = order(pred.data.subarray(r * numClasses, (r + 1) * numClasses));
          for (let j = 0; j < topK; j++) if (part[numClasses - 1 - j] === label[r]) c++;
        }
        this.sumMetric += c;
        this.globalSumMetric += c;
      }
      this.numInst += numSamples;
      this.globalNumInst += numSamples;
    }
  }
}
Object.defineProperty(TopKAccuracy.prototype, 'top_k', { get() { return this.topK; }, configurable: true });

// The binary confusion counts behind F1 and MCC (local and global); the predicted class is the
// argmax along axis 1, class 1 is positive.
class BinaryClassificationMetrics {
  constructor() { this.resetStats(); }
  updateBinaryStats(label, pred) {
    const p = host(pred, 'prediction');
    const l = host(label, 'label').data.map(toInt);
    if (p.shape.length < 2) throw new MXNetError(`axis 1 is out of bounds for array of dimension ${p.shape.length}`);
    const predLabel = argmaxHost(p, 1);
    check_label_shapes(l, { length: p.shape[0] });
    if (predLabel.length !== l.length) {
      throw new MXNetError(`operands could not be broadcast together with shapes (${predLabel.length},) (${l.length},)`);
    }
    if (new Set(l).size > 2) throw new MXNetError('_BinaryClassificationMetrics currently only supports binary classification.');
    let tp = 0, fp = 0, fn = 0, tn = 0;
    for (let k = 0; k < l.length; k++) {
      const pt = predLabel[k] === 1, lt = l[k] === 1;
      if (pt && lt) tp++;
      else if (pt) fp++;
      else if (lt) fn++;
      else tn++;
    }
    this.truePositives += tp; this.globalTruePositives += tp;
    this.falsePositives += fp; this.globalFalsePositives += fp;
    this.falseNegatives += fn; this.globalFalseNegatives += fn;
    this.trueNegatives += tn; this.globalTrueNegatives += tn;
  }
  static _precision(tp, fp) { return tp + fp > 0 ? tp / (tp + fp) : 0; }
  static _fscore(p, r) { return p + r > 0 ? (2 * p * r) / (p + r) : 0; }
  get precision() { return BinaryClassificationMetrics._precision(this.truePositives, this.falsePositives); }
  get globalPrecision() { return BinaryClassificationMetrics._precision(this.globalTruePositives, this.globalFalsePositives); }
  get recall() { return BinaryClassificationMetrics._precision(this.truePositives, this.falseNegatives); }
  get globalRecall() { return BinaryClassificationMetrics._precision(this.globalTruePositives, this.globalFalseNegatives); }
  get fscore() { return BinaryClassificationMetrics._fscore(this.precision, this.recall); }
  get globalFscore() { return BinaryClassificationMetrics._fscore(this.globalPrecision, this.globalRecall); }
  // Matthews correlation; zero factors of the denominator are left out, as MXNet does.
  matthewscc(useGlobal = false) {
    const [tp, fp, fn, tn] = useGlobal
      ? [this.globalTruePositives, this.globalFalsePositives, this.globalFalseNegatives, this.globalTrueNegatives]
      : [this.truePositives, this.falsePositives, this.falseNegatives, this.trueNegatives];
    if (!(tp + fp + fn + tn)) return 0;
    let denom = 1;
    for (const t of [tp + fp, tp + fn, tn + fp, tn + fn]) if (t !== 0) denom *= t;
    return (tp * tn - fp * fn) / Math.sqrt(denom);
  }
  get totalExamples() { return this.falseNegatives + this.falsePositives + this.trueNegatives + this.truePositives; }
  get globalTotalExamples() {
    return this.globalFalseNegatives + this.globalFalsePositives + this.globalTrueNegatives + this.globalTruePositives;
  }
  localResetStats() {
    this.falsePositives = 0; this.falseNegatives = 0; this.truePositives = 0; this.trueNegatives = 0;
  }
  resetStats() {
    this.localResetStats();
    this.globalFalsePositives = 0; this.globalFalseNegatives = 0; this.globalTruePositives = 0; this.globalTrueNegatives = 0;
  }
}

// F1(name='f1', average='macro'): 'macro' averages each update's F1 score; 'micro' is the F1 of
// the counts over all updates.
export class F1 extends EvalMetric {
  constructor(...args) {
    const a = bind('F1', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.average = a.average;
  }
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) this.metrics.updateBinaryStats(labels[i], preds[i]);
    if (this.average === 'macro') {
      this.sumMetric += this.metrics.fscore;
      this.globalSumMetric += this.metrics.globalFscore;
      this.numInst += 1;
      this.globalNumInst += 1;
      this.metrics.resetStats();
    } else {
      this.sumMetric = this.metrics.fscore * this.metrics.totalExamples;
      this.globalSumMetric = this.metrics.globalFscore * this.metrics.globalTotalExamples;
      this.numInst = this.metrics.totalExamples;
      this.globalNumInst = this.metrics.globalTotalExamples;
    }
  }
  reset() {
    this.sumMetric = 0;
    this.numInst = 0;
    this.globalNumInst = 0;
    this.globalSumMetric = 0;
    if (!this.metrics) this.metrics = new BinaryClassificationMetrics();
    this.metrics.resetStats();
  }
  resetLocal() {
    this.sumMetric = 0;
    this.numInst = 0;
    this.metrics.localResetStats();
  }
}

// MCC(name='mcc', average='macro'): Matthews correlation coefficient of binary predictions.
export class MCC extends EvalMetric {
  constructor(...args) {
    const a = bind('MCC', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this._average = a.average;
  }
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) this._metrics.updateBinaryStats(labels[i], preds[i]);
    if (this._average === 'macro') {
      this.sumMetric += this._metrics.matthewscc();
      this.globalSumMetric += this._metrics.matthewscc(true);
      this.numInst += 1;
      this.globalNumInst += 1;
      this._metrics.resetStats();
    } else {
      this.sumMetric = this._metrics.matthewscc() * this._metrics.totalExamples;
      this.globalSumMetric = this._metrics.matthewscc(true) * this._metrics.globalTotalExamples;
      this.numInst = this._metrics.totalExamples;
      this.globalNumInst = this._metrics.globalTotalExamples;
    }
  }
  reset() {
    this.sumMetric = 0;
    this.numInst = 0;
    this.globalSumMetric = 0;
    this.globalNumInst = 0;
    if (!this._metrics) this._metrics = new BinaryClassificationMetrics();
    this._metrics.resetStats();
  }
  resetLocal() {
    this.sumMetric = 0;
    this.numInst = 0;
    this._metrics.localResetStats();
  }
}

// Perplexity(ignore_label, axis=-1, name='perplexity'): exp of the mean negative log of the
// probability each label gets (picked along `axis`, clipped to [1e-10, ...]); labels equal to
// ignore_label count for nothing.
export class Perplexity extends EvalMetric {
  constructor(...args) {
    const a = bind('Perplexity', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.ignoreLabel = a.ignoreLabel;
    this.axis = a.axis;
    this._kwargs = { ignore_label: a.ignoreLabel };
  }
  update(labels, preds) {
    labels = wrapList(labels);
    preds = wrapList(preds);
    if (labels.length !== preds.length) throw new MXNetError(`Perplexity: ${labels.length} labels for ${preds.length} predictions`);
    let loss = 0;
    let num = 0;
    for (let i = 0; i < labels.length; i++) {
      const label = host(labels[i], 'label');
      const pred = host(preds[i], 'prediction');
      const ps = pred.shape;
      if (label.data.length !== pred.data.length / ps[ps.length - 1]) {
        throw new MXNetError(`shape mismatch: ${pyTuple(label.shape)} vs. ${pyTuple(ps)}`);
      }
      // pick(pred, label, axis) with mode 'clip'
      const ax = this.axis < 0 ? this.axis + ps.length : this.axis;
      if (ax < 0 || ax >= ps.length) throw new MXNetError(`Perplexity: axis ${this.axis} is out of range for predictions of shape ${pyTuple(ps)}`);
      const n = ps[ax];
      const inner = ps.slice(ax + 1).reduce((x, y) => x * y, 1);
      const outer = ps.slice(0, ax).reduce((x, y) => x * y, 1);
      if (outer * inner !== label.data.length) throw new MXNetError(`shape mismatch: ${pyTuple(label.shape)} vs. ${pyTuple(ps)}`);
      for (let o = 0; o < outer; o++) {
        for (let j = 0; j < inner; j++) {
          const lv = label.data[o * inner + j];
          const idx = Math.min(Math.max(toInt(lv), 0), n - 1);
          let p = pred.data[(o * n + idx) * inner + j];
          if (this.ignoreLabel !== null && this.ignoreLabel !== undefined) {
            const ignore = lv === this.ignoreLabel ? 1 : 0;
            num -= ignore;
            p = p * (1 - ignore) + ignore;
          }
          loss -= Math.log(Math.max(1e-10, p));
        }
      }
      num += outer * inner;
    }
    this.sumMetric += loss;
    this.globalSumMetric += loss;
    this.numInst += num;
    this.globalNumInst += num;
  }
  get() {
    if (this.numInst === 0) return [this.name, NaN];
    return [this.name, Math.exp(this.sumMetric / this.numInst)];
  }
  getGlobal() {
    if (this.globalNumInst === 0) return [this.name, NaN];
    return [this.name, Math.exp(this.globalSumMetric / this.globalNumInst)];
  }
}

// ---- regression ------------------------------------------------------------------------------------
// MAE, MSE, RMSE: per update (and per label/prediction pair) the mean of |d|, d^2, or
// sqrt(mean d^2); get() averages these over the pairs seen.
class _Regression extends EvalMetric {
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) {
      const label = asColumn(host(labels[i], 'label'));
      const pred = asColumn(host(preds[i], 'prediction'));
      const v = this._value(broadcastMap(label, pred, (l, p) => l - p));
      this.sumMetric += v;
      this.globalSumMetric += v;
      this.numInst += 1;
      this.globalNumInst += 1;
    }
  }
}
export class MAE extends _Regression {
  constructor(...args) {
    const a = bind('MAE', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
  }
  _value(d) { return mean(d.map(Math.abs)); }
}
export class MSE extends _Regression {
  constructor(...args) {
    const a = bind('MSE', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
  }
  _value(d) { return mean(d.map((x) => x ** 2)); }
}
export class RMSE extends _Regression {
  constructor(...args) {
    const a = bind('RMSE', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
  }
  _value(d) { return Math.sqrt(mean(d.map((x) => x ** 2))); }
}

// ---- likelihood ------------------------------------------------------------------------------------
// Sum of -log(pred[i, label[i]] + eps) over the samples; get() is the mean per sample.
class _Likelihood extends EvalMetric {
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) {
      const label = host(labels[i], 'label').data;
      const pred = host(preds[i], 'prediction');
      const num = pred.shape[0];
      if (label.length !== num) throw new MXNetError(`${this.constructor.name}: ${label.length} labels for ${num} predictions`);
      if (pred.shape.length < 2) throw new MXNetError('too many indices for array: predictions must have a class axis');
      const classes = pred.shape[1];
      const inner = pred.shape.slice(2).reduce((x, y) => x * y, 1);
      let s = 0;
      for (let r = 0; r < num; r++) {
        let c = toInt(label[r]);
        if (c < -classes || c >= classes) throw new MXNetError(`index ${c} is out of bounds for axis 1 with size ${classes}`);
        if (c < 0) c += classes;
        for (let k = 0; k < inner; k++) s += -Math.log(pred.data[(r * classes + c) * inner + k] + this.eps);
      }
      this.sumMetric += s;
      this.globalSumMetric += s;
      this.numInst += num;
      this.globalNumInst += num;
    }
  }
}
// CrossEntropy(eps=1e-12, name='cross-entropy'): predictions are probabilities.
export class CrossEntropy extends _Likelihood {
  constructor(...args) {
    const a = bind('CrossEntropy', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.eps = a.eps;
    this._kwargs = { eps: a.eps };
  }
}
// NegativeLogLikelihood(eps=1e-12, name='nll-loss').
export class NegativeLogLikelihood extends _Likelihood {
  constructor(...args) {
    const a = bind('NegativeLogLikelihood', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.eps = a.eps;
    this._kwargs = { eps: a.eps };
  }
}

// ---- correlation ------------------------------------------------------------------------------------
// PearsonCorrelation(name='pearsonr', average='macro'): 'macro' averages numpy.corrcoef(pred,
// label)[0, 1] over the pairs; 'micro' is the correlation of everything seen, kept with Welford's
// online sums as MXNet does.
export class PearsonCorrelation extends EvalMetric {
  constructor(...args) {
    const a = bind('PearsonCorrelation', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this.average = a.average;
    if (this.average === 'micro') this.resetMicro();
  }
  resetMicro() {
    this._sseP = 0; this._meanP = 0; this._sseL = 0; this._meanL = 0;
    this._predNums = 0; this._labelNums = 0; this._conv = 0;
  }
  reset() {
    super.reset();
    if (this.average === 'micro') this.resetMicro();
  }
  static _updateVariance(values, count, m, m2) {
    count += values.length;
    const delta = values.map((v) => v - m);
    m += delta.reduce((s, d) => s + d / count, 0);
    m2 += values.reduce((s, v, i) => s + delta[i] * (v - m), 0);
    return [count, m, m2];
  }
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) {
      check_label_shapes(labels[i], preds[i], false, true);
      const label = host(labels[i], 'label').data;
      const pred = host(preds[i], 'prediction').data;
      if (this.average === 'macro') {
        const r = corrcoef(pred, label);
        this.sumMetric += r;
        this.globalSumMetric += r;
        this.numInst += 1;
        this.globalNumInst += 1;
      } else {
        this.globalNumInst += 1;
        this.numInst += 1;
        [this._labelNums, this._meanL, this._sseL] = PearsonCorrelation._updateVariance(label, this._labelNums, this._meanL, this._sseL);
        const mL = this._meanL, mP = this._meanP;
        this._conv += label.reduce((s, l, k) => s + (l - mL) * (pred[k] - mP), 0);
        [this._predNums, this._meanP, this._sseP] = PearsonCorrelation._updateVariance(pred, this._predNums, this._meanP, this._sseP);
      }
    }
  }
  get() {
    if (this.numInst === 0) return [this.name, NaN];
    if (this.average === 'macro') return [this.name, this.sumMetric / this.numInst];
    const n = this._labelNums;
    return [this.name, this._conv / ((n - 1) * Math.sqrt(this._sseP / (n - 1)) * Math.sqrt(this._sseL / (n - 1)))];
  }
}
// numpy.corrcoef(x, y)[0, 1], clipped to [-1, 1] as numpy does.
function corrcoef(x, y) {
  const n = x.length;
  const mx = x.reduce((s, v) => s + v, 0) / n, my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0, sxx = 0, syy = 0;
  for (let k = 0; k < n; k++) {
    const dx = x[k] - mx, dy = y[k] - my;
    sxy += dx * dy; sxx += dx * dx; syy += dy * dy;
  }
  const r = sxy / Math.sqrt(sxx * syy);
  return Number.isNaN(r) ? r : Math.min(1, Math.max(-1, r));
}

// PCC(name='pcc'): the multiclass Matthews correlation of a growing confusion matrix (classes
// from the labels and the argmax of the predictions, or the predictions themselves when their
// shape is the labels').
export class PCC extends EvalMetric {
  constructor(...args) {
    const a = bind('PCC', args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: a.hasGlobalStats });
  }
  _grow(inc) {
    const pad = (m) => [...m.map((row) => [...row, ...new Array(inc).fill(0)]),
      ...Array.from({ length: inc }, () => new Array(this.k + inc).fill(0))];
    this.lcm = pad(this.lcm);
    this.gcm = pad(this.gcm);
    this.k += inc;
  }
  static _calcMcc(cmat) {
    const k = cmat.length;
    let n = 0;
    const x = new Array(k).fill(0), y = new Array(k).fill(0);
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) { n += cmat[i][j]; x[i] += cmat[i][j]; y[j] += cmat[i][j]; }
    const covXX = x.reduce((s, v) => s + v * (n - v), 0);
    const covYY = y.reduce((s, v) => s + v * (n - v), 0);
    if (covXX === 0 || covYY === 0) return NaN;
    let covXY = 0;
    for (let i = 0; i < k; i++) covXY += cmat[i][i] * n - x[i] * y[i];
    return covXY / (covXX * covYY) ** 0.5;
  }
  update(labels, preds) {
    [labels, preds] = check_label_shapes(labels, preds, true);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) {
      const label = host(labels[i], 'label').data.map(toInt);
      const p = host(preds[i], 'prediction');
      const pred = sameShape(p.shape, asNd(labels[i], 'label').shape) ? p.data.map(toInt) : argmaxHost(p, 1);
      let n = -Infinity;
      for (const v of pred) if (v > n) n = v;
      for (const v of label) if (v > n) n = v;
      if (n >= this.k) this._grow(n + 1 - this.k);
      const count = Math.min(pred.length, label.length);
      for (let s = 0; s < count; s++) {
        const r = pred[s] < 0 ? pred[s] + this.k : pred[s], c = label[s] < 0 ? label[s] + this.k : label[s];
        this.lcm[r][c] += 1;
        this.gcm[r][c] += 1;
      }
    }
    this.numInst += 1;
    this.globalNumInst += 1;
  }
  get sumMetric() { return PCC._calcMcc(this.lcm) * this.numInst; }
  get globalSumMetric() { return PCC._calcMcc(this.gcm) * this.globalNumInst; }
  reset() {
    if (this.k === undefined) this.k = 2;
    this.globalNumInst = 0;
    this.gcm = Array.from({ length: this.k }, () => new Array(this.k).fill(0));
    this.resetLocal();
  }
  resetLocal() {
    this.numInst = 0;
    this.lcm = Array.from({ length: this.k }, () => new Array(this.k).fill(0));
  }
}

// ---- losses and custom metrics --------------------------------------------------------------------------
// Loss(name='loss'): the mean of the predictions (a loss's outputs); labels are ignored.
export class Loss extends EvalMetric {
  constructor(...args) {
    const sigName = new.target === Torch ? 'Torch' : new.target === Caffe ? 'Caffe' : 'Loss';
    const a = bind(sigName, args);
    super(a.name, a.outputNames, a.labelNames, { hasGlobalStats: true });
  }
  update(_, preds) {
    for (const pred of wrapList(preds)) {
      const v = host(pred, 'prediction').data;
      const loss = v.reduce((s, x) => s + x, 0);
      this.sumMetric += loss;
      this.globalSumMetric += loss;
      this.numInst += v.length;
      this.globalNumInst += v.length;
    }
  }
}
// Torch(name='torch') and Caffe(name='caffe'): Loss under the names of those plugins' outputs.
export class Torch extends Loss {}
export class Caffe extends Loss {}

// CustomMetric(feval, name=None, allow_extra_outputs=False): feval(label, pred) on each pair's
// values (nested arrays, as asnumpy()) returns a number (one instance) or [sum, count].
export class CustomMetric extends EvalMetric {
  constructor(...args) {
    const a = bind('CustomMetric', args);
    let name = a.name;
    if (name === null) name = a.feval.name || 'custom(<lambda>)';
    super(name, a.outputNames, a.labelNames, { hasGlobalStats: true });
    this._feval = a.feval;
    this._allowExtraOutputs = a.allowExtraOutputs;
    this._kwargs = { feval: a.feval, allow_extra_outputs: a.allowExtraOutputs };
  }
  update(labels, preds) {
    if (!this._allowExtraOutputs) [labels, preds] = check_label_shapes(labels, preds, true);
    labels = wrapList(labels);
    preds = wrapList(preds);
    for (let i = 0; i < Math.min(labels.length, preds.length); i++) {
      const label = labels[i].asnumpy();
      const pred = preds[i].asnumpy();
      const reval = this._feval(label, pred);
      if (Array.isArray(reval)) {
        const [sum, num] = reval;
        this.sumMetric += sum;
        this.globalSumMetric += sum;
        this.numInst += num;
        this.globalNumInst += num;
      } else {
        this.sumMetric += reval;
        this.globalSumMetric += reval;
        this.numInst += 1;
        this.globalNumInst += 1;
      }
    }
  }
  getConfig() { throw new MXNetError('CustomMetric cannot be serialized'); }
}

// np(numpy_feval, name=None, allow_extra_outputs=False): a CustomMetric of a function of the
// label and prediction values.
export function np(...args) {
  const a = bind('np', args);
  return new CustomMetric(a.numpyFeval, a.name, a.allowExtraOutputs);
}

// MXNet's registered names (the lower-cased class names) and aliases.
register(CompositeEvalMetric); alias('composite')(CompositeEvalMetric);
register(Accuracy); alias('acc')(Accuracy);
register(TopKAccuracy); alias('top_k_accuracy', 'top_k_acc')(TopKAccuracy);
register(F1);
register(MCC);
register(Perplexity);
register(MAE);
register(MSE);
register(RMSE);
register(CrossEntropy); alias('ce')(CrossEntropy);
register(NegativeLogLikelihood); alias('nll_loss')(NegativeLogLikelihood);
register(PearsonCorrelation); alias('pearsonr')(PearsonCorrelation);
register(PCC);
register(Loss);
register(Torch);
register(Caffe);
register(CustomMetric);
