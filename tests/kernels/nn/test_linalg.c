/* test_linalg.c - batched LAPACK-backed ops checked by reconstruction
 * (A*inv(A) = I, L*L^T = A, U*S*V^T = A, Q*R = A, P*A = L*U) and hand values. */
#include "nn_test.h"

static dfx_code op1(const char *op, dfx_tensor **in, int nin, dfx_tensor **out, char *err, const char *battr, int bval) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", (dfx_dtype)in[0]->dtype);
  if (battr) kh_attr_bool(n, battr, bval);
  dfx_code c = run1(n, in, nin, out, err);
  kh_node_free(n);
  return c;
}

/* (A B)[i][j] for row-major double arrays, A m x k, B k x n. */
static double mm(const double *a, const double *b, int k, int n, int i, int j) {
  double s = 0;
  for (int p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
  return s;
}

static void to_d(const dfx_tensor *t, int64_t off, int64_t n, double *o) {
  for (int64_t i = 0; i < n; i++) o[i] = tget(t, off + i);
}

/* Diagonally dominant batch of 2 x [3,3] matrices. */
static dfx_tensor *spd(dfx_dtype t) {
  int64_t d[] = {2, 3, 3};
  dfx_tensor *x = trand(t, 3, d, -1, 1, 11);
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double v = i == j ? 4 + b : 0.3 * (i + j) - 0.2 * b; /* symmetric */
        if (t == DFX_F32) ((float *)x->data)[b * 9 + i * 3 + j] = (float)v;
        else ((double *)x->data)[b * 9 + i * 3 + j] = v;
      }
  return x;
}

Test(linalg, inverse_det_logdet) {
  dfx_tensor *x = spd(DFX_F64), *y, *out[2];
  char err[512];
  cr_assert_eq(op1("MatrixInverse", &x, 1, &y, err, "adjoint", 0), DFX_OK, "%s", err);
  for (int b = 0; b < 2; b++) {
    double a[9], inv[9];
    to_d(x, b * 9, 9, a);
    to_d(y, b * 9, 9, inv);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) EXPECT_NEAR(mm(a, inv, 3, 3, i, j), i == j, 1e-10, "b%d %d %d", b, i, j);
  }
  dfx__tensor_unref(y);
  cr_assert_eq(op1("MatrixDeterminant", &x, 1, &y, err, NULL, 0), DFX_OK, "%s", err);
  cr_expect_eq(y->ndims, 1);
  double a[9];
  to_d(x, 0, 9, a);
  double det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
  EXPECT_NEAR(tget(y, 0), det, 1e-10, "det");
  dfx__tensor_unref(y);
  cr_assert_eq(op1("LogMatrixDeterminant", &x, 1, out, err, NULL, 0), DFX_OK, "%s", err);
  EXPECT_NEAR(tget(out[0], 0), det > 0 ? 1 : -1, 0, "sign");
  EXPECT_NEAR(tget(out[1], 0), log(fabs(det)), 1e-10, "logdet");
  unref_all(out, 2);
  dfx__tensor_unref(x);
  /* singular and negative-determinant 2x2 */
  int64_t d2[] = {2, 2};
  float s[] = {1, 2, 2, 4}, ng[] = {0, 1, 1, 0};
  x = kh_f32(2, d2, s);
  cr_expect_eq(op1("MatrixInverse", &x, 1, &y, err, NULL, 0), DFX_EINVAL);
  cr_expect(strstr(err, "Input is not invertible."), "%s", err);
  cr_assert_eq(op1("MatrixDeterminant", &x, 1, &y, err, NULL, 0), DFX_OK, "%s", err);
  cr_expect_eq(tget(y, 0), 0.0);
  dfx__tensor_unref(y);
  cr_assert_eq(op1("LogMatrixDeterminant", &x, 1, out, err, NULL, 0), DFX_OK, "%s", err);
  cr_expect_eq(tget(out[0], 0), 0.0);
  cr_expect(isinf(tget(out[1], 0)) && tget(out[1], 0) < 0);
  unref_all(out, 2);
  dfx__tensor_unref(x);
  x = kh_f32(2, d2, ng);
  cr_assert_eq(op1("MatrixDeterminant", &x, 1, &y, err, NULL, 0), DFX_OK, "%s", err);
  cr_expect_eq(tget(y, 0), -1.0);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
  int64_t d23[] = {2, 3};
  x = kh_f32(2, d23, NULL);
  cr_expect_eq(op1("MatrixInverse", &x, 1, &y, err, NULL, 0), DFX_EINVAL);
  cr_expect(strstr(err, "must be square"), "%s", err);
  dfx__tensor_unref(x);
  int64_t d0[] = {0, 0};
  x = kh_f32(2, d0, NULL);
  cr_assert_eq(op1("MatrixDeterminant", &x, 1, &y, err, NULL, 0), DFX_OK, "%s", err);
  cr_expect_eq(tget(y, 0), 1.0);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
}

