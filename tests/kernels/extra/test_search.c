/* test_search.c - UpperBound/LowerBound against a linear scan over every
 * declared dtype, Reverse against index arithmetic (every dims mask of a
 * rank-3 tensor, strings), DenseBincount against a naive count. */
#include <math.h>

#include "sparse/stest.h"

Test(search, bounds_reference_sweep) {
  const dfx_dtype dts[] = {DFX_F32, DFX_F64, DFX_I32, DFX_U8, DFX_I16, DFX_I8, DFX_I64, DFX_BF16, DFX_U16, DFX_F16,
                           DFX_U32, DFX_U64};
  const double sorted[2 * 6] = {1, 2, 2, 2, 5, 9, 0, 0, 3, 4, 4, 7};
  const double vals[2 * 5] = {0, 2, 3, 9, 10, 0, 4, 1, 7, 8};
  const int64_t sd[2] = {2, 6}, vd[2] = {2, 5};
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
    for (int up = 0; up < 2; up++)
      for (int ot = 0; ot < 2; ot++) {
        dfx_node *n = kh_node_new(up ? "UpperBound" : "LowerBound");
        kh_attr_type(n, "T", dts[t]);
        kh_attr_type(n, "out_type", ot ? DFX_I64 : DFX_I32);
        dfx_tensor *in[2] = {s_from_doubles(dts[t], 2, sd, sorted), s_from_doubles(dts[t], 2, vd, vals)}, *out[1] = {0};
        char err[512];
        cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
        cr_assert_eq(out[0]->dtype, ot ? DFX_I64 : DFX_I32);
        s_expect_shape(out[0], 2, vd);
        int64_t want[10];
        for (int b = 0; b < 2; b++)
          for (int j = 0; j < 5; j++) {
            int64_t k = 0;
            double x = vals[b * 5 + j];
            while (k < 6 && (up ? sorted[b * 6 + k] <= x : sorted[b * 6 + k] < x)) k++;
            want[b * 5 + j] = k;
          }
        s_expect_i64v(out[0], want, 10);
        s_unref_all(out, 1);
        s_unref_all(in, 2);
        kh_node_free(n);
      }
}

Test(search, bounds_errors) {
  dfx_node *n = kh_node_new("UpperBound");
  kh_attr_type(n, "T", DFX_F32);
  const int64_t d1[1] = {3}, d2[2] = {1, 3}, d3[2] = {2, 3};
  const double v[6] = {0};
  dfx_tensor *in[2] = {s_from_doubles(DFX_F32, 1, d1, v), s_from_doubles(DFX_F32, 2, d2, v)};
  s_expect_err(n, in, 2, "sorted input argument must be a matrix");
  dfx__tensor_unref(in[0]);
  in[0] = s_from_doubles(DFX_F32, 2, d3, v);
  s_expect_err(n, in, 2, "Leading dim_size of both tensors must match.");
  s_unref_all(in, 2);
  kh_node_free(n);
}

Test(search, reverse_every_mask) {
  const dfx_dtype dts[] = {DFX_F32, DFX_I64, DFX_U8, DFX_BOOL, DFX_F16};
  const int64_t dims[3] = {2, 3, 4}, bd[1] = {3};
  double v[24];
  for (int i = 0; i < 24; i++) v[i] = i % 7 + (i > 11);
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
    for (int mask = 0; mask < 8; mask++) {
      uint8_t rv[3] = {mask & 1, (mask >> 1) & 1, (mask >> 2) & 1};
      dfx_node *n = kh_node_new("Reverse");
      kh_attr_type(n, "T", dts[t]);
      dfx_tensor *in[2] = {s_from_doubles(dts[t], 3, dims, v), kh_bool(1, bd, rv)}, *out[1] = {0};
      char err[512];
      cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
      s_expect_shape(out[0], 3, dims);
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
          for (int k = 0; k < 4; k++) {
            int si = rv[0] ? 1 - i : i, sj = rv[1] ? 2 - j : j, sk = rv[2] ? 3 - k : k;
            double want = v[(si * 3 + sj) * 4 + sk];
            if (dts[t] == DFX_BOOL) want = want != 0;
            cr_expect_eq(dfx__tensor_get_f64(out[0], (i * 3 + j) * 4 + k), want, "mask %d [%d,%d,%d]", mask, i, j, k);
          }
      s_unref_all(out, 1);
      s_unref_all(in, 2);
      kh_node_free(n);
    }
}

