/* symbol.c -- nodes, attributes, composition (nnvm's Symbol::Compose semantics), groups,
 * internals, listings, and the public symbol API. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "graph.h"
#include "strmap.h"

/* ---- attrs ------------------------------------------------------------------------------------- */
static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = (char *)malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* "<a>_<b>", malloc'd (no length limit: names are never truncated); NULL when out of memory. */
char *mxw_join_name(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *p = (char *)malloc(la + lb + 2);
  if (!p) {
    mxw_fail("out of memory");
    return NULL;
  }
  memcpy(p, a, la);
  p[la] = '_';
  memcpy(p + la + 1, b, lb + 1);
  return p;
}

const char *mxw_attrs_get(const mxw_attrs *a, const char *key) {
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->keys[i], key) == 0) return a->vals[i];
  return NULL;
}

int mxw_attrs_set(mxw_attrs *a, const char *key, const char *val) {
  for (int i = 0; i < a->n; i++) {
    if (strcmp(a->keys[i], key) == 0) {
      char *v = dupstr(val);
      MXW_CHECK(v != NULL, "out of memory");
      free(a->vals[i]);
      a->vals[i] = v;
      return 0;
    }
  }
  if (a->n == a->cap) {
    int cap = a->cap ? a->cap * 2 : 8;
    char **k = (char **)realloc(a->keys, sizeof(char *) * (size_t)cap);
    if (k) a->keys = k;
    char **v = (char **)realloc(a->vals, sizeof(char *) * (size_t)cap);
    if (v) a->vals = v;
    MXW_CHECK(k && v, "out of memory");
    a->cap = cap;
  }
  char *k = dupstr(key), *v = dupstr(val);
  if (!k || !v) {
    free(k);
    free(v);
    return mxw_fail("out of memory");
  }
  a->keys[a->n] = k;
  a->vals[a->n] = v;
  a->n++;
  return 0;
}

void mxw_attrs_remove(mxw_attrs *a, const char *key) {
  for (int i = 0; i < a->n; i++) {
    if (strcmp(a->keys[i], key) == 0) {
      free(a->keys[i]);
      free(a->vals[i]);
      memmove(a->keys + i, a->keys + i + 1, sizeof(char *) * (size_t)(a->n - i - 1));
      memmove(a->vals + i, a->vals + i + 1, sizeof(char *) * (size_t)(a->n - i - 1));
      a->n--;
      return;
    }
  }
}

void mxw_attrs_clear(mxw_attrs *a) {
  for (int i = 0; i < a->n; i++) {
    free(a->keys[i]);
    free(a->vals[i]);
  }
  free(a->keys);
  free(a->vals);
  memset(a, 0, sizeof *a);
}

/* Appends key = val without looking for an existing key (the caller knows it is new). */
static int attrs_append(mxw_attrs *a, const char *key, const char *val) {
  if (a->n == a->cap) {
    MXW_CHECK(a->cap < (1 << 28), "too many attributes");
    int cap = a->cap ? a->cap * 2 : 8;
    char **k = (char **)realloc(a->keys, sizeof(char *) * (size_t)cap);
    if (k) a->keys = k;
    char **v = (char **)realloc(a->vals, sizeof(char *) * (size_t)cap);
    if (v) a->vals = v;
    MXW_CHECK(k && v, "out of memory");
    a->cap = cap;
  }
  char *k = dupstr(key), *v = dupstr(val);
  if (!k || !v) {
    free(k);
    free(v);
    return mxw_fail("out of memory");
  }
  a->keys[a->n] = k;
  a->vals[a->n] = v;
  a->n++;
  return 0;
}

/* Sets n pairs in order (a later pair with the same key wins); a key already in a before the
 * call is overwritten when `overwrite`, else kept. Linear in a->n + n: large maps go through a
 * hash index instead of one scan per key. */
