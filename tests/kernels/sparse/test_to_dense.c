/* test_to_dense.c - SparseToDense over every declared dtype and index type
 * against a naive scatter, index ranks 0/1/2, scalar values, duplicates with
 * and without validate_indices, and TF's shape and index errors. */
#include <math.h>

#include "stest.h"

static dfx_node *std_node(dfx_dtype t, dfx_dtype ti, int validate) {
  dfx_node *n = kh_node_new("SparseToDense");
  kh_attr_type(n, "T", t);
  kh_attr_type(n, "Tindices", ti);
  kh_attr_bool(n, "validate_indices", validate);
  return n;
}

static dfx_tensor *ints(dfx_dtype ti, int nd, const int64_t *dims, const int64_t *v) {
  int64_t n = dfx__shape_count(nd, dims);
  double d[64] = {0};
  for (int64_t i = 0; i < n; i++) d[i] = (double)v[i];
  return s_from_doubles(ti, nd, dims, d);
}

Test(to_dense, reference_sweep_all_dtypes) {
  const dfx_dtype dts[] = {DFX_F32, DFX_F64, DFX_I8, DFX_I16, DFX_I32, DFX_I64, DFX_U8, DFX_U16,
                           DFX_U32, DFX_U64, DFX_F16, DFX_BF16, DFX_BOOL};
  const dfx_dtype tis[] = {DFX_I32, DFX_I64};
  /* Output [3, 4]; sorted indices. */
  const int64_t idx[5][2] = {{0, 1}, {0, 3}, {1, 0}, {2, 2}, {2, 3}};
  const double vals[5] = {1, 2, 3, 4, 5};
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
    for (int ti = 0; ti < 2; ti++)
      for (int scalar = 0; scalar < 2; scalar++) {
        double want[12];
        for (int i = 0; i < 12; i++) want[i] = dts[t] == DFX_BOOL ? 0 : 7;
        for (int k = 0; k < 5; k++) want[idx[k][0] * 4 + idx[k][1]] = dts[t] == DFX_BOOL ? 1 : scalar ? 9 : vals[k];
        const int64_t id[2] = {5, 2}, sd[1] = {2}, vd[1] = {5}, shape[2] = {3, 4};
        const double nine = 9, dv = dts[t] == DFX_BOOL ? 0 : 7;
        dfx_tensor *in[4] = {ints(tis[ti], 2, id, &idx[0][0]), ints(tis[ti], 1, sd, shape),
                             scalar ? s_from_doubles(dts[t], 0, NULL, &nine) : s_from_doubles(dts[t], 1, vd, vals),
                             s_from_doubles(dts[t], 0, NULL, &dv)},
                   *out[1] = {0};
        dfx_node *n = std_node(dts[t], tis[ti], 1);
        char err[512];
        cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s: %s", dfx_dtype_name(dts[t]), err);
        s_expect_shape(out[0], 2, shape);
        cr_assert_eq(out[0]->dtype, dts[t]);
        for (int i = 0; i < 12; i++)
          cr_expect_eq(dfx__tensor_get_f64(out[0], i), want[i], "%s [%d]", dfx_dtype_name(dts[t]), i);
        s_unref_all(out, 1);
        s_unref_all(in, 4);
        kh_node_free(n);
      }
}

Test(to_dense, strings) {
  const int64_t id[1] = {2}, sd[1] = {1}, shape[1] = {4};
  const int64_t iv[2] = {1, 3};
  const char *vals[2] = {"bb", "dddd"}, *def[1] = {"-"};
  dfx_tensor *in[4] = {ints(DFX_I64, 1, id, iv), ints(DFX_I64, 1, sd, shape), s_str(1, id, vals), s_str(0, NULL, def)},
             *out[1] = {0};
  dfx_node *n = std_node(DFX_STRING, DFX_I64, 1);
  char err[512];
  cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s", err);
  const char *want[4] = {"-", "bb", "-", "dddd"};
  for (int i = 0; i < 4; i++) {
    size_t len;
    const char *s = dfx_tensor_string(out[0], i, &len);
    cr_expect(len == strlen(want[i]) && memcmp(s, want[i], len) == 0, "[%d]", i);
  }
  s_unref_all(out, 1);
  s_unref_all(in, 4);
  kh_node_free(n);
}

