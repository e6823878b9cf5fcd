// signatures.mjs -- Python's signatures of the Gluon classes and helpers, in Python's parameter
// order with Python's defaults (MXNet 1.9.1: python/mxnet/gluon/nn/*.py, gluon/block.py,
// gluon/parameter.py, initializer.py, gluon/utils.py, ndarray/random.py). One table: the
// constructors bind their arguments with it (signature.mjs), and scripts/gen-api.mjs writes the
// TypeScript declarations and the docs' signature list from it.
//
// Each entry: [python_name, default, type]; REQUIRED marks a parameter without a default;
// types are signature.mjs's names joined by '|', '?' allows null.
import { REQUIRED as R, lazySignatures } from './signature.mjs';

// Python's **kwargs that every Block passes on to Block.__init__.
const BLOCK_KW = [['prefix', null, 'str'], ['params', null, 'params']];
const INIT = 'init|str?';
// The options every reader takes (io.mjs readOptions): progress, cancellation, fetch's options.
const READ_KW = [['on_progress', null, 'function'], ['signal', null, 'any'], ['request_init', null, 'dict'], ['fetch', null, 'function']];
// mx.sym helpers' **kwargs: the op's name and attributes.
const SYM_KW = [['name', null, 'str'], ['attr', null, 'dict']];
const layer = (name, params, kw = BLOCK_KW) => [name, params, { kwargs: kw }];
// The parameters every nd.random sampler takes after its distribution's.
const SAMPLE_TAIL = [['shape', null, 'shape'], ['dtype', null, 'dtype'], ['ctx', null, 'ctx'], ['out', null, 'ndarray']];

const conv = (n, transpose) => {
  const t = (v) => (n === 1 ? v : new Array(n).fill(v));
  const layout = ['NCW', 'NCHW', 'NCDHW'][n - 1];
  return [
    ['channels', R, 'int'], ['kernel_size', R, 'ints'], ['strides', t(1), 'ints'], ['padding', t(0), 'ints'],
    ...(transpose ? [['output_padding', t(0), 'ints']] : []),
    ['dilation', t(1), 'ints'], ['groups', 1, 'int'], ['layout', layout, 'str'], ['activation', null, 'str'],
    ['use_bias', true, 'bool'], ['weight_initializer', null, INIT], ['bias_initializer', 'zeros', INIT],
    ['in_channels', 0, 'int'],
  ];
};
const maxPool = (n) => {
  const size = n === 1 ? 2 : new Array(n).fill(2);
  const layout = ['NCW', 'NCHW', 'NCDHW'][n - 1];
  const head = [['pool_size', size, 'ints'], ['strides', null, 'ints'], ['padding', 0, 'ints']];
  // MaxPool3D puts ceil_mode before layout; MaxPool1D/2D after (as Python)
  return n === 3
    ? [...head, ['ceil_mode', false, 'bool'], ['layout', layout, 'str']]
    : [...head, ['layout', layout, 'str'], ['ceil_mode', false, 'bool']];
};
const avgPool = (n) => {
  const size = n === 1 ? 2 : new Array(n).fill(2);
  const layout = ['NCW', 'NCHW', 'NCDHW'][n - 1];
  const head = [['pool_size', size, 'ints'], ['strides', null, 'ints'], ['padding', 0, 'ints']];
  return n === 1
    ? [...head, ['layout', layout, 'str'], ['ceil_mode', false, 'bool'], ['count_include_pad', true, 'bool']]
    : [...head, ['ceil_mode', false, 'bool'], ['layout', layout, 'str'], ['count_include_pad', true, 'bool']];
};
const globalPool = (n) => [['layout', ['NCW', 'NCHW', 'NCDHW'][n - 1], 'str']];
const batchNorm = [
  ['axis', 1, 'int'], ['momentum', 0.9, 'number'], ['epsilon', 1e-5, 'number'], ['center', true, 'bool'],
  ['scale', true, 'bool'], ['use_global_stats', false, 'bool'], ['beta_initializer', 'zeros', INIT],
  ['gamma_initializer', 'ones', INIT], ['running_mean_initializer', 'zeros', INIT],
  ['running_variance_initializer', 'ones', INIT], ['in_channels', 0, 'int'],
];