int mxw_attrs_set_many(mxw_attrs *a, int n, const char *const *keys, const char *const *vals, int overwrite) {
  MXW_CHECK(n == 0 || (keys && vals), "NULL attribute arrays");
  int before = a->n;
  if ((int64_t)a->n + n <= 16) {
    for (int i = 0; i < n; i++) {
      MXW_CHECK(keys[i] && vals[i], "NULL attribute key or value");
      if (!overwrite) {
        int k = 0;
        while (k < before && strcmp(a->keys[k], keys[i]) != 0) k++;
        if (k < before) continue;
      }
      MXW_TRY(mxw_attrs_set(a, keys[i], vals[i]));
    }
    return 0;
  }
  mxw_strmap m;
  MXW_CHECK(mxw_strmap_init(&m, (size_t)a->n + (size_t)n) == 0, "out of memory");
  int rc = 0;
  for (int i = 0; i < a->n && rc == 0; i++) rc = mxw_strmap_put(&m, a->keys[i], i) == 0 ? 0 : mxw_fail("out of memory");
  for (int i = 0; i < n && rc == 0; i++) {
    if (!keys[i] || !vals[i]) {
      rc = mxw_fail("NULL attribute key or value");
      break;
    }
    int *at = mxw_strmap_find(&m, keys[i]);
    if (at) {
      if (*at < before && !overwrite) continue;
      char *v = dupstr(vals[i]);
      if (!v) {
        rc = mxw_fail("out of memory");
        break;
      }
      free(a->vals[*at]);
      a->vals[*at] = v;
      continue;
    }
    rc = attrs_append(a, keys[i], vals[i]);
    /* the map borrows the copy owned by a (stable: a->keys may move, the strings do not) */
    if (rc == 0 && mxw_strmap_put(&m, a->keys[a->n - 1], a->n - 1) != 0) rc = mxw_fail("out of memory");
  }
  mxw_strmap_free(&m);
  return rc;
}

int mxw_attrs_copy(mxw_attrs *dst, const mxw_attrs *src) {
  return mxw_attrs_set_many(dst, src->n, (const char *const *)src->keys, (const char *const *)src->vals, 1);
}

/* Variable hints are checked where they are set, as MXNet's shape and type inference parses
 * them: "__shape__" a shape ("(2, 0)", "[2,3]", "()", "None"; 0 or -1 an unknown dimension) and
 * "__dtype__" an integer type flag (-1 = unknown). Anything else is an error naming the variable. */
static int check_hint(const char *var, const char *key, const char *val) {
  if (strcmp(key, "__shape__") == 0) {
    mxw_attr_spec spec = {.name = "__shape__", .type = MXW_ATTR_SHAPE, .optional = 1};
    mxw_tuple t;
    int ok = mxw_attr_parse(&spec, val, &t) == 0 && t.ndim <= MXW_MAX_NDIM;
    for (int i = 0; ok && i < t.ndim; i++) ok = t.has[i] && t.v[i] >= -1 && t.v[i] <= INT32_MAX;
    if (!ok)
      return mxw_fail(
          "variable '%s': attribute __shape__ = '%s' is not a valid shape (expected a tuple of at most %d "
          "integers such as (2, 3), 0 or -1 for an unknown dimension)",
          var, val, MXW_MAX_NDIM);
  } else if (strcmp(key, "__dtype__") == 0) {
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    while (end != val && *end && isspace((unsigned char)*end)) end++;
    if (end == val || *end || errno || v < -1 || v >= MXW_NUM_DTYPES || (v >= 0 && mxw_dtype_size((int)v) == 0))
      return mxw_fail(
          "variable '%s': attribute __dtype__ = '%s' is not a type flag (expected an integer from 0 to %d, "
          "as MXNet writes them, or -1 for unknown)",
          var, val, MXW_NUM_DTYPES - 1);
  }
  return 0;
}

