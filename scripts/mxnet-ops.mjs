// Derives MXNet 1.9.1's operator names from its C++ sources, for scripts/data/mxnet-1.9.1-ops.json
// (gen-api lists the ones mxnet-wasm's registry lacks in OPS.md). Needs a clone of apache/mxnet:
//   node scripts/mxnet-ops.mjs <path to the mxnet git directory> > scripts/data/mxnet-1.9.1-ops.json
// The names: every NNVM_REGISTER_OP(name), the first argument of the MXNET_OPERATOR_REGISTER_*,
// MXNET_REGISTER_OP_PROPERTY and similar registration macros, and every .add_alias("name"), in
// src/operator of the tag v1.9.1 (a macro's own definition, whose argument is a parameter, is skipped).
import { execFileSync } from 'node:child_process';

const gitDir = process.argv[2];
const tag = 'v1.9.1';
const git = (...a) => execFileSync('git', ['--git-dir', gitDir, ...a], { encoding: 'utf8', maxBuffer: 1 << 28 });
const commit = git('rev-parse', `${tag}^{commit}`).trim();
const files = git('ls-tree', '-r', '--name-only', tag, '--', 'src/operator').split('\n')
  .filter((f) => /\.(cc|cu|h)$/.test(f) && !f.endsWith('.cu'));
const names = new Set();
const PARAMS = new Set(['name', '__name$', 'Name', 'OP', 'op', '__name', 'NAME', 'op_name']);
for (const f of files) {
  const text = git('show', `${tag}:${f}`);
  let inMacro = false; // a #define and its continuation lines (their arguments are parameters)
  for (const line of text.split('\n')) {
    const continued = /\\\s*$/.test(line);
    if (/^\s*#\s*define/.test(line) || inMacro) { inMacro = continued; continue; }
    for (const m of line.matchAll(/\b(?:NNVM_REGISTER_OP|MXNET_OPERATOR_REGISTER_\w+|MXNET_REGISTER_OP_PROPERTY|MXNET_ADD_SPARSE_OP_ALIAS|MXNET_OPERATOR_REGISTER_SAMPLE|MXNET_OPERATOR_REGISTER_NP_\w+|MXNET_REGISTER_SIMPLE_OP)\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*[,)]/g)) {
      if (!PARAMS.has(m[1])) names.add(m[1]);
    }
    for (const m of line.matchAll(/\.add_alias\("([A-Za-z_][A-Za-z0-9_]*)"\)/g)) names.add(m[1]);
  }
}
process.stdout.write(`${JSON.stringify({
  source: `https://github.com/apache/mxnet/tree/${tag}/src/operator`, tag, commit,
  method: 'scripts/mxnet-ops.mjs: NNVM_REGISTER_OP, MXNET_*REGISTER* macros\' first argument and .add_alias names in src/operator (*.cc, *.h)',
  limitations: 'names a macro builds by token pasting (e.g. _sample_uniform from MXNET_OPERATOR_REGISTER_SAMPLING1(uniform, ...)) appear as the macro argument (uniform), not as the pasted name',
  ops: [...names].sort(),
}, null, 1)}\n`);
