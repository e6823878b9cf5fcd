// Hand-written declarations of the API that does not come from the C operator registry: Gluon
// (blocks, parameters, layers, losses, data, Trainer, model_zoo, rnn, contrib), init, optimizer,
// lr_scheduler, metric, autograd, name and loading. scripts/gen-api.mjs appends this file to the
// generated part of dist/index.d.ts (NDArray, Symbol, nd.*, sym.*, and the `Args<'name'>`
// constructor argument types built from the signature tables the JS binder reads), so the names
// used here without a declaration (NDArray, Symbol, DType, Context, Args, ...) are generated ones.
// Constructors take Python's positional parameters or one options object (snake_case or
// camelCase keys): both forms are in Args<'...'>.

// ---- sources and loading ------------------------------------------------------------------------
/** A path (Node), a URL (string or URL), bytes, a Blob/File or a fetch Response. */
export type Source = string | URL | ArrayBuffer | ArrayBufferView | Blob | Response;
export interface LoadProgress {
  /** the source: its path or URL, else 'data' */ file: string;
  /** bytes read so far */ loaded: number;
  /** the size when known (Content-Length, the file's or the Blob's size), else null */ total: number | null;
  /** bytes this event adds */ bytes: number;
  /** true on the last event of the file */ done: boolean;
}
/** Options every reader accepts (nd.load, sym.load, loadParameters, SymbolBlock.imports, ParameterDict.load, image.imread). */
export interface LoadOptions {
  /** called as bytes arrive, per file */ onProgress?: ((event: LoadProgress) => void) | null;
  on_progress?: ((event: LoadProgress) => void) | null;
  /** aborting rejects with an AbortError and frees what was read */ signal?: AbortSignal | null;
  /** passed to fetch() */ requestInit?: RequestInit | null; request_init?: RequestInit | null;
  /** the fetch implementation to use */ fetch?: ((input: string | URL | Request, init?: RequestInit) => Promise<Response>) | null;
  /** cap on the C reader's allocations */ maxBytes?: number; max_bytes?: number;
}

// ---- blocks ----------------------------------------------------------------------------------------
/** What a block's forward receives: arrays (or symbols in a hybridized graph), lists of them, null. */
export type BlockArg = NDArray | Symbol | NDArray[] | Symbol[] | number | null | undefined;
/** The imperative F of hybridForward: mx.nd (mx.sym when the block builds its graph). */
export type F = typeof nd;
export type ForwardHook = (block: Block, inputs: BlockArg[], output: unknown) => void;
export type ForwardPreHook = (block: Block, inputs: BlockArg[]) => void;
export interface HookHandle { detach(): void; }

/** Python's Block; instances are callable: net(x) runs forward (hooks included). */
export interface Block {
  (x: NDArray, ...rest: (NDArray | NDArray[] | number | null)[]): NDArray;
  (x: Symbol, ...rest: (Symbol | Symbol[] | number | null)[]): Symbol;
  (...inputs: BlockArg[]): NDArray | NDArray[] | Symbol;
  readonly name: string;
  readonly prefix: string;
  readonly params: ParameterDict;
  readonly isDisposed: boolean;
  /** runs fn with this block's prefix as the name scope (Python's `with self.name_scope():`) */
  nameScope<T>(fn: () => T): T;
  name_scope<T>(fn: () => T): T;
  registerChild(block: Block, name?: string | null): void;
  registerForwardPreHook(hook: ForwardPreHook): HookHandle;
  registerForwardHook(hook: ForwardHook): HookHandle;
  apply(fn: (block: Block) => void): this;
  collectParams(select?: string | null): ParameterDict;
  collect_params(select?: string | null): ParameterDict;
  initialize(...args: Args<'Block.initialize'>): void;
  hybridize(...args: Args<'Block.hybridize'>): void;
  cast(dtype: DType): void;
  forward(x: BlockArg, ...args: any[]): NDArray | NDArray[] | Symbol;
  /** frees the parameters' arrays (JS has no reference counting) */
  dispose(): void;
  /** MXNet's .params bytes (also written to filename in Node) */
  saveParameters(...args: Args<'Block.saveParameters'>): Uint8Array;
  saveParametersBytes(opts?: { deduplicate?: boolean }): Uint8Array;
  loadParameters(filename: Source, ctx?: Context | Context[] | null, allowMissing?: boolean, ignoreExtra?: boolean,
    castDtype?: boolean, dtypeSource?: 'current' | 'saved', options?: Block_loadParametersOptions & LoadOptions): Promise<void>;
  loadParameters(filename: Source, options?: Block_loadParametersOptions & LoadOptions): Promise<void>;
  saveParams(file: string): Uint8Array;
  loadParams(source: Source, opts?: LoadOptions & { ctx?: Context | Context[] | null }): Promise<void>;
  summary(...inputs: BlockArg[]): void;
  toString(): string;
}
export interface BlockConstructor {
  new (...args: Args<'Block'>): Block;
  readonly prototype: Block;
}

/** Python's HybridBlock: implement hybridForward(F, x, ...inputs, params). */
export interface HybridBlock extends Block {
  /** F is mx.nd imperatively and mx.sym while the graph is built; params holds the block's own Parameters' values by name */
  hybridForward(F: F, x: NDArray, ...args: any[]): NDArray | NDArray[];
  inferShape(...inputs: BlockArg[]): void;
  inferType(...inputs: BlockArg[]): void;
  /** writes `<path>-symbol.json` and `<path>-<epoch>.params` (Node); returns their names */
  export(...args: Args<'HybridBlock.export'>): [string, string];
  /** the two files in memory */
  exportBytes(): { symbol: string; params: Uint8Array };
  registerOpHook(callback: (name: string, opName: string, array: NDArray) => void, monitorAll?: boolean): void;
  optimizeFor(x: BlockArg, ...rest: (BlockArg | Record<string, unknown>)[]): this;
}
export interface HybridBlockConstructor {
  new (...args: Args<'HybridBlock'>): HybridBlock;
  readonly prototype: HybridBlock;
}

export interface SymbolBlock extends HybridBlock {}
export interface SymbolBlockConstructor {
  new (...args: Args<'SymbolBlock'>): SymbolBlock;
  readonly prototype: SymbolBlock;
  /** MXNet's two files (or their bytes); both are fetched at once */
  imports(symbolFile: Source, inputNames: string | string[], paramFile?: Source | null, ctx?: Context | Context[] | null,
    allowMissing?: boolean, ignoreExtra?: boolean, options?: LoadOptions): Promise<SymbolBlock>;
  imports(symbolFile: Source, inputNames: string | string[], options?: SymbolBlock_importsOptions & LoadOptions): Promise<SymbolBlock>;
  imports(symbolFile: Source, inputNames: string | string[], paramFile: Source | null,
    options?: SymbolBlock_importsOptions & LoadOptions): Promise<SymbolBlock>;
}

