// Derives MXNet 1.9.1's operator names from its C++ sources, for scripts/data/mxnet-1.9.1-ops.json
// (gen-api lists the ones mxnet-wasm's registry lacks in OPS.md). Needs a clone of apache/mxnet:
//   node scripts/mxnet-ops.mjs <path to the mxnet git directory> > scripts/data/mxnet-1.9.1-ops.json
// The names: every NNVM_REGISTER_OP(name) and .add_alias("name") in src/operator of the tag
// v1.9.1, with the registration macros defined there expanded as the preprocessor would
// (parameters substituted, a ## b pasted, #p stringified), so MXNET_OPERATOR_REGISTER_SAMPLING1(
// uniform, ...) gives _sample_uniform and sample_uniform; for a macro defined outside src/operator
// (MXNET_REGISTER_OP_PROPERTY) its first argument. The #define lines themselves are not scanned.
import { execFileSync } from 'node:child_process';

const gitDir = process.argv[2];
const tag = 'v1.9.1';
const git = (...a) => execFileSync('git', ['--git-dir', gitDir, ...a], { encoding: 'utf8', maxBuffer: 1 << 28 });
const commit = git('rev-parse', `${tag}^{commit}`).trim();
const files = git('ls-tree', '-r', '--name-only', tag, '--', 'src/operator').split('\n')
  .filter((f) => /\.(cc|cu|h)$/.test(f) && !f.endsWith('.cu'));
const names = new Set();
// Pass 1: every function-like #define of src/operator (continuation lines joined): its parameters
// and body, so that a registration macro's invocation can be expanded as the preprocessor would.
const defines = new Map();
const texts = [];
for (const f of files) {
  const text = git('show', `${tag}:${f}`).replace(/\\\r?\n/g, ' ');
  texts.push(text);
  for (const m of text.matchAll(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)(.*)$/gm)) {
    // (MXNet's macros name some parameters with a $: __name$)
    defines.set(m[1], { params: m[2].split(',').map((x) => x.trim()).filter(Boolean), body: m[3] });
  }
}
// The arguments of a call starting at `open` (the index of its '('): top-level commas split them.
function callArgs(text, open) {
  const args = [];
  let depth = 0, cur = '', i = open;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '(') { if (depth++ > 0) cur += c; continue; }
    if (c === ')') { if (--depth === 0) break; cur += c; continue; }
    if (c === ',' && depth === 1) { args.push(cur.trim()); cur = ''; continue; }
    if (c === '"') { const j = text.indexOf('"', i + 1); cur += text.slice(i, j + 1); i = j; continue; }
    cur += c;
  }
  args.push(cur.trim());
  return { args, end: i };
}
// A macro body with its parameters replaced: a ## b pastes, #p makes a string literal.
function substitute(body, params, args) {
  const val = (p) => args[params.indexOf(p)] ?? '';
  let out = body.replace(/(#?)#\s*([A-Za-z_$][\w$]*)/g, (all, hash, p) => (!hash && params.includes(p) ? `"${val(p)}"` : all));
  out = out.replace(/[A-Za-z_$][\w$]*/g, (w) => (params.includes(w) ? val(w) : w));
  return out.replace(/\s*##\s*/g, '');
}
// The names registered by `text`: NNVM_REGISTER_OP(name), .add_alias("..." "..."), and the
// expansion of every registration macro it calls (nested ones too).
function scan(text, depth) {
  for (const m of text.matchAll(/\bNNVM_REGISTER_OP\(\s*([A-Za-z_]\w*)\s*\)/g)) names.add(m[1]);
  for (const m of text.matchAll(/\.add_alias\(((?:\s*"[^"]*")+)\s*\)/g)) {
    const name = [...m[1].matchAll(/"([^"]*)"/g)].map((x) => x[1]).join('');
    if (/^[A-Za-z_]\w*$/.test(name)) names.add(name);
  }
  if (depth > 6) return;
  for (const m of text.matchAll(/\b([A-Z][A-Z0-9_]*)\(/g)) {
    const def = defines.get(m[1]);
    if (!def) {
      // a registration macro defined outside src/operator (MXNET_REGISTER_OP_PROPERTY in
      // include/mxnet/operator.h): its first argument is the name
      if (depth === 0 && /^(MXNET_REGISTER_OP_PROPERTY|MXNET_ADD_SPARSE_OP_ALIAS|MXNET_OPERATOR_REGISTER_\w+)$/.test(m[1])) {
        const first = callArgs(text, m.index + m[1].length).args[0];
        if (/^[A-Za-z_]\w*$/.test(first)) names.add(first);
      }
      continue;
    }
    if (!/NNVM_REGISTER_OP|add_alias|REGISTER/.test(def.body)) continue;
    const { args } = callArgs(text, m.index + m[1].length);
    scan(substitute(def.body, def.params, args), depth + 1);
  }
}
// Pass 2: the files' own code (not the #define lines, whose names are parameters).
for (const text of texts) scan(text.replace(/^[ \t]*#[ \t]*define.*$/gm, ''), 0);
process.stdout.write(`${JSON.stringify({
  source: `https://github.com/apache/mxnet/tree/${tag}/src/operator`, tag, commit,
  method: 'scripts/mxnet-ops.mjs: NNVM_REGISTER_OP names and .add_alias names in src/operator (*.cc, *.h), with the registration macros expanded (parameters substituted, ## pasted, # stringified)',
  limitations: 'names built at run time (loops over op tables) are not seen',
  ops: [...names].sort(),
}, null, 1)}\n`);
