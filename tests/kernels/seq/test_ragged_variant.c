/* test_ragged_variant.c - RaggedTensorToVariant / RaggedTensorFromVariant:
 * round trips (scalar and batched), each unbatched component against a
 * naive slice of the nested lists, re-batching from a vector and a matrix
 * of variants (uniform outer splits), int32/int64 splits, float, int and
 * string values with inner dims, empty rows, and the checks. Ops run on
 * one shared step, since variants live as long as their run. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc.h"
#include "kharness.h"
#include "step.h"

static char err[1024];
static dfx_step step;

static void setup(void) { dfx__step_init(&step); }
static void teardown(void) {
  dfx__step_destroy(&step);
  dfx__tensor_cache_flush();
}
TestSuite(ragged_variant, .init = setup, .fini = teardown, .timeout = 60);

static dfx_tensor *splits(dfx_dtype t, int n, const int64_t *v) {
  const int64_t d[1] = {n};
  dfx_tensor *s = dfx__tensor_alloc(t, 1, d, NULL);
  for (int i = 0; i < n; i++) {
    if (t == DFX_I32) ((int32_t *)s->data)[i] = (int32_t)v[i];
    else ((int64_t *)s->data)[i] = v[i];
  }
  return s;
}

static dfx_code to_variant(dfx_tensor **in, int rank, dfx_dtype st, dfx_dtype vt, int batched, dfx_tensor **out) {
  dfx_node *n = kh_node_new("RaggedTensorToVariant");
  kh_attr_int(n, "RAGGED_RANK", rank);
  kh_attr_type(n, "Tvalues", vt);
  kh_attr_type(n, "Tsplits", st);
  kh_attr_bool(n, "batched_input", batched);
  int no = 0;
  dfx_code c = kh_run_step(n, in, rank + 1, out, &no, &step, err, sizeof err);
  kh_node_free(n);
  return c;
}

static dfx_code from_variant(dfx_tensor *enc, int in_rank, int out_rank, dfx_dtype st, dfx_dtype vt, dfx_tensor **out) {
  dfx_node *n = kh_node_new("RaggedTensorFromVariant");
  kh_attr_int(n, "input_ragged_rank", in_rank);
  kh_attr_int(n, "output_ragged_rank", out_rank);
  kh_attr_type(n, "Tvalues", vt);
  kh_attr_type(n, "Tsplits", st);
  int no = 0;
  dfx_code c = kh_run_step(n, &enc, 1, out, &no, &step, err, sizeof err);
  kh_node_free(n);
  return c;
}

static void expect_splits(const dfx_tensor *s, int n, const int64_t *want, const char *what) {
  cr_assert_eq(s->count, n, "%s: %lld splits, want %d", what, (long long)s->count, n);
  for (int i = 0; i < n; i++) cr_expect_eq(dfx__tensor_get_i64(s, i), want[i], "%s[%d]", what, i);
}

/* The ragged tensor [[[1], [2, 3]], [], [[4, 5]]] with values [5, 2] ints
 * (each value a row of 2: v, 10 v). */
static const int64_t s0[] = {0, 2, 2, 3}, s1[] = {0, 1, 3, 5};
static dfx_tensor *vals52(void) {
  const int64_t d[2] = {5, 2};
  const int32_t v[10] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50};
  return kh_i32(2, d, v);
}

Test(ragged_variant, scalar_round_trip) {
  for (int si = 0; si < 2; si++) {
    dfx_dtype st = si ? DFX_I64 : DFX_I32;
    dfx_tensor *in[3] = {splits(st, 4, s0), splits(st, 4, s1), vals52()}, *enc = NULL, *out[3] = {0};
    cr_assert_eq(to_variant(in, 2, st, DFX_I32, 0, &enc), DFX_OK, "%s", err);
    cr_assert(enc->dtype == DFX_VARIANT && enc->ndims == 0);
    cr_assert_eq(from_variant(enc, 2, 2, st, DFX_I32, out), DFX_OK, "%s", err);
    expect_splits(out[0], 4, s0, "splits0");
    expect_splits(out[1], 4, s1, "splits1");
    cr_expect(out[2]->count == 10 && !memcmp(out[2]->data, in[2]->data, 40));
    /* input_ragged_rank -1 is inferred from the output rank and the encoding's. */
    dfx_tensor *again[3] = {0};
    cr_expect_eq(from_variant(enc, -1, 2, st, DFX_I32, again), DFX_OK, "%s", err);
    for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]), dfx__tensor_unref(again[i]);
    dfx__tensor_unref(enc);
  }
}