// rnn_cell.py / rnn_layer.py: the four initializers every cell and layer takes, in their order;
// the layers' **kwargs (use_sequence_length reaches _RNNLayer, prefix and params Block).
const CELL_INIT = [['i2h_weight_initializer', null, INIT], ['h2h_weight_initializer', null, INIT],
  ['i2h_bias_initializer', 'zeros', INIT], ['h2h_bias_initializer', 'zeros', INIT]];
const RNN_KW = [['use_sequence_length', false, 'bool'], ...BLOCK_KW];

// lr_scheduler.py: LRScheduler's parameters, which every scheduler takes after its own.
const WARMUP = [['base_lr', 0.01, 'number'], ['warmup_steps', 0, 'int'], ['warmup_begin_lr', 0, 'number'],
  ['warmup_mode', 'linear', 'str']];
// optimizer.py: Optimizer.__init__'s parameters; a subclass passes them on as **kwargs (by name
// only), except those it declares itself (learning_rate for Adam, ...).
const OPT_BASE = [['rescale_grad', 1.0, 'number'], ['param_idx2name', null, 'dict'], ['wd', 0.0, 'number'],
  ['clip_gradient', null, 'number'], ['learning_rate', null, 'number'], ['lr_scheduler', null, 'any'], ['sym', null, 'any'],
  ['begin_num_update', 0, 'int'], ['multi_precision', false, 'bool'], ['param_dict', null, 'dict']];
const opt = (name, params) => [`optimizer.${name}`, params, {
  kwargs: OPT_BASE.filter(([n]) => !params.some(([m]) => m === n)) }];

