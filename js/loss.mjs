// loss.mjs -- gluon.loss as MXNet 1.9.1's python/mxnet/gluon/loss.py: every loss is a HybridBlock
// whose hybridForward(F, pred, label, sampleWeight = null, ...) uses the same F operators as
// Gluon's hybrid_forward (_apply_weighting, _reshape_like, F.mean(loss, axis=batch_axis,
// exclude=True)), so a loss runs imperatively, hybridized and under autograd. `loss(output, label)`
// gives one value per sample (the batch axis kept, the other axes averaged or summed as Gluon).
// Constructors take Python's parameters positionally or in one options object (snake or camel).

import { MXNetError } from './core.mjs';
import { NDArray, tidy } from './ndarray.mjs';
import { HybridBlock } from './block.mjs';
import { REQUIRED as R, bindArgs, lazySignatures } from './signature.mjs';
import { isRecording } from './autograd.mjs';
import { pyFloat } from './format.mjs';

// ---- signatures (Python's parameter order and defaults; Block's **kwargs: prefix, params) --------
const BLOCK_KW = [['prefix', null, 'str'], ['params', null, 'params']];
const W = (d = null) => ['weight', d, 'number'];
const BA = ['batch_axis', 0, 'int'];
const SIGNATURES = lazySignatures([
  ['Loss', [['weight', R, 'number?'], ['batch_axis', R, 'int']]],
  ['L2Loss', [W(1.0), BA]],
  ['L1Loss', [W(), BA]],
  ['SigmoidBinaryCrossEntropyLoss', [['from_sigmoid', false, 'bool'], W(), BA]],
  ['SoftmaxCrossEntropyLoss', [['axis', -1, 'int'], ['sparse_label', true, 'bool'], ['from_logits', false, 'bool'], W(), BA]],
  ['KLDivLoss', [['from_logits', true, 'bool'], ['axis', -1, 'int'], W(), BA]],
  ['HuberLoss', [['rho', 1, 'number'], W(), BA]],
  ['HingeLoss', [['margin', 1, 'number'], W(), BA]],
  ['SquaredHingeLoss', [['margin', 1, 'number'], W(), BA]],
  ['LogisticLoss', [W(), BA, ['label_format', 'signed', 'str']]],
  ['TripletLoss', [['margin', 1, 'number'], W(), BA]],
  ['PoissonNLLLoss', [W(), ['from_logits', true, 'bool'], BA, ['compute_full', false, 'bool']]],
  ['CosineEmbeddingLoss', [W(), BA, ['margin', 0, 'number']]],
  ['SDMLLoss', [['smoothing_parameter', 0.3, 'number'], W(1.0), BA]],
  ['CTCLoss', [['layout', 'NTC', 'str'], ['label_layout', 'NT', 'str'], W()]],
], { prefix: 'gluon.loss.', common: { kwargs: BLOCK_KW } });

const bind = (name, args) => bindArgs(SIGNATURES[name], args);
const blockKw = (a) => ({ prefix: a.prefix, params: a.params });
const given = (v) => v !== null && v !== undefined;

// _apply_weighting: per-sample weights broadcast-multiplied in, then the global scalar weight.
function applyWeighting(F, loss, weight = null, sampleWeight = null) {
  if (given(sampleWeight)) loss = F.broadcast_mul(loss, sampleWeight);
  if (given(weight)) {
    if (typeof weight !== 'number') throw new MXNetError('weight must be a number');
    loss = loss.mul(weight);
  }
  return loss;
}
// _reshape_like: an NDArray is reshaped to y's shape; a Symbol goes through reshape_like.
function reshapeLike(F, x, y) {
  return x instanceof NDArray ? x.reshape(y.shape) : F.reshape_like(x, y);
}
const softrelu = (F, x) => F.Activation(x, { act_type: 'softrelu' });

// ---- Loss ---------------------------------------------------------------------------------------------
// Loss(weight, batch_axis, {prefix, params}): the base class; subclasses define hybridForward.
export class Loss extends HybridBlock {
  constructor(...args) {
    const a = bind('Loss', args);
    super(blockKw(a));
    this._weight = a.weight;
    this._batchAxis = a.batchAxis;
  }
  // Imperative calls outside autograd.record free their temporaries (Python's GC does it there).
  _forwardImperative(args) {
    if (isRecording()) return super._forwardImperative(args);
    return tidy(() => super._forwardImperative(args));
  }
  toString() {
    const w = this._weight === null || this._weight === undefined ? 'None' : pyFloat(this._weight);
    return `${this.constructor.name}(batch_axis=${this._batchAxis}, w=${w})`;
  }
}

