// Inside the factory (--pre-js): the deferred part of a split module (scripts/split-wasm.mjs).
//
// A split tier's mxcore.wasm holds the functions that loading, inference and training of the
// usual models run (a profile of scripts/split-profile.mjs); the rest (rarely used operators,
// float64 and integer paths, ...) is in mxcore.deferred.wasm. Each function moved there left a
// placeholder import in its table slot ("placeholder" namespace, named by the slot): the first
// call of one instantiates the deferred module against this instance's exports, which fills the
// slots with the real functions, and the call goes on through the table. Loading is synchronous
// (the call is inside wasm): Node reads the file; a browser worker uses a synchronous request;
// browsers also compile it in the background after the load (mxwPrefetchDeferred), so a page's
// main thread, which cannot read synchronously as a worker does, normally finds it compiled.
// Every thread of a threaded tier has its own instance and table: each loads the part itself.
var mxwSplit = false; // this module has placeholders (set while it is instantiated)
var mxwDeferred = null; // the deferred part's instance, once loaded on this thread
// (called from the import object, which scripts/patch-glue.mjs adds to after the link: through Module,
// so that emcc's dead-code pass keeps it)
Module['mxwPlaceholders'] = function () {
  return new Proxy({}, {
    get: function (_, slot) {
      mxwSplit = true;
      var placeholder = function () {
        mxwLoadDeferred();
        var f = wasmTable.get(+slot);
        if (!f || f === placeholder) throw new Error('mxnet-wasm: mxcore.deferred.wasm does not fill table slot ' + slot + ' (it is not the part split from this mxcore.wasm)');
        return f.apply(null, arguments);
      };
      return placeholder;
    },
  });
};
// Where the part is: through locateFile when given (js/tiers.mjs in Node, setWasmPaths), else
// beside this module: in Node from its URL (a pool worker's glue has no usable scriptDirectory),
// in browsers as `new URL("mxcore.deferred.wasm", import.meta.url)`, written into mxwDeferredUrl
// after the link (scripts/patch-glue.mjs), the form bundlers copy as an asset.
function mxwDeferredFile() {
  if (Module["locateFile"]) return locateFile("mxcore.deferred.wasm");
  if (ENVIRONMENT_IS_NODE && typeof _scriptDir === "string" && _scriptDir.indexOf("file:") === 0) {
    return require("url").fileURLToPath(new URL("mxcore.deferred.wasm", _scriptDir));
  }
  return ENVIRONMENT_IS_NODE ? locateFile("mxcore.deferred.wasm") : mxwDeferredUrl();
}
function mxwDeferredUrl() {
  return scriptDirectory + "mxcore.deferred.wasm";
}
// The bytes, synchronously: Node's fs, a worker's synchronous request, else (a page's main
// thread) a synchronous request for text in the x-user-defined charset, which keeps each byte.
function mxwReadDeferred(file) {
  if (readBinary) return readBinary(file);
  var xhr = new XMLHttpRequest();
  xhr.open('GET', file, false);
  xhr.overrideMimeType('text/plain; charset=x-user-defined');
  xhr.send(null);
  if (xhr.status !== 200 && xhr.status !== 0) throw new Error('HTTP ' + xhr.status);
  var text = xhr.responseText, bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes;
}
function mxwLoadDeferred() {
  if (mxwDeferred) return;
  var file = mxwDeferredFile(), module = Module['mxwDeferredModule'];
  try {
    if (!module) module = Module['mxwDeferredModule'] = new WebAssembly.Module(mxwReadDeferred(file));
    mxwDeferred = new WebAssembly.Instance(module, { 'primary': Module['asm'] });
  } catch (e) {
    throw new Error('mxnet-wasm: cannot load ' + file + ', the part of the module this call needs (' + (e && e.message ? e.message : e) + ')');
  }
}
// 'none' (not a split module), 'not loaded', or 'loaded' (on this thread)
Module['mxwDeferredState'] = function () { return !mxwSplit ? 'none' : mxwDeferred ? 'loaded' : 'not loaded'; };
// Browsers: fetch and compile the deferred part in the background (a promise of the state).
Module['mxwPrefetchDeferred'] = function () {
  if (!mxwSplit || mxwDeferred || Module['mxwDeferredModule']) return Promise.resolve(Module['mxwDeferredState']());
  var file = mxwDeferredFile();
  return (typeof WebAssembly.compileStreaming === 'function'
    ? WebAssembly.compileStreaming(fetch(file, { credentials: 'same-origin' }))
    : fetch(file, { credentials: 'same-origin' }).then(function (r) { return r.arrayBuffer(); }).then(WebAssembly.compile))
    .then(function (m) { if (!Module['mxwDeferredModule']) Module['mxwDeferredModule'] = m; return Module['mxwDeferredState'](); },
      function () { return Module['mxwDeferredState'](); }); // (a later call loads it synchronously, or names the failure)
};
