// Loading with progress, cancellation and request options (js/io.mjs readBytes, used by nd.load,
// sym.load, Block.loadParameters, ParameterDict.load and SymbolBlock.imports): progress events in
// order, each file's bytes summing to its size on disk; SymbolBlock.imports asking for both files
// before either has arrived (a server that answers only once both requests are in); requestInit
// and a caller's fetch reaching the server; an AbortSignal stopping a transfer part-way with an
// AbortError, the connection closed and no NDArray left behind; errors that name the file.
import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as mx from 'mxnet-wasm';

const { nd, gluon } = mx;
const rejectsWith = (p, re) => assert.rejects(p, (e) => e instanceof mx.MXNetError && re.test(e.message), String(re));
const isAbort = (e) => e?.name === 'AbortError';

// A Dense(2) on 3 inputs with every weight 0.5 and zero bias, exported: y = 0.5 * sum(x) per unit.
const dir = mkdtempSync(path.join(tmpdir(), 'mxw-loading-'));
const net = new gluon.nn.HybridSequential();
net.add(new gluon.nn.Dense(64, { inUnits: 3 }), new gluon.nn.Dense(2));
net.initialize(new mx.init.Constant(0.5));
net.hybridize();
net.forward(nd.zeros([1, 3]));
net.export(path.join(dir, 'm'));
const SYM = path.join(dir, 'm-symbol.json'), PARAMS = path.join(dir, 'm-0000.params');
const symBytes = readFileSync(SYM), paramBytes = readFileSync(PARAMS);
// y = sum_j 0.5 * (sum_i 0.5 x_i) over 64 hidden units = 16 * sum(x) per output
const expected = (x) => 16 * x.reduce((a, b) => a + b, 0);

// Per file: events in order (loaded grows by `bytes`, total fixed), the last one done with bytes 0,
// and the bytes summing to the size.
function checkEvents(events, size, { totalKnown = true } = {}) {
  assert.ok(events.length >= 2, `${events.length} events`);
  let loaded = 0;
  events.forEach((e, i) => {
    loaded += e.bytes;
    assert.equal(e.loaded, loaded);
    assert.equal(e.done, i === events.length - 1);
    if (totalKnown) assert.equal(e.total, size);
  });
  assert.equal(loaded, size);
  assert.equal(events.at(-1).bytes, 0);
  assert.equal(events.at(-1).total, size);
}
const byFile = (events) => Object.groupBy ? Object.groupBy(events, (e) => e.file)
  : events.reduce((m, e) => ((m[e.file] ??= []).push(e), m), {});

