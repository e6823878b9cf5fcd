// A child process of bench/peers.mjs that runs one engine configuration in headless Chromium:
// it serves the project on 127.0.0.1 with Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy
// headers (a cross-origin isolated page: SharedArrayBuffer, so threaded wasm), starts Chromium
// (Debian's, through playwright-core, as tests/js/browser.test.mjs does), opens a page whose module
// worker (bench/peers_worker.mjs) holds the engine, and relays bench/engines.mjs's commands between
// the parent's IPC channel and that worker. Started with fork(); argv[2]: JSON { engine, threads,
// tier?, build?, data }. Its first message: { ready, label, detail } or { ready: false, reason }.
import http from 'node:http';
import path from 'node:path';
import { createReadStream, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = JSON.parse(process.argv[2]);
const send = (m) => new Promise((resolve) => process.send(m, resolve));

const MOUNTS = {
  '/bench/': path.join(root, 'bench'),
  '/dist/': path.join(root, 'dist'),
  '/node_modules/@tensorflow/': path.join(root, 'node_modules/@tensorflow'),
  '/node_modules/onnxruntime-web/': path.join(root, 'node_modules/onnxruntime-web'),
  '/data/': config.data,
};
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm',
};
const HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin', 'Cache-Control': 'no-store',
};
// The page: a module worker holds the engine; window.benchCall(msg) -> its reply.
const PAGE = `<!doctype html><meta charset="utf-8"><title>mxnet-wasm peers benchmark</title>
<script type="module">
const worker = new Worker('/bench/peers_worker.mjs', { type: 'module' });
const waiting = [];
worker.onmessage = (e) => waiting.shift()(e.data);
worker.onerror = (e) => {
  const error = 'worker error: ' + e.message;
  while (waiting.length) waiting.shift()({ ready: false, ok: false, reason: error, error });
};
window.benchCall = (msg) => new Promise((resolve) => { waiting.push(resolve); worker.postMessage(msg); });
window.benchLoaded = true;
</script>`;

function startServer() {
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    if (pathname === '/favicon.ico') { res.writeHead(204, HEADERS).end(); return; }
    if (pathname === '/') {
      res.writeHead(200, { 'Content-Type': TYPES['.html'], ...HEADERS }).end(PAGE);
      return;
    }
    const mount = Object.keys(MOUNTS).find((m) => pathname.startsWith(m));
    const file = mount ? path.join(MOUNTS[mount], pathname.slice(mount.length)) : null;
    let st = null;
    try { if (file && file.startsWith(MOUNTS[mount])) st = statSync(file); } catch { /* 404 below */ }
    if (!st?.isFile()) { res.writeHead(404, HEADERS).end('not found'); return; }
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': st.size, ...HEADERS });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let browser = null, server = null;
async function shutdown(code) {
  try { await browser?.close(); } catch { /* already gone */ }
  server?.close();
  process.exit(code);
}

process.on('SIGTERM', () => shutdown(1));
try {
  const { chromium } = await import('playwright-core');
  server = await startServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  page.on('pageerror', (e) => process.stderr.write(`[chromium ${config.engine}] ${e}\n`));
  page.on('console', (m) => {
    if (m.type() === 'error') process.stderr.write(`[chromium ${config.engine}] ${m.text()}\n`);
  });
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.benchLoaded === true);
  const call = (msg) => page.evaluate((m) => window.benchCall(m), msg);
  const { engine, threads, tier, build } = config;
  const r = await call({ cmd: 'setup', engine, threads, tier, build });
  if (!r.ready) {
    await send(r);
    await shutdown(0);
  }
  process.on('message', async (msg) => {
    if (msg.cmd === 'exit') { await shutdown(0); return; }
    await send(await call(msg));
  });
  await send({ ...r, label: `${r.label} (chromium ${browser.version()})` });
} catch (e) {
  await send({ ready: false, reason: `chromium: ${e?.message ?? e}` });
  await shutdown(0);
}
