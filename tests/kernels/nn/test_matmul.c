/* test_matmul.c - MatMul / BatchMatMul / BatchMatMulV2 against a naive product. */
#include <complex.h>

#include "nn_test.h"

static dfx_code mm(const char *op, dfx_tensor *a, dfx_tensor *b, bool ta, bool tb, dfx_tensor **y, char *err) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", (dfx_dtype)a->dtype);
  bool v1 = !strcmp(op, "MatMul");
  kh_attr_bool(n, v1 ? "transpose_a" : "adj_x", ta);
  kh_attr_bool(n, v1 ? "transpose_b" : "adj_y", tb);
  dfx_tensor *in[] = {a, b};
  dfx_code c = run1(n, in, 2, y, err);
  kh_node_free(n);
  return c;
}

/* Reference for one (possibly broadcast) batch matrix product. */
static void check(const dfx_tensor *a, const dfx_tensor *b, const dfx_tensor *y, bool ta, bool tb) {
  int ra = a->ndims, rb = b->ndims, ry = y->ndims;
  int64_t ar = a->dims[ra - 2], ac = a->dims[ra - 1], br = b->dims[rb - 2], bc = b->dims[rb - 1];
  int64_t m = y->dims[ry - 2], n = y->dims[ry - 1], k = ta ? ar : ac;
  int64_t batches = y->count / (m * n > 0 ? m * n : 1);
  dfx_dtype t = (dfx_dtype)y->dtype;
  for (int64_t bi = 0; bi < batches && m * n > 0; bi++) {
    /* decompose bi over y's batch dims and map into a and b */
    int64_t rem = bi, oa = 0, ob = 0, ma = 1, mb = 1;
    for (int d = ry - 3; d >= 0; d--) {
      int64_t c = rem % y->dims[d];
      rem /= y->dims[d];
      int da = d - (ry - ra), db = d - (ry - rb);
      if (da >= 0) {
        if (a->dims[da] != 1) oa += c * ma;
        ma *= a->dims[da];
      }
      if (db >= 0) {
        if (b->dims[db] != 1) ob += c * mb;
        mb *= b->dims[db];
      }
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++) {
          double av = tget(a, oa * ar * ac + (ta ? p * ac + i : i * ac + p));
          double bv = tget(b, ob * br * bc + (tb ? j * bc + p : p * bc + j));
          s += av * bv;
        }
        double g = tget(y, bi * m * n + i * n + j);
        EXPECT_NEAR(g, s, ttol(t) * (1 + (double)k), "%s b%lld (%lld,%lld) got %g want %g", dfx_dtype_name(t),
                    (long long)bi, (long long)i, (long long)j, g, s);
      }
  }
}

/* Every declared real dtype of each op, with each transpose/adjoint pair:
 * MatMul on matrices, BatchMatMul on a batch of 2, BatchMatMulV2
 * broadcasting y's batch of 1 (complex ones: complex_transpose_and_adjoint). */
Test(matmul, declared_dtypes_and_transposes) {
  const char *ops[] = {"MatMul", "BatchMatMul", "BatchMatMulV2"};
  for (int o = 0; o < 3; o++) {
    dfx_dtype types[DFX_DTYPE_END_];
    int nt = nn_declared(ops[o], "T", types);
    for (int ti = 0; ti < nt; ti++) {
      for (int tr = 0; tr < 4 && !dfx__dtype_is_complex(types[ti]); tr++) {
        bool ta = tr & 1, tb = tr & 2;
        int64_t m = 5, k = 7, n = 3, nb = o == 0 ? 0 : 1;
        int64_t da[] = {2, ta ? k : m, ta ? m : k}, db[] = {o == 2 ? 1 : 2, tb ? n : k, tb ? k : n};
        dfx_dtype t = types[ti];
        dfx_tensor *a = nn_rand(t, 2 + nb, da + 1 - nb, 1 + tr), *b = nn_rand(t, 2 + nb, db + 1 - nb, 7 + tr), *y;
        char err[512];
        cr_assert_eq(mm(ops[o], a, b, ta, tb, &y, err), DFX_OK, "%s %s: %s", ops[o], dfx_dtype_name(t), err);
        cr_assert_eq(y->dtype, t);
        cr_assert_eq(y->dims[nb], m);
        cr_assert_eq(y->dims[nb + 1], n);
        check(a, b, y, ta, tb);
        dfx__tensor_unref(y);
        dfx__tensor_unref(a);
        dfx__tensor_unref(b);
      }
    }
  }
}

