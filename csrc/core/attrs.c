/* attrs.c -- parsing attribute values from MXNet's string forms (dmlc::Parameter rules,
 * ../shared/spec/symbol-json.md §9.2): ints by C++ stream rules ("3.0" is not an int), bools
 * True/False/1/0 in any case, exact enum names, tuples "(3, 3)" / "[3,3]" / "3" / "()" /
 * "(3,)" with optional L suffixes, "None" for optional values. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "mxw_core.h"

static const char *skip_ws(const char *s) {
  while (*s && isspace((unsigned char)*s)) s++;
  return s;
}

static int is_none(const char *s) {
  s = skip_ws(s);
  if (strncmp(s, "None", 4) != 0) return 0;
  return *skip_ws(s + 4) == '\0';
}

static int parse_int(const char *text, int64_t *out) {
  const char *s = skip_ws(text);
  if (!*s) return -1;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (end == s || errno == ERANGE) return -1;
  if (*end == 'L') end++; /* Python 2 long */
  if (*skip_ws(end)) return -1;
  *out = v;
  return 0;
}

/* strtod, with the common case done directly: up to 19 significant decimal digits whose value is
 * at most 2^53, scaled by 10^e with |e| <= 22. Both are exact doubles then, so one IEEE
 * multiplication or division rounds correctly (Clinger's fast path); everything else (more
 * digits, larger exponents, inf/nan, hex) goes to strtod. Attributes arrive as decimal text
 * ("0.5", "1e-05"): libc's strtod works in long double, which wasm emulates in software (a few
 * microseconds per value in the first, unoptimised calls of a process). */
double mxw_parse_double(const char *s, char **end) {
  static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char *p = s;
  int neg = 0;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return strtod(s, end); /* hexadecimal */
  uint64_t m = 0;
  int digits = 0, any = 0, e10 = 0;
  for (; *p >= '0' && *p <= '9'; p++, any = 1) {
    if (m == 0 && *p == '0') continue; /* leading zeros */
    if (++digits > 19) return strtod(s, end);
    m = m * 10 + (uint64_t)(*p - '0');
  }
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++, any = 1) {
      if (m == 0 && *p == '0') {
        e10--;
        continue;
      }
      if (++digits > 19) return strtod(s, end);
      m = m * 10 + (uint64_t)(*p - '0');
      e10--;
    }
  }
  if (!any) return strtod(s, end); /* no digits: inf, nan, hex, or not a number */
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    int eneg = 0, ex = 0;
    if (*q == '+' || *q == '-') eneg = *q++ == '-';
    if (*q >= '0' && *q <= '9') { /* else the 'e' is not part of the number, as strtod reads it */
      for (; *q >= '0' && *q <= '9'; q++) {
        if (ex > 10000) return strtod(s, end);
        ex = ex * 10 + (*q - '0');
      }
      e10 += eneg ? -ex : ex;
      p = q;
    }
  }
  double v;
  if (m == 0) {
    v = 0.0;
  } else if (m <= ((uint64_t)1 << 53) && e10 >= -22 && e10 <= 22) {
    v = e10 >= 0 ? (double)m * k_pow10[e10] : (double)m / k_pow10[-e10];
  } else {
    return strtod(s, end);
  }
  if (end) *end = (char *)p;
  return neg ? -v : v;
}

static int parse_float(const char *text, double *out) {
  const char *s = skip_ws(text);
  if (!*s) return -1;
  char *end;
  double v = mxw_parse_double(s, &end);
  if (end == s || *skip_ws(end)) return -1;
  *out = v;
  return 0;
}

static int parse_bool(const char *text, int *out) {
  const char *s = skip_ws(text);
  char buf[8];
  size_t n = 0;
  while (s[n] && !isspace((unsigned char)s[n]) && n < sizeof buf - 1) {
    buf[n] = s[n];
    n++;
  }
  buf[n] = 0;
  if (*skip_ws(s + n)) return -1;
  if (strcasecmp(buf, "true") == 0 || strcmp(buf, "1") == 0)
    *out = 1;
  else if (strcasecmp(buf, "false") == 0 || strcmp(buf, "0") == 0)
    *out = 0;
  else
    return -1;
  return 0;
}

