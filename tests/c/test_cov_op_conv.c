/* conv.c through autograd: the gradients of Convolution (a Deconvolution node for the data, the
 * _backward_Convolution_weight node for weight and bias) and of Deconvolution (the reverse), with
 * stride, padding, dilation, groups and adj, in float64 and float32; float16 through the float32
 * copy; 1-D and 3-D convolutions; the shape errors; UpSampling's nearest mode on other element
 * widths. References are plain float64 loops of MXNet's definitions (convolution-inl.h,
 * deconvolution-inl.h: deconvolution is the transpose of convolution), their gradients by unit
 * perturbation of a float64 loss sum(head * y), exact since y is linear in each operand. */
#include "cov_op_helpers.h"

typedef struct {
  int N, C, H, W, F, G, k, s, p, d, adj, deconv;
} geom;

static int out_size(const geom *g, int in) {
  const int dk = g->d * (g->k - 1) + 1;
  return g->deconv ? (in - 1) * g->s - 2 * g->p + dk + g->adj : (in + 2 * g->p - dk) / g->s + 1;
}

/* y from x (N, C, H, W), w (conv: (F, C/G, k, k); deconv: (C, F/G, k, k)), b (F) */
static void ref(const geom *g, const double *x, const double *w, const double *b, double *y) {
  const int OH = out_size(g, g->H), OW = out_size(g, g->W), Cg = g->C / g->G, Fg = g->F / g->G, k = g->k;
  for (int n = 0; n < g->N; n++)
    for (int f = 0; f < g->F; f++)
      for (int i = 0; i < OH * OW; i++) y[(n * g->F + f) * OH * OW + i] = b ? b[f] : 0;
  for (int n = 0; n < g->N; n++)
    for (int c = 0; c < g->C; c++) {
      const int grp = c / Cg;
      for (int fo = 0; fo < Fg; fo++) {
        const int f = grp * Fg + fo;
        for (int ky = 0; ky < k; ky++)
          for (int kx = 0; kx < k; kx++) {
            const double wv =
                g->deconv ? w[((c * Fg + fo) * k + ky) * k + kx] : w[((f * Cg + c % Cg) * k + ky) * k + kx];
            if (g->deconv) {
              for (int iy = 0; iy < g->H; iy++)
                for (int ix = 0; ix < g->W; ix++) {
                  const int oy = iy * g->s - g->p + ky * g->d, ox = ix * g->s - g->p + kx * g->d;
                  if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                  y[((n * g->F + f) * OH + oy) * OW + ox] += x[((n * g->C + c) * g->H + iy) * g->W + ix] * wv;
                }
            } else {
              for (int oy = 0; oy < OH; oy++)
                for (int ox = 0; ox < OW; ox++) {
                  const int iy = oy * g->s - g->p + ky * g->d, ix = ox * g->s - g->p + kx * g->d;
                  if (iy < 0 || iy >= g->H || ix < 0 || ix >= g->W) continue;
                  y[((n * g->F + f) * OH + oy) * OW + ox] += x[((n * g->C + c) * g->H + iy) * g->W + ix] * wv;
                }
            }
          }
      }
    }
}

static double loss(const geom *g, const double *x, const double *w, const double *b, const double *h, int ny) {
  double y[2048];
  ref(g, x, w, b, y);
  double L = 0;
  for (int i = 0; i < ny; i++) L += h[i] * y[i];
  return L;
}

