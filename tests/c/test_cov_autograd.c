/* The eager autograd tape (csrc/graph/autograd.c) beyond test_autograd.c: views and copies made
 * while recording (_view_range / _copy / Cast on the tape, csrc/ops/autograd_ops.c),
 * autograd.Function records (csrc/ops/custom_function.c: natively its backward has no JavaScript
 * to call and says so), more than 32 gradient contributions summed in chunks, grad_req add on
 * float64, a gradient buffer that is also a saved value, detach, the fresh-gradient flag, and
 * MXNet's error messages. Expected values are hand-worked. */
#include "cov_graph.h"

static mxw_ndarray *rec(const char *op, mxw_ndarray **ins, int nin, const char *k, const char *v) {
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  int rc = k ? t_invoke(op, ins, nin, out, &nout, k, v, NULL) : t_invoke(op, ins, nin, out, &nout, NULL);
  if (rc != 0) fail_msg("%s: %s", op, mxw_get_last_error());
  return out[0];
}

/* x.reshape(3, 2) * 2 and x.flat[2:5] * 3: the views are recorded, their gradients land in x's
 * elements (_backward_view_range: zeros with the range set). */
static void test_views_recorded(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(2, (int32_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
  mxw_ndarray *gx = t_array(2, (int32_t[]){2, 3}, NULL);
  cg_mark(x, gx, 1);
  mxw_ndarray *v = NULL, *r = NULL, *plain = NULL;
  assert_int_equal(mxw_ndarray_view(x, 2, (int32_t[]){3, 2}, &plain), 0); /* not recording: no history */
  assert_int_equal(mxw_autograd_backward(1, &plain, NULL, 0, 1), -1);
  assert_error_contains("not in a computational graph");
  mxw_autograd_set_recording(1);
  assert_int_equal(mxw_ndarray_view(x, 2, (int32_t[]){3, 2}, &v), 0);
  assert_int_equal(mxw_ndarray_view_range(x, 2, 1, (int32_t[]){3}, &r), 0);
  mxw_ndarray *a = rec("_mul_scalar", &v, 1, "scalar", "2");
  mxw_ndarray *b = rec("_mul_scalar", &r, 1, "scalar", "3");
  mxw_autograd_set_recording(0);
  t_expect_f32(b, (float[]){9, 12, 15}, 3, 0);
  mxw_ndarray *heads[2] = {a, b};
  assert_int_equal(mxw_autograd_backward(2, heads, NULL, 0, 1), 0);
  t_expect_f32(gx, (float[]){2, 2, 5, 5, 5, 2}, 6, 0);
  /* _view_range itself checks its range */
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_view_range", &x, 1, out, &nout, "offset", "4", "shape", "(3,)", NULL), -1);
  assert_error_contains("elements 4..6 are outside an array of shape (2, 3)");
  mxw_ndarray *all[] = {x, gx, v, r, plain, a, b};
  for (int i = 0; i < 7; i++) mxw_ndarray_free(all[i]);
}

/* y[:] = x and y64[:] = x (float64) while recording: _copy and Cast on the tape; the gradient
 * of Cast goes back to float32. */
static void test_copies_recorded(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){3}, (float[]){1, 2, 3}), *gx = t_array(1, (int32_t[]){3}, NULL);
  cg_mark(x, gx, 1);
  mxw_ndarray *y = t_array(1, (int32_t[]){3}, NULL), *y64 = t_array_f64(1, (int32_t[]){3}, NULL);
  mxw_autograd_set_recording(1);
  assert_int_equal(mxw_ndarray_copy(x, y), 0);
  assert_int_equal(mxw_ndarray_copy(x, y64), 0);
  mxw_ndarray *yy[2] = {y, y};
  mxw_ndarray *sq = rec("elemwise_mul", yy, 2, NULL, NULL);
  mxw_ndarray *z = rec("_mul_scalar", &y64, 1, "scalar", "2");
  /* copying into an array of another shape cannot be recorded */
  mxw_ndarray *col = t_array(2, (int32_t[]){3, 1}, NULL);
  assert_int_equal(mxw_ndarray_copy(x, col), -1);
  assert_error_contains("copying an array of shape (3,) into one of shape (3, 1) cannot be recorded");
  /* nor into an array that is already in the graph, by copy or by an op's out= */
  assert_int_equal(mxw_ndarray_copy(x, sq), -1);
  assert_error_contains("Assigning to NDArrays that are already in a computational graph");
  int op = mxw_op_find("_mul_scalar");
  const char *k[1] = {"scalar"}, *v[1] = {"3"};
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, 1, k, v, &p), 0);
  int nout = 1;
  mxw_ndarray *outs[1] = {sq};
  mxw_ndarray *zin[1] = {y};
  assert_int_equal(mxw_op_invoke(op, p, 1, zin, &nout, outs), -1);
  assert_error_contains("inplace operations like +=");
  mxw_params_free(p);
  mxw_autograd_set_recording(0);
  assert_int_equal(mxw_ndarray_dtype(z), MXW_FLOAT64);
  mxw_ndarray *heads[2] = {sq, z};
  assert_int_equal(mxw_autograd_backward(2, heads, NULL, 0, 1), 0);
  t_expect_f32(gx, (float[]){4, 6, 8}, 3, 1e-6); /* 2x + 2 */
  mxw_ndarray *all[] = {x, gx, y, y64, sq, z, col};
  for (int i = 0; i < 7; i++) mxw_ndarray_free(all[i]);
}

