/* softmax.c - Softmax, LogSoftmax (last axis) and the two softmax
 * cross-entropy losses over [batch, classes] logits. Rows are computed in
 * double after subtracting the row max, then stored in T; float32 Softmax
 * runs in float on the dispatched SIMD loops (kernels/simd: max, exp and
 * sum, scale), as TF computes it in float. Softmax and LogSoftmax split
 * their rows over idle threads (dfx__kctx_parallel_for). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "nn_util.h"
#include "simd/simd.h"

/* Loads n elements starting at element off into buf; returns their max. */
static double load_row(const dfx_tensor *x, int64_t off, int64_t n, double *buf) {
  double mx = -INFINITY;
  dfx_dtype t = (dfx_dtype)x->dtype;
  if (t == DFX_F32) {
    const float *p = (const float *)x->data + off;
    for (int64_t j = 0; j < n; j++) buf[j] = p[j];
  } else if (t == DFX_F64) {
    memcpy(buf, (const double *)x->data + off, sizeof(double) * (size_t)n);
  } else {
    for (int64_t j = 0; j < n; j++) buf[j] = dfx__nn_load(x->data, t, off + j);
  }
  for (int64_t j = 0; j < n; j++)
    if (buf[j] > mx) mx = buf[j];
  return mx;
}

static void store_row(dfx_tensor *y, int64_t off, int64_t n, const double *buf) {
  dfx_dtype t = (dfx_dtype)y->dtype;
  if (t == DFX_F32) {
    float *p = (float *)y->data + off;
    for (int64_t j = 0; j < n; j++) p[j] = (float)buf[j];
  } else {
    for (int64_t j = 0; j < n; j++) dfx__nn_store(y->data, t, off + j, buf[j]);
  }
}

/* buf <- softmax (or log-softmax) of buf in place; returns log(sum exp(x - max)). */
static double softmax_row(double *buf, int64_t n, double mx, bool log_out) {
  double s = 0;
  for (int64_t j = 0; j < n; j++) s += exp(buf[j] - mx);
  double ls = log(s);
  for (int64_t j = 0; j < n; j++) buf[j] = log_out ? buf[j] - mx - ls : exp(buf[j] - mx) / s;
  return ls;
}

typedef struct sm_job {
  dfx_kctx *ctx;
  const dfx_tensor *x;
  dfx_tensor *y;
  int64_t n;
  bool log_out;
  int oom; /* atomic: a block could not get its row buffer */
} sm_job;

/* Rows [lo, hi). Stops early once the run is cancelled (polled after). */
static void sm_rows(void *arg, int64_t lo, int64_t hi) {
  sm_job *j = arg;
  const int64_t n = j->n;
  if (j->x->dtype == DFX_F32 && !j->log_out) {
    const dfx_simd_table *v = dfx__simd();
    const float *xp = j->x->data;
    float *yp = j->y->data;
    for (int64_t r = lo; r < hi; r++) {
      const float *xr = xp + r * n;
      float *yr = yp + r * n;
      float s = v->exp_shift_sum(xr, v->max(xr, n), yr, n);
      v->scale(yr, 1.0f / s, yr, n);
      if (((r - lo) & 63) == 63 && dfx__kctx_cancelled(j->ctx)) return;
    }
    return;
  }
  double stack[256];
  double *buf = n <= 256 ? stack : dfx__malloc(sizeof(double) * (size_t)n);
  if (!buf) {
    __atomic_store_n(&j->oom, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t r = lo; r < hi; r++) {
    double mx = load_row(j->x, r * n, n, buf);
    softmax_row(buf, n, mx, j->log_out);
    store_row(j->y, r * n, n, buf);
    if (((r - lo) & 63) == 63 && dfx__kctx_cancelled(j->ctx)) break;
  }
  if (buf != stack) dfx__free(buf);
}

static dfx_code softmax_common(dfx_kctx *ctx, bool log_out) {
  const dfx_tensor *x = ctx->in[0];
  char b1[96];
  if (x->ndims < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "logits must have >= 1 dimension, got %s", DFX_SHAPE_STR(x, b1));
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!y) return DFX_ENOMEM;
  int64_t n = x->dims[x->ndims - 1];
  if (x->count == 0) return DFX_OK;
  int64_t rows = x->count / n;
  sm_job j = {.ctx = ctx, .x = x, .y = y, .n = n, .log_out = log_out};
  /* About 2 ns per element in float (exp, two passes), more in double. */
  double unit = (double)n * (x->dtype == DFX_F32 && !log_out ? 1.0 : 5.0);
  dfx__kctx_parallel_for(ctx, rows, &(dfx_par_cost){.unit_ns = unit}, sm_rows, &j);
  if (j.oom) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  return dfx__kctx_poll(ctx);
}

static dfx_code softmax_k(dfx_kctx *ctx) { return softmax_common(ctx, false); }
static dfx_code log_softmax_k(dfx_kctx *ctx) { return softmax_common(ctx, true); }

/* ---- cross entropy ---- */