int mxw_var_check_hints(const mxw_node *n) {
  if (n->op) return 0;
  const char *sh = mxw_attrs_get(&n->attrs, "__shape__");
  if (sh) MXW_TRY(check_hint(n->name, "__shape__", sh));
  const char *dt = mxw_attrs_get(&n->attrs, "__dtype__");
  if (dt) MXW_TRY(check_hint(n->name, "__dtype__", dt));
  return 0;
}

/* ---- nodes ------------------------------------------------------------------------------------- */
mxw_node *mxw_node_new(const char *name) {
  mxw_node *n = (mxw_node *)calloc(1, sizeof *n);
  if (!n || !(n->name = dupstr(name ? name : ""))) {
    free(n);
    mxw_fail("out of memory");
    return NULL;
  }
  n->refcount = 1;
  n->op_id = -1;
  return n;
}

void mxw_node_retain(mxw_node *n) {
  if (n) n->refcount++;
}

/* Iterative release: freeing a long chain must not recurse. */
void mxw_node_release(mxw_node *n) {
  if (!n) return;
  mxw_node **stack = NULL;
  int sp = 0, cap = 0;
  mxw_node *cur = n;
  for (;;) {
    if (cur && --cur->refcount == 0) {
      int need = sp + cur->num_inputs + cur->num_control;
      if (need > cap) {
        int nc = need * 2 + 16;
        mxw_node **s2 = (mxw_node **)realloc(stack, sizeof *stack * (size_t)nc);
        if (!s2) { /* cannot track children: leak them rather than crash */
          need = sp;
        } else {
          stack = s2;
          cap = nc;
        }
      }
      if (need > sp) {
        for (int i = 0; i < cur->num_inputs; i++) stack[sp++] = cur->inputs[i].node;
        for (int i = 0; i < cur->num_control; i++) stack[sp++] = cur->control[i];
      }
      free(cur->inputs);
      free(cur->control);
      mxw_subgraph_release(cur);
      mxw_ag_info_free(cur->ag);
      mxw_params_free(cur->params);
      mxw_attrs_clear(&cur->attrs);
      free(cur->name);
      free(cur);
    }
    if (sp == 0) break;
    cur = stack[--sp];
  }
  free(stack);
}

int mxw_node_set_op(mxw_node *n, int op_id) {
  const mxw_op_def *op = mxw_op_get(op_id);
  MXW_CHECK(op != NULL, "unknown operator id %d", op_id);
  mxw_params *p = NULL;
  MXW_TRY(
      mxw_params_create(op_id, n->attrs.n, (const char *const *)n->attrs.keys, (const char *const *)n->attrs.vals, &p));
  mxw_params_free(n->params);
  n->params = p;
  n->op = op;
  n->op_id = op_id;
  return mxw_subgraph_attach(n);
}

int mxw_node_num_outputs(const mxw_node *n) { return n->op ? mxw_params_num_outputs(n->params) : 1; }
int mxw_node_num_visible_outputs(const mxw_node *n) { return n->op ? mxw_params_num_visible_outputs(n->params) : 1; }
int mxw_node_tape_output(const mxw_node *n) {
  return n->op && n->op->tape_output ? n->op->tape_output(n->params->param) : -1;
}

void mxw_node_input_name(const mxw_node *n, int i, char *buf, size_t len) {
  const mxw_op_def *op = n->op;
  if (op && op->input_name_fn && n->params) {
    const char *nm = op->input_name_fn(n->params->param, i);
    if (nm) {
      snprintf(buf, len, "%s", nm);
      return;
    }
  }
  if (op && op->num_inputs != MXW_VARIADIC && op->input_names) {
    int k = 0;
    while (op->input_names[k] && k < i) k++;
    if (op->input_names[k]) {
      snprintf(buf, len, "%s", op->input_names[k]);
      return;
    }
  }
  snprintf(buf, len, "arg%d", i);
}

