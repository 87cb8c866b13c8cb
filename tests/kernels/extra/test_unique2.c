/* test_unique2.c - UniqueV2 against a naive quadratic scan over slices along
 * every axis, every declared dtype, -0/NaN semantics, strings and errors. */
#include <math.h>

#include "sparse/stest.h"

static dfx_node *u_node(dfx_dtype t, dfx_dtype ta, dfx_dtype oi) {
  dfx_node *n = kh_node_new("UniqueV2");
  kh_attr_type(n, "T", t);
  kh_attr_type(n, "Taxis", ta);
  kh_attr_type(n, "out_idx", oi);
  return n;
}

Test(unique_v2, reference_every_axis) {
  const dfx_dtype dts[] = {DFX_F32, DFX_F64, DFX_I8, DFX_I16, DFX_I32, DFX_I64, DFX_U8, DFX_U16, DFX_U32, DFX_U64,
                           DFX_F16, DFX_BF16, DFX_BOOL};
  const int64_t dims[3] = {3, 4, 2};
  /* Few distinct values so that slices repeat along each axis. */
  double v[24];
  uint32_t seed = 4;
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
    for (int axis = -3; axis < 3; axis++) {
      for (int i = 0; i < 24; i++) v[i] = (double)(s_rand(&seed) % 2);
      int ax = axis < 0 ? axis + 3 : axis;
      int64_t outer = 1, n = dims[ax], inner = 1;
      for (int i = 0; i < ax; i++) outer *= dims[i];
      for (int i = ax + 1; i < 3; i++) inner *= dims[i];
      int64_t first[8], uniq = 0, want_idx[8];
      for (int64_t j = 0; j < n; j++) {
        int64_t f = -1;
        for (int64_t u = 0; u < uniq && f < 0; u++) {
          bool eq = true;
          for (int64_t a = 0; a < outer; a++)
            for (int64_t b = 0; b < inner; b++) eq = eq && v[(a * n + j) * inner + b] == v[(a * n + first[u]) * inner + b];
          if (eq) f = u;
        }
        if (f < 0) first[f = uniq++] = j;
        want_idx[j] = f;
      }
      double axv = axis;
      const int64_t one[1] = {1};
      dfx_tensor *in[2] = {s_from_doubles(dts[t], 3, dims, v), s_from_doubles(DFX_I64, 1, one, &axv)}, *out[2] = {0};
      dfx_node *nd = u_node(dts[t], DFX_I64, t % 2 ? DFX_I64 : DFX_I32);
      char err[512];
      cr_assert_eq(s_run(nd, in, 2, out, err), DFX_OK, "%s", err);
      int64_t od[3] = {3, 4, 2};
      od[ax] = uniq;
      s_expect_shape(out[0], 3, od);
      for (int64_t a = 0; a < outer; a++)
        for (int64_t u = 0; u < uniq; u++)
          for (int64_t b = 0; b < inner; b++)
            cr_expect_eq(dfx__tensor_get_f64(out[0], (a * uniq + u) * inner + b), v[(a * n + first[u]) * inner + b]);
      s_expect_i64v(out[1], want_idx, n);
      s_unref_all(out, 2);
      s_unref_all(in, 2);
      kh_node_free(nd);
    }
}

Test(unique_v2, no_axis_floats_strings) {
  const int64_t d[1] = {6}, z[1] = {0};
  const float v[6] = {0.0f, -0.0f, NAN, 1.0f, NAN, 1.0f};
  dfx_tensor *in[2] = {kh_f32(1, d, v), kh_i32(1, z, NULL)}, *out[2] = {0};
  dfx_node *n = u_node(DFX_F32, DFX_I32, DFX_I32);
  char err[512];
  cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
  /* -0 == 0; every NaN is its own value. */
  const int64_t widx[6] = {0, 0, 1, 2, 3, 2};
  s_expect_i64v(out[1], widx, 6);
  cr_expect_eq(out[0]->count, 4);
  s_unref_all(out, 2);
  s_unref_all(in, 2);
  kh_node_free(n);
  const char *sv[5] = {"b", "a", "b", "", "a"};
  const int64_t d5[1] = {5};
  in[0] = s_str(1, d5, sv);
  in[1] = kh_i32(1, z, NULL);
  n = u_node(DFX_STRING, DFX_I32, DFX_I64);
  cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
  const int64_t sidx_[5] = {0, 1, 0, 2, 1};
  s_expect_i64v(out[1], sidx_, 5);
  const char *want[3] = {"b", "a", ""};
  for (int i = 0; i < 3; i++) {
    size_t len;
    const char *s = dfx_tensor_string(out[0], i, &len);
    cr_expect(len == strlen(want[i]) && (len == 0 || memcmp(s, want[i], len) == 0));
  }
  s_unref_all(out, 2);
  s_unref_all(in, 2);
  kh_node_free(n);
}

Test(unique_v2, errors_and_empty) {
  const int64_t d2[2] = {2, 2}, one[1] = {1}, two[1] = {2}, z[1] = {0}, e[2] = {0, 3};
  const float v[4] = {1, 2, 3, 4};
  const int32_t ax5 = 5, axs[2] = {0, 1};
  dfx_node *n = u_node(DFX_F32, DFX_I32, DFX_I32);
  dfx_tensor *in[2] = {kh_f32(2, d2, v), kh_i32(1, z, NULL)}, *out[2] = {0};
  s_expect_err(n, in, 2, "unique expects a 1D vector.");
  dfx__tensor_unref(in[1]);
  in[1] = kh_i32(1, one, &ax5);
  s_expect_err(n, in, 2, "axis has to be between [0, 2)");
  dfx__tensor_unref(in[1]);
  in[1] = kh_i32(1, two, axs);
  s_expect_err(n, in, 2, "axis does not support input tensors larger than 1 elements");
  dfx__tensor_unref(in[1]);
  in[1] = kh_i32(0, NULL, axs);
  s_expect_err(n, in, 2, "axis expects a 1D vector.");
  s_unref_all(in, 2);
  /* Empty slices along axis 1 of [0, 3]: all equal, one distinct slice. */
  in[0] = kh_f32(2, e, v);
  in[1] = kh_i32(1, one, &axs[1]);
  char err[512];
  cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
  const int64_t od[2] = {0, 1}, idx[3] = {0, 0, 0};
  s_expect_shape(out[0], 2, od);
  s_expect_i64v(out[1], idx, 3);
  s_unref_all(out, 2);
  s_unref_all(in, 2);
  kh_node_free(n);
}
