/* test_reshape_fill.c - SparseReshape against row-major re-indexing and
 * SparseFillEmptyRows against a naive row-by-row rebuild, with TF's errors. */
#include "stest.h"

static dfx_tensor *i64s(int nd, const int64_t *dims, const int64_t *v) { return kh_i64(nd, dims, v); }

/* ---- SparseReshape ---- */

static void reshape_case(int irank, const int64_t *ishape, int orank, const int64_t *target, const int64_t *want_shape,
                         int64_t nnz, const int64_t *ind) {
  const int64_t idims[2] = {nnz, irank}, sd[1] = {irank}, td[1] = {orank};
  dfx_tensor *in[3] = {i64s(2, idims, ind), i64s(1, sd, ishape), i64s(1, td, target)}, *out[2] = {0};
  dfx_node *n = kh_node_new("SparseReshape");
  char err[512];
  cr_assert_eq(s_run(n, in, 3, out, err), DFX_OK, "%s", err);
  s_expect_i64v(out[1], want_shape, orank);
  const int64_t od[2] = {nnz, orank};
  s_expect_shape(out[0], 2, od);
  for (int64_t i = 0; i < nnz; i++) {
    int64_t lin = 0, rest;
    for (int d = 0; d < irank; d++) lin = lin * ishape[d] + ind[i * irank + d];
    rest = lin;
    int64_t want[8];
    for (int d = orank - 1; d >= 0; d--) {
      want[d] = rest % want_shape[d];
      rest /= want_shape[d];
    }
    for (int d = 0; d < orank; d++)
      cr_expect_eq(((int64_t *)out[0]->data)[i * orank + d], want[d], "entry %lld dim %d", (long long)i, d);
  }
  s_unref_all(out, 2);
  s_unref_all(in, 3);
  kh_node_free(n);
}

Test(sparse_reshape, reference_cases) {
  const int64_t s23_4[3] = {2, 3, 4}, ind[4 * 3] = {0, 0, 1, 0, 2, 3, 1, 1, 0, 1, 2, 3};
  const int64_t t1[2] = {6, 4}, w1[2] = {6, 4}, t2[2] = {-1, 12}, w2[2] = {2, 12}, t3[4] = {4, -1, 3, 1},
                w3[4] = {4, 2, 3, 1}, t4[1] = {24}, w4[1] = {24};
  reshape_case(3, s23_4, 2, t1, w1, 4, ind);
  reshape_case(3, s23_4, 2, t2, w2, 4, ind);
  reshape_case(3, s23_4, 4, t3, w3, 4, ind);
  reshape_case(3, s23_4, 1, t4, w4, 4, ind);
  reshape_case(3, s23_4, 3, s23_4, s23_4, 4, ind); /* same shape: forwarded */
  const int64_t z[2] = {0, 5}, tz[2] = {5, 0};
  reshape_case(2, z, 2, tz, tz, 0, NULL);
}

Test(sparse_reshape, errors) {
  const int64_t idims[2] = {1, 2}, ind[2] = {0, 1}, sd[1] = {2}, shape[2] = {2, 3}, td2[1] = {2}, md[2] = {1, 2};
  const int64_t two_unknown[2] = {-1, -1}, neg[2] = {-2, 3}, bad[2] = {4, 2}, zero_unknown[2] = {0, -1},
                not_mult[2] = {-1, 4}, sd3[1] = {3}, shape3[3] = {1, 2, 3};
  dfx_node *n = kh_node_new("SparseReshape");
  dfx_tensor *in[3] = {i64s(1, sd, ind), i64s(1, sd, shape), i64s(1, td2, bad)};
  s_expect_err(n, in, 3, "Input indices should be a matrix but received shape [2]");
  dfx__tensor_unref(in[0]);
  in[0] = i64s(2, idims, ind);
  dfx__tensor_unref(in[1]);
  in[1] = i64s(2, md, shape);
  s_expect_err(n, in, 3, "Input shape should be a vector but received shape [1,2]");
  dfx__tensor_unref(in[1]);
  in[1] = i64s(1, sd3, shape3);
  s_expect_err(n, in, 3, "Input tensor rank must match input shape length.");
  dfx__tensor_unref(in[1]);
  in[1] = i64s(1, sd, shape);
  s_expect_err(n, in, 3, "Input to reshape is a tensor with 6 dense values, but the requested shape has 8. "
                         "input_shape=[2,3] output_shape=[4,2]");
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, td2, two_unknown);
  s_expect_err(n, in, 3, "only one output dimension may be -1, not both 0 and 1");
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, td2, neg);
  s_expect_err(n, in, 3, "size 0 must be non-negative, not -2");
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, td2, zero_unknown);
  s_expect_err(n, in, 3, "reshape cannot infer the missing input size for an empty tensor");
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, td2, not_mult);
  s_expect_err(n, in, 3, "requested shape requires a multiple of 4");
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, td2, md);
  dfx__tensor_unref(in[1]);
  const int64_t zshape[2] = {0, 2};
  in[1] = i64s(1, sd, zshape);
  const int64_t zt[2] = {2, 0};
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, td2, zt);
  s_expect_err(n, in, 3, "Input tensor has 1 non zero elements but input shape ([0,2]) or output shape ([2,0]) is empty");
  s_unref_all(in, 3);
  kh_node_free(n);
}