Test(linalg, cholesky_lu) {
  dfx_tensor *x = spd(DFX_F32), *y, *out[2];
  char err[512];
  cr_assert_eq(op1("Cholesky", &x, 1, &y, err, NULL, 0), DFX_OK, "%s", err);
  for (int b = 0; b < 2; b++) {
    double a[9], l[9], lt[9];
    to_d(x, b * 9, 9, a);
    to_d(y, b * 9, 9, l);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) lt[i * 3 + j] = l[j * 3 + i];
    cr_expect_eq(l[1], 0.0);
    for (int i = 0; i < 9; i++) EXPECT_NEAR(mm(l, lt, 3, 3, i / 3, i % 3), a[i], 1e-5, "chol %d", i);
  }
  dfx__tensor_unref(y);
  dfx_node *n = kh_node_new("Lu");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "output_idx_type", DFX_I64);
  int64_t d[] = {3, 3};
  float m[] = {1, 2, 3, 4, 5, 6, 7, 8, 10};
  dfx_tensor *xm = kh_f32(2, d, m);
  cr_assert_eq(run1(n, &xm, 1, out, err), DFX_OK, "%s", err);
  cr_expect_eq(out[1]->dtype, DFX_I64);
  double lu[9], L[9] = {0}, U[9] = {0};
  to_d(out[0], 0, 9, lu);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      if (j < i) L[i * 3 + j] = lu[i * 3 + j];
      else U[i * 3 + j] = lu[i * 3 + j];
      if (i == j) L[i * 3 + j] = 1;
    }
  const int64_t *p = out[1]->data;
  cr_expect_eq(p[0], 2); /* largest pivot 7 first */
  for (int i = 0; i < 9; i++) EXPECT_NEAR(mm(L, U, 3, 3, i / 3, i % 3), m[p[i / 3] * 3 + i % 3], 1e-5, "lu %d", i);
  unref_all(out, 2);
  kh_node_free(n);
  dfx__tensor_unref(xm);
  float bad[] = {1, 2, 3, -4, 5, 6, 7, 8, 10};
  xm = kh_f32(2, d, bad);
  ((float *)xm->data)[0] = -1;
  cr_expect_eq(op1("Cholesky", &xm, 1, &y, err, NULL, 0), DFX_EINVAL);
  cr_expect(strstr(err, "Cholesky decomposition was not successful"), "%s", err);
  dfx__tensor_unref(xm);
  dfx__tensor_unref(x);
}