void mxw_node_output_name(const mxw_node *n, int i, char *buf, size_t len) {
  const mxw_op_def *op = n->op;
  if (op && op->output_names) {
    int k = 0;
    while (op->output_names[k] && k < i) k++;
    if (op->output_names[k]) {
      snprintf(buf, len, "%s", op->output_names[k]);
      return;
    }
  }
  /* a tape output is not counted: a one-output _foreach's output is "output", as in MXNet */
  if (mxw_node_num_outputs(n) - (mxw_node_tape_output(n) >= 0) == 1)
    snprintf(buf, len, "output");
  else
    snprintf(buf, len, "output%d", i);
}

int mxw_node_is_mutated_input(const mxw_node *n, int i) { return n->op ? mxw_op_mutates_input(n->op, i) : 0; }

/* ---- DFS --------------------------------------------------------------------------------------- */
static uint32_t g_mark = 0;

int mxw_graph_dfs(const mxw_entry *heads, int num_heads, mxw_node ***out, int *num_nodes) {
  uint32_t mark = ++g_mark;
  typedef struct {
    mxw_node *n;
    int next;
  } frame;
  frame *stack = NULL;
  mxw_node **order = NULL;
  int sp = 0, scap = 0, cnt = 0, ocap = 0;
#define PUSH(node)                                                       \
  do {                                                                   \
    if (sp == scap) {                                                    \
      scap = scap ? scap * 2 : 64;                                       \
      frame *s2 = (frame *)realloc(stack, sizeof *stack * (size_t)scap); \
      if (!s2) goto oom;                                                 \
      stack = s2;                                                        \
    }                                                                    \
    stack[sp].n = (node);                                                \
    stack[sp].next = 0;                                                  \
    sp++;                                                                \
    (node)->mark = mark;                                                 \
  } while (0)
  for (int h = 0; h < num_heads; h++) {
    mxw_node *head = heads[h].node;
    if (!head || head->mark == mark) continue;
    PUSH(head);
    while (sp > 0) {
      frame *f = &stack[sp - 1];
      int indeg = f->n->num_inputs + f->n->num_control;
      if (f->next == indeg) {
        if (cnt == ocap) {
          ocap = ocap ? ocap * 2 : 64;
          mxw_node **o2 = (mxw_node **)realloc(order, sizeof *order * (size_t)ocap);
          if (!o2) goto oom;
          order = o2;
        }
        f->n->index = cnt;
        order[cnt++] = f->n;
        sp--;
      } else {
        int i = f->next++;
        mxw_node *in = i < f->n->num_inputs ? f->n->inputs[i].node : f->n->control[i - f->n->num_inputs];
        if (in && in->mark != mark) PUSH(in);
      }
    }
  }
#undef PUSH
  free(stack);
  *out = order;
  *num_nodes = cnt;
  return 0;
oom:
  free(stack);
  free(order);
  return mxw_fail("out of memory traversing the graph");
}

/* ---- symbols ------------------------------------------------------------------------------------ */
mxw_symbol *mxw_symbol_alloc(int n) {
  mxw_symbol *s = (mxw_symbol *)calloc(1, sizeof *s);
  if (!s) return NULL;
  s->outputs = (mxw_entry *)calloc((size_t)(n > 0 ? n : 1), sizeof(mxw_entry));
  if (!s->outputs) {
    free(s);
    return NULL;
  }
  s->n = n;
  return s;
}

int mxw_sym_free(mxw_symbol *s) {
  if (!s) return 0;
  for (int i = 0; i < s->n; i++) mxw_node_release(s->outputs[i].node);
  free(s->outputs);
  free(s);
  return 0;
}

static int set_attrs(mxw_attrs *a, int n, const char *const *keys, const char *const *vals) {
  MXW_CHECK(n >= 0 && (n == 0 || (keys && vals)), "NULL attribute arrays");
  return mxw_attrs_set_many(a, n, keys, vals, 1);
}