/** A container: children run in order. */
export interface Sequential extends Block {
  add(...blocks: Block[]): this;
  readonly length: number;
  /** the i-th child (negative from the end), or a slice [start, stop] as a new container */
  at(i: number): Block;
  get(key: number | string): Block;
}
export interface HybridSequential extends HybridBlock {
  add(...blocks: Block[]): this;
  readonly length: number;
  at(i: number): Block;
  get(key: number | string): Block;
}

// ---- parameters ----------------------------------------------------------------------------------
export type GradReq = 'write' | 'add' | 'null';
export interface Parameter {
  readonly name: string;
  readonly shape: number[] | null;
  dtype: DType;
  gradReq: GradReq; grad_req: GradReq;
  lrMult: number; lr_mult: number; wdMult: number; wd_mult: number;
  readonly isDisposed: boolean;
  initialize(...args: Args<'Parameter.initialize'>): void;
  data(ctx?: Context | null): NDArray;
  listData(): NDArray[];
  grad(ctx?: Context | null): NDArray;
  listGrad(): NDArray[];
  listCtx(): Context[];
  zeroGrad(): void;
  resetCtx(ctx: Context | Context[]): void;
  setData(value: NDArray | number): void;
  cast(dtype: DType): void;
  /** the Symbol variable of this parameter */
  var(): Symbol;
  dispose(): void;
}
export interface ParameterConstructor { new (...args: Args<'Parameter'>): Parameter; readonly prototype: Parameter; }
export interface Constant extends Parameter {}
export interface ConstantConstructor { new (...args: Args<'Constant'>): Constant; readonly prototype: Constant; }

export interface ParameterDict extends Iterable<[string, Parameter]> {
  readonly prefix: string;
  readonly size: number;
  has(name: string): boolean;
  keys(): IterableIterator<string>;
  values(): IterableIterator<Parameter>;
  entries(): IterableIterator<[string, Parameter]>;
  items(): [string, Parameter][];
  getItem(name: string): Parameter;
  at(name: string): Parameter;
  /** Python's ParameterDict.get(name, **kwargs): the parameter, created when missing */
  get(name: string, options?: Partial<ParameterOptions>): Parameter;
  getConstant(name: string, value?: NDArray | number[] | null): Constant;
  update(other: ParameterDict): void;
  initialize(...args: Args<'ParameterDict.initialize'>): void;
  zeroGrad(): void;
  resetCtx(ctx: Context | Context[]): void;
  setattr(name: string, value: unknown): void;
  listCtx(): Context[];
  save(...args: Args<'ParameterDict.save'>): Uint8Array;
  load(filename: Source, options?: ParameterDict_loadOptions & LoadOptions): Promise<void>;
  load(filename: Source, ctx?: Context | Context[] | null, allowMissing?: boolean, ignoreExtra?: boolean, restorePrefix?: string,
    castDtype?: boolean, dtypeSource?: 'current' | 'saved', options?: LoadOptions): Promise<void>;
  dispose(): void;
  toString(): string;
}
export interface ParameterDictConstructor { new (...args: Args<'ParameterDict'>): ParameterDict; readonly prototype: ParameterDict; }
declare class _DeferredInitializationError extends MXNetError {}

// ---- initializers ------------------------------------------------------------------------------
export interface Initializer {
  /** Python's dumps(): '["xavier", {...}]' */
  dumps(): string;
  readonly alias: string;
  /** fills arr for the parameter named name */
  init(name: string, arr: NDArray): void;
  toString(): string;
}
export interface InitializerConstructor<A extends unknown[] = []> { new (...args: A): Initializer; readonly prototype: Initializer; }

// ---- recurrent -------------------------------------------------------------------------------------
export interface StateInfo { shape: number[]; __layout__: string; dtype?: DType; }
export interface BeginStateOptions { batchSize?: number; batch_size?: number; func?: (...args: any[]) => NDArray | Symbol; ctx?: Context; dtype?: DType; }
export interface RecurrentCell extends Block {
  /** one step: [output, newStates] */
  (x: NDArray, states: NDArray[]): [NDArray, NDArray[]];
  (x: Symbol, states: Symbol[]): [Symbol, Symbol[]];
  reset(): void;
  stateInfo(batchSize?: number): StateInfo[];
  beginState(batchSize?: number | BeginStateOptions, func?: (...args: any[]) => NDArray | Symbol, options?: BeginStateOptions): NDArray[];
  /** [outputs, states]: outputs merged into one array (merge_outputs) or one per step */
  unroll(...args: Args<'rnn.RecurrentCell.unroll'>): [NDArray | NDArray[], NDArray[]];
}
export interface HybridRecurrentCell extends RecurrentCell, HybridBlock {
  (x: NDArray, states: NDArray[]): [NDArray, NDArray[]];
  (x: Symbol, states: Symbol[]): [Symbol, Symbol[]];
}
export interface SequentialRNNCell extends RecurrentCell { add(cell: RecurrentCell): this; readonly length: number; at(i: number): RecurrentCell; get(key: number | string): RecurrentCell; }
export interface HybridSequentialRNNCell extends HybridRecurrentCell { add(cell: RecurrentCell): this; readonly length: number; at(i: number): RecurrentCell; get(key: number | string): RecurrentCell; }
/** The fused layers: layer(x) is the output; layer(x, states) is [output, states]. */
export interface RecurrentLayer extends HybridBlock {
  (x: NDArray): NDArray;
  (x: NDArray, states: NDArray[], sequenceLength?: NDArray): [NDArray, NDArray[]];
  (x: Symbol, ...rest: (Symbol | Symbol[])[]): Symbol | [Symbol, Symbol[]];
  stateInfo(batchSize?: number): StateInfo[];
  beginState(batchSize?: number | BeginStateOptions, func?: (...args: any[]) => NDArray | Symbol, options?: BeginStateOptions): NDArray[];
}

// ---- losses ---------------------------------------------------------------------------------------
/** A Gluon loss: loss(pred, label, sampleWeight?) is the per-sample loss (batch_axis kept). */
export interface Loss extends HybridBlock {
  (pred: NDArray, label: NDArray, sampleWeight?: NDArray | null): NDArray;
  (pred: Symbol, label: Symbol, sampleWeight?: Symbol | null): Symbol;
}

