/* sequence.c: SequenceMask, SequenceReverse, SequenceLast and _backward_SequenceLast on both
 * layouts (axis 0: (T, N, ...), axis 1: (N, T, ...)), with and without sequence_length (int32
 * and fractional float lengths, truncated as MXNet's static_cast<int>), several dtypes, their
 * gradients, shape inference and the error messages. Expected values are worked by hand from
 * MXNet's definitions (sequence_mask-inl.h, sequence_last-inl.h, sequence_reverse-inl.h). */
#include "cov_op_helpers.h"

static const double k_iota[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void test_mask(void **state) {
  (void)state;
  /* (T=3, N=2, 2), lengths [1, 3]: sequence 0's steps 1, 2 (elements 4, 5, 8, 9) become -1 */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT64, 3, SHP(3, 2, 2), k_iota), c_arr(MXW_INT32, 1, SHP(2), DV(1, 3))};
  mxw_ndarray *y = c_run1("SequenceMask", in, 2, KV("use_sequence_length", "True", "value", "-1"));
  c_expect(y, DV(0, 1, 2, 3, -1, -1, 6, 7, -1, -1, 10, 11), 12, 0);
  mxw_ndarray_free(y);
  /* the gradient masks the head with 0 */
  mxw_ndarray *g = c_grad("SequenceMask", in, 2, 0, 0, NULL, KV("use_sequence_length", "True", "value", "-1"));
  c_expect(g, DV(1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1), 12, 0);
  mxw_ndarray_free(g);
  c_free(2, in);

  /* axis 1: (N=2, T=3, 2) int32 data, float lengths [2.7, 0]: 2.7 counts as 2 */
  in[0] = c_arr(MXW_INT32, 3, SHP(2, 3, 2), k_iota);
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(2), DV(2.7, 0));
  y = c_run1("_npx_sequence_mask", in, 2, KV("use_sequence_length", "1", "value", "-1", "axis", "1"));
  assert_int_equal(mxw_ndarray_dtype(y), MXW_INT32);
  c_expect(y, DV(0, 1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1), 12, 0);
  mxw_ndarray_free(y);
  c_free(2, in);

  /* without lengths: identity, gradient the head itself */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(2, 3), k_iota);
  y = c_run1("SequenceMask", in, 1, KV("value", "5"));
  c_expect(y, k_iota, 6, 0);
  mxw_ndarray_free(y);
  g = c_grad("SequenceMask", in, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), NULL);
  c_expect(g, DV(1, 2, 3, 4, 5, 6), 6, 0);
  mxw_ndarray_free(g);
  mxw_ndarray_free(in[0]);

  /* empty data */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(0, 2), NULL);
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(2), DV(0, 0));
  y = c_run1("SequenceMask", in, 2, KV("use_sequence_length", "True"));
  assert_int_equal((int)mxw_ndarray_size(y), 0);
  mxw_ndarray_free(y);
  c_free(2, in);
}

static void test_mask_errors(void **state) {
  (void)state;
  c_bad_params("SequenceMask", KV("axis", "2"), "Current implementation expects axis to be 0 or 1, got 2");
  c_bad_params("SequenceReverse", KV("axis", "1"), "Current implementation expects axis to be 0, got 1");
  c_bad_params("SequenceLast", KV("axis", "-1"), "expects axis to be 0 or 1, got -1");
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 1, SHP(3), k_iota), NULL};
  c_fail("SequenceMask", in, 1, NULL, "The data array must be of rank 2 or greater, got shape (3,)");
  mxw_ndarray_free(in[0]);
  /* a length beyond T, a negative one, a NaN; SequenceLast needs at least 1 */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(3, 2), k_iota);
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(2), DV(4, 1));
  c_fail("SequenceMask", in, 2, KV("use_sequence_length", "True"),
         "sequence_length[0] = 4 is out of range [0, 3] (the sequence axis has 3 steps)");
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(2), DV(1, NAN));
  c_fail("SequenceReverse", in, 2, KV("use_sequence_length", "True"), "sequence_length[1] = nan is not a valid length");
  mxw_ndarray_free(in[1]);
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(2), DV(1, 0));
  c_fail("SequenceLast", in, 2, KV("use_sequence_length", "True"), "sequence_length[1] = 0 is out of range [1, 3]");
  mxw_ndarray_free(in[1]);
  /* sequence_length must have shape (N,) */
  in[1] = c_arr(MXW_FLOAT32, 1, SHP(3), DV(1, 1, 1));
  c_fail("SequenceMask", in, 2, KV("use_sequence_length", "True"), "sequence_length");
  c_free(2, in);
  /* SequenceLast of a time axis with no steps */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(0, 2), NULL);
  c_fail("SequenceLast", in, 1, NULL, "the sequence axis has no steps");
  mxw_ndarray_free(in[0]);
}