/* Row r of the nested lists above, as a rank-1 ragged tensor: its inner
 * splits rebased to 0 and its values. */
static void naive_row(int r, int64_t *sp, int *nsp, int64_t *vlo, int64_t *vhi) {
  int64_t lo = s0[r], hi = s0[r + 1];
  *nsp = (int)(hi - lo + 1);
  for (int64_t i = lo; i <= hi; i++) sp[i - lo] = s1[i] - s1[lo];
  *vlo = s1[lo], *vhi = s1[hi];
}

Test(ragged_variant, batched_unbatches_rows_and_rebatches) {
  dfx_tensor *in[3] = {splits(DFX_I64, 4, s0), splits(DFX_I64, 4, s1), vals52()}, *enc = NULL;
  cr_assert_eq(to_variant(in, 2, DFX_I64, DFX_I32, 1, &enc), DFX_OK, "%s", err);
  cr_assert(enc->ndims == 1 && enc->dims[0] == 3);
  /* Each element decodes to its row. */
  for (int r = 0; r < 3; r++) {
    dfx_tensor *one = dfx__tensor_alloc(DFX_VARIANT, 0, NULL, NULL), *out[2] = {0};
    ((void **)one->data)[0] = ((void **)enc->data)[r];
    cr_assert_eq(from_variant(one, 1, 1, DFX_I64, DFX_I32, out), DFX_OK, "%s", err);
    int64_t sp[8], vlo, vhi;
    int nsp;
    naive_row(r, sp, &nsp, &vlo, &vhi);
    expect_splits(out[0], nsp, sp, "row splits");
    cr_assert(out[1]->ndims == 2 && out[1]->dims[0] == vhi - vlo && out[1]->dims[1] == 2);
    cr_expect(!memcmp(out[1]->data, (int32_t *)in[2]->data + 2 * vlo, (size_t)(vhi - vlo) * 8), "row %d values", r);
    dfx__tensor_unref(out[0]), dfx__tensor_unref(out[1]), dfx__tensor_unref(one);
  }
  /* The vector re-batches to the original. */
  dfx_tensor *out[3] = {0};
  cr_assert_eq(from_variant(enc, 1, 2, DFX_I64, DFX_I32, out), DFX_OK, "%s", err);
  expect_splits(out[0], 4, s0, "splits0");
  expect_splits(out[1], 4, s1, "splits1");
  cr_expect(out[2]->count == 10 && !memcmp(out[2]->data, in[2]->data, 40));
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]);
  /* As a [3, 1] matrix: one more, uniform, outer level. */
  const int64_t md[2] = {3, 1};
  dfx_tensor *mat = dfx__tensor_alloc(DFX_VARIANT, 2, md, NULL);
  memcpy(mat->data, enc->data, 3 * sizeof(void *));
  dfx_tensor *o4[4] = {0};
  cr_assert_eq(from_variant(mat, 1, 3, DFX_I64, DFX_I32, o4), DFX_OK, "%s", err);
  const int64_t uni[4] = {0, 1, 2, 3};
  expect_splits(o4[0], 4, uni, "uniform outer");
  expect_splits(o4[1], 4, s0, "splits0");
  expect_splits(o4[2], 4, s1, "splits1");
  for (int i = 0; i < 4; i++) dfx__tensor_unref(o4[i]);
  dfx__tensor_unref(mat);
  dfx__tensor_unref(enc);
}