/* Tuples: "(a, b)", "[a,b]", "a", "()", "(a,)"; elements ints, or None when allow_none. */
static int parse_tuple(const char *text, int allow_none, mxw_tuple *t) {
  memset(t, 0, sizeof *t);
  const char *s = skip_ws(text);
  if (is_none(s)) {
    t->ndim = -1;
    return 0;
  }
  char close = 0;
  if (*s == '(')
    close = ')';
  else if (*s == '[')
    close = ']';
  if (!close) { /* a bare integer is a 1-tuple */
    int64_t v;
    if (parse_int(s, &v) != 0) return -1;
    t->ndim = 1;
    t->v[0] = v;
    t->has[0] = 1;
    return 0;
  }
  s = skip_ws(s + 1);
  int n = 0;
  while (*s != close) {
    if (n >= MXW_MAX_TUPLE) return -1;
    if (allow_none && strncmp(s, "None", 4) == 0) {
      t->has[n] = 0;
      t->v[n] = 0;
      s += 4;
    } else {
      errno = 0;
      char *end;
      long long v = strtoll(s, &end, 10);
      if (end == s || errno == ERANGE) return -1;
      if (*end == 'L') end++;
      t->v[n] = v;
      t->has[n] = 1;
      s = end;
    }
    n++;
    s = skip_ws(s);
    if (*s == ',')
      s = skip_ws(s + 1);
    else if (*s != close)
      return -1;
  }
  if (*skip_ws(s + 1)) return -1;
  t->ndim = n;
  return 0;
}

static const char *type_desc(const mxw_attr_spec *spec) {
  switch (spec->type) {
    case MXW_ATTR_INT: return "an integer";
    case MXW_ATTR_FLOAT: return "a number";
    case MXW_ATTR_BOOL: return "a boolean (True/False)";
    case MXW_ATTR_SHAPE: return "a shape such as (3, 3)";
    case MXW_ATTR_OPT_TUPLE: return "a tuple such as (0, None)";
    // GCOVR_EXCL_START: unreachable: enums and dtypes get their own message, strings are always valid
    case MXW_ATTR_ENUM: return "one of the listed names";
    case MXW_ATTR_DTYPE: return "a dtype name such as float32";
    case MXW_ATTR_STRING: return "a string";
  }
  return "a value"; /* the switch is exhaustive */
  // GCOVR_EXCL_STOP
}