static void test_reverse(void **state) {
  (void)state;
  /* (T=3, N=2) x[t, b] = 10 t + b; lengths [2, 3]: column 0 reverses its first 2 steps */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 2, SHP(3, 2), DV(0, 1, 10, 11, 20, 21)),
                        c_arr(MXW_INT32, 1, SHP(2), DV(2, 3))};
  mxw_ndarray *y = c_run1("SequenceReverse", in, 2, KV("use_sequence_length", "True"));
  c_expect(y, DV(10, 21, 0, 11, 20, 1), 6, 0);
  mxw_ndarray_free(y);
  /* the gradient reverses the head the same way: head 1..6 */
  mxw_ndarray *g = c_grad("SequenceReverse", in, 2, 0, 0, DV(1, 2, 3, 4, 5, 6), KV("use_sequence_length", "True"));
  c_expect(g, DV(3, 6, 1, 4, 5, 2), 6, 0);
  mxw_ndarray_free(g);
  /* all T steps without lengths; float64 and int8 (element bytes moved) */
  mxw_ndarray *x64 = c_arr(MXW_INT8, 3, SHP(3, 2, 1), DV(0, 1, 10, 11, 20, 21));
  y = c_run1("_npx_sequence_reverse", &x64, 1, NULL);
  c_expect(y, DV(20, 21, 10, 11, 0, 1), 6, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(x64);
  g = c_grad("SequenceReverse", in, 1, 0, 0, DV(1, 2, 3, 4, 5, 6), NULL);
  c_expect(g, DV(5, 6, 3, 4, 1, 2), 6, 0);
  mxw_ndarray_free(g);
  /* out = data: the invoke path gives the kernel a separate buffer; the result is still reversed */
  int op = mxw_op_find("SequenceReverse"), nout = 1;
  mxw_params *p = NULL;
  assert_int_equal(mxw_params_create(op, 0, NULL, NULL, &p), 0);
  mxw_ndarray *out[1] = {in[0]};
  assert_int_equal(mxw_op_invoke(op, p, 1, in, &nout, out), 0);
  c_expect(in[0], DV(20, 21, 10, 11, 0, 1), 6, 0);
  mxw_params_free(p);
  c_free(2, in);
  /* empty */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(0, 2), NULL);
  y = c_run1("SequenceReverse", in, 1, NULL);
  assert_int_equal((int)mxw_ndarray_size(y), 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(in[0]);
}