Test(linalg, solves) {
  dfx_tensor *a = spd(DFX_F64);
  int64_t dr[] = {2, 3, 2};
  dfx_tensor *r = trand(DFX_F64, 3, dr, -2, 2, 5), *y;
  dfx_tensor *in[] = {a, r};
  char err[512];
  for (int adj = 0; adj < 2; adj++) {
    cr_assert_eq(op1("MatrixSolve", in, 2, &y, err, "adjoint", adj), DFX_OK, "%s", err);
    for (int b = 0; b < 2; b++) {
      double A[9], X[6];
      to_d(a, b * 9, 9, A);
      to_d(y, b * 6, 6, X);
      if (adj)
        for (int i = 0; i < 3; i++)
          for (int j = i + 1; j < 3; j++) {
            double t = A[i * 3 + j];
            A[i * 3 + j] = A[j * 3 + i];
            A[j * 3 + i] = t;
          }
      for (int i = 0; i < 6; i++) EXPECT_NEAR(mm(A, X, 3, 2, i / 2, i % 2), tget(r, b * 6 + i), 1e-10, "solve %d", i);
    }
    dfx__tensor_unref(y);
  }
  /* triangular: lower/upper x adjoint against the same triangle made dense */
  int64_t d[] = {3, 3}, d2[] = {3, 2};
  double m[] = {2, 5, 7, 1, 3, 8, -1, 2, 4};
  dfx_tensor *tm = kh_tensor(DFX_F64, 2, d, m), *tr = trand(DFX_F64, 2, d2, -2, 2, 7);
  dfx_tensor *in2[] = {tm, tr};
  for (int lower = 0; lower < 2; lower++)
    for (int adj = 0; adj < 2; adj++) {
      dfx_node *n = kh_node_new("MatrixTriangularSolve");
      kh_attr_type(n, "T", DFX_F64);
      kh_attr_bool(n, "lower", lower);
      kh_attr_bool(n, "adjoint", adj);
      cr_assert_eq(run1(n, in2, 2, &y, err), DFX_OK, "%s", err);
      double A[9], X[6];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          bool keep = lower ? j <= i : j >= i;
          double v = keep ? m[i * 3 + j] : 0;
          if (adj) A[j * 3 + i] = v;
          else A[i * 3 + j] = v;
        }
      to_d(y, 0, 6, X);
      for (int i = 0; i < 6; i++)
        EXPECT_NEAR(mm(A, X, 3, 2, i / 2, i % 2), tget(tr, i), 1e-10, "tri l%d a%d %d", lower, adj, i);
      dfx__tensor_unref(y);
      kh_node_free(n);
    }
  /* singular solve, and row mismatch */
  double z[] = {1, 2, 2, 4, 0, 0, 0, 0, 0};
  int64_t dz[] = {2, 2};
  dfx_tensor *tz = kh_tensor(DFX_F64, 2, dz, z), *rz = kh_tensor(DFX_F64, 2, dz, z);
  dfx_tensor *in3[] = {tz, rz};
  cr_expect_eq(op1("MatrixSolve", in3, 2, &y, err, NULL, 0), DFX_EINVAL);
  cr_expect(strstr(err, "Input matrix is not invertible."), "%s", err);
  dfx_tensor *in4[] = {tz, tr};
  cr_expect_eq(op1("MatrixSolve", in4, 2, &y, err, NULL, 0), DFX_EINVAL);
  cr_expect(strstr(err, "same number of rows"), "%s", err);
  dfx_tensor *all[] = {a, r, tm, tr, tz, rz};
  unref_all(all, 6);
}

Test(linalg, solve_ls) {
  int64_t da[] = {4, 2}, db[] = {4, 1};
  double A[] = {1, 0, 1, 1, 1, 2, 1, 3}, B[] = {1, 2, 2, 4};
  dfx_tensor *a = kh_tensor(DFX_F64, 2, da, A), *b = kh_tensor(DFX_F64, 2, db, B), *y;
  double l2 = 0;
  dfx_tensor *tl = kh_tensor(DFX_F64, 0, NULL, &l2);
  dfx_tensor *in[] = {a, b, tl};
  char err[512];
  for (int fast = 0; fast < 2; fast++) {
    cr_assert_eq(op1("MatrixSolveLs", in, 3, &y, err, "fast", fast), DFX_OK, "%s", err);
    /* normal equations: [4 6; 6 14] x = [9; 18] -> x = [0.9, 0.9] */
    EXPECT_NEAR(tget(y, 0), 0.9, 1e-10, "x0 fast %d", fast);
    EXPECT_NEAR(tget(y, 1), 0.9, 1e-10, "x1 fast %d", fast);
    dfx__tensor_unref(y);
  }
  dfx_tensor *all[] = {a, b, tl};
  unref_all(all, 3);
}