test('files in Node: nd.load, sym.load, loadParameters, ParameterDict.load report progress summing to the file size', async () => {
  let ev = [];
  const d = await nd.load(PARAMS, { onProgress: (e) => ev.push(e) });
  checkEvents(ev, statSync(PARAMS).size);
  assert.equal(ev[0].file, PARAMS);
  for (const v of Object.values(d)) v.dispose();
  ev = [];
  const s = await mx.sym.load(SYM, { onProgress: (e) => ev.push(e) });
  checkEvents(ev, statSync(SYM).size);
  s.dispose();
  ev = [];
  const blk = await gluon.SymbolBlock.imports(SYM, ['data'], PARAMS, { on_progress: (e) => ev.push(e) });
  const g = byFile(ev);
  checkEvents(g[SYM], symBytes.length);
  checkEvents(g[PARAMS], paramBytes.length);
  assert.deepEqual(Array.from(blk.forward(nd.array([[1, 2, 3]])).toTypedArray()), [96, 96]);
  // a new net of the same structure loads the exported parameters (names as export writes them)
  ev = [];
  await blk.loadParameters(PARAMS, { onProgress: (e) => ev.push(e) });
  checkEvents(ev, paramBytes.length);
  ev = [];
  await blk.collectParams().load(PARAMS, { allowMissing: false, onProgress: (e) => ev.push(e) });
  checkEvents(ev, paramBytes.length);
  blk.dispose();
  // in-memory sources: one event with every byte, then done
  ev = [];
  (await nd.load(new Uint8Array(paramBytes), { onProgress: (e) => ev.push(e) }));
  checkEvents(ev, paramBytes.length);
  ev = [];
  const fromBlob = await nd.load(new Blob([paramBytes]), { onProgress: (e) => ev.push(e) });
  checkEvents(ev, paramBytes.length);
  for (const v of Object.values(fromBlob)) v.dispose();
  // option checks
  await rejectsWith(nd.load(PARAMS, { onProgres: () => {} }), /unknown option 'onProgres'/);
  await rejectsWith(nd.load(PARAMS, { onProgress: 1 }), /onProgress must be a function/);
  await rejectsWith(nd.load(PARAMS, { signal: {} }), /signal must be an AbortSignal/);
  await rejectsWith(mx.sym.load(SYM, { maxBytes: 1 }), /unknown option 'maxBytes'/);
  await assert.rejects(gluon.SymbolBlock.imports(SYM, ['data'], PARAMS, { onProgress: 'x' }), /on_progress' must be a function/);
});

// ---- over HTTP ---------------------------------------------------------------------------------------
// A server for the exported pair. mode.waitForBoth: answer only once both files were asked for;
// mode.stallParams: send half of the params file and hold the rest; mode.chunked: no Content-Length.
async function serve(mode = {}) {
  const state = { requests: [], aborted: [], headers: [] };
  const pending = [];
  const server = http.createServer((req, res) => {
    state.requests.push(req.url);
    state.headers.push(req.headers['x-mxw-test'] ?? null);
    res.on('close', () => { if (!res.writableEnded) state.aborted.push(req.url); }); // closed before the end
    const body = req.url.endsWith('.json') ? symBytes : req.url.endsWith('.params') ? paramBytes : null;
    const answer = () => {
      if (!body) { res.writeHead(404).end('no'); return; }
      res.writeHead(200, mode.chunked ? {} : { 'Content-Length': body.length });
      if (mode.stallParams && req.url.endsWith('.params')) {
        res.write(body.subarray(0, body.length >> 1)); // and never the rest
        return;
      }
      // in three writes, so that progress comes in steps
      const third = Math.ceil(body.length / 3);
      res.write(body.subarray(0, third));
      setTimeout(() => { res.write(body.subarray(third, 2 * third)); setTimeout(() => res.end(body.subarray(2 * third)), 5); }, 5);
    };
    if (mode.waitForBoth) {
      pending.push(answer);
      if (pending.length === 2) for (const f of pending.splice(0)) f();
      else setTimeout(() => { state.timedOut = true; for (const f of pending.splice(0)) f(); }, 3000);
    } else {
      answer();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url, state,
    close: () => { server.closeAllConnections(); return new Promise((r) => server.close(r)); },
  };
}

test('SymbolBlock.imports over HTTP asks for both files at once and reports progress per file', async () => {
  const srv = await serve({ waitForBoth: true });
  try {
    const events = [];
    const blk = await gluon.SymbolBlock.imports(`${srv.url}/m-symbol.json`, ['data'], `${srv.url}/m-0000.params`, {
      onProgress: (e) => events.push(e),
    });
    assert.equal(srv.state.timedOut, undefined, 'the second request came only after the first answer: not parallel');
    assert.deepEqual(srv.state.requests.sort(), ['/m-0000.params', '/m-symbol.json']);
    const g = byFile(events);
    checkEvents(g[`${srv.url}/m-symbol.json`], symBytes.length);
    checkEvents(g[`${srv.url}/m-0000.params`], paramBytes.length);
    assert.ok(g[`${srv.url}/m-0000.params`].length >= 4, 'the params arrive in steps');
    assert.deepEqual(Array.from(blk.forward(nd.array([[1, 0, -3]])).toTypedArray()), [expected([1, 0, -3]), expected([1, 0, -3])]);
    blk.dispose();
  } finally {
    await srv.close();
  }
});

test('requestInit and a caller\'s fetch reach the request; no Content-Length gives total null until done', async () => {
  const srv = await serve({ chunked: true });
  try {
    const calls = [];
    const myFetch = (url, init) => { calls.push([String(url), init.headers['x-mxw-test'], init.credentials]); return fetch(url, init); };
    const events = [];
    const blk = await gluon.SymbolBlock.imports(`${srv.url}/m-symbol.json`, 'data', `${srv.url}/m-0000.params`, {
      requestInit: { headers: { 'x-mxw-test': 'yes' }, credentials: 'omit' }, fetch: myFetch, onProgress: (e) => events.push(e),
    });
    assert.deepEqual(calls.sort(), [[`${srv.url}/m-0000.params`, 'yes', 'omit'], [`${srv.url}/m-symbol.json`, 'yes', 'omit']]);
    assert.deepEqual(srv.state.headers, ['yes', 'yes']);
    const p = byFile(events)[`${srv.url}/m-0000.params`];
    checkEvents(p, paramBytes.length, { totalKnown: false });
    assert.ok(p.slice(0, -1).every((e) => e.total === null));
    blk.dispose();
    // nd.load and sym.load take the same options
    const d = await nd.load(`${srv.url}/m-0000.params`, { request_init: { headers: { 'x-mxw-test': 'nd' } } });
    assert.equal(srv.state.headers.at(-1), 'nd');
    for (const v of Object.values(d)) v.dispose();
    (await mx.sym.load(`${srv.url}/m-symbol.json`, { fetch: myFetch, requestInit: { headers: { 'x-mxw-test': 'sym' } } })).dispose();
    assert.equal(calls.at(-1)[1], 'sym');
  } finally {
    await srv.close();
  }
});

test('an aborted load throws an AbortError, closes the connection and leaks nothing', async () => {
  const srv = await serve({ stallParams: true });
  try {
    const before = mx.memory();
    const ctl = new AbortController();
    const events = [];
    const p = gluon.SymbolBlock.imports(`${srv.url}/m-symbol.json`, ['data'], `${srv.url}/m-0000.params`, {
      signal: ctl.signal,
      onProgress: (e) => {
        events.push(e);
        if (e.file.endsWith('.params') && e.bytes > 0) ctl.abort(); // part of the params has arrived
      },
    });
    await assert.rejects(p, isAbort);
    const params = events.filter((e) => e.file.endsWith('.params'));
    assert.ok(params.length >= 1 && params.every((e) => !e.done) && params.at(-1).loaded < paramBytes.length);
    const after = mx.memory();
    // (not more arrays than before: earlier tests' garbage may be finalized meanwhile)
    assert.ok(after.numArrays <= before.numArrays, `${after.numArrays} arrays after, ${before.numArrays} before`);
    assert.ok(after.bytes <= before.bytes, `${after.bytes} bytes after, ${before.bytes} before`);
    // the stalled response's connection is closed by the abort
    for (let i = 0; i < 100 && !srv.state.aborted.length; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(srv.state.aborted.includes('/m-0000.params'), 'the stalled connection was not closed');

    // the same for loadParameters, nd.load; a signal aborted already makes no request at all
    const n = srv.state.requests.length;
    const gone = AbortSignal.abort();
    await assert.rejects(nd.load(`${srv.url}/m-0000.params`, { signal: gone }), isAbort);
    await assert.rejects(mx.sym.load(`${srv.url}/m-symbol.json`, { signal: gone }), isAbort);
    await assert.rejects(mx.image.imread(`${srv.url}/x.png`, { signal: gone }), isAbort);
    assert.equal(srv.state.requests.length, n);
    const blk = await gluon.SymbolBlock.imports(SYM, ['data'], PARAMS);
    const before2 = mx.memory();
    const ctl2 = new AbortController();
    const q = blk.loadParameters(`${srv.url}/m-0000.params`, { signal: ctl2.signal, onProgress: () => ctl2.abort(new Error('user gave up')) });
    await assert.rejects(q, /user gave up/); // the caller's own reason, as fetch does
    assert.ok(mx.memory().numArrays <= before2.numArrays);
    assert.deepEqual(Array.from(blk.forward(nd.array([[1, 1, 1]])).toTypedArray()), [48, 48]); // unchanged
    blk.dispose();
    // a file read in Node stops as well
    await assert.rejects(nd.load(PARAMS, { signal: gone }), isAbort);
  } finally {
    await srv.close();
  }
});

test('HTTP errors name the URL; a failed file aborts the other one', async () => {
  const srv = await serve();
  try {
    const before = mx.memory();
    await rejectsWith(gluon.SymbolBlock.imports(`${srv.url}/m-symbol.json`, ['data'], `${srv.url}/missing.bin`),
      /cannot fetch http:\/\/127\.0\.0\.1:\d+\/missing\.bin: HTTP 404/);
    await rejectsWith(nd.load(`${srv.url}/nothing.bin`), /HTTP 404/);
    // no array made by the failed loads is left (earlier tests' arrays may be finalized meanwhile:
    // the count cannot grow)
    assert.ok(mx.memory().numArrays <= before.numArrays, `${mx.memory().numArrays} arrays, ${before.numArrays} before`);
    await rejectsWith(nd.load('http://127.0.0.1:1/x.params'), /cannot fetch http:\/\/127\.0\.0\.1:1\/x\.params/);
  } finally {
    await srv.close();
  }
  // the symbol file is missing while the params transfer hangs: the 404 ends the load and the
  // params' connection is closed
  const stall = await serve({ stallParams: true });
  try {
    await rejectsWith(gluon.SymbolBlock.imports(`${stall.url}/none.bin`, ['data'], `${stall.url}/m-0000.params`), /none\.bin: HTTP 404/);
    for (let i = 0; i < 100 && !stall.state.aborted.length; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(stall.state.aborted, ['/m-0000.params']);
  } finally {
    await stall.close();
  }
});