static void test_last(void **state) {
  (void)state;
  /* axis 0 (T=3, N=2, 2), lengths [1, 3]: sequence 0's step 0 = [0, 1], sequence 1's step 2 = [10, 11] */
  mxw_ndarray *in[2] = {c_arr(MXW_FLOAT32, 3, SHP(3, 2, 2), k_iota), c_arr(MXW_FLOAT32, 1, SHP(2), DV(1, 3))};
  mxw_ndarray *y = c_run1("SequenceLast", in, 2, KV("use_sequence_length", "True"));
  t_expect_shape(y, 2, SHP(2, 2));
  c_expect(y, DV(0, 1, 10, 11), 4, 0);
  mxw_ndarray_free(y);
  y = c_run1("SequenceLast", in, 1, NULL); /* step T - 1 */
  c_expect(y, DV(8, 9, 10, 11), 4, 0);
  mxw_ndarray_free(y);
  /* gradient without lengths: the head lands at step T - 1 */
  mxw_ndarray *g = c_grad("SequenceLast", in, 1, 0, 0, DV(1, 2, 3, 4), NULL);
  c_expect(g, DV(0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4), 12, 0);
  mxw_ndarray_free(g);
  c_free(2, in);

  /* axis 1 (N=2, T=3) float64, lengths [2, 1]: x[0, 1] = 1, x[1, 0] = 3 */
  in[0] = c_arr(MXW_FLOAT64, 2, SHP(2, 3), k_iota);
  in[1] = c_arr(MXW_INT64, 1, SHP(2), DV(2, 1));
  y = c_run1("_npx_sequence_last", in, 2, KV("use_sequence_length", "True", "axis", "1"));
  t_expect_shape(y, 1, SHP(2));
  c_expect(y, DV(1, 3), 2, 0);
  mxw_ndarray_free(y);
  g = c_grad("SequenceLast", in, 2, 0, 0, DV(5, 7), KV("use_sequence_length", "True", "axis", "1"));
  c_expect(g, DV(0, 5, 0, 7, 0, 0), 6, 0);
  mxw_ndarray_free(g);
  /* _backward_SequenceLast directly: (ograd, data, lengths) */
  mxw_ndarray *b[3] = {c_arr(MXW_FLOAT64, 1, SHP(2), DV(-1, -2)), in[0], in[1]};
  y = c_run1("_backward_SequenceLast", b, 3, KV("use_sequence_length", "True", "axis", "1"));
  c_expect(y, DV(0, -1, 0, -2, 0, 0), 6, 0);
  mxw_ndarray_free(y);
  y = c_run1("_backward_SequenceLast", b, 2, KV("axis", "1"));
  c_expect(y, DV(0, 0, -1, 0, 0, -2), 6, 0);
  mxw_ndarray_free(y);
  mxw_ndarray_free(b[0]);
  c_free(2, in);
  /* N = 0: empty output, empty gradient */
  in[0] = c_arr(MXW_FLOAT32, 2, SHP(3, 0), NULL);
  y = c_run1("SequenceLast", in, 1, NULL);
  assert_int_equal((int)mxw_ndarray_size(y), 0);
  b[0] = y;
  b[1] = in[0];
  mxw_ndarray *dy = c_run1("_backward_SequenceLast", b, 2, NULL);
  assert_int_equal((int)mxw_ndarray_size(dy), 0);
  mxw_ndarray_free(dy);
  mxw_ndarray_free(y);
  mxw_ndarray_free(in[0]);
}

/* Shape inference: the length shape follows data; SequenceLast drops the time axis. */
static void test_inference(void **state) {
  (void)state;
  int32_t out[40];
  /* data (4, 5, 6) axis 1, lengths unknown -> output (4, 6) */
  assert_int_equal(c_infer("SequenceLast", KV("use_sequence_length", "True", "axis", "1"), 2,
                           (const int32_t[]){3, 4, 5, 6, -1}, out),
                   0);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 4);
  assert_int_equal(out[2], 6);
  /* data unknown: nothing to infer, no error */
  assert_int_equal(c_infer("SequenceLast", NULL, 1, (const int32_t[]){-1}, out), 0);
  assert_int_equal(out[0], -1);
  /* SequenceMask: the output is data's shape */
  assert_int_equal(c_infer("SequenceMask", KV("use_sequence_length", "True"), 2, (const int32_t[]){2, 7, 3, 1, 3}, out),
                   0);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 7);
  assert_int_equal(out[2], 3);
  /* a wrong length shape */
  assert_int_equal(
      c_infer("SequenceReverse", KV("use_sequence_length", "True"), 2, (const int32_t[]){2, 7, 3, 1, 7}, out), -1);
  assert_error_contains("sequence_length");
  /* _backward_SequenceLast: the gradient has data's shape */
  assert_int_equal(c_infer("_backward_SequenceLast", NULL, 2, (const int32_t[]){1, 3, 2, 5, 3}, out), 0);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 5);
  assert_int_equal(out[2], 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mask), cmocka_unit_test(test_mask_errors), cmocka_unit_test(test_reverse),
      cmocka_unit_test(test_last), cmocka_unit_test(test_inference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
