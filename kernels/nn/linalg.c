/* linalg.c - batched dense linear algebra through LAPACKE: MatrixInverse,
 * MatrixDeterminant, LogMatrixDeterminant, Cholesky, MatrixSolve,
 * MatrixTriangularSolve, Svd, Lu, Qr, MatrixSolveLs. Every matrix of the
 * batch (leading dims) is copied into a row-major double buffer, solved there
 * and rounded back into T (float, double or half types; complex ones have no
 * kernel). Scratch is sized from matrices of a non-empty batch, so each term
 * is bounded by an input's or output's element count; kernels poll the run
 * once per matrix. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "nn_util.h"

#define LT "T: {double, float, half}"

/* ---- helpers ---- */

static void load_mat(const dfx_tensor *t, int64_t off, int64_t count, double *buf) {
  for (int64_t i = 0; i < count; i++) buf[i] = dfx__nn_load(t->data, (dfx_dtype)t->dtype, off + i);
}

static void store_mat(dfx_tensor *t, int64_t off, int64_t count, const double *buf) {
  for (int64_t i = 0; i < count; i++) dfx__nn_store(t->data, (dfx_dtype)t->dtype, off + i, buf[i]);
}

static void transpose(double *a, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) {
      double v = a[i * n + j];
      a[i * n + j] = a[j * n + i];
      a[j * n + i] = v;
    }
}

/* Checks rank >= 2 for input i; optionally square. Sets m, n and batch count. */
static dfx_code mat_dims(dfx_kctx *ctx, int i, bool square, int64_t *m, int64_t *n, int64_t *batch) {
  const dfx_tensor *t = ctx->in[i];
  char b1[96];
  if (t->ndims < 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input tensor %d must have rank >= 2, received shape %s", i,
                          DFX_SHAPE_STR(t, b1));
  *m = t->dims[t->ndims - 2];
  *n = t->dims[t->ndims - 1];
  if (square && *m != *n) return dfx__kctx_fail(ctx, DFX_EINVAL, "Input matrix must be square.");
  if (*m > INT32_MAX || *n > INT32_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "matrix too large");
  *batch = 1;
  for (int d = 0; d < t->ndims - 2; d++) *batch *= t->dims[d];
  return DFX_OK;
}

/* Output k with the batch dims of input 0 followed by `nd` matrix dims. */
static dfx_tensor *alloc_batched(dfx_kctx *ctx, int k, dfx_dtype t, int nd, int64_t d0, int64_t d1) {
  const dfx_tensor *x = ctx->in[0];
  int64_t od[DFX_MAX_DIMS + 2];
  int nb = x->ndims - 2;
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)nb);
  od[nb] = d0;
  od[nb + 1] = d1;
  return dfx__kctx_alloc(ctx, k, t, nb + nd, od);
}

static double *work(dfx_kctx *ctx, int64_t count) {
  size_t bytes = dfx__mul_size((size_t)(count > 0 ? count : 1), sizeof(double));
  if (bytes > dfx__tensor_limit()) {
    dfx__kctx_fail(ctx, DFX_ELIMIT, "%s: scratch of %zu bytes exceeds the tensor size limit", ctx->node->op, bytes);
    return NULL;
  }
  double *w = dfx__malloc(bytes);
  if (!w) dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  return w;
}

/* Between two matrices of a batch: go on, or stop for a cancelled run. */
#define POLL_OR_STOP(rc) \
  if ((rc = dfx__kctx_poll(ctx)) != DFX_OK) break

/* ---- inverse, determinants, Cholesky, LU ---- */