int mxw_sym_var(const char *name, int nattr, const char *const *keys, const char *const *vals, mxw_symbol **out) {
  MXW_CHECK(name && out, "NULL argument");
  mxw_node *n = mxw_node_new(name);
  if (!n) return -1;
  mxw_symbol *s = mxw_symbol_alloc(1);
  if (!s || set_attrs(&n->attrs, nattr, keys, vals) != 0 || mxw_var_check_hints(n) != 0) {
    if (!s) mxw_fail("out of memory");
    free(s ? s->outputs : NULL);
    free(s);
    mxw_node_release(n);
    return -1;
  }
  s->outputs[0].node = n;
  *out = s;
  return 0;
}

/* Creates an op node, composing it with inputs[i] (single-output symbols; NULL = a new variable
 * "<name>_<input name>" that copies the op's attributes, as nnvm's Compose does). */
int mxw_sym_compose(int op_id, const char *name, int nattr, const char *const *keys, const char *const *vals,
                    int num_inputs, mxw_symbol *const *inputs, mxw_symbol **out) {
  MXW_CHECK(name && out, "NULL argument");
  const mxw_op_def *op = mxw_op_get(op_id);
  MXW_CHECK(op != NULL, "unknown operator id %d", op_id);
  mxw_node *n = mxw_node_new(name);
  if (!n) return -1;
  mxw_symbol *s = NULL;
  if (set_attrs(&n->attrs, nattr, keys, vals) != 0 || mxw_node_set_op(n, op_id) != 0) goto fail;
  int nin = mxw_params_num_inputs(n->params);
  if (num_inputs > nin) {
    mxw_fail("Operator %s: %d inputs given, it takes %d", op->name, num_inputs, nin);
    goto fail;
  }
  n->inputs = (mxw_entry *)calloc((size_t)(nin > 0 ? nin : 1), sizeof(mxw_entry));
  if (!n->inputs) {
    mxw_fail("out of memory");
    goto fail;
  }
  n->num_inputs = nin;
  for (int i = 0; i < nin; i++) {
    mxw_symbol *in = i < num_inputs ? inputs[i] : NULL;
    char iname[64];
    mxw_node_input_name(n, i, iname, sizeof iname);
    if (in) {
      if (in->n != 1) {
        mxw_fail("Operator %s: input %s (%d) must have exactly one output, it has %d", op->name, iname, i, in->n);
        goto fail;
      }
      n->inputs[i] = in->outputs[0];
      mxw_node_retain(n->inputs[i].node);
    } else {
      if (op->num_inputs == MXW_VARIADIC && !(op->input_name_fn && op->input_name_fn(n->params->param, i))) {
        mxw_fail("Operator %s: all %d inputs must be given", op->name, nin);
        goto fail;
      }
      char *vname = mxw_join_name(name, iname);
      mxw_node *v = vname ? mxw_node_new(vname) : NULL;
      free(vname);
      if (!v) goto fail;
      n->inputs[i].node = v;
      if (mxw_attrs_copy(&v->attrs, &n->attrs) != 0 || mxw_var_check_hints(v) != 0) goto fail;
    }
  }
  /* versions of mutated variables, and FSetInputVarAttrOnCompose */
  for (int i = 0; i < nin; i++) {
    mxw_entry *e = &n->inputs[i];
    if (e->node->op) continue;
    if (mxw_node_is_mutated_input(n, i)) e->node->version++;
    e->version = e->node->version;
    const char *init = op->input_var_init ? op->input_var_init(n->params->param, i) : NULL;
    if (init && !mxw_attrs_get(&e->node->attrs, "__init__") && mxw_attrs_set(&e->node->attrs, "__init__", init) != 0)
      goto fail;
  }
  if (!(s = mxw_symbol_of_node(n, mxw_node_num_visible_outputs(n)))) goto fail;
  *out = s;
  return 0;
fail:
  mxw_node_release(n);
  return -1;
}

mxw_symbol *mxw_symbol_of_node(mxw_node *n, int nout) {
  mxw_symbol *s = mxw_symbol_alloc(nout);
  if (!s) {
    mxw_fail("out of memory");
    return NULL;
  }
  for (int i = 0; i < nout; i++) {
    s->outputs[i].node = n;
    s->outputs[i].index = (uint32_t)i;
    if (i) mxw_node_retain(n);
  }
  return s;
}

