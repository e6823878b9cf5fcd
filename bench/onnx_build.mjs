// onnx_build.mjs -- builds small ONNX models in memory (onnx-proto's protobuf classes) so that
// ONNX Runtime (web and node) can run the same weights as mxnet-wasm in bench/peers.mjs.
//
//   const g = new OnnxGraph();
//   const y = g.node('Gemm', [x, g.init('w', [out, in], w), g.init('b', [out], b)], { transB: 1 });
//   const bytes = g.finish(['data', [1, 512]], [y, [1, out]]);   // Uint8Array of a ModelProto
import onnxpkg from 'onnx-proto';

const { onnx } = onnxpkg;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const OPSET = 13;

// shape null: left for the runtime to infer (an output's shape).
function valueInfo(name, shape) {
  const tensorType = { elemType: FLOAT };
  if (shape) tensorType.shape = { dim: shape.map((d) => ({ dimValue: d })) };
  return { name, type: { tensorType } };
}

// One ONNX attribute: integers and integer lists only (all these graphs need).
function attribute(name, value) {
  const T = onnx.AttributeProto.AttributeType;
  if (Array.isArray(value)) return { name, type: T.INTS, ints: value };
  if (Number.isInteger(value)) return { name, type: T.INT, i: value };
  if (typeof value === 'number') return { name, type: T.FLOAT, f: value };
  throw new Error(`onnx_build: attribute ${name} has an unsupported value ${value}`);
}

export class OnnxGraph {
  constructor(name = 'graph') {
    this.name = name;
    this.nodes = [];
    this.inits = [];
    this.count = 0;
  }

  // A float32 initializer (weights); values copied from a Float32Array. Returns its name.
  init(name, dims, values) {
    const n = dims.reduce((a, b) => a * b, 1);
    if (values.length !== n) throw new Error(`onnx_build: initializer ${name} has ${values.length} values, dims ${dims} need ${n}`);
    const f32 = Float32Array.from(values);
    this.inits.push({ name, dims, dataType: FLOAT, rawData: new Uint8Array(f32.buffer) });
    return name;
  }

  // Adds one node with a single output; returns the output's name.
  node(opType, inputs, attrs = {}) {
    const output = `${opType.toLowerCase()}${this.count++}`;
    this.nodes.push({
      opType, name: `${output}_node`, input: inputs, output: [output],
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    });
    return output;
  }

  // input/output: [name, shape] (input static; output shape may be null). Returns the serialized ModelProto.
  finish([inName, inShape], [outName, outShape]) {
    const model = onnx.ModelProto.create({
      irVersion: 7,
      producerName: 'mxnet-wasm bench/onnx_build.mjs',
      opsetImport: [{ domain: '', version: OPSET }],
      graph: {
        name: this.name,
        node: this.nodes,
        initializer: this.inits,
        input: [valueInfo(inName, inShape)],
        output: [valueInfo(outName, outShape)],
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}
