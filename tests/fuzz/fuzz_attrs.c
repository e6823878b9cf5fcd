/* fuzz_attrs: the attribute parsers (csrc/core/attrs.c) in MXNet's string forms, two ways.
 *
 * Input layout: byte 0 picks the mode, byte 1 the attribute spec or the operator; in the registry
 * modes bytes 2..8 give the first input's shape (rank - 1, then up to 4 dims - 1, each mod 6), its
 * dtype and the training flag, and a seed for the input values; the rest is attribute text.
 *
 *   mode 0 (direct): mxw_attr_parse with one spec of every kind (int, float, bool, enum, shape,
 *     optional tuple, dtype, string; plain and optional). A value that parses must print back
 *     in MXNet's form and parse to the same value (ints, floats, tuples, enums, dtypes), and
 *     stay within its type's range (tuple rank <= MXW_MAX_TUPLE, enum index < count, ...).
 *   modes 1-3 (registry): the text is lines "key=value" (or a line whose first byte picks one
 *     of the op's attribute names and whose rest is the value) for one of a handful of ops,
 *     through mxw_params_create, the path every op call and every loaded graph node takes. If
 *     they parse, the same attributes compose a symbol (mxw_sym_compose) that must write and
 *     reload (JSON round trip), and shape inference runs with a small "data" shape; in mode 3,
 *     when everything is known and small, the op runs eagerly (mxw_op_invoke) on inputs of the
 *     inferred shapes and dtypes, and its outputs must have the shapes the graph inference gave.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>

#include "fuzz_common.h"

/* ---- mode 0: one spec of every kind --------------------------------------------------------------- */
typedef struct all_fields {
  int64_t i;
  mxw_opt_int oi;
  double f;
  mxw_opt_float of;
  int b;
  mxw_opt_int ob;
  int e;
  mxw_opt_int oe;
  mxw_tuple shape, oshape, otuple;
  int dt;
  mxw_opt_int odt;
  mxw_str str;
} all_fields;