static dfx_code inverse_k(dfx_kctx *ctx) {
  int64_t m, n, batch;
  if (mat_dims(ctx, 0, true, &m, &n, &batch)) return DFX_EINVAL;
  bool adj = dfx__attr_bool(ctx->node, "adjoint", false);
  dfx_tensor *y = alloc_batched(ctx, 0, (dfx_dtype)ctx->in[0]->dtype, 2, n, n);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  double *a = work(ctx, n * n + n);
  if (!a) return ctx->st->code;
  lapack_int *ip = (lapack_int *)(a + n * n);
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch && rc == DFX_OK; b++) {
    POLL_OR_STOP(rc);
    load_mat(ctx->in[0], b * n * n, n * n, a);
    if (adj) transpose(a, n);
    lapack_int info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, a, (lapack_int)n, ip);
    if (info == 0) info = LAPACKE_dgetri(LAPACK_ROW_MAJOR, (lapack_int)n, a, (lapack_int)n, ip);
    if (info != 0) rc = dfx__kctx_fail(ctx, DFX_EINVAL, "Input is not invertible.");
    else store_mat(y, b * n * n, n * n, a);
  }
  dfx__free(a);
  return rc;
}

/* Determinant from the LU factors: sign from pivots and the diagonal. */
static dfx_code det_common(dfx_kctx *ctx, bool logdet) {
  int64_t m, n, batch;
  if (mat_dims(ctx, 0, true, &m, &n, &batch)) return DFX_EINVAL;
  dfx_dtype t = (dfx_dtype)ctx->in[0]->dtype;
  dfx_tensor *s = alloc_batched(ctx, 0, t, 0, 0, 0), *l = NULL;
  if (!s) return DFX_ENOMEM;
  if (logdet && !(l = alloc_batched(ctx, 1, t, 0, 0, 0))) return DFX_ENOMEM;
  if (batch == 0) return DFX_OK;
  double *a = work(ctx, n * n + n);
  if (!a) return ctx->st->code;
  lapack_int *ip = (lapack_int *)(a + n * n);
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch; b++) {
    POLL_OR_STOP(rc);
    double sign = 1, logabs = 0;
    if (n > 0) {
      load_mat(ctx->in[0], b * n * n, n * n, a);
      LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, a, (lapack_int)n, ip);
      for (int64_t i = 0; i < n; i++) {
        double d = a[i * n + i];
        if (ip[i] != i + 1) sign = -sign;
        if (d < 0) sign = -sign;
        if (d == 0) sign = 0;
        logabs += log(fabs(d));
      }
    }
    if (logdet) {
      dfx__nn_store(s->data, t, b, sign);
      dfx__nn_store(l->data, t, b, logabs);
    } else {
      dfx__nn_store(s->data, t, b, sign == 0 ? 0 : sign * exp(logabs));
    }
  }
  dfx__free(a);
  return rc;
}

static dfx_code det_k(dfx_kctx *ctx) { return det_common(ctx, false); }
static dfx_code logdet_k(dfx_kctx *ctx) { return det_common(ctx, true); }

static dfx_code cholesky_k(dfx_kctx *ctx) {
  int64_t m, n, batch;
  if (mat_dims(ctx, 0, true, &m, &n, &batch)) return DFX_EINVAL;
  dfx_tensor *y = alloc_batched(ctx, 0, (dfx_dtype)ctx->in[0]->dtype, 2, n, n);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  double *a = work(ctx, n * n);
  if (!a) return ctx->st->code;
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch && rc == DFX_OK; b++) {
    POLL_OR_STOP(rc);
    load_mat(ctx->in[0], b * n * n, n * n, a);
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, a, (lapack_int)n) != 0) {
      rc = dfx__kctx_fail(ctx, DFX_EINVAL, "Cholesky decomposition was not successful. The input might not be valid.");
      break;
    }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 0;
    store_mat(y, b * n * n, n * n, a);
  }
  dfx__free(a);
  return rc;
}

