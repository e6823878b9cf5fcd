// control_flow.mjs -- MXNet 1.9.1's control flow (python/mxnet/ndarray/contrib.py and
// symbol/contrib.py): foreach, while_loop and cond, as nd.contrib.*, sym.contrib.* and so
// F.contrib.* in hybridForward.
//   nd: plain JS loops over NDArrays, exactly as MXNet's imperative versions (autograd records
//       every step, so gradients flow through them).
//   sym: the body / branch is traced with Symbols inside a "__subgraph_name__" scope, cut into a
//       subgraph (C: mxw_sym_cut_subgraph; outside entries become subgraph inputs) and composed
//       into a _foreach / _while_loop / _cond node with MXNet's locs attributes (C:
//       csrc/graph/subgraph.c runs it).
//   const [outs, states] = mx.nd.contrib.foreach((x, [s]) => { const y = x.add(s); return [y, [y]]; }, data, [init]);
import { M, MXNetError, args, check, heap32 } from './core.mjs';
import { NDArray, invokeByName } from './ndarray.mjs';
import { Symbol, variable, Group, currentNameManager, currentSubgraphScope, withSubgraphScope } from './symbol.mjs';
import { opId } from './ndarray.mjs';
import { REQUIRED, bindArgs, defineSignature } from './signature.mjs';

const SIG = {
  foreach: defineSignature('contrib.foreach', [['body', REQUIRED, 'function'], ['data', REQUIRED], ['init_states', REQUIRED],
    ['name', 'foreach', 'str']]),
  while_loop: defineSignature('contrib.while_loop', [['cond', REQUIRED, 'function'], ['func', REQUIRED, 'function'],
    ['loop_vars', REQUIRED], ['max_iterations', null], ['name', 'while_loop', 'str']]),
  cond: defineSignature('contrib.cond', [['pred', REQUIRED], ['then_func', REQUIRED, 'function'],
    ['else_func', REQUIRED, 'function'], ['name', 'cond', 'str']]),
};

// ---- nested lists (Python's _flatten / _regroup) ----------------------------------------------------
// A single value's format is 0, a list's the list of its items' formats.
function flatten(v, Kind, what) {
  if (v instanceof Kind) return { flat: [v], fmt: 0 };
  if (!Array.isArray(v)) throw new MXNetError(`${what} should be ${Kind.name === 'Symbol' ? 'a Symbol' : 'an NDArray'} or a nested list of them, got ${v === null ? 'null' : typeof v}`);
  const flat = [];
  const fmt = [];
  for (const x of v) {
    const r = flatten(x, Kind, what);
    flat.push(...r.flat);
    fmt.push(r.fmt);
  }
  return { flat, fmt };
}
function regroup(flat, fmt) {
  let i = 0;
  const go = (f) => (f === 0 ? flat[i++] : f.map(go));
  return go(fmt);
}
const asList = (v) => (Array.isArray(v) ? v : [v]);
// (out, states) from a body: out / states may be null (none), a value, or nested lists.
function pair(r, what) {
  if (!Array.isArray(r) || r.length !== 2) throw new MXNetError(`${what} must return a pair [outputs, states]`);
  return [r[0] ?? [], r[1] ?? []];
}
function toBool(v, what) {
  if (v instanceof NDArray) {
    if (v.size !== 1) throw new MXNetError(`${what} must have exactly one element, it has shape (${v.shape.join(', ')})`);
    return v.item() !== 0;
  }
  if (typeof v === 'number' || typeof v === 'boolean') return Boolean(v);
  throw new MXNetError(`Cannot convert ${what} to python bool`);
}
function toInt(v, what) {
  const x = v instanceof NDArray ? v.item() : v;
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new MXNetError(`Cannot convert ${what} to python int`);
  return Math.trunc(x);
}

// ---- imperative (ndarray/contrib.py) ------------------------------------------------------------------
function ndForeach(...a) {
  const { body, data, initStates } = bindArgs(SIG.foreach, a);
  const fd = flatten(data, NDArray, 'data');
  flatten(initStates, NDArray, 'init_states');
  const single = data instanceof NDArray;
  const n = fd.flat[0].shape[0];
  let states = initStates;
  const steps = [];
  let outFmt = null;
  for (let i = 0; i < n; i++) {
    const eles = single ? data.get(i) : data.map((d) => d.get(i));
    const [outs, st] = pair(body(eles, states), 'foreach body');
    states = st;
    const fo = flatten(outs, NDArray, 'foreach output');
    outFmt = fo.fmt;
    steps.push(fo.flat);
  }
  if (outFmt === null) return [[], states];
  const stacked = steps[0].map((_, j) => invokeByName('stack', steps.map((s) => s[j]), { axis: 0, num_args: steps.length })[0]);
  return [regroup(stacked, outFmt), states];
}

