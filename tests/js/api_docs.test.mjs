// dist/API.md, the API reference gen-api writes at build time: it lists every public name the
// loaded package has (walked here independently of the generator), with the Gluon signatures
// as Python writes them (nn.Dense's is MXNet 1.9.1's, written out here) and points operators to OPS.md.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import * as mx from 'mxnet-wasm';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const api = readFileSync(path.join(ROOT, 'dist/API.md'), 'utf8');

test('API.md names every public export, namespace and Gluon layer', () => {
  for (const k of Object.keys(mx)) if (!k.startsWith('_') && k !== 'default') assert.match(api, new RegExp(`\\| \`${k}[\`(]`), k);
  for (const k of Object.keys(mx.gluon.nn)) assert.ok(api.includes(`\`gluon.nn.${k}`), `gluon.nn.${k}`);
  for (const k of Object.keys(mx.gluon.rnn)) assert.ok(api.includes(`\`gluon.rnn.${k}`), `gluon.rnn.${k}`);
  assert.ok(api.includes('`gluon.model_zoo.vision.resnet18_v1'), 'the model zoo under its Python name');
  assert.ok(api.includes('[OPS.md](OPS.md)'));
});

test("a layer's row carries MXNet's signature", () => {
  // MXNet 1.9.1 gluon/nn/basic_layers.py: Dense(units, activation=None, use_bias=True, flatten=True,
  // dtype='float32', weight_initializer=None, bias_initializer='zeros', in_units=0, **kwargs)
  assert.ok(api.includes("`gluon.nn.Dense(units, activation=None, use_bias=True, flatten=True, dtype='float32', weight_initializer=None, bias_initializer='zeros', in_units=0, *, prefix=None, params=None)` | class |"));
});