// ---- data --------------------------------------------------------------------------------------------
/** Python's Dataset: get(i) and length. */
export interface Dataset<T = unknown> extends Iterable<T> {
  get(idx: number): T;
  readonly length: number;
  filter(fn: (sample: T) => boolean): Dataset<T>;
  shard(numShards: number, index: number): Dataset<T>;
  take(count: number | null): Dataset<T>;
  sample(sampler: Iterable<number>): Dataset<T>;
  transform<U>(fn: (...sample: any[]) => U, lazy?: boolean): Dataset<U>;
  transformFirst(fn: (x: any) => unknown, lazy?: boolean): Dataset<unknown[]>;
}
export interface Sampler extends Iterable<number> { readonly length: number; }
export interface BatchSampler extends Iterable<number[]> { readonly length: number; }
/** Iterates batches: for (const [data, label] of loader) (also for await). */
export interface DataLoader<B = NDArray[]> extends Iterable<B>, AsyncIterable<B> {
  readonly length: number;
}

// ---- optimizer, schedulers, Trainer ---------------------------------------------------------------
export interface LRScheduler {
  /** the learning rate at update numUpdate */
  call(numUpdate: number): number;
  baseLr: number; base_lr: number;
  warmupSteps: number; warmupBeginLr: number; warmupMode: string;
  getWarmupLr(numUpdate: number): number;
}
export interface Optimizer {
  readonly learningRate: number; readonly learning_rate: number;
  rescaleGrad: number; wd: number; clipGradient: number | null; lrScheduler: LRScheduler | null;
  numUpdate: number; beginNumUpdate: number; multiPrecision: boolean;
  createState(index: number, weight: NDArray): NDArray | NDArray[] | null | unknown;
  createStateMultiPrecision(index: number, weight: NDArray): unknown;
  update(index: number | number[], weight: NDArray | NDArray[], grad: NDArray | NDArray[], state: unknown): void;
  updateMultiPrecision(index: number | number[], weight: NDArray | NDArray[], grad: NDArray | NDArray[], state: unknown): void;
  setLearningRate(lr: number): void;
  setLrMult(mults: Record<string, number>): void;
  setWdMult(mults: Record<string, number>): void;
}
export interface Updater {
  (index: number | number[], grad: NDArray | NDArray[], weight: NDArray | NDArray[]): void;
  call(index: number | number[], grad: NDArray | NDArray[], weight: NDArray | NDArray[]): void;
  optimizer: Optimizer;
  getStates(dumpOptimizer?: boolean): Uint8Array;
  setStates(states: Uint8Array): void;
  dispose(): void;
}
export interface Trainer {
  readonly learningRate: number; readonly learning_rate: number;
  readonly optimizer: Optimizer;
  setLearningRate(lr: number): void;
  /** one update of every parameter, gradients scaled by 1/batchSize */
  step(...args: Args<'Trainer.step'>): void;
  allreduceGrads(): void;
  update(...args: Args<'Trainer.update'>): void;
  /** the optimizer and its states (also written to fname in Node) */
  saveStates(fname?: string | null): Uint8Array;
  loadStates(source: Source): Promise<void>;
  dispose(): void;
}

// ---- metrics --------------------------------------------------------------------------------------
export type MetricValue = number | number[];
export interface EvalMetric {
  readonly name: string | string[];
  numInst: number; sumMetric: number; globalNumInst: number; globalSumMetric: number;
  update(labels: NDArray | NDArray[], preds: NDArray | NDArray[]): void;
  updateDict(labels: Record<string, NDArray>, preds: Record<string, NDArray>): void;
  reset(): void;
  resetLocal(): void;
  /** [name, value] (lists of both for a composite) */
  get(): [string, number] | [string[], number[]];
  getGlobal(): [string, number] | [string[], number[]];
  getNameValue(): [string, number][];
  getGlobalNameValue(): [string, number][];
  getConfig(): Record<string, unknown>;
  toString(): string;
}
export interface CompositeEvalMetric extends EvalMetric {
  add(metric: EvalMetric | string): void;
  getMetric(index: number): EvalMetric;
  get(): [string[], number[]];
}

// ---- name ------------------------------------------------------------------------------------------
declare class _NameManager { get(name: string | null, hint: string): string; }
declare class _Prefix extends _NameManager { constructor(prefix: string); readonly prefix: string; }

// Aliases for the namespaces below, whose own members of the same names would shadow these.
type _Block = Block; type _HybridBlock = HybridBlock; type _SymbolBlock = SymbolBlock; type _Parameter = Parameter;
type _Constant = Constant; type _ParameterDict = ParameterDict; type _HookHandle = HookHandle; type _Trainer = Trainer;
type _Sequential = Sequential; type _HybridSequential = HybridSequential; type _RecurrentCell = RecurrentCell;
type _HybridRecurrentCell = HybridRecurrentCell; type _SequentialRNNCell = SequentialRNNCell;
type _HybridSequentialRNNCell = HybridSequentialRNNCell; type _Loss = Loss; type _Dataset<T = unknown> = Dataset<T>;
type _Sampler = Sampler; type _BatchSampler = BatchSampler; type _DataLoader<B = NDArray[]> = DataLoader<B>;
type _Initializer = Initializer; type _Optimizer = Optimizer; type _Updater = Updater; type _LRScheduler = LRScheduler;
type _EvalMetric = EvalMetric; type _CompositeEvalMetric = CompositeEvalMetric;

// ---- namespaces -------------------------------------------------------------------------------------
type Ctor<T, K extends keyof SignatureArgs> = { new (...args: Args<K>): T; readonly prototype: T };
type ModelOptions = Record<string, unknown> & { classes?: number; ctx?: Context | Context[] | null; root?: string | URL | null;
  prefix?: string; params?: ParameterDict };
/** A model_zoo constructor: the net, or with pretrained a Promise of it once the parameters are loaded. */
export interface ModelFactory {
  (options?: ModelOptions & { pretrained?: false }): HybridBlock;
  (options: ModelOptions & { pretrained: true }): Promise<HybridBlock>;
  (options: ModelOptions & { pretrained: boolean }): HybridBlock | Promise<HybridBlock>;
}