static const char *const k_enum[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign", "", "a b", NULL};

static const mxw_attr_spec k_specs[] = {
    MXW_A_INT("i", all_fields, i, "0", ""),
    MXW_A_OPT_INT("oi", all_fields, oi, "None", ""),
    MXW_A_FLOAT("f", all_fields, f, "0", ""),
    MXW_A_OPT_FLOAT("of", all_fields, of, "None", ""),
    MXW_A_BOOL("b", all_fields, b, "False", ""),
    MXW_A_OPT_BOOL("ob", all_fields, ob, "None", ""),
    MXW_A_ENUM("e", all_fields, e, "relu", k_enum, ""),
    MXW_A_OPT_ENUM("oe", all_fields, oe, "None", k_enum, ""),
    MXW_A_SHAPE("shape", all_fields, shape, "()", ""),
    MXW_A_OPT_SHAPE("oshape", all_fields, oshape, "None", ""),
    MXW_A_OPT_TUPLE("otuple", all_fields, otuple, "()", ""),
    MXW_A_DTYPE("dt", all_fields, dt, "float32", ""),
    MXW_A_OPT_DTYPE("odt", all_fields, odt, "None", ""),
    MXW_A_STRING("str", all_fields, str, "", ""),
};
#define NUM_SPECS ((int)(sizeof k_specs / sizeof k_specs[0]))

static void check_tuple(const mxw_attr_spec *spec, const mxw_tuple *t) {
  FUZZ_CHECK(t->ndim >= -1 && t->ndim <= MXW_MAX_TUPLE, "%s: rank %d", spec->name, t->ndim);
  FUZZ_CHECK(t->ndim >= 0 || spec->optional || spec->type == MXW_ATTR_SHAPE, "%s: None accepted", spec->name);
  for (int k = 0; k < t->ndim; k++)
    FUZZ_CHECK(t->has[k] || spec->type == MXW_ATTR_OPT_TUPLE, "%s: element %d is None in a shape", spec->name, k);
  char buf[1024];
  mxw_tuple_str(t, buf, sizeof buf);
  all_fields g;
  memset(&g, 0, sizeof g);
  FUZZ_CHECK(mxw_attr_parse(spec, buf, &g) == 0, "%s: printed tuple '%s' does not parse", spec->name, buf);
  const mxw_tuple *u = (const mxw_tuple *)((const char *)&g + spec->offset);
  FUZZ_CHECK(u->ndim == t->ndim, "%s: '%s' reparsed with rank %d, was %d", spec->name, buf, u->ndim, t->ndim);
  for (int k = 0; k < t->ndim; k++)
    FUZZ_CHECK(u->has[k] == t->has[k] && (!t->has[k] || u->v[k] == t->v[k]), "%s: '%s' element %d changed", spec->name,
               buf, k);
}

static void direct(int which, const char *text) {
  const mxw_attr_spec *spec = &k_specs[which % NUM_SPECS];
  all_fields f, g;
  memset(&f, 0, sizeof f);
  memset(&g, 0, sizeof g);
  if (mxw_attr_parse(spec, text, &f) != 0) {
    FUZZ_CHECK(mxw_get_last_error()[0] != 0, "%s: failure without a message", spec->name);
    return;
  }
  char buf[128];
  const void *field = (const char *)&f + spec->offset;
  int has = 1;
  if (spec->optional && spec->type != MXW_ATTR_SHAPE && spec->type != MXW_ATTR_OPT_TUPLE) {
    has = *(const int32_t *)field;
    FUZZ_CHECK(has == 0 || has == 1, "%s: has-flag %d", spec->name, has);
    if (!has) return;
  }
  switch (spec->type) {
    case MXW_ATTR_INT: {
      int64_t v = spec->optional ? f.oi.v : f.i;
      snprintf(buf, sizeof buf, "%lld", (long long)v);
      FUZZ_CHECK(mxw_attr_parse(spec, buf, &g) == 0, "int %s does not reparse", buf);
      FUZZ_CHECK((spec->optional ? g.oi.v : g.i) == v, "int %s reparsed differently", buf);
      break;
    }
    case MXW_ATTR_FLOAT: {
      double v = spec->optional ? f.of.v : f.f;
      snprintf(buf, sizeof buf, "%.17g", v);
      FUZZ_CHECK(mxw_attr_parse(spec, buf, &g) == 0, "float %s does not reparse", buf);
      double w = spec->optional ? g.of.v : g.f;
      FUZZ_CHECK(w == v || (isnan(v) && isnan(w)), "float %s reparsed as %.17g", buf, w);
      break;
    }
    case MXW_ATTR_BOOL: {
      int v = spec->optional ? (int)f.ob.v : f.b;
      FUZZ_CHECK(v == 0 || v == 1, "bool parsed as %d", v);
      break;
    }
    case MXW_ATTR_ENUM: {
      int v = spec->optional ? (int)f.oe.v : f.e;
      int n = 0;
      while (k_enum[n]) n++;
      FUZZ_CHECK(v >= 0 && v < n, "enum index %d of %d", v, n);
      FUZZ_CHECK(mxw_attr_parse(spec, k_enum[v], &g) == 0 && (spec->optional ? (int)g.oe.v : g.e) == v,
                 "enum name '%s' does not reparse to %d", k_enum[v], v);
      break;
    }
    case MXW_ATTR_SHAPE:
    case MXW_ATTR_OPT_TUPLE: check_tuple(spec, (const mxw_tuple *)field); break;
    case MXW_ATTR_DTYPE: {
      int v = spec->optional ? (int)f.odt.v : f.dt;
      FUZZ_CHECK(v >= 0 && v < MXW_NUM_DTYPES, "dtype flag %d", v);
      FUZZ_CHECK(mxw_attr_parse(spec, mxw_dtype_name(v), &g) == 0 && (spec->optional ? (int)g.odt.v : g.dt) == v,
                 "dtype name %s does not reparse", mxw_dtype_name(v));
      break;
    }
    case MXW_ATTR_STRING:
      FUZZ_CHECK(strlen(f.str.s) < sizeof f.str.s && strcmp(f.str.s, text) == 0, "string value changed");
      break;
  }
}

/* ---- modes 1-3: a handful of ops through the registry ----------------------------------------------- */
static const char *const k_ops[] = {"Convolution",
                                    "Deconvolution",
                                    "Pooling",
                                    "FullyConnected",
                                    "Activation",
                                    "LeakyReLU",
                                    "BatchNorm",
                                    "Dropout",
                                    "Reshape",
                                    "transpose",
                                    "expand_dims",
                                    "squeeze",
                                    "slice",
                                    "SliceChannel",
                                    "Concat",
                                    "tile",
                                    "repeat",
                                    "Pad",
                                    "Crop",
                                    "UpSampling",
                                    "sum",
                                    "norm",
                                    "argmax",
                                    "pick",
                                    "take",
                                    "one_hot",
                                    "Embedding",
                                    "topk",
                                    "softmax",
                                    "clip",
                                    "Cast",
                                    "SoftmaxOutput",
                                    "broadcast_to",
                                    "LayerNorm",
                                    "GroupNorm",
                                    "reverse",
                                    "SwapAxis",
                                    "slice_axis",
                                    "depth_to_space",
                                    "LRN",
                                    "stack",
                                    "sort",
                                    "L2Normalization",
                                    "_image_resize",
                                    "_image_crop",
                                    "SoftmaxActivation",
                                    "dot",
                                    "InstanceNorm"};
#define NUM_OPS ((int)(sizeof k_ops / sizeof k_ops[0]))
#define MAX_KV 16
#define MAX_ELEMS 4096

static uint32_t g_seed;

static uint32_t next_rand(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return g_seed >> 8;
}

static const cJSON *find_named(const cJSON *list, const char *name) {
  for (const cJSON *it = list ? list->child : NULL; it; it = it->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return it;
  }
  return NULL;
}

static int shape_of(const cJSON *j, mxw_shape *s) {
  if (!cJSON_IsArray(j)) return -1;
  int nd = cJSON_GetArraySize(j);
  if (nd > MXW_MAX_NDIM) return -1;
  s->ndim = nd;
  int k = 0;
  for (const cJSON *d = j->child; d; d = d->next, k++) {
    if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble > MAX_ELEMS) return -1;
    s->dims[k] = (int64_t)d->valuedouble;
  }
  return mxw_shape_size(s) <= MAX_ELEMS ? 0 : -1;
}