Test(ragged_variant, rank1_strings_and_empty_rows) {
  const int64_t sp[5] = {0, 0, 2, 2, 3}, vd[1] = {3};
  dfx_tensor *v = dfx__tensor_alloc(DFX_STRING, 1, vd, NULL);
  const char *words[3] = {"a", "bc", "def"};
  for (int i = 0; i < 3; i++) {
    dfx_str *s = (dfx_str *)v->data + i;
    s->len = strlen(words[i]);
    s->ptr = dfx__malloc(s->len);
    memcpy(s->ptr, words[i], s->len);
  }
  dfx_tensor *in[2] = {splits(DFX_I32, 5, sp), v}, *enc = NULL;
  cr_assert_eq(to_variant(in, 1, DFX_I32, DFX_STRING, 1, &enc), DFX_OK, "%s", err);
  cr_assert_eq(enc->count, 4);
  /* Row 1 is the 0-ragged-rank tensor ["a", "bc"]. */
  dfx_tensor *one = dfx__tensor_alloc(DFX_VARIANT, 0, NULL, NULL), *o1[1] = {0};
  ((void **)one->data)[0] = ((void **)enc->data)[1];
  cr_assert_eq(from_variant(one, 0, 0, DFX_I32, DFX_STRING, o1), DFX_OK, "%s", err);
  cr_assert_eq(o1[0]->count, 2);
  const dfx_str *s = o1[0]->data;
  cr_expect(s[0].len == 1 && !memcmp(s[0].ptr, "a", 1) && s[1].len == 2 && !memcmp(s[1].ptr, "bc", 2));
  dfx_tensor *out[2] = {0};
  cr_assert_eq(from_variant(enc, 0, 1, DFX_I32, DFX_STRING, out), DFX_OK, "%s", err);
  expect_splits(out[0], 5, sp, "splits");
  const dfx_str *r = out[1]->data;
  cr_expect(out[1]->count == 3 && r[2].len == 3 && !memcmp(r[2].ptr, "def", 3));
  dfx__tensor_unref(o1[0]), dfx__tensor_unref(one);
  for (int i = 0; i < 2; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]);
  dfx__tensor_unref(enc);
}

Test(ragged_variant, errors) {
  dfx_tensor *enc = NULL, *out[4] = {0}; /* up to output_ragged_rank 3 + values */
  const int64_t bad0[4] = {1, 2, 2, 3}, dec[4] = {0, 2, 1, 3}, short_[4] = {0, 2, 2, 2};
  dfx_tensor *in[3] = {splits(DFX_I64, 4, bad0), splits(DFX_I64, 4, s1), vals52()};
  cr_expect_eq(to_variant(in, 2, DFX_I64, DFX_I32, 0, &enc), DFX_EINVAL);
  cr_expect(strstr(err, "first element of ragged splits must be 0"), "%s", err);
  dfx__tensor_unref(in[0]);
  in[0] = splits(DFX_I64, 4, dec);
  cr_expect_eq(to_variant(in, 2, DFX_I64, DFX_I32, 0, &enc), DFX_EINVAL);
  cr_expect(strstr(err, "monotonically increasing"), "%s", err);
  dfx__tensor_unref(in[0]);
  in[0] = splits(DFX_I64, 4, short_);
  cr_expect_eq(to_variant(in, 2, DFX_I64, DFX_I32, 0, &enc), DFX_EINVAL);
  cr_expect(strstr(err, "last element of ragged splits"), "%s", err);
  cr_expect_eq(to_variant(in + 2, 0, DFX_I64, DFX_I32, 1, &enc), DFX_EINVAL);
  cr_expect(strstr(err, "ragged_rank must be greater than 0 when batched_input is true"), "%s", err);
  dfx__tensor_unref(in[0]);
  in[0] = splits(DFX_I64, 4, s0);
  cr_assert_eq(to_variant(in, 2, DFX_I64, DFX_I32, 0, &enc), DFX_OK, "%s", err);
  cr_expect_eq(from_variant(enc, 1, 1, DFX_I64, DFX_I32, out), DFX_EINVAL);
  cr_expect(strstr(err, "Expected ragged_rank=1"), "%s", err);
  cr_expect_eq(from_variant(enc, 2, 2, DFX_I64, DFX_F32, out), DFX_EINVAL);
  cr_expect(strstr(err, "Expected values Tensor dtype: DT_FLOAT, found: DT_INT32"), "%s", err);
  cr_expect_eq(from_variant(enc, 2, 2, DFX_I32, DFX_I32, out), DFX_EINVAL);
  cr_expect(strstr(err, "Expected splits Tensor dtype"), "%s", err);
  cr_expect_eq(from_variant(enc, 2, 3, DFX_I64, DFX_I32, out), DFX_EINVAL);
  cr_expect(strstr(err, "output_ragged_rank must be equal to input_ragged_rank + encoded_ragged.dims"), "%s", err);
  dfx_tensor *null_var = dfx__tensor_alloc(DFX_VARIANT, 0, NULL, NULL);
  cr_expect_eq(from_variant(null_var, 0, 0, DFX_I64, DFX_I32, out), DFX_EINVAL);
  cr_expect(strstr(err, "not a RaggedTensorVariant"), "%s", err);
  dfx__tensor_unref(null_var);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_unref(enc);
}