export declare namespace gluon {
  type Block = _Block; const Block: BlockConstructor;
  type HybridBlock = _HybridBlock; const HybridBlock: HybridBlockConstructor;
  type SymbolBlock = _SymbolBlock; const SymbolBlock: SymbolBlockConstructor;
  type Parameter = _Parameter; const Parameter: ParameterConstructor;
  type Constant = _Constant; const Constant: ConstantConstructor;
  type ParameterDict = _ParameterDict; const ParameterDict: ParameterDictConstructor;
  type DeferredInitializationError = _DeferredInitializationError; const DeferredInitializationError: typeof _DeferredInitializationError;
  type HookHandle = _HookHandle; const HookHandle: { readonly prototype: _HookHandle };
  export type Trainer = _Trainer;
  export const Trainer: Ctor<_Trainer, 'Trainer'>;
  namespace nn {
    type Block = _Block; const Block: BlockConstructor;
    type HybridBlock = _HybridBlock; const HybridBlock: HybridBlockConstructor;
    type SymbolBlock = _SymbolBlock; const SymbolBlock: SymbolBlockConstructor;
    export type Sequential = _Sequential;
    export type HybridSequential = _HybridSequential;
    const Sequential: Ctor<_Sequential, 'nn.Sequential'>;
    const HybridSequential: Ctor<_HybridSequential, 'nn.HybridSequential'>;
    interface Dense extends HybridBlock { readonly weight: Parameter; readonly bias: Parameter | null; }
    const Dense: Ctor<Dense, 'nn.Dense'>;
    interface Dropout extends HybridBlock {}
    const Dropout: Ctor<Dropout, 'nn.Dropout'>;
    interface BatchNorm extends HybridBlock { readonly gamma: Parameter; readonly beta: Parameter; readonly running_mean: Parameter; readonly running_var: Parameter; }
    const BatchNorm: Ctor<BatchNorm, 'nn.BatchNorm'>;
    const BatchNormReLU: Ctor<BatchNorm, 'nn.BatchNormReLU'>;
    interface Embedding extends HybridBlock { readonly weight: Parameter; }
    const Embedding: Ctor<Embedding, 'nn.Embedding'>;
    const Flatten: Ctor<HybridBlock, 'nn.Flatten'>;
    const InstanceNorm: Ctor<HybridBlock, 'nn.InstanceNorm'>;
    const LayerNorm: Ctor<HybridBlock, 'nn.LayerNorm'>;
    const GroupNorm: Ctor<HybridBlock, 'nn.GroupNorm'>;
    /** a Block running a function (or the name of an nd function) */
    const Lambda: Ctor<Block, 'nn.Lambda'>;
    const HybridLambda: Ctor<HybridBlock, 'nn.HybridLambda'>;
    const Activation: Ctor<HybridBlock, 'nn.Activation'>;
    const LeakyReLU: Ctor<HybridBlock, 'nn.LeakyReLU'>;
    const PReLU: Ctor<HybridBlock, 'nn.PReLU'>;
    const ELU: Ctor<HybridBlock, 'nn.ELU'>;
    const SELU: Ctor<HybridBlock, 'nn.SELU'>;
    const GELU: Ctor<HybridBlock, 'nn.GELU'>;
    const Swish: Ctor<HybridBlock, 'nn.Swish'>;
    interface Conv extends HybridBlock { readonly weight: Parameter; readonly bias: Parameter | null; }
    const Conv1D: Ctor<Conv, 'nn.Conv1D'>;
    const Conv2D: Ctor<Conv, 'nn.Conv2D'>;
    const Conv3D: Ctor<Conv, 'nn.Conv3D'>;
    const Conv1DTranspose: Ctor<Conv, 'nn.Conv1DTranspose'>;
    const Conv2DTranspose: Ctor<Conv, 'nn.Conv2DTranspose'>;
    const Conv3DTranspose: Ctor<Conv, 'nn.Conv3DTranspose'>;
    const MaxPool1D: Ctor<HybridBlock, 'nn.MaxPool1D'>;
    const MaxPool2D: Ctor<HybridBlock, 'nn.MaxPool2D'>;
    const MaxPool3D: Ctor<HybridBlock, 'nn.MaxPool3D'>;
    const AvgPool1D: Ctor<HybridBlock, 'nn.AvgPool1D'>;
    const AvgPool2D: Ctor<HybridBlock, 'nn.AvgPool2D'>;
    const AvgPool3D: Ctor<HybridBlock, 'nn.AvgPool3D'>;
    const GlobalMaxPool1D: Ctor<HybridBlock, 'nn.GlobalMaxPool1D'>;
    const GlobalMaxPool2D: Ctor<HybridBlock, 'nn.GlobalMaxPool2D'>;
    const GlobalMaxPool3D: Ctor<HybridBlock, 'nn.GlobalMaxPool3D'>;
    const GlobalAvgPool1D: Ctor<HybridBlock, 'nn.GlobalAvgPool1D'>;
    const GlobalAvgPool2D: Ctor<HybridBlock, 'nn.GlobalAvgPool2D'>;
    const GlobalAvgPool3D: Ctor<HybridBlock, 'nn.GlobalAvgPool3D'>;
    const ReflectionPad2D: Ctor<HybridBlock, 'nn.ReflectionPad2D'>;
  }
  namespace rnn {
    export type RecurrentCell = _RecurrentCell;
    export type HybridRecurrentCell = _HybridRecurrentCell;
    const RecurrentCell: Ctor<_RecurrentCell, 'rnn.RecurrentCell'>;
    const HybridRecurrentCell: Ctor<_HybridRecurrentCell, 'rnn.HybridRecurrentCell'>;
    const RNNCell: Ctor<_HybridRecurrentCell, 'rnn.RNNCell'>;
    const LSTMCell: Ctor<_HybridRecurrentCell, 'rnn.LSTMCell'>;
    const GRUCell: Ctor<_HybridRecurrentCell, 'rnn.GRUCell'>;
    const SequentialRNNCell: Ctor<_SequentialRNNCell, 'rnn.SequentialRNNCell'>;
    const HybridSequentialRNNCell: Ctor<_HybridSequentialRNNCell, 'rnn.HybridSequentialRNNCell'>;
    const DropoutCell: Ctor<_HybridRecurrentCell, 'rnn.DropoutCell'>;
    const ModifierCell: Ctor<_HybridRecurrentCell, 'rnn.ModifierCell'>;
    const ZoneoutCell: Ctor<_HybridRecurrentCell, 'rnn.ZoneoutCell'>;
    const ResidualCell: Ctor<_HybridRecurrentCell, 'rnn.ResidualCell'>;
    const BidirectionalCell: Ctor<_HybridRecurrentCell, 'rnn.BidirectionalCell'>;
    const RNN: Ctor<RecurrentLayer, 'rnn.RNN'>;
    const LSTM: Ctor<RecurrentLayer, 'rnn.LSTM'>;
    const GRU: Ctor<RecurrentLayer, 'rnn.GRU'>;
  }
  namespace loss {
    export type Loss = _Loss;
    const Loss: Ctor<_Loss, 'gluon.loss.Loss'>;
    const L2Loss: Ctor<_Loss, 'gluon.loss.L2Loss'>;
    const L1Loss: Ctor<_Loss, 'gluon.loss.L1Loss'>;
    const SigmoidBinaryCrossEntropyLoss: Ctor<_Loss, 'gluon.loss.SigmoidBinaryCrossEntropyLoss'>;
    const SigmoidBCELoss: typeof SigmoidBinaryCrossEntropyLoss;
    const SoftmaxCrossEntropyLoss: Ctor<_Loss, 'gluon.loss.SoftmaxCrossEntropyLoss'>;
    const SoftmaxCELoss: typeof SoftmaxCrossEntropyLoss;
    const KLDivLoss: Ctor<_Loss, 'gluon.loss.KLDivLoss'>;
    const HuberLoss: Ctor<_Loss, 'gluon.loss.HuberLoss'>;
    const HingeLoss: Ctor<_Loss, 'gluon.loss.HingeLoss'>;
    const SquaredHingeLoss: Ctor<_Loss, 'gluon.loss.SquaredHingeLoss'>;
    const LogisticLoss: Ctor<_Loss, 'gluon.loss.LogisticLoss'>;
    const TripletLoss: Ctor<_Loss, 'gluon.loss.TripletLoss'>;
    const PoissonNLLLoss: Ctor<_Loss, 'gluon.loss.PoissonNLLLoss'>;
    const CosineEmbeddingLoss: Ctor<_Loss, 'gluon.loss.CosineEmbeddingLoss'>;
    const SDMLLoss: Ctor<_Loss, 'gluon.loss.SDMLLoss'>;
    const CTCLoss: Ctor<_Loss, 'gluon.loss.CTCLoss'>;
  }
  namespace data {
    export type Dataset<T = unknown> = _Dataset<T>;
    export type Sampler = _Sampler;
    export type DataLoader<B = NDArray[]> = _DataLoader<B>;
    /** subclass and define get(idx) and length */
    const Dataset: { new <T = unknown>(): _Dataset<T>; readonly prototype: _Dataset };
    const SimpleDataset: { new <T = unknown>(data: ArrayLike<T> | { get(i: number): T; readonly length: number }): _Dataset<T>;
      new <T = unknown>(options: { data: ArrayLike<T> | { get(i: number): T; readonly length: number } }): _Dataset<T> };
    /** samples are [a[i], b[i], ...] */
    const ArrayDataset: new (...arrays: (NDArray | ArrayLike<unknown>)[]) => _Dataset<any[]>;
    const Sampler: { new (): _Sampler; readonly prototype: _Sampler };
    const SequentialSampler: Ctor<_Sampler, 'SequentialSampler'>;
    const RandomSampler: Ctor<_Sampler, 'RandomSampler'>;
    const FilterSampler: Ctor<_Sampler, 'FilterSampler'>;
    const BatchSampler: Ctor<_BatchSampler, 'BatchSampler'>;
    const DataLoader: Ctor<_DataLoader, 'DataLoader'>;
    /** resolves to the dataset of a .rec file's records (bytes), by its .idx */
    const RecordFileDataset: new (...args: Args<'data.RecordFileDataset'>) => Promise<_Dataset<Uint8Array | null>>;
    function defaultBatchifyFn(data: unknown[]): NDArray | NDArray[] | unknown[];
    const default_batchify_fn: typeof defaultBatchifyFn;
    const defaultMpBatchifyFn: typeof defaultBatchifyFn;
    const default_mp_batchify_fn: typeof defaultBatchifyFn;
    namespace vision {
      /** resolves to the dataset (files from root; nothing is downloaded): samples [image (28, 28, 1) uint8, label] */
      const MNIST: new (...args: Args<'vision.MNIST'>) => Promise<_Dataset<[NDArray, number]> & { dispose(): void }>;
      const FashionMNIST: new (...args: Args<'vision.FashionMNIST'>) => Promise<_Dataset<[NDArray, number]> & { dispose(): void }>;
      /** resolves to the dataset: samples [image (32, 32, 3) uint8, label] */
      const CIFAR10: new (...args: Args<'vision.CIFAR10'>) => Promise<_Dataset<[NDArray, number]> & { dispose(): void }>;
      const CIFAR100: new (...args: Args<'vision.CIFAR100'>) => Promise<_Dataset<[NDArray, number]> & { dispose(): void }>;
      /** resolves to the dataset of image records: get(i) resolves to [image, label] */
      const ImageRecordDataset: new (...args: Args<'vision.ImageRecordDataset'>) => Promise<_Dataset<Promise<[NDArray, number | Float32Array]>>>;
      /** Node: one class per sub-folder; get(i) resolves to [image, label] */
      const ImageFolderDataset: new (...args: Args<'vision.ImageFolderDataset'>) => _Dataset<Promise<[NDArray, number]>> & {
        readonly synsets: string[]; readonly items: [string, number][] };
      namespace transforms {
        /** runs the transforms in order */
        const Compose: Ctor<Sequential, 'transforms.Compose'>;
        const Cast: Ctor<HybridBlock, 'transforms.Cast'>;
        /** HWC uint8 [0, 255] -> CHW float32 [0, 1] */
        const ToTensor: Ctor<HybridBlock, 'transforms.ToTensor'>;
        const Normalize: Ctor<HybridBlock, 'transforms.Normalize'>;
        const Resize: Ctor<HybridBlock, 'transforms.Resize'>;
        const CenterCrop: Ctor<Block, 'transforms.CenterCrop'>;
        const RandomResizedCrop: Ctor<Block, 'transforms.RandomResizedCrop'>;
        const CropResize: Ctor<HybridBlock, 'transforms.CropResize'>;
        const RandomFlipLeftRight: Ctor<HybridBlock, 'transforms.RandomFlipLeftRight'>;
        const RandomFlipTopBottom: Ctor<HybridBlock, 'transforms.RandomFlipTopBottom'>;
        const RandomBrightness: Ctor<HybridBlock, 'transforms.RandomBrightness'>;
        const RandomContrast: Ctor<HybridBlock, 'transforms.RandomContrast'>;
        const RandomSaturation: Ctor<HybridBlock, 'transforms.RandomSaturation'>;
        const RandomHue: Ctor<HybridBlock, 'transforms.RandomHue'>;
        const RandomColorJitter: Ctor<HybridBlock, 'transforms.RandomColorJitter'>;
        const RandomLighting: Ctor<HybridBlock, 'transforms.RandomLighting'>;
        const RandomApply: Ctor<Sequential, 'transforms.RandomApply'>;
        function centerCrop(src: NDArray, size: number | [number, number], interp?: number): [NDArray, [number, number, number, number]];
        function fixedCrop(src: NDArray, x0: number, y0: number, w: number, h: number, size?: [number, number] | null, interp?: number): NDArray;
        function randomSizeCrop(src: NDArray, size: number | [number, number], area: number | [number, number], ratio: [number, number], interp?: number): [NDArray, [number, number, number, number]];
        function scaleDown(srcSize: [number, number], size: [number, number]): [number, number];
        function getInterpMethod(interp: number, sizes?: [number, number, number, number] | null): number;
      }
    }
  }
  namespace utils {
    function splitData(...args: Args<'utils.split_data'>): NDArray[];
    const split_data: typeof splitData;
    function splitAndLoad(...args: Args<'utils.split_and_load'>): NDArray[];
    const split_and_load: typeof splitAndLoad;
    /** rescales the arrays in place so that their joint 2-norm is at most maxNorm; returns the norm before */
    function clipGlobalNorm(...args: Args<'utils.clip_global_norm'>): number;
    const clip_global_norm: typeof clipGlobalNorm;
    function checkSha1(...args: Args<'utils.check_sha1'>): Promise<boolean>;
    const check_sha1: typeof checkSha1;
  }
  namespace model_zoo {
    namespace vision {
      const modelNames: readonly string[];
      function getModel(name: string, options?: ModelOptions & { pretrained?: false }): HybridBlock;
      function getModel(name: string, options: ModelOptions & { pretrained: true }): Promise<HybridBlock>;
      const get_model: typeof getModel;
      const alexnet: ModelFactory;
      const densenet121: ModelFactory; const densenet161: ModelFactory; const densenet169: ModelFactory; const densenet201: ModelFactory;
      const inception_v3: ModelFactory;
      const mobilenet0_25: ModelFactory; const mobilenet0_5: ModelFactory; const mobilenet0_75: ModelFactory; const mobilenet1_0: ModelFactory;
      const mobilenet_v2_0_25: ModelFactory; const mobilenet_v2_0_5: ModelFactory; const mobilenet_v2_0_75: ModelFactory;
      const mobilenet_v2_1_0: ModelFactory;
      const resnet18_v1: ModelFactory; const resnet34_v1: ModelFactory; const resnet50_v1: ModelFactory; const resnet101_v1: ModelFactory;
      const resnet152_v1: ModelFactory; const resnet18_v2: ModelFactory; const resnet34_v2: ModelFactory; const resnet50_v2: ModelFactory;
      const resnet101_v2: ModelFactory; const resnet152_v2: ModelFactory;
      const squeezenet1_0: ModelFactory; const squeezenet1_1: ModelFactory;
      const vgg11: ModelFactory; const vgg13: ModelFactory; const vgg16: ModelFactory; const vgg19: ModelFactory;
      const vgg11_bn: ModelFactory; const vgg13_bn: ModelFactory; const vgg16_bn: ModelFactory; const vgg19_bn: ModelFactory;
      function getResnet(version: 1 | 2, numLayers: 18 | 34 | 50 | 101 | 152, options?: ModelOptions & { pretrained?: boolean }): HybridBlock | Promise<HybridBlock>;
      const get_resnet: typeof getResnet;
      function getVgg(numLayers: 11 | 13 | 16 | 19, options?: ModelOptions & { pretrained?: boolean; batch_norm?: boolean; batchNorm?: boolean }): HybridBlock | Promise<HybridBlock>;
      const get_vgg: typeof getVgg;
      function getMobilenet(multiplier: number, options?: ModelOptions & { pretrained?: boolean }): HybridBlock | Promise<HybridBlock>;
      const get_mobilenet: typeof getMobilenet;
      function getMobilenetV2(multiplier: number, options?: ModelOptions & { pretrained?: boolean }): HybridBlock | Promise<HybridBlock>;
      const get_mobilenet_v2: typeof getMobilenetV2;
      const AlexNet: new (...args: any[]) => HybridBlock;
      const DenseNet: new (...args: any[]) => HybridBlock;
      const Inception3: new (...args: any[]) => HybridBlock;
      const MobileNet: new (...args: any[]) => HybridBlock;
      const MobileNetV2: new (...args: any[]) => HybridBlock;
      const ResNetV1: new (...args: any[]) => HybridBlock;
      const ResNetV2: new (...args: any[]) => HybridBlock;
      const BasicBlockV1: new (...args: any[]) => HybridBlock;
      const BasicBlockV2: new (...args: any[]) => HybridBlock;
      const BottleneckV1: new (...args: any[]) => HybridBlock;
      const BottleneckV2: new (...args: any[]) => HybridBlock;
      const SqueezeNet: new (...args: any[]) => HybridBlock;
      const VGG: new (...args: any[]) => HybridBlock;
    }
    namespace model_store {
      const apache_repo_url: string;
      const modelSha1: Readonly<Record<string, string>>;
      function getModelFile(name: string, root?: string | URL | null): string;
      const get_model_file: typeof getModelFile;
      function shortHash(name: string): string;
      const short_hash: typeof shortHash;
      function defaultRoot(): string | null;
      function loadPretrained<B extends Block>(net: B, name: string, root?: string | URL | null, ctx?: Context | Context[] | null): Promise<B>;
      function purge(root?: string | null): void;
    }
    const modelStore: typeof model_store;
  }
  const modelZoo: typeof model_zoo;
  namespace contrib {
    namespace nn {
      /** runs every child on the input and concatenates their outputs along axis */
      const Concurrent: Ctor<Sequential, 'contrib.nn.Concurrent'>;
      const HybridConcurrent: Ctor<HybridSequential, 'contrib.nn.HybridConcurrent'>;
      const Identity: Ctor<HybridBlock, 'contrib.nn.Identity'>;
      const SyncBatchNorm: Ctor<HybridBlock, 'contrib.nn.SyncBatchNorm'>;
      const PixelShuffle1D: Ctor<HybridBlock, 'contrib.nn.PixelShuffle1D'>;
      const PixelShuffle2D: Ctor<HybridBlock, 'contrib.nn.PixelShuffle2D'>;
      const PixelShuffle3D: Ctor<HybridBlock, 'contrib.nn.PixelShuffle3D'>;
    }
    namespace rnn {
      /** an LSTM with a projected recurrent state: states [r (N, projection_size), c (N, hidden_size)] */
      const LSTMPCell: Ctor<_HybridRecurrentCell, 'rnn.LSTMPCell'>;
      /** dropout masks on inputs, states and outputs drawn once per sequence */
      const VariationalDropoutCell: Ctor<_HybridRecurrentCell, 'rnn.VariationalDropoutCell'>;
      /** convolutional recurrent cells (stride 1; odd h2h kernels keep the state's size) */
      const Conv1DRNNCell: Ctor<_HybridRecurrentCell, 'rnn.Conv1DRNNCell'>;
      const Conv1DLSTMCell: Ctor<_HybridRecurrentCell, 'rnn.Conv1DLSTMCell'>;
      const Conv1DGRUCell: Ctor<_HybridRecurrentCell, 'rnn.Conv1DGRUCell'>;
      const Conv2DRNNCell: Ctor<_HybridRecurrentCell, 'rnn.Conv2DRNNCell'>;
      const Conv2DLSTMCell: Ctor<_HybridRecurrentCell, 'rnn.Conv2DLSTMCell'>;
      const Conv2DGRUCell: Ctor<_HybridRecurrentCell, 'rnn.Conv2DGRUCell'>;
      const Conv3DRNNCell: Ctor<_HybridRecurrentCell, 'rnn.Conv3DRNNCell'>;
      const Conv3DLSTMCell: Ctor<_HybridRecurrentCell, 'rnn.Conv3DLSTMCell'>;
      const Conv3DGRUCell: Ctor<_HybridRecurrentCell, 'rnn.Conv3DGRUCell'>;
    }
  }
}

