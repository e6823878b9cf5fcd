// node --import ./scripts/unbundled.mjs ...: the package's entry (dist/index.mjs) imports api.mjs
// and its separate modules instead of their bundle (api.bundle.mjs, scripts/bundle-api.mjs), so
// that JS coverage counts each module's own lines (scripts/coverage.sh). The same code runs.
import { register } from 'node:module';

register(`data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  return next(specifier === './api.bundle.mjs' ? './api.mjs' : specifier, context);
}`)}`);