/* ---- SparseFillEmptyRows ---- */

static void fill_case(int64_t n, int64_t rank, const int64_t *ind, const double *vals, int64_t rows) {
  const dfx_dtype dts[] = {DFX_F32, DFX_I64, DFX_BOOL};
  for (int t = 0; t < 3; t++) {
    /* Reference: rows in order; a row's entries in input order, or the
     * default at [row, 0, ...]. */
    int64_t want_ind[64], rev[16], k = 0;
    double want_val[32];
    uint8_t empty[16];
    for (int64_t r = 0; r < rows; r++) {
      int64_t c = 0;
      for (int64_t i = 0; i < n; i++)
        if (ind[i * rank] == r) {
          memcpy(want_ind + k * rank, ind + i * rank, sizeof(int64_t) * (size_t)rank);
          want_val[k] = vals[i];
          rev[i] = k++;
          c++;
        }
      empty[r] = c == 0;
      if (!c) {
        memset(want_ind + k * rank, 0, sizeof(int64_t) * (size_t)rank);
        want_ind[k * rank] = r;
        want_val[k++] = dts[t] == DFX_BOOL ? 1 : -7;
      }
    }
    const int64_t idims[2] = {n, rank}, vd[1] = {n}, sd[1] = {rank};
    int64_t shape[4] = {rows, 5, 5, 5};
    const double dv = dts[t] == DFX_BOOL ? 1 : -7;
    dfx_tensor *in[4] = {i64s(2, idims, ind), s_from_doubles(dts[t], 1, vd, vals), i64s(1, sd, shape),
                         s_from_doubles(dts[t], 0, NULL, &dv)},
               *out[4] = {0};
    dfx_node *nd = kh_node_new("SparseFillEmptyRows");
    kh_attr_type(nd, "T", dts[t]);
    char err[512];
    cr_assert_eq(s_run(nd, in, 4, out, err), DFX_OK, "%s", err);
    const int64_t od[2] = {k, rank};
    s_expect_shape(out[0], 2, od);
    s_expect_i64v(out[0], want_ind, k * rank);
    cr_assert_eq(out[1]->dtype, dts[t]);
    double wv[32];
    for (int64_t i = 0; i < k; i++) wv[i] = dts[t] == DFX_BOOL ? want_val[i] != 0 : want_val[i];
    s_expect_f64v(out[1], wv, k, 0);
    cr_assert_eq(out[2]->dtype, DFX_BOOL);
    cr_assert_eq(out[2]->count, rows);
    for (int64_t r = 0; r < rows; r++) cr_expect_eq(((uint8_t *)out[2]->data)[r], empty[r], "row %lld", (long long)r);
    s_expect_i64v(out[3], rev, n);
    s_unref_all(out, 4);
    s_unref_all(in, 4);
    kh_node_free(nd);
  }
}