static dfx_code lu_k(dfx_kctx *ctx) {
  int64_t m, n, batch;
  if (mat_dims(ctx, 0, true, &m, &n, &batch)) return DFX_EINVAL;
  dfx_tensor *y = alloc_batched(ctx, 0, (dfx_dtype)ctx->in[0]->dtype, 2, n, n);
  if (!y) return DFX_ENOMEM;
  dfx_dtype pt = ctx->node->out_types[1];
  dfx_tensor *p = alloc_batched(ctx, 1, pt, 1, n, 0);
  if (!p) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  double *a = work(ctx, n * n + 2 * n);
  if (!a) return ctx->st->code;
  lapack_int *ip = (lapack_int *)(a + n * n);
  int64_t *perm = (int64_t *)(a + n * n + n);
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch; b++) {
    POLL_OR_STOP(rc);
    load_mat(ctx->in[0], b * n * n, n * n, a);
    LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, a, (lapack_int)n, ip);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = 0; i < n; i++) {
      int64_t j = ip[i] - 1, v = perm[i];
      perm[i] = perm[j];
      perm[j] = v;
    }
    store_mat(y, b * n * n, n * n, a);
    for (int64_t i = 0; i < n; i++) {
      if (pt == DFX_I64) ((int64_t *)p->data)[b * n + i] = perm[i];
      else ((int32_t *)p->data)[b * n + i] = (int32_t)perm[i];
    }
  }
  dfx__free(a);
  return rc;
}

/* ---- solves ---- */

/* Matrix [..., M, M] and rhs [..., M, K] with equal batch dims. */
static dfx_code solve_dims(dfx_kctx *ctx, int64_t *mm, int64_t *k, int64_t *batch, bool square) {
  int64_t m, n, rm, rk, rb;
  if (mat_dims(ctx, 0, square, &m, &n, batch) || mat_dims(ctx, 1, false, &rm, &rk, &rb)) return DFX_EINVAL;
  const dfx_tensor *a = ctx->in[0], *r = ctx->in[1];
  char b1[96], b2[96];
  if (a->ndims != r->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input and right-hand side must have the same rank: %s vs. %s",
                          DFX_SHAPE_STR(a, b1), DFX_SHAPE_STR(r, b2));
  for (int d = 0; d < a->ndims - 2; d++)
    if (a->dims[d] != r->dims[d])
      return dfx__kctx_fail(ctx, DFX_EINVAL, "All input tensors must have the same outer dimensions.");
  if (m != rm)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Input matrix and right-hand side must have the same number of rows: %lld vs. %lld",
                          (long long)m, (long long)rm);
  mm[0] = m;
  mm[1] = n;
  *k = rk;
  return DFX_OK;
}

static dfx_code solve_k(dfx_kctx *ctx) {
  int64_t mn[2], k, batch;
  if (solve_dims(ctx, mn, &k, &batch, true)) return DFX_EINVAL;
  int64_t n = mn[0];
  bool adj = dfx__attr_bool(ctx->node, "adjoint", false);
  dfx_tensor *y = alloc_batched(ctx, 0, (dfx_dtype)ctx->in[0]->dtype, 2, n, k);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  double *a = work(ctx, n * n + n * k + n);
  if (!a) return ctx->st->code;
  double *r = a + n * n;
  lapack_int *ip = (lapack_int *)(r + n * k);
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch; b++) {
    POLL_OR_STOP(rc);
    load_mat(ctx->in[0], b * n * n, n * n, a);
    load_mat(ctx->in[1], b * n * k, n * k, r);
    if (adj) transpose(a, n);
    if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)k, a, (lapack_int)n, ip, r, (lapack_int)k) != 0) {
      rc = dfx__kctx_fail(ctx, DFX_EINVAL, "Input matrix is not invertible.");
      break;
    }
    store_mat(y, b * n * k, n * k, r);
  }
  dfx__free(a);
  return rc;
}

/* Forward/back substitution on the lower or upper triangle (no LAPACK: a
 * zero pivot gives inf/NaN as in TF). */