/* Scalar index (rank 0): one value at that position of a vector; vector
 * indices (rank 1): one position each. */
Test(to_dense, index_ranks_0_and_1) {
  const int64_t five[1] = {5}, sd[1] = {1}, id[1] = {3}, iv[3] = {0, 2, 4}, two = 2;
  const double val = 3, vals[3] = {1, 2, 3}, dv = 0;
  dfx_tensor *in[4] = {ints(DFX_I32, 0, NULL, &two), ints(DFX_I32, 1, sd, five), s_from_doubles(DFX_F32, 0, NULL, &val),
                       s_from_doubles(DFX_F32, 0, NULL, &dv)},
             *out[1] = {0};
  dfx_node *n = std_node(DFX_F32, DFX_I32, 1);
  char err[512];
  cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s", err);
  const double w0[5] = {0, 0, 3, 0, 0};
  s_expect_f64v(out[0], w0, 5, 0);
  s_unref_all(out, 1);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[2]);
  in[0] = ints(DFX_I32, 1, id, iv);
  in[2] = s_from_doubles(DFX_F32, 1, id, vals);
  cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s", err);
  const double w1[5] = {1, 0, 2, 0, 3};
  s_expect_f64v(out[0], w1, 5, 0);
  s_unref_all(out, 1);
  s_unref_all(in, 4);
  kh_node_free(n);
}

/* Unsorted and repeated indices: refused with validate_indices (TF's
 * messages), applied in order (last write wins) without. */
Test(to_dense, validate_indices) {
  const int64_t id[2] = {3, 2}, sd[1] = {2}, vd[1] = {3}, shape[2] = {2, 2};
  const int64_t unsorted[6] = {1, 0, 0, 1, 1, 1}, repeated[6] = {0, 1, 1, 0, 1, 0}, oob[6] = {0, 0, 0, 1, 2, 0};
  const double vals[3] = {1, 2, 3}, dv = -1;
  dfx_node *nv = std_node(DFX_F64, DFX_I64, 1), *nn = std_node(DFX_F64, DFX_I64, 0);
  dfx_tensor *in[4] = {ints(DFX_I64, 2, id, unsorted), ints(DFX_I64, 1, sd, shape), s_from_doubles(DFX_F64, 1, vd, vals),
                       s_from_doubles(DFX_F64, 0, NULL, &dv)},
             *out[1] = {0};
  s_expect_err(nv, in, 4, "indices[1] = [0,1] is out of order. Many sparse ops require sorted indices.");
  char err[512];
  cr_assert_eq(s_run(nn, in, 4, out, err), DFX_OK, "%s", err);
  const double w0[4] = {-1, 2, 1, 3};
  s_expect_f64v(out[0], w0, 4, 0);
  s_unref_all(out, 1);
  dfx__tensor_unref(in[0]);
  in[0] = ints(DFX_I64, 2, id, repeated);
  s_expect_err(nv, in, 4, "indices[2] = [1,0] is repeated");
  cr_assert_eq(s_run(nn, in, 4, out, err), DFX_OK, "%s", err);
  const double w1[4] = {-1, 1, 3, -1};
  s_expect_f64v(out[0], w1, 4, 0);
  s_unref_all(out, 1);
  dfx__tensor_unref(in[0]);
  in[0] = ints(DFX_I64, 2, id, oob);
  s_expect_err(nv, in, 4, "indices[2] = [2,0] is out of bounds: need 0 <= index < [2,2]");
  s_expect_err(nn, in, 4, "Indices are not valid (out of bounds).  Shape: [2,2]");
  s_unref_all(in, 4);
  kh_node_free(nv);
  kh_node_free(nn);
}

