/* json.c -- MXNet's symbol JSON (../shared/spec/symbol-json.md).
 * Reader: cJSON parses the text; every dialect is accepted ("attrs", "attr", "param", 2- and
 * 3-element entries, backward_source_id), unknown keys are ignored, and MXNet's legacy upgrades
 * are applied by version (hidden keys, 0.8 BatchNorm aux inputs, __init__ defaults, argmax
 * axis). Unknown operators are collected first and reported together.
 * Writer: dmlc::JSONWriter's exact text (indentation, ", " separators with their trailing space,
 * single-line rules, sorted node attributes; only attribute keys that need escaping differ, as
 * dmlc writes keys raw). cJSON cannot print this layout, so the writer is a small emitter of its
 * own. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "graph.h"
#include "strmap.h"

#define MXW_MXNET_VERSION 10901 /* the MXNet version whose files we write */

static const char *const k_hidden[] = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", NULL};

/* ---- reader ------------------------------------------------------------------------------------- */
/* Every walk over a cJSON array or object follows its linked list (cJSON_GetArrayItem(i) walks
 * from the head each time, which made long graphs quadratic). */
static int read_entry(const cJSON *e, int limit, const char *where, mxw_entry *out, mxw_node **nodes) {
  double v[3] = {0, 0, 0};
  int n = 0;
  const cJSON *x = cJSON_IsArray(e) ? e->child : NULL;
  for (; x && n < 3; x = x->next, n++) {
    MXW_CHECK(cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 4294967296.0 &&
                  x->valuedouble == (double)(uint32_t)x->valuedouble,
              "%s: entry element %d is not a non-negative integer", where, n);
    v[n] = x->valuedouble;
  }
  MXW_CHECK(cJSON_IsArray(e) && !x && (n == 2 || n == 3),
            "%s: an entry must be [node, index] or [node, index, version]", where);
  MXW_CHECK(v[0] < limit, "%s: refers to node %.0f, which does not come before it", where, v[0]);
  mxw_node *src = nodes[(int)v[0]];
  MXW_CHECK(v[1] < mxw_node_num_outputs(src), "%s: output %.0f of node '%s' does not exist (it has %d)", where, v[1],
            src->name, mxw_node_num_outputs(src));
  out->node = src;
  out->index = (uint32_t)v[1];
  out->version = (uint32_t)v[2];
  return 0;
}

static int count_items(const cJSON *a) {
  int n = 0;
  for (const cJSON *x = a ? a->child : NULL; x; x = x->next) n++;
  return n;
}

/* One JSON object of string values into the node's attributes (linear in its size). */
static int add_string_map(mxw_attrs *a, const cJSON *obj, int overwrite, const char *where) {
  if (!obj) return 0;
  MXW_CHECK(cJSON_IsObject(obj), "%s: attributes must be an object", where);
  int n = count_items(obj);
  if (n == 0) return 0;
  const char **kv = (const char **)malloc(sizeof(char *) * 2 * (size_t)n);
  MXW_CHECK(kv != NULL, "out of memory");
  int i = 0;
  for (const cJSON *it = obj->child; it; it = it->next, i++) {
    if (!cJSON_IsString(it) || !it->string) {
      free(kv);
      return mxw_fail("%s: attribute '%s' is not a string", where, it->string ? it->string : "");
    }
    kv[i] = it->string;
    kv[n + i] = it->valuestring;
  }
  int rc = mxw_attrs_set_many(a, n, kv, kv + n, overwrite);
  free(kv);
  return rc;
}

/* Position of the last occurrence of t in s (std::string::rfind), or -1. */
static long rfind(const char *s, size_t sl, const char *t, size_t tl) {
  if (tl > sl) return -1;
  for (size_t p = sl - tl + 1; p-- > 0;)
    if (memcmp(s + p, t, tl) == 0) return (long)p;
  return -1;
}

/* Is key taken out by MXNet's FixParsing: the last occurrence of a hidden key is at its start
 * or its end. */