const ENTRIES = [
  // ---- gluon (block.py, parameter.py) ----
  ['Block', [['prefix', null, 'str'], ['params', null, 'params']]],
  ['HybridBlock', [['prefix', null, 'str'], ['params', null, 'params']]],
  ['SymbolBlock', [['outputs', R, 'any'], ['inputs', R, 'any'], ['params', null, 'params']]],
  ['Parameter', [['name', R, 'str'], ['grad_req', 'write', 'str'], ['shape', null, 'shape'], ['dtype', 'float32', 'dtype'],
    ['lr_mult', 1.0, 'number'], ['wd_mult', 1.0, 'number'], ['init', null, INIT], ['allow_deferred_init', false, 'bool'],
    ['differentiable', true, 'bool'], ['stype', 'default', 'str'], ['grad_stype', 'default', 'str']]],
  ['Constant', [['name', R, 'str'], ['value', R, 'any']]],
  ['ParameterDict', [['prefix', '', 'str'], ['shared', null, 'params']]],
  ['Block.initialize', [['init', null, INIT], ['ctx', null, 'ctx'], ['verbose', false, 'bool'], ['force_reinit', false, 'bool']]],
  ['ParameterDict.initialize', [['init', null, INIT], ['ctx', null, 'ctx'], ['verbose', false, 'bool'], ['force_reinit', false, 'bool']]],
  ['Parameter.initialize', [['init', null, INIT], ['ctx', null, 'ctx'], ['default_init', null, INIT], ['force_reinit', false, 'bool']]],
  ['Block.hybridize', [['active', true, 'bool']], {
    kwargs: [['backend', null, 'str'], ['backend_opts', null, 'dict'], ['clear', true, 'bool'], ['partition_if_dynamic', false, 'bool'],
      ['static_alloc', false, 'bool'], ['static_shape', false, 'bool'], ['inline_limit', 2, 'int'],
      ['forward_bulk_size', null, 'int'], ['backward_bulk_size', null, 'int']],
  }],
  ['Block.loadParameters', [['filename', R, 'any'], ['ctx', null, 'ctx'], ['allow_missing', false, 'bool'], ['ignore_extra', false, 'bool'],
    ['cast_dtype', false, 'bool'], ['dtype_source', 'current', 'str']], { kwargs: [['max_bytes', 0, 'number'], ...READ_KW] }],
  ['Block.saveParameters', [['filename', null, 'str'], ['deduplicate', false, 'bool']]],
  ['HybridBlock.export', [['path', R, 'str'], ['epoch', 0, 'int'], ['remove_amp_cast', true, 'bool']]],
  ['SymbolBlock.imports', [['symbol_file', R, 'any'], ['input_names', R, 'str|array'], ['param_file', null, 'any'], ['ctx', null, 'ctx'],
    ['allow_missing', false, 'bool'], ['ignore_extra', false, 'bool']], { kwargs: [['max_bytes', 0, 'number'], ...READ_KW] }],
  ['ParameterDict.load', [['filename', R, 'any'], ['ctx', null, 'ctx'], ['allow_missing', false, 'bool'], ['ignore_extra', false, 'bool'],
    ['restore_prefix', '', 'str'], ['cast_dtype', false, 'bool'], ['dtype_source', 'current', 'str']],
  { kwargs: [['max_bytes', 0, 'number'], ...READ_KW] }],
  ['ParameterDict.save', [['filename', null, 'str'], ['strip_prefix', '', 'str']]],

  // ---- gluon.nn (basic_layers.py, conv_layers.py, activations.py) ----
  layer('nn.Sequential', [['prefix', null, 'str'], ['params', null, 'params']], []),
  layer('nn.HybridSequential', [['prefix', null, 'str'], ['params', null, 'params']], []),
  layer('nn.Dense', [['units', R, 'int'], ['activation', null, 'str'], ['use_bias', true, 'bool'], ['flatten', true, 'bool'],
    ['dtype', 'float32', 'dtype'], ['weight_initializer', null, INIT], ['bias_initializer', 'zeros', INIT], ['in_units', 0, 'int']]),
  layer('nn.Dropout', [['rate', R, 'number'], ['axes', [], 'ints']]),
  layer('nn.BatchNorm', batchNorm),
  layer('nn.BatchNormReLU', batchNorm),
  layer('nn.Embedding', [['input_dim', R, 'int'], ['output_dim', R, 'int'], ['dtype', 'float32', 'dtype'],
    ['weight_initializer', null, INIT], ['sparse_grad', false, 'bool']]),
  layer('nn.Flatten', []),
  layer('nn.InstanceNorm', [['axis', 1, 'int'], ['epsilon', 1e-5, 'number'], ['center', true, 'bool'], ['scale', false, 'bool'],
    ['beta_initializer', 'zeros', INIT], ['gamma_initializer', 'ones', INIT], ['in_channels', 0, 'int']]),
  layer('nn.LayerNorm', [['axis', -1, 'int'], ['epsilon', 1e-5, 'number'], ['center', true, 'bool'], ['scale', true, 'bool'],
    ['beta_initializer', 'zeros', INIT], ['gamma_initializer', 'ones', INIT], ['in_channels', 0, 'int'],
    ['prefix', null, 'str'], ['params', null, 'params']], []),
  layer('nn.GroupNorm', [['num_groups', 1, 'int'], ['epsilon', 1e-5, 'number'], ['center', true, 'bool'], ['scale', true, 'bool'],
    ['beta_initializer', 'zeros', INIT], ['gamma_initializer', 'ones', INIT], ['prefix', null, 'str'], ['params', null, 'params']], []),
  layer('nn.Lambda', [['function', R, 'str|function'], ['prefix', null, 'str']], []),
  layer('nn.HybridLambda', [['function', R, 'str|function'], ['prefix', null, 'str']], []),
  layer('nn.Activation', [['activation', R, 'str']]),
  layer('nn.LeakyReLU', [['alpha', R, 'number']]),
  layer('nn.PReLU', [['alpha_initializer', null, INIT], ['in_channels', 1, 'int']]),
  layer('nn.ELU', [['alpha', 1.0, 'number']]),
  layer('nn.SELU', []),
  layer('nn.GELU', []),
  layer('nn.Swish', [['beta', 1.0, 'number']]),
  layer('nn.Conv1D', conv(1, false)),
  layer('nn.Conv2D', conv(2, false)),
  layer('nn.Conv3D', conv(3, false)),
  layer('nn.Conv1DTranspose', conv(1, true)),
  layer('nn.Conv2DTranspose', conv(2, true)),
  layer('nn.Conv3DTranspose', conv(3, true)),
  layer('nn.MaxPool1D', maxPool(1)),
  layer('nn.MaxPool2D', maxPool(2)),
  layer('nn.MaxPool3D', maxPool(3)),
  layer('nn.AvgPool1D', avgPool(1)),
  layer('nn.AvgPool2D', avgPool(2)),
  layer('nn.AvgPool3D', avgPool(3)),
  layer('nn.GlobalMaxPool1D', globalPool(1)),
  layer('nn.GlobalMaxPool2D', globalPool(2)),
  layer('nn.GlobalMaxPool3D', globalPool(3)),
  layer('nn.GlobalAvgPool1D', globalPool(1)),
  layer('nn.GlobalAvgPool2D', globalPool(2)),
  layer('nn.GlobalAvgPool3D', globalPool(3)),
  layer('nn.ReflectionPad2D', [['padding', 0, 'ints']]),

  // ---- gluon.rnn (rnn/rnn_cell.py, rnn/rnn_layer.py) ----
  ['rnn.RecurrentCell', [['prefix', null, 'str'], ['params', null, 'params']]],
  ['rnn.HybridRecurrentCell', [['prefix', null, 'str'], ['params', null, 'params']]],
  ['rnn.RNNCell', [['hidden_size', R, 'int'], ['activation', 'tanh', 'any'], ...CELL_INIT, ['input_size', 0, 'int'],
    ['prefix', null, 'str'], ['params', null, 'params']]],
  ['rnn.LSTMCell', [['hidden_size', R, 'int'], ...CELL_INIT, ['input_size', 0, 'int'], ['prefix', null, 'str'],
    ['params', null, 'params'], ['activation', 'tanh', 'any'], ['recurrent_activation', 'sigmoid', 'any']]],
  ['rnn.GRUCell', [['hidden_size', R, 'int'], ...CELL_INIT, ['input_size', 0, 'int'], ['prefix', null, 'str'],
    ['params', null, 'params']]],
  ['rnn.SequentialRNNCell', [['prefix', null, 'str'], ['params', null, 'params']]],
  ['rnn.HybridSequentialRNNCell', [['prefix', null, 'str'], ['params', null, 'params']]],
  ['rnn.DropoutCell', [['rate', R, 'number'], ['axes', [], 'ints'], ['prefix', null, 'str'], ['params', null, 'params']]],
  ['rnn.ModifierCell', [['base_cell', R, 'any']]],
  ['rnn.ZoneoutCell', [['base_cell', R, 'any'], ['zoneout_outputs', 0, 'number'], ['zoneout_states', 0, 'number']]],
  ['rnn.ResidualCell', [['base_cell', R, 'any']]],
  // gluon.contrib.rnn (contrib/rnn/rnn_cell.py)
  ['rnn.LSTMPCell', [['hidden_size', R, 'int'], ['projection_size', R, 'int'], ['i2h_weight_initializer', null, INIT],
    ['h2h_weight_initializer', null, INIT], ['h2r_weight_initializer', null, INIT], ['i2h_bias_initializer', 'zeros', INIT],
    ['h2h_bias_initializer', 'zeros', INIT], ['input_size', 0, 'int'], ['prefix', null, 'str'], ['params', null, 'params']]],
  ['rnn.VariationalDropoutCell', [['base_cell', R, 'any'], ['drop_inputs', 0, 'number'], ['drop_states', 0, 'number'],
    ['drop_outputs', 0, 'number']]],
  // (contrib/rnn/conv_rnn_cell.py: Conv<d>D{RNN,LSTM,GRU}Cell)
  ...[1, 2, 3].flatMap((d) => ['RNN', 'LSTM', 'GRU'].map((kind) => [`rnn.Conv${d}D${kind}Cell`, [['input_shape', R, 'shape'],
    ['hidden_channels', R, 'int'], ['i2h_kernel', R, 'shape'], ['h2h_kernel', R, 'shape'], ['i2h_pad', Array(d).fill(0), 'shape'],
    ['i2h_dilate', Array(d).fill(1), 'shape'], ['h2h_dilate', Array(d).fill(1), 'shape'], ['i2h_weight_initializer', null, INIT],
    ['h2h_weight_initializer', null, INIT], ['i2h_bias_initializer', 'zeros', INIT], ['h2h_bias_initializer', 'zeros', INIT],
    ['conv_layout', ['NCW', 'NCHW', 'NCDHW'][d - 1], 'str'], ['activation', 'tanh', 'any'], ['prefix', null, 'str'],
    ['params', null, 'params']]])),
  ['rnn.BidirectionalCell', [['l_cell', R, 'any'], ['r_cell', R, 'any'], ['output_prefix', 'bi_', 'str']]],
  ['rnn.RecurrentCell.unroll', [['length', R, 'int?'], ['inputs', R, 'any'], ['begin_state', null, 'any'], ['layout', 'NTC', 'str'],
    ['merge_outputs', null, 'bool'], ['valid_length', null, 'any']]],
  layer('rnn.RNN', [['hidden_size', R, 'int'], ['num_layers', 1, 'int'], ['activation', 'relu', 'str'], ['layout', 'TNC', 'str'],
    ['dropout', 0, 'number'], ['bidirectional', false, 'bool'], ...CELL_INIT, ['input_size', 0, 'int'], ['dtype', 'float32', 'dtype']],
  RNN_KW),
  layer('rnn.LSTM', [['hidden_size', R, 'int'], ['num_layers', 1, 'int'], ['layout', 'TNC', 'str'], ['dropout', 0, 'number'],
    ['bidirectional', false, 'bool'], ['input_size', 0, 'int'], ...CELL_INIT, ['projection_size', null, 'int'],
    ['h2r_weight_initializer', null, INIT], ['state_clip_min', null, 'number'], ['state_clip_max', null, 'number'],
    ['state_clip_nan', false, 'bool'], ['dtype', 'float32', 'dtype']], RNN_KW),
  layer('rnn.GRU', [['hidden_size', R, 'int'], ['num_layers', 1, 'int'], ['layout', 'TNC', 'str'], ['dropout', 0, 'number'],
    ['bidirectional', false, 'bool'], ['input_size', 0, 'int'], ...CELL_INIT, ['dtype', 'float32', 'dtype']], RNN_KW),

  // ---- mx.init (initializer.py) ----
  ['init.Zero', []],
  ['init.One', []],
  ['init.Constant', [['value', R, 'number|array|ndarray']]],
  ['init.Uniform', [['scale', 0.07, 'number']]],
  ['init.Normal', [['sigma', 0.01, 'number']]],
  ['init.Orthogonal', [['scale', 1.414, 'number'], ['rand_type', 'uniform', 'str']]],
  ['init.Xavier', [['rnd_type', 'uniform', 'str'], ['factor_type', 'avg', 'str'], ['magnitude', 3, 'number']]],
  ['init.MSRAPrelu', [['factor_type', 'avg', 'str'], ['slope', 0.25, 'number']]],
  ['init.Bilinear', []],
  ['init.LSTMBias', [['forget_bias', 1.0, 'number']]],
  ['init.Mixed', [['patterns', R, 'array'], ['initializers', R, 'array']]],
  ['init.Load', [['param', R, 'dict'], ['default_init', null, INIT], ['verbose', false, 'bool']]],

  // ---- gluon.utils (utils.py) ----
  ['utils.split_data', [['data', R, 'ndarray'], ['num_slice', R, 'int'], ['batch_axis', 0, 'int'], ['even_split', true, 'bool']]],
  ['utils.split_and_load', [['data', R, 'ndarray|array'], ['ctx_list', R, 'ctx'], ['batch_axis', 0, 'int'], ['even_split', true, 'bool']]],
  ['utils.clip_global_norm', [['arrays', R, 'array'], ['max_norm', R, 'number'], ['check_isfinite', true, 'bool']]],
  ['utils.check_sha1', [['filename', R, 'any'], ['sha1_hash', R, 'str']]],

  // ---- nd helpers (ndarray/ndarray.py, ndarray/utils.py) ----
  ['nd.concatenate', [['arrays', R, 'array'], ['axis', 0, 'int'], ['always_copy', true, 'bool']]],
  ['nd.zeros', [['shape', R, 'shape'], ['ctx', null, 'ctx'], ['dtype', null, 'dtype'], ['stype', null, 'str']]],
  ['nd.ones', [['shape', R, 'shape'], ['ctx', null, 'ctx'], ['dtype', null, 'dtype']]],
  ['nd.empty', [['shape', R, 'shape'], ['ctx', null, 'ctx'], ['dtype', null, 'dtype'], ['stype', null, 'str']]],
  ['nd.full', [['shape', R, 'shape'], ['val', R, 'number'], ['ctx', null, 'ctx'], ['dtype', 'float32', 'dtype'], ['out', null, 'ndarray']]],
  ['nd.arange', [['start', R, 'number'], ['stop', null, 'number'], ['step', 1.0, 'number'], ['repeat', 1, 'int'],
    ['infer_range', null, 'bool'], ['ctx', null, 'ctx'], ['dtype', 'float32', 'dtype']]],
  ['nd.array', [['source_array', R, 'any'], ['ctx', null, 'ctx'], ['dtype', null, 'dtype']], { kwargs: [['shape', null, 'shape']] }],

  // ---- sym helpers (symbol/symbol.py): **kwargs are the op's name= and attr= ----
  ['sym.zeros', [['shape', R, 'shape'], ['dtype', null, 'dtype']], { kwargs: SYM_KW }],
  ['sym.ones', [['shape', R, 'shape'], ['dtype', null, 'dtype']], { kwargs: SYM_KW }],
  ['sym.full', [['shape', R, 'shape'], ['val', R, 'number'], ['dtype', null, 'dtype']], { kwargs: SYM_KW }],
  ['sym.arange', [['start', R, 'number'], ['stop', null, 'number'], ['step', 1.0, 'number'], ['repeat', 1, 'int'],
    ['infer_range', false, 'bool'], ['name', null, 'str'], ['dtype', null, 'dtype']]],
  ['sym.linspace', [['start', R, 'number'], ['stop', R, 'number'], ['num', R, 'int'], ['endpoint', true, 'bool'],
    ['name', null, 'str'], ['dtype', null, 'dtype']]],
  ['sym.eye', [['N', R, 'int'], ['M', 0, 'int'], ['k', 0, 'int'], ['dtype', null, 'dtype']], { kwargs: SYM_KW }],

  // ---- mx.random / nd.random (ndarray/random.py; random.py's seed) ----
  // Python's _Null (not given) is null here. Distribution parameters are numbers or NDArrays.
  ...[
    ['uniform', [['low', 0], ['high', 1]]],
    ['normal', [['loc', 0], ['scale', 1]]],
    ['exponential', [['scale', 1]]],
    ['gamma', [['alpha', 1], ['beta', 1]]],
    ['poisson', [['lam', 1]]],
    ['negative_binomial', [['k', 1], ['p', 1]]],
    ['generalized_negative_binomial', [['mu', 1], ['alpha', 1]]],
  ].map(([fn, dist]) => [`random.${fn}`, [...dist.map(([n, d]) => [n, d, 'number|ndarray']), ...SAMPLE_TAIL]]),
  ['random.randint', [['low', R, 'int'], ['high', R, 'int'], ...SAMPLE_TAIL]],
  ['random.randn', [], { varargs: 'shape', kwargs: [['loc', 0, 'number|ndarray'], ['scale', 1, 'number|ndarray'], ...SAMPLE_TAIL.slice(1)] }],
  ['random.multinomial', [['data', R, 'ndarray'], ['shape', null, 'shape'], ['get_prob', false, 'bool'], ['out', null, 'ndarray'],
    ['dtype', 'int32', 'dtype']]],
  ['random.shuffle', [['data', R, 'ndarray']]],
  ['random.seed', [['seed_state', R, 'int'], ['ctx', 'all', 'str|ctx']]],

  // ---- mx.lr_scheduler (lr_scheduler.py) ----
  ['lr_scheduler.LRScheduler', WARMUP],
  ['lr_scheduler.FactorScheduler', [['step', R, 'int'], ['factor', 1, 'number'], ['stop_factor_lr', 1e-8, 'number'], ...WARMUP]],
  ['lr_scheduler.MultiFactorScheduler', [['step', R, 'array'], ['factor', 1, 'number'], ...WARMUP]],
  ['lr_scheduler.PolyScheduler', [['max_update', R, 'int'], WARMUP[0], ['pwr', 2, 'number'], ['final_lr', 0, 'number'],
    ...WARMUP.slice(1)]],
  ['lr_scheduler.CosineScheduler', [['max_update', R, 'int'], WARMUP[0], ['final_lr', 0, 'number'], ...WARMUP.slice(1)]],

  // ---- mx.optimizer (optimizer/optimizer.py): each class's own parameters, then Optimizer's
  // (Python's **kwargs passed on to Optimizer.__init__) by name only ----
  ['optimizer.Optimizer', OPT_BASE],
  opt('SGD', [['momentum', 0.0, 'number'], ['lazy_update', true, 'bool']]),
  opt('Signum', [['learning_rate', 0.01, 'number'], ['momentum', 0.9, 'number'], ['wd_lh', 0.0, 'number']]),
  opt('FTML', [['beta1', 0.6, 'number'], ['beta2', 0.999, 'number'], ['epsilon', 1e-8, 'number']]),
  opt('LAMB', [['learning_rate', 0.001, 'number'], ['beta1', 0.9, 'number'], ['beta2', 0.999, 'number'],
    ['epsilon', 1e-6, 'number'], ['lower_bound', null, 'number'], ['upper_bound', null, 'number'], ['bias_correction', true, 'bool']]),
  opt('LARS', [['momentum', 0.0, 'number'], ['lazy_update', true, 'bool'], ['eta', 0.001, 'number'], ['eps', 0, 'number'],
    ['momentum_correction', true, 'bool']]),
  opt('LBSGD', [['momentum', 0.0, 'number'], ['multi_precision', false, 'bool'], ['warmup_strategy', 'linear', 'str'],
    ['warmup_epochs', 5, 'int'], ['batch_scale', 1, 'int'], ['updates_per_epoch', 32, 'int'], ['begin_epoch', 0, 'int'],
    ['num_epochs', 60, 'int']]),
  opt('DCASGD', [['momentum', 0.0, 'number'], ['lamda', 0.04, 'number']]),
  opt('NAG', [['momentum', 0.0, 'number']]),
  opt('SGLD', []),
  opt('Adam', [['learning_rate', 0.001, 'number'], ['beta1', 0.9, 'number'], ['beta2', 0.999, 'number'],
    ['epsilon', 1e-8, 'number'], ['lazy_update', true, 'bool']]),
  opt('AdaGrad', [['eps', 1e-7, 'number']]),
  opt('RMSProp', [['learning_rate', 0.001, 'number'], ['gamma1', 0.9, 'number'], ['gamma2', 0.9, 'number'],
    ['epsilon', 1e-8, 'number'], ['centered', false, 'bool'], ['clip_weights', null, 'number']]),
  opt('AdaDelta', [['rho', 0.90, 'number'], ['epsilon', 1e-5, 'number']]),
  opt('Ftrl', [['lamda1', 0.01, 'number'], ['learning_rate', 0.1, 'number'], ['beta', 1, 'number']]),
  opt('Adamax', [['learning_rate', 0.002, 'number'], ['beta1', 0.9, 'number'], ['beta2', 0.999, 'number']]),
  opt('Nadam', [['learning_rate', 0.001, 'number'], ['beta1', 0.9, 'number'], ['beta2', 0.999, 'number'],
    ['epsilon', 1e-8, 'number'], ['schedule_decay', 0.004, 'number']]),
  opt('Test', []),

  // ---- mx.image (image/image.py; fromPixels is the JS way in from canvas, ImageData, bitmaps) ----
  ['image.fromPixels', [['source', R, 'dict|any'], ['channels', 3, 'int']]],
  ['image.imdecode', [['buf', R, 'any'], ['flag', 1, 'int'], ['to_rgb', true, 'bool|int'], ['out', null, 'ndarray']],
    { kwargs: [['decoder', null, 'function']] }],
  ['image.imread', [['filename', R, 'any'], ['flag', 1, 'int'], ['to_rgb', true, 'bool|int'], ['out', null, 'ndarray']],
    { kwargs: [['decoder', null, 'function'], ...READ_KW] }],
  ['image.imresize', [['src', R, 'ndarray'], ['w', R, 'int'], ['h', R, 'int'], ['interp', 1, 'int'], ['out', null, 'ndarray']]],
  ['image.resize_short', [['src', R, 'ndarray'], ['size', R, 'int'], ['interp', 2, 'int']]],
  ['image.fixed_crop', [['src', R, 'ndarray'], ['x0', R, 'int'], ['y0', R, 'int'], ['w', R, 'int'], ['h', R, 'int'],
    ['size', null, 'ints'], ['interp', 2, 'int']]],
  ['image.random_crop', [['src', R, 'ndarray'], ['size', R, 'ints'], ['interp', 2, 'int']]],
  ['image.center_crop', [['src', R, 'ndarray'], ['size', R, 'ints'], ['interp', 2, 'int']]],
  ['image.random_size_crop', [['src', R, 'ndarray'], ['size', R, 'ints'], ['area', R, 'number|array'], ['ratio', R, 'array'],
    ['interp', 2, 'int']]],
  ['image.scale_down', [['src_size', R, 'array'], ['size', R, 'array']]],
  ['image.color_normalize', [['src', R, 'ndarray'], ['mean', R, 'ndarray|number|array?'], ['std', null, 'ndarray|number|array']]],

  // ---- gluon.Trainer (gluon/trainer.py) ----
  ['Trainer', [['params', R, 'any'], ['optimizer', R, 'str|optimizer'], ['optimizer_params', null, 'dict'],
    ['kvstore', 'device', 'any'], ['compression_params', null, 'dict'], ['update_on_kvstore', null, 'bool']]],
  ['Trainer.step', [['batch_size', R, 'number'], ['ignore_stale_grad', false, 'bool']]],
  ['Trainer.update', [['batch_size', R, 'number'], ['ignore_stale_grad', false, 'bool']]],
];

export const SIGNATURES = lazySignatures(ENTRIES);