/* A small array of the given shape and dtype: mostly small integers, sometimes 0.5 steps, and
 * for float dtypes now and then NaN, infinity or a huge value. */
static mxw_ndarray *make_input(const mxw_shape *s, int dtype) {
  int32_t dims[MXW_MAX_NDIM];
  for (int d = 0; d < s->ndim; d++) dims[d] = (int32_t)s->dims[d];
  mxw_ndarray *a = NULL, *f = NULL;
  if (mxw_ndarray_create(s->ndim, dims, dtype, &a) != 0) return NULL;
  if (mxw_ndarray_create(s->ndim, dims, MXW_FLOAT64, &f) != 0) {
    mxw_ndarray_free(a);
    return NULL;
  }
  double *p = (double *)mxw_ndarray_data(f);
  int64_t n = mxw_shape_size(s);
  int is_float = dtype == MXW_FLOAT32 || dtype == MXW_FLOAT64 || dtype == MXW_FLOAT16 || dtype == MXW_BFLOAT16;
  for (int64_t k = 0; k < n; k++) {
    uint32_t r = next_rand();
    double v = (double)((int)(r % 17) - 8);
    if ((r >> 5) % 4 == 0) v += 0.5;
    if (is_float && (r >> 8) % 64 == 0) v = (r >> 14) % 3 == 0 ? NAN : (r >> 14) % 3 == 1 ? INFINITY : -3e38;
    p[k] = v;
  }
  int rc = mxw_ndarray_copy(f, a);
  mxw_ndarray_free(f);
  if (rc != 0) {
    mxw_ndarray_free(a);
    return NULL;
  }
  return a;
}