// L = 1/2 * (label - pred)^2, averaged over all axes but batch_axis.
export class L2Loss extends Loss {
  constructor(...args) {
    const a = bind('L2Loss', args);
    super(a.weight, a.batchAxis, blockKw(a));
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    label = reshapeLike(F, label, pred);
    let loss = F.square(label.sub(pred));
    loss = applyWeighting(F, loss, this._weight / 2, sampleWeight);
    return F.mean(loss, { axis: this._batchAxis, exclude: true });
  }
}

// L = |label - pred|.
export class L1Loss extends Loss {
  constructor(...args) {
    const a = bind('L1Loss', args);
    super(a.weight, a.batchAxis, blockKw(a));
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    label = reshapeLike(F, label, pred);
    let loss = F.abs(label.sub(pred));
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.mean(loss, { axis: this._batchAxis, exclude: true });
  }
}

// Binary cross-entropy on logits (the stable max(x, 0) - x * z + log(1 + exp(-|x|)) form) or,
// with from_sigmoid, on probabilities (with eps 1e-12 inside the logs); pos_weight scales the
// positive term.
export class SigmoidBinaryCrossEntropyLoss extends Loss {
  constructor(...args) {
    const a = bind('SigmoidBinaryCrossEntropyLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._fromSigmoid = a.fromSigmoid;
  }
  hybridForward(F, pred, label, sampleWeight = null, posWeight = null) {
    label = reshapeLike(F, label, pred);
    let loss;
    if (!this._fromSigmoid) {
      if (!given(posWeight)) {
        loss = F.relu(pred).sub(pred.mul(label)).add(softrelu(F, F.abs(pred).neg()));
      } else {
        // x - x * z + (1 + z * pos_weight - z) * (log(1 + exp(-|x|)) + max(-x, 0))
        const logWeight = F.broadcast_mul(posWeight.sub(1), label).add(1);
        loss = pred.sub(pred.mul(label)).add(logWeight.mul(softrelu(F, F.abs(pred).neg()).add(F.relu(pred.neg()))));
      }
    } else {
      const eps = 1e-12;
      const neg = F.log(pred.rsub(1).add(eps)).mul(label.rsub(1));
      if (!given(posWeight)) loss = F.log(pred.add(eps)).mul(label).add(neg).neg();
      else loss = F.broadcast_mul(F.log(pred.add(eps)).mul(label), posWeight).add(neg).neg();
    }
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.mean(loss, { axis: this._batchAxis, exclude: true });
  }
}
export const SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss;

// -log softmax(pred)[label] (sparse labels) or -sum(label * log softmax(pred)) along `axis`.
export class SoftmaxCrossEntropyLoss extends Loss {
  constructor(...args) {
    const a = bind('SoftmaxCrossEntropyLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._axis = a.axis;
    this._sparseLabel = a.sparseLabel;
    this._fromLogits = a.fromLogits;
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    if (!this._fromLogits) pred = F.log_softmax(pred, { axis: this._axis });
    let loss;
    if (this._sparseLabel) {
      loss = F.pick(pred, label, { axis: this._axis, keepdims: true }).neg();
    } else {
      label = reshapeLike(F, label, pred);
      loss = pred.mul(label).sum({ axis: this._axis, keepdims: true }).neg();
    }
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return loss.mean({ axis: this._batchAxis, exclude: true });
  }
}
export const SoftmaxCELoss = SoftmaxCrossEntropyLoss;

// label * (log(label + 1e-12) - pred), pred log-probabilities (log_softmax applied unless
// from_logits); summed over the non-batch axes, as Gluon 1.9.1's code does.
export class KLDivLoss extends Loss {
  constructor(...args) {
    const a = bind('KLDivLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._fromLogits = a.fromLogits;
    this._axis = a.axis;
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    if (!this._fromLogits) pred = F.log_softmax(pred, { axis: this._axis });
    let loss = label.mul(F.log(label.add(1e-12)).sub(pred));
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.sum(loss, { axis: this._batchAxis, exclude: true });
  }
}

// Smoothed L1: |d| - rho/2 where |d| > rho, else d^2 / (2 rho).
export class HuberLoss extends Loss {
  constructor(...args) {
    const a = bind('HuberLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._rho = a.rho;
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    label = reshapeLike(F, label, pred);
    let loss = F.abs(label.sub(pred));
    loss = F.where(loss.gt(this._rho), loss.sub(0.5 * this._rho), F.square(loss).mul(0.5 / this._rho));
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.mean(loss, { axis: this._batchAxis, exclude: true });
  }
}

// max(0, margin - pred * label), labels -1 or 1.
export class HingeLoss extends Loss {
  constructor(...args) {
    const a = bind('HingeLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._margin = a.margin;
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    label = reshapeLike(F, label, pred);
    let loss = F.relu(pred.mul(label).rsub(this._margin));
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.mean(loss, { axis: this._batchAxis, exclude: true });
  }
}

// max(0, margin - pred * label)^2.
export class SquaredHingeLoss extends Loss {
  constructor(...args) {
    const a = bind('SquaredHingeLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._margin = a.margin;
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    label = reshapeLike(F, label, pred);
    let loss = F.square(F.relu(pred.mul(label).rsub(this._margin)));
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.mean(loss, { axis: this._batchAxis, exclude: true });
  }
}

// log(1 + exp(-pred * label)) for signed labels (-1/1); binary labels (0/1) with label_format.
export class LogisticLoss extends Loss {
  constructor(...args) {
    const a = bind('LogisticLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._labelFormat = a.labelFormat;
    if (a.labelFormat !== 'signed' && a.labelFormat !== 'binary') {
      throw new MXNetError(`label_format can only be signed or binary, recieved ${a.labelFormat}.`);
    }
  }
  hybridForward(F, pred, label, sampleWeight = null) {
    label = reshapeLike(F, label, pred);
    if (this._labelFormat === 'signed') label = label.add(1.0).div(2.0); // to 0 or 1
    let loss = F.relu(pred).sub(pred.mul(label)).add(softrelu(F, F.abs(pred).neg()));
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.mean(loss, { axis: this._batchAxis, exclude: true });
  }
}

// max(sum((positive - pred)^2 - (negative - pred)^2) + margin, 0), summed over non-batch axes.
export class TripletLoss extends Loss {
  constructor(...args) {
    const a = bind('TripletLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._margin = a.margin;
  }
  // three inputs and no sample_weight; the last parameter is the (empty) parameters object
  hybridForward(F, pred, positive, negative, _params) {
    positive = reshapeLike(F, positive, pred);
    negative = reshapeLike(F, negative, pred);
    let loss = F.sum(F.square(positive.sub(pred)).sub(F.square(negative.sub(pred))), { axis: this._batchAxis, exclude: true });
    loss = F.relu(loss.add(this._margin));
    return applyWeighting(F, loss, this._weight, null);
  }
}

// exp(pred) - target * pred (from_logits) or pred - target * log(pred + epsilon); compute_full adds
// Stirling's term where target > 1. The mean over every element (one value), as Gluon.
export class PoissonNLLLoss extends Loss {
  constructor(...args) {
    const a = bind('PoissonNLLLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._fromLogits = a.fromLogits;
    this._computeFull = a.computeFull;
  }
  hybridForward(F, pred, target, sampleWeight = null, epsilon = 1e-08) {
    const eps = epsilon ?? 1e-08;
    target = reshapeLike(F, target, pred);
    let loss = this._fromLogits ? F.exp(pred).sub(target.mul(pred)) : pred.sub(target.mul(F.log(pred.add(eps))));
    if (this._computeFull) {
      let stirling = target.mul(F.log(target)).sub(target).add(F.log(target.mul(2).mul(Math.PI)).mul(0.5));
      // Gluon writes `stirling *= target > 1; loss += stirling` (in place on NDArrays, which a
      // Symbol refuses); the values are the same
      stirling = stirling.mul(target.gt(1));
      loss = loss.add(stirling);
    }
    loss = applyWeighting(F, loss, this._weight, sampleWeight);
    return F.mean(loss);
  }
}

// 1 - cos(input1, input2) where label is 1, max(0, cos - margin) where it is -1; shape (batch, 1).
export class CosineEmbeddingLoss extends Loss {
  constructor(...args) {
    const a = bind('CosineEmbeddingLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this._margin = a.margin;
  }
  hybridForward(F, input1, input2, label, sampleWeight = null) {
    input1 = reshapeLike(F, input1, input2);
    label = label.reshape([-1, 1]);
    const cosSim = this._cosineSimilarity(F, input1, input2);
    const y1 = label.eq(1);
    const yMinus1 = label.eq(-1);
    const cosSimA = cosSim.rsub(1).mul(y1);
    const zero = input2 instanceof NDArray ? F.array([0]) : F._zeros({ shape: [1, 1] });
    // Gluon also passes axis=1, which broadcast_maximum ignores
    const cosSimB = F.broadcast_maximum(zero, yMinus1.mul(cosSim.sub(this._margin)));
    const loss = cosSimA.add(cosSimB);
    return applyWeighting(F, loss, this._weight, sampleWeight);
  }
  _cosineSimilarity(F, x, y, axis = -1) {
    const xNorm = F.norm(x, { axis }).reshape([-1, 1]);
    const yNorm = F.norm(y, { axis }).reshape([-1, 1]);
    const xDotY = F.sum(x.mul(y), { axis }).reshape([-1, 1]);
    const eps = x instanceof NDArray ? F.array([1e-12]) : F._full({ shape: [1, 1], value: 1e-12 });
    return xDotY.div(F.broadcast_maximum(xNorm.mul(yNorm), eps));
  }
}

// Smoothed deep metric learning loss over a batch of aligned pairs (x1[i], x2[i]): KL divergence
// between smoothed one-hot labels and log_softmax(-squared distances). It reads the batch size from
// x1.shape, so, as in Gluon 1.9.1, it runs imperatively only.
export class SDMLLoss extends Loss {
  constructor(...args) {
    const a = bind('SDMLLoss', args);
    super(a.weight, a.batchAxis, blockKw(a));
    this.kl_loss = new KLDivLoss({ fromLogits: true });
    this.smoothingParameter = a.smoothingParameter;
  }
  _computeDistances(x1, x2) {
    const s1 = x1.shape, s2 = x2.shape;
    if (s1.length !== 2 || s1[0] !== s2[0] || s1[1] !== s2[1]) {
      throw new MXNetError(`SDMLLoss: x1 and x2 must have the same (batch_size, dim) shape, got (${s1.join(', ')}) and (${s2.join(', ')})`);
    }
    const [batchSize, dim] = s1;
    const x1e = x1.expandDims(1).broadcastTo([batchSize, batchSize, dim]);
    const x2e = x2.expandDims(0).broadcastTo([batchSize, batchSize, dim]);
    return x1e.sub(x2e).pow(2).sum({ axis: 2 });
  }
  _computeLabels(F, batchSize) {
    const gold = F._eye({ N: batchSize });
    const s = this.smoothingParameter;
    return gold.mul(1 - s).add(gold.rsub(1).mul(s).div(batchSize - 1));
  }
  hybridForward(F, x1, x2, _params) {
    if (!(x1 instanceof NDArray)) {
      throw new MXNetError('SDMLLoss reads the batch size from x1.shape, so it runs imperatively only (as in Gluon 1.9.1): call it without hybridize()');
    }
    const labels = this._computeLabels(F, x1.shape[0]);
    const distances = this._computeDistances(x1, x2);
    const logProbabilities = F.log_softmax(distances.neg(), { axis: 1 });
    return this.kl_loss(logProbabilities, labels.asInContext(distances.context));
  }
}

// Connectionist Temporal Classification loss (the CTCLoss operator with blank_label 'last': the
// alphabet's last channel is the blank, labels are 0..A-2 and a label row without label_lengths
// ends at its first -1). pred (N, T, A) before the softmax ('TNC': (T, N, A)), label (N, L) ('TN':
// (L, N)); pred_lengths / label_lengths (N,) give each sequence's steps and labels. One loss per
// sequence, shape (N,).
export class CTCLoss extends Loss {
  constructor(...args) {
    const a = bind('CTCLoss', args);
    if (a.layout !== 'NTC' && a.layout !== 'TNC') {
      throw new MXNetError(`Only 'NTC' and 'TNC' layouts for pred are supported. Got: ${a.layout}`);
    }
    if (a.labelLayout !== 'NT' && a.labelLayout !== 'TN') {
      throw new MXNetError(`Only 'NT' and 'TN' layouts for label are supported. Got: ${a.labelLayout}`);
    }
    super(a.weight, a.labelLayout.indexOf('N'), blockKw(a));
    this._layout = a.layout;
    this._labelLayout = a.labelLayout;
  }
  hybridForward(F, pred, label, predLengths = null, labelLengths = null, sampleWeight = null) {
    if (this._layout === 'NTC') pred = F.swapaxes(pred, { dim1: 0, dim2: 1 });
    if (this._batchAxis === 1) label = F.swapaxes(label, { dim1: 0, dim2: 1 });
    const loss = F.CTCLoss(pred, label, predLengths, labelLengths, {
      use_data_lengths: given(predLengths), use_label_lengths: given(labelLengths), blank_label: 'last',
    });
    return applyWeighting(F, loss, this._weight, sampleWeight);
  }
}
