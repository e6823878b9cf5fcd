// node --import ./scripts/unbundled.mjs ...: the package's entry (dist/index.mjs) imports api.mjs
// and its separate modules instead of their bundle (api.bundle.mjs, scripts/bundle-api.mjs), so
// that JS coverage counts each module's own lines (scripts/coverage.sh). The same code runs.
import { register } from 'node:module';

// the entry's script form of the bundle (api_script.mjs) is the bundle too: the modules instead
process.env.MXW_API_SCRIPT = '0';

register(`data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  return next(specifier === './api.bundle.mjs' ? './api.mjs' : specifier, context);
}`)}`);
