// common.mjs -- what the vision model zoo's modules share: their Python signatures (bound by
// signature.mjs: positional parameters in Python's order, then one options object naming any,
// snake_case or camelCase) and the `pretrained` step of the constructor functions.
import { defineSignature } from '../../signature.mjs';
import { loadPretrained } from '../model_store.mjs';

// Python's **kwargs every Block passes on to Block.__init__.
export const BLOCK_KW = [['prefix', null, 'str'], ['params', null, 'params']];
// get_<model>(..., pretrained=False, ctx=cpu(), root='$MXNET_HOME/models', **kwargs)
export const PRETRAINED = [['pretrained', false, 'bool'], ['ctx', null, 'ctx'], ['root', null, 'any']];

export const sig = (name, params, kwargs = BLOCK_KW) => defineSignature(`model_zoo.vision.${name}`, params, { kwargs });
export const blockArgs = (a) => ({ prefix: a.prefix, params: a.params });
// The named values of a bound argument object (camelCase keys), for the next call's options.
export const pick = (a, names) => Object.fromEntries(names.map((n) => [n, a[n]]));

// Python's int(x) for the channel multipliers (truncation toward zero).
export const int = (x) => Math.trunc(x);

// A constructor function's result: the net, or with pretrained a Promise of it once the
// parameters are loaded from root (reading is async in JS, js-api.md rule 7).
export function finish(net, a, modelName) {
  if (!a.pretrained) return net;
  return loadPretrained(net, modelName, a.root, a.ctx);
}
