// --js-library: the JavaScript functions the C core imports (csrc/ops/custom_function.c). They
// call what js/autograd.mjs installs on the module; both run on the main thread.
mergeInto(LibraryManager.library, {
  mxw_js_custom_backward: function (id, nog, ograds, nig, outs, err, errlen) {
    return Module['mxwCustomBackward'](id, nog, ograds, nig, outs, err, errlen);
  },
  mxw_js_custom_refs: function (id, delta) {
    if (Module['mxwCustomRefs']) Module['mxwCustomRefs'](id, delta);
  },
});