function ndWhileLoop(...a) {
  const { cond, func, loopVars, maxIterations } = bindArgs(SIG.while_loop, a);
  if (maxIterations === null || maxIterations === undefined) throw new MXNetError('max_iterations should be specified');
  const maxIt = toInt(maxIterations, 'max_iteration');
  const single = loopVars instanceof NDArray;
  let vars = asList(loopVars);
  if (vars.length === 0) throw new MXNetError('loop_vars should contain at least one element');
  const steps = [];
  let outFmt = null;
  while (steps.length < maxIt && toBool(cond(...vars), 'Return value of cond')) {
    let [out, nv] = pair(func(...vars), 'while_loop func');
    nv = asList(nv);
    if (nv.length !== vars.length) throw new MXNetError('The length of loop_vars should be consistent during the loop');
    vars = nv;
    const fo = flatten(out, NDArray, 'while output');
    if (steps.length && fo.flat.length !== steps[0].length) throw new MXNetError('Number of elements in step_output should be the same in each step');
    outFmt = fo.fmt;
    steps.push(fo.flat);
  }
  // each output: its steps along a new axis 0, padded to max_iterations (MXNet pads with an
  // uninitialised array; zeros here, _zeros)
  const stacked = (steps[0] ?? []).map((x0, j) => {
    const items = steps.map((s) => s[j].expandDims(0));
    if (steps.length !== maxIt) items.push(invokeByName('_zeros', [], { shape: [maxIt - steps.length, ...x0.shape], dtype: x0.dtype })[0]);
    try {
      return invokeByName('concat', items, { dim: 0, num_args: items.length })[0];
    } catch {
      throw new MXNetError(`Shapes of ${j + 1}-th elements in step_outputs are inconsistent, which are:\n${steps.map((s, i) => `  Step ${i}, shape is (${s[j].shape.join(', ')})`).join('\n')}`);
    }
  });
  const outputs = outFmt === null ? [] : regroup(stacked, outFmt);
  return [outputs, single ? vars[0] : vars];
}

function ndCond(...a) {
  const { pred, thenFunc, elseFunc } = bindArgs(SIG.cond, a);
  return toBool(pred, 'pred') ? thenFunc() : elseFunc();
}

// ---- symbolic (symbol/contrib.py) ----------------------------------------------------------------------
const subgraphCounts = new Map();
// MXNet's _get_unique_subgraph_name: name + a per-name counter ("foreach0", "foreach1", ...),
// inside another body "<outer>$<name>"
function uniqueSubgraphName(name) {
  const outer = currentSubgraphScope();
  const full = outer !== undefined && outer !== '' ? `${outer}$${name}` : name;
  const n = subgraphCounts.get(full) ?? 0;
  subgraphCounts.set(full, n + 1);
  return `${full}${n}`;
}

// The traced graph g cut into [subgraph, cut entries (one Symbol per non-placeholder input, in
// the subgraph's list_inputs order)].
function cutSubgraph(g, sgName, placeholders) {
  const a = args.reset();
  const out = a.alloc(8);
  check(M._mxw_sym_cut_subgraph(g.handle, a.str(sgName), placeholders.length, a.strs(placeholders), out, out + 4));
  const sub = new Symbol(heap32()[out >>> 2]);
  const cut = new Symbol(heap32()[(out + 4) >>> 2]);
  const n = cut.numOutputs;
  const cuts = [];
  for (let i = 0; i < n; i++) cuts.push(cut.get(i));
  cut.dispose();
  const names = sub.listInputs();
  if (new Set(names).size !== names.length) throw new MXNetError(`The inputs of the subgraph don't have unique names: ${names.join(', ')}`);
  return { sub, cuts, names };
}

function tupleAttr(v) { return `[${v.join(', ')}]`; }

