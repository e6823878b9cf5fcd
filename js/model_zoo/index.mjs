// gluon.model_zoo (MXNet 1.9.1 python/mxnet/gluon/model_zoo/): `vision` (the architectures and
// get_model) and `model_store` (pretrained file names, get_model_file, purge).
import * as visionModule from './vision/index.mjs';
import * as storeModule from './model_store.mjs';

export const vision = Object.freeze({ ...visionModule });
export const model_store = Object.freeze({ ...storeModule });
export const modelStore = model_store;
export default Object.freeze({ vision, model_store, modelStore });