/* autograd.Function: the call is recorded as _CustomFunction; its backward would run the JS
 * Function, which a native build does not have. */
static void test_custom_function(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){1, 2}), *gx = t_array(1, (int32_t[]){2}, NULL);
  mxw_ndarray *n = NULL, *gn = NULL;
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){2}, MXW_INT32, &n), 0);
  assert_int_equal(mxw_ndarray_create(1, (int32_t[]){2}, MXW_INT32, &gn), 0);
  cg_mark(x, gx, 1);
  cg_mark(n, gn, 1);
  mxw_ndarray *y = t_array(1, (int32_t[]){2}, (float[]){5, 6});
  mxw_ndarray *ins[2] = {x, n};
  /* not recording: nothing is taped */
  assert_int_equal(mxw_autograd_record_custom(3, 2, ins, 1, &y), 0);
  assert_int_equal(mxw_autograd_backward(1, &y, NULL, 0, 1), -1);
  assert_error_contains("not in a computational graph");
  mxw_autograd_set_recording(1);
  assert_int_equal(mxw_autograd_record_custom(3, 2, ins, 1, &y), 0);
  /* argument errors */
  mxw_ndarray *nul[1] = {NULL};
  assert_int_equal(mxw_autograd_record_custom(3, 1, nul, 1, &y), -1);
  assert_error_contains("input 0 is NULL");
  assert_int_equal(mxw_autograd_record_custom(3, 1, &x, 1, nul), -1);
  assert_error_contains("output 0 is NULL");
  assert_int_equal(mxw_autograd_record_custom(3, 1, &x, 0, &y), -1);
  assert_error_contains("NULL argument");
  mxw_ndarray *many[65];
  for (int i = 0; i < 65; i++) many[i] = x;
  assert_int_equal(mxw_autograd_record_custom(3, 65, many, 1, &y), -1);
  assert_error_contains("num_inputs must be in 0..64 and num_outputs in 1..64");
  /* y is in the graph now: recording into it again is refused */
  assert_int_equal(mxw_autograd_record_custom(4, 1, &x, 1, &y), -1);
  assert_error_contains("Assigning to NDArrays that are already in a computational graph");
  mxw_autograd_set_recording(0);
  assert_int_equal(mxw_autograd_backward(1, &y, NULL, 1, 1), -1);
  assert_error_contains("autograd.Function backward: autograd.Function needs the JavaScript runtime");
  /* the op is not callable on its own */
  mxw_ndarray *out[1] = {NULL};
  int nout = 1;
  assert_int_equal(
      t_invoke("_CustomFunction", &x, 1, out, &nout, "id", "1", "num_inputs", "1", "num_outputs", "1", NULL), -1);
  assert_error_contains("_CustomFunction runs only through autograd.Function");
  mxw_ndarray *all[] = {x, gx, n, gn, y};
  for (int i = 0; i < 5; i++) mxw_ndarray_free(all[i]);
}

/* add_n of x 33 times: 33 contributions to x's gradient, summed 32 at a time. */
static void test_many_contributions(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){1, -1}), *gx = t_array(1, (int32_t[]){2}, NULL);
  cg_mark(x, gx, 1);
  mxw_ndarray *ins[33];
  for (int i = 0; i < 33; i++) ins[i] = x;
  mxw_autograd_set_recording(1);
  mxw_ndarray *y = rec("add_n", ins, 33, "num_args", "33");
  mxw_autograd_set_recording(0);
  t_expect_f32(y, (float[]){33, -33}, 2, 0);
  mxw_ndarray *hg = t_array(1, (int32_t[]){2}, (float[]){1, 0.5f});
  assert_int_equal(mxw_autograd_backward(1, &y, &hg, 0, 1), 0);
  t_expect_f32(gx, (float[]){33, 16.5f}, 2, 0);
  mxw_ndarray_free(hg);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x);
  mxw_ndarray_free(gx);
}

