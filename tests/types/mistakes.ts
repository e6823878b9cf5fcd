// Deliberate mistakes: tests/js/types.test.mjs compiles this file with tsc --strict --noEmit and
// expects an error on every line marked MISTAKE and on no other line.
import * as mx from 'mxnet-wasm';
import { nd, gluon, sym, autograd } from 'mxnet-wasm';

const x = nd.ones([2, 3]);
nd.FullyConected(x); // MISTAKE: a typo in an op name (no catch-all index signature)
nd.softmax(x, { axis: 'one' }); // MISTAKE: an attribute of the wrong type
nd.softmax(x, { axsi: 1 }); // MISTAKE: an unknown attribute
nd.Convolution(x, { kernel: [3, 3], numFilter: 2 }); // MISTAKE: ops take MXNet's attribute names (num_filter)
const a: Int32Array = x.toTypedArray(); // MISTAKE: float32 unless the dtype is given
const b: Float32Array = x.toTypedArray<'int32'>(); // MISTAKE: an int32 array is an Int32Array
x.toTypedArray<'float42'>(); // MISTAKE: not a dtype
x.astype('float42'); // MISTAKE: not a dtype
x.expDims(0); // MISTAKE: a typo in a fluent method
x.sliceAxis('0', 0, 1); // MISTAKE: a fluent method's attribute of the wrong type
new gluon.nn.Dense('ten'); // MISTAKE: units is a number
new gluon.nn.Dense(10, { activaton: 'relu' }); // MISTAKE: a typo in an option
new gluon.nn.Conv2D({ channels: 3 }, 5); // MISTAKE: the options object comes last
new gluon.nn.Dens(10); // MISTAKE: no such layer
gluon.nn.attrFloat; // MISTAKE: an internal helper is not public
const net = new gluon.nn.HybridSequential();
const s: string = net(x); // MISTAKE: a block called on an NDArray gives an NDArray
net.hybridise(); // MISTAKE: the method is hybridize
net.initialize(mx.init.Xavier); // MISTAKE: an Initializer instance, not the class
new mx.init.Xavier({ magnitude: 'big' }); // MISTAKE: magnitude is a number
new gluon.Trainer(net.collectParams(), 'sgd', { learning_rate: 0.1 }).step(); // MISTAKE: step needs the batch size
new gluon.loss.SoftmaxCrossEntropyLoss({ sparseLabel: 'yes' }); // MISTAKE: sparse_label is a boolean
new mx.metric.Accuracy().update(x); // MISTAKE: update takes labels and predictions
autograd.record(x); // MISTAKE: record takes a function
sym.var(3); // MISTAKE: a symbol's name is a string
gluon.SymbolBlock.imports('a-symbol.json', ['data'], 'a.params', { onProgres: () => {} }); // MISTAKE: a typo in a load option
mx.image.fromPixels(x); // MISTAKE: fromPixels takes pixels (ImageData, a canvas, ...), not an NDArray
const blk: gluon.Block = new gluon.Block();
blk.dispose(1); // MISTAKE: dispose takes no argument
mx.lr_scheduler.FactorScheduler; mx.lr_scheduler.FactorSchedular; // MISTAKE: a typo in a class name
import { Block } from 'mxnet-wasm'; const c = new Block(); // MISTAKE: Block is gluon.Block, not a top-level export