/* Runs the op eagerly on inputs shaped as the graph inference said; outputs must match it. */
static void run_eager(int op, const char *opname, const mxw_params *p, const cJSON *inputs, const cJSON *res) {
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(res, "args");
  const cJSON *aux = cJSON_GetObjectItemCaseSensitive(res, "aux");
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(res, "outputs");
  int nin = cJSON_GetArraySize(inputs);
  if (nin != mxw_params_num_inputs(p) || nin > 16) return;
  mxw_ndarray *in[16] = {0}, *out[64] = {0};
  int ok = 1;
  for (int i = 0; i < nin && ok; i++) {
    const char *name = cJSON_GetArrayItem(inputs, i)->valuestring;
    const cJSON *r = find_named(args, name);
    if (!r) r = find_named(aux, name);
    mxw_shape s;
    const cJSON *dt = r ? cJSON_GetObjectItemCaseSensitive(r, "dtype") : NULL;
    int dtype = cJSON_IsNumber(dt) && dt->valueint >= 0 ? dt->valueint : MXW_FLOAT32;
    ok = r && shape_of(cJSON_GetObjectItemCaseSensitive(r, "shape"), &s) == 0 && (in[i] = make_input(&s, dtype));
  }
  int nout = 64;
  if (ok) {
    for (const cJSON *o = outs ? outs->child : NULL; o && ok; o = o->next) {
      mxw_shape s;
      ok = shape_of(cJSON_GetObjectItemCaseSensitive(o, "shape"), &s) == 0;
    }
  }
  int rc = ok ? mxw_op_invoke(op, p, nin, in, &nout, out) : -1;
  if (fuzz_verbose())
    fprintf(stderr, "%s: eager run %s\n", opname, !ok ? "skipped" : rc == 0 ? "ok" : mxw_get_last_error());
  if (rc == 0) {
    int nvis = cJSON_GetArraySize(outs);
    for (int k = 0; k < nout && k < nvis; k++) {
      mxw_shape want;
      const cJSON *os = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(outs, k), "shape");
      FUZZ_CHECK(shape_of(os, &want) == 0, "output %d", k);
      int32_t info[2 + MXW_MAX_NDIM];
      mxw_ndarray_info(out[k], info);
      int same = info[1] == want.ndim;
      for (int d = 0; same && d < want.ndim; d++) same = info[2 + d] == want.dims[d];
      FUZZ_CHECK(same, "%s: eager output %d has rank %d, the graph inferred %d (or other dims)", opname, k, info[1],
                 want.ndim);
      /* touch every byte (ASan checks the kernel wrote inside the buffer; this checks reading) */
      size_t nb = (size_t)mxw_ndarray_size(out[k]) * (size_t)mxw_dtype_size(info[0]);
      volatile uint8_t sink = 0;
      for (size_t b = 0; b < nb; b++) sink ^= ((const uint8_t *)mxw_ndarray_data(out[k]))[b];
      (void)sink;
    }
    for (int k = 0; k < nout; k++) mxw_ndarray_free(out[k]);
  }
  for (int i = 0; i < nin; i++) mxw_ndarray_free(in[i]);
}