static int is_hidden_candidate(const char *key, size_t kl) {
  for (int h = 0; k_hidden[h]; h++) {
    size_t hl = strlen(k_hidden[h]);
    long pos = rfind(key, kl, k_hidden[h], hl);
    if (pos == 0 || (pos > 0 && (size_t)pos == kl - hl)) return 1;
  }
  return 0;
}

/* The node's input names (owned by *names) in a map name -> first input with that name. */
static int input_name_map(const mxw_node *n, char ***names, mxw_strmap *map) {
  *names = (char **)calloc((size_t)(n->num_inputs ? n->num_inputs : 1), sizeof(char *));
  MXW_CHECK(*names != NULL && mxw_strmap_init(map, (size_t)n->num_inputs) == 0, "out of memory");
  for (int k = n->num_inputs - 1; k >= 0; k--) {
    char iname[128];
    mxw_node_input_name(n, k, iname, sizeof iname);
    size_t l = strlen(iname) + 1;
    MXW_CHECK(((*names)[k] = (char *)malloc(l)) != NULL, "out of memory");
    memcpy((*names)[k], iname, l);
    MXW_CHECK(mxw_strmap_put(map, (*names)[k], k) == 0, "out of memory");
  }
  return 0;
}

/* MXNet's UpgradeJSON_FixParsing (src/nnvm/legacy_json_util.cc) for one node: a key whose last
 * occurrence of a hidden key (lr_mult, wd_mult, ...) is at its start or its end is taken out
 * before the attributes are parsed, then put back: exactly "lr_mult" becomes "__lr_mult__";
 * "<input>_lr_mult" on an operator becomes "__lr_mult__" on that input when it is a variable;
 * any other such key is put back unchanged. Each key is looked at once and nothing is copied
 * into a fixed-size buffer (a long key once made the loop restart forever). */
static int fix_parsing(mxw_node *n, const char *where) {
  mxw_attrs *a = &n->attrs;
  int m = 0;
  for (int i = 0; i < a->n; i++) m += is_hidden_candidate(a->keys[i], strlen(a->keys[i]));
  if (!m) return 0;
  /* take the candidates out (their strings move to hk/hv), compacting the rest in order */
  char **hk = (char **)malloc(sizeof(char *) * 2 * (size_t)m);
  const char **bk = (const char **)malloc(sizeof(char *) * 2 * (size_t)m);
  if (!hk || !bk) {
    // GCOVR_EXCL_START: allocation failure, not reachable natively
    free(hk);
    free(bk);
    return mxw_fail("out of memory");
    // GCOVR_EXCL_STOP
  }
  char **hv = hk + m;
  const char **bv = bk + m;
  int j = 0, w = 0;
  for (int i = 0; i < a->n; i++) {
    if (is_hidden_candidate(a->keys[i], strlen(a->keys[i]))) {
      hk[j] = a->keys[i];
      hv[j++] = a->vals[i];
    } else {
      a->keys[w] = a->keys[i];
      a->vals[w++] = a->vals[i];
    }
  }
  a->n = w;
  int rc = 0, nb = 0;
  char **inames = NULL;
  mxw_strmap inputs = {0};
  for (j = 0; j < m && rc == 0; j++) {
    const char *key = hk[j];
    size_t kl = strlen(key);
    int done = 0;
    for (int h = 0; k_hidden[h]; h++) {
      size_t hl = strlen(k_hidden[h]);
      long pos = rfind(key, kl, k_hidden[h], hl);
      char hidden[32];
      snprintf(hidden, sizeof hidden, "__%s__", k_hidden[h]);
      if (pos == 0 && kl == hl) {
        rc = mxw_attrs_set(a, hidden, hv[j]);
        done = 1;
        break;
      }
      if (pos > 1 && (size_t)pos == kl - hl) {
        if (!n->op) break;
        if (!inames) { /* the input names come from the parsed attributes (MXNet parses here too) */
          if (mxw_node_set_op(n, n->op_id) != 0) {
            mxw_error_prefix("%s: ", where);
            rc = -1;
            break;
          }
          if ((rc = input_name_map(n, &inames, &inputs)) != 0) break;
        }
        char *arg = (char *)malloc((size_t)pos);
        if (!arg) {
          // GCOVR_EXCL_START: allocation failure, not reachable natively
          rc = mxw_fail("out of memory");
          break;
          // GCOVR_EXCL_STOP
        }
        memcpy(arg, key, (size_t)pos - 1);
        arg[pos - 1] = 0;
        const int *k = mxw_strmap_find(&inputs, arg);
        free(arg);
        if (k && !n->inputs[*k].node->op) {
          rc = mxw_attrs_set(&n->inputs[*k].node->attrs, hidden, hv[j]);
          done = 1;
        }
        break;
      }
    }
    if (!done) {
      bk[nb] = key;
      bv[nb++] = hv[j];
    }
  }
  if (rc == 0 && nb) rc = mxw_attrs_set_many(a, nb, bk, bv, 1);
  for (j = 0; j < m; j++) {
    free(hk[j]);
    free(hv[j]);
  }
  free(hk);
  free(bk);
  if (inames)
    for (int k = 0; k < n->num_inputs; k++) free(inames[k]);
  free(inames);
  mxw_strmap_free(&inputs);
  return rc;
}

