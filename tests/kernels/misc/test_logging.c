/* test_logging.c - Assert message formatting, Print pass-through, Abort. */
#include <criterion/criterion.h>
#include <string.h>

#include "mtest.h"

static char err[2048];

static dfx_code run_assert(int summarize, uint8_t cond, dfx_tensor **data, int n_data, const dfx_dtype *types) {
  dfx_node *n = kh_node_new("Assert");
  kh_attr_types(n, "T", types, n_data);
  if (summarize != 3) kh_attr_int(n, "summarize", summarize);
  dfx_tensor *in[8];
  in[0] = kh_bool(0, NULL, &cond);
  for (int i = 0; i < n_data; i++) in[i + 1] = data[i];
  dfx_code c = kh_run(n, in, n_data + 1, NULL, NULL, err, sizeof err);
  dfx__tensor_unref(in[0]);
  kh_node_free(n);
  return c;
}

Test(logging, assert_true_passes) {
  dfx_tensor *x = kh_scalar_i32(3);
  dfx_dtype t[1] = {DFX_I32};
  cr_expect_eq(run_assert(3, 1, &x, 1, t), DFX_OK, "%s", err);
  dfx__tensor_unref(x);
  dfx__tensor_cache_flush();
}

Test(logging, assert_false_formats_like_tf) {
  const char *msg = "Condition x == y did not hold element-wise:";
  dfx_tensor *s = mk_str(0, NULL, &msg);
  int64_t d5 = 5, d22[2] = {2, 2};
  int32_t iv[5] = {1, 2, 3, 4, 5};
  float fv[4] = {0.1f, 2.5f, -1e10f, 1.0f / 3};
  dfx_tensor *v = kh_i32(1, &d5, iv), *m = kh_f32(2, d22, fv);
  dfx_tensor *data[3] = {s, v, m};
  dfx_dtype t[3] = {DFX_STRING, DFX_I32, DFX_F32};
  cr_expect_eq(run_assert(3, 0, data, 3, t), DFX_EINVAL);
  cr_expect_str_eq(err, "assertion failed: [Condition x == y did not hold element-wise:] [1 2 3...] [[0.1 2.5][-1e+10...]...]");
  cr_expect_eq(run_assert(10, 0, data, 3, t), DFX_EINVAL);
  cr_expect_str_eq(err, "assertion failed: [Condition x == y did not hold element-wise:] [1 2 3 4 5] [[0.1 2.5][-1e+10 0.333333343]]");
  cr_expect_eq(run_assert(-1, 0, data + 1, 1, t + 1), DFX_EINVAL);
  cr_expect_str_eq(err, "assertion failed: [1 2 3 4 5]");
  /* TF's Assert takes at least one data tensor (T: list(type) >= 1). */
  const char *empty = "";
  dfx_tensor *e = mk_str(0, NULL, &empty);
  cr_expect_eq(run_assert(3, 0, &e, 1, t), DFX_EINVAL);
  cr_expect_str_eq(err, "assertion failed: []");
  dfx__tensor_unref(e);
  dfx__tensor_unref(s);
  dfx__tensor_unref(v);
  dfx__tensor_unref(m);
  dfx__tensor_cache_flush();
}

Test(logging, assert_condition_must_be_scalar) {
  dfx_node *n = kh_node_new("Assert");
  dfx_dtype t1[1] = {DFX_I32};
  kh_attr_types(n, "T", t1, 1);
  int64_t d2 = 2;
  uint8_t c2[2] = {1, 1};
  dfx_tensor *in[2] = {kh_bool(1, &d2, c2), kh_scalar_i32(7)};
  cr_expect_eq(kh_run(n, in, 2, NULL, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "In[0] should be a scalar: [2]"), "%s", err);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  kh_node_free(n);
  dfx__tensor_cache_flush();
}

Test(logging, print_forwards_input) {
  dfx_node *n = kh_node_new("Print");
  kh_attr_type(n, "T", DFX_F32);
  dfx_dtype u[1] = {DFX_I32};
  kh_attr_types(n, "U", u, 1);
  kh_attr_str(n, "message", "value: ");
  kh_attr_int(n, "first_n", 1);
  dfx_tensor *x = kh_scalar_f32(2.5f), *y = kh_scalar_i32(7), *in[2] = {x, y}, *out[1];
  int n_out;
  cr_assert_eq(kh_run(n, in, 2, out, &n_out, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_eq(out[0], x);
  dfx__tensor_unref(out[0]);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
  kh_node_free(n);
  dfx__tensor_cache_flush();
}

Test(logging, abort_fails_the_run) {
  dfx_node *n = kh_node_new("Abort");
  kh_attr_str(n, "error_msg", "boom");
  cr_expect_neq(kh_run(n, NULL, 0, NULL, NULL, err, sizeof err), DFX_OK);
  cr_expect(strstr(err, "boom"), "%s", err);
  kh_node_free(n);
}
