/* test_softmax.c - BiasAdd, L2Loss, LRN, Softmax, LogSoftmax and the softmax
 * cross-entropy losses against hand-computed values and naive loops. */
#include "nn_test.h"

static dfx_code run_op(const char *op, dfx_dtype t, dfx_tensor **in, int nin, dfx_tensor **out, char *err) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", t);
  dfx_code c = run1(n, in, nin, out, err);
  kh_node_free(n);
  return c;
}

Test(bias_add, nhwc_nchw_int_half_errors) {
  int64_t dx[] = {2, 3}, db = 3;
  float x[] = {1, 2, 3, 4, 5, 6}, b[] = {10, 20, 30};
  dfx_tensor *tx = kh_f32(2, dx, x), *tb = kh_f32(1, &db, b), *y;
  dfx_tensor *in[] = {tx, tb};
  char err[512];
  cr_assert_eq(run_op("BiasAdd", DFX_F32, in, 2, &y, err), DFX_OK, "%s", err);
  float w[] = {11, 22, 33, 14, 25, 36};
  cr_expect_arr_eq(y->data, w, sizeof w);
  dfx__tensor_unref(y);
  cr_assert_eq(run_op("BiasAddV1", DFX_F32, in, 2, &y, err), DFX_OK, "%s", err);
  cr_expect_arr_eq(y->data, w, sizeof w);
  dfx__tensor_unref(y);
  /* NCHW: [1,3,2] channel dim 1 */
  int64_t dn[] = {1, 3, 2};
  dfx_tensor *tn = kh_f32(3, dn, x);
  dfx_node *n = kh_node_new("BiasAdd");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_str(n, "data_format", "NCHW");
  dfx_tensor *in2[] = {tn, tb};
  cr_assert_eq(run1(n, in2, 2, &y, err), DFX_OK, "%s", err);
  float wn[] = {11, 12, 23, 24, 35, 36};
  cr_expect_arr_eq(y->data, wn, sizeof wn);
  dfx__tensor_unref(y);
  kh_node_free(n);
  /* NHWC [1,3,2] with 3 biases: error */
  cr_expect_eq(run_op("BiasAdd", DFX_F32, in2, 2, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "Must provide as many biases as the last dimension"), "%s", err);
  dfx_tensor *in3[] = {tb, tb};
  cr_expect_eq(run_op("BiasAdd", DFX_F32, in3, 2, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "at least 2D"), "%s", err);
  int32_t xi[] = {INT32_MAX, 2, 3, 4, 5, 6}, bi[] = {1, -2, 3};
  dfx_tensor *ix = kh_i32(2, dx, xi), *ib = kh_i32(1, &db, bi);
  dfx_tensor *in4[] = {ix, ib};
  cr_assert_eq(run_op("BiasAdd", DFX_I32, in4, 2, &y, err), DFX_OK, "%s", err);
  int32_t wi[] = {INT32_MIN, 0, 6, 5, 3, 9};
  cr_expect_arr_eq(y->data, wi, sizeof wi);
  dfx__tensor_unref(y);
  dfx_tensor *hx = trand(DFX_F16, 2, dx, -2, 2, 3), *hb = trand(DFX_F16, 1, &db, -2, 2, 4);
  dfx_tensor *in5[] = {hx, hb};
  cr_assert_eq(run_op("BiasAdd", DFX_F16, in5, 2, &y, err), DFX_OK, "%s", err);
  for (int i = 0; i < 6; i++) EXPECT_NEAR(tget(y, i), tget(hx, i) + tget(hb, i % 3), 2e-3, "i %d", i);
  dfx__tensor_unref(y);
  dfx_tensor *all[] = {tx, tb, tn, ix, ib, hx, hb};
  unref_all(all, 7);
}