static dfx_code trisolve_k(dfx_kctx *ctx) {
  int64_t mn[2], k, batch;
  if (solve_dims(ctx, mn, &k, &batch, true)) return DFX_EINVAL;
  int64_t n = mn[0];
  bool lower = dfx__attr_bool(ctx->node, "lower", true), adj = dfx__attr_bool(ctx->node, "adjoint", false);
  dfx_tensor *y = alloc_batched(ctx, 0, (dfx_dtype)ctx->in[0]->dtype, 2, n, k);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  double *a = work(ctx, n * n + n * k);
  if (!a) return ctx->st->code;
  double *r = a + n * n;
  dfx_code rc = DFX_OK;
  for (int64_t b = 0, done = 0; b < batch && rc == DFX_OK; b++) {
    load_mat(ctx->in[0], b * n * n, n * n, a);
    load_mat(ctx->in[1], b * n * k, n * k, r);
    /* Solving with A^T of a lower matrix is an upper solve on the transpose. */
    bool lo = lower;
    if (adj) {
      transpose(a, n);
      lo = !lo;
    }
    for (int64_t s = 0; s < n && rc == DFX_OK; s++) {
      int64_t i = lo ? s : n - 1 - s;
      double d = a[i * n + i];
      for (int64_t c = 0; c < k; c++) {
        double v = r[i * k + c];
        if (lo)
          for (int64_t j = 0; j < i; j++) v -= a[i * n + j] * r[j * k + c];
        else
          for (int64_t j = i + 1; j < n; j++) v -= a[i * n + j] * r[j * k + c];
        r[i * k + c] = v / d;
      }
      rc = dfx__nn_progress(ctx, &done, (n + 1) * k);
    }
    store_mat(y, b * n * k, n * k, r);
  }
  dfx__free(a);
  return rc;
}

static dfx_code solve_ls_k(dfx_kctx *ctx) {
  int64_t mn[2], k, batch;
  if (solve_dims(ctx, mn, &k, &batch, false)) return DFX_EINVAL;
  int64_t m = mn[0], n = mn[1];
  const dfx_tensor *lt = ctx->in[2];
  char b1[96];
  if (lt->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "l2_regularizer must be scalar, got shape %s", DFX_SHAPE_STR(lt, b1));
  double l2 = *(const double *)lt->data;
  bool fast = dfx__attr_bool(ctx->node, "fast", true);
  if (!fast && l2 != 0)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "fast = false is only supported for l2_regularizer = 0");
  dfx_tensor *y = alloc_batched(ctx, 0, (dfx_dtype)ctx->in[0]->dtype, 2, n, k);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  int64_t mx = m > n ? m : n, p = m < n ? m : n;
  double *a = work(ctx, m * n + mx * k + p * p + mx + p * k);
  if (!a) return ctx->st->code;
  double *r = a + m * n, *g = r + mx * k, *sv = g + p * p, *tmp = sv + mx;
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch && rc == DFX_OK; b++) {
    POLL_OR_STOP(rc);
    load_mat(ctx->in[0], b * m * n, m * n, a);
    memset(r, 0, sizeof(double) * (size_t)(mx * k));
    load_mat(ctx->in[1], b * m * k, m * k, r);
    if (!fast) {
      lapack_int rank;
      if (LAPACKE_dgelsd(LAPACK_ROW_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)k, a, (lapack_int)n, r,
                         (lapack_int)k, sv, -1.0, &rank) != 0)
        rc = dfx__kctx_fail(ctx, DFX_EINVAL, "least squares solve failed to converge");
      else
        store_mat(y, b * n * k, n * k, r);
      continue;
    }
    /* Normal equations: G = A^T A + l2 I (m >= n) or A A^T + l2 I (m < n). */
    bool tall = m >= n;
    for (int64_t i = 0; i < p; i++)
      for (int64_t j = 0; j < p; j++) {
        double s = 0;
        if (tall)
          for (int64_t q = 0; q < m; q++) s += a[q * n + i] * a[q * n + j];
        else
          for (int64_t q = 0; q < n; q++) s += a[i * n + q] * a[j * n + q];
        g[i * p + j] = s + (i == j ? l2 : 0);
      }
    if (tall) { /* tmp = A^T B, then solve G X = tmp */
      for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < k; c++) {
          double s = 0;
          for (int64_t q = 0; q < m; q++) s += a[q * n + i] * r[q * k + c];
          tmp[i * k + c] = s;
        }
    } else {
      memcpy(tmp, r, sizeof(double) * (size_t)(m * k));
    }
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)p, g, (lapack_int)p) != 0 ||
        LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)p, (lapack_int)k, g, (lapack_int)p, tmp, (lapack_int)k) != 0) {
      rc = dfx__kctx_fail(ctx, DFX_EINVAL, "Input matrix was rank deficient or ill-conditioned.");
      break;
    }
    if (tall) {
      store_mat(y, b * n * k, n * k, tmp);
    } else { /* X = A^T tmp */
      for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < k; c++) {
          double s = 0;
          for (int64_t q = 0; q < m; q++) s += a[q * n + i] * tmp[q * k + c];
          r[i * k + c] = s;
        }
      store_mat(y, b * n * k, n * k, r);
    }
  }
  dfx__free(a);
  return rc;
}

