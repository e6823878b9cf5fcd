// mx.metric: each metric against hand-worked values after a couple of updates (MXNet 1.9.1's
// metric.py semantics: what accumulates per update, per pair and per sample), reset / resetLocal
// and the global statistics, get / getNameValue, CompositeEvalMetric, CustomMetric, and create()
// by MXNet's registered names and aliases.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as mx from 'mxnet-wasm';
import { rng, assertClose } from './oracle.mjs';

const { nd, metric } = mx;
const close = (a, b, msg) => assertClose([a], [b], { rtol: 1e-6, atol: 1e-7, msg });
const A = (v) => nd.array(v);

test('Accuracy: argmax along axis 1 when the shapes differ; counts per sample; reset, resetLocal, getGlobal', () => {
  const acc = new metric.Accuracy();
  assert.equal(acc.name, 'accuracy');
  assert.ok(Number.isNaN(acc.get()[1]));
  acc.update([A([0, 1, 1])], [A([[0.3, 0.7], [0, 1], [0.4, 0.6]])]); // argmax 1, 1, 1 -> 2 of 3
  assert.deepEqual(acc.get(), ['accuracy', 2 / 3]);
  acc.update(A([0, 1]), A([[0.9, 0.1], [0.8, 0.2]])); // one NDArray each: 1 of 2
  assert.deepEqual(acc.get(), ['accuracy', 3 / 5]);
  assert.equal(acc.numInst, 5);
  assert.equal(acc.sumMetric, 3);
  assert.equal(acc.num_inst, 5); // Python's attribute names read the same values
  assert.deepEqual(acc.getNameValue(), [['accuracy', 0.6]]);
  assert.deepEqual(acc.get_name_value(), [['accuracy', 0.6]]);
  assert.equal(String(acc), "EvalMetric: {'accuracy': 0.6}");
  // resetLocal keeps the global statistics
  acc.resetLocal();
  assert.ok(Number.isNaN(acc.get()[1]));
  acc.update([A([2, 2])], [A([[0, 0, 1], [1, 0, 0]])]); // 1 of 2
  assert.deepEqual(acc.get(), ['accuracy', 0.5]);
  assert.deepEqual(acc.getGlobal(), ['accuracy', 4 / 7]);
  assert.deepEqual(acc.getGlobalNameValue(), [['accuracy', 4 / 7]]);
  acc.reset();
  assert.ok(Number.isNaN(acc.get()[1]) && Number.isNaN(acc.getGlobal()[1]));
  // predictions shaped like the labels are class ids (truncated to int32)
  acc.update([A([1, 1, 2]), A([0])], [A([1.7, 0, 2]), A([0.2])]);
  assert.deepEqual(acc.get(), ['accuracy', 3 / 4]);
  // axis 0: scores laid out (classes, samples)
  const acc0 = new metric.Accuracy(0);
  acc0.update([A([0, 0])], [A([[0.9, 0.1], [0.1, 0.9]])]);
  assert.deepEqual(acc0.get(), ['accuracy', 0.5]);
  assert.deepEqual(new metric.Accuracy({ axis: 0 }).getConfig(), { axis: 0, metric: 'Accuracy', name: 'accuracy', output_names: null, label_names: null });
  // check_label_shapes: as many labels as predictions
  assert.throws(() => acc.update([A([0])], [A([0]), A([1])]), /Shape of labels 1 does not match shape of predictions 2/);
  assert.throws(() => acc.update(A([0, 1, 1]), A([[0, 1]])), /Shape of labels 3 does not match shape of predictions 1/);
});