// A _foreach / _while_loop / _cond node with its subgraphs; returns its outputs as Symbols.
function composeSubgraphs(op, hint, attrs, subs, inputs) {
  const id = opId(op);
  const nodeName = currentNameManager().get(null, hint);
  const keys = Object.keys(attrs);
  const vals = keys.map((k) => String(attrs[k]));
  const sg = currentSubgraphScope();
  if (sg !== undefined) { keys.push('__subgraph_name__'); vals.push(sg); }
  const a = args.reset();
  const out = a.alloc(4);
  check(M._mxw_sym_compose_subgraphs(id, a.str(nodeName), keys.length, a.strs(keys), a.strs(vals), subs.length,
    a.i32s(subs.map((s) => s.handle)), inputs.length, a.i32s(inputs.map((s) => s.handle)), out));
  const node = new Symbol(heap32()[out >>> 2]);
  const n = node.numOutputs;
  const outs = [];
  for (let i = 0; i < n; i++) outs.push(node.get(i));
  node.dispose();
  return outs;
}

function symForeach(...a) {
  const { body, data, initStates, name } = bindArgs(SIG.foreach, a);
  const fd = flatten(data, Symbol, 'data');
  const fs = flatten(initStates, Symbol, 'init_states');
  const sgName = uniqueSubgraphName(name);
  const dataNames = fd.flat.map((_, i) => `${sgName}_data${i}`);
  const stateNames = fs.flat.map((_, i) => `${sgName}_state${i}`);
  let outFmt;
  let numOutData;
  const g = withSubgraphScope(sgName, () => {
    const eles = regroup(dataNames.map((n) => variable(n)), fd.fmt);
    const states = regroup(stateNames.map((n) => variable(n)), structuredClone(fs.fmt));
    const [outs, st] = pair(body(eles, states), 'foreach body');
    const fo = flatten(outs, Symbol, 'foreach output');
    const fst = flatten(st, Symbol, 'foreach loop_vars');
    if (JSON.stringify(fst.fmt) !== JSON.stringify(fs.fmt)) throw new MXNetError('The input and output loop_vars have different format');
    outFmt = fo.fmt;
    numOutData = fo.flat.length;
    return Group([...fo.flat, ...fst.flat]);
  });
  const { sub, cuts, names } = cutSubgraph(g, sgName, [...dataNames, ...stateNames]);
  g.dispose();
  const loc = (n, what) => {
    const i = names.indexOf(n);
    if (i < 0) throw new MXNetError(`the ${what} arrays have to be used in the loop body`);
    return i;
  };
  const inDataLocs = dataNames.map((n) => loc(n, 'data'));
  const inStateLocs = stateNames.map((n) => loc(n, 'state'));
  const placed = new Set([...dataNames, ...stateNames]);
  const remainLocs = names.map((n, i) => i).filter((i) => !placed.has(names[i]));
  const inputs = [...fd.flat, ...fs.flat, ...cuts];
  const numOutputs = numOutData + fs.flat.length;
  const outs = composeSubgraphs('_foreach', '_foreach', {
    num_args: inputs.length + 1, num_outputs: numOutputs, num_out_data: numOutData,
    in_state_locs: tupleAttr(inStateLocs), in_data_locs: tupleAttr(inDataLocs), remain_locs: tupleAttr(remainLocs),
  }, [sub], inputs);
  sub.dispose();
  return [regroup(outs.slice(0, numOutData), outFmt), regroup(outs.slice(numOutData), fs.fmt)];
}

