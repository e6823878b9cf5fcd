// Threaded tiers (--post-js). The pool's workers must not keep a Node process alive after the
// user's work ends: each is unref'd once it reports that the module has loaded in it (unref'd
// earlier, Node could exit before the module's ready promise resolves).
if (ENVIRONMENT_IS_NODE && typeof PThread == 'object') {
  var mxwLoadToWorker = PThread.loadWasmModuleToWorker;
  PThread.loadWasmModuleToWorker = function (worker, onFinishedLoading) {
    mxwLoadToWorker(worker, function (w) {
      if (w && typeof w.unref == 'function') w.unref();
      if (onFinishedLoading) onFinishedLoading(w);
    });
  };
}