test('TopKAccuracy: a sample counts when its label is among the top_k scores; name gets _<k>', () => {
  const preds = A([[0.1, 0.5, 0.4], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]]);
  const labels = A([2, 2, 0]); // top-2 sets {1, 2}, {0, 1}, {2, 1}: only the first holds its label
  const m = new metric.TopKAccuracy(2);
  assert.equal(m.name, 'top_k_accuracy_2');
  m.update([labels], [preds]);
  assert.deepEqual(m.get(), ['top_k_accuracy_2', 1 / 3]);
  m.update([A([2])], [A([[0.1, 0.6, 0.3]])]); // top 2 {1, 2}
  assert.deepEqual(m.get(), ['top_k_accuracy_2', 2 / 4]);
  const m3 = new metric.TopKAccuracy({ top_k: 3 });
  m3.update(labels, preds);
  assert.deepEqual(m3.get(), ['top_k_accuracy_3', 1]);
  assert.equal(m3.topK, 3);
  assert.throws(() => new metric.TopKAccuracy(), /Please use Accuracy if top_k is no more than 1/);
});

test('F1: macro averages each update\'s F1, micro is the F1 of all counts; binary only', () => {
  // update 1: labels 1 0 1 1 0, predicted 1 1 0 1 0 -> tp 2, fp 1, fn 1, tn 1: precision = recall = 2/3, F1 2/3
  const l1 = A([1, 0, 1, 1, 0]);
  const p1 = A([[0.2, 0.8], [0.4, 0.6], [0.9, 0.1], [0.3, 0.7], [0.6, 0.4]]);
  // update 2: labels 0 0 1, predicted 1 0 0 -> tp 0, fp 1, fn 1, tn 1: F1 0
  const l2 = A([0, 0, 1]);
  const p2 = A([[0.1, 0.9], [0.7, 0.3], [0.8, 0.2]]);
  const macro = new metric.F1();
  macro.update([l1], [p1]);
  close(macro.get()[1], 2 / 3);
  macro.update([l2], [p2]);
  close(macro.get()[1], 1 / 3);
  assert.equal(macro.numInst, 2);
  const micro = new metric.F1({ average: 'micro' });
  micro.update([l1], [p1]);
  micro.update([l2], [p2]);
  // tp 2, fp 2, fn 2, tn 2: precision = recall = 1/2
  close(micro.get()[1], 0.5);
  assert.equal(micro.numInst, 8);
  micro.reset();
  assert.ok(Number.isNaN(micro.get()[1]));
  assert.throws(() => macro.update([A([0, 1, 2])], [A([[1, 0], [0, 1], [1, 0]])]), /only supports binary classification/);
});

test('MCC: (tp tn - fp fn) / sqrt of the non-zero margins; macro and micro', () => {
  const l1 = A([1, 0, 1, 1, 0]);
  const p1 = A([[0.2, 0.8], [0.4, 0.6], [0.9, 0.1], [0.3, 0.7], [0.6, 0.4]]); // tp 2 fp 1 fn 1 tn 1
  const l2 = A([0, 0, 1]);
  const p2 = A([[0.1, 0.9], [0.7, 0.3], [0.8, 0.2]]); // tp 0 fp 1 fn 1 tn 1
  const macro = new metric.MCC();
  macro.update([l1], [p1]);
  close(macro.get()[1], (2 * 1 - 1 * 1) / Math.sqrt(3 * 3 * 2 * 2)); // 1/6
  macro.update([l2], [p2]);
  close(macro.get()[1], (1 / 6 + (0 - 1) / Math.sqrt(1 * 1 * 2 * 2)) / 2); // (1/6 - 1/2) / 2
  const micro = new metric.MCC({ average: 'micro' });
  micro.update(l1, p1);
  close(micro.get()[1], 1 / 6);
  micro.update(l2, p2);
  close(micro.get()[1], 0); // tp 2 fp 2 fn 2 tn 2
  // all positive and all predicted positive: the zero margins are left out -> 0
  const all = new metric.MCC();
  all.update([A([1, 1, 1])], [A([[0, 1], [0, 1], [0, 1]])]);
  assert.deepEqual(all.get(), ['mcc', 0]);
});