/* A bounded text builder for inference requests. */
typedef struct text {
  char s[512];
  size_t n;
} text;
static void tput(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tput(text *t, const char *fmt, ...) {
  if (t->n >= sizeof t->s) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(t->s + t->n, sizeof t->s - t->n, fmt, ap);
  va_end(ap);
  t->n += k > 0 ? (size_t)k : 0;
}

/* The header's input shape (rank 1-4, dims 1-6) and dtype. */
static const int k_dtypes[8] = {MXW_FLOAT32, MXW_FLOAT32, MXW_FLOAT32, MXW_FLOAT32,
                                MXW_FLOAT64, MXW_FLOAT16, MXW_INT32,   MXW_UINT8};
static void put_shape(text *t, const uint8_t *sb) {
  tput(t, "[");
  for (int d = 0; d < 1 + sb[0] % 4; d++) tput(t, "%s%d", d ? ", " : "", 1 + sb[1 + d] % 6);
  tput(t, "]");
}

/* "key=value" lines (or a first byte picking one of the op's attribute names, then the value). */
static int parse_lines(const mxw_op_def *def, char *text, const char **keys, const char **vals) {
  int n = 0;
  for (char *line = text; line && n < MAX_KV;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    char *eq = strchr(line, '=');
    if (eq) {
      *eq = 0;
      keys[n] = line;
      vals[n++] = eq + 1;
    } else if (*line && def->num_attrs > 0) {
      keys[n] = def->attrs[(unsigned char)line[0] % def->num_attrs].name;
      vals[n++] = line + 1;
    }
    line = nl ? nl + 1 : NULL;
  }
  return n;
}

/* Inference with the header's shape and dtype for the first input; when that leaves unknowns,
 * once more with every input's shape and dtype as inferred, the header's where still unknown.
 * The result (owned by the library) or NULL. */
static const char *infer_small(const mxw_symbol *s, const cJSON *inputs, const uint8_t *sb, const char *opname) {
  const char *in0 = cJSON_GetArrayItem(inputs, 0)->valuestring;
  const int dt = k_dtypes[(sb[5] >> 1) % 8];
  text req = {.n = 0};
  tput(&req, "{\"shapes\": {\"%s\": ", in0);
  put_shape(&req, sb);
  tput(&req, "}, \"dtypes\": {\"%s\": %d}}", in0, dt);
  const char *r = req.n < sizeof req.s ? mxw_sym_infer(s, req.s) : NULL;
  cJSON *first = r && !strstr(r, "\"complete\":true,\"types_complete\":true") ? cJSON_Parse(r) : NULL;
  if (first) {
    req.n = 0;
    for (int pass = 0; pass < 2; pass++) {
      tput(&req, pass ? "}, \"dtypes\": {" : "{\"shapes\": {");
      int any = 0;
      for (int list = 0; list < 2; list++) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(first, list ? "aux" : "args");
        for (const cJSON *it = l ? l->child : NULL; it; it = it->next) {
          const char *nm = cJSON_GetObjectItemCaseSensitive(it, "name")->valuestring;
          tput(&req, "%s\"%s\": ", any++ ? ", " : "", nm);
          const cJSON *shape = cJSON_GetObjectItemCaseSensitive(it, "shape");
          const int known_dt = cJSON_GetObjectItemCaseSensitive(it, "dtype")->valueint;
          if (pass) {
            tput(&req, "%d", known_dt >= 0 ? known_dt : dt);
          } else if (cJSON_IsNull(shape)) {
            put_shape(&req, sb);
          } else { /* the inferred shape, its unknown dims (printed as 0) from the header's */
            tput(&req, "[");
            int d = 0;
            for (const cJSON *x = shape->child; x; x = x->next, d++)
              tput(&req, "%s%.0f", d ? ", " : "", x->valuedouble > 0 ? x->valuedouble : 1 + sb[1 + d % 4] % 6);
            tput(&req, "]");
          }
        }
      }
    }
    tput(&req, "}}");
    cJSON_Delete(first);
    r = req.n < sizeof req.s ? mxw_sym_infer(s, req.s) : NULL;
  }
  if (fuzz_verbose()) fprintf(stderr, "%s: infer %s -> %s\n", opname, req.s, r ? r : mxw_get_last_error());
  return r;
}

