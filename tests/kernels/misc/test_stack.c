/* test_stack.c - Stack V2 and v1 ops on one shared step. */
#include <criterion/criterion.h>
#include <string.h>

#include "mtest.h"

static dfx_step step;
static char err[2048];

static void setup(void) { dfx__step_init(&step); }
static void teardown(void) {
  dfx__step_destroy(&step);
  dfx__tensor_cache_flush();
}
TestSuite(stack, .init = setup, .fini = teardown, .timeout = 20);

static dfx_tensor *make(bool v1, int max_size) {
  dfx_node *n = kh_node_new(v1 ? "Stack" : "StackV2");
  kh_attr_type(n, "elem_type", DFX_F32);
  kh_attr_str(n, "stack_name", "st");
  dfx_tensor *sz = kh_scalar_i32(max_size), *h;
  cr_assert_eq(kh_run_step(n, &sz, v1 ? 0 : 1, &h, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  dfx__tensor_unref(sz);
  kh_node_free(n);
  return h;
}

static dfx_code push(bool v1, dfx_tensor *h, dfx_tensor *v) {
  dfx_node *n = kh_node_new(v1 ? "StackPush" : "StackPushV2");
  kh_attr_type(n, "T", (dfx_dtype)v->dtype);
  dfx_tensor *in[2] = {h, v}, *o;
  dfx_code c = kh_run_step(n, in, 2, &o, NULL, &step, err, sizeof err);
  if (c == DFX_OK) {
    cr_expect_eq(o, v, "push forwards the element");
    dfx__tensor_unref(o);
  }
  kh_node_free(n);
  return c;
}

static dfx_code pop(bool v1, dfx_tensor *h, dfx_tensor **o) {
  dfx_node *n = kh_node_new(v1 ? "StackPop" : "StackPopV2");
  kh_attr_type(n, "elem_type", DFX_F32);
  dfx_code c = kh_run_step(n, &h, 1, o, NULL, &step, err, sizeof err);
  kh_node_free(n);
  return c;
}

static dfx_code close_stack(bool v1, dfx_tensor *h) {
  dfx_node *n = kh_node_new(v1 ? "StackClose" : "StackCloseV2");
  dfx_code c = kh_run_step(n, &h, 1, NULL, NULL, &step, err, sizeof err);
  kh_node_free(n);
  return c;
}

static void lifo(bool v1) {
  dfx_tensor *h = make(v1, v1 ? -1 : 2), *o;
  dfx_tensor *a = kh_scalar_f32(1), *b = kh_scalar_f32(2), *c = kh_scalar_f32(3), *i = kh_scalar_i32(1);
  cr_expect_eq(pop(v1, h, &o), DFX_EINVAL);
  cr_expect(strstr(err, "] is empty when calling Pop()."), "%s", err);
  cr_assert_eq(push(v1, h, a), DFX_OK, "%s", err);
  cr_assert_eq(push(v1, h, b), DFX_OK, "%s", err);
  if (!v1) {
    cr_expect_eq(push(v1, h, c), DFX_EINVAL);
    cr_expect(strstr(err, "overflowed its max_size (2)"), "%s", err);
  }
  cr_expect_eq(push(v1, h, i), DFX_EINVAL);
  cr_expect(strstr(err, "Must have type float32 but got int32"), "%s", err);
  cr_assert_eq(pop(v1, h, &o), DFX_OK, "%s", err);
  cr_expect_eq(((float *)o->data)[0], 2.0f);
  dfx__tensor_unref(o);
  cr_assert_eq(pop(v1, h, &o), DFX_OK, "%s", err);
  cr_expect_eq(((float *)o->data)[0], 1.0f);
  dfx__tensor_unref(o);
  cr_assert_eq(push(v1, h, c), DFX_OK, "%s", err);
  cr_assert_eq(close_stack(v1, h), DFX_OK, "%s", err);
  cr_expect_eq(push(v1, h, a), DFX_EINVAL);
  cr_expect(strstr(err, "has already been closed."), "%s", err);
  cr_expect_eq(pop(v1, h, &o), DFX_EINVAL);
  dfx__tensor_unref(a);
  dfx__tensor_unref(b);
  dfx__tensor_unref(c);
  dfx__tensor_unref(i);
  dfx__tensor_unref(h);
}

Test(stack, v2_lifo_limits_and_close) { lifo(false); }
Test(stack, v1_string_handles) { lifo(true); }

Test(stack, negative_max_size_is_unlimited) {
  dfx_tensor *h = make(false, -1), *a = kh_scalar_f32(1);
  for (int k = 0; k < 100; k++) cr_assert_eq(push(false, h, a), DFX_OK, "%s", err);
  dfx__tensor_unref(a);
  dfx__tensor_unref(h);
}
