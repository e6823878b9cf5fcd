/* json.c -- MXNet's symbol JSON (../shared/spec/symbol-json.md).
 * Reader: cJSON parses the text; every dialect is accepted ("attrs", "attr", "param", 2- and
 * 3-element entries, backward_source_id), unknown keys are ignored, and MXNet's legacy upgrades
 * are applied by version (hidden keys, 0.8 BatchNorm aux inputs, __init__ defaults, argmax
 * axis). Unknown operators are collected first and reported together.
 * Writer: dmlc::JSONWriter's exact text (indentation, ", " separators with their trailing space,
 * single-line rules, sorted node attributes). cJSON cannot print this layout, so the writer is
 * a small emitter of its own. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "graph.h"

#define MXW_MXNET_VERSION 10901 /* the MXNet version whose files we write */

static const char *const k_hidden[] = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", NULL};

/* ---- reader ------------------------------------------------------------------------------------- */
static int read_entry(const cJSON *e, int limit, const char *where, mxw_entry *out, mxw_node **nodes) {
  int n = cJSON_GetArraySize(e);
  MXW_CHECK(cJSON_IsArray(e) && (n == 2 || n == 3), "%s: an entry must be [node, index] or [node, index, version]", where);
  double v[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    const cJSON *x = cJSON_GetArrayItem(e, i);
    MXW_CHECK(cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 4294967296.0 && x->valuedouble == (double)(uint32_t)x->valuedouble,
              "%s: entry element %d is not a non-negative integer", where, i);
    v[i] = x->valuedouble;
  }
  MXW_CHECK(v[0] < limit, "%s: refers to node %.0f, which does not come before it", where, v[0]);
  mxw_node *src = nodes[(int)v[0]];
  MXW_CHECK(v[1] < mxw_node_num_outputs(src), "%s: output %.0f of node '%s' does not exist (it has %d)", where, v[1],
            src->name, mxw_node_num_outputs(src));
  out->node = src;
  out->index = (uint32_t)v[1];
  out->version = (uint32_t)v[2];
  return 0;
}

static int add_string_map(mxw_attrs *a, const cJSON *obj, int overwrite, const char *where) {
  if (!obj) return 0;
  MXW_CHECK(cJSON_IsObject(obj), "%s: attributes must be an object", where);
  for (const cJSON *it = obj->child; it; it = it->next) {
    MXW_CHECK(cJSON_IsString(it), "%s: attribute '%s' is not a string", where, it->string);
    if (!overwrite && mxw_attrs_get(a, it->string)) continue;
    MXW_TRY(mxw_attrs_set(a, it->string, it->valuestring));
  }
  return 0;
}

/* UpgradeJSON_FixParsing: lr_mult & co. become hidden keys, moved onto input variables where
 * they were written as "<input>_lr_mult". */
static int fix_parsing(mxw_node *n) {
  for (int i = 0; i < n->attrs.n; i++) {
    const char *key = n->attrs.keys[i];
    for (int h = 0; k_hidden[h]; h++) {
      const char *hk = k_hidden[h];
      size_t kl = strlen(key), hl = strlen(hk);
      char hidden[64];
      snprintf(hidden, sizeof hidden, "__%s__", hk);
      if (strncmp(key, hk, hl) == 0) { /* key starts with the hidden key */
        char *val = n->attrs.vals[i];
        n->attrs.vals[i] = NULL;
        char kcopy[256];
        snprintf(kcopy, sizeof kcopy, "%s", key);
        n->attrs.vals[i] = val;
        int rc = mxw_attrs_set(&n->attrs, hidden, val);
        if (rc == 0) mxw_attrs_remove(&n->attrs, kcopy);
        MXW_TRY(rc);
        i = -1; /* restart: the list changed */
        break;
      }
      if (kl > hl + 1 && strcmp(key + kl - hl, hk) == 0 && key[kl - hl - 1] == '_' && n->op) {
        char arg[256];
        snprintf(arg, sizeof arg, "%.*s", (int)(kl - hl - 1), key);
        int moved = 0;
        for (int k = 0; k < n->num_inputs; k++) {
          char iname[64];
          mxw_node_input_name(n, k, iname, sizeof iname);
          if (strcmp(iname, arg) == 0 && !n->inputs[k].node->op) {
            MXW_TRY(mxw_attrs_set(&n->inputs[k].node->attrs, hidden, n->attrs.vals[i]));
            char kcopy[256];
            snprintf(kcopy, sizeof kcopy, "%s", key);
            mxw_attrs_remove(&n->attrs, kcopy);
            moved = 1;
            break;
          }
        }
        if (moved) {
          i = -1;
          break;
        }
      }
    }
  }
  return 0;
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
    if (u->num_nodes[k] > u->num_listed[k]) snprintf(more, sizeof more, " and %d more", u->num_nodes[k] - u->num_listed[k]);
    snprintf(buf + used, len - used, "%s%s (node%s %s%s)", k ? "; " : "", u->op[k], u->num_nodes[k] > 1 ? "s" : "",
             u->nodes[k], more);
  }
  if (u->dropped) {
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "; and %d more", u->dropped);
  }
}