test('Perplexity: exp of the mean -log p(label), ignore_label left out', () => {
  const preds = A([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]);
  const labels = A([0, 1]);
  const p = new metric.Perplexity(null);
  p.update([labels], [preds]);
  close(p.get()[1], Math.sqrt(1 / (0.5 * 0.8))); // (0.5 * 0.8)^(-1/2)
  p.update([A([1])], [A([[0.75, 0.25]])]);
  close(p.get()[1], (0.5 * 0.8 * 0.25) ** (-1 / 3));
  assert.equal(p.numInst, 3);
  // ignore_label 1: only the first sample counts -> 1 / 0.5
  const pi = new metric.Perplexity({ ignore_label: 1 });
  pi.update(labels, preds);
  close(pi.get()[1], 2);
  assert.equal(pi.numInst, 1);
  // (batch, steps, classes) predictions with (batch, steps) labels, probabilities clipped at 1e-10
  const p3 = new metric.Perplexity(null);
  p3.update([A([[0, 1], [2, 0]])], [A([[[0.5, 0.5, 0], [0.2, 0.4, 0.4]], [[0.1, 0.1, 0.8], [0, 1, 0]]])]);
  close(p3.get()[1], Math.exp(-(Math.log(0.5) + Math.log(0.4) + Math.log(0.8) + Math.log(1e-10)) / 4));
  p3.reset();
  assert.ok(Number.isNaN(p3.get()[1]));
  assert.throws(() => p.update([A([0, 1, 1])], [preds]), /shape mismatch/);
});

test('MAE, MSE, RMSE: one value per label/prediction pair, averaged over the pairs', () => {
  const mae = new metric.MAE(), mse = new metric.MSE(), rmse = new metric.RMSE();
  // pair 1: d = [-0.5, 0, 1]; pair 2: d = [-2, 2]
  for (const m of [mae, mse, rmse]) {
    m.update([A([1, 2, 3])], [A([[1.5], [2], [2]])]); // labels (3,) against (3, 1): both (3, 1)
    m.update(A([0, 0]), A([2, -2]));
  }
  close(mae.get()[1], (0.5 + 2) / 2);
  close(mse.get()[1], ((0.25 + 0 + 1) / 3 + 4) / 2);
  close(rmse.get()[1], (Math.sqrt(1.25 / 3) + 2) / 2);
  assert.deepEqual([mae.name, mse.name, rmse.name], ['mae', 'mse', 'rmse']);
  assert.equal(mse.numInst, 2);
  mse.update([A([1, 1]), A([0])], [A([1, 3]), A([1])]); // two more pairs: 2 and 1
  close(mse.get()[1], ((1.25 / 3) + 4 + 2 + 1) / 4);
});

test('CrossEntropy and NegativeLogLikelihood: the mean of -log(p[label] + eps) per sample', () => {
  const preds = A([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]);
  const labels = A([0, 2]);
  const ce = new metric.CrossEntropy();
  ce.update([labels], [preds]);
  close(ce.get()[1], -(Math.log(0.5) + Math.log(0.8)) / 2);
  ce.update([A([1])], [A([[0.25, 0.5, 0.25]])]);
  close(ce.get()[1], -(Math.log(0.5) + Math.log(0.8) + Math.log(0.5)) / 3);
  assert.equal(ce.name, 'cross-entropy');
  const ce2 = new metric.CrossEntropy(0.1);
  ce2.update(labels, preds);
  close(ce2.get()[1], -(Math.log(0.6) + Math.log(0.9)) / 2);
  const nll = new metric.NegativeLogLikelihood({ eps: 0.1 });
  nll.update([labels], [preds]);
  close(nll.get()[1], -(Math.log(0.6) + Math.log(0.9)) / 2);
  assert.equal(nll.name, 'nll-loss');
  assert.equal(nll.numInst, 2);
});