int mxw_attr_parse(const mxw_attr_spec *spec, const char *text, void *param_struct) {
  char *field = (char *)param_struct + spec->offset;
  int bad = 0;
  if (spec->optional && spec->type != MXW_ATTR_SHAPE && is_none(text)) {
    /* optional scalar: has = 0 (all optional scalar fields start with int32 has) */
    *(int32_t *)field = 0;
    return 0;
  }
  switch (spec->type) {
    case MXW_ATTR_INT: {
      int64_t v;
      bad = parse_int(text, &v);
      if (!bad) {
        if (spec->optional) {
          ((mxw_opt_int *)field)->has = 1;
          ((mxw_opt_int *)field)->v = v;
        } else
          *(int64_t *)field = v;
      }
      break;
    }
    case MXW_ATTR_FLOAT: {
      double v;
      bad = parse_float(text, &v);
      if (!bad) {
        if (spec->optional) {
          ((mxw_opt_float *)field)->has = 1;
          ((mxw_opt_float *)field)->v = v;
        } else
          *(double *)field = v;
      }
      break;
    }
    case MXW_ATTR_BOOL: {
      int v;
      bad = parse_bool(text, &v);
      if (!bad) {
        if (spec->optional) {
          ((mxw_opt_int *)field)->has = 1;
          ((mxw_opt_int *)field)->v = v;
        } else
          *(int *)field = v;
      }
      break;
    }
    case MXW_ATTR_ENUM: {
      const char *s = skip_ws(text);
      size_t n = strlen(s);
      while (n && isspace((unsigned char)s[n - 1])) n--;
      int found = -1;
      for (int i = 0; spec->enum_values && spec->enum_values[i]; i++)
        if (strlen(spec->enum_values[i]) == n && strncmp(spec->enum_values[i], s, n) == 0) found = i;
      if (found < 0) {
        char opts[512] = "";
        for (int i = 0; spec->enum_values && spec->enum_values[i]; i++) {
          strncat(opts, i ? ", '" : "'", sizeof opts - strlen(opts) - 1);
          strncat(opts, spec->enum_values[i], sizeof opts - strlen(opts) - 1);
          strncat(opts, "'", sizeof opts - strlen(opts) - 1);
        }
        return mxw_fail("invalid value '%s' for attribute '%s': expected one of {%s}", text, spec->name, opts);
      }
      if (spec->optional) {
        ((mxw_opt_int *)field)->has = 1;
        ((mxw_opt_int *)field)->v = found;
      } else
        *(int *)field = found;
      break;
    }
    case MXW_ATTR_SHAPE:
    case MXW_ATTR_OPT_TUPLE: {
      mxw_tuple t;
      bad = parse_tuple(text, spec->type == MXW_ATTR_OPT_TUPLE, &t);
      if (!bad && t.ndim < 0 && !spec->optional && spec->type == MXW_ATTR_OPT_TUPLE) bad = 1;
      if (!bad) memcpy(field, &t, sizeof t);
      break;
    }
    case MXW_ATTR_DTYPE: {
      const char *s = skip_ws(text);
      int d = mxw_dtype_from_name(s);
      if (d < 0) {
        int64_t flag;
        if (parse_int(s, &flag) == 0 && flag >= 0 && flag < MXW_NUM_DTYPES) d = (int)flag;
      }
      if (d < 0)
        return mxw_fail("invalid value '%s' for attribute '%s': expected a dtype name such as float32", text,
                        spec->name);
      if (spec->optional) {
        ((mxw_opt_int *)field)->has = 1;
        ((mxw_opt_int *)field)->v = d;
      } else
        *(int *)field = d;
      break;
    }
    case MXW_ATTR_STRING: {
      size_t n = strlen(text);
      if (n >= sizeof(mxw_str)) return mxw_fail("value of attribute '%s' is too long", spec->name);
      memcpy(((mxw_str *)field)->s, text, n + 1);
      break;
    }
  }
  if (bad) return mxw_fail("invalid value '%s' for attribute '%s': expected %s", text, spec->name, type_desc(spec));
  return 0;
}

/* "(a, b, c)", "[a,b]", "(a,)", "()", "a" -> at most `max` floats, as MXNet's Tuple<float> parses
 * them (attributes kept as strings and read by an op's validate: MultiBoxPrior's sizes, Normalize's
 * mean); -1 with an error naming the attribute. */
int mxw_parse_floats(const char *name, const char *text, float *v, int max, int *n) {
  const char *p = text;
  while (*p == ' ') p++;
  char close = 0;
  if (*p == '(' || *p == '[') close = *p == '(' ? ')' : ']', p++;
  *n = 0;
  for (;;) {
    while (*p == ' ') p++;
    if (close && *p == close) break;
    if (!close && *p == '\0') break;
    char *end;
    double d = mxw_parse_double(p, &end);
    if (end == p || *n >= max) goto bad;
    v[(*n)++] = (float)d;
    p = end;
    while (*p == ' ') p++;
    if (*p == ',')
      p++;
    else if (!(close ? *p == close : *p == '\0'))
      goto bad;
  }
  if (close) p++;
  while (*p == ' ') p++;
  if (*p == '\0') return 0;
bad:
  return mxw_fail(
      "invalid value '%s' for attribute '%s': expected a float or a tuple of at most %d floats such as "
      "(0.5, 1, 2)",
      text, name, max);
}