export declare namespace init {
  export type Initializer = _Initializer;
  const Initializer: { new (): _Initializer; readonly prototype: _Initializer };
  const Zero: Ctor<_Initializer, 'init.Zero'>;
  const One: Ctor<_Initializer, 'init.One'>;
  const Constant: Ctor<_Initializer, 'init.Constant'>;
  const Uniform: Ctor<_Initializer, 'init.Uniform'>;
  const Normal: Ctor<_Initializer, 'init.Normal'>;
  const Orthogonal: Ctor<_Initializer, 'init.Orthogonal'>;
  const Xavier: Ctor<_Initializer, 'init.Xavier'>;
  const MSRAPrelu: Ctor<_Initializer, 'init.MSRAPrelu'>;
  const Bilinear: Ctor<_Initializer, 'init.Bilinear'>;
  const LSTMBias: Ctor<_Initializer, 'init.LSTMBias'>;
  const Mixed: Ctor<_Initializer, 'init.Mixed'>;
  const Load: Ctor<_Initializer, 'init.Load'>;
  /** Python's json.dumps of a value (the form dumps() writes: floats with a decimal point) */
  function pyJson(value: unknown): string;
  /** an Initializer from a name ('xavier'), a dumps() string or an Initializer */
  function create(init: string | _Initializer): _Initializer;
}