test('PearsonCorrelation: macro averages corrcoef per pair; micro is the correlation of everything seen', () => {
  const m = new metric.PearsonCorrelation();
  m.update([A([1, 2, 3])], [A([1, 2, 3])]);
  close(m.get()[1], 1);
  m.update([A([1, 2, 3])], [A([3, 2, 1])]);
  close(m.get()[1], 0);
  // label 1 2 3 4, pred 1 3 2 4: deviations +-1.5, +-0.5 -> 4 / 5
  const m2 = new metric.PearsonCorrelation();
  m2.update(A([1, 2, 3, 4]), A([1, 3, 2, 4]));
  close(m2.get()[1], 0.8);
  const micro = new metric.PearsonCorrelation({ average: 'micro' });
  micro.update([A([1, 2])], [A([1, 3])]);
  micro.update([A([3, 4])], [A([2, 4])]);
  close(micro.get()[1], 0.8);
  // random batches: the plain correlation of their concatenation
  const r = rng(31);
  const l = [r.uniform(5), r.uniform(7), r.uniform(3)], p = [r.uniform(5), r.uniform(7), r.uniform(3)];
  const micro2 = new metric.PearsonCorrelation({ average: 'micro' });
  l.forEach((x, i) => micro2.update([nd.array(x)], [nd.array(p[i])]));
  const lx = l.flatMap((x) => Array.from(x)), px = p.flatMap((x) => Array.from(x));
  const mean = (v) => v.reduce((s, x) => s + x, 0) / v.length;
  const ml = mean(lx), mp = mean(px);
  const cov = lx.reduce((s, x, i) => s + (x - ml) * (px[i] - mp), 0);
  const corr = cov / Math.sqrt(lx.reduce((s, x) => s + (x - ml) ** 2, 0) * px.reduce((s, x) => s + (x - mp) ** 2, 0));
  assertClose([micro2.get()[1]], [corr], { rtol: 1e-9, atol: 1e-12 });
  micro2.reset();
  assert.ok(Number.isNaN(micro2.get()[1]));
  assert.throws(() => m.update([A([1, 2])], [A([[1, 2]])]), /Shape of labels \(2,\) does not match shape of predictions \(1, 2\)/);
});