function symWhileLoop(...a) {
  const { cond, func, loopVars, maxIterations, name } = bindArgs(SIG.while_loop, a);
  if (maxIterations === null || maxIterations === undefined) throw new MXNetError('max_iterations should be specified');
  const maxIt = toInt(maxIterations, 'max_iteration');
  const fv = flatten(loopVars, Symbol, 'loop_vars');
  if (fv.flat.length === 0) throw new MXNetError('loop_vars should contain at least one element');
  const base = uniqueSubgraphName(name);
  const varNames = fv.flat.map((_, i) => `${base}_var${i}`);
  const trace = (sgName, fn) => withSubgraphScope(sgName, () => {
    const vars = asList(regroup(varNames.map((n) => variable(n)), fv.fmt));
    return fn(vars);
  });
  const condG = trace(`${base}_cond`, (vars) => {
    const p = flatten(cond(...vars), Symbol, 'cond output');
    if (p.flat.length !== 1) throw new MXNetError('the condition must be a single Symbol');
    return Group(p.flat);
  });
  let outFmt;
  let numOutData;
  const funcG = trace(`${base}_func`, (vars) => {
    let [out, nv] = pair(func(...vars), 'while_loop func');
    const fo = flatten(out, Symbol, 'while output');
    nv = flatten(nv, Symbol, 'while loop_vars');
    if (nv.flat.length !== fv.flat.length) throw new MXNetError('The number of loop_vars should be consistent during the loop');
    outFmt = fo.fmt;
    numOutData = fo.flat.length;
    return Group([...fo.flat, ...nv.flat]);
  });
  const inputs = [];
  const varLoc = new Map(); // loop variable i -> its place among the node's inputs
  const unite = (g, sgName) => {
    const { sub, cuts, names } = cutSubgraph(g, sgName, varNames);
    g.dispose();
    let c = 0;
    const locs = [];
    const varLocs = fv.flat.map(() => -1);
    names.forEach((n, k) => {
      const v = varNames.indexOf(n);
      if (v >= 0) {
        if (!varLoc.has(v)) { varLoc.set(v, inputs.length); inputs.push(fv.flat[v]); }
        locs.push(varLoc.get(v));
        varLocs[v] = k;
      } else {
        locs.push(inputs.length);
        inputs.push(cuts[c++]);
      }
    });
    return { sub, locs, varLocs };
  };
  const C = unite(condG, `${base}_cond`);
  const F = unite(funcG, `${base}_func`);
  F.varLocs.forEach((l, i) => { if (l === -1) throw new MXNetError(`The ${i + 1}-th loop_var doesn't involve into the computation`); });
  const numOutputs = numOutData + fv.flat.length;
  const outs = composeSubgraphs('_while_loop', '_while_loop', {
    num_args: inputs.length + 2, num_outputs: numOutputs, num_out_data: numOutData, max_iterations: maxIt,
    cond_input_locs: tupleAttr(C.locs), func_input_locs: tupleAttr(F.locs), func_var_locs: tupleAttr(F.varLocs),
  }, [C.sub, F.sub], inputs);
  C.sub.dispose();
  F.sub.dispose();
  return [regroup(outs.slice(0, numOutData), outFmt), regroup(outs.slice(numOutData), fv.fmt)];
}

function symCond(...a) {
  const { pred, thenFunc, elseFunc, name } = bindArgs(SIG.cond, a);
  if (!(pred instanceof Symbol)) throw new MXNetError('pred should be a Symbol');
  const base = uniqueSubgraphName(name);
  const graph = (suffix, fn) => {
    const sgName = `${base}_${suffix}`;
    let fmt;
    const g = withSubgraphScope(sgName, () => {
      const f = flatten(fn(), Symbol, 'cond outputs');
      fmt = f.fmt;
      return Group(f.flat);
    });
    return { g, sgName, fmt, n: g.numOutputs };
  };
  const P = graph('pred', () => pred);
  if (P.n !== 1) throw new MXNetError('pred should always be a single output');
  const T = graph('then', thenFunc);
  const E = graph('else', elseFunc);
  if (T.n !== E.n) throw new MXNetError('Number of outputs differs between then-branch and else-branch');
  const inputs = [];
  const subs = [];
  const locs = [P, T, E].map(({ g, sgName }) => {
    const { sub, cuts } = cutSubgraph(g, sgName, []);
    g.dispose();
    subs.push(sub);
    return cuts.map((c) => { inputs.push(c); return inputs.length - 1; });
  });
  const outs = composeSubgraphs('_cond', '_cond', {
    num_args: inputs.length + 3, num_outputs: T.n, cond_input_locs: tupleAttr(locs[0]),
    then_input_locs: tupleAttr(locs[1]), else_input_locs: tupleAttr(locs[2]),
  }, subs, inputs);
  for (const s of subs) s.dispose();
  return regroup(outs, T.fmt);
}

export const ndControlFlow = Object.freeze({
  foreach: ndForeach, while_loop: ndWhileLoop, whileLoop: ndWhileLoop, cond: ndCond,
});
export const symControlFlow = Object.freeze({
  foreach: symForeach, while_loop: symWhileLoop, whileLoop: symWhileLoop, cond: symCond,
});