/* Element i of a complex tensor. */
static double complex cget(const dfx_tensor *t, int64_t i) {
  if (t->dtype == DFX_C64) return ((const float *)t->data)[2 * i] + I * ((const float *)t->data)[2 * i + 1];
  return ((const double *)t->data)[2 * i] + I * ((const double *)t->data)[2 * i + 1];
}

/* A [rows, cols] complex matrix with parts in [-2, 2]. */
static dfx_tensor *crand(dfx_dtype t, int64_t rows, int64_t cols, unsigned seed) {
  int64_t d[] = {rows, cols}, d2[] = {rows, cols * 2};
  dfx_tensor *parts = trand(t == DFX_C64 ? DFX_F32 : DFX_F64, 2, d2, -2, 2, seed);
  dfx_tensor *x = kh_tensor(t, 2, d, parts->data);
  dfx__tensor_unref(parts);
  return x;
}

/* MatMul's transpose_a/b transpose; BatchMatMul's adj_x/y also conjugate. */
Test(matmul, complex_transpose_and_adjoint) {
  const char *ops[] = {"MatMul", "BatchMatMul", "BatchMatMulV2"};
  for (int o = 0; o < 3; o++) {
    dfx_dtype types[DFX_DTYPE_END_];
    int nt = nn_declared(ops[o], "T", types), nc = 0;
    for (int ti = 0; ti < nt; ti++) nc += dfx__dtype_is_complex(types[ti]);
    cr_expect_eq(nc, 2, "%s declares both complex types", ops[o]);
    for (int ti = 0; ti < nt; ti++)
      for (int tr = 0; tr < 4 && dfx__dtype_is_complex(types[ti]); tr++) {
        bool ta = tr & 1, tb = tr & 2, adj = o > 0;
        int64_t m = 4, k = 5, n = 3;
        dfx_tensor *a = crand(types[ti], ta ? k : m, ta ? m : k, 1 + tr), *b = crand(types[ti], tb ? n : k, tb ? k : n, 5 + tr);
        dfx_tensor *y;
        char err[512];
        cr_assert_eq(mm(ops[o], a, b, ta, tb, &y, err), DFX_OK, "%s: %s", ops[o], err);
        cr_assert_eq(y->dtype, types[ti]);
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            double complex s = 0;
            for (int64_t p = 0; p < k; p++) {
              double complex av = ta ? cget(a, p * m + i) : cget(a, i * k + p);
              double complex bv = tb ? cget(b, j * k + p) : cget(b, p * n + j);
              if (adj && ta) av = conj(av);
              if (adj && tb) bv = conj(bv);
              s += av * bv;
            }
            double complex g = cget(y, i * n + j);
            double tol = (types[ti] == DFX_C64 ? 1e-5 : 1e-12) * (1 + cabs(s));
            cr_expect(cabs(g - s) <= tol, "%s %s tr %d (%lld,%lld): got %g%+gi want %g%+gi", ops[o],
                      dfx_dtype_name(types[ti]), tr, (long long)i, (long long)j, creal(g), cimag(g), creal(s), cimag(s));
          }
        dfx__tensor_unref(y);
        dfx__tensor_unref(a);
        dfx__tensor_unref(b);
      }
  }
}