Test(to_dense, shape_errors_and_hostile_sizes) {
  const int64_t id3[3] = {1, 1, 1}, id[2] = {1, 2}, sd[1] = {2}, sd3[1] = {3}, vd2[1] = {2}, m2[2] = {1, 1};
  const int64_t iv[2] = {0, 0}, shape[3] = {2, 2, 2}, neg[2] = {2, -1}, huge[2] = {INT64_MAX / 2, 4};
  const int64_t limit[2] = {(int64_t)1 << 31, (int64_t)1 << 31};
  const double vals[2] = {1, 2}, dv = 0;
  dfx_node *n = std_node(DFX_F32, DFX_I64, 1);
  dfx_tensor *in[4] = {ints(DFX_I64, 3, id3, iv), ints(DFX_I64, 1, sd, shape), s_from_doubles(DFX_F32, 0, NULL, vals),
                       s_from_doubles(DFX_F32, 0, NULL, &dv)};
  s_expect_err(n, in, 4, "sparse_indices should be a scalar, vector, or matrix, got shape [1,1,1]");
  dfx__tensor_unref(in[0]);
  in[0] = ints(DFX_I64, 2, id, iv);
  dfx__tensor_unref(in[1]);
  in[1] = ints(DFX_I64, 2, m2, shape);
  s_expect_err(n, in, 4, "output_shape must be rank 1, got shape [1,1]");
  dfx__tensor_unref(in[1]);
  in[1] = ints(DFX_I64, 1, sd3, shape);
  s_expect_err(n, in, 4, "output_shape has incorrect number of elements: 3 should be: 2");
  dfx__tensor_unref(in[1]);
  in[1] = ints(DFX_I64, 1, sd, shape);
  dfx__tensor_unref(in[2]);
  in[2] = s_from_doubles(DFX_F32, 1, vd2, vals);
  s_expect_err(n, in, 4, "sparse_values has incorrect shape [2], should be [] or [1]");
  dfx__tensor_unref(in[2]);
  in[2] = s_from_doubles(DFX_F32, 0, NULL, vals);
  dfx__tensor_unref(in[3]);
  in[3] = s_from_doubles(DFX_F32, 1, vd2, vals);
  s_expect_err(n, in, 4, "default_value should be a scalar.");
  dfx__tensor_unref(in[3]);
  in[3] = s_from_doubles(DFX_F32, 0, NULL, &dv);
  dfx__tensor_unref(in[1]);
  in[1] = ints(DFX_I64, 1, sd, neg);
  s_expect_err(n, in, 4, "Dimension -1 must be >= 0");
  dfx__tensor_unref(in[1]);
  in[1] = ints(DFX_I64, 1, sd, huge);
  s_expect_err(n, in, 4, "would have more than 2**63 - 1 elements");
  dfx__tensor_unref(in[1]);
  in[1] = ints(DFX_I64, 1, sd, limit);
  s_expect_err(n, in, 4, "exceeds the tensor size limit");
  s_unref_all(in, 4);
  kh_node_free(n);
}

/* Empty: no indices gives the default everywhere; an empty output with no
 * indices is fine. */
Test(to_dense, empty) {
  const int64_t id[2] = {0, 2}, sd[1] = {2}, vd[1] = {0}, shape[2] = {2, 3}, zshape[2] = {0, 3};
  const double dv = 4;
  dfx_node *n = std_node(DFX_F32, DFX_I32, 1);
  dfx_tensor *in[4] = {ints(DFX_I32, 2, id, NULL), ints(DFX_I32, 1, sd, shape), s_from_doubles(DFX_F32, 1, vd, NULL),
                       s_from_doubles(DFX_F32, 0, NULL, &dv)},
             *out[1] = {0};
  char err[512];
  cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s", err);
  const double w[6] = {4, 4, 4, 4, 4, 4};
  s_expect_f64v(out[0], w, 6, 0);
  s_unref_all(out, 1);
  dfx__tensor_unref(in[1]);
  in[1] = ints(DFX_I32, 1, sd, zshape);
  cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s", err);
  s_expect_shape(out[0], 2, zshape);
  s_unref_all(out, 1);
  s_unref_all(in, 4);
  kh_node_free(n);
}