Test(l2loss, values) {
  int64_t d = 3;
  float x[] = {1, -2, 3};
  dfx_tensor *tx = kh_f32(1, &d, x), *y;
  char err[512];
  cr_assert_eq(run_op("L2Loss", DFX_F32, &tx, 1, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->ndims, 0);
  cr_expect_eq(tget(y, 0), 7.0);
  dfx__tensor_unref(y);
  dfx__tensor_unref(tx);
  int64_t e = 0;
  tx = kh_tensor(DFX_F64, 1, &e, NULL);
  cr_assert_eq(run_op("L2Loss", DFX_F64, &tx, 1, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(tget(y, 0), 0.0);
  dfx__tensor_unref(y);
  dfx__tensor_unref(tx);
}

Test(lrn, matches_naive) {
  int64_t d[] = {1, 2, 1, 6};
  dfx_tensor *x = trand(DFX_F32, 4, d, -2, 2, 5), *y;
  dfx_node *n = kh_node_new("LRN");
  kh_attr_int(n, "depth_radius", 2);
  kh_attr_float(n, "bias", 1.5f);
  kh_attr_float(n, "alpha", 0.3f);
  kh_attr_float(n, "beta", 0.75f);
  char err[512];
  cr_assert_eq(run1(n, &x, 1, &y, err), DFX_OK, "%s", err);
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 6; c++) {
      double s = 0;
      for (int k = c - 2; k <= c + 2; k++)
        if (k >= 0 && k < 6) s += tget(x, r * 6 + k) * tget(x, r * 6 + k);
      double want = tget(x, r * 6 + c) / pow(1.5 + 0.3f * s, 0.75);
      EXPECT_NEAR(tget(y, r * 6 + c), want, 1e-5, "r %d c %d", r, c);
    }
  dfx__tensor_unref(y);
  kh_node_free(n);
  dfx__tensor_unref(x);
}

Test(softmax, values_and_log) {
  int64_t d[] = {2, 3};
  float x[] = {1, 2, 3, 1000, 1000, 1000};
  dfx_tensor *tx = kh_f32(2, d, x), *y;
  char err[512];
  cr_assert_eq(run_op("Softmax", DFX_F32, &tx, 1, &y, err), DFX_OK, "%s", err);
  double s = exp(1) + exp(2) + exp(3);
  EXPECT_NEAR(tget(y, 0), exp(1) / s, 1e-6, "0");
  EXPECT_NEAR(tget(y, 2), exp(3) / s, 1e-6, "2");
  EXPECT_NEAR(tget(y, 4), 1.0 / 3, 1e-6, "4");
  dfx__tensor_unref(y);
  cr_assert_eq(run_op("LogSoftmax", DFX_F32, &tx, 1, &y, err), DFX_OK, "%s", err);
  EXPECT_NEAR(tget(y, 1), 2 - log(s), 1e-6, "1");
  EXPECT_NEAR(tget(y, 5), -log(3), 1e-6, "5");
  dfx__tensor_unref(y);
  dfx__tensor_unref(tx);
  float v = 1;
  tx = kh_f32(0, NULL, &v);
  cr_expect_eq(run_op("Softmax", DFX_F32, &tx, 1, &y, err), DFX_EINVAL);
  dfx__tensor_unref(tx);
  int64_t e[] = {2, 0};
  tx = kh_f32(2, e, NULL);
  cr_assert_eq(run_op("Softmax", DFX_F32, &tx, 1, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->count, 0);
  dfx__tensor_unref(y);
  dfx__tensor_unref(tx);
  int64_t d3[] = {2, 2, 4};
  tx = trand(DFX_BF16, 3, d3, -3, 3, 2);
  cr_assert_eq(run_op("Softmax", DFX_BF16, &tx, 1, &y, err), DFX_OK, "%s", err);
  for (int r = 0; r < 4; r++) {
    double sum = 0;
    for (int j = 0; j < 4; j++) sum += tget(y, r * 4 + j);
    EXPECT_NEAR(sum, 1.0, 2e-2, "row %d", r);
  }
  dfx__tensor_unref(y);
  dfx__tensor_unref(tx);
}

Test(xent, dense_broadcast_and_sparse) {
  int64_t d[] = {2, 3}, dl1[] = {1, 3};
  float x[] = {1, 2, 3, 1, 1, 1}, lab[] = {0, 0, 1, 0.5f, 0.5f, 0}, lab1[] = {0, 0, 1};
  dfx_tensor *tx = kh_f32(2, d, x), *tl = kh_f32(2, d, lab), *tl1 = kh_f32(2, dl1, lab1), *out[2];
  char err[512];
  dfx_tensor *in[] = {tx, tl};
  double s = exp(1) + exp(2) + exp(3);
  cr_assert_eq(run_op("SoftmaxCrossEntropyWithLogits", DFX_F32, in, 2, out, err), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->ndims, 1);
  EXPECT_NEAR(tget(out[0], 0), log(s) - 3, 1e-6, "loss0");
  EXPECT_NEAR(tget(out[0], 1), log(3), 1e-6, "loss1");
  EXPECT_NEAR(tget(out[1], 2), exp(3) / s - 1, 1e-6, "bp2");
  EXPECT_NEAR(tget(out[1], 3), 1.0 / 3 - 0.5, 1e-6, "bp3");
  unref_all(out, 2);
  dfx_tensor *in1[] = {tx, tl1};
  cr_assert_eq(run_op("SoftmaxCrossEntropyWithLogits", DFX_F32, in1, 2, out, err), DFX_OK, "%s", err);
  EXPECT_NEAR(tget(out[0], 1), log(3) - 0, 1e-6, "bcast loss1");
  EXPECT_NEAR(tget(out[1], 5), 1.0 / 3 - 1, 1e-6, "bcast bp5");
  unref_all(out, 2);
  /* sparse */
  int32_t li[] = {2, 0};
  int64_t d1 = 2;
  dfx_tensor *ti = kh_i32(1, &d1, li);
  dfx_node *n = kh_node_new("SparseSoftmaxCrossEntropyWithLogits");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "Tlabels", DFX_I32);
  dfx_tensor *in2[] = {tx, ti};
  cr_assert_eq(run1(n, in2, 2, out, err), DFX_OK, "%s", err);
  EXPECT_NEAR(tget(out[0], 0), log(s) - 3, 1e-6, "sloss0");
  EXPECT_NEAR(tget(out[0], 1), log(3), 1e-6, "sloss1");
  EXPECT_NEAR(tget(out[1], 3), 1.0 / 3 - 1, 1e-6, "sbp3");
  unref_all(out, 2);
  ((int32_t *)ti->data)[1] = 3;
  cr_expect_eq(run1(n, in2, 2, out, err), DFX_EINVAL);
  cr_expect(strstr(err, "Received a label value of 3 which is outside the valid range of [0, 3).  Label values: 2 3"),
            "%s", err);
  kh_node_free(n);
  dfx_tensor *all[] = {tx, tl, tl1, ti};
  unref_all(all, 4);
}

/* Softmax (float SIMD path) and LogSoftmax (double path), rows split over
 * threads (blocks in reverse order), against a naive double reference;
 * a row of -inf and a row holding NaN come out all NaN as before. */
Test(softmax, split_rows_match_naive) {
  int64_t d[] = {300, 1000};
  const char *ops[] = {"Softmax", "LogSoftmax"};
  for (int k = 0; k < 2; k++) {
    dfx_tensor *x = trand(DFX_F32, 2, d, -20, 20, 5 + (unsigned)k), *y;
    float *xv = x->data;
    for (int64_t c = 0; c < d[1]; c++) xv[7 * d[1] + c] = -INFINITY;
    xv[9 * d[1] + 4] = NAN;
    dfx_tensor *in[] = {x};
    char err[512];
    kh_set_parallel(&kh_par_reverse);
    int before = kh_par_blocks;
    cr_assert_eq(run_op(ops[k], DFX_F32, in, 1, &y, err), DFX_OK, "%s", err);
    kh_set_parallel(NULL);
    cr_expect_gt(kh_par_blocks - before, 1, "%s did not split", ops[k]);
    const float *yv = y->data;
    for (int64_t r = 0; r < d[0]; r++) {
      const float *xr = xv + r * d[1];
      double mx = -INFINITY, s = 0;
      for (int64_t c = 0; c < d[1]; c++) mx = xr[c] > mx ? xr[c] : mx;
      for (int64_t c = 0; c < d[1]; c++) s += exp((double)xr[c] - mx);
      for (int64_t c = 0; c < d[1]; c++) {
        double want = k == 0 ? exp((double)xr[c] - mx) / s : (double)xr[c] - mx - log(s);
        float got = yv[r * d[1] + c];
        if (r == 7 || r == 9) {
          cr_assert(isnan(got), "%s row %lld: %g", ops[k], (long long)r, got);
          continue;
        }
        cr_assert(fabs(got - want) <= 1e-5 * fabs(want) + 1e-9, "%s (%lld,%lld): %g vs %g", ops[k], (long long)r,
                  (long long)c, got, want);
      }
    }
    dfx__tensor_unref(y);
    dfx__tensor_unref(x);
  }
}

/* BiasAdd rows split over threads (reverse order), NHWC and NCHW, float and
 * int32, against the naive loop. */
Test(bias_add, split_rows_match_naive) {
  const char *fmts[] = {"NHWC", "NCHW"};
  dfx_dtype ts[] = {DFX_F32, DFX_I32};
  for (int f = 0; f < 2; f++)
    for (int k = 0; k < 2; k++) {
      int64_t dx[] = {80, 33, 50}, db = f ? 33 : 50;
      dfx_tensor *x = trand(ts[k], 3, dx, -50, 50, 3), *b = trand(ts[k], 1, &db, -9, 9, 4), *y;
      dfx_node *n = kh_node_new("BiasAdd");
      kh_attr_type(n, "T", ts[k]);
      kh_attr_str(n, "data_format", fmts[f]);
      dfx_tensor *in[] = {x, b};
      char err[512];
      kh_set_parallel(&kh_par_reverse);
      int before = kh_par_blocks;
      cr_assert_eq(run1(n, in, 2, &y, err), DFX_OK, "%s", err);
      kh_set_parallel(NULL);
      cr_expect_gt(kh_par_blocks - before, 1, "%s did not split", fmts[f]);
      for (int64_t i = 0; i < x->count; i++) {
        int64_t ch = f ? (i / 50) % 33 : i % 50;
        double want = k == 0 ? (double)((float)tget(x, i) + (float)tget(b, ch)) : tget(x, i) + tget(b, ch);
        cr_assert_eq(tget(y, i), want, "%s %lld", fmts[f], (long long)i);
      }
      kh_node_free(n);
      dfx__tensor_unref(y);
      dfx__tensor_unref(x);
      dfx__tensor_unref(b);
    }
}