/* Gradients built with the builder's helpers: exp (ograd * out), where (zeros_like for the
 * branch not taken), stack (SliceChannel with several outputs). */
static void test_gradient_helpers(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){0, 1}), *gx = t_array(1, (int32_t[]){2}, NULL);
  mxw_ndarray *w = t_array(1, (int32_t[]){2}, (float[]){3, 4}), *gw = t_array(1, (int32_t[]){2}, NULL);
  mxw_ndarray *c = t_array(1, (int32_t[]){2}, (float[]){1, 0});
  cg_mark(x, gx, 1);
  cg_mark(w, gw, 1);
  mxw_autograd_set_recording(1);
  mxw_ndarray *e = rec("exp", &x, 1, NULL, NULL);
  mxw_ndarray *cxw[3] = {c, x, w};
  mxw_ndarray *wh = rec("where", cxw, 3, NULL, NULL); /* [x0, w1] */
  mxw_ndarray *xw[2] = {x, w};
  mxw_ndarray *st = rec("stack", xw, 2, "num_args", "2");
  mxw_autograd_set_recording(0);
  t_expect_f32(wh, (float[]){0, 4}, 2, 0);
  t_expect_f32(st, (float[]){0, 1, 3, 4}, 4, 0);
  mxw_ndarray *hst = t_array(2, (int32_t[]){2, 2}, (float[]){10, 20, 30, 40});
  mxw_ndarray *heads[3] = {e, wh, st}, *hgs[3] = {NULL, NULL, hst};
  assert_int_equal(mxw_autograd_backward(3, heads, hgs, 0, 1), 0);
  /* dx = exp(x) + [1, 0] + [10, 20]; dw = [0, 1] + [30, 40] */
  t_expect_f32(gx, (float[]){1 + 1 + 10, 2.718281828f + 0 + 20}, 2, 1e-6);
  t_expect_f32(gw, (float[]){30, 41}, 2, 0);
  mxw_ndarray *all[] = {x, gx, w, gw, c, e, wh, st, hst};
  for (int i = 0; i < 9; i++) mxw_ndarray_free(all[i]);
}

/* float64 with grad_req add (the generic accumulation), and a variable that is its own gradient
 * buffer (grad_req write into a buffer the backward graph also reads: written after the run). */
static void test_float64_add_and_shared_buffer(void **state) {
  (void)state;
  mxw_ndarray *x = t_array_f64(1, (int32_t[]){2}, (double[]){1.5, -2}), *gx = t_array_f64(1, (int32_t[]){2}, NULL);
  cg_mark(x, gx, 2);
  mxw_autograd_set_recording(1);
  mxw_ndarray *xx[2] = {x, x};
  mxw_ndarray *y = rec("elemwise_mul", xx, 2, NULL, NULL);
  mxw_autograd_set_recording(0);
  assert_int_equal(mxw_autograd_backward(1, &y, NULL, 1, 1), 0);
  assert_int_equal(mxw_autograd_backward(1, &y, NULL, 0, 0), 0);
  t_expect_f64(gx, (double[]){6, -8}, 2, 0); /* 2 * 2x */
  mxw_ndarray_free(y);
  /* z is its own gradient buffer: after backward z holds 2 z_old */
  mxw_ndarray *z = t_array(1, (int32_t[]){3}, (float[]){1, -2, 4});
  cg_mark(z, z, 1);
  mxw_autograd_set_recording(1);
  mxw_ndarray *zz[2] = {z, z};
  mxw_ndarray *q = rec("elemwise_mul", zz, 2, NULL, NULL);
  mxw_autograd_set_recording(0);
  assert_int_equal(mxw_autograd_backward(1, &q, NULL, 0, 1), 0);
  t_expect_f32(z, (float[]){2, -4, 8}, 3, 0);
  mxw_ndarray_free(q);
  mxw_ndarray_free(z);
  mxw_ndarray_free(x);
  mxw_ndarray_free(gx);
}

/* A float64 gradient buffer for a float32 variable: grad_req write stores the converted values,
 * as grad_req add accumulates them. */
static void test_grad_buffer_of_another_dtype(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){1.5f, -2}), *g = t_array_f64(1, (int32_t[]){2}, NULL);
  for (int32_t req = 1; req <= 2; req++) {
    cg_mark(x, g, req);
    mxw_autograd_set_recording(1);
    mxw_ndarray *xx[2] = {x, x};
    mxw_ndarray *y = rec("elemwise_mul", xx, 2, NULL, NULL);
    mxw_autograd_set_recording(0);
    assert_int_equal(mxw_autograd_backward(1, &y, NULL, 0, 1), 0);
    /* 2x written, then 2x added */
    t_expect_f64(g, req == 1 ? (double[]){3, -4} : (double[]){6, -8}, 2, 0);
    mxw_ndarray_free(y);
  }
  mxw_ndarray_free(x);
  mxw_ndarray_free(g);
}

