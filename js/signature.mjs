// signature.mjs -- the one argument binder (js-api.md rule 4): Python's positional parameters in
// Python's order, then one optional trailing options object that may name any parameter
// (camelCase or snake_case). Every class and helper that ports a Python signature declares it
// once in signatures.mjs and binds its arguments here; scripts/gen-api.mjs reads the same table
// for the TypeScript types and the docs.
//
//   const a = bindArgs(SIGNATURES['nn.Conv2D'], args);   // {channels, kernelSize, strides, ...}
import { MXNetError } from './core.mjs';
import { NDArray, Context } from './ndarray.mjs';

// The default of a parameter that must be given.
export const REQUIRED = Object.freeze({ toString: () => '<required>' });

export const camelCase = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
export const snakeCase = (s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

// Only a plain object is an options object; class instances (initializers, NDArrays, contexts)
// and arrays are positional values.
export function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// ---- value types -------------------------------------------------------------------------------
// Each check returns true when the value is acceptable. `null` is accepted wherever the
// parameter's default is null, or its type ends in '?'.
const isInt = (v) => Number.isInteger(v);
const isIntTuple = (v) => isInt(v) || ((Array.isArray(v) || ArrayBuffer.isView(v)) && Array.from(v).every(isInt));
const TYPE_CHECKS = {
  any: () => true,
  int: isInt,
  number: (v) => typeof v === 'number',
  bool: (v) => typeof v === 'boolean',
  str: (v) => typeof v === 'string',
  ints: isIntTuple,                                    // an int or a tuple of ints
  shape: isIntTuple,
  function: (v) => typeof v === 'function',
  dict: (v) => isPlainObject(v) || v instanceof Map,
  dtype: (v) => typeof v === 'string' || typeof v === 'function' || typeof v === 'number',
  array: (v) => Array.isArray(v) || ArrayBuffer.isView(v),
  ndarray: (v) => v instanceof NDArray,
  ctx: (v) => v instanceof Context || (Array.isArray(v) && v.length > 0 && v.every((c) => c instanceof Context)),
};
const TYPE_WORDS = {
  int: 'an integer', number: 'a number', bool: 'a boolean', str: 'a string', ints: 'an integer or a list of integers',
  shape: 'an integer or a list of integers', function: 'a function', dict: 'a plain object (dict)', dtype: 'a dtype name',
  array: 'an array', ndarray: 'an NDArray', ctx: 'a Context or a list of Contexts',
};
// Types the binder cannot know by itself (classes defined in other modules) register a check.
export function registerType(name, check, words) {
  TYPE_CHECKS[name] = check;
  TYPE_WORDS[name] = words;
}

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(describe).join(', ')}]`;
  if (typeof v === 'object') return v.constructor?.name ?? 'object';
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

function checkType(sig, p, v) {
  if (v === null && p.nullable) return;
  const alts = p.types;
  if (alts.some((t) => TYPE_CHECKS[t](v))) return;
  const words = alts.map((t) => TYPE_WORDS[t] ?? t).join(' or ');
  throw new MXNetError(`${sig.name}: argument '${p.name}' must be ${words}${p.nullable ? ' or null' : ''}, got ${describe(v)}`);
}

// ---- signatures --------------------------------------------------------------------------------
// defineSignature('nn.Dense', [['units', REQUIRED, 'int'], ['activation', null, 'str'], ...],
//   {kwargs: [...more named-only parameters]}): Python's parameter list. A parameter is
// [pythonName, default, type] with type names from TYPE_CHECKS joined by '|', optionally ending
// in '?' (null allowed). `kwargs` are keyword-only parameters (Python's **kwargs passed on, e.g.
// Block's prefix and params): they may be named in the options object, never given positionally.
// Every signature defined, in order (scripts/gen-api.mjs writes the TypeScript types from them,
// after defineAllSignatures()).
export const DEFINED_SIGNATURES = [];
// A table {key: signature} of [key, params, opts?] entries whose signatures are defined when first
// looked up (named prefix + key, with `common` options under each entry's own): the ~400 the
// package's tables hold took ~2 ms of its import, defined at once. The table takes no new keys.
const LAZY_TABLES = [];
export function lazySignatures(entries, { prefix = '', common = {} } = {}) {
  const table = {};
  for (const [key, params, opts] of entries) {
    Object.defineProperty(table, key, {
      enumerable: true,
      configurable: true,
      get() {
        const sig = defineSignature(prefix + key, params, { ...common, ...opts });
        Object.defineProperty(table, key, { value: sig, enumerable: true, writable: false, configurable: false });
        return sig;
      },
    });
  }
  LAZY_TABLES.push(table);
  return Object.preventExtensions(table);
}
// Defines every signature of every lazy table (in table order).
export function defineAllSignatures() {
  for (const table of LAZY_TABLES) for (const key of Object.keys(table)) void table[key];
}
export function defineSignature(name, params, { kwargs = [], varargs = null, doc = '' } = {}) {
  const norm = (list, keywordOnly) => list.map(([pyName, def, type = 'any']) => {
    const optional = type.endsWith('?');
    const types = (optional ? type.slice(0, -1) : type).split('|');
    return Object.freeze({
      name: pyName, camel: camelCase(pyName), default: def, types, keywordOnly,
      required: def === REQUIRED, nullable: optional || def === null || types.includes('any'),
    });
  });
  const positional = norm(params, false);
  const keyword = norm(kwargs, true);
  const all = [...positional, ...keyword];
  const byName = new Map();
  for (const p of all) { byName.set(p.name, p); byName.set(p.camel, p); }
  const sig = Object.freeze({ name, positional, keyword, all, byName, varargs, doc });
  DEFINED_SIGNATURES.push(sig);
  return sig;
}

function cloneDefault(v) { return Array.isArray(v) ? v.slice() : v; }

// Binds (…positional, options?) to the signature: returns {camelName: value} for every
// parameter (defaults filled in). A plain object in the last place is the options object,
// unless the parameter at that position takes a dict (Trainer's optimizer_params).
// With varargs, the positional values beyond the declared ones are returned as `rest`.
export function bindArgs(sig, rawArgs) {
  const args = Array.prototype.slice.call(rawArgs);
  while (args.length && args[args.length - 1] === undefined) args.pop();
  let options = null;
  if (args.length && isPlainObject(args[args.length - 1])) {
    const p = sig.positional[args.length - 1];
    if (!(p && p.types.includes('dict'))) options = args.pop();
  }
  const out = {};
  let rest;
  if (args.length > sig.positional.length) {
    if (!sig.varargs) {
      throw new MXNetError(`${sig.name} takes at most ${sig.positional.length} positional argument${sig.positional.length === 1 ? '' : 's'} (${args.length} given)`);
    }
    rest = args.splice(sig.positional.length);
  }
  const given = new Set();
  for (let i = 0; i < args.length; i++) {
    if (args[i] === undefined) continue;
    const p = sig.positional[i];
    out[p.camel] = args[i];
    given.add(p);
  }
  if (options) {
    for (const key of Object.keys(options)) {
      const v = options[key];
      if (v === undefined) continue;
      const p = sig.byName.get(key);
      if (!p) {
        throw new MXNetError(`${sig.name}: unknown argument '${key}' (it takes ${sig.all.map((q) => q.camel).join(', ') || 'no arguments'})`);
      }
      if (given.has(p)) throw new MXNetError(`${sig.name}: got multiple values for argument '${p.name}'`);
      given.add(p);
      out[p.camel] = v;
    }
  }
  for (const p of sig.all) {
    if (given.has(p)) { checkType(sig, p, out[p.camel]); continue; }
    if (p.required) throw new MXNetError(`${sig.name}: missing required argument '${p.name}'`);
    out[p.camel] = cloneDefault(p.default);
  }
  if (rest) out[sig.varargs] = rest;
  return out;
}

// Python's snake_case attribute names as accessors of the camelCase fields.
export function snakeAliases(proto, names) {
  for (const camel of names) {
    const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snake === camel || Object.prototype.hasOwnProperty.call(proto, snake)) continue;
    Object.defineProperty(proto, snake, {
      get() { return this[camel]; },
      set(v) { this[camel] = v; },
      configurable: true,
    });
  }
}