/* ---- decompositions with orthogonal factors ---- */

static dfx_code svd_k(dfx_kctx *ctx) {
  int64_t m, n, batch;
  if (mat_dims(ctx, 0, false, &m, &n, &batch)) return DFX_EINVAL;
  bool uv = dfx__attr_bool(ctx->node, "compute_uv", true), full = dfx__attr_bool(ctx->node, "full_matrices", false);
  dfx_dtype t = (dfx_dtype)ctx->in[0]->dtype;
  int64_t p = m < n ? m : n, uc = full ? m : p, vc = full ? n : p;
  dfx_tensor *s = alloc_batched(ctx, 0, t, 1, p, 0), *u, *v;
  if (!s) return DFX_ENOMEM;
  /* Without compute_uv TF leaves u and v as batch-shaped placeholders. */
  u = uv ? alloc_batched(ctx, 1, t, 2, m, uc) : alloc_batched(ctx, 1, t, 0, 0, 0);
  if (!u) return DFX_ENOMEM;
  v = uv ? alloc_batched(ctx, 2, t, 2, n, vc) : alloc_batched(ctx, 2, t, 0, 0, 0);
  if (!v) return DFX_ENOMEM;
  if (!uv) {
    memset(u->data, 0, u->nbytes);
    memset(v->data, 0, v->nbytes);
  }
  if (batch == 0) return DFX_OK;
  if (p == 0) { /* empty matrices: u, v are identity-free zeros (full: identity) */
    if (uv) {
      memset(u->data, 0, u->nbytes);
      memset(v->data, 0, v->nbytes);
      for (int64_t b = 0; b < batch && full; b++) {
        for (int64_t i = 0; i < m; i++) dfx__nn_store(u->data, t, b * m * m + i * m + i, 1);
        for (int64_t i = 0; i < n; i++) dfx__nn_store(v->data, t, b * n * n + i * n + i, 1);
      }
    }
    return DFX_OK;
  }
  /* u is m x uc and v^T vc x n, as big as the outputs (not m x m). */
  double *a = work(ctx, m * n + p + m * uc + 2 * vc * n);
  if (!a) return ctx->st->code;
  double *sv = a + m * n, *uu = sv + p, *vt = uu + m * uc, *vv = vt + vc * n;
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch; b++) {
    POLL_OR_STOP(rc);
    load_mat(ctx->in[0], b * m * n, m * n, a);
    char job = !uv ? 'N' : full ? 'A' : 'S';
    lapack_int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, job, (lapack_int)m, (lapack_int)n, a, (lapack_int)n, sv, uu,
                                     (lapack_int)uc, vt, (lapack_int)n);
    if (info != 0) {
      rc = dfx__kctx_fail(ctx, DFX_EINVAL, "SVD did not converge");
      break;
    }
    store_mat(s, b * p, p, sv);
    if (uv) {
      store_mat(u, b * m * uc, m * uc, uu);
      for (int64_t i = 0; i < n; i++) /* v = vt^T: vt is vc x n */
        for (int64_t j = 0; j < vc; j++) vv[i * vc + j] = vt[j * n + i];
      store_mat(v, b * n * vc, n * vc, vv);
    }
  }
  dfx__free(a);
  return rc;
}