test('PCC: the Matthews correlation of a growing multiclass confusion matrix (binary: MCC)', () => {
  const pcc = new metric.PCC();
  // confusion[pred][label]: (0,0) (2,1) (2,2) (1,2); row sums 1 1 2, column sums 1 1 2, n 4
  // cov_xx = cov_yy = 1*3 + 1*3 + 2*2 = 10; cov_xy = (4 - 1) + (0 - 1) + (4 - 4) = 2
  pcc.update([A([0, 1, 2, 2])], [A([0, 2, 2, 1])]);
  close(pcc.get()[1], 0.2);
  assert.equal(pcc.k, 3);
  // binary scores: the MCC of the same counts (1/6, as above)
  const b = new metric.PCC();
  b.update([A([1, 0, 1, 1, 0])], [A([[0.2, 0.8], [0.4, 0.6], [0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])]);
  close(b.get()[1], 1 / 6);
  b.update([A([0, 0, 1])], [A([[0.1, 0.9], [0.7, 0.3], [0.8, 0.2]])]);
  close(b.get()[1], 0); // the counts of both updates: tp 2 fp 2 fn 2 tn 2
  b.resetLocal();
  assert.ok(Number.isNaN(b.get()[1]));
  close(b.getGlobal()[1], 0);
});

test('Loss (and Torch, Caffe): the mean of all prediction values; labels ignored', () => {
  const m = new metric.Loss();
  m.update(null, [A([1, 2, 3]), A([[4], [5]])]);
  assert.deepEqual(m.get(), ['loss', 3]);
  m.update(null, A([0, 0, 0, 0, 0]));
  assert.deepEqual(m.get(), ['loss', 1.5]);
  assert.equal(new metric.Torch().name, 'torch');
  assert.equal(new metric.Caffe().name, 'caffe');
  assert.ok(new metric.Torch() instanceof metric.Loss);
});

test('CustomMetric and np(): feval(label, pred) on the values returns a value or [sum, count]', () => {
  function meanAbs(label, pred) { return label.reduce((s, l, i) => s + Math.abs(l - pred[i]), 0) / label.length; }
  const c = new metric.CustomMetric(meanAbs);
  assert.equal(c.name, 'meanAbs');
  c.update([A([1, 2])], [A([2, 2])]); // 0.5
  c.update([A([0, 0]), A([1])], [A([2, 0]), A([4])]); // 1 and 3
  assert.deepEqual(c.get(), ['meanAbs', 1.5]);
  // [sum, count]: the number of correct ids over the samples
  const correct = metric.np((label, pred) => [label.filter((l, i) => l === pred[i]).length, label.length], { name: 'hits' });
  correct.update([A([1, 2, 3])], [A([1, 0, 3])]);
  correct.update([A([4])], [A([4])]);
  assert.deepEqual(correct.get(), ['hits', 3 / 4]);
  assert.equal(correct.numInst, 4);
  assert.equal(new metric.CustomMetric((l, p) => 0).name, 'custom(<lambda>)');
  assert.throws(() => c.getConfig(), /CustomMetric cannot be serialized/);
  // allow_extra_outputs: more predictions than labels are zipped to the shorter
  const extra = new metric.CustomMetric(meanAbs, 'extra', true);
  extra.update([A([1])], [A([3]), A([100])]);
  assert.deepEqual(extra.get(), ['extra', 2]);
});

test('CompositeEvalMetric: add, getMetric, get returns [names, values], updateDict, reset', () => {
  const comp = new metric.CompositeEvalMetric();
  comp.add('acc');
  comp.add(new metric.MAE());
  comp.add(metric.create('loss'));
  const labels = [A([0, 1])], preds = [A([[0.2, 0.8], [0.1, 0.9]])];
  comp.update(labels, preds);
  // accuracy 1/2; MAE of (2, 1) labels against (2, 2) scores: |0 - .2| |0 - .8| |1 - .1| |1 - .9| -> 0.5; loss mean 0.5
  const [names, values] = comp.get();
  assert.deepEqual(names, ['accuracy', 'mae', 'loss']);
  assertClose(values, [0.5, 0.5, 0.5], { rtol: 1e-6, atol: 1e-7 });
  assert.equal(comp.getMetric(0).name, 'accuracy');
  assert.equal(comp.getMetric(-1).name, 'loss');
  assert.equal(comp.get_metric(1).name, 'mae');
  assert.throws(() => comp.getMetric(3), /Metric index 3 is out of range 0 and 3/);
  assert.deepEqual(comp.getNameValue().map(([n]) => n), ['accuracy', 'mae', 'loss']);
  comp.reset();
  assert.ok(comp.get()[1].every(Number.isNaN));
  // update_dict picks arrays by label_names / output_names
  const named = new metric.Accuracy({ output_names: ['softmax_output'], label_names: ['softmax_label'] });
  named.updateDict({ softmax_label: A([1, 1]), other: A([0, 0]) }, { softmax_output: A([[0, 1], [1, 0]]), extra: A([[1, 0], [1, 0]]) });
  assert.deepEqual(named.get(), ['accuracy', 0.5]);
  const c2 = new metric.CompositeEvalMetric(['acc', named]);
  c2.update_dict({ softmax_label: A([1, 1]) }, { softmax_output: A([[0, 1], [0, 1]]) });
  assert.deepEqual(c2.get(), [['accuracy', 'accuracy'], [1, 0.75]]);
  // a composite inside a composite flattens into one list
  const outer = metric.create([c2, 'mse']);
  assert.deepEqual(outer.get()[0], ['accuracy', 'accuracy', 'mse']);
});

test('create(): MXNet\'s registered names and aliases, lists, functions, instances, configs', () => {
  const cases = {
    acc: metric.Accuracy, accuracy: metric.Accuracy, ACC: metric.Accuracy, f1: metric.F1, mcc: metric.MCC, mae: metric.MAE,
    mse: metric.MSE, rmse: metric.RMSE, ce: metric.CrossEntropy, crossentropy: metric.CrossEntropy,
    nll_loss: metric.NegativeLogLikelihood, negativeloglikelihood: metric.NegativeLogLikelihood,
    pearsonr: metric.PearsonCorrelation, pearsoncorrelation: metric.PearsonCorrelation, loss: metric.Loss, pcc: metric.PCC,
    torch: metric.Torch, caffe: metric.Caffe, composite: metric.CompositeEvalMetric,
    compositeevalmetric: metric.CompositeEvalMetric,
  };
  for (const [name, cls] of Object.entries(cases)) assert.equal(metric.create(name).constructor, cls, name);
  assert.equal(metric.create('top_k_accuracy', 3).name, 'top_k_accuracy_3');
  assert.equal(metric.create('top_k_acc', { top_k: 5 }).name, 'top_k_accuracy_5');
  assert.ok(metric.create('perplexity', null) instanceof metric.Perplexity);
  assert.equal(metric.create('acc', { name: 'my_acc' }).name, 'my_acc');
  assert.throws(() => metric.create('nosuch'), (e) => e instanceof mx.MXNetError && /nosuch is not registered/.test(e.message));
  const acc = new metric.Accuracy();
  assert.equal(metric.create(acc), acc);
  const comp = metric.create(['acc', 'f1', 'mse']);
  assert.ok(comp instanceof metric.CompositeEvalMetric);
  assert.deepEqual(comp.metrics.map((m) => m.name), ['accuracy', 'f1', 'mse']);
  const custom = metric.create(function hits(l, p) { return l[0] === p[0] ? 1 : 0; });
  assert.ok(custom instanceof metric.CustomMetric);
  assert.equal(custom.name, 'hits');
  // configs: an object with `metric`, or MXNet's JSON forms
  const a0 = metric.create(new metric.Accuracy(0).getConfig());
  assert.ok(a0 instanceof metric.Accuracy);
  assert.equal(a0.axis, 0);
  assert.equal(metric.create('["acc", {"axis": 0}]').axis, 0);
  assert.equal(metric.create('{"metric": "ce", "eps": 0.5}').eps, 0.5);
  const cc = metric.create(metric.create(['acc', 'mae']).getConfig());
  assert.deepEqual(cc.metrics.map((m) => m.constructor), [metric.Accuracy, metric.MAE]);
});

test('a user EvalMetric subclass: register() makes it available to create()', () => {
  class MaxError extends metric.EvalMetric {
    constructor(o) { super('max_error', o); }
    update(labels, preds) {
      [labels, preds] = metric.check_label_shapes(labels, preds, true);
      labels.forEach((l, i) => {
        const lv = l.toArray(), pv = preds[i].toArray();
        this.sumMetric += Math.max(...lv.map((v, k) => Math.abs(v - pv[k])));
        this.numInst += 1;
      });
    }
  }
  metric.register(MaxError);
  metric.alias('maxerr')(MaxError);
  const m = metric.create('maxerr');
  assert.ok(m instanceof MaxError);
  m.update([A([1, 2])], [A([1.5, 4])]);
  m.update(A([0]), A([1]));
  assert.deepEqual(m.get(), ['max_error', 1.5]);
  assert.deepEqual(m.getGlobal(), ['max_error', 1.5]); // no global statistics: get()
  assert.throws(() => metric.register(class NotAMetric {}), /Can only register subclass of EvalMetric/);
  assert.throws(() => new metric.EvalMetric('x').update([], []), /not implemented/);
  assert.throws(() => new metric.Accuracy({ axes: 1 }), /unknown argument 'axes'/);
});
