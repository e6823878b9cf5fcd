// config.mjs -- 'mxnet-wasm/config': what must be set before the package loads, without loading
// it (the package instantiates its wasm when first imported):
//   import { setWasmPaths } from 'mxnet-wasm/config';
//   setWasmPaths('https://cdn.example/mxnet-wasm@0.1.0/dist/');
//   const mx = await import('mxnet-wasm');
// setMemoryLimit(bytes) caps the wasm heap (default 4 GiB); requestTier is what
// 'mxnet-wasm/<tier>' calls.
export { setWasmPaths, setMemoryLimit, requestTier } from './tiers.mjs';