export declare namespace optimizer {
  export type Optimizer = _Optimizer;
  const Optimizer: Ctor<_Optimizer, 'optimizer.Optimizer'>;
  const SGD: Ctor<_Optimizer, 'optimizer.SGD'>;
  const ccSGD: Ctor<_Optimizer, 'optimizer.SGD'>;
  const Signum: Ctor<_Optimizer, 'optimizer.Signum'>;
  const FTML: Ctor<_Optimizer, 'optimizer.FTML'>;
  const LAMB: Ctor<_Optimizer, 'optimizer.LAMB'>;
  const LARS: Ctor<_Optimizer, 'optimizer.LARS'>;
  const LBSGD: Ctor<_Optimizer, 'optimizer.LBSGD'>;
  const DCASGD: Ctor<_Optimizer, 'optimizer.DCASGD'>;
  const NAG: Ctor<_Optimizer, 'optimizer.NAG'>;
  const SGLD: Ctor<_Optimizer, 'optimizer.SGLD'>;
  const Adam: Ctor<_Optimizer, 'optimizer.Adam'>;
  const AdaGrad: Ctor<_Optimizer, 'optimizer.AdaGrad'>;
  const RMSProp: Ctor<_Optimizer, 'optimizer.RMSProp'>;
  const AdaDelta: Ctor<_Optimizer, 'optimizer.AdaDelta'>;
  const Ftrl: Ctor<_Optimizer, 'optimizer.Ftrl'>;
  const Adamax: Ctor<_Optimizer, 'optimizer.Adamax'>;
  const Nadam: Ctor<_Optimizer, 'optimizer.Nadam'>;
  const Test: Ctor<_Optimizer, 'optimizer.Test'>;
  /** Optimizer.create_optimizer(name, **kwargs) */
  function create(name: string, kwargs?: Record<string, unknown>): _Optimizer;
  function register<T extends new (...args: any[]) => _Optimizer>(klass: T): T;
  type Updater = _Updater;
  const Updater: { new (optimizer: _Optimizer): _Updater; readonly prototype: _Updater };
  function getUpdater(optimizer: _Optimizer): _Updater;
  const get_updater: typeof getUpdater;
}