/* Unsupported ops, grouped: "Foo (nodes a, b); Bar (node c)". */
#define MAX_UNKNOWN 32
typedef struct unknown_ops {
  int count;
  char op[MAX_UNKNOWN][64];
  char nodes[MAX_UNKNOWN][512];
  int num_nodes[MAX_UNKNOWN];
  int num_listed[MAX_UNKNOWN];
  int dropped;
} unknown_ops;

static void note_unknown(unknown_ops *u, const char *op, const char *node) {
  int k = 0;
  while (k < u->count && strcmp(u->op[k], op) != 0) k++;
  if (k == u->count) {
    if (u->count == MAX_UNKNOWN) {
      u->dropped++;
      return;
    }
    snprintf(u->op[k], sizeof u->op[k], "%s", op);
    u->count++;
  }
  size_t used = strlen(u->nodes[k]);
  if (used + strlen(node) + 2 < sizeof u->nodes[k] - 16) { /* keep whole names; count the rest */
    snprintf(u->nodes[k] + used, sizeof u->nodes[k] - used, "%s%s", u->num_listed[k] ? ", " : "", node);
    u->num_listed[k]++;
  }
  u->num_nodes[k]++;
}

static void unknown_text(const unknown_ops *u, char *buf, size_t len) {
  buf[0] = 0;
  for (int k = 0; k < u->count; k++) {
    size_t used = strlen(buf);
    char more[48] = "";
    if (u->num_nodes[k] > u->num_listed[k])
      snprintf(more, sizeof more, " and %d more", u->num_nodes[k] - u->num_listed[k]);
    snprintf(buf + used, len - used, "%s%s (node%s %s%s)", k ? "; " : "", u->op[k], u->num_nodes[k] > 1 ? "s" : "",
             u->nodes[k], more);
  }
  if (u->dropped) {
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "; and %d more", u->dropped);
  }
}

/* cJSON's allocations, watched: a parse that fails because an allocation failed is an out of
 * memory error, not "parse error near byte N" (a user would go looking for a corrupt file). */
static size_t g_json_failed_alloc;
static void *json_malloc(size_t n) {
  void *p = malloc(n);
  if (!p) g_json_failed_alloc = n ? n : 1;
  return p;
}

/* Subgraphs (control-flow ops) nest graphs in nodes; a file nesting deeper is refused. */
#define MXW_MAX_SUBGRAPH_DEPTH 16

static int read_graph(const cJSON *root, int version, int depth, mxw_symbol **out);

/* A node's "subgraphs": a list of full graphs (nodes, arg_nodes, heads, ...), read as symbols. */
static int read_subgraphs(mxw_node *n, const cJSON *js, int version, int depth, const char *where) {
  MXW_CHECK(cJSON_IsArray(js), "%s: \"subgraphs\" must be an array", where);
  MXW_CHECK(depth < MXW_MAX_SUBGRAPH_DEPTH, "%s: subgraphs nested more than %d levels deep", where,
            MXW_MAX_SUBGRAPH_DEPTH);
  int ns = count_items(js);
  if (ns == 0) return 0;
  MXW_CHECK(ns <= 8, "%s: %d subgraphs (a control-flow operator has at most 3)", where, ns);
  n->subgraphs = (mxw_symbol **)calloc((size_t)ns, sizeof(mxw_symbol *));
  MXW_CHECK(n->subgraphs != NULL, "out of memory");
  int k = 0;
  for (const cJSON *g = js->child; g; g = g->next, k++) {
    if (read_graph(g, version, depth + 1, &n->subgraphs[k]) != 0) {
      mxw_error_prefix("%s: subgraph %d: ", where, k);
      return -1;
    }
    n->num_subgraphs++;
  }
  return 0;
}