static void registry(int mode, int which, const uint8_t *sb, char *text) { /* sb: 7 header bytes */
  int op = -1;
  for (int tries = 0; op < 0 && tries < NUM_OPS; tries++) op = mxw_op_find(k_ops[(which + tries) % NUM_OPS]);
  if (op < 0) return;
  const mxw_op_def *def = mxw_op_get(op);
  const char *keys[MAX_KV], *vals[MAX_KV];
  int n = parse_lines(def, text, keys, vals);
  mxw_params *p = NULL;
  if (mxw_params_create(op, n, keys, vals, &p) != 0) {
    if (fuzz_verbose()) fprintf(stderr, "%s: attributes rejected: %s\n", def->name, mxw_get_last_error());
    FUZZ_CHECK(mxw_get_last_error()[0] != 0, "failure without a message");
    return;
  }
  int nin = mxw_params_num_inputs(p), nout = mxw_params_num_outputs(p), nvis = mxw_params_num_visible_outputs(p);
  FUZZ_CHECK(nin >= 0 && nout >= 1 && nvis >= 1 && nvis <= nout, "%s: %d inputs, %d outputs, %d visible", def->name,
             nin, nout, nvis);
  /* one variable per input ("in0", "in1", ...; variadic ops need them given) */
  mxw_symbol *vars[64] = {0}, *s = NULL;
  int nvars = 0, composed = -1;
  if (nin <= 64 && nout <= 64) {
    for (; nvars < nin; nvars++) {
      char vn[16];
      snprintf(vn, sizeof vn, "in%d", nvars);
      FUZZ_CHECK(mxw_sym_var(vn, 0, NULL, NULL, &vars[nvars]) == 0, "variable %s", vn);
    }
    composed = mxw_sym_compose(op, "f", n, keys, vals, nin, vars, &s);
    if (composed != 0 && fuzz_verbose()) fprintf(stderr, "%s: compose failed: %s\n", def->name, mxw_get_last_error());
  }
  for (int k = 0; k < nvars; k++) mxw_sym_free(vars[k]);
  if (composed == 0) {
    char *j = NULL;
    FUZZ_CHECK(mxw_sym_tojson(s, &j) == 0, "%s: a composed symbol cannot be written", def->name);
    mxw_symbol *s2 = NULL;
    FUZZ_CHECK(mxw_sym_fromjson(j, &s2) == 0, "%s: a composed symbol's JSON does not load:\n%s", def->name, j);
    mxw_sym_free(s2);
    mxw_buffer_free(j);
    cJSON *info = cJSON_Parse(mxw_sym_info(s));
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(info, "inputs");
    const char *r = cJSON_GetArraySize(inputs) > 0 ? infer_small(s, inputs, sb, def->name) : NULL;
    if (r && mode == 3) {
      cJSON *res = cJSON_Parse(r);
      FUZZ_CHECK(res != NULL, "inference result is not JSON: %s", r);
      if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "complete")) &&
          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "types_complete"))) {
        g_seed = (uint32_t)sb[6] * 2654435761u;
        int was = mxw_set_training(sb[5] & 1);
        run_eager(op, def->name, p, inputs, res);
        mxw_set_training(was);
      }
      cJSON_Delete(res);
    }
    cJSON_Delete(info);
    mxw_sym_free(s);
  }
  mxw_params_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  fuzz_budget_begin();
  int mode = data[0] % 4, which = data[1];
  if (mode == 0) {
    char *text = fuzz_cstr(data + 2, size - 2);
    direct(which, text);
    free(text);
  } else {
    uint8_t sb[7] = {0};
    size_t k = size - 2 < 7 ? size - 2 : 7;
    memcpy(sb, data + 2, k);
    char *text = fuzz_cstr(data + 2 + k, size - 2 - k);
    registry(mode, which, sb, text);
    free(text);
  }
  fuzz_budget_end(size, "attribute parsing");
  return 0;
}