export declare namespace lr_scheduler {
  export type LRScheduler = _LRScheduler;
  const LRScheduler: Ctor<_LRScheduler, 'lr_scheduler.LRScheduler'>;
  const FactorScheduler: Ctor<_LRScheduler, 'lr_scheduler.FactorScheduler'>;
  const MultiFactorScheduler: Ctor<_LRScheduler, 'lr_scheduler.MultiFactorScheduler'>;
  const PolyScheduler: Ctor<_LRScheduler, 'lr_scheduler.PolyScheduler'>;
  const CosineScheduler: Ctor<_LRScheduler, 'lr_scheduler.CosineScheduler'>;
}
export { lr_scheduler as lrScheduler };

export declare namespace metric {
  export type EvalMetric = _EvalMetric;
  const EvalMetric: Ctor<_EvalMetric, 'metric.EvalMetric'>;
  const CompositeEvalMetric: Ctor<_CompositeEvalMetric, 'metric.CompositeEvalMetric'>;
  const Accuracy: Ctor<_EvalMetric, 'metric.Accuracy'>;
  const TopKAccuracy: Ctor<_EvalMetric, 'metric.TopKAccuracy'>;
  const F1: Ctor<_EvalMetric, 'metric.F1'>;
  const MCC: Ctor<_EvalMetric, 'metric.MCC'>;
  const Perplexity: Ctor<_EvalMetric, 'metric.Perplexity'>;
  const MAE: Ctor<_EvalMetric, 'metric.MAE'>;
  const MSE: Ctor<_EvalMetric, 'metric.MSE'>;
  const RMSE: Ctor<_EvalMetric, 'metric.RMSE'>;
  const CrossEntropy: Ctor<_EvalMetric, 'metric.CrossEntropy'>;
  const NegativeLogLikelihood: Ctor<_EvalMetric, 'metric.NegativeLogLikelihood'>;
  const PearsonCorrelation: Ctor<_EvalMetric, 'metric.PearsonCorrelation'>;
  const PCC: Ctor<_EvalMetric, 'metric.PCC'>;
  const Loss: Ctor<_EvalMetric, 'metric.Loss'>;
  const Torch: Ctor<_EvalMetric, 'metric.Torch'>;
  const Caffe: Ctor<_EvalMetric, 'metric.Caffe'>;
  const CustomMetric: Ctor<_EvalMetric, 'metric.CustomMetric'>;
  /** a CustomMetric from feval(label, pred) on plain arrays */
  function np(...args: Args<'metric.np'>): _EvalMetric;
  /** a metric from a name ('acc', 'top_k_accuracy', ...), a function, an EvalMetric or a list of them */
  function create(metric: string | _EvalMetric | ((label: NDArray, pred: NDArray) => number)
    | (string | _EvalMetric)[], ...args: unknown[]): _EvalMetric;
  function register<T extends new (...args: any[]) => _EvalMetric>(klass: T, name?: string | null): T;
  function alias(...aliases: string[]): <T>(klass: T) => T;
  function checkLabelShapes(labels: unknown, preds: unknown, wrap?: boolean, shape?: boolean): [unknown, unknown];
  const check_label_shapes: typeof checkLabelShapes;
}

