/* custom_function.c -- autograd.Function (python/mxnet/autograd.py's Function): a differentiable
 * function whose forward and backward are JavaScript.
 *
 *   _CustomFunction(args...; id, num_inputs, num_outputs)   the recorded call (its forward already
 *                                                            ran in JS, so the op itself never runs)
 *   _backward_CustomFunction(ograds..., inputs...; ...)      calls the Function's backward in JS
 *
 * The JS side (js/autograd.mjs) keeps each Function instance under its id, counting the param
 * structs that refer to it (param_retain / param_release), and drops it with the last one. */
#include <stdio.h>

#include "../core/ndarray.h"

#ifdef __EMSCRIPTEN__
/* Imports from wasm/library_mxw.js (a JS library rather than EM_JS, whose metadata the relaxed
 * tiers' link cannot read). Runs Function `id`'s backward on the output gradients (handles the
 * JS side takes over) and copies its input gradients into `outs` (handles the C side keeps);
 * 0 or -1 with `err` set. */
extern int mxw_js_custom_backward(int id, int nog, mxw_ndarray **ograds, int nig, mxw_ndarray **outs, char *err,
                                  int errlen);
extern void mxw_js_custom_refs(int id, int delta);
#else
static int mxw_js_custom_backward(int id, int nog, mxw_ndarray **ograds, int nig, mxw_ndarray **outs, char *err,
                                  int errlen) {
  (void)id;
  (void)nig;
  (void)outs;
  for (int h = 0; h < nog; h++) mxw_ndarray_free(ograds[h]); /* the callee takes over these handles */
  snprintf(err, (size_t)errlen, "autograd.Function needs the JavaScript runtime");
  return -1;
}
static void mxw_js_custom_refs(int id, int delta) {
  (void)id;
  (void)delta;
}
#endif

typedef struct {
  int64_t id, num_inputs, num_outputs;
} CustomParam;

static const mxw_attr_spec k_custom_attrs[] = {
    MXW_A_INT("id", CustomParam, id, NULL, "the Function instance (JS registry id)"),
    MXW_A_INT("num_inputs", CustomParam, num_inputs, NULL, "number of inputs"),
    MXW_A_INT("num_outputs", CustomParam, num_outputs, NULL, "number of outputs"),
};
static const char *const k_args[] = {"args", NULL};

static int validate_custom(void *param) {
  const CustomParam *p = (const CustomParam *)param;
  MXW_CHECK(p->num_inputs >= 0 && p->num_inputs <= 64 && p->num_outputs >= 1 && p->num_outputs <= 64,
            "num_inputs must be in 0..64 and num_outputs in 1..64");
  return 0;
}
static int nin_fwd(const void *param) { return (int)((const CustomParam *)param)->num_inputs; }
static int nout_fwd(const void *param) { return (int)((const CustomParam *)param)->num_outputs; }
static int nin_bwd(const void *param) { return nin_fwd(param) + nout_fwd(param); }
static void retain(void *param) { mxw_js_custom_refs((int)((CustomParam *)param)->id, 1); }
static void release(void *param) { mxw_js_custom_refs((int)((CustomParam *)param)->id, -1); }

static int infer_fwd(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  (void)param;
  (void)nin;
  (void)in;
  (void)nout;
  (void)out;
  return mxw_fail("_CustomFunction runs only through autograd.Function");
}
static int fwd_unbound(const mxw_op_call *c) {
  (void)c;
  return mxw_fail("_CustomFunction runs only through autograd.Function");
}

static int grad_custom(mxw_grad_ctx *g) {
  int nin = mxw_grad_num_inputs(g), nout = mxw_grad_num_outputs(g);
  mxw_gid in[128], out[64];
  for (int h = 0; h < nout; h++) in[h] = mxw_grad_ograd(g, h);
  for (int k = 0; k < nin; k++) in[nout + k] = mxw_grad_in(g, k);
  MXW_TRY(mxw_grad_op_fwd(g, "_backward_CustomFunction", in, nout + nin, out, nin));
  for (int k = 0; k < nin; k++)
    if (mxw_dtype_is_float(mxw_grad_in_dtype(g, k))) MXW_TRY(mxw_grad_set(g, k, out[k]));
  return 0;
}