int mxw_sym_group(int num, mxw_symbol *const *syms, mxw_symbol **out) {
  MXW_CHECK(out && (num == 0 || syms), "NULL argument");
  int total = 0;
  for (int i = 0; i < num; i++) {
    MXW_CHECK(syms[i] != NULL, "symbol %d is NULL", i);
    total += syms[i]->n;
  }
  mxw_symbol *s = mxw_symbol_alloc(total);
  MXW_CHECK(s != NULL, "out of memory");
  int k = 0;
  for (int i = 0; i < num; i++)
    for (int j = 0; j < syms[i]->n; j++) {
      s->outputs[k] = syms[i]->outputs[j];
      mxw_node_retain(s->outputs[k].node);
      k++;
    }
  *out = s;
  return 0;
}

int mxw_sym_num_outputs(const mxw_symbol *s) { return s ? s->n : 0; }

int mxw_sym_output(const mxw_symbol *s, int i, mxw_symbol **out) {
  MXW_CHECK(s && out, "NULL argument");
  MXW_CHECK(i >= 0 && i < s->n, "output index %d out of range (the symbol has %d outputs)", i, s->n);
  mxw_symbol *r = mxw_symbol_alloc(1);
  MXW_CHECK(r != NULL, "out of memory");
  r->outputs[0] = s->outputs[i];
  mxw_node_retain(r->outputs[0].node);
  *out = r;
  return 0;
}

/* Every node's visible outputs in DFS order (variables at their current version). */
int mxw_sym_internals(const mxw_symbol *s, mxw_symbol **out) {
  MXW_CHECK(s && out, "NULL argument");
  mxw_node **nodes;
  int nn;
  MXW_TRY(mxw_graph_dfs(s->outputs, s->n, &nodes, &nn));
  int total = 0;
  for (int i = 0; i < nn; i++) total += mxw_node_num_visible_outputs(nodes[i]);
  mxw_symbol *r = mxw_symbol_alloc(total);
  if (!r) {
    free(nodes);
    return mxw_fail("out of memory");
  }
  int k = 0;
  for (int i = 0; i < nn; i++) {
    int nv = mxw_node_num_visible_outputs(nodes[i]);
    for (int j = 0; j < nv; j++) {
      r->outputs[k].node = nodes[i];
      r->outputs[k].index = (uint32_t)j;
      r->outputs[k].version = nodes[i]->op ? 0 : nodes[i]->version;
      mxw_node_retain(nodes[i]);
      k++;
    }
  }
  free(nodes);
  *out = r;
  return 0;
}

/* Sets attributes on the symbol's single head node (as Symbol._set_attr). For op nodes, the
 * parsed params are refreshed so that a bad value is an error here. */
int mxw_sym_set_attrs(mxw_symbol *s, int nattr, const char *const *keys, const char *const *vals) {
  MXW_CHECK(s && s->n >= 1, "NULL or empty symbol");
  mxw_node *n = s->outputs[0].node;
  for (int i = 1; i < s->n; i++) MXW_CHECK(s->outputs[i].node == n, "cannot set attributes on a grouped symbol");
  if (!n->op) /* checked before anything is set, so that a refused value leaves no trace */
    for (int i = 0; i < nattr; i++)
      MXW_TRY(check_hint(n->name, keys && keys[i] ? keys[i] : "", vals && vals[i] ? vals[i] : ""));
  MXW_TRY(set_attrs(&n->attrs, nattr, keys, vals));
  if (n->op) MXW_TRY(mxw_node_set_op(n, n->op_id));
  return 0;
}

/* A copy of the graph in which variables named names[i] are replaced by inputs[i] (one-output
 * symbols): Python's copy(sym)._compose(**{name: input}), used by SymbolBlock with Symbols. */
