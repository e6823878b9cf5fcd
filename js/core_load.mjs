// core_load.mjs -- the one top-level await the API's modules depend on: the C core's load (the
// one the entry started, tiers.mjs preloadCore) and, on Node < 20.16, the Node built-ins the
// modules read synchronously (platform.mjs). A module of its own beside the bundles: the ES module
// bundle imports it, and the script form of the API (api_script.mjs) is given its result instead,
// because a script cannot await. `loaded` is {core} or {error}: core.mjs raises the error as an
// MXNetError.
import { preloadCore } from './tiers.mjs';
import { preloadNodeBuiltins } from './platform.mjs';

export const loaded = await Promise.all([preloadCore(), preloadNodeBuiltins()])
  .then(([core]) => ({ core }), (error) => ({ error }));