static dfx_code qr_k(dfx_kctx *ctx) {
  int64_t m, n, batch;
  if (mat_dims(ctx, 0, false, &m, &n, &batch)) return DFX_EINVAL;
  bool full = dfx__attr_bool(ctx->node, "full_matrices", false);
  dfx_dtype t = (dfx_dtype)ctx->in[0]->dtype;
  int64_t p = m < n ? m : n, qc = full ? m : p;
  dfx_tensor *q = alloc_batched(ctx, 0, t, 2, m, qc), *r;
  if (!q) return DFX_ENOMEM;
  if (!(r = alloc_batched(ctx, 1, t, 2, qc, n))) return DFX_ENOMEM;
  if (batch == 0) return DFX_OK;
  /* a is m x wc so Q (m x qc) fits in place; ld = wc; R is qc x n. */
  int64_t wc = n > qc ? n : qc;
  double *a = work(ctx, m * wc + p + qc * n);
  if (!a) return ctx->st->code;
  double *tau = a + m * wc, *rr = tau + p;
  dfx_code rc = DFX_OK;
  for (int64_t b = 0; b < batch; b++) {
    POLL_OR_STOP(rc);
    memset(a, 0, sizeof(double) * (size_t)(m * wc));
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) a[i * wc + j] = dfx__nn_load(ctx->in[0]->data, t, b * m * n + i * n + j);
    if (p > 0) LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (lapack_int)m, (lapack_int)n, a, (lapack_int)wc, tau);
    for (int64_t i = 0; i < qc; i++)
      for (int64_t j = 0; j < n; j++) rr[i * n + j] = j >= i ? a[i * wc + j] : 0;
    store_mat(r, b * qc * n, qc * n, rr);
    if (m > 0 && qc > 0) {
      if (p > 0)
        LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (lapack_int)m, (lapack_int)qc, (lapack_int)p, a, (lapack_int)wc, tau);
      else
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < qc; j++) a[i * wc + j] = i == j;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < qc; j++) dfx__nn_store(q->data, t, b * m * qc + i * qc + j, a[i * wc + j]);
    }
  }
  dfx__free(a);
  return rc;
}

static const dfx_kernel_def kernels[] = {
    {"MatrixInverse", LT, inverse_k, 0, NULL, NULL},
    {"MatrixDeterminant", LT, det_k, 0, NULL, NULL},
    {"LogMatrixDeterminant", LT, logdet_k, 0, NULL, NULL},
    {"Cholesky", LT, cholesky_k, 0, NULL, NULL},
    {"MatrixSolve", LT, solve_k, 0, NULL, NULL},
    {"MatrixTriangularSolve", "T: {bfloat16, double, float, half}", trisolve_k, 0, NULL, NULL},
    {"Svd", LT, svd_k, 0, NULL, NULL},
    {"Lu", LT "; output_idx_type: {int32, int64}", lu_k, 0, NULL, NULL},
    {"Qr", LT, qr_k, 0, NULL, NULL},
    {"MatrixSolveLs", LT, solve_ls_k, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_nn_linalg(dfx_registry *r);
void dfx__kernels_nn_linalg(dfx_registry *r) { dfx__kernels_add(r, kernels); }
