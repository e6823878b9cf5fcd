// context.mjs -- where an array lives. MXNet's CPU contexts cpu(0), cpu(1), ... are distinct
// devices to Gluon (one parameter copy per context), although here they share one memory.
// onContext records the context a caller asked for on an array it created.
export function onContext(arr, ctx) {
  if (ctx && !(ctx.deviceType === 'cpu' && ctx.deviceId === 0)) arr._ctx = ctx;
  return arr;
}