Test(linalg, svd_qr_reconstruct) {
  int64_t shapes[][3] = {{2, 4, 3}, {2, 3, 5}, {1, 3, 3}};
  char err[512];
  for (int si = 0; si < 3; si++) {
    int m = (int)shapes[si][1], n = (int)shapes[si][2], p = m < n ? m : n;
    dfx_tensor *x = trand(DFX_F32, 3, shapes[si], -2, 2, 3 + si), *out[3];
    for (int full = 0; full < 2; full++) {
      dfx_node *nd = kh_node_new("Svd");
      kh_attr_type(nd, "T", DFX_F32);
      kh_attr_bool(nd, "full_matrices", full);
      cr_assert_eq(run1(nd, &x, 1, out, err), DFX_OK, "%s", err);
      int uc = full ? m : p, vc = full ? n : p;
      cr_assert_eq(out[1]->dims[2], uc);
      cr_assert_eq(out[2]->dims[1], n);
      cr_assert_eq(out[2]->dims[2], vc);
      for (int b = 0; b < (int)shapes[si][0]; b++) {
        for (int k = 1; k < p; k++) cr_expect(tget(out[0], b * p + k - 1) >= tget(out[0], b * p + k), "descending");
        for (int i = 0; i < m; i++)
          for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < p; k++)
              s += tget(out[1], b * m * uc + i * uc + k) * tget(out[0], b * p + k) * tget(out[2], b * n * vc + j * vc + k);
            EXPECT_NEAR(s, tget(x, b * m * n + i * n + j), 1e-4, "svd %d b%d (%d,%d)", si, b, i, j);
          }
      }
      unref_all(out, 3);
      kh_attr_bool(nd, "compute_uv", 0);
      cr_assert_eq(run1(nd, &x, 1, out, err), DFX_OK, "%s", err);
      cr_expect_eq(out[0]->dims[1], p);
      cr_expect_eq(out[1]->ndims, 1); /* batch-shaped placeholder, like TF */
      unref_all(out, 3);
      kh_node_free(nd);

      cr_assert_eq(op1("Qr", &x, 1, out, err, "full_matrices", full), DFX_OK, "%s", err);
      int qc = full ? m : p;
      cr_assert_eq(out[0]->dims[2], qc);
      cr_assert_eq(out[1]->dims[1], qc);
      for (int b = 0; b < (int)shapes[si][0]; b++)
        for (int i = 0; i < m; i++) {
          for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < qc; k++) s += tget(out[0], b * m * qc + i * qc + k) * tget(out[1], b * qc * n + k * n + j);
            EXPECT_NEAR(s, tget(x, b * m * n + i * n + j), 1e-4, "qr %d (%d,%d)", si, i, j);
            if (i < qc && j < i) cr_expect_eq(tget(out[1], b * qc * n + i * n + j), 0.0);
          }
        }
      unref_all(out, 2);
    }
    dfx__tensor_unref(x);
  }
}

/* Each declared T (and Lu's output_idx_type) of each op against the float64
 * kernel on the same values, which the tests above check by reconstruction.
 * Entries are small multiples of 1/4, exact in every declared type. */
static void sweep_declared(const char *op) {
  dfx_dtype ts[DFX_DTYPE_END_], ix[DFX_DTYPE_END_];
  int nt = nn_declared(op, "T", ts), ni = nn_declared_or(op, "output_idx_type", DFX_INVALID, ix);
  int64_t dm[] = {3, 3}, dr[] = {3, 2};
  double m[] = {4, 1, 0.5, 1, 3, -0.25, 0.5, -0.25, 2}, r[] = {1, -2, 0.5, 3, -1, 0.25};
  const dfx_op_def *def = dfx__op_get(op);
  bool ls = !strcmp(op, "MatrixSolveLs");
  for (int a = 0; a < nt; a++)
    for (int c = 0; c < ni; c++) {
      dfx_tensor *got[3], *ref[3];
      for (int pass = 0; pass < 2; pass++) {
        dfx_dtype t = pass ? DFX_F64 : ts[a];
        double l2 = 0;
        dfx_tensor *in[] = {tfrom(t, 2, dm, m), tfrom(t, 2, dr, r), kh_tensor(DFX_F64, 0, NULL, &l2)};
        dfx_node *n = kh_node_new(op);
        kh_attr_type(n, "T", t);
        if (ix[c] != DFX_INVALID) kh_attr_type(n, "output_idx_type", ix[c]);
        char err[512];
        cr_assert_eq(run1(n, in, def->n_in, pass ? ref : got, err), DFX_OK, "%s %s: %s", op, dfx_dtype_name(t), err);
        unref_all(in, 3);
        kh_node_free(n);
      }
      for (int o = 0; o < def->n_out; o++) {
        char what[64];
        snprintf(what, sizeof what, "%s T=%s output %d", op, dfx_dtype_name(ts[a]), o);
        cr_assert_eq(got[o]->count, ref[o]->count, "%s", what);
        bool idx = o == 1 && !strcmp(op, "Lu");
        cr_expect_eq(got[o]->dtype, idx ? ix[c] : ts[a], "%s", what);
        for (int64_t i = 0; i < got[o]->count; i++)
          EXPECT_NEAR(tget(got[o], i), tget(ref[o], i), idx ? 0 : ttol(ts[a]) * (ls ? 4 : 1), "%s [%lld]: %g vs %g",
                      what, (long long)i, tget(got[o], i), tget(ref[o], i));
      }
      unref_all(got, def->n_out);
      unref_all(ref, def->n_out);
    }
}

Test(linalg, declared_dtypes_match_float64) {
  const char *ops[] = {"MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant", "Cholesky", "MatrixSolve",
                       "MatrixTriangularSolve", "Svd", "Lu", "Qr", "MatrixSolveLs"};
  for (unsigned i = 0; i < sizeof ops / sizeof *ops; i++) sweep_declared(ops[i]);
}