export interface RecordingOptions { trainMode?: boolean; train_mode?: boolean; }
export interface BackwardOptions { headGrads?: NDArray | NDArray[] | null; retainGraph?: boolean; trainMode?: boolean; }
export interface GradOptions extends BackwardOptions {
  /** Record the gradient computation, so that the gradients can be differentiated again (second order); retainGraph then defaults to true. */
  createGraph?: boolean;
}
/** A custom differentiable function: forward(...inputs) and backward(...outputGrads) on NDArrays; instances are callable. */
export interface AutogradFunction {
  (...inputs: NDArray[]): NDArray | NDArray[];
  forward(...inputs: NDArray[]): NDArray | NDArray[];
  backward(...outputGrads: NDArray[]): NDArray | NDArray[];
  saveForBackward(...arrays: NDArray[]): void;
  save_for_backward(...arrays: NDArray[]): void;
  readonly savedTensors: NDArray[];
  readonly saved_tensors: NDArray[];
}
export declare namespace autograd {
  /** runs fn recording the operations for backward (Python's `with autograd.record():`) */
  function record<T>(fn: () => T, trainMode?: boolean): T;
  function pause<T>(fn: () => T, trainMode?: boolean): T;
  function trainMode<T>(fn: () => T): T;
  function predictMode<T>(fn: () => T): T;
  const train_mode: typeof trainMode;
  const predict_mode: typeof predictMode;
  function isRecording(): boolean;
  function isTraining(): boolean;
  const is_recording: typeof isRecording;
  const is_training: typeof isTraining;
  function setTraining(flag: boolean): boolean;
  function setRecording(flag: boolean): boolean;
  const set_training: typeof setTraining;
  const set_recording: typeof setRecording;
  function markVariables(variables: NDArray | NDArray[], gradients: NDArray | NDArray[], gradReqs?: GradReq | GradReq[]): void;
  const mark_variables: typeof markVariables;
  function backward(heads: NDArray | NDArray[], headGrads?: NDArray | NDArray[] | null, retainGraph?: boolean, trainMode?: boolean): void;
  function backward(heads: NDArray | NDArray[], options: BackwardOptions): void;
  /** gradients of heads with respect to variables (one array for one variable) */
  function grad(heads: NDArray | NDArray[], variables: NDArray, options?: GradOptions): NDArray;
  function grad(heads: NDArray | NDArray[], variables: NDArray[], options?: GradOptions): NDArray[];
  const Function: { new (): AutogradFunction; readonly prototype: AutogradFunction };
}

export declare namespace name {
  type NameManager = _NameManager; const NameManager: typeof _NameManager;
  type Prefix = _Prefix; const Prefix: typeof _Prefix;
  /** runs fn with manager as the current name manager (Python's `with mx.name.Prefix(...):`) */
  function withNameManager<T>(manager: NameManager, fn: () => T): T;
  function current(): NameManager;
}

// Control flow (js/control_flow.mjs): nd.contrib / sym.contrib (and so F.contrib in hybridForward)
// foreach, while_loop and cond with MXNet's Python signatures; outputs and states keep the nesting
// of what the body returns (a value or nested lists of values).
type _Nested<T> = T | _Nested<T>[];
export interface NdContribOps {
  /** runs body(slice_t, states) -> [outputs, states] over axis 0 of data; returns [stacked outputs, final states] */
  foreach(...args: contrib_foreachArgs): [_Nested<NDArray>, _Nested<NDArray>];
  /** while cond(...vars) and fewer than max_iterations steps: func(...vars) -> [step outputs, new vars]; returns [outputs stacked and padded to max_iterations, final vars] */
  while_loop(...args: contrib_while_loopArgs): [_Nested<NDArray>, _Nested<NDArray>];
  whileLoop(...args: contrib_while_loopArgs): [_Nested<NDArray>, _Nested<NDArray>];
  /** then_func() when pred (one element) is non-zero, else else_func() */
  cond(...args: contrib_condArgs): any;
}
export interface SymContribOps {
  /** traces body into the subgraph of a _foreach node */
  foreach(...args: contrib_foreachArgs): [_Nested<Symbol>, _Nested<Symbol>];
  /** traces cond and func into the subgraphs of a _while_loop node */
  while_loop(...args: contrib_while_loopArgs): [_Nested<Symbol>, _Nested<Symbol>];
  whileLoop(...args: contrib_while_loopArgs): [_Nested<Symbol>, _Nested<Symbol>];
  /** traces pred, then_func and else_func into the subgraphs of a _cond node */
  cond(...args: contrib_condArgs): _Nested<Symbol>;
}