/* Shared core: logits row in buf (n), label probabilities from `lab(j)`. */
static dfx_code xent_rows(dfx_kctx *ctx, int64_t b, int64_t n, int64_t fstride_r, int64_t fstride_c,
                          const dfx_tensor *labels, int64_t lstride_r, int64_t lstride_c, const int64_t *sparse) {
  const dfx_tensor *f = ctx->in[0];
  dfx_dtype t = (dfx_dtype)f->dtype;
  int64_t od[2] = {b, n};
  dfx_tensor *loss = dfx__kctx_alloc(ctx, 0, t, 1, od);
  if (!loss) return DFX_ENOMEM;
  dfx_tensor *bp = dfx__kctx_alloc(ctx, 1, t, 2, od);
  if (!bp) return DFX_ENOMEM;
  if (b == 0) return DFX_OK;
  double *buf = dfx__malloc(sizeof(double) * (size_t)(n ? n : 1));
  if (!buf) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  dfx_code rc = DFX_OK;
  for (int64_t r = 0, done = 0; r < b && rc == DFX_OK; r++) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < n; j++) {
      buf[j] = dfx__nn_load(f->data, t, r * fstride_r + j * fstride_c);
      if (buf[j] > mx) mx = buf[j];
    }
    double s = 0;
    for (int64_t j = 0; j < n; j++) s += exp(buf[j] - mx);
    double ls = log(s), l = 0;
    for (int64_t j = 0; j < n; j++) {
      double lab = sparse ? (sparse[r] == j ? 1.0 : 0.0)
                          : dfx__nn_load(labels->data, t, r * lstride_r + j * lstride_c);
      double lp = buf[j] - mx - ls;
      if (lab != 0) l -= lab * lp;
      dfx__nn_store(bp->data, t, r * n + j, exp(lp) - lab);
    }
    dfx__nn_store(loss->data, t, r, l);
    rc = dfx__nn_progress(ctx, &done, n + 1);
  }
  dfx__free(buf);
  return rc;
}

static dfx_code xent_k(dfx_kctx *ctx) {
  const dfx_tensor *f = ctx->in[0], *l = ctx->in[1];
  char b1[96], b2[96];
  if (f->ndims > 2 || l->ndims > 2 || (f->ndims < 2 && l->ndims < 2))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional");
  /* Right-aligned broadcast of both to [b, n]. */
  int64_t fd[2] = {1, 1}, ld[2] = {1, 1};
  for (int i = 0; i < f->ndims; i++) fd[2 - f->ndims + i] = f->dims[i];
  for (int i = 0; i < l->ndims; i++) ld[2 - l->ndims + i] = l->dims[i];
  int64_t od[2];
  for (int i = 0; i < 2; i++) {
    if (fd[i] != ld[i] && fd[i] != 1 && ld[i] != 1)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "logits and labels must be broadcastable: logits_size=%s labels_size=%s",
                            DFX_SHAPE_STR(f, b1), DFX_SHAPE_STR(l, b2));
    od[i] = fd[i] == 1 ? ld[i] : fd[i];
  }
  return xent_rows(ctx, od[0], od[1], fd[0] == 1 ? 0 : fd[1], fd[1] == 1 ? 0 : 1, l, ld[0] == 1 ? 0 : ld[1],
                   ld[1] == 1 ? 0 : 1, NULL);
}

static dfx_code sparse_xent_k(dfx_kctx *ctx) {
  const dfx_tensor *f = ctx->in[0], *l = ctx->in[1];
  char b1[96], b2[96];
  if (f->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "logits must be 2-D, but got shape %s", DFX_SHAPE_STR(f, b1));
  if (l->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "labels must be 1-D, but got shape %s", DFX_SHAPE_STR(l, b1));
  if (f->dims[0] != l->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "logits and labels must have the same first dimension, got logits shape %s and labels shape %s",
                          DFX_SHAPE_STR(f, b1), DFX_SHAPE_STR(l, b2));
  int64_t b = f->dims[0], n = f->dims[1];
  if (n == 0 && b > 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Must have at least one class, but got logits shape %s", DFX_SHAPE_STR(f, b1));
  int64_t *lab = dfx__malloc(sizeof(int64_t) * (size_t)(b ? b : 1));
  if (!lab) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  for (int64_t i = 0; i < b; i++) {
    lab[i] = l->dtype == DFX_I64 ? ((const int64_t *)l->data)[i] : ((const int32_t *)l->data)[i];
    if (lab[i] < 0 || lab[i] >= n) {
      char vals[256];
      size_t o = 0;
      for (int64_t k = 0; k < b && o < sizeof vals - 24; k++)
        o += (size_t)snprintf(vals + o, sizeof vals - o, k ? " %lld" : "%lld",
                              (long long)(l->dtype == DFX_I64 ? ((const int64_t *)l->data)[k]
                                                              : ((const int32_t *)l->data)[k]));
      dfx_code c = dfx__kctx_fail(ctx, DFX_EINVAL,
                                  "Received a label value of %lld which is outside the valid range of [0, %lld).  "
                                  "Label values: %s",
                                  (long long)lab[i], (long long)n, vals);
      dfx__free(lab);
      return c;
    }
  }
  dfx_code c = xent_rows(ctx, b, n, n, 1, NULL, 0, 0, lab);
  dfx__free(lab);
  return c;
}

static const dfx_kernel_def kernels[] = {
    {"Softmax", "T: {" DFX_NN_FLOAT_T "}", softmax_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LogSoftmax", "T: {" DFX_NN_FLOAT_T "}", log_softmax_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SoftmaxCrossEntropyWithLogits", "T: {" DFX_NN_FLOAT_T "}", xent_k, 0, NULL, NULL},
    {"SparseSoftmaxCrossEntropyWithLogits", "T: {" DFX_NN_FLOAT_T "}; Tlabels: {int32, int64}", sparse_xent_k, 0, NULL,
     NULL},
    {NULL}};

void dfx__kernels_nn_softmax(dfx_registry *r);
void dfx__kernels_nn_softmax(dfx_registry *r) { dfx__kernels_add(r, kernels); }