Test(matmul, empty_and_errors) {
  int64_t da[] = {2, 0}, db[] = {0, 3};
  dfx_tensor *a = kh_f32(2, da, NULL), *b = kh_f32(2, db, NULL), *y;
  char err[512];
  cr_assert_eq(mm("MatMul", a, b, false, false, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->count, 6);
  for (int i = 0; i < 6; i++) cr_expect_eq(tget(y, i), 0.0);
  dfx__tensor_unref(y);
  cr_expect_eq(mm("MatMul", a, a, false, false, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "Matrix size-incompatible: In[0]: [2,0], In[1]: [2,0]"), "%s", err);
  dfx__tensor_unref(b);
  int64_t d1 = 3;
  b = kh_f32(1, &d1, NULL);
  cr_expect_eq(mm("MatMul", b, a, false, false, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "In[0] is not a matrix"), "%s", err);
  dfx__tensor_unref(a);
  dfx__tensor_unref(b);
}

Test(matmul, batch_v1_and_v2_broadcast) {
  char err[512];
  dfx_tensor *y;
  int64_t da[] = {2, 3, 4, 5}, db[] = {2, 3, 5, 2};
  dfx_tensor *a = trand(DFX_F32, 4, da, -1, 1, 3), *b = trand(DFX_F32, 4, db, -1, 1, 4);
  cr_assert_eq(mm("BatchMatMul", a, b, false, false, &y, err), DFX_OK, "%s", err);
  cr_assert_eq(y->ndims, 4);
  check(a, b, y, false, false);
  dfx__tensor_unref(y);
  dfx__tensor_unref(b);
  int64_t dbt[] = {2, 3, 2, 5};
  b = trand(DFX_F64, 4, dbt, -1, 1, 4);
  dfx_tensor *a64 = trand(DFX_F64, 4, da, -1, 1, 3);
  cr_assert_eq(mm("BatchMatMul", a64, b, false, true, &y, err), DFX_OK, "%s", err);
  check(a64, b, y, false, true);
  dfx__tensor_unref(y);
  dfx__tensor_unref(b);
  dfx__tensor_unref(a64);
  /* V1 rejects differing batch dims; V2 broadcasts them. */
  int64_t dc[] = {3, 1, 5, 2};
  dfx_tensor *c = trand(DFX_F32, 4, dc, -1, 1, 5);
  cr_expect_eq(mm("BatchMatMul", a, c, false, false, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "must be the same"), "%s", err);
  int64_t dcc[] = {2, 1, 5, 2};
  dfx_tensor *cc = trand(DFX_F32, 4, dcc, -1, 1, 5);
  cr_assert_eq(mm("BatchMatMulV2", a, cc, false, false, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->dims[1], 3);
  check(a, cc, y, false, false);
  dfx__tensor_unref(y);
  int64_t dd[] = {5, 2};
  dfx_tensor *d = trand(DFX_F32, 2, dd, -1, 1, 6);
  cr_assert_eq(mm("BatchMatMulV2", a, d, false, false, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->ndims, 4);
  check(a, d, y, false, false);
  dfx__tensor_unref(y);
  int64_t de[] = {4, 1, 5, 7};
  dfx_tensor *e = trand(DFX_F32, 4, de, -1, 1, 6);
  cr_expect_eq(mm("BatchMatMulV2", a, e, false, false, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "compatible batch dimensions"), "%s", err);
  int64_t dk[] = {2, 3, 4, 2};
  dfx_tensor *kk = trand(DFX_F32, 4, dk, -1, 1, 6);
  cr_expect_eq(mm("BatchMatMul", a, kk, false, false, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "In[0] mismatch In[1] shape: 5 vs. 4"), "%s", err);
  /* adj_x on an int batch */
  int64_t di[] = {2, 4, 3}, dj[] = {1, 4, 2};
  dfx_tensor *ia = trand(DFX_I32, 3, di, -5, 5, 1), *ib = trand(DFX_I32, 3, dj, -5, 5, 2);
  cr_assert_eq(mm("BatchMatMulV2", ia, ib, true, false, &y, err), DFX_OK, "%s", err);
  check(ia, ib, y, true, false);
  dfx__tensor_unref(y);
  dfx_tensor *all[] = {a, c, cc, d, e, kk, ia, ib};
  unref_all(all, 8);
}

/* Intra-op split: products big enough for parallel_for, run with blocks in
 * reverse order (kh_par_reverse), against the naive reference: tall outputs
 * split by rows, wide ones by columns, batches by matrix, with every
 * transpose and broadcast batch dims, float, double and complex. */
Test(matmul, split_over_threads) {
  char err[512];
  dfx_tensor *y;
  kh_set_parallel(&kh_par_reverse);
  struct {
    dfx_dtype t;
    int nd;
    int64_t da[3], db[3];
    const char *op;
  } cases[] = {
      {DFX_F32, 2, {130, 80}, {80, 96}, "MatMul"},      /* tall: rows, a ragged last block */
      {DFX_F32, 2, {40, 100}, {100, 301}, "MatMul"},    /* wide: columns */
      {DFX_F64, 2, {100, 70}, {70, 90}, "MatMul"},
      {DFX_C64, 2, {70, 60}, {60, 50}, "MatMul"},
      {DFX_F32, 3, {3, 64, 64}, {1, 64, 64}, "BatchMatMulV2"}, /* batches, y broadcast */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int tr = 0; tr < 4; tr++) {
      bool ta = tr & 1, tb = tr & 2;
      int nd = cases[c].nd;
      int64_t da[3], db[3];
      memcpy(da, cases[c].da, sizeof da);
      memcpy(db, cases[c].db, sizeof db);
      if (ta) { int64_t s = da[nd - 1]; da[nd - 1] = da[nd - 2]; da[nd - 2] = s; }
      if (tb) { int64_t s = db[nd - 1]; db[nd - 1] = db[nd - 2]; db[nd - 2] = s; }
      dfx_tensor *a, *b;
      if (cases[c].t == DFX_C64) {
        a = kh_tensor(DFX_C64, nd, da, NULL);
        b = kh_tensor(DFX_C64, nd, db, NULL);
        for (int64_t i = 0; i < a->count; i++) ((float complex *)a->data)[i] = (float)(i % 7) - 3 + I * (float)(i % 5);
        for (int64_t i = 0; i < b->count; i++) ((float complex *)b->data)[i] = (float)(i % 3) - 1 - I * (float)(i % 4);
      } else {
        a = trand(cases[c].t, nd, da, -1, 1, 7 + (unsigned)c);
        b = trand(cases[c].t, nd, db, -1, 1, 9);
      }
      int before = kh_par_blocks;
      cr_assert_eq(mm(cases[c].op, a, b, ta, tb, &y, err), DFX_OK, "%s", err);
      cr_expect_gt(kh_par_blocks - before, 1, "case %zu did not split", c);
      if (cases[c].t == DFX_C64) {
        /* Complex: compare with the real-pair product written out. */
        const float complex *ap = a->data, *bp = b->data, *yp = y->data;
        int64_t m = y->dims[0], n = y->dims[1], k = ta ? a->dims[0] : a->dims[1];
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            double complex s = 0;
            for (int64_t p = 0; p < k; p++)
              s += (ta ? ap[p * m + i] : ap[i * k + p]) * (tb ? bp[j * k + p] : bp[p * n + j]);
            cr_expect(cabs(yp[i * n + j] - s) < 1e-5 * cabs(s) + 1e-3, "c64 (%lld,%lld)", (long long)i, (long long)j);
          }
      } else {
        check(a, b, y, ta, tb);
      }
      dfx__tensor_unref(y);
      dfx__tensor_unref(a);
      dfx__tensor_unref(b);
    }
  kh_set_parallel(NULL);
}
