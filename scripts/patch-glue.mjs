// Post-link fix of a threaded tier's emscripten glue (run by CMakeLists.txt after each link):
// emcc 3.1.6 writes `new Worker(new URL("mxcore.worker.js", import.meta.url))`, the pattern that
// bundlers (Vite, webpack) take for a module worker to bundle. That fails (Vite: "UMD and IIFE
// output formats are not supported for code-splitting builds"): this worker is a classic script
// that loads the main module itself. As `new Worker((0, new URL(...)))` the bundlers copy the file
// as an asset (the `new URL(..., import.meta.url)` rule) and leave the Worker call alone: Vite's
// rule matches `new Worker(new URL(` whatever follows, so the URL object goes through a comma
// expression (Node's Worker needs the URL object: it refuses a file: URL string).
//   node scripts/patch-glue.mjs dist/threads/mxcore.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
const text = readFileSync(file, 'utf8');
const from = /new Worker\(new URL\("mxcore\.worker\.js",\s*import\.meta\.url\)\)/g;
const to = 'new Worker((0,new URL("mxcore.worker.js",import.meta.url)))';
const n = (text.match(from) ?? []).length;
if (n === 0 && !text.includes(to)) {
  console.error(`patch-glue: ${file}: the worker creation emcc writes was not found (emscripten changed?)`);
  process.exit(1);
}
if (n > 0) writeFileSync(file, text.replace(from, to));