int mxw_sym_substitute(const mxw_symbol *s, int num, const char *const *names, mxw_symbol *const *inputs,
                       mxw_symbol **out) {
  MXW_CHECK(s && out && (num == 0 || (names && inputs)), "NULL argument");
  for (int k = 0; k < num; k++)
    MXW_CHECK(inputs[k] && inputs[k]->n == 1, "substitute for '%s' must be a one-output symbol",
              names[k] ? names[k] : "?");
  mxw_node **nodes;
  int nn;
  MXW_TRY(mxw_graph_dfs(s->outputs, s->n, &nodes, &nn));
  mxw_entry *map = (mxw_entry *)calloc((size_t)(nn ? nn : 1), sizeof(mxw_entry)); /* old node -> new entry */
  mxw_symbol *r = mxw_symbol_alloc(s->n);
  int rc = (map && r) ? 0 : mxw_fail("out of memory");
  mxw_strmap byname = {0};
  if (rc == 0 && mxw_strmap_init(&byname, (size_t)num) != 0) rc = mxw_fail("out of memory");
  for (int k = num - 1; k >= 0 && rc == 0; k--) /* the first of equal names wins, as the scan did */
    if (!names[k] || mxw_strmap_put(&byname, names[k], k) != 0) rc = mxw_fail(names[k] ? "out of memory" : "NULL name");
  for (int i = 0; i < nn && rc == 0; i++) {
    mxw_node *o = nodes[i];
    if (!o->op) {
      const int *at = mxw_strmap_find(&byname, o->name);
      map[i] = at ? inputs[*at]->outputs[0] : (mxw_entry){o, 0, o->version};
      mxw_node_retain(map[i].node);
      continue;
    }
    mxw_node *c = mxw_node_new(o->name);
    if (!c) {
      rc = -1;
      break;
    }
    map[i].node = c;
    if (mxw_attrs_copy(&c->attrs, &o->attrs) != 0 || mxw_subgraph_copy(c, o) != 0 ||
        mxw_node_set_op(c, o->op_id) != 0) {
      rc = -1;
      break;
    }
    c->inputs = (mxw_entry *)calloc((size_t)(o->num_inputs ? o->num_inputs : 1), sizeof(mxw_entry));
    c->control = o->num_control ? (mxw_node **)calloc((size_t)o->num_control, sizeof(mxw_node *)) : NULL;
    if (!c->inputs || (o->num_control && !c->control)) {
      rc = mxw_fail("out of memory");
      break;
    }
    for (int k = 0; k < o->num_inputs; k++) {
      mxw_entry src = map[o->inputs[k].node->index];
      c->inputs[k] = (mxw_entry){src.node, src.node->op ? o->inputs[k].index : src.index, o->inputs[k].version};
      if (!o->inputs[k].node->op && src.node->op) c->inputs[k].version = 0;
      mxw_node_retain(src.node);
      c->num_inputs++;
    }
    for (int k = 0; k < o->num_control; k++) {
      c->control[k] = map[o->control[k]->index].node;
      mxw_node_retain(c->control[k]);
      c->num_control++;
    }
  }
  for (int h = 0; h < s->n && rc == 0; h++) {
    mxw_entry src = map[s->outputs[h].node->index];
    r->outputs[h] =
        (mxw_entry){src.node, s->outputs[h].node->op ? s->outputs[h].index : src.index, s->outputs[h].version};
    mxw_node_retain(src.node);
  }
  mxw_strmap_free(&byname);
  for (int i = 0; map && i < nn; i++) mxw_node_release(map[i].node);
  free(map);
  free(nodes);
  if (rc != 0) {
    if (r) {
      for (int h = 0; h < s->n; h++) mxw_node_release(r->outputs[h].node);
      free(r->outputs);
      free(r);
    }
    return -1;
  }
  *out = r;
  return 0;
}

/* ---- listings (JSON text for the binding) ------------------------------------------------------ */
static char *g_info = NULL;