Test(fill_empty_rows, reference_cases) {
  /* Ordered with gaps. */
  const int64_t a[4 * 2] = {0, 1, 0, 3, 2, 0, 3, 1};
  const double av[4] = {1, 2, 3, 4};
  fill_case(4, 2, a, av, 5);
  /* Unordered rows, a row's entries kept in input order. */
  const int64_t b[5 * 2] = {3, 1, 0, 4, 3, 0, 1, 1, 0, 0};
  const double bv[5] = {5, 6, 7, 8, 9};
  fill_case(5, 2, b, bv, 4);
  /* Every row full and ordered: the inputs come back as they are. */
  const int64_t c[3 * 1] = {0, 1, 2};
  const double cv[3] = {1, 0, 1};
  fill_case(3, 1, c, cv, 3);
  /* No entries at all, rank 3. */
  fill_case(0, 3, NULL, NULL, 3);
}

Test(fill_empty_rows, strings_and_zero_rows) {
  const int64_t ind[2] = {1, 0}, idims[2] = {1, 2}, vd[1] = {1}, sd[1] = {2}, shape[2] = {3, 2};
  const char *vals[1] = {"x"}, *def[1] = {"dflt"};
  dfx_tensor *in[4] = {i64s(2, idims, ind), s_str(1, vd, vals), i64s(1, sd, shape), s_str(0, NULL, def)}, *out[4] = {0};
  dfx_node *n = kh_node_new("SparseFillEmptyRows");
  kh_attr_type(n, "T", DFX_STRING);
  char err[512];
  cr_assert_eq(s_run(n, in, 4, out, err), DFX_OK, "%s", err);
  const char *want[3] = {"dflt", "x", "dflt"};
  cr_assert_eq(out[1]->count, 3);
  for (int i = 0; i < 3; i++) {
    size_t len;
    const char *s = dfx_tensor_string(out[1], i, &len);
    cr_expect(len == strlen(want[i]) && memcmp(s, want[i], len) == 0, "[%d]", i);
  }
  s_unref_all(out, 4);
  /* dense_shape[0] = 0 with entries is refused; with none every output is empty. */
  const int64_t zshape[2] = {0, 2};
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, sd, zshape);
  s_expect_err(n, in, 4, "Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = 1");
  s_unref_all(in, 4);
  kh_node_free(n);
}

Test(fill_empty_rows, errors) {
  const int64_t ind[4] = {0, 0, 5, 0}, idims[2] = {2, 2}, vd[1] = {2}, vd1[1] = {1}, sd[1] = {2}, shape[2] = {3, 2};
  const double vals[2] = {1, 2}, dv = 0;
  dfx_node *n = kh_node_new("SparseFillEmptyRows");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *in[4] = {i64s(2, idims, ind), s_from_doubles(DFX_F32, 1, vd, vals), i64s(1, sd, shape),
                       s_from_doubles(DFX_F32, 0, NULL, &dv)};
  s_expect_err(n, in, 4, "indices(1, 0) is invalid: 5 >= 3");
  dfx__tensor_unref(in[1]);
  in[1] = s_from_doubles(DFX_F32, 1, vd1, vals);
  s_expect_err(n, in, 4, "The length of `values` (1) must match the first dimension of `indices` (2).");
  dfx__tensor_unref(in[1]);
  in[1] = s_from_doubles(DFX_F32, 1, vd, vals);
  dfx__tensor_unref(in[3]);
  in[3] = s_from_doubles(DFX_F32, 1, vd1, vals);
  s_expect_err(n, in, 4, "default_value must be a scalar, saw: [1]");
  dfx__tensor_unref(in[3]);
  in[3] = s_from_doubles(DFX_F32, 0, NULL, &dv);
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, (int64_t[]){0}, NULL);
  s_expect_err(n, in, 4, "Dense shape cannot be empty.");
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, sd, (int64_t[]){-3, 2});
  s_expect_err(n, in, 4, "non-negative, got -3");
  dfx__tensor_unref(in[2]);
  in[2] = i64s(1, sd, (int64_t[]){(int64_t)1 << 60, 2});
  s_expect_err(n, in, 4, "exceeds the tensor size limit");
  s_unref_all(in, 4);
  kh_node_free(n);
}
