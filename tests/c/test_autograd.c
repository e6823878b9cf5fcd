/* The C autograd API (csrc/graph/autograd.c): the eager tape, backward with grad_req write/add,
 * head gradients, retain_graph, autograd.grad and the errors, against hand-worked values, and
 * nothing leaks (ASan). */
#include "mxw_test.h"

static void set_recording(int on) { mxw_autograd_set_recording(on); }

static void test_square_plus_linear(void **state) {
  (void)state;
  /* y = x * x + x * 3 at x = [1, 2, 3]: dy/dx = 2x + 3 */
  mxw_ndarray *x = t_array(1, (int32_t[]){3}, (float[]){1, 2, 3});
  mxw_ndarray *g = t_array(1, (int32_t[]){3}, NULL);
  int32_t req = 1;
  assert_int_equal(mxw_autograd_mark_variables(1, &x, &g, &req), 0);
  set_recording(1);
  mxw_ndarray *xx[2] = {x, x}, *sq[1] = {NULL}, *lin[1] = {NULL}, *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("elemwise_mul", xx, 2, sq, &nout, NULL), 0);
  assert_int_equal(t_invoke("_mul_scalar", &x, 1, lin, &nout, "scalar", "3", NULL), 0);
  mxw_ndarray *both[2] = {sq[0], lin[0]};
  assert_int_equal(t_invoke("elemwise_add", both, 2, y, &nout, NULL), 0);
  set_recording(0);
  assert_int_equal(mxw_autograd_backward(1, y, NULL, 1, 1), 0);
  t_expect_f32(g, (float[]){5, 7, 9}, 3, 0);
  /* grad_req add: a second (retained) backward with a head gradient accumulates */
  req = 2;
  assert_int_equal(mxw_autograd_mark_variables(1, &x, &g, &req), 0);
  /* re-marking gives x a new variable node: the old graph still refers to the old one */
  mxw_ndarray *hg = t_array(1, (int32_t[]){3}, (float[]){1, 0, 2});
  mxw_ndarray *grads[1] = {NULL};
  /* x's new node is not in y's graph: its gradient is zero */
  assert_int_equal(mxw_autograd_grad(1, y, &hg, 1, &x, 1, 1, grads), 0);
  t_expect_f32(grads[0], (float[]){0, 0, 0}, 3, 0);
  mxw_ndarray_free(grads[0]);
  mxw_ndarray_free(hg);
  mxw_ndarray_free(sq[0]);
  mxw_ndarray_free(lin[0]);
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(x);
  mxw_ndarray_free(g);
}

static void test_grad_and_retain(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){2, -1});
  mxw_ndarray *g = t_array(1, (int32_t[]){2}, NULL);
  int32_t req = 2;
  assert_int_equal(mxw_autograd_mark_variables(1, &x, &g, &req), 0);
  set_recording(1);
  mxw_ndarray *y[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_power_scalar", &x, 1, y, &nout, "scalar", "3", NULL), 0);
  set_recording(0);
  /* autograd.grad: 3x^2 returned, x's buffer untouched */
  mxw_ndarray *grads[1] = {NULL};
  assert_int_equal(mxw_autograd_grad(1, y, NULL, 1, &x, 1, 1, grads), 0);
  t_expect_f32(grads[0], (float[]){12, 3}, 2, 1e-6);
  t_expect_f32(g, (float[]){0, 0}, 2, 0);
  mxw_ndarray_free(grads[0]);
  /* retained: two backward passes accumulate (add), then the graph is released */
  assert_int_equal(mxw_autograd_backward(1, y, NULL, 1, 1), 0);
  assert_int_equal(mxw_autograd_backward(1, y, NULL, 0, 1), 0);
  t_expect_f32(g, (float[]){24, 6}, 2, 1e-6);
  assert_int_equal(mxw_autograd_backward(1, y, NULL, 0, 1), -1);
  assert_non_null(strstr(mxw_get_last_error(), "retain_graph"));
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(x);
  mxw_ndarray_free(g);
}

static void test_errors(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){1, 2});
  /* not recorded */
  assert_int_equal(mxw_autograd_backward(1, &x, NULL, 0, 1), -1);
  assert_non_null(strstr(mxw_get_last_error(), "not in a computational graph"));
  /* a gradient buffer of another shape */
  mxw_ndarray *g = t_array(1, (int32_t[]){3}, NULL);
  int32_t req = 1;
  assert_int_equal(mxw_autograd_mark_variables(1, &x, &g, &req), -1);
  req = 7;
  assert_int_equal(mxw_autograd_mark_variables(1, &x, &x, &req), -1);
  /* in-place write into a recorded array while recording: refused, nothing written */
  req = 1;
  mxw_ndarray *gx = t_array(1, (int32_t[]){2}, NULL);
  assert_int_equal(mxw_autograd_mark_variables(1, &x, &gx, &req), 0);
  set_recording(1);
  mxw_ndarray *xx[2] = {x, x}, *out[1] = {x};
  int nout = 1;
  assert_int_equal(t_invoke("elemwise_add", xx, 2, out, &nout, NULL), -1);
  set_recording(0);
  t_expect_f32(x, (float[]){1, 2}, 2, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(gx);
  mxw_ndarray_free(x);
}

/* create_graph: y = x^3; g = dy/dx = 3x^2 comes back recorded, and its backward gives 6x (x = 2,
 * -1: 12, -6); with a head gradient h = [1, 2] on y, g = 3x^2 h and d(sum g)/dx = 6x h */
static void test_create_graph(void **state) {
  (void)state;
  mxw_ndarray *x = t_array(1, (int32_t[]){2}, (float[]){2, -1});
  mxw_ndarray *gx = t_array(1, (int32_t[]){2}, NULL);
  mxw_ndarray *h = t_array(1, (int32_t[]){2}, (float[]){1, 2});
  int32_t req = 1;
  assert_int_equal(mxw_autograd_mark_variables(1, &x, &gx, &req), 0);
  set_recording(1);
  mxw_ndarray *y[1] = {NULL}, *g[1] = {NULL};
  int nout = 1;
  assert_int_equal(t_invoke("_power_scalar", &x, 1, y, &nout, "scalar", "3", NULL), 0);
  assert_int_equal(mxw_autograd_grad_ex(1, y, &h, 1, &x, 1, 1, 1, g), 0);
  set_recording(0);
  t_expect_f32(g[0], (float[]){12, 6}, 2, 1e-6);
  assert_int_equal(mxw_autograd_backward(1, g, NULL, 0, 1), 0);
  t_expect_f32(gx, (float[]){12, -12}, 2, 1e-6);
  mxw_ndarray_free(g[0]);
  /* without create_graph the gradient has no history: differentiating it again is an error */
  set_recording(1);
  mxw_ndarray *y2[1] = {NULL};
  assert_int_equal(t_invoke("sin", &x, 1, y2, &nout, NULL), 0);
  set_recording(0);
  assert_int_equal(mxw_autograd_grad_ex(1, y2, NULL, 1, &x, 1, 0, 1, g), 0);
  assert_int_equal(mxw_autograd_backward(1, g, NULL, 0, 1), -1);
  assert_error_contains("not in a computational graph");
  mxw_ndarray_free(g[0]);
  mxw_ndarray_free(y2[0]);
  mxw_ndarray_free(y[0]);
  mxw_ndarray_free(h);
  mxw_ndarray_free(x);
  mxw_ndarray_free(gx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_square_plus_linear),
      cmocka_unit_test(test_grad_and_retain),
      cmocka_unit_test(test_create_graph),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