static void check(const geom *g, int dt) {
  const int OH = out_size(g, g->H), OW = out_size(g, g->W), k = g->k;
  const int nx = g->N * g->C * g->H * g->W, ny = g->N * g->F * OH * OW;
  const int nw = g->deconv ? g->C * (g->F / g->G) * k * k : g->F * (g->C / g->G) * k * k;
  double x[1024], w[512], b[16], h[2048], y[2048];
  for (int i = 0; i < nx; i++) x[i] = ((i * 37) % 23) / 11.0 - 1;
  for (int i = 0; i < nw; i++) w[i] = ((i * 17) % 13) / 6.5 - 1;
  for (int i = 0; i < g->F; i++) b[i] = 0.25 * i - 0.5;
  for (int i = 0; i < ny; i++) h[i] = ((i * 7) % 11) / 5.0 - 1;
  ref(g, x, w, b, y);
  char ks[16], ss[16], ps[16], ds[16], as[16], fs[8], gs[8];
  snprintf(ks, sizeof ks, "(%d, %d)", k, k);
  snprintf(ss, sizeof ss, "(%d, %d)", g->s, g->s);
  snprintf(ps, sizeof ps, "(%d, %d)", g->p, g->p);
  snprintf(ds, sizeof ds, "(%d, %d)", g->d, g->d);
  snprintf(as, sizeof as, "(%d, %d)", g->adj, g->adj);
  snprintf(fs, sizeof fs, "%d", g->F);
  snprintf(gs, sizeof gs, "%d", g->G);
  const char *op = g->deconv ? "Deconvolution" : "Convolution";
  const char **kv = g->deconv
                        ? KV("kernel", ks, "stride", ss, "pad", ps, "dilate", ds, "adj", as, "num_filter", fs,
                             "num_group", gs, "no_bias", "False")
                        : KV("kernel", ks, "stride", ss, "pad", ps, "dilate", ds, "num_filter", fs, "num_group", gs);
  mxw_ndarray *in[3] = {
      c_arr(dt, 4, SHP(g->N, g->C, g->H, g->W), x),
      g->deconv ? c_arr(dt, 4, SHP(g->C, g->F / g->G, k, k), w) : c_arr(dt, 4, SHP(g->F, g->C / g->G, k, k), w),
      c_arr(dt, 1, SHP(g->F), b)};
  const double tol = dt == MXW_FLOAT64 ? 1e-10 : dt == MXW_FLOAT32 ? 1e-4 : 2e-2;
  mxw_ndarray *o = c_run1(op, in, 3, kv);
  t_expect_shape(o, 4, SHP(g->N, g->F, OH, OW));
  c_expect(o, y, ny, tol);
  mxw_ndarray_free(o);
  if (dt == MXW_FLOAT16) {
    c_free(3, in);
    return;
  }
  double *vs[3] = {x, w, b};
  const int ns[3] = {nx, nw, g->F};
  const double base = loss(g, x, w, b, h, ny);
  for (int v = 0; v < 3; v++) {
    double want[1024];
    for (int i = 0; i < ns[v]; i++) {
      vs[v][i] += 1;
      want[i] = loss(g, x, w, b, h, ny) - base;
      vs[v][i] -= 1;
    }
    mxw_ndarray *gr = c_grad(op, in, 3, v, 0, h, kv);
    for (int i = 0; i < ns[v]; i++)
      if (!(fabs(c_at(gr, i) - want[i]) <= tol * 10 * (1 + fabs(want[i]))))
        fail_msg("%s d input %d [%d] = %.9g, expected %.9g", op, v, i, c_at(gr, i), want[i]);
    mxw_ndarray_free(gr);
  }
  c_free(3, in);
}

static void test_conv_gradients(void **state) {
  (void)state;
  /* N, C, H, W, F, G, k, s, p, d, adj, deconv */
  check(&(geom){2, 4, 5, 5, 4, 2, 3, 2, 1, 1, 0, 0}, MXW_FLOAT64);
  check(&(geom){1, 2, 6, 5, 3, 1, 3, 1, 2, 2, 0, 0}, MXW_FLOAT64);
  check(&(geom){2, 4, 5, 5, 4, 2, 3, 2, 1, 1, 0, 0}, MXW_FLOAT32);
  check(&(geom){1, 4, 3, 3, 2, 2, 3, 2, 1, 1, 1, 1}, MXW_FLOAT64);
  check(&(geom){1, 2, 3, 4, 3, 1, 2, 1, 0, 1, 0, 1}, MXW_FLOAT32);
  check(&(geom){2, 4, 5, 5, 4, 2, 3, 2, 1, 1, 0, 0}, MXW_FLOAT16);
  check(&(geom){1, 4, 3, 3, 2, 2, 3, 2, 1, 1, 1, 1}, MXW_FLOAT16);
}

/* 1-D: y[n, f, o] = b[f] + sum_c,t w[f, c, t] x[n, c, o + t]; no_bias; and the gradient */
static void test_conv1d(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 3, SHP(1, 1, 4), DV(1, 2, 3, 4)),
                        c_arr(MXW_FLOAT32, 3, SHP(1, 1, 2), DV(1, -1))};
  const char **kv = KV("kernel", "(2,)", "num_filter", "1", "no_bias", "True");
  mxw_ndarray *o = c_run1("Convolution", in, 2, kv);
  c_expect(o, DV(-1, -1, -1), 3, 1e-6);
  mxw_ndarray_free(o);
  mxw_ndarray *g = c_grad("Convolution", in, 2, 1, 0, DV(1, 2, 3), kv);
  c_expect(g, DV(1 * 1 + 2 * 2 + 3 * 3, 1 * 2 + 2 * 3 + 3 * 4), 2, 1e-6);
  mxw_ndarray_free(g);
  g = c_grad("Convolution", in, 2, 0, 0, DV(1, 2, 3), kv);
  c_expect(g, DV(1, 2 - 1, 3 - 2, -3), 4, 1e-6);
  mxw_ndarray_free(g);
  c_free(2, in);
}