static void test_errors_detach_fresh(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){1, -1}), *gx = t_array(1, (int32_t[]){2}, NULL);
  mxw_ndarray *u = t_array(1, (int32_t[]){2}, (float[]){1, 1});
  cg_mark(x, gx, 0); /* grad_req null */
  mxw_autograd_set_recording(1);
  mxw_ndarray *y = rec("_mul_scalar", &x, 1, "scalar", "2");
  /* _backward_gamma has no gradient of its own (second order needs the trigamma function) */
  mxw_ndarray *ux[2] = {u, x};
  mxw_ndarray *br = rec("_backward_gamma", ux, 2, NULL, NULL);
  mxw_autograd_set_recording(0);
  assert_int_equal(mxw_autograd_backward(1, &y, NULL, 0, 1), -1);
  assert_error_contains("There are no inputs in computation graph that require gradients.");
  mxw_ndarray *g[1] = {NULL};
  assert_int_equal(mxw_autograd_grad(1, &y, NULL, 1, &u, 1, 1, g), -1);
  assert_error_contains("variable 0 is not marked for gradients");
  assert_int_equal(mxw_autograd_grad(1, &y, NULL, 0, &u, 1, 1, g), -1);
  assert_error_contains("grad needs at least one variable");
  assert_int_equal(mxw_autograd_grad(1, &br, NULL, 1, &x, 1, 1, g), -1);
  assert_error_contains(
      "Operator _backward_gamma is non-differentiable because it didn't register FGradient attribute");
  assert_int_equal(mxw_autograd_backward(0, &y, NULL, 0, 1), -1);
  assert_error_contains("backward needs at least one head");
  mxw_ndarray *nul[1] = {NULL};
  assert_int_equal(mxw_autograd_backward(1, nul, NULL, 0, 1), -1);
  assert_error_contains("head 0 is NULL");
  /* mark_variables' argument checks */
  int32_t bad_req = 3;
  assert_int_equal(mxw_autograd_mark_variables(1, &u, &gx, &bad_req), -1);
  assert_error_contains("grad_req 3 is not one of null (0), write (1), add (2)");
  assert_int_equal(mxw_autograd_mark_variables(1, nul, &gx, &bad_req), -1);
  assert_error_contains("variable 0 or its gradient is NULL");
  assert_int_equal(mxw_autograd_mark_variables(1, &u, &gx, NULL), -1);
  assert_error_contains("NULL argument");
  /* autograd.grad of y w.r.t. x (null req still differentiable by grad): 2 */
  assert_int_equal(mxw_autograd_grad(1, &y, NULL, 1, &x, 0, 1, g), 0);
  t_expect_f32(g[0], (float[]){2, 2}, 2, 0);
  mxw_ndarray_free(g[0]);
  /* detach: the same storage, no history */
  mxw_ndarray *d = NULL;
  assert_int_equal(mxw_ndarray_detach(y, &d), 0);
  assert_ptr_equal(mxw_ndarray_data(d), mxw_ndarray_data(y));
  assert_int_equal(mxw_autograd_backward(1, &d, NULL, 0, 1), -1);
  assert_error_contains("not in a computational graph");
  assert_int_equal(mxw_ndarray_detach(NULL, &d), -1);
  mxw_ndarray_free(d);
  /* the fresh-gradient flag: read, set, clear; a NULL array reads 0 */
  assert_int_equal(mxw_ndarray_fresh_grad(gx, -1), 0);
  assert_int_equal(mxw_ndarray_fresh_grad(gx, 1), 1);
  assert_int_equal(mxw_ndarray_fresh_grad(gx, -1), 1);
  assert_int_equal(mxw_ndarray_fresh_grad(gx, 0), 0);
  assert_int_equal(mxw_ndarray_fresh_grad(NULL, 1), 0);
  mxw_ndarray *all[] = {x, gx, u, y, br};
  for (int i = 0; i < 5; i++) mxw_ndarray_free(all[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_views_recorded),      cmocka_unit_test(test_copies_recorded),
      cmocka_unit_test(test_custom_function),     cmocka_unit_test(test_many_contributions),
      cmocka_unit_test(test_gradient_helpers),    cmocka_unit_test(test_float64_add_and_shared_buffer),
      cmocka_unit_test(test_errors_detach_fresh), cmocka_unit_test(test_grad_buffer_of_another_dtype),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