int mxw_sym_fromjson(const char *text, mxw_symbol **out) {
  MXW_CHECK(text && out, "NULL argument");
  cJSON *root = cJSON_Parse(text);
  if (!root) {
    const char *ep = cJSON_GetErrorPtr();
    long off = ep && ep >= text ? (long)(ep - text) : -1;
    return mxw_fail("invalid symbol JSON: parse error near byte %ld", off);
  }
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
  int version = 800;
  const cJSON *gattrs = cJSON_GetObjectItemCaseSensitive(root, "attrs");
  const cJSON *ver = gattrs ? cJSON_GetObjectItemCaseSensitive(gattrs, "mxnet_version") : NULL;
  if (cJSON_IsArray(ver) && cJSON_GetArraySize(ver) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(ver, 1)))
    version = cJSON_GetArrayItem(ver, 1)->valueint;

  /* every unsupported op, with its nodes, in one error */
  unk = (unknown_ops *)calloc(1, sizeof *unk);
  if (!unk) { mxw_fail("out of memory"); goto done; }
  int total = cJSON_GetArraySize(jnodes);
  for (int i = 0; i < total; i++) {
    const cJSON *jn = cJSON_GetArrayItem(jnodes, i);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(jn, "op");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(jn, "name");
    if (!cJSON_IsObject(jn) || !cJSON_IsString(op) || !cJSON_IsString(name)) {
      mxw_fail("invalid symbol JSON: node %d needs string \"op\" and \"name\"", i);
      goto done;
    }
    if (strcmp(op->valuestring, "null") != 0 && mxw_op_find(op->valuestring) < 0) note_unknown(unk, op->valuestring, name->valuestring);
  }
  if (unk->count) {
    char text[1800];
    unknown_text(unk, text, sizeof text);
    mxw_fail("unsupported operator%s in the graph: %s", unk->count > 1 ? "s" : "", text);
    goto done;
  }

  nodes = (mxw_node **)calloc((size_t)(total ? total : 1), sizeof *nodes);
  if (!nodes) { mxw_fail("out of memory"); goto done; }
  for (int i = 0; i < total; i++) {
    const cJSON *jn = cJSON_GetArrayItem(jnodes, i);
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
    if (cJSON_GetObjectItemCaseSensitive(jn, "subgraphs")) {
      mxw_fail("%s: subgraphs (control-flow operators) are not supported", where);
      goto done;
    }
    const cJSON *jin = cJSON_GetObjectItemCaseSensitive(jn, "inputs");
    if (jin && !cJSON_IsArray(jin)) {
      mxw_fail("%s: \"inputs\" must be an array", where);
      goto done;
    }
    int nin = jin ? cJSON_GetArraySize(jin) : 0;
    if (strcmp(opname, "null") == 0) {
      if (nin) { mxw_fail("%s: a variable cannot have inputs", where); goto done; }
    } else {
      n->op_id = mxw_op_find(opname);
      n->op = mxw_op_get(n->op_id);
      n->inputs = (mxw_entry *)calloc((size_t)(nin ? nin : 1), sizeof(mxw_entry));
      if (!n->inputs) { mxw_fail("out of memory"); goto done; }
      for (int k = 0; k < nin; k++) {
        char w2[700];
        snprintf(w2, sizeof w2, "%s input %d", where, k);
        /* outputs of earlier nodes are known once they are parsed: parse lazily below */
        const cJSON *e = cJSON_GetArrayItem(jin, k);
        int cnt = cJSON_GetArraySize(e);
        const cJSON *id = cJSON_GetArrayItem(e, 0);
        if (!cJSON_IsArray(e) || (cnt != 2 && cnt != 3) || !cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= i) {
          mxw_fail("%s: an entry must be [node, index(, version)] naming an earlier node", w2);
          goto done;
        }
        if (read_entry(e, i, w2, &n->inputs[k], nodes) != 0) goto done;
        mxw_node_retain(n->inputs[k].node);
        n->num_inputs++;
      }
    }
    const cJSON *jc = cJSON_GetObjectItemCaseSensitive(jn, "control_deps");
    if (jc && cJSON_IsArray(jc) && cJSON_GetArraySize(jc) > 0) {
      int nc = cJSON_GetArraySize(jc);
      n->control = (mxw_node **)calloc((size_t)nc, sizeof(mxw_node *));
      if (!n->control) { mxw_fail("out of memory"); goto done; }
      for (int k = 0; k < nc; k++) {
        const cJSON *x = cJSON_GetArrayItem(jc, k);
        if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble >= i) {
          mxw_fail("%s: control dependency %d does not name an earlier node", where, k);
          goto done;
        }
        n->control[k] = nodes[(int)x->valuedouble];
        mxw_node_retain(n->control[k]);
        n->num_control++;
      }
    }
    if (n->op) {
      if (version < MXW_MXNET_VERSION && fix_parsing(n) != 0) goto done;
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
        if (!grown) { mxw_fail("out of memory"); goto done; }
        n->inputs = grown;
        for (int k = n->num_inputs; k < want; k++) {
          char iname[64], vname[600];
          mxw_node_input_name(n, k, iname, sizeof iname);
          snprintf(vname, sizeof vname, "%s_%s", n->name, iname);
          mxw_node *v = mxw_node_new(vname);
          if (!v) goto done;
          n->inputs[k].node = v;
          n->inputs[k].index = 0;
          n->inputs[k].version = mxw_node_is_mutated_input(n, k) ? 1 : 0;
          if (mxw_node_is_mutated_input(n, k)) v->version = 1;
          n->num_inputs++;
          if (mxw_attrs_copy(&v->attrs, &n->attrs) != 0) goto done;
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
          if (!v->op && init && !mxw_attrs_get(&v->attrs, "__init__") && mxw_attrs_set(&v->attrs, "__init__", init) != 0)
            goto done;
        }
      }
      for (int k = 0; k < n->num_inputs; k++) { /* keep variable versions consistent */
        mxw_node *v = n->inputs[k].node;
        if (!v->op && n->inputs[k].version > v->version) v->version = n->inputs[k].version;
      }
    }
  }
  int nh = cJSON_GetArraySize(jheads);
  sym = mxw_symbol_alloc(nh);
  if (!sym) { mxw_fail("out of memory"); goto done; }
  sym->n = 0;
  for (int h = 0; h < nh; h++) {
    char where[64];
    snprintf(where, sizeof where, "head %d", h);
    const cJSON *e = cJSON_GetArrayItem(jheads, h);
    const cJSON *id = cJSON_GetArrayItem(e, 0);
    if (!cJSON_IsArray(e) || !cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= nn) {
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
  for (int i = 0; i < nn; i++) mxw_node_release(nodes[i]);
  free(nodes);
  free(unk);
  cJSON_Delete(root);
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
static int cmp_idx(const void *a, const void *b, void *keys) {
  return strcmp(((char **)keys)[*(const int *)a], ((char **)keys)[*(const int *)b]);
}
static void sort_idx(int *idx, int n, char **keys) { /* insertion sort: attribute maps are small */
  for (int i = 1; i < n; i++) {
    int v = idx[i], j = i - 1;
    while (j >= 0 && cmp_idx(&idx[j], &v, keys) > 0) {
      idx[j + 1] = idx[j];
      j--;
    }
    idx[j + 1] = v;
  }
}
static void put_attrs(jw *w, const mxw_attrs *a, int depth) {
  int idx[256], n = a->n < 256 ? a->n : 256;
  for (int i = 0; i < n; i++) idx[i] = i;
  sort_idx(idx, n, a->keys);
  puts_(w, "{");
  for (int i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    if (n > 1) newline(w, depth + 1);
    puts_(w, "\"");
    puts_(w, a->keys[idx[i]]); /* dmlc writes object keys unescaped */
    puts_(w, "\": ");
    put_str(w, a->vals[idx[i]]);
  }
  if (n > 1) newline(w, depth);
  puts_(w, "}");
}

int mxw_sym_tojson(const mxw_symbol *s, char **out) {
  MXW_CHECK(s && out, "NULL argument");
  mxw_node **nodes;
  int nn;
  MXW_TRY(mxw_graph_dfs(s->outputs, s->n, &nodes, &nn));
  jw w = {NULL, 0, 0, 0};
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
    row_ptr[i + 1] = row_ptr[i] + (uint32_t)mxw_node_num_outputs(nodes[i]);
  }
  puts_(&w, "{");
  newline(&w, 1);
  puts_(&w, "\"nodes\": [");
  for (int i = 0; i < nn; i++) {
    const mxw_node *n = nodes[i];
    if (i) puts_(&w, ", ");
    newline(&w, 2);
    puts_(&w, "{");
    newline(&w, 3);
    puts_(&w, "\"op\": ");
    put_str(&w, n->op ? n->op->name : "null");
    puts_(&w, ", ");
    newline(&w, 3);
    puts_(&w, "\"name\": ");
    put_str(&w, n->name);
    if (n->attrs.n) {
      puts_(&w, ", ");
      newline(&w, 3);
      puts_(&w, "\"attrs\": ");
      put_attrs(&w, &n->attrs, 3);
    }
    puts_(&w, ", ");
    newline(&w, 3);
    puts_(&w, "\"inputs\": ");
    put_entries(&w, n->inputs, n->num_inputs, 3);
    if (n->num_control) {
      uint32_t cd[256];
      int nc = n->num_control < 256 ? n->num_control : 256;
      for (int k = 0; k < nc; k++) cd[k] = (uint32_t)n->control[k]->index;
      puts_(&w, ", ");
      newline(&w, 3);
      puts_(&w, "\"control_deps\": ");
      put_uints(&w, cd, nc, 3);
    }
    newline(&w, 2);
    puts_(&w, "}");
  }
  if (nn) newline(&w, 1);
  puts_(&w, "], ");
  newline(&w, 1);
  puts_(&w, "\"arg_nodes\": ");
  put_uints(&w, arg_nodes, na, 1);
  puts_(&w, ", ");
  newline(&w, 1);
  puts_(&w, "\"node_row_ptr\": ");
  put_uints(&w, row_ptr, nn + 1, 1);
  puts_(&w, ", ");
  newline(&w, 1);
  puts_(&w, "\"heads\": ");
  put_entries(&w, s->outputs, s->n, 1);
  puts_(&w, ", ");
  newline(&w, 1);
  char ver[64];
  snprintf(ver, sizeof ver, "\"attrs\": {\"mxnet_version\": [\"int\", %d]}", MXW_MXNET_VERSION);
  puts_(&w, ver);
  newline(&w, 0);
  puts_(&w, "}");
  free(arg_nodes);
  free(row_ptr);
  free(nodes);
  if (w.oom) {
    free(w.p);
    return mxw_fail("out of memory writing symbol JSON");
  }
  *out = w.p;
  return 0;
}
