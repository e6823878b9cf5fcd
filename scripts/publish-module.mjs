// Copies a linked module (mxcore.wasm, mxcore.mjs, and the threaded tiers' mxcore.worker.js) from
// the link folder into dist/, each through a temporary file renamed into place, the .wasm first:
// a process importing the package while the tree builds sees the last complete module, never a
// half-written one (emcc writes its outputs in place while it links, and a failed link used to
// leave dist/ unloadable: "Import #0 module=env").
//   node scripts/publish-module.mjs <link dir> <dist dir>
import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';

const [from, to] = process.argv.slice(2);
if (!from || !to) {
  console.error('usage: node scripts/publish-module.mjs <link dir> <dist dir>');
  process.exit(2);
}
mkdirSync(to, { recursive: true });
for (const name of ['mxcore.wasm', 'mxcore.worker.js', 'mxcore.mjs']) {
  const src = path.join(from, name);
  if (!existsSync(src)) continue;
  const tmp = path.join(to, `.${name}.${process.pid}.tmp`);
  copyFileSync(src, tmp);
  renameSync(tmp, path.join(to, name));
}