Test(search, reverse_strings_scalar_errors) {
  const int64_t d[1] = {3}, bd[1] = {1}, bd2[1] = {2}, m[2] = {1, 1};
  const char *sv[3] = {"a", "bb", "ccc"};
  const uint8_t t1[2] = {1, 1};
  dfx_node *n = kh_node_new("Reverse");
  kh_attr_type(n, "T", DFX_STRING);
  dfx_tensor *in[2] = {s_str(1, d, sv), kh_bool(1, bd, t1)}, *out[1] = {0};
  char err[512];
  cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
  for (int i = 0; i < 3; i++) {
    size_t len;
    const char *s = dfx_tensor_string(out[0], i, &len);
    cr_expect(len == strlen(sv[2 - i]) && memcmp(s, sv[2 - i], len) == 0);
  }
  s_unref_all(out, 1);
  dfx__tensor_unref(in[1]);
  in[1] = kh_bool(1, bd2, t1);
  s_expect_err(n, in, 2, "'dims' must have the same number of values as 'input' has dimensions. 'input' has 1'dims' has 2 values");
  dfx__tensor_unref(in[1]);
  in[1] = kh_bool(2, m, t1);
  s_expect_err(n, in, 2, "'dims' must be 1-dimension, not 2");
  s_unref_all(in, 2);
  kh_node_free(n);
}

Test(search, dense_bincount_reference) {
  const dfx_dtype wts[] = {DFX_I32, DFX_I64, DFX_F32, DFX_F64};
  const int64_t arr[2 * 5] = {1, 1, 4, 0, 9, 3, 3, 3, 2, 1};
  const double w[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  for (int t = 0; t < 4; t++)
    for (int ti = 0; ti < 2; ti++)
      for (int rank = 1; rank <= 2; rank++)
        for (int mode = 0; mode < 3; mode++) { /* counts, weights, binary */
          const int64_t size = 5, ad[2] = {2, 5}, fd[1] = {10}, zd[1] = {0};
          double want[10] = {0};
          for (int i = 0; i < 10; i++) {
            int64_t v = arr[i];
            if (v >= size) continue;
            int64_t o = (rank == 2 ? (i / 5) * size : 0) + v;
            want[o] = mode == 2 ? 1 : want[o] + (mode == 1 ? w[i] : 1);
          }
          double ad_[10], sz = (double)size;
          for (int i = 0; i < 10; i++) ad_[i] = (double)arr[i];
          dfx_node *n = kh_node_new("DenseBincount");
          kh_attr_type(n, "T", wts[t]);
          kh_attr_type(n, "Tidx", ti ? DFX_I64 : DFX_I32);
          kh_attr_bool(n, "binary_output", mode == 2);
          dfx_dtype it = ti ? DFX_I64 : DFX_I32;
          dfx_tensor *in[3] = {rank == 2 ? s_from_doubles(it, 2, ad, ad_) : s_from_doubles(it, 1, fd, ad_),
                               s_from_doubles(it, 0, NULL, &sz),
                               mode == 1 ? (rank == 2 ? s_from_doubles(wts[t], 2, ad, w) : s_from_doubles(wts[t], 1, fd, w))
                                         : s_from_doubles(wts[t], 1, zd, w)},
                     *out[1] = {0};
          char err[512];
          cr_assert_eq(s_run(n, in, 3, out, err), DFX_OK, "%s", err);
          cr_assert_eq(out[0]->dtype, wts[t]);
          const int64_t o2[2] = {2, 5}, o1[1] = {5};
          if (rank == 2) s_expect_shape(out[0], 2, o2);
          else s_expect_shape(out[0], 1, o1);
          s_expect_f64v(out[0], want, rank == 2 ? 10 : 5, 0);
          s_unref_all(out, 1);
          s_unref_all(in, 3);
          kh_node_free(n);
        }
}

Test(search, dense_bincount_errors) {
  dfx_node *n = kh_node_new("DenseBincount");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "Tidx", DFX_I32);
  const int64_t d[1] = {3}, d2[1] = {2}, z[1] = {0};
  const int32_t a[3] = {0, -1, 2}, sz = 4, neg = -1, big = 2000000000;
  const float w[3] = {1, 1, 1};
  dfx_tensor *in[3] = {kh_i32(1, d, a), kh_i32(0, NULL, &sz), kh_f32(1, z, w)};
  s_expect_err(n, in, 3, "Input arr must be non-negative!");
  dfx__tensor_unref(in[1]);
  in[1] = kh_i32(0, NULL, &neg);
  s_expect_err(n, in, 3, "size (-1) must be non-negative");
  dfx__tensor_unref(in[1]);
  in[1] = kh_i32(0, NULL, &sz);
  dfx__tensor_unref(in[2]);
  in[2] = kh_f32(1, d2, w);
  s_expect_err(n, in, 3, "`weights` must be the same shape as `arr` or a length-0 `Tensor`");
  s_unref_all(in, 3);
  /* A 2-D input with a huge size is refused before allocating. */
  const int64_t m[2] = {100000, 1};
  int32_t *zeros = calloc(100000, sizeof(int32_t));
  in[0] = kh_i32(2, m, zeros);
  in[1] = kh_i32(0, NULL, &big);
  in[2] = kh_f32(1, z, w);
  s_expect_err(n, in, 3, "size");
  s_unref_all(in, 3);
  free(zeros);
  kh_node_free(n);
}
