/* test_tensor_array.c - TensorArray V3/V2 ops run in sequence on one step. */
#include <criterion/criterion.h>
#include <string.h>
#include <uv.h>

#include "mtest.h"

static dfx_step step;
static char err[2048];

static void setup(void) { dfx__step_init(&step); }
static void teardown(void) {
  dfx__step_destroy(&step);
  dfx__tensor_cache_flush();
}
TestSuite(tensor_array, .init = setup, .fini = teardown, .timeout = 20);

typedef struct ta_opts {
  dfx_dtype dtype;
  int size;
  int dynamic, keep, identical;
  int es_rank; /* 0 = unknown */
  int64_t es[4];
  int es_scalar;
} ta_opts;

/* Creates an array; returns the handle, *flow receives the flow tensor. */
static dfx_tensor *ta_make(ta_opts o, dfx_tensor **flow) {
  dfx_node *n = kh_node_new("TensorArrayV3");
  kh_attr_type(n, "dtype", o.dtype ? o.dtype : DFX_F32);
  kh_attr_bool(n, "dynamic_size", o.dynamic);
  kh_attr_bool(n, "clear_after_read", !o.keep);
  kh_attr_bool(n, "identical_element_shapes", o.identical);
  kh_attr_str(n, "tensor_array_name", "ta");
  if (o.es_rank || o.es_scalar) kh_attr_shape(n, "element_shape", o.es_rank, o.es);
  dfx_tensor *sz = kh_scalar_i32(o.size), *out[2];
  cr_assert_eq(kh_run_step(n, &sz, 1, out, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  dfx__tensor_unref(sz);
  kh_node_free(n);
  cr_assert_eq(out[0]->dtype, DFX_RESOURCE);
  cr_assert_eq(out[1]->dtype, DFX_F32);
  cr_assert_eq(((float *)out[1]->data)[0], 0.0f);
  if (flow)
    *flow = out[1];
  else
    dfx__tensor_unref(out[1]);
  return out[0];
}

static dfx_code ta_write(dfx_tensor *h, int idx, dfx_tensor *v) {
  dfx_node *n = kh_node_new("TensorArrayWriteV3");
  kh_attr_type(n, "T", (dfx_dtype)v->dtype);
  dfx_tensor *flow = kh_scalar_f32(0), *i = kh_scalar_i32(idx), *in[4] = {h, i, v, flow}, *out[1];
  dfx_code c = kh_run_step(n, in, 4, out, NULL, &step, err, sizeof err);
  if (c == DFX_OK) {
    cr_expect_eq(out[0], flow, "flow is forwarded");
    dfx__tensor_unref(out[0]);
  }
  dfx__tensor_unref(flow);
  dfx__tensor_unref(i);
  kh_node_free(n);
  return c;
}

static dfx_code ta_read(dfx_tensor *h, int idx, dfx_dtype dt, dfx_tensor **val) {
  dfx_node *n = kh_node_new("TensorArrayReadV3");
  kh_attr_type(n, "dtype", dt);
  dfx_tensor *flow = kh_scalar_f32(0), *i = kh_scalar_i32(idx), *in[3] = {h, i, flow};
  dfx_code c = kh_run_step(n, in, 3, val, NULL, &step, err, sizeof err);
  dfx__tensor_unref(flow);
  dfx__tensor_unref(i);
  kh_node_free(n);
  return c;
}

static dfx_code ta_simple(const char *op, dfx_tensor *h, dfx_tensor **out) {
  dfx_node *n = kh_node_new(op);
  dfx_tensor *flow = kh_scalar_f32(0), *in[2] = {h, flow};
  dfx_code c = kh_run_step(n, in, strcmp(op, "TensorArrayCloseV3") ? 2 : 1, out, NULL, &step, err, sizeof err);
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return c;
}

static int ta_size(dfx_tensor *h) {
  dfx_tensor *o;
  cr_assert_eq(ta_simple("TensorArraySizeV3", h, &o), DFX_OK, "%s", err);
  int v = ((int32_t *)o->data)[0];
  dfx__tensor_unref(o);
  return v;
}

static dfx_code ta_gather(dfx_tensor *h, dfx_tensor *idx, dfx_dtype dt, int es_rank, const int64_t *es,
                          dfx_tensor **val) {
  dfx_node *n = kh_node_new("TensorArrayGatherV3");
  kh_attr_type(n, "dtype", dt);
  if (es_rank >= 0) kh_attr_shape(n, "element_shape", es_rank, es);
  dfx_tensor *flow = kh_scalar_f32(0), *in[3] = {h, idx, flow};
  dfx_code c = kh_run_step(n, in, 3, val, NULL, &step, err, sizeof err);
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return c;
}

static dfx_code ta_scatter(dfx_tensor *h, dfx_tensor *idx, dfx_tensor *v) {
  dfx_node *n = kh_node_new("TensorArrayScatterV3");
  kh_attr_type(n, "T", (dfx_dtype)v->dtype);
  dfx_tensor *flow = kh_scalar_f32(0), *in[4] = {h, idx, v, flow}, *out[1];
  dfx_code c = kh_run_step(n, in, 4, out, NULL, &step, err, sizeof err);
  if (c == DFX_OK) dfx__tensor_unref(out[0]);
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return c;
}

static dfx_tensor *vec2(float a, float b) {
  int64_t d = 2;
  float v[2] = {a, b};
  return kh_f32(1, &d, v);
}

Test(tensor_array, write_read_size_and_clear_after_read) {
  dfx_tensor *h = ta_make((ta_opts){.size = 3}, NULL);
  for (int i = 0; i < 3; i++) {
    dfx_tensor *v = vec2((float)i, (float)i + 0.5f);
    cr_assert_eq(ta_write(h, i, v), DFX_OK, "%s", err);
    dfx__tensor_unref(v);
  }
  cr_expect_eq(ta_size(h), 3);
  dfx_tensor *r;
  cr_assert_eq(ta_read(h, 2, DFX_F32, &r), DFX_OK, "%s", err);
  cr_expect_eq(r->ndims, 1);
  cr_expect_eq(r->dims[0], 2);
  cr_expect_eq(((float *)r->data)[0], 2.0f);
  cr_expect_eq(((float *)r->data)[1], 2.5f);
  dfx__tensor_unref(r);
  cr_expect_eq(ta_read(h, 2, DFX_F32, &r), DFX_EINVAL);
  cr_expect(strstr(err, "Could not read index 2 twice because it was cleared after a previous read"), "%s", err);
  /* Writing a slot that was read is an error too. */
  dfx_tensor *v = vec2(1, 1);
  cr_expect_eq(ta_write(h, 2, v), DFX_EINVAL);
  cr_expect(strstr(err, "because it has already been read"), "%s", err);
  cr_expect_eq(ta_write(h, 1, v), DFX_EINVAL);
  cr_expect(strstr(err, "because it has already been written to"), "%s", err);
  cr_expect_eq(ta_write(h, 3, v), DFX_EINVAL);
  cr_expect(strstr(err, "Tried to write to index 3 but array is not resizeable and size is: 3"), "%s", err);
  cr_expect_eq(ta_write(h, -1, v), DFX_EINVAL);
  cr_expect_eq(ta_read(h, 3, DFX_F32, &r), DFX_EINVAL);
  cr_expect(strstr(err, "Tried to read from index 3 but array size is: 3"), "%s", err);
  cr_expect_eq(ta_read(h, 0, DFX_I32, &r), DFX_EINVAL);
  cr_expect(strstr(err, "TensorArray dtype is float32 but Op requested dtype int32"), "%s", err);
  dfx_tensor *iv = kh_scalar_i32(3);
  cr_expect_eq(ta_write(h, 0, iv), DFX_EINVAL);
  cr_expect(strstr(err, "trying to write dtype int32"), "%s", err);
  dfx__tensor_unref(iv);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

Test(tensor_array, keep_after_read_and_unwritten_reads) {
  dfx_tensor *h = ta_make((ta_opts){.size = 2, .keep = 1}, NULL);
  dfx_tensor *v = vec2(3, 4), *r;
  cr_assert_eq(ta_write(h, 0, v), DFX_OK, "%s", err);
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(ta_read(h, 0, DFX_F32, &r), DFX_OK, "%s", err);
    cr_expect_eq(((float *)r->data)[1], 4.0f);
    dfx__tensor_unref(r);
  }
  cr_expect_eq(ta_read(h, 1, DFX_F32, &r), DFX_EINVAL);
  cr_expect(strstr(err, "Could not read from TensorArray index 1"), "%s", err);
  dfx__tensor_unref(h);
  /* With a fully defined element shape an unwritten slot reads as zeros. */
  h = ta_make((ta_opts){.size = 2, .es_rank = 2, .es = {2, 3}}, NULL);
  cr_assert_eq(ta_read(h, 1, DFX_F32, &r), DFX_OK, "%s", err);
  cr_expect_eq(r->ndims, 2);
  cr_expect_eq(r->count, 6);
  for (int i = 0; i < 6; i++) cr_expect_eq(((float *)r->data)[i], 0.0f);
  dfx__tensor_unref(r);
  /* Element shape is enforced on write. */
  cr_expect_eq(ta_write(h, 0, v), DFX_EINVAL);
  cr_expect(strstr(err, "because the value shape is [2] which is incompatible with the TensorArray's inferred "
                        "element shape: [2,3]"),
            "%s", err);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

Test(tensor_array, partial_element_shape_and_identical_shapes) {
  dfx_tensor *h = ta_make((ta_opts){.size = 3, .es_rank = 1, .es = {-1}}, NULL);
  dfx_tensor *v = vec2(1, 2), *s = kh_scalar_f32(1);
  cr_expect_eq(ta_write(h, 0, v), DFX_OK, "%s", err);
  cr_expect_eq(ta_write(h, 1, s), DFX_EINVAL);
  cr_expect(strstr(err, "inferred element shape: [?]"), "%s", err);
  dfx__tensor_unref(h);
  h = ta_make((ta_opts){.size = 3, .identical = 1}, NULL);
  cr_expect_eq(ta_write(h, 0, v), DFX_OK, "%s", err);
  cr_expect_eq(ta_write(h, 1, s), DFX_EINVAL, "identical_element_shapes pins the first shape");
  cr_expect(strstr(err, "element shape: [2]"), "%s", err);
  dfx__tensor_unref(v);
  dfx__tensor_unref(s);
  dfx__tensor_unref(h);
}

Test(tensor_array, dynamic_size_grows) {
  dfx_tensor *h = ta_make((ta_opts){.size = 0, .dynamic = 1}, NULL);
  cr_expect_eq(ta_size(h), 0);
  dfx_tensor *v = vec2(7, 8), *r;
  cr_assert_eq(ta_write(h, 5, v), DFX_OK, "%s", err);
  cr_expect_eq(ta_size(h), 6);
  for (int i = 0; i < 5; i++) cr_assert_eq(ta_write(h, i, v), DFX_OK, "%s", err);
  cr_assert_eq(ta_read(h, 5, DFX_F32, &r), DFX_OK, "%s", err);
  cr_expect_eq(((float *)r->data)[0], 7.0f);
  dfx__tensor_unref(r);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

Test(tensor_array, scatter_gather_round_trip) {
  dfx_tensor *h = ta_make((ta_opts){.size = 3}, NULL);
  int64_t d32[2] = {3, 2}, d3 = 3;
  float x[6] = {0, 1, 10, 11, 20, 21};
  int32_t perm[3] = {2, 0, 1}, ident[3] = {0, 1, 2};
  dfx_tensor *v = kh_f32(2, d32, x), *pi = kh_i32(1, &d3, perm), *ii = kh_i32(1, &d3, ident), *g;
  cr_assert_eq(ta_scatter(h, pi, v), DFX_OK, "%s", err);
  cr_assert_eq(ta_gather(h, ii, DFX_F32, -1, NULL, &g), DFX_OK, "%s", err);
  cr_expect_eq(g->ndims, 2);
  cr_expect_eq(g->dims[0], 3);
  cr_expect_eq(g->dims[1], 2);
  float want[6] = {10, 11, 20, 21, 0, 1};
  for (int i = 0; i < 6; i++) cr_expect_eq(((float *)g->data)[i], want[i], "i=%d", i);
  dfx__tensor_unref(g);
  /* Gather read them (clear_after_read): a second gather fails. */
  cr_expect_eq(ta_gather(h, ii, DFX_F32, -1, NULL, &g), DFX_EINVAL);
  /* len(indices) must match dim 0. */
  int64_t d2 = 2;
  dfx_tensor *i2 = kh_i32(1, &d2, ident);
  cr_expect_eq(ta_scatter(h, i2, v), DFX_EINVAL);
  cr_expect(strstr(err, "Expected len(indices) == values.shape[0], but saw: 2 vs. 3"), "%s", err);
  dfx__tensor_unref(i2);
  dfx__tensor_unref(v);
  dfx__tensor_unref(pi);
  dfx__tensor_unref(ii);
  dfx__tensor_unref(h);
}

Test(tensor_array, gather_errors_and_empty) {
  dfx_tensor *h = ta_make((ta_opts){.size = 2}, NULL);
  dfx_tensor *a = vec2(1, 2), *b = kh_scalar_f32(3), *g;
  cr_assert_eq(ta_write(h, 0, a), DFX_OK, "%s", err);
  cr_assert_eq(ta_write(h, 1, b), DFX_OK, "%s", err);
  int64_t d2 = 2, d0 = 0;
  int32_t idx[2] = {0, 1};
  dfx_tensor *ii = kh_i32(1, &d2, idx), *none = kh_i32(1, &d0, idx);
  cr_expect_eq(ta_gather(h, ii, DFX_F32, -1, NULL, &g), DFX_EINVAL);
  cr_expect(strstr(err, "TensorArray has inconsistent shapes.  Index 0 has shape: [2] but index 1 has shape: []"),
            "%s", err);
  int64_t es[2] = {4, 5};
  cr_assert_eq(ta_gather(h, none, DFX_F32, 2, es, &g), DFX_OK, "%s", err);
  cr_expect_eq(g->ndims, 3);
  cr_expect_eq(g->dims[0], 0);
  cr_expect_eq(g->dims[1], 4);
  cr_expect_eq(g->dims[2], 5);
  dfx__tensor_unref(g);
  cr_expect_eq(ta_gather(h, none, DFX_F32, -1, NULL, &g), DFX_EUNIMPL);
  cr_expect(strstr(err, "TensorArray has size zero, but element shape <unknown> is not fully defined"), "%s", err);
  dfx__tensor_unref(ii);
  dfx__tensor_unref(none);
  dfx__tensor_unref(a);
  dfx__tensor_unref(b);
  dfx__tensor_unref(h);
}

static dfx_code ta_split(dfx_tensor *h, dfx_tensor *v, dfx_tensor *lens) {
  dfx_node *n = kh_node_new("TensorArraySplitV3");
  kh_attr_type(n, "T", (dfx_dtype)v->dtype);
  dfx_tensor *flow = kh_scalar_f32(0), *in[4] = {h, v, lens, flow}, *out[1];
  dfx_code c = kh_run_step(n, in, 4, out, NULL, &step, err, sizeof err);
  if (c == DFX_OK) dfx__tensor_unref(out[0]);
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return c;
}

static dfx_code ta_concat(dfx_tensor *h, int es_rank, const int64_t *es, dfx_tensor **out) {
  dfx_node *n = kh_node_new("TensorArrayConcatV3");
  kh_attr_type(n, "dtype", DFX_F32);
  if (es_rank >= 0) kh_attr_shape(n, "element_shape_except0", es_rank, es);
  dfx_tensor *flow = kh_scalar_f32(0), *in[2] = {h, flow};
  dfx_code c = kh_run_step(n, in, 2, out, NULL, &step, err, sizeof err);
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return c;
}

Test(tensor_array, split_concat_round_trip) {
  dfx_tensor *h = ta_make((ta_opts){.size = 3}, NULL);
  int64_t d[2] = {5, 2}, d3 = 3;
  float x[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  int64_t l[3] = {2, 0, 3};
  dfx_tensor *v = kh_f32(2, d, x), *lens = kh_i64(1, &d3, l), *out[2];
  cr_assert_eq(ta_split(h, v, lens), DFX_OK, "%s", err);
  cr_assert_eq(ta_concat(h, -1, NULL, out), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->ndims, 2);
  cr_expect_eq(out[0]->dims[0], 5);
  cr_expect_eq(out[0]->dims[1], 2);
  for (int i = 0; i < 10; i++) cr_expect_eq(((float *)out[0]->data)[i], x[i]);
  cr_expect_eq(out[1]->dtype, DFX_I64);
  for (int i = 0; i < 3; i++) cr_expect_eq(((int64_t *)out[1]->data)[i], l[i]);
  dfx__tensor_unref(out[0]);
  dfx__tensor_unref(out[1]);
  dfx__tensor_unref(h);
  /* Sum of lengths must match, and the count must match a fixed size. */
  h = ta_make((ta_opts){.size = 2}, NULL);
  cr_expect_eq(ta_split(h, v, lens), DFX_EINVAL);
  cr_expect(strstr(err, "TensorArray's size is not equal to the size of lengths (2 vs. 3)"), "%s", err);
  int64_t bad[3] = {1, 1, 1};
  dfx_tensor *bl = kh_i64(1, &d3, bad);
  cr_expect_eq(ta_split(h, v, bl), DFX_EINVAL);
  cr_expect(strstr(err, "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is 3"), "%s", err);
  dfx__tensor_unref(bl);
  dfx__tensor_unref(h);
  /* Empty array: concat uses element_shape_except0. */
  h = ta_make((ta_opts){.size = 0}, NULL);
  int64_t es[1] = {7};
  cr_assert_eq(ta_concat(h, 1, es, out), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->dims[0], 0);
  cr_expect_eq(out[0]->dims[1], 7);
  cr_expect_eq(out[1]->count, 0);
  dfx__tensor_unref(out[0]);
  dfx__tensor_unref(out[1]);
  cr_expect_eq(ta_concat(h, -1, NULL, out), DFX_EUNIMPL);
  dfx__tensor_unref(h);
  dfx__tensor_unref(v);
  dfx__tensor_unref(lens);
}

Test(tensor_array, concat_rejects_scalars) {
  dfx_tensor *h = ta_make((ta_opts){.size = 1}, NULL), *s = kh_scalar_f32(1), *out[2];
  cr_assert_eq(ta_write(h, 0, s), DFX_OK, "%s", err);
  cr_expect_eq(ta_concat(h, -1, NULL, out), DFX_EINVAL);
  cr_expect(strstr(err, "Concat saw a scalar shape at index 0"), "%s", err);
  dfx__tensor_unref(s);
  dfx__tensor_unref(h);
}

Test(tensor_array, close_then_use_fails) {
  dfx_tensor *h = ta_make((ta_opts){.size = 1}, NULL), *v = vec2(1, 2), *r;
  cr_assert_eq(ta_write(h, 0, v), DFX_OK, "%s", err);
  cr_assert_eq(ta_simple("TensorArrayCloseV3", h, NULL), DFX_OK, "%s", err);
  cr_expect_eq(ta_read(h, 0, DFX_F32, &r), DFX_EINVAL);
  cr_expect(strstr(err, "has already been closed."), "%s", err);
  cr_expect_eq(ta_simple("TensorArraySizeV3", h, &r), DFX_EINVAL);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

static dfx_tensor *ta_grad(dfx_tensor *h, const char *source) {
  dfx_node *n = kh_node_new("TensorArrayGradV3");
  kh_attr_str(n, "source", source);
  dfx_tensor *flow = kh_scalar_f32(0), *in[2] = {h, flow}, *out[2];
  cr_assert_eq(kh_run_step(n, in, 2, out, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_eq(out[1], flow);
  dfx__tensor_unref(out[1]);
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return out[0];
}

Test(tensor_array, grad_array_aggregates_and_reads_zeros) {
  dfx_tensor *h = ta_make((ta_opts){.size = 3, .dynamic = 1}, NULL), *v = vec2(1, 2), *r;
  cr_assert_eq(ta_write(h, 0, v), DFX_OK, "%s", err);
  cr_assert_eq(ta_write(h, 1, v), DFX_OK, "%s", err);
  dfx_tensor *g = ta_grad(h, "gradients"), *g2 = ta_grad(h, "gradients"), *g3 = ta_grad(h, "other");
  cr_expect_eq(((void **)g->data)[0], ((void **)g2->data)[0], "same source finds the same array");
  cr_expect_neq(((void **)g->data)[0], ((void **)g3->data)[0]);
  cr_expect_eq(ta_size(g), 3);
  /* The forward array lost dynamic growth. */
  cr_expect_eq(ta_write(h, 5, v), DFX_EINVAL);
  /* Slot 1 has only the forward shape: it reads as zeros of that shape. */
  cr_assert_eq(ta_read(g, 1, DFX_F32, &r), DFX_OK, "%s", err);
  cr_expect_eq(r->ndims, 1);
  cr_expect_eq(r->dims[0], 2);
  cr_expect_eq(((float *)r->data)[1], 0.0f);
  dfx__tensor_unref(r);
  /* Writes to slot 0 aggregate. */
  dfx_tensor *w = vec2(10, 20);
  cr_assert_eq(ta_write(g, 0, v), DFX_OK, "%s", err);
  cr_assert_eq(ta_write(g, 0, w), DFX_OK, "%s", err);
  cr_assert_eq(ta_read(g, 0, DFX_F32, &r), DFX_OK, "%s", err);
  cr_expect_eq(((float *)r->data)[0], 11.0f);
  cr_expect_eq(((float *)r->data)[1], 22.0f);
  dfx__tensor_unref(r);
  dfx_tensor *s = kh_scalar_f32(1);
  cr_expect_eq(ta_write(g, 2, v), DFX_OK, "%s", err);
  cr_expect_eq(ta_write(g, 2, s), DFX_EINVAL);
  cr_expect(strstr(err, "Could not aggregate to TensorArray index 2 because the existing shape is [2] but the new "
                        "input shape is []"),
            "%s", err);
  dfx__tensor_unref(s);
  dfx__tensor_unref(w);
  dfx__tensor_unref(v);
  dfx__tensor_unref(g);
  dfx__tensor_unref(g2);
  dfx__tensor_unref(g3);
  dfx__tensor_unref(h);
}

Test(tensor_array, strings_are_deep_copied) {
  dfx_tensor *h = ta_make((ta_opts){.dtype = DFX_STRING, .size = 2}, NULL), *g;
  int64_t d2 = 2;
  const char *sv[2] = {"hello", "world!"};
  int32_t idx[2] = {1, 0};
  dfx_tensor *v = mk_str(1, &d2, sv), *ii = kh_i32(1, &d2, idx);
  cr_assert_eq(ta_scatter(h, ii, v), DFX_OK, "%s", err);
  dfx__tensor_unref(v);
  cr_assert_eq(ta_gather(h, ii, DFX_STRING, -1, NULL, &g), DFX_OK, "%s", err);
  dfx_str *s = g->data;
  cr_expect_eq(s[0].len, 5);
  cr_expect(memcmp(s[0].ptr, "hello", 5) == 0);
  cr_expect(memcmp(s[1].ptr, "world!", 6) == 0);
  dfx__tensor_unref(g);
  dfx__tensor_unref(ii);
  dfx__tensor_unref(h);
}

Test(tensor_array, v2_string_handles) {
  dfx_node *n = kh_node_new("TensorArrayV2");
  kh_attr_type(n, "dtype", DFX_I32);
  dfx_tensor *sz = kh_scalar_i32(2), *h, *r;
  cr_assert_eq(kh_run_step(n, &sz, 1, &h, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_eq(h->dtype, DFX_STRING);
  cr_expect_eq(h->count, 2);
  kh_node_free(n);
  dfx__tensor_unref(sz);
  n = kh_node_new("TensorArrayWriteV2");
  kh_attr_type(n, "T", DFX_I32);
  dfx_tensor *flow = kh_scalar_f32(0), *i = kh_scalar_i32(1), *v = kh_scalar_i32(42), *in[4] = {h, i, v, flow}, *o;
  cr_assert_eq(kh_run_step(n, in, 4, &o, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  dfx__tensor_unref(o);
  kh_node_free(n);
  n = kh_node_new("TensorArrayReadV2");
  kh_attr_type(n, "dtype", DFX_I32);
  dfx_tensor *rin[3] = {h, i, flow};
  cr_assert_eq(kh_run_step(n, rin, 3, &r, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_eq(((int32_t *)r->data)[0], 42);
  dfx__tensor_unref(r);
  kh_node_free(n);
  dfx__tensor_unref(flow);
  dfx__tensor_unref(i);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

Test(tensor_array, foreign_handles_are_rejected) {
  dfx_tensor *h = ta_make((ta_opts){.size = 1}, NULL), *r;
  dfx_step other;
  dfx__step_init(&other);
  dfx_node *n = kh_node_new("TensorArraySizeV3");
  dfx_tensor *flow = kh_scalar_f32(0), *in[2] = {h, flow};
  cr_expect_eq(kh_run_step(n, in, 2, &r, NULL, &other, err, sizeof err), DFX_ENOTFOUND);
  dfx_tensor *bogus = dfx__tensor_alloc(DFX_RESOURCE, 0, NULL, NULL);
  ((void **)bogus->data)[0] = (void *)&other;
  in[0] = bogus;
  cr_expect_eq(kh_run_step(n, in, 2, &r, NULL, &step, err, sizeof err), DFX_ENOTFOUND);
  in[0] = flow;
  cr_expect_eq(kh_run_step(n, in, 2, &r, NULL, &step, err, sizeof err), DFX_EINVAL);
  kh_node_free(n);
  dfx__step_destroy(&other);
  dfx__tensor_unref(bogus);
  dfx__tensor_unref(flow);
  dfx__tensor_unref(h);
}

Test(tensor_array, size_must_be_nonnegative_scalar) {
  dfx_node *n = kh_node_new("TensorArrayV3");
  kh_attr_type(n, "dtype", DFX_F32);
  dfx_tensor *sz = kh_scalar_i32(-1), *out[2];
  cr_expect_eq(kh_run_step(n, &sz, 1, out, NULL, &step, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "Size should be >= 0."), "%s", err);
  dfx__tensor_unref(sz);
  int64_t d1 = 1;
  int32_t one = 1;
  sz = kh_i32(1, &d1, &one);
  cr_expect_eq(kh_run_step(n, &sz, 1, out, NULL, &step, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "TensorArray size must be scalar, but had shape: [1]"), "%s", err);
  dfx__tensor_unref(sz);
  kh_node_free(n);
}

/* Parallel loop iterations write different slots concurrently. */
typedef struct writer {
  dfx_tensor *h;
  int first, n;
  int fails;
} writer;

static void write_thread(void *arg) {
  writer *w = arg;
  for (int i = w->first; i < w->first + w->n; i++) {
    dfx_node *n = kh_node_new("TensorArrayWriteV3");
    kh_attr_type(n, "T", DFX_F32);
    char e[256];
    dfx_tensor *flow = kh_scalar_f32(0), *ix = kh_scalar_i32(i), *v = kh_scalar_f32((float)i), *in[4] = {w->h, ix, v, flow},
               *o;
    if (kh_run_step(n, in, 4, &o, NULL, &step, e, sizeof e) == DFX_OK)
      dfx__tensor_unref(o);
    else
      w->fails++;
    dfx__tensor_unref(flow);
    dfx__tensor_unref(ix);
    dfx__tensor_unref(v);
    kh_node_free(n);
  }
  dfx__tensor_cache_flush();
}

Test(tensor_array, concurrent_writes_dynamic) {
  dfx_tensor *h = ta_make((ta_opts){.size = 0, .dynamic = 1}, NULL), *g;
  enum { T = 4, PER = 50 };
  writer w[T];
  uv_thread_t th[T];
  for (int t = 0; t < T; t++) {
    w[t] = (writer){h, t * PER, PER, 0};
    uv_thread_create(&th[t], write_thread, &w[t]);
  }
  for (int t = 0; t < T; t++) {
    uv_thread_join(&th[t]);
    cr_expect_eq(w[t].fails, 0);
  }
  cr_expect_eq(ta_size(h), T * PER);
  int64_t dn = T * PER;
  int32_t idx[T * PER];
  for (int i = 0; i < T * PER; i++) idx[i] = i;
  dfx_tensor *ii = kh_i32(1, &dn, idx);
  cr_assert_eq(ta_gather(h, ii, DFX_F32, -1, NULL, &g), DFX_OK, "%s", err);
  for (int i = 0; i < T * PER; i++) cr_expect_eq(((float *)g->data)[i], (float)i);
  dfx__tensor_unref(g);
  dfx__tensor_unref(ii);
  dfx__tensor_unref(h);
}