/* {"name": head name or null, "outputs": [...], "arguments": [...], "aux": [...], "inputs": [...],
 *  "attrs": {head attrs} or null, "heads": [[op or null, nvisible_outputs], ...]} */
const char *mxw_sym_info(const mxw_symbol *s) {
  if (!s) {
    mxw_fail("NULL symbol");
    return NULL;
  }
  mxw_node **nodes;
  int nn;
  if (mxw_graph_dfs(s->outputs, s->n, &nodes, &nn) != 0) return NULL;
  cJSON *root = cJSON_CreateObject();
  mxw_node *h = s->n > 0 ? s->outputs[0].node : NULL;
  int single = s->n == 1;
  if (single && h)
    cJSON_AddStringToObject(root, "name", h->name);
  else
    cJSON_AddNullToObject(root, "name");
  cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
  for (int i = 0; i < s->n; i++) {
    mxw_node *n = s->outputs[i].node;
    char oname[64];
    if (!n->op) {
      cJSON_AddItemToArray(outs, cJSON_CreateString(n->name));
    } else {
      mxw_node_output_name(n, (int)s->outputs[i].index, oname, sizeof oname);
      char *full = n->name[0] ? mxw_join_name(n->name, oname) : NULL;
      cJSON_AddItemToArray(outs, cJSON_CreateString(n->name[0] ? (full ? full : "") : oname));
      free(full);
    }
  }
  /* mutable (aux) variables: inputs at FMutateInputs positions */
  uint32_t aux_mark = ++g_mark;
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < nodes[i]->num_inputs; k++)
      if (mxw_node_is_mutated_input(nodes[i], k) && !nodes[i]->inputs[k].node->op)
        nodes[i]->inputs[k].node->mark = aux_mark;
  cJSON *args = cJSON_AddArrayToObject(root, "arguments");
  cJSON *aux = cJSON_AddArrayToObject(root, "aux");
  cJSON *ins = cJSON_AddArrayToObject(root, "inputs");
  for (int i = 0; i < nn; i++) {
    if (nodes[i]->op) continue;
    cJSON_AddItemToArray(ins, cJSON_CreateString(nodes[i]->name));
    cJSON_AddItemToArray(nodes[i]->mark == aux_mark ? aux : args, cJSON_CreateString(nodes[i]->name));
  }
  /* label variables: consumed only as an input named "label" (loss heads' labels, which stay
   * unbound at inference) */
  cJSON *labels = cJSON_AddArrayToObject(root, "labels");
  uint8_t *use = (uint8_t *)calloc((size_t)(nn ? nn : 1), 1); /* per variable: 1 as "label", 2 otherwise */
  if (!use) {
    free(nodes);
    cJSON_Delete(root);
    mxw_fail("out of memory");
    return NULL;
  }
  for (int j = 0; j < nn; j++)
    for (int k = 0; k < nodes[j]->num_inputs; k++) {
      const mxw_node *v = nodes[j]->inputs[k].node;
      if (v->op) continue;
      char iname[64];
      mxw_node_input_name(nodes[j], k, iname, sizeof iname);
      use[v->index] |= strcmp(iname, "label") == 0 ? 1 : 2;
    }
  for (int i = 0; i < nn; i++)
    if (!nodes[i]->op && use[i] == 1) cJSON_AddItemToArray(labels, cJSON_CreateString(nodes[i]->name));
  free(use);
  if (single && h) {
    cJSON *at = cJSON_AddObjectToObject(root, "attrs");
    for (int i = 0; i < h->attrs.n; i++) cJSON_AddStringToObject(at, h->attrs.keys[i], h->attrs.vals[i]);
    if (h->op)
      cJSON_AddStringToObject(root, "op", h->op->name);
    else
      cJSON_AddNullToObject(root, "op");
  }
  free(nodes);
  free(g_info);
  g_info = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!g_info) mxw_fail("out of memory");
  return g_info;
}