int mxw_sym_fromjson(const char *text, mxw_symbol **out) {
  MXW_CHECK(text && out, "NULL argument");
  cJSON_Hooks hooks = {json_malloc, free};
  cJSON_InitHooks(&hooks);
  g_json_failed_alloc = 0;
  cJSON *root = cJSON_Parse(text);
  if (!root) {
    if (g_json_failed_alloc) {
      char what[96];
      // GCOVR_EXCL_START: cJSON's allocation failure, not reachable natively
      snprintf(what, sizeof what, "reading the symbol JSON (%zu bytes of text)", strlen(text));
      return mxw_fail_oom(what, (double)g_json_failed_alloc);
      // GCOVR_EXCL_STOP
    }
    const char *ep = cJSON_GetErrorPtr();
    long off = ep && ep >= text ? (long)(ep - text) : -1;
    return mxw_fail("invalid symbol JSON: parse error near byte %ld", off);
  }
  int version = 800;
  const cJSON *gattrs = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "attrs") : NULL;
  const cJSON *ver = gattrs ? cJSON_GetObjectItemCaseSensitive(gattrs, "mxnet_version") : NULL;
  if (cJSON_IsArray(ver) && count_items(ver) == 2 && cJSON_IsNumber(ver->child->next))
    version = ver->child->next->valueint;
  int rc = read_graph(root, version, 0, out);
  cJSON_Delete(root);
  return rc;
}