static void test_conv_errors(void **state) {
  (void)state;
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 3, SHP(1, 1, 4), NULL), c_arr(MXW_FLOAT32, 4, SHP(1, 1, 2, 2), NULL)};
  c_fail("Convolution", in, 2, KV("kernel", "(2, 2)", "num_filter", "1", "no_bias", "True"),
         "data has shape (1, 1, 4), expected 4 dimensions");
  c_free(2, in);
  in[0] = c_arr(MXW_FLOAT32, 4, SHP(1, 1, 2, 2), NULL);
  in[1] = c_arr(MXW_FLOAT32, 4, SHP(1, 1, 3, 3), NULL);
  c_fail("Convolution", in, 2, KV("kernel", "(3, 3)", "num_filter", "1", "no_bias", "True"),
         "the dilated kernel (3) is larger than the padded input (2) in spatial dim 0");
  c_free(2, in);
  /* a deconvolution whose padding eats the whole output: (1 - 1) * 1 - 2 * 2 + 3 = -1 */
  in[0] = c_arr(MXW_FLOAT32, 4, SHP(1, 1, 1, 1), NULL);
  in[1] = c_arr(MXW_FLOAT32, 4, SHP(1, 1, 3, 3), NULL);
  c_fail("Deconvolution", in, 2, KV("kernel", "(3, 3)", "num_filter", "1", "pad", "(2, 2)"),
         "output size -1 <= 0 in spatial dim 0");
  c_free(2, in);
  in[0] = c_arr(MXW_INT32, 4, SHP(1, 1, 3, 3), NULL);
  in[1] = c_arr(MXW_INT32, 4, SHP(1, 1, 3, 3), NULL);
  c_fail("Convolution", in, 2, KV("kernel", "(3, 3)", "num_filter", "1", "no_bias", "True"),
         "dtype int32 is not supported");
  c_free(2, in);
}

/* UpSampling nearest repeats each pixel scale x scale times, whatever the element width. */
static void test_upsampling_widths(void **state) {
  (void)state;
  static const int dts[] = {MXW_UINT8, MXW_FLOAT16, MXW_INT64};
  for (int d = 0; d < 3; d++) {
    mxw_ndarray *x = c_arr(dts[d], 4, SHP(1, 1, 1, 2), DV(3, 5));
    mxw_ndarray *o = c_run1("UpSampling", &x, 1, KV("scale", "2", "sample_type", "nearest", "num_args", "1"));
    t_expect_shape(o, 4, SHP(1, 1, 2, 4));
    c_expect(o, DV(3, 3, 5, 5, 3, 3, 5, 5), 8, 0);
    mxw_ndarray_free(o);
    mxw_ndarray_free(x);
  }
  /* the gradient sums each pixel's scale x scale block: float32, float64; two inputs joined along channels */
  for (int d = 0; d < 2; d++) {
    mxw_ndarray *x = c_arr(d ? MXW_FLOAT64 : MXW_FLOAT32, 4, SHP(1, 1, 1, 2), DV(3, 5));
    mxw_ndarray *g = c_grad("UpSampling", &x, 1, 0, 0, DV(1, 2, 3, 4, 5, 6, 7, 8),
                            KV("scale", "2", "sample_type", "nearest", "num_args", "1"));
    c_expect(g, DV(1 + 2 + 5 + 6, 3 + 4 + 7 + 8), 2, 0);
    mxw_ndarray_free(g);
    mxw_ndarray_free(x);
  }
  mxw_ndarray *two[2] = {c_arr(MXW_FLOAT32, 4, SHP(1, 1, 1, 2), DV(3, 5)),
                         c_arr(MXW_FLOAT32, 4, SHP(1, 1, 1, 2), DV(7, 9))};
  double h16[16];
  for (int i = 0; i < 16; i++) h16[i] = i + 1;
  mxw_ndarray *g = c_grad("UpSampling", two, 2, 1, 0, h16, KV("scale", "2", "sample_type", "nearest", "num_args", "2"));
  c_expect(g, DV(9 + 10 + 13 + 14, 11 + 12 + 15 + 16), 2, 0);
  mxw_ndarray_free(g);
  c_free(2, two);
  mxw_ndarray *x = c_arr(MXW_FLOAT32, 3, SHP(1, 1, 2), NULL);
  c_fail("UpSampling", &x, 1, KV("scale", "2", "sample_type", "nearest", "num_args", "1"),
         "expected 4 dimensions (batch, channel, height, width)");
  mxw_ndarray_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_gradients),
      cmocka_unit_test(test_conv1d),
      cmocka_unit_test(test_conv_errors),
      cmocka_unit_test(test_upsampling_widths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