/* output k has input k's shape and dtype */
static int infer_bwd(const void *param, int nin, mxw_shape *in, int nout, mxw_shape *out) {
  int nog = (int)((const CustomParam *)param)->num_outputs;
  for (int k = 0; k < nout; k++) MXW_TRY(mxw_shape_assign(&out[k], &in[nog + k], "input gradient"));
  (void)nin;
  return 0;
}
static int infer_bwd_type(const void *param, int nin, int *in, int nout, int *out) {
  int nog = (int)((const CustomParam *)param)->num_outputs;
  for (int k = 0; k < nout; k++) out[k] = in[nog + k];
  (void)nin;
  return 0;
}

static int fwd_backward(const mxw_op_call *c) {
  const CustomParam *p = (const CustomParam *)c->param;
  int nog = (int)p->num_outputs, nig = c->num_outputs, rc = -1;
  mxw_ndarray *og[64] = {0}, *outs[64] = {0};
  for (int h = 0; h < nog; h++) {
    if (!(og[h] = mxw_ndarray_alloc(&c->inputs[h].shape, c->inputs[h].dtype))) goto done;
    memcpy(og[h]->t.data, c->inputs[h].data,
           (size_t)mxw_tensor_size(&c->inputs[h]) * (size_t)mxw_dtype_size(c->inputs[h].dtype));
  }
  for (int k = 0; k < nig; k++)
    if (!(outs[k] = mxw_ndarray_zeros(&c->outputs[k].shape, c->outputs[k].dtype))) goto done;
  char err[512] = "";
  /* the JS side takes over the output-gradient handles */
  int st = mxw_js_custom_backward((int)p->id, nog, og, nig, outs, err, (int)sizeof err);
  for (int h = 0; h < nog; h++) og[h] = NULL;
  if (st != 0) {
    mxw_fail("autograd.Function backward: %s", err);
    goto done;
  }
  for (int k = 0; k < nig; k++)
    memcpy(c->outputs[k].data, outs[k]->t.data,
           (size_t)mxw_tensor_size(&c->outputs[k]) * (size_t)mxw_dtype_size(c->outputs[k].dtype));
  rc = 0;
done:
  for (int h = 0; h < nog; h++) mxw_ndarray_free(og[h]);
  for (int k = 0; k < nig; k++) mxw_ndarray_free(outs[k]);
  return rc;
}

static const mxw_op_def op_custom = {
    .name = "_CustomFunction",
    .doc = MXW_DOC("an autograd.Function call on the tape (internal)"),
    .attrs = k_custom_attrs,
    .num_attrs = 3,
    .param_size = sizeof(CustomParam),
    .validate = validate_custom,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_args,
    .num_inputs_fn = nin_fwd,
    .num_outputs = 1,
    .num_outputs_fn = nout_fwd,
    .infer_shape = infer_fwd,
    .forward = fwd_unbound,
    .gradient = grad_custom,
    .param_retain = retain,
    .param_release = release,
};

static const mxw_op_def op_backward_custom = {
    .name = "_backward_CustomFunction",
    .doc = MXW_DOC("runs an autograd.Function's backward (internal)"),
    .attrs = k_custom_attrs,
    .num_attrs = 3,
    .param_size = sizeof(CustomParam),
    .validate = validate_custom,
    .num_inputs = MXW_VARIADIC,
    .input_names = k_args,
    .num_inputs_fn = nin_bwd,
    .num_outputs = 1,
    .num_outputs_fn = nin_fwd,
    .infer_shape = infer_bwd,
    .infer_type = infer_bwd_type,
    .forward = fwd_backward,
    .no_grad = 1,
    .param_retain = retain,
    .param_release = release,
};

MXW_FAMILY(custom_function, &op_custom, &op_backward_custom);