/* One graph (the file's, or a node's subgraph: those inherit the file's version). */
static int read_graph(const cJSON *root, int version, int depth, mxw_symbol **out) {
  mxw_node **nodes = NULL;
  int nn = 0, rc = -1;
  mxw_symbol *sym = NULL;
  unknown_ops *unk = NULL;
  const cJSON *jnodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
  const cJSON *jheads = cJSON_GetObjectItemCaseSensitive(root, "heads");
  if (!cJSON_IsObject(root) || !cJSON_IsArray(jnodes) || !cJSON_IsArray(jheads)) {
    mxw_fail("invalid symbol JSON: expected an object with \"nodes\" and \"heads\" arrays");
    goto done;
  }

  /* every unsupported op, with its nodes, in one error */
  unk = (unknown_ops *)calloc(1, sizeof *unk);
  if (!unk) {
    // GCOVR_EXCL_START: allocation failure, not reachable natively
    mxw_fail("out of memory");
    goto done;
    // GCOVR_EXCL_STOP
  }
  int total = 0;
  for (const cJSON *jn = jnodes->child; jn; jn = jn->next, total++) {
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(jn, "op");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(jn, "name");
    if (!cJSON_IsObject(jn) || !cJSON_IsString(op) || !cJSON_IsString(name)) {
      mxw_fail("invalid symbol JSON: node %d needs string \"op\" and \"name\"", total);
      goto done;
    }
    if (total == INT32_MAX - 1) {
      // GCOVR_EXCL_START: needs 2^31 - 1 nodes (tens of GB of text), beyond a test or a wasm32 heap
      mxw_fail("invalid symbol JSON: too many nodes");
      goto done;
      // GCOVR_EXCL_STOP
    }
    if (strcmp(op->valuestring, "null") != 0 && mxw_op_find(op->valuestring) < 0)
      note_unknown(unk, op->valuestring, name->valuestring);
  }
  if (unk->count) {
    char text[1800];
    unknown_text(unk, text, sizeof text);
    mxw_fail("unsupported operator%s in the graph: %s", unk->count > 1 ? "s" : "", text);
    goto done;
  }

  nodes = (mxw_node **)calloc((size_t)(total ? total : 1), sizeof *nodes);
  if (!nodes) {
    // GCOVR_EXCL_START: allocation failure, not reachable natively
    mxw_fail("out of memory");
    goto done;
    // GCOVR_EXCL_STOP
  }
  int i = 0;
  for (const cJSON *jn = jnodes->child; jn; jn = jn->next, i++) {
    const char *opname = cJSON_GetObjectItemCaseSensitive(jn, "op")->valuestring;
    const char *name = cJSON_GetObjectItemCaseSensitive(jn, "name")->valuestring;
    char where[600];
    snprintf(where, sizeof where, "node %d ('%s')", i, name);
    mxw_node *n = mxw_node_new(name);
    if (!n) goto done;
    nodes[nn++] = n;
    if (add_string_map(&n->attrs, cJSON_GetObjectItemCaseSensitive(jn, "attrs"), 1, where) != 0 ||
        add_string_map(&n->attrs, cJSON_GetObjectItemCaseSensitive(jn, "attr"), 1, where) != 0 ||
        add_string_map(&n->attrs, cJSON_GetObjectItemCaseSensitive(jn, "param"), 0, where) != 0)
      goto done;
    const cJSON *jsub = cJSON_GetObjectItemCaseSensitive(jn, "subgraphs");
    if (jsub && read_subgraphs(n, jsub, version, depth, where) != 0) goto done;
    const cJSON *jin = cJSON_GetObjectItemCaseSensitive(jn, "inputs");
    if (jin && !cJSON_IsArray(jin)) {
      mxw_fail("%s: \"inputs\" must be an array", where);
      goto done;
    }
    int nin = count_items(jin);
    if (strcmp(opname, "null") == 0) {
      if (nin || n->num_subgraphs) {
        mxw_fail("%s: a variable cannot have %s", where, nin ? "inputs" : "subgraphs");
        goto done;
      }
    } else {
      n->op_id = mxw_op_find(opname);
      n->op = mxw_op_get(n->op_id);
      n->inputs = (mxw_entry *)calloc((size_t)(nin ? nin : 1), sizeof(mxw_entry));
      if (!n->inputs) {
        // GCOVR_EXCL_START: allocation failure, not reachable natively
        mxw_fail("out of memory");
        goto done;
        // GCOVR_EXCL_STOP
      }
      int k = 0;
      for (const cJSON *e = jin ? jin->child : NULL; e; e = e->next, k++) {
        char w2[700];
        snprintf(w2, sizeof w2, "%s input %d", where, k);
        const cJSON *id = cJSON_IsArray(e) ? e->child : NULL;
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= i) {
          mxw_fail("%s: an entry must be [node, index(, version)] naming an earlier node", w2);
          goto done;
        }
        if (read_entry(e, i, w2, &n->inputs[k], nodes) != 0) goto done;
        mxw_node_retain(n->inputs[k].node);
        n->num_inputs++;
      }
    }
    const cJSON *jc = cJSON_GetObjectItemCaseSensitive(jn, "control_deps");
    int nc = cJSON_IsArray(jc) ? count_items(jc) : 0;
    if (nc > 0) {
      n->control = (mxw_node **)calloc((size_t)nc, sizeof(mxw_node *));
      if (!n->control) {
        // GCOVR_EXCL_START: allocation failure, not reachable natively
        mxw_fail("out of memory");
        goto done;
        // GCOVR_EXCL_STOP
      }
      int k = 0;
      for (const cJSON *x = jc->child; x; x = x->next, k++) {
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble < i) ||
            x->valuedouble != (double)(int)x->valuedouble) {
          mxw_fail("%s: control dependency %d does not name an earlier node", where, k);
          goto done;
        }
        n->control[k] = nodes[(int)x->valuedouble];
        mxw_node_retain(n->control[k]);
        n->num_control++;
      }
    }
    if (version < MXW_MXNET_VERSION && fix_parsing(n, where) != 0) goto done;
    if (!n->op && mxw_var_check_hints(n) != 0) goto done;
    if (n->op) {
      if (version < 905 && (strcmp(n->op->name, "argmax") == 0 || strcmp(n->op->name, "argmin") == 0)) {
        const char *ax = mxw_attrs_get(&n->attrs, "axis");
        if (ax && strcmp(ax, "-1") == 0) mxw_attrs_remove(&n->attrs, "axis");
      }
      if (mxw_node_set_op(n, n->op_id) != 0) {
        mxw_error_prefix("%s: ", where);
        goto done;
      }
      int want = mxw_params_num_inputs(n->params);
      if (n->num_inputs < want && version < 900) { /* 0.8: aux states were not stored */
        mxw_entry *grown = (mxw_entry *)realloc(n->inputs, sizeof(mxw_entry) * (size_t)want);
        if (!grown) {
          // GCOVR_EXCL_START: allocation failure, not reachable natively
          mxw_fail("out of memory");
          goto done;
          // GCOVR_EXCL_STOP
        }
        n->inputs = grown;
        for (int k = n->num_inputs; k < want; k++) {
          char iname[128];
          mxw_node_input_name(n, k, iname, sizeof iname);
          char *vname = mxw_join_name(n->name, iname); /* DefaultVarName, never truncated */
          mxw_node *v = vname ? mxw_node_new(vname) : NULL;
          free(vname);
          if (!v) goto done;
          n->inputs[k].node = v;
          n->inputs[k].index = 0;
          n->inputs[k].version = mxw_node_is_mutated_input(n, k) ? 1 : 0;
          if (mxw_node_is_mutated_input(n, k)) v->version = 1;
          n->num_inputs++;
          if (mxw_attrs_copy(&v->attrs, &n->attrs) != 0 || mxw_var_check_hints(v) != 0) goto done;
        }
      }
      if (n->num_inputs != want) {
        mxw_fail("%s: operator %s takes %d inputs, the node has %d", where, n->op->name, want, n->num_inputs);
        goto done;
      }
      if (version < 904 && n->op->input_var_init) {
        for (int k = 0; k < n->num_inputs; k++) {
          mxw_node *v = n->inputs[k].node;
          const char *init = n->op->input_var_init(n->params->param, k);
          if (!v->op && init && !mxw_attrs_get(&v->attrs, "__init__") &&
              mxw_attrs_set(&v->attrs, "__init__", init) != 0)
            // GCOVR_EXCL_START: mxw_attrs_set fails only on an allocation failure, not reachable natively
            goto done;
          // GCOVR_EXCL_STOP
        }
      }
      for (int k = 0; k < n->num_inputs; k++) { /* keep variable versions consistent */
        mxw_node *v = n->inputs[k].node;
        if (!v->op && n->inputs[k].version > v->version) v->version = n->inputs[k].version;
      }
    }
  }
  int nh = count_items(jheads);
  sym = mxw_symbol_alloc(nh);
  if (!sym) {
    // GCOVR_EXCL_START: allocation failure, not reachable natively
    mxw_fail("out of memory");
    goto done;
    // GCOVR_EXCL_STOP
  }
  sym->n = 0;
  int h = 0;
  for (const cJSON *e = jheads->child; e; e = e->next, h++) {
    char where[64];
    snprintf(where, sizeof where, "head %d", h);
    const cJSON *id = cJSON_IsArray(e) ? e->child : NULL;
    if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= nn) {
      mxw_fail("invalid symbol JSON: %s does not name a node", where);
      goto done;
    }
    if (read_entry(e, nn, where, &sym->outputs[h], nodes) != 0) goto done;
    mxw_node_retain(sym->outputs[h].node);
    sym->n++;
  }
  *out = sym;
  sym = NULL;
  rc = 0;
