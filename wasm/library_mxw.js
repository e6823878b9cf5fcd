// --js-library: the JavaScript functions the C core imports. mxw_js_custom_* (csrc/ops/
// custom_function.c) call what js/autograd.mjs installs on the module; both run on the main
// thread. mxw_js_add_workers (csrc/core/parallel.c, threaded tiers only) adds workers to
// Emscripten's pthread pool, which starts empty (js/tiers.mjs), and starts loading the module in
// them (through node_pthread_unref.js's wrapper in Node: unref'd once loaded).
mergeInto(LibraryManager.library, {
  mxw_js_custom_backward: function (id, nog, ograds, nig, outs, err, errlen) {
    return Module['mxwCustomBackward'](id, nog, ograds, nig, outs, err, errlen);
  },
  mxw_js_custom_refs: function (id, delta) {
    if (Module['mxwCustomRefs']) Module['mxwCustomRefs'](id, delta);
  },
  mxw_js_add_workers__deps: ['$PThread'],
  // returns how many were added: a Worker the host refuses (a page's CSP, a missing file) stops
  // it, and the pool runs with fewer threads instead of throwing through the C caller
  mxw_js_add_workers: function (n) {
    for (var i = 0; i < n; i++) {
      try {
        PThread.allocateUnusedWorker();
      } catch (e) {
        return i;
      }
      PThread.loadWasmModuleToWorker(PThread.unusedWorkers[PThread.unusedWorkers.length - 1]);
    }
    return n;
  },
});