done:
  mxw_sym_free(sym);
  for (int k = 0; k < nn; k++) mxw_node_release(nodes[k]);
  free(nodes);
  free(unk);
  return rc;
}

/* ---- writer ------------------------------------------------------------------------------------- */
typedef struct jw {
  char *p;
  size_t len, cap;
  int oom;
} jw;

static void put(jw *w, const char *s, size_t n) {
  if (w->oom) return;
  if (w->len + n + 1 > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + n + 1) cap *= 2;
    char *q = (char *)realloc(w->p, cap);
    if (!q) {
      w->oom = 1;
      return;
    }
    w->p = q;
    w->cap = cap;
  }
  memcpy(w->p + w->len, s, n);
  w->len += n;
  w->p[w->len] = 0;
}
static void puts_(jw *w, const char *s) { put(w, s, strlen(s)); }
static void newline(jw *w, int depth) {
  puts_(w, "\n");
  for (int i = 0; i < depth; i++) puts_(w, "  ");
}
static void put_str(jw *w, const char *s) { /* dmlc escapes: \r \n \\ \t \" only */
  puts_(w, "\"");
  for (const char *c = s; *c; c++) {
    switch (*c) {
      case '\r': puts_(w, "\\r"); break;
      case '\n': puts_(w, "\\n"); break;
      case '\\': puts_(w, "\\\\"); break;
      case '\t': puts_(w, "\\t"); break;
      case '"': puts_(w, "\\\""); break;
      default: put(w, c, 1);
    }
  }
  puts_(w, "\"");
}
/* An array of uint32 (ints or entries): single-line if <= 10 elements, else one per line. */
static void put_uints(jw *w, const uint32_t *v, int n, int depth) {
  char buf[32];
  puts_(w, "[");
  for (int i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    if (n > 10) newline(w, depth + 1);
    snprintf(buf, sizeof buf, "%u", v[i]);
    puts_(w, buf);
  }
  if (n > 10) newline(w, depth);
  puts_(w, "]");
}
static void put_entries(jw *w, const mxw_entry *e, int n, int depth) {
  char buf[96];
  puts_(w, "[");
  for (int i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    if (n > 10) newline(w, depth + 1);
    snprintf(buf, sizeof buf, "[%d, %u, %u]", e[i].node->index, e[i].index, e[i].version);
    puts_(w, buf);
  }
  if (n > 10) newline(w, depth);
  puts_(w, "]");
}
typedef struct kv_ref {
  const char *k, *v;
} kv_ref;
static int cmp_kv(const void *a, const void *b) { return strcmp(((const kv_ref *)a)->k, ((const kv_ref *)b)->k); }
/* Every attribute, sorted by key (std::map order; keys are unique). */
static void put_attrs(jw *w, const mxw_attrs *a, int depth) {
  int n = a->n;
  kv_ref *kv = (kv_ref *)malloc(sizeof(kv_ref) * (size_t)(n ? n : 1));
  if (!kv) {
    w->oom = 1;
    return;
  }
  for (int i = 0; i < n; i++) kv[i] = (kv_ref){a->keys[i], a->vals[i]};
  qsort(kv, (size_t)n, sizeof *kv, cmp_kv);
  puts_(w, "{");
  for (int i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    if (n > 1) newline(w, depth + 1);
    /* dmlc writes keys raw; its reader unescapes them (ReadString), so a key with a quote, a
     * backslash or a newline is written escaped here: the same text for every ordinary key,
     * and a file that MXNet and this reader load back to the same key for the others */
    put_str(w, kv[i].k);
    puts_(w, ": ");
    put_str(w, kv[i].v);
  }
  if (n > 1) newline(w, depth);
  puts_(w, "}");
  free(kv);
}

/* One graph at JSON nesting `base` (0 for the file; a subgraph is written as nnvm's JSONGraph:
 * nodes, arg_nodes, node_row_ptr, heads, and no attrs). */
static int write_graph(jw *w, const mxw_symbol *s, int base, int top);

/* A node's subgraphs, after its inputs and control deps (nnvm's JSONNode::Save order). The
 * subgraphs' own DFS renumbers only their nodes; the outer indices are put back after. */
static void put_subgraphs(jw *w, const mxw_node *n, int base, mxw_node **outer, int nn) {
  puts_(w, ", ");
  newline(w, base + 3);
  puts_(w, "\"subgraphs\": [");
  for (int k = 0; k < n->num_subgraphs && !w->oom; k++) {
    if (k) puts_(w, ", ");
    newline(w, base + 4);
    if (write_graph(w, n->subgraphs[k], base + 4, 0) != 0) w->oom = 2;
  }
  newline(w, base + 3);
  puts_(w, "]");
  for (int i = 0; i < nn; i++) outer[i]->index = i;
}

static int write_graph(jw *w, const mxw_symbol *s, int base, int top) {
  mxw_node **nodes;
  int nn;
  MXW_TRY(mxw_graph_dfs(s->outputs, s->n, &nodes, &nn));
  uint32_t *arg_nodes = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(nn + 1));
  uint32_t *row_ptr = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(nn + 1));
  if (!arg_nodes || !row_ptr) {
    free(arg_nodes);
    free(row_ptr);
    free(nodes);
    return mxw_fail("out of memory");
  }
  int na = 0;
  row_ptr[0] = 0;
  for (int i = 0; i < nn; i++) {
    if (!nodes[i]->op) arg_nodes[na++] = (uint32_t)i;
    /* a control-flow node's tape output is ours, not MXNet's: not counted */
    row_ptr[i + 1] = row_ptr[i] + (uint32_t)(mxw_node_num_outputs(nodes[i]) - (mxw_node_tape_output(nodes[i]) >= 0));
  }
  puts_(w, "{");
  newline(w, base + 1);
  puts_(w, "\"nodes\": [");
  for (int i = 0; i < nn; i++) {
    const mxw_node *n = nodes[i];
    if (i) puts_(w, ", ");
    newline(w, base + 2);
    puts_(w, "{");
    newline(w, base + 3);
    puts_(w, "\"op\": ");
    put_str(w, n->op ? n->op->name : "null");
    puts_(w, ", ");
    newline(w, base + 3);
    puts_(w, "\"name\": ");
    put_str(w, n->name);
    if (n->attrs.n) {
      puts_(w, ", ");
      newline(w, base + 3);
      puts_(w, "\"attrs\": ");
      put_attrs(w, &n->attrs, base + 3);
    }
    puts_(w, ", ");
    newline(w, base + 3);
    puts_(w, "\"inputs\": ");
    put_entries(w, n->inputs, n->num_inputs, base + 3);
    if (n->num_control) {
      uint32_t *cd = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)n->num_control);
      if (!cd) {
        w->oom = 1;
        break;
      }
      for (int k = 0; k < n->num_control; k++) cd[k] = (uint32_t)n->control[k]->index;
      puts_(w, ", ");
      newline(w, base + 3);
      puts_(w, "\"control_deps\": ");
      put_uints(w, cd, n->num_control, base + 3);
      free(cd);
    }
    if (n->num_subgraphs) put_subgraphs(w, n, base, nodes, nn);
    newline(w, base + 2);
    puts_(w, "}");
  }
  if (nn) newline(w, base + 1);
  puts_(w, "], ");
  newline(w, base + 1);
  puts_(w, "\"arg_nodes\": ");
  put_uints(w, arg_nodes, na, base + 1);
  puts_(w, ", ");
  newline(w, base + 1);
  puts_(w, "\"node_row_ptr\": ");
  put_uints(w, row_ptr, nn + 1, base + 1);
  puts_(w, ", ");
  newline(w, base + 1);
  puts_(w, "\"heads\": ");
  put_entries(w, s->outputs, s->n, base + 1);
  if (top) {
    puts_(w, ", ");
    newline(w, base + 1);
    char ver[64];
    snprintf(ver, sizeof ver, "\"attrs\": {\"mxnet_version\": [\"int\", %d]}", MXW_MXNET_VERSION);
    puts_(w, ver);
  }
  newline(w, base);
  puts_(w, "}");
  free(arg_nodes);
  free(row_ptr);
  free(nodes);
  return w->oom == 2 ? -1 : 0;
}

int mxw_sym_tojson(const mxw_symbol *s, char **out) {
  MXW_CHECK(s && out, "NULL argument");
  jw w = {NULL, 0, 0, 0};
  if (write_graph(&w, s, 0, 1) != 0) {
    free(w.p);
    return -1;
  }
  if (w.oom) {
    free(w.p);
    return mxw_fail("out of memory writing symbol JSON");
  }
  *out = w.p;
  return 0;
}
